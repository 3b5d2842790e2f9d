"""Elementwise primitives: unary math, broadcasting binary arithmetic, select, casts.

Binary primitives broadcast like NumPy (no explicit broadcast op is inserted, which keeps
eager mode fast); their transpose rules sum cotangents back to each operand's shape.
Each primitive is one block: wrapper, impl + shape/dtype rule (via the factories), JVP,
transpose (linear ones) and batch rule.

Derivative conventions (as JAX's): holomorphic rules for complex inputs (``d sin z = cos z dz``),
real-linear maps for the non-holomorphic ones (``abs``, ``real``, ``imag``, ``conj``), and
transposes with respect to the real pairing ``<a, b> = Re(a * b)`` (no conjugation), so
``real``'s transpose is ``complex(ct, 0)`` and ``imag``'s is ``complex(0, -ct)``.
Piecewise-constant primitives (floor, sign, comparisons, bitwise ops...) have zero tangents;
integer and boolean values always get ``float0`` tangents.

Several wrappers are named like Python builtins (``abs``, ``max``, ``min``, ``pow``, ``round``,
``complex``), as JAX's ``lax`` names them; inside this module the builtins are reached through
:mod:`builtins`.
"""

from __future__ import annotations

import builtins
import cmath
import math
from collections.abc import Callable
from typing import Any, TypeVar

import numpy

import funcgrad.ops.shape as _shape
from funcgrad import backend as _backend
from funcgrad.avals import ShapedArray, canonical_dtype, float0, get_aval, result_dtype
from funcgrad.backend import get_default_device, operator_index, scalar_array, xp_for, xp_for_device
from funcgrad.compile import rules as _rules
from funcgrad.compile.rules import Emission, array_operand, same_type
from funcgrad.core import Primitive, Tracer, bind1, device_put_rule, tracer_types
from funcgrad.errors import DTypeError
from funcgrad.interpreters import batching, eager_vjp
from funcgrad.interpreters.jvp import (
    Zero,
    add_any_p,
    declare_linear,
    def_fast_vjp,
    defjvp,
    defjvp_zero,
    deflinear,
    elementwise_primitives,
    jvp_rules,
)
from funcgrad.interpreters.linearize import backward_pass_primitives
from funcgrad.interpreters.transpose import deftranspose, is_undefined
from funcgrad.ir import Eqn, Literal, Var, literal_promoting_primitives
from funcgrad.ops._util import (
    as_array,
    broadcast_shapes_or_error,
    check_static,
    make_primitive,
    probe_dtype,
    result_device,
)

# ---------------------------------------------------------------------------------------------
# Factories

_ndarray = numpy.ndarray
_PY_SCALAR_TYPES = frozenset({bool, int, float, complex})


def _array_function(fn: Any) -> Any:
    """``fn`` as ``fn(xp, *args, **params)``: a name means ``xp.<name>(*args, **params)``."""
    if not isinstance(fn, str):
        return fn
    name = fn

    def call(xp: Any, *args: Any, **params: Any) -> Any:
        return getattr(xp, name)(*args, **params)

    return call


def _wide_int(a: Any) -> bool:
    # (one no float holds either, 10**400, NumPy refuses too: it is left as it is)
    return type(a) is int and not -(2**63) <= a < 2**64 and builtins.abs(a) < 2**1024


def wide_ints_as_floats(args: tuple) -> tuple:
    """``args`` with each Python int no 64-bit integer holds as a Python float, where the
    operation computes in floats (another operand is inexact): NumPy converts such an int to
    the float dtype (``float16_array + 2**64`` is inf), CuPy first holds every Python int as
    an int64 (uint64 from 2**63) and raises ``OverflowError``. Beside integers alone the int
    is left as it is, and both raise ``OverflowError``, as NumPy does.

    Example:
        >>> wide_ints_as_floats((numpy.ones(2, numpy.float16), 2**64))[1]
        1.8446744073709552e+19
    """
    if not any(type(a) is int and _wide_int(a) for a in args):
        return args
    inexact = any(type(a) in (float, complex) or getattr(getattr(a, "dtype", None), "kind", "")
                  in ("f", "c") for a in args)
    return tuple(float(a) if _wide_int(a) else a for a in args) if inexact else args


def _register_elementwise(p: Primitive, declared: str | None) -> None:
    elementwise_primitives.add(p)
    _rules.broadcasting_primitives.add(p)
    if declared is not None:
        _rules.array_calls[p] = declared  # the compiler writes `xp.<fn>(...)` for it


def unop(name: str, fn: Any) -> Primitive:
    """An elementwise unary primitive computing ``fn(xp, x, **params)``; ``fn`` may be the
    name of the array-module function, ``xp.<fn>(x, **params)`` (the compiler then writes
    that call, e.g. ``xp.sin(x)``, instead of calling the impl)."""
    declared = fn if isinstance(fn, str) else None
    host_fn = getattr(numpy, declared) if declared is not None else None
    fn = _array_function(fn)

    def np_fn(x: Any, **params: Any) -> Any:
        return fn(numpy, x, **params)

    if host_fn is not None:
        def impl(x: Any, **params: Any) -> list[Any]:
            if type(x) is _ndarray:  # the eager hot path: a host array computes on the host
                return [host_fn(x, **params) if params else host_fn(x)]
            xp = xp_for(x)
            if xp is not numpy and type(x) in _PY_SCALAR_TYPES:
                x = scalar_array(xp, x)  # device modules' functions want arrays (see naryop)
            out = fn(xp, x, **params)
            if xp is not numpy and isinstance(out, numpy.generic):
                out = xp.asarray(out)  # a device module given only scalars may hand back one
            return [out]
    else:
        def impl(x: Any, **params: Any) -> list[Any]:
            if type(x) is _ndarray:  # the eager hot path: a host array computes on the host
                return [fn(numpy, x, **params) if params else fn(numpy, x)]
            xp = xp_for(x)
            if xp is not numpy and type(x) in _PY_SCALAR_TYPES:
                x = scalar_array(xp, x)  # device modules' functions want arrays (see naryop)
            out = fn(xp, x, **params) if params else fn(xp, x)
            if xp is not numpy and isinstance(out, numpy.generic):
                out = xp.asarray(out)  # a device module given only scalars may hand back one
            return [out]

    def abstract(a: ShapedArray, **params: Any) -> list[ShapedArray]:
        dt, weak = probe_dtype(name, np_fn, a, **params)
        return [ShapedArray(a.shape, dt, weak and a.weak_type and dt.kind != "b", a.device)]

    p = make_primitive(name, impl, abstract)
    _register_elementwise(p, declared)
    return p


def naryop(name: str, fn: Any) -> Primitive:
    """An elementwise n-ary primitive with NumPy broadcasting: ``fn(xp, *args, **params)``;
    ``fn`` may be the name of the array-module function (see :func:`unop`)."""
    declared = fn if isinstance(fn, str) else None
    fn = _array_function(fn)
    host_fn = fn if declared is None else getattr(numpy, declared)

    def np_fn(*args: Any, **params: Any) -> Any:
        return fn(numpy, *args, **params)

    def impl(*args: Any, **params: Any) -> list[Any]:
        # The eager hot path, xp_for's own fast path inlined: host arrays with Python
        # scalars compute on the host.
        host = False
        for a in args:
            t = type(a)
            if t is _ndarray:
                host = True
            elif t not in _PY_SCALAR_TYPES:
                host = False
                break
        if host:
            if declared is not None:
                return [host_fn(*args, **params) if params else host_fn(*args)]
            return [fn(numpy, *args, **params) if params else fn(numpy, *args)]
        xp = xp_for(*args, what=name)
        if xp is not numpy:
            if all(type(a) in _PY_SCALAR_TYPES for a in args):
                # Python scalars alone, on the default device: CuPy's functions want arrays
                # (cupy.clip(0.5, ...) raises); alone, they mean NumPy's default dtypes anyway.
                args = tuple(scalar_array(xp, a) for a in args)
            else:
                args = wide_ints_as_floats(args)
        out = fn(xp, *args, **params) if params else fn(xp, *args)
        if xp is not numpy and isinstance(out, numpy.generic):
            out = xp.asarray(out)  # a device module given only scalars may hand back a scalar
        return [out]

    def abstract(*avals: ShapedArray, **params: Any) -> list[ShapedArray]:
        shape = broadcast_shapes_or_error(name, *(a.shape for a in avals))
        dt, weak = probe_dtype(name, np_fn, *avals, **params)
        return [ShapedArray(shape, dt, weak and dt.kind != "b", result_device(name, *avals))]

    p = make_primitive(name, impl, abstract)
    _register_elementwise(p, declared)
    literal_promoting_primitives[p] = 0  # its operands meet in one dtype (jaxpr printing)
    return p


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
    rank = builtins.max(get_aval(v).ndim - (d is not None) for v, d in zip(vals, dims))
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
# Wrappers that only bind


_F = TypeVar("_F", bound=Callable[..., Any])


def _binds(prim: Primitive) -> Callable[[_F], _F]:
    """Mark a wrapper whose whole body is ``bind1(prim, *operands)``.

    ``funcgrad.numpy``'s functions and the tracer operators then bind ``prim`` on the current
    trace themselves when called plainly (two Python calls fewer per operation on the eager
    hot path); ``tests/funcgrad/test_eager_fast_paths.py`` checks every marked wrapper.
    """

    def mark(fn: _F) -> _F:
        fn.primitive = prim  # type: ignore[attr-defined]
        return fn

    return mark


