"""Singular and non-positive-definite input, as JAX 0.10.2 treats it: ``cholesky`` gives NaN
in the lower triangle, ``solve``/``inv`` give LU's inf/NaN (NumPy raises ``LinAlgError``;
traced code cannot catch it), and ``det``'s derivative at a singular matrix is the adjugate.
Expected values were recorded from JAX 0.10.2 (x64) on the CPU."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.lax.linalg as fll
import funcgrad.numpy as fnp
import funcgrad.scipy.linalg as fsl

NAN = np.nan
K2 = np.array([[1.0, 2.0], [2.0, 1.0]])  # indefinite
K3 = np.array([[4.0, 2.0, 0.0], [2.0, 5.0, 1.0], [0.0, 1.0, -3.0]])  # fails at the last pivot
NAN_LOWER3 = np.array([[NAN, 0, 0], [NAN, NAN, 0], [NAN, NAN, NAN]])


def _same(got, want) -> None:
    """The same inf/NaN pattern and values; finite values to the last bits, where cuSOLVER
    may differ from LAPACK (docs/backends.md: its trsm multiplies by the reciprocal of the
    diagonal, so 5 / 3 comes out one ulp below)."""
    got = host(got)
    assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype
    assert_allclose(got, want, rtol=4 * np.finfo(got.real.dtype).eps, atol=0)  # NaN == NaN


@pytest.mark.parametrize("chol", [
    fnp.linalg.cholesky,
    funcgrad.jit(fnp.linalg.cholesky),
    fll.cholesky,
    funcgrad.jit(fll.cholesky),
])
def test_cholesky_of_an_indefinite_matrix_is_nan_in_the_lower_triangle(chol) -> None:
    # JAX: jnp.linalg.cholesky(K2) == [[nan, 0], [nan, nan]], eager and under jit.
    _same(chol(dev(K2)), np.array([[NAN, 0.0], [NAN, NAN]]))
    _same(chol(dev(K3)), NAN_LOWER3)


def test_cholesky_nan_is_per_matrix_in_a_stack_and_under_vmap() -> None:
    stack = dev(np.stack([K3, 4 * np.eye(3)]))
    want = np.stack([NAN_LOWER3, 2 * np.eye(3)])
    _same(fnp.linalg.cholesky(stack), want)
    _same(funcgrad.vmap(fnp.linalg.cholesky)(stack), want)
    _same(funcgrad.jit(funcgrad.vmap(fll.cholesky))(stack), want)


def test_cholesky_nan_cases_as_jax() -> None:
    # positive semidefinite but singular, NaN input, complex, float32, upper factors
    _same(fnp.linalg.cholesky(dev(np.diag([0.0, 1.0]))), np.array([[NAN, 0.0], [NAN, NAN]]))
    _same(fnp.linalg.cholesky(dev(np.diag([NAN, 1.0]))), np.array([[NAN, 0.0], [NAN, NAN]]))
    nanc = complex(NAN, NAN)
    _same(fnp.linalg.cholesky(dev(np.array([[1.0, 2j], [-2j, 1.0]]))),
          np.array([[nanc, 0j], [nanc, nanc]]))
    _same(fnp.linalg.cholesky(dev(K2.astype(np.float32))),
          np.array([[NAN, 0.0], [NAN, NAN]], np.float32))
    _same(fnp.linalg.cholesky(dev(K2), upper=True), np.array([[NAN, NAN], [0.0, NAN]]))
    # jax.scipy.linalg.cholesky/cho_factor (upper by default): NaN above, zeros below
    _same(fsl.cholesky(dev(K3)), NAN_LOWER3.T)
    c, lower = fsl.cho_factor(dev(K3))
    _same(c, NAN_LOWER3.T)
    assert lower is False
    # jax.scipy.linalg.solve(assume_a="pos") of an indefinite matrix: all NaN
    _same(fsl.solve(dev(K3), dev(np.ones((3, 2))), assume_a="pos"), np.full((3, 2), NAN))


def test_gaussian_process_jitter_loop_under_jit() -> None:
    # The pattern the NaN exists for: retry with jitter when the factor has NaN, traced.
    def factor(k):
        low = fnp.linalg.cholesky(k)
        jittered = fnp.linalg.cholesky(k + 3.5 * fnp.eye(k.shape[0]))
        return fnp.where(fnp.isnan(low).any(), jittered, low)

    got = host(funcgrad.jit(factor)(dev(K2)))
    assert_allclose(got, np.linalg.cholesky(K2 + 3.5 * np.eye(2)), rtol=1e-12, atol=0)
    assert_allclose(host(funcgrad.jit(factor)(dev(4 * np.eye(2)))), 2 * np.eye(2), rtol=0, atol=0)


def test_inv_and_solve_of_a_singular_matrix_give_lus_inf_and_nan() -> None:
    # jnp.linalg values (LAPACK getrf + getrs with the zero pivot left in U)
    rank1 = np.array([[1.0, 2.0], [2.0, 4.0]])
    _same(fnp.linalg.inv(dev(rank1)), np.array([[-np.inf, np.inf], [np.inf, -np.inf]]))
    _same(fnp.linalg.solve(dev(rank1), dev(np.ones((2, 2)))),
          np.array([[-np.inf, -np.inf], [np.inf, np.inf]]))
    _same(fnp.linalg.solve(dev(np.zeros((3, 3))), dev(np.array([1.0, 2.0, 3.0]))),
          np.array([NAN, NAN, np.inf]))
    _same(fnp.linalg.inv(dev(np.zeros((3, 3)))),
          np.array([[NAN, NAN, NAN], [NAN, NAN, NAN], [NAN, NAN, np.inf]]))
    _same(funcgrad.jit(fnp.linalg.inv)(dev(np.array([[0.0, 1.0], [0.0, 1.0]]))),
          np.array([[np.inf, -np.inf], [0.0, 1.0]]))
    # CuPy's inv factors a^T (C order), giving [[-inf, inf], [nan, nan]] here; the strict
    # backend models that: funcgrad's inv is LU of a (LAPACK's, JAX's) on every backend
    nonsym = np.array([[0.0, 1.0], [0.0, 1.0]])
    _same(fnp.linalg.inv(dev(nonsym)), np.array([[np.inf, -np.inf], [0.0, 1.0]]))
    _same(funcgrad.vmap(fnp.linalg.inv)(dev(np.stack([nonsym, np.eye(2)]))),
          np.array([[[np.inf, -np.inf], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]]]))
    _same(fnp.linalg.matrix_power(dev(rank1), -2), np.array([[np.inf, -np.inf], [-np.inf, np.inf]]))
    # only the singular matrix of a stack is affected
    _same(fnp.linalg.inv(dev(np.stack([np.zeros((2, 2)), 2 * np.eye(2)]))),
          np.stack([np.array([[NAN, NAN], [NAN, np.inf]]), 0.5 * np.eye(2)]))
    _same(fsl.solve(dev(rank1), dev(np.ones(2))), np.array([-np.inf, np.inf]))


def test_det_gradient_at_a_singular_matrix_is_the_adjugate() -> None:
    # jax.grad(jnp.linalg.det) values; the transpose of the adjugate
    cases = [
        (np.array([[1.0, 2.0], [2.0, 4.0]]), np.array([[4.0, -2.0], [-2.0, 1.0]])),
        (np.diag([1.0, 2.0, 0.0]), np.diag([0.0, 0.0, 2.0])),
        (np.zeros((3, 3)), np.zeros((3, 3))),
        (np.zeros((1, 1)), np.ones((1, 1))),
        # the zero pivot is not the last one: finite differences give [[1, 0], [-1, 0]]
        # (JAX's LU cofactor rule gives 0 here)
        (np.array([[0.0, 1.0], [0.0, 1.0]]), np.array([[1.0, 0.0], [-1.0, 0.0]])),
    ]
    for a, want in cases:
        assert_allclose(host(funcgrad.grad(fnp.linalg.det)(dev(a))), want, rtol=1e-12, atol=1e-12)
        assert_allclose(host(funcgrad.jit(funcgrad.grad(fnp.linalg.det))(dev(a))), want,
                        rtol=1e-12, atol=1e-12)
    stack = dev(np.stack([np.diag([1.0, 2.0, 0.0]), np.diag([1.0, 2.0, 3.0])]))
    assert_allclose(host(funcgrad.vmap(funcgrad.grad(fnp.linalg.det))(stack)),
                    np.stack([np.diag([0.0, 0.0, 2.0]), np.diag([6.0, 3.0, 2.0])]),
                    rtol=1e-12, atol=1e-12)


def test_det_hessian_at_a_singular_matrix() -> None:
    # jax.hessian(jnp.linalg.det)([[1, 2], [2, 4]]): d2 det / dA_ij dA_kl = +-1 on the
    # antidiagonal pairs, 0 elsewhere
    h = host(funcgrad.hessian(fnp.linalg.det)(dev(np.array([[1.0, 2.0], [2.0, 4.0]]))))
    want = np.zeros((2, 2, 2, 2))
    want[0, 0, 1, 1] = want[1, 1, 0, 0] = 1.0
    want[0, 1, 1, 0] = want[1, 0, 0, 1] = -1.0
    assert_allclose(h, want, rtol=1e-12, atol=1e-12)


def test_complex_det_gradient_at_a_singular_matrix_matches_finite_differences() -> None:
    a = np.array([[1.0 + 1.0j, 2.0], [2.0 + 2.0j, 4.0]])  # rank one

    def f(m):
        return fnp.real(fnp.linalg.det(m) * (0.3 - 0.7j))

    g = host(funcgrad.grad(f)(dev(a)))
    eps, fd = 1e-7, np.zeros_like(a)
    for i in range(2):
        for j in range(2):
            e = np.zeros((2, 2))
            e[i, j] = eps
            re = (np.real(np.linalg.det(a + e) * (0.3 - 0.7j)) - 0) / eps
            im = (np.real(np.linalg.det(a + 1j * e) * (0.3 - 0.7j)) - 0) / eps
            fd[i, j] = re + 1j * im
    # funcgrad's convention for complex inputs: grad = df/dRe - i df/dIm (JAX's conj)
    assert_allclose(g, np.conj(fd), rtol=1e-5, atol=1e-6)


def test_triangular_solve_with_a_zero_on_the_diagonal_substitutes_as_lapack() -> None:
    # jax.scipy.linalg.solve_triangular values (LAPACK trsm: plain substitution)
    a = np.array([[2.0, 1.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 3.0]])
    b = np.arange(1.0, 7.0).reshape(3, 2)
    _same(fsl.solve_triangular(dev(a), dev(b)),
          np.array([[-np.inf, -np.inf], [np.inf, np.inf], [5 / 3, 2.0]]))
    _same(fsl.solve_triangular(dev(a), dev(b), trans=1),
          np.array([[0.5, 1.0], [np.inf, np.inf], [-np.inf, -np.inf]]))
    _same(funcgrad.jit(lambda m, r: fsl.solve_triangular(m, r, lower=True))(
        dev(np.array([[1.0, 0.0], [2.0, 0.0]])), dev(np.ones(2))), np.array([1.0, -np.inf]))
    # lax.linalg.triangular_solve, a stack with one singular matrix
    got = fll.triangular_solve(dev(np.stack([np.zeros((2, 2)), np.eye(2)])),
                               dev(np.ones((2, 2, 1))), left_side=True)
    _same(got, np.array([[[NAN], [np.inf]], [[1.0], [1.0]]]))


def test_svd_and_eig_of_nan_or_inf_input_are_nan_per_matrix() -> None:
    # jnp.linalg values; NumPy raises LinAlgError ("SVD did not converge", "Array must not
    # contain infs or NaNs")
    bad = np.array([[NAN, 1.0], [1.0, 2.0]])
    stack = dev(np.stack([bad, np.diag([3.0, 2.0])]))
    np.testing.assert_allclose(host(fnp.linalg.svd(stack, compute_uv=False)),
                               np.array([[NAN, NAN], [3.0, 2.0]]), rtol=1e-14)
    u, s, vh = fnp.linalg.svd(dev(bad))
    _same(u, np.full((2, 2), NAN))
    _same(vh, np.full((2, 2), NAN))
    _same(funcgrad.jit(fnp.linalg.pinv)(dev(bad)), np.full((2, 2), NAN))
    assert int(host(fnp.linalg.matrix_rank(dev(bad)))) == 0
    nanc = complex(NAN, NAN)
    _same(fnp.linalg.eigvals(dev(np.array([[np.inf, 1.0], [1.0, 2.0]]))), np.array([nanc, nanc]))
    w, v = fnp.linalg.eig(stack)
    np.testing.assert_allclose(host(w), np.array([[nanc, nanc], [3.0, 2.0]]), rtol=1e-14)
    _same(v[0], np.full((2, 2), nanc))


def test_eigh_of_nan_input_is_nan_not_lapacks_finite_values() -> None:
    # LAPACK syevd (NumPy, and JAX on the CPU) returns +-sqrt(2) for [[nan, 1], [1, 2]];
    # funcgrad gives NaN for each matrix whose read triangle holds a NaN.
    bad = np.array([[NAN, 1.0], [1.0, 2.0]])
    _same(fnp.linalg.eigvalsh(dev(bad)), np.array([NAN, NAN]))
    w, v = funcgrad.jit(fnp.linalg.eigh)(dev(np.stack([bad, np.diag([1.0, 2.0])])))
    _same(w, np.array([[NAN, NAN], [1.0, 2.0]]))
    _same(v[0], np.full((2, 2), NAN))
    # the triangle that is not read may hold anything
    w = host(fnp.linalg.eigvalsh(dev(np.array([[2.0, NAN], [0.0, 3.0]]))))
    assert_allclose(w, np.array([2.0, 3.0]), rtol=1e-14)
    _same(fsl.eigh_tridiagonal(dev(np.array([NAN, 1.0])), dev(np.array([1.0])),
                               eigvals_only=True), np.array([NAN, NAN]))
