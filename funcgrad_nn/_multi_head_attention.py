"""``multi_head_attention_forward``: PyTorch's functional multi-head attention, the one
computation behind :class:`funcgrad_nn.MultiheadAttention` (re-exported by
``funcgrad_nn.functional``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad_nn.amp import autocast_inputs
from funcgrad_nn.module import BadInputError

__all__ = ["multi_head_attention_forward"]


def multi_head_attention_forward(
        query: Any, key: Any, value: Any, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Any, in_proj_bias: Any, bias_k: Any, bias_v: Any,
        add_zero_attn: bool, dropout_p: float, out_proj_weight: Any, out_proj_bias: Any,
        training: bool = True, key_padding_mask: Any = None, need_weights: bool = True,
        attn_mask: Any = None, use_separate_proj_weight: bool = False,
        q_proj_weight: Any = None, k_proj_weight: Any = None, v_proj_weight: Any = None,
        static_k: Any = None, static_v: Any = None, average_attn_weights: bool = True,
        is_causal: bool = False, *, dropout_key: Any = None) -> tuple[Any, Any]:
    """Multi-head attention on sequence-first ``(L, N, E)`` inputs (or unbatched ``(L, E)``),
    PyTorch's signature and rules; returns ``(output, weights or None)``.

    ``in_proj_weight`` ``(3E, E)`` (or ``q/k/v_proj_weight`` with
    ``use_separate_proj_weight``), ``bias_k``/``bias_v`` ``(1, 1, E)`` appended as one more
    key, ``add_zero_attn`` a zero key; ``static_k``/``static_v`` ``(N * num_heads, S,
    E / num_heads)`` replace the projected keys/values. Masks as
    :class:`~funcgrad_nn.MultiheadAttention`'s (bool True = not allowed, or float added).
    ``training`` with ``dropout_p > 0`` needs ``dropout_key=``.

    >>> import numpy as np
    >>> e = 4
    >>> x = np.ones((3, 2, e))
    >>> out, w = multi_head_attention_forward(x, x, x, e, 2, np.eye(3 * e, e), None, None,
    ...                                       None, False, 0.0, np.eye(e), None)
    >>> out.shape, w.shape
    ((3, 2, 4), (2, 3, 3))
    """
    (query, key, value, in_proj_weight, in_proj_bias, bias_k, bias_v, out_proj_weight,
     out_proj_bias, q_proj_weight, k_proj_weight, v_proj_weight, static_k,
     static_v) = autocast_inputs(
        "multi_head_attention_forward", query, key, value, in_proj_weight, in_proj_bias, bias_k,
        bias_v, out_proj_weight, out_proj_bias, q_proj_weight, k_proj_weight, v_proj_weight,
        static_k, static_v)
    name = "multi_head_attention_forward"

    def fail(problem: str, fix: str) -> Exception:
        # PyTorch asserts most of these and raises RuntimeError for a mask of the wrong
        # shape: BadInputError is a ValueError and a RuntimeError.
        return BadInputError(f"{name}: {problem}. Fix: {fix}.")

    if use_separate_proj_weight:
        wq, wk, wv = q_proj_weight, k_proj_weight, v_proj_weight
        if wq is None or wk is None or wv is None:
            raise ValueError(f"{name}: use_separate_proj_weight=True needs q_proj_weight, "
                             "k_proj_weight and v_proj_weight")
    else:
        if in_proj_weight is None:
            raise ValueError(f"{name}: use_separate_proj_weight=False needs in_proj_weight")
        e = embed_dim_to_check
        wq, wk, wv = (in_proj_weight[i * e:(i + 1) * e] for i in range(3))
    if query.ndim == key.ndim == value.ndim == 3:
        query, key, value = (fnp.swapaxes(t, 0, 1) for t in (query, key, value))
    return attend(query, key, value, embed_dim_to_check, num_heads, (wq, wk, wv),
                  in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight,
                  out_proj_bias, training, key_padding_mask, need_weights, attn_mask,
                  average_attn_weights, is_causal, static_k, static_v, dropout_key,
                  batch_first=False, fail=fail)


def attend(query: Any, key: Any, value: Any, e: int, h: int, weights: tuple[Any, Any, Any],
           b: Any, bias_k: Any, bias_v: Any, add_zero_attn: bool, dropout_p: float,
           out_w: Any, out_b: Any, training: bool, key_padding_mask: Any,
           need_weights: bool, attn_mask: Any, average_attn_weights: bool, is_causal: bool,
           static_k: Any, static_v: Any, dropout_key: Any, *, batch_first: bool,
           fail: Callable[[str, str], Exception]) -> tuple[Any, Any]:
    """The computation, on batch-first ``(N, L, E)`` (or unbatched ``(L, E)``) inputs;
    the output goes back batch-first or sequence-first as ``batch_first`` says. ``fail``
    builds the caller's error for bad input."""
    from funcgrad_nn import functional as F

    if is_causal and attn_mask is None:
        # PyTorch treats is_causal as a hint about attn_mask, which must be given.
        raise RuntimeError("multi-head attention: need attn_mask if specifying the "
                           "is_causal hint (nn.Transformer.generate_square_subsequent_mask "
                           "builds one)")
    if e % h:
        raise fail(f"embed_dim {e} is not divisible by num_heads {h}",
                   "pick num_heads dividing the embedding size")
    hd = e // h
    wq, wk, wv = weights
    # Shapes for messages as the caller passed them (the callers swapped 3-D inputs to
    # batch-first unless batch_first).
    swapped = query.ndim == key.ndim == value.ndim == 3 and not batch_first
    given = ", ".join(str((t.shape[1], t.shape[0], t.shape[2]) if swapped else tuple(t.shape))
                      for t in (query, key, value))
    if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
        raise fail(f"query, key and value must all be 3-D (batched) or 2-D (unbatched), "
                   f"got shapes {given}", "pass (L, N, E) arrays (batch-first (N, L, E) "
                   "where the module says so) or (L, E)")
    unbatched = query.ndim == 2
    if unbatched:
        query, key, value = (fnp.expand_dims(t, 0) for t in (query, key, value))
        if key_padding_mask is not None:
            key_padding_mask = fnp.expand_dims(key_padding_mask, 0)
    n, lq = query.shape[0], query.shape[1]
    s = key.shape[1]
    if (query.shape[2] != e or key.shape[2] != wk.shape[1] or value.shape[2] != wv.shape[1]
            or value.shape[:2] != key.shape[:2] or key.shape[0] != n):
        raise fail(f"expected query (.., {e}), key (.., {wk.shape[1]}) and value "
                   f"(.., {wv.shape[1]}) with matching batch and key/value lengths, got "
                   f"shapes {given}", "give key and value the same batch and length, and "
                   "the feature sizes embed_dim/kdim/vdim the weights were built with")
    bq, bk, bv = (None, None, None) if b is None else (b[:e], b[e:2 * e], b[2 * e:])
    if attn_mask is not None and not (
            (attn_mask.ndim == 2 and tuple(attn_mask.shape) == (lq, s))
            or (attn_mask.ndim == 3 and tuple(attn_mask.shape) == (n * h, lq, s))):
        raise fail(f"attn_mask should have shape ({lq}, {s}) or ({n * h}, {lq}, {s}), "
                   f"got {tuple(attn_mask.shape)}", "pass a (target length, source length) "
                   "mask, or one per batch entry and head")
    if key_padding_mask is not None and tuple(key_padding_mask.shape) != (n, s):
        raise fail(f"key_padding_mask should have shape ({n}, {s}), got "
                   f"{tuple(key_padding_mask.shape)}",
                   "pass one row per batch entry, True at padded key positions")
    if (bias_k is None) != (bias_v is None):
        raise fail("bias_k and bias_v must be given together", "pass both or neither")
    if bias_k is not None and (static_k is not None or static_v is not None):
        raise fail("bias_k/bias_v cannot be added to static_k/static_v",
                   "drop add_bias_kv or the static keys/values")
    # With no padding mask and no weights asked for, PyTorch hands its SDPA kernel the hint
    # instead of the mask: a top-left causal mask over the final keys.
    causal = is_causal and key_padding_mask is None and not need_weights
    if causal:
        attn_mask = None
    qp = F.linear(query, wq, bq)
    kp = F.linear(key, wk, bk)
    vp = F.linear(value, wv, bv)
    # PyTorch appends bias_k/bias_v (after the projection), then a zero key/value per head,
    # and pads both masks with a "not masked" column for each appended position.
    if bias_k is not None:
        kp = fnp.concatenate([kp, fnp.broadcast_to(bias_k, (n, 1, e)).astype(kp.dtype)], 1)
        vp = fnp.concatenate([vp, fnp.broadcast_to(bias_v, (n, 1, e)).astype(vp.dtype)], 1)
        attn_mask, key_padding_mask = _pad_mask(attn_mask), _pad_mask(key_padding_mask)
    q = fnp.swapaxes(fnp.reshape(qp, (n, lq, h, hd)), 1, 2)
    k = fnp.swapaxes(fnp.reshape(kp, (n, kp.shape[1], h, hd)), 1, 2)
    v = fnp.swapaxes(fnp.reshape(vp, (n, vp.shape[1], h, hd)), 1, 2)
    for static, which in ((static_k, "static_k"), (static_v, "static_v")):
        if static is None:
            continue
        if static.ndim != 3 or static.shape[0] != n * h or static.shape[2] != hd:
            raise fail(f"{which} should have shape ({n * h}, S, {hd}), got "
                       f"{tuple(static.shape)}", "pass (batch * num_heads, S, head_dim)")
        if which == "static_k":
            k = fnp.reshape(static, (n, h, static.shape[1], hd))
        else:
            v = fnp.reshape(static, (n, h, static.shape[1], hd))
    if add_zero_attn:
        k = fnp.concatenate([k, fnp.zeros_like(k[:, :, :1])], 2)
        v = fnp.concatenate([v, fnp.zeros_like(v[:, :, :1])], 2)
        attn_mask, key_padding_mask = _pad_mask(attn_mask), _pad_mask(key_padding_mask)
    s = k.shape[2]
    scores = fnp.matmul(q * math.sqrt(1.0 / hd), fnp.swapaxes(k, -1, -2))
    if causal:
        allowed = F._iota_like(scores, s, numpy.int64) <= F._iota_like(scores, lq,
                                                                       numpy.int64)[:, None]
        scores = F._apply_mask(scores, allowed, allowed=True)
    if attn_mask is not None:
        m = attn_mask if attn_mask.ndim == 2 else fnp.reshape(attn_mask, (n, h, lq, s))
        scores = F._apply_mask(scores, m, allowed=False)
    if key_padding_mask is not None:
        scores = F._apply_mask(scores, fnp.reshape(key_padding_mask, (n, 1, 1, s)),
                               allowed=False)
    # PyTorch returns the weights from a plain softmax (NaN in a row with every key
    # masked) but computes need_weights=False through its SDPA kernel (zeros there).
    attn = F.softmax(scores, dim=-1) if need_weights else F._safe_softmax(scores)
    p = attn
    if training and dropout_p > 0.0:
        dropout_key = F.key_or_draw(dropout_key, attn, "multi-head attention", "dropout_key")
        p = F.dropout(attn, dropout_p, True, key=dropout_key)
    out = fnp.reshape(fnp.swapaxes(fnp.matmul(p, v), 1, 2), (n, lq, e))
    out = F.linear(out, out_w, out_b)
    if unbatched:
        out = out[0]
    elif not batch_first:
        out = fnp.swapaxes(out, 0, 1)
    if not need_weights:
        return out, None
    # PyTorch returns the weights after dropout (those that multiplied the values).
    if average_attn_weights:
        p = fnp.mean(p, axis=1)
    return out, (p[0] if unbatched else p)


def _pad_mask(mask: Any) -> Any:
    # A trailing zero column: False (bool: may attend) or 0.0 (float: nothing added).
    if mask is None:
        return None
    return fnp.concatenate([mask, fnp.zeros_like(mask[..., :1])], axis=-1)
