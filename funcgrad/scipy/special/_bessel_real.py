"""Bessel functions of real order: jv, yv, iv, kv and the scaled ive, kve, as
``scipy.special`` (real arguments). Temme's method as in Numerical Recipes' bessjy/bessik:
the continued fraction CF1 for the ratio at order nu, a downward recurrence to the order
mu = nu - n in [-1/2, 1/2], there Temme's series (x < 2) or Steed's CF2 (x >= 2), the
Wronskian for the normalisation and an upward recurrence back to nu (below x = 2 the power
series of J and I instead); Hankel's asymptotic series where x > 25 and x > nu^2 / 8. Negative orders by the reflection formulas. Loops are
``while_loop``s over all lanes (traced orders work under jit/vmap). The derivative in ``x`` is
the closed form the method yields (J' alongside J); in ``nu`` a fourth-order central
difference of the values (about 1e-11 relative: SciPy and JAX have no derivative there)."""

from __future__ import annotations

import math
from typing import Any

import numpy

from funcgrad.core import Tracer
from funcgrad.ops import special as _sp
from funcgrad.ops.custom_derivatives import custom_jvp
from funcgrad.scipy.special._common import _back, _counter, _f64, _floats, _fnpm, _while

_EPS = 1e-16
_FPMIN = 1e-290
_MAXIT = 20000.0
_BIG_X = 25.0
_LOG_MAX = math.log(float(numpy.finfo(numpy.float64).max))
# Taylor coefficients of 1/Gamma(1 + z) (c_0 = 1, c_1 = Euler's gamma, ...), from mpmath
# (mpmath.taylor(mpmath.rgamma, 1, 30)); |mu| <= 1/2, so 30 terms reach rounding.
_RGAMMA1 = (1.0, 0.5772156649015329, -0.6558780715202539, -0.04200263503409524,
            0.16653861138229148, -0.04219773455554433, -0.009621971527876973,
            0.0072189432466631, -0.0011651675918590652, -0.00021524167411495098,
            0.0001280502823881162, -2.013485478078824e-05, -1.2504934821426706e-06,
            1.133027231981696e-06, -2.056338416977607e-07, 6.116095104481416e-09,
            5.002007644469223e-09, -1.18127457048702e-09, 1.0434267116911005e-10,
            7.782263439905071e-12, -3.696805618642206e-12, 5.100370287454476e-13,
            -2.0583260535665066e-14, -5.348122539423018e-15, 1.2267786282382608e-15,
            -1.1812593016974588e-16, 1.1866922547516004e-18, 1.4123806553180319e-18,
            -2.29874568443537e-19, 1.7144063219273374e-20, 1.337351730493693e-22)


def _poly(coeffs: tuple, t: Any) -> Any:
    acc = _fnpm.zeros_like(t) + coeffs[-1]
    for c in coeffs[-2::-1]:
        acc = acc * t + c
    return acc


def _temme_gammas(mu: Any) -> tuple[Any, Any, Any, Any]:
    """(gam1, gam2, 1/Gamma(1 + mu), 1/Gamma(1 - mu)) for |mu| <= 1/2, with
    gam1 = (1/Gamma(1 - mu) - 1/Gamma(1 + mu)) / (2 mu) from the series' even part (no
    cancellation at mu -> 0) and gam2 their mean."""
    m2 = mu * mu
    even = _poly(_RGAMMA1[0::2], m2)  # c_0 + c_2 mu^2 + ...
    odd = _poly(_RGAMMA1[1::2], m2)   # c_1 + c_3 mu^2 + ...
    gampl = even + mu * odd
    gammi = even - mu * odd
    return -odd, even, gampl, gammi


def _sin_cos_pi(v: Any) -> tuple[Any, Any]:
    """sin(pi v), cos(pi v), exact at integers and half-integers."""
    fnp = _fnpm
    r = v - 2.0 * fnp.round(0.5 * v)  # in [-1, 1]
    s = fnp.sin(math.pi * r)
    c = fnp.cos(math.pi * r)
    whole = r == fnp.round(r)
    half = (2.0 * r) == fnp.round(2.0 * r)
    s = fnp.where(whole, 0.0, fnp.where(half, fnp.sign(r) * fnp.where(fnp.abs(r) == 0.5, 1.0, -1.0), s))
    c = fnp.where(whole, fnp.where(r == 0, 1.0, -1.0), fnp.where(half, 0.0, c))
    return s, c


def _power_series(nu: Any, x: Any, sign: float) -> tuple[Any, Any]:
    """(F_nu, F_(nu+1)) for x < 2, nu >= 0: the power series
    (x/2)^nu sum_k (sign x^2/4)^k / (k! Gamma(nu + k + 1)) (J: sign -1, I: +1). Temme's
    normalisation through the Wronskian cancels there (f K - K' ~ K / x: x = 1e-8 lost 9
    digits); the series does not (|x^2 / 4| < 1)."""
    fnp = _fnpm
    t = sign * 0.25 * x * x
    lead = fnp.exp(nu * fnp.log(0.5 * x) - _sp.lgamma(nu + 1.0))
    outs = []
    for n in (nu, nu + 1.0):
        term = fnp.ones_like(x)
        tot = fnp.ones_like(x)
        for k in range(1, 30):  # (x^2/4)^k / k!^2 < 1e-17 by k = 20 for x < 2
            term = term * t / (k * (n + k))
            tot = tot + term
        outs.append(tot)
    return lead * outs[0], lead * 0.5 * x / (nu + 1.0) * outs[1]


