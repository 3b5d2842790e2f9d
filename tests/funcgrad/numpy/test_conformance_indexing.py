"""Indexing (``x[idx]`` on traced arrays, ``x.at[idx].op(v)``), take and friends, against NumPy.

Indices mix every kind NumPy has: integers (negative, out of range), slices with any step
(negative, zero), ``None``, ``...``, integer arrays and lists (in and out of range), boolean
masks (matching or not). ``x[idx]`` is tested through ``funcgrad.numpy._getitem`` (what traced
arrays call) eagerly, under ``jit`` with the index arrays traced, and under ``vmap``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers import assert_allclose, dev
from hypothesis import assume, given
from hypothesis import strategies as st

import funcgrad
import funcgrad.numpy as fnp
from tests.funcgrad.numpy import (
    ALL_DTYPES,
    REAL_DTYPES,
    array_of,
    arrays,
    axis_for,
    check_like_numpy,
    shapes,
)


@st.composite
def indices(draw: Any, shape: tuple[int, ...], invalid: bool = True) -> tuple[tuple, bool]:
    """(a NumPy index for an array of ``shape``, whether its int arrays are all in range)."""
    nd = len(shape)
    parts: list[Any] = []
    dim = 0
    in_range = True
    ellipsis = False
    for _ in range(draw(st.integers(0, nd + 1))):
        kind = draw(st.sampled_from(["int", "slice", "slice", "none", "ellipsis", "array",
                                     "list", "mask"]))
        if kind == "none":
            parts.append(None)
            continue
        if kind == "ellipsis":
            if ellipsis and not invalid:
                continue
            ellipsis = True
            parts.append(Ellipsis)
            continue
        size = shape[dim] if dim < nd else 1
        if kind == "slice":
            def bound(size: int = size) -> Any:
                return draw(st.one_of(st.none(), st.integers(-size - 2, size + 2)))
            step = draw(st.sampled_from([None, 1, 2, 3, -1, -2] + ([0] if invalid else [])))
            parts.append(slice(bound(), bound(), step))
        elif kind == "int":
            hi = size if invalid else size - 1
            if size == 0 and not invalid:
                continue
            parts.append(draw(st.integers(-size - (1 if invalid else 0), hi)))
        elif kind in ("array", "list"):
            ishape = draw(st.sampled_from([(2,), (0,), (2, 2), (1, 3), ()]))
            n = int(np.prod(ishape))
            if size == 0 and n:
                if not invalid:
                    continue
                in_range = False
            lo, hi = -size, size - 1
            if invalid and draw(st.integers(0, 9)) == 0:
                hi += 1
                in_range = False
            vals = [draw(st.integers(lo, hi)) if hi >= lo else 0 for _ in range(n)]
            dt = draw(st.sampled_from(["int64", "int32", "uint8"]))
            if dt == "uint8":
                vals = [v % size if size else 0 for v in vals]
            arr = np.array(vals, dtype=dt).reshape(ishape)
            parts.append(arr.tolist() if kind == "list" and arr.ndim else arr)
        else:  # mask
            k = draw(st.integers(1, max(1, min(2, nd - dim))))
            mshape = shape[dim:dim + k] if dim + k <= nd else (1,) * k
            if mshape != shape[dim:dim + k] or nd - dim < k:
                in_range = False
            if invalid and draw(st.integers(0, 9)) == 0 and mshape:
                mshape = (mshape[0] + 1,) + mshape[1:]
            parts.append(draw(arrays(np.dtype(bool), mshape)))
            dim += k
            continue
        dim += 1
    if len(parts) == 1 and draw(st.booleans()):
        return parts[0], in_range
    return tuple(parts), in_range


def _split_index(idx: Any) -> tuple[Any, list[np.ndarray]]:
    """(a template, the integer index arrays to pass as traced arguments)."""
    arrs: list[np.ndarray] = []

    def walk(e: Any) -> Any:
        if isinstance(e, np.ndarray) and e.dtype.kind in "iu":
            arrs.append(e)
            return ("__array__", len(arrs) - 1)
        return e

    if type(idx) is tuple:
        return tuple(walk(e) for e in idx), arrs
    return walk(idx), arrs


def _fill(template: Any, arrs: tuple) -> Any:
    def put(e: Any) -> Any:
        if type(e) is tuple and len(e) == 2 and e[0] == "__array__":
            return arrs[e[1]]
        return e

    if type(template) is tuple and not (len(template) == 2 and template[0] == "__array__"):
        return tuple(put(e) for e in template)
    return put(template)


@given(array_of(shape=shapes(max_dims=3)), st.data())
def test_getitem(x: np.ndarray, data: st.DataObject) -> None:
    idx, in_range = data.draw(indices(x.shape), "index")
    template, arrs = _split_index(idx)

    def fg(a, *ia):
        return fnp._getitem(a, _fill(template, ia))

    def ref(a, *ia):
        return a[_fill(template, ia)]

    # Traced index arrays cannot be range-checked (they are clamped), so jit/vmap only see
    # in-range indices.
    check_like_numpy(fg, ref, x, *arrs, name="x[idx]", jit=in_range, vmap=in_range,
                     loose_errors=True)


def _broadcast_ref(y: np.ndarray, idx: Any, v: Any) -> np.ndarray:
    # NumPy's ufunc.at misreads lower-rank values broadcast against a multi-dimensional index
    # array (numpy 2.4), so the reference gets them broadcast in full.
    g = np.shape(y[idx])
    return np.broadcast_to(v, g).copy() if np.ndim(v) <= len(g) else v


_UFUNC_AT = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
             "min": np.minimum, "max": np.maximum}


@given(array_of(shape=shapes(min_dims=1, max_dims=3)), st.data(),
       st.sampled_from(("set", "add", "subtract", "multiply", "min", "max", "get")))
def test_at(x: np.ndarray, data: st.DataObject, op: str) -> None:
    idx, in_range = data.draw(indices(x.shape), "index")
    assume(not (op == "subtract" and x.dtype == bool))
    try:
        g = np.shape(x[idx])
    except IndexError as e:
        # Out-of-range integers in .at[] follow JAX (reads clamp, writes drop; docs/numpy.md),
        # test_at_modes checks them: NumPy's IndexError is no reference there.
        assume("out of bounds" not in str(e))
        g = ()
    except Exception:  # noqa: BLE001 - an invalid index: both must raise
        g = ()
    vshape = data.draw(st.sampled_from([g, (), g[1:], g[-1:]]), "values shape")
    v = data.draw(st.one_of(arrays(x.dtype, vshape), st.just(1)), "values")
    template, arrs = _split_index(idx)

    def fg(a, vals, *ia):
        ref = fnp.at(a)[_fill(template, ia)]
        return ref.get() if op == "get" else getattr(ref, op)(vals)

    def ref(a, vals, *ia):
        i = _fill(template, ia)
        if op == "get":
            return a[i]
        y = np.array(a)
        if op == "set":
            y[i] = vals
            return y
        # funcgrad follows ``y[i] += vals`` (the 'same_kind' casting rule), where
        # ``ufunc.at`` would cast unsafely.
        if not np.can_cast(np.result_type(y, vals), y.dtype, "same_kind"):
            raise TypeError("same_kind")
        _UFUNC_AT[op].at(y, i, _broadcast_ref(y, i, vals))
        return y

    if isinstance(v, int):
        check_like_numpy(lambda a, *ia: fg(a, v, *ia), lambda a, *ia: ref(a, v, *ia), x,
                         *arrs, name=f"x.at[idx].{op}", jit=in_range, vmap=in_range,
                         loose_errors=True)
    else:
        check_like_numpy(fg, ref, x, v, *arrs, name=f"x.at[idx].{op}", jit=in_range,
                         vmap=in_range, loose_errors=True)


@given(array_of(), st.data(), st.sampled_from((None, "clip", "wrap")))
def test_take(x: np.ndarray, data: st.DataObject, mode: str | None) -> None:
    axis = data.draw(axis_for(x.ndim, allow_tuple=False), "axis")
    ind = data.draw(st.one_of(
        st.integers(-4, 4),
        st.lists(st.integers(-4, 4), max_size=3),
        arrays(np.dtype("int64"), st.sampled_from([(2,), (2, 2), (), (0,)]), low=-4, high=4),
    ), "indices")
    # (NumPy checks the range only while copying, so an empty ``x`` takes any index)
    assume(x.size or axis is None)
    kw = {} if mode is None else {"mode": mode}
    check_like_numpy(fnp.take, np.take, x, ind, name="take", axis=axis, jit=mode is not None,
                     **kw)


@given(array_of(shape=shapes(min_dims=1)), st.data())
def test_take_along_axis(x: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(st.one_of(st.integers(-x.ndim, x.ndim - 1), st.none()), "axis")
    n = x.size if axis is None else x.shape[axis]
    k = data.draw(st.integers(0, 3), "k")
    ishape = (k,) if axis is None else x.shape[:axis % x.ndim] + (k,) + x.shape[
        axis % x.ndim + 1:]
    ind = data.draw(arrays(np.dtype("int64"), ishape, low=-n, high=max(n - 1, -n)), "indices")
    assume(n or not ind.size)
    check_like_numpy(fnp.take_along_axis, np.take_along_axis, x, ind, name="take_along_axis",
                     axis=axis, vmap=True)


@given(array_of(), st.data())
def test_nonzero_family(x: np.ndarray, data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(("nonzero", "argwhere", "flatnonzero", "count_nonzero")))
    assume(x.ndim or name != "nonzero")  # NumPy deprecates nonzero on 0-d
    check_like_numpy(getattr(fnp, name), getattr(np, name), x, name=name, jit=False)


@given(array_of(), st.data())
def test_compress_extract(x: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(axis_for(x.ndim, allow_tuple=False), "axis")
    n = x.size if axis is None else (x.shape[axis] if x.ndim and -x.ndim <= axis < x.ndim
                                     else 1)
    cond = data.draw(arrays(np.dtype(bool), (data.draw(st.integers(0, n)),)), "condition")
    check_like_numpy(fnp.compress, np.compress, cond, x, name="compress", axis=axis,
                     jit=False)
    mask = data.draw(arrays(np.dtype(bool), x.shape), "mask")
    check_like_numpy(fnp.extract, np.extract, mask, x, name="extract", jit=False)


@given(array_of(shape=shapes(min_dims=2, max_dims=4)), st.data())
def test_diagonal_trace(x: np.ndarray, data: st.DataObject) -> None:
    offset = data.draw(st.integers(-3, 3), "offset")
    a1 = data.draw(st.integers(-x.ndim, x.ndim - 1), "axis1")
    a2 = data.draw(st.integers(-x.ndim - 1, x.ndim), "axis2")
    check_like_numpy(fnp.diagonal, np.diagonal, x, offset, a1, a2, name="diagonal", vmap=True)
    check_like_numpy(fnp.trace, np.trace, x, offset, a1, a2, name="trace", vmap=True)


@given(array_of(shape=shapes(max_dims=3)), st.integers(-3, 3))
def test_diag(x: np.ndarray, k: int) -> None:
    check_like_numpy(fnp.diag, np.diag, x, k, name="diag")


@given(st.integers(0, 4), st.integers(-3, 3), st.one_of(st.none(), st.integers(0, 4)))
def test_tri_indices(n: int, k: int, m: int | None) -> None:
    check_like_numpy(fnp.tril_indices, np.tril_indices, n, k, m, name="tril_indices")
    check_like_numpy(fnp.triu_indices, np.triu_indices, n, k, m, name="triu_indices")
    x = np.zeros((n, m if m is not None else n))
    check_like_numpy(fnp.tril_indices_from, np.tril_indices_from, x, k, name="tril_from",
                     jit=False)
    check_like_numpy(fnp.diag_indices, np.diag_indices, n, name="diag_indices")


@given(st.sampled_from(ALL_DTYPES), st.sampled_from(REAL_DTYPES),
       shapes(max_dims=2, max_side=3), st.data())
def test_select(da: str, db: str, shape: tuple, data: st.DataObject) -> None:
    conds = [data.draw(arrays(np.dtype(bool), shape)) for _ in range(2)]
    choices = [data.draw(arrays(np.dtype(da), shape)), data.draw(arrays(np.dtype(db), shape))]
    default = data.draw(st.sampled_from([0, 1.5, -1]), "default")
    check_like_numpy(lambda c0, c1, x0, x1: fnp.select([c0, c1], [x0, x1], default),
                     lambda c0, c1, x0, x1: np.select([c0, c1], [x0, x1], default),
                     *conds, *choices, name="select", vmap=True)


def test_unsupported_indices_say_so() -> None:
    """Where funcgrad can't follow NumPy it raises, naming the problem (never a wrong value)."""
    x = np.arange(6.0).reshape(2, 3)
    mask = np.array([True, False])
    with pytest.raises(TypeError, match="boolean mask"):
        funcgrad.jit(lambda a, m: a[m])(x, mask)  # the result's shape depends on the values


