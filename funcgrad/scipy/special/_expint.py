"""Exponential and trigonometric integrals: exp1, expi, expn, sici."""

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
    _clamp_tiny,
    _counter,
    _f64,
    _floats,
    _fnp,
    _fnpm,
    _polyval,
    _while,
)

# =============================================================================================
# Exponential integrals

_EULER = 0.57721566490153286061


def _expn_values(n: Any, x: Any) -> Any:
    """E_n(x) for float64 ``n`` (integer valued) and ``x``: the power series (DLMF 8.19.8)
    where ``x <= 1``, the continued fraction (modified Lentz, as Numerical Recipes' expint)
    elsewhere, both in one vectorised ``while_loop``; E_0 = exp(-x)/x directly."""
    fnp = _fnp()
    eps = float(numpy.finfo(_F64).eps)
    tiny = 1e-300
    valid = (n >= 1) & (x > 0) & (x < numpy.inf) & (n < numpy.inf)
    n_s = fnp.where(valid, n, 1.0)
    x_s = fnp.where(valid, x, 1.0)
    series = x_s <= 1.0
    nm1 = n_s - 1.0
    log_x = fnp.log(x_s)
    # Only the series lanes use these and the fraction lanes the others: each gets a
    # harmless stand-in where it is not used.
    total = fnp.where(nm1 != 0, 1.0 / fnp.where(nm1 != 0, nm1, 1.0), -log_x - _EULER)
    psi_n = _sp.digamma(n_s)
    b = fnp.where(series, 1.0, x_s + n_s)
    x_ser = fnp.where(series, x_s, 0.0)  # the series' powers on its own lanes (x^k overflows)
    init = (_counter(x_s), fnp.ones_like(x_s), total, b,
            fnp.full_like(x_s, 1.0 / tiny), 1.0 / b, 1.0 / b, fnp.logical_not(valid))

    def cond(s: tuple) -> Any:
        return (s[0] < 5000) & fnp.logical_not(fnp.all(s[-1]))

    def body(s: tuple) -> tuple:
        i, fact, total, b, c, d, h, done = s
        k = i + 1
        kf = fnp.asarray(k, dtype=_F64)
        fact = fact * (-x_ser / kf)
        special = kf == nm1
        den = fnp.where(special, 1.0, kf - nm1)
        term = fnp.where(special, fact * (psi_n - log_x), -fact / den)
        total = total + term
        an = -kf * (nm1 + kf)
        b = b + 2.0
        d = 1.0 / _clamp_tiny(an * d + b, tiny)
        c = _clamp_tiny(b + an / c, tiny)
        delta = c * d
        h = h * delta
        conv = fnp.where(series, fnp.abs(term) <= eps * fnp.abs(total),
                         fnp.abs(delta - 1.0) <= eps)
        return k, fact, total, b, c, d, h, done | conv

    res = _while(cond, body, init)
    out = fnp.where(series, res[2], res[6] * fnp.exp(-x_s))
    x0 = fnp.where((n == 0) & (x > 0), x, 1.0)
    out = fnp.where(n == 0, fnp.exp(-x0) / x0, out)
    out = fnp.where(x == 0, fnp.where(n >= 2, 1.0 / fnp.where(n >= 2, n - 1.0, 1.0),
                                      numpy.inf), out)
    out = fnp.where((x == numpy.inf) & (n >= 0), 0.0, out)
    bad = (n < 0) | (x < 0) | fnp.isnan(n) | fnp.isnan(x) | (n == numpy.inf)
    return fnp.where(bad, numpy.nan, out)


