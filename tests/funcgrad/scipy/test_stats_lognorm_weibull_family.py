"""lognorm, halfnorm, weibull_min, rayleigh (SciPy's, not in JAX): values against SciPy's
(recorded as literals), support and parameter edges, far tails, derivatives."""

from __future__ import annotations

import warnings

import numpy as np
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.stats as fst


def test_values_match_scipy():
    assert_allclose(fst.lognorm.cdf(dev(np.array([0.5, 3.0])), 0.8, 0.0, 2.0),
                    np.array([0.041559570870408485, 0.6938634335972504]), rtol=1e-12)
    assert_allclose(fst.lognorm.ppf(dev(np.array([1e-10, 0.9])), 0.8),
                    np.array([0.006163732732295166, 2.787767935249002]), rtol=1e-12)
    assert_allclose(fst.weibull_min.isf(dev(np.array([1e-200, 0.4])), 2.5),
                    np.array([11.622465715253838, 0.965635709014179]), rtol=1e-12)
    assert_allclose(fst.weibull_min.logcdf(dev(np.array([1e-3, 2.0])), 1.5),
                    np.array([-10.361648729819839, -0.0609245225042294]), rtol=1e-12)
    assert_allclose(fst.rayleigh.logsf(dev(np.array([0.0, 5.0]))), np.array([0.0, -12.5]))
    assert_allclose(fst.halfnorm.isf(dev(np.array([1e-100, 0.5]))),
                    np.array([21.30594006935153, 0.6744897501960817]), rtol=1e-12)
    for mod, args, want in [(fst.lognorm, (0.5,), 0.382869771989),
                            (fst.halfnorm, (), 0.259035191332),
                            (fst.weibull_min, (1.5,), 0.292608528089),
                            (fst.rayleigh, (), 0.486978701038)]:
        assert_allclose(mod.pdf(1.5, *args), want, rtol=1e-11)


def test_edges_and_domain():
    x = dev(np.array([-1.0, 0.0, np.inf, np.nan]))
    nan, inf = np.nan, np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_allclose(fst.lognorm.logpdf(x, 0.5), np.array([-inf, -inf, -inf, nan]))
        assert_allclose(fst.weibull_min.cdf(x, 1.5), np.array([0.0, 0.0, 1.0, nan]))
        assert_allclose(fst.rayleigh.logcdf(x), np.array([-inf, -inf, 0.0, nan]))
        assert_allclose(fst.halfnorm.sf(x), np.array([1.0, 1.0, 0.0, nan]))
        q = dev(np.array([-0.1, 0.0, 1.0, np.nan]))
        assert_allclose(fst.weibull_min.ppf(q, 2.0), np.array([nan, 0.0, inf, nan]))
        assert_allclose(fst.lognorm.isf(q, 2.0), np.array([nan, inf, 0.0, nan]))
    assert np.isnan(float(fst.lognorm.pdf(1.0, -1.0)))
    assert np.isnan(float(fst.weibull_min.cdf(1.0, 0.0)))
    assert np.isnan(float(fst.halfnorm.pdf(1.0, 0.0, -1.0)))
    # Far tails in logs (SciPy: -inf from log(sf) underflowing).
    assert_allclose(fst.halfnorm.logsf(40.0), -803.9152948331939, rtol=1e-13)


def test_derivatives_match_differences():
    # SciPy's values, central differences of step 1e-6 (to ~1e-9).
    g = funcgrad.grad(fst.lognorm.logpdf, argnums=(0, 1, 2, 3))(1.3, 0.7, 0.2, 1.5)
    want = [-0.3336643258911032, -1.1481163861293275, 0.3336643258911032, -0.4219794941806576]
    assert_allclose(np.array([float(v) for v in g]), np.array(want), rtol=1e-7, atol=1e-9)
    g = funcgrad.grad(fst.weibull_min.ppf, argnums=(0, 1))(0.3, 1.7)
    assert_allclose(np.array([float(v) for v in g]), np.array([1.2847285609796089, 0.19451919319735111]),
                    rtol=1e-7)
