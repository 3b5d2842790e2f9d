"""The gamma distribution, as ``scipy.stats.gamma`` (shape ``a``, ``loc``, ``scale``).

``ppf``/``isf`` invert the CDF/SF (:func:`funcgrad.scipy.special.gammaincinv`). The CDF
family is differentiable to any order in ``x``, ``loc``, ``scale`` and the shape ``a``
(the latter through the series / continued fraction of :func:`funcgrad.scipy.special.gammainc`).

Example:
    >>> from funcgrad.scipy.stats import gamma
    >>> round(float(gamma.pdf(1.0, 1.0)), 12)
    0.367879441171
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy import special as _sp
from funcgrad.scipy.stats._util import (
    log_prob,
    nan_at,
    prob_ok,
    promote,
    scale_ok,
    standardize,
)

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density ``(a-1) log y - y - gammaln(a) - log(scale)``, ``y = (x - loc)/scale >= 0``.

    Example:
        >>> from funcgrad.scipy.stats import gamma
        >>> round(float(gamma.logpdf(2.0, 3.0)), 12)
        -1.30685281944
    """
    x, a, loc, scale = promote("gamma.logpdf", x, a, loc, scale)
    y = standardize(x, loc, scale)
    inside = y >= 0
    y = fnp.where(inside, y, 1.0)
    a_s = fnp.where(a > 0, a, 1.0)  # a stand-in where a is invalid (gammaln(-1) = inf: inf - inf)
    out = _sp.xlogy(a_s - 1.0, y) - y - _sp.gammaln(a_s) - _q.log(scale)
    out = nan_at(fnp.where(inside, out, -numpy.inf), x - loc)
    return scale_ok(fnp.where(a > 0, out, numpy.nan), scale)


def pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The gamma density.

    Example:
        >>> from funcgrad.scipy.stats import gamma
        >>> round(float(gamma.pdf(2.0, 3.0)), 12)
        0.270670566473
    """
    return fnp.exp(logpdf(x, a, loc, scale))


def _shape_ok(out: Any, a: Any) -> Any:
    # nan unless a > 0, as SciPy (gammainc(0, y) is 1, but a = 0 is no distribution)
    return fnp.where(a > 0, out, numpy.nan)


def _y(name: str, x: Any, a: Any, loc: Any, scale: Any) -> tuple[Any, Any, Any]:
    x, a, loc, scale = promote(name, x, a, loc, scale)
    return fnp.maximum(standardize(x, loc, scale), 0.0), a, scale


def cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``gammainc(a, y)``.

    Example:
        >>> from funcgrad.scipy.stats import gamma
        >>> round(float(gamma.cdf(2.0, 1.0)), 12)
        0.864664716763
    """
    y, a, scale = _y("gamma.cdf", x, a, loc, scale)
    return scale_ok(_shape_ok(_sp.gammainc(a, y), a), scale)


def logcdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the CDF.

    Example:
        >>> from funcgrad.scipy.stats import gamma
        >>> round(float(gamma.logcdf(2.0, 1.0)), 12)
        -0.145413457869
    """
    # log1p(-sf) where the CDF is near 1 (log(cdf) rounds to 0 there)
    return log_prob(cdf(x, a, loc, scale), sf(x, a, loc, scale))


def sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Survival function ``gammaincc(a, y)``, accurate in the right tail.

    Example:
        >>> from funcgrad.scipy.stats import gamma
        >>> round(float(gamma.sf(2.0, 1.0)), 12)
        0.135335283237
    """
    y, a, scale = _y("gamma.sf", x, a, loc, scale)
    return scale_ok(_shape_ok(_sp.gammaincc(a, y), a), scale)


def logsf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the survival function.

    Example:
        >>> from funcgrad.scipy.stats import gamma
        >>> round(float(gamma.logsf(2.0, 1.0)), 12)
        -2.0
    """
    return log_prob(sf(x, a, loc, scale), cdf(x, a, loc, scale))


def _quantile(name: str, q: Any, a: Any, loc: Any, scale: Any, upper: bool) -> Any:
    q, a, loc, scale = promote(name, q, a, loc, scale)
    # The tail the probability is given for is the one solved, so its digits are kept.
    p, pc = (1.0 - q, q) if upper else (q, 1.0 - q)
    y = _sp._gammaincinv_pq(name, fnp.where(a > 0, a, 1.0), p, pc)
    return prob_ok(scale_ok(_shape_ok(loc + scale * y, a), scale), q)


def ppf(q: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Quantile function (inverse of :func:`cdf`): ``loc + scale * gammaincinv(a, q)``;
    ``loc`` at ``q = 0``, ``inf`` at ``q = 1``, nan outside ``[0, 1]``. Differentiable in every
    argument.

    Example:
        >>> from funcgrad.scipy.stats import gamma
        >>> round(float(gamma.ppf(0.5, 1.0)), 12)   # exponential median: log 2
        0.69314718056
    """
    return _quantile("gamma.ppf", q, a, loc, scale, upper=False)


def isf(q: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function: ``x`` with ``sf(x) = q``, accurate for tiny ``q``.

    Example:
        >>> from funcgrad.scipy.stats import gamma
        >>> round(float(gamma.isf(1e-300, 1.0)), 10)   # -log(1e-300)
        690.7755278982
    """
    return _quantile("gamma.isf", q, a, loc, scale, upper=True)