def _lentz_cf1(nu: Any, x: Any, sign: float) -> tuple[Any, Any]:
    """CF1 for f = J'_nu / J_nu (sign -1) or I'_nu / I_nu (sign +1), modified Lentz; returns
    (h, isign) (isign: the sign changes of the J recurrence's denominators)."""
    fnp = _fnpm
    xi = 1.0 / x
    xi2 = 2.0 * xi
    h = fnp.maximum(nu * xi, _FPMIN)
    init = (_counter(x, numpy.float64), xi2 * nu, fnp.zeros_like(x), h, h,
            fnp.ones_like(x), fnp.zeros_like(x, dtype=bool))

    def cond(s: tuple) -> Any:
        return fnp.any(~s[6]) & (s[0] < _MAXIT)

    def body(s: tuple) -> tuple:
        i, b, d, c, h, isign, done = s
        b = b + xi2
        if sign < 0:
            d = b - d
            d = fnp.where(fnp.abs(d) < _FPMIN, _FPMIN, d)
            c = b - 1.0 / c
            c = fnp.where(fnp.abs(c) < _FPMIN, _FPMIN, c)
            d = 1.0 / d
        else:
            d = 1.0 / (b + d)
            c = b + 1.0 / c
        delta = c * d
        h_new = delta * h
        isign_new = fnp.where(d < 0, -isign, isign)
        h = fnp.where(done, h, h_new)
        isign = fnp.where(done, isign, isign_new)
        done = done | (fnp.abs(delta - 1.0) < _EPS) | ~fnp.isfinite(delta)
        return i + 1.0, b, d, c, h, isign, done

    out = _while(cond, body, init)
    return out[4], out[5]


def _down(nu: Any, x: Any, nl: Any, h: Any, start: Any, sign: float) -> tuple[Any, Any, Any]:
    """The downward recurrence from order nu to mu = nu - nl (nl per lane) from a start value:
    (value at mu, derivative at mu, fac), the true values being these times 1 / fac (the
    recurrence is rescaled by 1e-250 whenever it nears overflow: large orders at small x)."""
    fnp = _fnpm
    xi = 1.0 / x
    top = fnp.max(nl) if nl.size else _counter(nl, numpy.float64)
    v = start
    vp = h * v
    fact = nu * xi

    def cond(s: tuple) -> Any:
        return s[0] >= 1.0

    def body(s: tuple) -> tuple:
        lvl, v, vp, fact, fac = s
        on = lvl <= nl
        # rescale first where the next step could overflow (|fact| <= nu / x)
        big = on & ((fnp.abs(v) + fnp.abs(vp)) * (fnp.abs(fact) + 1.0) > 1e250)
        v = fnp.where(big, v * 1e-250, v)
        vp = fnp.where(big, vp * 1e-250, vp)
        fac = fnp.where(big, fac * 1e-250, fac)
        tmp = fact * v + vp
        fact_n = fact - xi
        vp_n = fact_n * tmp + (v if sign > 0 else -v)
        return (lvl - 1.0, fnp.where(on, tmp, v), fnp.where(on, vp_n, vp),
                fnp.where(on, fact_n, fact), fac)

    _, v, vp, _, fac = _while(cond, body, (top + 0.0, v, vp, fact, fnp.ones_like(x)))
    return v, vp, fac


def _up(mu: Any, x: Any, nl: Any, y0: Any, y1: Any, sign: float) -> tuple[Any, Any]:
    """The upward recurrence of Y (sign -1) or K (sign +1) from orders mu, mu + 1 to nu:
    (value, value at nu + 1); +-inf once it overflows (then frozen: inf - inf is nan)."""
    fnp = _fnpm
    xi2 = 2.0 / x
    top = fnp.max(nl) if nl.size else _counter(nl, numpy.float64)

    def cond(s: tuple) -> Any:
        return s[0] <= top

    def body(s: tuple) -> tuple:
        i, y0, y1 = s
        on = (i <= nl) & fnp.isfinite(y1)
        c = (mu + i) * xi2
        over = on & (fnp.abs(y1) > 1e300 / c)
        y1s = fnp.where(on & ~over, y1, 0.0)
        y0s = fnp.where(on, y0, 0.0)
        yt = c * y1s + (y0s if sign > 0 else -y0s)
        yt = fnp.where(over, fnp.where(y1 < 0, -numpy.inf, numpy.inf), yt)
        # an overflowed lane moves on as inf (its order nu's value is beyond the range too)
        gone = (i <= nl) & ~fnp.isfinite(y1)
        return (i + 1.0, fnp.where(on, y1, fnp.where(gone, y1, y0)), fnp.where(on, yt, y1))

    _, y, y1 = _while(cond, body, (_counter(y0, numpy.float64, 1.0), y0, y1))
    return y, y1


def _deriv(nu: Any, x: Any, y: Any, y1: Any) -> Any:
    """nu / x y_nu - y_(nu+1) (Y' or K'), -y where the values overflow(ed)."""
    fnp = _fnpm
    fin = fnp.isfinite(y) & fnp.isfinite(y1) & (fnp.abs(y) * nu < 1e300 * x)
    ys, y1s = fnp.where(fin, y, 0.0), fnp.where(fin, y1, 0.0)
    return fnp.where(fin, nu / x * ys - y1s, fnp.where(y < 0, numpy.inf, -numpy.inf))


