"""Tests for the strict (CuPy-like) test backend in funcgrad._strict_array."""

from __future__ import annotations

import copy
import doctest
import operator
import pickle
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad._strict_array as sa
from funcgrad.backend import operator_index

StrictArray = sa.StrictArray
xp = sa.strict_numpy


def S(x: Any, dtype: Any = None) -> sa.StrictArray:
    return sa.to_strict(x, dtype=dtype)


def assert_same(actual: Any, expected: Any) -> None:
    """actual is a StrictArray equal (values, dtype, shape) to the numpy result."""
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected)
        for g, e in zip(actual, expected):
            assert_same(g, e)
        return
    assert isinstance(actual, StrictArray), type(actual)
    got = actual.get()
    exp = np.asarray(expected)
    assert got.dtype == exp.dtype, (got.dtype, exp.dtype)
    assert got.shape == exp.shape
    np.testing.assert_array_equal(got, exp)


# ------------------------------------------------------------------ construction / helpers


def test_helpers_and_constructor() -> None:
    a = np.arange(3.0)
    s = sa.to_strict(a)
    assert sa.is_strict(s) and not sa.is_strict(a)
    a[0] = 99.0  # transfer copies
    assert s.get()[0] == 0.0
    assert sa.to_numpy(s).tolist() == [0.0, 1.0, 2.0]
    assert sa.to_numpy(a) is a
    assert sa.to_strict(s) is s
    assert sa.to_strict(s, dtype=np.float32).dtype == np.float32
    z = StrictArray(np.float64(2.0))  # numpy scalar -> 0-d array
    assert isinstance(z._a, np.ndarray) and z.ndim == 0
    with pytest.raises(TypeError):
        StrictArray([1, 2])  # type: ignore[arg-type]
    assert type(StrictArray(np.ma.masked_array([1, 2]))._a) is np.ndarray


def test_metadata_properties() -> None:
    a = np.arange(6, dtype=np.complex64).reshape(2, 3)
    s = S(a)
    assert s.shape == (2, 3) and s.ndim == 2 and s.size == 6
    assert s.dtype == np.complex64 and s.itemsize == 8 and s.nbytes == 48
    assert len(s) == 2
    assert_same(s.T, a.T)
    assert_same(s.mT, a.mT)
    assert_same(s.real, a.real)
    assert_same(s.imag, a.imag)
    assert not hasattr(s, "flat")


def test_repr_and_str() -> None:
    assert repr(S([1.0, 2.0])) == "StrictArray([1., 2.])"
    assert repr(S(3)) == "StrictArray(3)"
    assert repr(S(np.zeros((2, 2)))) == "StrictArray([[0., 0.],\n             [0., 0.]])"
    assert str(S([1, 2])) == "[1 2]"
    assert f"{S(1.5):.2f}" == "1.50"


def test_unhashable() -> None:
    with pytest.raises(TypeError):
        hash(S([1]))


def test_copy_and_pickle() -> None:
    s = S([1.0, 2.0])
    for c in (copy.copy(s), copy.deepcopy(s), pickle.loads(pickle.dumps(s))):
        assert isinstance(c, StrictArray)
        c[0] = 5.0
        assert s.get()[0] == 1.0


# ------------------------------------------------------------------ refusing host mixing


def test_implicit_conversion_raises() -> None:
    s = S([1.0, 2.0])
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array"):
        np.asarray(s)
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.array([s, s])
    with pytest.raises(TypeError):
        memoryview(s)  # type: ignore[arg-type]


def test_numpy_functions_on_strict_raise() -> None:
    s = S([1.0, 2.0])
    with pytest.raises(TypeError):
        np.sin(s)
    with pytest.raises(TypeError, match=r"numpy\.sum"):
        np.sum(s)
    with pytest.raises(TypeError, match="concatenate"):
        np.concatenate([s, s])
    with pytest.raises(TypeError, match="solve"):
        np.linalg.solve(S(np.eye(2)), s)


@pytest.mark.parametrize(
    "op",
    [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, operator.lt,
     operator.eq, operator.ne, operator.matmul],
)  # fmt: skip
def test_ndarray_operand_raises(op: Any) -> None:
    h = np.ones(2)
    s = S([1.0, 2.0])
    with pytest.raises(TypeError):
        op(h, s)
    with pytest.raises(TypeError):
        op(s, h)
    with pytest.raises(TypeError):
        op(s, np.asarray(1.0))  # even 0-d host arrays


def test_numpy_metadata_functions_on_strict_allowed() -> None:
    # CuPy dispatches these through __array_function__, so they must not raise
    s = S(np.ones((2, 3), dtype=np.float32))
    assert np.result_type(s, np.float64) == np.float64
    assert np.shape(s) == (2, 3)
    assert np.ndim(s) == 2
    assert np.iscomplexobj(s) is False
    assert np.can_cast(s.dtype, np.float64)


def test_numpy_scalar_left_operand_comparisons() -> None:
    s = S([1.0, 2.0])
    assert_same(np.float64(2) == s, np.array([False, True]))
    assert_same(np.float32(1.5) < s, np.array([False, True]))
    assert_same(2 > s, np.array([True, False]))


