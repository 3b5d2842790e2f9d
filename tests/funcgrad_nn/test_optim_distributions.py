"""optim.multi_normal against optax 0.2.8's (log_prob literals from optax, float64)."""

from __future__ import annotations

import numpy as np

import funcgrad
from funcgrad import random
from funcgrad_nn import optim
from tests.helpers import assert_allclose, dev, host


def test_log_prob_and_sample_as_optax():
    d = optim.multi_normal(dev(np.array([[0.5, -1.0, 2.0]])), dev(np.array([0.1, -0.3, 0.2])))
    x = dev(np.array([[[0.3, 0.2, 1.0]], [[1.0, -1.0, 0.0]]]))
    assert_allclose(host(d.log_prob(x)), np.array([-4.420275773974565, -4.199797035820045]),
                    rtol=1e-14)
    s = host(d.sample((4000,), random.key(0)))
    assert s.shape == (4000, 1, 3)
    assert np.all(np.abs(s.mean(axis=0) - [[0.5, -1.0, 2.0]]) < 0.1)
    assert_allclose(s.std(axis=0), np.exp([[0.1, -0.3, 0.2]]), rtol=0.1)
    assert_allclose(host(d.log_scale), np.array([0.1, -0.3, 0.2]), rtol=0)
    # differentiable in its parameters (optax's Monte-Carlo estimators rely on it)
    g = funcgrad.grad(lambda m: optim.multi_normal(m, np.zeros(2)).log_prob(np.ones(2)))(
        dev(np.zeros(2)))
    assert_allclose(host(g), np.ones(2), rtol=1e-15)
