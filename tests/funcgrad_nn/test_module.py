"""Module core: registration, iteration order, state_dict, pytree behaviour."""

import collections
import io

import numpy as np
import pytest

import funcgrad
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


def test_state_dict_takes_pytorchs_positional_and_keyword_arguments():
    # torch 2.13: state_dict(destination, prefix, keep_vars) positionally (FutureWarning),
    # the keywords destination=/prefix=/keep_vars= otherwise; both fill and return the dict
    net = Net()
    dest = collections.OrderedDict()
    with pytest.warns(FutureWarning, match="Positional args are being deprecated"):
        out = net.head.state_dict(dest, "head.", True)
    assert out is dest and list(dest) == ["head.weight", "head.bias"]
    assert dest["head.weight"] is net.head.weight  # keep_vars: the live arrays
    out = net.head.state_dict(prefix="h.", keep_vars=False)
    assert list(out) == ["h.weight", "h.bias"] and out["h.weight"] is not net.head.weight
    assert list(out._metadata) == ["h"]
    d = {}
    assert net.state_dict(destination=d, prefix="net.") is d
    assert list(d)[:2] == ["net.alpha", "net.encoder.layers.0.scale"]
    with pytest.raises(TypeError, match="prefix must be a str"):
        net.state_dict(prefix=1)


def test_private_state_dict_hooks_that_libraries_use_as_torch():
    # torch 2.13: _register_state_dict_hook's returned dict replaces the module's state dict
    # (a child's replacement is not seen by its parent); _register_load_state_dict_pre_hook
    # gets (state_dict, prefix, ...) without the module unless with_module=True
    lin = nn.Linear(1, 1)
    lin._register_state_dict_hook(lambda mod, sd, prefix, meta: {k + "_x": v for k, v in sd.items()})
    assert list(lin.state_dict()) == ["weight_x", "bias_x"]
    seq = nn.Sequential(nn.Linear(1, 1))
    seq[0]._register_state_dict_hook(lambda mod, sd, prefix, meta: {"dropped": 1})
    assert list(seq.state_dict()) == ["0.weight", "0.bias"]
    with pytest.raises(RuntimeError, match="must return None"):
        m = nn.Linear(1, 1)
        m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: {})
        m.state_dict()
    seen = []
    m = nn.Sequential(nn.Linear(1, 1))
    h = m[0]._register_load_state_dict_pre_hook(
        lambda sd, prefix, meta, strict, missing, unexpected, errors: seen.append((prefix, strict)))
    m[0]._register_load_state_dict_pre_hook(
        lambda mod, sd, prefix, *rest: seen.append(type(mod).__name__), with_module=True)
    m.load_state_dict(m.state_dict(), strict=False)
    assert seen == [("0.", True), "Linear"]  # torch passes strict=True to the hooks always
    h.remove()
    m.load_state_dict(m.state_dict())
    assert seen[2:] == ["Linear"]


def test_private_apply_replaces_arrays_as_torch():
    # torch 2.13: Module._apply(fn, recurse) replaces parameters and buffers by fn(array);
    # recurse=False touches only the module's own
    net = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    net[1].weight = net[0].bias  # tied
    opt_params = net.parameters()
    assert net._apply(lambda a: a.astype(np.float64) if a.dtype.kind == "f" else a) is net
    assert {str(v.dtype) for v in net.state_dict().values()} == {"float64", "int64"}
    assert net[1].weight is net[0].bias
    net._apply(lambda a: a * 0, recurse=False)  # a Sequential has no arrays of its own
    assert float(np.abs(net[0].weight).sum()) > 0
    net[0]._apply(lambda a: a * 0, recurse=False)
    assert float(np.abs(net[0].weight).sum()) == 0 and float(net[1].running_var.sum()) == 2
    assert len(list(opt_params)) == 4


