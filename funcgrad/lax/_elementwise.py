"""Elementwise ``funcgrad.lax`` operations: thin, strictly-typed wrappers over the primitives.

Every function composes existing primitives of :mod:`funcgrad.ops`, so derivatives, vmap
and jit come with them. Unlike :mod:`funcgrad.numpy`, operands must share one dtype (Python
scalars excepted) and unary math checks the dtype kind, as ``jax.lax`` does.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
import funcgrad.ops.elementwise_extra as _ewx
import funcgrad.ops.shape as _sh
import funcgrad.ops.special as _sp
from funcgrad.avals import get_aval
from funcgrad.errors import DTypeError
from funcgrad.lax._common import (
    ANY,
    BOOL_OR_INT,
    FLOATING,
    INEXACT,
    INTEGRAL,
    NUMERIC,
    aval_of,
    check_kind,
    same_dtypes,
    static_int,
)
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

Array = Any

__all__ = [
    "Tolerance", "AccuracyMode", "bitcast_convert_type", "RoundingMethod", "add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2",
    "nextafter", "complex", "eq", "ne", "lt", "le", "gt", "ge", "bitwise_and", "bitwise_or",
    "bitwise_xor", "bitwise_not", "shift_left", "shift_right_arithmetic",
    "shift_right_logical", "neg", "sign", "floor", "ceil", "round", "abs", "exp", "exp2",
    "expm1", "log", "log1p", "sqrt", "rsqrt", "cbrt", "sin", "cos", "tan", "asin", "acos",
    "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "logistic", "square",
    "reciprocal", "integer_pow", "is_finite", "real", "imag", "conj", "erf", "erfc",
    "erf_inv", "lgamma", "digamma", "polygamma_static", "population_count", "clz", "select",
    "select_n", "clamp", "convert_element_type", "stop_gradient", "optimization_barrier",
    "reduce_precision",
]


def _doc(fn: Callable[..., Any], name: str, text: str, example: str, result: str) -> None:
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"{text}\n\n    Example:\n        >>> from funcgrad import lax\n"
                  f"        >>> {example}\n        {result}\n    ")


# ---------------------------------------------------------------------------------------------
# Unary math: one dtype-kind check, then the primitive.


class Tolerance:
    """The accuracy a transcendental function is asked for (``jax.lax.Tolerance``):
    ``atol``, ``rtol`` and ``ulps``, non-negative, one of them set. funcgrad has one
    implementation of each function (NumPy's, within an ulp or two), so the request is
    checked for validity and otherwise changes nothing.

    Example:
        >>> from funcgrad import lax
        >>> float(lax.exp(0.0, accuracy=lax.Tolerance(atol=1e-6)))
        1.0
    """

    def __init__(self, atol: float = 0.0, rtol: float = 0.0, ulps: int = 0) -> None:
        if atol < 0.0 or rtol < 0.0 or ulps < 0:
            raise ValueError("Tolerance: tolerances must be non-negative")
        if atol == 0.0 and rtol == 0.0 and ulps == 0:
            raise ValueError("Tolerance: at least one of atol, rtol, or ulps must be set")
        self.atol, self.rtol, self.ulps = atol, rtol, ulps

    def __repr__(self) -> str:
        return f"Tolerance(atol={self.atol}, rtol={self.rtol}, ulps={self.ulps})"


class AccuracyMode(enum.Enum):
    """``jax.lax.AccuracyMode``: the implementation a transcendental function uses when
    several exist; funcgrad has one (NumPy's), which both modes select.

    Example:
        >>> from funcgrad import lax
        >>> float(lax.sin(0.0, accuracy=lax.AccuracyMode.HIGHEST))
        0.0
    """

    HIGHEST = 1
    DEFAULT = 2


def _check_accuracy(name: str, accuracy: Any) -> None:
    if accuracy is not None and not isinstance(accuracy, Tolerance | AccuracyMode):
        raise TypeError(f"lax.{name}: accuracy must be None, a lax.Tolerance or a "
                        f"lax.AccuracyMode, got {accuracy!r}")


def _unary(name: str, op: Callable[[Any], Any], kinds: str, text: str,
           example: str, result: str, accuracy: bool = False) -> Callable[..., Array]:
    """The lax function of a unary primitive; ``accuracy`` gives it JAX's ``accuracy=``
    keyword (the transcendental functions JAX takes it for)."""
    def fn(x: Array) -> Array:
        check_kind(name, aval_of(name, x, "x"), kinds, "x")
        return _ew.strong(op(x))  # an array, as JAX's (not a weak Python scalar)

    def fn_with_accuracy(x: Array, *, accuracy: Any = None) -> Array:
        _check_accuracy(name, accuracy)
        return fn(x)

    out = fn_with_accuracy if accuracy else fn
    _doc(out, name, text + (" ``accuracy`` (JAX's, a :class:`Tolerance` or "
                            ":class:`AccuracyMode`) is accepted; there is one "
                            "implementation." if accuracy else ""), example, result)
    return out


neg = _unary("neg", _ew.neg, NUMERIC, "Elementwise ``-x``.",
             "lax.neg(2.0).tolist()", "-2.0")
def _signed_sign(x: Array) -> Array:
    # XLA's sign keeps a zero's sign (lax.sign(-0.0) is -0.0, as JAX); NumPy's drops it
    s = _ew.sign(x)
    return _ew.copysign(s, x) if aval_of("sign", x, "x").dtype.kind == "f" else s


sign = _unary("sign", _signed_sign, NUMERIC,
              "Elementwise sign (-1, 0 or 1, a zero keeping its sign; ``x/|x|`` for complex).",
              "lax.sign(numpy.array([-3.0, -0.0, 2.0])).tolist()", "[-1.0, -0.0, 1.0]")
floor = _unary("floor", _ew.floor, FLOATING, "Elementwise floor of a float array.",
               "lax.floor(-1.5).tolist()", "-2.0")
ceil = _unary("ceil", _ew.ceil, FLOATING, "Elementwise ceiling of a float array.",
              "lax.ceil(-1.5).tolist()", "-1.0")
exp = _unary("exp", _ew.exp, INEXACT, "Elementwise ``e**x``.", "lax.exp(0.0).tolist()", "1.0", accuracy=True)
exp2 = _unary("exp2", _ew.exp2, INEXACT, "Elementwise ``2**x``.",
              "lax.exp2(3.0).tolist()", "8.0", accuracy=True)
expm1 = _unary("expm1", _ew.expm1, INEXACT, "Elementwise ``e**x - 1``, accurate near 0.",
               "lax.expm1(0.0).tolist()", "0.0", accuracy=True)
log = _unary("log", _ew.log, INEXACT, "Elementwise natural logarithm.",
             "lax.log(1.0).tolist()", "0.0", accuracy=True)
log1p = _unary("log1p", _ew.log1p, INEXACT, "Elementwise ``log(1 + x)``, accurate near 0.",
               "lax.log1p(0.0).tolist()", "0.0", accuracy=True)
sqrt = _unary("sqrt", _ew.sqrt, INEXACT, "Elementwise square root.",
              "lax.sqrt(4.0).tolist()", "2.0", accuracy=True)
rsqrt = _unary("rsqrt", _ew.rsqrt, INEXACT, "Elementwise ``1 / sqrt(x)``.",
               "lax.rsqrt(4.0).tolist()", "0.5", accuracy=True)
cbrt = _unary("cbrt", _ew.cbrt, FLOATING, "Elementwise real cube root.",
              "lax.cbrt(-8.0).tolist()", "-2.0", accuracy=True)
sin = _unary("sin", _ew.sin, INEXACT, "Elementwise sine.", "lax.sin(0.0).tolist()", "0.0", accuracy=True)
cos = _unary("cos", _ew.cos, INEXACT, "Elementwise cosine.", "lax.cos(0.0).tolist()", "1.0", accuracy=True)
tan = _unary("tan", _ew.tan, INEXACT, "Elementwise tangent.", "lax.tan(0.0).tolist()", "0.0", accuracy=True)
asin = _unary("asin", _ew.asin, INEXACT, "Elementwise arcsine.",
              "lax.asin(0.0).tolist()", "0.0")
acos = _unary("acos", _ew.acos, INEXACT, "Elementwise arccosine.",
              "lax.acos(1.0).tolist()", "0.0")
atan = _unary("atan", _ew.atan, INEXACT, "Elementwise arctangent.",
              "lax.atan(0.0).tolist()", "0.0")
sinh = _unary("sinh", _ew.sinh, INEXACT, "Elementwise hyperbolic sine.",
              "lax.sinh(0.0).tolist()", "0.0")
cosh = _unary("cosh", _ew.cosh, INEXACT, "Elementwise hyperbolic cosine.",
              "lax.cosh(0.0).tolist()", "1.0")
tanh = _unary("tanh", _ew.tanh, INEXACT, "Elementwise hyperbolic tangent.",
              "lax.tanh(0.0).tolist()", "0.0", accuracy=True)
asinh = _unary("asinh", _ew.asinh, INEXACT, "Elementwise inverse hyperbolic sine.",
               "lax.asinh(0.0).tolist()", "0.0")
acosh = _unary("acosh", _ew.acosh, INEXACT, "Elementwise inverse hyperbolic cosine.",
               "lax.acosh(1.0).tolist()", "0.0")
atanh = _unary("atanh", _ew.atanh, INEXACT, "Elementwise inverse hyperbolic tangent.",
               "lax.atanh(0.0).tolist()", "0.0")
logistic = _unary("logistic", _ew.logistic, INEXACT, "Elementwise ``1 / (1 + exp(-x))``.",
                  "lax.logistic(0.0).tolist()", "0.5", accuracy=True)
square = _unary("square", _ew.square, NUMERIC, "Elementwise ``x * x``.",
                "lax.square(3).tolist()", "9")
reciprocal = _unary("reciprocal", _ew.reciprocal, INEXACT, "Elementwise ``1 / x``.",
                    "lax.reciprocal(4.0).tolist()", "0.25")
is_finite = _unary("is_finite", _ew.is_finite, FLOATING,
                   "Elementwise: not inf and not nan (float operands only, as in lax).",
                   "lax.is_finite(numpy.array([1.0, numpy.inf])).tolist()", "[True, False]")
erf = _unary("erf", _sp.erf, FLOATING, "Elementwise error function.",
             "lax.erf(0.0).tolist()", "0.0")
erfc = _unary("erfc", _sp.erfc, FLOATING, "Elementwise complementary error function.",
              "lax.erfc(0.0).tolist()", "1.0")
erf_inv = _unary("erf_inv", _sp.erfinv, FLOATING, "Elementwise inverse error function.",
                 "lax.erf_inv(0.0).tolist()", "0.0")
lgamma = _unary("lgamma", _sp.lgamma, FLOATING, "Elementwise ``log|Gamma(x)|``.",
                "lax.lgamma(1.0).tolist()", "0.0")


def _digamma_xla(x: Array) -> Array:
    # XLA's digamma is NaN at every pole, 0 included (SciPy's psi gives -inf/+inf at -0/+0).
    return _ew.select_n(_ew.eq(x, 0), _sp.digamma(x), get_aval(x).dtype.type(numpy.nan))


digamma = _unary("digamma", _digamma_xla, FLOATING,
                 "Elementwise digamma (psi) function; NaN at its poles 0, -1, -2, ... (as JAX).",
                 "f'{float(lax.digamma(1.0)):.6f}'", "'-0.577216'")


def population_count(x: Array) -> Array:
    """Elementwise number of set bits, in ``x``'s dtype (as JAX; NumPy's ``bitwise_count``
    gives uint8). A negative value counts its two's-complement bits.

    Example:
        >>> from funcgrad import lax
        >>> lax.population_count(numpy.array([7, 8, -1], numpy.int32))
        array([ 3,  1, 32], dtype=int32)
    """
    a = aval_of("population_count", x, "x")
    check_kind("population_count", a, INTEGRAL, "x")
    unsigned = numpy.dtype(f"u{a.dtype.itemsize}")
    if a.dtype != unsigned:  # NumPy's bitwise_count counts the bits of |x|
        x = _ewx.bitcast_convert_type(x, unsigned)
    return _ew.convert_element_type(_ewx.bitwise_count(x), a.dtype)


def clz(x: Array) -> Array:
    """Elementwise number of leading zero bits, in ``x``'s dtype (``clz(0)`` is the bit
    width; a negative value has none). Composed from shifts and ``population_count``: the
    bits below the highest set one are filled in, and the width minus their count is left.

    Example:
        >>> from funcgrad import lax
        >>> lax.clz(numpy.array([0, 1, 255, -1], numpy.int32))
        array([32, 31, 24,  0], dtype=int32)
    """
    a = aval_of("clz", x, "x")
    check_kind("clz", a, INTEGRAL, "x")
    bits = 8 * a.dtype.itemsize
    unsigned = numpy.dtype(f"u{a.dtype.itemsize}")
    v = x if a.dtype == unsigned else _ewx.bitcast_convert_type(x, unsigned)
    step = 1
    while step < bits:
        v = _ew.or_(v, _ew.shift_right(v, unsigned.type(step)))
        step *= 2
    set_bits = _ew.convert_element_type(_ewx.bitwise_count(v), a.dtype)
    return _ew.sub(a.dtype.type(bits), set_bits)


def abs(x: Array) -> Array:  # noqa: A001
    """Elementwise absolute value (the real modulus for complex ``x``).

    Example:
        >>> from funcgrad import lax
        >>> lax.abs(numpy.array([-2, 3])).tolist()
        [2, 3]
    """
    check_kind("abs", aval_of("abs", x, "x"), NUMERIC, "x")
    return _ew.strong(_ew.abs(x))


def real(x: Array) -> Array:
    """The real part of a complex ``x``.

    Example:
        >>> from funcgrad import lax
        >>> lax.real(1 + 2j).tolist()
        1.0
    """
    check_kind("real", aval_of("real", x, "x"), "c", "x")
    return _ew.real(x)


def imag(x: Array) -> Array:
    """The imaginary part of a complex ``x``.

    Example:
        >>> from funcgrad import lax
        >>> lax.imag(1 + 2j).tolist()
        2.0
    """
    check_kind("imag", aval_of("imag", x, "x"), "c", "x")
    return _ew.imag(x)


def _complex_dtype(dt: numpy.dtype) -> numpy.dtype:
    return numpy.result_type(dt, numpy.complex64)


def conj(x: Array) -> Array:
    """Complex conjugate; a real ``x`` comes back as a complex array, as in ``jax.lax``.

    Example:
        >>> from funcgrad import lax
        >>> lax.conj(numpy.float32(2.0)).dtype
        dtype('complex64')
    """
    a = aval_of("conj", x, "x")
    check_kind("conj", a, INEXACT, "x")
    if a.dtype.kind != "c":
        x = _ew.convert_element_type(x, _complex_dtype(a.dtype))
    return _ew.conj(x)


class RoundingMethod(enum.IntEnum):
    """How :func:`round` breaks ties (values as in ``jax.lax.RoundingMethod``)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x: Array, rounding_method: Any = RoundingMethod.AWAY_FROM_ZERO) -> Array:  # noqa: A001
    """Round a float array to integral values; ties away from zero by default.

    ``rounding_method=RoundingMethod.TO_NEAREST_EVEN`` (or 1) rounds ties to even, like NumPy.

    Example:
        >>> from funcgrad import lax
        >>> x = numpy.array([-2.5, 0.5, 1.5])
        >>> lax.round(x).tolist(), lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN).tolist()
        ([-3.0, 1.0, 2.0], [-2.0, 0.0, 2.0])
    """
    check_kind("round", aval_of("round", x, "x"), FLOATING, "x")
    try:
        method = RoundingMethod(rounding_method)
    except ValueError:
        raise ValueError(
            f"lax.round: rounding_method must be a lax.RoundingMethod (0 or 1), got "
            f"{rounding_method!r}") from None
    if method is RoundingMethod.TO_NEAREST_EVEN:
        return _ew.round(x)
    # x - trunc(x) is exact, unlike floor(|x| + 0.5), which rounds 0.49999999999999994 up.
    t = _ew.trunc(x)
    away = _ew.ge(_ew.abs(_ew.sub(x, t)), 0.5)
    return _ew.select_n(away, t, _ew.add(t, _ew.sign(x)))


