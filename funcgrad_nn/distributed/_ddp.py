"""``DistributedDataParallel``: gradients that arrive averaged over the processes.

Each process runs the same model on its own batch. The wrapper's forward passes the module's
trainable parameters through an identity whose derivative rule averages the cotangents over
the process axis (flattened into buckets, one allreduce per bucket), so a gradient taken with
``funcgrad_nn.grad``/``value_and_grad`` of a loss of the wrapper is already the mean over
processes -- eagerly and under ``jit`` alike, where the allreduces are part of the compiled
step. At construction rank 0's parameters and buffers are broadcast, so every process starts
from the same model.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy

import funcgrad
from funcgrad import lax, tree_util
from funcgrad.avals import get_aval
from funcgrad.core import lookup_axis
from funcgrad_nn.distributed._group import WORLD
from funcgrad_nn.module import Module, collect_buffer_updates

__all__ = ["DistributedDataParallel"]


def _buckets(avals: list[Any], cap_bytes: int) -> list[list[int]]:
    """Indices of same-dtype leaves grouped so each group's bytes stay under ``cap_bytes``
    (a leaf bigger than the cap is a bucket of its own). Reverse order, as PyTorch: the last
    layers' gradients are ready first."""
    out: list[list[int]] = []
    open_: dict[Any, tuple[list[int], int]] = {}
    for i in reversed(range(len(avals))):
        a = avals[i]
        nbytes = a.size * a.dtype.itemsize
        idx, used = open_.get(a.dtype, ([], 0))
        if idx and used + nbytes > cap_bytes:
            out.append(idx)
            idx, used = [], 0
        idx.append(i)
        open_[a.dtype] = (idx, used + nbytes)
    out.extend(idx for idx, _ in open_.values() if idx)
    return out


def _averaging_identity(axis_name: Any, cap_bytes: int):
    """x -> x, with cotangents averaged over ``axis_name`` in flattened buckets."""

    @funcgrad.custom_vjp
    def sync(leaves: list[Any]) -> list[Any]:
        return leaves

    def fwd(leaves: list[Any]) -> tuple[list[Any], None]:
        return leaves, None

    def bwd(_: None, cts: list[Any]) -> tuple[list[Any]]:
        fnp = funcgrad.numpy
        n = lax.axis_size(axis_name)
        out: list[Any] = list(cts)
        for idx in _buckets([get_aval(c) for c in cts], cap_bytes):
            flat = fnp.concatenate([fnp.ravel(cts[i]) for i in idx])
            total = lax.psum(flat, axis_name) / n
            start = 0
            for i in idx:
                size = get_aval(cts[i]).size
                out[i] = fnp.reshape(total[start:start + size], get_aval(cts[i]).shape)
                start += size
        return (out,)

    sync.defvjp(fwd, bwd)
    return sync


