"""The linearize interpreter (funcgrad.interpreters.linearize): the primal runs once, the
tangent computation is staged into a linear jaxpr that can be replayed."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.interpreters.jvp import Zero
from funcgrad.interpreters.linearize import eval_linear, linearize_flat


def test_primal_runs_once_and_the_tangent_map_replays() -> None:
    calls = []

    def f(a, b):
        calls.append(1)
        return [fnp.sin(a) * b, b + 1.0]

    x, c = dev(np.array([0.3, 0.9])), dev(np.array([2.0, 3.0]))
    res = linearize_flat(f, [x, c])
    assert len(calls) == 1
    assert_allclose(res.primals_out[0], np.sin(host(x)) * host(c))
    t1 = eval_linear(res, [dev(np.ones(2)), dev(np.zeros(2))])
    t2 = eval_linear(res, [dev(2 * np.ones(2)), dev(np.zeros(2))])
    assert len(calls) == 1  # replaying never reruns f
    assert_allclose(t1[0], np.cos(host(x)) * host(c))
    assert_allclose(t2[0], 2 * host(t1[0]))  # linear in the tangents


def test_outputs_without_derivative_are_marked_zero() -> None:
    res = linearize_flat(lambda a: [a * 2.0, fnp.floor(a), fnp.ones(2)], [np.ones(2)])
    assert res.zero_outputs == [False, True, True]
    outs = eval_linear(res, [np.ones(2)])
    assert type(outs[1]) is Zero and type(outs[2]) is Zero


def test_integer_inputs_are_not_linearized() -> None:
    res = linearize_flat(lambda a, n: [a * n], [np.ones(2), np.arange(2)])
    assert res.in_tangent_avals[1].dtype == funcgrad.float0
    assert_allclose(eval_linear(res, [np.ones(2), np.zeros(2, funcgrad.float0)])[0],
                    np.arange(2.0))


def test_public_linearize_agrees_with_jvp() -> None:
    f = lambda v: fnp.sum(fnp.tanh(v) ** 2)  # noqa: E731
    x, t = np.array([0.1, -0.4, 2.0]), np.array([1.0, 0.5, -1.0])
    y, f_jvp = funcgrad.linearize(f, x)
    y2, dy = funcgrad.jvp(f, (x,), (t,))
    assert_allclose(y, y2)
    assert_allclose(f_jvp(t), dy)


# -- grad of one real scalar: tangents computed forward (ForwardTangents) ----------------------


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


def test_forward_tangents_stage_from_a_custom_vjp_on_and_keep_earlier_paths() -> None:
    # Tangents computed forward before the custom function (sin x * 3, and the x**2 path that
    # never meets it) enter the staged program scaled by its input; the bwd rule, which
    # triples its cotangent and clips it, runs on the true cotangent in a backward pass.
    @funcgrad.custom_vjp
    def odd(y):
        return y

    odd.defvjp(lambda y: (y, None), lambda res, g: (fnp.clip(3.0 * g, -4.0, 4.0),))

    def f(x):
        u = fnp.sin(x) * 3.0
        return odd(u) * x + x ** 2 + odd(x) * 0.5

    for x in (0.3, 1.5):  # 3 x = 4.5 is clipped
        # d/dx: clip(3 x) * 3 cos x + sin(x) * 3 + 2 x + clip(1.5)
        want = np.clip(3 * x, -4, 4) * 3 * np.cos(x) + 3 * np.sin(x) + 2 * x + 1.5
        assert_allclose(funcgrad.grad(f)(x), want)
        assert_allclose(funcgrad.jit(funcgrad.grad(f))(x), want)
        assert_allclose(funcgrad.jit(funcgrad.grad(funcgrad.grad(f)))(x),
                        _reverse_grad(_reverse_grad(f))(x))


def test_forward_gradient_zero_after_staging_is_a_zero_array() -> None:
    # float32 into float64 stages the tangents (a change of precision); the second derivative
    # of the linear function is zero: an array of the input's shape and dtype, eagerly
    # (eager tape off: the linearize path) and under jit.
    x = np.full((1, 1, 1), 0.5, np.float32)
    s = lambda x: fnp.sum(fnp.squeeze(x) * np.float64(0.7))
    inner = lambda x: fnp.sum(funcgrad.grad(s)(x) * 0.3)
    with funcgrad.config.override(funcgrad.config.eager_tape, False):
        for g in (funcgrad.grad(inner), funcgrad.jit(funcgrad.grad(inner))):
            r = g(x)
            assert r.dtype == np.float32 and r.shape == (1, 1, 1) and float(r.sum()) == 0.0


def test_forward_tangents_keep_reverse_modes_nan_through_dropped_values() -> None:
    # A selection drops the NaN tangent of sqrt at -1; reverse mode (eager grad, JAX's grad)
    # multiplies it by a zero cotangent and gives NaN, so jit and vmap of grad must too
    # (JAX 0.10.2: nan under grad, jit(grad) and vmap(grad)).
    f = lambda x: fnp.where(x > 0, fnp.sqrt(x), 0.0)
    g = lambda x: fnp.sqrt(fnp.stack([x, x + 1.0]))[1]
    h = lambda x: fnp.clip(fnp.log(x), -1.0, 1.0)
    for fn, x in ((f, -1.0), (g, 0.0), (h, 0.0)):
        assert np.isnan(host(funcgrad.grad(fn)(x)))
        assert np.isnan(host(funcgrad.jit(funcgrad.grad(fn))(x)))
        assert np.isnan(host(funcgrad.grad(funcgrad.grad(fn))(x)))
    got = host(funcgrad.vmap(funcgrad.grad(f))(dev(np.array([-1.0, 4.0]))))
    assert np.isnan(got[0]) and got[1] == 0.25
    # Where nothing dropped is NaN, the derivative is unchanged.
    assert_allclose(funcgrad.jit(funcgrad.grad(funcgrad.grad(
        lambda x: fnp.where(x > 0, x ** 3, 0.0))))(2.0), 12.0)


def test_forward_tangents_keep_reverse_modes_selection_in_a_custom_jvp_rule() -> None:
    # hard_silu(x) = x * relu6(x + 3) / 6, relu6's custom rule selects its tangent: reverse
    # mode selects the infinite cotangent x away at x = inf (JAX 0.10.2 and the eager tape:
    # 1.0); forward, x * 0 would be nan.
    f = funcgrad.nn.hard_silu
    for g in (funcgrad.grad(f), funcgrad.jit(funcgrad.grad(f))):
        assert host(g(np.inf)) == 1.0
    assert_allclose(funcgrad.vmap(funcgrad.grad(f))(dev(np.array([np.inf, 1.0]))),
                    np.array([1.0, 5.0 / 6.0]))
    assert host(funcgrad.jit(funcgrad.grad(funcgrad.grad(f)))(np.inf)) == 0.0
