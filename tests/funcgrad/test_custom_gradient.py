"""custom_gradient (jax.custom_gradient): the function returns (output, vjp_fn), vjp_fn runs in
the backward pass and may close over forward intermediates. Expected values are JAX 0.10.2's."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_close, dev

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import custom_gradient
from funcgrad.custom_derivatives import custom_gradient as cg_module


@custom_gradient
def square_half_grad(x):
    return x**2, lambda g: (g * x,)  # deliberately half the true derivative


@custom_gradient
def log1pexp(x):
    e = fnp.exp(x)
    return fnp.log1p(e), lambda g: g * (1.0 - 1.0 / (1.0 + e))  # a bare cotangent: one arg


def test_the_rule_is_used_as_jax() -> None:
    assert cg_module is custom_gradient
    assert float(square_half_grad(3.0)) == 9.0
    assert float(funcgrad.grad(square_half_grad)(3.0)) == 3.0  # JAX: 3.0
    assert float(funcgrad.jit(funcgrad.grad(square_half_grad))(3.0)) == 3.0
    assert_close(funcgrad.vmap(funcgrad.grad(square_half_grad))(dev(np.arange(3.0))), np.array([0.0, 1.0, 2.0]))


def test_rule_closes_over_forward_intermediates_and_second_order_as_jax() -> None:
    with np.errstate(over="ignore"):
        assert float(funcgrad.grad(log1pexp)(100.0)) == 1.0
    # JAX: grad(grad(log1pexp))(1.) = 0.19661193324148182 (the rule differentiated)
    assert_close(funcgrad.grad(funcgrad.grad(log1pexp))(1.0), 0.19661193324148182, rtol=1e-12)


def test_two_arguments_none_and_integer_arguments_as_jax() -> None:
    @custom_gradient
    def mul(x, y):
        return x * y, lambda g: (None, g * x)

    gx, gy = funcgrad.grad(mul, argnums=(0, 1))(3.0, 4.0)  # JAX: (0., 3.)
    assert (float(gx), float(gy)) == (0.0, 3.0)

    @custom_gradient
    def scale(x, n):
        return x * n, lambda g: (g * n * 2, None)

    assert float(funcgrad.grad(scale)(3.0, 4)) == 8.0  # JAX: 8.0
    assert float(funcgrad.jit(funcgrad.grad(scale))(3.0, 4)) == 8.0


def test_pytree_output_and_keyword_arguments() -> None:
    @custom_gradient
    def both(x, k=2.0):
        out = {"a": x * k, "b": fnp.sin(x)}
        return out, lambda g: (g["a"] * k + g["b"] * fnp.cos(x) * 10.0, None)

    g = funcgrad.grad(lambda x: both(x, k=3.0)["a"] + both(x)["b"])(1.0)
    assert_close(g, 3.0 + 10.0 * np.cos(1.0))  # a with k=3 -> 3; b -> 10 cos 1
    with pytest.raises(TypeError):  # wrong cotangent structure is refused
        funcgrad.vjp(both, 1.0)[1]((1.0, 2.0))


def test_forward_mode_transposes_the_rule() -> None:
    y, t = funcgrad.jvp(square_half_grad, (3.0,), (1.0,))
    assert (float(y), float(t)) == (9.0, 3.0)  # JAX refuses forward mode of a custom_vjp


def test_closure_over_an_outer_transformation() -> None:
    def outer(w):
        @custom_gradient
        def k(x):
            return x * w, lambda g: (g * w * 10.0,)

        return k(w)

    # d/dw k(w): 10 w from the rule for the explicit argument plus x = w from the closure
    assert_close(funcgrad.grad(outer)(3.0), 33.0)


def test_errors() -> None:
    with pytest.raises(TypeError, match="custom_gradient"):
        custom_gradient(3)

    @custom_gradient
    def not_a_pair(x):
        return x

    with pytest.raises(TypeError, match="must return a pair"):
        funcgrad.grad(not_a_pair)(1.0)

    @custom_gradient
    def branches(x):
        def rule(g):
            return (g,) if g > 0 else (-g,)

        return x, rule

    # JAX: TracerBoolConversionError (a ConcretizationTypeError)
    with pytest.raises(funcgrad.ConcretizationError):
        funcgrad.grad(branches)(1.0)


def test_symbolic_zero_helpers_as_jax() -> None:
    from funcgrad.custom_derivatives import (
        CustomVJPPrimal,
        SymbolicZero,
        custom_vjp_primal_tree_values,
        zero_from_primal,
    )

    z = zero_from_primal(np.ones(2, np.float32))  # JAX: [0. 0.] float32
    assert z.dtype == np.float32 and z.tolist() == [0.0, 0.0]
    assert zero_from_primal(np.arange(2)).dtype == funcgrad.float0  # JAX: float0 zeros
    sz = zero_from_primal({"a": np.ones(3)}, symbolic_zeros=True)["a"]
    assert type(sz) is SymbolicZero and sz.shape == (3,)
    tree = {"w": CustomVJPPrimal(2.0, True), "b": [CustomVJPPrimal(1.0, False)]}
    assert custom_vjp_primal_tree_values(tree) == {"w": 2.0, "b": [1.0]}
    with pytest.raises(TypeError, match="unexpected leaf type"):
        custom_vjp_primal_tree_values({"w": 2.0})
