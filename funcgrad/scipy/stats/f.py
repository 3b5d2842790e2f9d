"""The F distribution, as ``scipy.stats.f`` (``dfn``, ``dfd``, ``loc``, ``scale``).

Finite degrees of freedom only (infinite ones give nan). ``cdf``/``sf`` use
:func:`funcgrad.scipy.special.betainc`, ``ppf``/``isf`` its inverse: differentiable in every
argument.

Example:
    >>> from funcgrad.scipy.stats import f
    >>> round(float(f.cdf(1.0, 2.0, 2.0)), 12)
    0.5
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

__all__ = ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"]


def _ok(out: Any, dfn: Any, dfd: Any, scale: Any) -> Any:
    good = (dfn > 0) & (dfd > 0) & (dfn < numpy.inf) & (dfd < numpy.inf)
    return scale_ok(fnp.where(good, out, numpy.nan), scale)


def logpdf(x: Any, dfn: Any, dfd: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density ``(dfn/2) log(dfn/dfd) + (dfn/2 - 1) log y - ((dfn + dfd)/2)
    log(1 + dfn y / dfd) - betaln(dfn/2, dfd/2) - log(scale)`` for ``y >= 0``.

    Example:
        >>> from funcgrad.scipy.stats import f
        >>> round(float(f.logpdf(1.0, 2.0, 2.0)), 12)   # log(1/4)
        -1.38629436112
    """
    x, dfn, dfd, loc, scale = promote("f.logpdf", x, dfn, dfd, loc, scale)
    y = standardize(x, loc, scale)
    inside = y >= 0
    y = fnp.where(inside, y, 1.0)
    hn, hd = 0.5 * dfn, 0.5 * dfd
    out = (hn * (_q.log(dfn) - _q.log(dfd)) + _sp.xlogy(hn - 1.0, y)
           - (hn + hd) * _q.log1p(dfn * y / dfd) - _sp.betaln(hn, hd) - _q.log(scale))
    return _ok(nan_at(fnp.where(inside, out, -numpy.inf), x - loc), dfn, dfd, scale)


def pdf(x: Any, dfn: Any, dfd: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The F density.

    Example:
        >>> from funcgrad.scipy.stats import f
        >>> round(float(f.pdf(1.0, 2.0, 2.0)), 12)
        0.25
    """
    return fnp.exp(logpdf(x, dfn, dfd, loc, scale))


def _args(name: str, x: Any, dfn: Any, dfd: Any, loc: Any, scale: Any) -> tuple[Any, ...]:
    x, dfn, dfd, loc, scale = promote(name, x, dfn, dfd, loc, scale)
    y = fnp.maximum(standardize(x, loc, scale), 0.0)
    good = (dfn > 0) & (dfd > 0)
    dfn_s, dfd_s = fnp.where(good, dfn, 1.0), fnp.where(good, dfd, 1.0)
    return y * dfn_s, dfn_s, dfd_s, dfn, dfd, scale


def cdf(x: Any, dfn: Any, dfd: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Cumulative distribution function ``betainc(dfn/2, dfd/2, dfn y / (dfn y + dfd))``.

    Example:
        >>> from funcgrad.scipy.stats import f
        >>> round(float(f.cdf(3.0, 4.0, 6.0)), 12)
        0.888888888889
    """
    u, dfn_s, dfd_s, dfn, dfd, scale = _args("f.cdf", x, dfn, dfd, loc, scale)
    # At x = inf, u / (u + dfd) would be inf / inf: the fraction's limit 1 is taken there.
    top = u == numpy.inf
    u_f = fnp.where(top, 1.0, u)
    out = _sp.betainc(0.5 * dfn_s, 0.5 * dfd_s, fnp.where(top, 1.0, u_f / (u_f + dfd_s)))
    return _ok(out, dfn, dfd, scale)


def sf(x: Any, dfn: Any, dfd: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Survival function ``betainc(dfd/2, dfn/2, dfd / (dfn y + dfd))``, accurate in the right
    tail.

    Example:
        >>> from funcgrad.scipy.stats import f
        >>> round(float(f.sf(3.0, 4.0, 6.0)), 12)
        0.111111111111
    """
    u, dfn_s, dfd_s, dfn, dfd, scale = _args("f.sf", x, dfn, dfd, loc, scale)
    out = _sp.betainc(0.5 * dfd_s, 0.5 * dfn_s, dfd_s / (u + dfd_s))
    return _ok(out, dfn, dfd, scale)


def logcdf(x: Any, dfn: Any, dfd: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the CDF.

    Example:
        >>> from funcgrad.scipy.stats import f
        >>> round(float(f.logcdf(1.0, 2.0, 2.0)), 12)
        -0.69314718056
    """
    return log_prob(cdf(x, dfn, dfd, loc, scale), sf(x, dfn, dfd, loc, scale))


def logsf(x: Any, dfn: Any, dfd: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the survival function.

    Example:
        >>> from funcgrad.scipy.stats import f
        >>> round(float(f.logsf(1.0, 2.0, 2.0)), 12)
        -0.69314718056
    """
    return log_prob(sf(x, dfn, dfd, loc, scale), cdf(x, dfn, dfd, loc, scale))


def _quantile(name: str, q: Any, dfn: Any, dfd: Any, loc: Any, scale: Any, upper: bool) -> Any:
    q, dfn, dfd, loc, scale = promote(name, q, dfn, dfd, loc, scale)
    good = (dfn > 0) & (dfd > 0) & (dfn < numpy.inf) & (dfd < numpy.inf)
    dfn_s, dfd_s = fnp.where(good, dfn, 1.0), fnp.where(good, dfd, 1.0)
    p, pc = (1.0 - q, q) if upper else (q, 1.0 - q)
    # w = dfn y / (dfn y + dfd) ~ Beta(dfn/2, dfd/2); y = dfd w / (dfn (1 - w)), with 1 - w
    # from the inverse itself (accurate where w is near 1, the upper tail).
    w, wc = _sp._betaincinv_pair(name, 0.5 * dfn_s, 0.5 * dfd_s, p, pc)
    y = _q.div(dfd_s * w, dfn_s * wc)
    return prob_ok(_ok(loc + scale * y, dfn, dfd, scale), q)


def ppf(q: Any, dfn: Any, dfd: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Quantile function (inverse of :func:`cdf`); ``inf`` at ``q = 1``.

    Example:
        >>> from funcgrad.scipy.stats import f
        >>> round(float(f.ppf(0.95, 3.0, 5.0)), 10)
        5.4094513181
    """
    return _quantile("f.ppf", q, dfn, dfd, loc, scale, upper=False)


def isf(q: Any, dfn: Any, dfd: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function (``f.isf(alpha, dfn, dfd)``: an F test's critical value).

    Example:
        >>> from funcgrad.scipy.stats import f
        >>> round(float(f.isf(0.05, 3.0, 5.0)), 10)
        5.4094513181
    """
    return _quantile("f.isf", q, dfn, dfd, loc, scale, upper=True)
