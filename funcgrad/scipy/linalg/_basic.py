"""Least squares, pseudo-inverses and structured solves of funcgrad.scipy.linalg (SciPy's
``lstsq``, ``pinv``, ``pinvh``, ``solve_banded``, ``solveh_banded``, ``cholesky_banded``,
``cho_solve_banded``, ``solve_toeplitz``, ``matmul_toeplitz``, ``solve_circulant``,
``matrix_balance``), written
with funcgrad.numpy so they differentiate and trace. Banded and Toeplitz operands are expanded
to dense matrices (``O(n^3)`` solves, where LAPACK's banded routines are ``O(n k^2)``)."""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.backend import to_numpy
from funcgrad.core import Tracer
from funcgrad.errors import LinAlgShapeError
from funcgrad.numpy.linalg import LinAlgError
from funcgrad.ops import banded as _banded
from funcgrad.ops import toeplitz as _toeplitz
from funcgrad.ops.balance import balance
from funcgrad.scipy.linalg._decomp import cholesky
from funcgrad.scipy.linalg._decomp_eig import _hermitian_band
from funcgrad.scipy.linalg._util import (
    as_double,
    as_inexact,
    check_matrix,
    const_like,
    mH,
    over_batch,
    promote,
)

__all__ = ["lstsq", "pinv", "pinvh", "solve_banded", "solveh_banded", "cholesky_banded",
           "cho_solve_banded", "solve_toeplitz", "matmul_toeplitz", "solve_circulant",
           "matrix_balance"]


def _concrete_int(x: Any) -> Any:
    """``x`` as a Python int when its value is known (SciPy's ranks are ints), else as is."""
    if isinstance(x, Tracer):
        v = x.to_concrete_value()
        return x if v is None else int(v)
    return int(to_numpy(x))


@over_batch(("a", 2), ("b", "1|2"))
def lstsq(a: Any, b: Any, cond: Any = None, overwrite_a: bool = False,
          overwrite_b: bool = False, check_finite: bool = True,
          lapack_driver: Any = None) -> tuple[Any, Any, Any, Any]:
    """Least-squares solution of ``a x = b``: ``(x, residues, rank, s)`` as
    ``scipy.linalg.lstsq``, through the SVD (singular values at or below ``cond * max(s)``,
    default ``cond = eps``, count as zero). ``residues`` are the squared residual norms (a 0-d
    array for 1-D ``b``) when ``m > n`` and ``rank == n``, else empty; ``lapack_driver="gelsy"``
    gives ``s = None`` and empty residues, as SciPy. Differentiable; under ``jit``/``vmap``
    the rank is traced and residues are returned whenever ``m > n``.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> a = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
        >>> x, res, rank, s = fsl.lstsq(a, np.array([1.0, 2.0, 3.0]))
        >>> x.round(12) + 0.0, rank
        (array([1., 1.]), 2)
    """
    if lapack_driver not in (None, "gelsd", "gelsy", "gelss"):
        raise ValueError(f'lstsq: LAPACK driver "{lapack_driver}" is not found')
    a, b = promote(a, b)
    aa, ba = get_aval(a), get_aval(b)
    if aa.ndim != 2:
        raise ValueError(f"lstsq: input array a should be 2D, got shape {aa.shape}")
    if ba.ndim not in (1, 2):
        raise ValueError(f"lstsq: input array b should be 1D or 2D, got shape {ba.shape}")
    m, n = aa.shape
    if ba.shape[0] != m:
        raise ValueError("lstsq: shape mismatch: a and b should have the same number of rows "
                         f"({m} != {ba.shape[0]})")
    real = numpy.finfo(aa.dtype).dtype
    if m == 0 or n == 0:
        x = fnp.zeros((n,) + ba.shape[1:], aa.dtype)
        resid = (fnp.linalg.norm(b, axis=0) ** 2 if n == 0 else fnp.zeros((0,), real))
        return x, resid, 0, fnp.zeros((0,), real)
    if cond is None:
        cond = numpy.finfo(aa.dtype).eps
    x, resid, rank, s = fnp.linalg.lstsq(a, b, rcond=cond)
    rank = _concrete_int(rank)
    if lapack_driver == "gelsy":
        return x, fnp.zeros((0,), aa.dtype), rank, None
    if get_aval(resid).shape[0] == 0:
        resid = fnp.zeros((0,), aa.dtype)   # SciPy's empty residues have x's dtype
    elif ba.ndim == 1:
        resid = resid[0]
    return x, resid, rank, s


