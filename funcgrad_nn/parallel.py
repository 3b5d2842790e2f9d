"""``torch.nn.parallel``'s name for :class:`funcgrad_nn.distributed.DistributedDataParallel`.

Example:
    >>> import funcgrad_nn as nn
    >>> nn.parallel.DistributedDataParallel is nn.distributed.DistributedDataParallel
    True
"""

from __future__ import annotations

from funcgrad_nn.distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
