"""scipy.linalg and numpy.linalg on device arrays with the default device left at "cpu" (how
GPU users work: device_put their data, keep the default). The strict pass makes "strict" the
default device, which hides a composite that combines a host constant it built (an arange,
an eye) with a device array through a Python operator (CuPy refuses it, as strict arrays do);
here the default stays "cpu" in both passes. References: SciPy/NumPy on the host."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.scipy.linalg as fsl
from funcgrad.backend import device_of, to_numpy

_RNG = np.random.default_rng(0)
A = _RNG.normal(size=(4, 4))
B = _RNG.normal(size=(4, 2))
S = A @ A.T + 4 * np.eye(4)
BAND = np.array([[0.0, 1, 1, 1], [4, 4, 4, 4]])

# name: (funcgrad's call on modules (fsl or fnp.linalg, fnp), the reference's, arguments)
CASES = {
    "qr-pivoting": (lambda m, a: m.qr(a, pivoting=True)[2], (A,)),
    "matrix_balance": (lambda m, a: m.matrix_balance(a)[1], (A,)),
    "solve_sylvester": (lambda m, a, s, c: m.solve_sylvester(a, s, c), (A, S, B @ B.T)),
    "solve_continuous_lyapunov": (lambda m, a, s: m.solve_continuous_lyapunov(a, s),
                                  (A - 5 * np.eye(4), S)),
    "solve_continuous_are": (lambda m, a, b, s, r: m.solve_continuous_are(a, b, s, r),
                             (A, B, S, np.eye(2))),
    "expm": (lambda m, a: m.expm(a), (A,)),
    "logm": (lambda m, s: m.logm(s).real, (S,)),
    "sqrtm": (lambda m, s: m.sqrtm(s).real, (S,)),
    "signm": (lambda m, a: m.signm(a), (A,)),
    "lu": (lambda m, a: m.lu(a), (A,)),
    "lu_solve": (lambda m, a, b: m.lu_solve(m.lu_factor(a), b, trans=1), (A, B)),
    "cho_solve": (lambda m, s, b: m.cho_solve(m.cho_factor(s), b), (S, B)),
    "solve_triangular": (lambda m, a, b: m.solve_triangular(a, b, lower=True), (np.tril(A), B)),
    "eigh-generalized": (lambda m, s, t: m.eigh(s, t, eigvals_only=True), (S, S + np.eye(4))),
    "eig_banded": (lambda m, ab: m.eig_banded(ab, eigvals_only=True), (BAND,)),
    "solveh_banded": (lambda m, ab, b: m.solveh_banded(ab, b), (BAND, B)),
    "pinv": (lambda m, a: m.pinv(a, atol=0.5), (A,)),
    "null_space": (lambda m, a: abs(m.null_space(a)), (np.ones((2, 3)),)),
    "polar": (lambda m, a: m.polar(a)[1], (A,)),
    "hessenberg": (lambda m, a: m.hessenberg(a), (A,)),
    "ldl": (lambda m, s: m.ldl(s)[1], (S,)),
    "solve_toeplitz": (lambda m, c, b: m.solve_toeplitz(c, b), (np.array([4.0, 1, 0.5, 0.2]), B)),
    "fractional_matrix_power": (lambda m, s: m.fractional_matrix_power(s, 0.3).real, (S,)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_scipy_linalg_on_device_arrays_with_cpu_default(name: str) -> None:
    f, args = CASES[name]
    want = f(sl, *args)
    xs = [funcgrad.device_put(a, "strict") for a in args]
    with funcgrad.default_device("cpu"):
        got = f(fsl, *xs)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert device_of(g) == "strict"
        np.testing.assert_allclose(to_numpy(g), np.asarray(w), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", ["qr-pivoting", "matrix_balance", "solve_sylvester"])
def test_under_jit_with_cpu_default(name: str) -> None:
    f, args = CASES[name]
    xs = [funcgrad.device_put(a, "strict") for a in args]
    with funcgrad.default_device("cpu"):
        got = funcgrad.jit(lambda *v: f(fsl, *v))(*xs)
    assert device_of(got) == "strict"
    np.testing.assert_allclose(to_numpy(got), np.asarray(f(sl, *args)), rtol=1e-9, atol=1e-9)


def test_numpy_linalg_on_device_arrays_with_cpu_default() -> None:
    x, s = funcgrad.device_put(A, "strict"), funcgrad.device_put(np.stack([S, S + 1]), "strict")
    with funcgrad.default_device("cpu"):
        outs = [fnp.linalg.cond(s, 1), fnp.linalg.matrix_rank(s, rtol=0.5),
                fnp.linalg.pinv(s, rtol=0.5), fnp.linalg.norm(s, ord=-2, axis=(1, 2)),
                fnp.linalg.inv(x), fnp.linalg.slogdet(x)[1], fnp.poly(x)]
    wants = [np.linalg.cond(np.stack([S, S + 1]), 1),
             np.linalg.matrix_rank(np.stack([S, S + 1]), rtol=0.5),
             np.linalg.pinv(np.stack([S, S + 1]), rtol=0.5),
             np.linalg.norm(np.stack([S, S + 1]), ord=-2, axis=(1, 2)),
             np.linalg.inv(A), np.linalg.slogdet(A)[1], np.poly(A)]
    for g, w in zip(outs, wants):
        assert device_of(g) == "strict"
        np.testing.assert_allclose(to_numpy(g), w, rtol=1e-9, atol=1e-9)
