"""Descriptive statistics of ``scipy.stats`` that ``jax.scipy.stats`` has: ``mode``,
``rankdata`` and ``sem``.

Each works along one axis: the axis is moved last and a function of one 1-D row is mapped
over the others with ``vmap`` (so they also work under ``jit`` and ``vmap``). Ranks and modes
are piecewise constant (no derivative); ``sem`` is differentiable.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.stats import rankdata
    >>> rankdata(np.array([10, 30, 20, 20]))
    array([1. , 4. , 2.5, 2.5])
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy

import funcgrad.numpy as fnp
from funcgrad.api_vmap import vmap
from funcgrad.avals import get_aval
from funcgrad.core import Tracer
from funcgrad.ops.elementwise import stop_gradient

__all__ = ["ModeResult", "mode", "rankdata", "sem"]

_NAN_POLICIES = ("propagate", "omit", "raise")
_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


class ModeResult(NamedTuple):
    """The result of :func:`mode`: the modal values and how often each occurs."""

    mode: Any
    count: Any


def _check_nan_policy(name: str, a: Any, nan_policy: str) -> None:
    if nan_policy not in _NAN_POLICIES:
        raise ValueError(f"{name}: nan_policy must be one of {_NAN_POLICIES}, got "
                         f"{nan_policy!r}")
    if nan_policy != "raise" or not fnp.issubdtype(get_aval(a).dtype, fnp.inexact):
        return
    if isinstance(a, Tracer):
        raise ValueError(f"{name}: nan_policy='raise' needs concrete values (it cannot look "
                         "for nans in a traced array); check outside jit/vmap/grad, or use "
                         "'propagate' or 'omit'")
    if bool(fnp.any(fnp.isnan(a))):
        raise ValueError(f"{name}: the input contains nan values (nan_policy='raise')")


def _rows(a: Any, axis: int | None) -> tuple[Any, tuple[int, ...]]:
    """``a`` as ``(rows, n)`` with ``axis`` last (flattened for ``axis=None``) and the
    shape of the other axes."""
    if axis is None:
        return fnp.reshape(a, (1, a.size)), ()
    a = fnp.moveaxis(a, axis, -1)
    batch = tuple(a.shape[:-1])
    return fnp.reshape(a, (int(numpy.prod(batch)), a.shape[-1])), batch


def _norm_axis(name: str, axis: Any, ndim: int) -> int | None:
    if axis is None:
        return None
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of dimension "
                         f"{ndim}")
    return axis % ndim


def _mode_row(row: Any, omit: bool) -> tuple[Any, Any]:
    srt = fnp.sort(row)
    counts = fnp.searchsorted(srt, srt, side="right") - fnp.searchsorted(srt, srt, side="left")
    if omit:
        counts = fnp.where(fnp.isnan(srt), -1, counts)
    i = fnp.argmax(counts)  # the first maximum: the smallest of the most common values
    count = counts[i]
    if omit:  # an all-nan row: nan, count 0
        return fnp.where(count < 0, numpy.nan, srt[i]), fnp.maximum(count, 0)
    return srt[i], count


def mode(a: Any, axis: Any = 0, nan_policy: str = "propagate", keepdims: bool = False
         ) -> ModeResult:
    """The most common value along ``axis`` (the smallest of equally common ones) and its
    count, as ``scipy.stats.mode``: ``axis=None`` looks at every element. With
    ``nan_policy="propagate"`` nan counts as a value (as SciPy); ``"omit"`` leaves nans out.
    Values keep ``a``'s dtype, counts are int64; an empty axis gives nan with count 0.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import mode
        >>> mode(np.array([[1, 2, 1, 3], [3, 1, 3, 2], [1, 2, 2, 3]]))
        ModeResult(mode=array([1, 2, 1, 3]), count=array([2, 2, 1, 2]))
    """
    a = fnp.asarray(a)
    if get_aval(a).dtype.kind == "c":
        raise TypeError("mode: complex input is not supported")
    _check_nan_policy("mode", a, nan_policy)
    a = fnp.atleast_1d(a)
    axis = _norm_axis("mode", axis, a.ndim)
    rows, batch = _rows(stop_gradient(a), axis)
    if a.size == 0:  # as SciPy: nan modes, float counts of 0
        vals = fnp.full(rows.shape[:-1], numpy.nan)
        counts = fnp.zeros(rows.shape[:-1])
    else:
        omit = nan_policy == "omit" and fnp.issubdtype(a.dtype, fnp.inexact)
        vals, counts = vmap(lambda r: _mode_row(r, omit))(rows)
        counts = counts.astype(fnp.int64)
    if axis is None:
        shape = (1,) * a.ndim if keepdims else ()
    elif keepdims:
        shape = batch[:axis] + (1,) + batch[axis:]
    else:
        shape = batch
    return ModeResult(fnp.reshape(vals, shape), fnp.reshape(counts, shape))


def _rank_row(row: Any, method: str, omit: bool) -> Any:
    srt = fnp.sort(row)
    if method == "ordinal":
        order = fnp.argsort(row, stable=True)
        ranks = fnp.argsort(order, stable=True).astype(fnp.float64) + 1.0
    else:
        lo = fnp.searchsorted(srt, row, side="left")
        hi = fnp.searchsorted(srt, row, side="right")
        if method == "min":
            ranks = lo + 1.0
        elif method == "max":
            ranks = hi + 0.0
        elif method == "average":
            ranks = 0.5 * (lo + 1.0 + hi)
        else:  # dense
            new = fnp.concatenate([fnp.ones((1,), bool), srt[1:] != srt[:-1]])
            ranks = fnp.cumsum(new)[lo] + 0.0
    ranks = ranks.astype(fnp.float64)
    nan = fnp.isnan(row)
    if omit:
        return fnp.where(nan, numpy.nan, ranks)
    return fnp.where(fnp.any(nan), numpy.nan, ranks)


def rankdata(a: Any, method: str = "average", *, axis: Any = None,
             nan_policy: str = "propagate") -> Any:
    """Ranks of the data, from 1, as ``scipy.stats.rankdata``: ties get the ``"average"``,
    ``"min"``, ``"max"``, ``"dense"`` rank, or ``"ordinal"`` (order of appearance).
    ``axis=None`` ranks the flattened array (a 1-D result). A row with a nan is all nan
    (``nan_policy="propagate"``); ``"omit"`` ranks the other entries and leaves nan at the
    nans. Ranks are float64 for every method (SciPy gives int64 for the integer methods when
    there is no nan; JAX its default float).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import rankdata
        >>> rankdata(np.array([[0, 2], [3, 2]]), method="min", axis=1)
        array([[1., 2.],
               [2., 1.]])
    """
    if method not in _RANK_METHODS:
        raise ValueError(f"rankdata: unknown method {method!r}; expected one of "
                         f"{_RANK_METHODS}")
    a = fnp.asarray(a)
    if get_aval(a).dtype.kind == "c":
        raise TypeError("rankdata: complex input is not supported")
    _check_nan_policy("rankdata", a, nan_policy)
    if a.ndim == 0 and axis is None:
        a = fnp.reshape(a, (1,))
    axis = _norm_axis("rankdata", axis, max(a.ndim, 1))
    a = fnp.atleast_1d(stop_gradient(a))
    if not fnp.issubdtype(a.dtype, fnp.inexact):
        # Integers and bools have no nan; compare them exactly in their own type.
        omit = False
    else:
        omit = nan_policy == "omit"
    rows, batch = _rows(a, axis)
    if rows.shape[-1] == 0:
        ranks = fnp.zeros(rows.shape, fnp.float64)
    else:
        ranks = vmap(lambda r: _rank_row(r, method, omit))(rows)
    if axis is None:
        return fnp.reshape(ranks, (-1,))
    return fnp.moveaxis(fnp.reshape(ranks, batch + (rows.shape[-1],)), -1, axis)


def sem(a: Any, axis: Any = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False) -> Any:
    """Standard error of the mean, ``std(a, ddof=ddof) / sqrt(n)`` along ``axis`` (all
    elements for ``axis=None``), as ``scipy.stats.sem``; ``nan_policy="omit"`` leaves nans
    out (``n`` counts the rest). float32 stays float32, integers give float64.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import sem
        >>> round(float(sem(np.array([2, 4, 1, 1, 3, 4, 4, 2, 3]))), 12)
        0.408248290464
    """
    a = fnp.asarray(a)
    _check_nan_policy("sem", a, nan_policy)
    if not fnp.issubdtype(a.dtype, fnp.inexact):
        a = a.astype(fnp.float64)
    if a.ndim == 0:
        a = fnp.reshape(a, (1,))
    axis = _norm_axis("sem", axis, a.ndim)
    if nan_policy == "omit":
        n = fnp.sum(~fnp.isnan(a), axis=axis, keepdims=keepdims).astype(a.dtype)
        return fnp.nanstd(a, axis=axis, ddof=ddof, keepdims=keepdims) / fnp.sqrt(n)
    n = a.size if axis is None else a.shape[axis]
    return fnp.std(a, axis=axis, ddof=ddof, keepdims=keepdims) / numpy.sqrt(n).astype(a.dtype)
