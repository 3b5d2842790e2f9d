"""``scipy.signal``'s IIR design and second-order sections: ``iirfilter`` with the
Butterworth and Chebyshev type I/II prototypes (``butter``, ``cheby1``, ``cheby2``), the
conversions ``zpk2tf``, ``zpk2sos`` (SciPy's pole/zero pairing, so the sections come out
in SciPy's order), ``tf2sos``, and the filters ``sosfilt``, ``sosfilt_zi``,
``sosfiltfilt``, with the frequency responses ``freqz`` and ``sosfreqz``.

The designs are host arithmetic on concrete numbers (NumPy arrays out, as SciPy); the
filters and the responses are funcgrad computations, differentiable in the coefficients
and the signal and usable under ``jit``/``vmap``.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.signal import cheby1, sosfilt
    >>> sos = cheby1(4, 1.0, 0.3, output="sos")
    >>> sos.shape
    (2, 6)
    >>> sosfilt(sos, np.ones(4)).round(6)
    array([0.008363, 0.061672, 0.215783, 0.484195])
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.api_devices import device_get
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device
from funcgrad.core import Tracer
from funcgrad.scipy._signal_filters import _BTYPES, _extend, _slice, lfilter, lfilter_zi

__all__ = ["iirfilter", "butter", "cheby1", "cheby2", "zpk2tf", "tf2zpk", "zpk2sos", "tf2sos",
           "sosfilt",
           "sosfilt_zi", "sosfiltfilt", "freqz", "sosfreqz", "freqz_sos"]


def _buttap(n: int) -> tuple[numpy.ndarray, numpy.ndarray, float]:
    m = numpy.arange(-n + 1, n, 2)
    return numpy.zeros(0), -numpy.exp(1j * numpy.pi * m / (2 * n)), 1.0


def _cheb1ap(n: int, rp: float) -> tuple[numpy.ndarray, numpy.ndarray, float]:
    eps = math.sqrt(10 ** (0.1 * rp) - 1.0)
    mu = 1.0 / n * math.asinh(1.0 / eps)
    theta = numpy.pi * numpy.arange(-n + 1, n, 2, dtype=float) / (2 * n)
    p = -numpy.sinh(mu + 1j * theta)
    k = float(numpy.real(numpy.prod(-p)))
    if n % 2 == 0:
        k = k / math.sqrt(1.0 + eps * eps)
    return numpy.zeros(0), p, k


def _cheb2ap(n: int, rs: float) -> tuple[numpy.ndarray, numpy.ndarray, float]:
    de = 1.0 / math.sqrt(10 ** (0.1 * rs) - 1.0)
    mu = math.asinh(1.0 / de) / n
    if n % 2:
        m = numpy.concatenate([numpy.arange(-n + 1, 0, 2, dtype=float),
                               numpy.arange(2, n, 2, dtype=float)])
    else:
        m = numpy.arange(-n + 1, n, 2, dtype=float)
    z = 1j / numpy.sin(m * numpy.pi / (2 * n))
    theta = numpy.pi * numpy.arange(-n + 1, n, 2, dtype=float) / (2 * n)
    p = -1.0 / numpy.sinh(mu + 1j * theta)
    k = float(numpy.real(numpy.prod(-p) / numpy.prod(-z)))
    return z, p, k


def _transform(z: numpy.ndarray, p: numpy.ndarray, k: float, kind: str, wn: numpy.ndarray
               ) -> tuple[numpy.ndarray, numpy.ndarray, float]:
    """The lowpass prototype moved to the band (SciPy's lp2lp/hp/bp/bs_zpk)."""
    deg = p.size - z.size
    if kind == "lowpass":
        return wn[0] * z, wn[0] * p, k * wn[0] ** deg
    if kind == "highpass":
        k = k * float(numpy.real(numpy.prod(-z) / numpy.prod(-p)))
        return numpy.concatenate([wn[0] / z, numpy.zeros(deg)]), wn[0] / p, k
    wo, bw = math.sqrt(wn[0] * wn[1]), wn[1] - wn[0]
    if kind == "bandpass":
        zl, pl = z * bw / 2.0, p * bw / 2.0
        z = numpy.concatenate([zl + numpy.sqrt(zl ** 2 - wo ** 2 + 0j),
                               zl - numpy.sqrt(zl ** 2 - wo ** 2 + 0j), numpy.zeros(deg)])
        p = numpy.concatenate([pl + numpy.sqrt(pl ** 2 - wo ** 2 + 0j),
                               pl - numpy.sqrt(pl ** 2 - wo ** 2 + 0j)])
        return z, p, k * bw ** deg
    k = k * float(numpy.real(numpy.prod(-z) / numpy.prod(-p)))
    zh, ph = (bw / 2.0) / z, (bw / 2.0) / p
    z = numpy.concatenate([zh + numpy.sqrt(zh ** 2 - wo ** 2 + 0j),
                           zh - numpy.sqrt(zh ** 2 - wo ** 2 + 0j),
                           numpy.full(deg, 1j * wo), numpy.full(deg, -1j * wo)])
    p = numpy.concatenate([ph + numpy.sqrt(ph ** 2 - wo ** 2 + 0j),
                           ph - numpy.sqrt(ph ** 2 - wo ** 2 + 0j)])
    return z, p, k


def _real_if_close(v: numpy.ndarray) -> numpy.ndarray:
    return v.real if v.size == 0 or numpy.all(v.imag == 0) else v


def zpk2tf(z: Any, p: Any, k: Any) -> tuple[numpy.ndarray, numpy.ndarray]:
    """Zeros, poles and gain to the transfer function's ``(b, a)``, as
    ``scipy.signal.zpk2tf`` (real coefficients when the roots come in conjugate pairs).

    Example:
        >>> from funcgrad.scipy.signal import zpk2tf
        >>> zpk2tf([-1.0], [0.5], 2.0)
        (array([2., 2.]), array([ 1. , -0.5]))
    """
    # (design on the host, as SciPy's: device inputs come back explicitly)
    z, p, k = device_get(z), device_get(p), device_get(k)
    z, p = numpy.atleast_1d(numpy.asarray(z)), numpy.atleast_1d(numpy.asarray(p))
    b = k * numpy.poly(z) if z.size else numpy.atleast_1d(numpy.asarray(k, dtype=float))
    a = numpy.poly(p) if p.size else numpy.ones(1)
    if numpy.iscomplexobj(b):
        roots = numpy.sort_complex(z)
        if numpy.all(numpy.sort_complex(numpy.conj(roots)) == roots):
            b = b.real.copy()
    if numpy.iscomplexobj(a):
        roots = numpy.sort_complex(p)
        if numpy.all(numpy.sort_complex(numpy.conj(roots)) == roots):
            a = a.real.copy()
    return numpy.asarray(b), numpy.asarray(a)


def tf2zpk(b: Any, a: Any) -> tuple[numpy.ndarray, numpy.ndarray, float]:
    """The zeros, poles and gain of the transfer function ``b(z) / a(z)``, as
    ``scipy.signal.tf2zpk`` (leading zeros of ``a`` trimmed, normalised by ``a[0]``).

    Example:
        >>> from funcgrad.scipy.signal import tf2zpk
        >>> tf2zpk([2.0, 2.0], [1.0, -0.5])
        (array([-1.]), array([0.5]), np.float64(2.0))
    """
    b = numpy.atleast_1d(numpy.asarray(device_get(b), dtype=float) * 1.0)
    a = numpy.atleast_1d(numpy.asarray(device_get(a), dtype=float) * 1.0)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError("tf2zpk: b and a must be 1-D")
    if numpy.all(a == 0):
        raise ValueError("Denominator must have at least on nonzero element.")
    a = numpy.trim_zeros(a, "f")
    b, a = b / a[0], a / a[0]
    lead = 0
    while lead < b.size - 1 and abs(b[lead]) <= 1e-14:
        lead += 1
    if lead:
        warnings.warn("Badly conditioned filter coefficients (numerator): the results may be "
                      "meaningless", RuntimeWarning, stacklevel=2)
        b = b[lead:]
    k = b[0]
    return numpy.roots(b / b[0]), numpy.roots(a), k


def _cplxreal(z: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray]:
    """(the complex roots with positive imaginary part, the real ones), SciPy's ordering."""
    z = numpy.atleast_1d(z)
    if z.size == 0:
        return z, z
    tol = 100 * numpy.finfo((1.0 * z).dtype).eps
    z = z[numpy.lexsort((abs(z.imag), z.real))]
    real = abs(z.imag) <= tol * abs(z)
    zr = z[real].real
    if real.all():
        return numpy.array([]), zr
    z = z[~real]
    zp, zn = z[z.imag > 0], z[z.imag < 0]
    if len(zp) != len(zn):
        raise ValueError("Array contains complex value with no matching conjugate.")
    same = numpy.diff(zp.real) <= tol * abs(zp[:-1])
    diffs = numpy.diff(numpy.concatenate(([0], same, [0])))
    for start, stop in zip(numpy.nonzero(diffs > 0)[0], numpy.nonzero(diffs < 0)[0] + 1):
        for chunk in (zp[start:stop], zn[start:stop]):
            chunk[...] = chunk[numpy.lexsort([abs(chunk.imag)])]
    if any(abs(zp - zn.conj()) > tol * abs(zn)):
        raise ValueError("Array contains complex value with no matching conjugate.")
    return (zp + zn.conj()) / 2, zr


def _nearest(fro: numpy.ndarray, to: complex, which: str) -> int:
    order = numpy.argsort(numpy.abs(fro - to))
    if which == "any":
        return int(order[0])
    mask = numpy.isreal(fro[order])
    if which == "complex":
        mask = ~mask
    return int(order[numpy.nonzero(mask)[0][0]])


def _section(z: list, p: list) -> numpy.ndarray:
    sos = numpy.zeros(6)
    b, a = zpk2tf(numpy.asarray(z), numpy.asarray(p), 1.0)
    sos[3 - len(b):3] = b
    sos[6 - len(a):6] = a
    return sos


def zpk2sos(z: Any, p: Any, k: Any, pairing: str | None = None, *,
            analog: bool = False) -> numpy.ndarray:
    """Zeros, poles and gain to second-order sections ``(n_sections, 6)``, as
    ``scipy.signal.zpk2sos``: poles nearest the unit circle (the imaginary axis, analog)
    go last, each paired with its nearest zeros (``pairing`` ``"nearest"``, ``"keep_odd"``,
    ``"minimal"``).

    Example:
        >>> from funcgrad.scipy.signal import zpk2sos
        >>> zpk2sos([-1.0, -1.0], [0.5, 0.25], 1.0)
        array([[ 1.   ,  2.   ,  1.   ,  1.   , -0.75 ,  0.125]])
    """
    z, p, k = device_get(z), device_get(p), device_get(k)  # (design on the host)
    z, p = numpy.atleast_1d(numpy.asarray(z)), numpy.atleast_1d(numpy.asarray(p))
    k = numpy.asarray(k)
    if pairing is None:
        pairing = "minimal" if analog else "nearest"
    if pairing not in ("nearest", "keep_odd", "minimal"):
        raise ValueError(f"pairing must be one of ['nearest', 'keep_odd', 'minimal'], not "
                         f"{pairing}")
    if analog and pairing != "minimal":
        raise ValueError('for analog zpk2sos conversion, pairing must be "minimal"')
    if len(z) == len(p) == 0:
        return numpy.array([[float(k), 0.0, 0.0, 1.0, 0.0, 0.0]] if not analog else
                           [[0.0, 0.0, float(k), 0.0, 0.0, 1.0]])
    if pairing != "minimal":
        p = numpy.concatenate((p, numpy.zeros(max(len(z) - len(p), 0))))
        z = numpy.concatenate((z, numpy.zeros(max(len(p) - len(z), 0))))
        n_sections = (max(len(p), len(z)) + 1) // 2
        if len(p) % 2 == 1 and pairing == "nearest":
            p = numpy.concatenate((p, [0.0]))
            z = numpy.concatenate((z, [0.0]))
    else:
        if len(p) < len(z):
            raise ValueError("for analog zpk2sos conversion, must have len(p)>=len(z)")
        n_sections = (len(p) + 1) // 2
    z = numpy.concatenate(_cplxreal(z))
    p = numpy.concatenate(_cplxreal(p))
    if not numpy.isreal(k):
        raise ValueError("k must be real")
    k = float(numpy.real(k))

    def worst(v: numpy.ndarray) -> int:
        return int(numpy.argmin(numpy.abs(numpy.real(v)) if analog else
                                numpy.abs(1 - numpy.abs(v))))

    sos = numpy.zeros((n_sections, 6))
    for si in range(n_sections - 1, -1, -1):
        i1 = worst(p)
        p1 = p[i1]
        p = numpy.delete(p, i1)
        if numpy.isreal(p1) and numpy.isreal(p).sum() == 0:
            if pairing != "minimal" or len(z) > 0:
                j = _nearest(z, p1, "real")
                z1 = z[j]
                z = numpy.delete(z, j)
                sos[si] = _section([z1, 0], [p1, 0]) if pairing != "minimal" else \
                    _section([z1], [p1])
            else:
                sos[si] = _section([], [p1])
        elif (len(p) + 1 == len(z) and not numpy.isreal(p1)
              and numpy.isreal(p).sum() == 1 and numpy.isreal(z).sum() == 1):
            j = _nearest(z, p1, "complex")
            z1 = z[j]
            z = numpy.delete(z, j)
            sos[si] = _section([z1, z1.conj()], [p1, p1.conj()])
        else:
            if numpy.isreal(p1):
                reals = numpy.flatnonzero(numpy.isreal(p))
                i2 = int(reals[worst(p[reals])])
                p2 = p[i2]
                p = numpy.delete(p, i2)
            else:
                p2 = p1.conj()
            if len(z) > 0:
                j = _nearest(z, p1, "any")
                z1 = z[j]
                z = numpy.delete(z, j)
                if not numpy.isreal(z1):
                    sos[si] = _section([z1, z1.conj()], [p1, p2])
                elif len(z) > 0:
                    j2 = _nearest(z, p1, "real")
                    z2 = z[j2]
                    z = numpy.delete(z, j2)
                    sos[si] = _section([z1, z2], [p1, p2])
                else:
                    sos[si] = _section([z1], [p1, p2])
            else:
                sos[si] = _section([], [p1, p2])
    sos[0][:3] *= k
    return sos


def tf2sos(b: Any, a: Any, pairing: str | None = None, *, analog: bool = False
           ) -> numpy.ndarray:
    """``(b, a)`` to second-order sections (through its roots), as ``scipy.signal.tf2sos``.

    Example:
        >>> from funcgrad.scipy.signal import tf2sos
        >>> tf2sos([1.0, 2.0, 1.0], [1.0, -0.75, 0.125])
        array([[ 1.   ,  2.   ,  1.   ,  1.   , -0.75 ,  0.125]])
    """
    b = numpy.trim_zeros(numpy.atleast_1d(numpy.asarray(device_get(b), dtype=float)), "f")
    a = numpy.atleast_1d(numpy.asarray(device_get(a), dtype=float))
    k = b[0] / a[0]
    return zpk2sos(numpy.roots(b), numpy.roots(a), k, pairing=pairing, analog=analog)


_PROTOTYPES = {"butter": "butter", "butterworth": "butter", "cheby1": "cheby1",
               "chebyshev1": "cheby1", "chebyi": "cheby1", "cheby2": "cheby2",
               "chebyshev2": "cheby2", "chebyii": "cheby2"}


def iirfilter(N: int, Wn: Any, rp: float | None = None, rs: float | None = None,  # noqa: N803
              btype: str = "band", analog: bool = False, ftype: str = "butter",
              output: str = "ba", fs: float | None = None, *, name: str = "iirfilter") -> Any:
    """IIR digital or analog filter design from an analog prototype (``ftype``:
    ``"butter"``, ``"cheby1"`` with passband ripple ``rp`` dB, ``"cheby2"`` with stopband
    attenuation ``rs`` dB), as ``scipy.signal.iirfilter``: the prototype moved to the band,
    then (digital) the bilinear map with prewarped frequencies. ``output`` ``"ba"``,
    ``"zpk"`` or ``"sos"``; NumPy arrays (host arithmetic on concrete numbers).

    Example:
        >>> from funcgrad.scipy.signal import iirfilter
        >>> b, a = iirfilter(2, 0.5, btype="low", ftype="butter")
        >>> b.round(6)
        array([0.292893, 0.585786, 0.292893])
    """
    if any(isinstance(v, Tracer) for v in (N, Wn, rp, rs, fs)):
        raise TypeError(f"{name}: N, Wn, rp, rs and fs must be concrete (the design is host "
                        "arithmetic)")
    if output not in ("ba", "zpk", "sos"):
        raise ValueError(f"{name}: output must be 'ba', 'zpk' or 'sos', got {output!r}")
    kind = _BTYPES.get(str(btype).lower())
    if kind is None:
        raise ValueError(f"{name}: {btype!r} is an invalid bandtype for filter")
    proto = _PROTOTYPES.get(str(ftype).lower())
    if proto is None:
        raise ValueError(f"{name}: ftype must be 'butter', 'cheby1' or 'cheby2' (the "
                         f"prototypes funcgrad designs), got {ftype!r}")
    order = int(N)
    if order != N or order < 1:
        raise ValueError(f"{name}: N must be a positive integer, got {N!r}")
    wn = numpy.atleast_1d(numpy.asarray(Wn, dtype=float))
    if wn.size != (2 if kind in ("bandpass", "bandstop") else 1):
        raise ValueError(f"{name}: {kind} needs {'two frequencies' if wn.size == 1 else 'one'}"
                         f" in Wn, got {Wn!r}")
    if fs is not None:
        if analog:
            raise ValueError(f"{name}: fs cannot be specified for an analog filter")
        wn = 2.0 * wn / float(fs)
    if not analog:
        if numpy.any(wn <= 0) or numpy.any(wn >= 1):
            raise ValueError("Digital filter critical frequencies must be 0 < Wn < 1"
                             if fs is None else
                             f"Digital filter critical frequencies must be 0 < Wn < fs/2 "
                             f"(fs={fs} -> fs/2={float(fs) / 2})")
        wn = 4.0 * numpy.tan(numpy.pi * wn / 2.0)  # prewarped for the bilinear map, fs = 2
    elif numpy.any(wn <= 0):
        raise ValueError(f"{name}: analog critical frequencies must be positive")
    if proto == "butter":
        z, p, k = _buttap(order)
    elif proto == "cheby1":
        if rp is None:
            raise ValueError(f"{name}: passband ripple (rp) must be provided to design a "
                             "Chebyshev I filter.")
        z, p, k = _cheb1ap(order, float(rp))
    else:
        if rs is None:
            raise ValueError(f"{name}: stopband attenuation (rs) must be provided to design "
                             "a Chebyshev II filter.")
        z, p, k = _cheb2ap(order, float(rs))
    z, p, k = _transform(z, p, k, kind, wn)
    if not analog:
        # The bilinear map s -> 2 fs (z - 1) / (z + 1) with fs = 2; the zeros at infinity
        # land on z = -1.
        fs2 = 4.0
        deg = p.size - z.size
        k = k * float(numpy.real(numpy.prod(fs2 - z) / numpy.prod(fs2 - p)))
        z = numpy.concatenate([(fs2 + z) / (fs2 - z), -numpy.ones(deg)])
        p = (fs2 + p) / (fs2 - p)
    if output == "zpk":
        return _real_if_close(z), p, float(k)
    if output == "sos":
        return zpk2sos(z, p, k, analog=analog)
    return zpk2tf(z, p, k)


def butter(N: int, Wn: Any, btype: str = "low", analog: bool = False,  # noqa: N803
           output: str = "ba", fs: float | None = None) -> Any:
    """Butterworth filter design, as ``scipy.signal.butter``: order ``N``, critical
    frequency ``Wn`` (a pair for band filters; digital: a fraction of Nyquist, or in the
    units of ``fs``; analog: rad/s), ``btype`` low/high/band(pass)/bandstop. Returns
    ``(b, a)`` (``output="ba"``), ``(z, p, k)`` (``"zpk"``) or second-order sections
    (``"sos"``, SciPy's pairing) as NumPy arrays: the design is host arithmetic on concrete
    numbers, the filtering (:func:`lfilter`, :func:`filtfilt`, ``sosfilt``) is what
    differentiates.

    Example:
        >>> from funcgrad.scipy.signal import butter
        >>> b, a = butter(2, 0.5)
        >>> b.round(6), a.round(6) + 0.0
        (array([0.292893, 0.585786, 0.292893]), array([1.      , 0.      , 0.171573]))
    """
    return iirfilter(N, Wn, btype=btype, analog=analog, output=output, ftype="butter", fs=fs,
                     name="butter")


def cheby1(N: int, rp: float, Wn: Any, btype: str = "low", analog: bool = False,  # noqa: N803
           output: str = "ba", fs: float | None = None) -> Any:
    """Chebyshev type I design (equiripple passband, ``rp`` dB), as
    ``scipy.signal.cheby1`` (see :func:`iirfilter`).

    Example:
        >>> from funcgrad.scipy.signal import cheby1
        >>> b, a = cheby1(2, 1.0, 0.4)
        >>> b.round(6), a.round(6)
        (array([0.217979, 0.435958, 0.217979]), array([ 1.      , -0.351351,  0.329656]))
    """
    return iirfilter(N, Wn, rp=rp, btype=btype, analog=analog, output=output,
                     ftype="cheby1", fs=fs, name="cheby1")


def cheby2(N: int, rs: float, Wn: Any, btype: str = "low", analog: bool = False,  # noqa: N803
           output: str = "ba", fs: float | None = None) -> Any:
    """Chebyshev type II design (equiripple stopband, ``rs`` dB down), as
    ``scipy.signal.cheby2`` (see :func:`iirfilter`).

    Example:
        >>> from funcgrad.scipy.signal import cheby2
        >>> b, a = cheby2(2, 40.0, 0.4)
        >>> b.round(6)
        array([0.017796, 0.000965, 0.017796])
    """
    return iirfilter(N, Wn, rs=rs, btype=btype, analog=analog, output=output,
                     ftype="cheby2", fs=fs, name="cheby2")


def _sos(name: str, sos: Any) -> Any:
    sos = fnp.asarray(sos)
    if sos.ndim != 2 or sos.shape[1] != 6 or sos.shape[0] == 0:
        raise ValueError(f"{name}: sos array must be shape (n_sections, 6), got {sos.shape}")
    # checked on the host copy: under jit even a constant's comparison would be staged
    if not isinstance(sos, Tracer) and not numpy.all(device_get(sos)[:, 3] == 1):
        raise ValueError(f"{name}: sos[:, 3] should be all ones")
    return sos if fnp.issubdtype(sos.dtype, fnp.inexact) else sos.astype(fnp.float64)


def sosfilt(sos: Any, x: Any, axis: int = -1, zi: Any = None) -> Any:
    """Filter ``x`` along ``axis`` with cascaded second-order sections ``sos``
    (``(n_sections, 6)``: ``b0 b1 b2 1 a1 a2`` each), as ``scipy.signal.sosfilt``. With ``zi``
    (shape ``(n_sections, ..., 2, ...)``, the 2 at ``axis``) returns ``(y, zf)``.
    Differentiable in ``sos``, ``x`` and ``zi``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import sosfilt
        >>> sosfilt(np.array([[1.0, 0.0, 0.0, 1.0, -0.5, 0.0]]), np.array([1.0, 0.0, 0.0]))
        array([1.  , 0.5 , 0.25])
    """
    sos = _sos("sosfilt", sos)
    x = fnp.asarray(x)
    if x.ndim == 0:
        raise ValueError("sosfilt: x must be at least 1-D")
    ax = axis % x.ndim if -x.ndim <= axis < x.ndim else None
    if ax is None:
        raise ValueError(f"sosfilt: axis {axis} is out of bounds for x of dimension {x.ndim}")
    n = sos.shape[0]
    if zi is not None:
        zi = fnp.asarray(zi)
        want = (n,) + x.shape[:ax] + (2,) + x.shape[ax + 1:]
        if zi.shape != want:
            raise ValueError(f"sosfilt: invalid zi shape. With axis={axis}, an input with "
                             f"shape {x.shape}, and an sos array with {n} sections, zi must "
                             f"have shape {want}, got {zi.shape}.")
    y = x
    finals = []
    for i in range(n):
        if zi is None:
            y = lfilter(sos[i, :3], sos[i, 3:], y, axis=ax)
        else:
            y, zf = lfilter(sos[i, :3], sos[i, 3:], y, axis=ax, zi=zi[i])
            finals.append(zf)
    return y if zi is None else (y, fnp.stack(finals))


def sosfilt_zi(sos: Any) -> Any:
    """The initial states of :func:`sosfilt` for a step response's steady state
    (``(n_sections, 2)``), as ``scipy.signal.sosfilt_zi``.

    Example:
        >>> from funcgrad.scipy.signal import sosfilt_zi
        >>> sosfilt_zi([[1.0, 0.0, 0.0, 1.0, -0.5, 0.0]])
        array([[1., 0.]])
    """
    sos = _sos("sosfilt_zi", sos)
    out = []
    scale = 1.0
    for i in range(sos.shape[0]):
        b, a = sos[i, :3], sos[i, 3:]
        out.append(scale * lfilter_zi(b, a))
        scale = scale * fnp.sum(b) / fnp.sum(a)
    return fnp.stack(out)


def sosfiltfilt(sos: Any, x: Any, axis: int = -1, padtype: str | None = "odd",
                padlen: int | None = None) -> Any:
    """Zero-phase filtering with second-order sections (forward, then backward, each from
    the steady state of the end; the signal first extended by ``padlen`` samples, SciPy's
    default from the number of sections), as ``scipy.signal.sosfiltfilt``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import butter, sosfiltfilt
        >>> sosfiltfilt(butter(2, 0.5, output="sos"), np.ones(10)).round(12)
        array([1., 1., 1., 1., 1., 1., 1., 1., 1., 1.])
    """
    if padtype not in ("odd", "even", "constant", None):
        raise ValueError(f"sosfiltfilt: unknown value '{padtype}' given to padtype; padtype "
                         "must be 'even', 'odd', 'constant', or None")
    sos = _sos("sosfiltfilt", sos)
    x = fnp.asarray(x)
    if not fnp.issubdtype(x.dtype, fnp.inexact):
        x = x.astype(fnp.float64)
    ax = axis % x.ndim if x.ndim and -x.ndim <= axis < x.ndim else None
    if ax is None:
        raise ValueError(f"sosfiltfilt: axis {axis} is out of bounds for x of dimension "
                         f"{x.ndim}")
    n = sos.shape[0]
    ntaps = 2 * n + 1
    if not isinstance(sos, Tracer):
        host = device_get(sos)
        ntaps -= min(int(numpy.sum(host[:, 2] == 0)), int(numpy.sum(host[:, 5] == 0)))
    edge = 0 if padtype is None else (3 * ntaps if padlen is None else int(padlen))
    if x.shape[ax] <= edge:
        raise ValueError(f"The length of the input vector x must be greater than padlen, "
                         f"which is {edge}.")
    ext = _extend(x, edge, ax, padtype) if edge > 0 else x
    zi = sosfilt_zi(sos)
    shape = [1] * x.ndim
    shape[ax] = 2
    zi = fnp.reshape(zi, (n, *shape))
    # (funcgrad's multiply: zi's constants are on the default device, NumPy input on the host)
    y, _ = sosfilt(sos, ext, axis=ax, zi=fnp.multiply(zi, _slice(ext, 0, 1, ax)))
    y, _ = sosfilt(sos, fnp.flip(y, axis=ax), axis=ax,
                   zi=fnp.multiply(zi, _slice(y, -1, None, ax)))
    y = fnp.flip(y, axis=ax)
    return _slice(y, edge, -edge, ax) if edge > 0 else y


def _frequencies(name: str, worN: Any, whole: bool, fs: float,  # noqa: N803
                 include_nyquist: bool, like: Any) -> tuple[Any, Any]:
    """(the frequencies in ``fs`` units, the same in rad/sample), on ``like``'s device."""
    if worN is None:
        worN = 512  # noqa: N806
    if isinstance(worN, int | numpy.integer):
        n = int(worN)
        if n < 0:
            raise ValueError(f"{name}: worN must be nonnegative, got {n}")
        last = 2.0 * math.pi if whole else math.pi
        w = numpy.linspace(0.0, last, n, endpoint=include_nyquist and not whole)
        return _on(like, w * fs / (2.0 * math.pi)), _on(like, w)
    w_fs = _on(like, fnp.asarray(worN))
    return w_fs, w_fs * (2.0 * math.pi / fs)


def _on(like: Any, v: Any) -> Any:
    """``v`` on the device of ``like`` (host constants must not meet device arrays)."""
    if isinstance(v, Tracer):
        return v
    return device_put(v, getattr(get_aval(like), "device", None) or get_default_device())


def _poly_at(c: Any, zm1: Any) -> Any:
    """``c[0] + c[1] zm1 + c[2] zm1**2 + ...`` (Horner)."""
    out = fnp.zeros_like(zm1) + c[-1]
    for i in range(c.shape[0] - 2, -1, -1):
        out = out * zm1 + c[i]
    return out


def freqz(b: Any, a: Any = 1, worN: Any = 512, whole: bool = False,  # noqa: N803
          plot: Any = None, fs: float = 2 * math.pi, include_nyquist: bool = False
          ) -> tuple[Any, Any]:
    """The frequency response ``H(e^{jw}) = B(e^{-jw}) / A(e^{-jw})`` of a digital filter at
    ``worN`` frequencies (a count, spread over ``[0, pi)`` or the whole circle, or the
    frequencies themselves in ``fs`` units), as ``scipy.signal.freqz``: returns ``(w, h)``,
    ``w`` in the units of ``fs`` (rad/sample by default). Differentiable in ``b`` and ``a``.

    Example:
        >>> from funcgrad.scipy.signal import freqz
        >>> w, h = freqz([0.5, 0.5], worN=3)
        >>> w.round(6), abs(h).round(6)
        (array([0.      , 1.047198, 2.094395]), array([1.      , 0.866025, 0.5     ]))
    """
    if plot is not None:
        raise TypeError("freqz: plot= is not supported (plot (w, h) yourself)")
    b = fnp.atleast_1d(fnp.asarray(b))
    a = _on(b, fnp.atleast_1d(fnp.asarray(a)))
    w_out, w = _frequencies("freqz", worN, whole, float(fs), include_nyquist, b)
    zm1 = fnp.exp(-1j * w)
    h = _poly_at(b, zm1) / _poly_at(a, zm1)
    return w_out, h


def sosfreqz(sos: Any, worN: Any = 512, whole: bool = False,  # noqa: N803
             fs: float = 2 * math.pi) -> tuple[Any, Any]:
    """The frequency response of cascaded second-order sections (the product of the
    sections'), as ``scipy.signal.sosfreqz`` / ``freqz_sos``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import sosfreqz
        >>> w, h = sosfreqz(np.array([[0.5, 0.5, 0.0, 1.0, 0.0, 0.0]]), worN=3)
        >>> abs(h).round(6)
        array([1.      , 0.866025, 0.5     ])
    """
    sos = _sos("sosfreqz", sos)
    w_out, w = _frequencies("sosfreqz", worN, whole, float(fs), False, sos)
    zm1 = fnp.exp(-1j * w)
    h = 1.0
    for i in range(sos.shape[0]):
        h = h * _poly_at(sos[i, :3], zm1) / _poly_at(sos[i, 3:], zm1)
    return w_out, h


freqz_sos = sosfreqz
