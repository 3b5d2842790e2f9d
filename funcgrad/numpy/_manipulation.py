"""funcgrad.numpy: array manipulation and construction beyond the basics.

``append, insert, delete, block, resize, rollaxis, row_stack, unstack, choose, fill_diagonal,
put_along_axis, put, place, unravel_index, ravel_multi_index, indices, ix_, mask_indices,
fromfunction, vander, cross, matvec, vecmat, vecdot, apply_along_axis, apply_over_axes,
piecewise, trim_zeros, i0, bartlett, blackman, hamming, hanning, kaiser, array_equal,
array_equiv``.

Everything is composed from existing funcgrad.numpy functions and primitives, so derivatives,
``vmap`` and ``jit`` come with them. Positions (``insert``/``delete`` indices, shapes, window
lengths) are static and must be concrete.

Where NumPy writes into its argument (``fill_diagonal``, ``put_along_axis``, ``put``,
``place``) funcgrad follows ``jax.numpy``: the functions return the updated array and must be
called with ``inplace=False``; the default ``inplace=True`` raises, so NumPy code that relies
on the mutation fails loudly instead of silently doing nothing.
"""

from __future__ import annotations

import builtins
import contextlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy

import funcgrad.numpy._creation as _fc
import funcgrad.numpy._elementwise as _fe
import funcgrad.numpy._extended as _ext
import funcgrad.numpy._indexing as _fi
import funcgrad.numpy._linalg_ops as _fl
import funcgrad.numpy._reductions as _fr
import funcgrad.numpy._shape as _fs
import funcgrad.numpy.linalg as _linalg
import funcgrad.ops.elementwise as _ew
import funcgrad.ops.shape as _shape
import funcgrad.ops.special as _special
from funcgrad.api_vmap import vmap
from funcgrad.avals import canonical_dtype, get_aval, result_dtype
from funcgrad.backend import device_of, device_put, get_default_device, operator_index, to_numpy
from funcgrad.core import Tracer, concrete_or_error, current_trace
from funcgrad.errors import ConcretizationError, ShapeError
from funcgrad.interpreters.staging import staging_below
from funcgrad.numpy._dtype_utils import check_python_ints_fit
from funcgrad.ops._util import normalize_axis

__all__ = [
    "append",
    "insert",
    "delete",
    "block",
    "resize",
    "rollaxis",
    "row_stack",
    "unstack",
    "choose",
    "fill_diagonal",
    "put_along_axis",
    "put",
    "place",
    "unravel_index",
    "ravel_multi_index",
    "indices",
    "ix_",
    "mask_indices",
    "fromfunction",
    "vander",
    "cross",
    "matvec",
    "vecmat",
    "vecdot",
    "apply_along_axis",
    "apply_over_axes",
    "piecewise",
    "trim_zeros",
    "i0",
    "bartlett",
    "blackman",
    "hamming",
    "hanning",
    "kaiser",
    "array_equal",
    "array_equiv",
]

_arr = _fs._arr


_arrs_together = _fs._arrs_together


def _device(x: Any) -> str:
    return get_aval(x).device or get_default_device()


def _on_device_of(host: numpy.ndarray, like: Any) -> Any:
    """A static host array (positions, permutations) moved to the device of ``like``."""
    return device_put(host, _device(like))


def _host(x: Any, what: str) -> numpy.ndarray:
    """The concrete value of ``x`` as a host NumPy array (a ConcretizationError if traced)."""
    v = concrete_or_error(x, what)
    if isinstance(v, list | tuple) and any(isinstance(e, Tracer) for e in v):
        v = [_host(e, what) for e in v]
    if device_of(v) is not None:
        return numpy.asarray(to_numpy(v))
    return numpy.asarray(v)


def _cast(x: Any, dt: numpy.dtype) -> Any:
    return x if get_aval(x).dtype == dt else _ew.convert_element_type(x, dt)


def _is_concrete(x: Any) -> bool:
    return not isinstance(x, Tracer) or x.to_concrete_value() is not None


def _check_inplace(fname: str, inplace: Any) -> None:
    if inplace:
        raise ValueError(
            f"{fname}: funcgrad arrays are immutable, so {fname} cannot modify its argument in "
            f"place as NumPy does. Call {fname}(..., inplace=False) and use the returned array "
            "(as in jax.numpy)."
        )


def _take_static(x: Any, idx: numpy.ndarray, ax: int) -> Any:
    """``x`` at the static positions ``idx`` along ``ax`` (as slices where possible)."""
    if idx.size == 0:
        return _shape.slice_in_dim(x, 0, 0, 1, ax)
    return _fs._gather_runs(x, idx, ax)


def _ravel_along(arr: Any, axis: Any, fname: str) -> tuple[Any, int]:
    x = _arr(arr)
    if axis is None:
        return _fs.ravel(x), 0
    return x, _fs._axis(fname, axis, get_aval(x).ndim)


# ---------------------------------------------------------------------------------------------
# Joining, inserting, deleting


def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    """``values`` appended to ``arr`` (both flattened when ``axis`` is None); dtypes promote.

    Example:
        >>> append(numpy.array([1, 2]), [[3, 4]]).tolist()
        [1, 2, 3, 4]
    """
    x, v = _arrs_together(arr, values)
    if axis is None:
        return _fs.concatenate([_fs.ravel(x), _fs.ravel(v)], 0)
    return _fs.concatenate([x, v], axis)


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Any:
    """``values`` inserted before the positions ``obj`` (int, slice, int sequence or 1-D mask)
    along ``axis`` (flattened ``arr`` when None); values take ``arr``'s dtype, as in NumPy.

    ``arr`` and ``values`` may be traced and are differentiated; integer positions ``obj``
    may be traced too (as in JAX; out-of-range ones are then clipped).

    Example:
        >>> insert(numpy.array([1, 2, 3]), 1, 9).tolist()
        [1, 9, 2, 3]
        >>> insert(numpy.array([[1, 2], [3, 4]]), [0, 2], [7, 8], axis=1).tolist()
        [[7, 1, 2, 8], [7, 3, 4, 8]]
    """
    x, ax = _ravel_along(arr, axis, "insert")
    xa = get_aval(x)
    n = xa.shape[ax]
    check_python_ints_fit(values, xa.dtype, "insert")
    v = _cast(_arrs_together(x, values)[1], xa.dtype)
    if isinstance(obj, slice):
        idx = numpy.arange(*obj.indices(n), dtype=numpy.intp)
    elif not _is_concrete(obj) and get_aval(obj).dtype.kind in "iu":
        return _insert_traced(x, ax, obj, v)
    else:
        idx = _host(obj, "insert: the positions obj")
        if idx.dtype == bool:
            if idx.ndim != 1:
                raise ValueError("insert: boolean array argument obj to insert must be one "
                                 "dimensional")
            idx = numpy.flatnonzero(idx)
        elif idx.ndim > 1:
            raise ValueError("insert: index array argument obj to insert must be one "
                             "dimensional or scalar")
        elif idx.size == 0:
            idx = idx.astype(numpy.intp)
        elif idx.dtype.kind not in "iu":
            raise IndexError(f"insert: obj must hold integers, got dtype {idx.dtype}")
    if idx.size == 1:
        index = int(idx.reshape(()))
        if index < -n or index > n:
            raise IndexError(f"insert: index {index} is out of bounds for axis {ax} with "
                             f"size {n}")
        vnd = get_aval(v).ndim
        if vnd < xa.ndim:
            v = _shape.reshape(v, (1,) * (xa.ndim - vnd) + get_aval(v).shape)
        if idx.ndim == 0:
            # NumPy: a scalar position inserts like a[:, i:i+1] = values[None] -- the
            # values' leading axis becomes the inserted axis.
            v = _fs.moveaxis(v, 0, ax)
        numnew = get_aval(v).shape[ax]
        index = index if index >= 0 else index + n
        positions = numpy.arange(index, index + numnew)
    else:
        idx = numpy.where(idx < 0, idx + n, idx).astype(numpy.intp)
        if ((idx < 0) | (idx > n)).any():
            bad = idx[(idx < 0) | (idx > n)][0]
            raise IndexError(f"insert: index {bad} is out of bounds for axis {ax} with size {n}")
        numnew = idx.size
        order = numpy.argsort(idx, kind="stable")
        positions = idx.copy()
        positions[order] += numpy.arange(numnew)
    v = _inserted_values(v, xa.shape[:ax] + (numnew,) + xa.shape[ax + 1:])
    total = n + numnew
    perm = numpy.empty(total, dtype=numpy.intp)
    is_new = numpy.zeros(total, dtype=bool)
    is_new[positions] = True
    perm[positions] = n + numpy.arange(numnew)
    perm[~is_new] = numpy.arange(n)
    return _take_static(_shape.concatenate([x, v], ax), perm, ax)


