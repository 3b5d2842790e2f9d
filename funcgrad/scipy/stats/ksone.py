"""The exact distribution of the one-sided Kolmogorov-Smirnov statistic ``D+_n`` (or
``D-_n``) for a sample of ``n``, as ``scipy.stats.ksone``: ``sf`` is
``scipy.special.smirnov`` (Birnbaum-Tingey's exact sum).

Computed on the host on concrete values (:mod:`._ks`): a traced argument raises
``TypeError``.

Example:
    >>> from funcgrad.scipy.stats import ksone
    >>> round(float(ksone.sf(0.3, 10)), 12)
    0.1354635556
"""

from __future__ import annotations

import math
from typing import Any

from funcgrad.scipy.stats import _ks
from funcgrad.scipy.stats.kstwo import _apply

__all__ = ["cdf", "sf", "ppf", "isf"]


def cdf(x: Any, n: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(D+_n <= x)``.

    Example:
        >>> from funcgrad.scipy.stats import ksone
        >>> round(float(ksone.cdf(0.3, 10)), 12)
        0.8645364444
    """
    return _apply("cdf", lambda nn, v, lo, sc: 1.0 - _ks.smirnov(nn, (v - lo) / sc),
                  x, n, loc, scale)


def sf(x: Any, n: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(D+_n >= x)`` (``scipy.special.smirnov``): the one-sided test's exact p-value.

    Example:
        >>> from funcgrad.scipy.stats import ksone
        >>> print(f"{float(ksone.sf(0.8, 10)):.6e}")
        1.104000e-07
    """
    return _apply("sf", lambda nn, v, lo, sc: _ks.smirnov(nn, (v - lo) / sc),
                  x, n, loc, scale)


def _quantile(nn: int, q: float, upper: bool) -> float:
    if not 0.0 <= q <= 1.0:
        return math.nan
    if q in (0.0, 1.0):
        return float(q == 0.0) if upper else float(q == 1.0)
    if upper:
        return _ks.bisect(lambda v: _ks.smirnov(nn, v), q, increasing=False)
    return _ks.bisect(lambda v: 1.0 - _ks.smirnov(nn, v), q, increasing=True)


def ppf(q: Any, n: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Quantile function (by bisection).

    Example:
        >>> from funcgrad.scipy.stats import ksone
        >>> round(float(ksone.ppf(0.95, 10)), 9)
        0.368663333
    """
    return _apply("ppf", lambda nn, v, lo, sc: lo + sc * _quantile(nn, v, False),
                  q, n, loc, scale)


def isf(q: Any, n: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function (``scipy.special.smirnovi``).

    Example:
        >>> from funcgrad.scipy.stats import ksone
        >>> round(float(ksone.isf(0.05, 10)), 9)
        0.368663333
    """
    return _apply("isf", lambda nn, v, lo, sc: lo + sc * _quantile(nn, v, True),
                  q, n, loc, scale)
