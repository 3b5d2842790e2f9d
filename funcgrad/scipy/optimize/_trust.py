"""``scipy.optimize.minimize`` with ``method="trust-ncg"``, ``"trust-exact"`` and
``"dogleg"``: SciPy's trust-region methods, step for step, on the host.

The driver is SciPy's (``_minimize_trust_region``): a quadratic model at ``x``, its
subproblem solved within the trust radius, the step taken when the actual reduction is more
than ``eta`` times the predicted one, the radius quartered below a ratio of 1/4 and doubled
(up to ``max_trust_radius``) above 3/4 when the step reached the boundary. ``trust-ncg``
solves the subproblem by Steihaug's truncated conjugate gradients (Hessian-vector products),
``trust-exact`` nearly exactly (Moré and Sorensen's iteration on the Lagrange multiplier with
Cholesky factorizations), ``dogleg`` along Powell's dogleg path (the Hessian must be positive definite). Derivatives
are exact: ``jac``/``hess``/``hessp`` when given, else ``funcgrad.grad`` and
forward-over-reverse products (SciPy requires them).

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.optimize import minimize, rosen
    >>> res = minimize(rosen, np.array([-1.2, 1.0]), method="trust-ncg")
    >>> res.x.round(4), res.nit, res.message
    (array([1., 1.]), 29, 'Optimization terminated successfully.')
"""

from __future__ import annotations

import math
from typing import Any

import numpy

from funcgrad.scipy.optimize._objective import STATUS_MESSAGES, Objective, call_callback
from funcgrad.scipy.optimize._scalar import OptimizeResult

__all__ = ["minimize_trust_ncg", "minimize_trust_exact", "minimize_dogleg"]

_MESSAGES = {
    0: STATUS_MESSAGES["success"],
    1: STATUS_MESSAGES["maxiter"],
    2: "A bad approximation caused failure to predict improvement.",
    3: "A linalg error occurred, such as a non-psd Hessian.",
}


def _boundaries(z: numpy.ndarray, d: numpy.ndarray, radius: float) -> tuple[float, float]:
    """The two ``t`` with ``|z + t d| = radius`` (SciPy's ``get_boundaries_intersections``)."""
    a, b, c = d @ d, 2.0 * (z @ d), z @ z - radius ** 2
    sq = math.sqrt(b * b - 4.0 * a * c)
    aux = b + math.copysign(sq, b)
    return tuple(sorted((-aux / (2.0 * a), -2.0 * c / aux)))  # type: ignore[return-value]


class _Model:
    """The quadratic model of ``obj`` at ``x``: value, gradient and Hessian products, each
    computed once when first needed (as SciPy's ``BaseQuadraticSubproblem``)."""

    def __init__(self, obj: Objective, x: numpy.ndarray, dense: bool) -> None:
        self.obj, self.x = obj, x
        self.fun, self.jac = obj.f_and_g(x)
        self.jac_mag = float(numpy.linalg.norm(self.jac))
        self._hess = None
        self.dense = dense

    def hess(self) -> numpy.ndarray:
        if self._hess is None:
            self._hess = self.obj.hess_matrix(self.x)
        return self._hess

    def hessp(self, p: numpy.ndarray) -> numpy.ndarray:
        if self.dense:
            return self.hess() @ p
        return self.obj.hvp(self.x, p)

    def __call__(self, p: numpy.ndarray) -> float:
        return self.fun + self.jac @ p + 0.5 * (p @ self.hessp(p))


def _ncg_step(m: _Model, radius: float) -> tuple[numpy.ndarray, bool]:
    """Steihaug's truncated conjugate gradients within ``radius`` (SciPy's
    ``CGSteihaugSubproblem.solve``)."""
    z = numpy.zeros_like(m.jac)
    tol = min(0.5, math.sqrt(m.jac_mag)) * m.jac_mag
    if m.jac_mag < tol:
        return z, False
    r = m.jac
    d = -r
    while True:
        bd = m.hessp(d)
        dbd = d @ bd
        if dbd <= 0:  # negative curvature: the better end of the line through the region
            ta, tb = _boundaries(z, d, radius)
            pa, pb = z + ta * d, z + tb * d
            return (pa if m(pa) < m(pb) else pb), True
        rr = r @ r
        alpha = rr / dbd
        z_next = z + alpha * d
        if numpy.linalg.norm(z_next) >= radius:
            _, tb = _boundaries(z, d, radius)
            return z + tb * d, True
        r_next = r + alpha * bd
        rr_next = r_next @ r_next
        if math.sqrt(rr_next) < tol:
            return z_next, False
        d = -r_next + (rr_next / rr) * d
        z, r = z_next, r_next


