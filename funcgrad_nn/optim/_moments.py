"""More of optax's top level: ``named_chain``, the moment helpers (``bias_correction``,
``update_moment``, ``update_moment_per_elem_norm``, ``update_infinity_moment``),
``normalize_by_update_norm`` and the optimistic gradient method
(``scale_by_optimistic_gradient``, ``optimistic_gradient_descent``, ``optimistic_adam``,
``optimistic_adam_v2``), as optax 0.2.8's.

>>> import numpy as np
>>> from funcgrad_nn import optim
>>> tx = optim.named_chain(("clip", optim.clip(1.0)), ("sgd", optim.sgd(0.5)))
>>> u, s = tx.update(np.array([3.0]), tx.init(np.zeros(1)))
>>> u, list(s)
(array([-0.5]), ['clip', 'sgd'])
"""

from __future__ import annotations

import collections
from typing import Any, NamedTuple

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad_nn.optim._transform import (
    GradientTransformation,
    GradientTransformationExtraArgs,
    ScalarOrSchedule,
    _call_update,
    _cast,
    _tmap,
    chain,
    scale_by_adam,
    scale_by_learning_rate,
)
from funcgrad_nn.optim._transform_more import init_empty_state

__all__ = ["named_chain", "bias_correction", "update_moment", "update_moment_per_elem_norm",
           "update_infinity_moment", "normalize_by_update_norm",
           "ScaleByOptimisticGradientState", "scale_by_optimistic_gradient",
           "optimistic_gradient_descent", "optimistic_adam", "optimistic_adam_v2",
           "ScaleByDistanceOverGradientsState", "scale_by_distance_over_gradients"]


def named_chain(*args: tuple[str, GradientTransformation]) -> GradientTransformationExtraArgs:
    """:func:`chain` with a name for each transformation: the state is an ordered dict from
    the names to their states (optax's ``named_chain``); extra ``update`` keywords go to the
    transformations that take them.

    >>> import numpy as np
    >>> tx = named_chain(("scale", scale_by_learning_rate(0.1)))
    >>> tx.update(np.array([1.0]), tx.init(np.zeros(1)))[0]
    array([-0.1])
    """
    names = [name for name, _ in args]
    if len(names) != len(set(names)):
        raise ValueError(f"Named transformations must have unique names, but got {names}")

    def init(params: Any) -> collections.OrderedDict:
        return collections.OrderedDict((name, tx.init(params)) for name, tx in args)

    def update(updates: Any, state: Any, params: Any = None,
               **extra_args: Any) -> tuple[Any, collections.OrderedDict]:
        new_state = collections.OrderedDict()
        for name, tx in args:
            updates, new_state[name] = _call_update(tx, updates, state[name], params, extra_args)
        return updates, new_state

    return GradientTransformationExtraArgs(init, update)


def bias_correction(moment: Any, decay: Any, count: Any) -> Any:
    """``moment / (1 - decay ** count)`` leafwise, the correction in each leaf's dtype
    (optax's ``bias_correction``, Adam's).

    >>> import numpy as np
    >>> bias_correction({"m": np.array([0.1])}, 0.9, 1)
    {'m': array([1.])}
    """
    correction = 1 - fnp.asarray(decay) ** fnp.asarray(count)
    return _tmap(lambda t: t / correction.astype(t.dtype), moment)


def update_moment(updates: Any, moments: Any, decay: Any, order: Any) -> Any:
    """The exponential moving average of ``updates ** order``:
    ``(1 - decay) * g ** order + decay * moment`` (optax's ``update_moment``; None leaves
    stay None).

    >>> import numpy as np
    >>> update_moment(np.array([2.0]), np.array([1.0]), 0.9, 2)
    array([1.3])
    """
    return _tmap(lambda g, t: (1 - decay) * g ** order + decay * t, updates, moments)


def update_moment_per_elem_norm(updates: Any, moments: Any, decay: Any, order: Any) -> Any:
    """:func:`update_moment` of ``|g| ** order`` (for complex ``g`` the modulus; optax's
    ``update_moment_per_elem_norm``, Adam's second moment).

    >>> import numpy as np
    >>> update_moment_per_elem_norm(np.array([3.0 + 4.0j]), np.zeros(1), 0.5, 2)
    array([12.5])
    """
    def norm(g: Any) -> Any:
        if not fnp.iscomplexobj(g):
            return g ** order
        half = order / 2
        if float(half).is_integer():
            half = int(half)
        return (fnp.real(g) ** 2 + fnp.imag(g) ** 2) ** half

    return _tmap(lambda g, t: (1 - decay) * norm(g) + decay * t, updates, moments)


