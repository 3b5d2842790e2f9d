"""funcgrad.scipy.fft: discrete cosine transforms ``dct``, ``idct``, ``dctn``, ``idctn`` (types
1-4, ``norm`` ``"backward"``/``"ortho"``/``"forward"``, ``orthogonalize``), as ``scipy.fft``.

Each 1-D transform is a product with the transform's real ``(n, n)`` matrix, so it is linear:
differentiable to any order, ``jit``/``vmap``-able, float32 stays float32, complex inputs
transform their real and imaginary parts.

Example:
    >>> import numpy as np, funcgrad.scipy.fft as fsf
    >>> fsf.dct(np.array([1.0, 2.0, 3.0])).round(8)
    array([12.        , -3.46410162,  0.        ])
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device

__all__ = ["dct", "idct", "dctn", "idctn"]

_NORMS = (None, "backward", "ortho", "forward")


@functools.lru_cache(maxsize=256)
def _dct_matrix(kind: int, n: int, norm: str, orthogonalize: bool, inverse: bool) -> numpy.ndarray:
    """The float64 matrix ``M`` with ``dct(x) = M @ x`` (``idct``'s is its inverse)."""
    k = numpy.arange(n)[:, None]
    j = numpy.arange(n)[None, :]

    def cospi(num: numpy.ndarray, den: int) -> numpy.ndarray:
        """cos(pi num / den) for integers, with exact zeros (cos(pi/2) is 6e-17 in floats)."""
        num = num % (2 * den)
        out = numpy.cos(numpy.pi * num / den)
        out[(2 * num) % (2 * den) == den] = 0.0
        return out

    d_in = numpy.ones(n)
    d_out = numpy.ones(n)
    if kind == 1:
        if n < 2:
            raise ValueError(f"dct: type 1 needs at least 2 points, got {n}")
        c = numpy.full(n, 2.0)
        c[[0, -1]] = 1.0
        m = c[None, :] * cospi(k * j, n - 1)
        scale_n = 2.0 * (n - 1)
        if orthogonalize:
            d_in[[0, -1]] = numpy.sqrt(2.0)
            d_out[[0, -1]] = 1.0 / numpy.sqrt(2.0)
    elif kind == 2:
        m = 2.0 * cospi(k * (2 * j + 1), 2 * n)
        scale_n = 2.0 * n
        if orthogonalize:
            d_out[0] = 1.0 / numpy.sqrt(2.0)
    elif kind == 3:
        c = numpy.full(n, 2.0)
        c[0] = 1.0
        m = c[None, :] * cospi((2 * k + 1) * j, 2 * n)
        scale_n = 2.0 * n
        if orthogonalize:
            d_in[0] = numpy.sqrt(2.0)
    else:
        m = 2.0 * cospi((2 * k + 1) * (2 * j + 1), 4 * n)
        scale_n = 2.0 * n
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


def _dct_along(name: str, x: Any, kind: int, n: Any, axis: int, norm: Any,
               orthogonalize: Any, inverse: bool) -> Any:
    if kind not in (1, 2, 3, 4):
        raise ValueError(f"{name}: type must be 1, 2, 3 or 4, got {kind!r}")
    if norm not in _NORMS:
        raise ValueError(f'{name}: invalid norm value {norm!r}; should be "backward", "ortho" '
                         'or "forward"')
    norm = norm or "backward"
    ortho = (norm == "ortho") if orthogonalize is None else bool(orthogonalize)
    nd = get_aval(x).ndim
    if not -nd <= axis < nd:
        raise ValueError(f"{name}: axis {axis} is out of bounds for a {nd}-D array")
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
    dt = get_aval(x).dtype
    real = numpy.float32 if dt in (numpy.float32, numpy.complex64) else numpy.float64
    m = _dct_matrix(kind, size, norm, ortho, inverse).astype(real)
    m = device_put(m, get_aval(x).device or get_default_device())
    y = fnp.tensordot(x, m, axes=([axis], [1]))  # the transformed axis comes last
    return fnp.moveaxis(y, -1, axis)


def _operand(x: Any) -> Any:
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
    return _dct_along("dct", _operand(x), type, n, axis, norm, orthogonalize, False)


def idct(x: Any, type: int = 2, n: Any = None, axis: int = -1, norm: Any = None,  # noqa: A002
         overwrite_x: bool = False, workers: Any = None, orthogonalize: Any = None) -> Any:
    """Inverse of :func:`dct` with the same ``type`` and ``norm``.

    Example:
        >>> import numpy as np, funcgrad.scipy.fft as fsf
        >>> fsf.idct(fsf.dct(np.array([1.0, 2.0, 3.0]))).round(12)
        array([1., 2., 3.])
    """
    return _dct_along("idct", _operand(x), type, n, axis, norm, orthogonalize, True)


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
        x = _dct_along("dctn", x, type, n, axis, norm, orthogonalize, False)
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
        x = _dct_along("idctn", x, type, n, axis, norm, orthogonalize, True)
    return x