def _bessik_scaled(nu: Any, x: Any) -> tuple[Any, Any, Any, Any]:
    """(I_nu e^-x, K_nu e^x, I'_nu e^-x, K'_nu e^x) for x > 0, nu >= 0 (float64 arrays)."""
    fnp = _fnpm
    nl = fnp.floor(nu + 0.5)
    mu = nu - nl
    mu2 = mu * mu
    xi = 1.0 / x
    xi2 = 2.0 * xi
    h, _ = _lentz_cf1(nu, x, 1.0)
    ril1 = fnp.full_like(x, _FPMIN)
    rip1 = h * ril1
    ril, ripl, fac = _down(nu, x, nl, h, ril1, 1.0)
    f = ripl / ril
    small = x < 2.0
    # Temme's series (x < 2), unscaled, on its lanes
    xs = fnp.where(small, x, 1.0)
    x2 = 0.5 * xs
    pimu = math.pi * mu
    fact = fnp.where(fnp.abs(pimu) < _EPS, 1.0, pimu / fnp.sin(fnp.where(pimu == 0, 1.0, pimu)))
    d = -fnp.log(x2)
    e = mu * d
    fact2 = fnp.where(fnp.abs(e) < _EPS, 1.0, fnp.sinh(e) / fnp.where(e == 0, 1.0, e))
    gam1, gam2, gampl, gammi = _temme_gammas(mu)
    ff = fact * (gam1 * fnp.cosh(e) + gam2 * fact2 * d)
    ee = fnp.exp(e)
    p = 0.5 * ee / gampl
    q = 0.5 / (ee * gammi)
    dd = x2 * x2

    def s_cond(s: tuple) -> Any:
        return fnp.any(~s[-1]) & (s[0] < _MAXIT)

    def s_body(s: tuple) -> tuple:
        i, ff, c, p, q, tot, tot1, done = s
        ff = (i * ff + p + q) / (i * i - mu2)
        c = c * dd / i
        p = p / (i - mu)
        q = q / (i + mu)
        dl = c * ff
        tot_n = tot + dl
        tot1_n = tot1 + c * (p - i * ff)
        new_done = done | (fnp.abs(dl) < fnp.abs(tot_n) * _EPS)
        return (i + 1.0, ff, c, p, q, fnp.where(done, tot, tot_n), fnp.where(done, tot1, tot1_n),
                new_done)

    s_out = _while(s_cond, s_body, (_counter(x, numpy.float64, 1.0), ff, fnp.ones_like(x), p,
                                      q, ff, p, ~small))
    rkmu_s = s_out[5] * fnp.exp(xs)          # scaled by e^x (x < 2: no overflow)
    rk1_s = s_out[6] * xi2 * fnp.exp(xs)
    # Steed's CF2 (x >= 2), scaled by e^x
    xl = fnp.where(small, 2.0, x)
    a1 = 0.25 - mu2
    b = 2.0 * (1.0 + xl)
    d0 = 1.0 / b
    init = (_counter(xl, numpy.float64, 2.0), a1 * 0.0 - a1, b, d0, d0, d0, fnp.zeros_like(xl),
            fnp.ones_like(xl), a1, a1 + 0.0, 1.0 + a1 * d0, small)

    def c_cond(s: tuple) -> Any:
        return fnp.any(~s[-1]) & (s[0] < _MAXIT)

    def c_body(s: tuple) -> tuple:
        i, a, b, d, h, delh, q1, q2, c, q, s_, done = s
        a = a - 2.0 * (i - 1.0)
        c = -a * c / i
        qnew = (q1 - b * q2) / a
        q1n, q2n = q2, qnew
        qn = q + c * qnew
        b = b + 2.0
        d = 1.0 / (b + a * d)
        delh_n = (b * d - 1.0) * delh
        h_n = h + delh_n
        dels = qn * delh_n
        s_n = s_ + dels
        new_done = done | (fnp.abs(dels / s_n) < _EPS)
        keep = done
        return (i + 1.0, a, b, d, fnp.where(keep, h, h_n), fnp.where(keep, delh, delh_n),
                fnp.where(keep, q1, q1n), fnp.where(keep, q2, q2n), c,
                fnp.where(keep, q, qn), fnp.where(keep, s_, s_n), new_done)

    c_out = _while(c_cond, c_body, init)
    hh = a1 * c_out[4]
    rkmu_l = math.sqrt(math.pi / 2.0) / (fnp.sqrt(xl) * c_out[10])
    rk1_l = rkmu_l * (mu + xl + 0.5 - hh) / xl
    rkmu = fnp.where(small, rkmu_s, rkmu_l)
    rk1 = fnp.where(small, rk1_s, rk1_l)
    rkmup = mu * xi * rkmu - rk1
    rimu = xi / (f * rkmu - rkmup)  # scaled by e^-x
    ri = rimu * ril1 / ril * fac
    rip = rimu * rip1 / ril * fac
    # x < 2: I from its power series instead (scaled by e^-x)
    i0, i1 = _power_series(nu, xs, 1.0)
    ex = fnp.exp(-xs)
    ri = fnp.where(small, i0 * ex, ri)
    rip = fnp.where(small, (nu / xs * i0 + i1) * ex, rip)
    rk, rk1 = _up(mu, x, nl, rkmu, rk1, 1.0)
    return ri, rk, rip, _deriv(nu, x, rk, rk1)


