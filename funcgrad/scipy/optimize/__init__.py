"""funcgrad.scipy.optimize: ``minimize`` (BFGS and JAX's experimental L-BFGS) and ``line_search``, as
``jax.scipy.optimize``: pure functions of arrays, usable under ``jit`` and ``vmap``; and
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

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.scipy.optimize._bfgs import minimize_bfgs
from funcgrad.scipy.optimize._curve_fit import OptimizeWarning, curve_fit
from funcgrad.scipy.optimize._lbfgs import minimize_lbfgs
from funcgrad.scipy.optimize._line_search import LineSearchResults, line_search
from funcgrad.scipy.optimize._scalar import OptimizeResult, bracket, minimize_scalar
from funcgrad.scipy.optimize._zeros import RootResults, bisect, brentq, root_scalar

__all__ = ["minimize", "OptimizeResults", "line_search", "LineSearchResults", "brentq",
           "bisect", "root_scalar", "RootResults", "minimize_scalar", "bracket", "OptimizeResult",
           "curve_fit", "OptimizeWarning"]


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


def minimize(fun: Callable[..., Any], x0: Any, args: tuple = (), *, method: str,
             tol: float | None = None, options: Mapping[str, Any] | None = None
             ) -> OptimizeResults:
    """Minimise the scalar ``fun(x, *args)`` from the 1-D ``x0``, as
    ``jax.scipy.optimize.minimize``; ``method`` (case-insensitive) is ``"BFGS"`` or JAX's
    ``"l-bfgs-experimental-do-not-rely-on-this"`` (L-BFGS; ``hess_inv`` is ``None``).

    Gradients come from ``funcgrad.grad``. BFGS ``options``: ``maxiter`` (default
    ``200 * x0.size``), ``gtol`` (default 1e-5; ``tol`` sets it too, as in SciPy), ``norm``
    (default ``inf``), ``line_search_maxiter`` (default 10). L-BFGS ``options``: ``maxiter``,
    ``norm``, ``maxcor`` (history size, 10), ``ftol`` (2.22e-9), ``gtol`` (1e-5), ``maxfun``,
    ``maxgrad``, ``maxls`` (20); its ``status``: 0 converged, 1 ``maxiter``, 2 ``maxfun``,
    3 ``maxgrad``, 4 insufficient progress, 5 line search failed. Works under ``jit`` and
    ``vmap``.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> from funcgrad.scipy.optimize import minimize
        >>> rosen = lambda x: fnp.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
        >>> res = minimize(rosen, np.array([0.5, 0.5]), method="BFGS")
        >>> res.x.round(5), int(res.status), int(res.nit)
        (array([1., 1.]), 0, 14)
    """
    if not isinstance(args, tuple):
        raise TypeError(f"minimize: args must be a tuple, got {type(args).__name__}")
    options = dict(options or {})
    if tol is not None:
        options.setdefault("gtol", tol)
    name = method.lower() if isinstance(method, str) else None
    if name not in _METHODS:
        raise ValueError(f"minimize: method {method!r} not recognized (funcgrad supports "
                         "'BFGS' and 'l-bfgs-experimental-do-not-rely-on-this')")
    solver, known = _METHODS[name]
    unknown = set(options) - known
    if unknown:
        raise TypeError(f"minimize: unknown {method} options {sorted(unknown)}")
    x0 = fnp.asarray(x0)
    if get_aval(x0).ndim != 1:
        raise ValueError(f"minimize: x0 must be 1-dimensional, got shape {get_aval(x0).shape}")

    def objective(x: Any) -> Any:
        out = fun(x, *args)
        if get_aval(fnp.asarray(out)).shape != ():
            raise ValueError(f"minimize: fun must return a scalar, got shape "
                             f"{get_aval(fnp.asarray(out)).shape}")
        return out

    r = solver(objective, x0, **options)
    return OptimizeResults(x=r.x_k, success=r.converged & ~r.failed, status=r.status,
                           fun=r.f_k, jac=r.g_k, hess_inv=getattr(r, "H_k", None), nfev=r.nfev,
                           njev=r.ngev, nit=r.k)


# method name (lower case) -> (solver, its options)
_METHODS: dict[str, tuple[Callable[..., Any], set[str]]] = {
    "bfgs": (minimize_bfgs, {"maxiter", "norm", "gtol", "line_search_maxiter"}),
    "l-bfgs-experimental-do-not-rely-on-this": (
        minimize_lbfgs,
        {"maxiter", "norm", "maxcor", "ftol", "gtol", "maxfun", "maxgrad", "maxls"}),
}
