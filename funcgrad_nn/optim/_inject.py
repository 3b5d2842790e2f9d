"""optax's ``inject_hyperparams``: a transformation's hyperparameters kept in its state, so a
training loop can read or change them (the learning rate to log, a manual decay) and
schedules given for them are evaluated at the step count.

>>> import numpy as np
>>> from funcgrad_nn import optim
>>> tx = optim.inject_hyperparams(optim.sgd)(learning_rate=0.1)
>>> p = {"w": np.ones(1)}
>>> s = tx.init(p)
>>> s.hyperparams["learning_rate"] = np.asarray(0.5)   # change it between steps
>>> u, s = tx.update({"w": np.ones(1)}, s, p)
>>> u["w"], float(s.hyperparams["learning_rate"])
(array([-0.5]), 0.5)
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.backend import is_array
from funcgrad_nn.optim._transform import (
    GradientTransformation,
    GradientTransformationExtraArgs,
    _call_update,
    _increment,
    _zero_count,
)

__all__ = ["inject_hyperparams", "inject_stateful_hyperparams", "InjectStatefulHyperparamsState", "InjectHyperparamsState",
           "WrappedScheduleState", "StatefulSchedule", "WrappedSchedule"]


@runtime_checkable
class StatefulSchedule(Protocol):
    """A schedule with its own state (optax's): ``init() -> state``, ``update(state,
    **extra_args) -> state`` and ``schedule(state, **extra_args) -> value``; the extra
    arguments are those given to the transformation's ``update`` (e.g. ``value=loss``)."""

    def init(self) -> Any: ...

    def update(self, state: Any, **extra_args: Any) -> Any: ...

    def __call__(self, state: Any, **extra_args: Any) -> Any: ...


class WrappedScheduleState(NamedTuple):
    """The step count at which a scheduled hyperparameter is evaluated."""

    count: Any


class InjectStatefulHyperparamsState(NamedTuple):
    """The step count, the current hyperparameters (a dict, to read or change), each
    schedule's state and the inner transformation's state."""

    count: Any
    hyperparams: dict[str, Any]
    hyperparams_states: dict[str, Any]
    inner_state: Any


InjectHyperparamsState = InjectStatefulHyperparamsState  # the name most code imports


class WrappedSchedule:
    """A step-count schedule as a :class:`StatefulSchedule` (optax's): its state is the
    count.

    >>> sched = WrappedSchedule(lambda count: 0.1 * count)
    >>> s = sched.update(sched.init())
    >>> float(sched(s))
    0.1
    """

    def __init__(self, schedule_fn: Callable[[Any], Any]) -> None:
        self.schedule_fn = schedule_fn

    def init(self) -> WrappedScheduleState:
        return WrappedScheduleState(fnp.zeros((), dtype=fnp.int32))

    def update(self, state: WrappedScheduleState, **extra_args: Any) -> WrappedScheduleState:
        return WrappedScheduleState(_increment(state.count))

    def __call__(self, state: WrappedScheduleState, **extra_args: Any) -> Any:
        return self.schedule_fn(state.count)


def _highest_float(params: Any) -> Any:
    """optax's ``tree.dtype(params, "highest")``: the promoted dtype of the leaves."""
    dtypes = [np.dtype(x.dtype) for x in tree_util.tree_leaves(params) if hasattr(x, "dtype")]
    return np.result_type(*dtypes) if dtypes else np.dtype(np.float64)


def _convert_floats(x: Any, dtype: Any, params: Any) -> Any:
    """Float-like ``x`` as a 0-d array of ``dtype`` on the parameters' device; the rest
    (ints) unchanged, as optax's ``_convert_floats``."""
    kind = np.dtype(x.dtype).kind if hasattr(x, "dtype") else (
        "f" if isinstance(x, float) else None)
    if kind != "f":
        return x
    if is_array(x) or hasattr(x, "dtype"):
        return fnp.asarray(x).astype(dtype)
    leaves = [v for v in tree_util.tree_leaves(params) if hasattr(v, "dtype")]
    if leaves:
        return fnp.full_like(leaves[0], x, dtype=dtype, shape=())
    return fnp.asarray(x, dtype=dtype)