@pytest.mark.parametrize("shape,index", [
    ((0, 1), (Ellipsis, np.zeros(0, bool))), ((3, 2), (np.zeros((0, 2), bool),)),
    ((3, 2), (np.zeros((3, 0), bool),)), ((3, 2, 4), (1, np.zeros(0, bool), 2)),
    ((3, 2), (np.zeros((0, 5), bool),)),
])
def test_empty_boolean_axis_matches_any_size(shape: tuple, index: tuple) -> None:
    """NumPy lets an empty boolean-mask axis stand against an axis of any size (it selects
    nothing); a non-empty mismatched axis still raises IndexError."""
    x = np.arange(float(np.prod(shape))).reshape(shape)
    check_like_numpy(lambda a: fnp._getitem(a, index), lambda a: a[index], x, name="x[mask]")


@pytest.mark.parametrize("index", [
    True, False, (0, True), (True, 1), (Ellipsis, False), (slice(None), False, 1), (np.True_,),
    (np.array(True), slice(1, None)), (None, False, Ellipsis, True), (True, True),
    (1, Ellipsis, False, slice(0, 2)), (np.array([0, 1]), True), ([1], slice(None), True),
    (np.array([[True, False, True], [False, False, True]]), True),
])
def test_zero_d_boolean_index(index: Any) -> None:
    """A 0-d boolean is NumPy's advanced index over a new length-1 axis (True selects it,
    False nothing): traced, differentiated and batched like NumPy's eager result."""
    x = np.arange(24.0).reshape(2, 3, 4)
    want = x[index]
    assert_allclose(funcgrad.jit(lambda a: a[index])(dev(x)), want)
    ids = np.arange(x.size).reshape(x.shape)[index]
    counts = np.bincount(ids.ravel(), minlength=x.size).reshape(x.shape)
    assert_allclose(funcgrad.grad(lambda a: fnp.sum(a[index] ** 2))(dev(x)), 2 * x * counts)
    assert_allclose(funcgrad.vmap(lambda a: a[index])(dev(x[None])), want[None])


def test_zero_d_boolean_broadcast_errors_as_numpy() -> None:
    x = dev(np.arange(24.0).reshape(2, 3, 4))
    with pytest.raises(IndexError, match="broadcast"):
        funcgrad.jit(lambda a: a[np.array([0, 1]), False, 0])(x)
    with pytest.raises(IndexError, match="boolean index did not match"):
        funcgrad.jit(lambda a: a[True, np.array([True, False, True, True])])(x)
