"""funcgrad.scipy.signal: convolution and correlation as ``scipy.signal`` (and
``jax.scipy.signal``): ``convolve``, ``correlate``, ``convolve2d``, ``correlate2d``,
``fftconvolve``, ``detrend``; and spectral analysis: ``get_window``, ``stft``, ``istft``,
``csd``, ``welch``, ``periodogram``, ``hilbert`` (in :mod:`funcgrad.scipy._signal_spectral`).

The direct methods are one ``funcgrad.lax.conv_general_dilated`` (bilinear: differentiable in
both inputs to any order, batched by ``vmap``); ``fftconvolve`` (and ``method="fft"``) goes
through ``funcgrad.numpy.fft``. Result dtypes are SciPy's: the inputs' common type (integers
stay integers, booleans stay booleans) for ``convolve``/``correlate``; inexact for
``fftconvolve``.

Example:
    >>> import numpy as np, funcgrad.scipy.signal as fss
    >>> fss.convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
    array([0. , 1. , 2.5, 4. , 1.5])
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.lax import conv_general_dilated
from funcgrad.scipy._detrend import detrend
from funcgrad.scipy._device import keep_host_inputs_on_host as _keep_host_inputs_on_host
from funcgrad.scipy._savgol import savgol_coeffs, savgol_filter
from funcgrad.scipy._signal_filters import (
    filtfilt,
    lfilter,
    lfilter_zi,
    lfiltic,
    medfilt,
    medfilt2d,
)
from funcgrad.scipy._signal_fir import firwin, kaiser_atten, kaiser_beta, kaiserord
from funcgrad.scipy._signal_iir import (
    butter,
    cheby1,
    cheby2,
    freqz,
    freqz_sos,
    iirfilter,
    sosfilt,
    sosfilt_zi,
    sosfiltfilt,
    sosfreqz,
    tf2sos,
    tf2zpk,
    zpk2sos,
    zpk2tf,
)
from funcgrad.scipy._signal_peaks import (
    PeakPropertyWarning,
    argrelextrema,
    argrelmax,
    argrelmin,
    find_peaks,
    peak_prominences,
    peak_widths,
)
from funcgrad.scipy._signal_resample import decimate, resample, resample_poly, upfirdn
from funcgrad.scipy._signal_spectral import (
    coherence,
    csd,
    get_window,
    hilbert,
    istft,
    periodogram,
    spectrogram,
    stft,
    welch,
)
from funcgrad.scipy._signal_waveforms import (
    chirp,
    correlation_lags,
    gausspulse,
    iirnotch,
    iirpeak,
    sawtooth,
    square,
    unit_impulse,
)
from funcgrad.scipy.signal import windows

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d", "fftconvolve", "detrend",
           "get_window", "stft", "istft", "csd", "welch", "periodogram", "hilbert", "lfilter",
           "lfilter_zi", "filtfilt", "butter", "medfilt", "medfilt2d", "oaconvolve", "cheby1",
           "cheby2", "iirfilter", "zpk2tf", "zpk2sos", "tf2sos", "sosfilt", "sosfilt_zi",
           "sosfiltfilt", "freqz", "sosfreqz", "freqz_sos", "savgol_coeffs", "savgol_filter",
           "firwin", "kaiser_beta", "kaiser_atten", "kaiserord", "spectrogram", "decimate",
           "find_peaks", "peak_prominences", "peak_widths", "argrelextrema", "argrelmax",
           "argrelmin", "PeakPropertyWarning", "upfirdn", "resample_poly", "resample",
           "chirp", "sawtooth", "square", "gausspulse", "unit_impulse", "correlation_lags",
           "iirnotch", "iirpeak", "coherence", "windows", "lfiltic", "tf2zpk"]

_MODES = ("full", "same", "valid")


def _check_mode(name: str, mode: str) -> None:
    if mode not in _MODES:
        raise ValueError(f"{name}: acceptable mode flags are 'valid', 'same', or 'full', got "
                         f"{mode!r}")


def _inputs_swap_needed(name: str, mode: str, s1: tuple, s2: tuple) -> bool:
    """SciPy's rule: in 'valid' mode one input must contain the other; swap if in2 does."""
    if mode != "valid":
        return False
    if all(a >= b for a, b in zip(s1, s2)):
        return False
    if all(b >= a for a, b in zip(s1, s2)):
        return True
    raise ValueError(f"{name}: for 'valid' mode, one must be at least as large as the other in "
                     f"every dimension, got shapes {s1} and {s2}")


