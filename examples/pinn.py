"""A physics-informed neural network: solve a boundary-value problem by putting the
differential equation itself in the loss, with second derivatives from ``grad(grad(...))``.

    python examples/pinn.py

Problem (Poisson in 1-D):  u''(x) = -pi^2 sin(pi x) on [0, 1],  u(0) = u(1) = 0,
whose solution is u(x) = sin(pi x). The network u(x; theta) is a small tanh MLP; its second
derivative in x at every collocation point is ``vmap(grad(grad(u)))`` and the loss is the mean
squared residual of the equation plus the boundary conditions. Training differentiates that
loss with respect to theta — third-order differentiation through the network — inside one
jit-compiled Adam step.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import funcgrad
import funcgrad.numpy as fnp
from funcgrad_nn import optim


def init_params(rng, sizes=(1, 24, 24, 1)):
    return [{"w": rng.standard_normal((m, n)) * np.sqrt(1.0 / m), "b": np.zeros(n)}
            for m, n in zip(sizes[:-1], sizes[1:])]


def u(params, x):
    """The network at one scalar point x."""
    h = fnp.reshape(x, (1,))
    for layer in params[:-1]:
        h = fnp.tanh(h @ layer["w"] + layer["b"])
    return (h @ params[-1]["w"] + params[-1]["b"])[0]


def forcing(x):
    return -np.pi ** 2 * fnp.sin(np.pi * x)


u_xx = funcgrad.vmap(funcgrad.grad(funcgrad.grad(u, argnums=1), argnums=1), in_axes=(None, 0))
u_batch = funcgrad.vmap(u, in_axes=(None, 0))


def loss(params, x):
    residual = u_xx(params, x) - forcing(x)
    boundary = u_batch(params, np.array([0.0, 1.0]))
    return fnp.mean(residual ** 2) + 10.0 * fnp.sum(boundary ** 2)


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2000)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    params = init_params(rng)
    x = np.linspace(0.0, 1.0, 64)

    # The second derivative is exact: compare with finite differences at one point.
    h, x0 = 1e-4, 0.3
    fd = (float(u(params, x0 + h)) - 2 * float(u(params, x0)) + float(u(params, x0 - h))) / h**2
    assert abs(float(u_xx(params, np.array([x0]))[0]) - fd) < 1e-4 * max(1.0, abs(fd))

    tx = optim.adam(optim.cosine_decay_schedule(1e-2, args.steps))
    state = tx.init(params)

    @funcgrad.jit
    def step(params, state, x):
        value, g = funcgrad.value_and_grad(loss)(params, x)
        updates, state = tx.update(g, state, params)
        return optim.apply_updates(params, updates), state, value

    start = time.perf_counter()
    for i in range(args.steps):
        params, state, value = step(params, state, x)
        if i % max(1, args.steps // 5) == 0 or i == args.steps - 1:
            print(f"  step {i:5d}  loss {float(value):.2e}")
    grid = np.linspace(0.0, 1.0, 201)
    err = float(np.max(np.abs(np.asarray(u_batch(params, grid)) - np.sin(np.pi * grid))))
    print(f"max |u - sin(pi x)| on [0, 1]: {err:.2e} after {args.steps} steps "
          f"({time.perf_counter() - start:.1f} s)")
    return err


if __name__ == "__main__":
    assert main() < 1e-2
