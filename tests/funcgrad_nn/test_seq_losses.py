"""Margin, count and CTC losses beyond the PyTorch fixtures: an independent CTC reference,
derivatives by finite differences, jit/vmap, legacy reductions and bad input."""

import itertools

import numpy as np
import pytest

import funcgrad
import funcgrad_nn as nn
from funcgrad.test_util import check_grads
from funcgrad_nn import functional as F

rng = np.random.default_rng(0)


def _ctc_brute_force(lp, target):
    """-log sum over every path of length T that collapses to ``target`` (blank 0)."""
    t_len, c = lp.shape
    total = 0.0
    for path in itertools.product(range(c), repeat=t_len):
        collapsed = [k for i, k in enumerate(path) if k != 0 and (i == 0 or path[i - 1] != k)]
        if collapsed == list(target):
            total += np.exp(sum(lp[t, k] for t, k in enumerate(path)))
    return -np.log(total)


@pytest.mark.parametrize("target", [[1], [1, 1], [2, 1], [1, 2, 1], []])
def test_ctc_equals_the_sum_over_all_alignments(target):
    t_len, c = 5, 3
    lp = F.log_softmax(rng.normal(size=(t_len, c)), dim=-1)
    want = _ctc_brute_force(lp, target)
    got = F.ctc_loss(lp[:, None], np.array([target + [0] * (3 - len(target))]), [t_len],
                     [len(target)], reduction="sum")
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_ctc_gradient_is_the_true_derivative_and_composes_with_log_softmax():
    lp = rng.normal(size=(6, 2, 4))
    tg, il, tl = np.array([[1, 2], [3, 3]]), np.array([6, 5]), np.array([2, 2])
    check_grads(lambda x: F.ctc_loss(x, tg, il, tl), (lp,), order=2, modes=("fwd", "rev"))


def test_ctc_under_jit_and_vmap_with_traced_lengths():
    x = F.log_softmax(rng.normal(size=(6, 3, 4)), -1)
    tg = np.array([1, 2, 3, 3, 1])
    il, tl = np.array([6, 4, 5]), np.array([2, 2, 1])
    want = F.ctc_loss(x, tg, il, tl, reduction="none")
    got = funcgrad.jit(lambda x, il, tl: F.ctc_loss(x, tg, il, tl, reduction="none"))(x, il, tl)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    per = funcgrad.vmap(lambda x: F.ctc_loss(x, np.array([1, 2]), 6, 2), in_axes=1)(x)
    np.testing.assert_allclose(per[0], want[0] / 2, rtol=1e-12)


def test_ctc_infeasible_alignment():
    lp = F.log_softmax(rng.normal(size=(2, 1, 3)), -1)
    tg = np.array([[1, 1]])  # needs at least 3 steps (a blank between the repeats)
    assert np.isinf(F.ctc_loss(lp, tg, [2], [2], reduction="sum"))
    zero = nn.CTCLoss(zero_infinity=True)
    assert float(zero(lp, tg, [2], [2])) == 0.0
    g = funcgrad.grad(lambda x: zero(x, tg, [2], [2]))(lp)
    assert np.all(g == 0)


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_ctc_infeasible_gradient_is_nan_like_pytorch(reduction):
    # PyTorch 2.13: without zero_infinity an impossible sample's gradient is NaN at the
    # frames it uses (t < input_length) and 0 after them; other samples are unaffected.
    lp = F.log_softmax(rng.normal(size=(4, 2, 3)), -1)
    tg, il, tl = np.array([[1, 1], [1, 2]]), np.array([2, 4]), np.array([2, 2])
    g = np.asarray(funcgrad.grad(lambda x: F.ctc_loss(x, tg, il, tl, reduction=reduction))(lp))
    assert np.isnan(g[:2, 0]).all() and (g[2:, 0] == 0).all()
    assert np.isfinite(g[:, 1]).all() and np.abs(g[:, 1]).sum() > 0
    jitted = funcgrad.jit(funcgrad.grad(lambda x: F.ctc_loss(x, tg, il, tl, reduction=reduction)))
    np.testing.assert_array_equal(np.isnan(np.asarray(jitted(lp))), np.isnan(g))


SMOOTH_LOSSES = [
    (F.soft_margin_loss, lambda: (rng.normal(size=(3, 4)), np.sign(rng.normal(size=(3, 4))))),
    (F.multilabel_soft_margin_loss, lambda: (rng.normal(size=(3, 4)),
                                             (rng.normal(size=(3, 4)) > 0) * 1.0)),
    (F.poisson_nll_loss, lambda: (rng.normal(size=(3, 4)), rng.poisson(2.0, (3, 4)) * 1.0)),
    (lambda a, t, v: F.gaussian_nll_loss(a, t, v, full=True),
     lambda: (rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), rng.uniform(0.5, 2, (3, 4)))),
    (lambda a, b: F.cosine_embedding_loss(a, b, np.array([1.0, -1.0, 1.0]), margin=-1.0),
     lambda: (rng.normal(size=(3, 4)), rng.normal(size=(3, 4)))),
    (lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=10.0),
     lambda: (rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), rng.normal(size=(3, 4)))),
    (lambda a: F.multi_margin_loss(a, np.array([0, 2, 1]), p=2, margin=10.0),
     lambda: (rng.normal(size=(3, 4)),)),
]


