"""funcgrad.numpy.fft: NumPy's ``numpy.fft``, differentiable.

``fft, ifft, rfft, irfft, hfft, ihfft, fft2, ifft2, rfft2, irfft2, fftn, ifftn, rfftn,
irfftn`` with NumPy's ``n``/``s``, ``axis``/``axes`` and ``norm`` ("backward", "ortho",
"forward"), plus ``fftfreq, rfftfreq, fftshift, ifftshift``. All transforms are one linear
primitive (:mod:`funcgrad.ops.fft`), so ``grad``, ``jvp``, ``vmap`` and ``jit`` go through to
any order; ``numpy.fft.fft(tracer)`` inside a transformation lands here.

Dtypes are NumPy 2's: float32/complex64 stay single precision, everything else is double.
(float16 input computes in single precision; as in NumPy, the real output of a one-axis
``irfft``/``hfft``/``irfftn`` is cast back to float16.)

Example:
    >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
    >>> fnp.fft.rfft(np.array([1.0, 2.0, 3.0, 4.0]))
    array([10.+0.j, -2.+2.j, -2.+0.j])
    >>> funcgrad.grad(lambda x: fnp.sum(fnp.abs(fnp.fft.fft(x)) ** 2))(np.ones(2))
    array([4., 4.])
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
from funcgrad.avals import get_aval
from funcgrad.backend import get_default_device, operator_index, xp_for_device
from funcgrad.core import Tracer
from funcgrad.errors import AxisError, ShapeError
from funcgrad.numpy import _creation as _fc
from funcgrad.numpy import _shape as _fs
from funcgrad.ops import fft as _fft

__all__ = [
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
    "fftn", "ifftn", "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]

_C64, _C128 = numpy.dtype(numpy.complex64), numpy.dtype(numpy.complex128)
_F32, _F64 = numpy.dtype(numpy.float32), numpy.dtype(numpy.float64)
_F16 = numpy.dtype(numpy.float16)
_SWAP = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _norm(name: str, norm: Any) -> str:
    if norm is None:
        return "backward"
    if norm not in _fft.FFT_NORMS:
        raise ValueError(
            f'{name}: invalid norm value {norm!r}; should be "backward", "ortho" or "forward".'
        )
    return norm


def _no_out(name: str, out: Any) -> None:
    if out is not None:
        raise TypeError(f"{name}: out= is not supported (funcgrad arrays are immutable)")


def _as_complex(x: Any) -> Any:
    dt = get_aval(x).dtype
    if dt in (_C64, _C128):
        return x
    want = _C64 if dt in (_F32, numpy.dtype(numpy.float16)) else _C128
    return _ew.convert_element_type(x, want)


def _as_real(name: str, x: Any) -> Any:
    dt = get_aval(x).dtype
    if dt.kind == "c":
        raise TypeError(f"{name}: the input must be real, got {get_aval(x).str_short()}")
    if dt in (_F32, _F64):
        return x
    return _ew.convert_element_type(x, _F32 if dt == numpy.dtype(numpy.float16) else _F64)


def _axis(name: str, axis: Any, ndim: int) -> int:
    try:
        axis = operator_index(axis)
    except TypeError:
        raise TypeError(f"{name}: axis must be an integer, got {axis!r}") from None
    if not -ndim <= axis < ndim:
        raise AxisError(f"{name}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _points(name: str, n: Any) -> int:
    n = operator_index(n)
    if n < 1:
        raise ValueError(f"{name}: invalid number of FFT data points ({n}) specified.")
    return n


def _one_dim(name: str, a: Any, n: Any, axis: Any, norm: Any, fft_type: str) -> Any:
    x = _fc.asarray(a)
    nd = get_aval(x).ndim
    if nd == 0:
        raise ShapeError(f"{name}: the input must be at least 1-dimensional, got a scalar")
    ax = _axis(name, axis, nd)
    norm = _norm(name, norm)
    size = get_aval(x).shape[ax]
    in_dtype = get_aval(x).dtype
    if fft_type == "rfft":
        x = _as_real(name, x)
    else:
        x = _as_complex(x)
    if fft_type == "irfft":
        n = _points(name, 2 * (size - 1) if n is None else n)
        x = _fft.resize_axis(x, ax, n // 2 + 1)
        return _real_like(_fft.fft(x, fft_type, (ax,), (n,), norm), in_dtype)
    n = _points(name, size if n is None else n)
    x = _fft.resize_axis(x, ax, n)
    return _fft.fft(x, fft_type, (ax,), (n,), norm)


def _real_like(y: Any, in_dtype: numpy.dtype) -> Any:
    """The real output of a one-axis inverse real transform: NumPy casts it back to float16
    when the input was float16 (it computes in single precision, as funcgrad does)."""
    return _ew.convert_element_type(y, _F16) if in_dtype == _F16 else y


def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None,
        out: Any = None) -> Any:
    """One-dimensional discrete Fourier transform along ``axis`` (cropped/zero-padded to ``n``).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.fft.fft(np.array([1.0, 0.0, -1.0, 0.0]))
        array([0.+0.j, 2.+0.j, 0.+0.j, 2.+0.j])
    """
    _no_out("fft", out)
    return _one_dim("fft", a, n, axis, norm, "fft")


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None,
         out: Any = None) -> Any:
    """Inverse of :func:`fft` along ``axis``.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.fft.ifft(np.array([4.0, 0.0, 0.0, 0.0]))
        array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    _no_out("ifft", out)
    return _one_dim("ifft", a, n, axis, norm, "ifft")


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None,
         out: Any = None) -> Any:
    """FFT of real input: the ``n // 2 + 1`` non-negative frequency terms.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.fft.rfft(np.array([1.0, 1.0, 1.0]))
        array([3.+0.j, 0.+0.j])
    """
    _no_out("rfft", out)
    return _one_dim("rfft", a, n, axis, norm, "rfft")


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None,
          out: Any = None) -> Any:
    """Inverse of :func:`rfft`: ``n`` real samples (default ``2 * (m - 1)``) from the half
    spectrum (the imaginary parts of the zero and Nyquist terms are ignored).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.fft.irfft(np.array([4.0, 0.0, 0.0]))
        array([1., 1., 1., 1.])
    """
    _no_out("irfft", out)
    return _one_dim("irfft", a, n, axis, norm, "irfft")


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None,
         out: Any = None) -> Any:
    """FFT of a signal with Hermitian symmetry given by its first half (a real spectrum).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.fft.hfft(np.array([1.0, 0.0, 0.0]))
        array([1., 1., 1., 1.])
    """
    _no_out("hfft", out)
    x = _fc.asarray(a)
    if get_aval(x).ndim == 0:
        raise ShapeError("hfft: the input must be at least 1-dimensional, got a scalar")
    ax = _axis("hfft", axis, get_aval(x).ndim)
    if n is None:
        n = 2 * (get_aval(x).shape[ax] - 1)
    in_dtype = get_aval(x).dtype
    x = _as_complex(x)
    return _real_like(irfft(_ew.conj(x), n, ax, _SWAP[_norm("hfft", norm)]), in_dtype)


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None,
          out: Any = None) -> Any:
    """Inverse of :func:`hfft`: the half spectrum of real input, conjugated.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.fft.ihfft(np.array([1.0, 1.0, 1.0, 1.0]))
        array([1.-0.j, 0.-0.j, 0.-0.j])
    """
    _no_out("ihfft", out)
    return _ew.conj(rfft(a, n, axis, _SWAP[_norm("ihfft", norm)]))