def _operands(name: str, in1: Any, in2: Any) -> tuple[Any, Any, numpy.dtype]:
    in1, in2 = fnp.asarray(in1), fnp.asarray(in2)
    a1, a2 = get_aval(in1), get_aval(in2)
    if a1.ndim != a2.ndim:
        raise ValueError(f"{name}: in1 and in2 should have the same dimensionality, got shapes "
                         f"{a1.shape} and {a2.shape}")
    return in1, in2, numpy.result_type(a1.dtype, a2.dtype)


def _compute_dtype(dt: numpy.dtype) -> numpy.dtype:
    return numpy.dtype(numpy.int64) if dt.kind == "b" else dt


def _correlate_padded(x: Any, k: Any, pads: list[tuple[int, int]]) -> Any:
    """``out[i] = sum_j xpad[i + j] k[j]`` (no flip, no conjugate) with ``x`` zero-padded by
    ``pads``: one N-d ``conv_general_dilated``."""
    nd = get_aval(x).ndim
    lhs = fnp.reshape(x, (1, 1) + get_aval(x).shape)
    rhs = fnp.reshape(k, (1, 1) + get_aval(k).shape)
    out = conv_general_dilated(lhs, rhs, (1,) * nd, pads)
    return fnp.reshape(out, get_aval(out).shape[2:])


def _convolve_direct(in1: Any, in2: Any, mode: str) -> Any:
    """Full/same/valid convolution (inputs already swapped for 'valid')."""
    s1, s2 = get_aval(in1).shape, get_aval(in2).shape
    if mode == "full":
        pads = [(k - 1, k - 1) for k in s2]
    elif mode == "same":  # SciPy centres: full[(k - 1) // 2 :][: n]
        pads = [(k - 1 - (k - 1) // 2, (k - 1) // 2) for k in s2]
    else:
        pads = [(0, 0)] * len(s1)
    return _correlate_padded(in1, fnp.flip(in2), pads)


def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto",
             precision: Any = None) -> Any:
    """N-dimensional convolution of ``in1`` and ``in2`` (same number of dimensions).

    ``mode``: ``"full"`` (size ``n + k - 1``), ``"same"`` (``in1``'s shape, centred as
    SciPy) or ``"valid"`` (one input must contain the other in every dimension; they are
    swapped if ``in2`` is the larger). ``method``: ``"auto"``/``"direct"`` (a direct
    convolution) or ``"fft"`` (:func:`fftconvolve`, rounded back for integer inputs, as SciPy).

    Example:
        >>> import numpy as np, funcgrad.scipy.signal as fss
        >>> fss.convolve(np.array([1, 2, 3]), np.array([1, 1]), mode="same")
        array([1, 3, 5])
    """
    _check_mode("convolve", mode)
    if method not in ("auto", "direct", "fft"):
        raise ValueError(f"convolve: acceptable method flags are 'auto', 'direct', or 'fft', got "
                         f"{method!r}")
    in1, in2, dt = _operands("convolve", in1, in2)
    if get_aval(in1).ndim == 0:
        return in1 * in2
    if get_aval(in1).size == 0 or get_aval(in2).size == 0:
        raise ValueError(f"convolve: inputs cannot be empty, got shapes {get_aval(in1).shape} "
                         f"and {get_aval(in2).shape}")
    if _inputs_swap_needed("convolve", mode, get_aval(in1).shape, get_aval(in2).shape):
        in1, in2 = in2, in1
    if method == "fft":
        out = fftconvolve(in1, in2, mode)
        if dt.kind in "biu":
            out = fnp.round(out) if dt.kind != "b" else out != 0
        return out.astype(dt)
    cdt = _compute_dtype(dt)
    out = _convolve_direct(in1.astype(cdt), in2.astype(cdt), mode)
    return out.astype(dt) if dt.kind == "b" else out


def _reverse_and_conj(x: Any) -> Any:
    x = fnp.flip(x)
    return fnp.conj(x) if get_aval(x).dtype.kind == "c" else x


def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto",
              precision: Any = None) -> Any:
    """N-dimensional cross-correlation, ``z[k] = sum_l in1[l + k - K] conj(in2[l])``:
    ``convolve(in1, reverse(conj(in2)))``, with SciPy's modes and methods.

    Example:
        >>> import numpy as np, funcgrad.scipy.signal as fss
        >>> fss.correlate(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
        array([0.5, 2. , 3.5, 3. , 0. ])
    """
    _check_mode("correlate", mode)
    in1, in2, _ = _operands("correlate", in1, in2)
    if mode == "valid" and _inputs_swap_needed("correlate", mode, get_aval(in1).shape,
                                                get_aval(in2).shape):
        return _reverse_and_conj(convolve(in2, _reverse_and_conj(in1), mode, method))
    return convolve(in1, _reverse_and_conj(in2), mode, method)


