"""Shape-manipulating ``funcgrad.lax`` operations over the primitives of ``funcgrad.ops.shape``.

Arguments are static Python ints (tuples for per-axis values), checked up front so a bad call
fails with an error naming the ``lax`` function. Dynamic start indices may be traced; as in
``jax.lax`` negative ones count from the end (``allow_negative_indices=True``), then the block is
clamped to fit.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
import funcgrad.ops.shape as _sh
from funcgrad.api_devices import device_put
from funcgrad.avals import get_aval
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.lax._common import (
    ANY,
    aval_of,
    axes_in,
    axis_in,
    same_dtypes,
    static_int,
    static_ints,
    static_shape,
)
from funcgrad.numpy._creation import with_out_sharding

Array = Any

__all__ = [
    "broadcast", "broadcast_in_dim", "reshape", "transpose", "squeeze", "expand_dims",
    "concatenate", "pad", "slice", "slice_in_dim", "index_in_dim", "dynamic_slice",
    "dynamic_slice_in_dim", "dynamic_index_in_dim", "dynamic_update_slice",
    "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim", "rev", "iota",
    "broadcasted_iota", "collapse", "full", "full_like", "empty", "split", "stack", "unstack",
    "tile", "broadcast_to_rank", "broadcast_like", "broadcast_shapes",
]


@with_out_sharding
def broadcast(operand: Array, sizes: Sequence[int]) -> Array:
    """``operand`` with new leading axes of ``sizes`` (shape ``sizes + operand.shape``).

    Example:
        >>> from funcgrad import lax
        >>> lax.broadcast(numpy.ones(3), (2,)).shape
        (2, 3)
    """
    a = aval_of("broadcast", operand)
    sizes = static_ints("broadcast", sizes, "sizes")
    return _sh.broadcast_in_dim(operand, sizes + a.shape,
                                tuple(range(len(sizes), len(sizes) + a.ndim)))


@with_out_sharding
def broadcast_in_dim(operand: Array, shape: Sequence[int],
                     broadcast_dimensions: Sequence[int]) -> Array:
    """Broadcast to ``shape``, operand axis ``i`` landing on ``broadcast_dimensions[i]``
    (distinct, in any order, as JAX).

    Example:
        >>> from funcgrad import lax
        >>> lax.broadcast_in_dim(numpy.arange(3), (3, 2), (0,)).tolist()
        [[0, 0], [1, 1], [2, 2]]
    """
    a = aval_of("broadcast_in_dim", operand)
    shape = static_ints("broadcast_in_dim", shape, "shape")
    dims = static_ints("broadcast_in_dim", broadcast_dimensions, "broadcast_dimensions")
    if len(dims) != a.ndim:
        raise TypeError(
            f"lax.broadcast_in_dim: broadcast_dimensions {dims} must have one entry per axis of "
            f"the operand (shape {a.shape})")
    for i, d in enumerate(dims):
        if not 0 <= d < len(shape) or a.shape[i] not in (1, shape[d]):
            raise TypeError(
                f"lax.broadcast_in_dim: operand shape {a.shape} cannot be broadcast to {shape} "
                f"with broadcast_dimensions {dims}")
    if len(set(dims)) != len(dims):
        raise TypeError(
            f"lax.broadcast_in_dim: broadcast_dimensions {dims} must be distinct")
    if any(b < c for c, b in zip(dims, dims[1:])):
        # JAX takes them in any order: operand axis i still lands on dims[i].
        order = tuple(sorted(range(len(dims)), key=dims.__getitem__))
        operand, dims = _sh.transpose(operand, order), tuple(sorted(dims))
    return _sh.broadcast_in_dim(operand, shape, dims)


@with_out_sharding
def reshape(operand: Array, new_sizes: Sequence[int],
            dimensions: Sequence[int] | None = None) -> Array:
    """``operand`` reshaped to ``new_sizes`` (after permuting its axes by ``dimensions``).

    Example:
        >>> from funcgrad import lax
        >>> lax.reshape(numpy.arange(6), (2, 3), None).tolist()
        [[0, 1, 2], [3, 4, 5]]
        >>> lax.reshape(numpy.arange(6).reshape(2, 3), (6,), (1, 0)).tolist()
        [0, 3, 1, 4, 2, 5]
    """
    a = aval_of("reshape", operand)
    if isinstance(new_sizes, int | numpy.integer):
        new_sizes = (new_sizes,)
    sizes = static_ints("reshape", new_sizes, "new_sizes")
    if builtins.min(sizes, default=0) < 0 or math.prod(sizes) != a.size:
        raise TypeError(
            f"lax.reshape: new_sizes {sizes} (non-negative, no -1) must have as many elements "
            f"as the operand of shape {a.shape}")
    if dimensions is not None:
        operand = transpose(operand, dimensions)
    return _sh.reshape(operand, sizes)


def transpose(operand: Array, permutation: Sequence[int]) -> Array:
    """``operand`` with its axes permuted: result axis ``i`` is operand axis ``permutation[i]``.

    Example:
        >>> from funcgrad import lax
        >>> lax.transpose(numpy.zeros((2, 3, 4)), (2, 0, 1)).shape
        (4, 2, 3)
    """
    a = aval_of("transpose", operand)
    perm = static_ints("transpose", permutation, "permutation")
    if sorted(perm) != list(range(a.ndim)):
        raise TypeError(
            f"lax.transpose: permutation {perm} is not a permutation of the {a.ndim} axes of "
            f"shape {a.shape}")
    return _sh.transpose(operand, perm)


def squeeze(array: Array, dimensions: Sequence[int]) -> Array:
    """``array`` without its size-1 axes ``dimensions``.

    Example:
        >>> from funcgrad import lax
        >>> lax.squeeze(numpy.zeros((1, 3, 1)), (0, -1)).shape
        (3,)
    """
    a = aval_of("squeeze", array, "array")
    dims = axes_in("squeeze", dimensions, a.ndim, "dimensions")
    bad = [d for d in dims if a.shape[d] != 1]
    if bad:
        raise ShapeError(
            f"lax.squeeze: dimensions {bad} of shape {a.shape} do not have size 1")
    return _sh.squeeze(array, dims)


def expand_dims(array: Array, dimensions: Sequence[int]) -> Array:
    """``array`` with size-1 axes inserted at ``dimensions`` (positions in the result).

    Example:
        >>> from funcgrad import lax
        >>> lax.expand_dims(numpy.zeros(3), (0, 2)).shape
        (1, 3, 1)
    """
    a = aval_of("expand_dims", array, "array")
    dims = static_ints("expand_dims", dimensions, "dimensions")
    axes_in("expand_dims", dims, a.ndim + len(dims), "dimensions")
    return _sh.expand_dims(array, dims)


def _is_keys(x: Any) -> bool:
    # typed key arrays (funcgrad.random.key) wrap uint32 data with the key's words as trailing
    # axes; the structural operations below take them as jax.lax's do, axes counted over keys
    return hasattr(type(x), "_trailing_ndim")


def _keys_data(name: str, x: Any, arg: str) -> tuple[Any, int]:
    if not _is_keys(x):
        raise TypeError(f"lax.{name}: {arg} must be a key array like the operand, got "
                        f"{type(x).__name__}")
    return x._data, x._trailing_ndim


def _concatenate_keys(operands: Sequence[Any], dimension: int) -> Any:
    datas = [_keys_data("concatenate", o, f"operands[{i}]")[0] for i, o in enumerate(operands)]
    nd = operands[0].ndim
    d = axis_in("concatenate", dimension, nd, "dimension")
    return operands[0]._rewrap(concatenate(datas, d))


def concatenate(operands: Sequence[Array], dimension: int) -> Array:
    """Join ``operands`` (one dtype, equal shapes off ``dimension``) along ``dimension``.

    Example:
        >>> from funcgrad import lax
        >>> lax.concatenate([numpy.zeros((2, 1)), numpy.ones((2, 2))], 1).shape
        (2, 3)
    """
    if not isinstance(operands, list | tuple) or not operands:
        raise TypeError("lax.concatenate: operands must be a non-empty sequence of arrays")
    if any(_is_keys(o) for o in operands):
        return _concatenate_keys(operands, dimension)
    avals = same_dtypes("concatenate", {f"operands[{i}]": o for i, o in enumerate(operands)},
                        ANY)
    nd = avals[0].ndim
    if nd == 0 or any(a.ndim != nd for a in avals):
        raise TypeError("lax.concatenate: operands must be arrays of one rank >= 1, got shapes "
                        + ", ".join(str(a.shape) for a in avals))
    d = axis_in("concatenate", dimension, nd, "dimension")
    off = {a.shape[:d] + a.shape[d + 1:] for a in avals}
    if len(off) > 1:
        raise TypeError(
            f"lax.concatenate: operand shapes must agree except on dimension {d}, got "
            + ", ".join(str(a.shape) for a in avals))
    return _sh.concatenate(list(operands), d)


def pad(operand: Array, padding_value: Array,
        padding_config: Sequence[tuple[int, int, int]]) -> Array:
    """Pad with the scalar ``padding_value``: ``(lo, hi, interior)`` per axis.

    ``lo``/``hi`` may be negative (cropping); ``interior`` inserts that many values between
    neighbours. ``padding_value`` has the operand's dtype (or is a fitting Python scalar).

    Example:
        >>> from funcgrad import lax
        >>> lax.pad(numpy.array([1.0, 2.0, 3.0]), 0.0, [(1, -1, 1)]).tolist()
        [0.0, 1.0, 0.0, 2.0, 0.0]
    """
    a, p = same_dtypes("pad", {"operand": operand, "padding_value": padding_value}, ANY)
    if p.shape != ():
        raise TypeError(f"lax.pad: padding_value must be a scalar, got shape {p.shape}")
    try:
        config = [static_ints("pad", c, "padding_config") for c in padding_config]
    except TypeError:
        raise TypeError(
            "lax.pad: padding_config must be a sequence of (lo, hi, interior) int triples, got "
            f"{padding_config!r}") from None
    if len(config) != a.ndim or any(len(c) != 3 for c in config):
        raise ValueError(
            f"lax.pad: padding_config needs one (lo, hi, interior) triple per axis of shape "
            f"{a.shape}, got {padding_config!r}")
    for n, (lo, hi, it) in zip(a.shape, config):
        if it < 0 or lo + hi + (n + (n - 1) * it if n else 0) < 0:
            raise ValueError(
                f"lax.pad: padding_config {padding_config!r} is invalid for shape {a.shape} "
                "(interior must be >= 0 and no axis may shrink below size 0)")
    return _sh.pad(operand, padding_value, [tuple(c) for c in config])


def slice(operand: Array, start_indices: Sequence[int], limit_indices: Sequence[int],  # noqa: A001
          strides: Sequence[int] | None = None) -> Array:
    """``operand[start:limit:stride, ...]`` with static in-bounds indices for every axis.

    Example:
        >>> from funcgrad import lax
        >>> lax.slice(numpy.arange(10), (1,), (8,), (3,)).tolist()
        [1, 4, 7]
    """
    a = aval_of("slice", operand)
    start = static_ints("slice", start_indices, "start_indices")
    limit = static_ints("slice", limit_indices, "limit_indices")
    st = (1,) * a.ndim if strides is None else static_ints("slice", strides, "strides")
    if not len(start) == len(limit) == len(st) == a.ndim:
        raise TypeError(
            f"lax.slice: start_indices {start}, limit_indices {limit} and strides {st} need one "
            f"entry per axis of shape {a.shape}")
    for n, s, lim, k in zip(a.shape, start, limit, st):
        if not 0 <= s <= lim <= n or k < 1:
            raise IndexError(
                f"lax.slice: start_indices {start}, limit_indices {limit}, strides {st} are out "
                f"of bounds for shape {a.shape} (need 0 <= start <= limit <= size, stride >= 1)")
    return _sh.static_slice(operand, start, limit, st)


def slice_in_dim(operand: Array, start_index: int | None, limit_index: int | None,
                 stride: int = 1, axis: int = 0) -> Array:
    """:func:`slice` along one ``axis``; negative indices count from the end, None is the edge.

    Example:
        >>> from funcgrad import lax
        >>> lax.slice_in_dim(numpy.arange(6).reshape(2, 3), 1, None, axis=1).tolist()
        [[1, 2], [4, 5]]
    """
    a = aval_of("slice_in_dim", operand)
    axis = axis_in("slice_in_dim", axis, a.ndim)
    n = a.shape[axis]
    s = 0 if start_index is None else static_int("slice_in_dim", start_index, "start_index")
    e = n if limit_index is None else static_int("slice_in_dim", limit_index, "limit_index")
    s, e = s + n if s < 0 else s, e + n if e < 0 else e
    starts, limits, strides = [0] * a.ndim, list(a.shape), [1] * a.ndim
    starts[axis], limits[axis] = s, e
    strides[axis] = static_int("slice_in_dim", stride, "stride")
    return slice(operand, starts, limits, strides)


def index_in_dim(operand: Array, index: int, axis: int = 0, keepdims: bool = True) -> Array:
    """The static ``index``-th slab along ``axis`` (negative counts from the end).

    Example:
        >>> from funcgrad import lax
        >>> lax.index_in_dim(numpy.arange(6).reshape(2, 3), -1, 1, False).tolist()
        [2, 5]
    """
    a = aval_of("index_in_dim", operand)
    axis = axis_in("index_in_dim", axis, a.ndim)
    n, i = a.shape[axis], static_int("index_in_dim", index, "index")
    if not -n <= i < n:
        raise IndexError(
            f"lax.index_in_dim: index {i} is out of bounds for axis {axis} of size {n}")
    out = slice_in_dim(operand, i % n, i % n + 1, 1, axis)
    return out if keepdims else _sh.squeeze(out, (axis,))


def _start_index(name: str, i: Any, n: int, allow_negative: bool) -> Any:
    a = aval_of(name, i, "start index")
    if a.shape != () or a.dtype.kind not in "iu":
        raise TypeError(f"lax.{name}: start indices must be integer scalars, got {a.str_short()}")
    if a.dtype.kind == "u":
        return i
    if not allow_negative:
        if isinstance(i, int | numpy.integer) and i < 0:
            raise ValueError(f"lax.{name}: start index {i} is out of bounds for an axis of size "
                             f"{n} with allow_negative_indices=False")
        return i
    if isinstance(i, int | numpy.integer):
        return i + n if i < 0 else i
    return _ew.select_n(_ew.lt(i, 0), i, _ew.add(i, n))


def _start_indices(name: str, start_indices: Any, shape: tuple[int, ...],
                   allow_negative: bool | Sequence[bool]) -> list[Any]:
    if hasattr(start_indices, "shape") and not isinstance(start_indices, list | tuple):
        sa = get_aval(start_indices)
        if sa.ndim != 1:
            raise TypeError(f"lax.{name}: start_indices must be a sequence or a 1-D array, got "
                            f"{sa.str_short()}")
        start_indices = [_sh.index_in_dim(start_indices, k, 0, False) for k in range(sa.shape[0])]
    start_indices = list(start_indices)
    if len(start_indices) != len(shape):
        raise TypeError(f"lax.{name}: needs one start index per axis of shape {shape}, got "
                        f"{len(start_indices)}")
    allow = [bool(allow_negative)] * len(shape) if isinstance(allow_negative, bool | int) \
        else [bool(v) for v in allow_negative]
    if len(allow) != len(shape):
        raise TypeError(f"lax.{name}: allow_negative_indices needs one bool per axis of shape "
                        f"{shape}, got {allow_negative!r}")
    return [_start_index(name, i, n, ok) for i, n, ok in zip(start_indices, shape, allow)]


def _key_starts(start_indices: Any, t: int) -> list[Any]:
    """Start indices over key axes, extended with 0 for the key's own trailing axes."""
    if hasattr(start_indices, "shape") and not isinstance(start_indices, list | tuple):
        n = get_aval(start_indices).shape[0] if get_aval(start_indices).ndim == 1 else None
        if n is None:
            raise TypeError(f"lax.dynamic_slice: start_indices must be a sequence or a 1-D "
                            f"array, got {get_aval(start_indices).str_short()}")
        start_indices = [_sh.index_in_dim(start_indices, k, 0, False) for k in range(n)]
    return [*start_indices, *([0] * t)]


