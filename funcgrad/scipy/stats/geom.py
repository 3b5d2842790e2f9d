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
from funcgrad.scipy.stats._util import is_integer, nan_at, promote

__all__ = ["logpmf", "pmf", "cdf", "sf", "logcdf", "logsf"]


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
