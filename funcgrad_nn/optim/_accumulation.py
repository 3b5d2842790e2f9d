"""optax's gradient accumulation: ``MultiSteps`` (an optimizer stepping every ``k`` calls with
the mean of the accumulated gradients) and its skip predicates ``skip_not_finite`` and
``skip_large_updates``.

>>> import numpy as np
>>> from funcgrad_nn import optim
>>> tx = optim.MultiSteps(optim.sgd(1.0), every_k_schedule=2)
>>> p = {"w": np.zeros(1)}
>>> s = tx.init(p)
>>> u1, s = tx.update({"w": np.array([1.0])}, s, p)
>>> u2, s = tx.update({"w": np.array([3.0])}, s, p)
>>> u1["w"], u2["w"], bool(tx.has_updated(s))
(array([0.]), array([-2.]), True)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad_nn.optim._module_params import params_view
from funcgrad_nn.optim._transform import (
    GradientTransformation,
    _call_update,
    _cast,
    _dtype,
    _increment,
    _tmap,
    _zero_count,
)

__all__ = ["MultiSteps", "MultiStepsState", "ShouldSkipUpdateFunction", "skip_not_finite", "skip_large_updates"]

ShouldSkipUpdateFunction = Callable[[Any, Any, Any], tuple[Any, Any]]


def skip_not_finite(updates: Any, gradient_step: Any, params: Any) -> tuple[Any, Any]:
    """Skip (True) when any update is inf or NaN; with ``{"should_skip", "num_not_finite"}``.

    >>> import numpy as np
    >>> skip, info = skip_not_finite([np.array([1.0, np.nan])], 0, None)
    >>> bool(skip), int(info["num_not_finite"])
    (True, 1)
    """
    leaves = [x for x in tree_util.tree_leaves(updates) if x is not None]
    # fnp.add, not sum(): Python "+" on 0-d arrays gives NumPy scalars (default device next)
    counts = [fnp.sum(fnp.logical_not(fnp.isfinite(x))) for x in leaves]
    num = functools.reduce(fnp.add, counts) if counts else fnp.zeros((), fnp.int32)
    should_skip = fnp.greater(num, 0)
    return should_skip, {"should_skip": should_skip, "num_not_finite": num}


def skip_large_updates(updates: Any, gradient_step: Any, params: Any,
                       max_squared_norm: float) -> tuple[Any, Any]:
    """Skip (True) unless the squared global norm of ``updates`` is below
    ``max_squared_norm`` (so a NaN norm skips); with ``{"should_skip", "norm_squared"}``.
    Give it to :class:`MultiSteps` with ``functools.partial(..., max_squared_norm=...)``.

    >>> import numpy as np
    >>> bool(skip_large_updates([np.array([3.0, 4.0])], 0, None, max_squared_norm=20.0)[0])
    True
    """
    leaves = [x for x in tree_util.tree_leaves(updates) if x is not None]
    squares = [fnp.sum(x * x) for x in leaves]
    norm_sq = functools.reduce(fnp.add, squares) if squares else fnp.zeros(())
    should_skip = fnp.logical_not(fnp.less(norm_sq, max_squared_norm))
    return should_skip, {"should_skip": should_skip, "norm_squared": norm_sq}


class MultiStepsState(NamedTuple):
    """``mini_step`` (calls since the last update, modulo k), ``gradient_step`` (updates
    made), the inner optimizer's state, the accumulated gradients and the skip
    function's information."""

    mini_step: Any
    gradient_step: Any
    inner_opt_state: Any
    acc_grads: Any
    skip_state: Any = ()


