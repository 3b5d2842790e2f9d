"""Layer modules: shapes, PyTorch init bounds, numerics vs NumPy, train/eval behaviour."""

import copy
import math

import numpy as np
import pytest
from funcgrad_nn.modules.lazy import LazyModuleMixin

import funcgrad_nn as nn
from funcgrad_nn.module import BadInputError
from funcgrad_nn.parameter import is_lazy
from tests.helpers import DEVICE, assert_allclose, dev, host, is_device_array

rng = np.random.default_rng(0)


def test_linear_init_bounds_and_numerics():
    m = nn.Linear(16, 8)
    assert np.abs(m.weight).max() <= 1 / math.sqrt(16) and np.abs(m.bias).max() <= 0.25
    assert m.weight.dtype == np.float32
    m.to(DEVICE)
    x = rng.normal(size=(4, 16)).astype(np.float32)
    assert_allclose(m(dev(x)), x @ host(m.weight).T + host(m.bias), rtol=1e-5, atol=1e-5)
    assert nn.Linear(3, 2, bias=False).bias is None


def test_conv_init_bounds_and_numerics():
    c = nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2)
    fan_in = 2 * 9
    assert np.abs(c.weight).max() <= 1 / math.sqrt(fan_in) and c.weight.shape == (6, 2, 3, 3)
    x = rng.normal(size=(2, 4, 8, 8)).astype(np.float32)
    out = c.to(DEVICE)(dev(x))
    assert host(out).shape == (2, 6, 4, 4) and out.dtype == np.float32
    c1 = nn.Conv1d(3, 5, 3, padding="same")
    assert host(c1.to(DEVICE)(dev(rng.normal(size=(2, 3, 7)).astype(np.float32)))).shape == (
        2, 5, 7)


def test_batchnorm_train_eval_and_running_stats():
    bn = nn.BatchNorm1d(3, momentum=None).to(DEVICE)
    xs = [rng.normal(size=(5, 3)).astype(np.float32) * (i + 1) for i in range(3)]
    for xb in xs:
        out = bn(dev(xb))
    assert_allclose(out, (xs[-1] - xs[-1].mean(0)) / np.sqrt(xs[-1].var(0) + 1e-5), rtol=1e-4,
                    atol=1e-5)
    assert_allclose(bn.running_mean, np.mean([xb.mean(0) for xb in xs], 0), rtol=1e-5,
                    atol=1e-6)
    assert_allclose(bn.running_var, np.mean([xb.var(0, ddof=1) for xb in xs], 0), rtol=1e-5)
    bn.eval()
    rm, rv = host(bn.running_mean), host(bn.running_var)
    assert_allclose(bn(dev(xs[0])), (xs[0] - rm) / np.sqrt(rv + 1e-5), rtol=1e-5, atol=1e-5)
    assert int(host(bn.num_batches_tracked)) == 3
    x3 = rng.normal(size=(2, 3, 4)).astype(np.float32)
    bn.train()
    assert host(bn(dev(x3))).shape == (2, 3, 4)
    with pytest.raises(ValueError, match="more than 1 value"):
        bn(dev(np.ones((1, 3), np.float32)))
    with pytest.raises(ValueError, match="channels"):
        bn(dev(np.ones((4, 2), np.float32)))
    # reset_parameters (PyTorch's _NormBase): running statistics and affine parameters back
    # to their initial values, for batch and instance norms alike.
    nn.init.constant_(bn.weight, 2.0)
    for m in (bn, nn.InstanceNorm1d(3, affine=True, track_running_stats=True).to(DEVICE)):
        m(dev(rng.normal(size=(4, 3, 5)).astype(np.float32)))
        m.reset_parameters()
        for got, want in ((m.running_mean, 0), (m.running_var, 1), (m.weight, 1), (m.bias, 0)):
            assert_allclose(got, np.full(3, want, np.float32))
        assert int(host(m.num_batches_tracked)) == 0


