"""Focused tests of the reduction, cumulative and sorting primitives and their fnp functions.

What an op table cannot say: tie-splitting gradients, exact derivatives at zeros, higher
orders, NaN ordering, stability, batching of the helper primitives, and the error messages.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.errors import ShapeError
from funcgrad.ops import elementwise as ew
from funcgrad.ops import reductions as red
from funcgrad.ops import sorting as srt
from funcgrad.test_util import check_grads

RNG = np.random.default_rng(1234)


def _grad(f, x):
    return host(funcgrad.grad(f)(dev(x)))


# ---------------------------------------------------------------------------------------------
# max / min: ties share the gradient, NaN propagates


def test_max_ties_split_gradient_evenly() -> None:
    x = np.array([1.0, 3.0, 3.0, 2.0, 3.0])
    assert_allclose(_grad(lambda v: fnp.max(v), x), np.array([0, 1, 1, 0, 1]) / 3)
    assert_allclose(_grad(lambda v: fnp.min(v), x), np.array([1.0, 0, 0, 0, 0]))


def test_max_ties_per_row_and_forward_mode() -> None:
    x = np.array([[2.0, 2.0, 1.0], [0.0, 5.0, 4.0]])
    g = _grad(lambda v: fnp.sum(fnp.max(v, axis=1)), x)
    assert_allclose(g, np.array([[0.5, 0.5, 0.0], [0.0, 1.0, 0.0]]))
    t = np.ones_like(x)
    _, dy = funcgrad.jvp(lambda v: fnp.max(v, axis=1), (dev(x),), (dev(t),))
    assert_allclose(host(dy), np.array([1.0, 1.0]))


def test_max_second_derivative_is_zero() -> None:
    x = RNG.standard_normal((3, 4))
    h = funcgrad.hessian(lambda v: fnp.max(v))(dev(x))
    assert_allclose(host(h), np.zeros((3, 4, 3, 4)))


def test_max_nan_propagates_and_differentiates() -> None:
    x = np.array([1.0, np.nan, 3.0])
    assert np.isnan(host(fnp.max(dev(x))))
    g = _grad(lambda v: fnp.max(v), x)
    assert_allclose(g, np.array([0.0, 1.0, 0.0]))  # the NaN is the maximum (as JAX)


def test_argmax_first_occurrence_and_nan() -> None:
    x = np.array([[1.0, 4.0, 4.0], [np.nan, 2.0, np.nan]])
    assert_allclose(fnp.argmax(dev(x), axis=1), np.argmax(x, axis=1))
    assert_allclose(fnp.argmin(dev(x), axis=1), np.argmin(x, axis=1))
    assert_allclose(fnp.argmax(dev(x)), np.argmax(x))
    assert host(fnp.argmax(dev(x), axis=1)).dtype == np.int64


# ---------------------------------------------------------------------------------------------
# prod / cumprod: exact derivatives with zeros, at every order


def test_prod_gradient_with_one_zero_is_product_of_others() -> None:
    x = np.array([2.0, 0.0, 3.0, -1.5])
    g = _grad(lambda v: fnp.prod(v), x)
    want = np.array([np.prod(np.delete(x, i)) for i in range(x.size)])
    assert_allclose(g, want)
    assert g[1] == -9.0


def test_prod_gradient_with_two_zeros_is_zero() -> None:
    x = np.array([0.0, 2.0, 0.0])
    assert_allclose(_grad(lambda v: fnp.prod(v), x), np.zeros(3))


def test_prod_higher_orders_with_zeros() -> None:
    x = np.array([[2.0, 0.0, 3.0], [0.5, -1.0, 0.0]])
    for axis in (None, 0, 1, (0, 1)):
        check_grads(lambda v, a=axis: fnp.prod(v, axis=a), (dev(x),), order=3)
    h = host(funcgrad.hessian(lambda v: fnp.prod(v))(dev(np.array([0.0, 2.0, 3.0]))))
    # d2/dx0 dx1 of x0 x1 x2 is x2, even at x0 = 0.
    assert_allclose(h, np.array([[0, 3, 2], [3, 0, 0], [2, 0, 0.0]]))


def test_cumprod_grad_of_grad_with_zeros() -> None:
    x = np.array([1.5, 0.0, -2.0, 0.5, 3.0])
    for reverse in (False, True):
        check_grads(lambda v, r=reverse: red.cumprod(v, 0, r), (dev(x),), order=3)
    check_grads(lambda v: fnp.cumprod(v, axis=1), (dev(RNG.standard_normal((2, 7))),), order=2)

    def f(v):
        return fnp.sum(fnp.cumprod(v))

    # Second derivative of sum_i prod_{j<=i} v_j, by hand.
    n = x.size
    want = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j:
                want[i, j] = sum(
                    np.prod([x[m] for m in range(k + 1) if m not in (i, j)])
                    for k in range(max(i, j), n)
                )
    assert_allclose(host(funcgrad.hessian(f)(dev(x))), want)
    gg = funcgrad.grad(lambda v: fnp.sum(funcgrad.grad(f)(v) * v))(dev(x))
    assert_allclose(host(gg), want @ x + host(funcgrad.grad(f)(dev(x))))


def test_products_of_others_helper() -> None:
    x = np.array([[2.0, 0.0, 3.0], [1.0, 2.0, 4.0]])
    assert_allclose(red.products_of_others(dev(x), 1),
                    np.array([[0.0, 6.0, 0.0], [8.0, 4.0, 2.0]]))


# ---------------------------------------------------------------------------------------------
# cumulative ops


def test_cumsum_is_linear_and_transposes_to_reverse_cumsum() -> None:
    x = RNG.standard_normal((3, 4))
    ct = RNG.standard_normal((3, 4))
    _, f_vjp = funcgrad.vjp(lambda v: red.cumsum(v, 1), dev(x))
    (g,) = f_vjp(dev(ct))
    assert_allclose(host(g), np.flip(np.cumsum(np.flip(ct, 1), 1), 1))
    assert_allclose(red.cumsum(dev(x), 0, reverse=True), np.flip(np.cumsum(np.flip(x, 0), 0), 0))


def test_cummax_tangent_follows_running_maximum() -> None:
    x = np.array([1.0, 3.0, 2.0, 3.0, 4.0, 0.0])
    t = np.array([10.0, 20.0, 30.0, 40.0, 50.0, 60.0])
    y, dy = funcgrad.jvp(lambda v: red.cummax(v), (dev(x),), (dev(t),))
    assert_allclose(host(y), np.maximum.accumulate(x))
    assert_allclose(host(dy), np.array([10.0, 20.0, 20.0, 20.0, 50.0, 50.0]))
    _, dy = funcgrad.jvp(lambda v: red.cummin(v, 0, True), (dev(x),), (dev(t),))
    assert_allclose(host(dy), np.array([60.0] * 6))
    check_grads(lambda v: red.cummax(v, 1, True), (dev(RNG.standard_normal((3, 5))),), order=2)


def test_cummax_nan_propagates_and_cumargmax_matches() -> None:
    x = np.array([1.0, np.nan, 3.0])
    assert_allclose(red.cummax(dev(x)), np.maximum.accumulate(x))
    assert_allclose(red.cumargmax(dev(x)), np.array([0, 1, 1]))
    ints = np.array([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]])
    assert_allclose(red.cummin(dev(ints), 1), np.minimum.accumulate(ints, 1))
    assert_allclose(red.cumargmin(dev(ints), 1), np.array([[0, 1, 1, 1, 1], [0, 1, 1, 1, 1]]))


def test_cumsum_axis_none_flattens_and_dtype() -> None:
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert_allclose(fnp.cumsum(dev(x)), np.cumsum(x))
    assert_allclose(fnp.cumsum(dev(x.astype(bool))), np.cumsum(x.astype(bool)))
    assert_allclose(fnp.cumprod(dev(x), axis=0, dtype=np.float32),
                    np.cumprod(x, axis=0, dtype=np.float32))
    assert_allclose(fnp.cumsum(dev(np.asarray(2.0))), np.cumsum(np.asarray(2.0)))


# ---------------------------------------------------------------------------------------------
# sort / argsort


def test_sort_nans_last_like_numpy() -> None:
    x = np.array([[3.0, np.nan, -1.0, np.inf, 0.0], [np.nan, -np.inf, 2.0, np.nan, 1.0]])
    for axis in (-1, 0, None):
        assert_allclose(fnp.sort(dev(x), axis=axis), np.sort(x, axis=axis))
        assert_allclose(fnp.argsort(dev(x), axis=axis), np.argsort(x, axis=axis, kind="stable"))


def test_sort_gradient_with_nan_present_does_not_crash() -> None:
    x = np.array([3.0, np.nan, -1.0])
    g = _grad(lambda v: fnp.sum(fnp.sort(v) * dev(np.array([1.0, 2.0, 0.0]))), x)
    assert_allclose(g, np.array([2.0, 0.0, 1.0]))


def test_argsort_is_stable() -> None:
    x = np.array([2, 1, 2, 1, 0, 2, 1, 0] * 5)
    assert_allclose(fnp.argsort(dev(x)), np.argsort(x, kind="stable"))
    y = RNG.integers(0, 3, size=(40, 3)).astype(np.float32)
    assert_allclose(fnp.argsort(dev(y), axis=0), np.argsort(y, axis=0, kind="stable"))


def test_sort_multiple_operands_lexicographic() -> None:
    k1 = np.array([1, 0, 1, 0, 1])
    k2 = np.array([5.0, 7.0, 3.0, 7.0, 4.0])
    v = np.array([10.0, 20.0, 30.0, 40.0, 50.0])
    a, b, c = srt.sort([dev(k1), dev(k2), dev(v)], num_keys=2)
    order = np.lexsort((k2, k1))
    assert_allclose(a, k1[order])
    assert_allclose(b, k2[order])
    assert_allclose(c, v[order])
    # num_keys=1: ties in k1 keep their order.
    _, c1 = srt.sort([dev(k1), dev(v)])
    assert_allclose(c1, v[np.argsort(k1, kind="stable")])


def test_sort_derivatives_permute_tangents() -> None:
    x = RNG.standard_normal((3, 5))
    for axis in (0, 1):
        check_grads(lambda v, a=axis: fnp.sort(v, axis=a), (dev(x),), order=2)
    v = RNG.standard_normal((3, 5))
    check_grads(lambda k, w: srt.sort([k, w], 1)[1] * srt.sort([k, w], 1)[0], (dev(x), dev(v)),
                order=2)


def test_gather_scatter_along_axis() -> None:
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    idx = np.array([[2, 0, 5, -1]])
    got = srt.gather_along_axis(dev(x), dev(idx), 1, 0.0)
    assert_allclose(got, np.array([[3.0, 1.0, 0.0, 0.0], [6.0, 4.0, 0.0, 0.0]]))
    upd = np.ones((2, 4))
    got = srt.scatter_add_along_axis(dev(upd), dev(np.array([[0, 0, 2, 7]])), 1, 3)
    assert_allclose(got, np.array([[2.0, 0.0, 1.0], [2.0, 0.0, 1.0]]))
    check_grads(lambda v: srt.gather_along_axis(v, dev(np.array([[1, 1, 0]])), 1), (dev(x),),
                order=2)
    check_grads(lambda u: srt.scatter_add_along_axis(u, dev(np.array([[1, 1, 0, 3]])), 1, 3),
                (dev(upd),), order=2)


# ---------------------------------------------------------------------------------------------
# vmap of the primitives (a Python loop is the reference)


@pytest.mark.parametrize("in_axis", [0, 1, -1])
@pytest.mark.parametrize("fn", [
    lambda v: red.cummax(v, 0),
    lambda v: red.cumargmin(v, 1, True),
    lambda v: red.cumprod(v, 1, True),
    lambda v: red.reduce_prod(v, (0, 1)),
    lambda v: red.argmax(v, 1),
    lambda v: red.reduce_min(v, (1,)),
    lambda v: red.reduce_or(v, (0,)),
    lambda v: srt.sort([v, ew.mul(v, 2.0)], 0)[1],
    lambda v: srt.argsort(v, 1),
    lambda v: fnp.median(v, axis=0),
    lambda v: fnp.quantile(v, [0.2, 0.7], axis=1),
    lambda v: funcgrad.grad(lambda w: fnp.sum(fnp.cumprod(w, axis=1) * fnp.sort(w, 0)))(v),
], ids=lambda f: "")
def test_vmap_matches_loop(fn, in_axis: int) -> None:
    x = RNG.standard_normal((3, 4, 5))
    got = funcgrad.vmap(fn, in_axes=in_axis)(dev(x))
    want = np.stack([host(fn(dev(np.take(x, k, axis=in_axis))))
                     for k in range(x.shape[in_axis])])
    assert_allclose(got, want)


def test_vmap_gather_with_batched_indices_only() -> None:
    x = RNG.standard_normal((3, 4))
    idx = np.array([[[0], [1], [3]], [[2], [2], [0]]])
    got = funcgrad.vmap(lambda i: srt.gather_along_axis(dev(x), i, 1))(dev(idx))
    assert_allclose(got, np.stack([np.take_along_axis(x, i, 1) for i in idx]))


# ---------------------------------------------------------------------------------------------
# fnp semantics: dtypes, empties, keyword variants


def test_result_dtypes_like_numpy() -> None:
    i32 = np.arange(6, dtype=np.int32).reshape(2, 3)
    b = i32 % 2 == 0
    f32 = i32.astype(np.float32)
    c64 = (i32 + 1j).astype(np.complex64)
    for fn, x in [("sum", b), ("sum", i32), ("prod", np.uint8(3) * np.ones(3, np.uint8)),
                  ("mean", i32), ("mean", b), ("var", i32), ("std", f32), ("var", c64),
                  ("median", i32), ("max", b), ("cumsum", b), ("cumprod", i32),
                  ("nanmean", i32), ("average", i32), ("count_nonzero", f32)]:
        got, want = getattr(fnp, fn)(dev(x)), getattr(np, fn)(x)
        assert np.asarray(host(got)).dtype == np.asarray(want).dtype, (fn, x.dtype)
        assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert host(fnp.sum(2.5)).dtype == np.float64
    assert host(fnp.mean(3)).dtype == np.float64
    assert host(fnp.sum(f32, dtype=np.int16)).dtype == np.int16


def test_weak_scalar_inputs() -> None:
    assert_allclose(fnp.sum(2.5), np.sum(2.5))
    assert_allclose(fnp.mean(3), np.mean(3))
    assert_allclose(fnp.max(-1.0), np.max(-1.0))
    assert_allclose(fnp.quantile(dev(np.ones(3, np.float32)), 0.5),
                    np.quantile(np.ones(3, np.float32), 0.5))


def test_empty_reductions() -> None:
    z = np.zeros((0, 3))
    assert_allclose(fnp.sum(dev(z), axis=0), np.zeros(3))
    assert_allclose(fnp.prod(dev(z), axis=0), np.ones(3))
    assert_allclose(fnp.max(dev(z), axis=1), np.zeros((0,)))
    assert_allclose(fnp.max(dev(z), axis=0, initial=-1.0), np.full(3, -1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert np.all(np.isnan(host(fnp.mean(dev(z), axis=0))))
    for fn in ("max", "min", "amax", "ptp"):
        with pytest.raises(ValueError, match=fn):
            getattr(fnp, fn)(dev(z), axis=0)
    with pytest.raises(ValueError, match="argmax.*empty"):
        fnp.argmax(dev(z))
    assert_allclose(fnp.sum(dev(np.asarray(4.0)), axis=None), 4.0)


def test_keepdims_and_tuple_axes() -> None:
    x = RNG.standard_normal((2, 3, 4))
    for fn in ("sum", "mean", "var", "max", "median", "nanmax", "any", "ptp"):
        for axis in ((0, 2), (-1, 0), 1, None):
            got = getattr(fnp, fn)(dev(x), axis=axis, keepdims=True)
            assert_allclose(got, getattr(np, fn)(x, axis=axis, keepdims=True))
    assert_allclose(fnp.argmax(dev(x), axis=-1, keepdims=True),
                    np.argmax(x, axis=-1, keepdims=True))
    assert_allclose(fnp.sum(dev(x), axis=()), np.sum(x, axis=()))


def test_std_zero_variance_does_not_crash() -> None:
    x = np.ones(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert host(fnp.std(dev(x))) == 0.0
        g = _grad(lambda v: fnp.std(v), x)
    assert g.shape == (4,)
    assert not np.any(np.isfinite(g)) or np.all(g == 0)


def test_var_std_gradients_ddof() -> None:
    x = RNG.standard_normal((3, 4))
    check_grads(lambda v: fnp.std(v, axis=0, ddof=1), (dev(x),), order=2)
    g = _grad(lambda v: fnp.var(v, ddof=1), x)
    assert_allclose(g, 2 * (x - x.mean()) / (x.size - 1))


def test_median_gradient_even_length() -> None:
    x = np.array([4.0, 1.0, 3.0, 2.0])
    assert_allclose(_grad(lambda v: fnp.median(v), x), np.array([0.0, 0.0, 0.5, 0.5]))
    x = np.array([4.0, 1.0, 3.0])
    assert_allclose(_grad(lambda v: fnp.median(v), x), np.array([0.0, 0.0, 1.0]))


def test_quantile_derivative_in_q_and_values() -> None:
    x = np.array([4.0, 1.0, 3.0, 2.0, 10.0])

    def f(q):
        return fnp.quantile(dev(x), q)

    # Between sorted values 3 and 4 (positions 2, 3): slope (4 - 3) * (n - 1).
    assert_allclose(funcgrad.grad(f)(dev(np.asarray(0.6))), 4.0, rtol=1e-12)
    check_grads(lambda v: fnp.percentile(v, [25.0, 60.0], axis=0),
                (dev(RNG.standard_normal((5, 2))),), order=2)
    with pytest.raises(ValueError, match="range"):
        fnp.quantile(dev(x), 1.5)
    with pytest.raises(ValueError, match="range"):
        fnp.percentile(dev(x), -1)
    assert_allclose(fnp.quantile(dev(x), 0.5, method="nearest"),
                    np.quantile(host(x), 0.5, method="nearest"))
    with pytest.raises(ValueError, match="method"):
        fnp.quantile(dev(x), 0.5, method="bogus")


def test_quantile_under_jit_with_concrete_or_traced_q() -> None:
    x = dev(np.array([1.0, 2.0, 3.0]))
    jitted = funcgrad.jit(lambda v: fnp.quantile(v, 0.25))
    assert_allclose(jitted(x), np.quantile(host(x), 0.25))
    # A q known only at run time works too, as in JAX.
    assert_allclose(funcgrad.jit(lambda q: fnp.quantile(x, q))(0.3), np.quantile(host(x), 0.3))


def test_nan_functions_ignore_nans_in_gradients() -> None:
    x = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, 2.0]])
    assert_allclose(_grad(lambda v: fnp.nansum(v), x), np.where(np.isnan(x), 0.0, 1.0))
    assert_allclose(_grad(lambda v: fnp.sum(fnp.nanmax(v, axis=1)), x),
                    np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]))
    assert_allclose(_grad(lambda v: fnp.sum(fnp.nanmean(v, axis=1)), x),
                    np.array([[0.5, 0.0, 0.5], [0.0, 0.0, 1.0]]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_allclose(fnp.nanmin(dev(np.full((2, 2), np.nan)), axis=0), np.array([np.nan] * 2))


def test_average_weights_and_errors() -> None:
    x = RNG.standard_normal((2, 3))
    w = np.array([1.0, 2.0, 3.0])
    avg, scl = fnp.average(dev(x), axis=1, weights=dev(w), returned=True)
    want_avg, want_scl = np.average(x, axis=1, weights=w, returned=True)
    assert_allclose(avg, want_avg)
    assert_allclose(scl, want_scl)
    with pytest.raises(ZeroDivisionError):
        fnp.average(dev(x), axis=1, weights=dev(np.array([1.0, -1.0, 0.0])))
    with pytest.raises(TypeError, match="axis"):
        fnp.average(dev(x), weights=dev(w))
    with pytest.raises(ValueError, match="weights"):
        fnp.average(dev(x), axis=0, weights=dev(w))


def test_count_nonzero_and_logical() -> None:
    x = np.array([[0.0, 1.0, np.nan], [0.0, 0.0, -2.0]])
    assert_allclose(fnp.count_nonzero(dev(x), axis=1), np.count_nonzero(x, axis=1))
    assert_allclose(fnp.count_nonzero(dev(x)), np.count_nonzero(x))
    c = np.array([0j, 1j, 2 + 0j])
    assert_allclose(fnp.count_nonzero(dev(c)), np.count_nonzero(c))
    assert_allclose(fnp.any(dev(c)), True)
    assert_allclose(fnp.all(dev(x), axis=0), np.all(x, axis=0))


def test_lists_accepted() -> None:
    assert_allclose(fnp.sum([[1, 2], [3, 4]], axis=0), np.array([4, 6]))
    assert_allclose(fnp.sort([3.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0]))
    assert_allclose(fnp.percentile([1.0, 2.0, 3.0], 50), 2.0)


def test_numpy_dispatch_and_methods_trace() -> None:
    x = RNG.standard_normal((2, 3))
    g = _grad(lambda v: np.sum(np.max(v, axis=0)) + v.sum() + v.var(ddof=1) + v.ptp(), x)
    want = _grad(lambda v: fnp.sum(fnp.max(v, axis=0)) + fnp.sum(v) + fnp.var(v, ddof=1)
                 + fnp.ptp(v), x)
    assert_allclose(g, want)


# ---------------------------------------------------------------------------------------------
# errors name the function and the problem


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "var", "std", "max", "min", "any",
                                  "all", "ptp", "median", "nansum", "nanmax", "count_nonzero",
                                  "argmax", "argmin", "cumsum", "cumprod", "sort", "argsort"])
def test_bad_axis_names_function_and_rank(name: str) -> None:
    x = dev(np.ones((2, 3)))
    with pytest.raises(ShapeError, match=rf"{name}.*axis 2.*rank 2"):
        getattr(fnp, name)(x, axis=2)
    with pytest.raises(ValueError, match=rf"{name}.*axis -3.*rank 2"):
        getattr(fnp, name)(x, axis=-3)


def test_other_argument_errors() -> None:
    x = dev(np.ones((2, 3)))
    with pytest.raises(ShapeError, match="sum: repeated axis"):
        fnp.sum(x, axis=(0, -2))
    with pytest.raises(TypeError, match="mean: axis must be"):
        fnp.mean(x, axis=1.0)
    with pytest.raises(TypeError, match="argmax: axis must be"):
        fnp.argmax(x, axis=(0, 1))
    with pytest.raises(TypeError, match="out="):
        fnp.sum(x, out=np.ones(3))
    with pytest.raises(TypeError, match="order="):
        fnp.sort(x, order="f")
    with pytest.raises(ValueError, match="sort: kind"):
        fnp.sort(x, kind="bogo")
    with pytest.raises(ShapeError, match="sort: axis -1 is out of bounds.*rank 0"):
        fnp.sort(dev(np.asarray(1.0)))
    with pytest.raises(TypeError, match="ptp: boolean"):
        fnp.ptp(dev(np.ones(3, bool)))
    with pytest.raises(ValueError, match="var: ddof and correction"):
        fnp.var(x, ddof=1, correction=1)
    with pytest.raises(ShapeError, match="reduce_max.*zero-size"):
        red.reduce_max(dev(np.zeros((0, 2))), (0,))
    with pytest.raises(ShapeError, match="sort: operands must have equal shapes"):
        srt.sort([x, dev(np.ones(3))])


def test_make_jaxpr_shows_primitives() -> None:
    jaxpr = str(funcgrad.make_jaxpr(lambda v: fnp.median(v, axis=0))(np.ones((4, 3))))
    assert "sort" in jaxpr and "gather_along_axis" in jaxpr
    jaxpr = str(funcgrad.make_jaxpr(lambda v: fnp.cumprod(v, axis=1))(np.ones((4, 3))))
    assert "cumprod[axis=1 reverse=False]" in jaxpr
