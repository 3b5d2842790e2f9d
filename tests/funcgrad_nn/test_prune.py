"""nn.utils.prune against torch 2.13: the masks of the magnitude methods, alone and combined
(fixtures/make_prune_fixtures.py), the state-dict names, gradients through a pruned weight,
remove, global pruning, the random methods by their counts, and torch's errors."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import funcgrad_nn as nn
from funcgrad_nn.utils import prune
from tests.helpers import DEVICE, dev, host

FIXTURE = json.loads((pathlib.Path(__file__).parent / "fixtures" / "prune" / "cases.json")
                     .read_text())


def _layer(case):
    m = (nn.Linear(5, 6) if case["layer"] == "linear" else nn.Conv2d(3, 4, 2)).double()
    m.load_state_dict({k: np.array(v) for k, v in case["state"].items()})
    return m


def _kwargs(step):
    return {k: (float("inf") if v == "inf" else v) for k, v in step["kwargs"].items()}


@pytest.mark.parametrize("case", FIXTURE["cases"],
                         ids=lambda c: c["layer"] + "-" + "-".join(s["fn"][:2] for s in c["steps"]))
def test_masks_match_torch(case):
    m = _layer(case)
    w = np.array(case["state"]["weight"])
    for step in case["steps"]:
        getattr(prune, step["fn"])(m, "weight", **_kwargs(step))
        assert list(m.state_dict()) == step["keys"]
        np.testing.assert_array_equal(host(m.weight_mask), step["mask"])
        np.testing.assert_array_equal(host(m.weight), w * np.array(step["mask"]))
    assert prune.is_pruned(m)
    prune.remove(m, "weight")
    assert type(m) is type(_layer(case)) and not prune.is_pruned(m)
    assert list(m.state_dict()) == ["bias", "weight"]  # torch re-registers it last
    np.testing.assert_array_equal(host(m.weight), w * np.array(case["steps"][-1]["mask"]))


def test_global_unstructured_matches_torch():
    state = {c["layer"]: c for c in FIXTURE["cases"]}
    a, b = _layer(state["linear"]), _layer(state["conv"])
    prune.l1_unstructured(a, "weight", amount=0.2)
    prune.global_unstructured([(a, "weight"), (b, "weight"), (b, "bias")],
                              prune.L1Unstructured, amount=0.4)
    want = FIXTURE["global"]["masks"]
    np.testing.assert_array_equal(host(a.weight_mask), want["a.weight"])
    np.testing.assert_array_equal(host(b.weight_mask), want["b.weight"])
    np.testing.assert_array_equal(host(b.bias_mask), want["b.bias"])
    with pytest.raises(TypeError, match='Only "unstructured"'):
        prune.global_unstructured([(a, "weight")], prune.LnStructured, amount=1, n=2)


def test_gradients_reach_only_the_kept_entries_also_under_jit():
    lin = nn.Linear(4, 3).double().to(DEVICE)
    prune.l1_unstructured(lin, "weight", amount=6)
    x = dev(np.random.default_rng(0).standard_normal((5, 4)))

    def loss(m):
        return (m(x) ** 2).sum()

    g = nn.grad(loss)(lin)
    mask = host(lin.weight_mask)
    assert (host(g.weight_orig)[mask == 0] == 0).all()
    assert (host(g.weight_orig)[mask == 1] != 0).all()
    np.testing.assert_allclose(host(nn.jit(nn.grad(loss))(lin).weight_orig), host(g.weight_orig),
                               rtol=1e-12)


def test_random_methods_prune_the_right_counts_among_the_kept_entries():
    _ = nn.manual_seed(0)
    lin = nn.Linear(5, 6)
    keep = np.random.default_rng(1).uniform(size=(6, 5)) > 0.5
    prune.custom_from_mask(lin, "weight", keep.astype(np.float32))
    prune.random_unstructured(lin, "weight", amount=3)
    mask = host(lin.weight_mask)
    assert (mask[~keep] == 0).all() and int((mask == 0).sum()) == int((~keep).sum()) + 3
    prune.random_structured(lin, "weight", amount=2, dim=0)
    assert int((host(lin.weight_mask).sum(axis=1) == 0).sum()) >= 2
    assert list(lin.state_dict()) == ["bias", "weight_orig", "weight_mask"]


@pytest.mark.parametrize("amount,error", [(-1, ValueError), (1.5, ValueError),
                                          ("x", TypeError), (100, ValueError)])
def test_bad_amounts_raise_as_torch_and_leave_the_module_alone(amount, error):
    lin = nn.Linear(2, 2)
    with pytest.raises(error):
        prune.l1_unstructured(lin, "weight", amount)
    assert list(lin.state_dict()) == ["weight", "bias"] and not prune.is_pruned(lin)


def test_errors_as_torch():
    with pytest.raises(ValueError, match="Structured pruning can only be applied"):
        prune.ln_structured(nn.Linear(2, 2), "bias", 1, 2, 0)
    with pytest.raises(IndexError, match="Invalid index 3"):
        prune.ln_structured(nn.Linear(2, 2), "weight", 1, 2, 3)
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        prune.remove(nn.Linear(2, 2), "weight")
    lin = prune.l1_unstructured(nn.Linear(2, 2), "weight", 1.0)
    with pytest.raises(ValueError, match="should be smaller than the number"):
        prune.l1_unstructured(lin, "weight", 1)  # nothing left: the earlier pruning stays
    assert isinstance(lin._pruning["weight"], prune.L1Unstructured)
    assert (host(lin.weight_mask) == 0).all()
    prune.remove(lin, "weight")


def test_a_pruning_method_without_compute_mask_is_a_clear_error():
    # torch's BasePruningMethod.compute_mask is abstract: a subclass must define it
    from funcgrad_nn.utils.prune import BasePruningMethod

    class NoMask(BasePruningMethod):
        pass

    with pytest.raises(NotImplementedError, match="NoMask must define compute_mask"):
        NoMask().compute_mask(np.ones(2), np.ones(2))


@pytest.mark.filterwarnings("ignore:`torch.nn.utils.weight_norm` is deprecated")
def test_pruning_and_hook_norms_keep_the_class_name_parametrizing_renames_it_as_torch():
    # torch 2.13: pruning and the hook-based weight_norm/spectral_norm leave the class (repr
    # "Linear(...)", load_state_dict's "for Linear"); register_parametrization makes
    # "ParametrizedLinear", and removing the last parametrization gives "Linear" back
    lin = nn.Linear(2, 2).to(DEVICE)
    prune.l1_unstructured(lin, "bias", 0.5)
    assert repr(lin) == "Linear(in_features=2, out_features=2, bias=True)"
    with pytest.raises(RuntimeError, match="Error\\(s\\) in loading state_dict for Linear:"):
        lin.load_state_dict({})
    nn.utils.parametrizations.weight_norm(lin)
    assert type(lin).__name__ == "ParametrizedLinear"
    assert repr(lin).startswith("ParametrizedLinear(")
    nn.utils.parametrize.remove_parametrizations(lin, "weight")
    assert type(lin).__name__ == "Linear" and isinstance(lin, nn.Linear)
    prune.remove(lin, "bias")
    assert type(lin) is nn.Linear
    for norm in (nn.utils.weight_norm, nn.utils.spectral_norm):
        assert type(norm(nn.Linear(2, 2))).__name__ == "Linear"