def test_layernorm_embedding_dropout_flatten():
    ln = nn.LayerNorm((2, 3)).to(DEVICE)
    x = rng.normal(size=(4, 2, 3)).astype(np.float32)
    mu = x.mean((1, 2), keepdims=True)
    assert_allclose(ln(dev(x)), (x - mu) / np.sqrt(x.var((1, 2), keepdims=True) + 1e-5),
                    rtol=1e-4, atol=1e-5)
    e = nn.Embedding(5, 3, padding_idx=1)
    assert np.all(e.weight[1] == 0) and e.weight.dtype == np.float32
    d = nn.Dropout(0.25)
    y = d(np.ones((50, 40), np.float32))
    assert abs(float((y == 0).mean()) - 0.25) < 0.05
    assert np.array_equal(d(np.ones(3, np.float32), key=4), d(np.ones(3, np.float32), key=4))
    assert nn.Flatten(0)(np.zeros((2, 3, 4))).shape == (24,)
    assert nn.Unflatten(-1, (2, -1))(np.zeros((3, 8))).shape == (3, 2, 4)
    with pytest.raises(ValueError):
        nn.Dropout(1.5)


def test_activation_modules_and_losses_match_functional():
    x = rng.normal(size=(3, 4))
    for mod, fn in [(nn.ReLU(), nn.F.relu), (nn.GELU("tanh"), lambda v: nn.F.gelu(v, "tanh")),
                    (nn.SiLU(), nn.F.silu), (nn.Softmax(-1), lambda v: nn.F.softmax(v, -1)),
                    (nn.LogSoftmax(1), lambda v: nn.F.log_softmax(v, 1)),
                    (nn.LeakyReLU(0.2), lambda v: nn.F.leaky_relu(v, 0.2)),
                    (nn.ELU(), nn.F.elu), (nn.Softplus(), nn.F.softplus),
                    (nn.Sigmoid(), nn.F.sigmoid), (nn.Tanh(), nn.F.tanh)]:
        assert_allclose(mod(dev(x)), fn(dev(x)))
    t = np.array([1, 0, 3])
    w = rng.uniform(size=4)
    ce = nn.CrossEntropyLoss(weight=w, label_smoothing=0.1)
    assert list(ce.state_dict()) == ["weight"]
    assert_allclose(ce(x, t), nn.F.cross_entropy(x, t, w, label_smoothing=0.1))
    with pytest.raises(ValueError, match="reduction"):
        nn.MSELoss(reduction="avg")


def test_pooling_and_bilinear_modules():
    x = rng.normal(size=(1, 2, 4, 4)).astype(np.float32)
    assert host(nn.MaxPool2d(2)(dev(x))).shape == (1, 2, 2, 2)
    assert_allclose(nn.AvgPool2d(4)(dev(x)), x.mean((2, 3), keepdims=True), rtol=1e-5,
                    atol=1e-6)
    b = nn.Bilinear(2, 3, 4).to(DEVICE)
    x1 = rng.normal(size=(5, 2)).astype(np.float32)
    x2 = rng.normal(size=(5, 3)).astype(np.float32)
    ref = np.einsum("ni,oij,nj->no", x1, host(b.weight), x2) + host(b.bias)
    assert_allclose(b(dev(x1), dev(x2)), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode,np_mode", [("reflect", "reflect"), ("replicate", "edge"),
                                          ("circular", "wrap")])
def test_conv_padding_modes_pad_the_input_first(mode, np_mode):
    nn.manual_seed(0)
    x = np.random.default_rng(0).normal(size=(2, 3, 6, 7)).astype(np.float32)
    conv = nn.Conv2d(3, 4, 3, padding=1, padding_mode=mode).to(DEVICE)
    want = nn.F.conv2d(dev(np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)], mode=np_mode)),
                       conv.weight, conv.bias)
    assert_allclose(conv(dev(x)), host(want), rtol=1e-5, atol=1e-5)
    same = nn.Conv2d(3, 4, (3, 4), padding="same", padding_mode=mode).to(DEVICE)
    assert same(dev(x)).shape == (2, 4, 6, 7)
    c1 = nn.Conv1d(3, 2, 3, padding=2, dilation=2, padding_mode=mode).to(DEVICE)
    assert c1(dev(x[:, :, 0])).shape == (2, 2, 7)