def _dogleg_step(m: _Model, radius: float) -> tuple[numpy.ndarray, bool]:
    """Powell's dogleg (SciPy's ``DoglegSubproblem.solve``): the Newton point inside the
    region, else the Cauchy point's segment towards it, cut at the boundary."""
    h = m.hess()
    c = numpy.linalg.cholesky(h)  # LinAlgError (status 3) unless positive definite
    newton = -numpy.linalg.solve(c.T, numpy.linalg.solve(c, m.jac))
    if numpy.linalg.norm(newton) < radius:
        return newton, False
    g = m.jac
    cauchy = -(g @ g) / (g @ (h @ g)) * g
    cn = numpy.linalg.norm(cauchy)
    if cn >= radius:
        return cauchy * (radius / cn), True
    _, tb = _boundaries(cauchy, newton - cauchy, radius)
    return cauchy + tb * (newton - cauchy), True


def _trust_region(obj: Objective, x0: numpy.ndarray, step: Any, dense: bool, callback: Any,
                  initial_trust_radius: float, max_trust_radius: float, eta: float,
                  gtol: float, maxiter: int | None) -> OptimizeResult:
    if not 0 <= eta < 0.25:
        raise ValueError("minimize: invalid acceptance stringency (eta must be in [0, 1/4))")
    if max_trust_radius <= 0:
        raise ValueError("minimize: the max trust radius must be positive")
    if initial_trust_radius <= 0:
        raise ValueError("minimize: the initial trust radius must be positive")
    if initial_trust_radius >= max_trust_radius:
        raise ValueError("minimize: the initial trust radius must be less than the max "
                         "trust radius")
    maxiter = 200 * x0.size if maxiter is None else maxiter
    radius = initial_trust_radius
    m = _Model(obj, x0.astype(float), dense)
    k, status = 0, 0
    while m.jac_mag >= gtol:
        try:
            p, hits = step(m, radius)
        except numpy.linalg.LinAlgError:
            status = 3
            break
        predicted = m(p)
        proposed = _Model(obj, m.x + p, dense)
        actual_reduction = m.fun - proposed.fun
        predicted_reduction = m.fun - predicted
        if predicted_reduction <= 0:
            status = 2
            break
        rho = actual_reduction / predicted_reduction
        if rho < 0.25:
            radius *= 0.25
        elif rho > 0.75 and hits:
            radius = min(2.0 * radius, max_trust_radius)
        if rho > eta:
            m = proposed
        k += 1
        if call_callback(callback, m.x, m.fun):
            status = 99
            break
        if k >= maxiter:
            status = 1
            break
    out = OptimizeResult(x=m.x, success=status == 0, status=status, fun=m.fun, jac=m.jac,
                         nfev=obj.nfev, njev=obj.njev, nhev=obj.nhev, nit=k,
                         message=(_MESSAGES[status] if status != 99
                                  else STATUS_MESSAGES["callback"]))
    if dense and m._hess is not None:
        out["hess"] = m._hess
    return out


def minimize_trust_ncg(obj: Objective, x0: numpy.ndarray, callback: Any = None,
                       initial_trust_radius: float = 1.0, max_trust_radius: float = 1000.0,
                       eta: float = 0.15, gtol: float = 1e-4, maxiter: int | None = None,
                       disp: Any = False, return_all: Any = False) -> OptimizeResult:
    """SciPy's ``trust-ncg`` on ``obj`` from ``x0`` (host arrays)."""
    return _trust_region(obj, x0, _ncg_step, obj.hess is not None and obj.hessp is None,
                         callback, initial_trust_radius, max_trust_radius, eta, gtol, maxiter)


