"""``vmap``: vectorizing map over a batch axis, pytrees in and out.

The arguments are flattened to leaves, each leaf gets its axis from the ``in_axes`` prefix,
the flat function runs under a :class:`~funcgrad.interpreters.batching.BatchTrace`, and each
output leaf has its batch axis moved to (or, when it does not depend on the batch, broadcast
into) the position ``out_axes`` asks for. ``chunk_size`` evaluates the batch in slices to
bound peak memory: a Python loop over the slices when running eagerly, a ``scan`` over them
when staged (under ``jit``), so the compiled program holds one chunk's intermediates at a
time instead of the unrolled copies of every chunk.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from funcgrad._cache import LRUCache
from funcgrad.avals import get_aval
from funcgrad.backend import xp_for
from funcgrad.core import Tracer, _scalars_to_arrays, current_trace
from funcgrad.interpreters.batching import OneHotStructure, batch_flat
from funcgrad.interpreters.staging import staging_below
from funcgrad.ops import reductions as _red
from funcgrad.ops import shape as _shape
from funcgrad.ops.control_flow.scans import scan as _scan
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = ["vmap"]


# ---------------------------------------------------------------------------------------------
# Axis specs


def _is_axis(ax: Any) -> bool:
    if ax is None or type(ax) is int:
        return True
    return isinstance(ax, int | numpy.integer) and not isinstance(ax, bool)


def _check_spec(spec: Any, name: str) -> None:
    """Every leaf of an in_axes/out_axes prefix must be an int or None."""
    for path, leaf in tree_util.tree_flatten_with_path(spec, is_leaf=lambda x: x is None)[0]:
        if not _is_axis(leaf):
            raise TypeError(
                f"vmap: {name}{tree_util.keystr(path)} = {leaf!r} is not a valid axis: each "
                f"entry of {name} must be an int (negative counts from the end) or None "
                f"(not mapped), got {type(leaf).__name__}"
            )


def _is_plain_seq(x: Any) -> bool:
    return type(x) in (tuple, list)


def _describe(x: Any) -> str:
    if isinstance(x, dict):
        return f"a {type(x).__name__} with keys [{', '.join(sorted(map(repr, x)))}]"
    if isinstance(x, tuple | list):
        return f"a {type(x).__name__} of {len(x)} entries"
    if x is None:
        return "None"
    return f"a {type(x).__name__}"


def _children(x: Any) -> tuple[list[tuple[Any, Any]], Any]:
    """One level of pytree ``x``: ([(key, child)], treedef of that level)."""
    pairs, td = tree_util.tree_flatten_with_path(x, is_leaf=lambda y: y is not x)
    return [(p[0], c) for p, c in pairs], td


def _match_prefix(
    spec: Any, tree: Any, spec_name: str, tree_name: str, path: tuple, out: list
) -> None:
    """Append ``(key path, axis, spec path)`` for every leaf of ``tree`` (``spec`` a prefix).

    Lists and tuples match each other (as in JAX, where users mix them freely).
    """
    if _is_axis(spec):
        for p, _ in tree_util.tree_flatten_with_path(tree)[0]:
            out.append((path + p, spec, path))
        return
    where = tree_util.keystr(path)

    def mismatch(detail: str = "") -> ValueError:
        return ValueError(
            f"vmap: {spec_name}{where} is {_describe(spec)} but {tree_name}{where} is "
            f"{_describe(tree)}{detail}; {spec_name} must be a prefix of the structure of "
            f"{tree_name} (an int/None for a whole subtree, or a container of the same "
            "kind and size)"
        )

    if _is_plain_seq(spec):
        if not isinstance(tree, tuple | list):
            raise mismatch()
        if len(spec) != len(tree):
            raise mismatch(" (lengths differ)")
        for sub, (key, child) in zip(spec, _children(tree)[0]):
            _match_prefix(sub, child, spec_name, tree_name, path + (key,), out)
        return
    if isinstance(spec, dict):
        if not isinstance(tree, dict):
            raise mismatch()
        if set(spec) != set(tree):
            missing = sorted(map(repr, set(tree) - set(spec)))
            extra = sorted(map(repr, set(spec) - set(tree)))
            detail = []
            if missing:
                detail.append(f"{spec_name} lacks key(s) {', '.join(missing)}")
            if extra:
                detail.append(f"{tree_name} lacks key(s) {', '.join(extra)}")
            raise mismatch(" (" + "; ".join(detail) + ")")
        for key, child in _children(tree)[0]:
            _match_prefix(spec[key.key], child, spec_name, tree_name, path + (key,), out)
        return
    # Any other registered pytree node: same type and aux data, children by position.
    s_kids, s_td = _children(spec)
    t_kids, t_td = _children(tree)
    if s_td.node_data() is None:
        raise TypeError(
            f"vmap: {spec_name}{where} = {spec!r} is not a valid axis: each entry of "
            f"{spec_name} must be an int (negative counts from the end) or None"
        )
    if s_td != t_td:
        raise ValueError(
            f"vmap: {spec_name}{where} has structure {s_td} but {tree_name}{where} has "
            f"structure {t_td}; {spec_name} must be a prefix of {tree_name}"
        )
    for (_, sub), (key, child) in zip(s_kids, t_kids):
        _match_prefix(sub, child, spec_name, tree_name, path + (key,), out)


def _has_hidden_axes(x: Any) -> bool:
    # extended arrays (typed key arrays) are pytrees over data with trailing axes of their
    # own (a key's words), which in_axes/out_axes do not count: JAX's axes are the key array's
    return hasattr(type(x), "_trailing_ndim")


# treedef -> per leaf, how many trailing axes of its array are hidden (() when none are)
_HIDDEN_AXES: LRUCache = LRUCache(256)


def _hidden_axes(tree: Any, treedef: Any) -> tuple[int, ...]:
    """For each leaf of ``tree`` (flattened as ``treedef``), the trailing axes its array hides
    from vmap's axes; ``()`` when no leaf hides any (the common case, cached by structure)."""
    hit = _HIDDEN_AXES.get(treedef)
    if hit is None:
        counts: list[int] = []
        for x in tree_util.tree_leaves(tree, is_leaf=_has_hidden_axes):
            if _has_hidden_axes(x):
                counts += [type(x)._trailing_ndim] * len(tree_util.tree_leaves(x))
            else:
                counts.append(0)
        hit = tuple(counts) if any(counts) else ()
        _HIDDEN_AXES[treedef] = hit
    return hit


