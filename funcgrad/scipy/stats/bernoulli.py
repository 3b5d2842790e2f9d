"""The Bernoulli distribution, as ``scipy.stats.bernoulli`` (``p``, ``loc``).

Example:
    >>> from funcgrad.scipy.stats import bernoulli
    >>> float(bernoulli.pmf(1, 0.25))
    0.25
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.ops.elementwise import stop_gradient
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy import special as _sp
from funcgrad.scipy.stats._util import nan_at, promote

__all__ = ["logpmf", "pmf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"]


def _p_ok(out: Any, p: Any) -> Any:
    return fnp.where((p >= 0) & (p <= 1), out, numpy.nan)


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """``log(p)`` at ``k - loc = 1``, ``log1p(-p)`` at 0, ``-inf`` elsewhere (nan unless
    ``0 <= p <= 1``).

    Example:
        >>> from funcgrad.scipy.stats import bernoulli
        >>> round(float(bernoulli.logpmf(0, 0.25)), 12)
        -0.287682072452
    """
    k, p, loc = promote("bernoulli.logpmf", k, p, loc)
    k = k_raw = k - loc
    inside = (k == 0) | (k == 1)
    k = fnp.where(inside, k, 0.0)
    out = fnp.where(inside, _sp.xlogy(k, p) + _sp.xlog1py(1.0 - k, -p), -numpy.inf)
    return _p_ok(nan_at(out, k_raw), p)


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """Probability mass function.

    Example:
        >>> from funcgrad.scipy.stats import bernoulli
        >>> float(bernoulli.pmf(0, 0.25))
        0.75
    """
    return fnp.exp(logpmf(k, p, loc))


def cdf(k: Any, p: Any, loc: Any = 0) -> Any:
    """0 below ``loc``, ``1 - p`` on ``[loc, loc + 1)``, 1 above.

    Example:
        >>> from funcgrad.scipy.stats import bernoulli
        >>> float(bernoulli.cdf(0.5, 0.25))
        0.75
    """
    k, p, loc = promote("bernoulli.cdf", k, p, loc)
    k = k - loc
    out = nan_at(fnp.where(k < 0, 0.0, fnp.where(k < 1, 1.0 - p, 1.0)), k)
    return _p_ok(out, p)


def ppf(q: Any, p: Any, loc: Any = 0) -> Any:
    """The smallest ``k`` with ``cdf(k) >= q``: ``loc - 1`` at ``q = 0``, ``loc`` for
    ``q <= 1 - p``, ``loc + 1`` above and at ``q = 1`` (nan outside ``[0, 1]``). Its derivative is zero.

    Example:
        >>> from funcgrad.scipy.stats import bernoulli
        >>> float(bernoulli.ppf(0.9, 0.25))
        1.0
    """
    q, p, loc = promote("bernoulli.ppf", q, p, loc)
    q, p = stop_gradient(q), stop_gradient(p)
    # q = 1 is the top of the support, 1, even when p = 0 makes P(k = 1) zero (SciPy).
    k = fnp.where(q == 0, -1.0, fnp.where((q <= 1.0 - p) & (q < 1), 0.0, 1.0)).astype(q.dtype)
    out = fnp.where((q >= 0) & (q <= 1), k + loc, numpy.nan)
    return _p_ok(out, p)


def sf(k: Any, p: Any, loc: Any = 0) -> Any:
    """1 below ``loc``, ``p`` on ``[loc, loc + 1)``, 0 above.

    Example:
        >>> from funcgrad.scipy.stats import bernoulli
        >>> float(bernoulli.sf(0.5, 0.25))
        0.25
    """
    k, p, loc = promote("bernoulli.sf", k, p, loc)
    k = k - loc
    out = nan_at(fnp.where(k < 0, 1.0, fnp.where(k < 1, p, 0.0)), k)
    return _p_ok(out, p)


def logcdf(k: Any, p: Any, loc: Any = 0) -> Any:
    """Log of the CDF (``log1p(-p)`` on the support's first point).

    Example:
        >>> from funcgrad.scipy.stats import bernoulli
        >>> round(float(bernoulli.logcdf(0, 0.25)), 12)
        -0.287682072452
    """
    k, p, loc = promote("bernoulli.logcdf", k, p, loc)
    k = k - loc
    inside = (k >= 0) & (k < 1)
    mid = _q.log1p(-fnp.where((p >= 0) & (p <= 1), p, 0.0))
    out = nan_at(fnp.where(k < 0, -numpy.inf, fnp.where(inside, mid, 0.0)), k)
    return _p_ok(out, p)


def logsf(k: Any, p: Any, loc: Any = 0) -> Any:
    """Log of the survival function.

    Example:
        >>> from funcgrad.scipy.stats import bernoulli
        >>> round(float(bernoulli.logsf(0, 0.25)), 12)
        -1.38629436112
    """
    return _q.log(sf(k, p, loc))


def isf(q: Any, p: Any, loc: Any = 0) -> Any:
    """The smallest ``k`` with ``sf(k) <= q``: ``loc + 1`` at ``q = 0``, ``loc`` for
    ``p <= q < 1``, ``loc - 1`` at ``q = 1`` (nan outside ``[0, 1]``; no derivative).

    Example:
        >>> from funcgrad.scipy.stats import bernoulli
        >>> float(bernoulli.isf(0.3, 0.25))
        0.0
    """
    q, p, loc = promote("bernoulli.isf", q, p, loc)
    q, p = stop_gradient(q), stop_gradient(p)
    k = fnp.where(q == 1, -1.0, fnp.where((q >= p) & (q > 0), 0.0, 1.0)).astype(q.dtype)
    out = fnp.where((q >= 0) & (q <= 1), k + loc, numpy.nan)
    return _p_ok(out, p)
