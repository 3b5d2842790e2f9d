"""``funcgrad.lax.linalg`` against values recorded from JAX 0.10.2 (x64): JAX's result
conventions (eigh's (vectors, values), lu's pivots and permutation, triangular_solve's
right-side default), and the transformations its implementations bring."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
from funcgrad.lax import linalg

_S = np.array([[4.0, 2.0, 0.6], [2.0, 5.0, 1.0], [0.6, 1.0, 3.0]])


def test_cholesky_and_eigh() -> None:
    assert_allclose(linalg.cholesky(dev(_S)),
                    np.array([[2.0, 0.0, 0.0], [1.0, 2.0, 0.0], [0.3, 0.35, 1.6695807857064]]))
    v, w = linalg.eigh(dev(_S))
    assert_allclose(w, np.array([2.3724689848089806, 2.7225082073229028, 6.905022807868116]))
    assert_allclose(host(v) @ np.diag(host(w)) @ host(v).T, _S)
    # Without symmetrize_input only the lower triangle is read.
    skew = _S + np.triu(np.ones((3, 3)), 1)
    assert_allclose(linalg.cholesky(dev(skew), symmetrize_input=False), linalg.cholesky(dev(_S)))
    _, w2 = linalg.eigh(dev(_S), subset_by_index=(1, 3))
    assert_allclose(w2, host(w)[1:])


def test_lu_and_pivots() -> None:
    x = np.array([[1.0, 2.0, 0.0], [3.0, 4.0, 1.0], [0.0, 5.0, 2.0]])
    f, piv, perm = linalg.lu(dev(x))
    assert_allclose(f, np.array([[3.0, 4.0, 1.0], [0.0, 5.0, 2.0],
                                 [1 / 3, 0.13333333333333336, -0.6000000000000001]]))
    assert host(piv).dtype == np.int32 and host(piv).tolist() == [1, 2, 2]
    assert host(perm).tolist() == [1, 2, 0]
    got = linalg.lu_pivots_to_permutation(dev(np.array([2, 2, 3], np.int32)), 5)
    assert host(got).tolist() == [2, 0, 3, 1, 4]
    jitted = funcgrad.jit(linalg.lu)(dev(x))
    assert host(jitted[2]).tolist() == [1, 2, 0]


def test_triangular_solve_sides_and_transposes() -> None:
    a, b = np.array([[2.0, 0.0], [1.0, 4.0]]), np.array([[2.0, 9.0], [4.0, 8.0]])
    # The default solves x @ a = b.
    assert_allclose(linalg.triangular_solve(dev(a), dev(b), lower=True),
                    np.array([[-0.125, 2.25], [1.0, 2.0]]))
    got = linalg.triangular_solve(dev(a), dev(b), left_side=True, lower=True, transpose_a=True)
    assert_allclose(got, np.array([[0.5, 3.5], [1.0, 2.0]]))
    g = funcgrad.grad(lambda b: funcgrad.numpy.sum(linalg.triangular_solve(
        dev(a), b, left_side=True, lower=True)))(dev(b))
    assert_allclose(g, np.linalg.solve(a.T, np.ones((2, 2))))


def test_qr_svd_tridiagonal() -> None:
    x = np.random.default_rng(0).standard_normal((4, 3))
    q, r = linalg.qr(dev(x))
    assert host(q).shape == (4, 4) and host(r).shape == (4, 3)
    assert_allclose(host(q) @ host(r), x)
    q, r = linalg.qr(dev(x), full_matrices=False)
    assert host(q).shape == (4, 3)
    with pytest.raises(ValueError, match="pivoting"):
        linalg.qr(dev(x), pivoting=True)
    u, s, vh = linalg.svd(dev(x))
    assert host(u).shape == (4, 4) and host(vh).shape == (3, 3)
    assert_allclose(linalg.svd(dev(x), compute_uv=False), np.linalg.svd(x, compute_uv=False))
    got = linalg.tridiagonal_solve(dev(np.array([0.0, 1.0, 1.0])), dev(np.full(3, 4.0)),
                                   dev(np.array([1.0, 1.0, 0.0])),
                                   dev(np.array([[1.0], [2.0], [3.0]])))
    assert_allclose(got, np.array([[0.17857142857142855], [0.28571428571428575],
                                   [0.6785714285714285]]))
