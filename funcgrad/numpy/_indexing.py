"""funcgrad.numpy: indexing (``x[idx]``, ``x.at[idx].set/add/...``), take, diagonal and friends.

Indexing follows NumPy: integers (negative too), slices (any step), ``None``, ``...``, integer
arrays (NumPy, device or traced) and lists, and boolean masks, mixed in a tuple, with NumPy's
placement of advanced-index dimensions. Boolean masks must be concrete (their number of
``True`` entries fixes the result's shape); under ``jit`` use ``fnp.where`` instead.

Out-of-range indices raise ``IndexError`` when the index values are known; traced index
arrays (under ``jit`` or ``vmap``) cannot be checked and are clamped into range.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy

import funcgrad.numpy as fnp
import funcgrad.numpy._extended as _ext
import funcgrad.ops.control_flow as _loops
import funcgrad.ops.elementwise as _ew
import funcgrad.ops.reductions as _red
import funcgrad.ops.shape as _shape
from funcgrad import config
from funcgrad.avals import get_aval, result_dtype
from funcgrad.backend import (
    device_of,
    device_put,
    get_default_device,
    operator_index,
    to_numpy,
    xp_for,
    xp_for_device,
)
from funcgrad.core import Tracer, concrete_or_error
from funcgrad.errors import (
    AxisError,
    ConcretizationError,
    DTypeError,
    NonConcreteBooleanIndexError,
    ShapeError,
    user_source_info,
)
from funcgrad.numpy._creation import place_result
from funcgrad.numpy._elementwise import _cast_near
from funcgrad.ops import gather as _ga
from funcgrad.ops import indexing as _ix
from funcgrad.ops import scatter as _sc
from funcgrad.ops.indexing import FULL, Operand, Slice

__all__ = [
    "_getitem",
    "_IndexUpdateHelper",
    "at",
    "take",
    "take_along_axis",
    "nonzero",
    "argwhere",
    "flatnonzero",
    "diag",
    "diagonal",
    "trace",
    "tril_indices",
    "triu_indices",
    "tril_indices_from",
    "triu_indices_from",
    "diag_indices",
    "diag_indices_from",
    "compress",
    "extract",
    "select",
]

_ARRAY_TYPES = (numpy.ndarray,)


def _as_array(x: Any, device: str | None = None) -> Any:
    """Arrays and tracers as they are; Python scalars kept weak; lists become arrays."""
    if isinstance(x, Tracer) or type(x) in _ARRAY_TYPES or isinstance(x, numpy.generic):
        return x
    if isinstance(x, bool | int | float | complex):
        return x
    if device_of(x) is not None:
        return x
    if isinstance(x, list | tuple):
        host = numpy.asarray(x)
        if host.dtype == object:
            raise TypeError("funcgrad.numpy: ragged nested sequences cannot become an array")
        return _to_device(host, device or get_default_device())
    t = type(x)
    raise TypeError(f"funcgrad.numpy: expected an array, got {t.__module__}.{t.__qualname__}; "
                    "convert it first with funcgrad.numpy.asarray(x)")


def _to_device(arr: Any, device: str | None) -> Any:
    if device is None:
        return arr
    d = device_of(arr)
    if d is None or d == device:
        return arr
    return device_put(arr, device)


def _ndim(x: Any) -> int:
    return get_aval(x).ndim


def _concrete(x: Any, fn: str, sized: bool = False,
              error: type[ConcretizationError] = ConcretizationError) -> Any:
    """The concrete value of ``x``, or an error saying why ``fn`` needs one (and, for the
    functions that take it, that a static ``size=`` lifts the need)."""
    if not isinstance(x, Tracer):
        return x
    v = x.to_concrete_value()
    if v is None or isinstance(v, Tracer):
        fix = (f"pass a static size= (and optionally fill_value=) to {fn}: the first size "
               "results, padded" if sized else "use fnp.where(mask, x, 0) or a fixed-size "
               "formulation instead")
        raise x._error_class(error)(
            f"{fn} needs a concrete array, but got a traced value ({x.aval.str_short()}) "
            f"{x._origin()}under {getattr(x._trace, 'user_name', type(x._trace).__name__)}"
            f"{user_source_info().at()}: the size of its result depends on the values, which "
            f"are unknown while tracing (jit, vmap). Fix: {fix}."
        )
    return v


# ---------------------------------------------------------------------------------------------
# Index parsing: a NumPy index -> (static indexer, index arrays)


def _slice_bound(v: Any, what: str) -> int | None:
    if v is None or type(v) is int:
        return v
    if isinstance(v, Tracer):  # a traced bound would make the result's shape value-dependent
        v = concrete_or_error(
            v, f"slice {what} (a window of static size at a traced position is "
               "funcgrad.lax.dynamic_slice(x, start_indices, slice_sizes))")
    try:
        return operator_index(v)
    except TypeError:
        raise TypeError(
            f"slice {what} must be an integer or None, got {type(v).__name__}"
        ) from None


def _mask_entries(mask: Any, device: str | None) -> list[Any]:
    """Integer index arrays (one per mask dim) for a concrete boolean mask."""
    value = _concrete(mask, "indexing with a boolean mask", error=NonConcreteBooleanIndexError)
    if isinstance(value, bool | numpy.bool_) or get_aval(value).ndim == 0:
        raise IndexError(
            "indexing with a 0-d boolean (x[True] / x[False]) is not supported; use "
            "x[None] or an empty slice instead"
        )
    xp = xp_for(value)
    return [_to_device(a, device) for a in xp.nonzero(value)]


_ZERO_D_BOOL = (
    "indexing with a 0-d boolean (x[True] / x[False]) is not supported; use x[None] or an "
    "empty slice instead"
)


def _parse_index(x: Any, idx: Any) -> tuple[tuple, list[Any]]:
    """The static indexer and the index arrays of NumPy index ``idx`` applied to ``x``."""
    dev = x.aval.device if isinstance(x, Tracer) else device_of(x)
    if type(idx) is not tuple:
        idx = (idx,)
    entries: list[Any] = []
    arrays: list[Any] = []
    # (entry position, mask shape) for the shape checks of boolean masks
    masks: list[tuple[int, tuple[int, ...]]] = []
    for e in idx:
        t = type(e)
        if t is int or e is None or e is Ellipsis:
            entries.append(e)
            continue
        if t is slice:
            entries.append(Slice(_slice_bound(e.start, "start"), _slice_bound(e.stop, "stop"),
                                 _slice_bound(e.step, "step")))
            continue
        if t is bool or t is numpy.bool_:
            raise IndexError(_ZERO_D_BOOL)
        if isinstance(e, numpy.integer):
            entries.append(int(e))
            continue
        if (t is list or t is tuple) and _holds_arrays(e):
            # [i, 0] with i a traced or device integer: one index array, as NumPy's (and
            # jax.numpy's) conversion of the list gives (NumPy cannot read device values)
            e = fnp.asarray(e)
        elif t is list or t is tuple or t is range:  # (NumPy takes a range as its list)
            host = numpy.asarray(e)
            if host.size == 0:
                host = host.astype(numpy.intp)
            e = host
        elif t is not numpy.ndarray and not isinstance(e, Tracer) and device_of(e) is None:
            raise IndexError(
                f"only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                f"integer or boolean arrays are valid indices, got {type(e).__name__}"
            )
        kind = e.dtype.kind
        if kind == "b":
            masks.append((len(entries), tuple(e.shape)))
            for a in _mask_entries(e, dev):
                entries.append(Operand(len(arrays)))
                arrays.append(a)
            continue
        if kind not in "iu":
            raise IndexError(
                f"arrays used as indices must be of integer (or boolean) type, got {e.dtype}"
            )
        if dev is not None and not isinstance(e, Tracer):
            e = _to_device(e, dev)
        entries.append(Operand(len(arrays)))
        arrays.append(e)
    if masks:
        _check_masks(entries, masks, tuple(x.shape) if hasattr(x, "shape") else ())
    return tuple(entries), arrays


def _holds_arrays(v: Any) -> bool:
    """Whether the list or tuple ``v`` holds (at any depth) a traced or device value."""
    return any(_holds_arrays(x) if isinstance(x, list | tuple) else
               isinstance(x, Tracer) or device_of(x) not in (None, "cpu") for x in v)


def _check_masks(entries: list, masks: list[tuple[int, tuple[int, ...]]],
                 shape: tuple[int, ...]) -> None:
    consumed = sum(1 for e in entries if e is not None and e is not Ellipsis)
    axis = 0
    axis_at: dict[int, int] = {}
    for i, e in enumerate(entries):
        axis_at[i] = axis
        if e is Ellipsis:
            axis += len(shape) - consumed
        elif e is not None:
            axis += 1
    for pos, mshape in masks:
        start = axis_at[pos]
        for j, m in enumerate(mshape):
            ax = start + j
            if ax >= len(shape):
                raise IndexError(
                    f"too many indices for array: array is {len(shape)}-dimensional, but the "
                    f"boolean index of shape {mshape} needs more"
                )
            # (NumPy lets an empty boolean axis stand against any size: it selects nothing)
            if shape[ax] != m and m != 0:
                raise IndexError(
                    f"boolean index did not match indexed array along axis {ax}; size of axis "
                    f"is {shape[ax]} but size of corresponding boolean axis is {m}"
                )


def _getitem(x: Any, idx: Any) -> Any:
    """``x[idx]`` with NumPy semantics (what ``Tracer.__getitem__`` calls).

    Example:
        >>> import numpy as np
        >>> _getitem(np.arange(6).reshape(2, 3), (slice(None), [2, 0]))
        array([[2, 0],
               [5, 3]])
    """
    if type(idx) is int:  # the hot path: t[i]
        try:
            return _ga.gather_p.bind(x, indexer=(idx,), mode="raise")
        except _ix.IndexingError:
            if not config.checked_static_indices.get():
                raise
            return _getitem(x, numpy.asarray(idx))
    scalar_bools = _scalar_bool_positions(idx)
    if scalar_bools:
        return _getitem_scalar_bools(x, idx, scalar_bools)
    indexer, arrays = _parse_index(x, idx)
    try:
        return _ga.gather_canonical(x, *arrays, indexer=indexer)
    except _ix.IndexingError:
        if not config.checked_static_indices.get() or not any(type(e) is int for e in indexer):
            raise
    # Under checkify's index_checks: the integers as 0-d index arrays (the same selection,
    # as NumPy defines it), so an out-of-bounds one is a recorded check, not a trace error.
    entries = idx if type(idx) is tuple else (idx,)
    return _getitem(x, tuple(numpy.asarray(e) if type(e) is int
                             or isinstance(e, numpy.integer) else e for e in entries))


def _is_scalar_bool(e: Any) -> bool:
    return type(e) is bool or type(e) is numpy.bool_ or (
        type(e) is numpy.ndarray and e.ndim == 0 and e.dtype == bool)


def _scalar_bool_positions(idx: Any) -> list[int]:
    entries = idx if type(idx) is tuple else (idx,)
    return [i for i, e in enumerate(entries) if _is_scalar_bool(e)]


def _scalar_bools_as_axes(x: Any, idx: Any, positions: list[int]) -> tuple[Any, tuple, tuple]:
    """``(y, index, axes)`` for an index with 0-d booleans at ``positions``, as NumPy reads
    them: each is an advanced index over a new length-1 axis, selecting it (True) or nothing
    (False); it broadcasts with the other advanced indices (integers among them) and places
    its axis by NumPy's rules. ``y`` is ``x`` with those axes inserted at ``axes``, ``index``
    the index with each boolean replaced by ``[0]`` or ``[]``."""
    entries = list(idx) if type(idx) is tuple else [idx]
    ndim_y = get_aval(x).ndim + len(positions)
    consumed = sum(_axes_consumed(e) for e in entries)
    axis, inserted = 0, []
    for i, e in enumerate(entries):
        if i in positions:
            inserted.append(axis)
            entries[i] = numpy.zeros(1 if bool(e) else 0, dtype=numpy.intp)
        axis += ndim_y - consumed if e is Ellipsis else _axes_consumed(e)
    axes = tuple(inserted)
    return _shape.expand_dims(x, axes), tuple(entries), axes


def _getitem_scalar_bools(x: Any, idx: Any, positions: list[int]) -> Any:
    """``x[..., True, ...]`` / ``x[..., False, ...]`` as NumPy (:func:`_scalar_bools_as_axes`)."""
    y, index, _ = _scalar_bools_as_axes(x, idx, positions)
    return _getitem(y, index)


def _axes_consumed(e: Any) -> int:
    """How many axes of the indexed array index entry ``e`` stands for (a 0-d boolean: its
    new axis)."""
    if e is None or e is Ellipsis:
        return 0
    if _is_scalar_bool(e):
        return 1
    if type(e) is list or type(e) is tuple:
        e = numpy.asarray(e)
    if hasattr(e, "dtype") and get_aval(e).dtype == bool:
        return get_aval(e).ndim
    return 1



# ---------------------------------------------------------------------------------------------
# x.at[idx].op(values)

_AT_KWARGS = frozenset({"indices_are_sorted", "unique_indices", "mode",
                        "wrap_negative_indices"})


def _at_options(kwargs: dict, what: str, write: bool) -> tuple[str, bool]:
    """(the primitives' mode, wrap_negative_indices) from ``.at[...]``'s keyword arguments."""
    bad = set(kwargs) - _AT_KWARGS
    if bad:
        raise TypeError(f"x.at[...].{what}() got unexpected keyword argument(s) {sorted(bad)}")
    return (_at_mode(f"x.at[...].{what}", kwargs.get("mode"), write),
            bool(kwargs.get("wrap_negative_indices", True)))


def _at_mode(name: str, mode: Any, write: bool) -> str:
    """The primitives' mode for ``.at``'s ``mode``: JAX's (``GatherScatterMode`` knows them;
    left out, reads promise in-bounds indices and writes drop, as in JAX) or funcgrad's
    ``'raise'`` (NumPy's checks)."""
    if isinstance(mode, str) and mode == "raise":
        return "raise"
    if mode is None:
        mode = "fill" if write else "promise_in_bounds"
    try:
        m = _ix.GatherScatterMode.from_any(mode)
    except ValueError:
        raise ValueError(
            f"{name}: mode must be one of 'promise_in_bounds' (the default), 'clip', 'drop', "
            f"'fill', 'one_hot' (reads only), a GatherScatterMode, or 'raise' (NumPy's "
            f"checks), got {mode!r}"
        ) from None
    try:
        return m.index_mode(scatter=write)
    except ValueError as e:
        raise ValueError(f"{name}: {e}") from None


def _at_index(x: Any, index: Any, mode: str, wrap: bool) -> tuple[tuple, list[Any]]:
    """The indexer and index arrays of ``x.at[index]`` under ``mode``.

    Out of range is not an error under JAX's modes: a static integer that is out of range
    (or negative, with ``wrap_negative_indices=False``) becomes a 0-d index array, so the
    mode decides what it reads or writes; ``wrap_negative_indices=False`` turns negative
    indices into out-of-range ones (dropped, filled, or clamped to 0).
    """
    indexer, arrays = _parse_index(x, index)
    if mode == "raise" or (wrap and not any(type(e) is int for e in indexer)):
        return indexer, arrays
    shape = get_aval(x).shape
    dev = get_aval(x).device
    entries = list(indexer)
    consumed = sum(1 for e in indexer if e is not None and e is not Ellipsis)
    axis = 0
    axis_of: dict[int, int] = {}
    for i, e in enumerate(indexer):
        if e is Ellipsis:
            axis += len(shape) - consumed
            continue
        if e is None:
            continue
        axis_of[i] = axis
        axis += 1
    for i, e in enumerate(indexer):
        if type(e) is not int or i not in axis_of or axis_of[i] >= len(shape):
            continue
        n = shape[axis_of[i]]
        if not -n <= e < n or (e < 0 and not wrap):
            entries[i] = Operand(len(arrays))
            arrays.append(_to_device(numpy.asarray(e, dtype=numpy.intp), dev or None))
    if not wrap:
        for i, e in enumerate(entries):
            if type(e) is not Operand or i not in axis_of or axis_of[i] >= len(shape):
                continue
            a = arrays[e.k]
            if get_aval(a).dtype.kind == "i":
                # A negative index counts as out of range: past the end for "fill", below the
                # start for the clamping modes.
                arrays[e.k] = fnp.where(fnp.less(a, 0), shape[axis_of[i]] if mode == "fill"
                                        else 0, a)
    return tuple(entries), arrays


def _static_scalar(v: Any, dtype: numpy.dtype) -> Any:
    """A concrete fill value as the Python scalar of ``dtype`` the gather primitive takes."""
    host = numpy.asarray(to_numpy(v))
    if host.ndim != 0:
        raise ValueError(f"x.at[...].get: fill_value must be a scalar, got shape {host.shape}")
    return host.astype(dtype).item()


class _IndexUpdateRef:
    """``x.at[idx]``: functional updates of ``x`` at ``idx``; every method returns a new array.

    Every method takes JAX's keyword arguments: ``mode`` for out-of-range indices
    (``'promise_in_bounds'``, the default: reads clamp, writes are dropped; ``'clip'``:
    clamp; ``'drop'`` / ``'fill'``: writes dropped, reads give ``fill_value``; funcgrad's
    ``'raise'``: NumPy's ``IndexError`` for concrete indices), ``wrap_negative_indices``
    (default True: negative indices count from the end), ``indices_are_sorted`` and
    ``unique_indices`` (promises, accepted for compatibility).
    """

    __slots__ = ("array", "index")

    def __init__(self, array: Any, index: Any) -> None:
        self.array = array
        self.index = index

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def _prepare(self, values: Any, what: str, same_kind: bool, kwargs: dict):
        mode, wrap = _at_options(kwargs, what, write=True)
        x = self.array
        xa = get_aval(x)
        indexer, arrays = _at_index(x, self.index, mode, wrap)
        if mode == "raise":  # NumPy's checks where the indices are known, else clamping
            mode = _ix.default_mode(arrays)
        values = _as_array(values, xa.device)
        va = get_aval(values)
        if same_kind:
            rdt, _ = result_dtype(xa, va)
            if not numpy.can_cast(rdt, xa.dtype, "same_kind"):
                raise DTypeError(
                    f"x.at[...].{what}: cannot cast the result {rdt} of combining "
                    f"{xa.dtype} x with {va.dtype} values back to {xa.dtype} (NumPy's "
                    "'same_kind' rule); cast x or the values first"
                )
        lay = _ix.index_layout("x.at[...]." + what, indexer, xa.shape,
                               tuple(get_aval(a).shape for a in arrays))
        g = lay.out_shape
        if va.ndim > len(g):
            extra = va.shape[: va.ndim - len(g)]
            if any(s != 1 for s in extra):
                raise ShapeError(
                    f"x.at[...].{what}: values of shape {va.shape} cannot be broadcast to the "
                    f"indexed shape {g}"
                )
            values = _shape.reshape(values, va.shape[va.ndim - len(g):])
        else:
            try:
                ok = tuple(numpy.broadcast_shapes(va.shape, g)) == g
            except ValueError:
                ok = False
            if not ok:
                raise ShapeError(
                    f"x.at[...].{what}: values of shape {va.shape} cannot be broadcast to the "
                    f"indexed shape {g}"
                )
        return x, values, arrays, indexer, mode

    def get(self, *, fill_value: Any = None, **kwargs: Any) -> Any:
        """``x[idx]``; out-of-range indices clamp (default, ``mode='clip'``) or read
        ``fill_value`` (``mode='fill'``; default NaN, or the integer extreme, as JAX)."""
        mode, wrap = _at_options(kwargs, "get", write=False)
        x = self.array
        xa = get_aval(x)
        indexer, arrays = _at_index(x, self.index, mode, wrap)
        if mode == "raise":  # NumPy's checks where the indices are known, else clamping
            mode = _ix.default_mode(arrays)
        if mode != "fill" or not arrays:
            return _ga.gather_canonical(x, *arrays, indexer=indexer, mode=mode)
        # JAX's mode decides the fill (ONE_HOT reads 0), else fill_value, else JAX's default.
        fill_value = _ix.GatherScatterMode.from_any(kwargs.get("mode")).read_fill_value(
            xa.dtype, fill_value)
        if not isinstance(fill_value, Tracer):
            return _ga.gather_canonical(x, *arrays, indexer=indexer, mode=mode,
                                        fill_value=_static_scalar(fill_value, xa.dtype))
        # A traced fill value: the zero-filling gather, and a gather of ones marking the
        # valid reads.
        out = _ga.gather_canonical(x, *arrays, indexer=indexer, mode=mode)
        ones = _shape.broadcast_in_dim(_ix.full((), True, numpy.bool_, xa.device), xa.shape, ())
        valid = _ga.gather_canonical(ones, *arrays, indexer=indexer, mode="fill")
        fill = _ew.convert_element_type(fill_value, xa.dtype)
        return _ew.select_n(valid, fill, out)

    def set(self, values: Any, **kwargs: Any) -> Any:
        """A copy of ``x`` with ``x[idx] = values`` (the last of repeated indices wins)."""
        x, v, arrays, indexer, mode = self._prepare(values, "set", False, kwargs)
        return _sc.scatter(x, v, *arrays, indexer=indexer, mode=mode)

    def apply(self, func: Any, **kwargs: Any) -> Any:
        """A copy of ``x`` with the unary ``func`` applied at ``idx``, once per occurrence of a
        position (``ufunc.at(x, idx)``; JAX's ``.at[idx].apply``).

        Differentiable when the indices are concrete (eagerly, under ``grad``) or promised
        unique (``unique_indices=True``); with traced indices that may repeat, the number of
        applications is found at run time by a ``while_loop`` (forward-mode differentiable).
        """
        if not callable(func):
            raise TypeError(f"x.at[...].apply: expected a function, got {type(func).__name__}")
        x = self.array
        xa = get_aval(x)
        zero = _ix.zeros((), xa.dtype, xa.device)
        x, _, arrays, indexer, mode = self._prepare(zero, "apply", False, kwargs)

        def once(y: Any, mask: Any = None) -> Any:
            cur = _ga.gather_canonical(y, *arrays, indexer=indexer, mode=mode)
            new = _ew.convert_element_type(_as_array(func(cur), xa.device), xa.dtype)
            if mask is not None:
                new = _ew.select_n(mask, cur, new)
            return _sc.scatter(y, new, *arrays, indexer=indexer, mode=mode)

        if not arrays or kwargs.get("unique_indices") or not _ix.may_repeat(
                xa.shape, arrays, indexer):
            return once(x)
        # Position p is applied count[p] times: pass c applies where count > c.
        ones = _ix.full((), 1, numpy.int64, xa.device)
        counts = _sc.scatter_add(_ix.zeros(xa.shape, numpy.int64, xa.device), ones, *arrays,
                                 indexer=indexer, mode=mode)
        per_update = _ga.gather_canonical(counts, *arrays, indexer=indexer, mode=mode)
        top = _red.reduce_max(counts, axes=tuple(range(xa.ndim))) if xa.ndim else counts
        n = top.to_concrete_value() if isinstance(top, Tracer) else top
        if n is not None and not isinstance(n, Tracer):
            y = x
            for c in range(int(n)):
                y = once(y, _ew.gt(per_update, c))
            return y
        return _apply_loop(once, x, per_update, top)

    def add(self, values: Any, **kwargs: Any) -> Any:
        """A copy of ``x`` with ``values`` added at ``idx`` (repeated indices accumulate)."""
        x, v, arrays, indexer, mode = self._prepare(values, "add", True, kwargs)
        return _sc.scatter_add(x, v, *arrays, indexer=indexer, mode=mode)

    def subtract(self, values: Any, **kwargs: Any) -> Any:
        """A copy of ``x`` with ``values`` subtracted at ``idx`` (repeated indices accumulate)."""
        x, v, arrays, indexer, mode = self._prepare(values, "subtract", True, kwargs)
        xa = get_aval(x)
        if get_aval(v).dtype != xa.dtype:
            v = _ew.convert_element_type(v, xa.dtype)
        # Python scalars are negated in Python: they stay weak and on no device.
        neg = -v if isinstance(v, int | float | complex) else _ew.neg(v)
        return _sc.scatter_add(x, neg, *arrays, indexer=indexer, mode=mode)

    def multiply(self, values: Any, **kwargs: Any) -> Any:
        """A copy of ``x`` multiplied by ``values`` at ``idx`` (repeated indices multiply)."""
        x, v, arrays, indexer, mode = self._prepare(values, "multiply", True, kwargs)
        return _sc.scatter_mul(x, v, *arrays, indexer=indexer, mode=mode)

    mul = multiply

    def divide(self, values: Any, **kwargs: Any) -> Any:
        """A copy of ``x`` divided by ``values`` at ``idx`` (as multiplication by ``1/values``)."""
        x, v, arrays, indexer, mode = self._prepare(values, "divide", True, kwargs)
        xa = get_aval(x)
        if xa.dtype.kind not in "fc":
            raise DTypeError(
                f"x.at[...].divide: true division of a {xa.dtype} array cannot be stored back "
                "in it; cast x to a float dtype first"
            )
        if get_aval(v).dtype != xa.dtype:
            v = _ew.convert_element_type(v, xa.dtype)
        if isinstance(v, int | float | complex):
            with numpy.errstate(divide="ignore", invalid="ignore"):
                inv = xa.dtype.type(1) / xa.dtype.type(v)
        else:
            inv = _ew.div(1, v)
        return _sc.scatter_mul(x, inv, *arrays, indexer=indexer, mode=mode)

    def power(self, values: Any, **kwargs: Any) -> Any:
        """A copy of ``x`` with ``x[idx] ** values`` at ``idx``.

        A repeated index is raised once per occurrence, as ``numpy.power.at`` and JAX:
        ``x ** (v1 * v2)``, the exponents multiplied by a scatter (JAX's formula).
        """
        x, v, arrays, indexer, mode = self._prepare(values, "power", True, kwargs)
        xa = get_aval(x)
        ones = _shape.broadcast_in_dim(_ix.full((), 1, xa.dtype, xa.device), xa.shape, ())
        exponents = _sc.scatter_mul(ones, v, *arrays, indexer=indexer, mode=mode)
        new = _ew.pow(x, exponents)
        if get_aval(new).dtype != xa.dtype:
            new = _ew.convert_element_type(new, xa.dtype)
        return new

    def min(self, values: Any, **kwargs: Any) -> Any:
        """A copy of ``x`` with ``minimum(x[idx], values)`` at ``idx`` (``numpy.minimum.at``)."""
        x, v, arrays, indexer, mode = self._prepare(values, "min", True, kwargs)
        return _sc.scatter_min(x, v, *arrays, indexer=indexer, mode=mode)

    def max(self, values: Any, **kwargs: Any) -> Any:
        """A copy of ``x`` with ``maximum(x[idx], values)`` at ``idx`` (``numpy.maximum.at``)."""
        x, v, arrays, indexer, mode = self._prepare(values, "max", True, kwargs)
        return _sc.scatter_max(x, v, *arrays, indexer=indexer, mode=mode)


def _placing(method: Any) -> Any:
    """``method`` with JAX's ``out_sharding=`` (funcgrad.numpy._creation.place_result)."""

    @functools.wraps(method)
    def m(self: Any, *args: Any, out_sharding: Any = None, **kwargs: Any) -> Any:
        out = method(self, *args, **kwargs)
        if out_sharding is None:
            return out
        return place_result(f"x.at[...].{method.__name__}", out, out_sharding)

    return m


# JAX's get/set/add/... take out_sharding= (apply does not)
for _name in ("get", "set", "add", "subtract", "multiply", "divide", "power", "min", "max"):
    setattr(_IndexUpdateRef, _name, _placing(getattr(_IndexUpdateRef, _name)))


def _apply_loop(once: Any, x: Any, per_update: Any, top: Any) -> Any:
    """``once`` applied in passes ``c = 0 .. top - 1`` (a run-time count) to the updates whose
    position occurs more than ``c`` times."""
    def cond(state: tuple) -> Any:
        return _ew.lt(state[0], top)

    def body(state: tuple) -> tuple:
        c, y = state
        return _ew.add(c, 1), once(y, _ew.gt(per_update, c))

    start = _ix.zeros((), get_aval(top).dtype, get_aval(x).device)
    return _loops.while_loop(cond, body, (start, x))[1]


class _ScalarBoolUpdateRef:
    """``x.at[..., True, ...]`` (0-d booleans in the index, as JAX and NumPy allow): each is a
    new length-1 axis selected whole (True) or not at all (False). Every method works on
    ``x`` with those axes inserted and removes them from the result (``get`` keeps them, as
    ``x[True]`` does)."""

    __slots__ = ("_ref", "_axes")

    def __init__(self, array: Any, index: Any, positions: list[int]) -> None:
        y, entries, self._axes = _scalar_bools_as_axes(array, index, positions)
        self._ref = _IndexUpdateRef(y, entries)

    def get(self, **kwargs: Any) -> Any:
        return self._ref.get(**kwargs)

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._ref, name)  # set, add, multiply, ..., apply

        def update(*args: Any, **kwargs: Any) -> Any:
            return _shape.squeeze(method(*args, **kwargs), self._axes)

        return update