def _cutoff(name: str, atol: Any, rtol: Any, size: int, dtype: numpy.dtype) -> tuple[Any, Any]:
    atol = 0.0 if atol is None else atol
    rtol = size * numpy.finfo(dtype).eps if rtol is None else rtol
    for v in (atol, rtol):
        if not isinstance(v, Tracer) and numpy.any(to_numpy(v) < 0):
            raise ValueError(f"{name}: atol and rtol values must be positive.")
    return atol, rtol


def pinv(a: Any, *, atol: Any = None, rtol: Any = None, return_rank: bool = False,
         check_finite: bool = True) -> Any:
    """Moore-Penrose pseudo-inverse through the SVD, as ``scipy.linalg.pinv``: singular
    values at or below ``atol + rtol * max(s)`` (defaults ``atol = 0``,
    ``rtol = max(M, N) * eps``) count as zero; ``return_rank`` adds their number.
    Differentiable, ``jit``/``vmap``-able, stacks of matrices too.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.pinv(np.array([[2.0, 0.0], [0.0, 0.0]]), return_rank=True)
        (array([[0.5, 0. ],
               [0. , 0. ]]), 1)
    """
    a = as_inexact(a)
    m, n = check_matrix("pinv", a)
    u, s, vh = fnp.linalg.svd(a, full_matrices=False)
    atol, rtol = _cutoff("pinv", atol, rtol, max(m, n), get_aval(s).dtype)
    val = atol + fnp.max(s, axis=-1, keepdims=True, initial=0.0) * rtol
    large = s > val
    s_inv = fnp.where(large, 1.0 / fnp.where(large, s, 1.0), 0.0).astype(get_aval(s).dtype)
    out = fnp.matmul(mH(vh) * s_inv[..., None, :], mH(u))
    if not return_rank:
        return out
    rank = fnp.sum(large, axis=-1)
    return out, (_concrete_int(rank) if get_aval(rank).ndim == 0 else rank)


def pinvh(a: Any, atol: Any = None, rtol: Any = None, lower: bool = True,
          return_rank: bool = False, check_finite: bool = True) -> Any:
    """Pseudo-inverse of a Hermitian matrix through its eigendecomposition (the ``lower``,
    else upper, triangle is read), as ``scipy.linalg.pinvh``: eigenvalues with ``|w|`` at or
    below ``atol + rtol * max|w|`` count as zero.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.pinvh(np.array([[2.0, 0.0], [0.0, 0.0]]))
        array([[0.5, 0. ],
               [0. , 0. ]])
    """
    a = as_inexact(a)
    m, n = check_matrix("pinvh", a)
    s, u = fnp.linalg.eigh(a, UPLO="L" if lower else "U")
    atol, rtol = _cutoff("pinvh", atol, rtol, max(m, n), get_aval(s).dtype)
    val = atol + fnp.max(fnp.abs(s), axis=-1, keepdims=True, initial=0.0) * rtol
    above = fnp.abs(s) > val
    s_inv = fnp.where(above, 1.0 / fnp.where(above, s, 1.0), 0.0).astype(get_aval(s).dtype)
    out = fnp.matmul(u * s_inv[..., None, :].astype(get_aval(u).dtype), mH(u))
    if not return_rank:
        return out
    rank = fnp.sum(above, axis=-1)
    return out, (_concrete_int(rank) if get_aval(rank).ndim == 0 else rank)


def _band_operands(name: str, ab: Any, b: Any) -> tuple[Any, Any]:
    ab, b = promote(ab, b)
    if get_aval(ab).ndim != 2:
        raise LinAlgShapeError(f"{name}: ab must be 2-D (LAPACK's band storage), got shape "
                               f"{get_aval(ab).shape}")
    if get_aval(b).ndim == 0 or get_aval(ab).shape[-1] != get_aval(b).shape[0]:
        raise ValueError(f"{name}: shapes of ab {get_aval(ab).shape} and b "
                         f"{get_aval(b).shape} are not compatible.")
    return ab, b


