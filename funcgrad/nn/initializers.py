"""``jax.nn.initializers``: functions ``init(key, shape, dtype) -> array`` for parameters.

Each constructor (``glorot_normal()``, ``normal(stddev)``, ...) returns an initializer; they
draw with :mod:`funcgrad.random` exactly as JAX does, so the same key gives the same numbers
as ``jax.nn.initializers`` (with ``jax_enable_x64``; the default dtype is float64, NumPy's
default float).

Example:
    >>> import funcgrad.random as random
    >>> w = glorot_uniform()(random.PRNGKey(0), (3, 4))
    >>> w.shape, w.dtype
    ((3, 4), dtype('float64'))
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from funcgrad import numpy as fnp
from funcgrad import random
from funcgrad.avals import get_aval
from funcgrad.random._samplers import float_dtype

__all__ = [
    "Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform",
    "he_normal", "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal",
    "lecun_uniform", "normal", "ones", "orthogonal", "truncated_normal", "uniform",
    "variance_scaling", "xavier_normal", "xavier_uniform", "zeros",
]

#: an initializer: ``init(key, shape, dtype=...) -> array``
Initializer = Callable[..., Any]
_FLOAT = numpy.dtype(numpy.float64)
# the standard deviation of a standard normal truncated to (-2, 2)
_TRUNCATED_STDDEV = 0.87962566103423978
# ... and of a complex standard normal whose modulus is truncated to 2
_COMPLEX_TRUNCATED_STDDEV = 0.95311164380491208


def _device(key: Any) -> str | None:
    """The key's device: what an initializer makes goes there (JAX's default-device arrays
    move to where they are used; funcgrad's stay put), so parameters from a key on the GPU
    are on the GPU even with the default device left at the CPU. No key (``None``, which
    the constant initializers accept, as JAX's): the default device."""
    return None if key is None else get_aval(random.key_data(key)).device


def _scalar(key: Any, value: Any, dtype: Any) -> Any:
    """A scale (stddev, variance) as a 0-d array of ``dtype`` on the key's device."""
    return fnp.asarray(value, dtype, device=_device(key))


def _complex_uniform(key: Any, shape: tuple[int, ...], dtype: numpy.dtype) -> Any:
    """Uniform on the disk of radius sqrt(2) (mean 0, variance 1): JAX's construction."""
    key_r, key_theta = random.split(key)
    real = numpy.finfo(dtype).dtype
    r = fnp.sqrt(2 * random.uniform(key_r, shape, real)).astype(dtype)
    theta = (2 * numpy.pi * random.uniform(key_theta, shape, real)).astype(dtype)
    return r * fnp.exp(1j * theta)


def _complex_truncated_normal(key: Any, upper: float, shape: tuple[int, ...],
                              dtype: numpy.dtype) -> Any:
    """A centred complex normal of variance 1, its modulus truncated to ``upper`` (JAX's:
    the modulus by inverting its CDF, the angle uniform)."""
    key_r, key_theta = random.split(key)
    real = numpy.finfo(dtype).dtype
    t = (1 - numpy.exp(-(upper ** 2))) * random.uniform(key_r, shape, real)
    r = fnp.sqrt(-fnp.log1p(-t)).astype(dtype)
    theta = (2 * numpy.pi * random.uniform(key_theta, shape, real)).astype(dtype)
    return r * fnp.exp(1j * theta)


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, numpy.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def zeros(key: Any, shape: Any, dtype: Any = _FLOAT) -> Any:
    """All zeros (``jax.nn.initializers.zeros``; the key is unused).

    Example:
        >>> zeros(None, (2,))
        array([0., 0.])
    """
    return fnp.zeros(_shape(shape), dtype, device=_device(key))


def ones(key: Any, shape: Any, dtype: Any = _FLOAT) -> Any:
    """All ones (``jax.nn.initializers.ones``; the key is unused).

    Example:
        >>> ones(None, (2,), numpy.int32)
        array([1, 1], dtype=int32)
    """
    return fnp.ones(_shape(shape), dtype, device=_device(key))


def constant(value: Any, dtype: Any = _FLOAT) -> Initializer:
    """An initializer filling with ``value`` (``jax.nn.initializers.constant``).

    Example:
        >>> constant(0.5)(None, (2,))
        array([0.5, 0.5])
    """
    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        return fnp.full(_shape(shape), value, dtype, device=_device(key))
    return init


def uniform(scale: Any = 1e-2, dtype: Any = _FLOAT) -> Initializer:
    """Uniform on ``[0, scale)`` (``jax.nn.initializers.uniform``).

    Example:
        >>> w = uniform(2.0)(random.PRNGKey(0), (100,))
        >>> bool((w >= 0).all() and (w < 2).all())
        True
    """
    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        return random.uniform(key, _shape(shape), dtype) * _scalar(key, scale, dtype)
    return init


def normal(stddev: Any = 1e-2, dtype: Any = _FLOAT) -> Initializer:
    """Normal with mean 0 and standard deviation ``stddev`` (``jax.nn.initializers.normal``).

    Example:
        >>> normal(1.0)(random.PRNGKey(0), (2, 3)).shape
        (2, 3)
    """
    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        return random.normal(key, _shape(shape), dtype) * _scalar(key, stddev, dtype)
    return init


def truncated_normal(stddev: Any = 1e-2, dtype: Any = _FLOAT, lower: Any = -2.0,
                     upper: Any = 2.0) -> Initializer:
    """``stddev`` times a standard normal truncated to ``[lower, upper]``
    (``jax.nn.initializers.truncated_normal``).

    Example:
        >>> w = truncated_normal(1.0)(random.PRNGKey(0), (1000,))
        >>> bool(abs(w).max() <= 2.0)
        True
    """
    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        return random.truncated_normal(key, lower, upper, _shape(shape), dtype) * \
            _scalar(key, stddev, dtype)
    return init


def _axes_size(shape: tuple[int, ...], axes: int | Sequence[int]) -> int:
    if isinstance(axes, (int, numpy.integer)):
        return shape[axes]
    return math.prod(shape[a] for a in axes)


def _compute_fans(shape: tuple[int, ...], in_axis: Any, out_axis: Any, batch_axis: Any
                  ) -> tuple[float, float]:
    # JAX refuses only the default in_axis on a 0-D/1-D shape: an explicit one (a bias drawn
    # with in_axis=0, out_axis=()) is fine
    if isinstance(in_axis, (int, numpy.integer)) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional "
                         "weights tensor with default in_axis. Must be at least 2D or specify "
                         "in_axis explicitly.")
    in_size = _axes_size(shape, in_axis)
    out_size = _axes_size(shape, out_axis)
    batch_size = _axes_size(shape, batch_axis)
    receptive_field = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field, out_size * receptive_field


