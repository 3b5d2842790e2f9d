"""Newton's method with an exact Hessian: minimise the Rosenbrock function and fit a logistic
regression, watching the quadratic convergence.

    python examples/newton_hessian.py

``funcgrad.hessian(f)`` is forward-over-reverse differentiation of ``f``; each Newton step
solves ``H p = -g`` and backtracks along ``p`` until the function decreases (a damped Newton
method), so the iterates converge from far away and, near the minimum, the number of correct
digits doubles every step.
"""

from __future__ import annotations

import numpy as np

import funcgrad
import funcgrad.numpy as fnp


def rosenbrock(z):
    x, y = z[0], z[1]
    return (1.0 - x) ** 2 + 100.0 * (y - x ** 2) ** 2


def newton(f, z0, tol=1e-12, max_iter=50, verbose=True):
    """Damped Newton: exact gradient and Hessian from funcgrad, backtracking line search."""
    value_and_grad = funcgrad.jit(funcgrad.value_and_grad(f))
    hessian = funcgrad.jit(funcgrad.hessian(f))
    z = np.asarray(z0, dtype=np.float64)
    for it in range(max_iter):
        value, g = value_and_grad(z)
        gnorm = float(np.linalg.norm(g))
        if verbose:
            print(f"  iter {it:2d}  f = {float(value):.3e}  |grad| = {gnorm:.3e}")
        if gnorm < tol:
            return z, it
        h = np.asarray(hessian(z))
        try:
            step = np.linalg.solve(h, -np.asarray(g))
        except np.linalg.LinAlgError:
            step = -np.asarray(g)
        if float(np.dot(step, g)) >= 0:  # not a descent direction: fall back to the gradient
            step = -np.asarray(g)
        t = 1.0
        while float(f(z + t * step)) > float(value) + 1e-4 * t * float(np.dot(g, step)):
            t *= 0.5
            if t < 1e-12:
                break
        z = z + t * step
    return z, max_iter


def logistic_data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 3))
    w_true = np.array([1.5, -2.0, 0.5])
    y = (rng.random(n) < 1 / (1 + np.exp(-(x @ w_true)))).astype(np.float64)
    return x, y


def main() -> None:
    # The Hessian is exact: compare with the closed form at a point.
    x0, y0 = 0.3, -0.7
    exact = np.array([[2 - 400 * (y0 - x0 ** 2) + 800 * x0 ** 2, -400 * x0], [-400 * x0, 200.0]])
    assert np.allclose(funcgrad.hessian(rosenbrock)(np.array([x0, y0])), exact, rtol=1e-12)

    print("Rosenbrock from (-1.2, 1):")
    z, iters = newton(rosenbrock, [-1.2, 1.0])
    print(f"  minimum at {z} after {iters} Newton steps")
    assert np.allclose(z, [1.0, 1.0], atol=1e-8)

    x, y = logistic_data()

    def nll(w):  # mean negative log-likelihood with a small ridge term
        logits = x @ w
        return fnp.mean(fnp.logaddexp(0.0, logits) - y * logits) + 1e-3 * fnp.sum(w ** 2)

    print("logistic regression (3 weights, 200 examples):")
    w, iters = newton(nll, np.zeros(3))
    g = funcgrad.grad(nll)(w)
    print(f"  weights {np.round(w, 4)} after {iters} steps, |grad| = {np.linalg.norm(g):.1e}")
    assert np.linalg.norm(g) < 1e-10


if __name__ == "__main__":
    main()
