"""Transformer layers beyond the PyTorch fixtures: masks, cloning, dropout, bad input."""

import numpy as np
import pytest

import funcgrad
import funcgrad_nn as nn
from funcgrad_nn import functional as F
from funcgrad_nn.module import BadInputError
from tests.helpers import DEVICE, assert_allclose, dev, host

rng = np.random.default_rng(0)


def _layer(**kw):
    return nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                      dtype=np.float64, **kw)


def test_causal_mask_float_and_bool_forms_agree_and_are_causal():
    mask = nn.Transformer.generate_square_subsequent_mask(5)
    assert mask.dtype == np.float32 and mask[0, 1] == -np.inf and mask[1, 0] == 0
    assert nn.Transformer.generate_square_subsequent_mask(3, dtype=np.float64).dtype == \
        np.float64
    # Made on the default device, as PyTorch's on its own: it meets activations there.
    assert funcgrad.backend.device_of(mask) == funcgrad.backend.get_default_device()
    assert funcgrad.backend.device_of(
        nn.Transformer.generate_square_subsequent_mask(2, device="cpu")) == "cpu"
    mha = nn.MultiheadAttention(8, 2, batch_first=True).to(DEVICE)
    q = dev(rng.normal(size=(2, 5, 8)).astype(np.float32))
    out, w = mha(q, q, q, attn_mask=mask)  # with the weights: the mask is applied as given
    assert float(host(w)[0, 0, 1]) == 0.0
    layer = _layer()
    x = rng.normal(size=(5, 2, 8))
    mask = host(mask)
    a = layer(x, src_mask=mask.astype(np.float64), is_causal=True)
    b = layer(x, src_mask=np.isinf(mask))
    np.testing.assert_allclose(a, b, rtol=1e-12)
    # Causality: changing the last step changes nothing before it.
    x2 = x.copy()
    x2[-1] += 1.0
    c = layer(x2, src_mask=np.isinf(mask))
    np.testing.assert_allclose(c[:-1], b[:-1], rtol=1e-12)
    assert not np.allclose(c[-1], b[-1])


def test_key_padding_mask_hides_padded_positions():
    layer = _layer(batch_first=True)
    x = rng.normal(size=(2, 5, 8))
    kpm = np.zeros((2, 5), bool)
    kpm[1, 3:] = True
    out = layer(x, src_key_padding_mask=kpm)
    x2 = x.copy()
    x2[1, 3:] = 100.0  # padded positions: their content must not matter to the others
    out2 = layer(x2, src_key_padding_mask=kpm)
    np.testing.assert_allclose(out2[1, :3], out[1, :3], rtol=1e-12)


def test_stack_clones_layers_with_equal_weights_and_own_dropout_keys():
    layer = nn.TransformerEncoderLayer(8, 2, 16)
    enc = nn.TransformerEncoder(layer, 3)
    w = [m.linear1.weight for m in enc.layers]
    assert all(np.array_equal(w[0], v) and w[0] is not v for v in w[1:])
    keys = {tuple(m.dropout.rng_key.tolist()) for m in enc.layers}
    assert len(keys) == 3
    names = [n for n, _ in enc.named_parameters()]
    assert "layers.2.self_attn.in_proj_weight" in names
    assert "layers.0.norm2.bias" in names


def test_dropout_is_random_in_training_and_off_in_eval():
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5)
    x = rng.normal(size=(4, 2, 8)).astype(np.float32)
    assert not np.allclose(layer(x), layer(x))
    layer.eval()
    np.testing.assert_array_equal(layer(x), layer(x))


def test_callable_and_module_activations():
    base = _layer(activation="gelu")
    x = rng.normal(size=(4, 2, 8))
    for act in (F.gelu, nn.GELU()):
        other = _layer(activation=act)
        other.load_state_dict(base.state_dict())
        np.testing.assert_allclose(other(x), base(x), rtol=1e-12)
    with pytest.raises(RuntimeError, match="relu/gelu"):
        _layer(activation="tanh")


def test_transformer_default_init_is_xavier_on_matrices():
    model = nn.Transformer(d_model=16, nhead=4, num_encoder_layers=1, num_decoder_layers=1,
                           dim_feedforward=32)
    w = model.encoder.layers[0].linear1.weight
    bound = np.sqrt(6 / (16 + 32))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert np.all(model.decoder.norm.weight == 1)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2)

    def forward(self, x, **kw):
        return self.encoder(x, **kw)


X = np.zeros((5, 2, 8), np.float32)


