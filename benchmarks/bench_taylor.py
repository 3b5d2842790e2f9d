"""Taylor mode, in one run: k-th derivatives and Laplacians.

1. All derivatives 0..k (k = 1..10) of a 20-op scalar program: ``funcgrad.derivatives``
   (jet) eager and jitted, nested ``grad`` eager (k <= 6: it grows as 2^k), against a
   hand-written NumPy Taylor recurrence of the same program.
2. ``laplacian`` of a 3-layer tanh MLP (width 64) at d = 10, 100, 1000 against a
   hand-written NumPy forward Laplacian (values, Jacobians and Laplacians pushed layer by
   layer), the uncollapsed Taylor propagation (``vmap`` of ``jet`` over the basis: every
   direction's second coefficient kept) and ``trace(hessian)`` (d <= 100: the Hessian at
   d = 1000 is the cost being avoided).

    python benchmarks/bench_taylor.py [--quick]

One process, BLAS pinned to one thread, medians of several rounds (CPU time). The machine
is shared: read the ratios.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import funcgrad  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402


def timeit(fn, rounds: int = 5) -> float:
    fn()
    times = []
    for _ in range(rounds):
        n, t0 = 0, time.process_time()
        while True:
            fn()
            n += 1
            dt = time.process_time() - t0
            if dt > 0.05:
                break
        times.append(dt / n)
    return statistics.median(times)


def program(x):
    """20 primitives: sin, exp, tanh, mul, add, div, sqrt, log ..."""
    a = fnp.sin(x) * x + 1.5
    b = fnp.exp(0.3 * a) / (1.0 + x * x)
    c = fnp.tanh(b - x) * fnp.sqrt(a)
    return fnp.log(c * c + 2.0) + b * 0.1


def numpy_taylor(x0: float, k: int) -> np.ndarray:
    """The same program's normalized coefficients by hand-written recurrences."""
    K = k + 1

    def mul(a, b):
        return np.array([sum(a[j] * b[i - j] for j in range(i + 1)) for i in range(K)])

    def div(a, b):
        y = np.zeros(K)
        for i in range(K):
            y[i] = (a[i] - sum(b[j] * y[i - j] for j in range(1, i + 1))) / b[0]
        return y

    def ode(x, y0, z_of):  # y' = z(y) x'
        y = np.zeros(K)
        y[0] = y0
        z = []
        for i in range(1, K):
            z.append(z_of(y, i - 1))
            y[i] = sum(j * x[j] * z[i - j] for j in range(1, i + 1)) / i
        return y

    def sincos(x):
        s, c = np.zeros(K), np.zeros(K)
        s[0], c[0] = math.sin(x[0]), math.cos(x[0])
        for i in range(1, K):
            s[i] = sum(j * x[j] * c[i - j] for j in range(1, i + 1)) / i
            c[i] = -sum(j * x[j] * s[i - j] for j in range(1, i + 1)) / i
        return s

    def sqrt(x):
        y = np.zeros(K)
        y[0] = math.sqrt(x[0])
        for i in range(1, K):
            y[i] = (x[i] - sum(y[j] * y[i - j] for j in range(1, i))) / (2 * y[0])
        return y

    def log(x):
        y = np.zeros(K)
        y[0] = math.log(x[0])
        for i in range(1, K):
            y[i] = (x[i] - sum(j * y[j] * x[i - j] for j in range(1, i)) / i) / x[0]
        return y

    x = np.zeros(K)
    x[0] = x0
    if K > 1:
        x[1] = 1.0
    const = lambda v: np.concatenate([[v], np.zeros(K - 1)])
    a = mul(sincos(x), x) + const(1.5)
    e = 0.3 * a
    b = div(ode(e, math.exp(e[0]), lambda y, m: y[m]), mul(x, x) + const(1.0))
    t = b - x
    th = ode(t, math.tanh(t[0]), lambda y, m: 1 - y[0] ** 2 if m == 0 else
             -sum(y[i] * y[m - i] for i in range(m + 1)))
    c = mul(th, sqrt(a))
    return log(mul(c, c) + const(2.0)) + 0.1 * b


def nested_grad(k: int):
    f = program
    for _ in range(k):
        f = funcgrad.grad(f)
    return f