def integer_pow(x: Array, y: int) -> Array:
    """Elementwise ``x**y`` for a static Python int ``y``.

    Example:
        >>> from funcgrad import lax
        >>> lax.integer_pow(numpy.array([2.0, 3.0]), 3).tolist()
        [8.0, 27.0]
    """
    check_kind("integer_pow", aval_of("integer_pow", x, "x"), NUMERIC, "x")
    return _ew.strong(_ew.integer_pow(x, static_int("integer_pow", y, "y")))


def polygamma_static(m: int, x: Array) -> Array:
    """The ``m``-th derivative of digamma at ``x``, ``m`` a static non-negative integer (the
    dedicated series; ``lax.polygamma`` also takes JAX's float-array ``m``).

    Example:
        >>> from funcgrad.lax._elementwise import polygamma_static
        >>> f'{float(polygamma_static(1, 1.0)):.6f}'
        '1.644934'
    """
    check_kind("polygamma", aval_of("polygamma", x, "x"), FLOATING, "x")
    return _sp.polygamma(static_int("polygamma", m, "m"), x)


# ---------------------------------------------------------------------------------------------
# Binary operations: one dtype for both operands.


def _binary(name: str, op: Callable[[Any, Any], Any], kinds: str, text: str,
            example: str, result: str) -> Callable[[Array, Array], Array]:
    def fn(x: Array, y: Array) -> Array:
        same_dtypes(name, {"x": x, "y": y}, kinds)
        return _ew.strong(op(x, y))  # an array, as JAX's (not a weak Python scalar)

    _doc(fn, name, text, example, result)
    return fn


