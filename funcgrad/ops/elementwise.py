"""Elementwise primitives: unary math, broadcasting binary arithmetic, select, casts.

Binary primitives broadcast like NumPy (no explicit broadcast op is inserted, which keeps
eager mode fast); their transpose rules sum cotangents back to each operand's shape.
Each primitive is one block: wrapper, impl + shape/dtype rule (via the factories), JVP,
transpose (linear ones) and batch rule.
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.ops.shape as _shape
from funcgrad.avals import ShapedArray, float0, get_aval
from funcgrad.backend import xp_for
from funcgrad.core import Primitive, bind1
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import (
    Zero,
    add_any_p,
    defjvp,
    defjvp_zero,
    deflinear,
    jvp_rules,
)
from funcgrad.interpreters.transpose import deftranspose, is_undefined
from funcgrad.ops._util import (
    broadcast_shapes_or_error,
    make_primitive,
    probe_dtype,
    result_device,
)

# ---------------------------------------------------------------------------------------------
# Factories


def unop(name: str, fn: Any) -> Primitive:
    """An elementwise unary primitive computing ``fn(xp, x, **params)``."""

    def np_fn(x: Any, **params: Any) -> Any:
        return fn(numpy, x, **params)

    def impl(x: Any, **params: Any) -> list[Any]:
        return [fn(xp_for(x), x, **params)]

    def abstract(a: ShapedArray, **params: Any) -> list[ShapedArray]:
        dt, weak = probe_dtype(name, np_fn, a, **params)
        return [ShapedArray(a.shape, dt, weak and a.weak_type, a.device)]

    return make_primitive(name, impl, abstract)


def naryop(name: str, fn: Any) -> Primitive:
    """An elementwise n-ary primitive with NumPy broadcasting: ``fn(xp, *args, **params)``."""

    def np_fn(*args: Any, **params: Any) -> Any:
        return fn(numpy, *args, **params)

    def impl(*args: Any, **params: Any) -> list[Any]:
        return [fn(xp_for(*args, what=name), *args, **params)]

    def abstract(*avals: ShapedArray, **params: Any) -> list[ShapedArray]:
        shape = broadcast_shapes_or_error(name, *(a.shape for a in avals))
        dt, weak = probe_dtype(name, np_fn, *avals, **params)
        return [ShapedArray(shape, dt, weak, result_device(name, *avals))]

    return make_primitive(name, impl, abstract)


# ---------------------------------------------------------------------------------------------
# Batch rule families


def _vectorized_batch(prim: Primitive) -> None:
    def rule(axis_size, vals, dims, **params):
        return [bind1(prim, *vals, **params)], [dims[0]]

    batching.batch_rules[prim] = rule


def _broadcasting_batch(prim: Primitive) -> None:
    """Move every batch dim to the front and pad ranks so NumPy broadcasting lines up."""

    def rule(axis_size, vals, dims, **params):
        return [bind1(prim, *align_batched(vals, dims), **params)], [0]

    batching.batch_rules[prim] = rule


def align_batched(vals: list[Any], dims: list[int | None]) -> list[Any]:
    """Batched operands with the batch axis first and ranks padded to the widest operand."""
    rank = max(get_aval(v).ndim - (d is not None) for v, d in zip(vals, dims))
    out = []
    for v, d in zip(vals, dims):
        if d is None:
            out.append(v)
            continue
        v = _shape.moveaxis(v, d, 0)
        a = get_aval(v)
        if a.ndim - 1 < rank:
            v = _shape.reshape(v, (a.shape[0],) + (1,) * (rank - a.ndim + 1) + a.shape[1:])
        out.append(v)
    return out


# ---------------------------------------------------------------------------------------------
# Helpers for rules


def fit_tangent(t: Any, ans: Any) -> Any:
    """Broadcast/cast tangent contribution ``t`` to the shape and dtype of ``ans``."""
    ta, aa = get_aval(t), get_aval(ans)
    if ta.dtype != aa.dtype and aa.dtype.kind in "fc":
        t = convert_element_type(t, aa.dtype)
    if ta.shape != aa.shape:
        t = _shape.broadcast_to(t, aa.shape)
    return t


def unbroadcast_ct(ct: Any, x: Any) -> Any:
    """Cotangent ``ct`` of a broadcast result, summed back to operand ``x``'s shape/dtype."""
    aval = x.aval if is_undefined(x) else get_aval(x)
    return _shape.sum_to_aval(ct, aval)


def _is_zero_tangent_dtype(a: ShapedArray) -> bool:
    return a.dtype == float0 or a.dtype.kind not in "fc"


# =============================================================================================
# add_any (the interpreters' tangent addition) batches like any broadcasting op

_broadcasting_batch(add_any_p)

# add


add_p = naryop("add", lambda xp, x, y: xp.add(x, y))


def add(x: Any, y: Any) -> Any:
    """Elementwise ``x + y`` with NumPy broadcasting."""
    return bind1(add_p, x, y)


defjvp(add_p, lambda g, ans, x, y: fit_tangent(g, ans), lambda g, ans, x, y: fit_tangent(g, ans))
deftranspose(
    add_p,
    lambda ct, x, y: [
        unbroadcast_ct(ct, x) if is_undefined(x) else None,
        unbroadcast_ct(ct, y) if is_undefined(y) else None,
    ],
)
_broadcasting_batch(add_p)

# sub

sub_p = naryop("sub", lambda xp, x, y: xp.subtract(x, y))


def sub(x: Any, y: Any) -> Any:
    """Elementwise ``x - y``."""
    return bind1(sub_p, x, y)


