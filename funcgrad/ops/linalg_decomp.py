"""Matrix decompositions and solves: the primitives behind ``funcgrad.numpy.linalg``.

``cholesky``, ``triangular_solve``, ``solve``, ``inv``, ``det``, ``slogdet``, ``eigh``,
``eigvalsh``, ``eig``/``eigvals`` (general matrices), ``svd`` and ``qr``. Each works on the
last two axes and takes any number of leading batch axes, as NumPy's ``linalg`` does; the
implementation is the backend's ``xp.linalg`` (NumPy, CuPy or the strict test backend), so
values are NumPy's exactly.

Operands must already be float32/float64/complex64/complex128 of one dtype (the wrappers in
:mod:`funcgrad.numpy.linalg` convert integers to float64 as NumPy does). A singular or
non-positive-definite matrix gives JAX's values, where NumPy raises ``LinAlgError`` (traced code
cannot catch an exception, and CuPy does not raise either): ``cholesky`` NaN in the whole lower
triangle (zeros above), ``solve``/``inv`` the inf/NaN of LU with its zero pivot,
``triangular_solve`` with a zero on the diagonal that of plain substitution, ``svd`` and
``eig`` of NaN/inf input NaN.

Derivative conventions (JVP rules written with primitives, so they nest to any order):

* ``cholesky`` and ``eigh``/``eigvalsh`` read one triangle of the input for the value, as
  LAPACK does (the lower one by default), but differentiate as functions of a Hermitian
  matrix, as JAX, PyTorch and autograd do: the tangent ``dA`` is replaced by its Hermitian
  part ``(dA + dA^H) / 2``, so the gradient with respect to the matrix is itself Hermitian
  and a gradient step keeps a symmetric matrix symmetric. Derivatives agree with finite
  differences along Hermitian directions (and with those of ``f((A + A^H) / 2)`` along any).
* ``eigh``: ``dV = V (F * (V^H dA V))`` with ``F_ij = 1 / (w_j - w_i)``. Where two
  eigenvalues are exactly equal the eigenvectors are not differentiable; ``F`` is set to 0
  there (the derivative within the degenerate eigenspace is left out), so results stay finite
  and are right for functions that do not depend on the basis chosen inside that eigenspace.
* ``eig`` (general matrices, complex results): ``dw = diag(V^-1 dA V)`` and
  ``dV = V (F * (V^-1 dA V)) + V diag(c)``, where ``c`` keeps LAPACK's normalisation of each
  eigenvector (unit 2-norm, largest-magnitude component's phase fixed), so derivatives agree
  with finite differences of the values as computed. Equal eigenvalues as for ``eigh``.
* ``svd``: the reduced decomposition (``full_matrices=False``, or any square matrix) is
  differentiable, with the same convention for equal singular values; ``1 / s`` is taken as 0
  for zero singular values. ``compute_uv=False`` gives ``ds = real(diag(U^H dA V))``.
* ``qr``: ``mode="reduced"`` (tall, square and wide matrices), ``mode="r"`` and
  ``mode="complete"`` (for a tall matrix the extra columns of ``q`` are those of LAPACK's
  Householder QR, a function of the first ``n``: JAX's rule). ``R`` must be nonsingular.
  ``mode="raw"`` (LAPACK's reflectors) has no derivative.
* Where a derivative is not defined (``qr`` "raw" or a non-square ``svd``
  ``full_matrices=True``, whose extra singular vectors are arbitrary), differentiating raises
  :class:`funcgrad.errors.NonDifferentiableError`, as JAX and PyTorch refuse these too.
* ``det``/``slogdet``: ``d log det A = trace(solve(A, dA))``; at an exactly singular matrix
  ``d det A = trace(adj(A) dA)`` with the adjugate from the SVD (finite, nonzero for rank
  ``n - 1``); ``slogdet``'s derivative is inf/NaN there, as JAX's.

Example:
    >>> import numpy as np
    >>> a = np.array([[4.0, 2.0], [2.0, 3.0]])
    >>> cholesky(a)
    array([[2.        , 0.        ],
           [1.        , 1.41421356]])
"""

from __future__ import annotations

from typing import Any

import numpy
from numpy.linalg import LinAlgError

import funcgrad.ops.elementwise as _ew
import funcgrad.ops.reductions as _red
import funcgrad.ops.shape as _shape
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import (
    device_of,
    device_put,
    get_default_device,
    to_numpy,
    xp_for,
    xp_for_device,
)
from funcgrad.core import bind, bind1
from funcgrad.errors import DTypeError, NonDifferentiableError, ShapeError
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import Zero, jvp_rules
from funcgrad.interpreters.transpose import deftranspose, is_undefined
from funcgrad.ops._batching_util import all_bdims_at_front, moveaxis_to_front
from funcgrad.ops._util import check_static, make_primitive, result_device
from funcgrad.ops.indexing import is_numpy_like
from funcgrad.ops.linalg import dot_general

__all__ = [
    "cholesky", "cholesky_p",
    "triangular_solve", "triangular_solve_p",
    "solve", "solve_p",
    "inv", "inv_p",
    "det", "det_p",
    "slogdet", "slogdet_p",
    "eigh", "eigh_p",
    "eigvalsh", "eigvalsh_p",
    "eig", "eigvals", "eig_p",
    "svd", "svd_p",
    "qr", "qr_p",
    "linalg_dtype",
]

_LINALG_DTYPES = frozenset(
    numpy.dtype(d) for d in ("float32", "float64", "complex64", "complex128")
)


def linalg_dtype(name: str, *avals: ShapedArray) -> numpy.dtype:
    """The one dtype of ``avals`` a linalg primitive computes in; a DTypeError otherwise.

    Example:
        >>> linalg_dtype("inv", ShapedArray((2, 2), numpy.float32))
        dtype('float32')
    """
    dts = {a.dtype for a in avals}
    if len(dts) != 1:
        shapes = ", ".join(a.str_short() for a in avals)
        raise DTypeError(f"{name}: operands must have one dtype, got ({shapes})")
    (dt,) = dts
    if dt not in _LINALG_DTYPES:
        raise DTypeError(
            f"{name}: array type {dt} is unsupported in linalg (float32, float64, complex64 "
            "and complex128 are; funcgrad.numpy.linalg converts integers to float64)"
        )
    return dt


def _real_dtype(dt: numpy.dtype) -> numpy.dtype:
    if dt.kind != "c":
        return dt
    return numpy.dtype(numpy.float32 if dt == numpy.complex64 else numpy.float64)


def _check_square(name: str, a: ShapedArray) -> tuple[int, int]:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(
            f"{name}: expected a square matrix or a stack of them (shape (..., n, n)), got "
            f"{a.str_short()}"
        )
    return a.shape[-2], a.shape[-1]


def _check_matrix(name: str, a: ShapedArray) -> tuple[int, int]:
    if a.ndim < 2:
        raise ShapeError(
            f"{name}: expected a matrix or a stack of them (at least 2 dimensions), got "
            f"{a.str_short()}"
        )
    return a.shape[-2], a.shape[-1]


