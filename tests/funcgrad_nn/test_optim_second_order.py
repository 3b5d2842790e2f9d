"""optim.second_order (optax's deprecated hvp / hessian_diag / fisher_diag) against optax 0.2.8:
the literals are optax's float64 outputs on the same logistic loss."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad.numpy as fnp
from funcgrad_nn.optim import second_order
from tests.helpers import assert_allclose, dev, host

X = np.arange(12.0).reshape(4, 3) / 5
Y = np.array([0.5, -1.0, 2.0, 0.0])
P = {"w": np.array([0.3, -0.2, 0.1]), "b": np.array(0.4)}


def loss(p, x, y):
    return fnp.sum(fnp.log1p(fnp.exp(-(x @ p["w"] + p["b"]) * y)))


def test_matches_optax_and_warns_as_it():
    p, x, y = dev(P), dev(X), dev(Y)
    with pytest.warns(DeprecationWarning, match="removed in optax 0.2.9"):
        d = second_order.hessian_diag(loss, p, x, y)
    assert_allclose(host(d), np.array([0.9766010838936651, 1.0646594734673178,
                                       1.4866700214414248, 1.986808656127025]), rtol=1e-13)
    with pytest.warns(DeprecationWarning):
        f = second_order.fisher_diag(loss, p, x, y)
    assert_allclose(host(f), np.array([0.0010913562973847485, 0.021266936290022416,
                                       0.0232376527555973, 0.02529567772496301]), rtol=1e-13)
    with pytest.warns(DeprecationWarning):
        h = second_order.hvp(loss, dev(np.array([1.0, 2.0, -1.0, 0.5])), p, x, y)
    assert_allclose(float(host(h["b"])), 2.4126504762125167, rtol=1e-13)
    assert_allclose(host(h["w"]), np.array([2.5543554717468777, 3.036885566989381,
                                            3.5194156622318844]), rtol=1e-13)
