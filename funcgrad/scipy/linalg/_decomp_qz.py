"""``qz`` and ``ordqz``: the generalized Schur decomposition of a pencil, as
``scipy.linalg.qz``/``ordqz``, over the QZ primitive (:mod:`funcgrad.ops.qz`)."""

from __future__ import annotations

from typing import Any

from funcgrad.ops import qz as _qz
from funcgrad.scipy.linalg._util import check_square, promote

__all__ = ["qz", "ordqz"]


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


def ordqz(A: Any, B: Any, sort: Any = "lhp", output: str = "real",  # noqa: N803
          overwrite_a: bool = False, overwrite_b: bool = False,
          check_finite: bool = True) -> tuple[Any, Any, Any, Any, Any, Any]:
    """``(AA, BB, alpha, beta, Q, Z)``: the generalized Schur form of :func:`qz` with the
    eigenvalues ``alpha / beta`` that ``sort`` selects first, as ``scipy.linalg.ordqz``.
    ``sort`` is ``"lhp"`` (real part < 0), ``"rhp"`` (> 0), ``"iuc"`` (inside the unit
    circle), ``"ouc"`` (outside; infinite eigenvalues too) or a callable taking the arrays
    ``alpha`` (complex) and ``beta`` and returning which to select (a real pencil's conjugate
    pair moves as one, selected when either is); the groups keep their order. ``alpha`` and
    ``beta`` are the diagonals of ``AA`` and ``BB`` (for a real 2x2 block the pair with the
    positive imaginary part first and one ``beta``): their ratios are SciPy's eigenvalues,
    their scaling may differ from LAPACK's. Stacks of matrices, ``jit`` and ``vmap`` work (the
    callable runs on the host); no derivative, as SciPy.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> a = np.array([[2.0, 5.0, 8.0, 7.0], [5.0, 2.0, 2.0, 8.0], [7.0, 5.0, 6.0, 6.0],
        ...               [5.0, 4.0, 4.0, 8.0]])
        >>> b = np.array([[0.0, 6.0, 0.0, 0.0], [5.0, 0.0, 2.0, 1.0], [5.0, 2.0, 6.0, 6.0],
        ...               [4.0, 7.0, 7.0, 7.0]])
        >>> AA, BB, alpha, beta, Q, Z = fsl.ordqz(a, b, sort="lhp")
        >>> (alpha / beta).real < 0   # the left half plane first
        array([ True,  True, False, False])
        >>> bool(np.allclose(Q @ AA @ Z.T, a)), bool(np.allclose(Q @ BB @ Z.T, b))
        (True, True)
    """
    if sort is None:
        raise ValueError("sort parameter must be None, a callable, or one of ('lhp','rhp',"
                         "'iuc','ouc'); ordqz needs an ordering")
    a, b = promote(A, B)
    check_square("ordqz", a)
    check_square("ordqz", b, "b")
    return _qz.qz(a, b, output, sort)   # type: ignore[return-value]
