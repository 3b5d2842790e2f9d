"""The Cauchy distribution, as ``scipy.stats.cauchy``.

Example:
    >>> from funcgrad.scipy.stats import cauchy
    >>> float(cauchy.cdf(0.0))
    0.5
"""

from __future__ import annotations

import math
from typing import Any

import funcgrad.numpy as fnp
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy.stats._util import LOG_PI, promote, scale_ok, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density ``-log(pi scale) - log1p(y**2)``.

    Example:
        >>> from funcgrad.scipy.stats import cauchy
        >>> round(float(cauchy.logpdf(0.0)), 12)
        -1.144729885849
    """
    x, loc, scale = promote("cauchy.logpdf", x, loc, scale)
    y = standardize(x, loc, scale)
    # Beyond |y| = 1e150, y**2 overflows (-inf where the log density is finite, e.g.
    # -1382.7 at 1e300, SciPy's): there log1p(y**2) = 2 log|y| to rounding.
    big = fnp.abs(y) > 1e150
    log_sq = fnp.where(big, 2.0 * _q.log(fnp.abs(fnp.where(big, y, 1.0))),
                       _q.log1p(fnp.square(fnp.where(big, 0.0, y))))
    return scale_ok(-LOG_PI - _q.log(scale) - log_sq, scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Cauchy density.

    Example:
        >>> from funcgrad.scipy.stats import cauchy
        >>> round(float(cauchy.pdf(1.0)), 12)
        0.159154943092
    """
    return fnp.exp(logpdf(x, loc, scale))


def _cdf(y: Any) -> Any:
    # atan2(1, -y) / pi is the CDF without the cancellation of 1/2 + atan(y)/pi for y << 0.
    return fnp.arctan2(fnp.ones_like(y), -y) / math.pi


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Cumulative distribution function, accurate in the left tail.

    Example:
        >>> from funcgrad.scipy.stats import cauchy
        >>> float(cauchy.cdf(1.0))
        0.75
    """
    x, loc, scale = promote("cauchy.cdf", x, loc, scale)
    return scale_ok(_cdf(standardize(x, loc, scale)), scale)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the CDF.

    Example:
        >>> from funcgrad.scipy.stats import cauchy
        >>> round(float(cauchy.logcdf(1.0)), 12)
        -0.287682072452
    """
    return _q.log(cdf(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Survival function, accurate in the right tail.

    Example:
        >>> from funcgrad.scipy.stats import cauchy
        >>> float(cauchy.sf(1.0))
        0.25
    """
    x, loc, scale = promote("cauchy.sf", x, loc, scale)
    return scale_ok(_cdf(-standardize(x, loc, scale)), scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the survival function.

    Example:
        >>> from funcgrad.scipy.stats import cauchy
        >>> round(float(cauchy.logsf(1.0)), 12)
        -1.38629436112
    """
    return _q.log(sf(x, loc, scale))


def _quantile(q: Any) -> Any:
    """The standard quantile ``tan(pi (q - 1/2))``, nan outside ``[0, 1]``. In the tails it is
    ``-1/tan(pi q)`` and ``1/tan(pi (1 - q))``: ``q - 1/2`` would round away the digits of a
    small ``q`` (and ``tan(-pi/2)`` is finite in floating point: ``q = 0`` must give -inf)."""
    lo, hi = q < 0.25, q > 0.75
    mid = fnp.tan(math.pi * (q - 0.5))
    # Stand-ins where a branch is not taken keep inf out of its derivative.
    # (q = 0 and 1 divide by tan(0) = 0: +-inf, without NumPy's warning)
    tail_lo = -_q.reciprocal(fnp.tan(math.pi * fnp.where(lo, q, 0.25)))
    tail_hi = _q.reciprocal(fnp.tan(math.pi * (1.0 - fnp.where(hi, q, 0.75))))
    z = fnp.where(lo, tail_lo, fnp.where(hi, tail_hi, mid))
    return fnp.where((q >= 0) & (q <= 1), z, math.nan)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Quantile function ``loc + scale * tan(pi (q - 1/2))``.

    Example:
        >>> from funcgrad.scipy.stats import cauchy
        >>> round(float(cauchy.ppf(0.75)), 12)
        1.0
    """
    q, loc, scale = promote("cauchy.ppf", q, loc, scale)
    return scale_ok(loc + scale * _quantile(q), scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function.

    Example:
        >>> from funcgrad.scipy.stats import cauchy
        >>> round(float(cauchy.isf(0.25)), 12)
        1.0
    """
    q, loc, scale = promote("cauchy.isf", q, loc, scale)
    return scale_ok(loc - scale * _quantile(q), scale)