class _IndexUpdateHelper:
    """The ``x.at`` object: ``x.at[idx]`` gives an :class:`_IndexUpdateRef`."""

    __slots__ = ("array",)

    def __init__(self, array: Any) -> None:
        self.array = array

    def __getitem__(self, index: Any) -> Any:
        positions = _scalar_bool_positions(index)
        if positions:
            return _ScalarBoolUpdateRef(self.array, index, positions)
        return _IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


def at(x: Any) -> _IndexUpdateHelper:
    """Functional indexed updates of any array: ``fnp.at(x)[idx].add(v)`` is ``x.at[idx].add(v)``.

    Returns new arrays; ``x`` is never modified. Repeated indices accumulate for ``add``,
    ``subtract``, ``multiply``, ``min`` and ``max`` (like ``numpy.add.at``).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.at(np.zeros(3))[np.array([0, 0, 2])].add(1.0)
        array([2., 0., 1.])
    """
    return _IndexUpdateHelper(_as_array(x))


# ---------------------------------------------------------------------------------------------
# take / take_along_axis


def _norm_axis(fn: str, axis: Any, ndim: int) -> int:
    if isinstance(axis, Tracer):  # the axis fixes the result's shape: it must be static
        axis = concrete_or_error(axis, f"{fn}: axis")
    try:
        axis = operator_index(axis)
    except TypeError:
        raise TypeError(f"{fn}: axis must be an integer, got {type(axis).__name__}") from None
    if not -ndim <= axis < ndim:
        raise AxisError(f"{fn}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _ravel(x: Any) -> Any:
    a = get_aval(x)
    return x if a.ndim == 1 else _shape.reshape(x, (a.size,))


def take(a: Any, indices: Any, axis: int | None = None, out: Any = None,
         mode: str | None = "raise", unique_indices: bool = False,
         indices_are_sorted: bool = False, fill_value: Any = None) -> Any:
    """Elements of ``a`` at ``indices`` along ``axis`` (flattened ``a`` when None), as NumPy.

    ``mode``: NumPy's ``'raise'`` (the default: out of range raises; with traced indices they
    are clamped), ``'wrap'`` or ``'clip'``; or JAX's ``'fill'``/``'drop'`` (out of range reads
    ``fill_value``: default NaN, or the integer extreme, as ``x.at[...].get``) and
    ``'promise_in_bounds'`` (clamped); with these, negative indices count from the end once.
    ``unique_indices`` and ``indices_are_sorted`` are JAX's promises, accepted.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.take(np.array([[1, 2], [3, 4]]), [1, 0], axis=1)
        array([[2, 1],
               [4, 3]])
        >>> fnp.take(np.array([1.0, 2.0]), np.array([1, 5]), mode="fill", fill_value=-1.0)
        array([ 2., -1.])
    """
    if _ext.is_extended(a):
        return _ext.take(a, indices, axis, mode, fill_value)
    if out is not None:
        raise TypeError("fnp.take: out= is not supported (funcgrad arrays are immutable)")
    if mode is None:  # (NumPy reads None as the default)
        mode = "raise"
    jax_mode = mode == "fill"
    if not jax_mode and mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"fnp.take: mode must be 'raise', 'wrap', 'clip' or 'fill', got {mode!r}")
    if fill_value is not None and not jax_mode:
        raise ValueError(f"fnp.take: fill_value needs mode='fill' (got mode={mode!r})")
    a = _as_array(a)
    # (NumPy takes along a 0-d array as if it were 1-d)
    if axis is None or _ndim(a) == 0 and axis in (0, -1) and type(axis) is not bool:
        a = _ravel(a)
        axis = 0
    aa = get_aval(a)
    axis = _norm_axis("fnp.take", axis, aa.ndim)
    n = aa.shape[axis]
    if jax_mode:
        ind = _as_array(indices, aa.device)
        if get_aval(ind).dtype.kind not in "iu":
            raise TypeError(f"fnp.take: indices must be integers, got dtype "
                            f"{get_aval(ind).dtype}")
        return at(a)[(slice(None),) * axis + (ind,)].get(mode=mode, fill_value=fill_value)
    if isinstance(indices, int | numpy.integer) and not isinstance(indices, bool):
        i = int(indices)
        if mode == "wrap" and n:
            i %= n
        elif mode == "clip":
            i = min(max(i, 0), n - 1)
        return _ga.gather(a, indexer=(FULL,) * axis + (i,))
    ind = _as_array(indices, aa.device)
    ia = get_aval(ind)
    if ia.dtype.kind not in "iu":
        if ia.dtype.kind == "b" or ia.size == 0:
            ind = _ew.convert_element_type(ind, numpy.intp)
        else:
            raise TypeError(
                f"fnp.take: indices must be integers, got dtype {ia.dtype}"
            )
    if not isinstance(ind, Tracer):
        ind = _to_device(ind, aa.device)
    m = None if mode == "raise" else mode
    return _ga.gather(a, ind, indexer=(FULL,) * axis + (Operand(0),), mode=m)


