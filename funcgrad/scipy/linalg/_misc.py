"""Small helpers of funcgrad.scipy.linalg: SciPy's ``norm``, ``issymmetric``,
``ishermitian``, ``bandwidth``, ``khatri_rao``, ``LinAlgError`` and ``LinAlgWarning``."""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.backend import to_numpy
from funcgrad.numpy.linalg import LinAlgError
from funcgrad.scipy.linalg._util import as_inexact, over_batch, promote

__all__ = ["norm", "issymmetric", "ishermitian", "bandwidth", "khatri_rao", "LinAlgError",
           "LinAlgWarning"]


class LinAlgWarning(RuntimeWarning):
    """SciPy's ``scipy.linalg.LinAlgWarning``: an ill-conditioned linear algebra operation."""


def norm(a: Any, ord: Any = None, axis: Any = None, keepdims: bool = False,  # noqa: A002
         check_finite: bool = True) -> Any:
    """Vector or matrix norm, as ``scipy.linalg.norm`` (NumPy's orders, ``axis`` and
    ``keepdims``; integers are converted to float64); differentiable.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> float(fsl.norm(np.array([3, 4])))
        5.0
    """
    return fnp.linalg.norm(as_inexact(a), ord, axis, keepdims)


def _square_host(name: str, a: Any) -> numpy.ndarray:
    """The concrete 2-D square ``a`` on the host (these predicates return Python bools)."""
    host = numpy.asarray(to_numpy(fnp.asarray(a)))
    if host.ndim != 2:
        raise ValueError(f"{name}: input array must be a 2D array, got shape {host.shape}")
    if host.shape[0] != host.shape[1]:
        raise ValueError(f"{name}: input array must be square, got shape {host.shape}")
    return host


def _is_equal_to(name: str, a: Any, other: Any, atol: Any, rtol: Any) -> bool:
    if atol is None and rtol is None:
        return bool(numpy.array_equal(a, other))
    atol = 0.0 if atol is None else atol
    rtol = 0.0 if rtol is None else rtol
    return bool(numpy.all(numpy.abs(a - other) <= atol + rtol * numpy.abs(other)))


@over_batch(("a", 2))
def issymmetric(a: Any, atol: Any = None, rtol: Any = None) -> bool:
    """Whether the square matrix ``a`` equals its transpose (exactly, or within
    ``atol + rtol * |a.T|`` when a tolerance is given), as ``scipy.linalg.issymmetric``;
    needs concrete values.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.issymmetric(np.array([[1.0, 2.0], [2.0, 1.0]]))
        True
    """
    host = _square_host("issymmetric", a)
    return _is_equal_to("issymmetric", host, host.T, atol, rtol)


@over_batch(("a", 2))
def ishermitian(a: Any, atol: Any = None, rtol: Any = None) -> bool:
    """Whether the square matrix ``a`` equals its conjugate transpose, as
    ``scipy.linalg.ishermitian`` (tolerances as :func:`issymmetric`).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.ishermitian(np.array([[1.0, 2j], [-2j, 1.0]]))
        True
    """
    host = _square_host("ishermitian", a)
    return _is_equal_to("ishermitian", host, host.conj().T, atol, rtol)


@over_batch(("a", 2))
def bandwidth(a: Any) -> tuple[int, int]:
    """``(lower, upper)``: how far below and above the diagonal the nonzero entries of the
    2-D ``a`` reach, as ``scipy.linalg.bandwidth`` (concrete values).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.bandwidth(np.triu(np.ones((3, 3))))
        (0, 2)
    """
    host = numpy.asarray(to_numpy(fnp.asarray(a)))
    if host.ndim != 2:
        raise ValueError(f"bandwidth: input array must be a 2D array, got shape {host.shape}")
    rows, cols = numpy.nonzero(host)
    if rows.size == 0:
        return 0, 0
    diff = rows - cols
    return int(max(diff.max(), 0)), int(max(-diff.min(), 0))


@over_batch(("a", 2), ("b", 2))
def khatri_rao(a: Any, b: Any) -> Any:
    """Column-wise Kronecker product of ``a (n, k)`` and ``b (m, k)``: ``(n m, k)``, as
    ``scipy.linalg.khatri_rao``; differentiable.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.khatri_rao(np.array([[1.0, 2.0]]), np.array([[3.0, 4.0], [5.0, 6.0]]))
        array([[ 3.,  8.],
               [ 5., 12.]])
    """
    a, b = fnp.asarray(a), fnp.asarray(b)
    if get_aval(a).ndim != 2 or get_aval(b).ndim != 2:
        raise ValueError("khatri_rao: the both arrays should be 2-dimensional.")
    if get_aval(a).shape[1] != get_aval(b).shape[1]:
        raise ValueError("khatri_rao: the number of columns for both arrays should be equal.")
    if get_aval(a).dtype != get_aval(b).dtype and get_aval(a).dtype.kind in "fc":
        a, b = promote(a, b)
    c = a[:, None, :] * b[None, :, :]
    rows = get_aval(a).shape[0] * get_aval(b).shape[0]   # not -1: k may be 0
    return fnp.reshape(c, (rows, get_aval(a).shape[1]))
