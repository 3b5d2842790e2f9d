"""funcgrad.scipy.optimize: ``minimize`` (BFGS and JAX's experimental L-BFGS) and ``line_search``, as
``jax.scipy.optimize``: pure functions of arrays, usable under ``jit`` and ``vmap``; SciPy's
host methods ``Nelder-Mead``, ``Powell``, ``L-BFGS-B`` (bounds), ``CG``, ``Newton-CG``; and
SciPy's scalar root finders ``brentq``, ``bisect``, ``root_scalar`` (differentiable in their
``args`` by the implicit function theorem).

Example:
    >>> import numpy as np, funcgrad.numpy as fnp
    >>> from funcgrad.scipy.optimize import minimize
    >>> res = minimize(lambda x: fnp.sum((x - 3.0) ** 2), np.zeros(2), method="BFGS")
    >>> res.x.round(6), bool(res.success)
    (array([3., 3.]), True)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy

import funcgrad.numpy as fnp
from funcgrad.api_devices import device_get
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device, is_array
from funcgrad.core import Tracer
from funcgrad.ops.custom_derivatives import custom_vjp
from funcgrad.scipy._device import keep_host_inputs_on_host as _keep_host_inputs_on_host
from funcgrad.scipy.optimize._assignment import linear_sum_assignment, nnls
from funcgrad.scipy.optimize._bfgs import minimize_bfgs
from funcgrad.scipy.optimize._cg import minimize_cg, minimize_newtoncg
from funcgrad.scipy.optimize._curve_fit import OptimizeWarning, curve_fit
from funcgrad.scipy.optimize._helpers import (
    approx_fprime,
    brent,
    check_grad,
    fminbound,
    newton,
    rosen,
    rosen_der,
    rosen_hess,
    rosen_hess_prod,
)
from funcgrad.scipy.optimize._lbfgs import minimize_lbfgs
from funcgrad.scipy.optimize._lbfgsb import minimize_lbfgsb
from funcgrad.scipy.optimize._least_squares import fsolve, least_squares, root
from funcgrad.scipy.optimize._line_search import LineSearchResults, line_search
from funcgrad.scipy.optimize._neldermead import minimize_neldermead
from funcgrad.scipy.optimize._objective import Bounds, Objective, host_bounds
from funcgrad.scipy.optimize._powell import minimize_powell
from funcgrad.scipy.optimize._scalar import OptimizeResult, bracket, minimize_scalar
from funcgrad.scipy.optimize._slsqp import (
    LinearConstraint,
    NonlinearConstraint,
    host_constraints,
    minimize_slsqp,
)
from funcgrad.scipy.optimize._tnc import minimize_tnc
from funcgrad.scipy.optimize._trust import (
    minimize_dogleg,
    minimize_trust_exact,
    minimize_trust_ncg,
)
from funcgrad.scipy.optimize._zeros import RootResults, bisect, brentq, root_scalar

__all__ = ["minimize", "OptimizeResults", "line_search", "LineSearchResults", "brentq",
           "bisect", "root_scalar", "RootResults", "minimize_scalar", "bracket", "OptimizeResult",
           "curve_fit", "OptimizeWarning", "Bounds", "least_squares", "root", "fsolve",
           "newton", "rosen", "rosen_der", "rosen_hess", "rosen_hess_prod", "approx_fprime",
           "LinearConstraint", "NonlinearConstraint",
           "check_grad", "fminbound", "brent", "linear_sum_assignment", "nnls"]


class OptimizeResults(NamedTuple):
    """What :func:`minimize` returns (``jax.scipy.optimize.OptimizeResults``).

    ``x``: the solution; ``success``: converged without a line-search failure; ``status``:
    0 converged, 1 ``maxiter`` reached, 3 line search (zoom) failed, 5 line search
    ``maxiter`` reached, -1 undefined; ``fun``, ``jac``: value and gradient at ``x``;
    ``hess_inv``: the inverse-Hessian estimate; ``nfev``, ``njev``: function and gradient
    evaluations; ``nit``: iterations.
    """

    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


def minimize(fun: Callable[..., Any], x0: Any, args: tuple = (), *, method: str | None = None,
             jac: Any = None, hess: Any = None, hessp: Any = None, bounds: Any = None,
             constraints: Any = (), tol: float | None = None, callback: Any = None,
             options: Mapping[str, Any] | None = None) -> Any:
    """Minimise the scalar ``fun(x, *args)`` from the 1-D ``x0``.

    ``method`` (case-insensitive; default ``"BFGS"``, ``"L-BFGS-B"`` with ``bounds``,
    ``"SLSQP"`` with ``constraints``, as SciPy) is ``"BFGS"`` or JAX's ``"l-bfgs-experimental-do-not-rely-on-this"``: these are
    ``jax.scipy.optimize.minimize`` (pure functions: ``jit`` and ``vmap`` work) and return the
    NamedTuple :class:`OptimizeResults`. SciPy's ``"Nelder-Mead"``, ``"Powell"``, ``"L-BFGS-B"`` (with
    ``bounds``), ``"CG"``, ``"Newton-CG"``, ``"trust-ncg"``, ``"trust-exact"``, ``"dogleg"``, ``"TNC"`` (``bounds``) and
    ``"SLSQP"`` (``constraints``: SciPy's dicts
    ``{"type": "eq"/"ineq", "fun", "jac", "args"}``, with ``bounds``) iterate on the host (they branch on the values:
    a traced ``x0`` or ``fun`` raises ``TypeError``) and return SciPy's :class:`OptimizeResult`
    (``x``, ``fun``, ``jac``, ``nit``, ``nfev``, ``njev``, ``success``, ``status``,
    ``message``; ``x`` and ``jac`` on ``x0``'s device).

    ``jac``: ``None`` (``funcgrad.grad`` of ``fun``), a callable ``jac(x, *args)``, or
    ``True`` (``fun`` returns ``(f, g)``); ``hess``/``hessp`` for Newton-CG, TNC,
    trust-ncg, trust-exact and dogleg (default: forward-over-reverse Hessian-vector products); ``bounds``:
    a :class:`Bounds` or ``(min, max)`` pairs (``None`` for no bound) for L-BFGS-B, TNC,
    SLSQP, Nelder-Mead and Powell;
    ``callback``
    as SciPy's (``callback(xk)`` or ``callback(intermediate_result)``; ``StopIteration``
    stops; host methods only). ``tol`` sets the method's tolerances as SciPy does.

    BFGS ``options``: ``maxiter`` (default ``200 * x0.size``), ``gtol`` (default 1e-5;
    ``tol`` sets it too, as in SciPy), ``norm`` (default ``inf``), ``line_search_maxiter``
    (default 10). JAX's L-BFGS ``options``: ``maxiter``, ``norm``, ``maxcor`` (history size,
    10), ``ftol`` (2.22e-9), ``gtol`` (1e-5), ``maxfun``, ``maxgrad``, ``maxls`` (20); its
    ``status``: 0 converged, 1 ``maxiter``, 2 ``maxfun``, 3 ``maxgrad``, 4 insufficient
    progress, 5 line search failed. The host methods take SciPy's options.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> from funcgrad.scipy.optimize import minimize
        >>> rosen = lambda x: fnp.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
        >>> res = minimize(rosen, np.array([0.5, 0.5]), method="BFGS")
        >>> res.x.round(5), int(res.status), int(res.nit)
        (array([1., 1.]), 0, 14)
        >>> res = minimize(rosen, np.array([0.5, 0.5]), method="L-BFGS-B",
        ...                bounds=[(None, 0.8), (None, None)])
        >>> res.x.round(4), res.message
        (array([0.8 , 0.64]), 'CONVERGENCE: NORM OF PROJECTED GRADIENT <= PGTOL')
    """
    if not isinstance(args, tuple):
        raise TypeError(f"minimize: args must be a tuple, got {type(args).__name__}")
    options = dict(options or {})
    if method is None:  # SciPy's choice
        method = "SLSQP" if constraints else "L-BFGS-B" if bounds is not None else "BFGS"
    name = method.lower() if isinstance(method, str) else None
    if constraints and name != "slsqp":
        raise ValueError(f"minimize: method {method!r} cannot handle constraints; use "
                         "'SLSQP' (funcgrad provides no COBYLA or trust-constr)")
    if constraints:
        options["constraints"] = constraints
    if name in _HOST_METHODS:
        return _minimize_host(name, fun, x0, args, jac, hess, hessp, bounds, tol, callback,
                              options)
    if name not in _METHODS:
        raise ValueError(f"minimize: method {method!r} not recognized (funcgrad supports "
                         "'BFGS', 'l-bfgs-experimental-do-not-rely-on-this', 'Nelder-Mead', "
                         "'Powell', 'L-BFGS-B', 'CG', 'Newton-CG', 'TNC', 'SLSQP', "
                         "'trust-ncg', 'trust-exact' and 'dogleg')")
    if bounds is not None:
        raise ValueError(f"minimize: method {method!r} cannot handle bounds; use 'L-BFGS-B', "
                         "'Nelder-Mead' or 'Powell'")
    if callback is not None or hess is not None or hessp is not None:
        raise ValueError(f"minimize: method {method!r} is one jit-able loop: it calls no "
                         "callback and uses no hess/hessp; use a host method ('L-BFGS-B', "
                         "'CG', 'Newton-CG', 'Nelder-Mead') for those")
    if tol is not None:
        options.setdefault("gtol", tol)
    solver, known = _METHODS[name]
    unknown = set(options) - known
    if unknown:
        raise TypeError(f"minimize: unknown {method} options {sorted(unknown)}")
    x0 = fnp.asarray(x0)
    if get_aval(x0).ndim != 1:
        raise ValueError(f"minimize: x0 must be 1-dimensional, got shape {get_aval(x0).shape}")
    value = _value_with_jac(fun, jac, args)

    def objective(x: Any) -> Any:
        out = value(x)
        if get_aval(fnp.asarray(out)).shape != ():
            raise ValueError(f"minimize: fun must return a scalar, got shape "
                             f"{get_aval(fnp.asarray(out)).shape}")
        return out

    r = solver(objective, x0, **options)
    return OptimizeResults(x=r.x_k, success=r.converged & ~r.failed, status=r.status,
                           fun=r.f_k, jac=r.g_k, hess_inv=getattr(r, "H_k", None), nfev=r.nfev,
                           njev=r.ngev, nit=r.k)


def _value_with_jac(fun: Callable[..., Any], jac: Any, args: tuple) -> Callable[[Any], Any]:
    """``fun`` as a function of ``x`` whose gradient is ``jac``'s when one is given."""
    if jac is None:
        return lambda x: fun(x, *args)
    if jac is not True and not callable(jac):
        raise ValueError(f"minimize: jac must be a callable, True (fun returns (f, g)) or "
                         f"None, got {jac!r}")

    def both(x: Any) -> tuple[Any, Any]:
        if jac is True:
            v, g = fun(x, *args)
            return v, fnp.asarray(g)
        return fun(x, *args), fnp.asarray(jac(x, *args))

    @custom_vjp
    def value(x: Any) -> Any:
        return both(x)[0]

    value.defvjp(lambda x: both(x), lambda g, ct: (ct * g,))
    return value