def _rank_and_shape(name: str, operand: Any) -> tuple[int, tuple[int, ...]]:
    if _is_keys(operand):
        return operand.ndim, tuple(operand.shape)
    a = aval_of(name, operand)
    return a.ndim, tuple(a.shape)


def dynamic_slice(operand: Array, start_indices: Any, slice_sizes: Sequence[int], *,
                  allow_negative_indices: bool | Sequence[bool] = True) -> Array:
    """The ``slice_sizes`` block at (possibly traced) ``start_indices``, clamped to fit.

    Example:
        >>> from funcgrad import lax
        >>> lax.dynamic_slice(numpy.arange(5), (-2,), (2,)).tolist()
        [3, 4]
    """
    if _is_keys(operand):
        data, t = _keys_data("dynamic_slice", operand, "operand")
        sizes = static_ints("dynamic_slice", slice_sizes, "slice_sizes")
        words = tuple(get_aval(data).shape[-t:])
        allow = allow_negative_indices if isinstance(allow_negative_indices, bool | int) \
            else (*allow_negative_indices, *([True] * t))
        starts = _key_starts(start_indices, t)
        return operand._rewrap(dynamic_slice(data, starts, (*sizes, *words),
                                             allow_negative_indices=allow))
    a = aval_of("dynamic_slice", operand)
    sizes = static_ints("dynamic_slice", slice_sizes, "slice_sizes")
    if len(sizes) != a.ndim or any(not 0 <= z <= n for z, n in zip(sizes, a.shape)):
        raise TypeError(
            f"lax.dynamic_slice: slice_sizes {sizes} must fit in the operand shape {a.shape}")
    idx = _start_indices("dynamic_slice", start_indices, a.shape, allow_negative_indices)
    return _sh.dynamic_slice(operand, idx, sizes)


