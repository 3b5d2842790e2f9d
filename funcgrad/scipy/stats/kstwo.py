"""The exact distribution of the two-sided Kolmogorov-Smirnov statistic ``D_n`` for a sample
of ``n``, as ``scipy.stats.kstwo`` (support ``[1/(2n), 1]``).

Computed on the host on concrete values, SciPy's algorithms (:mod:`._ks`): a traced argument
raises ``TypeError``. The limit of ``sqrt(n) D_n`` is :mod:`.kstwobign`.

Example:
    >>> from funcgrad.scipy.stats import kstwo
    >>> round(float(kstwo.sf(0.3, 20)), 12)
    0.043067066659
"""

from __future__ import annotations

import math
from typing import Any

import numpy

from funcgrad.backend import device_put
from funcgrad.scipy.stats import _ks

__all__ = ["cdf", "sf", "ppf", "isf"]


def _apply(name: str, f: Any, x: Any, n: Any, loc: Any, scale: Any) -> Any:
    xs, ns, ls, ss = (_ks.host(f"kstwo.{name}", v) for v in (x, n, loc, scale))
    xs, ns, ls, ss = numpy.broadcast_arrays(xs, ns, ls, ss)
    out = numpy.empty(xs.shape)
    for i in numpy.ndindex(xs.shape):
        nn, sc = ns[i], ss[i]
        if not (nn >= 1 and nn == math.floor(nn)) or not sc > 0 or math.isnan(xs[i]):
            out[i] = math.nan
            continue
        out[i] = f(int(nn), xs[i], ls[i], sc)
    return device_put(out if out.ndim else out[()], _ks.device_of(x, n, loc, scale))


def cdf(x: Any, n: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(D_n <= x)`` (SciPy's ``kolmogn``).

    Example:
        >>> from funcgrad.scipy.stats import kstwo
        >>> round(float(kstwo.cdf(0.1, 50)), 12)
        0.337688729534
    """
    return _apply("cdf", lambda nn, v, lo, sc: _ks.kolmogn(nn, (v - lo) / sc, True),
                  x, n, loc, scale)


def sf(x: Any, n: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(D_n > x)``: the two-sided test's exact p-value (accurate in the far tail).

    Example:
        >>> from funcgrad.scipy.stats import kstwo
        >>> print(f"{float(kstwo.sf(0.6, 30)):.6e}")
        7.392006e-11
    """
    return _apply("sf", lambda nn, v, lo, sc: _ks.kolmogn(nn, (v - lo) / sc, False),
                  x, n, loc, scale)


def _quantile(nn: int, q: float, upper: bool) -> float:
    if not 0.0 <= q <= 1.0:
        return math.nan
    lo_end = 0.5 / nn  # the support starts at 1/(2n)
    if q == 0.0:
        return 1.0 if upper else lo_end
    if q == 1.0:
        return lo_end if upper else 1.0
    if upper:
        return _ks.bisect(lambda v: _ks.kolmogn(nn, v, False), q, increasing=False)
    return _ks.bisect(lambda v: _ks.kolmogn(nn, v, True), q, increasing=True)


def ppf(q: Any, n: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Quantile function (the inverse of :func:`cdf`, by bisection).

    Example:
        >>> from funcgrad.scipy.stats import kstwo
        >>> round(float(kstwo.ppf(0.95, 20)), 9)
        0.294075314
    """
    return _apply("ppf", lambda nn, v, lo, sc: lo + sc * _quantile(nn, v, False),
                  q, n, loc, scale)


def isf(q: Any, n: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function: the two-sided test's critical value at level ``q``.

    Example:
        >>> from funcgrad.scipy.stats import kstwo
        >>> round(float(kstwo.isf(0.05, 20)), 9)
        0.294075314
    """
    return _apply("isf", lambda nn, v, lo, sc: lo + sc * _quantile(nn, v, True),
                  q, n, loc, scale)
