"""The Rayleigh distribution, as ``scipy.stats.rayleigh`` (``loc``, ``scale``):
``sf(y) = exp(-y**2 / 2)``.

Every method is differentiable in every argument; ``ppf``/``isf`` solve the tail they are
given (tiny probabilities keep their digits). Outside the support the log density is
``-inf``; a nonpositive scale gives nan (SciPy's).

Example:
    >>> from funcgrad.scipy.stats import rayleigh
    >>> round(float(rayleigh.pdf(1.5)), 12)
    0.486978701038
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy.stats._util import (
    half_line_args,
    log1mexp,
    nan_at,
    prob_ok,
    promote,
    scale_ok,
)

__all__ = ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"]



def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density (``-inf`` outside the support).

    Example:
        >>> from funcgrad.scipy.stats import rayleigh
        >>> round(float(rayleigh.logpdf(1.5)), 12)
        -0.719534891892
    """
    y, y_in, inside, scale = half_line_args("rayleigh.logpdf", x, loc, scale)
    out = _q.log(y_in) - 0.5 * y_in * y_in - _q.log(scale)
    out = fnp.where(inside & fnp.isfinite(y), out, -numpy.inf)
    return scale_ok(nan_at(out, y), scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density.

    Example:
        >>> from funcgrad.scipy.stats import rayleigh
        >>> round(float(rayleigh.pdf(1.5)), 12)
        0.486978701038
    """
    return fnp.exp(logpdf(x, loc, scale))


def _tails(name: str, x: Any, loc: Any = 0, scale: Any = 1) -> tuple[Any, ...]:
    """(cdf, sf, log cdf, log sf) at every point, each without cancellation."""
    y, y_in, inside, scale = half_line_args(name, x, loc, scale)
    h = 0.5 * y_in * y_in
    cdf_ = -fnp.expm1(-h)
    sf_ = fnp.exp(-h)
    lcdf = log1mexp(h)
    lsf = -h
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
        >>> from funcgrad.scipy.stats import rayleigh
        >>> round(float(rayleigh.cdf(1.5)), 12)
        0.675347532642
    """
    return _tails("rayleigh.cdf", x, loc, scale)[0]


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Survival function, accurate in the right tail.

    Example:
        >>> from funcgrad.scipy.stats import rayleigh
        >>> round(float(rayleigh.sf(1.5)), 12)
        0.324652467358
    """
    return _tails("rayleigh.sf", x, loc, scale)[1]


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the CDF.

    Example:
        >>> from funcgrad.scipy.stats import rayleigh
        >>> round(float(rayleigh.logcdf(1.5)), 12)
        -0.392527857433
    """
    return _tails("rayleigh.logcdf", x, loc, scale)[2]


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the survival function.

    Example:
        >>> from funcgrad.scipy.stats import rayleigh
        >>> round(float(rayleigh.logsf(1.5)), 12)
        -1.125
    """
    return _tails("rayleigh.logsf", x, loc, scale)[3]


def _quantile(name: str, q: Any, loc: Any = 0, scale: Any = 1, *, upper: bool) -> Any:
    q, loc, scale = promote(name, q, loc, scale)

    p = fnp.where((q >= 0) & (q <= 1), q, 0.5)
    if upper:
        y = fnp.sqrt(-2.0 * _q.log(p))
    else:
        y = fnp.sqrt(-2.0 * _q.log1p(-p))
    return prob_ok(scale_ok(loc + scale * y, scale), q)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Quantile function (inverse of :func:`cdf`; nan outside ``[0, 1]``).

    Example:
        >>> from funcgrad.scipy.stats import rayleigh
        >>> round(float(rayleigh.ppf(0.3)), 12)
        0.844600430901
    """
    return _quantile("rayleigh.ppf", q, loc, scale, upper=False)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function (tiny ``q`` keeps its digits).

    Example:
        >>> from funcgrad.scipy.stats import rayleigh
        >>> round(float(rayleigh.isf(0.3)), 12)
        1.551755653656
    """
    return _quantile("rayleigh.isf", q, loc, scale, upper=True)
