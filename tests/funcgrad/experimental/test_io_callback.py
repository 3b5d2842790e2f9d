"""funcgrad.experimental.io_callback, as jax.experimental.io_callback (JAX 0.10.2's
behaviour, checked by hand): never dropped or merged under jit, program order, per-example
calls under vmap (ordered ones refused), no derivative."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_close, dev, is_device_array

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.experimental import io_callback

F64 = funcgrad.ShapeDtypeStruct((), np.float64)


def recorder():
    log = []

    def record(x):
        log.append(np.asarray(x).tolist())
        return np.float64(len(log))

    return log, record


def test_eager_and_jit_results_and_order():
    log, record = recorder()
    assert float(io_callback(record, F64, dev(np.array(1.0)))) == 1.0

    @funcgrad.jit
    def f(x):
        a = io_callback(record, F64, x)
        b = io_callback(record, F64, x)  # equal arguments: still two calls (no CSE)
        return a + b

    out = f(dev(np.array(2.0)))
    assert_close(out, np.asarray(2.0 + 3.0))
    assert log == [1.0, 2.0, 2.0]
    assert is_device_array(out)


def test_unused_result_is_not_dropped():
    log, record = recorder()
    f = funcgrad.jit(lambda x: (io_callback(record, F64, x), x * 2)[1])
    assert_close(f(dev(np.array(3.0))), np.asarray(6.0))
    assert log == [3.0]
    # and with no result at all, as JAX's result_shape_dtypes=None
    seen = []
    funcgrad.jit(lambda x: (io_callback(lambda v: seen.append(float(v)), None, x), x)[1])(
        dev(np.array(4.0)))
    assert seen == [4.0]


def test_in_a_loop_each_iteration_in_order():
    log, record = recorder()

    def body(i, acc):
        return acc + io_callback(record, F64, i)

    total = funcgrad.jit(lambda: lax.fori_loop(0, 4, body, 0.0))()
    assert log == [0, 1, 2, 3]
    assert_close(total, np.asarray(1.0 + 2 + 3 + 4))


def test_vmap_calls_once_per_example_and_refuses_ordered():
    shapes = []

    def double(v):
        shapes.append(np.shape(v))
        return v * 2

    xs = dev(np.array([1.0, 2.0, 3.0]))
    out = funcgrad.vmap(lambda x: io_callback(double, F64, x))(xs)
    assert_close(out, np.array([2.0, 4.0, 6.0]))
    assert shapes == [(), (), ()]
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback"):
        funcgrad.vmap(lambda x: io_callback(double, F64, x, ordered=True))(xs)


def test_no_derivative_but_constants_are_fine():
    def g(x):
        return io_callback(lambda v: v, F64, x) * x

    with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
        funcgrad.grad(g)(dev(np.array(1.0)))
    # a callback on values that are not differentiated is a constant of the derivative
    log, record = recorder()
    grad = funcgrad.grad(lambda x: io_callback(record, F64, dev(np.array(5.0))) * x ** 2)
    assert_close(grad(dev(np.array(3.0))), np.asarray(6.0))
    assert log == [5.0]


def test_bad_results_name_io_callback():
    with pytest.raises(ValueError, match="io_callback: .* shape"):
        io_callback(lambda v: np.ones(2), F64, dev(np.array(1.0)))
    with pytest.raises(TypeError, match="io_callback: result_shape_dtypes"):
        io_callback(lambda v: v, [1.0], fnp.ones(()))