def _ei_pos_values(x: Any) -> Any:
    """Ei(x) for float64 x > 0: the series gamma + log x + sum x^k / (k k!) for x <= 40
    (positive terms: no cancellation past the root at 0.37), the asymptotic series
    e^x / x sum k! / x^k above (its smallest term, near k = x, is below 1e-16 there)."""
    fnp = _fnp()
    eps = float(numpy.finfo(_F64).eps)
    valid = (x > 0) & (x < numpy.inf)
    x_s = fnp.where(valid, x, 1.0)
    series = x_s <= 40.0
    init = (_counter(x_s), fnp.ones_like(x_s), fnp.zeros_like(x_s),
            fnp.logical_not(valid))

    def cond(s: tuple) -> Any:
        return (s[0] < 1000) & fnp.logical_not(fnp.all(s[-1]))

    def body(s: tuple) -> tuple:
        i, fact, total, done = s
        k = i + 1
        kf = fnp.asarray(k, dtype=_F64)
        # series: fact = x^k / k!, term = fact / k; asymptotic: fact = term = k! / x^k
        fact = fnp.where(done, fact, fact * fnp.where(series, x_s / kf, kf / x_s))
        term = fnp.where(series, fact / kf, fact)
        term = fnp.where(done, 0.0, term)  # the asymptotic series must stop where it converged
        total = total + term
        # The asymptotic series adds to 1 and must stop by its smallest term (k ~ x).
        scale = fnp.where(series, fnp.abs(total), 1.0 + total)
        conv = (fnp.abs(term) <= eps * scale) | (fnp.logical_not(series) & (kf >= x_s))
        return k, fact, total, done | conv

    total = _while(cond, body, init)[2]
    # e^x / x (1 + total) in logs, capped: Ei overflows (to inf, without a warning) near 716.
    log_big = x_s - fnp.log(x_s) + fnp.log1p(total)
    big = fnp.where(log_big > 709.0, numpy.inf, fnp.exp(fnp.minimum(log_big, 709.0)))
    out = fnp.where(series, _EULER + fnp.log(x_s) + total, big)
    out = fnp.where(x == numpy.inf, numpy.inf, out)
    return fnp.where(valid | (x == numpy.inf), out, numpy.nan)


@custom_jvp
def _exp1(x: Any) -> Any:
    xd = _f64(x)
    return _back(_expn_values(_fnp().ones_like(xd), xd), x)


@_exp1.defjvp
def _exp1_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    y = _exp1(x)
    # -exp(-x) / x, and nan where the value is (x < 0: SciPy's real exp1 is nan there).
    return y, t * _fnp().where(_fnp().isnan(y), numpy.nan, -_fnp().exp(-x) / x)


@custom_jvp
def _expi(x: Any) -> Any:
    fnp = _fnp()
    xd = _f64(x)
    neg = xd < 0
    x_neg = fnp.where(neg, -xd, 1.0)
    x_pos = fnp.where(neg, 1.0, xd)
    out = fnp.where(neg, -_expn_values(fnp.ones_like(xd), x_neg), _ei_pos_values(x_pos))
    out = fnp.where(xd == 0, -numpy.inf, out)
    out = fnp.where(xd == -numpy.inf, -0.0, out)
    return _back(fnp.where(fnp.isnan(xd), numpy.nan, out), x)


@_expi.defjvp
def _expi_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return _expi(x), t * (_fnp().exp(x) / x)


@custom_jvp
def _expn_pos(n: Any, x: Any) -> Any:
    return _back(_expn_values(_f64(n), _f64(x)), x)


@_expn_pos.defjvp
def _expn_pos_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    # E_n' = -E_{n-1}; n is an integer (SciPy truncates it), so its derivative is zero.
    (n, x), (_, t) = primals, tangents
    return _expn_pos(n, x), t * -_expn_any(n - 1.0, x)


def _expn_any(n: Any, x: Any) -> Any:
    """E_n for n >= 0: E_0 = exp(-x)/x as a composition (differentiable as it stands),
    the rest through the custom rule E_n' = -E_{n-1}."""
    fnp = _fnp()
    zero = n == 0
    x0 = fnp.where(zero & (x != 0), x, 1.0)
    e0 = fnp.where(x == 0, numpy.inf, fnp.exp(-x0) / x0)
    e0 = fnp.where(x < 0, numpy.nan, e0)
    return fnp.where(zero, e0, _expn_pos(fnp.where(zero, 1.0, n), x))


def exp1(x: Any) -> Any:
    """The exponential integral ``E1(x) = int_x^inf exp(-t) / t dt`` for ``x >= 0`` (nan
    below; complex input is not supported). Its derivative is ``-exp(-x) / x``.

    Example:
        >>> import funcgrad
        >>> from funcgrad.scipy.special import exp1
        >>> round(float(exp1(1.0)), 12)
        0.219383934396
        >>> round(float(funcgrad.grad(exp1)(1.0)), 12)   # -exp(-1)
        -0.367879441171
    """
    return _exp1(_floats("exp1", x)[0])


