"""jit-compiled gradients against hand-written NumPy (tracker issue "jit").

    python benchmarks/bench_jit.py              # every case, each in a fresh process
    python benchmarks/bench_jit.py --case mlp_b128_f32

Cases (each also run eagerly, ``*_eager``, to show what jit saves):
- ``chain100_grad``: ``jit(grad(f))`` of a 100-op elementwise chain on 16 elements: pure
  per-operation overhead, where the generated straight-line code shines.
- ``mlp_b128_{f32,f64}``: ``jit(value_and_grad(loss))`` of an MLP 784-512-512-10 (tanh,
  softmax cross-entropy), batch 128: BLAS-bound.
- ``mlp_small_b32_f64``: the same for an MLP 32-64-64-10, batch 32: overhead and BLAS mixed
  (``_sg``: the log-sum-exp shift under ``stop_gradient``).
- ``hessian_d400``: ``jit(hessian(f))``, ``f = logsumexp(A x) + x.B.x / 2 + sum(sin x)``,
  against the analytic Hessian (as in bench_jacobians.py).
- ``hvp_rosenbrock_1e4``: ``jit`` of forward-over-reverse ``jvp(grad(rosen))`` at n = 10^4,
  against the directional derivative of the hand-written Rosenbrock gradient.
- ``deriv6_tanh_sin``: ``jit`` of ``grad`` nested six times of ``tanh(sin(x) x)`` at a
  scalar, against sympy's closed form (common subexpressions shared) evaluated with NumPy.
- ``jac{fwd,rev}_tanh_200x300``: ``jit(jacfwd/jacrev)`` of ``tanh(W x)``, R^200 -> R^300.
- ``jacfwd_tanh_arg_{800,20}``: ``jit(jacfwd)`` of ``tanh(W x)`` with ``W`` an argument (the
  compiler cannot fold it), n = 800 and 20: jit must not lose to eager.
- ``hessian_arg_800``: ``jit(hessian)`` of ``sum(sin(W x)) + sum(x^3)``, W an argument,
  d = 800, against ``W^T diag(-sin(W x)) W + diag(6 x)``.
- ``elementwise_1e7_{f64,f32}_{fused,numexpr,unfused}``: ``jit(grad)`` of
  ``sum(sin(x) exp(-x^2) + x^2/2)`` over 10^7 elements, fusion chunked / numexpr / off.

``python benchmarks/bench_jit.py --repeat 5 [case ...]`` runs each case five times (fresh
processes) and prints median times and the median (min-max) ratio.
``python benchmarks/bench_jit.py --fusion-sweep`` prints the measurements behind the fusion
defaults (size threshold, block size, numexpr; see docs/jit.md, "Fusion").

The NumPy baselines are hand-written forward + backward passes in the same process; BLAS and
OpenMP are pinned to one thread (by the harness, before NumPy loads).
"""

from __future__ import annotations

import functools
import os
import sys

# One BLAS/OpenMP thread, set before NumPy loads (the harness does the same on import).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ[_var] = "1"
_HERE = os.path.dirname(os.path.abspath(__file__))
# The harness, and the checkout's funcgrad when it is not installed.
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]

import numpy as np  # noqa: E402
import workloads  # noqa: E402
from harness import main  # noqa: E402

import funcgrad  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402

_SMALL = dict(sizes=(32, 64, 64, 10), batch=32)

CASES = {
    "chain100_grad": lambda: workloads.chain100(jitted=True),
    "chain100_grad_eager": lambda: workloads.chain100(),
    "mlp_b128_f32": lambda: workloads.mlp(np.float32, jitted=True),
    "mlp_b128_f32_eager": lambda: workloads.mlp(np.float32),
    "mlp_b128_f64": lambda: workloads.mlp(np.float64, jitted=True),
    "mlp_b128_f64_eager": lambda: workloads.mlp(np.float64),
    "mlp_small_b32_f64": lambda: workloads.mlp(np.float64, jitted=True, **_SMALL),
    "mlp_small_b32_f64_eager": lambda: workloads.mlp(np.float64, **_SMALL),
    "mlp_small_b32_f64_sg": lambda: workloads.mlp(np.float64, jitted=True, shift_sg=True,
                                                  **_SMALL),
    "hessian_d400": lambda: workloads.hessian(400, jitted=True),
    "hessian_d400_eager": lambda: workloads.hessian(400),
    "hvp_rosenbrock_1e4": lambda: workloads.hvp_rosenbrock(jitted=True),
    "hvp_rosenbrock_1e4_eager": lambda: workloads.hvp_rosenbrock(),
    "deriv6_tanh_sin": lambda: workloads.deriv6(jitted=True),
    "deriv6_tanh_sin_eager": lambda: workloads.deriv6(),
    "jacfwd_tanh_200x300": lambda: workloads.jac_tanh("fwd", jitted=True),
    "jacfwd_tanh_200x300_eager": lambda: workloads.jac_tanh("fwd"),
    "jacrev_tanh_200x300": lambda: workloads.jac_tanh("rev", jitted=True),
    "jacrev_tanh_200x300_eager": lambda: workloads.jac_tanh("rev"),
    "jacfwd_tanh_arg_800": lambda: workloads.jac_tanh_arg("fwd", jitted=True),
    "jacfwd_tanh_arg_800_eager": lambda: workloads.jac_tanh_arg("fwd"),
    "jacfwd_tanh_arg_20": lambda: workloads.jac_tanh_arg("fwd", 20, jitted=True),
    "jacfwd_tanh_arg_20_eager": lambda: workloads.jac_tanh_arg("fwd", 20),
    "hessian_arg_800": lambda: workloads.hessian_arg(800, jitted=True),
    "hessian_arg_800_eager": lambda: workloads.hessian_arg(800),
}
for _dt in ("f64", "f32"):
    for _mode, _fusion in (("fused", "chunked"), ("numexpr", "numexpr"), ("unfused", "off"),
                           ("eager", None)):
        CASES[f"elementwise_1e7_{_dt}_{_mode}"] = functools.partial(
            workloads.elementwise, np.float64 if _dt == "f64" else np.float32, _fusion)

