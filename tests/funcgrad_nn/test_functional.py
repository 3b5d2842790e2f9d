"""funcgrad_nn.functional against hand-written NumPy formulas, plus gradient checks."""

import math
import warnings

import numpy as np
import pytest
from scipy.special import erf

import funcgrad
import funcgrad_nn.functional as F
from funcgrad.test_util import check_grads
from funcgrad_nn import init
from tests.helpers import DEVICE, assert_allclose, dev, expected_fp_warnings, host

rng = np.random.default_rng(0)


def _log_softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("name,ref", [
    ("relu", lambda x: np.maximum(x, 0)),
    ("relu6", lambda x: np.clip(x, 0, 6)),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x))),
    ("silu", lambda x: x / (1 + np.exp(-x))),
    ("tanh", np.tanh),
    ("elu", lambda x: np.where(x > 0, x, np.expm1(x))),
    ("leaky_relu", lambda x: np.where(x > 0, x, 0.01 * x)),
    ("softplus", lambda x: np.log1p(np.exp(x))),
    ("gelu", lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2)))),
    ("logsigmoid", lambda x: -np.log1p(np.exp(-x))),
])
def test_activations(name, ref):
    x = rng.normal(size=(3, 4)) * 3
    assert_allclose(getattr(F, name)(dev(x)), ref(x), rtol=1e-10, atol=1e-12)
    x32 = x.astype(np.float32)
    assert getattr(F, name)(dev(x32)).dtype == np.float32
    check_grads(getattr(F, name), (dev(x + 0.1),), order=2)


def test_gelu_tanh_and_softmax():
    x = rng.normal(size=(2, 5))
    t = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    assert_allclose(F.gelu(dev(x), approximate="tanh"), t)
    assert_allclose(F.log_softmax(dev(x), dim=1), _log_softmax(x, 1))
    assert_allclose(F.softmax(dev(x), dim=0), np.exp(_log_softmax(x, 0)))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        assert_allclose(F.softmax(x), np.exp(_log_softmax(x, 1)))  # PyTorch's: dim 1 for 2-D
    with pytest.raises(ValueError, match="approximate"):
        F.gelu(x, approximate="fast")


@pytest.mark.parametrize("name,args", [
    ("relu", ()), ("relu6", ()), ("leaky_relu", (0.2,)), ("elu", (0.5,)), ("selu", ()),
    ("celu", (2.0,)), ("silu", ()), ("mish", ()), ("hardswish", ()), ("hardsigmoid", ()),
    ("hardtanh", (-0.5, 0.5)), ("threshold", (0.1, -2.0)), ("rrelu", (0.1, 0.3, False)),
    ("dropout", (0.5, False)),
])
def test_inplace_argument_accepted_in_pytorchs_position(name, args):
    # PyTorch code writes F.relu(x, inplace=True) or passes it positionally; the result is
    # a new array (never a mutation), equal to the out-of-place one.
    x = rng.normal(size=(3, 4))
    before = x.copy()
    fn = getattr(F, name)
    expected = host(fn(dev(x), *args))
    assert_allclose(fn(dev(x), *args, True), expected)
    assert_allclose(fn(dev(x), *args, inplace=True), expected)
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize("call", [
    lambda x: F.sigmoid(x), lambda x: F.logsigmoid(x), lambda x: F.silu(x),
    lambda x: F.gelu(x), lambda x: F.glu(x), lambda x: F.softmax(x, dim=1),
    lambda x: F.log_softmax(x, dim=-1), lambda x: F.softmin(x, dim=0),
    lambda x: F.softmax(x[0, 0], dim=0), lambda x: F.gumbel_softmax(x, key=0).sum(-1),
    lambda x: F.cross_entropy(x, dev(np.array([1, 0]))), lambda x: F.cross_entropy(x, x * 0 + 0.25),
    lambda x: F.kl_div(x, x * 0 + 0.25, reduction="batchmean"),
], ids=["sigmoid", "logsigmoid", "silu", "gelu", "glu", "softmax", "log_softmax", "softmin",
        "softmax_0d", "gumbel_softmax", "cross_entropy", "cross_entropy_probs", "kl_div"])
def test_float16_stays_float16(call):
    # PyTorch keeps a half input half; funcgrad.scipy.special computes float16 in float64
    # (SciPy's rule), so these used to return float64. The gradient is float16 too.
    x = rng.normal(size=(2, 4)).astype(np.float16)
    ref = host(call(dev(x.astype(np.float64))))
    out = call(dev(x))
    assert out.dtype == np.float16
    assert_allclose(host(out).astype(np.float64), ref, rtol=2e-2, atol=2e-3)
    g = funcgrad.grad(lambda v: call(v).astype(np.float32).sum())(dev(x))
    assert g.dtype == np.float16


def test_float16_random_draws_stay_in_unit_interval():
    # 24-bit integers overflowed float16 to inf: dropout kept everything, gumbel gave NaN.
    u = F.random_uniform(3, dev(np.zeros(20000, np.float16)))
    assert u.dtype == np.float16
    assert 0.0 <= float(u.min()) and float(u.max()) < 1.0 and abs(float(u.mean()) - 0.5) < 0.02
    y = host(F.dropout(dev(np.ones(20000, np.float16)), 0.3, key=1))
    assert y.dtype == np.float16 and abs((y == 0).mean() - 0.3) < 0.02
    assert np.isfinite(host(F.gumbel_softmax(dev(np.zeros((3, 4), np.float16)), key=0))).all()


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_softmax_family_over_an_empty_axis_is_empty(name):
    # PyTorch returns an empty result; the max-shift of funcgrad.scipy.special raised.
    x = dev(np.zeros((2, 0), np.float32))
    out = getattr(F, name)(x, dim=1)
    assert out.shape == (2, 0) and out.dtype == np.float32
    g = funcgrad.grad(lambda v: getattr(F, name)(v, dim=-1).sum())(x)
    assert g.shape == (2, 0)


@pytest.mark.parametrize("name", ["huber_loss", "soft_margin_loss"])
def test_losses_computed_in_the_inputs_dtype_keep_it_with_a_float64_target(name):
    # PyTorch: huber_loss(f32, f64) and soft_margin_loss(f32, f64) are float32 (its kernels
    # write into an array like the input), while mse_loss(f32, f64) promotes to float64.
    x = rng.normal(size=(3, 4)).astype(np.float32)
    t = np.sign(rng.normal(size=(3, 4)))
    fn = getattr(F, name)
    out = fn(dev(x), dev(t))
    assert out.dtype == np.float32
    assert_allclose(out, fn(dev(x), dev(t.astype(np.float32))))
    assert F.mse_loss(dev(x), dev(t)).dtype == np.float64
    g = funcgrad.grad(lambda tt: fn(dev(x), tt))(dev(t))
    assert g.dtype == np.float64


