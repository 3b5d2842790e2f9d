"""The out-of-bounds modes of the gather/scatter primitives: ``mode="fill"`` (JAX's
fill-or-drop) against NumPy references, and ``GatherScatterMode``."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
from funcgrad.ops import gather as ga
from funcgrad.ops import reductions as red
from funcgrad.ops import scatter as sc
from funcgrad.ops.indexing import FULL, GatherScatterMode, Operand, default_fill_value
from funcgrad.test_util import check_grads, check_jit, check_vmap


def _ref_fill_take(x, idx, axis, fill):
    """NumPy reference: take along ``axis`` with out-of-range indices giving ``fill``."""
    n = x.shape[axis]
    ok = (idx >= -n) & (idx < n)
    out = np.take(x, np.where(ok, idx, 0), axis=axis).astype(x.dtype)
    shape = [1] * out.ndim
    shape[axis:axis + idx.ndim] = idx.shape
    return np.where(ok.reshape(shape), out, np.asarray(fill).astype(x.dtype))


def _ref_drop_add(x, u, idx):
    out = x.copy()
    n = x.shape[0]
    for i, v in zip(idx, np.broadcast_to(u, idx.shape)):
        if -n <= i < n:
            out[i] += v
    return out


def test_from_any_matches_jax():
    assert GatherScatterMode.from_any(None) is GatherScatterMode.FILL_OR_DROP
    assert GatherScatterMode.from_any("fill") is GatherScatterMode.FILL_OR_DROP
    assert GatherScatterMode.from_any("drop") is GatherScatterMode.FILL_OR_DROP
    assert GatherScatterMode.from_any("clip") is GatherScatterMode.CLIP
    assert GatherScatterMode.from_any("promise_in_bounds") is GatherScatterMode.PROMISE_IN_BOUNDS
    with pytest.raises(ValueError, match="unknown gather/scatter mode"):
        GatherScatterMode.from_any("wrap")
    pib = GatherScatterMode.PROMISE_IN_BOUNDS
    assert pib.index_mode(scatter=False) == "clamp"
    assert pib.index_mode(scatter=True) == "fill"


@pytest.mark.parametrize("dtype, want", [
    ("float32", np.nan), ("int8", -128), ("int64", np.iinfo(np.int64).min),
    ("uint16", 65535), ("bool", True),
])
def test_default_fill_values(dtype, want):
    got = default_fill_value(np.dtype(dtype))
    assert (np.isnan(got) if np.isnan(want) else got == want)


@pytest.mark.parametrize("dtype", ["float64", "int32", "uint8", "bool"])
def test_gather_fill_matches_reference(dtype):
    x = (np.arange(12) % 5).reshape(3, 4).astype(dtype)
    idx = np.array([[-5, -4, 3], [4, 0, 9]])
    got = host(ga.gather(dev(x), dev(idx), indexer=(FULL, Operand(0)), mode="fill"))
    want = _ref_fill_take(x, idx, 1, 0)   # the primitive's default fill: 0 (linear)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    fill = default_fill_value(x.dtype)
    got = host(ga.gather(dev(x), dev(idx), indexer=(FULL, Operand(0)), mode="fill",
                         fill_value=fill))
    np.testing.assert_array_equal(got, _ref_fill_take(x, idx, 1, fill))
    got = host(ga.gather(dev(x), dev(idx), indexer=(FULL, Operand(0)), mode="fill",
                         fill_value=1))
    np.testing.assert_array_equal(got, _ref_fill_take(x, idx, 1, 1))


def test_gather_fill_scalar_and_separated_indices():
    x = np.arange(24.0).reshape(2, 3, 4)
    got = host(ga.gather(dev(x), dev(np.array(3)), indexer=(FULL, Operand(0)), mode="fill",
                         fill_value=np.nan))
    assert np.isnan(got).all() and got.shape == (2, 4)
    # Advanced indices separated by a slice: their dims move to the front (NumPy's rule).
    i, j = np.array([0, 2, 1]), np.array([1, 4, -4])
    got = host(ga.gather(dev(x), dev(i), dev(j), indexer=(Operand(0), FULL, Operand(1)),
                         mode="fill", fill_value=-1.0))
    want = np.stack([x[a, :, b] if (a < 2 and -4 <= b < 4) else np.full(3, -1.0)
                     for a, b in zip(i, j)])
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op, ufunc", [
    (sc.scatter_add, np.add), (sc.scatter_mul, np.multiply),
    (sc.scatter_min, np.minimum), (sc.scatter_max, np.maximum),
])
def test_scatters_drop_out_of_range(op, ufunc):
    x = np.linspace(-1.0, 1.0, 5)
    idx = np.array([0, 5, -1, -6, 2, 2, 40])
    u = np.arange(1.0, 8.0)
    keep = (idx >= -5) & (idx < 5)
    want = x.copy()
    ufunc.at(want, idx[keep], u[keep])
    got = host(op(dev(x), dev(u), dev(idx), indexer=(Operand(0),), mode="fill"))
    assert_allclose(got, want)


def test_scatter_set_drop_and_all_dropped():
    x = np.zeros((3, 4))
    got = host(sc.scatter(dev(x), 9.0, dev(np.array([0, 7, -4, -5])),
                          indexer=(FULL, Operand(0)), mode="fill"))
    want = x.copy()
    want[:, [0, 0]] = 9.0
    np.testing.assert_array_equal(got, want)
    got = host(sc.scatter(dev(x), 9.0, dev(np.array(7)), indexer=(FULL, Operand(0)),
                          mode="fill"))
    np.testing.assert_array_equal(got, x)
    got = host(sc.scatter_add(dev(x), dev(np.ones((2, 3))), dev(np.array([[5], [1]])),
                              dev(np.array([1, 2, 3])), indexer=(Operand(0), Operand(1)),
                              mode="fill"))
    want = x.copy()
    want[1, [1, 2, 3]] += 1.0
    np.testing.assert_array_equal(got, want)


def test_fill_gradients_are_zero_where_filled():
    idx = np.array([0, 5, 2, -1, -7])

    def f(v):
        return red.reduce_sum(ga.gather(v, dev(idx), indexer=(Operand(0),), mode="fill",
                                        fill_value=3.0) ** 2)

    x = dev(np.arange(1.0, 5.0))
    g = host(funcgrad.grad(f)(x))
    assert_allclose(g, np.array([2.0, 0.0, 6.0, 8.0]))
    check_grads(f, (x,), order=2)

    def h(v, u):
        return sc.scatter(v, u, dev(idx), indexer=(Operand(0),), mode="fill")

    check_grads(h, (x, dev(np.arange(5.0) + 0.5)), order=1)
    gx, gu = funcgrad.grad(lambda v, u: red.reduce_sum(h(v, u)), (0, 1))(
        x, dev(np.ones(5)))
    assert_allclose(host(gx), np.array([0.0, 1.0, 0.0, 0.0]))
    assert_allclose(host(gu), np.array([1.0, 0.0, 1.0, 1.0, 0.0]))


def test_fill_under_jit_and_vmap():
    x = dev(np.arange(4.0))
    idx = dev(np.array([[0, 9], [3, -9], [-1, 2]]))

    def g(i):
        return ga.gather(x, i, indexer=(Operand(0),), mode="fill")

    def s(i):
        return sc.scatter_add(x, 1.0, i, indexer=(Operand(0),), mode="fill")

    check_vmap(g, (idx,))
    check_vmap(s, (idx,))
    check_jit(g, (idx,))
    check_jit(s, (idx,))
    for row in host(idx):
        assert_allclose(host(s(dev(row))), _ref_drop_add(host(x), 1.0, row))


def test_fill_value_must_be_static():
    with pytest.raises(TypeError, match="fill_value must be a concrete scalar"):
        ga.gather(np.arange(3.0), np.array([0]), indexer=(Operand(0),), mode="fill",
                  fill_value=np.array([1.0, 2.0]))


def test_fill_taylor_coefficients_are_zero_where_filled():
    def f(v):
        return ga.gather(v, np.array([0, 5]), indexer=(Operand(0),), mode="fill",
                         fill_value=7.0)

    out, series = funcgrad.jet(f, (np.arange(3.0),), ((np.ones(3), np.ones(3)),))
    assert host(out).tolist() == [0.0, 7.0]
    for s in series:
        assert host(s).tolist() == [1.0, 0.0]


def test_one_hot_is_a_read_mode_in_the_table():
    """JAX's ONE_HOT (``take_along_axis(..., mode="one_hot")``): reads fill out-of-range
    positions with 0 (an all-zero one-hot row), whatever fill_value says; writes refuse it."""
    m = GatherScatterMode.from_any("one_hot")
    assert m is GatherScatterMode.ONE_HOT and GatherScatterMode.from_any(m) is m
    assert m.index_mode(scatter=False) == "fill"
    with pytest.raises(ValueError, match=r"ONE_HOT is a mode for reads.*take_along_axis"):
        m.index_mode(scatter=True)
    for dtype, zero in (("float32", 0.0), ("int8", 0), ("uint8", 0), ("bool", False),
                        ("complex64", 0j)):
        v = m.read_fill_value(np.dtype(dtype), fill_value=7)
        assert v == zero and type(v) is type(zero)
    fill = GatherScatterMode.FILL_OR_DROP
    assert fill.read_fill_value(np.dtype("int8")) == -128
    assert fill.read_fill_value(np.dtype("int8"), fill_value=3) == 3


def test_mode_raise_checks_bounds_itself_where_indexing_would_not_raise():
    # CuPy wraps out-of-range index arrays silently, so mode="raise" checks them explicitly
    # there, and on the strict backend too (the CPU pass runs the GPU's check); NumPy's own
    # indexing raises, so nothing is checked twice there
    from funcgrad._strict_array import strict_numpy, to_strict
    from funcgrad.ops.indexing import fix_indices

    idx = np.array([0, -4, 2])
    with pytest.raises(IndexError, match="index -4 is out of bounds for axis 0 with size 3"):
        fix_indices("gather", strict_numpy, (3,), (Operand(0),), [to_strict(idx)], "raise")
    assert fix_indices("gather", np, (3,), (Operand(0),), [idx], "raise")[0] is idx
