"""Focused tests for funcgrad/numpy/_manipulation.py and _polynomial.py: errors, edge cases
(empty arrays, negative indices), and behaviour under jit / vmap / grad that an OpCase cannot
express. Values against NumPy are in tests/funcgrad/op_tables/manipulation.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.special
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.errors import ConcretizationError


def _np(x):
    return np.asarray(host(x))


# --- insert / delete / append -----------------------------------------------------------------


def test_insert_delete_edges() -> None:
    x = dev(np.arange(6.0).reshape(2, 3))
    assert_allclose(fnp.insert(x, -1, 9.0, axis=1), np.insert(np.arange(6.0).reshape(2, 3), -1,
                                                               9.0, axis=1))
    assert_allclose(fnp.insert(x, 3, [7.0, 8.0], axis=1),
                    np.insert(np.arange(6.0).reshape(2, 3), 3, [7.0, 8.0], axis=1))
    e = dev(np.zeros((0,)))
    assert_allclose(fnp.insert(e, 0, 1.0), np.insert(np.zeros(0), 0, 1.0))
    assert_allclose(fnp.delete(x, [0, 1, 2], axis=1), np.zeros((2, 0)))
    assert_allclose(fnp.delete(x, -1), np.delete(np.arange(6.0), -1))
    assert_allclose(fnp.append(e, e), np.zeros(0))
    assert_allclose(fnp.resize(e, (2, 2)), np.zeros((2, 2)))


def test_insert_delete_errors() -> None:
    x = dev(np.arange(4.0))
    with pytest.raises(IndexError, match="insert: index 5 is out of bounds"):
        fnp.insert(x, 5, 1.0)
    with pytest.raises(IndexError, match="delete: index -5 is out of bounds"):
        fnp.delete(x, [-5])
    with pytest.raises(ValueError, match="delete: boolean array .* length of 4"):
        fnp.delete(x, np.array([True, False]))
    with pytest.raises(ValueError, match="insert: values of shape"):
        fnp.insert(dev(np.zeros((2, 3))), 1, [1.0, 2.0], axis=0)
    with pytest.raises(ConcretizationError, match="insert: the positions obj"):
        funcgrad.jit(lambda x, m: fnp.insert(x, m, 0.0))(x, np.array([True, False]))
    with pytest.raises(ConcretizationError, match="delete"):
        funcgrad.jit(lambda x, i: fnp.delete(x, i))(x, np.array(1))


def test_insert_grad_and_vmap() -> None:
    x = dev(np.arange(4.0))

    def f(x, v):
        return fnp.sum(fnp.insert(x, [0, 2], v) * dev(np.arange(6.0)))

    gx, gv = funcgrad.grad(f, argnums=(0, 1))(x, dev(np.array([1.0, 2.0])))
    # positions after insertion: values at 0 and 3, x at 1, 2, 4, 5
    assert_allclose(gx, np.array([1.0, 2.0, 4.0, 5.0]))
    assert_allclose(gv, np.array([0.0, 3.0]))
    vs = dev(np.arange(6.0).reshape(3, 2))
    got = funcgrad.vmap(lambda v: fnp.insert(x, 1, v))(vs)
    want = np.stack([np.insert(np.arange(4.0), 1, v) for v in np.arange(6.0).reshape(3, 2)])
    assert_allclose(got, want)


def test_numpy_functions_dispatch_on_tracers() -> None:
    x = dev(np.arange(3.0))
    got = funcgrad.jit(lambda t: np.append(np.insert(t, 1, 5.0), 7.0))(x)
    assert_allclose(got, np.array([0.0, 5.0, 1.0, 2.0, 7.0]))


# --- block, rollaxis, unstack ------------------------------------------------------------------


def test_block_errors() -> None:
    with pytest.raises(TypeError, match="tuple"):
        fnp.block(([1.0], [2.0]))
    with pytest.raises(ValueError, match="depths are mismatched"):
        fnp.block([[1.0], 2.0])
    with pytest.raises(ValueError, match="cannot be empty"):
        fnp.block([[]])


def test_rollaxis_unstack_errors() -> None:
    x = dev(np.zeros((2, 3)))
    with pytest.raises(np.exceptions.AxisError, match="rollaxis: 'start'"):
        fnp.rollaxis(x, 0, 5)
    with pytest.raises(ValueError, match="unstack: input array must be at least 1-d"):
        fnp.unstack(dev(np.array(1.0)))
    assert fnp.unstack(dev(np.zeros((0, 2)))) == ()


_X34 = np.arange(12.0).reshape(3, 4)


@pytest.mark.parametrize("a, obj, values, axis", [
    (np.arange(5.0), 2, 9.0, None), (np.arange(5.0), -1, np.array([7.0, 8.0]), None),
    (np.arange(5.0), 5, 1.0, None), (_X34, 1, np.array([7.0, 8.0, 9.0]), 1),
    (_X34, 0, np.array([[7.0], [8.0], [9.0]]), 1), (_X34, [0, 2, 2], [7.0, 8.0, 9.0], 1),
    (_X34, [3, 0], 5.0, 0), (np.arange(5.0), [4, -1, 0], [1.0, 2.0, 3.0], None),
    (_X34, [1], [[7.0, 8.0, 9.0]], 1), (_X34, 1, [7.0, 8.0, 9.0, 10.0], 0),
])
def test_insert_at_positions_known_only_at_run_time(a, obj, values, axis) -> None:
    # JAX's insert traces integer positions (it raised a ConcretizationError here)
    want = np.insert(a, obj, values, axis=axis)
    got = funcgrad.jit(lambda v, o: fnp.insert(v, o, dev(np.asarray(values)), axis=axis))(
        dev(a), dev(np.asarray(obj)))
    assert _np(got).shape == want.shape
    assert_allclose(got, want)


def test_insert_traced_position_per_example_and_gradient() -> None:
    got = funcgrad.vmap(lambda r, i: fnp.insert(r, i, -1.0))(dev(_X34), dev(np.array([0, 2, 4])))
    assert_allclose(got, np.array([[-1, 0, 1, 2, 3], [4, 5, -1, 6, 7], [8, 9, 10, 11, -1.0]]))
    v = np.arange(1.0, 6.0)
    g = funcgrad.grad(lambda a: fnp.sum(funcgrad.jit(
        lambda a, o: fnp.insert(a, o, a[0] * 3))(a, dev(np.array(2))) ** 2))(dev(v))
    assert_allclose(g, 2 * v + np.array([18.0, 0, 0, 0, 0]))  # JAX's


@pytest.mark.parametrize("a, obj, axis", [(np.arange(5.0), [1, 3], None), (_X34, [0, -1], 1),
                                          (_X34, 1, 0), (_X34, [5, 0], None)])
def test_delete_traced_positions_promised_unique(a, obj, axis) -> None:
    want = np.delete(a, obj, axis=axis)
    got = funcgrad.jit(lambda v, o: fnp.delete(v, o, axis=axis, assume_unique_indices=True))(
        dev(a), dev(np.asarray(obj)))
    assert _np(got).shape == want.shape
    assert_allclose(got, want)
    with pytest.raises(ConcretizationError, match="assume_unique_indices=True"):
        funcgrad.jit(lambda v, o: fnp.delete(v, o, axis=axis))(dev(a), dev(np.asarray(obj)))


# --- functional writes --------------------------------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda x: fnp.fill_diagonal(x, 1.0),
    lambda x: fnp.put(x, [0], 1.0),
    lambda x: fnp.put_along_axis(x, np.array([[0], [1]]), 1.0, 1),
    lambda x: fnp.place(x, np.ones((2, 2), bool), [1.0]),
])
def test_inplace_true_is_refused(call) -> None:
    x = dev(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="inplace=False"):
        call(x)
    assert not _np(x).any()  # and the argument is untouched


def test_place_with_a_mask_known_only_at_run_time() -> None:
    # JAX's place takes a traced mask (under jit, per example under vmap): the k-th set
    # position reads vals[k % len(vals)], as NumPy's cycling
    x = np.arange(12.0).reshape(3, 4)
    vals = np.array([7.0, 1.0, 2.0])
    want = x.copy()
    np.place(want, want > 5, vals)
    got = funcgrad.jit(lambda v, w: fnp.place(v, v > 5, w, inplace=False))(dev(x), dev(vals))
    assert_allclose(got, want)
    rows = funcgrad.vmap(lambda v: fnp.place(v, v > 5, dev(vals[:2]), inplace=False))(dev(x))
    assert_allclose(rows, np.array([[0, 1, 2, 3], [4, 5, 7, 1], [7, 1, 7, 1.0]]))
    ints = funcgrad.jit(lambda v: fnp.place(v, v > 9, 3.7, inplace=False))(dev(np.arange(12)))
    assert _np(ints).dtype == np.int64 and _np(ints).tolist()[-3:] == [9, 3, 3]
    # the gradient reaches the values that were placed (JAX's: [30, 12, 0, 0])
    g = funcgrad.grad(lambda v: fnp.sum(funcgrad.jit(
        lambda v: fnp.place(v, v > 5, v[:2], inplace=False))(v) ** 2))(dev(x[0] + 5))
    assert_allclose(g, np.array([30.0, 12.0, 0.0, 0.0]))
    with pytest.raises(ValueError, match="same size"):
        funcgrad.jit(lambda v: fnp.place(v, v[:2] > 0, 1.0, inplace=False))(dev(x[0]))


def test_put_modes_and_errors() -> None:
    x = dev(np.arange(5.0))
    with pytest.raises(IndexError, match="put: index 7 is out of bounds"):
        fnp.put(x, [7], 1.0, inplace=False)
    with pytest.raises(ValueError, match="mode must be one of"):
        fnp.put(x, [1], 1.0, mode="bogus", inplace=False)
    with pytest.raises(ValueError, match="empty array of values"):
        fnp.put(x, [1], [], inplace=False)
    # Traced indices cannot be checked: they are clipped, as elsewhere in funcgrad.
    got = funcgrad.jit(lambda x, i: fnp.put(x, i, -1.0, inplace=False))(x, dev(np.array([9])))
    assert_allclose(got, np.array([0.0, 1.0, 2.0, 3.0, -1.0]))


def test_fill_diagonal_grad() -> None:
    g = funcgrad.grad(lambda x, v: fnp.sum(fnp.fill_diagonal(x, v, inplace=False) * 2.0),
                      argnums=(0, 1))(dev(np.ones((3, 3))), 5.0)
    assert_allclose(g[0], 2.0 * (1 - np.eye(3)))
    assert_allclose(g[1], np.array(6.0))


def test_choose_modes() -> None:
    a = np.array([0, 3])
    c = [dev(np.array([1.0, 2.0])), dev(np.array([10.0, 20.0]))]
    with pytest.raises(ValueError, match="choose: invalid entry"):
        fnp.choose(a, c)
    got = funcgrad.jit(lambda a, c0, c1: fnp.choose(a, [c0, c1]))(dev(a), *c)
    assert_allclose(got, np.array([1.0, 20.0]))  # traced: clipped
    with pytest.raises(TypeError, match="choose: a must be an integer array"):
        fnp.choose(np.array([0.5]), c)


# --- index arithmetic --------------------------------------------------------------------------


def test_unravel_ravel_errors_and_jit() -> None:
    with pytest.raises(ValueError, match="index 42 is out of bounds for array with size 42"):
        fnp.unravel_index(np.array([42]), (7, 6))
    with pytest.raises(TypeError, match="only int indices"):
        fnp.unravel_index(np.array([1.0]), (7, 6))
    with pytest.raises(ValueError, match="invalid entry in coordinates"):
        fnp.ravel_multi_index((np.array([7]), np.array([0])), (7, 6))
    i = dev(np.array([0, 5, 41]))
    got = funcgrad.jit(lambda i: fnp.unravel_index(i, (7, 6)))(i)
    assert_allclose(got, np.unravel_index(np.array([0, 5, 41]), (7, 6)))
    back = funcgrad.jit(lambda r, c: fnp.ravel_multi_index((r, c), (7, 6)))(*got)
    assert_allclose(back, np.array([0, 5, 41]))


def test_indices_ix_mask_indices() -> None:
    assert_allclose(fnp.indices((0, 2)), np.indices((0, 2)))
    assert_allclose(fnp.ix_(np.array([True, False, True]), [1]),
                    np.ix_(np.array([True, False, True]), [1]))
    with pytest.raises(ValueError, match="Cross index must be 1 dimensional"):
        fnp.ix_(np.zeros((2, 2), int))
    assert_allclose(fnp.mask_indices(3, fnp.triu, 1), np.mask_indices(3, np.triu, 1))
    # NumPy: ValueError "negative dimensions are not allowed" (was a broadcast_in_dim error)
    for sparse in (False, True):
        with pytest.raises(ValueError, match="indices: negative dimensions are not allowed"):
            fnp.indices((-1, 2), sparse=sparse)


# --- products -----------------------------------------------------------------------------------


def test_cross_errors_and_grad() -> None:
    with pytest.raises(ValueError, match="dimension must be 2 or 3"):
        fnp.cross(np.ones(4), np.ones(3))
    with pytest.raises(ValueError, match="zero dimension"):
        fnp.cross(1.0, np.ones(3))
    a, b = dev(np.array([1.0, 2.0, 3.0])), dev(np.array([-1.0, 0.5, 2.0]))
    # d/da sum(a x b) = b x 1 (the gradient of the triple product with ones)
    g = funcgrad.grad(lambda a: fnp.sum(fnp.cross(a, b)))(a)
    assert_allclose(g, np.cross(host(b), np.ones(3)))


def test_matvec_vecmat_errors() -> None:
    with pytest.raises(ValueError, match="matvec: mismatch in its core dimension"):
        fnp.matvec(np.ones((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match="vecmat: need a vector and a matrix"):
        fnp.vecmat(np.ones(2), np.ones(2))
    with pytest.raises(TypeError, match="out= is not supported"):
        fnp.vecdot(np.ones(2), np.ones(2), out=np.zeros(()))


# --- applying functions -------------------------------------------------------------------------


def test_apply_along_axis_traces_once() -> None:
    calls = []

    def f(v):
        calls.append(1)
        return fnp.cumsum(v) * v[0]

    x = dev(np.arange(24.0).reshape(2, 3, 4))
    got = fnp.apply_along_axis(f, 1, x)
    assert len(calls) == 1
    assert_allclose(got, np.apply_along_axis(lambda v: np.cumsum(v) * v[0], 1,
                                             np.arange(24.0).reshape(2, 3, 4)))
    with pytest.raises(ValueError, match="iteration dimensions are 0"):
        fnp.apply_along_axis(f, 0, dev(np.zeros((3, 0))))


def test_apply_along_axis_of_a_value_dependent_function_loops_as_numpy() -> None:
    # a boolean mask or a Python `if` cannot be traced once under vmap (it raised): on
    # concrete input each row is a call, NumPy's loop; a smaller result broadcasts into the
    # first one's shape, as NumPy's buffer assignment does
    x = np.array([[1.0, -2.0, 3.0], [-1.0, -1.0, 5.0]])
    got = fnp.apply_along_axis(lambda r: r[r > 0].mean(), 1, dev(x))
    assert_allclose(got, np.array([2.0, 5.0]))
    got = fnp.apply_along_axis(lambda r: r.max() if r[0] > 0 else r.min(), 0, dev(x))
    assert_allclose(got, np.array([1.0, -2.0, 5.0]))
    assert_allclose(fnp.apply_along_axis(lambda r: r[r > 0], 1, dev(x)),
                    np.array([[1.0, 3.0], [5.0, 5.0]]))
    assert host(fnp.apply_along_axis(lambda r: int(r.sum()), 1, dev(x))).dtype == np.int64
    with pytest.raises(funcgrad.errors.ConcretizationError):  # traced input: no loop
        funcgrad.jit(lambda v: fnp.apply_along_axis(lambda r: r[r > 0].mean(), 1, v))(dev(x))


def test_apply_over_axes_bad_function() -> None:
    with pytest.raises(ValueError, match="correct shape"):
        fnp.apply_over_axes(lambda a, ax: fnp.sum(a), dev(np.ones((2, 3, 4))), [0])


def test_piecewise_errors_and_grad() -> None:
    x = dev(np.array([-1.0, 2.0]))
    with pytest.raises(ValueError, match="either 1 or 2 functions"):
        fnp.piecewise(x, [x > 0], [1.0, 2.0, 3.0])
    g = funcgrad.grad(lambda x: fnp.sum(fnp.piecewise(x, [x < 0], [lambda v: v**2,
                                                                    lambda v: 3 * v])))(x)
    assert_allclose(g, np.array([-2.0, 3.0]))


@pytest.mark.parametrize("jit", [False, True])
def test_piecewise_nd_condition_is_a_list_along_axis_0(jit: bool) -> None:
    # NumPy: an N-d boolean array (N >= 2) is N-1-d conditions along its axis 0, each a
    # boolean index of x's leading axes (expected values from NumPy 2.4)
    z = np.arange(-2.0, 2.0).reshape(2, 2)
    y = np.arange(-2.0, 4.0).reshape(2, 3)
    x3 = np.arange(-4.0, 8.0).reshape(2, 2, 3)

    def run(x, c, fl):
        f = (lambda a, b: fnp.piecewise(a, b, fl))
        return host((funcgrad.jit(f) if jit else f)(dev(x), dev(c)))

    assert run(z, z > 0, [1.0, 2.0]).tolist() == [[0.0, 0.0], [2.0, 2.0]]
    assert run(z, z > 0, [lambda v: v * 10, 2.0]).tolist() == [[0.0, 0.0], [2.0, 2.0]]
    c2 = np.array([[False, True], [True, False]])
    assert run(x3, c2, [2.0, 1.0]).tolist() == [[[1.0] * 3] * 2, [[2.0] * 3] * 2]
    # a 1-d condition stays one condition
    assert run(y[0], y[0] > -1, [lambda v: v * 10]).tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="with 2 condition\\(s\\), either 2 or 3 functions"):
        run(x3, x3 > 0, [lambda v: v * 10])
    with pytest.raises(IndexError, match="along axis 1; size of axis is 2 but size of "
                                         "corresponding boolean axis is 3"):
        run(x3, x3 > 0, [1.0, 2.0])
    with pytest.raises(IndexError, match="along axis 0"):
        run(y, y > 0, [1.0, 2.0])
    # lists of conditions (Python data) index x's leading axes the same way
    got = fnp.piecewise(dev(y), [[True, False]], [lambda v: v * 10, -1.0])
    assert host(got).tolist() == [[-20.0, -10.0, 0.0], [-1.0, -1.0, -1.0]]


def test_piecewise_functions_see_only_their_elements() -> None:
    # NumPy calls each function on x[cond] only (a function failing elsewhere is fine, and a
    # function with no elements is not called); traced, every function sees the whole array
    # but the elements it does not own are replaced, so log of the non-positive part neither
    # warns nor leaks nan into the gradient: JAX 0.10.2's grad is [0, 0, 0.5, 0.25]
    x = dev(np.array([-1.0, 0.0, 2.0, 4.0]))
    seen = []

    def strict_sqrt(v):
        seen.append(_np(v).tolist())
        if np.any(_np(v) <= 0):
            raise ValueError("called on a non-positive element")
        return fnp.sqrt(v)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = fnp.piecewise(x, [x > 0, x > 9], [strict_sqrt, strict_sqrt, -1.0])
        assert _np(got).tolist() == [-1.0, -1.0, np.sqrt(2.0), 2.0]
        assert seen == [[2.0, 4.0]]

        def f(x):
            return fnp.piecewise(x, [x > 0], [fnp.log, 0.0])

        for g in (funcgrad.grad(lambda x: fnp.sum(f(x))),
                  funcgrad.jit(funcgrad.grad(lambda x: fnp.sum(f(x))))):
            assert _np(g(x)).tolist() == [0.0, 0.0, 0.5, 0.25]
        assert_allclose(funcgrad.jit(f)(x), np.array([0.0, 0.0, np.log(2.0), np.log(4.0)]))
        assert_allclose(funcgrad.vmap(f)(x), np.array([0.0, 0.0, np.log(2.0), np.log(4.0)]))
    # an example of vmap that log owns no element of: its backward pass still divides by 0
    with np.errstate(all="ignore"):
        assert _np(funcgrad.vmap(funcgrad.grad(f))(x)).tolist() == [0.0, 0.0, 0.5, 0.25]


def test_trim_zeros_needs_concrete_input() -> None:
    with pytest.raises(ConcretizationError, match="trim_zeros"):
        funcgrad.jit(fnp.trim_zeros)(dev(np.array([0.0, 1.0, 0.0])))
    with pytest.raises(ValueError, match="unexpected character"):
        fnp.trim_zeros(dev(np.array([0.0, 1.0])), "x")
    assert_allclose(fnp.trim_zeros(dev(np.zeros((2, 2)))), np.zeros((0, 0)))


# --- i0 and windows -------------------------------------------------------------------------------


def test_i0_derivative_is_i1() -> None:
    x = np.array([-15.0, -8.5, -2.0, 0.3, 5.0, 7.99, 8.01, 30.0])
    g = funcgrad.vmap(funcgrad.grad(fnp.i0))(dev(x))
    assert_allclose(g, scipy.special.i1(x), rtol=1e-13, atol=0)
    assert_allclose(funcgrad.grad(fnp.i0)(0.0), np.array(0.0))
    with pytest.raises(TypeError, match="complex"):
        fnp.i0(np.array([1j]))


def test_windows_edge_lengths() -> None:
    for name in ("bartlett", "blackman", "hamming", "hanning"):
        for m in (0, 1, 2, 5.0):
            assert_allclose(getattr(fnp, name)(m), getattr(np, name)(m), atol=1e-15)
    for m in (0, 1, 4):
        assert_allclose(fnp.kaiser(m, 2.5), np.kaiser(m, 2.5), rtol=1e-12)
    g = funcgrad.grad(lambda b: fnp.sum(fnp.kaiser(5, b)))(3.0)
    eps = 1e-6
    fd = (np.kaiser(5, 3.0 + eps).sum() - np.kaiser(5, 3.0 - eps).sum()) / (2 * eps)
    assert_allclose(g, np.array(fd), rtol=1e-6)


# --- comparisons ----------------------------------------------------------------------------------


def test_array_equal_types() -> None:
    x = dev(np.array([1.0, np.nan]))
    assert fnp.array_equal(x, x) is False
    assert fnp.array_equal(x, x, equal_nan=True) is True
    assert fnp.array_equal(x, dev(np.ones(3))) is False
    assert fnp.array_equiv(dev(np.ones(2)), dev(np.ones((3, 2)))) is True
    got = funcgrad.jit(lambda a, b: fnp.array_equal(a, b, equal_nan=True))(x, x)
    assert _np(got).dtype == np.bool_ and bool(_np(got))
    got = funcgrad.vmap(lambda a: fnp.array_equiv(a, 1.0))(dev(np.array([[1.0, 1.0],
                                                                          [1.0, 2.0]])))
    assert_allclose(got, np.array([True, False]))
    # different shapes: a plain False even under jit
    out = funcgrad.jit(lambda a, b: fnp.asarray(fnp.array_equal(a, b)))(x, dev(np.ones(3)))
    assert not bool(_np(out))


# --- polynomials ----------------------------------------------------------------------------------


def test_polydiv_under_jit_keeps_structural_length() -> None:
    u, v = np.array([1.0, -3.0, 0.0, 2.0]), np.array([1.0, -1.0])
    q, r = funcgrad.jit(fnp.polydiv)(dev(u), dev(v))
    qn, rn = np.polydiv(u, v)
    assert_allclose(q, qn)
    assert _np(r).shape == (1,)
    assert_allclose(r, rn[-1:], atol=1e-12)


def test_polyadd_polysub_many_polynomials_follow_jax() -> None:
    # Literals from jax.numpy 0.10.2: coefficients run along axis 0, the shorter operand goes
    # into the longer one's last rows (NumPy agrees where both have the same length).
    a2, a1 = dev(np.array([[1, 2]])), dev(np.array([1]))
    assert _np(fnp.polyadd(a2, a1)).tolist() == [[2, 3]]
    assert _np(fnp.polysub(a1, a2)).tolist() == [[0, -1]]
    m = dev(np.array([[1, 2], [3, 4]]))
    assert _np(fnp.polyadd(m, dev(np.array([5])))).tolist() == [[1, 2], [8, 9]]
    assert _np(fnp.polysub(dev(np.array([5])), m)).tolist() == [[-1, -2], [2, 1]]
    g = funcgrad.grad(lambda x: fnp.polyadd(x, dev(np.ones((3, 2)))).sum())(dev(np.ones(2)))
    assert_allclose(g, np.array([2.0, 2.0]))
    with pytest.raises(ValueError, match="polyadd: the shorter polynomial a2"):
        fnp.polyadd(dev(np.array([1, 1])), dev(np.array([[1, 2]])))


def test_polyfit_grad_is_the_pseudo_inverse() -> None:
    x = np.linspace(-1.0, 1.0, 6)
    y = np.cos(x)
    jac = funcgrad.jacrev(lambda y: fnp.polyfit(dev(x), y, 2))(dev(y))
    assert_allclose(jac, np.linalg.pinv(np.vander(x, 3)), rtol=1e-9, atol=1e-12)
    with pytest.raises(TypeError, match="expected x and y to have same length"):
        fnp.polyfit(x, y[:3], 1)
    with pytest.raises(ValueError, match="expected deg >= 0"):
        fnp.polyfit(x, y, -1)


def test_roots_needs_concrete_input_under_jit_and_matches_numpy() -> None:
    p = dev(np.array([1.0, -3.0, 2.0]))
    with pytest.raises(ConcretizationError, match="roots"):
        funcgrad.jit(fnp.roots)(p)
    assert_allclose(fnp.roots(dev(np.array([0.0, 0.0]))), np.roots(np.array([0.0, 0.0])))
    m = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert_allclose(fnp.poly(dev(m)), np.poly(m), rtol=1e-12)


def test_poly_polyval_grads() -> None:
    z = dev(np.array([0.5, -1.5, 2.0]))
    # d/dz_i of prod_j (x - z_j) at x: -prod_{j != i}(x - z_j)
    g = funcgrad.grad(lambda z: fnp.polyval(fnp.poly(z), 3.0))(z)
    zh = host(z)
    want = [-np.prod([3.0 - zh[j] for j in range(3) if j != i]) for i in range(3)]
    assert_allclose(g, np.array(want))
    assert fnp.poly([]) == 1.0
    with pytest.raises(ValueError, match="polyder: Order of derivative must be positive"):
        fnp.polyder([1.0, 2.0], -1)
    with pytest.raises(ValueError, match="polyint: k must be"):
        fnp.polyint([1.0], 3, k=[1.0, 2.0])


def test_polyval_of_a_coefficient_array_broadcasts_as_numpy() -> None:
    # p[i] is the i-th coefficient of every polynomial at once (NumPy, JAX; odeint's dense
    # output evaluates one polynomial per state component this way)
    p = np.arange(6.0).reshape(3, 2)
    assert_allclose(fnp.polyval(dev(p), 2.0), np.polyval(p, 2.0))
    x = np.array([1.0, 2.0])
    assert_allclose(fnp.polyval(dev(p), dev(x)), np.polyval(p, x))
    g = funcgrad.grad(lambda x: fnp.sum(fnp.polyval(dev(p), x)))(dev(x))
    assert_allclose(g, 2 * p[0] * x + p[1])
    # NumPy iterates over p: a 0-d one is a TypeError there, and None or strings too
    with pytest.raises(TypeError, match="at least one axis"):
        fnp.polyval(3.0, 2.0)
    for bad in (None, "abc"):
        with pytest.raises(TypeError):
            fnp.polyval(bad, 2.0)


@pytest.mark.parametrize("a,b", [
    ([0, 0, 1, 2], [0, 3]), ([0, 0], [1, 2]), ([0.0, 0.0], [0.0, 1.0, 2.0]), ([1e-20, 1.0], [1.0]),
    ([1, 2, 3], [9, 5, 1]), ([0.0], [0.0]),
    # an empty factor is the zero polynomial (NumPy's poly1d; JAX too)
    (np.array([1.0, -3.0, 2.0]), np.array([])), (np.array([]), np.array([2, 1])),
    (np.array([]), np.array([])),
])
def test_polymul_trims_leading_zeros_as_numpy(a, b) -> None:
    got = fnp.polymul(dev(np.asarray(a)), dev(np.asarray(b)))
    want = np.polymul(a, b)
    assert_allclose(got, want)


def test_polymul_traced_factors_keep_their_zeros() -> None:
    # (JAX's default trim_leading_zeros=False; under grad the zero coefficient has a derivative)
    a, b = dev(np.array([0.0, 1.0])), dev(np.array([1.0, 2.0]))
    assert_allclose(funcgrad.jit(fnp.polymul)(a, b), np.array([0.0, 1.0, 2.0]))
    assert_allclose(funcgrad.grad(lambda a: fnp.sum(fnp.polymul(a, b) ** 2))(a),
                    np.array([4.0, 10.0]))
    assert_allclose(fnp.polymul(a, b, trim_leading_zeros=False), np.array([0.0, 1.0, 2.0]))
    with pytest.raises(ConcretizationError, match="trim_leading_zeros"):
        funcgrad.jit(lambda a: fnp.polymul(a, b, trim_leading_zeros=True))(a)


def test_poly_of_a_real_matrix_is_real_under_jit():
    # a real matrix's eigenvalues pair up, so its characteristic polynomial is real, as in
    # NumPy, also where the values are unknown (it was complex under jit and vmap)
    m = np.array([[1.0, 2.0], [3.0, 4.0]])
    for got in (fnp.poly(dev(m)), funcgrad.jit(fnp.poly)(dev(m))):
        assert host(got).dtype == np.float64
        assert_allclose(got, np.array([1.0, -5.0, -2.0]))
    got = funcgrad.vmap(fnp.poly)(dev(np.stack([m, np.array([[0.0, -1.0], [1.0, 0.0]])])))
    assert_allclose(got, np.array([[1.0, -5.0, -2.0], [1.0, 0.0, 1.0]]))
