"""Student's t distribution: stdtr (the CDF) and stdtrit (its inverse), as
``scipy.special``; the one copy of the Student-t CDF/quantile code, which
``funcgrad.scipy.stats.t`` builds on (loc/scale and the density are its own)."""

from __future__ import annotations

import math
from typing import Any

import numpy

from funcgrad.scipy import _quiet as _q
from funcgrad.scipy.special._common import _floats, _fnpm
from funcgrad.scipy.special._gamma import betaln, gammaln
from funcgrad.scipy.special._incomplete_beta import _betaincinv_pair, betainc
from funcgrad.scipy.special._normal import ndtr, ndtri

# Beyond this many degrees of freedom the CDF and quantiles use asymptotic expansions in
# 1/df (accurate to rounding there), not betainc and its inverse at a huge shape df/2.
_BIG_DF = 5e4
_LOG_PI = math.log(math.pi)


def _t_cdf_sf(y: Any, df: Any) -> tuple[Any, Any]:
    """(cdf, sf) of the standard t at ``y`` (float arrays of one dtype), each computed without
    cancellation; nan unless ``df > 0``, the normal distribution at ``df = inf``."""
    fnp = _fnpm
    # (funcgrad's comparisons: NumPy's give a NumPy scalar for a 0-d df, which alone would go
    # to the default device, away from the host arrays beside it)
    normal = fnp.equal(df, numpy.inf)
    dfs = fnp.where(fnp.greater(df, 0) & fnp.logical_not(normal), df, 1.0)
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
    tail = 0.5 * betainc(0.5 * dfs, 0.5, z)
    # Otherwise half the central mass, I_w(1/2, df/2) / 2 with w = y^2 / (df + y^2) = 1 - z
    # computed directly; at y ~ 0 (where w^(-1/2) meets dw/dy = 0) its cubic Taylor
    # polynomial, exact to rounding there and right to the third derivative.
    y_mid = fnp.where(far | near0, fnp.sqrt(dfs), y)
    w = y_mid * y_mid / (dfs + y_mid * y_mid)
    central = fnp.sign(y_mid) * 0.5 * betainc(0.5, 0.5 * dfs, w)
    pdf0 = fnp.exp(gammaln(0.5 * (dfs + 1.0)) - gammaln(0.5 * dfs)
                   - 0.5 * (_q.log(dfs) + _LOG_PI))
    y_0 = fnp.where(near0, y, 0.0)
    central = fnp.where(near0, pdf0 * (y_0 - (dfs + 1.0) / (6.0 * dfs) * y_0 ** 3), central)
    neg = y < 0
    cdf = fnp.where(far, fnp.where(neg, tail, 1.0 - tail), 0.5 + central)
    sf = fnp.where(far, fnp.where(neg, 1.0 - tail, tail), 0.5 - central)
    # Huge df: Hill's normal deviate w(y), cdf = ndtr(w) (the relative error of its expansion
    # is O(df^-4)); written as y * sqrt(...) so it is smooth through y = 0.
    big = (df > _BIG_DF) & fnp.logical_not(normal)
    dfb = fnp.where(big, df, 2.0 * _BIG_DF)
    yb = fnp.where(big & fnp.logical_not(fnp.isinf(y)), y, 0.0)  # +-inf is put back below
    u = yb * yb / dfb
    small_u = u < 1e-8
    u_s = fnp.where(small_u, 1.0, u)
    log1p_ratio = fnp.where(small_u, 1.0 - 0.5 * u, _q.log1p(u_s) / u_s)  # log1p(u) / u
    ah = dfb - 0.5
    bh = 48.0 * ah * ah
    z = ah * u * log1p_ratio  # ah * log1p(y^2 / df)
    corr = ((((-0.4 * z - 3.3) * z - 24.0) * z - 85.5) / (0.8 * z * z + 100.0 + bh)
            + z + 3.0) / bh + 1.0
    w = yb * fnp.sqrt(ah * log1p_ratio / dfb) * corr
    w = fnp.where(fnp.isinf(y), y, w)
    y_n = fnp.where(normal, y, w)
    normal = normal | big
    cdf = fnp.where(normal, ndtr(y_n), cdf)
    sf = fnp.where(normal, ndtr(-y_n), sf)
    bad = fnp.logical_not(df > 0)
    return fnp.where(bad, numpy.nan, cdf), fnp.where(bad, numpy.nan, sf)


