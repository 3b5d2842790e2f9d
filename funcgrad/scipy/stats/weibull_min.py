"""The Weibull (minimum) distribution, as ``scipy.stats.weibull_min`` (shape ``c``, ``loc``,
``scale``): ``sf(y) = exp(-y**c)``.

Every method is differentiable in every argument; ``ppf``/``isf`` solve the tail they are
given (tiny probabilities keep their digits). Outside the support the log density is
``-inf``; a nonpositive scale or shape gives nan (SciPy's).

Example:
    >>> from funcgrad.scipy.stats import weibull_min
    >>> round(float(weibull_min.pdf(1.5, 1.5)), 12)
    0.292608528089
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy import special as _sp
from funcgrad.scipy.stats._util import (
    half_line_args,
    log1mexp,
    nan_at,
    prob_ok,
    promote,
    scale_ok,
)

__all__ = ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"]

def _ok(out: Any, c: Any, scale: Any) -> Any:
    return scale_ok(fnp.where(c > 0, out, numpy.nan), scale)


def _args(name: str, x: Any, c: Any, loc: Any = 0, scale: Any = 1) -> tuple[Any, ...]:
    y, y_in, inside, scale, c = half_line_args(name, x, loc, scale, c)
    return y, y_in, inside, fnp.where(c > 0, c, 1.0), c, scale


def logpdf(x: Any, c: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density (``-inf`` outside the support).

    Example:
        >>> from funcgrad.scipy.stats import weibull_min
        >>> round(float(weibull_min.logpdf(1.5, 1.5)), 12)
        -1.228919644925
    """
    y, y_in, inside, c_s, c_raw, scale = _args("weibull_min.logpdf", x, c, loc, scale)
    c = c_s
    out = _q.log(c) + _sp.xlogy(c - 1.0, y_in) - y_in ** c - _q.log(scale)
    out = fnp.where(inside & fnp.isfinite(y), out, -numpy.inf)
    return _ok(nan_at(out, y), c_raw, scale)


def pdf(x: Any, c: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density.

    Example:
        >>> from funcgrad.scipy.stats import weibull_min
        >>> round(float(weibull_min.pdf(1.5, 1.5)), 12)
        0.292608528089
    """
    return fnp.exp(logpdf(x, c, loc, scale))


def _tails(name: str, x: Any, c: Any, loc: Any = 0, scale: Any = 1) -> tuple[Any, ...]:
    """(cdf, sf, log cdf, log sf) at every point, each without cancellation."""
    y, y_in, inside, c_s, c_raw, scale = _args(name, x, c, loc, scale)
    c = c_s
    yc = y_in ** c
    cdf_ = -fnp.expm1(-yc)
    sf_ = fnp.exp(-yc)
    lcdf = log1mexp(yc)
    lsf = -yc
    below = fnp.logical_not(inside)
    top = y == numpy.inf
    cdf_ = fnp.where(below, 0.0, fnp.where(top, 1.0, cdf_))
    sf_ = fnp.where(below, 1.0, fnp.where(top, 0.0, sf_))
    lcdf = fnp.where(below, -numpy.inf, fnp.where(top, 0.0, lcdf))
    lsf = fnp.where(below, 0.0, fnp.where(top, -numpy.inf, lsf))
    return tuple(_ok(nan_at(v, y), c_raw, scale) for v in (cdf_, sf_, lcdf, lsf))


def cdf(x: Any, c: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Cumulative distribution function.

    Example:
        >>> from funcgrad.scipy.stats import weibull_min
        >>> round(float(weibull_min.cdf(1.5, 1.5)), 12)
        0.84072409151
    """
    return _tails("weibull_min.cdf", x, c, loc, scale)[0]


def sf(x: Any, c: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Survival function, accurate in the right tail.

    Example:
        >>> from funcgrad.scipy.stats import weibull_min
        >>> round(float(weibull_min.sf(1.5, 1.5)), 12)
        0.15927590849
    """
    return _tails("weibull_min.sf", x, c, loc, scale)[1]


def logcdf(x: Any, c: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the CDF.

    Example:
        >>> from funcgrad.scipy.stats import weibull_min
        >>> round(float(weibull_min.logcdf(1.5, 1.5)), 12)
        -0.173491744763
    """
    return _tails("weibull_min.logcdf", x, c, loc, scale)[2]


def logsf(x: Any, c: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the survival function.

    Example:
        >>> from funcgrad.scipy.stats import weibull_min
        >>> round(float(weibull_min.logsf(1.5, 1.5)), 12)
        -1.837117307087
    """
    return _tails("weibull_min.logsf", x, c, loc, scale)[3]


def _quantile(name: str, q: Any, c: Any, loc: Any = 0, scale: Any = 1, *, upper: bool) -> Any:
    q, c, loc, scale = promote(name, q, c, loc, scale)
    c_s = fnp.where(c > 0, c, 1.0)
    c_raw, c = c, c_s
    p = fnp.where((q >= 0) & (q <= 1), q, 0.5)
    if upper:
        y = (-_q.log(p)) ** (1.0 / c)
    else:
        y = (-_q.log1p(-p)) ** (1.0 / c)
    return prob_ok(_ok(loc + scale * y, c_raw, scale), q)


def ppf(q: Any, c: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Quantile function (inverse of :func:`cdf`; nan outside ``[0, 1]``).

    Example:
        >>> from funcgrad.scipy.stats import weibull_min
        >>> round(float(weibull_min.ppf(0.3, 1.5)), 12)
        0.502938714916
    """
    return _quantile("weibull_min.ppf", q, c, loc, scale, upper=False)


def isf(q: Any, c: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function (tiny ``q`` keeps its digits).

    Example:
        >>> from funcgrad.scipy.stats import weibull_min
        >>> round(float(weibull_min.isf(0.3, 1.5)), 12)
        1.131734229446
    """
    return _quantile("weibull_min.isf", q, c, loc, scale, upper=True)
