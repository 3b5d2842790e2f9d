"""Recurrent layers beyond the PyTorch fixtures: the scan structure, packing utilities,
dropout between layers, init, bad input, and gradients by finite differences."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad
import funcgrad_nn as nn
from funcgrad.test_util import check_grads
from funcgrad_nn.module import BadInputError
from funcgrad_nn.utils import rnn

rng = np.random.default_rng(0)


def _scans(jaxpr):
    return [e for e in jaxpr.eqns if e.prim.name == "scan"]


@pytest.mark.parametrize("cls", [nn.RNN, nn.LSTM, nn.GRU])
def test_time_loop_is_one_scan_per_layer_and_direction(cls):
    m = cls(3, 4, num_layers=2, bidirectional=True, dtype=np.float64)
    sizes = []
    for t in (3, 40):
        x = rng.normal(size=(t, 2, 3))
        jaxpr = funcgrad.make_jaxpr(lambda x: m(x)[0])(x).jaxpr
        assert len(_scans(jaxpr)) == 4
        assert {e.params["length"] for e in _scans(jaxpr)} == {t}
        sizes.append(len(jaxpr.eqns))
    assert sizes[0] == sizes[1]  # the program does not grow with the sequence length


@pytest.mark.parametrize("cls", [nn.RNN, nn.LSTM, nn.GRU])
def test_gradients_match_finite_differences(cls):
    m = cls(2, 3, num_layers=2, bidirectional=True, dtype=np.float64)
    x = rng.normal(size=(4, 2, 2))

    def f(x, w):
        m.weight_hh_l1_reverse = w
        return m(x)[0]

    check_grads(f, (x, m.weight_hh_l1_reverse), order=1, modes=("fwd", "rev"))


def test_vmap_over_a_batch_of_sequences_matches_the_batched_call():
    m = nn.GRU(3, 4, dtype=np.float64)
    x = rng.normal(size=(5, 2, 3))  # (batch, T, features) for vmap over unbatched calls
    out = funcgrad.vmap(lambda s: m(s)[0])(x)
    ref = m(np.swapaxes(x, 0, 1))[0]
    np.testing.assert_allclose(out, np.swapaxes(ref, 0, 1), rtol=1e-12)


def test_parameter_names_layout_and_default_init():
    m = nn.LSTM(3, 6, num_layers=2, bidirectional=True, proj_size=2)
    shapes = {n: p.shape for n, p in m.named_parameters()}
    assert list(shapes)[:5] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                                "weight_hr_l0"]
    assert shapes["weight_ih_l0"] == (24, 3)
    assert shapes["weight_hh_l0"] == (24, 2)
    assert shapes["weight_hr_l0_reverse"] == (2, 6)
    assert shapes["weight_ih_l1"] == (24, 4)  # 2 directions x proj_size
    bound = 1 / np.sqrt(6)
    for p in m.parameters():
        assert p.dtype == np.float32 and np.abs(p).max() <= bound
    big = nn.GRU(50, 100)
    w = big.weight_ih_l0
    assert w.shape == (300, 50) and abs(np.abs(w).max() - 0.1) < 1e-3  # U(-1/10, 1/10)
    assert abs(w.std() - 0.1 / np.sqrt(3)) < 3e-3


def test_batch_first_unbatched_and_hx_defaults_agree():
    m = nn.LSTM(3, 4, num_layers=2, dtype=np.float64)
    x = rng.normal(size=(6, 3))
    out, (h, c) = m(x)
    out_b, (h_b, c_b) = m(x[:, None])
    np.testing.assert_allclose(out, out_b[:, 0])
    np.testing.assert_allclose(h, h_b[:, 0])
    z = np.zeros((2, 4))
    out_z, _ = m(x, (z, z))
    np.testing.assert_allclose(out, out_z)
    mb = nn.LSTM(3, 4, num_layers=2, batch_first=True, dtype=np.float64)
    mb.load_state_dict(m.state_dict())
    np.testing.assert_allclose(mb(x[None])[0][0], out)


def test_packed_sequence_states_stop_at_each_length():
    m = nn.GRU(2, 3, bidirectional=True, dtype=np.float64)
    seqs = [rng.normal(size=(n, 2)) for n in (2, 5, 3)]
    packed = rnn.pack_sequence(seqs, enforce_sorted=False)
    out, h = m(packed)
    padded, lens = rnn.pad_packed_sequence(out, batch_first=True)
    assert lens.tolist() == [2, 5, 3]
    for i, s in enumerate(seqs):
        o, hi = m(s)  # each sequence alone, unbatched
        np.testing.assert_allclose(padded[i, :len(s)], o, rtol=1e-12)
        np.testing.assert_allclose(padded[i, len(s):], 0)
        np.testing.assert_allclose(h[:, i], hi, rtol=1e-12)


def test_pack_and_pad_utilities():
    a, b, c = np.ones((3, 2)), 2 * np.ones((1, 2)), 3 * np.ones((2, 2))
    padded = rnn.pad_sequence([a, b, c])
    assert padded.shape == (3, 3, 2) and padded[1, 1, 0] == 0
    left = rnn.pad_sequence([a, b], batch_first=True, padding_value=-1, padding_side="left")
    assert left[1, :, 0].tolist() == [-1, -1, 2]
    p = rnn.pack_padded_sequence(padded, [3, 1, 2], enforce_sorted=False)
    assert p.batch_sizes.tolist() == [3, 2, 1]
    assert p.sorted_indices.tolist() == [0, 2, 1]
    assert p.unsorted_indices.tolist() == [0, 2, 1]
    assert p.data[:, 0].tolist() == [1, 3, 2, 1, 3, 1]
    data, batch_sizes, sorted_indices, unsorted_indices = p  # unpacks like torch's tuple
    assert data is p.data
    back, lens = rnn.pad_packed_sequence(p, total_length=4)
    assert back.shape == (4, 3, 2) and lens.tolist() == [3, 1, 2]
    np.testing.assert_array_equal(back[:3], padded)
    assert [s.shape[0] for s in rnn.unpack_sequence(p)] == [3, 1, 2]
    assert [s.shape[0] for s in rnn.unpad_sequence(padded, [3, 1, 2])] == [3, 1, 2]
    with pytest.raises(RuntimeError, match="enforce_sorted"):
        rnn.pack_padded_sequence(padded, [1, 3, 2])
    with pytest.raises(RuntimeError, match="greater than 0"):
        rnn.pack_padded_sequence(padded, [3, 0, 2], enforce_sorted=False)
    with pytest.raises(ValueError, match="total_length"):
        rnn.pad_packed_sequence(p, total_length=2)
    # A PackedSequence is a pytree over its data: it crosses jit.
    twice = funcgrad.jit(lambda q: rnn.PackedSequence(q.data * 2, q.batch_sizes,
                                                      q.sorted_indices))(p)
    np.testing.assert_array_equal(twice.data, 2 * p.data)
    assert twice.batch_sizes.tolist() == [3, 2, 1]
    # PyTorch's tensor-like methods move/cast the data and keep the indices.
    for q in (p.float(), p.to(np.float32), p.to(dtype=np.float32), p.cpu().float()):
        assert q.data.dtype == np.float32 and q.sorted_indices.tolist() == [0, 2, 1]
        assert q.batch_sizes.tolist() == [3, 2, 1] and not q.is_cuda
    assert p.float().double().data.dtype == np.float64 and p.half().data.dtype == np.float16


def test_packing_is_differentiable():
    x = rng.normal(size=(4, 3, 2))

    def f(x):
        p = rnn.pack_padded_sequence(x, [4, 2, 1], enforce_sorted=True)
        return rnn.pad_packed_sequence(p, padding_value=5.0)[0]

    check_grads(f, (x,), order=1)


def test_dropout_between_layers_only_in_training():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = nn.LSTM(3, 8, num_layers=2, dropout=0.5)
    x = rng.normal(size=(5, 2, 3)).astype(np.float32)
    a, b = m(x)[0], m(x)[0]
    assert not np.allclose(a, b)  # a fresh mask per call
    m.eval()
    np.testing.assert_array_equal(m(x)[0], m(x)[0])
    with pytest.warns(UserWarning, match="num_layers greater than 1"):
        nn.GRU(3, 4, dropout=0.2)


def test_cells_match_one_step_of_the_layers():
    for layer_cls, cell_cls in ((nn.RNN, nn.RNNCell), (nn.LSTM, nn.LSTMCell),
                                (nn.GRU, nn.GRUCell)):
        layer = layer_cls(3, 4, dtype=np.float64)
        cell = cell_cls(3, 4, dtype=np.float64)
        cell.load_state_dict({k[:-3]: v for k, v in layer.state_dict().items()})
        x = rng.normal(size=(1, 2, 3))
        out = layer(x)[0][0]
        got = cell(x[0])
        got = got[0] if isinstance(got, tuple) else got
        np.testing.assert_allclose(got, out, rtol=1e-12)


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 8)

    def forward(self, x, hx=None):
        return self.lstm(x, hx)[0]


@pytest.mark.parametrize("call, words", [
    (lambda: Tagger()(np.zeros((5, 2, 3), np.float32)),
     ["Tagger.lstm (LSTM)", "input_size = 4", "(5, 2, 3)", "Fix"]),
    (lambda: nn.LSTM(4, 8)(np.zeros((5, 2, 1, 4), np.float32)),
     ["LSTM", "2-D", "3-D", "(5, 2, 1, 4)"]),
    (lambda: Tagger()(np.zeros((5, 2, 4), np.float32),
                      (np.zeros((1, 3, 8), np.float32), np.zeros((1, 2, 8), np.float32))),
     ["Tagger.lstm (LSTM)", "h_0", "(1, 2, 8)", "(1, 3, 8)"]),
    (lambda: nn.LSTM(4, 8)(np.zeros((5, 2, 4), np.float32), np.zeros((1, 2, 8), np.float32)),
     ["hx", "tuple (h_0, c_0)"]),
    (lambda: nn.GRU(4, 8, num_layers=2)(np.zeros((5, 4), np.float32),
                                         np.zeros((2, 1, 8), np.float32)),
     ["GRU", "h_0", "(2, 8)", "(2, 1, 8)", "2-D for unbatched"]),
    (lambda: nn.LSTM(4, 8, proj_size=2)(np.zeros((5, 2, 4), np.float32),
                                         (np.zeros((1, 2, 2), np.float32),
                                          np.zeros((1, 2, 2), np.float32))),
     ["c_0", "(1, 2, 8)", "(1, 2, 2)"]),
    (lambda: nn.GRUCell(4, 8)(np.zeros((2, 4), np.float32), np.zeros((3, 8), np.float32)),
     ["GRUCell", "h_0", "(2, 8)", "(3, 8)"]),
    (lambda: nn.RNNCell(4, 8)(np.zeros((2, 5), np.float32)), ["RNNCell", "input_size = 4"]),
    # PyTorch: "Expected sequence length to be larger than 0 in RNN".
    (lambda: nn.GRU(4, 8, batch_first=True)(np.zeros((2, 0, 4), np.float32)),
     ["GRU", "sequence length", "(2, 0, 4)"]),
    (lambda: nn.LSTM(4, 8)(np.zeros((0, 4), np.float32)), ["LSTM", "sequence length"]),
])
def test_bad_input_names_module_shapes_and_fix(call, words):
    with pytest.raises(BadInputError) as info:
        call()
    msg = str(info.value)
    for w in words:
        assert w in msg, (w, msg)
    assert isinstance(info.value, ValueError) and isinstance(info.value, RuntimeError)


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="proj_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="only supported for LSTM"):
        nn.RNNBase("GRU", 3, 4, proj_size=2)
    with pytest.raises(ValueError, match="dropout"):
        nn.RNN(3, 4, dropout=1.5)
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="hidden_size"):
        nn.GRU(3, 0)


def test_lengths_keyword_matches_packing_and_is_traceable():
    m = nn.LSTM(2, 3, num_layers=2, bidirectional=True, batch_first=True, dtype=np.float64)
    x = rng.normal(size=(3, 6, 2))
    lens = np.array([4, 6, 1])
    out, (h, c) = m(x, lengths=lens)
    p_out, (p_h, p_c) = m(rnn.pack_padded_sequence(x, lens, batch_first=True,
                                                   enforce_sorted=False))
    padded, _ = rnn.pad_packed_sequence(p_out, batch_first=True, total_length=6)
    np.testing.assert_allclose(out, padded, rtol=1e-12)
    np.testing.assert_allclose(h, p_h, rtol=1e-12)
    np.testing.assert_allclose(c, p_c, rtol=1e-12)
    traces = []

    def f(x, lens):
        traces.append(1)
        return m(x, lengths=lens)[1][0]

    jf = funcgrad.jit(f)
    np.testing.assert_allclose(jf(x, lens), h, rtol=1e-12)
    other = np.array([2, 3, 5])
    np.testing.assert_allclose(jf(x, other), m(x, lengths=other)[1][0], rtol=1e-12)
    assert len(traces) == 1  # one compiled program for every length pattern
    with pytest.raises(BadInputError, match="lengths"):
        m(x, lengths=np.array([7, 1, 1]))
    # Packing needs host lengths; a list of ints passed through jit is a list of traced
    # scalars: the same clear error as a traced array (it was NumPy's conversion error).
    for lengths in ([4, 6, 1], lens):
        with pytest.raises(TypeError, match="lengths must be concrete host integers"):
            funcgrad.jit(lambda x, n: rnn.pack_padded_sequence(x, n, batch_first=True,
                                                               enforce_sorted=False).data)(
                x, lengths)


def test_layers_packing_and_ctc_stay_on_the_test_device():
    from helpers import DEVICE, check_device, dev

    x = dev(rng.normal(size=(5, 2, 3)).astype(np.float32))
    for cls in (nn.LSTM, nn.GRU, nn.RNN):
        m = cls(3, 4, num_layers=2, bidirectional=True).to(DEVICE)
        check_device(m(x))
        check_device(m(x, lengths=dev(np.array([5, 3]))))
        p = rnn.pack_padded_sequence(x, [3, 5], enforce_sorted=False)
        check_device(rnn.pad_packed_sequence(m(p)[0])[0])
        check_device(nn.value_and_grad(lambda m: (m(x)[0] ** 2).sum())(m))
    check_device(nn.LSTMCell(3, 4).to(DEVICE)(x[0]))
    t = nn.Transformer(8, 2, 1, 1, 16).to(DEVICE)
    src = dev(rng.normal(size=(5, 2, 8)).astype(np.float32))
    mask = nn.Transformer.generate_square_subsequent_mask(5, device=DEVICE)
    check_device(t(src, src, tgt_mask=mask, src_key_padding_mask=dev(np.zeros((2, 5), bool))))
    lp = dev(np.log(np.full((6, 2, 4), 0.25)))
    check_device(nn.F.ctc_loss(lp, dev(np.array([1, 2, 3, 3])), [6, 6], [2, 2]))


def test_dropout_key_advances_under_module_jit():
    m = nn.GRU(3, 6, num_layers=3, dropout=0.4)
    x = rng.normal(size=(4, 2, 3)).astype(np.float32)
    f = nn.jit(lambda m, x: m(x)[0])
    key0 = m.rng_key.copy()
    a, b = f(m, x), f(m, x)
    assert not np.allclose(a, b)
    assert not np.array_equal(m.rng_key, key0)


@settings(deadline=None, max_examples=20)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=5), st.booleans(), st.booleans())
def test_pack_pad_round_trip(lengths, batch_first, enforce_sorted):
    if enforce_sorted:
        lengths = sorted(lengths, reverse=True)
    t = max(lengths)
    x = np.arange(t * len(lengths) * 2, dtype=np.float64).reshape(t, len(lengths), 2) + 1
    live = np.arange(t)[:, None] < np.array(lengths)[None, :]
    x = np.where(live[..., None], x, 0.0)
    if batch_first:
        x = np.swapaxes(x, 0, 1)
    p = rnn.pack_padded_sequence(x, lengths, batch_first=batch_first,
                                 enforce_sorted=enforce_sorted)
    assert p.data.shape == (sum(lengths), 2)
    assert p.batch_sizes.tolist() == [sum(n > i for n in lengths) for i in range(t)]
    back, lens = rnn.pad_packed_sequence(p, batch_first=batch_first)
    np.testing.assert_array_equal(back, x)
    assert lens.tolist() == lengths


def test_pad_sequence_takes_the_first_sequences_dtype_as_torch():
    # torch 2.13: pad_sequence([int64 (2,), float32 (1,)], padding_value=0.5) is int64
    # [[1, 1], [1, 0]]; [float32, float64] gives float32
    from funcgrad_nn.utils.rnn import pad_sequence

    out = pad_sequence([np.ones(2, np.int64), np.ones(1, np.float32)], padding_value=0.5)
    assert out.dtype == np.int64 and out.tolist() == [[1, 1], [1, 0]]
    out = pad_sequence([np.ones(1, np.float32), np.full(2, 0.1)], batch_first=True)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[1.0, 0.0], [0.1, 0.1]], rtol=1e-7)


# torch 2.13: nn.LSTM(4, 5)(int64 input) raises ValueError "RNN input dtype (torch.int64) does
# not match weight dtype (torch.float32)"; the cells raise RuntimeError ("mat1 and mat2 must
# have the same dtype"). Ours names the layer and both dtypes (BadInputError is both).
@pytest.mark.parametrize("make", [lambda: nn.RNN(4, 5), lambda: nn.GRU(4, 5),
                                  lambda: nn.LSTM(4, 5, batch_first=True),
                                  lambda: nn.RNNCell(4, 5), lambda: nn.GRUCell(4, 5),
                                  lambda: nn.LSTMCell(4, 5)])
@pytest.mark.parametrize("dtype", [np.int64, np.bool_])
def test_integer_input_to_a_floating_rnn_raises(make, dtype):
    layer = make()
    x = np.ones((2, 3, 4) if not type(layer).__name__.endswith("Cell") else (2, 4), dtype)
    with pytest.raises(ValueError, match=rf"{type(layer).__name__}: input dtype "
                                         rf"{np.dtype(dtype)} does not match weight dtype "
                                         r"float32") as info:
        layer(x)
    assert isinstance(info.value, RuntimeError)


def test_flat_weights_and_all_weights_names_as_pytorch():
    # torch 2.13, LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2)._all_weights:
    # per layer and direction [weight_ih, weight_hh, bias_ih, bias_hh, weight_hr]
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2)
    assert lstm._all_weights[1] == ["weight_ih_l0_reverse", "weight_hh_l0_reverse",
                                    "bias_ih_l0_reverse", "bias_hh_l0_reverse",
                                    "weight_hr_l0_reverse"]
    assert [w.shape for w in lstm._flat_weights[:5]] == [(16, 3), (16, 2), (16,), (16,),
                                                         (2, 4)]
    assert lstm._flat_weights[0] is lstm.weight_ih_l0


def test_constructor_errors_have_torchs_types():
    # torch 2.13: TypeError "hidden_size should be of type int, got: float"; GRU/RNN take
    # proj_size and raise ValueError "proj_size argument is only supported for LSTM"
    with pytest.raises(TypeError, match="hidden_size should be of type int"):
        nn.LSTM(3, 4.0)
    with pytest.raises(ValueError, match="hidden_size must be an integer >= 1"):
        nn.GRU(3, 0)
    for cls in (nn.GRU, nn.RNN):
        with pytest.raises(ValueError, match="only supported for LSTM"):
            cls(3, 4, proj_size=2)
    with pytest.raises(ValueError, match=r"in1_features must be > 0"):  # torch's, too
        nn.Bilinear(0, 2, 2)
