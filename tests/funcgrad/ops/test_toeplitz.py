"""toeplitz_solve_p (Levinson's recursion on the host, a dense solve where it breaks down)
against dense solves and scipy.linalg.solve_toeplitz, its FFT matvec, derivatives and
batching."""

from __future__ import annotations

import numpy as np
import scipy.linalg as sl
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.scipy.linalg as fsl
from funcgrad.ops.toeplitz import toeplitz_matvec, toeplitz_solve
from funcgrad.test_util import check_grads


def test_as_dense_solves_real_and_complex() -> None:
    rng = np.random.default_rng(0)
    for n, complex_ in ((1, False), (2, True), (5, False), (8, True)):
        c = rng.normal(size=n) + (1j * rng.normal(size=n) if complex_ else 0)
        r = rng.normal(size=n) + (1j * rng.normal(size=n) if complex_ else 0)
        c[0] += 3.0
        b = rng.normal(size=(n, 2)) + (1j if complex_ else 0)
        t = sl.toeplitz(c, np.concatenate([c[:1], r[1:]]))
        assert_allclose(toeplitz_solve(*dev((c, r, b))), np.linalg.solve(t, b), rtol=1e-10,
                        atol=1e-12)
        assert_allclose(toeplitz_matvec(*dev((c, r, b))), t @ b, rtol=1e-12, atol=1e-12)


def test_a_singular_leading_minor_falls_back_to_a_dense_solve() -> None:
    # Levinson needs every leading minor nonsingular (SciPy raises here); t itself is not
    c, r = np.array([0.0, 1.0, 2.0]), np.array([0.0, 3.0, 4.0])
    got = toeplitz_solve(*dev((c, r, np.ones((3, 1)))))
    assert_allclose(got, np.linalg.solve(sl.toeplitz(c, r), np.ones((3, 1))), rtol=1e-12)
    assert_allclose(fsl.solve_toeplitz((dev(c), dev(r)), dev(np.ones(3))),
                    np.array([5 / 11, 1 / 11, 2 / 11]), rtol=1e-12)


def test_derivatives_and_batches() -> None:
    rng = np.random.default_rng(1)
    c, r, b = rng.normal(size=5), rng.normal(size=5), rng.normal(size=(5, 2))
    c[0] += 4.0
    check_grads(toeplitz_solve, dev((c, r, b)), order=2, modes=("fwd", "rev"))
    cs = rng.normal(size=(3, 5)) + np.array([4.0, 0, 0, 0, 0])
    got = funcgrad.jit(funcgrad.vmap(toeplitz_solve, (0, None, None)))(*dev((cs, r, b)))
    for i in range(3):
        t = sl.toeplitz(cs[i], np.concatenate([cs[i, :1], r[1:]]))
        assert_allclose(host(got)[i], np.linalg.solve(t, b), rtol=1e-10, atol=1e-12)


def test_solve_toeplitz_front_end_as_scipy() -> None:
    rng = np.random.default_rng(2)
    n = 2000                                  # Levinson: no (n, n) matrix
    c, r = 0.1 * rng.normal(size=n), 0.1 * rng.normal(size=n)
    c[0] = r[0] = 5.0
    b = rng.normal(size=n)
    assert_allclose(fsl.solve_toeplitz((dev(c), dev(r)), dev(b)),
                    sl.solve_toeplitz((c, r), b), rtol=1e-9, atol=1e-11)
    g = funcgrad.grad(lambda v: (fsl.solve_toeplitz(v, dev(b[:6])) ** 2).sum())(dev(c[:6]))
    e = np.zeros(6)
    e[2] = 1e-6
    fd = ((sl.solve_toeplitz(c[:6] + e, b[:6]) ** 2).sum()
          - (sl.solve_toeplitz(c[:6] - e, b[:6]) ** 2).sum()) / 2e-6
    assert_allclose(host(g)[2], fd, rtol=1e-6)
