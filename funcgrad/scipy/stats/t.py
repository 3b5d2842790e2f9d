"""Student's t distribution, as ``scipy.stats.t`` (``df``, ``loc``, ``scale``).

``cdf``/``sf`` go through :func:`funcgrad.scipy.special.betainc` and are differentiable in
every argument, ``df`` included; ``df = inf`` gives the normal distribution.

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
    LOG_PI,
    log_prob,
    promote,
    scale_ok,
    standardize,
)

__all__ = ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf"]


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
    y = standardize(x, loc, scale)
    normal = df == numpy.inf
    dfs = fnp.where((df > 0) & fnp.logical_not(normal), df, 1.0)
    y2 = y * y
    # The tail mass I_z(df/2, 1/2) / 2, z = df / (df + y^2), beyond |y| = 1 or where z < 1/2:
    # there 1/2 - central would cancel. (z < 1/2 alone lost t.sf(10, 1000) = 8.7e-23 to 0: for
    # large df the tail is tiny long before y^2 reaches df.) Inside, the tail is at least
    # P(|N(0, 1)| > 1) / 2 = 0.16, so the central form loses no digits there.
    far = (dfs < y2) | (y2 > 1.0)
    # The cubic Taylor polynomial below is exact to rounding only while y^4 is (the quintic
    # term, relative): |y| < 1e-4 whatever df (at df = 1e10, y = 3 is not near 0).
    near0 = y2 < 1e-8 * fnp.minimum(dfs, 1.0)
    z = dfs / (dfs + fnp.where(far, y2, dfs))
    tail = 0.5 * _sp.betainc(0.5 * dfs, 0.5, z)
    # Otherwise half the central mass, I_w(1/2, df/2) / 2 with w = y^2 / (df + y^2) = 1 - z
    # computed directly; at y ~ 0 (where w^(-1/2) meets dw/dy = 0) its cubic Taylor
    # polynomial, exact to rounding there and right to the third derivative.
    y_mid = fnp.where(far | near0, fnp.sqrt(dfs), y)
    w = y_mid * y_mid / (dfs + y_mid * y_mid)
    central = fnp.sign(y_mid) * 0.5 * _sp.betainc(0.5, 0.5 * dfs, w)
    pdf0 = fnp.exp(_sp.gammaln(0.5 * (dfs + 1.0)) - _sp.gammaln(0.5 * dfs)
                   - 0.5 * (_q.log(dfs) + LOG_PI))
    y_0 = fnp.where(near0, y, 0.0)
    central = fnp.where(near0, pdf0 * (y_0 - (dfs + 1.0) / (6.0 * dfs) * y_0 ** 3), central)
    neg = y < 0
    cdf = fnp.where(far, fnp.where(neg, tail, 1.0 - tail), 0.5 + central)
    sf = fnp.where(far, fnp.where(neg, 1.0 - tail, tail), 0.5 - central)
    y_n = fnp.where(normal, y, 0.0)
    cdf = fnp.where(normal, _sp.ndtr(y_n), cdf)
    sf = fnp.where(normal, _sp.ndtr(-y_n), sf)
    bad = fnp.logical_not(df > 0)
    return fnp.where(bad, numpy.nan, cdf), fnp.where(bad, numpy.nan, sf), df, scale


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