def _normalize_axis(ax: int, ndim: int, spec_where: str, what: str, shape: Any) -> int:
    if not -ndim <= ax < ndim:
        if ndim == 0:
            valid = "it has no axis to map (use None for it, or pass an array)"
        else:
            valid = f"valid axes are {-ndim}..{ndim - 1}"
        raise ValueError(
            f"vmap: {spec_where}={ax} is out of range for {what} of rank {ndim} "
            f"(shape {tuple(shape)}); {valid}"
        )
    return int(ax) % ndim


# ---------------------------------------------------------------------------------------------
# vmap


def vmap(
    fun: Callable[..., Any],
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_name: Any = None,
    axis_size: int | None = None,
    spmd_axis_name: Any = None,
    sum_match: bool = False,
    chunk_size: int | None = None,
) -> Callable[..., Any]:
    """Vectorize ``fun`` over a batch axis of its arguments.

    ``vmap(f)(xs)`` computes ``stack([f(x) for x in xs])``, but runs each operation once on
    the whole batch.

    Args:
        fun: the function to map; takes and returns pytrees of arrays.
        in_axes: the batch axis of each argument: an int (negative counts from the end) or
            None (not mapped: the same value for every example) for all positional arguments,
            or a tuple (or list) with one entry per positional argument, where each entry may
            itself be a prefix of that argument's pytree (a dict for a dict argument...).
            Keyword arguments are always mapped over axis 0.
        out_axes: where the batch axis goes in each output (a prefix of the output pytree).
            None returns an output that does not depend on the batch once, unbatched (an error
            for one that does); with an int, such outputs are broadcast along the batch axis.
        axis_name: a name for the batch axis (recorded on the trace, for collectives).
        axis_size: the batch size; needed when no argument is mapped, checked otherwise.
        spmd_axis_name: accepted as JAX's, which uses it to shard the batch axis over a
            device mesh; one process's arrays are not sharded, so results are the same.
        sum_match: as JAX's: an output whose ``out_axes`` is None but that depends on the
            batch is summed over the batch axis (instead of an error). Such a call is not
            chunked (``chunk_size`` is then ignored).
        chunk_size: evaluate the batch in chunks of at most this many examples (the last one
            may be smaller) and concatenate the results, bounding peak memory. Results are
            the same; works under grad/jvp too. Not applied with an ``axis_name``: the
            collectives over a named axis need every example at once. (The parameters before it are JAX's, in
            JAX's order.)

    Returns:
        The batched function, taking the same arguments as ``fun`` with batch axes added.

    Example:
        >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
        >>> funcgrad.vmap(lambda r: fnp.sum(r * r))(np.arange(6.0).reshape(2, 3)).tolist()
        [5.0, 50.0]
        >>> funcgrad.vmap(lambda a, b: a * b, in_axes=(1, None))(np.ones((2, 3)), 2.0).shape
        (3, 2)
    """
    if not callable(fun):
        raise TypeError(f"vmap: the first argument must be a function, got {type(fun).__name__}")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    _check_spec(in_axes, "in_axes")
    _check_spec(out_axes, "out_axes")
    if isinstance(in_axes, dict):
        raise TypeError(
            "vmap: in_axes must be an int, None, or a tuple with one entry per positional "
            "argument; got a dict. For a function of one dict argument, write "
            "in_axes=({...},)."
        )
    if axis_size is not None and (
        not isinstance(axis_size, int | numpy.integer) or isinstance(axis_size, bool)
        or axis_size < 0
    ):
        raise TypeError(f"vmap: axis_size must be a non-negative int or None, got {axis_size!r}")
    if chunk_size is not None and (
        not isinstance(chunk_size, int | numpy.integer) or isinstance(chunk_size, bool)
        or chunk_size < 1
    ):
        raise TypeError(f"vmap: chunk_size must be a positive int or None, got {chunk_size!r}")
    del spmd_axis_name  # a sharding annotation: no sharding here, nothing changes
    if not isinstance(sum_match, bool | numpy.bool_):
        raise TypeError(f"vmap: sum_match must be a bool, got {sum_match!r}")
    if sum_match:
        # A chunk's sum is part of the total: summing over chunks is not what chunking does.
        chunk_size = None

    return _vmapped(fun, in_axes, out_axes, axis_size, chunk_size, axis_name, None,
                    bool(sum_match))


