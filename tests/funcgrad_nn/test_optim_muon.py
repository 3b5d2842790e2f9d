"""optim.Muon against torch.optim.Muon (fixtures/optim/muon.json, from make_optim_fixtures.py's
write_muon; torch is not needed here). PyTorch orthogonalizes in bfloat16; ours rounds to
bfloat16 at the same points, so trajectories agree to float32 rounding (a rare bfloat16 tie
broken otherwise, e.g. by another BLAS's summation order, moves an entry by ~lr * 2**-8)."""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np
import pytest

from funcgrad_nn import optim
from tests.helpers import assert_allclose, dev, host

FIX = pathlib.Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIX))
from make_optim_fixtures import muon_problem  # noqa: E402

sys.path.remove(str(FIX))

META = json.loads((FIX / "optim" / "muon.json").read_text())


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("case", META["cases"], ids=lambda c: f"{c['id']}-{c['dtype']}")
def test_matches_pytorch(case, foreach):
    p0, grads = muon_problem(case["dtype"])
    ps = dev(p0)
    opt = optim.Muon(ps, **case["kwargs"])
    if foreach:  # the compiled group step (Muon has no foreach flag: force it)
        for g in opt.param_groups:
            g["foreach"] = True
    for gs in grads:
        opt.step(dev(gs))
    for p, want, buf in zip(ps, case["params"], case["momentum_buffer"]):
        assert host(p).dtype == np.dtype(case["dtype"])
        assert_allclose(host(p), np.array(want, case["dtype"]), rtol=0, atol=2e-3)
        assert_allclose(host(opt.state[p]["momentum_buffer"]), np.array(buf, case["dtype"]),
                        rtol=1e-6, atol=1e-6)


def test_defaults_and_errors_as_pytorch():
    opt = optim.Muon([np.zeros((2, 2))])
    group = {k: v for k, v in opt.param_groups[0].items() if k != "params"}
    assert json.loads(json.dumps(group)) == META["param_group"]
    for kw, msg in [({"lr": -1.0}, "Learning rate should be >= 0 but is: -1.0"),
                    ({"momentum": -0.5}, "momentum should be >= 0 but is: -0.5"),
                    ({"weight_decay": -0.1}, "weight decay should be >= 0 but is: -0.1"),
                    ({"adjust_lr_fn": "x"}, "Adjust learning rate function x is not supported")]:
        with pytest.raises(ValueError, match=msg):
            optim.Muon([np.zeros((2, 2))], **kw)
    with pytest.raises(ValueError, match="Muon only supports 2D parameters"):
        optim.Muon([np.zeros((2, 2)), np.zeros(3)])
    w = np.zeros((2, 2), np.complex64)
    with pytest.raises(RuntimeError, match="Muon does not support complex parameters"):
        optim.Muon([w]).step([np.ones((2, 2), np.complex64)])
    with pytest.raises(ValueError, match="Number of steps must be less than 100"):
        optim.Muon([np.zeros((2, 2))], ns_steps=100).step([np.ones((2, 2))])


def test_bfloat16_rounding_is_round_half_to_even():
    from funcgrad_nn.optim._torch_transform import _bfloat16

    # torch.tensor(x).bfloat16().float() for these, torch 2.13
    x = np.array([1.00390625, 1.01171875, 3.14159, -2.7e-3, 255.5, 1e-30], np.float32)
    assert _bfloat16(x).tolist() == [1.0, 1.015625, 3.140625, -0.0027008056640625, 256.0,
                                     9.98402083170343e-31]
