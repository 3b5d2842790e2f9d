"""Eager autodiff overhead against hand-written NumPy (tracker issue "Differentiation").

    python benchmarks/bench_autodiff.py            # every case, each in a fresh process
    python benchmarks/bench_autodiff.py --case mlp_b128_f32
    python benchmarks/bench_autodiff.py --interleaved   # CPU-time ratios, alternating rounds
    python benchmarks/bench_autodiff.py --hvp-baselines # other hand-written NumPy HVPs

Cases:
- ``chain100_grad``: grad of a 100-op elementwise chain on 16-element arrays: pure
  per-operation overhead.
- ``mlp_b128_{f32,f64}``: value-and-grad of an MLP 784-512-512-10 (tanh, softmax
  cross-entropy), batch 128, against a hand-written forward + backward.
- ``mlp_small_b32_f64``: the same for an MLP 32-64-64-10, batch 32: mostly per-op overhead.
- ``hvp_rosenbrock_1e4_{fwd_rev,rev_rev}``: Hessian-vector product of the Rosenbrock function
  at n = 10^4, forward-over-reverse ``jvp(grad)`` and reverse-over-reverse
  ``grad(vdot(grad, v))``, against the hand-written directional derivative of the gradient.

``--interleaved`` (for a machine shared with other jobs): each case in a fresh process times
funcgrad and NumPy in alternating rounds of CPU time (``time.process_time``, ~0.05 s each)
and prints the median of the per-round ratios with their range, so a neighbour's burst
colours both sides of a ratio alike.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
# The harness, and the checkout's funcgrad when it is not installed.
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]

from harness import main  # noqa: E402  (pins BLAS threads before numpy loads)

# isort: split
import numpy as np  # noqa: E402
import workloads  # noqa: E402

CASES = {
    "chain100_grad": workloads.chain100,
    "mlp_b128_f32": lambda: workloads.mlp(np.float32),
    "mlp_b128_f64": lambda: workloads.mlp(np.float64),
    "mlp_small_b32_f64": lambda: workloads.mlp(np.float64, sizes=(32, 64, 64, 10), batch=32),
    "hvp_rosenbrock_1e4_fwd_rev": workloads.hvp_rosenbrock,
    "hvp_rosenbrock_1e4_rev_rev": lambda: workloads.hvp_rosenbrock(reverse_over_reverse=True),
}


def _cpu_per_call(fn, n: int) -> float:
    t = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - t) / n


def _repeats(fn, budget: float = 0.05) -> int:
    n = 1
    while _cpu_per_call(fn, n) * n < budget / 2:
        n *= 2
    return 2 * n


def interleaved(name: str, rounds: int = 9) -> dict:
    """Alternating CPU-time rounds of funcgrad and NumPy for one case, in this process."""
    ours, base = CASES[name]()
    for _ in range(3):
        ours()
        base()
    n_ours, n_base = _repeats(ours), _repeats(base)
    t_ours, t_base, ratios = [], [], []
    for _ in range(rounds):
        a, b = _cpu_per_call(ours, n_ours), _cpu_per_call(base, n_base)
        t_ours.append(a)
        t_base.append(b)
        ratios.append(a / b)
    return {"case": name, "funcgrad_s": statistics.median(t_ours),
            "numpy_s": statistics.median(t_base), "ratio": statistics.median(ratios),
            "ratio_min": min(ratios), "ratio_max": max(ratios)}


def _main_interleaved(argv: list[str]) -> None:
    if "--case" in argv:
        print(json.dumps(interleaved(argv[argv.index("--case") + 1])))
        return
    print(f"{'case':32s} {'funcgrad':>10s} {'numpy':>10s} {'ratio':>6s}  (min-max)")
    for name in CASES:
        proc = subprocess.run([sys.executable, __file__, "--interleaved", "--case", name],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            err = (proc.stderr.strip().splitlines() or ["?"])[-1]
            print(f"{name:32s} FAILED: {err}")
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"{name:32s} {r['funcgrad_s'] * 1e6:8.0f}us {r['numpy_s'] * 1e6:8.0f}us "
              f"{r['ratio']:6.2f}  ({r['ratio_min']:.2f}-{r['ratio_max']:.2f})")
    print(f"load average: {os.getloadavg()}")


def hvp_baselines(n: int = 10_000) -> dict[str, float]:
    """CPU time (s) of other hand-written NumPy Hessian-vector products of the Rosenbrock
    function at n, against the benchmark's (the hand-simplified directional derivative of the
    gradient, ``workloads.hvp_rosenbrock``), best of 9 rounds each: is that baseline one a
    user would write? Each is checked against it first."""
    _, fused = workloads.hvp_rosenbrock(n, reverse_over_reverse=True)
    rng = np.random.default_rng(2)  # the workload's x and v
    x = rng.uniform(-1.0, 2.0, n)
    v = rng.standard_normal(n)

    def grad_np(x):  # the gradient as written from the formula
        g = np.zeros_like(x)
        d = x[1:] - x[:-1] ** 2
        g[1:] += 200.0 * d
        g[:-1] += -400.0 * d * x[:-1] - 2.0 * (1.0 - x[:-1])
        return g

    def tridiagonal():  # the Hessian's three diagonals, then the product
        diag = np.zeros_like(x)
        diag[:-1] += 1200.0 * x[:-1] ** 2 - 400.0 * x[1:] + 2.0
        diag[1:] += 200.0
        off = -400.0 * x[:-1]
        out = diag * v
        out[:-1] += off * v[1:]
        out[1:] += off * v[:-1]
        return out

    def rev_over_rev_by_hand():  # grad_np's code pulled back through v, step by step
        xl, xr, vl, vr = x[:-1], x[1:], v[:-1], v[1:]
        d = xr - xl ** 2
        bar_d = 200.0 * vr - 400.0 * xl * vl
        out = np.zeros_like(x)
        out[:-1] += -400.0 * d * vl + 2.0 * vl - 2.0 * xl * bar_d
        out[1:] += bar_d
        return out

    def central_difference():  # of the hand-written gradient (approximate)
        return (grad_np(x + 1e-6 * v) - grad_np(x - 1e-6 * v)) / 2e-6

    want = fused()
    for f in (tridiagonal, rev_over_rev_by_hand):
        np.testing.assert_allclose(f(), want, rtol=1e-10, atol=1e-8)
    np.testing.assert_allclose(central_difference(), want, rtol=1e-4, atol=1e-3)
    fns = {"benchmark baseline (fused directional derivative)": fused,
           "tridiagonal Hessian times v": tridiagonal,
           "reverse over reverse by hand": rev_over_rev_by_hand,
           "central difference of the gradient": central_difference}
    n_calls = {k: _repeats(f) for k, f in fns.items()}
    best = {k: float("inf") for k in fns}
    for _ in range(9):  # alternating rounds
        for k, f in fns.items():
            best[k] = min(best[k], _cpu_per_call(f, n_calls[k]))
    return best


if __name__ == "__main__":
    if "--interleaved" in sys.argv:
        _main_interleaved(sys.argv[1:])
    elif "--hvp-baselines" in sys.argv:
        times = hvp_baselines()
        ref = times["benchmark baseline (fused directional derivative)"]
        for k, t in times.items():
            print(f"{k:52s} {t * 1e6:8.1f} us  {t / ref:5.2f}x")
    else:
        main(CASES)
