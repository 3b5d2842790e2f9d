"""Resampling of ``scipy.signal``: ``upfirdn`` (upsample, FIR filter, downsample),
``resample_poly`` (polyphase, a Kaiser-windowed ``firwin`` low-pass by default),
``resample`` (Fourier method) and ``decimate`` (anti-aliasing filter, then downsampling).

``upfirdn`` is one ``funcgrad.lax.conv_general_dilated``: the input dilation inserts the
``up - 1`` zeros, the stride keeps every ``down``-th sample. ``resample`` goes through
``funcgrad.numpy.fft``. Both are linear in the signal: differentiable, and they work under
``jit`` and ``vmap`` (the filter and the rates are static numbers).

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.signal import upfirdn
    >>> upfirdn(np.array([1.0, 1.0]), np.array([1.0, 2.0, 3.0]), up=2)
    array([1., 1., 2., 2., 3., 3.])
"""

from __future__ import annotations

import math
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.api_devices import device_get
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device
from funcgrad.core import Tracer
from funcgrad.lax import conv_general_dilated
from funcgrad.scipy._signal_filters import lfilter
from funcgrad.scipy._signal_fir import firwin
from funcgrad.scipy._signal_iir import cheby1, sosfilt, sosfiltfilt
from funcgrad.scipy._signal_spectral import get_window

__all__ = ["upfirdn", "resample_poly", "resample", "decimate"]

# upfirdn's extension modes that are numpy.pad's (same name, same repeated reflections)
_PAD_MODES = {"symmetric": "symmetric", "reflect": "reflect", "edge": "edge",
              "wrap": "wrap", "antireflect": "reflect"}
_MODES = ("constant", "smooth", "line", "antisymmetric", *_PAD_MODES)


def _rate(name: str, what: str, v: Any) -> int:
    if isinstance(v, bool) or int(v) != v or int(v) < 1:
        raise ValueError(f"{name}: {what} must be a positive integer, got {v!r}")
    return int(v)


def _host_filter(name: str, h: Any) -> numpy.ndarray:
    if isinstance(h, Tracer):
        raise TypeError(f"{name}: the filter h must be concrete (it sets the output length), "
                        "not a traced value")
    h = numpy.asarray(device_get(h))
    if h.ndim != 1 or h.size == 0:
        raise ValueError(f"{name}: h must be 1-D with non-zero length, got shape {h.shape}")
    return h


def _extend(x: Any, left: int, right: int, mode: str, cval: float) -> Any:
    """``x`` (signal on the last axis) extended by ``left``/``right`` samples as upfirdn's
    ``mode`` reads past its ends."""
    n = get_aval(x).shape[-1]
    widths = [(0, 0)] * (get_aval(x).ndim - 1) + [(left, right)]
    if mode == "constant":
        return fnp.pad(x, widths, constant_values=cval)
    if mode in _PAD_MODES:
        kw = {"reflect_type": "odd"} if mode == "antireflect" else {}
        return fnp.pad(x, widths, mode=_PAD_MODES[mode], **kw)
    if mode == "antisymmetric":  # symmetric copies, negated in every other period of 2n
        dist = numpy.concatenate([numpy.arange(left, 0, -1), numpy.zeros(n, int),
                                  numpy.arange(1, right + 1)])
        sign = numpy.where((dist > 0) & ((dist - 1) % (2 * n) < n), -1.0, 1.0)
        sign = device_put(sign.astype(get_aval(x).dtype), get_aval(x).device or
                          get_default_device())
        return fnp.pad(x, widths, mode="symmetric") * sign
    # straight lines: through the two end samples ('smooth') or the two ends ('line')
    steps_l = fnp.arange(-left, 0, dtype=get_aval(x).dtype)
    steps_r = fnp.arange(1, right + 1, dtype=get_aval(x).dtype)
    first, last = x[..., :1], x[..., -1:]
    if mode == "smooth":
        slope_l = x[..., 1:2] - first if n > 1 else fnp.zeros_like(first)
        slope_r = last - x[..., -2:-1] if n > 1 else fnp.zeros_like(last)
    else:
        slope_l = slope_r = (last - first) / (n - 1) if n > 1 else fnp.zeros_like(first)
    return fnp.concatenate([first + steps_l * slope_l, x, last + steps_r * slope_r], axis=-1)


