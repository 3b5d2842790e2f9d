"""``jax.experimental.ode``: adaptive-step Dormand-Prince ``odeint`` with an adjoint gradient.

The solver is JAX's algorithm step for step (the same Butcher tableau, initial step size,
error control, step-size update and 4th-order dense output), so the same tolerances give the
same numbers. Its derivative is JAX's ``custom_vjp``: the adjoint system (Chen et al. 2018,
appendix C) integrated backwards in time with ``odeint`` itself, which gives cotangents for
``y0``, ``t`` and every floating ``*args`` leaf, including values ``func`` closes over (they
are converted to explicit arguments with :func:`funcgrad.closure_convert`).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

import numpy

from funcgrad import lax
from funcgrad import numpy as fnp
from funcgrad._cache import LRUCache
from funcgrad.api import closure_convert, vjp
from funcgrad.api_jit import jit
from funcgrad.api_vmap import vmap
from funcgrad.avals import float0, get_aval
from funcgrad.backend import device_put, get_default_device
from funcgrad.custom_derivatives import custom_vjp
from funcgrad.flatten_util import ravel_pytree
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = ["odeint"]

# The Dormand-Prince 5(4) tableau: nodes, stage weights, the 5th-order solution and the
# difference between the 5th- and embedded 4th-order solutions (the error estimate).
_ALPHA = numpy.array([1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0, 0.0])
_BETA = numpy.array([
    [1 / 5, 0, 0, 0, 0, 0, 0],
    [3 / 40, 9 / 40, 0, 0, 0, 0, 0],
    [44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0],
    [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0],
])
_C_SOL = numpy.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0])
_C_ERROR = numpy.array([
    35 / 384 - 1951 / 21600, 0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
    -2187 / 6784 - -12231 / 42400, 11 / 84 - 649 / 6300, -1.0 / 60.0,
])
# The solution at the step's midpoint, for the dense-output polynomial.
_C_MID = numpy.array([
    6025192743 / 30085553152 / 2, 0, 51252292925 / 65400821598 / 2,
    -2691868925 / 45128329728 / 2, 187940372067 / 1594534317056 / 2,
    -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2,
])


def _const(table: numpy.ndarray, like: Any) -> Any:
    """A tableau row in ``like``'s dtype (complex states take real coefficients in their
    own precision), on its device."""
    host = table.astype(numpy.dtype(get_aval(like).dtype))
    return device_put(host, get_aval(like).device or get_default_device())


def _interp_fit_dopri(y0: Any, y1: Any, k: Any, dt: Any) -> Any:
    """The coefficients (highest power first) of the 4th-order polynomial through the step."""
    dt = dt.astype(y0.dtype)
    y_mid = y0 + dt * fnp.dot(_const(_C_MID, y0), k)
    dy0, dy1 = k[0], k[-1]
    a = -2. * dt * dy0 + 2. * dt * dy1 - 8. * y0 - 8. * y1 + 16. * y_mid
    b = 5. * dt * dy0 - 3. * dt * dy1 + 18. * y0 + 14. * y1 - 32. * y_mid
    c = -4. * dt * dy0 + dt * dy1 - 11. * y0 - 5. * y1 + 16. * y_mid
    d = dt * dy0
    return fnp.stack([a, b, c, d, y0])


def _initial_step_size(fun: Callable, t0: Any, y0: Any, order: int, rtol: float,
                       atol: float, f0: Any) -> Any:
    # Hairer, Norsett & Wanner, Solving ODEs I: Nonstiff Problems, sec. II.4.
    dtype = y0.dtype
    scale = (atol + fnp.abs(y0) * rtol).astype(dtype)
    d0 = fnp.linalg.norm(y0 / scale)
    d1 = fnp.linalg.norm(f0 / scale)
    tiny = (d0 < 1e-5) | (d1 < 1e-5)
    # the untaken branches divide by ones instead (no division warnings from NumPy)
    h0 = fnp.where(tiny, 1e-6, 0.01 * d0 / fnp.where(tiny, 1.0, d1))
    y1 = y0 + h0.astype(dtype) * f0
    f1 = fun(y1, t0 + h0)
    d2 = fnp.linalg.norm((f1 - f0) / scale) / h0
    flat = (d1 <= 1e-15) & (d2 <= 1e-15)
    h1 = fnp.where(flat, fnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / fnp.where(flat, 1.0, fnp.maximum(d1, d2))) ** (1. / (order + 1.)))
    return fnp.minimum(100. * h0, h1)


def _runge_kutta_step(func: Callable, y0: Any, f0: Any, t0: Any, dt: Any
                      ) -> tuple[Any, Any, Any, Any]:
    dtf = dt.astype(f0.dtype)
    # (zeros_like: made on the state's device, not the default one)
    k = fnp.at(fnp.zeros_like(f0, shape=(7, f0.shape[0])))[0, :].set(f0)
    # JAX runs the six stages as a fori_loop; their count is fixed, so they are unrolled
    # here, which indexes the tableau with Python ints (the same arithmetic).
    for i in range(1, 7):
        ti = t0 + dt * float(_ALPHA[i - 1])
        yi = y0 + dtf * fnp.dot(_const(_BETA[i - 1, :], f0), k)
        k = fnp.at(k)[i, :].set(func(yi, ti))
    y1 = dtf * fnp.dot(_const(_C_SOL, f0), k) + y0
    y1_error = dtf * fnp.dot(_const(_C_ERROR, f0), k)
    return y1, k[-1], y1_error, k


def _abs2(x: Any) -> Any:
    if fnp.iscomplexobj(x):
        return x.real ** 2 + x.imag ** 2
    return x ** 2


def _mean_error_ratio(error_estimate: Any, rtol: float, atol: float, y0: Any, y1: Any) -> Any:
    err_tol = atol + rtol * fnp.maximum(fnp.abs(y0), fnp.abs(y1))
    err_ratio = error_estimate / err_tol.astype(error_estimate.dtype)
    return fnp.sqrt(fnp.mean(_abs2(err_ratio)))


def _optimal_step_size(last_step: Any, mean_error_ratio: Any, safety: float = 0.9,
                       ifactor: float = 10.0, dfactor: float = 0.2,
                       order: float = 5.0) -> Any:
    dfactor = fnp.where(mean_error_ratio < 1, 1.0, dfactor)
    # a zero ratio takes the last branch; the power sees 1 there instead (no 0 ** -0.2
    # division warning from NumPy)
    exact = mean_error_ratio == 0
    ratio = fnp.where(exact, 1.0, mean_error_ratio)
    factor = fnp.minimum(ifactor, fnp.maximum(ratio ** (-1.0 / order) * safety, dfactor))
    return fnp.where(exact, last_step * ifactor, last_step * factor)


def odeint(func: Callable[..., Any], y0: Any, t: Any, *args: Any, rtol: float = 1.4e-8,
           atol: float = 1.4e-8, mxstep: float = numpy.inf,
           hmax: float = numpy.inf) -> Any:
    """Solve ``dy/dt = func(y, t, *args)`` from ``y(t[0]) = y0``, as
    ``jax.experimental.ode.odeint``: adaptive-step Dormand-Prince (RK45) with JAX's error
    control, dense output at the times ``t``, and an adjoint-method gradient with respect to
    ``y0``, ``t`` and ``args`` (and the values ``func`` closes over).

    Args:
        func: the time derivative ``func(y, t, *args)``, returning the structure of ``y0``.
        y0: the initial state: an array or a pytree of arrays.
        t: 1-D float array of strictly increasing times; ``t[0]`` is the initial time.
        *args: extra arguments to ``func``: arrays, scalars, or pytrees of them.
        rtol, atol: relative and absolute local error tolerances.
        mxstep: the most steps taken between two consecutive output times.
        hmax: the largest step size.

    Returns:
        The solution at each time in ``t``: ``y0``'s structure with a new leading axis of
        length ``len(t)``.

    Works under ``jit``, ``vmap`` and reverse mode (``grad``, ``vjp``, ``jacrev``). As in
    JAX, forward mode (``jvp``, ``jacfwd``) is refused: the derivative is a ``custom_vjp``
    whose backward pass is itself an ODE solve.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> ys = odeint(lambda y, t, k: -k * y, 1.0, fnp.array([0.0, 1.0]), 0.5)
        >>> np.allclose(ys, [1.0, np.exp(-0.5)])
        True
    """
    for arg in tree_util.tree_leaves(args):
        try:
            get_aval(arg)
        except TypeError:
            raise TypeError("The contents of odeint *args must be arrays or scalars, but "
                            f"got {arg!r}.") from None
    for leaf in tree_util.tree_leaves(y0):
        if not _is_inexact(leaf):
            raise TypeError(f"odeint: y0 must hold floating-point (or complex) values, got "
                            f"{get_aval(leaf).str_short()}; pass floats, e.g. "
                            "y0.astype(float)")
    t = fnp.asarray(t)
    if t.dtype.kind != "f":
        raise TypeError(f"odeint: t must be an array of floats, but got dtype {t.dtype}.")
    if t.ndim != 1 or t.shape[0] < 1:
        raise ValueError(f"odeint: t must be a 1-D array with at least one time, got shape "
                         f"{t.shape}.")
    converted, consts = closure_convert(func, y0, t[0], *args)
    # With nothing to hoist, the user's own function keys the solver, so calls with the same
    # function reuse its compiled solver (converted is new on every call).
    solver = _solver(converted if consts else func, rtol, atol, mxstep, hmax)
    return solver(y0, t, *args, *consts)


#: One jitted solver per (system, tolerances), as JAX's jit with those as static arguments.
#: Each system has its own jit, so solving many different systems (a fresh lambda per call)
#: is not one function retracing (which warns), and only the recent ones are kept.
_SOLVERS = LRUCache(maxsize=64)


def _solver(func: Callable, rtol: float, atol: float, mxstep: float, hmax: float
            ) -> Callable[..., Any]:
    key = (func, rtol, atol, mxstep, hmax)
    solver = _SOLVERS.get(key)
    if solver is None:
        def odeint_solve(y0: Any, ts: Any, *args: Any) -> Any:
            return _odeint_wrapper(func, rtol, atol, mxstep, hmax, y0, ts, *args)

        solver = _SOLVERS[key] = jit(odeint_solve)
    return solver


def _odeint_wrapper(func: Callable, rtol: float, atol: float, mxstep: float, hmax: float,
                    y0: Any, ts: Any, *args: Any) -> Any:
    y_leaves, y_tree = tree_util.tree_flatten(y0)
    y_shapes = [get_aval(leaf).shape for leaf in y_leaves]
    y0, unravel = ravel_pytree(y0)

    def flat_func(y: Any, t: Any, *a: Any) -> Any:
        dy = func(unravel(y), t, *a)
        leaves, tree = tree_util.tree_flatten(dy)
        shapes = [get_aval(leaf).shape for leaf in leaves]
        if tree != y_tree or shapes != y_shapes:
            name = getattr(func, "__name__", "func")
            raise TypeError(
                f"odeint: {name}(y, t, *args) must return the structure and shapes of y0 "
                f"(the time derivative of y), got {tree} with shapes {shapes} for y0's "
                f"{y_tree} with shapes {y_shapes}")
        return ravel_pytree(dy)[0]

    out = _odeint(flat_func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return vmap(unravel)(out)


@functools.partial(custom_vjp, nondiff_argnums=(0, 1, 2, 3, 4))
def _odeint(func: Callable, rtol: float, atol: float, mxstep: float, hmax: float, y0: Any,
            ts: Any, *args: Any) -> Any:
    def func_(y: Any, t: Any) -> Any:
        return func(y, t, *args)

    def scan_fun(carry: list, target_t: Any) -> tuple[list, Any]:
        def cond_fun(state: list) -> Any:
            i, _, _, t, dt, _, _ = state
            return (t < target_t) & (i < mxstep) & (dt > 0)

        def body_fun(state: list) -> list:
            i, y, f, t, dt, last_t, interp_coeff = state
            next_y, next_f, next_y_error, k = _runge_kutta_step(func_, y, f, t, dt)
            next_t = t + dt
            error_ratio = _mean_error_ratio(next_y_error, rtol, atol, y, next_y)
            new_interp_coeff = _interp_fit_dopri(y, next_y, k, dt)
            # the step stays in the time's dtype (NumPy's promotion of the Python-scalar
            # factors would make a float32 step float64)
            dt = fnp.clip(_optimal_step_size(dt, error_ratio), min=0., max=hmax
                          ).astype(dt.dtype)
            new = [i + 1, next_y, next_f, next_t, dt, t, new_interp_coeff]
            old = [i + 1, y, f, t, dt, last_t, interp_coeff]
            accept = error_ratio <= 1.
            return [fnp.where(accept, n, o) for n, o in zip(new, old)]

        _, *carry = lax.while_loop(cond_fun, body_fun, [0] + carry)
        _, _, t, _, last_t, interp_coeff = carry
        relative_output_time = (target_t - last_t) / (t - last_t)
        y_target = fnp.polyval(interp_coeff, relative_output_time.astype(interp_coeff.dtype))
        return carry, y_target

    f0 = func_(y0, ts[0])
    dt = fnp.clip(_initial_step_size(func_, ts[0], y0, 4, rtol, atol, f0), min=0., max=hmax
                  ).astype(ts.dtype)
    interp_coeff = fnp.stack([y0] * 5)
    init_carry = [y0, f0, ts[0], dt, ts[0], interp_coeff]
    _, ys = lax.scan(scan_fun, init_carry, ts[1:])
    return fnp.concatenate((y0[None], ys))


def _odeint_fwd(func: Callable, rtol: float, atol: float, mxstep: float, hmax: float,
                y0: Any, ts: Any, *args: Any) -> tuple[Any, tuple]:
    ys = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _is_inexact(x: Any) -> bool:
    return numpy.dtype(get_aval(x).dtype).kind in "fc"


class _AugmentedDynamics:
    """The system augmented with the adjoints of y, t and the floating leaves of args, for
    the backward solve. It takes every leaf of args (``tree``); the others (integers,
    booleans) are held fixed and have no adjoint (JAX's solver fails on them under ``grad``).

    Equal for equal ``func`` and argument layout: it is the solver's static (jit cache)
    argument, so the backward passes of one system share one compiled solver.
    """

    __slots__ = ("func", "tree", "diff")

    def __init__(self, func: Callable, tree: Any, diff: tuple[bool, ...]) -> None:
        self.func, self.tree, self.diff = func, tree, diff

    def _key(self) -> tuple:
        return (self.func, self.tree, self.diff)

    def __eq__(self, other: object) -> bool:
        return type(other) is _AugmentedDynamics and other._key() == self._key()

    def __hash__(self) -> int:
        return hash((_AugmentedDynamics, *self._key()))

    def __call__(self, augmented_state: tuple, t: Any, *leaves: Any) -> tuple:
        y, y_bar, *_ = augmented_state

        def of_floats(y: Any, t: Any, *floats: Any) -> Any:
            it = iter(floats)
            full = [next(it) if d else leaf for leaf, d in zip(leaves, self.diff)]
            return self.func(y, t, *tree_util.tree_unflatten(self.tree, full))

        floats = [leaf for leaf, d in zip(leaves, self.diff) if d]
        # the backward solve runs in negated time (see _odeint_rev)
        y_dot, vjpfun = vjp(of_floats, y, -t, *floats)
        y_bar_dot, t_bar_dot, *floats_bar = vjpfun(y_bar)
        return (-y_dot, y_bar_dot, t_bar_dot, floats_bar)


def _odeint_rev(func: Callable, rtol: float, atol: float, mxstep: float, hmax: float,
                res: tuple, g: Any) -> tuple:
    ys, ts, args = res
    leaves, tree = tree_util.tree_flatten(args)
    diff = tuple(_is_inexact(leaf) for leaf in leaves)
    aug_dynamics = _AugmentedDynamics(func, tree, diff)

    def scan_fun(carry: tuple, i: Any) -> tuple[tuple, Any]:
        y_bar, t0_bar, floats_bar = carry
        # the effect of moving the measurement time; a time's cotangent is real
        t_bar = fnp.real(fnp.dot(func(ys[i], ts[i], *args), g[i]))
        t0_bar = t0_bar - t_bar
        # the augmented system, backwards to the previous output time
        _, y_bar, t0_bar, floats_bar = odeint(
            aug_dynamics, (ys[i], y_bar, t0_bar, floats_bar),
            fnp.stack([-ts[i], -ts[i - 1]]),
            *leaves, rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax)
        y_bar, t0_bar, floats_bar = tree_util.tree_map(operator.itemgetter(1),
                                                       (y_bar, t0_bar, floats_bar))
        y_bar = y_bar + g[i - 1]
        return (y_bar, t0_bar, floats_bar), t_bar

    init_carry = (g[-1], fnp.zeros_like(ts, shape=()),
                  [fnp.zeros_like(leaf) for leaf, d in zip(leaves, diff) if d])
    (y_bar, t0_bar, floats_bar), rev_ts_bar = lax.scan(
        scan_fun, init_carry, _const(numpy.arange(len(ts) - 1, 0, -1), ts).astype(int))
    ts_bar = fnp.concatenate([fnp.reshape(t0_bar, (1,)), rev_ts_bar[::-1]])
    it = iter(floats_bar)
    # a non-float argument's cotangent is float0 zeros (no derivative)
    args_bar = [next(it) if d else numpy.zeros(numpy.shape(leaf), float0)
                for leaf, d in zip(leaves, diff)]
    return (y_bar, ts_bar, *tree_util.tree_unflatten(tree, args_bar))


_odeint.defvjp(_odeint_fwd, _odeint_rev)