def test_ndarray_operand_error_message() -> None:
    with pytest.raises(TypeError, match="host array mixed with device arrays"):
        np.ones(2) + S([1.0, 2.0])


def test_inplace_with_ndarray_raises() -> None:
    h = np.ones(2)
    s = S([1.0, 2.0])
    with pytest.raises(TypeError):
        s += h
    with pytest.raises(TypeError):
        h += s
    np.testing.assert_array_equal(h, [1.0, 1.0])
    np.testing.assert_array_equal(s.get(), [1.0, 2.0])


def test_unsupported_operand_types() -> None:
    s = S([1.0, 2.0])
    with pytest.raises(TypeError):
        s + [1.0, 2.0]
    with pytest.raises(TypeError):
        s + "a"
    assert (s == None) is False  # noqa: E711  (falls back to identity like cupy)


def test_namespace_rejects_host_arrays() -> None:
    with pytest.raises(TypeError, match=r"numpy\.sin.*host array mixed"):
        xp.sin(np.ones(2))
    with pytest.raises(TypeError, match="add"):
        xp.add(S([1.0]), np.ones(1))
    with pytest.raises(TypeError, match="add"):
        xp.add(S([1.0]), S([1.0]), out=np.empty(1))
    with pytest.raises(TypeError, match="concatenate"):
        xp.concatenate([S([1.0]), np.ones(1)])
    with pytest.raises(TypeError, match="at"):
        xp.add.at(S([1.0, 2.0]), np.array([0]), 1.0)
    with pytest.raises(TypeError, match="solve"):
        xp.linalg.solve(S(np.eye(2)), np.ones(2))
    with pytest.raises(TypeError, match="fft"):
        xp.fft.fft(np.ones(4))
    with pytest.raises(TypeError):
        xp.sin(np.asarray(1.0))  # 0-d host array


# ------------------------------------------------------------------ arithmetic


BINARY_OPS = [
    operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
    operator.mod, operator.pow, operator.lt, operator.le, operator.eq, operator.ne,
    operator.gt, operator.ge, divmod,
]  # fmt: skip
INT_OPS = [operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift]


@pytest.mark.parametrize("op", BINARY_OPS + INT_OPS)
def test_binary_ops_match_numpy(op: Any) -> None:
    a = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int64)
    b = np.array([3, 2, 1], dtype=np.int64)
    for x, y in [(a, b), (a.astype(np.float32), b.astype(np.float32))]:
        if op in INT_OPS and x.dtype.kind == "f":
            continue
        assert_same(op(S(x), S(y)), op(x, y))
        # with Python / NumPy scalars on either side
        for scalar in (2, 2.0, np.float32(2), np.int64(2), True):
            _check_scalar_op(op, x, scalar)


def test_numpy_scalar_operands() -> None:
    s = S(np.array([1.0, 2.0], dtype=np.float32))
    assert_same(s + np.float32(2), np.array([3.0, 4.0], dtype=np.float32))
    assert_same(np.float32(2) + s, np.array([3.0, 4.0], dtype=np.float32))
    assert_same(np.float64(2) * s, np.float64(2) * np.array([1.0, 2.0], dtype=np.float32))
    assert_same(True + S([1, 2]), np.array([2, 3]))


def test_unary_and_matmul() -> None:
    a = np.array([[1.0, -2.0], [3.0, 4.0]])
    s = S(a)
    assert_same(-s, -a)
    assert_same(+s, +a)
    assert_same(abs(s), abs(a))
    assert_same(~S([True, False]), ~np.array([True, False]))
    assert_same(~S([1, 2]), ~np.array([1, 2]))
    assert_same(s @ s, a @ a)
    assert_same(s @ S([1.0, 1.0]), a @ np.ones(2))
    assert_same(round(s * 0.3, 1), np.round(a * 0.3, 1))


def test_inplace_ops() -> None:
    a = np.array([1.0, 2.0, 3.0])
    s = S(a)
    orig = s
    s += 1
    s *= S([2.0, 2.0, 2.0])
    s -= np.float32(1)
    s /= 2
    s **= 2
    assert s is orig
    exp = ((((a + 1) * 2) - 1) / 2) ** 2
    assert_same(s, exp)
    i = S([5, 6])
    i //= 2
    i %= 2
    i <<= 1
    i |= 1
    assert_same(i, np.array([1, 3]))
    m = S(np.eye(2))
    m @= S(np.full((2, 2), 2.0))
    assert_same(m, np.full((2, 2), 2.0))


def test_results_are_strict_including_0d() -> None:
    s = S(np.arange(6.0).reshape(2, 3))
    results = [
        s.sum(), s.prod(), s.mean(), s.max(), s.min(), s.argmax(), s.argmin(), s.any(),
        s.all(), s.std(), s.var(), s[0, 0], s[1][2], s.sum() + 1, 1 + s[0, 0], s[0, 0] < 2,
        -s[0, 0], s.trace(), s.dot(S(np.ones(3))), s[0].dot(s[1]), s.sum(axis=0),
        xp.sum(s), xp.max(s), xp.linalg.norm(s), xp.linalg.det(S(np.eye(2))),
        xp.dot(s[0], s[0]), xp.add(1.0, s[0, 0]), xp.float32(1) * s[0, 0],
    ]  # fmt: skip
    for r in results:
        assert isinstance(r, StrictArray), r
        assert isinstance(r._a, np.ndarray)
    for r in s.nonzero():
        assert isinstance(r, StrictArray)
    assert all(isinstance(r, StrictArray) for r in divmod(s, 2))


