"""Elliptic integrals: the complete ellipk, ellipkm1, ellipe, the incomplete ellipkinc,
ellipeinc (through Carlson's R_F and R_D), and the arithmetic-geometric mean agm."""

from __future__ import annotations

import math
from typing import Any

import numpy

from funcgrad.avals import get_aval
from funcgrad.ops.custom_derivatives import custom_jvp
from funcgrad.scipy.special._carlson import _rd, _rf, _scaled
from funcgrad.scipy.special._common import _back, _f64, _floats, _fnp, _fnpm

# =============================================================================================
# Complete elliptic integrals (parameter m = k^2, as SciPy): the arithmetic-geometric mean


def _agm_ke(m: Any, b: Any) -> tuple[Any, Any]:
    """(K, E) for ``0 <= m < 1`` given ``b = sqrt(1 - m)`` (passed separately, so that
    ``ellipkm1``'s tiny ``1 - m`` keeps its digits): K = pi / (2 AGM(1, b)) and
    E = K (1 - sum_n 2^(n-1) c_n^2), c_0^2 = m, c_(n+1) = (a_n - b_n) / 2. Quadratic
    convergence: twenty steps settle even b = 1e-300."""
    fnp = _fnp()
    a_n = fnp.ones_like(b)
    b_n = b
    total = 0.5 * m
    scale = 0.5
    for _ in range(20):
        c = 0.5 * (a_n - b_n)
        a_n, b_n = 0.5 * (a_n + b_n), fnp.sqrt(a_n * b_n)
        scale = scale * 2.0
        total = total + scale * c * c
    k = math.pi / (2.0 * a_n)
    return k, k * (1.0 - total)


def _ellip_values(m: Any, p: Any) -> tuple[Any, Any]:
    """(K(m), E(m)) with ``p = 1 - m`` given too: SciPy's values for every real m (m < 0 by
    DLMF 19.7.5, K(m) = K(m') / sqrt(1 - m), E(m) = sqrt(1 - m) E(m'), m' = -m / (1 - m)
    in [0, 1); inf / 1 at m = 1; nan above)."""
    fnp = _fnp()
    neg = m < 0
    ok = (p > 0) & (p < numpy.inf) & ~neg
    fin_neg = neg & (m > -numpy.inf)
    p_n = fnp.where(fin_neg, p, 2.0)
    m_s = fnp.where(ok, m, fnp.where(fin_neg, -m / p_n, 0.5))
    b_s = fnp.where(ok, fnp.sqrt(fnp.where(ok, p, 0.5)), fnp.where(fin_neg, 1.0 / fnp.sqrt(p_n), 0.5))
    k, e = _agm_ke(m_s, b_s)
    root = fnp.sqrt(p_n)
    k = fnp.where(fin_neg, k / root, k)
    e = fnp.where(fin_neg, e * root, e)
    k = fnp.where(m == -numpy.inf, 0.0, fnp.where(p == 0, numpy.inf, k))
    e = fnp.where(m == -numpy.inf, numpy.inf, fnp.where(p == 0, 1.0, e))
    bad = (p < 0) | fnp.isnan(m) | fnp.isnan(p) | ((p == numpy.inf) & ~(m == -numpy.inf))
    return fnp.where(bad, numpy.nan, k), fnp.where(bad, numpy.nan, e)


# Near m = 0 the derivatives' closed forms cancel: there their Taylor series,
# K = pi/2 sum_n c_n m^n, E = pi/2 sum_n c_n m^n / (1 - 2n), c_n = ((2n)! / (4^n n!^2))^2.
_ELLIP_C = tuple((math.comb(2 * n, n) / 4.0 ** n) ** 2 for n in range(12))


def _ellip_dm_series(m: Any, which: int) -> Any:
    acc: Any = 0.0
    for n in range(11, 0, -1):
        c = n * _ELLIP_C[n] / (1.0 if which == 0 else (1.0 - 2.0 * n))
        acc = acc * m + c
    return 0.5 * math.pi * acc


@custom_jvp
def _ellip_k(m: Any, p: Any) -> Any:
    return _ellip_values(m, p)[0]


