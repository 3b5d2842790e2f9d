"""Module core: registration, iteration order, state_dict, pytree behaviour."""

import numpy as np
import pytest

import funcgrad_nn as nn
from funcgrad import tree_util


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1d(4)
        self.scale = nn.Parameter(np.ones(4, np.float32), requires_grad=False)

    def forward(self, x):
        return self.bn(self.fc(x)) * self.scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.alpha = nn.Parameter(np.zeros((), np.float32))
        self.encoder = nn.ModuleDict({"layers": nn.ModuleList([Block(), Block()])})
        self.head = nn.Linear(4, 2)


def test_named_parameters_order_and_frozen():
    names = [n for n, _ in Net().named_parameters()]
    assert names == ["alpha", "encoder.layers.0.fc.weight", "encoder.layers.0.fc.bias",
                     "encoder.layers.0.bn.weight", "encoder.layers.0.bn.bias",
                     "encoder.layers.1.fc.weight", "encoder.layers.1.fc.bias",
                     "encoder.layers.1.bn.weight", "encoder.layers.1.bn.bias",
                     "head.weight", "head.bias"]


def test_state_dict_order_matches_pytorch():
    sd = Net().state_dict()
    assert list(sd)[:9] == [
        "alpha", "encoder.layers.0.scale", "encoder.layers.0.fc.weight",
        "encoder.layers.0.fc.bias", "encoder.layers.0.bn.weight", "encoder.layers.0.bn.bias",
        "encoder.layers.0.bn.running_mean", "encoder.layers.0.bn.running_var",
        "encoder.layers.0.bn.num_batches_tracked"]


def test_pytree_leaves_follow_state_dict_and_keypaths():
    net = Net()
    paths = [tree_util.keystr(p, simple=True, separator=".")
             for p, _ in tree_util.tree_leaves_with_path(net)]
    assert paths == list(net.state_dict())
    leaves = tree_util.tree_leaves(net)
    assert all(a is b for a, b in zip(leaves, net.state_dict(keep_vars=True).values()))


def test_unflatten_makes_new_instance_without_init():
    net = Net()
    copy = tree_util.tree_map(lambda x: x * 0, net)
    assert type(copy) is Net and copy is not net
    assert float(abs(net.head.weight).sum()) > 0 and float(abs(copy.head.weight).sum()) == 0
    assert copy.head.in_features == 4
    assert tree_util.tree_structure(copy) == tree_util.tree_structure(net)


def test_parameters_are_live_and_float32():
    m = nn.Linear(2, 2)
    p = next(m.parameters())
    p[...] = 7.0
    assert (m.weight == 7).all() and m.weight.dtype == np.float32


def test_load_state_dict_in_place_and_errors():
    a, b = Net(), Net()
    w = b.head.weight
    b.load_state_dict(a.state_dict())
    assert w is b.head.weight and np.array_equal(w, a.head.weight)
    bad = a.state_dict()
    bad["head.weight"] = np.zeros((5, 5), np.float32)
    with pytest.raises(RuntimeError, match="size mismatch for head.weight"):
        b.load_state_dict(bad)
    sd = a.state_dict()
    del sd["alpha"]
    sd["extra"] = np.zeros(1)
    with pytest.raises(RuntimeError, match="Missing key.*alpha"):
        b.load_state_dict(sd)
    res = b.load_state_dict(sd, strict=False)
    assert res.missing_keys == ["alpha"] and res.unexpected_keys == ["extra"]


def test_train_eval_requires_grad_modules():
    net = Net()
    assert all(m.training for m in net.modules())
    net.eval()
    assert not any(m.training for m in net.modules())
    net.head.requires_grad_(False)
    assert "head.weight" not in dict(net.named_parameters())
    assert "head.weight" in dict(net.named_parameters(include_frozen=True))
    assert [n for n, _ in net.named_children()] == ["encoder", "head"]
    assert len(list(net.buffers())) == 6


def test_setattr_routing_and_errors():
    m = nn.Module()
    with pytest.raises(AttributeError, match="super"):
        class Bad(nn.Module):
            def __init__(self):
                self.w = nn.Parameter(np.ones(1))
        Bad()
    m.register_buffer("b", np.zeros(2))
    m.b = np.ones(2)
    assert "b" in m._buffers and np.array_equal(m.b, np.ones(2))
    with pytest.raises(TypeError, match="buffer 'b'"):
        m.b = "text"
    with pytest.raises(KeyError, match="contain"):
        m.register_buffer("a.b", np.zeros(1))
    del m.b
    assert "b" not in m._buffers


def test_forward_hook_and_repr():
    lin = nn.Linear(2, 3)
    calls = []
    h = lin.register_forward_hook(lambda mod, args, out: calls.append(out.shape))
    lin(np.ones((1, 2), np.float32))
    h.remove()
    lin(np.ones((1, 2), np.float32))
    assert calls == [(1, 3)]
    assert "Linear(in_features=2, out_features=3, bias=True)" in repr(nn.Sequential(lin))


def test_to_dtype_and_apply():
    net = Net().double()
    assert net.head.weight.dtype == np.float64
    assert net.encoder["layers"][0].bn.num_batches_tracked.dtype == np.int64
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "Net"


def test_containers():
    seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))
    assert isinstance(seq[:2], nn.Sequential) and len(seq[:2]) == 2
    assert isinstance(seq[-1], nn.Linear)
    ml = nn.ModuleList([nn.ReLU()])
    ml.insert(0, nn.Tanh())
    assert [type(m).__name__ for m in ml] == ["Tanh", "ReLU"]
    pl = nn.ParameterList([np.ones(2)])
    pl.append(np.zeros(3))
    assert [p.shape for p in pl.parameters()] == [(2,), (3,)]
    with pytest.raises(IndexError):
        seq[5]


def test_manual_seed_and_default_dtype():
    nn.manual_seed(3)
    a = nn.Linear(4, 4).weight.copy()
    nn.manual_seed(3)
    assert np.array_equal(a, nn.Linear(4, 4).weight)
    nn.set_default_dtype(np.float64)
    try:
        assert nn.Conv2d(1, 1, 1).weight.dtype == np.float64
    finally:
        nn.set_default_dtype(np.float32)
    with pytest.raises(TypeError):
        nn.set_default_dtype(np.int32)
