"""``shard_map``: run a function once per shard of a device mesh, with collectives over the
mesh's axes (``jax.shard_map``).

Each argument is cut into blocks by its :class:`~funcgrad.sharding.PartitionSpec` (a
dimension split over mesh axes ``("x", "y")`` gives each ``(x, y)`` position of the mesh its
block, ``x`` the most major); the function sees one block, and ``lax.psum`` /
``all_gather`` / ``axis_index`` ... over a mesh axis name reach across the blocks. The
outputs' specs say how the blocks are put back together; a mesh axis an output spec leaves
out means the output is the same on every shard along it -- checked when ``check_vma``
(JAX's "varying manual axes" check), else the first shard's value is returned. With that
check, gradients taken inside the function follow JAX's typed rules too (what is the same
on every shard is its batch rules' unbatched values; see
:func:`funcgrad.ops.collectives.vma_cotangents`).

funcgrad runs on one device per platform, so the shards are a batch: one ``vmap`` per mesh
axis, named after it. The results are JAX's for the same mesh shape.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

from funcgrad.avals import get_aval
from funcgrad.interpreters.batching import batch_flat
from funcgrad.ops import collectives as _coll
from funcgrad.ops import shape as _shape
from funcgrad.sharding import Mesh, PartitionSpec, _split_factors, get_mesh
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = ["shard_map", "smap"]


def _is_partition_spec(x: Any) -> bool:
    # A spec is a leaf of the specs' tree; None is one too (broadcast_prefix's rule for the
    # prefix), while a None *argument or output* stays an empty subtree, with no spec.
    return isinstance(x, PartitionSpec)


def _spec_of(s: Any) -> PartitionSpec:
    return PartitionSpec() if s is None else s


def _to_blocks(x: Any, spec: PartitionSpec, mesh: Mesh, axes: Sequence[str], where: str
               ) -> tuple[Any, list[str]]:
    """``x`` reshaped so its blocks are indexed by leading dimensions, one per mesh axis that
    splits it, in the order of ``axes``; returns it and those axes."""
    shape = tuple(get_aval(x).shape)
    factors = _split_factors(mesh, spec, len(shape), f"shard_map in_specs for {where}")
    sizes = mesh.shape
    for d, (s, f) in enumerate(zip(shape, factors)):
        if s % f:
            raise ValueError(
                f"shard_map: {where} has shape {shape}, and its in_specs {spec} splits axis "
                f"{d} (size {s}) into {f} blocks over the mesh {mesh}; the size must be "
                "divisible by the product of the mesh axis sizes")
    split = [n for n in spec.mentioned() if n in axes]
    if not split:
        return x, []
    # (.., s_d, ..) -> (.., size(n1), .., size(nk), s_d / f, ..), then the block dims first.
    new_shape: list[int] = []
    block_pos: dict[str, int] = {}
    local_pos: list[int] = []
    for d, s in enumerate(shape):
        for n in spec.axis_names_of(d):
            block_pos[n] = len(new_shape)
            new_shape.append(sizes[n])
        local_pos.append(len(new_shape))
        new_shape.append(s // factors[d])
    x = _shape.reshape(x, tuple(new_shape))
    order = [n for n in axes if n in block_pos]
    perm = tuple([block_pos[n] for n in order] + local_pos)
    if perm != tuple(range(len(perm))):
        x = _shape.transpose(x, perm)
    return x, order


def _from_blocks(x: Any, spec: PartitionSpec, mesh: Mesh, order: list[str], where: str) -> Any:
    """The inverse of :func:`_to_blocks`: ``x`` has a leading dimension per axis of ``order``
    (those of ``spec``, in mesh order) before the block's own dimensions."""
    lead = len(order)
    block = tuple(get_aval(x).shape[lead:])
    _split_factors(mesh, spec, len(block), f"shard_map out_specs for {where}")
    if not order:
        return x
    sizes = mesh.shape
    perm: list[int] = []
    merged: list[int] = []
    for d, s in enumerate(block):
        names = spec.axis_names_of(d)
        perm.extend(order.index(n) for n in names)
        perm.append(lead + d)
        merged.append(s * math.prod(sizes[n] for n in names))
    if tuple(perm) != tuple(range(len(perm))):
        x = _shape.transpose(x, tuple(perm))
    return _shape.reshape(x, tuple(merged))


class _InferType:
    """The default of ``in_specs``: JAX infers the specs from the arguments' shardings."""

    def __repr__(self) -> str:
        return "Infer"