@expected_fp_warnings
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_zero_total_class_weight_is_pytorchs_plain_zero_over_zero(smoothing):
    # PyTorch: targets that count but whose class weights sum to 0 give a NaN mean with NaN
    # gradients (0/0); only when every target is ignored is the gradient zero.
    x = rng.normal(size=(3, 4))
    w = dev(np.array([0.0, 0.0, 1.0, 1.0]))

    def loss(v, t):
        return F.cross_entropy(v, dev(t), weight=w, label_smoothing=smoothing)

    t = np.array([0, 1, 1])
    assert np.isnan(float(loss(dev(x), t)))
    assert np.isnan(host(funcgrad.grad(loss)(dev(x), t))).all()
    nll_grad = host(funcgrad.grad(lambda v: F.nll_loss(v, dev(t), weight=w))(dev(x)))
    np.testing.assert_array_equal(np.isnan(nll_grad), np.eye(4, dtype=bool)[t])
    ignored = np.full(3, -100)
    assert np.isnan(float(loss(dev(x), ignored)))
    assert (host(funcgrad.grad(loss)(dev(x), ignored)) == 0).all()


@pytest.mark.parametrize("dtypes,want", [
    ((np.float64, np.float32), np.float32), ((np.float32, np.float64), np.float64),
    ((np.float32, np.float32), np.float32), ((np.float16, np.float32), np.float32),
])
def test_bce_with_logits_result_takes_the_targets_dtype(dtypes, want):
    # PyTorch 2.13 (its loss is built in place on 1 - target).
    x = rng.normal(size=(3, 4)).astype(dtypes[0])
    t = rng.uniform(size=(3, 4)).astype(dtypes[1])
    for kw in ({}, {"pos_weight": dev(np.full(4, 2.0))}, {"weight": dev(np.ones(4))}):
        out = F.binary_cross_entropy_with_logits(dev(x), dev(t), **kw)
        assert out.dtype == want
        ref = F.binary_cross_entropy_with_logits(dev(x.astype(np.float64)),
                                                 dev(t.astype(np.float64)), **kw)
        assert_allclose(host(out).astype(np.float64), host(ref), rtol=1e-3)
    g = funcgrad.grad(lambda v: F.binary_cross_entropy_with_logits(v, dev(t)))(dev(x))
    assert g.dtype == dtypes[0]


def test_relu_grad_at_zero_like_pytorch():
    g = funcgrad.grad(lambda x: F.relu(x).sum())(np.zeros(2))
    assert_allclose(g, np.zeros(2))


def _conv2d_ref(x, w, b, stride, pad, dil, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    ho = (h + 2 * pad[0] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (wd + 2 * pad[1] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, ho, wo))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(ho):
            for j in range(wo):
                patch = xp[:, g * cg:(g + 1) * cg,
                           i * stride[0]:i * stride[0] + dil[0] * (kh - 1) + 1:dil[0],
                           j * stride[1]:j * stride[1] + dil[1] * (kw - 1) + 1:dil[1]]
                out[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3))
    return out + (0 if b is None else b.reshape(1, -1, 1, 1))


@pytest.mark.parametrize("stride,pad,dil,groups", [
    ((1, 1), (0, 0), (1, 1), 1), ((2, 1), (1, 2), (1, 1), 1), ((1, 1), (2, 2), (2, 1), 2),
    ((2, 2), (1, 1), (1, 1), 4)])
