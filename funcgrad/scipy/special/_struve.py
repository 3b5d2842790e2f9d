"""Struve functions struve (H_v) and modstruve (L_v) of real order and argument, as
``scipy.special`` (its choice of method per point, struve.c): the power series, the large-z
asymptotic expansion plus Y_v (I_v), and the series in Bessel functions
sum_n (z/2)^n / n! J_(n+v+1/2)(z) / (n + 1/2) (one vectorised call over the orders), each
with an error estimate; the first good one wins, else the best acceptable one."""

from __future__ import annotations

import math
from typing import Any

import numpy

from funcgrad.avals import get_aval
from funcgrad.ops import special as _sp
from funcgrad.scipy.special._bessel_real import iv, jv, yv
from funcgrad.scipy.special._common import _F64, _floats, _fnpm, _while
from funcgrad.scipy.special._gamma import gammasgn

_GOOD = 1e-12
_ACCEPTABLE = 1e-7
_SUM_EPS = 1e-16
_MAXITER = 10000.0
_BESSEL_TERMS = 80  # the Bessel series is used below |v| + 20: its terms fall fast past z


def _power_series(v: Any, z: Any, is_h: bool) -> tuple[Any, Any]:
    fnp = _fnpm
    sgn = -1.0 if is_h else 1.0
    lg = -_sp.lgamma(v + 1.5) + (v + 1.0) * fnp.log(0.5 * z)
    term = 2.0 / math.sqrt(math.pi) * fnp.exp(lg) * gammasgn(v + 1.5)

    def cond(s: tuple) -> Any:
        return fnp.any(~s[-1]) & (s[0] < _MAXITER)

    def body(s: tuple) -> tuple:
        n, term, tot, mx, done = s
        term_n = term * sgn * z * z / ((2.0 * n + 3.0) * (2.0 * n + 2.0 * v + 3.0))
        tot_n = tot + term_n
        mx_n = fnp.maximum(mx, fnp.abs(term_n))
        stop = (fnp.abs(term_n) < 1e-100 * fnp.abs(tot_n)) | (term_n == 0) | ~fnp.isfinite(tot_n)
        stop = stop | ((fnp.abs(term_n) < _SUM_EPS * fnp.abs(tot_n)) & (n > 2.0 * z))
        keep = done
        return (n + 1.0, fnp.where(keep, term, term_n), fnp.where(keep, tot, tot_n),
                fnp.where(keep, mx, mx_n), done | stop)

    _, term, tot, mx, _ = _while(cond, body, (fnp.zeros(()), term, term, fnp.abs(term),
                                              fnp.zeros_like(z, dtype=bool)))
    return tot, fnp.abs(term) + mx * _SUM_EPS


def _asymptotic(v: Any, z: Any, is_h: bool) -> tuple[Any, Any]:
    fnp = _fnpm
    sgn = -1.0 if is_h else 1.0
    maxiter = fnp.minimum(fnp.floor(0.5 * z), _MAXITER)
    lg = -_sp.lgamma(v + 0.5) + (v - 1.0) * fnp.log(0.5 * z)
    term = -sgn / math.sqrt(math.pi) * fnp.exp(lg) * gammasgn(v + 0.5)

    def cond(s: tuple) -> Any:
        return fnp.any(~s[-1]) & (s[0] < _MAXITER)

    def body(s: tuple) -> tuple:
        n, term, tot, mx, done = s
        term_n = term * sgn * (1.0 + 2.0 * n) * (1.0 + 2.0 * n - 2.0 * v) / (z * z)
        tot_n = tot + term_n
        mx_n = fnp.maximum(mx, fnp.abs(term_n))
        stop = ((fnp.abs(term_n) < _SUM_EPS * fnp.abs(tot_n)) | (term_n == 0)
                | ~fnp.isfinite(tot_n) | (n + 1.0 >= maxiter))
        keep = done
        return (n + 1.0, fnp.where(keep, term, term_n), fnp.where(keep, tot, tot_n),
                fnp.where(keep, mx, mx_n), done | stop)

    _, term, tot, mx, _ = _while(cond, body, (fnp.zeros(()), term, term, fnp.zeros_like(z),
                                              maxiter < 1.0))
    err = fnp.abs(term) + mx * _SUM_EPS
    err = fnp.where((maxiter < 1.0) | (z < v), numpy.inf, err)
    tot = tot + (yv(v, z) if is_h else iv(v, z))
    return tot, err


