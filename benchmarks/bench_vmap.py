"""Per-example gradients with vmap(grad) against hand-written NumPy (tracker issue "vmap").

    python benchmarks/bench_vmap.py            # every case, each in a fresh process
    python benchmarks/bench_vmap.py --case mlp_b256_f64

Cases (a small MLP 32-64-64-10 with tanh and a squared-error loss, 256 examples):
- ``mlp_b256_{f64,f32}``: ``vmap(grad(loss), in_axes=(None, 0, 0))`` against a vectorized,
  hand-written NumPy per-example forward and backward pass.
- ``mlp_b256_chunk64``: the same with ``chunk_size=64`` (four chunks), float64.
"""

from __future__ import annotations

import os
import sys

# One BLAS/OpenMP thread, set before NumPy loads (the harness does the same on import).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
_HERE = os.path.dirname(os.path.abspath(__file__))
# The harness, and the checkout's funcgrad when it is not installed.
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]

import numpy as np  # noqa: E402
from harness import main  # noqa: E402

import funcgrad  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402


def _setup(dtype, sizes=(32, 64, 64, 10), batch=256, chunk_size=None):
    rng = np.random.default_rng(0)
    params = []
    for m, n in zip(sizes[:-1], sizes[1:]):
        params.append({"w": (rng.standard_normal((m, n)) / np.sqrt(m)).astype(dtype),
                       "b": (0.1 * rng.standard_normal(n)).astype(dtype)})
    xs = rng.standard_normal((batch, sizes[0])).astype(dtype)
    ys = rng.standard_normal((batch, sizes[-1])).astype(dtype)

    def loss(params, x, y):
        h = x
        for layer in params[:-1]:
            h = fnp.tanh(h @ layer["w"] + layer["b"])
        out = h @ params[-1]["w"] + params[-1]["b"]
        return 0.5 * fnp.sum((out - y) ** 2)

    per_example = funcgrad.vmap(funcgrad.grad(loss), in_axes=(None, 0, 0),
                                chunk_size=chunk_size)

    def numpy_per_example():
        hs = [xs]
        for layer in params[:-1]:
            hs.append(np.tanh(hs[-1] @ layer["w"] + layer["b"]))
        out = hs[-1] @ params[-1]["w"] + params[-1]["b"]
        g = out - ys  # (batch, out): d loss_i / d out_i
        grads = []
        for i in range(len(params) - 1, -1, -1):
            h = hs[i]
            grads.append({"w": h[:, :, None] * g[:, None, :], "b": g})
            if i:
                g = (g @ params[i]["w"].T) * (1 - h * h)
        return grads[::-1]

    got = per_example(params, xs, ys)
    want = numpy_per_example()
    tol = 1e-10 if dtype == np.float64 else 1e-4
    for a, b in zip(funcgrad.tree_util.tree_leaves(got), funcgrad.tree_util.tree_leaves(want)):
        assert a.dtype == b.dtype, (a.dtype, b.dtype)
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    return (lambda: per_example(params, xs, ys)), numpy_per_example


CASES = {
    "mlp_b256_f64": lambda: _setup(np.float64),
    "mlp_b256_f32": lambda: _setup(np.float32),
    "mlp_b256_chunk64": lambda: _setup(np.float64, chunk_size=64),
}

if __name__ == "__main__":
    main(CASES)