def _inserted_values(v: Any, target: tuple[int, ...]) -> Any:
    """``v`` broadcast to the shape of the inserted block, or NumPy's ValueError."""
    try:
        return _fs.broadcast_to(v, target)
    except ShapeError:
        raise ValueError(
            f"insert: values of shape {get_aval(v).shape} cannot be broadcast to the inserted "
            f"shape {target}"
        ) from None


def _insert_traced(x: Any, ax: int, obj: Any, v: Any) -> Any:
    """``insert`` at integer positions known only at run time (as JAX): out-of-range ones
    cannot be checked and are clipped into ``[0, n]``; the result's slots are a permutation
    of ``concatenate([x, values])`` computed from the positions."""
    xa = get_aval(x)
    n = xa.shape[ax]
    oa = get_aval(obj)
    if oa.ndim > 1:
        raise ValueError("insert: index array argument obj to insert must be one dimensional "
                         "or scalar")
    o = _fe.clip(_fe.where(_ew.lt(obj, 0), _ew.add(obj, n), obj), 0, n)
    o = _cast(o, numpy.dtype(numpy.intp))
    vnd = get_aval(v).ndim
    if vnd < xa.ndim:
        v = _shape.reshape(v, (1,) * (xa.ndim - vnd) + get_aval(v).shape)
    if oa.size == 1:  # one position: the values give the count, as NumPy
        if oa.ndim == 0:  # the values' leading axis is the inserted one
            v = _fs.moveaxis(v, 0, ax)
        numnew = get_aval(v).shape[ax]
        positions = _ew.add(_shape.reshape(o, ()), _fc.arange(numnew, device=_device(x)))
    else:
        numnew = oa.shape[0]
        # equal positions keep their order: the k-th smallest moves k slots on
        order = _fr.argsort(o, kind="stable")
        positions = _ew.add(o, _fr.argsort(order, kind="stable"))
    v = _inserted_values(v, xa.shape[:ax] + (numnew,) + xa.shape[ax + 1:])
    total = n + numnew
    ones = _fc.arange(1, numnew + 1, device=_device(x))
    slot = _fi.at(_fc.zeros(total, numpy.intp, device=_device(x)))[positions].set(ones)
    is_new = _ew.gt(slot, 0)
    old = _ew.sub(_fr.cumsum(_ew.not_(is_new), dtype=numpy.intp), 1)
    perm = _fe.where(is_new, _ew.add(slot, n - 1), old)
    return _fi.take(_shape.concatenate([x, v], ax), perm, axis=ax, mode="clip")


def delete(arr: Any, obj: Any, axis: int | None = None, *,
           assume_unique_indices: bool = False) -> Any:
    """``arr`` without the entries ``obj`` (int, slice, int sequence or boolean mask) along
    ``axis`` (flattened ``arr`` when None). ``obj`` must be concrete, unless integer
    positions are promised distinct by JAX's ``assume_unique_indices=True`` (then they may be
    traced: the result has ``n - len(obj)`` entries).

    Example:
        >>> delete(numpy.arange(5), [0, -1]).tolist()
        [1, 2, 3]
        >>> delete(numpy.arange(6).reshape(2, 3), 1, axis=1).tolist()
        [[0, 2], [3, 5]]
    """
    x, ax = _ravel_along(arr, axis, "delete")
    n = get_aval(x).shape[ax]
    keep = numpy.ones(n, dtype=bool)
    traced = not isinstance(obj, slice) and not _is_concrete(obj)
    if traced and not assume_unique_indices and get_aval(obj).dtype.kind in "iu":
        raise ConcretizationError(
            f"delete: the positions obj are traced ({get_aval(obj).str_short()}), so the "
            "size of the result is unknown (repeated positions delete once). Fix: promise "
            "distinct positions with assume_unique_indices=True (JAX's), or pass them "
            "concretely")
    if (traced and assume_unique_indices and get_aval(obj).dtype.kind in "iu"):
        # JAX's promise: distinct positions, so the result has n - len(obj) entries
        o = _fs.ravel(obj)
        k = get_aval(o).size
        o = _fe.where(_ew.lt(o, 0), _ew.add(o, n), o)
        mask = _fi.at(_fc.ones(n, bool, device=_device(x)))[o].set(False, mode="drop")
        (kept,) = _fi.nonzero(mask, size=max(n - k, 0), fill_value=n - 1)
        return _fi.take(x, kept, axis=ax, mode="clip")
    if isinstance(obj, slice):
        keep[obj] = False
    else:
        o = _host(obj, "delete: the positions obj")
        if o.size == 0 and not isinstance(obj, numpy.ndarray):
            o = o.astype(numpy.intp)
        if o.dtype == bool:
            if o.shape != (n,):
                raise ValueError("delete: boolean array argument obj to delete must be one "
                                 f"dimensional and match the axis length of {n}")
            keep = ~o
        else:
            if o.dtype.kind not in "iu":
                raise IndexError(f"delete: obj must hold integers, got dtype {o.dtype}")
            bad = (o < -n) | (o >= n)
            if bad.any():
                raise IndexError(f"delete: index {o[bad].ravel()[0]} is out of bounds for "
                                 f"axis {ax} with size {n}")
            keep[o.ravel()] = False
    return _take_static(x, numpy.flatnonzero(keep), ax)


def _block_depth(x: Any, path: tuple[int, ...]) -> int:
    if isinstance(x, tuple):
        raise TypeError(f"block: arrays{''.join(f'[{i}]' for i in path)} is a tuple. Only "
                        "lists can be used to arrange blocks, and np.block does not allow "
                        "implicit conversion from tuple to ndarray.")
    if not isinstance(x, list):
        return 0
    if not x:
        raise ValueError(f"block: list at arrays{''.join(f'[{i}]' for i in path)} cannot be "
                         "empty")
    depths = [_block_depth(e, path + (i,)) for i, e in enumerate(x)]
    if len(set(depths)) != 1:
        raise ValueError(f"block: list depths are mismatched at arrays"
                         f"{''.join(f'[{i}]' for i in path)}: got depths {depths}")
    return depths[0] + 1


def _block_leaves(x: Any) -> list[Any]:
    return [leaf for e in x for leaf in _block_leaves(e)] if isinstance(x, list) else [x]


def block(arrays: Any) -> Any:
    """Assemble an array from nested lists of blocks (the innermost lists join along the last
    axis, the next ones along the second-to-last, ...).

    Example:
        >>> block([[numpy.eye(2), numpy.zeros((2, 1))], [numpy.ones((1, 3))]]).tolist()
        [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1.0]]
    """
    depth = _block_depth(arrays, ())
    if depth == 0:
        return _fc.array(arrays)
    leaves = [_arr(v) for v in _block_leaves(arrays)]
    nd = builtins.max([depth] + [get_aval(v).ndim for v in leaves])
    leaves_iter = iter(leaves)

    def build(x: Any, level: int) -> Any:
        if level == depth:
            v = next(leaves_iter)
            s = get_aval(v).shape
            return _shape.reshape(v, (1,) * (nd - len(s)) + s) if len(s) < nd else v
        parts = [build(e, level + 1) for e in x]
        return parts[0] if len(parts) == 1 else _fs.concatenate(parts, level - depth)

    return build(arrays, 0)


