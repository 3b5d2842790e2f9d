"""optax's L-BFGS and line searches: ``scale_by_lbfgs``/``lbfgs``, the Armijo backtracking
line search (``scale_by_backtracking_linesearch``), the zoom line search enforcing the strong
Wolfe conditions (``scale_by_zoom_linesearch``) and ``value_and_grad_from_state``.

The line searches take the objective through ``update``'s extra keyword arguments
(``value=``, ``grad=``, ``value_fn=``, plus whatever ``value_fn`` itself accepts), as optax's;
their loops are ``lax.while_loop``/``lax.cond``, so a whole step runs under ``jit``.

>>> import numpy as np
>>> import funcgrad.numpy as fnp
>>> from funcgrad_nn import optim
>>> f = lambda w: fnp.sum((w - 3.0) ** 2)
>>> tx = optim.lbfgs()
>>> w = np.zeros(2); state = tx.init(w)
>>> vg = optim.value_and_grad_from_state(f)
>>> for _ in range(3):
...     value, grad = vg(w, state=state)
...     u, state = tx.update(grad, state, w, value=value, grad=grad, value_fn=f)
...     w = optim.apply_updates(w, u)
>>> np.round(w, 6)
array([3., 3.])
"""

from __future__ import annotations

import functools
import inspect
import operator
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax, tree_util
from funcgrad.api import value_and_grad
from funcgrad_nn.optim._transform import (
    GradientTransformation,
    GradientTransformationExtraArgs,
    ScalarOrSchedule,
    _tmap,
    chain,
    identity,
    scale,
    scale_by_learning_rate,
)
from funcgrad_nn.optim._transform_more import safe_increment

__all__ = [
    "BacktrackingLinesearchInfo",
    "ScaleByBacktrackingLinesearchState",
    "ZoomLinesearchInfo",
    "ScaleByZoomLinesearchState",
    "ScaleByLBFGSState",
    "scale_by_backtracking_linesearch",
    "scale_by_zoom_linesearch",
    "value_and_grad_from_state",
    "scale_by_lbfgs",
    "lbfgs",
]


# ----------------------------------------------------------------------------- tree helpers

def _first_leaf(tree: Any) -> Any:
    leaves = tree_util.tree_leaves(tree)
    if not leaves:
        raise ValueError("the line searches and L-BFGS need at least one parameter array")
    return fnp.asarray(leaves[0])


def _scalar(like: Any, value: Any, dtype: Any = None) -> Any:
    """A 0-d array of ``value`` on ``like``'s device (the strict backend refuses host
    scalars created elsewhere), of ``dtype`` (default: ``like``'s real dtype)."""
    if dtype is None:
        dtype = _real_dtype(like)
    return fnp.full_like(like, value, dtype=dtype, shape=())


def _real_dtype(x: Any) -> Any:
    dt = np.dtype(x.dtype)
    return np.finfo(dt).dtype if dt.kind == "c" else dt


def _vdot(a: Any, b: Any) -> Any:
    """The real part of ``sum(vdot(a_leaf, b_leaf))`` (vdot conjugates its first operand)."""
    total = None
    for x, y in zip(tree_util.tree_leaves(a), tree_util.tree_leaves(b)):
        d = fnp.vdot(fnp.reshape(x, (-1,)), fnp.reshape(y, (-1,)))
        total = d if total is None else fnp.add(total, d)
    return fnp.real(total)


def _conj(tree: Any) -> Any:
    return _tmap(fnp.conj, tree)


def _add_scale(x: Any, s: Any, y: Any) -> Any:
    """``x + s * y`` leafwise, each leaf keeping its dtype."""
    return _tmap(lambda a, b: (a + s * b).astype(a.dtype), x, y)


def _scale_tree(s: Any, tree: Any) -> Any:
    return _tmap(lambda a: (s * a).astype(a.dtype), tree)


def _where(cond: Any, xs: list, ys: list) -> list:
    return [_tmap(lambda a, b: fnp.where(cond, a, b), x, y) for x, y in zip(xs, ys)]


def _cast_like(tree: Any, other: Any) -> Any:
    """``tree``'s leaves in ``other``'s dtypes (the loop carries keep their types)."""
    return tree_util.tree_map(lambda a, b: fnp.asarray(a).astype(fnp.asarray(b).dtype), tree, other)


