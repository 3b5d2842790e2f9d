"""``torch.nn.attention.flex_attention``: attention whose scores a Python function modifies
(``score_mod(score, b, h, q_idx, kv_idx)``) and whose mask a Python function says
(``mask_mod(b, h, q_idx, kv_idx)``, given through :func:`create_block_mask`).

The functions see one score and scalar indices, as PyTorch's (which vmaps them); here they
are vmapped over every (batch, head, query, key) position with :func:`funcgrad.vmap` and
the attention is computed densely, so the values and gradients are PyTorch's (its fused
kernels only skip the blocks the mask empties). A :class:`BlockMask` is PyTorch's: block
lists (``kv_num_blocks``, ``kv_indices``, ``full_kv_*``, ``q_*``), :meth:`BlockMask.from_kv_blocks`,
slicing, ``to_dense()``, ``to_string()``, ``sparsity()``, ``as_tuple()``; a position counts
when its block is full, or partial and ``mask_mod`` keeps it (the meaning of PyTorch's
compiled kernels; PyTorch's uncompiled fallback applies ``mask_mod`` alone).

>>> import numpy as np
>>> from funcgrad_nn.attention.flex_attention import create_block_mask, flex_attention
>>> def causal(b, h, q_idx, kv_idx):
...     return q_idx >= kv_idx
>>> q = np.ones((1, 1, 3, 2))
>>> v = np.arange(6.0).reshape(1, 1, 3, 2)
>>> bm = create_block_mask(causal, None, None, 3, 3)
>>> flex_attention(q, q, v, block_mask=bm)[0, 0]
array([[0., 1.],
       [1., 2.],
       [2., 3.]])
"""

from __future__ import annotations

import copy
import inspect
import itertools
import math
from collections.abc import Callable
from typing import Any, NamedTuple, TypedDict

import numpy

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.backend import device_of
from funcgrad.core import is_tracer
from funcgrad.errors import TracerArrayConversionError, TracerIntegerConversionError
from funcgrad.scipy.special import logsumexp

__all__ = ["AuxOutput", "AuxRequest", "BlockMask", "FlexKernelOptions", "and_masks",
           "create_block_mask", "create_mask", "flex_attention", "noop_mask", "or_masks"]

_DEFAULT_BLOCK = 128  # PyTorch's default BLOCK_SIZE


class FlexKernelOptions(TypedDict, total=False):
    """PyTorch's kernel tuning knobs (block sizes, warps, ...): accepted and unused, as the
    dense computation here has nothing to tune."""


class AuxRequest(NamedTuple):
    """Which extra outputs :func:`flex_attention` returns (``return_aux=``)."""

    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """The extra outputs :func:`flex_attention` computed: ``lse`` (the log-sum-exp of each
    query's modified scores, natural log) and ``max_scores`` (their maximum), ``(B, H, L)``."""

    lse: Any = None
    max_scores: Any = None


def noop_mask(b: Any, h: Any, q_idx: Any, kv_idx: Any) -> Any:
    """The mask that keeps every position.

    >>> bool(noop_mask(0, 0, 1, 2))
    True
    """
    return fnp.ones((), bool)


def and_masks(*mask_mods: Callable[..., Any]) -> Callable[..., Any]:
    """A mask_mod keeping the positions every one of ``mask_mods`` keeps.

    >>> m = and_masks(lambda b, h, q, k: q >= k, lambda b, h, q, k: k > 0)
    >>> create_mask(m, 1, 1, 2, 2)[0, 0]
    array([[False, False],
           [False,  True]])
    """
    if not all(callable(m) for m in mask_mods):
        raise TypeError(f"and_masks: every mask_mod must be callable, got {mask_mods}")

    def and_mask(b: Any, h: Any, q_idx: Any, kv_idx: Any) -> Any:
        out = fnp.ones((), bool)
        for m in mask_mods:
            out = out & m(b, h, q_idx, kv_idx)
        return out

    return and_mask


def or_masks(*mask_mods: Callable[..., Any]) -> Callable[..., Any]:
    """A mask_mod keeping the positions any one of ``mask_mods`` keeps.

    >>> m = or_masks(lambda b, h, q, k: q == k, lambda b, h, q, k: k == 0)
    >>> create_mask(m, 1, 1, 2, 3)[0, 0]
    array([[ True, False, False],
           [ True,  True, False]])
    """
    if not all(callable(m) for m in mask_mods):
        raise TypeError(f"or_masks: every mask_mod must be callable, got {mask_mods}")

    def or_mask(b: Any, h: Any, q_idx: Any, kv_idx: Any) -> Any:
        out = fnp.zeros((), bool)
        for m in mask_mods:
            out = out | m(b, h, q_idx, kv_idx)
        return out

    return or_mask