def test_to_empty_then_load_state_dict_as_torch():
    # torch 2.13: to_empty(device=...) keeps shapes and dtypes (uninitialised values),
    # returns the module; a state dict then fills it
    from tests.helpers import DEVICE, host

    src = Net()
    net = Net()
    assert net.to_empty(device=DEVICE) is net
    assert [(v.shape, v.dtype) for v in net.state_dict().values()] == \
        [(v.shape, v.dtype) for v in src.state_dict().values()]
    assert funcgrad.backend.device_of(net.head.weight) == DEVICE.partition(":")[0].replace(
        "cuda", "gpu")
    net.load_state_dict(src.state_dict())
    np.testing.assert_array_equal(host(net.head.weight), src.head.weight)
    part = Net()
    w = part.head.weight
    part.to_empty(device=None, recurse=False)  # Net's own: only alpha
    assert part.head.weight is w


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


# -- PyTorch's state-dict protocol: _save_to_state_dict, _load_from_state_dict, _version ---


class _RenamedV2(nn.Module):
    """Version 2 renamed ``w`` to ``weight``: loading a version-1 dict converts it (the
    PyTorch idiom for layout migrations)."""

    _version = 2

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(np.zeros(3, np.float32))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs):
        self.calls.append((prefix, dict(local_metadata), strict))
        if local_metadata.get("version", 1) < 2 and prefix + "w" in state_dict:
            state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)


