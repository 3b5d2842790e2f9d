"""ppf / isf / sf / logcdf / logsf of the discrete distributions (poisson, binom, nbinom,
geom): SciPy's values (recorded as literals), the ends of the support, and transformations."""

from __future__ import annotations

import numpy as np
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.stats as fst

Q = np.array([1e-12, 0.01, 0.3, 0.5, 0.99, 1 - 1e-12])


def test_discrete_ppf_isf_match_scipy():
    q = dev(Q)
    assert_allclose(fst.poisson.ppf(q, 3.0), np.array([0.0, 0.0, 2.0, 3.0, 8.0, 22.0]))
    assert_allclose(fst.poisson.ppf(q, 1e4), np.array(
        [9305.0, 9768.0, 9947.0, 10000.0, 10233.0, 10711.0]))
    assert_allclose(fst.poisson.isf(q[1:5], 3.0), np.array([8.0, 4.0, 3.0, 0.0]))
    assert_allclose(fst.binom.ppf(q, 1000, 0.01), np.array([0.0, 3.0, 8.0, 10.0, 18.0, 39.0]))
    assert_allclose(fst.binom.isf(q, 10, 0.3), np.array([10.0, 7.0, 4.0, 3.0, 0.0, 0.0]))
    # Far tails: galloping from the normal guess, then bisection (a few dozen steps).
    assert_allclose(fst.nbinom.ppf(q, 100, 0.01), np.array(
        [4416.0, 7733.0, 9355.0, 9867.0, 12360.0, 18581.0]))
    assert_allclose(fst.geom.ppf(q, 1e-4), np.array(
        [1.0, 101.0, 3567.0, 6932.0, 46050.0, 276297.0]))
    # isf from the upper tail itself: sf(30) <= 1e-20 < sf(29) (SciPy's isf gives nan here).
    assert float(fst.poisson.isf(1e-20, 3.0)) == 30.0
    assert float(fst.poisson.sf(30.0, 3.0)) <= 1e-20 < float(fst.poisson.sf(29.0, 3.0))


def test_discrete_quantile_ends_and_domain():
    q = dev(np.array([-0.1, 0.0, 1.0, 1.1, np.nan]))
    nan, inf = np.nan, np.inf
    assert_allclose(fst.poisson.ppf(q, 3.0), np.array([nan, -1.0, inf, nan, nan]))
    assert_allclose(fst.poisson.isf(q, 3.0, loc=2), np.array([nan, inf, 1.0, nan, nan]))
    assert_allclose(fst.binom.ppf(q, 10, 0.3), np.array([nan, -1.0, 10.0, nan, nan]))
    assert_allclose(fst.geom.ppf(q, 0.3), np.array([nan, 0.0, inf, nan, nan]))
    # Degenerate: geom(p = 1) is always 1 (SciPy's ppf gives 0 inside (0, 1)).
    assert float(fst.geom.ppf(0.5, 1.0)) == 1.0
    assert float(fst.binom.ppf(0.5, 10, 1.0)) == 10.0
    assert np.isnan(float(fst.poisson.ppf(0.5, -1.0)))


def test_discrete_tails_and_logs_match_scipy():
    assert_allclose(fst.poisson.sf(dev(np.array([-1.0, 0.0, 5.0, 20.0])), 2.0),
                    np.array([1.0, 0.8646647167633873, 0.01656360848061443,
                              6.10807194842818e-15]), rtol=1e-12)
    assert_allclose(fst.binom.logsf(dev(np.array([0.0, 3.0, 9.0])), 10, 0.3),
                    np.array([-0.02865416219876478, -1.0487105094288514, -12.03972804325936]),
                    rtol=1e-12)
    assert_allclose(fst.nbinom.logcdf(dev(np.array([0.0, 4.0, 30.0])), 5, 0.4),
                    np.array([-4.581453659370775, -1.3221271088940931,
                              -0.00021612349861803516]), rtol=1e-10)
    # log1p(-sf) keeps the digits where the CDF rounds to 1 (SciPy's log(cdf) gives 0).
    assert_allclose(fst.poisson.logcdf(100.0, 3.0), -8.413939063213629e-114, rtol=1e-8)


def test_discrete_quantiles_under_transforms():
    q = dev(np.array([0.1, 0.5, 0.9]))
    assert_allclose(funcgrad.jit(lambda v: fst.poisson.ppf(v, 4.0))(q), np.array([2.0, 4.0, 7.0]))
    assert_allclose(funcgrad.vmap(lambda p: fst.binom.isf(0.2, 10, p))(dev(np.array([0.1, 0.5]))),
                    np.array([2.0, 6.0]))
    assert float(funcgrad.grad(lambda v: fst.poisson.ppf(v, 4.0))(0.3)) == 0.0
    assert_allclose(funcgrad.grad(lambda m: fst.poisson.sf(3.0, m))(2.0), 0.18044704431548356,
                    rtol=1e-12)  # the pmf at 3