def _over_positions(fn: Callable[..., Any], score: Any, B: int, H: int, L: int, S: int,
                    device: Any) -> Any:
    # fn on every (b, h, q, kv) position with scalar indices (PyTorch vmaps its mods the
    # same way), batched innermost-first: kv, then q, h, b.
    try:
        return _vmapped_positions(fn, score, B, H, L, S, device)
    except (TracerArrayConversionError, TracerIntegerConversionError):
        # A captured NumPy array indexed by a position (PyTorch's bias[h, q_idx, kv_idx],
        # document_id[q_idx]) cannot take a traced scalar: give the positions as broadcast
        # concrete index arrays instead, which NumPy indexing takes (the same values for
        # the position-wise functions mods are).
        return _broadcast_positions(fn, score, B, H, L, S)


def _vmapped_positions(fn: Callable[..., Any], score: Any, B: int, H: int, L: int, S: int,
                       device: Any) -> Any:
    idx = [fnp.arange(n, dtype=numpy.int64) for n in (B, H, L, S)]
    if device not in (None, "cpu"):
        idx = [funcgrad.device_put(i, device) for i in idx]
    if score is None:
        f = fn
        for axis in (3, 2, 1, 0):
            f = funcgrad.vmap(f, in_axes=tuple(0 if i == axis else None for i in range(4)))
        out = f(*idx)
    else:
        f = fn
        for axis in (3, 2, 1, 0):
            f = funcgrad.vmap(f, in_axes=(0,) + tuple(0 if i == axis else None
                                                      for i in range(4)))
        out = f(score, *idx)
    return fnp.broadcast_to(out, (B, H, L, S))


def _broadcast_positions(fn: Callable[..., Any], score: Any, B: int, H: int, L: int,
                         S: int) -> Any:
    idx = [numpy.arange(n, dtype=numpy.int64).reshape([n if i == axis else 1
                                                       for i in range(4)])
           for axis, n in enumerate((B, H, L, S))]
    out = fn(*idx) if score is None else fn(score, *idx)
    return fnp.broadcast_to(out, (B, H, L, S))


def _is_score_mod(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) == 5


def create_mask(mod_fn: Callable[..., Any], B: int | None, H: int | None, Q_LEN: int,
                KV_LEN: int, device: Any = None) -> Any:
    """The dense ``(B, H, Q_LEN, KV_LEN)`` bool mask of a mask_mod (or of a score_mod: the
    positions it does not set to -inf); ``B``/``H`` of None mean 1.

    >>> create_mask(lambda b, h, q, k: q >= k, None, None, 2, 3)
    array([[[[ True, False, False],
             [ True,  True, False]]]])
    """
    B, H = 1 if B is None else int(B), 1 if H is None else int(H)
    if _is_score_mod(mod_fn):
        zeros = fnp.zeros((B, H, Q_LEN, KV_LEN))
        if device not in (None, "cpu"):
            zeros = funcgrad.device_put(zeros, device)
        return ~fnp.isneginf(_over_positions(mod_fn, zeros, B, H, Q_LEN, KV_LEN, device))
    mask = _over_positions(mod_fn, None, B, H, Q_LEN, KV_LEN, device)
    if numpy.dtype(mask.dtype) != numpy.bool_:
        raise TypeError(f"create_mask: a mask_mod must return a bool, got {mask.dtype}")
    return mask


def _dense_to_ordered(dense: Any) -> tuple[numpy.ndarray, numpy.ndarray]:
    # PyTorch's _dense_to_ordered: the count of kept blocks per row, and the block indices
    # with the kept ones first (each group in ascending order).
    dense = numpy.asarray(dense).astype(numpy.int32)
    num = dense.sum(-1).astype(numpy.int32)
    order = numpy.argsort(-dense, axis=-1, kind="stable")
    return num, order.astype(numpy.int32)


def _ordered_to_dense(num: numpy.ndarray, indices: numpy.ndarray, num_cols: int
                      ) -> numpy.ndarray:
    # PyTorch's _ordered_to_dense: 1 at the first num[row] indices of each row.
    dense = numpy.zeros(indices.shape[:-1] + (num_cols + 1,), numpy.int32)
    keep = numpy.arange(indices.shape[-1]) < num[..., None]
    # (dropped entries are written one column past the end, then cut off, as PyTorch)
    numpy.put_along_axis(dense, numpy.where(keep, indices, num_cols).astype(numpy.intp), 1,
                         axis=-1)
    return dense[..., :num_cols]


