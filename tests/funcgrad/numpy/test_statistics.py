"""Focused tests for funcgrad.numpy statistics / searching / binning / set routines: errors,
jit (ConcretizationError without size=/length=, static size= working), vmap and grad
behaviour that the op table (tests/funcgrad/op_tables/statistics.py) cannot express."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.errors import ConcretizationError
from funcgrad.test_util import check_grads


def test_searchsorted_vmap_over_sorted_array_and_values() -> None:
    rng = np.random.default_rng(0)
    a = np.sort(rng.standard_normal((4, 6)), axis=1)
    v = rng.standard_normal((4, 3))
    for side in ("left", "right"):
        got = funcgrad.vmap(lambda a, v, s=side: fnp.searchsorted(a, v, s))(dev(a), dev(v))
        want = np.stack([np.searchsorted(a[i], v[i], side) for i in range(4)])
        assert_allclose(got, want)
    got = funcgrad.vmap(lambda v: fnp.searchsorted(dev(a[0]), v), in_axes=1)(dev(v))
    assert_allclose(got, np.searchsorted(a[0], v).T)


def test_searchsorted_jit_and_ties() -> None:
    a = np.array([1.0, 2.0, 2.0, 2.0, 3.0, np.nan])
    v = np.array([2.0, np.nan, 0.0, 3.0])
    f = funcgrad.jit(lambda a, v: (fnp.searchsorted(a, v), fnp.searchsorted(a, v, "right")))
    got = f(dev(a), dev(v))
    assert_allclose(got, (np.searchsorted(a, v), np.searchsorted(a, v, "right")))


def test_interp_vmap_and_grads() -> None:
    xp = np.array([0.0, 1.0, 2.5, 4.0])
    fp = np.array([[1.0, -1.0, 0.5, 2.0], [0.0, 3.0, 1.0, -2.0]])
    x = np.array([0.3, 1.7, 3.9])
    got = funcgrad.vmap(lambda f: fnp.interp(dev(x), dev(xp), f))(dev(fp))
    assert_allclose(got, np.stack([np.interp(x, xp, f) for f in fp]))
    got = funcgrad.vmap(lambda xx: fnp.interp(xx, dev(xp), dev(fp[0])))(dev(x))
    assert_allclose(got, np.interp(x, xp, fp[0]))
    check_grads(lambda x, xp, fp: fnp.interp(x, xp, fp), dev((x, xp, fp[0])), order=2,
                modes=("fwd", "rev"))
    g = funcgrad.grad(lambda x: fnp.sum(fnp.interp(x, dev(xp), dev(fp[0]))))(dev(x))
    slopes = np.diff(fp[0]) / np.diff(xp)
    assert_allclose(g, slopes[np.searchsorted(xp, x, "right") - 1])


def test_integer_outputs_as_indices_under_grad() -> None:
    edges = np.array([0.0, 1.0, 2.0, 3.0])
    params = np.array([10.0, 20.0, 30.0])
    xs = np.array([0.5, 2.5, 2.7])

    def f(p, x):
        i = fnp.clip(fnp.searchsorted(dev(edges), x, "right") - 1, 0, 2)
        return fnp.sum(fnp.take(p, i) * x)

    gp, gx = funcgrad.grad(f, argnums=(0, 1))(dev(params), dev(xs))
    assert_allclose(gp, np.array([0.5, 0.0, 5.2]))
    assert_allclose(gx, np.array([10.0, 30.0, 30.0]))
    gu = funcgrad.grad(lambda x: fnp.sum(fnp.unique(x, size=3) ** 2))(dev(np.array([3.0, 1.0, 3.0])))
    # (the first occurrence of each unique value gets its derivative; padding repeats 1.0)
    assert_allclose(gu, np.array([6.0, 4.0, 0.0]))


@pytest.mark.parametrize("fn,fix", [
    (lambda x: fnp.unique(x), "size="),
    (lambda x: fnp.unique_counts(x), "size="),
    (lambda x: fnp.bincount(fnp.astype(x, np.int64)), "length="),
    (lambda x: fnp.intersect1d(x, x), "size="),
    (lambda x: fnp.setdiff1d(x, x), "size="),
])
def test_value_dependent_shapes_need_static_size(fn, fix) -> None:
    x = dev(np.array([3.0, 1.0, 3.0]))
    with pytest.raises(ConcretizationError, match=fix):
        funcgrad.jit(fn)(x)
    with pytest.raises(ConcretizationError):
        funcgrad.vmap(fn)(dev(np.ones((2, 3))))


def test_size_under_jit_and_vmap() -> None:
    x = np.array([[3, 1, 3, 2], [5, 5, 5, 5]])
    f = funcgrad.jit(lambda x: fnp.unique(x, return_counts=True, return_inverse=True,
                                          size=3, fill_value=-1))
    v, inv, c = f(dev(x[0]))
    assert_allclose((v, inv, c), (np.array([1, 2, 3]), np.array([2, 0, 2, 1]),
                                  np.array([1, 1, 2])))
    vs = funcgrad.vmap(lambda r: fnp.unique(r, size=3, fill_value=0))(dev(x))
    assert_allclose(vs, np.array([[1, 2, 3], [5, 0, 0]]))
    counts = funcgrad.jit(lambda x: fnp.bincount(x, length=4))(dev(np.array([0, 1, 1, 9])))
    assert_allclose(counts, np.array([1, 2, 0, 0]))
    d = funcgrad.jit(lambda a, b: fnp.setdiff1d(a, b, size=4, fill_value=-7))(
        dev(np.array([1, 2, 3, 4])), dev(np.array([2, 4])))
    assert_allclose(d, np.array([1, 3, -7, -7]))
    u = funcgrad.jit(lambda a, b: fnp.union1d(a, b, size=5))(dev(np.array([3, 1])),
                                                           dev(np.array([1, 2])))
    assert_allclose(u, np.array([1, 2, 3, 1, 1]))


def test_histogram_jit_matches_numpy() -> None:
    a = np.random.default_rng(1).standard_normal(30)
    got = funcgrad.jit(lambda a: fnp.histogram(a, 5))(dev(a))
    assert_allclose(got, np.histogram(a, 5))
    w = np.abs(a)
    g = funcgrad.grad(lambda w: fnp.sum(fnp.histogram(dev(a), 3, weights=w)[0] ** 2))(dev(w))
    h = np.histogram(a, 3, weights=w)[0]
    idx = np.clip(np.searchsorted(np.histogram_bin_edges(a, 3), a, "right") - 1, 0, 2)
    assert_allclose(g, 2 * h[idx])


def test_partition_is_a_valid_partition() -> None:
    x = np.random.default_rng(2).standard_normal((3, 7))
    for k in (0, 3, -1):
        p = host(fnp.partition(dev(x), k, axis=1))
        assert np.all(p[:, :k % 7] <= p[:, [k % 7]]) and np.all(p[:, k % 7:] >= p[:, [k % 7]])
        i = host(fnp.argpartition(dev(x), k, axis=1))
        assert_allclose(np.take_along_axis(x, i, 1), p)


def test_nanargmax_traced_all_nan_gives_minus_one() -> None:
    x = np.array([[np.nan, np.nan], [1.0, np.nan]])
    got = funcgrad.jit(lambda x: fnp.nanargmax(x, axis=1))(dev(x))
    assert_allclose(got, np.array([-1, 0]))
    with pytest.raises(ValueError, match="All-NaN slice"):
        fnp.nanargmin(dev(x), axis=1)


def test_numpy_functions_dispatch_on_tracers() -> None:
    xp, fp = np.array([0.0, 1.0, 2.0]), np.array([0.0, 2.0, 0.0])
    g = funcgrad.grad(lambda x: np.sum(np.interp(x, dev(xp), dev(fp))))(dev(np.array([0.5])))
    assert_allclose(g, np.array([2.0]))
    g = funcgrad.grad(lambda a: np.sum(np.diff(a) ** 2))(dev(np.array([0.0, 1.0, 3.0])))
    assert_allclose(g, np.array([-2.0, -2.0, 4.0]))


def test_second_order_grads() -> None:
    rng = np.random.default_rng(3)
    a, v = rng.standard_normal(6), rng.standard_normal(3)
    check_grads(lambda a, v: fnp.convolve(a, v, "same"), dev((a, v)), order=2,
                modes=("fwd", "rev"))
    check_grads(lambda y, x: fnp.trapezoid(y ** 2, x), dev((a, np.cumsum(np.abs(a) + 0.1))),
                order=2, modes=("fwd", "rev"))
    check_grads(lambda x: fnp.cumulative_sum(x ** 2, include_initial=True), dev((a,)),
                order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("call,exc,match", [
    (lambda: fnp.diff(np.ones(3), n=-1), ValueError, "non-negative"),
    (lambda: fnp.diff(np.array(1.0)), ValueError, "at least one dimensional"),
    (lambda: fnp.gradient(np.ones(2), edge_order=2), ValueError, "too small"),
    (lambda: fnp.gradient(np.ones(3), edge_order=3), ValueError, "edge_order"),
    (lambda: fnp.gradient(np.ones(3), np.ones(4)), ValueError, "match the length"),
    (lambda: fnp.trapezoid(np.ones(3), np.ones(4)), ValueError, "does not match"),
    (lambda: fnp.cumulative_sum(np.ones((2, 2))), ValueError, "axis"),
    (lambda: fnp.searchsorted(np.ones(3), 1.0, side="middle"), ValueError, "side"),
    (lambda: fnp.searchsorted(np.ones((2, 2)), 1.0), ValueError, "1-d"),
    (lambda: fnp.digitize(np.ones(2), np.array([0.0, 2.0, 1.0])), ValueError, "monoton"),
    (lambda: fnp.digitize(np.ones(2) * 1j, np.array([0.0, 1.0])), TypeError, "complex"),
    (lambda: fnp.bincount(np.array([0, -1])), ValueError, "negative"),
    (lambda: fnp.bincount(np.array([0.0, 1.0])), TypeError, "Cannot cast"),
    (lambda: fnp.bincount(np.array([0, 1]), weights=np.ones(3)), ValueError, "same length"),
    (lambda: fnp.histogram(np.ones(3), bins=0), ValueError, "positive"),
    (lambda: fnp.histogram(np.ones(3), bins="nonsense"), ValueError, "nonsense"),
    (lambda: fnp.histogram(np.ones(3), bins=np.array([1.0, 0.0])), ValueError, "monoton"),
    (lambda: fnp.histogram(np.ones(3), range=(2, 1)), ValueError, "max must be larger"),
    (lambda: fnp.partition(np.ones(3), 3), ValueError, "out of bounds"),
    (lambda: fnp.interp(np.ones(2), np.ones(3), np.ones(2)), ValueError, "same length"),
    (lambda: fnp.interp(np.ones(2), np.ones(0), np.ones(0)), ValueError, "empty"),
    (lambda: fnp.interp(np.ones(2), np.ones(2), np.ones(2), period=0), ValueError, "period"),
    (lambda: fnp.convolve(np.ones(0), np.ones(2)), ValueError, "a cannot be empty"),
    (lambda: fnp.convolve(np.ones(2), np.ones(2), mode="wide"), ValueError, "mode"),
    (lambda: fnp.correlate(np.ones((2, 2)), np.ones(2)), ValueError, "1-d"),
    (lambda: fnp.cov(np.ones((2, 2, 2))), ValueError, "more than 2"),
    (lambda: fnp.cov(np.ones((2, 3)), fweights=np.array([1.5, 1, 1])), TypeError, "integer"),
    (lambda: fnp.nanquantile(np.ones(3), 1.5), ValueError, "range"),
    (lambda: fnp.nanquantile(np.ones(3), 0.5, method="nearest"), NotImplementedError, "method"),
    (lambda: fnp.lexsort(()), TypeError, "len > 0"),
    (lambda: fnp.unique(np.ones(3), size=-1), ValueError, "non-negative"),
    (lambda: fnp.isin(np.ones(3), np.ones(2), kind="hash"), ValueError, "kind"),
])
def test_errors(call, exc, match) -> None:
    with pytest.raises(exc, match=match):
        call()


@pytest.mark.parametrize("rule", ["auto", "fd", "sturges", "doane", "scott", "stone", "rice",
                                  "sqrt"])
def test_histogram_binning_rules_match_numpy(rule):
    x = np.random.default_rng(0).normal(size=100)
    h, e = fnp.histogram(dev(x), rule)
    hn, en = np.histogram(x, rule)
    assert_allclose(h, hn)
    assert_allclose(e, en)
    assert_allclose(fnp.histogram_bin_edges(dev(x), rule, range=(0, 1)),
                    np.histogram_bin_edges(x, rule, range=(0, 1)))


def test_histogram_binning_rule_needs_concrete_data():
    x = np.linspace(0, 1, 10)
    with pytest.raises(funcgrad.ConcretizationError, match="bins='auto'"):
        funcgrad.jit(lambda x: fnp.histogram(x, "auto")[0])(dev(x))
    with pytest.raises(TypeError, match="weighted data"):
        fnp.histogram(dev(x), "auto", weights=dev(np.ones(10)))
