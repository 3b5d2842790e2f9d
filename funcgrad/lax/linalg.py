"""``funcgrad.lax.linalg``: ``jax.lax.linalg``'s decompositions and triangular solves under
their names, signatures and result conventions (``eigh`` returns ``(vectors, values)``,
``qr`` and ``svd`` default to full matrices, ``lu`` returns ``(lu, pivots, permutation)``,
``triangular_solve`` solves ``x @ op(a) = b`` unless ``left_side``), over the implementations
of ``funcgrad.numpy.linalg`` and ``funcgrad.scipy.linalg``, so each differentiates, batches
over leading axes and jits as those do.

Example:
    >>> import numpy as np
    >>> from funcgrad.lax import linalg
    >>> v, w = linalg.eigh(np.array([[2.0, 1.0], [1.0, 2.0]]))
    >>> w.tolist()
    [1.0, 3.0]
"""

from __future__ import annotations

import enum
from typing import Any

import numpy

import funcgrad.numpy as fnp
import funcgrad.numpy.linalg as _nla
import funcgrad.scipy.linalg as _sla
import funcgrad.scipy.linalg._decomp as _sla_decomp
import funcgrad.scipy.linalg._decomp_eig as _sla_eig
from funcgrad.api_vmap import vmap
from funcgrad.backend import device_put, get_default_device
from funcgrad.custom_derivatives import custom_jvp
from funcgrad.errors import NonDifferentiableError
from funcgrad.lax._common import aval_of
from funcgrad.ops import banded as _banded
from funcgrad.ops import schur as _schur

# the primitives funcgrad's jaxprs hold for these operations, under jax.lax.linalg's names (an
# interpreter can compare eqn.primitive with them); their params are funcgrad's, not JAX's
from funcgrad.ops.linalg_decomp import (
    cholesky_p,
    eig_p,
    eigh_p,
    qr_p,
    svd_p,
    triangular_solve_p,
)
from funcgrad.ops.lu import lu_p
from funcgrad.ops.schur import schur_p

Array = Any

__all__ = ["EigImplementation", "EighImplementation", "SvdAlgorithm", "cholesky", "cholesky_update", "eig", "eigh", "hessenberg", "householder_product", "lu", "ormqr",
           "tridiagonal", "qdwh",
           "lu_pivots_to_permutation", "qr", "schur", "svd", "symmetric_product",
           "triangular_solve", "tridiagonal_solve",
           "cholesky_p", "eig_p", "eigh_p", "lu_p", "qr_p", "schur_p", "svd_p",
           "triangular_solve_p"]


class SvdAlgorithm(enum.Enum):
    """``svd``'s ``algorithm`` choices, as JAX's. Every choice gives the same decomposition
    here (the backend's LAPACK/cuSOLVER driver); the choice only selects JAX's kernel."""

    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


class EighImplementation(enum.Enum):
    """``eigh``'s ``implementation`` choices, as JAX's (all give the backend's ``eigh``)."""

    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class EigImplementation(enum.Enum):
    """``eig``'s ``implementation`` choices, as JAX's (all give the backend's ``eig``)."""

    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


def _on_device_of(a: Any, host: Any) -> Any:
    """The host constant ``host`` on the device of the operand whose aval is ``a`` (whatever
    the default device): a host array met by a device array's operator is refused by CuPy."""
    return device_put(numpy.asarray(host), a.device or get_default_device())


def _check_choice(name: str, value: Any, kind: type) -> None:
    if value is not None and not isinstance(value, kind):
        raise TypeError(f"lax.linalg.{name}: expected None or a {kind.__name__}, got {value!r}")


def _matrices(name: str, x: Any, square: bool = True) -> Any:
    a = aval_of(f"linalg.{name}", x, "x")
    if a.ndim < 2 or (square and a.shape[-1] != a.shape[-2]):
        raise ValueError(f"lax.linalg.{name}: needs a (batch of) {'square ' if square else ''}"
                         f"matrices, got shape {a.shape}")
    if a.dtype.kind not in "fc":
        raise TypeError(f"lax.linalg.{name}: needs a float or complex operand, got {a.dtype}")
    return a


