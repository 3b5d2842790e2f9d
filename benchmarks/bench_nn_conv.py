"""Convolutional training steps: funcgrad_nn eager and jit against torch eager.

    python benchmarks/bench_nn_conv.py              # every case, each in a fresh process
    python benchmarks/bench_nn_conv.py --case cnn_step_jit

Each case runs in a fresh process, one BLAS/torch thread; funcgrad_nn and torch eager are
timed in the same process in interleaved rounds by CPU time (robust to a loaded machine); the
table shows the best times, their ratio, and the median and interquartile range of the
per-round ratios. torch must be importable (it is the baseline).

Cases:
- ``cnn_step_{eager,jit}``: one SGD training step (forward, backward, parameter update) of a
  small CNN on 8x8 "digits", batch 64: Conv2d(1, 16, 3, padding=1) - ReLU - MaxPool2d(2) -
  Conv2d(16, 32, 3, padding=1) - ReLU - MaxPool2d(2) - Flatten - Linear(128, 10),
  cross-entropy loss, float32.
- ``decoder_{eager,jit}``: forward + backward of a ConvTranspose2d decoder, batch 32:
  Linear(16, 32*4*4) - ReLU - ConvTranspose2d(32, 16, 4, stride=2, padding=1) - ReLU -
  ConvTranspose2d(16, 1, 4, stride=2, padding=1) - Sigmoid, to 16x16 images, MSE loss.
"""

from __future__ import annotations

import os
import sys

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ[_var] = "1"
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402

import harness  # noqa: E402
import numpy as np  # noqa: E402

import funcgrad_nn as nn  # noqa: E402


def _torch():
    import torch
    torch.set_num_threads(1)
    return torch


def _cnn(nn_mod):
    return nn_mod.Sequential(
        nn_mod.Conv2d(1, 16, 3, padding=1), nn_mod.ReLU(), nn_mod.MaxPool2d(2),
        nn_mod.Conv2d(16, 32, 3, padding=1), nn_mod.ReLU(), nn_mod.MaxPool2d(2),
        nn_mod.Flatten(), nn_mod.Linear(128, 10))


def _decoder(nn_mod):
    return nn_mod.Sequential(
        nn_mod.Linear(16, 32 * 4 * 4), nn_mod.ReLU(), nn_mod.Unflatten(1, (32, 4, 4)),
        nn_mod.ConvTranspose2d(32, 16, 4, stride=2, padding=1), nn_mod.ReLU(),
        nn_mod.ConvTranspose2d(16, 1, 4, stride=2, padding=1), nn_mod.Sigmoid())


def _sgd_step(model, loss_fn, jitted, lr=0.01):
    vg = nn.value_and_grad(loss_fn)
    if jitted:
        vg = nn.jit(vg)

    def step(*args):
        loss, grads = vg(model, *args)
        for p, g in zip(model.parameters(), nn.tree_leaves(grads)):
            p -= lr * g
        return loss
    return step


def _torch_step(torch, model, loss_fn, lr=0.01):
    opt = torch.optim.SGD(model.parameters(), lr=lr)

    def step(*args):
        opt.zero_grad()
        loss = loss_fn(model, *args)
        loss.backward()
        opt.step()
        return loss
    return step


def _pair(build, loss, torch_loss, inputs, jitted):
    torch = _torch()
    model = build(nn)
    tmodel = build(torch.nn)
    ours = _sgd_step(model, loss, jitted)
    theirs = _torch_step(torch, tmodel, torch_loss)
    targs = [torch.from_numpy(a) for a in inputs]
    return (lambda: ours(*inputs)), (lambda: theirs(*targs))


def cnn(jitted):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 1, 8, 8)).astype(np.float32)
    y = rng.integers(0, 10, 64)
    torch = _torch()
    return _pair(_cnn, lambda m, x, y: nn.F.cross_entropy(m(x), y),
                 lambda m, x, y: torch.nn.functional.cross_entropy(m(x), y), [x, y], jitted)


def decoder(jitted):
    rng = np.random.default_rng(0)
    z = rng.standard_normal((32, 16)).astype(np.float32)
    t = rng.random((32, 1, 16, 16)).astype(np.float32)
    torch = _torch()
    return _pair(_decoder, lambda m, z, t: nn.F.mse_loss(m(z), t),
                 lambda m, z, t: torch.nn.functional.mse_loss(m(z), t), [z, t], jitted)


#: the second callable of each case is torch eager (for the runner, run_all.py)
BASELINE = "torch"

CASES = {
    "cnn_step_eager": lambda: cnn(False),
    "cnn_step_jit": lambda: cnn(True),
    "decoder_eager": lambda: decoder(False),
    "decoder_jit": lambda: decoder(True),
}



def measure(name: str, rounds: int = 15, per_round: int = 5) -> dict:
    """CPU time (``process_time``) per call, ours and torch's interleaved round by round, so
    a busy neighbour slows both alike; the minimum over rounds, and the per-round ratios'
    median and spread."""
    r = harness.interleaved_cpu(*CASES[name](), rounds=rounds, per_round=per_round)
    return {"case": name, "ours_s": r["ours_s"], "torch_s": r["theirs_s"],
            "ratio_min": r["ratio"], "ratio_median": r["ratio_median"],
            "ratio_lo": r["ratio_lo"], "ratio_hi": r["ratio_hi"]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", help="run one case in this process and print JSON")
    parser.add_argument("--only", nargs="*", help="subset of cases")
    args = parser.parse_args(argv)
    if args.case:
        print(json.dumps(measure(args.case)))
        return
    print(f"{'case':18s} {'funcgrad_nn':>12s} {'torch':>10s} {'ratio':>6s} "
          "(median of per-round ratios, interquartile range)")
    for name in args.only or list(CASES):
        proc = subprocess.run([sys.executable, __file__, "--case", name],
                              capture_output=True, text=True)
        if proc.returncode:
            err = (proc.stderr.strip().splitlines() or ["?"])[-1]
            print(f"{name:18s} FAILED: {err}")
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"{name:18s} {r['ours_s'] * 1e3:9.2f} ms {r['torch_s'] * 1e3:7.2f} ms "
              f"{r['ratio_min']:6.2f} ({r['ratio_median']:.2f}, {r['ratio_lo']:.2f}-"
              f"{r['ratio_hi']:.2f})")


if __name__ == "__main__":
    main()
