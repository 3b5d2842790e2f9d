"""optax.contrib's Schedule-Free wrappers (``schedule_free``, ``schedule_free_sgd``,
``schedule_free_adamw``, ``schedule_free_eval_params``), Prodigy (``prodigy``), D-Adaptation
AdamW (``dadapt_adamw``), COCOB (``cocob``, ``scale_by_cocob``), Mechanic (``mechanize``) and
MADGRAD (``madgrad``, ``scale_by_madgrad``) and AdEMAMix (``ademamix``,
``simplified_ademamix`` and their scalings), DoG and DoWG (``dog``, ``dowg``, ``scale_by_dog``,
``scale_by_dowg``) and ACProp (``acprop``, ``scale_by_acprop``), with optax
0.2.8's arguments, states and numbers; re-exported by :mod:`funcgrad_nn.optim.contrib`.

>>> import numpy as np
>>> from funcgrad_nn.optim import contrib
>>> tx = contrib.schedule_free_sgd(0.1)
>>> p = np.array([1.0]); s = tx.init(p)
>>> u, s = tx.update(np.array([1.0]), s, p); p = p + u
>>> p, contrib.schedule_free_eval_params(s, p)
(array([0.9]), array([0.9]))
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad_nn.optim._moments import (
    bias_correction,
    update_moment,
    update_moment_per_elem_norm,
)
from funcgrad_nn.optim._schedules import warmup_constant_schedule
from funcgrad_nn.optim._transform import (
    NO_PARAMS_MSG,
    GradientTransformation,
    GradientTransformationExtraArgs,
    ScalarOrSchedule,
    _call_update,
    _tmap,
    add_decayed_weights,
    chain,
    identity,
    scale_by_learning_rate,
    scale_by_rms,
    sgd,
)
from funcgrad_nn.optim._transform_more import ScaleByBeliefState, safe_increment

__all__ = ["ScheduleFreeState", "schedule_free", "schedule_free_sgd", "schedule_free_adamw",
           "schedule_free_eval_params", "ProdigyState", "prodigy", "DAdaptAdamWState",
           "dadapt_adamw", "COCOBState", "scale_by_cocob", "cocob", "MechanicState",
           "mechanize", "MadgradState", "scale_by_madgrad", "madgrad", "ScaleByAdemamixState",
           "scale_by_ademamix", "ademamix", "ScaleBySimplifiedAdEMAMixState",
           "scale_by_simplified_ademamix", "simplified_ademamix", "DoGState", "scale_by_dog",
           "dog", "DoWGState", "scale_by_dowg", "dowg", "scale_by_acprop", "acprop"]


def _lowest_dtype_leaf(params: Any) -> Any:
    """The leaf of the lowest-precision dtype (optax's ``tree.dtype(params, "lowest")``): the
    state's scalars take its dtype and device."""
    leaves = [fnp.asarray(x) for x in tree_util.tree_leaves(params)]
    if not leaves:
        raise ValueError("schedule_free and prodigy need at least one parameter array")
    return min(leaves, key=lambda x: np.dtype(x.dtype).itemsize)


def _scalar(like: Any, value: Any, dtype: Any = None) -> Any:
    return fnp.full_like(like, value, dtype=like.dtype if dtype is None else dtype, shape=())


class ScheduleFreeState(NamedTuple):
    """Schedule-Free's state: ``b1``, the sum of the step weights, the step count (from 1),
    the largest learning rate so far, the base optimizer's state and the sequence ``z``."""

    b1: Any
    weight_sum: Any
    step_count: Any
    max_lr: Any
    base_optimizer_state: Any
    z: Any


def schedule_free_eval_params(state: Any, params: Any) -> Any:
    """The parameters to evaluate a Schedule-Free model at, ``x = (y - (1 - b1) z) / b1``
    (training steps the interpolation ``y``).

    >>> import numpy as np
    >>> tx = schedule_free_adamw(0.1)
    >>> p = np.array([1.0, -1.0]); s = tx.init(p)
    >>> u, s = tx.update(np.array([0.5, 0.5]), s, p)
    >>> schedule_free_eval_params(s, p + u)
    array([ 0.9, -1.1])
    """
    b1 = getattr(state, "b1", None)
    z = getattr(state, "z", None)
    if b1 is None or z is None:
        raise ValueError("schedule_free_eval_params requires a ScheduleFreeState as input.")
    return _tmap(lambda y, zi: (y - (1.0 - b1) * zi) / b1, params, z)


def schedule_free(base_optimizer: GradientTransformation, learning_rate: ScalarOrSchedule,
                  b1: float = 0.9, weight_lr_power: float = 2.0,
                  state_dtype: Any = None) -> GradientTransformationExtraArgs:
    """Schedule-Free (Defazio et al. 2024, optax.contrib's ``schedule_free``): the base
    optimizer steps a sequence ``z``; ``x`` averages the ``z`` with weights
    ``max_lr ** weight_lr_power``; the parameters trained are ``y = b1 x + (1 - b1) z``
    (evaluate at ``x``: :func:`schedule_free_eval_params`). ``learning_rate`` must be the
    base optimizer's (a schedule is called with the count from 1, as optax's). Use
    ``b1 = 0`` momentum in the base optimizer.

    >>> import numpy as np
    >>> tx = schedule_free(sgd(0.5), learning_rate=0.5)
    >>> p = np.array([2.0]); s = tx.init(p)
    >>> for _ in range(2):
    ...     u, s = tx.update(2 * p, s, p); p = p + u
    >>> np.round(p, 6), np.round(schedule_free_eval_params(s, p), 6)
    (array([0.]), array([0.]))
    """

    def init(params: Any) -> ScheduleFreeState:
        leaf = _lowest_dtype_leaf(params)
        z = params if state_dtype is None else _tmap(lambda x: x.astype(state_dtype), params)
        z = _tmap(lambda t: fnp.array(t, copy=True), z)
        return ScheduleFreeState(
            b1=_scalar(leaf, b1), weight_sum=_scalar(leaf, 0.0),
            step_count=_scalar(leaf, 1, np.int32), max_lr=_scalar(leaf, 0.0),
            base_optimizer_state=base_optimizer.init(params), z=z)

    def update(grads: Any, state: ScheduleFreeState, params: Any = None,
               **extra_args: Any) -> tuple[Any, ScheduleFreeState]:
        if params is None:
            raise ValueError(NO_PARAMS_MSG)
        lr = learning_rate
        if callable(learning_rate):
            lr = fnp.asarray(learning_rate(state.step_count)).astype(state.max_lr.dtype)
        max_lr = fnp.maximum(state.max_lr, lr)
        weight = max_lr ** weight_lr_power
        total = state.weight_sum + weight
        # optax's nan_to_num(weight / total, nan=0): 0 / 0 (a zero learning rate so far)
        # weighs 0, without dividing by zero
        ck = fnp.where(fnp.isnan(weight) | fnp.isnan(total), fnp.nan,
                       fnp.where(total == 0, 0.0, weight / fnp.where(total == 0, 1.0, total)))
        base_updates, base_state = _call_update(base_optimizer, grads,
                                                state.base_optimizer_state, params, extra_args)
        z = _tmap(lambda zi, ui: fnp.asarray(zi + ui).astype(zi.dtype), state.z, base_updates)
        prev_x = _tmap(lambda y, zi: (y - (1.0 - b1) * zi) / b1, params, state.z)
        x = _tmap(lambda xi, zi: (1.0 - ck) * xi + ck * zi, prev_x, z)
        new_params = _tmap(lambda xi, zi: b1 * xi + (1.0 - b1) * zi, x, z)
        updates = _tmap(lambda n, p: (n - p).astype(p.dtype), new_params, params)
        return updates, ScheduleFreeState(
            b1=state.b1, weight_sum=total.astype(state.weight_sum.dtype),
            step_count=safe_increment(state.step_count),
            max_lr=fnp.asarray(max_lr).astype(state.max_lr.dtype),
            base_optimizer_state=base_state, z=z)

    return GradientTransformationExtraArgs(init, update)


def schedule_free_sgd(learning_rate: float = 1.0, warmup_steps: int | None = None,
                      b1: float = 0.9, weight_decay: float | None = None,
                      weight_lr_power: float = 2.0,
                      state_dtype: Any = None) -> GradientTransformationExtraArgs:
    """Schedule-Free SGD (optax.contrib's): :func:`schedule_free` over ``sgd``, with a linear
    warm-up of ``warmup_steps`` and optional (coupled) ``weight_decay``.

    >>> import numpy as np
    >>> tx = schedule_free_sgd(0.5, warmup_steps=2)
    >>> p = np.array([1.0]); s = tx.init(p)
    >>> u, s = tx.update(np.array([1.0]), s, p)
    >>> u                                  # the warm-up's first learning rate is 0
    array([0.])
    """
    if warmup_steps is not None:
        learning_rate = warmup_constant_schedule(init_value=0, peak_value=learning_rate,
                                                 warmup_steps=warmup_steps)
    optimizer = sgd(learning_rate)
    if weight_decay is not None:
        optimizer = chain(add_decayed_weights(weight_decay), optimizer)
    return schedule_free(optimizer, learning_rate=learning_rate, b1=b1,
                         weight_lr_power=weight_lr_power, state_dtype=state_dtype)


def schedule_free_adamw(learning_rate: float = 0.0025, warmup_steps: int | None = None,
                        b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
                        weight_decay: float = 0.0, weight_lr_power: float = 2.0,
                        state_dtype: Any = None) -> GradientTransformationExtraArgs:
    """Schedule-Free AdamW (optax.contrib's): :func:`schedule_free` over a bias-corrected
    RMS scaling (``eps`` outside the root), decoupled ``weight_decay`` and the learning rate.

    >>> import numpy as np
    >>> tx = schedule_free_adamw(0.1, weight_decay=0.01)
    >>> p = np.array([1.0, -1.0]); s = tx.init(p)
    >>> u, s = tx.update(np.array([0.5, 0.5]), s, p)
    >>> np.round(p + u, 6)
    array([ 0.899, -1.099])
    """
    if warmup_steps is not None:
        learning_rate = warmup_constant_schedule(init_value=0, peak_value=learning_rate,
                                                 warmup_steps=warmup_steps)
    optimizer = chain(scale_by_rms(decay=b2, eps=eps, eps_in_sqrt=False, bias_correction=True),
                      add_decayed_weights(weight_decay), scale_by_learning_rate(learning_rate))
    return schedule_free(optimizer, learning_rate=learning_rate, b1=b1,
                         weight_lr_power=weight_lr_power, state_dtype=state_dtype)


class ProdigyState(NamedTuple):
    """Prodigy's moments, the weighted gradient sum, the initial parameters, the estimated
    learning rate ``d``, the weighted numerator and the step count."""

    exp_avg: Any
    exp_avg_sq: Any
    grad_sum: Any
    params0: Any
    estim_lr: Any
    numerator_weighted: Any
    count: Any


def _tree_vdot(a: Any, b: Any) -> Any:
    total = None
    for x, y in zip(tree_util.tree_leaves(a), tree_util.tree_leaves(b)):
        d = fnp.vdot(fnp.reshape(x, (-1,)), fnp.reshape(y, (-1,)))
        total = d if total is None else fnp.add(total, d)
    return total


def prodigy(learning_rate: ScalarOrSchedule = 1.0, betas: tuple[float, float] = (0.9, 0.999),
            beta3: float | None = None, eps: float = 1e-8, estim_lr0: float = 1e-6,
            estim_lr_coef: float = 1.0, weight_decay: float = 0.0,
            safeguard_warmup: bool = False) -> GradientTransformationExtraArgs:
    """Prodigy (Mishchenko & Defazio 2023, optax.contrib's ``prodigy``): Adam whose step size
    ``d`` is estimated from the distance travelled from the initial parameters (starting at
    ``estim_lr0``, never decreasing); ``learning_rate`` multiplies it (1 by default).

    >>> import numpy as np
    >>> tx = prodigy()
    >>> p = np.array([1.0, -1.0]); s = tx.init(p)
    >>> for _ in range(3):
    ...     u, s = tx.update(2 * p, s, p); p = p + u
    >>> float(s.estim_lr), np.round(p, 6)     # d grows once the distance outweighs eps
    (1e-06, array([ 0.999997, -0.999997]))
    """
    beta1, beta2 = betas
    if beta3 is None:
        beta3 = beta2 ** 0.5

    def init(params: Any) -> ProdigyState:
        leaf = _lowest_dtype_leaf(params)
        zeros = _tmap(fnp.zeros_like, params)
        return ProdigyState(zeros, zeros, zeros, params, _scalar(leaf, estim_lr0),
                            _scalar(leaf, 0.0), _scalar(leaf, 0, np.int32))

    def update(updates: Any, state: ProdigyState, params: Any = None,
               **extra_args: Any) -> tuple[Any, ProdigyState]:
        del extra_args
        if params is None:
            raise ValueError(NO_PARAMS_MSG)
        count_inc = safe_increment(state.count)
        sched = learning_rate(state.count) if callable(learning_rate) else learning_rate
        estim_lr = state.estim_lr
        t = fnp.asarray(count_inc).astype(estim_lr.dtype)
        bc = (1 - beta2 ** t) ** 0.5 / (1 - beta1 ** t)
        dlr = fnp.asarray(estim_lr * sched * bc).astype(estim_lr.dtype)
        dg = _tmap(lambda g: estim_lr * g, updates)
        param_diff = _tmap(lambda p0, p: p0 - p, state.params0, params)
        numerator_acum = _tree_vdot(updates, param_diff)
        exp_avg = _tmap(lambda m, d: beta1 * m + (1 - beta1) * d, state.exp_avg, dg)
        exp_avg_sq = _tmap(lambda v, d: beta2 * v + (1 - beta2) * d * d, state.exp_avg_sq, dg)
        scale_g = estim_lr if safeguard_warmup else dlr
        grad_sum = _tmap(lambda sk, d: beta3 * sk + scale_g * d / estim_lr0, state.grad_sum, dg)
        numerator_weighted = (beta3 * state.numerator_weighted
                              + estim_lr / estim_lr0 * dlr * numerator_acum)
        denominator = None
        for x in tree_util.tree_leaves(grad_sum):
            s = fnp.sum(fnp.abs(x))
            denominator = s if denominator is None else denominator + s
        lr_estimate = estim_lr_coef * numerator_weighted / denominator
        new_estim_lr = fnp.maximum(estim_lr, lr_estimate)
        p_update = _tmap(
            lambda m, v, p: -weight_decay * dlr * p - dlr * m / (fnp.sqrt(v) + new_estim_lr * eps),
            exp_avg, exp_avg_sq, params)
        return p_update, ProdigyState(
            exp_avg, exp_avg_sq, grad_sum, state.params0,
            fnp.asarray(new_estim_lr).astype(estim_lr.dtype),
            fnp.asarray(numerator_weighted).astype(estim_lr.dtype), count_inc)

    return GradientTransformationExtraArgs(init, update)


class DAdaptAdamWState(NamedTuple):
    """D-Adaptation AdamW's moments, the weighted gradient sum, the estimated learning rate
    ``d``, the weighted numerator and the step count."""

    exp_avg: Any
    exp_avg_sq: Any
    grad_sum: Any
    estim_lr: Any
    numerator_weighted: Any
    count: Any


def dadapt_adamw(learning_rate: ScalarOrSchedule = 1.0,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 estim_lr0: float = 1e-6,
                 weight_decay: float = 0.0) -> GradientTransformationExtraArgs:
    """D-Adaptation AdamW (Defazio & Mishchenko 2023, optax.contrib's ``dadapt_adamw``):
    AdamW whose step size ``d`` is estimated from the weighted gradient sums (starting at
    ``estim_lr0``, never decreasing); ``learning_rate`` multiplies it.

    >>> import numpy as np
    >>> tx = dadapt_adamw()
    >>> p = np.array([1.0, -1.0]); s = tx.init(p)
    >>> for _ in range(3):
    ...     u, s = tx.update(2 * p, s, p); p = p + u
    >>> np.round(p, 8)
    array([ 0.99999541, -0.99999541])
    """
    beta1, beta2 = betas
    sb2 = beta2 ** 0.5

    def init(params: Any) -> DAdaptAdamWState:
        leaf = _lowest_dtype_leaf(params)
        zeros = _tmap(fnp.zeros_like, params)
        return DAdaptAdamWState(zeros, zeros, zeros, _scalar(leaf, estim_lr0),
                                _scalar(leaf, 0.0), _scalar(leaf, 0, np.int32))

    def update(updates: Any, state: DAdaptAdamWState, params: Any = None,
               **extra_args: Any) -> tuple[Any, DAdaptAdamWState]:
        del extra_args
        if params is None:
            raise ValueError(NO_PARAMS_MSG)
        sched = learning_rate(state.count) if callable(learning_rate) else learning_rate
        count_inc = safe_increment(state.count)
        t = fnp.asarray(count_inc).astype(state.estim_lr.dtype)
        bc = (1 - beta2 ** t) ** 0.5 / (1 - beta1 ** t)
        dlr = fnp.asarray(state.estim_lr * sched * bc).astype(state.numerator_weighted.dtype)
        s_weighted = _tmap(lambda sk, v: sk / (fnp.sqrt(v) + eps), state.grad_sum,
                           state.exp_avg_sq)
        numerator_acum = _tree_vdot(updates, s_weighted)
        exp_avg = _tmap(lambda m, g: beta1 * m + (1 - beta1) * dlr * g, state.exp_avg, updates)
        exp_avg_sq = _tmap(lambda v, g: beta2 * v + (1 - beta2) * g * g, state.exp_avg_sq,
                           updates)
        grad_sum = _tmap(lambda sk, g: sb2 * sk + (1 - sb2) * dlr * g, state.grad_sum, updates)
        l1 = None
        for x in tree_util.tree_leaves(grad_sum):
            s = fnp.sum(fnp.abs(x))
            l1 = s if l1 is None else l1 + s
        numerator_weighted = sb2 * state.numerator_weighted + (1 - sb2) * dlr * numerator_acum
        estim_lr = fnp.maximum(state.estim_lr, numerator_weighted / ((1 - sb2) * l1))
        p_update = _tmap(lambda m, v, p: -weight_decay * dlr * p - m / (fnp.sqrt(v) + eps),
                         exp_avg, exp_avg_sq, params)
        dt = state.estim_lr.dtype
        return p_update, DAdaptAdamWState(
            exp_avg, exp_avg_sq, grad_sum, fnp.asarray(estim_lr).astype(dt),
            fnp.asarray(numerator_weighted).astype(dt), count_inc)

    return GradientTransformationExtraArgs(init, update)


class COCOBState(NamedTuple):
    """COCOB's initial parameters, the negated gradient sum, the largest gradient seen, the
    sum of absolute gradients and the reward, per leaf."""

    init_particles: Any
    cumulative_gradients: Any
    scale: Any
    subgradients: Any
    reward: Any


def scale_by_cocob(alpha: float = 100.0, eps: float = 1e-8) -> GradientTransformation:
    """COCOB-Backprop's step (Orabona & Tommasi 2017, optax.contrib's ``scale_by_cocob``):
    coin betting from the initial parameters, no learning rate.

    >>> import numpy as np
    >>> tx = scale_by_cocob()
    >>> p = np.array([1.0]); u, s = tx.update(np.array([2.0]), tx.init(p), p)
    >>> u
    array([-0.01])
    """

    def init(params: Any) -> COCOBState:
        zeros = _tmap(fnp.zeros_like, params)
        return COCOBState(params, zeros, _tmap(lambda x: fnp.full_like(x, eps), params), zeros,
                          zeros)

    def update(updates: Any, state: COCOBState, params: Any = None) -> tuple[Any, COCOBState]:
        if params is None:
            raise ValueError(NO_PARAMS_MSG)
        p0 = state.init_particles
        scale = _tmap(lambda big_l, c: fnp.maximum(big_l, fnp.abs(c)), state.scale, updates)
        subgradients = _tmap(lambda big_g, c: big_g + fnp.abs(c), state.subgradients, updates)
        reward = _tmap(lambda r, c, p, q: fnp.maximum(r - c * (p - q), 0), state.reward,
                       updates, params, p0)
        cumulative = _tmap(lambda big_c, c: big_c - c, state.cumulative_gradients, updates)
        new_updates = _tmap(
            lambda p, q, big_c, big_l, big_g, r:
                -p + (q + big_c / (big_l * fnp.maximum(big_g + big_l, alpha * big_l)) * (big_l + r)),
            params, p0, cumulative, scale, subgradients, reward)
        return new_updates, COCOBState(p0, cumulative, scale, subgradients, reward)

    return GradientTransformation(init, update)


def cocob(learning_rate: ScalarOrSchedule = 1.0, alpha: float = 100.0, eps: float = 1e-8,
          weight_decay: float = 0.0, mask: Any = None) -> GradientTransformationExtraArgs:
    """COCOB (optax.contrib's ``cocob``): decoupled ``weight_decay``, the gradient times
    ``learning_rate`` (no sign flip), then :func:`scale_by_cocob`.

    >>> import numpy as np
    >>> tx = cocob()
    >>> p = np.array([1.0]); u, s = tx.update(np.array([2.0]), tx.init(p), p)
    >>> u
    array([-0.01])
    """
    return chain(add_decayed_weights(weight_decay, mask),
                 scale_by_learning_rate(learning_rate, flip_sign=False),
                 scale_by_cocob(alpha, eps))


def _tree_norm(tree: Any) -> Any:
    sq = None
    for x in tree_util.tree_leaves(tree):
        s = fnp.sum(fnp.real(x * fnp.conj(x)))
        sq = s if sq is None else sq + s
    return fnp.sqrt(sq)


class MechanicState(NamedTuple):
    """Mechanic's state: the base optimizer's, the step count, the per-beta statistics
    ``r, m, v, s`` and the reference point ``x0``."""

    base_optimizer_state: Any
    count: Any
    r: Any
    m: Any
    v: Any
    s: Any
    x0: Any


def mechanize(base_optimizer: GradientTransformation, weight_decay: float = 0.01,
              eps: float = 1e-8, s_init: float = 1e-6,
              num_betas: int = 6) -> GradientTransformationExtraArgs:
    """Mechanic (Cutkosky et al. 2023, optax.contrib's ``mechanize``): learns a scale for the
    base optimizer's updates, measured from the first parameters, with ``num_betas``
    parallel coin-betting estimates.

    >>> import numpy as np
    >>> tx = mechanize(sgd(0.1))
    >>> p = np.array([1.0, -1.0]); s = tx.init(p)
    >>> for _ in range(3):
    ...     u, s = tx.update(2 * p, s, p); p = p + u
    >>> np.round(p, 8)
    array([ 0.9999992, -0.9999992])
    """

    def init(params: Any) -> MechanicState:
        leaf = _lowest_dtype_leaf(params)
        zeros = fnp.zeros_like(leaf, shape=(num_betas,))
        return MechanicState(base_optimizer.init(params), _scalar(leaf, 0, np.int32), zeros,
                             zeros, zeros, fnp.full_like(leaf, s_init, shape=(num_betas,)),
                             params)

    def update(updates: Any, state: MechanicState, params: Any = None,
               **extra_args: Any) -> tuple[Any, MechanicState]:
        if params is None:
            raise ValueError(NO_PARAMS_MSG)
        neg_updates, base_state = _call_update(base_optimizer, updates,
                                               state.base_optimizer_state, params, extra_args)
        first = state.count == 0
        x0 = _tmap(lambda p, q: fnp.where(first, p, q), params, state.x0)
        s_sum = fnp.sum(state.s)
        grad_norm, param_norm = _tree_norm(updates), _tree_norm(params)
        updates = _tmap(lambda g, p: g + weight_decay * s_sum * grad_norm / (param_norm + eps) * p,
                        updates, params)
        delta_prev = _tmap(lambda xt, q: (q - xt) / (s_sum + eps), params, x0)
        delta = _tmap(lambda d, u: d - u, delta_prev, neg_updates)
        h = _tree_vdot(updates, delta_prev)
        clipped_h = fnp.clip(h, -state.m, state.m)
        # 1 - 0.1 ** k for k = 1..num_betas, made on the state's device (a host array would
        # not mix with device arrays under jit), in float64 then cast as optax's
        k = fnp.cumsum(fnp.ones_like(state.s, dtype=np.float64))
        betas = (1.0 - 0.1 ** k).astype(state.s.dtype)
        m = fnp.maximum(betas * state.m, fnp.abs(h) + eps)
        v = betas ** 2 * state.v + h ** 2
        r = betas * state.r + clipped_h * state.s
        wealth = s_init / num_betas * m + fnp.maximum(0.0, r)
        s = wealth / (fnp.sqrt(v) + eps)
        s_total = fnp.sum(s)
        new_params = _tmap(lambda q, d: q - s_total * d, x0, delta)
        out = _tmap(lambda n, p: n - p, new_params, params)
        dt = state.s.dtype
        return out, MechanicState(base_state, safe_increment(state.count), r.astype(dt),
                                  m.astype(dt), v.astype(dt), s.astype(dt), x0)

    return GradientTransformationExtraArgs(init, update)


class MadgradState(NamedTuple):
    """MADGRAD's step count, weighted sums of squared gradients and of gradients, and the
    initial parameters."""

    count: Any
    grad_sum_sq: Any
    s: Any
    x0: Any


def scale_by_madgrad(learning_rate: ScalarOrSchedule, momentum: float = 0.9,
                     eps: float = 1e-6) -> GradientTransformation:
    """MADGRAD's step (Defazio & Jelassi 2021, optax.contrib's ``scale_by_madgrad``): dual
    averaging with a cube-root scaling and momentum (includes the learning rate).

    >>> import numpy as np
    >>> tx = scale_by_madgrad(0.1)
    >>> p = np.array([1.0]); u, s = tx.update(np.array([2.0]), tx.init(p), p)
    >>> np.round(u, 6)
    array([-0.027144])
    """

    def init(params: Any) -> MadgradState:
        zeros = _tmap(fnp.zeros_like, params)
        return MadgradState(_scalar(_lowest_dtype_leaf(params), 0, np.int32), zeros, zeros,
                            params)

    def update(updates: Any, state: MadgradState,
               params: Any = None) -> tuple[Any, MadgradState]:
        if params is None:
            raise ValueError(NO_PARAMS_MSG)
        count = state.count
        lr = learning_rate(count) if callable(learning_rate) else learning_rate
        # optax takes jnp.sqrt of the int32 count, which JAX computes in float32 (even with
        # x64): the same rounding here keeps the trajectories equal
        lamb = (lr + eps) * fnp.sqrt(fnp.asarray(count + 1).astype(np.float32))
        grad_sum_sq = _tmap(lambda q, g: q + (lamb * g ** 2).astype(g.dtype),
                            state.grad_sum_sq, updates)
        s = _tmap(lambda sv, g: sv + (lamb * g).astype(g.dtype), state.s, updates)
        z = _tmap(lambda q, sv, gs: q - sv / (fnp.cbrt(gs) + eps), state.x0, s, grad_sum_sq)
        x_new = _tmap(lambda zv, x: (1 - momentum) * zv + momentum * x, z, params)
        out = _tmap(lambda n, o: n - o, x_new, params)
        return out, MadgradState(safe_increment(count), grad_sum_sq, s, state.x0)

    return GradientTransformation(init, update)


def madgrad(learning_rate: ScalarOrSchedule, momentum: float = 0.9, weight_decay: float = 0.0,
            eps: float = 1e-6) -> GradientTransformationExtraArgs:
    """MADGRAD (optax.contrib's ``madgrad``): coupled ``weight_decay``, then
    :func:`scale_by_madgrad`.

    >>> import numpy as np
    >>> tx = madgrad(0.1)
    >>> p = np.array([1.0]); u, s = tx.update(np.array([2.0]), tx.init(p), p)
    >>> np.round(u, 6)
    array([-0.027144])
    """
    return chain(add_decayed_weights(weight_decay),
                 scale_by_madgrad(learning_rate=learning_rate, momentum=momentum, eps=eps))


class ScaleByAdemamixState(NamedTuple):
    """AdEMAMix's step counts and its fast (``m1``), slow (``m2``) and second (``nu``)
    moments."""

    count: Any
    count_m2: Any
    m1: Any
    m2: Any
    nu: Any


def scale_by_ademamix(b1: float = 0.9, b2: float = 0.999, b3: ScalarOrSchedule = 0.9999,
                      alpha: ScalarOrSchedule = 6.0, eps: float = 1e-8, eps_root: float = 0.0,
                      mu_dtype: Any = None) -> GradientTransformation:
    """AdEMAMix's scaling (Pagliardini et al. 2024, optax.contrib's): Adam's bias-corrected
    fast moment plus ``alpha`` times a slow, uncorrected moment of decay ``b3`` (``b3`` and
    ``alpha`` may be schedules of the step count).

    >>> import numpy as np
    >>> tx = scale_by_ademamix()
    >>> np.round(tx.update(np.array([2.0]), tx.init(np.zeros(1)))[0], 6)
    array([1.0006])
    """

    def init(params: Any) -> ScaleByAdemamixState:
        leaf = _lowest_dtype_leaf(params)
        zeros = _tmap(lambda x: fnp.zeros_like(x, dtype=mu_dtype), params)
        count = _scalar(leaf, 0, np.int32)
        return ScaleByAdemamixState(count, count, zeros, zeros, zeros)

    def update(updates: Any, state: ScaleByAdemamixState,
               params: Any = None) -> tuple[Any, ScaleByAdemamixState]:
        del params
        c_b3 = b3(state.count_m2) if callable(b3) else b3
        c_alpha = alpha(state.count_m2) if callable(alpha) else alpha
        m1 = update_moment(updates, state.m1, b1, 1)
        m2 = update_moment(updates, state.m2, c_b3, 1)
        nu = update_moment_per_elem_norm(updates, state.nu, b2, 2)
        count_inc = safe_increment(state.count)
        m1_hat = bias_correction(m1, b1, count_inc)
        nu_hat = bias_correction(nu, b2, count_inc)
        out = _tmap(lambda a, b, v: (a + c_alpha * b) / (fnp.sqrt(v + eps_root) + eps),
                    m1_hat, m2, nu_hat)
        return out, ScaleByAdemamixState(count_inc, safe_increment(state.count_m2), m1, m2, nu)

    return GradientTransformation(init, update)


def ademamix(learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.999,
             b3: ScalarOrSchedule = 0.9999, alpha: ScalarOrSchedule = 5.0, eps: float = 1e-8,
             eps_root: float = 0.0, mu_dtype: Any = None, weight_decay: float = 0.0,
             mask: Any = None) -> GradientTransformationExtraArgs:
    """AdEMAMix (optax.contrib's ``ademamix``): :func:`scale_by_ademamix`, decoupled
    ``weight_decay``, then ``-learning_rate``.

    >>> import numpy as np
    >>> tx = ademamix(0.1)
    >>> np.round(tx.update(np.array([2.0]), tx.init(np.zeros(1)), np.zeros(1))[0], 6)
    array([-0.10005])
    """
    return chain(scale_by_ademamix(b1=b1, b2=b2, b3=b3, alpha=alpha, eps=eps,
                                   eps_root=eps_root, mu_dtype=mu_dtype),
                 add_decayed_weights(weight_decay, mask), scale_by_learning_rate(learning_rate))


class ScaleBySimplifiedAdEMAMixState(NamedTuple):
    """Simplified AdEMAMix's step count, momentum sum ``m`` and second moment ``n``."""

    t: Any
    m: Any
    n: Any


def scale_by_simplified_ademamix(b1: float = 0.99, b2: float = 0.95,
                                 alpha: ScalarOrSchedule = 0.0, eps: float = 1e-8,
                                 eps_root: float = 0.0) -> GradientTransformation:
    """Simplified AdEMAMix's scaling (optax.contrib's): ``m = g + b1 m`` (a sum, not an
    average), ``(m + alpha g) / (sqrt(n_hat) + eps)`` with Adam's corrected second moment.

    >>> import numpy as np
    >>> tx = scale_by_simplified_ademamix()
    >>> tx.update(np.array([2.0]), tx.init(np.zeros(1)))[0]
    array([1.])
    """

    def init(params: Any) -> ScaleBySimplifiedAdEMAMixState:
        zeros = _tmap(fnp.zeros_like, params)
        return ScaleBySimplifiedAdEMAMixState(_scalar(_lowest_dtype_leaf(params), 0, np.int32),
                                              zeros, zeros)

    def update(updates: Any, state: ScaleBySimplifiedAdEMAMixState,
               params: Any = None) -> tuple[Any, ScaleBySimplifiedAdEMAMixState]:
        del params
        c_alpha = alpha(state.t) if callable(alpha) else alpha
        m = _tmap(lambda g, mm: g + b1 * mm, updates, state.m)
        # optax's lerp(b2, g * g, n): g^2 + b2 (n - g^2)
        n = _tmap(lambda g, nn: g * g + b2 * (nn - g * g), updates, state.n)
        t = safe_increment(state.t)
        n_hat = bias_correction(n, b2, t)
        out = _tmap(lambda mm, g, nh: (mm + c_alpha * g) / (fnp.sqrt(nh + eps_root) + eps),
                    m, updates, n_hat)
        return out, ScaleBySimplifiedAdEMAMixState(t, m, n)

    return GradientTransformation(init, update)


def simplified_ademamix(learning_rate: ScalarOrSchedule, b1: float = 0.99, b2: float = 0.95,
                        alpha: ScalarOrSchedule = 0.0, eps: float = 1e-8, eps_root: float = 0.0,
                        weight_decay: float = 0.0,
                        mask: Any = None) -> GradientTransformationExtraArgs:
    """Simplified AdEMAMix (optax.contrib's ``simplified_ademamix``).

    >>> import numpy as np
    >>> tx = simplified_ademamix(0.1)
    >>> tx.update(np.array([2.0]), tx.init(np.zeros(1)), np.zeros(1))[0]
    array([-0.1])
    """
    return chain(scale_by_simplified_ademamix(b1=b1, b2=b2, alpha=alpha, eps=eps,
                                              eps_root=eps_root),
                 add_decayed_weights(weight_decay, mask), scale_by_learning_rate(learning_rate))


class DoGState(NamedTuple):
    """DoG's first-step flag, initial parameters, largest distance from them and sum of
    squared gradient norms."""

    is_init_step: Any
    init_params: Any
    max_dist: Any
    sum_sq_norm_grads: Any


def scale_by_dog(init_step: tuple[str, Any], eps: float = 1e-8) -> GradientTransformation:
    """DoG's step size (Ivgi et al. 2023, optax.contrib's ``scale_by_dog``): the largest
    distance from the initial parameters over the root of the summed squared gradient
    norms. ``init_step`` is ``("distance", r)``, ``("heuristic", c)`` (``r = c (1 + |x0|)``)
    or ``("learning_rate", lr)`` (the first step's size).

    >>> import numpy as np
    >>> tx = scale_by_dog(("learning_rate", 0.1))
    >>> p = np.array([1.0]); tx.update(np.array([2.0]), tx.init(p), p)[0]
    array([0.2])
    """
    kind, value = init_step
    if kind not in ("distance", "heuristic", "learning_rate"):
        raise ValueError(f"Invalid init_step specification for scale_by_dog: "
                         f"init_step_type={kind!r}")

    def init(params: Any) -> DoGState:
        leaf = _lowest_dtype_leaf(params)
        if kind == "distance":
            r_eps = _scalar(leaf, value)
        elif kind == "heuristic":
            r_eps = fnp.asarray(value * (1 + _tree_norm(params))).astype(leaf.dtype)
        else:
            r_eps = _scalar(leaf, 0.0)
        return DoGState(fnp.ones_like(leaf, dtype=bool, shape=()), params, r_eps,
                        _scalar(leaf, 0.0))

    def update(updates: Any, state: DoGState, params: Any = None) -> tuple[Any, DoGState]:
        if params is None:
            raise ValueError(NO_PARAMS_MSG)
        dist = _tree_norm(_tmap(lambda a, b: a - b, state.init_params, params))
        max_dist = fnp.maximum(state.max_dist, dist)
        sum_sq = state.sum_sq_norm_grads + _tree_norm(updates) ** 2
        lr = max_dist / fnp.sqrt(sum_sq + eps)
        if kind == "learning_rate":
            lr = fnp.where(state.is_init_step, value, lr)
        dt = state.max_dist.dtype
        return _tmap(lambda u: lr * u, updates), DoGState(
            fnp.zeros_like(state.is_init_step), state.init_params,
            fnp.asarray(max_dist).astype(dt), fnp.asarray(sum_sq).astype(dt))

    return GradientTransformation(init, update)


def dog(learning_rate: ScalarOrSchedule = 1.0, init_step: tuple[str, Any] = ("heuristic", 1e-6),
        eps: float = 1e-8, weight_decay: float | None = None,
        mask: Any = None) -> GradientTransformationExtraArgs:
    """DoG (optax.contrib's ``dog``): optional ``weight_decay``, :func:`scale_by_dog`, then
    ``-learning_rate``.

    >>> import numpy as np
    >>> tx = dog()
    >>> p = np.array([1.0]); np.round(tx.update(np.array([2.0]), tx.init(p), p)[0], 9)
    array([-2.e-06])
    """
    return chain(add_decayed_weights(weight_decay, mask) if weight_decay is not None
                 else identity(), scale_by_dog(init_step, eps),
                 scale_by_learning_rate(learning_rate))


class DoWGState(NamedTuple):
    """DoWG's initial parameters, weighted sum of squared gradient norms and estimated
    squared distance."""

    init_params: Any
    weighted_sq_norm_grads: Any
    estim_sq_dist: Any


def scale_by_dowg(init_estim_sq_dist: float | None = None,
                  eps: float = 1e-4) -> GradientTransformation:
    """DoWG's step size (Khaled et al. 2023, optax.contrib's ``scale_by_dowg``): the
    estimated squared distance over the root of the distance-weighted squared gradient norms.

    >>> import numpy as np
    >>> tx = scale_by_dowg()
    >>> p = np.array([1.0]); tx.update(np.array([2.0]), tx.init(p), p)[0]
    array([0.00995025])
    """

    def init(params: Any) -> DoWGState:
        leaf = _lowest_dtype_leaf(params)
        d0 = eps if init_estim_sq_dist is None else init_estim_sq_dist
        return DoWGState(params, _scalar(leaf, 0.0), _scalar(leaf, d0))

    def update(updates: Any, state: DoWGState, params: Any = None) -> tuple[Any, DoWGState]:
        if params is None:
            raise ValueError(NO_PARAMS_MSG)
        sq_dist = _tree_norm(_tmap(lambda a, b: a - b, state.init_params, params)) ** 2
        estim = fnp.maximum(state.estim_sq_dist, sq_dist)
        weighted = estim * _tree_norm(updates) ** 2 + state.weighted_sq_norm_grads
        lr = estim / (fnp.sqrt(weighted) + eps)
        dt = state.estim_sq_dist.dtype
        return _tmap(lambda u: lr * u, updates), state._replace(
            estim_sq_dist=fnp.asarray(estim).astype(dt),
            weighted_sq_norm_grads=fnp.asarray(weighted).astype(dt))

    return GradientTransformation(init, update)


def dowg(learning_rate: ScalarOrSchedule = 1.0, init_estim_sq_dist: float | None = None,
         eps: float = 1e-4, weight_decay: float | None = None,
         mask: Any = None) -> GradientTransformationExtraArgs:
    """DoWG (optax.contrib's ``dowg``): optional ``weight_decay``, :func:`scale_by_dowg`,
    then ``-learning_rate``.

    >>> import numpy as np
    >>> tx = dowg()
    >>> p = np.array([1.0]); tx.update(np.array([2.0]), tx.init(p), p)[0]
    array([-0.00995025])
    """
    return chain(add_decayed_weights(weight_decay, mask) if weight_decay is not None
                 else identity(), scale_by_dowg(init_estim_sq_dist, eps),
                 scale_by_learning_rate(learning_rate))


def scale_by_acprop(b1: float = 0.9, b2: float = 0.999, eps: float = 1e-16,
                    eps_root: float = 1e-16) -> GradientTransformation:
    """ACProp's scaling (Zhuang et al. 2021, optax.contrib's ``scale_by_acprop``): the
    gradient over the root of the previous step's centred second moment (of ``g - mu``;
    the first step divides by 1). The state is :class:`ScaleByBeliefState`, as optax's.

    >>> import numpy as np
    >>> tx = scale_by_acprop()
    >>> s = tx.init(np.zeros(1)); u, s = tx.update(np.array([2.0]), s); u
    array([2.])
    """

    def init(params: Any) -> ScaleByBeliefState:
        zeros = _tmap(fnp.zeros_like, params)
        return ScaleByBeliefState(_scalar(_lowest_dtype_leaf(params), 0, np.int32), zeros, zeros)

    def update(updates: Any, state: ScaleByBeliefState,
               params: Any = None) -> tuple[Any, ScaleByBeliefState]:
        del params
        mu = update_moment(updates, state.mu, b1, 1)
        error = _tmap(lambda g, m: g - m, updates, state.mu)
        nu = _tmap(lambda v: v + eps_root, update_moment_per_elem_norm(error, state.nu, b2, 2))
        count_inc = safe_increment(state.count)
        initial = state.count == 0
        t = fnp.where(initial, count_inc, state.count)
        # at the first step there is no previous moment: t = 1 keeps the correction
        # 1 - b2 ** t nonzero and the moment is replaced by 1 (optax's)
        nu_hat = _tmap(lambda x: fnp.where(initial, 1, x), bias_correction(state.nu, b2, t))
        out = _tmap(lambda g, v: g / (fnp.sqrt(v) + eps), updates, nu_hat)
        return out, ScaleByBeliefState(count_inc, mu, nu)

    return GradientTransformation(init, update)


def acprop(learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.999,
           eps: float = 1e-16, eps_root: float = 1e-16, weight_decay: float = 0.0,
           mask: Any = None) -> GradientTransformationExtraArgs:
    """ACProp (optax.contrib's ``acprop``): :func:`scale_by_acprop`, decoupled
    ``weight_decay``, then ``-learning_rate``.

    >>> import numpy as np
    >>> tx = acprop(0.1)
    >>> tx.update(np.array([2.0]), tx.init(np.zeros(1)), np.zeros(1))[0]
    array([-0.2])
    """
    return chain(scale_by_acprop(b1=b1, b2=b2, eps=eps, eps_root=eps_root),
                 add_decayed_weights(weight_decay, mask), scale_by_learning_rate(learning_rate))