def derivatives_table(quick: bool) -> None:
    x0 = 0.4
    ks = [1, 2, 4, 6] if quick else list(range(1, 11))
    print("derivatives 0..k of a 20-op program at x = 0.4 (CPU time per call; ratio to NumPy)")
    print(f"{'k':>3} {'numpy':>10} {'jet':>10} {'jet jit':>10} {'nested grad':>12}  ratios")
    for k in ks:
        ref = numpy_taylor(x0, k) * np.array([math.factorial(i) for i in range(k + 1)])
        d = funcgrad.derivatives(program, k)
        dj = funcgrad.jit(d)
        assert np.allclose(d(x0), ref, rtol=1e-9), (k, d(x0), ref)
        t_np = timeit(lambda k=k: numpy_taylor(x0, k))
        t_jet = timeit(lambda d=d: d(x0))
        t_jit = timeit(lambda dj=dj: dj(x0))
        t_nest = timeit(lambda k=k: [nested_grad(i)(x0) for i in range(k + 1)], 3) \
            if k <= 6 else float("nan")
        print(f"{k:>3} {t_np * 1e6:>8.0f}us {t_jet * 1e3:>8.2f}ms {t_jit * 1e3:>8.2f}ms "
              f"{t_nest * 1e3:>10.2f}ms  jet {t_jet / t_np:6.1f}x  jit {t_jit / t_np:6.1f}x")


def _numpy_forward_laplacian(params, x):
    # (value, d x width Jacobian, Laplacian) through each layer: z = h W + b is linear, so
    # J -> J W and L -> L W (the first layer's Jacobian is W itself); tanh adds
    # t''(z) * sum_i (J_i)^2 with t'' = -2 t (1 - t^2).
    h, jac, lap = x, None, None
    for w, b in params[:-1]:
        z = h @ w + b
        jz, lz = (w, np.zeros_like(z)) if jac is None else (jac @ w, lap @ w)
        h = np.tanh(z)
        d1 = 1.0 - h * h
        jac, lap = jz * d1, lz * d1 - 2.0 * h * d1 * np.sum(jz * jz, axis=0)
    w, b = params[-1]
    return float(np.sum(lap @ w))


def laplacian_table(quick: bool) -> None:
    print("\nLaplacian of a 3-layer tanh MLP (width 64): ratios to a NumPy forward Laplacian")
    rng = np.random.default_rng(0)
    for d in ([10, 100] if quick else [10, 100, 1000]):
        sizes = [d, 64, 64, 1]
        params = [(rng.normal(size=(m, n)) / np.sqrt(m), np.zeros(n))
                  for m, n in zip(sizes[:-1], sizes[1:])]

        def f(x, params=params):
            h = x
            for w, b in params[:-1]:
                h = fnp.tanh(h @ w + b)
            return fnp.sum(h @ params[-1][0] + params[-1][1])

        def uncollapsed(x, f=f):
            def second(v):
                _, (_, y2) = funcgrad.jet(f, (x,), ([v, fnp.zeros_like(x)],),
                                          factorial_scaled=False)
                return y2
            return 2.0 * fnp.sum(funcgrad.vmap(second)(fnp.eye(x.size)))

        x = rng.normal(size=d)
        t_np = timeit(lambda x=x, params=params: _numpy_forward_laplacian(params, x), 3)
        lap = funcgrad.jit(funcgrad.laplacian(f))
        assert np.isclose(lap(x), _numpy_forward_laplacian(params, x), rtol=1e-8)
        t_lap = timeit(lambda lap=lap, x=x: lap(x), 3)
        unc = funcgrad.jit(uncollapsed)
        assert np.isclose(unc(x), lap(x), rtol=1e-8)
        t_unc = timeit(lambda unc=unc, x=x: unc(x), 3)
        line = (f"d={d:>5}: numpy {t_np * 1e3:8.2f} ms   laplacian {t_lap / t_np:5.2f}x   "
                f"uncollapsed jet {t_unc / t_np:5.2f}x")
        if d <= 100:
            tr = funcgrad.jit(lambda y, f=f: fnp.trace(funcgrad.hessian(f)(y)))
            assert np.isclose(lap(x), tr(x), rtol=1e-8)
            t_tr = timeit(lambda tr=tr, x=x: tr(x), 3)
            line += f"   trace(hessian) {t_tr / t_np:5.2f}x"
        print(line, flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    quick = ap.parse_args().quick
    derivatives_table(quick)
    laplacian_table(quick)
