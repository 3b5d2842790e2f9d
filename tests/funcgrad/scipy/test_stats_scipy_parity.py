"""funcgrad.scipy.stats against SciPy at the edges: nan points, x = inf, quantiles outside
[0, 1] and in the far tails."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, expected_fp_warnings

import funcgrad
import funcgrad.scipy.stats as fst

st = pytest.importorskip("scipy.stats")
pytestmark = expected_fp_warnings

X = np.array([np.nan, -1.0, 0.0, 0.3, 1.0, 2.5, np.inf, -np.inf])
K = np.array([np.nan, -1.0, 0.0, 1.0, 2.0, 2.5, 7.0, np.inf])

CONTINUOUS = [
    ("gamma", (2.3,), ["logpdf", "pdf", "cdf", "sf"]),
    ("beta", (1.7, 2.2), ["logpdf", "pdf", "cdf", "sf"]),
    ("expon", (), ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]),
    ("chi2", (3.0,), ["logpdf", "pdf", "cdf", "sf"]),
    ("f", (3.0, 5.0), ["logpdf", "pdf", "cdf", "logcdf", "sf"]),
    ("uniform", (), ["logpdf", "pdf", "cdf"]),
    ("norm", (), ["logpdf", "cdf", "sf"]),
]
DISCRETE = [
    ("poisson", (2.5,), ["logpmf", "pmf", "cdf"]),
    ("bernoulli", (0.3,), ["logpmf", "pmf", "cdf"]),
    ("binom", (7.0, 0.3), ["logpmf", "pmf", "cdf", "sf"]),
]


@pytest.mark.parametrize("name,args,methods", CONTINUOUS)
def test_continuous_nan_and_infinite_points_as_scipy(name, args, methods):
    for method in methods:
        for loc, scale in [(0.0, 1.0), (0.3, 2.0)]:
            got = getattr(getattr(fst, name), method)(dev(X), *args, loc=loc, scale=scale)
            want = getattr(getattr(st, name), method)(X, *args, loc=loc, scale=scale)
            assert_allclose(got, want, rtol=1e-10, atol=1e-300, err_msg=f"{name}.{method}")


@pytest.mark.parametrize("name,args,methods", DISCRETE)
def test_discrete_nan_points_as_scipy(name, args, methods):
    for method in methods:
        for loc in (0.0, 1.0):
            got = getattr(getattr(fst, name), method)(dev(K), *args, loc=loc)
            want = getattr(getattr(st, name), method)(K, *args, loc=loc)
            assert_allclose(got, want, rtol=1e-10, atol=1e-300, err_msg=f"{name}.{method}")


Q = np.array([-0.1, 0.0, 1e-10, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0 - 1e-10, 1.0, 1.1, np.nan])


@pytest.mark.parametrize("name", ["expon", "cauchy"])
@pytest.mark.parametrize("method", ["ppf", "isf"])
def test_quantiles_at_the_ends_and_outside_as_scipy(name, method):
    for loc, scale in [(0.0, 1.0), (0.3, 2.0)]:
        got = getattr(getattr(fst, name), method)(dev(Q), loc=loc, scale=scale)
        want = getattr(getattr(st, name), method)(Q, loc=loc, scale=scale)
        assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_cauchy_quantile_derivative_in_the_tails():
    q = np.array([1e-10, 0.1, 0.3, 0.5, 0.8, 1.0 - 1e-6])
    g = funcgrad.vmap(funcgrad.grad(fst.cauchy.ppf))(dev(q))
    assert_allclose(g, np.pi / np.sin(np.pi * q) ** 2, rtol=1e-9)


@pytest.mark.parametrize("x,mean,cov", [
    (0.5, 0.0, 2.0),
    (np.array([0.5]), 0.0, 2.0),
    (np.array([0.5, 1.0, 2.0]), 1.0, 3.0),
    (np.array([0.5, 1.0, 2.0]), np.array([1.0]), np.array([[3.0]])),
    (np.array([[0.5], [1.0]]), np.array([0.0]), np.array([[2.0]])),
])
def test_multivariate_normal_one_dimension_as_scipy(x, mean, cov):
    want = st.multivariate_normal.logpdf(x, mean, cov)
    got = fst.multivariate_normal.logpdf(dev(x), dev(mean), dev(cov))
    assert np.shape(got) == np.shape(want)
    assert_allclose(got, want, rtol=1e-12)


def test_multivariate_normal_scalar_mean_is_the_same_in_every_coordinate():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 3))
    cov = a @ a.T + np.eye(3)
    x = rng.normal(size=(5, 3))
    want = st.multivariate_normal.logpdf(x, np.full(3, 0.5), cov)
    assert_allclose(fst.multivariate_normal.logpdf(dev(x), 0.5, dev(cov)), want, rtol=1e-12)
    g = funcgrad.grad(lambda m: fst.multivariate_normal.logpdf(dev(x), m, dev(cov)).sum())(0.5)
    assert_allclose(g, np.sum(np.linalg.solve(cov, (x - 0.5).T)), rtol=1e-10)


def test_t_with_infinite_df_is_the_normal_density():
    x = np.array([-3.0, 0.0, 0.5, 2.0])
    assert_allclose(fst.t.logpdf(dev(x), np.inf, loc=0.3, scale=2.0),
                    st.norm.logpdf(x, loc=0.3, scale=2.0), rtol=1e-13)
    g = funcgrad.grad(lambda v: fst.t.logpdf(v, np.inf))(1.0)
    assert_allclose(g, -1.0)


# betainc with b ~ df/2 loses digits as df grows (~1e-6 relative in the tail at 1e10).
@pytest.mark.parametrize("df,rtol", [(1e4, 1e-10), (1e8, 1e-8), (1e10, 1e-6)])
def test_t_cdf_at_large_df_stays_a_probability(df, rtol):
    # The Taylor polynomial for |y| ~ 0 once reached y = 3 at df = 1e10 (cdf 1.098).
    y = np.array([-3.0, -0.5, 1e-5, 0.5, 3.0])
    assert_allclose(fst.t.cdf(dev(y), df), st.t.cdf(y, df), rtol=rtol)
    assert_allclose(fst.t.sf(dev(y), df), st.t.sf(y, df), rtol=rtol)


@pytest.mark.parametrize("df", [1e4, 1e10])
def test_t_logpdf_at_large_df_keeps_its_digits(df):
    # Two large gammaln cancelled (5e-7 relative at df = 1e10); reference from mpmath.
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    for x in (-3.0, 0.0, 0.5):
        want = float(mp.loggamma((df + 1) / 2) - mp.loggamma(df / 2)
                     - 0.5 * mp.log(df * mp.pi) - (df + 1) / 2 * mp.log1p(mp.mpf(x) ** 2 / df))
        assert_allclose(fst.t.logpdf(x, df), want, rtol=1e-14)
