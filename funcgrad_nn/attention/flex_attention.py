"""``torch.nn.attention.flex_attention``: attention whose scores a Python function modifies
(``score_mod(score, b, h, q_idx, kv_idx)``) and whose mask a Python function says
(``mask_mod(b, h, q_idx, kv_idx)``, given through :func:`create_block_mask`).

The functions see one score and scalar indices, as PyTorch's (which vmaps them); here they
are vmapped over every (batch, head, query, key) position with :func:`funcgrad.vmap` and
the attention is computed densely, so the values and gradients are PyTorch's (its fused
kernels only skip the blocks the mask empties). A :class:`BlockMask` keeps PyTorch's block
summary (``kv_num_blocks``, ``kv_indices``, ``full_kv_*``, ``to_dense()``, ``sparsity()``).

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

import inspect
import math
from collections.abc import Callable
from typing import Any, NamedTuple, TypedDict

import numpy

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.backend import device_of
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


def _ordered(dense: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray]:
    # PyTorch's _dense_to_ordered: the count of kept blocks per row, and the block indices
    # with the kept ones first (each group in ascending order).
    num = dense.sum(-1).astype(numpy.int32)
    order = numpy.argsort(-dense.astype(numpy.int8), axis=-1, kind="stable")
    return num, order.astype(numpy.int32)


class BlockMask:
    """A mask over ``(B, H, Q_LEN, KV_LEN)`` positions, from :func:`create_block_mask`:
    ``mask_mod`` (evaluated densely by :func:`flex_attention`), ``seq_lengths``,
    ``BLOCK_SIZE``, ``shape``, and PyTorch's block summary: per block row, the partial
    blocks (``kv_num_blocks``, ``kv_indices``) and the full ones (``full_kv_num_blocks``,
    ``full_kv_indices``).

    >>> bm = create_block_mask(lambda b, h, q, k: q >= k, 1, 1, 4, 4, BLOCK_SIZE=2)
    >>> bm.to_dense()[0, 0]
    array([[1, 0],
           [1, 1]], dtype=int32)
    >>> bm.kv_num_blocks[0, 0], bm.full_kv_num_blocks[0, 0], bm.sparsity()
    (array([1, 1], dtype=int32), array([0, 1], dtype=int32), 25.0)
    """

    def __init__(self, mask: Any, mask_mod: Callable[..., Any], BLOCK_SIZE: tuple[int, int],
                 separate_full_blocks: bool = True) -> None:
        self.mask_mod = mask_mod
        self.BLOCK_SIZE = BLOCK_SIZE
        self.shape = tuple(int(n) for n in mask.shape)
        self.seq_lengths = self.shape[2:]
        host = numpy.asarray(funcgrad.device_get(mask))
        bq, bk = BLOCK_SIZE
        (B, H, L, S) = self.shape
        nq, nk = -(-L // bq), -(-S // bk)
        padded = numpy.zeros((B, H, nq * bq, nk * bk), bool)
        padded[..., :L, :S] = host
        kept = padded.reshape(B, H, nq, bq, nk, bk).sum(axis=(3, 5))
        full = kept == bq * bk
        partial = (kept > 0) & ~full if separate_full_blocks else kept > 0
        self.kv_num_blocks, self.kv_indices = _ordered(partial)
        if separate_full_blocks:
            self.full_kv_num_blocks, self.full_kv_indices = _ordered(full)
        else:
            self.full_kv_num_blocks = self.full_kv_indices = None
        self._mask = mask

    def numel(self) -> int:
        """The number of positions, ``B * H * Q_LEN * KV_LEN``."""
        return math.prod(self.shape)

    def to_dense(self) -> numpy.ndarray:
        """The block-level mask ``(B, H, Q blocks, KV blocks)``: 1 where a block is computed."""
        dense = self._blocks(self.kv_num_blocks, self.kv_indices)
        if self.full_kv_num_blocks is not None:
            dense |= self._blocks(self.full_kv_num_blocks, self.full_kv_indices)
        return dense

    @staticmethod
    def _blocks(num: numpy.ndarray, indices: numpy.ndarray) -> numpy.ndarray:
        dense = numpy.zeros(indices.shape, numpy.int32)
        keep = numpy.arange(indices.shape[-1]) < num[..., None]
        numpy.put_along_axis(dense, indices, keep.astype(numpy.int32), axis=-1)
        return dense

    def sparsity(self) -> float:
        """The percentage of positions in blocks that are skipped (PyTorch's measure: whole
        blocks count, so a mask smaller than one block can read negative)."""
        computed = int(self.kv_num_blocks.sum())
        if self.full_kv_num_blocks is not None:
            computed += int(self.full_kv_num_blocks.sum())
        return 100 * (1 - computed * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1] / self.numel())

    def __repr__(self) -> str:
        return (f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, "
                f"BLOCK_SIZE={self.BLOCK_SIZE})")


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
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    return BlockMask(mask, mask_mod, (int(block[0]), int(block[1])), separate_full_blocks)


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
            raise ValueError(f"{fname}: the block mask was made for {block_mask.seq_lengths} "
                             f"(Q_LEN, KV_LEN) but the query and key have ({L}, {S}); "
                             "create it with the attention's lengths")
        mask = block_mask._mask
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
