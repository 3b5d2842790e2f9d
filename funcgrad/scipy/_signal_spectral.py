"""Spectral analysis of ``scipy.signal`` (as ``jax.scipy.signal``): ``get_window``, ``stft``,
``istft``, ``csd`` and ``welch``; and SciPy's ``periodogram`` and ``hilbert``.

Segments are gathered with one ``take``, windowed, detrended and transformed with
``funcgrad.numpy.fft``; ``istft`` overlap-adds with pads and reshapes only. So everything is
differentiable in the data (and in an array ``window``) and works under ``jit`` and ``vmap``.
Windows named by a string or tuple are built in NumPy (SciPy's formulas, no SciPy needed).

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.signal import welch
    >>> f, p = welch(np.sin(np.arange(64.0)), nperseg=16)
    >>> int(np.argmax(p)), f.shape
    (3, (9,))
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device
from funcgrad.core import Tracer
from funcgrad.scipy._detrend import detrend as _detrend

__all__ = ["get_window", "stft", "istft", "csd", "welch", "periodogram", "hilbert",
           "coherence"]


# ---- windows (SciPy's definitions; ``M`` points, symmetric or periodic)


def _general_cosine(m: int, a: list[float]) -> numpy.ndarray:
    fac = numpy.linspace(-numpy.pi, numpy.pi, m)
    w = numpy.zeros(m)
    for k, ak in enumerate(a):
        w += ak * numpy.cos(k * fac)
    return w


def _triang(m: int) -> numpy.ndarray:
    n = numpy.arange(1, (m + 1) // 2 + 1)
    if m % 2 == 0:
        w = (2 * n - 1.0) / m
        return numpy.r_[w, w[::-1]]
    w = 2 * n / (m + 1.0)
    return numpy.r_[w, w[-2::-1]]


def _bartlett(m: int) -> numpy.ndarray:
    n = numpy.arange(m)
    return numpy.where(n <= (m - 1) / 2.0, 2.0 * n / (m - 1), 2.0 - 2.0 * n / (m - 1))


def _tukey(m: int, alpha: float = 0.5) -> numpy.ndarray:
    if alpha <= 0:
        return numpy.ones(m)
    if alpha >= 1:
        return _general_cosine(m, [0.5, 0.5])
    n = numpy.arange(m)
    width = int(numpy.floor(alpha * (m - 1) / 2.0))
    n1, n2, n3 = n[:width + 1], n[width + 1:m - width - 1], n[m - width - 1:]
    w1 = 0.5 * (1 + numpy.cos(numpy.pi * (-1 + 2.0 * n1 / alpha / (m - 1))))
    w3 = 0.5 * (1 + numpy.cos(numpy.pi * (-2.0 / alpha + 1 + 2.0 * n3 / alpha / (m - 1))))
    return numpy.concatenate((w1, numpy.ones(n2.shape), w3))


def _kaiser(m: int, beta: float) -> numpy.ndarray:
    n = numpy.arange(m)
    alpha = (m - 1) / 2.0
    return numpy.i0(beta * numpy.sqrt(1 - ((n - alpha) / alpha) ** 2.0)) / numpy.i0(beta)


def _gaussian(m: int, std: float) -> numpy.ndarray:
    n = numpy.arange(m) - (m - 1.0) / 2.0
    return numpy.exp(-n ** 2 / (2 * std * std))


def _general_hamming(m: int, alpha: float) -> numpy.ndarray:
    return _general_cosine(m, [alpha, 1.0 - alpha])


def _parzen(m: int) -> numpy.ndarray:
    n = numpy.abs(numpy.arange(-(m - 1) / 2.0, (m - 1) / 2.0 + 0.5, 1.0))
    return numpy.where(n <= (m - 1) / 4.0, 1 - 6 * (n / (m / 2.0)) ** 2 + 6 * (n / (m / 2.0)) ** 3,
                       2 * (1 - n / (m / 2.0)) ** 3)


def _bohman(m: int) -> numpy.ndarray:
    fac = numpy.abs(numpy.linspace(-1, 1, m)[1:-1])
    w = (1 - fac) * numpy.cos(numpy.pi * fac) + 1.0 / numpy.pi * numpy.sin(numpy.pi * fac)
    return numpy.r_[0.0, w, 0.0]


def _barthann(m: int) -> numpy.ndarray:
    fac = numpy.abs(numpy.arange(m) / (m - 1.0) - 0.5)
    return 0.62 - 0.48 * fac + 0.38 * numpy.cos(2 * numpy.pi * fac)


def _lanczos(m: int) -> numpy.ndarray:
    half = numpy.sinc(2.0 * numpy.arange((m + 1) // 2, m) / (m - 1) - 1.0)
    middle = [1.0] if m % 2 else []
    return numpy.r_[half[::-1], middle, half]


def _general_gaussian(m: int, p: float, sig: float) -> numpy.ndarray:
    n = numpy.arange(m) - (m - 1.0) / 2.0
    return numpy.exp(-0.5 * numpy.abs(n / sig) ** (2 * p))


def _exponential(m: int, center: float | None = None, tau: float = 1.0) -> numpy.ndarray:
    center = (m - 1) / 2 if center is None else center
    return numpy.exp(-numpy.abs(numpy.arange(m) - center) / tau)


def _taylor(m: int, nbar: int = 4, sll: float = 30, norm: bool = True) -> numpy.ndarray:
    # SciPy's Taylor window: nbar - 1 cosine terms for sidelobes sll dB down.
    b = 10 ** (sll / 20)
    a = numpy.arccosh(b) / numpy.pi
    s2 = nbar ** 2 / (a ** 2 + (nbar - 0.5) ** 2)
    ma = numpy.arange(1, nbar, dtype=numpy.float64)
    m2 = ma * ma
    fm = numpy.empty(nbar - 1)
    for i in range(nbar - 1):
        sign = 1 if i % 2 == 0 else -1
        numer = sign * numpy.prod(1 - m2[i] / s2 / (a ** 2 + (ma - 0.5) ** 2))
        denom = 2 * numpy.prod(1 - m2[i] / m2[:i]) * numpy.prod(1 - m2[i] / m2[i + 1:])
        fm[i] = numer / denom

    def w_at(n: Any) -> Any:
        return 1 + 2 * numpy.matmul(fm, numpy.cos(
            2 * numpy.pi * ma[:, None] * (n - m / 2.0 + 0.5) / m))

    w = w_at(numpy.arange(m, dtype=numpy.float64))
    return w / w_at((m - 1) / 2) if norm else w


def _chebwin(m: int, at: float) -> numpy.ndarray:
    # SciPy's Dolph-Chebyshev window: the FFT of the Chebyshev polynomial samples.
    order = m - 1.0
    beta = numpy.cosh(1.0 / order * numpy.arccosh(10 ** (abs(at) / 20.0)))
    k = numpy.arange(m, dtype=numpy.float64)
    x = beta * numpy.cos(numpy.pi * k / m)
    p = numpy.zeros_like(x)
    with numpy.errstate(invalid="ignore"):
        p = numpy.where(x > 1, numpy.cosh(order * numpy.arccosh(numpy.abs(x))), p)
        p = numpy.where(x < -1, (2 * (m % 2) - 1) * numpy.cosh(order * numpy.arccosh(
            numpy.abs(x))), p)
        p = numpy.where(numpy.abs(x) <= 1, numpy.cos(order * numpy.arccos(
            numpy.clip(x, -1, 1))), p)
    if m % 2:
        w = numpy.real(numpy.fft.fft(p))
        n = (m + 1) // 2
        w = numpy.r_[w[1:n][::-1], w[:n]]
    else:
        w = numpy.real(numpy.fft.fft(p * numpy.exp(1j * numpy.pi / m * k)))
        n = m // 2 + 1
        w = numpy.r_[w[1:n][::-1], w[1:n]]
    return w / numpy.max(w)


def _dpss(m: int, nw: float) -> numpy.ndarray:
    # SciPy's first discrete prolate spheroidal sequence with its "approximate" norm: the top
    # eigenvector of the tridiagonal commuting matrix (dense eigh: windows are short), sign
    # made positive-sum, peak 1, scaled by m^2 / (m^2 + nw) for even m.
    n = numpy.arange(m, dtype=numpy.float64)
    d = ((m - 1 - 2 * n) / 2.0) ** 2 * numpy.cos(2 * numpy.pi * float(nw) / m)
    e = n[1:] * (m - n[1:]) / 2.0
    w = numpy.linalg.eigh(numpy.diag(d) + numpy.diag(e, 1) + numpy.diag(e, -1))[1][:, -1]
    if w.sum() < 0:
        w = -w
    w = w / w.max()
    return w * (m ** 2 / float(m ** 2 + nw)) if m % 2 == 0 else w


_WINDOWS: dict[str, Callable[..., numpy.ndarray]] = {
    "hann": lambda m: _general_cosine(m, [0.5, 0.5]),
    "hamming": lambda m: _general_hamming(m, 0.54),
    "blackman": lambda m: _general_cosine(m, [0.42, 0.50, 0.08]),
    "blackmanharris": lambda m: _general_cosine(m, [0.35875, 0.48829, 0.14128, 0.01168]),
    "nuttall": lambda m: _general_cosine(m, [0.3635819, 0.4891775, 0.1365995, 0.0106411]),
    "flattop": lambda m: _general_cosine(m, [0.21557895, 0.41663158, 0.277263158,
                                             0.083578947, 0.006947368]),
    "boxcar": numpy.ones,
    "triang": _triang,
    "bartlett": _bartlett,
    "cosine": lambda m: numpy.sin(numpy.pi / m * (numpy.arange(m) + 0.5)),
    "tukey": _tukey,
    "kaiser": _kaiser,
    "gaussian": _gaussian,
    "general_hamming": _general_hamming,
    "general_cosine": _general_cosine,
    "general_gaussian": _general_gaussian,
    "parzen": _parzen,
    "bohman": _bohman,
    "barthann": _barthann,
    "lanczos": _lanczos,
    "exponential": _exponential,
    "taylor": _taylor,
    "chebwin": _chebwin,
    "dpss": _dpss,
}
_ALIASES = {"han": "hann", "hamm": "hamming", "ham": "hamming", "black": "blackman",
            "blk": "blackman", "blackharr": "blackmanharris", "bkh": "blackmanharris",
            "nutl": "nuttall", "nut": "nuttall", "flat": "flattop", "flt": "flattop",
            "box": "boxcar", "ones": "boxcar", "rect": "boxcar", "rectangular": "boxcar",
            "tri": "triang", "triangle": "triang", "bart": "bartlett", "brt": "bartlett",
            "halfcosine": "cosine", "tuk": "tukey", "ksr": "kaiser", "gauss": "gaussian",
            "gss": "gaussian", "general hamming": "general_hamming",
            "general cosine": "general_cosine", "general gaussian": "general_gaussian",
            "general gauss": "general_gaussian", "general_gauss": "general_gaussian",
            "ggs": "general_gaussian", "parz": "parzen", "par": "parzen", "bman": "bohman",
            "bmn": "bohman", "brthan": "barthann", "bth": "barthann", "sinc": "lanczos",
            "poisson": "exponential", "taylorwin": "taylor",
            "cheb": "chebwin"}  # SciPy's names
_NEEDS_PARAM = {"kaiser", "gaussian", "general_hamming", "general_cosine", "general_gaussian",
                "chebwin", "dpss"}


def get_window(window: Any, Nx: int, fftbins: bool = True) -> numpy.ndarray:  # noqa: N803
    """The window ``window`` of ``Nx`` points as ``scipy.signal.get_window``: a name
    (``"hann"``, ``"hamming"``, ``"blackman"``, ``"blackmanharris"``, ``"nuttall"``,
    ``"flattop"``, ``"boxcar"``, ``"triang"``, ``"bartlett"``, ``"cosine"``, ``"tukey"``,
    ``"parzen"``, ``"bohman"``, ``"barthann"``, ``"lanczos"``, ``"exponential"``,
    ``"taylor"``) or a tuple with the parameters (``("kaiser", beta)``, ``("gaussian", std)``,
    ``("tukey", alpha)``, ``("general_hamming", alpha)``, ``("general_cosine", a)``,
    ``("general_gaussian", p, sig)``, ``("exponential", center, tau)``, ``("taylor", nbar,
    sll, norm)``, ``("chebwin", at)``, ``("dpss", NW)``), with SciPy's aliases. ``fftbins=True`` gives the
    periodic window (for spectral analysis), ``False`` the symmetric one. A float64 NumPy
    array.

    Example:
        >>> from funcgrad.scipy.signal import get_window
        >>> get_window("hann", 4)
        array([0. , 0.5, 1. , 0.5])
    """
    if isinstance(window, tuple):
        name, params = window[0], tuple(window[1:])
    elif isinstance(window, str):
        name, params = window, ()
    else:
        raise ValueError(f"get_window: window must be a name or a (name, parameter) tuple, "
                         f"got {type(window).__name__}")
    key = _ALIASES.get(name, name) if isinstance(name, str) else None
    if key not in _WINDOWS:
        raise ValueError(f"get_window: unknown window type {name!r}; known: "
                         f"{sorted(_WINDOWS)}")
    if key in _NEEDS_PARAM and not params:
        raise ValueError(f"get_window: the {key!r} window needs a parameter: pass a tuple "
                         f"({key!r}, value)")
    if key == "exponential" and not fftbins and params and params[0] is not None:
        raise ValueError("get_window: the symmetric exponential window (fftbins=False) is "
                         "centred: its center must be None")
    m = operator_index(Nx, "Nx")
    if m < 1:
        raise ValueError(f"get_window: Nx must be a positive integer, got {m}")
    if key == "dpss" and m > 1 and not 0 < params[0] < m / 2.0:
        # SciPy checks NW against the requested length, before a periodic window's extra point.
        raise ValueError(f"get_window: the dpss window needs 0 < NW < Nx/2, got NW = "
                         f"{params[0]} with Nx = {m}")
    if m == 1:
        return numpy.ones(1)
    sym_m = m + 1 if fftbins else m
    w = numpy.asarray(_WINDOWS[key](sym_m, *params), dtype=numpy.float64)
    return w[:m]


def operator_index(v: Any, what: str) -> int:
    if isinstance(v, Tracer):
        raise TypeError(f"{what} must be a concrete integer (it sets a shape), got a traced "
                        "value")
    try:
        return int(numpy.asarray(v).item()) if not isinstance(v, int) else v
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be an integer, got {v!r}") from None


# ---- the shared segment machinery (SciPy's _spectral_helper)


def _const(v: numpy.ndarray, like: Any) -> Any:
    return device_put(v, get_aval(like).device or get_default_device())


def _window(window: Any, nperseg: int | None, length: int, dtype: Any, name: str
            ) -> tuple[Any, int]:
    """SciPy's ``_triage_segments``: the window array (in ``dtype``) and ``nperseg``."""
    if isinstance(window, str | tuple):
        if nperseg is None:
            nperseg = 256
        if nperseg > length:
            nperseg = length  # SciPy warns and shortens; so does JAX (silently)
        return numpy.asarray(get_window(window, nperseg), dtype=dtype), nperseg
    win = fnp.asarray(window)
    if win.ndim != 1:
        raise ValueError(f"{name}: window must be 1-D, got shape {win.shape}")
    if length < win.shape[0]:
        raise ValueError(f"{name}: window is longer than the input signal ({win.shape[0]} > "
                         f"{length})")
    if nperseg is None:
        nperseg = win.shape[0]
    elif nperseg != win.shape[0]:
        raise ValueError(f"{name}: nperseg={nperseg} differs from the window's length "
                         f"{win.shape[0]}")
    return win.astype(dtype), nperseg


