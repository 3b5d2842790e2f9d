"""Student's t distribution, as ``scipy.stats.t`` (``df``, ``loc``, ``scale``).

Example:
    >>> from funcgrad.scipy.stats import t
    >>> round(float(t.logpdf(0.0, 1.0)), 12)   # Cauchy: -log(pi)
    -1.144729885849
"""

from __future__ import annotations

from typing import Any

import funcgrad.numpy as fnp
from funcgrad.scipy import special as _sp
from funcgrad.scipy.stats._util import LOG_PI, promote, scale_ok, standardize

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density of Student's t with ``df`` degrees of freedom (nan unless ``df > 0``).

    Example:
        >>> from funcgrad.scipy.stats import t
        >>> round(float(t.logpdf(1.0, 3.0)), 12)
        -1.576252994527
    """
    x, df, loc, scale = promote("t.logpdf", x, df, loc, scale)
    y = standardize(x, loc, scale)
    half = 0.5 * (df + 1.0)
    out = (_sp.gammaln(half) - _sp.gammaln(0.5 * df) - 0.5 * (fnp.log(df) + LOG_PI)
           - fnp.log(scale) - half * fnp.log1p(y * y / df))
    return scale_ok(fnp.where(df > 0, out, float("nan")), scale)


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Density of Student's t.

    Example:
        >>> from funcgrad.scipy.stats import t
        >>> round(float(t.pdf(0.0, 1.0)), 12)
        0.318309886184
    """
    return fnp.exp(logpdf(x, df, loc, scale))