def variance_scaling(scale: Any, mode: str, distribution: str, in_axis: Any = -2,
                     out_axis: Any = -1, batch_axis: Any = (), dtype: Any = _FLOAT
                     ) -> Initializer:
    """Samples with variance ``scale / n``, ``n`` the fan-in (``mode="fan_in"``), fan-out
    (``"fan_out"``), their mean (``"fan_avg"``) or geometric mean (``"fan_geo_avg"``);
    ``distribution`` is ``"truncated_normal"``, ``"normal"`` or ``"uniform"``
    (``jax.nn.initializers.variance_scaling``). The fans count ``in_axis``/``out_axis`` times
    the receptive field (the other axes but ``batch_axis``). Complex dtypes draw as JAX:
    uniform on a disk, or a complex normal with its modulus truncated at 2.

    Example:
        >>> w = variance_scaling(2.0, "fan_in", "normal")(random.PRNGKey(0), (400, 300))
        >>> round(float(w.std() * 400 ** 0.5 / 2 ** 0.5), 1)
        1.0
    """
    if mode not in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
        raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"invalid distribution for variance scaling initializer: "
                         f"{distribution}")

    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        shape = _shape(shape)
        # a float or complex dtype, checked first as the sampler would (JAX's ValueError),
        # before the scale is computed in an integer dtype
        dt = float_dtype("variance_scaling", dtype, allow_complex=True)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        denominator = {"fan_in": fan_in, "fan_out": fan_out,
                       "fan_avg": (fan_in + fan_out) / 2,
                       "fan_geo_avg": (fan_in * fan_out) ** 0.5}[mode]
        variance = _scalar(key, scale / denominator, dt)
        complex_ = dt.kind == "c"
        if distribution == "truncated_normal":
            if complex_:
                stddev = fnp.sqrt(variance) / _scalar(key, _COMPLEX_TRUNCATED_STDDEV, dt)
                return _complex_truncated_normal(key, 2.0, shape, dt) * stddev
            stddev = fnp.sqrt(variance) / _scalar(key, _TRUNCATED_STDDEV, dt)
            return random.truncated_normal(key, -2, 2, shape, dt) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dt) * fnp.sqrt(variance)
        if complex_:
            return _complex_uniform(key, shape, dt) * fnp.sqrt(variance)
        return random.uniform(key, shape, dt, -1) * fnp.sqrt(3 * variance)

    return init