add = _binary("add", _ew.add, NUMERIC, "Elementwise ``x + y`` (operands of one dtype).",
              "lax.add(numpy.float32(1.0), 2.0).dtype", "dtype('float32')")
sub = _binary("sub", _ew.sub, NUMERIC, "Elementwise ``x - y``.", "lax.sub(3, 1).tolist()", "2")
_mul = _binary("mul", _ew.mul, NUMERIC, "Elementwise ``x * y``.", "lax.mul(3, 2).tolist()", "6")


def mul(x: Array, y: Array, *, out_dtype: Any = None) -> Array:
    """Elementwise ``x * y`` (``x`` and ``y`` of one dtype). With JAX's ``out_dtype``, both
    are first converted to it (then they may differ: ``mul(int8, int8, out_dtype=int32)``
    does not wrap at 8 bits).

    Example:
        >>> import numpy as np
        >>> from funcgrad import lax
        >>> lax.mul(3, 2).tolist(), lax.mul(np.int8(100), np.int8(3), out_dtype=np.int32).tolist()
        (6, 300)
    """
    if out_dtype is not None:
        dt = numpy.dtype(out_dtype)
        x, y = (_ew.convert_element_type(v, dt) for v in (x, y))
    return _mul(x, y)
max = _binary("max", _ew.max, ANY, "Elementwise maximum (nan propagates).",  # noqa: A001
              "lax.max(numpy.array([1.0, 5.0]), numpy.array([3.0, 2.0])).tolist()",
              "[3.0, 5.0]")
