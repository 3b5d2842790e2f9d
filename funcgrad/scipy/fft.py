"""funcgrad.scipy.fft: SciPy's ``scipy.fft``, differentiable.

The discrete cosine and sine transforms ``dct``, ``idct``, ``dctn``, ``idctn``, ``dst``,
``idst``, ``dstn``, ``idstn`` (types 1-4, ``norm`` ``"backward"``/``"ortho"``/``"forward"``,
``orthogonalize``): up to 64 points each 1-D transform is a product with the transform's
real ``(n, n)`` matrix, beyond that one FFT of about ``2 n`` points (``O(n log n)``). Linear
either way: differentiable to any order, ``jit``/``vmap``-able, float32 stays float32,
complex inputs transform their real and imaginary parts.

The Fourier transforms (``fft`` ... ``irfftn``, and SciPy's ``hfft2``, ``hfftn``,
``ihfft2``, ``ihfftn``) are :mod:`funcgrad.numpy.fft`'s with SciPy's signatures
(``overwrite_x``, ``workers``, ``plan``) and dtypes; ``fftfreq``, ``rfftfreq``,
``fftshift``, ``ifftshift``, ``next_fast_len`` and ``prev_fast_len`` as SciPy's.

Example:
    >>> import numpy as np, funcgrad.scipy.fft as fsf
    >>> fsf.dct(np.array([1.0, 2.0, 3.0])).round(8)
    array([12.        , -3.46410162,  0.        ])
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad import config as _config
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device, operator_index
from funcgrad.errors import AxisError
from funcgrad.numpy import fft as _npfft
from funcgrad.scipy._device import keep_host_inputs_on_host as _keep_host_inputs_on_host
from funcgrad.scipy._fft_backend import BackendNotImplementedError
from funcgrad.scipy._fft_backend import check_backend as _check_backend
from funcgrad.scipy._fftlog import fht, fhtoffset, ifht

__all__ = [
    "dct", "idct", "dctn", "idctn", "dst", "idst", "dstn", "idstn",
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
    "hfft2", "ihfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn",
    "fftfreq", "rfftfreq", "fftshift", "ifftshift", "next_fast_len", "prev_fast_len",
    "set_workers", "get_workers", "fht", "ifht", "fhtoffset",
    "set_backend", "skip_backend", "set_global_backend", "register_backend",
    "BackendNotImplementedError",
]

_NORMS = (None, "backward", "ortho", "forward")


def _cospi(num: numpy.ndarray, den: int) -> numpy.ndarray:
    """cos(pi num / den) for integers, with exact zeros (cos(pi/2) is 6e-17 in floats)."""
    num = num % (2 * den)
    out = numpy.cos(numpy.pi * num / den)
    out[(2 * num) % (2 * den) == den] = 0.0
    return out


def _sinpi(num: numpy.ndarray, den: int) -> numpy.ndarray:
    """sin(pi num / den) = cos(pi (2 num - den) / (2 den)), exact zeros included."""
    return _cospi(2 * num - den, 2 * den)


def _dct_core(kind: int, n: int) -> numpy.ndarray:
    """SciPy's unnormalised DCT matrix of ``kind`` (its docstring's formulas)."""
    k = numpy.arange(n)[:, None]
    j = numpy.arange(n)[None, :]
    if kind == 1:
        c = numpy.full(n, 2.0)
        c[[0, -1]] = 1.0
        return c[None, :] * _cospi(k * j, n - 1)
    if kind == 2:
        return 2.0 * _cospi(k * (2 * j + 1), 2 * n)
    if kind == 3:
        c = numpy.full(n, 2.0)
        c[0] = 1.0
        return c[None, :] * _cospi((2 * k + 1) * j, 2 * n)
    return 2.0 * _cospi((2 * k + 1) * (2 * j + 1), 4 * n)


def _dst_core(kind: int, n: int) -> numpy.ndarray:
    """SciPy's unnormalised DST matrix of ``kind`` (its docstring's formulas)."""
    k = numpy.arange(n)[:, None]
    j = numpy.arange(n)[None, :]
    if kind == 1:
        return 2.0 * _sinpi((k + 1) * (j + 1), n + 1)
    if kind == 2:
        return 2.0 * _sinpi((k + 1) * (2 * j + 1), 2 * n)
    if kind == 3:
        c = numpy.full(n, 2.0)
        c[-1] = 1.0
        return c[None, :] * _sinpi((2 * k + 1) * (j + 1), 2 * n)
    return 2.0 * _sinpi((2 * k + 1) * (2 * j + 1), 4 * n)


_CORES = {"dct": _dct_core, "dst": _dst_core}

#: Up to this many points a transform is one product with its (cached) matrix, exact zeros
#: included; above it, one FFT of about twice the length (O(n log n) time, O(n) memory: a
#: matrix of 10^5 points would take 80 GB).
_MATRIX_MAX = 64


def _scale_n(family: str, kind: int, n: int) -> float:
    """SciPy's ``N`` of each transform (the ``"forward"`` divisor, squared ``"ortho"`` one)."""
    if kind == 1:
        return 2.0 * (n - 1) if family == "dct" else 2.0 * (n + 1)
    return 2.0 * n


