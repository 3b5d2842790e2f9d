"""Decompositions of funcgrad.scipy.linalg: LU, Cholesky, QR, SVD, symmetric eigenproblems,
polar decomposition (SciPy's signatures; see docs/scipy.md)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy

import funcgrad.numpy as fnp
import funcgrad.ops.elementwise as _ew
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device, to_numpy
from funcgrad.core import Tracer
from funcgrad.errors import LinAlgShapeError
from funcgrad.lax import linalg as _lax_linalg
from funcgrad.lax import stop_gradient
from funcgrad.ops import ldl as _ldl
from funcgrad.ops import linalg_decomp as _ld
from funcgrad.ops import lu as _lu
from funcgrad.ops import schur as _schur
from funcgrad.scipy.linalg._util import (
    as_inexact,
    check_matrix,
    check_square,
    const_like,
    host_value,
    mH,
    over_batch,
    promote,
)

__all__ = ["lu", "lu_factor", "cholesky", "cho_factor", "qr", "svd", "eigh",
           "eigh_tridiagonal", "polar", "hessenberg", "schur", "rsf2csf", "qr_multiply", "rq",
           "qr_update", "qr_insert", "qr_delete", "ldl"]


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> tuple[Any, Any]:
    """LU decomposition with partial pivoting, in LAPACK's packed form: ``(lu, piv)``.

    ``lu`` holds ``U`` on and above the diagonal and the unit lower triangular ``L`` below
    it; ``piv`` (int32) says row ``i`` was swapped with row ``piv[i]``. Stacks of (possibly
    non-square) matrices work. Differentiable in ``a`` (``U`` must be nonsingular).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> lu, piv = fsl.lu_factor(np.array([[1.0, 2.0], [3.0, 4.0]]))
        >>> lu
        array([[3.        , 4.        ],
               [0.33333333, 0.66666667]])
        >>> piv
        array([1, 1], dtype=int32)
    """
    a = as_inexact(a)
    check_matrix("lu_factor", a)
    lu_, piv, _ = _lu.lu(a)
    return lu_, piv


def lu(a: Any, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True,
       p_indices: bool = False) -> Any:
    """LU decomposition ``a = p @ l @ u`` of each ``(m, n)`` matrix, as ``scipy.linalg.lu``.

    Returns ``(p, l, u)``: the permutation matrix ``p`` ``(m, m)`` (in ``a``'s real dtype), unit
    lower triangular ``l`` ``(m, k)`` and upper triangular ``u`` ``(k, n)``, ``k = min(m, n)``;
    ``permute_l=True`` gives ``(p @ l, u)``; ``p_indices=True`` gives ``p`` as int32 row
    indices with ``a = l[p] @ u``.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> p, l, u = fsl.lu(np.array([[1.0, 2.0], [3.0, 4.0]]))
        >>> p
        array([[0., 1.],
               [1., 0.]])
        >>> u
        array([[3.        , 4.        ],
               [0.        , 0.66666667]])
    """
    a = as_inexact(a)
    m, n = check_matrix("lu", a)
    k = min(m, n)
    lu_, _, perm = _lu.lu(a)
    dt = get_aval(lu_).dtype
    low = fnp.tril(lu_[..., :, :k], -1) + const_like(lu_, numpy.eye(m, k, dtype=dt))
    up = fnp.triu(lu_[..., :k, :])
    # a[perm] = l @ u, so a = p @ l @ u with p[perm[i], i] = 1.
    inv_perm = fnp.argsort(perm, axis=-1).astype(numpy.int32)
    if permute_l:
        return fnp.take_along_axis(low, inv_perm[..., :, None], axis=-2), up
    if p_indices:
        return inv_perm, low, up
    real = numpy.dtype(numpy.float32 if dt in (numpy.float32, numpy.complex64) else numpy.float64)
    p = (perm[..., None, :] == const_like(perm, numpy.arange(m, dtype=numpy.int32)[:, None])).astype(real)
    return p, low, up


def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Any:
    """Cholesky factor of a Hermitian positive-definite matrix: upper ``U`` with
    ``a = U^H U`` (SciPy's default), or lower ``L`` with ``a = L L^H`` when ``lower=True``.

    Only the triangle named by ``lower`` is read. A matrix that is not positive definite
    gives NaN in the factor's triangle (as JAX; SciPy raises ``LinAlgError``).
    Differentiated as a function of a symmetric matrix (see docs/linalg.md).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.cholesky(np.array([[4.0, 2.0], [2.0, 5.0]]))
        array([[2., 1.],
               [0., 2.]])
    """
    a = as_inexact(a)
    check_square("cholesky", a)
    return _cholesky(a, lower)


def _cholesky(a: Any, lower: bool) -> Any:
    if lower:
        return _ld.cholesky(a)
    # The upper factor reads the upper triangle: U = chol_lower(a^H)^H.
    return mH(_ld.cholesky(mH(a)))


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[Any, Any]:
    """``(c, lower)``: the Cholesky factor for :func:`cho_solve`.

    The other triangle of ``c`` is zero (SciPy leaves whatever ``a`` held there). For a stack
    of matrices ``lower`` is one flag per matrix (a NumPy bool array, as SciPy's; JAX gives
    one bool), for one matrix a bool.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> c, low = fsl.cho_factor(np.array([[4.0, 2.0], [2.0, 5.0]]))
        >>> fsl.cho_solve((c, low), np.array([6.0, 7.0]))
        array([1., 1.])
        >>> fsl.cho_factor(np.stack([np.eye(2), 4 * np.eye(2)]))[1]
        array([False, False])
    """
    c = cholesky(a, lower=lower)
    batch = get_aval(c).shape[:-2]
    return c, (numpy.full(batch, bool(lower)) if batch else bool(lower))


def _geqp3_permutation(a: Any) -> Any:
    """LAPACK ``geqp3``'s column permutation (int32, ``(..., n)``) of each matrix of ``a``:
    at step ``j`` the remaining column of largest residual norm (the first on ties) is swapped
    into place ``j``, the residual norms downdated as LAPACK's ``laqp2`` does (recomputed when
    cancellation would lose half the digits), so ties and their order are LAPACK's. Written
    with array operations (``jit``/``vmap`` work); the permutation is piecewise constant, so it
    carries no derivative."""
    w = _ew.stop_gradient(a)
    m, n = get_aval(w).shape[-2:]
    real = numpy.empty(0, get_aval(w).dtype).real.dtype
    tol3z = float(numpy.sqrt(numpy.finfo(real).eps / 2))
    cols = const_like(w, numpy.arange(n))   # on w's device, whatever the default
    batch = get_aval(w).shape[:-2]
    perm = fnp.broadcast_to(cols.astype(numpy.int32), batch + (n,))
    vn1 = fnp.linalg.norm(w, axis=-2)
    vn2 = vn1
    for j in range(min(m, n)):
        p = fnp.argmax(fnp.where(cols >= j, vn1, -1.0), axis=-1)[..., None]
        swap = fnp.where(cols == j, p, fnp.where(cols == p, j, cols))   # (..., n)
        w = fnp.take_along_axis(w, fnp.broadcast_to(swap[..., None, :], batch + (m, n)), axis=-1)
        perm, vn1, vn2 = (fnp.take_along_axis(v, swap, axis=-1) for v in (perm, vn1, vn2))
        # one Gram-Schmidt step: the residual norms it leaves are those of LAPACK's
        # Householder step (the part of each column below row j)
        wj = w[..., :, j]
        nj = fnp.linalg.norm(wj, axis=-1)[..., None]
        q = wj / fnp.where(nj == 0, 1.0, nj)
        rj = fnp.matmul(fnp.conj(q)[..., None, :], w)[..., 0, :]
        later = cols > j
        w = fnp.where(later, w - q[..., :, None] * rj[..., None, :], w)
        ratio = fnp.abs(rj) / fnp.where(vn1 == 0, 1.0, vn1)
        temp = fnp.maximum(1.0 - ratio * ratio, 0.0)
        temp2 = temp * (vn1 / fnp.where(vn2 == 0, 1.0, vn2)) ** 2
        recompute = temp2 <= tol3z
        fresh = fnp.linalg.norm(w, axis=-2) if j + 1 < m else fnp.zeros_like(vn1)
        update = later & (vn1 != 0)
        vn1 = fnp.where(update, fnp.where(recompute, fresh, vn1 * fnp.sqrt(temp)), vn1)
        vn2 = fnp.where(update & recompute, fresh, vn2)
    return perm


def qr(a: Any, overwrite_a: bool = False, lwork: Any = None, mode: str = "full",
       pivoting: bool = False, check_finite: bool = True) -> Any:
    """QR decomposition ``a = q @ r`` as ``scipy.linalg.qr``.

    ``mode``: ``"full"`` (``q`` ``(m, m)``, ``r`` ``(m, n)``), ``"economic"`` (``q``
    ``(m, k)``, ``r`` ``(k, n)``), ``"r"`` (the tuple ``(r,)``, ``r`` as in ``"full"``) or
    ``"raw"`` (``((h, tau), r)``, LAPACK's Householder form; not differentiable).
    ``pivoting=True`` is column-pivoted QR (LAPACK ``geqp3``), ``a[:, p] = q @ r``: the
    permutation ``p`` (int32) is appended to the results; differentiable for a fixed ``p``
    (as JAX's).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> q, r = fsl.qr(np.array([[3.0, 1.0], [4.0, 2.0]]))
        >>> r
        array([[-5. , -2.2],
               [ 0. ,  0.4]])
        >>> fsl.qr(np.array([[1.0, 3.0], [0.0, 4.0]]), pivoting=True, mode="r")[1]
        array([1, 0], dtype=int32)
    """
    a = as_inexact(a)
    m, n = check_matrix("qr", a)
    if mode not in ("full", "economic", "r", "raw"):
        raise ValueError(f"qr: mode must be 'full', 'r', 'economic' or 'raw', got {mode!r}")
    if pivoting:
        perm = _geqp3_permutation(a)
        batch = get_aval(a).shape[:-2]
        a = fnp.take_along_axis(a, fnp.broadcast_to(perm[..., None, :], batch + (m, n)), axis=-1)
        return (*qr(a, mode=mode), perm)
    if mode == "full":
        return tuple(fnp.linalg.qr(a, mode="complete"))
    if mode == "economic":
        return tuple(fnp.linalg.qr(a, mode="reduced"))
    if mode == "r":
        r = fnp.linalg.qr(a, mode="r")
        if m > n:
            r = fnp.concatenate([r, const_like(r, numpy.zeros(get_aval(r).shape[:-2] + (m - n, n),
                                                          dtype=get_aval(r).dtype))], axis=-2)
        return (r,)
    h, tau = fnp.linalg.qr(a, mode="raw")
    h = fnp.swapaxes(h, -1, -2)
    return (h, tau), fnp.triu(h[..., : min(m, n), :])


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        overwrite_a: bool = False, check_finite: bool = True,
        lapack_driver: str = "gesdd") -> Any:
    """Singular value decomposition ``a = u @ diag(s) @ vh``: ``(u, s, vh)``, or ``s`` when
    ``compute_uv=False``. Differentiable for ``full_matrices=False`` or square matrices.
    ``lapack_driver`` is checked as SciPy does but, as in JAX, every driver gives LAPACK
    ``gesdd``'s decomposition (NumPy's): with ``"gesvd"`` SciPy's singular vectors can differ
    from these by a sign (a phase for complex input) per singular pair, which is all they
    are defined up to (``u[:, k] * c, vh[k] * conj(c)`` with ``|c| = 1``).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.svd(np.array([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False)
        array([4., 3.])
    """
    if lapack_driver not in ("gesdd", "gesvd"):
        raise ValueError(f"svd: lapack_driver must be 'gesdd' or 'gesvd', got {lapack_driver!r}")
    a = as_inexact(a)
    check_matrix("svd", a)
    if not compute_uv:
        return fnp.linalg.svd(a, compute_uv=False)
    return tuple(fnp.linalg.svd(a, full_matrices=full_matrices))


def _hermitian_from(a: Any, lower: bool) -> Any:
    """The Hermitian matrix whose ``lower`` (else upper) triangle is ``a``'s: LAPACK reads
    only that triangle (the imaginary part of the diagonal is ignored)."""
    tri = fnp.tril(a, -1) if lower else fnp.triu(a, 1)
    d = fnp.diagonal(a, axis1=-2, axis2=-1)
    if get_aval(a).dtype.kind == "c":
        d = fnp.real(d).astype(get_aval(a).dtype)
    n = get_aval(a).shape[-1]
    return tri + mH(tri) + d[..., None, :] * const_like(a, numpy.eye(n, dtype=get_aval(a).dtype))


def _symmetric_tangent(a: Any, lower: bool) -> Any:
    """``_hermitian_from(a, lower)``'s value (one triangle read, as LAPACK) with the derivative
    of a function of a Hermitian matrix (the tangent's Hermitian part), as cholesky/eigh
    and solve(assume_a="pos") have: the gradient with respect to ``a`` is Hermitian."""
    part = (a + mH(a)) / 2
    return part + stop_gradient(_hermitian_from(a, lower) - part)


_EIGH_DRIVERS = ("ev", "evd", "evr", "evx", "gv", "gvd", "gvx")


def _check_eigh_driver(driver: Any, generalized: bool, subset: bool) -> None:
    """SciPy's checks of ``eigh``'s ``driver`` (every driver gives the same decomposition
    here, but a wrong one is an error there)."""
    if driver is None:
        return
    if driver not in _EIGH_DRIVERS:
        raise ValueError(f'eigh: "{driver}" is unknown. Possible values are "None", '
                         + ", ".join(f'"{d}"' for d in _EIGH_DRIVERS) + ".")
    if driver.startswith("g") and not generalized:
        raise ValueError(f"eigh: {driver} requires input b array to be supplied for "
                         "generalized eigenvalue problems.")
    if not driver.startswith("g") and generalized:
        raise ValueError(f'eigh: "{driver}" does not accept input b array for standard '
                         "eigenvalue problems.")
    if subset and driver in ("ev", "evd", "gv", "gvd"):
        raise ValueError(f'eigh: "{driver}" cannot compute subsets of eigenvalues')


def eigh(a: Any, b: Any = None, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True,
         eigvals: Any = None, type: int = 1, check_finite: bool = True, *,  # noqa: A002
         subset_by_index: Any = None, subset_by_value: Any = None, driver: Any = None) -> Any:
    """Eigenvalues (ascending) and eigenvectors of a Hermitian matrix, or of the generalized
    problem with Hermitian positive-definite ``b``, as ``scipy.linalg.eigh``.

    ``type`` 1: ``a v = w b v``; 2: ``a b v = w v``; 3: ``b a v = w v`` (eigenvectors
    normalised as LAPACK: ``v^H b v = I`` for types 1 and 2, ``v^H b^-1 v = I`` for 3).
    Only the ``lower`` (else upper) triangles of ``a`` and ``b`` are read.
    ``subset_by_index=(lo, hi)`` keeps eigenvalues ``lo..hi`` (inclusive, static ints);
    ``subset_by_value`` needs concrete values (not under ``jit``/``vmap``/``grad``).
    ``jax.scipy.linalg.eigh``'s positional order is accepted too (``lower``, ``eigvals_only``
    ... positionally; ``turbo`` has no effect; old SciPy's ``eigvals=(lo, hi)`` is
    ``subset_by_index``). ``driver`` is checked as SciPy does, and every driver gives the same
    decomposition: eigenvectors with the signs of LAPACK's ``syevd`` (NumPy's ``eigh``'s);
    SciPy's default ``"evr"`` may give a column the opposite sign. A selection's vectors (a
    ``subset_by_index`` short of all, or ``subset_by_value``) have SciPy's signs (LAPACK's
    ``stein``'s in the coordinates of the tridiagonal form).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.eigh(np.array([[2.0, 1.0], [1.0, 2.0]]), eigvals_only=True)
        array([1., 3.])
    """
    if eigvals is not None:
        if subset_by_index is not None:
            raise ValueError("eigh: give at most one of eigvals and subset_by_index")
        subset_by_index = eigvals
    if type not in (1, 2, 3):
        raise ValueError(f"eigh: type must be 1, 2 or 3, got {type!r}")
    if subset_by_index is not None and subset_by_value is not None:
        raise ValueError("eigh: give at most one of subset_by_index and subset_by_value")
    _check_eigh_driver(driver, b is not None,
                       subset_by_index is not None or subset_by_value is not None)
    if b is None:
        a = as_inexact(a)
        check_square("eigh", a)
        uplo = "L" if lower else "U"
        if eigvals_only:
            w, y = fnp.linalg.eigvalsh(a, UPLO=uplo), None
        else:
            w, y = fnp.linalg.eigh(a, UPLO=uplo)
        base = a

        def back(vecs: Any) -> Any:
            return vecs
    else:
        a, b = promote(a, b)
        n = check_square("eigh", a)
        if check_square("eigh", b, "b") != n:
            raise LinAlgShapeError(f"eigh: a {get_aval(a).shape} and b {get_aval(b).shape} "
                                   "must have the same size")
        low = _ld.cholesky(_symmetric_tangent(b, lower))
        af = _symmetric_tangent(a, lower)
        if type == 1:  # L^-1 a L^-H
            x = _ld.triangular_solve(low, af, lower=True)
            c = mH(_ld.triangular_solve(low, mH(x), lower=True))
        else:  # L^H a L
            c = fnp.matmul(mH(low), fnp.matmul(af, low))
        w, y = fnp.linalg.eigh(c)
        y = None if eigvals_only else y
        base = c

        def back(vecs: Any) -> Any:
            if type in (1, 2):
                return _ld.triangular_solve(low, vecs, lower=True, transpose_a=True,
                                            conjugate_a=get_aval(low).dtype.kind == "c")
            return fnp.matmul(low, vecs)
    n = get_aval(w).shape[-1]
    # LAPACK computes a selection of eigenvectors with stebz + stein, which fixes their signs
    # (all of them: syevr's MRRR or syevx's QR iteration, whose signs are not reproduced)
    stein = False
    if subset_by_index is not None:
        lo, hi = (int(i) for i in subset_by_index)
        if not 0 <= lo <= hi < n:
            raise ValueError(f"eigh: subset_by_index {subset_by_index!r} is not within [0, {n - 1}]")
        w = w[..., lo:hi + 1]
        y = None if y is None else y[..., :, lo:hi + 1]
        stein = (lo, hi) != (0, n - 1)
    elif subset_by_value is not None:
        lo, hi = subset_by_value
        wh = host_value(w, "eigh", "with subset_by_value the number of eigenvalues kept "
                        "depends on them (subset_by_index does not)")
        keep = const_like(w, numpy.flatnonzero((wh > lo) & (wh <= hi)))
        w = w[..., keep]
        y = None if y is None else y[..., :, keep]
        stein = True
    if y is None:
        return w
    if stein and get_aval(y).shape[-1]:
        y = _stein_signs(base, y, lower)
    return w, back(y)


def _stein_signs(a: Any, vecs: Any, lower: bool) -> Any:
    """The eigenvectors ``vecs`` of the Hermitian ``a`` with the signs (phases) LAPACK's
    ``stein`` gives them: in the coordinates of ``sytrd``/``hetrd``'s tridiagonal form
    ``Q^H a Q`` (the same reduction, so the same ``Q``), each vector's largest entry (the
    first of equals) real and positive."""
    packed, _, _, taus = _lax_linalg.tridiagonal(stop_gradient(a), lower=lower)
    z = stop_gradient(vecs)
    dt = get_aval(z).dtype
    n = get_aval(z).shape[-2]
    rows = fnp.arange(n)
    one, zero = fnp.ones((), dt), fnp.zeros((), dt)
    # Q^H z: lower, Q = H_0 H_1 ... H_{n-2}, H_j's vector 1 at j + 1 and packed[j+2:, j] below;
    # upper, Q = H_{n-2} ... H_0, H_j's vector 1 at j and packed[:j, j+1] above
    for j in (range(n - 1) if lower else range(n - 2, -1, -1)):
        if lower:
            u = fnp.where(rows == j + 1, one, fnp.where(rows > j + 1, packed[..., :, j], zero))
        else:
            u = fnp.where(rows == j, one, fnp.where(rows < j, packed[..., :, j + 1], zero))
        proj = fnp.sum(fnp.conj(u)[..., :, None] * z, axis=-2, keepdims=True)
        z = z - fnp.conj(taus[..., j])[..., None, None] * u[..., :, None] * proj
    top = fnp.take_along_axis(z, fnp.argmax(fnp.abs(z), axis=-2)[..., None, :], axis=-2)
    size = fnp.abs(top)
    phase = fnp.where(size > 0, fnp.conj(top) / fnp.where(size > 0, size, 1), 1)
    return vecs * stop_gradient(phase).astype(dt)


@over_batch(("d", 1), ("e", 1))
def eigh_tridiagonal(d: Any, e: Any, eigvals_only: bool = False, select: str = "a",
                     select_range: Any = None, check_finite: bool = True, tol: Any = 0.0,
                     lapack_driver: str = "auto", *, key: Any = None) -> Any:
    """Eigenvalues (and eigenvectors) of the real symmetric tridiagonal matrix with diagonal
    ``d`` ``(n,)`` and off-diagonal ``e`` ``(n - 1,)``.

    ``select="a"`` (all), ``"i"`` with ``select_range=(lo, hi)`` (indices, inclusive) or
    ``"v"`` with ``select_range=(vl, vu)`` (values in ``(vl, vu]``; needs concrete values).
    SciPy's positional order; JAX's ``tol=None`` and ``key`` (its random start vectors) are
    accepted and change nothing. Each eigenvector's largest entry is positive: SciPy's signs
    for a selection and for ``lapack_driver="stebz"`` (LAPACK's ``stein``); its default for
    all eigenvectors (``stev``) may flip some.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.eigh_tridiagonal(np.array([2.0, 2.0]), np.array([1.0]), eigvals_only=True)
        array([1., 3.])
    """
    d, e = promote(d, e)
    da, ea = get_aval(d), get_aval(e)
    if da.ndim != 1 or ea.ndim != 1:
        raise ValueError(f"eigh_tridiagonal: d and e must be 1-D, got shapes {da.shape} and "
                         f"{ea.shape}")
    n = da.shape[0]
    if ea.shape[0] != max(n - 1, 0):
        raise ValueError(f"eigh_tridiagonal: e must have length len(d) - 1 = {n - 1}, got "
                         f"{ea.shape[0]}")
    if da.dtype.kind == "c":
        raise TypeError("eigh_tridiagonal: d and e must be real")
    t = fnp.diag(d) + fnp.diag(e, 1) + fnp.diag(e, -1)
    if select in ("a", "all", 0):
        subset: dict[str, Any] = {}
    elif select in ("i", "index", 2):
        subset = {"subset_by_index": select_range}
    elif select in ("v", "value", 1):
        subset = {"subset_by_value": select_range}
    else:
        raise ValueError(f"eigh_tridiagonal: select must be 'a', 'v' or 'i', got {select!r}")
    if eigvals_only:
        return eigh(t, eigvals_only=True, **subset)
    w, v = eigh(t, **subset)
    # LAPACK's stein (SciPy's vectors for a selection, and for lapack_driver="stebz") makes
    # each vector's largest entry (the first of equals) positive; stemr, SciPy's choice for
    # all of them, nearly always agrees (its sign sits at the twisted factorization's index)
    top = fnp.take_along_axis(v, fnp.argmax(fnp.abs(v), axis=-2)[..., None, :], axis=-2)
    return w, v * stop_gradient(fnp.where(top < 0, -1.0, 1.0)).astype(get_aval(v).dtype)


def polar(a: Any, side: str = "right", *, method: str = "qdwh", eps: float | None = None,
          max_iterations: int | None = None) -> tuple[Any, Any]:
    """Polar decomposition: ``a = u @ p`` (``side="right"``) or ``a = p @ u`` (``"left"``),
    ``u`` with orthonormal columns (rows), ``p`` Hermitian positive semi-definite. Computed
    from the SVD, differentiable where the singular values are distinct. JAX's ``method``
    (``"qdwh"`` or ``"svd"``), ``eps`` and ``max_iterations`` are accepted: the SVD gives the
    exact factors for every shape and side (JAX's QDWH refuses some of them).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> u, p = fsl.polar(np.array([[0.0, 2.0], [3.0, 0.0]]))
        >>> u
        array([[0., 1.],
               [1., 0.]])
        >>> p
        array([[3., 0.],
               [0., 2.]])
    """
    if side not in ("right", "left"):
        raise ValueError(f"polar: side must be 'right' or 'left', got {side!r}")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"polar: method must be 'qdwh' or 'svd', got {method!r}")
    a = as_inexact(a)
    if get_aval(a).ndim < 2:
        raise ValueError(f"polar: a must be a (stack of) 2-D arrays, got shape "
                         f"{get_aval(a).shape}")
    # Leading dimensions are a stack of matrices, as SciPy 1.17.
    w, s, vh = fnp.linalg.svd(a, full_matrices=False)
    u = fnp.matmul(w, vh)
    if side == "right":
        p = fnp.matmul(mH(vh) * s[..., None, :], vh)
    else:
        p = fnp.matmul(w * s[..., None, :], mH(w))
    return u, p


@over_batch(("a", 2))
def hessenberg(a: Any, calc_q: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> Any:
    """Upper Hessenberg form ``h = q^H a q`` of a square matrix (zeros below the first
    subdiagonal), with ``q`` unitary when ``calc_q``: LAPACK's ``gehrd`` Householder
    reflectors and signs, so values are SciPy's. Written with array operations:
    differentiable, ``jit``/``vmap``-able; leading dimensions are a stack, as SciPy 1.17.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.hessenberg(np.array([[2.0, 5.0, 8.0], [4.0, 2.0, 1.0], [3.0, 6.0, 0.0]])).round(12)
        array([[ 2.  , -8.8 ,  3.4 ],
               [-5.  ,  4.64,  2.48],
               [ 0.  , -2.52, -2.64]])
    """
    a = as_inexact(a)
    check_square("hessenberg", a)
    if get_aval(a).ndim != 2:
        raise ValueError(f"hessenberg: a must be a 2-D array, got shape {get_aval(a).shape}")
    h, q, _, _ = gehrd(a)
    return (h, q) if calc_q else h


def gehrd(a: Any) -> tuple[Any, Any, Any, Any]:
    """LAPACK ``gehrd`` with array operations: ``(h, q, packed, taus)`` for a square 2-D
    ``a``: the Hessenberg form, its unitary ``q``, and LAPACK's packed result (``h`` with the
    reflector vectors below the subdiagonal) with the ``n - 1`` reflector scalars."""
    if isinstance(a, numpy.ndarray):
        # Its entries are NumPy scalars, which funcgrad's operations place on the default
        # device when they meet only each other (as Python scalars), to meet a's host columns
        # through operators after: the whole reduction goes there instead, as JAX's would.
        a = device_put(a, get_default_device())
    n = get_aval(a).shape[-1]
    dt = get_aval(a).dtype
    complex_ = dt.kind == "c"
    h = a
    q = const_like(a, numpy.eye(n, dtype=dt))
    below = const_like(a, numpy.zeros((n, n), dtype=dt))   # the packed reflector vectors
    taus = []
    # LAPACK also reflects at k = n - 2 for complex matrices (x is empty there, but the
    # reflector makes the last subdiagonal entry real).
    for k in range(n - 1 if complex_ else n - 2):
        alpha = h[k + 1, k]
        x = h[k + 2:, k]
        xnorm2 = fnp.sum(fnp.real(x * fnp.conj(x)) if complex_ else x * x)
        alpha_re = fnp.real(alpha) if complex_ else alpha
        alpha_im2 = fnp.imag(alpha) ** 2 if complex_ else 0.0
        trivial = (xnorm2 == 0) & (alpha_im2 == 0) if complex_ else xnorm2 == 0
        norm = fnp.sqrt(fnp.where(trivial, 1.0, alpha_re ** 2 + alpha_im2 + xnorm2))
        beta = -fnp.where(alpha_re >= 0, 1.0, -1.0) * norm  # LAPACK's dlarfg/zlarfg sign
        tau = fnp.where(trivial, 0.0, (beta - alpha) / beta).astype(dt)
        scale = fnp.where(trivial, 1.0, alpha - beta).astype(dt)
        v = fnp.concatenate([const_like(a, numpy.zeros(k + 1, dtype=dt)),
                             const_like(a, numpy.ones(1, dtype=dt)), x / scale])
        vc = fnp.conj(v) if complex_ else v
        # H = I - tau v v^H applied as h <- H^H h H (gehrd), q <- q H.
        tc = fnp.conj(tau) if complex_ else tau
        h = h - tc * v[:, None] * fnp.matmul(vc, h)[None, :]
        h = h - tau * fnp.matmul(h, v)[:, None] * vc[None, :]
        q = q - tau * fnp.matmul(q, v)[:, None] * vc[None, :]
        col = const_like(a, (numpy.arange(n) == k).astype(dt))
        below = below + fnp.where(fnp.arange(n)[:, None] > k + 1, v[:, None] * col[None, :],
                                  fnp.zeros((), dt))
        taus.append(tau)
    taus += [fnp.zeros((), dt)] * (n - 1 - len(taus))
    h = fnp.triu(h, -1)
    taus_arr = fnp.stack(taus) if taus else fnp.zeros((0,), dt)
    return h, q, h + below, taus_arr


_SCHUR_OUTPUTS = {"real": "real", "r": "real", "complex": "complex", "c": "complex"}


def schur(a: Any, output: str = "real", lwork: Any = None, overwrite_a: bool = False,
          sort: Any = None, check_finite: bool = True) -> tuple[Any, ...]:
    """Schur decomposition ``a = z t z^H`` (SciPy's ``schur``, also ``jax.scipy.linalg``'s):
    ``t`` real quasi-triangular with 2x2 blocks for complex-conjugate eigenvalue pairs
    (``output="real"``, real ``a``; blocks in LAPACK's standard form, equal diagonal entries)
    or upper triangular (``output="complex"``, or any complex ``a``), ``z`` unitary. The
    eigenvalues on the diagonal are in LAPACK's order, so ``t``'s diagonal is SciPy's; ``z``'s
    columns may differ from SciPy's by a sign (phase), with ``t`` changed to match. Integers
    become float64; batches of matrices are decomposed one by one. Not differentiable (as
    JAX).

    ``sort`` (``"lhp"``: real part < 0, ``"rhp"``: >= 0, ``"iuc"``: ``|w| <= 1``, ``"ouc"``:
    ``|w| > 1``, or a callable: of ``(re, im)`` for the real form, of the complex eigenvalue
    for the complex one) moves the selected eigenvalues to the top left, as SciPy (LAPACK's
    ``trsen`` order), and a third result ``sdim`` (int64, one per matrix) counts them; a
    conjugate pair is selected, and counts 2, when either of its eigenvalues is.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> t, z = fsl.schur(np.array([[1.0, 2.0], [0.0, 3.0]]))
        >>> np.diag(t).tolist(), bool(np.allclose(z @ t @ z.T, [[1.0, 2.0], [0.0, 3.0]]))
        ([1.0, 3.0], True)
        >>> t, z, sdim = fsl.schur(np.array([[1.0, 2.0], [0.0, -3.0]]), sort="lhp")
        >>> np.diag(t).round(12).tolist(), int(sdim)
        ([-3.0, 1.0], 1)
    """
    if output not in _SCHUR_OUTPUTS:
        raise ValueError(f"schur: output must be 'real' or 'complex' (or 'r', 'c'), got "
                         f"{output!r}")
    if not (sort is None or callable(sort) or sort in ("lhp", "rhp", "iuc", "ouc")):
        raise ValueError(f"schur: sort must be None, a callable or one of 'lhp', 'rhp', "
                         f"'iuc', 'ouc', got {sort!r}")
    a = as_inexact(a)
    check_square("schur", a)
    return _schur.schur(a, _SCHUR_OUTPUTS[output], sort)


def rsf2csf(T: Any, Z: Any, check_finite: bool = True) -> tuple[Any, Any]:  # noqa: N803
    """The complex Schur form ``(T, Z)`` of a real one (SciPy's and JAX's ``rsf2csf``): each
    2x2 block of the quasi-triangular ``T`` is triangularised by a complex Givens rotation
    (from its first eigenvalue in LAPACK's order), which ``Z`` absorbs, so ``Z T Z^H`` is
    unchanged. Written with array operations: ``jit``/``vmap``-able, differentiable.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> t, z = fsl.rsf2csf(np.array([[0.0, -1.0], [1.0, 0.0]]), np.eye(2))
        >>> np.diag(t).round(12).tolist()
        [1j, -1j]
    """
    t, z = fnp.asarray(T), fnp.asarray(Z)
    st, sz = get_aval(t).shape, get_aval(z).shape
    if len(st) < 2 or st[-1] != st[-2]:
        raise ValueError(f"rsf2csf: input 'T' must be square, got shape {st}")
    if len(sz) < 2 or sz[-1] != sz[-2]:
        raise ValueError(f"rsf2csf: input 'Z' must be square, got shape {sz}")
    if st[-1] != sz[-1]:
        raise ValueError(f"rsf2csf: input array shapes must match: Z {sz} vs. T {st}")
    t, z = promote(t, z)
    real = get_aval(t).dtype
    cdt = numpy.result_type(real, numpy.complex64)
    t, z = t.astype(cdt), z.astype(cdt)
    n = st[-1]
    eps = numpy.finfo(cdt).eps

    def unit(i: int, j: int) -> Any:
        e = numpy.zeros((n, n), cdt)
        e[i, j] = 1
        return const_like(t, e)

    ident = const_like(t, numpy.eye(n, dtype=cdt))
    for m in range(n - 1, 0, -1):
        sub = t[..., m, m - 1]
        rotate = fnp.abs(sub) > eps * (fnp.abs(t[..., m - 1, m - 1]) + fnp.abs(t[..., m, m]))
        mu = fnp.linalg.eigvals(t[..., m - 1:m + 1, m - 1:m + 1])[..., 0] - t[..., m, m]
        r = fnp.sqrt(fnp.abs(mu) ** 2 + fnp.abs(sub) ** 2)
        r = fnp.where(rotate, r, 1.0).astype(cdt)
        c, s = (mu / r)[..., None, None], (sub / r)[..., None, None]
        g = (ident + (fnp.conj(c) - 1) * unit(m - 1, m - 1) + s * unit(m - 1, m)
             - s * unit(m, m - 1) + (c - 1) * unit(m, m))
        g = fnp.where(rotate[..., None, None], g, ident)
        t = fnp.matmul(fnp.matmul(g, t), mH(g)) * (1 - unit(m, m - 1))
        z = fnp.matmul(z, mH(g))
    return t, z


def qr_multiply(a: Any, c: Any, mode: str = "right", pivoting: bool = False,
                conjugate: bool = False, overwrite_a: bool = False,
                overwrite_c: bool = False) -> tuple[Any, ...]:
    """``(c @ q, r)`` (``mode="right"``) or ``(q @ c, r)`` (``"left"``) for the economic QR
    decomposition ``a = q r`` (SciPy's and JAX's ``qr_multiply``); ``conjugate`` uses
    ``conj(q)``; a 1-D ``c`` gives a 1-D product. Differentiable as :func:`qr`;
    ``pivoting=True`` pivots as :func:`qr` and appends the permutation ``p``.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> cq, r = fsl.qr_multiply(np.array([[3.0, 0.0], [4.0, 5.0]]), np.eye(2), "left")
        >>> bool(np.allclose(cq @ r, [[3.0, 0.0], [4.0, 5.0]]))
        True
    """
    if mode not in ("left", "right"):
        raise ValueError(f"qr_multiply: mode must be 'left' or 'right', got {mode!r}")
    q, r, *perm = qr(a, mode="economic", pivoting=pivoting)
    if conjugate:
        q = fnp.conj(q)
    c = fnp.asarray(c)
    one_d = get_aval(c).ndim == 1
    k = get_aval(q).shape[-1]
    m = get_aval(q).shape[-2]
    want = k if mode == "left" else m
    got = get_aval(c).shape[0] if mode == "left" or one_d else get_aval(c).shape[-1]
    if got != want:
        raise ValueError(f"qr_multiply: c has shape {get_aval(c).shape}; mode={mode!r} needs "
                         f"{want} {'rows' if mode == 'left' else 'columns'}")
    if mode == "left":
        cq = fnp.matmul(q, c)
    else:
        cq = fnp.matmul(c, q)
    return (cq, r, *perm)


@over_batch(("a", 2))
def rq(a: Any, overwrite_a: bool = False, lwork: Any = None, mode: str = "full",
       check_finite: bool = True) -> Any:
    """RQ decomposition ``a = r @ q`` (``r`` upper trapezoidal, ``q`` unitary), as
    ``scipy.linalg.rq``: ``mode`` ``"full"`` (``q`` is ``(N, N)``), ``"economic"``
    (``r (M, K)``, ``q (K, N)``, ``K = min(M, N)``) or ``"r"`` (``r`` alone). LAPACK's
    ``gerqf`` values: the QR decomposition of ``a`` reversed along both axes and transposed,
    reversed back. Differentiable where :func:`qr` is.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> r, q = fsl.rq(np.array([[1.0, 2.0], [3.0, 4.0]]))
        >>> bool(np.allclose(r @ q, [[1.0, 2.0], [3.0, 4.0]])), float(r[1, 0])
        (True, 0.0)
    """
    if mode not in ("full", "r", "economic"):
        raise ValueError(f"rq: mode argument should be one of ['full', 'r', 'economic'], got "
                         f"{mode!r}")
    a = as_inexact(a)
    if get_aval(a).ndim != 2:
        raise ValueError(f"rq: expected a 2-D matrix, got shape {get_aval(a).shape}")
    if mode == "r":
        # SciPy's mode="r" gives the full (M, N) r, as mode="full" does
        return qr(a[::-1, ::-1].T, mode="r")[0].T[::-1, ::-1]
    q, r = qr(a[::-1, ::-1].T, mode=mode)
    return r.T[::-1, ::-1], q.T[::-1, ::-1]


def _qr_like(name: str, q: Any, r: Any, new_a: Any) -> tuple[Any, Any]:
    """The QR factorisation of ``new_a`` in the form ``(q, r)`` has (full: square ``q``;
    economic: ``q`` with orthonormal columns)."""
    m, k = check_matrix(name, q, "Q")
    return qr(new_a, mode="full" if m == k else "economic")


def _qr_operands(name: str, Q: Any, R: Any, *more: Any) -> list[Any]:  # noqa: N803
    ops = promote(Q, R, *more)
    q, r = ops[0], ops[1]
    if get_aval(q).ndim != 2 or get_aval(r).ndim != 2:
        raise ValueError(f"{name}: Q and R must be 2-D, got shapes {get_aval(q).shape} and "
                         f"{get_aval(r).shape}")
    if get_aval(q).shape[1] != get_aval(r).shape[0]:
        raise ValueError(f"{name}: Q {get_aval(q).shape} and R {get_aval(r).shape} do not "
                         "form a QR factorisation (Q.shape[1] != R.shape[0])")
    return ops


def qr_update(Q: Any, R: Any, u: Any, v: Any, overwrite_qruv: bool = False,  # noqa: N803
              check_finite: bool = True) -> tuple[Any, Any]:
    """The QR factorisation of ``A + u v^H`` from that of ``A = Q R`` (rank ``k`` for 2-D
    ``u (M, k)``, ``v (N, k)``), as ``scipy.linalg.qr_update``, full or economic like ``Q``.
    Recomputed from ``Q R + u v^H`` (``O(M N^2)``, where SciPy's Givens updates are
    ``O(M N)``), so the signs of ``R``'s rows are LAPACK's ``geqrf``'s and may differ from
    SciPy's (neither promises positive diagonals); differentiable.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> a = np.array([[3.0, 1.0], [4.0, 2.0]])
        >>> q1, r1 = fsl.qr_update(*fsl.qr(a), np.ones(2), np.array([1.0, 0.0]))
        >>> (q1 @ r1).round(12)
        array([[4., 1.],
               [5., 2.]])
    """
    q, r, u, v = _qr_operands("qr_update", Q, R, u, v)
    uu = u[:, None] if get_aval(u).ndim == 1 else u
    vv = v[:, None] if get_aval(v).ndim == 1 else v
    m, n = get_aval(q).shape[0], get_aval(r).shape[1]
    if get_aval(uu).shape[0] != m or get_aval(vv).shape[0] != n or \
            get_aval(uu).shape[1] != get_aval(vv).shape[1]:
        raise ValueError(f"qr_update: u {get_aval(u).shape} and v {get_aval(v).shape} do not "
                         f"fit a {m}x{n} matrix")
    return _qr_like("qr_update", q, r, fnp.matmul(q, r) + fnp.matmul(uu, mH(vv)))


def qr_insert(Q: Any, R: Any, u: Any, k: int, which: str = "row", rcond: Any = None,  # noqa: N803
              overwrite_qru: bool = False, check_finite: bool = True) -> tuple[Any, Any]:
    """The QR factorisation of ``A = Q R`` with rows (``which="row"``: ``u`` of shape ``(N,)``
    or ``(p, N)``) or columns (``"col"``: ``(M,)`` or ``(M, p)``) inserted before index ``k``,
    as ``scipy.linalg.qr_insert``; recomputed, see :func:`qr_update`.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> q1, r1 = fsl.qr_insert(*fsl.qr(np.eye(2)), np.array([1.0, 2.0]), 1)
        >>> (q1 @ r1).round(12) + 0.0
        array([[1., 0.],
               [1., 2.],
               [0., 1.]])
    """
    if which not in ("row", "col"):
        raise ValueError(f"qr_insert: which must be either 'row' or 'col', got {which!r}")
    q, r, u = _qr_operands("qr_insert", Q, R, u)
    m, n = get_aval(q).shape[0], get_aval(r).shape[1]
    a = fnp.matmul(q, r)
    if which == "row":
        rows = u[None, :] if get_aval(u).ndim == 1 else u
        if get_aval(rows).shape[1] != n:
            raise ValueError(f"qr_insert: rows to insert must have {n} entries, got shape "
                             f"{get_aval(u).shape}")
        if not 0 <= k <= m:
            raise ValueError(f"qr_insert: k must be within [0, {m}], got {k}")
        new_a = fnp.concatenate([a[:k], rows, a[k:]], axis=0)
    else:
        cols = u[:, None] if get_aval(u).ndim == 1 else u
        if get_aval(cols).shape[0] != m:
            raise ValueError(f"qr_insert: columns to insert must have {m} entries, got shape "
                             f"{get_aval(u).shape}")
        if not 0 <= k <= n:
            raise ValueError(f"qr_insert: k must be within [0, {n}], got {k}")
        new_a = fnp.concatenate([a[:, :k], cols, a[:, k:]], axis=1)
    return _qr_like("qr_insert", q, r, new_a)


def qr_delete(Q: Any, R: Any, k: int, p: int = 1, which: str = "row",  # noqa: N803
              overwrite_qr: bool = False, check_finite: bool = True) -> tuple[Any, Any]:
    """The QR factorisation of ``A = Q R`` with ``p`` rows (``which="row"``) or columns
    (``"col"``) deleted from index ``k`` on, as ``scipy.linalg.qr_delete``; recomputed, see
    :func:`qr_update`.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> a = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        >>> q1, r1 = fsl.qr_delete(*fsl.qr(a), 0)
        >>> (q1 @ r1).round(12)
        array([[3., 4.],
               [5., 6.]])
    """
    if which not in ("row", "col"):
        raise ValueError(f"qr_delete: which must be either 'row' or 'col', got {which!r}")
    q, r = _qr_operands("qr_delete", Q, R)
    m, n = get_aval(q).shape[0], get_aval(r).shape[1]
    size = m if which == "row" else n
    if p < 1 or not 0 <= k or k + p > size:
        raise ValueError(f"qr_delete: cannot delete {p} {which}(s) from index {k} of {size}")
    a = fnp.matmul(q, r)
    new_a = (fnp.concatenate([a[:k], a[k + p:]], axis=0) if which == "row"
             else fnp.concatenate([a[:, :k], a[:, k + p:]], axis=1))
    return _qr_like("qr_delete", q, r, new_a)


def ldl(A: Any, lower: bool = True, hermitian: bool = True,  # noqa: N803
        overwrite_a: bool = False, check_finite: bool = True) -> tuple[Any, Any, Any]:
    """``(lu, d, perm)`` with ``A = lu d lu^H`` (``lu d lu^T`` for real ``A`` or
    ``hermitian=False``), as ``scipy.linalg.ldl``: the Bunch-Kaufman factorization of a
    symmetric/Hermitian matrix, reading its lower (``lower=True``) or upper triangle. ``d`` is
    block diagonal (1x1 and 2x2 blocks), ``lu[perm]`` unit triangular, ``perm`` int64. LAPACK's
    pivoting (``?sytf2``/``?hetf2``), so SciPy's pivots and factors; computed on the host,
    stacks of matrices and ``jit``/``vmap`` work. Differentiable with the pivots held (they
    are a discrete choice, like ``lu``'s), beyond JAX: as ``cholesky``, ``A`` is taken as a
    function of its symmetric (Hermitian) part, so the gradient is symmetric; NaN in a
    column whose pivot is 0 (a singular ``A``).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> a = np.array([[2.0, -1.0, 3.0], [-1.0, 2.0, 0.0], [3.0, 0.0, 1.0]])
        >>> lu, d, perm = fsl.ldl(a)
        >>> np.allclose(lu @ d @ lu.T, a), perm.tolist()
        (True, [0, 1, 2])
    """
    del overwrite_a, check_finite
    a = fnp.atleast_2d(as_inexact(A))
    shape = get_aval(a).shape
    if shape[-1] != shape[-2]:
        raise LinAlgShapeError(f'ldl: the input array "a" should be square, got shape {shape}')
    if (hermitian and get_aval(a).dtype.kind == "c" and not isinstance(a, Tracer)
            and numpy.any(numpy.diagonal(to_numpy(a), axis1=-2, axis2=-1).imag)):
        warnings.warn("ldl: the imaginary parts of the diagonal are ignored; use "
                      "hermitian=False for complex symmetric matrices",
                      numpy.exceptions.ComplexWarning, stacklevel=2)
    return _ldl.ldl(a, lower=bool(lower), hermitian=bool(hermitian))
