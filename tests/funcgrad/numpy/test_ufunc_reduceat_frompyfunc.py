"""ufunc.reduceat on funcgrad.numpy's two-operand functions against NumPy's, and
frompyfunc / ufunc (jnp.frompyfunc's user ufuncs: call, outer, reduce, accumulate, reduceat,
at) against values JAX 0.10 gives, under jit, vmap and grad."""

from __future__ import annotations

import functools
import operator

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp

IDX = np.array([0, 4, 1, 5, 7, 7])  # a decreasing pair and a repeat: NumPy's special cases


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum", "subtract",
                                  "hypot", "logical_or", "bitwise_or", "power", "divide"])
def test_reduceat_as_numpy(name):
    if name in ("hypot", "power", "divide"):
        x = np.arange(1.0, 9.0) / 3
    elif name == "logical_or":
        x = np.arange(8) % 3 == 0
    else:
        x = np.arange(8, dtype=np.int8)
    ref = getattr(np, name)
    want = ref.reduceat(x, IDX)
    # NumPy's definition, each segment folded left with the ufunc's call (NumPy 2.5.2's own
    # power.reduceat gives x[i] ** x[j - 1] for a segment: its reduce loop is wrong there)
    ends = [*IDX[1:], len(x)]
    folds = [functools.reduce(ref, x[i:j]) if i < j else x[i] for i, j in zip(IDX, ends)]
    want = np.array(folds, dtype=want.dtype)
    got = host(getattr(fnp, name).reduceat(dev(x), dev(IDX)))
    assert got.dtype == want.dtype  # add of int8 gives int64, as NumPy's
    assert_allclose(got, want)


def test_reduceat_axes_dtype_errors():
    m = np.arange(24.0).reshape(2, 3, 4)
    for axis in (0, 1, 2, -1):
        idx = np.array([1, 0]) if axis == 0 else np.array([0, 2, 1])
        assert_allclose(fnp.multiply.reduceat(dev(m), dev(idx), axis=axis),
                        np.multiply.reduceat(m, idx, axis=axis))
    a = np.arange(8, dtype=np.int8)
    got = host(fnp.add.reduceat(dev(a), dev(np.array([0, 4])), dtype=np.float32))
    assert got.dtype == np.float32 and got.tolist() == [6.0, 22.0]
    assert host(fnp.add.reduceat(dev(a), dev(np.array([], np.int64)))).shape == (0,)
    with pytest.raises(IndexError, match="index 8 out-of-bounds in add.reduceat"):
        fnp.add.reduceat(dev(a), dev(np.array([0, 8])))
    with pytest.raises(ValueError, match="single integer axis"):
        fnp.add.reduceat(dev(a), dev(np.array([0])), axis=None)
    with pytest.raises(ValueError, match="one-dimensional"):
        fnp.add.reduceat(dev(a), dev(np.array([[0]])))


def test_reduceat_transformations():
    x = np.arange(1.0, 7.0)
    idx = np.array([0, 3])
    g = funcgrad.grad(lambda v: fnp.multiply.reduceat(v, dev(idx)).sum())(dev(x))
    assert_allclose(g, np.array([6.0, 3.0, 2.0, 30.0, 24.0, 20.0]))
    run = funcgrad.jit(lambda v, i: fnp.add.reduceat(v, i))  # traced indices
    assert_allclose(run(dev(x), dev(np.array([0, 2, 5]))), np.add.reduceat(x, [0, 2, 5]))
    got = funcgrad.vmap(lambda i: fnp.add.reduceat(dev(x), i))(dev(np.array([[0, 2], [1, 3]])))
    assert_allclose(got, np.stack([np.add.reduceat(x, [0, 2]), np.add.reduceat(x, [1, 3])]))
    # NumPy's own method on a traced array comes here too
    got = funcgrad.jit(lambda v: np.add.reduceat(v, np.array([0, 2])))(dev(x))
    assert_allclose(got, np.array([3.0, 18.0]))


AFFINE = fnp.frompyfunc(lambda a, b: a * b + 1, 2, 1)  # no identity, not reorderable