def expi(x: Any) -> Any:
    """The exponential integral ``Ei(x)`` (principal value of ``int_-inf^x exp(t) / t dt``;
    ``-E1(-x)`` for ``x < 0``). Its derivative is ``exp(x) / x``.

    Example:
        >>> from funcgrad.scipy.special import expi
        >>> round(float(expi(1.0)), 12)
        1.895117816356
    """
    return _expi(_floats("expi", x)[0])


def expn(n: Any, x: Any) -> Any:
    """The generalized exponential integral ``E_n(x) = int_1^inf exp(-x t) / t^n dt`` for
    integer ``n >= 0`` (a float ``n`` is truncated, as SciPy does) and ``x >= 0``.

    Differentiable in ``x`` to any order (``E_n' = -E_{n-1}``, ``E_0 = exp(-x)/x``); ``n`` is
    discrete (its derivative is zero). As in SciPy, an integer ``n`` gives float64 whatever
    ``x`` is; float ``n`` and ``x`` follow the usual float32/float64 rule.

    Example:
        >>> import funcgrad
        >>> from funcgrad.scipy.special import expn
        >>> round(float(expn(2, 1.0)), 12)
        0.148495506776
        >>> round(float(funcgrad.grad(expn, argnums=1)(2, 1.0)), 12)   # -E_1(1)
        -0.219383934396
    """
    fnp = _fnp()
    if isinstance(n, bool | int | numpy.integer) or (
            not isinstance(n, float) and get_aval(n).dtype.kind in "iub"):
        (x,) = _floats("expn", x)
        x = _f64(fnp.asarray(x))
        n = _f64(fnp.asarray(n))
    else:
        n, x = _floats("expn", n, x)
    n, x = fnp.broadcast_arrays(fnp.asarray(n), fnp.asarray(x))
    n = _ew.stop_gradient(fnp.trunc(n))
    return _expn_any(fnp.where(n < 0, 0.0, n), fnp.where(n < 0, numpy.nan, x))


# ---------------------------------------------------------------------------------------------
# Sine/cosine and Fresnel integrals (Cephes' rational approximations, as SciPy and JAX),
# computed in float64; float32 rounds once at the end.

_SICI_SN = (-8.39167827910303881427e-11, 4.62591714427012837309e-8, -9.75759303843632795789e-6,
            9.76945438170435310816e-4, -4.13470316229406538752e-2, 1.00000000000000000302e0)
_SICI_SD = (2.03269266195951942049e-12, 1.27997891179943299903e-9, 4.41827842801218905784e-7,
            9.96412122043875552487e-5, 1.42085239326149893930e-2, 9.99999999999999996984e-1)
_SICI_CN = (2.02524002389102268789e-11, -1.35249504915790756375e-8, 3.59325051419993077021e-6,
            -4.74007206873407909465e-4, 2.89159652607555242092e-2, -1.00000000000000000080e0)
_SICI_CD = (4.07746040061880559506e-12, 3.06780997581887812692e-9, 1.23210355685883423679e-6,
            3.17442024775032769882e-4, 5.10028056236446052392e-2, 4.00000000000000000080e0)
_SICI_FN4 = (4.23612862892216586994e0, 5.45937717161812843388e0, 1.62083287701538329132e0,
             1.67006611831323023771e-1, 6.81020132472518137426e-3, 1.08936580650328664411e-4,
             5.48900223421373614008e-7)
_SICI_FD4 = (1.0, 8.16496634205391016773e0, 7.30828822505564552187e0, 1.86792257950184183883e0,
             1.78792052963149907262e-1, 7.01710668322789753610e-3, 1.10034357153915731354e-4,
             5.48900252756255700982e-7)
_SICI_GN4 = (8.71001698973114191777e-2, 6.11379109952219284151e-1, 3.97180296392337498885e-1,
             7.48527737628469092119e-2, 5.38868681462177273157e-3, 1.61999794598934024525e-4,
             1.97963874140963632189e-6, 7.82579040744090311069e-9)
_SICI_GD4 = (1.0, 1.64402202413355338886e0, 6.66296701268987968381e-1, 9.88771761277688796203e-2,
             6.22396345441768420760e-3, 1.73221081474177119497e-4, 2.02659182086343991969e-6,
             7.82579218933534490868e-9)
