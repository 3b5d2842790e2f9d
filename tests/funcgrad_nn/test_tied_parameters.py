"""Tied (shared) parameters under the module-aware transforms, Embedding(max_norm=) and
MultiheadAttention(add_bias_kv=, add_zero_attn=), against hand-derived NumPy references of
PyTorch's formulas."""

import math

import numpy as np
import pytest

import funcgrad
import funcgrad_nn as nn
from funcgrad.test_util import check_grads
from funcgrad_nn import functional as F
from tests.helpers import DEVICE, assert_allclose, dev, host

rng = np.random.default_rng(0)


# -- tied parameters ------------------------------------------------------------------------


class TiedLM(nn.Module):
    """Token embedding whose table is also the output projection (weight tying)."""

    def __init__(self, vocab, dim):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.norm = nn.LayerNorm(dim, elementwise_affine=False)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, tokens):
        return self.head(self.norm(self.embed(tokens)))


def _hand_grad(E, tokens, targets):
    """d/dE of mean cross-entropy(layer_norm(E[t]) @ E.T, y): both uses of E, summed."""
    h = E[tokens]
    mu = h.mean(-1, keepdims=True)
    c = h - mu
    sd = np.sqrt((c * c).mean(-1, keepdims=True) + 1e-5)
    z = c / sd
    logits = z @ E.T
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    n = len(tokens)
    dlogits = p.copy()
    dlogits[np.arange(n), targets] -= 1
    dlogits /= n
    loss = -np.log(p[np.arange(n), targets]).mean()
    g_head = dlogits.T @ z                      # E used as the output projection
    dz = dlogits @ E
    dh = (dz - dz.mean(-1, keepdims=True) - z * (dz * z).mean(-1, keepdims=True)) / sd
    g_embed = np.zeros_like(E)
    np.add.at(g_embed, tokens, dh)              # E used as the lookup table
    return loss, g_head + g_embed


def _tied_model():
    nn.manual_seed(1)
    nn.set_default_dtype(np.float64)
    try:
        return TiedLM(7, 4).to(DEVICE)
    finally:
        nn.set_default_dtype(np.float32)


def test_tied_names_state_dict_and_to():
    m = _tied_model()
    assert m.head.weight is m.embed.weight
    assert [n for n, _ in m.named_parameters()] == ["embed.weight"]
    assert [n for n, _ in m.named_parameters(remove_duplicate=False)] == [
        "embed.weight", "head.weight"]
    assert len(list(m.parameters())) == 1
    sd = m.state_dict()
    assert list(sd) == ["embed.weight", "head.weight"]
    m.to(dtype=np.float32)
    assert m.head.weight is m.embed.weight and m.embed.weight.dtype == np.float32
    sd["head.weight"] = sd["embed.weight"] * 0 + 2.0
    m.load_state_dict(sd)
    assert m.head.weight is m.embed.weight
    # A shared submodule is counted once too.
    lin = nn.Linear(3, 3)
    seq = nn.Sequential(lin, nn.Tanh(), lin)
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias"]


