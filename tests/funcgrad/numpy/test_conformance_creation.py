"""Creation functions against NumPy: values, shapes and (above all) dtypes.

arange/linspace/logspace/geomspace with int, float and NumPy-scalar arguments; eye/identity/
tri; zeros/ones/full/empty and their ``_like`` forms with every ``dtype``; asarray/array of
Python scalars, nested lists (mixed kinds, empty, ragged) and arrays.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dev, host
from hypothesis import assume, given
from hypothesis import strategies as st

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.backend import device_of
from tests.funcgrad.numpy import ALL_DTYPES, array_of, check_like_numpy

DTYPE_ARGS = st.sampled_from(ALL_DTYPES + ("f4", "i8", None)) | st.sampled_from(
    [int, float, complex, bool, np.float32, np.int16])
NUMBER = st.one_of(st.integers(-5, 10), st.sampled_from([0.5, 2.5, -1.25, 3.0]),
                   st.sampled_from([np.float32(1.5), np.int32(4), np.int8(-2)]))


@given(st.lists(NUMBER, min_size=1, max_size=3), st.one_of(st.none(), st.sampled_from(
    ("int32", "float32", "int64", "float64", "uint8", "complex64"))))
def test_arange(args: list, dtype: str | None) -> None:
    assume(not (len(args) == 3 and args[2] == 0))  # NumPy: ZeroDivisionError-ish
    if dtype == "uint8":
        assume(all(float(a) >= 0 for a in args))
    kw = {} if dtype is None else {"dtype": dtype}
    check_like_numpy(fnp.arange, np.arange, *args, name="arange", **kw)


@given(NUMBER, NUMBER, st.integers(0, 6), st.booleans(), st.booleans(),
       st.one_of(st.none(), st.sampled_from(("float32", "int64", "complex64", "float16"))))
def test_linspace(start, stop, num: int, endpoint: bool, retstep: bool,
                  dtype: str | None) -> None:
    check_like_numpy(fnp.linspace, np.linspace, start, stop, num, endpoint, retstep, dtype,
                     name="linspace")


@given(array_of(("float32", "float64", "int32"), shape=st.sampled_from([(2,), (1, 2)]),
                special=False), st.integers(0, 4), st.integers(-1, 1))
def test_linspace_array_bounds(start: np.ndarray, num: int, axis: int) -> None:
    check_like_numpy(fnp.linspace, np.linspace, start, 5.0, num, name="linspace", axis=axis)


@given(st.sampled_from(("logspace", "geomspace")), st.integers(1, 4), st.integers(1, 5),
       st.integers(0, 5), st.one_of(st.none(), st.sampled_from(("float32", "complex128"))))
def test_log_geom_space(name: str, a: int, b: int, num: int, dtype: str | None) -> None:
    check_like_numpy(getattr(fnp, name), getattr(np, name), a, b, num, name=name, dtype=dtype)


@given(st.integers(0, 4), st.one_of(st.none(), st.integers(0, 4)), st.integers(-4, 4),
       DTYPE_ARGS)
def test_eye_tri(n: int, m: int | None, k: int, dtype) -> None:
    kw = {} if dtype is None else {"dtype": dtype}
    check_like_numpy(fnp.eye, np.eye, n, m, k, name="eye", **kw)
    check_like_numpy(fnp.tri, np.tri, n, m, k, name="tri", **kw)
    check_like_numpy(fnp.identity, np.identity, n, name="identity", **kw)


SHAPE_ARGS = st.one_of(st.integers(0, 4), st.lists(st.integers(0, 3), max_size=3).map(tuple),
                       st.lists(st.integers(0, 3), max_size=2), st.just(np.int64(3)),
                       st.just(-1))


@given(st.sampled_from(("zeros", "ones", "empty")), SHAPE_ARGS, DTYPE_ARGS)
def test_filled(name: str, shape, dtype) -> None:
    if name == "empty":  # values are arbitrary: compare the shape and dtype only
        check_like_numpy(lambda s, dt: fnp.empty(s, dt).dtype,
                         lambda s, dt: np.empty(s, dt).dtype, shape, dtype, name="empty")
        check_like_numpy(lambda s, dt: fnp.empty(s, dt).shape,
                         lambda s, dt: np.empty(s, dt).shape, shape, dtype, name="empty")
        return
    check_like_numpy(getattr(fnp, name), getattr(np, name), shape, dtype, name=name)


FILL = st.one_of(st.integers(-3, 300), st.sampled_from([2.5, True, 1j, -0.0, np.nan]),
                 st.sampled_from([np.float32(2), np.int8(3), np.array(3, np.int8),
                                  np.array([1.5, 2.5], np.float32)]))


@given(SHAPE_ARGS, FILL, DTYPE_ARGS)
def test_full(shape, value, dtype) -> None:
    assume(not (dtype is not None and np.dtype(dtype).kind in "iub"
                and isinstance(value, float | complex)))  # (unsafe casts of nan/complex)
    check_like_numpy(fnp.full, np.full, shape, value, dtype, name="full", loose_errors=True)


@given(array_of(), st.sampled_from(("zeros_like", "ones_like", "full_like", "empty_like")),
       DTYPE_ARGS, st.one_of(st.none(), st.just((2,)), st.just(())))
def test_like(x: np.ndarray, name: str, dtype, shape) -> None:
    args = (x, 7) if name == "full_like" else (x,)
    if name == "empty_like":
        check_like_numpy(lambda a: fnp.empty_like(a, dtype, shape=shape).shape,
                         lambda a: np.empty_like(a, dtype, shape=shape).shape, x,
                         name=name, jit=False)
        check_like_numpy(lambda a: fnp.empty_like(a, dtype, shape=shape).dtype,
                         lambda a: np.empty_like(a, dtype, shape=shape).dtype, x,
                         name=name, jit=False)
        return
    check_like_numpy(getattr(fnp, name), getattr(np, name), *args, name=name, dtype=dtype,
                     shape=shape)


PY_VALUES = st.recursive(
    st.one_of(st.integers(-5, 5), st.floats(-3, 3, width=32), st.booleans(),
              st.sampled_from([1j, np.float32(1.5), np.int8(2), np.float16(0.5)])),
    lambda inner: st.lists(inner, max_size=3),
    max_leaves=6,
)


@given(PY_VALUES, st.one_of(st.none(), st.sampled_from(("float32", "int32", "complex64", "bool",
                                                        "float16", "int64"))),
       st.sampled_from(("asarray", "array")))
def test_asarray(value, dtype: str | None, name: str) -> None:
    if dtype is not None and np.dtype(dtype).kind in "iub":
        assume("j" not in repr(value))  # (complex to int/bool: a ComplexWarning cast)
    check_like_numpy(getattr(fnp, name), getattr(np, name), value, dtype, name=name,
                     loose_errors=True)


@given(array_of(), st.sampled_from(ALL_DTYPES))
def test_asarray_of_arrays(x: np.ndarray, dtype: str) -> None:
    assume(not (x.dtype.kind == "c" and np.dtype(dtype).kind != "c"))
    assume(not (x.dtype.kind == "f" and np.dtype(dtype).kind in "iub"
                and not np.all(np.isfinite(x))))
    check_like_numpy(fnp.asarray, np.asarray, x, dtype, name="asarray")
    check_like_numpy(lambda a: fnp.asarray([a, a]), lambda a: np.asarray([a, a]), x,
                     name="asarray([x, x])", jit=False)


@given(st.sampled_from([(2.0, 100.0), (-1.0, -1000.0), (1j, 1000j), (np.float32(3), 7.0),
                        (np.array([1.0, 2.0]), np.array([10.0, 50.0]))]),
       st.integers(0, 5), st.booleans(), st.integers(-1, 0))
def test_geomspace_traced_bounds(bounds: tuple, num: int, endpoint: bool, axis: int) -> None:
    # Traced start/stop (jit, vmap) run NumPy's algorithm from primitives, NumPy's dtypes too
    # (float32 bounds give float64, as NumPy's float64 zero in its promotion).
    start, stop = (np.asarray(b) for b in bounds)
    check_like_numpy(fnp.geomspace, np.geomspace, start, stop, num, endpoint, vmap=True,
                     name="geomspace", axis=axis if start.ndim else 0)


def test_geomspace_gradient_matches_jax() -> None:
    # Recorded from jax.grad(lambda s: jnp.geomspace(...).sum()) (JAX 0.10.2, x64); eagerly
    # these were silently 0 (the bounds were read as constants).
    g = funcgrad.grad(lambda s: fnp.geomspace(s, 100.0, 3).sum())
    np.testing.assert_allclose(host(g(2.0)), 4.535533905932738, rtol=1e-12)
    np.testing.assert_allclose(host(funcgrad.jit(g)(2.0)), 4.535533905932738, rtol=1e-12)
    g = funcgrad.grad(lambda s: fnp.geomspace(1.0, s, 4).sum())
    np.testing.assert_allclose(host(g(100.0)), 1.1591009421141683, rtol=1e-12)
    g = funcgrad.grad(lambda s: fnp.geomspace(-s, -100.0, 4, endpoint=False).sum())
    np.testing.assert_allclose(host(g(2.0)), -11.230648733645102, rtol=1e-12)


def test_asanyarray_copy_keyword():
    # NumPy 2's asanyarray(copy=): as asarray's (False refuses a needed copy)
    a = np.arange(3.0)
    assert fnp.asanyarray(a, copy=False) is a
    b = fnp.asanyarray(a, copy=True)
    assert b is not a and np.array_equal(b, a)
    with pytest.raises(ValueError, match="copy=False"):
        fnp.asanyarray(a, dtype=np.int32, copy=False)


def test_arange_stop_keyword():
    # NumPy 2: arange(stop=n) counts from 0 (step too); no bound at all is NumPy's TypeError
    for kw in ({"stop": 4}, {"stop": 4, "step": 2}, {"start": 1, "stop": 4}):
        got = fnp.arange(**kw)
        np.testing.assert_array_equal(host(got), np.arange(**kw))
        assert host(got).dtype == np.int64
    with pytest.raises(TypeError, match="requires stop"):
        fnp.arange()


def test_object_array_of_numbers_converts_with_a_dtype():
    # An object array (a pandas column, say) converts when a numeric dtype is asked for, as
    # in NumPy and jnp.asarray; without one it is refused (funcgrad computes on numbers)
    col = np.array([1, 2.5, True], dtype=object)
    for fn in (fnp.asarray, fnp.array):
        got = fn(col, dtype="float32")
        assert host(got).dtype == np.float32 and host(got).tolist() == [1.0, 2.5, 1.0]
    with pytest.raises(TypeError, match="dtype object is not supported"):
        fnp.asarray(col)


def test_logspace_with_a_traced_base_on_a_device():
    # Python bounds were made on the default (host) device, which a device base cannot meet
    # (the strict pass checks it); a Python bound beside a float32 one stays weak
    base = dev(np.array([2.0, 10.0]))
    want = np.logspace(0, 2, 3, base=np.array([2.0, 10.0]))
    np.testing.assert_allclose(host(funcgrad.jit(lambda b: fnp.logspace(0, 2, 3, base=b))(base)),
                               want)
    got = funcgrad.vmap(lambda b: fnp.logspace(0.0, 2.0, 3, base=b))(base)
    np.testing.assert_allclose(host(got), want.T)
    got = funcgrad.jit(lambda b: fnp.logspace(np.float32(0), 2, 3, base=b))(
        dev(np.array(2.0, np.float32)))
    assert host(got).dtype == np.float32


def test_traced_shape_entry_is_a_concretization_error() -> None:
    # jnp.zeros((n, 2)) with a traced n inside jit: the error names the traced value and the
    # fixes (static_argnums), as for jnp.zeros(n); it was the generic "shape must be ints"
    from funcgrad.errors import ConcretizationError

    with pytest.raises(ConcretizationError, match="zeros: the shape needs a concrete value"):
        funcgrad.jit(lambda n: fnp.zeros((n, 2)))(3)
    with pytest.raises(TypeError, match="shape must be an int or a sequence of ints"):
        fnp.zeros(("a",))


@pytest.mark.parametrize("make", [
    lambda like: fnp.zeros(3, like=like), lambda like: fnp.ones((2,), like=like),
    lambda like: fnp.empty(2, like=like), lambda like: fnp.full(2, 7, like=like),
    lambda like: fnp.array([1, 2], like=like), lambda like: fnp.asarray([1.0], like=like),
    lambda like: fnp.arange(3, like=like), lambda like: fnp.eye(2, like=like),
    lambda like: fnp.identity(2, like=like), lambda like: fnp.tri(2, like=like),
    lambda like: fnp.frombuffer(b"ab", np.uint8, like=like),
    lambda like: fnp.fromiter(range(3), int, like=like),
    lambda like: fnp.fromstring("1 2", sep=" ", like=like),
    lambda like: fnp.fromfunction(lambda i: i * 2, (3,), like=like),
    lambda like: fnp.ascontiguousarray([1.0], like=like),
    lambda like: fnp.asfortranarray([1.0], like=like),
    lambda like: fnp.require([1], like=like),
])
def test_creation_takes_numpys_like_keyword(make):
    # NumPy's like= (NEP 35: an array of like's kind) is an array on like's device here; it
    # was a TypeError (an unexpected keyword), which NumPy/CuPy-agnostic code hits
    like = dev(np.ones(2))
    got = make(like)
    assert device_of(got) == device_of(like)
    want = make(np.ones(2))
    assert host(got).dtype == want.dtype and host(got).shape == want.shape
    assert device_of(funcgrad.jit(lambda v: make(v) * 1)(like)) == device_of(like)


def test_like_keyword_errors():
    with pytest.raises(TypeError, match="like= must be an array"):
        fnp.zeros(2, like=[1.0])
    with pytest.raises(ValueError, match="disagree"):
        fnp.zeros(2, like=funcgrad.device_put(np.ones(1), "strict"), device="cpu")


def test_negative_and_large_floats_to_narrow_integers_wrap_as_numpy() -> None:
    # NumPy (x86) converts through a wide signed integer, wrapping: -3.0 -> uint8 is 253 and
    # 300.0 -> int8 is 44; CUDA's conversions saturate (0, 127), which the GPU run gave for
    # linspace(-3, 3, 7, dtype=uint8); the strict backend's astype saturates as CuPy's does
    want = np.array([253, 253, 254, 255, 0, 1, 2], np.uint8)
    for got in (fnp.linspace(-3, 3, 7, endpoint=False, dtype=np.uint8),
                fnp.linspace(dev(np.array(-3.0)), 3, 7, endpoint=False, dtype=np.uint8),
                funcgrad.jit(lambda s: fnp.linspace(s, 3, 7, endpoint=False, dtype=np.uint8))(
                    dev(np.array(-3.0)))):
        assert host(got).dtype == np.uint8 and host(got).tolist() == want.tolist()
    x = np.array([-3.0, -0.5, 300.0, 2.0])
    for dt, expect in ((np.uint8, [253, 0, 44, 2]), (np.int8, [-3, 0, 44, 2]),
                       (np.uint16, [65533, 0, 300, 2]), (np.uint64, [2**64 - 3, 0, 300, 2])):
        for got in (fnp.astype(dev(x), dt), fnp.asarray(dev(x), dtype=dt),
                    funcgrad.jit(lambda v, dt=dt: v.astype(dt))(dev(x))):
            assert host(got).dtype == dt and host(got).tolist() == expect, (dt, got)
