"""optax.assignment (optax 0.2.8): the linear assignment problem (a minimum-cost matching of
rows to columns of a cost matrix) by the Hungarian algorithm with potentials, written with
``lax.scan`` / ``lax.while_loop`` so it runs under ``jit`` (``scipy.optimize.
linear_sum_assignment``'s problem; ties may pick another optimal matching than SciPy's).

>>> import numpy as np
>>> from funcgrad_nn.optim import assignment
>>> cost = np.array([[8, 4, 7], [5, 2, 3], [9, 6, 7], [9, 4, 8]])
>>> i, j = assignment.hungarian_algorithm(cost)
>>> int(cost[i, j].sum()), i.tolist(), j.tolist()     # optax's pairs, in its order
(15, [1, 3, 0], [2, 1, 0])
"""

from __future__ import annotations

from typing import Any

import funcgrad.numpy as fnp
from funcgrad import lax

__all__ = ["hungarian_algorithm"]


def hungarian_algorithm(cost_matrix: Any) -> tuple[Any, Any]:
    """``(i, j)``: row and column indices of a minimum-cost assignment of ``min(n, m)``
    pairs for an ``(n, m)`` cost matrix (optax's ``hungarian_algorithm``, O(n^2 m)); the
    cost is ``cost_matrix[i, j].sum()``.

    >>> import numpy as np
    >>> cost = np.array([[90, 80, 75, 70], [35, 85, 55, 65], [125, 95, 90, 95],
    ...                  [45, 110, 95, 115], [50, 100, 90, 100]])
    >>> i, j = hungarian_algorithm(cost)
    >>> int(cost[i, j].sum()), i.tolist(), j.tolist()
    (265, [0, 1, 2, 3], [3, 2, 1, 0])
    """
    cost_matrix = fnp.asarray(cost_matrix)
    if cost_matrix.ndim != 2:
        raise ValueError(f"hungarian_algorithm: the cost matrix must be 2-D, got shape "
                         f"{cost_matrix.shape}")
    if cost_matrix.shape[0] == 0 or cost_matrix.shape[1] == 0:
        return fnp.zeros(0, int), fnp.zeros(0, int)
    transpose = cost_matrix.shape[0] > cost_matrix.shape[1]
    if transpose:
        cost_matrix = cost_matrix.T
    rows, cols = cost_matrix.shape

    def row_fn(state: Any, row: Any) -> Any:
        u, v, parent = state

        def dfs_body(st: Any) -> Any:
            u, v, used, minv, path, col = st
            used = fnp.at(used)[col].set(True)
            unused = ~used[1:]
            r = parent[col]
            cur = fnp.take(cost_matrix, r - 1, axis=0) - u[r] - v[1:]
            cur = fnp.where(unused, cur, fnp.inf)
            path = fnp.where(cur < minv, col, path)
            minv = fnp.where(cur < minv, cur, minv)
            masked = fnp.where(unused, minv, fnp.inf)
            col = fnp.argmin(masked) + 1
            delta = fnp.min(masked)
            # the rows of the used columns gain delta (slot rows + 1 absorbs the others)
            idx = fnp.where(used, parent, rows + 1)
            u = fnp.at(u)[idx].add(delta)
            v = fnp.where(used, v - delta, v)
            minv = fnp.where(unused, minv - delta, minv)
            return u, v, used, minv, path, col

        def back_body(st: Any) -> Any:
            parent, old = st
            new = path[old - 1]
            return fnp.at(parent)[old].set(parent[new]), new

        parent = fnp.at(parent)[0].set(row + 1)
        path = fnp.zeros(cols, int)
        used = fnp.zeros(cols + 1, bool)
        minv = fnp.full(cols, fnp.inf)
        st = lax.while_loop(lambda s: parent[s[-1]] != 0, dfs_body,
                            (u, v, used, minv, path, fnp.asarray(0)))
        u, v, _, _, path, col = st
        # parent changes in the loop: the condition reads the carried one
        parent, _ = lax.while_loop(lambda s: s[1] != 0, back_body, (parent, col))
        return (u, v, parent), None

    u = fnp.zeros(rows + 2)  # row potentials (and the dummy slot)
    v = fnp.zeros(cols + 1)  # column potentials
    parent = fnp.zeros(cols + 1, int)  # column -> row, 1-based; 0: unassigned
    (u, v, parent), _ = lax.scan(row_fn, (u, v, parent), fnp.arange(rows))
    if rows == cols:
        parent, indices = parent[1:], fnp.arange(rows)
    else:
        parent, indices = lax.top_k(parent[1:], rows)
    parent = parent - 1
    return (indices, parent) if transpose else (parent, indices)

