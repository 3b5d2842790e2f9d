"""The Poisson distribution, as ``scipy.stats.poisson`` (``mu``, ``loc``).

``cdf``/``sf`` are differentiable in ``mu`` (their derivative in ``k`` is zero); ``ppf``/``isf``
search the integers (SciPy's values, no derivative).

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
from funcgrad.scipy.stats._util import (
    discrete_quantile,
    is_integer,
    log_prob,
    nan_at,
    promote,
)

__all__ = ["logpmf", "pmf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf", "entropy"]


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


def sf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """``P(K > k) = gammainc(floor(k - loc) + 1, mu)``, accurate in the right tail; 1 below
    the support.

    Example:
        >>> from funcgrad.scipy.stats import poisson
        >>> print(f"{float(poisson.sf(20, 2.0)):.6e}")
        6.108072e-15
    """
    k, mu, loc = promote("poisson.sf", k, mu, loc)
    k = stop_gradient(fnp.floor(k - loc))
    inside = k >= 0
    a = stop_gradient(fnp.where(inside, k, 0.0) + 1.0)
    out = _sp._gammainc_const_a(a, mu)
    out = nan_at(fnp.where(inside, out, 1.0), k)
    return fnp.where(mu >= 0, out, numpy.nan)


def logcdf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """Log of the CDF (``log1p(-sf)`` where the CDF is near 1).

    Example:
        >>> from funcgrad.scipy.stats import poisson
        >>> round(float(poisson.logcdf(2, 2.0)), 12)
        -0.390562087566
    """
    return log_prob(cdf(k, mu, loc), sf(k, mu, loc))


def logsf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """Log of the survival function.

    Example:
        >>> from funcgrad.scipy.stats import poisson
        >>> round(float(poisson.logsf(20, 2.0)), 6)
        -32.729165
    """
    return log_prob(sf(k, mu, loc), cdf(k, mu, loc))


def _quantile(name: str, q: Any, mu: Any, loc: Any, upper: bool) -> Any:
    q, mu, loc = promote(name, q, mu, loc)
    mu_s = fnp.where(mu >= 0, mu, 1.0)
    z = _sp.ndtri(fnp.where((q > 0) & (q < 1), q, 0.5))
    z = -z if upper else z
    # Cornish-Fisher: mean + sd z + skewness (z^2 - 1) / 6 (skewness 1 / sqrt(mu)).
    guess = mu_s + fnp.sqrt(mu_s) * z + (z * z - 1.0) / 6.0

    def holds(k: Any) -> Any:
        return (sf(k, mu_s) <= q) if upper else (cdf(k, mu_s) >= q)

    k = discrete_quantile(holds, q, guess, 0.0, numpy.inf, upper)
    return fnp.where(mu >= 0, k + loc, numpy.nan)


def ppf(q: Any, mu: Any, loc: Any = 0) -> Any:
    """Quantile function: the smallest ``k`` with ``cdf(k) >= q`` (``loc - 1`` at ``q = 0``,
    ``inf`` at 1, nan outside ``[0, 1]``).

    Example:
        >>> from funcgrad.scipy.stats import poisson
        >>> float(poisson.ppf(0.3, 3.0))
        2.0
    """
    return _quantile("poisson.ppf", q, mu, loc, upper=False)


def isf(q: Any, mu: Any, loc: Any = 0) -> Any:
    """Inverse survival function: the smallest ``k`` with ``sf(k) <= q``, from the upper tail
    itself (``isf(1e-20, 3)`` is 30; SciPy's gives nan there).

    Example:
        >>> from funcgrad.scipy.stats import poisson
        >>> float(poisson.isf(0.3, 3.0)), float(poisson.isf(1e-20, 3.0))
        (4.0, 30.0)
    """
    return _quantile("poisson.isf", q, mu, loc, upper=True)


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