def _hermitian_part(x: Array) -> Array:
    return (x + fnp.conj(fnp.swapaxes(x, -1, -2))) / 2


def cholesky(x: Array, *, symmetrize_input: bool = True) -> Array:
    """The lower Cholesky factor of a (batch of) Hermitian positive-definite matrices.
    ``symmetrize_input`` first averages ``x`` with its conjugate transpose (else the lower
    triangle is read). A matrix that is not positive definite gives NaN in the whole lower
    triangle (zeros above), as JAX, so traced code can test ``isnan(l).any()``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.lax import linalg
        >>> linalg.cholesky(np.array([[4.0, 2.0], [2.0, 2.0]])).tolist()
        [[2.0, 0.0], [1.0, 1.0]]
    """
    _matrices("cholesky", x)
    if symmetrize_input:
        x = _hermitian_part(x)
    # Otherwise funcgrad.numpy.linalg.cholesky reads the lower triangle, and differentiates as
    # a function of a Hermitian matrix (a symmetric gradient, as eigh's here; JAX's gradient
    # with symmetrize_input=False has the same symmetric part).
    return _nla.cholesky(x)


def _left_from_right(x: Array, w: Array, vr: Array) -> Array:
    """Left eigenvectors (``vl^H a = w vl^H``) from the right ones: the rows of ``vr^-1``,
    conjugated, normalised as LAPACK's."""
    vl = fnp.conj(fnp.swapaxes(fnp.linalg.inv(vr), -1, -2))
    return _sla_eig.lapack_left_eigenvectors(vl, w, vr, fnp.asarray(x).dtype.kind != "c")


def _eig_parts(x: Array, left: bool, right: bool) -> tuple[Array, ...]:
    w, vr = _nla.eig(x)
    return ((w,) + ((_left_from_right(x, w, vr),) if left else ())
            + ((vr,) if right else ()))


def _refuse_vector_derivatives(*_: Any) -> Any:
    raise NonDifferentiableError(
        "lax.linalg.eig: derivatives of non-symmetric eigenvectors are only valid under "
        "assumptions on the input that cannot be checked (distinct eigenvalues); pass "
        "enable_eigvec_derivs=True to opt in, or compute_left_eigenvectors=False and "
        "compute_right_eigenvectors=False to differentiate the eigenvalues (as JAX)")


# JAX refuses eigenvector derivatives unless asked for (enable_eigvec_derivs).
_eig_no_vector_derivatives = custom_jvp(_eig_parts, nondiff_argnums=(1, 2))
_eig_no_vector_derivatives.defjvp(_refuse_vector_derivatives)


def eig(x: Array, *, compute_left_eigenvectors: bool = True,
        compute_right_eigenvectors: bool = True, enable_eigvec_derivs: bool = False,
        implementation: EigImplementation | None = None,
        use_magma: bool | None = None) -> list[Array]:
    """``[w, vl, vr]`` of a (batch of) general square matrices, as ``jax.lax.linalg.eig``:
    complex eigenvalues ``w`` (complex64 for float32), left eigenvectors ``vl`` (``vl[..., :,
    i]^H x = w[i] vl[..., :, i]^H``) and right ones ``vr`` (``x vr[..., :, i] = w[i] vr[...,
    :, i]``), each list entry present when asked for. ``w`` and ``vr`` are LAPACK's (NumPy's
    ``eig``); ``vl`` is derived from ``vr^-1`` with LAPACK's normalisation (unit norm,
    largest-magnitude component real and positive; for a real eigenvalue of a real matrix
    LAPACK's sign may differ). Eigenvalues alone (both flags False) differentiate; with
    eigenvectors, differentiation raises ``NonDifferentiableError`` unless
    ``enable_eigvec_derivs=True`` (JAX's opt-in: valid for distinct eigenvalues).
    ``implementation`` (an :class:`EigImplementation`) and ``use_magma`` are accepted;
    every choice gives the same eigenpairs.

    Example:
        >>> import numpy as np
        >>> from funcgrad.lax import linalg
        >>> w, vl, vr = linalg.eig(np.array([[2.0, 1.0], [0.0, 3.0]]))
        >>> w.tolist()
        [(2+0j), (3+0j)]
        >>> bool(np.allclose(vl.conj().T @ np.array([[2.0, 1.0], [0.0, 3.0]]),
        ...                  np.diag(w) @ vl.conj().T))
        True
    """
    _matrices("eig", x)
    _check_choice("eig", implementation, EigImplementation)
    left, right = bool(compute_left_eigenvectors), bool(compute_right_eigenvectors)
    if not (left or right):
        return [_nla.eigvals(x)]
    if enable_eigvec_derivs:
        return list(_eig_parts(x, left, right))
    return list(_eig_no_vector_derivatives(x, left, right))