def _odd_ext(x: Any, n: int) -> Any:
    if n < 1:
        return x
    if n > x.shape[-1] - 1:
        raise ValueError(f"the extension length n ({n}) is too big: it must not exceed "
                         f"x.shape[axis] - 1 = {x.shape[-1] - 1}")
    left = 2 * x[..., :1] - fnp.flip(x[..., 1:n + 1], axis=-1)
    right = 2 * x[..., -1:] - fnp.flip(x[..., -(n + 1):-1], axis=-1)
    return fnp.concatenate([left, x, right], axis=-1)


def _pad_last(mode: str) -> Callable[[Any, int], Any]:
    def pad(x: Any, n: int) -> Any:
        return fnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(n, n)], mode=mode)
    return pad


_BOUNDARIES: dict[Any, Callable[[Any, int], Any]] = {
    "even": _pad_last("reflect"), "odd": _odd_ext, "constant": _pad_last("edge"),
    "zeros": _pad_last("constant"), None: lambda x, n: x,
}


def _detrend_func(detrend: Any) -> Callable[[Any], Any]:
    if isinstance(detrend, str):
        return lambda d: _detrend(d, type=detrend, axis=-1)
    if callable(detrend):
        return detrend
    if not detrend:
        return lambda d: d
    raise ValueError(f"unsupported detrend type: {detrend!r}")


