"""funcgrad_nn.optim.swa_utils: AveragedModel (SWA, EMA, buffers), SWALR, update_bn."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad_nn as nn
from funcgrad_nn import optim
from funcgrad_nn.optim import swa_utils
from tests.helpers import assert_allclose, host


def _net():
    nn.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 1))


def _snapshots(model, k):
    rng = np.random.default_rng(k)
    for p in model.parameters():
        p[...] = rng.standard_normal(p.shape).astype(p.dtype)
    model(rng.standard_normal((8, 3)).astype(np.float32))  # moves the running statistics
    return [p.copy() for p in model.parameters()], [b.copy() for b in model.buffers()]


def test_swa_is_the_running_mean_and_buffers_follow_the_model():
    model = _net()
    swa = swa_utils.AveragedModel(model)
    seen = []
    for k in range(4):
        params, bufs = _snapshots(model, k)
        seen.append(params)
        swa.update_parameters(model)
    assert int(swa.n_averaged) == 4
    assert not isinstance(swa.n_averaged, np.generic)  # a 0-d array buffer, not a scalar
    for i, p in enumerate(swa.module.parameters()):
        assert_allclose(p, np.mean([s[i] for s in seen], axis=0), rtol=1e-6, atol=1e-6)
    for b, ref in zip(swa.module.buffers(), bufs):
        assert_allclose(b, ref)  # use_buffers=False: copied from the model
    x = np.ones((2, 3), np.float32)
    assert_allclose(swa.eval()(x), swa.module(x))


def test_ema_with_buffers_and_custom_avg_fn():
    model = _net()
    ema = swa_utils.AveragedModel(model, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.9),
                                  use_buffers=True)
    custom = swa_utils.AveragedModel(model, avg_fn=swa_utils.get_ema_avg_fn(0.9),
                                     use_buffers=True)
    ref_p = ref_b = None
    for k in range(3):
        params, bufs = _snapshots(model, k)
        params, bufs = [host(p) for p in params], [host(b) for b in bufs]
        ema.update_parameters(model)
        custom.update_parameters(model)
        if ref_p is None:
            ref_p, ref_b = params, bufs
        else:
            ref_p = [0.9 * r + 0.1 * p for r, p in zip(ref_p, params)]
            # integer buffers (num_batches_tracked) too, truncated, as PyTorch
            ref_b = [0.9 * r + 0.1 * b if b.dtype.kind == "f" else
                     np.trunc(0.9 * r + 0.1 * b).astype(b.dtype)
                     for r, b in zip(ref_b, bufs)]
    for m in (ema, custom):
        assert_allclose(list(m.module.parameters()), ref_p, rtol=1e-6, atol=1e-6)
        assert_allclose(list(m.module.buffers()), ref_b, rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="do not match"):
        ema.update_parameters(nn.Linear(3, 1))


@pytest.mark.parametrize("strategy,epochs,expected", [
    # PyTorch 2.13's SWALR(SGD(lr=1.0), swa_lr=0.05, ...) get_last_lr() after 0..6 steps.
    ("cos", 3, [1.0, 0.7625, 0.2875000000000001, 0.05, 0.05, 0.05, 0.05]),
    ("linear", 4, [1.0, 0.7625, 0.525, 0.2875, 0.05, 0.05, 0.05]),
    ("cos", 0, [0.05] * 7),
])
def test_swalr_matches_pytorch(strategy, epochs, expected):
    opt = optim.SGD([np.zeros(1)], lr=1.0)
    sched = swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=epochs, anneal_strategy=strategy)
    lrs = [sched.get_last_lr()[0]]
    for _ in range(6):
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    assert lrs == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match="anneal_strategy must be one of"):
        swa_utils.SWALR(opt, 0.1, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0"):
        swa_utils.SWALR(opt, 0.1, anneal_epochs=-1)


def test_update_bn_is_a_cumulative_average_and_restores_mode():
    model = _net().eval()
    rng = np.random.default_rng(5)
    batches = [rng.standard_normal((8, 3)).astype(np.float32) for _ in range(3)]
    swa_utils.update_bn([(b, None) for b in batches], model)
    assert not model.training and model[1].momentum == 0.1
    h = [model[0](b) for b in batches]
    assert_allclose(model[1].running_mean, np.mean([x.mean(0) for x in h], axis=0), rtol=1e-5)
    assert int(model[1].num_batches_tracked) == 3


def test_multi_avg_fns_and_integer_buffers_as_pytorch():
    # PyTorch 2.13: the SWA lerp weight 1 / (n + 1) of a tensor n is a float32 value.
    a = [np.zeros(2)]
    swa_utils.get_swa_multi_avg_fn()(a, [np.ones(2)], np.array(2))
    assert a[0][0] == 0.3333333432674408
    a = [np.zeros(2)]
    swa_utils.get_swa_multi_avg_fn()(a, [np.ones(2)], 2)
    assert a[0][0] == 1 / 3
    # integer arrays take the EMA truncated towards zero: [2, -1] in PyTorch
    a = [np.array([1, 1])]
    swa_utils.get_ema_multi_avg_fn(0.5)(a, [np.array([4, -4])], 2)
    assert a[0].tolist() == [2, -1]
    for make in (swa_utils.get_ema_multi_avg_fn, swa_utils.get_ema_avg_fn):
        with pytest.raises(ValueError, match=r"Invalid decay value 1.5 provided"):
            make(1.5)
    # use_buffers: num_batches_tracked (int64) is averaged and truncated, so PyTorch's
    # AveragedModel keeps 1 after 4 updates of a model that counted 1, 2, 3, 4 batches
    bn = nn.BatchNorm1d(2)
    for kw in ({}, {"multi_avg_fn": swa_utils.get_ema_multi_avg_fn(0.9)}):
        avg = swa_utils.AveragedModel(bn, use_buffers=True, **kw)
        bn.reset_running_stats()
        for k in range(4):
            bn(np.random.default_rng(k).standard_normal((3, 2)).astype(np.float32))
            avg.update_parameters(bn)
        assert int(bn.num_batches_tracked) == 4 and int(avg.module.num_batches_tracked) == 1


def test_swalr_state_dict_keys_are_pytorchs():
    opt = optim.SGD([np.zeros(1)], lr=0.1)
    sched = swa_utils.SWALR(opt, 0.05, anneal_strategy="linear")
    sd = sched.state_dict()
    assert set(sd) == {"_anneal_strategy", "anneal_epochs", "base_lrs", "last_epoch",
                       "_step_count", "_is_initial", "_get_lr_called_within_step", "_last_lr"}
    other = swa_utils.SWALR(optim.SGD([np.zeros(1)], lr=0.1), 0.05)
    other.load_state_dict(sd)
    assert other.anneal_func(0.25) == 0.25


def test_integer_averages_round_in_the_default_dtype_as_pytorch():
    # PyTorch 2.13 (default dtype float32): an integer tensor times a Python float is
    # float32, so the EMA of a constant count 3 with decay 0.9 is 2.9999998, truncated to 2
    a = [np.array([3, 10, 0])]
    swa_utils.get_ema_multi_avg_fn(0.9)(a, [np.array([3, 11, 10])], np.array(1))
    assert a[0].tolist() == [2, 10, 1]
    r = swa_utils.get_ema_avg_fn(0.9)(np.array([3]), np.array([3]), np.array(1))
    assert r.dtype == np.float32 and r.item() == 2.999999761581421
    r = swa_utils.get_swa_avg_fn()(np.array([5]), np.array([9]), np.array(2))
    assert r.dtype == np.float32 and r.item() == 6.333333492279053
    # a float32 average over a 0-d int64 count stays float32 (torch's dtype rule)
    r = swa_utils.get_swa_avg_fn()(np.array([1.0], np.float32), np.array([2.0], np.float32),
                                   np.array(2))
    assert r.dtype == np.float32
    # an EMA AveragedModel with buffers: num_batches_tracked held at 3 decays to 2
    bn = nn.BatchNorm1d(2)
    seen = []
    avg = swa_utils.AveragedModel(bn, avg_fn=lambda a, c, n: seen.append(n.item()) or c,
                                  use_buffers=True)
    ema = swa_utils.AveragedModel(bn, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.9),
                                  use_buffers=True)
    bn.num_batches_tracked[...] = 3
    for _ in range(2):
        avg.update_parameters(bn)
        ema.update_parameters(bn)
    assert int(ema.module.num_batches_tracked) == 2
    assert seen == [1] * 5  # avg_fn gets the count as an array (PyTorch: a tensor)
