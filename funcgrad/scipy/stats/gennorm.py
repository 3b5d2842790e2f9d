"""The generalized normal (exponential power) distribution, as ``scipy.stats.gennorm``
(shape ``beta``, ``loc``, ``scale``): density ``beta / (2 gamma(1 / beta)) exp(-|z|**beta)``;
``beta = 2`` is a normal with variance 1/2, ``beta = 1`` the Laplace distribution.

Example:
    >>> from funcgrad.scipy.stats import gennorm
    >>> round(float(gennorm.pdf(0.0, 1.0)), 12)
    0.5
"""

from __future__ import annotations

import math
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy import special as _sp
from funcgrad.scipy.stats._util import log_prob, prob_ok, promote, standardize

__all__ = ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"]


def _ok(out: Any, beta: Any, scale: Any) -> Any:
    return fnp.where((beta > 0) & (scale > 0), out, numpy.nan)


def logpdf(x: Any, beta: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log(beta / 2) - gammaln(1 / beta) - |z|**beta - log(scale)``.

    Example:
        >>> from funcgrad.scipy.stats import gennorm
        >>> round(float(gennorm.logpdf(1.0, 2.0)), 12)
        -1.572364942925
    """
    x, beta, loc, scale = promote("gennorm.logpdf", x, beta, loc, scale)
    z = standardize(x, loc, scale)
    out = (_q.log(beta) - math.log(2.0) - _sp.gammaln(1.0 / beta) - fnp.abs(z) ** beta
           - _q.log(scale))
    return _ok(out, beta, scale)


def pdf(x: Any, beta: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density.

    Example:
        >>> from funcgrad.scipy.stats import gennorm
        >>> round(float(gennorm.pdf(1.0, 1.0)), 12)
        0.183939720586
    """
    return fnp.exp(logpdf(x, beta, loc, scale))


def _tail(name: str, x: Any, beta: Any, loc: Any, scale: Any, sign: float) -> Any:
    """``1/2 + sign(z) gammainc(1 / beta, |z|**beta) / 2`` for the CDF (``sign = 1``);
    ``sign = -1`` gives the survival function. The far tail is ``gammaincc / 2``, kept
    accurate."""
    x, beta, loc, scale = promote(name, x, beta, loc, scale)
    z = sign * standardize(x, loc, scale)
    a = 1.0 / fnp.where(beta > 0, beta, 1.0)
    upper = 0.5 * _sp.gammaincc(a, fnp.abs(z) ** beta)
    return _ok(fnp.where(z > 0, 1.0 - upper, upper), beta, scale)


def cdf(x: Any, beta: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Cumulative distribution function.

    Example:
        >>> from funcgrad.scipy.stats import gennorm
        >>> float(gennorm.cdf(0.0, 3.0))
        0.5
    """
    return _tail("gennorm.cdf", x, beta, loc, scale, 1.0)


def sf(x: Any, beta: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Survival function, accurate in the right tail.

    Example:
        >>> from funcgrad.scipy.stats import gennorm
        >>> round(float(gennorm.sf(1.0, 1.0)), 12)
        0.183939720586
    """
    return _tail("gennorm.sf", x, beta, loc, scale, -1.0)


def logcdf(x: Any, beta: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the CDF.

    Example:
        >>> from funcgrad.scipy.stats import gennorm
        >>> round(float(gennorm.logcdf(0.0, 3.0)), 12)
        -0.69314718056
    """
    return log_prob(cdf(x, beta, loc, scale), sf(x, beta, loc, scale))


def logsf(x: Any, beta: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the survival function.

    Example:
        >>> from funcgrad.scipy.stats import gennorm
        >>> round(float(gennorm.logsf(1.0, 1.0)), 12)
        -1.69314718056
    """
    return log_prob(sf(x, beta, loc, scale), cdf(x, beta, loc, scale))


def _quantile(name: str, q: Any, beta: Any, loc: Any, scale: Any, upper: bool) -> Any:
    q, beta, loc, scale = promote(name, q, beta, loc, scale)
    p = 1.0 - q if upper else q
    pc = q if upper else 1.0 - q
    tail = fnp.minimum(p, pc)  # the mass beyond |y|, halved: gammaincc(1/beta, |y|^beta) / 2
    a = 1.0 / fnp.where(beta > 0, beta, 1.0)
    t2 = fnp.where((tail > 0) & (tail <= 0.5), 2.0 * tail, 0.5)
    u = _sp._gammaincinv_pq(name, a, 1.0 - t2, t2)  # |y|^beta
    mag = u ** a
    mag = fnp.where(tail == 0, numpy.inf, fnp.where(tail == 0.5, 0.0, mag))
    y = fnp.where(p < pc, -mag, mag)
    return prob_ok(_ok(loc + scale * y, beta, scale), q)


def ppf(q: Any, beta: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Quantile function: ``|y| = gammainccinv(1 / beta, 2 tail)**(1 / beta)`` on the side
    of the median ``q`` lies (the tail solved directly, so it keeps its digits).

    Example:
        >>> from funcgrad.scipy.stats import gennorm
        >>> round(float(gennorm.ppf(0.975, 2.0)), 10)   # normal with sd 1/sqrt(2)
        1.3859038243
    """
    return _quantile("gennorm.ppf", q, beta, loc, scale, upper=False)


def isf(q: Any, beta: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function.

    Example:
        >>> from funcgrad.scipy.stats import gennorm
        >>> round(float(gennorm.isf(0.025, 2.0)), 10)
        1.3859038243
    """
    return _quantile("gennorm.isf", q, beta, loc, scale, upper=True)
