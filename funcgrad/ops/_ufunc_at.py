"""``numpy.<ufunc>.at`` on every array module: unbuffered in-place updates where an element
named several times is updated once per occurrence.

NumPy has ``ufunc.at`` for every ufunc; CuPy's atomic ``cupy.add.at`` (for 32/64-bit
numbers and float16; ``cupyx.scatter_add`` on older CuPy, deprecated in CuPy 14) is used for
additions, and the strict test backend models CuPy's (``add.at`` only). For the rest,
:func:`ufunc_at` works in rounds over occurrence ranks: the updates are sorted
stably by the element they name, each gets its rank among the updates of that element
(0 for the first), and round ``r`` applies the rank-``r`` updates with one plain fancy-index
read-modify-write (the elements of one round are distinct). Repeated updates meet in their
original order, so the result equals NumPy's bit for bit. When one element is named more
than ``max_rounds`` times a log-depth segmented scan combines each element's updates first
(the same values up to rounding order), so the number of kernel launches stays small.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy

from funcgrad.backend import to_numpy

__all__ = ["set_at", "ufunc_at"]

#: Array modules whose ``ufunc.at`` is exact for some ufuncs and dtypes only: module name ->
#: {ufunc name: the dtypes its ``at`` takes}. CuPy's ``add.at`` is an atomic add for these
#: dtypes (its ``_scatter_op``; other dtypes raise); its ``maximum.at``/``minimum.at`` round
#: float64 through float32 (``atomicMax`` on doubles goes through ``fmaxf`` in CuPy 14's
#: atomics.cuh, seen on an H100) and its other ufuncs have no ``at``: the rounds below are
#: exact for every ufunc and dtype.
_CUPY_ADD_DTYPES = frozenset({"int32", "int64", "uint32", "uint64", "float16", "float32",
                              "float64"})
_DEVICE_AT: dict[str, dict[str, frozenset[str]]] = {
    "cupy": {"add": _CUPY_ADD_DTYPES},
    # The strict backend models CuPy here (its ufuncs have CuPy's ``at`` only), so that the
    # CPU strict pass runs the paths the GPU runs.
    "strict_numpy": {"add": _CUPY_ADD_DTYPES},
}

#: The same kernels where the module's ufuncs have no ``at`` (older CuPy): module name ->
#: (companion module, {ufunc name: kernel name}). CuPy 14 deprecates them for ``ufunc.at``.
_LEGACY_KERNELS: dict[str, tuple[str, dict[str, str]]] = {
    "cupy": ("cupyx", {"add": "scatter_add"}),
}

#: Above this many occurrences of one element, combine by a segmented scan instead of rounds.
MAX_ROUNDS = 32


def _exact_at_for_all(xp: Any) -> bool:
    """Whether ``xp``'s ``ufunc.at`` exists and is exact for every ufunc and dtype (NumPy)."""
    return xp is numpy


def _device_kernel(xp: Any, op: str, dtype: Any) -> Any:
    """The module's exact atomic ``op.at`` for ``dtype``, or None (then: rounds)."""
    module = getattr(xp, "__name__", "")
    if str(dtype) not in _DEVICE_AT.get(module, {}).get(op, frozenset()):
        return None
    at = getattr(getattr(xp, op), "at", None)
    if at is not None:
        return at
    companion, kernels = _LEGACY_KERNELS.get(module, ("", {}))
    name = kernels.get(op)
    return None if name is None else getattr(importlib.import_module(companion), name)


def ufunc_at(xp: Any, op: str, out: Any, key: tuple, updates: Any, *,
             max_rounds: int = MAX_ROUNDS) -> Any:
    """``xp.<op>.at(out, key, updates)`` on any array module; returns the updated array
    (``out`` itself, or a new array where the module's arrays could not be updated in place).

    ``op`` names a binary ufunc (``"add"``, ``"multiply"``, ``"maximum"``, ``"minimum"``...);
    ``key`` is an index tuple (slices, integers, index arrays, ``None``, ``Ellipsis``) and
    ``updates`` broadcasts to ``out[key].shape``.

    Example:
        >>> import numpy as np
        >>> ufunc_at(np, "multiply", np.ones(3), (np.array([1, 1, 2]),), np.array([2., 3., 5.]))
        array([1., 6., 5.])
    """
    if _exact_at_for_all(xp):
        getattr(xp, op).at(out, key, updates)
        return out
    kernel = _device_kernel(xp, op, out.dtype)
    if kernel is not None:
        kernel(out, key, updates)
        return out
    return _at_by_rounds(xp, getattr(xp, op), out, key, updates, max_rounds)


