"""Waveforms and small helpers of ``scipy.signal``: ``chirp``, ``sawtooth``, ``square``,
``gausspulse``, ``unit_impulse``, ``correlation_lags``; and the second-order notch / peak
designs ``iirnotch``, ``iirpeak``.

The waveforms are elementwise formulas on funcgrad operations (differentiable in ``t``,
``jit``/``vmap``-able); the designs are host arithmetic giving NumPy ``(b, a)``, as SciPy's.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.signal import square
    >>> square(np.array([0.5, 2.0, 4.0, 6.0]))
    array([ 1.,  1., -1., -1.])
"""

from __future__ import annotations

import math
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval

__all__ = ["chirp", "sawtooth", "square", "gausspulse", "unit_impulse", "correlation_lags",
           "iirnotch", "iirpeak"]


def _float(t: Any) -> Any:
    t = fnp.asarray(t)
    return t if fnp.issubdtype(get_aval(t).dtype, fnp.inexact) else t.astype(numpy.float64)


def _chirp_phase(t: Any, f0: float, t1: float, f1: float, method: str,
                 vertex_zero: bool) -> Any:
    if method in ("linear", "lin", "li"):
        beta = (f1 - f0) / t1
        return 2 * math.pi * (f0 * t + 0.5 * beta * t * t)
    if method in ("quadratic", "quad", "q"):
        beta = (f1 - f0) / (t1 ** 2)
        if vertex_zero:
            return 2 * math.pi * (f0 * t + beta * t ** 3 / 3)
        return 2 * math.pi * (f1 * t + beta * ((t1 - t) ** 3 - t1 ** 3) / 3)
    if method in ("logarithmic", "log", "lo"):
        if f0 * f1 <= 0.0:
            raise ValueError("For a logarithmic chirp, f0 and f1 must be nonzero and have the "
                             "same sign.")
        if f0 == f1:
            return 2 * math.pi * f0 * t
        beta = t1 / math.log(f1 / f0)
        return 2 * math.pi * beta * f0 * (fnp.power(f1 / f0, t / t1) - 1.0)
    if method in ("hyperbolic", "hyp"):
        if f0 == 0 or f1 == 0:
            raise ValueError("For a hyperbolic chirp, f0 and f1 must be nonzero.")
        if f0 == f1:
            return 2 * math.pi * f0 * t
        sing = -f1 * t1 / (f0 - f1)
        return 2 * math.pi * (-sing * f0) * fnp.log(fnp.abs(1 - t / sing))
    raise ValueError("method must be 'linear', 'quadratic', 'logarithmic', or 'hyperbolic', "
                     f"but a value of {method!r} was given.")


def chirp(t: Any, f0: float, t1: float, f1: float, method: str = "linear", phi: float = 0,
          vertex_zero: bool = True, *, complex: bool = False) -> Any:  # noqa: A002
    """A frequency-swept cosine ``cos(phase(t) + phi)`` (``phi`` in degrees) going from
    ``f0`` at ``t = 0`` to ``f1`` at ``t1``, as ``scipy.signal.chirp``; ``method``
    ``"linear"``, ``"quadratic"`` (``vertex_zero``), ``"logarithmic"``, ``"hyperbolic"``;
    ``complex=True`` gives ``exp(i (phase + phi))``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import chirp
        >>> chirp(np.array([0.0, 0.25, 0.5]), f0=1.0, t1=1.0, f1=3.0).round(6) + 0.0
        array([ 1.      , -0.382683,  0.      ])
    """
    t = _float(t)
    phase = _chirp_phase(t, f0, t1, f1, method, vertex_zero)
    phi = phi * math.pi / 180
    if complex:
        return fnp.exp(1j * (phase + phi))
    return fnp.cos(phase + phi)


def sawtooth(t: Any, width: Any = 1) -> Any:
    """A sawtooth wave of period ``2 pi``: rising from -1 to 1 over ``width`` of the period,
    falling back over the rest, as ``scipy.signal.sawtooth`` (nan outside ``0 <= width <=
    1``).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import sawtooth
        >>> sawtooth(np.array([0.0, np.pi / 2, np.pi, 1.5 * np.pi]))
        array([-1. , -0.5,  0. ,  0.5])
    """
    t = _float(t)
    w = fnp.asarray(width, dtype=get_aval(t).dtype)
    tmod = fnp.mod(t, 2 * math.pi)
    bad = (w > 1) | (w < 0)
    rising = tmod < w * 2 * math.pi
    up = tmod / (math.pi * fnp.where(w == 0, 1.0, w)) - 1
    down = (math.pi * (w + 1) - tmod) / (math.pi * fnp.where(w == 1, 1.0, 1 - w))
    return fnp.where(bad, numpy.nan, fnp.where(rising, up, down))


def square(t: Any, duty: Any = 0.5) -> Any:
    """A square wave of period ``2 pi``: 1 for the first ``duty`` of each period, -1 after,
    as ``scipy.signal.square`` (nan outside ``0 <= duty <= 1``).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import square
        >>> square(np.array([0.0, 1.0, 2.0]), duty=0.25)
        array([ 1.,  1., -1.])
    """
    t = _float(t)
    w = fnp.asarray(duty, dtype=get_aval(t).dtype)
    tmod = fnp.mod(t, 2 * math.pi)
    bad = (w > 1) | (w < 0)
    return fnp.where(bad, numpy.nan, fnp.where(tmod < w * 2 * math.pi, 1.0, -1.0)).astype(
        get_aval(t).dtype)


