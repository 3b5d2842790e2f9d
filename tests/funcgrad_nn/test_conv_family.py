"""Convolution family: shapes, bad-input errors, jit/vmap agreement, gradients against finite
differences, and a small convolutional autoencoder that trains (PyTorch values: see
test_conv_fixtures.py)."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
import funcgrad_nn as nn
from funcgrad.test_util import check_grads
from tests.helpers import DEVICE, assert_allclose, dev, host

F = nn.F


def test_conv_transpose_is_the_input_gradient_of_conv():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 7, 6))
    w = rng.standard_normal((4, 3, 3, 2))
    y = F.conv2d(x, w, stride=2, padding=1, dilation=(1, 2))
    ct = rng.standard_normal(y.shape)
    gx = funcgrad.grad(lambda v: (F.conv2d(v, w, stride=2, padding=1, dilation=(1, 2))
                                  * ct).sum())(x)
    out = F.conv_transpose2d(ct, w, stride=2, padding=1, dilation=(1, 2),
                             output_size=x.shape[2:])
    assert_allclose(out, gx, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_conv_and_transpose_check_grads(nd):
    rng = np.random.default_rng(nd)
    x = rng.standard_normal((2, 4) + (5,) * nd)
    w = rng.standard_normal((6, 2) + (2,) * nd)
    wt = rng.standard_normal((4, 3) + (2,) * nd)
    conv = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    convt = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
    check_grads(lambda a, b: conv(a, b, stride=2, padding=1, groups=2), (x, w), order=2,
                modes=("rev",))
    check_grads(lambda a, b: convt(a, b, stride=2, padding=1, output_padding=1, groups=2),
                (x, wt), order=1)


def test_pooling_grads_and_jit_vmap():
    rng = np.random.default_rng(3)
    x = dev(rng.standard_normal((3, 2, 6, 7)))
    for f in (lambda v: F.max_pool2d(v, 3, 2, 1, ceil_mode=True),
              lambda v: F.avg_pool2d(v, 3, 2, 1, count_include_pad=False),
              lambda v: F.max_pool3d(v[:, None], 2),
              lambda v: F.adaptive_avg_pool2d(v, (4, 3)),
              lambda v: F.interpolate(v, scale_factor=1.5, mode="bicubic")):
        check_grads(f, (x,), order=1, modes=("rev",))
        assert_allclose(funcgrad.jit(f)(x), f(x))
        assert_allclose(funcgrad.vmap(f)(x[:, None]), np.stack([host(f(v[None])) for v in x]))


def test_max_pool_gradient_goes_to_first_maximum_only():
    x = np.zeros((1, 1, 2, 2))
    g = funcgrad.grad(lambda v: F.max_pool2d(v, 2).sum())(x)
    assert g.ravel().tolist() == [1.0, 0.0, 0.0, 0.0]
    x = np.array([[[[1.0, np.nan], [np.nan, 0.0]]]])
    v, i = F.max_pool2d(x, 2, return_indices=True)
    assert np.isnan(v).all() and i.ravel().tolist() == [1]


def test_integer_max_pool():
    x = np.arange(16, dtype=np.int32).reshape(1, 1, 4, 4)
    assert F.max_pool2d(x, 2, padding=1).dtype == np.int32
    assert F.max_pool2d(x, 2).ravel().tolist() == [5, 7, 13, 15]


def test_module_shapes_and_output_size():
    up = nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1)
    x = np.ones((2, 8, 5, 5), np.float32)
    assert up(x).shape == (2, 4, 9, 9)
    assert up(x, output_size=(10, 10)).shape == (2, 4, 10, 10)
    assert up(x, output_size=(2, 4, 10, 9)).shape == (2, 4, 10, 9)
    assert up(x).dtype == np.float32
    assert up.weight.shape == (8, 4, 3, 3)
    assert nn.Conv3d(2, 4, 3, padding="same")(np.ones((1, 2, 4, 5, 6), np.float32)).shape \
        == (1, 4, 4, 5, 6)
    assert nn.ConvTranspose1d(4, 2, 3, groups=2)(np.ones((4, 6), np.float32)).shape == (2, 8)
    assert nn.Unfold(2)(np.ones((1, 3, 4, 4))).shape == (1, 12, 9)
    assert nn.ReflectionPad2d((1, 2, 0, 1))(np.ones((1, 1, 3, 3))).shape == (1, 1, 4, 6)
    assert nn.ZeroPad2d(-1)(np.ones((1, 1, 3, 3))).shape == (1, 1, 1, 1)
    assert nn.PixelShuffle(2)(nn.PixelUnshuffle(2)(np.ones((1, 1, 4, 4)))).shape \
        == (1, 1, 4, 4)
    assert "output_padding=(1, 1)" in repr(nn.ConvTranspose2d(1, 1, 3, 2, output_padding=1))


@pytest.mark.parametrize("ctor, want", [
    # PyTorch 2.13's reprs of the same constructors.
    ("Conv2d(3, 6, 3, padding=1, padding_mode='reflect')",
     "Conv2d(3, 6, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), padding_mode=reflect)"),
    ("ReflectionPad2d((1, 2, 0, 1))", "ReflectionPad2d((1, 2, 0, 1))"),
    ("ZeroPad2d(1)", "ZeroPad2d((1, 1, 1, 1))"),
    ("ConstantPad1d(2, 1.5)", "ConstantPad1d(padding=(2, 2), value=1.5)"),
    ("AvgPool1d(3, 2, 1)", "AvgPool1d(kernel_size=(3,), stride=(2,), padding=(1,))"),
    ("Upsample(scale_factor=2)", "Upsample(scale_factor=2.0, mode='nearest')"),
    ("Upsample(scale_factor=(2, 1.5), mode='bilinear')",
     "Upsample(scale_factor=(2.0, 1.5), mode='bilinear')"),
    ("UpsamplingNearest2d(scale_factor=2)",
     "UpsamplingNearest2d(scale_factor=2.0, mode='nearest')"),
])
def test_reprs_match_pytorch(ctor, want):
    assert repr(eval(ctor, vars(nn))) == want  # noqa: S307 (the test's own text)


def test_bad_input_errors_name_module_shapes_and_fix():
    conv = nn.Conv2d(3, 8, 3)
    with pytest.raises(ValueError, match=r"Conv2d\(3, 8.*expected input \(N, 3, H, W\).*"
                                         r"got shape \(2, 4, 8, 8\).*in_channels"):
        conv(np.ones((2, 4, 8, 8), np.float32))
    with pytest.raises(ValueError, match=r"4-D batched or 3-D unbatched.*got shape \(8, 8\)"):
        conv(np.ones((8, 8), np.float32))
    with pytest.raises(ValueError, match="output_padding .* smaller than either stride"):
        nn.ConvTranspose2d(1, 1, 3, stride=2, output_padding=2)
    nn.ConvTranspose2d(1, 1, 3, stride=1, dilation=2, output_padding=1)  # < dilation: fine
    with pytest.raises(ValueError, match="valid sizes .* range from 9 to 10"):
        nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1)(np.ones((1, 8, 5, 5), np.float32),
                                                         output_size=(11, 11))
    with pytest.raises(ValueError, match="padding='same' is not supported for strided"):
        nn.Conv2d(1, 1, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="larger than the padded input"):
        F.conv2d(np.ones((1, 1, 2, 2)), np.ones((1, 1, 3, 3)))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        F.conv_transpose2d(np.ones((1, 3, 2, 2)), np.ones((3, 1, 2, 2)), groups=2)
    with pytest.raises(ValueError, match="too small"):
        F.max_pool2d(np.ones((1, 1, 1, 1)), 2)
    for fn in (F.conv1d, F.conv_transpose1d):  # funcgrad's rule: lists are not arrays
        with pytest.raises(TypeError, match="list is not a valid funcgrad array"):
            fn([[[1.0, 2.0, 3.0]]], np.ones((1, 1, 2)))
    with pytest.raises(ValueError, match="reflect padding"):
        F.pad(np.ones((1, 1, 2)), (2, 2), mode="reflect")
    with pytest.raises(ValueError, match="mode 'bilinear' expects a 4-D input"):
        F.interpolate(np.ones((1, 1, 2)), scale_factor=2, mode="bilinear")
    with pytest.raises(ValueError, match="align_corners option"):
        F.interpolate(np.ones((1, 1, 2)), scale_factor=2, align_corners=True)
    with pytest.raises(ValueError, match="divisible by upscale_factor"):
        F.pixel_shuffle(np.ones((1, 3, 2, 2)), 2)


def test_conv_autoencoder_trains():
    nn.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU(),
        nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1, output_padding=1), nn.ReLU(),
        nn.ConvTranspose2d(8, 1, 3, stride=2, padding=1, output_padding=1), nn.Sigmoid())
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[:8, :8]
    centers = rng.integers(2, 6, (32, 2))
    imgs = np.exp(-((yy - centers[:, :1, None]) ** 2 + (xx - centers[:, 1:, None]) ** 2) / 4.0)
    imgs = imgs[:, None].astype(np.float32)
    opt = nn.optim.Adam(model.parameters(), lr=1e-2)
    step = nn.jit(nn.value_and_grad(lambda m, x: F.mse_loss(m(x), x)))
    losses = []
    for _ in range(60):
        loss, grads = step(model, imgs)
        opt.step(grads)
        losses.append(float(loss))
    assert model(imgs).shape == imgs.shape
    assert losses[-1] < 0.5 * losses[0], losses[::10]


LAYERS = [
    ("Conv3d(2, 3, 2, padding=1)", (1, 2, 3, 4, 3)),
    ("ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1, groups=1)", (2, 2, 3, 3)),
    ("ConvTranspose1d(2, 4, 3, stride=2, groups=2)", (2, 2, 5)),
    ("MaxPool2d(3, 2, 1, ceil_mode=True)", (2, 2, 5, 5)),
    ("AvgPool3d(2, 1, 1, count_include_pad=False)", (1, 2, 3, 3, 3)),
    ("AdaptiveAvgPool2d((3, 2))", (2, 2, 5, 5)),
    ("Unfold(2, padding=1)", (2, 2, 3, 3)),
    ("Upsample(scale_factor=1.5, mode='bicubic')", (1, 2, 4, 4)),
    ("Upsample(size=5, mode='nearest-exact')", (1, 2, 4, 4)),
    ("ReflectionPad2d((1, 2, 0, 1))", (1, 2, 4, 4)),
    ("ReplicationPad1d(2)", (1, 2, 4)),
    ("PixelShuffle(2)", (1, 4, 2, 2)),
    ("InstanceNorm2d(2, affine=True, track_running_stats=True)", (2, 2, 3, 3)),
    ("BatchNorm3d(2)", (2, 2, 2, 2, 2)),
    ("RMSNorm(3)", (2, 3)),
    ("LocalResponseNorm(2)", (2, 3, 2, 2)),
    ("PReLU(2)", (2, 2, 3)),
    ("Hardswish()", (2, 3)),
    ("Hardsigmoid()", (2, 3)),
    ("Threshold(0.1, 2.0)", (2, 3)),
    ("utils.parametrizations.spectral_norm(Linear(3, 2))", (2, 3)),
]


@pytest.mark.parametrize("ctor,shape", LAYERS, ids=[c for c, _ in LAYERS])
def test_layers_run_forward_and_backward_on_the_test_device(ctor, shape):
    ns = dict(vars(nn))
    ns["utils"] = nn.utils
    model = eval(ctor, ns).to(DEVICE)  # noqa: S307
    x = dev(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    loss, grads = nn.value_and_grad(lambda m, v: (m(v) ** 2).sum())(model, x)
    assert np.isfinite(float(host(loss)))
    for g in nn.tree_leaves(grads):
        assert host(g).dtype == np.float32
    gx = funcgrad.grad(lambda v: (model(v) ** 2).sum())(x)
    assert host(gx).shape == shape


def test_adaptive_max_pool3d_matches_brute_force_first_maximum():
    rng = np.random.default_rng(5)
    x = np.round(rng.standard_normal((2, 2, 5, 4, 6)))  # rounded: many ties
    out = (3, 3, 4)
    vals, idx = F.adaptive_max_pool3d(x, out, return_indices=True)
    grad = funcgrad.grad(lambda a: F.adaptive_max_pool3d(a, out).sum())(x)
    want_grad = np.zeros_like(x)
    for n, c, i, j, k in np.ndindex(2, 2, *out):
        sl = [slice((o * s) // m, -((-(o + 1) * s) // m)) for o, s, m in
              zip((i, j, k), x.shape[2:], out)]
        win = x[n, c][tuple(sl)]
        first = np.unravel_index(np.argmax(win), win.shape)
        pos = tuple(s.start + f for s, f in zip(sl, first))
        assert vals[n, c, i, j, k] == win.max()
        assert idx[n, c, i, j, k] == np.ravel_multi_index(pos, x.shape[2:])
        want_grad[(n, c) + pos] += 1
    np.testing.assert_array_equal(grad, want_grad)
    assert nn.AdaptiveMaxPool3d((1, 2, None))(x).shape == (2, 2, 1, 2, 6)


def test_int64_average_pooling_truncates_as_pytorch():
    # torch 2.13: avg_pool2d of an int64 tensor is int64, each sum divided toward zero.
    x = np.array([[[[-7, 2, 3], [5, 5, -1], [4, -9, 8]]]])
    got = nn.F.avg_pool2d(x, 2, 1, 1, count_include_pad=False)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, [[[[-7, -2, 2, 3], [-1, 1, 2, 1], [4, 1, 0, 3],
                                          [4, -2, 0, 8]]]])
    np.testing.assert_array_equal(nn.F.avg_pool2d(x, 2, 2, 0, ceil_mode=True),
                                  [[[[1, 1], [-2, 8]]]])
    np.testing.assert_array_equal(nn.F.avg_pool1d(np.array([[[-7, 2, 5, 6]]]), 2), [[[-2, 5]]])


@pytest.mark.parametrize("call, shape", [
    (lambda x: nn.F.max_pool2d(x, 2), (0, 3, 2, 2)),
    (lambda x: nn.F.max_pool2d(x, 3, 2, 1, return_indices=True)[1], (0, 3, 3, 3)),
    (lambda x: nn.F.max_unpool2d(*nn.F.max_pool2d(x, 2, return_indices=True), 2),
     (0, 3, 4, 4)),
    (lambda x: nn.F.grid_sample(x, np.zeros((0, 2, 2, 2))), (0, 3, 2, 2)),
    (lambda x: nn.F.fractional_max_pool2d(x, 2, 3, _random_samples=np.zeros((0, 3, 2))),
     (0, 3, 3, 3)),
])
def test_empty_batches_pool_and_sample_to_empty_batches(call, shape):
    out = call(np.zeros((0, 3, 5, 5)))
    assert out.shape == shape


@pytest.mark.parametrize("lazy, eager, shape", [
    ("LazyConv2d(8, 3, 2, 1)", "Conv2d(3, 8, 3, 2, 1)", (2, 3, 7, 7)),
    ("LazyConv2d(8, 3, 1, 1, 1, 4, False)", "Conv2d(4, 8, 3, 1, 1, 1, 4, False)", (2, 4, 5, 5)),
    ("LazyConv1d(6, 3, groups=3, padding=1, padding_mode='reflect')",
     "Conv1d(3, 6, 3, groups=3, padding=1, padding_mode='reflect')", (2, 3, 7)),
    ("LazyConv3d(2, 2)", "Conv3d(4, 2, 2)", (4, 4, 4, 4)),
    ("LazyConvTranspose2d(4, 3, 2, 1, 1, 2)", "ConvTranspose2d(6, 4, 3, 2, 1, 1, 2)",
     (1, 6, 5, 5)),
    ("LazyConvTranspose1d(3, 2, stride=2, bias=False)",
     "ConvTranspose1d(5, 3, 2, stride=2, bias=False)", (5, 4)),
])
def test_lazy_convolutions_become_the_layer_their_first_input_asks_for(lazy, eager, shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    nn.manual_seed(3)
    want = eval(eager, vars(nn))  # noqa: S307 (the test's own text)
    nn.manual_seed(3)
    layer = eval(lazy, vars(nn))  # noqa: S307
    # PyTorch's UninitializedParameters: the names are there, the values are empty.
    assert layer.in_channels == 0 and list(layer.state_dict()) == list(want.state_dict())
    assert all(p.shape == (0,) for p in layer.parameters())
    out = layer(x)
    assert type(layer) is type(want) and repr(layer) == repr(want)
    # Same initialisation as the eager layer from the same seed (the lazy construction
    # does not draw from the generator).
    for (n1, p1), (n2, p2) in zip(layer.named_parameters(), want.named_parameters()):
        assert n1 == n2
        np.testing.assert_array_equal(p1, p2)
    np.testing.assert_array_equal(out, want(x))
    # A checkpoint's weight also tells a lazy layer its in_channels.
    fresh = eval(lazy, vars(nn))  # noqa: S307
    fresh.load_state_dict(want.state_dict())
    assert type(fresh) is type(want)
    np.testing.assert_array_equal(fresh(x), want(x))


def test_lazy_convolution_repr_hooks_and_tracing():
    # PyTorch 2.13's repr of the unmaterialised layer.
    layer = nn.LazyConv2d(8, 3, groups=2, bias=False)
    assert repr(layer) == ("LazyConv2d(0, 8, kernel_size=(3, 3), stride=(1, 1), groups=2, "
                           "bias=False)")
    assert repr(nn.LazyConvTranspose2d(4, 3, 2)) == \
        "LazyConvTranspose2d(0, 4, kernel_size=(3, 3), stride=(2, 2))"
    seen = []
    layer.register_forward_hook(lambda m, a, o: seen.append(o.shape))
    layer(np.ones((1, 4, 5, 5), np.float32))
    assert seen == [(1, 8, 3, 3)]
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.LazyConv2d(5, 3, groups=2)
    with pytest.raises(TypeError, match="dry run"):
        nn.jit(lambda m, a: m(a))(nn.LazyConv2d(3, 2), np.ones((1, 2, 4, 4), np.float32))


def test_conv_layer_input_errors_are_runtime_errors_as_in_pytorch():
    # PyTorch raises RuntimeError for a wrong channel count or rank; ours is also a
    # ValueError (funcgrad's BadInputError).
    with pytest.raises(RuntimeError, match="channels"):
        nn.Conv2d(3, 4, 3)(np.ones((1, 2, 5, 5), np.float32))
    with pytest.raises(ValueError, match="batched"):
        nn.ConvTranspose1d(3, 4, 3)(np.ones((3,), np.float32))


def test_max_unpool_output_size_has_nd_or_nd_plus_2_entries():
    v, i = nn.F.max_pool2d(np.arange(36.0).reshape(1, 1, 6, 6), 2, return_indices=True)
    assert nn.F.max_unpool2d(v, i, 2, output_size=(1, 1, 7, 7)).shape == (1, 1, 7, 7)
    with pytest.raises(ValueError, match="2 or 4 elements"):
        nn.F.max_unpool2d(v, i, 2, output_size=(1, 6, 6))


def test_max_pool_index_of_a_window_without_a_maximum_is_its_first_tap_inside():
    # torch 2.13: a window holding only -inf (and padding) points at its first tap inside
    # the input, never into the padding (max_unpool would reject a negative index).
    x = np.full((1, 1, 4), -np.inf)
    x[0, 0, 2] = 1.0
    v, i = nn.F.max_pool1d(x, 3, 1, 1, return_indices=True)
    np.testing.assert_array_equal(i, [[[0, 2, 2, 2]]])
    _, i2 = nn.F.max_pool2d(np.full((1, 1, 1, 4), -np.inf), 3, 1, 1, return_indices=True)
    np.testing.assert_array_equal(i2, [[[[0, 0, 1, 2]]]])
    assert nn.F.max_unpool1d(v, i, 3, 1, 1).shape == (1, 1, 4)


def test_avg_pool3d_needs_an_input_that_holds_a_window():
    with pytest.raises(ValueError, match="smaller than kernel"):
        nn.F.avg_pool3d(np.ones((1, 1, 3, 5, 5)), 4, padding=2)
    with pytest.raises(ValueError, match="smaller than kernel"):
        nn.F.lp_pool3d(np.ones((1, 1, 3, 5, 5)), 2, 4, ceil_mode=True)
    assert nn.F.avg_pool2d(np.ones((1, 1, 3, 5)), 4, padding=2).shape == (1, 1, 1, 2)


# -- integer/bool inputs to floating layers: PyTorch raises RuntimeError -----------------------
# (torch 2.13: "mat1 and mat2 must have the same dtype, but got Long and Float", "Input type
# (long int) and bias type (float) should be the same", ...); NumPy promotion would silently
# compute in float64.


@pytest.mark.parametrize("make_call", [
    lambda x: nn.Linear(3, 2)(x),
    lambda x: nn.functional.linear(x, np.ones((2, 3), np.float32)),
    lambda x: nn.Bilinear(3, 3, 2)(x, x),
    lambda x: nn.Conv1d(3, 2, 1)(x[:, :, None]),
    lambda x: nn.functional.conv1d(x[:, :, None], np.ones((2, 3, 1))),
    lambda x: nn.ConvTranspose1d(3, 2, 1)(x[:, :, None]),
    lambda x: nn.Conv2d(3, 2, 1)(x[:, :, None, None]),
])
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.bool_])
def test_integer_input_to_floating_layer_raises(make_call, dtype):
    x = np.ones((2, 3), dtype)
    with pytest.raises(RuntimeError, match=rf"input dtype {np.dtype(dtype)} does not match "
                                           r"weight dtype float(32|64)"):
        make_call(x)


def test_float_inputs_of_another_width_are_refused_as_in_pytorch():
    # torch 2.13: "mat1 and mat2 must have the same dtype, but got Double and Float",
    # "Input type (double) and bias type (float) should be the same"
    for layer, x in [(nn.Linear(3, 2), np.ones((1, 3))), (nn.Conv1d(3, 2, 1), np.ones((1, 3, 4))),
                     (nn.LSTM(3, 2), np.ones((2, 1, 3))),
                     (nn.Bilinear(3, 3, 2), np.ones((1, 3)))]:
        args = (x, x) if isinstance(layer, nn.Bilinear) else (x,)
        with pytest.raises(RuntimeError, match=r"float64 does not match weight dtype float32 "
                                               r"\(the input and the weights must have one "
                                               r"dtype.*x\.astype\(np\.float32\)"):
            layer(*args)
        assert layer.double()(*args)[0].dtype == np.float64  # the module cast: fine
    with pytest.raises(RuntimeError, match="float16 does not match weight dtype float32"):
        nn.functional.linear(np.ones((1, 3), np.float16), np.ones((2, 3), np.float32))
    with pytest.raises(RuntimeError, match="float64 does not match weight dtype float32"):
        nn.functional.conv1d(np.ones((1, 1, 4)), np.ones((1, 1, 2), np.float32))
    with pytest.raises(RuntimeError, match="bilinear: input dtype float64 does not match"):
        nn.functional.bilinear(np.ones((1, 2)), np.ones((1, 2)), np.ones((3, 2, 2), np.float32))


def test_conv_forward_hook_for_subclasses_as_pytorch():
    # torch 2.13: _reversed_padding_repeated_twice of Conv2d(3, 4, (3, 4), padding='same',
    # dilation=2) is [3, 3, 2, 2], of Conv3d(3, 4, 3, padding=(1, 2, 3)) (3, 3, 2, 2, 1, 1);
    # a weight-standardised convolution overrides forward and calls _conv_forward.
    assert nn.Conv2d(3, 4, (3, 4), padding="same", dilation=2)._reversed_padding_repeated_twice \
        == (3, 3, 2, 2)
    assert nn.Conv3d(3, 4, 3, padding=(1, 2, 3))._reversed_padding_repeated_twice \
        == (3, 3, 2, 2, 1, 1)

    class StdConv2d(nn.Conv2d):
        def forward(self, x):
            w = self.weight
            w = (w - w.mean(axis=(1, 2, 3), keepdims=True)) / fnp.sqrt(
                w.var(axis=(1, 2, 3), keepdims=True) + 1e-5)
            return self._conv_forward(x, w, self.bias)

    conv = StdConv2d(2, 3, 3, padding=1, padding_mode="reflect").to(DEVICE)
    x = np.random.default_rng(0).normal(size=(1, 2, 5, 5)).astype(np.float32)
    w = host(conv.weight)
    w = (w - w.mean(axis=(1, 2, 3), keepdims=True)) / np.sqrt(
        w.var(axis=(1, 2, 3), keepdims=True) + 1e-5)
    padded = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)], mode="reflect")
    assert_allclose(conv(dev(x)), nn.F.conv2d(dev(padded), dev(w), conv.bias), rtol=1e-5,
                    atol=1e-5)


def test_conv_transpose_output_padding_helper_as_pytorch():
    # torch 2.13: ConvTranspose2d(2, 3, 3, stride=2, padding=1)._output_padding(ones(1, 2, 4,
    # 5), [8, 10], ...) == [1, 1]; None gives (0, 0); [12, 10] raises ValueError
    m = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)
    x = np.ones((1, 2, 4, 5), np.float32)
    args = (m.stride, m.padding, m.kernel_size, 2, m.dilation)
    assert m._output_padding(x, [8, 10], *args) == [1, 1]
    assert m._output_padding(x, None, *args) == (0, 0)
    with pytest.raises(ValueError, match="valid sizes"):
        m._output_padding(x, [12, 10], *args)


def test_adaptive_pool_output_size_none_alone_is_torchs_type_error():
    # torch 2.13: AdaptiveAvgPool2d(None)(x) raises TypeError; (None, 3) keeps the first axis
    x = dev(np.ones((1, 1, 4, 5), np.float32))
    with pytest.raises(TypeError, match="output_size must be an int or a tuple"):
        nn.AdaptiveAvgPool2d(None)(x)
    assert nn.AdaptiveAvgPool2d((None, 3))(x).shape == (1, 1, 4, 3)
