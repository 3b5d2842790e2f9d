"""``lax.gather`` and the ``lax.scatter`` family with XLA's dimension numbers, against a
loop-by-loop NumPy reference of XLA's semantics (CI has no JAX), under grad, vmap and jit."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers import assert_allclose, dev, host
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad
from funcgrad import lax
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.test_util import check_grads, check_jit, check_vmap

GDN = lax.GatherDimensionNumbers
SDN = lax.ScatterDimensionNumbers
M = lax.GatherScatterMode


def _fill_default(dtype):
    dt = np.dtype(dtype)
    if dt.kind in "fc":
        return np.nan
    return np.iinfo(dt).min if dt.kind == "i" else np.iinfo(dt).max


def ref_gather(x, idx, dn, sizes, mode="clip", fill=None):
    """XLA's gather, one output element at a time."""
    offset = dn.offset_dims
    window = [d for d in range(x.ndim)
              if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    batch_shape = idx.shape[:-1]
    out_rank = len(batch_shape) + len(offset)
    out_shape, bi, wi = [], iter(batch_shape), iter(window)
    for p in range(out_rank):
        out_shape.append(sizes[next(wi)] if p in offset else next(bi))
    out = np.zeros(out_shape, x.dtype)
    fill = _fill_default(x.dtype) if fill is None else fill
    for o in itertools.product(*map(range, out_shape)):
        g = tuple(o[p] for p in range(out_rank) if p not in offset)
        vec = idx[g]
        start = [0] * x.ndim
        ok = True
        for k, d in enumerate(dn.start_index_map):
            s = int(vec[k])
            hi = x.shape[d] - sizes[d]
            if mode == "clip":
                s = min(max(s, 0), hi)
            elif not 0 <= s <= hi:
                ok = False
            start[d] = s
        for d, j in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
            start[d] = g[j]
        for i, d in enumerate(window):
            start[d] += o[offset[i]]
        out[o] = x[tuple(start)] if ok else fill
    return out


def ref_scatter(x, idx, u, dn, combine, mode="drop"):
    """XLA's scatter, one update element at a time (in order)."""
    out = x.copy()
    window = [d for d in range(x.ndim)
              if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
    sizes = [1] * x.ndim
    for d, w in zip(window, dn.update_window_dims):
        sizes[d] = u.shape[w]
    for ui in itertools.product(*map(range, u.shape)):
        g = tuple(ui[p] for p in range(u.ndim) if p not in dn.update_window_dims)
        vec = idx[g]
        pos = [0] * x.ndim
        ok = True
        for k, d in enumerate(dn.scatter_dims_to_operand_dims):
            s = int(vec[k])
            hi = x.shape[d] - sizes[d]
            if mode == "clip":
                s = min(max(s, 0), hi)
            elif not 0 <= s <= hi:
                ok = False
            pos[d] = s
        for d, j in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims):
            pos[d] = g[j]
        for i, d in enumerate(window):
            pos[d] += ui[dn.update_window_dims[i]]
        if ok:
            out[tuple(pos)] = combine(out[tuple(pos)], u[ui])
    return out


# Cases: (operand shape, indices, dimension numbers, slice sizes)
GATHER_CASES = {
    "take_rows": ((4, 3), np.array([[2], [0], [3]]), GDN((1,), (0,), (0,)), (1, 3)),
    "points": ((4, 3), np.array([[1, 2], [3, 0]]), GDN((), (0, 1), (0, 1)), (1, 1)),
    "blocks_2d": ((5, 6), np.array([[[1, 4], [3, 3]], [[4, 0], [0, 5]]]),
                  GDN((2, 3), (), (0, 1)), (2, 3)),
    "offset_first": ((5, 6), np.array([[1], [4]]), GDN((0,), (1,), (1,)), (3, 1)),
    "permuted_map": ((3, 4, 5), np.array([[1, 2], [0, 3], [2, 0]]),
                     GDN((1, 2), (1,), (2, 1)), (3, 1, 2)),
    "batching": ((3, 5), np.array([[1], [4], [0]]),
                 GDN((), (1,), (1,), operand_batching_dims=(0,),
                     start_indices_batching_dims=(0,)), (1, 1)),
    "out_of_range": ((6,), np.array([[-1], [2], [5], [9]]), GDN((1,), (), (0,)), (2,)),
}


@pytest.mark.parametrize("case", list(GATHER_CASES))
@pytest.mark.parametrize("mode", ["clip", "fill"])
def test_gather_matches_xla_reference(case, mode):
    shape, idx, dn, sizes = GATHER_CASES[case]
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    got = host(lax.gather(dev(x), dev(idx), dn, sizes, mode=mode))
    want = ref_gather(x, idx, dn, sizes, mode)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_gather_modes_and_fill_values():
    x = dev(np.arange(6, dtype=np.int32))
    idx = dev(np.array([[-1], [4], [5]]))
    dn = GDN((1,), (), (0,))
    # None (PROMISE_IN_BOUNDS) clamps like XLA; "fill" fills whole blocks.
    assert host(lax.gather(x, idx, dn, (2,))).tolist() == [[0, 1], [4, 5], [4, 5]]
    assert host(lax.gather(x, idx, dn, (2,), mode=M.CLIP)).tolist() == [[0, 1], [4, 5], [4, 5]]
    lo = np.iinfo(np.int32).min
    assert host(lax.gather(x, idx, dn, (2,), mode="fill")).tolist() == [
        [lo, lo], [4, 5], [lo, lo]]
    assert host(lax.gather(x, idx, dn, (2,), mode=M.FILL_OR_DROP, fill_value=7)).tolist() == [
        [7, 7], [4, 5], [7, 7]]


def test_one_hot_gathers_read_zero_and_scatters_refuse_it():
    """ONE_HOT (JAX's take_along_axis mode) reads 0 for an out-of-bounds block (an all-zero
    one-hot row) whatever fill_value says; as a read mode, the scatters refuse it."""
    for case in ("blocks_2d", "out_of_range", "batching"):
        shape, idx, dn, sizes = GATHER_CASES[case]
        x = np.arange(1, 1 + np.prod(shape), dtype=np.int32).reshape(shape)
        got = host(lax.gather(dev(x), dev(idx), dn, sizes, mode=M.ONE_HOT, fill_value=7))
        np.testing.assert_array_equal(got, ref_gather(x, idx, dn, sizes, "fill", fill=0))
    shape, idx, dn, sizes = SCATTER_CASES["rows"]
    for fn in (lax.scatter, lax.scatter_add, lax.scatter_mul, lax.scatter_min, lax.scatter_max,
               lax.scatter_sub):
        with pytest.raises(ValueError, match=rf"^lax.{fn.__name__}: GatherScatterMode.ONE_HOT "
                                             "is a mode for reads"):
            fn(dev(np.zeros(shape)), dev(idx), dev(np.ones(sizes)), dn, mode="one_hot")


@pytest.mark.parametrize("mode", ["clip", "fill", "one_hot"])
def test_gather_derivatives_jit_vmap(mode):
    shape, idx, dn, sizes = GATHER_CASES["blocks_2d"]
    x = dev(np.random.default_rng(0).normal(size=shape))

    def f(v):
        return lax.gather(v, dev(idx), dn, sizes, mode=mode, fill_value=0.0)

    check_grads(f, (x,), order=2)
    check_jit(lambda v, i: lax.gather(v, i, dn, sizes, mode=mode), (x, dev(idx)))
    idxs = dev(np.stack([idx, idx[::-1], idx + 1]))
    check_vmap(lambda i: lax.gather(x, i, dn, sizes, mode=mode), (idxs,))
    xs = dev(np.random.default_rng(1).normal(size=(3,) + shape))
    check_vmap(lambda v, i: lax.gather(v, i, dn, sizes, mode=mode), (xs, idxs))


SCATTER_CASES = {
    "rows": ((4, 3), np.array([[2], [0], [2]]), SDN((1,), (0,), (0,)), (3, 3)),
    "points": ((4, 3), np.array([[1, 2], [3, 0], [1, 2]]), SDN((), (0, 1), (0, 1)), (3,)),
    "blocks": ((5, 6), np.array([[1, 4], [3, 3], [4, 5]]), SDN((1, 2), (), (0, 1)),
               (3, 2, 3)),
    "window_first": ((5, 6), np.array([[1], [4]]), SDN((0,), (1,), (1,)), (3, 2)),
    "batching": ((3, 5), np.array([[1], [4], [1]]),
                 SDN((), (1,), (1,), operand_batching_dims=(0,),
                     scatter_indices_batching_dims=(0,)), (3,)),
    "out_of_range": ((6,), np.array([[-1], [2], [5], [9], [4]]), SDN((1,), (), (0,)),
                     (5, 2)),
}

COMBINE = {
    "scatter": (lax.scatter, lambda a, b: b),
    "scatter_add": (lax.scatter_add, lambda a, b: a + b),
    "scatter_sub": (lax.scatter_sub, lambda a, b: a - b),
    "scatter_mul": (lax.scatter_mul, lambda a, b: a * b),
    "scatter_min": (lax.scatter_min, min),
    "scatter_max": (lax.scatter_max, max),
}


@pytest.mark.parametrize("case", list(SCATTER_CASES))
@pytest.mark.parametrize("op", list(COMBINE))
@pytest.mark.parametrize("mode", [None, "clip"])
def test_scatter_matches_xla_reference(case, op, mode):
    shape, idx, dn, ushape = SCATTER_CASES[case]
    rng = np.random.default_rng(3)
    x = rng.normal(size=shape)
    u = rng.normal(size=ushape)
    fn, combine = COMBINE[op]
    got = host(fn(dev(x), dev(idx), dev(u), dn, mode=mode))
    want = ref_scatter(x, idx, u, dn, combine, "clip" if mode == "clip" else "drop")
    assert_allclose(got, want)


@pytest.mark.parametrize("op", ["scatter", "scatter_add", "scatter_mul", "scatter_max"])
def test_scatter_derivatives_jit_vmap(op):
    shape, idx, dn, ushape = SCATTER_CASES["blocks"]
    rng = np.random.default_rng(4)
    x, u = dev(rng.normal(size=shape)), dev(rng.normal(size=ushape))
    fn = COMBINE[op][0]

    def f(v, w):
        return fn(v, dev(idx), w, dn)

    check_grads(f, (x, u), order=2 if op in ("scatter", "scatter_add") else 1)
    check_jit(lambda v, i, w: fn(v, i, w, dn), (x, dev(idx), u))
    idxs = dev(np.stack([idx, idx[::-1], np.minimum(idx + 1, 4)]))
    check_vmap(lambda i, w: fn(x, i, w, dn), (idxs, dev(rng.normal(size=(3,) + ushape))))


def test_scatter_apply_applies_once_per_update():
    dn = SDN((), (0,), (0,))
    idx = np.array([[1], [3], [3], [7]])
    x = np.arange(1.0, 6.0)
    got = host(lax.scatter_apply(dev(x), dev(idx), lambda v: v * 2, dn, update_shape=(4,)))
    assert got.tolist() == [1.0, 4.0, 3.0, 16.0, 5.0]
    jitted = funcgrad.jit(lambda v, i: lax.scatter_apply(v, i, lambda w: w * 2, dn,
                                                         update_shape=(4,)))
    assert host(jitted(dev(x), dev(idx))).tolist() == got.tolist()
    g = funcgrad.grad(lambda v: lax.scatter_apply(v, dev(idx), funcgrad.numpy.sin, dn,
                                                  update_shape=(4,)).sum())(dev(x))
    want = np.ones(5)
    want[1] = np.cos(2.0)
    want[3] = np.cos(np.sin(4.0)) * np.cos(4.0)
    assert_allclose(host(g), want)


def test_scatter_apply_under_vmap_and_jit_grad():
    dn = SDN((), (0,), (0,))

    def f(x, i):
        return lax.scatter_apply(x, i, lambda v: v * 2, dn, update_shape=(3,))

    xs = dev(np.arange(8.0).reshape(2, 4))
    ids = dev(np.array([[[1], [3], [3]], [[0], [0], [0]]]))
    assert host(funcgrad.vmap(f)(xs, ids)).tolist() == [[0.0, 2.0, 2.0, 12.0],
                                                        [32.0, 5.0, 6.0, 7.0]]
    g = funcgrad.vmap(funcgrad.jit(funcgrad.grad(lambda x, i: f(x, i).sum())))(xs, ids)
    assert host(g).tolist() == [[1.0, 2.0, 1.0, 4.0], [8.0, 1.0, 1.0, 1.0]]


def test_errors_name_the_argument():
    x = dev(np.zeros((3, 4)))
    idx = dev(np.array([[0]]))
    with pytest.raises(TypeError, match="GatherDimensionNumbers"):
        lax.gather(x, idx, ((1,), (0,), (0,)), (1, 4))
    with pytest.raises(ShapeError, match="start_index_map"):
        lax.gather(x, idx, GDN((1,), (0,), (0, 1)), (1, 4))
    with pytest.raises(ShapeError, match="slice_sizes"):
        lax.gather(x, idx, GDN((1,), (0,), (0,)), (1, 5))
    with pytest.raises(ShapeError, match="at most 1"):
        lax.gather(x, idx, GDN((1,), (0,), (0,)), (2, 4))
    with pytest.raises(ShapeError, match="offset_dims"):
        lax.gather(x, idx, GDN((), (0,), (0,)), (1, 4))
    with pytest.raises(DTypeError, match="integer dtype"):
        lax.gather(x, dev(np.array([[0.0]])), GDN((1,), (0,), (0,)), (1, 4))
    with pytest.raises(DTypeError, match="updates dtype float32"):
        lax.scatter_add(x, idx, dev(np.ones((1, 4), np.float32)), SDN((1,), (0,), (0,)))
    with pytest.raises(ShapeError, match="batch shape"):
        lax.scatter_add(x, idx, dev(np.ones((2, 4))), SDN((1,), (0,), (0,)))
    with pytest.raises(ValueError, match="unknown gather/scatter mode"):
        lax.scatter_add(x, idx, dev(np.ones((1, 4))), SDN((1,), (0,), (0,)), mode="wrap")


# ---------------------------------------------------------------------------------------------
# Random dimension numbers against the reference (Hypothesis, kept small)


@st.composite
def _gather_configs(draw):
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(rank))
    mapped = draw(st.permutations(range(rank)).map(
        lambda p: tuple(p[:draw(st.integers(1, rank))])))
    collapsed = tuple(sorted(d for d in mapped if draw(st.booleans())))
    sizes = tuple(1 if d in collapsed else draw(st.integers(0, n)) for d, n in enumerate(shape))
    batch = tuple(draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, 2))))
    n_window = rank - len(collapsed)
    offset = tuple(sorted(draw(st.permutations(range(len(batch) + n_window)))[:n_window]))
    idx = np.array(draw(st.lists(st.integers(-2, 5), min_size=int(np.prod(batch)) * len(mapped),
                                 max_size=int(np.prod(batch)) * len(mapped))),
                   dtype=np.int32).reshape(batch + (len(mapped),))
    return shape, idx, GDN(offset, collapsed, mapped), sizes, draw(st.sampled_from(["clip",
                                                                                    "fill"]))