def _check_rhs(name: str, a: ShapedArray, b: ShapedArray) -> None:
    n = a.shape[-1]
    if b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2] or b.shape[-2] != n:
        want = ",".join([str(d) for d in a.shape[:-2]] + [str(n), "k"])
        raise ShapeError(
            f"{name}: the right-hand side must have shape [{want}] for the matrix "
            f"{a.str_short()}, got {b.str_short()}"
        )


# ---------------------------------------------------------------------------------------------
# Matrix helpers for the rules (all on the last two axes, written with primitives)


def _xp_of(x: Any) -> Any:
    return xp_for_device(get_aval(x).device or get_default_device())


def _is_complex(x: Any) -> bool:
    return get_aval(x).dtype.kind == "c"


def _mT(x: Any) -> Any:
    nd = get_aval(x).ndim
    return _shape.swapaxes(x, nd - 2, nd - 1)


def _H(x: Any) -> Any:
    t = _mT(x)
    return _ew.conj(t) if _is_complex(t) else t


def _mm(a: Any, b: Any) -> Any:
    """Batched matrix product of two stacks with equal batch dims."""
    nd = get_aval(a).ndim
    batch = tuple(range(nd - 2))
    return dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)))


def _const(x: Any, host: numpy.ndarray) -> Any:
    """A constant like ``host`` on ``x``'s device, in ``x``'s dtype."""
    xp = _xp_of(x)
    return xp.asarray(host.astype(get_aval(x).dtype))


def _eye(x: Any) -> Any:
    n = get_aval(x).shape[-1]
    return _const(x, numpy.eye(n))


def _tril(x: Any, k: int = 0) -> Any:
    n, m = get_aval(x).shape[-2:]
    return _ew.mul(x, _const(x, numpy.tri(n, m, k)))


def _triu(x: Any, k: int = 0) -> Any:
    n, m = get_aval(x).shape[-2:]
    return _ew.mul(x, _const(x, 1.0 - numpy.tri(n, m, k - 1)))


def _diag(x: Any) -> Any:
    """The diagonal of each matrix, shape (..., n)."""
    nd = get_aval(x).ndim
    return _red.reduce_sum(_ew.mul(x, _eye(x)), (nd - 1,))


def _trace(x: Any) -> Any:
    nd = get_aval(x).ndim
    return _red.reduce_sum(_ew.mul(x, _eye(x)), (nd - 2, nd - 1))


def _row(v: Any) -> Any:
    """(..., k) -> (..., 1, k)."""
    return _shape.expand_dims(v, (get_aval(v).ndim - 1,))


def _col(v: Any) -> Any:
    """(..., k) -> (..., k, 1)."""
    return _shape.expand_dims(v, (get_aval(v).ndim,))


def _hermitian_part(x: Any) -> Any:
    """``(x + x^H) / 2``: the tangent a function of a Hermitian matrix sees (JAX's convention,
    which makes the gradient with respect to the matrix Hermitian)."""
    return _ew.mul(_ew.add(x, _H(x)), 0.5)


def _safe_reciprocal(d: Any) -> Any:
    """``1 / d`` where ``d != 0``, and 0 where ``d == 0``."""
    zero = _ew.eq(d, 0)
    return _ew.select_n(zero, _ew.div(1, _ew.select_n(zero, d, 1)), 0)


def _right_solve_upper(r: Any, b: Any) -> Any:
    """``b @ inv(r)`` for upper-triangular ``r``: solves ``x r = b``."""
    return _mT(triangular_solve(r, _mT(b), lower=False, transpose_a=True))


def _batch_front(prim: Any) -> None:
    """Batch rule: every batch axis to the front (unbatched operands broadcast)."""

    def rule(axis_size, vals, dims, **params):
        if len(vals) == 1:
            outs = bind(prim, moveaxis_to_front(vals[0], dims[0]), **params)
        else:
            outs = bind(prim, *all_bdims_at_front(axis_size, vals, dims), **params)
        return outs, [0] * len(outs)

    batching.batch_rules[prim] = rule


# =============================================================================================
# LAPACK-style results for singular input (JAX's), where NumPy raises


def lu_factor_packed(xp: Any, a: Any) -> tuple[Any, Any, Any]:
    """LAPACK ``getrf`` on each ``(m, n)`` matrix of the stack ``a``, in ``xp``'s operations:
    ``(lu, pivots, permutation)`` as :func:`funcgrad.ops.lu.lu` returns them (the pivot is
    the entry of largest ``|re| + |im|``, first on ties; a zero pivot is left in ``U``
    unscaled, as LAPACK). The implementation of ``lu_p``, and what ``solve``/``inv`` use for a
    singular matrix (NumPy's raise there).

    Example:
        >>> lu_factor_packed(numpy, numpy.array([[1.0, 2.0], [3.0, 4.0]]))[2]
        array([1, 0], dtype=int32)
    """
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    k = min(m, n)
    size = 1
    for d in batch:
        size *= d
    lu_ = xp.reshape(xp.asarray(a).copy(), (size, m, n))
    perm = xp.tile(xp.arange(m, dtype=xp.int32), (size, 1))
    piv = xp.zeros((size, k), dtype=xp.int32)
    rows = xp.arange(size)
    for j in range(k):
        col = lu_[:, j:, j]
        mag = xp.abs(col.real) + xp.abs(col.imag) if col.dtype.kind == "c" else xp.abs(col)
        p = j + xp.argmax(mag, axis=1)
        piv[:, j] = p
        row_j = lu_[rows, j].copy()
        lu_[rows, j] = lu_[rows, p]
        lu_[rows, p] = row_j
        perm_j = perm[rows, j].copy()
        perm[rows, j] = perm[rows, p]
        perm[rows, p] = perm_j
        pivot = lu_[:, j, j]
        nonzero = pivot != 0
        scale = xp.where(nonzero, pivot, xp.ones_like(pivot))
        lu_[:, j + 1:, j] = xp.where(nonzero[:, None], lu_[:, j + 1:, j] / scale[:, None],
                                     lu_[:, j + 1:, j])
        lu_[:, j + 1:, j + 1:] -= lu_[:, j + 1:, j:j + 1] * lu_[:, j:j + 1, j + 1:]
    return (xp.reshape(lu_, a.shape), xp.reshape(piv, batch + (k,)),
            xp.reshape(perm, batch + (m,)))


def _substitute(t: Any, b: Any, *, lower: bool, unit_diagonal: bool = False) -> Any:
    """``t x = b`` for one triangular ``t`` (only its ``lower`` or upper triangle read) and
    ``b`` ``(n, k)`` by plain substitution, as LAPACK's ``trsm``: a zero on the diagonal
    gives inf/NaN (JAX's values) where NumPy's ``solve`` raises."""
    n = t.shape[-1]
    x = b.copy()
    with numpy.errstate(all="ignore"):
        for i in range(n) if lower else range(n - 1, -1, -1):
            done = x[i] - (t[i, :i] @ x[:i] if lower else t[i, i + 1:] @ x[i + 1:])
            x[i] = done if unit_diagonal else done / t[i, i]
    return x


def _lu_substitution_solve(xp: Any, a: Any, b: Any) -> Any:
    """``a x = b`` for one square ``a`` and ``b`` ``(n, k)`` by ``getrf`` and forward and back
    substitution, dividing by a zero pivot as LAPACK's ``getrs`` does: a singular ``a`` gives
    inf/NaN (JAX's values) where NumPy raises."""
    lu_, _, perm = lu_factor_packed(xp, a)
    y = _substitute(lu_, b[perm], lower=True, unit_diagonal=True)
    return _substitute(lu_, y, lower=False)


