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
