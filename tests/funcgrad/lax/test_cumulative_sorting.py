"""``lax`` cumulative ops, sorting, ``top_k`` and dynamic slicing: JAX's semantics (values
worked out with JAX's algorithms, recorded as literals), derivatives, vmap and jit."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.test_util import check_grads, check_jit, check_vmap

X = np.array([1.0, 3.0, 3.0, 2.0, 3.0])


def _grad_sum(f, x):
    return host(funcgrad.grad(lambda v: f(v).sum())(dev(x)))


def test_cummax_ties_follow_jax_scan_tree():
    # JAX differentiates cummax as associative_scan(lax.max): each tied comparison splits the
    # tangent in half, so the weights follow the odd/even combination tree.
    assert_allclose(_grad_sum(lax.cummax, X), np.array([1.0, 2.25, 1.25, 0.0, 0.5]))
    assert_allclose(_grad_sum(lambda v: lax.cummax(v, reverse=True), X),
                    np.array([0.0, 0.5, 1.0, 0.0, 3.5]))
    assert_allclose(_grad_sum(lax.cummin, -X), np.array([1.0, 2.25, 1.25, 0.0, 0.5]))
    jac = host(funcgrad.jacrev(lax.cummax)(dev(X)))
    assert_allclose(jac[4], np.array([0.0, 0.25, 0.25, 0.0, 0.5]))
    for rev in (False, True):
        want = _grad_sum(lambda v, r=rev: lax.associative_scan(lax.max, v, reverse=r), X)
        assert_allclose(_grad_sum(lambda v, r=rev: lax.cummax(v, reverse=r), X), want)


@pytest.mark.parametrize("fn", [lax.cummax, lax.cummin, lax.cumsum, lax.cumprod,
                                lax.cumlogsumexp])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_values_grads_vmap_jit(fn, reverse):
    rng = np.random.default_rng(0)
    x = dev(rng.normal(size=(3, 4)))
    ref = {lax.cummax: np.maximum.accumulate, lax.cummin: np.minimum.accumulate,
           lax.cumsum: np.cumsum, lax.cumprod: np.cumprod,
           lax.cumlogsumexp: np.logaddexp.accumulate}[fn]
    h = host(x)
    want = np.flip(ref(np.flip(h, 1), axis=1), 1) if reverse else ref(h, axis=1)
    assert_allclose(host(fn(x, axis=1, reverse=reverse)), want)
    check_grads(lambda v: fn(v, axis=1, reverse=reverse), (x,), order=2)
    check_vmap(lambda v: fn(v, reverse=reverse), (x,))
    check_jit(lambda v: fn(v, axis=1, reverse=reverse), (x,))


def test_cumprod_gradient_exact_with_zeros():
    x = np.array([2.0, 0.0, 3.0, 0.0, 5.0])
    assert_allclose(_grad_sum(lax.cumprod, x), np.array([1.0, 8.0, 0.0, 0.0, 0.0]))
    assert_allclose(_grad_sum(lambda v: lax.cumprod(v, reverse=True), x[:3]),
                    np.array([0.0, 9.0, 1.0]))
    check_grads(lax.cumprod, (dev(x),), order=2)


def test_integer_cumulative_ops_keep_dtype():
    x = dev(np.array([1, 3, 2], np.int32))
    assert host(lax.cummax(x)).tolist() == [1, 3, 3]
    assert host(lax.cummax(x)).dtype == np.int32
    assert host(lax.cumsum(x, reverse=True)).tolist() == [6, 5, 2]
    assert host(lax.cummin(dev(np.array([True, False, True])))).tolist() == [True, False, False]


def test_top_k_order_ties_nan_and_gradient():
    v, i = lax.top_k(dev(np.array([[1.0, 3.0, 3.0, np.nan, 2.0]])), 3)
    assert np.isnan(host(v)[0, 0]) and host(v)[0, 1:].tolist() == [3.0, 3.0]
    assert host(i).tolist() == [[3, 1, 2]] and host(i).dtype == np.int32
    g = _grad_sum(lambda a: lax.top_k(a, 2)[0], np.array([1.0, 3.0, 3.0, 2.0]))
    assert g.tolist() == [0.0, 1.0, 1.0, 0.0]
    x = dev(np.random.default_rng(1).normal(size=(3, 6)))
    check_grads(lambda a: lax.top_k(a, 4)[0], (x,), order=2)
    check_vmap(lambda a: lax.top_k(a, 2), (x,))
    check_jit(lambda a: lax.top_k(a, 2), (x,))


def test_sort_multiple_operands_lexicographic_and_stable():
    k1 = dev(np.array([2, 1, 2, 1, 1]))
    k2 = dev(np.array([1, 1, 0, 0, 1]))
    v = dev(np.array([10.0, 20.0, 30.0, 40.0, 50.0]))
    a, b, c = lax.sort((k1, k2, v), num_keys=2)
    assert host(a).tolist() == [1, 1, 1, 2, 2]
    assert host(b).tolist() == [0, 1, 1, 0, 1]
    assert host(c).tolist() == [40.0, 20.0, 50.0, 30.0, 10.0]
    (a, c) = lax.sort((k1, v), num_keys=1)
    assert host(c).tolist() == [20.0, 40.0, 50.0, 10.0, 30.0]
    s = host(lax.sort(dev(np.array([0.0, -0.0, np.nan, -np.inf, 1.0]))))
    assert np.isnan(s[-1]) and s[:4].tolist() == [-np.inf, 0.0, 0.0, 1.0]
    assert np.signbit(s[2]) and not np.signbit(s[1])   # -0 == 0 for sorting: stable
    k, w = lax.sort_key_val(dev(np.array([[3, 1], [0, 2]])), dev(np.array([[1.0, 2.0],
                                                                           [3.0, 4.0]])), 0)
    assert host(k).tolist() == [[0, 1], [3, 2]] and host(w).tolist() == [[3.0, 2.0],
                                                                         [1.0, 4.0]]
    check_grads(lambda x: lax.sort((k1, x), num_keys=1)[1], (v,), order=2)
    check_vmap(lambda x, y: lax.sort((x, y), num_keys=1), (dev(np.array([[2, 1], [1, 2]])),
                                                          dev(np.array([[1.0, 2.0],
                                                                        [3.0, 4.0]]))))


def test_dynamic_slice_clamps_like_xla():
    x = dev(np.arange(10))
    assert host(lax.dynamic_slice(x, (8,), (4,))).tolist() == [6, 7, 8, 9]
    assert host(lax.dynamic_slice(x, (-2,), (4,))).tolist() == [6, 7, 8, 9]
    assert host(lax.dynamic_slice(x, (-20,), (4,))).tolist() == [0, 1, 2, 3]
    z = dev(np.zeros(5))
    assert host(lax.dynamic_update_slice(z, dev(np.ones(2)), (7,))).tolist() == [
        0.0, 0.0, 0.0, 1.0, 1.0]
    assert host(lax.dynamic_update_index_in_dim(z, 1.0, 10, 0)).tolist() == [
        0.0, 0.0, 0.0, 0.0, 1.0]
    f = funcgrad.jit(lambda v, i: lax.dynamic_slice(v, (i,), (3,)))
    assert host(f(dev(np.arange(5.0)), 4)).tolist() == [2.0, 3.0, 4.0]
    got = funcgrad.vmap(lambda i: lax.dynamic_slice(dev(np.arange(6.0)), (i,), (3,)))(
        dev(np.array([-1, 0, 5, -9])))
    assert host(got).tolist() == [[3.0, 4.0, 5.0], [0.0, 1.0, 2.0], [3.0, 4.0, 5.0],
                                  [0.0, 1.0, 2.0]]


def test_dynamic_slices_batched_starts_grads():
    rng = np.random.default_rng(2)
    xs = dev(rng.normal(size=(3, 4, 5)))
    starts = dev(np.array([3, -1, 1]))

    def cut(x, i):
        return lax.dynamic_slice(x, (i, 2), (2, 3))

    def put(x, u, i):
        return lax.dynamic_update_slice(x, u, (i, 4))

    check_vmap(cut, (xs, starts))
    us = dev(rng.normal(size=(3, 2, 3)))
    check_vmap(put, (xs, us, starts))
    for i in (3, -1, 1):
        check_grads(lambda x, i=i: cut(x, i), (xs[0],), order=2)
        check_grads(lambda x, u, i=i: put(x, u, i), (xs[0], us[0]), order=1)
    g = funcgrad.vmap(funcgrad.grad(lambda x, i: cut(x, i).sum()))(xs, starts)
    want = np.zeros((3, 4, 5))
    for b, i in enumerate([3, -1, 1]):
        s = min(max(i + 4 if i < 0 else i, 0), 2)
        want[b, s:s + 2, 2:5] = 1.0
    assert_allclose(host(g), want)


def test_top_k_along_another_axis():
    x = np.array([[1.0, 5.0, 2.0], [4.0, 2.0, 2.0], [0.0, 2.0, 7.0]])
    v, i = lax.top_k(dev(x), 2, axis=0)
    assert host(i).tolist() == [[1, 0, 2], [0, 1, 0]]
    assert host(v).tolist() == [[4.0, 5.0, 7.0], [1.0, 2.0, 2.0]]
    check_grads(lambda a: lax.top_k(a, 2, axis=0)[0], (dev(np.arange(9.0).reshape(3, 3) % 4),),
                order=1)
    check_vmap(lambda a: lax.top_k(a, 1, axis=0), (dev(np.stack([x, x.T])),))


def test_top_k_compares_floats_in_total_order() -> None:
    # jax.lax.top_k([-nan, 1, nan, -inf, -0., 0., 1., -3.], 8) (JAX 0.10.2): NaN above inf,
    # +0 above -0, -NaN below -inf; jax.lax.top_k([0., -0., 1., -inf, -3., 0., -0.], 7).
    x = np.array([-np.nan, 1.0, np.nan, -np.inf, -0.0, 0.0, 1.0, -3.0])
    for dtype in (np.float64, np.float32):
        vals, idx = lax.top_k(dev(x.astype(dtype)), 8)
        assert host(idx).tolist() == [2, 1, 6, 5, 4, 7, 3, 0]
        assert np.signbit(host(vals)).tolist() == [False, False, False, False, True, True,
                                                   True, True]
    y = dev(np.array([0.0, -0.0, 1.0, -np.inf, -3.0, 0.0, -0.0]))
    assert host(lax.top_k(y, 7)[1]).tolist() == [2, 0, 5, 1, 6, 4, 3]
    assert host(lax.approx_min_k(y, 7)[1]).tolist() == [3, 4, 0, 1, 5, 6, 2]



def test_sort_keeps_the_order_of_equal_float_keys_as_jax():
    # JAX 0.10.2: -0.0 and 0.0 (and NaNs of either sign) compare equal and keep their order
    v = np.array([0.0, -0.0, np.nan, -np.nan, 1.0, -np.inf, np.inf, -1.0, 0.0, -0.0])
    want_sign = [True, True, False, True, False, True, False, False, False, True]
    for f in (lax.sort, funcgrad.jit(lax.sort)):
        out = host(f(dev(v)))
        assert np.signbit(out).tolist() == want_sign
    out = host(lax.sort(dev(v.astype(np.float32).reshape(2, 5)), dimension=1))
    assert np.signbit(out).tolist() == [[False, True, False, False, True],
                                        [True, True, False, True, False]]
    # argsort and sort of several operands too (CuPy's radix sort of a float vector put a
    # -NaN first: the strict backend sorts by bits as it does, funcgrad sorts canonical keys)
    assert host(fnp.argsort(dev(v))).tolist() == np.argsort(v, kind="stable").tolist()
    keys, vals = lax.sort((dev(v), dev(np.arange(10.0))), num_keys=1)
    assert host(vals).tolist() == [5, 7, 0, 1, 8, 9, 4, 6, 2, 3]
    idx = host(lax.sort((dev(v), dev(np.arange(10))), num_keys=1)[1])
    assert idx.tolist() == [5, 7, 0, 1, 8, 9, 4, 6, 2, 3]


def test_negative_nans_sort_last_on_every_backend():
    # A NaN with its sign bit set (x86's inf - inf) sorts last, as in NumPy and XLA; CuPy's
    # radix sort of a 1-D float array put it first (the strict backend sorts as CuPy).
    v = np.array([1.0, -np.nan, -np.inf, np.nan, 0.0])
    for f in (lax.sort, funcgrad.jit(lax.sort)):
        out = host(f(dev(v)))
        assert out[:3].tolist() == [-np.inf, 0.0, 1.0] and np.isnan(out[3:]).all()
        assert np.signbit(out[3:]).tolist() == [True, False]  # the NaNs keep their order
    keys, vals = lax.sort((dev(v), dev(np.arange(5))), num_keys=1)
    assert host(vals).tolist() == [2, 4, 0, 1, 3]
    assert host(fnp.argsort(dev(v))).tolist() == [2, 4, 0, 1, 3]
