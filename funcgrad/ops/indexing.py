"""NumPy's indexing, described statically: what ``gather`` (``x[idx]``, ``ops/gather.py``) and
the scatter family (``x.at[idx].set/add/mul/min/max``, ``ops/scatter.py``) share.

An index expression is described statically by ``indexer``: a tuple whose entries are
:class:`Slice` (a ``start:stop:step`` triple), ``None`` (newaxis), ``Ellipsis``, a Python
``int``, or :class:`Operand` ``k`` -- "the k-th integer index array", passed as a positional
operand after ``x`` (and after ``updates`` for scatters). This is NumPy's own indexing, not
XLA's general gather: basic and advanced indexing, negative indices, and NumPy's rule that the
dimensions of advanced indices separated by a slice, ``None`` or ``...`` move to the front.
Boolean masks are converted to integer index arrays above this layer (``funcgrad.numpy``).

Out-of-range indices: concrete index arrays (``mode="raise"``) raise ``IndexError`` like
NumPy. Index arrays that are traced (under ``jit``/``vmap``) cannot be checked, so the
wrappers pick ``mode="clamp"``: negative indices wrap once, then indices are clamped into
``[0, size - 1]`` (for scatters too: an out-of-range update lands on the edge element).
``mode="clip"`` and ``mode="wrap"`` are NumPy ``take``'s modes. ``mode="fill"`` is JAX's
fill-or-drop: negative indices wrap once, then a gather gives ``fill_value`` (default 0: the
gather stays linear) wherever an index is still out of range and a scatter drops those
updates; :func:`default_fill_value` is JAX's fill for the public wrappers. :class:`GatherScatterMode` (JAX's
``lax.GatherScatterMode``) names the modes of ``jax.lax`` and ``x.at[...]``, and
:meth:`GatherScatterMode.index_mode` says which mode of the primitives implements each: this
module is the one place that knows.

This module holds no primitive: the description (:func:`canonical_indexer`,
:func:`index_layout`: result shapes from shapes alone), the impl helpers that turn it into an
array-module index, and :func:`batch_index_expr`, which folds a batch axis into an index
expression for the batch rules of gather and the scatters.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Sequence
from typing import Any

import numpy

import funcgrad.ops.shape as _shape
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import get_default_device, operator_index, xp_for, xp_for_device
from funcgrad.core import Tracer
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.jaxpr_codec import Codec, register_type_codec
from funcgrad.ops._util import as_array

__all__ = [
    "Slice",
    "Operand",
    "FULL",
    "IndexingError",
    "IndexLayout",
    "index_layout",
    "canonical_indexer",
    "default_mode",
    "check_mode",
    "GatherScatterMode",
    "default_fill_value",
    "in_bounds_mask",
    "check_index_avals",
    "index_tuple",
    "index_arrays",
    "fix_indices",
    "is_numpy_like",
    "raises_out_of_bounds",
    "zeros",
    "full",
    "iota",
    "may_repeat",
    "BatchedIndex",
    "batch_index_expr",
]


class IndexingError(ShapeError, IndexError):
    """An index does not fit the array (out of bounds, too many indices, bad broadcast).

    It is both a :class:`~funcgrad.errors.ShapeError` and the ``IndexError`` NumPy raises.
    """


# ---------------------------------------------------------------------------------------------
# The static index description


class Slice:
    """A static ``start:stop:step`` entry of an indexer (hashable, unlike ``slice`` in 3.11).

    Example:
        >>> Slice(None, None, -1)
        ::-1
    """

    __slots__ = ("start", "stop", "step", "slice", "_hash")

    def __init__(self, start: int | None = None, stop: int | None = None,
                 step: int | None = None) -> None:
        self.start = start
        self.stop = stop
        self.step = step
        self.slice = slice(start, stop, step)
        self._hash = hash(("Slice", start, stop, step))

    def __eq__(self, other: object) -> bool:
        return (type(other) is Slice and self.start == other.start  # type: ignore[union-attr]
                and self.stop == other.stop and self.step == other.step)  # type: ignore[union-attr]

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        parts = ["" if v is None else str(v) for v in (self.start, self.stop, self.step)]
        return ":".join(parts if self.step is not None else parts[:2])

    def is_full(self) -> bool:
        return self.start is None and self.stop is None and self.step in (None, 1)


class Operand:
    """The entry "integer index array number ``k``" of an indexer.

    Example:
        >>> Operand(0)
        #0
    """

    __slots__ = ("k",)

    def __init__(self, k: int) -> None:
        self.k = k

    def __eq__(self, other: object) -> bool:
        return type(other) is Operand and self.k == other.k  # type: ignore[union-attr]

    def __hash__(self) -> int:
        return hash(("Operand", self.k))

    def __repr__(self) -> str:
        return f"#{self.k}"


# Written to exported files as data (funcgrad.export): [start, stop, step] and k.
register_type_codec(Slice, Codec("indexing.Slice", lambda x, enc: [x.start, x.stop, x.step],
                                 lambda d, dec: Slice(*(_as_int(v, "Slice") for v in d))))
register_type_codec(Operand, Codec("indexing.Operand", lambda x, enc: x.k,
                                   lambda d, dec: Operand(operator_index(d))))

FULL = Slice(None, None, None)
_MODES = ("raise", "clamp", "clip", "wrap", "fill")


class GatherScatterMode(enum.Enum):
    """How out-of-bounds indices are handled, as ``jax.lax.GatherScatterMode``.

    ``CLIP``: indices are clamped so the slice stays in bounds. ``FILL_OR_DROP``: a gather
    returns ``fill_value`` for an out-of-bounds slice, a scatter drops out-of-bounds updates.
    ``PROMISE_IN_BOUNDS``: the caller promises in-bounds indices; as with XLA, out-of-bounds
    gathers are then clamped and out-of-bounds scatters dropped. ``ONE_HOT`` (JAX's
    ``take_along_axis(..., mode="one_hot")``, read as a one-hot contraction): negative indices
    wrap once and an out-of-range read is 0; it is a read mode, so writes refuse it.
    ``from_any(None)`` is ``FILL_OR_DROP`` (the default of JAX's scatters; ``lax.gather``
    defaults to ``PROMISE_IN_BOUNDS``). What each mode means to the gather/scatter primitives
    is one table, ``_MODE_TABLE``.

    Example:
        >>> GatherScatterMode.from_any("drop")
        <GatherScatterMode.FILL_OR_DROP: 2>
        >>> GatherScatterMode.from_any("clip").index_mode(scatter=True)
        'clamp'
        >>> m = GatherScatterMode.from_any("one_hot")
        >>> m.index_mode(scatter=False), m.read_fill_value(numpy.dtype("float32"))
        ('fill', 0.0)
    """

    CLIP = 1
    FILL_OR_DROP = 2
    PROMISE_IN_BOUNDS = 3
    ONE_HOT = 4

    @staticmethod
    def from_any(s: Any) -> GatherScatterMode:
        """A mode from itself, ``None``, ``"clip"``, ``"fill"``, ``"drop"``,
        ``"promise_in_bounds"`` or ``"one_hot"``."""
        if isinstance(s, GatherScatterMode):
            return s
        if s is None:
            return GatherScatterMode.FILL_OR_DROP
        mode = _MODE_NAMES.get(s) if isinstance(s, str) else None
        if mode is None:
            raise ValueError(
                f"unknown gather/scatter mode {s!r}: use 'clip', 'fill', 'drop', "
                "'promise_in_bounds', 'one_hot', None or a GatherScatterMode"
            )
        return mode

    def index_mode(self, *, scatter: bool) -> str:
        """The ``mode`` of the gather/scatter primitives implementing this mode for NumPy
        indices (negative indices wrap once first): ``"clamp"`` or ``"fill"``."""
        reads, writes, _ = _MODE_TABLE[self]
        if not scatter:
            return reads
        if writes is None:
            raise ValueError(
                f"GatherScatterMode.{self.name} is a mode for reads (JAX accepts it in "
                "take_along_axis only); a write needs 'clip', 'drop'/'fill' or "
                "'promise_in_bounds'"
            )
        return writes

    def read_fill_value(self, dtype: Any, fill_value: Any = None) -> Any:
        """What an out-of-range read gives under this mode (when it fills): the mode's own
        fill (0 for ``ONE_HOT``), else ``fill_value``, else :func:`default_fill_value`."""
        _, _, own = _MODE_TABLE[self]
        if own is not None:
            return numpy.dtype(dtype).type(own).item()
        return default_fill_value(dtype) if fill_value is None else fill_value


#: JAX's mode -> (the primitives' mode for reads, for writes (None: not a write mode), the
#: mode's own fill for out-of-range reads (None: the caller's fill_value or JAX's default)).
_MODE_TABLE: dict[GatherScatterMode, tuple[str, str | None, Any]] = {
    GatherScatterMode.CLIP: ("clamp", "clamp", None),
    GatherScatterMode.FILL_OR_DROP: ("fill", "fill", None),
    # What XLA does with broken promises: reads clamp, writes drop.
    GatherScatterMode.PROMISE_IN_BOUNDS: ("clamp", "fill", None),
    # A one-hot row of an out-of-range index is all zeros: the contraction reads 0.
    GatherScatterMode.ONE_HOT: ("fill", None, 0),
}
_MODE_NAMES = {"clip": GatherScatterMode.CLIP, "fill": GatherScatterMode.FILL_OR_DROP,
               "drop": GatherScatterMode.FILL_OR_DROP,
               "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS,
               "one_hot": GatherScatterMode.ONE_HOT}


register_type_codec(GatherScatterMode, Codec(
    "indexing.GatherScatterMode", lambda x, enc: x.name,
    lambda d, dec: GatherScatterMode[d]))


def default_fill_value(dtype: Any) -> Any:
    """JAX's fill for out-of-bounds gathers: NaN for inexact dtypes, the most negative value
    for signed integers, the largest for unsigned ones, True for bool.

    Example:
        >>> default_fill_value(numpy.dtype("int8")), default_fill_value(numpy.dtype("bool"))
        (-128, True)
    """
    dt = numpy.dtype(dtype)
    if dt.kind in "fc":
        return float("nan")
    if dt.kind == "i":
        return int(numpy.iinfo(dt).min)
    if dt.kind == "u":
        return int(numpy.iinfo(dt).max)
    if dt.kind == "b":
        return True
    raise DTypeError(f"no out-of-bounds fill value for dtype {dt}")


def _as_int(v: Any, what: str) -> int | None:
    if v is None:
        return None
    try:
        return operator_index(v)
    except TypeError:
        raise TypeError(
            f"{what} must be an integer or None, got {type(v).__name__}"
        ) from None


def canonical_indexer(indexer: Any) -> tuple:
    """``indexer`` with Python slices turned into :class:`Slice` and integers into ``int``.

    Example:
        >>> canonical_indexer((slice(1, None), None, Ellipsis, -1, Operand(0)))
        (1:, None, Ellipsis, -1, #0)
    """
    if not isinstance(indexer, tuple):
        indexer = (indexer,)
    out = []
    for e in indexer:
        t = type(e)
        if t is Slice or t is Operand or e is None or e is Ellipsis or t is int:
            out.append(e)
        elif t is slice:
            out.append(Slice(_as_int(e.start, "slice start"), _as_int(e.stop, "slice stop"),
                             _as_int(e.step, "slice step")))
        elif isinstance(e, int | numpy.integer) and not isinstance(e, bool | numpy.bool_):
            out.append(int(e))
        else:
            raise TypeError(
                f"indexer entry {e!r} is not a Slice, None, Ellipsis, int or Operand; index "
                "arrays are passed as positional operands and referenced as Operand(k)"
            )
    return tuple(out)


def default_mode(index_arrays: Sequence[Any]) -> str:
    """``"raise"`` for concrete index arrays; ``"clamp"`` when any is traced (unknown values)."""
    for a in index_arrays:
        if isinstance(a, Tracer):
            return "clamp"
    return "raise"


# ---------------------------------------------------------------------------------------------
# NumPy's indexing rules, computed from shapes alone


class IndexLayout:
    """Where the dimensions of ``x[idx]`` come from.

    ``out_shape`` is the result shape; ``labels[i]`` names the source of output dim ``i``:
    ``("x", axis)`` a sliced (or untouched) axis of ``x``, ``("n", entry)`` a newaxis entry,
    ``("a", j)`` dim ``j`` of the broadcast advanced-index shape ``adv_shape``.
    ``operand_axes[k]`` are the axes of ``x`` that index array ``k`` indexes.
    """

    __slots__ = ("out_shape", "labels", "operand_axes", "adv_shape", "has_advanced")

    def __init__(self, out_shape, labels, operand_axes, adv_shape, has_advanced):
        self.out_shape = out_shape
        self.labels = labels
        self.operand_axes = operand_axes
        self.adv_shape = adv_shape
        self.has_advanced = has_advanced


def _broadcast_index_shapes(name: str, shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    try:
        return tuple(numpy.broadcast_shapes(*shapes)) if shapes else ()
    except ValueError:
        pretty = " ".join(str(tuple(s)) for s in shapes)
        raise IndexingError(
            f"{name}: shape mismatch: indexing arrays could not be broadcast together with "
            f"shapes {pretty}"
        ) from None


@functools.lru_cache(maxsize=4096)
def index_layout(
    name: str, indexer: tuple, x_shape: tuple[int, ...], op_shapes: tuple[tuple[int, ...], ...]
) -> IndexLayout:
    """The :class:`IndexLayout` of ``x[indexer]`` for ``x`` of ``x_shape`` (NumPy's rules).

    Example:
        >>> lay = index_layout("gather", (0, FULL, Operand(0)), (2, 3, 4), ((5,),))
        >>> lay.out_shape, lay.labels
        ((5, 3), (('a', 0), ('x', 1)))
    """
    ndim = len(x_shape)
    n_ell = sum(1 for e in indexer if e is Ellipsis)
    if n_ell > 1:
        raise IndexingError(f"{name}: an index can only have a single ellipsis ('...')")
    consumed = sum(1 for e in indexer if e is not None and e is not Ellipsis)
    if consumed > ndim:
        raise IndexingError(
            f"{name}: too many indices for array: array is {ndim}-dimensional, but "
            f"{consumed} were indexed"
        )
    has_array = False
    for e in indexer:
        if type(e) is Operand:
            has_array = True
            if not 0 <= e.k < len(op_shapes):
                raise ShapeError(
                    f"{name}: indexer refers to index array #{e.k} but {len(op_shapes)} "
                    "index arrays were given"
                )
    adv_pos = [
        i for i, e in enumerate(indexer)
        if type(e) is Operand or (has_array and type(e) is int)
    ]
    adjacent = bool(adv_pos) and adv_pos[-1] - adv_pos[0] + 1 == len(adv_pos)
    adv_shape = _broadcast_index_shapes(
        name, [op_shapes[e.k] for e in indexer if type(e) is Operand]
    )
    out: list[int] = []
    labels: list[tuple] = []
    operand_axes: dict[int, list[int]] = {}

    def put_adv() -> None:
        for j, s in enumerate(adv_shape):
            out.append(s)
            labels.append(("a", j))

    if adv_pos and not adjacent:
        put_adv()
    axis = 0
    for i, e in enumerate(indexer):
        t = type(e)
        if e is None:
            out.append(1)
            labels.append(("n", i))
        elif e is Ellipsis:
            for _ in range(ndim - consumed):
                out.append(x_shape[axis])
                labels.append(("x", axis))
                axis += 1
        elif t is Slice:
            if e.step == 0:
                raise ValueError(f"{name}: slice step cannot be zero")
            out.append(len(range(*e.slice.indices(x_shape[axis]))))
            labels.append(("x", axis))
            axis += 1
        elif t is int:
            n = x_shape[axis]
            if not -n <= e < n:
                raise IndexingError(
                    f"{name}: index {e} is out of bounds for axis {axis} with size {n}"
                )
            if has_array and adjacent and i == adv_pos[0]:
                put_adv()
            axis += 1
        elif t is Operand:
            operand_axes.setdefault(e.k, []).append(axis)
            if adjacent and i == adv_pos[0]:
                put_adv()
            axis += 1
        else:
            raise TypeError(f"{name}: invalid indexer entry {e!r}")
    while axis < ndim:
        out.append(x_shape[axis])
        labels.append(("x", axis))
        axis += 1
    return IndexLayout(
        tuple(out), tuple(labels), {k: tuple(v) for k, v in operand_axes.items()}, adv_shape,
        has_array,
    )


def index_tuple(indexer: tuple, arrays: Sequence[Any]) -> tuple:
    return tuple(
        arrays[e.k] if type(e) is Operand else e.slice if type(e) is Slice else e
        for e in indexer
    )


def _has_operands(indexer: tuple) -> bool:
    return any(type(e) is Operand for e in indexer)


def is_numpy_like(xp: Any) -> bool:
    # NumPy and the strict test backend raise on out-of-range index arrays by themselves.
    return xp is numpy or getattr(xp, "__name__", "") == "strict_numpy"


def raises_out_of_bounds(xp: Any) -> bool:
    """Whether indexing with ``xp``'s arrays raises on an out-of-range index array by itself
    (NumPy); CuPy wraps such indices silently, so mode="raise" checks them explicitly there,
    and on the strict backend too (which would raise as NumPy): the CPU pass runs the check."""
    return xp is numpy


def fix_indices(
    name: str, xp: Any, x_shape: tuple[int, ...], indexer: tuple, arrays: Sequence[Any],
    mode: str,
) -> list[Any]:
    """Index arrays adjusted for ``mode`` (clamp/clip/wrap), or bounds-checked (raise)."""
    if not arrays:
        return list(arrays)
    if mode == "raise" and raises_out_of_bounds(xp):
        return list(arrays)
    lay = index_layout(name, indexer, tuple(x_shape), tuple(tuple(a.shape) for a in arrays))
    out = list(arrays)
    for k, axes in lay.operand_axes.items():
        # An array used for several axes must fit the smallest of them.
        axis = min(axes, key=lambda ax: x_shape[ax])
        a, n = arrays[k], x_shape[axis]
        if mode == "raise":
            if a.size and (int(a.max()) >= n or int(a.min()) < -n):
                bad = int(a.max()) if int(a.max()) >= n else int(a.min())
                raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")
        elif mode == "wrap":
            out[k] = a % n if n else a
        elif mode == "clip":
            out[k] = _clamp(xp, a, n)
        else:  # clamp, and fill (whose out-of-range positions the caller masks)
            if a.dtype.kind == "i":
                a = xp.where(a < 0, a + n, a)
            out[k] = _clamp(xp, a, n)
    return out


def _clamp(xp: Any, a: Any, n: int) -> Any:
    """``a`` limited to ``[0, n - 1]``: two ufunc calls, where ``clip``'s argument checks cost
    several times that on the small index arrays of a gather (cross-entropy's targets)."""
    return xp.minimum(xp.maximum(a, 0), max(n - 1, 0))


def in_bounds_mask(
    name: str, xp: Any, x_shape: tuple[int, ...], indexer: tuple, arrays: Sequence[Any],
) -> tuple[Any, IndexLayout]:
    """Where the (unadjusted) index arrays name an element (``-n <= i < n`` on every axis),
    as a boolean array of the broadcast index shape; and the layout of the expression."""
    lay = index_layout(name, indexer, tuple(x_shape), tuple(tuple(a.shape) for a in arrays))
    ok = xp.ones(lay.adv_shape, dtype=bool)
    for k, axes in lay.operand_axes.items():
        a = arrays[k]
        for ax in axes:
            n = x_shape[ax]
            ok = ok & (a < n) & (a >= -n)
    return ok, lay


def check_index_avals(name: str, idx: Sequence[ShapedArray]) -> None:
    for k, a in enumerate(idx):
        if a.dtype.kind not in "iu":
            hint = (
                " (boolean masks are converted with nonzero() by funcgrad.numpy; use "
                "fnp.nonzero(mask) yourself when calling the primitive)"
                if a.dtype.kind == "b" else ""
            )
            raise DTypeError(
                f"{name}: index array #{k} must have an integer dtype, got {a.dtype}{hint}"
            )


def index_arrays(x: Any, idx: tuple) -> tuple:
    """Index operands as arrays: jit's generated code passes traced Python-int arguments
    (``xs[i]`` with ``i`` a jit argument) to the implementation as they are."""
    for i in idx:
        if isinstance(i, bool | int | numpy.generic):
            xp = xp_for(x, *idx)
            return tuple(as_array(xp, a) for a in idx)
    return idx


def zeros(shape: tuple[int, ...], dtype: Any, device: str | None) -> Any:
    return xp_for_device(device or get_default_device()).zeros(shape, dtype=dtype)


def full(shape: tuple[int, ...], value: Any, dtype: Any, device: str | None) -> Any:
    return xp_for_device(device or get_default_device()).full(shape, value, dtype=dtype)


def iota(shape: tuple[int, ...], device: str | None) -> Any:
    """``arange(prod(shape)).reshape(shape)`` as an int64 constant on ``device``."""
    xp = xp_for_device(device or get_default_device())
    return xp.arange(int(numpy.prod(shape, dtype=numpy.int64)), dtype=numpy.int64).reshape(
        shape
    )


def check_mode(name: str, mode: str) -> None:
    if mode not in _MODES:
        raise ValueError(f"{name}: mode must be one of {_MODES}, got {mode!r}")



def may_repeat(x_shape: tuple[int, ...], idx: Sequence[Any], indexer: tuple) -> bool:
    """Whether ``x[idx]`` may name one element twice: False only when known not to."""
    if not idx:
        return False
    concrete = []
    for a in idx:
        if isinstance(a, Tracer):
            a = a.to_concrete_value()
            if a is None or isinstance(a, Tracer):
                return True
        concrete.append(a)
    xp = xp_for(*concrete)
    ops = [e for e in indexer if type(e) is Operand]
    if len(ops) == 1 and all(
        e is Ellipsis or e is None or type(e) is int or (type(e) is Slice and e.is_full())
        for e in indexer if type(e) is not Operand
    ):
        # One index array and nothing else that could collide: look at it alone.
        (axis,) = index_layout("scatter", indexer, tuple(x_shape),
                               (tuple(concrete[0].shape),)).operand_axes[ops[0].k]
        n = x_shape[axis]
        a = concrete[ops[0].k].reshape(-1)
        a = a % n if n else a
        return int(xp.unique(a).size) != int(a.size)
    ids = iota(tuple(x_shape), get_aval(concrete[0]).device)
    try:
        picked = ids[index_tuple(indexer, concrete)]
    except IndexError:
        return True
    return int(xp.unique(picked.reshape(-1)).size) != int(picked.size)


# =============================================================================================
# Batching an index expression (shared by gather and the scatters)


class BatchedIndex:
    """An index expression rewritten so the batch axis becomes part of it.

    ``x`` is the operand with the batch axis at 0 (or unbatched), ``idx`` the new index
    arrays, ``indexer`` the new indexer, ``perm`` the permutation taking the new result
    layout to ``(batch, *original result layout)``, ``out_shape`` the original result shape.
    """

    __slots__ = ("x", "idx", "indexer", "perm", "out_shape", "new_shape")


def batch_index_expr(
    name: str, axis_size: int, x: Any, xd: int | None, idx: Sequence[Any],
    idd: Sequence[int | None], indexer: tuple, force_x_batched: bool,
) -> BatchedIndex:
    B = axis_size
    xa = get_aval(x)
    x_shape = xa.shape if xd is None else xa.shape[:xd] + xa.shape[xd + 1:]
    i_shapes = []
    for v, d in zip(idx, idd):
        s = get_aval(v).shape
        i_shapes.append(s if d is None else s[:d] + s[d + 1:])
    orig = index_layout(name, indexer, x_shape, tuple(i_shapes))
    if xd is None and force_x_batched:
        x = _shape.broadcast_in_dim(x, (B,) + tuple(x_shape), tuple(range(1, len(x_shape) + 1)))
        xd = 0
    elif xd is not None:
        x = _shape.moveaxis(x, xd, 0)
        xd = 0
    idx_batched = any(d is not None for d in idd)
    new_idx = list(idx)
    if idx_batched:
        R = len(orig.adv_shape)
        for k, (v, d) in enumerate(zip(idx, idd)):
            if d is None:
                continue
            v = _shape.moveaxis(v, d, 0)
            s = i_shapes[k]
            new_idx[k] = _shape.reshape(v, (B,) + (1,) * (R - len(s)) + tuple(s))
    if xd is None:
        # Only index arrays are batched: the batch axis is the first advanced-index dim.
        new_indexer = indexer
        shift_x = shift_n = 0
        shift_a = 1
        batch_label = ("a", 0)
    elif not idx_batched:
        new_indexer = (FULL,) + indexer
        shift_x = shift_n = 1
        shift_a = 0
        batch_label = ("x", 0)
    else:
        R = len(orig.adv_shape)
        ar = iota((B,) + (1,) * R, get_aval(x).device)
        new_indexer = (Operand(len(new_idx)),) + indexer
        new_idx.append(ar)
        shift_x = shift_n = 1
        shift_a = 1
        batch_label = ("a", 0)
    new = index_layout(
        name, new_indexer, get_aval(x).shape, tuple(get_aval(v).shape for v in new_idx)
    )
    where = {lab: i for i, lab in enumerate(new.labels)}
    shifts = {"x": shift_x, "n": shift_n, "a": shift_a}
    perm = [where[batch_label]] + [where[(k, j + shifts[k])] for k, j in orig.labels]
    res = BatchedIndex()
    res.x, res.idx, res.indexer, res.perm = x, new_idx, new_indexer, tuple(perm)
    res.out_shape, res.new_shape = orig.out_shape, new.out_shape
    return res
