"""Focused tests of the decomposition primitives and funcgrad.numpy.linalg: stacks of
matrices, errors, complex derivatives, degenerate cases, Hessians and NumPy routing."""

from __future__ import annotations

import types

import numpy as np
import pytest
from helpers import (
    DEVICE,
    SAME_ARITHMETIC,
    assert_allclose,
    check_device,
    dev,
    host,
    rand,
    skip_on_gpu,
)

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.errors import DTypeError, NonDifferentiableError, ShapeError
from funcgrad.ops import linalg_decomp as ld
from funcgrad.test_util import check_grads


def _spd(n, batch=(), seed=0):
    b = rand(batch + (n, n), np.float64, -1.0, 1.0, seed=seed)
    return b @ np.swapaxes(b, -1, -2) + n * np.eye(n)


def _dominant(n, batch=(), seed=0):
    return rand(batch + (n, n), np.float64, -1.0, 1.0, seed=seed) + 2.5 * np.eye(n)


def _herm(a):
    """``(a + a^H) / 2``: the derivative checks of cholesky/eigh/eigvalsh move along Hermitian
    directions only (their tangents are symmetrised, as in JAX)."""
    return (a + fnp.conj(fnp.swapaxes(a, -1, -2))) / 2


def _cplx(shape, seed=0):
    return (rand(shape, np.float64, -1.0, 1.0, seed=seed)
            + 1j * rand(shape, np.float64, -1.0, 1.0, seed=seed + 1))


# ---------------------------------------------------------------------------------------------
# Stacks of matrices: one call equals a loop, values and gradients


_STACKED = [
    ("cholesky", fnp.linalg.cholesky, lambda: (_spd(3, (2, 2)),)),
    ("inv", fnp.linalg.inv, lambda: (_dominant(3, (4,)),)),
    ("det", fnp.linalg.det, lambda: (_dominant(3, (4,)),)),
    ("slogdet", lambda a: tuple(fnp.linalg.slogdet(a)), lambda: (_dominant(3, (4,)),)),
    ("solve", fnp.linalg.solve, lambda: (_dominant(3, (4,)), rand((4, 3, 2), seed=3))),
    ("eigvalsh", fnp.linalg.eigvalsh, lambda: (_spd(3, (2, 2)),)),
    ("svdvals", fnp.linalg.svdvals, lambda: (rand((3, 4, 2), seed=4),)),
    ("qr", lambda a: tuple(fnp.linalg.qr(a)), lambda: (rand((3, 4, 2), seed=5),)),
    ("pinv", fnp.linalg.pinv, lambda: (rand((3, 2, 4), seed=6),)),
    ("norm2", lambda a: fnp.linalg.norm(a, 2, axis=(-2, -1)), lambda: (rand((3, 2, 4), seed=7),)),
]


@pytest.mark.parametrize("name,fn,make", _STACKED, ids=[s[0] for s in _STACKED])
def test_stacked_matrices_match_a_loop(name, fn, make) -> None:
    args = make()
    got = fn(*dev(args))
    check_device(got)
    n = args[0].shape[0]
    loop = [host(fn(*dev(tuple(a[i] for a in args)))) for i in range(n)]
    want = funcgrad.tree_util.tree_map(lambda *xs: np.stack(xs), *loop)
    assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    # The gradient of a scalar summary, stacked, equals the per-matrix gradients.
    def total(*xs):
        out = fn(*xs)
        return sum(fnp.sum(fnp.real(o) if o.dtype.kind == "c" else o)
                   for o in funcgrad.tree_util.tree_leaves(out))

    g = funcgrad.grad(total)(*dev(args))
    g_loop = np.stack([host(funcgrad.grad(total)(*dev(tuple(a[i] for a in args))))
                       for i in range(n)])
    assert_allclose(g, g_loop, rtol=1e-9, atol=1e-9)


