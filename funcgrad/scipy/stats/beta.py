"""The beta distribution, as ``scipy.stats.beta`` (``a``, ``b``, ``loc``, ``scale``).

Example:
    >>> from funcgrad.scipy.stats import beta
    >>> round(float(beta.pdf(0.5, 2.0, 2.0)), 12)
    1.5
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.scipy import special as _sp
from funcgrad.scipy.stats._util import promote, scale_ok, standardize

__all__ = ["logpdf", "pdf"]


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
    out = _sp.xlogy(a - 1.0, y) + _sp.xlog1py(b - 1.0, -y) - _sp.betaln(a, b) - fnp.log(scale)
    out = fnp.where(inside, out, -numpy.inf)
    return scale_ok(fnp.where((a > 0) & (b > 0), out, numpy.nan), scale)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The beta density.

    Example:
        >>> from funcgrad.scipy.stats import beta
        >>> float(beta.pdf(0.3, 1.0, 1.0))
        1.0
    """
    return fnp.exp(logpdf(x, a, b, loc, scale))