def strong(r: Any) -> Any:
    """``r`` as a strongly typed array value: a weak one -- Python arithmetic on Python
    scalars alone, a Python scalar when run, a weak aval when traced
    (:data:`funcgrad.core.weak_arithmetic_primitives`) -- becomes an array (eagerly, on the
    default device) or a strong tracer; anything else is returned as it is. What a function
    of the public API (``funcgrad.numpy``'s ufuncs, ``funcgrad.lax``) returns, as NumPy's
    ``numpy.add(1.0, 2.0)`` is a float64 (and JAX's ``lax.add`` an array).

    Example:
        >>> strong(2.0)
        array(2.)
    """
    if isinstance(r, Tracer):
        return convert_element_type(r, r.aval.dtype) if r.aval.weak_type else r
    if type(r) in _PY_SCALAR_TYPES:  # (``complex`` here is the primitive's wrapper)
        return xp_for_device(get_default_device()).asarray(r)
    return r


# ---------------------------------------------------------------------------------------------
# Helpers for rules


def fit_tangent(t: Any, ans: Any) -> Any:
    """Broadcast/cast tangent contribution ``t`` to the shape and dtype of ``ans``."""
    if type(t) is _ndarray and type(ans) is _ndarray and t.shape == ans.shape \
            and t.dtype == ans.dtype:
        return t  # the eager hot path: nothing to fit
    # Traced (the usual case under jit and nested derivatives): the tracers' own avals.
    ta = t.aval if type(t) in tracer_types else get_aval(t)
    aa = ans.aval if type(ans) in tracer_types else get_aval(ans)
    if ta is aa:
        return t
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


def _is_complex(x: Any) -> bool:
    return get_aval(x).dtype.kind == "c"


def _safe_denominator(d: Any) -> Any:
    """``d`` with zeros replaced by ones, for rules whose true derivative is 0 where d is 0."""
    return select_n(eq(d, 0), d, 1)


def _unary(name: str, fn: Any, jvp: Any = None, zero: bool = False,
           fast_vjp: Any = None) -> Primitive:
    """A unary primitive with its JVP (or zero derivative) and the vectorized batch rule.

    ``fast_vjp``: the JVP's formula written on the array module, ``(xp, ct, ans, x)``, for the
    eager tape (see :func:`funcgrad.interpreters.jvp.def_fast_vjp`).
    """
    p = unop(name, fn)
    if zero:
        defjvp_zero(p)
    else:
        defjvp(p, jvp, fast_vjp=None if fast_vjp is None else (fast_vjp,))
    _vectorized_batch(p)
    return p


def _binary(name: str, fn: Any, jvp_x: Any = None, jvp_y: Any = None,
            zero: bool = False) -> Primitive:
    """A broadcasting binary primitive; each JVP contribution is fitted to the output."""
    p = naryop(name, fn)
    if zero:
        defjvp_zero(p)
    else:
        defjvp(
            p,
            None if jvp_x is None else (lambda g, ans, x, y: fit_tangent(jvp_x(g, ans, x, y), ans)),
            None if jvp_y is None else (lambda g, ans, x, y: fit_tangent(jvp_y(g, ans, x, y), ans)),
        )
    _broadcasting_batch(p)
    return p


# =============================================================================================
# add


add_p = naryop("add", "add")


@_binds(add_p)
def add(x: Any, y: Any) -> Any:
    """Elementwise ``x + y`` with NumPy broadcasting."""
    return bind1(add_p, x, y)


defjvp(add_p, lambda g, ans, x, y: fit_tangent(g, ans), lambda g, ans, x, y: fit_tangent(g, ans),
       fast_vjp=(lambda xp, ct, ans, x, y: ct, lambda xp, ct, ans, x, y: ct))
deftranspose(
    add_p,
    lambda ct, x, y: [
        unbroadcast_ct(ct, x) if is_undefined(x) else None,
        unbroadcast_ct(ct, y) if is_undefined(y) else None,
    ],
)
_broadcasting_batch(add_p)


def _simplify_add(eqn: Eqn, ins: list, f: Any) -> Any:
    """``x + 0`` -> ``x``, ``0 + x`` -> ``x``; ``x + -y`` -> ``x - y`` (exact). Also ``add_any``."""
    x, y = ins
    out = eqn.outvars[0]
    if f.is_zero(y) and same_type(x, out):
        return [x]
    if f.is_zero(x) and same_type(y, out):
        return [y]
    for k in (1, 0):
        z = _negated(ins[k], f)
        if z is not None:
            return Eqn(sub_p, [ins[1 - k], z], eqn.outvars, {}, eqn.source_info)
    return None


for _p in (add_p, add_any_p):
    _rules.register_simplification(_p, _simplify_add)
    _rules.tracing_simplifiable_primitives.add(_p)
_rules.scalar_operators[add_p] = "+"
_rules.weak_arithmetic_primitives.add(add_p)
_rules.commutative_primitives.add(add_p)
_rules.exact_scalar_primitives.add(add_p)

# sub

sub_p = naryop("sub", "subtract")


@_binds(sub_p)
def sub(x: Any, y: Any) -> Any:
    """Elementwise ``x - y``."""
    return bind1(sub_p, x, y)


defjvp(
    sub_p, lambda g, ans, x, y: fit_tangent(g, ans), lambda g, ans, x, y: fit_tangent(neg(g), ans),
    fast_vjp=(lambda xp, ct, ans, x, y: ct, lambda xp, ct, ans, x, y: xp.negative(ct)),
)
deftranspose(
    sub_p,
    lambda ct, x, y: [
        unbroadcast_ct(ct, x) if is_undefined(x) else None,
        unbroadcast_ct(neg(ct), y) if is_undefined(y) else None,
    ],
)
_broadcasting_batch(sub_p)


def _simplify_sub(eqn: Eqn, ins: list, f: Any) -> Any:
    """``x - 0`` -> ``x``, ``0 - x`` -> ``-x``, ``x - -z`` -> ``x + z`` (exact)."""
    x, y = ins
    out = eqn.outvars[0]
    if f.is_zero(y) and same_type(x, out):
        return [x]
    if f.is_zero(x) and same_type(y, out):
        return Eqn(neg_p, [y], eqn.outvars, {}, eqn.source_info)
    z = _negated(y, f)
    if z is not None:
        return Eqn(add_p, [x, z], eqn.outvars, {}, eqn.source_info)
    return None


_rules.register_simplification(sub_p, _simplify_sub)
_rules.tracing_simplifiable_primitives.add(sub_p)
_rules.scalar_operators[sub_p] = "-"
_rules.weak_arithmetic_primitives.add(sub_p)
_rules.exact_scalar_primitives.add(sub_p)

# mul

mul_p = naryop("mul", "multiply")


@_binds(mul_p)
def mul(x: Any, y: Any) -> Any:
    """Elementwise ``x * y``."""
    return bind1(mul_p, x, y)


defjvp(
    mul_p,
    lambda g, ans, x, y: fit_tangent(mul(g, y), ans),
    lambda g, ans, x, y: fit_tangent(mul(x, g), ans),
    fast_vjp=(lambda xp, ct, ans, x, y: xp.multiply(ct, y),
              lambda xp, ct, ans, x, y: xp.multiply(x, ct)),
)


def _mul_transpose(ct, x, y):
    if is_undefined(x) and is_undefined(y):
        raise ValueError("mul: transpose of a product of two linear values (not linear)")
    if is_undefined(x):
        return [unbroadcast_ct(mul(ct, y), x), None]
    return [None, unbroadcast_ct(mul(x, ct), y)]


deftranspose(mul_p, _mul_transpose)
_broadcasting_batch(mul_p)


def _simplify_mul(eqn: Eqn, ins: list, f: Any) -> Any:
    """``x * 1`` -> ``x``; ``x * 0`` -> ``0`` for integers and bools only (``inf * 0`` is NaN);
    ``(z + z) * c`` -> ``z * (2c)`` for a float literal ``|c| >= 1`` (``2z`` is exact, the
    product rounded once either way; reverse mode of ``z * z`` writes ``z + z``); negations
    move out (:func:`_push_neg`)."""
    x, y = ins
    out = eqn.outvars[0]
    if f.is_one(y) and same_type(x, out):
        return [x]
    if f.is_one(x) and same_type(y, out):
        return [y]
    if out.aval.dtype.kind in "biu":
        if f.is_zero(y) and same_type(y, out) and x.aval.dtype.kind in "biu":
            return [y]
        if f.is_zero(x) and same_type(x, out) and y.aval.dtype.kind in "biu":
            return [x]
    for s_, c in ((x, y), (y, x)):
        if type(c) is Literal and type(c.val) is float and out.aval.dtype.kind == "f":
            p = f.producer.get(s_) if type(s_) is Var else None
            two_c = 2.0 * c.val
            if (p is not None and p.prim in (add_p, add_any_p) and p.invars[0] is p.invars[1]
                    and type(p.invars[0]) is Var and f.uses.get(s_) == 1
                    and abs(c.val) >= 1.0 and math.isfinite(two_c)
                    and p.invars[0].aval == s_.aval):
                z = p.invars[0]
                new_ins = [z, Literal(two_c, c.aval)] if s_ is x else [Literal(two_c, c.aval), z]
                return Eqn(mul_p, new_ins, eqn.outvars, {}, eqn.source_info)
    return _push_neg(eqn, ins, f)


