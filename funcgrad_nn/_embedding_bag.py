"""``embedding_bag``: sums, means or maxima of bags of embedding rows (re-exported by
``functional``). Bags are reduced by one matrix product with a (bags x indices) membership
matrix (sum, mean) or a masked max, dense operations whose derivatives are their own. The
matrix is computed from the offsets, which may be traced (bags under jit)."""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.core import is_tracer

__all__ = ["embedding_bag"]


def _membership(input: Any, offsets: Any, include_last_offset: bool, put: Any, fname: str
                ) -> tuple[Any, Any]:
    """Flat indices and the ``(bags, indices)`` membership mask. Offsets may be traced (the
    mask is then computed, not looked up), so bags work under jit; concrete offsets are
    checked as PyTorch does."""
    r = fnp.ndim(input)
    if r == 2:
        if offsets is not None:
            raise ValueError(f"{fname}: offsets must be None for a 2-D input (each row is a "
                             "bag)")
        b, n = fnp.shape(input)
        member = numpy.repeat(numpy.arange(b), n)[None, :] == numpy.arange(b)[:, None]
        return fnp.reshape(input, (b * n,)), put(member)
    if r != 1:
        raise ValueError(f"{fname}: expected input (B, N) or a 1-D input with offsets, got "
                         f"shape {tuple(fnp.shape(input))}")
    if offsets is None:
        raise ValueError(f"{fname}: a 1-D input needs offsets (the start of each bag)")
    if fnp.ndim(offsets) != 1:
        raise ValueError(f"{fname}: offsets must be 1-D, got shape "
                         f"{tuple(fnp.shape(offsets))}")
    length = fnp.shape(input)[0]
    if not is_tracer(offsets):
        off = numpy.asarray(funcgrad.to_numpy(offsets)).astype(numpy.int64)
        if off.size and (off[0] != 0 or (numpy.diff(off) < 0).any() or off[-1] > length):
            raise ValueError(f"{fname}: offsets must start at 0 and be non-decreasing and at "
                             f"most the input length {length}, got {off.tolist()}")
        offsets = put(off)
    k = fnp.shape(offsets)[0]
    offsets = offsets.astype(numpy.int64)
    # Bag b holds positions offsets[b] <= i < offsets[b + 1]; the last bag runs to the end
    # of the input, or (include_last_offset) to the last offset.
    if include_last_offset:
        starts, ends = offsets[:max(k - 1, 0)], offsets[1:]
    else:
        starts = offsets
        ends = fnp.concatenate([offsets[1:], fnp.full_like(offsets, length, shape=(1,))])
    pos = fnp.cumsum(fnp.ones_like(offsets, shape=(length,))) - 1
    member = (pos[None, :] >= starts[:, None]) & (pos[None, :] < ends[:, None])
    return input, member


def embedding_bag(input: Any, weight: Any, offsets: Any = None, max_norm: float | None = None,
                  norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                  mode: str = "mean", sparse: bool = False, per_sample_weights: Any = None,
                  include_last_offset: bool = False, padding_idx: int | None = None) -> Any:
    """Reduce bags of rows of ``weight``: ``input`` ``(B, N)`` (one bag per row) or 1-D with
    ``offsets`` (bag starts); ``mode`` 'sum', 'mean' or 'max'; ``per_sample_weights`` scales
    each row (mode 'sum'); ``padding_idx`` entries are left out (and not counted in 'mean');
    empty bags give zeros, as PyTorch.

    >>> import numpy as np
    >>> w = np.arange(6.0).reshape(3, 2)
    >>> embedding_bag(np.array([0, 2, 1]), w, np.array([0, 2]), mode="sum")
    array([[4., 6.],
           [2., 3.]])
    """
    fname = "embedding_bag"
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"{fname}: mode must be 'sum', 'mean' or 'max', got {mode!r}")
    if scale_grad_by_freq and mode == "max":  # (PyTorch's ValueError)
        raise ValueError(f"{fname}: max mode does not support scaling the gradient by the "
                         "frequency (scale_grad_by_freq=True)")
    if per_sample_weights is not None and mode != "sum":
        raise ValueError(f"{fname}: per_sample_weights are only supported with mode='sum', "
                         f"got mode={mode!r}")
    dev = funcgrad.avals.get_aval(weight).device
    put = (lambda a: a) if dev in (None, "cpu") else (lambda a: funcgrad.device_put(a, dev))
    flat, member = _membership(input, offsets, include_last_offset, put, fname)  # (B, L)
    from funcgrad_nn.functional import embedding
    rows = embedding(flat, weight, None, max_norm, norm_type, scale_grad_by_freq)  # (L, D)
    if padding_idx is not None:
        pidx = padding_idx % fnp.shape(weight)[0]
        member = member & (put(flat) != pidx)[None, :]
    dt = numpy.dtype(weight.dtype)
    if per_sample_weights is not None:
        if tuple(fnp.shape(per_sample_weights)) != tuple(fnp.shape(input)):
            raise ValueError(f"{fname}: per_sample_weights shape "
                             f"{tuple(fnp.shape(per_sample_weights))} must match input shape "
                             f"{tuple(fnp.shape(input))}")
        pdt = getattr(per_sample_weights, "dtype", None)
        if pdt is not None and numpy.dtype(pdt) != dt:
            from funcgrad_nn.module import BadInputError
            # PyTorch refuses it ("Expected tensor for argument #1 'weight' to have the same
            # type as ... 'per_sample_weights'"); NumPy would promote the bags silently.
            raise BadInputError(f"{fname}: per_sample_weights dtype {numpy.dtype(pdt)} does "
                                f"not match weight dtype {dt}. Fix: cast them, e.g. "
                                f"per_sample_weights.astype(np.{dt})")
        rows = rows * fnp.reshape(per_sample_weights, (-1, 1))
    if mode == "max":
        mask = member[:, :, None]
        lowest = fnp.full_like(rows, -numpy.inf, shape=())
        masked = fnp.where(mask, rows[None], lowest)                       # (B, L, D)
        # The first maximum in bag order (PyTorch's strict >), which alone gets the gradient.
        first = fnp.argmax(funcgrad.stop_gradient(masked), axis=1, keepdims=True)
        best = fnp.take_along_axis(masked, first, axis=1)[:, 0]
        empty = ~fnp.any(member, axis=1)[:, None]
        return fnp.where(empty, fnp.zeros_like(best, shape=()), best)
    m = member.astype(dt)
    if mode == "mean":
        m = m / fnp.maximum(fnp.sum(m, axis=1, keepdims=True), 1)
    return fnp.matmul(m, rows)
