"""funcgrad.numpy: set routines (``unique``, ``isin``, ``intersect1d`` ...), NumPy 2 API.

Results whose length depends on the values (``unique``, ``intersect1d``, ...) need a concrete
input, or a static ``size=`` (with ``fill_value=`` for the padding) as in ``jax.numpy``: then
they trace under ``jit``/``vmap``. Everything is built on one stable sort, so the returned
values are gathered from the input and carry its derivative; indices and counts are int64
and carry none.

Example:
    >>> import numpy as np, funcgrad.numpy as fnp
    >>> fnp.unique(np.array([3, 1, 3, 2]), return_counts=True)
    (array([1, 2, 3]), array([1, 1, 2]))
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy

import funcgrad.numpy as fnp
import funcgrad.ops.sorting as _sorting
from funcgrad.backend import device_of, operator_index, to_numpy
from funcgrad.core import Tracer, concrete_or_error
from funcgrad.errors import AxisError
from funcgrad.numpy._reductions import _axis1, _cast
from funcgrad.numpy._statistics import _arr, _av, _device_xp, _searchsorted1d, _sl
from funcgrad.ops.elementwise import stop_gradient

__all__ = [
    "unique", "unique_values", "unique_counts", "unique_inverse", "unique_all", "isin",
    "intersect1d", "union1d", "setdiff1d", "setxor1d",
]

_I64 = numpy.dtype("int64")


class UniqueAllResult(NamedTuple):
    """``unique_all``'s result (NumPy's field names)."""

    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class UniqueCountsResult(NamedTuple):
    """``unique_counts``'s result."""

    values: Any
    counts: Any


class UniqueInverseResult(NamedTuple):
    """``unique_inverse``'s result."""

    values: Any
    inverse_indices: Any


def _size_arg(name: str, size: Any) -> int | None:
    if size is None:
        return None
    try:
        s = operator_index(concrete_or_error(size, f"{name}: size"))
    except TypeError:
        raise TypeError(f"{name}: size must be an int, got {type(size).__name__}") from None
    if s < 0:
        raise ValueError(f"{name}: size must be non-negative, got {s}")
    return s


def _count(name: str, mask: Any, what: str) -> int:
    """The concrete number of True entries of ``mask`` (the output length), or a clear error."""
    c = concrete_or_error(
        fnp.sum(mask),
        f"fnp.{name}: {what} sets the output shape, so the input must be concrete; pass a "
        f"static size= (and optionally fill_value=) to use fnp.{name} under jit/vmap. It",
    )
    return int(numpy.asarray(to_numpy(c)))


def _positions(mask: Any, size: int) -> Any:
    """Indices of the first ``size`` True entries of the 1-d ``mask`` (padded with 0)."""
    n = _av(mask).shape[0]
    if n == 0:
        return _device_xp(mask).zeros(size, dtype=_I64)
    order = fnp.argsort(fnp.logical_not(mask), kind="stable")
    if size <= n:
        return _sl(order, 0, size, 0)
    pad = _device_xp(mask).zeros(size - n, dtype=_I64)
    return fnp.concatenate([order, pad])


def _valid(count: Any, size: int, like: Any) -> Any:
    return fnp.less(_device_xp(like).arange(size, dtype=_I64), count)


def _fill(values: Any, valid: Any, fill_value: Any, axis: int = 0) -> Any:
    """Entries past the valid ones replaced by ``fill_value`` (default: the first entry, the
    smallest value; 0 when no entry is valid, as in JAX)."""
    va = _av(values)
    if va.shape[axis] == 0:
        return values
    if fill_value is None:
        fill = fnp.where(_sl(valid, 0, 1, 0), _sl(values, 0, 1, axis),
                         _device_xp(values).zeros((), dtype=va.dtype))
    else:
        # on the values' device (asarray of Python data alone would use the default one)
        fill = (fnp.asarray(fill_value, dtype=va.dtype) if isinstance(fill_value, Tracer)
                or device_of(fill_value) not in (None, "cpu")
                else _device_xp(values).asarray(fill_value, dtype=va.dtype))
    shape = [1] * va.ndim
    shape[axis] = va.shape[axis]
    return fnp.where(fnp.reshape(valid, tuple(shape)), values, fill)


