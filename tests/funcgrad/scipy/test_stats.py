"""funcgrad.scipy.stats: errors, dtypes, support edges and gradients not covered by the table."""

from __future__ import annotations

import types

import numpy as np
import pytest
from helpers import assert_allclose, dev, expected_fp_warnings

import funcgrad
from funcgrad.scipy import stats
from funcgrad.test_util import check_grads

ss = pytest.importorskip("scipy.stats")


def test_modules_listed():
    # Every distribution module lists its functions (mode, rankdata, sem, gaussian_kde are
    # functions / classes of stats itself).
    modules = [n for n in stats.__all__ if isinstance(getattr(stats, n), types.ModuleType)]
    # JAX's 27 and lognorm, halfnorm, weibull_min, rayleigh, kstwobign, kstwo, ksone
    assert len(modules) == 34
    for name in modules:
        assert hasattr(getattr(stats, name), "__all__")


@expected_fp_warnings
def test_norm_tails_and_bad_scale():
    x = np.array([-50.0, -10.0, 0.0, 10.0, 50.0])
    assert_allclose(stats.norm.logcdf(dev(x)), ss.norm.logcdf(x), rtol=1e-13)
    assert_allclose(stats.norm.logsf(dev(x)), ss.norm.logsf(x), rtol=1e-13)
    out = stats.norm.logpdf(dev(np.array([0.0, 0.0])), 0.0, dev(np.array([0.0, -1.0])))
    assert np.all(np.isnan(funcgrad.backend.to_numpy(out)))


def test_float32_stays_float32():
    x = dev(np.float32([0.5, 1.5]))
    for mod, fn, extra in [(stats.norm, "logpdf", ()), (stats.t, "logpdf", (3.0,)),
                           (stats.gamma, "cdf", (2.0,)), (stats.beta, "logpdf", (2.0, 2.0)),
                           (stats.cauchy, "cdf", ()), (stats.expon, "logsf", ())]:
        out = getattr(mod, fn)(x * np.float32(0.5), *extra)
        assert out.dtype == np.float32, (mod.__name__, fn)
    assert stats.poisson.logpmf(dev(np.array([1, 2])), 2.0).dtype == np.float64


def test_multivariate_normal_gradients_and_errors():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 3))
    cov = a @ a.T + 3 * np.eye(3)
    x, mean = rng.standard_normal((4, 3)), rng.standard_normal(3)
    got = stats.multivariate_normal.logpdf(dev(x), dev(mean), dev(cov))
    assert_allclose(got, ss.multivariate_normal.logpdf(x, mean, cov))

    def f(x, mean, c):
        return funcgrad.numpy.sum(stats.multivariate_normal.logpdf(x, mean, c @ c.T))

    check_grads(f, dev((x, mean, a + 2 * np.eye(3))), order=2)
    with pytest.raises(ValueError, match="cov must have shape"):
        stats.multivariate_normal.logpdf(dev(x), dev(mean), dev(np.eye(2)))
    with pytest.raises(ValueError, match="last axis"):
        stats.multivariate_normal.logpdf(dev(x), dev(np.zeros(2)), dev(np.eye(2)))
    # As SciPy, scalars are one point in one dimension.
    assert_allclose(stats.multivariate_normal.logpdf(1.0, 0.0, 1.0), -0.5 - 0.5 * np.log(2 * np.pi))
    assert_allclose(
        stats.multivariate_normal.logpdf(dev(x), dev(mean), dev(cov), allow_singular=True),
        ss.multivariate_normal.logpdf(x, mean, cov, allow_singular=True), rtol=1e-10)


def test_multivariate_normal_jit_vmap():
    cov, mean = np.diag([1.0, 2.0]), np.array([0.5, -0.5])
    x = np.random.default_rng(1).standard_normal((5, 2))
    d_mean, d_cov = dev(mean), dev(cov)
    f = funcgrad.jit(lambda x: stats.multivariate_normal.logpdf(x, d_mean, d_cov))
    assert_allclose(f(dev(x)), ss.multivariate_normal.logpdf(x, mean, cov))
    g = funcgrad.vmap(lambda x: stats.multivariate_normal.logpdf(x, d_mean, d_cov))
    assert_allclose(g(dev(x)), ss.multivariate_normal.logpdf(x, mean, cov))


@expected_fp_warnings
def test_dirichlet_support_and_errors():
    alpha = np.array([1.5, 2.0, 3.0])
    out = stats.dirichlet.logpdf(dev(np.array([0.5, 0.6, -0.1])), dev(alpha))
    assert float(out) == -np.inf
    with pytest.raises(ValueError, match="dirichlet.logpdf: x must have shape"):
        stats.dirichlet.logpdf(dev(np.ones(5) / 5), dev(alpha))
    with pytest.raises(ValueError, match="alpha must be 1-D"):
        stats.dirichlet.logpdf(dev(np.ones(3) / 3), dev(np.ones((3, 1))))
    pt = dev(np.array([0.2, 0.3, 0.5]))
    g = funcgrad.grad(lambda a: stats.dirichlet.logpdf(pt, a))(
        dev(alpha))
    from scipy.special import digamma
    want = np.log([0.2, 0.3, 0.5]) - digamma(alpha) + digamma(alpha.sum())
    assert_allclose(g, want)


