"""Special functions as primitives: ``erf``, ``erfc``, ``erfinv``, ``erfcinv``, ``lgamma``,
``digamma`` and ``polygamma`` (behind ``funcgrad.scipy.special``).

SciPy is not a dependency: the implementations are vectorised array code on the backend
(``xp``), accurate to a few ulps in float64 (checked against SciPy to ~1e-13 relative):

* ``erf``/``erfc``: a Taylor polynomial for ``|x| < 0.5``; above, ``erfc(x) = exp(-x^2)
  erfcx(x)`` with ``erfcx`` from Chebyshev-economised polynomials on five intervals up to 10
  and its asymptotic series beyond, and ``exp(-x^2)`` from an exact split of ``x^2``;
* ``erfinv``/``erfcinv``: an initial guess refined by three Halley steps on ``erf`` (or on
  ``erfc`` in the tails, so ``erfcinv`` of tiny arguments keeps full relative accuracy);
* ``lgamma`` (``log|Gamma(x)|``): a polynomial for ``log Gamma(2 + z) / z`` on ``|z| <= 1/2``
  (exact near the zeros at 1 and 2), the recurrence below 10, Stirling's series above, and
  the reflection formula for negative ``x``;
* ``digamma``: a polynomial around its positive root, the recurrence to ``x >= 10`` then the
  asymptotic series, reflection for negative ``x``;
* ``polygamma(n, x)`` for ``n >= 1``: ``(-1)^(n+1) n! zeta(n + 1, x)`` with the Hurwitz zeta
  function by the recurrence and the Euler-Maclaurin formula.

The polynomial coefficients were computed with mpmath at 50 digits. float16/float32 inputs
compute in float64 and round once; integer inputs give float64 (as SciPy's float64 loops).

Example:
    >>> import numpy as np
    >>> erf(np.array([0.0, 0.5, 2.0]))
    array([0.        , 0.52049988, 0.99532227])
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import operator_index, xp_for
from funcgrad.core import Primitive, bind1
from funcgrad.errors import DTypeError
from funcgrad.interpreters import batching, eager_vjp
from funcgrad.interpreters.jvp import defjvp, elementwise_primitives
from funcgrad.ops._util import check_static, make_primitive
from funcgrad.ops.custom_derivatives import custom_jvp

__all__ = [
    "erf", "erf_p", "erfc", "erfc_p", "erfinv", "erfinv_p", "erfcinv", "erfcinv_p",
    "lgamma", "lgamma_p", "digamma", "digamma_p", "polygamma", "polygamma_p",
    "i0", "i0_p", "i0e", "i1", "i1e",
]

_F64 = numpy.dtype(numpy.float64)
_SQRT_PI = math.sqrt(math.pi)
_TWO_OVER_SQRT_PI = 2.0 / _SQRT_PI

# ---------------------------------------------------------------------------------------------
# Coefficient tables (highest degree first). Generated with mpmath (mp.dps = 50) by
# mpmath.chebyfit on each interval mapped to t in [-1, 1]; relative error below 2e-17.

_ERFCX_INTERVALS = (
    (0.5, 1.0, (
        -2.1463289279578493e-13,
        2.585599367357183e-12,
        -2.940348914756972e-11,
        3.306043556501409e-10,
        -3.5801438250789833e-09,
        3.719545089633589e-08,
        -3.693562177597921e-07,
        3.4885738732198706e-06,
        -3.114966996088564e-05,
        0.00026090055675162256,
        -0.002028688468670001,
        0.014434883221955935,
        -0.09199317291394885,
        0.5069376502931449,
    )),
    (1.0, 2.0, (
        2.0206514750441873e-13,
        -1.512018061489917e-12,
        1.0201594788774491e-11,
        -7.257032617086992e-11,
        5.04654734183512e-10,
        -3.405938587821499e-09,
        2.2328417586062252e-08,
        -1.4191186135917107e-07,
        8.72304473829848e-07,
        -5.171328672722121e-06,
        2.947085745299996e-05,
        -0.0001608111733699307,
        0.0008360838095667121,
        -0.004116363162445659,
        0.01903775996386935,
        -0.08181145886628002,
        0.3215854164543175,
    )),
    (2.0, 3.5, (
        8.851916068237646e-13,
        -5.421228567545658e-12,
        2.8878131329194236e-11,
        -1.7001807646468688e-10,
        9.887504078758795e-10,
        -5.602422802198463e-09,
        3.108361702991619e-08,
        -1.6874281363675855e-07,
        8.950251073955012e-07,
        -4.631705425368645e-06,
        2.3347542131509886e-05,
        -0.00011442715393072321,
        0.0005440864558925703,
        -0.0025035488002977907,
        0.011114208555369105,
        -0.047428228170476094,
        0.1936620962790687,
    )),
    (3.5, 6.0, (
        2.428731220603442e-13,
        -1.2196993078585577e-12,
        4.909394868246539e-12,
        -2.4030969532872346e-11,
        1.1864420691597732e-10,
        -5.68417156906027e-10,
        2.6891792576672485e-09,
        -1.2581394720588665e-08,
        5.8137222687597515e-08,
        -2.652091097325896e-07,
        1.193833166581947e-06,
        -5.300367898784373e-06,
        2.3197611048019317e-05,
        -0.00010002374614205948,
        0.0004246296485367147,
        -0.0017736306582609063,
        0.007283322451519282,
        -0.029379310747703943,
        0.11630270721024731,
    )),
    (6.0, 10.0, (
        3.544700514448235e-13,
        -1.6071078129403274e-12,
        5.563146213783343e-12,
        -2.4864618466069205e-11,
        1.1386873404136305e-10,
        -5.035110055988118e-10,
        2.2097680138112735e-09,
        -9.655938660924457e-09,
        4.1940682214258e-08,
        -1.8104037931438193e-07,
        7.765864876334957e-07,
        -3.3100161416433843e-06,
        1.4016651255173908e-05,
        -5.896286918680604e-05,
        0.00024636396516381507,
        -0.001022307653893261,
        0.004212412598156342,
        -0.017233015762835466,
        0.06998516620088092,
    )),
)
_LGAMMA2_COEFFS = (
    -5.043009058425092e-13,
    2.126623574915764e-12,
    -6.599791480347414e-12,
    2.807778288259308e-11,
    -1.247500494813837e-10,
    5.352422368894483e-10,
    -2.3043738035184404e-09,
    1.0012495486246804e-08,
    -4.3873352909331736e-08,
    1.9425326866834958e-07,
    -8.716982578328323e-07,
    3.981793089152702e-06,
    -1.8636779872543994e-05,
    9.032844784482085e-05,
    -0.0004615969392919999,
    0.0025726010534725475,
    -0.016838075263299526,
    0.16123351671205663,
    0.42278433509846713,
)
_DIGAMMA_ROOT_COEFFS = (
    -1.6530964913675826e-12,
    9.665748828005409e-12,
    -4.9907307852125454e-11,
    2.918661602769308e-10,
    -1.717957198308939e-09,
    1.0052108758066391e-08,
    -5.8840688573487294e-08,
    3.4481202417037857e-07,
    -2.0239945674371295e-06,
    1.1915109599940155e-05,
    -7.050738403554525e-05,
    0.00042118769798958297,
    -0.002561604772537791,
    0.016156235059729292,
    -0.11069079224589802,
    0.9676722454476212,
)
_DIGAMMA_ROOT = (1.4616321449683622, 9.549995429965697e-17)
_BERNOULLI_2K = (0.16666666666666666, -0.03333333333333333, 0.023809523809523808, -0.03333333333333333, 0.07575757575757576, -0.2531135531135531, 1.1666666666666667, -7.092156862745098, 54.971177944862156, -529.1242424242424, 6192.123188405797, -86580.25311355312, 1425517.1666666667, -27298231.067816094)


_ERF_SMALL = tuple(
    _TWO_OVER_SQRT_PI * (-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(13, -1, -1)
)
# erfcx(x) ~ (1 / (x sqrt(pi))) * sum_k (-1)^k (2k - 1)!! z^k with z = 1 / (2 x^2), x >= 10.
_ERFCX_ASYMPT = tuple(
    float((-1) ** k * math.prod(range(1, 2 * k, 2))) for k in range(12, -1, -1)
)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
# Stirling: lgamma(x) = (x - 1/2) log x - x + log(2 pi) / 2 + sum_k B2k / (2k (2k-1) x^(2k-1)).
_STIRLING = tuple(
    b / (2 * k * (2 * k - 1)) for k, b in reversed(list(enumerate(_BERNOULLI_2K[:9], 1)))
)
# digamma(x) = log x - 1 / (2x) - sum_k B2k / (2k x^(2k)).
_DIGAMMA_ASYMPT = tuple(b / (2 * k) for k, b in reversed(list(enumerate(_BERNOULLI_2K[:10], 1))))


def _horner(coeffs: tuple[float, ...], t: Any) -> Any:
    acc = coeffs[0] * t + coeffs[1]
    for c in coeffs[2:]:
        acc = acc * t + c
    return acc


# ---------------------------------------------------------------------------------------------
# float64 kernels on flat (1-D) arrays of any backend


def _erfcx_table(xp: Any, ax: Any) -> Any:
    """``exp(x^2) erfc(x)`` for ``x >= 0.5`` (nan elsewhere)."""
    r = xp.full(ax.shape, numpy.nan)
    for a, b, coeffs in _ERFCX_INTERVALS:
        m = (ax >= a) & (ax < b)
        if m.any():  # small inputs usually touch one interval: skip the others' work
            v = ax[m]
            r[m] = _horner(coeffs, (2.0 * v - (a + b)) / (b - a))
    m = ax >= 10.0
    if m.any():
        v = ax[m]
        r[m] = _horner(_ERFCX_ASYMPT, 0.5 / (v * v)) / (v * _SQRT_PI)
    return r


def _erfc_pos(xp: Any, ax: Any) -> Any:
    """``erfc(x)`` for ``x >= 0.5``."""
    # exp(-x^2) with x^2 split exactly (hi^2 has few bits), so large x keep full accuracy.
    hi = xp.floor(ax * 65536.0) / 65536.0
    lo = ax - hi
    out = xp.exp(-hi * hi) * xp.exp(-lo * (ax + hi)) * _erfcx_table(xp, ax)
    return xp.where(ax >= 27.5, 0.0, out)  # below the smallest subnormal


def _erf_small(v: Any) -> Any:
    """``erf(v)`` for ``|v| < 0.5``."""
    return v * _horner(_ERF_SMALL, v * v)


def _erf64(xp: Any, x: Any) -> Any:
    small = xp.abs(x) < 0.5
    if small.all():
        return _erf_small(x)
    out = xp.empty_like(x)
    v = x[small]
    out[small] = _erf_small(v)
    m = ~small
    v = x[m]
    out[m] = xp.copysign(1.0 - _erfc_pos(xp, xp.abs(v)), v)
    return out


def _erfc64(xp: Any, x: Any) -> Any:
    small = xp.abs(x) < 0.5
    if small.all():
        return 1.0 - _erf_small(x)
    out = xp.empty_like(x)
    out[small] = 1.0 - _erf_small(x[small])
    m = ~small
    v = x[m]
    c = _erfc_pos(xp, xp.abs(v))
    out[m] = xp.where(v < 0, 2.0 - c, c)
    return out


def _halley_erf(xp: Any, x: Any, target: Any, tail: bool) -> Any:
    """Halley steps for ``erf(x) = target`` (``erfc(x) = target`` when ``tail``), x > 0."""
    # Cubic convergence from Winitzki's guess: its ~1e-3 relative error in the centre needs
    # two steps; far in the tail (erfcinv(1e-300)) it is ~1e-2, which needs three.
    for _ in range(3 if tail else 2):
        fp = _TWO_OVER_SQRT_PI * xp.exp(-x * x)
        # f = erf(x) - y, from erfc in the tail where erf(x) is too close to 1.
        f = target - _erfc64(xp, x) if tail else _erf64(xp, x) - target
        x = x - f / (fp + x * f)
    return x


def _erfinv_core(xp: Any, ay: Any, tail: Any) -> Any:
    """``x >= 0`` with ``erf(x) = ay``, given ``tail = 1 - ay`` (exact where ``ay >= 0.5``)."""
    # Winitzki's approximation (relative error ~1e-3), then Halley steps.
    a = 0.147
    w = -(xp.log(tail) + xp.log1p(ay))
    t = 2.0 / (math.pi * a) - 0.5 * w
    x = xp.sqrt(xp.maximum(xp.sqrt(t * t + w / a) - t, 0.0))
    in_tail = ay >= 0.5
    if not in_tail.any():
        return _halley_erf(xp, x, ay, tail=False)
    if in_tail.all():
        return _halley_erf(xp, x, tail, tail=True)
    out = xp.empty_like(x)
    out[in_tail] = _halley_erf(xp, x[in_tail], tail[in_tail], tail=True)
    m = ~in_tail
    out[m] = _halley_erf(xp, x[m], ay[m], tail=False)
    return out


def _erfinv64(xp: Any, y: Any) -> Any:
    ay = xp.abs(y)
    inside = ay < 1.0
    a = xp.where(inside, ay, 0.0)
    x = _erfinv_core(xp, a, 1.0 - a)
    x = xp.where(inside, x, xp.where(ay == 1.0, numpy.inf, numpy.nan))
    return xp.copysign(x, y)


def _erfcinv64(xp: Any, c: Any) -> Any:
    lower = c < 1.0
    cc = xp.where(lower, c, 2.0 - c)  # exact for c in [1, 2]
    inside = (c > 0.0) & (c < 2.0)
    cc = xp.where(inside, cc, 0.5)
    x = _erfinv_core(xp, 1.0 - cc, cc)
    x = xp.where(lower, x, -x)
    edge = xp.where(c == 0.0, numpy.inf, xp.where(c == 2.0, -numpy.inf, numpy.nan))
    return xp.where(inside, x, edge)


def _lgamma_small(z: Any) -> Any:
    """``lgamma(2 + z)`` for ``|z| <= 1/2`` (relative accuracy near the zero at ``z = 0``)."""
    return z * _horner(_LGAMMA2_COEFFS, 2.0 * z)


def _put(out: Any, m: Any, fn: Any, src: Any) -> None:
    """``out[m] = fn(src[m])``, skipped when ``m`` is empty (small inputs hit few branches)."""
    if m.any():
        out[m] = fn(src[m])


def _lgamma_mid(xp: Any, z: Any) -> Any:
    """``lgamma(z)`` for ``2.5 <= z < 10``: down into [1.5, 2.5) by the recurrence."""
    prod = xp.ones_like(z)
    for _ in range(8):  # lgamma(z) = log((z-1)...(z-k)) + lgamma(z-k)
        step = z >= 2.5
        z = xp.where(step, z - 1.0, z)
        prod = xp.where(step, prod * z, prod)
    return xp.log(prod) + _lgamma_small(z - 2.0)


def _lgamma_pos(xp: Any, v: Any) -> Any:
    """``lgamma(v)`` for finite ``v > 0``."""
    out = xp.empty_like(v)
    # lgamma(z) = lgamma(z + 2) - log(z (z + 1)) below 1/2.
    _put(out, v < 0.5, lambda z: _lgamma_small(z) - xp.log(z) - xp.log1p(z), v)
    _put(out, (v >= 0.5) & (v < 1.5), lambda z: _lgamma_small(z - 1.0) - xp.log1p(z - 1.0), v)
    _put(out, (v >= 1.5) & (v < 2.5), lambda z: _lgamma_small(z - 2.0), v)
    _put(out, (v >= 2.5) & (v < 10.0), lambda z: _lgamma_mid(xp, z), v)
    _put(out, v >= 10.0, lambda z: (z - 0.5) * xp.log(z) - z + _HALF_LOG_2PI
         + _horner(_STIRLING, 1.0 / (z * z)) / z, v)
    return out


def _lgamma_reflected(xp: Any, v: Any) -> Any:
    """``lgamma(v)`` for finite negative non-integer ``v``."""
    s = xp.abs(xp.sin(math.pi * (v - xp.round(v))))
    return xp.log(math.pi / s) - _lgamma_pos(xp, 1.0 - v)


def _lgamma64(xp: Any, x: Any) -> Any:
    finite = xp.isfinite(x)
    pos = finite & (x > 0)
    if pos.all():
        return _lgamma_pos(xp, x)
    out = xp.full_like(x, numpy.nan)
    _put(out, pos, lambda v: _lgamma_pos(xp, v), x)
    out[x == numpy.inf] = numpy.inf
    out[x == -numpy.inf] = -numpy.inf  # as SciPy
    integer = finite & (x == xp.floor(x))
    out[integer & (x <= 0)] = numpy.inf
    _put(out, finite & (x < 0) & ~integer, lambda v: _lgamma_reflected(xp, v), x)
    return out


def _digamma_rest(xp: Any, z: Any) -> Any:
    """``digamma(z)`` for ``z > 0``: the recurrence up to 10, then the asymptotic series."""
    acc = xp.zeros_like(z)
    for _ in range(10):  # psi(z) = psi(z + 1) - 1 / z
        step = z < 10.0
        acc = xp.where(step, acc - 1.0 / z, acc)
        z = xp.where(step, z + 1.0, z)
    w = 1.0 / (z * z)
    return acc + xp.log(z) - 0.5 / z - w * _horner(_DIGAMMA_ASYMPT, w)


def _digamma_root(v: Any) -> Any:
    """``digamma(v)`` within 1/4 of its positive root (relative accuracy at the root)."""
    hi, lo = _DIGAMMA_ROOT
    h = (v - hi) - lo
    return h * _horner(_DIGAMMA_ROOT_COEFFS, 4.0 * h)


def _digamma_pos(xp: Any, v: Any) -> Any:
    """``digamma(v)`` for finite ``v > 0``."""
    out = xp.empty_like(v)
    root = xp.abs(v - _DIGAMMA_ROOT[0]) < 0.25
    _put(out, root, _digamma_root, v)
    _put(out, ~root, lambda z: _digamma_rest(xp, z), v)
    return out


def _digamma64(xp: Any, x: Any) -> Any:
    finite = xp.isfinite(x)
    pos = finite & (x > 0)
    if pos.all():
        return _digamma_pos(xp, x)
    out = xp.full_like(x, numpy.nan)
    _put(out, pos, lambda v: _digamma_pos(xp, v), x)
    out[x == numpy.inf] = numpy.inf
    zero = x == 0
    _put(out, zero, lambda v: xp.where(xp.signbit(v), numpy.inf, -numpy.inf), x)  # as SciPy
    _put(out, finite & (x < 0) & (x != xp.floor(x)),
         lambda v: _digamma_pos(xp, 1.0 - v) - math.pi / xp.tan(math.pi * (v - xp.round(v))),
         x)
    return out


def _cot_derivative_poly(n: int) -> tuple[float, ...]:
    """``P_n`` with ``d^n/dy^n cot(y) = P_n(cot y)`` (highest degree first, degree n + 1)."""
    p = [0, 1]  # lowest degree first: P_0(c) = c
    for _ in range(n):
        dp = [i * p[i] for i in range(1, len(p))] or [0]
        # P_{k+1} = -(1 + c^2) P_k'(c)
        nxt = [0] * (len(dp) + 2)
        for i, a in enumerate(dp):
            nxt[i] -= a
            nxt[i + 2] -= a
        p = nxt
    while len(p) > 1 and p[-1] == 0:
        p.pop()
    return tuple(float(a) for a in reversed(p))


def _hurwitz_tail_coeffs(s: int) -> tuple[float, ...]:
    """Euler-Maclaurin coefficients ``B_2j / (2j)! * s (s+1) ... (s+2j-2)``, j = 12..1."""
    out = []
    for j in range(1, 13):
        rising = math.prod(range(s, s + 2 * j - 1))
        out.append(_BERNOULLI_2K[j - 1] / math.factorial(2 * j) * rising)
    return tuple(reversed(out))


def _polygamma_series(xp: Any, n: int, x: Any, lowest: float = 0.0) -> Any:
    """``polygamma(n, x)``, n >= 1, by the Hurwitz zeta series: sum the terms up to
    ``x + k >= 10 + n``, then the Euler-Maclaurin tail. ``lowest`` bounds ``x`` from below
    (finite, non-integer where negative); +inf gives 0."""
    s = n + 1
    q = x
    acc = xp.zeros_like(q)
    thresh = 10.0 + n
    for _ in range(int(math.ceil(thresh - lowest)) + 1):
        m = q < thresh
        acc = xp.where(m, acc + xp.power(q, -s), acc)
        q = xp.where(m, q + 1.0, q)
    w = 1.0 / (q * q)
    tail = xp.power(q, -s) * (q / (s - 1) + 0.5 + _horner(_hurwitz_tail_coeffs(s), w) / q)
    out = (-1.0) ** (n + 1) * float(math.factorial(n)) * (acc + tail)
    return xp.where(x == numpy.inf, 0.0, out)


def _polygamma64(xp: Any, x: Any, *, n: int) -> Any:
    out = xp.full_like(x, numpy.nan)
    m = (x >= 0) & ~xp.isnan(x)
    out[m] = _polygamma_series(xp, n, x[m])
    finite = xp.isfinite(x)
    integer = finite & (x == xp.floor(x))
    out[integer & (x <= 0)] = (-1.0) ** (n + 1) * numpy.inf
    # -inf as SciPy: the value at the poles (its cephes zeta(n + 1, -inf) is taken as a pole).
    out[x == -numpy.inf] = (-1.0) ** (n + 1) * numpy.inf
    # Negative x: the series itself (its terms hardly cancel) down to -1e4, ...
    m = finite & (x < 0) & ~integer & (x >= -1e4)
    v = x[m]
    if v.size:
        out[m] = _polygamma_series(xp, n, v, float(xp.min(v)))
    # ... and the reflection psi_n(x) = (-1)^n psi_n(1 - x) - pi^(n+1) P_n(cot(pi x)) below
    # (it cancels badly near half-integers for large n, but needs no loop over |x| terms).
    m = finite & (x < -1e4) & ~integer
    v = x[m]
    cot = 1.0 / xp.tan(math.pi * (v - xp.round(v)))
    refl = math.pi ** (n + 1) * _horner(_cot_derivative_poly(n), cot)
    out[m] = (-1.0) ** n * _polygamma_series(xp, n, 1.0 - v) - refl
    return out


# ---------------------------------------------------------------------------------------------
# The primitives


def _out_dtype(dt: numpy.dtype) -> numpy.dtype:
    # A float input keeps its dtype (float16/float32 compute in float64 and round once, as
    # JAX keeps them); integers and booleans give float64.
    return dt if dt.kind == "f" else _F64


def _special_abstract(name: str) -> Any:
    def abstract(a: ShapedArray, **params: Any) -> list[ShapedArray]:
        if params:
            check_static(name, **params)
        if a.dtype.kind not in "biuf":
            raise DTypeError(
                f"{name}: real input is required (floating, integer or bool), got "
                f"{a.str_short()}"
            )
        return [ShapedArray(a.shape, _out_dtype(a.dtype), a.weak_type, a.device)]

    return abstract


def _special_impl(fn: Any) -> Any:
    def impl(x: Any, **params: Any) -> list[Any]:
        xp = xp_for(x)
        a = xp.asarray(x)
        out_dt = _out_dtype(a.dtype)
        flat = xp.asarray(a, dtype=_F64).reshape(-1)
        with numpy.errstate(all="ignore"):
            r = fn(xp, flat, **params)
        r = r.reshape(a.shape).astype(out_dt, copy=False)
        if isinstance(x, numpy.generic):
            # A NumPy scalar in gives one out (as a ufunc does), so compiled code that keeps
            # scalars as scalars can still mix the result with device arrays.
            r = r[()]
        return [r]

    return impl


def _special(name: str, fn: Any, jvp: Any) -> Primitive:
    p = make_primitive(name, _special_impl(fn), _special_abstract(name))
    defjvp(p, jvp)
    elementwise_primitives.add(p)

    def batch(axis_size, vals, dims, **params):
        return [bind1(p, *vals, **params)], [dims[0]]

    batching.batch_rules[p] = batch
    return p


def _gauss(x: Any) -> Any:
    """``2 / sqrt(pi) * exp(-x^2)``: the derivative of erf."""
    return _ew.mul(_TWO_OVER_SQRT_PI, _ew.exp(_ew.neg(_ew.square(x))))


erf_p = _special("erf", _erf64, lambda g, ans, x: _ew.mul(g, _gauss(x)))


def erf(x: Any) -> Any:
    """The error function ``2/sqrt(pi) * integral_0^x exp(-t^2) dt``.

    Example:
        >>> round(float(erf(1.0)), 12)
        0.84270079295
    """
    return bind1(erf_p, x)


erfc_p = _special("erfc", _erfc64, lambda g, ans, x: _ew.neg(_ew.mul(g, _gauss(x))))


def erfc(x: Any) -> Any:
    """``1 - erf(x)``, accurate where it is tiny (down to ~1e-308 at ``x`` ~ 26.5).

    Example:
        >>> float(erfc(10.0))
        2.0884875837625452e-45
    """
    return bind1(erfc_p, x)


def _erfinv_derivative(ans: Any) -> Any:
    return _ew.mul(0.5 * _SQRT_PI, _ew.exp(_ew.square(ans)))


erfinv_p = _special("erfinv", _erfinv64, lambda g, ans, x: _ew.mul(g, _erfinv_derivative(ans)))


def erfinv(x: Any) -> Any:
    """Inverse of :func:`erf` on ``[-1, 1]`` (``±inf`` at ``±1``, nan outside).

    Example:
        >>> round(float(erfinv(0.5)), 12)
        0.476936276204
    """
    return bind1(erfinv_p, x)


erfcinv_p = _special(
    "erfcinv", _erfcinv64, lambda g, ans, x: _ew.neg(_ew.mul(g, _erfinv_derivative(ans)))
)


def erfcinv(x: Any) -> Any:
    """Inverse of :func:`erfc` on ``[0, 2]``, accurate for tiny arguments.

    Example:
        >>> round(float(erfcinv(1e-300)), 10)
        26.2094699605
    """
    return bind1(erfcinv_p, x)


lgamma_p = _special("lgamma", _lgamma64, lambda g, ans, x: _ew.mul(g, digamma(x)))


def lgamma(x: Any) -> Any:
    """``log|Gamma(x)|`` (SciPy's ``gammaln``): ``inf`` at the poles ``0, -1, -2, ...``.

    Example:
        >>> round(float(lgamma(10.0)), 10)   # log(9!)
        12.8018274801
    """
    return bind1(lgamma_p, x)


digamma_p = _special("digamma", _digamma64, lambda g, ans, x: _ew.mul(g, polygamma(1, x)))


def digamma(x: Any) -> Any:
    """The digamma function ``d/dx log Gamma(x)`` (SciPy's ``psi``).

    Example:
        >>> round(float(digamma(1.0)), 12)   # -euler_gamma
        -0.577215664902
    """
    return bind1(digamma_p, x)


polygamma_p = _special(
    "polygamma", _polygamma64, lambda g, ans, x, n: _ew.mul(g, polygamma(n + 1, x))
)


def polygamma(n: int, x: Any) -> Any:
    """The ``n``-th derivative of :func:`digamma` (``n = 0`` is digamma itself).

    ``n`` is a static non-negative Python integer.

    Example:
        >>> round(float(polygamma(1, 1.0)), 12)   # pi^2 / 6
        1.644934066848
    """
    try:
        n = operator_index(n)
    except TypeError:
        raise TypeError(f"polygamma: n must be a non-negative integer, got {n!r}") from None
    if n < 0:
        raise ValueError(f"polygamma: n must be a non-negative integer, got {n}")
    if n == 0:
        return digamma(x)
    return bind1(polygamma_p, x, n=n)


# ---------------------------------------------------------------------------------------------
# Modified Bessel functions of the first kind, orders 0 and 1: ``i0`` is a primitive (the
# Cephes series on the array module; its derivative is ``i1``); ``i1``, ``i0e``, ``i1e`` are
# written with primitives under custom JVPs that stay right to every order, also at 0.

# Cephes' Chebyshev coefficients (highest degree first), as NumPy's i0 and SciPy use them:
# exp(-x) i0(x) on [0, 8] in t = x/2 - 2, exp(-x) sqrt(x) i0(x) on (8, inf) in t = 32/x - 2,
# and the same for exp(-x) i1(x) / x and exp(-x) sqrt(x) i1(x).
_I0_A = (
    -4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
    1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
    -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
    9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
    -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
    1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
    -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
    1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
    -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
    1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1,
)
_I0_B = (
    -7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
    3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
    1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
    -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
    7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
    -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
    3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
    2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
    8.04490411014108831608e-1,
)
_I1_A = (
    2.77791411276104639959e-18, -2.11142121435816608115e-17, 1.55363195773620046921e-16,
    -1.10559694773538630805e-15, 7.60068429473540693410e-15, -5.04218550472791168711e-14,
    3.22379336594557470981e-13, -1.98397439776494371520e-12, 1.17361862988909016308e-11,
    -6.66348972350202774223e-11, 3.62559028155211703701e-10, -1.88724975172282928790e-9,
    9.38153738649577178388e-9, -4.44505912879632808065e-8, 2.00329475355213526229e-7,
    -8.56872026469545474066e-7, 3.47025130813767847674e-6, -1.32731636560394358279e-5,
    4.78156510755005422638e-5, -1.61760815825896745588e-4, 5.12285956168575772895e-4,
    -1.51357245063125314899e-3, 4.15642294431288815669e-3, -1.05640848946261981558e-2,
    2.47264490306265168283e-2, -5.29459812080949914269e-2, 1.02643658689847095384e-1,
    -1.76416518357834055153e-1, 2.52587186443633654823e-1,
)
_I1_B = (
    7.51729631084210481353e-18, 4.41434832307170791151e-18, -4.65030536848935832153e-17,
    -3.20952592199342395980e-17, 2.96262899764595013876e-16, 3.30820231092092828324e-16,
    -1.88035477551078244854e-15, -3.81440307243700780478e-15, 1.04202769841288027642e-14,
    4.27244001671195135429e-14, -2.10154184277266431302e-14, -4.08355111109219731823e-13,
    -7.19855177624590851209e-13, 2.03562854414708950722e-12, 1.41258074366137813316e-11,
    3.25260358301548823856e-11, -1.89749581235054123450e-11, -5.58974346219658380687e-10,
    -3.83538038596423702205e-9, -2.63146884688951950684e-8, -2.51223623787020892529e-7,
    -3.88256480887769039346e-6, -1.10588938762623716291e-4, -9.76109749136146840777e-3,
    7.78576235018280120474e-1,
)


def _chbevl(t: Any, coeffs: tuple[float, ...]) -> Any:
    b0, b1, b2 = coeffs[0], 0.0, 0.0
    for c in coeffs[1:]:
        b2, b1 = b1, b0
        b0 = _ew.add(_ew.sub(_ew.mul(t, b1), b2), c)
    return _ew.mul(_ew.sub(b0, b2), 0.5)


def _bessel_parts(x: Any, a: tuple[float, ...], b: tuple[float, ...]) -> tuple[Any, Any, Any]:
    """(|x| <= 8 mask, Chebyshev series on [0, 8], series on (8, inf) divided by sqrt|x|),
    each branch evaluated at an argument inside its own interval."""
    ax = _ew.abs(x)
    small = _ew.le(ax, 8.0)
    xs = _ew.select_n(small, 8.0, ax)
    xl = _ew.select_n(small, ax, 9.0)
    lo = _chbevl(_ew.sub(_ew.mul(xs, 0.5), 2.0), a)
    hi = _ew.div(_chbevl(_ew.sub(_ew.div(32.0, xl), 2.0), b), _ew.sqrt(xl))
    return small, lo, hi


def _i0e_value(x: Any) -> Any:
    small, lo, hi = _bessel_parts(x, _I0_A, _I0_B)
    return _ew.select_n(small, hi, lo)


def _i1e_over_x_value(x: Any) -> Any:
    """exp(-|x|) i1(x) / x: even, 1/2 at 0, never a 0/0."""
    small, lo, hi = _bessel_parts(x, _I1_A, _I1_B)
    return _ew.select_n(small, _ew.div(hi, _ew.abs(_ew.select_n(small, x, 9.0))), lo)


def _i1e_value(x: Any) -> Any:
    small, lo, hi = _bessel_parts(x, _I1_A, _I1_B)
    return _ew.select_n(small, _ew.copysign(hi, x), _ew.mul(lo, x))


# exp(-|x|) x^-n I_n(x) for n >= 2 (the derivatives of I_1(x)/x): the power series for
# |x| <= 4 (thirty terms in x^2/4 <= 4 reach 1e-40), the three-term recurrence above.
def _scaled_gn_value(n: int, x: Any) -> Any:
    ax = _ew.abs(x)
    small = _ew.le(ax, 4.0)
    xs = _ew.select_n(small, 0.0, x)
    y = _ew.mul(_ew.mul(xs, xs), 0.25)
    acc: Any = 0.0
    for k in range(30, -1, -1):
        coef = 1.0 / (2.0 ** n * math.factorial(k) * math.factorial(n + k))
        acc = _ew.add(_ew.mul(acc, y), coef)
    series = _ew.mul(acc, _ew.exp(_ew.neg(_ew.abs(xs))))
    xl = _ew.select_n(small, x, 5.0)
    inv_x2 = _ew.div(1.0, _ew.mul(xl, xl))
    g_prev, g = _i0e_value(xl), _i1e_over_x_value(xl)  # exp(-|x|) g_0, exp(-|x|) g_1
    for m in range(1, n):
        g_prev, g = g, _ew.mul(_ew.sub(g_prev, _ew.mul(2.0 * m, g)), inv_x2)
    return _ew.select_n(small, g, series)


def _back(val: Any, like: Any) -> Any:
    # float32 input is computed in float64 and rounded once (as SciPy's float32 loops).
    return _ew.convert_element_type(val, get_aval(like).dtype)


@functools.partial(custom_jvp, nondiff_argnums=(0, 1))
def _bessel_g(n: int, scaled: bool, x: Any) -> Any:
    """``x^-n I_n(x)`` (times ``exp(-|x|)`` when ``scaled``), n >= 1: smooth and even, with
    ``g_n' = x g_{n+1}`` exactly, so every derivative of i0/i1 at 0 is right."""
    xd = _ew.convert_element_type(x, _F64)
    val = _i1e_over_x_value(xd) if n == 1 else _scaled_gn_value(n, xd)
    return _back(val if scaled else _ew.mul(val, _ew.exp(_ew.abs(xd))), x)


@_bessel_g.defjvp
def _bessel_g_jvp(n: int, scaled: bool, primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    out = _bessel_g(n, scaled, x)
    d = _ew.mul(x, _bessel_g(n + 1, scaled, x))
    if scaled:
        d = _ew.sub(d, _ew.mul(_ew.sign(x), out))
    return out, _ew.mul(t, d)


def _chbevl64(t: Any, coeffs: tuple[float, ...]) -> Any:
    """:func:`_chbevl` on arrays of the array module (the same operations in the same order)."""
    b0, b1, b2 = coeffs[0], 0.0, 0.0
    for c in coeffs[1:]:
        b2, b1 = b1, b0
        b0 = t * b1 - b2 + c
    return (b0 - b2) * 0.5


def _i0_64(xp: Any, x: Any) -> Any:
    ax = xp.abs(x)
    small = ax <= 8.0
    xs = xp.where(small, ax, 8.0)
    xl = xp.where(small, 9.0, ax)
    inf = xp.isinf(ax)
    xl = xp.where(inf, 9.0, xl)
    lo = _chbevl64(xs * 0.5 - 2.0, _I0_A)
    hi = _chbevl64(32.0 / xl - 2.0, _I0_B) / xp.sqrt(xl)
    v = xp.where(small, lo, hi)
    # Past x = 700 exp(x) alone would overflow before the product does (SciPy, NumPy, JAX and
    # torch give inf from 709.8; the value is finite up to 713.98): there exp(log v + x), inf
    # where that passes the float range, without NumPy's overflow warning. +-inf gives nan,
    # as all of them.
    big = ax > 700.0
    lv = xp.log(v) + xp.where(big & ~inf, ax, 0.0)
    over = big & (lv > _LOG_MAX)
    out = xp.where(big, xp.exp(xp.where(big & ~over, lv, 0.0)), v * xp.exp(xp.where(big, 0.0, ax)))
    return xp.where(inf, numpy.nan, xp.where(over, numpy.inf, out))


_LOG_MAX = math.log(float(numpy.finfo(numpy.float64).max))


i0_p = _special("i0", _i0_64, lambda g, ans, x: _ew.mul(g, i1(x)))


def i0(x: Any) -> Any:
    """The modified Bessel function of the first kind, order 0 (real input: float32 stays
    float32, integers give float64). Its derivative is :func:`i1`, to every order (also at 0).

    ``funcgrad.numpy.i0`` and ``funcgrad.scipy.special.i0`` wrap it.

    Example:
        >>> round(float(i0(1.0)), 12)
        1.266065877752
    """
    return bind1(i0_p, x)


@custom_jvp
def i1(x: Any) -> Any:
    """The modified Bessel function of the first kind, order 1; ``i1' = i0 - i1/x``.

    Example:
        >>> round(float(i1(1.0)), 12)
        0.565159103992
    """
    xd = _ew.convert_element_type(x, _F64)
    ax = _ew.abs(xd)
    # As i0 past 700: exp(log|i1e| + |x|) (signed; finite up to 713.98 where SciPy's overflows
    # from 709.8), inf beyond the float range, and SciPy's nan at +-inf, all without NumPy's
    # overflow / invalid warnings.
    inf = _ew.eq(ax, numpy.inf)
    xs = _ew.select_n(inf, xd, 800.0)
    axs = _ew.abs(xs)
    ve = _i1e_value(xs)
    big = _ew.gt(axs, 700.0)
    lv = _ew.add(_ew.log(_ew.abs(_ew.select_n(big, 1.0, ve))), _ew.select_n(big, 0.0, axs))
    over = _ew.and_(big, _ew.gt(lv, _LOG_MAX))
    far = _ew.copysign(_ew.exp(_ew.select_n(over, lv, 0.0)), xs)
    near = _ew.mul(ve, _ew.exp(_ew.select_n(big, axs, 0.0)))
    out = _ew.select_n(big, near, _ew.select_n(over, far, _ew.copysign(numpy.inf, xs)))
    return _back(_ew.select_n(inf, out, numpy.nan), x)


@custom_jvp
def i0e(x: Any) -> Any:
    """``exp(-|x|) i0(x)``.

    Example:
        >>> round(float(i0e(1000.0)), 12)
        0.012617240456
    """
    return _back(_i0e_value(_ew.convert_element_type(x, _F64)), x)


@custom_jvp
def i1e(x: Any) -> Any:
    """``exp(-|x|) i1(x)``.

    Example:
        >>> round(float(i1e(1.0)), 12)
        0.20791041535
    """
    return _back(_i1e_value(_ew.convert_element_type(x, _F64)), x)


@i1.defjvp
def _i1_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    # i1' = i0 - i1/x, with i1/x an even function of its own (1/2 at 0): no 0/0.
    (x,), (t,) = primals, tangents
    return i1(x), _ew.mul(t, _ew.sub(i0(x), _bessel_g(1, False, x)))


@i0e.defjvp
def _i0e_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    out = i0e(x)
    return out, _ew.mul(t, _ew.sub(i1e(x), _ew.mul(_ew.sign(x), out)))


@i1e.defjvp
def _i1e_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    out = i1e(x)
    d = _ew.sub(_ew.sub(i0e(x), _ew.mul(_ew.sign(x), out)), _bessel_g(1, True, x))
    return out, _ew.mul(t, d)

# Poles of the derivative at finite values (lgamma', digamma' at 0, -1, ...): the eager tape
# records these nodes' user lines for the warnings of their backward rules.
eager_vjp.located_primitives.update((lgamma_p, digamma_p))
