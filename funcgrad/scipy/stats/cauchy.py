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
    return scale_ok(-LOG_PI - fnp.log(scale) - fnp.log1p(y * y), scale)


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
    return fnp.log(cdf(x, loc, scale))


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
    return fnp.log(sf(x, loc, scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Quantile function ``loc + scale * tan(pi (q - 1/2))``.

    Example:
        >>> from funcgrad.scipy.stats import cauchy
        >>> round(float(cauchy.ppf(0.75)), 12)
        1.0
    """
    q, loc, scale = promote("cauchy.ppf", q, loc, scale)
    return scale_ok(loc + scale * fnp.tan(math.pi * (q - 0.5)), scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function.

    Example:
        >>> from funcgrad.scipy.stats import cauchy
        >>> round(float(cauchy.isf(0.25)), 12)
        1.0
    """
    q, loc, scale = promote("cauchy.isf", q, loc, scale)
    return scale_ok(loc - scale * fnp.tan(math.pi * (q - 0.5)), scale)
