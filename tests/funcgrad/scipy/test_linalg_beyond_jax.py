"""funcgrad.scipy.linalg's SciPy names beyond jax.scipy.linalg, against scipy.linalg: the
functions whose result shape or type depends on values (``null_space``, ``orth``,
``subspace_angles``, ``cdf2rdf``, the predicates), ``lstsq``'s residues and rank rules,
``eig``'s left eigenvectors and generalized problems, and the errors. Values, derivatives and
vmap of the rest: the op table tests/funcgrad/op_tables/scipy_linalg.py."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.scipy.linalg as fsl
from funcgrad.errors import MissingRuleError
from funcgrad.lax import linalg as linalg_lax

RNG = np.random.default_rng(7)
A = RNG.normal(size=(4, 4))
W = RNG.normal(size=(5, 3))


def _sort_eigs(w):
    """Eigenvalues in a canonical order: by real part rounded (a conjugate pair's real parts
    differ in the last bits, differently on each backend, which flips np.sort_complex's
    order of the pair), then imaginary part."""
    w = np.asarray(w)
    return w[np.lexsort((w.imag, np.round(w.real, 8)))]


def test_left_eigenvectors_are_lapacks() -> None:
    # LAPACK's geev: for a real matrix's real eigenvalue the sign making vl^H vr positive, for
    # a complex matrix the largest entry real and positive (the signs were those of the
    # largest entry, half of them SciPy's). A real matrix's complex pairs stay up to a sign.
    rng = np.random.default_rng(11)
    sym_ish = rng.normal(size=(5, 5)) + 3 * np.diag(np.arange(5.0))   # real eigenvalues
    for a in (sym_ish, rng.normal(size=(4, 4)) + 1j * rng.normal(size=(4, 4))):
        w, vl, vr = (host(x) for x in fsl.eig(dev(a), left=True))
        want_w, want_vl, want_vr = sl.eig(a, left=True)
        if a.dtype.kind == "f":
            assert not np.any(want_w.imag)
        assert_allclose(vl, want_vl.astype(complex), rtol=1e-9, atol=1e-10)
        assert_allclose(vr, want_vr.astype(complex), rtol=1e-9, atol=1e-10)
    w, vl = (host(x) for x in linalg_lax.eig(dev(sym_ish), compute_right_eigenvectors=False))
    assert_allclose(vl, sl.eig(sym_ish, left=True)[1].astype(complex), rtol=1e-9, atol=1e-10)


def test_eig_left_and_generalized() -> None:
    for a in (A, A + 1j * RNG.normal(size=(4, 4))):
        w, vl, vr = (host(x) for x in fsl.eig(dev(a), left=True))
        want_w, want_vl, _ = sl.eig(a, left=True)
        assert_allclose(w, want_w, rtol=1e-10, atol=1e-10)
        assert_allclose(vl.conj().T @ a, w[:, None] * vl.conj().T, rtol=1e-9, atol=1e-9)
        assert_allclose(np.abs(vl), np.abs(want_vl), rtol=1e-9, atol=1e-9)
        assert_allclose(np.linalg.norm(vl, axis=0), np.ones(4), rtol=1e-12, atol=1e-12)
    b = RNG.normal(size=(4, 4)) + 3 * np.eye(4)
    w, vl, vr = (host(x) for x in fsl.eig(dev(A), dev(b), left=True))
    assert_allclose(_sort_eigs(w), _sort_eigs(sl.eigvals(A, b)), rtol=1e-9, atol=1e-9)
    assert_allclose(A @ vr, b @ vr * w, rtol=1e-9, atol=1e-9)
    assert_allclose(vl.conj().T @ A, w[:, None] * (vl.conj().T @ b), rtol=1e-9, atol=1e-9)
    assert host(fsl.eig(dev(A), right=False)).shape == (4,)
    assert host(fsl.eig(dev(A), homogeneous_eigvals=True)[0]).shape == (2, 4)
    # differentiable: d/dA of the sum of |eigenvalues|^2 (JAX's eigvals rule)
    g = funcgrad.grad(lambda m: (abs(fsl.eigvals(m)) ** 2).sum())(dev(A))
    assert host(g).shape == (4, 4)


def test_eig_of_a_pencil_with_singular_b_has_scipys_infinite_eigenvalues() -> None:
    # eig(solve(b, a)) gave all NaN; SciPy (ggev): the finite eigenvalues and inf, b's null
    # vectors as their eigenvectors, beta = 0 in the homogeneous form
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    b = np.diag([1.0, 0.0])
    w, vl, vr = (host(x) for x in fsl.eig(dev(a), dev(b), left=True))
    # scipy.linalg.eig(a, b): [-0.5, inf]; vr = [[0.8, 0], [-0.6, 1]]
    order = np.argsort(np.abs(w))
    assert w[order].tolist() == [-0.5 + 0j, complex(np.inf, 0)]
    assert_allclose(np.abs(vr[:, order]), np.array([[0.8, 0.0], [0.6, 1.0]]), atol=1e-12)
    assert_allclose(np.abs(vl[:, order]), np.array([[0.894427191, 0.0], [0.4472135955, 1.0]]),
                    atol=1e-9)
    ab = host(fsl.eig(dev(a), dev(b), right=False, homogeneous_eigvals=True))
    assert ab[1, order].tolist() == [1, 0] and ab[0, order[0]] == -0.5
    # a rank-3 b of a random pencil: three finite eigenvalues and one infinite, as SciPy's
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(4, 4)), rng.normal(size=(4, 4))
    b[:, 0] = b[:, 1]
    w, vl, vr = (host(x) for x in fsl.eig(dev(a), dev(b), left=True))
    want = np.array([2.2795115, -0.35975436 + 0.47963443j, -0.35975436 - 0.47963443j])
    fin = np.isfinite(w)
    assert fin.sum() == 3
    assert_allclose(_sort_eigs(w[fin]), _sort_eigs(want), atol=1e-7)
    assert_allclose(a @ vr[:, fin], b @ vr[:, fin] * w[fin], atol=1e-12)
    assert_allclose(b @ vr[:, ~fin], np.zeros((4, 1), complex), atol=1e-12)
    assert_allclose(vl[:, ~fin].conj().T @ b, np.zeros((1, 4), complex), atol=1e-12)
    # b = 0 and a Jordan block at infinity: every eigenvalue infinite (SciPy: [inf, inf])
    for b in (np.zeros((2, 2)), np.array([[0.0, 1.0], [0.0, 0.0]])):
        assert np.isinf(host(fsl.eigvals(dev(np.eye(2)), dev(b)))).all()
    # a singular pencil (a = b = 0): SciPy's NaN (alpha = beta = 0), not inf
    w = host(fsl.eigvals(dev(np.zeros((2, 2))), dev(np.zeros((2, 2)))))
    assert np.isnan(w.real).all() and not w.imag.any()
    ab = host(fsl.eig(dev(np.zeros((2, 2))), dev(np.zeros((2, 2))), right=False,
                      homogeneous_eigvals=True))
    assert not ab.any()
    # the finite eigenvalue differentiates: w = (a00 a11 - a01 a10) / a11 for b = diag(1, 0)
    g = funcgrad.grad(lambda m: fsl.eigvals(m, dev(np.diag([1.0, 0.0])))[
        int(order[0])].real)(dev(np.array([[1.0, 2.0], [3.0, 4.0]])))
    assert_allclose(host(g), np.array([[1.0, -0.75], [-0.5, 0.375]]), atol=1e-9)


def test_lstsq_residues_rank_and_drivers_as_scipy() -> None:
    for b in (RNG.normal(size=5), RNG.normal(size=(5, 2))):
        x, res, rank, s = fsl.lstsq(dev(W), dev(b))
        wx, wres, wrank, ws = sl.lstsq(W, b)
        assert_allclose(host(x), wx, rtol=1e-10, atol=1e-10)
        assert np.shape(host(res)) == np.shape(wres)   # 0-d for a vector b, as SciPy
        assert_allclose(host(res), wres, rtol=1e-9, atol=1e-12)
        assert rank == wrank == 3 and isinstance(rank, int)
        assert_allclose(host(s), ws, rtol=1e-12, atol=1e-12)
        # rank deficient: empty residues with x's dtype
        _, res, rank, _ = fsl.lstsq(dev(np.ones((5, 3))), dev(b))
        assert host(res).shape == (0,) and rank == 1
        x, res, rank, s = fsl.lstsq(dev(W), dev(b), lapack_driver="gelsy")
        assert s is None and host(res).shape == (0,)
    x, res, rank, s = fsl.lstsq(dev(W), dev(RNG.normal(size=5)), cond=0.9)
    assert rank == sl.lstsq(W, RNG.normal(size=5), cond=0.9)[2]
    x, res, rank, s = fsl.lstsq(dev(np.zeros((5, 0))), dev(np.arange(5.0)))
    assert host(x).shape == (0,) and rank == 0 and float(host(res)) == 30.0
    with pytest.raises(ValueError, match="same number of rows"):
        fsl.lstsq(dev(W), dev(np.ones(4)))
    with pytest.raises(ValueError, match="driver"):
        fsl.lstsq(dev(W), dev(np.ones(5)), lapack_driver="gelsx")
    jx, _, jrank, _ = funcgrad.jit(fsl.lstsq)(dev(W), dev(np.ones(5)))
    assert_allclose(host(jx), sl.lstsq(W, np.ones(5))[0], rtol=1e-10, atol=1e-10)


def test_pinv_ranks_and_tolerances() -> None:
    m = np.diag([3.0, 1.0, 1e-20])
    out, rank = fsl.pinv(dev(m), return_rank=True)
    assert rank == 2 and isinstance(rank, int)
    assert_allclose(host(out), sl.pinv(m), rtol=1e-12, atol=1e-12)
    assert fsl.pinv(dev(m), atol=2.0, return_rank=True)[1] == 1
    assert fsl.pinvh(dev(m), rtol=0.5, return_rank=True)[1] == 1
    with pytest.raises(ValueError, match="positive"):
        fsl.pinv(dev(m), rtol=-1.0)
    many = host(fsl.pinv(dev(np.stack([m, 2 * m])), return_rank=True)[1])
    assert many.tolist() == [2, 2]


def test_value_dependent_shapes_as_scipy() -> None:
    ns = host(fsl.null_space(dev(W.T)))
    assert ns.shape == (5, 2)
    assert_allclose(W.T @ ns, np.zeros((3, 2)), rtol=0, atol=1e-12)
    assert_allclose(np.abs(ns), np.abs(sl.null_space(W.T)), rtol=1e-9, atol=1e-9)
    assert host(fsl.null_space(dev(W))).shape == (3, 0)
    assert_allclose(host(fsl.orth(dev(np.ones((3, 2))))), sl.orth(np.ones((3, 2))), rtol=1e-12,
                    atol=1e-12)
    assert host(fsl.orth(dev(W), rcond=0.5)).shape == sl.orth(W, rcond=0.5).shape
    x1, x2 = RNG.normal(size=(5, 3)), RNG.normal(size=(5, 2))
    for p, q in ((x1, x2), (x2, x1), (x1, x1 @ np.ones((3, 3)) + x1)):
        assert_allclose(host(fsl.subspace_angles(dev(p), dev(q))), sl.subspace_angles(p, q),
                        rtol=1e-9, atol=1e-9)
    w, v = np.linalg.eig(RNG.normal(size=(3, 4, 4)))
    for got, want in zip(fsl.cdf2rdf(dev(w), dev(v)), sl.cdf2rdf(w, v)):
        assert_allclose(host(got), want, rtol=1e-12, atol=1e-12)


def test_predicates_and_small_helpers() -> None:
    s = A + A.T
    assert fsl.issymmetric(dev(s)) is True and fsl.issymmetric(dev(A)) is False
    assert fsl.issymmetric(dev(s + 1e-9 * A), atol=1e-8) is True
    h = s + 1j * (A - A.T)
    assert fsl.ishermitian(dev(h)) is True and fsl.ishermitian(dev(h + 1j * np.eye(4))) is False
    assert fsl.bandwidth(dev(np.tril(A, 1))) == sl.bandwidth(np.tril(A, 1)) == (3, 1)
    assert fsl.bandwidth(dev(np.zeros((3, 3)))) == (0, 0)
    with pytest.raises(ValueError, match="square"):
        fsl.issymmetric(dev(W))
    assert issubclass(fsl.LinAlgError, np.linalg.LinAlgError)
    assert issubclass(fsl.LinAlgWarning, RuntimeWarning)
    assert_allclose(host(fsl.diagsvd(dev(np.array([1.0, 2.0])), 2, 4)),
                    sl.diagsvd([1.0, 2.0], 2, 4), rtol=0, atol=0)
    with pytest.raises(ValueError, match="columns"):
        fsl.khatri_rao(dev(np.ones((2, 3))), dev(np.ones((2, 2))))
    assert host(fsl.khatri_rao(dev(np.ones((3, 0))), dev(np.ones((2, 0))))).shape == (6, 0)


def test_structured_solves_errors() -> None:
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        fsl.solve_circulant(dev(np.array([2.0, 1.0, 0.0, 1.0])), dev(np.arange(4.0)))
    x = fsl.solve_circulant(dev(np.array([2.0, 1.0, 0.0, 1.0])), dev(np.arange(4.0)),
                            singular="lstsq")
    assert_allclose(host(x), sl.solve_circulant([2.0, 1.0, 0.0, 1.0], np.arange(4.0),
                                                singular="lstsq"), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="l\\+u\\+1"):
        fsl.solve_banded((1, 1), dev(np.ones((4, 5))), dev(np.ones(5)))
    with pytest.raises(ValueError, match="not compatible"):
        fsl.solveh_banded(dev(np.ones((2, 4))), dev(np.ones(3)))
    with pytest.raises(ValueError, match="mode"):
        fsl.rq(dev(A), mode="raw")
    with pytest.raises(ValueError, match="solver"):
        fsl.solve_discrete_lyapunov(dev(A), dev(A), method="schur")


def test_lyapunov_large_goes_through_schur() -> None:
    # above 32x32 the continuous equation is solved by Bartels-Stewart (solve_sylvester)
    a = RNG.normal(size=(34, 34)) - 8 * np.eye(34)
    q = np.eye(34)
    x = host(fsl.solve_continuous_lyapunov(dev(a), dev(q)))
    assert_allclose(x, sl.solve_continuous_lyapunov(a, q), rtol=1e-8, atol=1e-10)
    x = host(fsl.solve_discrete_lyapunov(dev(a / 40), dev(q)))   # bilinear from 10x10
    assert_allclose(x, sl.solve_discrete_lyapunov(a / 40, q), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name,call", [
    ("lstsq", lambda m, a, s: m.lstsq(a, a[..., :1])),
    ("rq", lambda m, a, s: m.rq(a)),
    ("null_space", lambda m, a, s: m.null_space(a[..., :3, :])),
    ("orth", lambda m, a, s: m.orth(a)),
    ("solve_continuous_lyapunov", lambda m, a, s: m.solve_continuous_lyapunov(-a, s)),
    ("solve_discrete_lyapunov", lambda m, a, s: m.solve_discrete_lyapunov(a / 10, s)),
    ("solve_continuous_are", lambda m, a, s: m.solve_continuous_are(a, a, s, s)),
    ("solve_discrete_are", lambda m, a, s: m.solve_discrete_are(a / 3, a, s, s)),
    ("subspace_angles", lambda m, a, s: m.subspace_angles(a, a[..., :2])),
    ("orthogonal_procrustes", lambda m, a, s: m.orthogonal_procrustes(a, a[::-1])),
    ("khatri_rao", lambda m, a, s: m.khatri_rao(a, a)),
    ("issymmetric", lambda m, a, s: m.issymmetric(s)),
    ("bandwidth", lambda m, a, s: m.bandwidth(np.triu(a) if m is sl else m.triu(a))),
    ("diagsvd", lambda m, a, s: m.diagsvd(a[..., 0], 4, 4)),
])
def test_batches_as_scipy(name, call) -> None:
    # SciPy 1.17 applies these over leading (batch) dimensions, one matrix at a time
    a = RNG.random((2, 4, 4)) + 2 * np.eye(4)
    s = a @ a.transpose(0, 2, 1) + np.eye(4)
    want = call(sl, a, s)
    got = call(fsl, dev(a), dev(s))
    want = want if isinstance(want, tuple | list) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(host(g)), np.asarray(w)
        assert g.shape == w.shape
        assert_allclose(np.abs(g).astype(float), np.abs(w).astype(float), rtol=1e-8, atol=1e-8)


def test_scipy_function_on_a_tracer_names_funcgrad_scipy() -> None:
    # SciPy converts its arguments with numpy.asarray: the error points at funcgrad.scipy
    from funcgrad.errors import TracerArrayConversionError
    with pytest.raises(TracerArrayConversionError, match="funcgrad.scipy"):
        funcgrad.grad(lambda m: sl.expm(m).sum())(dev(np.eye(2)))


@pytest.mark.parametrize("mode", ["full", "economic"])
def test_qr_update_insert_delete_as_scipy(mode) -> None:
    # a QR factorisation of the changed matrix, shaped like SciPy's; R's rows may differ in
    # sign from SciPy's Givens updates (neither promises a positive diagonal)
    a = RNG.normal(size=(5, 3))
    q, r = sl.qr(a, mode=mode)
    calls = [
        (lambda m: m.qr_update(q, r, a[:, 0], np.arange(3.0)), "update"),
        (lambda m: m.qr_update(q, r, a[:, :2], np.ones((3, 2))), "update k"),
        (lambda m: m.qr_insert(q, r, np.arange(3.0), 2), "insert row"),
        (lambda m: m.qr_insert(q, r, np.ones((2, 3)), 5), "insert rows"),
        (lambda m: m.qr_insert(q, r, np.arange(5.0), 1, "col"), "insert col"),
        (lambda m: m.qr_delete(q, r, 1, 2), "delete rows"),
        (lambda m: m.qr_delete(q, r, 0, 1, "col"), "delete col"),
    ]
    for call, what in calls:
        want_q, want_r = call(sl)
        got_q, got_r = (host(x) for x in call(fsl))
        assert got_q.shape == want_q.shape and got_r.shape == want_r.shape, what
        assert_allclose(got_q @ got_r, want_q @ want_r, rtol=1e-10, atol=1e-10)
        assert_allclose(np.abs(got_r), np.abs(want_r), rtol=1e-9, atol=1e-9)
        assert not np.tril(got_r, -1).any()
    with pytest.raises(ValueError, match="delete"):
        fsl.qr_delete(q, r, 2, 4)
    if mode == "economic":   # the full Q of a tall matrix has no derivative (as qr's)
        g = funcgrad.grad(lambda u: fsl.qr_update(dev(q), dev(r), u, dev(np.arange(3.0)))[1]
                          .sum())(dev(a[:, 0]))
        assert host(g).shape == (5,)


def test_signatures_of_scipy_and_jax_calls() -> None:
    s = np.array([[4.0, 1.0], [1.0, 3.0]])
    # SciPy 1.17: inv's assume_a/lower; sqrtm's disp; eigh_tridiagonal positionally
    for kind in ("pos", "sym", "upper triangular", "lower triangular", "gen"):
        want = sl.inv(np.triu(s) if kind == "upper triangular" else
                      np.tril(s) if kind == "lower triangular" else s, assume_a=kind)
        got = fsl.inv(dev(np.triu(s) if kind == "upper triangular" else
                          np.tril(s) if kind == "lower triangular" else s), assume_a=kind)
        assert_allclose(host(got), want, rtol=1e-12, atol=1e-12)
    assert_allclose(host(fsl.inv(dev(np.triu(s)), assume_a="pos", lower=False)),
                    sl.inv(np.triu(s), assume_a="pos", lower=False), rtol=1e-12, atol=1e-12)
    # the off-diagonal entries are not read (SciPy 1.17 returns them unchanged, a bug)
    assert_allclose(host(fsl.inv(dev(s), assume_a="diagonal")), np.diag([0.25, 1 / 3]),
                    rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="structure"):
        fsl.inv(dev(s), assume_a="banded")
    x, err = fsl.sqrtm(dev(s), disp=False)
    assert_allclose(host(x).real, sl.sqrtm(s), rtol=1e-12, atol=1e-12)
    assert float(host(err)) < 1e-20
    w = fsl.eigh_tridiagonal(dev(np.array([2.0, 2.0])), dev(np.array([1.0])), True)
    assert_allclose(host(w), np.array([1.0, 3.0]), rtol=1e-12, atol=1e-12)
    # jax.scipy.linalg: eigh's positional lower/eigvals_only, solve(debug=...), tol=None, key
    assert_allclose(host(fsl.eigh(dev(np.triu(s)), None, False, True)), np.linalg.eigvalsh(s),
                    rtol=1e-12, atol=1e-12)
    assert_allclose(host(fsl.eigh(dev(s), eigvals=(1, 1), eigvals_only=True)),
                    np.linalg.eigvalsh(s)[1:], rtol=1e-12, atol=1e-12)
    assert_allclose(host(fsl.solve(dev(s), dev(np.ones(2)), debug=False)),
                    np.linalg.solve(s, np.ones(2)), rtol=1e-12, atol=1e-12)
    assert_allclose(host(fsl.solve_triangular(dev(s), dev(np.ones(2)), debug=None)),
                    sl.solve_triangular(s, np.ones(2)), rtol=1e-12, atol=1e-12)
    fsl.eigh_tridiagonal(dev(np.array([2.0, 2.0])), dev(np.array([1.0])), tol=None, key=None)


def test_missing_scipy_names_say_why() -> None:
    assert not hasattr(fsl, "interpolative")
    with pytest.raises(AttributeError, match="interpolative decomposition"):
        fsl.interpolative  # noqa: B018
    with pytest.raises(AttributeError, match="no BLAS/LAPACK routines"):
        fsl.find_best_blas_type  # noqa: B018
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        fsl.no_such_name  # noqa: B018


def test_scipy_only_names_return_scipys_double_precision() -> None:
    # Names that jax.scipy.linalg lacks follow SciPy 1.17's dtypes: these compute and return
    # double precision for single-precision input (they kept float32 before).
    a32 = (A / 4).astype(np.float32)
    s32 = (A @ A.T + np.eye(4)).astype(np.float32)
    c32 = np.array([4.0, 1.0, 0.5, 0.0], np.float32)
    b32 = np.ones((4, 2), np.float32)
    i2, i4 = np.eye(2, dtype=np.float32), np.eye(4, dtype=np.float32)
    cases = [
        (fsl.solve_discrete_lyapunov, (a32, s32), np.float64),
        (fsl.solve_continuous_lyapunov, (a32 - 3 * i4, s32), np.float32),  # SciPy keeps it
        (fsl.expm_cond, (a32,), np.float64),
        (fsl.expm_cond, (a32.astype(np.complex64),), np.float64),
        (fsl.solve_toeplitz, (c32, b32), np.float64),
        (fsl.matmul_toeplitz, (c32, b32), np.float64),
        (fsl.solve_continuous_are, (a32, b32, s32, i2), np.float64),
        (fsl.solve_discrete_are, (a32, b32, s32, i2), np.float64),
        (lambda m: fsl.fractional_matrix_power(m, 0.5), (s32,), np.complex128),
        (lambda m: fsl.fractional_matrix_power(m, 2), (s32,), np.float32),   # as SciPy
        (fsl.solve_discrete_lyapunov, (a32.astype(np.complex64), s32), np.complex128),
    ]
    for fn, args, dt in cases:
        got = host(fn(*(dev(x) for x in args)))
        assert got.dtype == dt, (fn, got.dtype)
        # the double-precision computation of the single-precision values
        wide = [x.astype(np.complex128 if x.dtype.kind == "c" else np.float64) for x in args]
        assert_allclose(got, host(fn(*(dev(x) for x in wide))).astype(dt), rtol=1e-6,
                        atol=1e-6)
    # and their gradients come back in the input's dtype
    g = funcgrad.grad(lambda m: fsl.solve_discrete_lyapunov(m, dev(s32)).sum())(dev(a32))
    assert host(g).dtype == np.float32


def test_clarkson_woodruff_transform_draws_scipys_sketch() -> None:
    # was missing; scipy.linalg.clarkson_woodruff_transform(arange(12).reshape(4, 3), 2, ...)
    a = np.arange(12.0).reshape(4, 3)
    assert_allclose(fsl.clarkson_woodruff_transform(dev(a), 2, rng=0),
                    np.array([[9.0, 10.0, 11.0], [9.0, 12.0, 15.0]]))
    assert_allclose(fsl.clarkson_woodruff_transform(dev(a), 2, seed=0),   # legacy RandomState
                    np.array([[-9.0, -11.0, -13.0], [-9.0, -11.0, -13.0]]))
    m = np.random.default_rng(9).normal(size=(2, 6, 3))   # a stack shares one sketch
    assert_allclose(fsl.clarkson_woodruff_transform(dev(m), 3, rng=np.random.default_rng(5)),
                    sl.clarkson_woodruff_transform(m, 3, rng=np.random.default_rng(5)))
    assert host(fsl.clarkson_woodruff_transform(dev(m[0].astype(np.float32)), 3, rng=1)
                ).dtype == np.float64   # SciPy's: the int64 sketch times float32
    g = funcgrad.grad(lambda x: fsl.clarkson_woodruff_transform(x, 2, rng=0).sum())(dev(a))
    assert_allclose(g, np.ones((4, 3)))   # each row lands once, with sign +1 for rng=0
    with pytest.raises(ValueError, match="2-D"):
        fsl.clarkson_woodruff_transform(dev(a[0]), 2, rng=0)


@pytest.mark.parametrize("output", ["real", "complex"])
def test_qz_is_a_generalized_schur_form_with_scipys_eigenvalues(output) -> None:
    # was missing (SciPy's gges): A = Q AA Z^H, B = Q BB Z^H, triangular forms, BB's diagonal
    # real and nonnegative (zero for an infinite eigenvalue), 2x2 blocks of a real pencil
    # with BB's block diagonal; SciPy's generalized eigenvalues as a set
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(5, 5)), rng.normal(size=(5, 5))
    singular = b.copy()
    singular[:, 0] = singular[:, 1]
    for x, y in ((a, b), (a, singular), (a + 1j * rng.normal(size=(5, 5)), b + 0j)):
        AA, BB, Q, Z = (host(t) for t in fsl.qz(dev(x), dev(y), output=output))
        real = output == "real" and x.dtype.kind == "f"
        want = sl.qz(x, y, output=output)
        assert [t.dtype for t in (AA, BB, Q, Z)] == [t.dtype for t in want]
        assert_allclose(Q @ AA @ Z.conj().T, x.astype(AA.dtype), atol=1e-12)
        assert_allclose(Q @ BB @ Z.conj().T, y.astype(AA.dtype), atol=1e-12)
        assert_allclose(Q.conj().T @ Q, np.eye(5, dtype=Q.dtype), atol=1e-12)
        assert_allclose(Z.conj().T @ Z, np.eye(5, dtype=Q.dtype), atol=1e-12)
        assert not np.tril(AA, -2 if real else -1).any() and not np.tril(BB, -1).any()
        d = np.diag(BB)
        assert (d.real >= 0).all() and not np.imag(d).any()
        for k in np.flatnonzero(np.diag(AA, -1)):
            assert BB[k, k + 1] == 0 and BB[k, k] > 0 and BB[k + 1, k + 1] > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            ours = sl.eigvals(AA, BB)
        theirs = sl.eigvals(x, y)
        assert np.isinf(ours).sum() == np.isinf(theirs).sum() == (y is singular)
        key = lambda w: np.sort_complex(np.round(w[np.isfinite(w)], 8))  # noqa: E731
        assert_allclose(key(ours), key(theirs), atol=1e-7)


def test_qz_batches_transforms_and_refusals() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(3, 4, 4)), rng.normal(size=(3, 4, 4))
    for got in (fsl.qz(dev(a), dev(b)), funcgrad.vmap(fsl.qz)(dev(a), dev(b)),
                funcgrad.jit(fsl.qz)(dev(a), dev(b))):
        AA, BB, Q, Z = (host(t) for t in got)
        assert_allclose(Q @ AA @ np.swapaxes(Z, -1, -2), a, atol=1e-12)
        assert_allclose(Q @ BB @ np.swapaxes(Z, -1, -2), b, atol=1e-12)
    AA, BB, Q, Z = (host(t) for t in funcgrad.vmap(fsl.qz, in_axes=(0, None))(dev(a),
                                                                               dev(b[0])))
    assert_allclose(Q @ BB @ np.swapaxes(Z, -1, -2), np.stack([b[0]] * 3), atol=1e-12)
    assert host(fsl.qz(dev(np.eye(2, dtype=int)), dev(np.eye(2, dtype=int)))[0]).dtype == \
        np.float64
    with pytest.raises(ValueError, match="ordqz"):
        fsl.qz(dev(a[0]), dev(b[0]), sort="lhp")
    with pytest.raises(MissingRuleError, match="no derivative rule"):
        funcgrad.grad(lambda m: fsl.qz(m, dev(b[0]))[0].sum())(dev(a[0]))


@pytest.mark.parametrize("shape", [(3, 5), (5, 3)])
def test_rq_modes_have_scipys_shapes(shape) -> None:
    # mode="r" is the full (M, N) r (it was the economic one for a wide matrix)
    a = RNG.normal(size=shape)
    for mode in ("full", "economic"):
        for g, w in zip(fsl.rq(dev(a), mode=mode), sl.rq(a, mode=mode)):
            assert host(g).shape == w.shape
            assert_allclose(host(g), w, rtol=1e-10, atol=1e-12)
    r = host(fsl.rq(dev(a), mode="r"))
    assert r.shape == shape
    assert_allclose(r, sl.rq(a, mode="r"), rtol=1e-10, atol=1e-12)


def test_block_diag_broadcasts_batches_as_scipy() -> None:
    # SciPy 1.17 treats leading axes as batch axes, broadcast together (it was refused)
    blocks = (RNG.normal(size=(3, 1, 2)), RNG.normal(size=(2, 2)), 4.0)
    got = host(fsl.block_diag(*(dev(np.asarray(b)) for b in blocks)))
    assert got.shape == (3, 4, 5)
    assert_allclose(got, sl.block_diag(*blocks), rtol=0, atol=0)
    with pytest.raises(ValueError, match="do not broadcast"):
        fsl.block_diag(dev(np.ones((3, 1, 2))), dev(np.ones((2, 2, 2))))


def test_eig_of_singular_b_pencils_under_jit_and_vmap() -> None:
    # under jit the pencil's singular b gave NaN eigenvalues (the spectral transformation
    # needed concrete values); now each matrix takes its way there too
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 3, 3)), rng.normal(size=(2, 3, 3))
    b[1, :, 0] = 0.0   # rank 2: one infinite eigenvalue; b[0] nonsingular
    eager = [host(x) for x in fsl.eig(dev(a), dev(b), homogeneous_eigvals=True)]
    for transform in (funcgrad.jit, funcgrad.vmap):
        got = transform(lambda x, y: fsl.eig(x, y, homogeneous_eigvals=True))(dev(a), dev(b))
        for g, e in zip(got, eager):
            assert_allclose(host(g), e, rtol=1e-12, atol=1e-12)
    w = host(funcgrad.jit(fsl.eigvals)(dev(a), dev(b)))
    for i in range(2):
        assert_allclose(_sort_eigs(w[i]), _sort_eigs(sl.eigvals(a[i], b[i])),
                        rtol=1e-9, atol=1e-9)
    assert np.isinf(w[1]).sum() == 1 and np.isfinite(w[0]).all()
    # a singular pencil: NaN, as SciPy's
    assert np.isnan(host(funcgrad.jit(fsl.eigvals)(dev(np.zeros((2, 2))),
                                                   dev(np.zeros((2, 2)))))).all()


@pytest.mark.parametrize("name,call", [
    ("solve_banded", lambda m, h, g, b: m.solve_banded((1, 1), g, b)),
    ("solveh_banded", lambda m, h, g, b: m.solveh_banded(h, b[0, :, 0])),
    ("cho_solve_banded", lambda m, h, g, b: m.cho_solve_banded((m.cholesky_banded(h), False),
                                                               b)),
    ("eigvals_banded", lambda m, h, g, b: m.eigvals_banded(h)),
    ("eig_banded", lambda m, h, g, b: m.eig_banded(h, lower=False)[0]),
    ("solve_toeplitz", lambda m, h, g, b: m.solve_toeplitz((h[..., 1, :], g[..., 0, :]), b)),
    ("matmul_toeplitz", lambda m, h, g, b: m.matmul_toeplitz(h[..., 1, :], b)),
    ("eigh_tridiagonal", lambda m, h, g, b: m.eigh_tridiagonal(h[..., 1, :], h[..., 0, 1:],
                                                               eigvals_only=True)),
    ("eigvalsh_tridiagonal", lambda m, h, g, b: m.eigvalsh_tridiagonal(
        h[..., 1, :], h[..., 0, 1:], select="i", select_range=(1, 2))),
])
def test_band_and_toeplitz_functions_batch_as_scipy(name, call) -> None:
    # SciPy 1.17 maps these over leading axes too; they refused more than the core dimensions
    # (or flattened a 2-D Toeplitz column)
    h = RNG.random((2, 2, 4)) + np.array([0.0, 4.0])[:, None]   # positive definite bands
    g = RNG.normal(size=(2, 3, 4)) + np.array([0.0, 5.0, 0.0])[:, None]
    b = RNG.normal(size=(2, 4, 3))
    want = call(sl, h, g, b)
    got = host(call(fsl, dev(h), dev(g), dev(b)))
    assert got.shape == want.shape
    assert_allclose(got, want, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("output", ["real", "complex"])
@pytest.mark.parametrize("sort", ["lhp", "rhp", "iuc", "ouc", "callable"])
def test_ordqz_selects_scipys_eigenvalues_first(sort, output) -> None:
    # ordqz was missing; the selection, the eigenvalues and the leading deflating subspace
    # are SciPy's (alpha and beta may be scaled otherwise)
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(5, 5)), rng.normal(size=(5, 5))
    if sort == "callable":
        def sort(alpha, beta):
            return np.abs(alpha) > 0.8 * np.abs(beta)
    AA, BB, alpha, beta, Q, Z = (host(x) for x in fsl.ordqz(dev(a), dev(b), sort=sort,
                                                           output=output))
    want = sl.ordqz(a, b, sort=sort, output=output)
    assert alpha.dtype == want[2].dtype and beta.dtype == want[3].dtype
    like = 1 if output == "real" else 1 + 0j
    assert_allclose(Q @ AA @ Z.conj().T, a * like, atol=1e-10)
    assert_allclose(Q @ BB @ Z.conj().T, b * like, atol=1e-10)
    assert not np.tril(BB, -1).any() and not np.tril(AA, -2).any()
    select = sl._decomp_qz._select_function(sort)
    chosen = np.asarray(select(want[2], want[3]))
    assert np.array_equal(np.asarray(select(alpha, beta)), chosen)
    k = int(chosen.sum())
    def ordered(w):   # a conjugate pair's equal real parts differ in rounding
        return w[np.lexsort((w.imag, w.real.round(8)))]
    assert_allclose(ordered(alpha[:k] / beta[:k]), ordered(want[2][:k] / want[3][:k]),
                    rtol=1e-8, atol=1e-10)
    # the leading k columns of Z span SciPy's deflating subspace
    span = Z[:, :k]
    assert_allclose(span @ (span.conj().T @ want[5][:, :k]), want[5][:, :k], atol=1e-9)


def test_ordqz_with_a_singular_b_and_under_transforms() -> None:
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(4, 4)), rng.normal(size=(4, 4))
    b[:, 0] = b[:, 1]   # one infinite eigenvalue: outside the unit circle, in no half plane
    AA, BB, alpha, beta, Q, Z = (host(x) for x in fsl.ordqz(dev(a), dev(b), sort="ouc"))
    assert_allclose(Q @ BB @ Z.T, b, atol=1e-10)
    want = sl.ordqz(a, b, sort="ouc")
    k = int(sl._decomp_qz._ouc(want[2], want[3]).sum())
    assert int(sl._decomp_qz._ouc(alpha, beta).sum()) == k and (beta[:k] == 0).sum() == 1
    assert not (host(fsl.ordqz(dev(a), dev(b), sort="lhp")[3])[:2] == 0).any()
    jitted = funcgrad.jit(lambda x, y: fsl.ordqz(x, y, sort="ouc"))(dev(a), dev(b))
    for g, e in zip(jitted, (AA, BB, alpha, beta, Q, Z)):
        assert_allclose(host(g), e, rtol=1e-12, atol=1e-12)
    batched = funcgrad.vmap(lambda x: fsl.ordqz(x, dev(b), sort="ouc")[3])(dev(np.stack([a, a])))
    assert_allclose(host(batched), np.stack([beta, beta]), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="sort parameter"):
        fsl.ordqz(dev(a), dev(b), sort="bogus")


def test_eigh_checks_its_driver_as_scipy() -> None:
    # a wrong driver went unnoticed; each is accepted where SciPy accepts it
    s = dev(np.array([[2.0, 1.0], [1.0, 2.0]]))
    for driver in ("ev", "evd", "evr", "evx"):
        assert_allclose(host(fsl.eigh(s, driver=driver)[0]), np.array([1.0, 3.0]))
    assert_allclose(host(fsl.eigh(s, s, driver="gvd", eigvals_only=True)), np.ones(2))
    for kwargs, match in ((dict(driver="bogus"), "unknown"),
                          (dict(driver="gv"), "requires input b"),
                          (dict(b=s, driver="evr"), "does not accept input b"),
                          (dict(driver="evd", subset_by_index=(0, 0)), "cannot compute subsets")):
        with pytest.raises(ValueError, match=match):
            fsl.eigh(s, **kwargs)
        with pytest.raises(ValueError, match=match):
            sl.eigh(host(s), **{k: host(v) if k == "b" else v for k, v in kwargs.items()})


@pytest.mark.parametrize("name,call", [
    ("null_space", lambda a: fsl.null_space(a)),
    ("orth", lambda a: fsl.orth(a)),
    ("eigh", lambda a: fsl.eigh(a, subset_by_value=(0.5, 3.0))),
    ("cdf2rdf", lambda a: fsl.cdf2rdf(*fsl.eig(a))),
])
def test_value_dependent_functions_under_jit_say_why(name, call) -> None:
    # they failed with a bare "to_numpy got a traced value"
    from funcgrad.errors import ConcretizationError
    with pytest.raises(ConcretizationError, match=f"{name} needs concrete values.*jit"):
        funcgrad.jit(call)(dev(np.diag([1.0, 2.0, 0.0])))


def _unitary(m: int, seed: int, complex_: bool) -> np.ndarray:
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(m, m)) + (1j * rng.normal(size=(m, m)) if complex_ else 0)
    q, r = np.linalg.qr(z)
    return q * (np.diagonal(r) / abs(np.diagonal(r)))


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("p,q", [(1, 1), (2, 3), (4, 1), (3, 3), (5, 4), (1, 5)])
def test_cossin_as_scipy(p, q, complex_) -> None:
    # cossin was missing: CS and theta are SciPy's, U and VDH unitary, block diagonal and
    # reproducing X (their signs are one valid choice)
    x = _unitary(6, 10 * p + q, complex_)
    for swap in (False, True):
        u, cs, vdh = (host(t) for t in fsl.cossin(dev(x), p, q, swap_sign=swap))
        want = sl.cossin(x, p, q, swap_sign=swap)
        assert (u.dtype, cs.dtype, vdh.dtype) == tuple(t.dtype for t in want)
        assert_allclose(cs, want[1], atol=1e-12)
        assert_allclose(u @ cs @ vdh, x, atol=1e-12)
        assert_allclose(u.conj().T @ u, np.eye(6, dtype=u.dtype), atol=1e-12)
        assert_allclose(vdh @ vdh.conj().T, np.eye(6, dtype=u.dtype), atol=1e-12)
        assert not u[:p, p:].any() and not vdh[:q, q:].any()
    (u1, u2), theta, (v1h, v2h) = fsl.cossin(dev(x), p, q, separate=True)
    assert_allclose(host(theta), sl.cossin(x, p, q, separate=True)[1], atol=1e-12)


def test_cossin_of_nearly_decoupled_blocks_and_its_options() -> None:
    # angles 1e-9 from 0 and pi/2 next to an exact one: X11 alone cannot separate the cosines
    # near 1 (a construction from its SVD alone has a backward error ~ eps / angle)
    rng = np.random.default_rng(2)
    blocks = [np.linalg.qr(rng.normal(size=(3, 3)))[0] for _ in range(4)]
    theta = np.array([1e-9, 0.5, np.pi / 2 - 1e-10])
    c, s = np.diag(np.cos(theta)), np.diag(np.sin(theta))
    x = sl.block_diag(*blocks[:2]) @ np.block([[c, -s], [s, c]]) @ sl.block_diag(*blocks[2:])
    x = np.block([[x, np.zeros((6, 1))], [np.zeros((1, 6)), np.ones((1, 1))]])
    u, cs, vdh = (host(t) for t in fsl.cossin(dev(x), 3, 3))
    assert_allclose(u @ cs @ vdh, x, atol=1e-14)
    got = host(fsl.cossin(dev(x), 3, 3, separate=True)[1])
    assert_allclose(got, theta, rtol=1e-6, atol=1e-15)
    blocks4 = (x[:3, :3], x[:3, 3:], x[3:, :3], x[3:, 3:])
    assert_allclose(host(fsl.cossin(tuple(dev(b) for b in blocks4))[1]), sl.cossin(blocks4)[1],
                    atol=1e-12)
    assert host(fsl.cossin(dev(x), 3, 3, compute_u=False)[0]).shape == (0, 0)
    batch = np.stack([x, _unitary(7, 1, False)])
    assert_allclose(host(fsl.cossin(dev(batch), 2, 4)[1]), sl.cossin(batch, 2, 4)[1],
                    atol=1e-12)
    with pytest.raises(ValueError, match="0<p<7"):
        fsl.cossin(dev(x), 7, 2)
    with pytest.raises(ValueError, match="exactly four arrays"):
        fsl.cossin([dev(x)] * 3)
    from funcgrad.errors import ConcretizationError
    with pytest.raises(ConcretizationError, match="cossin needs concrete values"):
        funcgrad.jit(lambda m: fsl.cossin(m, 3, 3))(dev(x))


def test_eigh_tridiagonal_vectors_have_steins_signs() -> None:
    # the signs were eigh's (syevd); SciPy's selected vectors (stebz + stein) have their
    # largest entry positive
    rng = np.random.default_rng(5)
    d, e = rng.normal(size=7), rng.normal(size=6)
    for kwargs in (dict(select="i", select_range=(1, 4)), dict(select="v", select_range=(-1, 1)),
                   dict(lapack_driver="stebz")):
        w, v = (host(x) for x in fsl.eigh_tridiagonal(dev(d), dev(e), **kwargs))
        want_w, want_v = sl.eigh_tridiagonal(d, e, **kwargs)
        assert_allclose(w, want_w, rtol=1e-10, atol=1e-12)
        assert_allclose(v, want_v, rtol=1e-8, atol=1e-10)
    g = funcgrad.grad(lambda x: fsl.eigh_tridiagonal(x, dev(e))[1][0].sum())(dev(d))
    assert np.isfinite(host(g)).all()


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("lower", [True, False])
def test_eigh_selected_vectors_have_scipys_signs(lower, complex_) -> None:
    # SciPy computes a selection with stebz + stein (largest entry of each vector positive in
    # the tridiagonal form's coordinates); the signs were syevd's, half of them flipped
    rng = np.random.default_rng(8)
    a = rng.normal(size=(6, 6)) + (1j * rng.normal(size=(6, 6)) if complex_ else 0)
    a = a + a.conj().T
    b = rng.normal(size=(6, 6)) + (1j * rng.normal(size=(6, 6)) if complex_ else 0)
    b = b @ b.conj().T + 6 * np.eye(6)
    for kwargs in (dict(subset_by_index=(2, 5)), dict(subset_by_value=(-1.0, 3.0)),
                   dict(b=b, subset_by_index=(0, 3)), dict(b=b, type=3, subset_by_index=(1, 1))):
        got = fsl.eigh(dev(a), lower=lower, **{k: dev(v) if k == "b" else v
                                                for k, v in kwargs.items()})
        want = sl.eigh(a, lower=lower, **kwargs)
        assert_allclose(host(got[0]), want[0], rtol=1e-10, atol=1e-12)
        assert_allclose(host(got[1]), want[1], rtol=1e-8, atol=1e-10)


def test_expm_of_a_scalar_is_a_1x1_matrix() -> None:
    # SciPy's expm(2.0) is [[e^2]]; it was a shape error
    for x in (np.array(2.0), np.array([2.0]), 2.0):
        assert_allclose(host(fsl.expm(dev(np.asarray(x)))), sl.expm(x), rtol=1e-14)


def test_matmul_toeplitz_is_an_fft_product_as_scipys() -> None:
    # T @ x without forming T: rectangular, complex and
    # matrix right-hand sides against SciPy, derivatives as the dense product's
    rng = np.random.default_rng(3)
    for m, n in ((1, 1), (6, 4), (3, 8)):
        c, r = rng.normal(size=m), rng.normal(size=n) + 1j * rng.normal(size=n)
        for x in (rng.normal(size=n), rng.normal(size=(n, 2)) + 1j):
            assert_allclose(fsl.matmul_toeplitz((dev(c), dev(r)), dev(x)),
                            sl.matmul_toeplitz((c, r), x), rtol=1e-12, atol=1e-12)
    c, x = rng.normal(size=5), rng.normal(size=5)
    assert_allclose(fsl.matmul_toeplitz(dev(c), dev(x)), sl.matmul_toeplitz(c, x), rtol=1e-12)
    want = funcgrad.grad(lambda v: (fsl.toeplitz(v, x[::-1]) @ x).sum())(dev(c))
    got = funcgrad.jit(funcgrad.grad(
        lambda v: fsl.matmul_toeplitz((v, dev(x[::-1])), dev(x)).sum()))(dev(c))
    assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    big = rng.normal(size=40_000)   # a dense T would be 6.4 GB
    assert host(fsl.matmul_toeplitz((dev(big[:20_000]), dev(big)), dev(big))).shape == (20_000,)
    with pytest.raises(ValueError, match="x has shape"):
        fsl.matmul_toeplitz(dev(c), dev(np.ones(3)))