def dynamic_slice_in_dim(operand: Array, start_index: Any, slice_size: int = 1, axis: int = 0,
                         *, allow_negative_indices: bool | Sequence[bool] = True) -> Array:
    """:func:`dynamic_slice` of ``slice_size`` along one ``axis``.

    Example:
        >>> from funcgrad import lax
        >>> lax.dynamic_slice_in_dim(numpy.arange(5), 1, 3).tolist()
        [1, 2, 3]
    """
    nd, shape = _rank_and_shape("dynamic_slice_in_dim", operand)
    axis = axis_in("dynamic_slice_in_dim", axis, nd)
    starts: list[Any] = [0] * nd
    sizes = list(shape)
    starts[axis] = start_index
    sizes[axis] = static_int("dynamic_slice_in_dim", slice_size, "slice_size")
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand: Array, index: Any, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool | Sequence[bool] = True) -> Array:
    """The slab at (possibly traced) ``index`` along ``axis``.

    Example:
        >>> from funcgrad import lax
        >>> lax.dynamic_index_in_dim(numpy.arange(6).reshape(3, 2), 1, keepdims=False).tolist()
        [2, 3]
    """
    nd, _ = _rank_and_shape("dynamic_index_in_dim", operand)
    axis = axis_in("dynamic_index_in_dim", axis, nd)
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    if keepdims:
        return out
    if _is_keys(out):
        return out._rewrap(_sh.squeeze(out._data, (axis,)))
    return _sh.squeeze(out, (axis,))


