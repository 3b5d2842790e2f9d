"""Initial value problems of ``scipy.integrate``: ``solve_ivp`` with the explicit
Runge-Kutta methods ``"RK45"`` (Dormand-Prince) and ``"RK23"`` (Bogacki-Shampine), and
``odeint`` (SciPy's signature over :func:`funcgrad.experimental.ode.odeint`).

``solve_ivp`` is SciPy's stepping step for step -- the same initial step selection, error
norm, step-size factors, dense output polynomials and ``t_eval`` handling -- on the host, so
``t``, ``y`` and ``nfev`` are SciPy's (to rounding). It calls ``fun(t, y)`` at concrete
values (a traced call raises ``TypeError``); ``events`` and the implicit methods (``Radau``,
``BDF``, ``LSODA``) and ``DOP853`` are not provided. ``odeint`` is differentiable (adjoint)
and ``jit``-able.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.integrate import solve_ivp
    >>> sol = solve_ivp(lambda t, y: -0.5 * y, (0.0, 10.0), np.array([2.0]))
    >>> sol.t.size, round(float(sol.y[0, -1]), 6), sol.nfev
    (8, 0.013508, 44)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy

from funcgrad.api_devices import device_get
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device, is_array
from funcgrad.core import Tracer
from funcgrad.experimental.ode import odeint as _odeint
from funcgrad.scipy.optimize._scalar import OptimizeResult

__all__ = ["solve_ivp", "odeint", "OdeSolution"]

_SAFETY, _MIN_FACTOR, _MAX_FACTOR = 0.9, 0.2, 10.0

# Butcher tableaus (C, A, B, E, P), order of the error estimator, stages: SciPy's rk.py
_RK23 = dict(
    C=numpy.array([0, 1 / 2, 3 / 4]),
    A=numpy.array([[0, 0, 0], [1 / 2, 0, 0], [0, 3 / 4, 0]]),
    B=numpy.array([2 / 9, 1 / 3, 4 / 9]),
    E=numpy.array([5 / 72, -1 / 12, -1 / 9, 1 / 8]),
    P=numpy.array([[1, -4 / 3, 5 / 9], [0, 1, -2 / 3], [0, 4 / 3, -8 / 9], [0, -1, 1]]),
    error_order=2, stages=3)
_RK45 = dict(
    C=numpy.array([0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1]),
    A=numpy.array([[0, 0, 0, 0, 0], [1 / 5, 0, 0, 0, 0], [3 / 40, 9 / 40, 0, 0, 0],
                   [44 / 45, -56 / 15, 32 / 9, 0, 0],
                   [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0],
                   [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656]]),
    B=numpy.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84]),
    E=numpy.array([-71 / 57600, 0, 71 / 16695, -71 / 1920, 17253 / 339200, -22 / 525,
                   1 / 40]),
    P=numpy.array([
        [1, -8048581381 / 2820520608, 8663915743 / 2820520608, -12715105075 / 11282082432],
        [0, 0, 0, 0],
        [0, 131558114200 / 32700410799, -68118460800 / 10900136933,
         87487479700 / 32700410799],
        [0, -1754552775 / 470086768, 14199869525 / 1410260304, -10690763975 / 1880347072],
        [0, 127303824393 / 49829197408, -318862633887 / 49829197408,
         701980252875 / 199316789632],
        [0, -282668133 / 205662961, 2019193451 / 616988883, -1453857185 / 822651844],
        [0, 40617522 / 29380423, -110615467 / 29380423, 69997945 / 29380423]]),
    error_order=4, stages=6)
_METHODS = {"RK45": _RK45, "RK23": _RK23}
_MESSAGES = {0: "The solver successfully reached the end of the integration interval.",
             -1: "Required step size is less than spacing between numbers."}


def _rms(x: numpy.ndarray) -> float:
    return float(numpy.linalg.norm(x) / x.size ** 0.5)


class _Segment:
    """SciPy's ``RkDenseOutput``: ``y_old + h Q [x, x**2, ...]`` with ``x = (t - t_old)/h``."""

    def __init__(self, t_old: float, t: float, y_old: numpy.ndarray, q: numpy.ndarray) -> None:
        self.t_old, self.t, self.h, self.y_old, self.q = t_old, t, t - t_old, y_old, q

    def __call__(self, t: numpy.ndarray) -> numpy.ndarray:
        x = (t - self.t_old) / self.h
        order = self.q.shape[1] - 1
        if t.ndim == 0:
            p = numpy.cumprod(numpy.tile(x, order + 1))
            return self.y_old + self.h * (self.q @ p)
        p = numpy.cumprod(numpy.tile(x, (order + 1, 1)), axis=0)
        return self.y_old[:, None] + self.h * (self.q @ p)