@functools.lru_cache(maxsize=256)
def _trig_matrix(family: str, kind: int, n: int, norm: str, orthogonalize: bool,
                 inverse: bool) -> numpy.ndarray:
    """The float64 matrix ``M`` with ``dct(x) = M @ x`` (``family="dct"``) or ``dst(x) = M @ x``
    (``"dst"``); the inverse transform's is its inverse."""
    m = _CORES[family](kind, n)
    scale_n = _scale_n(family, kind, n)
    d_in, d_out = _weights(family, kind, n, orthogonalize)
    m = d_out[:, None] * m * d_in[None, :]
    if norm == "ortho":
        m = numpy.sqrt(1.0 / scale_n) * m
    elif norm == "forward":
        m = m / scale_n
    if not inverse:
        return m
    inv = numpy.linalg.inv(m)
    # Entries that are exactly zero come out of the inversion as rounding noise.
    inv[numpy.abs(inv) < 1e-14 * numpy.abs(inv).max()] = 0.0
    return inv


@functools.lru_cache(maxsize=64)
def _fft_plan(family: str, kind: int, n: int) -> tuple[int, int, numpy.ndarray, int,
                                                       numpy.ndarray, bool]:
    """SciPy's unnormalised transform of ``kind`` as ``part(post * FFT_L(pre * x)[o:o + n])``
    with ``x`` placed at offset ``i`` of the length-``L`` input: ``(L, i, pre, o, post,
    imag)``, ``part`` the real part, or minus the imaginary part when ``imag`` (the sines).
    Each follows from ``cos t = Re e^{-it}``, ``sin t = -Im e^{-it}`` and its definition."""
    j = numpy.arange(n)
    half = numpy.exp(-0.5j * numpy.pi * j / n)        # e^{-i pi j / (2n)}
    if family == "dct":
        if kind == 1:
            c = numpy.full(n, 2.0)
            c[[0, -1]] = 1.0
            return 2 * (n - 1), 0, c, 0, numpy.ones(n), False
        if kind == 2:
            return 2 * n, 0, numpy.full(n, 2.0), 0, half, False
        if kind == 3:
            c = numpy.full(n, 2.0)
            c[0] = 1.0
            return 2 * n, 0, c * half, 0, numpy.ones(n), False
        return 2 * n, 0, 2.0 * half, 0, numpy.exp(-0.25j * numpy.pi * (2 * j + 1) / n), False
    if kind == 1:
        return 2 * (n + 1), 1, numpy.full(n, 2.0), 1, numpy.ones(n), True
    if kind == 2:
        return 2 * n, 0, numpy.full(n, 2.0), 1, numpy.exp(-0.5j * numpy.pi * (j + 1) / n), True
    if kind == 3:
        c = numpy.full(n, 2.0)
        c[-1] = 1.0
        return 2 * n, 1, c * numpy.exp(-0.5j * numpy.pi * (j + 1) / n), 0, numpy.ones(n), True
    return 2 * n, 0, 2.0 * half, 0, numpy.exp(-0.25j * numpy.pi * (2 * j + 1) / n), True


#: the unnormalised transform whose multiple inverts each kind (DCT-II and -III are each
#: other's, types 1 and 4 their own): M_k^-1 = M_inverse[k] / N
_INVERSE_KIND = {1: 1, 2: 3, 3: 2, 4: 4}


def _trig_by_fft(family: str, kind: int, x: Any, norm: str, ortho: bool, inverse: bool) -> Any:
    """The transform along the last axis of real ``x`` through one FFT: SciPy's unnormalised
    transform between the orthogonalising weights and the ``norm`` scale (the inverse: the
    inverting kind between the reciprocal weights, over ``N``)."""
    n = get_aval(x).shape[-1]
    scale_n = _scale_n(family, kind, n)
    d_in, d_out = _weights(family, kind, n, ortho)
    scale = {"backward": 1.0, "ortho": numpy.sqrt(1.0 / scale_n), "forward": 1.0 / scale_n}[norm]
    if inverse:
        kind = _INVERSE_KIND[kind]
        w_in, w_out, scale = 1.0 / d_out, 1.0 / d_in, 1.0 / (scale * scale_n)
    else:
        w_in, w_out = d_in, d_out
    size, offset, pre, out_at, post, imag = _fft_plan(family, kind, n)
    real = numpy.dtype(get_aval(x).dtype)
    cplx = numpy.result_type(real, numpy.complex64)
    device = get_aval(x).device or get_default_device()

    def const(v: numpy.ndarray, dt: numpy.dtype) -> Any:
        return device_put(numpy.asarray(v).astype(dt), device)

    pre = pre * w_in
    u = x * const(pre, real) if not numpy.iscomplexobj(pre) else x * const(pre, cplx)
    nd = get_aval(x).ndim
    u = fnp.pad(u, [(0, 0)] * (nd - 1) + [(offset, size - n - offset)])
    spec = _npfft.rfft(u, axis=-1) if get_aval(u).dtype.kind == "f" else \
        _npfft.fft(u, axis=-1)
    spec = spec[..., out_at:out_at + n] * const(post, cplx)
    y = fnp.negative(fnp.imag(spec)) if imag else fnp.real(spec)
    return y * const(w_out * scale, real)


