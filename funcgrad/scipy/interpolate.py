"""funcgrad.scipy.interpolate: ``RegularGridInterpolator`` as ``scipy.interpolate`` (and
``jax.scipy.interpolate``): linear or nearest-neighbour interpolation on a rectilinear grid in
any number of dimensions.

Linear interpolation is differentiable in the values, the query points (piecewise linear)
and the grid; the interpolator is a pytree (grid, values and ``fill_value`` are its leaves),
so it can be passed through ``jit``, ``vmap`` and ``grad``.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.interpolate import RegularGridInterpolator
    >>> f = RegularGridInterpolator((np.array([0.0, 1.0, 2.0]),), np.array([0.0, 10.0, 40.0]))
    >>> f(np.array([0.5, 1.5]))
    array([ 5., 25.])
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device, to_numpy
from funcgrad.core import Tracer
from funcgrad.scipy._cubic_hermite import (  # noqa: F401
    Akima1DInterpolator,
    CubicHermiteSpline,
    PchipInterpolator,
    pchip_interpolate,
)
from funcgrad.scipy._device import keep_host_inputs_on_host as _keep_host_inputs_on_host
from funcgrad.scipy._interp1d import CubicSpline, PPoly, interp1d  # noqa: F401
from funcgrad.tree_util import register_pytree_node

__all__ = ["RegularGridInterpolator", "interpn", "PPoly", "CubicSpline", "interp1d",
           "CubicHermiteSpline", "PchipInterpolator", "Akima1DInterpolator",
           "pchip_interpolate"]

_METHODS = ("linear", "nearest", "slinear")  # slinear: the linear spline, the same values


def _concrete(x: Any) -> numpy.ndarray | None:
    """The host value of ``x``, or None while it is traced."""
    if isinstance(x, Tracer):
        return None
    return to_numpy(fnp.asarray(x))


def _gather(a: Any, idx: tuple) -> Any:
    """``a[idx]`` for traced or host index arrays (``a`` may be a NumPy array)."""
    return fnp.at(a)[idx].get()


def _points(xi: Any, ndim: int) -> Any:
    """Query points as ``(..., ndim)``: a tuple of broadcastable coordinate arrays or an
    array whose last axis holds the coordinates (a 1-D array is a list of points)."""
    if isinstance(xi, tuple) and len(xi) == 1:
        xi = xi[0]
    if isinstance(xi, tuple):
        return fnp.stack(fnp.broadcast_arrays(*[fnp.asarray(c) for c in xi]), axis=-1)
    xi = fnp.asarray(xi)
    if xi.ndim == 1:
        xi = fnp.reshape(xi, (-1, ndim))
    return xi


class RegularGridInterpolator:
    """Interpolation on the grid ``points`` (one strictly ascending or descending 1-D array
    per dimension) of ``values`` (shape ``(len(p0), len(p1), ..., *trailing)``), as
    ``scipy.interpolate.RegularGridInterpolator``. ``method``: ``"linear"`` or
    ``"nearest"``. Points outside the grid give ``fill_value`` (nan by default; ``None``
    extrapolates linearly). ``bounds_error=True`` raises ``ValueError`` for such points, as
    SciPy (concrete query points only: it cannot be checked under ``jit``); the default is
    ``False``, as in JAX (SciPy's is ``True``).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.interpolate import RegularGridInterpolator
        >>> grid = (np.array([0.0, 1.0, 2.0]), np.array([0.0, 1.0]))
        >>> f = RegularGridInterpolator(grid, np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]))
        >>> f(np.array([[0.5, 0.5], [3.0, 0.0]]))
        array([1.5, nan])
    """

    def __init__(self, points: Any, values: Any, method: str = "linear",
                 bounds_error: bool = False, fill_value: Any = numpy.nan) -> None:
        if method not in _METHODS:
            raise ValueError(f"RegularGridInterpolator: method {method!r} is not defined "
                             f"(supported: {_METHODS}; SciPy's spline methods are not)")
        values = fnp.asarray(values)
        if not fnp.issubdtype(values.dtype, fnp.inexact):
            values = values.astype(numpy.float64)
        # The grid lives with the values (a NumPy grid for device values, say).
        device = get_aval(values).device or get_default_device()
        values = device_put(values, device)
        points = tuple(points)
        if len(points) > values.ndim:
            raise ValueError(f"RegularGridInterpolator: there are {len(points)} point arrays, "
                             f"but values has {values.ndim} dimensions")
        grid = []
        for d, p in enumerate(points):
            p = fnp.asarray(p)
            if p.ndim != 1:
                raise ValueError(f"RegularGridInterpolator: the points in dimension {d} must "
                                 f"be 1-dimensional, got shape {p.shape}")
            if p.shape[0] != values.shape[d]:
                raise ValueError(f"RegularGridInterpolator: there are {p.shape[0]} points and "
                                 f"{values.shape[d]} values in dimension {d}")
            host = _concrete(p)
            if host is not None:
                diffs = numpy.diff(host)
                if numpy.all(diffs < 0) and host.size > 1:
                    p = fnp.flip(p)
                    values = fnp.flip(values, axis=d)
                elif not numpy.all(diffs > 0):
                    raise ValueError(f"RegularGridInterpolator: the points in dimension {d} "
                                     "must be strictly ascending or descending")
            if not fnp.issubdtype(p.dtype, fnp.inexact):
                p = p.astype(values.dtype)
            grid.append(device_put(p, device))
        if fill_value is not None:
            fill_value = fnp.asarray(fill_value)
            if not isinstance(fill_value, Tracer):  # with the values, for the final select
                fill_value = device_put(fill_value, device)
            if fill_value.dtype.kind == "c" and values.dtype.kind != "c":
                raise ValueError("RegularGridInterpolator: fill_value must be None or of a "
                                 "type compatible with values")
        self.grid = tuple(grid)
        self.values = values
        self.method = "linear" if method == "slinear" else method
        self.bounds_error = bool(bounds_error)
        self.fill_value = fill_value

    def __call__(self, xi: Any, method: str | None = None) -> Any:
        """Interpolated values at ``xi`` (shape ``(..., ndim)`` or a tuple of coordinate
        arrays): shape ``xi.shape[:-1] + values.shape[ndim:]``."""
        method = self.method if method is None else method
        method = "linear" if method == "slinear" else method
        if method not in _METHODS:
            raise ValueError(f"RegularGridInterpolator: method {method!r} is not defined")
        ndim = len(self.grid)
        xi = _points(xi, ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(f"RegularGridInterpolator: the requested sample points xi have "
                             f"dimension {xi.shape[-1]}, but this interpolator has dimension "
                             f"{ndim}")
        shape = xi.shape[:-1]
        flat = fnp.reshape(xi, (-1, ndim))
        if not isinstance(flat, Tracer):  # host query points go where the values live
            flat = device_put(flat, get_aval(self.values).device or get_default_device())
        if not fnp.issubdtype(flat.dtype, fnp.inexact):
            flat = flat.astype(self.values.dtype)
        if self.bounds_error:
            self._check_bounds(flat)
        indices, dists, outside = self._find_indices(flat)
        if method == "linear":
            out = self._linear(indices, dists)
        else:
            out = _gather(self.values, tuple(fnp.where(t <= 0.5, i, i + 1)
                                             for i, t in zip(indices, dists)))
            # A nan coordinate has no nearest point: nan, as SciPy.
            nan = fnp.any(fnp.isnan(flat), axis=-1)
            out = fnp.where(fnp.reshape(nan, nan.shape + (1,) * (out.ndim - 1)), numpy.nan, out)
        if self.fill_value is not None:
            mask = fnp.reshape(outside, outside.shape + (1,) * (out.ndim - 1))
            out = fnp.where(mask, self.fill_value.astype(out.dtype), out)
        return fnp.reshape(out, shape + tuple(self.values.shape[ndim:]))

    def _check_bounds(self, flat: Any) -> None:
        host = _concrete(flat)
        grid = [_concrete(g) for g in self.grid]
        if host is None or any(g is None for g in grid):
            raise ValueError("RegularGridInterpolator: bounds_error=True needs concrete query "
                             "points and grid (it cannot be checked under jit/vmap/grad); use "
                             "bounds_error=False")
        for d, g in enumerate(grid):
            if numpy.any((host[:, d] < g[0]) | (host[:, d] > g[-1])):
                raise ValueError(f"One of the requested xi is out of bounds in dimension {d}")

    def _find_indices(self, flat: Any) -> tuple[list[Any], list[Any], Any]:
        indices, dists = [], []
        outside = fnp.zeros_like(flat[:, 0], dtype=bool)  # on the query points' device
        for d, g in enumerate(self.grid):
            x = flat[:, d]
            n = g.shape[0]
            i = fnp.clip(fnp.searchsorted(g, x) - 1, 0, max(n - 2, 0))
            if n > 1:
                lo, hi = _gather(g, (i,)), _gather(g, (i + 1,))
                t = (x - lo) / (hi - lo)
            else:  # one point: every query sits on it
                t = fnp.zeros_like(x)
            indices.append(i)
            dists.append(t)
            outside = outside | (x < g[0]) | (x > g[-1])
        return indices, dists, outside

    def _linear(self, indices: list[Any], dists: list[Any]) -> Any:
        trailing = (slice(None),) + (None,) * (self.values.ndim - len(indices))
        out = None
        for corner in itertools.product(*[(0, 1) for _ in indices]):
            weight = None
            for c, t in zip(corner, dists):
                w = t if c else 1.0 - t
                weight = w if weight is None else weight * w
            idx = tuple(fnp.minimum(i + c, self.values.shape[d] - 1)
                        for d, (i, c) in enumerate(zip(indices, corner)))
            term = _gather(self.values, idx) * weight[trailing]
            out = term if out is None else out + term
        return out


def interpn(points: Any, values: Any, xi: Any, method: str = "linear",
            bounds_error: bool = True, fill_value: Any = numpy.nan) -> Any:
    """Interpolation on a regular grid in one call, as ``scipy.interpolate.interpn``:
    ``RegularGridInterpolator(points, values, method, bounds_error, fill_value)(xi)``, with
    SciPy's default ``bounds_error=True`` (a concrete query outside the grid raises).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.interpolate import interpn
        >>> interpn((np.array([0.0, 1.0, 2.0]),), np.array([0.0, 10.0, 40.0]),
        ...         np.array([[0.5], [1.5]]))
        array([ 5., 25.])
    """
    return RegularGridInterpolator(points, values, method=method, bounds_error=bounds_error,
                                   fill_value=fill_value)(xi)


def _flatten(obj: RegularGridInterpolator) -> tuple[tuple, tuple]:
    return (obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)


def _unflatten(aux: tuple, children: tuple) -> RegularGridInterpolator:
    obj = object.__new__(RegularGridInterpolator)
    obj.grid, obj.values, obj.fill_value = children
    obj.method, obj.bounds_error = aux
    return obj


register_pytree_node(RegularGridInterpolator, _flatten, _unflatten)

# NumPy inputs compute on the host whatever the default device (funcgrad.scipy._device)
_keep_host_inputs_on_host(globals(), __all__)
