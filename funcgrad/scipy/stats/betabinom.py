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
from funcgrad.avals import get_aval
from funcgrad.core import Tracer
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy import special as _sp
from funcgrad.scipy.stats._util import discrete_quantile, is_integer, nan_at, promote

__all__ = ["logpmf", "pmf", "cdf", "sf", "ppf", "isf"]


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
    ok = (n >= 0) & is_integer(n) & (a > 0) & (b > 0)
    # harmless stand-ins where the parameters are invalid (nan there anyway): betaln of a
    # nonpositive shape is inf - inf, a warning
    n, a, b = fnp.where(ok, n, 0.0), fnp.where(ok, a, 1.0), fnp.where(ok, b, 1.0)
    k = k_raw = k - loc
    inside = is_integer(k) & (k >= 0) & (k <= n)
    k = fnp.where(inside, k, 0.0)
    comb = -_q.log1p(n) - _sp.betaln(n - k + 1.0, k + 1.0)
    out = comb + _sp.betaln(k + a, n - k + b) - _sp.betaln(a, b)
    out = nan_at(fnp.where(inside, out, -numpy.inf), k_raw)
    return fnp.where(ok, out, numpy.nan)


def pmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """Probability mass function.

    Example:
        >>> from funcgrad.scipy.stats import betabinom
        >>> round(float(betabinom.pmf(0, 3, 2.0, 2.0)), 12)
        0.2
    """
    return fnp.exp(logpmf(k, n, a, b, loc))


def _tail_sums(name: str, k: Any, n: Any, a: Any, b: Any, loc: Any) -> tuple[Any, Any, Any]:
    """``(lower, upper, ok)``: the pmf summed over ``0..floor(k - loc)`` and over the rest of
    ``0..n`` (SciPy sums the pmf too: there is no closed form short of a 3F2). The terms run
    along a new last axis of length ``max(n) + 1``, so ``n`` must be concrete."""
    if isinstance(n, Tracer):
        raise TypeError(f"betabinom.{name}: n must be concrete (it fixes how many pmf terms "
                        "are summed), not a traced value; close over it instead of passing "
                        "it through jit/vmap")
    k, n, a, b, loc = promote(f"betabinom.{name}", k, n, a, b, loc)
    ok = (n >= 0) & is_integer(n) & (a > 0) & (b > 0)
    n_host = numpy.asarray(n.tolist() if hasattr(n, "tolist") else n, dtype=numpy.float64)
    finite = n_host[numpy.isfinite(n_host) & (n_host >= 0)]
    top = int(finite.max()) if finite.size else 0
    j = fnp.arange(top + 1, dtype=get_aval(k).dtype)
    kk, nn, aa, bb = (fnp.expand_dims(v, -1) for v in fnp.broadcast_arrays(k - loc, n, a, b))
    terms = fnp.exp(logpmf(j, nn, aa, bb))
    low = j <= fnp.floor(kk)
    lower = fnp.sum(fnp.where(low, terms, 0.0), axis=-1)
    upper = fnp.sum(fnp.where(low, 0.0, terms), axis=-1)
    return lower, upper, ok


def cdf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """Cumulative distribution function: the pmf summed up to ``floor(k - loc)`` (0 below
    the support, 1 from ``n`` on; nan for invalid parameters). Differentiable in ``a`` and
    ``b``; ``n`` must be concrete.

    Example:
        >>> from funcgrad.scipy.stats import betabinom
        >>> round(float(betabinom.cdf(3, 10, 2.0, 5.0)), 12)
        0.653846153846
    """
    lower, _, ok = _tail_sums("cdf", k, n, a, b, loc)
    k, n, loc = promote("betabinom.cdf", k, n, loc)
    y = k - loc
    out = fnp.where(y < 0, 0.0, fnp.where(y >= n, 1.0, fnp.minimum(lower, 1.0)))
    return fnp.where(ok, nan_at(out, y), numpy.nan)


def sf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """Survival function ``P(K > k)``: the pmf summed above ``floor(k - loc)`` (so a small
    upper tail keeps its digits; SciPy takes ``1 - cdf``). ``n`` must be concrete.

    Example:
        >>> from funcgrad.scipy.stats import betabinom
        >>> round(float(betabinom.sf(3, 10, 2.0, 5.0)), 12)
        0.346153846154
    """
    _, upper, ok = _tail_sums("sf", k, n, a, b, loc)
    k, n, loc = promote("betabinom.sf", k, n, loc)
    y = k - loc
    out = fnp.where(y < 0, 1.0, fnp.where(y >= n, 0.0, fnp.minimum(upper, 1.0)))
    return fnp.where(ok, nan_at(out, y), numpy.nan)


def _quantile(name: str, q: Any, n: Any, a: Any, b: Any, loc: Any, upper: bool) -> Any:
    if isinstance(n, Tracer):
        raise TypeError(f"betabinom.{name}: n must be concrete (the CDF sums the pmf), not a "
                        "traced value")
    q, n, a, b, loc = promote(f"betabinom.{name}", q, n, a, b, loc)
    ok = (n >= 0) & is_integer(n) & (a > 0) & (b > 0)
    n_s, a_s, b_s = fnp.where(ok, n, 0.0), fnp.where(ok, a, 1.0), fnp.where(ok, b, 1.0)
    guess = n_s * a_s / (a_s + b_s)

    def holds(k: Any) -> Any:
        return (sf(k, n_s, a_s, b_s) <= q) if upper else (cdf(k, n_s, a_s, b_s) >= q)

    k = discrete_quantile(holds, q, guess, 0.0, n_s, upper)
    return fnp.where(ok, k + loc, numpy.nan)


def ppf(q: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """Quantile function: the smallest ``k`` with ``cdf(k) >= q`` (``loc - 1`` at ``q = 0``,
    ``n + loc`` at 1, nan outside ``[0, 1]``); ``n`` must be concrete.

    Example:
        >>> from funcgrad.scipy.stats import betabinom
        >>> float(betabinom.ppf(0.5, 10, 2.0, 5.0))
        3.0
    """
    return _quantile("ppf", q, n, a, b, loc, upper=False)


def isf(q: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """Inverse survival function: the smallest ``k`` with ``sf(k) <= q``.

    Example:
        >>> from funcgrad.scipy.stats import betabinom
        >>> float(betabinom.isf(0.1, 10, 2.0, 5.0))
        6.0
    """
    return _quantile("isf", q, n, a, b, loc, upper=True)
