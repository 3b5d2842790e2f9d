"""banded_solve_p (banded LU with partial pivoting on the host, LAPACK's gbsv) against
scipy.linalg.solve_banded and dense solves, its derivatives and batching, and the front ends
scipy.linalg.solve_banded and lax.linalg.tridiagonal_solve (values recorded from JAX 0.10.2)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.linalg as sl
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.scipy.linalg as fsl
from funcgrad.lax import linalg as lax_linalg
from funcgrad.ops.banded import band_matvec, banded_solve
from funcgrad.test_util import check_grads


def _dense(ab: np.ndarray, lower: int, upper: int) -> np.ndarray:
    n = ab.shape[-1]
    a = np.zeros((n, n), ab.dtype)
    for i in range(n):
        for j in range(max(0, i - lower), min(n, i + upper + 1)):
            a[i, j] = ab[upper + i - j, j]
    return a


@pytest.mark.parametrize("lower,upper,n", [(0, 0, 3), (1, 1, 6), (2, 1, 7), (0, 3, 5),
                                           (3, 2, 2), (2, 2, 1)])
@pytest.mark.parametrize("complex_", [False, True])
def test_as_scipy_and_dense(lower, upper, n, complex_) -> None:
    rng = np.random.default_rng(lower * 10 + upper + n)
    ab = rng.normal(size=(lower + upper + 1, n)) + (1j * rng.normal(size=(lower + upper + 1, n))
                                                    if complex_ else 0)
    ab[upper] *= 0.01                       # small diagonal: the pivoting swaps rows
    b = rng.normal(size=(n, 2)) + (1j if complex_ else 0)
    got = banded_solve(dev(ab), dev(b), lower=lower, upper=upper)
    assert_allclose(got, sl.solve_banded((lower, upper), ab, b), rtol=1e-10, atol=1e-10)
    a = _dense(ab, lower, upper)
    got_t = banded_solve(dev(ab), dev(b), lower=lower, upper=upper, transpose_a=True)
    assert_allclose(got_t, np.linalg.solve(a.T, b), rtol=1e-10, atol=1e-10)
    assert_allclose(band_matvec(dev(ab), dev(b), lower=lower, upper=upper), a @ b,
                    rtol=1e-12, atol=1e-12)
    assert_allclose(band_matvec(dev(ab), dev(b), lower=lower, upper=upper, transpose_a=True),
                    a.T @ b, rtol=1e-12, atol=1e-12)


def test_derivatives_batches_and_singular() -> None:
    rng = np.random.default_rng(5)
    ab = rng.normal(size=(4, 6))
    ab[2] += 4.0
    b = rng.normal(size=(6, 2))
    for t in (False, True):
        check_grads(lambda m, v, t=t: banded_solve(m, v, lower=1, upper=2, transpose_a=t),
                    dev((ab, b)), order=2, modes=("fwd", "rev"))
    abs_, bs = rng.normal(size=(3, 4, 6)) + np.array([0, 0, 4.0, 0])[:, None], b
    got = funcgrad.jit(funcgrad.vmap(lambda m: banded_solve(m, dev(bs), lower=1, upper=2)))(
        dev(abs_))
    for i in range(3):
        assert_allclose(host(got)[i], sl.solve_banded((1, 2), abs_[i], bs), rtol=1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        sing = host(banded_solve(dev(np.zeros((3, 3))), dev(np.ones((3, 1))), lower=1, upper=1))
    assert not np.isfinite(sing).any()          # inf/NaN where SciPy raises, as solve's


def test_solve_banded_front_end() -> None:
    rng = np.random.default_rng(6)
    ab = rng.normal(size=(4, 9))
    b = rng.normal(size=9)
    assert_allclose(fsl.solve_banded((2, 1), dev(ab), dev(b)), sl.solve_banded((2, 1), ab, b),
                    rtol=1e-10, atol=1e-10)
    g = funcgrad.grad(lambda m: (fsl.solve_banded((2, 1), m, dev(b)) ** 2).sum())(dev(ab))
    eps = 1e-6
    e = np.zeros_like(ab)
    e[2, 4] = eps
    fd = ((sl.solve_banded((2, 1), ab + e, b) ** 2).sum()
          - (sl.solve_banded((2, 1), ab - e, b) ** 2).sum()) / (2 * eps)
    assert_allclose(host(g)[2, 4], fd, rtol=1e-6)


@pytest.mark.parametrize("lower", [False, True])
def test_solveh_banded_mirrors_the_band(lower) -> None:
    rng = np.random.default_rng(8)
    n, k = 7, 2
    m = rng.normal(size=(n, n)) + 1j * rng.normal(size=(n, n))
    a = m @ m.conj().T + 3 * n * np.eye(n)
    a[np.abs(np.subtract.outer(np.arange(n), np.arange(n))) > k] = 0
    ab = np.array([[a[j + d, j] if j + d < n else 0 for j in range(n)] for d in range(k + 1)]
                  if lower else
                  [[a[j - k + s, j] if j - k + s >= 0 else 0 for j in range(n)]
                   for s in range(k + 1)])
    b = rng.normal(size=n)
    assert_allclose(fsl.solveh_banded(dev(ab), dev(b), lower=lower),
                    sl.solveh_banded(ab, b, lower=lower), rtol=1e-10, atol=1e-12)
    cb = sl.cholesky_banded(ab, lower=lower)   # two band triangular solves
    assert_allclose(fsl.cho_solve_banded((dev(cb), lower), dev(b)),
                    sl.cho_solve_banded((cb, lower), b), rtol=1e-10, atol=1e-12)
    # a stored off-diagonal entry is both a[i, j] and conj(a[j, i]): SciPy's finite difference
    real = ab.real.copy()
    g = funcgrad.grad(lambda v: (fsl.solveh_banded(v, dev(b), lower=lower) ** 2).sum())(
        dev(real))
    e = np.zeros_like(real)
    e[1, 3] = 1e-6
    fd = ((sl.solveh_banded(real + e, b, lower=lower) ** 2).sum()
          - (sl.solveh_banded(real - e, b, lower=lower) ** 2).sum()) / 2e-6
    assert_allclose(host(g)[1, 3], fd, rtol=1e-6)


def test_tridiagonal_solve_as_jax_in_linear_memory() -> None:
    dl = np.array([0.0, 1.0, -2.0, 0.5])
    d = np.array([0.1, 3.0, 1.0, -2.0])
    du = np.array([2.0, -1.0, 4.0, 0.0])
    b = np.array([[1.0, 0.0], [2.0, 1.0], [-1.0, 3.0], [0.5, 2.0]])
    # jax.lax.linalg.tridiagonal_solve (0.10.2) and the gradient of its squared sum in d
    want = [[1.1111111111111112, 5.0], [0.44444444444444453, -0.2500000000000001],
            [0.44444444444444453, 3.25], [-0.1388888888888889, -0.18750000000000006]]
    want_grad = [40.838263031550085, 1.6405339077503445, -28.64221375600138,
                 3.72099381644376]
    assert_allclose(lax_linalg.tridiagonal_solve(*dev((dl, d, du, b))), np.array(want),
                    rtol=1e-12, atol=1e-12)
    g = funcgrad.grad(lambda v: (lax_linalg.tridiagonal_solve(dev(dl), v, dev(du), dev(b))
                                 ** 2).sum())(dev(d))
    assert_allclose(g, np.array(want_grad), rtol=1e-10)
    n = 10_000                                   # a dense matrix would be 800 MB
    rng = np.random.default_rng(7)
    x = lax_linalg.tridiagonal_solve(*dev((rng.normal(size=n), rng.normal(size=n) + 4.0,
                                           rng.normal(size=n), rng.normal(size=(n, 1)))))
    assert host(x).shape == (n, 1) and np.isfinite(host(x)).all()


def test_tridiagonal_solve_singular_as_jax() -> None:
    # jax.lax.linalg.tridiagonal_solve (0.10.2): NaN for the whole solution of a singular
    # matrix; perturb_singular=True makes a zero pivot eps * max|a| (the smallest normal
    # number for a zero matrix)
    z, ones = np.zeros(3), np.ones((3, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = host(lax_linalg.tridiagonal_solve(*dev((z, np.array([1.0, 0.0, 1.0]), z, ones))))
    assert np.isnan(got).all()
    got = lax_linalg.tridiagonal_solve(*dev((z, z, z, ones)), perturb_singular=True)
    assert_allclose(got, np.full((3, 1), 4.49423283715579e+307), rtol=1e-12)
    got = lax_linalg.tridiagonal_solve(*dev((z, np.array([-0.0, 5.0, 7.0]), z, ones)),
                                       perturb_singular=True)
    assert_allclose(got, np.array([[-643371375338642.2], [0.2], [1 / 7]]), rtol=1e-12)

