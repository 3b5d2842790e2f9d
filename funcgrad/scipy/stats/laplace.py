"""The Laplace distribution, as ``scipy.stats.laplace``.

Example:
    >>> from funcgrad.scipy.stats import laplace
    >>> round(float(laplace.pdf(0.0)), 12)
    0.5
"""

from __future__ import annotations

import math
from typing import Any

import funcgrad.numpy as fnp
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy.stats._util import promote, scale_ok, standardize

__all__ = ["logpdf", "pdf", "cdf", "sf", "ppf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density ``-|x - loc| / scale - log(2 scale)``.

    Example:
        >>> from funcgrad.scipy.stats import laplace
        >>> round(float(laplace.logpdf(1.0)), 12)
        -1.69314718056
    """
    x, loc, scale = promote("laplace.logpdf", x, loc, scale)
    y = standardize(x, loc, scale)
    return scale_ok(-fnp.abs(y) - _q.log(scale) - math.log(2.0), scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Laplace density.

    Example:
        >>> from funcgrad.scipy.stats import laplace
        >>> round(float(laplace.pdf(1.0)), 12)
        0.183939720586
    """
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Cumulative distribution function.

    Example:
        >>> from funcgrad.scipy.stats import laplace
        >>> float(laplace.cdf(0.0))
        0.5
    """
    x, loc, scale = promote("laplace.cdf", x, loc, scale)
    y = standardize(x, loc, scale)
    neg = y < 0
    e = 0.5 * fnp.exp(-fnp.abs(y))
    return scale_ok(fnp.where(neg, e, 1.0 - e), scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Survival function.

    Example:
        >>> from funcgrad.scipy.stats import laplace
        >>> round(float(laplace.sf(1.0)), 12)
        0.183939720586
    """
    x, loc, scale = promote("laplace.sf", x, loc, scale)
    y = standardize(x, loc, scale)
    e = 0.5 * fnp.exp(-fnp.abs(y))
    return scale_ok(fnp.where(y < 0, 1.0 - e, e), scale)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Quantile function.

    Example:
        >>> from funcgrad.scipy.stats import laplace
        >>> float(laplace.ppf(0.5))
        0.0
    """
    q, loc, scale = promote("laplace.ppf", q, loc, scale)
    low = q <= 0.5
    q_lo = fnp.where(low, q, 0.25)
    q_hi = fnp.where(low, 0.75, q)
    y = fnp.where(low, _q.log(2.0 * q_lo), -_q.log(2.0 - 2.0 * q_hi))
    return scale_ok(loc + scale * y, scale)
