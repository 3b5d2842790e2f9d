"""optax.contrib's Sophia (Liu et al., 2023; optax 0.2.8): a momentum divided by an
exponential average of the Hessian diagonal (refreshed every ``update_interval`` steps,
by default with Hutchinson's estimator), clipped elementwise.

>>> import numpy as np
>>> import funcgrad
>>> from funcgrad_nn.optim import contrib
>>> f = lambda p: (p ** 2).sum()
>>> tx = contrib.sophia(0.1, weight_decay=0.0)
>>> p = np.array([1.0, -2.0])
>>> s = tx.init(p)
>>> u, s = tx.update(funcgrad.grad(f)(p), s, p, obj_fn=f)
>>> u                       # the first step: the Hessian average is still 0, so clipped
array([-0.1,  0.1])
"""

from __future__ import annotations

from typing import Any, NamedTuple

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import debug, lax, tree_util
from funcgrad import random as frandom
from funcgrad_nn.optim import tree as _tree
from funcgrad_nn.optim._transform import (
    GradientTransformation,
    GradientTransformationExtraArgs,
    ScalarOrSchedule,
    _bias_corrected,
    _cast,
    _dtype,
    _tmap,
    _zero_count,
    add_decayed_weights,
    chain,
    scale_by_learning_rate,
    with_extra_args_support,
)
from funcgrad_nn.optim._transform_more import safe_increment

__all__ = ["HutchinsonState", "hutchinson_estimator_diag_hessian", "SophiaState",
           "scale_by_sophia", "sophia"]


class HutchinsonState(NamedTuple):
    """State of :func:`hutchinson_estimator_diag_hessian`: its PRNG key."""

    key: Any


def hutchinson_estimator_diag_hessian(random_seed: Any = None) -> GradientTransformationExtraArgs:
    """Hutchinson's unbiased estimate of the Hessian diagonal, ``r * (H r)`` with Rademacher
    signs ``r`` (optax.contrib's): ``update(updates, state, params, obj_fn=f)`` returns it
    for the scalar objective ``f(params)`` (the updates are ignored). ``random_seed`` is a
    PRNG key (default ``random.PRNGKey(0)``; funcgrad.random's bits, not JAX's).

    >>> import numpy as np
    >>> tx = hutchinson_estimator_diag_hessian()
    >>> p = np.array([1.0, 2.0])
    >>> d, _ = tx.update(None, tx.init(p), p, obj_fn=lambda x: (x ** 3).sum())
    >>> d          # exact for a separable objective: 6 x
    array([ 6., 12.])
    """

    def init(params: Any) -> HutchinsonState:
        return HutchinsonState(frandom.PRNGKey(0) if random_seed is None else random_seed)

    def update(updates: Any, state: HutchinsonState, params: Any = None, obj_fn: Any = None,
               **extra_args: Any) -> tuple[Any, HutchinsonState]:
        if params is None:
            raise ValueError("params must be provided to hutchinson update function.")
        if obj_fn is None:
            raise ValueError("obj_fn must be provided to hutchinson update function.")
        key, subkey = frandom.split(state.key)
        signs = _tree.random_like(subkey, params, frandom.rademacher, dtype=fnp.float32)
        signs = _tree.cast(signs, _tree.dtype(params, "lowest"))
        hvp = funcgrad.jvp(funcgrad.grad(obj_fn), (params,), (signs,))[1]
        return tree_util.tree_map(lambda h, r: h * r, hvp, signs), HutchinsonState(key)

    return GradientTransformationExtraArgs(init, update)


class SophiaState(NamedTuple):
    """State of :func:`scale_by_sophia`: the count, the momentum ``mu``, the average Hessian
    diagonal ``nu`` and the Hessian estimator's state."""

    count: Any
    mu: Any
    nu: Any
    hessian_fn_state: Any


