"""optim.contrib's Muon against optax.contrib 0.2.8 (fixtures/optim/optax_muon.json, written by
make_optax_muon_fixtures.py with optax; CI has no optax): float64 trajectories of the same
expressions, eager and under jit."""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np
import pytest

import funcgrad
from funcgrad_nn import optim
from funcgrad_nn.optim import contrib
from tests.helpers import assert_allclose, dev, host

FIX = pathlib.Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIX))
from make_optax_muon_fixtures import grads  # noqa: E402

sys.path.remove(str(FIX))

META = json.loads((FIX / "optim" / "optax_muon.json").read_text())


def _run(name: str, jitted: bool) -> dict:
    case = META["cases"][name]
    tx = eval(case["expr"], {"o": contrib})
    p = {k: np.asarray(v, dtype=np.float64) for k, v in META["params"].items()}
    if name.startswith("scale_by"):
        p = {k: v for k, v in p.items() if v.ndim >= 2}
    p = dev(p)
    s = tx.init(p)
    update = funcgrad.jit(tx.update) if jitted else tx.update
    for i in range(META["steps"]):
        u, s = update(grads(p, i, funcgrad.numpy), s, p)
        p = optim.apply_updates(p, u)
    return p


@pytest.mark.parametrize("name", sorted(META["cases"]))
def test_matches_optax(name):
    p = _run(name, jitted=False)
    for k, v in META["cases"][name]["final"].items():
        assert_allclose(host(p[k]), np.asarray(v), rtol=1e-10, atol=1e-12, err_msg=k)


@pytest.mark.parametrize("name", ["muon", "muon_dims_fn", "muon_aol"])
def test_matches_optax_under_jit(name):
    p = _run(name, jitted=True)
    for k, v in META["cases"][name]["final"].items():
        assert_allclose(host(p[k]), np.asarray(v), rtol=1e-10, atol=1e-12, err_msg=k)


def test_state_and_errors_as_optax():
    p = dev({"w": np.ones((2, 3)), "b": np.ones(3)})
    s = contrib.muon(0.1).init(p)
    assert sorted(s.inner_states) == ["adam", "muon"]
    ms = s.inner_states["muon"].inner_state[0]
    assert isinstance(ms, contrib.MuonState) and host(ms.ns_coeffs).shape == (3,)
    assert host(ms.count).dtype == np.int32
    dion = contrib.muon(0.1, ns_coeffs="dion", ns_steps=7).init(p)
    assert host(dion.inner_states["muon"].inner_state[0].ns_coeffs).shape == (5, 3)
    # optax's check, as it is: more rows than ns_steps raises (fewer run them all)
    with pytest.raises(ValueError, match="Not enough coeffs to perform 3 steps"):
        contrib.muon(0.1, ns_coeffs="dion", ns_steps=3).init(p)
    with pytest.raises(ValueError, match="Unknown ns_coeff preset"):
        contrib.muon(0.1, ns_coeffs="nope")
    with pytest.raises(ValueError, match="Unknown preconditioning"):
        contrib.scale_by_muon(preconditioning="svd")
    with pytest.raises(ValueError, match="Not enough coeffs"):
        contrib.scale_by_muon(ns_coeffs=[[1.0, 0.0, 0.0]] * 4, ns_steps=2).init(p["w"])
    with pytest.raises(ValueError, match=r"shape \(3,\) or \(n, 3\)"):
        contrib.scale_by_muon(ns_coeffs=(1.0, 2.0)).init(p["w"])
    with pytest.raises(ValueError, match=r"shape \(m, n\) or weight dimension numbers"):
        contrib.scale_by_muon().update(p["b"], contrib.scale_by_muon().init(p["b"]))
    tx = contrib.scale_by_muon(weight_dimension_numbers=contrib.MuonDimensionNumbers())
    with pytest.raises(ValueError, match="rank >= 2"):
        tx.update(p["b"], tx.init(p["b"]))
    with pytest.raises(ValueError, match="disjoint"):
        contrib.orthogonalize_via_newton_schulz(
            dev(np.ones((2, 2, 2))), np.array(contrib.MUON_NS_COEFFS),
            dimension_numbers=contrib.MuonDimensionNumbers(0, (0, 1)))
