"""funcgrad.scipy.special betainc / zeta / exp1 / expi / expn and the stats CDFs built on them:
derivatives against mpmath, tails, boundaries, errors, transforms."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, expected_fp_warnings, host

import funcgrad
import funcgrad.scipy.special as fsp
import funcgrad.scipy.stats as fst
from funcgrad.test_util import check_grads

sp = pytest.importorskip("scipy.special")
ss = pytest.importorskip("scipy.stats")


def _f(x):
    return np.asarray(host(x), dtype=np.float64)


# ---------------------------------------------------------------------------------------------
# betainc


def test_betainc_values_wide_and_boundaries():
    rng = np.random.default_rng(0)
    a, b, x = rng.uniform(0.05, 30.0, 300), rng.uniform(0.05, 30.0, 300), rng.random(300)
    assert_allclose(fsp.betainc(dev(a), dev(b), dev(x)), sp.betainc(a, b, x), rtol=1e-12,
                    atol=1e-14)
    a = np.array([1e3, 1e-3, 500.0, 0.01])
    b = np.array([1e3, 1e3, 0.5, 0.01])
    x = np.array([0.49, 1e-4, 0.999, 0.3])
    assert_allclose(fsp.betainc(dev(a), dev(b), dev(x)), sp.betainc(a, b, x), rtol=1e-11)
    inf, nan = np.inf, np.nan
    a = np.array([0, 1, 0, 0, 2, 2, -1, 2, inf, 2, inf, 2, 0])
    b = np.array([1, 0, 0, 1, 3, 3, 2, 3, 2, inf, inf, 3, 1])
    x = np.array([.5, .5, .5, 0, 0, 1, .5, -.1, .5, .5, .5, nan, 1])
    assert_allclose(fsp.betainc(dev(a * 1.0), dev(b * 1.0), dev(x)), sp.betainc(a, b, x))
    assert fsp.betainc(dev(np.float32([0.5])), 2.0, 0.3).dtype == np.float32


@pytest.mark.parametrize("a,b,x", [(2.0, 3.0, 0.4), (0.5, 7.0, 0.9), (30.0, 40.0, 0.45),
                                   (3.0, 2.000000001, 0.4)])
def test_betainc_derivatives_match_mpmath(a, b, x):
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30

    def inc(p, q, s):
        return mpmath.betainc(p, q, 0, s, regularized=True)

    g = funcgrad.grad(fsp.betainc, argnums=(0, 1, 2))(a, b, x)
    h = funcgrad.hessian(fsp.betainc, argnums=(0, 1, 2))(a, b, x)
    for i in range(3):
        order = [0, 0, 0]
        order[i] = 1
        want = float(mpmath.diff(inc, (a, b, x), tuple(order)))
        assert abs(float(g[i]) - want) <= 1e-12 * abs(want), (i, float(g[i]), want)
        for j in range(i, 3):
            o2 = list(order)
            o2[j] += 1
            want = float(mpmath.diff(inc, (a, b, x), tuple(o2)))
            got = float(h[i][j])
            assert abs(got - want) <= 1e-9 * abs(want) + 1e-13, (i, j, got, want)


def test_betainc_shape_derivatives_under_transforms():
    a, b, x = (dev(np.array(v)) for v in ([0.7, 2.0, 5.0], [3.0, 1.5, 0.8], [0.2, 0.6, 0.9]))
    g = funcgrad.vmap(funcgrad.grad(fsp.betainc, argnums=(0, 1)))(a, b, x)
    gj = funcgrad.jit(funcgrad.vmap(funcgrad.grad(fsp.betainc, argnums=(0, 1))))(a, b, x)
    assert_allclose(gj, g, rtol=1e-13)
    eps = 1e-6
    num_a = (sp.betainc(_f(a) + eps, _f(b), _f(x)) - sp.betainc(_f(a) - eps, _f(b), _f(x))) / (
        2 * eps)
    assert_allclose(g[0], num_a, rtol=1e-7)


# ---------------------------------------------------------------------------------------------
# zeta and the exponential integrals


def test_zeta_values_and_derivative():
    x = np.array([-30.5, -3.0, -2.0, -0.5, 0.0, 0.3, 0.99, 1.0, 1.01, 2.0, 7.5, 80.0])
    assert_allclose(fsp.zeta(dev(x)), sp.zeta(x), rtol=1e-13)
    q = dev(np.array([0.3, 1.0, 2.5, 40.0]))
    g = funcgrad.vmap(funcgrad.grad(fsp.zeta, argnums=1), in_axes=(None, 0))(3.0, q)
    assert_allclose(g, -3.0 * sp.zeta(4.0, _f(q)), rtol=1e-13)
    # The derivative in x, as JAX's (mpmath's zeta(x, q, 1) values), also for the Riemann
    # zeta (at x = 0: -log(2 pi) / 2; at a trivial zero -10 it is not 0).
    gx = [float(funcgrad.grad(fsp.zeta)(3.0, 2.0)), float(funcgrad.grad(fsp.zeta)(2.0, 1.5)),
          float(funcgrad.grad(fsp.zeta)(0.0)), float(funcgrad.grad(fsp.zeta)(-10.0)),
          float(funcgrad.grad(fsp.zeta)(-3.5))]
    assert_allclose(np.array(gx), np.array([-0.19812624288563685, -1.0245078426159016,
                                            -0.9189385332046728, -0.018929926338140373,
                                            0.009154213629941512]), rtol=1e-13)
    assert np.isnan(float(funcgrad.grad(fsp.zeta)(4.0, -2.5)))  # no real derivative there
    assert fsp.zeta(dev(np.float32([2.0])), 1.0).dtype == np.float32


def test_exponential_integrals_closed_form_derivatives():
    x = np.array([0.05, 0.8, 1.0, 1.3, 9.0, 45.0])
    xd = dev(x)
    assert_allclose(funcgrad.vmap(funcgrad.grad(fsp.exp1))(xd), -np.exp(-x) / x, rtol=1e-14)
    assert_allclose(funcgrad.vmap(funcgrad.grad(fsp.expi))(xd), np.exp(x) / x, rtol=1e-14)
    for n in (1, 2, 5):
        g = funcgrad.vmap(funcgrad.grad(lambda v, n=n: fsp.expn(n, v)))(xd)
        assert_allclose(g, -sp.expn(n - 1, x), rtol=1e-13)
    # E_2'' = E_0 = exp(-x)/x, through the custom rule then the composition.
    g2 = funcgrad.grad(funcgrad.grad(lambda v: fsp.expn(2, v)))(0.7)
    assert abs(float(g2) - np.exp(-0.7) / 0.7) < 1e-13


def test_exponential_integrals_wide():
    x = np.concatenate([np.geomspace(1e-12, 700.0, 60), [0.0, np.inf]])
    assert_allclose(fsp.exp1(dev(x)), sp.exp1(x), rtol=1e-13)
    assert_allclose(fsp.expi(dev(x[:-2])), sp.expi(x[:-2]), rtol=1e-13)
    assert_allclose(fsp.expi(dev(-x)), sp.expi(-x), rtol=1e-13)
    for n in (0, 3, 40):
        assert_allclose(fsp.expn(n, dev(x)), sp.expn(n, x), rtol=1e-13)
    # SciPy's integer loop: an integer n gives float64; a float n is truncated.
    assert fsp.expn(2, dev(np.float32([1.0]))).dtype == np.float64
    assert fsp.expn(np.float32(2.7), dev(np.float32([1.0]))).dtype == np.float32
    assert float(fsp.expn(2.7, 1.0)) == float(fsp.expn(2, 1.0))
    assert np.isnan(float(fsp.expn(-1, 1.0)))


# ---------------------------------------------------------------------------------------------
# stats


@expected_fp_warnings
def test_stats_log_cdfs_match_scipy_in_the_tails():
    x = np.array([-1e3, -20.0, -1.0, 0.0, 0.3, 2.0, 40.0, 1e4])
    for fn in ("logcdf", "logsf", "cdf", "sf"):
        assert_allclose(getattr(fst.t, fn)(dev(x), 3.0), getattr(ss.t, fn)(x, 3.0),
                        rtol=1e-12)
    xf = np.array([0.0, 1e-3, 0.5, 3.0, 100.0, 1e4])
    for fn in ("logpdf", "pdf", "logcdf", "logsf"):
        assert_allclose(getattr(fst.f, fn)(dev(xf), 3.0, 7.0), getattr(ss.f, fn)(xf, 3.0, 7.0),
                        rtol=1e-12)
    xb = np.array([1e-6, 0.3, 0.9, 0.999999])
    for fn in ("logcdf", "logsf"):
        assert_allclose(getattr(fst.beta, fn)(dev(xb), 3.0, 0.7),
                        getattr(ss.beta, fn)(xb, 3.0, 0.7), rtol=1e-11)


def test_t_cdf_derivatives():
    # At y = 0 the derivative is the density (a 0 * inf through betainc otherwise).
    for df in (0.5, 3.0, 30.0):
        g = float(funcgrad.grad(fst.t.cdf)(0.0, df))
        assert abs(g - ss.t.pdf(0.0, df)) < 1e-14
    # In df: differentiating betainc in its shape parameters.
    x, df = dev(np.array([-2.0, 0.7, 5.0])), dev(np.array([1.5, 4.0, 2.0]))
    g = funcgrad.vmap(funcgrad.grad(fst.t.cdf, argnums=1))(x, df)
    eps = 1e-6
    num = (ss.t.cdf(_f(x), _f(df) + eps) - ss.t.cdf(_f(x), _f(df) - eps)) / (2 * eps)
    assert_allclose(g, num, rtol=1e-6)
    check_grads(lambda d: fst.t.sf(x, d), (df,), order=1)


def test_discrete_cdfs_have_zero_derivative_in_k_and_n():
    g = funcgrad.grad(fst.binom.cdf, argnums=(0, 1, 2))(3.0, 10.0, 0.4)
    assert float(g[0]) == 0.0 and float(g[1]) == 0.0
    assert abs(float(g[2]) + 10 * ss.binom.pmf(3, 9, 0.4)) < 1e-13


def test_xlogy_keeps_its_derivative_in_x_at_zero():
    # d/dx x log y = log y, also at x = 0 (beta.logpdf's derivative in a at a = 1 uses it).
    assert abs(float(funcgrad.grad(fsp.xlogy)(0.0, 2.0)) - np.log(2.0)) < 1e-15
    assert abs(float(funcgrad.grad(fsp.xlog1py)(0.0, 2.0)) - np.log(3.0)) < 1e-15
    g = funcgrad.grad(fst.beta.logpdf, argnums=1)(0.3, 1.0, 2.0)
    assert abs(float(g) - (np.log(0.3) - sp.digamma(1.0) + sp.digamma(3.0))) < 1e-14
