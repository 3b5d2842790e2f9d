"""The right-skewed Gumbel (extreme value type I) distribution, as ``scipy.stats.gumbel_r``:
CDF ``exp(-exp(-z))``, ``z = (x - loc) / scale``.

Example:
    >>> from funcgrad.scipy.stats import gumbel_r
    >>> round(float(gumbel_r.cdf(0.0)), 12)
    0.367879441171
"""

from __future__ import annotations

from typing import Any

import funcgrad.numpy as fnp
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy.stats._util import log1mexp, promote, scale_ok, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def _z(name: str, x: Any, loc: Any, scale: Any) -> tuple[Any, Any]:
    x, loc, scale = promote(name, x, loc, scale)
    return standardize(x, loc, scale), scale


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-(z + exp(-z)) - log(scale)``.

    Example:
        >>> from funcgrad.scipy.stats import gumbel_r
        >>> float(gumbel_r.logpdf(0.0))
        -1.0
    """
    z, scale = _z("gumbel_r.logpdf", x, loc, scale)
    return scale_ok(-(z + fnp.exp(-z)) - _q.log(scale), scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density.

    Example:
        >>> from funcgrad.scipy.stats import gumbel_r
        >>> round(float(gumbel_r.pdf(0.0)), 12)
        0.367879441171
    """
    return fnp.exp(logpdf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-exp(-z)``.

    Example:
        >>> from funcgrad.scipy.stats import gumbel_r
        >>> float(gumbel_r.logcdf(0.0))
        -1.0
    """
    z, scale = _z("gumbel_r.logcdf", x, loc, scale)
    return scale_ok(-fnp.exp(-z), scale)


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``exp(-exp(-z))``.

    Example:
        >>> from funcgrad.scipy.stats import gumbel_r
        >>> round(float(gumbel_r.cdf(1.0)), 12)
        0.692200627555
    """
    return fnp.exp(logcdf(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``1 - exp(-exp(-z))``, accurate in the right tail.

    Example:
        >>> from funcgrad.scipy.stats import gumbel_r
        >>> round(float(gumbel_r.sf(1.0)), 12)
        0.307799372445
    """
    z, scale = _z("gumbel_r.sf", x, loc, scale)
    return scale_ok(-fnp.expm1(-fnp.exp(-z)), scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the survival function.

    Example:
        >>> from funcgrad.scipy.stats import gumbel_r
        >>> round(float(gumbel_r.logsf(1.0)), 12)
        -1.178307096421
    """
    z, scale = _z("gumbel_r.logsf", x, loc, scale)
    return scale_ok(log1mexp(fnp.exp(-z)), scale)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Quantile function ``loc - scale log(-log(q))`` (nan outside ``[0, 1]``).

    Example:
        >>> from funcgrad.scipy.stats import gumbel_r
        >>> round(float(gumbel_r.ppf(0.5)), 12)
        0.366512920582
    """
    q, loc, scale = promote("gumbel_r.ppf", q, loc, scale)
    inside = (q >= 0) & (q <= 1)
    y = -_q.log(-_q.log(fnp.where(inside, q, 0.5)))
    return scale_ok(fnp.where(inside, loc + scale * y, fnp.nan), scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function ``loc - scale log(-log1p(-q))`` (tiny ``q`` keeps its
    digits; nan outside ``[0, 1]``).

    Example:
        >>> from funcgrad.scipy.stats import gumbel_r
        >>> round(float(gumbel_r.isf(1e-300)), 6)
        690.775528
    """
    q, loc, scale = promote("gumbel_r.isf", q, loc, scale)
    inside = (q >= 0) & (q <= 1)
    y = -_q.log(-_q.log1p(-fnp.where(inside, q, 0.5)))
    return scale_ok(fnp.where(inside, loc + scale * y, fnp.nan), scale)