def _cook_nd_args(name: str, x: Any, s: Any, axes: Any, invreal: bool = False,
                  real: bool = False) -> tuple[list[int], list[int]]:
    shape = get_aval(x).shape
    nd = len(shape)
    shapeless = s is None
    if axes is not None:
        axes = [_axis(name, a, nd) for a in (axes if isinstance(axes, Sequence) else [axes])]
    if s is None:
        s = list(shape) if axes is None else [shape[a] for a in axes]
    else:
        s = [operator_index(v) for v in (s if isinstance(s, Sequence) else [s])]
    if axes is None:
        if not shapeless:
            warnings.warn(
                f"{name}: `axes` should not be `None` if `s` is not `None` (deprecated in "
                "NumPy 2.0); the last len(s) axes are transformed",
                DeprecationWarning, stacklevel=3,
            )
        axes = [_axis(name, a, nd) for a in range(-len(s), 0)]
    if len(s) != len(axes):
        raise ValueError(f"{name}: shape and axes have different lengths.")
    if real and not axes:
        # The last axis is the halved one; NumPy fails with a bare IndexError here.
        raise AxisError(f"{name}: needs at least one axis to transform, got axes=() (or s=())")
    if invreal and shapeless:
        s[-1] = (shape[axes[-1]] - 1) * 2
    s = [shape[a] if v == -1 else v for v, a in zip(s, axes)]
    return [_points(name, v) for v in s], axes