@custom_jvp
def _ellip_e(m: Any, p: Any) -> Any:
    return _ellip_values(m, p)[1]


def _ellip_dm(which: int, m: Any, p: Any) -> Any:
    """dK/dm = (E - p K) / (2 m p), dE/dm = (E - K) / (2 m); the series below |m| = 1e-2."""
    fnp = _fnp()
    near = fnp.abs(m) < 1e-2
    m_f = fnp.where(near, 0.5, m)
    p_f = fnp.where(near, 0.5, p)
    k, e = _ellip_k(m_f, p_f), _ellip_e(m_f, p_f)
    far = (e - p_f * k) / (2.0 * m_f * p_f) if which == 0 else (e - k) / (2.0 * m_f)
    return fnp.where(near, _ellip_dm_series(fnp.where(near, m, 0.0), which), far)


@_ellip_k.defjvp
def _ellip_k_jvp(primals: tuple, tangents: tuple) -> tuple:
    # m and p = 1 - m are one variable (the callers make one from the other, so tp = -tm):
    # its tangent is (tm - tp) / 2.
    (m, p), (tm, tp) = primals, tangents
    return _ellip_k(m, p), _ellip_dm(0, m, p) * (0.5 * (tm - tp))


@_ellip_e.defjvp
def _ellip_e_jvp(primals: tuple, tangents: tuple) -> tuple:
    (m, p), (tm, tp) = primals, tangents
    return _ellip_e(m, p), _ellip_dm(1, m, p) * (0.5 * (tm - tp))


def ellipk(m: Any) -> Any:
    """Complete elliptic integral of the first kind ``K(m) = int_0^(pi/2) (1 - m sin^2 t)^(-1/2)
    dt`` (parameter ``m = k^2``), as ``scipy.special.ellipk``: every ``m < 1`` (``inf`` at 1,
    nan above). Derivative ``(E(m) - (1 - m) K(m)) / (2 m (1 - m))`` (``pi/8`` at 0).

    Example:
        >>> import funcgrad
        >>> from funcgrad.scipy.special import ellipk
        >>> round(float(ellipk(0.5)), 12), round(float(funcgrad.grad(ellipk)(0.0)), 12)
        (1.854074677301, 0.392699081699)
    """
    (m,) = _floats("ellipk", m)
    m = _fnp().asarray(m)
    md = _f64(m)
    return _back(_ellip_k(md, 1.0 - md), m)


def ellipkm1(p: Any) -> Any:
    """``K(1 - p)``, for ``m`` near 1 without the rounding of ``1 - m``, as
    ``scipy.special.ellipkm1`` (``inf`` at ``p = 0``, nan below).

    Example:
        >>> from funcgrad.scipy.special import ellipkm1
        >>> round(float(ellipkm1(1e-20)), 10)
        24.4121452911
    """
    (p,) = _floats("ellipkm1", p)
    p = _fnp().asarray(p)
    pd = _f64(p)
    # m = 1 - p; the rule differentiates through the pair (m, p).
    return _back(_ellip_k(_fnp().where(pd == numpy.inf, -numpy.inf, 1.0 - pd), pd), p)


def ellipe(m: Any) -> Any:
    """Complete elliptic integral of the second kind ``E(m) = int_0^(pi/2) (1 - m sin^2 t)^(1/2)
    dt``, as ``scipy.special.ellipe`` (every ``m <= 1``; nan above). Derivative
    ``(E(m) - K(m)) / (2 m)`` (``-pi/8`` at 0).

    Example:
        >>> from funcgrad.scipy.special import ellipe
        >>> round(float(ellipe(0.5)), 12)
        1.350643881048
    """
    (m,) = _floats("ellipe", m)
    m = _fnp().asarray(m)
    md = _f64(m)
    return _back(_ellip_e(md, 1.0 - md), m)