_rules.register_simplification(mul_p, _simplify_mul)
_rules.tracing_simplifiable_primitives.add(mul_p)
_rules.scalar_operators[mul_p] = "*"
_rules.weak_arithmetic_primitives.add(mul_p)
_rules.commutative_primitives.add(mul_p)
_rules.exact_scalar_primitives.add(mul_p)
_rules.roles["mul"] = mul_p

# div

div_p = naryop("div", "true_divide")


@_binds(div_p)
def div(x: Any, y: Any) -> Any:
    """Elementwise true division ``x / y`` (NumPy ``true_divide``)."""
    return bind1(div_p, x, y)


defjvp(
    div_p,
    lambda g, ans, x, y: fit_tangent(div(g, y), ans),
    lambda g, ans, x, y: fit_tangent(neg(mul(g, div(ans, y))), ans),
    fast_vjp=(lambda xp, ct, ans, x, y: xp.true_divide(ct, y),
              lambda xp, ct, ans, x, y: xp.negative(xp.multiply(ct, xp.true_divide(ans, y)))),
)


def _div_transpose(ct, x, y):
    if is_undefined(y):
        raise ValueError("div: transpose with respect to the divisor (not linear)")
    return [unbroadcast_ct(div(ct, y), x), None]


deftranspose(div_p, _div_transpose)
_broadcasting_batch(div_p)


def _simplify_div(eqn: Eqn, ins: list, f: Any) -> Any:
    x, y = ins
    if f.is_one(y) and same_type(x, eqn.outvars[0]):
        return [x]
    return _push_neg(eqn, ins, f)


_rules.register_simplification(div_p, _simplify_div)
_rules.tracing_simplifiable_primitives.add(div_p)
_rules.scalar_operators[div_p] = "/"
_rules.weak_arithmetic_primitives.add(div_p)
_rules.exact_scalar_primitives.add(div_p)

# neg

neg_p = unop("neg", "negative")


@_binds(neg_p)
def neg(x: Any) -> Any:
    """Elementwise ``-x``."""
    return bind1(neg_p, x)


deflinear(neg_p)
deftranspose(neg_p, lambda ct, x: [neg(ct)])
def_fast_vjp(neg_p, lambda xp, ct, ans, x: xp.negative(ct))
_vectorized_batch(neg_p)


def _simplify_neg(eqn: Eqn, ins: list, f: Any) -> Any:
    """``-(-x)`` -> ``x``; ``-(c * y)`` -> ``(-c) * y`` for a float literal ``c`` (exact)."""
    (x,) = ins
    p = f.producer.get(x) if type(x) is Var else None
    if p is not None and p.prim is neg_p and same_type(p.invars[0], eqn.outvars[0]):
        return [p.invars[0]]
    if (p is not None and p.prim is mul_p and f.uses.get(x) == 1
            and eqn.outvars[0].aval.dtype.kind in "fc"):
        a, b = p.invars
        for c, y in ((a, b), (b, a)):
            # float only: for a complex c, (-c) * y and -(c * y) differ in the sign of a
            # zero real or imaginary part (-(ax - by) is -0 where -ax + by is +0)
            if type(c) is Literal and type(c.val) is float:
                return Eqn(mul_p, [Literal(-c.val, c.aval), y] if c is a
                           else [y, Literal(-c.val, c.aval)], eqn.outvars, {}, eqn.source_info)
    return None


def _negated(a: Any, f: Any) -> Any:
    """``y`` when ``a`` is ``neg y`` read only here, of exactly ``a``'s type (float)."""
    p = f.producer.get(a) if type(a) is Var else None
    if p is None or p.prim is not neg_p or f.uses.get(a) != 1:
        return None
    y = p.invars[0]
    if (y.aval.shape != a.aval.shape or y.aval.dtype != a.aval.dtype
            or y.aval.weak_type != a.aval.weak_type or a.aval.dtype.kind not in "fc"):
        return None
    return y


def _push_neg(eqn: Eqn, ins: list, f: Any) -> Any:
    """``x * -y`` -> ``-(x * y)`` (also ``/``), where the negation can meet another one (or a
    literal) and vanish: exact, as negation is; AD writes such chains a lot."""
    for k in (0, 1):
        y = _negated(ins[k], f)
        if y is not None:
            new_ins = list(ins)
            new_ins[k] = y
            out = eqn.outvars[0]
            t = Var(out.aval)
            f.uses[t] = 1
            return (Eqn(eqn.prim, new_ins, [t], eqn.params, eqn.source_info),
                    Eqn(neg_p, [t], [out], {}, eqn.source_info))
    return None


_rules.register_simplification(neg_p, _simplify_neg)
_rules.scalar_operators[neg_p] = "-"
_rules.weak_arithmetic_primitives.add(neg_p)
_rules.exact_scalar_primitives.add(neg_p)

# sin / cos / exp / log : the template for every differentiable unary op

sin_p = unop("sin", "sin")


@_binds(sin_p)
def sin(x: Any) -> Any:
    """Elementwise sine."""
    return bind1(sin_p, x)


defjvp(sin_p, lambda g, ans, x: mul(g, cos(x)),
       fast_vjp=(lambda xp, ct, ans, x: xp.multiply(ct, xp.cos(x)),))
_vectorized_batch(sin_p)

cos_p = unop("cos", "cos")


@_binds(cos_p)
def cos(x: Any) -> Any:
    """Elementwise cosine."""
    return bind1(cos_p, x)


defjvp(cos_p, lambda g, ans, x: neg(mul(g, sin(x))),
       fast_vjp=(lambda xp, ct, ans, x: xp.negative(xp.multiply(ct, xp.sin(x))),))
_vectorized_batch(cos_p)

exp_p = unop("exp", "exp")


@_binds(exp_p)
def exp(x: Any) -> Any:
    """Elementwise ``e**x``."""
    return bind1(exp_p, x)


defjvp(exp_p, lambda g, ans, x: mul(g, ans),
       fast_vjp=(lambda xp, ct, ans, x: xp.multiply(ct, ans),))
_vectorized_batch(exp_p)

log_p = unop("log", "log")


@_binds(log_p)
def log(x: Any) -> Any:
    """Elementwise natural logarithm."""
    return bind1(log_p, x)


defjvp(log_p, lambda g, ans, x: div(g, x),
       fast_vjp=(lambda xp, ct, ans, x: xp.true_divide(ct, x),))
_vectorized_batch(log_p)

# =============================================================================================
# More unary math (holomorphic rules: the same formulas hold for complex inputs)

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)

exp2_p = _unary("exp2", "exp2", lambda g, ans, x: mul(g, mul(ans, _LN2)))


@_binds(exp2_p)
def exp2(x: Any) -> Any:
    """Elementwise ``2**x``."""
    return bind1(exp2_p, x)


# exp(x), not ans + 1: that cancels catastrophically for negative x (float32: 18% off at
# x = -5, 0 below -17), where PyTorch's and the true derivative are exp(x).
expm1_p = _unary("expm1", "expm1", lambda g, ans, x: mul(g, exp(x)))


@_binds(expm1_p)
def expm1(x: Any) -> Any:
    """Elementwise ``exp(x) - 1``, accurate for small ``x``."""
    return bind1(expm1_p, x)


log1p_p = _unary("log1p", "log1p", lambda g, ans, x: div(g, add(x, 1)))


@_binds(log1p_p)
def log1p(x: Any) -> Any:
    """Elementwise ``log(1 + x)``, accurate for small ``x``."""
    return bind1(log1p_p, x)


# log2/log10 are primitives (not log(x)/log(2)) so exact powers give exact answers.
log2_p = _unary("log2", "log2", lambda g, ans, x: div(g, mul(x, _LN2)))


@_binds(log2_p)
def log2(x: Any) -> Any:
    """Elementwise base-2 logarithm."""
    return bind1(log2_p, x)


log10_p = _unary("log10", "log10", lambda g, ans, x: div(g, mul(x, _LN10)))


@_binds(log10_p)
def log10(x: Any) -> Any:
    """Elementwise base-10 logarithm."""
    return bind1(log10_p, x)


sqrt_p = _unary("sqrt", "sqrt", lambda g, ans, x: mul(g, div(0.5, ans)),
                fast_vjp=lambda xp, ct, ans, x: xp.multiply(ct, xp.true_divide(0.5, ans)))


@_binds(sqrt_p)
def sqrt(x: Any) -> Any:
    """Elementwise non-negative square root."""
    return bind1(sqrt_p, x)


rsqrt_p = _unary(
    "rsqrt",
    lambda xp, x: xp.reciprocal(xp.sqrt(x)),
    lambda g, ans, x: mul(g, mul(-0.5, div(ans, x))),
)


def rsqrt(x: Any) -> Any:
    """Elementwise ``1 / sqrt(x)``.

    Example:
        >>> float(rsqrt(4.0))
        0.5
    """
    return bind1(rsqrt_p, x)


# d cbrt = 1/(3 cbrt(x)**2): written with ans so x = 0 gives inf (the true slope), not nan.
cbrt_p = _unary(
    "cbrt", "cbrt", lambda g, ans, x: mul(g, div(1.0 / 3.0, square(ans)))
)


