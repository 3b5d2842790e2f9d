"""The standard normal distribution: ndtr, ndtri, log_ndtr, ndtri_exp and Owen's T."""

from __future__ import annotations

import math
from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device
from funcgrad.ops import special as _sp
from funcgrad.ops.custom_derivatives import custom_jvp
from funcgrad.scipy.special._common import _floats, _fnp, _fnpm, _like
from funcgrad.scipy.special._error import erf, erfc

_SQRT_HALF = math.sqrt(0.5)


def ndtr(x: Any) -> Any:
    """Standard normal CDF ``(1 + erf(x / sqrt(2))) / 2``, accurate in the lower tail.

    Example:
        >>> from funcgrad.scipy.special import ndtr
        >>> float(ndtr(0.0))
        0.5
    """
    (x,) = _floats("ndtr", x)
    return _ew.mul(0.5, _sp.erfc(_ew.mul(x, -_SQRT_HALF)))


def ndtri(y: Any) -> Any:
    """Inverse of :func:`ndtr` on ``[0, 1]``.

    Example:
        >>> from funcgrad.scipy.special import ndtri
        >>> round(float(ndtri(0.975)), 10)
        1.9599639845
    """
    (y,) = _floats("ndtri", y)
    return _ew.mul(-math.sqrt(2.0), _sp.erfcinv(_ew.mul(y, 2.0)))


def log_ndtr(x: Any) -> Any:
    """``log(ndtr(x))``, accurate in both tails: ``log1p(-ndtr(-x))`` for ``x > 0``, and the
    asymptotic series of the Mills ratio for ``x < -10`` (no underflow down to ``-1e154``).

    Example:
        >>> from funcgrad.scipy.special import log_ndtr
        >>> round(float(log_ndtr(-40.0)), 6)
        -804.608442
    """
    (x,) = _floats("log_ndtr", x)
    fnp = _fnp()
    x = fnp.asarray(x)
    upper = fnp.greater(x, 0.0)
    far = fnp.less(x, -10.0)
    x_up = fnp.where(upper, x, 1.0)
    x_mid = fnp.where(fnp.logical_or(upper, far), -1.0, x)
    # below -1e154, -x^2/2 is beyond the float range: -inf (set below)
    huge = fnp.less(x, -1e154)
    x_far = fnp.where(far & ~huge, x, -11.0)
    out_up = fnp.log1p(-ndtr(-x_up))
    out_mid = fnp.log(ndtr(x_mid))
    # log ndtr(x) = -x^2/2 - log(-x) - log(2 pi)/2 + log(1 + sum_n (-1)^n (2n-1)!! / x^(2n)):
    # at x <= -10 twelve terms leave a truncation error below 1e-16.
    # (1/x squared, and x^2/2 as (x/2) x: x^2 overflows, with a warning, past 1e154)
    inv2 = (1.0 / x_far) * (1.0 / x_far)
    s = _like(x_far, 0.0)
    for n in range(12, 0, -1):
        s = (1.0 + s) * (-(2 * n - 1) * inv2)
    out_far = (-(0.5 * x_far) * x_far - fnp.log(-x_far) - 0.5 * math.log(2.0 * math.pi)
               + fnp.log1p(s))
    out = fnp.where(upper, out_up, fnp.where(far, out_far, out_mid))
    out = fnp.where(huge, -numpy.inf, out)
    return fnp.where(fnp.isnan(x), x, out)