def _axis_iota(n: int, ndim: int, axis: int, device: str | None) -> Any:
    """``arange(n)`` shaped to broadcast along ``axis`` of a rank-``ndim`` array."""
    xp = xp_for_device(device or get_default_device())
    shape = [1] * ndim
    shape[axis] = n
    return xp.arange(n, dtype=numpy.intp).reshape(shape)


def take_along_axis(arr: Any, indices: Any, axis: int | None = -1, *, mode: Any = None,
                    fill_value: Any = None, wrap_negative_indices: bool = True) -> Any:
    """``arr`` picked at ``indices`` along ``axis``, matching 1-D slices (NumPy semantics).

    ``mode`` (JAX's): None checks indices as NumPy does (an ``IndexError`` for concrete ones;
    traced ones clamp); ``'clip'``/``'promise_in_bounds'`` clamp; ``'fill'``/``'drop'`` read
    ``fill_value`` (default NaN, or the integer extreme) out of range; ``'one_hot'`` reads 0
    out of range, as JAX's one-hot contraction does. Negative indices count from the end once;
    with ``wrap_negative_indices=False`` (JAX's) they are out of range instead.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> x = np.array([[10, 30, 20], [60, 40, 50]])
        >>> fnp.take_along_axis(x, np.argsort(x, axis=1), axis=1)
        array([[10, 20, 30],
               [40, 50, 60]])
        >>> fnp.take_along_axis(np.array([1.0, 2.0]), np.array([-1, 2]), 0, mode="one_hot")
        array([2., 0.])
    """
    arr = _as_array(arr)
    indices = _as_array(indices, get_aval(arr).device)
    ia = get_aval(indices)
    if ia.dtype.kind not in "iu":
        raise IndexError("fnp.take_along_axis: `indices` must be an integer array")
    if axis is None:
        if ia.ndim != 1:
            raise ValueError("fnp.take_along_axis: when axis=None, `indices` must be 1-D")
        arr = _ravel(arr)
        axis = 0
    aa = get_aval(arr)
    axis = _norm_axis("fnp.take_along_axis", axis, aa.ndim)
    if ia.ndim != aa.ndim:
        raise ValueError(
            f"fnp.take_along_axis: `indices` and `arr` must have the same number of "
            f"dimensions, got {ia.ndim} and {aa.ndim}"
        )
    if not isinstance(indices, Tracer):
        indices = _to_device(indices, aa.device)
    if not wrap_negative_indices and ia.dtype.kind == "i":
        # A negative index counts as out of range: below the start for the clamping modes,
        # past the end otherwise.
        clamps = mode is not None and _ix.GatherScatterMode.from_any(mode).index_mode(
            scatter=False) == "clamp"
        indices = fnp.where(fnp.less(indices, 0), 0 if clamps else aa.shape[axis], indices)
    arrays: list[Any] = []
    entries: list[Any] = []
    for d in range(aa.ndim):
        entries.append(Operand(len(arrays)))
        if d == axis:
            arrays.append(indices)
        else:
            arrays.append(_axis_iota(aa.shape[d], aa.ndim, d, aa.device))
    if mode is None:
        return _ga.gather(arr, *arrays, indexer=tuple(entries),
                          mode=_ix.default_mode([indices]))
    try:
        m = _ix.GatherScatterMode.from_any(mode)
    except ValueError as e:
        raise ValueError(f"fnp.take_along_axis: {e}") from None
    prim_mode = m.index_mode(scatter=False)
    fill = m.read_fill_value(aa.dtype, fill_value) if prim_mode == "fill" else None
    return _ga.gather(arr, *arrays, indexer=tuple(entries), mode=prim_mode, fill_value=fill)


