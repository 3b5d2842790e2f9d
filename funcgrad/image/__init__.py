"""``jax.image``: ``resize`` and ``scale_and_translate`` (image resampling with the kernels of
JAX: nearest, linear, Keys cubic, PyTorch's cubic, Lanczos 3 and 5, area), as JAX 0.10 computes
them: each resized axis is one contraction with a weight matrix built from the kernel, so
``grad``, ``vmap`` and ``jit`` come for free, with respect to the image and to a traced scale or
translation alike.

Pixels are half-centred (pixel ``i`` covers ``[i, i + 1)``). When downsampling with
``antialias=True`` (the default) the kernel is stretched by the inverse scale, a low-pass
filter; upsampling only interpolates. Output pixels whose sample falls outside the input get 0
in ``scale_and_translate``.

Example:
    >>> import numpy as np
    >>> resize(np.array([0.0, 1.0]), (4,), "linear").tolist()
    [0.0, 0.25, 0.75, 1.0]
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad.avals import get_aval
from funcgrad.errors import ShapeError

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


def _lanczos(radius: float, x: Any) -> Any:
    y = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
    out = jnp.where(x > 1e-3, jnp.divide(y, jnp.where(x != 0, np.pi ** 2 * x ** 2, 1)), 1)
    return jnp.where(x > radius, 0.0, out)


def _keys_cubic(x: Any) -> Any:
    # Keys' cubic convolution kernel with a = -0.5 (Pillow's, TensorFlow's; PyTorch's with
    # antialiasing)
    out = ((1.5 * x - 2.5) * x) * x + 1.0
    out = jnp.where(x >= 1.0, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, out)
    return jnp.where(x >= 2.0, 0.0, out)


def _opencv_cubic(x: Any) -> Any:
    # a = -0.75: PyTorch's bicubic without antialiasing (OpenCV's)
    a = -0.75
    out = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    out = jnp.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, out)
    return jnp.where(x >= 2.0, 0.0, out)


def _triangle(x: Any) -> Any:
    return jnp.maximum(0, 1 - jnp.abs(x))


_AREA: Any = object()  # overlap lengths, not a kernel of distances


class ResizeMethod(enum.Enum):
    """The resampling methods of :func:`resize` (``jax.image.ResizeMethod``)."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> ResizeMethod:
        """The method a name stands for (``"bilinear"`` is ``LINEAR``, ...).

        Example:
            >>> ResizeMethod.from_string("bicubic")
            <ResizeMethod.CUBIC: 4>
        """
        method = _NAMES.get(s)
        if method is None:
            raise ValueError(f'Unknown resize method "{s}" (known: {", ".join(_NAMES)})')
        return method


_NAMES = {"nearest": ResizeMethod.NEAREST, "linear": ResizeMethod.LINEAR,
          "bilinear": ResizeMethod.LINEAR, "trilinear": ResizeMethod.LINEAR,
          "triangle": ResizeMethod.LINEAR, "lanczos3": ResizeMethod.LANCZOS3,
          "lanczos5": ResizeMethod.LANCZOS5, "cubic": ResizeMethod.CUBIC,
          "bicubic": ResizeMethod.CUBIC, "tricubic": ResizeMethod.CUBIC,
          "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
          "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH, "area": ResizeMethod.AREA}

#: method -> (the kernel's radius, the kernel)
_KERNELS: dict[ResizeMethod, tuple[int, Callable[[Any], Any] | Any]] = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, lambda x: _lanczos(3.0, x)),
    ResizeMethod.LANCZOS5: (5, lambda x: _lanczos(5.0, x)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic),
    ResizeMethod.AREA: (1, _AREA),
}

_TINY = 1000.0 * float(np.finfo(np.float32).eps)  # a weight sum below this: no input there


def _weight_matrix(m: int, n: int, scale: Any, translation: Any, kernel: Any,
                   antialias: bool, edge_padding: bool, radius: int) -> Any:
    """The ``(m, n)`` weights taking an input axis of ``m`` pixels to ``n`` output pixels."""
    dtype = jnp.result_type(scale, translation)
    inv_scale = 1.0 / scale
    kernel_scale = jnp.maximum(inv_scale, 1.0) if antialias else 1.0
    # the input coordinate of each output pixel's centre
    sample_f = (jnp.arange(n, dtype=dtype) + 0.5) * inv_scale - translation * inv_scale - 0.5
    k = radius if edge_padding else 0  # (edge padding comes without antialiasing only)
    expanded = jnp.arange(-k, m + k, dtype=dtype)
    if kernel is _AREA:
        left = jnp.arange(n, dtype=dtype) * inv_scale - translation * inv_scale
        right = left + inv_scale
        lj = jnp.arange(m, dtype=dtype)
        weights = jnp.maximum(0.0, jnp.minimum(right[None, :], lj[:, None] + 1.0)
                              - jnp.maximum(left[None, :], lj[:, None]))
    else:
        weights = kernel(jnp.abs(sample_f[None, :] - expanded[:, None]) / kernel_scale)
    if edge_padding:
        # the weight of a pixel past an edge goes to the edge pixel (edges repeat)
        clamped = jnp.clip(expanded.astype(np.int32), 0, m - 1)
        cols = jnp.broadcast_to(jnp.arange(n)[None, :], (expanded.shape[0], n))
        weights = jnp.at(jnp.zeros((m, n), dtype=get_aval(weights).dtype))[
            clamped[:, None], cols].add(weights)
    total = jnp.sum(weights, axis=0, keepdims=True)
    weights = jnp.where(jnp.abs(total) > _TINY,
                        jnp.divide(weights, jnp.where(total != 0, total, 1)), 0)
    if not edge_padding:
        # an output pixel whose sample lies outside the input gets nothing
        inside = jnp.logical_and(sample_f >= -0.5, sample_f <= m - 0.5)
        weights = jnp.where(inside[None, :], weights, 0)
    return weights


