"""The beta distribution, as ``scipy.stats.beta`` (``a``, ``b``, ``loc``, ``scale``).

``cdf``/``sf`` use :func:`funcgrad.scipy.special.betainc`, ``ppf``/``isf`` its inverse
(:func:`funcgrad.scipy.special.betaincinv`): differentiable in every argument.

Example:
    >>> from funcgrad.scipy.stats import beta
    >>> round(float(beta.pdf(0.5, 2.0, 2.0)), 12)
    1.5
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


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density ``(a-1) log y + (b-1) log(1-y) - betaln(a, b) - log(scale)`` on
    ``0 <= y <= 1`` (``-inf`` outside; nan unless ``a, b > 0``).

    Example:
        >>> from funcgrad.scipy.stats import beta
        >>> round(float(beta.logpdf(0.25, 2.0, 3.0)), 12)
        0.523248143765
    """
    x, a, b, loc, scale = promote("beta.logpdf", x, a, b, loc, scale)
    y = standardize(x, loc, scale)
    inside = (y >= 0) & (y <= 1)
    y = fnp.where(inside, y, 0.5)
    out = _sp.xlogy(a - 1.0, y) + _sp.xlog1py(b - 1.0, -y) - _sp.betaln(a, b) - _q.log(scale)
    out = nan_at(fnp.where(inside, out, -numpy.inf), x - loc)
    return scale_ok(fnp.where((a > 0) & (b > 0), out, numpy.nan), scale)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The beta density.

    Example:
        >>> from funcgrad.scipy.stats import beta
        >>> float(beta.pdf(0.3, 1.0, 1.0))
        1.0
    """
    return fnp.exp(logpdf(x, a, b, loc, scale))


def _shapes_ok(out: Any, a: Any, b: Any) -> Any:
    # nan unless a, b > 0, as SciPy (betainc is defined at a = 0; the distribution is not)
    return fnp.where((a > 0) & (b > 0), out, numpy.nan)


def _y(name: str, x: Any, a: Any, b: Any, loc: Any, scale: Any) -> tuple[Any, ...]:
    x, a, b, loc, scale = promote(name, x, a, b, loc, scale)
    return fnp.clip(standardize(x, loc, scale), 0.0, 1.0), a, b, scale


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Cumulative distribution function ``betainc(a, b, y)`` (0 below the support, 1 above).

    Example:
        >>> from funcgrad.scipy.stats import beta
        >>> round(float(beta.cdf(0.4, 2.0, 3.0)), 12)
        0.5248
    """
    y, a, b, scale = _y("beta.cdf", x, a, b, loc, scale)
    return scale_ok(_shapes_ok(_sp.betainc(a, b, y), a, b), scale)


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Survival function ``betainc(b, a, 1 - y)``, accurate in the right tail.

    Example:
        >>> from funcgrad.scipy.stats import beta
        >>> round(float(beta.sf(0.4, 2.0, 3.0)), 12)
        0.4752
    """
    y, a, b, scale = _y("beta.sf", x, a, b, loc, scale)
    return scale_ok(_shapes_ok(_sp.betainc(b, a, 1.0 - y), a, b), scale)


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the CDF.

    Example:
        >>> from funcgrad.scipy.stats import beta
        >>> round(float(beta.logcdf(0.5, 1.0, 1.0)), 12)
        -0.69314718056
    """
    return log_prob(cdf(x, a, b, loc, scale), sf(x, a, b, loc, scale))


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the survival function.

    Example:
        >>> from funcgrad.scipy.stats import beta
        >>> round(float(beta.logsf(0.5, 1.0, 1.0)), 12)
        -0.69314718056
    """
    return log_prob(sf(x, a, b, loc, scale), cdf(x, a, b, loc, scale))


def _quantile(name: str, q: Any, a: Any, b: Any, loc: Any, scale: Any, upper: bool) -> Any:
    q, a, b, loc, scale = promote(name, q, a, b, loc, scale)
    good = (a > 0) & (b > 0)
    p, pc = (1.0 - q, q) if upper else (q, 1.0 - q)
    y = _sp._betaincinv_pair(name, fnp.where(good, a, 1.0), fnp.where(good, b, 1.0), p, pc)[0]
    return prob_ok(scale_ok(_shapes_ok(loc + scale * y, a, b), scale), q)


def ppf(q: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Quantile function (inverse of :func:`cdf`): ``loc + scale * betaincinv(a, b, q)``.

    Example:
        >>> from funcgrad.scipy.stats import beta
        >>> round(float(beta.ppf(0.5248, 2.0, 3.0)), 12)
        0.4
    """
    return _quantile("beta.ppf", q, a, b, loc, scale, upper=False)


def isf(q: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function: ``x`` with ``sf(x) = q``.

    Example:
        >>> from funcgrad.scipy.stats import beta
        >>> round(float(beta.isf(0.4752, 2.0, 3.0)), 12)
        0.4
    """
    return _quantile("beta.isf", q, a, b, loc, scale, upper=True)
