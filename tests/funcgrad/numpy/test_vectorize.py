"""fnp.vectorize against numpy.vectorize, and under grad/jit/vmap."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.test_util import check_grads
from tests.helpers import dev, host, is_device_array

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("sig,f,shapes", [
    (None, lambda a, b: a * b + 1.0, [(3, 1), (4,)]),
    ("(n),(n)->()", lambda a, b: (a * b).sum(), [(5, 3), (3,)]),
    ("(m,n),(n)->(m)", lambda m, v: m @ v, [(2, 1, 4, 3), (5, 3)]),
    ("(n)->(n),()", lambda a: (a[::-1], a.max()), [(2, 3, 4)]),
    ("()->(k)", lambda a: np.stack([a, a * 2.0, a * 3.0]), [(2, 2)]),
])
def test_matches_numpy_vectorize(sig, f, shapes):
    args = [RNG.normal(size=s) for s in shapes]
    expected = np.vectorize(f, signature=sig)(*args)
    got = fnp.vectorize(f, signature=sig)(*[dev(a) for a in args])
    if isinstance(expected, tuple):
        for e, g in zip(expected, got):
            np.testing.assert_allclose(host(g), e, rtol=1e-12)
    else:
        np.testing.assert_allclose(host(got), expected, rtol=1e-12)


def test_excluded_kwargs_and_otypes():
    f = fnp.vectorize(lambda x, p, scale=1.0: scale * x ** p, excluded={1, "scale"},
                      otypes=[np.float32])
    out = f(dev(np.arange(4.0)), 2, scale=3.0)
    assert out.dtype == np.float32
    np.testing.assert_allclose(host(out), 3.0 * np.arange(4.0) ** 2)
    g = fnp.vectorize(lambda x, y: x - y)
    np.testing.assert_allclose(host(g(dev(np.arange(3.0)), y=dev(np.ones((2, 1))))),
                               np.arange(3.0) - np.ones((2, 1)))


def test_differentiable_and_jittable():
    f = fnp.vectorize(lambda v, w: fnp.tanh(v @ w), signature="(n),(n)->()")
    x, w = RNG.normal(size=(4, 3)), RNG.normal(size=3)
    check_grads(lambda a, b: f(a, b).sum(), (dev(x), dev(w)), order=2)
    np.testing.assert_allclose(host(funcgrad.jit(f)(dev(x), dev(w))), np.tanh(x @ w),
                               rtol=1e-12)
    np.testing.assert_allclose(host(funcgrad.vmap(f, in_axes=(None, 0))(dev(x[0]), dev(x))),
                               np.tanh(x @ x[0]), rtol=1e-12)
    jaxpr = str(funcgrad.make_jaxpr(f)(x, w))
    assert jaxpr.count("tanh") == 1  # traced once, batched, not a Python loop


def test_bad_signatures_and_shapes():
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        fnp.vectorize(lambda a: a, signature="(n->()")
    f = fnp.vectorize(lambda a, b: a @ b, signature="(n),(n)->()")
    with pytest.raises(ValueError, match="core dimension 'n' has size 3 and 2"):
        f(np.ones(3), np.ones(2))
    with pytest.raises(TypeError, match="2 inputs, got 1"):
        f(np.ones(3))
    with pytest.raises(ValueError, match="output 0 has core shape"):
        fnp.vectorize(lambda a: a, signature="(n)->()")(np.ones((2, 3)))
    with pytest.raises(TypeError, match="callable"):
        fnp.vectorize(3)


def test_vectorize_as_a_decorator_factory():
    # NumPy 2: vectorize(signature=...) without pyfunc is a decorator (TypeError before)
    @fnp.vectorize(signature="(n)->()", otypes=[np.float32])
    def total(v):
        return v.sum()

    x = np.arange(6.0).reshape(2, 3)
    got = host(total(dev(x)))
    assert got.dtype == np.float32 and got.tolist() == [3.0, 12.0]
    assert total.signature == "(n)->()"
    with pytest.raises(TypeError, match="takes the function"):
        fnp.vectorize(otypes=[float])(1.0, 2.0)


def test_vectorize_zero_d_results_and_doc():
    # NumPy's vectorize returns 0-d arrays for 0-d inputs (pyfunc's NumPy/Python scalar
    # results included), and doc= is the object's __doc__ (functools.wraps overwrote it)
    f = fnp.vectorize(lambda a: a + 1, doc="adds one")
    assert f.__doc__ == "adds one"
    r = f(3.0)
    assert is_device_array(r) and r.shape == () and float(host(r)) == 4.0
    two = fnp.vectorize(lambda a, b: (a + b, 5))(dev(np.float64(2.0)), 3.0)
    assert all(is_device_array(o) and o.shape == () for o in two)
    assert [float(host(o)) for o in two] == [5.0, 5.0]


def test_a_value_dependent_function_loops_as_numpy():
    # np.vectorize's common use, a Python `if` per element, cannot be traced once under vmap
    # (it raised): on concrete input each element is a call, NumPy's loop, the results in
    # the first one's dtype (or otypes')
    x = np.array([[1.0, -2.0, 3.0], [-1.0, -1.0, 5.0]])
    relu = fnp.vectorize(lambda v: v if v > 0 else 0.0)
    got = relu(dev(x))
    np.testing.assert_array_equal(host(got), np.array([[1.0, 0.0, 3.0], [0.0, 0.0, 5.0]]))
    got = fnp.vectorize(lambda v: 0 if v > 0 else 1.5)(dev(x))  # first result an int
    assert host(got).dtype == np.int64 and host(got).tolist() == [[0, 1, 0], [1, 1, 0]]
    a, b = fnp.vectorize(lambda v: (v, -v) if v > 0 else (0.0, 1.0))(dev(x[0]))
    assert host(a).tolist() == [1.0, 0.0, 3.0] and host(b).tolist() == [-1.0, 1.0, -3.0]
    total = fnp.vectorize(lambda u: u[u > 0].sum(), signature="(n)->()")
    assert host(total(dev(x))).tolist() == [4.0, 5.0]
    empty = fnp.vectorize(lambda v: v if v > 0 else 0.0, otypes=[np.float32])(dev(np.zeros(0)))
    assert host(empty).dtype == np.float32 and host(empty).shape == (0,)
    with pytest.raises(funcgrad.errors.ConcretizationError):  # traced input: no loop
        funcgrad.jit(relu)(dev(x))
