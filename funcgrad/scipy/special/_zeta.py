"""Zeta functions and the dilogarithm: zeta (Riemann and Hurwitz), zetac, spence."""

from __future__ import annotations

import math
from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
from funcgrad.avals import get_aval
from funcgrad.ops import special as _sp
from funcgrad.ops.custom_derivatives import custom_jvp
from funcgrad.scipy.special._common import (
    _F64,
    _back,
    _f64,
    _floats,
    _fnp,
    _fnpm,
    _jvp,
    _like,
    _polevl,
    _while,
)

# =============================================================================================
# Zeta function


# Cephes' zeta: (2k)! / B_2k, k = 1..12, the Euler-Maclaurin correction terms.
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)


def _hurwitz_em(x: Any, q: Any) -> Any:
    """sum_k (q + k)^-x by Euler-Maclaurin as Cephes (q > 0; any x != 1 with x > -20): ten
    direct terms, so the expansion point w = q + 9 is past 9, then up to twelve correction
    terms, each added only while the previous one still mattered."""
    fnp = _fnp()
    eps = float(numpy.finfo(_F64).eps)
    s = fnp.zeros_like(x)
    for k in range(9):
        s = s + (q + float(k)) ** (-x)
    w = q + 9.0
    b = w ** (-x)
    # w^(1-x) / (x - 1) as its own power: b * w underflows for huge q (zeta(1.5, 1e300) is
    # 2e-150, while w^-1.5 is 0).
    s = s + 0.5 * b + w ** (1.0 - x) / (x - 1.0)
    active = fnp.ones_like(x, dtype=bool)
    poch, kk = fnp.ones_like(x), 0.0
    for a_i in _ZETA_A:
        poch = poch * (x + kk)
        b = b / w
        t = fnp.where(b == 0, 0.0, poch * b / a_i)
        s = fnp.where(active, s + t, s)
        # A term that is exactly 0 (x = 0: the rising product vanishes) keeps the sum going:
        # its derivative in x is not 0.
        active = active & ((fnp.abs(t) >= eps * fnp.abs(s)) | (t == 0))
        kk += 1.0
        poch = poch * (x + kk)
        b = b / w
        kk += 1.0
    return s


def _hurwitz_values(x: Any, q: Any) -> Any:
    """zeta(x, q) for float64 ``x``, ``q`` with SciPy's domain: x > 1; q > 0, or q < 0 not an
    integer with x an integer (the terms (q + k)^-x, k < -q, summed first)."""
    fnp = _fnp()
    x_int = x == fnp.floor(x)
    neg = (q < 0) & (q != fnp.floor(q)) & x_int
    valid = (x > 1) & (x < numpy.inf) & ((q > 0) | neg) & (q < numpy.inf)
    x_s = fnp.where(valid, x, 2.0)
    q_s = fnp.where(valid, q, 1.0)
    head = fnp.zeros_like(x_s)
    n_neg = fnp.where(neg & valid, fnp.ceil(-q_s), 0.0)
    if not (isinstance(n_neg, numpy.ndarray) and not n_neg.any()):
        def cond(s: tuple) -> Any:
            return fnp.any(s[0] < n_neg)

        def body(s: tuple) -> tuple:
            k, acc = s
            # An integer power of a negative base is real; |q + k| >= frac > 0 here.
            term = fnp.where(k < n_neg, (q_s + k) ** (-x_s), 0.0)
            return k + 1.0, acc + term

        head = _while(cond, body, (fnp.zeros_like(x_s), head))[1]
    out = head + _hurwitz_em(x_s, q_s + n_neg)
    # x = 1 is a pole whatever q (SciPy gives inf even for q <= 0 or nan).
    pole = ((q <= 0) & (q == fnp.floor(q)) & (x > 1)) | (x == 1)
    out = fnp.where(pole, numpy.inf, out)
    # x = inf: 1 at q = 1, inf for 0 < q < 1 (nan otherwise, as SciPy).
    out = fnp.where((x == numpy.inf) & (q == 1), 1.0, out)
    out = fnp.where((x == numpy.inf) & (q > 0) & (q < 1), numpy.inf, out)
    out = fnp.where((q == numpy.inf) & (x > 1), 0.0, out)
    ok = valid | pole | ((x == numpy.inf) & (q > 0) & (q <= 1)) | ((q == numpy.inf) & (x > 1))
    return fnp.where(ok, out, numpy.nan)


_REFLECT_BELOW = -0.5
_LOG_MAX = math.log(float(numpy.finfo(numpy.float64).max))


