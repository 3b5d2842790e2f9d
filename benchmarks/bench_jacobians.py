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
import numpy as np  # noqa: E402

import funcgrad  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402


def _hessian(d: int):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((d, d)) / np.sqrt(d)
    b = rng.standard_normal((d, d)) / np.sqrt(d)
    x = rng.standard_normal(d)

    def logsumexp(z):
        # The usual stable form; the shift carries no derivative (it cancels exactly).
        m = funcgrad.stop_gradient(fnp.max(z))
        return fnp.log(fnp.sum(fnp.exp(z - m))) + m

    def f(x):
        return logsumexp(a @ x) + 0.5 * (x @ b @ x) + fnp.sum(fnp.sin(x))

    hess = funcgrad.hessian(f)

    def numpy_hessian():
        z = a @ x
        e = np.exp(z - z.max())
        p = e / e.sum()
        ap = a.T @ p
        h = a.T @ (p[:, None] * a)
        h -= np.outer(ap, ap)
        h += 0.5 * (b + b.T)
        h[np.diag_indices(d)] -= np.sin(x)
        return h

    np.testing.assert_allclose(hess(x), numpy_hessian(), rtol=1e-9, atol=1e-10)
    return (lambda: hess(x)), numpy_hessian


def _jac_tanh(mode: str, n_in: int = 200, n_out: int = 300):
    rng = np.random.default_rng(1)
    w = rng.standard_normal((n_out, n_in)) / np.sqrt(n_in)
    x = rng.standard_normal(n_in)

    def f(x):
        return fnp.tanh(w @ x)

    jac = (funcgrad.jacfwd if mode == "fwd" else funcgrad.jacrev)(f)

    def numpy_jacobian():
        t = np.tanh(w @ x)
        return (1.0 - t * t)[:, None] * w

    np.testing.assert_allclose(jac(x), numpy_jacobian(), rtol=1e-12, atol=1e-14)
    return (lambda: jac(x)), numpy_jacobian


CASES = {
    "hessian_d100": lambda: _hessian(100),
    "hessian_d400": lambda: _hessian(400),
    "jacfwd_tanh_200x300": lambda: _jac_tanh("fwd"),
    "jacrev_tanh_200x300": lambda: _jac_tanh("rev"),
}

if __name__ == "__main__":
    main(CASES)
