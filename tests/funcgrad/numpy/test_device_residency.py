"""Device arrays with the default device left at "cpu" (how GPU users work: device_put their
data, keep the default): results stay on the arrays' device, Python scalars go anywhere.

The strict pass makes "strict" the default device, which hides a composite that builds a
host intermediate from Python scalars alone; here the default stays "cpu" in both passes.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import DEVICE, assert_allclose, dev, is_device_array

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import sharding
from funcgrad.backend import device_of, to_numpy

X = np.array([1.0, np.nan, 2.5, -np.inf, 0.0, 3.0])
XI = np.array([1, 3, 4, 8])

CASES = {
    "isclose": lambda m, x: m.isclose(x, 2.5),
    "isclose-equal-nan": lambda m, x: m.isclose(x, np.nan, equal_nan=True),
    "isclose-int": lambda m, x: m.isclose(x, 2),
    "logical_and": lambda m, x: m.logical_and(x, 2),
    "logical_xor-first": lambda m, x: m.logical_xor(0.0, x),
    "fmax": lambda m, x: m.fmax(x, 1.5),
    "fmin-first": lambda m, x: m.fmin(np.nan, x),
    "heaviside": lambda m, x: m.heaviside(x, 0.5),
    "heaviside-first": lambda m, x: m.heaviside(0.0, x),
    "float_power": lambda m, x: m.float_power(2, x),
    "float_power-complex": lambda m, x: m.float_power(x + 1j, 2.5),
    "append": lambda m, x: m.append(x, 2),
    "append-list": lambda m, x: m.append([7.0], x),
    "linspace": lambda m, x: m.linspace(x[4], x[5], 4),
    "logspace": lambda m, x: m.logspace(x[4], x[5], 4),
    "geomspace": lambda m, x: m.geomspace(x[0], x[5], 4),
    "histogram": lambda m, x: m.histogram(x[[0, 2, 4, 5]], 3),
    "histogram-range": lambda m, x: m.histogram(x[[0, 2, 4, 5]], 4, range=(-2, 2)),
    "insert-scalar": lambda m, x: m.insert(x, 1, 7.0),
    "insert-list": lambda m, x: m.insert(x, [0, 2, 2], [9.0, 8.0, 7.0]),
    "select-default": lambda m, x: m.select([x > 1], [x]),
    "piecewise-constants": lambda m, x: m.piecewise(x, [x < 0, x > 1], [-1, lambda v: v * 2, 0.5]),
    "polyint-k": lambda m, x: m.polyint(x[[0, 2, 5]], 2, k=[1, 2]),
    "sum-where-list": lambda m, x: m.sum(x, where=[True, False, True, False, True, True]),
    "max-where-list": lambda m, x: m.max(x, where=[True, False, True, False, True, True],
                                         initial=-9.0),
    "average-weights-list": lambda m, x: m.average(x[[0, 2, 5]], weights=[1.0, 2.0, 3.0]),
    "average-a-list": lambda m, x: m.average([1.0, 2.0, 3.0], weights=x[[0, 2, 5]]),
    "cross-list": lambda m, x: m.cross(x[[0, 2, 5]], [1.0, 2.0, 3.0]),
    "interp-lists": lambda m, x: m.interp(x[[0, 2, 4, 5]], [0.0, 1.0, 4.0], [1.0, 2.0, 0.0]),
    "gradient-coordinate-list": lambda m, x: m.gradient(x[[0, 2, 4, 5]], [0.0, 1.0, 3.0, 4.0]),
    "unique-size-fill": lambda m, x: (m.unique(x[[0, 2, 2, 5]], size=5, fill_value=0.0)
                                      if m is fnp else np.array([1.0, 2.5, 3.0, 0.0, 0.0])),
    "union1d-size-fill": lambda m, x: (m.union1d(x[[0, 2]], x[[2, 5]], size=4, fill_value=-1.0)
                                       if m is fnp else np.array([1.0, 2.5, 3.0, -1.0])),
    "setdiff1d-size-fill": lambda m, x: (m.setdiff1d(x[[0, 2, 5]], x[[2]], size=3, fill_value=9.0)
                                         if m is fnp else np.array([1.0, 3.0, 9.0])),
    "concatenate-list": lambda m, x: m.concatenate([x, [1.0, 2.0]]),
    "stack-list": lambda m, x: m.stack([x, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]]),
    "hstack-scalar": lambda m, x: m.hstack([x, 2.0]),
    "column_stack-list": lambda m, x: m.column_stack([x, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]]),
    "select-lists": lambda m, x: m.select([[True, False, True, False, True, False], x > 2],
                                          [x, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]], -1.0),
    "put_along_axis-list": lambda m, x: (
        m.put_along_axis(x, np.array([1, 4]), [7.0, 8.0], axis=0, inplace=False)
        if m is fnp else np.array([1.0, 7.0, 2.5, -np.inf, 8.0, 3.0])),
    "quantile-weights-list": lambda m, x: m.quantile(x[[0, 2, 4, 5]], 0.3, method="inverted_cdf",
                                                     weights=[1.0, 2.0, 1.0, 1.0]),
    "polyfit-list-x": lambda m, x: m.polyfit([0.0, 1.0, 2.0, 3.0], x[[0, 2, 4, 5]], 1),
    "meshgrid-list": lambda m, x: m.meshgrid(x, [1.0, 2.0]),
    "polyadd": lambda m, x: m.polyadd(x[[0, 2]], 2),
    "polysub-first": lambda m, x: m.polysub(2, x[[0, 2]]),
    "polymul": lambda m, x: m.polymul(x[[0, 2]], 2.0),
    "polydiv": lambda m, x: m.polydiv(x[[0, 2, 5]], 2.0),
    "polyval": lambda m, x: m.polyval(x[[0, 2, 5]], 2),
    "polyval-list": lambda m, x: m.polyval([1.0, 2.0], x),
    # index helpers of Python lists: host index arrays, or lists following the device arrays
    "ix_-lists": lambda m, x: x.reshape(2, 3)[m.ix_([1, 0], [True, False, True])],
    "ix_-mixed": lambda m, x: x.reshape(2, 3)[m.ix_(x[[4, 0]].astype(int), [2, 0])],
    "ediff1d-scalar-ary": lambda m, x: m.ediff1d(2.0, to_end=x),
    "ediff1d-list-ary": lambda m, x: m.ediff1d([1.0, 4.0], to_begin=x[[0, 2]]),
    "choose-list-choice": lambda m, x: m.choose([0, 1, 0, 1, 0, 1], [x, [1.0] * 6]),
    "choose-scalar-choice": lambda m, x: m.choose([0, 1, 0, 1, 0, 1], [x, 10.0]),
    "ravel_multi_index-list": lambda m, x: m.ravel_multi_index(
        ([0, 1], x[[0, 4]].astype(int)), (2, 3)),
    "fill_diagonal-list": lambda m, x: (
        m.fill_diagonal(x.reshape(2, 3), [7.0, 8.0], inplace=False)
        if m is fnp else np.array([[7.0, np.nan, 2.5], [-np.inf, 8.0, 3.0]])),
    "put-lists": lambda m, x: (m.put(x, [0, 2], [9.0, 8.0], inplace=False) if m is fnp
                               else np.array([9.0, np.nan, 8.0, -np.inf, 0.0, 3.0])),
    "place-lists": lambda m, x: (
        m.place(x, [True, False, True, False, False, False], [9.0], inplace=False)
        if m is fnp else np.array([9.0, np.nan, 9.0, -np.inf, 0.0, 3.0])),
    # Python data beside a device array (these built host arrays that met it)
    "searchsorted-list-a": lambda m, x: m.searchsorted([0.0, 1.0, 2.0], x),
    "trapezoid-list-y": lambda m, x: m.trapezoid([0.0, 1.0, 3.0], x[[0, 2, 5]]),
    "lexsort-list-key": lambda m, x: m.lexsort(([1, 0, 1, 0, 1, 0], x)),
    "add.outer-list": lambda m, x: m.add.outer([1.0, 2.0], x),
    "polyfit-list-w": lambda m, x: m.polyfit(x[[0, 2, 5]], [0.0, 1.0, 2.0], 1,
                                             w=[1.0, 2.0, 1.0]),
    "histogram2d-list": lambda m, x: m.histogram2d(x[[0, 2, 5]], [0.0, 1.0, 2.0], 2)[0],
    "choose-all-scalar-choices": lambda m, x: m.choose(x[[0, 4]].astype(int), [1.0, 2.0]),
    "r_-scalar": lambda m, x: m.r_[x, 1.0],
    "c_-list": lambda m, x: m.c_[x, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]],
    "logspace-traced-base": lambda m, x: m.logspace(0, 2, 3, base=x[2]),
    "argsort-descending": lambda m, x: (m.argsort(x[[0, 2, 5]], descending=True) if m is fnp
                                        else np.array([2, 1, 0])),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_device_arrays_with_cpu_default(name: str, jit: bool) -> None:
    f = CASES[name]
    want = f(np, X)
    x = funcgrad.device_put(X, "strict")
    with funcgrad.default_device("cpu"):
        got = (funcgrad.jit(lambda v: f(fnp, v)) if jit else lambda v: f(fnp, v))(x)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert device_of(g) == "strict"
        assert to_numpy(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(to_numpy(g), np.asarray(w), rtol=1e-12, equal_nan=True)


def test_array_equiv_with_cpu_default() -> None:
    x = funcgrad.device_put(np.array([1.0, 2.0]), "strict")
    with funcgrad.default_device("cpu"):
        assert fnp.array_equiv(x, [1.0, 2.0])
        assert not fnp.array_equiv(x, 2)
        assert fnp.array_equal(x, [1.0, 2.0])  # (the list was a host array meeting x)
        assert not fnp.array_equal([1.0, 3.0], x)


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("spacing", [(), (2,), (0.5,)])
def test_gradient_of_int_device_array(jit: bool, spacing: tuple) -> None:
    x = funcgrad.device_put(XI, "strict")
    with funcgrad.default_device("cpu"):
        f = (lambda v: fnp.gradient(v, *spacing, edge_order=2))
        got = (funcgrad.jit(f) if jit else f)(x)
    assert device_of(got) == "strict"
    want = np.gradient(XI, *spacing, edge_order=2)
    assert to_numpy(got).dtype == want.dtype
    np.testing.assert_allclose(to_numpy(got), want, rtol=1e-12)


GRAD_CASES = {
    # a Python bound met the traced one on the host (linspace's cast of 0.0 alone)
    "logspace": (lambda v: fnp.logspace(0.0, v[0], 4).sum(), lambda v: np.log(10.0) * (
        np.logspace(0.0, v[0], 4) * np.linspace(0.0, 1.0, 4)).sum()),
    "pad-linear_ramp": (lambda v: fnp.pad(v, (2, 3), mode="linear_ramp").sum(),
                        lambda v: np.array([1.5, 1.0, 1.0, 1.0, 1.0, 2.0])),
    # copysign's derivative read a Python y's sign on the host
    "copysign": (lambda v: fnp.copysign(v, -1.0).sum(), lambda v: -np.sign(v)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
@pytest.mark.parametrize("jit", [False, True])
def test_gradients_of_device_arrays_with_cpu_default(name: str, jit: bool) -> None:
    f, want = GRAD_CASES[name]
    v = np.array([1.5, -2.0, 0.5, 3.0, 1.0, 2.0])
    g = funcgrad.grad(f)
    with funcgrad.default_device("cpu"):
        got = (funcgrad.jit(g) if jit else g)(funcgrad.device_put(v, "strict"))
    assert device_of(got) == "strict"
    expected = np.zeros_like(v)
    w = want(v)
    if name == "logspace":
        expected[0] = w
    else:
        expected = w
    np.testing.assert_allclose(to_numpy(got), expected, rtol=1e-12)


def test_traced_operator_with_a_list() -> None:
    # (eagerly, a device array's own operator refuses a list, as CuPy's does)
    x = funcgrad.device_put(X, "strict")
    with funcgrad.default_device("cpu"):
        got = funcgrad.jit(lambda v: v * [1.0, 2.0, 3.0, 4.0, 5.0, 6.0] + [1.0] * 6)(x)
    assert device_of(got) == "strict"
    np.testing.assert_allclose(to_numpy(got), X * np.arange(1.0, 7.0) + 1.0)


@pytest.mark.parametrize("make", [
    lambda **kw: fnp.zeros(2, **kw), lambda **kw: fnp.ones(2, **kw),
    lambda **kw: fnp.full(2, 3.0, **kw), lambda **kw: fnp.empty(2, **kw),
    lambda **kw: fnp.arange(3, **kw), lambda **kw: fnp.asarray([1.0], **kw),
    lambda **kw: fnp.array([1.0], **kw), lambda **kw: fnp.zeros_like(np.ones(2), **kw),
    lambda **kw: fnp.ones_like(np.ones(2), **kw), lambda **kw: fnp.full_like(np.ones(2), 2, **kw),
])
def test_creation_takes_a_sharding_as_device_and_jaxs_out_sharding(make):
    # JAX: device= may be a Sharding, and out_sharding= names the result's sharding (both a
    # ValueError / TypeError here before)
    target = sharding.SingleDeviceSharding(DEVICE)
    named = sharding.NamedSharding(sharding.Mesh([DEVICE], ("x",)), sharding.PartitionSpec())
    for kw in (dict(device=target), dict(out_sharding=target), dict(device=named)):
        assert is_device_array(make(**kw))
    with pytest.raises(ValueError, match="not both"):
        make(device=target, out_sharding=target)


def test_zero_d_numpy_array_operands_of_traced_arrays():
    # documented (docs/numpy.md): NumPy hands `numpy.array(2.0) * x` to the traced array with
    # the scalar 2.0; on the right, the host array is uncommitted and moves to x's device (as
    # in JAX), so both orders work on every device
    x = dev(np.array([1.0, 2.0]))
    left = funcgrad.jit(lambda v: np.array(2.0) * v)(x)
    assert_allclose(left, np.array([2.0, 4.0]))
    right = funcgrad.jit(lambda v: v * np.array(2.0))
    assert_allclose(right(x), np.array([2.0, 4.0]))