min = _binary("min", _ew.min, ANY, "Elementwise minimum (nan propagates).",  # noqa: A001
              "lax.min(numpy.array([1.0, 5.0]), numpy.array([3.0, 2.0])).tolist()",
              "[1.0, 2.0]")
atan2 = _binary("atan2", _ew.atan2, FLOATING, "Elementwise ``atan(x / y)`` in the right quadrant.",
                "f'{float(lax.atan2(1.0, -1.0)):.6f}'", "'2.356194'")
nextafter = _binary("nextafter", _ewx.nextafter, FLOATING,
                    "The next representable float after ``x`` towards ``y``.",
                    "bool(lax.nextafter(1.0, 2.0) > 1.0)", "True")
eq = _binary("eq", _ew.eq, ANY, "Elementwise ``x == y``.", "lax.eq(1, 1).tolist()", "True")
ne = _binary("ne", _ew.ne, ANY, "Elementwise ``x != y``.", "lax.ne(1, 1).tolist()", "False")
lt = _binary("lt", _ew.lt, ANY, "Elementwise ``x < y``.", "lax.lt(1, 2).tolist()", "True")
le = _binary("le", _ew.le, ANY, "Elementwise ``x <= y``.", "lax.le(2, 2).tolist()", "True")
gt = _binary("gt", _ew.gt, ANY, "Elementwise ``x > y``.", "lax.gt(1, 2).tolist()", "False")
ge = _binary("ge", _ew.ge, ANY, "Elementwise ``x >= y``.", "lax.ge(1, 2).tolist()", "False")
bitwise_and = _binary("bitwise_and", _ew.and_, BOOL_OR_INT,
                      "Elementwise bitwise (logical, for bool) AND.",
                      "lax.bitwise_and(numpy.array([6]), numpy.array([3])).tolist()", "[2]")
