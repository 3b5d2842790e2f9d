"""Dropout with an explicit, threadable random key."""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad
from funcgrad_nn import functional as F
from funcgrad_nn.init import default_generator
from funcgrad_nn.module import Module

__all__ = ["AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
           "FeatureAlphaDropout"]


class _KeyedModule(Module):
    """A module drawing random numbers in training from its own key: a non-persistent
    uint32[2] buffer ``rng_key`` (seeded from the global generator, see ``manual_seed``),
    advanced after each call, unless ``forward(..., key=k)`` gives one."""

    def __init__(self) -> None:
        super().__init__()
        seed = default_generator().integers(0, 2**32, size=2, dtype=numpy.uint32)
        self.register_buffer("rng_key", seed, persistent=False)

    def _key(self, key: Any) -> Any:
        if key is None:
            key, nxt = F.split_key(self.rng_key)
            self.rng_key = funcgrad.stop_gradient(nxt)
        return key


class Dropout(_KeyedModule):
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

    _fn = staticmethod(F.dropout)

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{type(self).__name__}: probability has to be between 0 and 1, "
                             f"but got {p}")
        self.p, self.inplace = p, inplace  # (inplace is accepted: arrays are never mutated)

    def forward(self, input: Any, key: Any = None) -> Any:
        if not self.training or self.p == 0.0:
            return input
        return type(self)._fn(input, self.p, True, key=self._key(key))

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(Dropout):
    """Zero whole channels of ``(N, C, L)``/``(C, L)`` inputs (see ``F.dropout1d``); the key
    as :class:`Dropout`.

    >>> import numpy as np
    >>> y = Dropout1d(0.5)(np.ones((1, 16, 4), np.float32))
    >>> bool(((y == 0).all(-1) | (y == 2).all(-1)).all())
    True
    """

    _fn = staticmethod(F.dropout1d)


class Dropout2d(Dropout):
    """Zero whole channels of ``(N, C, H, W)``/``(C, H, W)`` inputs (see ``F.dropout2d``).

    >>> import numpy as np
    >>> Dropout2d().eval()(np.ones((1, 2, 3, 3))).shape
    (1, 2, 3, 3)
    """

    _fn = staticmethod(F.dropout2d)


class Dropout3d(Dropout):
    """Zero whole channels of ``(N, C, D, H, W)``/``(C, D, H, W)`` inputs (see
    ``F.dropout3d``).

    >>> import numpy as np
    >>> Dropout3d(0.0)(np.ones((1, 2, 2, 2, 2))).shape
    (1, 2, 2, 2, 2)
    """

    _fn = staticmethod(F.dropout3d)


class AlphaDropout(Dropout):
    """Dropout for SELU networks, keeping zero mean and unit variance (see
    ``F.alpha_dropout``).

    >>> import numpy as np
    >>> y = AlphaDropout(0.2)(np.random.default_rng(0).standard_normal(100000))
    >>> round(float(y.std()), 1)
    1.0
    """

    _fn = staticmethod(F.alpha_dropout)


class FeatureAlphaDropout(Dropout):
    """:class:`AlphaDropout` of whole channels (see ``F.feature_alpha_dropout``).

    >>> import numpy as np
    >>> FeatureAlphaDropout(0.2).eval()(np.ones((2, 3, 4))).shape
    (2, 3, 4)
    """

    _fn = staticmethod(F.feature_alpha_dropout)
