"""``funcgrad_nn.attention`` (``torch.nn.attention``): the SDPA backend selector, the causal
bias masks, and flex_attention with its block masks. Reference values are PyTorch 2.13's
(CPU, float64), recorded as literals."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad_nn as nn
from funcgrad.test_util import check_grads
from funcgrad_nn.attention import SDPBackend, enabled_backends, sdpa_kernel
from funcgrad_nn.attention.bias import (
    CausalBias,
    CausalVariant,
    causal_lower_right,
    causal_upper_left,
)
from funcgrad_nn.attention.flex_attention import (
    AuxRequest,
    BlockMask,
    and_masks,
    create_block_mask,
    create_mask,
    flex_attention,
    noop_mask,
    or_masks,
)
from tests.helpers import assert_allclose, dev, host

F = nn.F


def _qkv():
    q = np.arange(24.0).reshape(1, 2, 3, 4) / 10
    k = np.cos(np.arange(32.0)).reshape(1, 2, 4, 4)
    v = np.sin(np.arange(16.0)).reshape(1, 2, 4, 2)
    return dev(q), dev(k), dev(v)


def _window(b, h, q_idx, kv_idx):
    return kv_idx <= q_idx + 1


def _tilt(score, b, h, q_idx, kv_idx):
    return score + 0.5 * h * (kv_idx - q_idx)


def test_sdpa_kernel_selects_and_restores_backends():
    assert SDPBackend.FLASH_ATTENTION == 1 and SDPBackend.ERROR == -1  # PyTorch's values
    before = enabled_backends()
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.MATH], set_priority=True):
        assert enabled_backends() == (SDPBackend.CUDNN_ATTENTION, SDPBackend.MATH)
        q = dev(np.ones((2, 3, 4)))
        assert F.scaled_dot_product_attention(q, q, q).shape == (2, 3, 4)
    assert enabled_backends() == before
    with pytest.raises(TypeError, match="SDPBackend"), sdpa_kernel([SDPBackend.MATH, "flash"]):
        pass


def test_causal_bias_masks_match_pytorch():
    # torch.nn.attention.bias.causal_lower_right(3, 4)._materialize()
    assert causal_lower_right(3, 4)._materialize().tolist() == [
        [True, True, False, False], [True, True, True, False], [True, True, True, True]]
    assert causal_upper_left(3, 4)._materialize().tolist() == [
        [True, False, False, False], [True, True, False, False], [True, True, True, False]]
    rng = np.random.default_rng(0)
    q, k, v = (dev(rng.standard_normal(s)) for s in ((2, 3, 4), (2, 5, 4), (2, 5, 3)))
    for bias, offset in ((causal_lower_right(3, 5), 2), (causal_upper_left(3, 5), 0)):
        want = F.scaled_dot_product_attention(
            q, k, v, attn_mask=dev(np.tril(np.ones((3, 5), bool), k=offset)))
        assert_allclose(F.scaled_dot_product_attention(q, k, v, attn_mask=bias), want,
                        rtol=1e-12)
        # the mask also passes gradients through, and under jit
        check_grads(lambda q, k, v, b=bias: F.scaled_dot_product_attention(q, k, v, b),
                    (q, k, v), order=1, modes=("rev",))
        jitted = funcgrad.jit(lambda q, k, v, b=bias: F.scaled_dot_product_attention(q, k, v, b))
        assert_allclose(jitted(q, k, v), want, rtol=1e-12)
    with pytest.raises(ValueError, match="causal=True"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(3, 5),
                                       is_causal=True)
    with pytest.raises(ValueError, match="3 x 4"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(3, 4))
    with pytest.raises(TypeError, match="CausalVariant"):
        CausalBias(2, 3, 3)
    assert CausalBias(CausalVariant.LOWER_RIGHT, 2, 2)._materialize().sum() == 3


def test_flex_attention_matches_pytorch_literals():
    # torch.nn.attention.flex_attention.flex_attention(q, k, v, score_mod=_tilt,
    #     block_mask=create_block_mask(_window, None, None, 3, 4, BLOCK_SIZE=2),
    #     return_lse=True), float64 on the CPU
    q, k, v = _qkv()
    bm = create_block_mask(_window, None, None, 3, 4, BLOCK_SIZE=2)
    out, lse = flex_attention(q, k, v, score_mod=_tilt, block_mask=bm, return_lse=True)
    assert_allclose(out, np.array([[[[0.541406507812, 0.424473679661],
                            [0.331633609317, 0.124600447958],
                            [0.246879703588, 0.331718147015]],
                           [[0.623688920494, 0.075368918854],
                            [-0.351936301166, 0.383719564081],
                            [-0.22262126473, 0.430996641073]]]]), atol=1e-11)
    assert_allclose(lse, np.array([[[0.741787321529, 1.134825591763, 1.596492330192],
                                    [0.722727738847, 2.144501348587, 2.085476110378]]]),
                    atol=1e-11)
    # the block summary, as PyTorch's
    assert bm.shape == (1, 1, 3, 4) and bm.seq_lengths == (3, 4) and bm.BLOCK_SIZE == (2, 2)
    assert bm.kv_num_blocks.tolist() == [[[1, 2]]]
    assert bm.kv_indices.tolist() == [[[[1, 0], [0, 1]]]]
    assert bm.full_kv_num_blocks.tolist() == [[[1, 0]]]
    assert bm.full_kv_indices.tolist() == [[[[0, 1], [0, 1]]]]
    assert bm.to_dense().tolist() == [[[[1, 1], [1, 1]]]]
    assert bm.sparsity() == pytest.approx(-33.33333333333333)
    _, aux = flex_attention(q, k, v, score_mod=_tilt, block_mask=bm,
                            return_aux=AuxRequest(lse=True))
    assert_allclose(aux.lse, lse, rtol=1e-15)
    assert aux.max_scores is None


def test_flex_attention_is_masked_softmax_attention_with_its_gradients():
    rng = np.random.default_rng(1)
    q, k, v = (dev(rng.standard_normal(s)) for s in ((2, 4, 5, 3), (2, 2, 6, 3), (2, 2, 6, 2)))
    causal = and_masks(lambda b, h, qi, ki: qi >= ki, lambda b, h, qi, ki: ki > 0)
    bm = create_block_mask(causal, None, None, 5, 6, BLOCK_SIZE=2)

    def flex(q, k, v):
        return flex_attention(q, k, v, score_mod=_tilt, block_mask=bm, enable_gqa=True)

    def reference(q, k, v):
        # the same attention written with SDPA: the score_mod as an additive float mask, the
        # block mask as -inf (query 0 sees no key: a zero row, as PyTorch's)
        h, qi, ki = np.arange(4)[:, None, None], np.arange(5)[:, None], np.arange(6)
        add = 0.5 * h * (ki - qi) + np.where((qi >= ki) & (ki > 0), 0.0, -np.inf)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=dev(add), enable_gqa=True)

    assert_allclose(flex(q, k, v), reference(q, k, v), rtol=1e-12, atol=1e-15)
    assert np.all(host(flex(q, k, v))[:, :, 0] == 0)
    grads = funcgrad.grad(lambda *a: funcgrad.numpy.sum(flex(*a) ** 2), argnums=(0, 1, 2))
    want = funcgrad.grad(lambda *a: funcgrad.numpy.sum(reference(*a) ** 2), argnums=(0, 1, 2))
    for g, w in zip(grads(q, k, v), want(q, k, v)):
        assert_allclose(g, w, rtol=1e-10, atol=1e-14)
    check_grads(flex, (q, k, v), order=1, modes=("rev",))
    assert_allclose(funcgrad.jit(flex)(q, k, v), flex(q, k, v), rtol=1e-12)
    batched = funcgrad.vmap(flex)(*(funcgrad.numpy.stack([a, a]) for a in (q, k, v)))
    assert_allclose(batched[1], flex(q, k, v), rtol=1e-12)


def test_masks_and_errors():
    assert create_mask(or_masks(lambda b, h, q, k: q == k, lambda b, h, q, k: k == 0),
                       1, 1, 2, 3).tolist() == [[[[True, False, False], [True, True, False]]]]
    assert create_mask(noop_mask, None, 2, 1, 2).tolist() == [[[[True, True]], [[True, True]]]]
    # a score_mod's mask: where it does not write -inf
    tri = create_mask(lambda s, b, h, q, k: funcgrad.numpy.where(q >= k, s, -np.inf),
                      None, None, 2, 2)
    assert tri.tolist() == [[[[True, False], [True, True]]]]
    q = dev(np.ones((1, 2, 3, 4)))
    with pytest.raises(ValueError, match="enable_gqa"):
        flex_attention(q, q[:, :1], q[:, :1])
    with pytest.raises(ValueError, match="4-D"):
        flex_attention(q[0], q[0], q[0])
    with pytest.raises(ValueError, match=r"created for block_mask.shape=\(1, 1, 2, 2\).*smaller"):
        flex_attention(q, q, q, block_mask=create_block_mask(noop_mask, 1, 1, 2, 2))
    with pytest.raises(TypeError, match="score_mod"):
        create_block_mask(lambda s, b, h, q, k: s, 1, 1, 2, 2)


def _sines(shape, offset):
    return np.sin(np.arange(np.prod(shape)) * 0.37 + offset).reshape(shape).astype(np.float32)


def _every_third_out(b, h, q_idx, kv_idx):
    return (q_idx + kv_idx) % 3 != 0


def test_block_mask_from_kv_blocks_matches_compiled_pytorch():
    # torch 2.13, torch.compile(flex_attention)(q, k, v, block_mask=BlockMask.from_kv_blocks(
    #     kvn, kvi[, fn, fi], BLOCK_SIZE=2, ...)) with q, k, v = _sines(...): positions outside
    # the listed blocks are masked, full blocks skip mask_mod, partial ones apply it.
    q, k, v = _sines((1, 1, 6, 4), 0), _sines((1, 1, 8, 4), 1), _sines((1, 1, 8, 4), 2)
    kvn = np.array([[[1, 2, 1]]], np.int32)
    kvi = np.array([[[[0, 1, 2, 3], [1, 2, 0, 3], [3, 0, 1, 2]]]], np.int32)
    fn = np.array([[[0, 0, 1]]], np.int32)
    fi = np.array([[[[0, 1, 2, 3], [0, 1, 2, 3], [2, 0, 1, 3]]]], np.int32)
    only_blocks = BlockMask.from_kv_blocks(kvn, kvi, BLOCK_SIZE=2, seq_lengths=(6, 8))
    assert only_blocks.mask_mod is noop_mask and only_blocks.shape == (1, 1, 6, 8)
    assert only_blocks.to_dense()[0, 0].tolist() == [[1, 0, 0, 0], [0, 1, 1, 0], [0, 0, 0, 1]]
    assert only_blocks.q_num_blocks.tolist() == [[[1, 1, 1, 1]]]
    assert_allclose(flex_attention(dev(q), dev(k), dev(v), block_mask=only_blocks)[0, 0], np.array([
        [0.59047, 0.35107, 0.06415, -0.23146], [0.62376, 0.38721, 0.09826, -0.20399],
        [-0.27893, -0.23058, -0.15103, -0.05103], [-0.57715, -0.41662, -0.1997, 0.04424],
        [-0.50568, -0.26845, 0.00511, 0.27798], [-0.52842, -0.30106, -0.03295, 0.23961]],
        np.float32), atol=2e-5)
    mixed = BlockMask.from_kv_blocks(kvn, kvi, fn, fi, BLOCK_SIZE=2, mask_mod=_every_third_out)
    assert mixed.full_q_num_blocks.tolist() == [[[0, 0, 1, 0]]]
    assert_allclose(flex_attention(dev(q), dev(k), dev(v), block_mask=mixed)[0, 0], np.array([
        [-0.33199, -0.65063, -0.88121, -0.99252], [0.62376, 0.38721, 0.09826, -0.20399],
        [-0.4484, -0.3815, -0.26298, -0.10885], [-0.80714, -0.70497, -0.50739, -0.24113],
        [0.16413, 0.15056, 0.11662, 0.06689], [0.63027, 0.45929, 0.22615, -0.03761]],
        np.float32), atol=2e-5)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        BlockMask.from_kv_blocks(np.array([1]), np.array([0]))
    with pytest.raises(ValueError, match="both provided or omitted"):
        BlockMask.from_kv_blocks(kvn, kvi, fn)


def test_block_mask_slicing_adjusting_and_printing_as_pytorch():
    # torch 2.13 on create_block_mask(lambda b, h, q, k: q >= k + b, 3, 2, 6, 8, BLOCK_SIZE=2)
    bm = create_block_mask(lambda b, h, q, k: q >= k + b, 3, 2, 6, 8, BLOCK_SIZE=2)
    assert len(bm.as_tuple()) == 17 and len(bm.as_tuple(flatten=False)) == 15
    assert bm.numel() == 288 and round(bm.sparsity(), 4) == 58.3333
    assert bm[1].shape == (1, 2, 6, 8) and bm[-1, 1].kv_num_blocks.tolist() == [[[0, 1, 1]]]
    assert bm[:, :, np.array([2, 0])].kv_num_blocks[0, 0].tolist() == [1, 1]
    assert bm[1:, 1].full_kv_num_blocks.tolist() == [[[0, 1, 2]], [[0, 0, 1]]]
    with pytest.raises(RuntimeError, match="Cannot use mask_mod from a sliced BlockMask"):
        kv = dev(np.ones((1, 2, 8, 4), np.float32))
        flex_attention(dev(np.ones((1, 2, 6, 4), np.float32)), kv, kv, block_mask=bm[1])
    short = bm._adjust(4, 6)
    assert short.shape == (3, 2, 4, 6) and short.kv_num_blocks[0, 0].tolist() == [1, 1]
    assert short.full_kv_num_blocks[:, 0].tolist() == [[0, 1], [0, 1], [0, 0]]
    q, kv = dev(_sines((3, 2, 4, 8), 0)), dev(_sines((3, 2, 6, 8), 1))
    with pytest.raises(ValueError, match=r"larger length.*_adjust\(4, 6\)"):
        flex_attention(q, kv, kv, block_mask=bm)
    assert flex_attention(q, kv, kv, block_mask=short).shape == (3, 2, 4, 8)
    assert str(bm[0, 1]) == ("BlockMask(shape=(1, 1, 6, 8), sparsity=50.00%, \n(0, 0)\n"
                             "██      \n████    \n██████\n)")
    assert bm.to_string(grid_size=2, limit=1).splitlines() == [
        "(0, 0)", "░░  ", "██░░", "", "...", "To print out more, set "
        "BlockMask.to_string(limit=N)", "You can also index (BlockMask[batch, head]) to choose "
        "a specific batch or head"]
    assert repr(bm[0]).splitlines()[1:3] == ["    kv_num_blocks=(1, 2, 3),",
                                             "    kv_indices=(1, 2, 3, 4),"]
    assert repr(bm).endswith("mask_mod=<lambda>\n)")


def test_mods_index_captured_numpy_arrays_as_in_pytorch():
    # torch 2.13: flex_attention(q, k, v, score_mod=lambda s, b, h, qi, ki: s + bias[h, qi, ki],
    # block_mask=create_block_mask(lambda b, h, qi, ki: doc[qi] == doc[ki], None, None, 3, 4,
    # BLOCK_SIZE=2)) with q, k, v, bias = _sines(...): a relative-position bias table and
    # document ids captured as (here NumPy) arrays and indexed by the positions.
    q, k, v = _sines((1, 2, 3, 4), 0), _sines((1, 2, 4, 4), 1), _sines((1, 2, 4, 4), 2)
    bias, doc = _sines((2, 3, 4), 3), np.array([0, 0, 1, 1])
    bm = create_block_mask(lambda b, h, qi, ki: doc[qi] == doc[ki], None, None, 3, 4,
                           BLOCK_SIZE=2)
    out = flex_attention(dev(q), dev(k), dev(v), block_mask=bm,
                         score_mod=lambda s, b, h, qi, ki: s + dev(bias)[h, qi, ki])
    assert_allclose(out[0], np.array([
        [[0.6696, 0.43699, 0.14523, -0.16618], [0.62757, 0.39136, 0.10217, -0.20085],
         [-0.53405, -0.30539, -0.03541, 0.23937]],
        [[0.33773, 0.06197, -0.22219, -0.47626], [0.71423, 0.54364, 0.29946, 0.01476],
         [-0.50598, -0.26888, 0.00461, 0.27748]]], np.float32), atol=2e-5)
    # and the gradient flows into the captured table when it is differentiated
    g = funcgrad.grad(lambda t: flex_attention(
        dev(q), dev(k), dev(v), score_mod=lambda s, b, h, qi, ki: s + t[h, qi, ki]).sum())(
        dev(bias))
    assert host(g).shape == (2, 3, 4) and np.isfinite(host(g)).all()


def test_sdpa_heads_that_do_not_broadcast_raise_a_named_runtime_error():
    # torch 2.13: RuntimeError "The size of tensor a (4) must match the size of tensor b (2)"
    q = dev(np.ones((2, 4, 3, 8), np.float32))
    kv = dev(np.ones((2, 2, 5, 8), np.float32))
    with pytest.raises(RuntimeError, match="do not broadcast .*enable_gqa=True"):
        nn.F.scaled_dot_product_attention(q, kv, kv)
    assert nn.F.scaled_dot_product_attention(q, kv, kv, enable_gqa=True).shape == (2, 4, 3, 8)


def test_multi_head_attention_forward_mask_shape_is_torchs_runtime_error():
    # torch 2.13: RuntimeError "The shape of the 3D attn_mask is torch.Size([2, 3, 4]), but
    # should be (4, 3, 4)."
    e, h = 8, 2
    q, k = dev(np.ones((3, 2, e), np.float32)), dev(np.ones((4, 2, e), np.float32))
    w, ow = dev(np.ones((3 * e, e), np.float32)), dev(np.ones((e, e), np.float32))
    with pytest.raises(RuntimeError, match=r"attn_mask should have shape \(3, 4\) or "
                                           r"\(4, 3, 4\), got \(2, 3, 4\)"):
        nn.F.multi_head_attention_forward(q, k, k, e, h, w, None, None, None, False, 0.0, ow,
                                          None, attn_mask=dev(np.zeros((h, 3, 4), bool)))


def test_broadcast_block_mask_evaluates_mask_mod_at_every_batch_entry_and_head():
    # A BlockMask made with B=H=None whose mask_mod depends on b and h: in its partial blocks
    # PyTorch's kernels (torch.compile(flex_attention), 2.13) call mask_mod with the real b,
    # h; here every block is partial, so the result is dense attention under mask_mod(b, h,
    # q, kv) (torch's compiled and eager results agree on it to 4e-7).
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 2, 16, 8)).astype(np.float32) for _ in range(3))

    def mm(b, h, qi, kv):
        return (b + h + qi + kv) % 3 != 0

    got = flex_attention(dev(q), dev(k), dev(v),
                         block_mask=create_block_mask(mm, None, None, 16, 16, BLOCK_SIZE=8))
    idx = np.ix_(range(2), range(2), range(16), range(16))
    s = np.where(mm(*idx), q @ k.transpose(0, 1, 3, 2) / np.sqrt(8), -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    want = ((p / p.sum(-1, keepdims=True)) @ v).astype(np.float32)
    assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_half_attention_computes_in_float32_as_torch():
    # torch 2.13: with x = arange(16).reshape(1, 1, 4, 4) * 20 in float16 (scores overflow
    # float16: they gave NaN rows), flex_attention(x, x, x) has every row [240, 260, 280, 300]
    # (float16; lse float32) and scaled_dot_product_attention the same
    x = dev((np.arange(16.0).reshape(1, 1, 4, 4) * 20).astype(np.float16))
    want = np.tile(np.array([240.0, 260.0, 280.0, 300.0], np.float16), (1, 1, 4, 1))
    out, lse = flex_attention(x, x, x, return_lse=True)
    assert out.dtype == np.float16 and lse.dtype == np.float32
    assert_allclose(out, want, rtol=1e-3, atol=1e-3)
    sdpa = nn.F.scaled_dot_product_attention(x, x, x)
    assert sdpa.dtype == np.float16
    assert_allclose(sdpa, want, rtol=1e-3, atol=1e-3)
