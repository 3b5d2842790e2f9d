"""Linear solves of funcgrad.scipy.linalg: solve, solve_triangular, lu_solve, cho_solve, inv,
det (SciPy's signatures; see docs/scipy.md)."""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.backend import to_numpy
from funcgrad.core import Tracer
from funcgrad.errors import LinAlgShapeError
from funcgrad.lax import stop_gradient
from funcgrad.ops import linalg_decomp as _ld
from funcgrad.scipy.linalg._decomp import _hermitian_from
from funcgrad.scipy.linalg._util import (
    as_inexact,
    check_square,
    const_like,
    is_complex,
    mH,
    solve_with,
)

__all__ = ["solve", "solve_triangular", "lu_solve", "cho_solve", "inv", "det"]

_TRANS = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2}


def _trans(name: str, trans: Any) -> int:
    try:
        return _TRANS[trans]
    except (KeyError, TypeError):
        raise ValueError(f"{name}: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}") from None


def _tri_solve(a: Any, b: Any, lower: bool, trans: int, unit_diagonal: bool) -> Any:
    return _ld.triangular_solve(a, b, lower=lower, transpose_a=trans != 0,
                                conjugate_a=trans == 2 and is_complex(a),
                                unit_diagonal=unit_diagonal)


def solve_triangular(a: Any, b: Any, trans: Any = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False,
                     check_finite: bool = True, *, debug: Any = None) -> Any:
    """Solve ``op(a) x = b`` reading only the ``lower`` (else upper) triangle of ``a``;
    ``op`` is ``trans``: 0/``'N'`` none, 1/``'T'`` transpose, 2/``'C'`` conjugate transpose.
    ``unit_diagonal`` takes ``a``'s diagonal as ones. ``b`` is ``(n,)`` or ``(..., n, k)``.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> a = np.array([[2.0, 0.0], [1.0, 1.0]])
        >>> fsl.solve_triangular(a, np.array([2.0, 3.0]), lower=True)
        array([1., 2.])
    """
    t = _trans("solve_triangular", trans)
    return solve_with("solve_triangular", a, b,
                      lambda a, b: _tri_solve(a, b, bool(lower), t, bool(unit_diagonal)))


def _perm_from_pivots(piv: Any, m: int) -> Any:
    """LAPACK's row interchanges ``piv (..., k)`` as a permutation ``perm (..., m)``:
    ``a[perm] = l @ u``. Written with array operations, so traced pivots work."""
    piv = fnp.asarray(piv).astype(numpy.int32)
    k = get_aval(piv).shape[-1]
    idx = const_like(piv, numpy.arange(m, dtype=numpy.int32))
    perm = fnp.broadcast_to(idx, get_aval(piv).shape[:-1] + (m,))
    for j in range(k):
        pj = piv[..., j:j + 1]
        at_j = perm[..., j:j + 1]
        at_p = fnp.take_along_axis(perm, pj, axis=-1)
        perm = fnp.where(idx == j, at_p, fnp.where(idx == pj, at_j, perm))
    return perm


