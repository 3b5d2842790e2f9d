"""Reduction and cumulative primitives.

Reductions (``reduce_sum``, ``reduce_prod``, ``reduce_max``, ``reduce_min``, ``reduce_and``,
``reduce_or``) take an ``axes`` param (a sorted tuple of non-negative axes); ``argmax`` and
``argmin`` take one ``axis``. Cumulative ops (``cumsum``, ``cumprod``, ``cummax``, ``cummin``)
take ``axis`` and ``reverse``. Dtypes follow NumPy (``sum`` of int32 is int64, of bool int64).

Derivatives are exact at every order, zeros and ties included: ``reduce_prod`` uses products
of the *other* elements (exclusive cumulative products, never ``ans / x``); ``cumprod`` pushes
tangents through a log-depth scan of multiplications; ``reduce_max``/``reduce_min`` split the
tangent evenly among tied extrema (as JAX does); ``cummax``/``cummin`` take the tangent of the
element that holds the running extremum.

Each primitive is one block: wrapper, impl + shape rule, JVP, transpose (linear ones), batch.
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
import funcgrad.ops.shape as _shape
import funcgrad.ops.sorting as _sorting
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import xp_for
from funcgrad.compile import rules as _rules
from funcgrad.compile.rules import Emission, same_type
from funcgrad.core import bind1
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.interpreters import batching
from funcgrad.interpreters import cost as _cost
from funcgrad.interpreters.jvp import Zero, def_fast_vjp, defjvp_zero, deflinear, jvp_rules
from funcgrad.interpreters.linearize import backward_pass_primitives
from funcgrad.interpreters.transpose import deftranspose
from funcgrad.ops._util import (
    as_array,
    broadcast_shapes_or_error,
    check_static,
    make_primitive,
    normalize_axes,
    normalize_axis,
    probe_dtype,
    result_device,
)

_INT64 = numpy.dtype("int64")


def _reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def _batch_reducer(prim):
    """Batch rule for reductions with an ``axes`` param: shift axes past the batch dim."""

    def rule(axis_size, vals, dims, axes, **params):
        (x,), (d,) = vals, dims
        new_axes = tuple(a + (a >= d) for a in axes)
        out_d = d - sum(1 for a in new_axes if a < d)
        return [bind1(prim, x, axes=new_axes, **params)], [out_d]

    batching.batch_rules[prim] = rule


def _expand_to(ans: Any, shape: tuple[int, ...], axes: tuple[int, ...]) -> Any:
    """Broadcast a reduction result back over the reduced ``axes`` of ``shape``."""
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return _shape.broadcast_in_dim(ans, shape, kept)


def _check_nonempty(name: str, a: ShapedArray, axes: tuple[int, ...]) -> None:
    if any(a.shape[i] == 0 for i in axes):
        raise ShapeError(
            f"{name}: zero-size reduction over axes {axes} of {a.str_short()} "
            "(the operation has no identity)"
        )


def _reducer(name: str, xp_name: str, dtype_fn: Any = None, nonempty: bool = False):
    """A reduction primitive over ``axes``; result dtype probed with ``dtype_fn`` if given."""

    def impl(x: Any, axes: tuple[int, ...]) -> list:
        # axis=None is NumPy's fast path for a full reduction.
        full = type(axes) is tuple and 0 < len(axes) == getattr(x, "ndim", 0)
        xp = xp_for(x)
        return [getattr(xp, xp_name)(as_array(xp, x), axis=None if full else axes)]

    def abstract(a: ShapedArray, axes: tuple[int, ...]) -> list[ShapedArray]:
        check_static(name, axes=axes)
        axes = normalize_axes(name, axes, a.ndim)
        if nonempty:
            _check_nonempty(name, a, axes)
        if dtype_fn is None:
            dt = a.dtype
        else:
            dt, _ = probe_dtype(name, dtype_fn, a.update(weak_type=False))
        weak = a.weak_type and dt == a.dtype
        return [ShapedArray(_reduced_shape(a.shape, axes), dt, weak, a.device)]

    p = make_primitive(name, impl, abstract)
    _rules.reduction_calls[p] = xp_name  # the compiler writes `xp.<xp_name>(x, axis=...)`
    return p


def _norm_axes(name: str, x: Any, axes: Any) -> tuple[int, ...]:
    return normalize_axes(name, axes, get_aval(x).ndim)


# =============================================================================================
# reduce_sum


reduce_sum_p = _reducer("reduce_sum", "sum", numpy.sum)


def reduce_sum(x: Any, axes: Any = None) -> Any:
    """Sum of ``x`` over ``axes`` (all axes when None); int/bool sums are int64 as in NumPy.

    Example:
        >>> import numpy as np
        >>> reduce_sum(np.ones((2, 3)), (1,))
        array([3., 3.])
    """
    return bind1(reduce_sum_p, x, axes=_norm_axes("reduce_sum", x, axes))


def _reduce_sum_transpose(ct, x, axes):
    if type(ct) is Zero:
        return [Zero(x.aval)]
    return [_expand_to(ct, x.aval.shape, axes)]


deflinear(reduce_sum_p)
deftranspose(reduce_sum_p, _reduce_sum_transpose)
_batch_reducer(reduce_sum_p)


def _reduce_sum_structured(axis_size, vals, dims, structs, axes):
    # Summing all of example i of a (scaled) identity leaves its one entry: the scale.
    st = structs[0]
    if len(axes) != st.aval.ndim or st.aval.dtype.kind not in "fc":
        return None
    return [st.scale_or_ones().reshape(-1)], [0], [None]


batching.structured_batch_rules[reduce_sum_p] = _reduce_sum_structured


def _simplify_reduce_sum(eqn: Any, ins: list, f: Any) -> Any:
    (x,) = ins
    if not tuple(eqn.params.get("axes", (0,))) and same_type(x, eqn.outvars[0]):
        return [x]  # a sum over no axes
    return None


_rules.register_simplification(reduce_sum_p, _simplify_reduce_sum)
_rules.roles["reduce_sum"] = reduce_sum_p

# =============================================================================================
# reduce_prod

reduce_prod_p = _reducer("reduce_prod", "prod", numpy.prod)


def reduce_prod(x: Any, axes: Any = None) -> Any:
    """Product of ``x`` over ``axes`` (all axes when None).

    Example:
        >>> import numpy as np
        >>> reduce_prod(np.array([[1., 2.], [3., 4.]]), (0,))
        array([3., 8.])
    """
    return bind1(reduce_prod_p, x, axes=_norm_axes("reduce_prod", x, axes))


def _shift(v: Any, s: int, axis: int, fill: float) -> Any:
    """``out[i] = v[i - s]`` along ``axis``, ``fill`` where ``i - s`` falls outside."""
    a = get_aval(v)
    idx = _sorting.axis_iota(a, axis, offset=-s)
    return _sorting.gather_along_axis(v, idx, axis, fill)


def products_of_others(x: Any, axis: int) -> Any:
    """``out[i] = prod_{j != i} x[j]`` along ``axis``, exact with zeros (no division).

    Example:
        >>> import numpy as np
        >>> products_of_others(np.array([2., 0., 3.]), 0)
        array([0., 6., 0.])
    """
    left = _shift(cumprod(x, axis), 1, axis, 1)
    right = _shift(cumprod(x, axis, reverse=True), -1, axis, 1)
    return _ew.mul(left, right)


def _move_axes_last(x: Any, axes: tuple[int, ...]) -> Any:
    """``x`` with ``axes`` moved to the end and flattened into one last axis."""
    a = get_aval(x)
    kept = tuple(i for i in range(a.ndim) if i not in axes)
    x = _shape.transpose(x, kept + axes)
    n = int(numpy.prod([a.shape[i] for i in axes], dtype=numpy.int64))
    return _shape.reshape(x, tuple(a.shape[i] for i in kept) + (n,))


def _reduce_prod_jvp(primals, tangents, axes):
    (x,), (t,) = primals, tangents
    ans = reduce_prod(x, axes)
    if type(t) is Zero:
        return [ans], [Zero.from_primal(ans)]
    if not axes:
        return [ans], [_ew.fit_tangent(t, ans)]
    xs = _move_axes_last(x, axes)
    ts = _move_axes_last(t, axes)
    last = get_aval(xs).ndim - 1
    tan = reduce_sum(_ew.mul(ts, products_of_others(xs, last)), (last,))
    return [ans], [_ew.fit_tangent(tan, ans)]


jvp_rules[reduce_prod_p] = _reduce_prod_jvp
_batch_reducer(reduce_prod_p)

# =============================================================================================
# reduce_max / reduce_min (NaN-propagating, as numpy.max)

reduce_max_p = _reducer("reduce_max", "max", nonempty=True)
reduce_min_p = _reducer("reduce_min", "min", nonempty=True)


def reduce_max(x: Any, axes: Any = None) -> Any:
    """Maximum of ``x`` over ``axes``; NaN if any element is NaN (as ``numpy.max``).

    Example:
        >>> import numpy as np
        >>> reduce_max(np.array([[1., 5.], [3., 2.]]), (1,))
        array([5., 3.])
    """
    return bind1(reduce_max_p, x, axes=_norm_axes("reduce_max", x, axes))


def reduce_min(x: Any, axes: Any = None) -> Any:
    """Minimum of ``x`` over ``axes``; NaN if any element is NaN (as ``numpy.min``).

    Example:
        >>> import numpy as np
        >>> reduce_min(np.array([[1., 5.], [3., 2.]]), (1,))
        array([1., 2.])
    """
    return bind1(reduce_min_p, x, axes=_norm_axes("reduce_min", x, axes))


def _chooser_jvp(prim):
    def rule(primals, tangents, axes):
        (x,), (t,) = primals, tangents
        ans = bind1(prim, x, axes=axes)
        if type(t) is Zero:
            return [ans], [Zero.from_primal(ans)]
        shape = get_aval(x).shape
        # Ties share the tangent evenly: the derivative JAX picks, symmetric in the ties.
        where = tie_mask(x, _expand_to(ans, shape, axes))
        count = reduce_sum(where, axes)
        tan = _ew.div(reduce_sum(_ew.mul(t, where), axes), count)
        return [ans], [tan]

    jvp_rules[prim] = rule


def _chooser_fast_vjp(xp: Any, ct: Any, ans: Any, x: Any, axes: tuple[int, ...]) -> Any:
    # The JVP above, transposed on arrays: ties share the cotangent evenly.
    where = _tie_mask_impl(x, xp.expand_dims(ans, axes))[0]
    count = xp.sum(where, axis=axes, keepdims=True)
    return xp.multiply(xp.divide(xp.expand_dims(ct, axes), count), where)


_chooser_jvp(reduce_max_p)
_chooser_jvp(reduce_min_p)
# The eager tape would linearize each max/min node (it is neither elementwise nor linear).
def_fast_vjp(reduce_max_p, _chooser_fast_vjp)
def_fast_vjp(reduce_min_p, _chooser_fast_vjp)
_batch_reducer(reduce_max_p)
_batch_reducer(reduce_min_p)

# tie_mask: 1 where x equals y (NaN counting as equal to NaN), else 0; in x's dtype.


def _tie_mask_impl(x: Any, y: Any) -> list:
    xp = xp_for(x, y, what="tie_mask")
    x = xp.asarray(x)
    eq = xp.equal(x, y)
    if numpy.dtype(x.dtype).kind in "fc":
        eq = eq | (xp.isnan(x) & xp.isnan(y))
    return [eq.astype(x.dtype)]


def _tie_mask_abstract(a: ShapedArray, b: ShapedArray) -> list[ShapedArray]:
    shape = broadcast_shapes_or_error("tie_mask", a.shape, b.shape)
    return [ShapedArray(shape, a.dtype, False, result_device("tie_mask", a, b))]


tie_mask_p = make_primitive("tie_mask", _tie_mask_impl, _tie_mask_abstract)


def tie_mask(x: Any, y: Any) -> Any:
    """``x == y`` (NaN equal to NaN) as 0/1 in ``x``'s dtype; a constant for derivatives.

    Example:
        >>> import numpy as np
        >>> tie_mask(np.array([1., np.nan, 3.]), np.array([1., np.nan, 0.]))
        array([1., 1., 0.])
    """
    return bind1(tie_mask_p, x, y)


def _tie_mask_batch(axis_size, vals, dims):
    return [tie_mask(*_ew.align_batched(list(vals), list(dims)))], [0]


defjvp_zero(tie_mask_p)
batching.batch_rules[tie_mask_p] = _tie_mask_batch


def _emit_tie_mask(ctx: Any, eqn: Any, args: list[str]) -> Emission | None:
    # The impl's computation in one expression (x == y, NaN equal to NaN, in x's dtype).
    if eqn.params:
        return None
    x, y = args
    dt = ctx.bind(eqn.outvars[0].aval.dtype, "dt")
    eq = f"xp.equal({x}, {y})"
    if eqn.invars[0].aval.dtype.kind in "fc":
        eq = f"xp.logical_or({eq}, xp.logical_and(xp.isnan({x}), xp.isnan({y})))"
    return Emission(f"{eq}.astype({dt})", fresh=True)


_rules.emitters[tie_mask_p] = _emit_tie_mask
_rules.broadcasting_primitives.add(tie_mask_p)

# =============================================================================================
# reduce_and / reduce_or (all / any): any dtype in, bool out

reduce_and_p = _reducer("reduce_and", "all", numpy.all)
reduce_or_p = _reducer("reduce_or", "any", numpy.any)


def reduce_and(x: Any, axes: Any = None) -> Any:
    """Whether every element over ``axes`` is nonzero (``numpy.all``); bool result.

    Example:
        >>> import numpy as np
        >>> reduce_and(np.array([[1, 0], [2, 3]]), (1,))
        array([False,  True])
    """
    return bind1(reduce_and_p, x, axes=_norm_axes("reduce_and", x, axes))


def reduce_or(x: Any, axes: Any = None) -> Any:
    """Whether any element over ``axes`` is nonzero (``numpy.any``); bool result.

    Example:
        >>> import numpy as np
        >>> reduce_or(np.array([[0, 0], [2, 0]]), (1,))
        array([False,  True])
    """
    return bind1(reduce_or_p, x, axes=_norm_axes("reduce_or", x, axes))


defjvp_zero(reduce_and_p)
defjvp_zero(reduce_or_p)
_batch_reducer(reduce_and_p)
_batch_reducer(reduce_or_p)

# =============================================================================================
# argmax / argmin: one axis, first occurrence (the first NaN wins, as in NumPy)


def _arg_reducer(name: str, xp_name: str):
    def impl(x: Any, axis: int, index_dtype: numpy.dtype) -> list:
        xp = xp_for(x)
        out = getattr(xp, xp_name)(x, axis=axis)
        if out.dtype != index_dtype:
            out = out.astype(index_dtype)
        return [out]

    def abstract(a: ShapedArray, axis: int, index_dtype: numpy.dtype) -> list[ShapedArray]:
        check_static(name, axis=axis, index_dtype=index_dtype)
        if a.ndim == 0:
            raise ShapeError(f"{name}: operand must have rank >= 1, got a 0-d array")
        axis = normalize_axis(name, axis, a.ndim)
        _check_nonempty(name, a, (axis,))
        if numpy.dtype(index_dtype).kind not in "iu":
            raise DTypeError(f"{name}: index_dtype must be an integer dtype, got {index_dtype}")
        return [ShapedArray(_reduced_shape(a.shape, (axis,)), index_dtype, False, a.device)]

    prim = make_primitive(name, impl, abstract)

    def rule(axis_size, vals, dims, axis, index_dtype):
        (x,), (d,) = vals, dims
        new_axis = axis + (axis >= d)
        out_d = d - (new_axis < d)
        return [bind1(prim, x, axis=new_axis, index_dtype=index_dtype)], [out_d]

    defjvp_zero(prim)
    batching.batch_rules[prim] = rule
    _cost.cost_rules[prim] = _cost.per_input_element
    return prim


argmax_p = _arg_reducer("argmax", "argmax")
argmin_p = _arg_reducer("argmin", "argmin")


def argmax(x: Any, axis: int, index_dtype: Any = _INT64) -> Any:
    """Index of the first maximum of ``x`` along ``axis`` (NaN counts as the maximum).

    Example:
        >>> import numpy as np
        >>> argmax(np.array([[1., 5., 5.], [3., 2., 0.]]), 1)
        array([1, 0])
    """
    a = get_aval(x)
    if a.ndim == 0:
        raise ShapeError("argmax: operand must have rank >= 1, got a 0-d array")
    axis = normalize_axis("argmax", axis, a.ndim)
    return bind1(argmax_p, x, axis=axis, index_dtype=numpy.dtype(index_dtype))


def argmin(x: Any, axis: int, index_dtype: Any = _INT64) -> Any:
    """Index of the first minimum of ``x`` along ``axis`` (NaN counts as the minimum).

    Example:
        >>> import numpy as np
        >>> argmin(np.array([[1., 0., 0.], [3., 2., 4.]]), 1)
        array([1, 1])
    """
    a = get_aval(x)
    if a.ndim == 0:
        raise ShapeError("argmin: operand must have rank >= 1, got a 0-d array")
    axis = normalize_axis("argmin", axis, a.ndim)
    return bind1(argmin_p, x, axis=axis, index_dtype=numpy.dtype(index_dtype))


# =============================================================================================
# Cumulative ops: cumsum, cumprod, cummax, cummin (param axis, reverse)


def _flip_apply(xp: Any, fn: Any, x: Any, axis: int, reverse: bool) -> Any:
    if not reverse:
        return fn(x)
    return xp.flip(fn(xp.flip(x, axis=axis)), axis=axis)


def _accumulate(xp: Any, ufunc_name: str, x: Any, axis: int) -> Any:
    """``ufunc.accumulate`` along ``axis``; a log-depth scan where the backend lacks it."""
    uf = getattr(xp, ufunc_name)
    try:
        return uf.accumulate(x, axis=axis)
    except (AttributeError, NotImplementedError, TypeError):  # pragma: no cover - old CuPy
        n = x.shape[axis]
        s = 1
        while s < n:
            head = xp.take(x, xp.arange(0, s), axis=axis)
            tail = uf(xp.take(x, xp.arange(s, n), axis=axis),
                      xp.take(x, xp.arange(0, n - s), axis=axis))
            x = xp.concatenate([head, tail], axis=axis)
            s *= 2
        return x


def _cumulative(name: str, compute: Any, dtype_fn: Any = None):
    """A cumulative primitive: ``compute(xp, x, axis)`` scans forward along ``axis``."""

    def impl(x: Any, axis: int, reverse: bool) -> list:
        xp = xp_for(x)
        x = xp.asarray(x)
        return [_flip_apply(xp, lambda v: compute(xp, v, axis), x, axis, reverse)]

    def abstract(a: ShapedArray, axis: int, reverse: bool) -> list[ShapedArray]:
        check_static(name, axis=axis, reverse=reverse)
        if a.ndim == 0:
            raise ShapeError(f"{name}: operand must have rank >= 1, got a 0-d array")
        normalize_axis(name, axis, a.ndim)
        if dtype_fn is None:
            dt = a.dtype
        else:
            dt, _ = probe_dtype(name, dtype_fn, a.update(weak_type=False))
        return [ShapedArray(a.shape, dt, a.weak_type and dt == a.dtype, a.device)]

    prim = make_primitive(name, impl, abstract)

    def rule(axis_size, vals, dims, axis, reverse):
        (x,), (d,) = vals, dims
        return [bind1(prim, x, axis=axis + (axis >= d), reverse=reverse)], [d]

    batching.batch_rules[prim] = rule
    _cost.cost_rules[prim] = _cost.per_input_element  # a scan: one op per element read
    return prim


def _cum_wrapper_args(name: str, x: Any, axis: int) -> int:
    a = get_aval(x)
    if a.ndim == 0:
        raise ShapeError(f"{name}: operand must have rank >= 1, got a 0-d array")
    return normalize_axis(name, axis, a.ndim)


def _np_cumsum(x):
    return numpy.cumsum(x)


def _np_cumprod(x):
    return numpy.cumprod(x)


# -- cumsum (linear: the transpose is a cumsum in the other direction)

cumsum_p = _cumulative("cumsum", lambda xp, x, axis: xp.cumsum(x, axis=axis), _np_cumsum)


def cumsum(x: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Running sum along ``axis`` (from the end when ``reverse``).

    Example:
        >>> import numpy as np
        >>> cumsum(np.array([1., 2., 3.]), 0, reverse=True)
        array([6., 5., 3.])
    """
    axis = _cum_wrapper_args("cumsum", x, axis)
    return bind1(cumsum_p, x, axis=axis, reverse=bool(reverse))