def _unique(name: str, ar: Any, return_index: bool, return_inverse: bool, return_counts: bool,
            axis: Any, equal_nan: bool, size: Any, fill_value: Any) -> tuple:
    """(values, index, inverse, counts, number of uniques): the sort-based unique of ``ar``
    along ``axis``."""
    size = _size_arg(name, size)
    x = _arr(name, ar)
    xa = _av(x)
    if axis is None:
        flat = fnp.ravel(x)
        ax = 0
        cols = [stop_gradient(flat)]
        src = flat
    else:
        if xa.ndim == 0:
            raise AxisError(f"{name}: axis {axis} is out of bounds for a 0-d array")
        ax = _axis1(name, axis, xa.ndim)
        src = fnp.moveaxis(x, ax, 0)
        n0 = xa.shape[ax]
        rows = fnp.reshape(stop_gradient(src), (n0, -1)) if n0 else None
        k = _av(rows).shape[1] if rows is not None else 0
        cols = [fnp.take(rows, j, axis=1) for j in range(k)]
        if n0 and not cols:
            # slices with no elements are all equal: one unique slice, as NumPy 2 gives
            cols = [_device_xp(src).zeros(n0, dtype=_I64)]
    n = _av(src).shape[0]
    if n == 0 and size and fill_value is None:
        raise ValueError(f"fnp.{name}: an empty input padded to size={size} needs a "
                         "fill_value= (there is no first entry to pad with)")
    if n == 0:
        u = size if size is not None else 0
        values = fnp.moveaxis(_device_xp(src).zeros((u,) + _av(src).shape[1:],
                                                    dtype=xa.dtype), 0, ax)
        if size and fill_value is not None:
            values = fnp.full_like(values, fill_value)
        z = _device_xp(src).zeros(u, dtype=_I64)
        inv = _device_xp(src).zeros(xa.shape if axis is None else (0,), dtype=_I64)
        return values, z, inv, z, 0
    iota = _device_xp(src).arange(n, dtype=_I64)
    outs = _sorting.sort(list(cols) + [iota], 0, True, len(cols))
    scols, perm = outs[:-1], outs[-1]
    differs = None
    for c in scols:
        a, b = _sl(c, 1, None, 0), _sl(c, 0, n - 1, 0)
        d = fnp.not_equal(a, b)
        if equal_nan and _av(c).dtype.kind in "fc":
            d = fnp.logical_and(d, fnp.logical_not(fnp.logical_and(fnp.isnan(a), fnp.isnan(b))))
        differs = d if differs is None else fnp.logical_or(differs, d)
    mask = fnp.concatenate([_device_xp(src).ones(1, dtype=bool), differs])
    if size is None:
        u = _count(name, mask, "the number of unique values")
    else:
        u = size
    starts = _positions(mask, u)
    first = fnp.take(perm, starts)
    values = fnp.take(src, first, axis=0)
    index = first
    n_unique = fnp.sum(mask)
    if size is not None:
        valid = _valid(n_unique, u, mask)
        values = _fill(values, valid, fill_value)
        index = fnp.where(valid, index, _sl(index, 0, 1, 0))  # JAX pads with the first
    values = fnp.moveaxis(values, 0, ax) if ax else values
    inverse = counts = None
    group = fnp.subtract(fnp.cumsum(_cast(mask, _I64)), 1)
    if return_inverse:
        inverse = _sorting.scatter_add_along_axis(group, perm, 0, n)
        if axis is None:
            inverse = fnp.reshape(inverse, xa.shape)
    if return_counts:
        ones = _device_xp(src).ones(n, dtype=_I64)
        counts = _sorting.scatter_add_along_axis(ones, group, 0, u)
    return values, index, inverse, counts, n_unique


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: Any = None, *, equal_nan: bool = True,
           sorted: bool = True, size: Any = None, fill_value: Any = None) -> Any:
    """The sorted unique elements of ``ar`` (``numpy.unique``), with optional first
    indices, inverse (``ar``'s shape when ``axis`` is None) and counts.

    ``axis`` picks unique slices along it. The number of uniques must be concrete, or give a
    static ``size=``: the first ``size`` uniques, padded with ``fill_value`` (default the
    smallest unique) and index/count 0, as in ``jax.numpy``. ``sorted=False`` still sorts.

    Example:
        >>> import numpy as np
        >>> unique(np.array([3., 1., 3., 2.]), return_index=True, return_inverse=True)
        (array([1., 2., 3.]), array([1, 3, 0]), array([2, 0, 2, 1]))
        >>> unique(np.array([3, 1, 3]), size=4, fill_value=-1)
        array([ 1,  3, -1, -1])
    """
    v, i, inv, c, _ = _unique("unique", ar, return_index, return_inverse, return_counts, axis,
                           equal_nan, size, fill_value)
    out = [v]
    if return_index:
        out.append(i)
    if return_inverse:
        out.append(inv)
    if return_counts:
        out.append(c)
    return out[0] if len(out) == 1 else tuple(out)


