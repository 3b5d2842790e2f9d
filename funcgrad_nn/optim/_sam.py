"""optax.contrib's SAM (Sharpness-Aware Minimization, Foret et al., 2021; optax 0.2.8): an
adversarial optimizer takes ``sync_period - 1`` ascent steps away from the true parameters,
then the outer optimizer updates the true parameters with the gradient found there.

>>> import numpy as np
>>> from funcgrad_nn import optim
>>> from funcgrad_nn.optim import contrib
>>> tx = contrib.sam(optim.sgd(0.1), optim.chain(contrib.normalize(), optim.sgd(0.5)))
>>> p = np.array([1.0, -2.0])
>>> s = tx.init(p)
>>> for _ in range(2):         # an adversarial step, then the outer step
...     u, s = tx.update(2 * p, s, p)
...     p = optim.apply_updates(p, u)
>>> np.round(p, 4)
array([ 0.7553, -1.5106])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import funcgrad.numpy as fnp
from funcgrad import lax, tree_util
from funcgrad_nn.optim._transform import (
    GradientTransformation,
    GradientTransformationExtraArgs,
    _zero_count,
    apply_updates,
)

__all__ = ["SAMState", "sam"]


class SAMState(NamedTuple):
    """State of :func:`sam`: adversarial steps since the last outer update, the outer and
    adversarial optimizers' states, and the true parameters (None in opaque mode)."""

    steps_since_sync: Any
    opt_state: Any
    adv_state: Any
    cache: Any


def _pick(cond: Any, if_true: Any, if_false: Any) -> Any:
    # optax blends ``cond * t + (1 - cond) * f``: the same values for finite inputs; where
    # also keeps an inf or NaN of the branch not taken out of the result
    return tree_util.tree_map(lambda t, f: fnp.where(cond, t, f), if_true, if_false)


def sam(optimizer: GradientTransformation, adv_optimizer: GradientTransformation,
        sync_period: int = 2, reset_state: bool = True, opaque_mode: bool = False,
        batch_axis_name: str | None = None) -> GradientTransformationExtraArgs:
    """SAM (optax.contrib's ``sam``): ``adv_optimizer`` (e.g. ``chain(normalize(),
    sgd(rho))``) ascends for ``sync_period - 1`` calls, then ``optimizer`` updates the true
    parameters with the gradient at the adversarial point; ``reset_state`` restarts the
    adversarial state after each sync.

    By default (transparent mode) each ``update`` call is one step and its updates move the
    parameters to the adversarial point and back, so call it with the gradient at the
    current parameters every time. With ``opaque_mode=True`` one call does the whole cycle:
    it needs ``grad_fn=(params, i) -> grads`` (called ``sync_period - 1`` times) and returns
    the outer update only (use it when other state, such as BatchNorm statistics, must not
    see the adversarial parameters); ``batch_axis_name`` then averages the adversarial
    gradients over that mapped axis (``lax.pmean``).

    >>> import numpy as np
    >>> from funcgrad_nn import optim
    >>> from funcgrad_nn.optim import contrib
    >>> tx = sam(optim.sgd(0.1), optim.chain(contrib.normalize(), optim.sgd(0.5)),
    ...          opaque_mode=True)
    >>> p = np.array([1.0, -2.0])
    >>> u, s = tx.update(2 * p, tx.init(p), p, grad_fn=lambda q, i: 2 * q)
    >>> np.round(optim.apply_updates(p, u), 4)
    array([ 0.7553, -1.5106])
    """
    if sync_period < 1:
        raise ValueError("Synchronization period must be >= 1.")

    def init(params: Any) -> SAMState:
        return SAMState(_zero_count(params), optimizer.init(params), adv_optimizer.init(params),
                        None if opaque_mode else params)

    def transparent_update(updates: Any, state: SAMState, params: Any = None, *,
                           grad_fn: Callable[[Any, int], Any] | None = None,
                           **extra: Any) -> tuple[Any, SAMState]:
        if params is None:
            raise ValueError("sam needs the current params in update (it keeps the true "
                             "parameters while the adversarial steps move them)")
        first = state.steps_since_sync == 0
        last = state.steps_since_sync == sync_period - 1
        adv_updates, adv_state = adv_optimizer.update(updates, state.adv_state, params)
        adv_updates = tree_util.tree_map(lambda x: -x, adv_updates)
        opt_updates, opt_state = optimizer.update(updates, state.opt_state, state.cache)
        # from the adversarial point back to the true parameters, then the outer step
        opt_updates = tree_util.tree_map(lambda c, p, u: c - p + u, state.cache, params,
                                         opt_updates)
        cache = _pick(first, params, state.cache)
        out = _pick(last, opt_updates, adv_updates)
        if reset_state:
            adv_state = _pick(last, adv_optimizer.init(params), adv_state)
        else:
            adv_state = _pick(last, state.adv_state, adv_state)
        opt_state = _pick(last, opt_state, state.opt_state)
        steps = (state.steps_since_sync + 1) % sync_period
        return out, SAMState(steps, opt_state, adv_state, cache)

    def opaque_update(updates: Any, state: SAMState, params: Any = None, *,
                      grad_fn: Callable[[Any, int], Any] | None = None,
                      **extra: Any) -> tuple[Any, SAMState]:
        if grad_fn is None:
            raise ValueError("grad_fn must be provided when opaque_mode=True.")
        adv_params, adv_updates, adv_state = params, updates, state.adv_state
        for i in range(sync_period - 1):
            adv_updates, adv_state = adv_optimizer.update(adv_updates, adv_state, adv_params)
            adv_updates = tree_util.tree_map(lambda x: -x, adv_updates)
            adv_params = apply_updates(adv_params, adv_updates)
            adv_updates = grad_fn(adv_params, i)
            if batch_axis_name is not None:
                adv_updates = lax.pmean(adv_updates, axis_name=batch_axis_name)
        if reset_state:
            adv_state = adv_optimizer.init(params)
        out, opt_state = optimizer.update(adv_updates, state.opt_state, params)
        return out, SAMState(_zero_count(params), opt_state, adv_state, None)

    return GradientTransformationExtraArgs(init, opaque_update if opaque_mode
                                           else transparent_update)

