"""The ufunc methods of funcgrad.numpy's two-operand functions (jnp.ufunc's): outer, reduce,
accumulate and at, against NumPy's own methods, under jit, vmap and grad."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp

X = np.array([1.5, 2.0, 3.0, 0.5])
M = np.arange(12.0).reshape(3, 4) / 7 + 0.5


def folded(ref, x, axis=0, keepdims=False, initial=None, where=None):
    """``ref.reduce(x, axis=...)`` over one axis as NumPy defines it, a left fold of ``ref``'s
    call from ``initial`` skipping masked rows, computed row by row: NumPy 2.5.2's own
    power/arctan2 reduce along the innermost axis returns ``x[0] op x[-1]`` (its loop does
    not read back the partial result), so its reduce is no reference there."""
    given = {k: v for k, v in (("initial", initial), ("where", where)) if v is not None}
    dt = ref.reduce(x, axis=axis, **given).dtype  # (the dtype is right)
    rows = np.moveaxis(x, axis, 0)
    mask = None if where is None else np.moveaxis(np.broadcast_to(where, x.shape), axis, 0)
    if initial is None and where is not None:
        initial = ref.identity
    acc = None if initial is None else np.full(rows.shape[1:], initial, dt)
    for i, row in enumerate(rows):
        new = row.astype(dt) if acc is None else ref(acc, row).astype(dt)
        acc = new if mask is None else np.where(mask[i], new, acc)
    return np.expand_dims(acc, axis) if keepdims else acc


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum", "subtract",
                                  "divide", "power", "arctan2", "hypot", "fmax"])
def test_outer_reduce_accumulate_as_numpy(name):
    f, ref = getattr(fnp, name), getattr(np, name)
    assert_allclose(f.outer(dev(X), dev(M)), ref.outer(X, M))
    for axis in (0, 1, -1):
        assert_allclose(f.reduce(dev(M), axis=axis), folded(ref, M, axis))
        assert_allclose(f.accumulate(dev(M), axis=axis), ref.accumulate(M, axis=axis))
    assert_allclose(f.reduce(dev(X), axis=None), folded(ref, X))
    if name in ("add", "multiply", "maximum", "minimum", "fmax", "hypot"):
        assert_allclose(f.reduce(dev(M), axis=None), ref.reduce(M, axis=None))
    else:  # NumPy: not reorderable, one axis at most
        with pytest.raises(ValueError, match="not reorderable"):
            f.reduce(dev(M), axis=None)
        with pytest.raises(ValueError, match="not reorderable"):
            ref.reduce(M, axis=None)
    jitted = funcgrad.jit(lambda m: (f.reduce(m, axis=1), f.accumulate(m, axis=0)))
    got = jitted(dev(M))
    assert_allclose(got[0], folded(ref, M, 1))
    assert_allclose(got[1], ref.accumulate(M, axis=0))
    assert_allclose(funcgrad.vmap(f.reduce)(dev(M)), folded(ref, M, 1))


def test_reduce_options_of_reorderable_ufuncs():
    assert_allclose(fnp.add.reduce(dev(M), axis=(0, 1), keepdims=True),
                    np.add.reduce(M, axis=(0, 1), keepdims=True))
    assert_allclose(fnp.multiply.reduce(dev(M), axis=0, initial=2.0),
                    np.multiply.reduce(M, axis=0, initial=2.0))
    where = np.array([True, False, True, True])
    assert_allclose(fnp.maximum.reduce(dev(M), axis=1, initial=-1.0, where=dev(where)),
                    np.maximum.reduce(M, axis=1, initial=-1.0, where=where))
    assert host(fnp.add.reduce(dev(np.arange(4)), dtype=np.float32)).dtype == np.float32
    assert bool(fnp.logical_or.reduce(dev(np.array([False, True]))))
    assert_allclose(fnp.subtract.reduce(dev(M), keepdims=True),
                    np.subtract.reduce(M, keepdims=True))
    # a reorderable ufunc without a reduction of its own folds over several axes at once
    assert_allclose(fnp.hypot.reduce(dev(M), axis=(0, 1)), np.hypot.reduce(M, axis=(0, 1)))
    ints = np.array([[12, 18], [30, 42]])
    assert_allclose(fnp.gcd.reduce(dev(ints), axis=None), np.gcd.reduce(ints, axis=None))
    with pytest.raises(ValueError, match="no identity"):
        fnp.subtract.reduce(dev(np.zeros((0, 2))))


INTS = np.arange(12).reshape(3, 4)


@pytest.mark.parametrize("name", ["subtract", "divide", "power", "arctan2", "hypot",
                                  "logaddexp", "bitwise_or", "bitwise_xor", "gcd"])
def test_reduce_keepdims_initial_where_of_every_binary_ufunc(name):
    # keepdims=, initial= and where= are NumPy's for every binary ufunc, not only those with
    # a reduction of their own: a fold from initial (else the identity) skipping masked rows.
    f, ref = getattr(fnp, name), getattr(np, name)
    x = INTS if name in ("bitwise_or", "bitwise_xor", "gcd") else M
    where = np.array([True, False, True, True])
    cases = [dict(axis=1, keepdims=True), dict(axis=0, initial=3),
             dict(axis=1, initial=2, where=where), dict(axis=-1, initial=2, keepdims=True)]
    if ref.identity is not None:
        cases += [dict(axis=0, where=where), dict(axis=None, keepdims=True)]
    for kw in cases:
        want = ref.reduce(x, **kw) if kw["axis"] is None else folded(ref, x, **kw)
        for got in (f.reduce(dev(x), **kw),
                    funcgrad.jit(lambda v, kw=kw: f.reduce(v, **kw))(dev(x))):
            assert host(got).dtype == want.dtype, kw
            assert_allclose(got, want)
    if ref.identity is None:
        with pytest.raises(ValueError, match="does not have an identity"):
            f.reduce(dev(x), where=where, axis=1)
    else:  # an empty reduction gives the identity, as NumPy
        empty = np.zeros((0, 2), x.dtype)
        assert_allclose(f.reduce(dev(empty)), ref.reduce(empty))


def test_reduce_initial_where_differentiate():
    where = np.array([True, False, True, True])

    def loss(m):
        return fnp.sum(fnp.subtract.reduce(m, axis=1, initial=1.0, where=where) ** 2)

    # d/dm of (1 - m0 - m2 - m3)^2 per row: -2 (1 - m0 - m2 - m3) on the kept columns
    r = 1.0 - M[:, 0] - M[:, 2] - M[:, 3]
    want = -2 * r[:, None] * where[None, :]
    assert_allclose(funcgrad.grad(loss)(dev(M)), want)


def test_reduce_and_accumulate_dtype_is_the_loops_dtype():
    # dtype= casts the inputs (NumPy's loop dtype), not the result: no int8 wrap-around, and
    # integer powers computed in floating point
    i8 = np.array([[100, 100, 100]], np.int8)
    for name in ("subtract", "maximum", "minimum"):
        for got in (getattr(fnp, name).reduce(dev(i8), axis=1, dtype=np.int64),):
            want = getattr(np, name).reduce(i8, axis=1, dtype=np.int64)
            assert host(got).dtype == want.dtype
            assert_allclose(got, want)
    assert_allclose(fnp.minimum.reduce(dev(INTS), axis=0, dtype=np.float32),
                    np.minimum.reduce(INTS, axis=0, dtype=np.float32))
    base = np.array([[2, 3, 4]])
    got = fnp.power.accumulate(dev(base), axis=1, dtype=np.float64)
    assert_allclose(got, np.power.accumulate(base, axis=1, dtype=np.float64))  # 2, 8, 4096
    got = fnp.subtract.accumulate(dev(i8), axis=1, dtype=np.int64)
    assert_allclose(got, np.array([[100, 0, -100]]))
    assert bool(fnp.logical_and.reduce(dev(np.array([True, True])), initial=False)) is False
    assert bool(fnp.logical_or.reduce(dev(np.array([False])), initial=True)) is True


def test_at_returns_the_updated_array_with_repeats_applied_again():
    idx = np.array([0, 0, 2])
    for name in ("add", "multiply", "maximum", "minimum", "subtract", "divide", "power"):
        want = np.full(4, 3.0)
        getattr(np, name).at(want, idx, 2.0)
        got = getattr(fnp, name).at(dev(np.full(4, 3.0)), dev(idx), 2.0, inplace=False)
        assert_allclose(got, want, err_msg=name)
    with pytest.raises(ValueError, match="inplace=False"):
        fnp.add.at(dev(np.zeros(3)), 0, 1.0)
    # derivatives: the unbuffered updates are differentiable like any program
    g = funcgrad.grad(lambda v: fnp.sum(fnp.divide.at(v, dev(idx), 2.0, inplace=False)))(dev(X))
    assert_allclose(g, np.array([0.25, 1.0, 0.5, 1.0]))


def test_numpys_ufunc_methods_on_traced_arrays_come_here():
    f = funcgrad.jit(lambda v: np.add.outer(v, v).sum() + np.subtract.reduce(v)
                     + np.maximum.accumulate(v)[-1])
    want = np.add.outer(X, X).sum() + np.subtract.reduce(X) + np.maximum.accumulate(X)[-1]
    assert_allclose(f(dev(X)), want)
    g = funcgrad.grad(lambda v: np.multiply.outer(v, v).sum())(dev(X))
    assert_allclose(g, 2 * np.full(4, X.sum()))


def test_ufunc_attributes():
    assert (fnp.add.nin, fnp.add.nout, fnp.add.identity) == (2, 1, 0)
    assert fnp.multiply.identity == 1 and fnp.maximum.identity is None
    assert fnp.add.outer.__name__ == "add.outer"
    # the binary ufuncs are fnp.ufunc instances, as jnp.add is a jnp.ufunc (False before)
    assert isinstance(fnp.add, fnp.ufunc) and isinstance(fnp.logaddexp, fnp.ufunc)
    assert not isinstance(fnp.sin, fnp.ufunc) and not isinstance(fnp.where, fnp.ufunc)
    assert isinstance(fnp.frompyfunc(lambda a, b: a, 2, 1), fnp.ufunc)


def test_every_ufunc_has_numpys_arity_attributes():
    # code that inspects np.<ufunc>.nin/nout/nargs/identity works with fnp's counterparts,
    # unary and two-output ones included; only the binary ones count as fnp.ufunc (as JAX)
    names = [n for n in dir(np) if isinstance(getattr(np, n), np.ufunc) and hasattr(fnp, n)]
    assert len(names) > 80
    for n in names:
        f, u = getattr(fnp, n), getattr(np, n)
        assert (f.nin, f.nout, f.nargs, f.identity) == (u.nin, u.nout, u.nargs, u.identity), n
    assert (fnp.sin.nin, fnp.divmod.nout, fnp.frexp.nout) == (1, 2, 2)
    assert isinstance(fnp.add, fnp.ufunc) and not isinstance(fnp.sin, fnp.ufunc)


def test_unary_ufunc_at():
    # numpy.<unary ufunc>.at(a, indices) (jnp.negative.at): unbuffered (a repeated index
    # applies again), results cast back to a's dtype as NumPy's (sin.at on ints truncates)
    a = dev(np.array([1.5, -2.0, 4.0, 0.25]))
    got = fnp.negative.at(a, dev(np.array([0, 0, 2])), inplace=False)
    assert_allclose(got, np.array([1.5, -2.0, -4.0, 0.25]))
    assert_allclose(fnp.sqrt.at(a, dev(np.array([2, 2])), inplace=False),
                    np.array([1.5, -2.0, np.sqrt(2.0), 0.25]))
    ints = fnp.sin.at(dev(np.array([3, -2, 5])), 1, inplace=False)
    assert host(ints).dtype == np.int64 and host(ints).tolist() == [3, 0, 5]
    g = funcgrad.grad(lambda v: fnp.sum(fnp.exp.at(v, 0, inplace=False)))(a)
    assert_allclose(g, np.array([np.exp(1.5), 1.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="inplace=False"):
        fnp.negative.at(a, 0)


def test_bool_valued_ufuncs_reduce_only_in_bool_as_numpy():
    # NumPy's logical and comparison ufuncs have bool loops only: a dtype= other than bool,
    # or a comparison folding non-bool values (its bool result would meet an int8), has no
    # loop; bool input works. (These computed a fold of cast values before.)
    f = dev(np.array([1.0, 0.0, 2.0]))
    b = dev(np.array([True, False, True]))
    for call in (lambda: fnp.logical_and.accumulate(f, dtype=np.float64),
                 lambda: fnp.logical_xor.reduce(f, dtype=np.int8),
                 lambda: fnp.equal.reduce(f), lambda: fnp.less.accumulate(dev(np.arange(3))),
                 lambda: fnp.less.reduceat(f, [0])):
        with pytest.raises(TypeError, match="No loop matching"):
            call()
    assert host(fnp.less.accumulate(b)).tolist() == [True, False, True]
    assert host(fnp.logical_and.accumulate(f, dtype=bool)).tolist() == [True, False, False]
    assert not bool(host(fnp.logical_xor.reduce(f)))


def test_empty_bitwise_and_reduce_is_all_ones():
    # its identity -1, cast as NumPy does: 255 for uint8
    got = fnp.bitwise_and.reduce(dev(np.zeros((0, 2), np.uint8)), axis=0)
    assert host(got).tolist() == [255, 255] and host(got).dtype == np.uint8


def test_at_of_any_ufunc_takes_host_indices_on_a_device_array():
    # the one-update-at-a-time path carried host index arrays into a loop on a's device
    # (DeviceMismatchError on a GPU; the strict pass checks it)
    a = np.array([1.0, 0.0, 2.0, 0.0])
    idx = (np.array([0, 0, 3]),)
    want = a.copy()
    np.logical_or.at(want, idx, np.array([0.0, 0.0, 5.0]))
    got = fnp.logical_or.at(dev(a), idx, dev(np.array([0.0, 0.0, 5.0])), inplace=False)
    np.testing.assert_array_equal(host(got), want)
    want = a.copy()
    np.power.at(want, idx, 2.0)
    np.testing.assert_array_equal(host(fnp.power.at(dev(a), idx, 2.0, inplace=False)), want)


def test_maximum_minimum_accumulate_ties_follow_jax_left_fold() -> None:
    # jnp.maximum.accumulate is a left fold y[i] = maximum(y[i-1], x[i]) whose every tie
    # splits the tangent in half (lax.max's rule), and a NaN gets none; lax.cummax differs
    # (its scan tree). Weighted gradients from JAX 0.10.2, weights 1..n:
    w = np.arange(1.0, 8.0)
    cases = [
        ("maximum", [1.0, 1.0, 0.0, 2.0, 2.0], [3.5, 2.5, 0.0, 6.5, 2.5]),
        ("maximum", [3.0] * 7, [3.859375, 2.859375, 3.71875, 4.4375, 4.875, 4.75, 3.5]),
        ("minimum", [2.0, 1.0, 2.0, 0.0, 2.0], [1.0, 5.0, 0.0, 9.0, 0.0]),
        ("maximum", [1.0, np.nan, 2.0, 3.0], [1.0, 0.0, 0.0, 0.0]),
    ]
    for name, x, want in cases:
        acc, weights = getattr(fnp, name).accumulate, dev(w[:len(x)])

        def loss(t, acc=acc, weights=weights):
            return fnp.sum(acc(t) * weights)

        x = dev(np.array(x))
        np.testing.assert_array_equal(host(funcgrad.grad(loss)(x)), want)
        np.testing.assert_array_equal(host(funcgrad.jit(funcgrad.grad(loss))(x)), want)
    a = dev(np.array([[1.0, 2.0, 2.0], [1.0, 0.0, 3.0]]))
    g = funcgrad.vmap(funcgrad.grad(lambda t: fnp.sum(fnp.maximum.accumulate(t))))(a)
    np.testing.assert_array_equal(host(g), [[1.0, 1.5, 0.5], [2.0, 0.0, 1.0]])
    np.testing.assert_array_equal(host(fnp.maximum.accumulate(a, axis=1)),
                                  [[1.0, 2.0, 2.0], [1.0, 1.0, 3.0]])
    # second order through the same rule (JAX 0.10.2's hessian; it was not symmetric)
    h = funcgrad.hessian(lambda t: fnp.sum(fnp.maximum.accumulate(t) ** 2 * dev(w[:4])))
    np.testing.assert_array_equal(host(h(dev(np.array([1.0, 1.0, 2.0, 0.0])))),
                                  [[3, 1, 0, 0], [1, 1, 0, 0], [0, 0, 14, 0], [0, 0, 0, 0]])


def test_accumulate_of_empty_and_scalar_inputs() -> None:
    # NumPy 2.4: an empty axis accumulates to an empty array of the fold's dtype (any ufunc,
    # subtract's fold included); a 0-d input is a TypeError (cumsum would flatten it)
    for name, dt in [("subtract", np.int64), ("hypot", np.float64), ("logical_and", np.bool_),
                     ("add", np.int64)]:
        got = host(getattr(fnp, name).accumulate(dev(np.zeros((0, 3), np.int64)), axis=0))
        assert got.shape == (0, 3) and got.dtype == dt
    for acc in (fnp.add.accumulate, fnp.frompyfunc(lambda a, b: a * b, 2, 1).accumulate):
        with pytest.raises(TypeError, match="cannot accumulate on a scalar"):
            acc(dev(np.array(2.5)))


def test_reduce_over_no_axes_and_of_empty_slabs() -> None:
    # NumPy 2.4: axis=() reduces each element alone (the input in the fold's dtype, initial
    # folded in); initial/where reductions whose other axes are empty give empty results
    x = dev(np.array([1, 2, 3]))
    got = host(fnp.divide.reduce(x, axis=()))
    assert got.dtype == np.float64 and got.tolist() == [1.0, 2.0, 3.0]
    assert host(fnp.subtract.reduce(x, axis=(), initial=10)).tolist() == [9, 8, 7]
    got = host(fnp.power.reduce(dev(np.zeros((2, 0), np.int64)), axis=0, initial=1))
    assert got.shape == (0,) and got.dtype == np.int64
    got = host(fnp.hypot.reduce(dev(np.zeros((0, 2))), axis=-1, initial=0.0,
                                where=dev(np.ones((0, 2), bool))))
    assert got.shape == (0,)
    j = funcgrad.jit(lambda v: fnp.subtract.reduce(v, axis=(), initial=10))(x)
    assert host(j).tolist() == [9, 8, 7]