# ---------------------------------------------------------------------------------------------
# nonzero and friends: concrete input, or a static size= (JAX's extension) under jit/vmap


def _concrete_array(a: Any, fn: str) -> Any:
    v = _concrete(_as_array(a), fn, sized=True)
    if isinstance(v, bool | int | float | complex | numpy.generic):
        v = xp_for_device(get_default_device()).asarray(v)
    return v


def _static_size(fn: str, size: Any) -> int:
    try:
        n = operator_index(size)
    except TypeError:
        raise TypeError(f"{fn}: size must be a static int, got {type(size).__name__} (a traced "
                        "size cannot set a shape: pass a Python int, static under jit)") from None
    if n < 0:
        raise ValueError(f"{fn}: size must be non-negative, got {n}")
    return n


def _nonzero_sized(fn: str, a: Any, size: int, fill_value: Any) -> tuple[Any, ...]:
    """The first ``size`` nonzero positions of ``a`` (padded with ``fill_value``), one int64
    array per axis, from shapes alone: it traces under ``jit`` and ``vmap``.

    Each nonzero element's rank among the nonzeros (a cumulative sum) is where its flat
    position is written; ranks past ``size`` (and the zeros) are dropped.
    """
    aa = get_aval(a)
    fills = _fill_values(fn, fill_value, aa.ndim)
    flat = fnp.not_equal(_ravel(a), False if aa.dtype.kind == "b" else 0)
    n = aa.size
    dev = aa.device
    rank = fnp.subtract(fnp.cumsum(flat, dtype=numpy.int64), 1)
    target = fnp.where(flat, rank, size)
    base = _ix.zeros((size,), numpy.int64, dev)
    pos = at(base)[target].set(_ix.iota((n,), dev), mode="drop")
    valid = fnp.less(_ix.iota((size,), dev), fnp.sum(flat, dtype=numpy.int64))
    out = []
    stride = n
    for d, m in enumerate(aa.shape):
        stride //= m if m else 1
        i = fnp.remainder(fnp.floor_divide(pos, max(stride, 1)), max(m, 1))
        out.append(fnp.where(valid, i, _fill_int(fn, fills[d], dev)))
    return tuple(out)