def _segments_fft(x: Any, win: Any, detrend: Callable[[Any], Any], nperseg: int,
                  noverlap: int, nfft: int, twosided: bool) -> Any:
    """``(..., segments, frequencies)``: the FFT of each windowed, detrended segment."""
    step = nperseg - noverlap
    starts = numpy.arange(0, x.shape[-1] - nperseg + 1, step)
    idx = starts[:, None] + numpy.arange(nperseg)[None, :]
    seg = fnp.take(x, _const(idx, x), axis=-1)
    seg = detrend(seg)
    seg = seg * (win if not isinstance(win, numpy.ndarray) else _const(win, seg))
    if twosided:
        return fnp.fft.fft(seg, n=nfft)
    return fnp.fft.rfft(fnp.real(seg), n=nfft)


def _inexact(name: str, x: Any) -> Any:
    x = fnp.asarray(x)
    if not fnp.issubdtype(x.dtype, fnp.inexact):
        x = x.astype(numpy.float64)
    return x


def _spectral(name: str, x: Any, y: Any, fs: Any, window: Any, nperseg: Any, noverlap: Any,
              nfft: Any, detrend: Any, return_onesided: bool, scaling: str, axis: int,
              mode: str, boundary: Any = None, padded: bool = False
              ) -> tuple[Any, Any, Any]:
    if boundary not in _BOUNDARIES:
        raise ValueError(f"{name}: unknown boundary option {boundary!r}; expected one of "
                         f"{list(_BOUNDARIES)}")
    if scaling not in ("density", "spectrum"):
        raise ValueError(f"{name}: unknown scaling {scaling!r}; expected 'density' or "
                         "'spectrum'")
    x = _inexact(name, x)
    if y is not None:
        y = _inexact(name, y)
        dt = numpy.result_type(x.dtype, y.dtype)
        x, y = x.astype(dt), y.astype(dt)
        if x.ndim != y.ndim:
            raise ValueError(f"{name}: x and y must have the same rank ({x.ndim} vs {y.ndim})")
    axis = operator_index(axis, "axis")
    if not -x.ndim <= axis < max(x.ndim, 1):
        raise ValueError(f"{name}: axis {axis} is out of bounds for {x.ndim}-d input")
    axis = axis % max(x.ndim, 1)
    complex_dt = numpy.result_type(x.dtype, numpy.complex64)
    real_dt = numpy.finfo(complex_dt).dtype
    if nperseg is not None:
        nperseg = operator_index(nperseg, "nperseg")
        if nperseg < 1:
            raise ValueError(f"{name}: nperseg must be a positive integer, got {nperseg}")
    length = x.shape[axis] if x.ndim else 0
    win, nperseg = _window(window, nperseg, length if length else (nperseg or 256), real_dt,
                           name)
    noverlap = nperseg // 2 if noverlap is None else operator_index(noverlap, "noverlap")
    nfft = nperseg if nfft is None else operator_index(nfft, "nfft")
    if y is None and x.size == 0:
        return (fnp.zeros(x.shape, real_dt), fnp.zeros(x.shape, real_dt),
                fnp.zeros(x.shape, complex_dt if mode == "stft" else real_dt))
    x = fnp.moveaxis(x, axis, -1)
    if y is not None:
        y = fnp.moveaxis(y, axis, -1)
        if x.size == 0 or y.size == 0:
            outer = numpy.broadcast_shapes(x.shape[:-1], y.shape[:-1])
            shape = outer[:axis] + (min(x.shape[-1], y.shape[-1]),) + outer[axis:]
            return (fnp.zeros(shape, real_dt), fnp.zeros(shape, real_dt),
                    fnp.zeros(shape, complex_dt))
        if x.shape[-1] != y.shape[-1]:  # the shorter one is zero-padded (as SciPy)
            n = max(x.shape[-1], y.shape[-1])
            x = fnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, n - x.shape[-1])])
            y = fnp.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, n - y.shape[-1])])
    if nfft < nperseg:
        raise ValueError(f"{name}: nfft must be greater than or equal to nperseg")
    if noverlap >= nperseg:
        raise ValueError(f"{name}: noverlap must be less than nperseg")
    step = nperseg - noverlap
    if boundary is not None:
        x = _BOUNDARIES[boundary](x, nperseg // 2)
        if y is not None:
            y = _BOUNDARIES[boundary](y, nperseg // 2)
    if padded:
        nadd = (-(x.shape[-1] - nperseg) % step) % nperseg
        x = fnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, nadd)])
        if y is not None:
            y = fnp.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, nadd)])
    w2 = (win * win).sum()
    scale = 1.0 / (fs * w2) if scaling == "density" else 1.0 / win.sum() ** 2
    if mode == "stft":
        scale = scale ** 0.5
    twosided = (not return_onesided or fnp.iscomplexobj(x)
                or (y is not None and fnp.iscomplexobj(y)))
    if twosided:
        freqs = numpy.fft.fftfreq(nfft, 1.0)
    else:
        freqs = numpy.fft.rfftfreq(nfft, 1.0)
    freqs = _const(freqs.astype(real_dt), x) * fs
    detrend_f = _detrend_func(detrend)
    result = _segments_fft(x, win, detrend_f, nperseg, noverlap, nfft, twosided)
    if y is not None:
        result = fnp.conj(result) * _segments_fft(y, win, detrend_f, nperseg, noverlap, nfft,
                                                  twosided)
    elif mode == "psd":
        result = fnp.conj(result) * result
    result = result * scale
    if not twosided and mode == "psd":
        # Every frequency but 0 (and Nyquist for even nfft) also stands for its negative.
        double = numpy.ones(result.shape[-1], real_dt)
        double[1:None if nfft % 2 else -1] = 2.0
        result = result * _const(double, result)
    times = numpy.arange(nperseg / 2, x.shape[-1] - nperseg / 2 + 1, step)
    if boundary is not None:
        times = times - nperseg / 2
    times = _const(times.astype(real_dt), x) / fs
    result = result.astype(complex_dt)
    if y is None and mode != "stft":
        result = fnp.real(result)
    return freqs, times, fnp.moveaxis(result, -1, axis)


