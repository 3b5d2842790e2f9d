"""funcgrad.scipy.stats.entropy / zscore / skew / kurtosis / pearsonr: literal values recorded
from SciPy 1.17 (run without SciPy), then every axis, nan_policy, bias and alternative against
scipy.stats when it is installed; under jit and vmap; gradients; errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, expected_fp_warnings

import funcgrad
import funcgrad.scipy.stats as fst
from funcgrad.test_util import check_grads

pytestmark = expected_fp_warnings

X = np.array([1.0, 2.0, 3.0, 10.0])
Y = np.array([1.0, 3.0, 2.0, 5.0])


@pytest.mark.parametrize("call,want", [
    (lambda: fst.entropy(dev(np.array([1, 1])), base=2), 1.0),
    (lambda: fst.entropy(dev(np.array([0.5, 0.5])), dev(np.array([0.9, 0.1]))),
     0.5108256237659907),
    (lambda: fst.entropy(dev(np.array([1.0, np.nan, 2.0])), nan_policy="omit"),
     0.6365141682948128),
    (lambda: fst.zscore(dev(np.array([1.0, 2.0, 3.0]))), [-1.224744871391589, 0.0,
                                                        1.224744871391589]),
    (lambda: fst.zscore(dev(np.ones(3))), [np.nan, np.nan, np.nan]),
    (lambda: fst.skew(dev(X)), 1.0182337649086284),
    (lambda: fst.skew(dev(X), bias=False), 1.763632614803888),
    (lambda: fst.skew(dev(np.ones(5))), np.nan),
    (lambda: fst.kurtosis(dev(X)), -0.7696000000000001),
    (lambda: fst.kurtosis(dev(X), bias=False, fisher=False), 6.2280000000000015),
    (lambda: tuple(fst.pearsonr(dev(X), dev(Y))), (0.9083737430941392, 0.09162625690586079)),
    (lambda: tuple(fst.pearsonr(dev(X), dev(Y), alternative="greater")),
     (0.9083737430941392, 0.045813128452930396)),
    (lambda: tuple(fst.pearsonr(dev(X[:2]), dev(Y[:2]))), (1.0, 1.0)),
    (lambda: tuple(fst.pearsonr(dev(np.ones(4)), dev(Y))), (np.nan, np.nan)),
])
def test_values_recorded_from_scipy(call, want):
    assert_allclose(np.asarray(funcgrad.device_get(call()), float), np.array(want, float),
                    rtol=1e-9, atol=1e-10)


_RNG = np.random.default_rng(0)
A = _RNG.normal(size=(4, 7))
A[1, 2] = np.nan
P, Q = _RNG.uniform(size=(4, 7)), _RNG.uniform(size=(4, 7))
B = _RNG.normal(size=(5, 6))
C = B + _RNG.normal(size=(5, 6))


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_against_scipy(axis):
    st = pytest.importorskip("scipy.stats")
    ax = 0 if axis is None else axis
    assert_allclose(fst.entropy(dev(P), axis=ax), st.entropy(P, axis=ax))
    assert_allclose(fst.entropy(dev(P), dev(Q), base=2, axis=ax, keepdims=True),
                    st.entropy(P, Q, base=2, axis=ax, keepdims=True))
    for policy in ("propagate", "omit"):
        for ddof in (0, 1):
            assert_allclose(fst.zscore(dev(A), axis=axis, ddof=ddof, nan_policy=policy),
                            st.zscore(A, axis=axis, ddof=ddof, nan_policy=policy))
        for bias in (True, False):
            assert_allclose(fst.skew(dev(A), axis=axis, bias=bias, nan_policy=policy),
                            st.skew(A, axis=axis, bias=bias, nan_policy=policy))
            assert_allclose(
                fst.kurtosis(dev(A), axis=axis, bias=bias, fisher=False, nan_policy=policy,
                             keepdims=True),
                st.kurtosis(A, axis=axis, bias=bias, fisher=False, nan_policy=policy,
                            keepdims=True))
    for alternative in ("two-sided", "less", "greater"):
        got = fst.pearsonr(dev(B), dev(C), axis=axis, alternative=alternative)
        want = st.pearsonr(B, C, axis=axis, alternative=alternative)
        assert_allclose(got.statistic, want.statistic)
        assert_allclose(got.pvalue, want.pvalue)


def test_transforms_and_gradients():
    skew_rows = funcgrad.jit(lambda a: fst.skew(a, axis=1))(dev(B))
    assert_allclose(funcgrad.vmap(fst.skew)(dev(B)), skew_rows)
    r = funcgrad.jit(lambda x, y: fst.pearsonr(x, y, axis=1))(dev(B), dev(C))
    assert_allclose(funcgrad.vmap(lambda x, y: fst.pearsonr(x, y).statistic)(dev(B), dev(C)),
                    r.statistic)
    # d r / d x for r = corrcoef(x, y): (ŷ - r x̂) / |x - mean x| with x̂, ŷ the unit
    # centred vectors
    x, y = B[0], C[0]
    xc, yc = x - x.mean(), y - y.mean()
    xh, yh = xc / np.linalg.norm(xc), yc / np.linalg.norm(yc)
    rr = xh @ yh
    want = (yh - rr * xh) / np.linalg.norm(xc)
    assert_allclose(funcgrad.grad(lambda v: fst.pearsonr(v, dev(y)).statistic)(dev(x)), want)
    for f in (fst.skew, fst.kurtosis, fst.zscore, lambda p: fst.entropy(p, dev(Q[0, :6]))):
        check_grads(lambda v, f=f: f(v), (dev(np.abs(B[1]) + 0.5),), order=1)


@pytest.mark.parametrize("call,match", [
    (lambda: fst.entropy(np.ones(3), base=0.0), "base must be"),
    (lambda: fst.entropy(np.ones(3), nan_policy="skip"), "nan_policy"),
    (lambda: fst.pearsonr(np.ones(3), np.ones(4)), "same length|broadcastable"),
    (lambda: fst.pearsonr(np.ones(1), np.ones(1)), "at least 2"),
    (lambda: fst.pearsonr(np.ones(3), np.ones(3), alternative="two"), "alternative"),
    (lambda: fst.skew(np.array([1.0, np.nan]), nan_policy="raise"), "contains nan"),
])
def test_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_multivariate_normal_takes_scipys_defaults():
    # SciPy 1.17: logpdf(x) is N(0, 1) in one dimension (x of shape (2,) is two points);
    # logpdf(x, cov=2 I) takes the dimension from cov
    assert_allclose(fst.multivariate_normal.logpdf(dev(np.array([0.0, 0.5]))),
                    np.array([-0.9189385332046727, -1.0439385332046727]))
    x = np.array([[0.0, 0.5], [1.0, -2.0]])
    assert_allclose(fst.multivariate_normal.pdf(dev(x), cov=dev(np.eye(2))),
                    np.array([0.1404537443096252, 0.013064233284684921]))
