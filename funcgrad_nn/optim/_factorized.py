"""optax's Adafactor: ``scale_by_factored_rms`` (the second moment of a matrix-shaped leaf
kept as its row and column means) and the ``adafactor`` optimizer built on it.

>>> import numpy as np
>>> from funcgrad_nn import optim
>>> tx = optim.adafactor(learning_rate=0.1, min_dim_size_to_factor=2)
>>> p = {"w": np.ones((2, 3))}
>>> s = tx.init(p)
>>> s[0].v_row["w"].shape, s[0].v_col["w"].shape     # factored: 2 + 3 numbers, not 6
((2,), (3,))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad_nn.optim._transform import (
    NO_PARAMS_MSG,
    GradientTransformation,
    ScalarOrSchedule,
    _as_dtype,
    _increment,
    _zero_count,
    add_decayed_weights,
    chain,
    ema,
    scale,
    scale_by_learning_rate,
)
from funcgrad_nn.optim._transform_more import clip_by_block_rms, scale_by_param_block_rms

__all__ = ["FactoredState", "scale_by_factored_rms", "adafactor"]


class FactoredState(NamedTuple):
    """The step count and, per leaf, the row and column means of the squared gradients
    (factored leaves) or their full running mean ``v`` (the others); unused slots hold a
    zero of shape (1,), as optax's."""

    count: Any
    v_row: Any
    v_col: Any
    v: Any


def _decay_rate_pow(i: Any, exponent: float = 0.8) -> Any:
    """``1 - (i + 1) ** -exponent``, in float32 as optax computes it."""
    t = fnp.add(fnp.asarray(i), 1).astype(fnp.float32)
    return 1.0 - t ** (-exponent)


def _factored_dims(shape: tuple[int, ...], factored: bool,
                   min_dim_size_to_factor: int) -> tuple[int, int] | None:
    """The two largest axes (second largest first) when both are big enough to factor."""
    if not factored or len(shape) < 2:
        return None
    order = np.argsort(shape)
    if shape[order[-2]] < min_dim_size_to_factor:
        return None
    return int(order[-2]), int(order[-1])


def _abs_sq(x: Any) -> Any:
    return fnp.real(x * fnp.conj(x)) if fnp.iscomplexobj(x) else x * x