_BOUNDARY = {"fill": "constant", "pad": "constant", "wrap": "wrap", "circular": "wrap",
             "symm": "symmetric", "symmetric": "symmetric"}


def _conv2d(name: str, in1: Any, in2: Any, mode: str, boundary: str, fillvalue: Any,
            correlate_: bool) -> Any:
    _check_mode(name, mode)
    if boundary not in _BOUNDARY:
        raise ValueError(f"{name}: acceptable boundary flags are 'fill', 'wrap' and 'symm', "
                         f"got {boundary!r}")
    in1, in2, dt = _operands(name, in1, in2)
    if get_aval(in1).ndim != 2:
        raise ValueError(f"{name}: inputs must both be 2-D arrays, got shapes "
                         f"{get_aval(in1).shape} and {get_aval(in2).shape}")
    if dt.kind == "b":
        raise TypeError(f"{name}: boolean inputs are not supported (as in SciPy)")
    swapped = _inputs_swap_needed(name, mode, get_aval(in1).shape, get_aval(in2).shape)
    if swapped:
        in1, in2 = in2, in1
    in1, in2 = in1.astype(dt), in2.astype(dt)
    k = get_aval(in2).shape
    if correlate_:
        kernel = fnp.conj(in2) if dt.kind == "c" else in2
    else:
        kernel = fnp.flip(in2)
    if mode == "valid":
        out = _correlate_padded(in1, kernel, [(0, 0), (0, 0)])
    else:
        # Extend in1 by k - 1 on each side with the boundary rule, then a valid correlation.
        ext = [(d - 1, d - 1) for d in k]
        pad_mode = _BOUNDARY[boundary]
        if pad_mode == "constant":
            x = fnp.pad(in1, ext, mode="constant", constant_values=fillvalue)
        else:
            x = fnp.pad(in1, ext, mode=pad_mode)
        out = _correlate_padded(x, kernel, [(0, 0), (0, 0)])
        if mode == "same":
            n = get_aval(in1).shape
            # correlate2d's "same" is centred on the correlation, convolve2d's on the
            # convolution: the kernel's centre is at (k - 1) // 2 of the flipped kernel.
            starts = [(d - 1) // 2 if not correlate_ else d // 2 for d in k]
            out = out[starts[0]:starts[0] + n[0], starts[1]:starts[1] + n[1]]
    if swapped and correlate_:
        out = fnp.flip(out)
    return out


def convolve2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
               fillvalue: Any = 0, precision: Any = None) -> Any:
    """2-D convolution with SciPy's ``mode`` and ``boundary`` (``"fill"`` with
    ``fillvalue``, ``"wrap"``, ``"symm"``).

    Example:
        >>> import numpy as np, funcgrad.scipy.signal as fss
        >>> fss.convolve2d(np.eye(2), np.ones((2, 2)))
        array([[1., 1., 0.],
               [1., 2., 1.],
               [0., 1., 1.]])
    """
    return _conv2d("convolve2d", in1, in2, mode, boundary, fillvalue, False)