def test_vmap_of_solve_with_a_shared_matrix() -> None:
    a = _dominant(3, seed=1)
    bs = rand((5, 3), seed=2)
    a_d, b0 = dev(a), dev(bs[0])
    got = funcgrad.vmap(lambda b: fnp.linalg.solve(a_d, b))(dev(bs))
    assert_allclose(got, np.linalg.solve(a, bs.T).T, rtol=1e-12, atol=1e-12)
    got = funcgrad.vmap(lambda m: fnp.linalg.solve(m, b0))(dev(np.stack([a, a + np.eye(3)])))
    assert_allclose(got, np.stack([np.linalg.solve(a, bs[0]),
                                   np.linalg.solve(a + np.eye(3), bs[0])]))


def test_batched_grads_to_second_order() -> None:
    a = _dominant(3, (2,), seed=8)
    for fn in (fnp.linalg.inv, fnp.linalg.det, lambda m: fnp.linalg.slogdet(m)[1],
               lambda m: fnp.linalg.eigvalsh(m @ fnp.swapaxes(m, -1, -2))):
        check_grads(fn, dev((a,)), order=2)


# ---------------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize("name", ["cholesky", "inv", "det", "slogdet", "eigh", "eigvalsh"])
def test_non_square_names_the_function_and_shape(name) -> None:
    fn = getattr(fnp.linalg, name)
    with pytest.raises(ShapeError, match=rf"{name}.*(2, 3|f64\[2,3\])"):
        fn(dev(np.ones((2, 3))))
    # The primitive's shape rule says the same when tracing.
    prim = getattr(ld, name)
    with pytest.raises(ShapeError, match=rf"{name}: expected a square matrix.*f64\[2,3\]"):
        funcgrad.make_jaxpr(prim)(np.ones((2, 3)))


def test_shape_errors_of_solve_and_friends() -> None:
    with pytest.raises(ShapeError, match="solve.*square"):
        fnp.linalg.solve(dev(np.ones((2, 3))), dev(np.ones(2)))
    with pytest.raises(ShapeError, match="solve"):
        fnp.linalg.solve(dev(np.eye(3)), dev(np.ones(2)))
    with pytest.raises(ShapeError, match="triangular_solve: the right-hand side"):
        ld.triangular_solve(np.eye(3), np.ones((2, 1)))
    with pytest.raises(ShapeError, match="svd.*at least 2"):
        fnp.linalg.svd(dev(np.ones(3)))
    with pytest.raises(ShapeError, match="qr"):
        fnp.linalg.qr(dev(np.ones(3)))
    with pytest.raises(ValueError, match="outer: input arrays must be one-dimensional"):
        fnp.linalg.outer(dev(np.ones((2, 2))), dev(np.ones(2)))
    with pytest.raises(ValueError, match="cross"):
        fnp.linalg.cross(dev(np.ones(2)), dev(np.ones(2)))
    with pytest.raises(ValueError, match="Invalid norm order|invalid norm order"):
        fnp.linalg.norm(dev(np.ones(3)), "fro", axis=0)
    with pytest.raises(ValueError, match="UPLO"):
        fnp.linalg.eigh(dev(np.eye(2)), UPLO="X")


def test_singular_values_of_det_slogdet_are_numpys() -> None:
    # (inv/solve/cholesky of singular or indefinite input: tests/funcgrad/ops/test_linalg_singular.py)
    assert float(host(fnp.linalg.det(dev(np.zeros((2, 2)))))) == 0.0
    sign, logabs = fnp.linalg.slogdet(dev(np.zeros((2, 2))))
    assert float(host(sign)) == 0.0 and float(host(logabs)) == -np.inf
    assert fnp.linalg.LinAlgError is np.linalg.LinAlgError


def test_dtype_errors_and_conversions() -> None:
    with pytest.raises(DTypeError, match="float16 is unsupported in linalg"):
        fnp.linalg.inv(dev(np.eye(2, dtype=np.float16)))
    with pytest.raises(DTypeError, match="inv: array type int64"):
        funcgrad.make_jaxpr(ld.inv)(np.eye(2, dtype=np.int64))
    # Integers become float64, float32 stays float32, as in NumPy.
    assert fnp.linalg.inv(dev(np.eye(2, dtype=np.int32))).dtype == np.float64
    assert fnp.linalg.det(dev(np.eye(2, dtype=np.float32))).dtype == np.float32
    assert fnp.linalg.solve(dev(np.eye(2, dtype=np.float32)), [1.0, 2.0]).dtype == np.float64