def _solve_or_substitute(xp: Any, a: Any, b: Any) -> Any:
    try:
        return xp.linalg.solve(a, b)
    except LinAlgError:
        return _lu_substitution_solve(xp, a, b)


# =============================================================================================
# cholesky


def _cholesky_abstract(a: ShapedArray) -> list[ShapedArray]:
    _check_square("cholesky", a)
    dt = linalg_dtype("cholesky", a)
    return [ShapedArray(a.shape, dt, False, a.device)]


def _each_matrix(xp: Any, fn: Any, a: Any, *rest: Any) -> Any:
    """``fn`` applied to each matrix of a stack (batch dims of ``a`` and ``rest`` equal), for
    the rare stack where one matrix fails and NumPy's batched call would fail them all."""
    batch = a.shape[:-2]
    flat = [xp.reshape(x, (-1,) + x.shape[len(batch):]) for x in (a, *rest)]
    outs = [fn(*(x[i] for x in flat)) for i in range(flat[0].shape[0])]
    return xp.reshape(xp.stack(outs), batch + outs[0].shape) if outs else None


def _nan_where_failing(xp: Any, fn: Any, a: Any) -> list[Any]:
    """``fn(a)`` (a list of arrays with ``a``'s batch dims in front), with NaN results for
    each matrix holding a NaN or inf, as JAX gives: NumPy raises ``LinAlgError`` there
    (traced code cannot catch it), cuSOLVER returns partly NaN values (``svd``) or fails
    outright (``eig``: ``CUSOLVER_STATUS_INTERNAL_ERROR``), so such matrices are replaced by
    zeros before ``fn`` sees them, on every backend. Where NumPy's batched call still raises
    (no convergence), each matrix alone, NaN for those that fail."""
    bad = ~xp.all(xp.isfinite(a), axis=(-2, -1))
    a = xp.where(bad[..., None, None], xp.zeros((), dtype=a.dtype), a)
    return _nan_where(xp, bad, _each_or_nan(xp, fn, a))


def _nan_where(xp: Any, bad: Any, outs: list[Any]) -> list[Any]:
    """``outs`` with NaN in every result of the matrices where ``bad`` (a batch-shaped mask)."""
    return [xp.where(bad.reshape(bad.shape + (1,) * (o.ndim - bad.ndim)),
                     xp.asarray(complex(numpy.nan, numpy.nan) if o.dtype.kind == "c"
                                else numpy.nan, dtype=o.dtype), o) for o in outs]


def _each_or_nan(xp: Any, fn: Any, a: Any) -> list[Any]:
    try:
        return fn(a)
    except LinAlgError:
        pass
    batch = a.shape[:-2]
    flat = xp.reshape(a, (-1,) + a.shape[-2:])
    results = []
    for i in range(flat.shape[0]):
        try:
            results.append(fn(flat[i]))
        except LinAlgError:
            like = fn(xp.zeros_like(flat[i]))
            results.append([xp.full(o.shape, complex(numpy.nan, numpy.nan) if o.dtype.kind == "c"
                                    else numpy.nan, dtype=o.dtype) for o in like])
    return [xp.reshape(xp.stack([r[k] for r in results]), batch + results[0][k].shape)
            for k in range(len(results[0]))]


def _cholesky_or_nan(xp: Any, a: Any) -> Any:
    try:
        return xp.linalg.cholesky(a)
    except LinAlgError:
        return xp.zeros_like(a)  # a zero diagonal: marked as failed below


def _cholesky_impl(a: Any) -> list[Any]:
    # A matrix that is not positive definite (or holds NaN) gives NaN in its whole lower
    # triangle (zeros above), as JAX: traced code cannot catch an exception, so programs
    # test ``isnan(L).any()`` (Gaussian-process jitter). LAPACK stops at the first pivot
    # that is not > 0 and leaves it on the diagonal (NumPy raises; CuPy returns it), so a
    # diagonal that is not all > 0 marks a failed factorisation on every backend.
    xp = xp_for(a)
    try:
        low = xp.linalg.cholesky(a)
    except LinAlgError:
        low = _each_matrix(xp, lambda m: _cholesky_or_nan(xp, m), a)
    diag = xp.diagonal(low, axis1=-2, axis2=-1).real
    ok = xp.all(diag > 0, axis=-1)[..., None, None]
    n = a.shape[-1]
    nan = complex(numpy.nan, numpy.nan) if a.dtype.kind == "c" else numpy.nan
    nan_low = xp.where(xp.tri(n, dtype=bool), xp.asarray(nan, dtype=a.dtype), 0).astype(a.dtype)
    return [xp.where(ok, low, nan_low)]


cholesky_p = make_primitive("cholesky", _cholesky_impl, _cholesky_abstract)


def cholesky(a: Any) -> Any:
    """Lower Cholesky factor ``L`` of Hermitian positive-definite ``a`` (``a = L L^H``).

    Only the lower triangle of ``a`` is read. Stacks of matrices work.

    Example:
        >>> import numpy as np
        >>> cholesky(np.array([[9.0, 0.0], [3.0, 5.0]]))
        array([[3., 0.],
               [1., 2.]])
    """
    return bind1(cholesky_p, a)


def _cholesky_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    low = cholesky(a)
    if type(da) is Zero:
        return [low], [Zero.from_primal(low)]
    s = _hermitian_part(da)
    x = triangular_solve(low, s, lower=True)  # L^-1 S
    m = _H(triangular_solve(low, _H(x), lower=True))  # L^-1 S L^-H
    n = get_aval(a).shape[-1]
    phi = _ew.mul(m, _const(m, numpy.tri(n, n, -1) + 0.5 * numpy.eye(n)))
    return [low], [_mm(low, phi)]


jvp_rules[cholesky_p] = _cholesky_jvp
_batch_front(cholesky_p)

# =============================================================================================
# triangular_solve: op(A) X = B with A triangular; linear in B