def _extract_fns_kwargs(fns: tuple[Callable[..., Any], ...],
                        kwargs: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The keyword arguments each of ``fns`` takes by name, and those none takes."""
    names = [list(inspect.signature(fn).parameters) for fn in fns]
    fns_kwargs = [{k: v for k, v in kwargs.items() if k in n} for n in names]
    every = functools.reduce(operator.add, names, [])
    return fns_kwargs, {k: v for k, v in kwargs.items() if k not in every}


def _no_leftover(name: str, remaining: dict[str, Any]) -> None:
    if remaining:
        raise TypeError(
            f"Unexpected keyword arguments passed to `{name}.update`. These arguments were "
            f"not consumed by `value_fn`: {sorted(remaining)}. Ensure that all extra keyword "
            "arguments are accepted by `value_fn`.")


# -------------------------------------------------------------------- backtracking (Armijo)

class BacktrackingLinesearchInfo(NamedTuple):
    """How the last backtracking search went: the trials it made and its decrease error."""

    num_linesearch_steps: Any
    decrease_error: Any


class ScaleByBacktrackingLinesearchState(NamedTuple):
    """The accepted step size, the value (and, with ``store_grad``, the gradient) there."""

    learning_rate: Any
    value: Any
    grad: Any
    info: BacktrackingLinesearchInfo


class _BacktrackingSearch(NamedTuple):
    learning_rate: Any
    new_value: Any
    new_grad: Any
    decrease_error: Any
    iter_num: Any


def scale_by_backtracking_linesearch(
        max_backtracking_steps: int, slope_rtol: float = 1e-4, decrease_factor: float = 0.8,
        increase_factor: float = 1.5, max_learning_rate: float = 1.0, atol: float = 0.0,
        rtol: float = 0.0, store_grad: bool = False,
        verbose: bool = False) -> GradientTransformationExtraArgs:
    """Scale the updates by a step size ``eta`` with sufficient decrease (Armijo):
    ``f(w + eta u) <= (1 + rtol) f(w) + eta * slope_rtol * <u, grad f(w)> + atol``
    (optax's ``scale_by_backtracking_linesearch``). The search starts from
    ``min(increase_factor * previous eta, max_learning_rate)`` and multiplies by
    ``decrease_factor`` until the criterion holds (at most ``max_backtracking_steps`` times);
    a step whose value is inf/NaN everywhere becomes 0. ``update(updates, state, params,
    value=f(params), grad=grad f(params), value_fn=f, **value_fn_kwargs)``.

    >>> import numpy as np
    >>> import funcgrad.numpy as fnp
    >>> from funcgrad_nn import optim
    >>> f = lambda w: fnp.sum(w ** 2)
    >>> tx = optim.chain(optim.sgd(1.0), scale_by_backtracking_linesearch(15))
    >>> w = np.array([1.0, -2.0]); s = tx.init(w); g = 2 * w
    >>> u, s = tx.update(g, s, w, value=f(w), grad=g, value_fn=f)
    >>> float(s[1].learning_rate), w + u
    (0.8, array([-0.6,  1.2]))
    """
    del verbose  # optax prints diagnostics with it; the state's info carries the same facts

    def init(params: Any) -> ScaleByBacktrackingLinesearchState:
        leaf = _first_leaf(params)
        return ScaleByBacktrackingLinesearchState(
            learning_rate=_scalar(leaf, 1.0), value=_scalar(leaf, np.inf),
            grad=_tmap(fnp.zeros_like, params) if store_grad else None,
            info=BacktrackingLinesearchInfo(
                num_linesearch_steps=_scalar(leaf, 0, np.int32),
                decrease_error=_scalar(leaf, np.inf)))

    def decrease_error_of(stepsize: Any, slope: Any, value: Any, new_value: Any) -> Any:
        err = new_value - (1.0 + rtol) * value - stepsize * slope_rtol * slope
        err = fnp.where(fnp.isnan(err), fnp.inf, err)
        return fnp.maximum(err, 0.0)

    def update(updates: Any, state: ScaleByBacktrackingLinesearchState, params: Any, *,
               value: Any, grad: Any, value_fn: Callable[..., Any],
               **extra_args: Any) -> tuple[Any, ScaleByBacktrackingLinesearchState]:
        (fn_kwargs,), remaining = _extract_fns_kwargs((value_fn,), extra_args)
        _no_leftover("scale_by_backtracking_linesearch", remaining)
        fn = functools.partial(value_fn, **fn_kwargs)
        leaf = _first_leaf(params)
        value = fnp.asarray(value).astype(_real_dtype(leaf)) + _scalar(leaf, 0.0)
        slope = _vdot(updates, _conj(grad))

        def cond_fn(s: _BacktrackingSearch) -> Any:
            return (~(s.decrease_error <= atol)) & (s.iter_num <= max_backtracking_steps)

        def body_fn(s: _BacktrackingSearch) -> _BacktrackingSearch:
            lr = fnp.where(s.iter_num > 0, decrease_factor * s.learning_rate, s.learning_rate)
            new_params = _add_scale(params, lr, updates)
            if store_grad:
                # optax transposes a linearization only for the accepted step; the gradient
                # is the same, computed at every trial here
                new_value, g = value_and_grad(fn)(new_params)
                err = decrease_error_of(lr, slope, value, new_value)
                keep = (err <= atol) | (s.iter_num == max_backtracking_steps)
                new_grad = _tmap(lambda a, b: fnp.where(keep, a, b), g, s.new_grad)
            else:
                new_value = fn(new_params)
                err = decrease_error_of(lr, slope, value, new_value)
                new_grad = s.new_grad
            return _cast_like(_BacktrackingSearch(lr, new_value, new_grad, err,
                                                  s.iter_num + 1), s)

        lr0 = fnp.minimum(increase_factor * state.learning_rate, max_learning_rate)
        search = _BacktrackingSearch(
            learning_rate=lr0.astype(state.learning_rate.dtype), new_value=value,
            new_grad=_tmap(fnp.zeros_like, params), decrease_error=_scalar(leaf, np.inf),
            iter_num=_scalar(leaf, 0, np.int32))
        search = lax.while_loop(cond_fn, body_fn, search)
        new_lr = fnp.where(fnp.isinf(search.decrease_error), 0.0, search.learning_rate)
        new_state = ScaleByBacktrackingLinesearchState(
            learning_rate=new_lr, value=search.new_value,
            grad=search.new_grad if store_grad else None,
            info=BacktrackingLinesearchInfo(search.iter_num, search.decrease_error))
        return _scale_tree(new_lr, updates), _cast_like(new_state, state)

    return GradientTransformationExtraArgs(init, update)


# ------------------------------------------------------------------- zoom (strong Wolfe)

class ZoomLinesearchInfo(NamedTuple):
    """How the last zoom search went: its trials, decrease and curvature errors."""

    num_linesearch_steps: Any
    decrease_error: Any
    curvature_error: Any


class ScaleByZoomLinesearchState(NamedTuple):
    """The accepted step size, and the value and gradient at the new parameters."""

    learning_rate: Any
    value: Any
    grad: Any
    info: ZoomLinesearchInfo


class _ZoomState(NamedTuple):
    count: Any
    stepsize: Any
    value: Any
    grad: Any
    slope: Any
    decrease_error: Any
    curvature_error: Any
    error: Any
    interval_found: Any
    done: Any
    failed: Any
    low: Any
    value_low: Any
    slope_low: Any
    high: Any
    value_high: Any
    slope_high: Any
    cubic_ref: Any
    value_cubic_ref: Any
    safe_stepsize: Any
    safe_value: Any
    safe_grad: Any


def _cubicmin(a: Any, fa: Any, fpa: Any, b: Any, fb: Any, c: Any, fc: Any) -> Any:
    """The minimiser of the cubic through (a, fa) with slope fpa, (b, fb) and (c, fc); NaN
    when there is none (degenerate points: optax's divisions give NaN or an infinity there,
    which the caller rejects the same way), without dividing by zero, so that compiled code
    raises no NumPy warnings either."""
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    ok = denom != 0
    denom = fnp.where(ok, denom, 1.0)
    r1, r2 = fb - fa - fpa * db, fc - fa - fpa * dc
    big_a = (dc ** 2 * r1 + (-db ** 2) * r2) / denom
    big_b = ((-dc ** 3) * r1 + db ** 3 * r2) / denom
    radical = big_b * big_b - 3.0 * big_a * fpa
    ok = ok & (radical >= 0) & (big_a != 0)
    root = fnp.sqrt(fnp.where(ok, radical, 0.0))
    xmin = a + (-big_b + root) / (3.0 * fnp.where(ok, big_a, 1.0))
    return fnp.where(ok, xmin, fnp.nan)


def _quadmin(a: Any, fa: Any, fpa: Any, b: Any, fb: Any) -> Any:
    """The minimiser of the parabola through (a, fa) with slope fpa and (b, fb); NaN when
    there is none (as :func:`_cubicmin`)."""
    db = b - a
    ok = db != 0
    big_b = (fb - fa - fpa * db) / fnp.where(ok, db, 1.0) ** 2
    ok = ok & (big_b != 0)
    return fnp.where(ok, a - fpa / (2.0 * fnp.where(ok, big_b, 1.0)), fnp.nan)


def scale_by_zoom_linesearch(
        max_linesearch_steps: int, max_learning_rate: float | None = None, tol: float = 0.0,
        increase_factor: float = 2.0, slope_rtol: float = 1e-4, curv_rtol: float = 0.9,
        approx_dec_rtol: float | None = 1e-6, stepsize_precision: float = 1e-5,
        initial_guess_strategy: str = "keep",
        verbose: bool = False) -> GradientTransformationExtraArgs:
    """Scale the updates by a step size meeting the strong Wolfe conditions (sufficient
    decrease with ``slope_rtol``, curvature with ``curv_rtol``; Hager-Zhang's approximate
    decrease with ``approx_dec_rtol``), found by growing the step by ``increase_factor`` until
    an interval brackets one, then zooming in by cubic, quadratic or bisection steps (optax's
    ``scale_by_zoom_linesearch``, Nocedal & Wright's Algorithms 3.5-3.6). The first guess is
    the previous step size (``"keep"``) or 1 (``"one"``). The state keeps the value and
    gradient at the new parameters (see :func:`value_and_grad_from_state`).

    >>> import numpy as np
    >>> import funcgrad.numpy as fnp
    >>> from funcgrad_nn import optim
    >>> f = lambda w: fnp.sum(w ** 4)
    >>> tx = optim.chain(optim.sgd(1.0), scale_by_zoom_linesearch(15))
    >>> w = np.array([1.0]); s = tx.init(w); g = 4 * w ** 3
    >>> u, s = tx.update(g, s, w, value=f(w), grad=g, value_fn=f)
    >>> round(float(s[1].learning_rate), 6), np.round(w + u, 6)
    (0.303813, array([-0.21525]))
    """
    del verbose  # optax prints diagnostics with it; the state's info carries the same facts
    if initial_guess_strategy not in ("one", "keep"):
        raise ValueError(f"Unknown initial guess strategy: {initial_guess_strategy}")

    def decrease_error_of(stepsize: Any, value_step: Any, slope_step: Any, value_init: Any,
                          slope_init: Any) -> Any:
        err = value_step - value_init - slope_rtol * stepsize * slope_init
        if approx_dec_rtol is not None:
            approx = slope_step - (2 * slope_rtol - 1.0) * slope_init
            delta_values = value_step - value_init - approx_dec_rtol * fnp.abs(value_init)
            err = fnp.minimum(fnp.maximum(approx, delta_values), err)
        err = fnp.maximum(err, 0.0)
        return fnp.where(fnp.isnan(err), fnp.inf, err)

    def curvature_error_of(slope_step: Any, slope_init: Any) -> Any:
        err = fnp.maximum(fnp.abs(slope_step) - curv_rtol * fnp.abs(slope_init), 0.0)
        return fnp.where(fnp.isnan(err), fnp.inf, err)

    def update(updates: Any, state: ScaleByZoomLinesearchState, params: Any, *, value: Any,
               grad: Any, value_fn: Callable[..., Any],
               **extra_args: Any) -> tuple[Any, ScaleByZoomLinesearchState]:
        (fn_kwargs,), remaining = _extract_fns_kwargs((value_fn,), extra_args)
        _no_leftover("scale_by_zoom_linesearch", remaining)
        value_and_grad_fn = value_and_grad(functools.partial(value_fn, **fn_kwargs))
        leaf = _first_leaf(params)
        value = fnp.asarray(value).astype(_real_dtype(leaf)) + _scalar(leaf, 0.0)
        slope_init = _vdot(updates, grad)
        zero = _scalar(leaf, 0.0)
        if initial_guess_strategy == "one":
            guess = _scalar(leaf, 1.0)
        else:
            guess = state.learning_rate

        def on_line(stepsize: Any) -> tuple[Any, Any, Any]:
            v, g = value_and_grad_fn(_add_scale(params, stepsize, updates))
            return v, g, _vdot(_conj(g), updates)

        def search_interval(s: _ZoomState) -> _ZoomState:
            new_step = fnp.where(s.count == 0, guess, increase_factor * s.stepsize)
            if max_learning_rate is not None:
                max_reached = new_step >= max_learning_rate
                new_step = fnp.minimum(new_step, max_learning_rate)
            else:
                max_reached = fnp.zeros_like(s.done)
            v, g, sl = on_line(new_step)
            dec = decrease_error_of(new_step, v, sl, value, slope_init)
            curv = curvature_error_of(sl, slope_init)
            err = fnp.maximum(dec, curv)
            safe_step, safe_value, safe_grad = _where(
                dec <= tol, [new_step, v, g], [s.safe_stepsize, s.safe_value, s.safe_grad])
            set_high = (dec > 0.0) | ((v >= s.value) & (s.count > 0))
            set_low = (sl >= 0.0) & ~set_high
            low, value_low, slope_low, high, value_high, slope_high = _where(
                set_low, [new_step, v, sl, s.stepsize, s.value, s.slope],
                [s.stepsize, s.value, s.slope, new_step, v, sl])
            found = set_high | set_low | (err <= tol)
            done = (err <= tol) | (max_reached & ~found)
            failed = (s.count + 1 >= max_linesearch_steps) & ~done
            return _cast_like(_ZoomState(
                safe_increment(s.count), new_step, v, g, sl, dec, curv, err, found, done,
                failed, low, value_low, slope_low, high, value_high, slope_high, low,
                value_low, safe_step, safe_value, safe_grad), s)

        def zoom_into_interval(s: _ZoomState) -> _ZoomState:
            low, high = s.low, s.high
            delta = fnp.abs(high - low)
            left, right = fnp.minimum(high, low), fnp.maximum(high, low)
            cubic_chk, quad_chk = 0.2 * delta, 0.1 * delta
            too_small = delta <= stepsize_precision
            m_cubic = _cubicmin(low, s.value_low, s.slope_low, high, s.value_high, s.cubic_ref,
                                s.value_cubic_ref)
            use_cubic = (m_cubic > left + cubic_chk) & (m_cubic < right - cubic_chk)
            m_quad = _quadmin(low, s.value_low, s.slope_low, high, s.value_high)
            use_quad = ~use_cubic & (m_quad > left + quad_chk) & (m_quad < right - quad_chk)
            use_bisection = ~use_cubic & ~use_quad
            middle = fnp.where(use_cubic, m_cubic, s.cubic_ref)
            middle = fnp.where(use_quad, m_quad, middle)
            middle = fnp.where(use_bisection, (low + high) / 2.0, middle)
            v, g, sl = on_line(middle)
            dec = decrease_error_of(middle, v, sl, value, slope_init)
            curv = curvature_error_of(sl, slope_init)
            err = fnp.maximum(dec, curv)
            better = (dec <= tol) & (v < s.safe_value)
            safe_step, safe_value, safe_grad = _where(
                better, [middle, v, g], [s.safe_stepsize, s.safe_value, s.safe_grad])
            done = err <= tol
            high_to_middle = (dec > 0.0) | (v >= s.value_low)
            high_to_low = (sl * (high - low) >= 0.0) & ~high_to_middle
            low_to_middle = ~high_to_middle
            nh = _where(high_to_middle, [middle, v, sl], [high, s.value_high, s.slope_high])
            nh = _where(high_to_low, [low, s.value_low, s.slope_low], nh)
            nl = _where(low_to_middle, [middle, v, sl], [low, s.value_low, s.slope_low])
            cubic_ref, value_cubic_ref = _where(
                high_to_middle | high_to_low, [high, s.value_high], [low, s.value_low])
            max_iter = s.count + 1 >= max_linesearch_steps
            failed = (max_iter | (too_small & (safe_step > 0.0))) & ~done
            return _cast_like(_ZoomState(
                safe_increment(s.count), middle, v, g, sl, dec, curv, err, s.interval_found,
                done, failed, nl[0], nl[1], nl[2], nh[0], nh[1], nh[2], cubic_ref,
                value_cubic_ref, safe_step, safe_value, safe_grad), s)

        def try_safe_step(s: _ZoomState) -> _ZoomState:
            # out of the loop without the Wolfe conditions: the best step with sufficient
            # decrease, if any (or none at all when no trial was finite)
            use_safe = (s.safe_stepsize > 0.0) | fnp.isinf(s.decrease_error)
            step, v, g = _where(use_safe, [s.safe_stepsize, s.safe_value, s.safe_grad],
                                [s.stepsize, s.value, s.grad])
            return _cast_like(s._replace(stepsize=step, value=v, grad=g), s)

        def step_fn(s: _ZoomState) -> _ZoomState:
            s = lax.cond(s.interval_found, zoom_into_interval, search_interval, s)
            return lax.cond(s.failed, try_safe_step, lambda x: x, s)

        false, inf = fnp.zeros_like(zero, dtype=bool), _scalar(leaf, np.inf)
        start = _ZoomState(
            count=_scalar(leaf, 0, np.int32), stepsize=zero, value=value, grad=grad,
            slope=slope_init, decrease_error=inf, curvature_error=inf, error=inf,
            interval_found=false, done=false, failed=false, low=zero, value_low=value,
            slope_low=slope_init, high=zero, value_high=value, slope_high=slope_init,
            cubic_ref=zero, value_cubic_ref=value, safe_stepsize=zero, safe_value=value,
            safe_grad=grad)
        start = _cast_like(start, start._replace(
            slope=zero, slope_low=zero, slope_high=zero))
        # the cubic and quadratic minimisers divide by zero on degenerate intervals (then
        # rejected by the range checks, as in optax): no NumPy warnings for those
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            final = lax.while_loop(lambda s: ~(s.done | s.failed), step_fn, start)
        new_state = ScaleByZoomLinesearchState(
            learning_rate=final.stepsize, value=final.value, grad=final.grad,
            info=ZoomLinesearchInfo(final.count, final.decrease_error, final.curvature_error))
        return _scale_tree(final.stepsize, updates), _cast_like(new_state, state)

    def init(params: Any) -> ScaleByZoomLinesearchState:
        leaf = _first_leaf(params)
        return ScaleByZoomLinesearchState(
            learning_rate=_scalar(leaf, 1.0), value=_scalar(leaf, np.inf),
            grad=_tmap(fnp.zeros_like, params),
            info=ZoomLinesearchInfo(_scalar(leaf, 0, np.int32), _scalar(leaf, np.inf),
                                    _scalar(leaf, np.inf)))

    return GradientTransformationExtraArgs(init, update)


def _tree_get(tree: Any, key: str) -> Any:
    """The one field named ``key`` of the NamedTuples in ``tree`` (optax's ``tree.get``)."""
    found: list[Any] = []

    def walk(node: Any) -> None:
        if isinstance(node, tuple) and hasattr(node, "_fields"):
            for name, child in zip(node._fields, node):
                if name == key:
                    found.append(child)
                else:
                    walk(child)
        elif isinstance(node, list | tuple):
            for child in node:
                walk(child)
        elif isinstance(node, dict):
            for name, child in node.items():
                if name == key:
                    found.append(child)
                else:
                    walk(child)

    walk(tree)
    if len(found) > 1:
        raise KeyError(f"Found multiple values for '{key}' in the optimizer state.")
    return found[0] if found else None


def value_and_grad_from_state(value_fn: Callable[..., Any]) -> Callable[..., tuple[Any, Any]]:
    """``value_and_grad(value_fn)`` that reuses the value and gradient a line search left in
    the optimizer state (``state=`` keyword) when they are finite (optax's
    ``value_and_grad_from_state``: one evaluation per step with :func:`lbfgs`).

    >>> import numpy as np
    >>> import funcgrad.numpy as fnp
    >>> vg = value_and_grad_from_state(lambda w: fnp.sum(w ** 2))
    >>> tx = lbfgs(); w = np.array([1.0, 2.0])
    >>> vg(w, state=tx.init(w))      # nothing stored yet: computed
    (array(5.), array([2., 4.]))
    """

    def _value_and_grad(params: Any, *fn_args: Any, state: Any,
                        **fn_kwargs: Any) -> tuple[Any, Any]:
        value = _tree_get(state, "value")
        grad = _tree_get(state, "grad")
        if value is None or grad is None:
            raise ValueError(
                "Value or gradient not found in the state. Make sure that these values are "
                "stored in the state by the optimizer.")
        value = fnp.asarray(value)
        ok = ~fnp.isinf(value) & ~fnp.isnan(value)
        return lax.cond(ok, lambda p, a, kw: (value, grad),
                        lambda p, a, kw: value_and_grad(value_fn)(p, *a, **kw),
                        params, fn_args, fn_kwargs)

    return _value_and_grad


# ------------------------------------------------------------------------------- L-BFGS

class ScaleByLBFGSState(NamedTuple):
    """L-BFGS's memory: the last parameters and updates, the ring buffers of their
    differences and the inverse curvatures ``1 / <dg, dw>``."""

    count: Any
    params: Any
    updates: Any
    diff_params_memory: Any
    diff_updates_memory: Any
    weights_memory: Any


def _at(x: Any, i: Any) -> Any:
    return lax.dynamic_index_in_dim(x, i, 0, keepdims=False)


def _precondition_by_lbfgs(updates: Any, dws: Any, dus: Any, rhos: Any, identity_scale: Any,
                           memory_idx: Any) -> Any:
    """The two-loop recursion: the inverse-Hessian approximation applied to ``updates``."""
    m = rhos.shape[0]
    indices = (memory_idx + fnp.arange(m, dtype=memory_idx.dtype)) % m

    def right(vec: Any, idx: Any) -> tuple[Any, Any]:
        dwi, dui = _tmap(lambda x: _at(x, idx), dws), _tmap(lambda x: _at(x, idx), dus)
        alpha = _at(rhos, idx) * _vdot(dwi, vec)
        return _cast_like(_add_scale(vec, -alpha, dui), vec), alpha

    vec, alphas = lax.scan(right, updates, indices, reverse=True)
    vec = _scale_tree(identity_scale, vec)

    def left(vec: Any, idx_alpha: Any) -> tuple[Any, Any]:
        idx, alpha = idx_alpha
        dwi, dui = _tmap(lambda x: _at(x, idx), dws), _tmap(lambda x: _at(x, idx), dus)
        beta = _at(rhos, idx) * _vdot(dui, vec)
        return _cast_like(_add_scale(vec, alpha - beta, dwi), vec), beta

    vec, _ = lax.scan(left, vec, (indices, alphas))
    return vec


def scale_by_lbfgs(memory_size: int = 10, scale_init_precond: bool = True) -> GradientTransformation:
    """Precondition the updates by L-BFGS's inverse-Hessian approximation built from the last
    ``memory_size`` parameter and gradient differences (optax's ``scale_by_lbfgs``; the
    first step is scaled to norm at most 1, later ones by ``<dg, dw> / |dg|^2`` when
    ``scale_init_precond``). Follow it with a step size, usually a line search: :func:`lbfgs`.

    >>> import numpy as np
    >>> tx = scale_by_lbfgs()
    >>> tx.update(np.array([3.0, 4.0]), tx.init(np.zeros(2)), np.zeros(2))[0]
    array([0.6, 0.8])
    """
    if memory_size < 1:
        raise ValueError("memory_size must be >= 1")

    def init(params: Any) -> ScaleByLBFGSState:
        leaf = _first_leaf(params)
        stacked = _tmap(lambda x: fnp.zeros_like(x, shape=(memory_size, *np.shape(x))), params)
        return ScaleByLBFGSState(
            count=_scalar(leaf, 0, np.int32), params=_tmap(fnp.zeros_like, params),
            updates=_tmap(fnp.zeros_like, params), diff_params_memory=stacked,
            diff_updates_memory=stacked,
            weights_memory=fnp.zeros_like(leaf, dtype=_real_dtype(leaf), shape=(memory_size,)))

    def update(updates: Any, state: ScaleByLBFGSState,
               params: Any = None) -> tuple[Any, ScaleByLBFGSState]:
        if params is None:
            raise ValueError("scale_by_lbfgs needs the current parameters: update(..., params)")
        count = state.count
        memory_idx = count % memory_size
        prev_idx = (count - 1) % memory_size
        diff_params = _tmap(lambda a, b: a - b, params, state.params)
        diff_updates = _tmap(lambda a, b: a - b, updates, state.updates)
        dot = _vdot(diff_updates, diff_params)
        weight = fnp.where(dot == 0.0, 0.0, 1.0 / fnp.where(dot == 0.0, 1.0, dot))
        started = count > 0
        diff_params, diff_updates = (_tmap(lambda x: fnp.where(started, x, fnp.zeros_like(x)), t)
                                     for t in (diff_params, diff_updates))
        weight = fnp.where(started, weight, 0.0).astype(state.weights_memory.dtype)

        def put(mem: Any, x: Any) -> Any:
            return lax.dynamic_update_index_in_dim(mem, x.astype(mem.dtype), prev_idx, 0)

        dws = _tmap(put, state.diff_params_memory, diff_params)
        dus = _tmap(put, state.diff_updates_memory, diff_updates)
        rhos = put(state.weights_memory, weight)
        if scale_init_precond:
            num = _vdot(diff_updates, diff_params)
            den = _vdot(diff_updates, diff_updates)
            ident = fnp.where(den > 0.0, num / fnp.where(den > 0.0, den, 1.0), 1.0)
            norm = fnp.sqrt(_vdot(updates, updates))
            # min(1, 1 / 0) is 1: no division by a zero norm (a NumPy warning)
            capped_inv_norm = fnp.where(
                norm > 0, fnp.minimum(1.0, 1.0 / fnp.where(norm > 0, norm, 1.0)), 1.0)
            ident = fnp.where(started, ident, capped_inv_norm)
        else:
            ident = 1.0
        out = _precondition_by_lbfgs(updates, dws, dus, rhos, ident, memory_idx)
        return out, ScaleByLBFGSState(safe_increment(count), params, updates, dws, dus, rhos)

    return GradientTransformation(init, update)


def lbfgs(learning_rate: ScalarOrSchedule | None = None, memory_size: int = 10,
          scale_init_precond: bool = True,
          linesearch: Any = "zoom") -> GradientTransformationExtraArgs:
    """L-BFGS (optax's ``lbfgs``): :func:`scale_by_lbfgs`, then ``-learning_rate`` (``-1``
    when None), then ``linesearch`` (default: :func:`scale_by_zoom_linesearch` with 20 steps
    and a first guess of 1, as optax's). ``update(grad, state, params, value=f(params),
    grad=grad, value_fn=f)``; pair it with :func:`value_and_grad_from_state`.

    >>> import numpy as np
    >>> import funcgrad.numpy as fnp
    >>> f = lambda w: fnp.sum((w - np.arange(3.0)) ** 2) + fnp.sum(w ** 4)
    >>> tx = lbfgs(); w = np.zeros(3); s = tx.init(w)
    >>> for _ in range(10):
    ...     v, g = value_and_grad_from_state(f)(w, state=s)
    ...     u, s = tx.update(g, s, w, value=v, grad=g, value_fn=f)
    ...     w = w + u
    >>> np.round(w, 4)
    array([0.    , 0.5898, 0.8351])
    """
    base = scale(-1.0) if learning_rate is None else scale_by_learning_rate(learning_rate)
    if isinstance(linesearch, str) and linesearch == "zoom":
        linesearch = scale_by_zoom_linesearch(max_linesearch_steps=20,
                                              initial_guess_strategy="one")
    elif linesearch is None:
        linesearch = identity()
    return chain(scale_by_lbfgs(memory_size=memory_size, scale_init_precond=scale_init_precond),
                 base, linesearch)

