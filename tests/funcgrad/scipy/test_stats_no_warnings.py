"""funcgrad.scipy.stats at the edges of the support and of the parameter space: SciPy's
values without NumPy's floating-point warnings (log(0) in a log-CDF below the support,
log(p) at p = 0, division by a zero scale), eagerly and under jit; shape parameters outside
their domain give nan as SciPy's. Expected values recorded from SciPy 1.17."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad

inf, nan = np.inf, np.nan

CASES = [
    ("norm", "logcdf", (-inf,), -inf),
    ("norm", "logpdf", (1.0, 0.0, 0.0), nan),
    ("norm", "cdf", (1.0, 0.0, 0.0), nan),
    ("bernoulli", "logpmf", (1.0, 0.0), -inf),
    ("bernoulli", "logpmf", (0.0, 1.0), -inf),
    ("binom", "logpmf", (2.0, 5.0, 0.0), -inf),
    ("binom", "logpmf", (5.0, 5.0, 1.0), 0.0),
    ("poisson", "logpmf", (2.0, 0.0), -inf),
    ("geom", "cdf", (2.0, 1.0), 1.0),
    ("gamma", "logcdf", (-1.0, 2.0), -inf),
    ("beta", "logcdf", (-1.0, 1.0, 1.0), -inf),
    ("expon", "logpdf", (1.0, 0.0, 0.0), nan),
    ("logistic", "isf", (0.0,), inf),
    ("pareto", "logcdf", (0.5, 1.0), -inf),
    ("f", "logcdf", (-1.0, 2.0, 3.0), -inf),
    ("gamma", "cdf", (0.3, 0.0), nan),   # a = 0: gammainc(0, y) is 1, the distribution nan
    ("chi2", "cdf", (0.3, 0.0), nan),
    ("beta", "cdf", (0.3, 0.0, 1.0), nan),
    ("gamma", "sf", (0.3, -1.0), nan),
    ("t", "logcdf", (-inf, 3.0), -inf),
    ("uniform", "cdf", (0.5, 0.0, 0.0), nan),
    ("laplace", "cdf", (-1.0, 0.0, 0.0), nan),
    ("cauchy", "ppf", (0.0,), -inf),
    ("cauchy", "ppf", (1.0,), inf),
    ("cauchy", "isf", (0.0,), inf),
]


@pytest.mark.parametrize("dist,method,args,want", CASES,
                         ids=[f"{c[0]}.{c[1]}{c[2]}" for c in CASES])
@pytest.mark.parametrize("jit", [False, True])
def test_edges_give_scipys_values_silently(dist, method, args, want, jit):
    f = getattr(importlib.import_module(f"funcgrad.scipy.stats.{dist}"), method)
    f = funcgrad.jit(f) if jit else f
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = f(*dev(tuple(np.array(a) for a in args)))
    assert_allclose(got, np.array(want))


def test_gradient_inside_the_support_is_unchanged():
    # d/dp bernoulli.logpmf(1, p) = 1 / p; d/dscale norm.logpdf(1, 0, s) = (1 - s^2) / s^3
    from funcgrad.scipy.stats import bernoulli, norm

    assert_allclose(funcgrad.grad(lambda p: bernoulli.logpmf(1.0, p))(0.25), 4.0)
    assert_allclose(funcgrad.grad(lambda s: norm.logpdf(1.0, 0.0, s))(2.0), -0.375)


def test_t_tails_with_many_degrees_of_freedom():
    # SciPy 1.17: the tail beyond |y| = 1 comes from the tail formula (the central form's
    # 1/2 - I_w(1/2, df/2)/2 cancelled to 0: t.sf(10, 1000) was 0 and t.logsf -inf)
    from funcgrad.scipy.stats import t

    assert_allclose(t.sf(dev(np.array(10.0)), 1000.0), 8.335351479300069e-23, rtol=1e-10)
    assert_allclose(t.logsf(dev(np.array(10.0)), 1000.0), -50.83895145446719, rtol=1e-12)
    assert_allclose(t.logcdf(dev(np.array(-30.0)), 1e5), -452.3038351372262, rtol=1e-10)
    assert_allclose(funcgrad.jit(t.cdf)(dev(np.array(-3.0)), 1e6), 0.0013499312707109,
                    rtol=1e-9)
    # the derivative is still the density, on both sides of the switch at |y| = 1
    y = dev(np.array([-3.0, -1.0, -0.5, 0.5, 1.0, 1.01, 3.0]))
    g = funcgrad.vmap(funcgrad.grad(t.cdf))(y, dev(np.full(7, 5.0)))
    assert_allclose(g, t.pdf(y, 5.0), rtol=1e-12)


def test_log_cdfs_near_one_keep_their_digits():
    # SciPy 1.17: log(1 - tiny) is -tiny, not the 0 that log(cdf) rounds to
    from funcgrad.scipy.stats import chi2, expon, gamma, gumbel_l, gumbel_r

    for got, want in [
        (expon.logcdf(dev(np.array(50.0))), -1.9287498479639178e-22),
        (gumbel_r.logsf(dev(np.array(-5.0))), -3.5073891964646352e-65),
        (gumbel_l.logcdf(dev(np.array(5.0))), -3.5073891964646352e-65),
        (gamma.logcdf(dev(np.array(60.0)), 2.5), -3.1385797727553017e-24),
        (gamma.logsf(dev(np.array(1e-10)), 2.5), -3.0090111120397526e-26),
        (funcgrad.jit(chi2.logcdf)(dev(np.array(200.0)), 3.0), -4.218541107192018e-43),
    ]:
        assert_allclose(got, want, rtol=1e-9)
    # d/dx expon.logcdf(x) = 1 / (e^x - 1)
    assert_allclose(funcgrad.grad(expon.logcdf)(1.0), 1.0 / (np.e - 1.0))
