"""Per-example gradients with ``vmap(grad(...))``: gradient norms of every training example
in one vectorised call, and a differentially-private SGD step (clip each example's gradient,
add noise) built on them.

    python examples/per_example_grads.py

``grad`` differentiates the loss of ONE example; ``vmap`` maps that over the batch axis of the
data while sharing the parameters (``in_axes=(None, 0, 0)``). The result equals a Python loop
over examples, without the loop.
"""

from __future__ import annotations

import time

import numpy as np

import funcgrad
import funcgrad.numpy as fnp


def init_mlp(sizes, rng):
    return [{"w": rng.standard_normal((m, n)) / np.sqrt(m), "b": np.zeros(n)}
            for m, n in zip(sizes[:-1], sizes[1:])]


def predict(params, x):
    for layer in params[:-1]:
        x = fnp.tanh(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def example_loss(params, x, y):
    """Cross-entropy of one example (x: features, y: class index)."""
    logits = predict(params, x)
    return fnp.log(fnp.sum(fnp.exp(logits - fnp.max(logits)))) + fnp.max(logits) - logits[y]


per_example_grads = funcgrad.jit(funcgrad.vmap(funcgrad.grad(example_loss),
                                               in_axes=(None, 0, 0)))


def global_norms(grads):
    """The L2 norm of each example's whole gradient (all layers)."""
    leaves = funcgrad.tree_util.tree_leaves(grads)
    return np.sqrt(sum(np.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in leaves))


def dp_sgd_step(params, x, y, lr, clip, noise, rng):
    """One DP-SGD step: clip every example's gradient to norm <= clip, average, add noise."""
    grads = per_example_grads(params, x, y)
    scale = np.minimum(1.0, clip / (global_norms(grads) + 1e-12))
    n = len(x)

    def reduce(g):
        clipped = np.einsum("i,i...->...", scale, g) / n
        return clipped + noise * clip / n * rng.standard_normal(clipped.shape)

    mean = funcgrad.tree_util.tree_map(reduce, grads)
    return funcgrad.tree_util.tree_map(lambda p, g: p - lr * g, params, mean)


def main(steps: int = 300) -> None:
    rng = np.random.default_rng(0)
    centers = np.array([[0.0, 2.0], [-2.0, -1.0], [2.0, -1.0]])
    y = rng.integers(0, 3, 256)
    x = centers[y] + rng.normal(scale=0.8, size=(256, 2))
    params = init_mlp([2, 16, 3], rng)

    start = time.perf_counter()
    grads = per_example_grads(params, x, y)
    vmapped = time.perf_counter() - start
    start = time.perf_counter()
    check = 32  # a Python loop over the first examples, for comparison
    loop = [funcgrad.grad(example_loss)(params, x[i], y[i]) for i in range(check)]
    looped = (time.perf_counter() - start) * len(x) / check
    for layer in range(2):
        for k in ("w", "b"):
            stacked = np.stack([g[layer][k] for g in loop])
            assert np.allclose(grads[layer][k][:check], stacked, atol=1e-12)
    print(f"per-example gradients of {len(x)} examples: shapes "
          f"{[g['w'].shape for g in grads]} (vmap {vmapped * 1e3:.0f} ms incl. compile, "
          f"a Python loop ~{looped * 1e3:.0f} ms); identical to the loop")
    norms = global_norms(grads)
    print(f"gradient norms: median {np.median(norms):.3f}, max {norms.max():.3f} "
          f"(example {norms.argmax()})")

    noise_rng = np.random.default_rng(1)
    for _ in range(steps):
        idx = rng.choice(len(x), 64, replace=False)
        params = dp_sgd_step(params, x[idx], y[idx], lr=0.5, clip=1.0, noise=0.5,
                             rng=noise_rng)
    acc = float(np.mean(np.asarray(predict(params, x)).argmax(1) == y))
    print(f"DP-SGD (clip 1.0, noise 0.5), {steps} steps: train accuracy {acc:.3f}")
    assert acc > 0.8


if __name__ == "__main__":
    main()
