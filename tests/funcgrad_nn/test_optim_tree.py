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


def _injected_state():
    from funcgrad_nn import optim
    params = dev({"w": np.ones(2), "b": np.zeros(1)})
    opt = optim.chain(optim.clip_by_global_norm(1.0),
                      optim.inject_hyperparams(optim.adamw)(learning_rate=0.1, weight_decay=1e-2))
    return opt, params, opt.init(params)


def test_state_utils_find_fields_as_optax():
    from funcgrad import tree_util
    opt, params, state = _injected_state()
    # paths and values as optax 0.2.8's tree_utils give them for the same chain
    assert [tree_util.keystr(p) for p, _ in tree_utils.tree_get_all_with_path(state, "count")] == [
        "[1]InjectStatefulHyperparamsState.count",
        "[1]InjectStatefulHyperparamsState.inner_state[0]ScaleByAdamState.count"]
    assert [tree_util.keystr(p) for p, _ in
            tree_utils.tree_get_all_with_path(state, "learning_rate")] == [
        "[1]InjectStatefulHyperparamsState.hyperparams['learning_rate']"]
    assert float(host(tree_utils.tree_get(state, "learning_rate"))) == 0.1
    with pytest.raises(KeyError, match="multiple values for 'count'"):
        tree_utils.tree_get(state, "count")
    assert tree_utils.tree_get(state, "nothing", default="d") == "d"
    outer = tree_utils.tree_get(state, "count",
                                filtering=lambda p, v: p[-1].tuple_name.startswith("Inject"))
    assert int(host(outer)) == 0
    assert type(tree_utils.tree_get(state, "ScaleByAdamState")).__name__ == "ScaleByAdamState"
    assert tree.get is tree_utils.tree_get


def test_state_utils_set_and_map_params_as_optax():
    from funcgrad import tree_util
    opt, params, state = _injected_state()
    state = tree_utils.tree_set(state, learning_rate=np.asarray(0.5))
    assert float(host(tree_utils.tree_get(state, "learning_rate"))) == 0.5
    updates, _ = opt.update(dev({"w": np.ones(2), "b": np.ones(1)}), state, params)
    assert_allclose(host(updates["w"]), np.array([-0.50499999, -0.50499999]), rtol=1e-7)  # optax's
    with pytest.raises(KeyError, match="no values matching 'nonexistent'"):
        tree_utils.tree_set(state, nonexistent=1)
    specs = tree_utils.tree_map_params(opt, lambda p: p.shape, state,
                                       transform_non_params=lambda _: None)
    shapes = tree_util.tree_leaves(specs, is_leaf=lambda x: isinstance(x, tuple) and all(
        isinstance(i, int) for i in x))
    assert [s if type(s) is tuple else type(s).__name__ for s in shapes] == [
        "EmptyState", (1,), (2,), (1,), (2,), "EmptyState", "EmptyState"]


def test_dtype_cast_like_batch_shape_allclose_as_optax():
    # expected values: optax 0.2.8's tree_utils on the same trees (jax_enable_x64)
    mixed = {"a": np.ones(1, np.float16), "b": [np.ones(1, np.float32)]}
    assert tree_utils.tree_dtype(mixed, "lowest") == np.float16
    assert tree_utils.tree_dtype(mixed, "highest") == np.float32
    assert tree_utils.tree_dtype(mixed, "promote") == np.float32
    with pytest.raises(ValueError, match=r"Expected dtype=float16 for \['b'\]\[0\] but got float32"):
        tree_utils.tree_dtype(mixed)
    ints = {"a": np.ones(1, np.int32), "b": np.ones(1, np.uint32)}
    assert tree_utils.tree_dtype(ints, "promote") == np.int64
    with pytest.raises(ValueError, match="Neither int32 nor uint32 can be promoted"):
        tree_utils.tree_dtype(ints, "highest")
    with pytest.raises(ValueError, match="Invalid value for mixed_dtype_handler"):
        tree_utils.tree_dtype(ints, "max")
    assert tree_utils.tree_dtype({}) == np.float64
    t = dev({"a": np.array([1.0, 2.0]), "b": np.array(3.0)})
    c = tree.cast_like(t, {"a": np.ones(1, np.float32), "b": 2.0})
    assert host(c["a"]).dtype == np.float32 and host(c["b"]).dtype == np.float64
    assert host(tree.batch_shape(t, (4, 1))["a"]).shape == (4, 1, 2)
    assert bool(host(tree.allclose(t, tree.scale(1 + 1e-9, t))))
    assert not bool(host(tree_utils.tree_allclose(t, tree.scale(2.0, t))))
    nan = dev([np.array([np.nan, 1.0])])
    assert bool(host(tree.allclose(nan, nan, equal_nan=True)))
    assert not bool(host(tree.allclose(nan, nan)))


def test_random_trees_follow_the_target_structure():
    from funcgrad import random

    target = dev({"w": np.zeros((2, 3), np.float32), "b": [np.zeros(4)]})
    keys = tree_utils.tree_split_key_like(random.key(0), target)
    assert sorted(keys) == ["b", "w"] and len(keys["b"]) == 1
    draws = tree_utils.tree_random_like(random.key(0), target)
    assert host(draws["w"]).shape == (2, 3) and host(draws["w"]).dtype == np.float32
    assert host(draws["b"][0]).dtype == np.float64
    again = tree.random_like(random.key(0), target)
    assert_allclose(host(again["w"]), host(draws["w"]), rtol=0, atol=0)
    u = tree.random_like(random.key(1), target, sampler=random.uniform, dtype=np.float64)
    assert host(u["w"]).dtype == np.float64 and (host(u["w"]) >= 0).all()
    raw = tree.unwrap_random_key_data({"k": random.key(0), "x": 1.0})
    assert host(raw["k"]).dtype == np.uint32 and raw["x"] == 1.0
