"""``segment_sum``, ``segment_prod``, ``segment_max``, ``segment_min``: JAX's ``jax.ops``
(``funcgrad.ops`` is where a port's ``jax.ops.segment_sum`` lands).

Each reduces the rows of ``data`` that share a segment id into that segment's row: a scatter
(``scatter_add``/``scatter_mul``/``scatter_max``/``scatter_min``) into an array of the
reduction's identity, so derivatives, ``vmap`` and ``jit`` are the scatters' own. As JAX's:
ids outside ``[0, num_segments)`` are dropped (negative ones too: they do not wrap), or
clamped into range with ``mode="clip"``; an empty segment holds the identity (``0``, ``1``,
``-inf``/the smallest integer, ``inf``/the largest integer).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
import funcgrad.ops.scatter as _sc
from funcgrad.avals import get_aval
from funcgrad.backend import operator_index, to_numpy
from funcgrad.core import Tracer
from funcgrad.errors import ConcretizationError, DTypeError, ShapeError
from funcgrad.ops.indexing import GatherScatterMode, Operand, full

__all__ = ["segment_sum", "segment_prod", "segment_max", "segment_min"]


def _extreme(dtype: numpy.dtype, largest: bool) -> Any:
    if dtype.kind == "f":
        return numpy.inf if largest else -numpy.inf
    if dtype.kind in "iu":
        info = numpy.iinfo(dtype)
        return info.max if largest else info.min
    if dtype.kind == "b":
        return largest
    raise DTypeError(f"segment_max/segment_min need real data, got {dtype}")


#: reduction -> (its scatter, its identity for a dtype)
_REDUCTIONS: dict[str, tuple[Callable[..., Any], Callable[[numpy.dtype], Any]]] = {
    "segment_sum": (_sc.scatter_add, lambda dtype: 0),
    "segment_prod": (_sc.scatter_mul, lambda dtype: 1),
    "segment_max": (_sc.scatter_max, lambda dtype: _extreme(dtype, False)),
    "segment_min": (_sc.scatter_min, lambda dtype: _extreme(dtype, True)),
}


def _num_segments(name: str, segment_ids: Any, num_segments: Any) -> int:
    if num_segments is not None:
        try:
            return operator_index(num_segments)
        except TypeError:
            raise TypeError(f"{name}: num_segments must be a Python int, got "
                            f"{type(num_segments).__name__} (it fixes the result's shape)") \
                from None
    ids = segment_ids
    if isinstance(ids, Tracer):
        ids = ids.to_concrete_value()
        if ids is None:
            raise ConcretizationError(
                f"{name}: num_segments=None takes the number of segments from the ids' "
                "values, which are traced here; pass num_segments (a Python int) under "
                "jit/vmap, as in JAX")
    ids = to_numpy(ids)  # a host copy: the count is a Python int
    return int(ids.max()) + 1 if ids.size else 0


def _segment(name: str, data: Any, segment_ids: Any, num_segments: Any, mode: Any) -> Any:
    for what, v in (("data", data), ("segment_ids", segment_ids)):
        if isinstance(v, list | tuple):
            raise TypeError(f"{name}: {what} must be an array or a scalar, got a "
                            f"{type(v).__name__}; make it an array first (as JAX requires)")
    d, i = get_aval(data), get_aval(segment_ids)
    if i.dtype.kind not in "iu":
        raise DTypeError(f"{name}: segment_ids must be integers, got {i.dtype}")
    if i.ndim != 1 or d.ndim == 0 or d.shape[0] != i.shape[0]:
        raise ShapeError(f"{name}: segment_ids must be one id per row of data (shape "
                         f"({d.shape[0] if d.ndim else '?'},)), got data {d.shape} and "
                         f"segment_ids {i.shape}")
    n = _num_segments(name, segment_ids, num_segments)
    index_mode = GatherScatterMode.from_any(mode).index_mode(scatter=True)
    ids = segment_ids
    if index_mode == "fill":
        # The primitives wrap a negative index once; JAX drops it: move it out of range.
        ids = _ew.select_n(_ew.lt(ids, 0), ids, n)  # weak Python ints: ids' dtype and device
    else:  # clamp: JAX clamps a negative id to 0, where wrapping first would give n - 1
        ids = _ew.max(ids, 0)
    scatter, identity = _REDUCTIONS[name]
    out = full((n,) + d.shape[1:], identity(d.dtype), d.dtype, d.device)
    return scatter(out, data, ids, indexer=(Operand(0),), mode=index_mode)


def segment_sum(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None) -> Any:
    """The sum of the rows of ``data`` in each segment: ``out[s] = sum(data[ids == s])``.

    ``num_segments`` (a Python int, needed under ``jit``; default ``max(ids) + 1``) fixes the
    result's length. Ids out of range are dropped (``mode="clip"``: clamped). The hints
    ``indices_are_sorted``, ``unique_indices`` and ``bucket_size`` are accepted and ignored.

    Example:
        >>> import numpy as np
        >>> segment_sum(np.array([1.0, 2.0, 3.0, 4.0]), np.array([0, 0, 2, 5]), 3)
        array([3., 0., 3.])
    """
    return _segment("segment_sum", data, segment_ids, num_segments, mode)


def segment_prod(data: Any, segment_ids: Any, num_segments: int | None = None,
                 indices_are_sorted: bool = False, unique_indices: bool = False,
                 bucket_size: int | None = None, mode: Any = None) -> Any:
    """The product of the rows of ``data`` in each segment (1 for an empty one); see
    :func:`segment_sum` for the arguments.

    Example:
        >>> import numpy as np
        >>> segment_prod(np.array([2.0, 3.0, 4.0]), np.array([0, 0, 1]), 3)
        array([6., 4., 1.])
    """
    return _segment("segment_prod", data, segment_ids, num_segments, mode)


def segment_max(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None) -> Any:
    """The maximum of the rows of ``data`` in each segment (``-inf``, or the dtype's smallest
    integer, for an empty one); tied maxima share the gradient. See :func:`segment_sum`.

    Example:
        >>> import numpy as np
        >>> segment_max(np.array([2.0, 3.0, 4.0]), np.array([0, 0, 1]), 3)
        array([  3.,   4., -inf])
    """
    return _segment("segment_max", data, segment_ids, num_segments, mode)


def segment_min(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None) -> Any:
    """The minimum of the rows of ``data`` in each segment (``inf``, or the dtype's largest
    integer, for an empty one). See :func:`segment_sum`.

    Example:
        >>> import numpy as np
        >>> segment_min(np.array([2.0, 3.0, 4.0]), np.array([0, 0, 1]), 3)
        array([ 2.,  4., inf])
    """
    return _segment("segment_min", data, segment_ids, num_segments, mode)