def _weights(family: str, kind: int, n: int, ortho: bool) -> tuple[numpy.ndarray, numpy.ndarray]:
    """The input and output weights that make the ``"ortho"`` transform orthogonal with
    ``orthogonalize`` (DCT-I: the end points; DCT-II/-III: the first output/input; DST-II/-III:
    the last; types 4 and DST-I are orthogonal as they are), ones otherwise."""
    d_in, d_out = numpy.ones(n), numpy.ones(n)
    if not ortho:
        return d_in, d_out
    r = numpy.sqrt(2.0)
    if family == "dct":
        if kind == 1:
            d_in[[0, -1]], d_out[[0, -1]] = r, 1.0 / r
        elif kind == 2:
            d_out[0] = 1.0 / r
        elif kind == 3:
            d_in[0] = r
    elif kind == 2:
        d_out[-1] = 1.0 / r
    elif kind == 3:
        d_in[-1] = r
    return d_in, d_out


def _trig_along(family: str, name: str, x: Any, kind: int, n: Any, axis: int, norm: Any,
                orthogonalize: Any, inverse: bool) -> Any:
    if kind not in (1, 2, 3, 4):
        raise ValueError(f"{name}: type must be 1, 2, 3 or 4, got {kind!r}")
    if norm not in _NORMS:
        raise ValueError(f'{name}: invalid norm value {norm!r}; should be "backward", "ortho" '
                         'or "forward"')
    norm = norm or "backward"
    ortho = (norm == "ortho") if orthogonalize is None else bool(orthogonalize)
    nd = get_aval(x).ndim
    if not -nd <= axis < nd:   # SciPy's IndexError; NumPy's AxisError is that and a ValueError
        raise AxisError(f"{name}: axis {axis} is out of bounds for a {nd}-D array")
    axis %= nd
    size = get_aval(x).shape[axis]
    if n is not None:
        n = int(n)
        if n < 1:
            raise ValueError(f"{name}: invalid number of data points ({n}) specified")
        if n < size:
            x = fnp.take(x, numpy.arange(n), axis=axis)
        elif n > size:
            pad = [(0, 0)] * nd
            pad[axis] = (0, n - size)
            x = fnp.pad(x, pad)
        size = n
    if size < 1:
        raise ValueError(f"{name}: invalid number of data points ({size}) specified")
    if family == "dct" and kind == 1 and size < 2:
        raise ValueError(f"{name}: type 1 needs at least 2 points, got {size}")
    dt = get_aval(x).dtype
    real = numpy.float32 if dt in (numpy.float32, numpy.complex64) else numpy.float64
    if size > _MATRIX_MAX:
        y = fnp.moveaxis(x, axis, -1)
        if dt.kind == "c":   # the transforms are real: real and imaginary parts apart
            y = (_trig_by_fft(family, kind, fnp.real(y), norm, ortho, inverse)
                 + 1j * _trig_by_fft(family, kind, fnp.imag(y), norm, ortho, inverse))
        else:
            y = _trig_by_fft(family, kind, y, norm, ortho, inverse)
        return fnp.moveaxis(y, -1, axis)
    m = _trig_matrix(family, kind, size, norm, ortho, inverse).astype(real)
    m = device_put(m, get_aval(x).device or get_default_device())
    y = fnp.tensordot(x, m, axes=([axis], [1]))  # the transformed axis comes last
    return fnp.moveaxis(y, -1, axis)


def _operand(x: Any) -> Any:
    _check_backend()
    x = fnp.asarray(x)
    dt = get_aval(x).dtype
    if dt.kind in "biu":
        return x.astype(numpy.float64)
    if dt == numpy.float16:
        return x.astype(numpy.float32)
    return x


def dct(x: Any, type: int = 2, n: Any = None, axis: int = -1, norm: Any = None,  # noqa: A002
        overwrite_x: bool = False, workers: Any = None, orthogonalize: Any = None) -> Any:
    """Discrete cosine transform of ``type`` 1-4 along ``axis`` (``n`` crops or zero-pads), with
    SciPy's normalisations; ``orthogonalize`` (default: ``norm == "ortho"``) makes the
    ``"ortho"`` transform orthogonal.

    Example:
        >>> import numpy as np, funcgrad.scipy.fft as fsf
        >>> fsf.dct(np.array([1.0, 2.0, 3.0]), norm="ortho").round(6)
        array([ 3.464102, -1.414214,  0.      ])
    """
    return _trig_along("dct", "dct", _operand(x), type, n, axis, norm, orthogonalize, False)


def idct(x: Any, type: int = 2, n: Any = None, axis: int = -1, norm: Any = None,  # noqa: A002
         overwrite_x: bool = False, workers: Any = None, orthogonalize: Any = None) -> Any:
    """Inverse of :func:`dct` with the same ``type`` and ``norm``.

    Example:
        >>> import numpy as np, funcgrad.scipy.fft as fsf
        >>> fsf.idct(fsf.dct(np.array([1.0, 2.0, 3.0]))).round(12)
        array([1., 2., 3.])
    """
    return _trig_along("dct", "idct", _operand(x), type, n, axis, norm, orthogonalize, True)