def eigh(x: Array, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index: tuple[int, int] | None = None,
         implementation: EighImplementation | None = None) -> tuple[Array, Array]:
    """``(eigenvectors, eigenvalues)`` of a (batch of) Hermitian matrices, eigenvalues
    ascending (JAX's order of the pair; NumPy's ``eigh`` returns values first). Without
    ``symmetrize_input`` only the ``lower`` (or upper) triangle is read. ``subset_by_index=(lo,
    hi)`` keeps eigenpairs ``lo`` to ``hi - 1``. ``implementation`` (an
    :class:`EighImplementation`) is accepted; every choice gives the same eigenpairs.

    Example:
        >>> import numpy as np
        >>> from funcgrad.lax import linalg
        >>> v, w = linalg.eigh(np.diag([3.0, 1.0]))
        >>> w.tolist(), abs(v).tolist()
        ([1.0, 3.0], [[0.0, 1.0], [1.0, 0.0]])
    """
    _matrices("eigh", x)
    _check_choice("eigh", implementation, EighImplementation)
    if symmetrize_input:
        x = _hermitian_part(x)
    w, v = _nla.eigh(x, UPLO="L" if lower else "U")
    if subset_by_index is not None:
        lo, hi = (int(i) for i in subset_by_index)
        w, v = w[..., lo:hi], v[..., :, lo:hi]
    return v, w


def qr(x: Array, *, pivoting: bool = False, full_matrices: bool = True,
       use_magma: bool | None = None) -> tuple[Array, ...]:
    """``(q, r)`` of a (batch of) matrices: complete (``q`` square) unless
    ``full_matrices=False``; ``pivoting=True`` gives ``(q, r, p)``, column-pivoted QR
    (LAPACK ``geqp3``'s permutation ``p``, int32, ``x[..., p] = q @ r``), as JAX's.
    ``use_magma`` (JAX's GPU switch) is accepted and has no effect.

    Example:
        >>> import numpy as np
        >>> from funcgrad.lax import linalg
        >>> q, r = linalg.qr(np.ones((3, 2)))
        >>> q.shape, r.shape
        ((3, 3), (3, 2))
    """
    _matrices("qr", x, square=False)
    return tuple(_sla.qr(x, mode="full" if full_matrices else "economic", pivoting=pivoting))


def schur(x: Array, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable: Any = None) -> list[Array]:
    """``[t, vs]`` (``[t]`` without ``compute_schur_vectors``) with ``x = vs t vs^H`` for a
    (batch of) square matrices, as ``jax.lax.linalg.schur``: ``t`` real quasi-triangular
    (2x2 blocks for complex pairs) for real ``x``, upper triangular for complex ``x``, the
    eigenvalues in LAPACK's order. Not differentiable (neither is JAX's); sorting the
    eigenvalues (``sort_eig_vals``, ``select_callable``) is refused, as JAX does.

    Example:
        >>> import numpy as np
        >>> from funcgrad.lax import linalg
        >>> t, vs = linalg.schur(np.array([[1.0, 2.0], [0.0, 3.0]]))
        >>> np.diag(t).tolist()
        [1.0, 3.0]
    """
    _matrices("schur", x)
    if sort_eig_vals or select_callable is not None:
        raise ValueError("lax.linalg.schur: sorting the eigenvalues (sort_eig_vals, "
                         "select_callable) is not provided (JAX's CPU implementation refuses "
                         "it too)")
    t, vs = _schur.schur(x, "real")
    return [t, vs] if compute_schur_vectors else [t]