def test_complete_qr_of_a_tall_matrix_differentiates_as_jax() -> None:
    # The extra columns of q are those of LAPACK's Householder QR, a function of the first n
    # (JAX 0.10's rule; funcgrad raised NonDifferentiableError). Reference: jax.grad of the
    # same function with jax.numpy (x64).
    x = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 4.0]])
    w = dev(np.array([[1.0, -2.0, 0.5], [0.0, 1.0, 3.0], [2.0, 1.0, -1.0]]))

    def f(m):
        q, r = fnp.linalg.qr(m, mode="complete")
        return fnp.sum(q * w) + fnp.sum(r)

    want = np.array([[-0.43863302600784027, -0.6238822292954743],
                     [-0.47847578961285386, -1.045150983117282],
                     [-2.655003447740044, 1.115546119861792]])
    assert_allclose(funcgrad.grad(f)(dev(x)), want, rtol=1e-10, atol=1e-12)
    check_grads(lambda m: fnp.linalg.qr(m, mode="complete"), (dev(rand((2, 4, 2))),), order=1)


def test_undefined_derivatives_say_so() -> None:
    # Values are fine; derivatives of these modes are not defined (JAX and PyTorch refuse
    # them too): a funcgrad error naming the mode, the fix and the user's line.
    with pytest.raises(NonDifferentiableError, match="full_matrices=False") as e:
        funcgrad.grad(lambda a: fnp.sum(fnp.linalg.svd(a)[0]))(dev(rand((3, 2))))
    assert "test_linalg_decomp.py" in str(e.value)
    with pytest.raises(NonDifferentiableError, match="qr: mode='raw' is not differentiable"):
        funcgrad.grad(lambda a: fnp.sum(fnp.linalg.qr(a, mode="raw")[1]))(dev(rand((3, 2))))
    assert issubclass(NonDifferentiableError, ValueError)
    assert not issubclass(NonDifferentiableError, NotImplementedError)


_RAW_SHAPES = [(4, 3), (3, 4), (3, 3), (2, 3, 5, 2), (1, 1), (5, 1), (0, 3), (3, 0)]


def _raw_input(shape, dt, seed):
    a = rand(shape, np.float64, -1.0, 1.0, seed=seed)
    if np.dtype(dt).kind == "c":
        a = a + 1j * rand(shape, np.float64, -1.0, 1.0, seed=seed + 1)
    return a.astype(dt)


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.complex128, np.complex64])
def test_qr_raw_equals_numpy(dt) -> None:
    skip_on_gpu("cuSOLVER's Householder vectors differ from LAPACK's in the last bits")
    for i, shape in enumerate(_RAW_SHAPES):
        a = _raw_input(shape, dt, i)
        want_h, want_tau = np.linalg.qr(a, mode="raw")
        h, tau = fnp.linalg.qr(dev(a), mode="raw")
        check_device(h)
        assert h.dtype == want_h.dtype and tau.dtype == want_tau.dtype
        np.testing.assert_array_equal(host(h), want_h)
        np.testing.assert_array_equal(host(tau), want_tau)
        # The Householder construction used where an array module's qr has no raw mode.
        tol = 1e-5 if dt in (np.float32, np.complex64) else 1e-12
        fh, ftau = ld._householder_qr_raw(dev(a))
        check_device(fh)
        assert fh.dtype == want_h.dtype and ftau.dtype == want_tau.dtype
        assert_allclose(fh, want_h, rtol=tol, atol=tol)
        assert_allclose(ftau, want_tau, rtol=tol, atol=tol)
    assert fnp.linalg.qr(np.arange(6).reshape(2, 3), mode="raw")[0].dtype == np.float64