_SICI_FN8 = (4.55880873470465315206e-1, 7.13715274100146711374e-1, 1.60300158222319456320e-1,
             1.16064229408124407915e-2, 3.49556442447859055605e-4, 4.86215430826454749482e-6,
             3.20092790091004902806e-8, 9.41779576128512936592e-11, 9.70507110881952024631e-14)
_SICI_FD8 = (1.0, 9.17463611873684053703e-1, 1.78685545332074536321e-1,
             1.22253594771971293032e-2, 3.58696481881851580297e-4, 4.92435064317881464393e-6,
             3.21956939101046018377e-8, 9.43720590350276732376e-11, 9.70507110881952025725e-14)
_SICI_GN8 = (6.97359953443276214934e-1, 3.30410979305632063225e-1, 3.84878767649974295920e-2,
             1.71718239052347903558e-3, 3.48941165502279436777e-5, 3.47131167084116673800e-7,
             1.70404452782044526189e-9, 3.85945925430276600453e-12, 3.14040098946363334640e-15)
_SICI_GD8 = (1.0, 1.68548898811011640017e0, 4.87852258695304967486e-1,
             4.67913194259625806320e-2, 1.90284426674399523638e-3, 3.68475504442561108162e-5,
             3.57043223443740838771e-7, 1.72693748966316146736e-9, 3.87830166023954706752e-12,
             3.14040098946363335242e-15)


def _sici_value(x: Any) -> tuple[Any, Any]:
    ax = _fnpm.abs(x)
    small = ax <= 4.0
    # |x| <= 4: the power series as rational functions of x^2
    xs = _fnpm.where(small & (ax > 0), ax, 1.0)
    t = xs * xs
    si_s = xs * _polyval(_SICI_SN, t) / _polyval(_SICI_SD, t)
    ci_s = _EULER + _fnpm.log(xs) + t * _polyval(_SICI_CN, t) / _polyval(_SICI_CD, t)
    # |x| > 4: the auxiliary functions f, g, rational in 1/x^2 all the way out (Cephes keeps
    # only sin(x)/x for Ci beyond 1e9, which drops -cos(x)/x^2: Ci(1e10) lost 10 digits);
    # 1/x squared, not 1/x^2: x^2 overflows (with a warning) past 1e154
    xl = _fnpm.where(small | _fnpm.isinf(ax) | _fnpm.isnan(ax), 8.0, ax)
    s, c = _fnpm.sin(xl), _fnpm.cos(xl)
    z = (1.0 / xl) * (1.0 / xl)
    below8 = xl < 8.0
    f = _fnpm.where(below8, _polyval(_SICI_FN4, z) / (xl * _polyval(_SICI_FD4, z)),
                    _polyval(_SICI_FN8, z) / (xl * _polyval(_SICI_FD8, z)))
    g = _fnpm.where(below8, z * _polyval(_SICI_GN4, z) / _polyval(_SICI_GD4, z),
                    z * _polyval(_SICI_GN8, z) / _polyval(_SICI_GD8, z))
    si_l = math.pi / 2 - f * c - g * s
    ci_l = f * s - g * c
    si = _fnpm.where(small, si_s, si_l)
    ci = _fnpm.where(small, ci_s, ci_l)
    si = _fnpm.where(ax == 0, 0.0, _fnpm.where(_fnpm.isinf(ax), math.pi / 2, si))
    ci = _fnpm.where(ax == 0, -numpy.inf, _fnpm.where(_fnpm.isinf(ax), 0.0, ci))
    si = _fnpm.copysign(si, x)  # odd; -0.0 keeps its sign
    ci = _fnpm.where(x == -numpy.inf, numpy.nan, ci)  # Ci(-x) is Ci(x) for finite x, as SciPy
    nan = _fnpm.isnan(x)
    return _fnpm.where(nan, numpy.nan, si), _fnpm.where(nan, numpy.nan, ci)


@custom_jvp
def _sici(x: Any) -> tuple[Any, Any]:
    return _sici_value(x)