bitwise_or = _binary("bitwise_or", _ew.or_, BOOL_OR_INT,
                     "Elementwise bitwise (logical, for bool) OR.",
                     "lax.bitwise_or(numpy.array([6]), numpy.array([3])).tolist()", "[7]")
bitwise_xor = _binary("bitwise_xor", _ew.xor, BOOL_OR_INT,
                      "Elementwise bitwise (logical, for bool) XOR.",
                      "lax.bitwise_xor(numpy.array([6]), numpy.array([3])).tolist()", "[5]")
shift_left = _binary("shift_left", _ew.shift_left, INTEGRAL,
                     "Elementwise ``x << y``; shifts past the bit width give 0.",
                     "lax.shift_left(numpy.array([1]), numpy.array([3])).tolist()", "[8]")


def _mulhi(x: Array, y: Array) -> Array:
    # The high half of the double-width product: through the next wider type up to 32 bits;
    # for 64 bits, the schoolbook product of 32-bit halves in uint64 (which wraps), then
    # two's-complement corrections for signed operands.
    x, y = _ew.strong(x), _ew.strong(y)
    dt = numpy.result_type(get_aval(x).dtype, get_aval(y).dtype)
    x, y = _ew.convert_element_type(x, dt), _ew.convert_element_type(y, dt)
    bits = 8 * dt.itemsize
    if bits <= 32:
        wide = numpy.dtype(numpy.int64 if dt.kind == "i" else numpy.uint64)
        prod = _ew.mul(_ew.convert_element_type(x, wide), _ew.convert_element_type(y, wide))
        return _ew.convert_element_type(_ew.shift_right(prod, wide.type(bits)), dt)
    u64 = numpy.dtype(numpy.uint64)
    ux, uy = _ew.convert_element_type(x, u64), _ew.convert_element_type(y, u64)
    half, mask = u64.type(32), u64.type(0xFFFFFFFF)
    x_lo, x_hi = _ew.and_(ux, mask), _ew.shift_right(ux, half)
    y_lo, y_hi = _ew.and_(uy, mask), _ew.shift_right(uy, half)
    lo_lo, hi_lo = _ew.mul(x_lo, y_lo), _ew.mul(x_hi, y_lo)
    cross = _ew.add(_ew.add(_ew.shift_right(lo_lo, half), _ew.and_(hi_lo, mask)),
                    _ew.mul(x_lo, y_hi))
    high = _ew.add(_ew.add(_ew.shift_right(hi_lo, half), _ew.shift_right(cross, half)),
                   _ew.mul(x_hi, y_hi))
    if dt.kind == "i":
        zero = u64.type(0)
        high = _ew.sub(high, _ew.select_n(_ew.lt(x, dt.type(0)), zero, uy))
        high = _ew.sub(high, _ew.select_n(_ew.lt(y, dt.type(0)), zero, ux))
    return _ew.convert_element_type(high, dt)


mulhi = _binary("mulhi", _mulhi, INTEGRAL,
                "The high half of the double-width integer product ``x * y`` (XLA's "
                "``MulHi``: ``(x * y) >> bits``, rounding toward minus infinity for signed).",
                "lax.mulhi(numpy.int32([2 ** 30, -5]), numpy.int32([8, 3])).tolist()", "[2, -1]")


def _signed_shift_right(x: Array, y: Array) -> Array:
    # XLA's arithmetic shift reads the bits as signed, also for unsigned types (uint8 200 is
    # -56, so 200 >> 3 is 249); a count past the width (or negative) fills with the sign bit.
    dt = get_aval(x).dtype
    if dt.kind != "u":
        return _ew.shift_right(x, y)
    signed = numpy.dtype(f"i{dt.itemsize}")
    shifted = _ew.shift_right(_ewx.bitcast_convert_type(x, signed),
                              _ewx.bitcast_convert_type(y, signed))
    return _ewx.bitcast_convert_type(shifted, dt)


shift_right_arithmetic = _binary(
    "shift_right_arithmetic", _signed_shift_right, INTEGRAL,
    "Elementwise ``x >> y`` filling with the sign bit (XLA's: the bits are read as signed, "
    "also for unsigned types; a count past the width leaves only sign bits).",
    "lax.shift_right_arithmetic(numpy.array([-8]), numpy.array([1])).tolist()", "[-4]")


