"""``torch.nn.parallel``: :class:`DataParallel` and the name of
:class:`funcgrad_nn.distributed.DistributedDataParallel`.

Example:
    >>> import funcgrad_nn as nn
    >>> nn.parallel.DistributedDataParallel is nn.distributed.DistributedDataParallel
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from funcgrad_nn.distributed import DistributedDataParallel
from funcgrad_nn.module import Module

__all__ = ["DataParallel", "DistributedDataParallel"]


class DataParallel(Module):
    """``torch.nn.DataParallel``: the wrapped model under the name ``module`` (state-dict
    keys ``module.*``, as PyTorch's), called on the model's own device.

    PyTorch splits each batch over its GPUs, runs a replica on each and concatenates the
    outputs along ``dim``: the outputs and gradients are those of the module on the whole
    batch (except BatchNorm's statistics, which PyTorch takes per GPU), which is what this
    wrapper computes in one call, so a script written for ``DataParallel`` runs unchanged.
    For several processes use :class:`DistributedDataParallel`.

    Example:
        >>> import numpy as np, funcgrad_nn as nn
        >>> dp = nn.DataParallel(nn.Linear(2, 1))
        >>> sorted(dp.state_dict())
        ['module.bias', 'module.weight']
        >>> dp(np.ones((3, 2), np.float32)).shape
        (3, 1)
    """

    def __init__(self, module: Module, device_ids: Sequence[Any] | None = None,
                 output_device: Any = None, dim: int = 0) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel wraps a funcgrad_nn Module, got "
                            f"{type(module).__name__}")
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)
