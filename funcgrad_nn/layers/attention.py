"""MultiheadAttention with PyTorch's parameter layout, initialisation and masks."""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad
import funcgrad.numpy as fnp
from funcgrad_nn import functional as F
from funcgrad_nn import init
from funcgrad_nn._multi_head_attention import attend
from funcgrad_nn.init import default_generator
from funcgrad_nn.layers._util import empty, place
from funcgrad_nn.layers.linear import NonDynamicallyQuantizableLinear
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
    unless ``average_attn_weights=False``, after dropout (as PyTorch). Attention dropout (training, ``dropout > 0``)
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
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        dtype=dtype)
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

    def merge_masks(self, attn_mask: Any, key_padding_mask: Any, query: Any
                    ) -> tuple[Any, int | None]:
        """PyTorch's helper behind its fast path: the masks as one and its type, as PyTorch's:
        ``key_padding_mask`` alone (type 1) as is; with ``attn_mask`` (type 2)
        both expanded to ``(batch, num_heads, L, L)`` (``query`` batch-first) and combined
        (bool masks or-ed, float masks added); neither gives ``(None, None)``.

        >>> import numpy as np
        >>> mha = MultiheadAttention(4, 2, batch_first=True)
        >>> causal = np.triu(np.ones((3, 3), bool), 1)
        >>> merged, kind = mha.merge_masks(causal, np.array([[0, 0, 1]], bool), np.zeros((1, 3, 4)))
        >>> merged.shape, kind, merged[0, 0, 0].tolist()
        ((1, 2, 3, 3), 2, [False, True, True])
        """
        if attn_mask is None:
            return key_padding_mask, None if key_padding_mask is None else 1
        batch, length = fnp.shape(query)[0], fnp.shape(query)[1]
        if fnp.ndim(attn_mask) == 3:
            merged = fnp.reshape(attn_mask, (batch, -1, length, length))
        else:
            merged = fnp.broadcast_to(fnp.reshape(attn_mask, (1, 1, length, length)),
                                      (batch, self.num_heads, length, length))
        if key_padding_mask is not None:
            pad = fnp.broadcast_to(fnp.reshape(key_padding_mask, (batch, 1, 1, length)),
                                   (batch, self.num_heads, 1, length))
            both_bool = all(numpy.dtype(fnp.result_type(m)).kind == "b" for m in (merged, pad))
            merged = fnp.logical_or(merged, pad) if both_bool else merged + pad
        return merged, 2

    def forward(self, query: Any, key: Any, value: Any, key_padding_mask: Any = None,
                need_weights: bool = True, attn_mask: Any = None,
                average_attn_weights: bool = True, is_causal: bool = False, *,
                dropout_key: Any = None) -> tuple[Any, Any]:
        if query.ndim == key.ndim == value.ndim == 3 and not self.batch_first:
            query, key, value = (fnp.swapaxes(t, 0, 1) for t in (query, key, value))
        if self._qkv_same_embed_dim:
            e = self.embed_dim
            weights = tuple(self.in_proj_weight[i * e:(i + 1) * e] for i in range(3))
        else:
            weights = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)
        if self.training and self.dropout > 0.0 and dropout_key is None:
            dropout_key, nxt = F.split_key(self.rng_key)
            self.rng_key = funcgrad.stop_gradient(nxt)
        return attend(query, key, value, self.embed_dim, self.num_heads, weights,
                      self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn,
                      self.dropout, self.out_proj.weight, self.out_proj.bias, self.training,
                      key_padding_mask, need_weights, attn_mask, average_attn_weights,
                      is_causal, None, None, dropout_key, batch_first=self.batch_first,
                      fail=lambda problem, fix: bad_input(self, problem, fix))

