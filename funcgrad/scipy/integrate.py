"""funcgrad.scipy.integrate: ``trapezoid`` and ``cumulative_trapezoid`` (differentiable in
``y`` and ``x``; ``jit``/``vmap`` work).

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

__all__ = ["trapezoid", "cumulative_trapezoid"]


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
