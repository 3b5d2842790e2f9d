"""LayerNorm and BatchNorm1d/2d (running statistics as buffers)."""

from __future__ import annotations

import math
from typing import Any

import numpy

import funcgrad
from funcgrad_nn import functional as F
from funcgrad_nn import init
from funcgrad_nn.layers._util import empty, place
from funcgrad_nn.module import Module, Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "GroupNorm", "LayerNorm"]


class LayerNorm(Module):
    """Normalise the trailing ``normalized_shape`` dims; affine ``weight``/``bias`` (ones /
    zeros) when ``elementwise_affine``.

    >>> import numpy as np
    >>> ln = LayerNorm(2)
    >>> np.round(ln(np.array([[1.0, 3.0]], np.float32)), 3)
    array([[-1.,  1.]], dtype=float32)
    """

    def __init__(self, normalized_shape: int | tuple[int, ...], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True,
                 device: str | None = None, dtype: Any = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(init.ones_(empty(self.normalized_shape, dtype)))
            if bias:
                self.bias = Parameter(empty(self.normalized_shape, dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        place(self, device)

    def forward(self, input: Any) -> Any:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class _BatchNorm(Module):
    _ndims: tuple[int, ...] = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 device: str | None = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(init.ones_(empty((num_features,), dtype)))
            self.bias = Parameter(empty((num_features,), dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", empty((num_features,), dtype))
            self.register_buffer("running_var", init.ones_(empty((num_features,), dtype)))
            self.register_buffer("num_batches_tracked", numpy.zeros((), numpy.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        place(self, device)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            self.num_batches_tracked = numpy.zeros((), numpy.int64)

    def forward(self, input: Any) -> Any:
        name = type(self).__name__
        if input.ndim not in self._ndims:
            raise ValueError(f"{name}: expected {' or '.join(f'{d}D' for d in self._ndims)} "
                             f"input, got shape {tuple(input.shape)}")
        if input.shape[1] != self.num_features:
            raise ValueError(f"{name}: expected {self.num_features} channels (dim 1), got "
                             f"input shape {tuple(input.shape)}")
        use_batch = self.training or not self.track_running_stats
        if not use_batch:
            return F.batch_norm(input, self.running_mean, self.running_var, self.weight,
                                self.bias, False, 0.0, self.eps)
        n = math.prod(input.shape) // input.shape[1]
        if self.training and n <= 1:
            raise ValueError(f"{name}: expected more than 1 value per channel when training, "
                             f"got input shape {tuple(input.shape)}")
        if self.training and self.track_running_stats:
            self.num_batches_tracked = self.num_batches_tracked + 1
            factor: Any = self.momentum
            if factor is None:  # cumulative moving average
                factor = 1.0 / self.num_batches_tracked.astype(self.running_mean.dtype)
            mean, var = F._batch_stats(funcgrad.stop_gradient(input))
            rm, rv = self.running_mean, self.running_var
            # running_var tracks the unbiased batch variance, as in PyTorch.
            self.running_mean = (1 - factor) * rm + factor * mean.astype(rm.dtype)
            self.running_var = (1 - factor) * rv + factor * (var * (n / (n - 1))).astype(
                rv.dtype)
        return F.batch_norm(input, None, None, self.weight, self.bias, True, 0.0, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch norm over ``(N, C)`` or ``(N, C, L)`` inputs; in training mode normalises with
    the batch statistics and updates the ``running_mean``/``running_var`` buffers
    (momentum-weighted, unbiased variance; ``momentum=None``: cumulative average); in eval
    mode uses them.

    >>> import numpy as np
    >>> bn = BatchNorm1d(1)
    >>> np.round(bn(np.array([[1.0], [3.0]], np.float32)), 3).ravel()
    array([-1.,  1.], dtype=float32)
    >>> bn.running_mean, bn.running_var, int(bn.num_batches_tracked)
    (array([0.2], dtype=float32), array([1.1], dtype=float32), 1)
    """

    _ndims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm over ``(N, C, H, W)`` inputs (see :class:`BatchNorm1d`).

    >>> import numpy as np
    >>> BatchNorm2d(3)(np.random.default_rng(0).normal(size=(2, 3, 4, 4))).shape
    (2, 3, 4, 4)
    """

    _ndims = (4,)


class GroupNorm(Module):
    """Normalise ``(N, C, ...)`` over groups of ``num_channels // num_groups`` channels and
    the spatial axes; per-channel affine ``weight``/``bias`` (ones / zeros) when ``affine``.

    >>> import numpy as np
    >>> gn = GroupNorm(2, 4)
    >>> np.round(gn(np.array([[1.0, 3.0, 0.0, 2.0]], np.float32)), 3)
    array([[-1.,  1., -1.,  1.]], dtype=float32)
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device: str | None = None, dtype: Any = None) -> None:
        super().__init__()
        if num_groups <= 0 or num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by "
                             f"num_groups ({num_groups})")
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        if affine:
            self.weight = Parameter(init.ones_(empty((num_channels,), dtype)))
            self.bias = Parameter(empty((num_channels,), dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        place(self, device)

    def forward(self, input: Any) -> Any:
        if input.ndim < 2 or input.shape[1] != self.num_channels:
            raise ValueError(f"GroupNorm: expected input (N, {self.num_channels}, ...), got "
                             f"shape {tuple(input.shape)}")
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"