def resize(a: Any, new_shape: Any) -> Any:
    """A ``new_shape`` array filled with the elements of ``a`` repeated cyclically (zeros when
    ``a`` is empty).

    Example:
        >>> resize(numpy.array([1, 2, 3]), (2, 4)).tolist()
        [[1, 2, 3, 1], [2, 3, 1, 2]]
    """
    x = _fs.ravel(_arr(a))
    shape = tuple(_fs._static_ints(new_shape, "resize: new_shape"))
    if any(s < 0 for s in shape):
        raise ValueError("resize: all elements of `new_shape` must be non-negative")
    size = int(numpy.prod(shape, dtype=numpy.int64))
    n = get_aval(x).size
    if n == 0 or size == 0:
        return _fc.zeros(shape, dtype=get_aval(x).dtype) if n == 0 else _fs.reshape(
            _shape.slice_in_dim(x, 0, 0, 1, 0), shape)
    reps = -(-size // n)
    if reps > 1:
        x = _fs.tile(x, reps)
    if reps * n != size:
        x = _shape.slice_in_dim(x, 0, size, 1, 0)
    return _fs.reshape(x, shape)


def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    """Move ``axis`` to lie before position ``start`` (prefer :func:`moveaxis`).

    Example:
        >>> rollaxis(numpy.ones((3, 4, 5)), 2).shape
        (5, 3, 4)
    """
    x = _arr(a)
    n = get_aval(x).ndim
    ax = _fs._axis("rollaxis", axis, n)
    start = operator_index(start)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise numpy.exceptions.AxisError(
            f"rollaxis: 'start' arg requires {-n} <= start < {n + 1}, but {start} was passed in")
    if ax < start:
        start -= 1
    if ax == start:
        return x
    return _fs.moveaxis(x, ax, start)


def row_stack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> Any:
    """Deprecated NumPy alias of :func:`vstack`.

    Example:
        >>> row_stack([numpy.zeros(2), numpy.ones(2)]).shape
        (2, 2)
    """
    return _fs.vstack(tup, dtype=dtype, casting=casting)


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    """The slices of ``x`` along ``axis``, as a tuple (the inverse of :func:`stack`).

    Example:
        >>> [v.tolist() for v in unstack(numpy.array([[1, 2], [3, 4]]), axis=1)]
        [[1, 3], [2, 4]]
    """
    if _ext.is_extended(x):
        return _ext.by_index(unstack, x, axis=axis)
    x = _arr(x)
    xa = get_aval(x)
    if xa.ndim == 0:
        raise ValueError("unstack: input array must be at least 1-d")
    ax = _fs._axis("unstack", axis, xa.ndim)
    return tuple(_shape.index_in_dim(x, i, ax, keepdims=False) for i in range(xa.shape[ax]))


# ---------------------------------------------------------------------------------------------
# Choosing and functional writes


def _int_index(x: Any, fname: str, what: str) -> Any:
    x = _arr(x)
    dt = get_aval(x).dtype
    if dt.kind == "b" or get_aval(x).size == 0 or (dt.kind in "iu" and dt != numpy.intp):
        return _cast(x, numpy.dtype(numpy.intp))
    if dt.kind not in "iu":
        raise TypeError(f"{fname}: {what} must be an integer array, got dtype {dt}")
    return x


def _apply_mode(idx: Any, n: int, mode: str, fname: str, allow_negative: bool,
                raise_error: Callable[[Any], Exception]) -> Any:
    """Indices into a length-``n`` axis: 'wrap' (modulo), 'clip', or 'raise' (checked when
    concrete; a traced index cannot be checked and is clipped, as elsewhere in funcgrad)."""
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"{fname}: mode must be one of 'raise', 'wrap' or 'clip', got {mode!r}")
    if mode == "wrap":
        return _fe.remainder(idx, n) if n else idx
    if mode == "raise" and _is_concrete(idx):
        h = _host(idx, fname)
        lo = -n if allow_negative else 0
        bad = (h < lo) | (h >= n)
        if bad.any():
            raise raise_error(h[bad].ravel()[0])
        if allow_negative and (h < 0).any():
            return _fe.where(_fe.less(idx, 0), _fe.add(idx, n), idx)
        return idx
    if mode == "raise" and allow_negative:
        idx = _fe.where(_fe.less(idx, 0), _fe.add(idx, n), idx)
    return _fe.clip(idx, 0, builtins.max(n - 1, 0))


def choose(a: Any, choices: Any, out: Any = None, mode: str = "raise") -> Any:
    """``choices[a[i]][i]`` for every position ``i`` (everything broadcast together).

    ``mode``: 'raise' (an out-of-range ``a`` raises; traced ``a`` is clipped), 'wrap' or
    'clip'. Differentiable in ``choices``.

    Example:
        >>> choose(numpy.array([0, 1, 1]), [numpy.array([1, 2, 3]), 10]).tolist()
        [1, 10, 10]
    """
    if out is not None:
        raise TypeError("choose: out= is not supported (funcgrad arrays are immutable)")
    idx = _int_index(a, "choose", "a")
    if isinstance(choices, Tracer) or device_of(choices) is not None:
        cs = _fs._as_sequence(choices, "choose")
    else:
        # Python scalars stay weak (NEP 50): a 1.5 among float32 choices keeps float32.
        # Python sequences go to the arrays' device (of ``a`` or a choice), else the default.
        dev = next((get_aval(c).device for c in (a, *choices)
                    if isinstance(c, Tracer) or device_of(c) is not None), None)
        cs = [_fi._as_array(c, dev) for c in choices]
    if not cs:
        raise ValueError("choose: choices must not be empty")
    n = len(cs)
    dt = result_dtype(*(get_aval(c) for c in cs))[0]
    # Python scalar choices go to an array choice's device, else to the index's
    dev = next((get_aval(c).device for c in cs if not isinstance(c, bool | int | float | complex)),
               None) or get_aval(idx).device
    cs = [_fc.asarray(c, dtype=dt, device=dev) if isinstance(c, bool | int | float | complex)
          else c for c in cs]
    shape = numpy.broadcast_shapes(get_aval(idx).shape, *(get_aval(c).shape for c in cs))
    stacked = _fs.stack([_fs.broadcast_to(_cast(c, dt), shape) for c in cs], 0)
    if not isinstance(idx, Tracer):
        # Index arrays may come from the host, as for take/take_along_axis.
        idx = device_put(idx, _device(stacked))
    idx = _apply_mode(idx, n, mode, "choose", False,
                      lambda v: ValueError("choose: invalid entry in choice array"))
    sel = _fs.broadcast_to(idx, shape)
    picked = _fi.take_along_axis(stacked, _shape.expand_dims(sel, (0,)), axis=0)
    return _shape.index_in_dim(picked, 0, 0, keepdims=False)


def _flat_set(a: Any, positions: Any, values: Any) -> Any:
    x = _arr(a)
    xa = get_aval(x)
    flat = _fs.ravel(x)
    out = _fi.at(flat)[positions].set(_cast(_arrs_together(x, values)[1], xa.dtype), mode="raise")
    return _shape.reshape(out, xa.shape)


def _cycled(values: Any, n: int, dt: numpy.dtype, fname: str, like: Any) -> Any:
    # Python values go to the device of the array written into (``like``)
    v = _cast(_fs.ravel(_arrs_together(like, values)[1]), dt)
    if get_aval(v).size == 0 and n:
        raise ValueError(f"{fname}: cannot write from an empty array of values")
    return resize(v, (n,))