def unique_values(x: Any, /, *, size: Any = None, fill_value: Any = None) -> Any:
    """The unique elements of ``x``, NaNs distinct (``numpy.unique_values``); sorted.

    Example:
        >>> import numpy as np
        >>> unique_values(np.array([2, 1, 2]))
        array([1, 2])
    """
    return _unique("unique_values", x, False, False, False, None, False, size, fill_value)[0]


def unique_counts(x: Any, /, *, size: Any = None, fill_value: Any = None) -> Any:
    """``(values, counts)`` of ``x``'s unique elements (``numpy.unique_counts``).

    Example:
        >>> import numpy as np
        >>> unique_counts(np.array([2, 1, 2])).counts
        array([1, 2])
    """
    v, _, _, c, _ = _unique("unique_counts", x, False, False, True, None, False, size, fill_value)
    return UniqueCountsResult(v, c)


def unique_inverse(x: Any, /, *, size: Any = None, fill_value: Any = None) -> Any:
    """``(values, inverse_indices)`` with ``values[inverse_indices] == x``
    (``numpy.unique_inverse``; ``inverse_indices`` has ``x``'s shape).

    Example:
        >>> import numpy as np
        >>> unique_inverse(np.array([[2, 1], [2, 5]])).inverse_indices
        array([[1, 0],
               [1, 2]])
    """
    v, _, inv, _, _ = _unique("unique_inverse", x, False, True, False, None, False, size,
                           fill_value)
    return UniqueInverseResult(v, inv)


def unique_all(x: Any, /, *, size: Any = None, fill_value: Any = None) -> Any:
    """``(values, indices, inverse_indices, counts)`` (``numpy.unique_all``).

    Example:
        >>> import numpy as np
        >>> unique_all(np.array([2, 1, 2])).indices
        array([1, 0])
    """
    v, i, inv, c, _ = _unique("unique_all", x, True, True, True, None, False, size, fill_value)
    return UniqueAllResult(v, i, inv, c)


# ---------------------------------------------------------------------------------------------
# Membership and set operations


_COMPARE_ALL = 1 << 14


def _in1d(element: Any, test: Any) -> Any:
    """Whether each element of ``element`` occurs in ``test`` (any shapes), as a bool array."""
    e, t = stop_gradient(element), fnp.ravel(stop_gradient(test))
    ea, ta = _av(e), _av(t)
    m = ta.shape[0]
    if m == 0:
        return _device_xp(e).zeros(ea.shape, dtype=bool)
    if ea.size * m <= _COMPARE_ALL:
        return fnp.any(fnp.equal(fnp.expand_dims(e, -1), t), axis=-1)
    s = fnp.sort(t)
    pos = fnp.minimum(_searchsorted1d(s, e, "left"), m - 1)
    return fnp.equal(fnp.take(s, pos), e)


def isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False,
         *, kind: Any = None, method: str = "auto") -> Any:
    """Whether each element of ``element`` is in ``test_elements`` (``numpy.isin``).

    ``kind`` (NumPy's) and ``method`` (JAX's: ``'auto'``, ``'compare_all'``,
    ``'binary_search'``, ``'sort'``) choose an algorithm; the results are the same.

    Shape-static, so it works under ``jit`` and ``vmap``. NaN is never found, as in NumPy.

    Example:
        >>> import numpy as np
        >>> isin(np.array([[1, 2], [3, 4]]), [2, 3], invert=True)
        array([[ True, False],
               [False,  True]])
    """
    if kind not in (None, "sort", "table"):
        raise ValueError(f"isin: Invalid kind: {kind!r}. Please use None, 'sort' or 'table'.")
    if method not in ("auto", "compare_all", "binary_search", "sort"):
        raise ValueError(f"isin: method={method!r} not recognized; expected 'auto', "
                         "'compare_all', 'binary_search' or 'sort'")
    e = _arr("isin", element, test_elements if hasattr(test_elements, "shape") else None)
    t = _arr("isin", test_elements, e)
    if kind == "table" and not all(_av(v).dtype.kind in "biu" for v in (e, t)):
        raise ValueError("isin: The 'table' method is only supported for boolean or integer "
                         "arrays. Please select 'sort' or None for kind.")
    r = _in1d(e, t)
    return fnp.logical_not(r) if invert else r


def _compress(name: str, values: Any, mask: Any, size: int | None, fill_value: Any) -> Any:
    """``values[mask]`` for 1-d arrays, with a concrete count or a static ``size``."""
    if size is None:
        u = _count(name, mask, "the number of elements in the result")
    else:
        u = size
    pos = _positions(mask, u)
    out = fnp.take(values, pos) if _av(values).shape[0] else _device_xp(values).zeros(
        u, dtype=_av(values).dtype)
    if size is not None:
        out = _fill(out, _valid(fnp.sum(mask), u, mask), fill_value)
    return out


def _uniq_sorted(name: str, ar: Any) -> tuple[Any, Any]:
    """(sorted copy of the flattened ``ar``, mask of the first of each run of equal values)."""
    s = fnp.sort(fnp.ravel(_arr(name, ar)))
    n = _av(s).shape[0]
    if n == 0:
        return s, _device_xp(s).zeros(0, dtype=bool)
    a, b = _sl(s, 1, None, 0), _sl(s, 0, n - 1, 0)
    differs = fnp.not_equal(a, b)
    if _av(s).dtype.kind in "fc":
        # NumPy's set operations unique their inputs with unique(equal_nan=True): the NaNs
        # (sorted last) are one value, so setdiff1d/setxor1d keep one NaN per input.
        differs = fnp.logical_and(differs, fnp.logical_not(
            fnp.logical_and(fnp.isnan(a), fnp.isnan(b))))
    first = fnp.concatenate([_device_xp(s).ones(1, dtype=bool), differs])
    return s, first


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False, return_indices: bool = False,
                *, size: Any = None, fill_value: Any = None) -> Any:
    """Sorted unique values in both arrays (``numpy.intersect1d``); ``return_indices`` adds
    the first-occurrence indices in each flattened input.

    Example:
        >>> import numpy as np
        >>> intersect1d(np.array([1, 3, 4, 3]), np.array([3, 1, 2, 1]))
        array([1, 3])
    """
    size = _size_arg("intersect1d", size)
    a1 = fnp.ravel(_arr("intersect1d", ar1, ar2 if hasattr(ar2, "shape") else None))
    a2 = fnp.ravel(_arr("intersect1d", ar2, a1))
    # NumPy intersects the two concatenated: the values have the promoted dtype.
    common = fnp.result_type(a1, a2)
    a1, a2 = _cast(a1, common), _cast(a2, common)
    n1, n2 = _av(a1).shape[0], _av(a2).shape[0]
    if assume_unique:
        return _intersect1d_assume_unique(a1, a2, return_indices, size, fill_value)
    if return_indices:
        u1, i1, ok1 = _unique_full("intersect1d", a1)
        u2, i2, _ = _unique_full("intersect1d", a2)
        s1, m1 = u1, fnp.logical_and(ok1, _in1d(u1, u2))
    else:
        s1, first = _uniq_sorted("intersect1d", a1)
        m1 = fnp.logical_and(first, _in1d(s1, a2)) if _av(s1).shape[0] else first
    vals = _compress("intersect1d", s1, m1, size, fill_value)
    if not return_indices:
        return vals
    u = _av(vals).shape[0]
    pos1 = _positions(m1, u)
    idx1 = fnp.take(i1, pos1) if _av(i1).shape[0] else _device_xp(i1).zeros(u, dtype=_I64)
    if _av(u2).shape[0]:
        pos2 = fnp.minimum(_searchsorted1d(u2, vals, "left"), _av(u2).shape[0] - 1)
        idx2 = fnp.take(i2, pos2)
    else:
        idx2 = _device_xp(i1).zeros(u, dtype=_I64)
    if size is not None:
        # Padding indices are out of bounds (the input's length), as in JAX.
        valid = _valid(fnp.sum(m1), u, m1)
        idx1, idx2 = fnp.where(valid, idx1, n1), fnp.where(valid, idx2, n2)
    return vals, idx1, idx2