def update_infinity_moment(updates: Any, moments: Any, decay: Any, eps: Any) -> Any:
    """Adamax's infinity moment ``max(|g| + eps, decay * moment)`` (optax's
    ``update_infinity_moment``).

    >>> import numpy as np
    >>> update_infinity_moment(np.array([-1.0, 0.1]), np.array([2.0, 2.0]), 0.9, 0.0)
    array([1.8, 1.8])
    """
    return _tmap(lambda g, t: fnp.maximum(fnp.abs(g) + eps, decay * t), updates, moments)


def normalize_by_update_norm(scale_factor: float = 1.0,
                             eps: float = 1e-6) -> GradientTransformation:
    """Divide the updates by their global norm (plus ``eps``) and multiply by
    ``scale_factor`` (optax's ``normalize_by_update_norm``: a fixed-length step).

    >>> import numpy as np
    >>> tx = normalize_by_update_norm(eps=0.0)
    >>> tx.update({"a": np.array([3.0]), "b": np.array([4.0])}, tx.init(None))[0]
    {'a': array([0.6]), 'b': array([0.8])}
    """

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        del params
        sq = None
        for x in tree_util.tree_leaves(updates):
            s = fnp.sum(fnp.real(x * fnp.conj(x)))
            sq = s if sq is None else sq + s
        g_norm = (fnp.sqrt(sq) + eps) / scale_factor
        return _tmap(lambda g: g / g_norm.astype(g.dtype), updates), state

    return GradientTransformation(init_empty_state, update)


class ScaleByOptimisticGradientState(NamedTuple):
    """Whether the next step is the first, and the previous gradient."""

    is_initial_step: Any
    previous_gradient: Any


def scale_by_optimistic_gradient(alpha: float = 1.0,
                                 beta: float = 1.0) -> GradientTransformation:
    """The optimistic gradient: ``(alpha + beta) * g - beta * previous g`` (the previous is
    ``g`` itself at the first step; optax's ``scale_by_optimistic_gradient``, for min-max
    games).

    >>> import numpy as np
    >>> tx = scale_by_optimistic_gradient()
    >>> s = tx.init(np.zeros(1)); u, s = tx.update(np.array([1.0]), s); u, s = tx.update(np.array([3.0]), s)
    >>> u
    array([5.])
    """

    def init(params: Any) -> ScaleByOptimisticGradientState:
        leaves = tree_util.tree_leaves(params)
        first = (fnp.ones_like(leaves[0], dtype=bool, shape=()) if leaves
                 else fnp.asarray(np.True_))
        return ScaleByOptimisticGradientState(first, _tmap(fnp.zeros_like, params))

    def update(updates: Any, state: ScaleByOptimisticGradientState,
               params: Any = None) -> tuple[Any, ScaleByOptimisticGradientState]:
        del params

        def f(g: Any, prev: Any) -> Any:
            prev = fnp.where(state.is_initial_step, g, prev)
            return (alpha + beta) * g - beta * prev

        new = _tmap(f, updates, state.previous_gradient)
        return new, ScaleByOptimisticGradientState(
            fnp.zeros_like(state.is_initial_step), updates)

    return GradientTransformation(init, update)


def optimistic_gradient_descent(learning_rate: ScalarOrSchedule, alpha: float = 1.0,
                                beta: float = 1.0) -> GradientTransformationExtraArgs:
    """Optimistic gradient descent (optax's): :func:`scale_by_optimistic_gradient` then
    ``-learning_rate``.

    >>> import numpy as np
    >>> tx = optimistic_gradient_descent(0.1)
    >>> tx.update(np.array([1.0]), tx.init(np.zeros(1)))[0]
    array([-0.1])
    """
    return chain(scale_by_optimistic_gradient(alpha=alpha, beta=beta),
                 scale_by_learning_rate(learning_rate))


def optimistic_adam(learning_rate: float, optimism: float | None = None, b1: float = 0.9,
                    b2: float = 0.999, eps: float = 1e-8, eps_root: float = 0.0,
                    mu_dtype: Any = None, *,
                    nesterov: bool = True) -> GradientTransformationExtraArgs:
    """Optimistic Adam (optax's, deprecated there for :func:`optimistic_adam_v2`, with the
    same DeprecationWarning): Adam's rescaling (Nesterov by default), then the optimistic
    gradient with ``alpha=learning_rate`` and ``beta=optimism`` (``learning_rate`` when None),
    then a sign flip. A schedule is refused, as in optax.

    >>> import warnings, numpy as np
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     tx = optimistic_adam(0.1)
    >>> s = tx.init(np.zeros(1)); u, s = tx.update(np.array([1.0]), s)
    >>> np.round(u, 6)
    array([-0.147368])
    """
    import warnings

    warnings.warn("`optimistic_adam` is deprecated, please use `optimistic_adam_v2` instead.",
                  category=DeprecationWarning, stacklevel=2)
    if callable(learning_rate):
        raise ValueError("This version of `optimistic_adam` does not support learning rate "
                         "schedules but `optimistic_adam_v2` does.")
    if optimism is None:
        optimism = learning_rate
    return chain(scale_by_adam(b1=b1, b2=b2, eps=eps, eps_root=eps_root, mu_dtype=mu_dtype,
                               nesterov=nesterov),
                 scale_by_optimistic_gradient(alpha=learning_rate, beta=optimism),
                 scale_by_learning_rate(1.0))


