"""``SyncBatchNorm``: batch statistics over every process's batch."""

from __future__ import annotations

import math
from typing import Any

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core import lookup_axis
from funcgrad_nn import functional as F
from funcgrad_nn.distributed._group import WORLD
from funcgrad_nn.layers.normalization import _BatchNorm
from funcgrad_nn.module import Module

__all__ = ["SyncBatchNorm", "convert_sync_batchnorm"]


def _global_stats(x: Any, axis_name: Any) -> tuple[Any, Any, int]:
    """Mean and biased variance per channel over all members' batches, and the global count.

    Two passes (mean first, then centred squares) for accuracy; both are psums, so the
    statistics differentiate like BatchNorm's on the concatenated batch."""
    axes = (0,) + tuple(range(2, x.ndim))
    local_n = math.prod(x.shape) // x.shape[1]
    n = local_n * lax.axis_size(axis_name)
    mean = lax.psum(fnp.sum(x, axis=axes), axis_name) / n
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    c = x - fnp.reshape(mean, shape)
    var = lax.psum(fnp.sum(c * c, axis=axes), axis_name) / n
    return mean, var, n


class SyncBatchNorm(_BatchNorm):
    """Batch norm whose training statistics are computed over the batches of every process
    (``torch.nn.SyncBatchNorm``); in eval mode, or when no process group is initialized, it
    is ``BatchNorm``. ``process_group`` (or ``axis_name``) names the axis to reduce over:
    the process group by default, or e.g. a ``vmap`` axis.

    Example:
        >>> import numpy as np, funcgrad
        >>> bn = SyncBatchNorm(2, axis_name="r")
        >>> x = np.random.default_rng(0).normal(size=(3, 4, 2)).astype(np.float32)  # 3 x 4
        >>> y = funcgrad.vmap(bn, axis_name="r")(x)
        >>> flat = y.reshape(12, 2)
        >>> np.allclose(flat.mean(0), 0, atol=1e-6), np.allclose(flat.std(0), 1, 1e-3)
        (True, True)
    """

    _ndims = (2, 3, 4, 5)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 process_group: Any = None, device: str | None = None, dtype: Any = None,
                 axis_name: Any = None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        if axis_name is None:
            axis_name = WORLD if process_group is None else process_group
        self.axis_name = axis_name

    def forward(self, input: Any) -> Any:
        if lookup_axis(self.axis_name) is None or not (self.training
                                                       or not self.track_running_stats):
            return super().forward(input)
        name = type(self).__name__
        if input.ndim not in self._ndims or input.shape[1] != self.num_features:
            raise ValueError(f"{name}: expected input of shape (N, {self.num_features}, ...) "
                             f"with 2 to 5 dims, got {tuple(input.shape)}")
        mean, var, n = _global_stats(input, self.axis_name)
        if self.training and n <= 1:
            raise ValueError(f"{name}: expected more than 1 value per channel when training")
        if self.training and self.track_running_stats:
            self._track_batch(mean, var, n)
        return F.batch_norm(input, mean, var, self.weight, self.bias, False, 0.0, self.eps)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """``module`` with every ``BatchNorm*d`` replaced by a ``SyncBatchNorm`` holding the
        same parameters, buffers and settings (in place for submodules; returns the root).

        Example:
            >>> import funcgrad_nn as nn
            >>> m = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
            >>> type(SyncBatchNorm.convert_sync_batchnorm(m)[1]).__name__
            'SyncBatchNorm'
        """
        return convert_sync_batchnorm(module, process_group)


def convert_sync_batchnorm(module: Module, process_group: Any = None) -> Module:
    """See :meth:`SyncBatchNorm.convert_sync_batchnorm`.

    Example:
        >>> import funcgrad_nn as nn
        >>> type(convert_sync_batchnorm(nn.BatchNorm2d(3))).__name__
        'SyncBatchNorm'
    """
    if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
        new = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                            module.track_running_stats, process_group,
                            bias=getattr(module, "bias", None) is not None)
        for reg in ("_parameters", "_buffers"):
            for k, v in getattr(module, reg).items():
                getattr(new, reg)[k] = v
        object.__setattr__(new, "_frozen", set(module._frozen))
        object.__setattr__(new, "training", module.training)
        return new
    for name, child in list(module._modules.items()):
        if child is not None:
            module._modules[name] = convert_sync_batchnorm(child, process_group)
    return module
