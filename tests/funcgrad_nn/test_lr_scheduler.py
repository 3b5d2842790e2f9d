"""funcgrad_nn.optim.lr_scheduler against PyTorch's documented formulas (closed forms)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from funcgrad_nn import optim
from funcgrad_nn.optim import lr_scheduler as L

N = 12


def _opt(lr=1.0, cls=optim.SGD, **kw):
    return cls([np.zeros(1)], lr=lr, **kw)


def _seq(sched, n=N):
    out = []
    for _ in range(n):
        out.append(sched.get_last_lr()[0])
        sched.step()
    return out


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("make,closed", [
    (lambda o: L.StepLR(o, 3, 0.5), lambda e: 0.5 ** (e // 3)),
    (lambda o: L.MultiStepLR(o, [2, 5, 5], 0.1), lambda e: 0.1 ** ((e >= 2) + 2 * (e >= 5))),
    (lambda o: L.ExponentialLR(o, 0.9), lambda e: 0.9**e),
    (lambda o: L.ConstantLR(o, 0.25, 4), lambda e: 0.25 if e < 4 else 1.0),
    (lambda o: L.LinearLR(o, 0.2, 0.8, 5), lambda e: 0.2 + 0.6 * min(e, 5) / 5),
    (lambda o: L.PolynomialLR(o, 6, 2.0), lambda e: (1 - min(e, 6) / 6) ** 2),
    (lambda o: L.LambdaLR(o, lambda e: 1 / (e + 1)), lambda e: 1 / (e + 1)),
    (lambda o: L.MultiplicativeLR(o, lambda e: 0.95), lambda e: 0.95**e),
    (lambda o: L.CosineAnnealingLR(o, 5, 0.1),
     lambda e: 0.1 + 0.9 * (1 + math.cos(math.pi * e / 5)) / 2),
    (lambda o: L.CosineAnnealingWarmRestarts(o, 3, 2, 0.0),
     lambda e: (1 + math.cos(math.pi * _sgdr(e)[0] / _sgdr(e)[1])) / 2),
])
def test_sequences_match_closed_forms(make, closed):
    _close(_seq(make(_opt())), [closed(e) for e in range(N)])


def _sgdr(e, t0=3, mult=2):
    ti = t0
    while e >= ti:
        e -= ti
        ti *= mult
    return e, ti


def test_closed_form_via_epoch_argument():
    s = L.StepLR(_opt(), 2, 0.5)
    with pytest.warns(UserWarning, match="deprecated"):
        s.step(5)
    _close(s.get_last_lr(), [0.25])


def test_two_groups_and_last_epoch():
    o = optim.SGD([{"params": [np.zeros(1)]}, {"params": [np.zeros(1)], "lr": 2.0}], lr=1.0)
    s = L.ExponentialLR(o, 0.5)
    s.step()
    s.step()
    assert s.last_epoch == 2
    _close(s.get_last_lr(), [0.25, 0.5])
    assert [g["initial_lr"] for g in o.param_groups] == [1.0, 2.0]
    with pytest.raises(KeyError, match=r"initial_lr' is not specified in param_groups\[0\]"):
        L.StepLR(_opt(), 2, last_epoch=3)


def test_chained_schedulers_compose():
    o = _opt()
    s = L.ChainedScheduler([L.ConstantLR(o, 0.1, 2), L.ExponentialLR(o, 0.9)])
    got = _seq(s, 5)
    _close(got, [0.1 * 0.9**e if e < 2 else 0.9**e for e in range(5)])


def test_sequential_lr_warmup_then_decay():
    o = _opt()
    s = L.SequentialLR(o, [L.LinearLR(o, 0.5, 1.0, 2), L.ExponentialLR(o, 0.5)], milestones=[3])
    # PyTorch: LinearLR for epochs 0-2, then ExponentialLR restarted (closed form at 0).
    _close(_seq(s, 6), [0.5, 0.75, 1.0, 1.0, 0.5, 0.25])
    with pytest.raises(ValueError, match="one more than the number of milestone points"):
        L.SequentialLR(o, [L.StepLR(o, 1)], milestones=[1])


def test_one_cycle_lr_and_momentum():
    o = _opt(cls=optim.SGD, momentum=0.9)
    s = L.OneCycleLR(o, max_lr=1.0, total_steps=10, pct_start=0.3)
    lrs, moms = [], []
    for _ in range(10):
        lrs.append(s.get_last_lr()[0])
        moms.append(o.param_groups[0]["momentum"])
        s.step() if len(lrs) < 10 else None

    def cos(start, end, pct):
        return end + (start - end) / 2 * (math.cos(math.pi * pct) + 1)

    init, mn = 1.0 / 25, 1.0 / 25 / 1e4
    end1 = 0.3 * 10 - 1
    exp_lr = [cos(init, 1.0, e / end1) if e <= end1 else cos(1.0, mn, (e - end1) / (9 - end1))
              for e in range(10)]
    exp_m = [cos(0.95, 0.85, e / end1) if e <= end1 else cos(0.85, 0.95, (e - end1) / (9 - end1))
             for e in range(10)]
    _close(lrs, exp_lr)
    _close(moms, exp_m)
    o2 = _opt(cls=optim.Adam)
    L.OneCycleLR(o2, max_lr=0.1, epochs=2, steps_per_epoch=5)
    assert o2.param_groups[0]["betas"] == (0.95, 0.999)
    with pytest.raises(ValueError, match="Tried to step 11 times"):
        for _ in range(11):
            s.step()
    with pytest.raises(ValueError, match="either total_steps OR"):
        L.OneCycleLR(_opt(), max_lr=1.0)


def test_reduce_on_plateau():
    o = _opt()
    s = L.ReduceLROnPlateau(o, patience=2, factor=0.5, cooldown=1, min_lr=0.2)
    lrs = []
    for loss in [1.0, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9]:
        s.step(loss)
        lrs.append(s.get_last_lr()[0])
    # bad epochs 1,2,3 -> reduce at the 3rd (epoch 5); cooldown 1; then again after 3 more bad.
    assert lrs == [1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25]
    s.step(0.9)
    s.step(0.9)
    s.step(0.9)
    s.step(0.9)
    assert s.get_last_lr() == [0.2]  # min_lr bound
    sd = s.state_dict()
    assert "optimizer" not in sd and sd["best"] == 0.9
    with pytest.raises(ValueError, match="Factor should be < 1.0."):
        L.ReduceLROnPlateau(o, factor=1.0)
    with pytest.raises(ValueError, match="mode max2 is unknown!"):
        L.ReduceLROnPlateau(o, mode="max2")
    m = L.ReduceLROnPlateau(_opt(), mode="max", patience=0, threshold_mode="abs", threshold=0.1)
    m.step(1.0)
    m.step(1.05)  # not better by 0.1 in abs terms
    assert m.get_last_lr() == [0.1]



def test_reduce_on_plateau_takes_one_element_arrays_as_torch_float_does():
    # A loss of shape (1,) (a model's output, or a device array) is a metric, as
    # float(tensor) takes any one-element tensor; larger arrays are a clear error.
    from tests.helpers import dev

    s = L.ReduceLROnPlateau(_opt(), patience=0, factor=0.5)
    for m in (np.array([1.0]), dev(np.array([[1.0]], np.float32)), np.float32(1.0)):
        s.step(m)
    assert s.get_last_lr() == [0.25] and s.best == 1.0  # two bad epochs after the first
    with pytest.raises(RuntimeError, match=r"shape \(2,\) \(2 elements\); reduce it first"):
        s.step(np.array([1.0, 2.0]))

def test_state_dict_roundtrip():
    o = _opt()
    s = L.CosineAnnealingLR(o, 10)
    for _ in range(4):
        s.step()
    sd = s.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 4
    o2 = _opt()
    o2.param_groups[0]["initial_lr"] = 1.0
    s2 = L.CosineAnnealingLR(o2, 10, last_epoch=0)
    s2.load_state_dict(sd)
    o2.param_groups[0]["lr"] = o.param_groups[0]["lr"]
    s.step()
    s2.step()
    _close(s2.get_last_lr(), s.get_last_lr())


@pytest.mark.parametrize("make,msg", [
    (lambda o: L.ConstantLR(o, factor=2.0), "Constant multiplicative factor"),
    (lambda o: L.LinearLR(o, start_factor=0.0), "Starting multiplicative factor"),
    (lambda o: L.CosineAnnealingWarmRestarts(o, 0), "Expected positive integer T_0, but got 0"),
    (lambda o: L.CosineAnnealingWarmRestarts(o, 2, T_mult=0), "Expected integer T_mult >= 1"),
    (lambda o: L.LambdaLR(o, [lambda e: 1.0] * 2), "Expected 1 lr_lambdas, but got 2"),
])
def test_scheduler_errors(make, msg):
    with pytest.raises(ValueError, match=msg):
        make(_opt())


def test_scheduler_drives_optimizer_step():
    w = np.zeros(1)
    o = optim.SGD([w], lr=1.0)
    s = L.StepLR(o, 1, 0.5)
    for _ in range(3):
        o.step([np.ones(1)])
        s.step()
    _close(w, [-1.75])


def test_a_0d_array_learning_rate_is_filled_in_place_as_pytorchs_tensor_lr():
    # PyTorch (_update_param_group_val): a tensor lr stays the same tensor, filled in place;
    # initial_lr, base_lrs and get_last_lr() hold copies (no aliasing).
    lr = np.array(0.1)
    opt = optim.SGD([np.zeros(1)], lr=lr, momentum=0.9)
    sched = L.StepLR(opt, step_size=1, gamma=0.5)
    for _ in range(2):
        opt.step([np.zeros(1)])
        sched.step()
    assert opt.param_groups[0]["lr"] is lr and float(lr) == 0.025
    assert float(opt.param_groups[0]["initial_lr"]) == 0.1 and float(sched.base_lrs[0]) == 0.1
    last = sched.get_last_lr()[0]
    assert last is not lr and float(last) == 0.025
    plateau = L.ReduceLROnPlateau(opt, patience=0, factor=0.5)
    plateau.step(1.0)
    plateau.step(2.0)
    assert opt.param_groups[0]["lr"] is lr and float(lr) == 0.0125
