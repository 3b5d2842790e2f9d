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

__all__ = ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"]


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


def _log_tails(name: str, x: Any, loc: Any, scale: Any, sign: float) -> Any:
    """``log cdf`` (``sign = 1``) or ``log sf`` (``sign = -1``): ``y - log 2`` on the near
    side, ``log1p(-exp(-|y|) / 2)`` on the far one (no rounding of the CDF to 1)."""
    x, loc, scale = promote(name, x, loc, scale)
    y = sign * standardize(x, loc, scale)
    neg = y < 0
    near = fnp.where(neg, y, 0.0) - math.log(2.0)
    far = fnp.log1p(-0.5 * fnp.exp(-fnp.where(neg, 0.0, y)))
    return scale_ok(fnp.where(neg, near, far), scale)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the CDF.

    Example:
        >>> from funcgrad.scipy.stats import laplace
        >>> float(laplace.logcdf(-100.0))   # y - log 2: no underflow
        -100.69314718055995
    """
    return _log_tails("laplace.logcdf", x, loc, scale, 1.0)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the survival function.

    Example:
        >>> from funcgrad.scipy.stats import laplace
        >>> round(float(laplace.logsf(0.0)), 12)
        -0.69314718056
    """
    return _log_tails("laplace.logsf", x, loc, scale, -1.0)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function (the mirror image of :func:`ppf`: tiny ``q`` keeps its
    digits).

    Example:
        >>> from funcgrad.scipy.stats import laplace
        >>> round(float(laplace.isf(1e-300)), 6)
        690.082381
    """
    q, loc, scale = promote("laplace.isf", q, loc, scale)
    low = q <= 0.5
    q_lo = fnp.where(low, q, 0.25)
    q_hi = fnp.where(low, 0.75, q)
    y = fnp.where(low, -_q.log(2.0 * q_lo), _q.log(2.0 - 2.0 * q_hi))
    return scale_ok(loc + scale * y, scale)