def scale_by_sophia(b1: float = 0.965, b2: float = 0.99, eps: float = 1e-8, gamma: float = 0.01,
                    clip_threshold: float | None = 1.0, update_interval: int = 10,
                    hessian_diagonal_fn: GradientTransformation | None = None,
                    mu_dtype: Any = None, verbose: bool = False,
                    print_win_rate_every_n_steps: int = 0) -> GradientTransformationExtraArgs:
    """Sophia's rescaling (optax.contrib's ``scale_by_sophia``): ``clip(mu_hat /
    max(gamma * nu, eps), +-clip_threshold)``, ``nu`` updated from ``hessian_diagonal_fn``
    (default :func:`hutchinson_estimator_diag_hessian`) when ``count % update_interval ==
    0``; extra keyword arguments of ``update`` (e.g. ``obj_fn``) go to that estimator.
    ``verbose`` prints the share of unclipped entries every ``print_win_rate_every_n_steps``.

    >>> import numpy as np
    >>> tx = scale_by_sophia(clip_threshold=None)
    >>> p = np.array([1.0])
    >>> u, s = tx.update(np.array([2.0]), tx.init(p), p, obj_fn=lambda x: (x ** 2).sum())
    >>> round(float(s.nu[0]), 12), float(u[0])   # nu = 0.01 * 2; u = 2 / max(0, 1e-8)
    (0.02, 200000000.0)
    """
    mu_dtype = _dtype(mu_dtype)
    hess = with_extra_args_support(hessian_diagonal_fn if hessian_diagonal_fn is not None
                                   else hutchinson_estimator_diag_hessian())
    if verbose and print_win_rate_every_n_steps <= 0:
        raise ValueError("verbose=True needs print_win_rate_every_n_steps > 0")

    def init(params: Any) -> SophiaState:
        return SophiaState(_zero_count(params),
                           _tmap(lambda p: fnp.zeros_like(p, dtype=mu_dtype), params),
                           _tmap(fnp.zeros_like, params), hess.init(params))

    def update(updates: Any, state: SophiaState, params: Any = None,
               **hess_fn_kwargs: Any) -> tuple[Any, SophiaState]:
        if params is None:
            raise ValueError("params must be provided to sophia's update function.")
        count = safe_increment(state.count)
        grads = updates
        mu = _tmap(lambda g, m: (1 - b1) * g + b1 * m, updates, state.mu)
        mu_hat = _bias_corrected(mu, b1, count)
        out = _tmap(lambda m, h: m / fnp.maximum(gamma * h, eps), mu_hat, state.nu)
        if clip_threshold is not None:
            if verbose:
                unclipped = sum(fnp.sum(fnp.abs(u) < clip_threshold)
                                for u in tree_util.tree_leaves(out))
                win_rate = unclipped / _tree.size(out)
                lax.cond(count % print_win_rate_every_n_steps == 0,
                         lambda: debug.print("Sophia optimizer win rate: {}", win_rate),
                         lambda: None)
            out = _tmap(lambda u: fnp.clip(u, -clip_threshold, clip_threshold), out)

        def refresh(hess_state: Any, nu: Any) -> tuple[Any, Any]:
            diag, hess_state = hess.update(grads, hess_state, params=params, **hess_fn_kwargs)
            return hess_state, _tmap(lambda h, n: (1 - b2) * h + b2 * n, diag, nu)

        hess_state, nu = lax.cond(fnp.equal(state.count % update_interval, 0), refresh,
                                  lambda h, n: (h, n), state.hessian_fn_state, state.nu)
        return out, SophiaState(count, _cast(mu, mu_dtype), nu, hess_state)

    return GradientTransformationExtraArgs(init, update)


def sophia(learning_rate: ScalarOrSchedule, b1: float = 0.965, b2: float = 0.99,
           eps: float = 1e-8, weight_decay: float = 1e-4, weight_decay_mask: Any = None,
           gamma: float = 0.01, clip_threshold: float | None = 1.0, update_interval: int = 10,
           hessian_diagonal_fn: GradientTransformation | None = None, mu_dtype: Any = None,
           verbose: bool = False,
           print_win_rate_every_n_steps: int = 0) -> GradientTransformationExtraArgs:
    """Sophia (optax.contrib's ``sophia``): :func:`scale_by_sophia`, decoupled weight decay
    and the learning rate. Pass the scalar objective of the current batch to ``update`` as
    ``obj_fn=lambda params: loss(params, batch)`` for the default Hutchinson estimator.

    >>> import numpy as np
    >>> import funcgrad
    >>> f = lambda p: ((p - 3.0) ** 2).sum()
    >>> tx = sophia(0.5, weight_decay=0.0, update_interval=1)
    >>> p = np.zeros(2)
    >>> s = tx.init(p)
    >>> for _ in range(3):      # clipped steps of the learning rate while far away
    ...     u, s = tx.update(funcgrad.grad(f)(p), s, p, obj_fn=f)
    ...     p = p + u
    >>> np.round(p, 3)
    array([1.5, 1.5])
    """
    return chain(
        scale_by_sophia(b1, b2, eps, gamma, clip_threshold, update_interval,
                        hessian_diagonal_fn, mu_dtype, verbose, print_win_rate_every_n_steps),
        add_decayed_weights(weight_decay, weight_decay_mask),
        scale_by_learning_rate(learning_rate))
