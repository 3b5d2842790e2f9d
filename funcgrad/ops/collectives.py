"""Collectives over named axes: ``psum``, ``pmax``, ``pmin``, ``all_gather``, ``all_to_all``,
``ppermute``, ``axis_index`` (``pmean`` is ``psum`` divided by the axis size; ``pshuffle`` is
``ppermute``, ``pswapaxes`` is ``all_to_all``, ``psum_scatter`` is ``psum`` then this member's
slice).

One program, two ways to run it. Under ``vmap(f, axis_name="i")`` an axis is the batch of
examples, and the BatchTrace bound to that name runs the primitive's *named-axis* batch rule
(a reduction over the batch axis). Under ``funcgrad.distributed.spmd(f, axis_name="i")``
each process runs ``f`` on its own data and the implementation exchanges values through the
communicator bound to the name (MPI). The axis environment
(:func:`funcgrad.core.extend_axis_env`) records which names are bound and how big they are;
a name bound by nothing is a ``NameError`` naming it, as in JAX.

Every collective is linear or piecewise linear: ``psum``'s transpose is ``psum``,
``all_gather``'s is a ``psum`` followed by taking this member's slice, ``all_to_all``'s is
``all_to_all`` with the axes swapped, ``ppermute``'s is ``ppermute`` with the pairs reversed;
``pmax``/``pmin`` differentiate like ``max``/``min``
(ties share the tangent equally).

Example:
    >>> import numpy as np, funcgrad
    >>> from funcgrad import lax
    >>> funcgrad.vmap(lambda x: x / lax.psum(x, "i"), axis_name="i")(np.array([1.0, 3.0]))
    array([0.25, 0.75])
"""

from __future__ import annotations

import math
from contextvars import ContextVar
from typing import Any

import numpy

from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import get_default_device, xp_for, xp_for_device
from funcgrad.core import bind1, lookup_axis
from funcgrad.errors import ShapeError
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import Zero, deflinear, instantiate, jvp_rules, zeros_like_aval
from funcgrad.interpreters.linearize import backward_pass_primitives
from funcgrad.interpreters.staging import context_dependent_primitives
from funcgrad.interpreters.transpose import deftranspose
from funcgrad.ir import effectful_primitives
from funcgrad.ops import elementwise as _ew
from funcgrad.ops import reductions as _red
from funcgrad.ops import shape as _shape
from funcgrad.ops._batching_util import bdim_at_front, moveaxis_to_front
from funcgrad.ops._util import check_static, make_primitive, normalize_axis
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = [
    "psum",
    "psum_p",
    "pmean",
    "pmax",
    "pmax_p",
    "pmin",
    "pmin_p",
    "all_gather",
    "all_gather_p",
    "all_to_all",
    "all_to_all_p",
    "axis_index",
    "axis_index_p",
    "axis_size",
    "ppermute",
    "ppermute_p",
    "pshuffle",
    "pswapaxes",
    "psum_scatter",
    "pbroadcast",
    "pcast",
    "pvary_p",
    "vma_cotangent_p",
    "vma_cotangents",
    "checked_vma_axes",
]


# -- the axis environment ---------------------------------------------------------------------

#: The mesh axes of the enclosing ``shard_map`` bodies that check what varies (check_vma=True),
#: as ``((name, size), ...)``: gradients taken inside such a body follow JAX's typed rules
#: (:func:`vma_cotangents`). Set by ``funcgrad.shard_map`` while its function runs.
checked_vma_axes: ContextVar[tuple] = ContextVar("funcgrad_checked_vma_axes", default=())


def _as_names(axis_name: Any) -> tuple:
    names = axis_name if isinstance(axis_name, (tuple, list)) else (axis_name,)
    if not names:
        raise ValueError("a collective needs at least one axis name")
    for n in names:
        try:
            hash(n)
        except TypeError:
            raise TypeError(f"axis names must be hashable, got {type(n).__name__}") from None
    return tuple(names)


def _frame(name: Any, what: str) -> Any:
    frame = lookup_axis(name)
    if frame is None:
        raise NameError(
            f"unbound axis name: {name!r} ({what}). Collectives reduce over an axis that an "
            "enclosing transformation names: funcgrad.vmap(f, axis_name=...) on one process, "
            "or funcgrad.distributed.spmd(f, axis_name=...) across MPI processes"
        )
    return frame


def axis_size(axis_name: Any) -> int:
    """The number of members of the named axis (a product over a tuple of names).

    Example:
        >>> import numpy as np, funcgrad
        >>> funcgrad.vmap(lambda x: x * axis_size("i"), axis_name="i")(np.ones(3)).tolist()
        [3.0, 3.0, 3.0]
    """
    size = 1
    for n in _as_names(axis_name):
        size *= _frame(n, "axis_size").size
    return size


def _no_groups(what: str, axis_index_groups: Any) -> None:
    if axis_index_groups is not None:
        raise ValueError(f"{what}: axis_index_groups is not supported (JAX supports it under "
                         "pmap only, not vmap); reduce over the whole named axis, or split "
                         "the groups into an outer axis: vmap(vmap(f, axis_name=inner))")


def _one_name(axis_name: Any, what: str) -> Any:
    names = _as_names(axis_name)
    if len(names) != 1:
        raise ValueError(f"{what} takes one axis name, got {names!r}")
    return names[0]


def _linear_index(names: tuple) -> Any:
    # Row-major over the names in the order given, as JAX's axis_index of a tuple of names.
    idx = None
    for n in names:
        i = bind1(axis_index_p, axis_name=n)
        idx = i if idx is None else _ew.add(_ew.mul(idx, _frame(n, "axis_index").size), i)
    return idx