# ------------------------------------------------------------------ conversions


def test_scalar_conversions() -> None:
    assert float(S([2.5])) == 2.5
    assert float(S([[2.5]])) == 2.5
    assert int(S(np.array([3], dtype=np.int32))) == 3
    assert complex(S(1 + 2j)) == 1 + 2j
    assert bool(S([1])) is True
    assert bool(S(0.0)) is False
    # no __index__, as CuPy's ndarray has none (it would synchronise the device): a device
    # integer is no Python index; funcgrad.backend.operator_index reads a 0-d one
    for call in (lambda: [10, 20, 30][S(1)], lambda: range(5)[S(np.int8(4))],
                 lambda: operator.index(S(2)), lambda: [1, 2][S(1.0)]):
        with pytest.raises(TypeError):
            call()
    assert operator_index(S(np.int8(-2))) == -2 and operator_index(S(np.uint64(3))) == 3
    for bad in (S(1.0), S([1]), S(True)):
        with pytest.raises(TypeError):
            operator_index(bad)
    with pytest.raises(TypeError):
        float(S([1.0, 2.0]))
    with pytest.raises(ValueError):
        bool(S([1, 2]))


def test_item_tolist_get_set() -> None:
    s = S([[1.0, 2.0], [3.0, 4.0]])
    assert s.item(1) == 2.0 and isinstance(s.item(1), float)
    assert s[0, 1].item() == 2.0
    assert s.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    g = s.get()
    assert type(g) is np.ndarray
    g[0, 0] = 100.0
    assert s.get()[0, 0] == 1.0  # get() copies
    out = np.empty((2, 2))
    assert s.get(out=out) is out and out[1, 1] == 4.0
    s.set(np.zeros((2, 2)))
    assert s.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    with pytest.raises(TypeError):
        s.set(np.zeros((2, 2), dtype=np.float32))


def test_iteration() -> None:
    s = S(np.arange(6).reshape(3, 2))
    rows = list(s)
    assert len(rows) == 3 and all(isinstance(r, StrictArray) for r in rows)
    assert_same(rows[2], np.array([4, 5]))
    elems = list(S([1, 2]))
    assert all(isinstance(e, StrictArray) and e.ndim == 0 for e in elems)
    with pytest.raises(TypeError):
        iter(S(1.0))
    with pytest.raises(TypeError):
        len(S(1.0))
    assert 3 in S([1, 2, 3])
    assert 7 not in S([1, 2, 3])


# ------------------------------------------------------------------ indexing


def test_getitem() -> None:
    a = np.arange(24.0).reshape(2, 3, 4)
    s = S(a)
    idx = np.array([2, 0, 2])
    mask = a > 10
    cases = [
        (1, 1), ((1, 2), (1, 2)), ((1, 2, 3), (1, 2, 3)), (slice(None, None, -1), slice(None, None, -1)),
        ((Ellipsis, 1), (Ellipsis, 1)), ((None, 0), (None, 0)), ([1, 0], [1, 0]),
        ((0, S(idx)), (0, idx)), (S(mask), mask), ((S(mask[:, :, 0]), 1), (mask[:, :, 0], 1)),
        ((0, S(idx), S(np.array([0, 1, 3]))), (0, idx, np.array([0, 1, 3]))),
        (S(np.int64(1)), 1), ((slice(0, 1), S(2)), (slice(0, 1), 2)),
    ]  # fmt: skip
    for key, np_key in cases:
        assert_same(s[key], a[np_key])
    with pytest.raises(TypeError):  # a slice bound needs __index__, which CuPy's arrays lack
        s[slice(0, S(1))]


def test_getitem_with_host_index_arrays() -> None:
    # CuPy's _prepare_slice_list copies NumPy index arrays to the device (fnp.ix_ of lists
    # with the default device at cpu indexes a device array so)
    a = np.arange(5)
    s = S(a)
    for key in (np.array([0, 1]), np.array([True, False, True, False, True]), (np.array([0]),)):
        got = s[key]
        assert_same(got, a[key])
    s2 = S(np.arange(12).reshape(3, 4))
    assert_same(s2[np.ix_([0, 2], [1, 3])], np.arange(12).reshape(3, 4)[np.ix_([0, 2], [1, 3])])


def test_getitem_returns_view() -> None:
    s = S(np.zeros(4))
    v = s[1:3]
    v[...] = 1.0
    assert s.tolist() == [0.0, 1.0, 1.0, 0.0]