def _minimize_host(name: str, fun: Callable[..., Any], x0: Any, args: tuple, jac: Any,
                   hess: Any, hessp: Any, bounds: Any, tol: float | None, callback: Any,
                   options: dict[str, Any]) -> OptimizeResult:
    solver, known, tol_options = _HOST_METHODS[name]
    unknown = set(options) - known
    if unknown:
        raise TypeError(f"minimize: unknown {name} options {sorted(unknown)}")
    if isinstance(x0, Tracer):
        raise TypeError(f"minimize: method {name!r} iterates on the host (it branches on the "
                        "values); x0 cannot be traced: call it outside jit/vmap/grad or use "
                        "method='BFGS'")
    device = (get_aval(x0).device or get_default_device()) if is_array(x0) and not \
        isinstance(x0, numpy.ndarray) else get_default_device()
    x_host = numpy.asarray(device_get(x0))
    if x_host.ndim > 1:
        raise ValueError(f"minimize: x0 must be 1-dimensional, got shape {x_host.shape}")
    x_host = numpy.atleast_1d(x_host).astype(numpy.float64)
    if tol is not None:
        for key in tol_options:
            options.setdefault(key, tol)
    if name == "slsqp":
        options["constraints"] = host_constraints(options.get("constraints", ()), device,
                                                  x_host)
    if name in ("nelder-mead", "l-bfgs-b", "powell", "slsqp", "tnc"):
        options["bounds"] = host_bounds("minimize", bounds, x_host.size)
    elif bounds is not None:
        raise ValueError(f"minimize: method {name!r} cannot handle bounds; use 'L-BFGS-B', "
                         "'Nelder-Mead' or 'Powell'")
    if name not in ("newton-cg", "tnc", "trust-ncg", "trust-exact", "dogleg") and (
            hess is not None or hessp is not None):
        raise ValueError(f"minimize: method {name!r} does not use hess/hessp")
    obj = Objective("minimize", fun, args, device, numpy.float64, jac=jac, hess=hess,
                    hessp=hessp)
    res = solver(obj, x_host, callback=callback, **options)
    for key in ("x", "jac"):
        if key in res:
            res[key] = device_put(numpy.asarray(res[key]), device)
    return res