def stft(x: Any, fs: Any = 1.0, window: Any = "hann", nperseg: int = 256,
         noverlap: Any = None, nfft: Any = None, detrend: Any = False,
         return_onesided: bool = True, boundary: Any = "zeros", padded: bool = True,
         axis: int = -1, scaling: str = "spectrum") -> tuple[Any, Any, Any]:
    """Short-time Fourier transform, as ``scipy.signal.stft``: ``(f, t, Zxx)`` with
    ``Zxx`` of shape ``(..., len(f), len(t))`` (frequencies where ``axis`` was, segments
    last). ``boundary`` extends the signal by half a segment (``"zeros"``, ``"even"``,
    ``"odd"``, ``"constant"`` or ``None``); ``padded`` zero-pads to whole segments;
    ``scaling="psd"`` scales to a density (``"spectrum"``: amplitudes).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import stft
        >>> f, t, z = stft(np.ones(8), nperseg=4)
        >>> z.shape, t
        ((3, 5), array([0., 2., 4., 6., 8.]))
    """
    if scaling not in ("spectrum", "psd"):
        raise ValueError(f"stft: scaling must be 'spectrum' or 'psd', got {scaling!r}")
    return _spectral("stft", x, None, fs, window, nperseg, noverlap, nfft, detrend,
                     return_onesided, "density" if scaling == "psd" else "spectrum", axis,
                     "stft", boundary, padded)