class MultiSteps:
    """Accumulate gradients over ``every_k_schedule`` calls (an int, or a function of the
    number of updates made so far) and let ``opt`` step once with their mean
    (``use_grad_mean=True``) or sum; the calls in between return zero updates. As optax's
    ``MultiSteps``: ``should_skip_update_fn(updates, gradient_step, params) -> (bool,
    info)`` (e.g. :func:`skip_not_finite`) drops a call entirely, ``has_updated(state)``
    says whether the last call stepped, and ``gradient_transformation()`` is the pair
    ``(init, update)``. Written with ``where``, so it runs under ``jit``.

    >>> import numpy as np
    >>> from funcgrad_nn import optim
    >>> tx = optim.MultiSteps(optim.adam(0.1), every_k_schedule=3).gradient_transformation()
    >>> s = tx.init({"w": np.zeros(2)})
    >>> int(s.mini_step), int(s.gradient_step)
    (0, 0)
    """

    def __init__(self, opt: GradientTransformation, every_k_schedule: int | Callable[[Any], Any],
                 use_grad_mean: bool = True,
                 should_skip_update_fn: ShouldSkipUpdateFunction | None = None,
                 accumulator_dtype: Any = None) -> None:
        self._opt = opt
        self._every_k_schedule = (every_k_schedule if callable(every_k_schedule)
                                  else (lambda step: every_k_schedule))
        self._use_grad_mean = use_grad_mean
        self._accumulator_dtype = _dtype(accumulator_dtype)
        self._should_skip_update_fn = should_skip_update_fn

    @property
    def inner_opt(self) -> GradientTransformation:
        """The wrapped optimizer."""
        return self._opt

    def _acc_update(self, grad: Any, acc: Any, n_acc: Any) -> Any:
        if self._use_grad_mean:  # Welford's running mean: stable for many mini-steps
            return acc + (grad - acc) / (n_acc + 1)
        return grad + acc

    def _skip(self, updates: Any, gradient_step: Any, params: Any) -> tuple[Any, Any]:
        if self._should_skip_update_fn is None:
            return fnp.zeros_like(gradient_step, dtype=fnp.bool_), ()
        return self._should_skip_update_fn(updates, gradient_step, params)

    def init(self, params: Any) -> MultiStepsState:
        """The initial state: zero counters and accumulators, the inner state."""
        params = params_view(params)  # a Module: its trainable parameters (see there)
        count = _zero_count(params)
        _, skip_state = self._skip(_tmap(fnp.zeros_like, params), count, params)
        acc = _tmap(lambda p: fnp.zeros_like(p, dtype=self._accumulator_dtype), params)
        return MultiStepsState(count, count, self._opt.init(params), acc, skip_state)

    def update(self, updates: Any, state: MultiStepsState, params: Any = None,
               **extra_args: Any) -> tuple[Any, MultiStepsState]:
        """Accumulate ``updates``; every k-th call, the inner optimizer's update of the
        mean (zeros otherwise)."""
        updates, params = params_view(updates, dedupe=False), params_view(params)
        k_steps = self._every_k_schedule(state.gradient_step)
        should_skip, skip_state = self._skip(updates, state.gradient_step, params)
        if (np.dtype(should_skip.dtype), tuple(should_skip.shape)) != (np.dtype(bool), ()):
            raise ValueError(
                "The `should_skip_update_fn` function should return a boolean scalar array, "
                f"but it returned an array of dtype {should_skip.dtype} and shape "
                f"{tuple(should_skip.shape)}")
        acc = _tmap(lambda g, a: self._acc_update(g, a, state.mini_step), updates,
                    state.acc_grads)
        inner_updates, inner_state = _call_update(
            self._opt, _tmap(lambda a, g: a.astype(g.dtype), acc, updates),
            state.inner_opt_state, params, extra_args)
        emit = fnp.logical_and(state.mini_step == k_steps - 1, fnp.logical_not(should_skip))

        def pick(new: Any, old: Any) -> Any:
            return tree_util.tree_map(
                lambda n, o: fnp.where(emit, n, o).astype(fnp.asarray(o).dtype), new, old)

        def keep(new: Any, old: Any) -> Any:  # the old values when this call is skipped
            return tree_util.tree_map(lambda n, o: fnp.where(should_skip, o, n), new, old)

        mini = keep(fnp.mod(_increment(state.mini_step), k_steps), state.mini_step)
        grad_step = fnp.where(emit, _increment(state.gradient_step), state.gradient_step).astype(
            fnp.asarray(state.gradient_step).dtype)
        # zeros_like, not 0 * x: a skipped call's NaN must not leak into the zeros
        acc = keep(_cast(_tmap(lambda a: fnp.where(emit, fnp.zeros_like(a), a), acc),
                         self._accumulator_dtype), state.acc_grads)
        out = _tmap(lambda u: fnp.where(emit, u, fnp.zeros_like(u)), inner_updates)
        return out, MultiStepsState(mini, grad_step, pick(inner_state, state.inner_opt_state),
                                    acc, skip_state)

    def has_updated(self, state: MultiStepsState) -> Any:
        """Whether the last call stepped the inner optimizer."""
        return fnp.logical_and(state.mini_step == 0, state.gradient_step > 0)

    def gradient_transformation(self) -> GradientTransformation:
        """``GradientTransformation(self.init, self.update)``."""
        return GradientTransformation(self.init, self.update)