def _riemann_values(x: Any) -> Any:
    """zeta(x) for every real x: Euler-Maclaurin for x >= -1/2 (accurate to rounding there:
    the reflection formula near 0 would need zeta(1 - x) at its pole, where rounding 1 - x
    costs digits: zeta(-2.5e-8) lost 8), the reflection formula
    zeta(x) = 2^x pi^(x-1) sin(pi x / 2) Gamma(1 - x) zeta(1 - x) below (in logs, so the
    values far out, up to ~1e300, neither overflow early nor lose precision)."""
    fnp = _fnp()
    neg = x < _REFLECT_BELOW
    x_pos = fnp.where(neg | (x == 1) | fnp.isnan(x) | (x == numpy.inf), 2.0, x)
    pos = _hurwitz_em(x_pos, fnp.ones_like(x_pos))
    x_n = fnp.where(neg & fnp.isfinite(x), x, -1.0)
    half = 0.5 * x_n
    even = half == fnp.floor(half)
    # sin(pi x / 2) with x reduced modulo 4 first: exact for large |x|.
    r = x_n - 4.0 * fnp.floor(0.25 * x_n)
    sin = fnp.sin(0.5 * math.pi * r)
    log_mag = x_n * math.log(2.0) + (x_n - 1.0) * math.log(math.pi) + _sp.lgamma(1.0 - x_n)
    # Beyond the largest float the value is +-inf (zeta(1 - x) >= 1): exp would warn there.
    huge = log_mag > _LOG_MAX
    mag = fnp.exp(fnp.where(huge, 0.0, log_mag))
    x_m = fnp.where(huge, -1.0, x_n)  # zeta(1 - x) there is 1 (and its sum would overflow)
    refl = sin * mag * _hurwitz_em(1.0 - x_m, fnp.ones_like(x_m))
    # The trivial zeros are exactly 0 (sin(pi) rounds to 1e-16, and 0 * inf would be nan far
    # out), with the formula's derivative where it is finite (zeta'(-2n) is not 0).
    zero = refl - _ew.stop_gradient(refl)
    refl = fnp.where(huge, fnp.where(sin < 0, -numpy.inf, numpy.inf), refl)
    refl = fnp.where(even, zero, refl)
    out = fnp.where(neg, refl, pos)
    out = fnp.where(x == 1, numpy.inf, out)
    out = fnp.where(x == numpy.inf, 1.0, out)
    return fnp.where(fnp.isnan(x) | (x == -numpy.inf), numpy.nan, out)


@custom_jvp
def _hurwitz(x: Any, q: Any) -> Any:
    return _back(_hurwitz_values(_f64(x), _f64(q)), q)


def _hurwitz_dx(x: Any, q: Any) -> Any:
    """d/dx zeta(x, q) = -sum_k log(q + k) (q + k)^-x: the Euler-Maclaurin sum differentiated
    term by term (forward mode through the same plain operations, the loop over the negative
    q's head included), as accurate as the values."""
    # At a negative q (integer x only) the terms (q + k)^-x have no real derivative in x:
    # nan there (as JAX), computed on a stand-in so no log of a negative number warns.
    fnp = _fnp()
    neg = q < 0
    q_s = fnp.where(neg, 1.0, q)
    d = _jvp(lambda x_: _hurwitz_values(x_, q_s), (x,), (fnp.ones_like(x),))[1]
    return fnp.where(neg, numpy.nan, d)


@_hurwitz.defjvp
def _hurwitz_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x, q), (tx, tq) = primals, tangents
    xd, qd = _f64(x), _f64(q)
    t = tq * _back(-xd * _hurwitz_values(xd + 1.0, qd), q)
    return _hurwitz(x, q), t + tx * _back(_hurwitz_dx(xd, qd), q)


def zeta(x: Any, q: Any = None) -> Any:
    """The Hurwitz zeta function ``zeta(x, q) = sum_k (q + k)^-x`` (``x > 1``; ``q > 0``, or
    negative non-integer ``q`` with integer ``x``), or with ``q=None`` the Riemann zeta
    function for every real ``x``.

    Euler-Maclaurin summation as Cephes (the reflection formula for the Riemann zeta at
    ``x < 0``); float32 is computed in float64 and rounded. Differentiable in ``q`` to any
    order (``d/dq zeta(x, q) = -x zeta(x + 1, q)``) and in ``x`` (as JAX's:
    ``-sum_k log(q + k) (q + k)^-x``, the Euler-Maclaurin sum differentiated term by term;
    for the Riemann zeta the reflection formula's derivative below 0).

    Example:
        >>> import funcgrad
        >>> from funcgrad.scipy.special import zeta
        >>> round(float(zeta(2.0)), 12)   # pi^2 / 6
        1.644934066848
        >>> round(float(funcgrad.grad(zeta, argnums=1)(2.0, 1.0)), 12)   # -2 zeta(3)
        -2.404113806319
        >>> round(float(funcgrad.grad(zeta)(2.0, 1.5)), 12)   # d/dx, as JAX
        -1.024507842616
    """
    fnp = _fnp()
    if q is None:
        (x,) = _floats("zeta", x)
        x = fnp.asarray(x)
        # Plain operations throughout (Euler-Maclaurin, the reflection formula): the
        # derivative in x is theirs.
        return _back(_riemann_values(_f64(x)), x)
    x, q = _floats("zeta", x, q)
    x, q = fnp.broadcast_arrays(fnp.asarray(x), fnp.asarray(q))
    return _hurwitz(x, q)