def vmap_basis(
    fun: Callable[..., Any],
    out_axes: Any,
    axis_size: int,
    chunk_size: int | None,
    structs: Sequence[OneHotStructure | None],
) -> Callable[..., Any]:
    """``vmap(fun, 0, out_axes, axis_size, chunk_size)`` for arrays that are rows of an identity
    basis (jacfwd, jacrev, hessian): ``structs[i]`` describes positional argument ``i``
    (a :class:`~funcgrad.interpreters.batching.OneHotStructure`, or None for a dense one).
    The structure is said, never found by looking at values; it is used where no chunking
    splits the basis."""
    return _vmapped(fun, 0, out_axes, axis_size, chunk_size, None, list(structs))


def _vmapped(fun: Callable[..., Any], in_axes: Any, out_axes: Any, axis_size: int | None,
             chunk_size: int | None, axis_name: Any,
             structs: list[OneHotStructure | None] | None,
             sum_match: bool = False) -> Callable[..., Any]:
    # args treedef -> (axis per leaf, in_axes path per leaf): matching a prefix depends only on
    # the structure, so repeated calls skip it.
    prefix_cache: dict[Any, tuple[list, list]] = {}

    @functools.wraps(fun)
    def vmapped(*args: Any, **kwargs: Any) -> Any:
        vals, dims, in_tree, n = _flatten_args(args, kwargs, in_axes, axis_size, prefix_cache,
                                               fun)
        # A named axis is not chunked: its collectives (psum, pmean, all_gather, axis_size)
        # reduce over every example, which a chunk does not hold.
        if chunk_size is not None and n > chunk_size and axis_name is None:
            # Staged, a loop over chunks must be a loop in the program.
            chunked = _scanned_chunks if staging_below(current_trace()) else _chunked_call
            return chunked(fun, in_tree, vals, dims, n, out_axes, axis_name, int(chunk_size))
        out_leaves, out_tree, _ = _call(fun, in_tree, vals, dims, n, out_axes, axis_name,
                                        structs, sum_match)
        return tree_util.tree_unflatten(out_tree, out_leaves)

    return vmapped


