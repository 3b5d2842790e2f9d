"""Local cubic interpolants of ``scipy.interpolate``: ``CubicHermiteSpline`` (given
slopes), ``PchipInterpolator`` (Fritsch-Carlson monotone slopes, SciPy's end conditions),
``Akima1DInterpolator`` (``"akima"`` and ``"makima"``) and ``pchip_interpolate``.

Each is a :class:`~funcgrad.scipy.interpolate.PPoly` whose coefficients are SciPy's
formulas in funcgrad operations (selects where SciPy masks), so values, derivatives and
integrals are differentiable in ``x`` and ``y`` and work under ``jit``/``vmap``.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.interpolate import PchipInterpolator
    >>> PchipInterpolator(np.arange(4.0), np.array([0.0, 1.0, 1.0, 2.0]))(np.array([1.5]))
    array([1.])
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.api_devices import device_get
from funcgrad.core import Tracer
from funcgrad.scipy._interp1d import PPoly, _device, _float, _to

__all__ = ["CubicHermiteSpline", "PchipInterpolator", "Akima1DInterpolator",
           "pchip_interpolate"]


def _prepare(name: str, x: Any, y: Any, axis: int) -> tuple[Any, Any, Any, int, str]:
    """``x``, ``y`` with the interpolation axis first, the spacings, SciPy's checks."""
    x, y = _float(x), _float(y)
    dev = _device(y, x)
    x, y = _to(dev, x), _to(dev, y)
    if x.ndim != 1:
        raise ValueError("`x` must be 1-dimensional.")
    if x.shape[0] < 2:
        raise ValueError("`x` must contain at least 2 elements.")
    ax = axis % y.ndim if y.ndim else 0
    if y.ndim == 0 or y.shape[ax] != x.shape[0]:
        raise ValueError(f"The length of `y` along `axis`={axis} doesn't match the length of "
                         "`x`")
    if not isinstance(x, Tracer) and not bool(numpy.all(numpy.diff(numpy.asarray(
            device_get(x))) > 0)):
        raise ValueError("`x` must be strictly increasing sequence.")
    dx = x[1:] - x[:-1]
    return x, dx, fnp.moveaxis(y, ax, 0), ax, dev


def _hermite_coefficients(dx: Any, y: Any, dydx: Any) -> Any:
    dxr = fnp.reshape(dx, (-1,) + (1,) * (y.ndim - 1))
    slope = (y[1:] - y[:-1]) / dxr
    t = (dydx[:-1] + dydx[1:] - 2 * slope) / dxr
    return fnp.stack([t / dxr, (slope - dydx[:-1]) / dxr - t, dydx[:-1], y[:-1]])


class CubicHermiteSpline(PPoly):
    """The piecewise cubic matching values ``y`` and first derivatives ``dydx`` at ``x``,
    as ``scipy.interpolate.CubicHermiteSpline``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.interpolate import CubicHermiteSpline
        >>> s = CubicHermiteSpline(np.array([0.0, 1.0]), np.array([0.0, 1.0]),
        ...                        np.array([0.0, 0.0]))
        >>> s(np.array([0.5]))
        array([0.5])
    """

    def __init__(self, x: Any, y: Any, dydx: Any, axis: int = 0, extrapolate: Any = None
                 ) -> None:
        x, dx, y, ax, dev = _prepare("CubicHermiteSpline", x, y, axis)
        d = fnp.moveaxis(_to(dev, _float(dydx)), ax, 0)
        if d.shape != y.shape:
            raise ValueError("The shapes of `y` and `dydx` must be identical.")
        super().__init__(_hermite_coefficients(dx, y, d), x,
                         extrapolate=True if extrapolate is None else extrapolate, axis=ax)


def _pchip_edge(h0: Any, h1: Any, m0: Any, m1: Any) -> Any:
    d = ((2 * h0 + h1) * m0 - h0 * m1) / (h0 + h1)
    wrong_sign = fnp.sign(d) != fnp.sign(m0)
    too_big = (fnp.sign(m0) != fnp.sign(m1)) & (fnp.abs(d) > 3.0 * fnp.abs(m0))
    return fnp.where(wrong_sign, 0.0, fnp.where(too_big, 3.0 * m0, d))


def _pchip_slopes(dx: Any, y: Any) -> Any:
    hk = fnp.reshape(dx, (-1,) + (1,) * (y.ndim - 1))
    mk = (y[1:] - y[:-1]) / hk
    if y.shape[0] == 2:
        return fnp.concatenate([mk, mk])
    smk = fnp.sign(mk)
    flat = (smk[1:] != smk[:-1]) | (mk[1:] == 0) | (mk[:-1] == 0)
    w1 = 2 * hk[1:] + hk[:-1]
    w2 = hk[1:] + 2 * hk[:-1]
    safe_m0 = fnp.where(flat, 1.0, mk[:-1])
    safe_m1 = fnp.where(flat, 1.0, mk[1:])
    whmean = (w1 / safe_m0 + w2 / safe_m1) / (w1 + w2)
    inner = fnp.where(flat, 0.0, 1.0 / whmean)
    first = _pchip_edge(hk[0], hk[1], mk[0], mk[1])
    last = _pchip_edge(hk[-1], hk[-2], mk[-1], mk[-2])
    return fnp.concatenate([first[None], inner, last[None]])