def fusion_sweep() -> None:
    """``--fusion-sweep``: the measurements behind funcgrad.compile.fusion's defaults (fused
    vs unfused jit per size and dtype, block size, numexpr), printed as tables."""
    from harness import time_callable

    from funcgrad.compile import fusion_options

    def transcendental(x):
        return fnp.sum(fnp.sin(x) * fnp.exp(-x * x) + 0.5 * x ** 2)

    def arithmetic(x):
        return fnp.sum((x * 1.5 + 2.0) * x - 0.25 * x * x * x + x / 3.0)

    def timed(fn, x, **cfg):
        with fusion_options(**cfg):
            g = funcgrad.jit(funcgrad.grad(fn))
            g(x)
        return time_callable(lambda: g(x), rounds=5, min_time=0.1)

    print("fused (chunked, 64 KiB blocks) / unfused jit time, by size")
    print(f"{'function':15s} {'dtype':8s}" + "".join(f"{'2^' + str(k):>8s}" for k in
                                                      range(12, 24, 2)))
    for fn in (transcendental, arithmetic):
        for dt in (np.float32, np.float64):
            row = []
            for k in range(12, 24, 2):
                x = np.linspace(-3.0, 3.0, 1 << k).astype(dt)
                t_f = timed(fn, x, mode="chunked", min_size=1)
                t_u = timed(fn, x, mode="off")
                row.append(t_f / t_u)
            print(f"{fn.__name__:15s} {np.dtype(dt).name:8s}" + "".join(f"{r:8.2f}" for r in row))

    print("\nblock size (chunk_bytes) at n = 10^7: time / unfused")
    sizes = [1 << k for k in range(12, 21, 2)]
    print(f"{'function':15s} {'dtype':8s}" + "".join(f"{b // 1024:>6d}K" for b in sizes))
    for fn in (transcendental, arithmetic):
        for dt in (np.float32, np.float64):
            x = np.linspace(-3.0, 3.0, 10_000_000).astype(dt)
            t_u = timed(fn, x, mode="off")
            row = [timed(fn, x, mode="chunked", min_size=1, chunk_bytes=b) / t_u
                   for b in sizes]
            print(f"{fn.__name__:15s} {np.dtype(dt).name:8s}" + "".join(f"{r:7.2f}" for r in row))

    try:
        import numexpr  # noqa: F401
    except ImportError:
        print("\nnumexpr not installed: no numexpr column")
        return
    print("\nn = 10^7, one thread: time / unfused")
    print(f"{'function':15s} {'dtype':8s} {'chunked':>8s} {'numexpr':>8s}")
    for fn in (transcendental, arithmetic):
        for dt in (np.float32, np.float64):
            x = np.linspace(-3.0, 3.0, 10_000_000).astype(dt)
            t_u = timed(fn, x, mode="off")
            t_c = timed(fn, x, mode="chunked")
            t_n = timed(fn, x, mode="numexpr")
            print(f"{fn.__name__:15s} {np.dtype(dt).name:8s} {t_c / t_u:8.2f} {t_n / t_u:8.2f}")


def repeated(n: int, names: list[str]) -> None:
    """``--repeat N [names]``: each case N times, each time in a fresh process; prints the
    median funcgrad and NumPy times and the median, min and max of the ratio (this machine's
    timings move by tens of percent from one process to the next)."""
    import json
    import statistics
    import subprocess

    print(f"{'case':30s} {'funcgrad':>10s} {'numpy':>10s} {'ratio':>6s} {'(min-max)':>12s}")
    for name in names or list(CASES):
        runs = []
        for _ in range(n):
            proc = subprocess.run([sys.executable, __file__, "--case", name],
                                  capture_output=True, text=True)
            if proc.returncode:
                print(f"{name:30s} FAILED: {(proc.stderr.strip().splitlines() or ['?'])[-1]}")
                break
            runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        else:
            ratios = [r["ratio"] for r in runs]
            t_f = statistics.median(r["funcgrad_s"] for r in runs)
            t_n = statistics.median(r["numpy_s"] for r in runs)

            def fmt(t: float) -> str:
                return f"{t * 1e6:7.1f} us" if t < 1e-3 else f"{t * 1e3:7.2f} ms"

            print(f"{name:30s} {fmt(t_f)} {fmt(t_n)} {statistics.median(ratios):6.2f} "
                  f"({min(ratios):.2f}-{max(ratios):.2f})", flush=True)


if __name__ == "__main__":
    if "--fusion-sweep" in sys.argv:
        fusion_sweep()
    elif "--repeat" in sys.argv:
        k = sys.argv.index("--repeat")
        repeated(int(sys.argv[k + 1]), sys.argv[k + 2:])
    else:
        main(CASES)