def _ts_abstract(a: ShapedArray, b: ShapedArray, *, lower: bool, transpose_a: bool,
                 conjugate_a: bool, unit_diagonal: bool) -> list[ShapedArray]:
    check_static("triangular_solve", lower=lower, transpose_a=transpose_a,
                 conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    _check_square("triangular_solve", a)
    _check_rhs("triangular_solve", a, b)
    dt = linalg_dtype("triangular_solve", a, b)
    return [ShapedArray(b.shape, dt, False, result_device("triangular_solve", a, b))]


def _ts_impl(a: Any, b: Any, *, lower: bool, transpose_a: bool, conjugate_a: bool,
             unit_diagonal: bool) -> list[Any]:
    xp = xp_for(a, b, what="triangular_solve")
    k = (-1 if lower else 1) if unit_diagonal else 0
    t = xp.tril(a, k) if lower else xp.triu(a, k)
    if unit_diagonal:
        t = t + xp.eye(a.shape[-1], dtype=t.dtype)
    if conjugate_a:
        t = xp.conj(t)
    if transpose_a:
        t = xp.swapaxes(t, -1, -2)
    # NumPy has no triangular solver; LU on the triangle gives the same solution. A zero on
    # the diagonal gives substitution's inf/NaN (LAPACK trsm's, JAX's): NumPy raises there,
    # CuPy's LU does not, so the LU must not pivot: a lower triangle is solved as the upper
    # one of the reversed system (J T J)(J x) = J b, whose partial pivoting never swaps rows
    # (nothing below the diagonal), so LU's back substitution is trsm's on every backend.
    if lower != transpose_a:
        t, b = t[..., ::-1, ::-1], b[..., ::-1, :]
    try:
        x = xp.linalg.solve(t, b)
    except LinAlgError:

        def one(m: Any, r: Any) -> Any:
            try:
                return xp.linalg.solve(m, r)
            except LinAlgError:
                return _substitute(m, r, lower=False)

        x = _each_matrix(xp, one, t, b)
    return [x[..., ::-1, :] if lower != transpose_a else x]


triangular_solve_p = make_primitive("triangular_solve", _ts_impl, _ts_abstract)


def triangular_solve(a: Any, b: Any, *, lower: bool = True, transpose_a: bool = False,
                     conjugate_a: bool = False, unit_diagonal: bool = False) -> Any:
    """Solve ``op(T) X = b`` where ``T`` is the lower (or upper) triangle of ``a``.

    ``op`` transposes when ``transpose_a`` and conjugates when ``conjugate_a``;
    ``unit_diagonal`` takes the diagonal of ``T`` as ones (``a``'s is not read). ``b`` has
    shape ``(..., n, k)`` with ``a``'s batch dims. Linear in ``b``.

    Example:
        >>> import numpy as np
        >>> triangular_solve(np.array([[2.0, 0.0], [1.0, 1.0]]), np.array([[2.0], [3.0]]))
        array([[1.],
               [2.]])
    """
    return bind1(triangular_solve_p, a, b, lower=bool(lower), transpose_a=bool(transpose_a),
                 conjugate_a=bool(conjugate_a), unit_diagonal=bool(unit_diagonal))


def _ts_jvp(primals, tangents, **params):
    a, b = primals
    da, db = tangents
    x = bind1(triangular_solve_p, a, b, **params)
    rhs = None if type(db) is Zero else db
    if type(da) is not Zero:
        k = (-1 if params["lower"] else 1) if params["unit_diagonal"] else 0
        dt = _tril(da, k) if params["lower"] else _triu(da, k)
        if params["conjugate_a"] and _is_complex(dt):
            dt = _ew.conj(dt)
        if params["transpose_a"]:
            dt = _mT(dt)
        term = _ew.neg(_mm(dt, x))
        rhs = term if rhs is None else _ew.add(rhs, term)
    if rhs is None:
        return [x], [Zero.from_primal(x)]
    return [x], [bind1(triangular_solve_p, a, rhs, **params)]


def _ts_transpose(ct, a, b, **params):
    if is_undefined(a):
        raise ValueError("triangular_solve: transpose with respect to the matrix (not linear)")
    if type(ct) is Zero:
        return [None, Zero(b.aval)]
    flipped = dict(params, transpose_a=not params["transpose_a"])
    return [None, bind1(triangular_solve_p, a, ct, **flipped)]


jvp_rules[triangular_solve_p] = _ts_jvp
deftranspose(triangular_solve_p, _ts_transpose)
_batch_front(triangular_solve_p)

# =============================================================================================
# solve: A X = B; linear in B


def _solve_abstract(a: ShapedArray, b: ShapedArray) -> list[ShapedArray]:
    _check_square("solve", a)
    _check_rhs("solve", a, b)
    dt = linalg_dtype("solve", a, b)
    return [ShapedArray(b.shape, dt, False, result_device("solve", a, b))]


def _solve_impl(a: Any, b: Any) -> list[Any]:
    # A singular matrix gives inf/NaN (LU with its zero pivot, as JAX and CuPy) instead of
    # NumPy's LinAlgError: traced programs cannot catch exceptions, and every backend agrees.
    xp = xp_for(a, b, what="solve")
    try:
        return [xp.linalg.solve(a, b)]
    except LinAlgError:
        return [_each_matrix(xp, lambda m, r: _solve_or_substitute(xp, m, r), a, b)]


solve_p = make_primitive("solve", _solve_impl, _solve_abstract)


def solve(a: Any, b: Any) -> Any:
    """Solve ``a X = b`` for square ``a`` (..., n, n) and ``b`` (..., n, k), equal batch dims.

    Example:
        >>> import numpy as np
        >>> solve(np.array([[2.0, 0.0], [0.0, 4.0]]), np.array([[2.0], [2.0]]))
        array([[1. ],
               [0.5]])
    """
    return bind1(solve_p, a, b)


def _solve_jvp(primals, tangents):
    a, b = primals
    da, db = tangents
    x = solve(a, b)
    rhs = None if type(db) is Zero else db
    if type(da) is not Zero:
        term = _ew.neg(_mm(da, x))
        rhs = term if rhs is None else _ew.add(rhs, term)
    if rhs is None:
        return [x], [Zero.from_primal(x)]
    return [x], [solve(a, rhs)]


def _solve_transpose(ct, a, b):
    if is_undefined(a):
        raise ValueError("solve: transpose with respect to the matrix (not linear)")
    if type(ct) is Zero:
        return [None, Zero(b.aval)]
    # The real pairing <u, v> = Re(sum(u * v)) has no conjugation: plain transpose.
    return [None, solve(_mT(a), ct)]


jvp_rules[solve_p] = _solve_jvp
deftranspose(solve_p, _solve_transpose)
_batch_front(solve_p)

# =============================================================================================
# inv


def _inv_abstract(a: ShapedArray) -> list[ShapedArray]:
    _check_square("inv", a)
    return [ShapedArray(a.shape, linalg_dtype("inv", a), False, a.device)]


def _inv_impl(a: Any) -> list[Any]:
    # solve(a, I), as NumPy's inv computes it (LAPACK gesv), rather than xp.linalg.inv: CuPy's
    # inv factors a^T for a C-ordered matrix (and uses getri for stacks), so a singular matrix
    # gave other inf/NaN than LAPACK's (JAX's) values, which solve's LU of a gives everywhere.
    xp = xp_for(a)
    eye = xp.eye(a.shape[-1], dtype=a.dtype)
    if a.ndim > 2:   # a real array per matrix: CuPy's batched solve reshapes and writes b's like
        eye = xp.broadcast_to(eye, a.shape).copy()
    try:
        return [xp.linalg.solve(a, eye)]
    except LinAlgError:  # singular (NumPy raises): inf/NaN as solve (JAX's values)
        return [_each_matrix(xp, lambda m, e: _solve_or_substitute(xp, m, e), a, eye)]


inv_p = make_primitive("inv", _inv_impl, _inv_abstract)


def inv(a: Any) -> Any:
    """Inverse of each square matrix in ``a``.

    Example:
        >>> import numpy as np
        >>> inv(np.array([[2.0, 0.0], [0.0, 4.0]]))
        array([[0.5 , 0.  ],
               [0.  , 0.25]])
    """
    return bind1(inv_p, a)


def _inv_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    x = inv(a)
    if type(da) is Zero:
        return [x], [Zero.from_primal(x)]
    return [x], [_ew.neg(_mm(_mm(x, da), x))]


jvp_rules[inv_p] = _inv_jvp
_batch_front(inv_p)

# =============================================================================================
# det and slogdet


def _det_abstract(a: ShapedArray) -> list[ShapedArray]:
    _check_square("det", a)
    return [ShapedArray(a.shape[:-2], linalg_dtype("det", a), False, a.device)]


def _det_impl(a: Any) -> list[Any]:
    return [xp_for(a).asarray(xp_for(a).linalg.det(a))]


det_p = make_primitive("det", _det_impl, _det_abstract)


def det(a: Any) -> Any:
    """Determinant of each square matrix in ``a``.

    Example:
        >>> import numpy as np
        >>> round(float(det(np.array([[2.0, 1.0], [1.0, 3.0]]))), 12)
        5.0
    """
    return bind1(det_p, a)


def _log_det_tangent(a: Any, da: Any) -> Any:
    """``trace(solve(a, da))``: the tangent of ``log det a``."""
    return _trace(solve(a, da))


def _adjugate_by_svd(a: Any) -> Any:
    """``adj(a)`` (``det(a) inv(a)`` where that exists) for any square ``a``, singular ones
    included: with ``a = U diag(s) V^H``, ``adj(a) = det(U) det(V^H) V diag(p) U^H`` where
    ``p_i`` is the product of the other singular values (no division)."""
    u, s, vh = svd(a)
    nd = get_aval(s).ndim
    p = _red.products_of_others(s, nd - 1)
    if _is_complex(a):
        p = _ew.complex(p, _ew.mul(p, 0.0))
    phase = _ew.mul(det(u), det(vh))
    adj = _mm(_ew.mul(_H(vh), _row(p)), _H(u))
    return _ew.mul(adj, _shape.expand_dims(phase, (nd - 1, nd)))


def _det_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    d = det(a)
    if type(da) is Zero:
        return [d], [Zero.from_primal(d)]
    # At an exactly singular matrix det(a) * trace(solve(a, da)) is 0 * inf; the derivative
    # is trace(adj(a) da) there (nonzero for rank n - 1), which the SVD gives (JAX uses an LU
    # cofactor solve, which gives 0 when the zero pivot is not the last one). The identity
    # stands in for a singular matrix in the solve, so that neither branch (nor its
    # transpose, which reverse mode runs with a zero cotangent) makes NaN.
    shape = get_aval(a).shape
    singular = _ew.eq(d, 0)
    a_regular = _ew.select_n(_shape.broadcast_to(_col(_col(singular)), shape), a,
                             _shape.broadcast_to(_eye(a), shape))
    regular = _ew.mul(d, _log_det_tangent(a_regular, da))
    at_singular = _trace(_mm(_adjugate_by_svd(a), da))
    return [d], [_ew.select_n(singular, regular, at_singular)]


jvp_rules[det_p] = _det_jvp
_batch_front(det_p)


def _slogdet_abstract(a: ShapedArray) -> list[ShapedArray]:
    _check_square("slogdet", a)
    dt = linalg_dtype("slogdet", a)
    shape = a.shape[:-2]
    return [ShapedArray(shape, dt, False, a.device),
            ShapedArray(shape, _real_dtype(dt), False, a.device)]


def _slogdet_impl(a: Any) -> list[Any]:
    xp = xp_for(a)
    sign, logabsdet = xp.linalg.slogdet(a)
    return [xp.asarray(sign), xp.asarray(logabsdet)]


slogdet_p = make_primitive("slogdet", _slogdet_impl, _slogdet_abstract, multiple_results=True)


def slogdet(a: Any) -> tuple[Any, Any]:
    """``(sign, log|det a|)`` of each square matrix, without overflow.

    Example:
        >>> import numpy as np
        >>> sign, logabs = slogdet(np.array([[0.0, 2.0], [3.0, 0.0]]))
        >>> float(sign), round(float(logabs), 6)
        (-1.0, 1.791759)
    """
    sign, logabs = bind(slogdet_p, a)
    return sign, logabs


def _slogdet_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    sign, logabs = slogdet(a)
    if type(da) is Zero:
        return [sign, logabs], [Zero.from_primal(sign), Zero.from_primal(logabs)]
    t = _log_det_tangent(a, da)
    if not _is_complex(t):
        return [sign, logabs], [Zero.from_primal(sign), t]
    # sign = det/|det|: it turns by the imaginary part of d log det.
    dsign = _ew.mul(sign, _ew.complex(_ew.mul(_ew.imag(t), 0.0), _ew.imag(t)))
    return [sign, logabs], [dsign, _ew.real(t)]


jvp_rules[slogdet_p] = _slogdet_jvp
_batch_front(slogdet_p)

# =============================================================================================
# eigh and eigvalsh: Hermitian eigendecomposition (ascending eigenvalues)


def _eigh_avals(name: str, a: ShapedArray, lower: bool) -> tuple[ShapedArray, ShapedArray]:
    check_static(name, lower=lower)
    _check_square(name, a)
    dt = linalg_dtype(name, a)
    w = ShapedArray(a.shape[:-1], _real_dtype(dt), False, a.device)
    return w, ShapedArray(a.shape, dt, False, a.device)


def _nan_for_nan_input(xp: Any, a: Any, lower: bool, outs: list[Any]) -> list[Any]:
    """NaN results for each matrix whose read triangle holds a NaN: LAPACK's ``syevd`` returns
    finite, wrong eigenvalues for some (``[[nan, 1], [1, 2]]`` gives +-sqrt(2)), silently."""
    tri = xp.tril(a) if lower else xp.triu(a)
    return _nan_where(xp, xp.any(xp.isnan(tri), axis=(-2, -1)), outs)


def _eigh_impl(a: Any, *, lower: bool) -> list[Any]:
    xp = xp_for(a)
    w, v = xp.linalg.eigh(a, UPLO="L" if lower else "U")
    return _nan_for_nan_input(xp, a, lower, [w, v])


eigh_p = make_primitive("eigh", _eigh_impl, lambda a, *, lower: list(_eigh_avals("eigh", a, lower)),
                        multiple_results=True)


def eigh(a: Any, *, lower: bool = True) -> tuple[Any, Any]:
    """Eigenvalues (ascending) and eigenvectors (columns) of Hermitian ``a``.

    Only the lower (``lower=True``) or upper triangle is read, as LAPACK does.

    Example:
        >>> import numpy as np
        >>> w, v = eigh(np.array([[2.0, 1.0], [1.0, 2.0]]))
        >>> w
        array([1., 3.])
    """
    w, v = bind(eigh_p, a, lower=bool(lower))
    return w, v


def _eig_gaps_inverse(w: Any) -> Any:
    """``F[..., i, j] = 1 / (w_j - w_i)``, and 0 where ``w_i == w_j`` (diagonal included)."""
    return _safe_reciprocal(_ew.sub(_row(w), _col(w)))


def _eigh_jvp(primals, tangents, *, lower):
    (a,), (da,) = primals, tangents
    w, v = eigh(a, lower=lower)
    if type(da) is Zero:
        return [w, v], [Zero.from_primal(w), Zero.from_primal(v)]
    s = _hermitian_part(da)
    vdv = _mm(_H(v), _mm(s, v))
    dw = _diag(vdv)
    if _is_complex(dw):
        dw = _ew.real(dw)
    dv = _mm(v, _ew.mul(_eig_gaps_inverse(w), vdv))
    return [w, v], [dw, dv]


jvp_rules[eigh_p] = _eigh_jvp
_batch_front(eigh_p)


def _eigvalsh_impl(a: Any, *, lower: bool) -> list[Any]:
    xp = xp_for(a)
    return _nan_for_nan_input(xp, a, lower, [xp.linalg.eigvalsh(a, UPLO="L" if lower else "U")])


eigvalsh_p = make_primitive(
    "eigvalsh", _eigvalsh_impl, lambda a, *, lower: [_eigh_avals("eigvalsh", a, lower)[0]]
)


def eigvalsh(a: Any, *, lower: bool = True) -> Any:
    """Eigenvalues (ascending) of Hermitian ``a``, reading one triangle.

    Example:
        >>> import numpy as np
        >>> eigvalsh(np.array([[2.0, 1.0], [1.0, 2.0]]))
        array([1., 3.])
    """
    return bind1(eigvalsh_p, a, lower=bool(lower))


def _eigvalsh_jvp(primals, tangents, *, lower):
    (a,), (da,) = primals, tangents
    w = eigvalsh(a, lower=lower)
    if type(da) is Zero:
        return [w], [Zero.from_primal(w)]
    _, v = eigh(a, lower=lower)
    s = _hermitian_part(da)
    nd = get_aval(v).ndim
    prod = _ew.mul(_ew.conj(v) if _is_complex(v) else v, _mm(s, v))
    dw = _red.reduce_sum(prod, (nd - 2,))
    if _is_complex(dw):
        dw = _ew.real(dw)
    return [w], [dw]


jvp_rules[eigvalsh_p] = _eigvalsh_jvp
_batch_front(eigvalsh_p)

# =============================================================================================
# eig and eigvals: general (non-Hermitian) eigendecomposition, complex results


def _complex_dtype(dt: numpy.dtype) -> numpy.dtype:
    if dt.kind == "c":
        return dt
    return numpy.dtype(numpy.complex64 if dt == numpy.float32 else numpy.complex128)


def _eig_abstract(a: ShapedArray, *, compute_eigenvectors: bool) -> list[ShapedArray]:
    check_static("eig", compute_eigenvectors=compute_eigenvectors)
    _check_square("eig", a)
    cdt = _complex_dtype(linalg_dtype("eig", a))
    w = ShapedArray(a.shape[:-1], cdt, False, a.device)
    if not compute_eigenvectors:
        return [w]
    return [w, ShapedArray(a.shape, cdt, False, a.device)]


def _eig_impl(a: Any, *, compute_eigenvectors: bool) -> list[Any]:
    xp = xp_for(a)
    if hasattr(xp.linalg, "eig"):
        # NaN or inf input: NaN results (JAX's) where NumPy raises
        return _nan_where_failing(xp, lambda m: _eig_with(xp.linalg, m, compute_eigenvectors), a)
    # An array module without a general eigensolver (CuPy releases with only eigh): the
    # host's LAPACK computes it and the results go back to the matrix's device, as JAX does
    # on GPU.
    device = device_of(a)
    host = xp_for_device("cpu")
    outs = _nan_where_failing(host, lambda m: _eig_with(host.linalg, m, compute_eigenvectors),
                              to_numpy(a))
    return [device_put(o, device) for o in outs]


def _eig_with(linalg: Any, a: Any, compute_eigenvectors: bool) -> list[Any]:
    # LAPACK returns real arrays when every eigenvalue is real; the result type here must not
    # depend on the values (it is fixed before they are known under jit), so always complex.
    cdt = _complex_dtype(a.dtype)
    if not compute_eigenvectors:
        return [linalg.eigvals(a).astype(cdt, copy=False)]
    w, v = linalg.eig(a)
    return [w.astype(cdt, copy=False), v.astype(cdt, copy=False)]


eig_p = make_primitive("eig", _eig_impl, _eig_abstract, multiple_results=True)


def eig(a: Any) -> tuple[Any, Any]:
    """Eigenvalues and right eigenvectors (columns) of general square ``a``, always complex.

    Eigenvectors have unit 2-norm, as LAPACK returns them; eigenvalues are in LAPACK's order.

    Example:
        >>> import numpy as np
        >>> w, v = eig(np.array([[2.0, 0.0], [0.0, 3.0]]))
        >>> w
        array([2.+0.j, 3.+0.j])
    """
    w, v = bind(eig_p, a, compute_eigenvectors=True)
    return w, v


def eigvals(a: Any) -> Any:
    """Eigenvalues of general square ``a`` (complex), without computing eigenvectors.

    Example:
        >>> import numpy as np
        >>> eigvals(np.array([[0.0, 1.0], [-1.0, 0.0]]))
        array([0.+1.j, 0.-1.j])
    """
    return bind1(eig_p, a, compute_eigenvectors=False)


def _pick_rows(onehot: Any, x: Any) -> Any:
    """``x[..., k_j, j]`` for each column ``j``, where ``onehot[..., :, j]`` marks row ``k_j``."""
    return _red.reduce_sum(_ew.mul(onehot, x), (get_aval(x).ndim - 2,))


def _eig_jvp(primals, tangents, *, compute_eigenvectors):
    (a,), (da,) = primals, tangents
    if type(da) is Zero:
        outs = bind(eig_p, a, compute_eigenvectors=compute_eigenvectors)
        return outs, [Zero.from_primal(o) for o in outs]
    # The eigenvalues come from the same call as the eigenvectors, so that the two pair up
    # (LAPACK's eigenvalues-only path need not order them identically to the last bit).
    w, v = bind(eig_p, a, compute_eigenvectors=True)
    cdt = get_aval(v).dtype
    m = solve(v, _mm(_ew.convert_element_type(da, cdt), v))  # V^-1 dA V
    dw = _diag(m)
    if not compute_eigenvectors:
        return [w], [dw]
    du = _mm(v, _ew.mul(_eig_gaps_inverse(w), m))
    nd = get_aval(v).ndim
    # Each column's free multiple c_j of v_j is fixed by LAPACK's normalisation: unit 2-norm
    # (Re(v_j^H dv_j) = 0) and a fixed phase of the largest-magnitude component k_j
    # (Im(dv_kj / v_kj) = 0). Adding c_j v_j leaves the eigen-equation satisfied.
    re_vh_du = _ew.real(_red.reduce_sum(_ew.mul(_ew.conj(v), du), (nd - 2,)))
    n = get_aval(v).shape[-1]
    k = _red.argmax(_ew.real(_ew.mul(_ew.conj(v), v)), nd - 2)
    rows = _xp_of(v).asarray(numpy.arange(n, dtype=get_aval(k).dtype).reshape(n, 1))
    onehot = _ew.convert_element_type(_ew.eq(rows, _row(k)), cdt)
    phase = _ew.imag(_ew.div(_pick_rows(onehot, du), _pick_rows(onehot, v)))
    c = _ew.complex(_ew.neg(re_vh_du), _ew.neg(phase))
    dv = _ew.add(du, _ew.mul(v, _row(c)))
    return [w, v], [dw, dv]


jvp_rules[eig_p] = _eig_jvp
_batch_front(eig_p)

# =============================================================================================
# svd


def _svd_abstract(a: ShapedArray, *, full_matrices: bool, compute_uv: bool):
    check_static("svd", full_matrices=full_matrices, compute_uv=compute_uv)
    m, n = _check_matrix("svd", a)
    dt = linalg_dtype("svd", a)
    k = min(m, n)
    batch = a.shape[:-2]
    s = ShapedArray(batch + (k,), _real_dtype(dt), False, a.device)
    if not compute_uv:
        return [s]
    ku, kv = (m, n) if full_matrices else (k, k)
    return [ShapedArray(batch + (m, ku), dt, False, a.device), s,
            ShapedArray(batch + (kv, n), dt, False, a.device)]


def _svd_impl(a: Any, *, full_matrices: bool, compute_uv: bool) -> list[Any]:
    xp = xp_for(a)

    def one(m: Any) -> list[Any]:
        if not compute_uv:
            return [xp.linalg.svd(m, compute_uv=False)]
        u, s, vh = xp.linalg.svd(m, full_matrices=full_matrices)
        return [u, s, vh]

    # NaN or inf input (no convergence): NaN results (JAX's) where NumPy raises
    return _nan_where_failing(xp, one, a)


svd_p = make_primitive("svd", _svd_impl, _svd_abstract, multiple_results=True)


def svd(a: Any, *, full_matrices: bool = False, compute_uv: bool = True) -> Any:
    """Singular value decomposition ``a = u @ diag(s) @ vh`` (``s`` descending).

    Returns ``(u, s, vh)``, or ``s`` alone when ``compute_uv=False``. Derivatives need
    ``full_matrices=False`` unless ``a`` is square.

    Example:
        >>> import numpy as np
        >>> svd(np.array([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False)
        array([4., 3.])
    """
    outs = bind(svd_p, a, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))
    return tuple(outs) if compute_uv else outs[0]


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv):
    (a,), (da,) = primals, tangents
    outs = bind(svd_p, a, full_matrices=full_matrices, compute_uv=compute_uv)
    if type(da) is Zero:
        return outs, [Zero.from_primal(o) for o in outs]
    m, n = get_aval(a).shape[-2:]
    if compute_uv and full_matrices and m != n:
        raise NonDifferentiableError(
            f"svd: derivatives of full_matrices=True are not defined for non-square matrices "
            f"({get_aval(a).str_short()}): the extra singular vectors are arbitrary. Use "
            "full_matrices=False."
        )
    u, s, vh = (outs if compute_uv and not full_matrices
                else bind(svd_p, a, full_matrices=False, compute_uv=True))
    v, uh = _H(vh), _H(u)
    ds_mat = _mm(uh, _mm(da, v))
    ds = _diag(ds_mat)
    if _is_complex(ds):
        ds = _ew.real(ds)
    if not compute_uv:
        return outs, [ds]
    s_row, s_col = _row(s), _col(s)
    f = _safe_reciprocal(_ew.mul(_ew.add(s_row, s_col), _ew.sub(s_row, s_col)))
    dss = _ew.mul(ds_mat, s_row)
    sds = _ew.mul(s_col, ds_mat)
    inv_s_row = _row(_safe_reciprocal(s))
    du_inner = _ew.mul(f, _ew.add(dss, _H(dss)))
    if _is_complex(ds_mat):
        # The phase freedom of each singular pair, fixed as LAPACK does (real diagonal).
        skew = _ew.mul(_ew.sub(ds_mat, _H(ds_mat)), 0.5)
        du_inner = _ew.add(du_inner, _ew.mul(_ew.mul(skew, _eye(skew)), inv_s_row))
    du = _mm(u, du_inner)
    dv = _mm(v, _ew.mul(f, _ew.add(sds, _H(sds))))
    if m > n:
        dav = _mm(da, v)
        du = _ew.add(du, _ew.mul(_ew.sub(dav, _mm(u, _mm(uh, dav))), inv_s_row))
    if n > m:
        dahu = _mm(_H(da), u)
        dv = _ew.add(dv, _ew.mul(_ew.sub(dahu, _mm(v, _mm(vh, dahu))), inv_s_row))
    return [u, s, vh], [du, ds, _H(dv)]


