"""Student's t distribution, as ``scipy.stats.t`` (``df``, ``loc``, ``scale``).

``cdf``/``sf`` go through :func:`funcgrad.scipy.special.betainc` (for ``df > 5e4``, where
``betainc``'s huge shape loses digits, Hill's normal-deviate expansion, ACM algorithm 395) and
``ppf``/``isf`` through its inverse (Cornish-Fisher beyond ``df = 5e4``); all are
differentiable in every argument, ``df`` included; ``df = inf`` gives the normal distribution.

Example:
    >>> from funcgrad.scipy.stats import t
    >>> round(float(t.logpdf(0.0, 1.0)), 12)   # Cauchy: -log(pi)
    -1.144729885849
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy import special as _sp
from funcgrad.scipy.stats._util import (
    HALF_LOG_2PI,
    log_prob,
    prob_ok,
    promote,
    scale_ok,
    standardize,
)

__all__ = ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"]


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density of Student's t with ``df`` degrees of freedom (nan unless ``df > 0``).

    Example:
        >>> from funcgrad.scipy.stats import t
        >>> round(float(t.logpdf(1.0, 3.0)), 12)
        -1.576252994527
    """
    x, df, loc, scale = promote("t.logpdf", x, df, loc, scale)
    y = standardize(x, loc, scale)
    # df = inf is the normal density (gammaln(inf) - gammaln(inf) would be nan); a finite
    # stand-in keeps nan out of the other branch's derivative.
    normal = df == numpy.inf
    dfs = fnp.where(normal, 1.0, df)
    half = 0.5 * (dfs + 1.0)
    # gammaln((df+1)/2) - gammaln(df/2) - log(pi)/2 = -betaln(df/2, 1/2): no cancellation of
    # two large gammaln at large df (betaln is accurate there).
    out = (-_sp.betaln(0.5 * dfs, 0.5) - 0.5 * _q.log(dfs)
           - _q.log(scale) - half * _q.log1p(y * y / dfs))
    out = fnp.where(normal, -0.5 * y * y - HALF_LOG_2PI - _q.log(scale), out)
    return scale_ok(fnp.where(df > 0, out, float("nan")), scale)


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Density of Student's t.

    Example:
        >>> from funcgrad.scipy.stats import t
        >>> round(float(t.pdf(0.0, 1.0)), 12)
        0.318309886184
    """
    return fnp.exp(logpdf(x, df, loc, scale))


def _cdf_sf(name: str, x: Any, df: Any, loc: Any, scale: Any) -> tuple[Any, Any, Any, Any]:
    """(cdf, sf, df, scale), each probability computed without cancellation."""
    x, df, loc, scale = promote(name, x, df, loc, scale)
    cdf, sf = _sp._t_cdf_sf(standardize(x, loc, scale), df)
    return cdf, sf, df, scale


def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Cumulative distribution function (``betainc`` on the tail beyond ``|y|``, or on the
    central mass near 0).

    Example:
        >>> from funcgrad.scipy.stats import t
        >>> round(float(t.cdf(1.0, 1.0)), 12)   # Cauchy: 3/4
        0.75
    """
    out, _, _, scale = _cdf_sf("t.cdf", x, df, loc, scale)
    return scale_ok(out, scale)


def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Survival function ``1 - cdf``, accurate in the right tail.

    Example:
        >>> from funcgrad.scipy.stats import t
        >>> print(f"{float(t.sf(1e4, 3.0)):.6e}")
        1.102658e-12
    """
    _, out, _, scale = _cdf_sf("t.sf", x, df, loc, scale)
    return scale_ok(out, scale)


def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the CDF.

    Example:
        >>> from funcgrad.scipy.stats import t
        >>> round(float(t.logcdf(0.0, 5.0)), 12)   # log(1/2)
        -0.69314718056
    """
    c, s, _, scale = _cdf_sf("t.logcdf", x, df, loc, scale)
    return scale_ok(log_prob(c, s), scale)


def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the survival function.

    Example:
        >>> from funcgrad.scipy.stats import t
        >>> round(float(t.logsf(0.0, 5.0)), 12)
        -0.69314718056
    """
    c, s, _, scale = _cdf_sf("t.logsf", x, df, loc, scale)
    return scale_ok(log_prob(s, c), scale)


def _quantile(name: str, q: Any, df: Any, loc: Any, scale: Any, upper: bool) -> Any:
    q, df, loc, scale = promote(name, q, df, loc, scale)
    out = loc + scale * _sp._t_quantile(name, q, df, upper)
    return prob_ok(scale_ok(out, scale), q)


def ppf(q: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Quantile function (inverse of :func:`cdf`): ``-inf`` at 0, ``inf`` at 1, nan outside
    ``[0, 1]``. The tail beyond ``q`` is solved (:func:`funcgrad.scipy.special.betaincinv`),
    so tiny ``q`` keeps its digits; differentiable in every argument.

    Example:
        >>> from funcgrad.scipy.stats import t
        >>> round(float(t.ppf(0.975, 3.0)), 10)   # a 95% interval's half width, df = 3
        3.1824463053
    """
    return _quantile("t.ppf", q, df, loc, scale, upper=False)


def isf(q: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function: ``x`` with ``sf(x) = q`` (``-ppf(q)`` for ``loc = 0``).

    Example:
        >>> from funcgrad.scipy.stats import t
        >>> round(float(t.isf(0.025, 3.0)), 10)
        3.1824463053
    """
    return _quantile("t.isf", q, df, loc, scale, upper=True)
