"""``scipy.optimize.curve_fit``: nonlinear least squares by Levenberg-Marquardt (SciPy's
default ``method="lm"`` for unbounded problems), with the exact Jacobian of the model from
``funcgrad.jacfwd`` (SciPy differences it numerically) and SciPy's covariance of the
estimates.

The iterations run on the host (each step branches on the cost); the model is a funcgrad
function of the parameters. The solution is SciPy's minimum to its tolerances; ``pcov``
agrees to the accuracy of SciPy's finite-difference Jacobian.

Example:
    >>> import numpy as np, funcgrad.numpy as fnp
    >>> from funcgrad.scipy.optimize import curve_fit
    >>> x = np.linspace(0.0, 1.0, 10)
    >>> popt, pcov = curve_fit(lambda x, a, b: a * fnp.exp(b * x), x, 2.0 * np.exp(0.5 * x))
    >>> popt.round(6)
    array([2. , 0.5])
"""

from __future__ import annotations

import inspect
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
from funcgrad.scipy.optimize._least_squares import solve_least_squares

__all__ = ["curve_fit", "OptimizeWarning"]


class OptimizeWarning(UserWarning):
    """SciPy's ``OptimizeWarning`` (here: the covariance could not be estimated)."""


def _host(v: Any) -> numpy.ndarray:
    if isinstance(v, Tracer):
        raise TypeError("curve_fit: needs concrete data and model values (the iterations "
                        "branch on them, on the host); call it outside jit/vmap/grad")
    return numpy.asarray(device_get(v), dtype=numpy.float64)


def curve_fit(f: Callable[..., Any], xdata: Any, ydata: Any, p0: Any = None,
              sigma: Any = None, absolute_sigma: bool = False, check_finite: bool | None = None,
              bounds: Any = (-numpy.inf, numpy.inf), method: str | None = None,
              jac: Any = None, *, full_output: bool = False, nan_policy: str | None = None,
              **kwargs: Any) -> tuple[numpy.ndarray, numpy.ndarray]:
    """Fit ``ydata ~ f(xdata, *params)`` by least squares, as ``scipy.optimize.curve_fit``:
    returns ``(popt, pcov)`` with ``pcov = inv(J^T J)`` scaled by the residual variance
    (unless ``absolute_sigma``). ``p0`` defaults to ones (the number of parameters read off
    ``f``'s signature); ``sigma`` a 1-D array of standard deviations or a 2-D covariance.
    ``maxfev``, ``ftol``, ``xtol``, ``gtol`` as SciPy's options. ``bounds`` (a pair of
    scalars or arrays) or ``method="trf"``/``"dogbox"`` solve with
    :func:`least_squares`'s bounded iteration (``max_nfev``), else Levenberg-Marquardt.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.optimize import curve_fit
        >>> popt, pcov = curve_fit(lambda x, m, c: m * x + c, np.arange(5.0),
        ...                        np.array([1.0, 3.1, 4.9, 7.2, 8.8]))
        >>> popt.round(6), np.sqrt(np.diag(pcov)).round(6)
        (array([1.97, 1.06]), array([0.055076, 0.134907]))
    """
    if method not in (None, "lm", "trf", "dogbox"):
        raise ValueError(f"curve_fit: method must be 'lm', 'trf' or 'dogbox', got {method!r}")
    lb, ub = (numpy.broadcast_to(numpy.asarray(b, dtype=float), (1,)) if numpy.ndim(b) == 0
              else numpy.asarray(b, dtype=float) for b in bounds)
    bounded = bool(numpy.any(numpy.isfinite(lb)) or numpy.any(numpy.isfinite(ub)))
    if method == "lm" and bounded:
        raise ValueError("Method 'lm' only works for unconstrained problems. Use 'trf' or "
                         "'dogbox' instead.")
    if full_output:
        raise ValueError("curve_fit: full_output=True is not supported")
    if jac is not None:
        raise ValueError("curve_fit: jac= is not needed (the Jacobian is funcgrad's exact one)")
    if nan_policy not in (None, "raise"):
        raise ValueError("curve_fit: nan_policy must be None or 'raise'")
    p0_given = p0 is not None
    if p0 is None:
        params = list(inspect.signature(f).parameters.values())
        if len(params) < 2:
            raise ValueError("Unable to determine number of fit parameters.")
        p0 = numpy.ones(len(params) - 1)
    p = numpy.atleast_1d(numpy.asarray(p0, dtype=numpy.float64)).copy()
    n = p.size
    lb, ub = numpy.broadcast_to(lb, (n,)), numpy.broadcast_to(ub, (n,))
    if bounded and p0_given is False:  # SciPy's feasible start: the middle of the box
        p = _feasible(lb, ub)
    y = _host(ydata).reshape(-1)
    xd = xdata
    if (check_finite is None or check_finite) and not numpy.all(numpy.isfinite(y)):
        raise ValueError("array must not contain infs or NaNs")
    m = y.size
    if m < n:
        raise TypeError(f"Improper input: func (m={m}) < n={n}")
    if sigma is None:
        weight = None
    else:
        s = _host(sigma)
        if s.ndim == 1:
            weight = ("diag", 1.0 / s)
        else:
            # residuals whitened by the Cholesky factor of the covariance
            weight = ("full", numpy.linalg.inv(numpy.linalg.cholesky(s)))
    maxfev = int(kwargs.pop("maxfev", 200 * (n + 1)))
    ftol = float(kwargs.pop("ftol", 1.49012e-8))
    xtol = float(kwargs.pop("xtol", 1.49012e-8))
    gtol = float(kwargs.pop("gtol", 0.0))
    max_nfev = kwargs.pop("max_nfev", None)
    if kwargs:
        raise TypeError(f"curve_fit: unexpected options {sorted(kwargs)}")
    # the data, weights and parameters live where the model computes (xdata's device)
    dev = get_aval(xdata).device if is_array(xdata) else None
    dev = dev or get_default_device()
    y_dev = device_put(y, dev)
    if weight is not None:
        weight = (weight[0], device_put(weight[1], dev))

    def residual(q: Any) -> Any:
        model = fnp.reshape(fnp.asarray(f(xd, *[q[i] for i in range(n)])), (-1,))
        r = model - y_dev
        if weight is None:
            return r
        if weight[0] == "diag":
            return r * weight[1]
        return weight[1] @ r

    jac_fn = jacfwd(residual)

    def eval_r(q: numpy.ndarray) -> numpy.ndarray:
        return _host(residual(device_put(q, dev)))

    if bounded or method in ("trf", "dogbox"):
        if numpy.any((p < lb) | (p > ub)):
            raise ValueError("`x0` is infeasible.")
        res = solve_least_squares("curve_fit", eval_r,
                                  lambda q: _host(jac_fn(device_put(q, dev))), p,
                                  numpy.asarray(lb, float), numpy.asarray(ub, float),
                                  ftol=ftol, xtol=xtol, gtol=gtol or 1e-8,
                                  max_nfev=max_nfev)
        if not res["success"]:
            raise RuntimeError("Optimal parameters not found: " + res["message"])
        return _covariance(res["x"], res["jac"], 2 * res["cost"], m, n, absolute_sigma)
    r = eval_r(p)
    nfev = 1
    cost = float(r @ r)
    lam = 1e-3
    while nfev < maxfev:
        jm = _host(jac_fn(device_put(p, dev)))
        g = jm.T @ r
        if gtol > 0 and numpy.max(numpy.abs(g)) <= gtol:
            break
        a = jm.T @ jm
        diag = numpy.maximum(numpy.diag(a), 1e-300)
        improved = False
        while nfev < maxfev:
            try:
                step = numpy.linalg.solve(a + lam * numpy.diag(diag), -g)
            except numpy.linalg.LinAlgError:
                lam *= 10.0
                continue
            p_new = p + step
            r_new = eval_r(p_new)
            nfev += 1
            cost_new = float(r_new @ r_new)
            if numpy.isfinite(cost_new) and cost_new <= cost:
                improved = True
                break
            lam *= 10.0
            if lam > 1e16:
                break
        if not improved:
            break
        small_step = numpy.linalg.norm(step) <= xtol * (xtol + numpy.linalg.norm(p))
        small_cost = (cost - cost_new) <= ftol * cost
        p, r, cost = p_new, r_new, cost_new
        lam = max(lam / 10.0, 1e-12)
        if small_step or small_cost:
            break
    return _covariance(p, _host(jac_fn(device_put(p, dev))), cost, m, n, absolute_sigma)


