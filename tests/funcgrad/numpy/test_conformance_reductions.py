"""Reductions, statistics, cumulative ops and sorting: funcgrad.numpy against NumPy.

Random dtypes and shapes (0-d and size-0 included), random ``axis`` (None, int, tuple,
negative, out of range, repeated), ``keepdims``, ``ddof``, ``dtype=``, ``initial=``, Python
scalars and lists; eager, under ``jit`` and under ``vmap``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_allclose, dev, host
from hypothesis import assume, given
from hypothesis import strategies as st

import funcgrad
import funcgrad.numpy as fnp
from tests.funcgrad.numpy import (
    ALL_DTYPES,
    INEXACT_DTYPES,
    NUMERIC_DTYPES,
    REAL_DTYPES,
    array_of,
    axis_for,
    check_like_numpy,
    weak_scalars,
)

REDUCERS = (
    "sum", "prod", "mean", "max", "min", "amax", "amin", "any", "all", "count_nonzero",
    "nansum", "nanprod", "nanmean", "nanmax", "nanmin", "ptp", "median", "average",
)
VAR_LIKE = ("var", "std", "nanvar", "nanstd")


@given(st.sampled_from(REDUCERS), array_of(), st.data(), st.booleans())
def test_reduction(name: str, x: np.ndarray, data: st.DataObject, keepdims: bool) -> None:
    axis = data.draw(axis_for(x.ndim), "axis")
    assume(x.size or axis is None or name != "median")  # NumPy fails to reshape its empty result
    if name == "median" and x.dtype.kind == "c":
        # NumPy divides the middle value by 1 (inf+0j / 1 is nan+infj); funcgrad doesn't.
        x = np.where(np.isfinite(x), x, 0).astype(x.dtype)
    check_like_numpy(getattr(fnp, name), getattr(np, name), x, name=name, vmap=True,
                     axis=axis, keepdims=keepdims)


@given(st.sampled_from(VAR_LIKE), array_of(), st.data(), st.booleans(),
       st.sampled_from([0, 1, 2, 0.5]))
def test_variance(name: str, x: np.ndarray, data: st.DataObject, keepdims: bool,
                  ddof: float) -> None:
    axis = data.draw(axis_for(x.ndim), "axis")
    check_like_numpy(getattr(fnp, name), getattr(np, name), x, name=name, vmap=True,
                     axis=axis, keepdims=keepdims, ddof=ddof)


@given(st.sampled_from(("argmax", "argmin")), array_of(), st.data(), st.booleans())
def test_arg_reduction(name: str, x: np.ndarray, data: st.DataObject, keepdims: bool) -> None:
    axis = data.draw(axis_for(x.ndim, allow_tuple=False), "axis")
    check_like_numpy(getattr(fnp, name), getattr(np, name), x, name=name, vmap=True,
                     axis=axis, keepdims=keepdims)


@given(st.sampled_from(("cumsum", "cumprod")), array_of(), st.data())
def test_cumulative(name: str, x: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(axis_for(x.ndim, allow_tuple=False), "axis")
    check_like_numpy(getattr(fnp, name), getattr(np, name), x, name=name, vmap=True,
                     axis=axis)


def _argsort_ref(x, axis=-1, **kw):
    # NumPy's default sort is not stable; funcgrad's always is (one of the orders NumPy allows).
    return np.argsort(x, axis=axis, stable=True, **kw)


@given(st.sampled_from(("sort", "argsort")), array_of(), st.data())
def test_sort(name: str, x: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(st.one_of(st.just(-1), axis_for(x.ndim, allow_tuple=False)), "axis")
    ref = np.sort if name == "sort" else _argsort_ref
    check_like_numpy(getattr(fnp, name), ref, x, name=name, vmap=True, axis=axis)


@given(st.sampled_from(("quantile", "percentile")), array_of(REAL_DTYPES), st.data(),
       st.booleans())
def test_quantile(name: str, x: np.ndarray, data: st.DataObject, keepdims: bool) -> None:
    assume(x.size or x.dtype != bool)  # (which of two errors NumPy raises first)
    axis = data.draw(axis_for(x.ndim), "axis")
    assume(x.size or axis is None)  # NumPy fails to reshape its empty results
    scale = 100 if name == "percentile" else 1
    q = data.draw(st.one_of(
        st.sampled_from([0.0, 0.25, 0.5, 1.0, 0.3]).map(lambda v: v * scale),
        st.lists(st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0]), min_size=1, max_size=3)
        .map(lambda v: [t * scale for t in v]),
        st.just(1.5 * scale),  # out of range: NumPy raises
    ), "q")
    method = data.draw(st.sampled_from(QUANTILE_METHODS), "method")
    check_like_numpy(getattr(fnp, name), getattr(np, name), x, q, name=name, axis=axis,
                     keepdims=keepdims, method=method)


QUANTILE_METHODS = (
    "inverted_cdf", "averaged_inverted_cdf", "closest_observation",
    "interpolated_inverted_cdf", "hazen", "weibull", "linear", "median_unbiased",
    "normal_unbiased", "lower", "higher", "midpoint", "nearest",
)


@given(st.sampled_from(("quantile", "percentile")), array_of(REAL_DTYPES, special=False),
       st.data())
def test_weighted_quantile(name: str, x: np.ndarray, data: st.DataObject) -> None:
    assume(x.size and x.ndim)
    axis = data.draw(axis_for(x.ndim, allow_invalid=False), "axis")
    axes = None if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    wshape = x.shape if axes is None or data.draw(st.booleans()) else tuple(
        x.shape[a] for a in axes)
    w = data.draw(array_of(("float64", "float32", "int8"), shape=st.just(wshape),
                           special=False, low=0.0, high=3.0), "weights")
    assume(np.all(np.sum(w.astype(float), axis=axis if wshape == x.shape else None) > 0))
    scale = 100 if name == "percentile" else 1
    q = data.draw(st.sampled_from([0.0, 0.3, 1.0, [0.0, 0.5, 1.0]]), "q")
    q = [v * scale for v in q] if isinstance(q, list) else q * scale
    method = data.draw(st.sampled_from(("inverted_cdf", "inverted_cdf", "linear")), "method")
    check_like_numpy(getattr(fnp, name), getattr(np, name), x, q, name=name, axis=axis,
                     weights=w, method=method)


WHERE_REDUCERS = ("sum", "prod", "mean", "var", "std", "max", "min", "any", "all", "nansum",
                  "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin")


@given(st.sampled_from(WHERE_REDUCERS), array_of(special=False), st.data(), st.booleans())
def test_where(name: str, x: np.ndarray, data: st.DataObject, keepdims: bool) -> None:
    """``where=`` masks (broadcasting, all False, Python bools); max/min need ``initial``."""
    axis = data.draw(axis_for(x.ndim, allow_invalid=False), "axis")
    mshape = data.draw(st.sampled_from([x.shape, x.shape[1:], (1,) * x.ndim]), "mask shape")
    where = data.draw(st.one_of(
        array_of(("bool",), shape=st.just(mshape)), st.sampled_from([True, False])), "where")
    kw = {"axis": axis, "keepdims": keepdims, "where": where}
    if name in ("sum", "prod", "max", "min", "nansum", "nanprod", "nanmax", "nanmin") and (
            data.draw(st.booleans(), "initial")):
        kw["initial"] = data.draw(st.sampled_from([0, 1, -2]), "initial value")
        if x.dtype.kind in "ub":
            kw["initial"] = 1
    if x.dtype == np.float16 and "initial" in kw:
        return  # (NumPy accumulates float16 starting from initial: rounding differs)
    # (vmap's reference loop hands NumPy scalars for 0-d slices, and NumPy's nanmax(where=)
    # then takes another path: NaN instead of ``initial`` for an all-masked slice)
    check_like_numpy(getattr(fnp, name), getattr(np, name), x, name=name, vmap=x.ndim > 0,
                     **kw)


@given(st.sampled_from(VAR_LIKE), array_of(("float64", "float32", "int32"), special=False),
       st.data())
def test_variance_given_mean(name: str, x: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(axis_for(x.ndim, allow_invalid=False), "axis")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = np.mean(x, axis=axis, keepdims=True)
    check_like_numpy(getattr(fnp, name), getattr(np, name), x, name=name, axis=axis, mean=m,
                     ddof=data.draw(st.sampled_from([0, 1]), "ddof"))


@given(st.sampled_from(("sum", "prod", "cumsum", "cumprod", "nansum")),
       array_of(special=False), st.sampled_from(ALL_DTYPES))
def test_accumulating_dtype_arg(name: str, x: np.ndarray, dtype: str) -> None:
    check_like_numpy(getattr(fnp, name), getattr(np, name), x, name=name, dtype=dtype)


@given(st.sampled_from(("mean", "var", "std", "nanmean")), array_of(special=False),
       st.sampled_from(INEXACT_DTYPES), st.data())
def test_mean_dtype_arg(name: str, x: np.ndarray, dtype: str, data: st.DataObject) -> None:
    if x.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        dtype = "complex128"  # NumPy casts complex to real here, dropping the imaginary part
    axis = data.draw(axis_for(x.ndim, allow_invalid=False), "axis")
    check_like_numpy(getattr(fnp, name), getattr(np, name), x, name=name, dtype=dtype,
                     axis=axis)


@given(st.sampled_from(("mean", "sum")), array_of(("int8", "uint8", "int32", "bool"),
                                                  special=False),
       st.sampled_from(("int32", "int64", "uint8")))
def test_integer_mean_dtype(name: str, x: np.ndarray, dtype: str) -> None:
    """``mean(ints, dtype=int)`` sums in that dtype and truncates, as NumPy."""
    # (the mean of nothing is NaN, and NaN as an integer is the platform's: NumPy on x86
    # gives the integer minimum, CUDA 0; docs/backends.md)
    assume(x.size or name == "sum")
    check_like_numpy(getattr(fnp, name), getattr(np, name), np.asarray(abs(x.astype(np.int64)) % 5),
                     name=name, dtype=dtype)


@given(st.sampled_from(("sum", "prod", "max", "min", "nansum", "nanmax")),
       array_of(NUMERIC_DTYPES + ("bool",)), st.data())
def test_initial(name: str, x: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(axis_for(x.ndim, allow_invalid=False), "axis")
    initial = data.draw(st.sampled_from([0, 1, 2, -1, 2.5, True]), "initial")
    if x.dtype.kind in "ub" and isinstance(initial, int) and initial < 0:
        initial = 3  # (NumPy raises OverflowError; tested below)
    check_like_numpy(getattr(fnp, name), getattr(np, name), x, name=name, axis=axis,
                     initial=initial)


def test_initial_out_of_range() -> None:
    for name in ("max", "sum"):
        check_like_numpy(getattr(fnp, name), getattr(np, name),
                         np.array([1, 2], np.uint8), name=name, initial=-1)
        check_like_numpy(getattr(fnp, name), getattr(np, name),
                         np.array([1, 2], np.int8), name=name, initial=300)


PY_INPUTS = st.one_of(
    weak_scalars(),
    st.lists(st.integers(-3, 3), max_size=4),
    st.lists(st.floats(-3, 3, width=32), max_size=4),
    st.lists(st.booleans(), min_size=1, max_size=3),
    st.lists(st.lists(st.integers(-3, 3), min_size=2, max_size=2), min_size=1, max_size=3),
    st.just([[1, 2.5], [3, 4]]),
)


@given(st.sampled_from(REDUCERS + VAR_LIKE + ("argmax", "argmin", "cumsum", "cumprod",
                                              "sort", "argsort")), PY_INPUTS)
def test_python_inputs(name: str, x: object) -> None:
    ref = _argsort_ref if name == "argsort" else getattr(np, name)
    check_like_numpy(getattr(fnp, name), ref, x, name=name)


@given(array_of(("float32", "float64", "int32", "bool", "complex64"), special=False),
       st.data())
def test_weighted_average(x: np.ndarray, data: st.DataObject) -> None:
    assume(x.size)  # (NumPy's weight-sum shape for empty input differs from its result's)
    axis = data.draw(axis_for(x.ndim, allow_tuple=False, allow_invalid=False), "axis")
    wshape = x.shape if axis is None or data.draw(st.booleans()) else (x.shape[axis],)
    w = data.draw(array_of(("float64", "float32", "int8"), shape=st.just(wshape),
                           special=False, low=0.5, high=3.0), "weights")
    returned = data.draw(st.booleans(), "returned")
    check_like_numpy(fnp.average, np.average, x, name="average", axis=axis, weights=w,
                     returned=returned)


METHODS = ("sum", "prod", "mean", "var", "std", "max", "min", "any", "all", "argmax",
           "argmin", "cumsum", "cumprod")


@given(st.sampled_from(METHODS), array_of(REAL_DTYPES, special=False), st.data())
def test_tracer_methods(name: str, x: np.ndarray, data: st.DataObject) -> None:
    """``x.sum(axis)`` and friends on traced arrays behave like the ndarray methods."""
    tuple_ok = name not in ("argmax", "argmin", "cumsum", "cumprod")
    axis = data.draw(axis_for(x.ndim, allow_tuple=tuple_ok), "axis")

    def method(a, axis):
        return getattr(a, name)(axis=axis)

    check_like_numpy(method, method, x, name=f"x.{name}", axis=axis)


@pytest.mark.parametrize("name", ["sum", "max", "argmax", "cumsum", "any", "count_nonzero"])
def test_scalar_axis_on_0d(name: str) -> None:
    """NumPy's ufunc reductions take ``axis=0``/``-1`` on a 0-d array; mean/median don't."""
    for axis in (0, -1, 1, (0,)):
        check_like_numpy(getattr(fnp, name), getattr(np, name), np.array(2.5), name=name,
                         axis=axis)
    for name2 in ("mean", "var", "median"):
        check_like_numpy(getattr(fnp, name2), getattr(np, name2), np.array(2.5), name=name2,
                         axis=0)


@given(st.sampled_from(REDUCERS + VAR_LIKE + ("argmax", "cumsum", "sort", "quantile")),
       st.sampled_from([np.int64(1), np.array(1), np.int32(-1), 1.5, "0", (np.int8(0), 1)]))
def test_axis_types(name: str, axis: object) -> None:
    """NumPy integers and 0-d integer arrays are axes; floats and strings are TypeErrors."""
    x = np.arange(6.0).reshape(2, 3)
    args = (x, 0.5) if name == "quantile" else (x,)
    check_like_numpy(getattr(fnp, name), getattr(np, name), *args, name=name, axis=axis)


@pytest.mark.parametrize("name", ["max", "amax", "nanmax", "min", "nanmin"])
def test_where_initial_tie_gradient_as_jax(name: str) -> None:
    """Masked-out entries are the identity, not ``initial``: a tie with ``initial`` shares the
    derivative once, as in jax.numpy 0.10.2 (values recorded there)."""
    x = np.array([[0.0, 1.0], [-1.0, 0.0], [2.0, -3.0]])
    wh = dev(np.array([[True, False], [True, True], [False, True]]))

    def f(v):
        return fnp.sum(getattr(fnp, name)(v, axis=0, where=wh, initial=0.0) * dev(np.ones(2)))

    want = ([[0.5, 0.0], [0.0, 0.5], [0.0, 0.0]] if "max" in name
            else [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    assert_allclose(funcgrad.grad(f)(dev(x)), np.array(want))
    assert_allclose(getattr(fnp, name)(dev(x), axis=0, where=wh, initial=0.0),
                    getattr(np, name)(x, axis=0, where=host(wh), initial=0.0))


@pytest.mark.parametrize("call", [
    lambda a: a.searchsorted(a[1:3] - 0.5, side="right"),
    lambda a: a.searchsorted(3.0),
    lambda a: a.argpartition(1),
    lambda a: a.compress([True, False, True, True], axis=0),
    # one array of choices: eager results on the GPU are CuPy arrays, whose choose method reads
    # choices.shape (a list is an AttributeError there; docs/backends.md)
    lambda a: (a > 2).choose(fnp.stack([a, -a])),
    lambda a: a.view(np.int64),
    lambda a: a.view(np.uint8),
    lambda a: a.astype(np.float32).view(np.int16),
    lambda a: a[:2].astype(np.int16).view(np.float32),
    lambda a: (a > 2).view(np.uint8),
    lambda a: a.view(),
], ids=["searchsorted", "searchsorted-scalar", "argpartition", "compress", "choose",
        "view-same-size", "view-smaller", "view-f32-i16", "view-larger", "view-bool", "view-none"])
def test_more_tracer_methods(call) -> None:
    """ndarray (and jax.Array) methods that traced arrays lacked: an AttributeError under
    jit/vmap before."""
    check_like_numpy(call, call, np.array([1.0, 3.0, 4.0, 5.0]), vmap=True, name="method")


def test_view_errors_like_numpy() -> None:
    check_like_numpy(lambda a: a.view(np.int64), lambda a: a.view(np.int64),
                     np.arange(3, dtype=np.int32), name="view")
    check_like_numpy(lambda a: a.view(np.int16), lambda a: a.view(np.int16), np.float32(2.0),
                     name="view")


@pytest.mark.parametrize("ndigits", [None, 1, -1])
def test_builtin_round_of_traced_scalar(ndigits) -> None:
    """Python's round() on a traced element works as on the NumPy scalar it replaces."""
    x = np.array([1.26, -2.5, 13.5])
    for i in range(3):
        want = round(x[i], ndigits) if ndigits is not None else round(x[i])
        got = funcgrad.jit(lambda t, i=i: round(t[i], ndigits) if ndigits is not None
                           else round(t[i]))(dev(x))
        assert host(got) == want
        assert host(got).dtype == np.asarray(want).dtype


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
def test_cumulative_axis_tuples_as_numpy(name: str) -> None:
    # NumPy 2.4 (ufunc.accumulate): a 1-tuple is the axis, () or more axes a ValueError,
    # other non-integers a TypeError
    x = np.arange(1.0, 7.0).reshape(2, 3)
    f = getattr(fnp, name)
    assert_allclose(f(dev(x), axis=(1,)), getattr(np, name)(x, axis=1))
    for bad in ((0, 1), ()):
        with pytest.raises(ValueError, match="accumulate does not allow multiple axes"):
            f(dev(x), axis=bad)
    for bad in ([0], 1.0, True):
        with pytest.raises(TypeError):
            f(dev(x), axis=bad)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "any", "all", "std",
                                  "nansum", "ptp"])
