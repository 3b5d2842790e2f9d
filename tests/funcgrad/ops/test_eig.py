"""Focused tests of the general eigendecomposition (``eig``/``eigvals``) and of ``roots`` /
``poly(matrix)`` built on it: values and dtypes vs NumPy, the complex-result convention,
derivatives (closed forms, the eigenvector normalisation, higher order), jit/vmap, errors."""

from __future__ import annotations

import types

import numpy as np
import pytest
from helpers import assert_allclose, check_device, dev, host, rand, skip_on_gpu

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.errors import ConcretizationError, DTypeError, ShapeError
from funcgrad.ops import linalg_decomp as ld
from funcgrad.test_util import check_grads


def _similar(d, seed=0):
    """A non-normal matrix S block S^-1 with the spectrum of ``d`` (a matrix)."""
    n = d.shape[-1]
    s = rand((n, n), np.float64, -1.0, 1.0, seed=seed) + 2.0 * np.eye(n)
    return s @ d @ np.linalg.inv(s)


_PAIR = _similar(np.array([[0.5, 1.2, 0.0], [-1.2, 0.5, 0.0], [0.0, 0.0, -1.0]]), seed=1)
_REAL = _similar(np.diag([-1.5, 0.5, 2.0]), seed=2)
_CPLX = (rand((3, 3), np.float64, -1.0, 1.0, seed=3)
         + 1j * rand((3, 3), np.float64, -1.0, 1.0, seed=4))


# ---------------------------------------------------------------------------------------------
# Values, dtypes, shapes


@pytest.mark.parametrize("dtype,want", [(np.float64, np.complex128), (np.float32, np.complex64),
                                        (np.complex64, np.complex64),
                                        (np.complex128, np.complex128),
                                        (np.int64, np.complex128)])
def test_values_and_dtypes_match_numpy(dtype, want) -> None:
    a = (_PAIR * 3).round() if np.dtype(dtype).kind == "i" else _PAIR
    a = (a + 0.5j * _REAL if np.dtype(dtype).kind == "c" else a).astype(dtype)
    res = fnp.linalg.eig(dev(a))
    check_device(res)
    assert type(res).__name__ == "EigResult"
    w_ref, v_ref = np.linalg.eig(a)
    assert res.eigenvalues.dtype == want and res.eigenvectors.dtype == want
    tol = 1e-5 if want == np.complex64 else 1e-12
    # Same order and the same eigenvectors (NumPy's normalisation), not just the same set.
    assert_allclose(tuple(res), (w_ref.astype(want), v_ref.astype(want)), rtol=tol, atol=tol)
    assert_allclose(fnp.linalg.eigvals(dev(a)), w_ref.astype(want), rtol=tol, atol=tol)


def test_real_spectrum_is_still_complex() -> None:
    # NumPy gives float64 here (a value-dependent type); funcgrad always complex.
    w, v = fnp.linalg.eig(dev(_REAL))
    assert w.dtype == np.complex128 and v.dtype == np.complex128
    assert np.all(host(w).imag == 0)
    assert_allclose(w, np.linalg.eigvals(_REAL).astype(complex))


def test_stacks_and_empty_matrices() -> None:
    a = np.stack([_PAIR, _REAL, _REAL.T])
    w, v = fnp.linalg.eig(dev(a.reshape(3, 1, 3, 3)))
    assert w.shape == (3, 1, 3) and v.shape == (3, 1, 3, 3)
    for i in range(3):
        assert_allclose(host(w)[i, 0], np.linalg.eigvals(a[i]).astype(complex), rtol=1e-12,
                        atol=1e-12)
    # a @ v = v * w
    assert_allclose(host(a.reshape(3, 1, 3, 3)) @ host(v), host(v) * host(w)[..., None, :],
                    rtol=1e-10, atol=1e-10)
    w0, v0 = fnp.linalg.eig(dev(np.zeros((2, 0, 0))))
    assert w0.shape == (2, 0) and v0.shape == (2, 0, 0) and w0.dtype == np.complex128