@pytest.mark.parametrize("call, words", [
    (lambda: Classifier()(np.zeros((5, 2, 6), np.float32)),
     ["Classifier.encoder.layers.0 (TransformerEncoderLayer)", "d_model = 8", "(5, 2, 6)",
      "Fix"]),
    (lambda: Classifier()(X, mask=np.zeros((4, 4), bool)),
     ["Classifier.encoder.layers.0", "src_mask", "(5, 5)", "(4, 4)",
      "generate_square_subsequent_mask(5)"]),
    (lambda: Classifier()(X, mask=np.zeros((5, 5), np.int64)),
     ["src_mask", "bool and floating", "int64"]),
    (lambda: Classifier()(X, src_key_padding_mask=np.zeros((5, 2), bool)),
     ["src_key_padding_mask", "(2, 5)", "(5, 2)"]),
    (lambda: nn.TransformerEncoderLayer(8, 2)(np.zeros((1, 2, 3, 8), np.float32)),
     ["TransformerEncoderLayer", "3-D", "(1, 2, 3, 8)"]),
    (lambda: nn.TransformerDecoderLayer(8, 2)(X, np.zeros((5, 3, 8), np.float32)),
     ["memory", "(5, 3, 8)", "batch"]),
    (lambda: nn.TransformerDecoderLayer(8, 2)(X, X, memory_mask=np.zeros((5, 4), bool)),
     ["memory_mask", "(5, 5)", "(5, 4)"]),
    (lambda: nn.Transformer(8, 2, 1, 1, 16)(X, np.zeros((5, 3, 8), np.float32)),
     ["Transformer", "batch number of src and tgt", "(5, 3, 8)"]),
])
def test_bad_input_names_module_shapes_and_fix(call, words):
    with pytest.raises(BadInputError) as info:
        call()
    msg = str(info.value)
    for w in words:
        assert w in msg, (w, msg)


def test_nhead_must_divide_d_model_and_is_causal_needs_a_mask():
    for cls in (nn.TransformerEncoderLayer, nn.TransformerDecoderLayer):
        with pytest.raises(ValueError, match=r"nhead \(3\) must divide d_model \(8\).*fix"):
            cls(8, 3)
    with pytest.raises(ValueError, match="nhead"):
        nn.Transformer(d_model=10, nhead=4)
    with pytest.raises(RuntimeError, match="attn_mask"):
        _layer()(np.zeros((3, 1, 8)), is_causal=True)


def test_multihead_attention_errors_name_the_layer_path():
    enc = nn.TransformerEncoderLayer(8, 2, 16)
    with pytest.raises(BadInputError, match=r"MultiheadAttention.*key_padding_mask.*Fix"):
        enc.self_attn(X, X, X, key_padding_mask=np.zeros((3, 5), bool))

    class Wrap(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = nn.MultiheadAttention(8, 2)

        def forward(self, q, kv):
            return self.attn(q, kv, kv)

    with pytest.raises(BadInputError, match=r"Wrap.attn \(MultiheadAttention\).*\(5, 3, 8\)"):
        Wrap()(X, np.zeros((5, 3, 8), np.float32))


def test_encoder_nested_tensor_path_zeroes_padded_positions_as_pytorch():
    # torch 2.13: an eval-mode TransformerEncoder (enable_nested_tensor, batch_first layer)
    # under no_grad with a left-aligned src_key_padding_mask runs on the unpadded tokens and
    # returns zeros at the padded positions (then the final norm); the kept positions, and
    # every position with grad enabled, are the ordinary values.
    nn.manual_seed(0)
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2,
                                norm=nn.LayerNorm(8)).to(DEVICE).eval()
    assert enc.use_nested_tensor
    src = dev(np.random.default_rng(0).normal(size=(2, 5, 8)).astype(np.float32))
    kpm = np.zeros((2, 5), bool)
    kpm[0, -2:] = True
    full = host(enc(src, src_key_padding_mask=dev(kpm)))
    with nn.autograd.no_grad():
        fast = host(enc(src, src_key_padding_mask=dev(kpm)))
        shifted = kpm.copy()
        shifted[1, 0] = True  # not left-aligned: PyTorch's mask_check keeps the slow path
        slow = host(enc(src, src_key_padding_mask=dev(shifted)))
    assert_allclose(slow, host(enc(src, src_key_padding_mask=dev(shifted))))
    assert_allclose(fast[~kpm], full[~kpm], rtol=1e-5, atol=1e-6)
    norm = enc.norm
    assert_allclose(fast[kpm], np.broadcast_to(host(norm.bias), (2, 8)), atol=1e-6)
    assert not np.allclose(full[kpm], fast[kpm])
    with pytest.warns(UserWarning, match="use_nested_tensor is False because encoder_layer."
                                         "self_attn.batch_first was not True"):
        nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 1)