_SPENCE_A = (4.65128586073990045278e-5, 7.31589045238094711071e-3, 1.33847639578309018650e-1,
             8.79691311754530315341e-1, 2.71149851196553469920e0, 4.25697156008121755724e0,
             3.29771340985225106936e0, 1.00000000000000000126e0)
_SPENCE_B = (6.90990488912553276999e-4, 2.54043763932544379113e-2, 2.82974860602568089943e-1,
             1.41172597751831069617e0, 3.63800533345137075418e0, 5.03278880143316990390e0,
             3.54771340985225096217e0, 9.99999999999999998740e-1)


def _spence_value(x: Any) -> Any:
    """Cephes' spence (the rational approximation SciPy uses), branch by branch with selects."""
    pi2_6 = math.pi ** 2 / 6
    bad = ~(x >= 0) | (x == _fnpm.inf)  # negative, nan or inf (SciPy's nan)
    xs = _fnpm.where(bad | (x == 0), 0.5, x)
    big = xs > 2.0
    xs = _fnpm.where(big, 1.0 / xs, xs)
    upper = xs > 1.5
    lower = ~upper & (xs < 0.5)
    w = _fnpm.where(upper, 1.0 / xs - 1.0, _fnpm.where(lower, -xs, xs - 1.0))
    y = -w * _polevl(w, _SPENCE_A) / _polevl(w, _SPENCE_B)
    x_lo = _fnpm.where(lower, xs, 0.5)
    y = _fnpm.where(lower, pi2_6 - _fnpm.log(x_lo) * _fnpm.log1p(-x_lo) - y, y)
    z = _fnpm.log(xs)
    y = _fnpm.where(big | upper, -0.5 * z * z - y, y)
    y = _fnpm.where(x == 0, pi2_6, _fnpm.where(x == 1, 0.0, y))
    return _fnpm.where(bad, _fnpm.nan, y)


@custom_jvp
def _spence(x: Any) -> Any:
    return _spence_value(x)


@_spence.defjvp
def _spence_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (tx,) = primals, tangents
    one = x == 1
    safe = _fnpm.where(one, 2.0, x)
    slope = _fnpm.where(one, -1.0, _fnpm.log(safe) / (1.0 - safe))  # log x / (1 - x) -> -1
    return _spence(x), slope * tx


def spence(z: Any) -> Any:
    """Spence's function (dilogarithm) ``integral from 1 to z of log(t) / (1 - t) dt`` for real
    ``z >= 0`` (nan below), as ``scipy.special.spence``; its derivative is
    ``log(z) / (1 - z)``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import spence
        >>> spence(np.array([0.0, 1.0, 2.0]))
        array([ 1.64493407,  0.        , -0.82246703])
    """
    (z,) = _floats("spence", z)
    z = _fnpm.asarray(z)
    # float32 computes in float64 (as SciPy's loop does) and rounds once.
    return _spence(z.astype(_F64)).astype(get_aval(z).dtype)


def zetac(x: Any) -> Any:
    """Riemann zeta function minus 1, ``zeta(x) - 1``, accurate for large ``x`` (where it is
    ``2^-x + 3^-x + ...``: the Hurwitz ``zeta(x, 2)`` itself), as ``scipy.special.zetac``.

    Example:
        >>> from funcgrad.scipy.special import zetac
        >>> print(f"{float(zetac(60.0)):.6e}")
        8.673617e-19
    """
    (x,) = _floats("zetac", x)
    fnp = _fnp()
    x = fnp.asarray(x)
    big = x > 1
    # past 1100, 2^-x + 3^-x + ... is 0 in float64 (and the Euler-Maclaurin sum's rising
    # products would overflow)
    xb = fnp.where(big, fnp.minimum(x, 1100.0), 2.0)
    xs = fnp.where(big, 0.0, x)
    # SciPy's 0 at +inf (the Hurwitz zeta(inf, 2) is nan); from x = 127, where SciPy's
    # Cephes returns 0, the value 2^-x + ... is kept (zetac(200) = 6.2e-61).
    out = fnp.where(big, zeta(xb, _like(xb, 2.0)), zeta(xs) - 1.0)
    return fnp.where(x == numpy.inf, 0.0, out)
