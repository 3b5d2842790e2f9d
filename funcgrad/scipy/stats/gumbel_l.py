"""The left-skewed Gumbel distribution, as ``scipy.stats.gumbel_l`` (the mirror image of
``gumbel_r``): CDF ``1 - exp(-exp(z))``, ``z = (x - loc) / scale``.

Example:
    >>> from funcgrad.scipy.stats import gumbel_l
    >>> round(float(gumbel_l.cdf(0.0)), 12)
    0.632120558829
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
    """``z - exp(z) - log(scale)``.

    Example:
        >>> from funcgrad.scipy.stats import gumbel_l
        >>> float(gumbel_l.logpdf(0.0))
        -1.0
    """
    z, scale = _z("gumbel_l.logpdf", x, loc, scale)
    return scale_ok(z - fnp.exp(z) - _q.log(scale), scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density.

    Example:
        >>> from funcgrad.scipy.stats import gumbel_l
        >>> round(float(gumbel_l.pdf(0.0)), 12)
        0.367879441171
    """
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``1 - exp(-exp(z))``, accurate in the left tail.

    Example:
        >>> from funcgrad.scipy.stats import gumbel_l
        >>> round(float(gumbel_l.cdf(-1.0)), 12)
        0.307799372445
    """
    z, scale = _z("gumbel_l.cdf", x, loc, scale)
    return scale_ok(-fnp.expm1(-fnp.exp(z)), scale)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the CDF.

    Example:
        >>> from funcgrad.scipy.stats import gumbel_l
        >>> round(float(gumbel_l.logcdf(-1.0)), 12)
        -1.178307096421
    """
    z, scale = _z("gumbel_l.logcdf", x, loc, scale)
    return scale_ok(log1mexp(fnp.exp(z)), scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-exp(z)``.

    Example:
        >>> from funcgrad.scipy.stats import gumbel_l
        >>> float(gumbel_l.logsf(0.0))
        -1.0
    """
    z, scale = _z("gumbel_l.logsf", x, loc, scale)
    return scale_ok(-fnp.exp(z), scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``exp(-exp(z))``.

    Example:
        >>> from funcgrad.scipy.stats import gumbel_l
        >>> round(float(gumbel_l.sf(-1.0)), 12)
        0.692200627555
    """
    return fnp.exp(logsf(x, loc, scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Quantile function ``loc + scale log(-log(1 - q))`` (nan outside ``[0, 1]``).

    Example:
        >>> from funcgrad.scipy.stats import gumbel_l
        >>> round(float(gumbel_l.ppf(0.5)), 12)
        -0.366512920582
    """
    q, loc, scale = promote("gumbel_l.ppf", q, loc, scale)
    inside = (q >= 0) & (q <= 1)
    y = _q.log(-_q.log1p(-fnp.where(inside, q, 0.5)))
    return scale_ok(fnp.where(inside, loc + scale * y, fnp.nan), scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function ``loc + scale log(-log(q))`` (nan outside ``[0, 1]``).

    Example:
        >>> from funcgrad.scipy.stats import gumbel_l
        >>> round(float(gumbel_l.isf(0.5)), 12)
        -0.366512920582
    """
    q, loc, scale = promote("gumbel_l.isf", q, loc, scale)
    inside = (q >= 0) & (q <= 1)
    y = _q.log(-_q.log(fnp.where(inside, q, 0.5)))
    return scale_ok(fnp.where(inside, loc + scale * y, fnp.nan), scale)