def svd(x: Array, *, full_matrices: bool = True, compute_uv: bool = True,
        subset_by_index: tuple[int, int] | None = None,
        algorithm: SvdAlgorithm | None = None) -> Any:
    """``(u, s, vh)`` of a (batch of) matrices (``s`` descending), full matrices by default;
    ``s`` alone without ``compute_uv``. ``subset_by_index=(lo, hi)`` keeps singular triplets
    ``lo`` to ``hi - 1`` (with ``full_matrices=False`` unless it is the whole range, as JAX).
    ``algorithm`` (an :class:`SvdAlgorithm`) is accepted; every choice gives the same values.

    Example:
        >>> import numpy as np
        >>> from funcgrad.lax import linalg
        >>> linalg.svd(np.diag([1.0, 3.0]), compute_uv=False).tolist()
        [3.0, 1.0]
    """
    _matrices("svd", x, square=False)
    _check_choice("svd", algorithm, SvdAlgorithm)
    out = _nla.svd(x, full_matrices=full_matrices, compute_uv=compute_uv,
                   subset_by_index=subset_by_index)
    return tuple(out) if compute_uv else out


def lu_pivots_to_permutation(pivots: Array, permutation_size: int) -> Array:
    """The permutation (int32) that LAPACK-style swap ``pivots`` (row ``i`` swapped with row
    ``pivots[..., i]``, in order) apply to ``range(permutation_size)``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.lax import linalg
        >>> linalg.lu_pivots_to_permutation(np.array([2, 2, 2], np.int32), 3).tolist()
        [2, 0, 1]
    """
    a = aval_of("linalg.lu_pivots_to_permutation", pivots, "pivots")
    n = int(permutation_size)
    if a.ndim < 1 or a.shape[-1] > n or a.dtype.kind not in "iu":
        raise ValueError(f"lax.linalg.lu_pivots_to_permutation: pivots must be integers with "
                         f"at most {n} entries on the last axis, got {a.str_short()}")
    positions = _on_device_of(a, numpy.arange(n, dtype=numpy.int32))
    perm = fnp.broadcast_to(positions, tuple(a.shape[:-1]) + (n,))
    for i in range(a.shape[-1]):
        j = fnp.asarray(pivots[..., i:i + 1]).astype(numpy.int32)
        at_i, at_j = perm[..., i:i + 1], fnp.take_along_axis(perm, j, axis=-1)
        perm = fnp.where(positions == i, at_j, fnp.where(positions == j, at_i, perm))
    return perm


def lu(x: Array) -> list[Array]:
    """``[lu, pivots, permutation]`` (a list, as JAX's) of a (batch of) matrices with partial pivoting, as JAX:
    ``lu`` holds ``L`` (unit diagonal, below) and ``U``; ``pivots`` (int32) are LAPACK's
    swaps; ``x[..., permutation, :] = L @ U``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.lax import linalg
        >>> f, piv, perm = linalg.lu(np.array([[1.0, 2.0], [3.0, 4.0]]))
        >>> piv.tolist(), perm.tolist()
        ([1, 1], [1, 0])
    """
    a = _matrices("lu", x, square=False)
    m, n = a.shape[-2:]
    factors, piv = _sla.lu_factor(x)
    piv = fnp.asarray(piv).astype(numpy.int32)
    return [factors, piv, lu_pivots_to_permutation(piv, m)]


def triangular_solve(a: Array, b: Array, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False) -> Array:
    """Solve ``op(a) @ x = b`` (``left_side=True``) or ``x @ op(a) = b`` (the default, as
    JAX) for triangular ``a`` (its ``lower`` or upper triangle is read), ``op(a)`` being
    ``a``, its transpose (``transpose_a``), conjugate (``conjugate_a``) or both.

    Example:
        >>> import numpy as np
        >>> from funcgrad.lax import linalg
        >>> a = np.array([[2.0, 0.0], [1.0, 4.0]])
        >>> linalg.triangular_solve(a, np.array([[2.0], [9.0]]), left_side=True,
        ...                         lower=True).tolist()
        [[1.0], [2.0]]
    """
    _matrices("triangular_solve", a)
    if not left_side:  # x op(a) = b  <=>  op(a)^T x^T = b^T
        b = fnp.swapaxes(b, -1, -2)
        transpose_a = not transpose_a
    if conjugate_a and not transpose_a:
        a, trans = fnp.conj(a), 0
    else:
        trans = (2 if conjugate_a else 1) if transpose_a else 0
    x = _sla.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal)
    return x if left_side else fnp.swapaxes(x, -1, -2)