def _hankel_sums(nu: Any, x: Any) -> tuple[Any, Any, Any, Any]:
    """Hankel's series in 1/x (DLMF 10.17.1/10.40): the sums of a_k(nu)/x^k with signs
    (+, alternating) and of the derivative's b_k(nu)/x^k (b_k: a_k with its last factor
    4 nu^2 - (2k - 1)^2 replaced by 4 nu^2 + 4 k^2 - 1)."""
    fnp = _fnpm
    mu4 = 4.0 * nu * nu
    prev = fnp.ones_like(x)  # a_(k-1) / x^(k-1)
    s_p, s_a, d_p, d_a = (fnp.ones_like(x) for _ in range(4))
    for k in range(1, 40):
        scale = 1.0 / (k * 8.0 * x)
        term = prev * (mu4 - (2.0 * k - 1.0) ** 2) * scale
        dterm = prev * (mu4 + 4.0 * k * k - 1.0) * scale
        sgn = -1.0 if k % 2 else 1.0
        s_p, s_a = s_p + term, s_a + sgn * term
        d_p, d_a = d_p + dterm, d_a + sgn * dterm
        prev = term
    return s_p, s_a, d_p, d_a


def _hankel_ik(nu: Any, x: Any) -> tuple[Any, Any, Any, Any]:
    """Large x: (I e^-x, K e^x, I' e^-x, K' e^x) (DLMF 10.40.1-4)."""
    fnp = _fnpm
    s_p, s_a, d_p, d_a = _hankel_sums(nu, x)
    ri = 1.0 / fnp.sqrt(2.0 * math.pi * x)
    rk = fnp.sqrt(math.pi / (2.0 * x))
    return s_a * ri, s_p * rk, d_a * ri, -d_p * rk


def _hankel_jy(nu: Any, x: Any) -> tuple[Any, Any, Any, Any]:
    """Large x: (J, Y, J', Y') from Hankel's P, Q (DLMF 10.17.3/4, 10.17.9/10)."""
    fnp = _fnpm
    mu4 = 4.0 * nu * nu
    prev = fnp.ones_like(x)
    p, q = fnp.ones_like(x), fnp.zeros_like(x)
    r, s = fnp.ones_like(x), fnp.zeros_like(x)
    for k in range(1, 40):
        scale = 1.0 / (k * 8.0 * x)
        term = prev * (mu4 - (2.0 * k - 1.0) ** 2) * scale
        dterm = prev * (mu4 + 4.0 * k * k - 1.0) * scale
        # P = sum (-1)^k a_2k / x^2k, Q = sum (-1)^k a_2k+1 / x^2k+1 (same for R, S with b)
        if k % 2 == 0:
            sgn = 1.0 if k % 4 == 0 else -1.0
            p, r = p + sgn * term, r + sgn * dterm
        else:
            sgn = 1.0 if k % 4 == 1 else -1.0
            q, s = q + sgn * term, s + sgn * dterm
        prev = term
    # cos/sin(x - (nu/2 + 1/4) pi) from those of x (exactly reduced by the library) and of
    # the phase: no rounding of a large x - phase
    sp, cp = _sin_cos_pi(0.5 * nu + 0.25)
    sx, cx = fnp.sin(x), fnp.cos(x)
    cchi = cx * cp + sx * sp
    schi = sx * cp - cx * sp
    amp = fnp.sqrt(2.0 / (math.pi * x))
    j = amp * (p * cchi - q * schi)
    y = amp * (p * schi + q * cchi)
    jp = -amp * (r * schi + s * cchi)
    yp = amp * (r * cchi - s * schi)
    return j, y, jp, yp


