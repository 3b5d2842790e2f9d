"""Op table: funcgrad.scipy.linalg vs scipy.linalg (values), with the shared drivers' derivative
(finite differences, both modes, second order) and vmap checks.

Cholesky-based functions and the symmetric solves read one triangle for the value but
differentiate as functions of a symmetric matrix (docs/scipy.md), so their derivative checks
run on sym(a) = (a + a^T) / 2. Eigenvectors are compared up to sign (absolute values).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sl
from helpers import OpCase, case_adder, rand

import funcgrad.numpy as fnp
import funcgrad.scipy.linalg as fsl

F64, F32, C128 = np.float64, np.float32, np.complex128

CASES: list[OpCase] = []
case = case_adder(CASES, "scipy.linalg.")


def _gen(shape, dtype=F64, seed=0):
    return rand(shape, dtype, -1.0, 1.0, seed=seed)


def _spd(n, dtype=F64, seed=0):
    b = _gen((n, n), F64, seed)
    return (b @ b.T + n * np.eye(n)).astype(dtype)


def _dominant(n, dtype=F64, seed=0):
    return (_gen((n, n), F64, seed) + 2.5 * np.eye(n)).astype(dtype)


def _sym(lib, f):
    return lambda a, *rest: f((a + lib.swapaxes(a, -1, -2)) / 2, *rest)


_SQ = [(_gen((3, 3), seed=1),), (_gen((4, 4), F32, seed=2),), (_gen((1, 1), seed=3) + 2.0,)]
_RECT = [(_gen((4, 3), seed=4),), (_gen((3, 4), seed=5),)]

# -- LU ---------------------------------------------------------------------------------------
case("lu", fsl.lu, sl.lu, _SQ + _RECT)
case("lu_permute_l", lambda a: fsl.lu(a, permute_l=True), lambda a: sl.lu(a, permute_l=True),
     _SQ[:1] + _RECT, rtol=1e-10, atol=1e-10)
case("lu_p_indices", lambda a: fsl.lu(a, p_indices=True)[1:],
     lambda a: sl.lu(a, p_indices=True)[1:], _SQ[:1], rtol=1e-10, atol=1e-10)
case("lu_factor", lambda a: fsl.lu_factor(a)[0], lambda a: sl.lu_factor(a)[0],
     _SQ + _RECT)
case("lu_factor_complex", lambda a: fsl.lu_factor(a)[0], lambda a: sl.lu_factor(a)[0],
     [(_gen((3, 3), C128, seed=6),)], rtol=1e-10, atol=1e-10)
for _t in (0, 1, 2):
    case(f"lu_solve[{_t}]", lambda a, b, t=_t: fsl.lu_solve(fsl.lu_factor(a), b, trans=t),
         lambda a, b, t=_t: sl.lu_solve(sl.lu_factor(a), b, trans=t),
         [(_dominant(3, seed=7), _gen((3,), seed=8)), (_gen((3, 3), seed=9), _gen((3, 2), seed=10)),
          (_gen((3, 3), C128, seed=11), _gen((3, 2), seed=12))])

# -- triangular and general solves --------------------------------------------------------------
for _t in (0, 1, 2):
    for _low in (False, True):
        for _ud in (False, True):
            case(f"solve_triangular[{_t},{_low},{_ud}]",
                 lambda a, b, t=_t, lo=_low, u=_ud: fsl.solve_triangular(
                     a, b, trans=t, lower=lo, unit_diagonal=u),
                 lambda a, b, t=_t, lo=_low, u=_ud: sl.solve_triangular(
                     a, b, trans=t, lower=lo, unit_diagonal=u),
                 [(_dominant(3, seed=13), _gen((3, 2), seed=14)),
                  (_dominant(3, seed=15) + 0.5j, _gen((3,), seed=16))])
for _kind in ("gen", "diagonal", "tridiagonal", "upper triangular", "lower triangular"):
    for _tr in (False, True):
        case(f"solve[{_kind},{_tr}]",
             lambda a, b, k=_kind, tr=_tr: fsl.solve(a, b, assume_a=k, transposed=tr),
             lambda a, b, k=_kind, tr=_tr: sl.solve(a, b, assume_a=k, transposed=tr),
             [(_dominant(3, seed=17), _gen((3,), seed=18)),
              (_dominant(3, F32, seed=19), _gen((3, 2), F32, seed=20))])
for _kind in ("sym", "her", "pos"):
    for _low in (False, True):
        case(f"solve[{_kind},{_low}]",
             _sym(fnp, lambda a, b, k=_kind, lo=_low: fsl.solve(a, b, assume_a=k, lower=lo)),
             _sym(np, lambda a, b, k=_kind, lo=_low: sl.solve(a, b, assume_a=k, lower=lo)),
             [(_spd(3, seed=21), _gen((3, 2), seed=22))])
case("solve_one_triangle", lambda a, b: fsl.solve(a, b, assume_a="pos", lower=True),
     lambda a, b: sl.solve(a, b, assume_a="pos", lower=True),
     [(_spd(3, seed=23) + np.triu(np.ones((3, 3)), 1), _gen((3,), seed=24))], grad_args=[])
case("solve_int", fsl.solve, sl.solve, [(np.array([[3, 1], [1, 2]]), np.array([9, 8]))])
case("inv", fsl.inv, sl.inv, [(_dominant(3, seed=25),), (_dominant(2, F32, seed=26),)])
case("det", fsl.det, sl.det, [(_dominant(3, seed=27),)])

# -- Cholesky -------------------------------------------------------------------------------------
for _low in (False, True):
    case(f"cholesky[{_low}]", _sym(fnp, lambda a, lo=_low: fsl.cholesky(a, lower=lo)),
         _sym(np, lambda a, lo=_low: sl.cholesky(a, lower=lo)),
         [(_spd(3, seed=28),), (_spd(2, F32, seed=29),)])
    case(f"cho_solve[{_low}]",
         _sym(fnp, lambda a, b, lo=_low: fsl.cho_solve(fsl.cho_factor(a, lower=lo), b)),
         _sym(np, lambda a, b, lo=_low: sl.cho_solve(sl.cho_factor(a, lower=lo), b)),
         [(_spd(3, seed=30), _gen((3, 2), seed=31)), (_spd(3, seed=32), _gen((3,), seed=33))])

# -- QR, SVD, eigh, polar -------------------------------------------------------------------------
for _mode in ("economic", "r"):
    case(f"qr[{_mode}]", lambda a, m=_mode: fsl.qr(a, mode=m), lambda a, m=_mode: sl.qr(a, mode=m),
         [(_gen((3, 3), seed=34),), (_gen((4, 3), seed=35),)], rtol=1e-10, atol=1e-10)
case("qr[full]", fsl.qr, sl.qr, [(_gen((3, 3), seed=36),), (_gen((2, 3), seed=37),)],
     rtol=1e-10, atol=1e-10)
case("qr[raw]", lambda a: (fsl.qr(a, mode="raw")[0][0], fsl.qr(a, mode="raw")[1]),
     lambda a: (sl.qr(a, mode="raw")[0][0], sl.qr(a, mode="raw")[1]),
     [(_gen((4, 3), seed=38),)], rtol=1e-10, atol=1e-10, grad_args=[])
case("svd_values", lambda a: fsl.svd(a, compute_uv=False), lambda a: sl.svd(a, compute_uv=False),
     _SQ + _RECT)
case("svd_economic", lambda a: [abs(x) for x in fsl.svd(a, full_matrices=False)],
     lambda a: [abs(x) for x in sl.svd(a, full_matrices=False)], _RECT, rtol=1e-10, atol=1e-10)
case("eigh_values", _sym(fnp, lambda a: fsl.eigh(a, eigvals_only=True)),
     _sym(np, lambda a: sl.eigh(a, eigvals_only=True)), [(_spd(3, seed=39),)])
case("eigh", _sym(fnp, lambda a: [fsl.eigh(a)[0], abs(fsl.eigh(a)[1])]),
     _sym(np, lambda a: [sl.eigh(a)[0], abs(sl.eigh(a)[1])]), [(_spd(3, seed=40),)],
     rtol=1e-10, atol=1e-10)
for _type in (1, 2, 3):
    case(f"eigh_generalized[{_type}]",
         lambda a, b, t=_type: [fsl.eigh(a, b, type=t)[0], abs(fsl.eigh(a, b, type=t)[1])],
         lambda a, b, t=_type: [sl.eigh(a, b, type=t)[0], abs(sl.eigh(a, b, type=t)[1])],
         [(_spd(3, seed=41), _spd(3, seed=42))], rtol=1e-9, atol=1e-9, grad_args=[])
case("eigh_subset", lambda a: fsl.eigh(a, subset_by_index=(1, 2), eigvals_only=True),
     lambda a: sl.eigh(a, subset_by_index=(1, 2), eigvals_only=True), [(_spd(4, seed=43),)],
     grad_args=[])
case("eigh_tridiagonal", lambda d, e: fsl.eigh_tridiagonal(d, e, eigvals_only=True),
     lambda d, e: sl.eigh_tridiagonal(d, e, eigvals_only=True),
     [(_gen((4,), seed=44), _gen((3,), seed=45))])
case("eigh_tridiagonal_vectors", lambda d, e: abs(fsl.eigh_tridiagonal(d, e)[1]),
     lambda d, e: abs(sl.eigh_tridiagonal(d, e)[1]), [(_gen((4,), seed=46), _gen((3,), seed=47))],
     rtol=1e-10, atol=1e-10, grad_args=[])
for _side in ("right", "left"):
    case(f"polar[{_side}]", lambda a, s=_side: fsl.polar(a, s), lambda a, s=_side: sl.polar(a, s),
         [(_gen((3, 3), seed=48),), (_gen((4, 2), seed=49),)], rtol=1e-10, atol=1e-10, vmap=False)

# -- matrix functions --------------------------------------------------------------------------------
case("expm", fsl.expm, sl.expm,
     [(_gen((3, 3), seed=50),), (8.0 * _gen((3, 3), seed=51),),
      (_gen((2, 2), C128, seed=53),), (np.zeros((2, 2)),)],
     grad_args=[(_gen((3, 3), seed=50),), (8.0 * _gen((3, 3), seed=51),)],
     rtol=1e-10, atol=1e-10)
case("expm_f32", fsl.expm, sl.expm, [(_gen((3, 3), F32, seed=52),)], grad_args=[])
case("expm_frechet", fsl.expm_frechet, sl.expm_frechet,
     [(_gen((3, 3), seed=54), _gen((3, 3), seed=55)),
      (6.0 * _gen((3, 3), seed=56), _gen((3, 3), seed=57))], rtol=1e-9, atol=1e-9, order=1,
     vmap=False)

# -- special matrices --------------------------------------------------------------------------------
case("block_diag", lambda a, b: fsl.block_diag(a, b, 7.0), lambda a, b: sl.block_diag(a, b, 7.0),
     [(_gen((2, 3), seed=58), _gen((1, 2), seed=59))], vmap=False)
case("toeplitz", fsl.toeplitz, sl.toeplitz, [(_gen((3,), seed=60), _gen((4,), seed=61))],
     vmap=False)
case("toeplitz_c", fsl.toeplitz, sl.toeplitz, [(_gen((3,), C128, seed=62),)], vmap=False)
case("circulant", fsl.circulant, sl.circulant, [(_gen((4,), seed=63),)], vmap=False)
case("hankel", fsl.hankel, sl.hankel, [(_gen((3,), seed=64), _gen((2,), seed=65))], vmap=False)
case("companion", fsl.companion, sl.companion, [(_gen((4,), seed=66) + 2.0,)], vmap=False)
case("hessenberg", lambda a: fsl.hessenberg(a, calc_q=True),
     lambda a: sl.hessenberg(a, calc_q=True),
     [(_gen((4, 4), seed=67),), (_gen((3, 3), C128, seed=68),), (np.eye(3),)],
     rtol=1e-10, atol=1e-10, grad_args=[(_gen((4, 4), seed=67),)])
case("hessenberg_f32", fsl.hessenberg, sl.hessenberg, [(_gen((4, 4), F32, seed=69),)],
     grad_args=[])
case("leslie", fsl.leslie, sl.leslie, [(_gen((3,), seed=70), _gen((2,), seed=71))], vmap=False)
case("fiedler", fsl.fiedler, sl.fiedler, [(_gen((4,), seed=72),)], vmap=False)
for _mode, _c in (("right", (2, 4)), ("left", (3, 2)), ("right", (4,)), ("left", (3,))):
    case(f"qr_multiply[{_mode},{len(_c)}d]",
         lambda a, c, m=_mode: fsl.qr_multiply(a, c, m),
         lambda a, c, m=_mode: sl.qr_multiply(a, c, m),
         [(_gen((4, 3), seed=78), _gen(_c, seed=79))], vmap=False)
case("fiedler_companion", fsl.fiedler_companion, sl.fiedler_companion,
     [(_gen((5,), seed=75) + 2.0,), (_gen((8,), seed=76) + 2.0,), (_gen((2,), seed=77) + 2.0,)],
     vmap=False)
for _m in ("full", "valid", "same"):
    case(f"convolution_matrix[{_m}]", lambda a, m=_m: fsl.convolution_matrix(a, 4, m),
         lambda a, m=_m: sl.convolution_matrix(a, 4, m),
         [(_gen((3,), seed=73),), (_gen((6,), seed=74),)], vmap=False)
case("constant_matrices", lambda: [fsl.hadamard(4), fsl.dft(3, "sqrtn"), fsl.helmert(4),
                                   fsl.invhilbert(4), fsl.invhilbert(4, exact=True),
                                   fsl.hilbert(3), fsl.pascal(4, "upper"), fsl.invpascal(5),
                                   fsl.invpascal(4, "upper", exact=False)],
     lambda: [sl.hadamard(4), sl.dft(3, "sqrtn"), sl.helmert(4), sl.invhilbert(4),
              sl.invhilbert(4, exact=True), sl.hilbert(3), sl.pascal(4, "upper"), sl.invpascal(5),
              sl.invpascal(4, "upper", exact=False)], [()],
     grad_args=[], vmap=False)

# -- SciPy names beyond jax.scipy.linalg -------------------------------------------------------
_G4 = _gen((4, 4), seed=80)


case("eig", lambda a: [fsl.eig(a)[0], abs(fsl.eig(a)[1])],
     lambda a: [sl.eig(a)[0], np.abs(sl.eig(a)[1])],
     [(_G4,), (_gen((3, 3), C128, seed=81),)], rtol=1e-9, atol=1e-9, order=1,
     grad_args=[(_G4,)])
case("eig_left", lambda a: abs(fsl.eig(a, left=True, right=False)[1]),
     lambda a: np.abs(sl.eig(a, left=True, right=False)[1]),
     [(_G4,), (_gen((3, 3), C128, seed=81),)], rtol=1e-9, atol=1e-9, order=1)
case("eigvals", lambda a: [fsl.eigvals(a), fsl.eigvals(a, homogeneous_eigvals=True)],
     lambda a: [sl.eigvals(a), sl.eigvals(a, homogeneous_eigvals=True)],
     [(_G4,), (_gen((3, 3), F32, seed=82),)], rtol=1e-5, atol=1e-5, order=1,
     grad_args=[(_G4,)])
case("eigvals_generalized", lambda a, b: fnp.sort_complex(fsl.eigvals(a, b)),
     lambda a, b: np.sort_complex(sl.eigvals(a, b)), [(_G4, _dominant(4, seed=83))],
     rtol=1e-9, atol=1e-9, order=1)
case("eigvalsh", _sym(fnp, lambda a: [fsl.eigvalsh(a), fsl.eigvalsh(a, lower=False)]),
     _sym(np, lambda a: [sl.eigvalsh(a), sl.eigvalsh(a, lower=False)]), [(_spd(4, seed=84),)],
     grad_args=[(_spd(3, seed=85),)], rtol=1e-10, atol=1e-10)
case("svdvals", fsl.svdvals, sl.svdvals, _RECT + [(_gen((3, 3), C128, seed=86),)])
case("diagsvd", lambda s: fsl.diagsvd(s, 3, 2), lambda s: sl.diagsvd(s, 3, 2),
     [(_gen((2,), seed=87),)], vmap=False)
case("pinv", lambda a: fsl.pinv(a), lambda a: sl.pinv(a), _RECT + [(_gen((3, 3), C128, seed=88),)])
case("pinv_tolerances", lambda a: [fsl.pinv(a, atol=0.5), fsl.pinv(a, rtol=0.3)],
     lambda a: [sl.pinv(a, atol=0.5), sl.pinv(a, rtol=0.3)], _RECT[:1], grad_args=[])
case("pinvh", _sym(fnp, fsl.pinvh), _sym(np, sl.pinvh), [(_spd(3, seed=89) - 3.0 * np.eye(3),)],
     rtol=1e-9, atol=1e-9, order=1)
case("lstsq", lambda a, b: fsl.lstsq(a, b)[0], lambda a, b: sl.lstsq(a, b)[0],
     [(_gen((5, 3), seed=90), _gen((5,), seed=91)), (_gen((3, 5), seed=92), _gen((3, 2), seed=93))],
     rtol=1e-9, atol=1e-9, vmap=False)
case("rq", fsl.rq, sl.rq, _SQ[:1] + _RECT + [(_gen((3, 3), C128, seed=94),)], vmap=False,
     grad_args=[(_gen((3, 3), seed=95),)])
case("rq_economic", lambda a: fsl.rq(a, mode="economic"), lambda a: sl.rq(a, mode="economic"),
     _RECT, vmap=False, grad_args=[])
for _name in ("cosm", "sinm", "tanm", "coshm", "sinhm", "tanhm"):
    case(_name, getattr(fsl, _name), getattr(sl, _name),
         [(0.5 * _G4,), (0.5 * _gen((3, 3), C128, seed=96),)], rtol=1e-9, atol=1e-9, order=1,
         grad_args=[(0.5 * _G4,)])
case("signm", fsl.signm, sl.signm, [(_G4,), (_dominant(3, seed=97),)], rtol=1e-9, atol=1e-9,
     grad_args=[])
case("fractional_matrix_power", lambda a: [fsl.fractional_matrix_power(a, 0.5),
                                           fsl.fractional_matrix_power(a, -1.5),
                                           fsl.fractional_matrix_power(a, 2)],
     lambda a: [sl.fractional_matrix_power(a, 0.5).astype(C128),
                sl.fractional_matrix_power(a, -1.5).astype(C128),
                sl.fractional_matrix_power(a, 2)],
     [(_spd(3, seed=98),), (_G4,)], rtol=1e-8, atol=1e-8, order=1, grad_args=[(_G4,)])
case("norm", lambda a: [fsl.norm(a), fsl.norm(a, 2), fsl.norm(a, 1, axis=0)],
     lambda a: [sl.norm(a), sl.norm(a, 2), sl.norm(a, 1, axis=0)], _RECT, vmap=False)
case("khatri_rao", fsl.khatri_rao, sl.khatri_rao, [(_gen((2, 3), seed=99), _gen((4, 3), seed=100))],
     vmap=False)
_AB_U = np.array([[0.0, 0.0, 1.0, 1.0], [0.0, 2.0, 2.0, 2.0], [5.0, 5.0, 5.0, 5.0]])
_AB_L = np.array([[5.0, 5.0, 5.0, 5.0], [2.0, 2.0, 2.0, 0.0], [1.0, 1.0, 0.0, 0.0]])
case("solve_banded", lambda ab, b: fsl.solve_banded((2, 1), ab, b),
     lambda ab, b: sl.solve_banded((2, 1), ab, b),
     [(_gen((4, 5), seed=101) + np.array([[0.0], [3.0], [0.0], [0.0]]), _gen((5, 2), seed=102))],
     vmap=False)
for _lower, _ab in ((False, _AB_U), (True, _AB_L)):
    case(f"solveh_banded[{_lower}]", lambda ab, b, lo=_lower: fsl.solveh_banded(ab, b, lower=lo),
         lambda ab, b, lo=_lower: sl.solveh_banded(ab, b, lower=lo), [(_ab, _gen((4,), seed=103))],
         vmap=False, grad_args=[])
    case(f"cholesky_banded[{_lower}]",
         lambda ab, lo=_lower: [fsl.cholesky_banded(ab, lower=lo),
                                fsl.cho_solve_banded((fsl.cholesky_banded(ab, lower=lo), lo),
                                                     ab[1])],
         lambda ab, lo=_lower: [sl.cholesky_banded(ab, lower=lo),
                                sl.cho_solve_banded((sl.cholesky_banded(ab, lower=lo), lo),
                                                    ab[1])],
         [(_ab,)], vmap=False, grad_args=[])
    case(f"eig_banded[{_lower}]",
         lambda ab, lo=_lower: [fsl.eig_banded(ab, lower=lo)[0],
                                abs(fsl.eig_banded(ab, lower=lo)[1]),
                                fsl.eigvals_banded(ab, lower=lo, select="i", select_range=(1, 2))],
         lambda ab, lo=_lower: [sl.eig_banded(ab, lower=lo)[0],
                                np.abs(sl.eig_banded(ab, lower=lo)[1]),
                                sl.eigvals_banded(ab, lower=lo, select="i", select_range=(1, 2))],
         [(_ab,)], vmap=False, grad_args=[])
case("solve_toeplitz", lambda c, r, b: fsl.solve_toeplitz((c, r), b),
     lambda c, r, b: sl.solve_toeplitz((c, r), b),
     [(np.array([4.0, 1.0, 0.5]), np.array([4.0, 2.0, 1.0]), _gen((3,), seed=104))], vmap=False)
case("matmul_toeplitz", lambda c, x: fsl.matmul_toeplitz(c, x),
     lambda c, x: sl.matmul_toeplitz(c, x), [(_gen((3,), seed=105), _gen((3, 2), seed=106))],
     vmap=False)
case("solve_circulant", fsl.solve_circulant, sl.solve_circulant,
     [(np.array([3.0, 1.0, 0.0, 1.0]) + _gen((4,), seed=107) * 0.1, _gen((4,), seed=108)),
      (np.array([3.0, 1j, 0.0, 1.0]), _gen((4, 2), seed=109))], vmap=False)
case("solve_continuous_lyapunov", fsl.solve_continuous_lyapunov, sl.solve_continuous_lyapunov,
     [(_G4 - 2.0 * np.eye(4), _spd(4, seed=110)), (_gen((3, 3), C128, seed=111), _spd(3, seed=112))],
     rtol=1e-9, atol=1e-9, order=1)
for _meth in ("direct", "bilinear"):
    case(f"solve_discrete_lyapunov[{_meth}]",
         lambda a, q, m=_meth: fsl.solve_discrete_lyapunov(a, q, m),
         lambda a, q, m=_meth: sl.solve_discrete_lyapunov(a, q, m),
         [(0.3 * _G4, _spd(4, seed=113))], rtol=1e-9, atol=1e-9, order=1)
case("orthogonal_procrustes", fsl.orthogonal_procrustes, sl.orthogonal_procrustes,
     [(_gen((5, 3), seed=114), _gen((5, 3), seed=115))], rtol=1e-9, atol=1e-9, order=1,
     vmap=False)
_ARE_B, _ARE_R = _gen((4, 2), seed=116), np.array([[1.3, 0.1], [0.1, 1.3]])
_ARE_E, _ARE_S = np.eye(4) + 0.05 * _gen((4, 4), seed=117), 0.1 * _gen((4, 2), seed=118)
for _name, _scale in (("solve_continuous_are", 1.0), ("solve_discrete_are", 0.5)):
    case(_name, lambda a, b, q, r, n=_name: getattr(fsl, n)(a, b, q, r),
         lambda a, b, q, r, n=_name: getattr(sl, n)(a, b, q, r),
         [(_scale * _G4, _ARE_B, _spd(4, seed=119), _ARE_R)], rtol=1e-9, atol=1e-9, order=1,
         diff_argnums=(0, 2))
    case(f"{_name}_e_s", lambda a, b, q, r, e, s, n=_name: getattr(fsl, n)(a, b, q, r, e, s),
         # SciPy 1.17's balancing breaks its solution when e is given (the residual of its
         # own equation is 0.09 here, 1e-15 with balanced=False and for funcgrad's)
         lambda a, b, q, r, e, s, n=_name: getattr(sl, n)(a, b, q, r, e, s, balanced=False),
         [(_scale * _G4, _ARE_B, _spd(4, seed=119), _ARE_R, _ARE_E, _ARE_S)], rtol=1e-9,
         atol=1e-9, grad_args=[])
    case(f"{_name}_complex", lambda a, b, q, r, n=_name: getattr(fsl, n)(a, b, q, r),
         lambda a, b, q, r, n=_name: getattr(sl, n)(a, b, q, r),
         [(_scale * (_G4 + 0.5j * _gen((4, 4), seed=120)), _ARE_B, _spd(4, seed=121), _ARE_R)],
         rtol=1e-9, atol=1e-9, grad_args=[])
case("expm_cond", fsl.expm_cond, sl.expm_cond,
     [(_gen((3, 3), seed=122),), (_gen((2, 2), C128, seed=123),)], rtol=1e-9, atol=1e-9,
     order=1, grad_args=[(_gen((3, 3), seed=122),)], vmap=False)
