"""The von Mises distribution on the circle, as ``scipy.stats.vonmises`` (concentration
``kappa``, ``loc``, ``scale``): density ``exp(kappa cos(x)) / (2 pi i0(kappa))``, periodic in
``x`` (as SciPy's ``pdf``, not restricted to ``[-pi, pi]``).

Example:
    >>> from funcgrad.scipy.stats import vonmises
    >>> round(float(vonmises.pdf(0.0, 1.0)), 12)
    0.341710488623
"""

from __future__ import annotations

import math
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy import special as _sp
from funcgrad.scipy.stats._util import promote, standardize

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, kappa: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``kappa (cos(z) - 1) - log(2 pi i0e(kappa)) - log(scale)`` (``i0e``: no overflow for
    large ``kappa``); nan unless ``kappa >= 0`` and ``scale > 0`` (``kappa = 0`` is uniform, as
    SciPy; ``jax.scipy.stats.vonmises`` gives nan there).

    Example:
        >>> from funcgrad.scipy.stats import vonmises
        >>> round(float(vonmises.logpdf(0.5, 2.0)), 12)
        -0.906705484112
    """
    x, kappa, loc, scale = promote("vonmises.logpdf", x, kappa, loc, scale)
    z = standardize(x, loc, scale)
    k = fnp.where(kappa >= 0, kappa, 1.0)
    out = k * (fnp.cos(z) - 1.0) - math.log(2.0 * math.pi) - _q.log(_sp.i0e(k)) - _q.log(scale)
    return fnp.where((kappa >= 0) & (scale > 0), out, numpy.nan)


def pdf(x: Any, kappa: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density.

    Example:
        >>> from funcgrad.scipy.stats import vonmises
        >>> round(float(vonmises.pdf(3.0, 1.0)), 12)
        0.046710611109
    """
    return fnp.exp(logpdf(x, kappa, loc, scale))
