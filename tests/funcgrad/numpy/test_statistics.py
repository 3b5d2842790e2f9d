"""Focused tests for funcgrad.numpy statistics / searching / binning / set routines: errors,
jit (ConcretizationError without size=/length=, static size= working), vmap and grad
behaviour that the op table (tests/funcgrad/op_tables/statistics.py) cannot express."""

from __future__ import annotations

import warnings

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


def test_unique_size_padding_as_jax() -> None:
    # Recorded from jax.numpy 0.10.2: past the uniques, return_index repeats the first index
    # (the index of the first sorted entry), along an axis too.
    v, i = fnp.unique(dev(np.array([3, 1, 1])), return_index=True, size=4)
    assert_allclose((v, i), (np.array([1, 3, 1, 1]), np.array([1, 0, 1, 1])))
    rows = dev(np.array([[1, 2], [0, 1], [1, 2]]))
    v, i = funcgrad.jit(lambda r: fnp.unique(r, axis=0, return_index=True, size=4))(rows)
    assert_allclose((v, i), (np.array([[0, 1], [1, 2], [0, 1], [0, 1]]), np.array([1, 0, 1, 1])))
    with pytest.raises(ValueError, match="fill_value"):  # nothing to pad with, as JAX
        fnp.unique(dev(np.array([], float)), size=3)
    assert_allclose(fnp.unique(dev(np.array([], float)), size=2, fill_value=7.0),
                    np.array([7.0, 7.0]))


def test_set_op_size_padding_as_jax() -> None:
    # Recorded from jax.numpy 0.10.2 (jit, size=): setdiff1d pads with 0; an empty
    # intersect1d / setxor1d result pads with 0; return_indices pads with the (out-of-bounds)
    # input lengths.
    a, b = dev(np.array([5, 1, 3, 3, 7, 1, 9])), dev(np.array([3, 9, 2, 2, 8, 1]))
    f = funcgrad.jit(lambda a, b: fnp.setdiff1d(a, b, size=4))
    assert_allclose(f(a, b), np.array([5, 7, 0, 0]))
    g = funcgrad.jit(lambda a, b: fnp.intersect1d(a, b, return_indices=True, size=5))
    assert_allclose(g(a, b), (np.array([1, 3, 9, 1, 1]), np.array([1, 2, 6, 7, 7]),
                              np.array([5, 0, 1, 6, 6])))
    one_two, three = dev(np.array([1, 2])), dev(np.array([3]))
    assert_allclose(fnp.intersect1d(one_two, three, size=2), np.array([0, 0]))
    assert_allclose(fnp.setxor1d(one_two, one_two, size=3), np.array([0, 0, 0]))


def test_intersect1d_assume_unique_as_numpy() -> None:
    # NumPy's assume_unique path: equal neighbours of the sorted concatenation, so repeats
    # inside an input come out repeated (NumPy's values, not a second deduplication).
    a, b = np.array([5, 1, 3, 3, 7, 1, 9]), np.array([3, 9, 2, 2, 8, 1])
    got = fnp.intersect1d(dev(a), dev(b), assume_unique=True, return_indices=True)
    assert_allclose(got, np.intersect1d(a, b, assume_unique=True, return_indices=True))
    assert_allclose(got[0], np.array([1, 1, 2, 3, 3, 9]))
    ua, ub = np.unique(a), np.unique(b)
    h = funcgrad.jit(lambda a, b: fnp.intersect1d(a, b, assume_unique=True,
                                                  return_indices=True, size=4))
    # jax.numpy 0.10.2: ([1, 3, 9, 1], [0, 1, 4, 5], [0, 2, 4, 5])
    assert_allclose(h(dev(ua), dev(ub)), (np.array([1, 3, 9, 1]), np.array([0, 1, 4, 5]),
                                          np.array([0, 2, 4, 5])))
    for x, y in [(a[:1], b[:0]), (a[:0], b), (a[:1], a[:1])]:
        assert_allclose(fnp.intersect1d(dev(x), dev(y), assume_unique=True,
                                        return_indices=True),
                        np.intersect1d(x, y, assume_unique=True, return_indices=True))