def _intersect1d_assume_unique(a1: Any, a2: Any, return_indices: bool, size: int | None,
                               fill_value: Any) -> Any:
    """NumPy's ``assume_unique`` intersection: equal neighbours of the stably sorted
    concatenation (so repeats within an input come out as NumPy gives them)."""
    n1, n2 = _av(a1).shape[0], _av(a2).shape[0]
    n = n1 + n2
    aux = fnp.concatenate([a1, a2])
    order = fnp.argsort(stop_gradient(aux), kind="stable")
    sv = fnp.take(aux, order) if n else aux
    m = max(n - 1, 0)  # candidate pairs (sv[i], sv[i + 1])
    keep = (fnp.equal(_sl(sv, 1, None, 0), _sl(sv, 0, m, 0)) if n
            else _device_xp(aux).zeros(0, dtype=bool))
    vals = _compress("intersect1d", _sl(sv, 0, m, 0), keep, size, fill_value)
    if not return_indices:
        return vals
    idx1 = _compress("intersect1d", _sl(order, 0, m, 0), keep, size, n1)
    idx2 = fnp.subtract(_compress("intersect1d", _sl(order, 1, None, 0) if n else order, keep,
                                  size, None), n1)
    if size is not None:
        idx2 = fnp.where(_valid(fnp.sum(keep), size, keep), idx2, n2)
    return vals, idx1, idx2


def _unique_full(name: str, a: Any) -> tuple[Any, Any, Any]:
    """(the sorted uniques of 1-d ``a`` padded to len(a), first indices, valid mask):
    shape-static, so it traces."""
    n = _av(a).shape[0]
    if n == 0:
        return a, _device_xp(a).zeros(0, dtype=_I64), _device_xp(a).zeros(0, dtype=bool)
    v, i, _, _, nu = _unique(name, a, True, False, False, None, True, n, None)
    ok = _valid(nu, n, a)
    # Pad with the largest unique so the padded array stays sorted (for searchsorted).
    return fnp.where(ok, v, fnp.max(v)), i, ok


def union1d(ar1: Any, ar2: Any, *, size: Any = None, fill_value: Any = None) -> Any:
    """Sorted unique values in either array (``numpy.union1d``).

    Example:
        >>> import numpy as np
        >>> union1d(np.array([-1, 0, 1]), np.array([-2, 0, 2]))
        array([-2, -1,  0,  1,  2])
    """
    # NumPy's unique(concatenate((ar1, ar2), axis=None)): a Python scalar operand promotes
    # weakly there (union1d(uint8 array, 3) is uint8), so it stays a Python scalar here.
    py = (bool, int, float, complex)
    a1 = ar1 if type(ar1) in py else _arr("union1d", ar1, ar2 if hasattr(ar2, "shape") else None)
    a2 = ar2 if type(ar2) in py else _arr("union1d", ar2, a1 if hasattr(a1, "shape") else None)
    a = fnp.concatenate((a1, a2), axis=None)
    return _unique("union1d", a, False, False, False, None, True, size, fill_value)[0]


