"""``scipy.optimize.linear_sum_assignment`` (the rectangular assignment problem by
shortest augmenting paths with dual potentials, Crouse 2016 -- SciPy's algorithm) and
``nnls`` (non-negative least squares by Lawson and Hanson's active set method), on the host.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.optimize import linear_sum_assignment
    >>> linear_sum_assignment(np.array([[4.0, 1.0, 3.0], [2.0, 0.0, 5.0], [3.0, 2.0, 2.0]]))
    (array([0, 1, 2]), array([1, 0, 2]))
"""

from __future__ import annotations

from typing import Any

import numpy

from funcgrad.api_devices import device_get
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device, is_array
from funcgrad.core import Tracer

__all__ = ["linear_sum_assignment", "nnls"]


def _device(v: Any) -> str:
    if is_array(v) and not isinstance(v, numpy.ndarray):
        return get_aval(v).device or get_default_device()
    return get_default_device()


def _host(name: str, v: Any) -> numpy.ndarray:
    if isinstance(v, Tracer):
        raise TypeError(f"{name}: needs concrete values (a combinatorial host algorithm); "
                        "call it outside jit/vmap/grad")
    return numpy.asarray(device_get(v))


def _assign(cost: numpy.ndarray) -> numpy.ndarray:
    """Rows to columns (``nr <= nc``) of least total cost: one shortest augmenting path per
    row over reduced costs ``cost - u - v``, then the potentials and the matching update."""
    nr, nc = cost.shape
    u, v = numpy.zeros(nr), numpy.zeros(nc)
    path = numpy.full(nc, -1)
    col4row = numpy.full(nr, -1)
    row4col = numpy.full(nc, -1)
    for cur in range(nr):
        shortest = numpy.full(nc, numpy.inf)
        in_sr = numpy.zeros(nr, bool)
        in_sc = numpy.zeros(nc, bool)
        remaining = list(range(nc - 1, -1, -1))
        min_val, i, sink = 0.0, cur, -1
        while sink == -1:
            in_sr[i] = True
            rem = numpy.array(remaining)
            r = min_val + cost[i, rem] - u[i] - v[rem]
            better = r < shortest[rem]
            path[rem[better]] = i
            shortest[rem[better]] = r[better]
            cand = shortest[rem]
            lowest = cand.min()
            if lowest == numpy.inf:
                raise ValueError("cost matrix is infeasible")
            # among the lowest, prefer a free column (it ends the path at once)
            ties = numpy.flatnonzero(cand == lowest)
            free = ties[row4col[rem[ties]] == -1]
            index = int(free[0]) if free.size else int(ties[0])
            min_val = lowest
            j = int(rem[index])
            if row4col[j] == -1:
                sink = j
            else:
                i = int(row4col[j])
            in_sc[j] = True
            remaining[index] = remaining[-1]
            remaining.pop()
        u[cur] += min_val
        others = in_sr.copy()
        others[cur] = False
        u[others] += min_val - shortest[col4row[others]]
        v[in_sc] -= min_val - shortest[in_sc]
        j = sink
        while True:
            i = int(path[j])
            row4col[j] = i
            col4row[i], j = j, col4row[i]
            if i == cur:
                break
    return col4row


def linear_sum_assignment(cost_matrix: Any, maximize: bool = False) -> tuple[Any, Any]:
    """The assignment of rows to columns (each used at most once, ``min(n, m)`` pairs) of
    least (``maximize``: greatest) total cost, as ``scipy.optimize.linear_sum_assignment``:
    ``(row_ind, col_ind)`` with ``row_ind`` sorted. Optimal totals are SciPy's; among equally
    cheap assignments another may be chosen. A host computation (``TypeError`` under
    ``jit``).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.optimize import linear_sum_assignment
        >>> linear_sum_assignment(np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]), maximize=True)
        (array([0, 1]), array([2, 0]))
    """
    dev = _device(cost_matrix)
    c = _host("linear_sum_assignment", cost_matrix)
    if c.ndim != 2:
        raise ValueError(f"expected a matrix (2-D array), got a {c.ndim} array")
    if c.dtype.kind not in "biuf":
        raise ValueError(f"expected a matrix containing numerical entries, got {c.dtype}")
    c = c.astype(float)
    if maximize:
        c = -c
    if numpy.any(numpy.isnan(c)) or numpy.any(c == -numpy.inf):
        raise ValueError("matrix contains invalid numeric entries")
    transposed = c.shape[0] > c.shape[1]
    if transposed:
        c = c.T
    if c.size == 0:
        rows = cols = numpy.zeros(0, dtype=numpy.intp)
    else:
        col4row = _assign(c)
        rows, cols = numpy.arange(c.shape[0]), col4row.astype(numpy.intp)
    if transposed:
        order = numpy.argsort(cols)
        rows, cols = cols[order], rows[order]
    return device_put(rows.astype(numpy.intp), dev), device_put(cols.astype(numpy.intp), dev)


def nnls(A: Any, b: Any, maxiter: int | None = None, *, atol: float | None = None  # noqa: N803
         ) -> tuple[Any, float]:
    """``argmin ||A x - b||`` subject to ``x >= 0``, as ``scipy.optimize.nnls``:
    ``(x, rnorm)`` by Lawson and Hanson's active set method (``maxiter`` default
    ``3 n``). A host computation.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.optimize import nnls
        >>> x, rnorm = nnls(np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]),
        ...                 np.array([2.0, 1.0, -1.0]))
        >>> x, round(rnorm, 6)
        (array([1.5, 0. ]), 1.224745)
    """
    dev = _device(A)
    a = _host("nnls", A).astype(float)
    y = _host("nnls", b).astype(float)
    if a.ndim != 2:
        raise ValueError(f"Expected a two-dimensional array, but the shape is {a.shape}")
    if y.ndim != 1 or y.shape[0] != a.shape[0]:
        raise ValueError("Incompatible dimensions. The first dimension of A is "
                         f"{a.shape[0]}, while the shape of b is {y.shape}")
    m, n = a.shape
    maxiter = 3 * n if maxiter is None else int(maxiter)
    tol = 10 * max(m, n) * numpy.finfo(float).eps * numpy.linalg.norm(a, 1) if atol is None \
        else float(atol)
    passive = numpy.zeros(n, bool)
    x = numpy.zeros(n)
    w = a.T @ (y - a @ x)
    it = 0

    def solve(mask: numpy.ndarray) -> numpy.ndarray:
        s = numpy.zeros(n)
        s[mask] = numpy.linalg.lstsq(a[:, mask], y, rcond=None)[0]
        return s

    while (~passive).any() and numpy.max(numpy.where(passive, -numpy.inf, w)) > tol:
        j = int(numpy.argmax(numpy.where(passive, -numpy.inf, w)))
        passive[j] = True
        s = solve(passive)
        while numpy.any(s[passive] <= 0):
            it += 1
            if it > maxiter:
                raise RuntimeError("Maximum number of iterations reached.")
            neg = passive & (s <= 0)
            alpha = numpy.min(x[neg] / (x[neg] - s[neg]))
            x = x + alpha * (s - x)
            passive &= x > tol
            x[~passive] = 0.0
            s = solve(passive)
        x = s
        w = a.T @ (y - a @ x)
    return device_put(x, dev), float(numpy.linalg.norm(a @ x - y))
