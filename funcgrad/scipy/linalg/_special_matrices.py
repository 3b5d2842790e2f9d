"""Special matrices of funcgrad.scipy.linalg: block_diag, toeplitz, circulant, hankel,
companion, hilbert, pascal, and tril/triu."""

from __future__ import annotations

import math
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.scipy.linalg._util import const_like

__all__ = ["block_diag", "toeplitz", "circulant", "hankel", "companion", "hilbert", "pascal",
           "tril", "triu"]


def block_diag(*arrs: Any) -> Any:
    """Block-diagonal matrix of the arguments (scalars and 1-D arrays count as 1-row
    matrices); ``block_diag()`` is ``(1, 0)``. Differentiable in every block.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.block_diag(np.array([[1, 2]]), 3)
        array([[1, 2, 0],
               [0, 0, 3]])
    """
    if not arrs:
        return fnp.zeros((1, 0))
    mats = [fnp.atleast_2d(fnp.asarray(a)) for a in arrs]
    for i, m in enumerate(mats):
        if get_aval(m).ndim > 2:
            raise ValueError(f"block_diag: argument {i} has {get_aval(m).ndim} dimensions; "
                             "arguments must be at most 2-D")
    dt = numpy.result_type(*[get_aval(m).dtype for m in mats])
    cols = sum(get_aval(m).shape[1] for m in mats)
    rows, start = [], 0
    for m in mats:
        r, c = get_aval(m).shape
        rows.append(fnp.pad(m.astype(dt), ((0, 0), (start, cols - start - c))))
        start += c
    return fnp.concatenate(rows, axis=0)


def toeplitz(c: Any, r: Any = None) -> Any:
    """Toeplitz matrix with first column ``c`` and first row ``r`` (``r[0]`` ignored);
    ``r=None`` means ``conj(c)``. Inputs are flattened.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.toeplitz(np.array([1.0, 2.0, 3.0]), np.array([1.0, 4.0]))
        array([[1., 4.],
               [2., 1.],
               [3., 2.]])
    """
    c = fnp.ravel(fnp.asarray(c))
    r = fnp.conj(c) if r is None else fnp.ravel(fnp.asarray(r))
    m, n = get_aval(c).shape[0], get_aval(r).shape[0]
    # vals = [c[::-1], r[1:]]; entry (i, j) is vals[m - 1 - i + j].
    vals = fnp.concatenate([c[::-1], r[1:]])
    idx = (m - 1) - numpy.arange(m)[:, None] + numpy.arange(n)[None, :]
    return vals[const_like(vals, idx)]


def circulant(c: Any) -> Any:
    """Circulant matrix with first column ``c``.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.circulant(np.array([1, 2, 3]))
        array([[1, 3, 2],
               [2, 1, 3],
               [3, 2, 1]])
    """
    c = fnp.ravel(fnp.asarray(c))
    n = get_aval(c).shape[0]
    idx = (numpy.arange(n)[:, None] - numpy.arange(n)[None, :]) % max(n, 1)
    return c[const_like(c, idx)]


def hankel(c: Any, r: Any = None) -> Any:
    """Hankel matrix with first column ``c`` and last row ``r`` (``r[0]`` ignored);
    ``r=None`` means zeros.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.hankel(np.array([1, 2, 3]))
        array([[1, 2, 3],
               [2, 3, 0],
               [3, 0, 0]])
    """
    c = fnp.ravel(fnp.asarray(c))
    r = fnp.zeros_like(c) if r is None else fnp.ravel(fnp.asarray(r))
    m, n = get_aval(c).shape[0], get_aval(r).shape[0]
    vals = fnp.concatenate([c, r[1:]])
    idx = numpy.arange(m)[:, None] + numpy.arange(n)[None, :]
    return vals[const_like(vals, idx)]


def companion(a: Any) -> Any:
    """Companion matrix of the polynomial with coefficients ``a`` (highest degree first):
    first row ``-a[1:] / a[0]``, ones on the sub-diagonal.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.companion(np.array([1.0, -10.0, 31.0, -30.0]))
        array([[ 10., -31.,  30.],
               [  1.,   0.,   0.],
               [  0.,   1.,   0.]])
    """
    a = fnp.asarray(a)
    if get_aval(a).ndim != 1 or get_aval(a).shape[0] < 2:
        raise ValueError("companion: a must be 1-D with at least two coefficients, got shape "
                         f"{get_aval(a).shape}")
    n = get_aval(a).shape[0] - 1
    first = -a[1:] / a[0]
    dt = get_aval(first).dtype
    return fnp.concatenate([first[None, :], const_like(first, numpy.eye(n - 1, n, dtype=dt))], axis=0)


def hilbert(n: int) -> Any:
    """The ``n x n`` Hilbert matrix ``1 / (i + j + 1)`` (float64).

    Example:
        >>> import funcgrad.scipy.linalg as fsl
        >>> fsl.hilbert(2)
        array([[1.        , 0.5       ],
               [0.5       , 0.33333333]])
    """
    i = numpy.arange(int(n))
    return fnp.asarray(1.0 / (i[:, None] + i[None, :] + 1.0))


def pascal(n: int, kind: str = "symmetric", exact: bool = True) -> Any:
    """The ``n x n`` Pascal matrix: ``kind`` ``"symmetric"`` (``C(i + j, i)``), ``"lower"``
    or ``"upper"``; uint64 when ``exact``, float64 otherwise.

    Example:
        >>> import funcgrad.scipy.linalg as fsl
        >>> fsl.pascal(3)
        array([[1, 1, 1],
               [1, 2, 3],
               [1, 3, 6]], dtype=uint64)
    """
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"pascal: kind must be 'symmetric', 'lower', or 'upper', got {kind!r}")
    n = int(n)
    if kind == "symmetric":
        vals = [[math.comb(i + j, i) for j in range(n)] for i in range(n)]
    else:
        vals = [[math.comb(i, j) if j <= i else 0 for j in range(n)] for i in range(n)]
    out = numpy.array(vals, dtype=numpy.uint64 if exact else numpy.float64).reshape(n, n)
    return fnp.asarray(out if kind != "upper" else out.T)


def tril(m: Any, k: int = 0) -> Any:
    """``m`` with the entries above the ``k``-th diagonal zeroed (SciPy's old ``tril``;
    ``funcgrad.numpy.tril``).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.tril(np.ones((2, 2)))
        array([[1., 0.],
               [1., 1.]])
    """
    return fnp.tril(m, k)


def triu(m: Any, k: int = 0) -> Any:
    """``m`` with the entries below the ``k``-th diagonal zeroed (``funcgrad.numpy.triu``).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.triu(np.ones((2, 2)))
        array([[1., 1.],
               [0., 1.]])
    """
    return fnp.triu(m, k)
