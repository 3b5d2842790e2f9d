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

__all__ = ["logpdf", "pdf"]


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
