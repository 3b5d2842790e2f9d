"""Pooling (ceil_mode, indices, 1-D, adaptive), GroupNorm and attention against NumPy loops
that implement PyTorch's documented formulas / CPU kernels."""

import itertools
import math

import numpy as np
import pytest

import funcgrad
import funcgrad_nn as nn
from funcgrad.test_util import check_grads
from funcgrad_nn import functional as F
from tests.helpers import DEVICE, assert_allclose, dev, host

rng = np.random.default_rng(0)


# -- NumPy references -----------------------------------------------------------------------


def _out_size(n, k, s, p, d, ceil):
    num = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    o = num // s + 1
    if ceil and (o - 1) * s >= n + p:
        o -= 1
    return o


def ref_max_pool2d(x, k, s, p, d, ceil):
    """PyTorch's CPU max_pool2d loop: first max in scan order, NaN wins."""
    n, c, h, w = x.shape
    oh, ow = _out_size(h, k[0], s[0], p[0], d[0], ceil), _out_size(w, k[1], s[1], p[1], d[1],
                                                                     ceil)
    out = np.empty((n, c, oh, ow), x.dtype)
    idx = np.empty((n, c, oh, ow), np.int64)
    for b, ch, i, j in itertools.product(range(n), range(c), range(oh), range(ow)):
        hs, ws = i * s[0] - p[0], j * s[1] - p[1]
        he, we = min(hs + (k[0] - 1) * d[0] + 1, h), min(ws + (k[1] - 1) * d[1] + 1, w)
        while hs < 0:
            hs += d[0]
        while ws < 0:
            ws += d[1]
        best, bi = -np.inf, hs * w + ws
        for r in range(hs, he, d[0]):
            for q in range(ws, we, d[1]):
                v = x[b, ch, r, q]
                if v > best or np.isnan(v):
                    best, bi = v, r * w + q
        out[b, ch, i, j], idx[b, ch, i, j] = best, bi
    return out, idx


def ref_avg_pool2d(x, k, s, p, ceil, include_pad, override=None):
    """PyTorch's CPU avg_pool2d loop and divisor rule."""
    n, c, h, w = x.shape
    oh, ow = _out_size(h, k[0], s[0], p[0], 1, ceil), _out_size(w, k[1], s[1], p[1], 1, ceil)
    out = np.empty((n, c, oh, ow), x.dtype)
    for i, j in itertools.product(range(oh), range(ow)):
        hs, ws = i * s[0] - p[0], j * s[1] - p[1]
        he, we = min(hs + k[0], h + p[0]), min(ws + k[1], w + p[1])
        pool = (he - hs) * (we - ws)
        hs, ws, he, we = max(hs, 0), max(ws, 0), min(he, h), min(we, w)
        div = override if override else pool if include_pad else (he - hs) * (we - ws)
        out[:, :, i, j] = x[:, :, hs:he, ws:we].sum((2, 3)) / div
    return out


def _bounds(n, o):
    return [(math.floor(i * n / o), math.ceil((i + 1) * n / o)) for i in range(o)]


