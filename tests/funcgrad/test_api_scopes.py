"""ensure_compile_time_eval and named_scope (JAX's context managers), checked against the
behaviour of JAX 0.10.2: constants are concrete inside the block under every transformation,
traced values stay traced, results never change."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_close, dev

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.api_scopes import current_name_stack
from funcgrad.core import Tracer
from funcgrad.profiler import profile


def _kinds(record: list):
    return [isinstance(v, Tracer) for v in record]


def test_constants_are_concrete_inside_jit_and_traced_values_stay_traced() -> None:
    seen: list = []

    @funcgrad.jit
    def f(x):
        with funcgrad.ensure_compile_time_eval():
            y = fnp.sin(3.0)
            z = fnp.sin(x)
            w = fnp.arange(3) * 2
            seen.extend([y, z, w])
        positive = y > 0  # concrete: Python control flow works
        return (z + y) if positive else z

    assert_close(f(1.0), np.sin(1.0) + np.sin(3.0))  # JAX: 0.982591 (float32)
    assert _kinds(seen) == [False, True, False]
    assert_close(seen[2], np.array([0, 2, 4]))
    jaxpr = funcgrad.make_jaxpr(f)(1.0)
    assert str(jaxpr).count("sin") == 1  # sin(3.0) was folded into a constant


def test_under_grad_vmap_scan_and_outside_any_transformation() -> None:
    seen: list = []

    def g(x):
        with funcgrad.ensure_compile_time_eval():
            y = fnp.sin(3.0)
            seen.append(y)
        return x * y

    assert_close(funcgrad.grad(g)(1.0), np.sin(3.0))
    assert_close(funcgrad.vmap(g)(dev(np.ones(2))), np.full(2, np.sin(3.0)))
    assert_close(funcgrad.jit(funcgrad.grad(g))(1.0), np.sin(3.0))
    assert_close(g(2.0), 2 * np.sin(3.0))
    assert not any(_kinds(seen))

    def body(c, x):
        with funcgrad.ensure_compile_time_eval():
            k = fnp.cos(1.0)
            seen.append(k)
        return c + k, x

    carry, _ = funcgrad.lax.scan(body, 0.0, dev(np.arange(3.0)))
    assert_close(carry, 3 * np.cos(1.0))  # JAX: 1.6209068
    assert not isinstance(seen[-1], Tracer)


def test_nested_jit_and_constant_arrays_run_eagerly() -> None:
    kinds: list = []

    @funcgrad.jit
    def h(x):
        with funcgrad.ensure_compile_time_eval():
            y = fnp.reshape(fnp.cumsum(fnp.arange(9.0)), (3, 3))
            q = funcgrad.jit(lambda a: a * 2.0)(3.0)
            kinds.extend([y, q])
        return fnp.sum(y @ y) * x * q

    y = np.cumsum(np.arange(9.0)).reshape(3, 3)
    assert_close(h(1.0), np.sum(y @ y) * 6.0)
    assert not any(_kinds(kinds))


def test_named_scope_nests_names_and_ranges_in_the_profile() -> None:
    @funcgrad.named_scope("layer")
    def layer(w, x):
        assert current_name_stack() == "layer"
        with funcgrad.named_scope("activation"):
            assert current_name_stack() == "layer/activation"
            return fnp.maximum(w @ x, 0.0)

    with profile() as prof:
        out = layer(dev(np.eye(2)), dev(np.array([1.0, -1.0])))
    assert_close(out, np.array([1.0, 0.0]))
    assert current_name_stack() == ""
    events = {e.name: e for e in prof.events()}
    assert {"layer", "activation", "max"} <= set(events)
    act = events["activation"]
    assert events["layer"].start_ns <= act.start_ns <= events["max"].start_ns
    # Under jit and grad, results are unchanged.
    assert_close(funcgrad.jit(layer)(dev(np.eye(2)), dev(np.array([1.0, -1.0]))), np.array([1.0, 0.0]))
    g = funcgrad.grad(lambda w: fnp.sum(layer(w, dev(np.array([1.0, -1.0])))))(dev(np.eye(2)))
    assert_close(g, np.array([[1.0, -1.0], [0.0, 0.0]]))


def test_named_scope_name_must_be_a_string_as_jax() -> None:
    with pytest.raises(TypeError, match="named_scope name argument must be a string"):
        funcgrad.named_scope(3)


def test_named_call_names_each_call() -> None:
    def scaled_sin(x):
        assert current_name_stack() == "scaled_sin"
        return fnp.sin(x) * 2.0

    f = funcgrad.named_call(scaled_sin)
    assert float(funcgrad.grad(f)(0.0)) == 2.0  # JAX: 2.0
    g = funcgrad.named_call(lambda x: x * 3.0, name="triple")
    with profile() as prof:
        assert float(funcgrad.jit(g)(1.0)) == 3.0
    assert "triple" in {e.name for e in prof.events()}
    with pytest.raises(TypeError):
        funcgrad.named_call(3)
