"""MultiheadAttention with PyTorch's parameter layout, initialisation and masks."""

from __future__ import annotations

import math
from typing import Any

import numpy

import funcgrad
import funcgrad.numpy as fnp
from funcgrad_nn import functional as F
from funcgrad_nn import init
from funcgrad_nn.init import default_generator
from funcgrad_nn.layers._util import empty, place
from funcgrad_nn.layers.linear import Linear
from funcgrad_nn.module import Module, Parameter, bad_input

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """Multi-head attention as ``torch.nn.MultiheadAttention``.

    Parameters: ``in_proj_weight`` ``(3E, E)`` (or ``q_proj_weight``/``k_proj_weight``/
    ``v_proj_weight`` when ``kdim``/``vdim`` differ from ``embed_dim``), ``in_proj_bias``
    ``(3E,)`` and ``out_proj`` (a :class:`Linear`); xavier-uniform input projections and
    zero biases. Inputs are ``(L, N, E)`` (``(N, L, E)`` with ``batch_first``) or unbatched
    ``(L, E)``. ``key_padding_mask`` ``(N, S)`` and ``attn_mask`` ``(L, S)`` or
    ``(N * num_heads, L, S)``: bool (True = not allowed) or float (added). Returns
    ``(output, weights)``; weights are ``None`` unless ``need_weights``, averaged over heads
    unless ``average_attn_weights=False``. Attention dropout (training, ``dropout > 0``)
    draws from a non-persistent ``rng_key`` buffer like :class:`Dropout`, or ``key=``.
    ``add_bias_kv=True`` adds parameters ``bias_k``/``bias_v`` ``(1, 1, E)`` (xavier-normal)
    appended to the projected keys/values as one more key position; ``add_zero_attn=True``
    then appends a zero key/value; masks get a "not masked" column for each, so the weights
    are ``(N, L, S + extra)``, as PyTorch.

    >>> import numpy as np
    >>> mha = MultiheadAttention(8, 2, batch_first=True)
    >>> out, w = mha(np.ones((3, 5, 8), np.float32), np.ones((3, 4, 8), np.float32),
    ...              np.ones((3, 4, 8), np.float32))
    >>> out.shape, w.shape, [n for n, _ in mha.named_parameters()]
    ((3, 5, 8), (3, 5, 4), ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', \
'out_proj.bias'])
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0,
                 bias: bool = True, add_bias_kv: bool = False, add_zero_attn: bool = False,
                 kdim: int | None = None, vdim: int | None = None, batch_first: bool = False,
                 device: str | None = None, dtype: Any = None) -> None:
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"MultiheadAttention: embed_dim and num_heads must be positive, "
                             f"got {embed_dim} and {num_heads}")
        if embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim ({embed_dim}) must be divisible "
                             f"by num_heads ({num_heads})")
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"MultiheadAttention: dropout must be in [0, 1], got {dropout}")
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.dropout, self.batch_first = dropout, batch_first
        self.head_dim = embed_dim // num_heads
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty((3 * embed_dim, embed_dim), dtype))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(empty((embed_dim, embed_dim), dtype))
            self.k_proj_weight = Parameter(empty((embed_dim, self.kdim), dtype))
            self.v_proj_weight = Parameter(empty((embed_dim, self.vdim), dtype))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty((3 * embed_dim,), dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(empty((1, 1, embed_dim), dtype))
            self.bias_v = Parameter(empty((1, 1, embed_dim), dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        if dropout > 0.0:
            seed = default_generator().integers(0, 2**32, size=2, dtype=numpy.uint32)
            self.register_buffer("rng_key", seed, persistent=False)
        self._reset_parameters()
        place(self, device)

    def _reset_parameters(self, generator: Any = None) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight, generator=generator)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w, generator=generator)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k, generator=generator)
            init.xavier_normal_(self.bias_v, generator=generator)

    def reset_parameters(self, generator: Any = None) -> None:
        self.out_proj.reset_parameters(generator)
        self._reset_parameters(generator)

    def forward(self, query: Any, key: Any, value: Any, key_padding_mask: Any = None,
                need_weights: bool = True, attn_mask: Any = None,
                average_attn_weights: bool = True, is_causal: bool = False, *,
                dropout_key: Any = None) -> tuple[Any, Any]:
        name = "MultiheadAttention"
        if is_causal and attn_mask is None:
            # PyTorch treats is_causal as a hint about attn_mask, which must be given.
            raise RuntimeError(f"{name}: need attn_mask if specifying the is_causal hint")
        e, h, hd = self.embed_dim, self.num_heads, self.head_dim
        if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
            raise bad_input(self, f"query, key and value must all be 3-D (batched) or 2-D "
                            f"(unbatched), got shapes {tuple(query.shape)}, "
                            f"{tuple(key.shape)}, {tuple(value.shape)}",
                            "pass (L, N, E) arrays ((N, L, E) with batch_first) or (L, E)")
        given = ", ".join(str(tuple(t.shape)) for t in (query, key, value))
        unbatched = query.ndim == 2
        if unbatched:
            query, key, value = (fnp.expand_dims(t, 0) for t in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = fnp.expand_dims(key_padding_mask, 0)
        elif not self.batch_first:
            query, key, value = (fnp.swapaxes(t, 0, 1) for t in (query, key, value))
        n, lq = query.shape[0], query.shape[1]
        s = key.shape[1]
        if (query.shape[2] != e or key.shape[2] != self.kdim or value.shape[2] != self.vdim
                or value.shape[:2] != key.shape[:2] or key.shape[0] != n):
            raise bad_input(self, f"expected query (.., {e}), key (.., {self.kdim}) and "
                            f"value (.., {self.vdim}) with matching batch and key/value "
                            f"lengths, got shapes {given}",
                            "give key and value the same batch and length, and the feature "
                            "sizes embed_dim/kdim/vdim the module was built with")
        if self._qkv_same_embed_dim:
            wq, wk, wv = (self.in_proj_weight[i * e:(i + 1) * e] for i in range(3))
        else:
            wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        b = self.in_proj_bias
        bq, bk, bv = (None, None, None) if b is None else (b[:e], b[e:2 * e], b[2 * e:])
        if attn_mask is not None:
            if attn_mask.ndim == 2 and tuple(attn_mask.shape) == (lq, s):
                m = attn_mask
            elif attn_mask.ndim == 3 and tuple(attn_mask.shape) == (n * h, lq, s):
                m = attn_mask
            else:
                raise bad_input(self, f"attn_mask should have shape ({lq}, {s}) or "
                                f"({n * h}, {lq}, {s}), got {tuple(attn_mask.shape)}",
                                "pass a (target length, source length) mask, or one per "
                                "batch entry and head")
        if key_padding_mask is not None and tuple(key_padding_mask.shape) != (n, s):
            raise bad_input(self, f"key_padding_mask should have shape ({n}, {s}), "
                            f"got {tuple(key_padding_mask.shape)}",
                            "pass one row per batch entry, True at padded key positions")
        qp = F.linear(query, wq, bq)
        kp = F.linear(key, wk, bk)
        vp = F.linear(value, wv, bv)
        # PyTorch appends bias_k/bias_v (after the projection), then a zero key/value
        # (per head, which is a zero row before the head split), and pads both masks with
        # a "not masked" column for each appended position.
        extra = []
        if self.bias_k is not None:
            extra.append((self.bias_k, self.bias_v))
        if self.add_zero_attn:
            z = fnp.zeros_like(kp[:, :1])
            extra.append((z, z))
        for bk_, bv_ in extra:
            kp = fnp.concatenate([kp, fnp.broadcast_to(bk_, (n, 1, e)).astype(kp.dtype)], 1)
            vp = fnp.concatenate([vp, fnp.broadcast_to(bv_, (n, 1, e)).astype(vp.dtype)], 1)
            if attn_mask is not None:
                attn_mask = _pad_mask(attn_mask)
            if key_padding_mask is not None:
                key_padding_mask = _pad_mask(key_padding_mask)
        s += len(extra)
        q = fnp.swapaxes(fnp.reshape(qp, (n, lq, h, hd)), 1, 2)
        k = fnp.swapaxes(fnp.reshape(kp, (n, s, h, hd)), 1, 2)
        v = fnp.swapaxes(fnp.reshape(vp, (n, s, h, hd)), 1, 2)
        scores = fnp.matmul(q * math.sqrt(1.0 / hd), fnp.swapaxes(k, -1, -2))
        if attn_mask is not None:
            m = attn_mask if attn_mask.ndim == 2 else fnp.reshape(attn_mask, (n, h, lq, s))
            scores = F._apply_mask(scores, m, allowed=False)
        if key_padding_mask is not None:
            scores = F._apply_mask(scores, fnp.reshape(key_padding_mask, (n, 1, 1, s)),
                                   allowed=False)
        # PyTorch returns the weights from a plain softmax (NaN in a row with every key
        # masked) but computes need_weights=False through its SDPA kernel (zeros there).
        weights = F.softmax(scores, dim=-1) if need_weights else F._safe_softmax(scores)
        p = weights
        if self.training and self.dropout > 0.0:
            if dropout_key is None:
                dropout_key, nxt = F.split_key(self.rng_key)
                self.rng_key = funcgrad.stop_gradient(nxt)
            p = F.dropout(weights, self.dropout, True, key=dropout_key)
        out = fnp.reshape(fnp.swapaxes(fnp.matmul(p, v), 1, 2), (n, lq, e))
        out = self.out_proj(out)
        if unbatched:
            out = out[0]
        elif not self.batch_first:
            out = fnp.swapaxes(out, 0, 1)
        if not need_weights:
            return out, None
        if average_attn_weights:
            weights = fnp.mean(weights, axis=1)
        return out, (weights[0] if unbatched else weights)

    def extra_repr(self) -> str:
        return (f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, "
                f"dropout={self.dropout}, batch_first={self.batch_first}")


def _pad_mask(mask: Any) -> Any:
    # A trailing zero column: False (bool: may attend) or 0.0 (float: nothing added).
    return fnp.concatenate([mask, fnp.zeros_like(mask[..., :1])], axis=-1)