def ref_adaptive(x, out, op):
    h, w = x.shape[-2:]
    res = np.empty(x.shape[:-2] + tuple(out), x.dtype)
    idx = np.empty(res.shape, np.int64)
    for i, (h0, h1) in enumerate(_bounds(h, out[0])):
        for j, (w0, w1) in enumerate(_bounds(w, out[1])):
            win = x[..., h0:h1, w0:w1]
            if op == "avg":
                res[..., i, j] = win.mean((-2, -1))
            else:
                flat = win.reshape(win.shape[:-2] + (-1,))
                a = flat.argmax(-1)
                res[..., i, j] = np.take_along_axis(flat, a[..., None], -1)[..., 0]
                idx[..., i, j] = (h0 + a // (w1 - w0)) * w + w0 + a % (w1 - w0)
    return res, idx


def ref_sdpa(q, k, v, mask=None, causal=False, scale=None):
    lq, s = q.shape[-2], k.shape[-2]
    sc = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    bias = np.zeros((lq, s), q.dtype)
    if causal:
        bias = np.where(np.tril(np.ones((lq, s), bool)), 0, -np.inf)
    if mask is not None:
        bias = np.where(mask, bias, -np.inf) if mask.dtype == bool else bias + mask
    a = q @ np.swapaxes(k, -1, -2) * sc + bias
    a = np.exp(a - a.max(-1, keepdims=True))
    a = a / a.sum(-1, keepdims=True)
    return a @ v


# -- pooling ---------------------------------------------------------------------------------

POOL_CASES = [  # (shape, kernel, stride, padding, dilation)
    ((2, 2, 5, 5), (2, 2), (2, 2), (0, 0), (1, 1)),
    ((1, 2, 7, 6), (3, 2), (2, 2), (1, 1), (1, 1)),
    ((1, 1, 6, 7), (3, 3), (2, 3), (1, 0), (2, 1)),
    ((1, 1, 5, 8), (3, 2), (3, 3), (1, 1), (1, 1)),
    ((2, 1, 4, 4), (2, 2), (3, 3), (1, 0), (1, 1)),
]


@pytest.mark.parametrize("ceil", [False, True])
@pytest.mark.parametrize("case", range(len(POOL_CASES)))
def test_max_pool2d_ceil_and_indices_match_pytorch_loop(case, ceil):
    shape, k, s, p, d = POOL_CASES[case]
    x = rng.normal(size=shape).astype(np.float32)
    x[0, 0, 0, :2] = x[0, 0, 0, 0]  # a tie: the first maximum wins
    want, widx = ref_max_pool2d(x, k, s, p, d, ceil)
    out, idx = F.max_pool2d(dev(x), k, s, p, d, ceil_mode=ceil, return_indices=True)
    assert_allclose(out, want)
    assert_allclose(idx, widx)
    mod = nn.MaxPool2d(k, s, p, d, return_indices=True, ceil_mode=ceil)
    assert_allclose(mod(dev(x[0])), (want[0], widx[0]))


@pytest.mark.parametrize("include_pad", [True, False])
@pytest.mark.parametrize("ceil", [False, True])
@pytest.mark.parametrize("case", range(len(POOL_CASES)))
def test_avg_pool2d_ceil_divisor_matches_pytorch_loop(case, ceil, include_pad):
    shape, k, s, p, _ = POOL_CASES[case]
    x = rng.normal(size=shape)
    want = ref_avg_pool2d(x, k, s, p, ceil, include_pad)
    assert_allclose(nn.AvgPool2d(k, s, p, ceil, include_pad)(dev(x)), want)
    got = F.avg_pool2d(dev(x), k, s, p, ceil, include_pad, divisor_override=3)
    assert_allclose(got, ref_avg_pool2d(x, k, s, p, ceil, include_pad, 3))


def test_pool1d_matches_2d_reference():
    x = rng.normal(size=(2, 3, 9)).astype(np.float32)
    want, widx = ref_max_pool2d(x[:, :, None], (1, 3), (1, 2), (0, 1), (1, 2), True)
    out, idx = nn.MaxPool1d(3, 2, 1, 2, return_indices=True, ceil_mode=True)(dev(x))
    assert_allclose(out, want[:, :, 0])
    assert_allclose(idx, widx[:, :, 0])
    for ceil, inc in itertools.product([False, True], [False, True]):
        want = ref_avg_pool2d(x[:, :, None], (1, 4), (1, 3), (0, 2), ceil, inc)[:, :, 0]
        assert_allclose(nn.AvgPool1d(4, 3, 2, ceil, inc)(dev(x)), want)
        assert_allclose(F.avg_pool1d(dev(x[0]), 4, 3, 2, ceil, inc), want[0])


@pytest.mark.parametrize("size,out", [((5, 7), (3, 4)), ((6, 4), (3, 2)), ((4, 5), (4, 5)),
                                      ((3, 10), (2, 3))])
def test_adaptive_pools_match_pytorch_windows(size, out):
    x = rng.normal(size=(2, 3) + size).astype(np.float32)
    want, widx = ref_adaptive(x, out, "avg")
    assert_allclose(nn.AdaptiveAvgPool2d(out)(dev(x)), want)
    want, widx = ref_adaptive(x, out, "max")
    got, gidx = nn.AdaptiveMaxPool2d(out, return_indices=True)(dev(x))
    assert_allclose(got, want)
    assert_allclose(gidx, widx)
    assert_allclose(F.adaptive_max_pool2d(dev(x[0]), out), want[0])
    w1, i1 = ref_adaptive(x[:, :, :1], (1, out[1]), "max")
    g1, j1 = F.adaptive_max_pool1d(dev(x[:, :, 0]), out[1], return_indices=True)
    assert_allclose(g1, w1[:, :, 0])
    assert_allclose(j1, i1[:, :, 0])
    a1, _ = ref_adaptive(x[:, :, :1], (1, out[1]), "avg")
    assert_allclose(nn.AdaptiveAvgPool1d(out[1])(dev(x[:, :, 0])), a1[:, :, 0])


# Output sizes of 0 give empty results, as in torch 2.13 (shapes recorded from it); a negative
# size or an empty input plane is refused (torch: RuntimeError).
@pytest.mark.parametrize("cls,out,shape,want", [
    (nn.AdaptiveAvgPool2d, 0, (1, 2, 4, 5), (1, 2, 0, 0)),
    (nn.AdaptiveAvgPool2d, (0, 3), (1, 2, 4, 5), (1, 2, 0, 3)),
    (nn.AdaptiveAvgPool2d, (None, 0), (1, 2, 4, 5), (1, 2, 4, 0)),
    (nn.AdaptiveAvgPool2d, 0, (0, 2, 3, 5), (0, 2, 0, 0)),
    (nn.AdaptiveAvgPool2d, 0, (2, 3, 5), (2, 0, 0)),
    (nn.AdaptiveMaxPool2d, 0, (1, 2, 4, 5), (1, 2, 0, 0)),
    (nn.AdaptiveMaxPool2d, (2, 0), (1, 2, 4, 5), (1, 2, 2, 0)),
    (nn.AdaptiveMaxPool2d, (0, 2), (1, 2, 4, 5), (1, 2, 0, 2)),
    (nn.AdaptiveAvgPool1d, 0, (2, 3, 4), (2, 3, 0)),
    (nn.AdaptiveMaxPool1d, 0, (2, 3, 4), (2, 3, 0)),
    (nn.AdaptiveAvgPool3d, 0, (1, 2, 3, 4, 5), (1, 2, 0, 0, 0)),
    (nn.AdaptiveMaxPool3d, 0, (1, 2, 3, 4, 5), (1, 2, 0, 0, 0)),
    (nn.AdaptiveMaxPool3d, (2, 0, 3), (1, 2, 3, 4, 5), (1, 2, 2, 0, 3)),
    (nn.AdaptiveMaxPool3d, (2, 3, 0), (1, 2, 3, 4, 5), (1, 2, 2, 3, 0)),
])
def test_adaptive_pools_output_size_zero_is_empty(cls, out, shape, want):
    x = dev(np.ones(shape, np.float32))
    kws = [{}, {"return_indices": True}] if "Max" in cls.__name__ else [{}]
    for kw in kws:
        got = cls(out, **kw)(x)
        got = got if isinstance(got, tuple) else (got,)
        jitted = funcgrad.jit(lambda x, kw=kw: cls(out, **kw)(x))(x)
        jitted = jitted if isinstance(jitted, tuple) else (jitted,)
        for g in got + jitted:
            assert g.shape == want
        assert got[0].dtype == np.float32
        if kw:
            assert got[1].dtype == np.int64
    g = funcgrad.grad(lambda x: cls(out)(x).sum())(x)
    assert g.shape == shape and not host(g).any()


def test_adaptive_pools_refuse_negative_size_and_empty_plane():
    with pytest.raises(RuntimeError, match="non-negative"):
        nn.AdaptiveAvgPool2d(-1)(dev(np.ones((1, 2, 4, 5))))
    with pytest.raises(RuntimeError, match=r"spatial size \(0, 5\)"):
        nn.AdaptiveMaxPool2d(2)(dev(np.ones((1, 2, 0, 5))))


def test_adaptive_none_and_tie_indices():
    x = np.zeros((1, 1, 3, 4))
    x[0, 0, 1, 1] = x[0, 0, 0, 3] = 2.0  # same max twice in one window: row-major first
    _, idx = F.adaptive_max_pool2d(dev(x), 1, return_indices=True)
    assert int(host(idx).ravel()[0]) == 3
    assert F.adaptive_avg_pool2d(dev(x), (None, 2)).shape == (1, 1, 3, 2)


def test_pool_grads_float64():
    x = rng.normal(size=(1, 2, 5, 5))
    check_grads(lambda v: F.max_pool2d(v, 2, ceil_mode=True), (dev(x),), order=1)
    check_grads(lambda v: F.avg_pool2d(v, 3, 2, 1, ceil_mode=True, count_include_pad=False),
                (dev(x),), order=2)
    check_grads(lambda v: F.adaptive_avg_pool2d(v, (2, 3)), (dev(x),), order=2)
    check_grads(lambda v: F.adaptive_max_pool2d(v, (2, 3)), (dev(x),), order=1)
    check_grads(lambda v: F.max_pool1d(v[0], 3, 2, 1, ceil_mode=True), (dev(x),), order=1)


def test_max_pool_gradient_goes_to_first_maximum_only():
    x = np.ones((1, 1, 2, 2))
    g = funcgrad.grad(lambda v: F.max_pool2d(v, 2).sum())(dev(x))
    assert_allclose(g, np.array([[[[1.0, 0.0], [0.0, 0.0]]]]))


def test_pool_jit_vmap_and_errors():
    x = rng.normal(size=(3, 2, 7, 7)).astype(np.float32)
    for mod in [nn.MaxPool2d(3, 2, 1, ceil_mode=True, return_indices=True),
                nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False),
                nn.AdaptiveMaxPool2d((3, 2), return_indices=True), nn.AdaptiveAvgPool2d(3)]:
        want = mod(dev(x))
        assert_allclose(nn.jit(lambda m, v: m(v))(mod, dev(x)), want)
        assert_allclose(nn.vmap(lambda m, v: m(v))(mod, dev(x)), want)
    with pytest.raises(ValueError, match="at most half"):
        F.max_pool2d(dev(x), 2, padding=2)
    with pytest.raises(ValueError, match="too small"):
        F.avg_pool2d(dev(x), 9)
    with pytest.raises(ValueError, match="expected input"):
        F.max_pool1d(dev(x), 2)
    with pytest.raises(ValueError, match="non-negative"):
        F.adaptive_avg_pool2d(dev(x), -1)