def test_reductions_of_a_python_scalar_jit_argument(name):
    # A Python float passed to jit stays a Python float in the compiled code: the 0-d
    # reduction must not call an array method on it (AttributeError: 'float' object has no
    # attribute 'sum' before)
    got = np.asarray(host(funcgrad.jit(lambda y: getattr(fnp, name)(y))(2.0)))
    want = np.asarray(getattr(np, name)(2.0))
    assert got.dtype == want.dtype and got.tolist() == want.tolist()


@pytest.mark.parametrize("dtype", [bool, np.int8, np.uint8, np.float16, np.complex64])
def test_trace_sums_in_the_given_dtype(dtype):
    # NumPy's trace(dtype=) sums in that dtype (int8 wraps, bool is a logical or); it was
    # summed in int64 after the cast
    x = np.diag(np.array([100, 100, 7, -3], np.int8))
    want = np.trace(x, dtype=dtype)
    for got in (fnp.trace(dev(x), dtype=dtype),
                funcgrad.jit(lambda v: fnp.trace(v, dtype=dtype))(dev(x))):
        got = np.asarray(host(got))
        assert got.dtype == want.dtype and got.tolist() == want.tolist()


@pytest.mark.parametrize("name,message", [
    ("nanmin", "All-NaN slice encountered"), ("nanmax", "All-NaN slice encountered"),
    ("nanmedian", "All-NaN slice encountered"), ("nanmean", "Mean of empty slice"),
    ("nanvar", "Degrees of freedom <= 0 for slice"),
    ("nanstd", "Degrees of freedom <= 0 for slice"),
])
def test_all_nan_slices_warn_as_numpy(name, message):
    # NumPy warns once, by name, for an all-NaN slice (no division warnings besides), and
    # answers NaN there; traced values (jit) warn nothing, as JAX
    x = np.array([[np.nan, np.nan], [1.0, 3.0]])
    want = getattr(np, "nan" + name[3:])  # the NaN-ignoring NumPy function itself
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = getattr(fnp, name)(dev(x), axis=1)
    assert [str(w.message) for w in caught] == [message + ("." if "freedom" in message else "")]
    assert caught[0].category is RuntimeWarning and caught[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(host(got), want(x, axis=1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        getattr(fnp, name)(dev(x[1:]), axis=1)  # no all-NaN slice: silent
        funcgrad.jit(lambda v: getattr(fnp, name)(v, axis=1))(dev(x))


def test_argsort_descending_on_a_device_array():
    # JAX's descending=True (ties in order); n - 1 was made a host array, which a device
    # array's indices cannot meet (the strict pass checks it). Values from JAX 0.10.2.
    x = dev(np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0], [1.0, 1.0, 1.0]]))
    for f in (lambda v, **k: fnp.argsort(v, **k),
              funcgrad.jit(fnp.argsort, static_argnames=("axis", "descending"))):
        assert host(f(x, descending=True)).tolist() == [[0, 2, 1], [1, 2, 0], [0, 1, 2]]
        assert host(f(x, axis=None, descending=True)).tolist() == [4, 5, 0, 2, 1, 6, 7, 8, 3]


def test_float16_products_and_sums_accumulate_in_float32() -> None:
    # NumPy's half loops (and jax.numpy) accumulate in float32 and round once; CuPy's prod
    # multiplied in float16: 4**8 overflowed to inf there, and inf * 0 gave NaN, not 0
    x = np.array([[4, 4, 4], [4, 4, 4], [4, 4, 0]], np.int8)
    y = np.array([256.0, 256.0, 1 / 256], np.float16)
    z = np.array([65504.0, 65504.0, -65504.0], np.float16)
    for f in (lambda f: f, funcgrad.jit):
        got = host(f(lambda a: fnp.prod(a, dtype=np.float16))(dev(x)))
        assert got.dtype == np.float16 and float(got) == 0.0
        assert float(host(f(fnp.prod)(dev(y)))) == 256.0
        assert float(host(f(fnp.sum)(dev(z)))) == 65504.0