_INFER: Any = _InferType()


def shard_map(f: Callable[..., Any] | None = None, /, *, out_specs: Any,
              in_specs: Any = _INFER, mesh: Mesh | None = None,
              axis_names: Any = frozenset(), check_vma: bool = True) -> Any:
    """``f`` run once per shard of ``mesh`` (``jax.shard_map``).

    Args:
        f: the per-shard function (or leave it out: ``shard_map`` then returns a decorator).
        out_specs: a :class:`~funcgrad.sharding.PartitionSpec` per output (a prefix of the
            output pytree): how the blocks form the result. A mesh axis it leaves out means
            the output is replicated along it.
        in_specs: a PartitionSpec per positional argument (a prefix of the tuple of
            arguments; ``None`` or ``P()``: every shard gets the whole argument). Required:
            JAX infers it from the arguments' shardings, which funcgrad's arrays do not carry.
        mesh: the :class:`~funcgrad.sharding.Mesh` (default: the one of
            :func:`~funcgrad.sharding.set_mesh`).
        axis_names: the mesh axes ``f`` is mapped over (default: all); the others are left
            to the compiler in JAX, and here simply not split.
        check_vma: check that an output is the same on every shard along the mesh axes its
            spec leaves out (else the first shard's value is returned unchecked); and, as
            JAX, differentiate inside ``f`` by its typed rules: the gradient of a value the
            same on every shard (a ``P()`` input) sums the shards', a ``psum``/``pmean``
            result's cotangent counts once (else every gradient is the shard's own).

    Example:
        >>> import numpy as np, funcgrad
        >>> from funcgrad import lax
        >>> from funcgrad.sharding import Mesh, PartitionSpec as P
        >>> mesh = Mesh(np.array(["cpu"] * 2), ("i",))
        >>> total = funcgrad.shard_map(lambda b: lax.psum(b.sum(), "i"), mesh=mesh,
        ...                            in_specs=P("i"), out_specs=P())
        >>> float(total(np.arange(4.0)))
        6.0
    """
    if f is None:
        return functools.partial(shard_map, out_specs=out_specs, in_specs=in_specs,
                                 mesh=mesh, axis_names=axis_names, check_vma=check_vma)
    if not callable(f):
        raise TypeError(f"shard_map: the first argument must be a function, got "
                        f"{type(f).__name__}")

    @functools.wraps(f)
    def sharded(*args: Any) -> Any:
        m = mesh if mesh is not None else get_mesh()
        if m is None:
            raise ValueError("shard_map: no mesh: pass mesh=... or call it under "
                             "funcgrad.sharding.set_mesh(mesh)")
        if not isinstance(m, Mesh):
            raise TypeError(f"shard_map: mesh must be a funcgrad.sharding.Mesh, got "
                            f"{type(m).__name__}")
        if in_specs is _INFER:
            # JAX refuses this too on meshes of Auto axes; on Explicit ones it reads the
            # arguments' shardings, which funcgrad's (whole, one-device) arrays do not have:
            # replicating every argument instead would silently change the result.
            raise TypeError(
                "shard_map: in_specs is required: pass a PartitionSpec per positional "
                "argument (P() for a replicated one). JAX infers it from the arguments' "
                "shardings on meshes of AxisType.Explicit axes; funcgrad's arrays carry no "
                "sharding to infer it from")
        manual = frozenset(axis_names) or frozenset(m.axis_names)
        unknown = sorted(manual - set(m.axis_names))
        if unknown:
            raise ValueError(f"shard_map: axis_names {unknown} are not axes of the mesh {m}")
        axes = [n for n in m.axis_names if n in manual]
        paths, in_tree = tree_util.tree_flatten_with_path(args)
        leaves = [v for _, v in paths]
        try:
            specs = tree_util.broadcast_prefix(in_specs, args, is_leaf=_is_partition_spec)
        except ValueError as e:
            raise ValueError(f"shard_map: in_specs must be a prefix of the tuple of "
                             f"arguments: {e}") from None
        blocks, block_axes = [], []
        for i, (x, s) in enumerate(zip(leaves, specs)):
            where = f"args{tree_util.keystr(paths[i][0])}"
            s = _spec_of(s)
            if not isinstance(s, PartitionSpec):
                raise TypeError(f"shard_map: in_specs for {where} must be a PartitionSpec, "
                                f"got {s!r}")
            outside = [n for n in s.mentioned() if n not in manual]
            if outside:
                raise ValueError(f"shard_map: in_specs {s} for {where} names {outside}, "
                                 f"not among the mapped axes {sorted(manual)}")
            b, order = _to_blocks(x, s, m, axes, where)
            blocks.append(b)
            block_axes.append(order)
        store: dict[str, Any] = {}
        outs = _run_level(f, in_tree, blocks, block_axes, axes, 0, m, out_specs, check_vma,
                          store)
        out_tree, out_spec_list = store["tree"], store["specs"]
        results = [_from_blocks(o, _spec_of(s), m, [n for n in axes if n in
                                                    _spec_of(s).mentioned()],
                                f"output leaf {j}")
                   for j, (o, s) in enumerate(zip(outs, out_spec_list))]
        return tree_util.tree_unflatten(out_tree, results)

    return sharded