def tridiagonal_solve(dl: Array, d: Array, du: Array, b: Array, *,
                      perturb_singular: bool = False) -> Array:
    """Solve the tridiagonal system with sub-diagonal ``dl`` (``dl[..., 0]`` unused), diagonal
    ``d`` and super-diagonal ``du`` (``du[..., -1]`` unused) for right-hand sides ``b`` of
    shape ``(..., n, k)``, as JAX: NaN for a singular matrix, or with ``perturb_singular`` a
    zero pivot made ``eps * max|a|`` (JAX: of order ``eps * max|U|``), a large finite
    solution, as inverse iteration wants.

    Example:
        >>> import numpy as np
        >>> from funcgrad.lax import linalg
        >>> linalg.tridiagonal_solve(np.array([0.0, 1.0]), np.array([2.0, 2.0]),
        ...                          np.array([1.0, 0.0]), np.array([[3.0], [3.0]])).tolist()
        [[1.0], [1.0]]
    """
    da = aval_of("linalg.tridiagonal_solve", d, "d")
    n = da.shape[-1]
    ba = aval_of("linalg.tridiagonal_solve", b, "b")
    if ba.ndim < 2 or ba.shape[-2] != n:
        raise ValueError(f"lax.linalg.tridiagonal_solve: b must have shape (..., {n}, k), got "
                         f"{ba.shape}")
    # A band solve (LU with partial pivoting, as LAPACK's gtsv): O(n), where a dense matrix
    # would take O(n^2) memory; band storage rows: du shifted right, d, dl shifted left.
    dt = fnp.result_type(dl, d, du, b)
    if dt.kind not in "fc":
        dt = numpy.dtype(numpy.float64)
    dl, d, du, b = (fnp.asarray(v).astype(dt) for v in (dl, d, du, b))
    zero = fnp.zeros_like(d[..., :1])
    ab = fnp.stack([fnp.concatenate([zero, du[..., :-1]], axis=-1), d,
                    fnp.concatenate([dl[..., 1:], zero], axis=-1)], axis=-2)
    batch = numpy.broadcast_shapes(fnp.shape(ab)[:-2], fnp.shape(b)[:-2])
    ab = fnp.broadcast_to(ab, batch + fnp.shape(ab)[-2:])
    b = fnp.broadcast_to(b, batch + fnp.shape(b)[-2:])
    x = _banded.banded_solve(ab, b, lower=1, upper=1, perturb=bool(perturb_singular))
    if perturb_singular:
        return x
    # JAX's gtsv path: a singular matrix (LAPACK's info > 0) gives NaN for its whole solution
    ok = fnp.all(fnp.isfinite(x), axis=(-2, -1), keepdims=True)
    return fnp.where(ok, x, fnp.nan)


def symmetric_product(a_matrix: Array, c_matrix: Array, *, alpha: float = 1.0,
                      beta: float = 0.0, symmetrize_output: bool = False) -> Array:
    """``alpha * a @ a^T + beta * c`` for (batches of) matrices, as JAX's (BLAS ``syrk``);
    ``symmetrize_output`` copies the lower triangle onto the upper one.

    Example:
        >>> import numpy as np
        >>> from funcgrad.lax import linalg
        >>> linalg.symmetric_product(np.array([[1.0], [2.0]]), np.eye(2), beta=1.0).tolist()
        [[2.0, 2.0], [2.0, 5.0]]
    """
    _matrices("symmetric_product", a_matrix, square=False)
    _matrices("symmetric_product", c_matrix)
    out = alpha * fnp.matmul(a_matrix, fnp.swapaxes(a_matrix, -1, -2)) + beta * c_matrix
    if symmetrize_output:
        out = fnp.tril(out) + fnp.swapaxes(fnp.tril(out, -1), -1, -2)
    return out


