"""``funcgrad_nn.amp`` (``torch.amp``): autocast's casts and GradScaler's dynamic loss
scaling against PyTorch fixtures made by ``fixtures/make_amp_fixtures.py`` (a network's
float16 output, float32 loss and gradients under ``torch.autocast("cpu", dtype=float16)``,
a 6-step scaled training run with a skipped step, and each op's output dtype under the CPU
and the CUDA autocast), then the rules: nesting, float64 left alone, ``nn.jit`` traced per
autocast state, the scale a compiled step keeps, checkpoints and errors.

As in PyTorch, autocast casts the arrays of its own device type only, so every test enters
the autocast of the test device's arrays (``"cpu"`` for NumPy and the strict backend,
``"cuda"`` for CuPy) and expects that device type's PyTorch behaviour."""

from __future__ import annotations

import json
import pathlib
import warnings

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
import funcgrad_nn as nn
from funcgrad.backend import cuda_available, platform_name
from funcgrad_nn import amp
from tests.helpers import DEVICE, dev, expected_fp_warnings, host

F = nn.F
HERE = pathlib.Path(__file__).parent / "fixtures" / "amp"
DATA = np.load(HERE / "amp.npz")
#: the autocast device type of the test device's arrays, and the other one
DT = platform_name(DEVICE)
OTHER = "cuda" if DT == "cpu" else "cpu"
DTYPES = json.loads((HERE / "dtypes.json").read_text())[f"autocast_{DT}_float16"]
F16 = np.float16


def _sd(prefix):
    n = len(prefix)
    return {k[n:]: dev(DATA[k]) for k in DATA.files if k.startswith(prefix)}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.fc = nn.Linear(64, 3)
        self.ln = nn.LayerNorm(3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return self.ln(self.fc(x.reshape(x.shape[0], -1)))


def _net_loss(m, x, y):
    with nn.autocast(DT, dtype=F16):
        out = m(x)
        return F.cross_entropy(out, y), out


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_network_matches_pytorch(jit):
    net = Net().to(DEVICE)
    net.load_state_dict(_sd("net/sd/"))
    step = nn.value_and_grad(_net_loss, has_aux=True)
    (loss, out), g = (nn.jit(step) if jit else step)(net, dev(DATA["net/x"]),
                                                     dev(DATA["net/y"]))
    # the output is LayerNorm's of a float16 Linear output: float16 on the CPU, float32 on
    # CUDA (which runs the normalisations in float32)
    assert out.dtype == DTYPES["layer_norm"]["float16"] and loss.dtype == np.float32
    # float16 rounding: PyTorch's CPU kernels round at other points than NumPy's
    np.testing.assert_allclose(host(out).astype(np.float32), DATA["net/out"], atol=2e-3)
    np.testing.assert_allclose(float(host(loss)), DATA["net/loss"], rtol=1e-3)
    for name in ("conv.weight", "conv.bias", "fc.weight", "fc.bias", "ln.weight", "ln.bias"):
        mod, attr = name.split(".")
        got = getattr(getattr(g, mod), attr)
        assert got.dtype == np.float32, name
        want = DATA[f"net/g/{name}"]
        np.testing.assert_allclose(host(got), want, atol=5e-3 * np.abs(want).max(),
                                   err_msg=name)


@expected_fp_warnings
def test_grad_scaler_training_matches_pytorch():
    mlp = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).to(DEVICE)
    mlp.load_state_dict(_sd("scaler/sd0/"))
    opt = nn.optim.SGD(mlp.parameters(), lr=0.1)
    scaler = nn.amp.GradScaler(DT, init_scale=2.0 ** 20, growth_interval=2)

    def loss_fn(m, x, y):
        with nn.autocast(DT, dtype=F16):
            return scaler.scale(F.cross_entropy(m(x), y))

    scales, norms = [], []
    for i in range(6):
        g = nn.grad(loss_fn)(mlp, dev(DATA[f"scaler/x{i}"]), dev(DATA[f"scaler/y{i}"]))
        g = scaler.unscale_(opt, g)
        norms.append(float(host(nn.utils.clip_grad_norm_(g, 1.0))))
        scaler.step(opt, g)
        scaler.update()
        scales.append(scaler.get_scale())
    assert scales == DATA["scaler/scales"].tolist()  # two overflows, a skipped step, growth
    np.testing.assert_allclose(norms, DATA["scaler/norms"], rtol=2e-3)
    for k, v in _sd("scaler/sd/").items():
        np.testing.assert_allclose(host(mlp.state_dict()[k]), host(v), atol=1e-4, err_msg=k)