def test_conv2d_matches_loops(stride, pad, dil, groups):
    x = rng.normal(size=(2, 4, 7, 6))
    w = rng.normal(size=(8, 4 // groups, 3, 2))
    b = rng.normal(size=8)
    got = F.conv2d(dev(x), dev(w), dev(b), stride, pad, dil, groups)
    assert_allclose(got, _conv2d_ref(x, w, b, stride, pad, dil, groups), rtol=1e-10,
                    atol=1e-10)


def test_conv2d_same_conv1d_and_grads():
    x = rng.normal(size=(1, 2, 5, 5))
    w = rng.normal(size=(3, 2, 3, 3))
    assert F.conv2d(dev(x), dev(w), padding="same").shape == (1, 3, 5, 5)
    assert_allclose(F.conv2d(dev(x), dev(w), padding="same"),
                    _conv2d_ref(x, w, None, (1, 1), (1, 1), (1, 1), 1), atol=1e-10)
    x1 = rng.normal(size=(2, 2, 6))
    w1 = rng.normal(size=(4, 2, 3))
    ref = _conv2d_ref(x1[:, :, None], w1[:, :, None], None, (1, 2), (0, 1), (1, 1), 1)[:, :, 0]
    assert_allclose(F.conv1d(dev(x1), dev(w1), stride=2, padding=1), ref, atol=1e-10)
    check_grads(lambda x, w: F.conv2d(x, w, stride=2, padding=1), (dev(x), dev(w)), order=1)
    with pytest.raises(ValueError, match="groups"):
        F.conv2d(x, rng.normal(size=(3, 1, 3, 3)), groups=2)


def test_pooling():
    x = rng.normal(size=(2, 3, 5, 6))
    got = F.max_pool2d(dev(x), 2)
    ref = x[:, :, :4, :6].reshape(2, 3, 2, 2, 3, 2).max(axis=(3, 5))
    assert_allclose(got, ref)
    got = F.avg_pool2d(dev(x), 2)
    assert_allclose(got, x[:, :, :4, :6].reshape(2, 3, 2, 2, 3, 2).mean(axis=(3, 5)))
    # count_include_pad=False: corner window (padding 1, kernel 2, stride 2) averages 1 value
    out = F.avg_pool2d(dev(x), 2, padding=1, count_include_pad=False)
    assert_allclose(host(out)[:, :, 0, 0], x[:, :, 0, 0])
    out = F.max_pool2d(dev(x), 3, stride=1, padding=1)
    assert host(out).shape == (2, 3, 5, 6)
    assert_allclose(host(out)[:, :, 0, 0], x[:, :, :2, :2].max(axis=(2, 3)))
    check_grads(lambda x: F.avg_pool2d(x, 2, padding=1), (dev(x),), order=1)


def test_layer_norm_and_batch_norm():
    x = rng.normal(size=(4, 3, 5))
    w, b = rng.normal(size=5), rng.normal(size=5)
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    assert_allclose(F.layer_norm(dev(x), 5, dev(w), dev(b)),
                    (x - mu) / np.sqrt(var + 1e-5) * w + b, rtol=1e-10, atol=1e-10)
    check_grads(lambda x, w: F.layer_norm(x, (3, 5), w), (dev(x), dev(rng.normal(size=(3, 5)))),
                order=2)
    mu, var = x.mean((0, 2)), x.var((0, 2))
    ref = (x - mu[None, :, None]) / np.sqrt(var[None, :, None] + 1e-5)
    assert_allclose(F.batch_norm(dev(x), None, None, training=True), ref, atol=1e-10)
    rm, rv = rng.normal(size=3), rng.uniform(1, 2, size=3)
    ref = (x - rm[None, :, None]) / np.sqrt(rv[None, :, None] + 1e-5)
    assert_allclose(F.batch_norm(dev(x), dev(rm), dev(rv)), ref, atol=1e-10)


def _ce_ref(x, t, w=None, ignore=-100, red="mean", ls=0.0):
    logp = _log_softmax(x, 1)
    c = x.shape[1]
    w = np.ones(c) if w is None else w
    valid = t != ignore
    ts = np.where(valid, t, 0)
    nll = -np.take_along_axis(logp, ts[:, None], 1)[:, 0] * w[ts] * valid
    smooth = -(logp * w).sum(1) * valid
    if red == "mean":
        den = (w[ts] * valid).sum()
        nll, smooth = nll.sum() / den, smooth.sum() / den
    elif red == "sum":
        nll, smooth = nll.sum(), smooth.sum()
    return (1 - ls) * nll + ls / c * smooth


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("red", ["mean", "sum", "none"])
@pytest.mark.parametrize("ls", [0.0, 0.2])
def test_cross_entropy_indices(weighted, red, ls):
    x = rng.normal(size=(6, 4))
    t = np.array([0, 3, 1, -100, 2, 3])
    w = rng.uniform(0.5, 2, size=4) if weighted else None
    got = F.cross_entropy(dev(x), dev(t), None if w is None else dev(w), reduction=red,
                          label_smoothing=ls)
    assert_allclose(got, _ce_ref(x, t, w, red=red, ls=ls), rtol=1e-10, atol=1e-12)
    check_grads(lambda x: F.cross_entropy(x, dev(t), None if w is None else dev(w),
                                          reduction=red, label_smoothing=ls), (dev(x),), order=2)


def test_cross_entropy_probs_spatial_and_errors():
    x = rng.normal(size=(3, 4))
    p = np.exp(_log_softmax(rng.normal(size=(3, 4)), 1))
    ref = -(_log_softmax(x, 1) * (p * 0.9 + 0.1 / 4)).sum(1).mean()
    assert_allclose(F.cross_entropy(dev(x), dev(p), label_smoothing=0.1), ref)
    xs = rng.normal(size=(2, 3, 4, 5))
    ts = rng.integers(0, 3, size=(2, 4, 5))
    flat = F.cross_entropy(dev(np.moveaxis(xs, 1, -1).reshape(-1, 3)), dev(ts.reshape(-1)))
    assert_allclose(F.cross_entropy(dev(xs), dev(ts)), flat, rtol=1e-12)
    assert F.cross_entropy(x.astype(np.float32), np.array([0, 1, 2])).dtype == np.float32
    with pytest.raises(IndexError, match="out of bounds"):
        F.cross_entropy(x, np.array([0, 1, 4]))
    with pytest.raises(ValueError, match="reduction"):
        F.cross_entropy(x, np.array([0, 1, 2]), reduction="avg")


def test_regression_and_binary_losses():
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(3, 4)) * 2
    d = a - b
    assert_allclose(F.mse_loss(dev(a), dev(b)), (d**2).mean())
    assert_allclose(F.l1_loss(dev(a), dev(b), reduction="sum"), np.abs(d).sum())
    hub = np.where(np.abs(d) < 1.5, 0.5 * d**2, 1.5 * (np.abs(d) - 0.75))
    assert_allclose(F.huber_loss(dev(a), dev(b), "none", delta=1.5), hub, atol=1e-12)
    sl1 = np.where(np.abs(d) < 0.5, 0.5 * d**2 / 0.5, np.abs(d) - 0.25)
    assert_allclose(F.smooth_l1_loss(dev(a), dev(b), reduction="none", beta=0.5), sl1, atol=1e-12)
    p, t = 1 / (1 + np.exp(-a)), rng.uniform(size=(3, 4))
    bce = -(t * np.log(p) + (1 - t) * np.log(1 - p))
    assert_allclose(F.binary_cross_entropy(dev(p), dev(t)), bce.mean(), rtol=1e-10)
    assert_allclose(F.binary_cross_entropy_with_logits(dev(a), dev(t)), bce.mean(), rtol=1e-10)
    pw = rng.uniform(1, 3, size=4)
    ref = -(pw * t * np.log(p) + (1 - t) * np.log(1 - p)).mean()
    assert_allclose(F.binary_cross_entropy_with_logits(dev(a), dev(t), pos_weight=dev(pw)), ref,
                    rtol=1e-10)
    q = np.exp(_log_softmax(b, 1))
    kl = (q * (np.log(q) - _log_softmax(a, 1))).sum() / 3
    assert_allclose(F.kl_div(dev(_log_softmax(a, 1)), dev(q), reduction="batchmean"), kl,
                    rtol=1e-10)
    check_grads(lambda a: F.binary_cross_entropy_with_logits(a, dev(t)), (dev(a),), order=2)
    check_grads(lambda a: F.huber_loss(a, dev(b)), (dev(a),), order=1)
    # PyTorch broadcasts the regression losses' target, with a warning.
    with pytest.warns(UserWarning, match="different to the input size"):
        assert_allclose(F.mse_loss(dev(a), dev(b[0])), ((a - b[0]) ** 2).mean())
    with pytest.raises(ValueError, match="do not broadcast"):
        F.mse_loss(a, b[:, :2])


def test_nll_loss_ignore_and_embedding_one_hot():
    logp = _log_softmax(rng.normal(size=(4, 3)), 1)
    t = np.array([2, -1, 0, 1])
    ref = -(logp[0, 2] + logp[2, 0] + logp[3, 1]) / 3
    assert_allclose(F.nll_loss(dev(logp), dev(t), ignore_index=-1), ref)
    w = rng.normal(size=(5, 2))
    idx = np.array([[0, 4], [2, 0]])
    assert_allclose(F.embedding(dev(idx), dev(w)), w[idx])
    g = funcgrad.grad(lambda w: F.embedding(dev(idx), w, padding_idx=0).sum())(dev(w))
    assert_allclose(g, np.array([[0, 0], [0, 0], [1, 1], [0, 0], [1, 1]], float))
    assert_allclose(F.one_hot(dev(np.array([1, 0, 3]))), np.eye(4, dtype=np.int64)[[1, 0, 3]])
    with pytest.raises(funcgrad.ConcretizationError, match="num_classes"):
        funcgrad.jit(F.one_hot)(np.array([1, 2]))
    assert_allclose(funcgrad.jit(lambda i: F.one_hot(i, 3))(dev(np.array([2]))),
                    np.array([[0, 0, 1]]))


def test_loss_dtypes_follow_the_input():
    # PyTorch's promotion, not NumPy's: int64 labels and float64 class weights (NumPy's
    # defaults) keep a float32 loss float32.
    x = rng.normal(size=(3, 4)).astype(np.float32)
    p = rng.uniform(0.1, 0.9, size=(3, 4)).astype(np.float32)
    w, labels, ints = rng.uniform(0.5, 2, size=4), np.array([0, 1, 3]), np.ones((3, 4), int)
    for loss in (F.cross_entropy(dev(x), dev(labels), dev(w), label_smoothing=0.1),
                 F.nll_loss(dev(x), dev(labels), dev(w)),
                 F.binary_cross_entropy(dev(p), dev(ints), dev(w)),
                 F.binary_cross_entropy_with_logits(dev(x), dev(ints), pos_weight=dev(w)),
                 F.multi_margin_loss(dev(x), dev(labels), weight=dev(w)),
                 F.multilabel_soft_margin_loss(dev(x), dev(ints), dev(w)),
                 F.mse_loss(dev(x), dev(ints)), F.huber_loss(dev(x), dev(ints)),
                 F.poisson_nll_loss(dev(x), dev(ints)), F.soft_margin_loss(dev(x), dev(ints))):
        assert loss.dtype == np.float32


def test_loss_and_lookup_errors_like_pytorch():
    x = rng.normal(size=(3, 5))
    with pytest.raises(ValueError, match="all 5 classes"):
        F.cross_entropy(x, np.array([0, 1, 4]), weight=np.ones(3))  # would clamp class 4
    with pytest.raises(ValueError, match="all 5 classes"):
        F.nll_loss(x, np.array([0, 1, 4]), weight=np.ones(6))
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.binary_cross_entropy(np.array([0.5, 1.5]), np.array([1.0, 1.0]))
    with pytest.raises(ValueError, match="num_classes=3"):
        F.one_hot(np.array([0, 3]), 3)
    with pytest.raises(ValueError, match="num_classes=3"):
        F.one_hot(np.array([0, -1]), 3)
    with pytest.raises(IndexError, match="out of range"):
        F.embedding(np.array([-1]), np.ones((4, 2)))
    with pytest.raises(ValueError, match="padding_idx"):
        F.embedding(np.array([1]), np.ones((4, 2)), padding_idx=4)
    with pytest.raises(ValueError, match="num_classes="):
        F.one_hot(np.zeros(0, np.int64))
    assert F.one_hot(np.zeros(0, np.int64), 3).shape == (0, 3)
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        F.batch_norm(np.ones((1, 3)), None, None, training=True)
    assert F.batch_norm(np.ones((1, 3, 2)), None, None, training=True).shape == (1, 3, 2)


def test_dropout_key_semantics():
    x = np.ones((100, 100), np.float32)
    y1 = host(F.dropout(dev(x), 0.3, key=1))
    assert abs((y1 == 0).mean() - 0.3) < 0.03
    assert set(np.unique(y1)) == {0.0, np.float32(1 / 0.7)}
    assert np.array_equal(y1, host(F.dropout(dev(x), 0.3, key=1)))
    assert not np.array_equal(y1, host(F.dropout(dev(x), 0.3, key=2)))
    jitted = funcgrad.jit(lambda x, k: F.dropout(x, 0.3, key=k))
    k1, k2 = F.split_key(np.array([5, 6], np.uint32))
    assert not np.array_equal(host(jitted(dev(x), dev(k1))), host(jitted(dev(x), dev(k2))))
    assert np.array_equal(host(jitted(dev(x), dev(k1))), host(F.dropout(dev(x), 0.3, key=k1)))
    assert F.dropout(x, 0.3, training=False) is x
    # Without a key, eagerly: PyTorch's draw from the global generator (nn.manual_seed's)
    init.manual_seed(3)
    a, b = host(F.dropout(dev(x), 0.3)), host(F.dropout(dev(x), 0.3))
    init.manual_seed(3)
    assert np.array_equal(a, host(F.dropout(dev(x), 0.3))) and not np.array_equal(a, b)
    # ... but not while jit traces: the draw would be frozen into the compiled program
    with pytest.raises(TypeError, match="under jit/vmap the random draw needs key="):
        funcgrad.jit(lambda v: F.dropout(v, 0.3))(dev(x))


def test_channel_and_alpha_dropout():
    x = np.ones((4, 64, 5), np.float32)
    y = host(F.dropout1d(dev(x), 0.5, key=3))
    per_channel = np.unique(y, axis=-1)  # each (n, c) row is all 0 or all 2
    assert per_channel.shape[-1] == 1 and set(np.unique(y)) == {0.0, 2.0}
    assert 0.3 < (y[..., 0] == 0).mean() < 0.7
    y = host(F.dropout2d(dev(np.ones((2, 32, 3, 3))), 0.5, key=4))
    assert (y.reshape(2, 32, -1).min(-1) == y.reshape(2, 32, -1).max(-1)).all()
    unbatched = host(F.dropout3d(dev(np.ones((32, 2, 2, 2))), 0.5, key=5))  # (C, D, H, W)
    assert (unbatched.reshape(32, -1).min(-1) == unbatched.reshape(32, -1).max(-1)).all()
    with pytest.warns(UserWarning, match=r"\(N, C, L\)"):
        F.dropout2d(np.ones((2, 3, 4)), 0.5, key=0)
    with pytest.raises(ValueError, match="2D or 3D"):
        F.dropout1d(np.ones((2, 3, 4, 5)), key=0)
    with pytest.raises(TypeError, match="key="):
        funcgrad.jit(lambda v: F.dropout2d(v))(dev(np.ones((2, 3, 4, 4))))
    assert F.dropout2d(dev(np.ones((2, 3, 4, 4)))).shape == (2, 3, 4, 4)  # global generator
    assert F.alpha_dropout(x, 0.5) is x  # PyTorch's default training=False
    # Dropped units take -alpha' a (1 - p), kept ones a x + alpha' a p (PyTorch's formula).
    p, ap = 0.3, 1.7580993408473766
    a = 1 / math.sqrt((ap**2 * p + 1) * (1 - p))
    z = rng.normal(size=(200, 30))
    y = host(F.alpha_dropout(dev(z), p, True, key=1))
    kept = np.isclose(y, a * z + ap * a * p)
    assert np.allclose(y[~kept], -ap * a * (1 - p))
    assert 0.25 < 1 - kept.mean() < 0.35
    y = host(F.feature_alpha_dropout(dev(z[:, :, None] * np.ones(4)), p, True, key=1))
    assert (np.ptp(y - a * z[:, :, None], axis=-1) < 1e-12).all()  # one draw per channel
    g = host(funcgrad.grad(lambda v: F.alpha_dropout(v, p, True, key=1).sum())(dev(z)))
    assert_allclose(g, np.where(kept, a, 0.0))


def test_rrelu_and_gumbel_softmax():
    x = -np.ones(20000)
    y = host(F.rrelu(dev(x), 0.1, 0.3, training=True, key=0))
    assert y.min() >= -0.3 and y.max() <= -0.1 and abs(y.mean() + 0.2) < 0.01
    g = host(funcgrad.grad(lambda v: F.rrelu(v, 0.1, 0.3, training=True, key=0).sum())(dev(x)))
    assert_allclose(g, -y)  # the drawn slope is the derivative
    assert_allclose(F.rrelu(dev(np.array([-2.0, 3.0])), 0.1, 0.3), np.array([-0.4, 3.0]))
    with pytest.raises(TypeError, match="key="):
        funcgrad.vmap(lambda v: F.rrelu(v, training=True))(dev(x[:4, None]))
    assert host(F.rrelu(dev(x), training=True)).max() < 0  # drawn from the global generator
    logits = rng.normal(size=(4, 5))
    soft = host(F.gumbel_softmax(dev(logits), tau=0.5, key=7))
    assert_allclose(soft.sum(-1), np.ones(4))
    hard = host(F.gumbel_softmax(dev(logits), tau=0.5, hard=True, key=7))
    assert_allclose(hard, np.eye(5)[soft.argmax(-1)])
    w = dev(rng.normal(size=(4, 5)))
    # Straight-through: the hard sample's gradient is the soft sample's.
    gs = funcgrad.grad(lambda v: (F.gumbel_softmax(v, 0.5, key=7) * w).sum())(dev(logits))
    gh = funcgrad.grad(lambda v: (F.gumbel_softmax(v, 0.5, True, key=7) * w).sum())(dev(logits))
    assert_allclose(gh, gs)
    d0 = host(F.gumbel_softmax(dev(logits), hard=True, dim=0, key=1))
    assert_allclose(d0.sum(0), np.ones(5))
    # The noise is Gumbel(0, 1): argmax frequencies follow softmax(logits).
    many = host(F.gumbel_softmax(dev(np.tile([[0.0, 1.0, 2.0]], (20000, 1))), hard=True, key=3))
    e = np.exp([0.0, 1.0, 2.0])
    assert_allclose(many.mean(0), e / e.sum(), atol=0.02)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_elu_family_gradient_is_exact_for_negative_inputs(dtype):
    # d/dx expm1(x) = exp(x); as expm1(x) + 1 it cancels (float32: 18% off at x = -5, and
    # 0 below -17), where PyTorch's gradient is exact.
    x = np.array([-1.0, -3.0, -5.0, -9.5, -16.0, -20.0, -37.0], dtype)
    want = np.exp(x.astype(np.float64))
    for fn, scale in [(F.elu, 1.0), (F.selu, 1.6732632423543772 * 1.0507009873554805)]:
        g = host(funcgrad.grad(lambda v, fn=fn: fn(v).sum())(dev(x)))
        np.testing.assert_allclose(g, scale * want, rtol=2e-6 if dtype == np.float32 else 1e-14)


@pytest.mark.skipif(DEVICE != "cpu", reason="about host NumPy results")
def test_unbatched_losses_without_reduction_are_0d_arrays():
    # PyTorch returns a 0-d tensor; NumPy's operators on 0-d arrays would give scalars.
    x = rng.normal(size=4).astype(np.float32)
    for loss in (F.cross_entropy(x, np.array(1), reduction="none"),
                 F.nll_loss(x, np.array(1), reduction="none"),
                 F.multi_margin_loss(x, np.array(1), reduction="none"),
                 F.cosine_embedding_loss(x, x, np.array(1.0), reduction="none")):
        assert type(loss) is np.ndarray and loss.shape == () and loss.dtype == np.float32


# PyTorch 2.13's F.<name>_(x.clone(), *args) on x below: in place, returning x
_X_INPLACE = np.array([-2.0, -0.5, 0.0, 0.5, 2.0])
_INPLACE_CASES = [
    ("relu_", (), [0.0, 0.0, 0.0, 0.5, 2.0]),
    ("elu_", (0.5,), [-0.43233235838169365, -0.1967346701436833, 0.0, 0.5, 2.0]),
    ("celu_", (2.0,), [-1.2642411176571153, -0.44239843385719024, 0.0, 0.5, 2.0]),
    ("selu_", (), [-1.5201664685956948, -0.6917581878028713, 0.0, 0.5253504936777402,
                   2.101401974710961]),
    ("leaky_relu_", (0.2,), [-0.4, -0.1, 0.0, 0.5, 2.0]),
    ("hardtanh_", (-1.5, 1.0), [-1.5, -0.5, 0.0, 0.5, 1.0]),
    ("threshold_", (0.2, -7.0), [-7.0, -7.0, -7.0, 0.5, 2.0]),
    ("rrelu_", (0.1, 0.3), [-0.4, -0.1, 0.0, 0.5, 2.0]),
]


@pytest.mark.parametrize("name, args, want", _INPLACE_CASES)
def test_inplace_activations_write_into_their_input(name, args, want):
    x = dev(_X_INPLACE.copy())
    got = getattr(F, name)(x, *args)
    assert got is x
    assert_allclose(host(x), np.array(want), rtol=1e-14)
    # the out-of-place function agrees and leaves its input alone
    y = dev(_X_INPLACE.copy())
    assert_allclose(getattr(F, name[:-1])(y, *args), np.array(want), rtol=1e-14)
    assert_allclose(host(y), _X_INPLACE)


@pytest.mark.parametrize("name, args, want", _INPLACE_CASES)
def test_inplace_activations_refuse_traced_and_read_only_input(name, args, want):
    f = getattr(F, name)
    with pytest.raises(TypeError, match=f"traced.*F.{name[:-1]}\\("):
        funcgrad.jit(lambda v: f(v, *args))(dev(_X_INPLACE.copy()))
    with pytest.raises(TypeError, match=f"F.{name[:-1]}\\("):
        funcgrad.grad(lambda v: f(v, *args).sum())(dev(_X_INPLACE.copy()))
    ro = _X_INPLACE.copy()
    ro.flags.writeable = False
    with pytest.raises(ValueError, match=f"read-only.*F.{name[:-1]}\\("):
        f(ro, *args)
    with pytest.raises(TypeError, match="needs an array to write into"):
        f([-1.0, 2.0], *args)


def test_nllloss2d_is_nllloss_with_pytorchs_deprecation_warning():
    import funcgrad_nn as nn

    with pytest.warns(FutureWarning, match="NLLLoss2d` has been deprecated"):
        loss = nn.NLLLoss2d(ignore_index=1, reduction="sum")
    assert isinstance(loss, nn.NLLLoss)
    logp = np.log(np.array([[[[0.25, 0.5]], [[0.75, 0.5]]]]))  # (N, C, H, W) = (1, 2, 1, 2)
    target = np.array([[[0, 1]]])
    assert_allclose(loss(dev(logp), dev(target)), -np.log(0.25), rtol=1e-12)


def test_out_of_range_targets_raise_under_jit_too():
    # Eagerly PyTorch's IndexError; traced (jit, vmap) the same check runs with the program,
    # instead of a gather reading a clamped class and giving a plausible loss.
    import funcgrad
    from funcgrad.errors import JaxRuntimeError

    x = dev(np.zeros((2, 3)))
    with pytest.raises(IndexError, match="target 7 is out of bounds for 3 classes"):
        F.cross_entropy(x, dev(np.array([0, 7])))
    ce = funcgrad.jit(F.cross_entropy)
    assert abs(float(ce(x, dev(np.array([0, 2])))) - np.log(3)) < 1e-12
    for bad in ([0, 7], [-1, 1]):
        with pytest.raises(JaxRuntimeError, match=f"target {bad[0] if bad[0] else 7} is out"):
            ce(x, dev(np.array(bad)))
    with pytest.raises(JaxRuntimeError, match="target 3 is out of bounds"):
        funcgrad.jit(funcgrad.grad(F.cross_entropy))(x, dev(np.array([0, 3])))
    # ignore_index is not out of range
    assert float(funcgrad.jit(lambda a, t: F.nll_loss(a, t, ignore_index=5))(
        x, dev(np.array([5, 1])))) == 0.0


def test_embedding_and_one_hot_indices_checked_under_jit():
    import funcgrad
    from funcgrad.errors import JaxRuntimeError

    w = dev(np.arange(6.0).reshape(3, 2))
    emb = funcgrad.jit(lambda i: F.embedding(i, w))
    assert host(emb(dev(np.array([2, 0])))).tolist() == [[4.0, 5.0], [0.0, 1.0]]
    with pytest.raises(JaxRuntimeError, match=r"index out of range for 3 embeddings.*max 5"):
        emb(dev(np.array([0, 5])))
    oh = funcgrad.jit(lambda i: F.one_hot(i, 3))
    with pytest.raises(JaxRuntimeError, match=r"num_classes=3\), got min -1"):
        oh(dev(np.array([-1, 2])))
    with pytest.raises(JaxRuntimeError, match="max 3"):
        funcgrad.vmap(lambda i: F.one_hot(i, 3))(dev(np.array([[0, 1], [2, 3]])))


@pytest.mark.parametrize("reduction", ["sum", "batchmean"])
def test_kl_div_target_gradient_at_zero_target_is_pytorchs_nan(reduction):
    # torch 2.13, kl_div(input, target, reduction="sum") with target [[0, 0.3, 0.7]]:
    # input.grad = -target, target.grad = [nan, 0.29602720, 2.64332506] (log t + 1 - input;
    # xlogy's t / t is 0 / 0 at t == 0, as JAX's xlogy gradient). funcgrad_nn gave 1 there.
    inp = dev(np.array([[-1.0, -0.5, -2.0]]))
    tgt = dev(np.array([[0.0, 0.3, 0.7]]))
    loss, (gi, gt) = funcgrad.value_and_grad(
        lambda a, b: F.kl_div(a, b, reduction=reduction), argnums=(0, 1))(inp, tgt)
    assert_allclose(loss, 0.9391356979451063, rtol=1e-14)
    assert_allclose(gi, np.array([[-0.0, -0.3, -0.7]]), rtol=1e-14)
    assert_allclose(gt, np.array([[np.nan, 0.2960271956740639, 2.6433250560612676]]), rtol=1e-12)
    jitted = funcgrad.jit(funcgrad.grad(lambda a, b: F.kl_div(a, b, reduction=reduction),
                                        argnums=1))
    assert_allclose(jitted(inp, tgt), gt, rtol=1e-14)
    # where the target is positive the derivatives are the ordinary ones, to second order
    check_grads(lambda a, b: F.kl_div(a, b, reduction=reduction), (inp, tgt + 0.1), order=2,
                modes=("fwd", "rev"))


@expected_fp_warnings  # the float32 norm overflows on purpose
def test_cosine_similarity_with_an_overflowing_norm_is_pytorchs_zero():
    # torch 2.13 (float32): cosine_similarity([[3e19, 1e19]], [[1, 2]]) is [0.] with gradient
    # [[0, 0]] (the norm overflows to inf, x / inf = 0); funcgrad_nn gave NaN (inf - inf in the
    # clamp). Small norms are still clamped at eps with the unclamped norm's gradient.
    a = dev(np.array([[3e19, 1e19]], np.float32))
    b = dev(np.array([[1.0, 2.0]], np.float32))
    assert_allclose(F.cosine_similarity(a, b), np.zeros(1, np.float32))
    g = funcgrad.grad(lambda a: funcgrad.numpy.sum(F.cosine_similarity(a, b)))(a)
    assert_allclose(g, np.zeros((1, 2), np.float32))
    tiny = dev(np.array([[1e-10, 0.0]]))
    assert_allclose(F.cosine_similarity(tiny, dev(np.array([[1.0, 0.0]]))), np.array([0.01]),
                    rtol=1e-12)
    check_grads(lambda x: F.cosine_similarity(x, dev(np.array([[1.0, 2.0]]))),
                (dev(np.array([[0.3, -0.4]])),), order=2, modes=("fwd", "rev"))


def test_kl_div_mean_warns_as_pytorch_and_batchmean_does_not():
    # torch 2.13 warns on reduction='mean' (nn.KLDivLoss()'s default): it is not the KL
    # divergence per sample, 'batchmean' is.
    a = dev(np.log(np.array([[0.25, 0.75]])))
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(a, dev(np.array([[0.5, 0.5]])))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.kl_div(a, dev(np.array([[0.5, 0.5]])), reduction="batchmean")


def test_sdpa_attn_mask_that_does_not_broadcast_is_named():
    # torch 2.13: "The size of tensor a (4) must match the size of tensor b (3) ..."
    q = dev(np.ones((1, 4, 3)))
    with pytest.raises(ValueError, match=r"attn_mask of shape \(3, 3\) does not broadcast to "
                                         r"the attention scores' shape \(1, 4, 4\)"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=dev(np.ones((3, 3), bool)))


def test_loss_input_errors_are_pytorchs_runtime_errors():
    # torch 2.13 raises RuntimeError for each of these (a class weight of the wrong length,
    # a float or bool class-index target, a BCE probability outside [0, 1]); ours are also
    # the ValueError/TypeError they always were.
    x = dev(np.zeros((2, 3), np.float32))
    for call, also in [
            (lambda: F.cross_entropy(x, dev(np.array([0, 1])), weight=dev(np.ones(2, np.float32))),
             ValueError),
            (lambda: F.multi_margin_loss(x, dev(np.array([0, 1])),
                                         weight=dev(np.ones(2, np.float32))), ValueError),
            (lambda: F.nll_loss(x, dev(np.array([0.0, 1.0], np.float32))), TypeError),
            (lambda: F.nll_loss(x, dev(np.array([False, True]))), TypeError),
            (lambda: F.multi_margin_loss(x, dev(np.array([0.0, 1.0], np.float32))), TypeError),
            (lambda: F.binary_cross_entropy(dev(np.array([1.5], np.float32)),
                                            dev(np.array([1.0], np.float32))), ValueError)]:
        with pytest.raises(RuntimeError) as info:
            call()
        assert isinstance(info.value, also)


def test_attention_input_errors_are_pytorchs_runtime_errors():
    # torch 2.13's scaled_dot_product_attention raises RuntimeError for these (mismatched
    # head dims, mixed dtypes, an integer mask, a mask with is_causal=True).
    q = dev(np.zeros((1, 2, 3, 4), np.float32))
    for call in [lambda: F.scaled_dot_product_attention(q, q[..., :3], q),
                 lambda: F.scaled_dot_product_attention(q, q, q.astype(np.float64)),
                 lambda: F.scaled_dot_product_attention(
                     q, q, q, attn_mask=dev(np.zeros((3, 3), np.int32))),
                 lambda: F.scaled_dot_product_attention(
                     q, q, q, attn_mask=dev(np.zeros((3, 3), bool)), is_causal=True)]:
        with pytest.raises(RuntimeError):
            call()
    with pytest.raises(ValueError, match="between 0 and 1"):  # before asking for a key
        F.scaled_dot_product_attention(q, q, q, dropout_p=1.5)


def test_functional_argument_errors_are_pytorchs_runtime_errors():
    # Each raises RuntimeError in torch 2.13 (and stays a ValueError/TypeError here).
    x = dev(np.ones((1, 2, 4, 4), np.float32))
    calls = [lambda: F.pad(x, (1, 1, 1)), lambda: F.pad(x, (1,) * 10),
             lambda: F.one_hot(dev(np.array([-1, 0]))), lambda: F.one_hot(dev(np.array([3])), 2),
             lambda: F.one_hot(dev(np.array([1.0]))),
             lambda: F.embedding(dev(np.array([1.0])), dev(np.ones((3, 2), np.float32))),
             lambda: F.linear(x, dev(np.ones((3, 5), np.float32))),
             lambda: F.pixel_shuffle(dev(np.ones((1, 3, 2, 2), np.float32)), 2),
             lambda: F.glu(dev(np.ones(3, np.float32))),
             lambda: F.batch_norm(x, None, None, training=False), lambda: F.group_norm(x, 3),
             lambda: F.layer_norm(x, (5,)),
             lambda: F.mse_loss(dev(np.ones(3, np.float32)), dev(np.ones(4, np.float32))),
             lambda: F.cosine_similarity(dev(np.ones(3, np.float32)),
                                         dev(np.ones(4, np.float32)), dim=0)]
    for call in calls:
        with pytest.raises(RuntimeError):
            call()
    # torch: ValueError "recompute_scale_factor is not meaningful with an explicit size."
    with pytest.raises(ValueError, match="recompute_scale_factor"):
        F.interpolate(x, size=3, recompute_scale_factor=True)


def test_bias_of_another_dtype_is_refused_as_pytorch():
    # torch 2.13: "self and mat2 must have the same dtype" (linear), "Input type (float) and
    # bias type (double) should be the same" (conv), "All tensors must have the same dtype"
    # (bilinear); a float64 NumPy bias would silently make the float32 output float64.
    x = dev(np.ones((1, 3, 5), np.float32))
    b64 = dev(np.ones(4))
    for call in [lambda: F.linear(x[0].T, dev(np.ones((4, 3), np.float32)), b64),
                 lambda: F.conv1d(x, dev(np.ones((4, 3, 1), np.float32)), b64),
                 lambda: F.conv_transpose1d(x, dev(np.ones((3, 4, 1), np.float32)), b64),
                 lambda: F.bilinear(x[0].T, x[0].T, dev(np.ones((4, 3, 3), np.float32)), b64)]:
        with pytest.raises(RuntimeError, match="bias dtype float64 does not match"):
            call()
    out = F.linear(x[0].T, dev(np.ones((4, 3), np.float32)), dev(np.ones(4, np.float32)))
    assert out.dtype == np.float32


# -- errors of PyTorch's types (recorded from torch 2.13) -----------------------------------


@pytest.mark.parametrize("call", [
    lambda x: F.softmax(x, dim=3), lambda x: F.log_softmax(x, dim=-4),
    lambda x: F.softmin(x, dim=3), lambda x: F.glu(x, dim=3),
    lambda x: F.normalize(x, dim=-4), lambda x: F.cosine_similarity(x, x, dim=3),
    lambda x: F.gumbel_softmax(x, dim=3, key=0),
])
def test_dim_out_of_range_is_an_index_error_naming_dim(call):
    # torch: IndexError "Dimension out of range (expected to be in range of [-3, 2], ...)"
    with pytest.raises(IndexError, match=r"Dimension out of range for dim .*\[-3, 2\]"):
        call(dev(np.ones((2, 4, 6), np.float32)))


def test_zero_d_inputs_take_dim_0_and_minus_1():
    s = dev(np.array(3.0, np.float32))
    assert float(host(F.softmax(s, dim=0))) == 1.0
    assert float(host(F.log_softmax(s, dim=-1))) == 0.0
    assert float(host(F.normalize(s, dim=0))) == 1.0  # torch: 1.0
    with pytest.raises(IndexError, match=r"\[-1, 0\], but got 1"):
        F.softmax(s, dim=1)


@pytest.mark.parametrize("x,w,b,msg", [
    ((4, 3), (3,), (1,), "must be a matrix"),   # torch: "mat2 must be a matrix, got 1-D"
    ((4, 3), (3,), (), "must be a matrix"),
    ((4, 3), (2, 2, 3), None, "must be a matrix"),  # torch: "t() expects ... <= 2 dims"
    ((4, 3), (), None, "at least 1D"),
    ((), (2, 3), None, "at least 1D"),
    ((4, 3), (2, 3), (3,), r"bias of shape \(3,\) does not broadcast to the output shape "
                           r"\(4, 2\)"),
])
def test_linear_rejects_what_torch_rejects_as_runtime_errors(x, w, b, msg):
    arr = lambda s: None if s is None else dev(np.ones(s, np.float32))  # noqa: E731
    with pytest.raises(RuntimeError, match=msg):
        F.linear(arr(x), arr(w), arr(b))


def test_linear_takes_a_vector_weight_without_bias_as_torch():
    x = dev(np.ones((4, 3), np.float32))
    assert F.linear(x, dev(np.ones(3, np.float32))).shape == (4,)  # torch: (4,)
    v = dev(np.ones(3, np.float32))
    assert float(host(F.linear(v, v, dev(np.array(1.0, np.float32))))) == 4.0  # torch: 4.0


def _f32(*shape):
    return dev(np.ones(shape, np.float32))


@pytest.mark.parametrize("call", [
    # torch 2.13 raises RuntimeError for each (as the message fragment says); here the
    # BadInputError, also a ValueError, with the function's name.
    lambda: F.bilinear(_f32(2, 3), _f32(2, 4), _f32(5, 3, 3)),
    lambda: F.one_hot(dev(np.zeros(0, np.int64))),
    lambda: F.dropout1d(_f32(1, 2, 3, 4), 0.5, training=False),
    lambda: F.group_norm(_f32(4), 2),
    lambda: F.prelu(_f32(2, 3, 4), _f32(2)),
    lambda: F.huber_loss(_f32(3), _f32(3), delta=0.0),
    lambda: F.smooth_l1_loss(_f32(3), _f32(3), beta=-1.0),
    lambda: F.cross_entropy(_f32(3, 4), dev(np.array([0, 1, 2])), label_smoothing=1.5),
    lambda: F.margin_ranking_loss(_f32(3), _f32(3, 1), _f32(3)),
    lambda: F.cosine_embedding_loss(_f32(3, 4), _f32(3, 5), _f32(3)),
    lambda: F.triplet_margin_loss(_f32(3, 4), _f32(3, 4), _f32(4)),
    lambda: F.multi_margin_loss(_f32(3, 4, 2), dev(np.array([0, 1, 2]))),
    lambda: F.multi_margin_loss(_f32(3, 4), dev(np.array([0, 1]))),
    lambda: F.multilabel_margin_loss(_f32(3, 4), dev(np.array([[0, 1, 2, 3]]))),
    lambda: F.ctc_loss(_f32(6, 3, 5), dev(np.ones((2, 3), np.int64)), [6, 6, 6], [3, 3, 3]),
    lambda: F.ctc_loss(_f32(6, 3, 5), dev(np.ones((3, 3), np.int64)), [6, 6, 6], [3, 3, 3],
                       blank=5),
    lambda: F.ctc_loss(_f32(6, 3, 5), dev(np.ones((3, 3), np.int64)), [7, 6, 6], [3, 3, 3]),
    lambda: F.conv1d(_f32(1, 2, 5), _f32(3, 2, 2), padding="foo"),
    lambda: F.conv1d(_f32(1, 2, 5), _f32(3, 2, 2), stride=(1, 2)),
    lambda: F.adaptive_avg_pool2d(_f32(1, 2, 4, 4), (2, 2, 2)),
    lambda: F.avg_pool2d(_f32(1, 1, 4, 4), 2, divisor_override=0),
    lambda: F.pixel_unshuffle(_f32(1, 1, 3, 2), 2),
    lambda: F.channel_shuffle(_f32(1, 3, 2, 2), 2),
    lambda: F.grid_sample(_f32(1, 1, 2, 2, 2), _f32(1, 2, 2, 2, 3), mode="bicubic"),
    lambda: F.grid_sample(_f32(1, 1, 2, 2), _f32(1, 2, 2, 3)),
    lambda: F.affine_grid(_f32(2, 2, 3), (1, 1, 2, 2)),
    lambda: F.rms_norm(_f32(3, 4), (3,)),
    lambda: F.pdist(_f32(2, 3, 4)),
    lambda: F.kl_div(_f32(3), _f32(4), reduction="sum"),
    lambda: F.soft_margin_loss(_f32(3), _f32(4)),
    lambda: F.hinge_embedding_loss(_f32(3), _f32(4)),
    lambda: F.poisson_nll_loss(_f32(3), _f32(4)),
    lambda: F.multilabel_soft_margin_loss(_f32(2, 3), _f32(3, 2)),
    lambda: F.gaussian_nll_loss(_f32(3), _f32(4), _f32(3)),
    lambda: F.binary_cross_entropy(_f32(3) * 0.5, _f32(3) * 2),  # a target above 1
])
def test_bad_input_is_torchs_runtime_error_and_a_value_error(call):
    with pytest.raises(RuntimeError) as info:
        call()
    assert isinstance(info.value, ValueError)
    name = str(info.value).split(":")[0]
    assert name.isidentifier() or name.startswith("F."), str(info.value)


def test_embedding_bag_max_mode_refuses_scale_grad_by_freq_as_torch():
    # torch 2.13: ValueError "max mode does not support scaling the gradient by the frequency"
    with pytest.raises(ValueError, match="max mode does not support scaling"):
        F.embedding_bag(dev(np.array([[1, 2]])), _f32(3, 2), mode="max", scale_grad_by_freq=True)


def test_embedding_bag_scale_grad_by_freq_divides_by_each_index_count():
    # The documented rule (CUDA's; torch 2.13's CPU kernel divides some rows by another
    # index's count, pytorch/pytorch#190063): every row's gradient over its count.
    w = dev(np.arange(20, dtype=np.float32).reshape(10, 2))
    idx, offs = dev(np.array([1, 2, 4, 5, 4, 3, 2, 9])), dev(np.array([0, 4]))
    g = funcgrad.grad(lambda w: F.embedding_bag(idx, w, offs, mode="sum",
                                                scale_grad_by_freq=True).sum())(w)
    assert host(g)[:, 0].tolist() == [0, 1, 1, 1, 1, 1, 0, 0, 0, 1]


def test_normalize_writes_into_out_as_torch():
    # torch 2.13: F.normalize(x, out=buf) returns buf holding the result
    buf = dev(np.zeros((1, 2), np.float32))
    got = F.normalize(dev(np.array([[3.0, 4.0]], np.float32)), out=buf)
    assert got is buf
    assert_allclose(buf, np.array([[0.6, 0.8]], np.float32))


def test_rms_norm_default_eps_of_a_half_input_is_float32s_as_torch():
    # torch 2.13: F.rms_norm(x.half(), (2,)) with x = [[1e-3, -2e-3]] gives [[0.6177, -1.2354]]
    # (eps = float32's 1.19e-7; float16's 9.8e-4 would give [[0.0316, -0.0632]])
    x = dev(np.array([[1e-3, -2e-3]], np.float16))
    out = F.rms_norm(x, (2,))
    assert out.dtype == np.float16
    assert_allclose(out, np.array([[0.6177, -1.2354]], np.float16), rtol=2e-3, atol=2e-3)


def test_half_norms_accumulate_in_float32_as_torch():
    # torch 2.13 on x = [[300, 400]] (float16, whose squares overflow it): normalize ->
    # [[0.6, 0.8]], pairwise_distance(x, 0) -> [500.], cosine_similarity(x, x) -> [1.]
    x = dev(np.array([[300.0, 400.0]], np.float16))
    z = dev(np.zeros((1, 2), np.float16))
    for got, want in ((F.normalize(x, dim=-1), [[0.6, 0.8]]), (F.pairwise_distance(x, z), [500.0]),
                      (F.cosine_similarity(x, x, dim=-1), [1.0])):
        assert got.dtype == np.float16
        assert_allclose(got, np.array(want, np.float16), rtol=1e-3, atol=1e-3)


def test_half_normalisations_compute_in_float32_as_torch():
    # torch 2.13 on x = [[[300, -300, 100, 0], [1000, -1000, 500, 20]]] in float16 (whose
    # squares overflow it; these used to give zeros)
    x = dev(np.array([[[300.0, -300.0, 100.0, 0.0], [1000.0, -1000.0, 500.0, 20.0]]],
                     np.float16))
    rows = [[1.2705, -1.501, 0.3464, -0.1155], [1.1777, -1.5293, 0.5005, -0.1489]]
    want = {
        "layer_norm": lambda: F.layer_norm(x, (4,)),
        "instance_norm": lambda: F.instance_norm(x),
        "batch_norm": lambda: F.batch_norm(x, None, None, training=True),
    }
    for name, call in want.items():
        got = call()
        assert got.dtype == np.float16, name
        assert_allclose(got, np.array([rows], np.float16), rtol=2e-3, atol=2e-3)
    got = F.group_norm(x, 1)
    assert_allclose(got, np.array([[[0.407, -0.6904, 0.04114, -0.1417],
                                    [1.687, -1.971, 0.7725, -0.1052]]], np.float16),
                    rtol=2e-3, atol=2e-3)


def test_batch_norm_training_with_running_stats_warns_they_are_not_updated():
    # PyTorch updates running_mean/running_var in place here; a port relying on it (a custom
    # conditional BatchNorm) would silently evaluate with frozen statistics
    x = dev(np.arange(12.0).reshape(4, 3))
    rm, rv = dev(np.zeros(3)), dev(np.ones(3))
    with pytest.warns(UserWarning, match="does not update running_mean/running_var"):
        out = F.batch_norm(x, rm, rv, training=True, momentum=0.2)
    assert_allclose(out, F.batch_norm(x, None, None, training=True))
    assert_allclose(rm, dev(np.zeros(3)))
