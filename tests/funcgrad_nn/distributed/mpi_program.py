"""Run by tests/funcgrad_nn/distributed/test_mpi.py under `mpiexec -n 2`.

``python mpi_program.py OUTDIR train``: DDP training, no_sync accumulation, SyncBatchNorm,
collectives and the torch.distributed-style calls (object collectives included); each rank
writes OUTDIR/rank{r}.npz.
``python mpi_program.py OUTDIR hung_peer``: rank 1 never joins a collective; rank 0 must
raise DistributedTimeoutError within the timeout and write OUTDIR/rank0.txt with the message.
``python mpi_program.py OUTDIR exit_early``: rank 1 exits before a collective; mpiexec ends the
job with an error instead of leaving rank 0 waiting.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

import funcgrad
import funcgrad_nn as nn
from funcgrad import lax
from funcgrad.distributed import DistributedTimeoutError, spmd


def model_and_data():
    nn.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.BatchNorm1d(8), nn.Tanh(), nn.Linear(8, 1))
    model = model.double()
    rng = np.random.default_rng(42)
    x = rng.normal(size=(16, 3))
    y = rng.normal(size=(16, 1))
    return model, x, y


def loss_fn(m, x, y):
    return ((m(x) - y) ** 2).mean()


def train(out: str) -> None:
    nn.distributed.init(timeout=60)
    rank, size = nn.distributed.get_rank(), nn.distributed.get_world_size()
    results = {}
    # 1. DDP steps on per-rank batches (with SyncBatchNorm: same as one process on all data)
    model, x, y = model_and_data()
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    if rank == 1:  # rank 0's parameters must win at construction
        for p in model.parameters():
            p[...] = 123.0
    ddp = nn.distributed.DistributedDataParallel(model)
    opt = nn.optim.SGD(ddp.parameters(), lr=0.1)
    step = nn.jit(nn.value_and_grad(loss_fn))
    per = x.shape[0] // size
    xs, ys = x[rank * per:(rank + 1) * per], y[rank * per:(rank + 1) * per]
    for _ in range(5):
        _, g = step(ddp, xs, ys)
        opt.step(g)
    results["ddp_params"] = np.concatenate([np.ravel(p) for p in ddp.parameters()])
    results["ddp_running_mean"] = np.asarray(model[1].running_mean)
    # 2. no_sync accumulation over two micro-batches, averaged once
    model2, _, _ = model_and_data()
    ddp2 = nn.distributed.DistributedDataParallel(model2)
    half = per // 2
    with ddp2.no_sync():
        g1 = nn.grad(loss_fn)(ddp2, xs[:half], ys[:half])
        g2 = nn.grad(loss_fn)(ddp2, xs[half:], ys[half:])
    total = funcgrad.tree_util.tree_map(lambda a, b: (a + b) / 2, g1, g2)
    avg = ddp2.reduce_gradients(total)
    results["accumulated_grad"] = np.concatenate(
        [np.ravel(v) for v in funcgrad.tree_util.tree_leaves(avg)])
    # 3. collectives in user code, eager and jitted, and their derivatives
    f = spmd(lambda v: lax.all_gather(v * (lax.axis_index("p") + 1.0), "p"), "p")
    results["all_gather"] = f(np.arange(3.0))
    g = spmd(funcgrad.jit(funcgrad.grad(lambda v: (v / lax.psum(v, "p")).sum() ** 2)), "p")
    results["grad_psum"] = g(np.arange(1.0, 4.0) * (rank + 1))
    a2a = spmd(lambda v: lax.all_to_all(v, "p", 0, 0), "p")
    results["all_to_all"] = a2a(np.arange(4.0).reshape(2, 2) + 10 * rank)
    # 4. torch.distributed-style in-place calls
    buf = np.full(2, float(rank + 1))
    nn.distributed.all_reduce(buf, nn.distributed.ReduceOp.SUM)
    results["all_reduce"] = buf
    bc = np.full(2, float(rank + 5))
    nn.distributed.broadcast(bc, src=1)
    results["broadcast"] = bc
    gathered = [np.zeros(1) for _ in range(size)]
    nn.distributed.all_gather(gathered, np.array([float(rank)]))
    results["gathered"] = np.concatenate(gathered)
    nn.distributed.barrier()
    # 5. the gathered reductions and rooted/object collectives over real MPI
    ints = np.array([rank + 2, 5 + 3 * rank, 6])
    nn.distributed.all_reduce(ints, nn.distributed.ReduceOp.BXOR)
    results["bxor"] = ints
    sc = np.zeros(2)
    nn.distributed.scatter(sc, [np.array([1.0, 2]), np.array([3.0, 4])] if rank == 1 else None,
                           src=1)
    results["scatter"] = sc
    objs = [None] * size
    nn.distributed.all_gather_object(objs, {"rank": rank, "pad": "x" * (100 * rank)})
    results["object_pads"] = np.array([len(o["pad"]) for o in objs])
    sent = ["run-name", rank] if rank == 1 else [None, None]
    nn.distributed.broadcast_object_list(sent, src=1)
    results["broadcast_object"] = np.array([sent[0] == "run-name", sent[1]])
    np.savez(os.path.join(out, f"rank{rank}.npz"), **results)


def hung_peer(out: str) -> None:
    nn.distributed.init(timeout=3)
    rank = nn.distributed.get_rank()
    nn.distributed.barrier()
    if rank == 1:
        time.sleep(120)  # never reaches the collective (stuck, or on another code path)
        return
    try:
        nn.distributed.all_reduce(np.ones(2))
    except DistributedTimeoutError as e:
        with open(os.path.join(out, "rank0.txt"), "w") as fh:
            fh.write(str(e))
        raise


def exit_early(out: str) -> None:
    nn.distributed.init(timeout=60)
    if nn.distributed.get_rank() == 1:
        os._exit(3)  # dies without a word, as a crashed process would
    nn.distributed.all_reduce(np.ones(2))


if __name__ == "__main__":
    {"train": train, "hung_peer": hung_peer, "exit_early": exit_early}[sys.argv[2]](sys.argv[1])