@_binds(cbrt_p)
def cbrt(x: Any) -> Any:
    """Elementwise real cube root."""
    return bind1(cbrt_p, x)


tan_p = _unary("tan", "tan", lambda g, ans, x: mul(g, add(1, square(ans))))


@_binds(tan_p)
def tan(x: Any) -> Any:
    """Elementwise tangent."""
    return bind1(tan_p, x)


asin_p = _unary(
    "asin", "arcsin", lambda g, ans, x: mul(g, rsqrt(sub(1, square(x))))
)


@_binds(asin_p)
def asin(x: Any) -> Any:
    """Elementwise inverse sine."""
    return bind1(asin_p, x)


acos_p = _unary(
    "acos", "arccos", lambda g, ans, x: neg(mul(g, rsqrt(sub(1, square(x)))))
)


@_binds(acos_p)
def acos(x: Any) -> Any:
    """Elementwise inverse cosine."""
    return bind1(acos_p, x)


atan_p = _unary("atan", "arctan", lambda g, ans, x: div(g, add(1, square(x))))


@_binds(atan_p)
def atan(x: Any) -> Any:
    """Elementwise inverse tangent."""
    return bind1(atan_p, x)


sinh_p = _unary("sinh", "sinh", lambda g, ans, x: mul(g, cosh(x)))


@_binds(sinh_p)
def sinh(x: Any) -> Any:
    """Elementwise hyperbolic sine."""
    return bind1(sinh_p, x)


cosh_p = _unary("cosh", "cosh", lambda g, ans, x: mul(g, sinh(x)))


@_binds(cosh_p)
def cosh(x: Any) -> Any:
    """Elementwise hyperbolic cosine."""
    return bind1(cosh_p, x)


tanh_p = _unary(
    "tanh", "tanh", lambda g, ans, x: mul(g, sub(1, square(ans))),
    fast_vjp=lambda xp, ct, ans, x: xp.multiply(ct, xp.subtract(1, xp.square(ans))),
)


@_binds(tanh_p)
def tanh(x: Any) -> Any:
    """Elementwise hyperbolic tangent."""
    return bind1(tanh_p, x)


asinh_p = _unary(
    "asinh", "arcsinh", lambda g, ans, x: mul(g, rsqrt(add(square(x), 1)))
)


@_binds(asinh_p)
def asinh(x: Any) -> Any:
    """Elementwise inverse hyperbolic sine."""
    return bind1(asinh_p, x)


# 1/(sqrt(x-1) sqrt(x+1)) rather than 1/sqrt(x**2-1): right on the principal complex branch.
acosh_p = _unary(
    "acosh",
    "arccosh",
    lambda g, ans, x: div(g, mul(sqrt(sub(x, 1)), sqrt(add(x, 1)))),
)


@_binds(acosh_p)
def acosh(x: Any) -> Any:
    """Elementwise inverse hyperbolic cosine."""
    return bind1(acosh_p, x)


atanh_p = _unary(
    "atanh", "arctanh", lambda g, ans, x: div(g, sub(1, square(x)))
)


@_binds(atanh_p)
def atanh(x: Any) -> Any:
    """Elementwise inverse hyperbolic tangent."""
    return bind1(atanh_p, x)


def _logistic_fn(xp: Any, x: Any) -> Any:
    dt = getattr(x, "dtype", None)
    if isinstance(x, builtins.complex) or (dt is not None and dt.kind == "c"):
        return 1 / (1 + xp.exp(-x))
    if dt is None:
        x = float(x)
    elif dt.kind in "biu":
        # -abs(x) would wrap around for unsigned integers.
        x = x.astype(numpy.float64)
    lo = _LOGISTIC_LO.get(x.dtype.char) if type(x) is numpy.ndarray else None
    if lo is not None and x.size and x.min() > lo:
        # No result is subnormal (so exp(-x) cannot overflow): 1 / (1 + exp(-x)) is as
        # accurate as the form below, in four in-place passes instead of eight.
        r = numpy.negative(x, out=numpy.empty_like(x))
        numpy.exp(r, out=r)
        r += 1
        return numpy.reciprocal(r, out=r)
    # exp(-|x|) never overflows, so both branches stay finite for any |x|; exact down to the
    # subnormal results of very negative x.
    e = xp.exp(-xp.abs(x))
    r = 1 / (1 + e)
    return xp.where(x >= 0, r, e * r)


#: per float dtype, log of the smallest normal number: below it logistic(x) ~ exp(x) is
#: subnormal, which only the exp(-|x|) form gives (1 / (1 + exp(-x)) flushes it to 0).
_LOGISTIC_LO = {c: float(numpy.log(numpy.finfo(c).tiny)) for c in "efdg"}


logistic_p = _unary(
    "logistic", _logistic_fn, lambda g, ans, x: mul(g, mul(ans, sub(1, ans))),
    fast_vjp=lambda xp, ct, ans, x: xp.multiply(ct, xp.multiply(ans, xp.subtract(1, ans))),
)


def logistic(x: Any) -> Any:
    """Elementwise sigmoid ``1 / (1 + exp(-x))``, stable for large ``|x|``.

    Example:
        >>> float(logistic(0.0)), float(logistic(-1000.0))
        (0.5, 0.0)
    """
    return bind1(logistic_p, x)


square_p = _unary("square", "square", lambda g, ans, x: mul(g, mul(2, x)),
                  fast_vjp=lambda xp, ct, ans, x: xp.multiply(ct, xp.multiply(2, x)))


@_binds(square_p)
def square(x: Any) -> Any:
    """Elementwise ``x * x``."""
    return bind1(square_p, x)


reciprocal_p = _unary(
    "reciprocal", "reciprocal", lambda g, ans, x: neg(mul(g, square(ans)))
)


@_binds(reciprocal_p)
def reciprocal(x: Any) -> Any:
    """Elementwise ``1 / x`` (integer reciprocal for integers, as NumPy)."""
    return bind1(reciprocal_p, x)


abs_p = _unary("abs", "abs", lambda g, ans, x: mul(g, sign(x)))
_abs_abstract_base = abs_p.abstract_eval


def _abs_abstract(a: ShapedArray) -> list[ShapedArray]:
    if a.dtype.kind == "c":
        # Complex moduli go through hypot(real, imag) (see abs below): every elementwise JVP
        # function must be its own transpose (the eager tape relies on it), and the
        # real-valued modulus of a complex number is not.
        raise DTypeError(
            f"abs primitive: complex input {a.str_short()}; use funcgrad.ops.elementwise.abs, "
            "which computes the modulus as hypot(real(z), imag(z))"
        )
    return _abs_abstract_base(a)  # type: ignore[misc]


abs_p.def_abstract_eval(_abs_abstract)
_rules.weak_arithmetic_primitives.add(abs_p)  # Python's abs(): weak stays weak


def abs(x: Any) -> Any:  # noqa: A001
    """Elementwise absolute value; the real-valued modulus ``hypot(re, im)`` for complex ``x``.

    The derivative at 0 is 0 (the subgradient ``sign(0)``), for complex ``x`` too.

    Example:
        >>> abs(numpy.array([-2.0, 3.0])), abs(3 + 4j)
        (array([2., 3.]), array(5.))
    """
    if _is_complex(x):
        return hypot(real(x), imag(x))
    return bind1(abs_p, x)


# -- integer_pow: x**y for a static Python int y -------------------------------------------


def _integer_pow_fn(xp: Any, x: Any, y: int) -> Any:
    if y < 0 and getattr(getattr(x, "dtype", None), "kind", "f") in "biu":
        # NumPy raises this itself; CuPy would return garbage.
        raise ValueError("Integers to negative integer powers are not allowed.")
    return xp.power(*wide_ints_as_floats((x, y)))  # (x ** 2**70: CuPy refuses the int)


integer_pow_p = unop("integer_pow", _integer_pow_fn)
_integer_pow_abstract_base = integer_pow_p.abstract_eval
_rules.weak_arithmetic_primitives.add(integer_pow_p)


def _integer_pow_abstract(a: ShapedArray, y: int) -> list[ShapedArray]:
    check_static("integer_pow", y=y)
    if type(y) is not int:
        raise TypeError(f"integer_pow: exponent y must be a Python int, got {type(y).__name__}")
    if y < 0 and a.dtype.kind in "biu":
        # ValueError, as NumPy raises for integer arrays to negative integer powers.
        raise ValueError(
            f"integer_pow: integers ({a.str_short()}) to the negative power {y} are not allowed"
        )
    return _integer_pow_abstract_base(a, y=y)  # type: ignore[misc]


integer_pow_p.def_abstract_eval(_integer_pow_abstract)


def integer_pow(x: Any, y: int) -> Any:
    """Elementwise ``x**y`` for a static Python integer ``y``.

    Example:
        >>> float(integer_pow(3.0, 2))
        9.0
    """
    return bind1(integer_pow_p, x, y=operator_index(y))


def _integer_pow_jvp(g, ans, x, y):
    if y == 0:
        return mul(g, 0)
    if y == 1:
        return g
    return mul(g, mul(y, x) if y == 2 else mul(y, integer_pow(x, y - 1)))




