"""The discrete Fourier transform primitive behind ``funcgrad.numpy.fft``.

One primitive, ``fft``, with static parameters:

* ``fft_type``: ``"fft"`` (complex to complex), ``"ifft"`` (its inverse), ``"rfft"`` (real
  to the half spectrum) or ``"irfft"`` (half spectrum to real);
* ``axes``: the transformed axes (non-negative, distinct; for the real transforms the last
  one is the halved axis);
* ``lengths``: the transform length along each axis. The operand already has exactly these
  lengths (for ``irfft`` the halved axis has ``lengths[-1] // 2 + 1``): padding and cropping
  are done by the wrappers with ``pad``, so the primitive stays simple and linear;
* ``norm``: ``"backward"``, ``"ortho"`` or ``"forward"``, as NumPy.

The transform is linear, so its JVP is itself; transposes use the real pairing
``<a, b> = Re(sum(a * b))`` of funcgrad's complex convention. The DFT matrix is symmetric, so
``fft`` and ``ifft`` are their own transposes; ``rfft`` transposes to the real part of a full
``fft`` of the zero-padded cotangent; ``irfft`` (which reads only the real part of its DC and
Nyquist terms) transposes to ``w * conj(rfft(ct))`` with the dual normalisation, where ``w``
is 1 at those terms and 2 elsewhere.

Example:
    >>> import numpy as np
    >>> fft(np.array([1.0, 0.0, 0.0, 0.0], dtype=complex), "fft", (0,), (4,), "backward")
    array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
import funcgrad.ops.shape as _shape
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import get_default_device, xp_for, xp_for_device
from funcgrad.core import bind1
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import Zero, deflinear
from funcgrad.interpreters.transpose import deftranspose
from funcgrad.ops._util import check_static, make_primitive

__all__ = ["fft", "fft_p", "FFT_TYPES", "FFT_NORMS", "resize_axis"]

FFT_TYPES = ("fft", "ifft", "rfft", "irfft")
FFT_NORMS = ("backward", "ortho", "forward")
_DUAL_NORM = {"backward": "forward", "ortho": "ortho", "forward": "backward"}

_COMPLEX_OF = {numpy.dtype(numpy.float32): numpy.dtype(numpy.complex64),
               numpy.dtype(numpy.float64): numpy.dtype(numpy.complex128)}
_REAL_OF = {v: k for k, v in _COMPLEX_OF.items()}


def _fft_abstract(x: ShapedArray, *, fft_type: str, axes: tuple[int, ...],
                  lengths: tuple[int, ...], norm: str) -> list[ShapedArray]:
    check_static("fft", fft_type=fft_type, axes=axes, lengths=lengths, norm=norm)
    if fft_type not in FFT_TYPES:
        raise ValueError(f"fft: fft_type must be one of {FFT_TYPES}, got {fft_type!r}")
    if norm not in FFT_NORMS:
        raise ValueError(f"fft: norm must be one of {FFT_NORMS}, got {norm!r}")
    if not axes or len(axes) != len(lengths):
        raise ShapeError(f"fft: axes {axes} and lengths {lengths} must be non-empty and match")
    if len(set(axes)) != len(axes) or any(not 0 <= a < x.ndim for a in axes):
        raise ShapeError(f"fft: axes {axes} must be distinct axes of {x.str_short()}")
    if any(n < 1 for n in lengths):
        raise ShapeError(f"fft: invalid number of data points {lengths}")
    real_in = fft_type == "rfft"
    table = _COMPLEX_OF if real_in else _REAL_OF  # keyed by the accepted input dtypes
    if x.dtype not in table:
        want = "float32 or float64" if real_in else "complex64 or complex128"
        raise DTypeError(f"fft: {fft_type} needs a {want} operand, got {x.str_short()}")
    want_in = list(lengths)
    if fft_type == "irfft":
        want_in[-1] = lengths[-1] // 2 + 1
    got = [x.shape[a] for a in axes]
    if got != want_in:
        raise ShapeError(
            f"fft: {fft_type} over axes {axes} with lengths {lengths} needs sizes "
            f"{tuple(want_in)} along those axes, got {x.str_short()}"
        )
    shape = list(x.shape)
    dtype = x.dtype
    if fft_type == "rfft":
        shape[axes[-1]] = lengths[-1] // 2 + 1
        dtype = _COMPLEX_OF[x.dtype]
    elif fft_type == "irfft":
        shape[axes[-1]] = lengths[-1]
        dtype = _REAL_OF[x.dtype]
    return [ShapedArray(tuple(shape), dtype, False, x.device)]


def _fft_impl(x: Any, *, fft_type: str, axes: tuple[int, ...], lengths: tuple[int, ...],
              norm: str) -> list[Any]:
    mod = xp_for(x).fft
    if len(axes) == 1:
        fn = getattr(mod, fft_type)
        return [fn(x, n=lengths[0], axis=axes[0], norm=norm)]
    fn = getattr(mod, fft_type + "n")
    return [fn(x, s=lengths, axes=axes, norm=norm)]


fft_p = make_primitive("fft", _fft_impl, _fft_abstract)


def fft(x: Any, fft_type: str, axes: tuple[int, ...], lengths: tuple[int, ...],
        norm: str = "backward") -> Any:
    """The ``fft_type`` transform of ``x`` over ``axes`` (sizes already ``lengths``).

    Example:
        >>> import numpy as np
        >>> fft(np.array([1.0, 1.0, 1.0, 1.0]), "rfft", (0,), (4,))
        array([4.+0.j, 0.+0.j, 0.+0.j])
    """
    return bind1(fft_p, x, fft_type=fft_type, axes=tuple(int(a) for a in axes),
                 lengths=tuple(int(n) for n in lengths), norm=norm)


def resize_axis(x: Any, axis: int, n: int) -> Any:
    """``x`` cropped or zero-padded at the end of ``axis`` to length ``n`` (NumPy's ``n=``).

    Example:
        >>> import numpy as np
        >>> resize_axis(np.array([1.0, 2.0, 3.0]), 0, 5)
        array([1., 2., 3., 0., 0.])
    """
    a = get_aval(x)
    cur = a.shape[axis]
    if cur == n:
        return x
    config = [(0, 0, 0)] * a.ndim
    config[axis] = (0, n - cur, 0)
    return _shape.pad(x, 0, config)


deflinear(fft_p)


def _fft_transpose(ct, x, *, fft_type, axes, lengths, norm):
    if type(ct) is Zero:
        return [Zero(x.aval)]
    if fft_type in ("fft", "ifft"):
        return [fft(ct, fft_type, axes, lengths, norm)]
    if fft_type == "rfft":
        padded = resize_axis(ct, axes[-1], lengths[-1])
        return [_ew.real(fft(padded, "fft", axes, lengths, norm))]
    # irfft: the adjoint of the half-spectrum synthesis.
    r = fft(ct, "rfft", axes, lengths, _DUAL_NORM[norm])
    n = lengths[-1]
    k = n // 2 + 1
    w = numpy.full(k, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    ra = get_aval(r)
    shape = [1] * ra.ndim
    shape[axes[-1]] = k
    xp = xp_for_device(ra.device or get_default_device())
    w_dev = xp.asarray(w.reshape(shape).astype(_REAL_OF[ra.dtype]))
    return [_ew.mul(_ew.conj(r), w_dev)]


deftranspose(fft_p, _fft_transpose)


def _fft_batch(axis_size, vals, dims, *, fft_type, axes, lengths, norm):
    (x,), (d,) = vals, dims
    new_axes = batching.shift_axes(axes, d)
    return [fft(x, fft_type, new_axes, lengths, norm)], [d]


batching.batch_rules[fft_p] = _fft_batch
