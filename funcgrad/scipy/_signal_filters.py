"""``scipy.signal``'s time-domain filters: ``lfilter`` (an IIR/FIR filter in direct form II
transposed, a ``lax.scan`` over time: differentiable in ``b``, ``a``, ``x`` and ``zi``),
``lfilter_zi``, ``filtfilt`` (forward-backward, zero phase) and
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
from funcgrad.api_devices import device_get
from funcgrad.avals import get_aval
from funcgrad.core import Tracer
from funcgrad.lax import scan
from funcgrad.scipy._ndimage_filters import median_filter

__all__ = ["lfilter", "lfilter_zi", "lfiltic", "filtfilt", "medfilt", "medfilt2d"]


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


def lfiltic(b: Any, a: Any, y: Any, x: Any = None) -> numpy.ndarray:
    """The initial state of :func:`lfilter` that continues past outputs ``y`` (most recent
    first) and inputs ``x``, as ``scipy.signal.lfiltic``. Host arithmetic (NumPy out).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import lfiltic
        >>> lfiltic([1.0], [1.0, -0.5], y=[2.0])
        array([1.])
    """
    a = numpy.atleast_1d(numpy.asarray(device_get(a)))
    b = numpy.atleast_1d(numpy.asarray(device_get(b)))
    if a.ndim > 1 or b.ndim > 1:
        raise ValueError("Filter coefficients `a` and `b` must be 1-D.")
    n, m = a.shape[0] - 1, b.shape[0] - 1
    if n < 0:
        raise ValueError("There must be at least one `a` coefficient.")
    k = max(m, n)
    y = numpy.asarray(device_get(y))
    if x is None:
        dt = numpy.result_type(b, a, y)
        dt = numpy.float64 if dt.kind in "biu" else dt
        x = numpy.zeros(m, dtype=dt)
    else:
        x = numpy.asarray(device_get(x))
        dt = numpy.result_type(b, a, y, x)
        dt = numpy.float64 if dt.kind in "biu" else dt
        x = x.astype(dt)
        if x.size < m:
            x = numpy.concatenate([x, numpy.zeros(m - x.size)])
    y = y.astype(dt)
    if y.size < n:
        y = numpy.concatenate([y, numpy.zeros(n - y.size)])
    zi = numpy.zeros(k, dtype=dt)
    for j in range(m):
        zi[j] = numpy.sum(b[j + 1:] * x[:m - j], axis=0)
    for j in range(n):
        zi[j] -= numpy.sum(a[j + 1:] * y[:n - j], axis=0)
    if a[0] != 1.0:
        if a[0] == 0.0:
            raise ValueError("First `a` filter coefficient must be non-zero.")
        zi /= a[0]
    return zi


def lfilter_zi(b: Any, a: Any) -> Any:
    """The initial state of :func:`lfilter` for a step response's steady state (the state
    after an infinite run of ones): the solution of ``(I - A^T) zi = b[1:] - a[1:] b[0]``,
    ``A`` the companion matrix of the normalised ``a``, as ``scipy.signal.lfilter_zi``.

    Example:
        >>> from funcgrad.scipy.signal import lfilter_zi
        >>> lfilter_zi([1.0], [1.0, -0.5])   # y = 2 in steady state: z = 0.5 y
        array([1.])
    """
    b, a = _coeffs("lfilter_zi", b, "b"), _coeffs("lfilter_zi", a, "a")
    if not isinstance(a, Tracer) and float(a[0]) == 0.0:
        raise ValueError("lfilter_zi: a[0] must be nonzero")
    dt = numpy.result_type(b.dtype, a.dtype)
    n = max(b.shape[0], a.shape[0])
    b = fnp.pad(b.astype(dt), (0, n - b.shape[0])) / a[0]
    a = fnp.pad(a.astype(dt), (0, n - a.shape[0])) / a[0]
    if n == 1:
        return fnp.zeros((0,), dt)
    # companion(a): first row -a[1:], ones below the diagonal; I - companion^T.
    comp = fnp.concatenate([-a[None, 1:], fnp.eye(n - 2, n - 1, dtype=dt)], axis=0)
    lhs = fnp.eye(n - 1, dtype=dt) - comp.T
    return fnp.linalg.solve(lhs, b[1:] - a[1:] * b[0])


def _slice(x: Any, start: int | None, stop: int | None, axis: int, step: int = 1) -> Any:
    idx = [slice(None)] * x.ndim
    idx[axis] = slice(start, stop, step)
    return x[tuple(idx)]


def _extend(x: Any, n: int, axis: int, padtype: str) -> Any:
    """``x`` extended by ``n`` samples at both ends along ``axis``: odd (point-reflected
    about the end samples), even (mirrored) or constant (the end samples repeated)."""
    left_end, right_end = _slice(x, 0, 1, axis), _slice(x, -1, None, axis)
    if padtype == "constant":
        reps = [1] * x.ndim
        reps[axis] = n
        left, right = fnp.tile(left_end, reps), fnp.tile(right_end, reps)
    else:
        left = _slice(x, n, 0, axis, -1)
        right = _slice(x, -2, -(n + 2), axis, -1)
        if padtype == "odd":
            left, right = 2 * left_end - left, 2 * right_end - right
    return fnp.concatenate([left, x, right], axis=axis)


def filtfilt(b: Any, a: Any, x: Any, axis: int = -1, padtype: str | None = "odd",
             padlen: int | None = None, method: str = "pad", irlen: Any = None) -> Any:
    """Zero-phase filtering: :func:`lfilter` forward, then backward over the result, each
    started in the steady state of the signal's end (:func:`lfilter_zi`), the signal first
    extended by ``padlen`` samples (default ``3 max(len(a), len(b))``; ``padtype`` ``"odd"``,
    ``"even"``, ``"constant"`` or None), as ``scipy.signal.filtfilt`` with ``method="pad"``
    (Gustafsson's method is not provided). Differentiable in ``b``, ``a`` and ``x``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import filtfilt
        >>> filtfilt([0.5, 0.5], [1.0], np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]))
        array([0., 1., 2., 3., 4., 5., 6., 7.])
    """
    if method != "pad":
        raise ValueError(f"filtfilt: method must be 'pad' (Gustafsson's 'gust' is not "
                         f"available), got {method!r}")
    del irlen  # Gustafsson's method only
    if padtype not in ("odd", "even", "constant", None):
        raise ValueError(f"filtfilt: unknown value '{padtype}' given to padtype; padtype "
                         "must be 'even', 'odd', 'constant', or None")
    b, a = _coeffs("filtfilt", b, "b"), _coeffs("filtfilt", a, "a")
    x = fnp.asarray(x)
    if not fnp.issubdtype(x.dtype, fnp.inexact):
        x = x.astype(fnp.float64)
    ax = axis % x.ndim if x.ndim and -x.ndim <= axis < x.ndim else None
    if ax is None:
        raise ValueError(f"filtfilt: axis {axis} is out of bounds for x of dimension {x.ndim}")
    ntaps = max(a.shape[0], b.shape[0])
    edge = 0 if padtype is None else (3 * ntaps if padlen is None else int(padlen))
    if x.shape[ax] <= edge:
        raise ValueError(f"The length of the input vector x must be greater than padlen, "
                         f"which is {edge}.")
    ext = _extend(x, edge, ax, padtype) if edge > 0 else x
    zi = lfilter_zi(b, a)
    shape = [1] * x.ndim
    shape[ax] = zi.shape[0]
    zi = fnp.reshape(zi, shape)
    # (funcgrad's multiply, not the operator: zi's constants are on the default device, and
    # NumPy input stays on the host beside them until an operation moves it)
    y, _ = lfilter(b, a, ext, axis=ax, zi=fnp.multiply(zi, _slice(ext, 0, 1, ax)))
    y_end = _slice(y, -1, None, ax)
    y, _ = lfilter(b, a, fnp.flip(y, axis=ax), axis=ax, zi=fnp.multiply(zi, y_end))
    y = fnp.flip(y, axis=ax)
    return _slice(y, edge, -edge, ax) if edge > 0 else y


_BTYPES = {"lowpass": "lowpass", "low": "lowpass", "lp": "lowpass", "l": "lowpass",
           "highpass": "highpass", "high": "highpass", "hp": "highpass", "h": "highpass",
           "bandpass": "bandpass", "band": "bandpass", "bp": "bandpass", "pass": "bandpass",
           "bandstop": "bandstop", "stop": "bandstop", "bs": "bandstop"}


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