def _integer_pow_fast_vjp(xp, ct, ans, x, y):
    if y == 0:
        return xp.multiply(ct, 0)
    if y == 1:
        return ct
    if y == 2:
        return xp.multiply(ct, xp.multiply(2, x))
    return xp.multiply(ct, xp.multiply(y, xp.power(x, y - 1)))


defjvp(integer_pow_p, _integer_pow_jvp, fast_vjp=(_integer_pow_fast_vjp,))
_vectorized_batch(integer_pow_p)


def _emit_integer_pow(ctx: Any, eqn: Eqn, args: list[str]) -> Emission | None:
    # NumPy's own `x ** 2` is `square` (three times faster than `power(x, 2)`; both give
    # the correctly rounded x*x). Other exponents: the impl's `power`.
    # (Not for bools: NumPy's square of a bool is int8, its power int64, the result's dtype.)
    if (eqn.params.get("y") == 2 and set(eqn.params) == {"y"}
            and eqn.invars[0].aval.dtype.kind != "b"):
        return Emission(f"xp.square({args[0]})", fresh=True, out="elementwise")
    return None


_rules.emitters[integer_pow_p] = _emit_integer_pow

# =============================================================================================
# Piecewise-constant unary primitives: zero derivatives everywhere

sign_p = _unary("sign", "sign", zero=True)


@_binds(sign_p)
def sign(x: Any) -> Any:
    """Elementwise sign (-1, 0, 1; ``z/|z|`` for complex; nan for nan)."""
    return bind1(sign_p, x)


floor_p = _unary("floor", "floor", zero=True)


@_binds(floor_p)
def floor(x: Any) -> Any:
    """Elementwise floor."""
    return bind1(floor_p, x)


ceil_p = _unary("ceil", "ceil", zero=True)


@_binds(ceil_p)
def ceil(x: Any) -> Any:
    """Elementwise ceiling."""
    return bind1(ceil_p, x)


trunc_p = _unary("trunc", "trunc", zero=True)


@_binds(trunc_p)
def trunc(x: Any) -> Any:
    """Elementwise rounding towards zero."""
    return bind1(trunc_p, x)


round_p = _unary("round", "round", zero=True)
_round_abstract_base = round_p.abstract_eval


def _round_abstract(a: ShapedArray, decimals: int) -> list[ShapedArray]:
    check_static("round", decimals=decimals)
    if type(decimals) is not int:
        raise TypeError(f"round: decimals must be a Python int, got {type(decimals).__name__}")
    return _round_abstract_base(a, decimals=decimals)  # type: ignore[misc]


round_p.def_abstract_eval(_round_abstract)


def round(x: Any, decimals: int = 0) -> Any:  # noqa: A001
    """Round half to even to ``decimals`` decimals (NumPy ``round``; negative decimals allowed).

    Example:
        >>> float(round(2.5)), float(round(1.25, 1))
        (2.0, 1.2)
    """
    return bind1(round_p, x, decimals=int(decimals))


is_finite_p = _unary("is_finite", "isfinite", zero=True)


@_binds(is_finite_p)
def is_finite(x: Any) -> Any:
    """Elementwise: neither infinite nor nan (bool)."""
    return bind1(is_finite_p, x)


signbit_p = _unary("signbit", "signbit", zero=True)


@_binds(signbit_p)
def signbit(x: Any) -> Any:
    """Elementwise: the sign bit is set (True for -0.0 and negative values)."""
    return bind1(signbit_p, x)


not_p = _unary("not", "invert", zero=True)


@_binds(not_p)
def not_(x: Any) -> Any:
    """Bitwise NOT of integers; logical NOT of booleans."""
    return bind1(not_p, x)


def logical_not(x: Any) -> Any:
    """Elementwise logical NOT of any dtype (nonzero is True); bool result."""
    if get_aval(x).dtype.kind == "b":
        return not_(x)
    return eq(x, 0)


def is_nan(x: Any) -> Any:
    """Elementwise nan test (``x != x``); bool result."""
    return ne(x, x)


# =============================================================================================
# Complex parts and copies (linear)


real_p = unop("real", lambda xp, x: xp.real(xp.asarray(x)))


def real(x: Any) -> Any:
    """The real part of ``x`` (``x`` itself when it is not complex)."""
    if not _is_complex(x):
        return x
    return bind1(real_p, x)


def _real_transpose(ct, x):
    if x.aval.dtype.kind == "c":
        return [complex(ct, 0.0)]
    return [ct]


deflinear(real_p)
deftranspose(real_p, _real_transpose)
_vectorized_batch(real_p)

imag_p = unop("imag", lambda xp, x: xp.imag(xp.asarray(x)))


@_binds(imag_p)
def imag(x: Any) -> Any:
    """The imaginary part of ``x`` (zeros for real ``x``)."""
    return bind1(imag_p, x)


def _imag_transpose(ct, x):
    if x.aval.dtype.kind == "c":
        return [complex(0.0, neg(ct))]
    return [None]  # imag of a real value is constant: no cotangent flows back


deflinear(imag_p)
deftranspose(imag_p, _imag_transpose)
_vectorized_batch(imag_p)

conj_p = unop("conj", "conjugate")


def conj(x: Any) -> Any:
    """Complex conjugate (``x`` itself when it is not complex)."""
    if not _is_complex(x):
        return x
    return bind1(conj_p, x)


deflinear(conj_p)
deftranspose(conj_p, lambda ct, x: [conj(ct) if x.aval.dtype.kind == "c" else ct])
_vectorized_batch(conj_p)


def _complex_dtype(re: ShapedArray, im: ShapedArray) -> numpy.dtype:
    for a in (re, im):
        if a.dtype.kind not in "biuf":
            raise DTypeError(
                f"complex: real and imaginary parts must be real numbers, got "
                f"{re.str_short()} and {im.str_short()}"
            )
    dt, _ = result_dtype(re, im)
    return numpy.result_type(dt, numpy.complex64)


def _complex_impl(re: Any, im: Any) -> list[Any]:
    xp = xp_for(re, im, what="complex")
    ra, ia = get_aval(re), get_aval(im)
    shape = broadcast_shapes_or_error("complex", ra.shape, ia.shape)
    # Set the parts, not re + 1j*im: 1j*inf is nan+infj, which would corrupt the real part.
    out = xp.zeros(shape, dtype=_complex_dtype(ra, ia))
    out.real = re
    out.imag = im
    return [out]


def _complex_abstract(re: ShapedArray, im: ShapedArray) -> list[ShapedArray]:
    shape = broadcast_shapes_or_error("complex", re.shape, im.shape)
    return [ShapedArray(shape, _complex_dtype(re, im), re.weak_type and im.weak_type,
                        result_device("complex", re, im))]


complex_p = make_primitive("complex", _complex_impl, _complex_abstract)


def complex(re: Any, im: Any) -> Any:  # noqa: A001
    """``re + 1j * im`` from real parts (broadcasting), without inf*1j turning into nan.

    Example:
        >>> complex(1.0, 2.0)
        array(1.+2.j)
    """
    return bind1(complex_p, re, im)


def _complex_transpose(ct, re, im):
    return [
        unbroadcast_ct(real(ct), re) if is_undefined(re) else None,
        unbroadcast_ct(neg(imag(ct)), im) if is_undefined(im) else None,
    ]


deflinear(complex_p)
deftranspose(complex_p, _complex_transpose)
_broadcasting_batch(complex_p)

copy_p = unop("copy", lambda xp, x: xp.array(x, copy=True))


@_binds(copy_p)
def copy(x: Any) -> Any:
    """A fresh array equal to ``x``."""
    return bind1(copy_p, x)


deflinear(copy_p)
deftranspose(copy_p, lambda ct, x: [ct])
_vectorized_batch(copy_p)
_rules.emitters[copy_p] = lambda ctx, eqn, args: Emission(f"xp.array({args[0]}, copy=True)")


# -- device_put: a traced value moved to another device (JAX's device_put primitive) -------

def _device_put_impl(x: Any, *, device: str) -> list[Any]:
    return [_backend.device_put(x, device)]


def _device_put_abstract(a: ShapedArray, *, device: str) -> list[ShapedArray]:
    return [a.update(device=device)]


device_put_p = make_primitive("device_put", _device_put_impl, _device_put_abstract)


def device_put(x: Any, device: str) -> Any:
    """``x`` on ``device`` (a canonical device name), traced values included: under ``jit``
    or ``vmap`` the move is an operation of the program, as JAX's ``device_put`` primitive
    (``funcgrad.device_put`` is the public, pytree-taking front end).

    Example:
        >>> type(device_put(numpy.ones(2), "strict")).__name__
        'StrictArray'
    """
    return bind1(device_put_p, x, device=device)


def _device_put_transpose(ct: Any, x: Any, *, device: str) -> list[Any]:
    # The cotangent goes back where the operand lived (JAX's transpose of device_put).
    src = x.aval.device or get_default_device()
    return [ct if src == device else device_put(ct, src)]


deflinear(device_put_p)
deftranspose(device_put_p, _device_put_transpose)
_vectorized_batch(device_put_p)
# host values traced beside device arrays move with it (core.place_uncommitted)
device_put_rule.append(device_put)

# =============================================================================================
# Binary arithmetic beyond add/sub/mul/div

floor_divide_p = _binary("floor_divide", "floor_divide", zero=True)
_rules.weak_arithmetic_primitives.add(floor_divide_p)