def test_setitem() -> None:
    a = np.zeros((3, 4))
    s = S(a.copy())
    s[0] = 1.0
    a[0] = 1.0
    s[1, S(np.array([0, 2]))] = S(np.array([5.0, 6.0]))
    a[1, [0, 2]] = [5.0, 6.0]
    s[S(a > 5.5)] = np.float32(7)
    a[a > 5.5] = 7
    s[2, :] = S([1.0, 2.0, 3.0, 4.0])
    a[2, :] = [1.0, 2.0, 3.0, 4.0]
    s[:, 3] = [9, 9, 9]
    a[:, 3] = 9
    s[0, 0] = S(-1.0)
    a[0, 0] = -1.0
    assert_same(s, a)
    with pytest.raises(TypeError, match="host array"):
        s[0] = np.ones(4)
    s[np.array([0])] = 1.0  # a host index array is fine (CuPy's too); a host value is not
    a[np.array([0])] = 1.0
    assert_same(s, a)
    with pytest.raises(TypeError):
        s[0] = [np.asarray(1.0), 1.0, 1.0, 1.0]  # host array inside a list


def test_real_imag_setters_and_fill() -> None:
    s = S(np.zeros(2, dtype=np.complex128))
    s.real = S([1.0, 2.0])
    s.imag = 3.0
    assert s.tolist() == [1 + 3j, 2 + 3j]
    s.fill(S(0.5))
    assert s.tolist() == [0.5, 0.5]
    with pytest.raises(TypeError):
        s.fill(np.ones(()))


# ------------------------------------------------------------------ methods


def test_methods_match_numpy() -> None:
    a = np.array([[3.0, -1.0, 2.0], [0.5, 4.0, -2.0]])
    s = S(a)
    assert_same(s.astype(np.int32), a.astype(np.int32))
    assert_same(s.reshape(3, 2), a.reshape(3, 2))
    assert_same(s.reshape((3, 2)), a.reshape((3, 2)))
    assert_same(s.reshape(-1), a.reshape(-1))
    assert_same(s.transpose(), a.transpose())
    assert_same(s.transpose(1, 0), a.transpose(1, 0))
    assert_same(s.ravel(), a.ravel())
    assert_same(s.flatten(), a.flatten())
    # CuPy 14's flatten(order='C') reads an order's first letter, any case; an int order
    # (PyTorch's x.flatten(1)) is its TypeError('order not understood')
    assert_same(s.flatten("F"), a.flatten("F"))
    assert_same(s.flatten("fortran"), a.flatten("F"))
    with pytest.raises(TypeError, match=r"^order not understood$"):
        s.flatten(1)
    assert_same(s.copy(), a.copy())
    assert_same(s.sum(axis=1, keepdims=True), a.sum(axis=1, keepdims=True))
    assert_same(s.prod(), a.prod())
    assert_same(s.mean(axis=0), a.mean(axis=0))
    assert_same(s.max(axis=1), a.max(axis=1))
    assert_same(s.min(), a.min())
    assert_same(s.argmax(axis=0), a.argmax(axis=0))
    assert_same(s.argmin(), a.argmin())
    assert_same(s.any(), a.any())
    assert_same((s > 0).all(axis=0), (a > 0).all(axis=0))
    assert_same(s.cumsum(axis=1), a.cumsum(axis=1))
    assert_same(s.cumprod(), a.cumprod())
    assert_same(s.clip(-1, 1), a.clip(-1, 1))
    assert_same(s.clip(S(0.0), None), a.clip(0.0, None))
    assert_same((s * 1j).conj(), (a * 1j).conj())
    assert_same(s[None].squeeze(0), a[None].squeeze(0))
    assert_same(s.swapaxes(0, 1), a.swapaxes(0, 1))
    assert_same(s.dot(S(a.T)), a.dot(a.T))
    assert_same(s.view(np.int64), a.view(np.int64))
    assert_same(s.view(), a.view())
    assert_same(s.argsort(axis=1), a.argsort(axis=1))
    assert_same(s.take(S([0, 4])), a.take([0, 4]))
    with pytest.raises(TypeError):
        s.view(np.ndarray)
    with pytest.raises(TypeError):
        s.dot(a.T)
    assert s.copy() is not s


def test_method_out_returns_same_object() -> None:
    s = S(np.arange(6.0).reshape(2, 3))
    out = S(np.zeros(3))
    assert s.sum(axis=0, out=out) is out
    assert_same(out, np.array([3.0, 5.0, 7.0]))
    assert s.astype(np.float64, copy=False) is s


# ------------------------------------------------------------------ namespace


def test_namespace_passthrough() -> None:
    assert xp.float32 is np.float32
    assert xp.dtype is np.dtype
    assert xp.finfo is np.finfo
    assert xp.iinfo is np.iinfo
    assert xp.newaxis is None
    assert xp.pi == np.pi and xp.inf == np.inf
    assert xp.ndarray is StrictArray
    assert isinstance(S([1]), xp.ndarray)
    assert xp.errstate is np.errstate
    assert xp.linalg.LinAlgError is np.linalg.LinAlgError
    assert xp.sin is xp.sin  # cached
    assert xp.add is xp.add
    assert xp.add.nin == 2 and xp.add.identity == 0
    assert xp.sin.__name__ == "sin"
    with pytest.raises(AttributeError):
        xp.no_such_function  # noqa: B018
    assert "sin" in dir(xp)


