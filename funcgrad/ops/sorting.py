"""Sorting and the along-axis gather/scatter the sorting and cumulative rules need.

``sort`` sorts several same-shaped operands by the first ``num_keys`` of them (as JAX's
``lax.sort``), so ``argsort`` is a sort of ``(x, iota)``. Its JVP applies the same permutation
to the tangents with ``gather_along_axis``, a take-along-axis primitive whose transpose is
``scatter_add_along_axis`` (and the other way round), so sort differentiates to any order in
both modes. Each primitive is one block: wrapper, impl + shape rule, JVP, transpose (linear
ones), batch rule.
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.ops.shape as _shape
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import get_default_device, xp_for, xp_for_device
from funcgrad.core import bind, bind1
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.interpreters import batching
from funcgrad.interpreters import cost as _cost
from funcgrad.interpreters.jvp import Zero, declare_linear, jvp_rules
from funcgrad.interpreters.linearize import backward_pass_primitives
from funcgrad.interpreters.transpose import deftranspose, is_undefined
from funcgrad.ops._ufunc_at import ufunc_at
from funcgrad.ops._util import check_static, make_primitive, normalize_axis, result_device

_INT64 = numpy.dtype("int64")


def xp_for_aval(aval: ShapedArray) -> Any:
    """The array module of the device ``aval`` lives on (the default device if unknown)."""
    return xp_for_device(aval.device or get_default_device())


def axis_iota(aval: ShapedArray, axis: int, offset: int = 0, full: bool = False) -> Any:
    """Constant int64 ``arange(n) + offset`` along ``axis`` of ``aval``'s shape.

    The result has size 1 on the other axes (it broadcasts) unless ``full`` is set, and
    lives on ``aval``'s device.

    Example:
        >>> axis_iota(ShapedArray((2, 3), numpy.float64), 1).tolist()
        [[0, 1, 2]]
    """
    xp = xp_for_aval(aval)
    n = aval.shape[axis]
    shape = [1] * aval.ndim
    shape[axis] = n
    io = xp.arange(offset, n + offset, dtype=_INT64).reshape(tuple(shape))
    return xp.broadcast_to(io, aval.shape) if full else io


def _out_shape(shape: tuple[int, ...], axis: int, n: int) -> tuple[int, ...]:
    return shape[:axis] + (n,) + shape[axis + 1 :]


def _check_index(name: str, a: ShapedArray, idx: ShapedArray, axis: int, along: bool) -> None:
    if idx.dtype.kind not in "iu":
        raise DTypeError(f"{name}: indices must be integers, got {idx.str_short()}")
    if idx.ndim != a.ndim:
        raise ShapeError(
            f"{name}: indices {idx.str_short()} must have the rank of the operand "
            f"{a.str_short()}"
        )
    for d, (s, i) in enumerate(zip(a.shape, idx.shape)):
        if d == axis:
            if along and s != i:
                raise ShapeError(
                    f"{name}: indices {idx.str_short()} and updates {a.str_short()} differ "
                    f"along axis {axis}"
                )
        elif i not in (1, s):
            raise ShapeError(
                f"{name}: indices {idx.str_short()} do not broadcast against "
                f"{a.str_short()} outside axis {axis}"
            )


# =============================================================================================
# gather_along_axis: out[..., i, ...] = x[..., idx[..., i, ...], ...] (take_along_axis)


def _gather_impl(x: Any, idx: Any, axis: int, fill_value: Any) -> list:
    xp = xp_for(x, idx, what="gather_along_axis")
    shape = _out_shape(x.shape, axis, idx.shape[axis])
    idx = xp.broadcast_to(idx, shape)
    n = x.shape[axis]
    if fill_value is None:
        return [xp.take_along_axis(x, idx, axis=axis)]
    if n == 0:
        return [xp.full(shape, fill_value, dtype=x.dtype)]
    valid = (idx >= 0) & (idx < n)
    out = xp.take_along_axis(x, xp.clip(idx, 0, n - 1), axis=axis)
    return [xp.where(valid, out, xp.asarray(fill_value, dtype=x.dtype))]


def _gather_abstract(a: ShapedArray, idx: ShapedArray, axis: int, fill_value: Any):
    check_static("gather_along_axis", axis=axis, fill_value=fill_value)
    if a.ndim == 0:
        raise ShapeError("gather_along_axis: operand must have rank >= 1, got a 0-d array")
    axis = normalize_axis("gather_along_axis", axis, a.ndim)
    _check_index("gather_along_axis", a, idx, axis, along=False)
    return [
        ShapedArray(_out_shape(a.shape, axis, idx.shape[axis]), a.dtype, a.weak_type,
                    result_device("gather_along_axis", a, idx))
    ]


gather_along_axis_p = make_primitive("gather_along_axis", _gather_impl, _gather_abstract)
# It drops some of its operands' values (see linearize.backward_pass_primitives).
backward_pass_primitives.add(gather_along_axis_p)


def gather_along_axis(x: Any, idx: Any, axis: int, fill_value: Any = None) -> Any:
    """``take_along_axis(x, idx, axis)``; ``idx`` broadcasts against ``x`` off ``axis``.

    With ``fill_value`` None every index must lie in ``[0, n)``; otherwise out-of-range
    indices (negative ones included) read ``fill_value``.

    Example:
        >>> import numpy as np
        >>> gather_along_axis(np.array([5., 6., 7.]), np.array([2, 0, -1]), 0, 0.0)
        array([7., 5., 0.])
    """
    return bind1(gather_along_axis_p, x, idx, axis=int(axis), fill_value=fill_value)


def _gather_jvp(primals, tangents, axis, fill_value):
    (x, idx), (tx, _) = primals, tangents
    out = gather_along_axis(x, idx, axis, fill_value)
    if type(tx) is Zero:
        return [out], [Zero.from_primal(out)]
    return [out], [gather_along_axis(tx, idx, axis, None if fill_value is None else 0)]


def _gather_transpose(ct, x, idx, axis, fill_value):
    if is_undefined(idx):
        raise ValueError("gather_along_axis: transpose with respect to the indices (not linear)")
    if type(ct) is Zero:
        return [Zero(x.aval), None]
    return [scatter_add_along_axis(ct, idx, axis, x.aval.shape[axis]), None]


def _batch_operand_and_index(axis_size, vals, dims):
    """Both operands with the batch axis first; an unbatched index gets a size-1 batch axis
    (it broadcasts), an unbatched operand is broadcast (its axes set the output's)."""
    (x, idx), (dx, di) = vals, dims
    if dx is None:
        xa = get_aval(x)
        x = _shape.broadcast_in_dim(x, (axis_size,) + xa.shape, tuple(range(1, xa.ndim + 1)))
    else:
        x = _shape.moveaxis(x, dx, 0)
    if di is None:
        idx = _shape.reshape(idx, (1,) + get_aval(idx).shape)
    else:
        idx = _shape.moveaxis(idx, di, 0)
    return x, idx


def _gather_batch(axis_size, vals, dims, axis, fill_value):
    x, idx = _batch_operand_and_index(axis_size, vals, dims)
    return [gather_along_axis(x, idx, axis + 1, fill_value)], [0]


jvp_rules[gather_along_axis_p] = _gather_jvp
declare_linear(gather_along_axis_p)
deftranspose(gather_along_axis_p, _gather_transpose)
batching.batch_rules[gather_along_axis_p] = _gather_batch

# =============================================================================================
# scatter_add_along_axis: the transpose of gather_along_axis (indices out of range dropped)


def _scatter_add_impl(upd: Any, idx: Any, axis: int, size: int) -> list:
    xp = xp_for(upd, idx, what="scatter_add_along_axis")
    upd = xp.asarray(upd)
    out = xp.zeros(_out_shape(upd.shape, axis, size), dtype=upd.dtype)
    idx = xp.broadcast_to(idx, upd.shape)
    valid = (idx >= 0) & (idx < size)
    upd = xp.where(valid, upd, xp.zeros((), dtype=upd.dtype))
    idx = xp.clip(idx, 0, max(size - 1, 0))
    index = []
    for d, n in enumerate(upd.shape):
        if d == axis:
            index.append(idx)
        else:
            shape = [1] * upd.ndim
            shape[d] = n
            index.append(xp.arange(n).reshape(tuple(shape)))
    if size > 0:
        out = ufunc_at(xp, "add", out, tuple(index), upd)
    return [out]


def _scatter_add_abstract(a: ShapedArray, idx: ShapedArray, axis: int, size: int):
    check_static("scatter_add_along_axis", axis=axis, size=size)
    if a.ndim == 0:
        raise ShapeError("scatter_add_along_axis: updates must have rank >= 1, got a 0-d array")
    axis = normalize_axis("scatter_add_along_axis", axis, a.ndim)
    _check_index("scatter_add_along_axis", a, idx, axis, along=True)
    return [
        ShapedArray(_out_shape(a.shape, axis, int(size)), a.dtype, a.weak_type,
                    result_device("scatter_add_along_axis", a, idx))
    ]


scatter_add_along_axis_p = make_primitive(
    "scatter_add_along_axis", _scatter_add_impl, _scatter_add_abstract
)


def scatter_add_along_axis(upd: Any, idx: Any, axis: int, size: int) -> Any:
    """Zeros with ``size`` entries along ``axis``, ``upd`` added at positions ``idx``.

    Repeated indices accumulate; out-of-range ones are dropped. The transpose of
    :func:`gather_along_axis`.

    Example:
        >>> import numpy as np
        >>> scatter_add_along_axis(np.array([1., 2., 3.]), np.array([0, 0, 2]), 0, 4)
        array([3., 0., 3., 0.])
    """
    return bind1(scatter_add_along_axis_p, upd, idx, axis=int(axis), size=int(size))


def _scatter_add_jvp(primals, tangents, axis, size):
    (u, idx), (tu, _) = primals, tangents
    out = scatter_add_along_axis(u, idx, axis, size)
    if type(tu) is Zero:
        return [out], [Zero.from_primal(out)]
    return [out], [scatter_add_along_axis(tu, idx, axis, size)]


def _scatter_add_transpose(ct, u, idx, axis, size):
    if is_undefined(idx):
        raise ValueError("scatter_add_along_axis: transpose with respect to the indices")
    if type(ct) is Zero:
        return [Zero(u.aval), None]
    # Dropped (out-of-range) positions read 0 back.
    return [gather_along_axis(ct, idx, axis, 0), None]


def _scatter_add_batch(axis_size, vals, dims, axis, size):
    u, idx = _batch_operand_and_index(axis_size, vals, dims)
    return [scatter_add_along_axis(u, idx, axis + 1, size)], [0]


jvp_rules[scatter_add_along_axis_p] = _scatter_add_jvp
declare_linear(scatter_add_along_axis_p)
deftranspose(scatter_add_along_axis_p, _scatter_add_transpose)
batching.batch_rules[scatter_add_along_axis_p] = _scatter_add_batch
_cost.cost_rules[scatter_add_along_axis_p] = _cost.per_input_element  # an add per update

# =============================================================================================
# sort: operands sorted together along `dimension` by the first `num_keys` (lexicographic)


#: Array modules whose stable sort keeps equal floats in order (-0.0 beside 0.0, NaNs of
#: either sign at the end), as XLA's sort does. CuPy's sort of a float vector is a radix sort
#: of the bits (seen on an H200: a -NaN sorted first), and the strict backend sorts floats by
#: their bits as a model of it: there the keys are made canonical first (_canonical_key).
_SORTS_EQUAL_FLOATS_IN_ORDER = frozenset({"numpy"})


def _canonical_key(xp: Any, k: Any) -> Any:
    """``k`` with equal floats made bit-identical (-0.0 -> 0.0, every NaN -> one positive
    NaN, which orders after +inf), so a stable sort of any kind keeps their order."""
    if xp.asarray(k).dtype.kind != "f" or getattr(xp, "__name__", "") in (
            _SORTS_EQUAL_FLOATS_IN_ORDER):
        return k
    return xp.where(xp.isnan(k), k.dtype.type(numpy.nan), k + 0)  # -0.0 + 0 is +0.0


def _stable_argsort(xp: Any, keys: tuple, axis: int) -> Any:
    # Least significant key first; stable passes keep the order of the earlier ones.
    perm = xp.argsort(_canonical_key(xp, keys[-1]), axis=axis, kind="stable")
    for k in reversed(keys[:-1]):
        kk = xp.take_along_axis(_canonical_key(xp, k), perm, axis=axis)
        perm = xp.take_along_axis(perm, xp.argsort(kk, axis=axis, kind="stable"), axis=axis)
    return perm


def _sort_impl(*operands: Any, dimension: int, is_stable: bool, num_keys: int) -> list:
    xp = xp_for(*operands, what="sort")
    if len(operands) == 1:
        x = operands[0]
        kind = xp.asarray(x).dtype.kind
        if kind == "f" and getattr(xp, "__name__", "") not in _SORTS_EQUAL_FLOATS_IN_ORDER:
            perm = _stable_argsort(xp, (x,), dimension)
            return [xp.take_along_axis(x, perm, axis=dimension)]
        if kind in "fc":
            # Equal float keys can differ (-0.0 and 0.0, NaNs of either sign): stable, so
            # they keep their order, as XLA's sort does.
            return [xp.sort(x, axis=dimension, kind="stable")]
        # Equal integer keys are indistinguishable, so the faster unstable sort gives the same.
        return [xp.sort(x, axis=dimension)]
    # Always stable: equal keys keep their order, so results never depend on the algorithm.
    perm = _stable_argsort(xp, operands[:num_keys], dimension)
    return [xp.take_along_axis(op, perm, axis=dimension) for op in operands]


def _sort_abstract(*avals: ShapedArray, dimension: int, is_stable: bool, num_keys: int):
    check_static("sort", dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    if not avals:
        raise ShapeError("sort: needs at least one operand")
    first = avals[0]
    for a in avals[1:]:
        if a.shape != first.shape:
            raise ShapeError(
                "sort: operands must have equal shapes, got "
                + ", ".join(x.str_short() for x in avals)
            )
    if first.ndim == 0:
        raise ShapeError("sort: operands must have rank >= 1, got a 0-d array")
    normalize_axis("sort", dimension, first.ndim)
    if not 1 <= num_keys <= len(avals):
        raise ValueError(f"sort: num_keys={num_keys} must be in [1, {len(avals)}]")
    for a in avals[:num_keys]:
        if a.dtype.kind not in "biufc":
            raise DTypeError(f"sort: cannot sort keys of dtype {a.dtype}")
    dev = result_device("sort", *avals)
    return [a.update(device=dev) if a.device != dev else a for a in avals]


sort_p = make_primitive("sort", _sort_impl, _sort_abstract, multiple_results=True)


def sort(
    operands: Any, dimension: int = -1, is_stable: bool = True, num_keys: int = 1
) -> Any:
    """Sort ``operands`` (one array, or a sequence of equal-shaped arrays) along ``dimension``.

    With several operands, all are permuted by the lexicographic order of the first
    ``num_keys``; a list comes back. NaNs sort last, as in NumPy; equal keys keep their order.

    Example:
        >>> import numpy as np
        >>> sort(np.array([3., 1., 2.]))
        array([1., 2., 3.])
        >>> sort([np.array([2., 1.]), np.array([10, 20])])[1]
        array([20, 10])
    """
    single = not isinstance(operands, list | tuple)
    ops = (operands,) if single else tuple(operands)
    nd = get_aval(ops[0]).ndim
    if nd == 0:
        raise ShapeError("sort: operands must have rank >= 1, got a 0-d array")
    dimension = normalize_axis("sort", dimension, nd)
    outs = bind(sort_p, *ops, dimension=dimension, is_stable=bool(is_stable),
                num_keys=int(num_keys))
    return outs[0] if single else outs


def argsort(x: Any, dimension: int = -1, is_stable: bool = True) -> Any:
    """Indices (int64) that sort ``x`` along ``dimension``; ties keep their order.

    Example:
        >>> import numpy as np
        >>> argsort(np.array([3., 1., 3., 0.]))
        array([3, 1, 0, 2])
    """
    a = get_aval(x)
    if a.ndim == 0:
        raise ShapeError("argsort: operand must have rank >= 1, got a 0-d array")
    dimension = normalize_axis("argsort", dimension, a.ndim)
    iota = axis_iota(a, dimension, full=True)
    return sort([x, iota], dimension, is_stable, 1)[1]


def _sort_jvp(primals, tangents, dimension, is_stable, num_keys):
    a = get_aval(primals[0])
    iota = axis_iota(a, dimension, full=True)
    outs = bind(sort_p, *primals, iota, dimension=dimension, is_stable=is_stable,
                num_keys=num_keys)
    perm = outs[-1]
    outs = outs[:-1]
    t_outs = [
        Zero.from_primal(o) if type(t) is Zero else gather_along_axis(t, perm, dimension)
        for o, t in zip(outs, tangents)
    ]
    return outs, t_outs


def _sort_batch(axis_size, vals, dims, dimension, is_stable, num_keys):
    moved = []
    for v, d in zip(vals, dims):
        if d is None:
            a = get_aval(v)
            v = _shape.broadcast_in_dim(v, (axis_size,) + a.shape, tuple(range(1, a.ndim + 1)))
        else:
            v = _shape.moveaxis(v, d, 0)
        moved.append(v)
    outs = bind(sort_p, *moved, dimension=dimension + 1, is_stable=is_stable,
                num_keys=num_keys)
    return outs, [0] * len(outs)


jvp_rules[sort_p] = _sort_jvp
batching.batch_rules[sort_p] = _sort_batch

__all__ = [
    "gather_along_axis",
    "gather_along_axis_p",
    "scatter_add_along_axis",
    "scatter_add_along_axis_p",
    "sort",
    "sort_p",
    "argsort",
    "axis_iota",
    "xp_for_aval",
]
