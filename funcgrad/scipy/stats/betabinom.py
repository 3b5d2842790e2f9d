"""The beta-binomial distribution, as ``scipy.stats.betabinom`` (``n``, ``a``, ``b``,
``loc``): a binomial count whose success probability is ``Beta(a, b)``.

Example:
    >>> from funcgrad.scipy.stats import betabinom
    >>> round(float(betabinom.pmf(1, 2, 1.0, 1.0)), 12)   # uniform on {0, 1, 2}
    0.333333333333
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy import special as _sp
from funcgrad.scipy.stats._util import is_integer, nan_at, promote

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """``log C(n, k) + betaln(k + a, n - k + b) - betaln(a, b)`` for integer
    ``0 <= k - loc <= n`` (``-inf`` elsewhere; nan unless ``n`` is a non-negative integer
    and ``a, b > 0``).

    Example:
        >>> from funcgrad.scipy.stats import betabinom
        >>> round(float(betabinom.logpmf(3, 10, 2.0, 5.0)), 12)
        -1.802809305415
    """
    k, n, a, b, loc = promote("betabinom.logpmf", k, n, a, b, loc)
    k = k_raw = k - loc
    inside = is_integer(k) & (k >= 0) & (k <= n)
    k = fnp.where(inside, k, 0.0)
    comb = -_q.log1p(n) - _sp.betaln(n - k + 1.0, k + 1.0)
    out = comb + _sp.betaln(k + a, n - k + b) - _sp.betaln(a, b)
    out = nan_at(fnp.where(inside, out, -numpy.inf), k_raw)
    ok = (n >= 0) & is_integer(n) & (a > 0) & (b > 0)
    return fnp.where(ok, out, numpy.nan)


def pmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """Probability mass function.

    Example:
        >>> from funcgrad.scipy.stats import betabinom
        >>> round(float(betabinom.pmf(0, 3, 2.0, 2.0)), 12)
        0.2
    """
    return fnp.exp(logpmf(k, n, a, b, loc))
