"""Distance modules (PyTorch's ``torch.nn.modules.distance``) over ``funcgrad_nn.functional``."""

from __future__ import annotations

from typing import Any

from funcgrad_nn import functional as F
from funcgrad_nn.module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class CosineSimilarity(Module):
    """Cosine similarity along ``dim`` (see ``F.cosine_similarity``: each norm clamped by
    ``eps``).

    >>> import numpy as np
    >>> CosineSimilarity(dim=1)(np.array([[1.0, 0.0]]), np.array([[2.0, 0.0]]))
    array([1.])
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Any, x2: Any) -> Any:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """p-norm of ``x1 - x2 + eps`` over the last dim (see ``F.pairwise_distance``).

    >>> import numpy as np
    >>> PairwiseDistance(eps=0.0)(np.array([[0.0, 0.0]]), np.array([[3.0, 4.0]]))
    array([5.])
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Any, x2: Any) -> Any:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