def _process_comm(name: Any, prim_name: str) -> Any:
    """The communicator carrying process axis ``name`` (an implementation runs here)."""
    frame = _frame(name, prim_name)
    if frame.comm is None:
        # A vmap axis reached the implementation: its BatchTrace did not see the value.
        raise NameError(
            f"{prim_name}: axis {name!r} is a vmap axis, but the value reached {prim_name} "
            "outside that vmap (for example through a function called after vmap returned)"
        )
    return frame.comm


def _array(x: Any) -> Any:
    """``x`` as an array of its backend (Python scalars become 0-d arrays)."""
    return xp_for(x).asarray(x)


# -- psum / pmax / pmin -----------------------------------------------------------------------


def _reduce_impl(op: str):
    def impl(x: Any, *, axis_name: tuple) -> list[Any]:
        out = _array(x)
        for name in axis_name:
            out = _process_comm(name, f"p{op}").allreduce(out, op)
        return [out]

    return impl


def _reduce_abstract(name: str):
    def rule(a: ShapedArray, *, axis_name: tuple) -> list[ShapedArray]:
        for n in axis_name:
            _frame(n, name)
        return [ShapedArray(a.shape, a.dtype, False, a.device)]

    return rule


def _reduce_other_axis(prim):
    # Over another trace's axis: an elementwise exchange, so the batch axis stays in place.
    def rule(axis_size: int, vals, dims, *, axis_name: tuple):
        return [bind1(prim, vals[0], axis_name=axis_name)], [dims[0]]

    return rule


def _reduce_named(prim, reduce_batch, unbatched):
    def rule(axis_size: int, vals, dims, *, axis_name: tuple):
        x, d = vals[0], dims[0]
        out = unbatched(x, axis_size) if d is None else reduce_batch(x, (d,))
        dt = get_aval(x).dtype
        if get_aval(out).dtype != dt:
            # A collective keeps its operand's dtype (reduce_sum widens small ints, as NumPy).
            out = _ew.convert_element_type(out, dt)
        rest = tuple(n for n in axis_name if n != batching.current_axis_name())
        if rest:
            out = bind1(prim, out, axis_name=rest)
        return [out], [None]

    return rule


def _sum_unbatched(x: Any, n: int) -> Any:
    if get_aval(x).dtype == numpy.bool_:
        x = _ew.convert_element_type(x, numpy.dtype(numpy.int_))
    return _ew.mul(x, n)  # a weak Python int keeps x's dtype


# -- psum
psum_p = make_primitive("psum", _reduce_impl("sum"), _reduce_abstract("psum"))
deflinear(psum_p)
deftranspose(psum_p, lambda ct, x, *, axis_name: [psum_p.bind(instantiate(ct),
                                                              axis_name=axis_name)])
batching.batch_rules[psum_p] = _reduce_other_axis(psum_p)
batching.named_axis_batch_rules[psum_p] = _reduce_named(psum_p, _red.reduce_sum, _sum_unbatched)


