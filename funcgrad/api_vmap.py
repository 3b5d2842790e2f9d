"""``vmap``: vectorizing map over a batch axis, pytrees in and out."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from funcgrad import tree_util
from funcgrad.avals import get_aval
from funcgrad.interpreters.batching import batch_flat
from funcgrad.ops import shape as _shape

__all__ = ["vmap"]


def _normalize_axis(ax: Any, ndim: int, what: str) -> int | None:
    if ax is None:
        return None
    if not isinstance(ax, int):
        raise TypeError(f"vmap: {what}: axis must be an int or None, got {ax!r}")
    if not -ndim <= ax < ndim:
        raise ValueError(
            f"vmap: {what} has rank {ndim}, so in_axes={ax} is out of range "
            f"[-{ndim}, {ndim})"
        )
    return ax % ndim


def vmap(
    fun: Callable[..., Any],
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_size: int | None = None,
) -> Callable[..., Any]:
    """Vectorize ``fun`` over axis ``in_axes`` of its arguments.

    Example:
        >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
        >>> funcgrad.vmap(lambda r: fnp.sum(r * r))(np.arange(6.0).reshape(2, 3)).tolist()
        [5.0, 50.0]
    """

    @functools.wraps(fun)
    def batched(*args: Any) -> Any:
        axes = in_axes
        if isinstance(axes, list):
            axes = tuple(axes)
        if not isinstance(axes, tuple) or len(args) == 1 and not isinstance(in_axes, tuple):
            axes = (axes,) * len(args) if not isinstance(axes, tuple) else axes
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                f"vmap: in_axes has {len(in_axes)} entries but the function got "
                f"{len(args)} positional arguments"
            )
        leaves_with_path, in_tree = tree_util.tree_flatten_with_path(args)
        try:
            ax_leaves = tree_util.broadcast_prefix(axes, args)
        except ValueError as e:
            raise ValueError(f"vmap: in_axes {in_axes!r} does not match the arguments: {e}") from e
        vals, dims, sizes = [], [], []
        for (path, x), ax in zip(leaves_with_path, ax_leaves):
            where = f"argument {tree_util.keystr(path)}"
            d = _normalize_axis(ax, get_aval(x).ndim, where)
            vals.append(x)
            dims.append(d)
            if d is not None:
                sizes.append((where, get_aval(x).shape[d]))
        n = axis_size
        if n is None:
            if not sizes:
                raise ValueError("vmap: no argument is mapped; give axis_size")
            n = sizes[0][1]
        if any(s != n for _, s in sizes):
            detail = ", ".join(f"{w} has size {s}" for w, s in sizes)
            raise ValueError(f"vmap: mapped axes have inconsistent sizes: {detail}")
        store: list = []

        def flat(*leaves: Any) -> list[Any]:
            out = fun(*tree_util.tree_unflatten(in_tree, list(leaves)))
            out_leaves, out_tree = tree_util.tree_flatten(out)
            store.append(out_tree)
            return out_leaves

        outs, out_dims = batch_flat(flat, vals, dims, n)
        out_tree = store[0]
        out_ax = tree_util.broadcast_prefix(
            out_axes, tree_util.tree_unflatten(out_tree, outs)
        )
        results = []
        for o, d, oa in zip(outs, out_dims, out_ax):
            if oa is None:
                if d is not None:
                    raise ValueError(
                        "vmap: out_axes=None but the output depends on the mapped axis"
                    )
                results.append(o)
                continue
            nd = get_aval(o).ndim + (d is None)
            oa = _normalize_axis(oa, nd, "output")
            if d is None:
                a = get_aval(o)
                o = _shape.broadcast_in_dim(
                    o, (n,) + a.shape, tuple(range(1, a.ndim + 1))
                )
                d = 0
            results.append(_shape.moveaxis(o, d, oa))
        return tree_util.tree_unflatten(out_tree, results)

    return batched
