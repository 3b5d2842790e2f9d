"""Helpers for writing batch rules (and batching jaxprs) that need operations.

The batching interpreter (:mod:`funcgrad.interpreters.batching`) cannot import ops, so the
helpers that move or materialize batch axes live here. In a batch rule a dim is the position
of the batch axis in that value, or None for a value shared by the whole batch. (Batching a
whole jaxpr, for higher-order primitives: ``funcgrad.interpreters.jaxpr_rules.batch_jaxpr``.)

Example:
    >>> import numpy as np
    >>> bdim_at_front(np.ones((3, 2)), 1, 2).shape
    (2, 3)
    >>> bdim_at_front(np.ones(3), None, 4).shape
    (4, 3)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from funcgrad.avals import get_aval
from funcgrad.ops import shape as _shape

__all__ = [
    "moveaxis_to_front",
    "bdim_at_front",
    "move_bdim",
    "all_bdims_at_front",
    "batched_at_front",
]


def moveaxis_to_front(x: Any, d: int | None) -> Any:
    """``x`` with its batch axis ``d`` moved to position 0; unbatched ``x`` (None) as is.

    Example:
        >>> import numpy as np
        >>> moveaxis_to_front(np.zeros((2, 5)), 1).shape
        (5, 2)
    """
    if d is None or d == 0:
        return x
    return _shape.moveaxis(x, d, 0)


def bdim_at_front(x: Any, d: int | None, axis_size: int) -> Any:
    """``x`` with the batch axis first; an unbatched ``x`` is broadcast to ``axis_size`` rows.

    Example:
        >>> import numpy as np
        >>> bdim_at_front(2.0, None, 3).tolist()
        [2.0, 2.0, 2.0]
    """
    if d is None:
        a = get_aval(x)
        return _shape.broadcast_in_dim(x, (axis_size,) + a.shape, tuple(range(1, a.ndim + 1)))
    return moveaxis_to_front(x, d)


def move_bdim(x: Any, src: int | None, dst: int, axis_size: int) -> Any:
    """``x`` with its batch axis moved from ``src`` to ``dst`` (materialized if ``src`` is None).

    ``dst`` counts positions in the batched result (negative from the end).

    Example:
        >>> import numpy as np
        >>> move_bdim(np.zeros((4, 2)), 0, -1, 4).shape
        (2, 4)
        >>> move_bdim(np.zeros(2), None, 1, 4).shape
        (2, 4)
    """
    if src is None:
        a = get_aval(x)
        nd = a.ndim + 1
        if dst < 0:
            dst += nd
        shape = a.shape[:dst] + (axis_size,) + a.shape[dst:]
        bdims = tuple(i for i in range(nd) if i != dst)
        return _shape.broadcast_in_dim(x, shape, bdims)
    return _shape.moveaxis(x, src, dst)


def all_bdims_at_front(
    axis_size: int, vals: Sequence[Any], dims: Sequence[int | None]
) -> list[Any]:
    """Every value with its batch axis first, unbatched ones broadcast to ``axis_size``.

    Example:
        >>> import numpy as np
        >>> [v.shape for v in all_bdims_at_front(2, [np.zeros((3, 2)), np.zeros(3)], [1, None])]
        [(2, 3), (2, 3)]
    """
    return [bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims)]


def batched_at_front(vals: Sequence[Any], dims: Sequence[int | None]) -> list[Any]:
    """Batched values with the batch axis first; unbatched ones untouched (no broadcast).

    Example:
        >>> import numpy as np
        >>> [v.shape for v in batched_at_front([np.zeros((3, 2)), np.zeros(3)], [1, None])]
        [(2, 3), (3,)]
    """
    return [moveaxis_to_front(v, d) for v, d in zip(vals, dims)]