def fill_diagonal(a: Any, val: Any, wrap: bool = False, *, inplace: bool = True) -> Any:
    """A copy of ``a`` with its main diagonal set to ``val`` (repeated cyclically); call with
    ``inplace=False`` (see the module docstring). ``wrap``: for tall 2-D arrays, restart the
    diagonal below, every ``ncols + 1`` rows, as NumPy.

    Example:
        >>> fill_diagonal(numpy.zeros((3, 3)), [1, 2, 3], inplace=False).tolist()
        [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0]]
    """
    _check_inplace("fill_diagonal", inplace)
    x = _arr(a)
    xa = get_aval(x)
    if xa.ndim < 2:
        raise ValueError("fill_diagonal: array must be at least 2-d")
    end = None
    if xa.ndim == 2:
        step = xa.shape[1] + 1
        if not wrap:
            end = xa.shape[1] * xa.shape[1]
    else:
        if len(set(xa.shape)) != 1:
            raise ValueError("fill_diagonal: all dimensions of input must be of equal length")
        step = 1 + int(numpy.cumprod(xa.shape[:-1]).sum())
    pos = numpy.arange(xa.size, dtype=numpy.intp)[:end:step]
    vals = _cycled(val, pos.size, xa.dtype, "fill_diagonal", x)
    return _flat_set(x, _on_device_of(pos, x), vals)


def put_along_axis(arr: Any, indices: Any, values: Any, axis: int | None, *,
                   inplace: bool = True, mode: Any = None) -> Any:
    """A copy of ``arr`` with ``values`` written at ``indices`` along ``axis`` (the inverse of
    :func:`take_along_axis`); call with ``inplace=False``. Repeated indices: the last wins.
    ``mode`` (JAX's) is the out-of-range mode of ``x.at[...].set``; None is NumPy's check
    (``IndexError`` for concrete indices).

    Example:
        >>> x = numpy.array([[10, 30, 20], [60, 40, 50]])
        >>> put_along_axis(x, numpy.array([[0], [2]]), 0, axis=1, inplace=False).tolist()
        [[0, 30, 20], [60, 40, 0]]
    """
    _check_inplace("put_along_axis", inplace)
    x = _arr(arr)
    xa = get_aval(x)
    ind = _arr(indices)
    ia = get_aval(ind)
    if ia.dtype.kind not in "iu":
        raise IndexError("put_along_axis: `indices` must be an integer array")
    if axis is None:
        if ia.ndim != 1:
            raise ValueError("put_along_axis: when axis=None, `indices` must have a single "
                             "dimension.")
        out = _fi.at(_fs.ravel(x))[ind].set(_cast(_arrs_together(x, values)[1], xa.dtype),
                                            mode="raise" if mode is None else mode)
        return _shape.reshape(out, xa.shape)
    ax = _fs._axis("put_along_axis", axis, xa.ndim)
    if ia.ndim != xa.ndim:
        raise ValueError("put_along_axis: `indices` and `arr` must have the same number of "
                         f"dimensions, got {ia.ndim} and {xa.ndim}")
    idx = []
    for d in range(xa.ndim):
        if d == ax:
            idx.append(ind)
        else:
            shp = [1] * xa.ndim
            shp[d] = xa.shape[d]
            idx.append(_on_device_of(numpy.arange(xa.shape[d]).reshape(shp), x))
    return _fi.at(x)[tuple(idx)].set(_cast(_arrs_together(x, values)[1], xa.dtype),
                                     mode="raise" if mode is None else mode)


def put(a: Any, ind: Any, v: Any, mode: str = "raise", *, inplace: bool = True) -> Any:
    """A copy of ``a`` with the flat positions ``ind`` set to ``v`` (repeated cyclically);
    call with ``inplace=False``. ``mode``: 'raise' (traced indices are clipped), 'wrap',
    'clip'.

    Example:
        >>> put(numpy.arange(5), [0, -1], [-7, -9], inplace=False).tolist()
        [-7, 1, 2, 3, -9]
    """
    _check_inplace("put", inplace)
    x = _arr(a)
    xa = get_aval(x)
    idx = _fs.ravel(_int_index(ind, "put", "ind"))
    if not isinstance(idx, Tracer):
        # host indices (a list) follow the array, as for take
        idx = _on_device_of(idx, x)
    n = get_aval(idx).size
    if n == 0:
        return x
    idx = _apply_mode(idx, xa.size, mode, "put", True, lambda i: IndexError(
        f"put: index {i} is out of bounds for axis 0 with size {xa.size}"))
    return _flat_set(x, idx, _cycled(v, n, xa.dtype, "put", x))


def place(arr: Any, mask: Any, vals: Any, *, inplace: bool = True) -> Any:
    """A copy of ``arr`` with the positions where ``mask`` is true set to ``vals`` (repeated
    cyclically). Call with ``inplace=False``. A ``mask`` known only at run time (under
    ``jit``, batched by ``vmap``) works too, as in JAX: the k-th true position takes
    ``vals[k % len(vals)]``.

    Example:
        >>> place(numpy.arange(5), numpy.arange(5) > 2, [9], inplace=False).tolist()
        [0, 1, 2, 9, 9]
    """
    _check_inplace("place", inplace)
    x = _arr(arr)
    if not _is_concrete(mask):
        xa = get_aval(x)
        m = _fs.ravel(mask)
        if get_aval(m).size != xa.size:
            raise ValueError(f"place: mask and data must be the same size, got "
                             f"{get_aval(m).size} and {xa.size}")
        m = _cast(m, numpy.dtype(bool))
        v = _cast(_fs.ravel(_arrs_together(x, vals)[1]), xa.dtype)
        nv = get_aval(v).size
        if nv == 0:
            raise ValueError("place: cannot write from an empty array of values (with a "
                             "traced mask, whether any position is set is not known)")
        # the k-th set position reads vals[k % nv]: k counted by a running sum of the mask
        k = _ew.sub(_fr.cumsum(m, dtype=numpy.intp), 1)
        picked = _fi.take(v, _ew.rem(_ew.max(k, 0), nv), mode="clip")
        return _shape.reshape(_fe.where(m, picked, _fs.ravel(x)), xa.shape)
    m = _host(mask, "place: the mask").astype(bool)
    if m.size != get_aval(x).size:
        raise ValueError(f"place: mask and data must be the same size, got {m.size} and "
                         f"{get_aval(x).size}")
    pos = numpy.flatnonzero(m)
    if pos.size == 0:
        return x
    return _flat_set(x, _on_device_of(pos, x),
                     _cycled(vals, pos.size, get_aval(x).dtype, "place", x))


# ---------------------------------------------------------------------------------------------
# Index arithmetic and index grids


def _dims(shape: Any, fname: str) -> tuple[int, ...]:
    if isinstance(shape, int | numpy.integer):
        return (int(shape),)
    return tuple(_fs._static_ints(shape, f"{fname}: the shape"))


def unravel_index(indices: Any, shape: Any, order: str = "C") -> tuple[Any, ...]:
    """The coordinates in an array of ``shape`` of the flat ``indices`` (a tuple of arrays).

    Concrete out-of-range indices raise ``ValueError``; traced ones are clipped into range.

    Example:
        >>> [c.tolist() for c in unravel_index(numpy.array([5, 7]), (2, 4))]
        [[1, 1], [1, 3]]
    """
    if order not in ("C", "F"):
        raise ValueError(f"unravel_index: order must be 'C' or 'F', got {order!r}")
    dims = _dims(shape, "unravel_index")
    idx = _arr(indices)
    if get_aval(idx).dtype.kind not in "iu":
        raise TypeError(f"unravel_index: only int indices permitted, got dtype "
                        f"{get_aval(idx).dtype}")
    idx = _cast(idx, numpy.dtype(numpy.intp))
    size = int(numpy.prod(dims, dtype=numpy.int64))
    if _is_concrete(idx):
        h = _host(idx, "unravel_index")
        bad = (h < 0) | (h >= size)
        if bad.any():
            raise ValueError(f"unravel_index: index {h[bad].ravel()[0]} is out of bounds for "
                             f"array with size {size}")
    elif size:
        idx = _fe.clip(idx, 0, size - 1)
    out = []
    for d in (reversed(dims) if order == "C" else dims):
        if d == 0:
            out.append(idx)
            continue
        out.append(_fe.remainder(idx, d))
        idx = _fe.floor_divide(idx, d)
    return tuple(reversed(out)) if order == "C" else tuple(out)