def test_qr_raw_householder_edge_cases() -> None:
    # A column already zero below the diagonal gets tau = 0 (the identity reflector).
    for a in (np.array([[1.0, 2.0], [0.0, 3.0], [0.0, 4.0]]), np.zeros((3, 2)),
              np.array([[1j, 2.0], [0.0, 3.0]])):
        for got, want in zip(ld._householder_qr_raw(dev(a)), np.linalg.qr(a, mode="raw")):
            assert_allclose(got, want, rtol=1e-14, atol=1e-14)


def test_qr_raw_on_a_module_other_than_numpy_builds_the_reflectors(monkeypatch) -> None:
    # Any array module but NumPy's (CuPy's raw mode takes no stacks) gets the Householder
    # construction from its own operations; it never calls the module's raw qr.
    class NoRaw:
        def __getattr__(self, name):
            return getattr(np.linalg, name)

        def qr(self, a, mode="reduced"):
            assert mode != "raw", "the module's raw qr was called"
            return np.linalg.qr(a, mode=mode)

    fake = types.SimpleNamespace(**{k: getattr(np, k) for k in dir(np) if not k.startswith("_")})
    fake.linalg = NoRaw()
    monkeypatch.setattr(ld, "xp_for", lambda *a, **k: fake)
    a = _raw_input((2, 4, 3), np.float64, 3)
    for got, want in zip(ld._qr_impl(a, mode="raw"), np.linalg.qr(a, mode="raw")):
        assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_qr_raw_under_jit_and_vmap() -> None:
    a = _raw_input((3, 5, 4), np.float64, 7)
    want_h, want_tau = np.linalg.qr(a, mode="raw")
    raw = funcgrad.jit(lambda m: fnp.linalg.qr(m, mode="raw"))
    h, tau = raw(dev(a))  # LAPACK's own numbers on the CPU (cuSOLVER's differ in ulps)
    assert_allclose(h, want_h, **SAME_ARITHMETIC)
    assert_allclose(tau, want_tau, **SAME_ARITHMETIC)
    h, tau = funcgrad.vmap(lambda m: fnp.linalg.qr(m, mode="raw"), in_axes=1)(
        dev(np.moveaxis(a, 0, 1)))
    assert_allclose(h, want_h, rtol=1e-14, atol=1e-14)
    assert_allclose(tau, want_tau, rtol=1e-14, atol=1e-14)
    assert funcgrad.eval_shape(lambda m: fnp.linalg.qr(m, mode="raw"), a)[0].shape == (3, 4, 5)


# ---------------------------------------------------------------------------------------------
# Derivatives


def test_hessian_of_slogdet() -> None:
    a = _dominant(3, seed=11)
    h = funcgrad.hessian(lambda m: fnp.linalg.slogdet(m)[1])(dev(a))
    ainv = np.linalg.inv(a)
    # d2 log|det A| / dA_ij dA_kl = -inv(A)_jk inv(A)_li
    want = -np.einsum("jk,li->ijkl", ainv, ainv)
    assert_allclose(h, want, rtol=1e-10, atol=1e-12)
    g = funcgrad.grad(lambda m: fnp.linalg.slogdet(m)[1])(dev(a))
    assert_allclose(g, ainv.T, rtol=1e-12, atol=1e-12)