def _bessjy(nu: Any, x: Any) -> tuple[Any, Any, Any, Any]:
    """(J_nu, Y_nu, J'_nu, Y'_nu) for x > 0, nu >= 0 (float64 arrays)."""
    fnp = _fnpm
    small = x < 2.0
    nl = fnp.where(small, fnp.floor(nu + 0.5), fnp.maximum(0.0, fnp.floor(nu - x + 1.5)))
    mu = nu - nl
    mu2 = mu * mu
    xi = 1.0 / x
    xi2 = 2.0 * xi
    w = xi2 / math.pi
    h, isign = _lentz_cf1(nu, x, -1.0)
    rjl1 = isign * _FPMIN
    rjp1 = h * rjl1
    rjl, rjpl, fac = _down(nu, x, nl, h, rjl1, -1.0)
    rjl = fnp.where(rjl == 0, _EPS, rjl)
    f = rjpl / rjl
    # Temme's series (x < 2; |mu| <= 1/2 there, a stand-in elsewhere)
    xs = fnp.where(small, x, 1.0)
    mu_s = fnp.where(small, mu, 0.0)
    x2 = 0.5 * xs
    pimu = math.pi * mu_s
    fact = fnp.where(fnp.abs(pimu) < _EPS, 1.0, pimu / fnp.sin(fnp.where(pimu == 0, 1.0, pimu)))
    d = -fnp.log(x2)
    e = mu_s * d
    fact2 = fnp.where(fnp.abs(e) < _EPS, 1.0, fnp.sinh(e) / fnp.where(e == 0, 1.0, e))
    gam1, gam2, gampl, gammi = _temme_gammas(mu_s)
    ff = 2.0 / math.pi * fact * (gam1 * fnp.cosh(e) + gam2 * fact2 * d)
    ee = fnp.exp(e)
    p = ee / (gampl * math.pi)
    q = 1.0 / (ee * math.pi * gammi)
    pimu2 = 0.5 * pimu
    fact3 = fnp.where(fnp.abs(pimu2) < _EPS, 1.0,
                      fnp.sin(pimu2) / fnp.where(pimu2 == 0, 1.0, pimu2))
    rr = math.pi * pimu2 * fact3 * fact3
    dd = -x2 * x2

    def s_cond(s: tuple) -> Any:
        return fnp.any(~s[-1]) & (s[0] < _MAXIT)

    def s_body(s: tuple) -> tuple:
        i, ff, c, p, q, tot, tot1, done = s
        ff = (i * ff + p + q) / (i * i - mu_s * mu_s)
        c = c * dd / i
        p = p / (i - mu_s)
        q = q / (i + mu_s)
        dl = c * (ff + rr * q)
        tot_n = tot + dl
        tot1_n = tot1 + (c * p - i * dl)
        new_done = done | (fnp.abs(dl) < (1.0 + fnp.abs(tot_n)) * _EPS)
        return (i + 1.0, ff, c, p, q, fnp.where(done, tot, tot_n), fnp.where(done, tot1, tot1_n),
                new_done)

    s_out = _while(s_cond, s_body, (_counter(x, numpy.float64, 1.0), ff, fnp.ones_like(x), p, q,
                                    ff + rr * q, p, ~small))
    rymu_s = -s_out[5]
    ry1_s = -s_out[6] * xi2
    rymup_s = mu_s * xi * rymu_s - ry1_s
    rjmu_s = w / (rymup_s - f * rymu_s)
    # Steed's CF2 (x >= 2)
    xl = fnp.where(small, 2.0, x)
    xil = 1.0 / xl
    a = 0.25 - mu2
    p0 = -0.5 * xil
    q0 = fnp.ones_like(xl)
    br = 2.0 * xl
    bi = fnp.full_like(xl, 2.0)
    fct = a * xil / (p0 * p0 + q0 * q0)
    cr = br + q0 * fct
    ci = bi + p0 * fct
    den = br * br + bi * bi
    dr = br / den
    di = -bi / den
    dlr = cr * dr - ci * di
    dli = cr * di + ci * dr
    pp = p0 * dlr - q0 * dli
    qq = p0 * dli + q0 * dlr

    def c_cond(s: tuple) -> Any:
        return fnp.any(~s[-1]) & (s[0] < _MAXIT)

    def c_body(s: tuple) -> tuple:
        i, a, bi, cr, ci, dr, di, pp, qq, done = s
        a = a + 2.0 * (i - 1.0)
        bi = bi + 2.0
        dr = a * dr + br
        di = a * di + bi
        dr = fnp.where(fnp.abs(dr) + fnp.abs(di) < _FPMIN, _FPMIN, dr)
        fct = a / (cr * cr + ci * ci)
        cr = br + cr * fct
        ci = bi - ci * fct
        cr = fnp.where(fnp.abs(cr) + fnp.abs(ci) < _FPMIN, _FPMIN, cr)
        den = dr * dr + di * di
        dr = dr / den
        di = -di / den
        dlr = cr * dr - ci * di
        dli = cr * di + ci * dr
        pn = pp * dlr - qq * dli
        qn = pp * dli + qq * dlr
        new_done = done | (fnp.abs(dlr - 1.0) + fnp.abs(dli) < _EPS)
        return (i + 1.0, a, bi, cr, ci, dr, di, fnp.where(done, pp, pn), fnp.where(done, qq, qn),
                new_done)

    c_out = _while(c_cond, c_body, (_counter(pp, numpy.float64, 2.0), a, bi, cr, ci, dr, di, pp,
                                    qq, small))
    pp, qq = c_out[7], c_out[8]
    gam = (pp - f) / qq
    wl = 2.0 * xil / math.pi
    rjmu_l = fnp.sqrt(wl / ((pp - f) * gam + qq))
    rjmu_l = fnp.where(rjl < 0, -rjmu_l, rjmu_l)
    rymu_l = rjmu_l * gam
    rymup_l = rymu_l * (pp + qq / gam)
    ry1_l = mu * xi * rymu_l - rymup_l
    rjmu = fnp.where(small, rjmu_s, rjmu_l)
    rymu = fnp.where(small, rymu_s, rymu_l)
    ry1 = fnp.where(small, ry1_s, ry1_l)
    fct = rjmu / rjl * fac
    rj = rjl1 * fct
    rjp = rjp1 * fct
    # x < 2: J from its power series instead
    j0, j1 = _power_series(nu, xs, -1.0)
    rj = fnp.where(small, j0, rj)
    rjp = fnp.where(small, nu / xs * j0 - j1, rjp)
    ry, ry1 = _up(mu, x, nl, rymu, ry1, -1.0)
    return rj, ry, rjp, _deriv(nu, x, ry, ry1)


# ---------------------------------------------------------------------------------------------
# Values for every real order (x > 0 finite; stand-ins elsewhere, fixed by the callers)


def _big(av: Any, x: Any, ratio: float) -> Any:
    """Where Hankel's 40 terms reach rounding: x > 25 and nu^2 / (2 x) below ``ratio`` (the
    first term's size; measured against mpmath: J, Y, K to 1e-15 up to 4, I's alternating
    sum only up to 2)."""
    return (x > _BIG_X) & (av * av < 2.0 * ratio * x)


def _by_region(av: Any, x: Any, ratio: float, method: Any, hankel: Any) -> tuple:
    """``method(av, x)`` (Temme's) or Hankel's series where :func:`_big` (each on stand-ins
    off its lanes), output by output."""
    fnp = _fnpm
    big = _big(av, x, ratio)
    near = method(fnp.where(big, 0.0, av), fnp.where(big, 1.0, x))
    far = hankel(fnp.where(big, av, 0.0), fnp.where(big, x, 2.0 * _BIG_X))
    return tuple(fnp.where(big, f, n) for n, f in zip(near, far))