def set_at(xp: Any, out: Any, key: tuple, updates: Any) -> Any:
    """``out[key] = updates`` where the last of the updates naming one element wins, as in
    NumPy, on every array module (CuPy leaves the winner among repeats unspecified, which
    would disagree with the gradient rules). Returns the updated array.

    Example:
        >>> import numpy as np
        >>> set_at(np, np.zeros(3), (np.array([1, 1, 2]),), np.array([2., 3., 5.]))
        array([0., 3., 5.])
    """
    if _exact_at_for_all(xp):  # NumPy: the last write wins (the strict backend: as CuPy)
        out[key] = updates
        return out
    pos = xp.arange(out.size, dtype=xp.int64).reshape(out.shape)[key]
    if int(pos.size) == 0:
        return out
    vals = xp.broadcast_to(xp.asarray(updates, dtype=out.dtype), pos.shape).reshape(-1)
    pos = pos.reshape(-1)
    order = xp.argsort(pos, kind="stable")  # equal positions keep their order of occurrence
    pos, vals = pos[order], vals[order]
    last = xp.concatenate([pos[1:] != pos[:-1], xp.ones((1,), dtype=bool)])
    flat = out.reshape(-1)
    flat[pos[last]] = vals[last]
    return flat.reshape(out.shape)


def _at_by_rounds(xp: Any, ufunc: Any, out: Any, key: tuple, updates: Any,
                  max_rounds: int) -> Any:
    # The flat position each update names: the same index applied to an iota, so every kind
    # of index (slices, broadcast arrays, None, Ellipsis) means what it means to NumPy.
    pos = xp.arange(out.size, dtype=xp.int64).reshape(out.shape)[key]
    m = int(pos.size)
    flat = out.reshape(-1)
    if m == 0:
        return out
    vals = xp.broadcast_to(xp.asarray(updates, dtype=out.dtype), pos.shape).reshape(-1)
    pos = pos.reshape(-1)
    order = xp.argsort(pos, kind="stable")  # equal positions keep their order of occurrence
    pos, vals = pos[order], vals[order]
    rank = xp.arange(m, dtype=xp.int64) - xp.searchsorted(pos, pos, side="left")
    rounds = int(to_numpy(rank.max())) + 1
    if rounds > max_rounds:
        pos, vals = _combine_runs(xp, ufunc, pos, vals)
        rounds = 1
    if rounds == 1:
        flat[pos] = ufunc(flat[pos], vals)
    else:
        by_rank = xp.argsort(rank, kind="stable")
        pos, vals = pos[by_rank], vals[by_rank]
        ends = to_numpy(xp.cumsum(xp.bincount(rank, minlength=rounds))).tolist()
        start = 0
        for end in ends:
            p = pos[start:end]
            flat[p] = ufunc(flat[p], vals[start:end])
            start = end
    return flat.reshape(out.shape)


def _combine_runs(xp: Any, ufunc: Any, pos: Any, vals: Any) -> tuple[Any, Any]:
    """For sorted ``pos``: each distinct position once, with its run of ``vals`` combined by
    ``ufunc`` left to right (a Hillis-Steele segmented inclusive scan, read at run ends)."""
    m = int(pos.shape[0])
    same_as_prev = pos[1:] == pos[:-1]
    true = xp.ones((1,), dtype=bool)
    starts = xp.concatenate([true, ~same_as_prev])
    incl, flag = vals, starts
    s = 1
    while s < m:
        step = xp.where(flag[s:], incl[s:], ufunc(incl[:-s], incl[s:]))
        incl = xp.concatenate([incl[:s], step])
        flag = xp.concatenate([flag[:s], flag[s:] | flag[:-s]])
        s *= 2
    last = xp.concatenate([~same_as_prev, true])
    return pos[last], incl[last]
