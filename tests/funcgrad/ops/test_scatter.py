"""The scatter primitives' derivatives where indices repeat: ``scatter_mul`` with respect to
the updates (the product of the other updates at each position, exact with zeros)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
from funcgrad.ops import reductions as red
from funcgrad.ops import scatter as sc
from funcgrad.ops.indexing import FULL, Operand
from funcgrad.test_util import check_grads, check_jit, check_vmap

IDX = np.array([1, 3, 1, 1, 0, 3])
X = np.array([1.5, -2.0, 0.7, 1.1])


def _brute_jacobian(x, u, idx):
    jac = np.zeros((x.size, u.size))
    for j, p in enumerate(idx):
        jac[p, j] = x[p] * np.prod([u[k] for k in range(u.size) if idx[k] == p and k != j])
    return jac


def _brute_hessian(x, u, idx):
    """Hessian of ``sum(scatter_mul(x, u, idx))`` with respect to ``u``."""
    h = np.zeros((u.size, u.size))
    for j, p in enumerate(idx):
        for k, q in enumerate(idx):
            if j != k and p == q:
                h[j, k] = x[p] * np.prod([u[i] for i in range(u.size)
                                          if idx[i] == p and i not in (j, k)])
    return h


@pytest.mark.parametrize("u", [
    np.array([2.0, 3.0, -1.0, 0.5, 4.0, 1.2]),
    np.array([2.0, 0.0, -1.0, 0.0, 4.0, 1.2]),   # one zero in a group of three
    np.array([0.0, 3.0, 0.0, 0.5, 4.0, 0.0]),    # two zeros in one group
])
def test_scatter_mul_repeated_update_derivatives_exact(u):
    def f(v, w):
        return sc.scatter_mul(v, w, dev(IDX), indexer=(Operand(0),))

    x, ud = dev(X), dev(u)
    check_grads(f, (x, ud), order=2)
    assert_allclose(host(funcgrad.jacrev(f, 1)(x, ud)), _brute_jacobian(X, u, IDX))
    assert_allclose(host(funcgrad.jacfwd(f, 1)(x, ud)), _brute_jacobian(X, u, IDX))
    hess = funcgrad.hessian(lambda w: red.reduce_sum(f(x, w)))(ud)
    assert_allclose(host(hess), _brute_hessian(X, u, IDX))


def test_scatter_mul_repeated_rows_broadcast_jit_vmap():
    rng = np.random.default_rng(0)
    x, u = dev(rng.normal(size=(3, 4))), dev(rng.normal(size=(3, 4)))
    idx = dev(np.array([2, 0, 2]))

    def f(v, w):
        return sc.scatter_mul(v, w, idx, indexer=(Operand(0), FULL))

    check_grads(f, (x, u), order=2)
    check_grads(lambda w: sc.scatter_mul(x, w, idx, indexer=(Operand(0), FULL)),
                (dev(np.float64(1.3)),), order=2)
    g = funcgrad.grad(lambda w: red.reduce_sum(f(x, w)))
    check_jit(g, (u,))
    check_vmap(g, (dev(rng.normal(size=(2, 3, 4))),))


def test_scatter_mul_repeated_traced_indices_and_drop():
    x, u = dev(X), dev(np.array([2.0, 3.0, 4.0, 5.0]))

    def f(w, i):
        return red.reduce_sum(sc.scatter_mul(x, w, i, indexer=(Operand(0),), mode="fill"))

    idx = np.array([1, 9, 1, -1])
    g = host(funcgrad.jit(funcgrad.grad(f))(u, dev(idx)))
    assert_allclose(g, np.array([X[1] * 4.0, 0.0, X[1] * 2.0, X[3]]))
    check_grads(lambda w: f(w, dev(idx)), (u,), order=2)