@pytest.mark.parametrize("fn, args", SMOOTH_LOSSES)
def test_smooth_losses_match_finite_differences(fn, args):
    a = args()
    n_float = 1 if fn is F.soft_margin_loss or fn is F.multilabel_soft_margin_loss or \
        fn is F.poisson_nll_loss else len(a)
    diff, rest = a[:n_float], a[n_float:]
    check_grads(lambda *d: fn(*d, *rest), diff, order=2, modes=("fwd", "rev"))


def test_hinge_losses_have_pytorch_subgradient_at_the_kink():
    # These two are clamp_min(z, 0) in PyTorch, whose gradient at z == 0 is 1 (torch 2.13:
    # x.grad is [-1.] for both calls); the multi-margin kernels' strict z > 0 gives 0 there.
    g = funcgrad.grad(lambda x: F.margin_ranking_loss(x, np.zeros(1), np.ones(1)))(
        np.zeros(1))
    assert g.tolist() == [-1.0]
    g = funcgrad.grad(lambda x: F.hinge_embedding_loss(x, -np.ones(1)))(np.ones(1))
    assert g.tolist() == [-1.0]
    g = funcgrad.grad(lambda x: F.multi_margin_loss(x, np.array([0])))(np.array([[1.0, 0.0]]))
    assert g.tolist() == [[0.0, 0.0]]


def test_multilabel_margin_against_a_loop():
    x = rng.normal(size=(3, 5))
    t = np.array([[3, 0, -1, 1, 2], [4, -1, 0, 0, 0], [0, 1, 2, 3, 4]])
    want = []
    for xi, ti in zip(x, t):
        js = []
        for v in ti:
            if v == -1:
                break
            js.append(v)
        s = sum(max(0.0, 1 - (xi[j] - xi[i])) for j in js for i in range(5) if i not in js)
        want.append(s / 5)
    np.testing.assert_allclose(F.multilabel_margin_loss(x, t, reduction="none"), want,
                               rtol=1e-12)


def test_legacy_size_average_and_reduce():
    x, y = rng.normal(size=4), np.ones(4)
    total = F.soft_margin_loss(x, y, reduction="sum")
    # torch 2.13 warns: "size_average and reduce args will be deprecated, please use
    # reduction='sum' instead." (functional and module alike)
    with pytest.warns(UserWarning, match="please use reduction='sum' instead"):
        np.testing.assert_allclose(F.soft_margin_loss(x, y, size_average=False), total)
    with pytest.warns(UserWarning, match="reduction='none'"):
        assert F.soft_margin_loss(x, y, reduce=False).shape == (4,)
    with pytest.warns(UserWarning, match="reduction='sum'"):
        np.testing.assert_allclose(nn.SoftMarginLoss(size_average=False)(x, y), total)
    with pytest.warns(UserWarning, match="reduction='none'"):
        assert nn.MarginRankingLoss(reduce=False).reduction == "none"


def test_loss_modules_keep_weights_as_buffers():
    w = np.ones(3)
    assert list(nn.MultiMarginLoss(weight=w).state_dict()) == ["weight"]
    assert list(nn.MultiLabelSoftMarginLoss(weight=w).state_dict()) == ["weight"]


def test_gaussian_nll_accepts_float_and_shared_variances():
    a, t = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    full = F.gaussian_nll_loss(a, t, np.full((3, 4), 0.5))
    np.testing.assert_allclose(F.gaussian_nll_loss(a, t, 0.5), full)
    np.testing.assert_allclose(F.gaussian_nll_loss(a, t, np.full(3, 0.5)), full)
    np.testing.assert_allclose(F.gaussian_nll_loss(a, t, np.full((1, 4), 0.5)), full)


@pytest.mark.parametrize("call, err, words", [
    (lambda: F.multi_margin_loss(np.zeros((2, 3)), np.array([0, 1]), p=3), ValueError,
     "only p == 1 and p == 2"),
    (lambda: F.multi_margin_loss(np.zeros((2, 3)), np.array([0, 3])), IndexError,
     "out of bounds"),
    (lambda: F.gaussian_nll_loss(np.zeros(3), np.zeros(3), -np.ones(3)), ValueError,
     "negative"),
    (lambda: F.gaussian_nll_loss(np.zeros((3, 4)), np.zeros((3, 4)), np.ones((2, 4))),
     ValueError, "incorrect size"),
    (lambda: F.ctc_loss(np.zeros((4, 1, 3)), np.array([[1]]), [5], [1]), ValueError,
     "at most 4"),
    (lambda: F.ctc_loss(np.zeros((4, 1, 3)), np.array([[1]]), [4], [1], blank=3), ValueError,
     "blank"),
    (lambda: F.ctc_loss(np.zeros((4, 2, 3)), np.array([1, 2]), [4, 4], [1, 2]), ValueError,
     "sum to 3"),
    (lambda: F.triplet_margin_loss(np.zeros((2, 3)), np.zeros(3), np.zeros((2, 3))),
     ValueError, "same number of dimensions"),
    (lambda: F.margin_ranking_loss(np.zeros(2), np.zeros(2), np.zeros(())), ValueError,
     "same dimension"),
    (lambda: nn.CTCLoss(reduction="avg"), ValueError, "reduction"),
])
def test_bad_input(call, err, words):
    with pytest.raises(err, match=words):
        call()
