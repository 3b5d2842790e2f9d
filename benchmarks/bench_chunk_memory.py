"""Peak memory and time of ``jacfwd``/``jacrev`` with ``chunk_size``, eager and under ``jit``.

    python benchmarks/bench_chunk_memory.py            # the table (each row a fresh process)
    python benchmarks/bench_chunk_memory.py --quick    # smaller sizes

Workload: the Jacobian of ``f(x) = W2 tanh(W1 x)``, ``x`` in R^n, hidden width h, m outputs,
``W1``/``W2`` arguments (float64; n = 800, h = 2000, m = 10). Without chunking, forward mode
pushes all n basis rows at once, so every intermediate is n x h (12.8 MB each); with
``chunk_size=c`` the intermediates are c x h. Eagerly that is a Python loop over chunks;
under ``jit`` it is a ``scan`` over chunks inside the compiled program, so the bound holds
there too (before, the chunks were unrolled into one straight-line program).

Peak memory is measured with ``tracemalloc`` (NumPy reports its array buffers to it) over
the first two calls: the most allocated at once beyond what existed before them. It
includes the n x m result, tracing and, under jit, the compiled program's scratch buffers
(kept between calls). Time is the best of five warm calls; "first call" includes tracing
and compiling (slowed by tracemalloc), which the unrolled chunks made grow with n / chunk. Not a test: tests never assert
timings or memory.
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
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

import funcgrad  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402


def measure(mode: str, jitted: bool, chunk: int | None, n: int, h: int, m: int) -> dict:
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((h, n)) / np.sqrt(n)
    w2 = rng.standard_normal((m, h)) / np.sqrt(h)
    x = rng.standard_normal(n)

    def f(x, w1, w2):
        return w2 @ fnp.tanh(w1 @ x)

    jac = (funcgrad.jacfwd if mode == "fwd" else funcgrad.jacrev)(f, chunk_size=chunk)
    if jitted:
        jac = funcgrad.jit(jac)
    t = np.tanh(w1 @ x)
    want = (w2 * (1 - t * t)) @ w1
    # From before the first call: the compiled program's scratch buffers (kept between
    # calls) count, as does tracing (small next to the arrays).
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    t0 = time.perf_counter()
    got = jac(x, w1, w2)
    first = time.perf_counter() - t0  # tracing and compiling included (under tracemalloc)
    del got
    jac(x, w1, w2)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    np.testing.assert_allclose(jac(x, w1, w2), want, rtol=1e-10, atol=1e-12)
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        jac(x, w1, w2)
        best = min(best, time.perf_counter() - t0)
    return {"peak_bytes": peak, "seconds": best, "first_call_s": first}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--case", help=argparse.SUPPRESS)
    args = ap.parse_args()
    n, h, m = (200, 500, 10) if args.quick else (800, 2000, 10)
    if args.case:
        mode, jitted, chunk = args.case.split(":")
        print(json.dumps(measure(mode, jitted == "jit", None if chunk == "none" else
                                 int(chunk), n, h, m)))
        return
    # forward mode maps over the n inputs, reverse mode over the m outputs
    chunks = {"fwd": ["none", str(n // 8), str(n // 80)], "rev": ["none", str(m // 2)]}
    print(f"Jacobian of W2 tanh(W1 x): n={n}, h={h}, m={m}, float64; peak = tracemalloc "
          "peak over the first two calls")
    print(f"{'mode':6s} {'variant':6s} {'chunk':>6s} {'peak MB':>9s} {'time':>10s} "
          f"{'first call':>11s}")
    for mode in ("fwd", "rev"):
        for variant in ("eager", "jit"):
            for chunk in chunks[mode]:
                case = f"{mode}:{variant}:{chunk}"
                proc = subprocess.run([sys.executable, __file__, "--case", case]
                                      + (["--quick"] if args.quick else []),
                                      capture_output=True, text=True)
                if proc.returncode:
                    err = (proc.stderr.strip().splitlines() or ["?"])[-1]
                    print(f"{mode:6s} {variant:6s} {chunk:>6s} FAILED: {err}")
                    continue
                r = json.loads(proc.stdout.strip().splitlines()[-1])
                print(f"{mode:6s} {variant:6s} {chunk:>6s} {r['peak_bytes'] / 1e6:9.2f} "
                      f"{r['seconds'] * 1e3:8.2f} ms {r['first_call_s'] * 1e3:8.0f} ms", flush=True)


if __name__ == "__main__":
    main()