def solve_banded(l_and_u: tuple[int, int], ab: Any, b: Any, overwrite_ab: bool = False,
                 overwrite_b: bool = False, check_finite: bool = True) -> Any:
    """Solve ``a x = b`` for the band matrix ``a`` with ``l`` lower and ``u`` upper diagonals
    stored as ``ab[u + i - j, j] = a[i, j]``, as ``scipy.linalg.solve_banded``: banded LU with
    partial pivoting (LAPACK's ``gbsv``, ``O(n (l + u) l)``), differentiable in ``ab`` and
    ``b``; a singular matrix gives inf/NaN where SciPy raises.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> ab = np.array([[0.0, 1.0, 1.0], [2.0, 2.0, 2.0], [1.0, 1.0, 0.0]])
        >>> fsl.solve_banded((1, 1), ab, np.ones(3))
        array([0.5, 0. , 0.5])

    Leading axes of ``ab`` and ``b`` beyond their core dimensions are batch axes (SciPy 1.17),
    here and in the other band and Toeplitz functions.
    """
    nlower, nupper = (int(v) for v in l_and_u)
    return _solve_banded(ab, b, nlower, nupper)


@over_batch(("ab", 2), ("b", "1|2"))
def _solve_banded(ab: Any, b: Any, nlower: int, nupper: int) -> Any:
    ab, b = _band_operands("solve_banded", ab, b)
    if nlower + nupper + 1 != get_aval(ab).shape[0]:
        raise ValueError(f"solve_banded: invalid values for the number of lower and upper "
                         f"diagonals: l+u+1 ({nlower + nupper + 1}) does not equal "
                         f"ab.shape[0] ({get_aval(ab).shape[0]})")
    # LAPACK's gbsv (banded LU, partial pivoting): O(n (l + u) l), not a dense O(n^3) solve
    vec = get_aval(b).ndim == 1
    x = _banded.banded_solve(ab, b[:, None] if vec else b, lower=nlower, upper=nupper)
    return x[:, 0] if vec else x


@over_batch(("ab", 2), ("b", "1|2"))
def solveh_banded(ab: Any, b: Any, overwrite_ab: bool = False, overwrite_b: bool = False,
                  lower: bool = False, check_finite: bool = True) -> Any:
    """Solve ``a x = b`` for a Hermitian positive-definite band matrix in band storage (upper
    form ``ab[u + i - j, j] = a[i, j]``, or the lower form ``ab[i - j, j]``), as
    ``scipy.linalg.solveh_banded``: the band is mirrored into a general one and solved by
    banded LU (``O(n k^2)``, never a dense matrix), so a matrix that is not positive definite
    but nonsingular is solved too, where SciPy raises.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.solveh_banded(np.array([[0.0, 1.0], [4.0, 4.0]]), np.array([5.0, 5.0]))
        array([1., 1.])
    """
    ab, b = _band_operands("solveh_banded", ab, b)
    k = get_aval(ab).shape[0] - 1
    vec = get_aval(b).ndim == 1
    x = _banded.banded_solve(_general_band(ab, lower), b[:, None] if vec else b, lower=k,
                             upper=k)
    return x[:, 0] if vec else x


def _shift(row: Any, t: int) -> Any:
    """``out[j] = row[j + t]`` with zeros past the ends."""
    n = get_aval(row).shape[0]
    if abs(t) >= n:
        return fnp.zeros_like(row)
    zeros = fnp.zeros_like(row[:abs(t)])
    return (fnp.concatenate([row[t:], zeros]) if t >= 0
            else fnp.concatenate([zeros, row[:n + t]]))


