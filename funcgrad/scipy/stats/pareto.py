"""The Pareto distribution, as ``scipy.stats.pareto`` (shape ``b``, ``loc``, ``scale``):
density ``b / y**(b + 1)`` for ``y = (x - loc) / scale >= 1``.

Example:
    >>> from funcgrad.scipy.stats import pareto
    >>> float(pareto.pdf(2.0, 1.0))
    0.25
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy.stats._util import exp_overflow_quiet, nan_at, promote, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def _ok(out: Any, b: Any, scale: Any) -> Any:
    return fnp.where((b > 0) & (scale > 0), out, numpy.nan)


def _args(name: str, x: Any, b: Any, loc: Any, scale: Any) -> tuple[Any, ...]:
    """``y``, whether ``y >= 1``, ``log(y)`` there (0 elsewhere), ``b`` and ``scale``."""
    x, b, loc, scale = promote(name, x, b, loc, scale)
    y = standardize(x, loc, scale)
    inside = y >= 1
    return y, inside, _q.log(fnp.where(inside, y, 1.0)), b, scale


def logpdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log(b) - (b + 1) log(y) - log(scale)`` for ``y >= 1``, ``-inf`` below.

    Example:
        >>> from funcgrad.scipy.stats import pareto
        >>> round(float(pareto.logpdf(2.0, 3.0)), 12)
        -1.673976433572
    """
    y, inside, log_y, b, scale = _args("pareto.logpdf", x, b, loc, scale)
    out = _q.log(b) - (b + 1.0) * log_y - _q.log(scale)
    return _ok(nan_at(fnp.where(inside, out, -numpy.inf), y), b, scale)


def pdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Pareto density.

    Example:
        >>> from funcgrad.scipy.stats import pareto
        >>> float(pareto.pdf(1.0, 2.0))
        2.0
    """
    return fnp.exp(logpdf(x, b, loc, scale))


def cdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``1 - y**(-b)`` for ``y >= 1``, 0 below.

    Example:
        >>> from funcgrad.scipy.stats import pareto
        >>> float(pareto.cdf(2.0, 1.0))
        0.5
    """
    y, inside, log_y, b, scale = _args("pareto.cdf", x, b, loc, scale)
    return _ok(nan_at(fnp.where(inside, -fnp.expm1(-b * log_y), 0.0), y), b, scale)


def logcdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the CDF, ``log1p(-y**(-b))``.

    Example:
        >>> from funcgrad.scipy.stats import pareto
        >>> round(float(pareto.logcdf(2.0, 1.0)), 12)
        -0.69314718056
    """
    y, inside, log_y, b, scale = _args("pareto.logcdf", x, b, loc, scale)
    out = _q.log1p(-fnp.exp(-b * log_y))
    return _ok(nan_at(fnp.where(inside, out, -numpy.inf), y), b, scale)


def sf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Survival function ``y**(-b)`` for ``y >= 1``, 1 below.

    Example:
        >>> from funcgrad.scipy.stats import pareto
        >>> float(pareto.sf(4.0, 0.5))
        0.5
    """
    y, inside, log_y, b, scale = _args("pareto.sf", x, b, loc, scale)
    return _ok(nan_at(fnp.where(inside, fnp.exp(-b * log_y), 1.0), y), b, scale)


def logsf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the survival function, ``-b log(y)``.

    Example:
        >>> from funcgrad.scipy.stats import pareto
        >>> round(float(pareto.logsf(4.0, 0.5)), 12)
        -0.69314718056
    """
    y, inside, log_y, b, scale = _args("pareto.logsf", x, b, loc, scale)
    return _ok(nan_at(fnp.where(inside, -b * log_y, 0.0), y), b, scale)


def ppf(q: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Quantile function ``loc + scale (1 - q)**(-1 / b)`` (nan outside ``[0, 1]``).

    Example:
        >>> from funcgrad.scipy.stats import pareto
        >>> float(pareto.ppf(0.75, 2.0))
        2.0
    """
    q, b, loc, scale = promote("pareto.ppf", q, b, loc, scale)
    inside = (q >= 0) & (q <= 1)
    y = exp_overflow_quiet(-_q.log1p(-fnp.where(inside, q, 0.0)) / b)
    return _ok(fnp.where(inside, loc + scale * y, numpy.nan), b, scale)


def isf(q: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function ``loc + scale q**(-1 / b)`` (nan outside ``[0, 1]``).

    Example:
        >>> from funcgrad.scipy.stats import pareto
        >>> float(pareto.isf(0.25, 2.0))
        2.0
    """
    q, b, loc, scale = promote("pareto.isf", q, b, loc, scale)
    inside = (q >= 0) & (q <= 1)
    y = exp_overflow_quiet(-_q.log(fnp.where(inside, q, 1.0)) / b)
    return _ok(fnp.where(inside, loc + scale * y, numpy.nan), b, scale)
