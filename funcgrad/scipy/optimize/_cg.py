"""``scipy.optimize.minimize`` methods ``"CG"`` (Polak-Ribiere nonlinear conjugate
gradients) and ``"Newton-CG"`` (truncated Newton: the Newton step by linear conjugate
gradients on Hessian-vector products), on the host, as SciPy's: the same direction updates,
inner-loop termination and stopping tests, with a strong-Wolfe line search (Nocedal &
Wright's bracketing and zoom). Hessian-vector products come from ``hessp``, ``hess`` or
forward-over-reverse differentiation of the objective (SciPy differences the gradient).

Example:
    >>> import numpy as np, funcgrad.numpy as fnp
    >>> from funcgrad.scipy.optimize import minimize
    >>> rosen = lambda x: fnp.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    >>> minimize(rosen, np.array([-1.2, 1.0]), method="Newton-CG").x.round(4)
    array([1., 1.])
"""

from __future__ import annotations

from typing import Any

import numpy

from funcgrad.scipy.optimize._objective import STATUS_MESSAGES, Objective, call_callback
from funcgrad.scipy.optimize._scalar import OptimizeResult

__all__ = ["minimize_cg", "minimize_newtoncg"]


def _cubic_min(a: float, fa: float, da: float, b: float, fb: float, db: float) -> float | None:
    """The minimiser of the cubic through ``(a, fa, da)`` and ``(b, fb, db)``, if real."""
    d1 = da + db - 3 * (fa - fb) / (a - b)
    rad = d1 * d1 - da * db
    if rad < 0:
        return None
    d2 = numpy.sign(b - a) * numpy.sqrt(rad)
    denom = db - da + 2 * d2
    if denom == 0:
        return None
    return float(b - (b - a) * (db + d2 - d1) / denom)


def wolfe_search(obj: Objective, x: numpy.ndarray, p: numpy.ndarray, f0: float,
                 g0: numpy.ndarray, old_old: float | None, c1: float = 1e-4, c2: float = 0.9,
                 maxiter: int = 30) -> tuple[float, float, numpy.ndarray] | None:
    """A step ``t`` along ``p`` with sufficient decrease and ``|f'(t)| <= c2 |f'(0)|``:
    ``(t, f(x + t p), g(x + t p))``, or None."""
    d0 = float(g0 @ p)
    if not d0 < 0:
        return None
    t = 1.0
    if old_old is not None and d0 != 0:  # SciPy's first trial from the last decrease
        t = min(1.0, 1.01 * 2 * (f0 - old_old) / d0)
        if not t > 0:
            t = 1.0
    prev_t, prev_f, prev_d = 0.0, f0, d0
    cache: dict[float, tuple[float, numpy.ndarray]] = {}

    def phi(t: float) -> tuple[float, float]:
        if t not in cache:
            cache[t] = obj.f_and_g(x + t * p)
        fv, gv = cache[t]
        return fv, float(gv @ p)

    def zoom(lo: float, flo: float, dlo: float, hi: float, fhi: float, dhi: float
             ) -> float | None:
        for _ in range(maxiter):
            t = _cubic_min(lo, flo, dlo, hi, fhi, dhi)
            width = hi - lo
            if t is None or not (min(lo, hi) + 0.1 * abs(width) <= t
                                 <= max(lo, hi) - 0.1 * abs(width)):
                t = lo + 0.5 * width
            ft, dt = phi(t)
            if not numpy.isfinite(ft) or ft > f0 + c1 * t * d0 or ft >= flo:
                hi, fhi, dhi = t, ft, dt
            else:
                if abs(dt) <= -c2 * d0:
                    return t
                if dt * (hi - lo) >= 0:
                    hi, fhi, dhi = lo, flo, dlo
                lo, flo, dlo = t, ft, dt
            if abs(hi - lo) <= 1e-14 * max(abs(lo), 1e-300):
                break
        return None

    found = None
    for i in range(maxiter):
        ft, dt = phi(t)
        if not numpy.isfinite(ft) or ft > f0 + c1 * t * d0 or (i > 0 and ft >= prev_f):
            found = zoom(prev_t, prev_f, prev_d, t, ft, dt)
            break
        if abs(dt) <= -c2 * d0:
            found = t
            break
        if dt >= 0:
            found = zoom(t, ft, dt, prev_t, prev_f, prev_d)
            break
        prev_t, prev_f, prev_d = t, ft, dt
        t *= 2.0
    if found is None:
        return None
    fv, gv = cache[found]
    return found, fv, gv


