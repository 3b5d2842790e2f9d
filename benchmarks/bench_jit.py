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


def _mlp(dtype, sizes=(784, 512, 512, 10), batch=128, jitted=True, shift_sg=False):
    # shift_sg: the log-sum-exp shift under stop_gradient (as jax.nn.logsumexp writes it): its
    # derivative cancels exactly, and this skips computing it.
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
        if shift_sg:
            m = funcgrad.stop_gradient(m)
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


def _hessian(d: int = 400, jitted: bool = True):
    # The same function and analytic NumPy Hessian as bench_jacobians.py's hessian_d400.
    rng = np.random.default_rng(0)
    a = rng.standard_normal((d, d)) / np.sqrt(d)
    b = rng.standard_normal((d, d)) / np.sqrt(d)
    x = rng.standard_normal(d)

    def logsumexp(z):
        m = funcgrad.stop_gradient(fnp.max(z))
        return fnp.log(fnp.sum(fnp.exp(z - m))) + m

    def f(x):
        return logsumexp(a @ x) + 0.5 * (x @ b @ x) + fnp.sum(fnp.sin(x))

    hess = funcgrad.hessian(f)
    if jitted:
        hess = funcgrad.jit(hess)

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


def _hvp_rosenbrock(n: int = 10_000, jitted: bool = True):
    rng = np.random.default_rng(2)
    x = rng.uniform(-1.0, 2.0, n)
    v = rng.standard_normal(n)

    def rosen(x):
        return fnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

    def hvp(x, v):
        # forward-over-reverse: the directional derivative of the gradient
        return funcgrad.jvp(funcgrad.grad(rosen), (x,), (v,))[1]

    if jitted:
        hvp = funcgrad.jit(hvp)

    def numpy_hvp():
        # d/dt of the hand-written gradient at x + t v:
        #   g[i] = 200 (x[i] - x[i-1]^2) - 400 x[i] (x[i+1] - x[i]^2) - 2 (1 - x[i])
        xm, xl, xr = x[1:-1], x[:-2], x[2:]
        vm, vl, vr = v[1:-1], v[:-2], v[2:]
        out = np.empty_like(x)
        out[1:-1] = (200.0 * (vm - 2.0 * xl * vl) - 400.0 * (vm * (xr - xm * xm)
                     + xm * (vr - 2.0 * xm * vm)) + 2.0 * vm)
        out[0] = -400.0 * (v[0] * (x[1] - x[0] ** 2) + x[0] * (v[1] - 2.0 * x[0] * v[0])) \
            + 2.0 * v[0]
        out[-1] = 200.0 * (v[-1] - 2.0 * x[-2] * v[-2])
        return out

    np.testing.assert_allclose(hvp(x, v), numpy_hvp(), rtol=1e-10, atol=1e-8)
    return (lambda: hvp(x, v)), numpy_hvp


def _deriv6(jitted: bool = True):
    import sympy

    def f(x):
        return fnp.tanh(fnp.sin(x) * x)

    d = f
    for _ in range(6):
        d = funcgrad.grad(d)
    if jitted:
        d = funcgrad.jit(d)
    s = sympy.Symbol("x")
    # The closed form, common subexpressions shared, evaluated with NumPy functions.
    numpy_d6 = sympy.lambdify(s, sympy.diff(sympy.tanh(sympy.sin(s) * s), s, 6), "numpy",
                              cse=True)
    x = np.float64(0.7)
    np.testing.assert_allclose(d(x), numpy_d6(x), rtol=1e-11)
    return (lambda: d(x)), (lambda: numpy_d6(x))


