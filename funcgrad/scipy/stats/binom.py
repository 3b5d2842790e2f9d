"""The binomial distribution, as ``scipy.stats.binom`` (``n``, ``p``, ``loc``).

Example:
    >>> from funcgrad.scipy.stats import binom
    >>> round(float(binom.pmf(1, 2, 0.5)), 12)
    0.5
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.scipy import special as _sp
from funcgrad.scipy.stats._util import is_integer, promote

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """``log C(n, k) + k log p + (n - k) log(1 - p)`` for integer ``0 <= k - loc <= n``
    (``-inf`` elsewhere; nan unless ``0 <= p <= 1`` and ``n`` is a non-negative integer).

    Example:
        >>> from funcgrad.scipy.stats import binom
        >>> round(float(binom.logpmf(3, 10, 0.3)), 12)
        -1.321151277767
    """
    k, n, p, loc = promote("binom.logpmf", k, n, p, loc)
    k = k - loc
    inside = is_integer(k) & (k >= 0) & (k <= n)
    k = fnp.where(inside, k, 0.0)
    # log C(n, k) = -log(n + 1) - betaln(n - k + 1, k + 1): no cancellation of large gammaln.
    comb = -fnp.log1p(n) - _sp.betaln(n - k + 1.0, k + 1.0)
    out = comb + _sp.xlogy(k, p) + _sp.xlog1py(n - k, -p)
    out = fnp.where(inside, out, -numpy.inf)
    ok = (p >= 0) & (p <= 1) & (n >= 0) & is_integer(n)
    return fnp.where(ok, out, numpy.nan)


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """Probability mass function.

    Example:
        >>> from funcgrad.scipy.stats import binom
        >>> round(float(binom.pmf(3, 10, 0.3)), 12)
        0.266827932
    """
    return fnp.exp(logpmf(k, n, p, loc))