def test_discrete_gradients_in_parameters():
    k = np.array([0.0, 2.0, 5.0])
    dk = dev(k)
    g = funcgrad.grad(lambda mu: funcgrad.numpy.sum(stats.poisson.logpmf(dk, mu)))(2.0)
    assert abs(float(g) - (k / 2.0 - 1.0).sum()) < 1e-13
    # poisson.cdf: derivative in mu is -pmf(k; mu) summed below; zero in k.
    gk, gmu = funcgrad.grad(stats.poisson.cdf, argnums=(0, 1))(2.5, 3.0)
    assert float(gk) == 0.0
    assert abs(float(gmu) + ss.poisson.pmf(2, 3.0)) < 1e-13


def test_gamma_cdf_shape_derivative():
    eps = 1e-6
    for f, ref, args in [(stats.gamma.cdf, ss.gamma.cdf, (1.0, 2.0, 0.5, 1.5)),
                         (stats.gamma.sf, ss.gamma.sf, (9.0, 2.0, 0.5, 1.5)),
                         (stats.chi2.cdf, ss.chi2.cdf, (3.0, 4.0)),
                         (stats.chi2.sf, ss.chi2.sf, (30.0, 3.0))]:
        x, s, *rest = args
        num = (ref(x, s + eps, *rest) - ref(x, s - eps, *rest)) / (2 * eps)
        got = float(funcgrad.grad(f, argnums=1)(*args))
        assert abs(got - num) <= 1e-7 * abs(num), (f, got, num)
    check_grads(stats.chi2.logcdf, (dev(np.array([0.5, 9.0])), dev(np.array([2.0, 4.0]))),
                order=2)
    assert abs(float(funcgrad.grad(stats.gamma.cdf)(1.0, 2.0)) - ss.gamma.pdf(1.0, 2.0)) < 1e-14


@expected_fp_warnings
def test_multivariate_normal_allow_singular_matches_scipy():
    rank1 = np.array([[1.0, 2.0], [2.0, 4.0]])
    mean = np.array([0.5, 1.0])
    x = np.array([[1.0, 2.0], [0.0, 0.0], [1.0, 0.0], [2.5, 5.0]])  # third: off the support
    want = ss.multivariate_normal.logpdf(x, mean, rank1, allow_singular=True)
    got = stats.multivariate_normal.logpdf(dev(x), dev(mean), dev(rank1), allow_singular=True)
    assert_allclose(got, want, rtol=1e-10)
    c = np.diag([1.0, 2.0, 0.0])
    x3 = np.array([[0.3, -0.2, 0.0], [0.1, 0.1, 0.5]])
    assert_allclose(stats.multivariate_normal.logpdf(dev(x3), dev(np.zeros(3)), dev(c),
                                                     allow_singular=True),
                    ss.multivariate_normal.logpdf(x3, np.zeros(3), c, allow_singular=True))
    full = np.array([[2.0, 0.3], [0.3, 1.0]])
    check_grads(lambda m: stats.multivariate_normal.logpdf(dev(x[0]), m, dev(full),
                                                           allow_singular=True),
                (dev(mean),), order=2)


def test_multivariate_normal_stacked_covariances():
    # A stack of covariances (..., d, d) broadcasts against x's batch dims, as JAX; values and
    # gradient recorded from jax.scipy.stats.multivariate_normal (float64).
    x = np.array([[0.5, -1.0], [1.5, 0.25], [0.0, 0.0]])
    mean = np.array([0.1, -0.2])
    c = np.array([[2.0, 0.3], [0.3, 1.0]])
    covs = np.stack([c, 0.5 * c + 0.2 * np.eye(2)])
    want = np.array([[-2.58865382, -2.33406677], [-2.68158576, -2.60929613],
                     [-2.18813026, -1.77443375]])
    got = stats.multivariate_normal.logpdf(dev(x[:, None, :]), dev(mean), dev(covs))
    assert_allclose(got, want, rtol=1e-8, atol=1e-8)
    assert_allclose(stats.multivariate_normal.pdf(dev(x[:, None, :]), dev(mean), dev(covs)),
                    np.exp(want), rtol=1e-8, atol=1e-8)
    single = stats.multivariate_normal.logpdf(dev(x[:, None, :]), dev(mean), dev(covs),
                                              allow_singular=True)
    assert_allclose(single, want, rtol=1e-8, atol=1e-8)
    g = funcgrad.grad(lambda cv: stats.multivariate_normal.logpdf(dev(x[:2]), dev(mean), cv)
                      .sum())(dev(covs))
    assert_allclose(g, np.array([[[-0.20564129, -0.07233903], [-0.07233903, -0.11808887]],
                                 [[0.19482554, 0.3170328], [0.3170328, -0.65247033]]]),
                    rtol=1e-7, atol=1e-8)
    with pytest.raises(ValueError, match=r"\(\.\.\., 2, 2\)"):
        stats.multivariate_normal.logpdf(dev(x), dev(mean), dev(np.ones((2, 3, 3))))


def test_bernoulli_ppf_top_of_support():
    # q = 1 is k = 1 for every p, p = 0 included (SciPy: bernoulli.ppf(1, 0) == 1).
    q = np.array([0.0, 0.5, 1.0])
    assert_allclose(stats.bernoulli.ppf(dev(q), 0.0), np.array([-1.0, 0.0, 1.0]))
    assert_allclose(stats.bernoulli.ppf(dev(q), 1.0), np.array([-1.0, 1.0, 1.0]))
    assert_allclose(stats.bernoulli.ppf(dev(q), 0.3), np.array([-1.0, 0.0, 1.0]))