class OdeSolution:
    """The continuous solution of :func:`solve_ivp` (``dense_output=True``), as SciPy's:
    call it with a time or an array of times."""

    def __init__(self, ts: numpy.ndarray, segments: list[_Segment], device: str) -> None:
        self.ts, self.segments, self._device = ts, segments, device
        self.t_min, self.t_max = float(min(ts[0], ts[-1])), float(max(ts[0], ts[-1]))
        self._ascending = ts[-1] >= ts[0]

    def _one(self, t: float) -> numpy.ndarray:
        ts = self.ts if self._ascending else self.ts[::-1]
        i = int(numpy.searchsorted(ts, t, side="left")) - 1
        i = min(max(i, 0), len(self.segments) - 1)
        if not self._ascending:
            i = len(self.segments) - 1 - i
        return self.segments[i](numpy.asarray(t, dtype=float))

    def __call__(self, t: Any) -> Any:
        t = numpy.asarray(device_get(t), dtype=float)
        if t.ndim == 0:
            return device_put(self._one(float(t)), self._device)
        return device_put(numpy.stack([self._one(float(v)) for v in t], axis=-1),
                          self._device)


def solve_ivp(fun: Callable[..., Any], t_span: Any, y0: Any, method: str = "RK45",
              t_eval: Any = None, dense_output: bool = False, events: Any = None,
              vectorized: bool = False, args: Any = None, *, rtol: float = 1e-3,
              atol: Any = 1e-6, max_step: float = numpy.inf, first_step: Any = None
              ) -> OptimizeResult:
    """Integrate ``dy/dt = fun(t, y, *args)`` over ``t_span`` from ``y0``, as
    ``scipy.integrate.solve_ivp`` with ``method`` ``"RK45"`` or ``"RK23"``: returns
    SciPy's result (``t``, ``y`` of shape ``(n, len(t))``, ``sol``, ``t_events``,
    ``y_events``, ``nfev``, ``njev``, ``nlu``, ``status``, ``message``, ``success``) with
    SciPy's steps, ``t_eval`` and dense output. ``rtol``, ``atol`` (scalar or per
    component), ``max_step``, ``first_step`` as SciPy's. Host computation.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.integrate import solve_ivp
        >>> sol = solve_ivp(lambda t, y: [y[1], -y[0]], (0.0, np.pi), np.array([0.0, 1.0]),
        ...                 t_eval=[np.pi / 2], rtol=1e-8, atol=1e-10)
        >>> sol.y.round(6) + 0.0
        array([[1.],
               [0.]])
    """
    if method not in _METHODS:
        raise ValueError(f"solve_ivp: method {method!r} is not provided by funcgrad (it has "
                         f"{sorted(_METHODS)})")
    if events is not None:
        raise ValueError("solve_ivp: events are not provided by funcgrad")
    tab = _METHODS[method]
    t0, tf = map(float, t_span)
    if isinstance(y0, Tracer):
        raise TypeError("solve_ivp: needs a concrete y0 (host stepping); call it outside "
                        "jit/vmap/grad, or use odeint")
    y0h = numpy.asarray(device_get(y0))
    dtype = complex if numpy.iscomplexobj(y0h) else float
    y = numpy.atleast_1d(y0h.astype(dtype))
    if y.ndim != 1:
        raise ValueError("`y0` must be 1-dimensional.")
    device = (get_aval(y0).device or get_default_device()) if is_array(y0) and not \
        isinstance(y0, numpy.ndarray) else get_default_device()
    extra = tuple(args) if args is not None else ()
    nfev = 0

    def f(t: float, v: numpy.ndarray) -> numpy.ndarray:
        nonlocal nfev
        nfev += 1
        out = fun(t, device_put(v, device), *extra)
        if isinstance(out, Tracer):
            raise TypeError("solve_ivp: fun must give concrete values (host stepping)")
        if isinstance(out, (list, tuple)):
            out = [device_get(o) for o in out]
        return numpy.asarray(device_get(out), dtype=dtype).reshape(y.shape)

    rtol = float(rtol)
    if rtol < 100 * numpy.finfo(float).eps:
        rtol = 100 * numpy.finfo(float).eps
    atol_arr = numpy.asarray(atol, dtype=float)
    if numpy.any(atol_arr < 0):
        raise ValueError("`atol` must be positive.")
    if max_step <= 0:
        raise ValueError("`max_step` must be positive.")
    direction = numpy.sign(tf - t0) if tf != t0 else 1.0
    t = t0
    fy = f(t, y)
    c_, a_, b_, e_, p_ = (tab[k] for k in "CABEP")
    order = tab["error_order"]
    n_stages = tab["stages"]
    exponent = -1 / (order + 1)
    if first_step is None:
        if y.size == 0:
            h_abs = numpy.inf
        elif tf == t0:
            h_abs = 0.0
        else:
            scale = atol_arr + numpy.abs(y) * rtol
            d0, d1 = _rms(y / scale), _rms(fy / scale)
            h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
            h0 = min(h0, abs(tf - t0))
            f1 = f(t0 + h0 * direction, y + h0 * direction * fy)
            d2 = _rms((f1 - fy) / scale) / h0
            h1 = max(1e-6, h0 * 1e-3) if d1 <= 1e-15 and d2 <= 1e-15 else \
                (0.01 / max(d1, d2)) ** (1 / (order + 1))
            h_abs = min(100 * h0, h1, abs(tf - t0), max_step)
    else:
        h_abs = float(first_step)
        if h_abs <= 0 or h_abs > abs(tf - t0):
            raise ValueError("`first_step` must be positive and not exceed the interval.")
    k = numpy.empty((n_stages + 1, y.size), dtype=dtype)
    if t_eval is not None:
        t_eval = numpy.asarray(device_get(t_eval))
        if t_eval.ndim != 1:
            raise ValueError("`t_eval` must be 1-dimensional.")
        if numpy.any(t_eval < min(t0, tf)) or numpy.any(t_eval > max(t0, tf)):
            raise ValueError("Values in `t_eval` are not within `t_span`.")
        d = numpy.diff(t_eval)
        if (tf > t0 and numpy.any(d <= 0)) or (tf < t0 and numpy.any(d >= 0)):
            raise ValueError("Values in `t_eval` are not properly sorted.")
        if tf <= t0:
            t_eval = t_eval[::-1]
        t_eval_i = 0 if tf > t0 else t_eval.shape[0]
    ts: list[Any] = [t0] if t_eval is None else []
    ys: list[Any] = [y] if t_eval is None else []
    segments: list[_Segment] = []
    seg_times = [t0]
    status = None
    while status is None:
        if y.size == 0 or t == tf:
            status = 0
            t_old = t
            break
        min_step = 10 * abs(numpy.nextafter(t, direction * numpy.inf) - t)
        h_abs_now = min(max(h_abs, min_step), max_step) if h_abs <= max_step else max_step
        accepted = rejected = False
        while not accepted:
            if h_abs_now < min_step:
                status = -1
                break
            h = h_abs_now * direction
            t_new = t + h
            if direction * (t_new - tf) > 0:
                t_new = tf
            h = t_new - t
            h_abs_now = abs(h)
            k[0] = fy
            for s in range(1, n_stages):
                dy = (k[:s].T @ a_[s, :s]) * h
                k[s] = f(t + c_[s] * h, y + dy)
            y_new = y + h * (k[:-1].T @ b_)
            f_new = f(t + h, y_new)
            k[-1] = f_new
            scale = atol_arr + numpy.maximum(numpy.abs(y), numpy.abs(y_new)) * rtol
            err = _rms((k.T @ e_) * h / scale)
            if err < 1:
                factor = _MAX_FACTOR if err == 0 else min(_MAX_FACTOR, _SAFETY * err ** exponent)
                if rejected:
                    factor = min(1.0, factor)
                h_abs_now *= factor
                accepted = True
            else:
                h_abs_now *= max(_MIN_FACTOR, _SAFETY * err ** exponent)
                rejected = True
        if status == -1:
            break
        t_old, y_old = t, y
        t, y, fy, h_abs = t_new, y_new, f_new, h_abs_now
        if direction * (t - tf) >= 0:
            status = 0
        segment = None
        if dense_output or t_eval is not None:
            segment = _Segment(t_old, t, y_old, k.T @ p_)
        if dense_output:
            segments.append(segment)
            seg_times.append(t)
        if t_eval is None:
            ts.append(t)
            ys.append(y)
        else:
            if direction > 0:
                new_i = int(numpy.searchsorted(t_eval, t, side="right"))
                step_times = t_eval[t_eval_i:new_i]
            else:
                new_i = int(numpy.searchsorted(t_eval, t, side="left"))
                step_times = t_eval[new_i:t_eval_i][::-1]
            if step_times.size:
                ts.append(step_times)
                ys.append(segment(step_times))
                t_eval_i = new_i
    if t_eval is None:
        t_out = numpy.array(ts)
        y_out = numpy.vstack(ys).T
    elif ts:
        t_out = numpy.hstack(ts)
        y_out = numpy.hstack(ys)
    else:
        t_out = numpy.array([])
        y_out = numpy.zeros((y.size, 0))
    sol = OdeSolution(numpy.array(seg_times), segments, device) if dense_output and segments \
        else None
    return OptimizeResult(t=t_out, y=device_put(y_out, device), sol=sol, t_events=None,
                          y_events=None, nfev=nfev, njev=0, nlu=0, status=status,
                          message=_MESSAGES[status], success=status >= 0)