def _ik_values(v: Any, x: Any) -> tuple[Any, Any, Any, Any]:
    """(I_v e^-x, K_v e^x, I'_v e^-x, K'_v e^x) for real v, x > 0 (float64)."""
    fnp = _fnpm
    av = fnp.abs(v)
    ri, rk, rip, rkp = _by_region(av, x, 2.0, _bessik_scaled, _hankel_ik)
    # I_-v = I_v + (2/pi) sin(pi v) K_v (K_-v = K_v); scaled: the K term carries e^-2x
    s, _ = _sin_cos_pi(av)
    neg = (v < 0) & (s != 0)
    w = fnp.where(neg, (2.0 / math.pi) * s * fnp.exp(-2.0 * x), 0.0)
    wk = w * fnp.where(w == 0, 0.0, rk)
    wkp = w * fnp.where(w == 0, 0.0, rkp)
    return ri + wk, rk, rip + wkp, rkp


def _jy_values(v: Any, x: Any) -> tuple[Any, Any, Any, Any]:
    """(J_v, Y_v, J'_v, Y'_v) for real v, x > 0 (float64)."""
    fnp = _fnpm
    av = fnp.abs(v)
    j, y, jp, yp = _by_region(av, x, 4.0, _bessjy, _hankel_jy)
    # J_-v = cos(pi v) J_v - sin(pi v) Y_v, Y_-v = sin(pi v) J_v + cos(pi v) Y_v
    s, c = _sin_cos_pi(av)
    neg = v < 0
    s = fnp.where(neg, s, 0.0)
    c = fnp.where(neg, c, 1.0)

    def mul(k: Any, a: Any) -> Any:  # k * a with 0 * inf = 0 (an exactly vanishing term)
        return k * fnp.where(k == 0, 0.0, a)

    return (mul(c, j) - mul(s, y), mul(s, j) + mul(c, y), mul(c, jp) - mul(s, yp),
            mul(s, jp) + mul(c, yp))


def _args(name: str, v: Any, x: Any) -> tuple[Any, Any, Any]:
    v, x = _floats(name, v, x)
    v, x = _fnpm.broadcast_arrays(_fnpm.asarray(v), _fnpm.asarray(x))
    return x, _f64(v), _f64(x)


def _safe(v: Any, x: Any) -> tuple[Any, Any, Any]:
    """(ok, v, |x|) with stand-ins (v = 0, x = 1) where the formulas do not apply."""
    fnp = _fnpm
    ax = fnp.abs(x)
    ok = (ax > 0) & fnp.isfinite(ax) & fnp.isfinite(v)
    return ok, fnp.where(ok, v, 0.0), fnp.where(ok, ax, 1.0)


def _reflect_sign(v: Any, x: Any) -> tuple[Any, Any]:
    """For x < 0: (allowed, sign): integer orders only, sign (-1)^v."""
    fnp = _fnpm
    whole = v == fnp.round(v)
    odd = fnp.abs(fnp.fmod(fnp.where(whole & fnp.isfinite(v), v, 0.0), 2.0)) == 1.0
    return (x >= 0) | whole, fnp.where((x < 0) & odd, -1.0, 1.0)


def _scaled_exp(val: Any, lg: Any) -> Any:
    """val * exp(lg) without overflow warnings (val > 0 or of either sign; |val| <= ~1)."""
    fnp = _fnpm
    over = lg > _LOG_MAX
    out = val * fnp.exp(fnp.where(over, 0.0, lg))
    return fnp.where(over & (val != 0) & ~fnp.isnan(val),
                     fnp.where(val < 0, -numpy.inf, numpy.inf), out)


def _finish(out: Any, like: Any) -> Any:
    return _back(out, like)


def _jv_raw(v: Any, x: Any) -> tuple[Any, Any]:
    fnp = _fnpm
    ok, vs, xs = _safe(v, x)
    j, _, jp, _ = _jy_values(vs, xs)
    allowed, sign = _reflect_sign(v, x)
    j, jp = sign * j, jp * fnp.where(x < 0, -sign, sign)  # d/dx of (-1)^n J(|x|) at x < 0
    whole = v == fnp.round(v)
    gs = _gsign(1.0 + fnp.where(fnp.isfinite(v) & (v < 0), v, 0.0))
    at0 = fnp.where(v == 0, 1.0, fnp.where((v > 0) | whole, 0.0, gs * numpy.inf))
    out = fnp.where(x == 0, at0, j)
    bad = fnp.isnan(v) | fnp.isinf(v) | fnp.isnan(x) | fnp.isinf(x) | ~allowed
    return fnp.where(bad, numpy.nan, out), fnp.where(ok, jp, numpy.nan)


def _yv_raw(v: Any, x: Any) -> tuple[Any, Any]:
    fnp = _fnpm
    ok, vs, xs = _safe(v, x)
    _, y, _, yp = _jy_values(vs, xs)
    flips = fnp.fmod(fnp.floor(fnp.maximum(-fnp.where(fnp.isfinite(v), v, 0.0), 0.0)), 2.0)
    at0 = fnp.where(flips == 1.0, numpy.inf, -numpy.inf)
    out = fnp.where(x == 0, at0, y)
    bad = (fnp.isnan(v) | fnp.isnan(x) | fnp.isinf(x) | (x < 0)
           | (fnp.isinf(v) & (x != 0)))
    return fnp.where(bad, numpy.nan, out), fnp.where(ok, yp, numpy.nan)