def _t_quantile(name: str, q: Any, df: Any, upper: bool) -> Any:
    """The standard t's quantile (``upper``: the inverse survival function) at ``q`` (float
    arrays of one dtype); nan unless ``df > 0`` (``q`` outside ``[0, 1]`` is the caller's)."""
    fnp = _fnpm
    p, pc = (1.0 - q, q) if upper else (q, 1.0 - q)
    normal = df == numpy.inf
    big = (df > _BIG_DF) & fnp.logical_not(normal)
    ok = (df > 0) & fnp.logical_not(normal | big)
    dfs = fnp.where(ok, df, 1.0)
    tail = fnp.minimum(p, pc)
    neg = p < pc
    # Near the median y = s + (df + 1) / (6 df) s^3, s = (p - 1/2) / pdf(0), exact to rounding
    # while s^4 is negligible (as the CDF's cubic there); the tail inversion below has an
    # infinite slope at the median (sqrt of the beta quantile near 0).
    pdf0 = fnp.exp(-betaln(0.5 * dfs, 0.5) - 0.5 * _q.log(dfs))
    # p - 1/2 from the probability as given (exact there; 1 - q is rounded).
    s = ((0.5 - pc) if upper else (p - 0.5)) / pdf0
    near = s * s < 1e-8 * fnp.minimum(dfs, 1.0)
    s_n = fnp.where(near, s, 0.0)
    y_near = s_n + (dfs + 1.0) / (6.0 * dfs) * s_n ** 3
    # Elsewhere the tail mass 2 tail = I_z(df/2, 1/2), z = df / (df + y^2): y^2 = df (1 - z) / z
    # with 1 - z from the inverse itself (accurate near the median, where z is near 1).
    tail_f = fnp.where(near, 0.25, tail)
    z, zc = _betaincinv_pair(name, 0.5 * dfs, fnp.full_like(dfs, 0.5), 2.0 * tail_f,
                             1.0 - 2.0 * tail_f)
    mag = fnp.sqrt(_q.div(dfs * zc, z))
    # Far tail: z underflows long before y overflows (z ~ df / y^2); there the leading term
    # 2 tail = z^(df/2) / ((df/2) B(df/2, 1/2)) gives log|y| directly, to O(z) relatively.
    log_z0 = (2.0 / dfs) * (_q.log(2.0 * tail_f) + _q.log(0.5 * dfs)
                            + betaln(0.5 * dfs, 0.5))
    far = log_z0 < -70.0
    log_mag = 0.5 * (_q.log(dfs) - fnp.where(far, log_z0, 0.0))
    overflow = log_mag > 709.0  # exp would warn; the quantile is beyond the largest float
    mag_far = fnp.where(overflow, numpy.inf, fnp.exp(fnp.where(overflow, 0.0, log_mag)))
    mag = fnp.where(far, mag_far, mag)
    y = fnp.where(near, y_near, fnp.where(neg, -mag, mag))
    # Huge df: the Cornish-Fisher expansion about the normal quantile (A&S 26.7.5), O(df^-5).
    dfb = fnp.where(big, df, 2.0 * _BIG_DF)
    z_tail = ndtri(fnp.where(big | normal, tail, 0.25))  # <= 0
    zn = fnp.where(neg, z_tail, -z_tail)
    z2 = zn * zn
    g1 = (z2 + 1.0) * zn / 4.0
    g2 = ((5.0 * z2 + 16.0) * z2 + 3.0) * zn / 96.0
    g3 = (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * zn / 384.0
    g4 = ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * zn / 92160.0
    y_big = zn + (g1 + (g2 + (g3 + g4 / dfb) / dfb) / dfb) / dfb
    y = fnp.where(big, y_big, fnp.where(normal, zn, y))
    return fnp.where(df > 0, y, numpy.nan)


def stdtr(df: Any, t: Any) -> Any:
    """Student's t cumulative distribution function with ``df > 0`` degrees of freedom (real
    ``df``; ``inf`` is the normal distribution; nan otherwise), as ``scipy.special.stdtr``.

    Both tails keep their digits (``stdtr(3, -1e4)`` is 1.1e-12, not a rounded 0);
    differentiable in ``t`` and ``df``.

    Example:
        >>> from funcgrad.scipy.special import stdtr
        >>> float(stdtr(1.0, 1.0))   # Cauchy: 3/4
        0.75
        >>> print(f"{float(stdtr(3.0, -1e4)):.6e}")
        1.102658e-12
    """
    df, t = _floats("stdtr", df, t)
    df, t = _fnpm.broadcast_arrays(_fnpm.asarray(df), _fnpm.asarray(t))
    return _t_cdf_sf(t, df)[0]


def stdtrit(df: Any, p: Any) -> Any:
    """The inverse of :func:`stdtr` in ``t``: the ``p`` quantile of Student's t with ``df``
    degrees of freedom (``-inf`` at 0, ``inf`` at 1, nan outside ``[0, 1]`` or unless
    ``df > 0``), as ``scipy.special.stdtrit``; differentiable in ``p`` and ``df``.

    Example:
        >>> from funcgrad.scipy.special import stdtrit
        >>> round(float(stdtrit(3.0, 0.975)), 10)   # a 95% interval's half width, df = 3
        3.1824463053
    """
    df, p = _floats("stdtrit", df, p)
    df, p = _fnpm.broadcast_arrays(_fnpm.asarray(df), _fnpm.asarray(p))
    y = _t_quantile("stdtrit", p, df, upper=False)
    return _fnpm.where((p >= 0) & (p <= 1), y, numpy.nan)