class DistributedDataParallel(Module):
    """Data-parallel training over processes (``torch.nn.parallel.DistributedDataParallel``).

    Wrap the model after ``funcgrad_nn.distributed.init()``; build the optimizer on
    ``ddp.parameters()`` (the wrapped module's, under names prefixed ``module.``); take
    gradients of a loss of the wrapper with ``funcgrad_nn.grad``/``value_and_grad``: they
    arrive averaged over processes. ``no_sync()`` skips the averaging, for gradient
    accumulation. funcgrad returns gradients instead of accumulating them into ``.grad``, so
    PyTorch's pattern (micro-batches under ``no_sync()``, the last one outside) would average
    only the last micro-batch: take every micro-batch's gradient inside ``no_sync()``, sum
    them, and average the sum once with :meth:`reduce_gradients` (one allreduce, as PyTorch).
    ``axis_name`` may name another bound axis, e.g. a ``vmap`` axis that simulates replicas.

    Example (a world of one process):
        >>> import numpy as np, funcgrad_nn as nn
        >>> from funcgrad.distributed import LocalCommunicator
        >>> nn.distributed.init(comm=LocalCommunicator())
        >>> ddp = nn.distributed.DistributedDataParallel(nn.Linear(2, 1))
        >>> g = nn.grad(lambda m, x: m(x).sum())(ddp, np.ones((4, 2), np.float32))
        >>> g.module.weight.tolist()
        [[4.0, 4.0]]
        >>> nn.distributed.destroy_process_group()
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None,
                 dim: int = 0, broadcast_buffers: bool = True, process_group: Any = None,
                 bucket_cap_mb: float = 25.0, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False,
                 static_graph: bool = False, axis_name: Any = None) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel wraps a funcgrad_nn Module, got "
                            f"{type(module).__name__}")
        if isinstance(module, DistributedDataParallel):
            raise TypeError("DistributedDataParallel: the module is already wrapped")
        if bucket_cap_mb <= 0:
            raise ValueError(f"bucket_cap_mb must be positive, got {bucket_cap_mb}")
        self.module = module
        if axis_name is None:
            axis_name = WORLD if process_group is None else process_group
        self.axis_name = axis_name
        frame = lookup_axis(self.axis_name)
        if frame is None and axis_name == WORLD:
            raise RuntimeError(
                "DistributedDataParallel: the process group is not initialized; call "
                "funcgrad_nn.distributed.init() first and run the script with "
                "`mpiexec -n N python script.py`"
            )
        # Another axis (e.g. a vmap axis simulating replicas) need only be bound when the
        # forward runs; its collectives name it if it is not.
        self.broadcast_buffers = broadcast_buffers
        self.bucket_cap_bytes = int(bucket_cap_mb * 2**20)
        # Part of the pytree's static data: a jitted step retraces when it changes.
        self.require_backward_grad_sync = True
        if frame is not None and frame.comm is not None:
            self._broadcast_from_rank0(frame.comm)

    def _broadcast_from_rank0(self, comm: Any) -> None:
        for _, arr in list(self.module.named_parameters(include_frozen=True)) + \
                list(self.module.named_buffers()):
            if isinstance(arr, numpy.ndarray) or hasattr(arr, "__setitem__"):
                arr[...] = comm.bcast(arr, 0)

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Gradients taken inside the block stay local to this process (not averaged)."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def reduce_gradients(self, grads: Any) -> Any:
        """``grads`` (a gradient pytree, e.g. the sum of micro-batch gradients taken inside
        :meth:`no_sync`) averaged over the processes. Call it outside traced code or inside
        a jitted step alike.
        """
        leaves, treedef = tree_util.tree_flatten(grads)
        n = lax.axis_size(self.axis_name)
        out = []
        for leaf in leaves:
            total = lax.psum(leaf, self.axis_name) / n
            out.append(total)
        return tree_util.tree_unflatten(treedef, out)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        module = self.module
        if not self.require_backward_grad_sync:
            return module(*args, **kwargs)
        leaves, treedef = tree_util.tree_flatten(module)
        trainable = {id(p) for p in module.parameters()}
        picked = [i for i, leaf in enumerate(leaves) if id(leaf) in trainable]
        buffers = {id(b) for _, b in module.named_buffers()}
        if self.broadcast_buffers and self.training:
            # As PyTorch: rank 0's buffers (BatchNorm statistics) at every forward. (Buffers
            # are small; a gather keeps them on their device and dtype.)
            for i, leaf in enumerate(leaves):
                if id(leaf) in buffers:
                    leaves[i] = lax.all_gather(leaf, self.axis_name)[0]
        synced = _averaging_identity(self.axis_name, self.bucket_cap_bytes)(
            [leaves[i] for i in picked])
        for i, v in zip(picked, synced):
            leaves[i] = v
        copy = collect_buffer_updates(tree_util.tree_unflatten(treedef, leaves))
        out = copy(*args, **kwargs)
        _copy_buffers(copy, module)
        return out


def _copy_buffers(src: Module, dst: Module) -> None:
    """Buffer updates the forward made on the copy (running statistics) onto the module."""
    for (path, m_src), (_, m_dst) in zip(src.named_modules(remove_duplicate=False),
                                         dst.named_modules(remove_duplicate=False)):
        del path
        for name, b in m_src._buffers.items():
            if m_dst._buffers.get(name) is not b:
                m_dst._buffers[name] = b