def _general_band(ab: Any, lower: bool) -> Any:
    """The ``(2k + 1, n)`` general band storage of the Hermitian matrix whose upper
    (``ab[k + i - j, j]``) or lower (``ab[i - j, j]``) band ``ab`` holds: the other triangle
    mirrored and conjugated, the diagonal's imaginary part dropped, as LAPACK reads it."""
    k = get_aval(ab).shape[0] - 1
    diag = ab[0] if lower else ab[k]
    if get_aval(ab).dtype.kind == "c":
        diag = fnp.real(diag).astype(get_aval(ab).dtype)
    rows = [None] * (2 * k + 1)
    rows[k] = diag
    for d in range(1, k + 1):   # a[j - d, j] (above) and a[j + d, j] (below)
        if lower:
            rows[k + d] = ab[d]
            rows[k - d] = fnp.conj(_shift(ab[d], -d))
        else:
            rows[k - d] = ab[k - d]
            rows[k + d] = fnp.conj(_shift(ab[k - d], d))
    return fnp.stack(rows)


@over_batch(("ab", 2))
def cholesky_banded(ab: Any, overwrite_ab: bool = False, lower: bool = False,
                    check_finite: bool = True) -> Any:
    """The Cholesky factor of a Hermitian positive-definite band matrix, in the same band
    storage (upper ``U``, ``U^H U = a``, or ``lower`` ``L``), as
    ``scipy.linalg.cholesky_banded``.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.cholesky_banded(np.array([[0.0, 2.0], [4.0, 5.0]]))
        array([[0., 1.],
               [2., 2.]])
    """
    ab = as_inexact(ab)
    full = _hermitian_band("cholesky_banded", ab, lower)
    c = cholesky(full, lower=lower)
    k, n = get_aval(ab).shape
    rows = []
    for r in range(k):
        d = r if lower else k - 1 - r
        diag = fnp.diagonal(c, offset=-d if lower else d)
        rows.append(fnp.pad(diag, (0, d) if lower else (d, 0)))
    return fnp.stack(rows)


def cho_solve_banded(cb_and_lower: tuple[Any, bool], b: Any, overwrite_b: bool = False,
                     check_finite: bool = True) -> Any:
    """Solve ``a x = b`` given :func:`cholesky_banded`'s ``(cb, lower)``, as
    ``scipy.linalg.cho_solve_banded``.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> cb = fsl.cholesky_banded(np.array([[0.0, 2.0], [4.0, 5.0]]))
        >>> fsl.cho_solve_banded((cb, False), np.array([6.0, 7.0]))
        array([1., 1.])
    """
    cb, lower = cb_and_lower
    return _cho_solve_banded(cb, b, bool(lower))


@over_batch(("cb", 2), ("b", "1|2"))
def _cho_solve_banded(cb: Any, b: Any, lower: bool) -> Any:
    cb, b = _band_operands("cho_solve_banded", cb, b)
    k = get_aval(cb).shape[0] - 1
    vec = get_aval(b).ndim == 1
    rhs = b[:, None] if vec else b
    # a = L L^H (lower: cb is L's band, (k, 0)) or U^H U (upper: U's band, (0, k)): two band
    # triangular solves, the band never expanded
    lo, hi = (k, 0) if lower else (0, k)
    tri_h = fnp.conj(cb) if get_aval(cb).dtype.kind == "c" else cb
    if lower:
        y = _banded.banded_solve(cb, rhs, lower=lo, upper=hi)
        x = _banded.banded_solve(tri_h, y, lower=lo, upper=hi, transpose_a=True)
    else:
        y = _banded.banded_solve(tri_h, rhs, lower=lo, upper=hi, transpose_a=True)
        x = _banded.banded_solve(cb, y, lower=lo, upper=hi)
    return x[:, 0] if vec else x


def _column_and_row(c_or_cr: Any) -> tuple[Any, Any]:
    # SciPy's Toeplitz functions compute in double precision, whatever the input's.
    if isinstance(c_or_cr, tuple):
        c, r = c_or_cr
        return as_double(c), as_double(r)
    c = as_double(c_or_cr)
    return c, fnp.conj(c)


def solve_toeplitz(c_or_cr: Any, b: Any, check_finite: bool = True) -> Any:
    """Solve ``T x = b`` for the Toeplitz matrix ``T`` with first column ``c`` and first row
    ``r`` (``c_or_cr`` is ``c`` or ``(c, r)``; ``r`` defaults to ``conj(c)``), as
    ``scipy.linalg.solve_toeplitz``: Levinson's recursion (``O(n^2)`` time, ``O(n)``
    memory), falling back to a dense solve where a leading principal minor is singular (where
    SciPy raises); differentiable in ``c``, ``r`` and ``b``.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.solve_toeplitz((np.array([2.0, 1.0]), np.array([2.0, 0.0])), np.array([2.0, 3.0]))
        array([1., 1.])
    """
    return _solve_toeplitz(*_column_and_row(c_or_cr), b)