def test_conv_rejects_unknown_padding_mode():
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(3, 4, 3, padding_mode="bogus")


def test_channel_dropout_rrelu_and_distance_modules():
    for cls, shape in [(nn.Dropout1d, (2, 16, 3)), (nn.Dropout2d, (2, 16, 3, 3)),
                       (nn.Dropout3d, (2, 16, 2, 2, 2))]:
        d = cls(0.5)
        y1, y2 = d(np.ones(shape, np.float32)), d(np.ones(shape, np.float32))
        flat = np.asarray(y1).reshape(2, 16, -1)
        assert (flat.min(-1) == flat.max(-1)).all() and y1.dtype == np.float32
        assert not np.array_equal(y1, y2)  # the module's key advances
        assert np.array_equal(d(np.ones(shape), key=3), d(np.ones(shape), key=3))
        assert d.eval()(np.ones(shape)).shape == shape
    for cls in (nn.AlphaDropout, nn.FeatureAlphaDropout):
        x = rng.normal(size=(200, 8, 4))
        y = cls(0.2)(x)
        assert abs(float(np.std(y)) - 1) < 0.1 and np.array_equal(cls(0.2).eval()(x), x)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout2d(-0.1)
    r = nn.RReLU(0.1, 0.3)
    y = np.asarray(r(-np.ones(1000)))
    assert -0.3 <= y.min() and y.max() <= -0.1
    assert_allclose(r.eval()(np.array([-1.0, 2.0])), np.array([-0.2, 2.0]))
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    assert_allclose(nn.CosineSimilarity(dim=0, eps=1e-6)(a, b),
                    nn.F.cosine_similarity(a, b, 0, 1e-6))
    assert_allclose(nn.PairwiseDistance(p=1.0, keepdim=True)(a, b),
                    nn.F.pairwise_distance(a, b, 1.0, keepdim=True))


def test_norm_layers_without_bias():
    # PyTorch's keyword-only bias=False: an affine scale, no shift parameter.
    x = rng.normal(size=(4, 3, 5)).astype(np.float32)  # the layers' dtype, as PyTorch needs
    for layer in (nn.BatchNorm1d(3, bias=False), nn.GroupNorm(3, 3, bias=False),
                  nn.InstanceNorm1d(3, affine=True, bias=False)):
        assert layer.bias is None and "bias" not in layer.state_dict()
        assert "bias=False" in repr(layer)
        layer.weight = nn.Parameter(np.full(3, 2.0, np.float32))
        ref = type(layer)(*([3, 3] if isinstance(layer, nn.GroupNorm) else [3]),
                          affine=False)
        assert_allclose(layer(x), 2.0 * np.asarray(ref(x)))
    assert nn.BatchNorm1d(3).bias is not None and "bias=True" in repr(nn.BatchNorm1d(3))
    assert repr(nn.InstanceNorm2d(3)) == ("InstanceNorm2d(3, eps=1e-05, momentum=0.1, "
                                          "affine=False, bias=False, track_running_stats=False)")


def test_loss_modules_take_pytorchs_legacy_arguments():
    x, t = rng.normal(size=(3, 4)), np.array([0, 3, 1])
    assert_allclose(nn.CrossEntropyLoss(size_average=False)(x, t),
                    nn.CrossEntropyLoss(reduction="sum")(x, t))
    assert nn.MSELoss(reduce=False)(x, x * 0).shape == (3, 4)
    assert nn.NLLLoss(None, None, 3)(x, t).shape == ()  # PyTorch's positional order
    assert nn.KLDivLoss(reduction="batchmean").reduction == "batchmean"


