"""jit-compiled gradients against hand-written NumPy (tracker issue "jit").

    python benchmarks/bench_jit.py              # every case, each in a fresh process
    python benchmarks/bench_jit.py --case mlp_b128_f32

Cases (each also run eagerly, ``*_eager``, to show what jit saves):
- ``chain100_grad``: ``jit(grad(f))`` of a 100-op elementwise chain on 16 elements: pure
  per-operation overhead, where the generated straight-line code shines.
- ``mlp_b128_{f32,f64}``: ``jit(value_and_grad(loss))`` of an MLP 784-512-512-10 (tanh,
  softmax cross-entropy), batch 128: BLAS-bound.
- ``mlp_small_b32_f64``: the same for an MLP 32-64-64-10, batch 32: overhead and BLAS mixed.

The NumPy baselines are hand-written forward + backward passes in the same process; BLAS and
OpenMP are pinned to one thread (by the harness, before NumPy loads).
"""

from __future__ import annotations

import os
import sys

# One BLAS/OpenMP thread, set before NumPy loads (the harness does the same on import).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ[_var] = "1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
from harness import main  # noqa: E402

import funcgrad  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402


def _chain100(jitted: bool):
    x = np.linspace(0.1, 1.0, 16)

    def f(x):
        for _ in range(25):
            x = fnp.sin(x)
            x = x * 1.1
            x = x + 0.1
            x = x * x
        return fnp.sum(x)

    def numpy_fwd_bwd():
        v = x
        saved = []
        for _ in range(25):
            s = np.sin(v)
            a = s * 1.1 + 0.1
            saved.append((v, a))
            v = a * a
        out = v.sum()
        g = np.ones_like(v)
        for v0, a in reversed(saved):
            g = 2.0 * a * g
            g = g * 1.1
            g = g * np.cos(v0)
        return out, g

    gf = funcgrad.grad(f)
    if jitted:
        gf = funcgrad.jit(gf)
    np.testing.assert_allclose(gf(x), numpy_fwd_bwd()[1], rtol=1e-10)
    return (lambda: gf(x)), numpy_fwd_bwd


def _mlp(dtype, sizes=(784, 512, 512, 10), batch=128, jitted=True):
    rng = np.random.default_rng(0)
    params = []
    for m, n in zip(sizes[:-1], sizes[1:]):
        params.append({"w": (rng.standard_normal((m, n)) / np.sqrt(m)).astype(dtype),
                       "b": np.zeros(n, dtype)})
    x = rng.standard_normal((batch, sizes[0])).astype(dtype)
    labels = rng.integers(0, sizes[-1], batch)
    y = np.eye(sizes[-1], dtype=dtype)[labels]

    def loss(params, x, y):
        h = x
        for layer in params[:-1]:
            h = fnp.tanh(h @ layer["w"] + layer["b"])
        logits = h @ params[-1]["w"] + params[-1]["b"]
        m = fnp.max(logits, axis=1, keepdims=True)
        logz = fnp.log(fnp.sum(fnp.exp(logits - m), axis=1, keepdims=True)) + m
        return -fnp.sum((logits - logz) * y) / x.shape[0]

    def numpy_value_and_grad():
        hs = [x]
        h = x
        for layer in params[:-1]:
            h = np.tanh(h @ layer["w"] + layer["b"])
            hs.append(h)
        logits = h @ params[-1]["w"] + params[-1]["b"]
        m = logits.max(axis=1, keepdims=True)
        e = np.exp(logits - m)
        s = e.sum(axis=1, keepdims=True)
        logz = np.log(s) + m
        value = -np.sum((logits - logz) * y) / batch
        g_logits = (e / s * y.sum(axis=1, keepdims=True) - y) / batch
        grads = [None] * len(params)
        g = g_logits
        for i in range(len(params) - 1, -1, -1):
            grads[i] = {"w": hs[i].T @ g, "b": g.sum(axis=0)}
            if i:
                g = (g @ params[i]["w"].T) * (1.0 - hs[i] ** 2)
        return value, grads

    vg = funcgrad.value_and_grad(loss)
    if jitted:
        vg = funcgrad.jit(vg)
    v1, g1 = vg(params, x, y)
    v2, g2 = numpy_value_and_grad()
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(v1, v2, rtol=tol)
    for a, b in zip(funcgrad.tree_util.tree_leaves(g1), funcgrad.tree_util.tree_leaves(g2)):
        assert a.dtype == b.dtype, (a.dtype, b.dtype)
        np.testing.assert_allclose(a, b, rtol=tol * 10, atol=tol)
    return (lambda: vg(params, x, y)), numpy_value_and_grad


CASES = {
    "chain100_grad": lambda: _chain100(True),
    "chain100_grad_eager": lambda: _chain100(False),
    "mlp_b128_f32": lambda: _mlp(np.float32),
    "mlp_b128_f64": lambda: _mlp(np.float64),
    "mlp_b128_f32_eager": lambda: _mlp(np.float32, jitted=False),
    "mlp_small_b32_f64": lambda: _mlp(np.float64, sizes=(32, 64, 64, 10), batch=32),
    "mlp_small_b32_f64_eager": lambda: _mlp(np.float64, sizes=(32, 64, 64, 10), batch=32,
                                            jitted=False),
}

if __name__ == "__main__":
    main(CASES)
