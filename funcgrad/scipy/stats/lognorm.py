"""The log-normal distribution, as ``scipy.stats.lognorm`` (shape ``s``, ``loc``, ``scale``):
``log(y)`` is normal with standard deviation ``s`` (``scale = exp(mu)``).

Every method is differentiable in every argument; ``ppf``/``isf`` solve the tail they are
given (tiny probabilities keep their digits). Outside the support the log density is
``-inf``; a nonpositive scale or shape gives nan (SciPy's).

Example:
    >>> from funcgrad.scipy.stats import lognorm
    >>> round(float(lognorm.pdf(1.5, 0.5)), 12)
    0.382869771989
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy import special as _sp
from funcgrad.scipy.stats._util import (
    HALF_LOG_2PI,
    nan_at,
    prob_ok,
    promote,
    scale_ok,
    standardize,
)

__all__ = ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"]

def _ok(out: Any, s: Any, scale: Any) -> Any:
    return scale_ok(fnp.where(s > 0, out, numpy.nan), scale)


def _args(name: str, x: Any, s: Any, loc: Any = 0, scale: Any = 1) -> tuple[Any, ...]:
    x, s, loc, scale = promote(name, x, s, loc, scale)
    s_ = fnp.where(s > 0, s, 1.0)
    y = standardize(x, loc, scale)
    inside = y > 0
    y_in = fnp.where(inside & fnp.isfinite(y), y, 1.0)
    return y, y_in, inside, s_, s, scale


def logpdf(x: Any, s: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density (``-inf`` outside the support).

    Example:
        >>> from funcgrad.scipy.stats import lognorm
        >>> round(float(lognorm.logpdf(1.5, 0.5)), 12)
        -0.960060368539
    """
    y, y_in, inside, s_s, s_raw, scale = _args("lognorm.logpdf", x, s, loc, scale)
    s = s_s
    ly = _q.log(y_in)
    out = -ly - _q.log(s) - HALF_LOG_2PI - 0.5 * (ly / s) ** 2 - _q.log(scale)
    out = fnp.where(inside & fnp.isfinite(y), out, -numpy.inf)
    return _ok(nan_at(out, y), s_raw, scale)


def pdf(x: Any, s: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density.

    Example:
        >>> from funcgrad.scipy.stats import lognorm
        >>> round(float(lognorm.pdf(1.5, 0.5)), 12)
        0.382869771989
    """
    return fnp.exp(logpdf(x, s, loc, scale))


def _tails(name: str, x: Any, s: Any, loc: Any = 0, scale: Any = 1) -> tuple[Any, ...]:
    """(cdf, sf, log cdf, log sf) at every point, each without cancellation."""
    y, y_in, inside, s_s, s_raw, scale = _args(name, x, s, loc, scale)
    s = s_s
    w = _q.log(y_in) / s
    cdf_ = _sp.ndtr(w)
    sf_ = _sp.ndtr(-w)
    lcdf = _sp.log_ndtr(w)
    lsf = _sp.log_ndtr(-w)
    below = fnp.logical_not(inside)
    top = y == numpy.inf
    cdf_ = fnp.where(below, 0.0, fnp.where(top, 1.0, cdf_))
    sf_ = fnp.where(below, 1.0, fnp.where(top, 0.0, sf_))
    lcdf = fnp.where(below, -numpy.inf, fnp.where(top, 0.0, lcdf))
    lsf = fnp.where(below, 0.0, fnp.where(top, -numpy.inf, lsf))
    return tuple(_ok(nan_at(v, y), s_raw, scale) for v in (cdf_, sf_, lcdf, lsf))


def cdf(x: Any, s: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Cumulative distribution function.

    Example:
        >>> from funcgrad.scipy.stats import lognorm
        >>> round(float(lognorm.cdf(1.5, 0.5)), 12)
        0.791297126616
    """
    return _tails("lognorm.cdf", x, s, loc, scale)[0]


def sf(x: Any, s: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Survival function, accurate in the right tail.

    Example:
        >>> from funcgrad.scipy.stats import lognorm
        >>> round(float(lognorm.sf(1.5, 0.5)), 12)
        0.208702873384
    """
    return _tails("lognorm.sf", x, s, loc, scale)[1]


def logcdf(x: Any, s: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the CDF.

    Example:
        >>> from funcgrad.scipy.stats import lognorm
        >>> round(float(lognorm.logcdf(1.5, 0.5)), 12)
        -0.234081747594
    """
    return _tails("lognorm.logcdf", x, s, loc, scale)[2]


def logsf(x: Any, s: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the survival function.

    Example:
        >>> from funcgrad.scipy.stats import lognorm
        >>> round(float(lognorm.logsf(1.5, 0.5)), 12)
        -1.56684369698
    """
    return _tails("lognorm.logsf", x, s, loc, scale)[3]


def _quantile(name: str, q: Any, s: Any, loc: Any = 0, scale: Any = 1, *, upper: bool) -> Any:
    q, s, loc, scale = promote(name, q, s, loc, scale)
    s_s = fnp.where(s > 0, s, 1.0)
    s_raw, s = s, s_s
    p = fnp.where((q >= 0) & (q <= 1), q, 0.5)
    if upper:
        y = fnp.exp(-s * _sp.ndtri(p))
    else:
        y = fnp.exp(s * _sp.ndtri(p))
    return prob_ok(_ok(loc + scale * y, s_raw, scale), q)


def ppf(q: Any, s: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Quantile function (inverse of :func:`cdf`; nan outside ``[0, 1]``).

    Example:
        >>> from funcgrad.scipy.stats import lognorm
        >>> round(float(lognorm.ppf(0.3, 0.5)), 12)
        0.769356939664
    """
    return _quantile("lognorm.ppf", q, s, loc, scale, upper=False)


def isf(q: Any, s: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function (tiny ``q`` keeps its digits).

    Example:
        >>> from funcgrad.scipy.stats import lognorm
        >>> round(float(lognorm.isf(0.3, 0.5)), 12)
        1.299786806936
    """
    return _quantile("lognorm.isf", q, s, loc, scale, upper=True)
