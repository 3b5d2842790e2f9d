"""The objective of SciPy's host minimizers (``Nelder-Mead``, ``L-BFGS-B``, ``CG``,
``Newton-CG``): the user's ``fun`` evaluated at host points, counted; its gradient from
``jac`` (a callable, ``True`` for ``fun`` returning ``(f, g)``) or ``funcgrad.grad``; the
Hessian-vector product from ``hessp``, ``hess`` or forward-over-reverse differentiation; and
SciPy's ``Bounds``.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.optimize import Bounds
    >>> Bounds([0.0, -1.0], [1.0, np.inf]).ub
    array([ 1., inf])
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.api import grad, jvp, value_and_grad
from funcgrad.api_devices import device_get
from funcgrad.backend import device_put
from funcgrad.core import Tracer
from funcgrad.scipy.optimize._scalar import OptimizeResult

__all__ = ["Bounds", "Objective", "STATUS_MESSAGES", "host_bounds", "call_callback"]

STATUS_MESSAGES = {
    "success": "Optimization terminated successfully.",
    "maxfev": "Maximum number of function evaluations has been exceeded.",
    "maxiter": "Maximum number of iterations has been exceeded.",
    "pr_loss": "Desired error not necessarily achieved due to precision loss.",
    "nan": "NaN result encountered.",
    "callback": "`callback` raised `StopIteration`.",
}


class Bounds:
    """Simple bounds ``lb <= x <= ub`` on the variables, as ``scipy.optimize.Bounds``
    (``-inf``/``inf`` for no bound; scalars broadcast). ``keep_feasible`` is accepted and
    always honoured by the methods here (they never leave the box).

    Example:
        >>> from funcgrad.scipy.optimize import Bounds
        >>> Bounds(0.0, 1.0).lb
        array(0.)
    """

    def __init__(self, lb: Any = -numpy.inf, ub: Any = numpy.inf, keep_feasible: Any = False
                 ) -> None:
        self.lb = numpy.asarray(device_get(lb), dtype=float)
        self.ub = numpy.asarray(device_get(ub), dtype=float)
        self.keep_feasible = keep_feasible

    def __repr__(self) -> str:
        return f"Bounds({self.lb!r}, {self.ub!r})"


def host_bounds(name: str, bounds: Any, n: int) -> tuple[numpy.ndarray, numpy.ndarray] | None:
    """``(lb, ub)`` arrays of length ``n`` from a ``Bounds`` or a sequence of ``(min, max)``
    pairs (``None`` for no bound), as SciPy accepts them."""
    if bounds is None:
        return None
    if isinstance(bounds, Bounds):
        lb, ub = bounds.lb, bounds.ub
    else:
        pairs = list(bounds)
        if len(pairs) != n:
            raise ValueError(f"{name}: length of x0 != length of bounds ({n} != {len(pairs)})")
        try:
            lb = numpy.array([-numpy.inf if p[0] is None else p[0] for p in pairs], float)
            ub = numpy.array([numpy.inf if p[1] is None else p[1] for p in pairs], float)
        except (TypeError, IndexError) as e:
            raise ValueError(f"{name}: bounds must be a Bounds or a sequence of (min, max) "
                             "pairs") from e
    lb, ub = (numpy.broadcast_to(v, (n,)).astype(float) for v in (lb, ub))
    if numpy.any(lb > ub):
        raise ValueError(f"{name}: one of the lower bounds is greater than an upper bound.")
    return lb, ub


class Objective:
    """``fun(x, *args)`` and its derivatives at host points, each evaluation counted
    (``nfev``, ``njev``, ``nhev``). Values are computed on ``device`` (the device of ``x0``)
    and brought back as float64."""

    def __init__(self, name: str, fun: Callable[..., Any], args: tuple, device: str,
                 dtype: Any, jac: Any = None, hess: Any = None, hessp: Any = None) -> None:
        self.name, self.fun, self.args, self.device, self.dtype = name, fun, args, device, dtype
        self.jac, self.hess, self.hessp = jac, hess, hessp
        self.nfev = self.njev = self.nhev = 0
        if jac is not None and jac is not True and not callable(jac):
            raise ValueError(f"{name}: jac must be a callable, True (fun returns (f, g)) or "
                             f"None (funcgrad.grad), got {jac!r}")

    def _dev(self, x: numpy.ndarray) -> Any:
        return device_put(numpy.asarray(x, dtype=self.dtype), self.device)

    def _scalar(self, v: Any) -> float:
        if isinstance(v, Tracer):
            raise TypeError(f"{self.name}: the iterations need concrete function values (they "
                            "branch on them, on the host); call minimize outside jit/vmap/grad "
                            "or use method='BFGS'")
        out = numpy.asarray(device_get(v), dtype=float)
        if out.size != 1:
            raise ValueError(f"{self.name}: the objective function must return a scalar, got "
                             f"shape {out.shape}")
        return float(out.reshape(()))

    def _vector(self, v: Any, n: int) -> numpy.ndarray:
        out = numpy.asarray(device_get(v), dtype=float).reshape(-1)
        if out.size != n:
            raise ValueError(f"{self.name}: the gradient has {out.size} entries, x has {n}")
        return out

    def f(self, x: numpy.ndarray) -> float:
        self.nfev += 1
        if self.jac is True:
            return self._scalar(self.fun(self._dev(x), *self.args)[0])
        return self._scalar(self.fun(self._dev(x), *self.args))

    def f_and_g(self, x: numpy.ndarray) -> tuple[float, numpy.ndarray]:
        xd = self._dev(x)
        self.nfev += 1
        self.njev += 1
        if self.jac is True:
            v, g = self.fun(xd, *self.args)
        elif callable(self.jac):
            v, g = self.fun(xd, *self.args), self.jac(xd, *self.args)
        else:
            v, g = value_and_grad(lambda z: fnp.real(self.fun(z, *self.args)))(xd)
        return self._scalar(v), self._vector(g, x.size)

    def grad_only(self, x: numpy.ndarray) -> numpy.ndarray:
        return self.f_and_g(x)[1]

    def hvp(self, x: numpy.ndarray, p: numpy.ndarray) -> numpy.ndarray:
        """The Hessian at ``x`` times ``p``."""
        self.nhev += 1
        xd, pd = self._dev(x), self._dev(p)
        if self.hessp is not None:
            return self._vector(self.hessp(xd, pd, *self.args), x.size)
        if self.hess is not None:
            h = numpy.asarray(device_get(self.hess(xd, *self.args)), dtype=float)
            return h.reshape(x.size, x.size) @ p
        if callable(self.jac):
            g = lambda z: self.jac(z, *self.args)  # noqa: E731
        elif self.jac is True:
            g = lambda z: self.fun(z, *self.args)[1]  # noqa: E731
        else:
            g = grad(lambda z: fnp.real(self.fun(z, *self.args)))
        return self._vector(jvp(g, (xd,), (pd,))[1], x.size)


    def hess_matrix(self, x: numpy.ndarray) -> numpy.ndarray:
        """The Hessian at ``x``: ``hess``'s, else one exact Hessian-vector product per
        column (counted once)."""
        if self.hess is not None:
            self.nhev += 1
            h = numpy.asarray(device_get(self.hess(self._dev(x), *self.args)), dtype=float)
            return h.reshape(x.size, x.size)
        cols = [self.hvp(x, e) for e in numpy.eye(x.size)]
        self.nhev -= x.size - 1
        return numpy.stack(cols, axis=1)


def call_callback(callback: Any, x: numpy.ndarray, fun: float) -> bool:
    """Call SciPy's ``callback``: with an ``OptimizeResult`` when its one parameter is named
    ``intermediate_result``, else with ``xk``; True when it asks to stop (``StopIteration``)."""
    if callback is None:
        return False
    try:
        named = list(inspect.signature(callback).parameters) == ["intermediate_result"]
    except (TypeError, ValueError):
        named = False
    try:
        if named:
            callback(intermediate_result=OptimizeResult(x=numpy.copy(x), fun=fun))
        else:
            callback(numpy.copy(x))
    except StopIteration:
        return True
    return False