def _ive_raw(v: Any, x: Any) -> tuple[Any, Any]:
    """(I_v(x) e^-|x|, its x-derivative) with SciPy's special values."""
    fnp = _fnpm
    ok, vs, xs = _safe(v, x)
    ri, _, rip, _ = _ik_values(vs, xs)
    allowed, sign = _reflect_sign(v, x)
    sx = fnp.where(x < 0, -1.0, 1.0)
    val = sign * ri
    # d/dx [I(|x|) e^-|x|] = (I' - I) e^-|x| * sign(x)
    d = sign * sx * (rip - ri)
    whole = v == fnp.round(v)
    # SciPy: ive of a negative non-integer order at 0 is nan (iv's is inf, set by iv)
    at0 = fnp.where(v == 0, 1.0, fnp.where((v > 0) | whole, 0.0, numpy.nan))
    out = fnp.where(x == 0, at0, val)
    bad = fnp.isnan(v) | fnp.isinf(v) | fnp.isnan(x) | fnp.isinf(x) | ~allowed
    return fnp.where(bad, numpy.nan, out), fnp.where(ok, d, numpy.nan)


def _kve_raw(v: Any, x: Any) -> tuple[Any, Any]:
    """(K_v(x) e^x, its x-derivative) with SciPy's special values."""
    fnp = _fnpm
    ok, vs, xs = _safe(v, x)
    _, rk, _, rkp = _ik_values(vs, xs)
    bad = fnp.isnan(v) | fnp.isnan(x) | fnp.isinf(x) | (x < 0) | fnp.isinf(v)
    # SciPy: inf at 0 whatever the order (nan and inf included)
    out = fnp.where(x == 0, numpy.inf, fnp.where(bad, numpy.nan, rk))
    fin = fnp.isfinite(rk) & fnp.isfinite(rkp)
    d = fnp.where(fin, fnp.where(fin, rkp, 0.0) + fnp.where(fin, rk, 0.0), rkp)
    return out, fnp.where(ok, d, numpy.nan)


def _gsign(z: Any) -> Any:
    """The sign of Gamma(z) for real z (1 at the poles: only used off them)."""
    fnp = _fnpm
    fl = fnp.floor(z)
    return fnp.where((z > 0) | (fl == z), 1.0, fnp.where(fnp.fmod(fl, 2.0) == 0, 1.0, -1.0))


def _with_jvp(raw: Any) -> tuple[Any, Any]:
    """Two custom_jvp wrappers of ``raw(v, x) -> (value, d value / dx)``: one for a traced
    order (its derivative a central difference), one for an order that is not traced (no
    extra evaluations)."""

    @custom_jvp
    def full(v: Any, x: Any) -> Any:
        return raw(v, x)[0]

    @full.defjvp
    def full_jvp(primals: tuple, tangents: tuple) -> tuple:
        (v, x), (tv, tx) = primals, tangents
        val, dx = raw(v, x)
        # d/dv: the functions are analytic in the order, but the method's branch points
        # (the integer part of v, exact sin(pi v) at integers) are not: a fourth-order
        # central difference of the values, h = 1e-3 max(1, |v|) (error about 1e-11 relative)
        h = 1e-3 * _fnpm.maximum(1.0, _fnpm.abs(v))
        f1 = raw(v + h, x)[0] - raw(v - h, x)[0]
        f2 = raw(v + 2.0 * h, x)[0] - raw(v - 2.0 * h, x)[0]
        dv = (8.0 * f1 - f2) / (12.0 * h)
        dv = _fnpm.where(_fnpm.isfinite(val), dv, numpy.nan)
        return val, dx * tx + dv * tv

    @custom_jvp
    def x_only(v: Any, x: Any) -> Any:
        return raw(v, x)[0]

    @x_only.defjvp
    def x_only_jvp(primals: tuple, tangents: tuple) -> tuple:
        (v, x), (_, tx) = primals, tangents
        val, dx = raw(v, x)
        return val, dx * tx

    return full, x_only


_JV = _with_jvp(_jv_raw)
_YV = _with_jvp(_yv_raw)
_IVE = _with_jvp(_ive_raw)
_KVE = _with_jvp(_kve_raw)


def _call(pair: tuple, name: str, v: Any, x: Any) -> tuple[Any, Any, Any]:
    like, vd, xd = _args(name, v, x)
    fn = pair[0] if isinstance(vd, Tracer) else pair[1]
    return like, xd, fn(vd, xd)


def jv(v: Any, z: Any) -> Any:
    """Bessel function of the first kind of real order ``v``, as ``scipy.special.jv`` (real
    ``z``; ``z < 0`` only for integer ``v``, ``(-1)^v J_v(-z)``, nan otherwise);
    differentiable in ``z`` (``J'``) and ``v``.

    Example:
        >>> from funcgrad.scipy.special import jv
        >>> round(float(jv(0.5, 1.0)), 14)   # sqrt(2 / pi) sin(1)
        0.6713967071418
    """
    like, _, out = _call(_JV, "jv", v, z)
    return _finish(out, like)


def yv(v: Any, z: Any) -> Any:
    """Bessel function of the second kind of real order ``v``, as ``scipy.special.yv``
    (``z > 0``; SciPy's infinities at 0, nan below); differentiable in ``z`` and ``v``.

    Example:
        >>> from funcgrad.scipy.special import yv
        >>> round(float(yv(0.5, 1.0)), 15)   # -sqrt(2 / pi) cos(1)
        -0.431098868018376
    """
    like, _, out = _call(_YV, "yv", v, z)
    return _finish(out, like)