def odeint(func: Callable[..., Any], y0: Any, t: Any, args: tuple = (), Dfun: Any = None,  # noqa: N803
           col_deriv: int = 0, full_output: int = 0, ml: Any = None, mu: Any = None,
           rtol: float | None = None, atol: float | None = None, tcrit: Any = None,
           h0: float = 0.0, hmax: float = 0.0, hmin: float = 0.0, ixpr: int = 0,
           mxstep: int = 0, mxhnil: int = 0, mxordn: int = 12, mxords: int = 5,
           printmessg: int = 0, tfirst: bool = False) -> Any:
    """Integrate ``dy/dt = func(y, t, *args)`` (``func(t, y, ...)`` with ``tfirst``) and
    return ``y`` at the times ``t`` (``len(t) x n``), as ``scipy.integrate.odeint``: SciPy's
    signature over funcgrad's adaptive Dormand-Prince ``odeint`` (LSODA's stiffness switching
    is not there), to ``rtol``/``atol`` (default 1.49012e-8). Differentiable in ``y0``,
    ``t`` and ``args`` (adjoint) and ``jit``-able. ``Dfun`` and the LSODA tuning options are
    accepted and unused; ``full_output`` is refused.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.integrate import odeint
        >>> odeint(lambda y, t, k: -k * y, np.array([1.0]), np.array([0.0, 1.0]),
        ...        args=(2.0,)).round(6)
        array([[1.      ],
               [0.135335]])
    """
    if full_output:
        raise ValueError("odeint: full_output is not provided by funcgrad")
    if not isinstance(args, tuple):
        args = (args,)
    rtol = 1.49012e-8 if rtol is None else rtol
    atol = 1.49012e-8 if atol is None else atol
    f = (lambda y, t, *a: func(t, y, *a)) if tfirst else func
    kw: dict[str, Any] = {"rtol": rtol, "atol": atol}
    if mxstep:
        kw["mxstep"] = mxstep
    if hmax:
        kw["hmax"] = hmax
    return _odeint(f, y0, t, *args, **kw)