class _Holder(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = _RenamedV2()
        self.bias = nn.Parameter(np.zeros(1, np.float32))


def test_load_state_dict_calls_overrides_with_pytorchs_signature_and_metadata():
    m = _Holder()
    _RenamedV2.calls = []
    sd = m.state_dict()
    assert sd._metadata == {"": {"version": 1}, "inner": {"version": 2}}
    old = collections.OrderedDict(
        [("bias", np.ones(1, np.float32)), ("inner.w", np.full(3, 7.0, np.float32))])
    old._metadata = collections.OrderedDict([("", {"version": 1}), ("inner", {"version": 1})])
    assert m.load_state_dict(old) == ([], [])
    assert _RenamedV2.calls == [("inner.", {"version": 1}, True)]
    np.testing.assert_array_equal(m.inner.weight, np.full(3, 7.0, np.float32))
    np.testing.assert_array_equal(m.bias, np.ones(1, np.float32))
    # a current dict passes through unchanged; metadata survives save/load
    buf = io.BytesIO()
    nn.save(m.state_dict(), buf)
    buf.seek(0)
    back = nn.load(buf)
    assert back._metadata == sd._metadata
    _RenamedV2.calls = []
    m.load_state_dict(back)
    assert _RenamedV2.calls == [("inner.", {"version": 2}, True)]


def test_load_state_dict_errors_leave_the_module_unchanged_and_list_keys_as_pytorch():
    m = _Holder()
    _RenamedV2.calls = []
    bad = {"bias": np.ones(1, np.float32), "inner.weight": np.ones(4, np.float32),
           "inner.extra": np.ones(1), "other.x": np.ones(1)}
    with pytest.raises(RuntimeError, match=r'(?s)Unexpected key\(s\).*"other.x", "inner.extra".*'
                                           r"size mismatch for inner.weight"):
        m.load_state_dict(bad)
    np.testing.assert_array_equal(m.bias, np.zeros(1, np.float32))  # nothing copied
    res = m.load_state_dict({"bias": np.ones(1, np.float32), "junk": np.ones(1)},
                            strict=False)
    assert res.missing_keys == ["inner.weight"] and res.unexpected_keys == ["junk"]
    np.testing.assert_array_equal(m.bias, np.ones(1, np.float32))


def test_extra_state_is_set_only_when_the_whole_load_succeeds():
    # PyTorch calls set_extra_state as soon as it reaches the module, before a later size
    # mismatch raises; here a failed load changes nothing (its documented contract).
    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(1, 1)
            self.calls = 0

        def get_extra_state(self):
            return {"calls": self.calls}

        def set_extra_state(self, state):
            self.calls = state["calls"]

    m = Counter()
    bad = {"lin.weight": np.ones((2, 2), np.float32), "lin.bias": np.ones(1, np.float32),
           "_extra_state": {"calls": 5}}
    with pytest.raises(RuntimeError, match="size mismatch for lin.weight"):
        m.load_state_dict(bad)
    assert m.calls == 0
    m.load_state_dict({**bad, "lin.weight": np.ones((1, 1), np.float32)})
    assert m.calls == 5 and list(m.state_dict()) == ["_extra_state", "lin.weight", "lin.bias"]


def test_save_to_state_dict_override_and_batchnorm_version_migration():
    class Extra(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(np.ones(2, np.float32))

        def _save_to_state_dict(self, destination, prefix, keep_vars):
            super()._save_to_state_dict(destination, prefix, keep_vars)
            destination[prefix + "note"] = np.array(5)

    assert list(nn.Sequential(Extra()).state_dict()) == ["0.w", "0.note"]
    # PyTorch's BatchNorm version 2 added num_batches_tracked: older dicts load (as 0)
    bn = nn.BatchNorm1d(2)
    assert bn.state_dict()._metadata[""] == {"version": 2}
    old = {k: v for k, v in bn.state_dict().items() if k != "num_batches_tracked"}
    bn.num_batches_tracked = np.array(4)
    bn.load_state_dict(old)
    assert int(bn.num_batches_tracked) == 0
    versioned = collections.OrderedDict(old)
    versioned._metadata = {"": {"version": 2}}
    with pytest.raises(RuntimeError, match="Missing key.*num_batches_tracked"):
        bn.load_state_dict(versioned)


# -- device names as PyTorch users write them ------------------------------------------------


def test_module_device_names_as_pytorch():
    m = nn.Linear(2, 2)
    for name in ("cpu", "cpu:0", "CPU"):
        assert type(m.to(name).weight) is np.ndarray
    assert type(m.to("cpu", np.float64).weight) is np.ndarray
    assert m.weight.dtype == np.float64
    with pytest.raises(ValueError, match="unknown device 'tpu'.*'cuda'"):
        m.to("tpu")
    with pytest.raises(ValueError, match="device 'cpu:1'"):
        m.to("cpu:1")
    if not funcgrad.backend.cuda_available():
        for move in (lambda: m.cuda(), lambda: m.to("cuda"), lambda: m.to("cuda:0"),
                     lambda: m.cuda(0)):
            with pytest.raises(RuntimeError, match="needs CuPy"):  # not "unknown device"
                move()
    else:  # pragma: no cover - GPU machines
        assert funcgrad.backend.device_of(m.cuda().weight) == "gpu"
        assert funcgrad.backend.device_of(m.to("cpu").to("cuda:0").weight) == "gpu"


def test_consume_prefix_of_a_data_parallel_checkpoint():
    # torch 2.13: torch.nn.modules.utils.consume_prefix_in_state_dict_if_present strips
    # "module." from the keys and the _metadata keys ('module' becomes '', '' is kept first)
    from funcgrad_nn.modules.utils import consume_prefix_in_state_dict_if_present

    class Wrapper(nn.Module):
        def __init__(self):
            super().__init__()
            self.module = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))

    sd = Wrapper().state_dict()
    consume_prefix_in_state_dict_if_present(sd, "module.")
    assert list(sd) == ["0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean",
                        "1.running_var", "1.num_batches_tracked"]
    assert {k: dict(v) for k, v in sd._metadata.items()} == {
        "": {"version": 1}, "0": {"version": 1}, "1": {"version": 2}}
    model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    assert model.load_state_dict(sd) == ([], [])


def test_integer_parameter_cannot_require_grad_as_in_torch():
    # torch 2.13: RuntimeError "Only Tensors of floating point and complex dtype can require
    # gradients"; with requires_grad=False it is allowed
    with pytest.raises(RuntimeError, match="floating point and complex dtype"):
        nn.Parameter(np.ones(2, np.int64))
    assert not nn.Parameter(np.ones(2, np.int64), requires_grad=False).requires_grad
    assert nn.Parameter(np.ones(2, np.complex64)).requires_grad


