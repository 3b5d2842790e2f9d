"""``F.linear_cross_entropy`` and ``nn.LinearCrossEntropyLoss`` (PyTorch 2.13) beyond the
PyTorch fixtures in ``test_pointwise_loss_parity.py``: the module's layout, its agreement
with the functional form, gradients, jit, and bad input."""

import numpy as np
import pytest

import funcgrad
import funcgrad_nn as nn
from funcgrad.test_util import check_grads
from funcgrad_nn import functional as F
from tests.helpers import assert_allclose, dev

rng = np.random.default_rng(0)


def test_equals_cross_entropy_of_the_linear_logits():
    x, w, b = rng.normal(size=(6, 3)), rng.normal(size=(4, 2, 3)), rng.normal(size=(4, 2))
    t = dev(rng.integers(0, 4, (6, 2)))
    logits = np.einsum("ni,cdi->ncd", x, w) + b
    got = F.linear_cross_entropy(dev(x), dev(w), t, linear_bias=dev(b), label_smoothing=0.1)
    assert_allclose(got, F.cross_entropy(dev(logits), t, label_smoothing=0.1))
    check_grads(lambda x, w, b: F.linear_cross_entropy(x, w, t, linear_bias=b),
                (dev(x), dev(w), dev(b)), order=1)
    jitted = funcgrad.jit(lambda x, w: F.linear_cross_entropy(x, w, t))
    assert_allclose(jitted(dev(x), dev(w)), F.linear_cross_entropy(dev(x), dev(w), t))


def test_module_layout_and_forward_match_pytorch():
    loss = nn.LinearCrossEntropyLoss(3, 4, out_features=(2,), bias=True, reduction="sum",
                                     weight=np.linspace(0.5, 2.0, 4), ignore_index=1)
    sd = loss.state_dict()
    # PyTorch stores the projection flat, as an ordinary Linear; the class weight a buffer.
    assert sd["linear.weight"].shape == (8, 3) and sd["linear.bias"].shape == (8,)
    assert sd["weight"].shape == (4,)
    assert loss.linear.weight.dtype == np.float32
    x = rng.normal(size=(5, 3)).astype(np.float32)
    t = rng.integers(0, 4, (5, 2))
    want = F.linear_cross_entropy(x, np.reshape(loss.linear.weight, (4, 2, 3)), t,
                                  linear_bias=np.reshape(loss.linear.bias, (4, 2)),
                                  weight=loss.weight, reduction="sum", ignore_index=1)
    assert_allclose(loss(x, t), want)
    assert repr(loss).splitlines()[1].strip() == (
        "in_features=3, num_classes=4, out_features=(2,), bias=True, reduction=sum, "
        "ignore_index=1, label_smoothing=0.0, options=None")
    assert nn.LinearCrossEntropyLoss(3, 4).linear.bias is None


@pytest.mark.parametrize("args,kwargs,match", [
    ((np.ones((2, 2, 3)), np.ones((4, 3)), np.zeros((2, 2), np.int64)), {}, "dimensionality 1 or 2"),
    ((np.ones((2, 3)), np.ones(3), np.zeros(2, np.int64)), {}, "at least 2"),
    ((np.ones((2, 3)), np.ones((4, 2)), np.zeros(2, np.int64)), {}, "in_features"),
    ((np.ones((2, 3)), np.ones((4, 3)), np.zeros(2, np.int64)), {"linear_bias": np.ones(5)},
     "linear_bias shape"),
    ((np.ones(3), np.ones((4, 2, 3)), np.zeros(2, np.int64)), {}, "requires batched input"),
    ((np.ones((2, 3)), np.ones((4, 3)), np.full((2, 4), 0.25)), {"ignore_index": 0},
     "probabilities"),
])
def test_bad_input_raises_like_pytorch(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        F.linear_cross_entropy(*args, **kwargs)


def test_module_checks_its_arguments():
    with pytest.raises(ValueError, match="weight shape"):
        nn.LinearCrossEntropyLoss(3, 4, weight=np.ones(3))
    with pytest.raises(ValueError, match="label_smoothing"):
        nn.LinearCrossEntropyLoss(3, 4, label_smoothing=1.5)