def _run_level(f: Callable[..., Any], in_tree: Any, vals: list[Any], val_axes: list[list[str]],
               axes: list[str], level: int, mesh: Mesh, out_specs: Any, check_vma: bool,
               store: dict[str, Any]) -> list[Any]:
    """Map mesh axis ``axes[level]`` (and, inside, the ones after it) over the blocks."""
    if level == len(axes):
        token = _coll.checked_vma_axes.set(
            _coll.checked_vma_axes.get() + tuple((n, mesh.shape[n]) for n in axes)
        ) if check_vma else None
        try:
            out = f(*tree_util.tree_unflatten(in_tree, vals))
        finally:
            if token is not None:
                _coll.checked_vma_axes.reset(token)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        try:
            specs = tree_util.broadcast_prefix(out_specs, out, is_leaf=_is_partition_spec)
        except ValueError as e:
            raise ValueError(f"shard_map: out_specs must be a prefix of the output: {e}"
                             ) from None
        if any(sp is None for sp in specs):
            # As JAX: None in out_specs matches a None output only (an empty subtree), where
            # in in_specs it means a replicated argument.
            j = next(i for i, sp in enumerate(specs) if sp is None)
            raise ValueError(
                f"shard_map: out_specs is None for output leaf {j} (an array); give it a "
                "PartitionSpec: P() for an output that is the same on every shard")
        store["tree"], store["specs"] = out_tree, specs
        return list(out_leaves)
    name = axes[level]
    size = mesh.shape[name]
    dims = [0 if name in va else None for va in val_axes]
    inner_axes = [[n for n in va if n != name] for va in val_axes]

    def body(*ins: Any) -> list[Any]:
        return _run_level(f, in_tree, list(ins), inner_axes, axes, level + 1, mesh,
                          out_specs, check_vma, store)

    outs, out_dims = batch_flat(body, vals, dims, size, name)
    results = []
    for j, (o, d) in enumerate(zip(outs, out_dims)):
        spec = _spec_of(store["specs"][j])
        if name in spec.mentioned():  # the blocks along this axis: a leading dimension
            if d is None:  # the same on every shard: each shard's block is that value
                shape = tuple(get_aval(o).shape)
                o = _shape.broadcast_in_dim(o, (size, *shape), tuple(range(1, len(shape) + 1)))
            elif d != 0:
                o = _shape.moveaxis(o, d, 0)
        elif d is not None:
            if check_vma:
                raise ValueError(
                    f"shard_map: out_specs {spec} for output leaf {j} leaves out the mesh "
                    f"axis {name!r}, so the output must be the same on every shard along it, "
                    f"but it varies along {name!r}. Reduce it over the axis (lax.psum, "
                    f"lax.pmax, ...), name {name!r} in its out_specs, or pass "
                    "check_vma=False to return the first shard's value")
            o = _shape.index_in_dim(o, 0, d, keepdims=False)
        results.append(o)
    return results


def _check_axes(axes: Any, what: str) -> None:
    # As JAX: an int, None, or a tuple (a pytree prefix); a list is refused like vmap's.
    if isinstance(axes, list) and what == "in_axes":
        raise TypeError(f"smap: in_axes must be an int, None, or a tuple of entries "
                        f"corresponding to the positional arguments, but got {axes!r}")
    for ax in tree_util.tree_leaves(axes):
        if isinstance(ax, bool) or not isinstance(ax, int):
            raise TypeError(f"smap: each entry of {what} must be an int or None, got "
                            f"{type(ax).__name__} {ax!r}")


