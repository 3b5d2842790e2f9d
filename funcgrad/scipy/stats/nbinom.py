"""The negative binomial distribution, as ``scipy.stats.nbinom`` (``n``, ``p``, ``loc``): the
number of failures before the ``n``-th success, support ``k = 0, 1, ...``.

Example:
    >>> from funcgrad.scipy.stats import nbinom
    >>> round(float(nbinom.pmf(2, 3, 0.5)), 12)
    0.1875
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.ops.elementwise import stop_gradient
from funcgrad.scipy import special as _sp
from funcgrad.scipy.stats._util import (
    discrete_quantile,
    is_integer,
    log_prob,
    nan_at,
    promote,
)

__all__ = ["logpmf", "pmf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"]


def _ok(out: Any, n: Any, p: Any) -> Any:
    return fnp.where((n > 0) & (p > 0) & (p <= 1), out, numpy.nan)


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """``log C(k + n - 1, k) + n log p + k log(1 - p)`` for integer ``k - loc >= 0``
    (``-inf`` elsewhere; nan unless ``n > 0`` and ``0 < p <= 1``; ``n`` may be real).

    Example:
        >>> from funcgrad.scipy.stats import nbinom
        >>> round(float(nbinom.logpmf(4, 2.5, 0.4)), 12)
        -2.134203965713
    """
    k, n, p, loc = promote("nbinom.logpmf", k, n, p, loc)
    k = k_raw = k - loc
    inside = is_integer(k) & (k >= 0)
    k = fnp.where(inside, k, 0.0)
    n_s = fnp.where(n > 0, n, 1.0)
    coeff = _sp.gammaln(n_s + k) - _sp.gammaln(k + 1.0) - _sp.gammaln(n_s)
    out = coeff + _sp.xlogy(n_s, p) + _sp.xlog1py(k, -p)
    out = nan_at(fnp.where(inside, out, -numpy.inf), k_raw)
    return _ok(out, n, p)


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """Probability mass function.

    Example:
        >>> from funcgrad.scipy.stats import nbinom
        >>> float(nbinom.pmf(0, 2, 0.5))
        0.25
    """
    return fnp.exp(logpmf(k, n, p, loc))


def _cdf_args(name: str, k: Any, n: Any, p: Any, loc: Any) -> tuple[Any, ...]:
    k, n, p, loc = promote(name, k, n, p, loc)
    k = stop_gradient(fnp.floor(k - loc))  # piecewise constant in k
    inside = (k >= 0) & (n > 0)
    return k, n, p, inside, fnp.where(inside, k, 0.0), fnp.where(inside, n, 1.0)


def cdf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """``P(K <= k) = betainc(n, floor(k - loc) + 1, p)``.

    Example:
        >>> from funcgrad.scipy.stats import nbinom
        >>> round(float(nbinom.cdf(1, 2, 0.5)), 12)
        0.5
    """
    k, n, p, inside, k_s, n_s = _cdf_args("nbinom.cdf", k, n, p, loc)
    out = _sp.betainc(n_s, k_s + 1.0, p)
    out = fnp.where(inside, out, fnp.where(k < 0, 0.0, 1.0).astype(out.dtype))
    return _ok(nan_at(out, k), n, p)


def sf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """``P(K > k) = betainc(floor(k - loc) + 1, n, 1 - p)``, accurate in the right tail.

    Example:
        >>> from funcgrad.scipy.stats import nbinom
        >>> round(float(nbinom.sf(1, 2, 0.5)), 12)
        0.5
    """
    k, n, p, inside, k_s, n_s = _cdf_args("nbinom.sf", k, n, p, loc)
    out = _sp.betainc(k_s + 1.0, n_s, 1.0 - p)
    out = fnp.where(inside, out, fnp.where(k < 0, 1.0, 0.0).astype(out.dtype))
    return _ok(nan_at(out, k), n, p)


def logcdf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """Log of the CDF (``log1p(-sf)`` where the CDF is near 1).

    Example:
        >>> from funcgrad.scipy.stats import nbinom
        >>> round(float(nbinom.logcdf(1, 2, 0.5)), 12)
        -0.69314718056
    """
    return log_prob(cdf(k, n, p, loc), sf(k, n, p, loc))


def logsf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """Log of the survival function.

    Example:
        >>> from funcgrad.scipy.stats import nbinom
        >>> round(float(nbinom.logsf(1, 2, 0.5)), 12)
        -0.69314718056
    """
    return log_prob(sf(k, n, p, loc), cdf(k, n, p, loc))


def _quantile(name: str, q: Any, n: Any, p: Any, loc: Any, upper: bool) -> Any:
    q, n, p, loc = promote(name, q, n, p, loc)
    ok = (n > 0) & (p > 0) & (p <= 1)
    n_s, p_s = fnp.where(ok, n, 1.0), fnp.where(ok, p, 0.5)
    z = _sp.ndtri(fnp.where((q > 0) & (q < 1), q, 0.5))
    z = -z if upper else z
    mean = n_s * (1.0 - p_s) / p_s
    sd = fnp.sqrt(mean / p_s)
    guess = mean + sd * z + (2.0 - p_s) / (6.0 * fnp.sqrt(n_s * (1.0 - p_s) + 1e-300)) * (
        z * z - 1.0) * sd

    def holds(k: Any) -> Any:
        return (sf(k, n_s, p_s) <= q) if upper else (cdf(k, n_s, p_s) >= q)

    k = discrete_quantile(holds, q, guess, 0.0, numpy.inf, upper)
    return _ok(k + loc, n, p)


def ppf(q: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """Quantile function: the smallest ``k`` with ``cdf(k) >= q``.

    Example:
        >>> from funcgrad.scipy.stats import nbinom
        >>> float(nbinom.ppf(0.3, 5, 0.4))
        5.0
    """
    return _quantile("nbinom.ppf", q, n, p, loc, upper=False)


def isf(q: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """Inverse survival function: the smallest ``k`` with ``sf(k) <= q``.

    Example:
        >>> from funcgrad.scipy.stats import nbinom
        >>> float(nbinom.isf(0.3, 5, 0.4))
        9.0
    """
    return _quantile("nbinom.isf", q, n, p, loc, upper=True)