def test_isin_table_kind_needs_integers() -> None:
    with pytest.raises(ValueError, match="table"):
        fnp.isin(dev(np.array([1.0, 2.0])), dev(np.array([1, 3])), kind="table")
    assert_allclose(fnp.isin(dev(np.array([1, 2])), dev(np.array([1, 3])), kind="table"),
                    np.array([True, False]))


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
    (lambda: fnp.gradient(np.array(1.0)), ValueError, "too small"),  # (it gave ())
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
    (lambda: fnp.nanquantile(np.ones(3), 0.5, method="closest"), ValueError, "not a valid method"),
    (lambda: fnp.nanpercentile(np.ones(3), 101), ValueError, "range"),
    (lambda: fnp.nanquantile(np.ones(3), 0.5, weights=np.ones(3)), ValueError, "inverted_cdf"),
    (lambda: fnp.nanquantile(np.array([1.0, np.nan]), 0.5, weights=np.array([0.0, 1.0]),
                             method="inverted_cdf"), ValueError, "all zero"),
    (lambda: fnp.nanquantile(np.ones(3), 0.5, weights=-np.ones(3), method="inverted_cdf"),
     ValueError, "non-negative"),
    (lambda: fnp.nanquantile(np.ones(3) * 1j, 0.5), TypeError, "real"),
    (lambda: fnp.nanquantile(np.ones(3), np.full((1, 1, 1), 0.5)), ValueError, "1d"),
    (lambda: fnp.nanquantile(np.array([True, False]), 0.5), TypeError, "boolean"),
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


# --- nanquantile / nanpercentile: every method ------------------------------------------------
_QMETHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation",
             "interpolated_inverted_cdf", "hazen", "weibull", "linear", "median_unbiased",
             "normal_unbiased", "lower", "higher", "midpoint", "nearest")


def _nan_data(dtype=np.float64) -> np.ndarray:
    """(3, 4, 5) with scattered NaNs, an all-NaN (i, :, k) slice, an all-NaN row along the
    last axis, slices with a single valid value, and ties."""
    x = np.random.default_rng(3).integers(-4, 5, (3, 4, 5)).astype(dtype)
    x[np.random.default_rng(4).random(x.shape) < 0.35] = np.nan
    x[1, :, 2] = np.nan
    x[2, 3, :] = np.nan
    x[0, 1, :] = [np.nan, np.nan, 7.0, np.nan, np.nan]
    return x


def _np_quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(fn(*args, **kw))