jvp_rules[svd_p] = _svd_jvp
_batch_front(svd_p)

# =============================================================================================
# qr

_QR_MODES = ("reduced", "complete", "r", "raw")


def _qr_abstract(a: ShapedArray, *, mode: str) -> list[ShapedArray]:
    check_static("qr", mode=mode)
    if mode not in _QR_MODES:
        raise ValueError(f"qr: mode must be one of {_QR_MODES}, got {mode!r}")
    m, n = _check_matrix("qr", a)
    dt = linalg_dtype("qr", a)
    k = min(m, n)
    batch = a.shape[:-2]
    if mode == "raw":  # NumPy's (h, tau): h is LAPACK's column-major factor, transposed
        return [ShapedArray(batch + (n, m), dt, False, a.device),
                ShapedArray(batch + (k,), dt, False, a.device)]
    kq = m if mode == "complete" else k
    r = ShapedArray(batch + (kq, n), dt, False, a.device)
    if mode == "r":
        return [ShapedArray(batch + (k, n), dt, False, a.device)]
    return [ShapedArray(batch + (m, kq), dt, False, a.device), r]


def _householder_qr_raw(a: Any) -> list[Any]:
    """LAPACK's ``geqrf`` (unblocked ``geqr2``/``larfg``, without its rescaling of tiny
    norms) with the array module's own operations, for a module whose ``qr`` has no
    ``mode='raw'``: ``[h, tau]`` as NumPy returns them, over any leading batch axes.

    Column ``i``'s reflector ``H_i = I - tau_i v v^H`` (``v[i] = 1``) maps ``(alpha, x)`` to
    ``(beta, 0)`` with ``beta = -sign(Re alpha) * |(alpha, x)|``; it is stored below the
    diagonal as ``x / (alpha - beta)``, and ``tau_i = 0`` (``H_i = I``) when ``x = 0`` and
    ``alpha`` is real."""
    xp = xp_for(a)
    f = a.copy()
    m, n = f.shape[-2:]
    k = min(m, n)
    cplx = f.dtype.kind == "c"
    tau = xp.zeros(f.shape[:-2] + (k,), dtype=f.dtype)
    for i in range(k):
        alpha = f[..., i, i]
        x = f[..., i + 1:, i]
        xnorm2 = xp.sum(xp.real(x * xp.conj(x)) if cplx else x * x, axis=-1)
        ar, ai = (xp.real(alpha), xp.imag(alpha)) if cplx else (alpha, 0 * alpha)
        keep = (xnorm2 == 0) & (ai == 0)
        beta = -xp.copysign(xp.sqrt(ar * ar + ai * ai + xnorm2), ar)
        safe_beta = xp.where(keep, 1, beta)
        t = (beta - alpha) / safe_beta
        denom = xp.where(keep, 1, alpha - beta)
        v = x / denom[..., None]
        tau[..., i] = xp.where(keep, 0, t)
        f[..., i, i] = xp.where(keep, alpha, beta)
        f[..., i + 1:, i] = xp.where(keep[..., None], x, v)
        if i + 1 < n:
            # Apply H_i^H = I - conj(tau) v v^H to the trailing columns.
            vv = xp.concatenate([xp.ones_like(alpha)[..., None], f[..., i + 1:, i]], axis=-1)
            sub = f[..., i:, i + 1:]
            w = xp.sum(xp.conj(vv)[..., :, None] * sub, axis=-2)
            ct = xp.conj(tau[..., i]) if cplx else tau[..., i]
            f[..., i:, i + 1:] = sub - (ct[..., None, None] * vv[..., :, None]
                                        * w[..., None, :])
    return [xp.swapaxes(f, -1, -2), tau]


