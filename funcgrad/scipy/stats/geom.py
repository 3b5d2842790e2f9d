"""The geometric distribution, as ``scipy.stats.geom`` (``p``, ``loc``): the number of trials
up to and including the first success, support ``k = 1, 2, ...``.

Example:
    >>> from funcgrad.scipy.stats import geom
    >>> round(float(geom.pmf(2, 0.25)), 12)
    0.1875
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.ops.elementwise import stop_gradient
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy import special as _sp
from funcgrad.scipy.stats._util import discrete_quantile, is_integer, nan_at, promote

__all__ = ["logpmf", "pmf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"]


def _p_ok(out: Any, p: Any) -> Any:
    return fnp.where((p > 0) & (p <= 1), out, numpy.nan)


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """``(k - 1) log(1 - p) + log(p)`` for integer ``k - loc >= 1`` (``-inf`` elsewhere; nan
    unless ``0 < p <= 1``).

    Example:
        >>> from funcgrad.scipy.stats import geom
        >>> round(float(geom.logpmf(3, 0.5)), 12)
        -2.07944154168
    """
    k, p, loc = promote("geom.logpmf", k, p, loc)
    k = k_raw = k - loc
    inside = is_integer(k) & (k >= 1)
    k = fnp.where(inside, k, 1.0)
    out = _sp.xlog1py(k - 1.0, -p) + _q.log(p)
    out = nan_at(fnp.where(inside, out, -numpy.inf), k_raw)
    return _p_ok(out, p)


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """Probability mass function.

    Example:
        >>> from funcgrad.scipy.stats import geom
        >>> float(geom.pmf(1, 0.3))
        0.3
    """
    return fnp.exp(logpmf(k, p, loc))


def _log_sf_args(name: str, k: Any, p: Any, loc: Any) -> tuple[Any, Any, Any]:
    """``floor(k - loc)`` (piecewise constant: no derivative in ``k``), ``log sf`` =
    ``floor(k - loc) log(1 - p)`` for ``k - loc >= 1`` (0 below), and ``p``."""
    k, p, loc = promote(name, k, p, loc)
    k = stop_gradient(fnp.floor(k - loc))
    inside = k >= 1
    log_sf = fnp.where(inside, _sp.xlog1py(fnp.where(inside, k, 0.0), -p), 0.0)
    return k, log_sf, p


def cdf(k: Any, p: Any, loc: Any = 0) -> Any:
    """``1 - (1 - p)**floor(k - loc)``, accurate for small ``p``.

    Example:
        >>> from funcgrad.scipy.stats import geom
        >>> float(geom.cdf(2, 0.5))
        0.75
    """
    k, log_sf, p = _log_sf_args("geom.cdf", k, p, loc)
    return _p_ok(nan_at(-fnp.expm1(log_sf), k), p)


def sf(k: Any, p: Any, loc: Any = 0) -> Any:
    """Survival function ``(1 - p)**floor(k - loc)``.

    Example:
        >>> from funcgrad.scipy.stats import geom
        >>> float(geom.sf(2, 0.5))
        0.25
    """
    k, log_sf, p = _log_sf_args("geom.sf", k, p, loc)
    return _p_ok(nan_at(fnp.exp(log_sf), k), p)


def logcdf(k: Any, p: Any, loc: Any = 0) -> Any:
    """Log of the CDF.

    Example:
        >>> from funcgrad.scipy.stats import geom
        >>> round(float(geom.logcdf(2, 0.5)), 12)
        -0.287682072452
    """
    k, log_sf, p = _log_sf_args("geom.logcdf", k, p, loc)
    safe = fnp.where(k >= 1, log_sf, -1.0)
    out = fnp.where(k >= 1, _q.log(-fnp.expm1(safe)), -numpy.inf)
    return _p_ok(nan_at(out, k), p)


def logsf(k: Any, p: Any, loc: Any = 0) -> Any:
    """Log of the survival function, ``floor(k - loc) log(1 - p)``.

    Example:
        >>> from funcgrad.scipy.stats import geom
        >>> round(float(geom.logsf(2, 0.5)), 12)
        -1.38629436112
    """
    k, log_sf, p = _log_sf_args("geom.logsf", k, p, loc)
    return _p_ok(nan_at(log_sf, k), p)


def _quantile(name: str, q: Any, p: Any, loc: Any, upper: bool) -> Any:
    q, p, loc = promote(name, q, p, loc)
    ok = (p > 0) & (p <= 1)
    p_s = fnp.where(ok, p, 0.5)
    q_s = fnp.where((q > 0) & (q < 1), q, 0.5)
    # sf(k) = (1 - p)^k: the quantile is within a step of log(tail) / log(1 - p).
    log_tail = _q.log(q_s) if upper else _q.log1p(-q_s)
    guess = fnp.where(p_s < 1, log_tail / _q.log1p(-fnp.where(p_s < 1, p_s, 0.5)) - 1.0, 1.0)

    def holds(k: Any) -> Any:
        return (sf(k, p_s) <= q) if upper else (cdf(k, p_s) >= q)

    k = discrete_quantile(holds, q, guess, 1.0, numpy.inf, upper)
    return _p_ok(k + loc, p)


def ppf(q: Any, p: Any, loc: Any = 0) -> Any:
    """Quantile function: the smallest ``k`` with ``cdf(k) >= q`` (``loc`` at ``q = 0``,
    ``inf`` at 1).

    Example:
        >>> from funcgrad.scipy.stats import geom
        >>> float(geom.ppf(0.3, 0.3))
        1.0
    """
    return _quantile("geom.ppf", q, p, loc, upper=False)


def isf(q: Any, p: Any, loc: Any = 0) -> Any:
    """Inverse survival function: the smallest ``k`` with ``sf(k) <= q``.

    Example:
        >>> from funcgrad.scipy.stats import geom
        >>> float(geom.isf(0.3, 0.3))
        4.0
    """
    return _quantile("geom.isf", q, p, loc, upper=True)