def _median_bias(n: int) -> float:
    ii_2 = 2 * numpy.arange(1.0, (n - 1) // 2 + 1)
    return 1.0 + float(numpy.sum(1.0 / (ii_2 + 1) - 1.0 / ii_2))


def csd(x: Any, y: Any, fs: Any = 1.0, window: Any = "hann", nperseg: Any = None,
        noverlap: Any = None, nfft: Any = None, detrend: Any = "constant",
        return_onesided: bool = True, scaling: str = "density", axis: int = -1,
        average: str = "mean") -> tuple[Any, Any]:
    """Cross power spectral density by Welch's method, as ``scipy.signal.csd``: ``(f,
    Pxy)``, complex; the segments' spectra averaged by ``"mean"`` or ``"median"`` (SciPy's
    bias correction). ``y=None`` is ``welch`` (real).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import csd
        >>> x = np.sin(np.arange(32.0))
        >>> f, p = csd(x, 2 * x, nperseg=8)
        >>> p.dtype, int(np.argmax(abs(p)))
        (dtype('complex128'), 1)
    """
    if average not in ("mean", "median"):
        raise ValueError(f"csd: average must be 'mean' or 'median', got {average!r}")
    freqs, _, pxy = _spectral("csd", x, y, fs, window, nperseg, noverlap, nfft, detrend,
                              return_onesided, scaling, axis, "psd")
    if pxy.ndim >= 2 and pxy.size > 0:
        if pxy.shape[-1] > 1:
            if average == "median":
                bias = _median_bias(pxy.shape[-1])
                if fnp.iscomplexobj(pxy):
                    pxy = (fnp.median(fnp.real(pxy), axis=-1)
                           + 1j * fnp.median(fnp.imag(pxy), axis=-1)).astype(pxy.dtype)
                else:
                    pxy = fnp.median(pxy, axis=-1)
                pxy = pxy / bias
            else:
                pxy = fnp.mean(pxy, axis=-1)
        else:
            pxy = fnp.reshape(pxy, pxy.shape[:-1])
    return freqs, pxy


def coherence(x: Any, y: Any, fs: Any = 1.0, window: Any = "hann", nperseg: Any = None,
              noverlap: Any = None, nfft: Any = None, detrend: Any = "constant",
              axis: int = -1) -> tuple[Any, Any]:
    """The magnitude-squared coherence ``|Pxy|**2 / (Pxx Pyy)`` of ``x`` and ``y`` from
    Welch estimates, as ``scipy.signal.coherence``: ``(f, Cxy)``. Differentiable in the
    data.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import coherence
        >>> x = np.sin(np.arange(256.0))
        >>> f, c = coherence(x, 2.0 * x, nperseg=32)
        >>> bool(np.allclose(c, 1.0))
        True
    """
    kw = dict(fs=fs, window=window, nperseg=nperseg, noverlap=noverlap, nfft=nfft,
              detrend=detrend, axis=axis)
    freqs, pxx = welch(x, **kw)
    _, pyy = welch(y, **kw)
    _, pxy = csd(x, y, **kw)
    return freqs, fnp.abs(pxy) ** 2 / pxx / pyy


def welch(x: Any, fs: Any = 1.0, window: Any = "hann", nperseg: Any = None,
          noverlap: Any = None, nfft: Any = None, detrend: Any = "constant",
          return_onesided: bool = True, scaling: str = "density", axis: int = -1,
          average: str = "mean") -> tuple[Any, Any]:
    """Power spectral density by Welch's method (averaged periodograms of overlapping
    segments), as ``scipy.signal.welch``: ``(f, Pxx)``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import welch
        >>> f, p = welch(np.cos(np.pi / 2 * np.arange(64.0)), fs=4.0, nperseg=8)
        >>> float(f[np.argmax(p)])
        1.0
    """
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                     nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                     scaling=scaling, axis=axis, average=average)
    return freqs, fnp.real(pxx)


