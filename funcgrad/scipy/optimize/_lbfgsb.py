"""``scipy.optimize.minimize(method="L-BFGS-B")``: limited-memory BFGS with simple bounds,
on the host.

Not SciPy's Fortran (Byrd, Lu, Nocedal and Zhu's generalized Cauchy point and subspace
minimization) but a projected quasi-Newton method with the same options and stopping tests:
variables at a bound whose gradient pushes outward are held (Bertsekas' epsilon-active set),
the L-BFGS two-loop recursion (``maxcor`` pairs) gives the step in the free ones, and a
backtracking search along the projection arc ``clip(x + t d, lb, ub)`` takes the first
``t`` with sufficient decrease. It stops, as SciPy, when the projected gradient's largest
entry is at most ``gtol`` or the relative reduction of ``f`` is at most ``ftol``. Minima agree
with SciPy's to those tolerances; iteration counts differ.

Example:
    >>> import numpy as np, funcgrad.numpy as fnp
    >>> from funcgrad.scipy.optimize import minimize
    >>> res = minimize(lambda x: fnp.sum((x - 2.0) ** 2), np.zeros(2), method="L-BFGS-B",
    ...                bounds=[(0.0, 1.0), (None, None)])
    >>> res.x.round(6), bool(res.success)
    (array([1., 2.]), True)
"""

from __future__ import annotations

from typing import Any

import numpy

from funcgrad.scipy.optimize._objective import STATUS_MESSAGES, Objective, call_callback
from funcgrad.scipy.optimize._scalar import OptimizeResult

__all__ = ["minimize_lbfgsb"]

_CONVERGED_G = "CONVERGENCE: NORM OF PROJECTED GRADIENT <= PGTOL"
_CONVERGED_F = "CONVERGENCE: RELATIVE REDUCTION OF F <= FACTR*EPSMCH"
_ABNORMAL = "ABNORMAL: "


def _two_loop(g: numpy.ndarray, ss: list, ys: list, free: numpy.ndarray) -> numpy.ndarray:
    """``-H g`` on the free variables (the held ones: 0) from the stored pairs."""
    q = numpy.where(free, g, 0.0)
    alphas = []
    for s, y in zip(reversed(ss), reversed(ys)):
        sf, yf = s * free, y * free
        sy = sf @ yf
        if sy <= 0:
            alphas.append(None)
            continue
        a = (sf @ q) / sy
        alphas.append((a, sf, yf, sy))
        q = q - a * yf
    pairs = [p for p in alphas if p is not None]
    gamma = pairs[0][3] / (pairs[0][2] @ pairs[0][2]) if pairs else 1.0
    r = gamma * q
    for a, sf, yf, sy in reversed(pairs):
        b = (yf @ r) / sy
        r = r + sf * (a - b)
    return -r


def minimize_lbfgsb(obj: Objective, x0: numpy.ndarray, bounds: Any = None,
                    callback: Any = None, maxcor: int = 10, ftol: float = 2.2204460492503131e-09,
                    gtol: float = 1e-5, eps: Any = None, maxfun: int = 15000,
                    maxiter: int = 15000, maxls: int = 20, disp: Any = None, iprint: Any = None,
                    finite_diff_rel_step: Any = None, workers: Any = None) -> OptimizeResult:
    """L-BFGS-B on ``obj`` from ``x0`` (host arrays); SciPy's options (``eps``,
    ``finite_diff_rel_step``, ``disp``, ``iprint``, ``workers`` are accepted and unused:
    gradients are exact)."""
    n = x0.size
    if maxcor < 1:
        raise ValueError(f"minimize: maxcor must be positive, got {maxcor}")
    lb, ub = bounds if bounds is not None else (numpy.full(n, -numpy.inf),
                                                numpy.full(n, numpy.inf))
    x = numpy.clip(x0, lb, ub)
    f, g = obj.f_and_g(x)
    ss: list[numpy.ndarray] = []
    ys: list[numpy.ndarray] = []
    nit, status, msg = 0, 0, ""

    def projected(x: numpy.ndarray, g: numpy.ndarray) -> numpy.ndarray:
        return numpy.clip(x - g, lb, ub) - x

    while True:
        pg = projected(x, g)
        if numpy.max(numpy.abs(pg), initial=0.0) <= gtol:
            msg = _CONVERGED_G
            break
        if not numpy.isfinite(f):
            status, msg = 2, _ABNORMAL + "function value is not finite"
            break
        if nit >= maxiter:
            status, msg = 1, "STOP: TOTAL NO. OF ITERATIONS REACHED LIMIT"
            break
        if obj.nfev >= maxfun:
            status, msg = 1, "STOP: TOTAL NO. OF F,G EVALUATIONS EXCEEDS LIMIT"
            break
        # hold the variables within eps_k of a bound the gradient pushes against
        eps_k = min(1e-3, float(numpy.linalg.norm(pg)))
        held = ((x <= lb + eps_k) & (g > 0)) | ((x >= ub - eps_k) & (g < 0))
        free = ~held
        d = _two_loop(g, ss, ys, free)
        slope = g @ d
        if not slope < 0:  # not a descent direction: restart from steepest descent
            ss.clear()
            ys.clear()
            d = -numpy.where(free, g, 0.0)
            slope = g @ d
        t = 1.0
        if not ss:  # the first step: at most unit length, as SciPy's
            t = min(1.0, 1.0 / max(float(numpy.linalg.norm(d)), 1e-300))
        accepted = False
        for _ in range(maxls):
            x_new = numpy.clip(x + t * d, lb, ub)
            f_new, g_new = obj.f_and_g(x_new)
            # sufficient decrease along the projection arc (Bertsekas' Armijo rule)
            if numpy.isfinite(f_new) and f_new <= f + 1e-4 * (g @ (x_new - x)):
                accepted = True
                break
            t *= 0.5 if numpy.isfinite(f_new) else 0.1
        if not accepted:
            if ss:  # retry once from steepest descent with a fresh memory
                ss.clear()
                ys.clear()
                continue
            status, msg = 2, _ABNORMAL + "line search failed"
            break
        s, y = x_new - x, g_new - g
        if s @ y > numpy.finfo(float).eps * (y @ y):
            ss.append(s)
            ys.append(y)
            if len(ss) > maxcor:
                ss.pop(0)
                ys.pop(0)
        reduction = (f - f_new) / max(abs(f), abs(f_new), 1.0)
        x, f, g = x_new, f_new, g_new
        nit += 1
        if call_callback(callback, x, f):
            status, msg = 99, STATUS_MESSAGES["callback"]
            break
        if reduction <= ftol:
            msg = _CONVERGED_F
            break
    return OptimizeResult(fun=f, jac=g, nfev=obj.nfev, njev=obj.njev, nit=nit, status=status,
                          message=msg, x=x, success=status == 0)
