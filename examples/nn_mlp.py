"""Train a small MLP classifier with funcgrad_nn and a hand-written SGD step.

Run: pip install . && python examples/nn_mlp.py  (or PYTHONPATH=. from the repo root);
about a second of training on a CPU.
"""

import time

import numpy as np

import funcgrad_nn as nn

nn.manual_seed(0)
rng = np.random.default_rng(0)

# Synthetic 3-class data: three Gaussian blobs in 2-D.
centers = np.array([[0.0, 2.0], [-2.0, -1.0], [2.0, -1.0]])
y = rng.integers(0, 3, size=600)
x = (centers[y] + rng.normal(scale=0.7, size=(600, 2))).astype(np.float32)

model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 3))


def loss_fn(m, xb, yb):
    return nn.F.cross_entropy(m(xb), yb)


# nn.jit traces once; nn.value_and_grad returns grads shaped like the model and
# writes Dropout's advanced key back after every step.
step = nn.jit(nn.value_and_grad(loss_fn))
lr = 0.1
start = time.perf_counter()
for epoch in range(20):
    perm = rng.permutation(len(x))
    for i in range(0, len(x), 50):
        idx = perm[i:i + 50]
        loss, grads = step(model, x[idx], y[idx])
        for p, g in zip(model.parameters(), nn.tree_leaves(grads)):
            p -= lr * g  # in place: the model sees the update
    if epoch % 5 == 4:
        print(f"epoch {epoch + 1:2d}  loss {float(loss):.4f}")

model.eval()
acc = float((np.asarray(model(x)).argmax(1) == y).mean())
print(f"train accuracy {acc:.3f} in {time.perf_counter() - start:.2f}s")
assert acc > 0.9