def dynamic_update_slice(operand: Array, update: Array, start_indices: Any, *,
                         allow_negative_indices: bool | Sequence[bool] = True) -> Array:
    """``operand`` with ``update`` (same dtype and rank) written at clamped ``start_indices``.

    Example:
        >>> from funcgrad import lax
        >>> lax.dynamic_update_slice(numpy.zeros(4), numpy.ones(2), (1,)).tolist()
        [0.0, 1.0, 1.0, 0.0]
    """
    if _is_keys(operand):
        data, t = _keys_data("dynamic_update_slice", operand, "operand")
        udata, _ = _keys_data("dynamic_update_slice", update, "update")
        allow = allow_negative_indices if isinstance(allow_negative_indices, bool | int) \
            else (*allow_negative_indices, *([True] * t))
        return operand._rewrap(dynamic_update_slice(data, udata, _key_starts(start_indices, t),
                                                    allow_negative_indices=allow))
    a = aval_of("dynamic_update_slice", operand)
    u = aval_of("dynamic_update_slice", update, "update")
    if u.dtype != a.dtype:
        raise DTypeError(
            f"lax.dynamic_update_slice: update dtype {u.dtype} must equal the operand's "
            f"{a.dtype}")
    if u.ndim != a.ndim or any(s > n for s, n in zip(u.shape, a.shape)):
        raise TypeError(
            f"lax.dynamic_update_slice: update shape {u.shape} must have the operand's rank and "
            f"fit in its shape {a.shape}")
    idx = _start_indices("dynamic_update_slice", start_indices, a.shape, allow_negative_indices)
    return _sh.dynamic_update_slice(operand, update, idx)