def _positional_names(fun: Any, n: int) -> list[str]:
    """How errors name positional argument ``i`` of ``fun``: "argument <parameter name>"
    from its signature (JAX's wording; ``rest[k]`` for the k-th of ``*rest``), else
    ``args[i]``."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    names: list[str] = []
    for p in params:
        if p.kind is p.VAR_POSITIONAL:
            names += [f"argument {p.name}[{k}]" for k in range(n - len(names))]
        elif p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(f"argument {p.name}")
        if len(names) >= n:
            break
    return names[:n] + [f"args[{i}]" for i in range(len(names), n)]


def _flatten_args(
    args: tuple, kwargs: dict, in_axes: Any, axis_size: int | None, cache: dict,
    fun: Any = None,
) -> tuple[list[Any], list[int | None], Any, int]:
    """Leaves of (args, kwargs), their normalized batch dims, (args treedef, number of args
    leaves, kwargs treedef or None), and the batch size. ``fun`` (when given) names the
    arguments in errors."""
    if isinstance(in_axes, tuple) and len(in_axes) != len(args):
        raise ValueError(
            f"vmap: in_axes is a tuple of {len(in_axes)} entries but the function was called "
            f"with {len(args)} positional argument{'s' if len(args) != 1 else ''}; give one "
            "entry per positional argument (an int or None applies to all of them)"
        )
    vals, arg_tree = tree_util.tree_flatten(args)
    n_args = len(vals)
    if _is_axis(in_axes):
        axes = [in_axes] * n_args
    else:
        hit = cache.get(arg_tree)
        if hit is None:
            matched: list = []
            _match_prefix(in_axes, args, "in_axes", "args", (), matched)
            hit = ([m[1] for m in matched], [m[2] for m in matched])
            if len(cache) >= 64:
                cache.clear()
            cache[arg_tree] = hit
        axes = list(hit[0])
        spec_paths = hit[1]
    hidden = _hidden_axes(args, arg_tree)
    kw_tree = None
    if kwargs:
        kw_leaves, kw_tree = tree_util.tree_flatten(kwargs)
        vals += kw_leaves
        axes += [0] * len(kw_leaves)
        kw_hidden = _hidden_axes(kwargs, kw_tree)
        if hidden or kw_hidden:
            hidden = (hidden or (0,) * n_args) + (kw_hidden or (0,) * len(kw_leaves))
    in_tree = (arg_tree, n_args, kw_tree)

    def where(i: int) -> str:
        # Key paths are only needed for error messages: computed on demand.
        if i < n_args:
            path = tree_util.tree_leaves_with_path(args)[i][0]
            return (_positional_names(fun, len(args))[path[0].idx]
                    + tree_util.keystr(tuple(path[1:])))
        return "kwargs" + tree_util.keystr(
            tree_util.tree_leaves_with_path(kwargs)[i - n_args][0])

    dims: list[int | None] = []
    sizes: list[tuple[int, int, int]] = []
    for i, (x, ax) in enumerate(zip(vals, axes)):
        if ax is None:
            dims.append(None)
            continue
        try:
            shape = get_aval(x).shape
        except TypeError as e:
            raise TypeError(
                f"vmap: {where(i)} is mapped (axis {ax}) but is not an array: {e}"
            ) from None
        if hidden and hidden[i]:
            shape = shape[:len(shape) - hidden[i]]
        nd = len(shape)
        if -nd <= ax < nd:
            d = int(ax) % nd
        else:
            if i >= n_args:
                spec = "axis (keyword arguments are always mapped over axis 0)"
            elif _is_axis(in_axes):
                spec = "in_axes"
            else:
                spec = "in_axes" + tree_util.keystr(spec_paths[i])
            d = _normalize_axis(ax, nd, spec, where(i), shape)
        dims.append(d)
        sizes.append((i, shape[d], d))
    if axis_size is not None:
        n = int(axis_size)
    elif sizes:
        n = sizes[0][1]
    else:
        raise ValueError(
            "vmap: no argument is mapped (in_axes is None for every argument; the function "
            f"got {len(args)} positional and {len(kwargs)} keyword arguments), so the batch "
            "size is unknown. Map at least one argument with in_axes, or pass axis_size=N to "
            "evaluate the function for a batch of N examples that all see the same inputs."
        )
    for _, s, _ in sizes:
        if s != n:
            # JAX's wording and layout, one line per mapped axis (and the axis_size given).
            lines = [f"  * the `axis_size` argument was {n};"] if axis_size is not None else []
            lines += [f"  * one axis had size {s}: axis {d} of {where(i)} of type "
                      f"{get_aval(vals[i]).str_short()};" for i, s, d in sizes]
            raise ValueError("vmap got inconsistent sizes for array axes to be mapped:\n"
                             + "\n".join(lines)[:-1])
    return vals, dims, in_tree, n


def _call(
    fun: Callable[..., Any],
    in_tree: Any,
    vals: list[Any],
    dims: list[int | None],
    n: int,
    out_axes: Any,
    axis_name: Any,
    structs: list[OneHotStructure | None] | None = None,
    sum_match: bool = False,
) -> tuple[list[Any], Any, list[int | None]]:
    """One batched evaluation: output leaves placed per out_axes, treedef, their out axes
    (``sum_match``: a batched output with out axis None is summed over the batch)."""
    store: list = []

    def flat(*leaves: Any) -> list[Any]:
        arg_tree, n_args, kw_tree = in_tree
        a = arg_tree.unflatten(leaves[:n_args])
        out = fun(*a, **kw_tree.unflatten(leaves[n_args:])) if kw_tree else fun(*a)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        store.append((out_tree, _hidden_axes(out, out_tree)))
        return out_leaves

    outs, out_dims = batch_flat(flat, vals, dims, n, axis_name, structs)
    out_tree, hidden = store[0]
    if _is_axis(out_axes):
        o_axes = [out_axes] * len(outs)
        paths: list | None = None
    else:
        matched: list = []
        _match_prefix(out_axes, tree_util.tree_unflatten(out_tree, outs), "out_axes",
                      "the output", (), matched)
        o_axes = [m[1] for m in matched]
        paths = [m[0] for m in matched]
    results, final_axes = [], []
    for i, (o, d, oa) in enumerate(zip(outs, out_dims, o_axes)):
        if oa is None:
            if d is not None and sum_match:
                results.append(_red.reduce_sum(o, (d,)))
                final_axes.append(None)
                continue
            if d is not None:
                where = _out_where(out_tree, outs, paths, i)
                raise ValueError(
                    f"vmap: out_axes is None for output {where}, but that output depends on "
                    "the mapped axis (it differs between examples); give it an int out axis, "
                    "or make it independent of the batch"
                )
            # Results are arrays (as in JAX), on the batch's device, even a constant; a Python
            # number the function returned is given back as it is (as JAX does).
            results.append(o if type(o) in (bool, int, float, complex)
                           else _scalars_to_arrays([o], vals)[0])
            final_axes.append(None)
            continue
        try:
            aval = get_aval(o)
        except TypeError as e:
            where = _out_where(out_tree, outs, paths, i)
            raise TypeError(f"vmap: output {where} is not an array: {e}") from None
        rank = aval.ndim + (d is None) - (hidden[i] if hidden else 0)
        if -rank <= oa < rank:
            oa = int(oa) % rank
        else:
            shape = aval.shape if d is not None else (n,) + aval.shape
            shape = shape[:rank]
            where = _out_where(out_tree, outs, paths, i)
            _normalize_axis(oa, rank, "out_axes", f"output {where} (batch axis included)", shape)
        if d is None:
            o = _shape.broadcast_in_dim(
                o, aval.shape[:oa] + (n,) + aval.shape[oa:],
                tuple(j for j in range(aval.ndim + 1) if j != oa),
            )
        elif d != oa:
            o = _shape.moveaxis(o, d, oa)
        results.append(o)
        final_axes.append(oa)
    return results, out_tree, final_axes


def _out_where(out_tree: Any, outs: list[Any], paths: list | None, i: int) -> str:
    if paths is None:
        paths = [p for p, _ in tree_util.tree_flatten_with_path(
            tree_util.tree_unflatten(out_tree, outs))[0]]
    return "out" + tree_util.keystr(paths[i])


# ---------------------------------------------------------------------------------------------
# chunk_size


def _slice_axis(x: Any, axis: int, start: int, stop: int) -> Any:
    """``x[..., start:stop, ...]`` along ``axis``, differentiable when ``x`` is traced."""
    if isinstance(x, Tracer):
        return _shape.slice_in_dim(x, start, stop, axis=axis)
    # A concrete array: a basic-indexing view costs no copy.
    return x[(slice(None),) * axis + (slice(start, stop),)]


def _concat_axis(xs: list[Any], axis: int) -> Any:
    if len(xs) == 1:
        return xs[0]
    return _shape.concatenate(xs, axis)


def _chunked_call(
    fun: Callable[..., Any],
    in_tree: Any,
    vals: list[Any],
    dims: list[int | None],
    n: int,
    out_axes: Any,
    axis_name: Any,
    chunk: int,
) -> Any:
    out_tree = None
    o_axes: list[int | None] = []
    # Per output leaf: a preallocated array that concrete chunks are written into (so chunk
    # results are freed as we go: peak memory is one output plus one chunk), or a list of
    # traced pieces to concatenate with the differentiable primitive.
    acc: list[Any] = []
    for start in range(0, n, chunk):
        stop = min(start + chunk, n)
        sliced = [v if d is None else _slice_axis(v, d, start, stop) for v, d in zip(vals, dims)]
        outs, tree, axes = _call(fun, in_tree, sliced, dims, stop - start, out_axes, axis_name)
        if out_tree is None:
            out_tree, o_axes = tree, axes
            acc = [None] * len(outs)
        elif tree != out_tree:
            raise ValueError(
                f"vmap(chunk_size={chunk}): the function returned {tree} for one chunk and "
                f"{out_tree} for another; the output structure must not depend on the values"
            )
        for i, (o, ax) in enumerate(zip(outs, o_axes)):
            if ax is None:
                # out_axes=None outputs do not depend on the batch: every chunk gives the same.
                if start == 0:
                    acc[i] = o
                continue
            buf = acc[i]
            if isinstance(o, Tracer) or type(buf) is list:
                if buf is None:
                    acc[i] = [o]
                elif type(buf) is list:
                    buf.append(o)
                else:
                    acc[i] = [_slice_axis(buf, ax, 0, start), o]
                continue
            if buf is None:
                shape = list(o.shape)
                shape[ax] = n
                buf = acc[i] = xp_for(o).empty(tuple(shape), dtype=o.dtype)
            buf[(slice(None),) * ax + (slice(start, stop),)] = o
    results = [
        _concat_axis(a, ax) if type(a) is list else a for a, ax in zip(acc, o_axes)
    ]
    return tree_util.tree_unflatten(out_tree, results)


def _scanned_chunks(
    fun: Callable[..., Any],
    in_tree: Any,
    vals: list[Any],
    dims: list[int | None],
    n: int,
    out_axes: Any,
    axis_name: Any,
    chunk: int,
) -> Any:
    """``_chunked_call`` as a staged loop: the ``n // chunk`` full chunks are the steps of a
    ``scan`` (each step the vmapped function on one chunk), the remainder one more vmapped
    call; results are reassembled along their out axes. Unmapped values are closed over."""
    full = n // chunk * chunk
    mapped = [i for i, d in enumerate(dims) if d is not None]
    blocks = []
    for i in mapped:
        x = _shape.moveaxis(vals[i], dims[i], 0) if dims[i] else vals[i]
        x = _shape.slice_in_dim(x, 0, full, axis=0) if full < n else x
        blocks.append(_shape.reshape(x, (full // chunk, chunk) + tuple(get_aval(x).shape[1:])))
    front = [0 if d is not None else None for d in dims]
    store: list[Any] = []

    def step(carry: Any, block: list[Any]) -> tuple[Any, list[Any]]:
        args = list(vals)
        for i, b in zip(mapped, block):
            args[i] = b
        outs, tree, axes = _call(fun, in_tree, args, front, chunk, out_axes, axis_name)
        store.append((tree, axes))
        # Batch axes first, so the scan stacks chunks along the axis that follows.
        return carry, [o if ax is None else _shape.moveaxis(o, ax, 0) if ax else o
                       for o, ax in zip(outs, axes)]

    _, stacked = _scan(step, (), blocks, length=full // chunk)  # no mapped value: length
    out_tree, o_axes = store[-1]
    results = []
    for y, ax in zip(stacked, o_axes):
        shape = tuple(get_aval(y).shape)
        if ax is None:
            # Independent of the batch: every step gave the same value; keep the first.
            results.append(_shape.reshape(_shape.slice_in_dim(y, 0, 1, axis=0), shape[1:]))
            continue
        y = _shape.reshape(y, (full,) + shape[2:])
        results.append(_shape.moveaxis(y, 0, ax) if ax else y)
    if full < n:
        rest = [v if d is None else _slice_axis(v, d, full, n) for v, d in zip(vals, dims)]
        outs, tree, axes = _call(fun, in_tree, rest, dims, n - full, out_axes, axis_name)
        if tree != out_tree:
            raise ValueError(
                f"vmap(chunk_size={chunk}): the function returned {tree} for one chunk and "
                f"{out_tree} for another; the output structure must not depend on the values"
            )
        results = [r if ax is None else _shape.concatenate([r, o], ax)
                   for r, o, ax in zip(results, outs, o_axes)]
    return tree_util.tree_unflatten(out_tree, results)
