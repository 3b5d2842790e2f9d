"""Full Jacobians and Hessians (no jit) against hand-written NumPy (tracker issue "vmap").

    python benchmarks/bench_jacobians.py            # every case, each in a fresh process
    python benchmarks/bench_jacobians.py --case hessian_d400

Cases (float64; the NumPy side is the analytic derivative, computed efficiently):
- ``hessian_d{100,400}``: ``funcgrad.hessian`` (forward-over-reverse) of
  ``f(x) = logsumexp(A @ x) + 0.5 * x @ B @ x + sum(sin(x))`` with ``A``, ``B`` of shape
  ``(d, d)``, against ``A.T @ (diag(p) - p p.T) @ A + (B + B.T) / 2 - diag(sin x)`` with
  ``p = softmax(A @ x)`` (one ``d x d x d`` matmul).
- ``jacfwd_tanh_200x300`` / ``jacrev_tanh_200x300``: the Jacobian of ``tanh(W @ x)``,
  ``R^200 -> R^300``, by forward and by reverse mode, against ``(1 - tanh^2)[:, None] * W``.

Per-example gradients (``vmap(grad)``) are in ``bench_vmap.py``.
Targets (tracker issue "vmap"): Hessian <= 4x, Jacobian <= 2x the NumPy baseline.
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
# The harness, and the checkout's funcgrad when it is not installed.
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]

from harness import main  # noqa: E402  (pins BLAS threads before numpy loads)

# isort: split
import workloads  # noqa: E402

CASES = {
    "hessian_d100": lambda: workloads.hessian(100),
    "hessian_d400": lambda: workloads.hessian(400),
    "jacfwd_tanh_200x300": lambda: workloads.jac_tanh("fwd"),
    "jacrev_tanh_200x300": lambda: workloads.jac_tanh("rev"),
}

if __name__ == "__main__":
    main(CASES)
