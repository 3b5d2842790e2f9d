"""custom_jvp / custom_vjp: the rules are used, compose with every transformation, and close
over traced values correctly."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from helpers import assert_close, dev, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import custom_jvp, custom_vjp
from funcgrad.test_util import check_grads

X3 = np.array([0.3, -0.7, 1.1])
Y3 = np.array([1.5, 2.0, -0.5])


# ---------------------------------------------------------------------------------------------
# custom_jvp


@custom_jvp
def log1pexp(x):
    return fnp.log(1.0 + fnp.exp(x))


@log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), t * (1.0 - 1.0 / (1.0 + fnp.exp(x)))


@custom_jvp
def sin_with_fake_rule(x):
    return fnp.sin(x)


@sin_with_fake_rule.defjvp
def _fake_jvp(primals, tangents):
    # Deliberately not the true derivative, so tests can see which rule ran.
    (x,), (t,) = primals, tangents
    return sin_with_fake_rule(x), 3.0 * x * t


def test_custom_jvp_evaluates_the_function() -> None:
    assert_close(log1pexp(dev(X3)), np.log1p(np.exp(X3)))


def test_custom_jvp_rule_is_used_in_every_mode() -> None:
    x = dev(X3)
    want = 3.0 * X3
    assert_close(funcgrad.jvp(sin_with_fake_rule, (x,), (fnp.ones_like(x),))[1], want)
    assert_close(funcgrad.grad(lambda v: fnp.sum(sin_with_fake_rule(v)))(x), want)
    assert_close(funcgrad.jacfwd(sin_with_fake_rule)(x), np.diag(want))
    assert_close(funcgrad.jacrev(sin_with_fake_rule)(x), np.diag(want))
    _, f_jvp = funcgrad.linearize(sin_with_fake_rule, x)
    assert_close(f_jvp(fnp.ones_like(x)), want)
    # Second order differentiates the rule: d/dx (3 x) = 3.
    assert_close(funcgrad.grad(funcgrad.grad(sin_with_fake_rule))(0.4), 3.0)
    assert_close(funcgrad.hessian(lambda v: fnp.sum(sin_with_fake_rule(v)))(x), 3.0 * np.eye(3))


def test_custom_jvp_fixes_a_numerically_unstable_gradient() -> None:
    g = funcgrad.grad(lambda x: log1pexp(x))
    with np.errstate(over="ignore", invalid="ignore"):
        naive = funcgrad.grad(lambda x: fnp.log(1.0 + fnp.exp(x)))(1000.0)
        assert np.isnan(host(naive))
        assert float(g(1000.0)) == 1.0
    assert_close(g(0.0), 0.5)


def test_custom_jvp_check_grads() -> None:
    check_grads(log1pexp, (dev(X3),), order=2)


def test_custom_jvp_python_control_flow_on_values() -> None:
    @custom_jvp
    def relu_ish(x):
        return x * x if float(x) > 0 else 0.0 * x

    @relu_ish.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return relu_ish(x), (2.0 * x * t if float(x) > 0 else 0.0 * t)

    assert float(relu_ish(2.0)) == 4.0
    assert float(funcgrad.grad(relu_ish)(2.0)) == 4.0
    assert float(funcgrad.grad(relu_ish)(-2.0)) == 0.0
    assert float(funcgrad.jvp(relu_ish, (3.0,), (1.0,))[1]) == 6.0


def test_defjvps_per_argument() -> None:
    @custom_jvp
    def f(x, y):
        return fnp.sin(x) * y

    f.defjvps(lambda t, ans, x, y: fnp.cos(x) * t * y, lambda t, ans, x, y: fnp.sin(x) * t)
    x, y = dev(X3), dev(Y3)
    gx, gy = funcgrad.grad(lambda a, b: fnp.sum(f(a, b)), (0, 1))(x, y)
    assert_close(gx, np.cos(X3) * Y3)
    assert_close(gy, np.sin(X3))
    check_grads(f, (x, y), order=2)


def test_defjvps_none_means_zero() -> None:
    @custom_jvp
    def f(x, y):
        return x * y

    f.defjvps(None, lambda t, ans, x, y: x * t)
    gx, gy = funcgrad.grad(f, (0, 1))(2.0, 3.0)
    assert float(gx) == 0.0 and float(gy) == 2.0


def test_custom_jvp_nondiff_argnums() -> None:
    @functools.partial(custom_jvp, nondiff_argnums=(0,))
    def apply(fn, x):
        return fn(x)

    @apply.defjvp
    def _(fn, primals, tangents):
        (x,), (t,) = primals, tangents
        # the rule gets the nondiff argument first
        return apply(fn, x), 10.0 * t

    assert float(apply(fnp.sin, 0.0)) == 0.0
    assert float(funcgrad.grad(lambda x: apply(fnp.sin, x))(0.3)) == 10.0
    assert float(funcgrad.jvp(lambda x: apply(fnp.cos, x), (0.3,), (2.0,))[1]) == 20.0


def test_custom_jvp_pytrees_in_and_out() -> None:
    @custom_jvp
    def f(p):
        return {"s": fnp.sin(p["a"]) * p["b"], "t": (p["a"] + p["b"],)}

    @f.defjvp
    def _(primals, tangents):
        (p,), (t,) = primals, tangents
        out = f(p)
        return out, {
            "s": fnp.cos(p["a"]) * t["a"] * p["b"] + fnp.sin(p["a"]) * t["b"],
            "t": (t["a"] + t["b"],),
        }

    p = {"a": dev(X3), "b": dev(Y3)}
    check_grads(f, (p,), order=2)
    jf = funcgrad.jacfwd(f)(p)
    assert set(jf) == {"s", "t"} and set(jf["s"]) == {"a", "b"}
    assert host(jf["s"]["a"]).shape == (3, 3)


def test_custom_jvp_integer_argument_gets_float0_tangent() -> None:
    seen = []

    @custom_jvp
    def scale(x, n):
        return x * n

    @scale.defjvp
    def _(primals, tangents):
        (x, n), (tx, tn) = primals, tangents
        seen.append(np.asarray(tn).dtype)
        return scale(x, n), tx * n

    assert float(funcgrad.grad(scale)(2.0, 3)) == 3.0
    assert seen and seen[0] == funcgrad.float0


def test_custom_jvp_vmap_matches_loop() -> None:
    xs = dev(np.array([[0.1, 0.2], [0.3, -0.4], [1.0, 2.0]]))
    assert_close(funcgrad.vmap(log1pexp)(xs), np.log1p(np.exp(host(xs))))
    g = funcgrad.vmap(funcgrad.grad(lambda v: fnp.sum(sin_with_fake_rule(v))))(xs)
    assert_close(g, 3.0 * host(xs))
    # the rule is batched together with the function
    jv = funcgrad.vmap(lambda v: funcgrad.jvp(sin_with_fake_rule, (v,), (fnp.ones_like(v),))[1])
    assert_close(jv(xs), 3.0 * host(xs))
    # and jvp of vmap (the batched call keeps the custom rule)
    assert_close(funcgrad.jvp(funcgrad.vmap(sin_with_fake_rule), (xs,), (fnp.ones_like(xs),))[1],
           3.0 * host(xs))


def test_custom_jvp_make_jaxpr() -> None:
    jaxpr = funcgrad.make_jaxpr(sin_with_fake_rule)(dev(X3))
    text = str(jaxpr)
    assert "custom_jvp_call" in text and "sin" in text and "_fake_jvp" in text
    assert_close(jaxpr(dev(X3))[0], np.sin(X3))
    # The staged call still carries the rule: differentiate the jaxpr's evaluation.
    assert_close(funcgrad.jvp(lambda v: jaxpr(v)[0], (dev(X3),), (dev(np.ones(3)),))[1], 3.0 * X3)
    g = funcgrad.make_jaxpr(funcgrad.grad(lambda v: fnp.sum(sin_with_fake_rule(v))))(dev(X3))
    assert_close(g(dev(X3))[0], 3.0 * X3)


def test_custom_jvp_errors() -> None:
    @custom_jvp
    def no_rule(x):
        return x

    with pytest.raises(AttributeError, match="defjvp"):
        funcgrad.grad(no_rule)(1.0)

    @custom_jvp
    def bad_shape(x):
        return x * 2.0

    bad_shape.defjvp(lambda p, t: (bad_shape(p[0]), fnp.ones(5)))
    with pytest.raises(ValueError, match="shape"):
        funcgrad.jvp(bad_shape, (dev(X3),), (dev(X3),))

    @custom_jvp
    def not_pair(x):
        return x

    not_pair.defjvp(lambda p, t: p[0])
    with pytest.raises(TypeError, match="pair"):
        funcgrad.grad(not_pair)(1.0)

    with pytest.raises(TypeError, match="nondiff_argnums"):
        custom_jvp(lambda f, x: x, nondiff_argnums=(0,)).defjvps(None, None)


def test_custom_jvp_keyword_arguments() -> None:
    @custom_jvp
    def f(x, scale=2.0):
        return x * scale

    f.defjvp(lambda p, t: (f(*p), t[0] * p[1]))
    assert float(funcgrad.grad(lambda x: f(x, scale=3.0))(1.0)) == 3.0
    assert float(funcgrad.grad(lambda x: f(x))(1.0)) == 2.0


# ---------------------------------------------------------------------------------------------
# custom_vjp


@custom_vjp
def clip_gradient(x):
    return x


clip_gradient.defvjp(lambda x: (x, None), lambda res, g: (fnp.clip(g, -1.0, 1.0),))


@custom_vjp
def sin_mul(x, y):
    return fnp.sin(x) * y


def _sin_mul_fwd(x, y):
    return sin_mul(x, y), (fnp.cos(x), fnp.sin(x), y)


def _sin_mul_bwd(res, g):
    c, s, y = res
    return c * g * y, s * g


sin_mul.defvjp(_sin_mul_fwd, _sin_mul_bwd)


def _sin_mul_ref(x, y):
    return fnp.sin(x) * y


def test_custom_vjp_bwd_runs_in_the_backward_pass() -> None:
    # The true derivative of 10 * x is 10; the clipping bwd says 1.
    assert float(funcgrad.grad(lambda x: 10.0 * clip_gradient(x))(2.0)) == 1.0
    g = funcgrad.grad(lambda x: fnp.sum(fnp.array([10.0, 0.5, -3.0]) * clip_gradient(x)))
    assert_close(g(dev(X3)), np.array([1.0, 0.5, -1.0]))
    calls = []

    @custom_vjp
    def ident(x):
        return x

    def bwd(res, g):
        calls.append(1)
        return (7.0 * g,)

    ident.defvjp(lambda x: (x, None), bwd)
    assert float(funcgrad.grad(ident)(1.0)) == 7.0
    _, pull = funcgrad.vjp(ident, 1.0)
    n = len(calls)
    assert float(pull(2.0)[0]) == 14.0 and len(calls) == n + 1
    # under a staged grad, too
    assert float(funcgrad.make_jaxpr(funcgrad.grad(ident))(1.0)(1.0)[0]) == 7.0


def test_custom_vjp_gradients_match_autodiff() -> None:
    x, y = dev(X3), dev(Y3)
    loss = lambda a, b: fnp.sum(sin_mul(a, b) ** 2)  # noqa: E731
    loss_ref = lambda a, b: fnp.sum(_sin_mul_ref(a, b) ** 2)  # noqa: E731
    assert_close(funcgrad.grad(loss, (0, 1))(x, y), funcgrad.grad(loss_ref, (0, 1))(x, y))
    check_grads(sin_mul, (x, y), order=2)


def test_custom_vjp_forward_mode_transposes_bwd() -> None:
    x, y = dev(X3), dev(Y3)
    t = (dev(np.array([1.0, -2.0, 0.5])), dev(np.array([0.3, 0.1, 2.0])))
    assert_close(funcgrad.jvp(sin_mul, (x, y), t)[1], funcgrad.jvp(_sin_mul_ref, (x, y), t)[1])
    for jac in (funcgrad.jacfwd, funcgrad.jacrev):
        assert_close(jac(sin_mul, (0, 1))(x, y), jac(_sin_mul_ref, (0, 1))(x, y))
    _, f_jvp = funcgrad.linearize(sin_mul, x, y)
    assert_close(f_jvp(*t), funcgrad.jvp(_sin_mul_ref, (x, y), t)[1])


def test_hessian_and_jacfwd_of_a_custom_vjp_function() -> None:
    x, y = dev(X3), dev(Y3)
    loss = lambda a, b: fnp.sum(sin_mul(a, b) ** 2 + a * b)  # noqa: E731
    loss_ref = lambda a, b: fnp.sum(_sin_mul_ref(a, b) ** 2 + a * b)  # noqa: E731
    assert_close(funcgrad.hessian(loss, (0, 1))(x, y), funcgrad.hessian(loss_ref, (0, 1))(x, y))
    assert_close(funcgrad.jacfwd(funcgrad.jacfwd(sin_mul))(x, y),
           funcgrad.jacfwd(funcgrad.jacfwd(_sin_mul_ref))(x, y))
    assert_close(funcgrad.jacrev(funcgrad.jacfwd(sin_mul))(x, y),
           funcgrad.jacrev(funcgrad.jacfwd(_sin_mul_ref))(x, y))
    v = (dev(np.array([1.0, 0.0, -1.0])), dev(np.array([0.5, 0.5, 0.5])))
    assert_close(funcgrad.hvp(loss, (x, y), v), funcgrad.hvp(loss_ref, (x, y), v))


def test_forward_mode_of_a_nonlinear_bwd_is_a_clear_error() -> None:
    with pytest.raises(Exception, match="linear in the cotangent"):
        funcgrad.jvp(clip_gradient, (2.0,), (1.0,))


def test_custom_vjp_none_cotangent_means_zero() -> None:
    @custom_vjp
    def f(x, y):
        return x * y

    f.defvjp(lambda x, y: (f(x, y), x), lambda x, g: (None, x * g))
    gx, gy = funcgrad.grad(f, (0, 1))(2.0, 3.0)
    assert float(gx) == 0.0 and float(gy) == 2.0


def test_custom_vjp_nondiff_argnums() -> None:
    @functools.partial(custom_vjp, nondiff_argnums=(0,))
    def clip_to(bound, x):
        return x

    def fwd(bound, x):
        return x, None

    def bwd(bound, res, g):
        return (fnp.clip(g, -bound, bound),)

    clip_to.defvjp(fwd, bwd)
    assert float(funcgrad.grad(lambda x: 5.0 * clip_to(2.0, x))(1.0)) == 2.0
    assert float(funcgrad.grad(lambda x: 5.0 * clip_to(10.0, x))(1.0)) == 5.0


def test_custom_vjp_pytrees_and_residuals() -> None:
    @custom_vjp
    def f(p):
        return {"y": p["w"] * p["x"], "z": fnp.sum(p["x"])}

    def fwd(p):
        return f(p), {"w": p["w"], "x": p["x"]}

    def bwd(res, ct):
        return ({"w": ct["y"] * res["x"], "x": ct["y"] * res["w"] + ct["z"]},)

    f.defvjp(fwd, bwd)
    p = {"w": dev(X3), "x": dev(Y3)}
    check_grads(f, (p,), order=2)
    jr = funcgrad.jacrev(f)(p)
    assert host(jr["y"]["w"]).shape == (3, 3) and host(jr["z"]["x"]).shape == (3,)


def test_custom_vjp_vmap() -> None:
    xs, ys = dev(np.stack([X3, 2 * X3])), dev(np.stack([Y3, -Y3]))
    assert_close(funcgrad.vmap(sin_mul)(xs, ys), np.sin(host(xs)) * host(ys))
    g = funcgrad.vmap(funcgrad.grad(lambda a, b: fnp.sum(sin_mul(a, b))))(xs, ys)
    assert_close(g, np.cos(host(xs)) * host(ys))
    # the batched backward pass still runs the (clipping) bwd, per example
    gc = funcgrad.vmap(funcgrad.grad(lambda v: fnp.sum(4.0 * clip_gradient(v))))(xs)
    assert_close(gc, np.ones((2, 3)))
    # grad of vmap
    gv = funcgrad.grad(lambda v: fnp.sum(funcgrad.vmap(clip_gradient)(v) * 4.0))(xs)
    assert_close(gv, np.ones((2, 3)))
    # jacfwd under vmap: forward mode of the batched call
    jf = funcgrad.vmap(funcgrad.jacfwd(sin_mul))(xs, ys)
    want = np.stack([np.diag(np.cos(host(xs)[i]) * host(ys)[i]) for i in range(2)])
    assert_close(jf, want)


def test_custom_vjp_make_jaxpr() -> None:
    text = str(funcgrad.make_jaxpr(sin_mul)(dev(X3), dev(Y3)))
    assert "custom_vjp_call" in text and "_sin_mul_bwd" in text
    jaxpr = funcgrad.make_jaxpr(funcgrad.grad(lambda v: fnp.sum(10.0 * clip_gradient(v))))(
        dev(X3))
    assert_close(jaxpr(dev(X3))[0], np.ones(3))
    # differentiating the evaluation of a staged jaxpr still uses bwd
    staged = funcgrad.make_jaxpr(clip_gradient)(2.0)
    assert float(funcgrad.grad(lambda v: 10.0 * staged(v)[0])(2.0)) == 1.0


def test_custom_vjp_errors() -> None:
    @custom_vjp
    def f(x):
        return x

    with pytest.raises(AttributeError, match="defvjp"):
        funcgrad.grad(f)(1.0)
    f.defvjp(lambda x: (x, None), lambda r, g: (g, g))
    with pytest.raises(TypeError, match="one cotangent per"):
        funcgrad.grad(f)(1.0)

    @custom_vjp
    def h(x):
        return x

    h.defvjp(lambda x: (x, "not an array"), lambda r, g: (g,))
    with pytest.raises(TypeError, match="residuals"):
        funcgrad.grad(h)(1.0)

    @custom_vjp
    def k(x):
        return x

    k.defvjp(lambda x: (x, None), lambda r, g: (fnp.ones(4),))
    with pytest.raises(ValueError, match="shape"):
        funcgrad.grad(lambda v: fnp.sum(k(v)))(dev(X3))


# ---------------------------------------------------------------------------------------------
# Closures over traced values


def _make_closing_jvp(c):
    @custom_jvp
    def f(y):
        return c * fnp.sin(y)

    @f.defjvp
    def _(primals, tangents):
        (y,), (t,) = primals, tangents
        return f(y), c * fnp.cos(y) * t

    return f


def _make_closing_vjp(c):
    @custom_vjp
    def f(y):
        return c * fnp.sin(y)

    f.defvjp(lambda y: (f(y), fnp.cos(y)), lambda cos_y, g: (c * cos_y * g,))
    return f


@pytest.mark.parametrize("make", [_make_closing_jvp, _make_closing_vjp], ids=["jvp", "vjp"])
def test_closure_over_the_differentiated_value(make) -> None:
    # g(x) = x sin(x): the custom function closes over x (derivative w.r.t. the closed-over
    # value comes from differentiating the function; w.r.t. the argument from the rule).
    def g(x):
        return make(x)(x)

    x0 = 0.7
    assert_close(funcgrad.grad(g)(x0), np.sin(x0) + x0 * np.cos(x0))
    assert_close(funcgrad.jvp(g, (x0,), (1.0,))[1], np.sin(x0) + x0 * np.cos(x0))
    assert_close(funcgrad.grad(funcgrad.grad(g))(x0), 2 * np.cos(x0) - x0 * np.sin(x0))
    assert_close(funcgrad.vmap(funcgrad.grad(g))(dev(X3)), np.sin(X3) + X3 * np.cos(X3))
    assert_close(funcgrad.hessian(lambda v: fnp.sum(g(v)))(dev(X3)),
           np.diag(2 * np.cos(X3) - X3 * np.sin(X3)))
    assert_close(funcgrad.make_jaxpr(g)(x0)(x0)[0], x0 * np.sin(x0))


@pytest.mark.parametrize("make", [_make_closing_jvp, _make_closing_vjp], ids=["jvp", "vjp"])
def test_closure_over_outer_tracers(make) -> None:
    # The custom function closes over an outer transformation's value; the inner one
    # differentiates its argument with the custom rule.
    def inner(c, y):
        return make(c)(y)

    def outer(c):
        return funcgrad.grad(lambda y: inner(c, y))(dev(np.asarray(0.4)))  # = c cos(0.4)

    assert_close(outer(2.0), 2.0 * np.cos(0.4))
    assert_close(funcgrad.grad(outer)(2.0), np.cos(0.4))
    assert_close(funcgrad.vmap(outer)(dev(X3)), X3 * np.cos(0.4))
    assert_close(funcgrad.jvp(outer, (2.0,), (1.0,))[1], np.cos(0.4))
    # vmap closure: batched c, unbatched argument
    assert_close(funcgrad.vmap(lambda c: inner(c, dev(np.asarray(0.4))))(dev(X3)), X3 * np.sin(0.4))


def test_closure_uses_the_custom_rule_for_the_argument() -> None:
    def g(c, x):
        @custom_jvp
        def f(y):
            return c * fnp.sin(y)

        f.defjvp(lambda p, t: (f(p[0]), 5.0 * t[0]))  # fake rule for y
        return f(x)

    # w.r.t. x (the argument): the fake rule; w.r.t. c (closed over): d/dc = sin(x)
    gc, gx = funcgrad.grad(g, (0, 1))(2.0, 0.3)
    assert_close(gx, 5.0)
    assert_close(gc, np.sin(0.3))


def test_custom_function_applied_to_tangents_inside_a_rule() -> None:
    @custom_jvp
    def double(t):
        return 2.0 * t

    double.defjvp(lambda p, t: (double(p[0]), double(t[0])))

    @custom_jvp
    def f(x):
        return fnp.sin(x)

    f.defjvp(lambda p, t: (f(p[0]), fnp.cos(p[0]) * double(t[0])))
    x = dev(X3)
    assert_close(funcgrad.grad(lambda v: fnp.sum(f(v)))(x), 2 * np.cos(X3))
    assert_close(funcgrad.jacrev(f)(x), np.diag(2 * np.cos(X3)))
    assert_close(funcgrad.hessian(lambda v: fnp.sum(f(v)))(x), np.diag(-2 * np.sin(X3)))
    _, f_jvp = funcgrad.linearize(f, x)
    assert_close(f_jvp(dev(np.ones(3))), 2 * np.cos(X3))


def test_custom_functions_under_jit() -> None:
    x = dev(X3)
    assert_close(funcgrad.jit(sin_with_fake_rule)(x), np.sin(X3))
    loss = lambda v: fnp.sum(sin_with_fake_rule(v))  # noqa: E731
    assert_close(funcgrad.jit(funcgrad.grad(loss))(x), 3.0 * X3)
    assert_close(funcgrad.grad(funcgrad.jit(loss))(x), 3.0 * X3)
    clip_loss = lambda v: fnp.sum(10.0 * clip_gradient(v))  # noqa: E731
    assert_close(funcgrad.jit(funcgrad.grad(clip_loss))(x), np.ones(3))
    assert_close(funcgrad.grad(funcgrad.jit(clip_loss))(x), np.ones(3))
    assert_close(funcgrad.jacfwd(funcgrad.jit(sin_mul))(x, dev(Y3)), np.diag(np.cos(X3) * Y3))


def test_custom_vjp_defined_in_traced_code_keeps_python_residuals() -> None:
    # A custom_vjp made inside the differentiated function (whose rules funcgrad traces
    # apart, as they might close over traced values) keeps Python scalars among its residuals
    # as Python values, as JAX does: bwd may branch on a CustomVJPPrimal's perturbed flag or
    # loop over a count stored in the residuals. JAX 0.10: 300, 300, [300, 300], 200
    def outer(x, y):
        @functools.partial(custom_vjp)
        def f(x, y):
            return x * y * c

        def fwd(x, y):
            return f(x.value, y.value), (x.value, y.value, x.perturbed, y.perturbed, 2)

        def bwd(res, g):
            xv, yv, px, py, n = res
            for _ in range(n):
                g = g * 10
            return (g * yv * c if px else None, g * xv * c if py else None)

        c = 1.0
        f.defvjp(fwd, bwd, symbolic_zeros=True)
        return f(x, y)

    x = dev(np.array(2.0))
    assert_close(funcgrad.grad(outer)(x, 3.0), 300.0)
    assert_close(funcgrad.jit(funcgrad.grad(outer))(x, 3.0), 300.0)
    assert_close(funcgrad.vmap(funcgrad.grad(outer), in_axes=(0, None))(
        dev(np.array([1.0, 2.0])), 3.0), np.array([300.0, 300.0]))
    assert_close(funcgrad.grad(outer, argnums=1)(x, 3.0), 200.0)


def test_linear_call_uses_its_transpose_in_reverse_mode():
    # JAX 0.10.2 (x64), with a transpose deliberately 10 times the true one
    from funcgrad.custom_derivatives import linear_call

    A = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]])
    r = {"A": dev(A), "s": 2.0}

    def f(x):
        return linear_call(lambda r, v: r["A"] @ v * r["s"],
                           lambda r, c: 10 * (r["A"].T @ c) * r["s"], r, x)

    x, w = dev(np.array([1.0, -1.0])), dev(np.array([1.0, 2.0, 3.0]))
    assert host(f(x)).tolist() == [-2.0, -2.0, -4.0]
    assert host(funcgrad.jit(f)(x)).tolist() == [-2.0, -2.0, -4.0]
    assert host(funcgrad.grad(lambda v: fnp.sum(f(v) * w))(x)).tolist() == [440.0, 620.0]
    assert host(funcgrad.jit(funcgrad.grad(lambda v: fnp.sum(f(v))))(x)).tolist() == [180.0,
                                                                                     260.0]
    assert host(funcgrad.jvp(f, (x,), (dev(np.array([1.0, 0.0])),))[1]).tolist() == [2.0, 6.0,
                                                                                     10.0]
    e0 = dev(np.array([1.0, 0.0, 0.0]))
    assert host(funcgrad.vjp(f, x)[1](e0)[0]).tolist() == [20.0, 40.0]
    assert host(funcgrad.linear_transpose(f, x)(e0)[0]).tolist() == [20.0, 40.0]
    # transposing twice gives fun back
    tt = funcgrad.linear_transpose(lambda c: funcgrad.linear_transpose(f, x)(c)[0],
                                   dev(np.zeros(3)))(x)[0]
    assert host(tt).tolist() == [-2.0, -2.0, -4.0]
    # pytrees of linear arguments; values closed over (under jit) are residuals
    g = funcgrad.grad(lambda v: fnp.sum(linear_call(
        lambda r, xs: xs[0] + r * xs[1], lambda r, c: (c, r * c), 3.0, (v, v))))
    assert host(g(x)).tolist() == [4.0, 4.0]

    def closing(v, y):
        return linear_call(lambda r, u: u * y, lambda r, c: 10 * c * y, (), v)

    assert host(funcgrad.jit(closing)(x, 3.0)).tolist() == [3.0, -3.0]
    assert host(funcgrad.jit(funcgrad.grad(lambda v, y: fnp.sum(closing(v, y))))(x, 3.0)
                ).tolist() == [30.0, 30.0]
    with pytest.raises(ValueError, match="residual_args cannot be differentiated"):
        funcgrad.grad(lambda s: fnp.sum(linear_call(
            lambda r, v: v * r, lambda r, c: c * r, s, x)))(2.0)


def test_linear_call_batches():
    # beyond JAX (no batching rule there): fun and fun_transpose batched as they are
    from funcgrad.custom_derivatives import linear_call

    def f(x, y):
        return linear_call(lambda r, u: u * y, lambda r, c: 10 * c * y, (), x)

    xs = dev(np.array([1.0, 2.0]))
    out = funcgrad.vmap(f, (None, 0))(xs, dev(np.array([3.0, 4.0])))
    assert host(out).tolist() == [[3.0, 6.0], [4.0, 8.0]]
    jac = funcgrad.jacrev(lambda v: f(v, 2.0))(xs)
    assert host(jac).tolist() == [[20.0, 0.0], [0.0, 20.0]]
    with pytest.raises(TypeError, match="fun_transpose must return cotangents shaped"):
        from funcgrad.custom_derivatives import linear_call as lc
        lc(lambda r, v: v, lambda r, c: c[:1], (), xs)


def test_custom_vjp_tangent_map_is_forward_modes_rule() -> None:
    # forward mode applies tangent_map (7 t), reverse mode bwd (5 g): they disagree on purpose
    @custom_vjp
    def f(x, y):
        return {"a": x * y, "b": x}

    f.defvjp(lambda x, y: (f(x, y), (x, y)),
             lambda res, g: (5.0 * g["a"] * res[1] + g["b"], 5.0 * g["a"] * res[0]),
             tangent_map=lambda res, t: {"a": 7.0 * (t[0] * res[1] + t[1] * res[0]),
                                         "b": 7.0 * t[0]})
    x, y = dev(X3), dev(Y3)
    _, t = funcgrad.jvp(f, (x, y), (dev(np.ones(3)), dev(np.zeros(3))))
    assert_close(t["a"], 7.0 * Y3)
    assert_close(t["b"], 7.0 * np.ones(3))
    assert_close(funcgrad.grad(lambda x: f(x, y)["a"].sum())(x), 5.0 * Y3)
    assert_close(funcgrad.jit(funcgrad.jacfwd(lambda x: f(x, y)["b"]))(x), 7.0 * np.eye(3))
    _, lin = funcgrad.linearize(lambda x: f(x, y)["b"], x)
    assert_close(lin(dev(np.ones(3))), 7.0 * np.ones(3))
    with pytest.raises(TypeError, match="tangent_map of .* must return a tangent structured"):
        g = custom_vjp(lambda x: x * 2.0)
        g.defvjp(lambda x: (x * 2.0, None), lambda r, c: (2.0 * c,),
                 tangent_map=lambda r, t: (t[0], t[0]))
        funcgrad.jvp(g, (x,), (x,))


def test_call_primitives_under_jax_names() -> None:
    # jax.custom_derivatives.custom_jvp_call_p / custom_vjp_call_p: what make_jaxpr records
    from funcgrad import custom_derivatives as cd

    f = funcgrad.custom_jvp(lambda x: x * 2)
    f.defjvp(lambda p, t: (p[0] * 2, t[0] * 2))
    assert funcgrad.make_jaxpr(f)(1.0).jaxpr.eqns[0].primitive is cd.custom_jvp_call_p
    g = funcgrad.custom_vjp(lambda x: x * 2)
    g.defvjp(lambda x: (x * 2, None), lambda r, c: (c * 2,))
    assert funcgrad.make_jaxpr(g)(1.0).jaxpr.eqns[0].primitive is cd.custom_vjp_call_p
