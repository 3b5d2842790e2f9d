"""More elementwise primitives: floating-point decomposition and integer bit utilities.

``ldexp``, ``frexp``, ``modf``, ``nextafter``, ``spacing``, ``gcd``, ``lcm`` and
``bitwise_count`` wrap the NumPy/CuPy ufuncs of the same names, and ``bitcast_convert_type``
reinterprets the bits of an array as another dtype, so values (signed zeros,
infinities, subnormals) are the library's own bit for bit. Derivatives follow JAX:
``ldexp`` is linear in its mantissa, the fractional part of ``modf`` has slope 1, the mantissa
of ``frexp`` is ``x * 2**-e`` with ``e`` held fixed, ``nextafter`` has slope 1 in ``x``; integer
results, ``spacing``, ``gcd``/``lcm`` and ``bitwise_count`` have zero (or ``float0``) tangents.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy

from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import xp_for
from funcgrad.core import bind, bind1
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.interpreters import batching
from funcgrad.interpreters import cost as _cost
from funcgrad.interpreters.jvp import Zero, defjvp, defjvp_zero, deflinear, jvp_rules
from funcgrad.interpreters.transpose import deftranspose, is_undefined
from funcgrad.ir import literal_promoting_primitives
from funcgrad.ops._util import check_static, make_primitive
from funcgrad.ops.elementwise import (
    _broadcasting_batch,
    _vectorized_batch,
    fit_tangent,
    naryop,
    neg,
    unbroadcast_ct,
    unop,
)
from funcgrad.ops.shape import moveaxis

__all__ = [
    "ldexp", "ldexp_p", "frexp", "frexp_p", "modf", "modf_p", "nextafter", "nextafter_p",
    "spacing", "spacing_p", "gcd", "gcd_p", "lcm", "lcm_p", "bitwise_count",
    "bitwise_count_p", "bitcast_convert_type", "bitcast_convert_type_p",
    "reduce_precision", "reduce_precision_p",
]

# ---------------------------------------------------------------------------------------------
# ldexp(x, n) = x * 2**n, exactly (no overflow of 2**n on the way): linear in x

ldexp_p = naryop("ldexp", "ldexp")
del literal_promoting_primitives[ldexp_p]  # the exponent keeps its integer type


def ldexp(x: Any, n: Any) -> Any:
    """``x * 2**n`` elementwise; ``n`` must be an integer."""
    return bind1(ldexp_p, x, n)


def _ldexp_transpose(ct: Any, x: Any, n: Any) -> list[Any]:
    if is_undefined(n):
        raise ValueError("ldexp: transpose with respect to the exponent (not linear)")
    return [unbroadcast_ct(ldexp(ct, n), x), None]


defjvp(ldexp_p, lambda g, ans, x, n: fit_tangent(ldexp(g, n), ans), None)
deftranspose(ldexp_p, _ldexp_transpose)
_broadcasting_batch(ldexp_p)


# ---------------------------------------------------------------------------------------------
# frexp / modf: two outputs from one ufunc call


def _two_out_abstract(name: str, ufunc: Any) -> Any:
    def abstract(a: ShapedArray) -> list[ShapedArray]:
        if a.dtype.kind not in "biuf":
            raise DTypeError(f"{name} does not support dtype {a.dtype} (real numbers only)")
        outs = ufunc(numpy.ones((1,), a.dtype))
        weak = a.weak_type and a.dtype.kind == "f"
        return [ShapedArray(a.shape, o.dtype, weak and o.dtype.kind == "f", a.device)
                for o in outs]

    return abstract


def _two_out_impl(ufunc_name: str) -> Any:
    def impl(x: Any) -> list[Any]:
        xp = xp_for(x)
        m, e = getattr(xp, ufunc_name)(x)
        if xp is not numpy and isinstance(m, numpy.generic):
            m, e = xp.asarray(m), xp.asarray(e)
        return [m, e]

    return impl


def _two_out_batch(prim: Any) -> None:
    def rule(axis_size: int, vals: list[Any], dims: list[Any]) -> tuple[list[Any], list[Any]]:
        return bind(prim, *vals), [dims[0], dims[0]]

    batching.batch_rules[prim] = rule


frexp_p = make_primitive("frexp", _two_out_impl("frexp"), _two_out_abstract("frexp", numpy.frexp),
                         multiple_results=True)


def frexp(x: Any) -> list[Any]:
    """``[mantissa, exponent]`` with ``x = mantissa * 2**exponent``, ``0.5 <= |mantissa| < 1``
    (exponent int32)."""
    return bind(frexp_p, x)


def _frexp_jvp(primals: Any, tangents: Any) -> tuple[list[Any], list[Any]]:
    (x,), (t,) = primals, tangents
    m, e = bind(frexp_p, x)
    if type(t) is Zero:
        return [m, e], [Zero.from_primal(m), Zero.from_primal(e)]
    return [m, e], [fit_tangent(ldexp(t, neg(e)), m), Zero.from_primal(e)]


jvp_rules[frexp_p] = _frexp_jvp
_two_out_batch(frexp_p)
_cost.cost_rules[frexp_p] = _cost.per_output_element  # elementwise, two results

modf_p = make_primitive("modf", _two_out_impl("modf"), _two_out_abstract("modf", numpy.modf),
                        multiple_results=True)


def modf(x: Any) -> list[Any]:
    """``[fractional part, integral part]``, both with the sign of ``x``, as floats."""
    return bind(modf_p, x)


def _modf_jvp(primals: Any, tangents: Any) -> tuple[list[Any], list[Any]]:
    (x,), (t,) = primals, tangents
    frac, whole = bind(modf_p, x)
    if type(t) is Zero:
        return [frac, whole], [Zero.from_primal(frac), Zero.from_primal(whole)]
    return [frac, whole], [fit_tangent(t, frac), Zero.from_primal(whole)]


jvp_rules[modf_p] = _modf_jvp
_two_out_batch(modf_p)
_cost.cost_rules[modf_p] = _cost.per_output_element  # elementwise, two results

# ---------------------------------------------------------------------------------------------
# nextafter, spacing

nextafter_p = naryop("nextafter", "nextafter")


def nextafter(x: Any, y: Any) -> Any:
    """The next floating-point value after ``x`` towards ``y``, elementwise."""
    return bind1(nextafter_p, x, y)


# One ulp away from x: slope 1 in x (almost everywhere), 0 in y.
defjvp(nextafter_p, lambda g, ans, x, y: fit_tangent(g, ans), None)
_broadcasting_batch(nextafter_p)


@functools.cache
def _spacing_dtype(dt: numpy.dtype) -> numpy.dtype:
    # Dtype metadata only (which float loop NumPy picks for an int/bool input), probed once.
    return numpy.spacing(numpy.ones((1,), dt)).dtype


def _spacing_impl(xp: Any, x: Any) -> Any:
    fn = getattr(xp, "spacing", None)
    if fn is not None:
        return fn(x)
    # Array modules without the ufunc: one step away from zero (x < 0, not the sign bit:
    # NumPy's spacing(-0.0) is positive).
    x = xp.asarray(x)
    dt = _spacing_dtype(x.dtype)
    if x.dtype != dt:
        x = x.astype(dt)
    if dt == numpy.float16:
        # NumPy's half spacing of a negative x is the gap towards zero, and nan at -inf.
        inf = numpy.float16(numpy.inf)
        ax = xp.abs(x)
        out = xp.where(x < 0, ax - xp.nextafter(ax, xp.zeros_like(ax)), xp.nextafter(x, inf) - x)
        return xp.where(ax == inf, numpy.float16(numpy.nan), out)
    toward = xp.where(x < 0, -numpy.inf, numpy.inf).astype(dt)
    return xp.nextafter(x, toward) - x


spacing_p = unop("spacing", _spacing_impl)


def spacing(x: Any) -> Any:
    """The distance from ``x`` to the next larger-magnitude float (one ulp), elementwise."""
    return bind1(spacing_p, x)


defjvp_zero(spacing_p)
_vectorized_batch(spacing_p)

# ---------------------------------------------------------------------------------------------
# Integer utilities: zero derivatives

gcd_p = naryop("gcd", "gcd")
lcm_p = naryop("lcm", "lcm")


def gcd(x: Any, y: Any) -> Any:
    """Greatest common divisor of integers, elementwise (non-negative)."""
    return bind1(gcd_p, x, y)


def lcm(x: Any, y: Any) -> Any:
    """Least common multiple of integers, elementwise (non-negative)."""
    return bind1(lcm_p, x, y)


for _p in (gcd_p, lcm_p):
    defjvp_zero(_p)
    _broadcasting_batch(_p)

_BYTE_POPCOUNT = numpy.array([bin(i).count("1") for i in range(256)], dtype=numpy.uint8)


def _bitwise_count_impl(xp: Any, x: Any) -> Any:
    fn = getattr(xp, "bitwise_count", None)
    if fn is not None:
        return fn(x)
    # Array modules without the ufunc: a byte lookup table over |x| read as unsigned.
    x = xp.asarray(x)
    if x.dtype.kind == "b":
        return x.astype(numpy.uint8)
    if x.dtype.kind == "i":
        x = xp.abs(x).view(numpy.dtype(f"u{x.dtype.itemsize}"))
    table = xp.asarray(_BYTE_POPCOUNT)
    out = xp.zeros(x.shape, numpy.uint8)
    for k in range(x.dtype.itemsize):
        out = out + table[(x >> (8 * k)) & 0xFF]
    return out


bitwise_count_p = unop("bitwise_count", _bitwise_count_impl)


def bitwise_count(x: Any) -> Any:
    """The number of 1-bits in ``|x|`` for integers (and booleans), as uint8."""
    return bind1(bitwise_count_p, x)


defjvp_zero(bitwise_count_p)
_vectorized_batch(bitwise_count_p)


# -- bitcast_convert_type: the same bits read as another dtype (JAX's shape rule: a narrower
# dtype adds a trailing axis of old/new elements, a wider one consumes the trailing axis)


def _bitcast_shape(a: ShapedArray, new_dtype: numpy.dtype) -> tuple[int, ...]:
    old = a.dtype
    for dt in (old, new_dtype):
        if dt.kind not in "biufc":
            raise DTypeError(f"bitcast_convert_type: unsupported dtype {dt}")
    if old != new_dtype and (old.kind in "bc" or new_dtype.kind in "bc"):
        raise DTypeError(
            f"bitcast_convert_type: bool and complex operands can only be bitcast to their own "
            f"dtype, got {old} to {new_dtype}"
        )
    if old.itemsize == new_dtype.itemsize:
        return a.shape
    if old.itemsize > new_dtype.itemsize:
        return (*a.shape, old.itemsize // new_dtype.itemsize)
    n = a.shape[-1] if a.shape else 1
    if n * old.itemsize != new_dtype.itemsize:
        raise ShapeError(
            f"bitcast_convert_type: converting an array of shape {a.shape} from {old} "
            f"({old.itemsize} bytes) to {new_dtype} ({new_dtype.itemsize} bytes) needs a "
            f"trailing axis of {new_dtype.itemsize // old.itemsize} elements, got {n}"
        )
    return a.shape[:-1]


def _bitcast_impl(x: Any, new_dtype: numpy.dtype) -> list[Any]:
    xp = xp_for(x)
    x = xp.asarray(x)
    x = xp.ascontiguousarray(x).reshape(x.shape)  # (ascontiguousarray makes 0-d arrays 1-d)
    old = x.dtype
    if old.itemsize == new_dtype.itemsize:
        return [x.view(new_dtype)]
    if old.itemsize > new_dtype.itemsize:  # a trailing axis of the narrower elements
        return [x.reshape(x.shape + (1,)).view(new_dtype)]
    return [x.view(new_dtype).reshape(x.shape[:-1])]


def _bitcast_abstract(a: ShapedArray, new_dtype: numpy.dtype) -> list[ShapedArray]:
    check_static("bitcast_convert_type", new_dtype=new_dtype)
    return [ShapedArray(_bitcast_shape(a, new_dtype), new_dtype, False, a.device)]


bitcast_convert_type_p = make_primitive("bitcast_convert_type", _bitcast_impl, _bitcast_abstract)


def bitcast_convert_type(x: Any, new_dtype: Any) -> Any:
    """``x``'s bits read as ``new_dtype`` (no derivative: tangents are zero, as in JAX).

    Example:
        >>> import numpy as np
        >>> bitcast_convert_type(np.float32(1.0), np.int32)
        array(1065353216, dtype=int32)
        >>> bitcast_convert_type(np.array([1], np.uint16), np.uint8)
        array([[1, 0]], dtype=uint8)
    """
    new_dtype = numpy.dtype(new_dtype)
    _bitcast_shape(get_aval(x), new_dtype)  # checked up front: eager mode runs the impl only
    return bind1(bitcast_convert_type_p, x, new_dtype=new_dtype)


def _bitcast_batch(axis_size: int, vals: Any, dims: Any, new_dtype: numpy.dtype):
    # The trailing axis changes: keep the batch axis in front of it.
    (x,), (d,) = vals, dims
    if d == get_aval(x).ndim - 1:
        x, d = moveaxis(x, d, 0), 0
    return [bind1(bitcast_convert_type_p, x, new_dtype=new_dtype)], [d]


defjvp_zero(bitcast_convert_type_p)
batching.batch_rules[bitcast_convert_type_p] = _bitcast_batch

# ---------------------------------------------------------------------------------------------
# reduce_precision: round to a float format with fewer exponent/mantissa bits, bit for bit as
# XLA's ReducePrecision (round to nearest even on the bit pattern; overflow to a signed
# infinity; underflow, subnormals included, to a signed zero; NaN kept as is, also with no
# mantissa bits, as XLA on CPU does). Treated as linear, as JAX does: the tangent is rounded the same way.

_FLOAT_LAYOUT = {2: (5, 10), 4: (8, 23), 8: (11, 52)}  # itemsize -> (exponent, mantissa) bits


def _reduce_precision_impl(xp: Any, x: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    x = xp.asarray(x)
    dt = x.dtype
    if dt.kind != "f" or dt.itemsize not in _FLOAT_LAYOUT:
        raise DTypeError(f"reduce_precision: needs a float16/32/64 operand, got {dt}")
    src_e, src_m = _FLOAT_LAYOUT[dt.itemsize]
    nbits = 8 * dt.itemsize
    u = numpy.dtype(f"u{dt.itemsize}").type
    sign, exp_mask = u(1 << (nbits - 1)), u(((1 << src_e) - 1) << src_m)
    bits = x.view(u)
    is_nan = (bits & u(~(1 << (nbits - 1)) & ((1 << nbits) - 1))) > exp_mask
    if mantissa_bits < src_m:
        shift = src_m - mantissa_bits
        # Round half to even: add 0111...1 plus the last kept bit, then drop the cut bits (a
        # carry into the exponent is the right answer).
        bias = ((bits >> u(shift)) & u(1)) + u((1 << (shift - 1)) - 1)
        bits = (bits + bias) & u(((1 << nbits) - 1) ^ ((1 << shift) - 1))
    if exponent_bits < src_e:
        src_bias, new_bias = (1 << (src_e - 1)) - 1, (1 << (exponent_bits - 1)) - 1
        exponent = bits & exp_mask
        signed_zero = bits & sign
        bits = xp.where(exponent > u((src_bias + new_bias) << src_m), signed_zero | exp_mask,
                        bits)
        bits = xp.where(exponent <= u((src_bias - new_bias) << src_m), signed_zero, bits)
    out = xp.asarray(bits).view(dt)
    return xp.where(is_nan, x, out)


reduce_precision_p = unop("reduce_precision", _reduce_precision_impl)


def reduce_precision(x: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """``x`` rounded to a float format of ``exponent_bits``/``mantissa_bits`` (kept in
    ``x``'s dtype), exactly as XLA's ReducePrecision."""
    return bind1(reduce_precision_p, x, exponent_bits=int(exponent_bits),
                 mantissa_bits=int(mantissa_bits))


deflinear(reduce_precision_p)
deftranspose(reduce_precision_p,
             lambda ct, x, **params: [reduce_precision(ct, **params)])
_vectorized_batch(reduce_precision_p)
