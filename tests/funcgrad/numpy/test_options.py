"""Focused tests of NumPy options in funcgrad.numpy: quantile methods and weights, ``where=``
and ``mean=`` of the reductions, reshape/ravel orders, pad modes and the ufunc keywords.

Values against NumPy live in tests/funcgrad/op_tables/options.py and the conformance tests;
here: derivatives in ``q``, transformations, and the errors (clear, NumPy's types, never
NotImplementedError).
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.errors import DTypeError
from funcgrad.test_util import check_grads

X = np.array([3.0, 1.0, 2.0, 5.0, 4.5, -1.0])
SMOOTH = ("linear", "interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased",
          "normal_unbiased")
STEPS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation", "lower", "higher",
         "midpoint", "nearest")


@pytest.mark.parametrize("method", SMOOTH)
def test_quantile_derivative_in_q(method: str) -> None:
    """Continuous methods interpolate linearly in q: the derivative is the slope there."""
    for fn, q, eps in ((fnp.quantile, 0.37, 1e-6), (fnp.percentile, 37.0, 1e-4)):
        g = funcgrad.grad(lambda t, fn=fn: fn(dev(X), t, method=method))(q)
        ref_fn = np.quantile if fn is fnp.quantile else np.percentile
        num = (ref_fn(X, q + eps, method=method) - ref_fn(X, q - eps, method=method)) / (2 * eps)
        assert_allclose(g, np.float64(num), rtol=1e-6, atol=1e-6)
    check_grads(lambda t: fnp.quantile(dev(X), t, method=method),
                dev((np.array([0.3, 0.61]),)), order=2)


@pytest.mark.parametrize("method", STEPS)
def test_quantile_step_methods_have_zero_q_derivative(method: str) -> None:
    assert float(funcgrad.grad(lambda t: fnp.quantile(dev(X), t, method=method))(0.37)) == 0.0
    check_grads(lambda v: fnp.quantile(v, np.array([0.2, 0.7]), method=method), (dev(X),),
                order=2)


def test_quantile_methods_under_jit_and_vmap() -> None:
    xs = np.stack([X, X[::-1] * 2, X + 1])
    for method in SMOOTH + STEPS:
        want = np.quantile(xs, [0.1, 0.5], axis=1, method=method).T
        got = funcgrad.vmap(lambda v, m=method: fnp.quantile(v, [0.1, 0.5], method=m))(dev(xs))
        assert_allclose(got, want)
        got = funcgrad.jit(lambda v, m=method: fnp.quantile(v, [0.1, 0.5], axis=1,
                                                            method=m))(dev(xs))
        assert_allclose(got, want.T)


def test_quantile_dtypes_follow_numpy() -> None:
    ints = np.array([4, 1, 3, 2])
    for method in ("lower", "higher", "nearest", "inverted_cdf", "closest_observation"):
        for q in (0.4, [0.2, 0.9]):
            assert_allclose(fnp.quantile(dev(ints), q, method=method),
                            np.asarray(np.quantile(ints, q, method=method)))
    bools = np.array([True, False, True])
    assert_allclose(fnp.quantile(dev(bools), 0.5, method="lower"),
                    np.asarray(np.quantile(bools, 0.5, method="lower")))
    with pytest.raises(TypeError, match="boolean"):
        fnp.quantile(dev(bools), 0.5, method="hazen")
    f32 = X.astype(np.float32)
    assert fnp.percentile(dev(f32), 30, method="weibull").dtype == np.float32
    assert fnp.percentile(dev(f32), np.array(30.0), method="weibull").dtype == np.float64


def test_weighted_quantile() -> None:
    x = np.array([[1.0, 7.0, 3.0, 2.0], [4.0, 4.0, 0.5, 9.0]])
    w = np.array([0.0, 0.0, 1.0, 3.0])  # leading zero weights are skipped, as in NumPy
    for q in (0.0, 0.3, 1.0, [0.0, 0.25, 0.5, 1.0]):
        want = np.quantile(x, q, axis=1, weights=w, method="inverted_cdf")
        assert_allclose(fnp.quantile(dev(x), q, axis=1, weights=dev(w), method="inverted_cdf"),
                        np.asarray(want))
        assert_allclose(funcgrad.jit(lambda a, b, q=q: fnp.quantile(
            a, q, axis=1, weights=b, method="inverted_cdf"))(dev(x), dev(w)), np.asarray(want))
    g = funcgrad.grad(lambda a: fnp.sum(fnp.quantile(a, 0.5, axis=1, weights=dev(w),
                                                     method="inverted_cdf")))(dev(x))
    assert_allclose(g, np.array([[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 1.0]]))
    w2 = np.array([[1.0, 2.0], [0.5, 0.5], [3.0, 1.0]])  # axes (2, 0) of a (2, 3, 3) array
    a3 = np.arange(18.0).reshape(2, 3, 3) % 7
    assert_allclose(fnp.percentile(dev(a3), 40, axis=(2, 0), weights=dev(w2),
                                   method="inverted_cdf"),
                    np.percentile(a3, 40, axis=(2, 0), weights=w2, method="inverted_cdf"))


@pytest.mark.parametrize("call, exc, match", [
    (lambda: fnp.quantile(X, 0.5, method="foo"), ValueError, "not a valid method"),
    (lambda: fnp.quantile(X, 0.5, weights=np.ones(6)), ValueError, "only method 'inverted_cdf'"),
    (lambda: fnp.quantile(X, 0.5, weights=-np.ones(6), method="inverted_cdf"), ValueError,
     "non-negative"),
    (lambda: fnp.quantile(X, 0.5, weights=np.zeros(6), method="inverted_cdf"), ValueError,
     "all zero"),
    (lambda: fnp.quantile(np.ones((2, 3)), 0.5, weights=np.ones(3), method="inverted_cdf"),
     TypeError, "axis must be specified"),
    (lambda: fnp.quantile(np.ones((2, 3)), 0.5, axis=1, weights=np.ones(2),
                          method="inverted_cdf"), ValueError, "consistent"),
    (lambda: fnp.quantile(X, np.full((1, 1, 1), 0.5)), ValueError, "scalar or 1d"),
    (lambda: fnp.max(X, where=X > 0), ValueError, "initial"),
    (lambda: fnp.nanmin(X, where=X > 0), ValueError, "initial"),
    (lambda: fnp.sum(X, where=np.ones(6)), TypeError, "where= must be boolean"),
    (lambda: fnp.sum(np.ones((2, 3)), where=np.ones(2, bool)), ValueError, "broadcast"),
    (lambda: fnp.var(np.ones((2, 3)), axis=1, mean=np.ones((3, 1))), ValueError,
     "broadcast|shape"),
    (lambda: fnp.sum(X, out=np.ones(())), TypeError, "immutable"),
    (lambda: fnp.reshape(X, (2, 3), order="K"), ValueError, "not permitted"),
    (lambda: fnp.reshape(X, (2, 3), order="Q"), ValueError, "order must be one of"),
    (lambda: fnp.ravel(X, order="Q"), ValueError, "order must be one of"),
    (lambda: fnp.pad(X, 1, mode=lambda v, w, i, k: None), TypeError, "callable mode"),
    (lambda: fnp.pad(X, 1, mode="foo"), ValueError, "not supported"),
    (lambda: fnp.pad(X, 1, mode="maximum", stat_length=0), ValueError, "stat_length of 0"),
    (lambda: fnp.pad(X, 1, mode="mean", end_values=1), ValueError, "unsupported keyword"),
    (lambda: fnp.add(X, X, where=X > 0), TypeError, "uninitialized"),
    (lambda: fnp.add(X, X, order="Q"), ValueError, "order must be one of"),
    (lambda: fnp.add(X, X, casting="Q"), ValueError, "casting must be one of"),
    (lambda: fnp.add(X, X, subok="yes"), TypeError, "subok"),
    (lambda: fnp.add(X, X, dtype=np.float32, signature="dd->d"), TypeError, "both"),
    (lambda: fnp.add(X, np.arange(6), casting="no"), DTypeError, "casting rule 'no'"),
    (lambda: fnp.less(X, X, dtype=np.float64), DTypeError, "loop"),
    (lambda: fnp.add(X, X, dtype=np.int64), DTypeError, "same_kind"),
])
def test_option_errors(call, exc, match) -> None:
    with pytest.raises(exc, match=match) as info:
        call()
    assert not isinstance(info.value, NotImplementedError)


def test_where_under_transformations() -> None:
    x = np.arange(12.0).reshape(3, 4) - 5
    m = np.array([True, False, True, True])
    for name, kw in (("sum", {}), ("mean", {}), ("var", {"ddof": 1}), ("max", {"initial": -9}),
                     ("nanmean", {}), ("all", {})):
        want = getattr(np, name)(x, axis=1, where=m, **kw)
        f = lambda a, w, n=name, k=kw: getattr(fnp, n)(a, axis=1, where=w, **k)  # noqa: E731
        assert_allclose(f(dev(x), dev(m)), np.asarray(want))
        assert_allclose(funcgrad.jit(f)(dev(x), dev(m)), np.asarray(want))
        got = funcgrad.vmap(f, in_axes=(0, None))(dev(x[None]), dev(m))
        assert_allclose(got, np.asarray(want)[None])
    g = funcgrad.grad(lambda a: fnp.sum(a, where=dev(m)))(dev(x[0]))
    assert_allclose(g, m.astype(float))


def test_reshape_fortran_order_under_transformations() -> None:
    x = np.arange(24.0).reshape(2, 3, 4)
    f = lambda v: fnp.reshape(v, (4, 6), order="F") ** 2  # noqa: E731
    assert_allclose(funcgrad.jit(f)(dev(x)), np.reshape(x, (4, 6), order="F") ** 2)
    check_grads(lambda v: fnp.sin(fnp.ravel(v, order="F")), (dev(x / 10),), order=2)
    assert_allclose(funcgrad.vmap(lambda v: fnp.ravel(v, order="F"))(dev(x)),
                    np.stack([v.ravel(order="F") for v in x]))
    # order='A' follows a concrete array's layout; a traced value has none and counts as C.
    fx = np.asfortranarray(x)
    assert_allclose(fnp.ravel(fx, order="A"), np.ravel(fx, order="A"))
    assert_allclose(host(funcgrad.jit(lambda v: fnp.ravel(v, order="A"))(fx)), np.ravel(x))


def test_pad_modes_traced() -> None:
    x = np.array([[1.0, 4.0, 2.0], [3.0, -1.0, 5.0]])
    for mode, kw in (("mean", {"stat_length": 2}), ("median", {}), ("minimum", {}),
                     ("linear_ramp", {"end_values": 7.0}), ("symmetric", {"reflect_type": "odd"}),
                     ("wrap", {}), ("empty", {})):
        f = lambda v, mode=mode, kw=kw: fnp.pad(v, ((1, 2), (4, 1)), mode=mode, **kw)  # noqa: E731
        want = np.pad(x, ((1, 2), (4, 1)), mode=mode, **kw)
        if mode == "empty":
            want = np.pad(x, ((1, 2), (4, 1)))  # ('empty' fills with zeros)
        assert_allclose(f(dev(x)), want)
        assert_allclose(funcgrad.jit(f)(dev(x)), want)
    # a traced end value differentiates
    g = funcgrad.grad(lambda e: fnp.sum(fnp.pad(dev(x[0]), 2, mode="linear_ramp",
                                                end_values=e)))(1.0)
    assert_allclose(g, np.float64(np.sum(np.pad(np.zeros(3), 2, mode="linear_ramp",
                                                end_values=1.0))))


def test_where_and_select_name_their_own_operands_when_shapes_clash():
    # the error came from the select_n primitive, its operands in its own order
    c = np.array([True, False])
    with pytest.raises(ValueError, match=r"where: condition, x and y of shapes \(2,\), \(3,\)"):
        fnp.where(c, np.ones(3), 0.0)
    with pytest.raises(ValueError, match=r"where: condition, x and y"):
        funcgrad.jit(lambda v: fnp.where(c, v, 0.0))(np.ones(3))
    with pytest.raises(ValueError, match=r"select: the conditions \(shapes \[\(2,\)\]\), "
                                         r"choices \(shapes \[\(3,\)\]\)"):
        fnp.select([c], [np.ones(3)])