def test_reprs_are_pytorchs():
    # What print(model) shows in PyTorch 2.13.
    assert repr(nn.CrossEntropyLoss(reduction="sum")) == "CrossEntropyLoss()"
    assert repr(nn.Dropout(0.3)) == "Dropout(p=0.3, inplace=False)"
    assert repr(nn.Softshrink()) == "Softshrink(0.5)"
    assert repr(nn.GroupNorm(1, 2)) == "GroupNorm(1, 2, eps=1e-05, affine=True, bias=True)"
    assert repr(nn.LayerNorm(3)) == "LayerNorm((3,), eps=1e-05, elementwise_affine=True, bias=True)"
    assert repr(nn.TripletMarginWithDistanceLoss()) == \
        "TripletMarginWithDistanceLoss(\n  (distance_function): PairwiseDistance()\n)"


@pytest.mark.parametrize("lazy, eager, shape", [
    ("LazyBatchNorm1d(momentum=0.3)", "BatchNorm1d(3, momentum=0.3)", (4, 3)),
    ("LazyBatchNorm2d(affine=False)", "BatchNorm2d(3, affine=False)", (2, 3, 4, 4)),
    ("LazyBatchNorm3d(bias=False)", "BatchNorm3d(2, bias=False)", (2, 2, 2, 3, 2)),
    ("LazyInstanceNorm1d()", "InstanceNorm1d(3, affine=True, track_running_stats=True)",
     (3, 5)),
    ("LazyInstanceNorm2d(track_running_stats=False)", "InstanceNorm2d(3, affine=True)",
     (2, 3, 4, 4)),
])
def test_lazy_norms_become_the_layer_their_first_input_asks_for(lazy, eager, shape):
    x = dev(np.random.default_rng(0).standard_normal(shape))
    want = eval(eager, vars(nn)).double().to(DEVICE)  # noqa: S307 (the test's own text)
    layer = eval(lazy, vars(nn)).double().to(DEVICE)  # noqa: S307
    assert layer.num_features == 0 and list(layer.state_dict()) == list(want.state_dict())
    seen = []
    layer.register_forward_hook(lambda m, a, o: seen.append(o.shape))
    assert_allclose(layer(x), want(x), rtol=1e-12)
    assert type(layer) is type(want) and repr(layer) == repr(want) and seen == [shape]
    for (k1, v1), (k2, v2) in zip(layer.state_dict().items(), want.state_dict().items()):
        assert k1 == k2 and host(v1).dtype == host(v2).dtype  # .double() before is kept
        assert_allclose(v1, v2, rtol=1e-12)
    with pytest.raises(TypeError, match="dry run"):
        nn.jit(lambda m, a: m(a))(eval(lazy, vars(nn)), x)  # noqa: S307
    with pytest.raises(ValueError, match="to infer num_features"):
        eval(lazy, vars(nn))(dev(np.ones((2,) * 6)))  # noqa: S307


def test_hardtanh_needs_max_val_above_min_val():
    # PyTorch asserts max_val > min_val (equal bounds too).
    with pytest.raises(ValueError, match="must be greater than min_val"):
        nn.Hardtanh(1.0, 1.0)
    with pytest.warns(FutureWarning, match="renamed to `max_val`"):
        assert nn.Hardtanh(max_value=2.0).max_val == 2.0


@pytest.mark.parametrize("lazy, shape, want_keys", [
    ("LazyLinear(3)", (2, 5), ["weight", "bias"]),
    ("LazyLinear(3, bias=False)", (2, 5), ["weight"]),
    ("LazyConv2d(4, 3, bias=False)", (1, 2, 5, 5), ["weight"]),
    ("LazyConvTranspose1d(3, 2, 2)", (1, 4, 5), ["weight", "bias"]),
    ("LazyBatchNorm1d()", (4, 3), ["weight", "bias", "running_mean", "running_var",
                                   "num_batches_tracked"]),
])
def test_lazy_layers_follow_to_and_double_and_load_checkpoints(lazy, shape, want_keys):
    # PyTorch 2.13: an unmaterialised lazy layer's state_dict has its (uninitialised)
    # parameters' keys; `model.to(device)` / `.double()` before the dry run decide where and
    # in what dtype the first call creates them; a checkpoint materialises it; loading
    # nothing reports the missing keys (torch: missing_keys=['weight', 'bias'] for LazyLinear).
    layer = eval(lazy, vars(nn))  # noqa: S307 (the test's own text)
    assert list(layer.state_dict()) == want_keys and layer.has_uninitialized_params()
    layer = layer.double().to(DEVICE)
    x = dev(np.random.default_rng(0).standard_normal(shape))
    out = layer(x)
    assert not type(layer).__name__.startswith("Lazy")
    for v in layer.state_dict().values():
        assert is_device_array(v)  # on the test device, as `.to(DEVICE)` asked
        assert host(v).dtype in (np.float64, np.int64)
    fresh = eval(lazy, vars(nn)).double().to(DEVICE)  # noqa: S307
    assert fresh.load_state_dict(layer.state_dict()) == ([], [])
    assert type(fresh) is type(layer) and repr(fresh) == repr(layer)
    assert_allclose(fresh.eval()(x), layer.eval()(x), rtol=1e-12)
    missing = eval(lazy, vars(nn)).load_state_dict({}, strict=False)  # noqa: S307
    assert missing.missing_keys == [k for k in want_keys if k != "num_batches_tracked"]
    assert out.shape[0] == shape[0]


