"""``jax.example_libraries.optimizers``: optimizers as ``(init_fun, update_fun, get_params)``
triples over pytrees of parameters, learning-rate schedules, and helpers.

Each optimizer is written for one array and lifted to pytrees by :func:`optimizer`; its
state is an :class:`OptimizerState` (a pytree, so it passes through ``jit``). The update
formulas are JAX's, so the same gradients give the same parameters.

Example:
    >>> import funcgrad, funcgrad.numpy as fnp
    >>> opt_init, opt_update, get_params = sgd(0.1)
    >>> state = opt_init({"w": fnp.array([1.0, 2.0])})
    >>> grads = funcgrad.grad(lambda p: fnp.sum(p["w"] ** 2))(get_params(state))
    >>> get_params(opt_update(0, grads, state))["w"].tolist()
    [0.8, 1.6]
"""

from __future__ import annotations

import functools
from collections import namedtuple
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy

from funcgrad import numpy as fnp
from funcgrad import tree_util
from funcgrad.backend import device_of
from funcgrad.core import Tracer

__all__ = [
    "OptimizerState", "Optimizer", "optimizer", "sgd", "momentum", "nesterov", "adagrad",
    "rmsprop", "rmsprop_momentum", "adam", "adamax", "sm3", "constant", "exponential_decay",
    "inverse_time_decay", "polynomial_decay", "piecewise_constant", "make_schedule",
    "l2_norm", "clip_grads", "JoinPoint", "unpack_optimizer_state", "pack_optimizer_state",
]

# Two levels of pytrees: the parameters' (the outer tree) and, for each parameter leaf, the
# state init_fun makes of it (the inner trees). The state keeps them flat: a list of the
# inner trees' leaf lists, with both kinds of treedef as static data.
OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
tree_util.register_pytree_node(
    OptimizerState,
    lambda xs: ((xs.packed_state,), (xs.tree_def, xs.subtree_defs)),
    lambda data, xs: OptimizerState(xs[0], data[0], data[1]))

Array = Any
Params = Any
State = Any
Updates = Params
Step = int
InitFn = Callable[[Params], OptimizerState]
UpdateFn = Callable[[Step, Updates, OptimizerState], OptimizerState]
ParamsFn = Callable[[OptimizerState], Params]
Schedule = Callable[[Step], Any]


class Optimizer(NamedTuple):
    """The ``(init_fn, update_fn, params_fn)`` triple an optimizer constructor returns."""

    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


def _unzip2(pairs: Any) -> tuple[tuple, tuple]:
    pairs = list(pairs)
    return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)


def optimizer(opt_maker: Callable[..., Any]) -> Callable[..., Optimizer]:
    """Decorator: an optimizer written for single arrays (``init``, ``update``,
    ``get_params`` on one array and its state) made to work on pytrees of parameters.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> @optimizer
        ... def halve(step_size):
        ...     return (lambda x: x), (lambda i, g, x: x - step_size * g / 2), (lambda x: x)
        >>> init, update, get = halve(1.0)
        >>> get(update(0, [fnp.array(2.0)], init([fnp.array(3.0)])))[0].tolist()
        2.0
    """
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args: Any, **kwargs: Any) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree: Params) -> OptimizerState:
            x0_flat, tree = tree_util.tree_flatten(x0_tree)
            initial_states = [init(x0) for x0 in x0_flat]
            states_flat, subtrees = _unzip2(map(tree_util.tree_flatten, initial_states))
            return OptimizerState(list(states_flat), tree, list(subtrees))

        @functools.wraps(update)
        def tree_update(i: Step, grad_tree: Updates, opt_state: OptimizerState
                        ) -> OptimizerState:
            states_flat, tree, subtrees = opt_state
            grad_flat, tree2 = tree_util.tree_flatten(grad_tree)
            if tree2 != tree:
                raise TypeError(
                    "optimizer update function was passed a gradient tree that did not "
                    "match the parameter tree structure with which it was initialized: "
                    f"parameter tree {tree} and grad tree {tree2}.")
            states = [tree_util.tree_unflatten(s, f) for s, f in zip(subtrees, states_flat)]
            new_states = [update(i, g, s) for g, s in zip(grad_flat, states)]
            new_states_flat, subtrees2 = _unzip2(map(tree_util.tree_flatten, new_states))
            for subtree, subtree2 in zip(subtrees, subtrees2):
                if subtree2 != subtree:
                    raise TypeError(
                        "optimizer update function produced an output structure that did "
                        f"not match its input structure: input {subtree} and output "
                        f"{subtree2}.")
            return OptimizerState(list(new_states_flat), tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state: OptimizerState) -> Params:
            states_flat, tree, subtrees = opt_state
            states = [tree_util.tree_unflatten(s, f) for s, f in zip(subtrees, states_flat)]
            return tree_util.tree_unflatten(tree, [get_params(s) for s in states])

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