def minimize_dogleg(obj: Objective, x0: numpy.ndarray, callback: Any = None,
                    initial_trust_radius: float = 1.0, max_trust_radius: float = 1000.0,
                    eta: float = 0.15, gtol: float = 1e-4, maxiter: int | None = None,
                    disp: Any = False, return_all: Any = False) -> OptimizeResult:
    """SciPy's ``dogleg`` on ``obj`` from ``x0`` (host arrays); the Hessian from ``hess``,
    else built from exact Hessian-vector products."""
    return _trust_region(obj, x0, _dogleg_step, True, callback, initial_trust_radius,
                         max_trust_radius, eta, gtol, maxiter)


def _cholesky_upper(a: numpy.ndarray) -> tuple[numpy.ndarray, int]:
    """LAPACK ``potrf``'s upper factor ``U`` (``a = U'U``) and ``info``: 0, or the order
    ``k`` of the first leading minor that is not positive definite (``U`` computed up to
    it), as ``trust-exact`` needs."""
    n = a.shape[0]
    u = numpy.zeros_like(a)
    for j in range(n):
        d = a[j, j] - u[:j, j] @ u[:j, j]
        if not d > 0:
            return u, j + 1
        u[j, j] = math.sqrt(d)
        u[j, j + 1:] = (a[j, j + 1:] - u[:j, j] @ u[:j, j + 1:]) / u[j, j]
    return u, 0


def _smallest_singular(u: numpy.ndarray) -> tuple[float, numpy.ndarray]:
    """Cline, Moler, Stewart and Wilkinson's estimate of the smallest singular value of the
    upper triangular ``u`` and its vector (SciPy's ``estimate_smallest_singular_value``)."""
    n = u.shape[0]
    p = numpy.zeros(n)
    w = numpy.empty(n)
    ut = u.T
    for k in range(n):
        wp = (1 - p[k]) / ut[k, k]
        wm = (-1 - p[k]) / ut[k, k]
        pp = p[k + 1:] + ut[k + 1:, k] * wp
        pm = p[k + 1:] + ut[k + 1:, k] * wm
        if abs(wp) + numpy.abs(pp).sum() >= abs(wm) + numpy.abs(pm).sum():
            w[k], p[k + 1:] = wp, pp
        else:
            w[k], p[k + 1:] = wm, pm
    v = _solve_upper(u, w)
    vn = numpy.linalg.norm(v)
    return float(numpy.linalg.norm(w) / vn), v / vn


def _solve_upper(u: numpy.ndarray, b: numpy.ndarray) -> numpy.ndarray:
    x = numpy.zeros_like(b)
    for i in range(b.size - 1, -1, -1):
        x[i] = (b[i] - u[i, i + 1:] @ x[i + 1:]) / u[i, i]
    return x


def _solve_lower_t(u: numpy.ndarray, b: numpy.ndarray) -> numpy.ndarray:
    """``u' x = b`` for upper triangular ``u``."""
    x = numpy.zeros_like(b)
    for i in range(b.size):
        x[i] = (b[i] - u[:i, i] @ x[:i]) / u[i, i]
    return x


class _ExactState:
    """What SciPy's ``IterativeSubproblem`` keeps between solves of one model (the
    trust radius shrinks on rejected steps): the previous radius and lower bound."""

    def __init__(self) -> None:
        self.model: _Model | None = None
        self.previous_radius = -1.0
        self.lambda_lb = 0.0


