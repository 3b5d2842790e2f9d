"""Classify variable-length token sequences with an LSTM over packed sequences.

Task: does token 1 occur more often than token 2? The model must count over the whole
sequence, and sequences have different lengths (5 to 12 steps), so they are padded into one
batch and the LSTM gets ``lengths=``: its final state is each sequence's own last step,
never a padding step. (``pack_padded_sequence`` gives the same numbers; its lengths are
static, so under ``jit`` each new length pattern would compile again, while ``lengths=`` is
traced: one compiled step serves every batch.)

Run: pip install . && python examples/seq_lstm.py  (or PYTHONPATH=. from the repo root);
a few seconds of training on a CPU.
"""

import time

import numpy as np

import funcgrad_nn as nn

nn.manual_seed(0)
rng = np.random.default_rng(0)
VOCAB, MAX_LEN = 4, 12


def make_batch(n):
    lengths = rng.integers(5, MAX_LEN + 1, n)
    tokens = rng.integers(0, VOCAB, (n, MAX_LEN))
    tokens[np.arange(MAX_LEN)[None, :] >= lengths[:, None]] = 0  # padding
    live = np.arange(MAX_LEN)[None, :] < lengths[:, None]
    label = ((tokens == 1) & live).sum(1) > ((tokens == 2) & live).sum(1)
    return tokens, lengths, label.astype(np.int64)


class Counter(nn.Module):
    def __init__(self, hidden=24):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 8)
        self.lstm = nn.LSTM(8, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 2)

    def forward(self, tokens, lengths):
        _, (h_n, _) = self.lstm(self.embed(tokens), lengths=lengths)
        return self.head(h_n[-1])


def loss_fn(model, tokens, lengths, label):
    return nn.F.cross_entropy(model(tokens, lengths), label)


model = Counter()
opt = nn.optim.Adam(model.parameters(), lr=0.02)
step = nn.jit(nn.value_and_grad(loss_fn))
start = time.perf_counter()
for i in range(60):
    loss, grads = step(model, *make_batch(64))
    opt.step(grads)
    if i % 20 == 19:
        print(f"step {i + 1:3d}  loss {float(loss):.4f}")

tokens, lengths, label = make_batch(500)
acc = float((np.asarray(model(tokens, lengths)).argmax(1) == label).mean())
print(f"held-out accuracy {acc:.3f} after {time.perf_counter() - start:.1f}s")
assert acc > 0.8, acc