def ravel_multi_index(multi_index: Any, dims: Any, mode: Any = "raise",
                      order: str = "C", *, dtype: Any = None) -> Any:
    """Flat indices into an array of shape ``dims`` from a tuple of coordinate arrays.

    ``mode``: 'raise' (concrete out-of-range coordinates raise, traced ones are clipped),
    'wrap' or 'clip', or one mode per dimension. ``dtype`` (JAX's) is the result's integer
    dtype (default int64, as NumPy's intp).

    Example:
        >>> ravel_multi_index((numpy.array([1, 1]), numpy.array([1, 3])), (2, 4)).tolist()
        [5, 7]
    """
    if order not in ("C", "F"):
        raise ValueError(f"ravel_multi_index: order must be 'C' or 'F', got {order!r}")
    dims = _dims(dims, "ravel_multi_index")
    coords = list(multi_index)
    if len(coords) != len(dims):
        raise ValueError(f"ravel_multi_index: parameter multi_index must be a sequence of "
                         f"length {len(dims)}, got {len(coords)}")
    modes = [mode] * len(dims) if isinstance(mode, str) else list(mode)
    if len(modes) != len(dims):
        raise ValueError(f"ravel_multi_index: {len(modes)} modes given for {len(dims)} "
                         "dimensions")
    strides = [1] * len(dims)
    order_dims = range(len(dims) - 2, -1, -1) if order == "C" else range(1, len(dims))
    for i in order_dims:
        j = i + 1 if order == "C" else i - 1
        strides[i] = strides[j] * dims[j]
    total = None
    # Python sequences among the coordinates go to the device of the array ones
    for c, d, m, s in zip(_arrs_together(*coords), dims, modes, strides):
        if get_aval(c).dtype.kind not in "iu":
            raise TypeError(f"ravel_multi_index: only int indices permitted, got dtype "
                            f"{get_aval(c).dtype}")
        c = _cast(c, numpy.dtype(numpy.intp))
        c = _apply_mode(c, d, m, "ravel_multi_index", False,
                        lambda v: ValueError("ravel_multi_index: invalid entry in "
                                             "coordinates array"))
        term = _fe.multiply(c, s) if s != 1 else c
        total = term if total is None else _fe.add(total, term)
    if total is None:
        raise ValueError("ravel_multi_index: dims must not be empty")
    return total if dtype is None else _cast(total, canonical_dtype(dtype, "ravel_multi_index"))


def indices(dimensions: Sequence[int], dtype: Any = int, sparse: bool = False) -> Any:
    """The index grid of an array of shape ``dimensions``: an ``(N, *dimensions)`` array, or
    with ``sparse=True`` a tuple of broadcastable arrays.

    Example:
        >>> indices((2, 3))[1].tolist()
        [[0, 1, 2], [0, 1, 2]]
    """
    dims = tuple(_fs._static_ints(list(dimensions), "indices: dimensions"))
    if any(d < 0 for d in dims):
        raise ValueError(f"indices: negative dimensions are not allowed, got {dims}")
    dt = canonical_dtype(dtype, "indices")
    n = len(dims)
    parts = []
    for i, d in enumerate(dims):
        r = _shape.reshape(_fc.arange(d, dtype=dt), (1,) * i + (d,) + (1,) * (n - i - 1))
        parts.append(r if sparse else _shape.broadcast_to(r, dims))
    if sparse:
        return tuple(parts)
    if not parts:
        return _fc.zeros((0,), dtype=dt)
    return _fs.stack(parts, 0)


def ix_(*args: Any) -> tuple[Any, ...]:
    """Open-mesh index arrays from 1-D sequences (boolean ones become their true positions).

    Example:
        >>> x = numpy.arange(9).reshape(3, 3)
        >>> x[ix_([0, 2], [1, 2])].tolist()
        [[1, 2], [7, 8]]
    """
    out = []
    nd = len(args)
    # Python sequences go where the array arguments are (else to the default device), built
    # on the host so they stay concrete under jit and follow the indexed array there
    dev = next((get_aval(a).device for a in args
                if isinstance(a, Tracer) or device_of(a) is not None), None)
    for k, a in enumerate(args):
        if isinstance(a, Tracer) or device_of(a) is not None:
            v = a
        else:
            h = numpy.asarray(a)
            if h.size == 0:
                h = h.astype(numpy.intp)
            if h.ndim != 1:
                raise ValueError("ix_: Cross index must be 1 dimensional")
            if h.dtype.kind == "b":
                (h,) = h.nonzero()
            elif h.dtype.kind not in "iu":
                raise TypeError(f"ix_: arguments must be integer or boolean, got dtype {h.dtype}")
            h = h.reshape((1,) * k + (h.size,) + (1,) * (nd - k - 1))
            out.append(device_put(h, dev or get_default_device()))
            continue
        va = get_aval(v)
        if va.ndim != 1:
            raise ValueError("ix_: Cross index must be 1 dimensional")
        if va.dtype.kind == "b":
            (v,) = _fi.nonzero(v)
        elif va.dtype.kind not in "iu":
            raise TypeError(f"ix_: arguments must be integer or boolean, got dtype {va.dtype}")
        m = get_aval(v).size
        out.append(_shape.reshape(v, (1,) * k + (m,) + (1,) * (nd - k - 1)))
    return tuple(out)


def mask_indices(n: int, mask_func: Callable[..., Any], k: Any = 0, *,
                 size: int | None = None) -> tuple[Any, Any]:
    """Row and column indices where ``mask_func(ones((n, n)), k)`` is non-zero; JAX's static
    ``size`` gives the first ``size`` of them, padded with 0 (as :func:`nonzero`).

    Example:
        >>> [v.tolist() for v in mask_indices(2, numpy.triu)]
        [[0, 0, 1], [0, 1, 1]]
    """
    m = _fc.ones((operator_index(n), operator_index(n)), dtype=int)
    return _fi.nonzero(_fe.not_equal(_arr(mask_func(m, k)), 0), size=size)


def fromfunction(function: Callable[..., Any], shape: Sequence[int], *, dtype: Any = float,
                 like: Any = None, **kwargs: Any) -> Any:
    """``function(*indices(shape, dtype), **kwargs)``: the function is called once, on whole
    index grids, as in NumPy (on ``like``'s device when given).

    Example:
        >>> fromfunction(lambda i, j: i + 10 * j, (2, 2), dtype=int).tolist()
        [[0, 10], [1, 11]]
    """
    grids = indices(shape, dtype=dtype)
    device = _fc._like("fromfunction", like, None)  # NumPy's like=: on like's device
    return function(*(grids if device is None else _fc._put(grids, device)), **kwargs)


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:  # noqa: N803
    """The Vandermonde matrix of 1-D ``x``: columns ``x**(N-1), ..., x, 1`` (reversed when
    ``increasing``). Differentiable in ``x``.

    Example:
        >>> vander(numpy.array([1, 2, 3]), 3).tolist()
        [[1, 1, 1], [4, 2, 1], [9, 3, 1]]
    """
    v = _arr(x)
    va = get_aval(v)
    if va.ndim != 1:
        raise ValueError("vander: x must be a one-dimensional array or sequence.")
    n = va.shape[0] if N is None else operator_index(N)
    if n < 0:
        raise ValueError("vander: negative dimensions are not allowed")
    dt = numpy.promote_types(va.dtype, numpy.int_)
    v = _cast(v, dt)
    if n == 0:
        return _shape.broadcast_in_dim(_shape.slice_in_dim(v, 0, 0, 1, 0), (va.shape[0], 0),
                                       (1,))
    cols = [_fc.ones_like(v)]
    for _ in range(1, n):
        # Repeated products (as NumPy's multiply.accumulate): exact derivatives at x = 0.
        cols.append(_fe.multiply(cols[-1], v))
    out = _fs.stack(cols, 1)
    return out if increasing else _shape.rev(out, (1,))