def test_lazy_linear_in_a_sequential_loads_a_pytorch_checkpoint():
    # torch: nn.Sequential(nn.LazyLinear(3), nn.ReLU(), nn.LazyLinear(2)).load_state_dict(sd)
    # of a materialised copy: "<All keys matched successfully>" (funcgrad_nn raised
    # "Unexpected key(s)").
    src = nn.Sequential(nn.Linear(5, 3), nn.ReLU(), nn.Linear(3, 2))
    lazy = nn.Sequential(nn.LazyLinear(3), nn.ReLU(), nn.LazyLinear(2))
    assert str(lazy.load_state_dict(src.state_dict())) == "<All keys matched successfully>"
    x = np.ones((4, 5), np.float32)
    np.testing.assert_array_equal(lazy(x), src(x))
    assert repr(lazy) == repr(src)


def test_uninitialized_parameters_are_what_pytorch_filters_on():
    # torch 2.13: a lazy layer's parameters (and LazyBatchNorm's running stats) are
    # UninitializedParameter / UninitializedBuffer until the first call; init loops skip them
    # with isinstance(p, nn.UninitializedParameter) or nn.parameter.is_lazy(p).
    model = nn.Sequential(nn.LazyLinear(3), nn.LazyBatchNorm1d(), nn.Linear(3, 2))
    lazy = [n for n, p in model.named_parameters() if isinstance(p, nn.UninitializedParameter)]
    assert lazy == ["0.weight", "0.bias", "1.weight", "1.bias"]
    assert [n for n, b in model.named_buffers() if is_lazy(b)] == ["1.running_mean",
                                                                   "1.running_var"]
    assert isinstance(model[1].running_mean, nn.UninitializedBuffer)
    assert not isinstance(model[1].running_mean, nn.UninitializedParameter)
    model.double().to(DEVICE)  # moved and cast, still uninitialised
    assert all(is_lazy(p) for p in list(model.parameters())[:4])
    twin = copy.deepcopy(model)  # (torch's deepcopy keeps UninitializedParameters too)
    assert [is_lazy(p) for p in twin.parameters()] == [True] * 4 + [False] * 2
    out = model(dev(np.ones((4, 5))))
    assert out.shape == (4, 2) and not any(is_lazy(p) for p in model.parameters())
    assert host(model[0].weight).dtype == np.float64
    # a custom module's own placeholder, replaced by assigning the real parameter
    m = nn.Module()
    m.w = nn.UninitializedParameter(dtype=np.float64)
    m.stats = nn.UninitializedBuffer(persistent=False)
    assert is_lazy(m.w) and list(m.state_dict()) == ["w"] and isinstance(m.w, nn.Parameter)
    assert repr(m.w) == "<UninitializedParameter>" and m.w.dtype == np.float64
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
        m.w.shape  # noqa: B018 (torch 2.13 raises the same)
    m.w = nn.Parameter(np.ones(3))
    assert not is_lazy(m.w) and not isinstance(np.zeros(0), nn.UninitializedParameter)
    assert isinstance(nn.UninitializedParameter(), nn.Parameter)