def agm(a: Any, b: Any) -> Any:
    """The arithmetic-geometric mean of ``a`` and ``b``, as ``scipy.special.agm`` (both
    negative: ``-agm(-a, -b)``; opposite signs: nan; a zero: 0). Thirty steps of the
    iteration (quadratic convergence settles even a ratio of 1e600), differentiable; a zero
    beside any finite value gives 0.

    Example:
        >>> from funcgrad.scipy.special import agm
        >>> round(float(agm(24.0, 6.0)), 12)
        13.458171481726
    """
    a, b = _floats("agm", a, b)
    fnp = _fnp()
    a, b = fnp.broadcast_arrays(fnp.asarray(a), fnp.asarray(b))
    neg = (a < 0) & (b < 0)
    sa, sb = fnp.where(neg, -a, a), fnp.where(neg, -b, b)
    ok = (sa > 0) & (sb > 0) & fnp.isfinite(sa) & fnp.isfinite(sb)
    x, y = fnp.where(ok, sa, 1.0), fnp.where(ok, sb, 1.0)
    for _ in range(30):
        # sqrt(x) sqrt(y): x * y itself could overflow or underflow.
        x, y = 0.5 * x + 0.5 * y, fnp.sqrt(x) * fnp.sqrt(y)
    out = fnp.where(ok, x, numpy.nan)
    inf = ((sa == numpy.inf) & (sb > 0)) | ((sb == numpy.inf) & (sa > 0))
    out = fnp.where(inf, numpy.inf, out)
    zero = (((a == 0) & (fnp.abs(b) < numpy.inf))  # beside any finite one, as SciPy
            | ((b == 0) & (fnp.abs(a) < numpy.inf)))
    out = fnp.where(zero, 0.0, out)
    return fnp.where(neg, -out, out)


# =============================================================================================
# Incomplete elliptic integrals (Carlson's forms, DLMF 19.25.5 / 19.25.7), with the amplitude
# reduced to |phi| <= pi/2 and whole half-periods added as complete integrals.


def _incomplete(name: str, phi: Any, m: Any) -> tuple[Any, Any, Any, Any, Any, Any, Any]:
    """(like, phi, m, s, rf, ok, n): float64 ``phi``, ``m`` broadcast; ``s = sin(phi_r)`` and
    ``R_F(cos^2, 1 - m sin^2, 1)`` of the reduced amplitude ``phi_r = phi - n pi``; ``ok``
    where the reduced formula applies (finite ``phi``, ``1 - m sin^2 >= 0``)."""
    fnp = _fnpm
    phi, m = _floats(name, phi, m)
    phi, m = fnp.broadcast_arrays(fnp.asarray(phi), fnp.asarray(m))
    like = phi
    phi, m = _f64(phi), _f64(m)
    fin = fnp.isfinite(phi) & fnp.isfinite(m)
    phi_f, m_f = fnp.where(fin, phi, 0.0), fnp.where(fin, m, 0.0)
    n = fnp.round(phi_f / math.pi)
    r = phi_f - n * math.pi
    s, c = fnp.sin(r), fnp.cos(r)
    # 1 - m sin^2 as cos^2 + (1 - m) sin^2: no cancellation near m = 1, phi = pi/2 (where
    # F(phi | 1) = atanh(sin phi) lives on cos^2 alone). m > 1 is nan, as SciPy.
    d = c * c + (1.0 - m_f) * s * s
    ok = fin & (m <= 1.0) & ~((c == 0) & (d == 0))
    c2, ds = fnp.where(ok, c * c, 1.0), fnp.where(ok, d, 1.0)
    rf = _scaled((c2, ds, fnp.ones_like(c2)), -0.5, _rf)
    return like, phi, m, fnp.where(ok, s, 0.0), rf, ok, fnp.where(fin, n, 0.0)


