"""The functional optimizer core: optax-style gradient transformations.

A :class:`GradientTransformation` is a pair of pure functions ``init(params) -> state`` and
``update(updates, state, params=None) -> (updates, state)`` over pytrees. Everything is written
with :mod:`funcgrad.numpy`, so it runs on NumPy and CuPy arrays and inside ``jit``/``vmap``/
``grad``. Updates are *added* to parameters (:func:`apply_updates`), so the learning-rate step
multiplies by ``-learning_rate`` as in optax.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.backend import device_of, device_put
from funcgrad.core import is_tracer
from funcgrad_nn.module import Module
from funcgrad_nn.optim._module_params import merge_params, params_view
from funcgrad_nn.optim._schedules import Schedule

__all__ = [
    "ScalarOrSchedule",
    "TransformInitFn",
    "TransformUpdateFn",
    "TransformUpdateExtraArgsFn",
    "GradientTransformation",
    "GradientTransformationExtraArgs",
    "with_extra_args_support",
    "EmptyState",
    "ScaleByAdamState",
    "ScaleByScheduleState",
    "TraceState",
    "ScaleByRmsState",
    "ScaleByRmsWithCountState",
    "ScaleByRStdDevState",
    "ScaleByRStdDevWithCountState",
    "ScaleByRssState",
    "MaskedState",
    "EmaState",
    "ZeroNansState",
    "ApplyIfFiniteState",
    "WeightDecayScheduleState",
    "PartitionState",
    "MultiTransformState",
    "identity",
    "set_to_zero",
    "ema",
    "zero_nans",
    "apply_if_finite",
    "incremental_update",
    "periodic_update",
    "masked",
    "freeze",
    "selective_transform",
    "partition",
    "multi_transform",
    "chain",
    "apply_updates",
    "scale",
    "scale_by_learning_rate",
    "scale_by_schedule",
    "scale_by_adam",
    "scale_by_rms",
    "scale_by_stddev",
    "scale_by_rss",
    "scale_by_adamax",
    "trace",
    "add_decayed_weights",
    "clip",
    "clip_by_global_norm",
    "global_norm",
    "sgd",
    "adam",
    "adamw",
    "nadam",
    "nadamw",
    "adamax",
    "adamaxw",
    "rmsprop",
    "adagrad",
]

ScalarOrSchedule = float | Schedule


# optax's typing protocols for the two halves of a transformation, for annotating user code.
class TransformInitFn(Protocol):
    """``init(params) -> state`` (optax's ``TransformInitFn``)."""

    def __call__(self, params: Any) -> Any: ...


class TransformUpdateFn(Protocol):
    """``update(updates, state, params=None) -> (updates, state)`` (optax's)."""

    def __call__(self, updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]: ...


class TransformUpdateExtraArgsFn(Protocol):
    """``update(updates, state, params=None, **extra_args)`` (optax's)."""

    def __call__(self, updates: Any, state: Any, params: Any = None,
                 **extra_args: Any) -> tuple[Any, Any]: ...

NO_PARAMS_MSG = (
    "You are using a transformation that requires the current value of parameters, but you "
    "are not passing `params` when calling `update`.")


class _GradientTransformationFields(NamedTuple):
    init: Callable[[Any], Any]
    update: Callable[..., tuple[Any, Any]]


def _module_aware_init(init: Callable[[Any], Any]) -> Callable[[Any], Any]:
    if getattr(init, "_module_aware", False):
        return init

    def wrapped(params: Any) -> Any:
        return init(params_view(params))

    wrapped._module_aware = True  # type: ignore[attr-defined]
    wrapped.__wrapped__ = init  # type: ignore[attr-defined]
    return wrapped


def _module_aware_update(update: Callable[..., Any]) -> Callable[..., Any]:
    if getattr(update, "_module_aware", False):
        return update

    def wrapped(updates: Any, state: Any, *params: Any, **extra: Any) -> Any:
        # the arguments forwarded as given: an update written as ``lambda u, s: ...`` still
        # works when called without params
        if "params" in extra:
            extra["params"] = params_view(extra["params"])
        return update(params_view(updates, dedupe=False), state,
                      *[params_view(p) for p in params], **extra)

    wrapped._module_aware = True  # type: ignore[attr-defined]
    wrapped.__wrapped__ = update  # type: ignore[attr-defined]
    return wrapped


class GradientTransformation(_GradientTransformationFields):
    """A pure optimizer: ``init(params) -> state``, ``update(updates, state, params) -> (updates, state)``.

    ``params`` and ``updates`` may be a whole ``funcgrad_nn`` Module (the model, and the
    Module-shaped gradients of ``funcgrad_nn.grad``): it is seen through its parameter view,
    None at buffers and frozen parameters, which get no state and no update (Flax keeps them
    outside ``params``); :func:`apply_updates` puts the new parameters back into the model.

    >>> import numpy as np
    >>> tx = sgd(0.1)
    >>> params = {"w": np.ones(2)}
    >>> state = tx.init(params)
    >>> updates, state = tx.update({"w": np.full(2, 2.0)}, state, params)
    >>> apply_updates(params, updates)["w"]
    array([0.8, 0.8])
    """

    __slots__ = ()

    def __new__(cls, init: Callable[[Any], Any], update: Callable[..., Any]
                ) -> GradientTransformation:
        return super().__new__(cls, _module_aware_init(init), _module_aware_update(update))


class GradientTransformationExtraArgs(GradientTransformation):
    """A :class:`GradientTransformation` whose ``update`` takes extra keyword arguments
    (``update(updates, state, params=None, **extra_args)``, e.g. the loss ``value`` for
    ``scale_by_polyak``); :func:`chain` forwards them to such transformations (optax's).

    >>> import numpy as np
    >>> by_value = GradientTransformationExtraArgs(
    ...     lambda p: EmptyState(), lambda u, s, p=None, *, value: (u * value, s))
    >>> tx = chain(scale(2.0), by_value)
    >>> tx.update(np.ones(2), tx.init(np.zeros(2)), value=3.0)[0]
    array([6., 6.])
    """

    __slots__ = ()


class EmptyState(NamedTuple):
    """State of stateless transformations."""


class ScaleByScheduleState(NamedTuple):
    """The step count fed to a schedule."""

    count: Any


class ScaleByAdamState(NamedTuple):
    """Adam's step count and first/second moment estimates."""

    count: Any
    mu: Any
    nu: Any


class TraceState(NamedTuple):
    """The momentum buffer of :func:`trace`."""

    trace: Any


class ScaleByRmsState(NamedTuple):
    """Running mean of squared gradients."""

    nu: Any


class ScaleByRmsWithCountState(NamedTuple):
    """Running mean of squared gradients and the step count (``bias_correction=True``)."""

    count: Any
    nu: Any


class ScaleByRStdDevState(NamedTuple):
    """Running means of gradients and squared gradients (centered RMSprop)."""

    mu: Any
    nu: Any


class ScaleByRStdDevWithCountState(NamedTuple):
    """Running means of gradients and squared gradients and the step count
    (``bias_correction=True``)."""

    count: Any
    mu: Any
    nu: Any


class ScaleByRssState(NamedTuple):
    """Running sum of squared gradients (Adagrad)."""

    sum_of_squares: Any


class MaskedState(NamedTuple):
    """The inner transformation's state of :func:`masked` (None at the masked-out leaves)."""

    inner_state: Any


class PartitionState(NamedTuple):
    """Each label's :class:`MaskedState` of :func:`partition`."""

    inner_states: Any


MultiTransformState = PartitionState  # optax's former name


class EmaState(NamedTuple):
    """:func:`ema`'s step count and moving average."""

    count: Any
    ema: Any


class ZeroNansState(NamedTuple):
    """Per leaf, whether :func:`zero_nans` found a NaN at the last call."""

    found_nan: Any


class ApplyIfFiniteState(NamedTuple):
    """:func:`apply_if_finite`'s counters of non-finite updates and the inner state."""

    notfinite_count: Any
    last_finite: Any
    total_notfinite: Any
    inner_state: Any


def _tmap(f: Callable[..., Any], *trees: Any) -> Any:
    # None marks "no gradient for this leaf" (frozen parameters): keep it None.
    x = trees[0]
    if x is None:
        return None
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        # one array (the optimizers' per-parameter step): no pytree walk, which cost more
        # than the arithmetic on small parameters
        return f(*trees)
    return tree_util.tree_map(
        lambda x, *rest: None if x is None else f(x, *rest), *trees, is_leaf=lambda x: x is None
    )


def _zero_count(params: Any) -> Any:
    # The count lives on the parameters' device so bias corrections never mix devices.
    leaves = tree_util.tree_leaves(params)
    if leaves:
        return fnp.zeros_like(leaves[0], dtype=fnp.int32, shape=())
    return fnp.zeros((), dtype=fnp.int32)


def _as_dtype(x: Any, like: Any) -> Any:
    # Python scalars are weak (NEP 50) and keep the leaf's dtype; arrays are cast to it.
    if isinstance(x, np.generic):
        # NumPy scalars (e.g. ``1 - 0.9 ** count`` of a host count) go anywhere as Python
        # scalars; checked first: np.float64 is a float, but a strong one (float32 leaves
        # would become float64).
        return x.item()
    if isinstance(x, int | float):
        return x
    x = fnp.asarray(x).astype(like.dtype)
    if not is_tracer(x) and not is_tracer(like) and np.ndim(x) == 0:
        # A coefficient computed from scalars (a schedule of a host count) may sit on the
        # default device while the leaf is on another: move the 0-d value to the leaf.
        target = device_of(like)
        if target is not None and device_of(x) != target:
            x = device_put(x, target)
    return x


def _increment(count: Any) -> Any:
    """``count + 1`` as an array where ``count`` is (a Python ``+`` on a 0-d NumPy array gives
    a NumPy scalar, which the next operation would place on the default device)."""
    return fnp.add(count, fnp.ones_like(count))


def _dtype(dtype: Any) -> Any:
    # optax's canonicalize_dtype: None keeps each leaf's dtype
    return None if dtype is None else np.dtype(dtype)


def _cast(tree: Any, dtype: Any) -> Any:
    """``tree``'s leaves cast to ``dtype`` (None: unchanged), optax's ``tree.cast``."""
    if dtype is None:
        return tree
    return _tmap(lambda x: x.astype(dtype), tree)


def _bias_corrected(moment: Any, decay: Any, count: Any) -> Any:
    """``moment / (1 - decay ** count)``, the correction cast to each leaf's dtype."""
    correction = 1 - decay ** fnp.asarray(count, dtype=fnp.float64)
    return _tmap(lambda t: t / _as_dtype(correction, t), moment)


def _call_update(tx: GradientTransformation, updates: Any, state: Any, params: Any,
                 extra_args: dict[str, Any]) -> tuple[Any, Any]:
    """``tx.update``, given the extra keyword arguments when it takes them (optax wraps the
    others in ``with_extra_args_support``, which drops them)."""
    if extra_args and isinstance(tx, GradientTransformationExtraArgs):
        return tx.update(updates, state, params, **extra_args)
    return tx.update(updates, state, params)


def identity() -> GradientTransformation:
    """The transformation that leaves updates unchanged.

    >>> identity().update(1.0, identity().init(1.0))[0]
    1.0
    """
    return GradientTransformation(lambda params: EmptyState(), lambda u, s, p=None: (u, s))


def set_to_zero() -> GradientTransformation:
    """Replace every update by zeros (optax's ``set_to_zero``: frozen parameters, e.g. in
    :func:`partition`).

    >>> import numpy as np
    >>> set_to_zero().update({"w": np.ones(2)}, EmptyState())[0]
    {'w': array([0., 0.])}
    """

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        return _tmap(fnp.zeros_like, updates), state

    return GradientTransformation(lambda params: EmptyState(), update)


def ema(decay: float, debias: bool = True, accumulator_dtype: Any = None) -> GradientTransformation:
    """An exponential moving average of the updates, ``(1 - decay) * g + decay * ema``
    (optax's ``ema``), divided by ``1 - decay**t`` when ``debias``.

    >>> import numpy as np
    >>> tx = ema(0.5)
    >>> s = tx.init(np.zeros(1)); _, s = tx.update(np.ones(1), s); u, s = tx.update(np.zeros(1), s)
    >>> u
    array([0.33333333])
    """
    accumulator_dtype = _dtype(accumulator_dtype)

    def init(params: Any) -> EmaState:
        return EmaState(_zero_count(params),
                        _tmap(lambda p: fnp.zeros_like(p, dtype=accumulator_dtype), params))

    def update(updates: Any, state: EmaState, params: Any = None) -> tuple[Any, Any]:
        new = _tmap(lambda g, e: (1 - decay) * g + decay * e, updates, state.ema)
        count = _increment(state.count)
        out = _bias_corrected(new, decay, count) if debias else new
        return out, EmaState(count, _cast(new, accumulator_dtype))

    return GradientTransformation(init, update)


def zero_nans() -> GradientTransformation:
    """Replace NaNs in the updates by 0; the state records, per leaf, whether there were any
    (optax's ``zero_nans``).

    >>> import numpy as np
    >>> u, s = zero_nans().update([np.array([1.0, np.nan])], zero_nans().init([np.zeros(2)]))
    >>> u[0], bool(s.found_nan[0])
    (array([1., 0.]), True)
    """

    def init(params: Any) -> ZeroNansState:
        return ZeroNansState(_tmap(lambda p: fnp.zeros_like(p, dtype=fnp.bool_, shape=()),
                                   params))

    def update(updates: Any, state: ZeroNansState, params: Any = None) -> tuple[Any, Any]:
        found = _tmap(lambda u: fnp.any(fnp.isnan(u)), updates)
        return (_tmap(lambda u: fnp.where(fnp.isnan(u), fnp.zeros_like(u), u), updates),
                ZeroNansState(found))

    return GradientTransformation(init, update)


def apply_if_finite(inner: GradientTransformation,
                    max_consecutive_errors: int) -> GradientTransformation:
    """Skip ``inner``'s step (zero updates, its state unchanged) when an update is not
    finite, unless that happened more than ``max_consecutive_errors`` times in a row (then
    it gives up and steps), as optax's ``apply_if_finite``. Written with ``where``, so it
    runs under ``jit``.

    >>> import numpy as np
    >>> tx = apply_if_finite(sgd(1.0), max_consecutive_errors=2)
    >>> u, s = tx.update([np.array([np.inf])], tx.init([np.zeros(1)]))
    >>> u[0], int(s.total_notfinite)
    (array([0.]), 1)
    """

    def init(params: Any) -> ApplyIfFiniteState:
        zero = _zero_count(params)
        return ApplyIfFiniteState(zero, fnp.ones_like(zero, dtype=fnp.bool_), zero,
                                  inner.init(params))

    def update(updates: Any, state: ApplyIfFiniteState,
               params: Any = None, **extra_args: Any) -> tuple[Any, Any]:
        leaves = [x for x in tree_util.tree_leaves(updates) if x is not None]
        finite = fnp.ones_like(state.last_finite)
        for x in leaves:
            finite = fnp.logical_and(finite, fnp.all(fnp.isfinite(x)))
        count = fnp.where(finite, fnp.zeros_like(state.notfinite_count),
                          _increment(state.notfinite_count))
        step = fnp.logical_or(finite, count > max_consecutive_errors)
        new_updates, new_inner = _call_update(inner, updates, state.inner_state, params,
                                              extra_args)
        out = _tmap(lambda u: fnp.where(step, u, fnp.zeros_like(u)), new_updates)
        inner_state = tree_util.tree_map(
            lambda n, o: fnp.where(step, n, o).astype(fnp.asarray(o).dtype), new_inner,
            state.inner_state)
        total = fnp.where(finite, state.total_notfinite, _increment(state.total_notfinite))
        return out, ApplyIfFiniteState(count, finite, total, inner_state)

    return GradientTransformationExtraArgs(init, update)


def incremental_update(new_tensors: Any, old_tensors: Any, step_size: Any) -> Any:
    """Polyak averaging: ``step_size * new + (1 - step_size) * old`` leaf by leaf (optax's
    ``incremental_update``, e.g. a target network's soft update).

    >>> import numpy as np
    >>> incremental_update({"w": np.ones(1)}, {"w": np.zeros(1)}, 0.1)
    {'w': array([0.1])}
    """
    return tree_util.tree_map(
        lambda new, old: None if new is None else step_size * new + (1.0 - step_size) * old,
        new_tensors, old_tensors, is_leaf=lambda x: x is None)


def periodic_update(new_tensors: Any, old_tensors: Any, steps: Any, update_period: int) -> Any:
    """``new_tensors`` when ``steps`` is a multiple of ``update_period``, else
    ``old_tensors`` (optax's ``periodic_update``: a slow copy of the parameters); a traced
    ``steps`` selects with ``where``.

    >>> import numpy as np
    >>> periodic_update({"w": np.ones(1)}, {"w": np.zeros(1)}, 4, 2)
    {'w': array([1.])}
    """
    due = fnp.mod(fnp.asarray(steps), update_period) == 0
    if not is_tracer(due):
        return new_tensors if bool(due) else old_tensors
    return tree_util.tree_map(lambda n, o: fnp.where(due, n, o), new_tensors, old_tensors)


def _is_fn(mask: Any) -> bool:
    """A mask (or labels) given as a function of the parameters; a Module-shaped mask is a
    tree, though Modules are callable."""
    return callable(mask) and not isinstance(mask, Module)


def _mask_view(mask: Any) -> Any:
    """A Module-shaped mask or label tree made over the whole model (its buffers and frozen
    parameters too, e.g. ``tree_map(lambda p: p.ndim > 1, model)``) seen as the parameters
    are: its parameter view (not deduplicated: its leaves are shared bools or labels)."""
    return params_view(mask, dedupe=False)


def _mask_tree(tree: Any, mask: Any) -> Any:
    """``tree`` with None at the leaves where ``mask`` (a prefix of it) is False."""
    return tree_util.tree_map(lambda m, t: tree_util.tree_map(
        lambda x: x if m else None, t, is_leaf=lambda x: x is None), mask, tree,
        is_leaf=lambda x: x is None)


def masked(inner: GradientTransformation, mask: Any) -> GradientTransformation:
    """Apply ``inner`` only where ``mask`` is True (optax's ``masked``); the other updates
    pass through unchanged. ``mask`` is a pytree of bools shaped like the parameters (or a
    prefix of them), or a function of the parameters (of the updates in ``update``)
    returning one; the inner state holds None at the masked-out leaves.

    >>> import numpy as np
    >>> tx = masked(scale(-0.1), {"w": True, "b": False})
    >>> u, _ = tx.update({"w": np.ones(1), "b": np.ones(1)}, tx.init({"w": 0, "b": 0}))
    >>> u
    {'b': array([1.]), 'w': array([-0.1])}
    """

    def init(params: Any) -> MaskedState:
        m = _mask_view(mask(params) if _is_fn(mask) else mask)
        return MaskedState(inner.init(_mask_tree(params, m)))

    def update(updates: Any, state: MaskedState, params: Any = None,
               **extra_args: Any) -> tuple[Any, Any]:
        m = _mask_view(mask(updates) if _is_fn(mask) else mask)
        new, inner_state = _call_update(
            inner, _mask_tree(updates, m), state.inner_state,
            None if params is None else _mask_tree(params, m), extra_args)
        # merged leaf by leaf: a Module holding None in place of a parameter has another
        # pytree structure than the Module (the None is not a leaf), so the two trees cannot
        # be mapped together
        leaves, treedef = tree_util.tree_flatten(updates)
        flags = tree_util.tree_leaves(tree_util.tree_map(
            lambda mm, t: tree_util.tree_map(lambda _: bool(mm), t), m, updates))
        inner_new = iter(tree_util.tree_leaves(new))
        out = treedef.unflatten([next(inner_new) if f else u for u, f in zip(leaves, flags)])
        return out, MaskedState(inner_state)

    return GradientTransformationExtraArgs(init, update)


def partition(transforms: dict[Any, GradientTransformation],
              param_labels: Any) -> GradientTransformation:
    """A different transformation per group of parameters (optax's ``partition``, formerly
    ``multi_transform``): ``param_labels`` (a pytree of labels shaped like the parameters,
    or a function of them returning one) names each leaf's entry of ``transforms``; e.g.
    ``{"trainable": adam(1e-3), "frozen": set_to_zero()}``.

    >>> import numpy as np
    >>> tx = partition({"a": sgd(0.1), "f": set_to_zero()}, {"w": "a", "b": "f"})
    >>> u, s = tx.update({"w": np.ones(1), "b": np.ones(1)}, tx.init({"w": 0, "b": 0}))
    >>> u, sorted(s.inner_states)
    ({'b': array([0.]), 'w': array([-0.1])}, ['a', 'f'])
    """

    def masks(labels: Any) -> dict[Any, Any]:
        found = set(tree_util.tree_leaves(labels))
        if not found <= set(transforms):
            raise ValueError(
                "Some parameters have no corresponding transformation.\n"
                f"Parameter labels: {sorted(found, key=str)} \n"
                f"Transforms keys: {sorted(transforms, key=str)} \n")
        return {k: tree_util.tree_map(lambda label, k=k: label == k, labels)
                for k in transforms}

    def init(params: Any) -> PartitionState:
        labels = _mask_view(param_labels(params) if _is_fn(param_labels) else param_labels)
        ms = masks(labels)
        return PartitionState({k: masked(tx, ms[k]).init(params)
                               for k, tx in transforms.items()})

    def update(updates: Any, state: PartitionState, params: Any = None,
               **extra_args: Any) -> tuple[Any, Any]:
        labels = _mask_view(param_labels(updates) if _is_fn(param_labels) else param_labels)
        ms = masks(labels)
        new = {}
        for k, tx in transforms.items():
            updates, new[k] = masked(tx, ms[k]).update(updates, state.inner_states[k], params,
                                                       **extra_args)
        return updates, PartitionState(new)

    return GradientTransformationExtraArgs(init, update)


multi_transform = partition  # optax's former name


def freeze(mask: Any) -> GradientTransformation:
    """Zero the updates where ``mask`` is True (optax's ``freeze``: ``masked(set_to_zero(),
    mask)``; ``mask`` a pytree of bools, a prefix of one, or one bool for everything).

    >>> import numpy as np
    >>> tx = chain(freeze({"w": False, "b": True}), sgd(0.1))
    >>> p = {"w": np.ones(1), "b": np.ones(1)}
    >>> tx.update(p, tx.init(p), p)[0]
    {'b': array([-0.]), 'w': array([-0.1])}
    """
    return masked(set_to_zero(), mask)


def selective_transform(optimizer: GradientTransformation, *,
                        freeze_mask: Any) -> GradientTransformation:
    """Run ``optimizer`` on the parameters where ``freeze_mask`` is False and zero the
    others' updates (optax's ``selective_transform``: a :func:`partition` into "train" and
    "freeze"; the frozen leaves get no optimizer state).

    >>> import numpy as np
    >>> tx = selective_transform(sgd(0.1), freeze_mask={"w": False, "b": True})
    >>> p = {"w": np.ones(1), "b": np.ones(1)}
    >>> tx.update(p, tx.init(p), p)[0]
    {'b': array([0.]), 'w': array([-0.1])}
    """

    def label_fn(params: Any) -> Any:
        del params
        return tree_util.tree_map(lambda m: "freeze" if m else "train", freeze_mask)

    return partition({"train": optimizer, "freeze": set_to_zero()}, param_labels=label_fn)


def chain(*transforms: GradientTransformation) -> GradientTransformationExtraArgs:
    """Apply ``transforms`` in sequence; the state is the tuple of their states. Extra
    keyword arguments of ``update`` (optax's extra args, e.g. ``value=`` for
    ``scale_by_polyak``) go to the transformations that take them
    (:class:`GradientTransformationExtraArgs`), as optax's.

    >>> import numpy as np
    >>> tx = chain(clip_by_global_norm(1.0), scale(-0.5))
    >>> tx.update([np.array([3.0, 4.0])], tx.init([np.zeros(2)]))[0][0]
    array([-0.3, -0.4])
    """

    def init(params: Any) -> tuple:
        return tuple(t.init(params) for t in transforms)

    def update(updates: Any, state: tuple, params: Any = None,
               **extra_args: Any) -> tuple[Any, tuple]:
        if len(state) != len(transforms):
            raise ValueError(
                f"chain: state has {len(state)} entries for {len(transforms)} transformations"
            )
        new_state = []
        for t, s in zip(transforms, state):
            updates, s = _call_update(t, updates, s, params, extra_args)
            new_state.append(s)
        return updates, tuple(new_state)

    return GradientTransformationExtraArgs(init, update)


def with_extra_args_support(tx: GradientTransformation) -> GradientTransformationExtraArgs:
    """``tx`` with an ``update`` that accepts (and ignores) extra keyword arguments (optax's).

    >>> import numpy as np
    >>> tx = with_extra_args_support(scale(2.0))
    >>> tx.update(np.ones(1), tx.init(None), value=3.0)[0]
    array([2.])
    """
    if isinstance(tx, GradientTransformationExtraArgs):
        return tx

    def update(updates: Any, state: Any, params: Any = None, **extra_args: Any) -> Any:
        return tx.update(updates, state, params)

    return GradientTransformationExtraArgs(tx.init, update)


def apply_updates(params: Any, updates: Any) -> Any:
    """``params + updates`` leaf by leaf, keeping each parameter's dtype; None updates skip.

    ``params`` may be a Module (the model) and ``updates`` its parameter view (what
    ``tx.update`` gives for Module-shaped gradients): the result is the model with new
    trainable parameters and the same buffers.

    >>> import numpy as np
    >>> apply_updates([np.ones(2, np.float32)], [np.ones(2)])[0].dtype
    dtype('float32')
    """
    def add(p: Any, u: Any) -> Any:
        return p if u is None else (p + u).astype(fnp.asarray(p).dtype)

    if isinstance(params, Module):
        view = params_view(params)
        new = tree_util.tree_map(add, view, params_view(updates, dedupe=False),
                                 is_leaf=lambda x: x is None)
        return merge_params(params, new)
    return tree_util.tree_map(add, params, updates, is_leaf=lambda x: x is None)


def scale(step_size: float) -> GradientTransformation:
    """Multiply updates by a constant.

    >>> import numpy as np
    >>> scale(2.0).update(np.ones(2), EmptyState())[0]
    array([2., 2.])
    """

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        # A traced or array step size is cast to each update's dtype (as a Python float is,
        # being weak), so a jitted step with lr as an argument keeps float32 in float32.
        return _tmap(lambda u: u * _as_dtype(step_size, u), updates), state

    return GradientTransformation(lambda params: EmptyState(), update)


def scale_by_schedule(step_size_fn: Schedule) -> GradientTransformation:
    """Multiply updates by ``step_size_fn(count)``, counting calls from 0.

    >>> import numpy as np
    >>> tx = scale_by_schedule(lambda n: 1.0 / (n + 1))
    >>> s = tx.init(np.zeros(1))
    >>> u, s = tx.update(np.ones(1), s); u2, s = tx.update(np.ones(1), s); u2
    array([0.5])
    """

    def init(params: Any) -> ScaleByScheduleState:
        return ScaleByScheduleState(_zero_count(params))

    def update(updates: Any, state: ScaleByScheduleState, params: Any = None) -> tuple[Any, Any]:
        s = step_size_fn(state.count)
        updates = _tmap(lambda u: u * _as_dtype(s, u), updates)
        return updates, ScaleByScheduleState(_increment(state.count))

    return GradientTransformation(init, update)


def scale_by_learning_rate(learning_rate: ScalarOrSchedule | None = None, *, flip_sign: bool = True) -> GradientTransformation:
    """Scale by ``-learning_rate`` (a constant or a schedule of the step count).

    >>> import numpy as np
    >>> scale_by_learning_rate(0.1).update(np.ones(1), EmptyState())[0]
    array([-0.1])
    """
    if learning_rate is None:  # optax: no scaling at all
        return identity()
    m = -1 if flip_sign else 1
    if callable(learning_rate):
        return scale_by_schedule(lambda count: m * learning_rate(count))
    return scale(m * learning_rate)


def scale_by_adam(
    b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8, eps_root: float = 0.0,
    mu_dtype: Any = None, *, nesterov: bool = False,
) -> GradientTransformation:
    """Adam's rescaling: ``mu_hat / (sqrt(nu_hat + eps_root) + eps)`` with bias correction.

    ``mu_dtype`` stores the first moment in that dtype (e.g. bfloat16 to save memory);
    ``nesterov=True`` is NAdam's look-ahead (Dozat, 2016), as optax's:
    ``mu_hat = b1 * mu / (1 - b1**(t+1)) + (1 - b1) * g / (1 - b1**t)``.

    >>> import numpy as np
    >>> tx = scale_by_adam()
    >>> np.round(tx.update(np.array([0.5, -2.0]), tx.init(np.zeros(2)))[0], 6)
    array([ 1., -1.])
    >>> tx = scale_by_adam(nesterov=True)  # the first step looks ahead: 1 + 0.09 / 0.19
    >>> np.round(tx.update(np.array([0.5, -2.0]), tx.init(np.zeros(2)))[0], 6)
    array([ 1.473684, -1.473684])
    """
    mu_dtype = _dtype(mu_dtype)

    def init(params: Any) -> ScaleByAdamState:
        mu = _tmap(lambda p: fnp.zeros_like(p, dtype=mu_dtype), params)
        return ScaleByAdamState(_zero_count(params), mu, _tmap(fnp.zeros_like, params))

    def update(updates: Any, state: ScaleByAdamState, params: Any = None) -> tuple[Any, Any]:
        mu = _tmap(lambda g, m: (1 - b1) * g + b1 * m, updates, state.mu)
        nu = _tmap(lambda g, v: (1 - b2) * (g * fnp.conj(g)).real + b2 * v, updates, state.nu)
        count = _increment(state.count)
        if nesterov:
            mu_hat = _tmap(lambda m, g: b1 * m + (1 - b1) * g,
                           _bias_corrected(mu, b1, _increment(count)),
                           _bias_corrected(updates, b1, count))
        else:
            mu_hat = _bias_corrected(mu, b1, count)
        nu_hat = _bias_corrected(nu, b2, count)
        out = _tmap(lambda m, v: m / (fnp.sqrt(v + eps_root) + eps), mu_hat, nu_hat)
        nu = _tmap(lambda v, old: v.astype(old.dtype), nu, state.nu)
        return out, ScaleByAdamState(count, _cast(mu, mu_dtype), nu)

    return GradientTransformation(init, update)


def scale_by_rms(
    decay: float = 0.9, eps: float = 1e-8, initial_scale: float = 0.0, eps_in_sqrt: bool = True,
    bias_correction: bool = False,
) -> GradientTransformation:
    """Divide by the root of a running mean of squared updates (RMSprop); with
    ``bias_correction`` the mean is divided by ``1 - decay**t`` first (the state then counts
    steps: :class:`ScaleByRmsWithCountState`).

    >>> import numpy as np
    >>> tx = scale_by_rms(decay=0.0, eps=0.0)
    >>> tx.update(np.array([-2.0]), tx.init(np.zeros(1)))[0]
    array([-1.])
    >>> tx = scale_by_rms(decay=0.5, eps=0.0, bias_correction=True)
    >>> tx.update(np.array([-2.0]), tx.init(np.zeros(1)))[0]
    array([-1.])
    """

    def init(params: Any) -> Any:
        nu = _tmap(lambda p: fnp.full_like(p, initial_scale), params)
        if bias_correction:
            return ScaleByRmsWithCountState(_zero_count(params), nu)
        return ScaleByRmsState(nu)

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        nu = _tmap(lambda g, v: (1 - decay) * g * g + decay * v, updates, state.nu)
        if bias_correction:
            count = _increment(state.count)
            nu_hat = _bias_corrected(nu, decay, count)
        else:
            nu_hat = nu
        if eps_in_sqrt:
            out = _tmap(lambda g, v: g / fnp.sqrt(v + eps), updates, nu_hat)
        else:
            out = _tmap(lambda g, v: g / (fnp.sqrt(v) + eps), updates, nu_hat)
        if bias_correction:
            return out, ScaleByRmsWithCountState(count, nu)
        return out, ScaleByRmsState(nu)

    return GradientTransformation(init, update)


def scale_by_stddev(
    decay: float = 0.9, eps: float = 1e-8, initial_scale: float = 0.0, eps_in_sqrt: bool = True,
    bias_correction: bool = False,
) -> GradientTransformation:
    """Divide by a running standard deviation of updates (centered RMSprop); with
    ``bias_correction`` both running means are divided by ``1 - decay**t`` first.

    >>> import numpy as np
    >>> tx = scale_by_stddev(decay=0.5, eps=0.0)
    >>> tx.update(np.array([2.0]), tx.init(np.zeros(1)))[0]
    array([2.])
    """

    def init(params: Any) -> Any:
        mu = _tmap(fnp.zeros_like, params)
        nu = _tmap(lambda p: fnp.full_like(p, initial_scale), params)
        if bias_correction:
            return ScaleByRStdDevWithCountState(_zero_count(params), mu, nu)
        return ScaleByRStdDevState(mu, nu)

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        mu = _tmap(lambda g, m: (1 - decay) * g + decay * m, updates, state.mu)
        nu = _tmap(lambda g, v: (1 - decay) * g * g + decay * v, updates, state.nu)
        if bias_correction:
            count = _increment(state.count)
            mu_hat, nu_hat = _bias_corrected(mu, decay, count), _bias_corrected(nu, decay, count)
        else:
            mu_hat, nu_hat = mu, nu
        if eps_in_sqrt:
            out = _tmap(lambda g, m, v: g / fnp.sqrt(v - m * m + eps), updates, mu_hat, nu_hat)
        else:
            out = _tmap(lambda g, m, v: g / (fnp.sqrt(v - m * m) + eps), updates, mu_hat,
                        nu_hat)
        if bias_correction:
            return out, ScaleByRStdDevWithCountState(count, mu, nu)
        return out, ScaleByRStdDevState(mu, nu)

    return GradientTransformation(init, update)


def scale_by_adamax(b1: float = 0.9, b2: float = 0.999,
                    eps: float = 1e-8) -> GradientTransformation:
    """Adamax's rescaling (optax's): ``mu_hat / nu`` with ``nu = max(b2 * nu, |g| + eps)``,
    the infinity norm, not bias-corrected.

    >>> import numpy as np
    >>> tx = scale_by_adamax()
    >>> np.round(tx.update(np.array([0.5, -2.0]), tx.init(np.zeros(2)))[0], 6)
    array([ 1., -1.])
    """

    def init(params: Any) -> ScaleByAdamState:
        return ScaleByAdamState(_zero_count(params), _tmap(fnp.zeros_like, params),
                                _tmap(fnp.zeros_like, params))

    def update(updates: Any, state: ScaleByAdamState, params: Any = None) -> tuple[Any, Any]:
        count = _increment(state.count)
        mu = _tmap(lambda g, m: (1 - b1) * g + b1 * m, updates, state.mu)
        nu = _tmap(lambda g, v: fnp.maximum(fnp.abs(g) + eps, b2 * v), updates, state.nu)
        out = _tmap(lambda m, v: m / v, _bias_corrected(mu, b1, count), nu)
        return out, ScaleByAdamState(count, mu, nu)

    return GradientTransformation(init, update)


def scale_by_rss(initial_accumulator_value: float = 0.1, eps: float = 1e-7) -> GradientTransformation:
    """Divide by the root of the running sum of squared updates (Adagrad).

    >>> import numpy as np
    >>> tx = scale_by_rss(0.0, 0.0)
    >>> tx.update(np.array([3.0, 0.0]), tx.init(np.zeros(2)))[0]
    array([1., 0.])
    """

    def init(params: Any) -> ScaleByRssState:
        return ScaleByRssState(_tmap(lambda p: fnp.full_like(p, initial_accumulator_value), params))

    def update(updates: Any, state: ScaleByRssState, params: Any = None) -> tuple[Any, Any]:
        ss = _tmap(lambda g, s: s + g * g, updates, state.sum_of_squares)
        # A zero accumulator means a zero gradient so far: the update is 0, not 0/0.
        out = _tmap(
            lambda g, s: fnp.where(s > 0, g / fnp.sqrt(fnp.where(s > 0, s, 1) + eps), 0 * g),
            updates, ss,
        )
        return out, ScaleByRssState(ss)

    return GradientTransformation(init, update)


def trace(decay: float, nesterov: bool = False,
          accumulator_dtype: Any = None) -> GradientTransformation:
    """Momentum: ``t = g + decay * t``; the update is ``t`` (or ``g + decay * t`` with Nesterov).
    ``accumulator_dtype`` stores ``t`` in that dtype.

    >>> import numpy as np
    >>> tx = trace(0.5)
    >>> s = tx.init(np.zeros(1)); u, s = tx.update(np.ones(1), s); u, s = tx.update(np.ones(1), s)
    >>> u
    array([1.5])
    """
    accumulator_dtype = _dtype(accumulator_dtype)

    def init(params: Any) -> TraceState:
        return TraceState(_tmap(lambda p: fnp.zeros_like(p, dtype=accumulator_dtype), params))

    def update(updates: Any, state: TraceState, params: Any = None) -> tuple[Any, Any]:
        t = _tmap(lambda g, t: g + decay * t, updates, state.trace)
        out = _tmap(lambda g, t: g + decay * t, updates, t) if nesterov else t
        return out, TraceState(_cast(t, accumulator_dtype))

    return GradientTransformation(init, update)


class WeightDecayScheduleState(NamedTuple):
    """The step count at which a scheduled ``weight_decay`` is evaluated."""

    count: Any


def add_decayed_weights(
    weight_decay: ScalarOrSchedule = 0.0, mask: Any = None
) -> GradientTransformation:
    """Add ``weight_decay * params`` to the updates (where ``mask``, a pytree of bools or a
    function of the params returning one, is True), as optax's ``add_decayed_weights``:
    ``weight_decay`` may be a schedule of the step count (the state then counts steps:
    :class:`WeightDecayScheduleState`), and a ``mask`` wraps it in :func:`masked`.

    >>> import numpy as np
    >>> add_decayed_weights(0.1).update(np.zeros(1), EmptyState(), np.full(1, 2.0))[0]
    array([0.2])
    """

    def init(params: Any) -> Any:
        if callable(weight_decay):
            return WeightDecayScheduleState(_zero_count(params))
        return EmptyState()

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        if params is None:
            raise ValueError(NO_PARAMS_MSG)
        if callable(weight_decay):
            wd, state = weight_decay(state.count), WeightDecayScheduleState(
                _increment(state.count))
        else:
            wd = weight_decay
            if isinstance(wd, int | float) and wd == 0.0:  # optax skips a constant 0
                return updates, state
        return _tmap(lambda g, p: g + _as_dtype(wd, p) * p, updates, params), state

    tx = GradientTransformation(init, update)
    return tx if mask is None else masked(tx, mask)


def clip(max_delta: float) -> GradientTransformation:
    """Clip every update element to ``[-max_delta, max_delta]``.

    >>> import numpy as np
    >>> clip(1.0).update(np.array([-3.0, 0.5]), EmptyState())[0]
    array([-1. ,  0.5])
    """

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        return _tmap(lambda g: fnp.clip(g, -max_delta, max_delta), updates), state

    return GradientTransformation(lambda params: EmptyState(), update)


def global_norm(updates: Any) -> Any:
    """The L2 norm of all leaves of a pytree taken together.

    >>> import numpy as np
    >>> float(global_norm([np.array([3.0]), np.array([4.0])]))
    5.0
    """
    leaves = [x for x in tree_util.tree_leaves(updates) if x is not None]
    if not leaves:
        return fnp.zeros(())
    total = sum(fnp.sum(fnp.real(x * fnp.conj(x))) for x in leaves)
    return fnp.sqrt(total)


def clip_by_global_norm(max_norm: float) -> GradientTransformation:
    """Rescale updates so their global norm is at most ``max_norm``.

    >>> import numpy as np
    >>> clip_by_global_norm(1.0).update([np.array([3.0, 4.0])], EmptyState())[0][0]
    array([0.6, 0.8])
    """

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        g_norm = global_norm(updates)
        # where() instead of a Python if keeps this traceable under jit.
        factor = fnp.where(g_norm < max_norm, 1.0, max_norm / fnp.where(g_norm == 0, 1.0, g_norm))
        return _tmap(lambda g: g * _as_dtype(factor, g), updates), state

    return GradientTransformation(lambda params: EmptyState(), update)


def sgd(
    learning_rate: ScalarOrSchedule, momentum: float | None = None, nesterov: bool = False,
    accumulator_dtype: Any = None,
) -> GradientTransformation:
    """Stochastic gradient descent, optionally with (Nesterov) momentum (optax's ``sgd``).

    >>> import numpy as np
    >>> tx = sgd(0.1, momentum=0.9)
    >>> u, _ = tx.update(np.ones(1), tx.init(np.zeros(1)))
    >>> u
    array([-0.1])
    """
    # identity() holds trace's place without momentum: the state is a pair, as optax's
    first = (trace(momentum, nesterov, accumulator_dtype) if momentum is not None
             else identity())
    return chain(first, scale_by_learning_rate(learning_rate))


def adam(
    learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
    eps_root: float = 0.0, mu_dtype: Any = None, *, nesterov: bool = False,
) -> GradientTransformation:
    """Adam (optax's ``adam``: ``eps`` outside the square root, bias-corrected moments;
    ``nesterov=True`` is NAdam, optax's ``nadam``).

    >>> import numpy as np
    >>> tx = adam(0.1)
    >>> np.round(tx.update(np.array([3.0]), tx.init(np.zeros(1)))[0], 6)
    array([-0.1])
    """
    return chain(scale_by_adam(b1, b2, eps, eps_root, mu_dtype, nesterov=nesterov),
                 scale_by_learning_rate(learning_rate))


def adamw(
    learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
    eps_root: float = 0.0, mu_dtype: Any = None, weight_decay: float = 1e-4, mask: Any = None,
    *, nesterov: bool = False,
) -> GradientTransformation:
    """Adam with decoupled weight decay: ``-lr * (adam_update + weight_decay * params)``.

    >>> import numpy as np
    >>> tx = adamw(0.1, weight_decay=0.5)
    >>> np.round(tx.update(np.array([3.0]), tx.init(np.ones(1)), np.ones(1))[0], 6)
    array([-0.15])
    """
    return chain(
        scale_by_adam(b1, b2, eps, eps_root, mu_dtype, nesterov=nesterov),
        add_decayed_weights(weight_decay, mask),
        scale_by_learning_rate(learning_rate),
    )


def nadam(
    learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
    eps_root: float = 0.0, mu_dtype: Any = None,
) -> GradientTransformation:
    """NAdam (optax's ``nadam``: :func:`adam` with ``nesterov=True``).

    >>> import numpy as np
    >>> tx = nadam(0.1)
    >>> np.round(tx.update(np.array([3.0]), tx.init(np.zeros(1)))[0], 6)
    array([-0.147368])
    """
    return adam(learning_rate, b1, b2, eps, eps_root, mu_dtype, nesterov=True)


def nadamw(
    learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
    eps_root: float = 0.0, mu_dtype: Any = None, weight_decay: float = 1e-4, mask: Any = None,
) -> GradientTransformation:
    """NAdamW (optax's ``nadamw``: :func:`adamw` with ``nesterov=True``).

    >>> import numpy as np
    >>> tx = nadamw(0.1, weight_decay=0.0)
    >>> np.round(tx.update(np.array([3.0]), tx.init(np.ones(1)), np.ones(1))[0], 6)
    array([-0.147368])
    """
    return adamw(learning_rate, b1, b2, eps, eps_root, mu_dtype, weight_decay, mask,
                 nesterov=True)


def adamax(learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.999,
           eps: float = 1e-8) -> GradientTransformation:
    """Adamax (optax's ``adamax``).

    >>> import numpy as np
    >>> tx = adamax(0.1)
    >>> np.round(tx.update(np.array([3.0]), tx.init(np.zeros(1)))[0], 6)
    array([-0.1])
    """
    return chain(scale_by_adamax(b1, b2, eps), scale_by_learning_rate(learning_rate))


def adamaxw(learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.999,
            eps: float = 1e-8, weight_decay: float = 1e-4,
            mask: Any = None) -> GradientTransformation:
    """Adamax with decoupled weight decay (optax's ``adamaxw``).

    >>> import numpy as np
    >>> tx = adamaxw(0.1, weight_decay=0.5)
    >>> np.round(tx.update(np.array([3.0]), tx.init(np.ones(1)), np.ones(1))[0], 6)
    array([-0.15])
    """
    return chain(scale_by_adamax(b1, b2, eps), add_decayed_weights(weight_decay, mask),
                 scale_by_learning_rate(learning_rate))


def rmsprop(
    learning_rate: ScalarOrSchedule, decay: float = 0.9, eps: float = 1e-8,
    initial_scale: float = 0.0, eps_in_sqrt: bool = True, centered: bool = False,
    momentum: float | None = None, nesterov: bool = False, bias_correction: bool = False,
) -> GradientTransformation:
    """RMSprop (optax's conventions and argument order: ``eps`` inside the square root by
    default).

    >>> import numpy as np
    >>> tx = rmsprop(0.1, decay=0.0, eps=0.0)
    >>> tx.update(np.array([4.0]), tx.init(np.zeros(1)))[0]
    array([-0.1])
    """
    scaler = scale_by_stddev if centered else scale_by_rms
    # identity() holds trace's place without momentum, as optax's state layout
    return chain(scaler(decay, eps, initial_scale, eps_in_sqrt, bias_correction),
                 trace(momentum, nesterov) if momentum is not None else identity(),
                 scale_by_learning_rate(learning_rate))


def adagrad(
    learning_rate: ScalarOrSchedule, initial_accumulator_value: float = 0.1, eps: float = 1e-7
) -> GradientTransformation:
    """Adagrad (optax's conventions).

    >>> import numpy as np
    >>> tx = adagrad(0.1, 0.0, 0.0)
    >>> tx.update(np.array([2.0]), tx.init(np.zeros(1)))[0]
    array([-0.1])
    """
    return chain(scale_by_rss(initial_accumulator_value, eps), scale_by_learning_rate(learning_rate))