def lu_solve(lu_and_piv: tuple[Any, Any], b: Any, trans: Any = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Any:
    """Solve ``op(a) x = b`` given ``(lu, piv) = lu_factor(a)``; ``trans`` as in
    :func:`solve_triangular`.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
        >>> fsl.lu_solve(fsl.lu_factor(a), np.array([5.0, 11.0]))
        array([1., 2.])
    """
    t = _trans("lu_solve", trans)
    lu_, piv = lu_and_piv
    lu_ = as_inexact(lu_)
    n = check_square("lu_solve", lu_, "lu")
    if get_aval(fnp.asarray(piv)).shape[-1:] != (n,):
        raise LinAlgShapeError(f"lu_solve: piv must have {n} entries in its last dimension, "
                               f"got shape {get_aval(fnp.asarray(piv)).shape}")
    perm = _perm_from_pivots(piv, n)

    def solver(lu_, b):
        p = fnp.broadcast_to(perm, get_aval(lu_).shape[:-1])
        if t == 0:  # L U x = b[perm]
            pb = fnp.take_along_axis(b, p[..., :, None], axis=-2)
            y = _tri_solve(lu_, pb, True, 0, True)
            return _tri_solve(lu_, y, False, 0, False)
        # U^T L^T (P^T x) = b
        z = _tri_solve(lu_, b, False, t, False)
        w = _tri_solve(lu_, z, True, t, True)
        inv_p = fnp.argsort(p, axis=-1)
        return fnp.take_along_axis(w, inv_p[..., :, None], axis=-2)

    return solve_with("lu_solve", lu_, b, solver)


def _one_flag(name: str, lower: Any) -> bool:
    """``cho_factor``'s ``lower``: a bool, or SciPy's one flag per matrix of a stack (all
    equal: the factor's triangle is chosen once)."""
    if isinstance(lower, Tracer):
        raise TypeError(f"{name}: the lower flag must be a bool (or a NumPy array of bools), "
                        "not a traced value")
    flags = numpy.unique(to_numpy(lower) if hasattr(lower, "shape") else numpy.asarray(lower))
    if flags.size > 1:
        raise ValueError(f"{name}: the lower flags of a stack must all be equal, got both "
                         "True and False")
    return bool(flags[0]) if flags.size else False


def cho_solve(c_and_lower: tuple[Any, bool], b: Any, overwrite_b: bool = False,
              check_finite: bool = True) -> Any:
    """Solve ``a x = b`` given ``(c, lower) = cho_factor(a)`` (only ``c``'s ``lower``, else
    upper, triangle is read).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> c = fsl.cho_factor(np.array([[4.0, 2.0], [2.0, 5.0]]))
        >>> fsl.cho_solve(c, np.array([6.0, 7.0]))
        array([1., 1.])
    """
    c, lower = c_and_lower
    lower = _one_flag("cho_solve", lower)

    def solver(c, b):
        if lower:  # L L^H x = b
            y = _tri_solve(c, b, True, 0, False)
            return _tri_solve(c, y, True, 2, False)
        y = _tri_solve(c, b, False, 2, False)  # U^H U x = b
        return _tri_solve(c, y, False, 0, False)

    return solve_with("cho_solve", c, b, solver)


_ASSUME = {"gen": "gen", "general": "gen", "sym": "sym", "symmetric": "sym", "her": "her",
           "hermitian": "her", "pos": "pos", "positive definite": "pos",
           "diagonal": "diagonal", "tridiagonal": "tridiagonal", "banded": "gen",
           "upper triangular": "upper", "lower triangular": "lower"}


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False,
          overwrite_b: bool = False, check_finite: bool = True, assume_a: Any = None,
          transposed: bool = False, *, debug: bool = False) -> Any:
    """Solve ``a x = b`` (``a^T x = b`` when ``transposed``) as ``scipy.linalg.solve``.

    ``assume_a``: ``"gen"`` (default, LU), ``"sym"``/``"her"`` (only the ``lower``, else
    upper, triangle of ``a`` is read), ``"pos"`` (Cholesky, one triangle),
    ``"diagonal"``, ``"tridiagonal"`` (only those entries are read), ``"banded"`` (as
    ``"gen"``), ``"upper triangular"``/``"lower triangular"``. ``b`` is ``(n,)`` or
    ``(..., n, k)``; batch dims broadcast. A singular ``a`` gives inf/NaN (JAX's values; SciPy raises).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.solve(np.array([[3.0, 1.0], [1.0, 2.0]]), np.array([9.0, 8.0]))
        array([2., 3.])
    """
    kind = _ASSUME.get("gen" if assume_a is None else assume_a)
    if kind is None:
        raise ValueError(f"solve: {assume_a!r} is not a recognized matrix structure")
    lower = bool(lower)

    def solver(a, b):
        if kind == "gen":
            return _ld.solve(fnp.swapaxes(a, -1, -2) if transposed else a, b)
        if kind in ("sym", "her", "pos"):
            if kind == "sym" and is_complex(a):  # complex symmetric: a = a^T, not a^H
                tri = fnp.tril(a, -1) if lower else fnp.triu(a, 1)
                value = tri + fnp.swapaxes(tri, -1, -2) + fnp.tril(fnp.triu(a))
                part = (a + fnp.swapaxes(a, -1, -2)) / 2
            else:
                value = _hermitian_from(a, lower)
                part = (a + mH(a)) / 2
            # The value reads one triangle (as LAPACK); the derivative is that of a function
            # of a symmetric matrix (the tangent's symmetric part), as cholesky/eigh.
            full = part + stop_gradient(value - part)
            if transposed:
                full = fnp.swapaxes(full, -1, -2)
            if kind == "pos":
                low = _ld.cholesky(full)
                y = _tri_solve(low, b, True, 0, False)
                return _tri_solve(low, y, True, 2, False)
            return _ld.solve(full, b)
        if kind == "diagonal":
            return b / fnp.diagonal(a, axis1=-2, axis2=-1)[..., :, None]
        if kind == "tridiagonal":
            n = get_aval(a).shape[-1]
            band = numpy.abs(numpy.subtract.outer(numpy.arange(n), numpy.arange(n))) <= 1
            full = a * const_like(a, band.astype(get_aval(a).dtype))
            return _ld.solve(fnp.swapaxes(full, -1, -2) if transposed else full, b)
        return _tri_solve(a, b, kind == "lower", 1 if transposed else 0, False)

    return solve_with("solve", a, b, solver)


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True, *,
        assume_a: Any = None, lower: bool = False) -> Any:
    """Inverse of each square matrix of ``a``; inf/NaN if singular (as JAX; SciPy raises).
    SciPy 1.17's ``assume_a`` (``"gen"``, ``"sym"``, ``"her"``, ``"pos"``, ``"diagonal"``,
    ``"upper triangular"``, ``"lower triangular"``; ``lower`` picks the triangle read for
    ``"sym"``/``"her"``/``"pos"``) solves ``a x = I`` with :func:`solve`'s structured solver.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.inv(np.array([[2.0, 0.0], [0.0, 4.0]]))
        array([[0.5 , 0.  ],
               [0.  , 0.25]])
        >>> fsl.inv(np.array([[4.0, 9.0], [2.0, 1.0]]), assume_a="upper triangular")
        array([[ 0.25, -2.25],
               [ 0.  ,  1.  ]])
    """
    a = as_inexact(a)
    n = check_square("inv", a)
    if assume_a is None or assume_a in ("gen", "general"):
        return fnp.linalg.inv(a)
    if _ASSUME.get(assume_a) in (None, "gen", "tridiagonal"):   # SciPy's inv has no banded
        raise ValueError(f"inv: {assume_a!r} is not a recognized matrix structure")
    eye = const_like(a, numpy.eye(n, dtype=get_aval(a).dtype))
    return solve(a, fnp.broadcast_to(eye, get_aval(a).shape), lower=lower, assume_a=assume_a)


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """Determinant of each square matrix of ``a`` (``(..., n, n)`` -> ``(...)``).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> float(fsl.det(np.array([[1.0, 2.0], [3.0, 4.0]])))
        -2.0000000000000004
    """
    a = as_inexact(a)
    check_square("det", a)
    return fnp.linalg.det(a)
