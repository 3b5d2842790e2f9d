"""Complete elliptic integrals ellipk, ellipkm1, ellipe and the arithmetic-geometric mean agm."""

from __future__ import annotations

import math
from typing import Any

import numpy

from funcgrad.ops.custom_derivatives import custom_jvp
from funcgrad.scipy.special._common import _back, _f64, _floats, _fnp

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