def scale_by_factored_rms(
    factored: bool = True, decay_rate: float = 0.8, step_offset: int = 0,
    min_dim_size_to_factor: int = 128, epsilon: float = 1e-30,
    decay_rate_fn: Callable[[Any, Any], Any] = _decay_rate_pow,
) -> GradientTransformation:
    """Scale by a factored estimate of the gradients' root mean square (optax's): for leaves
    whose two largest axes are at least ``min_dim_size_to_factor`` long, running means of the
    squared gradient over each of them; for the others the full running mean. The decay at
    step ``t`` is ``decay_rate_fn(t - step_offset, decay_rate)`` (``1 - (t+1)^-0.8``). Needs
    ``params``.

    >>> import numpy as np
    >>> tx = scale_by_factored_rms()
    >>> tx.update(np.array([2.0, -0.5]), tx.init(np.zeros(2)), np.zeros(2))[0]
    array([ 1., -1.])
    """

    def init(params: Any) -> FactoredState:
        def one(p: Any) -> tuple[Any, Any, Any]:
            small = fnp.zeros_like(p, shape=(1,))
            dims = _factored_dims(tuple(p.shape), factored, min_dim_size_to_factor)
            if dims is None:
                return small, small, fnp.zeros_like(p)
            d1, d0 = dims
            row = tuple(n for i, n in enumerate(p.shape) if i != d0)
            col = tuple(n for i, n in enumerate(p.shape) if i != d1)
            return fnp.zeros_like(p, shape=row), fnp.zeros_like(p, shape=col), small

        leaves, treedef = tree_util.tree_flatten(params)
        parts = [one(p) for p in leaves]
        rows, cols, vs = ([treedef.unflatten([x[i] for x in parts]) for i in range(3)]
                          if leaves else (params, params, params))
        return FactoredState(_zero_count(params), rows, cols, vs)

    def update(updates: Any, state: FactoredState, params: Any = None) -> tuple[Any, Any]:
        if params is None:
            raise ValueError(NO_PARAMS_MSG)
        decay = decay_rate_fn(state.count - step_offset, decay_rate)

        def one(g: Any, v_row: Any, v_col: Any, v: Any, p: Any) -> tuple[Any, ...]:
            dtype = p.dtype
            rate = _as_dtype(decay, v)
            g_sq = _abs_sq(g) + epsilon
            dims = _factored_dims(tuple(p.shape), factored, min_dim_size_to_factor)
            if dims is None:
                new_v = (rate * v + (1.0 - rate) * g_sq).astype(dtype)
                return g * new_v ** -0.5, v_row, v_col, new_v
            d1, d0 = dims
            new_row = (rate * v_row + (1.0 - rate) * fnp.mean(g_sq, axis=d0)).astype(dtype)
            new_col = (rate * v_col + (1.0 - rate) * fnp.mean(g_sq, axis=d1)).astype(dtype)
            reduced_d1 = d1 - 1 if d1 > d0 else d1
            row_factor = (new_row / fnp.mean(new_row, axis=reduced_d1, keepdims=True)) ** -0.5
            col_factor = new_col ** -0.5
            out = g * fnp.expand_dims(row_factor, d0) * fnp.expand_dims(col_factor, d1)
            return out, new_row, new_col, v

        leaves, treedef = tree_util.tree_flatten(updates)
        rows, cols, vs = (treedef.flatten_up_to(t) for t in (state.v_row, state.v_col, state.v))
        ps = treedef.flatten_up_to(params)
        parts = [one(*args) for args in zip(leaves, rows, cols, vs, ps)]
        out, rows, cols, vs = (treedef.unflatten([x[i] for x in parts]) for i in range(4))
        return out, FactoredState(_increment(state.count), rows, cols, vs)

    return GradientTransformation(init, update)


def adafactor(
    learning_rate: ScalarOrSchedule | None = None, min_dim_size_to_factor: int = 128,
    decay_rate: float = 0.8, decay_offset: int = 0, multiply_by_parameter_scale: bool = True,
    clipping_threshold: float | None = 1.0, momentum: float | None = None,
    dtype_momentum: Any = np.float32, weight_decay_rate: ScalarOrSchedule | None = None,
    eps: float = 1e-30, factored: bool = True, weight_decay_mask: Any = None,
) -> GradientTransformation:
    """Adafactor (optax's ``adafactor``): the factored RMS scaling, block-RMS clipping at
    ``clipping_threshold``, the learning rate, scaling by each parameter's RMS
    (``multiply_by_parameter_scale``), optional momentum (an undebiased EMA stored in
    ``dtype_momentum``) and weight decay, then descent. Needs ``params``.

    >>> import numpy as np
    >>> tx = adafactor(learning_rate=0.1)
    >>> np.round(tx.update(np.array([3.0, 4.0]), tx.init(np.ones(2)), np.ones(2))[0], 6)
    array([-0.1, -0.1])
    """
    parts = [scale_by_factored_rms(factored, decay_rate, decay_offset, min_dim_size_to_factor,
                                   eps)]
    if clipping_threshold is not None:
        parts.append(clip_by_block_rms(clipping_threshold))
    if learning_rate is not None:
        parts.append(scale_by_learning_rate(learning_rate, flip_sign=False))
    if multiply_by_parameter_scale:
        parts.append(scale_by_param_block_rms())
    if momentum is not None:
        parts.append(ema(momentum, debias=False, accumulator_dtype=dtype_momentum))
    if weight_decay_rate is not None:
        parts.append(add_decayed_weights(weight_decay_rate, mask=weight_decay_mask))
    parts.append(scale(-1))
    return chain(*parts)