# ---------------------------------------------------------------------------------------------
# Products


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Any:
    """Cross products of 3-vectors (or 2-vectors, taken with a zero third component) along
    ``axisa``/``axisb``, written along ``axisc`` (``axis`` sets all three); other axes
    broadcast. Two 2-vectors give the scalar z component, as in NumPy.

    Example:
        >>> cross([1.0, 0.0, 0.0], [0.0, 1.0, 0.0]).tolist()
        [0.0, 0.0, 1.0]
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = _arrs_together(a, b)
    xa, ya = get_aval(x), get_aval(y)
    if xa.ndim < 1 or ya.ndim < 1:
        raise ValueError("cross: at least one array has zero dimension")
    x = _fs.moveaxis(x, normalize_axis("cross (axisa)", operator_index(axisa), xa.ndim), -1)
    y = _fs.moveaxis(y, normalize_axis("cross (axisb)", operator_index(axisb), ya.ndim), -1)
    na, nb = get_aval(x).shape[-1], get_aval(y).shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("cross: incompatible dimensions for cross product (dimension must be "
                         f"2 or 3), got {na} and {nb}")
    dt = numpy.promote_types(xa.dtype, ya.dtype)
    if dt.kind == "b":
        raise TypeError("cross: boolean inputs are not supported (NumPy cannot subtract "
                        "booleans)")
    x, y = _cast(x, dt), _cast(y, dt)

    def comp(t: Any, i: int) -> Any:
        return _shape.index_in_dim(t, i, get_aval(t).ndim - 1, keepdims=False)

    mul, sub = _fe.multiply, _fe.subtract
    a0, a1 = comp(x, 0), comp(x, 1)
    b0, b1 = comp(y, 0), comp(y, 1)
    c2 = sub(mul(a0, b1), mul(a1, b0))
    if na == 2 and nb == 2:
        return c2
    if na == 3 and nb == 3:
        a2, b2 = comp(x, 2), comp(y, 2)
        c0 = sub(mul(a1, b2), mul(a2, b1))
        c1 = sub(mul(a2, b0), mul(a0, b2))
    elif na == 2:
        b2 = comp(y, 2)
        c0 = mul(a1, b2)
        c1 = _fe.negative(mul(a0, b2))
    else:
        a2 = comp(x, 2)
        c0 = _fe.negative(mul(a2, b1))
        c1 = mul(a2, b0)
    shape = numpy.broadcast_shapes(get_aval(c0).shape, get_aval(c1).shape, get_aval(c2).shape)
    out = _fs.stack([_fs.broadcast_to(c, shape) for c in (c0, c1, c2)], -1)
    nd = len(shape) + 1
    return _fs.moveaxis(out, -1, normalize_axis("cross (axisc)", operator_index(axisc), nd))


_GUFUNC_ACCEPTED = frozenset({"order", "subok"})  # layout and subclass choices: no effect


def _gufunc_check(fname: str, out: Any, kwargs: dict, *operands: Any) -> list[Any]:
    """The operands, cast to NumPy's ``dtype=`` (under ``casting=``) if given."""
    if out is not None:
        raise TypeError(f"{fname}: out= is not supported (funcgrad arrays are immutable)")
    dtype, casting = kwargs.pop("dtype", None), kwargs.pop("casting", "same_kind")
    bad = set(kwargs) - _GUFUNC_ACCEPTED
    if bad:
        raise TypeError(f"{fname}: unsupported keyword arguments {sorted(bad)}")
    xs = [_arr(x) for x in operands]
    return xs if dtype is None else _fl._cast_for_loop(fname, xs, dtype, casting)


def matvec(x1: Any, x2: Any, /, out: Any = None, **kwargs: Any) -> Any:
    """Matrix-vector products ``x1 @ x2`` over the last axes: ``(..., m, n), (..., n) ->
    (..., m)`` with broadcast leading axes (NumPy 2's gufunc).

    Example:
        >>> matvec(numpy.eye(2) * 2, numpy.array([1.0, 3.0])).tolist()
        [2.0, 6.0]
    """
    m, v = _gufunc_check("matvec", out, kwargs, x1, x2)
    ma, va = get_aval(m), get_aval(v)
    if ma.ndim < 2 or va.ndim < 1:
        raise ValueError(f"matvec: need a matrix and a vector, got {ma.str_short()} and "
                         f"{va.str_short()}")
    if ma.shape[-1] != va.shape[-1]:
        raise ValueError(f"matvec: mismatch in its core dimension: {ma.str_short()} and "
                         f"{va.str_short()}")
    r = _fl.matmul(m, _shape.expand_dims(v, (va.ndim,)))
    return _shape.index_in_dim(r, 0, get_aval(r).ndim - 1, keepdims=False)


def vecmat(x1: Any, x2: Any, /, out: Any = None, **kwargs: Any) -> Any:
    """Vector-matrix products ``conj(x1) @ x2``: ``(..., n), (..., n, m) -> (..., m)`` with
    broadcast leading axes (NumPy 2's gufunc; ``x1`` is conjugated).

    Example:
        >>> vecmat(numpy.array([1.0, 3.0]), numpy.eye(2) * 2).tolist()
        [2.0, 6.0]
    """
    v, m = _gufunc_check("vecmat", out, kwargs, x1, x2)
    va, ma = get_aval(v), get_aval(m)
    if ma.ndim < 2 or va.ndim < 1:
        raise ValueError(f"vecmat: need a vector and a matrix, got {va.str_short()} and "
                         f"{ma.str_short()}")
    if ma.shape[-2] != va.shape[-1]:
        raise ValueError(f"vecmat: mismatch in its core dimension: {va.str_short()} and "
                         f"{ma.str_short()}")
    if va.dtype.kind == "c":
        v = _fe.conj(v)
    r = _fl.matmul(_shape.expand_dims(v, (va.ndim - 1,)), m)
    return _shape.index_in_dim(r, 0, get_aval(r).ndim - 2, keepdims=False)


def vecdot(x1: Any, x2: Any, /, out: Any = None, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None, **kwargs: Any) -> Any:
    """Dot products of vectors along ``axis``, conjugating ``x1``; other axes broadcast.
    ``precision`` and ``preferred_element_type`` (JAX's) as in :func:`matmul`; NumPy's
    ``keepdims``, ``dtype`` and ``casting`` (the loop's dtype) as NumPy's gufunc.

    Example:
        >>> vecdot(numpy.ones((2, 3)), numpy.array([1.0, 2.0, 3.0])).tolist()
        [6.0, 6.0]
    """
    keepdims = bool(kwargs.pop("keepdims", False))
    x1, x2 = _gufunc_check("vecdot", out, kwargs, x1, x2)
    r = _linalg.vecdot(x1, x2, axis=axis, precision=precision,
                       preferred_element_type=preferred_element_type)
    if keepdims:  # NumPy's: the contracted axis kept, of size 1, where axis names it
        r = _fs.expand_dims(r, operator_index(axis))
    return r


# ---------------------------------------------------------------------------------------------
# Applying functions


