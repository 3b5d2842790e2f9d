"""funcgrad.scipy.special additions: derivatives at awkward points, tails, errors, transforms."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from helpers import assert_allclose, dev, expected_fp_warnings

import funcgrad
import funcgrad.scipy.special as fsp
from funcgrad.errors import DTypeError
from funcgrad.test_util import check_grads

sp = pytest.importorskip("scipy.special")


def _nth(f, n):
    for _ in range(n):
        f = funcgrad.grad(f)
    return f


@pytest.mark.parametrize("name,coeffs", [
    # Taylor coefficients at 0: i0 = sum (x/2)^2k / k!^2, i1 = sum (x/2)^(2k+1) / (k! (k+1)!)
    ("i0", [1.0, 0.0, 0.5, 0.0, 3.0 / 8.0, 0.0]),
    ("i1", [0.0, 0.5, 0.0, 3.0 / 8.0, 0.0, 5.0 / 16.0]),
])
def test_bessel_derivatives_at_zero_every_order(name, coeffs):
    f = getattr(fsp, name)
    for n, want in enumerate(coeffs):
        assert abs(float(_nth(f, n)(0.0)) - want) < 1e-13, (name, n)


def test_bessel_derivatives_match_closed_forms():
    x = dev(np.array([-9.0, -3.0, 0.0, 0.5, 4.0, 7.5, 8.5, 30.0]))
    assert_allclose(funcgrad.vmap(funcgrad.grad(fsp.i0))(x), fsp.i1(x))
    xh = np.array([-9.0, -3.0, 0.5, 4.0, 7.5, 8.5, 30.0])
    want = sp.i0(xh) - sp.i1(xh) / xh
    assert_allclose(funcgrad.vmap(funcgrad.grad(fsp.i1))(dev(xh)), want, rtol=1e-13)
    want_e = sp.i0e(xh) - sp.i1e(xh) * (np.sign(xh) + 1.0 / xh)
    assert_allclose(funcgrad.vmap(funcgrad.grad(fsp.i1e))(dev(xh)), want_e, rtol=1e-13)
    # Scaled versions stay finite where i0 overflows.
    big = dev(np.array([800.0, -1e4]))
    d = funcgrad.vmap(funcgrad.grad(fsp.i0e))(big)
    assert np.all(np.isfinite(np.asarray(funcgrad.backend.to_numpy(d))))
    check_grads(fsp.i1e, (dev(np.array([0.3, 2.0, 9.0, -5.0])),), order=3)


def test_log_ndtr_tails():
    x = np.array([-1e5, -1e3, -40.0, -20.0, -10.0, -9.5, 3.0, 8.0, 30.0])
    assert_allclose(fsp.log_ndtr(dev(x)), sp.log_ndtr(x), rtol=1e-13, atol=0.0)
    # The derivative far in the tail: d/dx log ndtr(x) ~ -x.
    g = funcgrad.grad(fsp.log_ndtr)(-1e3)
    assert abs(float(g) - 1000.001) < 1e-6


def test_betaln_large_arguments_are_accurate():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    for a, b in [(1.0, 1e8), (10.0, 1e6), (300.0, 400.0), (0.5, 1e12)]:
        want = float(mpmath.log(mpmath.beta(a, b)))
        got = float(fsp.betaln(a, b))
        assert abs(got - want) <= 1e-14 * abs(want), (a, b, got, want)


def test_gammainc_values_and_boundaries():
    rng = np.random.default_rng(0)
    a = rng.uniform(0.05, 60.0, 500)
    x = rng.uniform(0.0, 120.0, 500) * rng.uniform(0.0, 1.0, 500)
    assert_allclose(fsp.gammainc(dev(a), dev(x)), sp.gammainc(a, x), rtol=1e-12, atol=1e-14)
    assert_allclose(fsp.gammaincc(dev(a), dev(x)), sp.gammaincc(a, x), rtol=1e-12, atol=1e-14)
    a = np.array([0.0, 0.0, 1.0, -1.0, 1.0, 1.0, np.inf, 2.0, np.nan])
    x = np.array([1.0, 0.0, 0.0, 1.0, -1.0, np.inf, 3.0, np.inf, 1.0])
    assert_allclose(fsp.gammainc(dev(a), dev(x)), sp.gammainc(a, x))
    assert_allclose(fsp.gammaincc(dev(a), dev(x)), sp.gammaincc(a, x))


def test_gammaincc_small_shape_keeps_relative_precision():
    # Q near 0 for a small shape: 1 - P cancelled (Q(1e-300, 0.5) came out -2.4e-14, and
    # Q(1e-10, 0.3) with 5 digits); its own series keeps them (SciPy's values).
    a = dev(np.array([1e-300, 1e-10, 1e-3, 0.3]))
    x = dev(np.array([0.5, 0.3, 1.0, 0.05]))
    want = np.array([5.597735947761714e-301, 9.056766516920485e-11, 0.0002196083575855568,
                     0.5515631378934074])
    assert_allclose(fsp.gammaincc(a, x), want, rtol=1e-13)
    assert_allclose(funcgrad.grad(fsp.gammaincc)(0.01, 0.5), 0.5655459116640782, rtol=1e-7)
    # Beside a lane on that series, a large x must not overflow the unused series' terms.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = fsp.gammaincc(dev(np.array([1e-3, 5000.0])), dev(np.array([0.5, 1e4])))
    assert_allclose(got, np.array([0.0005600666564707501, 0.0]), atol=1e-300, rtol=1e-12)


def test_gammainc_derivative_in_x_under_transforms():
    a, x = dev(np.array([0.5, 2.0, 7.0])), dev(np.array([0.3, 2.0, 9.0]))
    want = np.exp((np.array([0.5, 2.0, 7.0]) - 1) * np.log([0.3, 2.0, 9.0]) - [0.3, 2.0, 9.0]
                  - sp.gammaln([0.5, 2.0, 7.0]))
    g = funcgrad.vmap(funcgrad.grad(fsp.gammainc, argnums=1))(a, x)
    assert_allclose(g, want, rtol=1e-13)
    gj = funcgrad.jit(funcgrad.vmap(funcgrad.grad(fsp.gammaincc, argnums=1)))(a, x)
    assert_allclose(gj, -want, rtol=1e-13)
    check_grads(lambda x: fsp.gammainc(a, x), (x,), order=3)


def test_gammainc_derivative_in_a_at_x_zero_is_zero():
    # P(a, 0) = 0 for every a > 0, so d/da is 0 (JAX 0.10.2: jvp in a gives 0.0 / -0.0);
    # the x term, whose density is infinite at x = 0 for a < 1, must not enter as 0 * inf.
    a, x = dev(np.array([0.5, 1.5, 0.25])), dev(np.zeros(3))
    for f in (fsp.gammainc, fsp.gammaincc):
        out, t = funcgrad.jvp(lambda a_, f=f: f(a_, x), (a,), (dev(np.ones(3)),))
        assert_allclose(t, np.zeros(3))
        g = funcgrad.jit(funcgrad.vmap(funcgrad.grad(f)))(a, x)
        assert_allclose(g, np.zeros(3))


@pytest.mark.parametrize("a,x", [(0.5, 0.1), (2.0, 1.5), (7.3, 2.0),     # series branch
                                 (1.0, 2.5), (3.0, 10.0), (0.3, 30.0),    # continued fraction,
                                 (30.0, 45.0), (5.0, 6.5)])                 # integer a included
def test_gammainc_derivatives_in_a_match_mpmath(a, x):
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30

    def p(s, t):
        return mpmath.gammainc(s, 0, t, regularized=True)

    g = funcgrad.grad(fsp.gammainc, argnums=(0, 1))(a, x)
    gc = funcgrad.grad(fsp.gammaincc, argnums=(0, 1))(a, x)
    h = funcgrad.hessian(fsp.gammainc, argnums=(0, 1))(a, x)
    for i, order in enumerate([(1, 0), (0, 1)]):
        want = float(mpmath.diff(p, (a, x), order))
        assert abs(float(g[i]) - want) <= 1e-11 * abs(want), (i, float(g[i]), want)
        assert abs(float(gc[i]) + want) <= 1e-11 * abs(want), (i, float(gc[i]), want)
    for i, j, order in [(0, 0, (2, 0)), (0, 1, (1, 1)), (1, 1, (0, 2))]:
        want = float(mpmath.diff(p, (a, x), order))
        assert abs(float(h[i][j]) - want) <= 1e-9 * abs(want) + 1e-15, (i, j, float(h[i][j]), want)


def test_gammainc_derivative_in_a_under_transforms():
    a_h = np.array([0.7, 2.0, 3.0, 12.0, 4.5])
    x_h = np.array([0.2, 6.0, 1.0, 20.0, 4.0])
    a, x = dev(a_h), dev(x_h)
    g = funcgrad.vmap(funcgrad.grad(fsp.gammainc))(a, x)
    gj = funcgrad.jit(funcgrad.vmap(funcgrad.grad(fsp.gammaincc)))(a, x)
    assert_allclose(gj, -np.asarray(funcgrad.backend.to_numpy(g)), rtol=1e-13)
    eps = 1e-6
    num = (sp.gammainc(a_h + eps, x_h) - sp.gammainc(a_h - eps, x_h)) / (2 * eps)
    assert_allclose(g, num, rtol=1e-7)
    # One lane per branch: series, continued fraction at an integer a.
    check_grads(fsp.gammaincc, (dev(np.array([0.7, 2.0])), dev(np.array([0.2, 6.0]))), order=2)
    g32 = funcgrad.grad(lambda v: funcgrad.numpy.sum(fsp.gammainc(v, 2.0)))(
        dev(np.float32([0.5, 3.0])))
    assert g32.dtype == np.float32
    num32 = (sp.gammainc([0.5 + eps, 3.0 + eps], 2.0)
             - sp.gammainc([0.5 - eps, 3.0 - eps], 2.0)) / (2 * eps)
    assert_allclose(g32, num32.astype(np.float32), rtol=1e-4)


@expected_fp_warnings
def test_gamma_family():
    x = np.array([0.5, 3.0, -0.5, -2.5, 0.0, -0.0, -1.0, np.inf, -np.inf, np.nan])
    assert_allclose(fsp.gamma(dev(x)), sp.gamma(x), rtol=1e-13)
    assert_allclose(fsp.gammasgn(dev(x)), sp.gammasgn(x))
    assert_allclose(fsp.loggamma(dev(x)), sp.loggamma(x), rtol=1e-13)
    # d gamma = gamma * digamma, also for negative x.
    xs = np.array([0.7, 3.5, -0.5, -2.5])
    g = funcgrad.vmap(funcgrad.grad(fsp.gamma))(dev(xs))
    assert_allclose(g, sp.gamma(xs) * sp.digamma(xs), rtol=1e-12)
    assert float(funcgrad.grad(fsp.gammasgn)(-0.5)) == 0.0


def test_multigammaln_checks():
    out = fsp.multigammaln(dev(np.array([3.0, 1.0, 0.9])), 3)
    assert_allclose(np.asarray(funcgrad.backend.to_numpy(out))[:1], np.array([sp.multigammaln(3.0, 3)]))
    assert np.all(np.isnan(np.asarray(funcgrad.backend.to_numpy(out))[1:]))  # a <= (d-1)/2
    for d in (0, 1.5, True):
        with pytest.raises(ValueError, match="multigammaln: d must be a positive integer"):
            fsp.multigammaln(3.0, d)
    assert fsp.multigammaln(dev(np.float32([3.0])), 2).dtype == np.float32


def test_divergences_edges_and_gradients():
    x = np.array([0.0, 0.0, 1.0, 1.0, -1.0, 0.5, np.nan])
    y = np.array([0.0, 1.0, 0.0, -1.0, 1.0, 0.25, 1.0])
    assert_allclose(fsp.rel_entr(dev(x), dev(y)), sp.rel_entr(x, y))
    assert_allclose(fsp.kl_div(dev(x), dev(y)), sp.kl_div(x, y))
    # Gradient at x = 0 in y stays finite (kl_div = y there).
    g = funcgrad.grad(fsp.kl_div, argnums=(0, 1))(0.0, 2.0)
    assert float(g[1]) == 1.0 and np.isfinite(float(g[0])) or math.isinf(float(g[0]))


@pytest.mark.parametrize("name", ["i0", "i0e", "i1", "i1e", "gamma", "log_ndtr", "loggamma"])
def test_dtypes_and_complex_error(name):
    f = getattr(fsp, name)
    assert f(dev(np.float32([1.0, 2.0]))).dtype == np.float32
    assert f(dev(np.array([1, 2]))).dtype == np.float64
    with pytest.raises(DTypeError, match=f"funcgrad.scipy.special.{name}: complex"):
        f(dev(np.array([1.0 + 1j])))


def test_poch_negative_m_at_poles_and_numerator_poles_as_scipy():
    # SciPy 1.17: gamma(z + m) / gamma(z) at a pole z with m < 0 is 1 / an integer product
    # (poch(0, -10) = 1/10!; it was rounded to 0); a pole of gamma(z + m) alone is +inf (was nan).
    z = np.array([0.0, -3.0, -4.0, 2.0, 1.0, -2.5, 0.5, -3.0, 3.0])
    m = np.array([-10.0, -1.0, -2.0, -3.0, -6.0, 2.5, -2.5, 2.0, 2.0])
    want = [2.7557319223985894e-07, -0.25, 0.03333333333333333, np.inf, np.inf, np.inf, np.inf,
            6.0, 12.0]
    assert_allclose(fsp.poch(dev(z), dev(m)), np.array(want))
    assert_allclose(funcgrad.jit(fsp.poch)(dev(z), dev(m)), np.array(want))


def test_scipys_elementwise_conveniences():
    # SciPy 1.17 values (huber / pseudo_huber at delta 1, 0, -1; softplus far out; exp10, cbrt)
    r = dev(np.array([-3.0, -0.5, 0.0, 2.0]))
    assert_allclose(fsp.huber(1.0, r), np.array([2.5, 0.125, 0.0, 1.5]))
    assert_allclose(fsp.huber(0.0, r), np.zeros(4))
    assert_allclose(fsp.huber(-1.0, r), np.full(4, np.inf))
    assert_allclose(fsp.pseudo_huber(1.0, r), np.array(
        [2.1622776601683795, 0.11803398874989485, 0.0, 1.2360679774997896]))
    assert_allclose(fsp.pseudo_huber(0.0, r), np.zeros(4))
    assert_allclose(fsp.pseudo_huber(-1.0, r), np.full(4, np.inf))
    assert_allclose(fsp.softplus(dev(np.array([-800.0, -20.0, 0.0, 20.0, 800.0]))), np.array(
        [0.0, 2.061153620314381e-09, 0.6931471805599453, 20.000000002061153, 800.0]))
    assert_allclose(fsp.exp10(dev(np.array([-1.0, 2.0]))), np.array([0.1, 100.0]))
    assert_allclose(fsp.exp2(dev(np.array([3.0, -1.0]))), np.array([8.0, 0.5]))
    assert_allclose(fsp.cbrt(dev(np.array([-8.0, 27.0]))), np.array([-2.0, 3.0]))
    assert_allclose(fsp.expm1(1e-10), 1.00000000005e-10)
    assert_allclose(fsp.log1p(dev(np.array([1e-10, -1.0]))), np.array([9.9999999995e-11, -np.inf]))
    assert fsp.softplus(dev(np.ones(2, np.float32))).dtype == np.float32
    assert fsp.cbrt(dev(np.array([8]))).dtype == np.float64
    # derivatives: huber (|r| - delta, delta sign r) beyond delta; pseudo_huber's closed form
    gd, gr = funcgrad.grad(fsp.huber, (0, 1))(1.0, 2.0)
    assert_allclose((gd, gr), (1.0, 1.0))
    gd, gr = funcgrad.grad(fsp.pseudo_huber, (0, 1))(1.0, 2.0)
    assert_allclose((gd, gr), (2 * (np.sqrt(5) - 1) - 4 / np.sqrt(5), 2 / np.sqrt(5)))
    assert_allclose(funcgrad.grad(fsp.softplus)(800.0), 1.0)
    assert_allclose(funcgrad.jit(fsp.pseudo_huber)(dev(np.array(2.0)), r),
                    fsp.pseudo_huber(2.0, r))


def test_exp1_derivative_is_nan_where_the_value_is():
    # exp1 is nan for x < 0 (SciPy's real branch); its derivative was -exp(-x)/x there.
    assert np.isnan(float(funcgrad.grad(fsp.exp1)(-3.5)))
    assert_allclose(funcgrad.grad(fsp.exp1)(1.0), -0.36787944117144233, rtol=1e-14)


def test_beta_with_an_infinite_argument():
    # B(a, inf) = 0 for a > 0 (SciPy's; the formulas gave inf - inf = nan, with a warning).
    a = dev(np.array([1.0, np.inf, 1e-300, 2.0, 0.0]))
    b = dev(np.array([np.inf, 2.0, np.inf, 3.0, np.inf]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_allclose(fsp.betaln(a, b), np.array([-np.inf, -np.inf, -np.inf,
                                                    -2.4849066497880004, np.inf]), rtol=1e-14)
        assert_allclose(fsp.beta(a, b), np.array([0.0, 0.0, 0.0, 1.0 / 12.0, np.inf]),
                        rtol=1e-14)