def _fill_int(fn: str, v: Any, device: str | None) -> Any:
    """A per-axis fill value (a concrete scalar or a traced 0-d array) as an int64 0-d array."""
    if isinstance(v, Tracer):
        return _ew.convert_element_type(v, numpy.int64)
    try:
        i = int(numpy.asarray(to_numpy(v)).astype(numpy.int64))
    except (TypeError, ValueError):
        raise TypeError(f"{fn}: fill_value must be an integer, got {v!r}") from None
    return _ix.full((), i, numpy.int64, device)


def _fill_values(fn: str, fill_value: Any, ndim: int) -> list[Any]:
    """Per-axis fill values: one for every axis, or a sequence of ``ndim`` (JAX)."""
    if fill_value is None:
        return [0] * ndim
    if isinstance(fill_value, tuple | list):
        if len(fill_value) != ndim:
            raise ValueError(f"{fn}: fill_value must be a scalar or a tuple of length "
                             f"{ndim} (one per axis), got length {len(fill_value)}")
        vals = list(fill_value)
    else:
        vals = [fill_value] * ndim
    for v in vals:
        if get_aval(_as_array(v)).ndim != 0:
            raise ValueError(f"{fn}: fill_value entries must be scalars, got shape "
                             f"{get_aval(_as_array(v)).shape}")
    return vals


