"""funcgrad._gc.paused_gc: tracing and compiling run with the cycle collector off, and leave
it as they found it (on, or off when the user turned it off), errors included."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad._gc import paused_gc


@pytest.fixture(autouse=True)
def _collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


def test_the_collector_is_off_while_a_jit_traces_and_on_again_after():
    seen = []

    def f(x):
        seen.append(gc.isenabled())
        return fnp.sin(x) * 2.0

    assert float(funcgrad.jit(funcgrad.grad(funcgrad.grad(f)))(0.5)) == pytest.approx(
        -2.0 * np.sin(0.5))
    assert seen and not any(seen)
    assert gc.isenabled()


def test_a_linearization_nested_in_another_pauses_inside_and_restores():
    seen = []

    def f(x):
        seen.append(gc.isenabled())
        return fnp.exp(x)

    # vjp linearizes (at the top level: not paused); the grad inside it is nested.
    _, pull = funcgrad.vjp(funcgrad.grad(f), 0.0)
    assert float(pull(1.0)[0]) == pytest.approx(1.0)
    assert seen == [False]
    assert gc.isenabled()


def test_an_error_while_tracing_turns_the_collector_back_on():
    def f(x):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        funcgrad.jit(f)(1.0)
    assert gc.isenabled()
    with pytest.raises(RuntimeError, match="boom"):
        funcgrad.grad(funcgrad.grad(f))(1.0)
    assert gc.isenabled()


def test_a_collector_the_user_turned_off_stays_off():
    gc.disable()
    funcgrad.jit(lambda x: x * 3.0)(np.ones(2))
    funcgrad.grad(funcgrad.grad(fnp.sin))(0.3)
    with paused_gc():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_nested_pauses_restore_only_at_the_outermost():
    with paused_gc():
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
