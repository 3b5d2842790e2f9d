"""optax.contrib's DP aggregation and DP-SGD: without noise the updates equal optax 0.2.8's
(printed by optax on the same inputs); with noise, the noise has optax's law."""

from __future__ import annotations

import numpy as np
import pytest

from funcgrad_nn.optim import contrib
from tests.helpers import assert_allclose, dev, host


def test_dpsgd_without_noise_matches_optax():
    tx = contrib.dpsgd(0.1, 1.0, 0.0, seed=0, momentum=0.9)
    s = tx.init([dev(np.zeros(2))])
    want = [[-0.04500000000000001, -0.06000000000000001],
            [-0.02585533905932738, -0.01864466094067264]]
    for g, w in zip(([[3.0, 4.0], [0.3, 0.4]], [[1.0, -1.0], [-2.0, 0.0]]), want):
        u, s = tx.update([dev(np.array(g))], s)
        assert_allclose(host(u[0]), np.array(w), rtol=1e-12)


def test_noise_has_optax_s_law():
    tx = contrib.differentially_private_aggregate(l2_norm_clip=2.0, noise_multiplier=1.5, key=3)
    grads = {"a": dev(np.zeros((4, 20000))), "b": dev(np.zeros((4, 3)))}
    s = tx.init(None)
    u1, s = tx.update(grads, s)
    u2, s = tx.update(grads, s)
    noise = host(u1["a"])
    # std = l2_norm_clip * noise_multiplier / batch size
    assert abs(noise.std() - 0.75) < 0.03 and abs(noise.mean()) < 0.03
    assert u1["b"].shape == (3,)
    assert not np.array_equal(host(u1["a"]), host(u2["a"]))  # the key advances


def test_key_arguments():
    with pytest.raises(ValueError, match="Only one of seed or key"):
        with pytest.warns(DeprecationWarning):
            contrib.differentially_private_aggregate(1.0, 1.0, key=1, seed=2)
    with pytest.warns(UserWarning, match="Specifying a key will be required"):
        contrib.differentially_private_aggregate(1.0, 1.0)
