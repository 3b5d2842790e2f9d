"""funcgrad.scipy.special at SciPy's edge values: poles, infinities, huge arguments.

Expected values are SciPy 1.17's, recorded as literals (CI may lack SciPy).
"""

from __future__ import annotations

import warnings

import numpy as np
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.scipy.special as fsp

INF, NAN = np.inf, np.nan


def _quiet(f, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return host(f(*[dev(np.asarray(a, dtype=np.float64)) for a in args]))


def test_polygamma_at_minus_inf_is_the_pole_value():
    # SciPy: (-1)^(n+1) inf for n >= 1 (digamma's nan at n = 0).
    assert [float(fsp.polygamma(n, -INF)) for n in range(5)][1:] == [INF, -INF, INF, -INF]
    assert np.isnan(float(fsp.polygamma(0, -INF)))


def test_hurwitz_zeta_huge_q_does_not_underflow():
    got = _quiet(fsp.zeta, [1.5, 1.5, 1.5, 1.5], [1e300, 1e200, 1e20, 3.0])
    assert_allclose(got, np.array([2.0000000000000000e-150, 2.0000000000000000e-100,
                                   2.0000000000000001e-010, 1.2588219580922144e+000]),
                    rtol=1e-13)


def test_beta_at_gamma_poles_is_scipys_limit():
    a = [1.0, -3.0, -2.5, 3.0, -1.0, -1.5, -0.5, -1.5]
    b = [-1.0, 1.0, 1.0, -4.0, -1.0, 0.5, 1e10, INF]
    want = np.array([-1.0, -1.0 / 3.0, -0.4, -1.0 / 12.0, -INF, 0.0, -3.544907701678098e+05, INF])
    assert_allclose(_quiet(fsp.beta, a, b), want, rtol=1e-13)
    a = [1.0, -3.0, 2.0, -1.0, -0.5, -1.5, INF, 0.0]
    b = [-1.0, 1.0, -3.0, -1.0, 1e10, 1e10, INF, NAN]
    want = np.array([0.0, -1.0986122886681098, -1.791759469228055, INF, 12.778437588417374,
                     35.398823410099666, NAN, INF])
    assert_allclose(_quiet(fsp.betaln, a, b), want, rtol=1e-13)


def test_betaln_derivative_through_a_cancelled_pole():
    # beta(a, -1) near a = 1 reflects to -beta(1 - a + 1, ...) only at the integer point;
    # off it the ordinary derivative is the digamma difference.
    g = funcgrad.grad(fsp.betaln)(2.5, 1.5)
    want = float(fsp.digamma(2.5) - fsp.digamma(4.0))
    assert abs(float(g) - want) < 1e-13


def test_poch_at_infinite_z():
    got = _quiet(fsp.poch, [INF, -INF, INF, INF, -INF], [1.5, 1.5, -1.5, 0.0, 0.0])
    assert_allclose(got, np.array([INF, NAN, 0.0, 1.0, 1.0]))


def test_spence_kl_div_erfcx_edges_quiet():
    assert_allclose(_quiet(fsp.spence, [INF, 0.0, 2.0]),
                    np.array([NAN, 1.6449340668482264, -0.8224670334241142]), rtol=1e-14)
    assert_allclose(_quiet(fsp.kl_div, [1.0, INF, 0.0], [INF, 1.0, INF]), np.array([NAN, NAN, INF]))
    assert_allclose(_quiet(fsp.erfcx, [-30.0, -26.62, -26.0, -INF]),
                    np.array([INF, 1.129007059914664e+308, 7.657724931490568e+293, INF]),
                    rtol=1e-12)


def test_incomplete_gamma_large_shape_by_temme_expansion():
    # mpmath's values (40 digits). Before, a = 1e6 was 4% off and a = 1e300 gave nan;
    # at a = 1e9 SciPy's own P is 13% off (5.57e-220).
    a = [1e6, 1e6, 2e7, 1e9, 1e300]
    x = [1e6 - 1500.0, 1e6, 2e7 + 3000.0, 999e6, 1e300]
    p = _quiet(fsp.gammainc, a, x)
    q = _quiet(fsp.gammaincc, a, x)
    assert_allclose(p, np.array([0.066753172831609871, 0.50013298076087259, 0.74884558258862864,
                                 6.4322489509878705e-220, 0.5]), rtol=1e-12)
    assert_allclose(q, np.array([0.93324682716839013, 0.49986701923912741, 0.25115441741137136,
                                 1.0, 0.5]), rtol=1e-13)
    # The derivatives stay finite through x = a (eta is smooth there) and match the density.
    ga, gx = funcgrad.grad(fsp.gammainc, argnums=(0, 1))(1e6, 1e6)
    assert np.isfinite(float(ga)) and abs(float(gx) - 3.98942247156244e-04) < 1e-15
    # The inverse in the deep tail (P(1e9, x) = 1e-100 at mpmath's check).
    x = float(fsp.gammaincinv(1e9, 1e-100))
    assert abs(x - 999327424.8421105) < 1e-5


def test_i0_i1_past_exp_overflow_quietly():
    # Finite up to about 713.98 (mpmath's values; SciPy, NumPy, JAX and torch overflow to inf
    # from 709.8), then inf; nan at +-inf as all of them.
    x = [700.0, 713.0, 714.0, 800.0, INF, -INF, -710.0]
    assert_allclose(_quiet(fsp.i0, x), np.array([
        1.5295933476718737e+302, 6.705128263670996e+307, INF, INF, NAN, NAN,
        3.345334558619656e+306]), rtol=1e-13)
    assert_allclose(_quiet(fsp.i1, x), np.array([
        1.5285003902339006e+302, 6.700424559186402e+307, INF, INF, NAN, NAN,
        -3.3429778585097626e+306]), rtol=1e-13)


def test_inv_boxcox_and_exprel():
    y = [1.0, 2.0, -3.0, 0.5, 1e-20, 2.0]
    lm = [0.0, 0.5, 0.5, -2.0, 1e-10, 1e-10]
    assert_allclose(_quiet(fsp.inv_boxcox, y, lm), np.array(
        [np.e, 4.0, NAN, INF, 1.0, 7.389056097452839]), rtol=1e-14)
    assert_allclose(_quiet(fsp.inv_boxcox1p, y, lm), np.array(
        [np.e - 1.0, 3.0, NAN, INF, 1e-20, 6.389056097452839]), rtol=1e-14)
    # Smooth through lmbda = 0: d/dlmbda inv_boxcox(1, lmbda) there is -e/2.
    g = funcgrad.grad(fsp.inv_boxcox, argnums=1)(1.0, 0.0)
    assert abs(float(g) + 0.5 * np.e) < 1e-14
    x = [0.0, 1e-20, -1e-5, 1.0, 709.0, 710.0, -800.0, -INF]
    assert_allclose(_quiet(fsp.exprel, x), np.array(
        [1.0, 1.0, 0.9999950000166665, np.e - 1.0, 1.159154790064171e+305, INF, 1.25e-3, 0.0]),
        rtol=1e-14)


def test_rgamma_cosm1_zetac():
    assert_allclose(_quiet(fsp.rgamma, [1.0, 5.0, 0.0, -2.0, -2.5, 200.0, INF, -INF, NAN]),
                    np.array([1.0, 1.0 / 24.0, 0.0, 0.0, 1.0 / -0.9453087204829419, 0.0, 0.0,
                              0.0, NAN]), rtol=1e-14)
    assert abs(float(funcgrad.grad(fsp.rgamma)(2.5)) + 0.5289515363393055) < 1e-14
    assert_allclose(_quiet(fsp.cosm1, [1e-8, 1.0, INF]),
                    np.array([-5e-17, np.cos(1.0) - 1.0, NAN]), rtol=1e-14)
    # zetac: 2^-x + 3^-x + ... far out (SciPy's Cephes gives 0 from x = 127), SciPy's values
    # elsewhere; differentiable (d/dx at 3 is zeta'(3)).
    assert_allclose(_quiet(fsp.zetac, [60.0, 2.0, 1.0, 0.5, -3.0, 200.0, INF]),
                    np.array([8.673617380119933e-19, 0.6449340668482264, INF,
                              -2.4603545088095868, -0.9916666666666667, 6.223015277861142e-61,
                              0.0]), rtol=1e-13)
    assert abs(float(funcgrad.grad(fsp.zetac)(3.0)) + 0.19812624288563685) < 1e-14


def test_agm():
    a = [24.0, 1e300, -1.0, 0.0, 1.0, INF, -1.0]
    b = [6.0, 1e-300, -5.0, -5.0, -1.0, 2.0, INF]
    assert_allclose(_quiet(fsp.agm, a, b), np.array([
        13.458171481725614, 1.1358405546107696e+297, -2.6040081905309402, 0.0, NAN, INF, NAN]),
        rtol=1e-14)
    ga, gb = funcgrad.grad(fsp.agm, argnums=(0, 1))(24.0, 6.0)
    # Homogeneous of degree 1: a da + b db = agm.
    assert abs(24.0 * float(ga) + 6.0 * float(gb) - 13.458171481725614) < 1e-12


def test_riemann_zeta_near_zero_and_far_out_negative():
    # Left of 0 the reflection formula needed zeta(1 - x) at its pole (rounding 1 - x cost
    # zeta(-2.5e-8) eight digits); far out it made 0 * inf = nan at the trivial zeros (SciPy:
    # zeta(-1000) = 0) and warned. Values: mpmath (30 digits) and SciPy 1.17.
    x = [-2.5e-8, -1e-3, -0.3, -0.5, -0.51, -0.9, -1.5]
    want = np.array([-0.49999997702653729687, -0.49908206364523696735, -0.29381306812972126857,
                     -0.20788622497735456602, -0.20430729578846444373, -0.10119350398535188216,
                     -0.02548520188983303595])
    assert_allclose(fsp.zeta(dev(np.array(x))), want, rtol=2e-15)
    assert_allclose(fsp.zetac(dev(np.array(x))), want - 1.0, rtol=2e-15)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        far = dev(np.array([-1000.0, -1001.0, -999.0, -300.0, -260.5, -1e10, -1e300]))
        assert_allclose(fsp.zeta(far), np.array([0.0, -INF, INF, 0.0, -INF, 0.0, 0.0]))
        assert_allclose(funcgrad.jit(fsp.zetac)(far),
                        np.array([-1.0, -INF, INF, -1.0, -INF, -1.0, -1.0]))
    # zeta'(-2) = -zeta(3) / (4 pi^2), through the trivial zero's value 0; zeta'(-0.3): mpmath.
    assert abs(float(funcgrad.grad(fsp.zeta)(-2.0)) + 0.030448457058393270780) < 1e-15
    assert abs(float(funcgrad.grad(fsp.zeta)(-0.3)) + 0.5089726696918258) < 1e-14


def test_ndtri_exp_far_out_values_and_derivative():
    # Below y = -1e10 the start x = -sqrt(-2y - log(-2y) - log(2 pi)) is exact to rounding
    # (Newton's exponent y + x^2/2 cancelled into overflow there); dx/dy = Phi/phi by the Mills
    # ratio series below x = -10 (exp(y + x^2/2 + ...) gave inf at y = -1e25).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = fsp.ndtri_exp(dev(np.array([-1e300, -1e21, -1e9])))
        assert_allclose(x, np.array([-1.4142135623730951e+150, -44721359549.9958,
                                     -44721.359290005006]), rtol=1e-14)
        g = float(funcgrad.grad(fsp.ndtri_exp)(-1e25))
    x25 = float(fsp.ndtri_exp(-1e25))
    assert abs(g * -x25 - 1.0) < 1e-14  # Phi/phi = (1 - 1/x^2 + ...)/(-x)
