"""``torch.nn.attention.bias``: causal masks that
:func:`funcgrad_nn.functional.scaled_dot_product_attention` takes as ``attn_mask``.

``causal_upper_left(L, S)`` is ``is_causal=True``'s mask (query ``i`` sees keys ``0..i``);
``causal_lower_right(L, S)`` aligns the diagonal with the last key (query ``i`` sees keys
``0..i + S - L``), what a decoder step over a key/value cache needs.

>>> import numpy as np
>>> import funcgrad_nn as nn
>>> from funcgrad_nn.attention.bias import causal_lower_right
>>> mask = causal_lower_right(2, 3)
>>> mask._materialize()
array([[ True,  True, False],
       [ True,  True,  True]])
>>> q, kv = np.ones((2, 4)), np.arange(12.0).reshape(3, 4)
>>> nn.functional.scaled_dot_product_attention(q, kv, kv, attn_mask=mask).shape
(2, 4)
"""

from __future__ import annotations

import enum
from typing import Any

import numpy

import funcgrad
import funcgrad.numpy as fnp
from funcgrad_nn import functional as F

__all__ = ["CausalBias", "CausalVariant", "causal_lower_right", "causal_upper_left"]


class CausalVariant(enum.IntEnum):
    """Where the causal mask's diagonal starts: the top-left corner (``UPPER_LEFT``, as
    ``is_causal=True``) or the bottom-right one (``LOWER_RIGHT``)."""

    UPPER_LEFT = 1
    LOWER_RIGHT = 2


class CausalBias:
    """A causal mask of ``seq_len_q`` queries by ``seq_len_kv`` keys that
    ``scaled_dot_product_attention`` applies without being given the dense array (PyTorch's
    ``CausalBias``; build it with :func:`causal_upper_left` / :func:`causal_lower_right`).

    >>> CausalBias(CausalVariant.UPPER_LEFT, 2, 3)._materialize()
    array([[ True, False, False],
           [ True,  True, False]])
    """

    def __init__(self, variant: CausalVariant, seq_len_q: int, seq_len_kv: int) -> None:
        if not isinstance(variant, CausalVariant):
            raise TypeError(f"CausalBias: variant must be a CausalVariant, got {variant!r}")
        self.variant = variant
        self.seq_len_q = int(seq_len_q)
        self.seq_len_kv = int(seq_len_kv)
        if self.seq_len_q < 0 or self.seq_len_kv < 0:
            raise ValueError(f"CausalBias: sequence lengths must be >= 0, got "
                             f"({seq_len_q}, {seq_len_kv})")
        shape = (self.seq_len_q, self.seq_len_kv)
        self.shape, self.dtype, self.ndim = shape, numpy.dtype(bool), 2

    def _materialize(self, device: Any = None) -> Any:
        """The dense boolean mask (True: may attend), on ``device`` (default: the host)."""
        offset = (self.seq_len_kv - self.seq_len_q
                  if self.variant == CausalVariant.LOWER_RIGHT else 0)
        mask = numpy.tril(numpy.ones((self.seq_len_q, self.seq_len_kv), bool), k=offset)
        return mask if device in (None, "cpu") else funcgrad.device_put(mask, device)

    def _dispatch(self, query: Any, key: Any, value: Any, dropout_p: float = 0.0,
                  is_causal: bool = False, scale: float | None = None,
                  enable_gqa: bool = False, **kwargs: Any) -> Any:
        """Attention with this mask: ``is_causal=True`` when the diagonal starts top left
        (or the mask is square), else the materialised mask, as PyTorch's math path."""
        sdpa = F.scaled_dot_product_attention
        if is_causal:
            raise ValueError("CausalBias should not be used with causal=True")
        if (query.shape[-2], key.shape[-2]) != (self.seq_len_q, self.seq_len_kv):
            raise ValueError(f"CausalBias: the mask is {self.seq_len_q} x {self.seq_len_kv} "
                             f"but the query and key have {query.shape[-2]} and "
                             f"{key.shape[-2]} positions")
        if self.seq_len_q == self.seq_len_kv or self.variant == CausalVariant.UPPER_LEFT:
            return sdpa(query, key, value, None, dropout_p, True, scale, enable_gqa, **kwargs)
        # Built from the query (ones_like) so the mask lives on its device, traced or not.
        mask = fnp.tril(fnp.ones_like(query, dtype=bool, shape=self.shape),
                        k=self.seq_len_kv - self.seq_len_q)
        return sdpa(query, key, value, mask, dropout_p, False, scale, enable_gqa, **kwargs)

    def __repr__(self) -> str:
        return repr(self._materialize())


def causal_upper_left(*size: int) -> CausalBias:
    """The top-left aligned causal mask of ``size = (seq_len_q, seq_len_kv)``
    (``tril(ones(size))``).

    >>> causal_upper_left(3, 2)
    array([[ True, False],
           [ True,  True],
           [ True,  True]])
    """
    if len(size) != 2:
        raise ValueError(f"causal_upper_left only supports 2D sizes, got {size}")
    return CausalBias(CausalVariant.UPPER_LEFT, *size)


def causal_lower_right(*size: int) -> CausalBias:
    """The bottom-right aligned causal mask of ``size = (seq_len_q, seq_len_kv)``
    (``tril(ones(size), diagonal=seq_len_kv - seq_len_q)``).

    >>> causal_lower_right(3, 4)
    array([[ True,  True, False, False],
           [ True,  True,  True, False],
           [ True,  True,  True,  True]])
    """
    if len(size) != 2:
        raise ValueError(f"causal_lower_right only supports 2D sizes, got {size}")
    return CausalBias(CausalVariant.LOWER_RIGHT, *size)