def _ndtri_exp_value(y: Any) -> Any:
    fnp = _fnp()
    tiny_p = y < -700.0  # exp(y) would underflow towards the subnormals
    upper = y > -math.log(2.0)
    y_mid = fnp.where(tiny_p | upper, -1.0, y)
    mid = ndtri(fnp.exp(y_mid))
    y_up = fnp.where(upper & (y <= 0), y, -1.0)  # y > 0 is nan below (expm1 would overflow)
    up = -ndtri(-fnp.expm1(y_up))  # the upper tail 1 - exp(y), without cancellation
    # Far lower tail: Newton on log_ndtr(x) = y from the asymptotic start
    # x^2 = -2 y - log(-2 y) - log(2 pi); each step x -= (log_ndtr(x) - y) Phi(x) / phi(x),
    # Phi / phi = exp(log_ndtr(x) + x^2 / 2 + log(2 pi) / 2).
    y_lo = fnp.where(tiny_p & fnp.isfinite(y), y, -800.0)
    # Below -1e10 the start is exact to rounding (the next term is O(log|y| / y^2) relative);
    # there Newton's exponent ln + x^2/2 cancels to rounding noise of |y|-sized numbers.
    t_far = -2.0 * y_lo
    x_far = -fnp.sqrt(t_far - fnp.log(t_far) - math.log(2.0 * math.pi))
    y_lo = fnp.maximum(y_lo, -1e10)
    t = -2.0 * y_lo
    x = -fnp.sqrt(t - fnp.log(t) - math.log(2.0 * math.pi))
    for _ in range(6):
        ln = log_ndtr(x)
        # the exponent ln + x^2/2 + ... is O(log|x|): computed as (ln - y) + (y + x^2/2), each
        # part small (x^2/2 alone overflows its product past |y| = 1e300)
        x = x - (ln - y_lo) * fnp.exp(ln + (0.5 * x) * x + 0.5 * math.log(2.0 * math.pi))
    x = fnp.where(t_far > 2e10, x_far, x)
    out = fnp.where(tiny_p, x, fnp.where(upper, up, mid))
    out = fnp.where(y == 0, numpy.inf, fnp.where(y == -numpy.inf, -numpy.inf, out))
    return fnp.where(y > 0, numpy.nan, out)


@custom_jvp
def _ndtri_exp(y: Any) -> Any:
    return _ndtri_exp_value(y)


@_ndtri_exp.defjvp
def _ndtri_exp_jvp(primals: tuple, tangents: tuple) -> tuple:
    (y,), (ty,) = primals, tangents
    fnp = _fnp()
    x = _ndtri_exp(y)
    # dx/dy = Phi(x) / phi(x) = exp(y + x^2 / 2 + log(2 pi) / 2); below x = -10 that sum
    # cancels (to noise of |y|-sized numbers far out): there the Mills ratio's asymptotic
    # series (1 + sum_n (-1)^n (2n-1)!! / x^(2n)) / (-x), as in log_ndtr.
    far = x < -10.0
    xf = fnp.where(far, x, -11.0)
    inv2 = (1.0 / xf) * (1.0 / xf)
    s = fnp.zeros_like(xf)
    for n in range(12, 0, -1):
        s = (1.0 + s) * (-(2 * n - 1) * inv2)
    ratio_far = (1.0 + s) / (-xf)
    xn, yn = fnp.where(far, 0.0, x), fnp.where(far, 0.0, y)
    ratio = fnp.exp(yn + 0.5 * xn * xn + 0.5 * math.log(2.0 * math.pi))
    return x, ty * fnp.where(far, ratio_far, ratio)


def ndtri_exp(y: Any) -> Any:
    """Inverse of :func:`log_ndtr`: ``x`` with ``log(ndtr(x)) = y`` (``y <= 0``; nan above),
    accurate far in the lower tail (``y = -1e5``, where ``exp(y)`` underflows) and near
    ``y = 0`` (through ``-expm1(y)``). Differentiable: ``dx/dy = ndtr(x) / phi(x)``.

    Example:
        >>> from funcgrad.scipy.special import ndtri_exp
        >>> round(float(ndtri_exp(-1000.0)), 10)
        -44.615747732
    """
    (y,) = _floats("ndtri_exp", y)
    return _ndtri_exp(y)


# Owen's T: 13-point Gauss-Legendre nodes and weights on [0, 1] of t -> a^2 t (as JAX).
_OWENS_T_PTS = numpy.array([
    0.0035082039676451715, 0.031279042338030754, 0.085266826283219451, 0.16245071730812277,
    0.25851196049125435, 0.36807553840697534, 0.48501092905604697, 0.60277514152618577,
    0.71477884217753227, 0.81475510988760099, 0.89711029755948966, 0.95723808085944262,
    0.99178832974629704])
