"""optax.contrib's MoMo and MoMo-Adam (Schaipp et al., 2023; optax 0.2.8): SGD with
momentum, or Adam(W), with a Polyak-type step size ``min(learning_rate, adaptive)`` computed
from the loss value and a lower bound of the loss (0 by default). ``update`` needs the latest
loss as ``value=``; the update it returns already includes the step size.

>>> import numpy as np
>>> import funcgrad, funcgrad.numpy as fnp
>>> from funcgrad_nn.optim import contrib
>>> f = lambda x: fnp.sum(x ** 2)
>>> solver = contrib.momo()
>>> params = np.array([1.0, 2.0, 3.0])
>>> state = solver.init(params)
>>> for _ in range(2):
...     value, grad = funcgrad.value_and_grad(f)(params)
...     updates, state = solver.update(grad, state, params, value=value)
...     params = params + updates
...     print(float(f(params)))
3.5
3.3182132963988913
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

import funcgrad.numpy as fnp
from funcgrad_nn.optim import tree as _tree
from funcgrad_nn.optim._transform import (
    NO_PARAMS_MSG,
    GradientTransformationExtraArgs,
    ScalarOrSchedule,
    _tmap,
    _zero_count,
)
from funcgrad_nn.optim._transform_more import safe_increment

__all__ = ["MomoState", "momo", "MomoAdamState", "momo_adam"]

_EPS = float(np.finfo(float).eps)  # below it the momentum is taken as 0: no step
_NO_VALUE_MSG = ("You need to pass the latest loss value to Momo (update(..., value=loss)). "
                 "Use ``funcgrad.value_and_grad`` for this.")


class MomoState(NamedTuple):
    """State of :func:`momo`."""

    exp_avg: Any
    barf: Any
    gamma: Any
    lb: Any
    count: Any


class MomoAdamState(NamedTuple):
    """State of :func:`momo_adam`."""

    exp_avg: Any
    exp_avg_sq: Any
    barf: Any
    gamma: Any
    lb: Any
    count: Any


def _scalars(params: Any, lower_bound: float) -> tuple[Any, Any, Any, Any]:
    dtype = _tree.dtype(params, "lowest")
    count = _zero_count(params)
    zero = fnp.zeros_like(count, dtype=dtype)
    return zero, zero, zero + fnp.asarray(lower_bound, dtype=dtype), count


def _polyak_t1(numerator: Any, norm: Any) -> Any:
    # optax: max(numerator, 0) / norm, 0 where norm <= eps; the division is guarded so the
    # skipped case warns about no 0/0
    safe = fnp.where(norm <= _EPS, fnp.ones_like(norm), norm)
    return fnp.where(norm <= _EPS, 0.0, fnp.maximum(numerator, 0.0) / safe)


def _check(params: Any, value: Any) -> None:
    if params is None:
        raise ValueError(NO_PARAMS_MSG)
    if value is None:
        raise ValueError(_NO_VALUE_MSG)


def momo(learning_rate: ScalarOrSchedule = 1.0, beta: float = 0.9, lower_bound: float = 0.0,
         weight_decay: float = 0.0, adapt_lower_bound: bool = False
         ) -> GradientTransformationExtraArgs:
    """MoMo: SGD with momentum ``beta`` and step size ``min(learning_rate, Polyak term)``
    (optax.contrib's ``momo``); ``lower_bound`` bounds the loss from below
    (``adapt_lower_bound`` estimates it on the fly); ``weight_decay`` is decoupled.
    ``update(grads, state, params, value=loss)``.

    >>> import numpy as np
    >>> tx = momo()
    >>> p = np.array([1.0, 2.0])
    >>> u, s = tx.update(2 * p, tx.init(p), p, value=5.0)
    >>> u                     # Polyak step 5 / |g|^2 = 0.25
    array([-0.5, -1. ])
    """

    def init(params: Any) -> MomoState:
        barf, gamma, lb, count = _scalars(params, lower_bound)
        return MomoState(_tmap(fnp.zeros_like, params), barf, gamma, lb, count)

    def update(updates: Any, state: MomoState, params: Any = None, *, value: Any = None,
               **extra_args: Any) -> tuple[Any, MomoState]:
        _check(params, value)
        count = state.count
        bt = fnp.where(count == 0, 0.0, beta)
        barf = bt * state.barf + (1 - bt) * fnp.asarray(value, dtype=state.barf.dtype)
        exp_avg = _tmap(lambda ea, g: bt * ea + (1 - bt) * g, state.exp_avg, updates)
        gamma = bt * state.gamma + (1 - bt) * _tree.vdot(updates, params)
        norm = _tree.norm(exp_avg, squared=True)
        iprod = _tree.vdot(exp_avg, params)
        alpha = learning_rate(count) if callable(learning_rate) else learning_rate
        wd = 1 + alpha * weight_decay
        if adapt_lower_bound:
            cap = wd * (barf - gamma) + iprod
            this_lb = fnp.where(cap < wd * state.lb, fnp.maximum(cap / (2 * wd), lower_bound),
                                state.lb)
        else:
            this_lb = state.lb
        tau = fnp.minimum(alpha, _polyak_t1(wd * (barf - this_lb - gamma) + iprod, norm))
        out = _tmap(lambda ea, p: -(alpha * weight_decay) / wd * p - tau * ea, exp_avg, params)
        if adapt_lower_bound:
            new_lb = fnp.maximum((barf + iprod - gamma) - 0.5 * tau * norm, lower_bound)
        else:
            new_lb = state.lb
        return out, MomoState(exp_avg, barf, gamma, new_lb, safe_increment(count))

    return GradientTransformationExtraArgs(init, update)


def momo_adam(learning_rate: ScalarOrSchedule = 1e-2, b1: float = 0.9, b2: float = 0.999,
              eps: float = 1e-8, lower_bound: float = 0.0, weight_decay: float = 0.0,
              adapt_lower_bound: bool = False) -> GradientTransformationExtraArgs:
    """MoMo-Adam: Adam(W) with step size ``min(learning_rate, Polyak term)`` in Adam's
    preconditioned geometry (optax.contrib's ``momo_adam``); arguments as :func:`momo`'s and
    Adam's. ``update(grads, state, params, value=loss)``.

    >>> import numpy as np
    >>> tx = momo_adam()
    >>> p = np.array([1.0, 2.0])
    >>> u, s = tx.update(2 * p, tx.init(p), p, value=5.0)
    >>> np.round(u, 6)          # Adam's direction, capped by the learning rate
    array([-0.01, -0.01])
    """

    def init(params: Any) -> MomoAdamState:
        barf, gamma, lb, count = _scalars(params, lower_bound)
        return MomoAdamState(_tmap(fnp.zeros_like, params), _tmap(fnp.zeros_like, params),
                             barf, gamma, lb, count)

    def update(updates: Any, state: MomoAdamState, params: Any = None, *, value: Any = None,
               **extra_args: Any) -> tuple[Any, MomoAdamState]:
        _check(params, value)
        count = state.count
        count_inc = safe_increment(count)
        barf = b1 * state.barf + (1 - b1) * fnp.asarray(value, dtype=state.barf.dtype)
        exp_avg = _tmap(lambda ea, g: b1 * ea + (1 - b1) * g, state.exp_avg, updates)
        exp_avg_sq = _tmap(lambda v, g: b2 * v + (1 - b2) * g * g, state.exp_avg_sq, updates)
        cf = fnp.asarray(count_inc, dtype=fnp.float64)
        bc2 = fnp.asarray(1 - b2 ** cf, dtype=barf.dtype)
        precond = _tmap(lambda v: eps + fnp.sqrt(v / bc2), exp_avg_sq)
        norm = _tree.vdot(exp_avg, _tmap(lambda ea, pr: ea / pr, exp_avg, precond))
        gamma = b1 * state.gamma + (1 - b1) * _tree.vdot(updates, params)
        iprod = _tree.vdot(exp_avg, params)
        alpha = learning_rate(count) if callable(learning_rate) else learning_rate
        bc1 = fnp.asarray(1 - b1 ** cf, dtype=barf.dtype)
        wd = 1 + alpha * weight_decay
        if adapt_lower_bound:
            cap = wd * (barf - gamma) + iprod
            this_lb = fnp.where(cap < wd * bc1 * state.lb,
                                fnp.maximum(cap / (2 * bc1 * wd), lower_bound), state.lb)
        else:
            this_lb = state.lb
        t1 = _polyak_t1(wd * (barf - bc1 * this_lb - gamma) + iprod, norm)
        tau = fnp.minimum(alpha / bc1, t1)
        out = _tmap(lambda ea, pr, p: -(alpha * weight_decay) / wd * p - tau * ea / pr,
                    exp_avg, precond, params)
        if adapt_lower_bound:
            new_lb = fnp.maximum(((barf + iprod - gamma) - 0.5 * tau * norm) / bc1, lower_bound)
        else:
            new_lb = state.lb
        return out, MomoAdamState(exp_avg, exp_avg_sq, barf, gamma, new_lb, count_inc)

    return GradientTransformationExtraArgs(init, update)
