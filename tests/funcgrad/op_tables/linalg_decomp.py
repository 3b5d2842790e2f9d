"""Op table: funcgrad.numpy.linalg (decompositions, solves, norms, products) vs numpy.linalg.

Inputs are well conditioned: symmetric positive-definite matrices for cholesky/eigh,
diagonally dominant ones for solve/inv/det, random ones (distinct singular values) for
svd/qr/norms. Eigenvectors and singular vectors are sign-normalised (first row made
non-negative) in both the function and the reference, since LAPACK's signs are arbitrary.
"""

from __future__ import annotations

import numpy as np
from helpers import OpCase, case_adder, rand

import funcgrad.numpy as fnp
from funcgrad.ops import linalg_decomp as ld

F64, F32, I64 = np.float64, np.float32, np.int64


def _gen(shape, dtype=F64, seed=0):
    return rand(shape, dtype, -1.0, 1.0, seed=seed)


def _spd(n, batch=(), dtype=F64, seed=0):
    b = _gen(batch + (n, n), F64, seed)
    a = b @ np.swapaxes(b, -1, -2) + n * np.eye(n)
    return a.astype(dtype)


def _dominant(n, batch=(), dtype=F64, seed=0):
    return (_gen(batch + (n, n), F64, seed) + 2.5 * np.eye(n)).astype(dtype)


def _sign_cols(v, lib):
    """Columns of v with their first row made non-negative (and that sign, for vh rows)."""
    s = lib.sign(v[..., :1, :])
    s = lib.where(s == 0, 1.0, s)
    return v * s, s


def _eigh_norm(lib, linalg, uplo="L"):
    def f(a):
        w, v = linalg.eigh(a, UPLO=uplo)
        return w, _sign_cols(v, lib)[0]

    return f


def _svd_norm(lib, linalg, full_matrices):
    def f(a):
        u, s, vh = linalg.svd(a, full_matrices=full_matrices)
        k = s.shape[-1]
        u_k, sign = _sign_cols(u[..., :, :k], lib)
        return u_k, s, vh[..., :k, :] * lib.swapaxes(sign, -1, -2)

    return f


def _pair(f):
    """The same function of (lib, lib.linalg) for funcgrad and NumPy."""
    return f(fnp, fnp.linalg), f(np, np.linalg)


def _lstsq(linalg):
    def f(a, b):
        x, res, rank, s = linalg.lstsq(a, b)
        return x, res, s

    return f


CASES: list[OpCase] = []


case = case_adder(CASES)


# -- cholesky -------------------------------------------------------------------------------
# cholesky/eigh/eigvalsh differentiate as functions of a symmetric matrix (the tangent is
# symmetrised, as in JAX), so the derivative checks run them on sym(a) = (a + a^T) / 2: the
# finite differences then move along symmetric directions only. Values are unchanged (the
# inputs are symmetric).


def _sym(lib, f):
    return lambda a, *rest: f((a + lib.swapaxes(a, -1, -2)) / 2, *rest)


def _sym_pair(fn, ref):
    return _sym(fnp, fn), _sym(np, ref)


case("linalg.cholesky", *_sym_pair(fnp.linalg.cholesky, np.linalg.cholesky),
     [(_spd(3),), (_spd(3, dtype=F32, seed=1),), (_spd(2, (2,), seed=2),), (_spd(1, seed=3),)])
case("linalg.cholesky_upper", *_sym_pair(lambda a: fnp.linalg.cholesky(a, upper=True),
                                         lambda a: np.linalg.cholesky(a, upper=True)),
     [(_spd(3, seed=4),), (_spd(2, (3,), seed=5),)])
case("linalg.cholesky_int", fnp.linalg.cholesky, np.linalg.cholesky,
     [(np.array([[4, 2], [2, 3]], dtype=I64),)])

