"""Optimizer steps and training steps against PyTorch eager (CPU, one thread), same run.

    python benchmarks/bench_optim.py                 # every case, each in a fresh process
    python benchmarks/bench_optim.py --case adam_step_mlp   # one case, in-process (JSON)

Model: the MLP 784-512-512-10 (float32, ~670k parameters), batch 128, cross-entropy.
``*_step_mlp`` cases time ``optimizer.step`` alone with fixed gradients; ``train_*`` cases
time forward + backward + Adam. Timed in CPU time (``process_time``), ours and torch's
interleaved round by round so that a busy neighbour slows both alike: the ratio of the best
rounds, and the median and interquartile range of the per-round ratios (funcgrad / torch,
lower is better). Needs torch; without it the cases are skipped. ``python -m benchmarks``
runs the same cases with its own (wall-clock) harness.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]

import harness  # noqa: E402

SIZES, BATCH = (784, 512, 512, 10), 128


def _data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    y = rng.integers(0, SIZES[-1], BATCH)
    return x, y


def _ours_model():
    import funcgrad_nn as nn

    nn.manual_seed(0)
    layers = []
    for i, (a, b) in enumerate(zip(SIZES[:-1], SIZES[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(SIZES) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def _torch_model():
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(0)
    layers = []
    for i, (a, b) in enumerate(zip(SIZES[:-1], SIZES[1:])):
        layers.append(torch.nn.Linear(a, b))
        if i < len(SIZES) - 2:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def _step_only(ours_cls, torch_cls, **kw):
    def setup():
        import torch

        from funcgrad_nn import optim

        model, tmodel = _ours_model(), _torch_model()
        rng = np.random.default_rng(1)
        grads = [rng.standard_normal(p.shape).astype(np.float32) * 1e-3
                 for p in model.parameters()]
        opt = getattr(optim, ours_cls)(model.parameters(), **kw)
        for p, g in zip(tmodel.parameters(), grads):
            p.grad = torch.from_numpy(g.copy())
        topt = getattr(torch.optim, torch_cls)(tmodel.parameters(), **kw)
        with torch.no_grad():
            return (lambda: opt.step(grads)), topt.step

    return setup


def _train(jitted: bool):
    def setup():
        import torch

        import funcgrad_nn as nn
        from funcgrad_nn import optim

        x, y = _data()
        model = _ours_model()
        opt = optim.Adam(model.parameters(), lr=1e-3)
        vg = nn.value_and_grad(lambda m, x, y: nn.F.cross_entropy(m(x), y))
        if jitted:
            vg = nn.jit(vg)

        def ours():
            loss, g = vg(model, x, y)
            opt.step(g)

        tmodel = _torch_model()
        topt = torch.optim.Adam(tmodel.parameters(), lr=1e-3)
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)

        def theirs():
            topt.zero_grad()
            loss = torch.nn.functional.cross_entropy(tmodel(tx), ty)
            loss.backward()
            topt.step()

        return ours, theirs

    return setup


#: the second callable of each case is torch eager (for the runner, run_all.py)
BASELINE = "torch"

CASES = {
    "adam_step_mlp": _step_only("Adam", "Adam", lr=1e-3),
    "adamw_amsgrad_step_mlp": _step_only("AdamW", "AdamW", lr=1e-3, amsgrad=True),
    "sgd_momentum_step_mlp": _step_only("SGD", "SGD", lr=1e-2, momentum=0.9),
    "sgd_step_mlp": _step_only("SGD", "SGD", lr=1e-2),
    "rmsprop_step_mlp": _step_only("RMSprop", "RMSprop", lr=1e-3),
    "train_eager_adam_mlp": _train(False),
    "train_jit_adam_mlp": _train(True),
}


def measure(name: str, rounds: int = 15, per_round: int = 5) -> dict:
    """CPU time per call, ours and torch's interleaved round by round; the best rounds and
    the per-round ratios' median and interquartile range."""
    r = harness.interleaved_cpu(*CASES[name](), rounds=rounds, per_round=per_round)
    return {"case": name, "funcgrad_s": r["ours_s"], "torch_s": r["theirs_s"],
            "ratio": r["ratio"], "ratio_median": r["ratio_median"],
            "ratio_lo": r["ratio_lo"], "ratio_hi": r["ratio_hi"]}


def _fmt(s: float) -> str:
    return f"{s * 1e6:9.1f} us" if s < 1e-3 else f"{s * 1e3:9.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--case")
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    try:
        import torch  # noqa: F401
    except ImportError:
        print("torch is not installed: nothing to compare against")
        return
    if args.case:
        print(json.dumps(measure(args.case)))
        return
    print(f"load average {os.getloadavg()[0]:.1f}; CPU time, best of 15 interleaved rounds")
    print(f"{'case':28s} {'funcgrad':>12s} {'torch':>12s} {'ratio':>7s} "
          "(median of per-round ratios, interquartile range)")
    for name in args.only or list(CASES):
        out = subprocess.run([sys.executable, __file__, "--case", name], capture_output=True,
                             text=True, check=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        print(f"{name:28s} {_fmt(r['funcgrad_s'])} {_fmt(r['torch_s'])} {r['ratio']:7.2f} "
              f"({r['ratio_median']:.2f}, {r['ratio_lo']:.2f}-{r['ratio_hi']:.2f})")


if __name__ == "__main__":
    main()