def bitwise_not(x: Array) -> Array:
    """Elementwise bitwise NOT (logical NOT for bool).

    Example:
        >>> from funcgrad import lax
        >>> lax.bitwise_not(numpy.array([True, False])).tolist()
        [False, True]
    """
    check_kind("bitwise_not", aval_of("bitwise_not", x, "x"), BOOL_OR_INT, "x")
    return _ew.not_(x)


def shift_right_logical(x: Array, y: Array) -> Array:
    """Elementwise ``x >> y`` filling with zeros (signed values shift as their bit pattern; a
    count past the width, or negative, gives 0).

    Example:
        >>> from funcgrad import lax
        >>> lax.shift_right_logical(numpy.array([-1], numpy.int8), numpy.array([4], numpy.int8))
        array([15], dtype=int8)
    """
    ax, _ = same_dtypes("shift_right_logical", {"x": x, "y": y}, INTEGRAL)
    dt = ax.dtype if not ax.weak_type else get_aval(_ew.add(x, y)).dtype
    if dt.kind == "u":
        return _ew.shift_right(x, y)
    bits = dt.itemsize * 8
    # The arithmetic shift, with the copies of the sign bit masked off: mask = 2**(bits-y) - 1.
    one = _ew.convert_element_type(1, dt)
    mask = _ew.sub(_ew.shift_left(one, _ew.sub(bits, y)), one)
    shifted = _ew.and_(_ew.shift_right(x, y), mask)
    zero = _ew.convert_element_type(0, dt)
    # A count past the width, or negative (XLA reads it as unsigned), leaves 0.
    outside = _ew.or_(_ew.ge(y, bits), _ew.lt(y, 0))
    return _ew.select_n(outside, _ew.select_n(_ew.eq(y, 0), shifted, x), zero)


def div(x: Array, y: Array) -> Array:
    """Elementwise ``x / y``; integer division rounds towards zero (C semantics, as lax), and
    an integer divided by zero is -1 (all bits set), as XLA.

    Example:
        >>> from funcgrad import lax
        >>> lax.div(numpy.array([7, -7]), numpy.array([2, 2])).tolist()
        [3, -3]
    """
    ax, ay = same_dtypes("div", {"x": x, "y": y}, NUMERIC)
    if ax.dtype.kind in "fc" or ay.dtype.kind in "fc":
        return _ew.strong(_ew.div(x, y))
    zero, y = _nonzero_divisor(x, y, ax, ay)
    q = _ew.floor_divide(x, y)
    # Floor and truncation differ by one where the division is inexact and the signs differ.
    fix = _ew.and_(_ew.ne(_ew.fmod(x, y), 0), _ew.ne(_ew.lt(x, 0), _ew.lt(y, 0)))
    q = _ew.select_n(fix, q, _ew.add(q, 1))
    # XLA: an integer divided by zero is -1 (all bits set; the maximum for unsigned types).
    return _ew.strong(_ew.select_n(zero, q, _ew.not_(_ew.mul(q, 0))))


def _nonzero_divisor(x: Array, y: Array, ax: Any, ay: Any) -> tuple[Array, Array]:
    """Where the integer divisor ``y`` is zero, and ``y`` with those zeros replaced by one
    (so that NumPy neither warns nor produces its own 0; XLA's results are patched in)."""
    dt = (ay if not ay.weak_type else ax).dtype
    y = _ew.convert_element_type(y, dt) if ay.weak_type and not ax.weak_type else y
    zero = _ew.eq(y, 0)
    return zero, _ew.select_n(zero, y, _ew.convert_element_type(1, dt))


def rem(x: Array, y: Array) -> Array:
    """Elementwise remainder with the sign of ``x`` (C ``fmod``, as ``jax.lax.rem``); an
    integer remainder by zero is ``x``, as XLA.

    Example:
        >>> from funcgrad import lax
        >>> lax.rem(numpy.array([7.0, -7.0]), 3.0).tolist()
        [1.0, -1.0]
    """
    ax, ay = same_dtypes("rem", {"x": x, "y": y}, "iuf")
    if ax.dtype.kind == "f" or ay.dtype.kind == "f":
        return _ew.fmod(x, y)
    zero, y = _nonzero_divisor(x, y, ax, ay)
    r = _ew.fmod(x, y)
    # XLA: the remainder of an integer division by zero is the dividend.
    return _ew.select_n(zero, r, _ew.add(x, _ew.mul(r, 0)))


def pow(x: Array, y: Array) -> Array:  # noqa: A001
    """Elementwise ``x**y``; ``y`` has ``x``'s dtype or is an integer array (as in lax).

    Example:
        >>> from funcgrad import lax
        >>> lax.pow(numpy.array([2.0, 4.0]), numpy.array([3, 2])).tolist()
        [8.0, 16.0]
    """
    ax, ay = aval_of("pow", x, "x"), aval_of("pow", y, "y")
    check_kind("pow", ax, INEXACT, "x")
    if ay.dtype.kind in "iu" and not ay.weak_type:
        y = _ew.convert_element_type(y, ax.dtype)  # an integer exponent array is allowed
    same_dtypes("pow", {"x": x, "y": y}, INEXACT)
    return _ew.strong(_ew.pow(x, y))


