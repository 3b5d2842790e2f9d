"""``funcgrad.scipy.linalg.ldl`` (LAPACK's Bunch-Kaufman ``?sytf2``/``?hetf2``, run on the
host) against ``scipy.linalg.ldl``: the same pivots and permutation, the same factors up to
rounding; real, complex symmetric and Hermitian matrices, either triangle, 2x2 pivot blocks,
stacks, ``jit``/``vmap``, and the errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.linalg as sl
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.scipy.linalg as fsl
from funcgrad.errors import LinAlgShapeError, MissingRuleError


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
    with pytest.raises(MissingRuleError, match="ldl"):
        funcgrad.grad(lambda m: fsl.ldl(m)[1].sum())(dev(np.eye(2)))