def minimize_cg(obj: Objective, x0: numpy.ndarray, callback: Any = None, gtol: float = 1e-5,
                norm: float = numpy.inf, maxiter: Any = None, disp: bool = False,
                return_all: bool = False, eps: Any = None, c1: float = 1e-4, c2: float = 0.4,
                finite_diff_rel_step: Any = None, workers: Any = None) -> OptimizeResult:
    """Polak-Ribiere CG (with SciPy's ``max(beta, 0)`` and descent safeguard)."""
    maxiter = 200 * x0.size if maxiter is None else maxiter
    x = x0.copy()
    f, g = obj.f_and_g(x)
    old_old = f + numpy.linalg.norm(g) / 2
    p = -g
    k, warn = 0, 0
    allvecs = [x]
    while numpy.linalg.norm(g, ord=norm) > gtol and k < maxiter:
        step = wolfe_search(obj, x, p, f, g, old_old, c1=c1, c2=c2)
        if step is None:
            warn = 2
            break
        t, f_new, g_new = step
        x = x + t * p
        beta = max(0.0, float((g_new - g) @ g_new) / float(g @ g))
        p = -g_new + beta * p
        if not p @ g_new <= -0.01 * (g_new @ g_new):  # lost descent: restart
            p = -g_new
        old_old, f, g = f, f_new, g_new
        k += 1
        allvecs.append(x)
        if call_callback(callback, x, f):
            warn = 99
            break
    if warn == 99:
        msg = STATUS_MESSAGES["callback"]
    elif warn == 2:
        msg = STATUS_MESSAGES["pr_loss"]
    elif k >= maxiter:
        warn, msg = 1, STATUS_MESSAGES["maxiter"]
    elif not (numpy.isfinite(f) and numpy.all(numpy.isfinite(x))):
        warn, msg = 3, STATUS_MESSAGES["nan"]
    else:
        msg = STATUS_MESSAGES["success"]
    res = OptimizeResult(fun=f, jac=g, nfev=obj.nfev, njev=obj.njev, status=warn,
                         success=warn == 0, message=msg, x=x, nit=k)
    if return_all:
        res["allvecs"] = allvecs
    return res


def minimize_newtoncg(obj: Objective, x0: numpy.ndarray, callback: Any = None,
                      xtol: float = 1e-5, eps: Any = None, maxiter: Any = None,
                      disp: bool = False, return_all: bool = False, c1: float = 1e-4,
                      c2: float = 0.9) -> OptimizeResult:
    """Truncated Newton with SciPy's inner CG (``eta = min(0.5, sqrt(|g|_1))``, stop on
    negative curvature) and outer test ``|step|_1 <= n xtol``."""
    n = x0.size
    maxiter = 200 * n if maxiter is None else maxiter
    tol = n * xtol
    x = x0.copy()
    f = obj.f(x)
    old_old = None
    k, warn = 0, 0
    allvecs = [x]
    g = numpy.zeros(n)
    float_eps = numpy.finfo(float).eps
    update_l1 = 2 * tol
    while update_l1 > tol:
        if k >= maxiter:
            warn = 1
            break
        g = obj.grad_only(x)
        b = -g
        maggrad = numpy.linalg.norm(b, ord=1)
        termcond = min(0.5, numpy.sqrt(maggrad)) * maggrad
        xsupi = numpy.zeros(n)
        ri, psupi = -b, b.copy()
        dri0 = ri @ ri
        for i in range(20 * n):
            if numpy.linalg.norm(ri, ord=1) <= termcond:
                break
            ap = obj.hvp(x, psupi)
            curv = psupi @ ap
            if 0 <= curv <= 3 * float_eps:
                break
            if curv < 0:  # negative curvature: the step so far (or steepest descent)
                if i == 0:
                    xsupi = dri0 / (-curv) * b
                break
            alpha = dri0 / curv
            xsupi = xsupi + alpha * psupi
            ri = ri + alpha * ap
            dri1 = ri @ ri
            psupi = -ri + dri1 / dri0 * psupi
            dri0 = dri1
        else:
            warn = 3
            break
        if not numpy.any(xsupi):  # the gradient is already small enough: no step
            break
        step = wolfe_search(obj, x, xsupi, f, g, old_old, c1=c1, c2=c2)
        if step is None:
            warn = 2
            break
        t, f_new, g = step
        update = t * xsupi
        x = x + update
        old_old, f = f, f_new
        update_l1 = numpy.linalg.norm(update, ord=1)
        k += 1
        allvecs.append(x)
        if call_callback(callback, x, f):
            warn = 99
            break
    msg = {0: STATUS_MESSAGES["success"], 1: STATUS_MESSAGES["maxiter"],
           2: STATUS_MESSAGES["pr_loss"], 99: STATUS_MESSAGES["callback"],
           3: "CG iterations didn't converge. The Hessian is not positive definite."}[warn]
    if warn == 0 and not (numpy.isfinite(f) and numpy.all(numpy.isfinite(x))):
        warn, msg = 3, STATUS_MESSAGES["nan"]
    res = OptimizeResult(fun=f, jac=g, nfev=obj.nfev, njev=obj.njev, nhev=obj.nhev,
                         status=warn, success=warn == 0, message=msg, x=x, nit=k)
    if return_all:
        res["allvecs"] = allvecs
    return res
