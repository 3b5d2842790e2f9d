"""SVD-based functions of funcgrad.scipy.linalg (SciPy's ``svdvals``, ``diagsvd``,
``null_space``, ``orth``, ``subspace_angles``, ``orthogonal_procrustes``), written with
funcgrad.numpy.linalg's ``svd``."""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.backend import to_numpy
from funcgrad.errors import LinAlgShapeError
from funcgrad.scipy.linalg._util import (
    as_inexact,
    check_matrix,
    host_value,
    mH,
    over_batch,
    promote,
)

__all__ = ["svdvals", "diagsvd", "null_space", "orth", "subspace_angles",
           "orthogonal_procrustes"]


def svdvals(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """Singular values (descending) of each matrix of ``a``, as ``scipy.linalg.svdvals``.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.svdvals(np.array([[3.0, 0.0], [0.0, -4.0]]))
        array([4., 3.])
    """
    a = as_inexact(a)
    check_matrix("svdvals", a)
    return fnp.linalg.svd(a, compute_uv=False)


@over_batch(("s", 1))
def diagsvd(s: Any, M: int, N: int) -> Any:  # noqa: N803
    """The ``(M, N)`` matrix with ``s`` on its diagonal (the ``S`` of ``U @ S @ Vh``), as
    ``scipy.linalg.diagsvd``.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.diagsvd(np.array([2.0, 1.0]), 2, 3)
        array([[2., 0., 0.],
               [0., 1., 0.]])
    """
    s = fnp.asarray(s)
    k = get_aval(s).shape[-1] if get_aval(s).ndim else 1
    if k not in (M, N):
        raise ValueError(f"diagsvd: length of s ({k}) must be M ({M}) or N ({N})")
    part = fnp.diag(s)
    return fnp.pad(part, ((0, M - k), (0, N - k)))


def _rank_split(name: str, a: Any, rcond: Any) -> tuple[Any, Any, Any, int]:
    """``(u, s, vh, num)``: the full SVD and how many singular values exceed ``rcond * max``
    (SciPy's default ``rcond``: ``eps * max(M, N)``). ``num`` sets the result's shape, so the
    values must be concrete."""
    a = as_inexact(a)
    m, n = check_matrix(name, a)
    if get_aval(a).ndim != 2:
        raise LinAlgShapeError(f"{name}: expected a 2-D array, got shape {get_aval(a).shape}")
    u, s, vh = fnp.linalg.svd(a, full_matrices=True)
    if rcond is None:
        rcond = numpy.finfo(get_aval(s).dtype).eps * max(m, n)
    sh = host_value(s, name, "the number of columns of its result is the matrix's rank")
    tol = numpy.amax(sh, initial=0.0) * rcond
    return u, s, vh, int(numpy.sum(sh > tol, dtype=int))


@over_batch(("A", 2))
def null_space(A: Any, rcond: Any = None, *, overwrite_a: bool = False,  # noqa: N803
               check_finite: bool = True, lapack_driver: str = "gesdd") -> Any:
    """An orthonormal basis (columns) of the null space of ``A`` from the SVD, as
    ``scipy.linalg.null_space``; the number of columns depends on the values (concrete
    values only).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> ns = fsl.null_space(np.array([[1.0, 1.0], [1.0, 1.0]]))
        >>> ns.shape, bool(np.allclose(np.abs(ns[:, 0]), 2 ** -0.5))
        ((2, 1), True)
    """
    _, _, vh, num = _rank_split("null_space", A, rcond)
    return mH(vh[num:, :])


@over_batch(("A", 2))
def orth(A: Any, rcond: Any = None) -> Any:  # noqa: N803
    """An orthonormal basis (columns) of the range of ``A`` from the SVD, as
    ``scipy.linalg.orth`` (concrete values only: the rank sets the shape).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.orth(np.array([[2.0, 0.0], [0.0, 0.0]]))
        array([[1.],
               [0.]])
    """
    u, _, _, num = _rank_split("orth", A, rcond)
    return u[:, :num]


@over_batch(("A", 2), ("B", 2))
def subspace_angles(A: Any, B: Any) -> Any:  # noqa: N803
    """Principal angles (radians, descending) between the column spaces of ``A`` and ``B``,
    as ``scipy.linalg.subspace_angles`` (Knyazev and Argentati's algorithm, the same steps).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.subspace_angles(np.array([[1.0], [0.0]]), np.array([[1.0], [1.0]])).round(6)
        array([0.785398])
    """
    a, b = promote(A, B)
    for name, x in (("A", a), ("B", b)):
        if get_aval(x).ndim != 2:
            raise ValueError(f"subspace_angles: expected 2D array {name}, got shape "
                             f"{get_aval(x).shape}")
    if get_aval(a).shape[0] != get_aval(b).shape[0]:
        raise ValueError("subspace_angles: A and B must have the same number of rows, got "
                         f"{get_aval(a).shape[0]} and {get_aval(b).shape[0]}")
    qa, qb = orth(a), orth(b)
    qa_h_qb = fnp.matmul(mH(qa), qb)
    sigma = svdvals(qa_h_qb)
    if get_aval(qa).shape[1] >= get_aval(qb).shape[1]:
        rest = qb - fnp.matmul(qa, qa_h_qb)
    else:
        rest = qa - fnp.matmul(qb, mH(qa_h_qb))
    mask = sigma ** 2 >= 0.5
    if bool(numpy.any(to_numpy(mask))):
        mu_arcsin = fnp.arcsin(fnp.clip(svdvals(rest), -1.0, 1.0))
    else:
        mu_arcsin = 0.0
    return fnp.where(mask, mu_arcsin, fnp.arccos(fnp.clip(sigma[::-1], -1.0, 1.0)))


@over_batch(("A", 2), ("B", 2))
def orthogonal_procrustes(A: Any, B: Any, check_finite: bool = True) -> tuple[Any, Any]:  # noqa: N803
    """The unitary ``R`` closest to mapping ``A`` onto ``B`` (minimising ``||A R - B||_F``)
    and the sum of the singular values of ``A^H B``, as ``scipy.linalg.orthogonal_procrustes``.
    Differentiable where those singular values are distinct.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> r, scale = fsl.orthogonal_procrustes(np.eye(2), np.array([[0.0, 1.0], [1.0, 0.0]]))
        >>> r.round(12) + 0.0, float(scale)
        (array([[0., 1.],
               [1., 0.]]), 2.0)
    """
    a, b = promote(A, B)
    if get_aval(a).ndim != 2:
        raise ValueError(f"orthogonal_procrustes: expected ndim to be 2, but observed "
                         f"{get_aval(a).ndim}")
    if get_aval(a).shape != get_aval(b).shape:
        raise ValueError(f"orthogonal_procrustes: the shapes of A and B differ "
                         f"({get_aval(a).shape} vs {get_aval(b).shape})")
    u, w, vt = fnp.linalg.svd(fnp.matmul(b.T, fnp.conj(a)).T, full_matrices=False)
    return fnp.matmul(u, vt), fnp.sum(w)