def dynamic_update_slice_in_dim(operand: Array, update: Array, start_index: Any, axis: int, *,
                                allow_negative_indices: bool | Sequence[bool] = True) -> Array:
    """:func:`dynamic_update_slice` at ``start_index`` along ``axis`` (0 on other axes).

    Example:
        >>> from funcgrad import lax
        >>> lax.dynamic_update_slice_in_dim(numpy.zeros(3), numpy.ones(1), -1, 0).tolist()
        [0.0, 0.0, 1.0]
    """
    nd, _ = _rank_and_shape("dynamic_update_slice_in_dim", operand)
    axis = axis_in("dynamic_update_slice_in_dim", axis, nd)
    starts: list[Any] = [0] * nd
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts,
                                allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand: Array, update: Array, index: Any, axis: int, *,
                                allow_negative_indices: bool | Sequence[bool] = True) -> Array:
    """Write the slab ``update`` (with or without the size-1 ``axis``) at ``index``.

    Example:
        >>> from funcgrad import lax
        >>> lax.dynamic_update_index_in_dim(numpy.zeros((2, 2)), numpy.ones(2), 1, 0).tolist()
        [[0.0, 0.0], [1.0, 1.0]]
    """
    nd, _ = _rank_and_shape("dynamic_update_index_in_dim", operand)
    axis = axis_in("dynamic_update_index_in_dim", axis, nd)
    if _rank_and_shape("dynamic_update_index_in_dim", update)[0] == nd - 1:
        update = (update._rewrap(_sh.expand_dims(update._data, (axis,))) if _is_keys(update)
                  else _sh.expand_dims(update, (axis,)))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