def _axes_and_sizes(name: str, x: Any, s: Any, axes: Any) -> list[tuple[int, Any]]:
    nd = get_aval(x).ndim
    if axes is None:
        axes = list(range(nd)) if s is None else list(range(nd - len(s), nd))
    elif isinstance(axes, int):
        axes = [axes]
    axes = [int(a) for a in axes]
    if s is None:
        sizes: Sequence[Any] = [None] * len(axes)
    else:
        sizes = [s] if isinstance(s, int) else list(s)
        if len(sizes) != len(axes):
            raise ValueError(f"{name}: when given, axes and shape arguments have to be of the "
                             f"same length, got {axes} and {sizes}")
    if len({a % nd for a in axes if -nd <= a < nd}) != len(axes):
        raise ValueError(f"{name}: all axes must be unique and in range, got {axes}")
    return list(zip(axes, sizes))


def dctn(x: Any, type: int = 2, s: Any = None, axes: Any = None, norm: Any = None,  # noqa: A002
         overwrite_x: bool = False, workers: Any = None, orthogonalize: Any = None) -> Any:
    """Multidimensional :func:`dct` over ``axes`` (all by default) with sizes ``s``.

    Example:
        >>> import numpy as np, funcgrad.scipy.fft as fsf
        >>> fsf.dctn(np.ones((2, 2))).round(12)
        array([[16.,  0.],
               [ 0.,  0.]])
    """
    x = _operand(x)
    for axis, n in _axes_and_sizes("dctn", x, s, axes):
        x = _trig_along("dct", "dctn", x, type, n, axis, norm, orthogonalize, False)
    return x


def idctn(x: Any, type: int = 2, s: Any = None, axes: Any = None, norm: Any = None,  # noqa: A002
          overwrite_x: bool = False, workers: Any = None, orthogonalize: Any = None) -> Any:
    """Inverse of :func:`dctn` with the same ``type`` and ``norm``.

    Example:
        >>> import numpy as np, funcgrad.scipy.fft as fsf
        >>> fsf.idctn(fsf.dctn(np.array([[1.0, 2.0], [3.0, 4.0]]))).round(12)
        array([[1., 2.],
               [3., 4.]])
    """
    x = _operand(x)
    for axis, n in _axes_and_sizes("idctn", x, s, axes):
        x = _trig_along("dct", "idctn", x, type, n, axis, norm, orthogonalize, True)
    return x


def dst(x: Any, type: int = 2, n: Any = None, axis: int = -1, norm: Any = None,  # noqa: A002
        overwrite_x: bool = False, workers: Any = None, orthogonalize: Any = None) -> Any:
    """Discrete sine transform of ``type`` 1-4 along ``axis`` (``n`` crops or zero-pads), with
    SciPy's definitions and normalisations; ``orthogonalize`` (default: ``norm == "ortho"``)
    makes the ``"ortho"`` transform of types 2 and 3 orthogonal.

    Example:
        >>> import numpy as np, funcgrad.scipy.fft as fsf
        >>> fsf.dst(np.array([1.0, 2.0, 3.0])).round(6)
        array([ 8.      , -3.464102,  4.      ])
    """
    return _trig_along("dst", "dst", _operand(x), type, n, axis, norm, orthogonalize, False)


def idst(x: Any, type: int = 2, n: Any = None, axis: int = -1, norm: Any = None,  # noqa: A002
         overwrite_x: bool = False, workers: Any = None, orthogonalize: Any = None) -> Any:
    """Inverse of :func:`dst` with the same ``type`` and ``norm``.

    Example:
        >>> import numpy as np, funcgrad.scipy.fft as fsf
        >>> fsf.idst(fsf.dst(np.array([1.0, 2.0, 3.0]), type=4), type=4).round(12)
        array([1., 2., 3.])
    """
    return _trig_along("dst", "idst", _operand(x), type, n, axis, norm, orthogonalize, True)


def dstn(x: Any, type: int = 2, s: Any = None, axes: Any = None, norm: Any = None,  # noqa: A002
         overwrite_x: bool = False, workers: Any = None, orthogonalize: Any = None) -> Any:
    """Multidimensional :func:`dst` over ``axes`` (all by default) with sizes ``s``.

    Example:
        >>> import numpy as np, funcgrad.scipy.fft as fsf
        >>> fsf.dstn(np.ones((2, 2))).round(12) + 0.0
        array([[8., 0.],
               [0., 0.]])
    """
    x = _operand(x)
    for axis, n in _axes_and_sizes("dstn", x, s, axes):
        x = _trig_along("dst", "dstn", x, type, n, axis, norm, orthogonalize, False)
    return x


