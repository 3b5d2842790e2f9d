"""``scipy.optimize.minimize(method="TNC")``: a truncated Newton method with simple bounds, on
the host.

Not Nash's C code but the same method: variables at a bound whose gradient pushes outward are
held; conjugate gradients on the Newton system of the free ones (Hessian-vector products from
``hessp``/``hess`` or forward-over-reverse autodiff, where SciPy differences the gradient),
truncated after ``maxCGit`` steps, at negative curvature, or when the residual falls below
``min(0.01, |g|) |g|``; then a backtracking search along the projection arc
``clip(x + t d, lb, ub)`` (steps at most ``stepmx``). SciPy's options, defaults and stopping
tests (the projected gradient below ``gtol``, the change of ``x`` below ``xtol``, of ``f``
below ``ftol``, ``maxfun`` evaluations) and messages; minima agree with SciPy's to those
tolerances while iteration counts differ.

Example:
    >>> import numpy as np, funcgrad.numpy as fnp
    >>> from funcgrad.scipy.optimize import minimize
    >>> res = minimize(lambda x: fnp.sum((x - 2.0) ** 2), np.zeros(2), method="TNC",
    ...                bounds=[(0.0, 1.0), (None, None)])
    >>> res.x.round(6), bool(res.success)
    (array([1., 2.]), True)
"""

from __future__ import annotations

import math
from typing import Any

import numpy

from funcgrad.scipy.optimize._objective import Objective, call_callback
from funcgrad.scipy.optimize._scalar import OptimizeResult

__all__ = ["minimize_tnc"]

_MESSAGES = {
    0: "Local minimum reached (|pg| ~= 0)",
    1: "Converged (|f_n-f_(n-1)| ~= 0)",
    2: "Converged (|x_n-x_(n-1)| ~= 0)",
    3: "Max. number of function evaluations reached",
    4: "Linear search failed",
    5: "All lower bounds are equal to the upper bounds",
    6: "Unable to progress",
    7: "User requested end of minimization",
}


def _newton_step(obj: Objective, x: numpy.ndarray, g: numpy.ndarray, free: numpy.ndarray,
                 max_cg: int) -> numpy.ndarray:
    """Truncated conjugate gradients for ``H d = -g`` on the free variables."""
    d = numpy.zeros_like(x)
    r = numpy.where(free, -g, 0.0)
    p = r.copy()
    rr = r @ r
    # The forcing term of truncated Newton methods: the tolerance shrinks with the gradient,
    # so the steps become Newton's near the minimum (looser, the first steps zigzag along
    # curved valleys such as Rosenbrock's).
    gnorm = math.sqrt(rr)
    stop = min(1e-2, gnorm) * gnorm
    for _ in range(max_cg):
        hp = numpy.where(free, obj.hvp(x, p), 0.0)
        curv = p @ hp
        if curv <= 1e-16 * (p @ p):  # negative (or no) curvature: the step so far
            return d if d.any() else numpy.where(free, -g, 0.0)
        a = rr / curv
        d = d + a * p
        r = r - a * hp
        rr_new = r @ r
        if math.sqrt(rr_new) <= stop:
            break
        p = r + (rr_new / rr) * p
        rr = rr_new
    return d


def minimize_tnc(obj: Objective, x0: numpy.ndarray, bounds: Any = None, callback: Any = None,
                 eps: Any = None, scale: Any = None, offset: Any = None, mesg_num: Any = None,
                 maxCGit: int = -1, eta: float = -1, stepmx: float = 0,  # noqa: N803
                 accuracy: float = 0, minfev: float = 0, ftol: float = -1, xtol: float = -1,
                 gtol: float = -1, rescale: float = -1, disp: Any = False,
                 finite_diff_rel_step: Any = None, maxfun: int | None = None,
                 maxiter: Any = None) -> OptimizeResult:
    """TNC on ``obj`` from ``x0`` (host arrays) with SciPy's options and defaults (``eps``,
    ``scale``, ``offset``, ``mesg_num``, ``eta`` (the line search's severity), ``minfev``,
    ``rescale``, ``disp``, ``finite_diff_rel_step`` are accepted and unused: derivatives
    are exact, and the line search is a backtracking one)."""
    n = x0.size
    lb, ub = bounds if bounds is not None else (numpy.full(n, -numpy.inf),
                                                numpy.full(n, numpy.inf))
    machine = float(numpy.finfo(float).eps)
    accuracy = accuracy if accuracy > machine else math.sqrt(machine)
    gtol = gtol if gtol >= 0 else 1e-2 * math.sqrt(accuracy)
    xtol = xtol if xtol >= 0 else math.sqrt(accuracy)
    ftol = max(ftol, 0.0)
    # (SciPy: max(1, min(50, n / 2)) preconditioned steps; a full Newton system here, at
    # most 50, since the products are exact and there is no preconditioner)
    max_cg = maxCGit if maxCGit >= 0 else max(1, min(50, n))
    max_cg = max(max_cg, 1)
    maxfun = maxfun if maxfun is not None else max(100, 10 * n)
    x = numpy.clip(x0, lb, ub)
    f, g = obj.f_and_g(x)
    if numpy.all(lb == ub):
        return _result(obj, x, f, g, 0, 5)
    status, nit = 3, 0
    while obj.nfev < maxfun:
        pg = numpy.clip(x - g, lb, ub) - x
        if numpy.max(numpy.abs(pg)) <= gtol:
            status = 0
            break
        held = ((x <= lb) & (g > 0)) | ((x >= ub) & (g < 0))
        d = _newton_step(obj, x, g, ~held, max_cg)
        if g @ d >= 0:  # not a descent direction: the projected steepest descent
            d = numpy.where(held, 0.0, -g)
        dmax = float(numpy.max(numpy.abs(d)))
        limit = stepmx if stepmx > 0 else 10.0 * max(1.0, float(numpy.max(numpy.abs(x))))
        t = min(1.0, limit / dmax) if dmax > 0 else 1.0
        for _ in range(30):
            xn = numpy.clip(x + t * d, lb, ub)
            fn = obj.f(xn)
            if fn <= f + 1e-4 * (g @ (xn - x)):
                break
            t *= 0.5
        else:
            status = 4
            break
        nit += 1
        dx = float(numpy.max(numpy.abs(xn - x)))
        df = abs(f - fn)
        x = xn
        f, g = obj.f_and_g(x)
        if call_callback(callback, x, f):
            status = 7
            break
        if df <= ftol * (1.0 + abs(f)) and ftol > 0:
            status = 1
            break
        if dx <= xtol * (1.0 + float(numpy.max(numpy.abs(x)))) and \
                numpy.max(numpy.abs(numpy.clip(x - g, lb, ub) - x)) <= math.sqrt(gtol):
            status = 2
            break
    return _result(obj, x, f, g, nit, status)


def _result(obj: Objective, x: numpy.ndarray, f: float, g: numpy.ndarray, nit: int,
            status: int) -> OptimizeResult:
    return OptimizeResult(x=x, fun=f, jac=g, nfev=obj.nfev, nit=nit, status=status,
                          message=_MESSAGES[status], success=status in (0, 1, 2))