def _overlap_add(x: Any, step: int) -> Any:
    """Sum of frames ``x[..., s, :]`` placed at ``s * step``: pads and reshapes only."""
    *batch, nframes, seg_len = x.shape
    flat = int(math.prod(batch))
    x = fnp.reshape(x, (flat, nframes, seg_len))
    out_len = step * (nframes - 1) + seg_len
    per_seg = 1 + (seg_len - 1) // step
    x = fnp.pad(x, [(0, 0), (0, 0), (0, per_seg * step - seg_len)])
    x = fnp.reshape(x, (flat, nframes, per_seg, step))
    x = fnp.transpose(x, (0, 2, 1, 3))
    x = fnp.pad(x, [(0, 0), (0, 0), (0, nframes), (0, 0)])
    shrunk = x.shape[2] - 1
    x = fnp.reshape(x, (flat, -1))[:, :per_seg * shrunk * step]
    x = fnp.reshape(x, (flat, per_seg, shrunk * step))
    x = fnp.sum(x, axis=1)[:, :out_len]
    return fnp.reshape(x, tuple(batch) + (out_len,))


def istft(Zxx: Any, fs: Any = 1.0, window: Any = "hann", nperseg: Any = None,  # noqa: N803
          noverlap: Any = None, nfft: Any = None, input_onesided: bool = True,
          boundary: bool = True, time_axis: int = -1, freq_axis: int = -2,
          scaling: str = "spectrum") -> tuple[Any, Any]:
    """Inverse short-time Fourier transform, as ``scipy.signal.istft``: ``(t, x)`` by
    windowed overlap-add, normalised by the summed squared window (``stft`` then ``istft``
    gives the signal back when the window satisfies COLA/NOLA).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import stft, istft
        >>> x = np.arange(16.0)
        >>> t, y = istft(stft(x, nperseg=8)[2], nperseg=8)
        >>> np.allclose(y[:16], x)
        True
    """
    z = fnp.asarray(Zxx)
    if z.ndim < 2:
        raise ValueError("istft: input stft must be at least 2-D")
    if scaling not in ("spectrum", "psd"):
        raise ValueError(f"istft: scaling must be 'spectrum' or 'psd', got {scaling!r}")
    freq_axis = operator_index(freq_axis, "freq_axis") % z.ndim
    time_axis = operator_index(time_axis, "time_axis") % z.ndim
    if freq_axis == time_axis:
        raise ValueError("istft: time_axis and freq_axis must differ")
    complex_dt = numpy.result_type(z.dtype, numpy.complex64)
    real_dt = numpy.finfo(complex_dt).dtype
    z = z.astype(complex_dt)
    n_default = 2 * (z.shape[freq_axis] - 1) if input_onesided else z.shape[freq_axis]
    nperseg = operator_index(nperseg, "nperseg") if nperseg is not None else n_default
    if nperseg < 1:
        raise ValueError(f"istft: nperseg must be a positive integer, got {nperseg}")
    if nfft is None:
        nfft = n_default + (1 if input_onesided and nperseg == n_default + 1 else 0)
    else:
        nfft = operator_index(nfft, "nfft")
    if nfft < nperseg:
        raise ValueError(f"istft: FFT length ({nfft}) must be at least nperseg ({nperseg})")
    noverlap = nperseg // 2 if noverlap is None else operator_index(noverlap, "noverlap")
    if noverlap >= nperseg:
        raise ValueError("istft: noverlap must be less than nperseg")
    step = nperseg - noverlap
    outer = tuple(i for i in range(z.ndim) if i not in (time_axis, freq_axis))
    z = fnp.transpose(z, outer + (freq_axis, time_axis))
    if input_onesided:
        subs = fnp.fft.irfft(z, n=nfft, axis=-2)[..., :nperseg, :]
    else:
        subs = fnp.fft.ifft(z, n=nfft, axis=-2)[..., :nperseg, :]
    if isinstance(window, str | tuple):
        win = _const(get_window(window, nperseg).astype(real_dt), subs)
    else:
        win = fnp.asarray(window).astype(real_dt)
        if win.ndim != 1:
            raise ValueError("istft: window must be 1-D")
        if win.shape[0] != nperseg:
            raise ValueError(f"istft: window must have length {nperseg}")
    if scaling == "spectrum":
        subs = subs * win.sum()
    else:
        subs = subs * fnp.sqrt(fs * (win * win).sum())
    win_col = fnp.reshape(win, (nperseg, 1))
    x = _overlap_add(fnp.swapaxes(subs * win_col, -2, -1), step)
    nseg = subs.shape[-1]
    norm = _overlap_add(fnp.broadcast_to(fnp.reshape(win * win, (1, nperseg)),
                                         (nseg, nperseg)), step)
    if boundary:
        half = nperseg // 2
        x = x[..., half:x.shape[-1] - half]
        norm = norm[..., half:norm.shape[-1] - half]
    x = x / fnp.where(norm > 1e-10, norm, 1.0)
    if x.ndim > 1 and time_axis != z.ndim - 1:
        if freq_axis < time_axis:
            time_axis -= 1
        x = fnp.moveaxis(x, -1, time_axis)
    times = _const(numpy.arange(x.shape[0]).astype(real_dt), x) / fs
    return times, x