def optimistic_adam_v2(learning_rate: ScalarOrSchedule, *, alpha: float = 1.0,
                       beta: float = 1.0, b1: float = 0.9, b2: float = 0.999,
                       eps: float = 1e-8, eps_root: float = 0.0, mu_dtype: Any = None,
                       nesterov: bool = True) -> GradientTransformationExtraArgs:
    """Optimistic Adam (optax's ``optimistic_adam_v2``, Daskalakis et al. 2017): Adam's
    rescaling (Nesterov by default), the optimistic gradient ``(alpha + beta) * u - beta *
    previous u``, then ``-learning_rate`` (a constant or a schedule).

    >>> import numpy as np
    >>> tx = optimistic_adam_v2(0.1, alpha=0.5)
    >>> s = tx.init(np.zeros(1)); u, s = tx.update(np.array([1.0]), s)
    >>> np.round(u, 6)
    array([-0.073684])
    """
    return chain(scale_by_adam(b1=b1, b2=b2, eps=eps, eps_root=eps_root, mu_dtype=mu_dtype,
                               nesterov=nesterov),
                 scale_by_optimistic_gradient(alpha=alpha, beta=beta),
                 scale_by_learning_rate(learning_rate))


class ScaleByDistanceOverGradientsState(NamedTuple):
    """Per parameter array: the largest distance from the initial parameters so far, the
    gradients' sum of squares (shape ``(1,)``, as optax's), and the initial parameters."""

    max_dist: Any
    grad_sum_of_squares: Any
    init_params: Any


def scale_by_distance_over_gradients(reps_rel: float = 1e-6, eps: float = 1e-8,
                                     param_dtype: Any = np.float32,
                                     global_scale: float = 1.0) -> GradientTransformation:
    """Distance over gradients, layer-wise (optax's ``scale_by_distance_over_gradients``,
    Ivgi et al. 2023's LDoG): each array's update is ``global_scale * d / sqrt(G + eps) * g``
    with ``d`` the largest distance from its initial value (at least ``reps_rel * (1 +
    |p0|)``) and ``G`` its gradients' running sum of squares. The initial parameters are kept
    in ``param_dtype`` (float32 by default, as optax's); ``global_scale=-1.0`` makes it a
    descent step. As in optax, the step size has shape ``(1,)``, so a 0-d parameter's update
    comes back with shape ``(1,)``.

    >>> import numpy as np
    >>> tx = scale_by_distance_over_gradients(reps_rel=0.1, global_scale=-1.0)
    >>> p = np.array([3.0, 4.0])
    >>> np.round(tx.update(np.array([1.0, 1.0]), tx.init(p), p)[0], 6)
    array([-0.424264, -0.424264])
    """

    def l2(x: Any, y: Any = 0.0) -> Any:
        # keepdims, then 0-d: a NumPy scalar sum would go to the default device
        return fnp.reshape(fnp.sqrt(fnp.sum(fnp.square(fnp.subtract(x, y)), keepdims=True)),
                           ())

    def init(params: Any) -> ScaleByDistanceOverGradientsState:
        return ScaleByDistanceOverGradientsState(
            # funcgrad.numpy's operations: NumPy's own give 0-d results as NumPy scalars,
            # which would go to the default device
            _tmap(lambda x: fnp.multiply(reps_rel, fnp.add(1, l2(x))), params),
            _tmap(lambda x: fnp.zeros_like(x, dtype=np.float64 if np.dtype(x.dtype) == np.float64
                                            else np.float32, shape=(1,)), params),
            _cast(params, param_dtype))

    def update(updates: Any, state: ScaleByDistanceOverGradientsState,
               params: Any = None) -> tuple[Any, ScaleByDistanceOverGradientsState]:
        if params is None:
            raise ValueError("scale_by_distance_over_gradients needs params (the distance "
                             "from the initial parameters)")
        max_dist = _tmap(lambda d, x, y: fnp.maximum(d, l2(x, y)), state.max_dist, params,
                         state.init_params)
        g_sos = _tmap(lambda a, g: a + fnp.reshape(fnp.sum(fnp.square(g), keepdims=True),
                                                   (1,)), state.grad_sum_of_squares, updates)
        new = _tmap(lambda g, d, s: global_scale * (d / fnp.sqrt(s + eps)) * g, updates,
                    max_dist, g_sos)
        return new, ScaleByDistanceOverGradientsState(max_dist, g_sos, state.init_params)

    return GradientTransformation(init, update)