def complex(x: Array, y: Array) -> Array:  # noqa: A001
    """``x + 1j * y`` from two float arrays of one dtype (float32 gives complex64).

    Example:
        >>> from funcgrad import lax
        >>> lax.complex(numpy.float32(1.0), numpy.float32(2.0)).dtype
        dtype('complex64')
    """
    same_dtypes("complex", {"x": x, "y": y}, FLOATING)
    return _ew.complex(x, y)


# ---------------------------------------------------------------------------------------------
# Selection and clamping


def select_n(which: Array, *cases: Array) -> Array:
    """``cases[which]`` elementwise: a bool ``which`` picks ``cases[1]`` where True.

    The cases share one dtype and shape; ``which`` is bool (two cases) or int32, scalar or
    of the cases' shape.

    Example:
        >>> from funcgrad import lax
        >>> lax.select_n(numpy.array([0, 2, 1], numpy.int32), numpy.zeros(3), numpy.ones(3),
        ...              numpy.full(3, 2.0)).tolist()
        [0.0, 2.0, 1.0]
    """
    if not cases:
        raise ValueError("lax.select_n: needs at least one case")
    if any(hasattr(type(c), "_trailing_ndim") for c in cases):
        return _select_n_keys(which, cases)
    avals = same_dtypes("select_n", {f"cases[{i}]": c for i, c in enumerate(cases)}, ANY)
    shapes = {a.shape for a in avals if not a.weak_type}
    if len(shapes) > 1:
        raise TypeError(f"lax.select_n: cases must have the same shape, got {sorted(shapes)}")
    w = aval_of("select_n", which, "which")
    if w.dtype.kind not in "biu":
        raise DTypeError(f"lax.select_n: which must be bool or an integer, got {w.dtype}")
    if w.dtype.kind == "b" and len(cases) > 2:
        raise DTypeError(
            f"lax.select_n: a bool which selects between at most 2 cases, got {len(cases)}")
    case_shape = next(iter(shapes)) if shapes else ()
    if w.shape not in ((), case_shape):
        raise TypeError(
            f"lax.select_n: which must be a scalar or have the cases' shape {case_shape}, got "
            f"{w.shape}")
    return _ew.select_n(which, *cases)


def _select_n_keys(which: Any, cases: Sequence[Any]) -> Any:
    """:func:`select_n` of typed key arrays (as jax.lax's): ``which`` over the key axes
    selects whole keys, so it is broadcast over the keys' own trailing words."""
    if not all(hasattr(type(c), "_trailing_ndim") for c in cases):
        raise TypeError("lax.select_n: cases must all be key arrays or all be arrays")
    shapes = {tuple(c.shape) for c in cases}
    if len(shapes) > 1:
        raise TypeError(f"lax.select_n: cases must have the same shape, got {sorted(shapes)}")
    datas = [c._data for c in cases]
    w = aval_of("select_n", which, "which")
    case_shape = next(iter(shapes))
    if w.shape not in ((), case_shape):
        raise TypeError(
            f"lax.select_n: which must be a scalar or have the cases' shape {case_shape}, got "
            f"{w.shape}")
    full = tuple(get_aval(datas[0]).shape)
    if w.shape:
        which = _sh.broadcast_in_dim(which, full, tuple(range(len(case_shape))))
    return cases[0]._rewrap(select_n(which, *datas))


def select(pred: Array, on_true: Array, on_false: Array) -> Array:
    """``on_true`` where the bool ``pred`` is True, else ``on_false`` (equal dtypes/shapes).

    Example:
        >>> from funcgrad import lax
        >>> lax.select(numpy.array([True, False]), numpy.ones(2), numpy.zeros(2)).tolist()
        [1.0, 0.0]
    """
    if aval_of("select", pred, "pred").dtype.kind != "b":
        raise DTypeError(f"lax.select: pred must be bool, got {get_aval(pred).dtype}")
    return select_n(pred, on_false, on_true)


def clamp(min: Array, x: Array, max: Array) -> Array:  # noqa: A002
    """``x`` clipped to ``[min, max]``; the bounds are scalars or have ``x``'s shape.

    Example:
        >>> from funcgrad import lax
        >>> lax.clamp(0.0, numpy.array([-1.0, 0.5, 2.0]), 1.0).tolist()
        [0.0, 0.5, 1.0]
    """
    lo, xa, hi = same_dtypes("clamp", {"min": min, "x": x, "max": max}, "biuf")
    for k, a in (("min", lo), ("max", hi)):
        if a.shape not in ((), xa.shape):
            raise TypeError(
                f"lax.clamp: {k} must be a scalar or have x's shape {xa.shape}, got {a.shape}")
    return _ew.clamp(min, x, max)


