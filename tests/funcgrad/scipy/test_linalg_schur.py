"""``funcgrad.scipy.linalg.schur`` and ``lax.linalg.schur`` against SciPy (LAPACK's gees):
the eigenvalue order on the diagonal, the forms (real quasi-triangular with standardized 2x2
blocks, complex triangular), ``z`` unitary and ``z t z^H == a``, batches, ``jit``/``vmap``,
SciPy's ``sort`` (the selected eigenvalues first, ``sdim``), and the refusals JAX has (no
derivative; lax's ``sort_eig_vals``)."""

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
        fsl.schur(a, sort="left")
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


def _selected_first(a: np.ndarray, output: str, sort, t, z, sdim) -> None:
    """SciPy's sorted form: the same number selected, the same eigenvalues in front (as a
    set: LAPACK's order inside a group is compared by the unsorted tests), a Schur form."""
    t, z = host(t), host(z)
    want_t, _, want_sdim = sla.schur(a, output=output, sort=sort)
    assert int(host(sdim)) == want_sdim and host(sdim).dtype == np.int64
    assert host(t).dtype == want_t.dtype
    assert_allclose(z @ t @ z.conj().T, a.astype(t.dtype), rtol=1e-10, atol=1e-10)
    real = output == "real" and a.dtype.kind == "f"
    assert not np.tril(t, -2 if real else -1).any()
    key = lambda w: sorted(np.round(w, 8), key=lambda c: (c.real, c.imag))  # noqa: E731
    for part in (slice(None, want_sdim), slice(want_sdim, None)):
        assert_allclose(np.array(key(np.diag(t)[part])), np.array(key(np.diag(want_t)[part])),
                        atol=1e-7)


@pytest.mark.parametrize("sort", ["lhp", "rhp", "iuc", "ouc", "callable"])
@pytest.mark.parametrize("output", ["real", "complex"])
@pytest.mark.parametrize("kind", ["real", "complex"])
def test_schur_sort_as_scipy(sort, output, kind) -> None:
    rng = np.random.default_rng(7)
    for n in (1, 2, 3, 5, 6):
        a = rng.normal(size=(n, n))
        if kind == "complex":
            a = a + 1j * rng.normal(size=(n, n))
        select = sort
        if sort == "callable":   # SciPy: (re, im) for the real form, w for the complex one
            if output == "real" and kind == "real":
                select = lambda re, im: im > 1e-8 or re > 0.5  # noqa: E731
            else:
                select = lambda w: w.imag > 1e-8 or w.real > 0.5  # noqa: E731
        _selected_first(a, output, select, *fsl.schur(dev(a), output=output, sort=select))


def test_schur_sort_literals_batches_and_transforms() -> None:
    # scipy.linalg.schur(x, sort=...) of this matrix (eigenvalues -0.1118 +- 2.1177j, 2.2236):
    # 'lhp' moves the pair to the front (sdim 2), 'rhp' the real one (sdim 1)
    x = np.array([[1.0, 2.0, 0.0], [-3.0, -1.0, 1.0], [0.5, 1.0, 2.0]])
    t, _, sdim = fsl.schur(dev(x), sort="lhp")
    assert_allclose(np.diag(host(t)), np.array([-0.111802, -0.111802, 2.223603]), atol=1e-6)
    assert int(host(sdim)) == 2
    t, _, sdim = fsl.schur(dev(x), output="complex", sort="rhp")
    assert_allclose(np.diag(host(t)), np.array([2.223603, -0.111802 + 2.117712j, -0.111802 - 2.117712j]),
                    atol=1e-6)
    assert int(host(sdim)) == 1
    # a pair counts 2 when either eigenvalue is selected (SciPy's docstring example)
    a = np.array([[0.0, 2.0, 2.0], [0.0, 1.0, 2.0], [1.0, 0.0, 1.0]])
    assert int(host(fsl.schur(dev(a), sort=lambda re, im: im > 1e-15)[2])) == 2
    assert int(host(fsl.schur(dev(a), "complex", sort=lambda w: w.imag > 1e-15)[2])) == 1
    many = np.random.default_rng(4).normal(size=(3, 4, 4))
    for sdims in (fsl.schur(dev(many), sort="lhp")[2],
                  funcgrad.vmap(lambda m: fsl.schur(m, sort="lhp"))(dev(many))[2]):
        assert host(sdims).tolist() == [sla.schur(m, sort="lhp")[2] for m in many]
    t, z, sdim = funcgrad.jit(lambda m: fsl.schur(m, sort="ouc"))(dev(many[0]))
    _selected_first(many[0], "real", "ouc", t, z, sdim)
    t, z, sdim = fsl.schur(dev(np.zeros((0, 0))), sort="lhp")   # empty, as SciPy
    assert host(t).shape == (0, 0) and int(host(sdim)) == 0
    assert host(fsl.schur(dev(np.zeros((0, 0))))[0]).shape == (0, 0)


@pytest.mark.parametrize("output", ["real", "complex"])
def test_schur_of_a_100x100_matrix_is_quick_and_lapacks(output) -> None:
    # the deflation took an SVD per eigenvalue (O(n^4), ~1-30 s at 100x100); the QR of the
    # eigenvectors is a few LAPACK calls. Same eigenvalue order as gees at this size.
    a = np.random.default_rng(100).normal(size=(100, 100))
    t, z = fsl.schur(dev(a), output=output)
    _check(a, t, z, output)


@pytest.mark.parametrize("output", ["real", "complex"])
def test_schur_of_ill_conditioned_eigenvalues_keeps_a_small_backward_error(output) -> None:
    # triangular plus 1e-10 noise: hypersensitive eigenvalues moved under the deflation's
    # rotations, and singular vectors of b - w I for the stale w left z t z^H off a by 4e-3
    rng = np.random.default_rng(1)
    a = np.triu(rng.normal(size=(60, 60))) + 1e-10 * rng.normal(size=(60, 60))
    t, z = (host(x) for x in fsl.schur(dev(a), output=output))
    assert_allclose(z @ t @ z.conj().T, a.astype(t.dtype), rtol=0, atol=1e-10)
    assert_allclose(z.conj().T @ z, np.eye(60, dtype=t.dtype), rtol=0, atol=1e-12)
    assert not np.tril(t, -2 if output == "real" else -1).any()


@pytest.mark.parametrize("output", ["real", "complex"])
def test_sorting_reorders_a_triangular_matrix(output) -> None:
    # scipy.linalg.schur([[1, 2], [0, -3]], sort='lhp'): diag [-3, 1], sdim 1
    a = np.array([[1.0, 2.0], [0.0, -3.0]])
    t, z, sdim = fsl.schur(dev(a), output=output, sort="lhp")
    assert_allclose(np.diag(host(t)).real, np.array([-3.0, 1.0]), atol=1e-12)
    assert int(host(sdim)) == 1
    _selected_first(a, output, "lhp", t, z, sdim)


def test_schur_vectors_of_a_symmetric_matrix_are_scipys() -> None:
    # LAPACK leaves a symmetric matrix unscaled when balancing: eig's eigenvectors then carry
    # gees's signs (the Schur vectors' R factor is positive), so z is SciPy's exactly
    rng = np.random.default_rng(12)
    a = rng.normal(size=(5, 5))
    a = a + a.T
    t, z = (host(x) for x in fsl.schur(dev(a)))
    want_t, want_z = sla.schur(a)
    assert_allclose(z, want_z, rtol=1e-8, atol=1e-10)
    assert_allclose(t, want_t, rtol=1e-8, atol=1e-10)
