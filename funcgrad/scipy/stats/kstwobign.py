"""The limiting (Kolmogorov) distribution of ``sqrt(n) D_n``, the scaled two-sided
Kolmogorov-Smirnov statistic, as ``scipy.stats.kstwobign``: ``sf`` is
``scipy.special.kolmogorov``, ``isf`` its inverse ``kolmogi``.

Two series, each where it converges fast: ``sf = 2 sum (-1)**(k-1) exp(-2 k**2 x**2)`` from
``x = 1`` up, and Jacobi's form ``cdf = sqrt(2 pi) / x sum exp(-(2k - 1)**2 pi**2 / (8 x**2))``
below (12 terms each: full double precision). Differentiable; the quantiles are found by
bisection and finished with a Newton step, which carries their derivative.

Example:
    >>> from funcgrad.scipy.stats import kstwobign
    >>> round(float(kstwobign.sf(1.0)), 12)
    0.269999671677
"""

from __future__ import annotations

import math
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.ops.elementwise import stop_gradient
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy.stats._util import log_prob, prob_ok, promote, scale_ok, standardize

__all__ = ["cdf", "sf", "pdf", "logpdf", "logcdf", "logsf", "ppf", "isf"]

_TERMS = 12
_SWITCH = 1.0  # the alternating series from here up, Jacobi's form below
_SQRT_2PI = math.sqrt(2.0 * math.pi)


