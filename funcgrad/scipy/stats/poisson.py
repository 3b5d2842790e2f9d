"""The Poisson distribution, as ``scipy.stats.poisson`` (``mu``, ``loc``).

``cdf`` is differentiable in ``mu`` (its derivative in ``k`` is zero).

Example:
    >>> from funcgrad.scipy.stats import poisson
    >>> round(float(poisson.pmf(2, 2.0)), 12)
    0.270670566473
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.ops.elementwise import stop_gradient
from funcgrad.scipy import special as _sp
from funcgrad.scipy.stats._util import is_integer, nan_at, promote

__all__ = ["logpmf", "pmf", "cdf"]


def logpmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """``k log(mu) - mu - gammaln(k + 1)`` for integer ``k - loc >= 0`` (``-inf`` elsewhere;
    nan for ``mu < 0``).

    Example:
        >>> from funcgrad.scipy.stats import poisson
        >>> round(float(poisson.logpmf(3, 1.5)), 12)
        -2.075364144904
    """
    k, mu, loc = promote("poisson.logpmf", k, mu, loc)
    k = k_raw = k - loc
    inside = is_integer(k) & (k >= 0)
    k = fnp.where(inside, k, 0.0)
    out = _sp.xlogy(k, mu) - mu - _sp.gammaln(k + 1.0)
    out = nan_at(fnp.where(inside, out, -numpy.inf), k_raw)
    return fnp.where(mu >= 0, out, numpy.nan)


def pmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """Probability mass function.

    Example:
        >>> from funcgrad.scipy.stats import poisson
        >>> round(float(poisson.pmf(0, 1.0)), 12)
        0.367879441171
    """
    return fnp.exp(logpmf(k, mu, loc))


def cdf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """``gammaincc(floor(k - loc) + 1, mu)`` for ``k - loc >= 0``, 0 below.

    Example:
        >>> from funcgrad.scipy.stats import poisson
        >>> round(float(poisson.cdf(2, 2.0)), 12)
        0.676676416183
    """
    k, mu, loc = promote("poisson.cdf", k, mu, loc)
    k = stop_gradient(fnp.floor(k - loc))  # piecewise constant in k
    inside = k >= 0
    out = _sp._gammaincc_const_a(fnp.where(inside, k, 0.0) + 1.0, mu)
    out = nan_at(fnp.where(inside, out, 0.0), k)
    return fnp.where(mu >= 0, out, numpy.nan)