def _inexact(x: Any) -> Any:
    x = jnp.asarray(x)
    return x if jnp.issubdtype(x.dtype, jnp.inexact) else x.astype(jnp.float64)


def _scale_and_translate(x: Any, shape: tuple, spatial_dims: Sequence[int], scale: Any,
                         translation: Any, method: ResizeMethod, antialias: bool) -> Any:
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    if not spatial_dims:
        return x
    nd = len(shape)
    operands: list[Any] = [x, list(range(nd))]
    out_axes = list(range(nd))
    for i, d in enumerate(spatial_dims):
        d = d % nd
        w = _weight_matrix(x.shape[d], shape[d], scale[i], translation[i], kernel, antialias,
                           edge_padding, radius).astype(x.dtype)
        operands += [w, [d, nd + i]]
        out_axes[d] = nd + i
    return jnp.einsum(*operands, out_axes)


def _method(method: str | ResizeMethod) -> ResizeMethod:
    if isinstance(method, ResizeMethod):
        return method
    if isinstance(method, str):
        return ResizeMethod.from_string(method)
    raise TypeError(f"method must be a ResizeMethod or its name, got {method!r}")


def _shape(image: Any, shape: Any) -> tuple:
    shape = tuple(int(s) for s in shape)
    if len(shape) != jnp.ndim(image):
        raise ShapeError(f"shape must have length equal to the number of dimensions of the "
                         f"image; {shape} vs {jnp.shape(image)}")
    return shape


def scale_and_translate(image: Any, shape: Sequence[int], spatial_dims: Sequence[int],
                        scale: Any, translation: Any, method: str | ResizeMethod,
                        antialias: bool = True, precision: Any = None) -> Any:
    """Resample ``image`` to ``shape`` so that input location ``x`` along ``spatial_dims[i]``
    lands at ``x * scale[i] + translation[i]`` (half-centred pixels); output pixels whose
    sample is outside the input are 0. ``method`` is any of :class:`ResizeMethod` but
    ``NEAREST``; ``scale`` and ``translation`` may be traced (and differentiated).
    ``precision`` is accepted and ignored (NumPy contracts at full precision). As
    ``jax.image.scale_and_translate``.

    Example:
        >>> import numpy as np
        >>> scale_and_translate(np.array([1.0, 2.0, 3.0, 4.0]), (4,), (0,), np.array([1.0]),
        ...                     np.array([1.0]), "linear").tolist()   # shifted right by one
        [0.0, 1.0, 2.0, 3.0]
    """
    shape = _shape(image, shape)
    m = _method(method)
    if m == ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not supported by scale_and_translate "
                         "(as in JAX); use resize(..., 'nearest')")
    image = _inexact(image)
    scale, translation = _inexact(scale), _inexact(translation)
    if len(spatial_dims) != (scale.shape[0] if scale.ndim else 1) or (
            len(spatial_dims) != (translation.shape[0] if translation.ndim else 1)):
        raise ShapeError(f"scale_and_translate: {len(spatial_dims)} spatial_dims need as many "
                         f"scales and translations, got {scale.shape} and {translation.shape}")
    return _scale_and_translate(image, shape, tuple(spatial_dims), scale, translation, m,
                                antialias)


def _resize_nearest(x: Any, shape: tuple) -> Any:
    for d in range(len(shape)):
        m, n = x.shape[d], shape[d]
        if m == n:
            continue
        # computed in float32, as JAX, so that the picked pixels are JAX's
        offsets = (np.arange(n, dtype=np.float32) + 0.5) * np.float32(m) / np.float32(n)
        idx = np.floor(offsets.astype(np.float32)).astype(np.int32)
        x = jnp.take(x, jnp.asarray(idx), axis=d)
    return x


def resize(image: Any, shape: Sequence[int], method: str | ResizeMethod,
           antialias: bool = True, precision: Any = None) -> Any:
    """``image`` resampled to ``shape`` (every axis: keep a batch or channel axis's size to
    leave it alone) with ``method``: ``"nearest"`` (keeps the dtype), ``"linear"``/
    ``"bilinear"``/``"trilinear"``, ``"cubic"``/``"bicubic"`` (Keys, a = -0.5),
    ``"cubic-pytorch"`` (PyTorch's a = -0.75 with repeated edges when ``antialias=False``),
    ``"lanczos3"``, ``"lanczos5"``, ``"area"`` (the average over each output pixel's area).
    Other methods give a float result. ``antialias`` low-pass filters when downsampling.
    As ``jax.image.resize``; differentiable.

    Example:
        >>> import numpy as np
        >>> resize(np.arange(4.0), (2,), "linear", antialias=False).tolist()  # samples 0.5, 2.5
        [0.5, 2.5]
        >>> [round(v, 4) for v in resize(np.arange(4.0), (2,), "linear").tolist()]  # filtered
        [0.7143, 2.2857]
        >>> resize(np.array([[1, 2], [3, 4]]), (3, 3), "nearest").tolist()
        [[1, 2, 2], [3, 4, 4], [3, 4, 4]]
    """
    shape = _shape(image, shape)
    m = _method(method)
    if m == ResizeMethod.NEAREST:
        return _resize_nearest(jnp.asarray(image), shape)
    image = _inexact(image)
    dims = tuple(d for d in range(len(shape)) if image.shape[d] != shape[d])
    scale = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in dims]
    return _scale_and_translate(image, shape, dims, scale, [0.0] * len(dims), m, antialias)