def test_namespace_metadata_functions() -> None:
    s = S(np.ones((2, 3), dtype=np.float32))
    assert xp.result_type(s, np.float64) == np.float64
    assert xp.result_type(s, 1.0) == np.float32
    assert xp.shape(s) == (2, 3)
    assert xp.ndim(s) == 2
    assert xp.size(s) == 6
    assert xp.iscomplexobj(s) is False
    assert xp.can_cast(s, np.float64)
    assert xp.broadcast_shapes((2, 1), (3,)) == (2, 3)
    assert xp.promote_types(np.float32, np.int64) == np.float64
    assert xp.isscalar(1.0) is True
    assert xp.isscalar(s) is False
    assert xp.issubdtype(s.dtype, np.floating)


def test_namespace_creation_functions() -> None:
    cases = [
        (xp.zeros((2, 3), dtype=np.float32), np.zeros((2, 3), dtype=np.float32)),
        (xp.ones(3), np.ones(3)),
        (xp.full((2,), 7), np.full((2,), 7)),
        (xp.arange(5), np.arange(5)),
        (xp.linspace(0, 1, 5), np.linspace(0, 1, 5)),
        (xp.eye(3), np.eye(3)),
        (xp.identity(2), np.identity(2)),
        (xp.array([1, 2]), np.array([1, 2])),
        (xp.asarray(3.0), np.asarray(3.0)),
        (xp.zeros_like(S(np.ones(2, dtype=np.int8))), np.zeros(2, dtype=np.int8)),
        (xp.full_like(S([1.0, 2.0]), 3.0), np.array([3.0, 3.0])),
        (xp.r_[S([1, 2]), S([3])], np.array([1, 2, 3])),
        (xp.mgrid[0:2, 0:3], np.mgrid[0:2, 0:3]),
    ]
    for got, exp in cases:
        assert_same(got, exp)
    assert xp.empty((2, 2)).shape == (2, 2)
    for g in xp.meshgrid(xp.arange(2), xp.arange(3)):
        assert isinstance(g, StrictArray)


def test_namespace_transfer_functions() -> None:
    h = np.array([1.0, 2.0])
    for fn in (xp.asarray, xp.array, xp.asanyarray, xp.ascontiguousarray):
        s = fn(h)
        assert isinstance(s, StrictArray)
        h[0] = 99.0
        assert s.get()[0] == 1.0  # host -> device copies
        h[0] = 1.0
    assert xp.asarray(h, dtype=np.float32).dtype == np.float32
    s = S([1.0])
    assert xp.asarray(s) is s
    assert xp.array(s) is not s
    assert xp.asnumpy(s).tolist() == [1.0]
    assert xp.get_array_module(s) is xp
    assert xp.get_array_module(h) is np
    # other functions do not accept host data
    with pytest.raises(TypeError):
        xp.zeros_like(h)
    with pytest.raises(TypeError):
        xp.stack([h, h])


def test_namespace_functions_match_numpy() -> None:
    a = np.array([[0.5, -1.0, 2.0], [3.0, 0.25, -0.75]])
    s = S(a)
    assert_same(xp.sin(s), np.sin(a))
    assert_same(xp.exp(s), np.exp(a))
    assert_same(xp.where(s > 0, s, 0.0), np.where(a > 0, a, 0.0))
    assert_same(xp.concatenate([s, s], axis=0), np.concatenate([a, a], axis=0))
    assert_same(xp.stack((s, s)), np.stack((a, a)))
    assert_same(xp.einsum("ij,kj->ik", s, s), np.einsum("ij,kj->ik", a, a))
    assert_same(xp.sum(s, axis=1), np.sum(a, axis=1))
    assert_same(xp.transpose(s), np.transpose(a))
    assert_same(xp.broadcast_to(s[0], (4, 3)), np.broadcast_to(a[0], (4, 3)))
    parts = xp.split(xp.arange(6), 3)
    assert isinstance(parts, list) and all(isinstance(p, StrictArray) for p in parts)
    nz = xp.nonzero(s > 0)
    assert isinstance(nz, tuple) and all(isinstance(p, StrictArray) for p in nz)
    with np.errstate(divide="ignore"):
        assert_same(xp.log(S([0.0, 1.0])), np.log(np.array([0.0, 1.0])))


def test_namespace_out_argument() -> None:
    x = S([1.0, 2.0])
    out = xp.empty_like(x)
    r = xp.add(x, 1.0, out=out)
    assert r is out
    assert_same(out, np.array([2.0, 3.0]))
    r2 = xp.multiply(x, 2.0, out=(out,))
    assert r2 is out
    assert_same(out, np.array([2.0, 4.0]))


def test_ufunc_methods() -> None:
    a = S(np.zeros(4))
    r = xp.add.at(a, S(np.array([0, 1, 1, 3])), 1.0)
    assert r is None
    assert a.tolist() == [1.0, 2.0, 0.0, 1.0]
    xp.add.at(a, (S([0, 2]),), S([10.0, 20.0]))
    assert a.tolist() == [11.0, 2.0, 20.0, 1.0]
    m = np.array([[1.0, 5.0], [4.0, 2.0]])
    assert_same(xp.maximum.reduce(S(m)), np.maximum.reduce(m))
    assert_same(xp.maximum.reduce(S(m), axis=None), np.maximum.reduce(m, axis=None))
    assert_same(xp.add.accumulate(S(m), axis=1), np.add.accumulate(m, axis=1))
    assert_same(xp.multiply.outer(S([1, 2]), S([3, 4, 5])), np.multiply.outer([1, 2], [3, 4, 5]))
    assert_same(xp.add.reduceat(S(np.arange(8)), S([0, 4])), np.add.reduceat(np.arange(8), [0, 4]))
    with pytest.raises(TypeError, match="reduce"):
        xp.maximum.reduce(m)