_OWENS_T_WTS = numpy.array([
    0.018831438115323503, 0.018567086243977649, 0.018042093461223386, 0.017263829606398753,
    0.016243219975989857, 0.014994592034116705, 0.013535474469662088, 0.011886351605820165,
    0.010070377242777432, 0.0081130545742299587, 0.0060419009528470239,
    0.0038862217010742058, 0.0016793031084546090])


def _owens_t_value(h: Any, a: Any) -> Any:
    h = _fnpm.abs(h)
    abs_a = _fnpm.abs(a)
    small_a = abs_a <= 1.0
    ma = _fnpm.where(small_a, abs_a, 1.0 / _fnpm.where(abs_a == 0, 1.0, abs_a))
    inf_a = _fnpm.isinf(abs_a)
    mh = _fnpm.where(small_a, h, _fnpm.where(inf_a, 0.0, abs_a) * h)
    dev = get_aval(h).device or get_default_device()
    pts = device_put(_OWENS_T_PTS.astype(get_aval(h).dtype), dev)
    wts = device_put(_OWENS_T_WTS.astype(get_aval(h).dtype), dev)
    r = (ma * ma)[..., None] * pts
    integrand = _fnpm.exp(-0.5 * (mh * mh)[..., None] * (1.0 + r)) / (1.0 + r)
    out = ma * _fnpm.sum(integrand * wts, axis=-1)
    out = _fnpm.where(mh == 0, _fnpm.arctan(ma) / (2 * math.pi), out)
    rt2 = math.sqrt(2.0)
    out = _fnpm.where(ma == 1.0, 0.125 * erfc(-mh / rt2) * erfc(mh / rt2), out)
    # |a| > 1: T(h, a) = (Phi(h) + Phi(a h)) / 2 - Phi(h) Phi(a h) - T(a h, 1 / a) - [h < 0]/2
    normh = erfc(h / rt2)
    normah = erfc(abs_a * h / rt2)
    big = _fnpm.where(abs_a * h <= 0.67,
                      0.25 - 0.25 * erf(h / rt2) * erf(abs_a * h / rt2) - out,
                      0.25 * (normh + normah - normh * normah) - out)
    out = _fnpm.where(small_a, out, big)
    out = _fnpm.where(inf_a, 0.25 * erfc(h / rt2), out)  # T(h, inf) = (1 - Phi(|h|)) / 2
    out = _fnpm.sign(a) * out
    return _fnpm.where(_fnpm.isnan(a) | _fnpm.isnan(h), numpy.nan, out)


@custom_jvp
def _owens_t(h: Any, a: Any) -> Any:
    return _owens_t_value(h, a)


@_owens_t.defjvp
def _owens_t_jvp(primals: tuple, tangents: tuple) -> tuple:
    (h, a), (th, ta) = primals, tangents
    out = _owens_t(h, a)
    d_h = -_fnpm.exp(-0.5 * h * h) * erf(a * h / math.sqrt(2.0)) / (2.0 * math.sqrt(2 * math.pi))
    d_a = _fnpm.exp(-0.5 * (a * a + 1.0) * h * h) / (2.0 * math.pi * (a * a + 1.0))
    return out, d_h * th + d_a * ta


def owens_t(h: Any, a: Any) -> Any:
    """Owen's T function ``T(h, a) = 1/(2 pi) integral_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2)
    dx``, as ``scipy.special.owens_t`` (JAX's 13-point Gauss-Legendre rule with the
    ``|a| > 1`` reflection: absolute error about 1e-16 against SciPy). Differentiable in
    both arguments (closed-form derivatives); float32 stays float32.

    Example:
        >>> from funcgrad.scipy.special import owens_t
        >>> round(float(owens_t(0.5, 2.0)), 12)
        0.141580603654
    """
    h, a = _floats("owens_t", h, a)
    h, a = _fnpm.broadcast_arrays(_fnpm.asarray(h), _fnpm.asarray(a))
    return _owens_t(h, a)
