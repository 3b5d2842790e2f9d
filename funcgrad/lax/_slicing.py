"""XLA's gather and scatter with ``jax.lax``'s dimension numbers, over the NumPy-indexing
gather/scatter primitives of :mod:`funcgrad.ops.gather` and :mod:`funcgrad.ops.scatter`.

A general gather takes, for every index vector of ``start_indices`` (the last axis, as in
JAX), the ``slice_sizes`` block of ``operand`` starting there. It is rewritten as one
element-wise advanced index: one integer array per operand axis (start + offset within the
block, batching axes by position), broadcast to ``batch shape + window shape``; the result
is then transposed so the window axes sit at ``offset_dims``. A scatter is the mirror image.
Being compositions of primitives, all of them differentiate (gather/scatter_add to any
order), batch and jit. Out-of-bounds blocks follow :class:`GatherScatterMode`: ``CLIP``
moves the start so the block fits, ``FILL_OR_DROP`` fills (gather) or drops (scatter) the
whole block, ``PROMISE_IN_BOUNDS`` clamps gathers and drops scatters, as XLA does;
``ONE_HOT`` (a read mode) fills gathers with 0 and is refused by scatters.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy

import funcgrad.ops.elementwise as _ew
import funcgrad.ops.reductions as _red
import funcgrad.ops.shape as _sh
from funcgrad.avals import ShapedArray
from funcgrad.backend import default_device, get_default_device
from funcgrad.core import Tracer
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.lax._common import aval_of, static_ints
from funcgrad.ops import gather as _ga
from funcgrad.ops import scatter as _sc
from funcgrad.ops.control_flow import while_loop
from funcgrad.ops.indexing import GatherScatterMode, Operand

Array = Any

__all__ = [
    "GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode", "gather",
    "scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min", "scatter_max",
    "scatter_apply", "index_take",
]

_INT64 = numpy.dtype("int64")


class GatherDimensionNumbers(NamedTuple):
    """How the axes of ``operand``, ``start_indices`` and the output of :func:`gather` relate
    (``jax.lax.GatherDimensionNumbers``; the index vector is the last axis of the indices).

    ``offset_dims``: output axes holding the block axes that are kept; ``collapsed_slice_dims``:
    operand axes of block size 1 left out of the output; ``start_index_map``: the operand axis
    of each component of an index vector; ``operand_batching_dims`` /
    ``start_indices_batching_dims``: operand and index axes that are matched position by
    position (as if vmapped).

    Example:
        >>> GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
        ...                        start_index_map=(0,)).offset_dims
        (1,)
    """

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """How the axes of ``operand``, ``scatter_indices`` and ``updates`` relate
    (``jax.lax.ScatterDimensionNumbers``; the index vector is the last axis of the indices).

    ``update_window_dims``: axes of ``updates`` that are block axes; ``inserted_window_dims``:
    operand axes of block size 1 absent from ``updates``; ``scatter_dims_to_operand_dims``:
    the operand axis of each component of an index vector; ``operand_batching_dims`` /
    ``scatter_indices_batching_dims``: operand and index axes matched position by position.

    Example:
        >>> ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
        ...                         scatter_dims_to_operand_dims=(0,)).inserted_window_dims
        (0,)
    """

    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()


# ---------------------------------------------------------------------------------------------
# Checks shared by gather and scatter


def _dims(name: str, v: Any, arg: str, ndim: int, *, ordered: bool = True) -> tuple[int, ...]:
    out = static_ints(name, v, arg)
    if len(set(out)) != len(out):
        raise ValueError(f"lax.{name}: {arg}={out} has repeated dimensions")
    if any(not 0 <= d < ndim for d in out):
        raise ValueError(f"lax.{name}: {arg}={out} must be dimensions in [0, {ndim})")
    if ordered and list(out) != sorted(out):
        raise ValueError(f"lax.{name}: {arg}={out} must be in ascending order")
    return out


def _indices_aval(name: str, indices: Any, arg: str) -> ShapedArray:
    a = aval_of(name, indices, arg)
    if a.dtype.kind not in "iu":
        raise DTypeError(f"lax.{name}: {arg} must have an integer dtype, got {a.dtype}")
    if a.ndim == 0:
        raise ShapeError(
            f"lax.{name}: {arg} needs the index vector as its last axis; got a scalar (add a "
            "trailing axis of size 1)")
    return a


class _Blocks(NamedTuple):
    """One index array per operand axis, shaped ``batch shape + window shape``."""

    arrays: list[Any]
    batch_shape: tuple[int, ...]
    window_axes: tuple[int, ...]     # operand axes of the window, in order
    window_sizes: tuple[int, ...]


def _block_indices(name: str, shape: tuple[int, ...], indices: Any, ia: ShapedArray,
                   *rest: Any, **kw: Any) -> _Blocks:
    # The index arrays (iotas, constants) go where the indices live, not to the default
    # device: host indices with a device default would otherwise mix devices.
    with default_device(ia.device or get_default_device()):
        return _block_indices_here(name, shape, indices, ia, *rest, **kw)


def _block_indices_here(
    name: str, shape: tuple[int, ...], indices: Any, ia: ShapedArray,
    index_map: tuple[int, ...], sizes: tuple[int, ...], squeezed: tuple[int, ...],
    op_batch: tuple[int, ...], idx_batch: tuple[int, ...], mode: GatherScatterMode,
    scatter: bool,
) -> _Blocks:
    """The element-wise index arrays of the blocks at ``indices``; out-of-bounds blocks are
    clamped (CLIP; PROMISE_IN_BOUNDS for gathers) or pointed wholly out of range (to be
    filled or dropped by the primitive's ``mode="fill"``)."""
    batch_shape = tuple(ia.shape[:-1])
    b = len(batch_shape)
    window_axes = tuple(d for d in range(len(shape)) if d not in squeezed and d not in op_batch)
    window_sizes = tuple(sizes[d] for d in window_axes)
    full = batch_shape + window_sizes
    idx = _ew.convert_element_type(indices, _INT64)
    clamp = mode.index_mode(scatter=scatter) == "clamp"
    valid = None
    starts: dict[int, Any] = {}
    for k, d in enumerate(index_map):
        s = _sh.squeeze(_sh.slice_in_dim(idx, k, k + 1, 1, b), (b,))
        hi = shape[d] - sizes[d]
        if clamp:
            s = _ew.clamp(0, s, hi)
        else:
            ok = _ew.and_(_ew.ge(s, 0), _ew.le(s, hi))
            valid = ok if valid is None else _ew.and_(valid, ok)
        starts[d] = s
    arrays = []
    for d in range(len(shape)):
        if d in op_batch:
            j = idx_batch[op_batch.index(d)]
            a = _sh.iota(_INT64, full, j)
        else:
            a = None
            if d in starts:
                a = _sh.broadcast_in_dim(starts[d], full, tuple(range(b)))
            if d in window_axes:
                off = _sh.iota(_INT64, full, b + window_axes.index(d))
                a = off if a is None else _ew.add(a, off)
            elif a is None:
                a = _sh.broadcast_in_dim(_ew.convert_element_type(0, _INT64), full, ())
        arrays.append(a)
    if valid is not None and arrays:
        # Every element of a bad block is sent out of range on one axis: the whole block is
        # filled (gather) or dropped (scatter), never a part of it.
        d0 = index_map[0]
        bad = _sh.broadcast_in_dim(_ew.convert_element_type(shape[d0], _INT64), full, ())
        arrays[d0] = _ew.select_n(_sh.broadcast_in_dim(valid, full, tuple(range(b))), bad,
                                  arrays[d0])
    return _Blocks(arrays, batch_shape, window_axes, window_sizes)


def _check_batching(name: str, shape, ia, op_batch, idx_batch, arg: str) -> None:
    if len(op_batch) != len(idx_batch):
        raise ValueError(
            f"lax.{name}: operand_batching_dims {op_batch} and {arg} {idx_batch} must have "
            "the same length")
    for d, j in zip(op_batch, idx_batch):
        if j == ia.ndim - 1:
            raise ValueError(f"lax.{name}: {arg} cannot include the index vector dimension")
        if shape[d] != ia.shape[j]:
            raise ShapeError(
                f"lax.{name}: operand batching dimension {d} (size {shape[d]}) and index "
                f"batching dimension {j} (size {ia.shape[j]}) differ")


def _operands(n: int) -> tuple:
    return tuple(Operand(k) for k in range(n))


# ---------------------------------------------------------------------------------------------
# gather


def gather(operand: Array, start_indices: Array, dimension_numbers: GatherDimensionNumbers,
           slice_sizes: Sequence[int], *, unique_indices: bool = False,
           indices_are_sorted: bool = False, mode: str | GatherScatterMode | None = None,
           fill_value: Any = None) -> Array:
    """XLA's gather: the ``slice_sizes`` blocks of ``operand`` at ``start_indices``.

    ``mode=None`` is ``PROMISE_IN_BOUNDS`` (blocks are clamped into range, as XLA does);
    ``"clip"`` clamps; ``"fill"`` gives ``fill_value`` (default: NaN, the dtype's extreme
    integer, True) for every element of a block that does not fit. ``unique_indices`` and
    ``indices_are_sorted`` are accepted hints.

    Example:
        >>> import numpy as np
        >>> from funcgrad import lax
        >>> x = np.array([10, 11, 12])
        >>> dn = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,),
        ...                                 start_index_map=(0,))
        >>> lax.gather(x, np.array([[2], [0], [5]]), dn, (1,)).tolist()
        [12, 10, 12]
        >>> lax.gather(x, np.array([[2], [5]]), dn, (1,), mode="fill", fill_value=-1).tolist()
        [12, -1]
    """
    name = "gather"
    if not isinstance(dimension_numbers, GatherDimensionNumbers):
        raise TypeError(
            f"lax.gather: dimension_numbers must be a lax.GatherDimensionNumbers, got "
            f"{type(dimension_numbers).__name__}")
    oa = aval_of(name, operand)
    ia = _indices_aval(name, start_indices, "start_indices")
    shape = oa.shape
    n = oa.ndim
    sizes = static_ints(name, slice_sizes, "slice_sizes")
    if len(sizes) != n or any(not 0 <= z <= s for z, s in zip(sizes, shape)):
        raise ShapeError(
            f"lax.gather: slice_sizes {sizes} must have one size per operand axis, each "
            f"between 0 and that axis of {shape}")
    dn = dimension_numbers
    collapsed = _dims(name, dn.collapsed_slice_dims, "collapsed_slice_dims", n)
    op_batch = _dims(name, dn.operand_batching_dims, "operand_batching_dims", n)
    idx_batch = _dims(name, dn.start_indices_batching_dims, "start_indices_batching_dims",
                      ia.ndim, ordered=False)
    index_map = _dims(name, dn.start_index_map, "start_index_map", n, ordered=False)
    if len(index_map) != ia.shape[-1]:
        raise ShapeError(
            f"lax.gather: start_index_map {index_map} needs one entry per component of the "
            f"index vectors (the last axis of start_indices, size {ia.shape[-1]})")
    if set(collapsed) & set(op_batch) or set(index_map) & set(op_batch):
        raise ValueError(
            "lax.gather: operand_batching_dims must not be collapsed_slice_dims or in "
            "start_index_map")
    for d in collapsed + op_batch:
        if sizes[d] > 1:
            raise ShapeError(
                f"lax.gather: slice_sizes[{d}]={sizes[d]} must be at most 1 for a collapsed or "
                "batching operand dimension")
    _check_batching(name, shape, ia, op_batch, idx_batch, "start_indices_batching_dims")
    batch_rank = ia.ndim - 1
    n_window = n - len(collapsed) - len(op_batch)
    offset = _dims(name, dn.offset_dims, "offset_dims", batch_rank + n_window)
    if len(offset) != n_window:
        raise ShapeError(
            f"lax.gather: offset_dims {offset} must name {n_window} output dimensions (the "
            "operand dimensions that are neither collapsed nor batching)")
    m = GatherScatterMode.from_any(mode if mode is not None else "promise_in_bounds")
    blocks = _block_indices(name, shape, start_indices, ia, index_map, sizes, collapsed,
                            op_batch, idx_batch, m, scatter=False)
    if m.index_mode(scatter=False) == "fill":
        out = _ga.gather_canonical(operand, *blocks.arrays, indexer=_operands(n), mode="fill",
                                   fill_value=m.read_fill_value(oa.dtype, fill_value))
    else:
        out = _ga.gather_canonical(operand, *blocks.arrays, indexer=_operands(n),
                                   mode="clamp")
    # ``out`` is (batch..., window...); the window axes go to ``offset_dims``.
    out_rank = batch_rank + n_window
    perm, bi = [], 0
    for p in range(out_rank):
        if p in offset:
            perm.append(batch_rank + offset.index(p))
        else:
            perm.append(bi)
            bi += 1
    return _sh.transpose(out, tuple(perm)) if perm != list(range(out_rank)) else out


# ---------------------------------------------------------------------------------------------
# scatter family


def _scatter(name: str, prim_fn: Callable[..., Any], operand: Array, scatter_indices: Array,
             updates: Array, dimension_numbers: ScatterDimensionNumbers, mode: Any) -> Array:
    if not isinstance(dimension_numbers, ScatterDimensionNumbers):
        raise TypeError(
            f"lax.{name}: dimension_numbers must be a lax.ScatterDimensionNumbers, got "
            f"{type(dimension_numbers).__name__}")
    oa = aval_of(name, operand)
    ia = _indices_aval(name, scatter_indices, "scatter_indices")
    ua = aval_of(name, updates, "updates")
    if ua.dtype != oa.dtype:
        raise DTypeError(
            f"lax.{name}: updates dtype {ua.dtype} must equal the operand dtype {oa.dtype}; "
            "convert them with lax.convert_element_type")
    shape, n = oa.shape, oa.ndim
    dn = dimension_numbers
    window_dims = _dims(name, dn.update_window_dims, "update_window_dims", ua.ndim)
    inserted = _dims(name, dn.inserted_window_dims, "inserted_window_dims", n)
    op_batch = _dims(name, dn.operand_batching_dims, "operand_batching_dims", n)
    idx_batch = _dims(name, dn.scatter_indices_batching_dims, "scatter_indices_batching_dims",
                      ia.ndim, ordered=False)
    index_map = _dims(name, dn.scatter_dims_to_operand_dims, "scatter_dims_to_operand_dims",
                      n, ordered=False)
    if len(index_map) != ia.shape[-1]:
        raise ShapeError(
            f"lax.{name}: scatter_dims_to_operand_dims {index_map} needs one entry per "
            f"component of the index vectors (size {ia.shape[-1]})")
    if set(inserted) & set(op_batch) or set(index_map) & set(op_batch):
        raise ValueError(
            f"lax.{name}: operand_batching_dims must not be inserted_window_dims or in "
            "scatter_dims_to_operand_dims")
    _check_batching(name, shape, ia, op_batch, idx_batch, "scatter_indices_batching_dims")
    window_axes = tuple(d for d in range(n) if d not in inserted and d not in op_batch)
    if len(window_axes) != len(window_dims):
        raise ShapeError(
            f"lax.{name}: update_window_dims {window_dims} must name {len(window_axes)} "
            "updates dimensions (the operand dimensions neither inserted nor batching)")
    scatter_dims = tuple(d for d in range(ua.ndim) if d not in window_dims)
    batch_shape = tuple(ia.shape[:-1])
    if tuple(ua.shape[d] for d in scatter_dims) != batch_shape:
        raise ShapeError(
            f"lax.{name}: the scatter dimensions {scatter_dims} of updates {ua.shape} must "
            f"have the batch shape of scatter_indices {batch_shape}")
    sizes = [1] * n
    for d, w in zip(window_axes, window_dims):
        if ua.shape[w] > shape[d]:
            raise ShapeError(
                f"lax.{name}: update window dimension {w} (size {ua.shape[w]}) is larger "
                f"than operand dimension {d} (size {shape[d]})")
        sizes[d] = ua.shape[w]
    m = GatherScatterMode.from_any(mode)
    try:
        prim_mode = m.index_mode(scatter=True)
    except ValueError as e:
        raise ValueError(f"lax.{name}: {e}") from None
    blocks = _block_indices(name, shape, scatter_indices, ia, index_map, tuple(sizes),
                            inserted, op_batch, idx_batch, m, scatter=True)
    perm = scatter_dims + window_dims
    u = _sh.transpose(updates, perm) if perm != tuple(range(ua.ndim)) else updates
    return prim_fn(operand, u, *blocks.arrays, indexer=_operands(n), mode=prim_mode)


_SCATTER_DOC = """

    ``updates`` has the scatter dimensions (the batch shape of ``scatter_indices``) and the
    ``update_window_dims``; its dtype must be the operand's. ``mode=None`` is
    ``FILL_OR_DROP`` (blocks that do not fit are dropped whole); ``"clip"`` moves them into
    range. ``indices_are_sorted`` and ``unique_indices`` are accepted hints.
"""


def scatter(operand: Array, scatter_indices: Array, updates: Array,
            dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: str | GatherScatterMode | None = None) -> Array:
    """XLA's scatter: ``operand`` with the blocks of ``updates`` written at ``scatter_indices``
    (the last of repeated writes wins).

    Example:
        >>> import numpy as np
        >>> from funcgrad import lax
        >>> dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
        ...                                  scatter_dims_to_operand_dims=(0,))
        >>> lax.scatter(np.zeros(5), np.array([[1], [2], [4]]), np.array([2., 3., 4.]),
        ...             dn).tolist()
        [0.0, 2.0, 3.0, 0.0, 4.0]
    """
    return _scatter("scatter", _sc.scatter, operand, scatter_indices, updates,
                    dimension_numbers, mode)


def scatter_add(operand: Array, scatter_indices: Array, updates: Array,
                dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
                unique_indices: bool = False,
                mode: str | GatherScatterMode | None = None) -> Array:
    """XLA's scatter with addition: repeated indices accumulate.

    Example:
        >>> import numpy as np
        >>> from funcgrad import lax
        >>> dn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
        ...                                  scatter_dims_to_operand_dims=(0,))
        >>> lax.scatter_add(np.zeros((3, 2)), np.array([[2], [2], [9]]), np.ones((3, 2)),
        ...                 dn).tolist()
        [[0.0, 0.0], [0.0, 0.0], [2.0, 2.0]]
    """
    return _scatter("scatter_add", _sc.scatter_add, operand, scatter_indices, updates,
                    dimension_numbers, mode)


def scatter_sub(operand: Array, scatter_indices: Array, updates: Array,
                dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
                unique_indices: bool = False,
                mode: str | GatherScatterMode | None = None) -> Array:
    """XLA's scatter with subtraction: ``scatter_add`` of ``-updates``.

    Example:
        >>> import numpy as np
        >>> from funcgrad import lax
        >>> dn = lax.ScatterDimensionNumbers((), (0,), (0,))
        >>> lax.scatter_sub(np.ones(3), np.array([[0], [0]]), np.ones(2), dn).tolist()
        [-1.0, 1.0, 1.0]
    """
    aval_of("scatter_sub", updates, "updates")
    return _scatter("scatter_sub", _sc.scatter_add, operand, scatter_indices,
                    _ew.neg(updates), dimension_numbers, mode)


def scatter_mul(operand: Array, scatter_indices: Array, updates: Array,
                dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
                unique_indices: bool = False,
                mode: str | GatherScatterMode | None = None) -> Array:
    """XLA's scatter with multiplication: repeated indices multiply in turn.

    Example:
        >>> import numpy as np
        >>> from funcgrad import lax
        >>> dn = lax.ScatterDimensionNumbers((), (0,), (0,))
        >>> lax.scatter_mul(np.ones(3), np.array([[1], [1]]), np.array([2., 3.]), dn).tolist()
        [1.0, 6.0, 1.0]
    """
    return _scatter("scatter_mul", _sc.scatter_mul, operand, scatter_indices, updates,
                    dimension_numbers, mode)


def scatter_min(operand: Array, scatter_indices: Array, updates: Array,
                dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
                unique_indices: bool = False,
                mode: str | GatherScatterMode | None = None) -> Array:
    """XLA's scatter with minimum.

    Example:
        >>> import numpy as np
        >>> from funcgrad import lax
        >>> dn = lax.ScatterDimensionNumbers((), (0,), (0,))
        >>> lax.scatter_min(np.ones(3), np.array([[1], [1]]), np.array([2., -3.]), dn).tolist()
        [1.0, -3.0, 1.0]
    """
    return _scatter("scatter_min", _sc.scatter_min, operand, scatter_indices, updates,
                    dimension_numbers, mode)


def scatter_max(operand: Array, scatter_indices: Array, updates: Array,
                dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
                unique_indices: bool = False,
                mode: str | GatherScatterMode | None = None) -> Array:
    """XLA's scatter with maximum.

    Example:
        >>> import numpy as np
        >>> from funcgrad import lax
        >>> dn = lax.ScatterDimensionNumbers((), (0,), (0,))
        >>> lax.scatter_max(np.ones(3), np.array([[1], [1]]), np.array([2., -3.]), dn).tolist()
        [1.0, 2.0, 1.0]
    """
    return _scatter("scatter_max", _sc.scatter_max, operand, scatter_indices, updates,
                    dimension_numbers, mode)


for _f in (scatter, scatter_add, scatter_sub, scatter_mul, scatter_min, scatter_max):
    _f.__doc__ = _f.__doc__.replace("\n\n    Example:", _SCATTER_DOC + "\n    Example:", 1)


def scatter_apply(operand: Array, scatter_indices: Array, func: Callable[[Array], Array],
                  dimension_numbers: ScatterDimensionNumbers, *,
                  update_shape: Sequence[int] = (), indices_are_sorted: bool = False,
                  unique_indices: bool = False,
                  mode: str | GatherScatterMode | None = None) -> Array:
    """``operand`` with the elementwise ``func`` applied at the scattered positions, once per
    update naming a position (so twice where two updates name it), as XLA does.

    ``update_shape`` is the shape the updates would have (scatter dims and window dims).

    Example:
        >>> import numpy as np
        >>> from funcgrad import lax
        >>> dn = lax.ScatterDimensionNumbers((), (0,), (0,))
        >>> lax.scatter_apply(np.ones(4), np.array([[1], [3], [3]]), lambda v: v * 2, dn,
        ...                   update_shape=(3,)).tolist()
        [1.0, 2.0, 1.0, 4.0]
    """
    oa = aval_of("scatter_apply", operand)
    shape = static_ints("scatter_apply", update_shape, "update_shape")
    ones = _sh.broadcast_in_dim(_ew.convert_element_type(1, _INT64), shape, ())
    zeros = _sh.broadcast_in_dim(_ew.convert_element_type(0, _INT64), oa.shape, ())
    count = _scatter("scatter_apply", _sc.scatter_add, zeros, scatter_indices, ones,
                     dimension_numbers, mode)
    most = _red.reduce_max(count) if oa.size else 0
    if not isinstance(most, Tracer) and not isinstance(count, Tracer):
        out = operand
        for k in range(int(most)):
            out = _ew.select_n(_ew.gt(count, k), out, func(out))
        return out

    def cond(state: tuple) -> Any:
        return _ew.lt(state[0], most)

    def body(state: tuple) -> tuple:
        k, out = state
        return _ew.add(k, 1), _ew.select_n(_ew.gt(count, k), out, func(out))

    return while_loop(cond, body, (_ew.convert_element_type(0, _INT64), operand))[1]


def index_take(src: Any, idxs: Sequence[Any], axes: Sequence[int]) -> Any:
    """``src`` indexed along ``axes`` by the 1-D index arrays ``idxs`` (one per axis, taken
    modulo the axis size, so negative ones count from the end): row ``n`` of the result is
    ``src`` at ``idxs[k][n]`` on axis ``axes[k]``, the other axes kept in order, as
    ``jax.lax.index_take``.

    Example:
        >>> import numpy
        >>> from funcgrad import lax
        >>> x = numpy.arange(12.0).reshape(3, 4)
        >>> lax.index_take(x, (numpy.array([2, -1]), numpy.array([0, 1])), (0, 1)).tolist()
        [8.0, 9.0]
    """
    name = "index_take"
    a = aval_of(name, src, "src")
    axes = static_ints(name, axes, "axes")
    idxs = tuple(idxs)
    if len(idxs) != len(axes) or not axes:
        raise TypeError(f"lax.{name}: idxs needs one index array per axis of axes={axes}, "
                        f"got {len(idxs)}")
    cols = []
    for k, (i, ax) in enumerate(zip(idxs, axes)):
        ia = aval_of(name, i, f"idxs[{k}]")
        if ia.ndim != 1 or ia.dtype.kind not in "iu":
            raise TypeError(f"lax.{name}: idxs[{k}] must be a 1-D integer array, got "
                            f"{ia.str_short()}")
        if not 0 <= ax < a.ndim:
            raise ShapeError(f"lax.{name}: axis {ax} is out of bounds for {a.str_short()}")
        cols.append(_sh.expand_dims(_ew.rem(i, a.shape[ax]), (1,)))
    indices = _sh.concatenate(cols, 1)
    slice_sizes = tuple(1 if d in axes else n for d, n in enumerate(a.shape))
    dnums = GatherDimensionNumbers(offset_dims=tuple(range(1, a.ndim - len(axes) + 1)),
                                   collapsed_slice_dims=tuple(axes),
                                   start_index_map=tuple(axes))
    return gather(src, indices, dnums, slice_sizes)