def test_lp_pool_is_the_root_of_window_power_sums():
    # (sum over each window of x**p) ** (1/p); PyTorch's zero gradient where a window sums to
    # 0 (no NaN), NaN where the sum is negative, max of |x| at p = inf; jit, vmap, grad.
    x = np.array([[[0.0, 0.0, 3.0, 4.0, -2.0, 1.0]]])
    assert_allclose(F.lp_pool1d(dev(x), 2, 2), np.array([[[0.0, 5.0, math.sqrt(5.0)]]]))
    g = funcgrad.grad(lambda v: F.lp_pool1d(v, 2, 2).sum())(dev(x))
    assert_allclose(g, np.array([[[0.0, 0.0, 0.6, 0.8, -2 / math.sqrt(5.0),
                                   1 / math.sqrt(5.0)]]]))
    with np.errstate(invalid="ignore"):  # the cube root of a negative sum
        cubed = host(F.lp_pool1d(dev(x), 3, 2))
    assert cubed[0, 0, 0] == 0.0 and np.isnan(cubed[0, 0, 2])
    assert_allclose(F.lp_pool1d(dev(x), float("inf"), 3), np.array([[[3.0, 4.0]]]))
    xs = np.abs(rng.normal(size=(3, 2, 5, 6))) + 0.1
    want = F.lp_pool2d(dev(xs), 1.5, (2, 3), (2, 1), ceil_mode=True)
    ref = np.stack([[[[np.sum(xs[n, c, 2 * i:2 * i + 2, j:j + 3] ** 1.5) ** (1 / 1.5)
                       for j in range(4)] for i in range(3)] for c in range(2)]
                    for n in range(3)])
    # the ceil-mode edge window is scaled as PyTorch scales it (avg divisor times 2*3)
    assert_allclose(host(want)[:, :, :2], ref[:, :, :2])
    mod = nn.LPPool2d(1.5, (2, 3), (2, 1), ceil_mode=True)
    assert_allclose(nn.jit(lambda m, v: m(v))(mod, dev(xs)), want)
    assert_allclose(nn.vmap(lambda m, v: m(v))(mod, dev(xs)), want)
    check_grads(lambda v: F.lp_pool3d(v, 2, 2), (dev(xs[None]),), order=1)
    assert "norm_type=1.5" in repr(mod)