# --------------------------------------------------------------------------------------------
# optimizers


@optimizer
def sgd(step_size: float | Schedule) -> Optimizer:
    """Stochastic gradient descent: ``x - step_size(i) * g``.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> init, update, get = sgd(0.5)
        >>> get(update(0, fnp.array(2.0), init(fnp.array(1.0)))).tolist()
        0.0
    """
    step_size = make_schedule(step_size)

    def init(x0: Array) -> Array:
        return x0

    def update(i: Step, g: Array, x: Array) -> Array:
        return x - step_size(i) * g

    def get_params(x: Array) -> Array:
        return x

    return Optimizer(init, update, get_params)


@optimizer
def momentum(step_size: float | Schedule, mass: float) -> Optimizer:
    """SGD with momentum: ``v = mass * v + g; x -= step_size(i) * v``.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> init, update, get = momentum(0.1, mass=0.9)
        >>> s = update(0, fnp.array(1.0), init(fnp.array(0.0)))
        >>> round(float(get(update(1, fnp.array(1.0), s))), 6)
        -0.29
    """
    step_size = make_schedule(step_size)

    def init(x0: Array) -> tuple:
        return x0, fnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple) -> tuple:
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity

    def get_params(state: tuple) -> Array:
        return state[0]

    return init, update, get_params


@optimizer
def nesterov(step_size: float | Schedule, mass: float) -> Optimizer:
    """SGD with Nesterov momentum: ``v = mass * v + g; x -= step_size(i) * (mass * v + g)``.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> init, update, get = nesterov(0.1, mass=0.9)
        >>> round(float(get(update(0, fnp.array(1.0), init(fnp.array(0.0))))), 6)
        -0.19
    """
    step_size = make_schedule(step_size)

    def init(x0: Array) -> tuple:
        return x0, fnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple) -> tuple:
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity

    def get_params(state: tuple) -> Array:
        return state[0]

    return init, update, get_params


@optimizer
def adagrad(step_size: float | Schedule, momentum: float = 0.9) -> Optimizer:
    """Adagrad (Duchi et al. 2011) with momentum, as JAX writes it.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> init, update, get = adagrad(1.0)
        >>> round(float(get(update(0, fnp.array(4.0), init(fnp.array(0.0))))), 6)
        -0.1
    """
    step_size = make_schedule(step_size)

    def init(x0: Array) -> tuple:
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple) -> tuple:
        x, g_sq, m = state
        g_sq = g_sq + fnp.square(g)
        # where g_sq is 0 the other branch is taken; a safe denominator avoids NumPy's
        # division warning there
        pos = g_sq > 0
        g_sq_inv_sqrt = fnp.where(pos, 1. / fnp.sqrt(fnp.where(pos, g_sq, 1.0)), 0.0)
        m = (1. - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m

    def get_params(state: tuple) -> Array:
        return state[0]

    return init, update, get_params


@optimizer
def rmsprop(step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8) -> Optimizer:
    """RMSProp: ``x -= step_size(i) * g / sqrt(avg_sq_grad + eps)``.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> init, update, get = rmsprop(0.1)
        >>> round(float(get(update(0, fnp.array(1.0), init(fnp.array(0.0))))), 6)
        -0.316228
    """
    step_size = make_schedule(step_size)

    def init(x0: Array) -> tuple:
        return x0, fnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple) -> tuple:
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + fnp.square(g) * (1. - gamma)
        return x - step_size(i) * g / fnp.sqrt(avg_sq_grad + eps), avg_sq_grad

    def get_params(state: tuple) -> Array:
        return state[0]

    return init, update, get_params