@_sici.defjvp
def _sici_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (tx,) = primals, tangents
    out = _sici(x)
    nz = x != 0
    safe = _fnpm.where(nz, x, 1.0)
    d_si = _fnpm.where(nz, _fnpm.sin(safe) / safe, 1.0)  # sin(x)/x -> 1
    d_ci = _fnpm.where(nz, _fnpm.cos(safe) / safe, numpy.inf)
    return out, (d_si * tx, d_ci * tx)


def sici(x: Any) -> tuple[Any, Any]:
    """Sine and cosine integrals ``(Si(x), Ci(x))``: ``Si(x) = integral_0^x sin(t)/t dt``,
    ``Ci(x) = gamma + log(x) + integral_0^x (cos(t) - 1)/t dt``, as ``scipy.special.sici``
    for real ``x`` (for ``x < 0``, ``Ci`` is ``Ci(|x|)``, SciPy's real part). Derivatives
    ``sin(x)/x`` and ``cos(x)/x``; float32 stays float32.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import sici
        >>> si, ci = sici(np.array([1.0, 10.0]))
        >>> si.round(6), ci.round(6)
        (array([0.946083, 1.658348]), array([ 0.337404, -0.045456]))
    """
    (x,) = _floats("sici", x)
    x = _fnpm.asarray(x)
    dt = get_aval(x).dtype
    si, ci = _sici(x.astype(_F64))
    return si.astype(dt), ci.astype(dt)


# ---------------------------------------------------------------------------------------------
# Hyperbolic sine and cosine integrals

_SHICHI_SERIES_BELOW = 1.0


def shichi(x: Any) -> tuple[Any, Any]:
    """Hyperbolic sine and cosine integrals ``(Shi(x), Chi(x))``:
    ``Shi(x) = integral_0^x sinh(t)/t dt``, ``Chi(x) = gamma + log(x) + integral_0^x
    (cosh(t) - 1)/t dt``, as ``scipy.special.shichi`` for real ``x`` (``Shi`` odd; for
    ``x < 0``, ``Chi`` is ``Chi(|x|)``, SciPy's real part; ``Chi(0) = -inf``). Their power
    series below 1, ``(Ei(x) +- E1(x)) / 2`` above (no cancellation there). Derivatives
    ``sinh(x)/x`` and ``cosh(x)/x``; float32 stays float32.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import shichi
        >>> shi, chi = shichi(np.array([0.5, 2.0]))
        >>> shi.round(6), chi.round(6)
        (array([0.506997, 2.501567]), array([-0.052777,  2.452667]))
    """
    fnp = _fnpm
    (x,) = _floats("shichi", x)
    x = fnp.asarray(x)
    dt = get_aval(x).dtype
    xd = x.astype(_F64)
    ax = fnp.abs(xd)
    small = ax < _SHICHI_SERIES_BELOW
    # power series (|x| < 1: x^2k / (2k)! falls below 1e-17 by k = 9)
    xs = fnp.where(small & (ax > 0), ax, 0.5)
    t = xs * xs
    term = xs
    shi_s = xs
    chi_s = fnp.zeros_like(xs)
    for k in range(1, 12):
        term = term * t / ((2.0 * k) * (2.0 * k + 1.0))     # x^(2k+1) / (2k+1)!
        shi_s = shi_s + term / (2.0 * k + 1.0)
        chi_s = chi_s + term / xs * (2.0 * k + 1.0) / (2.0 * k)  # x^2k / (2k)! / (2k)
    chi_s = _EULER + fnp.log(xs) + chi_s
    # Ei and E1 above (E1 underflows to 0 and Ei overflows to inf where they should)
    xl = fnp.where(small | ~fnp.isfinite(ax), 2.0, ax)
    ei, e1 = expi(xl), exp1(xl)
    shi = fnp.where(small, shi_s, 0.5 * (ei + e1))
    chi = fnp.where(small, chi_s, 0.5 * (ei - e1))
    shi = fnp.where(ax == 0, 0.0, fnp.where(fnp.isinf(ax), numpy.inf, shi))
    chi = fnp.where(ax == 0, -numpy.inf, fnp.where(fnp.isinf(ax), numpy.inf, chi))
    shi = fnp.where(xd < 0, -shi, shi)
    nan = fnp.isnan(xd)
    shi, chi = fnp.where(nan, numpy.nan, shi), fnp.where(nan, numpy.nan, chi)
    return shi.astype(dt), chi.astype(dt)
