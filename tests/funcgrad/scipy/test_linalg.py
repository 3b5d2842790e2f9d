"""funcgrad.scipy.linalg: JAX parity of derivatives (values recorded from jax.scipy.linalg
0.10.2 with float64, as literals), errors, and jit/vmap on the factor-then-solve programs.

Values against SciPy, finite-difference derivatives and vmap for every function are in the op
table tests/funcgrad/op_tables/scipy_linalg.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.scipy.linalg as fsl
from funcgrad.errors import LinAlgShapeError
from funcgrad.lax import linalg as linalg_lax

A = np.array([[0.5, -1.0, 0.25], [0.75, 0.1, -0.4], [0.2, 0.3, -0.6]])
B = np.array([[1.0, 2.0], [-1.0, 0.5], [0.3, 0.0]])


def test_expm_gradient_matches_jax() -> None:
    g = funcgrad.grad(lambda m: fsl.expm(m).sum())(dev(A))
    jax_g = [[1.3749850776607377, 1.9804038003525735, 1.6457537538599136],
             [0.2595696521345305, 0.538165345873895, 0.39811040023623095],
             [0.6070512019964496, 0.9557242871528117, 0.7712110818022329]]
    assert_allclose(g, np.array(jax_g), rtol=1e-12, atol=1e-12)
    g3 = funcgrad.grad(lambda m: fsl.expm(3 * m)[0, 1])(dev(A))
    jax_g3 = [[-4.104258563727445, -1.7156898483896506, -0.5571082785942376],
              [5.098490814536202, -1.4512620546327724, 0.02746322071262863],
              [-2.0224479270067848, 0.8474240915591555, 0.02662337808110571]]
    assert_allclose(g3, np.array(jax_g3), rtol=1e-11, atol=1e-11)


def test_lu_gradients_match_jax() -> None:
    g = funcgrad.grad(lambda m: fsl.lu_solve(fsl.lu_factor(m), dev(B)).sum())(dev(A))
    jax_g = [[-4.226907291842356, -10.671988905755137, -7.8445306497254546],
             [8.15426997245179, 20.587695133149673, 15.133149678604221],
             [-10.400854556698713, -26.259815220854176, -19.302486834954365]]
    assert_allclose(g, np.array(jax_g), rtol=1e-12, atol=1e-12)
    g_u = funcgrad.grad(lambda m: fsl.lu(m)[2].sum())(dev(A))
    jax_gu = [[0.5201171875, 1.12412109375, 1.25625],
              [0.5282552083333334, 0.12141927083333348, -0.10416666666666663],
              [0.46875, 0.48437499999999994, 1.0]]
    assert_allclose(g_u, np.array(jax_gu), rtol=1e-12, atol=1e-12)
    g_t = funcgrad.grad(lambda m: fsl.solve_triangular(m, dev(B), trans=1, lower=True).sum())(dev(A))
    jax_gt = [[-22.9, 0.0, 0.0], [7.0, -17.5, 0.0], [1.0, -2.5, -1.7499999999999998]]
    assert_allclose(g_t, np.array(jax_gt), rtol=1e-12, atol=1e-12)


def test_symmetric_solves_have_symmetric_gradients() -> None:
    # JAX's jax.scipy.linalg.solve(assume_a="pos") gradient is not symmetric; its symmetric
    # part is funcgrad's (both agree along symmetric perturbations).
    s = A @ A.T + 3 * np.eye(3)
    for kind in ("sym", "pos"):
        g = host(funcgrad.grad(lambda m, k=kind: fsl.solve(m, dev(B), assume_a=k).sum())(dev(s)))
        np.testing.assert_allclose(g, g.T, atol=1e-14)
        full = host(funcgrad.grad(lambda m: fsl.solve(m, dev(B)).sum())(dev(s)))
        np.testing.assert_allclose(g, (full + full.T) / 2, atol=1e-13)


def test_generalized_eigh_gradients_are_symmetric() -> None:
    # eigh(a, b) reads one triangle of each, like eigh(a), but differentiates as a function of
    # symmetric matrices: the gradients were lower-triangular (2x the off-diagonal symmetric
    # part). Reference: central differences of SciPy's eigh((a + a.T) / 2, (b + b.T) / 2).
    s = A @ A.T + 3 * np.eye(3)
    m = s + A + A.T
    w = np.arange(3.0)
    for lower in (True, False):
        ga, gb = (host(x) for x in funcgrad.grad(
            lambda x, y, lo=lower: fnp.sum(fsl.eigh(x, y, lower=lo)[0] * dev(w)), argnums=(0, 1))(
                dev(m), dev(s)))
        np.testing.assert_allclose(ga, ga.T, atol=1e-14)
        np.testing.assert_allclose(gb, gb.T, atol=1e-14)
        # d/d eps of sum(w * eigh(m + eps E, s)) along E = e_i e_j^T + e_j e_i^T is 2 ga[i, j]
        e01 = np.zeros((3, 3))
        e01[0, 1] = e01[1, 0] = 1.0
        eps = 1e-6
        fd = (np.sum(w * host(fsl.eigh(dev(m + eps * e01), dev(s), eigvals_only=True)))
              - np.sum(w * host(fsl.eigh(dev(m - eps * e01), dev(s), eigvals_only=True)))) / (
                  2 * eps)
        np.testing.assert_allclose(2 * ga[0, 1], fd, rtol=1e-6)


def test_factor_then_solve_under_jit_and_vmap() -> None:
    a = np.stack([A + 2 * np.eye(3), A.T + 3 * np.eye(3)])

    def f(m, b):
        return fsl.lu_solve(fsl.lu_factor(m), b) + fsl.cho_solve(fsl.cho_factor(m @ m.T), b)

    want = np.stack([host(f(dev(m), dev(B))) for m in a])
    assert_allclose(funcgrad.vmap(f, (0, None))(dev(a), dev(B)), want, rtol=1e-12, atol=1e-12)
    assert_allclose(funcgrad.jit(funcgrad.vmap(f, (0, None)))(dev(a), dev(B)), want,
                    rtol=1e-12, atol=1e-12)
    assert_allclose(funcgrad.vmap(fsl.expm)(dev(10 * a)), np.stack([host(fsl.expm(dev(10 * m))) for m in a]),
                    rtol=1e-12, atol=1e-12)


def test_lu_of_singular_matrix_keeps_the_zero_pivot() -> None:
    p, low, up = fsl.lu(np.array([[1.0, 2.0], [2.0, 4.0]]))
    assert_allclose(up, np.array([[2.0, 4.0], [0.0, 0.0]]))
    assert_allclose(p @ low @ up, np.array([[1.0, 2.0], [2.0, 4.0]]))


def test_expm_beyond_max_squarings_is_nan() -> None:
    out = fsl.expm(np.array([[1e6, 0.0], [0.0, 1.0]]), max_squarings=4)
    assert np.isnan(np.asarray(out)).all()


@pytest.mark.parametrize("call", [
    lambda: fsl.lu(np.ones(3)),
    lambda: fsl.inv(np.ones((2, 3))),
    lambda: fsl.solve(np.eye(3), np.ones(2)),
    lambda: fsl.solve(np.eye(3), np.ones((2, 2))),
    lambda: fsl.solve_triangular(np.eye(2), np.ones((3, 1))),
    lambda: fsl.cholesky(np.ones((2, 3))),
    lambda: fsl.expm(np.ones((2, 3))),
    lambda: fsl.lu_solve(fsl.lu_factor(dev(np.eye(3))), dev(np.ones(4))),
])
def test_bad_shapes_raise_linalg_shape_errors(call) -> None:
    with pytest.raises(LinAlgShapeError):
        call()


@pytest.mark.parametrize("call,match", [
    (lambda: fsl.qr(np.eye(2), mode="bad"), "mode"),
    (lambda: fsl.solve(np.eye(2), np.ones(2), assume_a="weird"), "structure"),
    (lambda: fsl.solve_triangular(np.eye(2), np.ones(2), trans=3), "trans"),
    (lambda: fsl.eigh(np.eye(2), type=4), "type"),
    (lambda: fsl.eigh(np.eye(3), subset_by_index=(1, 5)), "subset_by_index"),
    (lambda: fsl.eigh_tridiagonal(np.ones(3), np.ones(3)), "len"),
    (lambda: fsl.polar(np.eye(2), side="up"), "side"),
    (lambda: fsl.pascal(3, kind="odd"), "kind"),
    (lambda: fsl.pascal(35), "exceed uint64"),  # SciPy: object array of Python ints
    (lambda: fsl.expm_frechet(np.eye(2), np.eye(3)), "shape"),
])
def test_bad_options_raise_value_errors(call, match) -> None:
    with pytest.raises(ValueError, match=match):
        call()


def test_singular_matrix_gives_jaxs_nan_and_inf() -> None:
    # jax.scipy.linalg values (SciPy raises LinAlgError; traced code cannot catch it)
    np.testing.assert_array_equal(fsl.solve(np.ones((2, 2)), np.ones(2)), [np.nan, np.nan])
    np.testing.assert_array_equal(fsl.cholesky(-np.eye(2)), [[np.nan, np.nan], [0.0, np.nan]])


def test_sqrtm_matches_scipy_and_differentiates() -> None:
    import scipy.linalg as sl

    from funcgrad.test_util import check_grads

    rng = np.random.default_rng(0)
    for a in [A @ A.T + np.eye(3), np.array([[1.0, 2.0], [-3.0, 1.0]]), rng.standard_normal((4, 4)),
              np.array([[-4.0, 0.0], [0.0, 1.0]])]:
        out = fsl.sqrtm(dev(a))
        assert host(out).dtype == np.complex128
        assert_allclose(out, sl.sqrtm(a).astype(np.complex128), rtol=1e-12, atol=1e-12)
    assert host(fsl.sqrtm(dev(np.eye(2, dtype=np.float32)))).dtype == np.complex64
    s = A @ A.T + np.eye(3)
    check_grads(lambda m: fsl.sqrtm(m).real, (dev(s),), order=1, modes=("fwd", "rev"))
    assert_allclose(funcgrad.vmap(fsl.sqrtm)(dev(np.stack([s, 2 * s]))),
                    np.stack([sl.sqrtm(s), sl.sqrtm(2 * s)]).astype(complex), rtol=1e-12,
                    atol=1e-12)


# Column-pivoted QR: values from jax.scipy.linalg.qr(..., pivoting=True) (JAX 0.10.2, x64),
# permutations equal to SciPy's (LAPACK geqp3).
_PIV_A = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0], [1.0, 0.0, 1.0]])
_PIV_R = np.array([[-12.083045973594572, -8.110537708303205, -9.60022830778747],
                   [0.0, -1.1041639743225555, -0.12406336790140948],
                   [0.0, 0.0, 0.9056625856802978],
                   [0.0, 0.0, 0.0]])


@pytest.mark.parametrize("mode", ["full", "economic", "r"])
def test_qr_pivoting_as_jax(mode) -> None:
    out = fsl.qr(dev(_PIV_A), pivoting=True, mode=mode)
    *factors, p = out
    assert host(p).dtype == np.int32 and host(p).tolist() == [2, 0, 1]
    r = host(factors[-1])
    want_r = _PIV_R[:3] if mode == "economic" else _PIV_R
    assert_allclose(r, want_r, rtol=1e-12, atol=1e-12)
    if mode != "r":
        assert_allclose(host(factors[0]) @ r, _PIV_A[:, [2, 0, 1]], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("a, perm", [
    (np.eye(3), [0, 1, 2]),
    (np.ones((3, 3)), [0, 1, 2]),                       # ties: LAPACK keeps the first
    (np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]]), [2, 1, 0]),  # rank one
    (np.diag([1.0, 3.0, 2.0]), [1, 2, 0]),              # the swap moves column 0 to place 1
    (np.zeros((0, 3)), [0, 1, 2]),
])
def test_qr_pivoting_permutations_are_lapacks(a, perm) -> None:
    assert host(fsl.qr(dev(a), pivoting=True)[2]).tolist() == perm


def test_qr_pivoting_batches_jits_and_differentiates() -> None:
    from funcgrad.test_util import check_grads

    stack = np.stack([_PIV_A, _PIV_A[:, ::-1]])
    for f in (lambda x: fsl.qr(x, pivoting=True, mode="economic"),
              funcgrad.vmap(lambda x: fsl.qr(x, pivoting=True, mode="economic")),
              funcgrad.jit(lambda x: fsl.qr(x, pivoting=True, mode="economic"))):
        q, r, p = f(dev(stack))
        assert host(p).tolist() == [[2, 0, 1], [0, 2, 1]]
        assert_allclose(host(r)[0], _PIV_R[:3], rtol=1e-12, atol=1e-12)
        assert_allclose(host(r)[1], _PIV_R[:3], rtol=1e-12, atol=1e-12)
    # jax.grad of sum(R^2 * arange(9).reshape(3, 3)), the permutation held fixed
    g = funcgrad.grad(lambda x: fnp.sum(fsl.qr(x, pivoting=True, mode="economic")[1] ** 2
                                        * fnp.arange(9.0).reshape(3, 3)))(dev(_PIV_A))
    assert_allclose(host(g), np.array(
        [[-3.9003965529466527, 4.080652608896428, 7.074542188745119],
         [7.676545613965304, 22.812990611051255, -2.017865623633868],
         [15.710877794937334, 32.46359858396183, -1.516736024955005],
         [4.533138025674765, -9.755887332615051, 6.0509274251179415]]), rtol=1e-10, atol=1e-10)
    check_grads(lambda x: fsl.qr(x, pivoting=True, mode="economic")[:2], (dev(_PIV_A),),
                order=1, modes=("fwd", "rev"))
    # lax.linalg.qr and qr_multiply pivot too (JAX's results: (q, r, p), (cq, r, p))
    q, r, p = linalg_lax.qr(dev(_PIV_A), pivoting=True)
    assert host(q).shape == (4, 4) and host(p).tolist() == [2, 0, 1]
    cq, r, p = fsl.qr_multiply(dev(_PIV_A), dev(np.eye(4)[:2]), pivoting=True)
    assert_allclose(host(cq) @ host(r), _PIV_A[:2, [2, 0, 1]], rtol=1e-12, atol=1e-12)


def test_structured_matrices_batch_over_leading_axes() -> None:
    # SciPy 1.17 and jax.scipy.linalg map toeplitz/circulant/... over leading axes (funcgrad
    # flattened them); each slice is the 1-D constructor's matrix, shapes as JAX's.
    c = np.array([[1.0, 2.0, 3.0], [4.0, -5.0, 6.0]])
    r = np.array([[7.0, 8.0, 9.0, 10.0]])
    cases = [
        (fsl.toeplitz, (c,), (2, 3, 3)),
        (fsl.toeplitz, (c, r), (2, 3, 4)),          # batch axes broadcast
        (fsl.circulant, (c[:, None, :],), (2, 1, 3, 3)),
        (fsl.hankel, (c,), (2, 3, 3)),
        (fsl.companion, (c,), (2, 2, 2)),
        (fsl.fiedler, (c,), (2, 3, 3)),
        (fsl.fiedler_companion, (c,), (2, 2, 2)),
        (fsl.leslie, (c, c[:, :2]), (2, 3, 3)),
        (lambda a: fsl.convolution_matrix(a, 2, "same"), (c,), (2, 3, 2)),
    ]
    for fn, args, shape in cases:
        out = host(fn(*map(dev, args)))
        assert out.shape == shape, (fn, out.shape)
        flat = out.reshape((-1,) + shape[-2:])
        rows = [np.broadcast_to(a, shape[:-2] + a.shape[-1:]).reshape(-1, a.shape[-1])
                for a in args]
        for i, m in enumerate(flat):
            assert_allclose(m, host(fn(*(dev(x[i]) for x in rows))), rtol=0, atol=0)
    # JAX: toeplitz of a (2, 3) stack, conj(c) as the first rows
    assert_allclose(host(fsl.toeplitz(dev(c)))[1],
                    np.array([[4.0, -5.0, 6.0], [-5.0, 4.0, -5.0], [6.0, -5.0, 4.0]]))
    g = funcgrad.grad(lambda x: fnp.sum(fsl.toeplitz(x) ** 2))(dev(c))
    assert_allclose(host(g), 2 * np.array([[3.0, 4.0, 2.0], [3.0, 4.0, 2.0]]) * c)  # entry counts
    assert host(funcgrad.jit(fsl.circulant)(dev(c))).shape == (2, 3, 3)


def test_jax_keywords_of_polar_and_dft() -> None:
    a = np.array([[0.0, 2.0], [3.0, 0.0]])
    for method in ("qdwh", "svd"):
        u, p = fsl.polar(dev(a), method=method, eps=1e-12, max_iterations=10)
        assert_allclose(host(u), np.array([[0.0, 1.0], [1.0, 0.0]]), atol=1e-15)
        assert_allclose(host(p), np.diag([3.0, 2.0]), atol=1e-15)
    with pytest.raises(ValueError, match="method"):
        fsl.polar(dev(a), method="newton")
    d = host(fsl.dft(4, dtype=np.complex64))
    assert d.dtype == np.complex64
    assert_allclose(d, np.fft.fft(np.eye(4)).astype(np.complex64), atol=1e-6)
    with pytest.raises(ValueError, match="complex"):
        fsl.dft(2, dtype=np.float32)


def test_polar_and_hessenberg_take_stacks() -> None:
    # SciPy 1.17 maps both over leading dimensions; they raised "must be a 2-D array".
    st = np.stack([A, A.T, 2 * A])
    for side in ("right", "left"):
        u, p = (host(x) for x in fsl.polar(dev(st), side=side))
        for i in range(3):
            for got, want in zip((u[i], p[i]), fsl.polar(dev(st[i]), side=side), strict=True):
                assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    h, q = (host(x) for x in fsl.hessenberg(dev(st), calc_q=True))
    for i in range(3):
        hi, qi = fsl.hessenberg(dev(st[i]), calc_q=True)
        assert_allclose(h[i], hi, rtol=1e-12, atol=1e-14)
        assert_allclose(q[i], qi, rtol=1e-12, atol=1e-14)
        assert_allclose(q[i] @ h[i] @ q[i].T, st[i], rtol=1e-12, atol=1e-12)


def test_cho_factor_of_a_stack_has_one_flag_per_matrix_as_scipy() -> None:
    # SciPy 1.17: cho_factor of a (2, 2, 2) stack gives lower = array([False, False]) (one
    # flag was given), and its cho_solve takes them; ours refused SciPy's array flags
    a = np.stack([2 * np.eye(2), 3 * np.eye(2)])
    c, low = fsl.cho_factor(dev(a), lower=True)
    assert isinstance(low, np.ndarray) and low.tolist() == [True, True]
    assert fsl.cho_factor(dev(a[0]))[1] is False
    want = np.array([[[0.5, 0.5], [0.5, 0.5]], [[1 / 3, 1 / 3], [1 / 3, 1 / 3]]])
    assert_allclose(fsl.cho_solve((c, low), dev(np.ones((2, 2)))), want, rtol=1e-12)
    assert_allclose(fsl.cho_solve((c, np.array([True, True])), dev(np.ones((2, 2)))), want,
                    rtol=1e-12)
    with pytest.raises(ValueError, match="must all be equal"):
        fsl.cho_solve((c, np.array([True, False])), dev(np.ones((2, 2))))