def correlate2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
                fillvalue: Any = 0, precision: Any = None) -> Any:
    """2-D cross-correlation (``in2`` conjugated) with SciPy's ``mode`` and ``boundary``.

    Example:
        >>> import numpy as np, funcgrad.scipy.signal as fss
        >>> fss.correlate2d(np.arange(4.0).reshape(2, 2), np.array([[1.0, 2.0]]), mode="same")
        array([[2., 1.],
               [8., 3.]])
    """
    return _conv2d("correlate2d", in1, in2, mode, boundary, fillvalue, True)


def _centered(x: Any, shape: tuple[int, ...], axes: list[int]) -> Any:
    full = get_aval(x).shape
    idx = [slice(None)] * len(full)
    for ax in axes:
        start = (full[ax] - shape[ax]) // 2
        idx[ax] = slice(start, start + shape[ax])
    return x[tuple(idx)]


def fftconvolve(in1: Any, in2: Any, mode: str = "full", axes: Any = None) -> Any:
    """Convolution through FFTs over ``axes`` (all by default; the other axes broadcast),
    with SciPy's modes. The result is inexact (float64 for integers).

    Example:
        >>> import numpy as np, funcgrad.scipy.signal as fss
        >>> fss.fftconvolve(np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0])).round(12)
        array([1., 3., 5., 3.])
    """
    _check_mode("fftconvolve", mode)
    in1, in2, dt = _operands("fftconvolve", in1, in2)
    if dt.kind in "biu":
        dt = numpy.dtype(numpy.float64)
    elif dt == numpy.float16:
        dt = numpy.dtype(numpy.float32)
    in1, in2 = in1.astype(dt), in2.astype(dt)
    nd = get_aval(in1).ndim
    if nd == 0:
        return in1 * in2
    if axes is None:
        axes = list(range(nd))
    else:
        axes = [int(a) for a in numpy.atleast_1d(axes)]
        if any(not -nd <= a < nd for a in axes):
            raise ValueError(f"fftconvolve: axes {axes} out of range for {nd}-D inputs")
        axes = sorted({a % nd for a in axes})
    s1, s2 = get_aval(in1).shape, get_aval(in2).shape
    for a in range(nd):
        if a not in axes and s1[a] != s2[a] and 1 not in (s1[a], s2[a]):
            raise ValueError(f"fftconvolve: incompatible shapes for in1 and in2: {s1} and {s2}")
    if get_aval(in1).size == 0 or get_aval(in2).size == 0:
        return fnp.zeros((0,), dtype=dt)  # SciPy's empty result
    if mode == "valid" and _inputs_swap_needed(
            "fftconvolve", mode, tuple(s1[a] for a in axes), tuple(s2[a] for a in axes)):
        in1, in2 = in2, in1
        s1, s2 = s2, s1
    shape = [s1[a] + s2[a] - 1 for a in axes]
    if dt.kind == "c":
        out = fnp.fft.ifftn(fnp.fft.fftn(in1, shape, axes) * fnp.fft.fftn(in2, shape, axes),
                            shape, axes)
    else:
        out = fnp.fft.irfftn(fnp.fft.rfftn(in1, shape, axes) * fnp.fft.rfftn(in2, shape, axes),
                             shape, axes)
    out = out.astype(dt)
    if mode == "full":
        return out
    outshape = list(get_aval(out).shape)
    for a in axes:
        outshape[a] = s1[a] if mode == "same" else s1[a] - s2[a] + 1
    return _centered(out, tuple(outshape), axes)


def oaconvolve(in1: Any, in2: Any, mode: str = "full", axes: Any = None) -> Any:
    """``scipy.signal.oaconvolve`` (overlap-add convolution): the same values as
    :func:`fftconvolve`, which it is here (one FFT over the whole length; no block size to
    tune under XLA-style compilation).

    Example:
        >>> import numpy as np, funcgrad.scipy.signal as fss
        >>> fss.oaconvolve(np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0]), mode="same").round(12)
        array([1., 3., 5.])
    """
    return fftconvolve(in1, in2, mode=mode, axes=axes)

# NumPy inputs compute on the host whatever the default device (funcgrad.scipy._device)
_keep_host_inputs_on_host(globals(), __all__)