@_binds(floor_divide_p)
def floor_divide(x: Any, y: Any) -> Any:
    """Elementwise ``x // y`` (NumPy ``floor_divide``)."""
    return bind1(floor_divide_p, x, y)


# NumPy remainder: the sign of the divisor; x - floor(x / y) * y, so d/dy = -floor(x / y).
rem_p = _binary(
    "rem",
    "remainder",
    lambda g, ans, x, y: g,
    lambda g, ans, x, y: neg(mul(g, floor_divide(x, y))),
)
_rules.weak_arithmetic_primitives.add(rem_p)


@_binds(rem_p)
def rem(x: Any, y: Any) -> Any:
    """Elementwise ``x % y`` with the sign of ``y`` (NumPy ``remainder``)."""
    return bind1(rem_p, x, y)


fmod_p = _binary(
    "fmod",
    "fmod",
    lambda g, ans, x, y: g,
    lambda g, ans, x, y: neg(mul(g, trunc(div(x, y)))),
)


@_binds(fmod_p)
def fmod(x: Any, y: Any) -> Any:
    """Elementwise C ``fmod``: remainder with the sign of ``x``."""
    return bind1(fmod_p, x, y)


_PY_NUMBERS = (int, float, builtins.complex)


def _pow_jvp_x(g, ans, x, y):
    if type(y) in _PY_NUMBERS:
        # A Python exponent: its arithmetic stays in Python, so nothing is promoted past x's
        # dtype (an op on Python scalars alone gives a strong float64).
        if y == 0:
            return mul(g, 0.0)
        return mul(g, mul(y, pow(x, y - 1)))
    # y * x**(y-1), but 0 at x = y = 0 (0 * 0**-1 would be nan). Only that point is
    # guarded: selecting on y == 0 alone would lose the mixed derivative d2/dxdy = 1/x there.
    at_origin = and_(eq(x, 0), eq(y, 0))
    safe_x = select_n(at_origin, x, 1)  # no 0**-1 computed, so no inf and no warning
    jac = select_n(at_origin, mul(y, pow(safe_x, sub(y, 1))), 0)
    return mul(g, jac)


def _pow_jvp_y(g, ans, x, y):
    # log(x) * x**y, with log(0) replaced so 0**y (y > 0) has slope 0 in y instead of nan.
    if type(x) in _PY_NUMBERS:
        if x == 0:
            return mul(g, 0.0)
        if type(x) is builtins.complex:
            lx: Any = cmath.log(x)
        else:
            lx = math.log(x) if x > 0 else math.nan  # NumPy's real log of x < 0 is nan
        return mul(g, mul(ans, lx))
    return mul(g, mul(log(select_n(eq(x, 0), x, 1)), ans))


pow_p = _binary("pow", "power", _pow_jvp_x, _pow_jvp_y)
_rules.weak_arithmetic_primitives.add(pow_p)


def pow(x: Any, y: Any) -> Any:  # noqa: A001
    """Elementwise ``x**y`` (NumPy ``power``); see :func:`integer_pow` for static ints."""
    return bind1(pow_p, x, y)


def _balanced_eq(x: Any, ans: Any, y: Any) -> Any:
    """1 where x won alone, 1/2 where x and y tie, 0 where y won: JAX's split at ties."""
    dt = get_aval(ans).dtype
    hit = convert_element_type(eq(x, ans), dt)
    both = add(convert_element_type(eq(y, ans), dt), 1)
    return div(hit, both)


max_p = _binary(
    "max",
    "maximum",
    lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
    lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)),
)


def max(x: Any, y: Any) -> Any:  # noqa: A001
    """Elementwise maximum, nan-propagating (NumPy ``maximum``); ties split the gradient."""
    return bind1(max_p, x, y)


# max/min are exact on scalars, but not commutative (which zero or NaN they return depends
# on the order).
_rules.exact_scalar_primitives.add(max_p)


min_p = _binary(
    "min",
    "minimum",
    lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
    lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)),
)


def min(x: Any, y: Any) -> Any:  # noqa: A001
    """Elementwise minimum, nan-propagating (NumPy ``minimum``); ties split the gradient."""
    return bind1(min_p, x, y)


_rules.exact_scalar_primitives.add(min_p)


def _sq(v: Any) -> Any:
    # Python scalars are squared in Python, keeping them weak (a square primitive on a Python
    # scalar gives a strong float64 that would promote float32 operands).
    return v * v if type(v) in _PY_NUMBERS else square(v)


atan2_p = _binary(
    "atan2",
    "arctan2",
    lambda g, ans, x, y: mul(g, div(y, add(_sq(x), _sq(y)))),
    lambda g, ans, x, y: neg(mul(g, div(x, add(_sq(x), _sq(y))))),
)


@_binds(atan2_p)
def atan2(x: Any, y: Any) -> Any:
    """Elementwise ``arctan(x / y)`` in the right quadrant (NumPy ``arctan2(x, y)``)."""
    return bind1(atan2_p, x, y)


hypot_p = _binary(
    "hypot",
    "hypot",
    lambda g, ans, x, y: mul(g, div(x, _safe_denominator(ans))),
    lambda g, ans, x, y: mul(g, div(y, _safe_denominator(ans))),
)


@_binds(hypot_p)
def hypot(x: Any, y: Any) -> Any:
    """Elementwise ``sqrt(x**2 + y**2)`` without intermediate overflow."""
    return bind1(hypot_p, x, y)


def _posinf_to_zero(v: Any) -> Any:
    """``v`` with +inf replaced by 0: logaddexp's derivative ``exp(x - ans)`` at ``x = ans =
    +inf`` is 1 (JAX's convention: ``inf - inf`` would make it NaN)."""
    return select_n(eq(v, numpy.inf), v, 0)


logaddexp_p = _binary(
    "logaddexp",
    "logaddexp",
    lambda g, ans, x, y: mul(g, exp(sub(_posinf_to_zero(x), _posinf_to_zero(ans)))),
    lambda g, ans, x, y: mul(g, exp(sub(_posinf_to_zero(y), _posinf_to_zero(ans)))),
)


@_binds(logaddexp_p)
def logaddexp(x: Any, y: Any) -> Any:
    """Elementwise ``log(exp(x) + exp(y))``, computed stably."""
    return bind1(logaddexp_p, x, y)


logaddexp2_p = _binary(
    "logaddexp2",
    "logaddexp2",
    lambda g, ans, x, y: mul(g, exp2(sub(_posinf_to_zero(x), _posinf_to_zero(ans)))),
    lambda g, ans, x, y: mul(g, exp2(sub(_posinf_to_zero(y), _posinf_to_zero(ans)))),
)


@_binds(logaddexp2_p)
def logaddexp2(x: Any, y: Any) -> Any:
    """Elementwise ``log2(2**x + 2**y)``, computed stably."""
    return bind1(logaddexp2_p, x, y)


copysign_p = _binary(
    "copysign",
    "copysign",
    # JAX's rule (jnp.copysign is where(signbit(y), -abs(x), abs(x)), and abs' is +1 where
    # x >= 0, else -1): the sign of y times +1 at x = +-0, -1 at a NaN x. ans carries y's sign
    # bit exactly (NaN's too) and lives where the operands do: a Python scalar y's own
    # signbit would be a host array that device tangents cannot meet.
    lambda g, ans, x, y: select_n(eq(signbit(ans), ge(x, 0)), g, neg(g)),
    None,
)


@_binds(copysign_p)
def copysign(x: Any, y: Any) -> Any:
    """``|x|`` with the sign of ``y``, elementwise."""
    return bind1(copysign_p, x, y)


# =============================================================================================
# Comparisons, logical/bitwise ops, shifts: bool or integer results, zero derivatives

eq_p = _binary("eq", "equal", zero=True)
ne_p = _binary("ne", "not_equal", zero=True)
lt_p = _binary("lt", "less", zero=True)
le_p = _binary("le", "less_equal", zero=True)
gt_p = _binary("gt", "greater", zero=True)
ge_p = _binary("ge", "greater_equal", zero=True)
_rules.commutative_primitives.update((eq_p, ne_p))


def _has_complex(x: Any) -> bool:
    return type(x) is complex or getattr(getattr(x, "dtype", None), "kind", "") == "c"


def _complex_order(xp: Any, name: str, x: Any, y: Any) -> Any:
    """NumPy's order of complex numbers (``name``: ``less``, ``less_equal``, ``greater`` or
    ``greater_equal``): by the real parts (strictly), where a NaN imaginary part makes that
    false (``-1 < 0 + nanj`` is False), else, for equal real parts, by the imaginary parts."""
    xr, xi, yr, yi = xp.real(x), xp.imag(x), xp.real(y), xp.imag(y)
    real_op = {"less_equal": "less", "greater_equal": "greater"}.get(name, name)
    by_real = getattr(xp, real_op)(xr, yr) & ~xp.isnan(xi) & ~xp.isnan(yi)
    return by_real | (xp.equal(xr, yr) & getattr(xp, name)(xi, yi))


