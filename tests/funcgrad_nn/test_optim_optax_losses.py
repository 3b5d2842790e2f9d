"""optax's top-level losses (``optim.softmax_cross_entropy``, ``l2_loss``, ...) against optax:
values recorded by tests/funcgrad_nn/fixtures/make_optax_fixtures.py (optax is not needed
here)."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad_nn import optim
from tests.funcgrad_nn.fixtures.make_optax_fixtures import loss_inputs, loss_value
from tests.helpers import assert_allclose, dev, host

FIX = json.loads((pathlib.Path(__file__).parent / "fixtures" / "optim" / "optax.json").read_text())


@pytest.mark.parametrize("lid", sorted(FIX["losses"]))
def test_loss_matches_optax(lid):
    case = FIX["losses"][lid]
    got = host(loss_value(optim, case["expr"], dev))
    assert_allclose(np.asarray(got), np.asarray(case["value"]), rtol=1e-12, atol=1e-14,
                    err_msg=lid)


def test_losses_under_jit_grad_and_float32():
    inp = loss_inputs()
    x, pm, mask = dev(inp["x"]), dev(inp["probs_masked"]), dev(inp["mask"])

    def total(x):
        return fnp.sum(optim.softmax_cross_entropy(x, pm, where=mask))

    # masked classes: -inf log-probabilities times zero labels must give 0, not NaN, and no
    # NaN gradient either (optax's first row of the gradient)
    g = funcgrad.jit(funcgrad.grad(total))(x)
    assert_allclose(host(g)[0], np.array([-0.12477305, 0.0, 0.07898833, -0.26759477,
                                          0.3133795]), rtol=1e-6)
    labels = dev(inp["ilabels"])
    eager = optim.softmax_cross_entropy_with_integer_labels(x, labels)
    jitted = funcgrad.jit(optim.softmax_cross_entropy_with_integer_labels)(x, labels)
    assert_allclose(host(jitted), host(eager), rtol=1e-14)
    out = optim.sigmoid_binary_cross_entropy(dev(inp["x"].astype(np.float32)), dev(inp["probs"]))
    assert out.dtype == np.float32  # the labels are cast to the logits' dtype, as optax's
    per_row = funcgrad.vmap(lambda r: optim.huber_loss(r, delta=0.5))(x)
    assert_allclose(host(per_row), host(optim.huber_loss(x, delta=0.5)))


def test_loss_input_errors_as_optax():
    with pytest.raises(TypeError, match="subdtype of <class 'jax.numpy.floating'>, got int64"):
        optim.l2_loss(np.array([1, 2]))
    with pytest.raises(TypeError, match="subdtype of <class 'jax.numpy.integer'>"):
        optim.softmax_cross_entropy_with_integer_labels(np.zeros((2, 3)), np.zeros(2))
    with pytest.raises(ValueError, match="same shape"):
        optim.squared_error(np.zeros(3), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="must be of type 'int' or 'tuple"):
        optim.softmax_cross_entropy_with_integer_labels(np.zeros((2, 3)), np.zeros(2, int),
                                                        axis=[1])
