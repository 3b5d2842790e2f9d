"""Sequence layers: forward + backward per batch, funcgrad_nn eager and jit vs torch eager.

    python benchmarks/bench_nn_seq.py                 # every case, each in a fresh process
    python benchmarks/bench_nn_seq.py --case lstm:jit # one case, in this process (JSON)
    python benchmarks/bench_nn_seq.py --repeat 3      # three full rounds, medians
    python benchmarks/bench_nn_seq.py --clock cpu     # process CPU time, for a busy machine

Workloads (float32, one thread for BLAS, OpenMP and torch):
- ``lstm``: 2-layer ``nn.LSTM`` (input 128, hidden 128), T = 50, batch 32; loss =
  sum(output * cotangent); value and gradients of every parameter.
- ``transformer``: 2-layer ``nn.TransformerEncoder`` (d_model 128, 4 heads, feed-forward
  512, dropout 0, batch_first), sequence 64, batch 16; same loss.

Variants: ``eager`` (``nn.value_and_grad``), ``jit`` (``nn.jit(nn.value_and_grad)``),
``torch`` (the same model in torch eager, ``loss.backward()``, when torch is importable).
Each (workload, variant) runs in a fresh process; the table reports medians and the ratio
to torch. Both frameworks start from the same weights (torch's state_dict loaded into
funcgrad_nn). Tests never assert timings.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import time_callable  # noqa: E402

WORKLOADS = ("lstm", "transformer")
VARIANTS = ("eager", "jit", "torch")


def _torch_model(workload):
    import torch

    torch.manual_seed(0)
    torch.set_num_threads(1)
    if workload == "lstm":
        model = torch.nn.LSTM(128, 128, num_layers=2)
        x = np.random.default_rng(0).standard_normal((50, 32, 128)).astype(np.float32)
    else:
        layer = torch.nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0, batch_first=True)
        model = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        x = np.random.default_rng(0).standard_normal((16, 64, 128)).astype(np.float32)
    return model, x


def _setup(workload, variant):
    rng = np.random.default_rng(1)
    try:
        tmodel, x = _torch_model(workload)
        state = {k: v.detach().numpy() for k, v in tmodel.state_dict().items()}
    except ImportError:
        if variant == "torch":
            raise
        tmodel, state = None, None
        x = rng.standard_normal((50, 32, 128) if workload == "lstm" else (16, 64, 128))
        x = x.astype(np.float32)
    if variant == "torch":
        import torch

        tx = torch.tensor(x)
        out = tmodel(tx)
        cot = torch.tensor(rng.standard_normal(tuple((out[0] if workload == "lstm"
                                                      else out).shape)).astype(np.float32))

        def run():
            tmodel.zero_grad()
            o = tmodel(tx)
            o = o[0] if workload == "lstm" else o
            loss = (o * cot).sum()
            loss.backward()
            return loss
        return run

    import funcgrad_nn as nn

    nn.manual_seed(0)
    if workload == "lstm":
        model = nn.LSTM(128, 128, num_layers=2)
    else:
        layer = nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0, batch_first=True)
        model = nn.TransformerEncoder(layer, 2)
    if state is not None:
        model.load_state_dict(state)
    out = model(x)
    out = out[0] if workload == "lstm" else out
    cot = rng.standard_normal(out.shape).astype(np.float32)

    def loss(m):
        o = m(x)
        o = o[0] if workload == "lstm" else o
        return (o * cot).sum()

    step = nn.value_and_grad(loss)
    if variant == "jit":
        step = nn.jit(step)
    return lambda: step(model)


#: for the runner (run_all.py): (funcgrad_nn, torch eager) pairs, torch the baseline
BASELINE = "torch"
CASES = {f"{w}_{v}": (lambda w=w, v=v: (_setup(w, v), _setup(w, "torch")))
         for w in WORKLOADS for v in ("eager", "jit")}


def _cpu_time(fn, rounds=7, calls=3):
    """Median process CPU seconds per call: on a crowded machine, wall-clock time counts the
    neighbours' work too; CPU time counts (mostly) ours."""
    for _ in range(2):
        fn()
    times = []
    for _ in range(rounds):
        t = time.process_time()
        for _ in range(calls):
            fn()
        times.append((time.process_time() - t) / calls)
    return statistics.median(times)


def run_case(name, clock="wall"):
    workload, variant = name.split(":")
    fn = _setup(workload, variant)
    if clock == "cpu":
        return {"case": name, "seconds": _cpu_time(fn)}
    return {"case": name, "seconds": min(time_callable(fn, rounds=5, min_time=0.5)
                                         for _ in range(2))}


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", help="run WORKLOAD:VARIANT in this process, print JSON")
    parser.add_argument("--repeat", type=int, default=1, help="full rounds (fresh processes)")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall-clock medians (harness) or process CPU time")
    args = parser.parse_args(argv)
    if args.case:
        print(json.dumps(run_case(args.case, args.clock)))
        return
    times: dict[str, list[float]] = {}
    for _ in range(args.repeat):
        for w in WORKLOADS:
            for v in VARIANTS:
                name = f"{w}:{v}"
                proc = subprocess.run([sys.executable, __file__, "--case", name, "--clock",
                                       args.clock], capture_output=True, text=True)
                if proc.returncode != 0:
                    print(f"{name}: failed\n{proc.stderr.strip().splitlines()[-1]}")
                    continue
                times.setdefault(name, []).append(json.loads(proc.stdout)["seconds"])
    print(f"{'case':24s} {'median':>10s} {'vs torch':>9s}  runs (ms)")
    for w in WORKLOADS:
        ref = times.get(f"{w}:torch")
        for v in VARIANTS:
            name = f"{w}:{v}"
            if name not in times:
                continue
            med = statistics.median(times[name])
            ratio = f"{med / statistics.median(ref):9.2f}" if ref else f"{'-':>9s}"
            runs = ", ".join(f"{t * 1e3:.1f}" for t in times[name])
            print(f"{name:24s} {med * 1e3:8.2f}ms {ratio}  [{runs}]")


if __name__ == "__main__":
    main()
