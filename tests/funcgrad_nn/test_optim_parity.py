"""Every optimizer against PyTorch: 30-step float64 trajectories from committed fixtures
(regenerate with tests/funcgrad_nn/fixtures/make_optim_fixtures.py; torch is not needed here),
PyTorch's state_dict layout, and loading PyTorch's mid-run state_dict continues PyTorch's run."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import funcgrad_nn as nn
from funcgrad_nn import optim
from tests.helpers import DEVICE, assert_allclose, dev, host

FIX = pathlib.Path(__file__).parent / "fixtures" / "optim"
META = json.loads((FIX / "cases.json").read_text())
TRAJ = np.load(FIX / "trajectories.npz")
P0 = [np.array(p) for p in META["p0"]]
A = [np.array(a) for a in META["a"]]
MASKS = np.array(META["masks"], dtype=bool)
CASES = {c["id"]: c for c in META["cases"]}


@pytest.fixture(autouse=True)
def _float64_default_dtype():
    # The fixtures ran under torch.set_default_dtype(torch.float64): PyTorch's state scalars
    # (step, NAdam's mu_product, ASGD's eta) follow the default dtype, and so do ours.
    before = nn.get_default_dtype()
    nn.set_default_dtype(np.float64)
    yield
    nn.set_default_dtype(before)


def _masks(t):
    out, k = [], 0
    for p in P0:
        out.append(MASKS[t, k:k + p.size].reshape(p.shape))
        k += p.size
    return out


def _grads(ps, t, sparse):
    gs = [a * host(p) - 3 * np.sin(3 * host(p)) for a, p in zip(A, ps)]
    if sparse:
        gs = [g * m for g, m in zip(gs, _masks(t))]
    return dev(gs)


def _kwargs(case):
    kw = dict(case["kwargs"])
    for k in ("betas", "etas", "step_sizes", "eps"):
        if isinstance(kw.get(k), list):
            kw[k] = tuple(kw[k])
    return kw


def _build(case, ps, **extra):
    cls = getattr(optim, case["optimizer"])
    params = ps if case["group1"] is None else [
        {"params": [ps[0]]}, {"params": [ps[1]], **_kwargs({"kwargs": case["group1"]})}]
    return cls(params, **_kwargs(case), **extra)


def _run(case, opt, ps, start, stop):
    for t in range(start, stop):
        opt.step(_grads(ps, t, case["optimizer"] == "SparseAdam"))
        for i, p in enumerate(ps):
            assert_allclose(host(p), TRAJ[f"{case['id']}/p{i}"][t + 1], rtol=1e-10, atol=1e-12,
                            err_msg=f"{case['id']}: parameter {i} after step {t + 1}")


@pytest.mark.parametrize("cid", sorted(CASES))
def test_trajectory_matches_pytorch(cid):
    case = CASES[cid]
    ps = dev([p.copy() for p in P0])
    opt = _build(case, ps)
    _run(case, opt, ps, 0, META["mid"])
    sd = opt.state_dict()
    assert {str(k): sorted(v) for k, v in sd["state"].items()} == case["state_keys"]
    _run(case, opt, ps, META["mid"], META["steps"])
    if DEVICE != "cpu":
        assert type(ps[0]) is not np.ndarray


@pytest.mark.parametrize("cid", sorted(c for c in CASES if "sparse" not in c))
def test_fused_jitted_step_matches_pytorch(cid):
    # foreach=True: the whole group's update runs as one jitted program (the large-model
    # default); same transforms, so the same trajectory.
    case = CASES[cid]
    ps = dev([p.copy() for p in P0])
    opt = _build(case, ps, foreach=True)
    _run(case, opt, ps, 0, META["steps"])
    assert opt.__dict__.get("_fused_cache")


@pytest.mark.parametrize("cid", sorted(CASES))
def test_state_dict_round_trip_mid_run(cid):
    case = CASES[cid]
    ps = dev([p.copy() for p in P0])
    opt = _build(case, ps)
    _run(case, opt, ps, 0, META["mid"])
    sd = opt.state_dict()
    # A fresh optimizer (other hyperparameters) on copies, loaded mid-run, continues exactly.
    qs = dev([host(p).copy() for p in ps])
    other = _build(case, qs)
    other.load_state_dict(sd)
    _run(case, other, qs, META["mid"], META["steps"])


@pytest.mark.parametrize("cid", sorted(CASES))
def test_loading_pytorch_state_dict_continues_pytorchs_run(cid):
    case = CASES[cid]
    mid = META["mid"]
    ps = dev([TRAJ[f"{cid}/p{i}"][mid].copy() for i in range(len(P0))])
    opt = _build(case, ps)
    state = {}
    for idx, keys in case["state_keys"].items():
        state[int(idx)] = {k: TRAJ[f"{cid}/state/{idx}/{k}"] for k in keys}
    sd = opt.state_dict()
    sd["state"] = state
    opt.load_state_dict(sd)
    _run(case, opt, ps, mid, META["steps"])


def _loss_and_grads(ps):
    loss = sum(float(np.sum(a * host(p) ** 2 / 2 + np.cos(3 * host(p)))) for a, p in zip(A, ps))
    return loss, _grads(ps, 0, False)


@pytest.mark.parametrize("case", META["lbfgs"], ids=lambda c: c["id"])
def test_lbfgs_matches_pytorch(case):
    ps = dev([p.copy() for p in P0])
    opt = optim.LBFGS(ps, **case["kwargs"])
    n_evals = 0

    def closure():
        nonlocal n_evals
        n_evals += 1
        return _loss_and_grads(ps)

    for k in range(META["lbfgs_steps"]):
        loss = opt.step(closure)
        assert abs(float(loss) - case["losses"][k]) <= 1e-10 * max(1.0, abs(case["losses"][k]))
        for i, p in enumerate(ps):
            assert_allclose(host(p), TRAJ[f"{case['id']}/p{i}"][k + 1], rtol=1e-10, atol=1e-12,
                            err_msg=f"{case['id']}: parameter {i} after step {k + 1}")
    assert n_evals == case["n_evals"]
    st = opt.state[ps[0]]
    assert (st["func_evals"], st["n_iter"]) == (case["func_evals"], case["n_iter"])


API = json.loads((FIX / "api.json").read_text())


@pytest.mark.parametrize("name", sorted(API["param_groups"]))
def test_default_param_group_matches_pytorch(name):
    # Every key PyTorch's group has (capturable, differentiable, fused included), same values.
    opt = getattr(optim, name)([np.zeros(2)])
    group = {k: v for k, v in opt.param_groups[0].items() if k != "params"}
    assert json.loads(json.dumps(group)) == API["param_groups"][name]
    assert json.loads(json.dumps(opt.defaults)) == API["param_groups"][name]
    # and the same Python types (0, not 0.0, where PyTorch's default is 0: str(opt) matches)
    types = {k: type(v).__name__ for k, v in json.loads(json.dumps(group)).items()}
    assert types == {k: type(v).__name__ for k, v in API["param_groups"][name].items()}


def test_named_parameters_and_pytorch_flag_checks():
    import funcgrad_nn as nn

    model = nn.Linear(2, 3)
    opt = optim.Adam(model.named_parameters(), lr=0.1, fused=True)
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["weight", "bias"]
    w0 = host(model.weight).copy()
    opt.step([np.ones((3, 2), np.float32), np.ones(3, np.float32)])
    assert_allclose(host(model.weight), w0 - 0.1, rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="param groups should be with/without names"):
        opt.add_param_group({"params": [np.zeros(1)]})
    with pytest.raises(ValueError, match="Some param names are missing"):
        optim.SGD([("a", np.zeros(1)), np.zeros(1)])
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together"):
        optim.SGD([np.zeros(1)], fused=True, foreach=True)
    with pytest.raises(RuntimeError, match="`fused` does not support `differentiable`"):
        optim.AdamW([np.zeros(1)], fused=True, differentiable=True)
    # PyTorch's positional order: RMSprop's capturable comes before foreach and maximize.
    assert optim.RMSprop([np.zeros(1)], 0.01, 0.99, 1e-8, 0, 0, False, False, None,
                         True).param_groups[0]["maximize"] is True