@optimizer
def rmsprop_momentum(step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8,
                     momentum: float = 0.9) -> Optimizer:
    """RMSProp with momentum (its own state, so a separate optimizer).

    Example:
        >>> import funcgrad.numpy as fnp
        >>> init, update, get = rmsprop_momentum(0.1)
        >>> round(float(get(update(0, fnp.array(1.0), init(fnp.array(0.0))))), 6)
        -0.316228
    """
    step_size = make_schedule(step_size)

    def init(x0: Array) -> tuple:
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple) -> tuple:
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + fnp.square(g) * (1. - gamma)
        mom = momentum * mom + step_size(i) * g / fnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom

    def get_params(state: tuple) -> Array:
        return state[0]

    return init, update, get_params


@optimizer
def adam(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999,
         eps: float = 1e-8) -> Optimizer:
    """Adam (Kingma & Ba), with bias-corrected moment estimates.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> init, update, get = adam(0.1)
        >>> round(float(get(update(0, fnp.array(3.0), init(fnp.array(0.0))))), 6)
        -0.1
    """
    step_size = make_schedule(step_size)

    def init(x0: Array) -> tuple:
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple) -> tuple:
        x, m, v = state
        m = (1 - b1) * g + b1 * m  # first moment estimate
        v = (1 - b2) * fnp.square(g) + b2 * v  # second moment estimate
        mhat = m / (1 - fnp.asarray(b1, m.dtype) ** (i + 1))  # bias correction
        vhat = v / (1 - fnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * mhat / (fnp.sqrt(vhat) + eps), m, v

    def get_params(state: tuple) -> Array:
        return state[0]

    return init, update, get_params


@optimizer
def adamax(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999,
           eps: float = 1e-8) -> Optimizer:
    """AdaMax: Adam with the infinity norm of past gradients.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> init, update, get = adamax(0.1)
        >>> round(float(get(update(0, fnp.array(3.0), init(fnp.array(0.0))))), 6)
        -0.1
    """
    step_size = make_schedule(step_size)

    def init(x0: Array) -> tuple:
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple) -> tuple:
        x, m, u = state
        m = (1 - b1) * g + b1 * m  # first moment estimate
        u = fnp.maximum(b2 * u, fnp.abs(g))  # exponentially weighted infinity norm
        x = x - (step_size(i) / (1 - fnp.asarray(b1, m.dtype) ** (i + 1))) * m / (u + eps)
        return x, m, u

    def get_params(state: tuple) -> Array:
        return state[0]

    return init, update, get_params


class _Shape(tuple):
    """sm3's record of a parameter's shape in its state: a pytree node with no children, so
    the state passes through ``jit`` (JAX keeps the ints as leaves, which a traced state turns
    into tracers that ``reshape`` refuses)."""

    __slots__ = ()


tree_util.register_pytree_node(_Shape, lambda s: ((), tuple(s)), lambda aux, _: _Shape(aux))


def _splice(seq: Any, i: int, x: list) -> list:
    lst = list(seq)
    lst[i:i + 1] = x
    return lst


