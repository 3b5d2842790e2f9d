"""Shape primitives and the helpers built on them.

Primitives: broadcast_in_dim, reshape, transpose, squeeze, expand_dims, concatenate, pad, rev,
slice, dynamic_slice, dynamic_update_slice, iota. Helpers (not primitives): broadcast_to,
sum_to_aval, moveaxis, swapaxes, static_slice, slice_in_dim, index_in_dim,
dynamic_slice_in_dim, dynamic_update_slice_in_dim, broadcasted_iota, full.

Each primitive is one block: wrapper, impl + shape rule, JVP, transpose, batch rule.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
import funcgrad.ops.reductions as _red
from funcgrad.avals import ShapedArray, canonical_dtype, get_aval
from funcgrad.backend import get_default_device, xp_for, xp_for_device
from funcgrad.core import bind1
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import Zero, defjvp_zero, deflinear, instantiate, jvp_rules
from funcgrad.interpreters.jvp import zeros_like_aval as _zeros_like_aval
from funcgrad.interpreters.transpose import deftranspose, is_undefined
from funcgrad.ops._util import check_static, make_primitive, normalize_axis, result_device

_pyslice = builtins.slice

# =============================================================================================
# broadcast_in_dim: operand dims go to `broadcast_dimensions` of the result `shape`


def _bid_impl(x: Any, shape: tuple[int, ...], broadcast_dimensions: tuple[int, ...]) -> list:
    xp = xp_for(x)
    x = xp.asarray(x)
    expanded = [1] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        expanded[dst] = x.shape[src]
    return [xp.broadcast_to(x.reshape(expanded), shape)]


def _bid_abstract(a: ShapedArray, shape, broadcast_dimensions) -> list[ShapedArray]:
    check_static("broadcast_in_dim", shape=shape, broadcast_dimensions=broadcast_dimensions)
    if len(broadcast_dimensions) != a.ndim:
        raise ShapeError(
            f"broadcast_in_dim: operand {a.str_short()} has rank {a.ndim} but "
            f"broadcast_dimensions={broadcast_dimensions} has {len(broadcast_dimensions)} entries"
        )
    for src, dst in enumerate(broadcast_dimensions):
        if not 0 <= dst < len(shape) or a.shape[src] not in (1, shape[dst]):
            raise ShapeError(
                f"broadcast_in_dim: cannot broadcast {a.str_short()} to shape {tuple(shape)} "
                f"with broadcast_dimensions={broadcast_dimensions}"
            )
    if list(broadcast_dimensions) != sorted(broadcast_dimensions):
        raise ShapeError("broadcast_in_dim: broadcast_dimensions must be increasing")
    return [a.update(shape=tuple(shape))]


broadcast_in_dim_p = make_primitive("broadcast_in_dim", _bid_impl, _bid_abstract)


def broadcast_in_dim(x: Any, shape: tuple[int, ...], broadcast_dimensions: tuple[int, ...]):
    """Broadcast ``x`` to ``shape``, operand axis ``i`` landing on ``broadcast_dimensions[i]``."""
    shape = tuple(int(s) for s in shape)
    broadcast_dimensions = tuple(int(d) for d in broadcast_dimensions)
    if get_aval(x).shape == shape and broadcast_dimensions == tuple(range(len(shape))):
        return x
    return bind1(
        broadcast_in_dim_p, x, shape=shape, broadcast_dimensions=broadcast_dimensions
    )


def _bid_transpose(ct, x, shape, broadcast_dimensions):
    return [sum_to_aval(ct, x.aval, broadcast_dimensions)]


def _bid_batch(axis_size, vals, dims, shape, broadcast_dimensions):
    (x,), (d,) = vals, dims
    x = moveaxis(x, d, 0)
    new_shape = (axis_size,) + tuple(shape)
    new_dims = (0,) + tuple(b + 1 for b in broadcast_dimensions)
    return [broadcast_in_dim(x, new_shape, new_dims)], [0]


deflinear(broadcast_in_dim_p)
deftranspose(broadcast_in_dim_p, _bid_transpose)
batching.batch_rules[broadcast_in_dim_p] = _bid_batch


def broadcast_to(x: Any, shape: tuple[int, ...]) -> Any:
    """NumPy ``broadcast_to`` semantics (trailing axes aligned)."""
    a = get_aval(x)
    shape = tuple(int(s) for s in shape)
    if a.shape == shape:
        return x
    if len(shape) < a.ndim:
        raise ShapeError(f"broadcast_to: cannot broadcast {a.str_short()} to shape {shape}")
    lead = len(shape) - a.ndim
    return broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


def sum_to_aval(ct: Any, aval: ShapedArray, broadcast_dimensions: Any = None) -> Any:
    """Sum cotangent ``ct`` over broadcast axes so it matches ``aval`` (shape and dtype).

    ``broadcast_dimensions`` says where ``aval``'s axes sit in ``ct`` (default: trailing,
    as NumPy broadcasting aligns them).
    """
    ca = get_aval(ct)
    if ca.shape != aval.shape:
        nd = len(ca.shape)
        if broadcast_dimensions is None:
            broadcast_dimensions = tuple(range(nd - aval.ndim, nd))
        kept = set(broadcast_dimensions)
        axes = [i for i in range(nd) if i not in kept]
        axes += [
            dst for src, dst in enumerate(broadcast_dimensions)
            if aval.shape[src] == 1 and ca.shape[dst] != 1
        ]
        if axes:
            ct = _red.reduce_sum(ct, tuple(sorted(axes)))
        if get_aval(ct).shape != aval.shape:
            ct = reshape(ct, aval.shape)
    if ca.dtype != aval.dtype:
        if aval.dtype.kind in "fc":
            ct = _ew.convert_element_type(ct, aval.dtype)
    return ct


# =============================================================================================
# reshape


def _reshape_impl(x: Any, new_sizes: tuple[int, ...]) -> list:
    return [xp_for(x).reshape(x, new_sizes)]


def _reshape_abstract(a: ShapedArray, new_sizes) -> list[ShapedArray]:
    check_static("reshape", new_sizes=new_sizes)
    if int(numpy.prod(new_sizes, dtype=numpy.int64)) != a.size or any(s < 0 for s in new_sizes):
        raise ShapeError(
            f"reshape: cannot reshape {a.str_short()} (size {a.size}) into shape "
            f"{tuple(new_sizes)}"
        )
    return [a.update(shape=tuple(new_sizes))]


reshape_p = make_primitive("reshape", _reshape_impl, _reshape_abstract)


def reshape(x: Any, new_sizes: Any) -> Any:
    """Reshape ``x`` to ``new_sizes`` (one ``-1`` allowed, as in NumPy)."""
    a = get_aval(x)
    if isinstance(new_sizes, int | numpy.integer):
        new_sizes = (new_sizes,)
    new_sizes = tuple(int(s) for s in new_sizes)
    if -1 in new_sizes:
        known = int(numpy.prod([s for s in new_sizes if s != -1], dtype=numpy.int64))
        if new_sizes.count(-1) > 1 or known == 0 or a.size % known:
            raise ShapeError(f"reshape: cannot reshape {a.str_short()} into shape {new_sizes}")
        new_sizes = tuple(a.size // known if s == -1 else s for s in new_sizes)
    if new_sizes == a.shape:
        return x
    return bind1(reshape_p, x, new_sizes=new_sizes)


deflinear(reshape_p)
deftranspose(reshape_p, lambda ct, x, new_sizes: [reshape(ct, x.aval.shape)])


def _reshape_batch(axis_size, vals, dims, new_sizes):
    (x,), (d,) = vals, dims
    return [reshape(moveaxis(x, d, 0), (axis_size,) + tuple(new_sizes))], [0]


batching.batch_rules[reshape_p] = _reshape_batch

# =============================================================================================
# transpose (axis permutation)


def _transpose_impl(x: Any, permutation: tuple[int, ...]) -> list:
    return [xp_for(x).transpose(x, permutation)]


def _transpose_abstract(a: ShapedArray, permutation) -> list[ShapedArray]:
    check_static("transpose", permutation=permutation)
    if sorted(permutation) != list(range(a.ndim)):
        raise ShapeError(
            f"transpose: permutation {tuple(permutation)} is not a permutation of the axes "
            f"of {a.str_short()}"
        )
    return [a.update(shape=tuple(a.shape[p] for p in permutation))]


transpose_p = make_primitive("transpose", _transpose_impl, _transpose_abstract)


def transpose(x: Any, permutation: Any = None) -> Any:
    """Permute the axes of ``x`` (reverse them when ``permutation`` is None)."""
    nd = get_aval(x).ndim
    if permutation is None:
        permutation = tuple(reversed(range(nd)))
    permutation = tuple(normalize_axis("transpose", int(p), nd) for p in permutation)
    if permutation == tuple(range(nd)):
        return x
    return bind1(transpose_p, x, permutation=permutation)


def _transpose_transpose(ct, x, permutation):
    inv = tuple(int(i) for i in numpy.argsort(permutation))
    return [transpose(ct, inv)]


def _transpose_batch(axis_size, vals, dims, permutation):
    (x,), (d,) = vals, dims
    perm = (d,) + tuple(p + (p >= d) for p in permutation)
    return [transpose(x, perm)], [0]


deflinear(transpose_p)
deftranspose(transpose_p, _transpose_transpose)
batching.batch_rules[transpose_p] = _transpose_batch


def moveaxis(x: Any, source: int, destination: int) -> Any:
    """Move axis ``source`` of ``x`` to position ``destination``."""
    nd = get_aval(x).ndim
    source = normalize_axis("moveaxis", source, nd)
    destination = normalize_axis("moveaxis", destination, nd)
    if source == destination:
        return x
    perm = [i for i in range(nd) if i != source]
    perm.insert(destination, source)
    return transpose(x, tuple(perm))


__all__ = [n for n in dir() if not n.startswith("_")]
