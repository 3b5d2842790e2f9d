"""optax.tree / optax.tree_utils arithmetic (values as optax 0.2.8 gives them)."""

from __future__ import annotations

import numpy as np
import pytest

from funcgrad_nn.optim import tree, tree_utils
from tests.helpers import assert_allclose, dev, host

T = {"a": np.array([3.0, -4.0]), "b": np.array([[1.0, 2.0]]), "c": np.zeros(0)}


def test_reductions_and_norms():
    t = dev(T)
    assert float(host(tree.sum(t))) == 2.0
    assert float(host(tree.max(t))) == 3.0 and float(host(tree.min(t))) == -4.0
    assert tree.size(t) == 4
    assert_allclose(float(host(tree.norm(t))), np.sqrt(30.0), rtol=1e-15)
    assert float(host(tree.norm(t, squared=True))) == 30.0
    assert float(host(tree.norm(t, ord=1))) == 10.0
    assert float(host(tree.norm(t, ord=np.inf))) == 4.0
    assert float(host(tree_utils.tree_linf_norm(t))) == 4.0
    assert float(host(tree.vdot(t, t))) == 30.0
    with pytest.raises(ValueError, match="Unsupported ord"):
        tree.norm(t, ord=3)


def test_leafwise_arithmetic():
    x, y = dev({"w": np.array([1.0, 2.0])}), dev({"w": np.array([4.0, 8.0])})
    assert_allclose(host(tree.add(x, y, x)["w"]), np.array([6.0, 12.0]))
    assert_allclose(host(tree.sub(y, x)["w"]), np.array([3.0, 6.0]))
    assert_allclose(host(tree.div(y, x)["w"]), np.array([4.0, 4.0]))
    assert_allclose(host(tree.add_scale(x, 0.5, y)["w"]), np.array([3.0, 6.0]))
    assert_allclose(host(tree.clip(y, None, 5.0)["w"]), np.array([4.0, 5.0]))
    assert tree.ones_like(x, dtype=np.int32)["w"].dtype == np.int32
    assert tree_utils.tree_add is tree.add


def test_complex_vdot_conjugates_the_first():
    x = dev([np.array([1.0 + 1.0j])])
    assert complex(host(tree.vdot(x, x))) == 2.0
    assert float(host(tree.norm(x, squared=True))) == 2.0
