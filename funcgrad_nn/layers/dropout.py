"""Dropout with an explicit, threadable random key."""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad
from funcgrad_nn import functional as F
from funcgrad_nn.init import default_generator
from funcgrad_nn.module import Module

__all__ = ["Dropout"]


class Dropout(Module):
    """Zero elements with probability ``p`` in training mode, scaling the rest by 1/(1-p).

    Randomness: ``forward(x, key=k)`` uses the given key (int seed or uint32[2] array).
    Without one the module uses its own key, a non-persistent uint32[2] buffer ``rng_key``
    (seeded from the global generator, see ``manual_seed``), and advances it after each
    call. Because it is a buffer, ``funcgrad_nn.jit``/``grad`` thread it through the
    transformation and write the advanced key back, so each jitted step draws a new mask.
    (Under plain ``funcgrad.jit`` the advanced key is not written back: pass ``key=``.)

    >>> import numpy as np
    >>> d = Dropout(0.5)
    >>> y1, y2 = d(np.ones(8, np.float32)), d(np.ones(8, np.float32))
    >>> sorted(set(y1.tolist()) | set(y2.tolist())) == [0.0, 2.0]
    True
    >>> d.eval()(np.ones(2, np.float32))
    array([1., 1.], dtype=float32)
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: probability has to be between 0 and 1, but got {p}")
        self.p = p
        seed = default_generator().integers(0, 2**32, size=2, dtype=numpy.uint32)
        self.register_buffer("rng_key", seed, persistent=False)

    def forward(self, input: Any, key: Any = None) -> Any:
        if not self.training or self.p == 0.0:
            return input
        if key is None:
            key, nxt = F.split_key(self.rng_key)
            self.rng_key = funcgrad.stop_gradient(nxt)
        return F.dropout(input, self.p, True, key=key)

    def extra_repr(self) -> str:
        return f"p={self.p}"
