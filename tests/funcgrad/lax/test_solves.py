"""``lax.custom_linear_solve`` and ``lax.custom_root``: values and implicit derivatives
against values recorded from JAX 0.10.2 (x64), finite differences of every order, batching
against a loop, ``jit``, and JAX's errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.test_util import check_grads


def _close(actual, desired, **kw) -> None:
    assert_allclose(actual, np.asarray(host(desired), dtype=float), **kw)


_A = np.array([[3.2, 0.4, -0.6], [0.1, 2.5, 0.7], [-0.3, 0.2, 4.1]])
_B = np.array([0.5, -1.0, 2.0])


def _solve(a, b, **kw):
    kw.setdefault("transpose_solve", lambda vm, r: fnp.linalg.solve(fnp.swapaxes(a, -1, -2), r))
    return lax.custom_linear_solve(lambda x: a @ x, b, lambda mv, r: fnp.linalg.solve(a, r), **kw)


def _cg(matvec, b):
    """Conjugate gradients in a while_loop: never differentiated by custom_linear_solve."""
    def body(state):
        x, r, p, k = state
        ap = matvec(p)
        alpha = (r @ r) / (p @ ap)
        x, r_new = x + alpha * p, r - alpha * ap
        return x, r_new, r_new + (r_new @ r_new) / (r @ r) * p, k + 1

    def more(state):
        return (state[3] < 20) & (fnp.sqrt(state[1] @ state[1]) > 1e-13)

    return lax.while_loop(more, body, (fnp.zeros_like(b), b, b, 0))[0]


def test_linear_solve_values_and_gradients_as_jax() -> None:
    a, b = dev(_A), dev(_B)
    # JAX 0.10.2: jax.lax.custom_linear_solve with jnp.linalg.solve / its transpose
    _close(_solve(a, b), np.array([0.3278869856519816, -0.5641236331458188,
                                            0.5393148347133557]))
    ga, gb = funcgrad.grad(lambda a, b: (_solve(a, b) ** 2).sum(), argnums=(0, 1))(a, b)
    _close(gb, np.array([0.2578829720132246, -0.5237797978659082, 0.3902451978392152]))
    _close(ga, [[-0.08455647034439054, 0.14547787909854176, -0.13908011242670115],
                         [0.17174057906765688, -0.29547656254049876, 0.2824822151122472],
                         [-0.12795632158466147, 0.2201465388227669, -0.21046502437033715]])
    _, t = funcgrad.jvp(_solve, (a, b), (dev(np.ones((3, 3))), dev(np.ones(3))))
    _close(t, np.array([0.22311541506435362, 0.22069264155427673, 0.1755409534119347]))


def test_linear_solve_finite_differences() -> None:
    check_grads(lambda a, b: _solve(a, b), (dev(_A), dev(_B)), order=2)
    s = _A @ _A.T
    check_grads(lambda s, b: lax.custom_linear_solve(lambda x: s @ x, b, _cg, symmetric=True),
                (dev(s), dev(_B)), order=2, modes=("rev",))


def test_linear_solve_through_a_while_loop_solver() -> None:
    s = dev(_A @ _A.T)
    f = lambda s, b: (lax.custom_linear_solve(lambda x: s @ x, b, _cg, symmetric=True) ** 2).sum()
    want = funcgrad.grad(lambda s, b: (fnp.linalg.solve(s, b) ** 2).sum(), argnums=(0, 1))
    for got, ref in zip(funcgrad.grad(f, argnums=(0, 1))(s, dev(_B)), want(s, dev(_B))):
        _close(got, ref, rtol=1e-8, atol=1e-12)
    _close(funcgrad.jit(f)(s, dev(_B)), (np.linalg.solve(_A @ _A.T, _B) ** 2).sum())


def test_linear_solve_batches_and_jits() -> None:
    rng = np.random.default_rng(0)
    many = dev(rng.normal(size=(4, 3, 3)) + 4 * np.eye(3))
    bs = dev(rng.normal(size=(4, 3)))
    loop = np.stack([host(_solve(many[i], bs[i])) for i in range(4)])
    _close(funcgrad.vmap(_solve)(many, bs), loop)
    _close(funcgrad.vmap(_solve, (0, None))(many, dev(_B)),
                    np.stack([host(_solve(many[i], dev(_B))) for i in range(4)]))
    _close(funcgrad.vmap(_solve, (None, 0))(dev(_A), bs),
                    np.stack([host(_solve(dev(_A), bs[i])) for i in range(4)]))
    g = funcgrad.grad(lambda a, b: (_solve(a, b) ** 2).sum())
    _close(funcgrad.vmap(g)(many, bs), np.stack([host(g(many[i], bs[i]))
                                                          for i in range(4)]))
    _close(funcgrad.jit(g)(dev(_A), dev(_B)), g(dev(_A), dev(_B)))


def test_linear_solve_pytree_and_aux() -> None:
    d = dev(np.array([2.0, 4.0]))

    def solve(mv, r):
        return {"u": r["u"] / d, "v": r["v"] / 5.0}, np.int32(7)

    def f(d, b):
        return lax.custom_linear_solve(lambda x: {"u": d * x["u"], "v": 5.0 * x["v"]}, b,
                                       solve, symmetric=True, has_aux=True)

    b = {"u": dev(np.array([1.0, 2.0])), "v": dev(np.array(3.0))}
    x, aux = f(d, b)
    _close(x["u"], [0.5, 0.5])
    _close(x["v"], 0.6)
    assert int(aux) == 7
    g = funcgrad.grad(lambda d: f(d, b)[0]["u"].sum())(d)
    _close(g, [-0.25, -0.125])


def test_linear_solve_errors_as_jax() -> None:
    plain = lambda b: lax.custom_linear_solve(lambda x: dev(_A) @ x, b,
                                              lambda mv, r: fnp.linalg.solve(dev(_A), r))
    # Forward mode needs no transpose_solve; reverse mode does (JAX's TypeError).
    funcgrad.jvp(plain, (dev(_B),), (dev(np.ones(3)),))
    with pytest.raises(TypeError, match="transpose_solve required"):
        funcgrad.grad(lambda b: plain(b).sum())(dev(_B))
    with pytest.raises(ValueError, match="shapes must match"):
        lax.custom_linear_solve(lambda x: x, dev(_B), lambda mv, r: r[:2])
    with pytest.raises(TypeError, match="structure"):
        lax.custom_linear_solve(lambda x: x, dev(_B), lambda mv, r: (r, r))


def _newton(f, x):
    return lax.fori_loop(0, 30, lambda i, x: x - f(x) / funcgrad.grad(f)(x), x)


def _cbrt(a):
    return lax.custom_root(lambda x: x ** 3 - a, 1.0, _newton, lambda g, y: y / g(1.0))


def test_custom_root_scalar_as_jax() -> None:
    # JAX 0.10.2: the same program with jax.lax.custom_root
    _close(_cbrt(dev(2.0)), 1.2599210498948732)
    _close(funcgrad.grad(_cbrt)(dev(2.0)), 0.2099868416491455)
    _close(funcgrad.grad(funcgrad.grad(_cbrt))(dev(2.0)), -0.06999561388304848)
    _close(funcgrad.vmap(funcgrad.grad(_cbrt))(dev(np.array([2.0, 3.0]))),
                    [0.2099868416491455, 0.16024995], rtol=1e-7)
    _close(funcgrad.jit(funcgrad.grad(_cbrt))(dev(2.0)), 0.2099868416491455)
    check_grads(_cbrt, (dev(2.0),), order=2)


def _system(a, b):
    def solve(f, x):
        jac = funcgrad.jacfwd(f)

        def body(i, c):
            x, k = c
            return x - fnp.linalg.solve(jac(x), f(x)), k + 1

        return lax.fori_loop(0, 20, body, (x, 0))

    return lax.custom_root(lambda x: a @ x + 0.1 * x ** 3 - b, fnp.zeros(2), solve,
                           lambda g, y: fnp.linalg.solve(funcgrad.jacfwd(g)(y), y),
                           has_aux=True)


def test_custom_root_vector_has_aux_as_jax() -> None:
    a, b = dev(np.array([[2.0, 0.5], [0.3, 1.5]])), dev(np.array([1.0, 2.0]))
    x, k = _system(a, b)
    _close(x, [0.2039892, 1.18234554], rtol=1e-7)
    assert int(k) == 20
    ga, gb = funcgrad.grad(lambda a, b: _system(a, b)[0].sum(), argnums=(0, 1))(a, b)
    _close(ga, [[-0.08897413, -0.5157046], [-0.08310076, -0.48166186]], rtol=1e-7)
    _close(gb, [0.4361708, 0.40737825], rtol=1e-7)
    _close(funcgrad.jacfwd(lambda b: _system(a, b)[0])(b),
                    [[0.51697398, -0.13467197], [-0.08080318, 0.54205022]], rtol=1e-7)
    check_grads(lambda a, b: _system(a, b)[0], (a, b), order=1)


def test_custom_root_errors() -> None:
    with pytest.raises(TypeError, match="structure of initial_guess"):
        lax.custom_root(lambda x: x, 1.0, lambda f, x: (x, x), lambda g, y: y)
    with pytest.raises(TypeError, match="must be callable"):
        lax.custom_root(lambda x: x, 1.0, None, lambda g, y: y)


def test_custom_root_returns_arrays() -> None:
    # JAX: an Array even when solve returns a Python number (it gave back a float here)
    r = lax.custom_root(lambda v: v - 1.0, 0.0, lambda f, x0: x0 + 1.0, lambda g, y: y)
    assert hasattr(r, "shape") and r.shape == () and float(r) == 1.0
    g = funcgrad.grad(lambda a: lax.custom_root(lambda v: v - a, 0.0, lambda f, x0: x0 + 1.0,
                                                lambda g, y: y))(1.0)
    assert float(g) == 1.0
