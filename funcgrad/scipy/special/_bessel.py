"""Bessel functions: modified i0/i0e/i1/i1e (primitives), integer orders 0 and 1 of J, Y and
K (j0, j1, y0, y1, k0, k1, k0e, k1e), and bessel_jn (J of integer orders 0..v)."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy

from funcgrad.avals import get_aval
from funcgrad.ops import special as _sp
from funcgrad.ops.custom_derivatives import custom_jvp
from funcgrad.scipy import _bessel_tables as _bt
from funcgrad.scipy import _quiet
from funcgrad.scipy.special._common import _back, _f64, _floats, _fnp, _fnpm


def i0(x: Any) -> Any:
    """Modified Bessel function of the first kind, order 0 (Cephes' Chebyshev series).
    Its derivative is :func:`i1`, to every order (also at 0).

    Example:
        >>> import funcgrad
        >>> from funcgrad.scipy.special import i0
        >>> round(float(i0(1.0)), 12)
        1.266065877752
        >>> round(float(funcgrad.grad(funcgrad.grad(i0))(0.0)), 12)
        0.5
    """
    return _sp.i0(_floats("i0", x)[0])


def i0e(x: Any) -> Any:
    """Exponentially scaled modified Bessel function of order 0: ``exp(-|x|) i0(x)``.

    Example:
        >>> from funcgrad.scipy.special import i0e
        >>> round(float(i0e(1000.0)), 12)   # i0(1000) overflows
        0.012617240456
    """
    return _sp.i0e(_floats("i0e", x)[0])


def i1(x: Any) -> Any:
    """Modified Bessel function of the first kind, order 1; ``i1' = i0 - i1/x`` (1/2 at 0).

    Example:
        >>> import funcgrad
        >>> from funcgrad.scipy.special import i1
        >>> round(float(i1(1.0)), 12)
        0.565159103992
        >>> round(float(funcgrad.grad(i1)(0.0)), 12)
        0.5
    """
    return _sp.i1(_floats("i1", x)[0])


def i1e(x: Any) -> Any:
    """Exponentially scaled modified Bessel function of order 1: ``exp(-|x|) i1(x)``.

    Example:
        >>> from funcgrad.scipy.special import i1e
        >>> round(float(i1e(1.0)), 12)
        0.20791041535
    """
    return _sp.i1e(_floats("i1e", x)[0])


def bessel_jn(z: Any, *, v: int, n_iter: int = 50) -> Any:
    """Bessel functions of the first kind ``J_0(z), ..., J_v(z)``, as
    ``jax.scipy.special.bessel_jn``: shape ``(v + 1, *z.shape)``. Miller's backward
    recurrence from order ``n_iter``, normalised by ``J_0 + 2 sum J_2k = 1``: accurate (to
    SciPy's ``jv``) while ``|z|`` is well below ``n_iter``; ``J_k(0)`` is 1 for ``k = 0``,
    else 0. Differentiable in ``z``; float32 stays float32.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import bessel_jn
        >>> bessel_jn(np.array([0.0, 1.0, 2.5]), v=1).round(6)
        array([[ 1.      ,  0.765198, -0.048384],
               [ 0.      ,  0.440051,  0.497094]])
    """
    (z,) = _floats("bessel_jn", z)
    z = _fnpm.asarray(z)
    v, n_iter = int(v), int(n_iter)
    if v < 0 or n_iter < v:
        raise ValueError(f"bessel_jn: need 0 <= v <= n_iter, got v={v}, n_iter={n_iter}")
    small = _fnpm.abs(z) < 1e-3  # the series (the recurrence would overflow near 0)
    zs = _fnpm.where(small, 1.0, z)
    f0 = _fnpm.zeros_like(zs)
    f1 = _fnpm.full_like(zs, 1e-16)
    bs = _fnpm.zeros_like(zs)
    vals: list[Any] = [None] * (v + 1)
    f = f0
    big = 1e15  # rescale before the recurrence overflows (small |z| grows it fast)
    for k in range(n_iter, -1, -1):
        f = 2.0 * (k + 1.0) * f1 / zs - f0
        if k % 2 == 0:
            bs = bs + 2.0 * f
        if k <= v:
            vals[k] = f
        f0, f1 = f1, f
        shrink = _fnpm.where(_fnpm.abs(f) > big, 1.0 / big, 1.0).astype(get_aval(zs).dtype)
        f, f0, f1, bs = f * shrink, f0 * shrink, f1 * shrink, bs * shrink
        vals = [None if val is None else val * shrink for val in vals]
    norm = bs - f
    out = _fnpm.stack([val / norm for val in vals])
    # J_k(z) = (z/2)^k / k! (1 - (z/2)^2 / (k + 1) + ...): two terms hold below 1e-3.
    h = _fnpm.where(small, z, 0.0) / 2.0
    series = _fnpm.stack([h ** k / math.factorial(k) * (1.0 - h * h / (k + 1.0))
                          for k in range(v + 1)])
    return _fnpm.where(small, series, out)


# =============================================================================================
# Bessel functions of integer order 0 and 1: j0, j1, y0, y1, k0, k1, k0e, k1e
#
# Chebyshev expansions (funcgrad.scipy._bessel_tables, fitted with mpmath) of smooth
# auxiliary functions: below |x| = 8 (2 for K) the functions less their log(x/2) terms, as
# series in x^2; above, Hankel's form sqrt(2/(pi x)) (P cos chi -+ Q sin chi) with P, x Q in
# 1/x^2 (for K, exp(x) sqrt(x) K(x) in 1/x). Derivatives are the closed forms
# (j0' = -j1, j1' = j0 - j1/x, ...), to every order.


def _cheb(t: Any, coeffs: tuple) -> Any:
    """sum_k c_k T_k(t) by Clenshaw's recurrence (``coeffs`` highest first)."""
    b1: Any = 0.0
    b2: Any = 0.0
    for c in coeffs[:-1]:
        b1, b2 = 2.0 * t * b1 - b2 + c, b1
    return t * b1 - b2 + coeffs[-1]


_BIG_JY = 8.0
_BIG_K = 2.0
_TWO_OVER_PI = 2.0 / math.pi


def _hankel(n: int, ax: Any) -> tuple[Any, Any]:
    """``(J_n, Y_n)`` at ``ax >= 8`` (finite) by Hankel's form; chi = x - (2n + 1) pi / 4 from
    sin x, cos x (exact argument reduction), not by subtracting pi / 4 from a large x."""
    fnp = _fnp()
    r8 = _BIG_JY / ax
    t = 2.0 * r8 * r8 - 1.0  # (8/x)^2: x * x itself overflows far out
    p = _cheb(t, _bt.P0_BIG if n == 0 else _bt.P1_BIG)
    q = _cheb(t, _bt.Q0_BIG if n == 0 else _bt.Q1_BIG) / ax
    c, s = fnp.cos(ax), fnp.sin(ax)
    r = math.sqrt(0.5)
    cos_chi, sin_chi = ((c + s) * r, (s - c) * r) if n == 0 else ((s - c) * r, -(s + c) * r)
    amp = fnp.sqrt(_TWO_OVER_PI / ax)
    return amp * (p * cos_chi - q * sin_chi), amp * (p * sin_chi + q * cos_chi)


def _jy_split(x: Any) -> tuple[Any, Any, Any, Any]:
    """(|x| <= 8 mask, stand-in |x| for the series, for Hankel's form, |x| infinite)."""
    fnp = _fnp()
    ax = fnp.abs(x)
    small = ax <= _BIG_JY
    inf = fnp.isinf(ax)
    return small, fnp.where(small, ax, 0.0), fnp.where(small | inf, _BIG_JY, ax), inf


def _j0_value(x: Any) -> Any:
    fnp = _fnp()
    small, xs, xl, inf = _jy_split(x)
    v_small = _cheb(xs * xs / (0.5 * _BIG_JY * _BIG_JY) - 1.0, _bt.J0_SMALL)
    v = fnp.where(small, v_small, _hankel(0, xl)[0])
    return fnp.where(inf, numpy.nan, v)  # SciPy's (and torch's) nan: no phase at inf


def _j1x_value(x: Any) -> Any:
    """J_1(x) / x (1/2 at 0; even)."""
    fnp = _fnp()
    small, xs, xl, inf = _jy_split(x)
    v_small = _cheb(xs * xs / (0.5 * _BIG_JY * _BIG_JY) - 1.0, _bt.J1_SMALL)
    v = fnp.where(small, v_small, _hankel(1, xl)[0] / xl)
    return fnp.where(inf, numpy.nan, v)


def _y_small_parts(x: Any) -> tuple[Any, Any, Any, Any]:
    """(0 < x <= 8 mask, stand-in x there, for Hankel's form, x = inf)."""
    fnp = _fnp()
    small = (x > 0) & (x <= _BIG_JY)
    big = (x > _BIG_JY) & (x < numpy.inf)
    return small, fnp.where(small, x, 1.0), fnp.where(big, x, _BIG_JY), x == numpy.inf


def _y0_value(x: Any) -> Any:
    fnp = _fnp()
    small, xs, xl, inf = _y_small_parts(x)
    aux = _cheb(xs * xs / (0.5 * _BIG_JY * _BIG_JY) - 1.0, _bt.Y0_SMALL)
    v_small = aux + _TWO_OVER_PI * fnp.log(0.5 * xs) * _j0_value(xs)
    v = fnp.where(small, v_small, _hankel(0, xl)[1])
    v = fnp.where(inf, numpy.nan, v)
    v = fnp.where(x == 0, -numpy.inf, v)
    return fnp.where((x < 0) | fnp.isnan(x), numpy.nan, v)


def _y1_value(x: Any) -> Any:
    fnp = _fnp()
    small, xs, xl, inf = _y_small_parts(x)
    aux = _cheb(xs * xs / (0.5 * _BIG_JY * _BIG_JY) - 1.0, _bt.Y1_SMALL)
    v_small = aux / xs + _TWO_OVER_PI * fnp.log(0.5 * xs) * xs * _j1x_value(xs)
    v = fnp.where(small, v_small, _hankel(1, xl)[1])
    v = fnp.where(inf, numpy.nan, v)
    v = fnp.where(x == 0, -numpy.inf, v)
    return fnp.where((x < 0) | fnp.isnan(x), numpy.nan, v)


def _k_value(n: int, scaled: bool, x: Any) -> Any:
    """K_n(x) (``exp(x) K_n(x)`` when ``scaled``), n = 0, 1: inf at 0, nan below."""
    fnp = _fnp()
    small = (x > 0) & (x <= _BIG_K)
    big = (x > _BIG_K) & (x < numpy.inf)
    xs = fnp.where(small, x, 1.0)
    xl = fnp.where(big, x, 4.0)
    t = xs * xs / (0.5 * _BIG_K * _BIG_K) - 1.0
    log_half = fnp.log(0.5 * xs)
    if n == 0:
        v_small = _cheb(t, _bt.K0_SMALL) - log_half * _sp.i0(xs)
    else:
        v_small = (_cheb(t, _bt.K1_SMALL) + xs * log_half * _sp.i1(xs)) / xs
    if scaled:
        v_small = v_small * fnp.exp(xs)
    tb = 2.0 * _BIG_K / xl - 1.0
    v_big = _cheb(tb, _bt.K0_BIG if n == 0 else _bt.K1_BIG) / fnp.sqrt(xl)
    if not scaled:
        v_big = v_big * fnp.exp(-xl)
    v = fnp.where(small, v_small, v_big)
    v = fnp.where(x == numpy.inf, 0.0, v)
    v = fnp.where(x == 0, numpy.inf, v)
    return fnp.where((x < 0) | fnp.isnan(x), numpy.nan, v)


@custom_jvp
def _j0(x: Any) -> Any:
    return _j0_value(x)


@custom_jvp
def _j1x(x: Any) -> Any:
    return _j1x_value(x)


@_j0.defjvp
def _j0_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (tx,) = primals, tangents
    return _j0(x), -_j1(x) * tx


@_j1x.defjvp
def _j1x_jvp(primals: tuple, tangents: tuple) -> tuple:
    # (J1/x)' = (J0 - 2 J1/x) / x, which is -x/8 + ... near 0, where it cancels: there (below
    # |x| = 1/2, where the cancellation costs under a digit) the series' derivative,
    # (x/4) sum_{k>=1} (-1)^k z^(k-1) / ((k-1)! (k+1)!), z = x^2/4 (ten terms reach 1e-30).
    (x,), (tx,) = primals, tangents
    fnp = _fnp()
    near = fnp.abs(x) < 0.5
    xs = fnp.where(near, 1.0, x)
    far = (_j0(xs) - 2.0 * _j1x(xs)) / xs
    xn = fnp.where(near, x, 0.0)
    z = 0.25 * xn * xn
    acc: Any = 0.0
    for k in range(10, 0, -1):
        acc = acc * z + (-1.0) ** k / (math.factorial(k - 1) * math.factorial(k + 1))
    series = 0.25 * xn * acc
    return _j1x(x), fnp.where(near, series, far) * tx


@custom_jvp
def _y0(x: Any) -> Any:
    return _y0_value(x)


@custom_jvp
def _y1(x: Any) -> Any:
    return _y1_value(x)


@_y0.defjvp
def _y0_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (tx,) = primals, tangents
    return _y0(x), -_y1(x) * tx


@_y1.defjvp
def _y1_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (tx,) = primals, tangents
    y1 = _y1(x)
    return y1, (_y0(x) - _quiet.div(y1, x)) * tx


@functools.partial(custom_jvp, nondiff_argnums=(0, 1))
def _k(n: int, scaled: bool, x: Any) -> Any:
    return _k_value(n, scaled, x)


@_k.defjvp
def _k_jvp(n: int, scaled: bool, primals: tuple, tangents: tuple) -> tuple:
    # K0' = -K1, K1' = -K0 - K1/x; the scaled ones add themselves (d exp(x) = exp(x)).
    (x,), (tx,) = primals, tangents
    out = _k(n, scaled, x)
    k1 = out if n == 1 else _k(1, scaled, x)
    d = -k1 if n == 0 else -_k(0, scaled, x) - _quiet.div(k1, x)
    if scaled:
        d = d + out
    return out, d * tx


def _j1(x: Any) -> Any:
    # x (J1 / x) below 8; above, Hankel's form itself (J1 / x underflows at 1e300).
    fnp = _fnp()
    small, _, xl, inf = _jy_split(x)
    v = fnp.where(small, fnp.where(small, x, 0.0) * _j1x(x),
                  fnp.sign(x) * _hankel(1, xl)[0])
    return fnp.where(inf, numpy.nan, v)


def _bessel01(name: str, fn: Any, x: Any) -> Any:
    (x,) = _floats(name, x)
    x = _fnp().asarray(x)
    return _back(fn(_f64(x)), x)


def j0(x: Any) -> Any:
    """Bessel function of the first kind of order 0, as ``scipy.special.j0`` (real ``x``);
    derivative ``-j1(x)``, to every order.

    Example:
        >>> from funcgrad.scipy.special import j0
        >>> round(float(j0(1.0)), 12)
        0.765197686558
    """
    return _bessel01("j0", _j0, x)


def j1(x: Any) -> Any:
    """Bessel function of the first kind of order 1, as ``scipy.special.j1``; derivative
    ``j0(x) - j1(x) / x`` (``1/2`` at 0).

    Example:
        >>> from funcgrad.scipy.special import j1
        >>> round(float(j1(1.0)), 12)
        0.440050585745
    """
    return _bessel01("j1", _j1, x)


def y0(x: Any) -> Any:
    """Bessel function of the second kind of order 0, as ``scipy.special.y0`` (``-inf`` at 0,
    nan for ``x < 0``); derivative ``-y1(x)``.

    Example:
        >>> from funcgrad.scipy.special import y0
        >>> round(float(y0(1.0)), 12)
        0.088256964216
    """
    return _bessel01("y0", _y0, x)


def y1(x: Any) -> Any:
    """Bessel function of the second kind of order 1, as ``scipy.special.y1`` (``-inf`` at 0,
    nan for ``x < 0``); derivative ``y0(x) - y1(x) / x``.

    Example:
        >>> from funcgrad.scipy.special import y1
        >>> round(float(y1(2.0)), 12)
        -0.107032431541
    """
    return _bessel01("y1", _y1, x)


def k0(x: Any) -> Any:
    """Modified Bessel function of the second kind of order 0, as ``scipy.special.k0``
    (``inf`` at 0, nan for ``x < 0``); derivative ``-k1(x)``.

    Example:
        >>> from funcgrad.scipy.special import k0
        >>> round(float(k0(1.0)), 12)
        0.421024438241
    """
    return _bessel01("k0", functools.partial(_k, 0, False), x)


def k1(x: Any) -> Any:
    """Modified Bessel function of the second kind of order 1, as ``scipy.special.k1``;
    derivative ``-k0(x) - k1(x) / x``.

    Example:
        >>> from funcgrad.scipy.special import k1
        >>> round(float(k1(1.0)), 12)
        0.601907230197
    """
    return _bessel01("k1", functools.partial(_k, 1, False), x)


def k0e(x: Any) -> Any:
    """Exponentially scaled ``exp(x) k0(x)``, finite far beyond where ``k0`` underflows, as
    ``scipy.special.k0e``.

    Example:
        >>> from funcgrad.scipy.special import k0e
        >>> round(float(k0e(1000.0)), 12)
        0.039628321601
    """
    return _bessel01("k0e", functools.partial(_k, 0, True), x)


def k1e(x: Any) -> Any:
    """Exponentially scaled ``exp(x) k1(x)``, as ``scipy.special.k1e``.

    Example:
        >>> from funcgrad.scipy.special import k1e
        >>> round(float(k1e(1.0)), 12)
        1.636153486263
    """
    return _bessel01("k1e", functools.partial(_k, 1, True), x)