def test_linalg_solve_round_trip() -> None:
    rng = np.random.default_rng(0)
    a = rng.normal(size=(4, 4)) + 4 * np.eye(4)
    b = rng.normal(size=(4, 2))
    x = xp.linalg.solve(S(a), S(b))
    assert isinstance(x, StrictArray)
    np.testing.assert_allclose((S(a) @ x).get(), b, atol=1e-12)
    np.testing.assert_allclose(x.get(), np.linalg.solve(a, b))
    w, v = xp.linalg.eigh(S(a + a.T))
    assert isinstance(w, StrictArray) and isinstance(v, StrictArray)
    res = xp.linalg.svd(S(a))
    assert isinstance(res.S, StrictArray)
    assert isinstance(xp.linalg.inv(S(a)), StrictArray)


def test_linalg_never_raises_on_singular_or_nonfinite_input_as_cupy() -> None:
    # cuSOLVER does not report a singular matrix (CuPy's values, seen on an H200 with CuPy
    # 14.2); NumPy raises LinAlgError, which code written for NumPy catches in vain on a GPU
    nan, inf = np.nan, np.inf
    rank1 = S(np.array([[1.0, 2.0], [2.0, 4.0]]))
    np.testing.assert_array_equal(xp.linalg.solve(rank1, S(np.ones((2, 2)))).get(),
                                  [[-inf, -inf], [inf, inf]])
    np.testing.assert_array_equal(xp.linalg.solve(S(np.zeros((2, 3, 3))), S(np.ones(3))).get(),
                                  np.full((2, 3), [nan, nan, inf]))
    # inv of a C-ordered matrix is the LU of its transpose (gesv on a.T), not LAPACK's
    np.testing.assert_array_equal(xp.linalg.inv(S(np.array([[0.0, 1.0], [0.0, 1.0]]))).get(),
                                  [[-inf, inf], [nan, nan]])
    bad = S(np.array([[nan, 1.0], [1.0, 2.0]]))
    s = xp.linalg.svd(bad, compute_uv=False).get()
    assert np.isnan(s[0]) and np.isfinite(s[1:]).all()   # partly NaN, as cuSOLVER's gesvd
    with pytest.raises(RuntimeError, match="CUSOLVER_STATUS_INTERNAL_ERROR"):
        xp.linalg.eig(bad)
    with pytest.raises(RuntimeError, match="CUSOLVER_STATUS_INTERNAL_ERROR"):
        xp.linalg.eigvals(S(np.array([[inf, 0.0], [0.0, 1.0]])))
    # cholesky: potrf's partial factor, the failing pivot on the diagonal; the other
    # matrices of a stack factored
    k3 = np.array([[4.0, 2.0, 0.0], [2.0, 5.0, 1.0], [0.0, 1.0, -3.0]])
    low = xp.linalg.cholesky(S(np.stack([k3, 4 * np.eye(3)]))).get()
    np.testing.assert_allclose(low[0], [[2.0, 0, 0], [1.0, 2.0, 0], [0, 0.5, -3.25]])
    np.testing.assert_array_equal(low[1], 2 * np.eye(3))
    np.testing.assert_array_equal(xp.linalg.cholesky(S(np.array([[1.0, 2.0], [2.0, 1.0]]))).get(),
                                  [[1.0, 0.0], [2.0, -3.0]])


def test_fft_round_trip() -> None:
    x = np.random.default_rng(1).normal(size=16)
    f = xp.fft.fft(S(x))
    assert isinstance(f, StrictArray)
    np.testing.assert_allclose(f.get(), np.fft.fft(x))
    back = xp.fft.ifft(f)
    assert isinstance(back, StrictArray)
    np.testing.assert_allclose(back.real.get(), x, atol=1e-12)
    np.testing.assert_allclose(xp.fft.irfft(xp.fft.rfft(S(x)), n=16).get(), x, atol=1e-12)


def test_random_namespace() -> None:
    rng = xp.random.default_rng(0)
    assert isinstance(rng.normal(size=(2, 3)), StrictArray)
    assert rng.normal(size=(2, 3)).shape == (2, 3)
    assert isinstance(rng.integers(0, 10), StrictArray)
    np.testing.assert_array_equal(
        xp.random.default_rng(5).uniform(size=4).get(), np.random.default_rng(5).uniform(size=4)
    )
    assert isinstance(xp.random.RandomState(0).rand(3), StrictArray)
    assert isinstance(xp.random.normal(size=2), StrictArray)


# ------------------------------------------------------------------ property-based

_DTYPES = [np.float64, np.float32, np.int64, np.int32, np.uint8, np.complex128, np.bool_]
_ELEMWISE = [
    operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
    operator.pow, operator.lt, operator.eq, operator.and_, operator.xor,
]  # fmt: skip
_UFUNCS = ["add", "subtract", "multiply", "maximum", "minimum", "sin", "exp", "abs", "negative"]