def apply_along_axis(func1d: Callable[..., Any], axis: int, arr: Any, *args: Any,
                     **kwargs: Any) -> Any:
    """``func1d`` applied to every 1-D slice of ``arr`` along ``axis``; its output axes take
    the place of ``axis``. ``func1d`` is traced once, under ``funcgrad.vmap``; one that needs
    its row's values (a boolean mask, a Python ``if``) runs once per row, as NumPy's loop,
    where ``arr`` is concrete (under ``jit`` or ``grad`` it must be written with array
    operations).

    Example:
        >>> apply_along_axis(lambda v: v[::-1], 1, numpy.array([[1, 2], [3, 4]])).tolist()
        [[2, 1], [4, 3]]
    """

    x = _arr(arr)
    xa = get_aval(x)
    ax = _fs._axis("apply_along_axis", axis, xa.ndim)
    x = _fs.moveaxis(x, ax, -1)
    lead = get_aval(x).shape[:-1]
    batch = int(numpy.prod(lead, dtype=numpy.int64))
    if batch == 0:
        raise ValueError("apply_along_axis: cannot apply_along_axis when any iteration "
                         "dimensions are 0")
    flat = _shape.reshape(x, (batch, xa.shape[ax]))
    try:
        res = vmap(lambda v: _fc.asarray(func1d(v, *args, **kwargs)))(flat)
    except ConcretizationError:
        if isinstance(flat, Tracer):
            raise
        # func1d needs its row's values (a boolean mask, a Python `if`, float()): NumPy's
        # loop, one call per row, each result written into the first one's dtype and shape
        # (NumPy's buffer: a smaller one broadcasts, as its assignment does)
        first = _fc.asarray(func1d(flat[0], *args, **kwargs))
        rows = [first] + [
            _fs.broadcast_to(_fc.asarray(func1d(flat[i], *args, **kwargs), dtype=first.dtype),
                             first.shape) for i in range(1, batch)]
        res = _fs.stack(rows)
    rshape = get_aval(res).shape[1:]
    res = _shape.reshape(res, lead + rshape)
    # Output axes go where `axis` was: lead[:ax] + rshape + lead[ax:].
    k = len(rshape)
    perm = (tuple(range(ax)) + tuple(range(len(lead), len(lead) + k))
            + tuple(range(ax, len(lead))))
    return _shape.transpose(res, perm) if perm != tuple(range(len(perm))) else res


def apply_over_axes(func: Callable[[Any, int], Any], a: Any, axes: Any) -> Any:
    """``func(a, axis)`` applied over each of ``axes`` in turn, keeping reduced axes as size 1.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> apply_over_axes(fnp.sum, numpy.arange(6).reshape(2, 3), [0, 1]).tolist()
        [[15]]
    """
    val = _arr(a)
    n = get_aval(val).ndim
    axes_list = [axes] if numpy.ndim(axes) == 0 else list(axes)
    for axis in axes_list:
        axis = operator_index(axis)
        if axis < 0:
            axis += n
        res = _arr(func(val, axis))
        if get_aval(res).ndim == get_aval(val).ndim:
            val = res
        else:
            res = _fs.expand_dims(res, axis)
            if get_aval(res).ndim != get_aval(val).ndim:
                raise ValueError("apply_over_axes: function is not returning an array of the "
                                 "correct shape")
            val = res
    return val


def _piecewise_condition(c: Any, x: Any, xa: Any) -> tuple[Any, Any]:
    """Condition ``c`` as a boolean array (as given: NumPy applies it as a boolean index,
    ``y[c] = ...``) and as a mask of ``x``'s shape. As an index it must match the leading axes
    of ``x`` exactly and covers the trailing ones whole."""
    c = _cast(_arrs_together(x, c)[1], numpy.dtype(bool))
    cs = get_aval(c).shape
    if len(cs) > xa.ndim:
        raise IndexError(f"piecewise: too many indices for array: array is {xa.ndim}-dimensional, "
                         f"but {len(cs)} were indexed (a condition of shape {cs})")
    for i, (a, b) in enumerate(zip(xa.shape, cs)):
        if a != b:
            raise IndexError(f"piecewise: boolean index did not match indexed array along axis "
                             f"{i}; size of axis is {a} but size of corresponding boolean axis "
                             f"is {b}")
    full = c if len(cs) == xa.ndim else _shape.reshape(c, cs + (1,) * (xa.ndim - len(cs)))
    return c, _fs.broadcast_to(full, xa.shape)


def _piecewise_eager(x: Any, xa: Any, conds: list, funclist: Sequence[Any], args: tuple,
                     kw: dict) -> Any:
    """NumPy's evaluation: each function sees only its own elements (``x[cond]``, skipped
    when there are none), so it neither warns nor fails on the others."""
    y = _fc.zeros_like(x)
    for c, f in zip(conds, funclist):
        if not callable(f):
            y = _fi.at(y)[c].set(_cast(_arrs_together(x, f)[1], xa.dtype))
            continue
        vals = _fi._getitem(x, c)
        if get_aval(vals).size:
            out = _arrs_together(x, f(vals, *args, **kw))[1]
            y = _fi.at(y)[c].set(_cast(out, xa.dtype))
    return y


def _piecewise_traced(x: Any, xa: Any, masks: list, funclist: Sequence[Any], args: tuple,
                      kw: dict) -> Any:
    """jax.numpy's evaluation: every function runs on the whole array and ``where`` selects.
    A function's own elements reach it as they are; the others are replaced by one of its own
    elements behind ``stop_gradient`` (their results are dropped anyway), so a function
    singular elsewhere (``log`` of the non-positive part) neither warns nor leaks nan into the
    gradient -- as JAX, whose ``vmap`` of ``switch`` selects each branch's input, gives 0
    there. Where a function owns no element (an example of ``vmap`` outside its condition) it
    still sees one it does not own, so while operations run as they are called (no ``jit``
    staging) NumPy's warnings are silenced."""
    y = _fc.zeros_like(x)
    flat = _fs.ravel(x)
    staged = staging_below(current_trace())
    for c, f in zip(masks, funclist):
        if callable(f):
            xin = x
            if xa.size:  # (an empty x has no element to replace)
                own = _fi._getitem(flat, _fr.argmax(_fs.ravel(c)))
                xin = _fe.where(c, x, _ew.stop_gradient(own))
            with contextlib.nullcontext() if staged else numpy.errstate(all="ignore"):
                val = f(xin, *args, **kw)
        else:
            val = f
        val = _fs.broadcast_to(_cast(_arrs_together(x, val)[1], xa.dtype), xa.shape)
        y = _fe.where(c, val, y)
    return y


def piecewise(x: Any, condlist: Any, funclist: Sequence[Any], *args: Any, **kw: Any) -> Any:
    """``funclist[i](x)`` where ``condlist[i]`` holds (later conditions win; one extra function
    is the default where none holds; non-callables are constants). Results take ``x``'s dtype.

    On concrete ``x`` and conditions each function is called, as in NumPy, on its own elements
    only (``x[cond]``), so a function that warns or fails elsewhere is fine. Traced (under
    ``jit``, ``grad``, ``vmap``) each function is evaluated on the whole of ``x`` and the results
    are selected with ``where`` (as in jax.numpy), so the functions must be elementwise; the
    elements a function does not own reach it replaced by one it does own, so it does not warn
    there and, as in JAX, the gradient there is 0.

    Example:
        >>> x = numpy.array([-2.0, 0.5, 3.0])
        >>> piecewise(x, [x < 0, x > 1], [lambda v: -v, lambda v: v * 10, 0.0]).tolist()
        [2.0, 0.0, 30.0]
    """
    x = _arr(x)
    xa = get_aval(x)
    # NumPy's rule: one condition when condlist is a scalar, or when its first item is not
    # an array or list (and x is not 0-d); else a sequence of conditions, so an N-d boolean
    # array is N-1-d conditions along its axis 0. For an array that is read from its rank.
    if isinstance(condlist, Tracer) or device_of(condlist) is not None:
        cnd = get_aval(condlist).ndim
        if cnd == 0 or (cnd == 1 and xa.ndim != 0):
            conds = [condlist]
        else:
            conds = list(_fs._as_sequence(condlist, "piecewise"))
    elif numpy.isscalar(condlist) or (
            not isinstance(condlist[0], list | numpy.ndarray | Tracer)
            and device_of(condlist[0]) is None and xa.ndim != 0):
        conds = [condlist]
    else:
        conds = list(condlist)
    n, n2 = len(conds), len(funclist)
    if n not in (n2, n2 - 1):
        raise ValueError(f"piecewise: with {n} condition(s), either {n} or {n + 1} functions "
                         "are expected")
    pairs = [_piecewise_condition(c, x, xa) for c in conds]
    conds, masks = [p[0] for p in pairs], [p[1] for p in pairs]
    if n == n2 - 1:
        none = masks[0]
        for c in masks[1:]:
            none = _fe.logical_or(none, c)
        masks.append(_fe.logical_not(none))
        conds.append(masks[-1])
    if not any(isinstance(v, Tracer) for v in (x, *masks)):
        return _piecewise_eager(x, xa, conds, funclist, args, kw)
    return _piecewise_traced(x, xa, masks, funclist, args, kw)