def ellipkinc(phi: Any, m: Any) -> Any:
    """Incomplete elliptic integral of the first kind
    ``F(phi | m) = int_0^phi (1 - m sin^2 t)^(-1/2) dt``, as ``scipy.special.ellipkinc``:
    ``sin(phi) R_F(cos^2 phi, 1 - m sin^2 phi, 1)`` on ``|phi| <= pi/2`` plus ``2 n K(m)`` for
    the ``n`` half-periods beyond (nan where ``m sin^2 phi > 1``; ``inf`` at ``phi = +-pi/2``,
    ``m = 1``); differentiable in ``phi`` and ``m``.

    Example:
        >>> from funcgrad.scipy.special import ellipkinc
        >>> round(float(ellipkinc(1.0, 0.5)), 12)
        1.083216772845
    """
    fnp = _fnpm
    like, phi, m, s, rf, ok, n = _incomplete("ellipkinc", phi, m)
    out = s * rf
    kfull = n != 0
    k = _ellip_k(fnp.where(kfull, m, 0.5), 1.0 - fnp.where(kfull, m, 0.5))
    out = fnp.where(kfull, out + 2.0 * n * k, out)
    # F(+-pi/2 | 1) is +-inf; an infinite amplitude gives +-inf (m <= 1), as SciPy; m = -inf: 0
    sign = fnp.where(phi < 0, -1.0, 1.0)
    pole = fnp.isfinite(phi) & (m == 1.0) & (fnp.abs(s) == 1.0)
    out = fnp.where(pole, sign * numpy.inf, out)
    far = fnp.isinf(phi) & (m <= 1.0) & (m > -numpy.inf)
    out = fnp.where(far, sign * numpy.inf, out)
    out = fnp.where((m == -numpy.inf) & fnp.isfinite(phi), 0.0, out)
    good = ok | pole | far | ((m == -numpy.inf) & fnp.isfinite(phi))
    return _back(fnp.where(good & ~fnp.isnan(m), out, numpy.nan), like)


def ellipeinc(phi: Any, m: Any) -> Any:
    """Incomplete elliptic integral of the second kind
    ``E(phi | m) = int_0^phi (1 - m sin^2 t)^(1/2) dt``, as ``scipy.special.ellipeinc``:
    ``sin R_F - (m/3) sin^3 R_D`` (arguments ``cos^2 phi, 1 - m sin^2 phi, 1``) on
    ``|phi| <= pi/2`` plus ``2 n E(m)`` for the ``n`` half-periods beyond (nan for ``m > 1``,
    as SciPy; odd in ``phi`` also at ``m = -inf``, where SciPy 1.17 gives ``+inf`` for every
    ``phi``); differentiable in ``phi`` and ``m``.

    Example:
        >>> from funcgrad.scipy.special import ellipeinc
        >>> round(float(ellipeinc(1.0, 0.5)), 12)
        0.927329883624
    """
    fnp = _fnpm
    like, phi, m, s, rf, ok, n = _incomplete("ellipeinc", phi, m)
    r = fnp.where(fnp.isfinite(phi), phi, 0.0) - n * math.pi
    c = fnp.cos(r)
    d = c * c + (1.0 - fnp.where(ok, m, 0.0)) * s * s
    # m = 1 at |phi_r| = pi/2 is R_D's pole (E there is sin phi): a stand-in for R_D.
    rd_ok = ok & ~((c == 0) & (d == 0))
    c2, ds = fnp.where(rd_ok, c * c, 1.0), fnp.where(rd_ok, d, 1.0)
    rd = _scaled((c2, ds, fnp.ones_like(c2)), -1.5, _rd)
    out = s * rf - (fnp.where(ok, m, 0.0) / 3.0) * s * s * s * rd
    m_one = (m == 1.0) & fnp.isfinite(phi)
    out = fnp.where(m_one, fnp.sin(r), out)
    efull = n != 0
    e = _ellip_e(fnp.where(efull, m, 0.5), 1.0 - fnp.where(efull, m, 0.5))
    out = fnp.where(efull, out + 2.0 * n * e, out)
    sign = fnp.where(phi < 0, -1.0, 1.0)
    far = (fnp.isinf(phi) & (m <= 1.0)) | ((m == -numpy.inf) & fnp.isfinite(phi) & (phi != 0))
    out = fnp.where(far, sign * numpy.inf, out)
    good = ok | m_one | far | ((m == -numpy.inf) & (phi == 0))
    out = fnp.where((m == -numpy.inf) & (phi == 0), 0.0, out)
    return _back(fnp.where(good & ~fnp.isnan(m), out, numpy.nan), like)