def idstn(x: Any, type: int = 2, s: Any = None, axes: Any = None, norm: Any = None,  # noqa: A002
          overwrite_x: bool = False, workers: Any = None, orthogonalize: Any = None) -> Any:
    """Inverse of :func:`dstn` with the same ``type`` and ``norm``.

    Example:
        >>> import numpy as np, funcgrad.scipy.fft as fsf
        >>> fsf.idstn(fsf.dstn(np.array([[1.0, 2.0], [3.0, 4.0]]))).round(12)
        array([[1., 2.],
               [3., 4.]])
    """
    x = _operand(x)
    for axis, n in _axes_and_sizes("idstn", x, s, axes):
        x = _trig_along("dst", "idstn", x, type, n, axis, norm, orthogonalize, True)
    return x


# ---------------------------------------------------------------------------------------------
# The Fourier transforms: funcgrad.numpy.fft's, with SciPy's signatures and dtypes.

def _workers(name: str, workers: Any) -> int:
    """SciPy's reading of ``workers``: a positive count, or ``-k`` for ``cpu_count + 1 - k``."""
    workers = operator_index(workers)
    if workers == 0:
        raise ValueError(f"scipy.fft.{name}: workers must not be zero")
    if workers < 0:
        cpus = os.cpu_count() or 1
        if workers < -cpus:
            raise ValueError(f"scipy.fft.{name}: workers value out of range; got {workers}, "
                             f"must not be less than {-cpus}")
        workers += 1 + cpus
    return workers


def _check_fft_options(name: str, workers: Any, plan: Any) -> None:
    """SciPy's checks of the options that have no effect here (one process, no plans)."""
    if plan is not None:
        raise NotImplementedError(f"scipy.fft.{name}: passing a precomputed plan is not "
                                  "supported (nor by SciPy's own backend)")
    if workers is not None:
        _workers(name, workers)


@contextlib.contextmanager
def set_workers(workers: int) -> Iterator[None]:
    """Context manager setting the default number of workers, as ``scipy.fft.set_workers``
    (``-1``: one per CPU). :func:`get_workers` reads it back; funcgrad's transforms run in one
    process whatever it says.

    Example:
        >>> import funcgrad.scipy.fft as fsf
        >>> with fsf.set_workers(4):
        ...     fsf.get_workers()
        4
    """
    token = _config.fft_workers.set(_workers("set_workers", workers))
    try:
        yield
    finally:
        _config.fft_workers.reset(token)


def get_workers() -> int:
    """The default number of workers in the current context (1 unless :func:`set_workers`
    says otherwise), as ``scipy.fft.get_workers``.

    Example:
        >>> import funcgrad.scipy.fft as fsf
        >>> fsf.get_workers()
        1
    """
    return _config.fft_workers.get()


def _known_backend(name: str, backend: Any) -> None:
    """SciPy's backend argument: ``"scipy"`` names funcgrad's own transforms, the one backend
    here; uarray backend objects (``cupyx.scipy.fft``, pyFFTW's, mkl_fft's) implement
    SciPy's functions on their own arrays and cannot run funcgrad's."""
    if isinstance(backend, str):
        if backend != "scipy":
            raise ValueError(f"scipy.fft.{name}: Unknown backend {backend} (the one backend "
                             "is 'scipy')")
        return
    what = ("a uarray backend" if hasattr(backend, "__ua_domain__")
            else "not a backend (no __ua_domain__)")
    raise ValueError(f"scipy.fft.{name}: {backend!r} is {what}; funcgrad.scipy.fft has one "
                     "backend, 'scipy' (its own differentiable transforms). For CuPy arrays "
                     "use funcgrad's cuda device instead of cupyx.scipy.fft")


@contextlib.contextmanager
def set_backend(backend: Any, coerce: bool = False, only: bool = False) -> Iterator[None]:
    """Context manager selecting the backend, as ``scipy.fft.set_backend``; ``"scipy"``
    (funcgrad's transforms) is the one backend, so this only checks the name (and lifts an
    enclosing :func:`skip_backend`).

    Example:
        >>> import numpy as np, funcgrad.scipy.fft as fsf
        >>> with fsf.set_backend("scipy", only=True):
        ...     fsf.fft(np.array([1.0]))
        array([1.+0.j])
    """
    _known_backend("set_backend", backend)
    token = _config.fft_backend_skipped.set(False)
    try:
        yield
    finally:
        _config.fft_backend_skipped.reset(token)


@contextlib.contextmanager
def skip_backend(backend: Any) -> Iterator[None]:
    """Context manager skipping the backend, as ``scipy.fft.skip_backend``: skipping
    ``"scipy"``, the one backend, makes the transforms inside raise
    :class:`BackendNotImplementedError`, as SciPy's do when no other backend is set.

    Example:
        >>> import numpy as np, funcgrad.scipy.fft as fsf
        >>> with fsf.skip_backend("scipy"):
        ...     try:
        ...         fsf.fft(np.ones(2))
        ...     except fsf.BackendNotImplementedError:
        ...         print("skipped")
        skipped
    """
    _known_backend("skip_backend", backend)
    token = _config.fft_backend_skipped.set(True)
    try:
        yield
    finally:
        _config.fft_backend_skipped.reset(token)