def _elements(dtype: Any) -> Any:
    kind = np.dtype(dtype).kind
    if kind == "f":
        return hnp.from_dtype(np.dtype(dtype), min_value=-100, max_value=100, allow_nan=False)
    if kind == "c":
        return hnp.from_dtype(
            np.dtype(dtype), max_magnitude=100, allow_nan=False, allow_infinity=False
        )
    return hnp.from_dtype(np.dtype(dtype))


@st.composite
def array_pairs(draw: Any) -> tuple[np.ndarray, np.ndarray]:
    """Two arrays of random (possibly different) dtypes and broadcastable shapes."""
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4))
    arrays = []
    for shape in shapes.input_shapes:
        dt = draw(st.sampled_from(_DTYPES))
        arrays.append(draw(hnp.arrays(dt, shape, elements=_elements(dt))))
    return arrays[0], arrays[1]


def _check_against_numpy(np_fn: Any, strict_fn: Any) -> None:
    with np.errstate(all="ignore"):
        try:
            expected = np_fn()
        except Exception as e:  # numpy refuses: strict must refuse the same way
            with pytest.raises(type(e)):
                strict_fn()
            return
        got = strict_fn()
    assert_same(got, expected)


def _check_scalar_op(op: Any, x: np.ndarray, scalar: Any) -> None:
    _check_against_numpy(lambda: op(x, scalar), lambda: op(S(x), scalar))
    _check_against_numpy(lambda: op(scalar, x), lambda: op(scalar, S(x)))


@settings(max_examples=150, deadline=None)
@given(pair=array_pairs(), op=st.sampled_from(_ELEMWISE), py_scalar=st.booleans())
def test_hypothesis_operators_agree_with_numpy(
    pair: tuple[np.ndarray, np.ndarray], op: Any, py_scalar: bool
) -> None:
    a, b = pair
    _check_against_numpy(lambda: op(a, b), lambda: op(S(a), S(b)))
    scalar = b.reshape(-1)[0] if b.size else np.float64(1.5)  # a NumPy scalar
    _check_scalar_op(op, a, scalar.item() if py_scalar else scalar)


@settings(max_examples=150, deadline=None)
@given(pair=array_pairs(), name=st.sampled_from(_UFUNCS))
def test_hypothesis_ufuncs_agree_with_numpy(pair: tuple[np.ndarray, np.ndarray], name: str) -> None:
    a, b = pair
    np_fn = getattr(np, name)
    xp_fn = getattr(xp, name)
    if np_fn.nin == 1:
        _check_against_numpy(lambda: np_fn(a), lambda: xp_fn(S(a)))
    else:
        _check_against_numpy(lambda: np_fn(a, b), lambda: xp_fn(S(a), S(b)))
    axis = 0 if a.ndim else None
    _check_against_numpy(lambda: np.sum(a, axis=axis), lambda: xp.sum(S(a), axis=axis))


# ------------------------------------------------------------------ docstrings