def _transpose_ordered(num: numpy.ndarray, indices: numpy.ndarray
                       ) -> tuple[numpy.ndarray, numpy.ndarray]:
    dense = _ordered_to_dense(num, indices, indices.shape[-1])
    return _dense_to_ordered(numpy.swapaxes(dense, -1, -2))


def _host_blocks(x: Any, name: str) -> numpy.ndarray | None:
    if x is None:
        return None
    out = numpy.asarray(funcgrad.device_get(x))
    if out.dtype.kind not in "iu":
        raise TypeError(f"BlockMask: {name} must be an integer array, got {out.dtype}")
    return out.astype(numpy.int32)


def _sliced_mask_mod_error(b: Any, h: Any, q_idx: Any, kv_idx: Any) -> Any:
    """The mask_mod of a sliced BlockMask (PyTorch's): slicing cannot know how the indices
    the original mask_mod sees move, so the user sets it again."""
    raise RuntimeError(
        "Cannot use mask_mod from a sliced BlockMask. When you slice a BlockMask using [], "
        "the mask_mod attribute is reset. You must set it from the original BlockMask's "
        "mask_mod (sliced.mask_mod = an adjusted base_mask.mask_mod).")


class BlockMask:
    """A mask over ``(B, H, Q_LEN, KV_LEN)`` positions in blocks of ``BLOCK_SIZE = (Q
    block, KV block)``, as PyTorch's: per block row the partial blocks (``kv_num_blocks``,
    ``kv_indices``: there ``mask_mod`` decides each position) and the full ones
    (``full_kv_num_blocks``, ``full_kv_indices``: every position kept), their transposes
    (``q_num_blocks``, ``q_indices``, ``full_q_*``), ``seq_lengths``, ``shape`` and
    ``mask_mod``; blocks in neither list are masked out. Made by :func:`create_block_mask`
    or, from block lists, :meth:`from_kv_blocks`; ``mask[b, h]`` slices it, ``to_dense()``,
    ``to_string()``/``print``, ``sparsity()``, ``numel()``, ``as_tuple()``, ``to(device)``.

    >>> bm = create_block_mask(lambda b, h, q, k: q >= k, 1, 1, 4, 4, BLOCK_SIZE=2)
    >>> bm.to_dense()[0, 0]
    array([[1, 0],
           [1, 1]], dtype=int32)
    >>> bm.kv_num_blocks[0, 0], bm.full_kv_num_blocks[0, 0], bm.sparsity()
    (array([1, 1], dtype=int32), array([0, 1], dtype=int32), 25.0)
    >>> print(bm.to_string().replace(" ", "."))  # (dots for the blanks)
    (0,.0)
    ██..
    ████
    <BLANKLINE>
    """

    def __init__(self, seq_lengths: tuple[int, int], kv_num_blocks: Any, kv_indices: Any,
                 full_kv_num_blocks: Any, full_kv_indices: Any, q_num_blocks: Any,
                 q_indices: Any, full_q_num_blocks: Any, full_q_indices: Any,
                 BLOCK_SIZE: tuple[int, int] = (_DEFAULT_BLOCK, _DEFAULT_BLOCK),
                 mask_mod: Callable[..., Any] = noop_mask, *, dq_write_order: Any = None,
                 dq_write_order_full: Any = None, dq_kv_order: Any = None,
                 dq_kv_order_spt: bool | None = None) -> None:
        self.seq_lengths = tuple(int(n) for n in seq_lengths)
        self.kv_num_blocks = _host_blocks(kv_num_blocks, "kv_num_blocks")
        self.kv_indices = _host_blocks(kv_indices, "kv_indices")
        if self.kv_indices is None or self.kv_indices.ndim < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise ValueError("BlockMask: full_kv_num_blocks and full_kv_indices must be both "
                             "provided or omitted")
        self.full_kv_num_blocks = _host_blocks(full_kv_num_blocks, "full_kv_num_blocks")
        self.full_kv_indices = _host_blocks(full_kv_indices, "full_kv_indices")
        self.q_num_blocks = _host_blocks(q_num_blocks, "q_num_blocks")
        self.q_indices = _host_blocks(q_indices, "q_indices")
        self.full_q_num_blocks = _host_blocks(full_q_num_blocks, "full_q_num_blocks")
        self.full_q_indices = _host_blocks(full_q_indices, "full_q_indices")
        self.BLOCK_SIZE = (int(BLOCK_SIZE[0]), int(BLOCK_SIZE[1]))
        self.mask_mod = mask_mod
        # PyTorch's deterministic-backward scheduling metadata: kept for as_tuple() only,
        # the dense computation here has no write order to schedule.
        self.dq_write_order, self.dq_write_order_full = dq_write_order, dq_write_order_full
        self.dq_kv_order, self.dq_kv_order_spt = dq_kv_order, dq_kv_order_spt
        #: the position-level mask when known (create_block_mask evaluated it already);
        #: otherwise built from the blocks and mask_mod when flex_attention needs it
        self._mask: Any = None

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks: Any, kv_indices: Any,
                       full_kv_num_blocks: Any = None, full_kv_indices: Any = None,
                       BLOCK_SIZE: int | tuple[int, int] = _DEFAULT_BLOCK,
                       mask_mod: Callable[..., Any] | None = None,
                       seq_lengths: tuple[int, int] | None = None,
                       compute_q_blocks: bool = True, *, dq_write_order: Any = None,
                       dq_write_order_full: Any = None, dq_kv_order: Any = None
                       ) -> BlockMask:
        """A BlockMask from its block lists (PyTorch's): ``kv_num_blocks (..., Q blocks)``
        and ``kv_indices (..., Q blocks, KV blocks)`` of the partial blocks, optionally the
        full ones; ``mask_mod`` (default: keep all) decides positions inside the partial
        blocks; ``seq_lengths`` default to the block grid's size.

        >>> import numpy as np
        >>> bm = BlockMask.from_kv_blocks(np.array([[[1, 1]]]), np.array([[[[0, 1], [1, 0]]]]),
        ...                               BLOCK_SIZE=2)
        >>> bm.shape, bm.to_dense()[0, 0].tolist(), bm.q_num_blocks.tolist()
        ((1, 1, 4, 4), [[1, 0], [0, 1]], [[[1, 1]]])
        """
        kv_num_blocks = _host_blocks(kv_num_blocks, "kv_num_blocks")
        kv_indices = _host_blocks(kv_indices, "kv_indices")
        if kv_indices is None or kv_indices.ndim < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise ValueError("BlockMask.from_kv_blocks: full_kv_num_blocks and "
                             "full_kv_indices must be both provided or omitted")
        q_num = q_idx = full_q_num = full_q_idx = None
        if compute_q_blocks:
            q_num, q_idx = _transpose_ordered(kv_num_blocks, kv_indices)
            if full_kv_num_blocks is not None:
                full_q_num, full_q_idx = _transpose_ordered(
                    _host_blocks(full_kv_num_blocks, "full_kv_num_blocks"),
                    _host_blocks(full_kv_indices, "full_kv_indices"))
        block = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else tuple(BLOCK_SIZE)
        if seq_lengths is None:
            seq_lengths = (kv_indices.shape[-2] * block[0], kv_indices.shape[-1] * block[1])
        if dq_kv_order is not None and not isinstance(dq_kv_order, bool) \
                and not hasattr(dq_kv_order, "shape"):
            raise ValueError("dq_kv_order must be a bool, an array, or None")
        return cls(seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks,
                   full_kv_indices, q_num, q_idx, full_q_num, full_q_idx, block,
                   noop_mask if mask_mod is None else mask_mod,
                   dq_write_order=dq_write_order, dq_write_order_full=dq_write_order_full,
                   dq_kv_order=None if isinstance(dq_kv_order, bool) else dq_kv_order,
                   dq_kv_order_spt=dq_kv_order if isinstance(dq_kv_order, bool) else None)

    def as_tuple(self, flatten: bool = True) -> tuple[Any, ...]:
        """PyTorch's attribute tuple: ``(*seq_lengths, kv_num_blocks, kv_indices,
        full_kv_num_blocks, full_kv_indices, q_num_blocks, q_indices, full_q_num_blocks,
        full_q_indices, dq_write_order, dq_write_order_full, dq_kv_order, dq_kv_order_spt,
        *BLOCK_SIZE, mask_mod)``; ``flatten=False`` keeps the two pairs as tuples.

        >>> len(create_block_mask(noop_mask, 1, 1, 4, 4).as_tuple())
        17
        """
        pairs = ((*self.seq_lengths,), (*self.BLOCK_SIZE,)) if flatten else \
            ((self.seq_lengths,), (self.BLOCK_SIZE,))
        return (*pairs[0], self.kv_num_blocks, self.kv_indices, self.full_kv_num_blocks,
                self.full_kv_indices, self.q_num_blocks, self.q_indices,
                self.full_q_num_blocks, self.full_q_indices, self.dq_write_order,
                self.dq_write_order_full, self.dq_kv_order, self.dq_kv_order_spt, *pairs[1],
                self.mask_mod)

    @property
    def shape(self) -> tuple[int, ...]:
        """The batch dims of the block lists, then ``seq_lengths``."""
        return tuple(int(n) for n in self.kv_indices.shape[:-2]) + self.seq_lengths

    def numel(self) -> int:
        """The number of positions, ``B * H * Q_LEN * KV_LEN``."""
        return math.prod(self.shape)

    def to_dense(self) -> numpy.ndarray:
        """The block-level mask ``(B, H, Q blocks, KV blocks)``: 1 where a block is computed."""
        cols = self.kv_indices.shape[-1]
        dense = _ordered_to_dense(self.kv_num_blocks, self.kv_indices, cols)
        if self.full_kv_num_blocks is not None:
            dense |= _ordered_to_dense(self.full_kv_num_blocks, self.full_kv_indices,
                                       self.full_kv_indices.shape[-1])
        return dense

    def sparsity(self) -> float:
        """The percentage of positions in blocks that are skipped (PyTorch's measure: whole
        blocks count, so a mask smaller than one block can read negative)."""
        computed = int(self.kv_num_blocks.sum())
        if self.full_kv_num_blocks is not None:
            computed += int(self.full_kv_num_blocks.sum())
        return 100 * (1 - computed * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1] / self.numel())

    def to_string(self, grid_size: int | tuple[int, int] = (20, 20), limit: int = 4) -> str:
        """PyTorch's picture of the block mask, one grid per (batch, head) up to ``limit``:
        "█" a computed region, "░" partly, " " skipped; ``grid_size`` cells at most per
        side (-1: one per block)."""
        dense = self.to_dense()
        *batch_dims, rows, cols = dense.shape
        if isinstance(grid_size, int) and grid_size != -1:
            max_rows = max_cols = grid_size
        elif grid_size == -1:
            max_rows, max_cols = rows, cols
        else:
            max_rows, max_cols = grid_size
        row_step, col_step = max(1, -(-rows // max_rows)), max(1, -(-cols // max_cols))
        parts = []
        for i, where in enumerate(itertools.product(*[range(n) for n in batch_dims])):
            if i == limit:
                parts += ["...", "To print out more, set BlockMask.to_string(limit=N)",
                          "You can also index (BlockMask[batch, head]) to choose a specific "
                          "batch or head"]
                break
            grid = dense[where]
            text = f"{where}\n"
            for r in range(0, rows, row_step):
                for c in range(0, cols, col_step):
                    share = grid[r:r + row_step, c:c + col_step].mean()
                    text += ("█" if share == 1 else " " if share == 0 else "░") * 2
                text += "\n"
            parts.append(text)
        return "\n".join(parts)

    def __str__(self) -> str:
        return (f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, \n"
                f"{self.to_string().strip()}\n)")

    def __repr__(self) -> str:
        def size(x: Any) -> str:
            return "None" if x is None else str(tuple(x.shape))
        fields = [f"{name}={size(getattr(self, name))}" for name in (
            "kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices",
            "q_num_blocks", "q_indices", "full_q_num_blocks", "full_q_indices")]
        fields += [f"BLOCK_SIZE={self.BLOCK_SIZE}", f"shape={self.shape}",
                   f"sparsity={self.sparsity():.2f}%",
                   f"mask_mod={getattr(self.mask_mod, '__name__', self.mask_mod)}"]
        return "BlockMask(\n    " + ",\n    ".join(fields) + "\n)"

    def __getitem__(self, index: Any) -> BlockMask:
        """The mask of some batches, heads or query block rows (PyTorch's: an int index
        keeps its dim; the result's ``mask_mod`` must be set again before use).

        >>> bm = create_block_mask(lambda b, h, q, k: q >= k, 2, 3, 4, 4, BLOCK_SIZE=2)
        >>> bm[1].shape, bm[:, 0:2].shape, bm[1, 2].kv_num_blocks.shape
        ((1, 3, 4, 4), (2, 2, 4, 4), (1, 1, 2))
        """
        index = index if isinstance(index, tuple) else (index,)
        padded = (*index, slice(None), slice(None), slice(None))[:3]
        sizes = self.kv_num_blocks.shape[:3]
        index = tuple(
            (slice(i + n, i + n + 1) if -n <= i < 0 else slice(i, i + 1))
            if isinstance(i, (int, numpy.integer)) else
            (numpy.asarray(funcgrad.device_get(i)) if hasattr(i, "shape") else i)
            for i, n in zip(padded, sizes))
        full = None if self.full_kv_num_blocks is None else (
            self.full_kv_num_blocks[index], self.full_kv_indices[index])
        return BlockMask.from_kv_blocks(
            self.kv_num_blocks[index], self.kv_indices[index],
            *(full or (None, None)), BLOCK_SIZE=self.BLOCK_SIZE,
            mask_mod=_sliced_mask_mod_error, seq_lengths=self.seq_lengths,
            compute_q_blocks=self.q_indices is not None)

    def _adjust(self, new_q_len: int, new_kv_len: int) -> BlockMask:
        """The mask cut down to shorter lengths (what PyTorch's error for a mask made for
        longer sequences suggests)."""
        rows = -(-new_q_len // self.BLOCK_SIZE[0])
        cols = -(-new_kv_len // self.BLOCK_SIZE[1])

        def cut(num: numpy.ndarray, indices: numpy.ndarray) -> tuple[Any, Any]:
            indices = indices[..., :rows, :cols]
            num = numpy.minimum(num[..., :rows], cols)
            return (indices < num[..., None]).sum(-1).astype(numpy.int32), indices

        full = None if self.full_kv_num_blocks is None else cut(self.full_kv_num_blocks,
                                                                 self.full_kv_indices)
        out = BlockMask.from_kv_blocks(*cut(self.kv_num_blocks, self.kv_indices),
                                       *(full or (None, None)), BLOCK_SIZE=self.BLOCK_SIZE,
                                       mask_mod=self.mask_mod,
                                       seq_lengths=(new_q_len, new_kv_len),
                                       compute_q_blocks=self.q_indices is not None)
        if self._mask is not None:
            out._mask = self._mask[..., :new_q_len, :new_kv_len]
        return out

    def to(self, device: Any) -> BlockMask:
        """A copy whose position mask lives on ``device`` (the block lists stay host
        arrays: nothing runs on them there)."""
        out = copy.copy(self)
        out.__dict__.pop("_broadcast_masks", None)  # (its own, on its device)
        if self._mask is not None:
            out._mask = funcgrad.device_put(self._mask, device)
        return out

    def _positions(self, device: Any, batch: tuple[int, int] | None = None) -> Any:
        # The position-level mask flex_attention applies: in a partial block what mask_mod
        # says, in a full block everything, elsewhere nothing (PyTorch's kernels' meaning).
        # ``batch`` is the attention's (B, H): a block mask made with B or H None (one block
        # list, broadcast) still evaluates mask_mod at every batch entry and head in its
        # partial blocks, as PyTorch's kernels call mask_mod(b, h, ...) with the real b, h.
        lead = self.kv_indices.shape[:-2]
        if len(lead) > 2:
            raise ValueError(f"flex_attention: a BlockMask has at most (B, H) batch dims, "
                             f"got block lists of shape {self.kv_indices.shape}")
        B, H = (1,) * (2 - len(lead)) + tuple(lead)
        mb, mh = B, H
        if batch is not None and self.mask_mod is not noop_mask:
            mb, mh = (batch[0] if B == 1 else B), (batch[1] if H == 1 else H)
        if self._mask is not None and (mb, mh) == (B, H):
            return self._mask
        cache = self.__dict__.setdefault("_broadcast_masks", {})
        key = (mb, mh, device, self.mask_mod)
        if key in cache:
            return cache[key]
        L, S = self.seq_lengths
        bq, bk = self.BLOCK_SIZE

        def spread(num: numpy.ndarray, indices: numpy.ndarray) -> numpy.ndarray:
            dense = _ordered_to_dense(num, indices, indices.shape[-1]).astype(bool)
            dense = dense.reshape((B, H) + dense.shape[-2:])
            pos = numpy.repeat(numpy.repeat(dense, bq, axis=-2), bk, axis=-1)
            out = numpy.zeros((B, H, L, S), bool)
            out[..., :min(L, pos.shape[-2]), :min(S, pos.shape[-1])] = pos[..., :L, :S]
            return out

        mods = None if self.mask_mod is noop_mask else create_mask(self.mask_mod, mb, mh, L,
                                                                    S, device)
        if mods is not None:
            if device in (None, "cpu"):
                device = device_of(mods)  # (the default device, where mask_mod's arrays are)
            elif device_of(mods) not in (None, device):  # (it indexed a captured host array)
                mods = funcgrad.device_put(mods, device)
        mask: Any = spread(self.kv_num_blocks, self.kv_indices)
        if device not in (None, "cpu"):
            mask = funcgrad.device_put(mask, device)
        if mods is not None:
            mask = fnp.logical_and(mask, mods)
        if self.full_kv_num_blocks is not None:
            full: Any = spread(self.full_kv_num_blocks, self.full_kv_indices)
            if device not in (None, "cpu"):
                full = funcgrad.device_put(full, device)
            mask = fnp.logical_or(mask, full)
        if (mb, mh) != (B, H) and not is_tracer(mask):
            cache[key] = mask  # (evaluated once per attention batch shape)
        return mask


def create_block_mask(mask_mod: Callable[..., Any], B: int | None, H: int | None,
                      Q_LEN: int, KV_LEN: int, device: Any = None,
                      BLOCK_SIZE: int | tuple[int, int] = _DEFAULT_BLOCK, _compile: bool = False,
                      separate_full_blocks: bool = True, **kwargs: Any) -> BlockMask:
    """The :class:`BlockMask` of ``mask_mod(b, h, q_idx, kv_idx) -> bool`` over ``B`` batches
    and ``H`` heads (None: one, broadcast over the attention's), as PyTorch's.

    >>> create_block_mask(noop_mask, None, None, 3, 5).shape
    (1, 1, 3, 5)
    """
    del _compile, kwargs  # PyTorch's compilation and backward-ordering knobs
    if _is_score_mod(mask_mod):
        raise TypeError("create_block_mask: expected a mask_mod(b, h, q_idx, kv_idx), got a "
                        "function of 5 arguments (a score_mod)")
    block = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else tuple(BLOCK_SIZE)
    if len(block) != 2 or min(block) <= 0:
        raise ValueError(f"create_block_mask: BLOCK_SIZE must be a positive int or pair, got "
                         f"{BLOCK_SIZE}")
    bq, bk = int(block[0]), int(block[1])
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    host = numpy.asarray(funcgrad.device_get(mask))
    b, h = host.shape[:2]
    nq, nk = -(-Q_LEN // bq), -(-KV_LEN // bk)
    padded = numpy.zeros((b, h, nq * bq, nk * bk), bool)
    padded[..., :Q_LEN, :KV_LEN] = host
    kept = padded.reshape(b, h, nq, bq, nk, bk).sum(axis=(3, 5))
    full = kept == bq * bk
    partial = (kept > 0) & ~full if separate_full_blocks else kept > 0
    num, idx = _dense_to_ordered(partial)
    full_lists = _dense_to_ordered(full) if separate_full_blocks else (None, None)
    out = BlockMask.from_kv_blocks(num, idx, *full_lists, BLOCK_SIZE=(bq, bk),
                                   mask_mod=mask_mod, seq_lengths=(Q_LEN, KV_LEN))
    out._mask = mask
    return out


def flex_attention(query: Any, key: Any, value: Any,
                   score_mod: Callable[..., Any] | None = None,
                   block_mask: BlockMask | None = None, scale: float | None = None,
                   enable_gqa: bool = False, return_lse: bool = False,
                   kernel_options: FlexKernelOptions | None = None, *,
                   return_aux: AuxRequest | None = None) -> Any:
    """Attention over ``query (B, Hq, L, E)``, ``key (B, Hkv, S, E)``, ``value (B, Hkv, S,
    Ev)``: scores ``q @ k^T * scale`` (``scale`` defaults to ``1 / sqrt(E)``), each passed
    through ``score_mod(score, b, h, q_idx, kv_idx)``, positions ``block_mask`` drops set to
    -inf, softmax over the keys, times ``value``. A query with every key masked gives zeros
    (and ``lse`` -inf), as PyTorch's. ``enable_gqa`` shares each key/value head among
    ``Hq / Hkv`` query heads. ``return_lse=True`` also returns the log-sum-exp of the scores
    ``(B, Hq, L)``; ``return_aux=AuxRequest(lse=True, max_scores=True)`` returns
    ``(out, AuxOutput(...))`` instead.

    >>> import numpy as np
    >>> q = k = v = np.eye(2).reshape(1, 1, 2, 2)
    >>> out, lse = flex_attention(q, k, v, score_mod=lambda s, b, h, qi, ki: s * 0,
    ...                           return_lse=True)
    >>> out[0, 0], np.round(lse[0, 0], 4)
    (array([[0.5, 0.5],
           [0.5, 0.5]]), array([0.6931, 0.6931]))
    """
    del kernel_options
    fname = "flex_attention"
    for name, t in (("query", query), ("key", key), ("value", value)):
        if getattr(t, "ndim", None) != 4:
            raise ValueError(f"{fname}: {name} must be 4-D (B, H, seq, dim), got shape "
                             f"{tuple(getattr(t, 'shape', ()))}")
    dtypes = {numpy.dtype(t.dtype) for t in (query, key, value)}
    if len(dtypes) > 1:
        raise TypeError(f"{fname}: query, key and value must have the same dtype, got "
                        f"{query.dtype}, {key.dtype} and {value.dtype}")
    if numpy.dtype(query.dtype) == numpy.float16:
        # PyTorch computes half attention in float32 (its working precision; score_mod sees
        # float32 scores) and returns the output in float16, the log-sum-exp in float32.
        res = flex_attention(query.astype(numpy.float32), key.astype(numpy.float32),
                             value.astype(numpy.float32), score_mod, block_mask, scale,
                             enable_gqa, return_lse, None, return_aux=return_aux)
        if return_aux is not None:
            return res[0].astype(numpy.float16), res[1]
        if return_lse:
            return res[0].astype(numpy.float16), res[1]
        return res.astype(numpy.float16)
    B, Hq, L, E = query.shape
    Hkv, S = key.shape[1], key.shape[2]
    if key.shape[-1] != E or value.shape[2] != S or value.shape[1] != Hkv:
        raise ValueError(f"{fname}: query {tuple(query.shape)}, key {tuple(key.shape)} and "
                         f"value {tuple(value.shape)} disagree (key needs the query's last "
                         "dim, value the key's heads and length)")
    if Hq != Hkv:
        if not enable_gqa or Hq % Hkv:
            raise ValueError(f"{fname}: {Hq} query heads and {Hkv} key/value heads need "
                             "enable_gqa=True and Hq divisible by Hkv")
        key = fnp.repeat(key, Hq // Hkv, axis=1)
        value = fnp.repeat(value, Hq // Hkv, axis=1)
    if scale is None:
        scale = 1.0 / math.sqrt(E)
    scores = fnp.matmul(query, fnp.swapaxes(key, -1, -2)) * scale
    if score_mod is not None:
        scores = _over_positions(score_mod, scores, B, Hq, L, S, device_of(query))
        scores = scores.astype(query.dtype)
    if block_mask is not None:
        if not isinstance(block_mask, BlockMask):
            raise TypeError(f"{fname}: block_mask must be a BlockMask (create_block_mask), "
                            f"got {type(block_mask).__name__}")
        if tuple(block_mask.seq_lengths) != (L, S):
            larger = block_mask.seq_lengths[0] >= L and block_mask.seq_lengths[1] >= S
            raise ValueError(
                f"{fname}: block_mask was created for block_mask.shape={block_mask.shape} but "
                f"got q_len={L} and kv_len={S}. " + (
                    "As the block mask was created for a larger length than you're using it "
                    "for, create a new block mask with the correct length, or adjust the "
                    f"existing one: block_mask._adjust({L}, {S})" if larger else
                    "As the block mask was created for a smaller length than you're using "
                    "it for, create a new block mask"))
        mask = block_mask._positions(device_of(scores), (B, Hq))
        if device_of(mask) != device_of(scores):
            mask = funcgrad.device_put(mask, device_of(scores))
        scores = fnp.where(mask, scores, -numpy.inf)
    # Rows with no key left give zeros and lse -inf; they are replaced before the
    # log-sum-exp and the exponential, so no NaN reaches the gradient either.
    dead = fnp.all(scores == -numpy.inf, axis=-1, keepdims=True)
    live = fnp.where(dead, 0.0, scores).astype(scores.dtype)
    live_lse = logsumexp(live, axis=-1, keepdims=True)
    weights = fnp.where(dead, 0.0, fnp.exp(live - live_lse)).astype(query.dtype)
    lse = fnp.where(dead, -numpy.inf, live_lse).astype(scores.dtype)[..., 0]
    out = fnp.matmul(weights, value)
    if return_aux is not None:
        return out, AuxOutput(lse=lse if return_aux.lse else None,
                              max_scores=fnp.max(scores, axis=-1)
                              if return_aux.max_scores else None)
    return (out, lse) if return_lse else out
