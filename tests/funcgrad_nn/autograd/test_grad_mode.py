"""Grad modes: values computed with gradients disabled are constants to every enclosing
derivative; PyTorch's nesting rules, context managers and decorators."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from helpers import host

import funcgrad
import funcgrad.numpy as fnp
import funcgrad_nn as nn
from funcgrad_nn.autograd import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)


def assert_close(actual, desired, **kw):
    np.testing.assert_allclose(host(actual), host(desired), **kw)


def f_no_grad(x):
    with no_grad():
        c = fnp.sin(x) * x          # constant for grad
    return c * x * x                # d/dx = 2 c x


def test_no_grad_part_is_constant_hand_derived():
    x = 0.7
    c = np.sin(x) * x
    assert_close(funcgrad.grad(f_no_grad)(x), 2 * c * x)
    # second order: d/dx (2 c x) = 2 c
    assert_close(funcgrad.grad(funcgrad.grad(f_no_grad))(x), 2 * c)


def test_no_grad_under_jit_vmap_jvp():
    x = 0.7
    c = np.sin(x) * x
    assert_close(funcgrad.jit(funcgrad.grad(f_no_grad))(x), 2 * c * x)
    xs = np.array([0.3, 0.7])
    cs = np.sin(xs) * xs
    assert_close(funcgrad.vmap(funcgrad.grad(f_no_grad))(xs), 2 * cs * xs)
    _, t = funcgrad.jvp(f_no_grad, (x,), (1.0,))
    assert_close(t, 2 * c * x)


def test_enable_grad_inside_no_grad():
    def f(x):
        with no_grad():
            with enable_grad():
                y = x * x           # differentiated
            z = x * x               # not
        return y + z

    assert float(funcgrad.grad(f)(3.0)) == 6.0


def test_set_grad_enabled_modes_and_function_form():
    def f(x, train):
        with set_grad_enabled(train):
            return x * x

    assert float(funcgrad.grad(f)(3.0, True)) == 6.0
    assert float(funcgrad.grad(f)(3.0, False)) == 0.0

    def g(x):
        set_grad_enabled(False)     # the call itself switches (PyTorch)
        y = x * x
        set_grad_enabled(True)
        return y + x

    assert float(funcgrad.grad(g)(3.0)) == 1.0
    assert is_grad_enabled()


def test_decorators_with_and_without_parentheses():
    @no_grad()
    def a(x):
        return x * x

    @no_grad
    def b(x):
        return x * x

    @set_grad_enabled(False)
    def c(x):
        return x * x

    @inference_mode()
    def d(x):
        return x * x

    for fn in (a, b, c, d):
        assert float(funcgrad.grad(lambda x, fn=fn: fn(x) * x)(3.0)) == 9.0
    assert is_grad_enabled()


def test_is_grad_enabled_nesting():
    assert is_grad_enabled()
    with no_grad():
        assert not is_grad_enabled()
        with enable_grad():
            assert is_grad_enabled()
            with set_grad_enabled(False):
                assert not is_grad_enabled()
            assert is_grad_enabled()
        assert not is_grad_enabled()
    assert is_grad_enabled()
    with inference_mode():
        assert is_inference_mode_enabled() and not is_grad_enabled()
        with inference_mode(False):
            # torch 2.13: InferenceMode(false) turns grad mode on too (it stayed off here)
            assert not is_inference_mode_enabled() and is_grad_enabled()
    assert not is_inference_mode_enabled()


def test_inference_mode_false_differentiates_even_inside_no_grad():
    # torch 2.13: x = 3 (requires grad); under no_grad, y = x * x inside inference_mode(False)
    # is tracked, z = x * x is not: d(y + z)/dx = 6
    def f(x):
        with no_grad():
            with inference_mode(False):
                y = x * x
            z = x * x
        return y + z

    assert float(funcgrad.grad(f)(3.0)) == 6.0
    assert float(funcgrad.jit(funcgrad.grad(f))(3.0)) == 6.0


def test_state_is_per_thread():
    seen = []
    with no_grad():
        t = threading.Thread(target=lambda: seen.append(is_grad_enabled()))
        t.start()
        t.join()
    assert seen == [True]


def test_transform_started_inside_no_grad_differentiates():
    # As torch.func.grad: an outer no_grad does not stop a transformation started inside it.
    with no_grad():
        assert float(funcgrad.grad(lambda x: x * x)(3.0)) == 6.0


def test_module_forward_under_no_grad_in_module_transform():
    _ = nn.manual_seed(0)
    m = nn.Linear(3, 1)
    x = np.ones((2, 3), np.float32)

    def loss(m):
        with no_grad():
            target = m(x)           # a constant, like a detached target
        return ((m(x) - target - 1.0) ** 2).sum()

    g = nn.grad(loss)(m)
    # d/dW sum((Wx+b - const - 1)^2) at Wx+b == const: 2 * (-1) * x summed over the batch
    assert_close(g.weight, np.full((1, 3), -4.0), rtol=1e-6)
    assert_close(g.bias, np.full(1, -4.0), rtol=1e-6)


def test_bad_mode_argument():
    with pytest.raises(TypeError, match="set_grad_enabled.*bool.*str 'yes'"):
        set_grad_enabled("yes")
    with pytest.raises(TypeError, match="inference_mode.*bool"):
        inference_mode(1)


def test_tape_entry_points_explain_the_functional_counterpart():
    import funcgrad_nn.autograd as autograd

    with pytest.raises(AttributeError, match="funcgrad.vjp"):
        autograd.grad  # noqa: B018
    with pytest.raises(AttributeError, match="loss.backward"):
        autograd.backward  # noqa: B018
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        autograd.nothing  # noqa: B018


def test_enable_grad_inside_inference_mode_keeps_values_constant():
    # torch 2.13: inside inference_mode, enable_grad makes is_grad_enabled() True but the
    # result does not require grad; inference_mode(False) then enable_grad differentiates.
    seen = []

    def f(x):
        with inference_mode():
            with enable_grad():
                seen.append((is_grad_enabled(), is_inference_mode_enabled()))
                y = x * x
            with inference_mode(False), enable_grad():
                z = x * x
        return y + z

    assert float(funcgrad.grad(f)(2.0)) == 4.0        # only z's derivative
    assert seen == [(True, True)]


@pytest.mark.parametrize("make_mode, inside", [
    (no_grad, False), (lambda: set_grad_enabled(False), False), (inference_mode, False),
    (lambda: set_grad_enabled(True), True)])
def test_decorated_generator_runs_its_body_in_the_mode(make_mode, inside):
    # PyTorch wraps a generator function so that each step of its body runs in the mode
    # (torch.no_grad()(gen)() yields False, False), while the caller's code between the
    # steps runs outside it.
    outside = []

    @make_mode()
    def gen(n):
        for _ in range(n):
            got = yield is_grad_enabled()
            outside.append(got)
        return "done"

    g = gen(2)
    assert next(g) is inside
    assert is_grad_enabled()                    # the caller's code is outside the mode
    assert g.send("a") is inside
    with pytest.raises(StopIteration) as stop:
        g.send("b")
    assert stop.value.value == "done" and outside == ["a", "b"]
    assert is_grad_enabled()


def test_decorated_generator_throw_and_close_run_in_the_mode():
    seen = []

    @no_grad()
    def gen():
        try:
            yield 1
        except ValueError:
            seen.append(("throw", is_grad_enabled()))
            yield 2
        finally:
            seen.append(("close", is_grad_enabled()))

    g = gen()
    assert next(g) == 1
    assert g.throw(ValueError("x")) == 2
    g.close()
    assert seen == [("throw", False), ("close", False)] and is_grad_enabled()


def test_decorated_generator_values_are_constants_to_grad():
    @no_grad()
    def scales(x):
        yield x * x

    def f(x):
        (c,) = list(scales(x))
        return c * x

    assert_close(funcgrad.grad(f)(3.0), 9.0)


def test_clone_gives_a_fresh_mode():
    for mode in (no_grad(), enable_grad(), inference_mode(False)):
        c = mode.clone()
        assert type(c) is type(mode) and c is not mode
    with no_grad().clone():
        assert not is_grad_enabled()
    assert is_grad_enabled()


def test_grad_modes_are_top_level_names_as_in_torch():
    # `with torch.no_grad():` ports as `with nn.no_grad():` (funcgrad_nn stands for torch too)
    for name in ("no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
                 "is_grad_enabled", "is_inference_mode_enabled"):
        assert getattr(nn, name) is getattr(nn.autograd, name), name

    def f(x):
        with nn.no_grad():
            c = x * 3.0
        return c * x
    assert float(funcgrad.grad(f)(2.0)) == 6.0