def test_doctests() -> None:
    result = doctest.testmod(sa, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


def test_cupy_surface_functions_refuse_python_scalars_ufuncs_take_them() -> None:
    # As CuPy: cupy.reshape(0.5, ...) raises, cupy.add(0.5, x) does not.
    with pytest.raises(TypeError, match="reshape takes an array, not the Python float"):
        xp.reshape(0.5, (1,))
    with pytest.raises(TypeError, match="clip takes an array"):
        xp.clip(3, 0, 1)
    x = S(np.ones(2))
    assert sa.is_strict(xp.add(0.5, x)) and sa.is_strict(xp.reshape(x, (2, 1)))
    assert sa.to_numpy(xp.fft.fftfreq(4)).shape == (4,)  # a length, in CuPy too
    xp.reshape(np.float64(0.5), (1,))  # NumPy scalars have array methods


def test_cupy_surface_flags_and_dtypes() -> None:
    x = S(np.ones(2))
    assert x.flags.c_contiguous and not hasattr(x.flags, "writeable")
    with pytest.raises(ValueError, match="unsupported dtype"):
        S(np.zeros(2, dtype=[("float0", "V")]))


def test_cupy_surface_choose_takes_one_array_of_choices() -> None:
    # CuPy's ndarray.choose reads choices.shape: a list of arrays fails there, so here too
    idx = S(np.array([0, 1, 1]))
    with pytest.raises(TypeError, match="choose takes its choices as one array"):
        idx.choose([S(np.ones(3)), S(np.zeros(3))])
    assert_same(idx.choose(S(np.array([[1, 2, 3], [4, 5, 6]]))), np.array([1, 5, 6]))


def test_operators_defer_to_other_types_only_as_cupy_does():
    # CuPy 14: ``cupy_array @ obj`` calls ``obj.__rmatmul__`` only where obj's
    # __array_priority__ exceeds CuPy's 100 or its __array_ufunc__ is None; otherwise the
    # ufunc raises TypeError (seen on an H200 with BCOO at priority 100). NumPy defers more.
    class AtPriority:
        def __init__(self, p):
            self.__array_priority__ = p

        def __rmatmul__(self, other):
            return "deferred"

        __radd__ = __rmatmul__

    class NoUfunc:
        __array_ufunc__ = None

        def __radd__(self, other):
            return "deferred"

    x = S(np.ones(2))
    assert x @ AtPriority(101) == "deferred" and x + NoUfunc() == "deferred"
    assert np.ones(2) @ AtPriority(100) == "deferred"  # NumPy defers at 100, CuPy does not
    for op in (lambda a, b: a @ b, lambda a, b: a + b):
        with pytest.raises(TypeError, match="does not defer"):
            op(x, AtPriority(100))
    assert (x == object()) is False  # comparisons: unchanged (Python falls back to identity)


def test_cupy_python_ints_beyond_64_bits_overflow() -> None:
    # CuPy holds a Python int operand as int64 (uint64 from 2**63) before the cast to the
    # kernel's dtype: beside a float array NumPy gives inf, CuPy (and so this) OverflowError
    x = S(np.ones(2, np.float16))
    for call in (lambda: x + 2**64, lambda: 2**64 * x, lambda: xp.add(x, -(2**63) - 1),
                 lambda: x < 2**70):
        with pytest.raises(OverflowError, match="too large to convert to C long"):
            call()
    y = S(np.ones(2))
    assert_same(y + (2**64 - 1), np.ones(2) + (2**64 - 1))  # a uint64 holds it
    assert_same(y + 2.0**64, np.ones(2) + 2.0**64)


def test_cupy_clip_refuses_out_of_range_int_bounds() -> None:
    # numpy.clip takes a uint8 array clipped at -1; cupy.clip casts the bound first
    u = np.array([0, 5, 200], np.uint8)
    for call in (lambda: xp.clip(S(u), -1, 10), lambda: S(u).clip(None, 256)):
        with pytest.raises(OverflowError, match="out of bounds for uint8"):
            call()
    assert_same(xp.clip(S(u), 1, 10), np.clip(u, 1, 10))
    assert_same(S(u).clip(1, None), u.clip(1, None))
    assert_same(xp.clip(S(u.astype(np.float32)), -1, 300), np.clip(u.astype(np.float32), -1, 300))


def test_sorts_order_floats_by_their_bits_as_cupys_radix_sort():
    # CuPy sorts a float vector by a radix sort of the bits (a -NaN came first on an H200),
    # where NumPy's stable sort keeps -0.0/0.0 and NaNs of either sign in order
    v = np.array([0.0, -0.0, np.nan, -np.nan, 1.0, -np.inf, np.inf, -1.0])
    for dtype in (np.float64, np.float32, np.float16):
        got = xp.sort(S(v.astype(dtype))).get()
        assert np.signbit(got).tolist() == [True, True, True, True, False, False, False, False]
        assert xp.argsort(S(v.astype(dtype))).get().tolist() == [3, 5, 7, 1, 0, 4, 6, 2]
    a = S(v.reshape(2, 4))
    a.sort(axis=1)  # in place, as ndarray.sort
    assert np.signbit(a.get()).tolist() == [[True, True, False, False],
                                            [True, True, False, False]]
    assert a.argsort(axis=None).get().tolist() == xp.argsort(a, axis=None).get().tolist()
    assert xp.sort(S(np.array([3, 1, 2]))).get().tolist() == [1, 2, 3]


def test_ufuncs_have_at_only_where_cupys_do():
    # cupy.ufunc.at is a scatter kernel for add/subtract/maximum/minimum and the bitwise
    # and/or/xor: funcgrad's other indexed updates (x.at[i].multiply) must not need it
    assert hasattr(xp.add, "at") and hasattr(xp.bitwise_or, "at")
    for name in ("multiply", "divide", "logical_or", "power"):
        with pytest.raises(AttributeError, match="as CuPy"):
            getattr(xp, name).at  # noqa: B018


def test_indexed_updates_take_the_gpu_paths_on_the_strict_backend():
    # multiply/min/max and set with repeated indices go through funcgrad.ops._ufunc_at's
    # rounds there, as on CuPy, and equal NumPy's ufunc.at / last-write-wins
    import funcgrad.numpy as fnp

    x, idx = np.arange(1.0, 6.0), np.array([1, 3, 1, 1, 4])
    u = np.array([2.0, -1.0, 3.0, 0.5, 7.0])
    for method, ufunc in (("multiply", np.multiply), ("min", np.minimum), ("max", np.maximum)):
        want = x.copy()
        ufunc.at(want, (idx,), u)
        got = getattr(fnp.at(S(x))[S(idx)], method)(S(u))
        assert type(got) is StrictArray and got.get().tolist() == want.tolist()
    want = x.copy()
    want[idx] = u
    assert fnp.at(S(x))[S(idx)].set(S(u)).get().tolist() == want.tolist()


def test_ufuncs_refuse_lists_as_cupys_do():
    # cupy.add(x, [1.0]) raises "Unsupported type <class 'list'>"; NumPy converts the list
    x = S(np.ones(2))
    for call in (lambda: xp.add(x, [1.0, 2.0]), lambda: xp.sin((0.5, 1.0))):
        with pytest.raises(TypeError, match="not a (list|tuple)"):
            call()
    assert xp.add(x, xp.asarray([1.0, 2.0])).get().tolist() == [2.0, 3.0]
