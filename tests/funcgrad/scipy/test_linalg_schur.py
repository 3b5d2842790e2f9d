"""``funcgrad.scipy.linalg.schur`` and ``lax.linalg.schur`` against SciPy (LAPACK's gees):
the eigenvalue order on the diagonal, the forms (real quasi-triangular with standardized 2x2
blocks, complex triangular), ``z`` unitary and ``z t z^H == a``, batches, ``jit``/``vmap``,
and the refusals JAX has (no derivative, no sorting)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.scipy.linalg as fsl
from funcgrad.errors import MissingRuleError
from funcgrad.lax import linalg as lax_linalg


def _check(a: np.ndarray, t, z, output: str) -> None:
    t, z = host(t), host(z)
    n = a.shape[-1]
    assert_allclose(z @ t @ z.conj().T, a.astype(t.dtype), rtol=1e-10, atol=1e-10)
    assert_allclose(z.conj().T @ z, np.eye(n, dtype=t.dtype), rtol=1e-12, atol=1e-12)
    real = output == "real" and a.dtype.kind == "f"
    assert not np.tril(t, -2 if real else -1).any()
    ts, _ = sla.schur(a, output=output)
    assert_allclose(np.diag(t), np.diag(ts), rtol=1e-9, atol=1e-9)
    if real:   # 2x2 blocks in LAPACK's standard form: equal diagonal entries
        for k in np.flatnonzero(np.diag(t, -1)):
            assert t[k, k] == t[k + 1, k + 1] and t[k, k + 1] * t[k + 1, k] < 0


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("output", ["real", "complex"])
def test_schur_as_scipy(n, output) -> None:
    a = np.random.default_rng(n).normal(size=(n, n))
    t, z = fsl.schur(dev(a), output=output)
    assert host(t).dtype == (np.float64 if output == "real" else np.complex128)
    _check(a, t, z, output)


def test_schur_special_matrices() -> None:
    rot = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 2.0]])
    _check(rot, *fsl.schur(dev(rot)), "real")
    jordan = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]])  # defective
    _check(jordan, *fsl.schur(dev(jordan), "complex"), "complex")
    c = np.random.default_rng(0).normal(size=(4, 4)) * (1 + 1j)
    t, z = fsl.schur(dev(c))   # complex input: complex form whatever output says
    assert host(t).dtype == np.complex128
    _check(c, t, z, "complex")
    t32, _ = fsl.schur(dev(np.eye(3, dtype=np.float32) + np.tri(3, 3, -1, np.float32)))
    assert host(t32).dtype == np.float32
    t_int, _ = fsl.schur(dev(np.array([[1, 2], [3, 4]])))
    assert host(t_int).dtype == np.float64


def test_schur_batches_and_transforms() -> None:
    many = np.random.default_rng(3).normal(size=(3, 4, 4))
    t, z = funcgrad.vmap(fsl.schur)(dev(many))
    for i in range(3):
        _check(many[i], t[i], z[i], "real")
    t2, z2 = funcgrad.jit(lambda a: fsl.schur(a, "complex"))(dev(many[0]))
    _check(many[0], t2, z2, "complex")
    lt, lz = lax_linalg.schur(dev(many))
    for i in range(3):
        _check(many[i], lt[i], lz[i], "real")
    assert len(lax_linalg.schur(dev(many[0]), compute_schur_vectors=False)) == 1


def test_schur_refusals() -> None:
    a = dev(np.eye(2))
    with pytest.raises(ValueError, match="output"):
        fsl.schur(a, output="x")
    with pytest.raises(ValueError, match="sort"):
        fsl.schur(a, sort="lhp")
    with pytest.raises(ValueError, match="sort"):
        lax_linalg.schur(a, sort_eig_vals=True)
    with pytest.raises(MissingRuleError, match="no derivative rule"):   # as JAX
        funcgrad.grad(lambda a: fsl.schur(a)[0].sum())(a)


@pytest.mark.parametrize("n", [1, 2, 5, 6])
def test_rsf2csf_as_scipy(n) -> None:
    a = np.random.default_rng(10 + n).normal(size=(n, n))
    t_real, z_real = sla.schur(a)
    t, z = fsl.rsf2csf(dev(t_real), dev(z_real))
    want_t, want_z = sla.rsf2csf(t_real, z_real)
    assert host(t).dtype == np.complex128
    assert_allclose(t, want_t, rtol=1e-10, atol=1e-12)
    assert_allclose(z, want_z, rtol=1e-10, atol=1e-12)
    # with funcgrad's own real Schur form: still a complex Schur form of a
    t2, z2 = (host(x) for x in fsl.rsf2csf(*fsl.schur(dev(a))))
    assert_allclose(z2 @ t2 @ z2.conj().T, a + 0j, rtol=1e-10, atol=1e-10)
    assert not np.tril(t2, -1).any()
    many = funcgrad.vmap(fsl.rsf2csf)(dev(np.stack([t_real] * 2)), dev(np.stack([z_real] * 2)))
    assert_allclose(many[0][1], want_t, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="must match"):
        fsl.rsf2csf(dev(t_real), dev(np.eye(n + 1)))


@pytest.mark.parametrize("a", [np.zeros((2, 2)), np.eye(3), np.diag([1.0, 1.0, 2.0]),
                               np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])])
@pytest.mark.parametrize("output", ["real", "complex"])
def test_schur_of_a_triangular_matrix_is_itself_with_z_identity(a, output) -> None:
    # scipy.linalg.schur (LAPACK leaves a triangular matrix alone); repeated eigenvalues made
    # the deflation pick an arbitrary rotation (z = [[0, -1], [-1, 0]] for zeros)
    t, z = fsl.schur(dev(a), output=output)
    assert_allclose(host(t), a.astype(host(t).dtype), rtol=0, atol=0)
    assert_allclose(host(z), np.eye(a.shape[0], dtype=host(z).dtype), rtol=0, atol=0)
