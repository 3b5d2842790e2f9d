"""Sequence models as a PyTorch user writes them train (the loss falls), eagerly and under
``funcgrad_nn.jit``: an LSTM tagger, a GRU forecaster, a Transformer encoder classifier."""

import numpy as np
import pytest

import funcgrad_nn as nn
from funcgrad_nn import functional as F

rng = np.random.default_rng(0)


class Tagger(nn.Module):
    """Tag each token with whether it equals the previous token (needs memory)."""

    def __init__(self, vocab=6, hidden=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, 8)
        self.lstm = nn.LSTM(8, hidden, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden, 2)

    def forward(self, tokens):
        out, _ = self.lstm(self.embed(tokens))
        return self.head(out)


def _tagging_data():
    tokens = rng.integers(0, 3, (16, 10))
    tags = np.zeros_like(tokens)
    tags[:, 1:] = tokens[:, 1:] == tokens[:, :-1]
    return tokens, tags


def _tagger_loss(m, tokens, tags):
    logits = m(tokens)
    return F.cross_entropy(logits.reshape(-1, 2), tags.reshape(-1))


class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(1, 16, num_layers=2)
        self.out = nn.Linear(16, 1)

    def forward(self, x):
        h, _ = self.gru(x)
        return self.out(h[-1])


def _forecast_data():
    phase = rng.uniform(0, 2 * np.pi, (1, 32, 1))
    t = np.arange(13)[:, None, None] * 0.5
    wave = np.sin(t + phase).astype(np.float32)  # (T + 1, batch, 1)
    return wave[:-1], wave[-1]


def _forecast_loss(m, x, y):
    return F.mse_loss(m(x), y)


class EncoderClassifier(nn.Module):
    """Classify whether token 1 occurs in a padded sequence."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(5, 16)
        self.encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True), 2)
        self.head = nn.Linear(16, 2)

    def forward(self, tokens, pad):
        h = self.encoder(self.embed(tokens), src_key_padding_mask=pad)
        keep = (~pad)[..., None].astype(h.dtype)
        return self.head((h * keep).sum(1) / keep.sum(1))


def _classify_data():
    tokens = rng.integers(2, 5, (24, 7))
    lengths = rng.integers(3, 8, 24)
    label = rng.integers(0, 2, 24)
    for i in range(24):
        if label[i]:
            tokens[i, rng.integers(0, lengths[i])] = 1
    pad = np.arange(7)[None, :] >= lengths[:, None]
    tokens[pad] = 0
    return tokens, pad, label


def _classify_loss(m, tokens, pad, label):
    return F.cross_entropy(m(tokens, pad), label)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("make, data, loss_fn, lr, steps, factor", [
    (Tagger, _tagging_data, _tagger_loss, 0.03, 40, 0.5),
    (Forecaster, _forecast_data, _forecast_loss, 0.01, 40, 0.5),
    (EncoderClassifier, _classify_data, _classify_loss, 0.01, 40, 0.7),
], ids=["lstm_tagger", "gru_forecaster", "transformer_classifier"])
def test_sequence_model_trains(make, data, loss_fn, lr, steps, factor, jit):
    nn.manual_seed(0)
    model = make()
    batch = data()
    opt = nn.optim.Adam(model.parameters(), lr=lr)
    step = nn.value_and_grad(loss_fn)
    if jit:
        step = nn.jit(step)
    losses = []
    for _ in range(steps):
        loss, grads = step(model, *batch)
        opt.step(grads)
        losses.append(float(loss))
    assert np.isfinite(losses).all()
    assert np.mean(losses[-5:]) < factor * np.mean(losses[:3]), losses