def _upfirdn_last(h: numpy.ndarray, x: Any, up: int, down: int, mode: str, cval: float
                  ) -> Any:
    """upfirdn along the last axis of ``x`` (``h`` a host array of x's dtype)."""
    shape = get_aval(x).shape
    n, taps = shape[-1], h.shape[0]
    out_len = ((n - 1) * up + taps - 1) // down + 1
    reach = -(-(taps - 1) // up)  # input samples the filter reads past either end
    pre = 0
    if mode != "constant" or cval != 0:
        # a multiple of down / gcd keeps the strided grid where the unextended one was
        step = down // math.gcd(up, down)
        pre = -(-reach // step) * step
        x = _extend(x, pre, reach + 1, mode, cval)
    lhs = fnp.reshape(x, (-1, 1, get_aval(x).shape[-1]))
    rhs = device_put(numpy.ascontiguousarray(h[::-1]).reshape(1, 1, taps),
                     get_aval(x).device or get_default_device())
    y = conv_general_dilated(lhs, rhs, (down,), [(taps - 1, taps - 1)], lhs_dilation=(up,))
    start = pre * up // down
    y = y[:, 0, start:start + out_len]
    return fnp.reshape(y, shape[:-1] + (out_len,))


def _on(v: Any, dev: str) -> Any:
    """A host (NumPy) value moved to the signal's device; device arrays as they are."""
    return device_put(v, dev) if isinstance(v, numpy.ndarray) else fnp.asarray(v)


def _result_dtype(h_dtype: Any, x_dtype: Any) -> numpy.dtype:
    return numpy.result_type(h_dtype, x_dtype, numpy.float32)


def upfirdn(h: Any, x: Any, up: int = 1, down: int = 1, axis: int = -1,
            mode: str = "constant", cval: float = 0) -> Any:
    """Upsample ``x`` by ``up`` (zero insertion), filter with the FIR ``h``, downsample by
    ``down``, along ``axis``, as ``scipy.signal.upfirdn``; the output has
    ``((n - 1) * up + len(h) - 1) // down + 1`` samples. ``mode`` says how the signal extends
    past its ends: ``"constant"`` (``cval``), ``"symmetric"``, ``"reflect"``, ``"edge"``,
    ``"wrap"``, ``"antisymmetric"``, ``"antireflect"``, ``"smooth"``, ``"line"``. Linear in ``x``
    (differentiable; ``jit``/``vmap`` work); ``h`` must be concrete.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import upfirdn
        >>> upfirdn(np.array([1.0, 2.0, 3.0]), np.ones(4), down=2)
        array([1., 6., 5.])
    """
    h = _host_filter("upfirdn", h)
    up, down = _rate("upfirdn", "up", up), _rate("upfirdn", "down", down)
    if mode not in _MODES:
        raise ValueError(f"upfirdn: unknown mode {mode!r}; known: {list(_MODES)}")
    x = fnp.asarray(x)
    dt = _result_dtype(h.dtype, get_aval(x).dtype)
    nd = get_aval(x).ndim
    ax = axis % nd if nd else 0
    x = fnp.moveaxis(x.astype(dt), ax, -1)
    return fnp.moveaxis(_upfirdn_last(h.astype(dt), x, up, down, mode, cval), -1, ax)


_BACKGROUND = {"mean": fnp.mean, "median": fnp.median, "minimum": fnp.min, "maximum": fnp.max}


def resample_poly(x: Any, up: int, down: int, axis: int = 0, window: Any = ("kaiser", 5.0),
                  padtype: str = "constant", cval: float | None = None) -> Any:
    """Resample ``x`` along ``axis`` by ``up / down`` with a polyphase filter, as
    ``scipy.signal.resample_poly``: the output has ``ceil(n * up / down)`` samples. The
    low-pass is ``firwin(20 * max(up, down) + 1, 1 / max(up, down), window=window)`` (or
    ``window`` itself when it is an array of taps), scaled by ``up``. ``padtype`` is an
    :func:`upfirdn` mode or ``"mean"``, ``"median"``, ``"minimum"``, ``"maximum"`` (that
    statistic is subtracted before filtering and added back). Linear in ``x``:
    differentiable, ``jit``/``vmap`` work.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import resample_poly
        >>> resample_poly(np.ones(8), 3, 2, padtype="mean").round(6)
        array([1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1.])
    """
    up, down = _rate("resample_poly", "up", up), _rate("resample_poly", "down", down)
    x = fnp.asarray(x)
    g = math.gcd(up, down)
    up, down = up // g, down // g
    if up == down == 1:
        return fnp.array(x, copy=True)
    nd = get_aval(x).ndim
    ax = axis % nd
    n_in = get_aval(x).shape[ax]
    n_out = -(-(n_in * up) // down)
    inexact = fnp.issubdtype(get_aval(x).dtype, fnp.inexact)
    if isinstance(window, (list, numpy.ndarray)) or (
            not isinstance(window, (str, tuple)) and hasattr(window, "shape")):
        h = numpy.array(device_get(window))
        if h.ndim > 1:
            raise ValueError(f"resample_poly: window must be 1-D, got shape {h.shape}")
        half = (h.size - 1) // 2
    else:
        rate = max(up, down)
        half = 10 * rate
        h = firwin(2 * half + 1, 1.0 / rate, window=window)
        if inexact:
            h = h.astype(get_aval(x).dtype)
    h = h * up
    # zero-pad the filter so that the output samples sit at its centre
    pre = down - half % down
    pre_remove = (half + pre) // down
    post = 0
    while ((n_in - 1) * up + h.size + pre + post - 1) // down + 1 < n_out + pre_remove:
        post += 1
    h = numpy.concatenate([numpy.zeros(pre, h.dtype), h, numpy.zeros(post, h.dtype)])
    if padtype in _BACKGROUND:
        background = _BACKGROUND[padtype](x, axis=ax, keepdims=True)
        y = upfirdn(h, x - background, up, down, axis=ax)
    elif padtype in _MODES:
        background = None
        y = upfirdn(h, x, up, down, axis=ax, mode=padtype,
                    cval=0 if cval is None else cval)
    else:
        raise ValueError(f"resample_poly: padtype must be one of {list(_MODES)} or "
                         f"{list(_BACKGROUND)}, got {padtype!r}")
    idx = [slice(None)] * nd
    idx[ax] = slice(pre_remove, pre_remove + n_out)
    y = y[tuple(idx)]
    return y if background is None else y + background


def resample(x: Any, num: int, t: Any = None, axis: int = 0, window: Any = None,
             domain: str = "time") -> Any:
    """Resample ``x`` to ``num`` samples along ``axis`` by the Fourier method, as
    ``scipy.signal.resample`` (the signal is taken as periodic): the spectrum is truncated
    or zero-padded, the unpaired Nyquist bin split or merged as SciPy does. ``window``
    (a name/tuple for ``get_window``, an array of ``n`` frequency weights, or a callable of
    ``fftfreq(n)``) shapes the spectrum; ``domain="freq"`` takes ``x`` as already
    transformed. With ``t`` (equally spaced sample positions) returns ``(y, new_t)``.
    Linear in ``x``: differentiable, ``jit``/``vmap`` work.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import resample
        >>> resample(np.array([0.0, 1.0, 0.0, -1.0]), 8).round(6) + 0.0
        array([ 0.      ,  0.707107,  1.      ,  0.707107,  0.      , -0.707107,
               -1.      , -0.707107])
    """
    if domain not in ("time", "freq"):
        raise ValueError(f"resample: domain={domain!r} not in ('time', 'freq')")
    if isinstance(num, bool) or int(num) != num or int(num) < 0:
        raise ValueError(f"resample: num must be a non-negative integer, got {num!r}")
    num = int(num)
    x = fnp.asarray(x)
    if not fnp.issubdtype(get_aval(x).dtype, fnp.inexact):
        x = x.astype(numpy.float64)
    nd = get_aval(x).ndim
    ax = axis % nd
    x = fnp.moveaxis(x, ax, -1)
    n = get_aval(x).shape[-1]
    scale = n / num
    m = min(num, n)
    m2 = m // 2 + 1
    dev = get_aval(x).device or get_default_device()
    if window is None:
        w = None
    elif callable(window):
        w = _on(window(numpy.fft.fftfreq(n)), dev)
    elif hasattr(window, "shape") and not isinstance(window, (str, tuple)):
        if tuple(window.shape) != (n,):
            raise ValueError(f"resample: window.shape={tuple(window.shape)} != ({n},), i.e., "
                             "the window length is not the number of frequency bins")
        w = _on(window, dev)
    else:
        w = device_put(numpy.fft.fftshift(get_window(window, n)), dev)
    real = domain == "time" and not fnp.issubdtype(get_aval(x).dtype, fnp.complexfloating)
    if real:
        spec = fnp.fft.rfft(x)
        nspec = get_aval(spec).shape[-1]
        if w is not None:  # fold the two-sided window onto the one-sided spectrum
            folded = fnp.concatenate([w[:1], (w[1:nspec] + fnp.flip(w[n - nspec + 1:])) / 2])
            spec = spec * folded
        spec = spec[..., :m2]
        if m % 2 == 0 and num != n:  # the unpaired bin at m // 2
            factor = numpy.ones(m2)
            factor[m // 2] = 2.0 if num < n else 0.5
            spec = spec * device_put(factor, dev)
        y = fnp.fft.irfft(spec / scale, n=num)
    else:
        spec = fnp.fft.fft(x) if domain == "time" else x
        if w is not None:
            spec = spec * w
        dt = get_aval(spec).dtype
        lead = get_aval(spec).shape[:-1]
        head = spec[..., :m2]  # up to the Nyquist frequency
        ntail = max(m - m2, 0)
        tail = [spec[..., n - ntail:]] if ntail else []  # the negative frequencies
        pair: list[Any] = []
        if m % 2 == 0 and num < n:  # merge the bin pair into one unpaired bin
            head = fnp.concatenate([spec[..., :m2 - 1],
                                    spec[..., m2 - 1:m2] + spec[..., n - m // 2:n - m // 2 + 1]],
                                   axis=-1)
        elif m % 2 == 0 and n < num:  # split the unpaired bin into a pair
            head = fnp.concatenate([spec[..., :m2 - 1], spec[..., m2 - 1:m2] / 2], axis=-1)
            pair = [head[..., -1:]]
        gap = fnp.zeros(lead + (num - m2 - ntail - len(pair),), dtype=dt)
        full = [head, gap, *pair, *tail]
        y = fnp.fft.ifft(fnp.concatenate(full, axis=-1) / scale, n=num)
    y = fnp.moveaxis(y, -1, ax)
    if t is not None:
        t = _on(t, dev)
        return y, t[0] + (t[1] - t[0]) * scale * _on(numpy.arange(num), dev)
    return y


def decimate(x: Any, q: int, n: int | None = None, ftype: str = "iir", axis: int = -1,
             zero_phase: bool = True) -> Any:
    """Downsample ``x`` by the integer ``q`` along ``axis`` after an anti-aliasing filter,
    as ``scipy.signal.decimate``: ``ftype="iir"`` (default; a Chebyshev I filter of order
    ``n`` = 8, 0.05 dB ripple, cutoff ``0.8 / q``, run forward and backward with
    ``sosfiltfilt`` -- or forward only with ``zero_phase=False``) or ``"fir"`` (a Hamming
    ``firwin`` of ``n + 1`` taps, ``n`` = 20 q: zero-phase through :func:`resample_poly`,
    else ``lfilter``). Differentiable in ``x``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import decimate
        >>> decimate(np.ones(40), 4).round(6)   # the Chebyshev filter's DC gain (0.05 dB ripple)
        array([0.988553, 0.988553, 0.988553, 0.988553, 0.988553, 0.988553,
               0.988553, 0.988553, 0.988553, 0.988553])
    """
    if isinstance(q, bool) or int(q) != q or int(q) < 1:
        raise TypeError(f"decimate: q must be a positive integer, got {q!r}")
    q = int(q)
    x = fnp.asarray(x)
    dt = x.dtype
    if not fnp.issubdtype(dt, fnp.inexact) or dt == numpy.float16:
        x = x.astype(numpy.float64)
    ax = axis % x.ndim
    idx = [slice(None)] * x.ndim
    if ftype == "fir":
        taps = firwin((20 * q if n is None else int(n)) + 1, 1.0 / q, window="hamming")
        if zero_phase:
            return resample_poly(x, 1, q, axis=ax, window=taps)
        dev = get_aval(x).device or get_default_device()
        y = lfilter(device_put(taps.astype(x.dtype), dev), device_put(numpy.ones(1, x.dtype), dev),
                    x, axis=ax)
        idx[ax] = slice(None, None, q)
        return y[tuple(idx)]
    if ftype != "iir":
        raise ValueError(f"decimate: ftype must be 'iir' or 'fir', got {ftype!r}")
    sos = cheby1(8 if n is None else int(n), 0.05, 0.8 / q, output="sos").astype(x.dtype)
    sos = device_put(sos, get_aval(x).device or get_default_device())  # with the signal
    y = sosfiltfilt(sos, x, axis=ax) if zero_phase else sosfilt(sos, x, axis=ax)
    idx[ax] = slice(None, None, q)
    return y[tuple(idx)]