def glorot_uniform(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (),
                   dtype: Any = _FLOAT) -> Initializer:
    """Glorot (Xavier) uniform: ``variance_scaling(1.0, "fan_avg", "uniform")``.

    Example:
        >>> glorot_uniform()(random.PRNGKey(1), (2, 2)).shape
        (2, 2)
    """
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)


def glorot_normal(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (),
                  dtype: Any = _FLOAT) -> Initializer:
    """Glorot (Xavier) normal: ``variance_scaling(1.0, "fan_avg", "truncated_normal")``.

    Example:
        >>> glorot_normal()(random.PRNGKey(1), (2, 2)).shape
        (2, 2)
    """
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def lecun_uniform(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (),
                  dtype: Any = _FLOAT) -> Initializer:
    """LeCun uniform: ``variance_scaling(1.0, "fan_in", "uniform")``.

    Example:
        >>> lecun_uniform()(random.PRNGKey(1), (2, 2)).shape
        (2, 2)
    """
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def lecun_normal(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (),
                 dtype: Any = _FLOAT) -> Initializer:
    """LeCun normal: ``variance_scaling(1.0, "fan_in", "truncated_normal")``.

    Example:
        >>> lecun_normal()(random.PRNGKey(1), (2, 2)).shape
        (2, 2)
    """
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def he_uniform(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (),
               dtype: Any = _FLOAT) -> Initializer:
    """He (Kaiming) uniform: ``variance_scaling(2.0, "fan_in", "uniform")``.

    Example:
        >>> he_uniform()(random.PRNGKey(1), (2, 2)).shape
        (2, 2)
    """
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def he_normal(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (),
              dtype: Any = _FLOAT) -> Initializer:
    """He (Kaiming) normal: ``variance_scaling(2.0, "fan_in", "truncated_normal")``.

    Example:
        >>> he_normal()(random.PRNGKey(1), (2, 2)).shape
        (2, 2)
    """
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


def orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = _FLOAT) -> Initializer:
    """A (scaled) uniformly random orthogonal matrix, reshaped so that ``column_axis`` holds
    the columns (``jax.nn.initializers.orthogonal``).

    Example:
        >>> q = orthogonal()(random.PRNGKey(0), (3, 3))
        >>> bool(numpy.allclose(q.T @ q, numpy.eye(3)))
        True
    """
    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        shape = _shape(shape)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        matrix_shape = (n_cols, n_rows) if n_rows < n_cols else (n_rows, n_cols)
        a = random.normal(key, matrix_shape, dtype)
        q, r = fnp.linalg.qr(a)
        q = q * fnp.sign(fnp.diag(r))  # the sign fix makes the distribution uniform
        if n_rows < n_cols:
            q = q.T
        q = fnp.reshape(q, tuple(numpy.delete(shape, column_axis)) + (n_cols,))
        return scale * fnp.moveaxis(q, -1, column_axis)
    return init


def delta_orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = _FLOAT
                     ) -> Initializer:
    """For convolution kernels ``(*spatial, in, out)`` (1 to 3 spatial axes): zeros except an
    orthogonal matrix at the spatial centre (``jax.nn.initializers.delta_orthogonal``).

    Example:
        >>> w = delta_orthogonal()(random.PRNGKey(0), (3, 3, 2, 2))
        >>> float(abs(w[0, 0]).sum()), w[1, 1].shape
        (0.0, (2, 2))
    """
    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        shape = _shape(shape)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(
            key, shape[-2:])
        centre = tuple(d // 2 for d in shape[:-2])
        return fnp.at(fnp.zeros(shape, dtype, device=_device(key)))[centre].set(ortho)
    return init
