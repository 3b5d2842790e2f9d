"""Embedding lookup table."""

from __future__ import annotations

from typing import Any

from funcgrad_nn import functional as F
from funcgrad_nn import init
from funcgrad_nn.layers._util import empty, place
from funcgrad_nn.module import Module, Parameter

__all__ = ["Embedding"]


class Embedding(Module):
    """Table of ``num_embeddings`` vectors of size ``embedding_dim``, N(0, 1) init; the
    ``padding_idx`` row starts at zero and gets no gradient.

    >>> import numpy as np
    >>> e = Embedding(10, 3, padding_idx=0)
    >>> e(np.array([[0, 4]])).shape, bool((e.weight[0] == 0).all())
    ((1, 2, 3), True)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 _weight: Any = None, _freeze: bool = False, device: str | None = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"Embedding: padding_idx {padding_idx} must be within "
                                 f"num_embeddings {num_embeddings}")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        if _weight is None:
            w = init.normal_(empty((num_embeddings, embedding_dim), dtype))
            if padding_idx is not None:
                w[padding_idx] = 0
        else:
            w = _weight
            if tuple(w.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"Embedding: _weight shape {tuple(w.shape)} does not match "
                                 f"({num_embeddings}, {embedding_dim})")
        self.weight = Parameter(w, requires_grad=not _freeze)
        place(self, device)

    @classmethod
    def from_pretrained(cls, embeddings: Any, freeze: bool = True,
                        padding_idx: int | None = None) -> Embedding:
        """Wrap an existing ``(num, dim)`` array (frozen by default).

        >>> import numpy as np
        >>> e = Embedding.from_pretrained(np.eye(2, dtype=np.float32))
        >>> len(list(e.parameters()))
        0
        """
        n, d = embeddings.shape
        return cls(n, d, padding_idx, _weight=embeddings, _freeze=freeze)

    def forward(self, input: Any) -> Any:
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        return s if self.padding_idx is None else s + f", padding_idx={self.padding_idx}"