def trim_zeros(filt: Any, trim: str = "fb", axis: Any = None) -> Any:
    """``filt`` without its leading ('f') and/or trailing ('b') zeros (along every axis in
    ``axis``, all by default). Needs concrete values (they fix the result's shape).

    Example:
        >>> trim_zeros(numpy.array([0, 0, 1, 2, 0])).tolist()
        [1, 2]
    """
    x = _arr(filt)
    xa = get_aval(x)
    if not isinstance(trim, str) or trim.lower() not in ("fb", "bf", "f", "b"):
        raise ValueError(f"trim_zeros: unexpected character(s) in `trim`: {trim!r}")
    trim = trim.lower()
    axes = tuple(range(xa.ndim)) if axis is None else _fs._axes_tuple("trim_zeros", axis,
                                                                       xa.ndim)
    if not axes:
        return x
    h = _host(x, "trim_zeros: its result's shape depends on the values, so the input")
    nz = numpy.argwhere(h)
    if nz.size == 0:
        start = stop = [0] * xa.ndim
    else:
        lo, hi = nz.min(axis=0), nz.max(axis=0) + 1
        start = [int(v) if "f" in trim else 0 for v in lo]
        stop = [int(v) if "b" in trim else s for v, s in zip(hi, xa.shape)]
    for d in axes:
        x = _shape.slice_in_dim(x, start[d], builtins.max(start[d], stop[d]), 1, d)
    return x


# ---------------------------------------------------------------------------------------------
# Bessel i0 and window functions

def i0(x: Any) -> Any:
    """The modified Bessel function of the first kind, order 0 (real input; integers become
    float64, float32 and float16 stay). Differentiable.

    Example:
        >>> round(float(i0(1.0)), 10)
        1.2660658778
    """
    x = _arr(x)
    dt = get_aval(x).dtype
    if dt.kind == "c":
        raise TypeError("i0: i0 not supported for complex values")
    if dt.kind != "f":
        x = _cast(x, numpy.dtype(numpy.float64))
    # The primitive funcgrad.scipy.special.i0 wraps too: its derivative i1 is right to every
    # order at 0, where differentiating through |x| is not. It computes float16 in a wider
    # type (as SciPy does); NumPy's result stays float16.
    y = _special.i0(x)
    return _cast(y, dt) if dt == numpy.float16 else y


def _window_len(M: Any, fname: str) -> float:  # noqa: N803
    m = concrete_or_error(M, f"{fname}: the window length M")
    if device_of(m) is not None:
        m = to_numpy(m)
    return numpy.array([0.0, m])[1]


def _window(M: Any, fname: str, body: Callable[[numpy.ndarray, float], Any]) -> Any:  # noqa: N803
    m = _window_len(M, fname)
    if m < 1:
        return _fc.zeros(0, dtype=numpy.float64)
    if m == 1:
        return _fc.ones(1, dtype=numpy.float64)
    n = numpy.arange(1 - m, m, 2)
    return device_put(numpy.asarray(body(n, m), dtype=numpy.float64), get_default_device())


def bartlett(M: int) -> Any:  # noqa: N803
    """The Bartlett (triangular) window of ``M`` points.

    Example:
        >>> bartlett(5).tolist()
        [0.0, 0.5, 1.0, 0.5, 0.0]
    """
    return _window(M, "bartlett", lambda n, m: numpy.where(
        n <= 0, 1 + n / (m - 1), 1 - n / (m - 1)))


def blackman(M: int) -> Any:  # noqa: N803
    """The Blackman window of ``M`` points.

    Example:
        >>> numpy.round(blackman(3), 6).tolist()
        [-0.0, 1.0, -0.0]
    """
    return _window(M, "blackman", lambda n, m: 0.42 + 0.5 * numpy.cos(numpy.pi * n / (m - 1))
                   + 0.08 * numpy.cos(2.0 * numpy.pi * n / (m - 1)))


def hamming(M: int) -> Any:  # noqa: N803
    """The Hamming window of ``M`` points.

    Example:
        >>> numpy.round(hamming(3), 6).tolist()
        [0.08, 1.0, 0.08]
    """
    return _window(M, "hamming", lambda n, m: 0.54 + 0.46 * numpy.cos(numpy.pi * n / (m - 1)))


def hanning(M: int) -> Any:  # noqa: N803
    """The Hann window of ``M`` points.

    Example:
        >>> numpy.round(hanning(3), 6).tolist()
        [0.0, 1.0, 0.0]
    """
    return _window(M, "hanning", lambda n, m: 0.5 + 0.5 * numpy.cos(numpy.pi * n / (m - 1)))


def kaiser(M: int, beta: Any) -> Any:  # noqa: N803
    """The Kaiser window of ``M`` points with shape parameter ``beta`` (differentiable in
    ``beta``, which may be traced).

    Example:
        >>> numpy.round(kaiser(3, 5.0), 6).tolist()
        [0.036711, 1.0, 0.036711]
    """
    m = _window_len(M, "kaiser")
    if m < 1:
        return _fc.zeros(0, dtype=numpy.float64)
    if m == 1:
        return _fc.ones(1, dtype=numpy.float64)
    beta = _cast(_arr(beta), numpy.dtype(numpy.float64))
    if get_aval(beta).ndim:
        raise ValueError("kaiser: beta must be a scalar")
    n = numpy.arange(0, m)
    alpha = (m - 1) / 2.0
    r = _on_device_of(numpy.sqrt(1 - ((n - alpha) / alpha) ** 2.0), beta)
    return _fe.divide(i0(_fe.multiply(beta, r)), i0(beta))


# ---------------------------------------------------------------------------------------------
# Comparisons


def _concrete_bool(r: Any) -> Any:
    """A Python bool where the answer is known, else the traced 0-d bool array."""
    if isinstance(r, Tracer):
        v = r.to_concrete_value()
        return r if v is None else builtins.bool(to_numpy(v))
    return builtins.bool(to_numpy(r))


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    """Whether the arrays have the same shape and elements (NaNs equal with ``equal_nan``).

    Returns a Python bool, as NumPy, when the values are known; under ``jit``/``vmap`` a traced
    0-d bool array (a different shape is still a plain ``False``).

    Example:
        >>> array_equal([1, 2], numpy.array([1, 2])), array_equal([1, 2], [1, 2, 3])
        (True, False)
    """
    if _ext.is_extended(a1) or _ext.is_extended(a2):
        if not (_ext.is_extended(a1) and _ext.is_extended(a2)) or a1.shape != a2.shape:
            return False
        return _concrete_bool(_fr.all(a1 == a2))
    x, y = _arrs_together(a1, a2)  # (a list beside a device array goes to its device)
    if get_aval(x).shape != get_aval(y).shape:
        return False
    eq = _fe.equal(x, y)
    if equal_nan and (get_aval(x).dtype.kind in "fc" or get_aval(y).dtype.kind in "fc"):
        eq = _fe.logical_or(eq, _fe.logical_and(_fe.isnan(x), _fe.isnan(y)))
    return _concrete_bool(_fr.all(eq))


def array_equiv(a1: Any, a2: Any) -> Any:
    """Whether the arrays are equal after broadcasting them together (False if they cannot
    be). A Python bool when the values are known, else a traced 0-d bool array.

    Example:
        >>> array_equiv([1, 2], [[1, 2], [1, 2]]), array_equiv([1, 2], [[1, 2, 1, 2]])
        (True, False)
    """
    x, y = _arrs_together(a1, a2)
    try:
        numpy.broadcast_shapes(get_aval(x).shape, get_aval(y).shape)
    except ValueError:
        return False
    return _concrete_bool(_fr.all(_fe.equal(x, y)))