class PchipInterpolator(CubicHermiteSpline):
    """The monotone piecewise cubic interpolant (PCHIP) of ``(x, y)``, as
    ``scipy.interpolate.PchipInterpolator``: slopes by the weighted harmonic mean of the
    neighbouring secants (0 at local extrema), SciPy's one-sided end slopes.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.interpolate import PchipInterpolator
        >>> p = PchipInterpolator(np.array([0.0, 1.0, 2.0]), np.array([0.0, 1.0, 4.0]))
        >>> p(np.array([0.5, 1.5])).round(6)
        array([0.3125, 2.1875])
    """

    def __init__(self, x: Any, y: Any, axis: int = 0, extrapolate: Any = None) -> None:
        xx, dx, yy, ax, dev = _prepare("PchipInterpolator", x, y, axis)
        if fnp.iscomplexobj(yy):
            raise ValueError("`PchipInterpolator` only works with real values for `y`.")
        slopes = _pchip_slopes(dx, yy)
        PPoly.__init__(self, _hermite_coefficients(dx, yy, slopes), xx,
                       extrapolate=True if extrapolate is None else extrapolate, axis=ax)


def _akima_slopes(dx: Any, y: Any, method: str) -> Any:
    trail = (1,) * (y.ndim - 1)
    if y.shape[0] == 2:
        mk = (y[1:] - y[:-1]) / fnp.reshape(dx, (-1,) + trail)
        return fnp.concatenate([mk, mk])
    inner = (y[1:] - y[:-1]) / fnp.reshape(dx, (-1,) + trail)
    m1 = 2.0 * inner[0] - inner[1]
    m0 = 2.0 * m1 - inner[0]
    mm2 = 2.0 * inner[-1] - inner[-2]
    mm1 = 2.0 * mm2 - inner[-1]
    m = fnp.concatenate([m0[None], m1[None], inner, mm2[None], mm1[None]])
    t = 0.5 * (m[3:] + m[:-3])
    dm = fnp.abs(m[1:] - m[:-1])
    if method == "makima":
        pm = fnp.abs(m[1:] + m[:-1])
        f1, f2 = dm[2:] + 0.5 * pm[2:], dm[:-2] + 0.5 * pm[:-2]
    else:
        f1, f2 = dm[2:], dm[:-2]
    f12 = f1 + f2
    defined = f12 > 1e-9 * fnp.max(f12)
    safe = fnp.where(defined, f12, 1.0)
    return fnp.where(defined, m[1:-2] + f2 / safe * (m[2:-1] - m[1:-2]), t)


class Akima1DInterpolator(CubicHermiteSpline):
    """Akima's piecewise cubic interpolant (``method="akima"``, or the modified
    ``"makima"``), as ``scipy.interpolate.Akima1DInterpolator``; ``extrapolate`` defaults
    to False (nan outside), as SciPy's.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.interpolate import Akima1DInterpolator
        >>> a = Akima1DInterpolator(np.arange(5.0), np.array([0.0, 1.0, 0.0, 1.0, 0.0]))
        >>> a(np.array([0.5, 2.5]))
        array([0.75, 0.5 ])
    """

    def __init__(self, x: Any, y: Any, axis: int = 0, *, method: str = "akima",
                 extrapolate: Any = None) -> None:
        if method not in ("akima", "makima"):
            # (SciPy raises NotImplementedError here; an unknown name is bad input)
            raise ValueError(f"Akima1DInterpolator: `method`={method!r} is unsupported; "
                             "use 'akima' or 'makima'")
        xx, dx, yy, ax, dev = _prepare("Akima1DInterpolator", x, y, axis)
        if fnp.iscomplexobj(yy):
            raise ValueError("`Akima1DInterpolator` only works with real values for `y`.")
        slopes = _akima_slopes(dx, yy, method)
        PPoly.__init__(self, _hermite_coefficients(dx, yy, slopes), xx,
                       extrapolate=False if extrapolate is None else extrapolate, axis=ax)


def pchip_interpolate(xi: Any, yi: Any, x: Any, der: Any = 0, axis: int = 0) -> Any:
    """PCHIP interpolation of ``(xi, yi)`` at ``x`` (a derivative order, or a list of them),
    as ``scipy.interpolate.pchip_interpolate``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.interpolate import pchip_interpolate
        >>> float(pchip_interpolate(np.array([0.0, 1.0, 2.0]), np.array([0.0, 1.0, 4.0]), 1.5))
        2.1875
    """
    p = PchipInterpolator(xi, yi, axis=axis)
    if isinstance(der, (list, tuple)):
        return [p.derivative(d)(x) if d else p(x) for d in der]
    return p.derivative(der)(x) if der else p(x)