def _exact_step(state: _ExactState, m: _Model, radius: float, k_easy: float = 0.1,
                k_hard: float = 0.2) -> tuple[numpy.ndarray, bool]:
    """Moré and Sorensen's nearly exact subproblem solution (SciPy's
    ``IterativeSubproblem.solve``, step for step)."""
    if state.model is not m:
        state.model, state.previous_radius, state.lambda_lb = m, -1.0, 0.0
    h = m.hess()
    n = h.shape[0]
    diag = numpy.diag(h)
    row = numpy.abs(h).sum(axis=1)
    g_lb = float(numpy.min(diag + numpy.abs(diag) - row))
    g_ub = float(numpy.max(diag - numpy.abs(diag) + row))
    h_inf = float(numpy.linalg.norm(h, numpy.inf))
    h_fro = float(numpy.linalg.norm(h, "fro"))
    close_to_zero = n * float(numpy.finfo(float).eps) * h_inf
    update = 0.01
    lambda_ub = max(0.0, m.jac_mag / radius + min(-g_lb, h_fro, h_inf))
    lambda_lb = max(0.0, -float(numpy.min(diag)),
                    m.jac_mag / radius - min(g_ub, h_fro, h_inf))
    if radius < state.previous_radius:
        lambda_lb = max(state.lambda_lb, lambda_lb)
    lam = 0.0 if lambda_lb == 0 else max(math.sqrt(lambda_lb * lambda_ub),
                                         lambda_lb + update * (lambda_ub - lambda_lb))
    hits = True
    factored = False
    eye = numpy.eye(n)
    while True:
        if factored:
            factored = False
        else:
            hl = h + lam * eye
            u, info = _cholesky_upper(hl)
        if info == 0 and m.jac_mag > close_to_zero:
            p = _solve_upper(u, _solve_lower_t(u, -m.jac))
            p_norm = float(numpy.linalg.norm(p))
            if p_norm <= radius and lam == 0:
                hits = False
                break
            w = _solve_lower_t(u, p)
            w_norm = float(numpy.linalg.norm(w))
            lam_new = lam + (p_norm / w_norm) ** 2 * (p_norm - radius) / radius
            if p_norm < radius:
                s_min, z_min = _smallest_singular(u)
                ta, tb = _boundaries(p, z_min, radius)
                step = min((ta, tb), key=abs)
                quad = p @ (hl @ p)
                if step ** 2 * s_min ** 2 / (quad + lam * radius ** 2) <= k_hard:
                    p = p + step * z_min
                    break
                lambda_ub = lam
                lambda_lb = max(lambda_lb, lam - s_min ** 2)
                hl = h + lam_new * eye
                u2, info2 = _cholesky_upper(hl)
                if info2 == 0:
                    lam, u, info, factored = lam_new, u2, 0, True
                else:
                    lambda_lb = max(lambda_lb, lam_new)
                    lam = max(math.sqrt(lambda_lb * lambda_ub),
                              lambda_lb + update * (lambda_ub - lambda_lb))
            else:
                if abs(p_norm - radius) / radius <= k_easy:
                    break
                lambda_lb = lam
                lam = lam_new
        elif info == 0:
            if lam == 0:
                p = numpy.zeros(n)
                hits = False
                break
            s_min, z_min = _smallest_singular(u)
            if radius ** 2 * s_min ** 2 <= k_hard * lam * radius ** 2:
                p = radius * z_min
                break
            lambda_ub = lam
            lambda_lb = max(lambda_lb, lam - s_min ** 2)
            lam = max(math.sqrt(lambda_lb * lambda_ub),
                      lambda_lb + update * (lambda_ub - lambda_lb))
        else:
            # The leading minor of order info is singular: a lower bound on lambda from it.
            k = info
            delta = float(u[:k - 1, k - 1] @ u[:k - 1, k - 1] - hl[k - 1, k - 1])
            v = numpy.zeros(n)
            v[k - 1] = 1.0
            if k != 1:
                v[:k - 1] = _solve_upper(u[:k - 1, :k - 1], -u[:k - 1, k - 1])
            lambda_lb = max(lambda_lb, lam + delta / float(v @ v))
            lam = max(math.sqrt(lambda_lb * lambda_ub),
                      lambda_lb + update * (lambda_ub - lambda_lb))
    state.lambda_lb, state.previous_radius = lambda_lb, radius
    return p, hits


def minimize_trust_exact(obj: Objective, x0: numpy.ndarray, callback: Any = None,
                         initial_trust_radius: float = 1.0, max_trust_radius: float = 1000.0,
                         eta: float = 0.15, gtol: float = 1e-4, maxiter: int | None = None,
                         disp: Any = False, return_all: Any = False) -> OptimizeResult:
    """SciPy's ``trust-exact`` on ``obj`` from ``x0`` (host arrays); the Hessian from
    ``hess``, else built from exact Hessian-vector products."""
    state = _ExactState()
    return _trust_region(obj, x0, lambda m, r: _exact_step(state, m, r), True, callback,
                         initial_trust_radius, max_trust_radius, eta, gtol, maxiter)
