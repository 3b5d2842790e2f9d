"""Regression tests for the classic autodiff traps."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_close, dev, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import stop_gradient

X3 = np.array([0.3, -0.7, 1.1])


def _d(f):
    """Forward-mode derivative of a scalar function (nested jvp)."""
    return lambda x: funcgrad.jvp(f, (x,), (fnp.ones_like(x),))[1]


def _s(v: float):
    return dev(np.asarray(v))


# ---------------------------------------------------------------------------------------------
# Perturbation confusion (Siskind & Pearlmutter): d/dx [x * d/dy (x + y)] = 1, not 2.


@pytest.mark.parametrize("outer", ["grad", "jvp"])
@pytest.mark.parametrize("inner", ["grad", "jvp"])
def test_perturbation_confusion(outer: str, inner: str) -> None:
    D_out = funcgrad.grad if outer == "grad" else _d
    D_in = funcgrad.grad if inner == "grad" else _d

    def f(x):
        return x * D_in(lambda y: x + y)(_s(1.0))

    assert float(host(D_out(f)(_s(2.0)))) == 1.0


def test_perturbation_confusion_nested_three_levels() -> None:
    # d/dx [x * d/dy [y * d/dz (x + y + z)]] = d/dx [x * 1] = 1
    def f(x):
        def g(y):
            return y * funcgrad.grad(lambda z: x + y + z)(_s(1.0))

        return x * funcgrad.grad(g)(_s(1.0))

    assert float(host(funcgrad.grad(f)(_s(3.0)))) == 1.0
    assert float(host(_d(f)(_s(3.0)))) == 1.0


def test_perturbation_confusion_under_vmap() -> None:
    def f(x):
        return x * funcgrad.grad(lambda y: x * y)(_s(1.0))  # x * x -> 2x

    assert_close(funcgrad.vmap(funcgrad.grad(f))(dev(X3)), 2 * X3)
    assert_close(funcgrad.grad(lambda v: fnp.sum(funcgrad.vmap(f)(v)))(dev(X3)), 2 * X3)


# ---------------------------------------------------------------------------------------------
# Closures over outer tracers


def test_closure_over_outer_grad_tracer() -> None:
    # d/dx [d/dy (x y^2) at y=3] = d/dx (6x) = 6
    f = lambda x: funcgrad.grad(lambda y: x * y ** 2)(_s(3.0))  # noqa: E731
    assert float(host(funcgrad.grad(f)(_s(2.0)))) == 6.0
    assert float(host(_d(f)(_s(2.0)))) == 6.0
    assert float(host(funcgrad.hessian(lambda x: f(x) * x)(_s(2.0)))) == 12.0


def test_closure_over_outer_vmap_tracer() -> None:
    g = funcgrad.vmap(lambda x: funcgrad.grad(lambda y: x * y * y)(_s(1.0)))
    assert_close(g(dev(X3)), 2 * X3)
    j = funcgrad.vmap(lambda x: funcgrad.jacfwd(lambda y: x * fnp.sin(y))(dev(X3)))
    assert_close(j(dev(np.array([1.0, 2.0]))), np.stack([np.diag(c * np.cos(X3)) for c in (1, 2)]))


def test_closure_captured_by_a_returned_function() -> None:
    # grad of a function that builds and calls a closure over its argument
    def f(x):
        def inner(z):
            return fnp.sin(x * z)

        return inner(2.0) + inner(x)

    x0 = 0.4
    assert_close(funcgrad.grad(f)(_s(x0)), 2 * np.cos(2 * x0) + 2 * x0 * np.cos(x0 * x0))


# ---------------------------------------------------------------------------------------------
# Python control flow on values works under differentiation


def test_python_if_and_while_under_grad() -> None:
    def f(x):
        if x > 0:
            y = x ** 2
        else:
            y = -x
        n = 0
        while y < 10.0:
            y = y * 2.0
            n += 1
        return y

    # x=1.5: y = 2.25 -> *2 three times = 18: f = 8 x^2, f' = 16 x = 24
    assert float(host(funcgrad.grad(f)(_s(1.5)))) == 24.0
    assert float(host(_d(f)(_s(1.5)))) == 24.0
    # x=-3: y = 3 -> *2 twice = 12: f = -4x, f' = -4
    assert float(host(funcgrad.grad(f)(_s(-3.0)))) == -4.0
    assert float(host(funcgrad.grad(funcgrad.grad(f))(_s(1.5)))) == 16.0


def test_python_control_flow_under_staging_is_a_clear_error() -> None:
    def f(x):
        return x if x > 0 else -x

    with pytest.raises(funcgrad.ConcretizationError, match="if"):
        funcgrad.make_jaxpr(f)(1.0)


def test_python_float_of_a_value_under_grad() -> None:
    # float() of a differentiated value would silently cut the derivative: it raises, and
    # stop_gradient says that a constant is meant
    with pytest.raises(funcgrad.ConcretizationError, match="stop_gradient"):
        funcgrad.grad(lambda x: x * float(x))(_s(3.0))
    f = lambda x: x * float(funcgrad.stop_gradient(x))  # noqa: E731
    assert float(host(funcgrad.grad(f)(_s(3.0)))) == 3.0


# ---------------------------------------------------------------------------------------------
# Wrong-kind inputs and outputs


def test_grad_of_non_scalar_output_is_an_error_suggesting_vjp_and_jacrev() -> None:
    with pytest.raises(TypeError, match="vjp or jacrev"):
        funcgrad.grad(lambda x: x * 2.0)(dev(X3))


def test_integer_inputs_need_allow_int() -> None:
    with pytest.raises(TypeError, match="allow_int=True"):
        funcgrad.grad(lambda n: n * 2.0)(3)
    g = funcgrad.grad(lambda n: n * 2.0, allow_int=True)(3)
    assert np.asarray(g).dtype == funcgrad.float0


# ---------------------------------------------------------------------------------------------
# Non-differentiable operations give zero tangents, never a crash


NONDIFF = {
    "argmax": lambda x: x * fnp.argmax(x),
    "comparison": lambda x: x * (x > 0),
    "floor": lambda x: fnp.floor(x) * x,
    "round": lambda x: fnp.round(x * 3.0),
    "sign": lambda x: fnp.sign(x) * x ** 2,
    "where_cond": lambda x: fnp.where(x > 0.5, 1.0, 2.0),
    "isfinite": lambda x: fnp.isfinite(x) * x,
    "astype_int": lambda x: (x * 10).astype(np.int64) * x,
}
# d/dx of each, at X3 (piecewise constants have zero derivative)
NONDIFF_GRAD = {
    "argmax": np.full(3, 2.0),
    "comparison": (X3 > 0).astype(float),
    "floor": np.floor(X3),
    "round": np.zeros(3),
    "sign": 2 * np.sign(X3) * X3,
    "where_cond": np.zeros(3),
    "isfinite": np.ones(3),
    "astype_int": (X3 * 10).astype(np.int64).astype(float),
}


@pytest.mark.parametrize("name", list(NONDIFF))
def test_nondifferentiable_ops_give_zero_tangents(name: str) -> None:
    f = NONDIFF[name]
    x = dev(X3)
    want = NONDIFF_GRAD[name]
    assert_close(funcgrad.grad(lambda v: fnp.sum(f(v)))(x), want)
    assert_close(funcgrad.jvp(f, (x,), (dev(np.ones(3)),))[1], want)
    assert_close(funcgrad.jacfwd(f)(x), np.diag(want))
    assert_close(funcgrad.jacrev(f)(x), np.diag(want))
    h = funcgrad.hessian(lambda v: fnp.sum(f(v)))(x)
    assert np.all(np.isfinite(np.asarray(host(h))))


def test_integer_valued_function_has_float0_tangent() -> None:
    _, t = funcgrad.jvp(lambda x: fnp.argmax(x), (dev(X3),), (dev(np.ones(3)),))
    assert np.asarray(host(t)).dtype == funcgrad.float0


def test_function_ignoring_its_input_has_zero_gradient() -> None:
    g = funcgrad.grad(lambda x: 3.0)(dev(X3))
    assert_close(g, np.zeros(3))
    assert_close(funcgrad.jacfwd(lambda x: fnp.ones(2))(dev(X3)), np.zeros((2, 3)))
    assert_close(funcgrad.jacrev(lambda x: fnp.ones(2))(dev(X3)), np.zeros((2, 3)))
    assert_close(funcgrad.hessian(lambda x: 1.0 + 0.0 * fnp.sum(x))(dev(X3)), np.zeros((3, 3)))


# ---------------------------------------------------------------------------------------------
# stop_gradient stops derivatives of every order


def test_stop_gradient_every_order() -> None:
    f = lambda x: x ** 2 + stop_gradient(x ** 3)  # noqa: E731
    x0 = _s(1.5)
    assert float(host(f(x0))) == 1.5 ** 2 + 1.5 ** 3
    assert float(host(funcgrad.grad(f)(x0))) == 3.0
    assert float(host(funcgrad.grad(funcgrad.grad(f))(x0))) == 2.0
    assert float(host(funcgrad.grad(funcgrad.grad(funcgrad.grad(f)))(x0))) == 0.0
    assert float(host(_d(_d(f))(x0))) == 2.0
    assert float(host(_d(funcgrad.grad(f))(x0))) == 2.0
    assert float(host(funcgrad.grad(_d(f))(x0))) == 2.0
    g = lambda x: fnp.sum(stop_gradient(fnp.sin(x)) * x)  # noqa: E731
    assert_close(funcgrad.grad(g)(dev(X3)), np.sin(X3))
    assert_close(funcgrad.hessian(g)(dev(X3)), np.zeros((3, 3)))
    assert_close(funcgrad.jacfwd(lambda x: stop_gradient(x) * 2.0)(dev(X3)), np.zeros((3, 3)))
    assert_close(funcgrad.vmap(funcgrad.grad(lambda x: x * stop_gradient(x)))(dev(X3)), X3)


def test_stop_gradient_of_a_closed_over_outer_value() -> None:
    # inner derivative sees sg(x) as a constant, and so does the outer one
    def f(x):
        return funcgrad.grad(lambda y: stop_gradient(x) * y * y)(_s(1.0))  # 2 sg(x)

    assert float(host(funcgrad.grad(f)(_s(2.0)))) == 0.0


# ---------------------------------------------------------------------------------------------
# Leaked tracers


def test_leaked_tracer_used_later_raises() -> None:
    leaked = []

    def f(x):
        leaked.append(x)
        return x * 2.0

    funcgrad.grad(f)(_s(1.0))
    with pytest.raises(funcgrad.UnexpectedTracerError):
        fnp.sin(leaked[0])
    funcgrad.jvp(f, (_s(1.0),), (_s(1.0),))
    with pytest.raises(funcgrad.UnexpectedTracerError):
        leaked[-1] + 1.0
    funcgrad.vmap(f)(dev(X3))
    with pytest.raises(funcgrad.UnexpectedTracerError):
        fnp.exp(leaked[-1])


def test_leaked_tracer_inside_a_later_transformation_raises() -> None:
    leaked = []

    def f(x):
        leaked.append(x)
        return x * x

    funcgrad.grad(f)(_s(1.0))
    with pytest.raises(funcgrad.UnexpectedTracerError):
        funcgrad.grad(lambda y: y * leaked[0])(_s(2.0))


def test_in_place_update_of_a_tracer_points_to_at() -> None:
    def f(x):
        x[0] = 1.0
        return fnp.sum(x)

    with pytest.raises(funcgrad.TracerMutationError, match=r"\.at\["):
        funcgrad.grad(f)(dev(X3))
