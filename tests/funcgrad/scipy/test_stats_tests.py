"""funcgrad.scipy.stats ttest_1samp / ttest_ind / ttest_rel / spearmanr / linregress: values
against SciPy 1.17's (recorded as literals), nan policies, confidence intervals, errors,
gradients and transformations."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.stats as fst

A = np.array([[5.1, 2.0], [4.9, 3.5], [5.6, 1.0], [5.8, 2.2], [6.0, 4.1]])
B = np.array([[4.0, 2.5], [6.5, 3.0], [5.0, 3.3], [7.0, 0.5], [6.1, 1.2], [5.5, 2.0]])


def _check(res, want, rtol=1e-12):
    for name, v in want.items():
        assert_allclose(getattr(res, name), np.asarray(v, dtype=float), rtol=rtol, atol=1e-14,
                        err_msg=name)


def test_ttest_1samp_and_interval():
    res = fst.ttest_1samp(dev(A), 5.0)
    _check(res, {"statistic": [2.304073731539131, -4.406601227367698],
                 "pvalue": [0.08256829674577398, 0.011631303938879855], "df": [4.0, 4.0]})
    _check(res.confidence_interval(0.9), {"low": [5.03587947, 1.37956504],
                                          "high": [5.92412053, 3.74043496]}, rtol=1e-8)
    t, p = res  # unpacks as SciPy's
    assert_allclose(t, res.statistic)
    res = fst.ttest_1samp(dev(A), 5.0, alternative="greater")
    _check(res, {"pvalue": [0.04128414837288699, 0.9941843480305601]})
    _check(res.confidence_interval(), {"low": [5.03587947, 1.37956504],
                                       "high": [np.inf, np.inf]}, rtol=1e-8)
    an = A.copy()
    an[1, 0] = np.nan
    _check(fst.ttest_1samp(dev(an), 5.0, nan_policy="omit"),
           {"statistic": [3.236488890015772, -4.406601227367698],
            "pvalue": [0.04797866528240589, 0.011631303938879855], "df": [3.0, 4.0]})
    _check(fst.ttest_1samp(dev(an), 5.0), {"statistic": [np.nan, -4.406601227367698],
                                           "df": [np.nan, 4.0]})
    assert fst.ttest_1samp(dev(A), 5.0, keepdims=True).pvalue.shape == (1, 2)


def test_ttest_ind_student_welch_and_rel():
    res = fst.ttest_ind(dev(A), dev(B))
    _check(res, {"statistic": [-0.3869873235907483, 0.6840000323786998],
                 "pvalue": [0.7077571749528352, 0.5112008822926867], "df": [9.0, 9.0]})
    _check(res.confidence_interval(), {"low": [-1.39193029, -1.09978781],
                                       "high": [0.98526363, 2.05312115]}, rtol=1e-8)
    res = fst.ttest_ind(dev(A), dev(B), equal_var=False, alternative="less")
    _check(res, {"statistic": [-0.414754910297097, 0.6744157685942541],
                 "pvalue": [0.345351072945601, 0.7405449031930069],
                 "df": [7.020327629980518, 8.063769551157137]})
    _check(res.confidence_interval(), {"low": [-np.inf, -np.inf],
                                       "high": [0.72507817, 1.78962038]}, rtol=1e-8)
    _check(fst.ttest_rel(dev(A), dev(B[:5])),
           {"statistic": [-0.4665694748158436, 0.5137821093500858],
            "pvalue": [0.66508573128915, 0.63448326621732]})
    with pytest.raises(ValueError, match="trim"):
        fst.ttest_ind(dev(A), dev(B), trim=0.2)
    with pytest.raises(ValueError, match="same shape"):
        fst.ttest_rel(dev(A), dev(B))
    with pytest.raises(ValueError, match="alternative"):
        fst.ttest_1samp(dev(A), 0.0, alternative="two_sided")


def test_spearmanr_pairs_ties_and_matrix():
    _check(fst.spearmanr(dev(A[:, 0]), dev(A[:, 1])),
           {"statistic": 0.3, "pvalue": 0.623837664781073})
    _check(fst.spearmanr(dev(np.array([1, 2, 2, 3, 4])), dev(np.array([1, 1, 2, 2, 3])),
                         alternative="greater"),
           {"statistic": 0.8651809126974002, "pvalue": 0.02910364535149949})
    res = fst.spearmanr(dev(np.c_[A, B[:5, :1]]))
    off = ~np.eye(3, dtype=bool)
    assert_allclose(res.statistic[off], np.array([0.3, 0.2, 0.3, 0.5, 0.2, 0.5]), rtol=1e-12)
    assert_allclose(res.pvalue[off], np.array([0.623837664781073, 0.7470600781046621] * 1 +
                                              [0.623837664781073, 0.3910022189557703] +
                                              [0.7470600781046621, 0.3910022189557703]),
                    rtol=1e-12)


def test_linregress_values_axes_and_errors():
    _check(fst.linregress(dev(A[:, 0]), dev(A[:, 1])),
           {"slope": 0.19124423963133766, "intercept": 1.5119815668202694,
            "rvalue": 0.07195270944908848, "pvalue": 0.9084660761987786,
            "stderr": 1.5305708923840684})
    _check(fst.linregress(dev(A), dev(B[:5]), alternative="less"),
           {"slope": [0.8317972350230427, -0.33594259621656886],
            "intercept": [1.1617511520737267, 2.9600130463144163],
            "rvalue": [0.3199132901881877, -0.34602081767436577],
            "pvalue": [0.7001337750999916, 0.28419461493383325],
            "stderr": [1.422261347690418, 0.5259083534280128],
            "intercept_stderr": [7.816487511127763, 1.4668978350511424]})
    slope, intercept, r, p, se = fst.linregress(dev(A[:, 0]), dev(A[:, 1]))  # five, as SciPy
    assert_allclose(fst.linregress(dev(A[:, 0]), dev(A[:, 1])).intercept_stderr,
                    8.411736903799953, rtol=1e-12)
    with pytest.raises(ValueError, match="all x values are identical"):
        fst.linregress(dev(np.ones(3)), dev(np.arange(3.0)))


def test_differentiable_under_jit_and_vmap():
    a = dev(A)
    res = funcgrad.jit(lambda v: fst.ttest_1samp(v, 5.0))(a)
    assert_allclose(res.statistic, fst.ttest_1samp(a, 5.0).statistic, rtol=1e-13)
    g = funcgrad.grad(lambda v: fst.ttest_ind(v[:, 0], v[:, 1]).pvalue)(a)
    eps = 1e-6
    bump = np.zeros_like(A)
    bump[2, 0] = eps
    num = (float(fst.ttest_ind(dev(A + bump)[:, 0], dev(A + bump)[:, 1]).pvalue)
           - float(fst.ttest_ind(dev(A - bump)[:, 0], dev(A - bump)[:, 1]).pvalue)) / (2 * eps)
    assert abs(float(g[2, 0]) - num) < 1e-7
    slopes = funcgrad.vmap(lambda y: fst.linregress(dev(np.arange(5.0)), y).slope,
                           in_axes=1)(a)
    assert_allclose(slopes, fst.linregress(dev(np.arange(5.0))[:, None], a).slope, rtol=1e-13)


def test_kendalltau_exact_asymptotic_ties_and_variants():
    x = dev(np.array([2.0, -2.6, 0.4, -0.6, -0.5, -0.2, -2.0, -0.2, -0.9, 3.3, 0.2, -0.4]))
    y = dev(np.array([1.7, -3.3, -0.7, -1.0, -0.0, -0.4, -1.0, -0.4, -0.9, 4.8, 0.7, -0.9]))
    _check(fst.kendalltau(x, y), {"statistic": 0.7344646618036429,
                                  "pvalue": 0.001140732692804148})
    _check(fst.kendalltau(x, y, alternative="greater", method="asymptotic"),
           {"pvalue": 0.000570366346402074})
    k = dev(np.arange(40.0))
    _check(fst.kendalltau(k % 7, k % 5, variant="c"),
           {"statistic": 0.078125, "pvalue": 0.5467652181261473})
    # No ties, n <= 33: the exact permutation distribution (SciPy's "auto").
    _check(fst.kendalltau(dev(np.array([1.0, 3.0, 2.0, 5.0, 4.0])),
                          dev(np.array([2.0, 1.0, 4.0, 3.0, 5.0]))),
           {"statistic": 0.2, "pvalue": 0.8166666666666667})
    with pytest.raises(ValueError, match="exact method cannot be used"):
        fst.kendalltau(dev(np.array([1.0, 1.0, 2.0])), dev(np.array([1.0, 2.0, 3.0])),
                       method="exact")
    res = funcgrad.jit(fst.kendalltau)(x, y)
    assert_allclose(res.pvalue, 0.001140732692804148, rtol=1e-12)
