"""Indexing primitives with NumPy semantics: ``gather`` (``x[idx]``) and the scatter family
(``x.at[idx].set/add/mul/min/max``).

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
``mode="clip"`` and ``mode="wrap"`` are NumPy ``take``'s modes.

Repeated indices: ``scatter_add``/``scatter_mul``/``scatter_min``/``scatter_max`` accumulate
like ``numpy.add.at`` and friends; ``scatter`` (set) lets the last write win on NumPy (on CuPy
the winner among duplicates is unspecified).
"""

from __future__ import annotations

import functools
import importlib
import operator
from collections.abc import Sequence
from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
import funcgrad.ops.shape as _shape
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import get_default_device, xp_for, xp_for_device
from funcgrad.core import Tracer, bind1
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import Zero, instantiate, jvp_rules
from funcgrad.interpreters.transpose import deftranspose, is_undefined
from funcgrad.ops._util import check_static, make_primitive, result_device

__all__ = [
    "Slice",
    "Operand",
    "FULL",
    "IndexingError",
    "index_layout",
    "canonical_indexer",
    "gather",
    "gather_canonical",
    "gather_p",
    "scatter",
    "scatter_p",
    "scatter_add",
    "scatter_add_p",
    "scatter_mul",
    "scatter_mul_p",
    "scatter_min",
    "scatter_min_p",
    "scatter_max",
    "scatter_max_p",
    "default_mode",
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


FULL = Slice(None, None, None)
_MODES = ("raise", "clamp", "clip", "wrap")


def _as_int(v: Any, what: str) -> int | None:
    if v is None:
        return None
    try:
        return operator.index(v)
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


def _index_tuple(indexer: tuple, arrays: Sequence[Any]) -> tuple:
    return tuple(
        arrays[e.k] if type(e) is Operand else e.slice if type(e) is Slice else e
        for e in indexer
    )


def _has_operands(indexer: tuple) -> bool:
    return any(type(e) is Operand for e in indexer)


def _is_numpy_like(xp: Any) -> bool:
    # NumPy and the strict test backend raise on out-of-range index arrays by themselves.
    return xp is numpy or getattr(xp, "__name__", "") == "strict_numpy"


def _fix_indices(
    name: str, xp: Any, x_shape: tuple[int, ...], indexer: tuple, arrays: Sequence[Any],
    mode: str,
) -> list[Any]:
    """Index arrays adjusted for ``mode`` (clamp/clip/wrap), or bounds-checked (raise)."""
    if not arrays:
        return list(arrays)
    if mode == "raise" and _is_numpy_like(xp):
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
            out[k] = xp.clip(a, 0, max(n - 1, 0))
        else:  # clamp
            if a.dtype.kind == "i":
                a = xp.where(a < 0, a + n, a)
            out[k] = xp.clip(a, 0, max(n - 1, 0))
    return out


def _check_index_avals(name: str, idx: Sequence[ShapedArray]) -> None:
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


def _as_array(xp: Any, x: Any) -> Any:
    return xp.asarray(x) if isinstance(x, bool | int | float | complex | numpy.generic) else x


def _index_arrays(x: Any, idx: tuple) -> tuple:
    """Index operands as arrays: jit's generated code passes traced Python-int arguments
    (``xs[i]`` with ``i`` a jit argument) to the implementation as they are."""
    for i in idx:
        if isinstance(i, bool | int | numpy.generic):
            xp = xp_for(x, *idx)
            return tuple(_as_array(xp, a) for a in idx)
    return idx


def _zeros(shape: tuple[int, ...], dtype: Any, device: str | None) -> Any:
    return xp_for_device(device or get_default_device()).zeros(shape, dtype=dtype)


def _full(shape: tuple[int, ...], value: Any, dtype: Any, device: str | None) -> Any:
    return xp_for_device(device or get_default_device()).full(shape, value, dtype=dtype)


def _iota(shape: tuple[int, ...], device: str | None) -> Any:
    """``arange(prod(shape)).reshape(shape)`` as an int64 constant on ``device``."""
    xp = xp_for_device(device or get_default_device())
    return xp.arange(int(numpy.prod(shape, dtype=numpy.int64)), dtype=numpy.int64).reshape(
        shape
    )


def _check_mode(name: str, mode: str) -> None:
    if mode not in _MODES:
        raise ValueError(f"{name}: mode must be one of {_MODES}, got {mode!r}")


# =============================================================================================
# gather: x[idx]


def _gather_impl(x: Any, *idx: Any, indexer: tuple, mode: str) -> list:
    if not idx and type(x) is numpy.ndarray:  # the eager fast path: a NumPy view
        return [x[_index_tuple(indexer, idx)]]
    xp = xp_for(x, *idx, what="gather")
    x = _as_array(xp, x)
    idx = _index_arrays(x, idx)
    if idx and (mode != "raise" or not _is_numpy_like(xp)):
        idx = tuple(_fix_indices("gather", xp, x.shape, indexer, idx, mode))
    return [x[_index_tuple(indexer, idx)]]


def _gather_abstract(x: ShapedArray, *idx: ShapedArray, indexer: tuple, mode: str):
    check_static("gather", indexer=indexer, mode=mode)
    _check_mode("gather", mode)
    _check_index_avals("gather", idx)
    lay = index_layout("gather", indexer, x.shape, tuple(a.shape for a in idx))
    return [ShapedArray(lay.out_shape, x.dtype, x.weak_type, result_device("gather", x, *idx))]


gather_p = make_primitive("gather", _gather_impl, _gather_abstract)


def _is_identity_indexer(indexer: tuple, x: Any) -> bool:
    """Whether ``x[indexer]`` is ``x`` itself (and a valid index: one ``...``, not too long)."""
    n_ell = n_full = 0
    for e in indexer:
        if e is Ellipsis:
            n_ell += 1
        elif type(e) is Slice and e.is_full():
            n_full += 1
        else:
            return False
    return n_ell <= 1 and (n_full == 0 or n_full <= get_aval(x).ndim)


def gather(x: Any, *index_arrays: Any, indexer: Any, mode: str | None = None) -> Any:
    """``x[idx]`` with NumPy semantics; ``indexer`` describes ``idx`` (see the module doc).

    Example:
        >>> import numpy as np
        >>> gather(np.arange(6).reshape(2, 3), np.array([2, 0]), indexer=(FULL, Operand(0)))
        array([[2, 0],
               [5, 3]])
    """
    return gather_canonical(x, *index_arrays, indexer=canonical_indexer(indexer), mode=mode)


def gather_canonical(x: Any, *index_arrays: Any, indexer: tuple, mode: str | None = None) -> Any:
    """:func:`gather` for an ``indexer`` already in canonical form (no Python slices).

    Example:
        >>> import numpy as np
        >>> gather_canonical(np.arange(4), indexer=(Slice(None, None, -1),))
        array([3, 2, 1, 0])
    """
    if not index_arrays and _is_identity_indexer(indexer, x):
        return x
    if mode is None:
        mode = default_mode(index_arrays)
    else:
        _check_mode("gather", mode)
    return bind1(gather_p, x, *index_arrays, indexer=indexer, mode=mode)


def _gather_jvp(primals, tangents, indexer, mode):
    x, *idx = primals
    tx = tangents[0]
    out = bind1(gather_p, x, *idx, indexer=indexer, mode=mode)
    if type(tx) is Zero:
        return [out], [Zero.from_primal(out)]
    return [out], [bind1(gather_p, tx, *idx, indexer=indexer, mode=mode)]


def _gather_transpose(ct, x, *idx, indexer, mode):
    aval = x.aval
    ca = get_aval(ct)
    base = _zeros(aval.shape, ca.dtype, aval.device or ca.device)
    ct_x = bind1(scatter_add_p, base, ct, *idx, indexer=indexer, mode=mode)
    return [ct_x] + [None] * len(idx)


jvp_rules[gather_p] = _gather_jvp
deftranspose(gather_p, _gather_transpose)


# -- batching (shared by gather and the scatters) -----------------------------------------------


class _Batched:
    """An index expression rewritten so the batch axis becomes part of it.

    ``x`` is the operand with the batch axis at 0 (or unbatched), ``idx`` the new index
    arrays, ``indexer`` the new indexer, ``perm`` the permutation taking the new result
    layout to ``(batch, *original result layout)``, ``out_shape`` the original result shape.
    """

    __slots__ = ("x", "idx", "indexer", "perm", "out_shape", "new_shape")


def _batch_index_expr(
    name: str, axis_size: int, x: Any, xd: int | None, idx: Sequence[Any],
    idd: Sequence[int | None], indexer: tuple, force_x_batched: bool,
) -> _Batched:
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
        ar = _iota((B,) + (1,) * R, get_aval(x).device)
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
    res = _Batched()
    res.x, res.idx, res.indexer, res.perm = x, new_idx, new_indexer, tuple(perm)
    res.out_shape, res.new_shape = orig.out_shape, new.out_shape
    return res


def _gather_batch(axis_size, vals, dims, indexer, mode):
    x, *idx = vals
    xd, *idd = dims
    b = _batch_index_expr("gather", axis_size, x, xd, idx, idd, indexer, False)
    out = bind1(gather_p, b.x, *b.idx, indexer=b.indexer, mode=mode)
    p = b.perm
    rest = [i for i in range(len(p)) if i != p[0]]
    if list(p[1:]) == rest:
        return [out], [p[0]]
    return [_shape.transpose(out, p)], [0]


batching.batch_rules[gather_p] = _gather_batch


# =============================================================================================
# The scatter family: one shared shape rule and batch rule, one impl per combiner.


def _scatter_abstract_for(name: str):
    def abstract(x: ShapedArray, u: ShapedArray, *idx: ShapedArray, indexer: tuple, mode: str):
        check_static(name, indexer=indexer, mode=mode)
        _check_mode(name, mode)
        _check_index_avals(name, idx)
        lay = index_layout(name, indexer, x.shape, tuple(a.shape for a in idx))
        g = lay.out_shape
        try:
            ok = tuple(numpy.broadcast_shapes(u.shape, g)) == g
        except ValueError:
            ok = False
        if not ok:
            raise ShapeError(
                f"{name}: updates of shape {u.shape} cannot be broadcast to the indexed shape "
                f"{g} (x is {x.str_short()})"
            )
        if u.dtype != x.dtype:
            raise DTypeError(
                f"{name}: updates dtype {u.dtype} differs from the array dtype {x.dtype}; "
                "convert the updates first"
            )
        return [ShapedArray(x.shape, x.dtype, x.weak_type, result_device(name, x, u, *idx))]

    return abstract


_cupyx_mod: list[Any] = []


def _cupyx(xp: Any) -> Any:
    """The ``cupyx`` package beside the CuPy array module ``xp``, imported on first use."""
    if not _cupyx_mod:
        _cupyx_mod.append(importlib.import_module(xp.__name__.split(".")[0] + "x"))
    return _cupyx_mod[0]


def _scatter_prepare(name: str, x: Any, u: Any, idx: tuple, indexer: tuple, mode: str):
    xp = xp_for(x, u, *idx, what=name)
    x = _as_array(xp, x)
    if idx and (mode != "raise" or not _is_numpy_like(xp)):
        idx = tuple(_fix_indices(name, xp, x.shape, indexer, idx, mode))
    out = x.copy()
    return xp, out, _index_tuple(indexer, idx)


def _full_rank_updates(u: Any, x: Any, idx: tuple, indexer: tuple) -> Any:
    """``u`` with leading 1-axes up to the indexed rank.

    NumPy's ``ufunc.at`` reads garbage when lower-rank updates broadcast against a
    multi-dimensional index array (numpy 2.4: ``np.add.at(z, [[0, 1], [2, 3]], [1., 2.])``).
    """
    nd = getattr(u, "ndim", 0)
    if nd == 0 or not idx:
        return u
    g = index_layout("scatter", indexer, tuple(x.shape), tuple(a.shape for a in idx)).out_shape
    return u if nd == len(g) else u.reshape((1,) * (len(g) - nd) + tuple(u.shape))


def _scatter_add_impl(x, u, *idx, indexer, mode):
    idx = _index_arrays(x, idx)
    u = _full_rank_updates(u, x, idx, indexer)
    xp, out, key = _scatter_prepare("scatter_add", x, u, idx, indexer, mode)
    if not idx:
        out[key] += u  # basic index: no position is written twice
    elif _is_numpy_like(xp):
        xp.add.at(out, key, u)
    else:
        _cupyx(xp).scatter_add(out, key, u)
    return [out]


def _scatter_impl(x, u, *idx, indexer, mode):
    idx = _index_arrays(x, idx)
    _, out, key = _scatter_prepare("scatter", x, u, idx, indexer, mode)
    out[key] = u
    return [out]


def _scatter_mul_impl(x, u, *idx, indexer, mode):
    idx = _index_arrays(x, idx)
    u = _full_rank_updates(u, x, idx, indexer)
    xp, out, key = _scatter_prepare("scatter_mul", x, u, idx, indexer, mode)
    if not idx:
        out[key] *= u
        return [out]
    at = getattr(xp.multiply, "at", None)
    try:
        if at is None:
            raise NotImplementedError
        at(out, key, u)
    except (NotImplementedError, TypeError):
        # Array modules without multiply.at (some CuPy versions): fine without repeats.
        if _may_repeat(out.shape, _key_arrays(key), _key_indexer(key)):
            raise NotImplementedError(
                f"scatter_mul: {getattr(xp, '__name__', 'this array module')} has no "
                "multiply.at for repeated indices"
            ) from None
        out[key] = out[key] * u
    return [out]


def _key_arrays(key: tuple) -> list[Any]:
    """The index arrays of a built index tuple, in order."""
    return [e for e in key if hasattr(e, "shape")]


def _key_indexer(key: tuple) -> tuple:
    k = 0
    out = []
    for e in key:
        if hasattr(e, "shape"):
            out.append(Operand(k))
            k += 1
        elif type(e) is slice:
            out.append(Slice(e.start, e.stop, e.step))
        else:
            out.append(e)
    return tuple(out)


def _scatter_extremal_impl(name: str, ufunc_name: str, cupyx_name: str):
    def impl(x, u, *idx, indexer, mode):
        idx = _index_arrays(x, idx)
        u = _full_rank_updates(u, x, idx, indexer)
        xp, out, key = _scatter_prepare(name, x, u, idx, indexer, mode)
        if not idx:
            out[key] = getattr(xp, ufunc_name)(out[key], u)
        elif _is_numpy_like(xp):
            getattr(xp, ufunc_name).at(out, key, u)
        else:
            getattr(_cupyx(xp), cupyx_name)(out, key, u)
        return [out]

    return impl


scatter_add_p = make_primitive(
    "scatter_add", _scatter_add_impl, _scatter_abstract_for("scatter_add")
)
scatter_p = make_primitive("scatter", _scatter_impl, _scatter_abstract_for("scatter"))
scatter_mul_p = make_primitive(
    "scatter_mul", _scatter_mul_impl, _scatter_abstract_for("scatter_mul")
)
scatter_min_p = make_primitive(
    "scatter_min", _scatter_extremal_impl("scatter_min", "minimum", "scatter_min"),
    _scatter_abstract_for("scatter_min"),
)
scatter_max_p = make_primitive(
    "scatter_max", _scatter_extremal_impl("scatter_max", "maximum", "scatter_max"),
    _scatter_abstract_for("scatter_max"),
)


def _scatter_wrapper(prim, x, updates, index_arrays, indexer, mode):
    indexer = canonical_indexer(indexer)
    xa, ua = get_aval(x), get_aval(updates)
    if ua.dtype != xa.dtype:
        updates = _ew.convert_element_type(updates, xa.dtype)
    if mode is None:
        mode = default_mode(index_arrays)
    else:
        _check_mode(prim.name, mode)
    return bind1(prim, x, updates, *index_arrays, indexer=indexer, mode=mode)


def scatter_add(x: Any, updates: Any, *index_arrays: Any, indexer: Any,
                mode: str | None = None) -> Any:
    """``x.at[idx].add(updates)``: a copy of ``x`` with ``updates`` added at ``idx``.

    Repeated indices accumulate (``numpy.add.at``). ``updates`` is cast to ``x``'s dtype.

    Example:
        >>> import numpy as np
        >>> scatter_add(np.zeros(3), 1.0, np.array([0, 0, 2]), indexer=(Operand(0),))
        array([2., 0., 1.])
    """
    return _scatter_wrapper(scatter_add_p, x, updates, index_arrays, indexer, mode)


def scatter(x: Any, updates: Any, *index_arrays: Any, indexer: Any,
            mode: str | None = None) -> Any:
    """``x.at[idx].set(updates)``: a copy of ``x`` with ``updates`` written at ``idx``.

    Example:
        >>> import numpy as np
        >>> scatter(np.zeros(3), 5.0, indexer=(Slice(1, None),))
        array([0., 5., 5.])
    """
    return _scatter_wrapper(scatter_p, x, updates, index_arrays, indexer, mode)


def scatter_mul(x: Any, updates: Any, *index_arrays: Any, indexer: Any,
                mode: str | None = None) -> Any:
    """``x.at[idx].multiply(updates)`` (repeated indices multiply repeatedly).

    Example:
        >>> import numpy as np
        >>> scatter_mul(np.ones(3), 2.0, np.array([1, 1]), indexer=(Operand(0),))
        array([1., 4., 1.])
    """
    return _scatter_wrapper(scatter_mul_p, x, updates, index_arrays, indexer, mode)


def scatter_min(x: Any, updates: Any, *index_arrays: Any, indexer: Any,
                mode: str | None = None) -> Any:
    """``x.at[idx].min(updates)``: elementwise minimum at ``idx`` (``numpy.minimum.at``).

    Example:
        >>> import numpy as np
        >>> scatter_min(np.ones(3), np.array([0.5, 2.0]), np.array([0, 1]),
        ...             indexer=(Operand(0),))
        array([0.5, 1. , 1. ])
    """
    return _scatter_wrapper(scatter_min_p, x, updates, index_arrays, indexer, mode)


def scatter_max(x: Any, updates: Any, *index_arrays: Any, indexer: Any,
                mode: str | None = None) -> Any:
    """``x.at[idx].max(updates)``: elementwise maximum at ``idx`` (``numpy.maximum.at``).

    Example:
        >>> import numpy as np
        >>> scatter_max(np.ones(3), np.array([0.5, 2.0]), np.array([0, 1]),
        ...             indexer=(Operand(0),))
        array([1., 2., 1.])
    """
    return _scatter_wrapper(scatter_max_p, x, updates, index_arrays, indexer, mode)


# -- helpers for the scatter rules ---------------------------------------------------------------

def _mask(a: Any, b: Any, dtype: Any) -> Any:
    """``a == b`` as 0/1 of ``dtype`` (a constant for differentiation)."""
    return _ew.convert_element_type(_ew.eq(a, b), dtype)


def _zeros_like(x: Any, dtype: Any = None) -> Any:
    a = get_aval(x)
    return _zeros(a.shape, dtype or a.dtype, a.device)


def _may_repeat(x_shape: tuple[int, ...], idx: Sequence[Any], indexer: tuple) -> bool:
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
    ids = _iota(tuple(x_shape), get_aval(concrete[0]).device)
    try:
        picked = ids[_index_tuple(indexer, concrete)]
    except IndexError:
        return True
    return int(xp.unique(picked.reshape(-1)).size) != int(picked.size)


def _gather_shape(name: str, x_shape, idx, indexer) -> tuple[int, ...]:
    return index_layout(name, indexer, tuple(x_shape),
                        tuple(get_aval(a).shape for a in idx)).out_shape


def _winner_mask(x_aval: ShapedArray, idx: Sequence[Any], indexer: tuple, mode: str,
                 dtype: Any) -> Any:
    """1 where an update position of ``scatter`` is the one whose write survives, else 0."""
    g = _gather_shape("scatter", x_aval.shape, idx, indexer)
    ids = _iota(g, x_aval.device)
    base = _full(x_aval.shape, -1, numpy.int64, x_aval.device)
    written = bind1(scatter_p, base, ids, *idx, indexer=indexer, mode=mode)
    back = bind1(gather_p, written, *idx, indexer=indexer, mode=mode)
    return _mask(back, ids, dtype)


# -- scatter_add ---------------------------------------------------------------------------------


def _scatter_add_jvp(primals, tangents, indexer, mode):
    x, u, *idx = primals
    tx, tu = tangents[0], tangents[1]
    out = bind1(scatter_add_p, x, u, *idx, indexer=indexer, mode=mode)
    if type(tu) is Zero:
        return [out], [tx if type(tx) is not Zero else Zero.from_primal(out)]
    tx = instantiate(tx) if type(tx) is not Zero else _zeros_like(out, get_aval(tu).dtype)
    return [out], [bind1(scatter_add_p, tx, tu, *idx, indexer=indexer, mode=mode)]


def _scatter_add_transpose(ct, x, u, *idx, indexer, mode):
    ct_x = ct if is_undefined(x) else None
    ct_u = None
    if is_undefined(u):
        g = bind1(gather_p, ct, *idx, indexer=indexer, mode=mode)
        ct_u = _shape.sum_to_aval(g, u.aval)
    return [ct_x, ct_u] + [None] * len(idx)


jvp_rules[scatter_add_p] = _scatter_add_jvp
deftranspose(scatter_add_p, _scatter_add_transpose)

# -- scatter (set) -------------------------------------------------------------------------------


def _scatter_jvp(primals, tangents, indexer, mode):
    x, u, *idx = primals
    tx, tu = tangents[0], tangents[1]
    out = bind1(scatter_p, x, u, *idx, indexer=indexer, mode=mode)
    if type(tx) is Zero and type(tu) is Zero:
        return [out], [Zero.from_primal(out)]
    oa = get_aval(out)
    tdt = get_aval(tu).dtype if type(tx) is Zero else get_aval(tx).dtype
    tx = _zeros(oa.shape, tdt, oa.device) if type(tx) is Zero else tx
    # Positions overwritten by constant updates have zero tangent.
    tu = _zeros((), tdt, oa.device) if type(tu) is Zero else tu
    return [out], [bind1(scatter_p, tx, tu, *idx, indexer=indexer, mode=mode)]


def _scatter_transpose(ct, x, u, *idx, indexer, mode):
    ca = get_aval(ct)
    ct_x = ct_u = None
    if is_undefined(x):
        zero = _zeros((), ca.dtype, ca.device)
        ct_x = bind1(scatter_p, ct, zero, *idx, indexer=indexer, mode=mode)
    if is_undefined(u):
        g = bind1(gather_p, ct, *idx, indexer=indexer, mode=mode)
        if _may_repeat(ca.shape, idx, indexer):
            # Only the surviving write among repeated positions receives the cotangent.
            g = _ew.mul(g, _winner_mask(ca, idx, indexer, mode, ca.dtype))
        ct_u = _shape.sum_to_aval(g, u.aval)
    return [ct_x, ct_u] + [None] * len(idx)


jvp_rules[scatter_p] = _scatter_jvp
deftranspose(scatter_p, _scatter_transpose)

# -- scatter_mul ---------------------------------------------------------------------------------


def _scatter_mul_jvp(primals, tangents, indexer, mode):
    x, u, *idx = primals
    tx, tu = tangents[0], tangents[1]
    out = bind1(scatter_mul_p, x, u, *idx, indexer=indexer, mode=mode)
    t = None
    if type(tx) is not Zero:
        t = bind1(scatter_mul_p, tx, u, *idx, indexer=indexer, mode=mode)
    if type(tu) is not Zero:
        if _may_repeat(get_aval(x).shape, idx, indexer):
            raise NotImplementedError(
                "scatter_mul (x.at[idx].multiply(v)): the derivative with respect to the "
                "updates is not implemented when idx repeats a position; combine repeated "
                "updates first (e.g. multiply them together) or use unique indices"
            )
        gx = bind1(gather_p, x, *idx, indexer=indexer, mode=mode)
        contrib = _ew.mul(tu, gx)
        g = _gather_shape("scatter_mul", get_aval(x).shape, idx, indexer)
        contrib = _shape.broadcast_to(contrib, g)
        base = _zeros_like(out, get_aval(contrib).dtype)
        c = bind1(scatter_add_p, base, contrib, *idx, indexer=indexer, mode=mode)
        t = c if t is None else _ew.add(t, c)
    if t is None:
        return [out], [Zero.from_primal(out)]
    return [out], [t]


def _scatter_mul_transpose(ct, x, u, *idx, indexer, mode):
    if is_undefined(u):
        raise ValueError("scatter_mul: transpose with respect to the updates (not linear)")
    return [bind1(scatter_mul_p, ct, u, *idx, indexer=indexer, mode=mode), None] + [
        None
    ] * len(idx)


jvp_rules[scatter_mul_p] = _scatter_mul_jvp
deftranspose(scatter_mul_p, _scatter_mul_transpose)

# -- scatter_min / scatter_max -------------------------------------------------------------------


def _extremal_jvp_for(prim):
    def rule(primals, tangents, indexer, mode):
        x, u, *idx = primals
        tx, tu = tangents[0], tangents[1]
        out = bind1(prim, x, u, *idx, indexer=indexer, mode=mode)
        if type(tx) is Zero and type(tu) is Zero:
            return [out], [Zero.from_primal(out)]
        oa = get_aval(out)
        tdt = get_aval(tx).dtype if type(tx) is not Zero else get_aval(tu).dtype
        # The tangent comes from whichever operand wins; ties share it equally.
        mx = _mask(x, out, tdt)
        g_out = bind1(gather_p, out, *idx, indexer=indexer, mode=mode)
        g = _gather_shape(prim.name, oa.shape, idx, indexer)
        mu = _shape.broadcast_to(_mask(u, g_out, tdt), g)
        zeros = _zeros(oa.shape, tdt, oa.device)
        count = _ew.add(mx, bind1(scatter_add_p, zeros, mu, *idx, indexer=indexer, mode=mode))
        num = None
        if type(tx) is not Zero:
            num = _ew.mul(tx, mx)
        if type(tu) is not Zero:
            c = bind1(scatter_add_p, zeros, _ew.mul(tu, mu), *idx, indexer=indexer, mode=mode)
            num = c if num is None else _ew.add(num, c)
        return [out], [_ew.div(num, count)]

    jvp_rules[prim] = rule


_extremal_jvp_for(scatter_min_p)
_extremal_jvp_for(scatter_max_p)

# -- batching ------------------------------------------------------------------------------------


def _scatter_batch_for(prim):
    def rule(axis_size, vals, dims, indexer, mode):
        x, u, *idx = vals
        xd, ud, *idd = dims
        b = _batch_index_expr(prim.name, axis_size, x, xd, idx, idd, indexer, True)
        g = b.out_shape
        ua = get_aval(u)
        # Updates in the layout (batch, *g), padded with size-1 dims, then into the new layout.
        if ud is None:
            if ua.ndim == 0:
                u_new = u
            else:
                u_new = _shape.reshape(u, (1,) * (len(g) + 1 - ua.ndim) + ua.shape)
        else:
            u = _shape.moveaxis(u, ud, 0)
            s = ua.shape[:ud] + ua.shape[ud + 1:]
            u_new = _shape.reshape(u, (axis_size,) + (1,) * (len(g) - len(s)) + tuple(s))
        if get_aval(u_new).ndim:
            inv = tuple(int(i) for i in numpy.argsort(b.perm))
            u_new = _shape.transpose(u_new, inv)
        out = bind1(prim, b.x, u_new, *b.idx, indexer=b.indexer, mode=mode)
        return [out], [0]

    batching.batch_rules[prim] = rule


for _p in (scatter_add_p, scatter_p, scatter_mul_p, scatter_min_p, scatter_max_p):
    _scatter_batch_for(_p)
del _p
