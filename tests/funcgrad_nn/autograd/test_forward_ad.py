"""funcgrad_nn.autograd.forward_ad: PyTorch's dual-number API (values recorded from torch
2.13's torch.autograd.forward_ad)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import DEVICE, dev, host

import funcgrad
import funcgrad.numpy as fnp
import funcgrad_nn as nn
from funcgrad_nn.autograd import Function
from funcgrad_nn.autograd import forward_ad as fwAD

X = np.array([0.3, -0.7, 1.1])
T = np.array([1.0, 0.5, -2.0])


def test_values_match_pytorch():
    with fwAD.dual_level() as level:
        assert level == 0
        d = fwAD.make_dual(dev(X), dev(T))
        y = fnp.tanh(d) * fnp.exp(d) + (d ** 2).sum()
        primal, tangent = fwAD.unpack_dual(y)
        assert fwAD.unpack_dual(y).primal is primal
    # torch: the same function on torch.autograd.forward_ad dual tensors
    np.testing.assert_allclose(host(primal), [2.183230895675755, 1.4898798437985346,
                                              4.19483196337564], rtol=1e-13)
    np.testing.assert_allclose(host(tangent), [-2.871463416264225, -4.492458902040796,
                                               -11.467864706282358], rtol=1e-13)


def test_plain_arrays_modules_functions_and_nesting():
    x, t = dev(X), dev(T)
    assert fwAD.unpack_dual(x).tangent is None            # outside a level, as PyTorch
    lin = nn.Linear(3, 2).double().to(DEVICE)

    class Square(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def jvp(ctx, ta):
            (a,) = ctx.saved_tensors
            return 2 * a * ta

    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        assert fwAD.unpack_dual(x).tangent is None        # not a dual: tangent None
        np.testing.assert_allclose(host(fwAD.unpack_dual(lin(d)).tangent),
                                   host(lin.weight) @ T, rtol=1e-12)
        np.testing.assert_allclose(host(fwAD.unpack_dual(Square.apply(d)).tangent),
                                   2 * X * T, rtol=1e-12)
        with fwAD.dual_level() as inner:                 # nested levels (PyTorch: one only)
            assert inner == 1
            e = fwAD.make_dual(d, t)
            second = fwAD.unpack_dual(fwAD.unpack_dual(e * e, level=1).tangent,
                                     level=0).tangent
        np.testing.assert_allclose(host(second), 2 * T * T, rtol=1e-12)


def test_under_jit_and_grad():
    def tangent_of_sin(x, t):
        with fwAD.dual_level():
            return fwAD.unpack_dual(fnp.sin(fwAD.make_dual(x, t))).tangent

    x, t = dev(X), dev(T)
    np.testing.assert_allclose(host(funcgrad.jit(tangent_of_sin)(x, t)), np.cos(X) * T)
    np.testing.assert_allclose(
        host(funcgrad.grad(lambda x: tangent_of_sin(x, t).sum())(x)), -np.sin(X) * T)


def test_errors_like_pytorch():
    x = dev(X)
    with pytest.raises(RuntimeError, match="no level exists"):
        fwAD.make_dual(x, x)
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="different size"):
            fwAD.make_dual(x, dev(np.ones(2)))
        with pytest.raises(ValueError, match="floating point"):
            fwAD.make_dual(dev(np.array([1, 2])), dev(np.array([1, 1])))
        with pytest.raises(RuntimeError, match="level 3 is not active"):
            fwAD.unpack_dual(x, level=3)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, x)
    with pytest.raises(funcgrad.UnexpectedTracerError):
        d * 2.0                                           # used after its level ended
    with pytest.raises(RuntimeError, match="no dual level"):
        fwAD.exit_dual_level()


def test_unpack_after_the_level_and_dual_of_a_dual_as_pytorch():
    # torch 2.13: unpack_dual of a dual tensor after its level exited gives the plain primal
    # and tangent None (here the primal was the level's tracer, leaked out); make_dual of a
    # tensor already dual at the level raises
    with fwAD.dual_level():
        d = fwAD.make_dual(dev(X), dev(T))
        y = d * 2.0
        with pytest.raises(RuntimeError, match="already has a forward gradient at the same "
                                               "level 0"):
            fwAD.make_dual(y, dev(T))
        with fwAD.dual_level():                           # a nested level may take it
            inner = fwAD.unpack_dual(fwAD.make_dual(y, dev(T)) * 1.0)
            assert inner.tangent is not None
    primal, tangent = fwAD.unpack_dual(y)
    assert tangent is None and not isinstance(primal, funcgrad.core.Tracer)
    np.testing.assert_allclose(host(primal), 2 * X)
