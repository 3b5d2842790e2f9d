"""``scipy.optimize.least_squares`` (with ``bounds`` and the robust ``loss`` functions),
``root`` (``"hybr"``, ``"lm"``) and ``fsolve``: a damped Gauss-Newton (Levenberg-Marquardt)
iteration on the host with the exact Jacobian from ``funcgrad.jacfwd`` (or the user's
``jac``).

Not SciPy's MINPACK / trust-region-reflective code: bounds are handled by projecting each
step onto the box and freezing the variables held at a bound by the gradient; the robust
losses rescale residuals and Jacobian as SciPy does (``rho'`` and ``rho''``). The stopping
tests and ``status`` codes are SciPy's (``ftol``, ``xtol``, ``gtol``), so solutions agree
with SciPy's to those tolerances; iteration counts differ.

Example:
    >>> import numpy as np, funcgrad.numpy as fnp
    >>> from funcgrad.scipy.optimize import least_squares
    >>> res = least_squares(lambda p: fnp.stack([p[0] - 1.0, 10.0 * (p[1] - p[0] ** 2)]),
    ...                     np.array([-1.2, 1.0]))
    >>> res.x.round(6), bool(res.success)
    (array([1., 1.]), True)
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.api import jacfwd
from funcgrad.api_devices import device_get
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device, is_array
from funcgrad.core import Tracer
from funcgrad.scipy.optimize._objective import Bounds
from funcgrad.scipy.optimize._scalar import OptimizeResult

__all__ = ["least_squares", "root", "fsolve", "solve_least_squares"]

_EPS = numpy.finfo(float).eps
_MESSAGES = {
    -1: "Improper input parameters status returned from `leastsq`",
    0: "The maximum number of function evaluations is exceeded.",
    1: "`gtol` termination condition is satisfied.",
    2: "`ftol` termination condition is satisfied.",
    3: "`xtol` termination condition is satisfied.",
    4: "Both `ftol` and `xtol` termination conditions are satisfied.",
}


def _rho(loss: Any, z: numpy.ndarray) -> numpy.ndarray:
    """``(rho, rho', rho'')`` of SciPy's named losses (or a callable's) at ``z = (f/s)**2``."""
    out = numpy.empty((3, z.size))
    if loss == "linear":
        out[0], out[1], out[2] = z, 1.0, 0.0
    elif loss == "soft_l1":
        t = 1 + z
        out[0], out[1], out[2] = 2 * (t ** 0.5 - 1), t ** -0.5, -0.5 * t ** -1.5
    elif loss == "huber":
        mask = z <= 1
        out[0] = numpy.where(mask, z, 2 * numpy.sqrt(numpy.maximum(z, 1)) - 1)
        out[1] = numpy.where(mask, 1.0, numpy.maximum(z, 1) ** -0.5)
        out[2] = numpy.where(mask, 0.0, -0.5 * numpy.maximum(z, 1) ** -1.5)
    elif loss == "cauchy":
        t = 1 + z
        out[0], out[1], out[2] = numpy.log1p(z), 1 / t, -1 / t ** 2
    elif loss == "arctan":
        t = 1 + z ** 2
        out[0], out[1], out[2] = numpy.arctan(z), 1 / t, -2 * z / t ** 2
    else:
        out[:] = numpy.asarray(device_get(loss(z)), dtype=float).reshape(3, -1)
    return out


_LOSSES = ("linear", "soft_l1", "huber", "cauchy", "arctan")


def _host(name: str, v: Any) -> numpy.ndarray:
    if isinstance(v, Tracer):
        raise TypeError(f"{name}: the iterations need concrete values (they branch on them, "
                        "on the host); call it outside jit/vmap/grad")
    return numpy.asarray(device_get(v), dtype=float)


def solve_least_squares(name: str, residual: Callable[[numpy.ndarray], numpy.ndarray],
                        jacobian: Callable[[numpy.ndarray], numpy.ndarray], x0: numpy.ndarray,
                        lb: numpy.ndarray, ub: numpy.ndarray, loss: Any = "linear",
                        f_scale: float = 1.0, ftol: float = 1e-8, xtol: float = 1e-8,
                        gtol: float = 1e-8, max_nfev: int | None = None
                        ) -> OptimizeResult:
    """Minimise ``0.5 sum rho((f/s)**2) s**2`` over the box ``[lb, ub]`` from ``x0``."""
    n = x0.size
    max_nfev = 100 * n if max_nfev is None else int(max_nfev)
    x = numpy.clip(x0, lb, ub)
    f = residual(x)
    nfev, njev = 1, 0
    robust = loss != "linear"

    def cost_of(f: numpy.ndarray) -> float:
        if not robust:
            return 0.5 * float(f @ f)
        return 0.5 * f_scale ** 2 * float(_rho(loss, (f / f_scale) ** 2)[0].sum())

    def scaled(f: numpy.ndarray, jm: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray]:
        if not robust:
            return f, jm
        rho = _rho(loss, (f / f_scale) ** 2)
        rho2 = rho[2] / f_scale ** 2
        js = numpy.maximum(rho[1] + 2 * rho2 * f ** 2, _EPS) ** 0.5
        return f * rho[1] / js, jm * js[:, None]

    cost = cost_of(f)
    status = None
    lam = 1e-3
    jm = numpy.zeros((f.size, n))
    g = numpy.zeros(n)
    while status is None:
        jm = jacobian(x)
        njev += 1
        fs, js = scaled(f, jm)
        g = js.T @ fs
        at_lb, at_ub = x <= lb, x >= ub
        # the variables a bound holds: at it, with the gradient pushing outward
        held = (at_lb & (g > 0)) | (at_ub & (g < 0))
        g_free = numpy.where(held, 0.0, g)
        if numpy.max(numpy.abs(g_free), initial=0.0) < gtol:
            status = 1
            break
        a = js.T @ js
        free = ~held
        diag = numpy.maximum(numpy.diag(a), 1e-300)
        accepted = False
        while nfev < max_nfev:
            step = numpy.zeros(n)
            sub = a[numpy.ix_(free, free)] + lam * numpy.diag(diag[free])
            try:
                step[free] = numpy.linalg.solve(sub, -g_free[free])
            except numpy.linalg.LinAlgError:
                lam *= 10.0
                continue
            x_new = numpy.clip(x + step, lb, ub)
            with numpy.errstate(over="ignore", invalid="ignore"):  # a trial may overflow:
                f_new = residual(x_new)                            # it is then rejected
                cost_new = cost_of(f_new)
            nfev += 1
            if numpy.isfinite(cost_new) and cost_new < cost:
                accepted = True
                break
            lam *= 10.0
            if lam > 1e16:
                break
        if not accepted:
            status = 0 if nfev >= max_nfev else 2
            break
        dx = x_new - x
        reduction = cost - cost_new
        small_f = reduction < ftol * cost
        small_x = numpy.linalg.norm(dx) < xtol * (xtol + numpy.linalg.norm(x))
        x, f, cost = x_new, f_new, cost_new
        lam = max(lam / 10.0, 1e-12)
        if small_f and small_x:
            status = 4
        elif small_f:
            status = 2
        elif small_x:
            status = 3
        elif nfev >= max_nfev:
            status = 0
    jm = jacobian(x)
    fs, js = scaled(f, jm)
    g = js.T @ fs
    active = numpy.where(x <= lb, -1, numpy.where(x >= ub, 1, 0))
    return OptimizeResult(x=x, cost=cost, fun=f, jac=jm, grad=g,
                          optimality=float(numpy.max(numpy.abs(numpy.where(
                              active != 0, 0.0, g)), initial=0.0)),
                          active_mask=active, nfev=nfev, njev=njev, status=status,
                          message=_MESSAGES[status], success=status > 0)


def _bounds(name: str, bounds: Any, n: int) -> tuple[numpy.ndarray, numpy.ndarray]:
    if isinstance(bounds, Bounds):
        lb, ub = bounds.lb, bounds.ub
    else:
        if len(bounds) != 2:
            raise ValueError(f"{name}: `bounds` must contain 2 elements.")
        lb, ub = (numpy.asarray(device_get(b), dtype=float) for b in bounds)
    lb, ub = numpy.broadcast_to(lb, (n,)).copy(), numpy.broadcast_to(ub, (n,)).copy()
    if numpy.any(lb >= ub):
        raise ValueError(f"{name}: each lower bound must be strictly less than each upper "
                         "bound.")
    return lb, ub


def least_squares(fun: Callable[..., Any], x0: Any, jac: Any = "2-point",
                  bounds: Any = (-numpy.inf, numpy.inf), method: str = "trf",
                  ftol: float | None = 1e-8, xtol: float | None = 1e-8,
                  gtol: float | None = 1e-8, x_scale: Any = None, loss: Any = "linear",
                  f_scale: float = 1.0, diff_step: Any = None, tr_solver: Any = None,
                  tr_options: Any = None, jac_sparsity: Any = None, max_nfev: int | None = None,
                  verbose: int = 0, args: tuple = (), kwargs: Any = None, *,
                  callback: Any = None, workers: Any = None) -> OptimizeResult:
    """Minimise ``0.5 sum rho(fun(x)**2)`` over ``lb <= x <= ub``, as
    ``scipy.optimize.least_squares``: ``method`` ``"trf"``, ``"dogbox"`` or ``"lm"`` (all run
    funcgrad's bounded Levenberg-Marquardt; ``"lm"`` refuses bounds, as SciPy), ``loss``
    ``"linear"``, ``"soft_l1"``, ``"huber"``, ``"cauchy"``, ``"arctan"`` or a callable
    (``rho`` and its two derivatives), ``f_scale``; ``jac`` a callable, else the exact
    ``funcgrad.jacfwd`` Jacobian (SciPy's finite-difference names are accepted). Returns
    SciPy's ``OptimizeResult`` (``x``, ``cost``, ``fun``, ``jac``, ``grad``, ``optimality``,
    ``active_mask``, ``nfev``, ``njev``, ``status``, ``message``, ``success``).
    ``x_scale``, ``diff_step``, ``tr_solver``, ``tr_options``, ``jac_sparsity``,
    ``verbose``, ``callback`` and ``workers`` are accepted and have no effect.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> from funcgrad.scipy.optimize import least_squares
        >>> res = least_squares(lambda p: p - np.array([3.0, -1.0]), np.zeros(2),
        ...                     bounds=([0.0, 0.0], [2.0, 5.0]))
        >>> res.x, res.active_mask
        (array([2., 0.]), array([ 1, -1]))
    """
    if method not in ("trf", "dogbox", "lm"):
        raise ValueError("`method` must be 'trf', 'dogbox' or 'lm'.")
    if not (loss in _LOSSES or callable(loss)):
        raise ValueError(f"`loss` must be one of {_LOSSES} or a callable.")
    if method == "lm" and loss != "linear":
        raise ValueError("method='lm' supports only 'linear' loss function.")
    kwargs = dict(kwargs or {})
    x_host = numpy.atleast_1d(_host("least_squares", x0))
    if x_host.ndim > 1:
        raise ValueError("`x0` must have at most 1 dimension.")
    n = x_host.size
    lb, ub = _bounds("least_squares", bounds, n)
    if method == "lm" and (numpy.any(numpy.isfinite(lb)) or numpy.any(numpy.isfinite(ub))):
        raise ValueError("Method 'lm' doesn't support bounds.")
    if numpy.any((x_host < lb) | (x_host > ub)):
        raise ValueError("`x0` is infeasible.")
    device = (get_aval(x0).device or get_default_device()) if is_array(x0) and not \
        isinstance(x0, numpy.ndarray) else get_default_device()

    def on_device(x: numpy.ndarray) -> Any:
        return device_put(x, device)

    def model(x: Any) -> Any:
        return fnp.reshape(fnp.asarray(fun(x, *args, **kwargs)), (-1,))

    def residual(x: numpy.ndarray) -> numpy.ndarray:
        return _host("least_squares", model(on_device(x)))

    if callable(jac):
        def jacobian(x: numpy.ndarray) -> numpy.ndarray:
            return numpy.atleast_2d(_host("least_squares", jac(on_device(x), *args, **kwargs)))
    else:
        jf = jacfwd(model)

        def jacobian(x: numpy.ndarray) -> numpy.ndarray:
            return _host("least_squares", jf(on_device(x))).reshape(-1, n)

    tols = [0.0 if t is None else float(t) for t in (ftol, xtol, gtol)]
    if all(t < _EPS for t in tols) and method != "lm":
        raise ValueError("At least one of the tolerances must be higher than machine epsilon.")
    res = solve_least_squares("least_squares", residual, jacobian, x_host, lb, ub, loss,
                              float(f_scale), *tols, max_nfev)
    res["x"] = on_device(res["x"])
    return res


def root(fun: Callable[..., Any], x0: Any, args: tuple = (), method: str = "hybr",
         jac: Any = None, tol: float | None = None, callback: Any = None,
         options: Any = None) -> OptimizeResult:
    """A root of the vector function ``fun(x, *args)``, as ``scipy.optimize.root``:
    ``method`` ``"hybr"`` (default) or ``"lm"``, both funcgrad's Levenberg-Marquardt on
    ``|fun|^2`` with the exact Jacobian (``jac=True``: ``fun`` returns ``(f, J)``; a
    callable). ``options``: ``xtol`` (``tol``), ``ftol``, ``maxfev``. Returns SciPy's
    ``OptimizeResult`` (``x``, ``fun``, ``jac``, ``success``, ``status``, ``message``,
    ``nfev``); success means ``|fun|`` went to 0 (not a local least-squares minimum).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> from funcgrad.scipy.optimize import root
        >>> sol = root(lambda x: fnp.stack([x[0] + 0.5 * (x[0] - x[1]) ** 3 - 1.0,
        ...                                 0.5 * (x[1] - x[0]) ** 3 + x[1]]), np.zeros(2))
        >>> sol.x.round(6), bool(sol.success)
        (array([0.841164, 0.158836]), True)
    """
    if method.lower() not in ("hybr", "lm"):
        raise ValueError(f"root: method {method!r} is not supported (funcgrad provides 'hybr' "
                         "and 'lm')")
    opts = dict(options or {})
    xtol = float(opts.pop("xtol", 1.49012e-08 if tol is None else tol))
    ftol = float(opts.pop("ftol", 1.49012e-08))
    maxfev = opts.pop("maxfev", None)
    opts.pop("col_deriv", None)
    opts.pop("factor", None)
    opts.pop("diag", None)
    opts.pop("band", None)
    opts.pop("eps", None)
    opts.pop("epsfcn", None)
    opts.pop("gtol", None)
    if opts:
        raise TypeError(f"root: unknown options {sorted(opts)}")
    x_host = numpy.atleast_1d(_host("root", x0))
    n = x_host.size
    device = (get_aval(x0).device or get_default_device()) if is_array(x0) and not \
        isinstance(x0, numpy.ndarray) else get_default_device()

    def value(x: Any) -> Any:
        out = fun(x, *args)
        return fnp.reshape(fnp.asarray(out[0] if jac is True else out), (-1,))

    def residual(x: numpy.ndarray) -> numpy.ndarray:
        return _host("root", value(device_put(x, device)))

    if jac is True:
        def jacobian(x: numpy.ndarray) -> numpy.ndarray:
            return _host("root", fun(device_put(x, device), *args)[1]).reshape(-1, n)
    elif callable(jac):
        def jacobian(x: numpy.ndarray) -> numpy.ndarray:
            return _host("root", jac(device_put(x, device), *args)).reshape(-1, n)
    else:
        jf = jacfwd(value)

        def jacobian(x: numpy.ndarray) -> numpy.ndarray:
            return _host("root", jf(device_put(x, device))).reshape(-1, n)

    inf = numpy.full(n, numpy.inf)
    res = solve_least_squares("root", residual, jacobian, x_host, -inf, inf, ftol=ftol,
                              xtol=xtol, gtol=1e-15,
                              max_nfev=200 * (n + 1) if maxfev in (None, 0) else maxfev)
    fval = res["fun"]
    # a root, not just a least-squares minimum: the residual fell to rounding level
    scale = max(1.0, float(numpy.max(numpy.abs(residual(x_host)), initial=0.0)))
    solved = res["status"] > 0 and bool(numpy.all(numpy.isfinite(fval))) and \
        float(numpy.max(numpy.abs(fval), initial=0.0)) <= 1e-7 * scale
    status = 1 if solved else (2 if res["status"] == 0 else 5)
    message = ("The solution converged." if solved else
               "The number of calls to function has reached maxfev = "
               f"{200 * (n + 1) if maxfev in (None, 0) else maxfev}." if status == 2 else
               "The iteration is not making good progress, as measured by the \n  improvement "
               "from the last ten iterations.")
    return OptimizeResult(x=device_put(res["x"], device), success=solved, status=status,
                          message=message, fun=device_put(fval, device),
                          jac=res["jac"], nfev=res["nfev"], njev=res["njev"])


def fsolve(func: Callable[..., Any], x0: Any, args: tuple = (), fprime: Any = None,
           full_output: bool = False, col_deriv: bool = False, xtol: float = 1.49012e-08,
           maxfev: int = 0, band: Any = None, epsfcn: Any = None, factor: float = 100,
           diag: Any = None) -> Any:
    """The roots of ``func(x, *args) = 0`` from ``x0``, as ``scipy.optimize.fsolve``: the
    solution (flattened, as SciPy's), or with ``full_output`` ``(x, infodict, ier, mesg)``
    (``infodict`` has ``nfev``, ``njev``, ``fvec``; ``ier`` 1 when solved). A legacy
    interface to :func:`root`.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> from funcgrad.scipy.optimize import fsolve
        >>> fsolve(lambda x: fnp.stack([x[0] * fnp.cos(x[1]) - 4.0, x[1] * x[0] - x[1] - 5.0]),
        ...        np.array([1.0, 1.0])).round(5)
        array([6.5041 , 0.90841])
    """
    res = root(func, x0, args, jac=fprime if fprime is not None else None,
               options={"xtol": xtol, "maxfev": maxfev})
    x = res.x  # flat, as SciPy's
    if not full_output:
        if not res.success:
            warnings.warn(res.message, RuntimeWarning, stacklevel=2)
        return x
    info = {"nfev": res.nfev, "njev": res.njev, "fvec": res.fun}
    return x, info, res.status, res.message