@pytest.mark.parametrize("method", _QMETHODS)
def test_nanquantile_methods_match_numpy(method) -> None:
    x64 = _nan_data()
    qs = (0.5, 0, 1, np.float64(0.37), np.array([0.0, 0.1, 0.25, 0.5, 0.9, 1.0]),
          np.array([0.2, 0.71], np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for dt in (np.float64, np.float32):
            x = x64.astype(dt)
            for q in qs:
                for axis, kd in ((None, False), (-1, True), (1, False), ((0, 2), True)):
                    want = _np_quiet(np.nanquantile, x, q, axis=axis, method=method,
                                     keepdims=kd)
                    got = fnp.nanquantile(dev(x), q, axis=axis, method=method, keepdims=kd)
                    assert_allclose(got, want, rtol=0, atol=0,
                                    err_msg=f"{dt.__name__} q={q!r} axis={axis} kd={kd}")
        # percentiles (q / 100 as NumPy divides) and integer input (no NaN: quantile)
        want = _np_quiet(np.nanpercentile, x64, [5, 50, 99], axis=2, method=method)
        assert_allclose(fnp.nanpercentile(dev(x64), [5, 50, 99], axis=2, method=method), want)
        xi = np.arange(12).reshape(3, 4) % 5
        assert_allclose(fnp.nanquantile(dev(xi), 0.4, axis=1, method=method),
                        np.nanquantile(xi, 0.4, axis=1, method=method))


@pytest.mark.parametrize("method", ["linear", "lower", "hazen", "midpoint", "inverted_cdf"])
def test_nanquantile_jit_vmap_traced_count(method) -> None:
    x = _nan_data()[0]  # (4, 5): rows with different valid counts (one has 1) ...
    x[3] = np.nan  # ... and an all-NaN row
    q = np.array([0.1, 0.5, 0.95])
    want = _np_quiet(np.nanquantile, x, q, axis=1, method=method)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # traced: no warning
        got = funcgrad.jit(lambda a: fnp.nanquantile(a, q, axis=1, method=method))(dev(x))
        assert_allclose(got, want)
        got = funcgrad.vmap(lambda r: fnp.nanquantile(r, q, method=method))(dev(x))
        assert_allclose(got, want.T)
        got = funcgrad.vmap(lambda r: fnp.nanpercentile(r, 30.0, method=method),
                            in_axes=1)(dev(x.T))
        assert_allclose(got, _np_quiet(np.nanpercentile, x, 30.0, axis=1, method=method))


def test_nanquantile_all_nan_warns_only_on_concrete_input() -> None:
    x = np.array([[1.0, np.nan], [np.nan, np.nan]])
    with pytest.warns(RuntimeWarning, match="All-NaN slice"):
        got = fnp.nanquantile(dev(x), 0.5, axis=1, method="nearest")
    assert_allclose(got, np.array([1.0, np.nan]))
    with pytest.warns(RuntimeWarning, match="All-NaN slice"):
        got = fnp.nanquantile(dev(x[1]), [0.5], method="weibull")
    assert_allclose(got, np.array([np.nan]))


@pytest.mark.parametrize("method", _QMETHODS)
def test_nanquantile_grads(method) -> None:
    # distinct values, NaNs ignored: derivatives go to the selected / interpolated elements
    x = np.array([[0.3, np.nan, -1.2, 2.1, 0.9], [1.4, -0.6, np.nan, np.nan, 0.2]])
    q = np.array([0.15, 0.5, 0.8])
    check_grads(lambda a: fnp.nanquantile(a, q, axis=1, method=method), (dev(x),), order=2,
                modes=("fwd", "rev"), eps=1e-4)
    g = funcgrad.grad(lambda a: fnp.sum(fnp.nanquantile(a, q, axis=1, method=method)))(dev(x))
    g = host(g)
    assert np.all(g[np.isnan(x)] == 0) and np.isclose(g[0].sum(), 3) and np.isclose(
        g[1].sum(), 3)
    if method in ("linear", "hazen", "weibull", "median_unbiased"):
        # q traced under grad: the derivative of the interpolation weight
        f = lambda t: fnp.nanquantile(dev(x[0]), t, method=method)  # noqa: E731
        check_grads(f, (0.45,), order=1, modes=("fwd", "rev"), eps=1e-5)


def test_nanquantile_weights_inverted_cdf() -> None:
    x = np.array([[1.0, np.nan, 3.0, 2.0], [np.nan] * 4, [5.0, 4.0, np.nan, 0.5]])
    w = np.array([[1.0, np.nan, 2.0, 1.0], [1.0, 1.0, 1.0, 1.0], [0.0, 3.0, 1.0, 1.0]])
    q = np.array([0.0, 0.3, 0.5, 1.0])
    want = _np_quiet(np.nanquantile, x, q, axis=1, weights=w, method="inverted_cdf")
    with pytest.warns(RuntimeWarning, match="All-NaN slice"):
        got = fnp.nanquantile(dev(x), q, axis=1, weights=dev(w), method="inverted_cdf")
    assert_allclose(got, want)
    got = funcgrad.jit(lambda a, w: fnp.nanquantile(a, q, axis=1, weights=w,
                                                    method="inverted_cdf"))(dev(x), dev(w))
    assert_allclose(got, want)
    want = _np_quiet(np.nanpercentile, x[0], 40, weights=w[0], method="inverted_cdf")
    assert_allclose(fnp.nanpercentile(dev(x[0]), 40, weights=dev(w[0]), method="inverted_cdf"),
                    want)
    with pytest.warns(RuntimeWarning, match="All-NaN slice"):
        g = funcgrad.grad(lambda a: fnp.nansum(fnp.nanquantile(
            a, q, axis=1, weights=dev(w), method="inverted_cdf")))(dev(x))
    assert_allclose(g, np.array([[1.0, 0, 1, 2], [0, 0, 0, 0], [0, 3, 0, 1]]))


def test_nanquantile_empty_and_0d_like_numpy() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        # NumPy answers an empty a with nanmean, whatever q is
        assert_allclose(fnp.nanquantile(dev(np.zeros((0, 3))), [0.2, 0.5], axis=0),
                        np.nanquantile(np.zeros((0, 3)), [0.2, 0.5], axis=0))
        assert_allclose(fnp.nanquantile(dev(np.array(np.nan)), 0.5, method="lower"),
                        np.asarray(np.nanquantile(np.array(np.nan), 0.5, method="lower")))
    assert_allclose(fnp.nanquantile(dev(np.array(2.0)), [0.5], keepdims=True, method="hazen"),
                    np.nanquantile(np.array(2.0), [0.5], keepdims=True, method="hazen"))
    assert_allclose(fnp.nanquantile(dev(np.array([True, False])), 0.5, method="lower"),
                    np.asarray(np.nanquantile(np.array([True, False]), 0.5, method="lower")))


def test_interp_derivative_at_knots_as_jax() -> None:
    # Recorded from jax.grad of jnp.interp (0.10.2): at a knot the derivative in x is the
    # slope on the right (the last segment's at the last knot); values stay NumPy's exactly.
    xs = np.array([0.0, 1.0, 1.5, 2.0, 3.0, -1.0])
    xp, fp = np.array([0.0, 1.0, 2.0]), np.array([0.0, 2.0, 1.0])
    assert_allclose(fnp.interp(dev(xs), dev(xp), dev(fp)), np.interp(xs, xp, fp))
    gx = funcgrad.grad(lambda x: fnp.sum(fnp.interp(x, dev(xp), dev(fp))))(dev(xs))
    assert_allclose(gx, np.array([2.0, -1.0, -1.0, -1.0, 0.0, 0.0]))
    gxp = funcgrad.grad(lambda q: fnp.sum(fnp.interp(dev(xs), q, dev(fp))))(dev(xp))
    assert_allclose(gxp, np.array([-2.0, 1.5, 1.5]))
    g = funcgrad.grad(lambda q: fnp.sum(fnp.interp(dev(np.array([0.5, 1.0])), q, dev(fp))))
    assert_allclose(g(dev(xp)), np.array([-1.0, 0.0, 0.0]))
    gfp = funcgrad.grad(lambda f: fnp.sum(fnp.interp(dev(xs), dev(xp), f)))(dev(fp))
    assert_allclose(gfp, np.array([2.0, 1.5, 2.5]))
    # repeated xp: NumPy's values, no inf * 0
    xr, fr = np.array([0.0, 1.0, 1.0, 2.0]), np.array([0.0, 1.0, 3.0, 2.0])
    q = np.array([0.5, 1.0, 1.5, 2.0])
    assert_allclose(fnp.interp(dev(q), dev(xr), dev(fr)), np.interp(q, xr, fr))


def _on_dev(bins):
    """Edge arrays (alone or in a list) on the test device; ints as they are."""
    if isinstance(bins, list):
        return [_on_dev(b) for b in bins]
    return dev(bins) if isinstance(bins, np.ndarray) else bins


def test_histogramdd_and_histogram2d_match_numpy() -> None:
    rng = np.random.default_rng(0)
    s = rng.standard_normal((50, 3))
    s[0] = s[1]
    w = np.abs(s[:, 0])
    for bins in (2, [2, 3, 4], [np.array([-1.0, 0, 1]), 3, np.array([-2.0, 0.5, 2.0])]):
        for rg in (None, [(-1, 1), None, (0, 2)]):
            for density, weights in ((None, None), (True, w)):
                got = fnp.histogramdd(dev(s), _on_dev(bins), rg, density,
                                      None if weights is None else dev(weights))
                want = np.histogramdd(s, bins, rg, density, weights)
                assert_allclose(got[0], want[0])
                assert_allclose(tuple(got[1]), tuple(want[1]))
    x, y = s[:, 0], s[:, 1]
    for bins in (3, [2, 5], np.array([-1.0, 0, 1, 2]),
                 [np.array([-1.0, 0, 1]), np.array([-2.0, 0, 2, 3])]):
        assert_allclose(fnp.histogram2d(dev(x), dev(y), _on_dev(bins)),
                        np.histogram2d(x, y, bins))
        assert_allclose(fnp.histogram2d(dev(x), dev(y), _on_dev(bins), density=True,
                                        weights=dev(w)),
                        np.histogram2d(x, y, bins, density=True, weights=w))
    assert_allclose(fnp.histogram2d(dev(np.arange(5)), dev(np.arange(5) % 2), 2),
                    np.histogram2d(np.arange(5), np.arange(5) % 2, 2))
    h = funcgrad.jit(lambda x, y: fnp.histogram2d(x, y, 3)[0])(dev(x), dev(y))
    assert_allclose(h, np.histogram2d(x, y, 3)[0])
    g = funcgrad.grad(lambda w: fnp.histogram2d(dev(x), dev(y), 3, weights=w)[0][1, 1])(
        dev(np.ones(50)))
    _, ex, ey = np.histogram2d(x, y, 3)
    in_bin = [np.histogram2d(x[i:i + 1], y[i:i + 1], [ex, ey])[0][1, 1] for i in range(50)]
    assert_allclose(g, np.array(in_bin))  # d h[1, 1] / d w: the points in that bin
    with pytest.raises(ValueError, match="dimension of bins"):
        fnp.histogramdd(dev(s), [2, 3])


def test_histogram_of_complex_values_as_numpy() -> None:
    # NumPy bins complex values between their lexicographic min and max, in its
    # lexicographic order (values recorded from NumPy 2.3)
    z = np.array([1 + 0j, 2, 3, 1 + 1j, 2 - 1j])
    h, e = fnp.histogram(dev(z), 2)
    assert host(h).tolist() == [3, 2] and host(h).dtype == np.int64
    assert_allclose(e, np.array([1, 2, 3], dtype=complex))
    h, _ = fnp.histogram(dev(z), 2, weights=dev(np.arange(5.0) + 1j))
    assert_allclose(h, np.array([7 + 3j, 3 + 2j]))
    assert_allclose(fnp.histogram(dev(z), 2, density=True)[0], np.array([0.6, 0.4]))
    # where NumPy's uniform-bin shortcut indexes out of bounds (an IndexError there), the
    # lexicographic bins NumPy's other paths use
    z = np.array([1 + 2j, 0.5 - 1j, 2, 1, 1.5 + 3j])
    h = funcgrad.jit(lambda a: fnp.histogram(a, 3)[0])(dev(z))
    assert host(h).tolist() == [1, 2, 2]
    h, (ex, ey) = fnp.histogramdd(dev(np.stack([z, z[::-1]], 1)), 2, density=True)
    assert_allclose(ex, np.array([0.5 - 1j, 1.25 - 0.5j, 2]))
    # counts over the product of the complex bin widths, as NumPy divides
    assert_allclose(h, np.array([[2.0, 1.0], [1.0, 1.0]]) / 5 / (0.75 + 0.5j) ** 2)
    h, _, _ = fnp.histogram2d(dev(z), dev(z), 2)
    assert_allclose(h, np.array([[3.0, 0.0], [0.0, 2.0]]))
    with pytest.raises(TypeError, match="must be an integer, a string, or an array"):
        fnp.histogram(dev(z), 3.0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
@pytest.mark.parametrize("density", [False, True])
def test_histogram_traced_range_matches_numpy(dtype, density: bool) -> None:
    # range=(x.min(), x.max() + 1) under jit: a ConcretizationError before (JAX allows it).
    x = np.array([3.0, 1.0, 4.0, 1.5, 9.0, 2.6]).astype(dtype)

    def hist(a, module):
        return module.histogram(a, 4, range=(a.min(), a.max() + 1), density=density)

    got = funcgrad.jit(lambda a: hist(a, fnp))(dev(x))
    want = hist(x, np)
    for g, w in zip(got, want):
        assert host(g).dtype == w.dtype
        assert_allclose(host(g), w)
    # lo == hi widens by 1/2 either side, as NumPy
    got = funcgrad.jit(lambda lo: fnp.histogram(dev(x), 3, range=(lo, lo)))(2.0)
    want = np.histogram(x, 3, range=(2.0, 2.0))
    assert_allclose(host(got[1]), want[1])
    assert_allclose(host(got[0]), want[0])


def test_histogram_range_gradient_as_jax() -> None:
    # Recorded with jax.grad (JAX 0.10.2, x64); silently 0 before (the range read as
    # constants).
    x = dev(np.array([3.0, 1.0, 4.0, 1.5, 9.0, 2.6]))
    cases = [
        (lambda c: fnp.histogram(x, 3, range=(c, 10.0))[1].sum(), 2.0),
        (lambda c: fnp.histogram(x, 3, range=(c, 10.0), density=True)[0].sum(),
         0.029999999999999995),
        (lambda c: fnp.histogram_bin_edges(x, 3, range=(c, 2 * c + 9)).sum(), 6.0),
    ]
    for f, want in cases:
        assert_allclose(host(funcgrad.grad(f)(0.0)), want)
        assert_allclose(host(funcgrad.jit(funcgrad.grad(f))(0.0)), want)


@pytest.mark.parametrize("period, value, grad", [(3.0, 77.5, 27.5), (7.0, 34.5, -4.0)])
def test_unwrap_traced_period_as_jax(period: float, value: float, grad: float) -> None:
    # Values and jax.grad recorded from JAX 0.10.2 (x64); before: a ConcretizationError under
    # jit and a silently zero derivative eagerly.
    x = dev(np.array([3.0, 1.0, 4.0, 1.5, 9.0, 2.6]))
    w = dev(np.arange(6.0))

    def f(c):
        return fnp.sum(fnp.unwrap(x, period=c) * w)

    assert_allclose(host(funcgrad.jit(f)(period)), value)
    assert_allclose(host(funcgrad.grad(f)(period)), grad)
    assert_allclose(host(funcgrad.jit(funcgrad.grad(f))(period)), grad)


@pytest.mark.parametrize("period, value, grad", [(5.0, 5.4, 0.19999999999999996),
                                                 (-5.0, 5.4, -0.19999999999999996),
                                                 (2.5, 6.7, 3.0)])
def test_interp_traced_period_as_jax(period: float, value: float, grad: float) -> None:
    xq, xp, fp = (dev(np.array(v)) for v in ([0.5, 7.0, -1.2], [0.0, 1.0, 2.0], [1.0, 3.0, 2.0]))

    def f(c):
        return fnp.sum(fnp.interp(xq, xp, fp, period=c))

    assert_allclose(host(funcgrad.jit(f)(period)), value)
    assert_allclose(host(funcgrad.grad(f)(period)), grad)
    assert_allclose(host(funcgrad.jit(funcgrad.grad(f))(period)), grad)


_QUANTILE_DATA = np.array([[0.3, -1.2, 2.5, 0.0, 1.1, -0.4, 0.9],
                           [4.0, 2.0, np.nan, 1.0, 3.0, 0.5, 2.5]])


@pytest.mark.parametrize("method", ["linear", "hazen", "lower", "nearest", "midpoint",
                                    "inverted_cdf", "averaged_inverted_cdf"])
@pytest.mark.parametrize("name, scale", [("quantile", 1), ("percentile", 100),
                                         ("nanquantile", 1), ("nanpercentile", 100)])
def test_quantile_of_a_q_known_only_at_run_time(method, name, scale):
    # JAX traces q: jit(lambda x, q: jnp.quantile(x, q)) works, so must ours (it raised a
    # ConcretizationError); the arithmetic is NumPy's, dtypes included.
    data = _QUANTILE_DATA if name.startswith("nan") else _QUANTILE_DATA[:1]
    for x in (data, np.arange(14).reshape(2, 7)[: len(data)], data.astype(np.float32)):
        for q in (0.3, np.array([0.0, 0.55, 1.0]), np.float32(0.7)):
            want = getattr(np, name)(x, q * scale, axis=1, method=method)
            f = funcgrad.jit(lambda v, q: getattr(fnp, name)(v, q, axis=1, method=method))
            arg = q * scale if isinstance(q, float) else dev(np.asarray(q * scale))
            got = host(f(dev(x), arg))
            assert got.dtype == want.dtype and got.shape == want.shape, (x.dtype, q)
            np.testing.assert_allclose(got, want, rtol=1e-6)


def test_quantile_q_batched_and_differentiated_under_jit():
    x = _QUANTILE_DATA[0]
    qs = np.array([0.1, 0.5, 0.9])
    got = funcgrad.vmap(lambda q: fnp.quantile(dev(x), q))(dev(qs))
    np.testing.assert_allclose(host(got), np.quantile(x, qs))
    # d quantile / d q (linear) = (n - 1) * (s[k + 1] - s[k]) between order statistics
    s = np.sort(x)
    want = 6 * (s[2] - s[1])  # q = 0.3: virtual index 1.8
    assert abs(float(funcgrad.jit(funcgrad.grad(lambda q: fnp.quantile(dev(x), q)))(0.3))
               - want) < 1e-12


@pytest.mark.parametrize("shift, axis", [(1, 1), (-13, None), (np.array([1, 2]), (0, 1)),
                                         (np.array([1, 2, 3]), (0, 1, 1)), (5, (0, 1))])
def test_roll_by_a_shift_known_only_at_run_time(shift, axis):
    x = np.arange(12.0).reshape(3, 4)
    got = funcgrad.jit(lambda v, s: fnp.roll(v, s, axis=axis))(dev(x), dev(shift))
    np.testing.assert_array_equal(host(got), np.roll(x, shift, axis=axis))


def test_roll_per_example_shift_under_vmap_and_its_gradient():
    x = np.arange(12.0).reshape(3, 4)
    shifts = np.array([1, 2, -1])
    got = funcgrad.vmap(fnp.roll)(dev(x), dev(shifts))
    np.testing.assert_array_equal(host(got), np.stack([np.roll(r, s) for r, s in zip(x, shifts)]))
    w = dev(np.arange(4.0))
    g = funcgrad.grad(lambda v: funcgrad.jit(lambda v, s: fnp.sum(fnp.roll(v, s) * w))(v, 1))
    np.testing.assert_array_equal(host(g(dev(x[0]))), np.roll(np.arange(4.0), -1))


def test_gradient_of_python_data_goes_where_the_spacing_is():
    # a list f with a device spacing: the list is made on the spacing's device (it was a
    # host array meeting a device one)
    got = fnp.gradient([1.0, 2.0, 4.0, 8.0], dev(np.array(2.0)))
    assert_allclose(got, np.gradient([1.0, 2.0, 4.0, 8.0], 2.0))
    got = fnp.gradient([1.0, 2.0, 4.0, 8.0], dev(np.array([0.0, 1.0, 3.0, 4.0])))
    assert_allclose(got, np.gradient([1.0, 2.0, 4.0, 8.0], [0.0, 1.0, 3.0, 4.0]))


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # (inf - inf on the way)
def test_interp_with_infinite_values_as_numpy():
    # NumPy's guards where slope * (x - xp[j]) + fp[j] is NaN: a knot is its value, else the
    # segment's right end is tried, and a segment between equal values is that value (NaN
    # at the knot, and for complex fp, here before); values from NumPy 2.3
    inf = np.inf
    for interp in (fnp.interp, funcgrad.jit(fnp.interp)):
        got = interp(dev(np.array([1.0, 1.5, 2.0, 2.5, 3.0])), dev(np.array([0.0, 1, 2, 3])),
                     dev(np.array([0.0, inf, 2.0, 2.0])))
        assert host(got).tolist() == [inf, inf, 2.0, 2.0, 2.0]
        got = interp(dev(np.array([0.5, 1.5])), dev(np.array([0.0, 1, 2])),
                     dev(np.array([inf, inf, 1.0])))
        assert host(got).tolist() == [inf, inf]
    got = fnp.interp(dev(np.array([1.0, 1.5])), dev(np.array([0.0, 1, 2])),
                     dev(np.array([0j, complex(inf, 1), 2 + 2j])))
    assert host(got).tolist() == [complex(inf, 1), complex(inf, 1.5)]


def test_interp_refuses_complex_sample_points_as_numpy():
    # NumPy casts x and xp to float64 'safely': complex ones raise a TypeError (the imaginary
    # part was silently dropped here); complex fp interpolate
    with pytest.raises(TypeError, match="cannot cast x from complex128"):
        fnp.interp(dev(np.array([0.5 + 1j])), dev(np.array([0.0, 1.0])), dev(np.array([0.0, 1.0])))
    with pytest.raises(TypeError, match="cannot cast xp"):
        fnp.interp(dev(np.array([0.5])), dev(np.array([0.0, 1j])), dev(np.array([0.0, 1.0])))
    got = fnp.interp(dev(np.array([0.5])), dev(np.array([0.0, 1.0])), dev(np.array([0.0, 2j])))
    np.testing.assert_allclose(host(got), np.array([1j]))


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("n, m", [(3, 2), (40, 7), (30, 30)])
def test_float16_convolution_sums_in_float32_as_numpy(name, n, m):
    # NumPy (and JAX, PyTorch) sum half-precision products in float32 and round once:
    # convolve([100, 101, 102], [100, 100])[2] is 20304 (2.03e4), not the 20288 of a float16 sum
    rng = np.random.default_rng(n + m)
    # whole numbers: float32 sums are exact in any order, so only the final rounding to
    # float16 differs between a float32 and a float16 accumulation (and sums stay < 65504)
    a = rng.integers(0, 40, n).astype(np.float16)
    v = rng.integers(0, 40, m).astype(np.float16)
    for mode in ("full", "same", "valid"):
        want = getattr(np, name)(a, v, mode)
        got = host(getattr(fnp, name)(dev(a), dev(v), mode))
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got, want)
    got = host(fnp.convolve(dev(np.array([100, 101, 102], np.float16)),
                            dev(np.array([100, 100], np.float16))))
    assert float(got[2]) == 20304.0


@pytest.mark.parametrize("bins,right,want", [
    ([0.0, 2.0, np.nan], False, [0, 1, 1, 2, 2, 3]),   # NaN-padded bins are increasing
    ([0.0, 2.0, np.nan], True, [0, 0, 1, 1, 2, 2]),
    ([3.0, 3.0, 1.0, 1.0], False, [4, 4, 2, 2, 0, 0]),  # repeats, then decreasing
    ([1.0, 1.0], False, [0, 0, 2, 2, 2, 2]),             # constant: increasing
])
def test_digitize_monotonicity_as_numpy(bins, right, want):
    # NumPy's _monotonicity: the first change after leading repeats sets the direction and
    # NaN comparisons never break it (NumPy 2.4 values recorded as literals)
    x = dev(np.array([-1.0, 0.0, 1.5, 2.0, 5.0, np.nan]))
    got = fnp.digitize(x, dev(np.array(bins)), right=right)
    np.testing.assert_array_equal(host(got), want)


def test_empty_and_zero_order_corners() -> None:
    # NumPy 2.4: an empty axis takes any kth; diff with n=0 is the input itself, before the
    # 1-d check (prepend/append unused); piecewise of an empty array under jit/grad
    assert host(fnp.partition(dev(np.zeros(0)), 0)).shape == (0,)
    assert host(fnp.argpartition(dev(np.zeros((2, 0))), 3, axis=1)).shape == (2, 0)
    with pytest.raises(ValueError, match="out of bounds"):
        fnp.partition(dev(np.zeros(3)), 3)
    assert float(host(fnp.diff(dev(np.array(2.5)), n=0))) == 2.5
    assert host(fnp.diff(dev(np.ones(3)), n=0, prepend=1.0)).tolist() == [1.0, 1.0, 1.0]

    def pw(a):
        return fnp.piecewise(a, [a > 1], [lambda v: v * 2, 0.0])

    empty = dev(np.zeros((0, 3)))
    assert host(funcgrad.jit(pw)(empty)).shape == (0, 3)
    assert host(funcgrad.grad(lambda a: fnp.sum(pw(a)))(empty)).shape == (0, 3)