def _qr_impl(a: Any, *, mode: str) -> list[Any]:
    xp = xp_for(a)
    linalg = xp.linalg
    if mode == "raw":
        if is_numpy_like(xp):  # NumPy's raw mode (stacks included) is LAPACK's geqrf
            h, tau = linalg.qr(a, mode="raw")
            return [h, tau]
        # Other array modules: the same reflectors built with the module's own operations
        # (CuPy's raw mode takes no stacks).
        return _householder_qr_raw(a)
    out = linalg.qr(a, mode=mode)
    if mode == "r":
        return [out]
    q, r = out
    return [q, r]


qr_p = make_primitive("qr", _qr_impl, _qr_abstract, multiple_results=True)


def qr(a: Any, *, mode: str = "reduced") -> Any:
    """QR decomposition ``a = q @ r``: ``(q, r)`` for modes "reduced"/"complete", ``r`` for "r",
    and for "raw" NumPy's ``(h, tau)``: LAPACK ``geqrf``'s Householder reflectors (below the
    diagonal, ``r`` on and above it, of ``h``'s transpose) and their scalings. "raw" is not
    differentiable.

    Example:
        >>> import numpy as np
        >>> q, r = qr(np.array([[3.0], [4.0]]))
        >>> np.allclose(q @ r, [[3.0], [4.0]])
        True
        >>> h, tau = qr(np.array([[3.0], [4.0]]), mode="raw")
        >>> h, tau
        (array([[-5. ,  0.5]]), array([1.6]))
    """
    outs = bind(qr_p, a, mode=mode)
    return outs[0] if mode == "r" else tuple(outs)