def test_errors_name_the_function() -> None:
    with pytest.raises(ShapeError, match="eig: last 2 dimensions .* square, got f64\\[2,3\\]"):
        fnp.linalg.eig(dev(np.ones((2, 3))))
    with pytest.raises(ShapeError, match="eigvals: .*f64\\[3\\]"):
        fnp.linalg.eigvals(dev(np.ones(3)))
    with pytest.raises(DTypeError, match="eigvals: array type float16"):
        fnp.linalg.eigvals(dev(np.eye(2, dtype=np.float16)))
    with pytest.raises(ShapeError, match="eig: expected a square matrix"):
        funcgrad.make_jaxpr(ld.eig)(np.ones((3, 2)))
    with pytest.raises(DTypeError, match="eig: array type int64"):
        funcgrad.make_jaxpr(ld.eigvals)(np.eye(2, dtype=np.int64))
    # NaN input: NaN eigenvalues, as JAX (NumPy raises LinAlgError)
    w = host(fnp.linalg.eigvals(dev(np.array([[np.nan, 0.0], [0.0, 1.0]]))))
    assert w.dtype == np.complex128 and np.isnan(w.real).all() and np.isnan(w.imag).all()


def test_backend_without_eig_computes_on_the_host(monkeypatch) -> None:
    # An array module without linalg.eig (CuPy releases with only eigh): the host computes
    # and the results return to the matrix's device, values and dtypes NumPy's.
    fake = types.SimpleNamespace(__name__="fakecupy", linalg=types.SimpleNamespace())
    monkeypatch.setattr(ld, "xp_for", lambda *a, **k: fake)
    for a in (_REAL, _PAIR.astype(np.float32)):
        w, v = ld._eig_impl(dev(a), compute_eigenvectors=True)
        (w_only,) = ld._eig_impl(dev(a), compute_eigenvectors=False)
        check_device(w)
        check_device(v)
        check_device(w_only)
        want_w, want_v = np.linalg.eig(a)
        cdt = np.complex64 if a.dtype == np.float32 else np.complex128
        assert host(w).dtype == cdt and host(v).dtype == cdt
        np.testing.assert_array_equal(host(w), want_w.astype(cdt))
        np.testing.assert_array_equal(host(v), want_v.astype(cdt))
        np.testing.assert_array_equal(host(w_only), np.linalg.eigvals(a).astype(cdt))


# ---------------------------------------------------------------------------------------------
# Derivatives


def test_eigenvalue_gradients_closed_forms() -> None:
    # sum(w) = trace(a) and sum(w**2) = trace(a @ a), whatever the spectrum.
    for a in (_PAIR, _REAL):
        g = funcgrad.grad(lambda m: fnp.sum(fnp.real(fnp.linalg.eigvals(m))))(dev(a))
        assert_allclose(g, np.eye(3), rtol=1e-10, atol=1e-10)
        g2 = funcgrad.grad(lambda m: fnp.sum(fnp.real(fnp.linalg.eigvals(m) ** 2)))(dev(a))
        assert_allclose(g2, 2 * a.T, rtol=1e-9, atol=1e-9)
    # The imaginary part of a pair's eigenvalue: d(Im w) = Im(u^H dA v) / (u^H v) style; check
    # against central differences instead.
    check_grads(lambda m: fnp.imag(fnp.linalg.eigvals(m)), (dev(_PAIR),), order=2)


def test_grad_of_abs_squared_eigenvalues_matches_differences() -> None:
    f = lambda m: fnp.sum(fnp.abs(fnp.linalg.eigvals(m)) ** 2)  # noqa: E731
    check_grads(f, (dev(_PAIR),), order=2, modes=("fwd", "rev"))
    check_grads(f, (dev(_CPLX),), order=2, modes=("rev",))


