"""Eager autodiff overhead against hand-written NumPy (tracker issue "Differentiation").

    python benchmarks/bench_autodiff.py            # every case, each in a fresh process
    python benchmarks/bench_autodiff.py --case mlp_b128_f32

Cases:
- ``chain100_grad``: grad of a 100-op elementwise chain on 16-element arrays: pure
  per-operation overhead.
- ``mlp_b128_{f32,f64}``: value-and-grad of an MLP 784-512-512-10 (tanh, softmax
  cross-entropy), batch 128, against a hand-written forward + backward.
- ``mlp_small_b32_f64``: the same for an MLP 32-64-64-10, batch 32: mostly per-op overhead.
- ``hvp_rosenbrock_1e4_{fwd_rev,rev_rev}``: Hessian-vector product of the Rosenbrock function
  at n = 10^4, forward-over-reverse ``jvp(grad)`` and reverse-over-reverse
  ``grad(vdot(grad, v))``, against the hand-written directional derivative of the gradient.
"""

from __future__ import annotations

import os
import sys

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

if __name__ == "__main__":
    main(CASES)