def test_det_gradient_is_the_cofactor_matrix() -> None:
    a = _dominant(3, seed=12)
    g = funcgrad.grad(fnp.linalg.det)(dev(a))
    assert_allclose(g, np.linalg.det(a) * np.linalg.inv(a).T, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,fn,make", [
    ("cholesky", lambda a: ld.cholesky(_herm(a)),
     lambda: (_cplx((3, 3)) @ _cplx((3, 3)).conj().T + 3 * np.eye(3),)),
    ("solve", ld.solve, lambda: (_cplx((3, 3)) + 3 * np.eye(3), _cplx((3, 2), seed=5))),
    ("inv", ld.inv, lambda: (_cplx((3, 3)) + 3 * np.eye(3),)),
    ("det", ld.det, lambda: (_cplx((3, 3)) + 3 * np.eye(3),)),
    ("slogdet", ld.slogdet, lambda: (_cplx((3, 3)) + 3 * np.eye(3),)),
    ("eigvalsh", lambda a: ld.eigvalsh(_herm(a)), lambda: (_cplx((3, 3)) @ _cplx((3, 3)).conj().T,)),
    ("svdvals", lambda a: ld.svd(a, compute_uv=False), lambda: (_cplx((3, 2)),)),
    ("qr", ld.qr, lambda: (_cplx((3, 2)),)),
    ("qr_wide", ld.qr, lambda: (_cplx((2, 3)),)),
    ("triangular_solve", lambda a, b: ld.triangular_solve(a, b, transpose_a=True,
                                                          conjugate_a=True),
     lambda: (_cplx((3, 3)) + 3 * np.eye(3), _cplx((3, 2), seed=5))),
])
def test_complex_derivatives(name, fn, make) -> None:
    check_grads(fn, dev(make()), order=1)


def test_eigh_complex_invariants_differentiate() -> None:
    b = _cplx((3, 3))
    a = b @ b.conj().T + np.diag([0.0, 2.0, 5.0])

    def projector(m):
        w, v = ld.eigh(_herm(m))
        p = v[:, :1] * fnp.conj(v[:, :1]).T  # independent of the eigenvector's phase
        return w, p

    check_grads(projector, dev((a,)), order=2)


def test_degenerate_eigenvalues_stay_finite() -> None:
    # The identity has one repeated eigenvalue: eigenvalue derivatives are the diagonal of
    # the perturbation; eigenvector derivatives drop the (undefined) degenerate part.
    a = np.eye(3)
    da = _spd(3, seed=2)
    (w, v), (dw, dv) = funcgrad.jvp(lambda m: fnp.linalg.eigh(m), (dev(a),), (dev(da),))
    assert np.all(np.isfinite(host(dv)))
    assert_allclose(np.sum(host(dw)), np.trace(da), rtol=1e-12)
    g = funcgrad.grad(lambda m: fnp.sum(fnp.linalg.eigh(m)[1]))(dev(a))
    assert np.all(np.isfinite(host(g)))
    g = funcgrad.grad(lambda m: fnp.sum(fnp.linalg.svd(m, compute_uv=False)))(dev(a))
    assert_allclose(g, np.eye(3), rtol=1e-12, atol=1e-12)


def test_cholesky_reads_the_lower_triangle() -> None:
    a = _spd(3, seed=3)
    up = np.triu(rand((3, 3), seed=4), 1)
    assert_allclose(fnp.linalg.cholesky(dev(a + up)), np.linalg.cholesky(a))
    # A symmetric perturbation gives the usual symmetric derivative.
    s = _spd(3, seed=5)
    _, t = funcgrad.jvp(fnp.linalg.cholesky, (dev(a),), (dev(s),))
    eps = 1e-6
    fd = (np.linalg.cholesky(a + eps * s) - np.linalg.cholesky(a - eps * s)) / (2 * eps)
    assert_allclose(t, fd, rtol=1e-6, atol=1e-8)


def _sym_fd_grad(f, a, eps=1e-6):
    """Central differences of ``f(sym(a))`` entry by entry: the symmetric gradient JAX,
    PyTorch and autograd give for a function of a symmetric matrix."""
    g = np.zeros_like(a)
    sym = lambda m: (m + m.T) / 2  # noqa: E731
    for idx in np.ndindex(a.shape):
        e = np.zeros_like(a)
        e[idx] = eps
        g[idx] = (f(sym(a + e)) - f(sym(a - e))) / (2 * eps)
    return g