def set_global_backend(backend: Any, coerce: bool = False, only: bool = False,
                       try_last: bool = False) -> None:
    """Set the global backend, as ``scipy.fft.set_global_backend``: ``"scipy"`` (the one
    backend, already the global one).

    Example:
        >>> import funcgrad.scipy.fft as fsf
        >>> fsf.set_global_backend("scipy")
    """
    _known_backend("set_global_backend", backend)


def register_backend(backend: Any) -> None:
    """Register a backend for permanent use, as ``scipy.fft.register_backend``: ``"scipy"``
    (the one backend, always registered).

    Example:
        >>> import funcgrad.scipy.fft as fsf
        >>> fsf.register_backend("scipy")
    """
    _known_backend("register_backend", backend)


def _fft_operand(x: Any) -> Any:
    """SciPy computes float16 in single precision and returns single precision (NumPy casts
    the real results of its inverse real transforms back to float16)."""
    _check_backend()
    x = fnp.asarray(x)
    if get_aval(x).dtype == numpy.float16:
        return x.astype(numpy.float32)
    return x


def _nd_axes(x: Any, s: Any, axes: Any) -> Any:
    """SciPy's default axes: all, or the last ``len(s)`` when only ``s`` is given (NumPy 2
    deprecates the latter; SciPy does not)."""
    if axes is None and s is not None:
        count = 1 if isinstance(s, int) else len(s)
        return tuple(range(-count, 0)) if count else ()
    if axes is not None and not isinstance(axes, int):
        # NumPy transforms a repeated axis twice; SciPy refuses it
        nd = get_aval(x).ndim
        listed = [operator_index(a) for a in axes]
        if len({a % nd if nd else a for a in listed}) != len(listed):
            raise ValueError(f"all axes must be unique, got axes={tuple(listed)}")
    return axes


def _one_dim_transform(name: str) -> Callable[..., Any]:
    np_fn = getattr(_npfft, name)

    def transform(x: Any, n: Any = None, axis: int = -1, norm: Any = None,
                  overwrite_x: bool = False, workers: Any = None, *, plan: Any = None) -> Any:
        _check_fft_options(name, workers, plan)
        return np_fn(_fft_operand(x), n, axis, norm)

    transform.__name__ = transform.__qualname__ = name
    return transform


def _n_dim_transform(name: str, default_axes: Any) -> Callable[..., Any]:
    np_fn = getattr(_npfft, name.replace("2", "n"))

    def transform(x: Any, s: Any = None, axes: Any = default_axes, norm: Any = None,
                  overwrite_x: bool = False, workers: Any = None, *, plan: Any = None) -> Any:
        _check_fft_options(name, workers, plan)
        x = _fft_operand(x)
        return np_fn(x, s, _nd_axes(x, s, axes), norm)

    transform.__name__ = transform.__qualname__ = name
    return transform


_EXAMPLE = """

    Example:
        >>> import numpy as np, funcgrad.scipy.fft as fsf
        >>> {call}
        {result}
    """

_TRANSFORMS = {
    # name: (what it computes, example call, its result)
    "fft": ("One-dimensional discrete Fourier transform along ``axis`` (cropped or "
            "zero-padded to ``n``)", "fsf.fft(np.array([1.0, 2.0, 3.0, 4.0]))",
            "array([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])"),
    "ifft": ("Inverse of :func:`fft`", "fsf.ifft(np.array([4.0, 0.0, 0.0, 0.0]))",
             "array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])"),
    "rfft": ("The non-negative frequencies of the FFT of real input",
             "fsf.rfft(np.array([1.0, 2.0, 3.0, 4.0]))", "array([10.+0.j, -2.+2.j, -2.+0.j])"),
    "irfft": ("Inverse of :func:`rfft` (``n`` real outputs, by default ``2 * (m - 1)``)",
              "fsf.irfft(np.array([4.0, 0.0, 0.0]))", "array([1., 1., 1., 1.])"),
    "hfft": ("FFT of a Hermitian-symmetric signal given by its first half (a real spectrum)",
             "fsf.hfft(np.array([1.0, 0.0, 0.0]))", "array([1., 1., 1., 1.])"),
    "ihfft": ("Inverse of :func:`hfft`: the conjugated half spectrum of real input",
              "fsf.ihfft(np.array([1.0, 1.0, 1.0, 1.0]))", "array([1.-0.j, 0.-0.j, 0.-0.j])"),
    "fft2": ("Two-dimensional FFT over ``axes``", "fsf.fft2(np.ones((2, 2))).real",
             "array([[4., 0.],\n               [0., 0.]])"),
    "ifft2": ("Inverse of :func:`fft2`", "fsf.ifft2(np.array([[4.0, 0.0], [0.0, 0.0]])).real",
              "array([[1., 1.],\n               [1., 1.]])"),
    "rfft2": ("Two-dimensional FFT of real input (the last axis halved)",
              "fsf.rfft2(np.ones((2, 4))).shape", "(2, 3)"),
    "irfft2": ("Inverse of :func:`rfft2`", "fsf.irfft2(np.array([[4.0, 0.0], [0.0, 0.0]]))",
               "array([[1., 1.],\n               [1., 1.]])"),
    "fftn": ("N-dimensional FFT over ``axes`` (all, or the last ``len(s)``)",
             "fsf.fftn(np.ones((2, 2, 2)))[0, 0, 0]", "np.complex128(8+0j)"),
    "ifftn": ("Inverse of :func:`fftn`", "fsf.ifftn(np.full((2, 2), 4.0)).real",
              "array([[4., 0.],\n               [0., 0.]])"),
    "rfftn": ("N-dimensional FFT of real input; the last of ``axes`` is halved",
              "fsf.rfftn(np.ones((2, 4))).shape", "(2, 3)"),
    "irfftn": ("Inverse of :func:`rfftn` (the last output size defaults to ``2 * (m - 1)``)",
               "fsf.irfftn(np.array([[8.0, 0.0, 0.0], [0.0, 0.0, 0.0]])).shape", "(2, 4)"),
}