def cholesky_update(r_matrix: Array, w_vector: Array) -> Array:
    """The upper Cholesky factor of ``r^H r + w w^H`` given the upper factor ``r`` of a
    matrix and a vector ``w`` (a rank-one update, as JAX's). Computed by factorising the
    updated matrix again: O(n^3) rather than the O(n^2) rotations, with the same result and
    Cholesky's derivatives.

    Example:
        >>> import numpy as np
        >>> from funcgrad.lax import linalg
        >>> linalg.cholesky_update(np.eye(2), np.array([0.0, 1.0])).round(6).tolist()
        [[1.0, 0.0], [0.0, 1.414214]]
    """
    _matrices("cholesky_update", r_matrix)
    rh = fnp.conj(fnp.swapaxes(r_matrix, -1, -2))
    w = fnp.asarray(w_vector)
    updated = fnp.matmul(rh, r_matrix) + w[..., :, None] * fnp.conj(w[..., None, :])
    return fnp.conj(fnp.swapaxes(_nla.cholesky(updated), -1, -2))


def householder_product(a: Array, taus: Array) -> Array:
    """The first ``n`` columns of ``Q = H_0 H_1 ... H_{k-1}`` for an ``(m, n)`` ``a`` holding
    Householder vectors below its diagonal (LAPACK ``geqrf``'s packed form: ``v_i`` is 1 at
    ``i`` and ``a[i+1:, i]`` below) and ``taus`` ``(k,)``, ``H_i = I - tau_i v_i v_i^H``, as
    JAX's (LAPACK ``orgqr``). Differentiable.

    Example:
        >>> import numpy as np
        >>> from funcgrad.lax import linalg
        >>> linalg.householder_product(np.array([[0.0], [1.0]]), np.array([1.0])).tolist()
        [[0.0], [-1.0]]
    """
    aa = _matrices("householder_product", a, square=False)
    ta = aval_of("linalg.householder_product", taus, "taus")
    m, n = aa.shape[-2:]
    k = ta.shape[-1] if ta.ndim else 0
    if ta.ndim < 1 or k > n or k > m or tuple(ta.shape[:-1]) != tuple(aa.shape[:-2]):
        raise ValueError(f"lax.linalg.householder_product: taus must have shape "
                         f"{tuple(aa.shape[:-2])} + (k,) with k <= min(m, n) = {min(m, n)}, "
                         f"got {ta.shape}")
    rows = _on_device_of(aa, numpy.arange(m))
    q = fnp.broadcast_to(_on_device_of(aa, numpy.eye(m, dtype=aa.dtype)),
                         tuple(aa.shape[:-2]) + (m, m))
    for i in range(k - 1, -1, -1):   # Q = H_0 (H_1 (... H_{k-1}))
        v = fnp.where(rows == i, fnp.ones((), aa.dtype),
                      fnp.where(rows > i, a[..., :, i], fnp.zeros((), aa.dtype)))
        tau = taus[..., i][..., None, None]
        vh_q = fnp.matmul(fnp.conj(v)[..., None, :], q)
        # funcgrad's operations, not operators: a and taus may live on two devices (a host
        # operand moves; CuPy's operators refuse the mix)
        q = fnp.subtract(q, fnp.multiply(fnp.multiply(tau, v[..., :, None]), vh_q))
    return q[..., :, :n]