def bitcast_convert_type(operand: Array, new_dtype: Any) -> Array:
    """``operand``'s bits read as ``new_dtype``, as ``jax.lax.bitcast_convert_type``.

    A narrower ``new_dtype`` adds a trailing axis (``float64`` to ``uint8``: 8 more elements);
    a wider one consumes the trailing axis, which must hold exactly the right number of
    elements. Bool and complex operands only bitcast to their own dtype. There is no
    derivative (tangents are zero, as in JAX).

    Example:
        >>> from funcgrad import lax
        >>> lax.bitcast_convert_type(numpy.float32(1.0), numpy.int32).tolist()
        1065353216
        >>> lax.bitcast_convert_type(numpy.array([1, 2], numpy.int8), numpy.int16).tolist()
        513
    """
    aval_of("bitcast_convert_type", operand)
    return _ewx.bitcast_convert_type(operand, new_dtype)


def convert_element_type(operand: Array, new_dtype: Any) -> Array:
    """``operand`` cast to ``new_dtype`` (complex to real keeps the real part).

    Float (and complex) to integer truncates toward zero and saturates as JAX does: values
    past the integer range, infinities included, give its extremes and NaN gives 0 (NumPy's
    cast is undefined there). Integer to integer wraps.

    Example:
        >>> from funcgrad import lax
        >>> lax.convert_element_type(numpy.array([1.7, -1.7]), numpy.int32).tolist()
        [1, -1]
        >>> lax.convert_element_type(numpy.array([300.0, -1.0, numpy.nan]), numpy.uint8).tolist()
        [255, 0, 0]
    """
    a = aval_of("convert_element_type", operand)
    try:
        dt = numpy.dtype(new_dtype)
    except TypeError:
        raise TypeError(
            f"lax.convert_element_type: new_dtype {new_dtype!r} is not a dtype") from None
    if a.dtype.kind in "fc" and dt.kind in "iu":
        return _saturating_to_int(operand, dt)
    return _ew.convert_element_type(operand, dt)


def _saturating_to_int(x: Array, dt: numpy.dtype) -> Array:
    if get_aval(x).dtype.kind == "c":
        x = _ew.real(x)
    src = get_aval(x).dtype
    info = numpy.iinfo(dt)
    # Both bounds are powers of two (or 0), exact in any float format unless they overflow
    # it, and then infinity is the right bound.
    with numpy.errstate(over="ignore"):
        top, bottom = src.type(2.0 ** (info.bits - (dt.kind == "i"))), src.type(info.min)
    high, low = _ew.ge(x, top), _ew.le(x, bottom) if dt.kind == "i" else _ew.lt(x, bottom)
    bad = _ew.or_(_ew.or_(high, low), _ew.ne(x, x))
    out = _ew.convert_element_type(_ew.select_n(bad, x, src.type(0)), dt)
    out = _ew.select_n(low, out, dt.type(info.min))
    return _ew.select_n(high, out, dt.type(info.max))


def optimization_barrier(operand: Any, /) -> Any:
    """``operand`` (any pytree of arrays) unchanged, as ``jax.lax.optimization_barrier``: in
    XLA it stops the compiler moving work across it; funcgrad's compiler does not reorder
    across Python-visible values, so it is the identity (and differentiates, batches and jits
    as one).

    Example:
        >>> from funcgrad import lax
        >>> lax.optimization_barrier((numpy.ones(2), 3.0))[0].tolist()
        [1.0, 1.0]
    """
    return tree_util.tree_map(_ew.strong, operand)


def stop_gradient(x: Any) -> Any:
    """``x`` (any pytree of arrays) with derivatives cut to zero at every order.

    Example:
        >>> import funcgrad
        >>> from funcgrad import lax
        >>> float(funcgrad.grad(lambda v: v * lax.stop_gradient(v))(3.0))
        3.0
    """
    return tree_util.tree_map(_ew.stop_gradient, x)


def reduce_precision(operand: Array, exponent_bits: int, mantissa_bits: int) -> Array:
    """``operand`` rounded as if stored in a float format with ``exponent_bits`` exponent and
    ``mantissa_bits`` mantissa bits, keeping its dtype: XLA's ReducePrecision bit for bit
    (round to nearest even; overflow to a signed infinity; results below the format's smallest
    normal number flush to a signed zero; NaN stays NaN). ``(8, 7)`` is bfloat16, ``(5, 10)``
    float16. The derivative rounds the tangent the same way (as in JAX).

    Example:
        >>> from funcgrad import lax
        >>> lax.reduce_precision(numpy.float32(1.00390625), 8, 7).tolist()   # to bfloat16
        1.0
        >>> lax.reduce_precision(numpy.array([70000.0, 1e-6]), 5, 10).tolist()  # float16
        [inf, 0.0]
    """
    a = aval_of("reduce_precision", operand)
    check_kind("reduce_precision", a, FLOATING)
    e = static_int("reduce_precision", exponent_bits, "exponent_bits")
    m = static_int("reduce_precision", mantissa_bits, "mantissa_bits")
    if e < 1 or m < 0:
        raise ValueError(f"lax.reduce_precision: exponent_bits must be >= 1 and mantissa_bits "
                         f">= 0, got {e} and {m}")
    if a.dtype.itemsize not in (2, 4, 8):
        raise DTypeError(f"lax.reduce_precision: needs a float16/32/64 operand, got {a.dtype}")
    return _ewx.reduce_precision(operand, e, m)