def _order_complex_as_numpy(p: Primitive, name: str) -> None:
    """CuPy orders complex numbers by their parts without NumPy's NaN rule (``-1 < 0 + nanj``
    is True there): complex operands off the host are compared by :func:`_complex_order`,
    in the impl and in compiled code (everything else stays ``xp.<name>``)."""
    base = p.impl

    def impl(x: Any, y: Any) -> list[Any]:
        if _has_complex(x) or _has_complex(y):
            xp = xp_for(x, y, what=p.name)
            if xp is not numpy:
                x, y = (scalar_array(xp, v) if type(v) in _PY_SCALAR_TYPES else v
                        for v in wide_ints_as_floats((x, y)))
                return [_complex_order(xp, name, x, y)]
        return base(x, y)

    p.impl = impl

    def emit(ctx: Any, eqn: Eqn, args: list[str]) -> Emission | None:
        if any(a.aval.dtype.kind == "c" or type(a) is Literal and _wide_int(a.val)
               for a in eqn.invars):
            return None  # the impl's (the device's order may not be NumPy's; wide ints)
        return Emission(f"xp.{name}({args[0]}, {args[1]})", fresh=True)

    _rules.emitters[p] = emit


for _p, _name in ((lt_p, "less"), (le_p, "less_equal"), (gt_p, "greater"),
                  (ge_p, "greater_equal")):
    _order_complex_as_numpy(_p, _name)


@_binds(eq_p)
def eq(x: Any, y: Any) -> Any:
    """Elementwise ``x == y`` (bool)."""
    return bind1(eq_p, x, y)


@_binds(ne_p)
def ne(x: Any, y: Any) -> Any:
    """Elementwise ``x != y`` (bool)."""
    return bind1(ne_p, x, y)


@_binds(lt_p)
def lt(x: Any, y: Any) -> Any:
    """Elementwise ``x < y`` (bool)."""
    return bind1(lt_p, x, y)


@_binds(le_p)
def le(x: Any, y: Any) -> Any:
    """Elementwise ``x <= y`` (bool)."""
    return bind1(le_p, x, y)


@_binds(gt_p)
def gt(x: Any, y: Any) -> Any:
    """Elementwise ``x > y`` (bool)."""
    return bind1(gt_p, x, y)


@_binds(ge_p)
def ge(x: Any, y: Any) -> Any:
    """Elementwise ``x >= y`` (bool)."""
    return bind1(ge_p, x, y)


and_p = _binary("and", "bitwise_and", zero=True)
or_p = _binary("or", "bitwise_or", zero=True)
xor_p = _binary("xor", "bitwise_xor", zero=True)
_rules.commutative_primitives.update((and_p, or_p, xor_p))


@_binds(and_p)
def and_(x: Any, y: Any) -> Any:
    """Bitwise AND of integers; logical AND of booleans."""
    return bind1(and_p, x, y)


@_binds(or_p)
def or_(x: Any, y: Any) -> Any:
    """Bitwise OR of integers; logical OR of booleans."""
    return bind1(or_p, x, y)


@_binds(xor_p)
def xor(x: Any, y: Any) -> Any:
    """Bitwise XOR of integers; logical XOR of booleans."""
    return bind1(xor_p, x, y)


shift_left_p = _binary("shift_left", "left_shift", zero=True)
shift_right_p = _binary("shift_right", "right_shift", zero=True)


@_binds(shift_left_p)
def shift_left(x: Any, y: Any) -> Any:
    """Elementwise ``x << y`` of integers."""
    return bind1(shift_left_p, x, y)


@_binds(shift_right_p)
def shift_right(x: Any, y: Any) -> Any:
    """Elementwise ``x >> y`` of integers (arithmetic for signed types, as NumPy)."""
    return bind1(shift_right_p, x, y)


# =============================================================================================
# select_n(which, *cases): which (bool, or int for any number of cases) picks a case


def _select_n_abstract(which: ShapedArray, *cases: ShapedArray) -> list[ShapedArray]:
    if not cases:
        raise TypeError("select_n: needs at least one case")
    kind = which.dtype.kind
    if kind == "b":
        if len(cases) > 2:
            raise DTypeError(
                f"select_n: a bool predicate picks between at most 2 cases, got {len(cases)}; "
                "use an integer predicate"
            )
    elif kind not in "iu":
        raise DTypeError(
            f"select_n: the predicate must be bool or integer, got {which.str_short()}"
        )
    shape = broadcast_shapes_or_error(
        "select_n", which.shape, *(c.shape for c in cases)
    )
    for c in cases:
        if c.dtype == float0:
            raise DTypeError("select_n: float0 (the tangent type of integers) is not a number")
    dt, weak = result_dtype(*cases)
    return [ShapedArray(shape, dt, weak, result_device("select_n", which, *cases))]


def _select_n_impl(which: Any, *cases: Any) -> list[Any]:
    xp = xp_for(which, *cases, what="select_n")
    n = len(cases)
    kind = get_aval(which).dtype.kind
    if kind not in "biu" or (kind == "b" and n > 2) or n == 0:
        # NumPy would accept these silently (a float predicate, a bool picking among 3):
        # the shape/dtype rule raises the error that tracing would.
        _select_n_abstract(*(get_aval(v) for v in (which, *cases)))
    if n == 1:
        # Still broadcast against `which`, as the shape rule says.
        return [xp.where(xp.equal(which, which), cases[0], cases[0])]
    if n == 2:
        # CuPy's where wants an array predicate (a Python bool comes from a loop's tape).
        pred = as_array(xp, which) if kind == "b" else xp.not_equal(which, 0)
        return [xp.where(pred, cases[1], cases[0])]
    out = cases[-1]
    for i in range(n - 2, -1, -1):
        out = xp.where(xp.equal(which, i), cases[i], out)
    dt, _ = result_dtype(*(get_aval(c) for c in cases))
    if out.dtype != dt:
        out = out.astype(dt)
    return [out]


select_n_p = make_primitive("select_n", _select_n_impl, _select_n_abstract)
literal_promoting_primitives[select_n_p] = 1  # the cases meet in one dtype, not `which`


def select_n(which: Any, *cases: Any) -> Any:
    """``cases[which]`` elementwise, broadcasting like ``numpy.where``.

    A bool ``which`` picks ``cases[1]`` where True and ``cases[0]`` where False (so
    ``select_n(c, y, x)`` is ``numpy.where(c, x, y)``); an integer ``which`` indexes the cases
    (values past the last case pick the last). Differentiable in the cases, not in ``which``.

    Example:
        >>> select_n(numpy.array([True, False]), 0.0, 1.0)
        array([1., 0.])
    """
    return bind1(select_n_p, which, *cases)


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    ans = select_n(which, *cases)
    tcases = tangents[1:]
    if get_aval(ans).dtype.kind not in "fc" or all(type(t) is Zero for t in tcases):
        return [ans], [Zero.from_primal(ans)]
    # A weak 0.0 takes the dtype of the other tangents, so no zero arrays are built.
    ts = [0.0 if type(t) is Zero else t for t in tcases]
    return [ans], [fit_tangent(select_n(which, *ts), ans)]


def _select_n_transpose(ct, which, *cases):
    if is_undefined(which):
        raise ValueError("select_n: transpose with respect to the predicate (not linear)")
    out: list[Any] = [None]
    for i, c in enumerate(cases):
        if not is_undefined(c):
            out.append(None)
            continue
        parts = [ct if j == i else 0.0 for j in range(len(cases))]
        out.append(unbroadcast_ct(select_n(which, *parts), c))
    return out


jvp_rules[select_n_p] = _select_n_jvp
declare_linear(select_n_p)
deftranspose(select_n_p, _select_n_transpose)
_broadcasting_batch(select_n_p)


def _emit_select_n(ctx: Any, eqn: Eqn, args: list[str]) -> Emission | None:
    if eqn.params:
        return None
    which, *cases = args
    if len(cases) == 1:
        return Emission(f"xp.where(xp.equal({which}, {which}), {cases[0]}, {cases[0]})",
                        fresh=True)
    if len(cases) == 2:
        pred = which if eqn.invars[0].aval.dtype.kind == "b" else f"xp.not_equal({which}, 0)"
        if pred is which and not eqn.invars[0].aval.shape:
            # A 0-d predicate may be a Python bool (a loop's weak carry); CuPy's where
            # wants an array.
            pred = f"xp.asarray({which})"
        return Emission(f"xp.where({pred}, {cases[1]}, {cases[0]})", fresh=True)
    return None


def _simplify_select(eqn: Eqn, ins: list, f: Any) -> Any:
    cases = ins[1:]
    first = cases[0]
    if type(first) is Var and all(c is first for c in cases) and same_type(first, eqn.outvars[0]):
        return [first]
    return None


_rules.emitters[select_n_p] = _emit_select_n
_rules.register_simplification(select_n_p, _simplify_select)
_rules.broadcasting_primitives.add(select_n_p)

# =============================================================================================
# clamp(lo, x, hi): numpy.clip semantics, minimum(maximum(x, lo), hi)


def _clamp_fn(xp: Any, lo: Any, x: Any, hi: Any) -> Any:
    # clip, not minimum(maximum(...)): its dtype is the three-way promotion (int8, 0.5,
    # float16 -> float16).
    kind = getattr(x, "dtype", None)
    if kind is not None and x.dtype.kind in "iu" and (type(lo) is int or type(hi) is int):
        # NumPy's clip takes a Python-int bound outside an integer dtype's range on the side
        # where it clips nothing (uint8 clipped at -1 from below, at 300 from above); CuPy's
        # casts every bound to the dtype first and raises OverflowError: such a bound is the
        # dtype's own limit. (One that would clip everything to an unrepresentable value
        # raises on both, as NumPy does.)
        info = numpy.iinfo(x.dtype)
        if type(lo) is int and lo < info.min:
            lo = int(info.min)
        if type(hi) is int and hi > info.max:
            hi = int(info.max)
    return xp.clip(x, lo, hi)