def test_raw_eigenvectors_keep_lapack_normalisation() -> None:
    # For complex input LAPACK makes each column unit-norm with its largest entry real and
    # positive, a continuous choice: the raw eigenvectors are checked against differences.
    check_grads(lambda m: ld.eig(m)[1], (dev(_CPLX),), order=2, modes=("fwd", "rev"))
    # Unit norm survives: Re(v^H dv) = 0 column by column.
    t = rand((3, 3), np.float64, -1.0, 1.0, seed=9)
    (_, v), (_, dv) = funcgrad.jvp(ld.eig, (dev(_PAIR),), (dev(t),))
    assert_allclose(np.real(np.sum(np.conj(host(v)) * host(dv), axis=0)), np.zeros(3),
                    atol=1e-12)


def test_eigvals_tangent_equals_eig_tangent() -> None:
    t = dev(rand((3, 3), np.float64, -1.0, 1.0, seed=5))
    _, dw1 = funcgrad.jvp(fnp.linalg.eigvals, (dev(_PAIR),), (t,))
    _, (dw2, _) = funcgrad.jvp(lambda m: tuple(fnp.linalg.eig(m)), (dev(_PAIR),), (t,))
    assert_allclose(dw1, dw2, rtol=1e-12, atol=1e-12)


def test_repeated_eigenvalues_stay_finite() -> None:
    f = lambda m: fnp.sum(fnp.abs(fnp.linalg.eig(m).eigenvectors) ** 2)  # noqa: E731
    g = funcgrad.grad(f)(dev(np.eye(3)))
    assert np.all(np.isfinite(host(g)))
    g = funcgrad.grad(lambda m: fnp.sum(fnp.real(fnp.linalg.eigvals(m))))(dev(np.eye(3)))
    assert_allclose(g, np.eye(3), atol=1e-12)


def test_hessian_of_trace_of_square() -> None:
    h = funcgrad.hessian(lambda m: fnp.sum(fnp.real(fnp.linalg.eigvals(m) ** 2)))(dev(_REAL))
    # trace(a @ a): d2 / da_ij da_kl = 2 [j == k][i == l]
    want = 2 * np.einsum("jk,il->ijkl", np.eye(3), np.eye(3))
    assert_allclose(h, want, rtol=1e-7, atol=1e-7)


def test_jit_vmap_and_numpy_routing() -> None:
    a = np.stack([_PAIR, _REAL])
    f = lambda m: fnp.sum(fnp.abs(fnp.linalg.eigvals(m)) ** 2)  # noqa: E731
    g_vmap = funcgrad.vmap(funcgrad.grad(f))(dev(a))
    g_jit = funcgrad.jit(funcgrad.vmap(funcgrad.grad(f)))(dev(a))
    g_loop = np.stack([host(funcgrad.grad(f)(dev(m))) for m in a])
    assert_allclose(g_vmap, g_loop, rtol=1e-10, atol=1e-10)
    assert_allclose(g_jit, g_loop, rtol=1e-10, atol=1e-10)
    # numpy.linalg.eigvals on a tracer lands on funcgrad.numpy.linalg.eigvals.
    g = funcgrad.grad(lambda m: np.real(np.linalg.eigvals(m)).sum())(dev(_PAIR))
    assert_allclose(g, np.eye(3), rtol=1e-10, atol=1e-10)


# ---------------------------------------------------------------------------------------------
# roots and poly(matrix)

_ROOTS_INPUTS = [
    [1.0, -3.0, 2.0], [0.0, 1.0, 0.0, 2.0, 0.0], [0, 0, 1, 2, 0, 0], [1, 0, 1], [5], [0.0, 0.0],
    [1j, 0], np.array([1, 2, 3, 4], dtype=np.float32), np.array([1, 2j, 3]), [2, -1, 0, 3, 1.5],
    [1, -6, 11, -6], np.array([True, False, True]),
]


@pytest.mark.parametrize("p", _ROOTS_INPUTS, ids=[str(i) for i in range(len(_ROOTS_INPUTS))])
def test_roots_identical_to_numpy(p) -> None:
    skip_on_gpu("cuSOLVER's eigenvalues differ from LAPACK's in the last bits")
    want = np.roots(p)
    got = fnp.roots(dev(np.asarray(p)) if isinstance(p, np.ndarray) else p)
    check_device(got)
    got = host(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)  # same LAPACK call on the same matrix: same order