@pytest.mark.parametrize("op", sorted(DTYPES))
def test_op_dtypes_match_pytorch(op):
    rng = np.random.default_rng(0)

    def x(dt, *shape):
        return dev(rng.standard_normal(shape).astype(dt))

    def u(dt, *shape):
        return dev(rng.uniform(0.1, 0.9, shape).astype(dt))

    labels = dev(np.array([0, 1]))
    calls = {
        "linear": lambda d: F.linear(x(d, 2, 3), x(d, 4, 3), x(d, 4)),
        "conv1d": lambda d: F.conv1d(x(d, 1, 2, 5), x(d, 3, 2, 3)),
        "conv2d": lambda d: F.conv2d(x(d, 1, 2, 5, 5), x(d, 3, 2, 3, 3)),
        "conv_transpose2d": lambda d: F.conv_transpose2d(x(d, 1, 2, 5, 5), x(d, 2, 3, 3, 3)),
        "prelu": lambda d: F.prelu(x(d, 2, 3), x(d, 1)),
        "scaled_dot_product_attention": lambda d: F.scaled_dot_product_attention(
            x(d, 1, 2, 3, 4), x(d, 1, 2, 3, 4), x(d, 1, 2, 3, 4)),
        "softmax": lambda d: F.softmax(x(d, 2, 3), -1),
        "layer_norm": lambda d: F.layer_norm(x(d, 2, 3), (3,)),
        "relu": lambda d: F.relu(x(d, 2, 3)),
        "cross_entropy": lambda d: F.cross_entropy(x(d, 2, 3), labels),
        "nll_loss": lambda d: F.nll_loss(x(d, 2, 3), labels),
        "mse_loss": lambda d: F.mse_loss(x(d, 2, 3), x(d, 2, 3)),
        "l1_loss": lambda d: F.l1_loss(x(d, 2, 3), x(d, 2, 3)),
        "huber_loss": lambda d: F.huber_loss(x(d, 2, 3), x(d, 2, 3)),
        "binary_cross_entropy": lambda d: F.binary_cross_entropy(u(d, 2, 3), u(d, 2, 3)),
        "binary_cross_entropy_with_logits": lambda d: F.binary_cross_entropy_with_logits(
            x(d, 2, 3), u(d, 2, 3)),
        "kl_div": lambda d: F.kl_div(x(d, 2, 3), x(d, 2, 3), reduction="batchmean"),
        "cosine_similarity": lambda d: F.cosine_similarity(x(d, 2, 3), x(d, 2, 3)),
        "cdist": lambda d: nn.cdist(x(d, 2, 3), x(d, 2, 3)),
        "margin_ranking_loss": lambda d: F.margin_ranking_loss(x(d, 3), x(d, 3),
                                                               dev(np.ones(3, d))),
        "triplet_margin_loss": lambda d: F.triplet_margin_loss(x(d, 2, 3), x(d, 2, 3),
                                                               x(d, 2, 3)),
        "soft_margin_loss": lambda d: F.soft_margin_loss(x(d, 2, 3), dev(np.ones((2, 3), d))),
        "grid_sample": lambda d: F.grid_sample(x(d, 1, 1, 4, 4), u(d, 1, 2, 2, 2),
                                               align_corners=False),
        "matmul": lambda d: fnp.matmul(x(d, 2, 3), x(d, 3, 4)),
        "einsum": lambda d: fnp.einsum("ij,kj->ik", x(d, 2, 3), x(d, 4, 3)),
        "tensordot": lambda d: fnp.tensordot(x(d, 2, 3), x(d, 3, 4), 1),
        "bilinear": lambda d: F.bilinear(x(d, 2, 3), x(d, 2, 3), x(d, 4, 3, 3)),
        "avg_pool3d": lambda d: F.avg_pool3d(x(d, 1, 2, 4, 4, 4), 2),
        "max_pool3d": lambda d: F.max_pool3d(x(d, 1, 2, 4, 4, 4), 2),
        "max_pool3d_with_indices": lambda d: F.max_pool3d(x(d, 1, 2, 4, 4, 4), 2,
                                                          return_indices=True)[0],
        "adaptive_max_pool3d": lambda d: F.adaptive_max_pool3d(x(d, 1, 2, 4, 4, 4), 2),
        "max_unpool2d": lambda d: F.max_unpool2d(
            *F.max_pool2d(x(d, 1, 1, 4, 4), 2, return_indices=True), 2),
        "pad_reflect2d": lambda d: F.pad(x(d, 1, 2, 4, 4), (1, 1, 1, 1), mode="reflect"),
        "pad_replicate1d": lambda d: F.pad(x(d, 1, 2, 4), (1, 1), mode="replicate"),
        "pad_reflect3d": lambda d: F.pad(x(d, 1, 2, 3, 3, 3), (1,) * 6, mode="reflect"),
        "local_response_norm": lambda d: F.local_response_norm(x(d, 1, 4, 3, 3), 2),
        "multilabel_soft_margin_loss": lambda d: F.multilabel_soft_margin_loss(
            x(d, 2, 3), dev(np.ones((2, 3), d))),
        "affine_grid": lambda d: F.affine_grid(x(d, 1, 2, 3), [1, 1, 2, 2],
                                               align_corners=False),
        "interpolate_bilinear": lambda d: F.interpolate(x(d, 1, 2, 3, 3), scale_factor=2,
                                                        mode="bilinear"),
        "interpolate_area": lambda d: F.interpolate(x(d, 1, 2, 4, 4), size=2, mode="area"),
        "rms_norm": lambda d: F.rms_norm(x(d, 2, 3), (3,)),
    }

    def out_dtype(label):
        try:
            return str(calls[op](np.dtype(label)).dtype)
        except RuntimeError:  # CUDA autocast refuses binary_cross_entropy
            return "RuntimeError"
    with nn.autocast(DT, dtype=F16):
        got = {label: out_dtype(label) for label in ("float32", "float16")}
    assert got == DTYPES[op]


