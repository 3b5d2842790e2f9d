"""``qz``: the generalized Schur decomposition of a pencil, as ``scipy.linalg.qz``, over the
QZ primitive (:mod:`funcgrad.ops.qz`)."""

from __future__ import annotations

from typing import Any

from funcgrad.ops import qz as _qz
from funcgrad.scipy.linalg._util import check_square, promote

__all__ = ["qz"]


def qz(A: Any, B: Any, output: str = "real", lwork: Any = None, sort: Any = None,  # noqa: N803
       overwrite_a: bool = False, overwrite_b: bool = False,
       check_finite: bool = True) -> tuple[Any, Any, Any, Any]:
    """``(AA, BB, Q, Z)`` with ``A = Q AA Z^H`` and ``B = Q BB Z^H``, as ``scipy.linalg.qz``:
    ``Q``, ``Z`` unitary, ``BB`` upper triangular with a real nonnegative diagonal (zero for
    an infinite eigenvalue), ``AA`` upper triangular (``output="complex"``, or complex input)
    or real quasi-triangular with 2x2 blocks for conjugate pairs, ``BB``'s matching blocks
    diagonal and positive (``output="real"``). The generalized eigenvalues are
    ``diag(AA) / diag(BB)``; their order may differ from LAPACK's ``gges``. Stacks of
    matrices, ``jit`` and ``vmap`` work; there is no derivative (SciPy has none; use
    :func:`eig` with ``b``).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> a, b = np.array([[1.0, 2.0], [3.0, 4.0]]), np.diag([1.0, 0.0])
        >>> AA, BB, Q, Z = fsl.qz(a, b)
        >>> bool(np.allclose(Q @ AA @ Z.T, a)), bool(np.allclose(Q @ BB @ Z.T, b))
        (True, True)
        >>> int((np.diag(BB) == 0).sum())   # one infinite eigenvalue, as SciPy's
        1
    """
    if sort is not None:
        # SciPy's words: qz's sort never worked there either
        raise ValueError("The 'sort' input of qz() has to be None and will be removed in a "
                         "future release. Use ordqz instead.")
    a, b = promote(A, B)
    check_square("qz", a)
    check_square("qz", b, "b")
    return _qz.qz(a, b, output)