def periodogram(x: Any, fs: Any = 1.0, window: Any = "boxcar", nfft: Any = None,
                detrend: Any = "constant", return_onesided: bool = True,
                scaling: str = "density", axis: int = -1) -> tuple[Any, Any]:
    """Power spectral density estimate from one periodogram of the whole signal, as
    ``scipy.signal.periodogram``: :func:`welch` with a single segment of all samples
    (``nfft`` shorter than the signal truncates it first, longer zero-pads). ``(f, Pxx)``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import periodogram
        >>> f, p = periodogram(np.cos(np.pi / 2 * np.arange(16.0)), fs=4.0)
        >>> float(f[np.argmax(p)]), float(p.max())
        (1.0, 2.0)
    """
    x = fnp.asarray(x)
    shape = get_aval(x).shape
    if get_aval(x).size == 0:
        return fnp.empty(shape), fnp.empty(shape)
    if window is None:
        window = "boxcar"
    n = shape[axis]
    if nfft is None or nfft >= n:
        nperseg = n
    else:
        x = fnp.take(x, numpy.arange(nfft), axis=axis)
        nperseg, nfft = nfft, None
    if hasattr(window, "shape") and get_aval(fnp.asarray(window)).size != nperseg:
        raise ValueError("periodogram: the size of the window must be the same size of the "
                         "input on the specified axis")
    return welch(x, fs=fs, window=window, nperseg=nperseg, noverlap=0, nfft=nfft,
                 detrend=detrend, return_onesided=return_onesided, scaling=scaling, axis=axis)


