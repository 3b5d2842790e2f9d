"""``embedding_bag``: sums, means or maxima of bags of embedding rows (re-exported by
``functional``). Bags are reduced by one matrix product with a (bags x indices) membership
matrix (sum, mean) or a masked max, dense operations whose derivatives are their own."""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.core import concrete_or_error

__all__ = ["embedding_bag"]


def _bag_ids(input: Any, offsets: Any, include_last_offset: bool, fname: str
             ) -> tuple[Any, numpy.ndarray, int]:
    """Flat indices, the bag of each index (host int array) and the number of bags."""
    r = fnp.ndim(input)
    if r == 2:
        if offsets is not None:
            raise ValueError(f"{fname}: offsets must be None for a 2-D input (each row is a "
                             "bag)")
        b, n = fnp.shape(input)
        return fnp.reshape(input, (-1,)), numpy.repeat(numpy.arange(b), n), b
    if r != 1:
        raise ValueError(f"{fname}: expected input (B, N) or a 1-D input with offsets, got "
                         f"shape {tuple(fnp.shape(input))}")
    if offsets is None:
        raise ValueError(f"{fname}: a 1-D input needs offsets (the start of each bag)")
    off = numpy.asarray(funcgrad.to_numpy(concrete_or_error(
        offsets, f"{fname}: offsets (the bag structure must be concrete)"))).astype(numpy.int64)
    if off.ndim != 1:
        raise ValueError(f"{fname}: offsets must be 1-D, got shape {off.shape}")
    length = fnp.shape(input)[0]
    if off.size and (off[0] != 0 or (numpy.diff(off) < 0).any() or off[-1] > length):
        raise ValueError(f"{fname}: offsets must start at 0 and be non-decreasing and at most "
                         f"the input length {length}, got {off.tolist()}")
    nb = off.size - 1 if include_last_offset else off.size
    if include_last_offset:
        length = int(off[-1]) if off.size else 0
    bags = numpy.searchsorted(off[:nb], numpy.arange(fnp.shape(input)[0]), side="right") - 1
    bags = numpy.where(numpy.arange(fnp.shape(input)[0]) < length, bags, -1)
    return input, bags, max(nb, 0)


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
    if per_sample_weights is not None and mode != "sum":
        raise ValueError(f"{fname}: per_sample_weights are only supported with mode='sum', "
                         f"got mode={mode!r}")
    flat, bags, nb = _bag_ids(input, offsets, include_last_offset, fname)
    from funcgrad_nn.functional import embedding
    rows = embedding(flat, weight, None, max_norm, norm_type, scale_grad_by_freq)  # (L, D)
    keep = bags >= 0
    if padding_idx is not None:
        num = fnp.shape(weight)[0]
        pidx = padding_idx % num
        hv = numpy.asarray(funcgrad.to_numpy(concrete_or_error(
            flat, f"{fname}: input with padding_idx")))
        keep = keep & (hv != pidx)
    member = (bags[None, :] == numpy.arange(nb)[:, None]) & keep[None, :]   # (B, L), host
    dt = numpy.dtype(weight.dtype)
    if per_sample_weights is not None:
        if tuple(fnp.shape(per_sample_weights)) != tuple(fnp.shape(input)):
            raise ValueError(f"{fname}: per_sample_weights shape "
                             f"{tuple(fnp.shape(per_sample_weights))} must match input shape "
                             f"{tuple(fnp.shape(input))}")
        rows = rows * fnp.reshape(per_sample_weights, (-1, 1))
    dev = funcgrad.avals.get_aval(weight).device
    put = (lambda a: a) if dev in (None, "cpu") else (lambda a: funcgrad.device_put(a, dev))
    if mode == "max":
        mask = put(member[:, :, None])
        lowest = fnp.full_like(rows, -numpy.inf, shape=())
        masked = fnp.where(mask, rows[None], lowest)                       # (B, L, D)
        # The first maximum in bag order (PyTorch's strict >), which alone gets the gradient.
        first = fnp.argmax(funcgrad.stop_gradient(masked), axis=1, keepdims=True)
        best = fnp.take_along_axis(masked, first, axis=1)[:, 0]
        empty = put(~member.any(axis=1)[:, None])
        return fnp.where(empty, fnp.zeros_like(best, shape=()), best)
    m = member.astype(dt)
    if mode == "mean":
        m = m / numpy.maximum(member.sum(axis=1, keepdims=True), 1).astype(dt)
    return fnp.matmul(put(m), rows)
