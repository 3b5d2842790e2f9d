"""The window primitives ``patches`` (im2col) and ``fold`` (col2im), and the max-pooling
primitives ``window_argmax``/``window_gather``/``window_scatter``: values against a direct
loop, adjointness, every derivative rule (check_grads to order 2), vmap against a loop, jit,
and the strict device backend."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad
from funcgrad.errors import ShapeError
from funcgrad.ops import windows
from funcgrad.ops.windows import (
    fold,
    patches,
    window_argmax,
    window_counts,
    window_gather,
    window_scatter,
)
from funcgrad.test_util import check_grads
from tests.helpers import assert_allclose, dev, host

CASES = [
    # kernel, stride, dilation, padding (lo, hi) per axis, spatial size
    ((3,), (1,), (1,), ((1, 1),), (7,)),
    ((3, 2), (2, 1), (1, 2), ((1, 2), (0, 1)), (7, 6)),
    ((2, 2), (2, 2), (1, 1), ((0, 0), (0, 0)), (6, 4)),        # tiles: the reshape path
    ((2, 3), (1, 2), (2, 1), ((2, -1), (1, 0)), (7, 6)),       # negative hi: tail unused
    ((2, 1, 2), (1, 2, 2), (1, 1, 1), ((0, 1), (1, 0), (0, 0)), (3, 4, 4)),
]


def naive_patches(x, kernel, stride, dilation, padding):
    xp = np.pad(x, [(0, 0), (0, 0)] + [(lo, max(hi, 0)) for lo, hi in padding])
    counts = window_counts(x.shape[2:], kernel, stride, dilation, padding)
    out = np.zeros((x.shape[1],) + kernel + (x.shape[0],) + counts)
    for offs in itertools.product(*(range(k) for k in kernel)):
        for pos in itertools.product(*(range(c) for c in counts)):
            src = tuple(p * s + o * d for p, s, o, d in zip(pos, stride, offs, dilation))
            out[(slice(None),) + offs + (slice(None),) + pos] = xp[(slice(None),) * 2 + src].T
    return out


@pytest.mark.parametrize("kernel,stride,dilation,padding,spatial", CASES)
def test_patches_values_and_fold_is_adjoint(kernel, stride, dilation, padding, spatial):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3) + spatial)
    p = patches(dev(x), kernel, stride, dilation, padding)
    assert_allclose(p, naive_patches(x, kernel, stride, dilation, padding))
    ct = rng.standard_normal(p.shape)
    back = fold(dev(ct), spatial, kernel, stride, dilation, padding)
    assert back.shape == x.shape
    # <patches(x), ct> == <x, fold(ct)>: fold is patches' transpose.
    np.testing.assert_allclose(np.sum(host(p) * ct), np.sum(x * host(back)), rtol=1e-12)


@pytest.mark.parametrize("kernel,stride,dilation,padding,spatial", CASES[:4])
def test_rules_check_grads(kernel, stride, dilation, padding, spatial):
    rng = np.random.default_rng(1)
    x = dev(rng.standard_normal((2, 2) + spatial))
    check_grads(lambda v: patches(v, kernel, stride, dilation, padding), (x,), order=2)
    p = patches(x, kernel, stride, dilation, padding)
    c = dev(rng.standard_normal(p.shape))
    check_grads(lambda v: fold(v, spatial, kernel, stride, dilation, padding), (c,), order=2)


@pytest.mark.parametrize("kernel,stride,dilation,padding,spatial", CASES)
def test_vmap_matches_loop_and_jit_matches_eager(kernel, stride, dilation, padding, spatial):
    rng = np.random.default_rng(2)
    xs = rng.standard_normal((3, 2, 2) + spatial)

    def f(v):
        return patches(v, kernel, stride, dilation, padding)

    for axis in (0, 2):
        batched = funcgrad.vmap(f, in_axes=axis)(dev(np.moveaxis(xs, 0, axis)))
        assert_allclose(batched, np.stack([host(f(dev(v))) for v in xs]))
    p0 = f(dev(xs[0]))
    cs = rng.standard_normal((3,) + p0.shape)

    def g(c):
        return fold(c, spatial, kernel, stride, dilation, padding)

    batched = funcgrad.vmap(g, in_axes=1)(dev(np.moveaxis(cs, 0, 1)))
    assert_allclose(batched, np.stack([host(g(dev(c))) for c in cs]))
    assert_allclose(funcgrad.jit(f)(dev(xs[0])), p0)
    assert_allclose(funcgrad.jit(g)(dev(cs[0])), g(dev(cs[0])))


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_adjoint_hypothesis(data):
    nd = data.draw(st.integers(1, 3))
    kernel = tuple(data.draw(st.integers(1, 3)) for _ in range(nd))
    stride = tuple(data.draw(st.integers(1, 3)) for _ in range(nd))
    dilation = tuple(data.draw(st.integers(1, 2)) for _ in range(nd))
    padding = tuple((data.draw(st.integers(0, 2)), data.draw(st.integers(-1, 2)))
                    for _ in range(nd))
    spatial = tuple(data.draw(st.integers(1, 6)) for _ in range(nd))
    if min(window_counts(spatial, kernel, stride, dilation, padding)) < 1:
        with pytest.raises(ShapeError):
            patches(np.zeros((1, 1) + spatial), kernel, stride, dilation, padding)
        return
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 2) + spatial)
    p = patches(x, kernel, stride, dilation, padding)
    assert_allclose(p, naive_patches(x, kernel, stride, dilation, padding))
    ct = rng.standard_normal(p.shape)
    np.testing.assert_allclose(
        np.sum(p * ct), np.sum(x * fold(ct, spatial, kernel, stride, dilation, padding)),
        rtol=1e-10, atol=1e-12)


def test_shape_errors_name_the_primitive():
    with pytest.raises(ShapeError, match="patches"):
        patches(np.zeros((1, 1, 2, 2)), (3, 3), (1, 1), (1, 1), ((0, 0), (0, 0)))
    with pytest.raises(ShapeError, match="one entry per spatial axis"):
        patches(np.zeros((1, 1, 4, 4)), (3,), (1,), (1,), ((0, 0),))
    with pytest.raises(ShapeError, match="fold"):
        fold(np.zeros((1, 2, 1, 3)), (5,), (2,), (1,), (1,), ((0, 0),))


@pytest.mark.parametrize("kernel,stride,dilation,padding,spatial", CASES)
def test_fold_matrix_product_path_matches_strided_adds(kernel, stride, dilation, padding,
                                                       spatial, monkeypatch):
    # Small planes fold by one product with a 0/1 selection matrix; large ones by strided
    # adds: both give the same sums, and an inf in the windows takes the adds (inf * 0).
    rng = np.random.default_rng(4)
    counts = window_counts(spatial, kernel, stride, dilation, padding)
    ct = rng.standard_normal((3,) + kernel + (2,) + counts)
    monkeypatch.setattr(windows, "TAKE_MAX_ROW", 0)  # (the take path is tested below)
    monkeypatch.setattr(windows, "FOLD_GEMM_MAX_PLANE", 10 ** 6)
    by_product = host(fold(dev(ct), spatial, kernel, stride, dilation, padding))
    ct_inf = ct.copy()
    ct_inf.reshape(-1)[5] = np.inf
    with_inf = host(fold(dev(ct_inf), spatial, kernel, stride, dilation, padding))
    monkeypatch.setattr(windows, "FOLD_GEMM_MAX_PLANE", 0)
    by_adds = host(fold(dev(ct), spatial, kernel, stride, dilation, padding))
    np.testing.assert_allclose(by_product, by_adds, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(with_inf, host(fold(dev(ct_inf), spatial, kernel, stride,
                                                      dilation, padding)))
    assert not np.isnan(with_inf).any()


# -- max pooling primitives -------------------------------------------------------------------

POOL_CASES = [
    # kernel, stride, dilation, spatial
    ((2,), (2,), (1,), (8,)),                  # tiles exactly
    ((3,), (1,), (1,), (7,)),                  # overlapping windows
    ((2, 2), (2, 2), (1, 1), (6, 4)),          # tiles exactly (the CNN case)
    ((3, 2), (2, 1), (2, 1), (9, 5)),          # overlap, dilation, unused tail
    ((2, 2), (3, 3), (1, 1), (7, 8)),          # gaps between windows
    ((2, 1, 2), (1, 2, 2), (1, 1, 1), (3, 4, 4)),
]


def naive_argmax(x, kernel, stride, dilation):
    counts = window_counts(x.shape[2:], kernel, stride, dilation, ((0, 0),) * len(kernel))
    offs = list(itertools.product(*(range(k) for k in kernel)))
    out = np.zeros(x.shape[:2] + counts, dtype=np.int64)
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for pos in itertools.product(*(range(q) for q in counts)):
            vals = [x[(n, c) + tuple(p * s + o * d for p, s, o, d in
                                     zip(pos, stride, off, dilation))] for off in offs]
            # the first maximum; a NaN is the maximum (the first NaN)
            nans = [i for i, v in enumerate(vals) if np.isnan(v)]
            out[(n, c) + pos] = nans[0] if nans else int(np.argmax(vals))
    return out


def _pool_input(rng, spatial):
    # small integers make ties common; then a NaN and infinities
    x = rng.integers(-2, 3, (2, 3) + spatial).astype(np.float64)
    flat = x.reshape(-1)
    flat[3], flat[10], flat[17] = np.nan, -np.inf, np.inf
    return x


@pytest.mark.parametrize("kernel,stride,dilation,spatial", POOL_CASES)
def test_window_argmax_gather_scatter_values(kernel, stride, dilation, spatial):
    rng = np.random.default_rng(5)
    x = _pool_input(rng, spatial)
    idx = window_argmax(dev(x), kernel, stride, dilation)
    expect = naive_argmax(x, kernel, stride, dilation)
    np.testing.assert_array_equal(host(idx), expect)
    got = host(window_gather(dev(x), idx, kernel, stride, dilation))
    counts = expect.shape[2:]
    cols = naive_patches(np.nan_to_num(x, nan=7.5, posinf=9.0, neginf=-9.0), kernel, stride,
                         dilation, ((0, 0),) * len(kernel))
    k = int(np.prod(kernel))
    cols = cols.reshape((x.shape[1], k, x.shape[0]) + counts)
    picked = np.take_along_axis(np.moveaxis(cols, 1, 0), expect.swapaxes(0, 1)[None], 0)[0]
    np.testing.assert_array_equal(np.nan_to_num(got, nan=7.5, posinf=9.0, neginf=-9.0),
                                  picked.swapaxes(0, 1))
    assert np.isnan(got).sum() >= 1
    # scatter is gather's transpose: <gather(x), ct> == <x, scatter(ct)>
    y = rng.standard_normal(x.shape)
    ct = rng.standard_normal(got.shape)
    g = host(window_gather(dev(y), idx, kernel, stride, dilation))
    back = host(window_scatter(dev(ct), idx, spatial, kernel, stride, dilation))
    assert back.shape == x.shape and back.dtype == x.dtype
    np.testing.assert_allclose(np.sum(g * ct), np.sum(y * back), rtol=1e-12)
    # exactly one element per window receives its value (overlaps add up)
    ones = host(window_scatter(dev(np.ones(got.shape)), idx, spatial, kernel, stride,
                               dilation))
    assert ones.sum() == np.prod(got.shape)


def test_window_gather_and_scatter_keep_nonfinite_values_exact():
    x = np.array([[[-np.inf, 1.0, np.inf, -0.0, 2.0, np.nan]]], dtype=np.float32)
    idx = np.array([[[1, 0, 0]]], dtype=np.uint8)
    np.testing.assert_array_equal(host(window_gather(dev(x), dev(idx), (2,), (2,), (1,))),
                                  np.array([[[1.0, np.inf, 2.0]]], np.float32))
    ct = np.array([[[np.inf, np.nan, -0.0]]], dtype=np.float32)
    back = host(window_scatter(dev(ct), dev(idx), (6,), (2,), (2,), (1,)))
    np.testing.assert_array_equal(back, np.array([[[0, np.inf, np.nan, 0, -0.0, 0]]],
                                                 np.float32))
    assert np.signbit(back[0, 0, 4])


@pytest.mark.parametrize("kernel,stride,dilation,spatial", POOL_CASES[:4])
def test_window_gather_scatter_check_grads(kernel, stride, dilation, spatial):
    rng = np.random.default_rng(6)
    x = dev(rng.standard_normal((2, 2) + spatial))
    idx = window_argmax(x, kernel, stride, dilation)
    check_grads(lambda v: window_gather(v, idx, kernel, stride, dilation), (x,), order=2)
    ct = dev(rng.standard_normal(host(idx).shape))
    check_grads(lambda v: window_scatter(v, idx, spatial, kernel, stride, dilation), (ct,),
                order=2)
    # the max pool as the library writes it: gather at the argmax (no derivative through
    # the index), checked by finite differences away from ties
    check_grads(lambda v: window_gather(v, window_argmax(v, kernel, stride, dilation),
                                        kernel, stride, dilation), (x,), order=2)


@pytest.mark.parametrize("kernel,stride,dilation,spatial", POOL_CASES)
def test_window_primitives_vmap_and_jit(kernel, stride, dilation, spatial):
    rng = np.random.default_rng(7)
    xs = rng.standard_normal((3, 2, 2) + spatial)

    def pool(v):
        return window_gather(v, window_argmax(v, kernel, stride, dilation), kernel, stride,
                             dilation)

    for axis in (0, 2):
        batched = funcgrad.vmap(pool, in_axes=axis)(dev(np.moveaxis(xs, 0, axis)))
        assert_allclose(batched, np.stack([host(pool(dev(v))) for v in xs]))
    assert_allclose(funcgrad.jit(pool)(dev(xs[0])), pool(dev(xs[0])))
    # one operand batched, the other not (indices shared / values shared)
    idx = window_argmax(dev(xs[0]), kernel, stride, dilation)
    batched = funcgrad.vmap(lambda v: window_gather(v, idx, kernel, stride, dilation))(dev(xs))
    assert_allclose(batched, np.stack([host(window_gather(dev(v), idx, kernel, stride,
                                                          dilation)) for v in xs]))
    idxs = funcgrad.vmap(lambda v: window_argmax(v, kernel, stride, dilation))(dev(xs))
    cts = rng.standard_normal(host(idxs).shape)
    batched = funcgrad.vmap(lambda c, i: window_scatter(c, i, spatial, kernel, stride,
                                                        dilation), in_axes=(None, 0))(
        dev(cts[0]), idxs)
    assert_allclose(batched, np.stack([host(window_scatter(dev(cts[0]), dev(i), spatial, kernel,
                                                           stride, dilation))
                                       for i in host(idxs)]))
    g = funcgrad.grad(lambda v: funcgrad.numpy.sum(pool(v) ** 2))
    assert_allclose(funcgrad.jit(g)(dev(xs[0])), g(dev(xs[0])))


def test_window_primitive_errors():
    with pytest.raises(ShapeError, match="window_argmax"):
        window_argmax(np.zeros((1, 1, 2)), (3,), (1,), (1,))
    with pytest.raises(ShapeError, match="window_gather: indices"):
        window_gather(np.zeros((1, 1, 4)), np.zeros((1, 1, 2)), (2,), (2,), (1,))
    with pytest.raises(ShapeError, match="window_scatter"):
        window_scatter(np.zeros((1, 1, 3)), np.zeros((1, 1, 3), np.uint8), (4,), (2,), (2,),
                       (1,))


def _in_layout(x, layout):
    """``x`` with the same values in another memory layout: C order, the two leading axes
    swapped in memory (a convolution's output), or a non-contiguous slice."""
    if layout == "swapped":
        return np.ascontiguousarray(x.swapaxes(0, 1)).swapaxes(0, 1)
    if layout == "strided":
        wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
        wide[..., ::2] = x
        return wide[..., ::2]
    return x


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_window_primitives_hypothesis(data):
    # argmax (ties, NaNs), gather and scatter against direct loops, over kernels, strides,
    # dilations, dtypes and the inputs' memory layouts
    nd = data.draw(st.integers(1, 3))
    kernel = tuple(data.draw(st.integers(1, 3)) for _ in range(nd))
    stride = tuple(data.draw(st.integers(1, 3)) for _ in range(nd))
    dilation = tuple(data.draw(st.integers(1, 2)) for _ in range(nd))
    spatial = tuple(data.draw(st.integers(1, 6)) for _ in range(nd))
    lead = (data.draw(st.integers(0, 3)), data.draw(st.integers(1, 3)))
    counts = window_counts(spatial, kernel, stride, dilation, ((0, 0),) * nd)
    if min(counts) < 1:
        with pytest.raises(ShapeError, match="window_argmax"):
            window_argmax(np.zeros(lead + spatial), kernel, stride, dilation)
        return
    dtype = data.draw(st.sampled_from([np.float64, np.float32, np.int16]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    x = rng.integers(-2, 3, lead + spatial).astype(dtype)
    if x.dtype.kind == "f" and x.size and data.draw(st.booleans()):
        x.reshape(-1)[rng.integers(0, x.size, 2)] = np.nan
    layout = data.draw(st.sampled_from(["c", "swapped", "strided"]))
    xl = _in_layout(x, layout)
    idx = window_argmax(dev(xl), kernel, stride, dilation)
    expect = naive_argmax(x, kernel, stride, dilation)
    np.testing.assert_array_equal(host(idx), expect)
    offs = list(itertools.product(*(range(k) for k in kernel)))

    def element(n, c, pos):
        """the input index that window ``pos``'s argmax names"""
        off = offs[expect[(n, c) + pos]]
        return (n, c) + tuple(p * s + o * d for p, s, o, d in zip(pos, stride, off, dilation))

    got = host(window_gather(dev(xl), idx, kernel, stride, dilation))
    ct = rng.standard_normal(expect.shape).astype(np.float32)
    back = host(window_scatter(dev(_in_layout(ct, layout)), dev(_in_layout(host(idx), layout)),
                               spatial, kernel, stride, dilation))
    want_back = np.zeros(lead + spatial, np.float32)
    for n, c in itertools.product(range(lead[0]), range(lead[1])):
        for pos in itertools.product(*(range(q) for q in counts)):
            np.testing.assert_array_equal(got[(n, c) + pos], x[element(n, c, pos)])
            want_back[element(n, c, pos)] += ct[(n, c) + pos]
    assert got.dtype == x.dtype and back.dtype == np.float32
    np.testing.assert_allclose(back, want_back, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kernel,stride,dilation,padding,spatial", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.complex128, np.int32])
def test_take_paths_match_strided_paths(kernel, stride, dilation, padding, spatial, dtype,
                                        monkeypatch):
    # On the host, short window rows move by one take through a cached index; longer ones
    # by strided copies and adds: the same values, in every input layout
    rng = np.random.default_rng(8)
    x = (rng.standard_normal((3, 2) + spatial) * 4).astype(dtype)
    p = patches(x, kernel, stride, dilation, padding)
    ct = (rng.standard_normal(p.shape) * 4).astype(dtype)
    monkeypatch.setattr(windows, "FOLD_GEMM_MAX_PLANE", 0)
    by_take = [patches(_in_layout(x, layout), kernel, stride, dilation, padding)
               for layout in ("c", "swapped", "strided")]
    folded = fold(ct, spatial, kernel, stride, dilation, padding)
    monkeypatch.setattr(windows, "TAKE_MAX_ROW", 0)
    np.testing.assert_array_equal(patches(x, kernel, stride, dilation, padding), p)
    for got in by_take:
        np.testing.assert_array_equal(got, p)
    want = fold(ct, spatial, kernel, stride, dilation, padding)
    assert folded.dtype == want.dtype == dtype
    np.testing.assert_allclose(folded, want, rtol=1e-6, atol=1e-5)


def test_large_index_arrays_are_not_cached(monkeypatch):
    # above TAKE_MAX_INDEX entries the host paths compute their indices per call (a cache of
    # output-sized index arrays would hold memory); the values are the same
    rng = np.random.default_rng(9)
    x = rng.standard_normal((3, 2, 6, 4))
    want_idx = window_argmax(x, (2, 2), (2, 2), (1, 1))
    want = window_gather(x, want_idx, (2, 2), (2, 2), (1, 1))
    want_back = window_scatter(want, want_idx, (6, 4), (2, 2), (2, 2), (1, 1))
    monkeypatch.setattr(windows, "TAKE_MAX_INDEX", 0)
    windows._window_bases.cache_clear()
    idx = window_argmax(x, (2, 2), (2, 2), (1, 1))
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_array_equal(window_gather(x, idx, (2, 2), (2, 2), (1, 1)), want)
    np.testing.assert_array_equal(window_scatter(want, idx, (6, 4), (2, 2), (2, 2), (1, 1)),
                                  want_back)
    assert windows._window_bases.cache_info().currsize == 0
