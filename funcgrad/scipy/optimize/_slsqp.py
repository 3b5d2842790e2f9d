"""``scipy.optimize.minimize(method="SLSQP")``: sequential quadratic programming with equality
and inequality constraints and bounds, on the host.

Not Kraft's Fortran, but the same method: each iteration solves the quadratic model
``min 1/2 d'Bd + g'd`` subject to the constraints linearised at ``x`` (and the bounds) --
here with Goldfarb and Idnani's dual active-set method, which needs no feasible start and
detects an inconsistent model -- then a line search on the L1 merit function
``f + sum rho_i |violation_i|`` (Powell's penalties from the multipliers), and Powell's damped
BFGS update of ``B`` with the change of the Lagrangian's gradient. It stops, as SciPy, when
the change of ``f`` (or the step) is below ``ftol`` and the constraints are satisfied to
``ftol``. Gradients and constraint Jacobians are exact (``funcgrad.grad``/``jacfwd``) unless
``jac`` callables are given. Minima agree with SciPy's to the tolerance; iteration counts
differ.

Example:
    >>> import numpy as np, funcgrad.numpy as fnp
    >>> from funcgrad.scipy.optimize import minimize
    >>> cons = [{"type": "eq", "fun": lambda x: x[0] + x[1] - 1.0}]
    >>> res = minimize(lambda x: fnp.sum(x ** 2), np.array([2.0, 0.0]), method="SLSQP",
    ...                constraints=cons)
    >>> res.x.round(6), bool(res.success)
    (array([0.5, 0.5]), True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.api import jacfwd
from funcgrad.api_devices import device_get
from funcgrad.backend import device_put
from funcgrad.scipy.optimize._objective import Objective, call_callback
from funcgrad.scipy.optimize._scalar import OptimizeResult

__all__ = ["minimize_slsqp", "host_constraints", "LinearConstraint", "NonlinearConstraint"]

_MESSAGES = {
    0: "Optimization terminated successfully",
    4: "Inequality constraints incompatible",
    8: "Positive directional derivative for linesearch",
    9: "Iteration limit reached",
}


class _Constraint:
    """One constraint dict (``type``, ``fun``, optional ``jac`` and ``args``) evaluated at
    host points on ``device``: values as a float64 vector, the Jacobian as a matrix."""

    def __init__(self, spec: Any, device: str) -> None:
        if not isinstance(spec, dict):
            raise TypeError("minimize: constraints must be dicts with 'type' and 'fun' (and "
                            f"optional 'jac', 'args'), got {type(spec).__name__}")
        kind = spec.get("type")
        if not isinstance(kind, str) or kind.lower() not in ("eq", "ineq"):
            raise ValueError(f"minimize: constraint type must be 'eq' or 'ineq', got {kind!r}")
        if not callable(spec.get("fun")):
            raise ValueError("minimize: a constraint needs a callable 'fun'")
        unknown = set(spec) - {"type", "fun", "jac", "args"}
        if unknown:
            raise ValueError(f"minimize: unknown constraint keys {sorted(unknown)}")
        self.eq = kind.lower() == "eq"
        self.fun: Callable[..., Any] = spec["fun"]
        self.jac = spec.get("jac")
        self.args = tuple(spec.get("args", ()))
        self.device = device

    def _dev(self, x: numpy.ndarray) -> Any:
        return device_put(x, self.device)

    def value(self, x: numpy.ndarray) -> numpy.ndarray:
        return numpy.atleast_1d(numpy.asarray(device_get(self.fun(self._dev(x), *self.args)),
                                              dtype=float)).reshape(-1)

    def jacobian(self, x: numpy.ndarray, m: int) -> numpy.ndarray:
        if callable(self.jac):
            j = self.jac(self._dev(x), *self.args)
        else:
            j = jacfwd(lambda z: fnp.reshape(fnp.asarray(self.fun(z, *self.args)), (-1,)))(
                self._dev(x))
        return numpy.asarray(device_get(j), dtype=float).reshape(m, x.size)


class NonlinearConstraint:
    """``lb <= fun(x) <= ub``, as ``scipy.optimize.NonlinearConstraint`` (``lb == ub``: an
    equality; ``-inf``/``inf``: no bound). ``jac`` a callable, else exact
    (``funcgrad.jacfwd``; SciPy's ``"2-point"`` and the other finite-difference names are
    accepted); ``hess``, ``keep_feasible``, ``finite_diff_*`` are accepted and unused.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.optimize import NonlinearConstraint, minimize
        >>> con = NonlinearConstraint(lambda x: x[0] * x[1], 1.0, np.inf)
        >>> minimize(lambda x: x[0] ** 2 + x[1] ** 2, np.array([2.0, 2.0]),
        ...          constraints=con).x.round(5)
        array([1., 1.])
    """

    def __init__(self, fun: Callable[..., Any], lb: Any, ub: Any, jac: Any = "2-point",
                 hess: Any = None, keep_feasible: Any = False,
                 finite_diff_rel_step: Any = None, finite_diff_jac_sparsity: Any = None
                 ) -> None:
        self.fun, self.jac, self.hess = fun, jac, hess
        self.lb = numpy.asarray(device_get(lb), dtype=float)
        self.ub = numpy.asarray(device_get(ub), dtype=float)
        self.keep_feasible = keep_feasible


class LinearConstraint:
    """``lb <= A x <= ub``, as ``scipy.optimize.LinearConstraint``.

    Example:
        >>> from funcgrad.scipy.optimize import LinearConstraint
        >>> LinearConstraint([[1.0, 1.0]], 1.0, 1.0).A
        array([[1., 1.]])
    """

    def __init__(self, A: Any, lb: Any = -numpy.inf, ub: Any = numpy.inf,  # noqa: N803
                 keep_feasible: Any = False) -> None:
        self.A = numpy.atleast_2d(numpy.asarray(device_get(A), dtype=float))
        self.lb = numpy.asarray(device_get(lb), dtype=float)
        self.ub = numpy.asarray(device_get(ub), dtype=float)
        self.keep_feasible = keep_feasible


def _as_dicts(con: Any, x0: numpy.ndarray, device: str) -> list[dict[str, Any]]:
    """A ``LinearConstraint``/``NonlinearConstraint`` as SciPy's SLSQP sees it
    (``new_constraint_to_old``): the rows with ``lb == ub`` an equality ``fun - lb``, then one
    inequality of the rows bounded above (``ub - fun``) followed by those bounded below
    (``fun - lb``)."""
    if isinstance(con, LinearConstraint):
        a = con.A

        def fun(x: Any) -> Any:
            return fnp.asarray(device_put(a, device)) @ x

        jac: Any = lambda x: a  # noqa: E731
    else:
        fun = con.fun
        jac = con.jac if callable(con.jac) else None
    m = numpy.atleast_1d(numpy.asarray(device_get(fun(device_put(x0, device))))).size
    lb, ub = (numpy.broadcast_to(v, (m,)) for v in (con.lb, con.ub))
    eq = lb == ub
    above = numpy.logical_xor(ub != numpy.inf, eq)
    below = numpy.logical_xor(lb != -numpy.inf, eq)

    def vec(x: Any) -> Any:
        return fnp.reshape(fnp.asarray(fun(x)), (-1,))

    def jmat(x: Any) -> numpy.ndarray:
        if jac is None:
            return numpy.asarray(device_get(jacfwd(vec)(x)), dtype=float).reshape(m, -1)
        return numpy.asarray(device_get(jac(x)), dtype=float).reshape(m, -1)

    out = []
    if eq.any():
        rows, shift = numpy.flatnonzero(eq), lb[eq]
        # (funcgrad's operations: the host bounds meet values on x's device)
        out.append({"type": "eq", "fun": lambda x: fnp.subtract(vec(x)[rows], shift),
                    "jac": lambda x: jmat(x)[rows]})
    if above.any() or below.any():
        up, lo = numpy.flatnonzero(above), numpy.flatnonzero(below)
        out.append({"type": "ineq",
                    "fun": lambda x: fnp.concatenate([fnp.subtract(ub[up], vec(x)[up]),
                                                      fnp.subtract(vec(x)[lo], lb[lo])]),
                    "jac": lambda x: numpy.concatenate([-jmat(x)[up], jmat(x)[lo]])})
    return out


def host_constraints(constraints: Any, device: str, x0: numpy.ndarray) -> list[_Constraint]:
    """SciPy's ``constraints`` (a dict, a ``LinearConstraint``/``NonlinearConstraint``, or a
    sequence of them) as evaluators."""
    if isinstance(constraints, dict | LinearConstraint | NonlinearConstraint):
        constraints = [constraints]
    specs: list[Any] = []
    for c in constraints:
        if isinstance(c, LinearConstraint | NonlinearConstraint):
            specs.extend(_as_dicts(c, x0, device))
        else:
            specs.append(c)
    return [_Constraint(c, device) for c in specs]


def _qp(G: numpy.ndarray, a: numpy.ndarray, C: numpy.ndarray, b: numpy.ndarray, meq: int
        ) -> tuple[numpy.ndarray, numpy.ndarray] | None:
    """``min 1/2 x'Gx + a'x`` with ``C[:meq] x = b[:meq]`` and ``C[meq:] x >= b[meq:]``
    (``G`` positive definite) by Goldfarb and Idnani's dual method; ``(x, u)`` with the
    multipliers ``u`` (``G x + a = C' u``, ``u >= 0`` on the inequalities), or None if the
    constraints are inconsistent."""
    n, m = G.shape[0], C.shape[0]
    Ginv = numpy.linalg.inv(G)
    x = -Ginv @ a
    active: list[int] = []
    u = numpy.zeros(m)
    sign = numpy.ones(m)  # an equality enters with the sign that makes it violated
    scale = 1.0 + numpy.abs(b) + numpy.linalg.norm(C, axis=1) * (1.0 + numpy.abs(x).max())
    tol = 1e-12
    for _ in range(10 * (m + n) + 10):
        s = C @ x - b
        viol = numpy.where(numpy.arange(m) < meq, -numpy.abs(s), s) / scale
        viol[active] = 0.0
        p = int(numpy.argmin(viol)) if m else -1
        if m == 0 or viol[p] >= -1e-13:
            break
        sign[p] = -1.0 if p < meq and s[p] > 0 else 1.0
        u_p = 0.0
        for _ in range(m + n + 1):
            npl = sign[p] * C[p]
            if active:
                N = (sign[active, None] * C[active]).T
                M = N.T @ Ginv @ N
                Nstar = numpy.linalg.lstsq(M, N.T @ Ginv, rcond=None)[0]
                H = Ginv - Ginv @ N @ Nstar
                z, r = H @ npl, Nstar @ npl
            else:
                z, r = Ginv @ npl, numpy.zeros(0)
            t1, drop = numpy.inf, -1
            for k, j in enumerate(active):
                if j >= meq and r[k] > tol and u[j] / r[k] < t1:
                    t1, drop = u[j] / r[k], k
            zn = z @ npl
            slack = sign[p] * (C[p] @ x - b[p])
            t2 = -slack / zn if abs(zn) > tol * (1.0 + numpy.abs(npl).max()) else numpy.inf
            if not numpy.isfinite(t1) and not numpy.isfinite(t2):
                return None
            t = min(t1, t2)
            x = x + t * z if numpy.isfinite(t2) else x
            for k, j in enumerate(active):
                u[j] -= t * r[k]
            u_p += t
            if t == t2:
                u[p] = u_p
                active.append(p)
                break
            u[active[drop]] = 0.0
            del active[drop]
    lam = u * sign
    return x, lam


def minimize_slsqp(obj: Objective, x0: numpy.ndarray, bounds: Any = None,
                   constraints: list[_Constraint] | None = None, callback: Any = None,
                   maxiter: int = 100, ftol: float = 1e-6, eps: Any = None, disp: Any = False,
                   iprint: Any = None, finite_diff_rel_step: Any = None, workers: Any = None
                   ) -> OptimizeResult:
    """SLSQP on ``obj`` from ``x0`` (host arrays); SciPy's options (``eps``,
    ``finite_diff_rel_step``, ``disp``, ``iprint``, ``workers`` are accepted and unused:
    derivatives are exact)."""
    constraints = constraints or []
    n = x0.size
    lb, ub = bounds if bounds is not None else (numpy.full(n, -numpy.inf),
                                                numpy.full(n, numpy.inf))
    x = numpy.clip(x0, lb, ub)

    def evaluate(x: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray]:
        vals = [c.value(x) for c in constraints]
        return (numpy.concatenate([v for v, c in zip(vals, constraints) if c.eq] or
                                  [numpy.zeros(0)]),
                numpy.concatenate([v for v, c in zip(vals, constraints) if not c.eq] or
                                  [numpy.zeros(0)]))

    def jacobians(x: numpy.ndarray, ce: numpy.ndarray, ci: numpy.ndarray
                  ) -> tuple[numpy.ndarray, numpy.ndarray]:
        je = [c.jacobian(x, c.value(x).size) for c in constraints if c.eq]
        ji = [c.jacobian(x, c.value(x).size) for c in constraints if not c.eq]
        return (numpy.vstack(je) if je else numpy.zeros((0, n)),
                numpy.vstack(ji) if ji else numpy.zeros((0, n)))

    def violation(ce: numpy.ndarray, ci: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray]:
        return numpy.abs(ce), numpy.maximum(0.0, -ci)

    f, g = obj.f_and_g(x)
    ce, ci = evaluate(x)
    Je, Ji = jacobians(x, ce, ci)
    meq, mi = ce.size, ci.size
    B = numpy.eye(n)
    rho = numpy.zeros(meq + mi)
    lam = numpy.zeros(meq + mi)
    lo_fin, hi_fin = numpy.isfinite(lb), numpy.isfinite(ub)
    eye = numpy.eye(n)
    status, nit = 9, 0
    while nit < maxiter:
        nit += 1
        # The quadratic model: linearised constraints, and the bounds as rows of +-I.
        C = numpy.vstack([Je, Ji, eye[lo_fin], -eye[hi_fin]])
        b = numpy.concatenate([-ce, -ci, (lb - x)[lo_fin], -(ub - x)[hi_fin]])
        sol = _qp(B, g, C, b, meq)
        if sol is None:
            status = 4
            break
        d, u = sol
        lam = u[:meq + mi]
        rho = numpy.maximum(numpy.abs(lam), 0.5 * (rho + numpy.abs(lam)))
        ve, vi = violation(ce, ci)
        h = rho[:meq] @ ve + rho[meq:] @ vi
        merit0 = f + h
        slope = g @ d - h
        if slope > 0 and numpy.linalg.norm(d) > ftol:
            status = 8
            break
        alpha = 1.0
        for _ in range(10):
            xn = numpy.clip(x + alpha * d, lb, ub)
            fn = obj.f(xn)
            cen, cin = evaluate(xn)
            ven, vin = violation(cen, cin)
            merit = fn + rho[:meq] @ ven + rho[meq:] @ vin
            if merit <= merit0 + 0.1 * alpha * slope:
                break
            # The minimiser of the quadratic through the merit's value and slope at 0 and its
            # value here, at least a tenth of the step (Kraft's rule).
            h3, h1 = alpha * slope, merit - merit0
            alpha *= max(h3 / (2.0 * (h3 - h1)), 0.1) if h3 - h1 < 0 else 0.1
        step = xn - x
        f_old = f
        x_old, g_old, Je_old, Ji_old = x, g, Je, Ji
        x, ce, ci = xn, cen, cin
        f, g = obj.f_and_g(x)
        Je, Ji = jacobians(x, ce, ci)
        ve, vi = violation(ce, ci)
        if call_callback(callback, x, f):
            status = 0
            break
        feasible = ve.sum() + vi.sum() < ftol
        if (abs(f - f_old) < ftol or numpy.linalg.norm(step) < ftol) and feasible:
            status = 0
            break
        # Powell's damped BFGS update with the change of the Lagrangian's gradient.
        lag_new = g - numpy.concatenate([Je, Ji]).T @ lam
        lag_old = g_old - numpy.concatenate([Je_old, Ji_old]).T @ lam
        y = lag_new - lag_old
        s = x - x_old
        Bs = B @ s
        sBs = s @ Bs
        if sBs <= 0:
            continue
        sy = s @ y
        if sy < 0.2 * sBs:
            theta = 0.8 * sBs / (sBs - sy)
            y = theta * y + (1.0 - theta) * Bs
            sy = s @ y
        B = B + numpy.outer(y, y) / sy - numpy.outer(Bs, Bs) / sBs
    return OptimizeResult(x=x, fun=f, jac=g, nit=nit, nfev=obj.nfev, njev=obj.njev,
                          status=status, message=_MESSAGES[status], success=status == 0,
                          multipliers=lam)
