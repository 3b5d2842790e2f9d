"""funcgrad.scipy.integrate: ``trapezoid``, ``cumulative_trapezoid``, ``simpson`` and
``cumulative_simpson`` (differentiable in ``y`` and ``x``; ``jit``/``vmap`` work); SciPy's
``quad``, ``dblquad``, ``fixed_quad``, ``romb`` (:mod:`funcgrad.scipy._quadrature`),
``solve_ivp`` and ``odeint`` (:mod:`funcgrad.scipy._ivp`).

Example:
    >>> import numpy as np, funcgrad.scipy.integrate as fsi
    >>> float(fsi.trapezoid(np.array([1.0, 2.0, 3.0]), dx=0.5))
    2.0
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.core import Tracer
from funcgrad.scipy._device import keep_host_inputs_on_host as _keep_host_inputs_on_host
from funcgrad.scipy._ivp import OdeSolution, odeint, solve_ivp
from funcgrad.scipy._quadrature import IntegrationWarning, dblquad, fixed_quad, quad, romb

__all__ = ["trapezoid", "cumulative_trapezoid", "simpson", "cumulative_simpson", "quad",
           "dblquad", "fixed_quad", "romb", "IntegrationWarning", "solve_ivp", "odeint",
           "OdeSolution"]


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """Integral of ``y`` along ``axis`` by the trapezoidal rule, at sample points ``x`` (1-D,
    or shaped like ``y``) or spacing ``dx`` (as ``scipy.integrate.trapezoid``).

    Example:
        >>> import numpy as np, funcgrad, funcgrad.scipy.integrate as fsi
        >>> float(fsi.trapezoid(np.array([0.0, 1.0, 4.0]), x=np.array([0.0, 1.0, 2.0])))
        3.0
        >>> funcgrad.grad(fsi.trapezoid)(np.array([0.0, 1.0, 4.0]))
        array([0.5, 1. , 0.5])
    """
    return fnp.trapezoid(y, x=x, dx=dx, axis=axis)


def cumulative_trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1,
                         initial: Any = None) -> Any:
    """Running trapezoidal integral of ``y`` along ``axis`` (one value fewer than ``y`` unless
    ``initial=0`` is given, which is prepended), as ``scipy.integrate.cumulative_trapezoid``.

    Example:
        >>> import numpy as np, funcgrad.scipy.integrate as fsi
        >>> fsi.cumulative_trapezoid(np.array([1.0, 2.0, 3.0]), initial=0)
        array([0. , 1.5, 4. ])
    """
    y = fnp.asarray(y)
    if get_aval(y).dtype.kind not in "fc":
        y = y.astype(numpy.float64)
    nd = get_aval(y).ndim
    if nd == 0:
        raise ValueError("cumulative_trapezoid: y must have at least one dimension")
    axis = int(axis)
    if not -nd <= axis < nd:
        raise ValueError(f"cumulative_trapezoid: axis {axis} is out of bounds for {nd}-D y")
    axis %= nd
    n = get_aval(y).shape[axis]
    if x is None:
        d = dx if isinstance(dx, int | float) else fnp.asarray(dx)  # Python scalars: weak
    else:
        x = fnp.asarray(x)
        xa = get_aval(x)
        if xa.ndim == 1:
            if xa.shape[0] != n:
                raise ValueError(f"cumulative_trapezoid: x has {xa.shape[0]} points, y has {n} "
                                 f"along axis {axis}")
            d = fnp.diff(x)
            d = fnp.reshape(d, tuple(n - 1 if i == axis else 1 for i in range(nd)))
        elif xa.ndim == nd:
            d = fnp.diff(x, axis=axis)
        else:
            raise ValueError("cumulative_trapezoid: if given, shape of x must be 1-D or the "
                             f"same as y, got {xa.shape} and {get_aval(y).shape}")
    lo = fnp.take(y, numpy.arange(0, max(n - 1, 0)), axis=axis)
    hi = fnp.take(y, numpy.arange(1, n), axis=axis)
    res = fnp.cumsum(d * (lo + hi) / 2.0, axis=axis)
    if initial is not None:
        if not (numpy.ndim(initial) == 0 and initial == 0):
            raise ValueError("cumulative_trapezoid: `initial` must be None or 0 (as SciPy)")
        shape = list(get_aval(res).shape)
        shape[axis] = 1
        res = fnp.concatenate([fnp.zeros(shape, dtype=get_aval(res).dtype), res], axis=axis)
    return res


def _float_y(name: str, y: Any, axis: int) -> tuple[Any, int]:
    """``y`` as a float array (integers become float64) with ``axis`` moved last."""
    y = fnp.asarray(y)
    if get_aval(y).dtype.kind not in "fc":
        y = y.astype(numpy.float64)
    nd = get_aval(y).ndim
    if nd == 0:
        raise ValueError(f"{name}: y must have at least one dimension")
    axis = int(axis)
    if not -nd <= axis < nd:
        raise ValueError(f"{name}: axis {axis} is out of bounds for {nd}-D y")
    return fnp.moveaxis(y, axis, -1), axis % nd


def _x_last(name: str, x: Any, y_shape: tuple, axis: int) -> Any:
    """Sample points along the last axis: a 1-D ``x`` as is, an ``x`` shaped like ``y`` with
    ``axis`` moved last."""
    x = fnp.asarray(x)
    xa = get_aval(x)
    n = y_shape[axis]
    if xa.ndim == 1:
        if xa.shape[0] != n:
            raise ValueError(f"{name}: x has {xa.shape[0]} points, y has {n} along axis {axis}")
        return x
    if xa.shape != tuple(y_shape):
        raise ValueError(f"{name}: if given, x must be 1-D or shaped like y, got {xa.shape} "
                         f"and {tuple(y_shape)}")
    return fnp.moveaxis(x, axis, -1)


def _ratio(a: Any, b: Any) -> Any:
    """``a / b``, 0 where ``b == 0`` (SciPy's ``true_divide(..., where=b != 0)`` on zeros)."""
    if isinstance(b, int | float) and isinstance(a, int | float):  # weak: float32 stays
        return a / b if b != 0 else 0.0
    nz = b != 0
    return fnp.where(nz, a / fnp.where(nz, b, 1.0), 0.0)


def _basic_simpson(y: Any, stop: int, h: Any, dx: Any) -> Any:
    """Composite Simpson over the panels ``[0, 2], [2, 4], ...`` up to sample ``stop``
    (SciPy's ``_basic_simpson``; ``h`` the spacings, or None for the even spacing ``dx``)."""
    y0, y1, y2 = y[..., 0:stop:2], y[..., 1:stop + 1:2], y[..., 2:stop + 2:2]
    if h is None:
        return fnp.sum(y0 + 4.0 * y1 + y2, axis=-1) * (dx / 3.0)
    h0, h1 = h[..., 0:stop:2], h[..., 1:stop + 1:2]
    hsum, hprod = h0 + h1, h0 * h1
    h0divh1 = _ratio(h0, h1)
    tmp = hsum / 6.0 * (y0 * (2.0 - _ratio(1.0, h0divh1)) + y1 * (hsum * _ratio(hsum, hprod))
                        + y2 * (2.0 - h0divh1))
    return fnp.sum(tmp, axis=-1)


def simpson(y: Any, x: Any = None, *, dx: Any = 1.0, axis: int = -1) -> Any:
    """Integral of ``y`` along ``axis`` by the composite Simpson rule, as
    ``scipy.integrate.simpson`` (SciPy 1.11+): sample points ``x`` (1-D or shaped like ``y``,
    uneven spacing allowed) or spacing ``dx``; an even number of samples takes Cartwright's
    correction for the last interval, two samples the trapezoid, one sample 0.

    Example:
        >>> import numpy as np, funcgrad, funcgrad.scipy.integrate as fsi
        >>> x = np.linspace(0.0, 2.0, 5)
        >>> float(fsi.simpson(x ** 3, x=x))          # exact for cubics: 2**4 / 4
        4.0
        >>> funcgrad.grad(fsi.simpson)(np.ones(5))   # the weights h/3 (1, 4, 2, 4, 1)
        array([0.33333333, 1.33333333, 0.66666667, 1.33333333, 0.33333333])
    """
    y, axis = _float_y("simpson", y, axis)
    n = get_aval(y).shape[-1]
    if n == 0:
        raise ValueError("simpson: y has no samples along axis")
    h = None
    if x is not None:
        xl = _x_last("simpson", x, fnp.moveaxis(y, -1, axis).shape, axis)
        h = fnp.diff(xl, axis=-1)
        if get_aval(h).dtype.kind not in "fc":
            h = h.astype(numpy.float64)
    if n % 2 == 1:
        return _basic_simpson(y, n - 2, h, dx)
    if n == 2:
        last = dx if h is None else h[..., -1]
        return 0.5 * last * (y[..., -1] + y[..., -2])
    result = _basic_simpson(y, n - 3, h, dx)
    if h is None:
        h0 = h1 = dx if isinstance(dx, int | float) else fnp.asarray(dx)
    else:
        h0, h1 = h[..., -2], h[..., -1]
    alpha = _ratio(2.0 * h1 ** 2 + 3.0 * h0 * h1, 6.0 * (h1 + h0))
    beta = _ratio(h1 ** 2 + 3.0 * h0 * h1, 6.0 * h0)
    eta = _ratio(h1 ** 3, 6.0 * h0 * (h0 + h1))
    return result + alpha * y[..., -1] + beta * y[..., -2] - eta * y[..., -3]


def _simpson_subintervals(y: Any, d: Any, even: bool) -> Any:
    """The integral over ``[x_j, x_{j+1}]`` of the parabola through samples ``j, j+1, j+2``
    (SciPy's equations (10) and (8) of its reference [2])."""
    f1, f2, f3 = y[..., :-2], y[..., 1:-1], y[..., 2:]
    if even:
        return d[..., :-1] / 3.0 * (5.0 * f1 / 4.0 + 2.0 * f2 - f3 / 4.0)
    x21, x32 = d[..., :-1], d[..., 1:]
    x31 = x21 + x32
    x21_x31, x21_x32 = x21 / x31, x21 / x32
    x21x21_x31x32 = x21_x31 * x21_x32
    return x21 / 6.0 * ((3.0 - x21_x31) * f1 + (3.0 + x21x21_x31x32 + x21_x31) * f2
                        - x21x21_x31x32 * f3)


def cumulative_simpson(y: Any, *, x: Any = None, dx: Any = 1.0, axis: int = -1,
                       initial: Any = None) -> Any:
    """Running Simpson integral of ``y`` along ``axis``, as
    ``scipy.integrate.cumulative_simpson``: each interval from the parabola through it and
    its right neighbour's samples (the left neighbour's for the last), summed. ``x``
    (strictly increasing; 1-D or shaped like ``y``) or ``dx`` (a scalar, or shaped like
    ``y`` with one point along ``axis``); fewer than 3 samples fall back to the trapezoid.
    ``initial`` (a scalar, or shaped like ``y`` with one point along ``axis``) is added to
    every value and prepended.

    Example:
        >>> import numpy as np, funcgrad.scipy.integrate as fsi
        >>> x = np.linspace(0.0, 2.0, 5)
        >>> fsi.cumulative_simpson(x ** 2, x=x, initial=0)     # x**3 / 3, exact for parabolas
        array([0.        , 0.04166667, 0.33333333, 1.125     , 2.66666667])
    """
    name = "cumulative_simpson"
    y, axis = _float_y(name, y, axis)
    shape = fnp.moveaxis(y, -1, axis).shape
    n = shape[axis]
    if n < 3:
        res = fnp.moveaxis(cumulative_trapezoid(fnp.moveaxis(y, -1, axis), x, dx=dx, axis=axis),
                           axis, -1)
    else:
        if x is not None:
            d = fnp.diff(_x_last(name, x, shape, axis), axis=-1)
            if get_aval(d).dtype.kind not in "fc":
                d = d.astype(numpy.float64)
            if not isinstance(d, Tracer) and bool(fnp.any(d <= 0)):
                raise ValueError(f"{name}: x must be strictly increasing")
            even = False
        else:
            d = dx if isinstance(dx, int | float) else fnp.asarray(dx)
            if not isinstance(d, int | float):
                da = get_aval(d)
                one = tuple(1 if i == axis else s for i, s in enumerate(shape))
                if da.ndim != 0 and da.shape != one:
                    raise ValueError(f"{name}: dx must be a scalar or shaped like y with one "
                                     f"point along axis ({one}), got {da.shape}")
                if da.ndim:
                    d = fnp.moveaxis(d, axis, -1)
            # a Python dx becomes an array on y's device (the strict backend and CuPy refuse
            # a host y meeting a device dx)
            d = fnp.full_like(y[..., 1:], d) if isinstance(d, int | float) else \
                fnp.broadcast_to(d, get_aval(y).shape[:-1] + (n - 1,))
            even = True
        h1 = _simpson_subintervals(y, d, even)
        h2 = fnp.flip(_simpson_subintervals(fnp.flip(y, -1), fnp.flip(d, -1), even), -1)
        # interval i (of n - 1): from the right-hand parabola h1[i] where i is even and has
        # one (i <= n - 3), else from the left-hand one, h2[i - 1] (SciPy's interleaving)
        # (static indices into h1 ++ h2: no host mask meeting device arrays)
        i = numpy.arange(n - 1)
        right = (i % 2 == 0) & (i <= n - 3)
        sub = fnp.take(fnp.concatenate([h1, h2], axis=-1),
                       numpy.where(right, i, n - 2 + i - 1), axis=-1)
        res = fnp.cumsum(sub, axis=-1)
    if initial is not None:
        if isinstance(initial, int | float):
            # a Python initial joins res on its device, in its dtype (weak)
            init = fnp.zeros_like(fnp.sum(res, axis=-1, keepdims=True)) + initial
        else:
            init = fnp.asarray(initial)
            ia = get_aval(init)
            one = tuple(1 if i == axis else s for i, s in enumerate(shape))
            if ia.ndim != 0 and ia.shape != one:
                raise ValueError(f"{name}: initial must be a scalar or shaped like y with one "
                                 f"point along axis ({one}), got {ia.shape}")
            init = fnp.moveaxis(init, axis, -1) if ia.ndim else init
            dt = numpy.result_type(get_aval(res).dtype, ia.dtype) if ia.dtype.kind in "fc" \
                else get_aval(res).dtype
            init = fnp.broadcast_to(init, get_aval(res).shape[:-1] + (1,)).astype(dt)
        res = fnp.concatenate([init, res + init], axis=-1)
    return fnp.moveaxis(res, -1, axis)

# NumPy inputs compute on the host whatever the default device (funcgrad.scipy._device)
_keep_host_inputs_on_host(globals(), __all__)
