"""``funcgrad.scipy.linalg.matrix_balance`` (LAPACK's gebal, run on the host) against
``scipy.linalg.matrix_balance``: the same permutation and powers-of-2 scaling to the bit, the
balanced matrix from array operations (stacks, ``jit``, ``vmap``, derivatives)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.scipy.linalg as fsl
from funcgrad.errors import LinAlgShapeError


def _matrices() -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    out = []
    for n in (1, 3, 5):
        a = rng.normal(size=(n, n)) * 10.0 ** rng.integers(-6, 7, size=(n, n))
        out.append(a)
        sparse = a.copy()
        sparse[rng.random((n, n)) < 0.4] = 0      # rows/columns that permute out
        out.append(sparse)
    out.append((out[3] + 1j * rng.normal(size=(3, 3))).astype(np.complex64))
    out.append(np.triu(out[4]))                  # everything isolated: lo == hi
    out.append(np.zeros((0, 0)))
    return out


@pytest.mark.parametrize("kw", [{}, {"permute": False}, {"scale": False}, {"separate": True}])
def test_as_scipy(kw) -> None:
    for a in _matrices():
        got, want = fsl.matrix_balance(dev(a), **kw), sl.matrix_balance(a, **kw)
        flat_got = [got[0], *got[1]] if kw.get("separate") else list(got)
        flat_want = [want[0], *want[1]] if kw.get("separate") else list(want)
        for g, w in zip(flat_got, flat_want, strict=True):
            g = host(g)
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)


def test_stacks_jit_vmap_and_derivative() -> None:
    rng = np.random.default_rng(4)
    st = rng.normal(size=(2, 4, 4)) * 10.0 ** rng.integers(-3, 4, size=(2, 4, 4))
    want = [sl.matrix_balance(m) for m in st]
    for got in (fsl.matrix_balance(dev(st)),
                funcgrad.jit(funcgrad.vmap(fsl.matrix_balance))(dev(st))):
        for i in range(2):
            np.testing.assert_array_equal(host(got[0])[i], want[i][0])
            np.testing.assert_array_equal(host(got[1])[i], want[i][1])
    # B = inv(T) A T with T locally constant: dB[0, 1] / dA = outer(inv(T)[0], T[:, 1]).
    t = want[0][1]
    g = funcgrad.grad(lambda m: fsl.matrix_balance(m)[0][0, 1])(dev(st[0]))
    assert_allclose(g, np.outer(np.linalg.inv(t)[0], t[:, 1]), rtol=1e-12)


def test_errors() -> None:
    with pytest.raises(LinAlgShapeError, match="square"):
        fsl.matrix_balance(dev(np.ones((2, 3))))
    with pytest.raises(ValueError, match="NaN"):
        fsl.matrix_balance(dev(np.array([[1.0, np.nan], [2.0, 1.0]])))
