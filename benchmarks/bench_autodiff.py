"""Eager autodiff overhead against hand-written NumPy (tracker issue "Differentiation").

    python benchmarks/bench_autodiff.py            # every case, each in a fresh process
    python benchmarks/bench_autodiff.py --case mlp_b128_f32

Cases:
- ``chain100_grad``: grad of a 100-op elementwise chain on 16-element arrays: pure
  per-operation overhead.
- ``mlp_b128_{f32,f64}``: value-and-grad of an MLP 784-512-512-10 (tanh, softmax
  cross-entropy), batch 128, against a hand-written forward + backward.
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


def chain100_grad():
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
    np.testing.assert_allclose(gf(x), numpy_fwd_bwd()[1], rtol=1e-10)
    return (lambda: gf(x)), numpy_fwd_bwd


def _mlp(dtype, sizes=(784, 512, 512, 10), batch=128):
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
    v1, g1 = vg(params, x, y)
    v2, g2 = numpy_value_and_grad()
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(v1, v2, rtol=tol)
    np.testing.assert_allclose(g1[0]["w"], g2[0]["w"], rtol=tol * 10, atol=tol)
    return (lambda: vg(params, x, y)), numpy_value_and_grad


CASES = {
    "chain100_grad": chain100_grad,
    "mlp_b128_f32": lambda: _mlp(np.float32),
    "mlp_b128_f64": lambda: _mlp(np.float64),
}

if __name__ == "__main__":
    main(CASES)