clamp_p = naryop("clamp", _clamp_fn)


def clamp(lo: Any, x: Any, hi: Any) -> Any:
    """``x`` clipped to ``[lo, hi]`` (``minimum(maximum(x, lo), hi)``, as ``numpy.clip``).

    Example:
        >>> clamp(0.0, numpy.array([-1.0, 0.5, 2.0]), 1.0)
        array([0. , 0.5, 1. ])
    """
    return bind1(clamp_p, lo, x, hi)


# Ties give 0 to every operand (like JAX); the upper bound wins where it is below max(x, lo),
# which keeps the rule right when lo > hi too.
defjvp(
    clamp_p,
    lambda g, ans, lo, x, hi: fit_tangent(
        select_n(and_(gt(lo, x), lt(lo, hi)), 0.0, g), ans),
    lambda g, ans, lo, x, hi: fit_tangent(
        select_n(and_(gt(x, lo), lt(x, hi)), 0.0, g), ans),
    lambda g, ans, lo, x, hi: fit_tangent(
        select_n(lt(hi, max(x, lo)), 0.0, g), ans),
)
_broadcasting_batch(clamp_p)
# It drops some of its operands' values (see linearize.backward_pass_primitives).
backward_pass_primitives.update({select_n_p, clamp_p})


def _emit_clamp(ctx: Any, eqn: Eqn, args: list[str]) -> Emission:
    # clip's operand order, not the primitive's; a Python-int bound that clips nothing of an
    # integer operand is its dtype's limit, as in _clamp_fn (CuPy's clip refuses it)
    dtype = eqn.invars[1].aval.dtype
    if dtype.kind in "iu":
        info = numpy.iinfo(dtype)
        lo, hi = eqn.invars[0], eqn.invars[2]
        if isinstance(lo, Literal) and type(lo.val) is int and lo.val < info.min:
            args = [repr(int(info.min)), *args[1:]]
        if isinstance(hi, Literal) and type(hi.val) is int and hi.val > info.max:
            args = [*args[:2], repr(int(info.max))]
    return Emission(f"xp.clip({array_operand(eqn, 1, args[1])}, {args[0]}, {args[2]})")


_rules.emitters[clamp_p] = _emit_clamp

# =============================================================================================
# convert_element_type


def _wrapping_conversion(old: numpy.dtype, new: numpy.dtype) -> bool:
    """A float to an unsigned or narrow signed integer: NumPy wraps out-of-range values."""
    return old.kind == "f" and (new.kind == "u" or new.kind == "i" and new.itemsize < 4)


def _convert_impl(x: Any, new_dtype: numpy.dtype) -> list[Any]:
    xp = xp_for(x)
    if new_dtype.kind in "fc" and _wide_int(x):
        x = float(x)  # (2**64 as float32: no int64 holds it, NumPy would make an object)
    x = xp.asarray(x)
    if x.dtype.kind == "c" and new_dtype.kind != "c":
        if new_dtype.kind == "b":
            return [xp.not_equal(x, 0)]  # truth of a complex number looks at both parts
        x = xp.real(x)
    if xp is not numpy and _wrapping_conversion(x.dtype, new_dtype):
        # NumPy (on x86) converts a float to a narrow or unsigned integer through a wider
        # signed one, wrapping around: -3.0 -> uint8 is 253, 300.0 -> int8 44; CUDA's
        # conversions saturate (0 and 127). Through int64 every device gives NumPy's values
        # (uint64: NumPy's -3.0 is 2**64 - 3; values from 2**63 up convert directly).
        wrapped = x.astype(xp.int64).astype(new_dtype)
        if new_dtype.kind == "u" and new_dtype.itemsize == 8:
            return [xp.where(x < 0, wrapped, x.astype(new_dtype))]
        return [wrapped]
    return [x.astype(new_dtype)]


def _convert_abstract(a: ShapedArray, new_dtype: numpy.dtype) -> list[ShapedArray]:
    check_static("convert_element_type", new_dtype=new_dtype)
    canonical_dtype(new_dtype, "convert_element_type")
    return [ShapedArray(a.shape, new_dtype, False, a.device)]


convert_element_type_p = make_primitive(
    "convert_element_type", _convert_impl, _convert_abstract
)
_rules.roles["convert_element_type"] = convert_element_type_p


def convert_element_type(x: Any, new_dtype: Any) -> Any:
    """Cast ``x`` to ``new_dtype`` (complex to real keeps the real part; to bool, ``x != 0``)."""
    new_dtype = numpy.dtype(new_dtype)
    a = get_aval(x)
    if a.dtype == new_dtype and not a.weak_type:
        return x
    return bind1(convert_element_type_p, x, new_dtype=new_dtype)


def _convert_jvp(primals, tangents, new_dtype):
    (x,), (t,) = primals, tangents
    ans = convert_element_type(x, new_dtype)
    if type(t) is Zero or new_dtype.kind not in "fc":
        return [ans], [Zero.from_primal(ans)]
    return [ans], [convert_element_type(t, new_dtype)]


jvp_rules[convert_element_type_p] = _convert_jvp
declare_linear(convert_element_type_p)


def _convert_transpose(ct, x, new_dtype):
    return [convert_element_type(ct, x.aval.dtype)]


deftranspose(convert_element_type_p, _convert_transpose)
_vectorized_batch(convert_element_type_p)


def _emit_convert(ctx: Any, eqn: Eqn, args: list[str]) -> Emission | None:
    if set(eqn.params) != {"new_dtype"}:
        return None
    new = numpy.dtype(eqn.params["new_dtype"])
    if _wrapping_conversion(eqn.invars[0].aval.dtype, new):
        return None  # the impl's: through int64 off the host
    x = f"xp.asarray({args[0]})"
    if eqn.invars[0].aval.dtype.kind == "c" and new.kind == "b":
        return Emission(f"xp.not_equal({x}, 0)", fresh=True)  # as the impl: any part nonzero
    if eqn.invars[0].aval.dtype.kind == "c" and new.kind != "c":
        x = f"xp.real({x})"
    return Emission(f"{x}.astype({ctx.bind(new, 'dt')})", fresh=True)


def _simplify_to_operand(eqn: Eqn, ins: list, f: Any) -> Any:
    """An identity on values (a cast to the dtype ``x`` has, ``stop_gradient``) -> ``x``."""
    (x,) = ins
    return [x] if same_type(x, eqn.outvars[0]) else None


_rules.emitters[convert_element_type_p] = _emit_convert
_rules.register_simplification(convert_element_type_p, _simplify_to_operand)
_rules.broadcasting_primitives.add(convert_element_type_p)
_rules.zero_one_preserving_primitives.add(convert_element_type_p)

# stop_gradient: identity forward, zero derivative at every order

stop_gradient_p = unop("stop_gradient", lambda xp, x: x)


@_binds(stop_gradient_p)
def stop_gradient(x: Any) -> Any:
    """``x`` itself, with derivatives of every order cut to zero."""
    return bind1(stop_gradient_p, x)


defjvp_zero(stop_gradient_p)
_vectorized_batch(stop_gradient_p)
_rules.register_simplification(stop_gradient_p, _simplify_to_operand)

__all__ = [
    # factories and rule helpers
    "unop", "naryop", "fit_tangent", "unbroadcast_ct", "align_batched",
    # unary
    "neg", "sign", "floor", "ceil", "trunc", "round", "abs", "exp", "exp2", "expm1", "log",
    "log1p", "log2", "log10", "sqrt", "rsqrt", "cbrt", "sin", "cos", "tan", "asin", "acos",
    "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "logistic", "square",
    "reciprocal", "is_finite", "is_nan", "signbit", "not_", "logical_not", "integer_pow",
    "real", "imag", "conj", "complex", "copy", "stop_gradient", "convert_element_type",
    # binary
    "add", "sub", "mul", "div", "floor_divide", "rem", "fmod", "pow", "max", "min", "atan2",
    "hypot", "logaddexp", "logaddexp2", "copysign", "eq", "ne", "lt", "le", "gt", "ge",
    "and_", "or_", "xor", "shift_left", "shift_right",
    # n-ary
    "select_n", "clamp",
]
__all__ += [n + "_p" for n in __all__[5:] if n + "_p" in globals()]
__all__ += ["and_p", "or_p", "not_p"]

# The interpreters' tangent addition (add_any) batches like any broadcasting op.
_broadcasting_batch(add_any_p)

# Derivatives singular where the value is finite (sqrt'(0), log'(0), d(x/y)/dy at y = 0...):
# the eager tape records these nodes' user lines, so the warnings their backward rules raise
# name the line of the operation (interpreters/eager_vjp.py).
eager_vjp.located_primitives.update((
    div_p, rem_p, pow_p, integer_pow_p, atan2_p, log_p, log1p_p, sqrt_p, rsqrt_p, cbrt_p,
    tan_p, asin_p, acos_p, acosh_p, atanh_p))