def ormqr(a: Array, taus: Array, c: Array, *, left: bool = True,
          transpose: bool = False) -> Array:
    """``Q @ c`` (``left=True``), ``c @ Q`` (``left=False``), or with ``Q^H`` for
    ``transpose=True`` (``Q^T`` for real input), where ``Q = H_0 H_1 ... H_{k-1}`` is the full
    ``(m, m)`` orthogonal factor held by ``a`` ``(..., m, n)`` and ``taus`` ``(..., k)`` in
    LAPACK ``geqrf``'s packed form (as :func:`householder_product`; from
    ``funcgrad.numpy.linalg.qr(x, mode="raw")`` take ``h.mT``), without forming ``Q``: one
    rank-one update per reflector, as JAX's (LAPACK ``ormqr``). Differentiable in all three
    arguments; batch axes broadcast.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> from funcgrad.lax import linalg
        >>> x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        >>> h, taus = fnp.linalg.qr(x, mode="raw")
        >>> q = linalg.ormqr(h.mT, taus, np.eye(3))
        >>> bool(np.allclose(q, np.linalg.qr(x, mode="complete")[0]))
        True
    """
    aa = _matrices("ormqr", a, square=False)
    ta = aval_of("linalg.ormqr", taus, "taus")
    ca = aval_of("linalg.ormqr", c, "c")
    m, n = aa.shape[-2:]
    k = ta.shape[-1] if ta.ndim else 0
    if ta.ndim < 1 or k > min(m, n):
        raise ValueError(f"lax.linalg.ormqr: taus must have shape (..., k) with k <= min(m, n) "
                         f"= {min(m, n)}, got {ta.shape}")
    if ca.ndim < 2 or ca.shape[-2 if left else -1] != m:
        side = "rows" if left else "columns"
        raise ValueError(f"lax.linalg.ormqr: c must be a (batch of) matrices with {m} {side} "
                         f"(a is {tuple(aa.shape)}, left={left}), got shape {ca.shape}")
    dtype = fnp.result_type(aa.dtype, ta.dtype, ca.dtype)
    a, taus, c = fnp.asarray(a, dtype), fnp.asarray(taus, dtype), fnp.asarray(c, dtype)
    rows = fnp.arange(m)
    # Q^H = H_{k-1}^H ... H_0^H with H_i^H = I - conj(tau_i) v_i v_i^H; Q c applies H_{k-1}
    # first, c Q applies H_0 first, and the transposes the other way round.
    order = range(k) if left == transpose else range(k - 1, -1, -1)
    for i in order:
        v = fnp.where(rows == i, fnp.ones((), dtype),
                      fnp.where(rows > i, a[..., :, i], fnp.zeros((), dtype)))
        tau = taus[..., i][..., None, None]
        if transpose:
            tau = fnp.conj(tau)
        # funcgrad's operations, not operators: a, taus and c may live on two devices (a
        # host operand moves; CuPy's operators refuse the mix)
        if left:   # c - tau v (v^H c)
            c = fnp.subtract(c, fnp.multiply(fnp.multiply(tau, v[..., :, None]),
                                             fnp.matmul(fnp.conj(v)[..., None, :], c)))
        else:      # c - tau (c v) v^H
            c = fnp.subtract(c, fnp.multiply(fnp.multiply(tau, fnp.matmul(c, v[..., :, None])),
                                             fnp.conj(v)[..., None, :]))
    return c


def hessenberg(a: Array) -> list[Array]:
    """``[packed, taus]`` (a list, as JAX's): LAPACK ``gehrd``'s reduction of a (batch of) square matrices to
    upper Hessenberg form, as JAX's: ``packed`` holds the Hessenberg matrix on and above the
    first subdiagonal and the Householder vectors below it, ``taus`` (``n - 1``) their
    scalars (``householder_product`` of the shifted vectors gives ``q``). Values are
    LAPACK's; written with array operations, so differentiable.

    Example:
        >>> import numpy as np
        >>> from funcgrad.lax import linalg
        >>> packed, taus = linalg.hessenberg(np.array([[2.0, 5.0, 8.0], [4.0, 2.0, 1.0],
        ...                                           [3.0, 6.0, 0.0]]))
        >>> packed.round(4).tolist(), taus.round(4).tolist()
        ([[2.0, -8.8, 3.4], [-5.0, 4.64, 2.48], [0.3333, -2.52, -2.64]], [1.8, 0.0])
    """
    aa = _matrices("hessenberg", a)
    fn = lambda m: _sla_decomp.gehrd(m)[2:]  # noqa: E731
    for _ in range(aa.ndim - 2):
        fn = vmap(fn)
    packed, taus = fn(a)
    return [packed, taus]