def _feasible(lb: numpy.ndarray, ub: numpy.ndarray) -> numpy.ndarray:
    """SciPy's starting point inside the bounds (``_initialize_feasible``)."""
    p = numpy.ones(lb.size)
    both = numpy.isfinite(lb) & numpy.isfinite(ub)
    p[both] = 0.5 * (lb[both] + ub[both])
    only_lb = numpy.isfinite(lb) & ~numpy.isfinite(ub)
    p[only_lb] = lb[only_lb] + 1
    only_ub = ~numpy.isfinite(lb) & numpy.isfinite(ub)
    p[only_ub] = ub[only_ub] - 1
    return p


def _covariance(p: numpy.ndarray, jm: numpy.ndarray, cost: float, m: int, n: int,
                absolute_sigma: bool) -> tuple[numpy.ndarray, numpy.ndarray]:
    """SciPy's covariance of the estimates: the pseudo-inverse of ``J^T J`` from ``J``'s SVD
    (singular values below a threshold dropped), scaled by the residual variance."""
    _, svals, vt = numpy.linalg.svd(jm, full_matrices=False)
    threshold = numpy.finfo(float).eps * max(jm.shape) * (svals[0] if svals.size else 0.0)
    keep = svals > threshold
    vt = vt[keep]
    pcov = (vt.T / svals[keep] ** 2) @ vt
    warn = False
    if pcov is None or numpy.isnan(pcov).any() or not keep.all():
        pcov = numpy.full((n, n), numpy.inf)
        warn = True
    elif not absolute_sigma:
        if m > n:
            pcov = pcov * (cost / (m - n))
        else:
            pcov = numpy.full((n, n), numpy.inf)
            warn = True
    if warn:
        warnings.warn("Covariance of the parameters could not be estimated",
                      OptimizeWarning, stacklevel=3)
    return p, pcov