# =============================================================================================
# Jacobian elliptic functions (Cephes' ellpj, as SciPy: the descending AGM / Landen scale)

_ELLIPJ_LEVELS = 8  # Cephes' cap; levels past convergence (c = 0) cancel exactly in powers of 2


def ellipj(u: Any, m: Any) -> tuple[Any, Any, Any, Any]:
    """Jacobian elliptic functions ``(sn, cn, dn, ph)`` of real ``u`` and parameter
    ``0 <= m <= 1`` (nan outside), as ``scipy.special.ellipj`` (Cephes' ellpj: the AGM scale
    with a backward Landen recurrence; series in ``m`` below 1e-9 and in ``1 - m`` above
    1 - 1e-10); differentiable in ``u`` and ``m``.

    Example:
        >>> from funcgrad.scipy.special import ellipj
        >>> sn, cn, dn, ph = ellipj(0.5, 0.3)
        >>> round(float(sn), 12), round(float(dn), 12)
        (0.474215622712, 0.965678964746)
    """
    fnp = _fnpm
    u, m = _floats("ellipj", u, m)
    u, m = fnp.broadcast_arrays(fnp.asarray(u), fnp.asarray(m))
    dt = get_aval(u).dtype
    u, m = _f64(u), _f64(m)
    ok = (m >= 0.0) & (m <= 1.0) & fnp.isfinite(u)
    uu = fnp.where(ok, u, 0.0)
    mm = fnp.where(ok, m, 0.5)
    small = mm < 1e-9
    near1 = mm >= 0.9999999999
    # the AGM scale (on a stand-in m off its lanes)
    ms = fnp.where(small | near1, 0.5, mm)
    a = [fnp.ones_like(ms)]
    c = [fnp.sqrt(ms)]
    b = fnp.sqrt(1.0 - ms)
    for _ in range(_ELLIPJ_LEVELS):
        ai = a[-1]
        c.append((ai - b) / 2.0)
        a.append((ai + b) / 2.0)
        b = fnp.sqrt(ai * b)
    phi = (2.0 ** _ELLIPJ_LEVELS) * a[-1] * uu
    prev = phi
    for i in range(_ELLIPJ_LEVELS, 0, -1):
        t = c[i] * fnp.sin(phi) / a[i]
        prev = phi
        phi = (fnp.arcsin(t) + phi) / 2.0
    sn = fnp.sin(phi)
    cn = fnp.cos(phi)
    dnfix = cn / fnp.cos(phi - prev)
    # after DLMF 22.20.5: near dn's small values the quotient loses digits
    dn = fnp.where(fnp.abs(dnfix) < 0.1, fnp.sqrt(1.0 - ms * sn * sn), dnfix)
    ph = phi
    # m < 1e-9: first order in m
    t_s, b_s = fnp.sin(uu), fnp.cos(uu)
    ai_s = 0.25 * mm * (uu - t_s * b_s)
    sn = fnp.where(small, t_s - ai_s * b_s, sn)
    cn = fnp.where(small, b_s + ai_s * t_s, cn)
    ph = fnp.where(small, uu - ai_s, ph)
    dn = fnp.where(small, 1.0 - 0.5 * mm * t_s * t_s, dn)
    # m near 1: first order in 1 - m
    un = fnp.where(near1, uu, 0.0)
    ai_n = 0.25 * (1.0 - mm)
    ch, th = fnp.cosh(un), fnp.tanh(un)
    sech = 1.0 / ch
    twon = ch * fnp.sinh(un)
    sn = fnp.where(near1, th + ai_n * (twon - un) / (ch * ch), sn)
    ph = fnp.where(near1, 2.0 * fnp.arctan(fnp.exp(un)) - 0.5 * math.pi
                   + ai_n * (twon - un) / ch, ph)
    ai_t = ai_n * th * sech
    cn = fnp.where(near1, sech - ai_t * (twon - un), cn)
    dn = fnp.where(near1, sech + ai_t * (twon + un), dn)
    outs = (sn, cn, dn, ph)
    return tuple(fnp.where(ok, v, numpy.nan).astype(dt) for v in outs)
