"""``lax.fft``: JAX's Fourier-transform operation over the trailing axes, on the ``fft``
primitive of :mod:`funcgrad.ops.fft` (the one ``funcgrad.numpy.fft`` uses too)."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
from funcgrad.lax._common import aval_of
from funcgrad.ops import fft as _fft

Array = Any

__all__ = ["FftType", "fft"]


class FftType(enum.IntEnum):
    """The kind of transform ``lax.fft`` computes (JAX's enum, same values)."""

    FFT = 0    #: forward complex-to-complex
    IFFT = 1   #: inverse complex-to-complex
    RFFT = 2   #: forward real-to-complex (the half spectrum)
    IRFFT = 3  #: inverse complex (half spectrum)-to-real


_BY_NAME = {t.name.lower(): t for t in FftType}


def _fft_type(fft_type: Any) -> FftType:
    if isinstance(fft_type, FftType):
        return fft_type
    if isinstance(fft_type, str):
        t = _BY_NAME.get(fft_type.lower()) if fft_type in (fft_type.lower(), fft_type.upper()) else None
        if t is None:
            raise ValueError(f"lax.fft: unknown FFT type {fft_type!r}")
        return t
    raise TypeError(f"lax.fft: unknown FFT type value {fft_type!r}")


def fft(x: Array, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Array:
    """The ``fft_type`` transform of ``x`` over its last ``len(fft_lengths)`` axes, as
    ``jax.lax.fft``: unnormalised forward transforms, ``1/n``-normalised inverses.

    ``fft_type`` is a :class:`FftType` or its name (``"fft"``/``"FFT"``...). The transformed
    axes must have exactly ``fft_lengths`` (no padding or cropping), except for ``IRFFT``,
    whose last axis holds the half spectrum (``fft_lengths[-1] // 2 + 1`` terms) and whose
    result has ``fft_lengths[-1]``. ``RFFT`` takes a real operand (integers become float64);
    the others a complex one (real operands are converted: float32 to complex64, others to
    complex128). Linear, so differentiable to any order, batchable and jittable.

    Example:
        >>> import numpy as np
        >>> from funcgrad import lax
        >>> lax.fft(np.array([1.0, 2.0, 3.0, 4.0]), "rfft", (4,)).tolist()
        [(10+0j), (-2+2j), (-2+0j)]
        >>> lax.fft(lax.fft(np.array([1.0, 2.0]), lax.FftType.FFT, (2,)), "ifft", (2,)).real.tolist()
        [1.0, 2.0]
    """
    typ = _fft_type(fft_type)
    a = aval_of("fft", x, "x")
    lengths = tuple(int(n) for n in fft_lengths)
    if typ is FftType.RFFT:
        if a.dtype.kind == "c":
            raise ValueError("lax.fft: only real valued inputs supported for rfft")
        if a.dtype.kind != "f":
            x = _ew.convert_element_type(x, numpy.float64)
    elif a.dtype.kind != "c":
        want = numpy.complex64 if a.dtype == numpy.float32 else numpy.complex128
        x = _ew.convert_element_type(x, want)
    if not lengths:
        return x
    k = len(lengths)
    if k > a.ndim:
        raise ValueError(f"lax.fft: FFT input shape {a.shape} must have at least as many input "
                         f"dimensions as fft_lengths {lengths}")
    if any(n < 1 for n in lengths):
        raise ValueError(f"lax.fft: fft_lengths must be positive, got {lengths}")
    minor = tuple(a.shape[-k:])
    want = lengths[:-1] + (lengths[-1] // 2 + 1,) if typ is FftType.IRFFT else lengths
    if minor != want:
        raise ValueError(f"lax.fft: {typ.name} input shape {a.shape} minor dimensions must be "
                         f"{want} for fft_lengths {lengths}")
    axes = tuple(range(a.ndim - k, a.ndim))
    return _fft.fft(x, typ.name.lower(), axes, lengths, "backward")