def inject_hyperparams(
    inner_factory: Callable[..., GradientTransformation],
    static_args: str | Iterable[str] = (),
    hyperparam_dtype: Any = None,
) -> Callable[..., GradientTransformation]:
    """Wrap an optimizer factory (``optim.adam``, ``optim.sgd``, your own) so that its
    numeric hyperparameters live in ``state.hyperparams`` and callables given for them are
    schedules of the step count, as optax's ``inject_hyperparams``.

    Booleans and the names in ``static_args`` stay fixed arguments; floats are stored as
    0-d arrays of ``hyperparam_dtype`` (default: the parameters' highest float dtype).

    >>> import numpy as np
    >>> from funcgrad_nn import optim
    >>> tx = inject_hyperparams(optim.adam)(learning_rate=optim.linear_schedule(0.1, 0.0, 4))
    >>> s = tx.init({"w": np.zeros(2)})
    >>> for _ in range(2):
    ...     _, s = tx.update({"w": np.ones(2)}, s, {"w": np.zeros(2)})
    >>> round(float(s.hyperparams["learning_rate"]), 6), int(s.count)  # the 2nd step's
    (0.075, 2)
    """
    signature = inspect.signature(inner_factory)
    static = {static_args} if isinstance(static_args, str) else set(static_args)
    if not static <= set(signature.parameters):
        raise ValueError(
            "`static_args` must specify a subset of `inner_factory`'s parameters. Given "
            f"`static_args`: {static}. `inner_factory` parameters: "
            f"{set(signature.parameters)}")

    @functools.wraps(inner_factory)
    def wrapped(*args: Any, **kwargs: Any) -> GradientTransformation:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        scheduled, numeric, other = {}, {}, {}
        for name, value in bound.arguments.items():
            if name in static or isinstance(value, bool):
                other[name] = value
            elif isinstance(value, StatefulSchedule):
                scheduled[name] = value
            elif callable(value):
                scheduled[name] = WrappedSchedule(value)
            elif isinstance(value, int | float | np.generic) or is_array(value):
                numeric[name] = value
            else:
                other[name] = value

        def dtype_for(params: Any) -> Any:
            return np.dtype(hyperparam_dtype) if hyperparam_dtype is not None else (
                _highest_float(params))

        def init(params: Any) -> InjectStatefulHyperparamsState:
            dtype, count = dtype_for(params), _zero_count(params)
            hparams = {k: _convert_floats(v, dtype, params) for k, v in numeric.items()}
            hparams = {k: v if hasattr(v, "dtype") else fnp.asarray(v)
                       for k, v in hparams.items()}
            # a wrapped schedule's count starts on the parameters' device, as the count
            states = {k: WrappedScheduleState(count) if isinstance(f, WrappedSchedule)
                      else f.init() for k, f in scheduled.items()}
            hparams.update({k: _convert_floats(f(states[k]), dtype, params)
                            for k, f in scheduled.items()})
            return InjectStatefulHyperparamsState(
                count, hparams, states, inner_factory(**other, **hparams).init(params))

        def update(updates: Any, state: InjectStatefulHyperparamsState, params: Any = None,
                   **extra_args: Any) -> tuple[Any, InjectStatefulHyperparamsState]:
            like = params if params is not None else updates
            dtype = dtype_for(like)
            hparams = {k: _convert_floats(v, dtype, like) for k, v in state.hyperparams.items()}
            hparams.update({k: _convert_floats(f(state.hyperparams_states[k], **extra_args),
                                               dtype, like)
                            for k, f in scheduled.items()})
            states = {k: f.update(state.hyperparams_states[k], **extra_args)
                      for k, f in scheduled.items()}
            updates, inner_state = _call_update(inner_factory(**other, **hparams), updates,
                                                state.inner_state, params, extra_args)
            return updates, InjectStatefulHyperparamsState(_increment(state.count), hparams, states,
                                                           inner_state)

        return GradientTransformationExtraArgs(init, update)

    return wrapped


def inject_stateful_hyperparams(
    inner_factory: Callable[..., GradientTransformation],
    static_args: str | Iterable[str] = (),
    hyperparam_dtype: Any = None,
) -> Callable[..., GradientTransformation]:
    """optax's deprecated name of :func:`inject_hyperparams` (which takes stateful schedules
    too): the same wrapper, with optax's DeprecationWarning.

    >>> import warnings, numpy as np
    >>> from funcgrad_nn import optim
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     tx = inject_stateful_hyperparams(optim.sgd)(learning_rate=0.1)
    >>> float(tx.init(np.zeros(1)).hyperparams["learning_rate"])
    0.1
    """
    import warnings

    warnings.warn("inject_stateful_hyperparams is deprecated, use inject_hyperparams instead",
                  DeprecationWarning, stacklevel=2)
    return inject_hyperparams(inner_factory, static_args, hyperparam_dtype)
