"""Learning-rate schedulers against PyTorch: sequences recorded from torch.optim.lr_scheduler
(regenerate with tests/funcgrad_nn/fixtures/make_sched_fixtures.py; torch is not needed here):
CyclicLR, resuming with ``last_epoch >= 0``, SequentialLR restarts, ``step(epoch)``,
ReduceLROnPlateau; plus PyTorch's warnings and state_dict layout."""

from __future__ import annotations

import json
import pathlib
import pickle
import warnings

import numpy as np
import pytest

from funcgrad_nn import optim
from funcgrad_nn.optim import lr_scheduler as L
from tests.funcgrad_nn.fixtures.make_sched_fixtures import FNS, build, record

FIX = pathlib.Path(__file__).parent / "fixtures" / "optim" / "schedules.json"
CASES = {c["id"]: c for c in json.loads(FIX.read_text())["cases"]}


def _opt(case):
    groups = [{"params": [np.zeros(2)], "lr": 0.1 * (i + 1)} for i in range(2)]
    return getattr(optim, case.get("optimizer", "SGD"))(groups, **case.get("opt_kwargs", {}))


@pytest.mark.parametrize("cid", sorted(CASES))
def test_sequence_matches_pytorch(cid):
    case = CASES[cid]
    ours, ref = record(case, L, _opt(case)), case["torch"]
    np.testing.assert_allclose(ours["last_lr"], ref["last_lr"], rtol=1e-12, atol=1e-15,
                               err_msg=f"{cid}: get_last_lr()")
    np.testing.assert_allclose(ours["momentum"], ref["momentum"], rtol=1e-12, atol=1e-15,
                               err_msg=f"{cid}: momentum")
    assert ours["last_epoch"] == ref["last_epoch"], cid


def test_cyclic_lr_state_dict_round_trip_and_layout():
    case = CASES["cyclic_triangular2"]
    o1, o2 = _opt(case), _opt(case)
    s1 = build(case["sched"], L, o1)
    for _ in range(9):
        s1.step()
    sd = pickle.loads(pickle.dumps(s1.state_dict()))
    assert "_scale_fn_ref" not in sd and sd["_scale_fn_custom"] is None
    assert sd["mode"] == "triangular2" and sd["scale_mode"] == "cycle"
    s2 = build(case["sched"], L, o2)
    o2.load_state_dict(o1.state_dict())
    s2.load_state_dict(sd)
    for _ in range(12):
        s1.step()
        s2.step()
        assert s2.get_last_lr() == s1.get_last_lr()
        assert o2.param_groups[0]["momentum"] == o1.param_groups[0]["momentum"]


def test_cyclic_lr_custom_scale_object_state_and_errors():
    class Halving:
        def __init__(self):
            self.base = 0.5

        def __call__(self, x):
            return self.base**x

    fn = Halving()
    o = _opt({})
    s = L.CyclicLR(o, 0.01, 0.1, step_size_up=2, scale_fn=fn)
    fn.base = 0.25
    sd = s.state_dict()
    assert sd["_scale_fn_custom"] == {"base": 0.25}
    fn.base = 0.9
    s.load_state_dict(sd)
    assert fn.base == 0.25
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        L.CyclicLR(_opt({}), 0.01, 0.1, mode="sawtooth")
    with pytest.raises(ValueError, match="must support momentum or beta1"):
        L.CyclicLR(optim.Adagrad([np.zeros(1)]), 0.01, 0.1)
    with pytest.raises(ValueError, match="base_lr must have the same length"):
        L.CyclicLR(_opt({}), [0.01], 0.1, cycle_momentum=False)


def test_state_dict_keys_as_pytorch():
    o = _opt({"opt_kwargs": {"momentum": 0.9}})
    sd = L.OneCycleLR(o, 1.0, total_steps=10).state_dict()
    assert sd["_anneal_func_type"] == "cos"
    assert sd["_is_initial"] is False and sd["_get_lr_called_within_step"] is False
    s = L.CosineAnnealingWarmRestarts(_opt({}), 3)
    s.step()
    assert s.state_dict()["_step_count"] == 0  # PyTorch's own step() does not count


def test_step_order_and_get_lr_warnings():
    w = np.zeros(1)
    o = optim.SGD([w], lr=1.0)
    s = L.StepLR(o, 2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        s.step()
    o2 = optim.SGD([np.zeros(1)], lr=1.0)
    s2 = L.StepLR(o2, 2)
    o2.step([np.ones(1)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s2.step()
        s2.step()
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        s2.get_lr()


def test_multiplicative_lr_checks_callables_and_resume_needs_initial_lr():
    with pytest.raises(TypeError, match="lr_lambda should be a function, but got float"):
        L.MultiplicativeLR(_opt({}), 0.9)
    with pytest.raises(KeyError, match=r"initial_lr' is not specified in param_groups\[0\]"):
        L.ExponentialLR(_opt({}), 0.9, last_epoch=4)
    assert callable(FNS["exp95"])


def test_reduce_on_plateau_follows_added_groups():
    o = optim.SGD([np.zeros(1)], lr=1.0)
    s = L.ReduceLROnPlateau(o, patience=0, min_lr=0.3)
    o.add_param_group({"params": [np.zeros(1)], "lr": 2.0})
    s.step(1.0)
    s.step(1.0)
    assert s.get_last_lr() == [0.3, 0.3]  # the scalar min_lr covers the new group
    o3 = optim.SGD([np.zeros(1)], lr=1.0)
    s3 = L.ReduceLROnPlateau(o3, patience=0, min_lr=[0.1])
    o3.add_param_group({"params": [np.zeros(1)], "lr": 2.0})
    s3.step(1.0)
    with pytest.raises(RuntimeError, match="differs from when `ReduceLROnPlateau` was"):
        s3.step(1.0)
    with pytest.warns(UserWarning, match="epoch parameter"):
        L.ReduceLROnPlateau(optim.SGD([np.zeros(1)], lr=1.0)).step(1.0, epoch=3)
