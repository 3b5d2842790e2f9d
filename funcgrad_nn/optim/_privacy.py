"""optax.contrib's differential privacy: ``differentially_private_aggregate`` (clip each
example's gradient, sum, add Gaussian noise, divide by the batch size) and ``dpsgd``; the
noise has optax's law and key splitting, but funcgrad.random's bits are not JAX's.

>>> import numpy as np
>>> from funcgrad_nn.optim import contrib
>>> tx = contrib.differentially_private_aggregate(l2_norm_clip=1.0, noise_multiplier=0.0, key=0)
>>> per_example = {"w": np.array([[3.0, 4.0], [0.3, 0.4]])}
>>> tx.update(per_example, tx.init(None))[0]["w"]     # (0.6, 0.8) + (0.3, 0.4), halved
array([0.45, 0.6 ])
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

from funcgrad import random as frandom
from funcgrad import tree_util
from funcgrad_nn.optim._transform import (
    GradientTransformation,
    ScalarOrSchedule,
    _as_dtype,
    chain,
    identity,
    scale_by_learning_rate,
    trace,
)
from funcgrad_nn.optim._transform_more import _on_device_of, per_example_global_norm_clip

__all__ = ["DifferentiallyPrivateAggregateState", "differentially_private_aggregate", "dpsgd"]


class DifferentiallyPrivateAggregateState(NamedTuple):
    """The key of the next step's noise."""

    rng_key: Any


def differentially_private_aggregate(l2_norm_clip: float, noise_multiplier: float,
                                     key: Any = None, *,
                                     seed: int | None = None) -> GradientTransformation:
    """DP-SGD's aggregation (Abadi et al. 2016, optax.contrib's): the updates are per-example
    gradients (axis 0 of every leaf is the batch); each example is clipped to global norm
    ``l2_norm_clip``, they are summed, Gaussian noise of standard deviation
    ``l2_norm_clip * noise_multiplier`` is added and the result divided by the batch size.
    ``key`` is a :mod:`funcgrad.random` key or an int (``seed`` is its deprecated name).

    >>> import numpy as np
    >>> tx = differentially_private_aggregate(1.0, 0.5, key=1)
    >>> u, s = tx.update([np.ones((4, 3))], tx.init(None))
    >>> u[0].shape
    (3,)
    """
    if seed is not None:
        warnings.warn('"seed" is deprecated and will be removed in optax 0.2.7, use "key".',
                      DeprecationWarning, stacklevel=2)
        if key is not None:
            raise ValueError("Only one of seed or key can be specified.")
        key = seed
    if key is None:
        warnings.warn("Specifying a key will be required in optax 0.2.7.", stacklevel=2)
        key = 0
    noise_std = l2_norm_clip * noise_multiplier

    def init(params: Any) -> DifferentiallyPrivateAggregateState:
        del params
        return DifferentiallyPrivateAggregateState(
            frandom.PRNGKey(key) if isinstance(key, int) else key)

    def update(updates: Any, state: DifferentiallyPrivateAggregateState,
               params: Any = None) -> tuple[Any, DifferentiallyPrivateAggregateState]:
        del params
        leaves, treedef = tree_util.tree_flatten(updates)
        bsize = leaves[0].shape[0]
        clipped, _ = per_example_global_norm_clip(leaves, l2_norm_clip)
        new_key, *rngs = frandom.split(state.rng_key, len(leaves) + 1)
        noised = [(g + _as_dtype(noise_std, g) * _on_device_of(
            frandom.normal(r, tuple(g.shape), dtype=g.dtype), g)) / bsize
            for g, r in zip(clipped, rngs)]
        return treedef.unflatten(noised), DifferentiallyPrivateAggregateState(new_key)

    return GradientTransformation(init, update)


def dpsgd(learning_rate: ScalarOrSchedule, l2_norm_clip: float, noise_multiplier: float,
          seed: int, momentum: float | None = None,
          nesterov: bool = False) -> GradientTransformation:
    """DP-SGD (optax.contrib's ``dpsgd``): :func:`differentially_private_aggregate`, then
    momentum (``trace``) when given, then ``-learning_rate``. ``update`` takes per-example
    gradients (the batch on axis 0).

    >>> import numpy as np
    >>> tx = dpsgd(0.1, l2_norm_clip=1.0, noise_multiplier=0.0, seed=0)
    >>> tx.update([np.array([[3.0, 4.0], [0.3, 0.4]])], tx.init([np.zeros(2)]))[0]
    [array([-0.045, -0.06 ])]
    """
    return chain(
        differentially_private_aggregate(l2_norm_clip=l2_norm_clip,
                                         noise_multiplier=noise_multiplier, key=seed),
        trace(decay=momentum, nesterov=nesterov) if momentum is not None else identity(),
        scale_by_learning_rate(learning_rate))