# -- solve / inv / det / slogdet -----------------------------------------------------------
case("linalg.solve", fnp.linalg.solve, np.linalg.solve,
     [(_dominant(3), _gen((3,), seed=1)),
      (_dominant(3, seed=2), _gen((3, 2), seed=3)),
      (_dominant(3, (2,), seed=4), _gen((3,), seed=5)),
      (_dominant(3, (2,), seed=6), _gen((2, 3, 2), seed=7)),
      (_dominant(2, (2,), seed=8), _gen((2, 1), seed=9)),
      (_dominant(3, dtype=F32, seed=10), _gen((3,), F32, seed=11)),
      (_dominant(2, dtype=F32, seed=12), _gen((2,), F64, seed=13))])
case("linalg.inv", fnp.linalg.inv, np.linalg.inv,
     [(_dominant(3),), (_dominant(2, (3,), seed=1),), (_dominant(3, dtype=F32, seed=2),),
      (np.array([[2, 1], [1, 1]], dtype=I64),)])
case("linalg.det", fnp.linalg.det, np.linalg.det,
     [(_dominant(3),), (_dominant(2, (3,), seed=1),), (_dominant(3, dtype=F32, seed=2),),
      (_gen((1, 1), seed=3) + 2.0,)])
case("linalg.slogdet", fnp.linalg.slogdet, np.linalg.slogdet,
     [(_dominant(3),), (_dominant(2, (3,), seed=1) - 3.0 * np.eye(2),),
      (_dominant(3, dtype=F32, seed=2),)])
case("linalg.tensorinv", lambda a: fnp.linalg.tensorinv(a, ind=1),
     lambda a: np.linalg.tensorinv(a, ind=1), [(_dominant(4, seed=3).reshape(4, 2, 2),)])
case("linalg.tensorsolve", fnp.linalg.tensorsolve, np.linalg.tensorsolve,
     [(_dominant(6, seed=4).reshape(2, 3, 6), _gen((2, 3), seed=5))])
case("linalg.matrix_power",
     lambda a: [fnp.linalg.matrix_power(a, n) for n in (0, 1, 2, 3, 5, -2)],
     lambda a: [np.linalg.matrix_power(a, n) for n in (0, 1, 2, 3, 5, -2)],
     [(_dominant(3) / 3.0,), (_dominant(2, (2,), seed=1) / 3.0,)])
case("linalg.matrix_power_int", lambda a: fnp.linalg.matrix_power(a, 3),
     lambda a: np.linalg.matrix_power(a, 3), [(np.array([[1, 1], [0, 1]], dtype=I64),)])

# -- eigh / eigvalsh ------------------------------------------------------------------------
_EIGH_ARGS = [(_spd(3),), (_spd(3, (2,), seed=1),), (_spd(4, dtype=F32, seed=2),)]
case("linalg.eigh", *_sym_pair(*_pair(lambda lib, la: _eigh_norm(lib, la))), _EIGH_ARGS,
     rtol=1e-10, atol=1e-10)
case("linalg.eigh_upper", *_sym_pair(*_pair(lambda lib, la: _eigh_norm(lib, la, "U"))),
     [(_spd(3, seed=3),)], rtol=1e-10, atol=1e-10)
case("linalg.eigvalsh", *_sym_pair(fnp.linalg.eigvalsh, np.linalg.eigvalsh), _EIGH_ARGS)
case("linalg.eigvalsh_upper", *_sym_pair(lambda a: fnp.linalg.eigvalsh(a, UPLO="U"),
                                         lambda a: np.linalg.eigvalsh(a, UPLO="U")),
     [(_spd(3, seed=4),)])

# -- svd / qr -------------------------------------------------------------------------------
_SVD_ARGS = [(_gen((3, 3), seed=1),), (_gen((4, 2), seed=2),), (_gen((2, 4), seed=3),),
             (_gen((2, 3, 2), seed=4),), (_gen((3, 3), F32, seed=5),)]
case("linalg.svd_reduced", *_pair(lambda lib, la: _svd_norm(lib, la, False)), _SVD_ARGS,
     rtol=1e-10, atol=1e-10)
case("linalg.svd_square_full", *_pair(lambda lib, la: _svd_norm(lib, la, True)),
     [(_gen((3, 3), seed=6),), (_gen((2, 2, 2), seed=7),)], rtol=1e-10, atol=1e-10)