def _qr_square_jvp(q: Any, r: Any, x_dot: Any) -> tuple[Any, Any]:
    """Tangents of the reduced QR of a tall (or square) matrix with factors ``q``, ``r``."""
    b = _right_solve_upper(r, x_dot)  # dA R^-1
    c = _mm(_H(q), b)
    low = _tril(c, -1)
    omega = _ew.sub(low, _H(low))
    if _is_complex(c):
        # LAPACK's R has a real diagonal: the phase of each column goes into Q.
        im_diag = _ew.mul(_ew.complex(_ew.mul(_ew.imag(c), 0.0), _ew.imag(c)), _eye(c))
        omega = _ew.add(omega, im_diag)
    c_minus = _ew.sub(c, omega)
    dq = _ew.sub(b, _mm(q, c_minus))
    dr = _mm(c_minus, r)
    return dq, dr


def _qr_complete_tall_jvp(q: Any, r: Any, da: Any) -> tuple[Any, Any]:
    """Tangents of the complete QR of a tall ``(m, n)`` matrix, as JAX's rule (Roberts and
    Roberts, arXiv:2409.13374): the last ``m - n`` columns of a Householder QR's ``q`` are a
    function of the first ``n`` (``Q = I - V T V^H``), ``Z = Q_pn (Q_nn - I)^-1`` and
    ``dQ_mp = dQ_mn Z^H - (Q_mn + Q_mp Z) (dQ_pn - Z dQ_nn)^H``; ``R``'s zero rows stay zero.
    NaN where ``Q_nn - I`` is singular, as JAX."""
    nd = get_aval(q).ndim
    m, n = get_aval(r).shape[-2:]
    q_mn = _shape.slice_in_dim(q, 0, n, axis=nd - 1)
    q_mp = _shape.slice_in_dim(q, n, m, axis=nd - 1)
    r_nn = _shape.slice_in_dim(r, 0, n, axis=nd - 2)
    dq_mn, dr_nn = _qr_square_jvp(q_mn, r_nn, da)
    q_nn = _shape.slice_in_dim(q_mn, 0, n, axis=nd - 2)
    q_pn = _shape.slice_in_dim(q_mn, n, m, axis=nd - 2)
    dq_nn = _shape.slice_in_dim(dq_mn, 0, n, axis=nd - 2)
    dq_pn = _shape.slice_in_dim(dq_mn, n, m, axis=nd - 2)
    z_h = solve(_H(_ew.sub(q_nn, _eye(q_nn))), _H(q_pn))          # Z^H, (n, m - n)
    z = _H(z_h)
    dq_mp = _ew.sub(_mm(dq_mn, z_h),
                    _mm(_ew.add(q_mn, _mm(q_mp, z)), _H(_ew.sub(dq_pn, _mm(z, dq_nn)))))
    dq = _shape.concatenate([dq_mn, dq_mp], nd - 1)
    zero_rows = _ew.mul(_shape.slice_in_dim(r, n, m, axis=nd - 2), 0.0)
    dr = _shape.concatenate([dr_nn, zero_rows], nd - 2)
    return dq, dr