def hilbert(x: Any, N: int | None = None, axis: int = -1) -> Any:  # noqa: N803
    """The analytic signal ``x + i H(x)`` of a real signal through the FFT (the negative
    frequencies zeroed, the positive ones doubled), as ``scipy.signal.hilbert``; ``N``
    samples (truncating or zero-padding along ``axis``). Linear, so differentiable in ``x``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import hilbert
        >>> t = np.arange(8) * np.pi / 4
        >>> np.abs(hilbert(np.cos(t))).round(12)      # the envelope of a pure tone is 1
        array([1., 1., 1., 1., 1., 1., 1., 1.])
    """
    x = fnp.asarray(x)
    if fnp.iscomplexobj(x):
        raise ValueError("hilbert: x must be real")
    nd = get_aval(x).ndim
    if nd == 0:
        raise ValueError("hilbert: x must have at least one dimension")
    if N is None:
        N = get_aval(x).shape[axis]  # noqa: N806
    if N <= 0:
        raise ValueError(f"hilbert: N must be positive, got {N}")
    xf = fnp.fft.fft(x, N, axis=axis)
    h = numpy.zeros(N)
    h[0] = 1.0
    if N % 2 == 0:
        h[N // 2] = 1.0
        h[1:N // 2] = 2.0
    else:
        h[1:(N + 1) // 2] = 2.0
    shape = [1] * nd
    shape[axis] = N
    h = h.reshape(shape).astype(numpy.result_type(get_aval(x).dtype, numpy.float32))
    # the multiplier lives with the data (a host array would not meet a device one)
    h = device_put(h, get_aval(xf).device or get_default_device())
    return fnp.fft.ifft(xf * h, axis=axis)


def spectrogram(x: Any, fs: Any = 1.0, window: Any = ("tukey", 0.25), nperseg: Any = None,
                noverlap: Any = None, nfft: Any = None, detrend: Any = "constant",
                return_onesided: bool = True, scaling: str = "density", axis: int = -1,
                mode: str = "psd") -> tuple[Any, Any, Any]:
    """A spectrogram (the spectra of consecutive, overlapping segments), as
    ``scipy.signal.spectrogram``: ``(f, t, Sxx)`` with ``Sxx`` of shape
    ``(..., len(f), len(t))``; ``mode`` ``"psd"`` (power), ``"complex"``, ``"magnitude"``,
    ``"angle"`` or ``"phase"`` (unwrapped along the frequencies). Overlap defaults to an
    eighth of a segment, the Tukey window and 256-sample segments, as SciPy.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import spectrogram
        >>> f, t, s = spectrogram(np.cos(np.pi / 2 * np.arange(64.0)), nperseg=16)
        >>> s.shape, float(f[np.argmax(s[:, 0])])
        ((9, 4), 0.25)
    """
    modes = ("psd", "complex", "magnitude", "angle", "phase")
    if mode not in modes:
        raise ValueError(f"unknown value for mode {mode}, must be one of {list(modes)}")
    x = _inexact("spectrogram", x)
    n = x.shape[axis] if x.ndim else 0
    if nperseg is None and isinstance(window, str | tuple):
        nperseg = min(256, n) if n else 256
    elif nperseg is not None and isinstance(window, str | tuple) and nperseg > n:
        nperseg = n
    if noverlap is None:
        seg = nperseg if nperseg is not None else numpy.shape(window)[0]
        noverlap = int(seg) // 8
    if mode == "psd":
        freqs, times, sxx = _spectral("spectrogram", x, None, fs, window, nperseg, noverlap,
                                      nfft, detrend, return_onesided, scaling, axis, "psd")
        return freqs, times, fnp.real(sxx)
    freqs, times, sxx = _spectral("spectrogram", x, None, fs, window, nperseg, noverlap,
                                  nfft, detrend, return_onesided, scaling, axis, "stft")
    if mode == "magnitude":
        sxx = fnp.abs(sxx)
    elif mode in ("angle", "phase"):
        sxx = fnp.angle(sxx)
        if mode == "phase":
            sxx = fnp.unwrap(sxx, axis=(axis - 1) if axis < 0 else axis)
    return freqs, times, sxx