@over_batch(("c", 1), ("r", 1), ("b", "1|2"))
def _solve_toeplitz(c: Any, r: Any, b: Any) -> Any:
    b = as_double(b)
    n = get_aval(c).shape[0]
    if get_aval(r).shape[0] != n or get_aval(b).shape[:1] != (n,):
        raise ValueError(f"solve_toeplitz: incompatible dimensions: c {get_aval(c).shape}, "
                         f"r {get_aval(r).shape}, b {get_aval(b).shape}")
    c, r, b = promote(c, r, b)
    vec = get_aval(b).ndim == 1
    # Levinson's recursion, as SciPy (O(n^2), no dense matrix), a dense solve where it breaks
    x = _toeplitz.toeplitz_solve(c, r, b[:, None] if vec else b)
    return x[:, 0] if vec else x


def matmul_toeplitz(c_or_cr: Any, x: Any, check_finite: bool = False,
                    workers: Any = None) -> Any:
    """``T @ x`` for the Toeplitz matrix of ``c_or_cr`` (see :func:`solve_toeplitz`), as
    ``scipy.linalg.matmul_toeplitz``: through FFTs of length ``m + n - 1``, without forming
    ``T``.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.matmul_toeplitz((np.array([1.0, 2.0]), np.array([1.0, 3.0])), np.ones(2))
        array([4., 3.])
    """
    return _matmul_toeplitz(*_column_and_row(c_or_cr), x)


@over_batch(("c", 1), ("r", 1), ("x", "1|2"))
def _matmul_toeplitz(c: Any, r: Any, x: Any) -> Any:
    # As SciPy: T is the top left (m, n) block of the circulant matrix of length m + n - 1
    # whose first column is [c, r[n-1], ..., r[1]], so T @ x is one FFT product, O((m + n)
    # log(m + n)) time and O(m + n) memory (a dense T of 10^5 points would be 80 GB).
    x = as_double(x)
    m, n = get_aval(c).shape[0], get_aval(r).shape[0]
    if get_aval(x).shape[0] != n:
        raise ValueError(f"matmul_toeplitz: the Toeplitz matrix is ({m}, {n}) but x has shape "
                         f"{get_aval(x).shape}")
    size = m + n - 1
    col = fnp.concatenate([c, r[1:][::-1]])
    vec = col[:, None] if get_aval(x).ndim == 2 else col
    if any(get_aval(v).dtype.kind == "c" for v in (col, x)):
        return fnp.fft.ifft(fnp.fft.fft(vec, n=size, axis=0) * fnp.fft.fft(x, n=size, axis=0),
                            axis=0)[:m]
    return fnp.fft.irfft(fnp.fft.rfft(vec, n=size, axis=0) * fnp.fft.rfft(x, n=size, axis=0),
                         n=size, axis=0)[:m]