def _qr_jvp(primals, tangents, *, mode):
    (a,), (da,) = primals, tangents
    outs = bind(qr_p, a, mode=mode)
    if type(da) is Zero:
        return outs, [Zero.from_primal(o) for o in outs]
    m, n = get_aval(a).shape[-2:]
    if mode == "raw":
        raise NonDifferentiableError(
            f"qr: mode='raw' is not differentiable ({get_aval(a).str_short()}): LAPACK's "
            "Householder reflectors (h, tau) have no derivative that NumPy or JAX define. "
            "Differentiate through mode='reduced' (or 'r') instead."
        )
    if mode == "complete" and m > n:
        return outs, list(_qr_complete_tall_jvp(outs[0], outs[1], da))
    q, r = outs if mode != "r" else bind(qr_p, a, mode="reduced")
    if m >= n:
        dq, dr = _qr_square_jvp(q, r, da)
    else:
        # a = [X | Y] with X square: q, r[:, :m] come from X; r[:, m:] = q^H Y.
        nd = get_aval(a).ndim
        x_dot = _shape.slice_in_dim(da, 0, m, axis=nd - 1)
        y_dot = _shape.slice_in_dim(da, m, n, axis=nd - 1)
        y = _shape.slice_in_dim(a, m, n, axis=nd - 1)
        r_x = _shape.slice_in_dim(r, 0, m, axis=nd - 1)
        dq, dr_x = _qr_square_jvp(q, r_x, x_dot)
        dr_y = _ew.add(_mm(_H(dq), y), _mm(_H(q), y_dot))
        dr = _shape.concatenate([dr_x, dr_y], nd - 1)
    if mode == "r":
        return outs, [dr]
    return outs, [dq, dr]


jvp_rules[qr_p] = _qr_jvp
_batch_front(qr_p)
