"""The Poisson distribution, as ``scipy.stats.poisson`` (``mu``, ``loc``).

``cdf`` is differentiable in ``mu`` (its derivative in ``k`` is zero).

Example:
    >>> from funcgrad.scipy.stats import poisson
    >>> round(float(poisson.pmf(2, 2.0)), 12)
    0.270670566473
"""

from __future__ import annotations

import math
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.ops.elementwise import stop_gradient
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy import special as _sp
from funcgrad.scipy.stats._util import is_integer, nan_at, promote

__all__ = ["logpmf", "pmf", "cdf", "entropy"]


def logpmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """``k log(mu) - mu - gammaln(k + 1)`` for integer ``k - loc >= 0`` (``-inf`` elsewhere;
    nan for ``mu < 0``).

    Example:
        >>> from funcgrad.scipy.stats import poisson
        >>> round(float(poisson.logpmf(3, 1.5)), 12)
        -2.075364144904
    """
    k, mu, loc = promote("poisson.logpmf", k, mu, loc)
    k = k_raw = k - loc
    inside = is_integer(k) & (k >= 0)
    k = fnp.where(inside, k, 0.0)
    out = _sp.xlogy(k, mu) - mu - _sp.gammaln(k + 1.0)
    out = nan_at(fnp.where(inside, out, -numpy.inf), k_raw)
    return fnp.where(mu >= 0, out, numpy.nan)


def pmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """Probability mass function.

    Example:
        >>> from funcgrad.scipy.stats import poisson
        >>> round(float(poisson.pmf(0, 1.0)), 12)
        0.367879441171
    """
    return fnp.exp(logpmf(k, mu, loc))


def cdf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """``gammaincc(floor(k - loc) + 1, mu)`` for ``k - loc >= 0``, 0 below.

    Example:
        >>> from funcgrad.scipy.stats import poisson
        >>> round(float(poisson.cdf(2, 2.0)), 12)
        0.676676416183
    """
    k, mu, loc = promote("poisson.cdf", k, mu, loc)
    k = stop_gradient(fnp.floor(k - loc))  # piecewise constant in k
    inside = k >= 0
    out = _sp._gammaincc_const_a(fnp.where(inside, k, 0.0) + 1.0, mu)
    out = nan_at(fnp.where(inside, out, 0.0), k)
    return fnp.where(mu >= 0, out, numpy.nan)


_ENTROPY_TERMS = 250  # k < 250 holds all but ~1e-30 of the mass for mu < 100


def entropy(mu: Any, loc: Any = 0) -> Any:
    """Shannon entropy ``-sum_k pmf(k) log pmf(k)`` (``loc`` does not change it): the sum
    itself for ``mu < 100``, the asymptotic series ``log(2 pi e mu) / 2 - 1 / (12 mu) -
    1 / (24 mu**2) - 19 / (360 mu**3)`` above (relative error below 1e-9). 0 at ``mu = 0``,
    nan for ``mu < 0``.

    Example:
        >>> from funcgrad.scipy.stats import poisson
        >>> round(float(poisson.entropy(5.0)), 12)
        2.204395243428
    """
    mu, loc = promote("poisson.entropy", mu, loc)
    mu = fnp.broadcast_arrays(mu, loc)[0]
    small = mu < 100
    mu_s = fnp.where(small & (mu > 0), mu, 1.0)
    k = fnp.arange(_ENTROPY_TERMS, dtype=mu.dtype).reshape((-1,) + (1,) * mu.ndim)
    log_p = _sp.xlogy(k, mu_s) - mu_s - _sp.gammaln(k + 1.0)
    summed = -fnp.sum(fnp.exp(log_p) * log_p, axis=0)
    mu_l = fnp.where(small, 100.0, mu)
    inv = 1.0 / mu_l
    series = (0.5 * _q.log(2.0 * math.pi * math.e * mu_l)
              - inv * (1.0 / 12.0 + inv * (1.0 / 24.0 + inv * (19.0 / 360.0))))
    out = fnp.where(small, summed, series)
    out = fnp.where(mu == 0, 0.0, out)
    return fnp.where(mu >= 0, out, numpy.nan)
