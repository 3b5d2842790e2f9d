"""``jax.lax``'s collectives that compose the primitive ones of ``ops/collectives.py``:
``ragged_all_to_all`` (every member gathers what is sent to it and writes it with a masked
gather, so it batches, differentiates and runs under ``vmap``/``shard_map``/``spmd`` as the
collectives it is made of do)."""

from __future__ import annotations

from typing import Any

import funcgrad.numpy as fnp
from funcgrad.errors import ShapeError
from funcgrad.lax._common import aval_of, check_kind
from funcgrad.ops.collectives import all_gather, axis_index, axis_size

Array = Any

__all__ = ["ragged_all_to_all"]


def ragged_all_to_all(operand: Array, output: Array, input_offsets: Array, send_sizes: Array,
                      output_offsets: Array, recv_sizes: Array, *, axis_name: Any,
                      axis_index_groups: Any = None) -> Array:
    """``jax.lax.ragged_all_to_all``: the ragged :func:`all_to_all`. Each member sends the
    rows ``operand[input_offsets[i]:input_offsets[i] + send_sizes[i]]`` to member
    ``i // (K // axis_size)`` (``K = len(input_offsets)``), which writes them into its
    ``output`` at the *sender's* ``output_offsets[i]``; the receiver's ``recv_sizes`` (in
    sender order, ``K // axis_size`` per sender) say how many rows each slice has. Rows no
    slice covers keep ``output``'s values; where slices overlap the later one wins, as the
    sends are ordered. Differentiable in ``operand`` and ``output``.

    Example:
        >>> import numpy as np, funcgrad
        >>> from funcgrad import lax
        >>> f = funcgrad.vmap(lambda *a: lax.ragged_all_to_all(*a, axis_name="i"),
        ...                   axis_name="i")
        >>> i32 = lambda *r: np.array(r, np.int32)
        >>> f(np.array([[1.0, 2, 2], [3, 4, 0]]), np.zeros((2, 4)), i32([0, 1], [0, 1]),
        ...   i32([1, 2], [1, 1]), i32([0, 0], [1, 2]), i32([1, 1], [2, 1])).tolist()
        [[1.0, 3.0, 0.0, 0.0], [2.0, 2.0, 4.0, 0.0]]
    """
    name = "ragged_all_to_all"
    if axis_index_groups is not None:
        raise ValueError(f"lax.{name}: axis_index_groups is not supported (funcgrad's "
                         "collectives run over the whole named axis); split the groups into "
                         "an outer named axis instead")
    oa, ua = aval_of(name, operand, "operand"), aval_of(name, output, "output")
    if oa.ndim < 1 or ua.ndim < 1 or oa.shape[1:] != ua.shape[1:]:
        raise ShapeError(f"lax.{name}: operand and output must have a leading (ragged) axis "
                         f"and equal trailing shapes, got {oa.shape} and {ua.shape}")
    if oa.dtype != ua.dtype:
        raise TypeError(f"lax.{name}: operand and output must have one dtype, got {oa.dtype} "
                        f"and {ua.dtype}")
    lengths = set()
    for what, v in (("input_offsets", input_offsets), ("send_sizes", send_sizes),
                    ("output_offsets", output_offsets), ("recv_sizes", recv_sizes)):
        a = aval_of(name, v, what)
        check_kind(name, a, "iu", what)
        if a.ndim != 1:
            raise ShapeError(f"lax.{name}: {what} must be 1-D, got shape {a.shape}")
        lengths.add(a.shape[0])
    if len(lengths) != 1:
        raise ShapeError(f"lax.{name}: input_offsets, send_sizes, output_offsets and "
                         f"recv_sizes must have one length, got lengths {sorted(lengths)}")
    k = lengths.pop()
    n = axis_size(axis_name)
    if k % n:
        raise ShapeError(f"lax.{name}: the number of slices ({k}) must be a multiple of the "
                         f"size of axis {axis_name!r} ({n})")
    s = k // n
    dev = ua.device  # the index arrays go where the data is (host data stays on the host)
    me = axis_index(axis_name)
    # What every sender holds; the s slices each sends here are its slices me*s ... me*s+s-1.
    # (n*N, ...): every sender's rows, one after the other (a plain array under vmap: the
    # gathered value is the same on every member; indexed with fnp.take for that reason)
    rows = fnp.reshape(all_gather(operand, axis_name), (n * oa.shape[0],) + oa.shape[1:])
    mine = me * s + fnp.arange(s, device=dev)
    starts = fnp.take(all_gather(input_offsets, axis_name), mine, axis=1).reshape(-1)
    dests = fnp.take(all_gather(output_offsets, axis_name), mine, axis=1).reshape(-1)
    sizes = fnp.asarray(recv_sizes)                                     # (n*s,), sender order
    r = fnp.arange(ua.shape[0], device=dev)[None, :]                    # output rows
    covers = (dests[:, None] <= r) & (r < (dests + sizes)[:, None])      # (n*s, M)
    # the last slice covering a row wins (sends are applied in order)
    which = fnp.max(fnp.where(covers, fnp.arange(k, device=dev)[:, None], -1), axis=0)
    hit = which >= 0
    c = fnp.maximum(which, 0)
    src_row = fnp.clip(fnp.take(starts, c) + r[0] - fnp.take(dests, c), 0, oa.shape[0] - 1)
    got = fnp.take(rows, (c // s) * oa.shape[0] + src_row, axis=0)     # (M, ...)
    mask = hit.reshape(hit.shape + (1,) * (ua.ndim - 1))
    return fnp.where(mask, got, output)