def rev(operand: Array, dimensions: Sequence[int]) -> Array:
    """``operand`` reversed along the axes ``dimensions``.

    Example:
        >>> from funcgrad import lax
        >>> lax.rev(numpy.arange(4).reshape(2, 2), (1,)).tolist()
        [[1, 0], [3, 2]]
    """
    a = aval_of("rev", operand)
    return _sh.rev(operand, axes_in("rev", dimensions, a.ndim, "dimensions"))


def iota(dtype: Any, size: int) -> Array:
    """The 1-D array ``0, 1, ..., size - 1`` of ``dtype``.

    Example:
        >>> from funcgrad import lax
        >>> lax.iota(numpy.int32, 3)
        array([0, 1, 2], dtype=int32)
    """
    return _sh.iota(numpy.dtype(dtype), (static_int("iota", size, "size"),), 0)


@with_out_sharding
def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int) -> Array:
    """An array of ``shape`` counting ``0, 1, ...`` along ``dimension``.

    Example:
        >>> from funcgrad import lax
        >>> lax.broadcasted_iota(numpy.int64, (2, 3), 0).tolist()
        [[0, 0, 0], [1, 1, 1]]
    """
    shape = static_shape("broadcasted_iota", shape)
    if isinstance(dimension, int | numpy.integer) and dimension < 0:
        # JAX takes no negative dimension here (an error, not counted from the end)
        raise ValueError(f"lax.broadcasted_iota: iota dimension must be between 0 and "
                         f"len(shape), got dimension={dimension} for shape={shape}")
    dim = axis_in("broadcasted_iota", dimension, len(shape), "dimension")
    return _sh.iota(numpy.dtype(dtype), shape, dim)