def test_tied_gradient_summed_and_aligned_with_parameters():
    m = _tied_model()
    tokens = np.array([0, 3, 3, 6, 2])
    targets = np.array([1, 3, 0, 6, 5])
    want_loss, want_g = _hand_grad(host(m.embed.weight), tokens, targets)

    def loss_fn(mm, t, y):
        return F.cross_entropy(mm(t), y)

    loss, g = nn.value_and_grad(loss_fn)(m, dev(tokens), dev(targets))
    assert_allclose(loss, want_loss, rtol=1e-10, atol=1e-12)
    assert g.head.weight is None  # the later name of a tied array
    leaves = nn.tree_leaves(g)
    assert len(leaves) == len(list(m.parameters())) == 1
    assert_allclose(leaves[0], want_g, rtol=1e-9, atol=1e-12)

    traces = []

    def counted(mm, t, y):
        traces.append(1)
        return loss_fn(mm, t, y)

    step = nn.jit(nn.value_and_grad(counted))
    for _ in range(2):
        jl, jg = step(m, dev(tokens), dev(targets))
    assert len(traces) == 1
    assert_allclose(jl, want_loss, rtol=1e-10, atol=1e-12)
    assert len(nn.tree_leaves(jg)) == 1
    assert_allclose(nn.tree_leaves(jg)[0], want_g, rtol=1e-9, atol=1e-12)

    # vmap over examples sees the tie too (per-example gradients, one per parameter).
    per = nn.vmap(nn.grad(lambda mm, t, y: F.cross_entropy(mm(t[None]), y[None])))(
        m, dev(tokens), dev(targets))
    assert len(nn.tree_leaves(per)) == 1
    assert_allclose(host(nn.tree_leaves(per)[0]).mean(0), want_g, rtol=1e-9, atol=1e-12)

    # One Adam step updates the shared array once, seen under both names.
    p0 = host(m.embed.weight).copy()
    opt = nn.optim.Adam(m.parameters(), lr=1e-2)
    opt.step(g)
    b1, b2, eps, lr = 0.9, 0.999, 1e-8, 1e-2
    mom, var = (1 - b1) * want_g, (1 - b2) * want_g ** 2
    want_p = p0 - lr / (1 - b1) * mom / (np.sqrt(var) / math.sqrt(1 - b2) + eps)
    assert_allclose(m.embed.weight, want_p, rtol=1e-9, atol=1e-12)
    assert m.head.weight is m.embed.weight


def test_shared_submodule_gradient_matches_plain_function():
    nn.manual_seed(2)
    lin = nn.Linear(3, 3).to(DEVICE)
    seq = nn.Sequential(lin, nn.Tanh(), lin)
    x = dev(rng.normal(size=(4, 3)).astype(np.float32))
    g = nn.grad(lambda mm, a: (mm(a) ** 2).sum())(seq, x)

    def plain(w, b):
        y = funcgrad.numpy.tanh(x @ w.T + b) @ w.T + b
        return (y ** 2).sum()

    gw, gb = funcgrad.grad(plain, argnums=(0, 1))(lin.weight, lin.bias)
    leaves = nn.tree_leaves(g)
    assert len(leaves) == 2
    assert_allclose(leaves[0], gw, rtol=1e-5, atol=1e-6)
    assert_allclose(leaves[1], gb, rtol=1e-5, atol=1e-6)


# -- Embedding(max_norm=) ---------------------------------------------------------------------


def _ref_renorm(w, idx, max_norm, p):
    rows = w[idx]
    if p == math.inf:
        norm = np.abs(rows).max(-1, keepdims=True)
    else:
        norm = (np.abs(rows) ** p).sum(-1, keepdims=True) ** (1 / p)
    return np.where(norm > max_norm, rows * (max_norm / (norm + 1e-7)), rows)


@pytest.mark.parametrize("p", [2.0, 1.0, math.inf, 3.0])
def test_embedding_max_norm_functional_is_pure(p):
    w = rng.normal(size=(6, 4)) * 2
    idx = np.array([[0, 5, 5], [2, 1, 0]])
    want = _ref_renorm(w, idx, 1.5, p)
    wd = dev(w)
    out = F.embedding(dev(idx), wd, max_norm=1.5, norm_type=p)
    assert_allclose(out, want, rtol=1e-12, atol=1e-12)
    assert_allclose(wd, w)  # the functional form does not write back