def _no_zero_d(fn: str, a: Any) -> None:
    if get_aval(a).ndim == 0:
        raise ValueError(f"{fn}: calling nonzero on 0d arrays is not allowed (as in NumPy 2). "
                         "Use fnp.atleast_1d(scalar).nonzero() instead.")


def nonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> tuple[Any, ...]:
    """Indices of the non-zero elements, one integer array per axis.

    The output length depends on the values, so ``a`` must be concrete, or (as in
    ``jax.numpy``) a static ``size=`` fixes it: the first ``size`` indices, padded with
    ``fill_value`` (default 0; a scalar, or one per axis) when there are fewer. With
    ``size`` it works under ``jit`` and ``vmap``.

    Example:
        >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
        >>> fnp.nonzero(np.array([0, 3, 0, 4]))
        (array([1, 3]),)
        >>> funcgrad.jit(lambda x: fnp.nonzero(x, size=3, fill_value=-1))(np.array([0, 3, 0, 4]))
        (array([ 1,  3, -1]),)
    """
    a = _as_array(a)
    _no_zero_d("fnp.nonzero", a)
    if size is None:
        if fill_value is not None:
            raise ValueError("fnp.nonzero: fill_value needs size= (it pads to that size)")
        v = _concrete_array(a, "fnp.nonzero")
        return tuple(xp_for(v).nonzero(v))
    return _nonzero_sized("fnp.nonzero", a, _static_size("fnp.nonzero", size), fill_value)


