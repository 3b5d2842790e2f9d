"""The normal distribution, as ``scipy.stats.norm`` (functions of ``loc`` and ``scale``).

Example:
    >>> from funcgrad.scipy.stats import norm
    >>> round(float(norm.logpdf(1.0, loc=0.0, scale=2.0)), 12)
    -1.737085713765
"""

from __future__ import annotations

from typing import Any

import funcgrad.numpy as fnp
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy import special as _sp
from funcgrad.scipy.stats._util import HALF_LOG_2PI, promote, scale_ok, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the normal density ``N(loc, scale**2)`` at ``x``.

    Example:
        >>> from funcgrad.scipy.stats import norm
        >>> round(float(norm.logpdf(0.0)), 12)
        -0.918938533205
    """
    x, loc, scale = promote("norm.logpdf", x, loc, scale)
    y = standardize(x, loc, scale)
    return scale_ok(-0.5 * y * y - _q.log(scale) - HALF_LOG_2PI, scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The normal density.

    Example:
        >>> from funcgrad.scipy.stats import norm
        >>> round(float(norm.pdf(0.0)), 12)
        0.398942280401
    """
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Cumulative distribution function.

    Example:
        >>> from funcgrad.scipy.stats import norm
        >>> float(norm.cdf(3.0, loc=3.0))
        0.5
    """
    x, loc, scale = promote("norm.cdf", x, loc, scale)
    return scale_ok(_sp.ndtr(standardize(x, loc, scale)), scale)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the CDF, accurate far in the left tail.

    Example:
        >>> from funcgrad.scipy.stats import norm
        >>> round(float(norm.logcdf(-40.0)), 6)
        -804.608442
    """
    x, loc, scale = promote("norm.logcdf", x, loc, scale)
    return scale_ok(_sp.log_ndtr(standardize(x, loc, scale)), scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Survival function ``1 - cdf``, accurate in the right tail.

    Example:
        >>> from funcgrad.scipy.stats import norm
        >>> print(f"{float(norm.sf(10.0)):.6e}")
        7.619853e-24
    """
    x, loc, scale = promote("norm.sf", x, loc, scale)
    return scale_ok(_sp.ndtr(-standardize(x, loc, scale)), scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the survival function.

    Example:
        >>> from funcgrad.scipy.stats import norm
        >>> round(float(norm.logsf(40.0)), 6)
        -804.608442
    """
    x, loc, scale = promote("norm.logsf", x, loc, scale)
    return scale_ok(_sp.log_ndtr(-standardize(x, loc, scale)), scale)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Quantile function (inverse of :func:`cdf`).

    Example:
        >>> from funcgrad.scipy.stats import norm
        >>> round(float(norm.ppf(0.975)), 10)
        1.9599639845
    """
    q, loc, scale = promote("norm.ppf", q, loc, scale)
    return scale_ok(loc + scale * _sp.ndtri(q), scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function (inverse of :func:`sf`).

    Example:
        >>> from funcgrad.scipy.stats import norm
        >>> round(float(norm.isf(0.025)), 10)
        1.9599639845
    """
    q, loc, scale = promote("norm.isf", q, loc, scale)
    return scale_ok(loc - scale * _sp.ndtri(q), scale)