_SYM_GRAD_CASES = [
    ("cholesky", lambda m: fnp.sum(fnp.linalg.cholesky(m) * _Wd),
     lambda m: np.sum(np.linalg.cholesky(m) * _W)),
    ("cholesky_upper", lambda m: fnp.sum(fnp.linalg.cholesky(m, upper=True) * _Wd),
     lambda m: np.sum(np.linalg.cholesky(m, upper=True) * _W)),
    ("eigvalsh", lambda m: fnp.sum(fnp.linalg.eigvalsh(m) * _Wd[0]),
     lambda m: np.sum(np.linalg.eigvalsh(m) * _W[0])),
    ("eigvalsh_upper", lambda m: fnp.sum(fnp.linalg.eigvalsh(m, UPLO="U") * _Wd[0]),
     lambda m: np.sum(np.linalg.eigvalsh(m, UPLO="U") * _W[0])),
    ("eigh", lambda m: fnp.sum(fnp.abs(fnp.linalg.eigh(m)[1]) * _Wd)
     + fnp.sum(fnp.linalg.eigh(m)[0] ** 2),
     lambda m: np.sum(np.abs(np.linalg.eigh(m)[1]) * _W) + np.sum(np.linalg.eigh(m)[0] ** 2)),
]
_W = np.array([[1.0, -2.0, 0.5], [0.3, 1.5, -0.7], [2.0, 0.1, 1.2]])
_Wd = dev(_W)  # the weights on the test device, for the funcgrad side


@pytest.mark.parametrize("name,f,ref", _SYM_GRAD_CASES, ids=[c[0] for c in _SYM_GRAD_CASES])
def test_gradient_wrt_the_matrix_is_symmetric(name, f, ref) -> None:
    a = _spd(3, seed=21)
    for g in (funcgrad.grad(f)(dev(a)), funcgrad.jit(funcgrad.grad(f))(dev(a))):
        assert_allclose(g, host(g).T, rtol=0, atol=1e-12)
        assert_allclose(g, _sym_fd_grad(ref, a), rtol=1e-6, atol=1e-7)
    # A gradient step keeps a symmetric matrix exactly symmetric.
    step = host(dev(a) - 0.01 * funcgrad.grad(f)(dev(a)))
    assert np.array_equal(step, step.T)
    # Batched: each matrix's gradient is symmetric.
    stack = _spd(3, (2,), seed=22)
    gb = host(funcgrad.vmap(funcgrad.grad(f))(dev(stack)))
    assert_allclose(gb, np.swapaxes(gb, -1, -2), rtol=0, atol=1e-12)
    assert_allclose(gb[1], _sym_fd_grad(ref, stack[1]), rtol=1e-6, atol=1e-7)


def test_complex_cholesky_gradient_is_hermitian() -> None:
    b = _cplx((3, 3), seed=7)
    a = b @ b.conj().T + 3 * np.eye(3)
    g = host(funcgrad.grad(lambda m: fnp.sum(fnp.real(fnp.linalg.cholesky(m)) * _Wd))(dev(a)))
    assert_allclose(g, g.conj().T, rtol=0, atol=1e-12)


def test_norm_gradient_at_zero_is_zero_not_nan() -> None:
    for fn, x in ((fnp.linalg.norm, np.zeros(3)), (fnp.linalg.norm, np.zeros((2, 2))),
                  (lambda v: fnp.linalg.norm(v, axis=1), np.zeros((2, 3))),
                  (fnp.linalg.vector_norm, np.zeros(4)), (fnp.linalg.matrix_norm, np.zeros((2, 2)))):
        g = funcgrad.grad(lambda v, fn=fn: fnp.sum(fn(v)))(dev(x))
        assert_allclose(g, np.zeros_like(x))
    # Away from zero, the usual x / |x|.
    x = np.array([3.0, -4.0])
    assert_allclose(funcgrad.grad(fnp.linalg.norm)(dev(x)), x / 5.0)