def test_embedding_module_max_norm_writes_back_eagerly_and_under_module_transforms():
    nn.manual_seed(3)
    e = nn.Embedding(6, 3, max_norm=1.0).to(DEVICE)
    e.weight[...] = dev(rng.normal(size=(6, 3)).astype(np.float32) * 3)
    w0 = host(e.weight).copy()
    idx = np.array([4, 1, 4])
    out = e(dev(idx))
    want = _ref_renorm(w0, idx, 1.0, 2.0)
    assert_allclose(out, want, rtol=1e-6, atol=1e-6)
    w1 = host(e.weight)
    assert_allclose(w1[[1, 4]], want[[1, 0]], rtol=1e-6, atol=1e-6)
    untouched = [0, 2, 3, 5]
    assert_allclose(w1[untouched], w0[untouched])
    assert "max_norm=1.0" in repr(e)

    # Under a plain jit with traced indices the rows come back renormalised and the weight
    # is not written (there is no concrete row to write).
    e2 = nn.Embedding(6, 3, max_norm=1.0).to(DEVICE)
    e2.weight[...] = dev(w0)
    got = funcgrad.jit(lambda i: e2(i))(dev(idx))
    assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert_allclose(e2.weight, w0)
    # The module-aware transforms write it back, as PyTorch's in-place renorm in a
    # training step (the optimizer then updates the renormalised rows).
    w_held = e2.weight  # the array an optimizer holds: written in place
    got = nn.jit(lambda m, i: m(i))(e2, dev(idx))
    assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert e2.weight is w_held
    assert_allclose(e2.weight, w1, rtol=1e-6, atol=1e-6)
    e3 = nn.Embedding(6, 3, max_norm=1.0).to(DEVICE)
    e3.weight[...] = dev(w0)
    nn.jit(nn.value_and_grad(lambda m, i: m(i).sum()))(e3, dev(idx))  # nested: handed out
    assert_allclose(e3.weight, w1, rtol=1e-6, atol=1e-6)
    e2.weight[...] = dev(w0)

    # PyTorch's gradient: the scale is applied in place under no_grad, so d out/d weight is
    # the plain lookup's (a scatter-add of the output gradient).
    g = nn.grad(lambda m, i: (m(i) * dev(np.arange(9, dtype=np.float32).reshape(3, 3))).sum())(
        e2, dev(idx))
    want_g = np.zeros((6, 3), np.float32)
    np.add.at(want_g, idx, np.arange(9, dtype=np.float32).reshape(3, 3))
    assert_allclose(g.weight, want_g)
    assert_allclose(e2.weight, w1, rtol=1e-6, atol=1e-6)


def test_embedding_max_norm_with_padding_and_errors():
    w = np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    out = F.embedding(dev(np.array([0, 1, 2])), dev(w), padding_idx=2, max_norm=1.0)
    assert_allclose(out, np.array([[0.6, 0.8], [0.3, 0.4], [0.6, 0.8]]), rtol=1e-6, atol=1e-7)
    g = funcgrad.grad(lambda ww: F.embedding(dev(np.array([0, 2])), ww, padding_idx=2,
                                             max_norm=1.0).sum())(dev(w))
    assert_allclose(g, np.array([[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]]))
    with pytest.raises(TypeError, match="max_norm"):
        F.embedding(dev(np.array([0])), dev(w), max_norm="1")
    e = nn.Embedding.from_pretrained(w.copy(), max_norm=1.0, norm_type=1.0)
    assert e.max_norm == 1.0 and e.norm_type == 1.0


# -- MultiheadAttention(add_bias_kv=, add_zero_attn=) -----------------------------------------


def ref_mha(m, q, k, v, kpm=None, mask=None):
    """PyTorch's multi_head_attention_forward (bias_k/bias_v, add_zero_attn), batch-first."""
    e, h = m.embed_dim, m.num_heads
    hd = e // h
    w, b = host(m.in_proj_weight), host(m.in_proj_bias)
    qp, kp, vp = (t @ w[i * e:(i + 1) * e].T + b[i * e:(i + 1) * e]
                  for i, t in enumerate((q, k, v)))
    n, lq = q.shape[:2]

    def pad(x):
        return None if x is None else np.concatenate(
            [x, np.zeros(x.shape[:-1] + (1,), x.dtype)], -1)

    if m.bias_k is not None:
        kp = np.concatenate([kp, np.broadcast_to(host(m.bias_k), (n, 1, e))], 1)
        vp = np.concatenate([vp, np.broadcast_to(host(m.bias_v), (n, 1, e))], 1)
        kpm, mask = pad(kpm), pad(mask)
    if m.add_zero_attn:
        kp = np.concatenate([kp, np.zeros((n, 1, e))], 1)
        vp = np.concatenate([vp, np.zeros((n, 1, e))], 1)
        kpm, mask = pad(kpm), pad(mask)
    s = kp.shape[1]
    qh, kh, vh = (t.reshape(n, -1, h, hd).transpose(0, 2, 1, 3) for t in (qp, kp, vp))
    bias = np.zeros((n, h, lq, s))
    if mask is not None:
        fm = np.where(mask, -np.inf, 0.0) if mask.dtype == bool else mask
        bias = bias + (fm.reshape(n, h, lq, s) if fm.ndim == 3 else fm)
    if kpm is not None:
        bias = bias + np.where(kpm, -np.inf, 0.0)[:, None, None, :]
    a = (qh / math.sqrt(hd)) @ kh.transpose(0, 1, 3, 2) + bias
    a = np.exp(a - a.max(-1, keepdims=True))
    a = a / a.sum(-1, keepdims=True)
    o = (a @ vh).transpose(0, 2, 1, 3).reshape(n, lq, e)
    return o @ host(m.out_proj.weight).T + host(m.out_proj.bias), a.mean(1)


