"""optax's named_chain, moment helpers, normalize_by_update_norm, the optimistic gradient and
the ``losses``/``schedules`` namespaces. Expected values printed by optax 0.2.8 (float64) on the
same inputs."""

from __future__ import annotations

import numpy as np
import pytest

from funcgrad_nn import optim
from tests.helpers import assert_allclose, dev, host

GRADS = [np.array([1.0, -2.0]), np.array([0.5, 3.0]), np.array([-1.0, 1.0])]
OPTAX = {
    "ogd": [[-0.05, 0.1], [0.07500000000000001, -1.1500000000000001],
            [0.35000000000000003, 0.35000000000000003]],
    "norm": [[-0.08944267910000947, 0.17888535820001894],
             [-0.032879786650264205, -0.19727871990158521],
             [0.14142125623738022, -0.14142125623738022]],
    "named": [[-0.09999999900000002, 0.0999999995], [-0.0932179627018389, -0.024770181516268763],
              [-0.01107830700428939, -0.03553343929591859]],
}
CASES = {
    "ogd": lambda: optim.optimistic_gradient_descent(0.1, alpha=0.5, beta=2.0),
    "norm": lambda: optim.chain(optim.normalize_by_update_norm(2.0), optim.sgd(0.1)),
    "named": lambda: optim.named_chain(("a", optim.scale_by_adam()),
                                       ("b", optim.scale_by_learning_rate(0.1))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_updates_match_optax(name):
    tx = CASES[name]()
    p = dev(np.zeros(2))
    s = tx.init(p)
    for g, want in zip(GRADS, OPTAX[name]):
        u, s = tx.update(dev(g), s, p)
        assert_allclose(host(u), np.array(want), rtol=1e-12, atol=1e-15)
    if name == "named":
        assert list(s) == ["a", "b"]


def test_named_chain_rejects_repeated_names():
    with pytest.raises(ValueError, match="unique names"):
        optim.named_chain(("a", optim.sgd(0.1)), ("a", optim.sgd(0.1)))


def test_moment_helpers_match_optax():
    assert_allclose(host(optim.bias_correction(dev(np.array([0.1, 0.2])), 0.9, 3)),
                    np.array([0.36900369003690037, 0.7380073800738007]), rtol=1e-12)
    assert_allclose(host(optim.update_moment_per_elem_norm(
        dev(np.array([3 + 4j])), dev(np.array([1.0])), 0.5, 3)), np.array([63.0]))
    assert_allclose(host(optim.update_infinity_moment(
        dev(np.array([-1.0, 0.1])), dev(np.array([2.0, 0.0])), 0.9, 1e-3)),
        np.array([1.8, 0.101]))
    out = optim.update_moment({"a": dev(np.array([2.0])), "b": None},
                              {"a": dev(np.array([1.0])), "b": None}, 0.9, 2)
    assert out["b"] is None
    assert_allclose(host(out["a"]), np.array([1.3]))


def test_namespaces_are_optax_s():
    assert optim.losses.softmax_cross_entropy is optim.softmax_cross_entropy
    assert optim.schedules.cosine_decay_schedule is optim.cosine_decay_schedule
    assert optim.schedules.inject_hyperparams is optim.inject_hyperparams


def test_freeze_and_selective_transform_as_optax():
    p = dev({"w": np.ones(1), "b": np.ones(1)})
    tx = optim.chain(optim.freeze({"w": False, "b": True}), optim.sgd(0.1))
    u, _ = tx.update(p, tx.init(p), p)
    assert_allclose(host(u["w"]), np.array([-0.1]))
    assert_allclose(host(u["b"]), np.array([0.0]))
    tx = optim.freeze(True)
    u, _ = tx.update(p, tx.init(p), p)
    assert_allclose(host(u["w"]), np.array([0.0]))
    tx = optim.selective_transform(optim.adam(0.1), freeze_mask={"w": False, "b": True})
    s = tx.init(p)
    u, s = tx.update(p, s, p)
    assert_allclose(host(u["w"]), np.array([-0.1]), rtol=1e-7)
    assert_allclose(host(u["b"]), np.array([0.0]))
