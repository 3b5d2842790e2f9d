"""One-dimensional interpolation of ``scipy.interpolate``: ``PPoly`` (piecewise
polynomials), ``CubicSpline`` (every ``bc_type``) and ``interp1d`` (the kinds ``linear``,
``nearest``, ``nearest-up``, ``zero``, ``slinear``, ``previous``, ``next``, ``cubic``).

Written with funcgrad arrays: the spline's coefficients solve a linear system in ``y`` (a
dense solve, differentiable in ``x`` and ``y``), evaluation is a search and a Horner
polynomial, so values, derivatives and integrals are differentiable and work under ``jit``
and ``vmap``. The objects are pytrees.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.interpolate import CubicSpline
    >>> cs = CubicSpline(np.arange(5.0), np.arange(5.0) ** 3)
    >>> cs(np.array([1.5, 2.5]))
    array([ 3.375, 15.625])
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device
from funcgrad.core import Tracer
from funcgrad.ops import banded as _banded
from funcgrad.tree_util import register_pytree_node

__all__ = ["PPoly", "CubicSpline", "interp1d"]


def _float(v: Any) -> Any:
    v = fnp.asarray(v)
    return v if fnp.issubdtype(v.dtype, fnp.inexact) else v.astype(fnp.float64)


def _device(*vs: Any) -> str:
    """The device of the first array among ``vs`` that lives on one (else the default)."""
    for v in vs:
        dev = getattr(get_aval(v), "device", None) if hasattr(v, "shape") else None
        if dev is not None and not isinstance(v, numpy.ndarray):
            return dev
    return get_default_device()


def _to(device: str, v: Any) -> Any:
    """``v`` on ``device`` (host constants must not meet device arrays silently)."""
    return v if isinstance(v, Tracer) else device_put(v, device)


class PPoly:
    """A piecewise polynomial, as ``scipy.interpolate.PPoly``: on ``[x[i], x[i+1]]`` it is
    ``sum_m c[m, i] (x - x[i])**(k - m)`` (``c`` of shape ``(k + 1, len(x) - 1, ...)``).
    ``extrapolate``: True (the end pieces continue), False (nan outside) or ``"periodic"``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.interpolate import PPoly
        >>> p = PPoly(np.array([[1.0, 1.0], [0.0, 1.0]]), np.array([0.0, 1.0, 2.0]))
        >>> p(np.array([0.5, 1.5]))   # x on [0, 1], then (x - 1) + 1
        array([0.5, 1.5])
    """

    def __init__(self, c: Any, x: Any, extrapolate: Any = True, axis: int = 0) -> None:
        dev = _device(c, x)
        self.c = _to(dev, _float(c))
        self.x = _to(dev, _float(x))
        if self.c.ndim < 2 or self.x.ndim != 1 or self.c.shape[1] != self.x.shape[0] - 1:
            raise ValueError(f"PPoly: c must have shape (k + 1, len(x) - 1, ...), got "
                             f"{self.c.shape} for {self.x.shape[0]} breakpoints")
        self.extrapolate = extrapolate
        self.axis = axis

    def _locate(self, xq: Any) -> tuple[Any, Any, Any]:
        x = self.x
        if self.extrapolate == "periodic":
            period = x[-1] - x[0]
            xq = x[0] + (xq - x[0]) % period
        i = fnp.clip(fnp.searchsorted(x, xq, side="right") - 1, 0, x.shape[0] - 2)
        outside = (xq < x[0]) | (xq > x[-1])
        return xq, i, outside

    def __call__(self, x: Any, nu: int = 0, extrapolate: Any = None) -> Any:
        """Evaluate the ``nu``-th derivative at ``x`` (the result has shape
        ``x.shape + c.shape[2:]``, SciPy's, with ``axis`` placed as given)."""
        obj = self.derivative(nu) if nu > 0 else (self.antiderivative(-nu) if nu < 0
                                                  else self)
        ext = self.extrapolate if extrapolate is None else extrapolate
        xq = _to(_device(obj.c), _float(x))
        xq = xq.astype(numpy.result_type(xq.dtype, obj.c.dtype))
        shape = xq.shape
        flat = fnp.reshape(xq, (-1,))
        saved, obj.extrapolate = obj.extrapolate, ext
        t, i, outside = obj._locate(flat)
        obj.extrapolate = saved
        d = t - fnp.take(obj.x, i)
        coef = fnp.take(obj.c, i, axis=1)  # (k + 1, m, ...)
        trailing = (1,) * (coef.ndim - 2)
        d = fnp.reshape(d, d.shape + trailing)
        out = coef[0]
        for m in range(1, coef.shape[0]):
            out = out * d + coef[m]
        if ext is False or ext is None and self.extrapolate is False:
            out = fnp.where(fnp.reshape(outside, outside.shape + trailing), numpy.nan, out)
        out = fnp.reshape(out, shape + obj.c.shape[2:])
        if self.axis != 0 and len(shape) + obj.c.ndim - 2 > 0:
            out = fnp.moveaxis(out, list(range(len(shape))),
                               list(range(self.axis, self.axis + len(shape))))
        return out

    def _with(self, c: Any, x: Any = None) -> PPoly:
        new = object.__new__(type(self) if type(self) is PPoly else PPoly)
        new.c, new.x = c, self.x if x is None else x
        new.extrapolate, new.axis = self.extrapolate, self.axis
        return new

    def derivative(self, nu: int = 1) -> PPoly:
        """The ``nu``-th derivative, a piecewise polynomial of lower degree."""
        if nu < 0:
            return self.antiderivative(-nu)
        c = self.c
        for _ in range(nu):
            k = c.shape[0] - 1
            if k == 0:
                c = fnp.zeros_like(c)
                break
            powers = numpy.arange(k, 0, -1, dtype=float).reshape((-1,) + (1,) * (c.ndim - 1))
            c = c[:-1] * _to(_device(c), powers)
        return self._with(c)

    def antiderivative(self, nu: int = 1) -> PPoly:
        """The ``nu``-th antiderivative, zero at ``x[0]`` and continuous (SciPy's)."""
        if nu < 0:
            return self.derivative(-nu)
        c = self.c
        x = self.x
        for _ in range(nu):
            k = c.shape[0]
            powers = numpy.arange(k, 0, -1, dtype=float).reshape((-1,) + (1,) * (c.ndim - 1))
            integ = c / _to(_device(c), powers)
            # each piece's value at its right end, accumulated: the constants of continuity
            h = fnp.reshape(x[1:] - x[:-1], (-1,) + (1,) * (c.ndim - 2))
            ends = integ[0]
            for m in range(1, k):
                ends = ends * h + integ[m]
            ends = ends * h
            const = fnp.concatenate([fnp.zeros_like(ends[:1]), fnp.cumsum(ends, axis=0)[:-1]])
            c = fnp.concatenate([integ, const[None]], axis=0)
        new = self._with(c)
        if new.extrapolate == "periodic":
            new.extrapolate = False  # SciPy: an antiderivative of a periodic spline is not
        return new

    def integrate(self, a: Any, b: Any, extrapolate: Any = None) -> Any:
        """The definite integral from ``a`` to ``b`` (periodic: whole periods counted)."""
        ext = self.extrapolate if extrapolate is None else extrapolate
        anti = self.antiderivative()
        if ext == "periodic":
            x0, x1 = self.x[0], self.x[-1]
            period = x1 - x0
            a_, b_ = _float(a), _float(b)
            sign = fnp.where(b_ < a_, -1.0, 1.0)
            lo, hi = fnp.minimum(a_, b_), fnp.maximum(a_, b_)
            n_per = fnp.floor((hi - lo) / period)
            full = anti(x1, extrapolate=True) - anti(x0, extrapolate=True)
            lo_w = x0 + (lo - x0) % period
            hi_w = lo_w + (hi - lo - n_per * period)
            part = fnp.where(hi_w <= x1,
                             anti(hi_w, extrapolate=True) - anti(lo_w, extrapolate=True),
                             anti(x1, extrapolate=True) - anti(lo_w, extrapolate=True)
                             + anti(x0 + (hi_w - x1), extrapolate=True)
                             - anti(x0, extrapolate=True))
            return sign * (n_per * full + part)
        return anti(b, extrapolate=ext) - anti(a, extrapolate=ext)


def _bc_pair(bc_type: Any) -> list[Any]:
    if isinstance(bc_type, str):
        return [bc_type, bc_type]
    if len(bc_type) != 2:
        raise ValueError("CubicSpline: bc_type must be a string or a pair of conditions")
    return list(bc_type)


def _bc_norm(bc: Any, end: str) -> Any:
    if isinstance(bc, str):
        if bc == "clamped":
            return (1, 0.0)
        if bc == "natural":
            return (2, 0.0)
        if bc in ("not-a-knot", "periodic"):
            return bc
        raise ValueError(f"CubicSpline: bc_type={bc!r} is not allowed")
    if not isinstance(bc, (tuple, list)) or len(bc) != 2:
        raise ValueError(f"CubicSpline: the {end} condition must be a string or a pair "
                         f"(order, value), got {bc!r}")
    order, value = bc
    if order not in (1, 2):
        raise ValueError(f"CubicSpline: the {end} derivative order must be 1 or 2, got "
                         f"{order!r}")
    return (order, value)


def _bc_value(bc: Any, end: str, trail: tuple, dt: Any, dev: str) -> Any:
    """An ``(order, value)`` condition with its value as an array of y's trailing shape (one
    derivative per curve), as SciPy: a scalar for 2-D ``y`` is refused, not broadcast."""
    if isinstance(bc, str):
        return bc
    order, value = bc
    value = fnp.asarray(value)
    if value.shape != tuple(trail):
        raise ValueError(f"CubicSpline: the {end} derivative value has shape {value.shape}; "
                         f"it must be y's shape without the interpolation axis, "
                         f"{tuple(trail)}")
    if not fnp.issubdtype(value.dtype, fnp.inexact):
        value = value.astype(dt)
    return (order, _to(dev, value))


class CubicSpline(PPoly):
    """The cubic spline through ``(x, y)`` (``y``'s ``axis`` runs along ``x``), twice
    continuously differentiable, as ``scipy.interpolate.CubicSpline``: ``bc_type``
    ``"not-a-knot"`` (default), ``"natural"``, ``"clamped"``, ``"periodic"``, or a pair of
    ``(order, value)`` end conditions. ``extrapolate`` defaults to True (``"periodic"`` for
    periodic splines). Differentiable in ``x`` and ``y``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.interpolate import CubicSpline
        >>> cs = CubicSpline(np.array([0.0, 1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.0, 1.0]),
        ...                  bc_type="natural")
        >>> cs(np.array([0.5, 1.5])).round(6)
        array([0.75, 0.5 ])
    """

    def __init__(self, x: Any, y: Any, axis: int = 0, bc_type: Any = "not-a-knot",
                 extrapolate: Any = None) -> None:
        x, y = _float(x), _float(y)
        dev = _device(y, x)
        x, y = _to(dev, x), _to(dev, y)
        if x.ndim != 1:
            raise ValueError("CubicSpline: x must be 1-dimensional")
        n = x.shape[0]
        if n < 2:
            raise ValueError("CubicSpline: x must contain at least 2 elements")
        ax = axis % y.ndim if y.ndim else 0
        if y.ndim == 0 or y.shape[ax] != n:
            raise ValueError(f"CubicSpline: the length of y along axis {axis} doesn't match "
                             f"the length of x ({n})")
        if not isinstance(x, Tracer) and not bool(numpy.all(numpy.diff(numpy.asarray(
                x.tolist())) > 0)):
            raise ValueError("CubicSpline: x must be strictly increasing sequence.")
        dt = numpy.result_type(x.dtype, y.dtype)
        x, y = x.astype(dt.type(0).real.dtype if dt.kind == "c" else dt), y.astype(dt)
        y = fnp.moveaxis(y, ax, 0)
        bc = [_bc_norm(b, e) for b, e in zip(_bc_pair(bc_type), ("start", "end"))]
        bc = [_bc_value(b, e, y.shape[1:], dt, dev) for b, e in zip(bc, ("start", "end"))]
        periodic = bc[0] == "periodic" or bc[1] == "periodic"
        if periodic and bc[0] != bc[1]:
            raise ValueError("CubicSpline: if any of the conditions is 'periodic', both must "
                             "be")
        if periodic and not isinstance(y, Tracer) and not numpy.allclose(
                numpy.asarray(y[0].tolist()), numpy.asarray(y[-1].tolist()),
                rtol=1e-15, atol=1e-15):
            raise ValueError("The first and last `y` point along axis 0 must be identical "
                             "(within machine precision) when bc_type='periodic'.")
        if extrapolate is None:
            extrapolate = "periodic" if periodic else True
        trail = (1,) * (y.ndim - 1)
        dx = x[1:] - x[:-1]
        dxr = fnp.reshape(dx, (-1,) + trail)
        slope = (y[1:] - y[:-1]) / dxr
        if n == 2:
            bc = [(1, slope[0]) if b in ("not-a-knot", "periodic") else b for b in bc]
            periodic = False
        if n == 3 and bc[0] == "not-a-knot" and bc[1] == "not-a-knot":
            a = fnp.stack([fnp.stack([1.0 + 0 * dx[0], 1.0 + 0 * dx[0], 0 * dx[0]]),
                           fnp.stack([dx[1], 2.0 * (dx[0] + dx[1]), dx[0]]),
                           fnp.stack([0 * dx[0], 1.0 + 0 * dx[0], 1.0 + 0 * dx[0]])])
            rhs = fnp.stack([2.0 * slope[0], 3.0 * (dxr[0] * slope[1] + dxr[1] * slope[0]),
                             2.0 * slope[1]])
            s = _solve(a, rhs)
        elif n == 3 and periodic:
            t = fnp.sum(slope / dxr, axis=0) / fnp.sum(1.0 / dxr, axis=0)
            s = fnp.broadcast_to(t, (n,) + y.shape[1:])
        elif periodic:
            s = _periodic_slopes(dx, dxr, slope, n)
        else:
            s = _slopes(x, dx, dxr, y, slope, bc, n)
        t = (s[:-1] + s[1:] - 2.0 * slope) / dxr
        c = fnp.stack([t / dxr, (slope - s[:-1]) / dxr - t, s[:-1], y[:-1]])
        super().__init__(c, x, extrapolate=extrapolate, axis=ax)


def _solve(a: Any, rhs: Any) -> Any:
    shape = rhs.shape
    out = fnp.linalg.solve(a, fnp.reshape(rhs, (shape[0], -1)))
    return fnp.reshape(out, shape)


def _slopes(x: Any, dx: Any, dxr: Any, y: Any, slope: Any, bc: list, n: int) -> Any:
    """The derivatives at the knots: SciPy's tridiagonal system, solved as a band."""
    zero = 0.0 * dx[0]
    diag_mid = 2.0 * (dx[:-1] + dx[1:])
    rhs_mid = 3.0 * (dxr[1:] * slope[:-1] + dxr[:-1] * slope[1:])
    start, end = bc
    if start == "not-a-knot":
        d = x[2] - x[0]
        d0, up0 = dx[1], d
        rhs0 = ((dxr[0] + 2.0 * d) * dxr[1] * slope[0] + dxr[0] ** 2 * slope[1]) / d
    elif start[0] == 1:
        d0, up0, rhs0 = 1.0 + zero, zero, start[1] + 0.0 * slope[0]
    else:
        d0, up0 = 2.0 * dx[0], dx[0]
        rhs0 = -0.5 * start[1] * dxr[0] ** 2 + 3.0 * (y[1] - y[0])
    if end == "not-a-knot":
        d = x[-1] - x[-3]
        dn, lown = dx[-2], d
        rhsn = (dxr[-1] ** 2 * slope[-2] + (2.0 * d + dxr[-1]) * dxr[-2] * slope[-1]) / d
    elif end[0] == 1:
        dn, lown, rhsn = 1.0 + zero, zero, end[1] + 0.0 * slope[-1]
    else:
        dn, lown = 2.0 * dx[-1], dx[-1]
        rhsn = 0.5 * end[1] * dxr[-1] ** 2 + 3.0 * (y[-1] - y[-2])
    main = fnp.concatenate([fnp.reshape(d0, (1,)), diag_mid, fnp.reshape(dn, (1,))])
    upper = fnp.concatenate([fnp.reshape(up0, (1,)), dx[:-1]])       # a[i, i + 1]
    lower = fnp.concatenate([dx[1:], fnp.reshape(lown, (1,))])       # a[i + 1, i]
    rhs = fnp.concatenate([rhs0[None], rhs_mid, rhsn[None]])
    # the band storage of the tridiagonal matrix and one banded LU (SciPy's solve_banded):
    # O(n), where a dense solve took O(n^3) time and O(n^2) memory (3000 knots: seconds)
    zero1 = fnp.zeros_like(main[:1])
    ab = fnp.stack([fnp.concatenate([zero1, upper]), main, fnp.concatenate([lower, zero1])])
    dt = fnp.result_type(ab, rhs)
    flat = fnp.reshape(rhs, (rhs.shape[0], -1)).astype(dt)
    out = _banded.banded_solve(ab.astype(dt), flat, lower=1, upper=1)
    return fnp.reshape(out, rhs.shape)


def _periodic_slopes(dx: Any, dxr: Any, slope: Any, n: int) -> Any:
    """The derivatives of a periodic spline: the cyclic system on ``s[0..n-2]``
    (``s[n-1] = s[0]``)."""
    m = n - 1
    dx_prev = fnp.concatenate([dx[-1:], dx[:-1]])      # dx[i - 1], cyclic
    sl_prev = fnp.concatenate([slope[-1:], slope[:-1]])
    dxp = fnp.reshape(dx_prev, (-1,) + (1,) * (slope.ndim - 1))
    main = 2.0 * (dx_prev + dx)
    rhs = 3.0 * (dxr * sl_prev + dxp * slope)
    # the cyclic tridiagonal matrix (corners dx[0] at (0, m - 1) and dx_prev[-1] at
    # (m - 1, 0)) is a band plus u v^T: Sherman-Morrison over two banded solves, O(n)
    # (SciPy's periodic route too), where a dense solve took O(n^3)
    beta, alpha = dx[0], dx_prev[-1]
    gamma = -main[0]
    unit = numpy.zeros((2, m))
    unit[0, 0] = unit[1, -1] = 1.0
    e0, el = _to(_device(dx), unit[0]), _to(_device(dx), unit[1])
    band_main = main - gamma * e0 - (alpha * beta / gamma) * el
    zero1 = fnp.zeros_like(main[:1])
    ab = fnp.stack([fnp.concatenate([zero1, dx_prev[:-1]]), band_main,
                    fnp.concatenate([dx[1:], zero1])])
    u = gamma * e0 + alpha * el
    v = e0 + (beta / gamma) * el
    dt = fnp.result_type(ab, rhs)
    flat = fnp.reshape(rhs, (m, -1)).astype(dt)
    yz = _banded.banded_solve(ab.astype(dt), fnp.concatenate([flat, u[:, None].astype(dt)], 1),
                              lower=1, upper=1)
    y, z = yz[:, :-1], yz[:, -1:]
    s = y - z * (v @ y)[None, :] / (1.0 + v @ z)
    s = fnp.reshape(s, rhs.shape)
    return fnp.concatenate([s, s[:1]])


_KINDS = {"linear": 1, "slinear": 1, "nearest": 0, "nearest-up": 0, "zero": 0,
          "previous": 0, "next": 0, "cubic": 3, "quadratic": 2}


class interp1d:  # noqa: N801 (SciPy's name)
    """Interpolate a 1-D function, as ``scipy.interpolate.interp1d`` (legacy in SciPy but
    everywhere in code): ``kind`` ``"linear"``/``"slinear"``, ``"nearest"`` (half-integers
    down), ``"nearest-up"``, ``"zero"``/``"previous"``, ``"next"``, ``"cubic"`` (the
    not-a-knot cubic spline), or an integer order 0, 1, 3. Outside the data:
    ``bounds_error`` (default: raise unless ``fill_value="extrapolate"``), ``fill_value`` a
    value, a ``(below, above)`` pair or ``"extrapolate"``. Differentiable in ``y`` and the
    query points.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.interpolate import interp1d
        >>> f = interp1d(np.array([0.0, 1.0, 2.0]), np.array([0.0, 10.0, 40.0]),
        ...              fill_value="extrapolate")
        >>> f(np.array([0.5, 3.0]))
        array([ 5., 70.])
    """

    def __init__(self, x: Any, y: Any, kind: Any = "linear", axis: int = -1,
                 copy: bool = True, bounds_error: Any = None, fill_value: Any = numpy.nan,
                 assume_sorted: bool = False) -> None:
        del copy
        if isinstance(kind, int | numpy.integer) and not isinstance(kind, bool):
            kind = {0: "zero", 1: "slinear", 3: "cubic"}.get(int(kind), int(kind))
        if kind not in _KINDS:
            raise ValueError(f"interp1d: kind {kind!r} is not supported (linear, slinear, "
                             "nearest, nearest-up, zero, previous, next, cubic)")
        if kind == "quadratic" or kind == 2:
            raise ValueError("interp1d: kind='quadratic' is not available in funcgrad (use "
                             "'cubic' or 'slinear')")
        x, y = _float(x), _float(y)
        dev = _device(y, x)
        x, y = _to(dev, x), _to(dev, y)
        if x.ndim != 1:
            raise ValueError("the x array must have exactly one dimension.")
        ax = axis % y.ndim if y.ndim else 0
        if y.ndim == 0 or y.shape[ax] != x.shape[0]:
            raise ValueError("x and y arrays must be equal in length along interpolation "
                             "axis.")
        if not assume_sorted:
            order = fnp.argsort(x)
            x = fnp.take(x, order)
            y = fnp.take(y, order, axis=ax)
        self.x, self.y, self.axis, self.kind = x, y, ax, kind
        extrapolate = isinstance(fill_value, str) and fill_value == "extrapolate"
        if isinstance(fill_value, str) and not extrapolate:
            raise ValueError(f"interp1d: fill_value must be a number, a pair or "
                             f"'extrapolate', got {fill_value!r}")
        if bounds_error is None:
            bounds_error = not extrapolate
        if bounds_error and extrapolate:
            raise ValueError("Cannot extrapolate and raise at the same time.")
        self.bounds_error = bool(bounds_error)
        self._extrapolate = extrapolate
        self.fill_value = fill_value
        if kind == "cubic":
            if x.shape[0] < 4:
                raise ValueError("interp1d: kind='cubic' needs at least 4 points")
            self._spline = CubicSpline(x, y, axis=ax)
        else:
            self._spline = None

    def __call__(self, x_new: Any) -> Any:
        xq = _to(_device(self.y), _float(x_new))
        x, y, ax = self.x, self.y, self.axis
        if self.bounds_error and not isinstance(xq, Tracer) and not isinstance(x, Tracer):
            host = numpy.asarray(xq.tolist(), dtype=float)
            lo, hi = float(x[0]), float(x[-1])
            if numpy.any(host < lo):
                bad = host[host < lo][0]
                raise ValueError(f"A value ({bad}) in x_new is below the interpolation range's"
                                 f" minimum value ({lo}).")
            if numpy.any(host > hi):
                bad = host[host > hi][0]
                raise ValueError(f"A value ({bad}) in x_new is above the interpolation range's"
                                 f" maximum value ({hi}).")
        ym = fnp.moveaxis(y, ax, 0)
        n = x.shape[0]
        flat = fnp.reshape(xq, (-1,))
        trail = (1,) * (ym.ndim - 1)
        if self.kind == "cubic":
            out = self._spline(flat, extrapolate=True)
            out = fnp.reshape(out, (flat.shape[0],) + ym.shape[1:])
        elif self.kind in ("linear", "slinear"):
            i = fnp.clip(fnp.searchsorted(x, flat, side="left") - 1, 0, n - 2)
            x_lo, x_hi = fnp.take(x, i), fnp.take(x, i + 1)
            y_lo, y_hi = fnp.take(ym, i, axis=0), fnp.take(ym, i + 1, axis=0)
            w = fnp.reshape((flat - x_lo) / (x_hi - x_lo), (-1,) + trail)
            out = y_lo + w * (y_hi - y_lo)  # SciPy's slope form
        else:
            if self.kind in ("nearest", "nearest-up"):
                mids = 0.5 * (x[1:] + x[:-1])
                side = "left" if self.kind == "nearest" else "right"
                i = fnp.searchsorted(mids, flat, side=side)
            elif self.kind in ("zero", "previous"):
                i = fnp.searchsorted(x, flat, side="right") - 1
                if self.kind == "zero":
                    i = fnp.clip(i, 0, n - 1)
            else:  # next
                i = fnp.searchsorted(x, flat, side="left")
            below, above = i < 0, i > n - 1
            out = fnp.take(ym, fnp.clip(i, 0, n - 1), axis=0)
            if self.kind in ("previous", "next"):
                # no previous sample below the data, no next one above it: nan (SciPy's,
                # also when extrapolating; the other side extends the end sample)
                none = below if self.kind == "previous" else above
                out = fnp.where(fnp.reshape(none, (-1,) + trail), numpy.nan, out)
        out = fnp.reshape(out, xq.shape + ym.shape[1:])
        if not self._extrapolate:
            fv = self.fill_value
            below_v, above_v = (fv if isinstance(fv, tuple) and len(fv) == 2 else (fv, fv))
            outside_lo = fnp.reshape(xq < x[0], xq.shape + trail)
            outside_hi = fnp.reshape(xq > x[-1], xq.shape + trail)
            dev = _device(out)
            out = fnp.where(outside_lo, _to(dev, fnp.asarray(below_v)), out)
            out = fnp.where(outside_hi, _to(dev, fnp.asarray(above_v)), out)
        if ax != 0 and xq.ndim + ym.ndim - 1 > 0:
            out = fnp.moveaxis(out, list(range(xq.ndim)), list(range(ax, ax + xq.ndim)))
        return out


def _ppoly_flatten(obj: PPoly) -> tuple[tuple, tuple]:
    return (obj.c, obj.x), (obj.extrapolate, obj.axis)


def _ppoly_unflatten(aux: tuple, children: tuple) -> PPoly:
    obj = object.__new__(PPoly)
    obj.c, obj.x = children
    obj.extrapolate, obj.axis = aux
    return obj


register_pytree_node(PPoly, _ppoly_flatten, _ppoly_unflatten)
register_pytree_node(CubicSpline, _ppoly_flatten, _ppoly_unflatten)

