"""The half-normal distribution, as ``scipy.stats.halfnorm`` (``loc``, ``scale``): ``|Z|`` for
a standard normal ``Z``.

Every method is differentiable in every argument; ``ppf``/``isf`` solve the tail they are
given (tiny probabilities keep their digits). Outside the support the log density is
``-inf``; a nonpositive scale gives nan (SciPy's).

Example:
    >>> from funcgrad.scipy.stats import halfnorm
    >>> round(float(halfnorm.pdf(1.5)), 12)
    0.259035191332
"""

from __future__ import annotations

import math
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy import special as _sp
from funcgrad.scipy.stats._util import (
    half_line_args,
    log_prob,
    nan_at,
    prob_ok,
    promote,
    scale_ok,
)

__all__ = ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"]



def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density (``-inf`` outside the support).

    Example:
        >>> from funcgrad.scipy.stats import halfnorm
        >>> round(float(halfnorm.logpdf(1.5)), 12)
        -1.350791352645
    """
    y, y_in, inside, scale = half_line_args("halfnorm.logpdf", x, loc, scale)
    out = 0.5 * math.log(2.0 / math.pi) - 0.5 * y_in * y_in - _q.log(scale)
    out = fnp.where(inside & fnp.isfinite(y), out, -numpy.inf)
    return scale_ok(nan_at(out, y), scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density.

    Example:
        >>> from funcgrad.scipy.stats import halfnorm
        >>> round(float(halfnorm.pdf(1.5)), 12)
        0.259035191332
    """
    return fnp.exp(logpdf(x, loc, scale))


def _tails(name: str, x: Any, loc: Any = 0, scale: Any = 1) -> tuple[Any, ...]:
    """(cdf, sf, log cdf, log sf) at every point, each without cancellation."""
    y, y_in, inside, scale = half_line_args(name, x, loc, scale)
    cdf_ = _sp.erf(y_in / math.sqrt(2.0))
    sf_ = _sp.erfc(y_in / math.sqrt(2.0))
    lcdf = log_prob(cdf_, sf_)
    # log1p(-cdf) near 0 (sf near 1), 2 Phi(-y) in logs in the tail (no underflow at y = 40).
    big = sf_ > 0.5
    lsf = fnp.where(big, _q.log1p(-fnp.where(big, cdf_, 0.0)),
                    math.log(2.0) + _sp.log_ndtr(-y_in))
    below = fnp.logical_not(inside)
    top = y == numpy.inf
    cdf_ = fnp.where(below, 0.0, fnp.where(top, 1.0, cdf_))
    sf_ = fnp.where(below, 1.0, fnp.where(top, 0.0, sf_))
    lcdf = fnp.where(below, -numpy.inf, fnp.where(top, 0.0, lcdf))
    lsf = fnp.where(below, 0.0, fnp.where(top, -numpy.inf, lsf))
    return tuple(scale_ok(nan_at(v, y), scale) for v in (cdf_, sf_, lcdf, lsf))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Cumulative distribution function.

    Example:
        >>> from funcgrad.scipy.stats import halfnorm
        >>> round(float(halfnorm.cdf(1.5)), 12)
        0.866385597462
    """
    return _tails("halfnorm.cdf", x, loc, scale)[0]


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Survival function, accurate in the right tail.

    Example:
        >>> from funcgrad.scipy.stats import halfnorm
        >>> round(float(halfnorm.sf(1.5)), 12)
        0.133614402538
    """
    return _tails("halfnorm.sf", x, loc, scale)[1]


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the CDF.

    Example:
        >>> from funcgrad.scipy.stats import halfnorm
        >>> round(float(halfnorm.logcdf(1.5)), 12)
        -0.143425206861
    """
    return _tails("halfnorm.logcdf", x, loc, scale)[2]


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the survival function.

    Example:
        >>> from funcgrad.scipy.stats import halfnorm
        >>> round(float(halfnorm.logsf(1.5)), 12)
        -2.012797220264
    """
    return _tails("halfnorm.logsf", x, loc, scale)[3]


def _quantile(name: str, q: Any, loc: Any = 0, scale: Any = 1, *, upper: bool) -> Any:
    q, loc, scale = promote(name, q, loc, scale)

    p = fnp.where((q >= 0) & (q <= 1), q, 0.5)
    if upper:
        y = math.sqrt(2.0) * _sp.erfcinv(p)
    else:
        y = math.sqrt(2.0) * _sp.erfinv(p)
    return prob_ok(scale_ok(loc + scale * y, scale), q)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Quantile function (inverse of :func:`cdf`; nan outside ``[0, 1]``).

    Example:
        >>> from funcgrad.scipy.stats import halfnorm
        >>> round(float(halfnorm.ppf(0.3)), 12)
        0.385320466408
    """
    return _quantile("halfnorm.ppf", q, loc, scale, upper=False)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function (tiny ``q`` keeps its digits).

    Example:
        >>> from funcgrad.scipy.stats import halfnorm
        >>> round(float(halfnorm.isf(0.3)), 12)
        1.036433389494
    """
    return _quantile("halfnorm.isf", q, loc, scale, upper=True)