def argwhere(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Indices of non-zero elements as a ``(count, ndim)`` array.

    Concrete input, or a static ``size=`` (rows padded with ``fill_value``, default 0, a
    scalar or one per axis), as ``jax.numpy.argwhere``; then it works under ``jit``/``vmap``.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.argwhere(np.array([[0, 1], [2, 0]]))
        array([[0, 1],
               [1, 0]])
        >>> fnp.argwhere(np.array([[0, 1], [2, 0]]), size=3, fill_value=-1)
        array([[ 0,  1],
               [ 1,  0],
               [-1, -1]])
    """
    a = _as_array(a)
    if size is None:
        if fill_value is not None:
            raise ValueError("fnp.argwhere: fill_value needs size= (it pads to that size)")
        v = _concrete_array(a, "fnp.argwhere")
        return xp_for(v).argwhere(v)
    n = _static_size("fnp.argwhere", size)
    if get_aval(a).ndim == 0:
        # NumPy's argwhere of a 0-d array has no columns
        return _ix.zeros((n, 0), numpy.int64, get_aval(a).device)
    cols = _nonzero_sized("fnp.argwhere", a, n, fill_value)
    return fnp.stack(cols, axis=1)


def flatnonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Indices of the non-zero elements of the flattened array.

    Concrete input, or a static ``size=`` (padded with ``fill_value``, default 0), as
    ``jax.numpy.flatnonzero``; then it works under ``jit``/``vmap``.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.flatnonzero(np.array([[0, 1], [2, 0]]))
        array([1, 2])
        >>> fnp.flatnonzero(np.array([[0, 1], [2, 0]]), size=1)
        array([1])
    """
    a = _as_array(a)
    if size is None:
        if fill_value is not None:
            raise ValueError("fnp.flatnonzero: fill_value needs size= (it pads to that size)")
        v = _concrete_array(a, "fnp.flatnonzero")
        return xp_for(v).flatnonzero(v)
    return _nonzero_sized("fnp.flatnonzero", _ravel(a),
                          _static_size("fnp.flatnonzero", size), fill_value)[0]


# ---------------------------------------------------------------------------------------------
# Diagonals


def _diag_index_arrays(n: int, offset: int, device: str | None) -> tuple[Any, Any]:
    xp = xp_for_device(device or get_default_device())
    rows = xp.arange(max(-offset, 0), max(-offset, 0) + n, dtype=numpy.intp)
    cols = xp.arange(max(offset, 0), max(offset, 0) + n, dtype=numpy.intp)
    return rows, cols


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The ``offset`` diagonal over ``axis1``/``axis2``, as a new last axis (NumPy layout).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.diagonal(np.arange(9).reshape(3, 3), 1)
        array([1, 5])
    """
    a = _as_array(a)
    aa = get_aval(a)
    if aa.ndim < 2:
        raise ValueError("fnp.diagonal: diag requires an array of at least two dimensions")
    ax1 = _norm_axis("fnp.diagonal", axis1, aa.ndim)
    ax2 = _norm_axis("fnp.diagonal", axis2, aa.ndim)
    if ax1 == ax2:
        raise ValueError("fnp.diagonal: axis1 and axis2 cannot be the same")
    offset = operator_index(offset)
    perm = [d for d in range(aa.ndim) if d not in (ax1, ax2)] + [ax1, ax2]
    a = _shape.transpose(a, tuple(perm))
    n1, n2 = aa.shape[ax1], aa.shape[ax2]
    if offset >= 0:
        n = max(0, min(n1, n2 - offset))
    else:
        n = max(0, min(n1 + offset, n2))
    rows, cols = _diag_index_arrays(n, offset, aa.device)
    return _ga.gather(a, rows, cols, indexer=(Ellipsis, Operand(0), Operand(1)))


def diag(v: Any, k: int = 0) -> Any:
    """The ``k``-th diagonal of a 2-D array, or a 2-D array with 1-D ``v`` on that diagonal.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.diag(np.array([1, 2]))
        array([[1, 0],
               [0, 2]])
    """
    v = _as_array(v)
    va = get_aval(v)
    k = operator_index(k)
    if va.ndim == 2:
        return diagonal(v, k)
    if va.ndim != 1:
        raise ValueError("fnp.diag: input must be 1- or 2-d")
    n = va.shape[0]
    size = n + abs(k)
    xp = xp_for_device(va.device or get_default_device())
    base = xp.zeros((size, size), dtype=va.dtype)
    rows, cols = _diag_index_arrays(n, k, va.device)
    return _sc.scatter(base, v, rows, cols, indexer=(Operand(0), Operand(1)))


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: Any = None) -> Any:
    """Sum along a diagonal (NumPy ``trace``; integer inputs sum in the platform integer).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> float(fnp.trace(np.eye(3)))
        3.0
    """
    if out is not None:
        raise TypeError("fnp.trace: out= is not supported (funcgrad arrays are immutable)")
    d = diagonal(a, offset, axis1, axis2)
    if dtype is not None:  # summed in dtype, as NumPy (int8 wraps; bool is a logical or)
        return fnp.sum(d, axis=-1, dtype=dtype)
    nd = get_aval(d).ndim
    return _red.reduce_sum(d, (nd - 1,))


def _default_xp() -> Any:
    return xp_for_device(get_default_device())


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """Row and column indices of the lower triangle of an ``(n, m)`` array.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> [a.tolist() for a in fnp.tril_indices(2)]
        [[0, 1, 1], [0, 0, 1]]
    """
    return tuple(_default_xp().tril_indices(n, k, m))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """Row and column indices of the upper triangle of an ``(n, m)`` array.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> [a.tolist() for a in fnp.triu_indices(2)]
        [[0, 0, 1], [0, 1, 1]]
    """
    return tuple(_default_xp().triu_indices(n, k, m))


def _shape2(arr: Any, fn: str) -> tuple[int, int]:
    shape = get_aval(_as_array(arr)).shape
    if len(shape) != 2:
        raise ValueError(f"{fn}: input array must be 2-d")
    return shape  # type: ignore[return-value]


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """``tril_indices`` for the shape of the 2-D array ``arr``.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> [a.tolist() for a in fnp.tril_indices_from(np.ones((2, 2)))]
        [[0, 1, 1], [0, 0, 1]]
    """
    n, m = _shape2(arr, "fnp.tril_indices_from")
    return tril_indices(n, k, m)


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """``triu_indices`` for the shape of the 2-D array ``arr``.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> [a.tolist() for a in fnp.triu_indices_from(np.ones((2, 2)))]
        [[0, 0, 1], [0, 1, 1]]
    """
    n, m = _shape2(arr, "fnp.triu_indices_from")
    return triu_indices(n, k, m)


def diag_indices(n: int, ndim: int = 2) -> tuple[Any, ...]:
    """Indices of the main diagonal of an ``(n,) * ndim`` array.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> [a.tolist() for a in fnp.diag_indices(2)]
        [[0, 1], [0, 1]]
    """
    idx = _default_xp().arange(n)
    return (idx,) * ndim


def diag_indices_from(arr: Any) -> tuple[Any, ...]:
    """``diag_indices`` for a square array ``arr`` (all sides equal).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> [a.tolist() for a in fnp.diag_indices_from(np.ones((2, 2)))]
        [[0, 1], [0, 1]]
    """
    shape = get_aval(_as_array(arr)).shape
    if len(shape) < 2:
        raise ValueError("fnp.diag_indices_from: input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("fnp.diag_indices_from: all dimensions of input must be of equal length")
    return diag_indices(shape[0], len(shape))


# ---------------------------------------------------------------------------------------------
# compress / extract / select


def compress(condition: Any, a: Any, axis: int | None = None, out: Any = None, *,
             size: int | None = None, fill_value: Any = 0) -> Any:
    """The slices of ``a`` along ``axis`` where ``condition`` is true (concrete condition).

    With JAX's static ``size=``, the condition may be traced (``jit``, ``vmap``): the first
    ``size`` selected slices, padded with ``fill_value`` (default 0).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.compress([True, False, True], np.array([1, 2, 3]))
        array([1, 3])
        >>> fnp.compress(np.array([False, True, False]), np.array([1, 2, 3]), size=2)
        array([2, 0])
    """
    if out is not None:
        raise TypeError("fnp.compress: out= is not supported (funcgrad arrays are immutable)")
    if size is None:
        cond = _concrete_array(condition, "fnp.compress")
        if get_aval(cond).ndim != 1:
            raise ValueError("fnp.compress: condition must be a 1-d array")
        (idx,) = xp_for(cond).nonzero(cond)
        return take(a, idx, axis=axis)
    arr = _as_array(a)
    if axis is None:
        arr = _ravel(arr)
        axis = 0
    aa = get_aval(arr)
    axis = _norm_axis("fnp.compress", axis, aa.ndim)
    cond = _as_array(condition, aa.device)
    if get_aval(cond).ndim != 1:
        raise ValueError("fnp.compress: condition must be a 1-d array")
    n = min(aa.shape[axis], get_aval(cond).shape[0])  # (a longer condition is cut, as JAX)
    size = _static_size("fnp.compress", size)
    if size > n:
        raise ValueError(f"fnp.compress: size={size} is larger than the {n} slices along "
                         f"axis {axis}")
    cond = fnp.not_equal(cond[:n], False)
    (idx,) = _nonzero_sized("fnp.compress", cond, size, aa.shape[axis])  # (pads read fill)
    return take(arr, idx, axis=axis, mode="fill", fill_value=fill_value)


def extract(condition: Any, arr: Any, *, size: int | None = None, fill_value: Any = 0) -> Any:
    """The elements of ``arr`` where ``condition`` is non-zero, flattened (concrete condition,
    or JAX's static ``size=`` with ``fill_value`` as :func:`compress`).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.extract(np.array([[1, 0], [0, 1]]), np.array([[1, 2], [3, 4]]))
        array([1, 4])
    """
    if size is not None:
        return compress(_ravel(_as_array(condition)), _ravel(_as_array(arr)), size=size,
                        fill_value=fill_value)
    cond = _concrete_array(condition, "fnp.extract")
    flat = cond.reshape(-1)
    (idx,) = xp_for(flat).nonzero(flat)
    return take(_ravel(_as_array(arr)), idx)


def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Any:
    """``choicelist[i]`` where ``condlist[i]`` is first true, else ``default`` (NumPy ``select``).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> x = np.arange(4)
        >>> fnp.select([x < 1, x > 2], [x, x * 10], default=-1)
        array([ 0, -1, -1, 30])
    """
    condlist, choicelist = list(condlist), list(choicelist)
    if len(condlist) != len(choicelist):
        raise ValueError("fnp.select: list of cases must be same length as list of conditions")
    if not condlist:
        raise ValueError("fnp.select with an empty condition list is not possible")
    # Python lists among device arrays go to their device (as in the elementwise functions)
    ref = next((c for c in (*condlist, *choicelist, default) if isinstance(c, Tracer)
                or device_of(c) not in (None, "cpu")), None)

    def conv(c: Any) -> Any:
        if ref is None or not isinstance(c, list | tuple):
            return _as_array(c)
        return fnp._shape._arrs_together(ref, c)[1]

    conds = [conv(c) for c in condlist]
    choices = [conv(c) for c in choicelist]
    default = _as_array(default)
    for i, c in enumerate(conds):
        if get_aval(c).dtype.kind != "b":
            raise TypeError(
                f"fnp.select: invalid entry {i} in condlist: should be boolean ndarray"
            )
    dt, _ = result_dtype(*(get_aval(c) for c in choices), get_aval(default))

    def cast(v: Any) -> Any:
        # Every operand in the common dtype first: a weak -1 default meeting a uint8 choice
        # must not wrap to 255 before the result is promoted (NumPy promotes all at once).
        # A Python scalar goes to the others' device (cast alone it would be a host array).
        return _cast_near(v, dt, *conds, *choices)

    shapes = [tuple(get_aval(v).shape) for v in (*conds, *choices, default)]
    try:
        shape = tuple(numpy.broadcast_shapes(*shapes))
    except ValueError:
        n = len(conds)
        raise ShapeError(f"fnp.select: the conditions (shapes {shapes[:n]}), choices (shapes "
                         f"{shapes[n:2 * n]}) and default (shape {shapes[-1]}) cannot be "
                         "broadcast together") from None
    result = cast(default)
    for c, v in zip(reversed(conds), reversed(choices)):
        result = _ew.select_n(c, result, cast(v))
    if get_aval(result).shape != shape:
        result = _shape.broadcast_to(result, shape)
    return result