def gausspulse(t: Any, fc: float = 1000, bw: float = 0.5, bwr: float = -6, tpr: float = -60,
               retquad: bool = False, retenv: bool = False) -> Any:
    """A Gaussian-modulated sinusoid ``exp(-a t**2) cos(2 pi fc t)``, as
    ``scipy.signal.gausspulse`` (``bw``: fractional bandwidth at ``bwr`` dB);
    ``t="cutoff"`` gives the time where the envelope falls to ``tpr`` dB; ``retquad`` /
    ``retenv`` add the quadrature part and the envelope.

    Example:
        >>> from funcgrad.scipy.signal import gausspulse
        >>> round(gausspulse("cutoff", fc=5.0), 6)
        0.556259
    """
    if fc < 0:
        raise ValueError(f"Center frequency (fc={fc:.2f}) must be >=0.")
    if bw <= 0:
        raise ValueError(f"Fractional bandwidth (bw={bw:.2f}) must be > 0.")
    if bwr >= 0:
        raise ValueError(f"Reference level for bandwidth (bwr={bwr:.2f}) must be < 0 dB")
    ref = 10.0 ** (bwr / 20.0)
    a = -(math.pi * fc * bw) ** 2 / (4.0 * math.log(ref))
    if isinstance(t, str):
        if t != "cutoff":
            raise ValueError("If `t` is a string, it must be 'cutoff'")
        if tpr >= 0:
            raise ValueError("Reference level for time cutoff must be < 0 dB")
        tref = 10.0 ** (tpr / 20.0)
        return math.sqrt(-math.log(tref) / a)
    t = _float(t)
    env = fnp.exp(-a * t * t)
    yi = env * fnp.cos(2 * math.pi * fc * t)
    out = [yi]
    if retquad:
        out.append(env * fnp.sin(2 * math.pi * fc * t))
    if retenv:
        out.append(env)
    return out[0] if len(out) == 1 else tuple(out)


def unit_impulse(shape: Any, idx: Any = None, dtype: Any = float) -> Any:
    """An array of zeros with a 1 at ``idx`` (default the first element; ``"mid"`` the
    centre), as ``scipy.signal.unit_impulse``.

    Example:
        >>> from funcgrad.scipy.signal import unit_impulse
        >>> unit_impulse(5, "mid")
        array([0., 0., 1., 0., 0.])
    """
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    out = numpy.zeros(shape, dtype)
    if idx is None:
        idx = (0,) * len(shape)
    elif idx == "mid":
        idx = tuple(s // 2 for s in shape)
    elif not hasattr(idx, "__iter__"):
        idx = (idx,) * len(shape)
    out[tuple(idx)] = 1
    return fnp.asarray(out)


def correlation_lags(in1_len: int, in2_len: int, mode: str = "full") -> numpy.ndarray:
    """The lag of each output of ``correlate(in1, in2, mode)`` for 1-D inputs of these
    lengths, as ``scipy.signal.correlation_lags``.

    Example:
        >>> from funcgrad.scipy.signal import correlation_lags
        >>> correlation_lags(4, 3)
        array([-2, -1,  0,  1,  2,  3])
    """
    if mode == "full":
        return numpy.arange(-in2_len + 1, in1_len)
    if mode == "same":
        lags = numpy.arange(-in2_len + 1, in1_len)
        mid = lags.size // 2
        bound = in1_len // 2
        if in1_len % 2 == 0:
            return lags[mid - bound:mid + bound]
        return lags[mid - bound:mid + bound + 1]
    if mode == "valid":
        bound = in1_len - in2_len
        return numpy.arange(bound + 1) if bound >= 0 else numpy.arange(bound, 1)
    raise ValueError(f"Mode {mode} is invalid")


def _notch_peak(w0: float, q: float, ftype: str, fs: float) -> tuple[numpy.ndarray, ...]:
    w0 = 2 * w0 / fs
    if w0 > 1.0 or w0 < 0.0:
        raise ValueError("w0 should be such that 0 < w0 < 1")
    bw = w0 / q * math.pi
    w0 = w0 * math.pi
    gb = 1 / math.sqrt(2)
    beta = (math.sqrt(1.0 - gb ** 2.0) / gb) * math.tan(bw / 2.0)
    gain = 1.0 / (1.0 + beta)
    if ftype == "notch":
        b = gain * numpy.array([1.0, -2.0 * math.cos(w0), 1.0])
    else:
        b = (1.0 - gain) * numpy.array([1.0, 0.0, -1.0])
    a = numpy.array([1.0, -2.0 * gain * math.cos(w0), 2.0 * gain - 1.0])
    return b, a


def iirnotch(w0: float, Q: float, fs: float = 2.0) -> tuple[numpy.ndarray, numpy.ndarray]:  # noqa: N803
    """A second-order IIR notch filter removing the frequency ``w0`` (in the units of
    ``fs``) with quality factor ``Q``, as ``scipy.signal.iirnotch``: ``(b, a)``.

    Example:
        >>> from funcgrad.scipy.signal import iirnotch
        >>> b, a = iirnotch(60.0, 30.0, fs=1000.0)
        >>> b.round(6), a.round(6)
        (array([ 0.993756, -1.847942,  0.993756]), array([ 1.      , -1.847942,  0.987512]))
    """
    return _notch_peak(w0, Q, "notch", fs)


def iirpeak(w0: float, Q: float, fs: float = 2.0) -> tuple[numpy.ndarray, numpy.ndarray]:  # noqa: N803
    """A second-order IIR peak (resonator) filter at ``w0`` with quality factor ``Q``, as
    ``scipy.signal.iirpeak``: ``(b, a)``.

    Example:
        >>> from funcgrad.scipy.signal import iirpeak
        >>> b, a = iirpeak(60.0, 30.0, fs=1000.0)
        >>> b.round(6) + 0.0, a.round(6)
        (array([ 0.006244,  0.      , -0.006244]), array([ 1.      , -1.847942,  0.987512]))
    """
    return _notch_peak(w0, Q, "peak", fs)
