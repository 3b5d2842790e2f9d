"""The Savitzky-Golay filter of ``scipy.signal``: ``savgol_coeffs`` (host least squares, as
SciPy) and ``savgol_filter`` (a convolution with them; in ``mode="interp"`` the ends are the
window's polynomial fit, applied as a fixed matrix). Linear in the signal: differentiable,
``jit``- and ``vmap``-safe; the window and order are static.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.signal import savgol_filter
    >>> savgol_filter(np.array([0.0, 1.0, 4.0, 9.0, 16.0, 25.0]), 5, 2).round(9) + 0.0  # parabolas
    array([ 0.,  1.,  4.,  9., 16., 25.])
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device
from funcgrad.core import Tracer
from funcgrad.scipy._ndimage_filters import convolve1d

__all__ = ["savgol_coeffs", "savgol_filter"]


def _static_int(name: str, what: str, v: Any) -> int:
    if isinstance(v, Tracer) or isinstance(v, bool) or int(v) != v:
        raise ValueError(f"{name}: {what} must be a (concrete) integer, got {v!r}")
    return int(v)


def savgol_coeffs(window_length: int, polyorder: int, deriv: int = 0, delta: float = 1.0,
                  pos: int | None = None, use: str = "conv") -> numpy.ndarray:
    """The filter coefficients: the least-squares polynomial of degree ``polyorder``
    through a window of ``window_length`` samples, its ``deriv``-th derivative at ``pos``
    (the centre by default), as ``scipy.signal.savgol_coeffs`` (``use="conv"``: reversed,
    for a convolution; ``"dot"``: for a dot product). A NumPy array.

    Example:
        >>> from funcgrad.scipy.signal import savgol_coeffs
        >>> savgol_coeffs(5, 2).round(6)
        array([-0.085714,  0.342857,  0.485714,  0.342857, -0.085714])
    """
    window_length = _static_int("savgol_coeffs", "window_length", window_length)
    polyorder = _static_int("savgol_coeffs", "polyorder", polyorder)
    deriv = _static_int("savgol_coeffs", "deriv", deriv)
    if polyorder >= window_length:
        raise ValueError("polyorder must be less than window_length.")
    halflen, rem = divmod(window_length, 2)
    if pos is None:
        pos = halflen - 0.5 if rem == 0 else halflen
    if not 0 <= pos < window_length:
        raise ValueError("pos must be nonnegative and less than window_length.")
    if use not in ("conv", "dot"):
        raise ValueError("`use` must be 'conv' or 'dot'")
    if deriv > polyorder:
        return numpy.zeros(window_length)
    x = numpy.arange(-pos, window_length - pos, dtype=float)
    if use == "conv":
        x = x[::-1]
    # The minimum-norm c with sum_j c_j q(x_j) = q^(deriv)(0) / delta**deriv for every
    # polynomial q of degree <= polyorder (SciPy: q = x**k, a Vandermonde system whose powers
    # span max|x|**polyorder and lose digits: SciPy's values are 1e-8 off for 9 samples of
    # order 8 at pos=0, 1e-4 for 15 of order 10, and moved between NumPy/SciPy versions).
    # Any basis gives the same equations: Chebyshev polynomials of x mapped onto [-1, 1]
    # keep the solve well conditioned.
    mid, half = (x.max() + x.min()) / 2, max((x.max() - x.min()) / 2, 1.0)
    a = numpy.polynomial.chebyshev.chebvander((x - mid) / half, polyorder).T
    y = numpy.array([numpy.polynomial.chebyshev.chebval(
        -mid / half, numpy.polynomial.chebyshev.chebder(numpy.eye(polyorder + 1)[k], deriv))
        for k in range(polyorder + 1)]) / (half * float(delta)) ** deriv
    return numpy.linalg.lstsq(a, y, rcond=None)[0]


def _edge_matrix(window_length: int, polyorder: int, deriv: int, delta: float,
                 rows: numpy.ndarray) -> numpy.ndarray:
    """The values (or ``deriv``-th derivatives) at window positions ``rows`` of the
    least-squares polynomial through the window: a ``(len(rows), window_length)`` matrix
    (SciPy's ``polyfit`` then ``polyval`` at the ends, as one linear map). Fitted in the
    Chebyshev basis of the window mapped onto [-1, 1]: the monomials' Vandermonde matrix
    (powers up to ``window_length**polyorder``) lost every digit from 21 samples of order 12."""
    cheb = numpy.polynomial.chebyshev
    mid = (window_length - 1) / 2
    half = max(mid, 1.0)
    fit = numpy.linalg.pinv(cheb.chebvander((numpy.arange(window_length) - mid) / half,
                                            polyorder))   # Chebyshev coefficients
    ev = numpy.stack([cheb.chebval((rows - mid) / half, cheb.chebder(e, deriv))
                      for e in numpy.eye(polyorder + 1)], axis=-1)
    return ev @ fit / (half * float(delta)) ** deriv


def savgol_filter(x: Any, window_length: int, polyorder: int, deriv: int = 0,
                  delta: float = 1.0, axis: int = -1, mode: str = "interp",
                  cval: float = 0.0) -> Any:
    """Smooth (or differentiate) ``x`` along ``axis`` with a Savitzky-Golay filter, as
    ``scipy.signal.savgol_filter``: ``mode`` ``"interp"`` (default: the ends take the
    polynomial fitted to the first / last window), ``"mirror"``, ``"constant"`` (``cval``),
    ``"nearest"``, ``"wrap"``. Float32 stays float32, other inputs become float64.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import savgol_filter
        >>> savgol_filter(np.array([2.0, 2.0, 5.0, 2.0, 1.0, 0.0, 1.0, 4.0, 9.0]), 5, 2).round(6)
        array([1.657143, 3.171429, 3.542857, 2.857143, 0.657143, 0.171429,
               1.      , 4.      , 9.      ])
    """
    if mode not in ("mirror", "constant", "nearest", "interp", "wrap"):
        raise ValueError("mode must be 'mirror', 'constant', 'nearest' 'wrap' or 'interp'.")
    x = fnp.asarray(x)
    dt = get_aval(x).dtype
    if dt not in (numpy.float64, numpy.float32):
        x = x.astype(numpy.float64)
    coeffs = savgol_coeffs(window_length, polyorder, deriv=deriv, delta=delta)
    coeffs = coeffs.astype(get_aval(x).dtype)
    if mode != "interp":
        return convolve1d(x, coeffs, axis=axis, mode=mode, cval=cval)
    ax = axis % x.ndim
    n = x.shape[ax]
    window_length, polyorder = int(window_length), int(polyorder)
    if window_length > n:
        raise ValueError("If mode is 'interp', window_length must be less than or equal to "
                         "the size of x.")
    y = convolve1d(x, coeffs, axis=ax, mode="constant")
    half = window_length // 2
    if half == 0:
        return y
    device = get_aval(x).device or get_default_device()
    rows = numpy.arange(half, dtype=float)
    head = device_put(_edge_matrix(window_length, polyorder, deriv, delta, rows)
                      .astype(get_aval(x).dtype), device)
    tail = device_put(_edge_matrix(window_length, polyorder, deriv, delta,
                                   rows + (window_length - half)).astype(get_aval(x).dtype),
                      device)
    xm, ym = fnp.moveaxis(x, ax, 0), fnp.moveaxis(y, ax, 0)
    first = fnp.tensordot(head, xm[:window_length], axes=([1], [0]))
    last = fnp.tensordot(tail, xm[n - window_length:], axes=([1], [0]))
    out = fnp.concatenate([first, ym[half:n - half], last], axis=0)
    return fnp.moveaxis(out, 0, ax)