@pytest.mark.parametrize("bias_kv,zero_attn", [(True, False), (False, True), (True, True)])
def test_mha_bias_kv_and_zero_attn(bias_kv, zero_attn):
    nn.manual_seed(4)
    nn.set_default_dtype(np.float64)
    try:
        m = nn.MultiheadAttention(8, 2, add_bias_kv=bias_kv, add_zero_attn=zero_attn,
                                  batch_first=True)
    finally:
        nn.set_default_dtype(np.float32)
    names = [n for n, _ in m.named_parameters()]
    if bias_kv:
        assert names == ["in_proj_weight", "in_proj_bias", "bias_k", "bias_v",
                         "out_proj.weight", "out_proj.bias"]
        assert m.bias_k.shape == (1, 1, 8) and np.any(m.bias_k)
    else:
        assert m.bias_k is None and "bias_k" not in names
    m.in_proj_bias[:] = rng.normal(size=24)
    m.to(DEVICE)
    q, k, v = (rng.normal(size=(3, ln, 8)) for ln in (4, 5, 5))
    kpm = np.zeros((3, 5), bool)
    kpm[1, 2:] = True
    mask = rng.normal(size=(4, 5))
    want_o, want_w = ref_mha(m, q, k, v, kpm, mask)
    o, w = m(dev(q), dev(k), dev(v), key_padding_mask=dev(kpm), attn_mask=dev(mask))
    assert w.shape == (3, 4, 5 + bias_kv + zero_attn)
    assert_allclose(o, want_o, rtol=1e-10, atol=1e-10)
    assert_allclose(w, want_w, rtol=1e-10, atol=1e-10)
    bmask = rng.uniform(size=(6, 4, 5)) > 0.6
    want_o, _ = ref_mha(m, q, k, v, mask=bmask)
    assert_allclose(m(dev(q), dev(k), dev(v), attn_mask=dev(bmask))[0], want_o,
                    rtol=1e-10, atol=1e-10)
    o1, _ = m(dev(q[1]), dev(k[1]), dev(v[1]), key_padding_mask=dev(kpm[1]))
    assert_allclose(o1, ref_mha(m, q[1:2], k[1:2], v[1:2], kpm[1:2])[0][0],
                    rtol=1e-10, atol=1e-10)
    jo = nn.jit(lambda mm, a, b: mm(a, b, b)[0])(m, dev(q), dev(k))
    assert_allclose(jo, m(dev(q), dev(k), dev(k))[0], rtol=1e-12, atol=1e-12)
    if bias_kv:
        g = nn.grad(lambda mm, a: (mm(a, a, a)[0] ** 2).sum())(m, dev(q))
        assert np.any(host(g.bias_k)) and np.any(host(g.bias_v))
    check_grads(lambda a, b: m(a, b, b, key_padding_mask=dev(kpm))[0], (dev(q), dev(k)),
                order=1, modes=("rev",))