@settings(max_examples=30, deadline=None)
@given(_gather_configs())
def test_gather_random_dimension_numbers(cfg):
    shape, idx, dn, sizes, mode = cfg
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    got = host(lax.gather(dev(x), dev(idx), dn, sizes, mode=mode))
    np.testing.assert_array_equal(got, ref_gather(x, idx, dn, sizes, mode))


@settings(max_examples=30, deadline=None)
@given(_gather_configs(), st.sampled_from(["scatter_add", "scatter_max"]))
def test_scatter_random_dimension_numbers(cfg, op):
    # A gather configuration read as the mirror-image scatter. (Not ``scatter``: which of
    # two writes to one element wins is unspecified in XLA.)
    shape, idx, gdn, sizes, mode = cfg
    out_shape = host(lax.gather(dev(np.zeros(shape)), dev(idx), gdn, sizes)).shape
    dn = SDN(gdn.offset_dims, gdn.collapsed_slice_dims, gdn.start_index_map)
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    u = np.arange(np.prod(out_shape), dtype=np.float64).reshape(out_shape) * 0.5 - 3.0
    fn, combine = COMBINE[op]
    m = "clip" if mode == "clip" else "drop"
    got = host(fn(dev(x), dev(idx), dev(u), dn, mode=m))
    assert_allclose(got, ref_scatter(x, idx, u, dn, combine, m))


def test_index_take_equals_jax():
    # jax.lax.index_take (JAX 0.10.2): indices wrap modulo the axis size
    x = dev(np.arange(24.0).reshape(2, 3, 4))
    out = lax.index_take(x, (dev(np.array([0, -1, 4])), dev(np.array([3, 1, 2]))), (0, 2))
    np.testing.assert_array_equal(host(out), [[3.0, 7.0, 11.0], [13.0, 17.0, 21.0],
                                              [2.0, 6.0, 10.0]])
    out = lax.index_take(x, (dev(np.array([2, 0])),), (1,))
    np.testing.assert_array_equal(host(out), np.arange(24.0).reshape(2, 3, 4)[:, [2, 0]]
                                  .transpose(1, 0, 2))
    g = funcgrad.grad(lambda v: lax.index_take(v, (dev(np.array([0, 0])),), (1,)).sum())(x)
    np.testing.assert_array_equal(host(g)[0], [[2.0] * 4, [0.0] * 4, [0.0] * 4])
    with pytest.raises(TypeError, match="one index array per axis"):
        lax.index_take(x, (dev(np.array([0])),), (0, 1))
