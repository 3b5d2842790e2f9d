"""SciPy's optimize helpers: the Rosenbrock test function and its derivatives (``rosen``,
``rosen_der``, ``rosen_hess``, ``rosen_hess_prod``: SciPy's closed forms, differentiable and
jit-able), finite-difference checks (``approx_fprime``, ``check_grad``), the legacy scalar
minimisers ``fminbound`` and ``brent`` (over :func:`minimize_scalar`) and ``newton`` (a scalar
or elementwise root by Newton's method with autodiff derivatives, over ``lax.custom_root``).

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.optimize import rosen, rosen_der
    >>> float(rosen(np.array([1.0, 1.0]))), rosen_der(np.array([0.0, 0.0]))
    (0.0, array([-2.,  0.]))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy

import funcgrad.numpy as fnp
from funcgrad.api import grad
from funcgrad.api_devices import device_get
from funcgrad.avals import get_aval
from funcgrad.core import Tracer
from funcgrad.lax import while_loop
from funcgrad.scipy.optimize._scalar import minimize_scalar
from funcgrad.scipy.optimize._zeros import _finish, _newton

__all__ = ["rosen", "rosen_der", "rosen_hess", "rosen_hess_prod", "approx_fprime",
           "check_grad", "fminbound", "brent", "newton"]


def rosen(x: Any) -> Any:
    """The Rosenbrock function ``sum(100 (x[1:] - x[:-1]**2)**2 + (1 - x[:-1])**2)`` (along
    the first axis), as ``scipy.optimize.rosen``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.optimize import rosen
        >>> float(rosen(np.array([0.5, 0.5])))
        6.5
    """
    x = fnp.asarray(x)
    return fnp.sum(100.0 * (x[1:] - x[:-1] ** 2.0) ** 2.0 + (1 - x[:-1]) ** 2.0, axis=0)


def rosen_der(x: Any) -> Any:
    """The gradient of :func:`rosen`, SciPy's closed form.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.optimize import rosen_der
        >>> rosen_der(np.array([0.5, 0.5, 0.5]))
        array([-51.,  -1.,  50.])
    """
    x = fnp.asarray(x)
    xm, xm_m1, xm_p1 = x[1:-1], x[:-2], x[2:]
    middle = 200 * (xm - xm_m1 ** 2) - 400 * (xm_p1 - xm ** 2) * xm - 2 * (1 - xm)
    first = -400 * x[0] * (x[1] - x[0] ** 2) - 2 * (1 - x[0])
    last = 200 * (x[-1] - x[-2] ** 2)
    return fnp.concatenate([first[None], middle, last[None]])


def rosen_hess(x: Any) -> Any:
    """The Hessian of :func:`rosen`, SciPy's closed form.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.optimize import rosen_hess
        >>> rosen_hess(np.array([1.0, 1.0]))
        array([[ 802., -400.],
               [-400.,  200.]])
    """
    x = fnp.atleast_1d(fnp.asarray(x))
    off = -400 * x[:-1]
    diagonal = fnp.concatenate([(1200 * x[0] ** 2 - 400 * x[1] + 2)[None],
                                202 + 1200 * x[1:-1] ** 2 - 400 * x[2:],
                                fnp.full((1,), 200.0, dtype=get_aval(x).dtype)])
    return fnp.diag(off, 1) + fnp.diag(off, -1) + fnp.diag(diagonal)


def rosen_hess_prod(x: Any, p: Any) -> Any:
    """The Hessian of :func:`rosen` at ``x`` times ``p``, SciPy's closed form.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.optimize import rosen_hess_prod
        >>> rosen_hess_prod(np.array([1.0, 1.0]), np.array([1.0, 0.0]))
        array([ 802., -400.])
    """
    x, p = fnp.atleast_1d(fnp.asarray(x)), fnp.atleast_1d(fnp.asarray(p))
    first = (1200 * x[0] ** 2 - 400 * x[1] + 2) * p[0] - 400 * x[0] * p[1]
    middle = (-400 * x[:-2] * p[:-2] + (202 + 1200 * x[1:-1] ** 2 - 400 * x[2:]) * p[1:-1]
              - 400 * x[1:-1] * p[2:])
    last = -400 * x[-2] * p[-2] + 200 * p[-1]
    return fnp.concatenate([first[None], middle, last[None]])


_SQRT_EPS = float(numpy.sqrt(numpy.finfo(float).eps))


def approx_fprime(xk: Any, f: Callable[..., Any], epsilon: Any = _SQRT_EPS,
                  *args: Any) -> numpy.ndarray:
    """Forward-difference derivatives ``(f(xk + eps e_i) - f(xk)) / eps`` (a Jacobian for a
    vector ``f``), as ``scipy.optimize.approx_fprime``; a host computation (NumPy out).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.optimize import approx_fprime
        >>> approx_fprime(np.array([1.0, 2.0]), lambda x: x[0] ** 2 + 3 * x[1], 1e-8).round(5)
        array([2., 3.])
    """
    x = numpy.atleast_1d(numpy.asarray(device_get(xk), dtype=float))
    eps = numpy.broadcast_to(numpy.asarray(epsilon, dtype=float), x.shape)

    def value(v: numpy.ndarray) -> numpy.ndarray:
        out = f(v, *args)
        if isinstance(out, Tracer):
            raise TypeError("approx_fprime: needs concrete values; call it outside jit")
        return numpy.asarray(device_get(out), dtype=float)

    f0 = value(x)
    cols = []
    for i in range(x.size):
        step = numpy.zeros_like(x)
        step[i] = eps[i]
        cols.append((value(x + step) - f0) / eps[i])
    out = numpy.stack(cols, axis=-1)
    return out if f0.ndim else out.reshape(x.shape)


def check_grad(func: Callable[..., Any], grad: Callable[..., Any], x0: Any, *args: Any,
               epsilon: float = _SQRT_EPS,
               direction: str = "all", seed: Any = None) -> float:
    """The 2-norm of ``grad(x0) - approx_fprime(x0, func)``, as
    ``scipy.optimize.check_grad`` (``direction="all"``).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.optimize import check_grad, rosen, rosen_der
        >>> check_grad(rosen, rosen_der, np.array([0.5, 0.5])) < 1e-5
        True
    """
    if direction != "all":
        raise ValueError("check_grad: only direction='all' is supported")
    g = numpy.asarray(device_get(grad(numpy.asarray(device_get(x0), dtype=float), *args)),
                      dtype=float)
    return float(numpy.sqrt(numpy.sum((g - approx_fprime(x0, func, epsilon, *args)) ** 2)))


def fminbound(func: Callable[..., Any], x1: float, x2: float, args: tuple = (),
              xtol: float = 1e-5, maxfun: int = 500, full_output: bool = False,
              disp: int = 1) -> Any:
    """The minimiser of ``func`` on ``[x1, x2]``, as ``scipy.optimize.fminbound`` (Brent's
    bounded method: :func:`minimize_scalar` with ``method="bounded"``, SciPy's iterates);
    with ``full_output``: ``(xopt, fval, ierr, numfunc)``.

    Example:
        >>> from funcgrad.scipy.optimize import fminbound
        >>> round(float(fminbound(lambda x: (x - 1.5) ** 2, 0.0, 4.0)), 5)
        1.5
    """
    if x1 > x2:
        raise ValueError("The lower bound exceeds the upper bound.")
    res = minimize_scalar(func, bounds=(x1, x2), args=args, method="bounded",
                          options={"xatol": xtol, "maxiter": maxfun})
    if full_output:
        return res.x, res.fun, res.status, res.nfev
    return res.x


def brent(func: Callable[..., Any], args: tuple = (), brack: Any = None, tol: float = 1.48e-8,
          full_output: bool = False, maxiter: int = 500) -> Any:
    """A local minimiser of ``func`` by Brent's method, as ``scipy.optimize.brent``
    (:func:`minimize_scalar` with ``method="brent"``); with ``full_output``:
    ``(xmin, fval, iter, funcalls)``.

    Example:
        >>> from funcgrad.scipy.optimize import brent
        >>> round(float(brent(lambda x: (x - 2.0) ** 2 + 1.0)), 6)
        2.0
    """
    res = minimize_scalar(func, bracket=brack, args=args, method="brent",
                          options={"xtol": tol, "maxiter": maxiter})
    if full_output:
        return res.x, res.fun, res.nit, res.nfev
    return res.x


class _ArrayNewtonResult(NamedTuple):
    root: Any
    converged: Any
    zero_der: Any


def newton(func: Callable[..., Any], x0: Any, fprime: Any = None, args: tuple = (),
           tol: float = 1.48e-8, maxiter: int = 50, fprime2: Any = None, x1: Any = None,
           rtol: float = 0.0, full_output: bool = False, disp: bool = True) -> Any:
    """A zero of ``func(x, *args)`` near ``x0`` by Newton's method, as
    ``scipy.optimize.newton``: ``fprime`` if given, else the derivative by autodiff (where
    SciPy falls back to the secant method, or Halley's with ``fprime2``: funcgrad's Newton
    iterates differ, the root is the same). Converged when a step is at most
    ``tol + rtol |x|``. An array ``x0`` solves elementwise (``func`` applied to the whole
    array). The root is differentiable in ``args`` (implicit function theorem) and the
    search runs under ``jit``. ``disp``: ``RuntimeError`` when a concrete scalar search fails;
    ``full_output``: ``(root, RootResults)`` (arrays: ``(root, converged, zero_der)``).

    Example:
        >>> from funcgrad.scipy.optimize import newton
        >>> round(float(newton(lambda x: x ** 3 - 1.0, 1.5)), 12)
        1.0
    """
    if not isinstance(args, tuple):
        args = (args,)
    del x1, fprime2
    x0 = fnp.asarray(x0)
    if get_aval(x0).ndim == 0:
        root, it, calls, ok = _newton(func, fprime, x0, args, tol, rtol, maxiter)
        return _finish("newton", root, it, calls, ok, full_output, disp)
    if not fnp.issubdtype(get_aval(x0).dtype, fnp.inexact):
        x0 = x0.astype(numpy.float64)

    def derivative(x: Any) -> Any:
        if callable(fprime):
            return fprime(x, *args)
        return grad(lambda v: fnp.sum(func(v, *args)))(x)

    def cond(s: tuple) -> Any:
        return (s[0] < maxiter) & ~fnp.all(s[2])

    def body(s: tuple) -> tuple:
        i, x, done, _ = s
        d = derivative(x)
        zero = d == 0
        step = fnp.where(done | zero, 0.0, func(x, *args) / fnp.where(zero, 1.0, d))
        x_n = x - step
        return i + 1, x_n, done | zero | (fnp.abs(step) <= tol + rtol * fnp.abs(x_n)), zero

    false = fnp.zeros(get_aval(x0).shape, bool)
    _, root, converged, zero_der = while_loop(cond, body, (fnp.asarray(0), x0, false, false))
    converged = converged & ~zero_der
    if full_output:
        return _ArrayNewtonResult(root, converged, zero_der)
    if disp and not isinstance(converged, Tracer) and not bool(fnp.all(converged)):
        raise RuntimeError(f"newton: {int(fnp.sum(~converged))} of {converged.size} elements "
                           "failed to converge")
    return root