def _parts(y: Any) -> tuple[Any, Any, Any]:
    """``(cdf, sf, pdf)`` of the standard distribution at ``y`` (any real)."""
    big = y >= _SWITCH
    far = y > 30.0  # every term below the smallest float: the limits
    yb = fnp.where(big & ~far, y, _SWITCH)
    ys = fnp.where(big | (y <= 0), 0.5, y)  # a harmless stand-in where Jacobi's form is unused
    sf_big = 0.0
    pdf_big = 0.0
    for k in range(_TERMS, 0, -1):  # smallest terms first
        e = (-1.0) ** (k - 1) * fnp.exp(-2.0 * k * k * yb * yb)
        sf_big = sf_big + 2.0 * e
        pdf_big = pdf_big + 8.0 * k * k * yb * e
    cdf_small = 0.0
    pdf_small = 0.0
    for k in range(_TERMS, 0, -1):
        a = (2 * k - 1) ** 2 * math.pi ** 2 / 8.0
        e = fnp.exp(-a / (ys * ys))
        cdf_small = cdf_small + e
        pdf_small = pdf_small + e * (2.0 * a / ys ** 4 - 1.0 / ys ** 2)
    cdf_small = _SQRT_2PI / ys * cdf_small
    pdf_small = _SQRT_2PI * pdf_small
    pos = y > 0
    sf_big = fnp.where(far, 0.0, sf_big)
    pdf_big = fnp.where(far, 0.0, pdf_big)
    cdf = fnp.where(big, 1.0 - sf_big, fnp.where(pos, cdf_small, 0.0))
    sf = fnp.where(big, sf_big, fnp.where(pos, 1.0 - cdf_small, 1.0))
    pdf = fnp.where(big, pdf_big, fnp.where(pos, pdf_small, 0.0))
    nan = fnp.isnan(y)
    return (fnp.where(nan, numpy.nan, fnp.clip(cdf, 0.0, 1.0)),
            fnp.where(nan, numpy.nan, fnp.clip(sf, 0.0, 1.0)),
            fnp.where(nan, numpy.nan, fnp.maximum(pdf, 0.0)))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Cumulative distribution function (SciPy's ``kolmogc``; 0 for ``x <= loc``).

    Example:
        >>> from funcgrad.scipy.stats import kstwobign
        >>> round(float(kstwobign.cdf(0.5)), 12)
        0.036054756335
    """
    x, loc, scale = promote("kstwobign.cdf", x, loc, scale)
    return scale_ok(_parts(standardize(x, loc, scale))[0], scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Survival function: ``scipy.special.kolmogorov`` (accurate far in the right tail).

    Example:
        >>> from funcgrad.scipy.stats import kstwobign
        >>> print(f"{float(kstwobign.sf(5.0)):.6e}")
        3.857500e-22
    """
    x, loc, scale = promote("kstwobign.sf", x, loc, scale)
    return scale_ok(_parts(standardize(x, loc, scale))[1], scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density (SciPy's ``-kolmogp``).

    Example:
        >>> from funcgrad.scipy.stats import kstwobign
        >>> round(float(kstwobign.pdf(1.0)), 12)
        1.071948558357
    """
    x, loc, scale = promote("kstwobign.pdf", x, loc, scale)
    return scale_ok(_parts(standardize(x, loc, scale))[2] / scale, scale)


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the density.

    Example:
        >>> from funcgrad.scipy.stats import kstwobign
        >>> round(float(kstwobign.logpdf(1.0)), 11)
        0.06947807489
    """
    return _q.log(pdf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the CDF (``log1p(-sf)`` near 1: the digits of a small tail stay).

    Example:
        >>> from funcgrad.scipy.stats import kstwobign
        >>> round(float(kstwobign.logcdf(0.5)), 11)
        -3.32271648678
    """
    x, loc, scale = promote("kstwobign.logcdf", x, loc, scale)
    c, s, _ = _parts(standardize(x, loc, scale))
    return scale_ok(log_prob(c, s), scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the survival function (``log1p(-cdf)`` near 1).

    Example:
        >>> from funcgrad.scipy.stats import kstwobign
        >>> round(float(kstwobign.logsf(5.0)), 9)
        -49.306852819
    """
    x, loc, scale = promote("kstwobign.logsf", x, loc, scale)
    c, s, _ = _parts(standardize(x, loc, scale))
    return scale_ok(log_prob(s, c), scale)


def _invert(q: Any, upper: bool) -> Any:
    """The standard quantile: bisection on ``[0, 40]`` (stop-gradient), then one Newton step,
    through which the derivative flows (``dx/dq = +-1/pdf``)."""
    qs = stop_gradient(q)
    # bisect on the smaller tail: 1 - q is exact there, a CDF near 1 is not
    flip = qs > 0.5
    tail = fnp.where(flip, 1.0 - qs, qs)
    by_sf = flip != upper
    lo = fnp.zeros_like(qs)
    hi = fnp.full_like(qs, 40.0)
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        c, s, _p = _parts(mid)
        below = fnp.where(by_sf, s > tail, c < tail)
        lo, hi = fnp.where(below, mid, lo), fnp.where(below, hi, mid)
    x0 = stop_gradient(0.5 * (lo + hi))
    c, s, p = _parts(x0)
    p_safe = fnp.where(p > 0, p, 1.0)
    step = fnp.where(p > 0, ((s - q) if upper else (q - c)) / p_safe, 0.0)
    x = x0 + step
    first, last = (numpy.inf, 0.0) if upper else (0.0, numpy.inf)
    return prob_ok(fnp.where(q == 0, first, fnp.where(q == 1, last, x)), q)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Quantile function (SciPy's ``kolmogci``).

    Example:
        >>> from funcgrad.scipy.stats import kstwobign
        >>> round(float(kstwobign.ppf(0.95)), 10)
        1.3580986393
    """
    q, loc, scale = promote("kstwobign.ppf", q, loc, scale)
    return scale_ok(loc + scale * _invert(q, upper=False), scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function (``scipy.special.kolmogi``): accurate for tiny ``q``.

    Example:
        >>> from funcgrad.scipy.stats import kstwobign
        >>> round(float(kstwobign.isf(0.05)), 10)
        1.3580986393
    """
    q, loc, scale = promote("kstwobign.isf", q, loc, scale)
    return scale_ok(loc + scale * _invert(q, upper=True), scale)
