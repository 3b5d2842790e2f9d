"""Collapsed second-order Taylor mode (the Laplacian's engine) against the trace of the
Hessian, through every kind of primitive rule and under the other transformations."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.interpreters.collapsed_taylor import collapsed_taylor_flat
from funcgrad.ops.elementwise import mul
from funcgrad.ops.reductions import reduce_sum
from tests.helpers import assert_close, dev, host


def _hessian_trace(f, x):
    return float(np.trace(host(funcgrad.hessian(f)(x)).reshape(x.size, x.size)))


_W = dev(np.random.default_rng(3).normal(size=(3, 4)) / 2)


@funcgrad.custom_jvp
def _softplus(x):
    return fnp.logaddexp(x, 0.0)


@_softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _softplus(x), t * funcgrad.nn.sigmoid(x)


def _scan_body(c, w):
    return fnp.tanh(c * w + 0.1), c


FUNCTIONS = {
    # own Taylor rules (mul, dot_general, tanh, exp, log, sin, div, integer_pow, sqrt ...)
    "mlp": lambda x: fnp.sum(fnp.tanh(fnp.tanh(x @ _W) @ _W.T) ** 2),
    "elementwise": lambda x: fnp.sum(fnp.exp(x[0]) * fnp.sin(x) / (2.0 + x ** 2)
                                     + fnp.log1p(x ** 2) + fnp.sqrt(1.5 + x)),
    # generic rules: elementwise O(K^3) (pow, arctan), linear (gather, transpose, concat)
    "generic": lambda x: fnp.sum(fnp.power(1.5 + x, 2.5) + fnp.arctan(x[::-1] * x))
    + fnp.concatenate([x, x ** 3]).sum(),
    # the fallback through the JVP rule: sorting, linear algebra, a custom derivative
    "fallback": lambda x: fnp.sort(x ** 3)[-1] * 2.0 + fnp.linalg.det(
        fnp.outer(x, x) + fnp.eye(3)) + fnp.sum(_softplus(x)),
    "reductions": lambda x: fnp.max(x ** 2) + funcgrad.nn.logsumexp(x * x[::-1]),
    "select": lambda x: fnp.sum(fnp.where(x > 0.1, x ** 3, fnp.cos(x))),
    # control flow and nested programs
    "scan": lambda x: fnp.sum(lax.scan(_scan_body, x, fnp.array([0.5, 1.5, -1.0]))[0]),
    "cond": lambda x: lax.cond(fnp.sum(x) > 0, lambda v: fnp.sum(v ** 3),
                               lambda v: fnp.sum(fnp.sin(v)), x),
    "fori": lambda x: fnp.sum(lax.fori_loop(0, 3, lambda i, c: fnp.sin(c) * x, x)),
    "jit_inside": lambda x: fnp.sum(funcgrad.jit(lambda v: fnp.tanh(v @ _W))(x) ** 2),
    "integer_side": lambda x: fnp.sum(x ** 2 * fnp.arange(3)) + fnp.argmax(x).astype(float),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_laplacian_is_the_trace_of_the_hessian(name):
    f = FUNCTIONS[name]
    x = dev(np.array([0.3, -0.7, 1.1]))
    assert_close(funcgrad.laplacian(f)(x), _hessian_trace(f, x), rtol=1e-10, atol=1e-10)
    assert_close(funcgrad.jit(funcgrad.laplacian(f))(x), _hessian_trace(f, x), rtol=1e-10,
                 atol=1e-10)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-2, 2), min_size=4, max_size=4))
def test_mlp_laplacian_hypothesis(vals):
    f = FUNCTIONS["mlp"]
    x = dev(np.array(vals[:3]))
    assert_close(funcgrad.laplacian(f)(x), _hessian_trace(f, x), rtol=1e-9, atol=1e-9)


def test_first_and_summed_second_coefficients():
    # f(x) = x0^2 x1 along directions v_i: y1_i = grad f . v_i, sum_i y2_i = sum_i v_i^T H v_i / 2
    x = np.array([1.5, -2.0])
    v = np.array([[1.0, 0.0], [0.5, 2.0], [-1.0, 1.0]])
    outs, firsts, seconds = collapsed_taylor_flat(
        lambda y: [mul(mul(y[0], y[0]), y[1])], [x], [v], 3)
    g = np.array([2 * x[0] * x[1], x[0] ** 2])
    hess = np.array([[2 * x[1], 2 * x[0]], [2 * x[0], 0.0]])
    assert_close(outs[0], x[0] ** 2 * x[1])
    assert_close(firsts[0], v @ g)
    assert_close(seconds[0], sum(vi @ hess @ vi for vi in v) / 2)
    # an affine function has no second coefficient at all
    _, _, seconds = collapsed_taylor_flat(lambda y: [reduce_sum(mul(y, 2.0))], [x], [v], 3)
    assert seconds[0] is None


def test_composes_with_grad_vmap_and_itself():
    rng = np.random.default_rng(0)
    w = rng.normal(size=(3, 3))

    def u(w, y):
        return fnp.sum(fnp.tanh(y @ w) ** 2)

    def loss(w, y):
        return funcgrad.laplacian(lambda z: u(w, z))(y) ** 2

    y = np.array([0.2, -0.4, 0.9])
    g = host(funcgrad.grad(loss)(w, y))
    eps = 1e-6
    for i, j in [(0, 0), (1, 2), (2, 1)]:
        e = np.zeros_like(w)
        e[i, j] = eps
        fd = (float(loss(w + e, y)) - float(loss(w - e, y))) / (2 * eps)
        assert abs(g[i, j] - fd) < 1e-6 * max(1.0, abs(fd))
    ys = rng.normal(size=(4, 3))
    batched = host(funcgrad.vmap(funcgrad.laplacian(lambda z: u(w, z)))(ys))
    looped = np.array([float(funcgrad.laplacian(lambda z: u(w, z))(r)) for r in ys])
    assert_close(batched, looped, rtol=1e-12)
    # the biharmonic operator: laplacian of a laplacian (sum x^4 -> 12 x^2 -> 24 per axis)
    bi = funcgrad.laplacian(funcgrad.laplacian(lambda z: fnp.sum(z ** 4)))(y)
    assert_close(bi, 24.0 * 3, rtol=1e-12)


def test_hutchinson_is_unbiased_and_exact_for_diagonal_hessians():
    f = lambda x: fnp.sum(fnp.sin(x) * x ** 2)  # noqa: E731  (separable: v^T H v is exact)
    x = dev(np.array([0.3, -0.7, 1.1]))
    est = funcgrad.laplacian(f, "hutchinson", key=funcgrad.random.key(1), samples=4)(x)
    assert_close(est, _hessian_trace(f, x), rtol=1e-12)