# -- GroupNorm -------------------------------------------------------------------------------


def test_group_norm_matches_formula_and_grads():
    x = rng.normal(size=(2, 6, 3, 2)).astype(np.float32)
    gn = nn.GroupNorm(3, 6)
    gn.weight[:] = rng.normal(size=6)
    gn.bias[:] = rng.normal(size=6)
    gn.to(DEVICE)
    g = x.reshape(2, 3, -1)
    ref = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5))
    ref = ref.reshape(x.shape) * host(gn.weight)[:, None, None] + host(gn.bias)[:, None, None]
    assert_allclose(gn(dev(x)), ref, rtol=1e-5, atol=1e-5)
    assert list(gn.state_dict()) == ["weight", "bias"]
    assert_allclose(nn.jit(lambda m, v: m(v))(gn, dev(x)), gn(dev(x)))
    x64 = rng.normal(size=(2, 4, 3))
    check_grads(lambda v, w, b: F.group_norm(v, 2, w, b), (dev(x64), dev(rng.normal(size=4)),
                                                            dev(rng.normal(size=4))), order=2)
    assert nn.GroupNorm(2, 4, affine=False)(dev(x64)).shape == (2, 4, 3)
    with pytest.raises(ValueError, match="divisible"):
        nn.GroupNorm(4, 6)