def test_frompyfunc_methods_as_jax():
    # Values from jax.numpy.frompyfunc(lambda a, b: a * b + 1, 2, 1) (JAX 0.10).
    assert_allclose(AFFINE.reduceat(dev(np.arange(8.0)), dev(np.array([0, 4, 1, 5]))),
                    np.array([10.0, 4.0, 41.0, 218.0]))
    assert float(AFFINE.reduce(dev(np.arange(1.0, 5.0)))) == 41.0
    assert_allclose(AFFINE.accumulate(dev(np.arange(1.0, 5.0))), np.array([1.0, 3.0, 10.0, 41.0]))
    m = np.arange(6.0).reshape(2, 3)
    assert float(AFFINE.reduce(dev(m), axis=None)) == 206.0
    assert_allclose(AFFINE.reduce(dev(m), axis=1, keepdims=True, initial=1.0), np.array([[5.0], [86.0]]))
    assert_allclose(AFFINE.outer(dev(np.arange(2.0)), dev(np.arange(3.0))),
                    np.array([[1.0, 1.0, 1.0], [1.0, 2.0, 3.0]]))
    got = AFFINE.at(dev(np.zeros((3, 2))), (dev(np.array([0, 0])), 1), dev(np.array([2.0, 3.0])),
                    inplace=False)
    assert_allclose(got, np.array([[0.0, 4.0], [0.0, 0.0], [0.0, 0.0]]))
    got = AFFINE.at(dev(np.zeros((3, 2))), dev(np.array([0, 0])), dev(np.array([2.0, 3.0])),
                    inplace=False)
    assert_allclose(got, np.array([[4.0, 4.0], [0.0, 0.0], [0.0, 0.0]]))
    assert host(AFFINE.reduce(dev(np.arange(4, dtype=np.int32)))).dtype == np.int32
    assert_allclose(AFFINE.accumulate(dev(np.arange(4, dtype=np.int32)), dtype=np.float32),
                    np.array([0.0, 1.0, 3.0, 10.0], np.float32))
    with_identity = fnp.frompyfunc(lambda a, b: a * b + 1, 2, 1, identity=1.0)
    assert float(with_identity.reduce(dev(np.arange(6.0)), where=dev(np.arange(6) > 2))) == 86.0
    assert_allclose(with_identity.reduce(dev(np.zeros((0, 3)))), np.array([1.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="specify 'initial'"):
        AFFINE.reduce(dev(np.arange(6.0)), where=dev(np.arange(6) > 2))
    with pytest.raises(ValueError, match="no identity"):
        AFFINE.reduce(dev(np.zeros(0)))
    with pytest.raises(ValueError, match="inplace=False"):
        AFFINE.at(dev(np.zeros(3)), 0, 1.0)


def test_frompyfunc_call_unary_multi_output_attributes():
    inc = fnp.frompyfunc(lambda a: a + 1, 1, 1)
    assert host(inc(dev(np.arange(3)))).tolist() == [1, 2, 3]
    assert host(inc.at(dev(np.zeros(3)), dev(np.array([0, 0, 2])), inplace=False)).tolist() == [
        2.0, 0.0, 1.0]
    both = fnp.frompyfunc(lambda a, b: (a + b, a - b), 2, 2)
    s, d = both(dev(np.arange(3.0)), 1.0)
    assert host(s).tolist() == [1.0, 2.0, 3.0] and host(d).tolist() == [-1.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="single value"):
        both.reduce(dev(np.arange(3.0)))
    with pytest.raises(ValueError, match="binary"):
        inc.outer(dev(np.arange(3.0)), dev(np.arange(3.0)))
    with pytest.raises(TypeError, match="takes 2 argument"):
        AFFINE(dev(np.arange(3.0)))
    add = fnp.frompyfunc(operator.add, nin=2, nout=1, identity=0)
    assert (add.nin, add.nout, add.nargs, add.identity, add.__name__) == (2, 1, 2, 0, "add")
    assert add == fnp.frompyfunc(operator.add, nin=2, nout=1, identity=0)
    assert isinstance(add, fnp.ufunc)
    assert host(add.at(dev(np.arange(4)), 1, 10, inplace=False)).tolist() == [0, 11, 2, 3]


def test_frompyfunc_transformations():
    x = np.arange(1.0, 5.0)
    assert_allclose(funcgrad.grad(AFFINE.reduce)(dev(x)), np.array([24.0, 12.0, 12.0, 10.0]))
    assert_allclose(funcgrad.jit(AFFINE.accumulate)(dev(x)), np.array([1.0, 3.0, 10.0, 41.0]))
    assert_allclose(funcgrad.vmap(AFFINE.reduce)(dev(np.arange(6.0).reshape(2, 3))),
                    np.array([3.0, 66.0]))