def smap(f: Callable[..., Any] | None = None, /, *, in_axes: Any = _INFER, out_axes: Any,
         axis_name: Any) -> Any:
    """``f`` mapped over one axis of the current mesh (``jax.smap``): a ``shard_map`` over
    the mesh axis ``axis_name`` only (the mesh set by :func:`~funcgrad.sharding.set_mesh`),
    with vmap-style ``in_axes`` / ``out_axes``. An argument mapped at axis ``k`` is cut into
    as many blocks along ``k`` as the axis has members (``f`` sees a block, axis ``k`` kept);
    ``None`` gives every member the whole argument. An output mapped at ``k`` is put back
    together along ``k``; ``None`` means it is the same on every member (checked, as
    ``shard_map``'s ``P()``). Negative axes count from the end. ``in_axes`` is required (JAX
    infers it only from the shardings of arrays on meshes of ``Explicit`` axes).

    Example:
        >>> import numpy as np, funcgrad
        >>> from funcgrad import lax
        >>> from funcgrad.sharding import Mesh, set_mesh
        >>> with set_mesh(Mesh(np.array(funcgrad.local_devices() * 2), ("i",))):
        ...     out = funcgrad.smap(lambda b: b * lax.axis_index("i"), in_axes=0, out_axes=0,
        ...                         axis_name="i")(np.ones(4))
        >>> out.tolist()
        [0.0, 0.0, 1.0, 1.0]
    """
    if f is None:
        return functools.partial(smap, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)
    if not callable(f):
        raise TypeError(f"smap: the first argument must be a function, got {type(f).__name__}")
    if in_axes is _INFER:
        raise TypeError(
            f"smap: in_axes is required (an int, None, or a tuple with one entry per "
            f"positional argument); JAX infers it from the arguments' shardings on meshes of "
            f"AxisType.Explicit axes only, and funcgrad's arrays carry no sharding "
            f"(axis_name={axis_name!r})")
    _check_axes(in_axes, "in_axes")
    _check_axes(out_axes, "out_axes")

    def spec(ax: Any) -> PartitionSpec:
        return PartitionSpec() if ax is None else PartitionSpec(axis_name)

    def is_none(x: Any) -> bool:
        return x is None

    @functools.wraps(f)
    def mapped(*args: Any) -> Any:
        m = get_mesh()
        if m is None:
            raise ValueError("smap: the context mesh cannot be empty: call it under "
                             "funcgrad.sharding.set_mesh(mesh)")
        if axis_name not in m.axis_names:
            raise ValueError(f"smap: axis_name {axis_name!r} is not an axis of the mesh {m}")
        prefix = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
        if len(prefix) != len(args):
            raise ValueError(f"smap: in_axes has {len(prefix)} entries, but the function was "
                             f"called with {len(args)} positional arguments")
        leaves, treedef = tree_util.tree_flatten(args)
        try:
            axes = tree_util.broadcast_prefix(prefix, args, is_leaf=is_none)
        except ValueError as e:
            raise ValueError(f"smap: in_axes must be a prefix of the arguments: {e}") from None
        specs = []
        for x, ax in zip(leaves, axes):
            if ax is None:
                specs.append(PartitionSpec())
                continue
            nd = len(get_aval(x).shape)
            if not -nd <= ax < nd:
                raise ValueError(f"smap: in_axes={ax} is out of range for an argument of "
                                 f"rank {nd} (shape {tuple(get_aval(x).shape)})")
            specs.append(PartitionSpec(*([None] * (ax % nd)), axis_name))

        def body(*blocks: Any) -> Any:
            # An output mapped at axis k goes out with that axis first (shard_map stacks the
            # blocks along it) and is moved back to k after: negative k counts from the end.
            out = f(*blocks)
            outs = tree_util.broadcast_prefix(out_axes, out, is_leaf=is_none)
            flat, out_tree = tree_util.tree_flatten(out)
            return tree_util.tree_unflatten(out_tree, [
                o if ax is None else _shape.moveaxis(o, ax, 0) for o, ax in zip(flat, outs)])

        out_specs = tree_util.tree_map(spec, out_axes, is_leaf=is_none)
        res = shard_map(body, mesh=m, in_specs=tree_util.tree_unflatten(treedef, specs),
                        out_specs=out_specs, axis_names=frozenset((axis_name,)))(*args)
        outs = tree_util.broadcast_prefix(out_axes, res, is_leaf=is_none)
        flat, out_tree = tree_util.tree_flatten(res)
        return tree_util.tree_unflatten(out_tree, [
            o if ax is None else _shape.moveaxis(o, 0, ax) for o, ax in zip(flat, outs)])

    return mapped