# -- attention -------------------------------------------------------------------------------


def test_sdpa_masks_causal_scale():
    q, k, v = (rng.normal(size=(2, 3, 4, 8)), rng.normal(size=(2, 3, 5, 8)),
               rng.normal(size=(2, 3, 5, 6)))
    bmask = rng.uniform(size=(4, 5)) > 0.3
    bmask[:, 0] = True
    fmask = rng.normal(size=(4, 5))
    sdpa = F.scaled_dot_product_attention
    assert_allclose(sdpa(dev(q), dev(k), dev(v)), ref_sdpa(q, k, v))
    assert_allclose(sdpa(dev(q), dev(k), dev(v), dev(bmask)), ref_sdpa(q, k, v, bmask))
    assert_allclose(sdpa(dev(q), dev(k), dev(v), dev(fmask), scale=0.3),
                    ref_sdpa(q, k, v, fmask, scale=0.3))
    assert_allclose(sdpa(dev(q), dev(k), dev(v), is_causal=True), ref_sdpa(q, k, v, causal=True))
    q32 = q.astype(np.float32)
    assert sdpa(dev(q32), dev(q32), dev(q32), is_causal=True).dtype == np.float32
    with pytest.raises(TypeError, match="same dtype"):  # PyTorch raises too
        sdpa(dev(q32), dev(q32), dev(q32.astype(np.float64)))
    check_grads(lambda a, b, c: sdpa(a, b, c, dev(bmask)), (dev(q), dev(k), dev(v)), order=2)
    check_grads(lambda a, b, c: sdpa(a, b, c, is_causal=True), (dev(q), dev(k), dev(v)), order=1)
    per = funcgrad.vmap(lambda a: sdpa(a, dev(k[0]), dev(v[0]), is_causal=True))(dev(q))
    assert_allclose(per, ref_sdpa(q, k[0], v[0], causal=True))
    gqa = sdpa(dev(q), dev(k[:, :1]), dev(v[:, :1]), enable_gqa=True)
    assert_allclose(gqa, ref_sdpa(q, np.repeat(k[:, :1], 3, 1), np.repeat(v[:, :1], 3, 1)))
    with pytest.raises(TypeError, match="dropout_key="):  # under jit: no key drawn
        funcgrad.jit(lambda a: sdpa(a, dev(k), dev(v), dropout_p=0.1))(dev(q))
    assert sdpa(dev(q), dev(k), dev(v), dropout_p=0.1).shape == (2, 3, 4, 6)  # eagerly: drawn
    d = sdpa(dev(q), dev(k), dev(v), dropout_p=0.5, dropout_key=3)
    assert d.shape == (2, 3, 4, 6)
    with pytest.raises(ValueError, match="is_causal"):
        sdpa(dev(q), dev(k), dev(v), dev(bmask), is_causal=True)


