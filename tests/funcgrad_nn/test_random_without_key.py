"""Random ``F`` functions called without ``key=`` (PyTorch's ``F.dropout(x, p,
training=self.training)`` in a ported forward): eagerly they draw from the global generator;
under ``nn.jit`` from a key it passes in at every call (fresh masks each step, reproducible
with ``nn.manual_seed``); under a plain ``funcgrad.jit`` they refuse (a draw there would be
frozen into the compiled program)."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad_nn as nn
from tests.helpers import DEVICE, dev, host

F = nn.F


class TwoDropouts(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = F.dropout(self.lin(x), 0.5, training=self.training)
        return F.dropout(h, 0.5, training=self.training)


def _x():
    return dev(np.ones((16, 8), np.float32))


def test_nn_jit_draws_fresh_reproducible_masks():
    m = TwoDropouts().to(DEVICE)
    step = nn.jit(lambda m, x: m(x))
    nn.manual_seed(5)
    a, b = host(step(m, _x())), host(step(m, _x()))
    assert not np.array_equal(a == 0, b == 0)  # a new mask at every call
    assert 0.6 < (a == 0).mean() < 0.9  # two dropouts of 0.5: three quarters dropped
    nn.manual_seed(5)
    assert np.array_equal(a, host(step(m, _x())))
    m.eval()
    assert np.array_equal(host(step(m, _x())), host(step(m, _x())))


def test_nn_jit_of_grad_and_compile():
    m = TwoDropouts().to(DEVICE)
    g = nn.jit(nn.grad(lambda m, x: m(x).sum()))
    assert not np.array_equal(host(g(m, _x()).lin.weight), host(g(m, _x()).lin.weight))
    m.compile()
    assert not np.array_equal(host(m(_x())), host(m(_x())))


def test_key_free_steps_keep_their_signature_and_the_generator_stream():
    m = TwoDropouts().to(DEVICE)
    nn.manual_seed(1)
    nn.jit(lambda m, x: m.lin(x))(m, _x())  # draws nothing: takes no key
    after = nn.init.default_generator().integers(0, 2**31)
    nn.manual_seed(1)
    assert nn.init.default_generator().integers(0, 2**31) == after


def test_static_arguments_keep_their_positions():
    m = TwoDropouts().to(DEVICE)
    step = nn.jit(lambda m, x, p: F.dropout(m.lin(x), p), static_argnums=(2,))
    assert step(m, _x(), 0.5).shape == step(m, _x(), 0.0).shape == (16, 8)


def test_nested_nn_jit_splits_the_outer_key_and_plain_jit_refuses():
    m = TwoDropouts().to(DEVICE)
    inner = nn.jit(lambda m, x: m(x))
    outer = nn.jit(lambda m, x: inner(m, x) * 2)
    assert not np.array_equal(host(outer(m, _x())), host(outer(m, _x())))
    with pytest.raises(TypeError, match="under jit/vmap the random draw needs key="):
        funcgrad.jit(lambda x: nn.jit(lambda m, x: m(x))(m, x))(_x())
    with pytest.raises(TypeError, match="key="):
        funcgrad.jit(lambda x: F.dropout(x, 0.5))(_x())