def _tridiagonal_lower(m: Array) -> tuple[Array, Array, Array, Array]:
    # For a Hermitian matrix the Hessenberg reduction is LAPACK's sytrd/hetrd (lower): the
    # same reflectors from the same columns; sytrd leaves the strict upper triangle as it was.
    h, _, packed, taus = _sla_decomp.gehrd(m)
    d = fnp.real(fnp.diagonal(h))
    e = fnp.real(fnp.diagonal(h, -1))
    # fnp.add, not +: gehrd computes a host m on the default device (a host operand moves)
    return fnp.add(fnp.tril(packed), fnp.triu(m, 1)), d, e, taus


def tridiagonal(a: Array, *, lower: bool = True) -> list[Array]:
    """``[packed, d, e, taus]`` (a list, as JAX's): LAPACK ``sytrd``/``hetrd``'s reduction of a (batch of)
    symmetric/Hermitian matrices to real tridiagonal form ``q^H a q``, as JAX's: the diagonal
    ``d``, the off-diagonal ``e``, the Householder vectors in ``packed`` (below the
    subdiagonal with ``lower``, above the superdiagonal otherwise; only that triangle of
    ``a`` is read) and their scalars ``taus``. Differentiable.

    Example:
        >>> import numpy as np
        >>> from funcgrad.lax import linalg
        >>> _, d, e, _ = linalg.tridiagonal(np.array([[2.0, 1.0, 1.0], [1.0, 2.0, 1.0],
        ...                                          [1.0, 1.0, 2.0]]))
        >>> d.round(6).tolist(), abs(e).round(6).tolist()
        ([2.0, 3.0, 1.0], [1.414214, 0.0])
    """
    aa = _matrices("tridiagonal", a)
    if lower:
        fn = _tridiagonal_lower
    else:
        # The upper reduction runs from the last column back: the lower one of the reversed
        # matrix, read back in reverse (the upper triangle mirrored into the lower one).
        def fn(m: Array) -> tuple[Array, Array, Array, Array]:
            rev = fnp.conj(fnp.swapaxes(m, -1, -2))[::-1, ::-1]
            packed, d, e, taus = _tridiagonal_lower(rev)
            packed = fnp.add(fnp.triu(packed[::-1, ::-1]), fnp.tril(m, -1))   # sytrd keeps the rest
            return packed, d[::-1], e[::-1], taus[::-1]
    for _ in range(aa.ndim - 2):
        fn = vmap(fn)
    return list(fn(a))


def qdwh(x: Array, *, is_hermitian: bool = False, max_iterations: int | None = None,
         eps: float | None = None, dynamic_shape: Any = None) -> tuple[Array, Array, Array,
                                                                      Array]:
    """``(u, h, num_iters, is_converged)``: the polar decomposition ``x = u h`` of an ``m x
    n`` matrix (``m >= n``; ``u`` with orthonormal columns, ``h`` Hermitian positive
    semi-definite), as ``jax.lax.linalg.qdwh`` returns it. Computed from the SVD rather than
    by QR-based dynamically weighted Halley iterations, so ``num_iters`` is 0 and
    ``is_converged`` True; ``max_iterations``, ``eps`` and ``is_hermitian`` do not change the
    result. Differentiable where the singular values are distinct.

    Example:
        >>> import numpy as np
        >>> from funcgrad.lax import linalg
        >>> u, h, _, ok = linalg.qdwh(np.array([[0.0, 2.0], [3.0, 0.0]]))
        >>> u.tolist(), h.tolist(), bool(ok)
        ([[0.0, 1.0], [1.0, 0.0]], [[3.0, 0.0], [0.0, 2.0]], True)
    """
    a = aval_of("linalg.qdwh", x, "x")
    if a.ndim != 2:
        raise ValueError(f"lax.linalg.qdwh: needs a matrix, got shape {a.shape}")
    if a.shape[0] < a.shape[1]:
        raise ValueError(f"lax.linalg.qdwh: the input matrix of shape M x N must have M >= N, "
                         f"got {a.shape}")
    if dynamic_shape is not None:
        raise ValueError("lax.linalg.qdwh: dynamic_shape is not supported")
    u, h = _sla.polar(x)
    return u, h, _on_device_of(a, numpy.int64(0)), _on_device_of(a, True)