def _bessel_series(v: Any, z: Any, is_h: bool) -> tuple[Any, Any]:
    fnp = _fnpm
    n = fnp.arange(_BESSEL_TERMS, dtype=numpy.float64).reshape((-1,) + (1,) * z.ndim)
    orders = n + v + 0.5
    bess = jv(orders, fnp.broadcast_to(z, orders.shape)) if is_h else iv(
        orders, fnp.broadcast_to(z, orders.shape))
    # cterm_n = sqrt(z / 2 pi) (+-z/2)^n / n!, in logs (its sign apart)
    half = 0.5 * z
    lc = 0.5 * fnp.log(z / (2.0 * math.pi)) + n * fnp.log(half) - _sp.lgamma(n + 1.0)
    sign = 1.0 if is_h else fnp.where(fnp.fmod(n, 2.0) == 1.0, -1.0, 1.0)
    terms = sign * fnp.exp(lc) * bess / (n + 0.5)
    tot = fnp.sum(terms, axis=0)
    mx = fnp.max(fnp.abs(terms), axis=0)
    err = fnp.abs(terms[-1]) + mx * _SUM_EPS
    if is_h:
        err = fnp.where(v < 0, numpy.inf, err)
    return tot, err


def _struve(name: str, v: Any, z: Any, is_h: bool) -> Any:
    fnp = _fnpm
    v, z = _floats(name, v, z)
    v, z = fnp.broadcast_arrays(fnp.asarray(v), fnp.asarray(z))
    dt = get_aval(z).dtype
    v, z = v.astype(_F64), z.astype(_F64)
    whole = v == fnp.floor(v)
    # z < 0: integer v only, (-1)^(v+1) times the value at -z
    flip = fnp.where(fnp.fmod(fnp.abs(fnp.where(whole, v, 0.0)), 2.0) == 0, -1.0, 1.0)
    neg = z < 0
    az = fnp.abs(z)
    ok = (az > 0) & fnp.isfinite(az) & fnp.isfinite(v)
    zs = fnp.where(ok, az, 1.0)
    vs = fnp.where(ok, v, 0.0)
    p_val, p_err = _power_series(vs, fnp.where(zs < 10.0 + fnp.abs(vs) + 40.0, zs, 1.0), is_h)
    a_val, a_err = _asymptotic(vs, zs, is_h)
    b_in = zs < fnp.abs(vs) + 20.0
    b_val, b_err = _bessel_series(vs, fnp.where(b_in, zs, 1.0), is_h)
    p_try = zs < 10.0 + fnp.abs(vs) + 40.0  # (SciPy tries it everywhere; its cost grows with z)
    a_try = zs >= 0.7 * vs + 12.0
    p_err = fnp.where(p_try, p_err, numpy.inf)
    a_err = fnp.where(a_try, a_err, numpy.inf)
    b_err = fnp.where(b_in, b_err, numpy.inf)

    def good(val: Any, err: Any, tol: float) -> Any:
        return fnp.isfinite(val) & (err < tol * fnp.abs(val) + 1e-300)

    out = fnp.where(good(b_val, b_err, _GOOD), b_val, numpy.nan)
    out = fnp.where(good(p_val, p_err, _GOOD), p_val, out)
    out = fnp.where(good(a_val, a_err, _GOOD), a_val, out)
    # none good: the best acceptable one
    none = ~(good(a_val, a_err, _GOOD) | good(p_val, p_err, _GOOD) | good(b_val, b_err, _GOOD))
    best = fnp.where(a_err <= fnp.minimum(p_err, b_err), a_val,
                     fnp.where(p_err <= b_err, p_val, b_val))
    best_err = fnp.minimum(fnp.minimum(a_err, p_err), b_err)
    out = fnp.where(none & (best_err < _ACCEPTABLE * fnp.abs(best)), best, out)
    # half-integer v < 0: a Bessel function exactly (SciPy's)
    nh = -vs - 0.5
    half = (nh == fnp.floor(nh)) & (nh > 0)
    hv = fnp.where(half, nh + 0.5, 0.5)
    hs = fnp.where(fnp.fmod(fnp.where(half, nh, 0.0), 2.0) == 0, 1.0, -1.0)
    hval = hs * jv(hv, zs) if is_h else iv(hv, zs)
    out = fnp.where(half, hval, out)
    out = fnp.where(neg, fnp.where(whole, flip * out, numpy.nan), out)
    at0 = fnp.where(v < -1.0, gammasgn(v + 1.5) * numpy.inf,
                    fnp.where(v == -1.0, 2.0 / math.pi, 0.0))
    out = fnp.where(z == 0, at0, out)
    out = fnp.where(fnp.isnan(z) | fnp.isnan(v), numpy.nan, out)
    return out.astype(dt)


def struve(v: Any, x: Any) -> Any:
    """Struve function ``H_v(x)`` of real order and argument, as ``scipy.special.struve``
    (``x < 0`` only for integer ``v``); differentiable.

    Example:
        >>> from funcgrad.scipy.special import struve
        >>> round(float(struve(0.0, 2.0)), 12)
        0.790858849508
    """
    return _struve("struve", v, x, True)


def modstruve(v: Any, x: Any) -> Any:
    """Modified Struve function ``L_v(x)`` of real order and argument, as
    ``scipy.special.modstruve``; differentiable.

    Example:
        >>> from funcgrad.scipy.special import modstruve
        >>> round(float(modstruve(0.0, 2.0)), 12)
        1.937433757991
    """
    return _struve("modstruve", v, x, False)
