"""``scipy.optimize.minimize(method="Nelder-Mead")``: SciPy's downhill simplex, step for
step (the same initial simplex, reflection/expansion/contraction/shrink rules, ``adaptive``
coefficients, clipping to ``bounds``, stopping tests and counts), on the host.

Example:
    >>> import numpy as np, funcgrad.numpy as fnp
    >>> from funcgrad.scipy.optimize import minimize
    >>> res = minimize(lambda x: fnp.sum((x - 2.0) ** 2), np.zeros(2), method="Nelder-Mead")
    >>> res.x.round(3), int(res.nit), int(res.nfev)
    (array([2., 2.]), 47, 79)
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy

from funcgrad.scipy.optimize._curve_fit import OptimizeWarning
from funcgrad.scipy.optimize._objective import STATUS_MESSAGES, Objective, call_callback
from funcgrad.scipy.optimize._scalar import OptimizeResult

__all__ = ["minimize_neldermead"]


class _TooManyCalls(Exception):
    pass


def minimize_neldermead(obj: Objective, x0: numpy.ndarray, bounds: Any = None,
                        callback: Any = None, maxiter: Any = None, maxfev: Any = None,
                        disp: bool = False, return_all: bool = False,
                        initial_simplex: Any = None, xatol: float = 1e-4, fatol: float = 1e-4,
                        adaptive: bool = False) -> OptimizeResult:
    """Nelder-Mead on ``obj`` from ``x0`` (host arrays); SciPy's options."""
    n = x0.size
    if adaptive:
        rho, chi, psi, sigma = 1, 1 + 2 / n, 0.75 - 1 / (2 * n), 1 - 1 / n
    else:
        rho, chi, psi, sigma = 1, 2, 0.5, 0.5
    lb = ub = None
    if bounds is not None:
        lb, ub = bounds
        if numpy.any(lb > x0) or numpy.any(x0 > ub):
            warnings.warn("Initial guess is not within the specified bounds", OptimizeWarning,
                          stacklevel=4)
        x0 = numpy.clip(x0, lb, ub)

    def clip(v: numpy.ndarray) -> numpy.ndarray:
        return v if lb is None else numpy.clip(v, lb, ub)

    if initial_simplex is None:
        sim = numpy.empty((n + 1, n), dtype=x0.dtype)
        sim[0] = x0
        for k in range(n):
            y = numpy.array(x0, copy=True)
            y[k] = (1 + 0.05) * y[k] if y[k] != 0 else 0.00025
            sim[k + 1] = y
    else:
        sim = numpy.atleast_2d(numpy.asarray(initial_simplex, dtype=float)).copy()
        if sim.ndim != 2 or sim.shape[0] != sim.shape[1] + 1:
            raise ValueError("minimize: `initial_simplex` should be an array of shape (N+1,N)")
        if sim.shape[1] != n:
            raise ValueError("minimize: size of `initial_simplex` is not consistent with `x0`")
    if maxiter is None and maxfev is None:
        maxiter = maxfev = n * 200
    elif maxiter is None:
        maxiter = n * 200 if maxfev == numpy.inf else numpy.inf
    elif maxfev is None:
        maxfev = n * 200 if maxiter == numpy.inf else numpy.inf
    if lb is not None:  # reflect vertices past an upper bound back inside
        sim = numpy.clip(numpy.where(sim > ub, 2 * ub - sim, sim), lb, ub)

    def f(x: numpy.ndarray) -> float:
        if obj.nfev >= maxfev:
            raise _TooManyCalls
        return obj.f(numpy.copy(x))

    fsim = numpy.full((n + 1,), numpy.inf, dtype=float)
    try:
        for k in range(n + 1):
            fsim[k] = f(sim[k])
    except _TooManyCalls:
        pass
    order = numpy.argsort(fsim)
    sim, fsim = numpy.take(sim, order, 0), numpy.take(fsim, order, 0)
    allvecs = [sim[0]]
    iterations = 1
    stopped = False
    while obj.nfev < maxfev and iterations < maxiter:
        try:
            if (numpy.max(numpy.abs(sim[1:] - sim[0])) <= xatol
                    and numpy.max(numpy.abs(fsim[0] - fsim[1:])) <= fatol):
                break
            xbar = numpy.add.reduce(sim[:-1], 0) / n
            xr = clip((1 + rho) * xbar - rho * sim[-1])
            fxr = f(xr)
            shrink = False
            if fxr < fsim[0]:
                xe = clip((1 + rho * chi) * xbar - rho * chi * sim[-1])
                fxe = f(xe)
                sim[-1], fsim[-1] = (xe, fxe) if fxe < fxr else (xr, fxr)
            elif fxr < fsim[-2]:
                sim[-1], fsim[-1] = xr, fxr
            elif fxr < fsim[-1]:  # outside contraction
                xc = clip((1 + psi * rho) * xbar - psi * rho * sim[-1])
                fxc = f(xc)
                if fxc <= fxr:
                    sim[-1], fsim[-1] = xc, fxc
                else:
                    shrink = True
            else:  # inside contraction
                xcc = clip((1 - psi) * xbar + psi * sim[-1])
                fxcc = f(xcc)
                if fxcc < fsim[-1]:
                    sim[-1], fsim[-1] = xcc, fxcc
                else:
                    shrink = True
            if shrink:
                for j in range(1, n + 1):
                    sim[j] = clip(sim[0] + sigma * (sim[j] - sim[0]))
                    fsim[j] = f(sim[j])
            iterations += 1
        except _TooManyCalls:
            pass
        order = numpy.argsort(fsim)
        sim, fsim = numpy.take(sim, order, 0), numpy.take(fsim, order, 0)
        allvecs.append(sim[0])
        if call_callback(callback, sim[0], float(fsim[0])):
            stopped = True
            break
    if stopped:
        status, msg = 99, STATUS_MESSAGES["callback"]
    elif obj.nfev >= maxfev:
        status, msg = 1, STATUS_MESSAGES["maxfev"]
    elif iterations >= maxiter:
        status, msg = 2, STATUS_MESSAGES["maxiter"]
    else:
        status, msg = 0, STATUS_MESSAGES["success"]
    if disp:
        print(msg)
    res = OptimizeResult(fun=float(numpy.min(fsim)), nit=iterations, nfev=obj.nfev,
                         status=status, success=status == 0, message=msg, x=sim[0],
                         final_simplex=(sim, fsim))
    if return_all:
        res["allvecs"] = allvecs
    return res
