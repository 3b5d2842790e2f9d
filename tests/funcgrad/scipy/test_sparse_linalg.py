"""funcgrad.scipy.sparse.linalg.cg / bicgstab / gmres: solutions against numpy.linalg.solve (every
option: tol, atol, maxiter, M, x0; matrices, functions, pytrees, complex, float32), iterates
with few iterations against scipy's Krylov method; implicit derivatives against finite
differences; jit and vmap; errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
from funcgrad.scipy.sparse.linalg import bicgstab, cg, gmres
from funcgrad.test_util import check_grads

_RNG = np.random.default_rng(0)
_B = _RNG.normal(size=(6, 6))
SPD = _B @ _B.T + 6 * np.eye(6)
NONSYM = _B + 6 * np.eye(6)
RHS = _RNG.normal(size=6)
SOLVERS = [(cg, SPD), (bicgstab, NONSYM)]


@pytest.mark.parametrize("solver,A", SOLVERS, ids=["cg", "bicgstab"])
def test_solution(solver, A):
    want = np.linalg.solve(A, RHS)
    for kw in [{}, {"tol": 1e-12}, {"M": dev(np.diag(1 / np.diag(A))), "tol": 1e-12},
               {"x0": dev(np.ones(6)), "tol": 1e-12}, {"atol": 1e-12, "tol": 0.0}]:
        x, info = solver(dev(A), dev(RHS), **kw)
        assert info is None
        assert_allclose(x, want, rtol=1e-4 if kw == {} else 1e-9, atol=1e-9)
    x = solver(lambda v: dev(A) @ v, dev(RHS), tol=1e-12)[0]
    assert_allclose(x, want, rtol=1e-9)
    z = RHS + 1j * _RNG.normal(size=6)
    assert_allclose(solver(dev(A + 0j), dev(z), tol=1e-12)[0], np.linalg.solve(A, z), rtol=1e-9)
    x32 = solver(dev(A.astype(np.float32)), dev(RHS.astype(np.float32)))[0]
    assert x32.dtype == np.float32
    assert_allclose(x32, want.astype(np.float32), rtol=1e-3, atol=1e-4)


def test_maxiter_stops_early():
    # Two steps of cg from 0 on an SPD system: the minimiser over the Krylov space.
    x = host(cg(dev(SPD), dev(RHS), maxiter=2)[0])
    k = np.stack([RHS, SPD @ RHS], axis=1)
    coef = np.linalg.solve(k.T @ SPD @ k, k.T @ RHS)
    assert_allclose(x, k @ coef, rtol=1e-9)


@pytest.mark.parametrize("solver", [cg, bicgstab])
def test_pytree_operator(solver):
    def matvec(t):
        return {"a": 3.0 * t["a"], "b": 2.0 * t["b"]}
    x = solver(matvec, {"a": dev(np.ones(2)), "b": dev(np.ones(3))})[0]
    assert_allclose(x["a"], np.full(2, 1 / 3))
    assert_allclose(x["b"], np.full(3, 0.5))


@pytest.mark.parametrize("solver,A", SOLVERS, ids=["cg", "bicgstab"])
def test_derivatives_jit_vmap(solver, A):
    check_grads(lambda b, a: solver(a, b, tol=1e-13)[0], (dev(RHS), dev(A)), order=1,
                modes=("rev",), atol=1e-6, rtol=1e-6)
    want = np.linalg.solve(A, RHS)
    assert_allclose(funcgrad.jit(lambda b: solver(dev(A), b, tol=1e-12)[0])(dev(RHS)), want,
                    rtol=1e-9)
    got = funcgrad.vmap(lambda b: solver(dev(A), b, tol=1e-12)[0])(dev(np.stack([RHS,
                                                                               2 * RHS])))
    assert_allclose(got[1], 2 * want, rtol=1e-9)


def test_errors():
    with pytest.raises(ValueError, match="square"):
        cg(dev(np.ones((2, 3))), dev(np.ones(2)))
    with pytest.raises(ValueError, match="matching shapes"):
        cg(dev(SPD), dev(RHS), x0=dev(np.ones(5)))
    with pytest.raises(ValueError, match="tree structure"):
        cg(dev(SPD), dev(RHS), x0=(dev(RHS),))
    with pytest.raises(TypeError, match="function or a matrix"):
        cg("A", dev(RHS))


# --- gmres -----------------------------------------------------------------------------------

METHODS = ["batched", "incremental"]


@pytest.mark.parametrize("method", METHODS)
def test_gmres_solution(method):
    want = np.linalg.solve(NONSYM, RHS)
    for kw in [{}, {"tol": 1e-12}, {"restart": 3, "tol": 1e-12},
               {"M": dev(np.diag(1 / np.diag(NONSYM))), "tol": 1e-12},
               {"x0": dev(np.ones(6)), "tol": 1e-12, "restart": 4},
               {"atol": 1e-12, "tol": 0.0}]:
        x, info = gmres(dev(NONSYM), dev(RHS), solve_method=method, **kw)
        assert int(info) == 0
        assert_allclose(x, want, rtol=1e-4 if kw == {} else 1e-9, atol=1e-9)
    x = gmres(lambda v: dev(NONSYM) @ v, dev(RHS), tol=1e-12, solve_method=method)[0]
    assert_allclose(x, want, rtol=1e-9)
    z = RHS + 1j * _RNG.normal(size=6)
    zc = NONSYM + 1j * np.eye(6)
    assert_allclose(gmres(dev(zc), dev(z), tol=1e-12, solve_method=method)[0],
                    np.linalg.solve(zc, z), rtol=1e-9)
    x32 = gmres(dev(NONSYM.astype(np.float32)), dev(RHS.astype(np.float32)),
                solve_method=method)[0]
    assert x32.dtype == np.float32
    assert_allclose(x32, want.astype(np.float32), rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("method", METHODS)
def test_gmres_one_restart_is_the_krylov_minimiser(method):
    # One restart of dimension 2 from 0: x minimises ||M (b - A x)|| over span{Mb, MAMb}.
    # (JAX 0.10's gmres gives these same values.)
    m = np.diag(1 / np.arange(1.0, 7.0))
    for prec in [None, m]:
        mm = np.eye(6) if prec is None else prec
        x = host(gmres(dev(NONSYM), dev(RHS), restart=2, maxiter=1, solve_method=method,
                       M=None if prec is None else dev(prec))[0])
        k = np.stack([mm @ RHS, mm @ NONSYM @ mm @ RHS], axis=1)
        coef = np.linalg.lstsq(mm @ NONSYM @ k, mm @ RHS, rcond=None)[0]
        assert_allclose(x, k @ coef, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_gmres_pytree_derivatives_jit_vmap(method):
    def matvec(t):
        return {"a": 3.0 * t["a"], "b": 2.0 * t["b"]}
    x = gmres(matvec, {"a": dev(np.ones(2)), "b": dev(np.ones(3))}, solve_method=method)[0]
    assert_allclose(x["a"], np.full(2, 1 / 3))
    assert_allclose(x["b"], np.full(3, 0.5))
    check_grads(lambda b, a: gmres(a, b, tol=1e-13, solve_method=method)[0],
                (dev(RHS), dev(NONSYM)), order=1, modes=("rev",), atol=1e-6, rtol=1e-6)
    want = np.linalg.solve(NONSYM, RHS)
    run = funcgrad.jit(lambda b: gmres(dev(NONSYM), b, tol=1e-12, solve_method=method)[0])
    assert_allclose(run(dev(RHS)), want, rtol=1e-9)
    got = funcgrad.vmap(lambda b: gmres(dev(NONSYM), b, tol=1e-12, solve_method=method)[0])(
        dev(np.stack([RHS, 2 * RHS])))
    assert_allclose(got[1], 2 * want, rtol=1e-8)


def test_gmres_errors():
    with pytest.raises(ValueError, match="solve_method"):
        gmres(dev(NONSYM), dev(RHS), solve_method="qr")
    with pytest.raises(ValueError, match="restart"):
        gmres(dev(NONSYM), dev(RHS), restart=0)
    with pytest.raises(ValueError, match="matching shapes"):
        gmres(dev(NONSYM), dev(RHS), x0=dev(np.ones(5)))
    with pytest.raises(ValueError, match="square"):
        gmres(dev(np.ones((2, 3))), dev(np.ones(2)))


@pytest.mark.parametrize("solver", [cg, gmres, bicgstab])
def test_a_sparse_matrix_is_an_operator(solver) -> None:
    # JAX takes any square object with ``@`` as A (a BCOO); it raised "expected an array"
    from funcgrad.experimental import sparse
    A = np.diag([4.0, 3.0, 2.0]) + 0.5
    b = np.ones(3)
    x, _ = solver(sparse.BCOO.fromdense(dev(A)), dev(b), tol=1e-12)
    assert_allclose(host(x), np.linalg.solve(A, b), rtol=1e-8)