def psum(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The sum of ``x`` over the members of the named axis (or tuple of axes); a pytree is
    reduced leaf by leaf. ``psum(1, name)`` is the axis size.

    Example:
        >>> import numpy as np, funcgrad
        >>> funcgrad.vmap(lambda x: psum(x, "i"), axis_name="i")(np.arange(4.0)).tolist()
        [6.0, 6.0, 6.0, 6.0]
    """
    _no_groups("psum", axis_index_groups)
    names = _as_names(axis_name)
    return tree_util.tree_map(lambda v: bind1(psum_p, _bool_as_int32(v), axis_name=names), x)


def _bool_as_int32(v: Any) -> Any:
    # JAX counts booleans in int32 (psum of a mask is a count).
    if get_aval(v).dtype == numpy.bool_:
        return _ew.convert_element_type(v, numpy.dtype(numpy.int32))
    return v


def pmean(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The mean of ``x`` over the members of the named axis (``psum`` / axis size).

    Example:
        >>> import numpy as np, funcgrad
        >>> funcgrad.vmap(lambda x: pmean(x, "i"), axis_name="i")(np.arange(4.0)).tolist()
        [1.5, 1.5, 1.5, 1.5]
    """
    _no_groups("pmean", axis_index_groups)
    names = _as_names(axis_name)
    n = axis_size(names)

    # True division by a weak Python int: float32 stays float32, integers give float64.
    return tree_util.tree_map(lambda v: _ew.div(bind1(psum_p, v, axis_name=names), n), x)


def _extremum_jvp(prim):
    # Ties share the tangent equally, as max/min do.
    def rule(primals, tangents, *, axis_name: tuple):
        (x,), (t,) = primals, tangents
        out = bind1(prim, x, axis_name=axis_name)
        if type(t) is Zero:
            return [out], [Zero.from_primal(out)]
        hit = _ew.eq(x, out)
        dt = get_aval(out).dtype
        ones = _ew.convert_element_type(hit, dt)
        num = bind1(psum_p, _ew.mul(instantiate(t), ones), axis_name=axis_name)
        cnt = bind1(psum_p, ones, axis_name=axis_name)
        return [out], [_ew.div(num, cnt)]

    return rule


# -- pmax
pmax_p = make_primitive("pmax", _reduce_impl("max"), _reduce_abstract("pmax"))
jvp_rules[pmax_p] = _extremum_jvp(pmax_p)
batching.batch_rules[pmax_p] = _reduce_other_axis(pmax_p)
batching.named_axis_batch_rules[pmax_p] = _reduce_named(pmax_p, _red.reduce_max, lambda x, n: x)


def pmax(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The elementwise maximum of ``x`` over the members of the named axis.

    Example:
        >>> import numpy as np, funcgrad
        >>> funcgrad.vmap(lambda x: pmax(x, "i"), axis_name="i")(np.array([1.0, 5.0])).tolist()
        [5.0, 5.0]
    """
    _no_groups("pmax", axis_index_groups)
    names = _as_names(axis_name)
    return tree_util.tree_map(lambda v: bind1(pmax_p, v, axis_name=names), x)


# -- pmin
pmin_p = make_primitive("pmin", _reduce_impl("min"), _reduce_abstract("pmin"))
jvp_rules[pmin_p] = _extremum_jvp(pmin_p)
batching.batch_rules[pmin_p] = _reduce_other_axis(pmin_p)
batching.named_axis_batch_rules[pmin_p] = _reduce_named(pmin_p, _red.reduce_min, lambda x, n: x)


def pmin(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The elementwise minimum of ``x`` over the members of the named axis.

    Example:
        >>> import numpy as np, funcgrad
        >>> funcgrad.vmap(lambda x: pmin(x, "i"), axis_name="i")(np.array([1.0, 5.0])).tolist()
        [1.0, 1.0]
    """
    _no_groups("pmin", axis_index_groups)
    names = _as_names(axis_name)
    return tree_util.tree_map(lambda v: bind1(pmin_p, v, axis_name=names), x)


# -- axis_index -------------------------------------------------------------------------------


def _axis_index_impl(*, axis_name: Any) -> list[Any]:
    xp = xp_for_device(get_default_device())
    return [xp.asarray(_process_comm(axis_name, "axis_index").rank, dtype=numpy.int32)]


def _axis_index_abstract(*, axis_name: Any) -> list[ShapedArray]:
    _frame(axis_name, "axis_index")
    return [ShapedArray((), numpy.dtype(numpy.int32), False)]


axis_index_p = make_primitive("axis_index", _axis_index_impl, _axis_index_abstract)
jvp_rules[axis_index_p] = lambda primals, tangents, *, axis_name: (
    [bind1(axis_index_p, axis_name=axis_name)],
    [Zero(ShapedArray((), numpy.dtype(numpy.int32), False))],
)
# No operands, so no trace but the named one ever batches it.
batching.batch_rules[axis_index_p] = lambda axis_size, vals, dims, *, axis_name: (
    [bind1(axis_index_p, axis_name=axis_name)], [None])
def _axis_index_named(axis_size: int, vals: Any, dims: Any, *, axis_name: Any) -> Any:
    # on the device of the values vmap batches (the computation's), as JAX's axis_index is
    # part of the computation; the default device when nothing batched says where
    device = batching.current_device()
    if device is None:
        return [_shape.iota(numpy.int32, (axis_size,), 0)], [0]
    return [xp_for_device(device).arange(axis_size, dtype=numpy.int32)], [0]


batching.named_axis_batch_rules[axis_index_p] = _axis_index_named


def axis_index(axis_name: Any) -> Any:
    """This member's position (an int32 scalar) along the named axis (for a tuple of names,
    the row-major position over them, as JAX).

    Example:
        >>> import numpy as np, funcgrad
        >>> funcgrad.vmap(lambda x: x * axis_index("i"), axis_name="i")(np.ones(3)).tolist()
        [0.0, 1.0, 2.0]
    """
    return _linear_index(_as_names(axis_name))


# -- all_gather -------------------------------------------------------------------------------


def _gather_shape(shape: tuple, n: int, axis: int, tiled: bool) -> tuple:
    if tiled:
        return shape[:axis] + (shape[axis] * n,) + shape[axis + 1:]
    return shape[:axis] + (n,) + shape[axis:]


def _all_gather_impl(x: Any, *, axis_name: Any, axis: int, tiled: bool,
                     invariant: bool = False) -> list[Any]:
    comm = _process_comm(axis_name, "all_gather")
    x = _array(x)
    parts = comm.allgather(x)  # one array per member, in rank order
    xp = xp_for(x)
    return [xp.concatenate(parts, axis) if tiled else xp.stack(parts, axis)]


def _all_gather_abstract(a: ShapedArray, *, axis_name: Any, axis: int, tiled: bool,
                         invariant: bool = False):
    n = _frame(axis_name, "all_gather").size
    return [ShapedArray(_gather_shape(a.shape, n, axis, tiled), a.dtype, False, a.device)]


def _all_gather_transpose(ct, x, *, axis_name: Any, axis: int, tiled: bool,
                          invariant: bool = False):
    # Member m's x appears in every member's output: its cotangent is the sum over members of
    # their cotangents' slot m.
    total = bind1(psum_p, instantiate(ct), axis_name=(axis_name,))
    me = bind1(axis_index_p, axis_name=axis_name)
    size = x.aval.shape[axis] if tiled else 1
    start = _ew.mul(me, size)
    piece = _shape.dynamic_slice_in_dim(total, start, size, axis)
    return [piece if tiled else _shape.squeeze(piece, (axis,))]


def _all_gather_other_axis(axis_size: int, vals, dims, *, axis_name, axis, tiled,
                           invariant=False):
    x = moveaxis_to_front(vals[0], dims[0])
    extra = {"invariant": True} if invariant else {}
    return [bind1(all_gather_p, x, axis_name=axis_name, axis=axis + 1, tiled=tiled, **extra)
            ], [0]


def _all_gather_named(axis_size: int, vals, dims, *, axis_name, axis, tiled, invariant=False):
    x = bdim_at_front(vals[0], dims[0], axis_size)  # (members, *shape)
    out = _shape.moveaxis(x, 0, axis)
    if tiled:
        shape = get_aval(vals[0]).shape if dims[0] is None else get_aval(x).shape[1:]
        out = _shape.reshape(out, _gather_shape(shape, axis_size, axis, True))
    if not invariant and _checked_axis(batching.current_axis_name()):
        # JAX's shard_map (check_vma=True) types all_gather's result as varying over the
        # axis (its gradients, and out_specs' replication check, follow): one copy a member.
        return [bdim_at_front(out, None, axis_size)], [0]
    return [out], [None]


def _checked_axis(name: Any) -> bool:
    """Whether ``name`` is a mesh axis of an enclosing shard_map body with check_vma=True."""
    return any(n == name for n, _ in checked_vma_axes.get())


all_gather_p = make_primitive("all_gather", _all_gather_impl, _all_gather_abstract)
deflinear(all_gather_p)
deftranspose(all_gather_p, _all_gather_transpose)
batching.batch_rules[all_gather_p] = _all_gather_other_axis
batching.named_axis_batch_rules[all_gather_p] = _all_gather_named


def all_gather(x: Any, axis_name: Any, *, axis_index_groups: Any = None, axis: int = 0,
               tiled: bool = False, to: str = "varying") -> Any:
    """Every member's ``x``, stacked along a new axis ``axis`` (or concatenated along an
    existing one with ``tiled=True``), in member order.

    ``to`` (JAX's) types the result inside a ``shard_map`` body that checks what varies
    (``check_vma=True``): ``"varying"`` (one copy per member: an ``out_specs`` leaving the
    axis out refuses it, a gradient inside the body counts every member's copy) or
    ``"invarying"`` (the same on every member: it may be returned with ``P()``, and counts
    once). Under ``vmap`` both are the same.

    Example:
        >>> import numpy as np, funcgrad
        >>> f = funcgrad.vmap(lambda x: all_gather(x, "i"), axis_name="i")
        >>> f(np.array([1.0, 2.0])).tolist()
        [[1.0, 2.0], [1.0, 2.0]]
    """
    _no_groups("all_gather", axis_index_groups)
    check_static("all_gather", axis=axis, tiled=tiled)
    if to not in ("varying", "invarying", "reduced"):
        raise ValueError(f"all_gather: to must be 'varying', 'invarying' or 'reduced', got "
                         f"{to!r}")
    if to == "reduced":
        raise ValueError("all_gather(to='reduced'): reduced values are part of JAX's explicit "
                         "sharding types, which funcgrad (one device) does not have; use "
                         "'varying' or 'invarying'")
    extra = {"invariant": True} if to == "invarying" else {}

    names = _as_names(axis_name)

    def one(v: Any) -> Any:
        shape = get_aval(v).shape
        nd = len(shape)
        ax = normalize_axis("all_gather", axis, nd if tiled else nd + 1)
        if tiled and nd == 0:
            raise ShapeError("all_gather(tiled=True) needs an array with at least one axis")
        if len(names) == 1:
            return bind1(all_gather_p, v, axis_name=names[0], axis=ax, tiled=bool(tiled),
                         **extra)
        # Several names: members in row-major order over the names as given (as
        # axis_index of the tuple), gathering the last name first, each at position ax.
        out = v
        for n in reversed(names):
            out = bind1(all_gather_p, out, axis_name=n, axis=ax, tiled=False, **extra)
        sizes = get_aval(out).shape[ax:ax + len(names)]
        merged = math.prod(sizes) * (shape[ax] if tiled else 1)
        rest = shape[ax + 1:] if tiled else shape[ax:]
        return _shape.reshape(out, shape[:ax] + (merged,) + rest)

    return tree_util.tree_map(one, x)


# -- all_to_all -------------------------------------------------------------------------------


def _a2a_shape(shape: tuple, n: int, split: int, concat: int, tiled: bool) -> tuple:
    if tiled:
        out = list(shape)
        out[split] //= n
        out[concat] *= n
        return tuple(out)
    rest = shape[:split] + shape[split + 1:]
    return rest[:concat] + (n,) + rest[concat:]


def _a2a_check(shape: tuple, n: int, split: int, concat: int, tiled: bool) -> None:
    if tiled and shape[split] % n:
        raise ShapeError(
            f"all_to_all(tiled=True): axis {split} has size {shape[split]}, which the axis "
            f"size {n} does not divide"
        )
    if not tiled and shape[split] != n:
        raise ShapeError(
            f"all_to_all: axis {split} (split_axis) has size {shape[split]} but the named axis "
            f"has {n} members; they must be equal (or pass tiled=True to split it in chunks)"
        )


def _all_to_all_impl(x: Any, *, axis_name, split_axis, concat_axis, tiled) -> list[Any]:
    comm = _process_comm(axis_name, "all_to_all")
    x = _array(x)
    xp = xp_for(x)
    n = comm.size
    _a2a_check(x.shape, n, split_axis, concat_axis, tiled)
    chunks = xp.split(x, n, axis=split_axis)
    if not tiled:
        chunks = [xp.squeeze(c, split_axis) for c in chunks]
    got = comm.alltoall(chunks)
    return [xp.concatenate(got, concat_axis) if tiled else xp.stack(got, concat_axis)]


def _all_to_all_abstract(a: ShapedArray, *, axis_name, split_axis, concat_axis, tiled):
    n = _frame(axis_name, "all_to_all").size
    _a2a_check(a.shape, n, split_axis, concat_axis, tiled)
    shape = _a2a_shape(a.shape, n, split_axis, concat_axis, tiled)
    return [ShapedArray(shape, a.dtype, False, a.device)]


def _all_to_all_transpose(ct, x, *, axis_name, split_axis, concat_axis, tiled):
    return [bind1(all_to_all_p, instantiate(ct), axis_name=axis_name, split_axis=concat_axis,
                  concat_axis=split_axis, tiled=tiled)]


def _all_to_all_other_axis(axis_size: int, vals, dims, *, axis_name, split_axis, concat_axis,
                           tiled):
    x = moveaxis_to_front(vals[0], dims[0])
    return [bind1(all_to_all_p, x, axis_name=axis_name, split_axis=split_axis + 1,
                  concat_axis=concat_axis + 1, tiled=tiled)], [0]


def _all_to_all_named(n: int, vals, dims, *, axis_name, split_axis, concat_axis, tiled):
    x = bdim_at_front(vals[0], dims[0], n)  # x[i] is member i's value
    shape = get_aval(x).shape[1:]
    _a2a_check(shape, n, split_axis, concat_axis, tiled)
    s = split_axis + 1
    if tiled:
        # Member i's chunk j (along split) goes to member j, at block i of concat.
        x = _shape.reshape(x, (n,) + shape[:split_axis] + (n, shape[split_axis] // n)
                           + shape[split_axis + 1:])
        # positions: i at 0, j at s, chunk at s+1, other per-example axes after shifting.
        pos = [a + 1 if a < split_axis else (s + 1 if a == split_axis else a + 2)
               for a in range(len(shape))]
        perm = [s]
        for a in range(len(shape)):
            perm += [0, pos[a]] if a == concat_axis else [pos[a]]
        y = _shape.transpose(x, tuple(perm))
        out_shape = _a2a_shape(shape, n, split_axis, concat_axis, True)
        return [_shape.reshape(y, (n,) + out_shape)], [0]
    # Untiled: member j receives x[i][..j..] from each i, stacked at concat.
    y = _shape.moveaxis(x, s, 0)  # (j, i, rest...)
    return [_shape.moveaxis(y, 1, 1 + concat_axis)], [0]


all_to_all_p = make_primitive("all_to_all", _all_to_all_impl, _all_to_all_abstract)
deflinear(all_to_all_p)
deftranspose(all_to_all_p, _all_to_all_transpose)
batching.batch_rules[all_to_all_p] = _all_to_all_other_axis
batching.named_axis_batch_rules[all_to_all_p] = _all_to_all_named


def all_to_all(x: Any, axis_name: Any, split_axis: int, concat_axis: int, *,
               axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """Member ``i`` sends the ``j``-th slice of ``x`` along ``split_axis`` to member ``j``,
    which stacks what it receives along ``concat_axis`` in member order (``tiled=True``:
    ``split_axis`` is cut into equal chunks and they are concatenated instead; no axis is
    added or removed). As ``jax.lax.all_to_all``.

    Example:
        >>> import numpy as np, funcgrad
        >>> f = funcgrad.vmap(lambda x: all_to_all(x, "i", 0, 0), axis_name="i")
        >>> f(np.arange(4.0).reshape(2, 2)).tolist()   # a transpose across members
        [[0.0, 2.0], [1.0, 3.0]]
    """
    _no_groups("all_to_all", axis_index_groups)
    axis_name = _one_name(axis_name, "all_to_all")
    check_static("all_to_all", split_axis=split_axis, concat_axis=concat_axis, tiled=tiled)
    nd = get_aval(x).ndim
    s = normalize_axis("all_to_all", split_axis, nd)
    c = normalize_axis("all_to_all", concat_axis, nd if tiled else nd)
    return bind1(all_to_all_p, x, axis_name=axis_name, split_axis=s, concat_axis=c,
                 tiled=bool(tiled))


# -- ppermute ---------------------------------------------------------------------------------


def _check_perm(perm: Any, size: int | None = None) -> tuple:
    """``perm`` as a tuple of ``(source, destination)`` int pairs, each end used once."""
    try:
        pairs = tuple((int(s), int(d)) for s, d in perm)
    except (TypeError, ValueError):
        raise TypeError(f"ppermute: perm must be a sequence of (source, destination) int "
                        f"pairs, got {perm!r}") from None
    srcs, dsts = [s for s, _ in pairs], [d for _, d in pairs]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"ppermute sources and destinations must be unique, got {perm!r}")
    if size is not None:
        for i in srcs + dsts:
            if not 0 <= i < size:
                raise ValueError(f"ppermute: index {i} in perm {perm!r} is out of range for "
                                 f"an axis of size {size}")
    return pairs


def _ppermute_impl(x: Any, *, axis_name: Any, perm: tuple) -> list[Any]:
    comm = _process_comm(axis_name, "ppermute")
    x = _array(x)
    parts = comm.allgather(x)  # every member's value, in rank order
    src = {d: s for s, d in perm}.get(comm.rank)
    return [xp_for(x).zeros_like(x) if src is None else parts[src]]


def _ppermute_abstract(a: ShapedArray, *, axis_name: Any, perm: tuple) -> list[ShapedArray]:
    _check_perm(perm, _frame(axis_name, "ppermute").size)
    return [ShapedArray(a.shape, a.dtype, False, a.device)]


def _ppermute_transpose(ct, x, *, axis_name: Any, perm: tuple):
    return [bind1(ppermute_p, instantiate(ct), axis_name=axis_name,
                  perm=tuple((d, s) for s, d in perm))]


def _ppermute_other_axis(axis_size: int, vals, dims, *, axis_name, perm):
    # Over another trace's axis: an exchange of whole values, the batch axis stays in place.
    return [bind1(ppermute_p, vals[0], axis_name=axis_name, perm=perm)], [dims[0]]


def _ppermute_named(n: int, vals, dims, *, axis_name, perm):
    _check_perm(perm, n)
    x = bdim_at_front(vals[0], dims[0], n)  # x[i] is member i's value
    src = {d: s for s, d in perm}
    rows = []
    for j in range(n):
        s = src.get(j)
        row = _shape.slice_in_dim(x, s, s + 1, 1, 0) if s is not None else None
        rows.append(row)
    if any(r is None for r in rows):
        zero = _ew.mul(_shape.slice_in_dim(x, 0, 1, 1, 0), 0)
        rows = [zero if r is None else r for r in rows]
    return [_shape.concatenate(rows, 0)], [0]


ppermute_p = make_primitive("ppermute", _ppermute_impl, _ppermute_abstract)
deflinear(ppermute_p)
deftranspose(ppermute_p, _ppermute_transpose)
batching.batch_rules[ppermute_p] = _ppermute_other_axis
batching.named_axis_batch_rules[ppermute_p] = _ppermute_named


def ppermute(x: Any, axis_name: Any, perm: Any) -> Any:
    """Member ``source`` sends its ``x`` to member ``destination`` for each pair of ``perm``
    (a sequence of ``(source, destination)`` pairs, each source and each destination at most
    once); a member that is no pair's destination gets zeros. A pytree is sent leaf by leaf.
    As ``jax.lax.ppermute``.

    Example:
        >>> import numpy as np, funcgrad
        >>> ring = [(0, 1), (1, 2), (2, 0)]
        >>> f = funcgrad.vmap(lambda x: ppermute(x, "i", ring), axis_name="i")
        >>> f(np.array([1.0, 2.0, 3.0])).tolist()
        [3.0, 1.0, 2.0]
    """
    name = _one_name(axis_name, "ppermute")
    pairs = _check_perm(perm)
    return tree_util.tree_map(lambda v: bind1(ppermute_p, v, axis_name=name, perm=pairs), x)


def pshuffle(x: Any, axis_name: Any, perm: Any) -> Any:
    """Member ``i`` gets member ``perm[i]``'s ``x`` (``perm`` a permutation of
    ``range(axis size)``): :func:`ppermute` with pairs ``(perm[i], i)``. As
    ``jax.lax.pshuffle``.

    Example:
        >>> import numpy as np, funcgrad
        >>> f = funcgrad.vmap(lambda x: pshuffle(x, "i", [2, 0, 1]), axis_name="i")
        >>> f(np.array([1.0, 2.0, 3.0])).tolist()
        [3.0, 1.0, 2.0]
    """
    perm = list(perm)
    if sorted(perm) != list(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


def pswapaxes(x: Any, axis_name: Any, axis: int, *, axis_index_groups: Any = None) -> Any:
    """Swap the named axis with axis ``axis`` of ``x`` (whose size must be the axis size):
    ``all_to_all(x, axis_name, axis, axis)``, as ``jax.lax.pswapaxes``.

    Example:
        >>> import numpy as np, funcgrad
        >>> f = funcgrad.vmap(lambda x: pswapaxes(x, "i", 0), axis_name="i")
        >>> f(np.arange(4.0).reshape(2, 2)).tolist()
        [[0.0, 2.0], [1.0, 3.0]]
    """
    _no_groups("pswapaxes", axis_index_groups)
    return tree_util.tree_map(lambda v: all_to_all(v, axis_name, axis, axis), x)


def psum_scatter(x: Any, axis_name: Any, *, scatter_dimension: int = 0,
                 axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """``psum(x, axis_name)`` of which member ``i`` keeps slice ``i`` along
    ``scatter_dimension`` (whose size must be the axis size, and which is removed), or with
    ``tiled=True`` chunk ``i`` of that axis cut into axis-size equal chunks (kept). As
    ``jax.lax.psum_scatter``.

    Example:
        >>> import numpy as np, funcgrad
        >>> f = funcgrad.vmap(lambda x: psum_scatter(x, "i"), axis_name="i")
        >>> f(np.arange(4.0).reshape(2, 2)).tolist()   # column sums, one per member
        [2.0, 4.0]
    """
    _no_groups("psum_scatter", axis_index_groups)
    check_static("psum_scatter", scatter_dimension=scatter_dimension, tiled=tiled)
    names = _as_names(axis_name)
    n = axis_size(names)

    def one(v: Any) -> Any:
        a = get_aval(v)
        if a.ndim == 0:
            raise ShapeError("psum_scatter needs an array with at least one axis, got a scalar")
        d = normalize_axis("psum_scatter", scatter_dimension, a.ndim)
        size = a.shape[d]
        if tiled and size % n:
            raise ShapeError(f"psum_scatter(tiled=True): axis {d} has size {size}, which the "
                             f"axis size {n} does not divide")
        if not tiled and size != n:
            raise ShapeError(f"psum_scatter: axis {d} (scatter_dimension) has size {size} but "
                             f"the named axis has {n} members; they must be equal (or pass "
                             "tiled=True to scatter chunks)")
        total = bind1(psum_p, v, axis_name=names)
        me = _linear_index(names)
        chunk = size // n
        piece = _shape.dynamic_slice_in_dim(total, _ew.mul(me, chunk), chunk, d)
        return piece if tiled else _shape.squeeze(piece, (d,))

    return tree_util.tree_map(one, x)


# Collectives talk to other members, so the compiler must never evaluate one at compile time:
# constant folding would run it on one member only, or bake one member's axis_index into a
# program that members running as threads share. Marking them effectful is how the passes
# learn that (it also keeps an unused collective, which every member then still runs).
effectful_primitives.update({psum_p, pmax_p, pmin_p, axis_index_p, all_gather_p, all_to_all_p,
                            ppermute_p})
# Over a named axis, forward and reverse mode are different maps: the JVP of psum(f(x)) sums
# every member's tangent, while grad transposes psum (cotangent times the axis size). grad of
# one real number computes tangents forward (linearize's ForwardTangents) unless an operation
# needs its backward rule, as these do: the per-member gradient is the transpose, as in JAX.
backward_pass_primitives.update({psum_p, pmax_p, pmin_p, all_gather_p, all_to_all_p, ppermute_p})
# Their shapes (and whether the axis is bound at all) depend on the axes bound around them: a
# result shape cached for one axis size would be reused under another (make_jaxpr axis_env).
context_dependent_primitives.update(
    {psum_p, pmax_p, pmin_p, axis_index_p, all_gather_p, all_to_all_p, ppermute_p})


def pbroadcast(x: Any, axis_name: Any, source: int) -> Any:
    """Every member of ``axis_name`` gets member ``source``'s ``x`` (each leaf of a pytree),
    as ``jax.lax.pbroadcast``: the psum of ``x`` masked to ``source``, the equivalence JAX
    documents (a NaN or inf elsewhere does not leak through the mask).

    Example:
        >>> import numpy as np, funcgrad
        >>> f = funcgrad.vmap(lambda x: pbroadcast(x, "i", 1), axis_name="i")
        >>> f(np.array([1.0, 5.0, np.nan])).tolist()
        [5.0, 5.0, 5.0]
    """
    check_static("pbroadcast", source=source)
    names = _as_names(axis_name)
    n = axis_size(names)
    if not isinstance(source, int | numpy.integer) or not 0 <= int(source) < n:
        raise ValueError(f"pbroadcast: source must be an int in [0, {n}) for the axis "
                         f"{axis_name!r} of size {n}, got {source!r}")

    def one(v: Any) -> Any:
        mine = _ew.eq(axis_index(names), int(source))
        return psum(_ew.select_n(mine, zeros_like_aval(get_aval(v)), v), names)

    return tree_util.tree_map(one, x)


# -- pvary: a value made varying over an axis (pcast to="varying") ----------------------------


def _pvary_impl(x: Any, *, axis_name: tuple) -> list[Any]:
    for n in axis_name:
        _frame(n, "pcast")
    return [x]


def _pvary_abstract(a: ShapedArray, *, axis_name: tuple) -> list[ShapedArray]:
    for n in axis_name:
        _frame(n, "pcast")
    return [a]


def _pvary_named(axis_size: int, vals, dims, *, axis_name: tuple):
    # The same value on every member, now carried per member (batched): what shard_map's
    # gradient rule (vma_cotangents) reads as "varying over this axis".
    x, d = vals[0], dims[0]
    out = bdim_at_front(x, d, axis_size) if d is None else x
    rest = tuple(n for n in axis_name if n != batching.current_axis_name())
    if rest:
        out = bind1(pvary_p, out, axis_name=rest)
    return [out], [0 if d is None else d]


pvary_p = make_primitive("pvary", _pvary_impl, _pvary_abstract)
deflinear(pvary_p)
# Per member the value is unchanged, so is its cotangent; shard_map's gradient rule sums the
# cotangents of values that do not vary over an axis (JAX's transpose of pvary is psum).
deftranspose(pvary_p, lambda ct, x, *, axis_name: [instantiate(ct)])
batching.batch_rules[pvary_p] = lambda axis_size, vals, dims, *, axis_name: (
    [bind1(pvary_p, vals[0], axis_name=axis_name)], [dims[0]])
batching.named_axis_batch_rules[pvary_p] = _pvary_named


# -- shard_map's gradients of values invariant over a mesh axis (JAX's check_vma=True) ---------


def _vma_ct_impl(ct: Any, ref: Any, *, axis_name: tuple, mode: str) -> list[Any]:
    # No trace of the axis saw the operands: both are the same on every member.
    n = _frame(axis_name[0], "shard_map gradient").size
    return [_ew.mul(ct, n) if mode == "sum" else _ew.div(ct, n)]


def _vma_ct_abstract(c: ShapedArray, r: ShapedArray, *, axis_name: tuple, mode: str):
    _frame(axis_name[0], "shard_map gradient")
    return [ShapedArray(c.shape, c.dtype, False, c.device)]


def _vma_ct_named(axis_size: int, vals, dims, *, axis_name: tuple, mode: str):
    ct, dc = vals[0], dims[0]
    if dims[1] is not None:  # the reference value varies over the axis: nothing to do
        return [ct], [dc]
    if mode == "scale":
        if dc is not None:
            # JAX's type check: the cotangent of an output the same on every member must be
            # so too (a varying one has no transpose in JAX's typed rules)
            raise TypeError(
                "cotangent type does not match function output: the output is the same on "
                f"every shard along the mesh axis {axis_name[0]!r} (invariant), but its "
                "cotangent varies along it; reduce the cotangent over the axis (lax.psum / "
                "lax.pmean) or make the output vary (lax.pcast(..., to='varying'))")
        return [_ew.div(ct, axis_size)], [dc]
    out = _ew.mul(ct, axis_size) if dc is None else _red.reduce_sum(ct, (dc,))
    if get_aval(out).dtype != get_aval(ct).dtype:
        out = _ew.convert_element_type(out, get_aval(ct).dtype)
    return [out], [None]


def _vma_ct_other_axis(axis_size: int, vals, dims, *, axis_name: tuple, mode: str):
    # Only the reference's batching over *its* axis matters; the cotangent keeps its batch.
    if dims[0] is None:
        return [bind1(vma_cotangent_p, vals[0], vals[1], axis_name=axis_name, mode=mode)], [None]
    return [bind1(vma_cotangent_p, vals[0], vals[1], axis_name=axis_name, mode=mode)], [dims[0]]


def _vma_ct_jvp(primals, tangents, *, axis_name: tuple, mode: str):
    out = bind1(vma_cotangent_p, *primals, axis_name=axis_name, mode=mode)
    t = tangents[0]
    if type(t) is Zero:
        return [out], [Zero.from_primal(out)]
    return [out], [bind1(vma_cotangent_p, t, primals[1], axis_name=axis_name, mode=mode)]


#: ``vma_cotangent_p(ct, ref, axis_name=(name,), mode=...)``: over the mesh axis ``name``, when
#: ``ref`` is the same on every member (not batched along it), ``mode="sum"`` sums ``ct`` over
#: the members and ``mode="scale"`` divides it by their number; else ``ct`` is unchanged.
#: Linear in ``ct`` and self-adjoint (per member, as funcgrad transposes the collectives).
vma_cotangent_p = make_primitive("vma_cotangent", _vma_ct_impl, _vma_ct_abstract)
jvp_rules[vma_cotangent_p] = _vma_ct_jvp
deftranspose(vma_cotangent_p, lambda ct, c, ref, *, axis_name, mode: [
    bind1(vma_cotangent_p, instantiate(ct), ref, axis_name=axis_name, mode=mode), None])
batching.batch_rules[vma_cotangent_p] = _vma_ct_other_axis
batching.named_axis_batch_rules[vma_cotangent_p] = _vma_ct_named
# As the collectives (above): they depend on the axes bound around them.
effectful_primitives.update({pvary_p, vma_cotangent_p})
context_dependent_primitives.update({pvary_p, vma_cotangent_p})


def _vma_applies(c: Any) -> bool:
    return type(c) is not Zero and c is not None and get_aval(c).dtype.kind in "fc"


def vma_cotangents(cts: list[Any], refs: list[Any], mode: str) -> list[Any]:
    """Cotangents as JAX's ``shard_map`` (``check_vma=True``) types them, inside a body that
    checks them (:data:`checked_vma_axes`; elsewhere ``cts`` as they are).

    funcgrad differentiates a body per member (as JAX with ``check_vma=False``: a member's
    cotangent of a value the same on every member is its own share). JAX types values as
    varying or invariant over each mesh axis and transposes the implicit ``pvary`` of an
    invariant value into a ``psum``, ``psum`` into a ``pvary``: by linearity, its gradient of
    an output is funcgrad's with the cotangent of an output invariant over an axis divided by
    the axis size (``mode="scale"``, ``refs`` the outputs), and the cotangent of an input
    invariant over it summed over the members (``mode="sum"``, ``refs`` the inputs).

    Example:
        >>> import numpy as np, funcgrad
        >>> from funcgrad.sharding import Mesh, PartitionSpec as P
        >>> mesh = Mesh(np.array(funcgrad.local_devices() * 2), ("i",))
        >>> g = funcgrad.shard_map(lambda w, x: funcgrad.grad(lambda w: (w * x).sum())(w),
        ...                        mesh=mesh, in_specs=(P(), P("i")), out_specs=P())
        >>> g(1.0, np.array([1.0, 2.0])).item()  # the whole batch's gradient, on every shard
        3.0
    """
    axes = checked_vma_axes.get()
    if not axes:
        return cts
    out = []
    for c, r in zip(cts, refs):
        if _vma_applies(c):
            for name, _ in axes:
                c = bind1(vma_cotangent_p, c, r, axis_name=(name,), mode=mode)
        out.append(c)
    return out


def pcast(x: Any, axis_name: Any, *, to: str) -> Any:
    """``jax.lax.pcast``: marks ``x`` as varying (``to="varying"``) over ``axis_name`` for
    JAX's type checks of ``shard_map``: each member then holds its own copy, so a gradient with
    respect to it taken inside the body is that member's (not summed over the members).

    Example:
        >>> import numpy as np, funcgrad
        >>> funcgrad.vmap(lambda x: pcast(x, "i", to="varying"), axis_name="i")(
        ...     np.ones(2)).tolist()
        [1.0, 1.0]
    """
    if to not in ("varying", "reduced", "unreduced"):
        raise ValueError(f"pcast: to must be 'varying', 'reduced' or 'unreduced', got {to!r}")
    if to != "varying":
        raise ValueError(f"pcast(to={to!r}): reduced/unreduced values are part of JAX's "
                         "explicit sharding types, which funcgrad (one device) does not have; "
                         "only to='varying' applies")
    names = _as_names(axis_name)
    for name in names:
        _frame(name, "pcast")  # an unbound axis name is an error, as for the collectives
    return tree_util.tree_map(lambda v: bind1(pvary_p, v, axis_name=names), x)