def solve_circulant(c: Any, b: Any, singular: str = "raise", tol: Any = None,
                    caxis: int = -1, baxis: int = 0, outaxis: int = 0) -> Any:
    """Solve ``C x = b`` for the circulant matrix ``C`` with first column ``c`` through FFTs,
    as ``scipy.linalg.solve_circulant`` (``caxis``/``baxis``/``outaxis`` for stacks). Where
    ``|fft(c)| <= tol`` (default ``max|fft(c)| * n * eps``) the matrix is near singular:
    ``singular="raise"`` raises ``LinAlgError`` (for concrete values; traced values take the
    ``"lstsq"`` route), ``"lstsq"`` gives the least-squares solution.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.solve_circulant(np.array([2.0, 1.0, 0.0]), np.array([3.0, 3.0, 3.0]))
        array([1., 1., 1.])
    """
    if singular not in ("raise", "lstsq"):
        raise ValueError(f"solve_circulant: singular must be 'raise' or 'lstsq', got "
                         f"{singular!r}")
    c, b = fnp.atleast_1d(as_inexact(c)), fnp.atleast_1d(as_inexact(b))
    nc, nb = get_aval(c).shape[caxis], get_aval(b).shape[baxis]
    if nc != nb:
        raise ValueError(f"solve_circulant: shapes of c {get_aval(c).shape} and b "
                         f"{get_aval(b).shape} are incompatible")
    complex_out = get_aval(c).dtype.kind == "c" or get_aval(b).dtype.kind == "c"
    fc = fnp.fft.fft(fnp.moveaxis(c, caxis, -1), axis=-1)
    abs_fc = fnp.abs(fc)
    if tol is None:
        tol = fnp.max(abs_fc, axis=-1, keepdims=True) * nc * numpy.finfo(numpy.float64).eps
    near = abs_fc <= tol
    if singular == "raise" and not isinstance(near, Tracer) and bool(numpy.any(to_numpy(near))):
        raise LinAlgError("solve_circulant: near singular circulant matrix.")
    fc = fnp.where(near, 1.0, fc).astype(get_aval(fc).dtype)
    fb = fnp.fft.fft(fnp.moveaxis(b, baxis, -1), axis=-1)
    q = fnp.where(near, 0.0, fb / fc)
    x = fnp.fft.ifft(q, axis=-1)
    if not complex_out:
        x = fnp.real(x)
    return fnp.moveaxis(x, -1, outaxis) if outaxis != -1 else x


def matrix_balance(A: Any, permute: bool = True, scale: bool = True,  # noqa: N803
                   separate: bool = False, overwrite_a: bool = False) -> tuple[Any, Any]:
    """``(B, T)`` with ``B = inv(T) A T`` balanced, as ``scipy.linalg.matrix_balance``: LAPACK's
    ``gebal`` permutation isolating eigenvalues (``permute``) and powers-of-2 scaling making
    row and column norms alike (``scale``), the same transformation as SciPy's. ``T`` is
    float64, a scaled permutation; ``separate=True`` gives ``(scale, perm)`` instead (float64
    and int64, ``B = A[perm][:, perm] * scale / scale[:, None]``). Stacks of matrices work.
    The transformation is found on the host (it is piecewise constant); ``B`` is computed from
    it with array operations, so it differentiates (as ``inv(T) A T`` with ``T`` fixed) and
    works under ``jit``/``vmap``. A NaN entry raises ``ValueError`` (SciPy's too).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> b, t = fsl.matrix_balance(np.array([[1.0, 100.0], [0.01, 1.0]]))
        >>> b.tolist(), t.tolist()
        ([[1.0, 1.5625], [0.64, 1.0]], [[16.0, 0.0], [0.0, 0.25]])
    """
    del overwrite_a
    a = fnp.atleast_2d(as_inexact(A))
    shape = get_aval(a).shape
    if shape[-1] != shape[-2]:
        raise LinAlgShapeError("matrix_balance: the data matrix for balancing should be "
                               f"square, got shape {shape}")
    scaling, perm = balance(a, permute=bool(permute), scale=bool(scale))
    rows = fnp.take_along_axis(a, perm[..., :, None], axis=-2)
    b = fnp.take_along_axis(rows, perm[..., None, :], axis=-1)
    # Powers of 2: exact in a's precision, so B is LAPACK's to the bit.
    s = scaling.astype(_real_dtype(get_aval(a).dtype))
    b = b * (s[..., None, :] / s[..., :, None])
    n = shape[-1]
    if separate:
        if n == 0:   # SciPy's empty scaling has the input's dtype
            scaling = scaling.astype(get_aval(fnp.asarray(A)).dtype)
        return b, (scaling, perm)
    # T = diag(scale)[inverse(perm), :]: column j holds scale[j] in row perm[j].
    rows = const_like(perm, numpy.arange(n)[:, None])   # on perm's device, whatever the default
    t = fnp.where(perm[..., None, :] == rows, scaling[..., None, :], 0.0)
    return b, t


def _real_dtype(dt: numpy.dtype) -> numpy.dtype:
    return numpy.dtype(numpy.float32 if dt in (numpy.float32, numpy.complex64) else numpy.float64)
