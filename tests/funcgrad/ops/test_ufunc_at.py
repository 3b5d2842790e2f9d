"""``ufunc_at``'s fallback for array modules without ``ufunc.at`` (CuPy's multiply): rounds
over occurrence ranks, and the segmented scan past ``max_rounds``, against NumPy's
``ufunc.at``; and the scatter primitives run through the fallback end to end."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import DEVICE, assert_allclose, dev, host
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.backend import xp_for_device
from funcgrad.ops import _ufunc_at
from funcgrad.ops._ufunc_at import ufunc_at

OPS = ["multiply", "add", "maximum", "minimum"]


@pytest.fixture
def without_ufunc_at(monkeypatch):
    """Every array module treated like one without ``ufunc.at`` and without scatter kernels."""
    monkeypatch.setattr(_ufunc_at, "_exact_at_for_all", lambda xp: False)
    monkeypatch.setattr(_ufunc_at, "_DEVICE_AT", {})


@st.composite
def _cases(draw):
    """``(out, key, updates)`` with repeated indices, zeros and negative numbers: an index
    array on axis 0 (with repeats and negative indices), optionally a second broadcast array
    or a slice on axis 1, updates of full or lower rank."""
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    small = st.integers(-3, 3).map(float)
    out = np.array(draw(st.lists(small, min_size=int(np.prod(shape)),
                                 max_size=int(np.prod(shape))))).reshape(shape)
    n = draw(st.integers(0, 12))
    i0 = np.array(draw(st.lists(st.integers(-shape[0], shape[0] - 1), min_size=n,
                                max_size=n)), dtype=np.int64)
    key: tuple = (i0,)
    if ndim > 1:
        kind = draw(st.sampled_from(["array", "slice", "none"]))
        if kind == "array":
            i1 = np.array(draw(st.lists(st.integers(0, shape[1] - 1), min_size=1, max_size=1)))
            key = (i0[:, None], i1[None, :]) if draw(st.booleans()) else (i0, i1)
        elif kind == "slice":
            key = (i0, slice(None, None, draw(st.sampled_from([1, -1, 2]))))
    g = np.zeros(shape)[key].shape
    lead = draw(st.integers(0, len(g)))
    ushape = g[lead:]
    u = np.array(draw(st.lists(small, min_size=int(np.prod(ushape)),
                               max_size=int(np.prod(ushape))))).reshape(ushape)
    return out, key, u


@settings(max_examples=60, deadline=None)
@given(case=_cases(), op=st.sampled_from(OPS), rounds=st.sampled_from([0, 2, 32]))
def test_fallback_matches_numpy_ufunc_at(case, op, rounds):
    out, key, u = case
    expected = out.copy()
    getattr(np, op).at(expected, key, np.broadcast_to(u, expected[key].shape))
    xp = xp_for_device(DEVICE)
    got = _ufunc_at._at_by_rounds(xp, getattr(xp, op), dev(out.copy()),
                                  tuple(dev(k) for k in key), dev(u), rounds)
    # Small integers: exact whatever the order of combination.
    np.testing.assert_array_equal(host(got), expected)


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_rounds_keep_numpy_order_bit_for_bit(data):
    n = data.draw(st.integers(1, 30))
    idx = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    u = np.array(data.draw(st.lists(st.floats(-1e3, 1e3), min_size=n, max_size=n)))
    x = np.array([1.1, -0.3, 0.0, 7.0])
    expected = x.copy()
    np.multiply.at(expected, (idx,), u)
    xp = xp_for_device(DEVICE)
    got = _ufunc_at._at_by_rounds(xp, xp.multiply, dev(x.copy()), (dev(idx),), dev(u), 64)
    np.testing.assert_array_equal(host(got), expected)


def test_int_dtype_and_empty_updates():
    xp = xp_for_device(DEVICE)
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    idx = np.array([1, 1, 0, 1])
    expected = x.copy()
    np.multiply.at(expected, (idx,), np.int64(-2))
    for rounds in (0, 32):
        got = _ufunc_at._at_by_rounds(xp, xp.multiply, dev(x.copy()), (dev(idx),),
                                      np.int64(-2), rounds)
        np.testing.assert_array_equal(host(got), expected)
    empty = (dev(np.zeros(0, np.int64)),)
    got = _ufunc_at._at_by_rounds(xp, xp.multiply, dev(x.copy()), empty, 3, 32)
    np.testing.assert_array_equal(host(got), x)


def test_module_without_at_takes_the_fallback(without_ufunc_at):
    xp = xp_for_device(DEVICE)
    out = dev(np.ones(3))
    got = ufunc_at(xp, "multiply", out, (dev(np.array([2, 0, 2])),), dev(np.array([2., 3., 5.])))
    np.testing.assert_array_equal(host(got), [3., 1., 10.])


@pytest.mark.parametrize("method", ["multiply", "add", "min", "max", "set"])
def test_scatter_primitives_through_the_fallback(without_ufunc_at, method):
    """``x.at[idx].<method>`` eagerly, under jit, vmap and grad, with the fallback, equals
    NumPy's ``ufunc.at`` (``set``: plain assignment, the last of repeated writes winning)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 3))
    u = rng.standard_normal((2, 6, 3))
    u[0, 1] = 0.0
    idx = np.array([4, 1, 4, 4, -1, 0])
    ufunc = {"multiply": np.multiply, "add": np.add, "min": np.minimum, "max": np.maximum}
    expected = x.copy()
    for b in range(2):
        if method == "set":
            expected[b][idx] = u[b]
        else:
            ufunc[method].at(expected[b], (idx,), u[b])

    def f(xb, ub):
        return getattr(fnp.at(xb)[dev(idx)], method)(ub)

    xd, ud = dev(x), dev(u)
    assert_allclose(host(funcgrad.vmap(f)(xd, ud)), expected)
    assert_allclose(host(funcgrad.jit(funcgrad.vmap(f))(xd, ud)), expected)
    assert_allclose(host(f(xd[0], ud[0])), expected[0])
    if method == "multiply":
        # d/dx of sum(x.at[idx].multiply(u)): the product of the updates at each position.
        grad = funcgrad.grad(lambda a: fnp.sum(f(a, ud[0])))(xd[0])
        ones = np.ones_like(x[0])
        np.multiply.at(ones, (idx,), u[0])
        assert_allclose(host(grad), ones)
    if method == "set":
        # Only the write that survives receives the cotangent: the last of the repeated 4s.
        grad = funcgrad.grad(lambda b: fnp.sum(f(xd[0], b) * dev(x[0])))(ud[0])
        want = np.zeros_like(u[0])
        for j, i in enumerate(idx % 5):
            if j == max(k for k, i2 in enumerate(idx % 5) if i2 == i):
                want[j] = x[0][i]
        assert_allclose(host(grad), want)