@optimizer
def sm3(step_size: float | Schedule, momentum: float = 0.9) -> Optimizer:
    """SM3 (Anil et al. 2019): Adagrad with one accumulator per row/column/... of each
    parameter instead of one per entry.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> init, update, get = sm3(1.0)
        >>> round(float(get(update(0, fnp.array(4.0), init(fnp.array(0.0))))), 6)
        -0.1
    """
    step_size = make_schedule(step_size)

    def broadcast_into(ndim: int, x: Array, axis: int) -> Array:
        idx = _splice([None] * ndim, axis, [slice(None)])
        return x[tuple(idx)]

    def init(x0: Array) -> tuple:
        x_shape = _Shape(fnp.shape(x0))
        x0 = fnp.atleast_1d(x0)
        vs = [fnp.zeros_like(x0, shape=(sz,)) for sz in x0.shape]  # on x0's device
        return x0, fnp.zeros_like(x0), vs, x_shape

    def update(i: Step, g: Array, state: tuple) -> tuple:
        x, m, vs, x_shape = state
        vs = [broadcast_into(g.ndim, v, j) for j, v in enumerate(vs)]
        accum = functools.reduce(fnp.minimum, vs) + fnp.square(g)
        pos = accum > 0
        accum_inv_sqrt = fnp.where(pos, 1. / fnp.sqrt(fnp.where(pos, accum, 1.0)), 0)
        m = (1. - momentum) * (g * accum_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        vs = [fnp.max(accum, axis=tuple(_splice(range(x.ndim), j, []))) for j in range(x.ndim)]
        return x, m, vs, x_shape

    def get_params(state: tuple) -> Array:
        x, _, _, x_shape = state
        return fnp.reshape(x, x_shape)

    return init, update, get_params


# --------------------------------------------------------------------------------------------
# learning-rate schedules


def constant(step_size: Any) -> Schedule:
    """The schedule ``i -> step_size``.

    Example:
        >>> constant(0.1)(100)
        0.1
    """
    def schedule(i: Step) -> Any:
        return step_size

    return schedule


def exponential_decay(step_size: float, decay_steps: float, decay_rate: float) -> Schedule:
    """The schedule ``i -> step_size * decay_rate ** (i / decay_steps)``.

    Example:
        >>> round(float(exponential_decay(1.0, 10, 0.5)(20)), 6)
        0.25
    """
    def schedule(i: Step) -> Any:
        return step_size * decay_rate ** (i / decay_steps)

    return schedule


def inverse_time_decay(step_size: float, decay_steps: float, decay_rate: float,
                       staircase: bool = False) -> Schedule:
    """The schedule ``i -> step_size / (1 + decay_rate * i / decay_steps)`` (with
    ``staircase``, ``i / decay_steps`` rounded down).

    Example:
        >>> float(inverse_time_decay(1.0, 10, 1.0, staircase=True)(15))
        0.5
    """
    if staircase:
        def schedule(i: Step) -> Any:
            return step_size / (1 + decay_rate * fnp.floor(i / decay_steps))
    else:
        def schedule(i: Step) -> Any:
            return step_size / (1 + decay_rate * i / decay_steps)

    return schedule


def polynomial_decay(step_size: float, decay_steps: float, final_step_size: float,
                     power: float = 1.0) -> Schedule:
    """From ``step_size`` to ``final_step_size`` over ``decay_steps`` steps along
    ``(1 - i / decay_steps) ** power``, then constant.

    Example:
        >>> [float(polynomial_decay(1.0, 10, 0.0)(i)) for i in (0, 5, 20)]
        [1.0, 0.5, 0.0]
    """
    def schedule(step_num: Step) -> Any:
        step_num = fnp.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size

    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """``values[0]`` up to and including step ``boundaries[0]``, then ``values[1]`` up to
    ``boundaries[1]``, ...; ``len(values) == len(boundaries) + 1``. Works with a traced step.

    Example:
        >>> s = piecewise_constant([10, 20], [1.0, 0.1, 0.01])
        >>> [float(s(i)) for i in (10, 11, 25)]
        [1.0, 0.1, 0.01]
    """
    boundaries = numpy.asarray(boundaries)
    values = numpy.asarray(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")

    # JAX's values[sum(i > boundaries)], with the tables kept on the host: the step size
    # then meets parameters on any device (JAX's default-device tables move to them)
    def schedule(i: Step) -> Any:
        if not isinstance(i, Tracer) and device_of(i) is None:  # a step known here
            return values[int(numpy.sum(numpy.asarray(i) > boundaries))]
        index = sum((fnp.asarray(i > b).astype(int) for b in boundaries.tolist()), 0)
        out: Any = values[0].item()  # Python numbers: no array on the default device
        for k, v in enumerate(values[1:].tolist(), start=1):
            out = fnp.where(index == k, v, out)
        return fnp.asarray(out).astype(values.dtype)

    return schedule


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    """A schedule as given, or the constant schedule of a scalar.

    Example:
        >>> make_schedule(0.1)(5)
        0.1
    """
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if fnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(f"a step size must be a scalar or a schedule (a function of the step), "
                    f"got {type(scalar_or_schedule).__name__} of shape "
                    f"{fnp.shape(scalar_or_schedule)}")


# --------------------------------------------------------------------------------------------
# utilities


def l2_norm(tree: Any) -> Any:
    """The l2 norm of all the leaves of a pytree of arrays together (for weight decay).

    Example:
        >>> import funcgrad.numpy as fnp
        >>> float(l2_norm({"a": fnp.array([3.0]), "b": fnp.array(4.0)}))
        5.0
    """
    leaves = tree_util.tree_leaves(tree)
    return fnp.sqrt(sum(fnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree: Any, max_norm: float) -> Any:
    """The gradients scaled down to l2 norm ``max_norm`` if their :func:`l2_norm` exceeds it.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> clip_grads([fnp.array([3.0, 4.0])], 1.0)[0].tolist()
        [0.6000000000000001, 0.8]
    """
    norm = l2_norm(grad_tree)

    def normalize(g: Array) -> Array:
        return fnp.where(norm < max_norm, g, g * (max_norm / norm))

    return tree_util.tree_map(normalize, grad_tree)


# --------------------------------------------------------------------------------------------
# serialization


class JoinPoint:
    """Marks the boundary between two joined (nested) pytrees: the leaf of the parameters'
    tree holding that parameter's optimizer state."""

    def __init__(self, subtree: Any) -> None:
        self.subtree = subtree

    # as a pytree leaf holding a container, it looks iterable (as JAX's)
    def __iter__(self) -> Any:
        yield self.subtree


def unpack_optimizer_state(opt_state: OptimizerState) -> Any:
    """An :class:`OptimizerState` as the parameters' pytree with a :class:`JoinPoint` (holding
    that parameter's state) at each leaf: plain data to serialize (pickle).

    Example:
        >>> import funcgrad.numpy as fnp
        >>> init, _, _ = momentum(0.1, 0.9)
        >>> marked = unpack_optimizer_state(init({"w": fnp.array(1.0)}))
        >>> [float(v) for v in marked["w"].subtree]
        [1.0, 0.0]
    """
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = [tree_util.tree_unflatten(s, f) for s, f in zip(subtree_defs, states_flat)]
    return tree_util.tree_unflatten(tree_def, [JoinPoint(s) for s in subtrees])


def pack_optimizer_state(marked_pytree: Any) -> OptimizerState:
    """The inverse of :func:`unpack_optimizer_state`.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> init, _, get = momentum(0.1, 0.9)
        >>> state = init({"w": fnp.array(1.0)})
        >>> float(get(pack_optimizer_state(unpack_optimizer_state(state)))["w"])
        1.0
    """
    sentinels, tree_def = tree_util.tree_flatten(marked_pytree)
    bad = [type(s).__name__ for s in sentinels if not isinstance(s, JoinPoint)]
    if bad:
        raise TypeError(f"pack_optimizer_state: every leaf must be a JoinPoint (the output of "
                        f"unpack_optimizer_state), got {', '.join(sorted(set(bad)))}")
    states_flat, subtree_defs = _unzip2(tree_util.tree_flatten(s.subtree) for s in sentinels)
    return OptimizerState(list(states_flat), tree_def, list(subtree_defs))
