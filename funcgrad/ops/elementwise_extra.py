"""More elementwise primitives: floating-point decomposition and integer bit utilities.

``ldexp``, ``frexp``, ``modf``, ``nextafter``, ``spacing``, ``gcd``, ``lcm`` and
``bitwise_count`` wrap the NumPy/CuPy ufuncs of the same names, so values (signed zeros,
infinities, subnormals) are the library's own bit for bit. Derivatives follow JAX:
``ldexp`` is linear in its mantissa, the fractional part of ``modf`` has slope 1, the mantissa
of ``frexp`` is ``x * 2**-e`` with ``e`` held fixed, ``nextafter`` has slope 1 in ``x``; integer
results, ``spacing``, ``gcd``/``lcm`` and ``bitwise_count`` have zero (or ``float0``) tangents.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy

from funcgrad.avals import ShapedArray
from funcgrad.backend import xp_for
from funcgrad.core import bind, bind1
from funcgrad.errors import DTypeError
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import Zero, defjvp, defjvp_zero, jvp_rules
from funcgrad.interpreters.transpose import deftranspose, is_undefined
from funcgrad.ops._util import make_primitive
from funcgrad.ops.elementwise import (
    _broadcasting_batch,
    _vectorized_batch,
    fit_tangent,
    naryop,
    neg,
    unbroadcast_ct,
    unop,
)

__all__ = [
    "ldexp", "ldexp_p", "frexp", "frexp_p", "modf", "modf_p", "nextafter", "nextafter_p",
    "spacing", "spacing_p", "gcd", "gcd_p", "lcm", "lcm_p", "bitwise_count",
    "bitwise_count_p",
]

# ---------------------------------------------------------------------------------------------
# ldexp(x, n) = x * 2**n, exactly (no overflow of 2**n on the way): linear in x

ldexp_p = naryop("ldexp", "ldexp")


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