class _FakeUfunc:
    """A ufunc of a fake CuPy: records each ``at`` call and forwards to NumPy's."""

    def __init__(self, ufunc, calls, with_at):
        self._ufunc, self._calls = ufunc, calls
        if with_at:
            self.at = self._at

    def __call__(self, *args, **kwargs):
        return self._ufunc(*args, **kwargs)

    def _at(self, a, indices, b):
        self._calls.append((self._ufunc.__name__, a.dtype.name))
        self._ufunc.at(a, indices, b)


def _fake_cupy(calls, with_at=True):
    import types

    fake = types.ModuleType("cupy")  # named as CuPy, so ufunc_at takes CuPy's rules
    for name in ("add", "multiply", "maximum"):
        setattr(fake, name, _FakeUfunc(getattr(np, name), calls, with_at))
    for name in ("arange", "argsort", "searchsorted", "asarray", "broadcast_to", "int64",
                 "cumsum", "bincount", "concatenate", "ones", "where"):
        setattr(fake, name, getattr(np, name))
    return fake


def test_cupy_additions_use_cupy_add_at_not_the_deprecated_cupyx_scatter_add():
    # CuPy 14 deprecates cupyx.scatter_add (ndarray.scatter_add) for cupy.add.at; the
    # additions of the dtypes CuPy's atomic add takes go there, the rest (other dtypes,
    # other ufuncs: CuPy's maximum.at rounds float64 through float32) through the rounds.
    calls: list = []
    fake = _fake_cupy(calls)
    idx = (np.array([1, 1, 0]),)
    for dtype in (np.float64, np.float32, np.int64, np.int32):
        got = ufunc_at(fake, "add", np.zeros(3, dtype), idx, np.array([1, 2, 3], dtype))
        np.testing.assert_array_equal(got, np.array([3, 3, 0], dtype))
    assert calls == [("add", "float64"), ("add", "float32"), ("add", "int64"), ("add", "int32")]
    calls.clear()
    got = ufunc_at(fake, "add", np.zeros(3, np.complex128), idx, np.array([1j, 2, 3]))
    np.testing.assert_array_equal(got, [3, 2 + 1j, 0])
    got = ufunc_at(fake, "maximum", np.zeros(3), idx, np.array([1.0, 2.0, -3.0]))
    np.testing.assert_array_equal(got, [0.0, 2.0, 0.0])
    assert calls == []


def test_a_module_without_ufunc_at_for_a_dtype_takes_the_rounds():
    calls: list = []
    got = ufunc_at(_fake_cupy(calls), "add", np.zeros(2, bool), (np.array([1, 1]),),
                   np.array([True, True]))
    np.testing.assert_array_equal(got, [False, True])  # NumPy: add.at on bools is "or"
    assert calls == []
