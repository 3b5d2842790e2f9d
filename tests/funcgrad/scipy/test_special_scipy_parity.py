"""funcgrad.scipy.special against SciPy at the edges SciPy defines: poles, float orders,
empty reductions and the sign of a zero sum."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, expected_fp_warnings

import funcgrad
import funcgrad.scipy.special as fsp

sp = pytest.importorskip("scipy.special")
pytestmark = expected_fp_warnings


def test_polygamma_takes_whole_float_orders():
    n = np.array([0.0, 1.0, 3.0])
    x = np.array([2.0, 0.7, 4.5])
    assert_allclose(fsp.polygamma(dev(n), dev(x)), sp.polygamma(n, x), rtol=1e-12)
    assert_allclose(fsp.polygamma(1.0, 2.0), sp.polygamma(1.0, 2.0), rtol=1e-12)
    # A float order is differentiable in x as an integer one is.
    assert_allclose(funcgrad.grad(lambda v: fsp.polygamma(1.0, v))(2.0), sp.polygamma(2, 2.0),
                    rtol=1e-12)
    with pytest.raises(TypeError, match="integer"):
        fsp.polygamma(np.array([1.0, 2.5]), 2.0)


def test_beta_and_betaln_have_a_pole_at_a_zero_argument():
    a = np.array([0.0, 0.0, -1.0, 0.0, -0.0, 2.0])
    b = np.array([0.0, 1.0, 0.0, np.nan, 2.5, 3.0])
    for name in ("beta", "betaln"):
        with np.errstate(invalid="ignore", divide="ignore"):
            want = getattr(sp, name)(a, b)
        assert_allclose(getattr(fsp, name)(dev(a), dev(b)), want, rtol=1e-12)


def test_hurwitz_zeta_at_x_1_is_the_pole_for_every_q():
    q = np.array([0.0, -1.0, -0.5, np.nan, 2.0, np.inf])
    assert_allclose(fsp.zeta(dev(np.ones(6)), dev(q)), sp.zeta(np.ones(6), q))


@pytest.mark.parametrize("shape,axis", [((0,), None), ((0, 3), 0), ((3, 0), 0), ((2, 0), 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp_of_an_empty_sum_is_minus_inf(shape, axis, keepdims):
    a = np.zeros(shape)
    want = sp.logsumexp(a, axis=axis, keepdims=keepdims)
    got = fsp.logsumexp(dev(a), axis=axis, keepdims=keepdims)
    assert got.shape == np.shape(want)
    assert_allclose(got, want)
    out, sgn = fsp.logsumexp(dev(a), axis=axis, keepdims=keepdims, return_sign=True)
    assert_allclose(out, want)
    assert_allclose(sgn, np.zeros(np.shape(want)))
    g = funcgrad.grad(lambda v: fsp.logsumexp(v, axis=axis).sum())(dev(a))
    assert g.shape == shape


@pytest.mark.parametrize("jit", [False, True])
def test_logsumexp_sign_of_a_sum_of_zero_terms_is_zero(jit):
    def f(a, b):
        return fsp.logsumexp(a, b=b, return_sign=True)

    f = funcgrad.jit(f) if jit else f
    for a, b in [([-np.inf, -np.inf], None), ([-np.inf, 1.0], [1.0, 0.0]),
                 ([1.0, 1.0], [1.0, -1.0])]:
        a = np.array(a)
        b = None if b is None else np.array(b)
        want = sp.logsumexp(a, b=b, return_sign=True)
        got = f(dev(a), None if b is None else dev(b))
        assert_allclose(got[0], want[0])
        assert_allclose(got[1], want[1])


def test_rel_entr_where_x_over_y_overflows_or_is_near_one():
    x = np.array([1e300, 1e-300, 1.0 + 2.0 ** -40, 3.0, 0.7])
    y = np.array([1e-300, 1e300, 1.0, 1.0, 0.71])
    assert_allclose(fsp.rel_entr(dev(x), dev(y)), sp.rel_entr(x, y), rtol=1e-14)
    assert_allclose(funcgrad.grad(fsp.rel_entr, argnums=(0, 1))(0.7, 0.71),
                    (np.log(0.7 / 0.71) + 1.0, -0.7 / 0.71), rtol=1e-13)