def test_to_meta_is_a_template_for_functional_call_as_torch():
    # The torch.func model-ensembling tutorial: base = copy.deepcopy(models[0]).to("meta"),
    # then vmap of functional_call(base, (params, buffers), x) over stack_module_state.
    # torch 2.13: the meta weight has device 'meta', size (3, 2), float32; calling the meta
    # module raises RuntimeError "Tensor on device meta is not on the expected device cpu!";
    # .to("cpu") raises "Cannot copy out of meta tensor; no data!"
    import copy

    from funcgrad_nn.func import functional_call, stack_module_state

    models = [nn.Linear(2, 3) for _ in range(3)]
    base = copy.deepcopy(models[0]).to("meta")
    w = base.weight
    assert (w.device, w.shape, w.dtype) == ("meta", (3, 2), np.float32)
    assert w.nbytes == 24 and w.strides == (0, 0)  # no data behind it
    x = np.ones((3, 1, 2), np.float32)
    with pytest.raises(RuntimeError, match="Tensor on device meta is not on the expected"):
        base(x[0])
    with pytest.raises(RuntimeError, match="Cannot copy out of meta tensor; no data!"):
        copy.deepcopy(base).to("cpu")
    with pytest.raises(RuntimeError, match="device meta"):
        np.add(w, 1)
    params, buffers = stack_module_state(models)
    out = nn.func.vmap(lambda p, b, a: functional_call(base, (p, b), (a,)))(params, buffers, x)
    want = np.stack([np.asarray(m(x[i])) for i, m in enumerate(models)])
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)
    assert base.double().weight.dtype == np.float64 and base.weight.device == "meta"
    real = base.to_empty(device="cpu")
    assert real.weight.dtype == np.float64 and real(x[0].astype(np.float64)).shape == (1, 3)


class _TorchLikeTensor:
    """The interface load_state_dict reads off a PyTorch tensor (CI has no torch): a
    bfloat16 one only converts through .float(), and .numpy() refuses grad-requiring ones."""

    __module__ = "torch"

    def __init__(self, values, dtype, requires_grad=False):
        self.values, self.dtype, self.requires_grad = np.asarray(values), dtype, requires_grad
        self.shape = self.values.shape

    def detach(self):
        return _TorchLikeTensor(self.values, self.dtype)

    def cpu(self):
        return self

    def float(self):
        return _TorchLikeTensor(self.values.astype(np.float32), "torch.float32")

    def numpy(self):
        if self.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad.")
        if self.dtype == "torch.bfloat16":
            raise TypeError("Got unsupported ScalarType BFloat16")
        return self.values


def test_load_state_dict_takes_pytorch_tensors_bfloat16_and_parameters_included():
    # porting in one process: fm.load_state_dict(torch_model.state_dict()) of a bfloat16
    # model, or of dict(torch_model.named_parameters()) (tensors that require grad), as
    # torch's own load_state_dict takes them (copy_ widens bfloat16 into float32)
    from tests.helpers import host

    m = nn.Linear(2, 1)
    sd = {"weight": _TorchLikeTensor([[0.5, -1.25]], "torch.bfloat16"),
          "bias": _TorchLikeTensor([0.75], "torch.float32", requires_grad=True)}
    assert m.load_state_dict(sd) == ([], [])
    assert m.weight.dtype == np.float32 and host(m.weight).tolist() == [[0.5, -1.25]]
    assert host(m.bias).tolist() == [0.75]
    # and a parameter or buffer made of one (nn.Parameter(torch_model.weight) when porting)
    m.scale = nn.Parameter(_TorchLikeTensor([2.0], "torch.float32", requires_grad=True))
    m.register_buffer("mask", nn.Buffer(_TorchLikeTensor([1.5], "torch.bfloat16")).data)
    assert host(m.scale).tolist() == [2.0] and m.mask.dtype == np.float32


def test_load_state_dict_from_a_real_torch_model():
    torch = pytest.importorskip("torch")
    from tests.helpers import host

    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4)).bfloat16()
    fm = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    assert fm.load_state_dict(tm.state_dict()) == ([], [])
    np.testing.assert_array_equal(host(fm[0].weight), tm[0].weight.detach().float().numpy())
    assert fm.load_state_dict(dict(tm.named_parameters()), strict=False).unexpected_keys == []
