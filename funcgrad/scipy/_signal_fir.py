"""FIR design of ``scipy.signal``: ``firwin`` (the window method) and the Kaiser helpers
``kaiser_beta``, ``kaiser_atten``, ``kaiserord``. Host arithmetic on concrete numbers
(NumPy arrays out, as SciPy); filter with :func:`funcgrad.scipy.signal.lfilter`,
``convolve`` or ``filtfilt``.

Example:
    >>> from funcgrad.scipy.signal import firwin
    >>> firwin(5, 0.5).round(6) + 0.0
    array([0.      , 0.203712, 0.592575, 0.203712, 0.      ])
"""

from __future__ import annotations

import math
from typing import Any

import numpy

from funcgrad.core import Tracer
from funcgrad.scipy._signal_spectral import get_window

__all__ = ["firwin", "kaiser_beta", "kaiser_atten", "kaiserord"]


def kaiser_beta(a: float) -> float:
    """The Kaiser window's ``beta`` for a stopband attenuation of ``a`` dB (Kaiser's
    formula), as ``scipy.signal.kaiser_beta``.

    Example:
        >>> from funcgrad.scipy.signal import kaiser_beta
        >>> round(kaiser_beta(65.0), 6)
        6.20426
    """
    if a > 50:
        return 0.1102 * (a - 8.7)
    if a > 21:
        return 0.5842 * (a - 21) ** 0.4 + 0.07886 * (a - 21)
    return 0.0


def kaiser_atten(numtaps: int, width: float) -> float:
    """The attenuation (dB) of a Kaiser FIR filter of ``numtaps`` taps and transition
    ``width`` (a fraction of Nyquist), as ``scipy.signal.kaiser_atten``.

    Example:
        >>> from funcgrad.scipy.signal import kaiser_atten
        >>> round(kaiser_atten(101, 0.1), 6)
        79.735392
    """
    return 2.285 * (numtaps - 1) * math.pi * width + 7.95


def kaiserord(ripple: float, width: float) -> tuple[int, float]:
    """``(numtaps, beta)`` of a Kaiser-window FIR filter with ``ripple`` dB of
    attenuation and transition ``width`` (a fraction of Nyquist), as
    ``scipy.signal.kaiserord``.

    Example:
        >>> from funcgrad.scipy.signal import kaiserord
        >>> numtaps, beta = kaiserord(65.0, 0.1)
        >>> numtaps, round(beta, 6)
        (81, 6.20426)
    """
    a = abs(float(ripple))
    if a < 8:
        raise ValueError("Requested maximum ripple attenuation is too small for the Kaiser "
                         "formula.")
    beta = kaiser_beta(a)
    numtaps = (a - 7.95) / 2.285 / (math.pi * float(width)) + 1
    return int(math.ceil(numtaps)), beta


_PASS_ZERO = {"lowpass": True, "bandstop": True, "highpass": False, "bandpass": False}


def firwin(numtaps: int, cutoff: Any, *, width: float | None = None,
           window: Any = "hamming", pass_zero: Any = True, scale: bool = True,
           fs: float | None = None) -> numpy.ndarray:
    """A linear-phase FIR filter by the window method, as ``scipy.signal.firwin``:
    ``numtaps`` taps, band edges ``cutoff`` (a fraction of Nyquist, or in the units of
    ``fs``), ``pass_zero`` True/False or ``"lowpass"``/``"highpass"``/``"bandpass"``/
    ``"bandstop"``, any :func:`get_window` window (or a Kaiser window from ``width``),
    scaled to unit gain at the centre of the first passband.

    Example:
        >>> from funcgrad.scipy.signal import firwin
        >>> firwin(7, [0.2, 0.5], pass_zero=False).round(6)
        array([-0.03453 , -0.097836,  0.210656,  0.625505,  0.210656, -0.097836,
               -0.03453 ])
    """
    if isinstance(cutoff, Tracer):
        raise TypeError("firwin: cutoff must be concrete (the design is host arithmetic)")
    nyq = 0.5 * (2.0 if fs is None else float(fs))
    cutoff = numpy.atleast_1d(numpy.asarray(cutoff, dtype=float)) / nyq
    numtaps = int(numtaps)
    if cutoff.ndim > 1:
        raise ValueError("The cutoff argument must be at most one-dimensional.")
    if cutoff.size == 0:
        raise ValueError("At least one cutoff frequency must be given.")
    if cutoff.min() <= 0 or cutoff.max() >= 1:
        raise ValueError("Invalid cutoff frequency: frequencies must be greater than 0 and "
                         "less than fs/2.")
    if numpy.any(numpy.diff(cutoff) <= 0):
        raise ValueError("Invalid cutoff frequencies: the frequencies must be strictly "
                         "increasing.")
    if width is not None:
        beta = kaiser_beta(kaiser_atten(numtaps, float(width) / nyq))
        window = ("kaiser", beta)
    if isinstance(pass_zero, str):
        if pass_zero not in _PASS_ZERO:
            raise ValueError(f"pass_zero must be True, False, 'bandpass', 'lowpass', "
                             f"'highpass', or 'bandstop', got {pass_zero}")
        if pass_zero in ("bandstop", "bandpass") and cutoff.size < 2:
            raise ValueError(f"cutoff must have at least two elements for "
                             f"pass_zero={pass_zero!r}, got {cutoff.shape}")
        if pass_zero in ("lowpass", "highpass") and cutoff.size != 1:
            raise ValueError(f"cutoff must have one element if pass_zero=={pass_zero!r}, got "
                             f"{cutoff.shape}")
        pass_zero = _PASS_ZERO[pass_zero]
    elif not isinstance(pass_zero, bool | numpy.bool_):
        raise ValueError(f"pass_zero must be True, False, 'bandpass', 'lowpass', 'highpass', "
                         f"or 'bandstop', got {pass_zero}")
    pass_zero = bool(pass_zero)
    pass_nyquist = bool(cutoff.size & 1) ^ pass_zero
    if pass_nyquist and numtaps % 2 == 0:
        raise ValueError("A filter with an even number of coefficients must have zero "
                         "response at the Nyquist frequency.")
    edges = numpy.hstack(([0.0] * pass_zero, cutoff, [1.0] * pass_nyquist))
    bands = edges.reshape(-1, 2)
    m = numpy.arange(0, numtaps) - 0.5 * (numtaps - 1)
    h = numpy.zeros(numtaps)
    for left, right in bands:
        h += right * numpy.sinc(right * m)
        h -= left * numpy.sinc(left * m)
    h *= numpy.asarray(get_window(window, numtaps, fftbins=False))
    if scale:
        left, right = bands[0]
        freq = 0.0 if left == 0 else (1.0 if right == 1 else 0.5 * (left + right))
        h /= numpy.sum(h * numpy.cos(numpy.pi * m * freq))
    return h
