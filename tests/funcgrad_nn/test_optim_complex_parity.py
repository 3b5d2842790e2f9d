"""Optimizers against PyTorch under its default dtype: float32 state scalars (step, NAdam's
mu_product, ASGD's eta and mu) for float64 parameters, and complex parameters (PyTorch's
view_as_real algorithms, LBFGS included). Fixtures: fixtures/optim/scalars_complex.* (from
make_optim_fixtures.py's write_scalars_complex; torch is not needed here)."""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np
import pytest

import funcgrad_nn as nn
from funcgrad_nn import optim
from tests.helpers import assert_allclose, dev, host

FIX = pathlib.Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIX))
from make_optim_fixtures import extra_grad, extra_loss, extra_problem  # noqa: E402

sys.path.remove(str(FIX))

META = json.loads((FIX / "optim" / "scalars_complex.json").read_text())
REF = np.load(FIX / "optim" / "scalars_complex.npz")
CASES = {c["id"]: c for c in META["cases"]}
REAL, CPLX, A = extra_problem()


def _kwargs(kw):
    return {k: tuple(v) if isinstance(v, list) else v for k, v in kw.items()}


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("cid", sorted(CASES))
def test_matches_pytorch_under_its_default_dtype(cid, foreach):
    case = CASES[cid]
    if case["optimizer"] == "LBFGS" and foreach:
        pytest.skip("LBFGS has no foreach path")
    assert nn.get_default_dtype() == np.float32
    ps = dev([p.copy() for p in (CPLX if case["complex"] else REAL)])
    kw = _kwargs(case["kwargs"])
    if case["optimizer"] != "LBFGS":
        kw["foreach"] = foreach
    opt = getattr(optim, case["optimizer"])(ps, **kw)

    def closure():
        hs = host(ps)
        return (sum(extra_loss(a, p) for a, p in zip(A, hs)),
                dev([extra_grad(a, p) for a, p in zip(A, hs)]))

    for _ in range(META["steps"]):
        opt.step(closure)
    for i, p in enumerate(ps):
        assert host(p).dtype == REF[f"{cid}/p{i}"].dtype
        assert_allclose(host(p), REF[f"{cid}/p{i}"], rtol=1e-10, atol=1e-12,
                        err_msg=f"{cid}: parameter {i}")
    sd = opt.state_dict()["state"]
    for idx, dtypes in case["state_dtypes"].items():
        assert {k: str(host(v).dtype) for k, v in sd[int(idx)].items()} == dtypes
        for k in dtypes:
            assert_allclose(host(sd[int(idx)][k]), REF[f"{cid}/state/{idx}/{k}"], rtol=1e-9,
                            atol=1e-12, err_msg=f"{cid}: state {idx} {k}")


def test_state_scalars_follow_the_default_dtype():
    # PyTorch's _get_scalar_dtype: float64 only when the default dtype is float64.
    before = nn.get_default_dtype()
    for default, want in ((np.float32, np.float32), (np.float64, np.float64)):
        nn.set_default_dtype(default)
        try:
            for p in (np.zeros(2, np.float32), np.zeros(2), np.zeros(2, np.complex128)):
                opt = optim.ASGD([p])
                opt.step([np.ones_like(p)])
                assert {host(v).dtype for k, v in opt.state[p].items() if k != "ax"} == {
                    np.dtype(want)}
        finally:
            nn.set_default_dtype(before)


def test_complex_parameters_pytorch_rejects():
    w = np.zeros(2, np.complex64)
    with pytest.raises(ValueError, match=r"Complex params at indices \[\[0, 0\]\]: SparseAdam"):
        optim.SparseAdam([w])
    opt = optim.Adafactor([w])
    with pytest.raises(RuntimeError, match="Adafactor does not support complex parameters"):
        opt.step([np.ones(2, np.complex64)])


def test_functional_transforms_view_complex_leaves_as_real():
    # Adagrad's accumulator starts at (v + vi) and Rprop's step sizes at (lr + lr i), as
    # PyTorch's; updates act on the real and imaginary parts separately.
    tx = optim.torch_adagrad(0.1, initial_accumulator_value=0.5)
    p = {"w": np.zeros(1, np.complex128)}
    s = tx.init(p)
    assert s["w"]["sum"][0] == 0.5 + 0.5j
    u, s = tx.update({"w": np.array([3 + 4j])}, s, p)
    assert s["w"]["sum"][0] == 9.5 + 16.5j
    eps = 1e-10
    assert_allclose(u["w"], -0.1 * np.array([3 / (np.sqrt(9.5) + eps)
                                            + 4j / (np.sqrt(16.5) + eps)]))
    assert optim.torch_rprop(0.01).init(np.zeros(1, np.complex64))["step_size"][0] == 0.01 + 0.01j


def test_lbfgs_float32_step_is_pytorchs_fused_update_with_float32_scalars():
    # PyTorch 2.13: LBFGS([p], max_iter=1, lr=0.9) on float32 p with this gradient. Its step
    # length is a float32 0-d tensor (1 / sum|g|) * lr and p.add_(d, alpha=t) rounds once
    # (a fused multiply-add); two roundings give other last bits.
    p = dev(np.array([0.0940122976899147, 0.22019512951374054, -0.7], np.float32))
    g = dev(np.array([1.3204309940338135, -2.002392530441284, 0.3], np.float32))
    opt = optim.LBFGS([p], max_iter=1, lr=0.9)
    opt.step(lambda: (1.0, [g]))
    assert host(p).tolist() == [-0.23401577770709991, 0.7176395058631897, -0.7745274901390076]
    assert host(opt.state[p]["t"]).dtype == np.float32
