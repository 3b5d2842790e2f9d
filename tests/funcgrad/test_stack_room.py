"""Frame-stack room for nested tracing (funcgrad._stack_room: CPython gh-142183)."""

import sys

import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad._stack_room import _RESERVED_WORDS, call_with_stack_room, needs_stack_room


def _roomy_frames() -> int:
    """How many frames of the reserving trampoline are on the stack."""
    n, frame = 0, sys._getframe()
    while frame is not None:
        code = frame.f_code
        if code.co_name == "_call" and code.co_stacksize >= _RESERVED_WORDS:
            n += 1
        frame = frame.f_back
    return n


def test_call_with_stack_room_is_the_call():
    assert call_with_stack_room(divmod, 7, 2) == (3, 1)
    with pytest.raises(ZeroDivisionError):
        call_with_stack_room(divmod, 1, 0)


def _recording(seen: list):
    def f(x):
        seen.append(_roomy_frames())
        return fnp.sin(x) * fnp.exp(x)
    return f


def _grad_k(f, k):
    for _ in range(k):
        f = funcgrad.grad(f)
    return f


def _jvp_k(f, k):
    for _ in range(k):
        f = (lambda g: lambda x: funcgrad.jvp(g, (x,), (1.0,))[1])(f)
    return f


@pytest.mark.parametrize("order", [1, 2, 3, 4, 6])
@pytest.mark.parametrize("transform", [
    _grad_k,
    lambda f, k: funcgrad.jit(_grad_k(f, k)),
    _jvp_k,
    lambda f, k: funcgrad.jit(_jvp_k(f, k)),
], ids=["grad", "jit-grad", "jvp", "jit-jvp"])
def test_third_level_of_nesting_reserves_room_once(transform, order):
    seen: list = []
    out = transform(_recording(seen), order)(0.3)
    if order == 4:  # d^4/dx^4 sin(x) e^x = -4 sin(x) e^x
        assert abs(float(out) + 4 * float(fnp.sin(0.3) * fnp.exp(0.3))) < 1e-10
    # Levels three and deeper run inside one reservation (not one per level: each would map
    # a chunk); one or two levels reserve nothing.
    assert seen
    assert set(seen) == {1 if needs_stack_room and order >= 3 else 0}


def test_hessian_of_grad_reserves_room():
    seen: list = []
    funcgrad.hessian(funcgrad.grad(lambda x: fnp.sum(_recording(seen)(x))))(fnp.ones(2))
    assert set(seen) == {1 if needs_stack_room else 0}


def test_nested_derivatives_unchanged():
    # The sixth derivative of sin is -sin, eager and jitted.
    g = _grad_k(fnp.sin, 6)
    for h in (g, funcgrad.jit(g)):
        assert abs(float(h(0.3)) + float(fnp.sin(0.3))) < 1e-12