def test_embedding_scale_grad_by_freq_divides_by_index_counts():
    w = np.arange(12.0).reshape(4, 3)
    idx = np.array([[0, 1, 1], [3, 1, 0]])
    c = np.arange(18.0).reshape(2, 3, 3)

    def loss(ww, scale):
        return (F.embedding(dev(idx), ww, scale_grad_by_freq=scale) * dev(c)).sum()

    plain = host(funcgrad.grad(loss)(dev(w), False))
    scaled = funcgrad.grad(loss)(dev(w), True)
    counts = np.maximum(np.bincount(idx.ravel(), minlength=4), 1)[:, None]
    assert_allclose(scaled, plain / counts)
    assert_allclose(F.embedding(dev(idx), dev(w), scale_grad_by_freq=True), w[idx])
    e = nn.Embedding(4, 3, scale_grad_by_freq=True, sparse=True).to(DEVICE)
    assert e(dev(idx)).shape == (2, 3, 3)



def test_embedding_bag_module_max_norm_writes_back_eagerly():
    # PyTorch's EmbeddingBag renormalises the looked-up rows of its weight in place, as
    # Embedding does (torch.nn.functional.embedding_bag calls embedding_renorm_).
    w0 = rng.normal(size=(6, 3)) * 3
    bag = nn.EmbeddingBag.from_pretrained(dev(w0.copy()), freeze=False, max_norm=1.0,
                                          mode="sum")
    idx, offsets = np.array([4, 1, 4, 0]), np.array([0, 3])
    out = bag(dev(idx), dev(offsets))
    rows = _ref_renorm(w0, idx, 1.0, 2.0)
    assert_allclose(out, np.stack([rows[:3].sum(0), rows[3]]), rtol=1e-12, atol=1e-12)
    w1 = host(bag.weight)
    assert_allclose(w1[[4, 1, 0]], rows[[0, 1, 3]], rtol=1e-12, atol=1e-12)
    assert_allclose(w1[[2, 3, 5]], w0[[2, 3, 5]])


# "mean": bag 0 has 3 entries, bag 1 two, so index 1 gets (2/3 + 1/2) / 3
@pytest.mark.parametrize("mode, want", [("sum", [0.0, 1.0, 1.0, 1.0]),
                                        ("mean", [0.0, (2 / 3 + 1 / 2) / 3, 1 / 3, 1 / 2])])
def test_embedding_bag_scale_grad_by_freq_divides_by_each_index_count(mode, want):
    # Bags [1, 2, 1] and [3, 1]: index 1 occurs 3 times, 2 and 3 once. The gradient row of an
    # index is (its summed bag weights) / (its count): PyTorch's CUDA kernel and the fix of
    # pytorch/pytorch#190063 (2.13's CPU kernel divides rows 2 and 3 by 3, reading the
    # count of the wrong index, [0, 1, 1/3, 1/3] for "sum"), which this does not copy.
    idx, offsets = np.array([1, 2, 1, 3, 1]), np.array([0, 3])
    w = dev(np.ones((4, 2)))

    def total(w):
        return F.embedding_bag(dev(idx), w, dev(offsets), mode=mode,
                               scale_grad_by_freq=True).sum()

    g = funcgrad.grad(total)(w)
    assert_allclose(g, np.repeat(np.array(want)[:, None], 2, axis=1), rtol=1e-12)


def test_embedding_max_norm_writes_of_two_lookups_in_one_step_both_land():
    # torch 2.13: two lookups of one Embedding(max_norm=1.0) in one forward renormalise the
    # rows of both index sets in place
    e = nn.Embedding(10, 3, max_norm=1.0).to(DEVICE)
    w0 = np.full((10, 3), 2.0, np.float32)
    e.weight[...] = dev(w0)
    nn.jit(nn.grad(lambda m, a, b: (m(a) + m(b)).sum()))(e, dev(np.array([1, 2])),
                                                           dev(np.array([5, 7])))
    norms = np.linalg.norm(host(e.weight), axis=1)
    assert np.allclose(norms[[1, 2, 5, 7]], 1.0, atol=1e-5)
    assert np.allclose(norms[[0, 3, 4, 6, 8, 9]], np.linalg.norm(w0[0]))