# method name (lower case) -> (solver, its options)
_METHODS: dict[str, tuple[Callable[..., Any], set[str]]] = {
    "bfgs": (minimize_bfgs, {"maxiter", "norm", "gtol", "line_search_maxiter"}),
    "l-bfgs-experimental-do-not-rely-on-this": (
        minimize_lbfgs,
        {"maxiter", "norm", "maxcor", "ftol", "gtol", "maxfun", "maxgrad", "maxls"}),
}


# SciPy's host methods: (solver, its options, the options tol sets)
_HOST_METHODS: dict[str, tuple[Callable[..., Any], set[str], tuple[str, ...]]] = {
    "powell": (minimize_powell,
               {"xtol", "ftol", "maxiter", "maxfev", "disp", "direc", "return_all"},
               ("xtol", "ftol")),
    "nelder-mead": (minimize_neldermead,
                    {"maxiter", "maxfev", "disp", "return_all", "initial_simplex", "xatol",
                     "fatol", "adaptive"}, ("xatol", "fatol")),
    "l-bfgs-b": (minimize_lbfgsb,
                 {"maxcor", "ftol", "gtol", "eps", "maxfun", "maxiter", "maxls", "disp",
                  "iprint", "finite_diff_rel_step", "workers"}, ("ftol", "gtol")),
    "cg": (minimize_cg,
           {"gtol", "norm", "maxiter", "disp", "return_all", "eps", "c1", "c2",
            "finite_diff_rel_step", "workers"}, ("gtol",)),
    "slsqp": (minimize_slsqp,
              {"constraints", "maxiter", "ftol", "eps", "disp", "iprint",
               "finite_diff_rel_step", "workers"}, ("ftol",)),
    "tnc": (minimize_tnc,
            {"eps", "scale", "offset", "mesg_num", "maxCGit", "eta", "stepmx", "accuracy",
             "minfev", "ftol", "xtol", "gtol", "rescale", "disp", "finite_diff_rel_step",
             "maxfun", "maxiter"}, ("ftol", "xtol", "gtol")),
    "trust-ncg": (minimize_trust_ncg,
                  {"initial_trust_radius", "max_trust_radius", "eta", "gtol", "maxiter",
                   "disp", "return_all"}, ("gtol",)),
    "trust-exact": (minimize_trust_exact,
                    {"initial_trust_radius", "max_trust_radius", "eta", "gtol", "maxiter",
                     "disp", "return_all"}, ("gtol",)),
    "dogleg": (minimize_dogleg,
               {"initial_trust_radius", "max_trust_radius", "eta", "gtol", "maxiter", "disp",
                "return_all"}, ("gtol",)),
    "newton-cg": (minimize_newtoncg,
                  {"xtol", "eps", "maxiter", "disp", "return_all", "c1", "c2"}, ("xtol",)),
}

# NumPy inputs compute on the host whatever the default device (funcgrad.scipy._device)
_keep_host_inputs_on_host(globals(), __all__)