@pytest.mark.parametrize("ord_, want", [
    # torch.linalg.vector_norm(x, ord).backward() at x = [0, 1, -2]: a zero entry's
    # derivative is 0 (sign(0)), also for ord < 1 where |x| ** (ord - 1) is infinite there.
    (0.5, [0.0, 2.414213562373095, -1.7071067811865475]),
    (3, [0.0, 0.23112042478354257, -0.9244816991341703]),
    (-1, [0.0, 0.0, 0.0]),
    (-2, [0.0, 0.0, 0.0]),
])
def test_vector_norm_gradient_at_zero_entries_is_torchs(ord_, want) -> None:
    x = dev(np.array([0.0, 1.0, -2.0]))
    assert_allclose(funcgrad.grad(lambda v: fnp.linalg.norm(v, ord_))(x), np.array(want),
                    rtol=1e-12)
    # and 0 at the zero vector (NumPy's values there: 0, or inf for ord < 0 of an empty one).
    assert_allclose(funcgrad.grad(lambda v: fnp.linalg.norm(v, ord_))(dev(np.zeros(3))),
                    np.zeros(3))
    with np.errstate(divide="ignore"):   # NumPy warns of 0 ** ord for ord < 0
        assert_allclose(fnp.linalg.norm(x, ord_), np.linalg.norm(host(x), ord_))


def test_pinv_and_lstsq_gradients() -> None:
    a = rand((4, 2), seed=6)
    b = rand((4,), seed=7)
    check_grads(lambda m, v: fnp.linalg.lstsq(m, v)[0], dev((a, b)), order=2)
    g = funcgrad.grad(lambda m: fnp.sum(fnp.linalg.pinv(m)))(dev(a))
    eps = 1e-6
    fd = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        e = np.zeros_like(a)
        e[idx] = eps
        fd[idx] = (np.sum(np.linalg.pinv(a + e)) - np.sum(np.linalg.pinv(a - e))) / (2 * eps)
    assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def test_lstsq_rank_and_residuals() -> None:
    a = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    b = np.array([1.0, 2.0, 4.0])
    x, res, rank, s = fnp.linalg.lstsq(dev(a), dev(b))
    wx, wres, wrank, ws = np.linalg.lstsq(a, b)
    assert_allclose((x, res, s), (wx, wres, ws), rtol=1e-12, atol=1e-12)
    assert rank == wrank and type(rank) is type(wrank)  # numpy.int32, as NumPy
    # Rank deficient: no residuals, as NumPy.
    a2 = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    _, res2, rank2, _ = fnp.linalg.lstsq(dev(a2), dev(b))
    assert rank2 == 1 and host(res2).shape == (0,)


