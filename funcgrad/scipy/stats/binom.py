"""The binomial distribution, as ``scipy.stats.binom`` (``n``, ``p``, ``loc``).

``cdf``/``sf`` are differentiable in ``p`` (their derivatives in the integers ``k`` and ``n``
are zero).

Example:
    >>> from funcgrad.scipy.stats import binom
    >>> round(float(binom.pmf(1, 2, 0.5)), 12)
    0.5
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy import special as _sp
from funcgrad.scipy.stats._util import (
    discrete_quantile,
    is_integer,
    log_prob,
    nan_at,
    promote,
)

__all__ = ["logpmf", "pmf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"]


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """``log C(n, k) + k log p + (n - k) log(1 - p)`` for integer ``0 <= k - loc <= n``
    (``-inf`` elsewhere; nan unless ``0 <= p <= 1`` and ``n`` is a non-negative integer).

    Example:
        >>> from funcgrad.scipy.stats import binom
        >>> round(float(binom.logpmf(3, 10, 0.3)), 12)
        -1.321151277767
    """
    k, n, p, loc = promote("binom.logpmf", k, n, p, loc)
    ok = (p >= 0) & (p <= 1) & (n >= 0) & is_integer(n)
    n = fnp.where(ok, n, 0.0)  # a stand-in where invalid (betaln at negative n: inf - inf)
    k = k_raw = k - loc
    inside = is_integer(k) & (k >= 0) & (k <= n)
    k = fnp.where(inside, k, 0.0)
    # log C(n, k) = -log(n + 1) - betaln(n - k + 1, k + 1): no cancellation of large gammaln.
    comb = -_q.log1p(n) - _sp.betaln(n - k + 1.0, k + 1.0)
    out = comb + _sp.xlogy(k, p) + _sp.xlog1py(n - k, -p)
    out = nan_at(fnp.where(inside, out, -numpy.inf), k_raw)
    return fnp.where(ok, out, numpy.nan)


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """Probability mass function.

    Example:
        >>> from funcgrad.scipy.stats import binom
        >>> round(float(binom.pmf(3, 10, 0.3)), 12)
        0.266827932
    """
    return fnp.exp(logpmf(k, n, p, loc))


def _cdf_args(name: str, k: Any, n: Any, p: Any, loc: Any) -> tuple[Any, ...]:
    k, n, p, loc = promote(name, k, n, p, loc)
    k = fnp.floor(k - loc)
    inside = (k >= 0) & (k < n)
    k_s = fnp.where(inside, k, 0.0)
    n_s = fnp.where(inside, n, 1.0)
    ok = (p >= 0) & (p <= 1) & (n >= 0) & is_integer(n)
    return k, n, p, inside, k_s, n_s, ok


def cdf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """``P(K <= k) = betainc(n - k, k + 1, 1 - p)`` for ``0 <= k < n`` (``k`` floored), 0
    below, 1 from ``n`` on.

    Example:
        >>> from funcgrad.scipy.stats import binom
        >>> round(float(binom.cdf(1, 2, 0.5)), 12)
        0.75
    """
    k, n, p, inside, k_s, n_s, ok = _cdf_args("binom.cdf", k, n, p, loc)
    out = _sp._betainc_const_ab(n_s - k_s, k_s + 1.0, 1.0 - p)
    out = nan_at(fnp.where(inside, out, fnp.where(k < 0, 0.0, 1.0).astype(out.dtype)), k)
    return fnp.where(ok, out, numpy.nan)


def sf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """``P(K > k) = betainc(k + 1, n - k, p)``, accurate in the right tail.

    Example:
        >>> from funcgrad.scipy.stats import binom
        >>> round(float(binom.sf(1, 2, 0.5)), 12)
        0.25
    """
    k, n, p, inside, k_s, n_s, ok = _cdf_args("binom.sf", k, n, p, loc)
    out = _sp._betainc_const_ab(k_s + 1.0, n_s - k_s, p)
    out = nan_at(fnp.where(inside, out, fnp.where(k < 0, 1.0, 0.0).astype(out.dtype)), k)
    return fnp.where(ok, out, numpy.nan)


def logcdf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """Log of the CDF (``log1p(-sf)`` where the CDF is near 1).

    Example:
        >>> from funcgrad.scipy.stats import binom
        >>> round(float(binom.logcdf(1, 2, 0.5)), 12)
        -0.287682072452
    """
    return log_prob(cdf(k, n, p, loc), sf(k, n, p, loc))


def logsf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """Log of the survival function.

    Example:
        >>> from funcgrad.scipy.stats import binom
        >>> round(float(binom.logsf(1, 2, 0.5)), 12)
        -1.38629436112
    """
    return log_prob(sf(k, n, p, loc), cdf(k, n, p, loc))


def _quantile(name: str, q: Any, n: Any, p: Any, loc: Any, upper: bool) -> Any:
    q, n, p, loc = promote(name, q, n, p, loc)
    ok = (p >= 0) & (p <= 1) & (n >= 0) & is_integer(n)
    n_s, p_s = fnp.where(ok, n, 1.0), fnp.where(ok, p, 0.5)
    z = _sp.ndtri(fnp.where((q > 0) & (q < 1), q, 0.5))
    z = -z if upper else z
    sd = fnp.sqrt(n_s * p_s * (1.0 - p_s))
    guess = n_s * p_s + sd * z + (1.0 - 2.0 * p_s) * (z * z - 1.0) / 6.0

    def holds(k: Any) -> Any:
        return (sf(k, n_s, p_s) <= q) if upper else (cdf(k, n_s, p_s) >= q)

    k = discrete_quantile(holds, q, guess, 0.0, n_s, upper)
    return fnp.where(ok, k + loc, numpy.nan)


def ppf(q: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """Quantile function: the smallest ``k`` with ``cdf(k) >= q`` (``loc - 1`` at ``q = 0``,
    ``n + loc`` at 1, nan outside ``[0, 1]``).

    Example:
        >>> from funcgrad.scipy.stats import binom
        >>> float(binom.ppf(0.3, 10, 0.3))
        2.0
    """
    return _quantile("binom.ppf", q, n, p, loc, upper=False)


def isf(q: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """Inverse survival function: the smallest ``k`` with ``sf(k) <= q``.

    Example:
        >>> from funcgrad.scipy.stats import binom
        >>> float(binom.isf(0.3, 10, 0.3))
        4.0
    """
    return _quantile("binom.isf", q, n, p, loc, upper=True)
