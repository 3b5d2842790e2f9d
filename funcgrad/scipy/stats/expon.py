"""The exponential distribution, as ``scipy.stats.expon`` (support ``x >= loc``).

Example:
    >>> from funcgrad.scipy.stats import expon
    >>> float(expon.pdf(0.0))
    1.0
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy.stats._util import log1mexp, promote, scale_ok, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def _y(name: str, x: Any, loc: Any, scale: Any) -> tuple[Any, Any, Any]:
    x, loc, scale = promote(name, x, loc, scale)
    y = standardize(x, loc, scale)
    inside = ~(y < 0)  # nan stays in, so every formula gives nan there (as SciPy)
    return fnp.where(inside, y, 0.0), inside, scale


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density ``-(x - loc)/scale - log(scale)`` (``-inf`` below ``loc``).

    Example:
        >>> from funcgrad.scipy.stats import expon
        >>> float(expon.logpdf(2.0))
        -2.0
    """
    y, inside, scale = _y("expon.logpdf", x, loc, scale)
    return scale_ok(fnp.where(inside, -y - _q.log(scale), -numpy.inf), scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The exponential density.

    Example:
        >>> from funcgrad.scipy.stats import expon
        >>> round(float(expon.pdf(1.0)), 12)
        0.367879441171
    """
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``1 - exp(-y)`` (computed as ``-expm1(-y)``).

    Example:
        >>> from funcgrad.scipy.stats import expon
        >>> print(f"{float(expon.cdf(1e-10)):.6e}")
        1.000000e-10
    """
    y, inside, scale = _y("expon.cdf", x, loc, scale)
    return scale_ok(fnp.where(inside, -fnp.expm1(-y), 0.0), scale)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the CDF.

    Example:
        >>> from funcgrad.scipy.stats import expon
        >>> round(float(expon.logcdf(1.0)), 12)
        -0.458675145387
    """
    y, inside, scale = _y("expon.logcdf", x, loc, scale)
    return scale_ok(fnp.where(inside, log1mexp(fnp.where(inside, y, 1.0)), -numpy.inf), scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Survival function ``exp(-y)``.

    Example:
        >>> from funcgrad.scipy.stats import expon
        >>> round(float(expon.sf(1.0)), 12)
        0.367879441171
    """
    y, inside, scale = _y("expon.sf", x, loc, scale)
    return scale_ok(fnp.where(inside, fnp.exp(-y), 1.0), scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log survival function ``-y``.

    Example:
        >>> from funcgrad.scipy.stats import expon
        >>> float(expon.logsf(3.0))
        -3.0
    """
    y, inside, scale = _y("expon.logsf", x, loc, scale)
    return scale_ok(fnp.where(inside, -y, 0.0), scale)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Quantile function ``loc - scale * log1p(-q)``.

    Example:
        >>> from funcgrad.scipy.stats import expon
        >>> round(float(expon.ppf(0.5)), 12)
        0.69314718056
    """
    q, loc, scale = promote("expon.ppf", q, loc, scale)
    return scale_ok(fnp.where((q >= 0) & (q <= 1), loc - scale * _q.log1p(-q), numpy.nan), scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function ``loc - scale * log(q)``.

    Example:
        >>> from funcgrad.scipy.stats import expon
        >>> round(float(expon.isf(0.5)), 12)
        0.69314718056
    """
    q, loc, scale = promote("expon.isf", q, loc, scale)
    return scale_ok(fnp.where((q >= 0) & (q <= 1), loc - scale * _q.log(q), numpy.nan), scale)
