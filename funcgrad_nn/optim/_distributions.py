"""optax's ``multi_normal``: a diagonal multivariate normal parameterized by its mean and log
scale (used by optax's Monte-Carlo gradient estimators), with ``sample`` and ``log_prob``.

>>> import numpy as np
>>> from funcgrad import random
>>> from funcgrad_nn import optim
>>> d = optim.multi_normal(np.zeros(2), np.log(np.array([1.0, 2.0])))
>>> d.sample((5,), random.key(0)).shape, round(float(d.log_prob(np.zeros(2))), 6)
((5, 2), -2.531024)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import funcgrad.numpy as fnp
from funcgrad import random as frandom
from funcgrad.scipy.stats import norm

__all__ = ["MultiNormalDiagFromLogScale", "multi_normal"]


class MultiNormalDiagFromLogScale:
    """A diagonal normal with mean ``loc`` and scale ``exp(log_scale)`` (optax's)."""

    def __init__(self, loc: Any, log_scale: Any) -> None:
        self._log_scale = fnp.asarray(log_scale)
        self._scale = fnp.exp(self._log_scale)
        self._mean = fnp.asarray(loc)
        self._param_shape = fnp.broadcast_shapes(self._mean.shape, self._scale.shape)

    def sample(self, shape: Sequence[int], key: Any) -> Any:
        """``shape + param_shape`` draws (funcgrad.random's bits, not JAX's)."""
        return (frandom.normal(key, shape=tuple(shape) + self._param_shape,
                               dtype=self._mean.dtype) * self._scale + self._mean)

    def log_prob(self, x: Any) -> Any:
        """The log density of ``x``, summed over the parameter axes."""
        lp = norm.logpdf(x, loc=self._mean, scale=self._scale)
        return fnp.sum(lp, axis=tuple(-(i + 1) for i in range(len(self._param_shape))))

    @property
    def log_scale(self) -> Any:
        return self._log_scale

    @property
    def params(self) -> list[Any]:
        return [self._mean, self._log_scale]


def multi_normal(loc: Any, log_scale: Any) -> MultiNormalDiagFromLogScale:
    """A :class:`MultiNormalDiagFromLogScale` (optax's ``multi_normal``).

    >>> import numpy as np
    >>> d = multi_normal(np.ones(3), np.zeros(3))
    >>> [p.shape for p in d.params]
    [(3,), (3,)]
    """
    return MultiNormalDiagFromLogScale(loc, log_scale)