def _jac_tanh(mode: str, jitted: bool = True, n_in: int = 200, n_out: int = 300):
    # The same function and baseline as bench_jacobians.py's jac*_tanh_200x300.
    rng = np.random.default_rng(1)
    w = rng.standard_normal((n_out, n_in)) / np.sqrt(n_in)
    x = rng.standard_normal(n_in)

    def f(x):
        return fnp.tanh(w @ x)

    jac = (funcgrad.jacfwd if mode == "fwd" else funcgrad.jacrev)(f)
    if jitted:
        jac = funcgrad.jit(jac)

    def numpy_jacobian():
        t = np.tanh(w @ x)
        return (1.0 - t * t)[:, None] * w

    np.testing.assert_allclose(jac(x), numpy_jacobian(), rtol=1e-12, atol=1e-14)
    return (lambda: jac(x)), numpy_jacobian


def _elementwise(dtype, fusion: str | None, n: int = 10_000_000):
    """grad of sum(sin(x) exp(-x^2) + x^2 / 2) over n elements; fusion: a funcgrad.compile
    fusion mode ("chunked", "numexpr", "off"), or None for eager."""
    x = np.linspace(-3.0, 3.0, n).astype(dtype)

    def f(x):
        return fnp.sum(fnp.sin(x) * fnp.exp(-x * x) + 0.5 * x ** 2)

    g = funcgrad.grad(f)
    if fusion is not None:
        funcgrad.compile.set_fusion(fusion)
        g = funcgrad.jit(g)

    def numpy_grad():
        e = np.exp(-x * x)
        return (np.cos(x) - 2.0 * x * np.sin(x)) * e + x

    got, want = g(x), numpy_grad()
    assert got.dtype == want.dtype == dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-5 if dtype == np.float32 else 1e-13)
    return (lambda: g(x)), numpy_grad


CASES = {
    "chain100_grad": lambda: _chain100(True),
    "chain100_grad_eager": lambda: _chain100(False),
    "mlp_b128_f32": lambda: _mlp(np.float32),
    "mlp_b128_f32_eager": lambda: _mlp(np.float32, jitted=False),
    "mlp_b128_f64": lambda: _mlp(np.float64),
    "mlp_b128_f64_eager": lambda: _mlp(np.float64, jitted=False),
    "mlp_small_b32_f64": lambda: _mlp(np.float64, sizes=(32, 64, 64, 10), batch=32),
    "mlp_small_b32_f64_eager": lambda: _mlp(np.float64, sizes=(32, 64, 64, 10), batch=32,
                                            jitted=False),
    "mlp_small_b32_f64_sg": lambda: _mlp(np.float64, sizes=(32, 64, 64, 10), batch=32,
                                         shift_sg=True),
    "hessian_d400": lambda: _hessian(400),
    "hessian_d400_eager": lambda: _hessian(400, jitted=False),
    "hvp_rosenbrock_1e4": lambda: _hvp_rosenbrock(),
    "hvp_rosenbrock_1e4_eager": lambda: _hvp_rosenbrock(jitted=False),
    "deriv6_tanh_sin": lambda: _deriv6(),
    "deriv6_tanh_sin_eager": lambda: _deriv6(jitted=False),
    "jacfwd_tanh_200x300": lambda: _jac_tanh("fwd"),
    "jacfwd_tanh_200x300_eager": lambda: _jac_tanh("fwd", jitted=False),
    "jacrev_tanh_200x300": lambda: _jac_tanh("rev"),
    "jacrev_tanh_200x300_eager": lambda: _jac_tanh("rev", jitted=False),
    "elementwise_1e7_f64_fused": lambda: _elementwise(np.float64, "chunked"),
    "elementwise_1e7_f64_numexpr": lambda: _elementwise(np.float64, "numexpr"),
    "elementwise_1e7_f64_unfused": lambda: _elementwise(np.float64, "off"),
    "elementwise_1e7_f64_eager": lambda: _elementwise(np.float64, None),
    "elementwise_1e7_f32_fused": lambda: _elementwise(np.float32, "chunked"),
    "elementwise_1e7_f32_numexpr": lambda: _elementwise(np.float32, "numexpr"),
    "elementwise_1e7_f32_unfused": lambda: _elementwise(np.float32, "off"),
    "elementwise_1e7_f32_eager": lambda: _elementwise(np.float32, None),
}

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
