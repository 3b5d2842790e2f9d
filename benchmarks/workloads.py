"""The benchmark workloads, each with its hand-written NumPy baseline.

Every function builds one case and returns ``(funcgrad_callable, numpy_callable)`` after
checking that both compute the same result; ``jitted=True`` wraps the funcgrad side in
``funcgrad.jit``. ``bench_autodiff.py``, ``bench_jacobians.py`` and ``bench_jit.py`` pick their
cases from here, so eager and jit columns always time the same computation.
"""

from __future__ import annotations

import numpy as np

import funcgrad
import funcgrad.numpy as fnp


def chain100_fn(x):
    """The 100-op elementwise chain (sin, scale, shift, square, 25 times), summed."""
    for _ in range(25):
        x = fnp.sin(x)
        x = x * 1.1
        x = x + 0.1
        x = x * x
    return fnp.sum(x)


def chain100(jitted: bool = False):
    x = np.linspace(0.1, 1.0, 16)
    f = chain100_fn

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


def mlp(dtype, sizes=(784, 512, 512, 10), batch=128, jitted=False, shift_sg=False):
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


def hessian(d: int = 400, jitted: bool = False):
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


def hvp_rosenbrock(n: int = 10_000, jitted: bool = False, reverse_over_reverse: bool = False):
    rng = np.random.default_rng(2)
    x = rng.uniform(-1.0, 2.0, n)
    v = rng.standard_normal(n)

    def rosen(x):
        return fnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

    def hvp(x, v):
        if reverse_over_reverse:
            # the gradient of <grad(rosen)(x), v>
            return funcgrad.grad(lambda y: fnp.vdot(funcgrad.grad(rosen)(y), v))(x)
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


def deriv6(jitted: bool = False):
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


def jac_tanh(mode: str, jitted: bool = False, n_in: int = 200, n_out: int = 300):
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


def jac_tanh_arg(mode: str, n: int = 800, jitted: bool = False):
    """The Jacobian of ``tanh(W x)`` in x with W an *argument* (not a constant the compiler
    can fold): what ``jit(jacfwd)`` used to multiply by the dense identity basis."""
    rng = np.random.default_rng(3)
    w = rng.standard_normal((n, n)) / np.sqrt(n)
    x = rng.standard_normal(n)

    def f(x, w):
        return fnp.tanh(w @ x)

    jac = (funcgrad.jacfwd if mode == "fwd" else funcgrad.jacrev)(f)
    if jitted:
        jac = funcgrad.jit(jac)

    def numpy_jacobian():
        t = np.tanh(w @ x)
        return (1.0 - t * t)[:, None] * w

    np.testing.assert_allclose(jac(x, w), numpy_jacobian(), rtol=1e-12, atol=1e-14)
    return (lambda: jac(x, w)), numpy_jacobian


def hessian_arg(d: int = 800, jitted: bool = False):
    """The Hessian of ``sum(sin(W x)) + sum(x^3)`` in x with W an *argument* (read at run
    time): ``W^T diag(-sin(W x)) W + diag(6 x)``, one d x d x d product."""
    rng = np.random.default_rng(4)
    w = rng.standard_normal((d, d)) / np.sqrt(d)
    x = rng.standard_normal(d)

    def f(x, w):
        return fnp.sum(fnp.sin(w @ x)) + fnp.sum(x ** 3)

    hess = funcgrad.hessian(f)
    if jitted:
        hess = funcgrad.jit(hess)

    def numpy_hessian():
        h = w.T @ (-np.sin(w @ x)[:, None] * w)
        h[np.diag_indices(d)] += 6.0 * x
        return h

    np.testing.assert_allclose(hess(x, w), numpy_hessian(), rtol=1e-9, atol=1e-10)
    return (lambda: hess(x, w)), numpy_hessian


def elementwise(dtype, fusion: str | None, n: int = 10_000_000):
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
