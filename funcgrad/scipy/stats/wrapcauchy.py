"""The wrapped Cauchy distribution, as ``scipy.stats.wrapcauchy`` (shape ``0 < c < 1``,
``loc``, ``scale``): density ``(1 - c**2) / (2 pi (1 + c**2 - 2 c cos(x)))`` on
``[0, 2 pi]``.

Example:
    >>> from funcgrad.scipy.stats import wrapcauchy
    >>> round(float(wrapcauchy.pdf(0.0, 0.5)), 12)
    0.477464829276
"""

from __future__ import annotations

import math
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy.stats._util import nan_at, promote, standardize

__all__ = ["logpdf", "pdf", "cdf", "sf", "ppf", "isf"]


def logpdf(x: Any, c: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log(1 - c**2) - log(2 pi) - log(1 + c**2 - 2 c cos(z)) - log(scale)`` for
    ``0 <= z <= 2 pi`` (``-inf`` outside); nan unless ``0 < c < 1`` and ``scale > 0``.

    Example:
        >>> from funcgrad.scipy.stats import wrapcauchy
        >>> round(float(wrapcauchy.logpdf(1.0, 0.3)), 12)
        -1.665377815491
    """
    x, c, loc, scale = promote("wrapcauchy.logpdf", x, c, loc, scale)
    z = standardize(x, loc, scale)
    inside = (z >= 0) & (z <= 2.0 * math.pi)
    out = (_q.log1p(-c * c) - math.log(2.0 * math.pi)
           - _q.log1p(c * c - 2.0 * c * fnp.cos(z)) - _q.log(scale))
    out = nan_at(fnp.where(inside, out, -numpy.inf), z)
    return fnp.where((c > 0) & (c < 1) & (scale > 0), out, numpy.nan)


def pdf(x: Any, c: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density.

    Example:
        >>> from funcgrad.scipy.stats import wrapcauchy
        >>> round(float(wrapcauchy.pdf(3.0, 0.5)), 12)
        0.053288663913
    """
    return fnp.exp(logpdf(x, c, loc, scale))


def _ok(c: Any, scale: Any) -> Any:
    return (c > 0) & (c < 1) & (scale > 0)


def cdf(x: Any, c: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Cumulative distribution function on ``[0, 2 pi]`` (SciPy's: ``atan(r tan(z/2)) / pi``
    below ``pi``, its mirror above, ``r = (1 + c)/(1 - c)``).

    Example:
        >>> from funcgrad.scipy.stats import wrapcauchy
        >>> round(float(wrapcauchy.cdf(1.0, 0.3)), 12)
        0.252300785066
    """
    x, c, loc, scale = promote("wrapcauchy.cdf", x, c, loc, scale)
    z = standardize(x, loc, scale)
    cs = fnp.where(_ok(c, scale), c, 0.5)
    r = (1.0 + cs) / (1.0 - cs)
    zc = fnp.clip(z, 0.0, 2.0 * math.pi)
    low = fnp.arctan(r * fnp.tan(0.5 * zc)) / math.pi
    high = 1.0 - fnp.arctan(r * fnp.tan(0.5 * (2.0 * math.pi - zc))) / math.pi
    out = fnp.where(zc < math.pi, low, high)
    out = fnp.where(z < 0, 0.0, fnp.where(z > 2.0 * math.pi, 1.0, out))
    return fnp.where(_ok(c, scale), nan_at(out, z), numpy.nan)


def sf(x: Any, c: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Survival function ``1 - cdf``.

    Example:
        >>> from funcgrad.scipy.stats import wrapcauchy
        >>> round(float(wrapcauchy.sf(1.0, 0.3)), 12)
        0.747699214934
    """
    return 1.0 - cdf(x, c, loc, scale)


def ppf(q: Any, c: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Quantile function (SciPy's closed form).

    Example:
        >>> from funcgrad.scipy.stats import wrapcauchy
        >>> round(float(wrapcauchy.ppf(0.25, 0.3)), 12)
        0.987882737839
    """
    q, c, loc, scale = promote("wrapcauchy.ppf", q, c, loc, scale)
    cs = fnp.where(_ok(c, scale), c, 0.5)
    val = (1.0 - cs) / (1.0 + cs)
    low = 2.0 * fnp.arctan(val * fnp.tan(math.pi * q))
    high = 2.0 * math.pi - 2.0 * fnp.arctan(val * fnp.tan(math.pi * (1.0 - q)))
    out = loc + scale * fnp.where(q < 0.5, low, high)
    out = fnp.where((q >= 0) & (q <= 1), out, numpy.nan)
    return fnp.where(_ok(c, scale), out, numpy.nan)


def isf(q: Any, c: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function ``ppf(1 - q)``.

    Example:
        >>> from funcgrad.scipy.stats import wrapcauchy
        >>> round(float(wrapcauchy.isf(0.75, 0.3)), 12)
        0.987882737839
    """
    return ppf(1.0 - fnp.asarray(q), c, loc, scale)