class MatmulNet(nn.Module):
    """A forward with the user's own matrix products, as ported PyTorch code has."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
        self.v = nn.Parameter(np.linspace(0.5, -0.5, 8, dtype=np.float32).reshape(4, 2))

    def forward(self, x):
        return fnp.einsum("...j,jk->...k", F.relu(x @ self.w), self.v)


#: torch.autocast("cpu", dtype=float16) on the same network (x @ w, relu, einsum), torch
#: 2.13: the float16 output and the float32 gradients of (out.float() ** 2).sum()
MATMUL_NET = {
    "out": [[-0.07818603515625, -0.701171875], [-0.1563720703125, -1.40234375]],
    "w": [[-1.447265625, -0.334228515625, 0.77880859375, 1.892578125],
          [2.89453125, 0.66845703125, -1.5576171875, -3.78515625],
          [-5.7890625, -1.3369140625, 3.115234375, 7.5703125]],
    "v": [[-0.53271484375, -4.78125], [-0.74609375, -6.69140625],
          [-0.9599609375, -8.609375], [-1.1728515625, -10.515625]],
}


@pytest.mark.parametrize("how", ["eager", "grad", "jit", "vmap"])
def test_users_own_matmul_and_einsum_autocast(how):
    # torch.autocast casts torch.matmul (so @) and einsum: here fnp.matmul/einsum/tensordot
    # eagerly and @ on traced arrays (under nn.grad, nn.jit, vmap)
    m = MatmulNet().to(DEVICE)
    x = dev(np.array([[0.5, -1.0, 2.0], [1.0, -2.0, 4.0]], np.float32))

    def loss(m, x):
        with nn.autocast(DT, dtype=F16):
            out = m(x)
        return (out.astype(np.float32) ** 2).sum(), out

    if how == "eager":  # x @ m.w between two arrays is NumPy's (CuPy's) own operator
        with nn.autocast(DT, dtype=F16):
            out = fnp.einsum("bj,jk->bk", F.relu(fnp.matmul(x, m.w)), m.v)
    elif how == "grad":
        (_, out), g = nn.value_and_grad(loss, has_aux=True)(m, x)
        assert g.w.dtype == g.v.dtype == np.float32
        np.testing.assert_allclose(host(g.w), MATMUL_NET["w"], rtol=2e-3, atol=1e-3)
        np.testing.assert_allclose(host(g.v), MATMUL_NET["v"], rtol=2e-3, atol=1e-3)
    elif how == "jit":
        out = nn.jit(lambda m, x: loss(m, x)[1])(m, x)
    else:
        with nn.autocast(DT, dtype=F16):
            out = funcgrad.vmap(m)(x)
    assert out.dtype == np.float16
    np.testing.assert_allclose(host(out).astype(np.float32), MATMUL_NET["out"], rtol=2e-3)
    # outside autocast, and for float64 operands, nothing changes
    assert fnp.matmul(x, m.w).dtype == np.float32
    with nn.autocast(DT, dtype=F16):
        assert fnp.matmul(x.astype(np.float64), m.w.astype(np.float64)).dtype == np.float64
        # an explicit dtype is not autocast (PyTorch's rule for dtype= arguments)
        assert fnp.einsum("ij,jk", x, m.w, dtype=np.float32).dtype == np.float32
        assert fnp.matmul(x, m.w, dtype=np.float32).dtype == np.float32


def test_nesting_disabling_and_float64(monkeypatch):
    monkeypatch.setattr(amp, "cuda_available", lambda: True)  # autocast("cuda") stays on
    lin = nn.Linear(3, 2).to(DEVICE)
    x32 = dev(np.ones((2, 3), np.float32))
    with nn.autocast(DT, dtype=F16):
        assert nn.is_autocast_enabled(DT) and not nn.is_autocast_enabled(OTHER)
        assert nn.get_autocast_dtype(DT) == np.float16
        with nn.autocast(DT, enabled=False):
            assert lin(x32).dtype == np.float32
        assert lin(x32).dtype == np.float16
        # PyTorch leaves float64 alone (autocast casts float32/float16 only)
        assert lin.double()(dev(np.ones((2, 3)))).dtype == np.float64
        # the other device type's autocast does not touch these arrays
        with nn.autocast(OTHER, dtype=F16):
            assert F.linear(x32, x32).dtype == np.float16  # still this device's autocast
        with nn.autocast(OTHER, enabled=False):
            assert F.linear(x32, x32).dtype == np.float16
    with nn.autocast(OTHER, dtype=F16):
        assert F.linear(x32, x32).dtype == np.float32
    assert not nn.is_autocast_enabled(DT)


def test_decorator_and_custom_fwd():
    @nn.autocast(DT, dtype=F16)
    def f(x, w):
        return F.linear(x, w)

    x = dev(np.ones((2, 3), np.float32))
    assert f(x, x).dtype == np.float16
    g = amp.custom_fwd(lambda a: F.linear(a, a), device_type=DT, cast_inputs=np.float32)
    with nn.autocast(DT, dtype=F16):
        assert g(dev(np.ones((2, 3), F16))).dtype == np.float32  # inputs cast, autocast off
        # PyTorch's _cast leaves float64 alone
        h = amp.custom_fwd(lambda a, b: (a.dtype, b.dtype), device_type=DT,
                           cast_inputs=np.float32)
        assert h(dev(np.ones(2, F16)), dev(np.ones(2))) == (np.float32, np.float64)


def _mm_function(**fwd_kw):
    seen = {}

    class MM(nn.autograd.Function):
        @staticmethod
        @amp.custom_fwd(device_type=DT, **fwd_kw)
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a @ b

        @staticmethod
        @amp.custom_bwd(device_type=DT)
        def backward(ctx, g):
            seen["autocast"] = nn.is_autocast_enabled(DT)
            a, b = ctx.saved_tensors
            return g @ b.T, a.T @ g
    return MM, seen


@pytest.mark.parametrize("cast_inputs", [None, np.float32])
def test_custom_bwd_runs_under_the_forwards_autocast_state(cast_inputs):
    # torch: backward runs with autocast as forward ran it (on, unless cast_inputs turned it
    # off), though the with block has closed by then
    mm, seen = _mm_function(cast_inputs=cast_inputs)
    a = dev(np.ones((2, 3), np.float32))
    b = dev(np.ones((3, 4), np.float32))

    def loss(a, b):
        with nn.autocast(DT, dtype=F16):
            y = mm.apply(a, b)
        assert y.dtype == (np.float16 if cast_inputs is None else np.float32)
        return y.astype(np.float32).sum()
    ga, gb = funcgrad.grad(loss, argnums=(0, 1))(a, b)
    assert seen["autocast"] is (cast_inputs is None)
    assert ga.dtype == gb.dtype == np.float32
    np.testing.assert_allclose(host(ga), np.full((2, 3), 4.0))


def test_jit_traces_per_autocast_state():
    lin = nn.Linear(3, 2).to(DEVICE)
    f = nn.jit(lambda m, x: m(x))
    x = dev(np.ones((2, 3), np.float32))
    assert f(lin, x).dtype == np.float32
    with nn.autocast(DT, dtype=F16):
        assert f(lin, x).dtype == np.float16
    assert f(lin, x).dtype == np.float32


def test_scale_passed_as_argument_under_jit():
    lin = nn.Linear(2, 1).to(DEVICE)
    scaler = nn.amp.GradScaler("cpu", init_scale=8.0, growth_interval=1)
    opt = nn.optim.SGD(lin.parameters(), lr=0.0)
    step = nn.jit(nn.grad(lambda m, x, s: m(x).sum() * s))
    x = dev(np.ones((4, 2), np.float32))
    for want in (8.0, 16.0):  # the scale grows after each good step: no retrace needed
        g = step(lin, x, scaler.get_scale())
        assert float(host(g.bias[0])) == 4 * want
        scaler.step(opt, g)
        scaler.update()


def test_scale_baked_into_a_compiled_step_is_refused():
    lin = nn.Linear(2, 1).to(DEVICE)
    scaler = nn.amp.GradScaler("cpu", init_scale=8.0, growth_interval=1)
    opt = nn.optim.SGD(lin.parameters(), lr=0.0)
    step = nn.jit(nn.grad(lambda m, x: scaler.scale(m(x).sum())))
    x = dev(np.ones((4, 2), np.float32))
    scaler.step(opt, step(lin, x))
    scaler.update()  # the scale is now 16, but the compiled step multiplies by 8
    with pytest.raises(RuntimeError, match="scaled by 8.0 .* the scale is now 16.0"):
        scaler.step(opt, step(lin, x))


def test_grad_scaler_rules():
    s = nn.amp.GradScaler("cpu", init_scale=4.0)
    g = {"w": dev(np.full(2, 8.0, np.float32))}
    s.unscale_("opt", g)
    assert host(g["w"]).tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        s.unscale_("opt", g)
    with pytest.raises(TypeError, match="pass the gradients"):
        s.unscale_("other")
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients"):
        s.unscale_("half", {"w": dev(np.ones(2, F16))})
    with pytest.raises(ValueError, match="growth factor must be > 1.0"):
        nn.amp.GradScaler("cpu", growth_factor=0.5)
    with pytest.raises(ValueError, match="backoff factor must be < 1.0"):
        nn.amp.GradScaler("cpu", backoff_factor=1.5)
    # a scale that would overflow float32 does not grow (PyTorch's)
    big = nn.amp.GradScaler("cpu", init_scale=2.0 ** 127, growth_interval=1)
    big.update()
    assert big.get_scale() == 2.0 ** 127
    sd = {"scale": 8.0, "growth_factor": 3.0, "backoff_factor": 0.25, "growth_interval": 7,
          "_growth_tracker": 2}
    s.load_state_dict(sd)
    assert s.state_dict() == sd
    # a float16 0-d loss meets the float32 scale: float32, as PyTorch's
    assert s.scale(dev(np.array(2.0, F16))).dtype == np.float32
    assert s.scale(dev(np.ones(2, F16))).dtype == np.float16


def test_cuda_scaler_without_a_gpu_disables_itself():
    if cuda_available():
        pytest.skip("a GPU is present")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s = nn.amp.GradScaler()
    assert "CUDA is not available" in str(w[0].message)
    assert not s.is_enabled() and s.get_scale() == 1.0 and s.state_dict() == {}
    loss = dev(np.float32(3.0))
    assert s.scale(loss) is loss


def test_autocast_turns_itself_off_as_pytorch(monkeypatch):
    # torch 2.13: a CPU autocast dtype other than float16/bfloat16 (float32, as a configurable
    # dtype often is) and CUDA autocast without a GPU warn and act as enabled=False
    x = dev(np.ones((2, 3), np.float32))
    with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not "
                                         "supported. Disabling autocast."):
        off = nn.autocast("cpu", dtype=np.float32)
    with nn.autocast(DT, dtype=F16):
        with off:
            assert not nn.is_autocast_enabled("cpu")
            if DT == "cpu":
                assert F.linear(x, x).dtype == np.float32
    monkeypatch.setattr(amp, "cuda_available", lambda: False)
    with pytest.warns(UserWarning, match="CUDA is not available or torch_xla is imported. "
                                         "Disabling autocast."):
        cuda = nn.autocast("cuda")
    with cuda:
        assert not nn.is_autocast_enabled("cuda") and not nn.is_autocast_enabled()
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'tpu'"):
        nn.autocast("tpu", dtype=F16)
    # a decorator checks (and warns) once, where it is applied
    with pytest.warns(UserWarning, match="Disabling autocast"):
        @nn.autocast("cpu", dtype=np.float32)
        def f(a):
            return nn.is_autocast_enabled("cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(x) is False


def test_errors():
    with pytest.raises(TypeError, match="no bfloat16 dtype.*defaults to bfloat16"):
        nn.autocast("cpu")
    with pytest.raises(TypeError, match="no bfloat16"):
        nn.autocast("cuda", dtype="bfloat16")
    with pytest.raises(TypeError, match="must be float16"):
        nn.autocast("cuda", dtype=np.int32)
    assert amp.AUTOCAST_POLICIES["cuda"]["binary_cross_entropy"] == amp.UNSAFE


#: output dtype of each recurrent layer under torch.autocast("cpu", dtype=float16) for a
#: float32 / float16 input with float32 weights (torch 2.13; its float32 LSTM fails in oneDNN
#: there, and float16 is what its lower-precision LSTM gives a float16 input); CUDA's
#: autocast runs them all in float16 (cuDNN's RNN and the cells are in its float16 list)
RNN_DTYPES = {
    "cpu": {"GRU": ("float32", "float16"), "LSTM": ("float16", "float16"),
            "RNN": ("float16", "float16"), "GRUCell": ("float32", "float16"),
            "LSTMCell": ("float32", "float16"), "RNNCell": ("float16", "float16")},
    "cuda": dict.fromkeys(("GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNCell"),
                          ("float16", "float16")),
}[DT]


@pytest.mark.parametrize("name", sorted(RNN_DTYPES))
def test_recurrent_layers_under_autocast(name):
    layer = getattr(nn, name)(3, 4).to(DEVICE)
    cell = name.endswith("Cell")
    x = np.random.default_rng(0).standard_normal((2, 3) if cell else (5, 2, 3))
    got = []
    for dt in (np.float32, F16):
        with nn.autocast(DT, dtype=F16):
            out = layer(dev(x.astype(dt)))
        got.append(str((out[0] if isinstance(out, tuple) else out).dtype))
    assert tuple(got) == RNN_DTYPES[name]

    def loss(m):
        with nn.autocast(DT, dtype=F16):
            out = m(dev(x.astype(F16)))
            return ((out[0] if isinstance(out, tuple) else out).astype(np.float32) ** 2).sum()
    assert {str(g.dtype) for g in nn.tree_leaves(nn.grad(loss)(layer))} == {"float32"}


def test_cuda_op_lists(monkeypatch):
    # no GPU here: arrays are made to report CUDA, so autocast("cuda") applies its own lists
    monkeypatch.setattr(amp, "_array_device_type",
                        lambda x: "cuda" if hasattr(x, "dtype") else None)
    monkeypatch.setattr(amp, "cuda_available", lambda: True)
    x16 = dev(np.ones((2, 3), F16))
    x32 = dev(np.ones((2, 3), np.float32))
    with nn.autocast("cuda"):
        assert F.linear(x32, x32).dtype == np.float16
        # CUDA runs softmax and the normalisations in float32 (the CPU lists do not)
        assert F.softmax(x16, -1).dtype == np.float32
        assert F.layer_norm(x16, (3,)).dtype == np.float32
        assert F.softmax(x16, -1, dtype=np.float16).dtype == np.float16  # dtype= wins
        assert F.bilinear(x16, x32, dev(np.ones((4, 3, 3), np.float32))).dtype == np.float32
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            F.binary_cross_entropy(x16 * 0.5, x16 * 0.5)
    with nn.autocast("cpu", dtype=F16):  # the arrays are "on CUDA": the CPU autocast ignores them
        assert F.linear(x32, x32).dtype == np.float32