def collapse(operand: Array, start_dimension: int, stop_dimension: int | None = None) -> Array:
    """Merge the axes ``start_dimension:stop_dimension`` (to the end when None) into one.

    Example:
        >>> from funcgrad import lax
        >>> lax.collapse(numpy.zeros((2, 3, 4)), 1).shape
        (2, 12)
    """
    a = aval_of("collapse", operand)
    nd = a.ndim
    lo = static_int("collapse", start_dimension, "start_dimension")
    hi = nd if stop_dimension is None else static_int("collapse", stop_dimension,
                                                      "stop_dimension")
    lo, hi = lo + nd if lo < 0 else lo, hi + nd if hi < 0 else hi
    if not 0 <= lo <= hi <= nd:
        raise ValueError(
            f"lax.collapse: dimensions [{start_dimension}, {stop_dimension}) are out of range "
            f"for shape {a.shape}")
    shape = a.shape[:lo] + (math.prod(a.shape[lo:hi]),) + a.shape[hi:]
    return _sh.reshape(operand, shape)


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None, *,
         sharding: Any = None) -> Array:
    """An array of ``shape`` filled with the scalar ``fill_value`` (of ``dtype`` if given);
    JAX's ``sharding`` (a ``Sharding``) places it (one device here).

    Example:
        >>> from funcgrad import lax
        >>> lax.full((2,), 3, numpy.float32).tolist()
        [3.0, 3.0]
    """
    shape = static_shape("full", shape)
    if aval_of("full", fill_value, "fill_value").shape != ():
        raise TypeError("lax.full: fill_value must be a scalar")
    out = _sh.full(shape, fill_value, dtype)
    return out if sharding is None else device_put(out, sharding)


def full_like(x: Array, fill_value: Any, dtype: Any = None,
              shape: Sequence[int] | None = None, sharding: Any = None) -> Array:
    """An array like ``x`` (its shape and dtype unless given) filled with ``fill_value``;
    JAX's ``sharding`` (a ``Sharding``) places it (one device here).

    Example:
        >>> from funcgrad import lax
        >>> lax.full_like(numpy.zeros(2, numpy.int32), 7).tolist()
        [7, 7]
    """
    a = aval_of("full_like", x, "x")
    return full(a.shape if shape is None else shape, fill_value,
                a.dtype if dtype is None else dtype, sharding=sharding)


@with_out_sharding
def empty(shape: Sequence[int], dtype: Any) -> Array:
    """An array of ``shape`` and ``dtype`` whose values do not matter (zeros here), as
    ``jax.lax.empty``.

    Example:
        >>> from funcgrad import lax
        >>> lax.empty((2, 3), numpy.float32).shape
        (2, 3)
    """
    return full(shape, 0, numpy.dtype(dtype))


def split(operand: Array, sizes: Sequence[int], axis: int = 0) -> list[Array]:
    """``operand`` cut along ``axis`` into consecutive pieces of ``sizes`` (which must add up
    to that axis), as ``jax.lax.split``.

    Example:
        >>> from funcgrad import lax
        >>> [p.tolist() for p in lax.split(numpy.arange(5), (2, 0, 3))]
        [[0, 1], [], [2, 3, 4]]
    """
    a = aval_of("split", operand)
    ax = axis_in("split", axis, a.ndim)
    sizes = static_ints("split", sizes, "sizes")
    if any(n < 0 for n in sizes) or sum(sizes) != a.shape[ax]:
        raise ShapeError(f"lax.split: sizes {sizes} must be non-negative and add up to axis "
                         f"{ax} of shape {a.shape}")
    pieces, start = [], 0
    for n in sizes:
        pieces.append(_sh.slice_in_dim(operand, start, start + n, 1, ax))
        start += n
    return list(pieces)  # a list, as JAX's (the same pytree)