@pytest.mark.parametrize("rcond", [-1, -1e-3])
def test_lstsq_negative_rcond_means_machine_eps(rcond) -> None:
    # NumPy 1's default rcond=-1: gelsd cuts at eps * max(s), so the rank-1 ones((5, 3))
    # (a second singular value ~1.8e-16, above a cutoff of 0) has rank 1, not 3 with inf/nan x
    a = np.ones((5, 3))
    b = np.arange(5.0)
    x, res, rank, s = fnp.linalg.lstsq(dev(a), dev(b), rcond=rcond)
    # np.linalg.lstsq(a, b, rcond=-1)
    assert_allclose(x, np.full(3, 2.0 / 3.0), rtol=1e-12)
    assert rank == 1 and host(res).shape == (0,)
    x = funcgrad.jit(lambda m, v: fnp.linalg.lstsq(m, v, rcond=rcond)[0])(dev(a), dev(b))
    assert_allclose(x, np.full(3, 2.0 / 3.0), rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# Routing from NumPy, jit, devices


def test_numpy_linalg_calls_on_tracers_route_here() -> None:
    a = _dominant(3, seed=9)
    b = rand((3,), seed=10)

    # Both operands traced: NumPy dispatches to the tracers' __array_function__.
    def f(m, v):
        return fnp.sum(np.linalg.solve(m, v) ** 2)

    def g(m, v):
        return fnp.sum(fnp.linalg.solve(m, v) ** 2)

    got = funcgrad.grad(f, argnums=(0, 1))(*dev((a, b)))
    assert_allclose(got, funcgrad.grad(g, argnums=(0, 1))(*dev((a, b))))
    # A plain (host) matrix with a traced right-hand side routes too.
    got = funcgrad.grad(lambda v: fnp.sum(np.linalg.solve(a, v) ** 2))(b)
    assert_allclose(got, funcgrad.grad(lambda v: g(a, v))(b))
    for np_fn, fn in ((np.linalg.det, fnp.linalg.det), (np.linalg.inv, fnp.linalg.inv),
                      (lambda m: np.linalg.norm(m, 2), lambda m: fnp.linalg.norm(m, 2)),
                      (lambda m: np.linalg.eigh(m).eigenvalues,
                       lambda m: fnp.linalg.eigh(m).eigenvalues)):
        got = funcgrad.grad(lambda m, h=np_fn: fnp.sum(h(m)))(dev(a + a.T))
        want = funcgrad.grad(lambda m, h=fn: fnp.sum(h(m)))(dev(a + a.T))
        assert_allclose(got, want)


def test_results_are_numpys_named_tuples() -> None:
    a = _spd(3)
    assert type(fnp.linalg.eigh(dev(a))) is type(np.linalg.eigh(a))
    assert type(fnp.linalg.svd(dev(a))) is type(np.linalg.svd(a))
    assert type(fnp.linalg.qr(dev(a))) is type(np.linalg.qr(a))
    assert type(fnp.linalg.slogdet(dev(a))) is type(np.linalg.slogdet(a))
    r = fnp.linalg.slogdet(dev(a))
    assert_allclose(r.logabsdet, np.linalg.slogdet(a).logabsdet)


def test_jit_and_make_jaxpr() -> None:
    a = _dominant(3, seed=13)

    @funcgrad.jit
    def f(m):
        q, r = fnp.linalg.qr(m)
        return fnp.linalg.slogdet(r)[1] + fnp.linalg.norm(fnp.linalg.inv(m), "nuc")

    want = np.linalg.slogdet(np.linalg.qr(a)[1])[1] + np.linalg.norm(np.linalg.inv(a), "nuc")
    assert_allclose(f(dev(a)), want, rtol=1e-12)
    assert_allclose(funcgrad.jit(funcgrad.grad(f))(dev(a)), funcgrad.grad(f)(dev(a)))
    text = str(funcgrad.make_jaxpr(fnp.linalg.solve)(a, np.ones((3, 2))))
    assert "solve" in text


def test_results_stay_on_the_device() -> None:
    a = _spd(3)
    outs = [fnp.linalg.cholesky(dev(a)), fnp.linalg.eigh(dev(a)), fnp.linalg.svd(dev(a)),
            fnp.linalg.qr(dev(a)), fnp.linalg.lstsq(dev(a), dev(np.ones(3)))[:2],
            fnp.linalg.matrix_power(dev(a), 0), fnp.linalg.matrix_rank(dev(a)),
            funcgrad.grad(lambda m: fnp.linalg.slogdet(m)[1])(dev(a))]
    check_device(outs)
    if DEVICE != "cpu":
        assert all(not isinstance(o, np.ndarray) for o in funcgrad.tree_util.tree_leaves(outs))


def test_astype_follows_numpy() -> None:
    # (fnp.astype lives beside fnp.linalg: NumPy 2's function form of ndarray.astype.)
    a = dev(np.arange(3.0))
    assert fnp.astype(a, np.float64, copy=False) is a
    assert fnp.astype(a, np.float64) is not a
    assert_allclose(fnp.astype(a, np.float64), np.arange(3.0))
    assert fnp.astype(np.float32(2.5), np.int64) == np.int64(2)
    with pytest.raises(TypeError, match="astype: input should be an array"):
        fnp.astype([1, 2], np.float64)
    g = funcgrad.grad(lambda x: fnp.sum(fnp.astype(x, np.float32) ** 2))(dev(np.arange(3.0)))
    assert g.dtype == np.float64
    assert_allclose(g, 2 * np.arange(3.0))