def ref_mha(m, q, k, v, kpm=None, mask=None, avg=True):
    """PyTorch's multi_head_attention_forward in NumPy, batch-first (N, L, E)."""
    e, h = m.embed_dim, m.num_heads
    hd = e // h
    w = host(m.in_proj_weight)
    b = host(m.in_proj_bias)
    qp, kp, vp = (t @ w[i * e:(i + 1) * e].T + b[i * e:(i + 1) * e]
                  for i, t in enumerate((q, k, v)))
    n, lq, s = q.shape[0], q.shape[1], k.shape[1]
    qh = qp.reshape(n, lq, h, hd).transpose(0, 2, 1, 3)
    kh = kp.reshape(n, s, h, hd).transpose(0, 2, 1, 3)
    vh = vp.reshape(n, s, h, hd).transpose(0, 2, 1, 3)
    bias = np.zeros((n, h, lq, s))
    if mask is not None:
        fm = np.where(mask, -np.inf, 0.0) if mask.dtype == bool else mask
        bias = bias + (fm.reshape(n, h, lq, s) if fm.ndim == 3 else fm)
    if kpm is not None:
        fk = np.where(kpm, -np.inf, 0.0) if kpm.dtype == bool else kpm
        bias = bias + fk[:, None, None, :]
    a = (qh * math.sqrt(1 / hd)) @ kh.transpose(0, 1, 3, 2) + bias
    a = np.exp(a - a.max(-1, keepdims=True))
    a = a / a.sum(-1, keepdims=True)
    o = (a @ vh).transpose(0, 2, 1, 3).reshape(n, lq, e)
    o = o @ host(m.out_proj.weight).T + host(m.out_proj.bias)
    return o, (a.mean(1) if avg else a)