def ive(v: Any, z: Any) -> Any:
    """Exponentially scaled modified Bessel function of the first kind,
    ``iv(v, z) * exp(-|z|)``, as ``scipy.special.ive``; differentiable in ``z`` and ``v``.

    Example:
        >>> from funcgrad.scipy.special import ive
        >>> round(float(ive(0.5, 1000.0)), 15)   # iv overflows long before
        0.012615662610101
    """
    like, _, out = _call(_IVE, "ive", v, z)
    return _finish(out, like)


def iv(v: Any, z: Any) -> Any:
    """Modified Bessel function of the first kind of real order ``v``, as
    ``scipy.special.iv`` (``z < 0`` only for integer ``v``; ``inf`` beyond the largest float,
    silently); differentiable in ``z`` and ``v``.

    Example:
        >>> from funcgrad.scipy.special import iv
        >>> round(float(iv(2.5, 3.0)), 12)
        1.515339446682
    """
    like, xd, out = _call(_IVE, "iv", v, z)
    ax = _fnpm.abs(xd)
    out = _scaled_exp(out, _fnpm.where(_fnpm.isfinite(ax), ax, 0.0))
    vd = _f64(_fnpm.broadcast_to(_fnpm.asarray(_floats("iv", v)[0]), _fnpm.shape(xd)))
    pole = (xd == 0) & (vd < 0) & (vd != _fnpm.round(vd))
    out = _fnpm.where(pole, numpy.inf, out)
    # SciPy: iv of an infinite order is 0 (ive's is nan)
    out = _fnpm.where(_fnpm.isinf(vd) & _fnpm.isfinite(xd), 0.0, out)
    return _finish(out, like)


def kve(v: Any, z: Any) -> Any:
    """Exponentially scaled modified Bessel function of the second kind, ``kv(v, z) * exp(z)``,
    as ``scipy.special.kve``; differentiable in ``z`` and ``v``.

    Example:
        >>> from funcgrad.scipy.special import kve
        >>> round(float(kve(0.5, 2.0)), 15)   # sqrt(pi / (2 z))
        0.886226925452758
    """
    like, _, out = _call(_KVE, "kve", v, z)
    return _finish(out, like)


def kv(v: Any, z: Any) -> Any:
    """Modified Bessel function of the second kind of real order ``v`` (``K_-v = K_v``), as
    ``scipy.special.kv`` (``inf`` at 0, nan below; 0 at ``inf``); differentiable in ``z`` and
    ``v`` (the Matern kernel's smoothness).

    Example:
        >>> from funcgrad.scipy.special import kv
        >>> round(float(kv(1.5, 2.0)), 15)
        0.179906657952092
    """
    like, xd, out = _call(_KVE, "kv", v, z)
    fin = _fnpm.isfinite(xd)
    vd = _f64(_fnpm.broadcast_to(_fnpm.asarray(_floats("kv", v)[0]), _fnpm.shape(xd)))
    out = out * _fnpm.exp(-_fnpm.where(fin, xd, 0.0))
    out = _fnpm.where((xd == numpy.inf) & _fnpm.isfinite(vd), 0.0, out)
    return _finish(out, like)


def jn(n: Any, z: Any) -> Any:
    """Bessel function of the first kind, ``scipy.special.jn`` (an alias of :func:`jv`).

    Example:
        >>> from funcgrad.scipy.special import jn
        >>> round(float(jn(2, 1.5)), 12)
        0.232087672144
    """
    return jv(n, z)


def yn(n: Any, z: Any) -> Any:
    """Bessel function of the second kind of integer order, ``scipy.special.yn`` (:func:`yv`
    at the order ``n``, truncated to an integer as SciPy's).

    Example:
        >>> from funcgrad.scipy.special import yn
        >>> round(float(yn(2, 1.5)), 12)
        -0.932193759763
    """
    return yv(_fnpm.trunc(_fnpm.asarray(_floats("yn", n)[0])), z)


def kn(n: Any, z: Any) -> Any:
    """Modified Bessel function of the second kind of integer order, ``scipy.special.kn``
    (:func:`kv` at the order ``n``, truncated to an integer as SciPy's).

    Example:
        >>> from funcgrad.scipy.special import kn
        >>> round(float(kn(2, 1.5)), 12)
        0.583655963257
    """
    return kv(_fnpm.trunc(_fnpm.asarray(_floats("kn", n)[0])), z)


def jve(v: Any, z: Any) -> Any:
    """Exponentially scaled Bessel function of the first kind, ``jv(v, z) exp(-|Im z|)``, as
    ``scipy.special.jve``: for real ``z`` (the only kind here) :func:`jv` itself.

    Example:
        >>> from funcgrad.scipy.special import jve
        >>> round(float(jve(0.5, 2.0)), 12)
        0.513016136562
    """
    return jv(v, z)


def yve(v: Any, z: Any) -> Any:
    """Exponentially scaled Bessel function of the second kind, ``yv(v, z) exp(-|Im z|)``, as
    ``scipy.special.yve``: for real ``z`` :func:`yv` itself.

    Example:
        >>> from funcgrad.scipy.special import yve
        >>> round(float(yve(0.5, 2.0)), 12)
        0.234785710406
    """
    return yv(v, z)
