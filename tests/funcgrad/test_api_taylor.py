"""jet, derivatives, taylor_coefficients, laplacian, divergence: against sympy, nested jvp and
Hessians; under jit, vmap and grad."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.scipy import special as fsp
from funcgrad.test_util import check_grads
from tests.helpers import dev, host


def assert_close(actual, desired, **kw):
    """assert_allclose on host copies (results live on the test device)."""
    to_host = lambda v: np.asarray(host(v)) if not isinstance(v, list) else np.asarray(
        [np.asarray(host(e)) for e in v])
    np.testing.assert_allclose(to_host(actual), to_host(desired), **kw)


T = sp.symbols("t")
# (funcgrad function, sympy function, domain) for random compositions
UNARY = [
    (fnp.sin, sp.sin, None), (fnp.cos, sp.cos, None), (fnp.exp, sp.exp, (-2, 1)),
    (fnp.tanh, sp.tanh, None), (lambda x: fnp.log(x), sp.log, (0.2, 3)),
    (fnp.sqrt, sp.sqrt, (0.2, 3)), (fnp.arctan, sp.atan, None),
    (lax.logistic, lambda e: 1 / (1 + sp.exp(-e)), None), (fsp.erf, sp.erf, None),
    (lambda x: x ** 3, lambda e: e ** 3, None), (lambda x: 1 / (1 + x * x),
                                                 lambda e: 1 / (1 + e * e), None),
    (lambda x: fnp.sinh(x) * 0.5, lambda e: sp.sinh(e) / 2, (-2, 2)),
    (lambda x: fnp.log1p(x * x), lambda e: sp.log(1 + e * e), None),
]


def _composition(seed: int):
    rng = np.random.default_rng(seed)
    picks = rng.choice(len(UNARY), size=3, replace=False)
    fs = [UNARY[i] for i in picks]
    a, b = rng.uniform(0.3, 1.2, size=2)

    def f(x):
        y = x
        for fg, _, dom in fs:
            y = fg(y if dom is None else 0.5 * (dom[0] + dom[1]) + 0.2 * fnp.tanh(y))
        return y * a + fnp.sin(b * x) * y

    e = T
    for _, fs_, dom in fs:
        e = fs_(e if dom is None else sp.Rational(1, 2) * (dom[0] + dom[1])
                + sp.Rational(1, 5) * sp.tanh(e))
    return f, e * a + sp.sin(b * T) * e


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("x0", [-0.7, 0.4])
def test_derivatives_to_order_8_match_sympy(seed, x0):
    # The reference: the sympy expression evaluated in mpmath at 40 digits and differentiated
    # there (mpmath.taylor); sympy's own symbolic derivatives of order 8 of these
    # compositions take 10-40 s each, checked once below.
    f, e = _composition(seed)
    got = funcgrad.derivatives(f, 8)(x0)
    with mpmath.workdps(40):
        coeffs = mpmath.taylor(sp.lambdify(T, e, "mpmath"), mpmath.mpf(x0), 8)
        want = [float(c * math.factorial(k)) for k, c in enumerate(coeffs)]
    assert_close(got, want, rtol=1e-10, atol=1e-10 * max(map(abs, want)))


def test_derivatives_to_order_8_match_sympys_symbolic_ones():
    f, e = _composition(1)
    got = funcgrad.derivatives(f, 8)(0.4)
    want, d = [float(e.subs(T, 0.4).evalf(30))], e
    for _ in range(8):  # each order from the last: one diff per order
        d = sp.diff(d, T)
        want.append(float(d.subs(T, 0.4).evalf(30)))
    assert_close(got, want, rtol=1e-10, atol=1e-10 * max(map(abs, want)))


def test_directional_derivatives_and_coefficients():
    f = lambda x: fnp.sum(fnp.sin(x) * x ** 2)
    x, v = dev(np.array([0.3, -0.5, 1.1])), dev(np.array([1.0, 2.0, -1.0]))
    d = funcgrad.derivatives(f, 3)(x, v)
    # second derivative along v is v^T H v; third by nesting jvp
    h = funcgrad.hessian(f)(x)
    assert_close(d[2], v @ h @ v, rtol=1e-12)
    g1 = lambda y: funcgrad.jvp(f, (y,), (v,))[1]
    g2 = lambda y: funcgrad.jvp(g1, (y,), (v,))[1]
    assert_close(d[3], funcgrad.jvp(g2, (x,), (v,))[1], rtol=1e-12)
    c = funcgrad.taylor_coefficients(f, 3)(x, v)
    assert_close(c, host(d) / np.array([1.0, 1.0, 2.0, 6.0]), rtol=1e-12)


def test_jet_signature_as_jax():
    # factorial-scaled (derivative) coefficients in and out, pytrees, several arguments
    f = lambda p: {"y": fnp.sin(p["a"]) * p["b"]}
    primals = ({"a": np.array(0.4), "b": np.array(2.0)},)
    series = ([{"a": np.array(1.0), "b": np.array(0.0)}, {"a": np.array(0.0), "b": np.array(0.0)}],)
    y0, ys = funcgrad.jet(f, primals, series)
    assert set(y0) == {"y"} and len(ys["y"]) == 2
    assert_close(ys["y"], [2 * np.cos(0.4), -2 * np.sin(0.4)], rtol=1e-12)
    with pytest.raises(ValueError, match="same length"):
        funcgrad.jet(fnp.sin, (1.0, 2.0), ([1.0], [1.0, 0.0]))
    with pytest.raises(TypeError, match="one list of coefficients per primal"):
        funcgrad.jet(fnp.sin, (1.0,), ())
    # JAX 0.10.2: jet(lambda x: x ** 3, (2.0,), ((1.0, 0.0, 0.0, 0.0),)) gives the primal
    # output as an array, Array(8.), with coefficients [12, 12, 6, 0]
    y0, ys = funcgrad.jet(lambda x: x ** 3, (2.0,), ((1.0, 0.0, 0.0, 0.0),))
    assert funcgrad.backend.is_array(y0) and float(funcgrad.to_numpy(y0)) == 8.0
    assert_close(ys, [12.0, 12.0, 6.0, 0.0])


def test_jet_composes_with_jit_vmap_and_grad():
    f = lambda x: fnp.exp(fnp.sin(x)) / (1.0 + x * x)
    d4 = lambda x: funcgrad.derivatives(f, 4)(x)[4]
    x = np.array([0.1, 0.7, -0.4])
    eager = np.array([host(d4(v)) for v in x])
    x = dev(x)
    assert_close(funcgrad.vmap(d4)(x), eager, rtol=1e-12)
    assert_close(funcgrad.jit(funcgrad.vmap(d4))(x), eager, rtol=1e-12)
    # grad of a Taylor coefficient is the next derivative
    d5 = funcgrad.derivatives(f, 5)(0.3)[5]
    assert_close(funcgrad.grad(d4)(0.3), d5, rtol=1e-10)
    check_grads(d4, (0.3,), order=1)


def _mlp(params, x):
    (w1, b1), (w2, b2), (w3, b3) = params
    h = fnp.tanh(x @ w1 + b1)
    h = fnp.tanh(h @ w2 + b2)
    return fnp.sum(h @ w3 + b3)


def _params(d, width=8, seed=0):
    rng = np.random.default_rng(seed)
    sizes = [d, width, width, 1]
    return [(rng.normal(size=(m, n)) / np.sqrt(m), rng.normal(size=n) * 0.1)
            for m, n in zip(sizes[:-1], sizes[1:])]


def test_laplacian_equals_trace_of_hessian():
    p = dev(_params(5))
    x = dev(np.random.default_rng(1).normal(size=5))
    f = lambda y: _mlp(p, y)
    assert_close(funcgrad.laplacian(f)(x), np.trace(host(funcgrad.hessian(f)(x))),
                               rtol=1e-10)
    # a PDE residual: u = sin(x0) exp(x1) solves Laplace's equation
    u = lambda y: fnp.sin(y[0]) * fnp.exp(y[1])
    assert abs(float(funcgrad.laplacian(u)(np.array([0.3, 0.2])))) < 1e-12
    # a Slater-determinant-like program
    a = np.random.default_rng(2).normal(size=(3, 3))
    psi = lambda y: fnp.linalg.slogdet(a + fnp.outer(fnp.sin(y), y))[1]
    y = np.array([0.2, -0.1, 0.4])
    assert_close(funcgrad.laplacian(psi)(y), np.trace(funcgrad.hessian(psi)(y)),
                               rtol=1e-9)
    # matrices as inputs: the sum over every entry
    g = lambda m: fnp.sum(fnp.sin(m) ** 2)
    m = np.arange(6.0).reshape(2, 3) / 7
    assert_close(funcgrad.laplacian(g)(m), np.sum(2 * np.cos(2 * m)), rtol=1e-12)


def test_laplacian_is_differentiable_jittable_batchable():
    x = np.random.default_rng(3).normal(size=4)

    def loss(params, y):  # a physics-informed loss: (Laplacian u)^2
        return funcgrad.laplacian(lambda z: _mlp(params, z))(y) ** 2

    p = _params(4, width=5)
    check_grads(lambda y: loss(p, y), (x,), order=1, modes=("rev",))
    g = funcgrad.grad(loss)(p, x)
    g_jit = funcgrad.jit(funcgrad.grad(loss))(p, x)
    for a, b in zip(funcgrad.tree_util.tree_leaves(g), funcgrad.tree_util.tree_leaves(g_jit)):
        assert_close(a, b, rtol=1e-10)
    xs = np.stack([x, x * 0.5])
    assert_close(funcgrad.vmap(lambda y: loss(p, y))(xs),
                               [loss(p, x), loss(p, x * 0.5)], rtol=1e-12)


def test_hutchinson_estimate_is_unbiased_enough():
    p = _params(6)
    x = np.random.default_rng(4).normal(size=6)
    f = lambda y: _mlp(p, y)
    exact = float(funcgrad.laplacian(f)(x))
    est = float(funcgrad.laplacian(f, "hutchinson", key=funcgrad.random.key(0),
                                   samples=4000)(x))
    assert abs(est - exact) < 0.05 * max(1.0, abs(exact))
    with pytest.raises(ValueError, match="needs key"):
        funcgrad.laplacian(f, "hutchinson")
    with pytest.raises(ValueError, match="method"):
        funcgrad.laplacian(f, "exact")
    with pytest.raises(TypeError, match="scalar"):
        funcgrad.laplacian(lambda y: y)(x)


def test_divergence():
    F = lambda x: fnp.stack([x[0] * x[1], fnp.sin(x[1]), x[2] ** 3])
    x = np.array([0.5, 0.2, -1.0])
    assert_close(funcgrad.divergence(F)(x), np.trace(funcgrad.jacfwd(F)(x)),
                               rtol=1e-12)
    assert_close(funcgrad.grad(lambda y: funcgrad.divergence(F)(y))(x),
                               funcgrad.grad(lambda y: fnp.trace(funcgrad.jacfwd(F)(y)))(x),
                               rtol=1e-12)
    with pytest.raises(TypeError, match="to itself"):
        funcgrad.divergence(lambda x: x[:2])(x)


def test_order_zero_and_host_results():
    y0, ys = funcgrad.jet(fnp.sin, (0.5,), ([],))
    assert ys == [] and np.isclose(host(y0), math.sin(0.5))
    d = funcgrad.derivatives(fnp.exp, 2)(dev(np.array(0.0)))
    assert_close(host(d), [1.0, 1.0, 1.0])


def test_laplacian_and_divergence_refuse_integer_inputs():
    # Their basis directions would be float0 and every derivative zero: laplacian gave 0.0 for
    # sum(x ** 2) at [1, 2, 3] (true value 6). hessian raises the same way (JAX: TypeError).
    x = dev(np.array([1, 2, 3]))
    with pytest.raises(TypeError, match="laplacian requires float"):
        funcgrad.laplacian(lambda v: fnp.sum(v ** 2))(x)
    with pytest.raises(TypeError, match="divergence requires float"):
        funcgrad.divergence(lambda v: v * v)(x)
    assert float(host(funcgrad.laplacian(lambda v: fnp.sum(v ** 2))(dev(np.array([1.0, 2.0, 3.0]))))) == 6.0


def test_jet_names_a_series_term_of_the_wrong_shape():
    with pytest.raises(ValueError, match="series term 2 has shape \\(3,\\) but its primal has "
                                         "shape \\(2,\\)"):
        funcgrad.jet(fnp.sin, (dev(np.ones(2)),), ([dev(np.ones(2)), dev(np.ones(3))],))


def test_jet_of_a_device_primal_with_python_number_series() -> None:
    # Python-number coefficients have no device: scaled by 1/k! they stay Python numbers and
    # meet the primal on its device (the default device left at cpu, as GPU users work).
    from funcgrad.backend import device_of, to_numpy

    x = funcgrad.device_put(0.5, "strict")
    with funcgrad.default_device("cpu"):
        y0, (y1, y2) = funcgrad.jet(fnp.sin, (x,), ((1.0, 0.0),))
    assert device_of(y1) == device_of(x)
    np.testing.assert_allclose(to_numpy(y1), np.cos(0.5))
    np.testing.assert_allclose(to_numpy(y2), -np.sin(0.5))


def test_series_through_iterative_solves_cost_one_solve_per_order():
    # x(t) = A(t)^-1 b(t) through cg / gmres: the same derivatives as the dense solve, and
    # order 8 without the 2^K of pushing the series through the JVP rule (which solves again)
    from funcgrad.interpreters.taylor import rule_kind
    from funcgrad.ops.control_flow.linear_solve import linear_solve_p
    from funcgrad.scipy.sparse.linalg import cg, gmres

    a0 = dev(np.array([[4.0, 1.0], [1.0, 3.0]]))
    a1 = dev(np.array([[1.0, 0.2], [0.2, 0.5]]))
    b0, b1 = dev(np.array([1.0, 2.0])), dev(np.array([0.5, -1.0]))

    def op(t):
        return a0 + t * a1 + t ** 2 * 0.3 * fnp.eye(2)

    def dense(t):
        return fnp.linalg.solve(op(t), b0 + t * b1)

    want = host(funcgrad.derivatives(dense, 8)(0.3))
    for solver in (cg, gmres):
        got = funcgrad.derivatives(
            lambda t, s=solver: s(lambda v: op(t) @ v, b0 + t * b1, tol=1e-13)[0], 8)(0.3)
        assert_close(got, want, rtol=1e-11, atol=1e-11)
    assert rule_kind(linear_solve_p) == "own rule"
    u = lambda x: fnp.sum(cg(lambda v: (a0 + fnp.diag(x ** 2)) @ v, fnp.sin(x),  # noqa: E731
                             tol=1e-13)[0] ** 2)
    ud = lambda x: fnp.sum(fnp.linalg.solve(a0 + fnp.diag(x ** 2), fnp.sin(x)) ** 2)  # noqa: E731
    x = dev(np.array([0.3, -0.5]))
    assert_close(funcgrad.laplacian(u)(x), funcgrad.laplacian(ud)(x), rtol=1e-10)