def test_materialize_as_custom_lazy_modules_call_it():
    # torch 2.13's pattern: initialize_parameters materializes the placeholders read off the
    # module and fills them with nn.init; the entry keeps its frozen flag, the object becomes
    # a Parameter/Buffer; .double() before the first call decides the dtype.
    class LazyScale(LazyModuleMixin, nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.UninitializedParameter()
            self.count = nn.UninitializedBuffer()

        def initialize_parameters(self, x):
            if self.has_uninitialized_params():
                self.weight.materialize((x.shape[-1],))
                nn.init.ones_(self.weight)
                self.count.materialize(x.shape[-1], dtype=np.int64)

        def forward(self, x):
            return x * self.weight

    m = LazyScale().double()
    assert m.weight.dtype == np.float64 and m.count.device == "cpu"
    out = m(np.full((2, 3), 2.0))
    assert out.dtype == np.float64
    assert_allclose(out, np.full((2, 3), 2.0))
    assert m.weight.shape == (3,) and m.count.dtype == np.int64
    assert not m.has_uninitialized_params() and list(m.state_dict()) == ["weight", "count"]
    p = nn.UninitializedParameter(requires_grad=False)
    p.materialize([2, 2], dtype=np.float16)
    assert type(p) is nn.Parameter and p.data.shape == (2, 2) and p.data.dtype == np.float16
    assert not p.requires_grad and not is_lazy(p)
    with pytest.raises(AttributeError):
        p.materialize((1,))  # a Parameter now, as in torch
    frozen = nn.LazyLinear(2)
    frozen.requires_grad_(False)
    w = frozen.weight
    w.materialize((2, 4))
    assert not w.requires_grad and "weight" in frozen._frozen and frozen.weight.shape == (2, 4)
    with pytest.raises(ValueError, match="negative dimension"):
        nn.UninitializedBuffer().materialize((2, -1))


def test_lazy_module_mixin_for_custom_lazy_modules():
    # torch.nn.modules.lazy.LazyModuleMixin: initialize_parameters runs before the first
    # forward, the module must then be fully initialised, the hook goes away, cls_to_become
    # takes over; a checkpoint gives the placeholders their shapes before loading.
    class Scale(nn.Module):
        def forward(self, x):
            return x * self.scale

    class LazyScale(LazyModuleMixin, Scale):
        cls_to_become = Scale

        def __init__(self):
            super().__init__()
            self.scale = nn.UninitializedParameter()
            self.seen = nn.UninitializedBuffer()

        def initialize_parameters(self, x):
            if self.has_uninitialized_params():
                self.scale = nn.Parameter(np.arange(1.0, x.shape[-1] + 1))
                self.seen = np.zeros(x.shape[-1])

    assert all(isinstance(m, LazyModuleMixin) for m in (
        nn.LazyLinear(2), nn.LazyConv2d(2, 3), nn.LazyBatchNorm1d()))
    m = LazyScale().to(DEVICE)
    assert m.has_uninitialized_params() and list(m.state_dict()) == ["scale", "seen"]
    out = m(dev(np.ones((2, 3))))
    assert_allclose(out, np.array([[1.0, 2.0, 3.0]] * 2))
    assert type(m) is Scale and not is_lazy(m.scale) and len(m._forward_pre_hooks) == 0
    fresh = LazyScale()
    assert fresh.load_state_dict(host(m.state_dict())) == ([], [])
    assert type(fresh) is LazyScale and fresh.scale.shape == (3,)  # (class changes on a call)
    assert_allclose(fresh(np.ones(3)), np.array([1.0, 2.0, 3.0]))

    class Forgetful(LazyModuleMixin, nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.UninitializedParameter()

        def initialize_parameters(self, x):
            pass

    with pytest.raises(RuntimeError, match="has not been fully initialized"):
        Forgetful()(np.ones(2))
    # .float() before the first call: the float64 array initialize_parameters made is cast
    # to the placeholder's dtype, as PyTorch's materialize() creates it in that dtype
    m32 = LazyScale().float().to(DEVICE)
    m32(dev(np.ones(3, np.float32)))
    assert host(m32.scale).dtype == np.float32 and host(m32.seen).dtype == np.float32


def test_norm_check_input_dim_is_the_hook_subclasses_override():
    # torch 2.13: _BatchNorm.forward calls self._check_input_dim; a BatchNorm2d subclass that
    # accepts 3-D input normalises over every axis but 1 ("expected 4D input (got 3D input)"
    # otherwise).
    class AnyRankBatchNorm2d(nn.BatchNorm2d):
        def _check_input_dim(self, input):
            pass

    x = np.arange(24, dtype=np.float32).reshape(4, 3, 2) ** 1.5
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input"):
        nn.BatchNorm2d(3)(dev(x))
    bn = AnyRankBatchNorm2d(3).to(DEVICE)
    assert_allclose(bn(dev(x)), host(nn.BatchNorm1d(3).to(DEVICE)(dev(x))), rtol=1e-5,
                    atol=1e-6)
    assert_allclose(bn.running_var, np.array([104.4201, 129.5943, 153.8255], np.float32),
                    rtol=1e-5)
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input"):
        nn.BatchNorm1d(3)(dev(x[None]))
    assert nn.InstanceNorm2d(3)._get_no_batch_dim() == 3


def test_embedding_fill_padding_idx_with_zero_for_custom_resets():
    class Scaled(nn.Embedding):
        def reset_parameters(self):
            nn.init.constant_(self.weight, 0.5)
            self._fill_padding_idx_with_zero()

    e = Scaled(4, 2, padding_idx=2)
    assert host(e.weight).tolist() == [[0.5, 0.5], [0.5, 0.5], [0.0, 0.0], [0.5, 0.5]]


def test_layer_sizes_given_as_numpy_integers():
    # torch 2.13 takes np.int64 sizes (its _ntuple repeats a non-iterable; LayerNorm checks
    # numbers.Integral): sizes computed with NumPy reach the constructors as NumPy integers.
    i = np.int64
    x = dev(np.ones((1, 2, 4, 4), np.float32))
    assert nn.Conv2d(2, 3, i(3), stride=i(1), padding=i(1)).to(DEVICE)(x).shape == (1, 3, 4, 4)
    assert nn.MaxPool2d(i(2))(x).shape == (1, 2, 2, 2)
    assert nn.ZeroPad2d(i(1))(x).shape == (1, 2, 6, 6)
    assert nn.LayerNorm(i(4)).to(DEVICE)(x).shape == (1, 2, 4, 4)
    assert nn.RMSNorm(i(4)).normalized_shape == (4,)
    assert nn.F.layer_norm(x, i(4)).shape == (1, 2, 4, 4)
    f = np.float32
    assert nn.F.embedding(dev(np.array([1])), dev(np.full((3, 2), 4.0, np.float32)),
                          max_norm=f(1.0)).shape == (1, 2)
    assert nn.FractionalMaxPool2d(2, output_ratio=f(0.5))(x).shape == (1, 2, 2, 2)
    assert nn.LSTM(4, 2, num_layers=2, dropout=f(0.1)).dropout == f(0.1)


def test_norm_layers_refuse_mixed_dtypes_as_pytorch():
    # torch 2.13 raises "mixed dtype (CPU)" (prelu: "Type promoting not supported") for each
    # of these float64 inputs to float32 layers; NumPy promotion would silently give float64.
    x64 = dev(np.ones((2, 3, 4)))
    for layer in (nn.LayerNorm(4), nn.BatchNorm1d(3), nn.BatchNorm1d(3).eval(),
                  nn.BatchNorm1d(3, affine=False), nn.GroupNorm(1, 3),
                  nn.InstanceNorm1d(3, affine=True), nn.PReLU()):
        layer.to(DEVICE)
        with pytest.raises(BadInputError, match="dtype float64"):
            layer(x64)
    with pytest.raises(BadInputError, match="mixed dtype"):
        nn.functional.layer_norm(dev(np.ones((2, 4), np.float32)), (4,),
                                 dev(np.ones(4, np.float64)))
    # ... and PyTorch accepts these: no parameters (or no float32 ones) to mismatch.
    for layer in (nn.LayerNorm(4, elementwise_affine=False), nn.InstanceNorm1d(3),
                  nn.BatchNorm1d(3, affine=False, track_running_stats=False),
                  nn.RMSNorm(4), nn.LocalResponseNorm(2)):
        assert layer.to(DEVICE)(x64).dtype == np.float64
    # Mixed precision: a float16 input meets float32 parameters, computed in float32 and
    # returned as float16 (torch: LayerNorm(4)(ones(2, 4).half()) is float16).
    x16 = rng.normal(size=(2, 3, 4)).astype(np.float16)
    for layer in (nn.LayerNorm(4), nn.GroupNorm(1, 3), nn.BatchNorm1d(3).eval()):
        out = layer.to(DEVICE)(dev(x16))
        assert out.dtype == np.float16
        assert_allclose(out, layer(dev(x16.astype(np.float32))).astype(np.float16))


def test_rms_norm_returns_the_inputs_dtype_as_pytorch():
    # torch 2.13: RMSNorm(4)(half) is float16, RMSNorm(4)(double) float64,
    # RMSNorm(4).double()(float) float32 (its kernel ends in type_as(input)).
    x = np.array([[0.0, 1.0, 2.0, 3.0]], np.float32)
    want = x / np.sqrt((x * x).mean() + np.finfo(np.float32).eps)
    assert nn.RMSNorm(4).to(DEVICE)(dev(x.astype(np.float16))).dtype == np.float16
    assert nn.RMSNorm(4).to(DEVICE)(dev(x.astype(np.float64))).dtype == np.float64
    out = nn.RMSNorm(4).double().to(DEVICE)(dev(x))
    assert out.dtype == np.float32
    assert_allclose(out, want, rtol=1e-6)


def test_embedding_bag_refuses_per_sample_weights_of_another_dtype():
    # torch 2.13 raises "Expected tensor for argument #1 'weight' to have the same type as
    # tensor for argument #1 'per_sample_weights'" (float64 or float16 with float32 weights).
    bag = nn.EmbeddingBag(5, 2, mode="sum").to(DEVICE)
    idx = dev(np.array([[1, 2]]))
    for dt in (np.float64, np.float16):
        with pytest.raises(BadInputError, match="per_sample_weights dtype"):
            bag(idx, per_sample_weights=dev(np.ones((1, 2), dt)))
    assert bag(idx, per_sample_weights=dev(np.ones((1, 2), np.float32))).dtype == np.float32


def test_fractional_max_pool_random_samples_is_a_buffer_as_torchs():
    # torch 2.13: state_dict() keys ['_random_samples'] when given, [] when not
    s = np.full((1, 2, 2), 0.5, np.float32)
    m = nn.FractionalMaxPool2d(2, output_size=3, _random_samples=s)
    assert list(m.state_dict()) == ["_random_samples"]
    assert list(nn.FractionalMaxPool2d(2, output_size=3).state_dict()) == []
    m.load_state_dict({"_random_samples": np.full((1, 2, 2), 0.25, np.float32)})
    assert np.asarray(m._random_samples)[0, 0, 0] == 0.25
    assert m(np.ones((1, 2, 6, 6), np.float32)).shape == (1, 2, 3, 3)


def test_instance_norm_without_per_channel_state_takes_any_channel_count_as_torch():
    # torch 2.13: InstanceNorm1d(3)(ones(2, 4, 5)) normalises, with a UserWarning "input's
    # size at dim=1 does not match num_features"; with affine (ValueError) or running stats
    # (RuntimeError) it refuses
    x = np.arange(40, dtype=np.float32).reshape(2, 4, 5)
    with pytest.warns(UserWarning, match="does not match num_features"):
        out = nn.InstanceNorm1d(3).to(DEVICE)(dev(x))
    want = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    for kw in (dict(affine=True), dict(track_running_stats=True)):
        with pytest.raises(BadInputError, match="with 3 channels"):
            nn.InstanceNorm1d(3, **kw).to(DEVICE)(dev(x))
