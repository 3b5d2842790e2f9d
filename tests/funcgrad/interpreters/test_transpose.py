"""The transpose interpreter (funcgrad.interpreters.transpose): cotangents of linear jaxprs,
and reverse mode as linearize then transpose."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.interpreters.jvp import Zero
from funcgrad.interpreters.transpose import UndefinedPrimal, backward_pass, is_undefined, vjp_flat


def test_backward_pass_of_a_linear_jaxpr() -> None:
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    closed = funcgrad.make_jaxpr(lambda v: fnp.matmul(a, v) * 2.0)(np.ones(2))
    arg = UndefinedPrimal(closed.jaxpr.invars[0].aval)
    assert is_undefined(arg) and not is_undefined(np.ones(2))
    (ct,) = backward_pass(closed.jaxpr, closed.consts, [arg], [np.array([1.0, 0.0])])
    assert_allclose(ct, 2.0 * a.T @ np.array([1.0, 0.0]))


def test_unused_inputs_get_symbolic_zero_cotangents() -> None:
    closed = funcgrad.make_jaxpr(lambda u, v: u * 3.0)(np.ones(2), np.ones(2))
    args = [UndefinedPrimal(v.aval) for v in closed.jaxpr.invars]
    cu, cv = backward_pass(closed.jaxpr, closed.consts, args, [np.ones(2)])
    assert_allclose(cu, 3.0 * np.ones(2))
    assert type(cv) is Zero


def test_vjp_flat_is_the_transpose_of_jvp() -> None:
    def f(a, b):
        return [fnp.sin(a) * b, fnp.sum(a * a)]

    x, y = np.array([0.2, 0.7]), np.array([1.5, -1.0])
    outs, f_vjp, _ = vjp_flat(f, [x, y])
    ct = [np.array([1.0, 2.0]), np.array(0.5)]
    gx, gy = f_vjp(ct)
    # <ct, J t> == <J^T ct, t> for a few tangents
    for t in (np.array([1.0, 0.0]), np.array([0.3, -2.0])):
        _, (j0, j1) = funcgrad.jvp(lambda a: tuple(f(a, y)), (x,), (t,))
        assert float(np.dot(ct[0], j0) + ct[1] * j1) == pytest.approx(float(np.dot(gx, t)))
    assert_allclose(gy, ct[0] * np.sin(x))


def test_linear_transpose_refuses_non_linear_functions() -> None:
    with pytest.raises(TypeError, match="not linear"):
        funcgrad.linear_transpose(lambda v: v * v, np.ones(2))(np.ones(2))


# -- grad of one real scalar: the linear map evaluated forward (gradient_by_forward) -------------


def _reverse_grad(f):
    """The gradient by transposition, for comparison: vjp never evaluates forward."""
    return lambda x: funcgrad.vjp(f, x)[1](fnp.ones_like(f(x)))[0]


@pytest.mark.parametrize("order", [1, 2, 3, 5])
def test_nested_grad_of_a_scalar_function_matches_reverse_mode(order) -> None:
    f = lambda x: fnp.tanh(fnp.sin(x) * x) + fnp.exp(-x * x)
    fwd, rev = f, f
    for _ in range(order):
        fwd, rev = funcgrad.grad(fwd), _reverse_grad(rev)
    for x in (0.3, -1.2):
        assert_allclose(funcgrad.jit(fwd)(x), rev(x), rtol=1e-12, atol=1e-12)
        assert_allclose(fwd(x), rev(x), rtol=1e-12, atol=1e-12)


def test_nested_scalar_grads_stage_a_forward_program() -> None:
    # Reverse over reverse staged 1099 equations at order 6; forward over forward 455.
    g = lambda x: fnp.tanh(fnp.tanh(fnp.tanh(x)))
    for _ in range(6):
        g = funcgrad.grad(g)
    assert len(funcgrad.make_jaxpr(g)(0.3).jaxpr.eqns) < 600


def test_grad_by_forward_shapes_as_the_input() -> None:
    f = lambda x: fnp.sum(fnp.sin(x) * x)
    x = np.array([[0.5]], np.float32)
    want = np.sin(x) + x * np.cos(x)
    for g in (funcgrad.grad(f), funcgrad.jit(funcgrad.grad(f))):
        r = g(x)
        assert r.dtype == np.float32 and r.shape == (1, 1)
        assert_allclose(r, want)
    r = funcgrad.jit(funcgrad.grad(lambda x: fnp.sum(funcgrad.grad(f)(x))))(x)
    assert r.shape == (1, 1)
    assert_allclose(r, 2 * np.cos(x) - x * np.sin(x))


@pytest.mark.parametrize("in_dtype, mid_dtype", [(np.float64, np.float32),
                                                 (np.float32, np.float64)])
def test_grad_through_another_precision_is_reverse_mode(in_dtype, mid_dtype) -> None:
    # Forward, the tangent would be rounded to float32 where reverse mode carries an exact
    # cotangent of one: mixed precision keeps the transpose (eager and jit agree exactly).
    f = lambda x: fnp.sin(x).astype(mid_dtype).astype(in_dtype) * 3.0
    x = in_dtype(0.5)
    eager, jitted = funcgrad.grad(f)(x), funcgrad.jit(funcgrad.grad(f))(x)
    rev = _reverse_grad(f)(x)
    assert eager.dtype == jitted.dtype == in_dtype
    assert float(eager) == float(jitted) == float(rev)


def test_grad_by_forward_of_a_constant_and_with_aux() -> None:
    assert float(funcgrad.jit(funcgrad.grad(lambda x: 2.0))(1.5)) == 0.0
    g, aux = funcgrad.jit(funcgrad.grad(lambda x: (x * x, fnp.sin(x)), has_aux=True))(3.0)
    assert float(g) == 6.0 and float(aux) == float(np.sin(3.0))


def test_grad_of_a_scalar_runs_a_custom_vjp_backward_rule() -> None:
    # A bwd that is not linear in its cotangent cannot be evaluated forward (transposed):
    # grad keeps reverse mode there, nested and under jit, and gives the clipped gradient.
    @funcgrad.custom_vjp
    def clip_gradient(x):
        return x

    clip_gradient.defvjp(lambda x: (x, None), lambda res, g: (fnp.clip(g, -1.0, 1.0),))
    f = lambda x: 10.0 * clip_gradient(x * x)
    assert float(funcgrad.jit(funcgrad.grad(f))(2.0)) == 4.0
    assert float(funcgrad.grad(lambda y: funcgrad.grad(f)(y) * y)(2.0)) == 8.0
    assert float(funcgrad.jit(funcgrad.grad(funcgrad.grad(f)))(2.0)) == 2.0


_UNARY = {
    "sin": fnp.sin, "cos": fnp.cos, "tanh": fnp.tanh, "exp": lambda x: fnp.exp(0.3 * x),
    "square": lambda x: x * x, "log1p_sq": lambda x: fnp.log1p(x * x),
    "recip": lambda x: 1.0 / (2.0 + fnp.sin(x)),
}
_BINARY = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b,
           "sub": lambda a, b: a - 0.5 * b}


@settings(max_examples=40, deadline=None)
@given(ops=st.lists(st.tuples(st.sampled_from(sorted(_UNARY)), st.sampled_from(sorted(_BINARY))),
                    min_size=1, max_size=4),
       x=st.floats(-1.5, 1.5), order=st.integers(1, 3))
def test_grad_by_forward_matches_the_transpose_on_random_compositions(ops, x, order) -> None:
    # Each step applies a unary function and combines with the input: y <- b(u(y), x).
    def f(x):
        y = x
        for u, b in ops:
            y = _BINARY[b](_UNARY[u](y), x)
        return y

    fwd, rev = f, f
    for _ in range(order):
        fwd, rev = funcgrad.grad(fwd), _reverse_grad(rev)
    want = rev(x)
    assert_allclose(fwd(x), want, rtol=1e-10, atol=1e-10)
    assert_allclose(funcgrad.jit(fwd)(x), want, rtol=1e-10, atol=1e-10)