def _cumsum_transpose(ct, x, axis, reverse):
    if type(ct) is Zero:
        return [Zero(x.aval)]
    return [cumsum(ct, axis, not reverse)]


deflinear(cumsum_p)
deftranspose(cumsum_p, _cumsum_transpose)

# -- cumprod

cumprod_p = _cumulative("cumprod", lambda xp, x, axis: xp.cumprod(x, axis=axis), _np_cumprod)


def cumprod(x: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Running product along ``axis`` (from the end when ``reverse``).

    Example:
        >>> import numpy as np
        >>> cumprod(np.array([1., 2., 3.]), 0)
        array([1., 2., 6.])
    """
    axis = _cum_wrapper_args("cumprod", x, axis)
    return bind1(cumprod_p, x, axis=axis, reverse=bool(reverse))


def _cumprod_jvp(primals, tangents, axis, reverse):
    (x,), (t,) = primals, tangents
    ans = cumprod(x, axis, reverse)
    if type(t) is Zero:
        return [ans], [Zero.from_primal(ans)]
    # The tangent of a scan of products, pushed through a log-depth (Hillis-Steele) scan of
    # pairs (p, dp) o (q, dq) = (p q, dp q + p dq): only products, so exact with zeros and
    # differentiable again.
    p, dp = x, _ew.fit_tangent(t, ans)
    n = get_aval(x).shape[axis]
    step = -1 if reverse else 1
    s = 1
    while s < n:
        p_prev = _shift(p, s * step, axis, 1)
        dp_prev = _shift(dp, s * step, axis, 0)
        dp = _ew.add(_ew.mul(dp_prev, p), _ew.mul(p_prev, dp))
        p = _ew.mul(p_prev, p)
        s *= 2
    return [ans], [dp]


jvp_rules[cumprod_p] = _cumprod_jvp

# -- cummax / cummin: the tangent of the element holding the running extremum


def _cumarg_compute(better: str, acc: str):
    def compute(xp: Any, x: Any, axis: int) -> Any:
        n = x.shape[axis]
        out_shape = x.shape
        if n == 0:
            return xp.zeros(out_shape, dtype=_INT64)
        run = _accumulate(xp, acc, x, axis)
        # prev[i] = run[i - 1]; position 0 always starts a record.
        idx = xp.arange(n)
        shape = [1] * x.ndim
        shape[axis] = n
        idx = idx.reshape(tuple(shape))
        prev = xp.take(run, xp.maximum(xp.arange(n) - 1, 0), axis=axis)
        record = getattr(xp, better)(x, prev) | (idx == 0)
        if numpy.dtype(x.dtype).kind in "fc":
            record = record | (xp.isnan(x) & ~xp.isnan(prev))
        pos = xp.where(record, idx, xp.zeros((), dtype=idx.dtype))
        return _accumulate(xp, "maximum", pos.astype(_INT64), axis)

    return compute


def _cumarg(name: str, better: str, acc: str):
    compute = _cumarg_compute(better, acc)

    def impl(x: Any, axis: int, reverse: bool) -> list:
        xp = xp_for(x)
        x = xp.asarray(x)
        if not reverse:
            return [compute(xp, x, axis)]
        n = x.shape[axis]
        return [(n - 1) - xp.flip(compute(xp, xp.flip(x, axis=axis), axis), axis=axis)]

    def abstract(a: ShapedArray, axis: int, reverse: bool) -> list[ShapedArray]:
        check_static(name, axis=axis, reverse=reverse)
        if a.ndim == 0:
            raise ShapeError(f"{name}: operand must have rank >= 1, got a 0-d array")
        normalize_axis(name, axis, a.ndim)
        return [ShapedArray(a.shape, _INT64, False, a.device)]

    prim = make_primitive(name, impl, abstract)

    def rule(axis_size, vals, dims, axis, reverse):
        (x,), (d,) = vals, dims
        return [bind1(prim, x, axis=axis + (axis >= d), reverse=reverse)], [d]

    defjvp_zero(prim)
    batching.batch_rules[prim] = rule
    _cost.cost_rules[prim] = _cost.per_input_element
    return prim


cumargmax_p = _cumarg("cumargmax", "greater", "maximum")
cumargmin_p = _cumarg("cumargmin", "less", "minimum")


def cumargmax(x: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Index of the element holding the running maximum (the earliest one on ties).

    Example:
        >>> import numpy as np
        >>> cumargmax(np.array([1., 3., 2., 3., 4.]))
        array([0, 1, 1, 1, 4])
    """
    axis = _cum_wrapper_args("cumargmax", x, axis)
    return bind1(cumargmax_p, x, axis=axis, reverse=bool(reverse))


def cumargmin(x: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Index of the element holding the running minimum (the earliest one on ties).

    Example:
        >>> import numpy as np
        >>> cumargmin(np.array([3., 1., 2., 0.]))
        array([0, 1, 1, 3])
    """
    axis = _cum_wrapper_args("cumargmin", x, axis)
    return bind1(cumargmin_p, x, axis=axis, reverse=bool(reverse))


cummax_p = _cumulative("cummax", lambda xp, x, axis: _accumulate(xp, "maximum", x, axis))
cummin_p = _cumulative("cummin", lambda xp, x, axis: _accumulate(xp, "minimum", x, axis))


def cummax(x: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Running maximum along ``axis`` (NaN-propagating, as ``numpy.maximum.accumulate``).

    Example:
        >>> import numpy as np
        >>> cummax(np.array([1., 3., 2., 4.]))
        array([1., 3., 3., 4.])
    """
    axis = _cum_wrapper_args("cummax", x, axis)
    return bind1(cummax_p, x, axis=axis, reverse=bool(reverse))


def cummin(x: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Running minimum along ``axis`` (NaN-propagating, as ``numpy.minimum.accumulate``).

    Example:
        >>> import numpy as np
        >>> cummin(np.array([3., 1., 2., 0.]))
        array([3., 1., 1., 0.])
    """
    axis = _cum_wrapper_args("cummin", x, axis)
    return bind1(cummin_p, x, axis=axis, reverse=bool(reverse))


def _cum_extremum_jvp(prim, arg_prim):
    def rule(primals, tangents, axis, reverse):
        (x,), (t,) = primals, tangents
        ans = bind1(prim, x, axis=axis, reverse=reverse)
        if type(t) is Zero:
            return [ans], [Zero.from_primal(ans)]
        idx = bind1(arg_prim, x, axis=axis, reverse=reverse)
        return [ans], [_sorting.gather_along_axis(t, idx, axis)]

    jvp_rules[prim] = rule


_cum_extremum_jvp(cummax_p, cumargmax_p)
_cum_extremum_jvp(cummin_p, cumargmin_p)
# It drops some of its operands' values (see linearize.backward_pass_primitives).
backward_pass_primitives.update({cummax_p, cummin_p})

__all__ = [
    "reduce_sum", "reduce_sum_p", "reduce_prod", "reduce_prod_p", "reduce_max", "reduce_max_p",
    "reduce_min", "reduce_min_p", "reduce_and", "reduce_and_p", "reduce_or", "reduce_or_p",
    "argmax", "argmax_p", "argmin", "argmin_p", "cumsum", "cumsum_p", "cumprod", "cumprod_p",
    "cummax", "cummax_p", "cummin", "cummin_p", "cumargmax", "cumargmax_p", "cumargmin",
    "cumargmin_p", "tie_mask", "tie_mask_p", "products_of_others",
]