def test_roots_derivatives() -> None:
    # sum of roots = -p1 / p0; product of the roots of a cubic = -p3 / p0.
    p = dev(np.array([2.0, -1.0, 0.5, 3.0]))
    g = funcgrad.grad(lambda c: fnp.sum(fnp.real(fnp.roots(c))))(p)
    assert_allclose(g, np.array([-1.0 / 4.0, -0.5, 0.0, 0.0]), rtol=1e-10, atol=1e-10)
    g = funcgrad.grad(lambda c: fnp.real(fnp.prod(fnp.roots(c))))(p)
    assert_allclose(g, np.array([3.0 / 4.0, 0.0, 0.0, -0.5]), rtol=1e-10, atol=1e-10)
    check_grads(lambda c: fnp.roots(c), (dev(np.array([1.0, -6.0, 11.0, -6.0])),), order=2)


def test_roots_traced() -> None:
    p = dev(np.array([1.0, -3.0, 2.0]))
    with pytest.raises(ConcretizationError, match="roots: .*strip_zeros=False"):
        funcgrad.jit(fnp.roots)(p)
    with pytest.raises(ConcretizationError, match="roots: .*strip_zeros=False"):
        funcgrad.vmap(fnp.roots)(dev(np.stack([host(p), host(p)])))
    # strip_zeros=False: len(p) - 1 complex roots, NaN for leading zeros, zero roots last.
    q = dev(np.array([0.0, 0.0, 1.0, -3.0, 2.0, 0.0]))
    got = host(funcgrad.jit(lambda c: fnp.roots(c, strip_zeros=False))(q))
    assert got.dtype == np.complex128 and got.shape == (5,)
    assert_allclose(np.sort_complex(got[:2]), np.array([1.0, 2.0], dtype=complex))
    assert got[2] == 0 and np.all(np.isnan(got[3:]))
    assert np.all(np.isnan(host(fnp.roots(dev(np.zeros(3)), strip_zeros=False))))
    batch = dev(np.array([[1.0, -3.0, 2.0], [1.0, 0.0, 1.0]]))
    got = funcgrad.vmap(lambda c: fnp.roots(c, strip_zeros=False))(batch)
    assert_allclose(got, np.stack([np.roots([1.0, -3.0, 2.0]).astype(complex),
                                   np.roots([1.0, 0.0, 1.0])]), rtol=1e-12, atol=1e-12)
    assert fnp.roots(dev(np.array([3.0])), strip_zeros=False).shape == (0,)


def test_poly_of_a_matrix() -> None:
    for m in (_REAL, _PAIR, np.array([[1, 2], [3, 4]], dtype=np.int32),
              np.array([[1, 2], [3, 4]], dtype=np.float32), _CPLX):
        got = fnp.poly(dev(m))
        want = np.poly(m)
        assert host(got).dtype == want.dtype
        assert_allclose(got, want, rtol=1e-5 if want.dtype == np.float32 else 1e-10,
                        atol=1e-5 if want.dtype == np.float32 else 1e-10)
    # Characteristic polynomial of a 2x2 matrix: [1, -trace, det].
    m = np.array([[1.0, 2.0], [3.0, 4.0]])
    g = funcgrad.grad(lambda x: fnp.sum(fnp.poly(x)))(dev(m))
    assert_allclose(g, -np.eye(2) + np.array([[4.0, -3.0], [-2.0, 1.0]]), rtol=1e-10,
                    atol=1e-10)
    # Under jit too: a real matrix's eigenvalues pair up, so its coefficients are real.
    got = funcgrad.jit(fnp.poly)(dev(_PAIR))
    assert host(got).dtype == np.float64
    assert_allclose(got, np.poly(_PAIR), rtol=1e-10, atol=1e-10)