def _c2c_nd(name: str, a: Any, s: Any, axes: Any, norm: Any, fft_type: str) -> Any:
    x = _as_complex(_fc.asarray(a))
    s, axes = _cook_nd_args(name, x, s, axes)
    norm = _norm(name, norm)
    if not axes:
        return x
    if len(set(axes)) != len(axes):
        # NumPy transforms a repeated axis repeatedly, last axis first.
        for n, ax in reversed(list(zip(s, axes))):
            x = _fft.fft(_fft.resize_axis(x, ax, n), fft_type, (ax,), (n,), norm)
        return x
    for n, ax in zip(s, axes):
        x = _fft.resize_axis(x, ax, n)
    return _fft.fft(x, fft_type, tuple(axes), tuple(s), norm)


def fftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None, out: Any = None) -> Any:
    """N-dimensional FFT over ``axes`` (default: all), each cropped/padded to ``s``.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.fft.fftn(np.ones((2, 2)))
        array([[4.+0.j, 0.+0.j],
               [0.+0.j, 0.+0.j]])
    """
    _no_out("fftn", out)
    return _c2c_nd("fftn", a, s, axes, norm, "fft")


def ifftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None, out: Any = None) -> Any:
    """Inverse of :func:`fftn`.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.fft.ifftn(np.array([[4.0, 0.0], [0.0, 0.0]])).real
        array([[1., 1.],
               [1., 1.]])
    """
    _no_out("ifftn", out)
    return _c2c_nd("ifftn", a, s, axes, norm, "ifft")


def fft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None, out: Any = None) -> Any:
    """Two-dimensional FFT (over the last two axes by default).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.fft.fft2(np.ones((3, 2, 2)))[:, 0, 0]
        array([4.+0.j, 4.+0.j, 4.+0.j])
    """
    _no_out("fft2", out)
    return _c2c_nd("fft2", a, s, axes, norm, "fft")


def ifft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None, out: Any = None) -> Any:
    """Inverse of :func:`fft2`.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.fft.ifft2(np.array([[4.0, 0.0], [0.0, 0.0]])).real
        array([[1., 1.],
               [1., 1.]])
    """
    _no_out("ifft2", out)
    return _c2c_nd("ifft2", a, s, axes, norm, "ifft")


def rfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None, out: Any = None) -> Any:
    """N-dimensional FFT of real input; the last of ``axes`` is halved.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.fft.rfftn(np.ones((2, 4))).shape
        (2, 3)
    """
    _no_out("rfftn", out)
    x = _as_real("rfftn", _fc.asarray(a))
    s, axes = _cook_nd_args("rfftn", x, s, axes, real=True)
    norm = _norm("rfftn", norm)
    if len(set(axes)) != len(axes):
        x = rfft(x, s[-1], axes[-1], norm)
        for n, ax in zip(s[:-1], axes[:-1]):
            x = fft(x, n, ax, norm)
        return x
    for n, ax in zip(s, axes):
        x = _fft.resize_axis(x, ax, n)
    return _fft.fft(x, "rfft", tuple(axes), tuple(s), norm)


def irfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None, out: Any = None) -> Any:
    """Inverse of :func:`rfftn` (output sizes ``s``; the last defaults to ``2 * (m - 1)``).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.fft.irfftn(np.array([[8.0, 0.0, 0.0], [0.0, 0.0, 0.0]]))
        array([[1., 1., 1., 1.],
               [1., 1., 1., 1.]])
    """
    _no_out("irfftn", out)
    x = _fc.asarray(a)
    in_dtype = get_aval(x).dtype
    x = _as_complex(x)
    s, axes = _cook_nd_args("irfftn", x, s, axes, invreal=True, real=True)
    norm = _norm("irfftn", norm)
    if len(set(axes)) != len(axes):
        for n, ax in zip(s[:-1], axes[:-1]):
            x = ifft(x, n, ax, norm)
        return irfft(x, s[-1], axes[-1], norm)
    for n, ax in zip(s[:-1], axes[:-1]):
        x = _fft.resize_axis(x, ax, n)
    x = _fft.resize_axis(x, axes[-1], s[-1] // 2 + 1)
    y = _fft.fft(x, "irfft", tuple(axes), tuple(s), norm)
    # (NumPy's irfftn is ifft along the leading axes, then irfft: float16 survives only
    # when there is a single axis)
    return _real_like(y, in_dtype) if len(axes) == 1 else y


def rfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None, out: Any = None) -> Any:
    """Two-dimensional FFT of real input (the last axis halved).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.fft.rfft2(np.ones((2, 2)))
        array([[4.+0.j, 0.+0.j],
               [0.+0.j, 0.+0.j]])
    """
    return rfftn(a, s, axes, norm, out)


def irfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None, out: Any = None) -> Any:
    """Inverse of :func:`rfft2`.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.fft.irfft2(np.array([[4.0, 0.0], [0.0, 0.0]]))
        array([[1., 1.],
               [1., 1.]])
    """
    return irfftn(a, s, axes, norm, out)


def _freq_device(d: Any, device: Any) -> str:
    if device is not None:
        return str(device)
    if isinstance(d, Tracer):
        return d.aval.device or get_default_device()
    dev = get_aval(d).device if hasattr(d, "shape") else None
    return dev or get_default_device()


def _freq_dtype(name: str, f: Any, dtype: Any) -> Any:
    """The frequencies ``f`` in JAX's ``dtype=`` (a float dtype), computed in float64."""
    if dtype is None:
        return f
    dt = numpy.dtype(dtype)
    if dt.kind not in "fc":
        raise TypeError(f"fnp.fft.{name}: dtype must be a float dtype, got {dt}")
    return _ew.convert_element_type(f, dt)


def fftfreq(n: int, d: Any = 1.0, device: Any = None, *,
            dtype: Any = None) -> Any:
    """Sample frequencies of an ``n``-point FFT with sample spacing ``d`` (in ``dtype``, as
    ``jnp.fft.fftfreq``; default float64, as NumPy).

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.fft.fftfreq(4, d=0.5)
        array([ 0. ,  0.5, -1. , -0.5])
    """
    n = operator_index(n)
    xp = xp_for_device(_freq_device(d, device))
    if isinstance(d, Tracer):
        return _freq_dtype("fftfreq", _ew.div(xp.fft.fftfreq(n, 1.0), d), dtype)
    return _freq_dtype("fftfreq", xp.fft.fftfreq(n, d), dtype)


def rfftfreq(n: int, d: Any = 1.0, device: Any = None, *,
             dtype: Any = None) -> Any:
    """Sample frequencies of :func:`rfft` (the non-negative ones; ``dtype`` as
    :func:`fftfreq`).

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.fft.rfftfreq(4)
        array([0.  , 0.25, 0.5 ])
    """
    n = operator_index(n)
    xp = xp_for_device(_freq_device(d, device))
    if isinstance(d, Tracer):
        return _freq_dtype("rfftfreq", _ew.div(xp.fft.rfftfreq(n, 1.0), d), dtype)
    return _freq_dtype("rfftfreq", xp.fft.rfftfreq(n, d), dtype)


def _shifts(x: Any, axes: Any, sign: int) -> tuple[Any, Any]:
    shape = get_aval(x).shape
    if axes is None:
        axes = tuple(range(len(shape)))
        return axes, [sign * (dim // 2) for dim in shape]
    if isinstance(axes, int | numpy.integer):
        return axes, sign * (shape[axes] // 2)
    return axes, [sign * (shape[ax] // 2) for ax in axes]


def fftshift(x: Any, axes: Any = None) -> Any:
    """Move the zero-frequency term to the centre (a roll by half of each axis).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.fft.fftshift(np.array([0.0, 1.0, 2.0, -2.0, -1.0]))
        array([-2., -1.,  0.,  1.,  2.])
    """
    x = _fc.asarray(x)
    axes, shift = _shifts(x, axes, 1)
    return _fs.roll(x, shift, axes)


def ifftshift(x: Any, axes: Any = None) -> Any:
    """Inverse of :func:`fftshift`.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.fft.ifftshift(np.array([-2.0, -1.0, 0.0, 1.0, 2.0]))
        array([ 0.,  1.,  2., -2., -1.])
    """
    x = _fc.asarray(x)
    axes, shift = _shifts(x, axes, -1)
    return _fs.roll(x, shift, axes)
