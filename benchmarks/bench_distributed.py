"""Distributed benchmarks on MPI, in one run.

1. allreduce throughput against message size: ``funcgrad.lax.psum`` under ``spmd`` (what a
   training step calls, through the timeout-guarded communicator) against a hand-written
   blocking ``mpi4py`` ``Allreduce`` on the same buffers, on 2 processes.
2. training throughput (samples/s over all processes) of a small CNN on 8x8 images, a jitted
   DistributedDataParallel step with batch 64 per process, on 1 and 2 processes.

    python benchmarks/bench_distributed.py            # prints both tables
    python benchmarks/bench_distributed.py --quick    # fewer sizes and steps

Each part runs in fresh processes under ``mpiexec`` with BLAS pinned to one thread. On a
2-core machine two processes share the cores with everything else running: read the ratios,
not the absolute numbers.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import pathlib  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _median_time(fn, comm, rounds: int) -> tuple[float, float]:
    """(median, spread = max - min) seconds per call over ``rounds``, all ranks in step."""
    for _ in range(3):
        fn()
    times = []
    for _ in range(rounds):
        comm.Barrier()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), max(times) - min(times)


def worker_allreduce(quick: bool) -> None:
    import numpy as np
    from mpi4py import MPI

    from funcgrad import lax
    from funcgrad.distributed import spmd

    comm = MPI.COMM_WORLD
    sizes = [10**k for k in (range(2, 7) if quick else range(2, 8))]
    rows = []
    psum = spmd(lambda v: lax.psum(v, "dp"), "dp")
    for n in sizes:
        x = np.random.default_rng(comm.rank).normal(size=n).astype(np.float32)
        out = np.empty_like(x)
        rounds = 5 if n >= 10**6 else 20
        t_ours, s_ours = _median_time(lambda x=x: psum(x), comm, rounds)
        t_base, s_base = _median_time(lambda x=x, out=out: comm.Allreduce(x, out, op=MPI.SUM),
                                      comm, rounds)
        rows.append(dict(n=n, bytes=4 * n, ours=t_ours, ours_spread=s_ours, mpi=t_base,
                         mpi_spread=s_base))
    if comm.rank == 0:
        print(json.dumps(rows))


def worker_train(quick: bool) -> None:
    import numpy as np

    import funcgrad_nn as nn

    nn.distributed.init()
    rank, size = nn.distributed.get_rank(), nn.distributed.get_world_size()
    nn.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.Flatten(),
                          nn.Linear(32 * 16, 10))
    ddp = nn.distributed.DistributedDataParallel(model)
    opt = nn.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    rng = np.random.default_rng(rank)
    batch = 64
    x = rng.normal(size=(batch, 1, 8, 8)).astype(np.float32)
    y = rng.integers(0, 10, size=batch)
    step = nn.jit(nn.value_and_grad(lambda m, a, b: nn.functional.cross_entropy(m(a), b)))

    def one():
        _, g = step(ddp, x, y)
        opt.step(g)

    from mpi4py import MPI

    steps = 10 if quick else 30
    t, spread = _median_time(lambda: [one() for _ in range(steps)], MPI.COMM_WORLD, 3)
    if rank == 0:
        print(json.dumps(dict(processes=size, samples_per_s=size * batch * steps / t,
                              step_ms=1e3 * t / steps, spread_ms=1e3 * spread / steps)))


def _launch(n: int, part: str, quick: bool) -> str:
    mpiexec = shutil.which("mpiexec")
    if mpiexec is None:
        sys.exit('mpiexec not found: pip install "funcgrad[distributed]"')
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = [mpiexec, "-n", str(n), "--oversubscribe", sys.executable, __file__, "--worker", part]
    proc = subprocess.run(cmd + (["--quick"] if quick else []), env=env, capture_output=True,
                          text=True, check=True)
    return proc.stdout.strip().splitlines()[-1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", choices=["allreduce", "train"])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if args.worker == "allreduce":
        return worker_allreduce(args.quick)
    if args.worker == "train":
        return worker_train(args.quick)
    rows = json.loads(_launch(2, "allreduce", args.quick))
    print("allreduce on 2 processes (float32): lax.psum under spmd vs blocking mpi4py Allreduce")
    print(f"{'bytes':>10} {'psum':>12} {'mpi4py':>12} {'ratio':>6} {'psum GB/s':>10}")
    for r in rows:
        print(f"{r['bytes']:>10} {r['ours'] * 1e6:>10.1f}us {r['mpi'] * 1e6:>10.1f}us "
              f"{r['ours'] / r['mpi']:>6.2f} {r['bytes'] / r['ours'] / 1e9:>10.3f}")
    print("\nsmall CNN (8x8 inputs), jitted DDP step, batch 64 per process")
    for n in (1, 2):
        r = json.loads(_launch(n, "train", args.quick))
        print(f"{n} process(es): {r['samples_per_s']:8.0f} samples/s   "
              f"{r['step_ms']:.2f} ms/step (spread {r['spread_ms']:.2f})")


if __name__ == "__main__":
    main()
