"""AdaptiveLogSoftmaxWithLoss: forward values and gradients are checked against PyTorch in
test_conv_fixtures (cases adaptive_log_softmax*); here log_prob/predict against forward,
the transforms, and the errors."""

import numpy as np
import pytest

import funcgrad
import funcgrad_nn as nn
from tests.helpers import DEVICE, assert_allclose, dev, host


def _model():
    nn.manual_seed(0)
    asm = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0).double().to(DEVICE)
    asm.head.weight[3:] *= 8  # make the head pick the tail clusters for some rows
    return asm


def test_log_prob_is_a_distribution_that_forward_picks_from():
    asm = _model()
    x = dev(np.random.default_rng(0).normal(size=(9, 8)) * 3)
    target = np.array([0, 4, 9, 2, 7, 5, 3, 6, 8])
    lp = host(asm.log_prob(x))
    assert lp.shape == (9, 10)
    assert_allclose(np.exp(lp).sum(1), np.ones(9), rtol=1e-12)
    out, loss = asm(x, dev(target))
    assert_allclose(out, lp[np.arange(9), target], rtol=1e-12)
    assert_allclose(loss, -lp[np.arange(9), target].mean(), rtol=1e-12)
    pred = host(asm.predict(x))
    assert (pred == lp.argmax(1)).all() and (pred >= 3).any() and (pred < 3).any()
    assert_allclose(asm.log_prob(x[0]), lp[0], rtol=1e-12)
    assert_allclose(asm(x[0], dev(np.array(target[0])))[0], lp[0, target[0]], rtol=1e-12)


def test_transforms_see_static_shapes():
    asm = _model()
    x = dev(np.random.default_rng(1).normal(size=(5, 8)))
    target = dev(np.array([0, 9, 4, 4, 1]))
    want = host(asm(x, target).loss)
    assert_allclose(nn.jit(lambda m, a, t: m(a, t).loss)(asm, x, target), want, rtol=1e-12)
    per_row = nn.vmap(lambda a, t: asm(a, t).output)(x, target)
    assert_allclose(per_row, asm(x, target).output, rtol=1e-12)
    assert_allclose(nn.jit(lambda m, a: m.predict(a))(asm, x), asm.predict(x))
    # A target closed over by the jitted function is a constant, not a tracer: its range
    # check runs on the host (fnp.min under jit traced it, and int() raised).
    assert_allclose(funcgrad.jit(lambda a: asm(a, target).loss)(x), want, rtol=1e-12)
    g = nn.grad(lambda m: m(x, target).loss)(asm)
    assert host(g.tail[1][1].weight).any()  # class 9 is in the last cluster


@pytest.mark.parametrize("make, match", [
    (lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 10, []), "length larger than 0"),
    (lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 10, [6, 3]), "sorted"),
    (lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 10]), "between 1 and n_classes-1"),
])
def test_bad_cutoffs(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_bad_inputs_raise_runtime_errors_as_pytorch():
    asm = _model()
    with pytest.raises(RuntimeError, match=r"target values should be in \[0, 9\]"):
        asm(dev(np.ones((2, 8))), dev(np.array([1, 10])))
    with pytest.raises(RuntimeError, match="same size in the batch"):
        asm(dev(np.ones((3, 8))), dev(np.array([1, 2])))
    with pytest.raises(RuntimeError, match="1D target expects 2D input"):
        asm(dev(np.ones((3, 2, 8))), dev(np.array([1, 2, 3])))
    with pytest.raises(RuntimeError, match="multi-target"):
        asm(dev(np.ones((3, 8))), dev(np.ones((3, 2), np.int64)))