def _document(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    what, call, result = _TRANSFORMS[name]
    fn.__doc__ = (f"{what}, as ``scipy.fft.{name}`` (SciPy's dtypes: float16 computes and "
                  "returns single precision). ``overwrite_x`` and ``workers`` have no effect; "
                  "``plan`` must be None." + _EXAMPLE.format(call=call, result=result))
    return fn


fft = _document(_one_dim_transform("fft"), "fft")
ifft = _document(_one_dim_transform("ifft"), "ifft")
rfft = _document(_one_dim_transform("rfft"), "rfft")
irfft = _document(_one_dim_transform("irfft"), "irfft")
hfft = _document(_one_dim_transform("hfft"), "hfft")
ihfft = _document(_one_dim_transform("ihfft"), "ihfft")
fft2 = _document(_n_dim_transform("fft2", (-2, -1)), "fft2")
ifft2 = _document(_n_dim_transform("ifft2", (-2, -1)), "ifft2")
rfft2 = _document(_n_dim_transform("rfft2", (-2, -1)), "rfft2")
irfft2 = _document(_n_dim_transform("irfft2", (-2, -1)), "irfft2")
fftn = _document(_n_dim_transform("fftn", None), "fftn")
ifftn = _document(_n_dim_transform("ifftn", None), "ifftn")
rfftn = _document(_n_dim_transform("rfftn", None), "rfftn")
irfftn = _document(_n_dim_transform("irfftn", None), "irfftn")


_SWAP = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def _swapped(name: str, norm: Any) -> str:
    if norm not in _SWAP:
        raise ValueError(f'{name}: invalid norm value {norm!r}; should be "backward", "ortho" '
                         'or "forward"')
    return _SWAP[norm]


def hfftn(x: Any, s: Any = None, axes: Any = None, norm: Any = None,
          overwrite_x: bool = False, workers: Any = None, *, plan: Any = None) -> Any:
    """N-dimensional FFT of a Hermitian-symmetric signal given by its half (the last of
    ``axes`` halved): real output, ``irfftn(conj(x))`` with the dual normalisation, as
    ``scipy.fft.hfftn``.

    Example:
        >>> import numpy as np, funcgrad.scipy.fft as fsf
        >>> fsf.hfftn(np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]))
        array([[1., 1., 1., 1.],
               [1., 1., 1., 1.]])
    """
    _check_fft_options("hfftn", workers, plan)
    x = _fft_operand(x)
    return _npfft.irfftn(fnp.conj(x), s, _nd_axes(x, s, axes), _swapped("hfftn", norm))


def ihfftn(x: Any, s: Any = None, axes: Any = None, norm: Any = None,
           overwrite_x: bool = False, workers: Any = None, *, plan: Any = None) -> Any:
    """Inverse of :func:`hfftn`: ``conj(rfftn(x))`` of real ``x`` with the dual
    normalisation, as ``scipy.fft.ihfftn``.

    Example:
        >>> import numpy as np, funcgrad.scipy.fft as fsf
        >>> fsf.ihfftn(np.ones((2, 4))).real
        array([[1., 0., 0.],
               [0., 0., 0.]])
    """
    _check_fft_options("ihfftn", workers, plan)
    x = _fft_operand(x)
    return fnp.conj(_npfft.rfftn(x, s, _nd_axes(x, s, axes), _swapped("ihfftn", norm)))


def hfft2(x: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None,
          overwrite_x: bool = False, workers: Any = None, *, plan: Any = None) -> Any:
    """Two-dimensional :func:`hfftn`.

    Example:
        >>> import numpy as np, funcgrad.scipy.fft as fsf
        >>> fsf.hfft2(np.array([[4.0, 0.0], [0.0, 0.0]]))
        array([[4., 4.],
               [4., 4.]])
    """
    return hfftn(x, s, axes, norm, overwrite_x, workers, plan=plan)


def ihfft2(x: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None,
           overwrite_x: bool = False, workers: Any = None, *, plan: Any = None) -> Any:
    """Two-dimensional :func:`ihfftn`.

    Example:
        >>> import numpy as np, funcgrad.scipy.fft as fsf
        >>> fsf.ihfft2(np.full((2, 2), 4.0)).real
        array([[4., 0.],
               [0., 0.]])
    """
    return ihfftn(x, s, axes, norm, overwrite_x, workers, plan=plan)


def fftfreq(n: int, d: Any = 1.0, *, xp: Any = None, device: Any = None) -> Any:
    """Sample frequencies of an ``n``-point FFT with spacing ``d`` (float64), as
    ``scipy.fft.fftfreq``; ``xp`` (an array namespace) is not used.

    Example:
        >>> import funcgrad.scipy.fft as fsf
        >>> fsf.fftfreq(4, d=0.5)
        array([ 0. ,  0.5, -1. , -0.5])
    """
    return _npfft.fftfreq(n, d, device)


def rfftfreq(n: int, d: Any = 1.0, *, xp: Any = None, device: Any = None) -> Any:
    """Sample frequencies of :func:`rfft` (the non-negative ones), as ``scipy.fft.rfftfreq``.

    Example:
        >>> import funcgrad.scipy.fft as fsf
        >>> fsf.rfftfreq(4)
        array([0.  , 0.25, 0.5 ])
    """
    return _npfft.rfftfreq(n, d, device)


def fftshift(x: Any, axes: Any = None) -> Any:
    """The zero frequency moved to the centre, as ``scipy.fft.fftshift``.

    Example:
        >>> import numpy as np, funcgrad.scipy.fft as fsf
        >>> fsf.fftshift(np.array([0.0, 1.0, 2.0, -2.0, -1.0]))
        array([-2., -1.,  0.,  1.,  2.])
    """
    return _npfft.fftshift(x, axes)


def ifftshift(x: Any, axes: Any = None) -> Any:
    """Inverse of :func:`fftshift`, as ``scipy.fft.ifftshift``.

    Example:
        >>> import numpy as np, funcgrad.scipy.fft as fsf
        >>> fsf.ifftshift(np.array([-2.0, -1.0, 0.0, 1.0, 2.0]))
        array([ 0.,  1.,  2., -2., -1.])
    """
    return _npfft.ifftshift(x, axes)


# pocketfft's fast lengths: products of these primes (SciPy's ``real=True`` uses the first 3)
_FAST_PRIMES = {False: (2, 3, 5, 7, 11), True: (2, 3, 5)}


def _fast_target(name: str, target: Any) -> int:
    target = operator_index(target)
    if target < 0:
        raise ValueError(f"{name}: target length must be positive, got {target}")
    if target > sys.maxsize:   # SciPy's C ssize_t
        raise OverflowError(f"{name}: Python int too large to convert to C ssize_t")
    if target > -(-(2 ** 64 - 1) // 11):   # SciPy's bound (SIZE_MAX / 11, up), for both
        raise ValueError(f"Target length is too large to perform an FFT: {target}")
    return target


def _next_smooth(target: int, odd: tuple[int, ...]) -> int:
    """The smallest ``2^k c >= target`` with ``c`` a product of the ``odd`` primes: a walk
    over the products below the best length so far (some thousands near 2^63), where stepping
    up one length at a time could take ~1e13 steps there."""
    best = 1 << (target - 1).bit_length()

    def walk(i: int, c: int) -> None:
        nonlocal best
        if i == len(odd):
            best = min(best, c << (-(-target // c) - 1).bit_length())
            return
        while c < best:
            walk(i + 1, c)
            c *= odd[i]

    walk(0, 1)
    return best


def _prev_smooth(target: int, odd: tuple[int, ...]) -> int:
    """The largest ``2^k c <= target`` with ``c`` a product of the ``odd`` primes."""
    best = 1 << (target.bit_length() - 1)

    def walk(i: int, c: int) -> None:
        nonlocal best
        if i == len(odd):
            best = max(best, c << ((target // c).bit_length() - 1))
            return
        while c <= target:
            walk(i + 1, c)
            c *= odd[i]

    walk(0, 1)
    return best


def next_fast_len(target: int, real: bool = False) -> int:
    """The smallest length ``>= target`` that FFTs handle fastest (a product of 2, 3, 5, 7 and
    11; of 2, 3 and 5 with ``real=True``), as ``scipy.fft.next_fast_len``; 0 for 0.

    Example:
        >>> import funcgrad.scipy.fft as fsf
        >>> fsf.next_fast_len(97), fsf.next_fast_len(97, real=True)
        (98, 100)
    """
    m = _fast_target("next_fast_len", target)
    if m == 0:
        return 0
    return _next_smooth(m, _FAST_PRIMES[bool(real)][1:])


def prev_fast_len(target: int, real: bool = False) -> int:
    """The largest fast length ``<= target`` (see :func:`next_fast_len`), as
    ``scipy.fft.prev_fast_len``; 0 for 0.

    Example:
        >>> import funcgrad.scipy.fft as fsf
        >>> fsf.prev_fast_len(97), fsf.prev_fast_len(1021, real=True)
        (96, 1000)
    """
    m = _fast_target("prev_fast_len", target)
    return m if m <= 1 else _prev_smooth(m, _FAST_PRIMES[bool(real)][1:])

# NumPy inputs compute on the host whatever the default device (funcgrad.scipy._device)
_keep_host_inputs_on_host(globals(), __all__)
