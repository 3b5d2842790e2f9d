"""Data-parallel training across processes on MPI, with torch.distributed's names.

Run the script with ``mpiexec -n 4 python train.py`` (``pip install "funcgrad[distributed]"``
brings mpi4py and Open MPI). Three lines turn a single-process script into a data-parallel one::

    import funcgrad_nn as nn
    nn.distributed.init()                                         # 1. join the group
    model = nn.distributed.DistributedDataParallel(model)         # 2. wrap the model
    loader = nn.data.DataLoader(ds, batch_size=32,                # 3. shard the data
                                sampler=nn.data.DistributedSampler(ds))

Gradients of the wrapped model, taken with ``nn.grad``/``nn.value_and_grad``, arrive averaged
over processes. ``SyncBatchNorm`` computes batch statistics over every process's batch. The
collectives (``funcgrad.lax.psum`` & co over :data:`WORLD`) also work inside your own traced
code; see docs/distributed.md.
"""

from __future__ import annotations

from funcgrad.distributed import DistributedTimeoutError
from funcgrad_nn.distributed._ddp import DistributedDataParallel
from funcgrad_nn.distributed._group import (
    WORLD,
    ReduceOp,
    Work,
    all_gather,
    all_gather_into_tensor,
    all_gather_object,
    all_reduce,
    all_to_all,
    barrier,
    broadcast,
    broadcast_object_list,
    destroy_process_group,
    gather,
    gather_object,
    get_backend,
    get_local_rank,
    get_rank,
    get_world_size,
    init,
    init_process_group,
    is_available,
    is_initialized,
    is_main_process,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
    scatter_object_list,
)
from funcgrad_nn.distributed._rank_zero import print0, rank_zero_only, save_on_main
from funcgrad_nn.distributed._sync_batchnorm import SyncBatchNorm, convert_sync_batchnorm

__all__ = [
    "WORLD",
    "ReduceOp",
    "init",
    "init_process_group",
    "destroy_process_group",
    "is_initialized",
    "is_available",
    "get_rank",
    "get_world_size",
    "get_local_rank",
    "get_backend",
    "all_reduce",
    "broadcast",
    "all_gather",
    "barrier",
    "reduce",
    "gather",
    "scatter",
    "all_to_all",
    "reduce_scatter",
    "all_gather_into_tensor",
    "reduce_scatter_tensor",
    "all_gather_object",
    "broadcast_object_list",
    "gather_object",
    "scatter_object_list",
    "Work",
    "is_main_process",
    "DistributedDataParallel",
    "SyncBatchNorm",
    "convert_sync_batchnorm",
    "DistributedTimeoutError",
    "rank_zero_only",
    "print0",
    "save_on_main",
]