case("linalg.svd_full_forward", lambda a: fnp.linalg.svd(a)[1],
     lambda a: np.linalg.svd(a)[1], [(_gen((4, 2), seed=8),)], grad_args=[])
case("linalg.svdvals", fnp.linalg.svdvals, np.linalg.svdvals, _SVD_ARGS)
case("linalg.svd_no_uv", lambda a: fnp.linalg.svd(a, compute_uv=False),
     lambda a: np.linalg.svd(a, compute_uv=False), _SVD_ARGS[:3])
case("linalg.svd_hermitian",  # through eigh: differentiated along symmetric directions
     *_sym_pair(lambda a: fnp.linalg.svd(a, hermitian=True, compute_uv=False),
                lambda a: np.linalg.svd(a, hermitian=True, compute_uv=False)),
     [(_spd(3, seed=9) - 4.0 * np.eye(3),)])
_QR_ARGS = [(_gen((3, 3), seed=1),), (_gen((4, 2), seed=2),), (_gen((2, 4), seed=3),),
            (_gen((2, 3, 2), seed=4),), (_gen((3, 2), F32, seed=5),)]
case("linalg.qr", fnp.linalg.qr, np.linalg.qr, _QR_ARGS, rtol=1e-10, atol=1e-10)
case("linalg.qr_r", lambda a: fnp.linalg.qr(a, mode="r"), lambda a: np.linalg.qr(a, mode="r"),
     _QR_ARGS, rtol=1e-10, atol=1e-10)
case("linalg.qr_complete", lambda a: fnp.linalg.qr(a, mode="complete"),
     lambda a: np.linalg.qr(a, mode="complete"), [(_gen((2, 4), seed=6),), (_gen((3, 3), seed=7),),
                                                  (_gen((4, 2), seed=8),)],
     rtol=1e-10, atol=1e-10)

# -- pseudo-inverse, least squares, rank, condition ---------------------------------------------
case("linalg.pinv", fnp.linalg.pinv, np.linalg.pinv,
     [(_gen((3, 2), seed=1),), (_gen((2, 3), seed=2),), (_gen((2, 3, 3), seed=3),),
      (_gen((3, 2), F32, seed=4),)], rtol=1e-10, atol=1e-10)
case("linalg.pinv_rank_deficient", lambda a: fnp.linalg.pinv(a, rtol=None),
     lambda a: np.linalg.pinv(a, rtol=None),
     [(np.outer(_gen((3,), seed=5), _gen((2,), seed=6)),)], order=1, rtol=1e-10, atol=1e-10,
     grad_args=[])
case("linalg.lstsq", _lstsq(fnp.linalg), _lstsq(np.linalg),
     [(_gen((4, 2), seed=1), _gen((4,), seed=2)), (_gen((4, 3), seed=3), _gen((4, 2), seed=4)),
      (_gen((2, 3), seed=5), _gen((2,), seed=6))], rtol=1e-10, atol=1e-10, vmap=False)
case("linalg.matrix_rank", fnp.linalg.matrix_rank, np.linalg.matrix_rank,
     [(_gen((3, 3), seed=1),), (np.outer(_gen((3,), seed=2), _gen((4,), seed=3)),),
      (_gen((2, 3, 2), seed=4),), (_gen((3,), seed=5),), (np.zeros((2, 2)),)], order=0)
case("linalg.cond", lambda a: [fnp.linalg.cond(a, p) for p in (None, 2, -2, "fro", 1, np.inf)],
     lambda a: [np.linalg.cond(a, p) for p in (None, 2, -2, "fro", 1, np.inf)],
     [(_dominant(3, seed=1),), (_dominant(2, (2,), seed=2),)], rtol=1e-10)

# -- norms -------------------------------------------------------------------------------------
_V = _gen((5,), seed=1)
_M = _gen((3, 4), seed=2)
_T = _gen((2, 3, 4), seed=3)
for _ord in (None, 1, 2, np.inf, -np.inf, 3, 0.5, 0):
    case(f"linalg.norm_vector[{_ord}]", lambda x, o=_ord: fnp.linalg.norm(x, o),
         lambda x, o=_ord: np.linalg.norm(x, o),
         [(_V,), (_V.astype(F32),), (np.arange(-2, 3, dtype=I64),)],
         grad_args=[(_V,)], order=0 if _ord == 0 else 2)