defjvp(
    sub_p, lambda g, ans, x, y: fit_tangent(g, ans), lambda g, ans, x, y: fit_tangent(neg(g), ans)
)
deftranspose(
    sub_p,
    lambda ct, x, y: [
        unbroadcast_ct(ct, x) if is_undefined(x) else None,
        unbroadcast_ct(neg(ct), y) if is_undefined(y) else None,
    ],
)
_broadcasting_batch(sub_p)

# mul

mul_p = naryop("mul", lambda xp, x, y: xp.multiply(x, y))


def mul(x: Any, y: Any) -> Any:
    """Elementwise ``x * y``."""
    return bind1(mul_p, x, y)


defjvp(
    mul_p,
    lambda g, ans, x, y: fit_tangent(mul(g, y), ans),
    lambda g, ans, x, y: fit_tangent(mul(x, g), ans),
)


def _mul_transpose(ct, x, y):
    if is_undefined(x) and is_undefined(y):
        raise ValueError("mul: transpose of a product of two linear values (not linear)")
    if is_undefined(x):
        return [unbroadcast_ct(mul(ct, y), x), None]
    return [None, unbroadcast_ct(mul(x, ct), y)]


deftranspose(mul_p, _mul_transpose)
_broadcasting_batch(mul_p)

# div

div_p = naryop("div", lambda xp, x, y: xp.true_divide(x, y))


def div(x: Any, y: Any) -> Any:
    """Elementwise true division ``x / y`` (NumPy ``true_divide``)."""
    return bind1(div_p, x, y)


defjvp(
    div_p,
    lambda g, ans, x, y: fit_tangent(div(g, y), ans),
    lambda g, ans, x, y: fit_tangent(neg(mul(g, div(ans, y))), ans),
)


def _div_transpose(ct, x, y):
    if is_undefined(y):
        raise ValueError("div: transpose with respect to the divisor (not linear)")
    return [unbroadcast_ct(div(ct, y), x), None]


deftranspose(div_p, _div_transpose)
_broadcasting_batch(div_p)

# neg

neg_p = unop("neg", lambda xp, x: xp.negative(x))


def neg(x: Any) -> Any:
    """Elementwise ``-x``."""
    return bind1(neg_p, x)


deflinear(neg_p)
deftranspose(neg_p, lambda ct, x: [neg(ct)])
_vectorized_batch(neg_p)

# sin / cos / exp / log : the template for every differentiable unary op

sin_p = unop("sin", lambda xp, x: xp.sin(x))


def sin(x: Any) -> Any:
    """Elementwise sine."""
    return bind1(sin_p, x)


defjvp(sin_p, lambda g, ans, x: mul(g, cos(x)))
_vectorized_batch(sin_p)

cos_p = unop("cos", lambda xp, x: xp.cos(x))


def cos(x: Any) -> Any:
    """Elementwise cosine."""
    return bind1(cos_p, x)


defjvp(cos_p, lambda g, ans, x: neg(mul(g, sin(x))))
_vectorized_batch(cos_p)

exp_p = unop("exp", lambda xp, x: xp.exp(x))


def exp(x: Any) -> Any:
    """Elementwise ``e**x``."""
    return bind1(exp_p, x)


defjvp(exp_p, lambda g, ans, x: mul(g, ans))
_vectorized_batch(exp_p)

log_p = unop("log", lambda xp, x: xp.log(x))


def log(x: Any) -> Any:
    """Elementwise natural logarithm."""
    return bind1(log_p, x)


defjvp(log_p, lambda g, ans, x: div(g, x))
_vectorized_batch(log_p)

# =============================================================================================
# convert_element_type


def _convert_impl(x: Any, new_dtype: numpy.dtype) -> list[Any]:
    xp = xp_for(x)
    x = xp.asarray(x)
    if x.dtype.kind == "c" and new_dtype.kind != "c":
        x = xp.real(x)
    return [x.astype(new_dtype)]


def _convert_abstract(a: ShapedArray, new_dtype: numpy.dtype) -> list[ShapedArray]:
    return [ShapedArray(a.shape, new_dtype, False, a.device)]


convert_element_type_p = make_primitive(
    "convert_element_type", _convert_impl, _convert_abstract
)


def convert_element_type(x: Any, new_dtype: Any) -> Any:
    """Cast ``x`` to ``new_dtype`` (complex to real keeps the real part)."""
    return bind1(convert_element_type_p, x, new_dtype=numpy.dtype(new_dtype))


def _convert_jvp(primals, tangents, new_dtype):
    (x,), (t,) = primals, tangents
    ans = convert_element_type(x, new_dtype)
    if type(t) is Zero or new_dtype.kind not in "fc":
        return [ans], [Zero.from_primal(ans)]
    return [ans], [convert_element_type(t, new_dtype)]


jvp_rules[convert_element_type_p] = _convert_jvp


def _convert_transpose(ct, x, new_dtype):
    return [convert_element_type(ct, x.aval.dtype)]


deftranspose(convert_element_type_p, _convert_transpose)
_vectorized_batch(convert_element_type_p)

# stop_gradient: identity forward, zero derivative at every order

stop_gradient_p = unop("stop_gradient", lambda xp, x: x)


def stop_gradient(x: Any) -> Any:
    """``x`` itself, with derivatives of every order cut to zero."""
    return bind1(stop_gradient_p, x)


defjvp_zero(stop_gradient_p)
_vectorized_batch(stop_gradient_p)

__all__ = [n for n in dir() if not n.startswith("_")]
