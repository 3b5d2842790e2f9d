"""lax.fori_loop's bounds and counter as JAX 0.10.2 (x64) has them: static bounds are taken as
``int(bound)`` (floats truncated) and the counter is a weak int64; traced bounds keep their
dtype (float ones too), and bounds of different types (but a Python int with a signed integer) are JAX's TypeError."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dev, host

import funcgrad
from funcgrad import lax


def test_static_float_bounds_are_truncated_as_jax():
    seen = []

    def body(i, c):
        seen.append(funcgrad.numpy.result_type(i))
        return c + i

    # JAX: fori_loop(0., 3., ...) -> 3.0; fori_loop(0., 2.5, ...) -> 1.0 (int(2.5) == 2)
    assert float(lax.fori_loop(0.0, 3.0, body, 0.0)) == 3.0
    assert float(lax.fori_loop(0.0, 2.5, body, 0.0)) == 1.0
    assert float(lax.fori_loop(np.float32(1), np.float32(4), body, 0.0)) == 6.0
    assert all(d == np.int64 for d in seen)


@pytest.mark.parametrize("lower, upper, names", [
    (0.0, 3, "float64 and int64"), (0, 2.5, "int64 and float64"),
    (np.float32(1), np.float64(4), "float32 and float64"),
    (np.int16(0), np.int32(3), "int16 and int32"), (np.uint32(0), 3, "uint32 and int64"),
])
def test_bounds_of_different_types_are_refused_as_jax(lower, upper, names):
    # JAX 0.10.2 (x64) raises this TypeError for each pair, static or traced; a weak Python
    # int next to a signed integer of another width is the one mix it allows
    with pytest.raises(TypeError, match=f"must have equal types, got {names}"):
        lax.fori_loop(lower, upper, lambda i, c: c + i, 0.0)
    with pytest.raises(TypeError, match=f"must have equal types, got {names}"):
        funcgrad.jit(lambda n: lax.fori_loop(lower, n, lambda i, c: c + i, 0.0))(upper)
    assert float(lax.fori_loop(np.int16(0), 3, lambda i, c: c + i, 0.0)) == 3.0


def test_static_numpy_bounds_give_a_weak_int64_counter():
    # JAX: i is a weak int64, so a weak int carry becomes int64 and an int32 carry stays int32
    out = lax.fori_loop(np.int32(0), 3, lambda i, c: c + i, 0)
    assert host(out).dtype == np.int64 and int(out) == 3
    out = lax.fori_loop(np.int32(0), np.int32(3), lambda i, c: c + i, np.int32(0))
    assert host(out).dtype == np.int32 and int(out) == 3
    out = lax.fori_loop(0, dev(np.array(3, np.int32)), lambda i, c: c + i, dev(np.zeros(2)))
    np.testing.assert_array_equal(host(out), [3.0, 3.0])


def test_traced_bounds_keep_their_dtype_float_too():
    f = funcgrad.jit(lambda a, b: lax.fori_loop(a, b, lambda i, c: c + i, 0.0))
    assert float(f(0.0, 2.5)) == 3.0  # JAX: i = 0., 1., 2. (2. < 2.5)
    g = funcgrad.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c + i, np.int32(0)))
    assert host(g(np.int32(4))).dtype == np.int32 and int(g(np.int32(4))) == 6
    with pytest.raises(TypeError, match="must have equal types, got int64 and float64"):
        funcgrad.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c + i, 0.0))(2.5)
    with pytest.raises(TypeError, match="integer scalar"):
        funcgrad.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c, 0.0))(dev(np.ones(2)))


def test_fori_loop_derivative_with_truncated_bounds():
    # fori_loop(0., 3.9, c*x + i, x) runs i = 0, 1, 2: x**4 + x + 2, derivative 4x**3 + 1
    g = funcgrad.grad(lambda x: lax.fori_loop(0.0, 3.9, lambda i, c: c * x + i, x))(2.0)
    assert float(g) == 33.0


def test_scan_split_transpose_keyword():
    # JAX's experimental _split_transpose only changes the transposed loop's memory layout:
    # JAX 0.10.2 gives (3.0, [0.0, 0.0, 1.0]) with it as without it, and the same gradient
    xs = dev(np.arange(3.0))
    for flag in (False, True):
        carry, ys = lax.scan(lambda c, x: (c + x, c), 0.0, xs, _split_transpose=flag)
        assert float(carry) == 3.0 and host(ys).tolist() == [0.0, 0.0, 1.0]
        g = funcgrad.grad(lambda v, flag=flag: lax.scan(lambda c, x: (c * x, c), 1.0, v,
                                                        _split_transpose=flag)[0])(xs + 1.0)
        assert host(g).tolist() == [6.0, 3.0, 2.0]
