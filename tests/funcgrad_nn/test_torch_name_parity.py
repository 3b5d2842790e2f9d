"""Names PyTorch users reach for that funcgrad_nn lacked (``CrossMapLRN2d``, ``F.conv_tbc``,
``F.grad``'s convolution gradients, ``F.native_channel_shuffle``, the grid-sample mode
tables) beyond the values in ``test_sweep_fixtures.py``: their derivatives, transformations
and errors; plus PyTorch's refusals (instance and group norm over one element,
``Module.bfloat16``)."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad_nn as nn
from funcgrad.test_util import check_grads
from tests.helpers import dev, host

F = nn.F


def test_crossmaplrn2d_values_literal():
    # torch.nn.CrossMapLRN2d(3, 0.3, 0.6, 1.5) on one pixel of channels [1, -2, 0.5, 3]:
    # channel 0 stays in the running sum from channel 2 on (PyTorch's quirk).
    x = np.array([1.0, -2.0, 0.5, 3.0]).reshape(1, 4, 1, 1)
    sums = np.array([1 + 4, 1 + 4 + 0.25, 4 + 0.25 + 9 + 1, 0.25 + 9 + 1])
    want = x.ravel() * (1.5 + 0.1 * sums) ** -0.6
    got = nn.CrossMapLRN2d(3, alpha=0.3, beta=0.6, k=1.5)(dev(x))
    np.testing.assert_allclose(np.asarray(host(got)).ravel(), want, rtol=1e-12)


def test_crossmaplrn2d_gradients_and_jit():
    x = dev(np.random.default_rng(0).standard_normal((2, 5, 2, 3)))
    m = nn.CrossMapLRN2d(4, alpha=0.2, beta=0.7, k=2.0)
    check_grads(m, (x,), order=2, modes=("rev",))
    np.testing.assert_allclose(host(nn.jit(m)(x)), host(m(x)), rtol=1e-12)
    assert repr(m) == "CrossMapLRN2d(4, alpha=0.2, beta=0.7, k=2.0)"
    with pytest.raises(ValueError, match="4D input"):
        m(x[0])


def test_conv_tbc_is_conv1d_in_time_batch_channel_layout():
    rng = np.random.default_rng(1)
    x, w, b = (dev(rng.standard_normal(s)) for s in ((6, 2, 3), (3, 3, 4), (4,)))
    ref = F.conv1d(x.transpose(1, 2, 0), w.transpose(2, 1, 0), b, padding=1).transpose(2, 0, 1)
    np.testing.assert_allclose(host(F.conv_tbc(x, w, b, 1)), host(ref), rtol=1e-12)
    check_grads(lambda x, w, b: F.conv_tbc(x, w, b, 2), (x, w, b), order=1, modes=("rev",))
    with pytest.raises(ValueError, match="bias of shape"):
        F.conv_tbc(x, w, b[:3])
    with pytest.raises(ValueError, match=r"\(time, batch, in_channels\)"):
        F.conv_tbc(x[0], w, b)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_conv_grads_are_the_convolutions_pullbacks(nd):
    rng = np.random.default_rng(nd)
    x = dev(rng.standard_normal((2, 4) + (6,) * nd))
    w = dev(rng.standard_normal((6, 2) + (3,) * nd))
    conv = getattr(F, f"conv{nd}d")
    y, pullback = funcgrad.vjp(lambda x, w: conv(x, w, None, 2, 1, 1, 2), x, w)
    gy = dev(rng.standard_normal(y.shape))
    gx, gw = pullback(gy)
    got_x = getattr(F.grad, f"conv{nd}d_input")(x.shape, w, gy, 2, 1, 1, 2)
    got_w = getattr(F.grad, f"conv{nd}d_weight")(x, w.shape, gy, 2, 1, 1, 2)
    np.testing.assert_allclose(host(got_x), host(gx), rtol=1e-12)
    np.testing.assert_allclose(host(got_w), host(gw), rtol=1e-12)
    jitted = funcgrad.jit(lambda w, gy: getattr(F.grad, f"conv{nd}d_input")(x.shape, w, gy,
                                                                           2, 1, 1, 2))
    np.testing.assert_allclose(host(jitted(w, gy)), host(gx), rtol=1e-12)


def test_conv_grad_errors_name_the_mismatch():
    w, gy = np.ones((1, 1, 2, 2)), np.ones((1, 1, 2, 3))
    with pytest.raises(ValueError, match=r"grad_output has shape \(1, 1, 2, 3\)"):
        F.grad.conv2d_input((1, 1, 4, 4), w, gy)
    with pytest.raises(ValueError, match="input_size must be a sequence of ints"):
        F.grad.conv2d_input(4, w, gy)


def test_grid_sample_tables_and_native_channel_shuffle():
    assert F.GRID_SAMPLE_INTERPOLATION_MODES == {"bilinear": 0, "nearest": 1, "bicubic": 2}
    assert F.GRID_SAMPLE_PADDING_MODES == {"zeros": 0, "border": 1, "reflection": 2}
    x = np.arange(6.0).reshape(1, 6, 1)
    np.testing.assert_array_equal(F.native_channel_shuffle(x, 3).ravel(), [0, 2, 4, 1, 3, 5])


@pytest.mark.parametrize("shape", [(2, 3, 1), (2, 3, 1, 1), (1, 2, 1, 1, 1)])
def test_instance_norm_refuses_one_spatial_element(shape):
    # PyTorch: "Expected more than 1 spatial element when training" (the output would be 0).
    x = np.ones(shape)
    with pytest.raises(ValueError, match="more than 1 spatial element"):
        F.instance_norm(x)
    norm = getattr(nn, f"InstanceNorm{len(shape) - 2}d")(shape[1])
    with pytest.raises(ValueError, match="more than 1 spatial element"):
        norm(x)
    tracked = getattr(nn, f"InstanceNorm{len(shape) - 2}d")(shape[1], track_running_stats=True)
    assert tracked.eval()(x).shape == shape  # the running statistics: fine, as in PyTorch


def test_bfloat16_says_why_not():
    with pytest.raises(TypeError, match="NumPy has no bfloat16"):
        nn.Linear(2, 2).bfloat16()


@pytest.mark.parametrize("shape, groups", [((1, 2, 1), 2), ((1, 2), 2), ((1, 1), 1)])
def test_group_norm_refuses_one_value_per_group(shape, groups):
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        F.group_norm(np.ones(shape), groups)
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.GroupNorm(groups, shape[1])(np.ones(shape, np.float32))
    assert F.group_norm(np.ones((1, 2, 1)), 1).shape == (1, 2, 1)  # two values per group


def test_torch_nn_modules_layout_holds_the_same_classes():
    # Ported code: weight-decay filters test isinstance against torch.nn.modules' bases.
    from funcgrad_nn.modules.batchnorm import _BatchNorm, _NormBase
    from funcgrad_nn.modules.conv import _ConvNd, _ConvTransposeNd
    from funcgrad_nn.modules.instancenorm import _InstanceNorm
    from funcgrad_nn.modules.loss import _Loss
    from funcgrad_nn.modules.utils import _ntuple, _pair, _quadruple, _single, _triple

    assert isinstance(nn.SyncBatchNorm(2), _BatchNorm) and isinstance(nn.LazyBatchNorm1d(),
                                                                      _BatchNorm)
    assert isinstance(nn.InstanceNorm1d(2), (_InstanceNorm, _NormBase))
    assert isinstance(nn.ConvTranspose2d(1, 1, 1), (_ConvNd, _ConvTransposeNd))
    assert isinstance(nn.MSELoss(), _Loss) and nn.modules.loss.MSELoss is nn.MSELoss
    assert nn.modules.activation.MultiheadAttention is nn.MultiheadAttention
    assert nn.modules.sparse.Embedding is nn.Embedding and nn.modules.Conv2d is nn.Conv2d
    assert nn.modules.rnn.RNNCellBase is nn.RNNCellBase
    assert (_single(2), _pair(3), _triple([1, 2, 3]), _quadruple(0)) == (
        (2,), (3, 3), (1, 2, 3), (0, 0, 0, 0))
    assert _ntuple(2)("ab") == ("a", "b")  # an iterable, as torch 2.13's
    from funcgrad_nn.parameter import Buffer, Parameter
    assert Parameter is nn.Parameter and Buffer is nn.Buffer


def test_grouped_mm_with_traced_offsets_and_its_errors():
    rng = np.random.default_rng(3)
    a, b = dev(rng.standard_normal((6, 4))), dev(rng.standard_normal((3, 4, 5)))
    offs = dev(np.array([1, 1, 4], np.int32))  # an empty group; rows 4 and 5 in none
    want = np.concatenate([host(a)[:1] @ host(b)[0], host(a)[1:4] @ host(b)[2], np.zeros((2, 5))])
    got = funcgrad.jit(lambda a, b, o: F.grouped_mm(a, b, offs=o))(a, b, offs)
    np.testing.assert_allclose(host(got), want, rtol=1e-12, atol=1e-12)
    check_grads(lambda a, b: F.grouped_mm(a, b, offs=offs), (a, b), order=1, modes=("rev",))
    assert F.grouped_mm(a, b, offs=offs, out_dtype=np.float32).dtype == np.float32
    with pytest.raises(ValueError, match="bias is not supported"):
        F.grouped_mm(a, b, offs=offs, bias=np.zeros(5))
    with pytest.raises(ValueError, match="offs is needed"):
        F.grouped_mm(a, b)
    with pytest.raises(ValueError, match="3 offsets"):
        F.grouped_mm(a, b[:2], offs=offs)
    with pytest.raises(ValueError, match="contraction sizes differ"):
        F.grouped_mm(a, b.transpose(0, 2, 1), offs=offs)


@pytest.mark.parametrize("ndim, axis", [(0, 0), (1, 0), (2, 1), (3, 0), (4, 1)])
def test_softmax_family_implicit_dim_is_pytorchs_deprecated_choice(ndim, axis):
    x = np.random.default_rng(ndim).standard_normal((2, 3, 2, 2)[:ndim])
    for fn, module in ((F.softmax, nn.Softmax), (F.log_softmax, nn.LogSoftmax),
                       (F.softmin, nn.Softmin)):
        with pytest.warns(UserWarning, match="Implicit dimension choice"):
            got = fn(x)
        np.testing.assert_allclose(got, fn(x, axis) if ndim else fn(x, 0), rtol=1e-15)
        with pytest.warns(UserWarning, match="Implicit dimension choice"):
            np.testing.assert_allclose(module()(x), got, rtol=1e-15)


def test_rnn_argument_checks_that_subclasses_call():
    # torch 2.13's RNNBase.check_forward_args / get_expected_*_size / permute_hidden.
    lstm = nn.LSTM(3, 4, 2, bidirectional=True, proj_size=2)
    x = dev(np.ones((5, 2, 3), np.float32))
    assert lstm.get_expected_hidden_size(x, None) == (4, 2, 2)
    assert lstm.get_expected_cell_size(x, None) == (4, 2, 4)
    assert lstm.get_expected_hidden_size(x[:, 0], np.array([2, 2, 1])) == (4, 2, 2)
    h, c = dev(np.zeros((4, 2, 2), np.float32)), dev(np.zeros((4, 2, 4), np.float32))
    lstm.check_forward_args(x, (h, c), None)
    with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size \(4, 2, 4\), got \[4, 2, 2\]"):
        lstm.check_forward_args(x, (h, h), None)
    gru = nn.GRU(3, 4, batch_first=True)
    with pytest.raises(RuntimeError, match="input must have 3 dimensions, got 2"):
        gru.check_input(x[0], None)
    with pytest.raises(RuntimeError, match="Expected 3, got 4"):
        gru.check_input(dev(np.ones((5, 2, 4), np.float32)), None)
    with pytest.raises(ValueError, match=r"GRU input dtype \(float64\) does not match"):
        gru.check_input(np.ones((5, 2, 3)), None)
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 5, 4\), got \[1, 1, 1\]"):
        gru.check_forward_args(x, np.zeros((1, 1, 1), np.float32), None)
    hx = dev(np.arange(6.0).reshape(1, 3, 2))
    np.testing.assert_array_equal(host(gru.permute_hidden(hx, np.array([2, 0, 1])))[0, :, 0],
                                  [4.0, 0.0, 2.0])
    assert gru.permute_hidden(hx, None) is hx


@pytest.mark.parametrize("ctor, shape, plain, params", [
    ("LazyLinear(3)", (2, 5), "Linear", [(3, 5), (3,)]),
    ("LazyConv2d(4, 3)", (2, 3, 5, 5), "Conv2d", [(4, 3, 3, 3), (4,)]),
    ("LazyConvTranspose1d(2, 3)", (3, 4), "ConvTranspose1d", [(3, 2, 3), (2,)]),
    ("LazyBatchNorm2d()", (2, 3, 4, 4), "BatchNorm2d", [(3,), (3,)]),
])
def test_lazy_modules_initialize_parameters_as_pytorch(ctor, shape, plain, params):
    # PyTorch's LazyModuleMixin API (torch 2.13 gives these shapes).
    m = eval(ctor, vars(nn))  # noqa: S307 (the test's own text)
    assert m.has_uninitialized_params() and m.cls_to_become.__name__ == plain
    m.initialize_parameters(np.ones(shape, np.float32))
    assert type(m).__name__ == plain
    assert [tuple(p.shape) for p in m.parameters()] == params


def test_mha_merge_masks_as_pytorch():
    # torch 2.13's MultiheadAttention.merge_masks: types 1 and 2, bool or-ed, float added.
    mha = nn.MultiheadAttention(4, 2, batch_first=True)
    q = np.zeros((2, 3, 4))
    causal = np.triu(np.ones((3, 3), bool), 1)
    pad = np.array([[0, 0, 1], [0, 0, 0]], bool)
    merged, kind = mha.merge_masks(causal, pad, q)
    assert kind == 2 and merged.shape == (2, 2, 3, 3) and merged.dtype == bool
    assert np.asarray(merged)[0, 1].tolist() == [[False, True, True], [False, False, True],
                                                 [False, False, True]]
    merged, _ = mha.merge_masks(causal * -1.0, pad * -1.0, q)
    assert np.asarray(merged)[0, 0, 2].tolist() == [0.0, 0.0, -1.0]
    assert mha.merge_masks(None, pad, q) == (pad, 1) and mha.merge_masks(None, None, q) == (
        None, None)
    assert mha.merge_masks(np.zeros((4, 3, 3), bool), None, q)[0].shape == (2, 2, 3, 3)


def test_more_torch_nn_module_internals_ported_code_imports() -> None:
    # Names ported code imports from torch.nn internals (found replaying programs): custom
    # losses subclass _WeightedLoss, dropout filters test _DropoutNd, DETR-style code takes
    # _get_clones, custom layers annotate with common_types._size_2_t.
    from funcgrad_nn.modules.dropout import _DropoutNd
    from funcgrad_nn.modules.loss import _WeightedLoss
    from funcgrad_nn.modules.transformer import _get_activation_fn, _get_clones

    from funcgrad_nn.common_types import _ratio_2_t, _size_2_t  # noqa: F401

    assert all(isinstance(m, _DropoutNd) for m in (nn.Dropout(), nn.Dropout2d(),
                                                  nn.AlphaDropout()))
    assert not isinstance(nn.Linear(2, 2), _DropoutNd)

    class Smoothed(_WeightedLoss):
        def __init__(self, weight=None, reduction="mean"):
            super().__init__(weight=weight, reduction=reduction)

        def forward(self, x, y):
            return F.cross_entropy(x, y, weight=self.weight, reduction=self.reduction)

    w = dev(np.array([1.0, 2.0, 0.5]))
    loss = Smoothed(weight=w, reduction="sum")
    assert sorted(loss.state_dict()) == ["weight"] and Smoothed().weight is None
    x, y = dev(np.eye(3)), dev(np.array([0, 1, 2]))
    np.testing.assert_allclose(host(loss(x, y)), host(F.cross_entropy(x, y, weight=w,
                                                                       reduction="sum")))
    with pytest.raises(ValueError):
        Smoothed(reduction="avg")
    clones = _get_clones(nn.Linear(2, 2), 3)
    assert isinstance(clones, nn.ModuleList) and len(clones) == 3
    assert clones[0].weight is not clones[1].weight
    assert _get_activation_fn("relu") is F.relu and _get_activation_fn("gelu") is F.gelu
    with pytest.raises(RuntimeError, match="relu/gelu"):
        _get_activation_fn("tanh")