for _ord in (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
    case(f"linalg.norm_matrix[{_ord}]", lambda x, o=_ord: fnp.linalg.norm(x, o),
         lambda x, o=_ord: np.linalg.norm(x, o),
         [(_M,), (_M.T.astype(F32),)], grad_args=[(_M,)])
case("linalg.norm_axis", lambda x: [fnp.linalg.norm(x, axis=1), fnp.linalg.norm(x, 1, axis=-1),
                                    fnp.linalg.norm(x, axis=(2, 0)),
                                    fnp.linalg.norm(x, "nuc", axis=(0, 2), keepdims=True),
                                    fnp.linalg.norm(x, np.inf, axis=(1, 2))],
     lambda x: [np.linalg.norm(x, axis=1), np.linalg.norm(x, 1, axis=-1),
                np.linalg.norm(x, axis=(2, 0)),
                np.linalg.norm(x, "nuc", axis=(0, 2), keepdims=True),
                np.linalg.norm(x, np.inf, axis=(1, 2))],
     [(_T,)])
case("linalg.norm_flat", lambda x: [fnp.linalg.norm(x), fnp.linalg.norm(x, keepdims=True)],
     lambda x: [np.linalg.norm(x), np.linalg.norm(x, keepdims=True)],
     [(_T,), (_T.astype(F32),), (np.array(3.0),)], grad_args=[(_T,)])
case("linalg.vector_norm",
     lambda x: [fnp.linalg.vector_norm(x), fnp.linalg.vector_norm(x, axis=(0, 2), ord=1),
                fnp.linalg.vector_norm(x, axis=-1, keepdims=True, ord=np.inf),
                fnp.linalg.vector_norm(x, axis=(1,), ord=3, keepdims=True)],
     lambda x: [np.linalg.vector_norm(x), np.linalg.vector_norm(x, axis=(0, 2), ord=1),
                np.linalg.vector_norm(x, axis=-1, keepdims=True, ord=np.inf),
                np.linalg.vector_norm(x, axis=(1,), ord=3, keepdims=True)],
     [(_T,), (_T.astype(F32),)])
case("linalg.matrix_norm",
     lambda x: [fnp.linalg.matrix_norm(x), fnp.linalg.matrix_norm(x, ord=2, keepdims=True),
                fnp.linalg.matrix_norm(x, ord=-np.inf)],
     lambda x: [np.linalg.matrix_norm(x), np.linalg.matrix_norm(x, ord=2, keepdims=True),
                np.linalg.matrix_norm(x, ord=-np.inf)],
     [(_T,), (_M,)])

# -- products and NumPy 2's array-API members ------------------------------------------------
case("linalg.multi_dot",
     lambda a, b, c, d: [fnp.linalg.multi_dot([a, b, c]), fnp.linalg.multi_dot([a, b, c, d]),
                         fnp.linalg.multi_dot([a[0], b, c, d[:, 0]]),
                         fnp.linalg.multi_dot([a, b])],
     lambda a, b, c, d: [np.linalg.multi_dot([a, b, c]), np.linalg.multi_dot([a, b, c, d]),
                         np.linalg.multi_dot([a[0], b, c, d[:, 0]]),
                         np.linalg.multi_dot([a, b])],
     [(_gen((2, 5), seed=1), _gen((5, 3), seed=2), _gen((3, 6), seed=3), _gen((6, 2), seed=4))])
case("linalg.trace", fnp.linalg.trace, np.linalg.trace,
     [(_gen((3, 3)),), (_gen((2, 3, 4), seed=1),), (np.arange(9, dtype=np.int32).reshape(3, 3),)])
case("linalg.trace_offset", lambda x: fnp.linalg.trace(x, offset=1, dtype=F32),
     lambda x: np.linalg.trace(x, offset=1, dtype=F32), [(_gen((2, 3, 4), seed=2),)])
case("linalg.diagonal", lambda x: fnp.linalg.diagonal(x, offset=-1),
     lambda x: np.linalg.diagonal(x, offset=-1), [(_gen((3, 3)),), (_gen((2, 4, 3), seed=1),)])
case("linalg.outer", fnp.linalg.outer, np.linalg.outer,
     [(_gen((3,)), _gen((2,), seed=1)), (_gen((2,), F32), np.arange(3, dtype=I64))])
case("linalg.matmul", fnp.linalg.matmul, np.linalg.matmul,
     [(_gen((2, 3)), _gen((3, 4), seed=1)), (_gen((2, 2, 3)), _gen((3,), seed=1))])
case("linalg.tensordot", lambda a, b: fnp.linalg.tensordot(a, b, axes=1),
     lambda a, b: np.linalg.tensordot(a, b, axes=1), [(_gen((2, 3)), _gen((3, 4), seed=1))])
case("linalg.matrix_transpose", fnp.linalg.matrix_transpose, np.linalg.matrix_transpose,
     [(_gen((2, 3)),), (_gen((2, 3, 4)),)])
case("linalg.cross", fnp.linalg.cross, np.linalg.cross,
     [(_gen((3,)), _gen((3,), seed=1)), (_gen((2, 3)), _gen((3,), seed=2)),
      (np.arange(3, dtype=I64), np.array([1, 0, 2], dtype=I64))])
case("linalg.cross_axis", lambda a, b: fnp.linalg.cross(a, b, axis=0),
     lambda a, b: np.linalg.cross(a, b, axis=0), [(_gen((3, 2)), _gen((3, 2), seed=1))])
case("linalg.vecdot", fnp.linalg.vecdot, np.linalg.vecdot,
     [(_gen((2, 3)), _gen((3,), seed=1)), (_gen((4,), F32), _gen((4,), F32, seed=2)),
      (np.arange(3, dtype=np.int32), np.arange(3, dtype=np.int32))])
case("linalg.vecdot_axis", lambda a, b: fnp.linalg.vecdot(a, b, axis=0),
     lambda a, b: np.linalg.vecdot(a, b, axis=0), [(_gen((3, 2)), _gen((3, 2), seed=1))])

# -- the triangular solve primitive ---------------------------------------------------------


def _tri_ref(lower, transpose_a, unit):
    def ref(a, b):
        t = np.tril(a, -1 if unit else 0) if lower else np.triu(a, 1 if unit else 0)
        if unit:
            t = t + np.eye(a.shape[-1])
        if transpose_a:
            t = np.swapaxes(t, -1, -2)
        return np.linalg.solve(t, b)

    return ref


for _lo, _tr, _un in [(True, False, False), (False, False, False), (True, True, False),
                      (False, True, True), (True, False, True)]:
    case(f"triangular_solve[lower={_lo},T={_tr},unit={_un}]",
         lambda a, b, lo=_lo, tr=_tr, un=_un: ld.triangular_solve(
             a, b, lower=lo, transpose_a=tr, unit_diagonal=un),
         _tri_ref(_lo, _tr, _un),
         [(_dominant(3), _gen((3, 2), seed=1)), (_dominant(2, (2,), seed=2), _gen((2, 2, 1), seed=3))])

# -- fnp.astype (NumPy 2's function form of ndarray.astype) -------------------------------------
case("astype", lambda x: [fnp.astype(x, F32), fnp.astype(x, F64), fnp.astype(x, F64, copy=False)],
     lambda x: [np.astype(x, F32), np.astype(x, F64), np.astype(x, F64, copy=False)],
     [(_gen((2, 3)),), (_gen((3,), F32, seed=1),), (_gen((), seed=2),)], rtol=1e-6, atol=1e-6)
case("astype_int", lambda x: fnp.astype(x, I64), lambda x: np.astype(x, I64),
     [(_gen((2, 3)) * 5,), (np.arange(3, dtype=np.int32),)], order=0)

# -- eig / eigvals (general matrices) and what is built on them ----------------------------------
# Non-symmetric matrices S diag(d) S^-1 with well-separated eigenvalues: a real spectrum, and a
# complex-conjugate pair next to a real eigenvalue. NumPy returns real arrays for real spectra;
# funcgrad always complex, so the references cast to complex (or reduce to real summaries).


def _similar(block, seed, dtype=F64):
    n = block.shape[-1]
    s = _gen(block.shape[:-2] + (n, n), F64, seed) + 2.0 * np.eye(n)
    return (s @ block @ np.linalg.inv(s)).astype(dtype)


_REAL_SPEC = np.diag([-1.5, 0.5, 2.0])
_PAIR_SPEC = np.array([[0.5, 1.2, 0.0], [-1.2, 0.5, 0.0], [0.0, 0.0, -1.0]])
_EIG_ARGS = [(_similar(_REAL_SPEC, 1),), (_similar(_PAIR_SPEC, 2),),
             (_similar(np.stack([_REAL_SPEC, _PAIR_SPEC]), 3),),
             (_similar(_PAIR_SPEC, 4, F32),)]
_EIG_GRAD_ARGS = _EIG_ARGS[:3] + [(_gen((3, 3), np.complex128, seed=5),)]


def _as_complex(w):
    return w.astype(np.result_type(w.dtype, np.complex64))


def _phase_cols(lib, v):
    """Columns of v rotated so that each one's largest-magnitude entry is real positive (a
    continuous choice; LAPACK may flip a column's sign under a tiny perturbation)."""
    k = lib.argmax(lib.abs(v), axis=-2)[..., None, :]
    vk = lib.take_along_axis(v, k, axis=-2)
    return v * (lib.conj(vk) / lib.abs(vk))


def _eig_norm(lib, linalg):
    def f(a):
        w, v = linalg.eig(a)
        return _as_complex(w), _phase_cols(lib, _as_complex(v))

    return f


case("linalg.eigvals", fnp.linalg.eigvals, lambda a: _as_complex(np.linalg.eigvals(a)),
     _EIG_ARGS + [(_gen((3, 3), np.complex128, seed=5),)], grad_args=_EIG_GRAD_ARGS,
     rtol=1e-10, atol=1e-10)
case("linalg.eigvals_int", fnp.linalg.eigvals, lambda a: _as_complex(np.linalg.eigvals(a)),
     [(np.array([[2, 1], [0, 3]], dtype=I64),)], rtol=1e-12, atol=1e-12)
case("linalg.eig", *_pair(_eig_norm), _EIG_ARGS, grad_args=_EIG_GRAD_ARGS,
     rtol=1e-10, atol=1e-10)
case("linalg.eigvals_sum_real", lambda a: fnp.sum(fnp.real(fnp.linalg.eigvals(a)), axis=-1),
     lambda a: np.sum(np.real(np.linalg.eigvals(a)), axis=-1), _EIG_ARGS,
     grad_args=_EIG_GRAD_ARGS[:3], rtol=1e-10, atol=1e-10)
case("linalg.eigvals_abs2", lambda a: fnp.sum(fnp.abs(fnp.linalg.eig(a).eigenvalues) ** 2, -1),
     lambda a: np.sum(np.abs(np.linalg.eig(a).eigenvalues) ** 2, -1), _EIG_ARGS,
     grad_args=_EIG_GRAD_ARGS)
# roots: the eigenvalues of the companion matrix. strip_zeros=True needs concrete values (no
# jit/vmap) but differentiates; strip_zeros=False (jax.numpy's fixed-length form) traces.
_ROOTS_ARGS = [(np.array([1.0, -3.0, 2.0]),), (np.array([2.0, -1.0, 0.5, 3.0]),),
               (np.array([1.0, -6.0, 11.0, -6.0]),)]
case("roots_grad", fnp.roots, np.roots, _ROOTS_ARGS, rtol=1e-10, atol=1e-10,
     jit=False, vmap=False)
case("roots_fixed_length", lambda p: fnp.roots(p, strip_zeros=False),
     lambda p: _as_complex(np.roots(p)), _ROOTS_ARGS, rtol=1e-10, atol=1e-10)
case("poly_matrix", fnp.poly, np.poly, [(_similar(_REAL_SPEC, 6),), (_similar(_PAIR_SPEC, 7),)],
     rtol=1e-10, atol=1e-10, jit=False, vmap=False)
