"""The uniform distribution on ``[loc, loc + scale]``, as ``scipy.stats.uniform``.

Example:
    >>> from funcgrad.scipy.stats import uniform
    >>> float(uniform.pdf(0.5, loc=0.0, scale=2.0))
    0.5
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy.stats._util import nan_at, promote, scale_ok, standardize

__all__ = ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-log(scale)`` on ``[loc, loc + scale]``, ``-inf`` outside.

    Example:
        >>> from funcgrad.scipy.stats import uniform
        >>> float(uniform.logpdf(2.0))
        -inf
    """
    x, loc, scale = promote("uniform.logpdf", x, loc, scale)
    y = standardize(x, loc, scale)
    inside = (y >= 0) & (y <= 1)
    return scale_ok(nan_at(fnp.where(inside, -_q.log(scale), -numpy.inf), y), scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The uniform density.

    Example:
        >>> from funcgrad.scipy.stats import uniform
        >>> float(uniform.pdf(0.5))
        1.0
    """
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``clip((x - loc) / scale, 0, 1)``.

    Example:
        >>> from funcgrad.scipy.stats import uniform
        >>> float(uniform.cdf(0.25))
        0.25
    """
    x, loc, scale = promote("uniform.cdf", x, loc, scale)
    return scale_ok(fnp.clip(standardize(x, loc, scale), 0.0, 1.0), scale)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``loc + q * scale`` for ``0 <= q <= 1``, nan outside.

    Example:
        >>> from funcgrad.scipy.stats import uniform
        >>> float(uniform.ppf(0.25, loc=1.0, scale=2.0))
        1.5
    """
    q, loc, scale = promote("uniform.ppf", q, loc, scale)
    out = fnp.where((q >= 0) & (q <= 1), loc + q * scale, numpy.nan)
    return scale_ok(out, scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``clip(1 - (x - loc) / scale, 0, 1)``.

    Example:
        >>> from funcgrad.scipy.stats import uniform
        >>> float(uniform.sf(0.25))
        0.75
    """
    x, loc, scale = promote("uniform.sf", x, loc, scale)
    return scale_ok(fnp.clip(1.0 - standardize(x, loc, scale), 0.0, 1.0), scale)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the CDF (``-inf`` below the support, without a warning).

    Example:
        >>> from funcgrad.scipy.stats import uniform
        >>> round(float(uniform.logcdf(0.5)), 12)
        -0.69314718056
    """
    return _q.log(cdf(x, loc, scale))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the survival function.

    Example:
        >>> from funcgrad.scipy.stats import uniform
        >>> round(float(uniform.logsf(0.5)), 12)
        -0.69314718056
    """
    return _q.log(sf(x, loc, scale))


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function ``loc + (1 - q) scale`` (nan outside ``[0, 1]``).

    Example:
        >>> from funcgrad.scipy.stats import uniform
        >>> float(uniform.isf(0.25, loc=1.0, scale=2.0))
        2.5
    """
    q, loc, scale = promote("uniform.isf", q, loc, scale)
    out = fnp.where((q >= 0) & (q <= 1), loc + (1.0 - q) * scale, numpy.nan)
    return scale_ok(out, scale)