def test_mha_parameters_init_and_numerics():
    nn.manual_seed(0)
    nn.set_default_dtype(np.float64)
    try:
        m = nn.MultiheadAttention(8, 2)
        m2 = nn.MultiheadAttention(8, 2, kdim=5, vdim=3, batch_first=True)
    finally:
        nn.set_default_dtype(np.float32)
    assert list(m.state_dict()) == ["in_proj_weight", "in_proj_bias", "out_proj.weight",
                                    "out_proj.bias"]
    assert [n for n, _ in m2.named_parameters()] == [
        "q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias", "out_proj.weight",
        "out_proj.bias"]
    bound = math.sqrt(6 / (8 + 24))
    assert np.abs(m.in_proj_weight).max() <= bound and not np.any(m.in_proj_bias)
    assert not np.any(m.out_proj.bias) and m.in_proj_weight.shape == (24, 8)
    m.in_proj_bias[:] = rng.normal(size=24)
    m.out_proj.bias[:] = rng.normal(size=8)
    m.to(DEVICE)
    q, k = rng.normal(size=(3, 4, 8)), rng.normal(size=(3, 5, 8))
    v = rng.normal(size=(3, 5, 8))
    kpm = np.zeros((3, 5), bool)
    kpm[1, 3:] = True
    mask = rng.normal(size=(4, 5))
    want_o, want_w = ref_mha(m, q, k, v, kpm, mask)
    T = lambda t: dev(np.swapaxes(t, 0, 1))  # noqa: E731
    o, w = m(T(q), T(k), T(v), key_padding_mask=dev(kpm), attn_mask=dev(mask))
    assert_allclose(o, np.swapaxes(want_o, 0, 1), rtol=1e-10, atol=1e-10)
    assert_allclose(w, want_w, rtol=1e-10, atol=1e-10)
    bmask = rng.uniform(size=(6, 4, 5)) > 0.7
    bmask[..., 0] = False
    want_o, want_w = ref_mha(m, q, k, v, mask=bmask, avg=False)
    m.batch_first = True
    o, w = m(dev(q), dev(k), dev(v), attn_mask=dev(bmask), average_attn_weights=False)
    assert_allclose(o, want_o, rtol=1e-10, atol=1e-10)
    assert_allclose(w, want_w, rtol=1e-10, atol=1e-10)
    o1, w1 = m(dev(q[0]), dev(k[0]), dev(v[0]), need_weights=False)
    assert w1 is None
    assert_allclose(o1, ref_mha(m, q[:1], k[:1], v[:1])[0][0], rtol=1e-10, atol=1e-10)
    assert_allclose(nn.jit(lambda mm, a: mm(a, a, a)[0])(m, dev(q)), m(dev(q), dev(q),
                                                                          dev(q))[0])
    per = nn.vmap(lambda mm, a: mm(a, a, a)[0])(m, dev(q))
    assert_allclose(per, m(dev(q), dev(q), dev(q))[0], rtol=1e-10, atol=1e-10)
    g = nn.grad(lambda mm, a: (mm(a, a, a)[0] ** 2).sum())(m, dev(q))
    assert host(g.in_proj_weight).shape == (24, 8)
    check_grads(lambda a, b: m(a, b, b, key_padding_mask=dev(kpm))[0], (dev(q), dev(k)),
                order=1)
    m2.to(DEVICE)
    o2, _ = m2(dev(q), dev(rng.normal(size=(3, 5, 5))), dev(rng.normal(size=(3, 5, 3))))
    assert o2.shape == (3, 4, 8)


def test_mha_errors_and_dropout():
    with pytest.raises(ValueError, match="divisible"):
        nn.MultiheadAttention(6, 4)
    m = nn.MultiheadAttention(4, 2, dropout=0.5).to(DEVICE)
    x = dev(rng.normal(size=(3, 2, 4)).astype(np.float32))
    with pytest.raises(RuntimeError, match="is_causal"):
        m(x, x, x, is_causal=True)
    with pytest.raises(ValueError, match="attn_mask should have shape"):
        m(x, x, x, attn_mask=dev(np.zeros((2, 2), bool)))
    a, b = m(x, x, x)[0], m(x, x, x)[0]
    assert not np.allclose(host(a), host(b))  # the key advances between training calls
    m.eval()
    assert_allclose(m(x, x, x)[0], m(x, x, x)[0])
    assert "rng_key" not in m.state_dict()


def test_mha_returns_the_weights_after_dropout():
    # PyTorch returns the attention weights that multiplied the values: after dropout.
    m = nn.MultiheadAttention(4, 1, dropout=0.5, dtype=np.float64).to(DEVICE)
    x = dev(rng.normal(size=(6, 1, 4)))
    out, w = m(x, x, x, dropout_key=3)
    w = host(w)[0]
    assert (w == 0).any() and not np.allclose(w.sum(-1), 1.0)
    wv, bv = host(m.in_proj_weight)[8:], host(m.in_proj_bias)[8:]
    values = host(x)[:, 0] @ wv.T + bv
    want = (w @ values) @ host(m.out_proj.weight).T + host(m.out_proj.bias)
    assert_allclose(out[:, 0], want, rtol=1e-10, atol=1e-10)
    m.eval()
    assert_allclose(host(m(x, x, x)[1]).sum(-1), np.ones((1, 6)))
