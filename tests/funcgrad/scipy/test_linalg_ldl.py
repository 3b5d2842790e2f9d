"""``funcgrad.scipy.linalg.ldl`` (LAPACK's Bunch-Kaufman ``?sytf2``/``?hetf2``, run on the
host) against ``scipy.linalg.ldl``: the same pivots and permutation, the same factors up to
rounding; real, complex symmetric and Hermitian matrices, either triangle, 2x2 pivot blocks,
stacks, ``jit``/``vmap``, the derivatives (finite differences of SciPy's factors, the pivots
held), and the errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.linalg as sl
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.scipy.linalg as fsl
from funcgrad.errors import LinAlgShapeError
from funcgrad.test_util import check_grads


def _symmetric(seed: int, n: int, complex_: bool, herm: bool, small_diag: bool) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, n)) + (1j * rng.normal(size=(n, n)) if complex_ else 0)
    if small_diag:       # forces 2x2 pivot blocks and interchanges
        a[np.arange(n), np.arange(n)] *= 1e-3
    return a + (a.conj().T if herm else a.T)


CASES = [(0, 5, False, False, False), (1, 5, False, False, True), (2, 4, True, True, True),
         (3, 4, True, False, True), (4, 1, False, False, False)]


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("case", CASES)
def test_as_scipy(case, lower) -> None:
    seed, n, complex_, herm, small = case
    a = _symmetric(seed, n, complex_, herm, small)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        want = sl.ldl(a, lower=lower, hermitian=herm)
        # Only the named triangle is read, as LAPACK.
        tri = np.tril(a) if lower else np.triu(a)
        got = [host(x) for x in fsl.ldl(dev(tri), lower=lower, hermitian=herm)]
    np.testing.assert_array_equal(got[2], want[2])
    for g, w in zip(got[:2], want[:2], strict=True):
        assert g.dtype == w.dtype
        assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    lu, d = got[0], got[1]
    assert_allclose(lu @ d @ (lu.conj().T if herm else lu.T), a, rtol=1e-10, atol=1e-10)


def test_dtypes_empty_stacks_jit_vmap() -> None:
    a = _symmetric(5, 4, False, False, True)
    got = fsl.ldl(dev(a.astype(np.float32)))
    assert host(got[0]).dtype == np.float32 and host(got[2]).dtype == np.int64
    assert host(fsl.ldl(dev(np.array([[1, 2], [2, 1]])))[1]).dtype == np.float64
    empty = fsl.ldl(dev(np.zeros((0, 0))))
    assert [host(x).shape for x in empty] == [(0, 0), (0, 0), (0,)]
    st = np.stack([a, _symmetric(6, 4, False, False, True)])
    for got in (fsl.ldl(dev(st)), funcgrad.jit(funcgrad.vmap(fsl.ldl))(dev(st))):
        for i in range(2):
            want = sl.ldl(st[i])
            np.testing.assert_array_equal(host(got[2])[i], want[2])
            assert_allclose(host(got[1])[i], want[1], rtol=1e-12, atol=1e-12)


def test_errors() -> None:
    with pytest.raises(LinAlgShapeError, match="square"):
        fsl.ldl(dev(np.ones((2, 3))))
    with pytest.warns(np.exceptions.ComplexWarning, match="imaginary parts of the diagonal"):
        fsl.ldl(dev(np.array([[1 + 1j, 2], [2, 1]])))


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("case", CASES[1:4])
def test_jvp_is_scipys_finite_difference(case, lower) -> None:
    # 2x2 blocks and interchanges in each case; a symmetric (Hermitian) direction small
    # enough to keep SciPy's pivots
    seed, n, complex_, herm, small = case
    a = _symmetric(seed, n, complex_, herm, small)
    e = _symmetric(seed + 10, n, complex_, herm, False) / 2
    eps = 1e-6
    hi, lo = (sl.ldl(a + s * eps * e, lower=lower, hermitian=herm) for s in (1, -1))
    np.testing.assert_array_equal(hi[2], lo[2])
    assert np.count_nonzero(np.diagonal(hi[1], -1))   # a 2x2 block is differentiated
    _, tangents = funcgrad.jvp(lambda m: fsl.ldl(m, lower=lower, hermitian=herm)[:2],
                               (dev(a),), (dev(e),))
    for t, h, w in zip(tangents, hi, lo):
        assert_allclose(t, (h - w) / (2 * eps), rtol=1e-6, atol=1e-6)


def test_grad_jit_vmap_and_second_order() -> None:
    a = np.array([[0.0, 2.0, 1.0], [2.0, 0.0, 3.0], [1.0, 3.0, 1.0]])   # one 2x2 block

    def f(m):
        lu, d, _ = fsl.ldl(m)
        return (lu ** 2).sum() + (d ** 3).sum()

    want = np.array([[26.25, 19.75, -17.75], [19.75, 2.25, -5.25], [-17.75, -5.25, 12.0]])
    assert_allclose(funcgrad.grad(f)(dev(a)), want, rtol=1e-12)   # symmetric, as cholesky's
    assert_allclose(funcgrad.jit(funcgrad.grad(f))(dev(a)), want, rtol=1e-12)
    assert_allclose(funcgrad.vmap(funcgrad.grad(f))(dev(np.stack([a, a])))[1], want, rtol=1e-12)
    check_grads(lambda m: fsl.ldl((m + m.T) / 2)[:2], dev((a,)), order=2, modes=("fwd", "rev"))


def test_derivative_at_a_zero_pivot_is_nan_in_that_column_only() -> None:
    z = np.array([[0.0, 0.0, 0.0], [0.0, 2.0, 1.0], [0.0, 1.0, 3.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # the 1 / 0 of the zero pivot
        jac = host(funcgrad.jacfwd(lambda m: fsl.ldl(m)[0])(dev(z)))[:, :, 1, 2]
    assert np.isnan(jac[:, 0]).all()
    assert_allclose(jac[:, 1:], np.array([[0.0, 0.0], [0.0, 0.0], [0.25, 0.0]]), atol=1e-15)
