"""``scipy.signal``'s time-domain filters: ``lfilter`` (an IIR/FIR filter in direct form II
transposed, a ``lax.scan`` over time: differentiable in ``b``, ``a``, ``x`` and ``zi``) and
the median filters ``medfilt``/``medfilt2d`` (``scipy.ndimage.median_filter`` with zero
padding, as SciPy's).

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.signal import lfilter
    >>> lfilter([1.0], [1.0, -0.5], np.array([1.0, 0.0, 0.0, 0.0]))   # y[n] = x[n] + y[n-1]/2
    array([1.   , 0.5  , 0.25 , 0.125])
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.core import Tracer
from funcgrad.lax import scan
from funcgrad.scipy._ndimage_filters import median_filter

__all__ = ["lfilter", "medfilt", "medfilt2d"]


def _coeffs(name: str, v: Any, what: str) -> Any:
    v = fnp.asarray(v)
    if v.ndim != 1 or v.shape[0] == 0:
        raise ValueError(f"{name}: {what} must be a non-empty 1-D sequence, got shape {v.shape}")
    return v if fnp.issubdtype(v.dtype, fnp.inexact) else v.astype(fnp.float64)


def lfilter(b: Any, a: Any, x: Any, axis: int = -1, zi: Any = None) -> Any:
    """Filter ``x`` along ``axis`` with the rational transfer function ``b(z) / a(z)``:
    ``a[0] y[n] = sum_k b[k] x[n-k] - sum_{k>=1} a[k] y[n-k]``, as ``scipy.signal.lfilter``
    (direct form II transposed). With ``zi`` (the initial state, shape ``x.shape`` with
    ``axis`` of length ``max(len(a), len(b)) - 1``) returns ``(y, zf)``. ``a[0] == 0`` is an
    error when concrete.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import lfilter
        >>> lfilter([1.0, 1.0], [2.0], np.array([1.0, 2.0, 3.0]))   # moving average
        array([0.5, 1.5, 2.5])
    """
    b, a = _coeffs("lfilter", b, "b"), _coeffs("lfilter", a, "a")
    x = fnp.asarray(x)
    if not fnp.issubdtype(x.dtype, fnp.inexact):
        x = x.astype(fnp.float64)
    if x.ndim == 0:
        raise ValueError("lfilter: x must be at least 1-D")
    ax = axis % x.ndim if -x.ndim <= axis < x.ndim else None
    if ax is None:
        raise ValueError(f"lfilter: axis {axis} is out of bounds for x of dimension {x.ndim}")
    if not isinstance(a, Tracer) and float(a[0]) == 0.0:
        raise ValueError("lfilter: a[0] must be nonzero (the filter is normalised by it)")
    dt = numpy.result_type(b.dtype, a.dtype, x.dtype)
    b, a, x = b.astype(dt), a.astype(dt), x.astype(dt)
    k = max(b.shape[0], a.shape[0])
    b = fnp.pad(b, (0, k - b.shape[0])) / a[0]
    a = fnp.pad(a, (0, k - a.shape[0])) / a[0]
    n_state = k - 1
    xt = fnp.moveaxis(x, ax, 0)  # time first
    batch = xt.shape[1:]
    if zi is None:
        z0 = fnp.zeros((n_state,) + batch, dt)
    else:
        zi = fnp.asarray(zi).astype(dt)
        want = x.shape[:ax] + (n_state,) + x.shape[ax + 1:]
        if zi.shape != want:
            raise ValueError(f"lfilter: unexpected shape for zi: expected {want}, found "
                             f"{zi.shape}")
        z0 = fnp.moveaxis(zi, ax, 0)
    bcol = fnp.reshape(b, (k,) + (1,) * len(batch))
    acol = fnp.reshape(a, (k,) + (1,) * len(batch))

    def step(z: Any, xn: Any) -> tuple[Any, Any]:
        if n_state == 0:
            return z, bcol[0] * xn
        yn = bcol[0] * xn + z[0]
        # z_i <- b[i+1] x + z_{i+1} - a[i+1] y (the last one without a next state)
        nxt = fnp.concatenate([z[1:], fnp.zeros_like(z[:1])], axis=0)
        z = bcol[1:] * xn + nxt - acol[1:] * yn
        return z, yn

    zf, yt = scan(step, z0, xt)
    y = fnp.moveaxis(yt, 0, ax)
    if zi is None:
        return y
    return y, fnp.moveaxis(zf, 0, ax)


def _kernel(name: str, kernel_size: Any, ndim: int) -> tuple[int, ...]:
    if kernel_size is None:
        ks = (3,) * ndim
    elif numpy.isscalar(kernel_size):
        ks = (int(kernel_size),) * ndim
    else:
        ks = tuple(int(v) for v in kernel_size)
    if len(ks) != ndim:
        raise ValueError(f"{name}: kernel_size must have length {ndim}, got {kernel_size!r}")
    if any(v % 2 == 0 for v in ks):
        raise ValueError("Each element of kernel_size should be odd.")
    return ks


def medfilt(volume: Any, kernel_size: Any = None) -> Any:
    """Median filter with an odd ``kernel_size`` (per axis; default 3), zero beyond the
    edges, as ``scipy.signal.medfilt``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import medfilt
        >>> medfilt(np.array([2.0, 80.0, 6.0, 3.0, 1.0]))
        array([2., 6., 6., 3., 1.])
    """
    v = fnp.asarray(volume)
    ks = _kernel("medfilt", kernel_size, get_aval(v).ndim)
    return median_filter(v, size=ks, mode="constant", cval=0.0)


def medfilt2d(input: Any, kernel_size: Any = 3) -> Any:  # noqa: A002
    """:func:`medfilt` of a 2-D array (``scipy.signal.medfilt2d``).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import medfilt2d
        >>> medfilt2d(np.array([[1.0, 9.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]))
        array([[0., 1., 0.],
               [1., 1., 1.],
               [0., 1., 0.]])
    """
    v = fnp.asarray(input)
    if get_aval(v).ndim != 2:
        raise ValueError("medfilt2d: input must be 2-D")
    return medfilt(v, kernel_size)
