"""``scipy.optimize.minimize(method="Powell")``: SciPy's modified Powell method step for
step (Brent line searches along the direction set, the extrapolation test that replaces the
direction of largest decrease, ``bounds`` by bounded line searches), on the host.

Example:
    >>> import numpy as np, funcgrad.numpy as fnp
    >>> from funcgrad.scipy.optimize import minimize
    >>> res = minimize(lambda x: fnp.sum((x - 2.0) ** 2), np.zeros(2), method="Powell")
    >>> res.x.round(6), bool(res.success)
    (array([2., 2.]), True)
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy

from funcgrad.scipy.optimize._curve_fit import OptimizeWarning
from funcgrad.scipy.optimize._objective import STATUS_MESSAGES, Objective, call_callback
from funcgrad.scipy.optimize._scalar import OptimizeResult, _bounded, _brent

__all__ = ["minimize_powell"]


class _TooManyCalls(Exception):
    pass


def _line_for_search(x0: numpy.ndarray, alpha: numpy.ndarray, lb: numpy.ndarray,
                     ub: numpy.ndarray) -> tuple[float, float]:
    """The range of steps ``t`` keeping ``x0 + t alpha`` inside the bounds."""
    nz = alpha.nonzero()[0]
    lb, ub, x0, alpha = lb[nz], ub[nz], x0[nz], alpha[nz]
    low, high = (lb - x0) / alpha, (ub - x0) / alpha
    pos = alpha > 0
    lmin = numpy.max(numpy.where(pos, low, 0) + numpy.where(pos, 0, high))
    lmax = numpy.min(numpy.where(pos, high, 0) + numpy.where(pos, 0, low))
    return (float(lmin), float(lmax)) if lmax >= lmin else (0.0, 0.0)


def _line_search(f: Any, p: numpy.ndarray, xi: numpy.ndarray, tol: float, lb: Any, ub: Any,
                 fval: float) -> tuple[float, numpy.ndarray, numpy.ndarray]:
    """SciPy's ``_linesearch_powell``: minimise along ``xi`` from ``p``."""
    if not numpy.any(xi):
        return fval, p, xi
    if lb is None:
        res = _brent(lambda a: f(p + a * xi), None, tol, 500)
        step = res.x * xi
        return float(res.fun), p + step, step
    lo, hi = _line_for_search(p, xi, lb, ub)
    if math.isinf(lo) and math.isinf(hi):
        return _line_search(f, p, xi, tol, None, None, fval)
    if not math.isinf(lo) and not math.isinf(hi):
        res = _bounded(lambda a: f(p + a * xi), (lo, hi), tol / 100, 500)
        step = res.x * xi
        return float(res.fun), p + step, step
    # bounded on one side: search tan(t) over the matching part of (-pi/2, pi/2)
    res = _bounded(lambda a: f(p + math.tan(a) * xi), (math.atan(lo), math.atan(hi)),
                   tol / 100, 500)
    step = math.tan(res.x) * xi
    return float(res.fun), p + step, step


def minimize_powell(obj: Objective, x0: numpy.ndarray, bounds: Any = None, callback: Any = None,
                    xtol: float = 1e-4, ftol: float = 1e-4, maxiter: Any = None,
                    maxfev: Any = None, disp: bool = False, direc: Any = None,
                    return_all: bool = False) -> OptimizeResult:
    """Powell's method on ``obj`` from ``x0`` (host arrays); SciPy's options."""
    x = x0.copy()
    n = x.size
    if maxiter is None and maxfev is None:
        maxiter = maxfev = n * 1000
    elif maxiter is None:
        maxiter = n * 1000 if maxfev == numpy.inf else numpy.inf
    elif maxfev is None:
        maxfev = n * 1000 if maxiter == numpy.inf else numpy.inf
    directions = numpy.eye(n) if direc is None else numpy.asarray(direc, dtype=float).copy()
    if directions.shape != (n, n):
        raise ValueError("direc input is not of the correct shape")
    lb = ub = None
    if bounds is not None:
        lb, ub = bounds
        if numpy.any(lb > x0) or numpy.any(x0 > ub):
            warnings.warn("Initial guess is not within the specified bounds", OptimizeWarning,
                          stacklevel=4)

    def f(v: numpy.ndarray) -> float:
        if obj.nfev >= maxfev:
            raise _TooManyCalls
        return obj.f(numpy.copy(v))

    fval = f(x)
    x1 = x.copy()
    it = 0
    stopped = False
    allvecs = [x]
    while True:
        try:
            fx = fval
            bigind, delta = 0, 0.0
            for i in range(n):
                fx2 = fval
                fval, x, _ = _line_search(f, x, directions[i], xtol * 100, lb, ub, fval)
                if fx2 - fval > delta:
                    delta, bigind = fx2 - fval, i
            it += 1
            allvecs.append(x)
            if call_callback(callback, x, fval):
                stopped = True
                break
            if 2.0 * (fx - fval) <= ftol * (abs(fx) + abs(fval)) + 1e-20:
                break
            if obj.nfev >= maxfev or it >= maxiter:
                break
            if math.isnan(fx) and math.isnan(fval):
                break
            direc1 = x - x1
            x1 = x.copy()
            lmax = 1.0 if lb is None else _line_for_search(x, direc1, lb, ub)[1]
            x2 = x + min(lmax, 1) * direc1
            fx2 = f(x2)
            if fx > fx2:
                t = 2.0 * (fx + fx2 - 2.0 * fval)
                temp = fx - fval - delta
                t *= temp * temp
                temp = fx - fx2
                t -= delta * temp * temp
                if t < 0.0:
                    fval, x, direc1 = _line_search(f, x, direc1, xtol * 100, lb, ub, fval)
                    if numpy.any(direc1):
                        directions[bigind] = directions[-1]
                        directions[-1] = direc1
        except _TooManyCalls:
            break
    if stopped:
        status, msg = 99, STATUS_MESSAGES["callback"]
    elif obj.nfev >= maxfev:
        status, msg = 1, STATUS_MESSAGES["maxfev"]
    elif it >= maxiter:
        status, msg = 2, STATUS_MESSAGES["maxiter"]
    elif math.isnan(fval) or numpy.isnan(x).any():
        status, msg = 3, STATUS_MESSAGES["nan"]
    elif lb is not None and (numpy.any(x < lb) or numpy.any(x > ub)):
        status, msg = 4, "The result is outside of the provided bounds."
    else:
        status, msg = 0, STATUS_MESSAGES["success"]
    res = OptimizeResult(fun=fval, direc=directions, nit=it, nfev=obj.nfev, status=status,
                         success=status == 0, message=msg, x=x)
    if return_all:
        res["allvecs"] = allvecs
    return res