def stack(operands: Sequence[Array], axis: int = 0) -> Array:
    """Arrays of one shape and dtype joined along a new ``axis``, as ``jax.lax.stack``.

    Example:
        >>> from funcgrad import lax
        >>> lax.stack([numpy.zeros(2), numpy.ones(2)], axis=1).tolist()
        [[0.0, 1.0], [0.0, 1.0]]
    """
    if not isinstance(operands, list | tuple) or not operands:
        raise TypeError("lax.stack: operands must be a non-empty sequence of arrays")
    nd = aval_of("stack", operands[0]).ndim
    ax = axis_in("stack", axis, nd + 1)
    return concatenate([expand_dims(x, (ax,)) for x in operands], ax)


def unstack(x: Array, axis: int = 0) -> tuple[Array, ...]:
    """The slices of ``x`` along ``axis``, as a tuple, as ``jax.lax.unstack``.

    Example:
        >>> from funcgrad import lax
        >>> [p.tolist() for p in lax.unstack(numpy.arange(4).reshape(2, 2), axis=1)]
        [[0, 2], [1, 3]]
    """
    a = aval_of("unstack", x, "x")
    ax = axis_in("unstack", axis, a.ndim)
    return tuple(_sh.index_in_dim(x, i, ax, False) for i in range(a.shape[ax]))


def tile(operand: Array, reps: Sequence[int]) -> Array:
    """``operand`` repeated ``reps[i]`` times along each axis ``i`` (one entry per axis), as
    ``jax.lax.tile``.

    Example:
        >>> from funcgrad import lax
        >>> lax.tile(numpy.array([[1, 2]]), (2, 2)).tolist()
        [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    a = aval_of("tile", operand)
    reps = static_ints("tile", reps, "reps")
    if len(reps) != a.ndim or any(r < 0 for r in reps):
        raise TypeError(f"lax.tile: reps {reps} needs one non-negative count per axis of shape "
                        f"{a.shape}")
    # Broadcast a new axis before each one, then merge the pairs: copies in row-major order.
    spread = tuple(d for r, n in zip(reps, a.shape) for d in (r, n))
    out = _sh.broadcast_in_dim(operand, spread, tuple(range(1, 2 * a.ndim, 2)))
    return _sh.reshape(out, tuple(r * n for r, n in zip(reps, a.shape)))


def broadcast_to_rank(x: Array, rank: int) -> Array:
    """``x`` with leading unit axes added up to ``rank`` (unchanged if it has that many), as
    ``jax.lax.broadcast_to_rank``.

    Example:
        >>> from funcgrad import lax
        >>> lax.broadcast_to_rank(numpy.ones(3), 3).shape
        (1, 1, 3)
    """
    a = aval_of("broadcast_to_rank", x, "x")
    rank = static_int("broadcast_to_rank", rank, "rank")
    if a.ndim >= rank:
        return _ew.strong(x)
    return _sh.reshape(x, (1,) * (rank - a.ndim) + tuple(a.shape))


def broadcast_like(arr: Array, like_arr: Array) -> Array:
    """``arr`` broadcast (NumPy's rules) to the shape of ``like_arr``.

    Example:
        >>> from funcgrad import lax
        >>> lax.broadcast_like(numpy.arange(2), numpy.zeros((3, 2))).shape
        (3, 2)
    """
    a, like = aval_of("broadcast_like", arr, "arr"), aval_of("broadcast_like", like_arr)
    shape = tuple(like.shape)
    if a.ndim > len(shape) or any(n not in (1, m) for n, m in zip(a.shape[::-1], shape[::-1])):
        raise ShapeError(f"lax.broadcast_like: shape {a.shape} cannot broadcast to {shape}")
    return _sh.broadcast_in_dim(arr, shape, tuple(range(len(shape) - a.ndim, len(shape))))


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape NumPy's broadcasting gives ``shapes`` (a ``ValueError`` if they do not
    broadcast), as ``jax.lax.broadcast_shapes``.

    Example:
        >>> from funcgrad import lax
        >>> lax.broadcast_shapes((2, 1), (3,))
        (2, 3)
    """
    shapes = [static_ints("broadcast_shapes", s, "shape") for s in shapes]
    try:
        return tuple(int(n) for n in numpy.broadcast_shapes(*shapes))
    except ValueError:
        raise ShapeError(f"lax.broadcast_shapes: incompatible shapes {shapes}") from None