def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: Any = None,
              fill_value: Any = None) -> Any:
    """Values of ``ar1`` not in ``ar2`` (``numpy.setdiff1d``): sorted and unique, or in
    ``ar1``'s order when ``assume_unique``.

    Example:
        >>> import numpy as np
        >>> setdiff1d(np.array([1, 2, 3, 2, 4, 1]), np.array([3, 4, 5, 6]))
        array([1, 2])
    """
    size = _size_arg("setdiff1d", size)
    a2 = _arr("setdiff1d", ar2, ar1 if hasattr(ar1, "shape") else None)
    if assume_unique:
        s = fnp.ravel(_arr("setdiff1d", ar1, a2))
        keep = fnp.logical_not(_in1d(s, a2))
    else:
        s, first = _uniq_sorted("setdiff1d", _arr("setdiff1d", ar1, a2))
        keep = fnp.logical_and(first, fnp.logical_not(_in1d(s, a2))) if _av(s).shape[0] \
            else first
    # JAX pads setdiff1d with 0 by default (not the smallest value, as unique does).
    return _compress("setdiff1d", s, keep, size, 0 if fill_value is None else fill_value)


def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: Any = None,
             fill_value: Any = None) -> Any:
    """Sorted unique values in exactly one of the arrays (``numpy.setxor1d``).

    Example:
        >>> import numpy as np
        >>> setxor1d(np.array([1, 2, 3, 2, 4]), np.array([2, 3, 5, 7, 5]))
        array([1, 4, 5, 7])
    """
    size = _size_arg("setxor1d", size)
    a1 = fnp.ravel(_arr("setxor1d", ar1, ar2 if hasattr(ar2, "shape") else None))
    a2 = fnp.ravel(_arr("setxor1d", ar2, a1))
    if not assume_unique:
        s1, f1 = _uniq_sorted("setxor1d", a1)
        s2, f2 = _uniq_sorted("setxor1d", a2)
    else:
        s1, s2 = a1, a2
        f1 = _device_xp(a1).ones(_av(a1).shape, dtype=bool)
        f2 = _device_xp(a2).ones(_av(a2).shape, dtype=bool)
    aux = fnp.concatenate([s1, s2])
    n = _av(aux).shape[0]
    if n == 0:
        return _compress("setxor1d", aux, _device_xp(aux).zeros(0, dtype=bool), size,
                         fill_value)
    # Duplicates within one input are masked out first: sort (value, not-first) so the
    # first copies of equal values sit together.
    live = fnp.concatenate([f1, f2])
    iota = _device_xp(aux).arange(n, dtype=_I64)
    sv, sdead, _ = _sorting.sort([aux, fnp.astype(fnp.logical_not(live), _I64), iota], 0,
                                 True, 2)
    slive = fnp.equal(sdead, 0)
    # Among live entries, a value is in the xor iff it is live and no other live copy exists:
    # live copies of one value are adjacent (dead ones sort after them).
    prev_same = fnp.concatenate([
        _device_xp(aux).zeros(1, dtype=bool),
        fnp.logical_and(fnp.equal(_sl(sv, 1, None, 0), _sl(sv, 0, n - 1, 0)),
                        _sl(slive, 0, n - 1, 0))])
    next_same = fnp.concatenate([
        fnp.logical_and(fnp.equal(_sl(sv, 0, n - 1, 0), _sl(sv, 1, None, 0)),
                        _sl(slive, 1, None, 0)),
        _device_xp(aux).zeros(1, dtype=bool)])
    keep = fnp.logical_and(slive, fnp.logical_not(fnp.logical_or(prev_same, next_same)))
    return _compress("setxor1d", sv, keep, size, fill_value)
