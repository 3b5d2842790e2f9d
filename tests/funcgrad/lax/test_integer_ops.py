"""``lax``'s integer operations and float-to-integer casts as JAX (XLA) defines them, where
NumPy's are undefined or differ: shift counts past the width, arithmetic shifts of unsigned
types, saturating casts, ``population_count``'s dtype and ``clz``. Expected values were
recorded from JAX 0.10.2 (x64)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dev, host

import funcgrad
from funcgrad import lax


def _both(f, *args):
    """``f`` eagerly and under jit: both must agree with the recorded value."""
    eager, jitted = host(f(*map(dev, args))), host(funcgrad.jit(f)(*map(dev, args)))
    assert eager.dtype == jitted.dtype and eager.tolist() == jitted.tolist()
    return eager


def test_shift_counts_outside_the_width() -> None:
    i32 = np.int32
    got = _both(lax.shift_right_logical, np.array([7, -7, 7, -8], i32),
                np.array([-2, 2, 32, 40], i32))
    assert got.tolist() == [0, 1073741822, 0, 0]
    got = _both(lax.shift_right_arithmetic, np.array([7, -7, -7, -8], i32),
                np.array([-2, -2, 32, 1], i32))
    assert got.tolist() == [0, -1, -1, -4]
    got = _both(lax.shift_left, np.array([7, -7, 1], i32), np.array([-2, 32, 31], i32))
    assert got.tolist() == [0, 0, -2147483648]


def test_arithmetic_shift_reads_unsigned_bits_as_signed() -> None:
    got = _both(lax.shift_right_arithmetic, np.array([7, 200, 3, 1, 255], np.uint8),
                np.array([2, 3, 0, 8, 9], np.uint8))
    assert got.dtype == np.uint8 and got.tolist() == [1, 249, 3, 0, 255]


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64])
def test_population_count_and_clz_keep_the_dtype(dtype) -> None:
    info = np.iinfo(dtype)
    x = np.array([0, 1, info.max, info.min, 5], dtype)
    bits = 8 * np.dtype(dtype).itemsize
    count = _both(lax.population_count, x)
    assert count.dtype == dtype
    signed = info.min < 0
    # max: all bits but the sign bit set (all bits, unsigned); min: only the sign bit (0).
    assert count.tolist() == [0, 1, bits - signed, int(signed), 2]
    lead = _both(lax.clz, x)
    assert lead.dtype == dtype
    assert lead.tolist() == [bits, bits - 1, int(signed), 0 if signed else bits, bits - 3]


def test_population_count_of_negative_values_counts_twos_complement_bits() -> None:
    # jax.lax.population_count([-1, -2, 7] as int32) and ([-1, -128] as int8)
    assert _both(lax.population_count, np.array([-1, -2, 7], np.int32)).tolist() == [32, 31, 3]
    assert _both(lax.population_count, np.array([-1, -128], np.int8)).tolist() == [8, 1]


def test_clz_recorded_and_batched() -> None:
    # jax.lax.clz([0, 1, -1, 255, 2**30] as int32) and ([0, 1, 255] as uint8)
    assert _both(lax.clz, np.array([0, 1, -1, 255, 2 ** 30], np.int32)).tolist() == \
        [32, 31, 0, 24, 1]
    assert _both(lax.clz, np.array([0, 1, 255], np.uint8)).tolist() == [8, 7, 0]
    got = funcgrad.vmap(lax.clz)(dev(np.array([[1, 2], [3, 4]], np.int32)))
    assert host(got).tolist() == [[31, 30], [30, 29]]
    with pytest.raises(TypeError, match="clz"):
        lax.clz(dev(np.array([1.0])))


_FLOATS = np.array([-2.5, -0.5, 0.0, 2.5, 3.7, np.inf, -np.inf, np.nan, 1e300, 2.0 ** 31,
                    -2.0 ** 31 - 0.5, 255.9, 256.0, -1.0])

# jax.lax.convert_element_type(_FLOATS, dtype)
_SATURATED = {
    np.int32: [-2, 0, 0, 2, 3, 2147483647, -2147483648, 0, 2147483647, 2147483647,
               -2147483648, 255, 256, -1],
    np.int8: [-2, 0, 0, 2, 3, 127, -128, 0, 127, 127, -128, 127, 127, -1],
    np.uint8: [0, 0, 0, 2, 3, 255, 0, 0, 255, 255, 0, 255, 255, 0],
    np.uint32: [0, 0, 0, 2, 3, 4294967295, 0, 0, 4294967295, 2147483648, 0, 255, 256, 0],
    np.int64: [-2, 0, 0, 2, 3, 9223372036854775807, -9223372036854775808, 0,
               9223372036854775807, 2147483648, -2147483648, 255, 256, -1],
    np.uint64: [0, 0, 0, 2, 3, 18446744073709551615, 0, 0, 18446744073709551615, 2147483648,
                0, 255, 256, 0],
}


@pytest.mark.parametrize("dtype", list(_SATURATED))
@pytest.mark.parametrize("src", [np.float64, np.complex128])
def test_float_to_int_saturates(dtype, src) -> None:
    got = _both(lambda x: lax.convert_element_type(x, dtype), _FLOATS.astype(src))
    assert got.dtype == dtype and got.tolist() == _SATURATED[dtype]


def test_float16_and_float32_to_int_saturate() -> None:
    x16 = np.array([np.inf, 60000, -np.inf, np.nan], np.float16)
    got = _both(lambda x: lax.convert_element_type(x, np.int64), x16)
    assert got.tolist() == [9223372036854775807, 60000, -9223372036854775808, 0]
    got = _both(lambda x: lax.convert_element_type(x, np.int32),
                np.array([3e9, -3e9, 2.0 ** 31, np.nan], np.float32))
    assert got.tolist() == [2147483647, -2147483648, 2147483647, 0]


def test_integer_casts_wrap_and_gradients_are_zero() -> None:
    got = _both(lambda x: lax.convert_element_type(x, np.uint8), np.array([300, -1], np.int32))
    assert got.tolist() == [44, 255]
    g = funcgrad.grad(lambda x: lax.convert_element_type(
        lax.convert_element_type(x, np.int32), np.float64))(2.7)
    assert float(g) == 0.0


def test_integer_division_by_zero_is_xlas() -> None:
    # JAX 0.10.2: div(x, 0) == -1 (all bits set), rem(x, 0) == x; C truncation otherwise
    x = dev(np.array([5, 0, -5, 7, -7], np.int64))
    y = dev(np.array([0, 0, 0, 2, 2], np.int64))
    assert host(lax.div(x, y)).tolist() == [-1, -1, -1, 3, -3]
    assert host(lax.rem(x, y)).tolist() == [5, 0, -5, 1, -1]
    u = dev(np.array([5, 0, 251], np.uint8))
    z = dev(np.zeros(3, np.uint8))
    assert host(lax.div(u, z)).tolist() == [255, 255, 255]
    assert host(lax.rem(u, z)).tolist() == [5, 0, 251]
    jitted = funcgrad.jit(lambda a, b: (lax.div(a, b), lax.rem(a, b)))(x, y)
    assert [host(v).tolist() for v in jitted] == [[-1, -1, -1, 3, -3], [5, 0, -5, 1, -1]]
    out = funcgrad.vmap(lax.div)(dev(np.array([5, 6], np.int32)), dev(np.array([0, 4], np.int32)))
    assert host(out).tolist() == [-1, 1] and host(out).dtype == np.int32
    # broadcasting a scalar divisor, and a Python int dividend
    assert host(lax.rem(dev(np.array([7, -7], np.int32)), 0)).tolist() == [7, -7]
    assert host(lax.div(7, dev(np.array([0, 2])))).tolist() == [-1, 3]


def test_python_ints_outside_the_operands_dtype_are_refused_not_wrapped():
    # lax.pad(uint8, 300) padded with 44 and lax.select_n(p, uint8, 300) chose 44: the int
    # wrapped. JAX 0.10.2 refuses a Python int beside a uint8 array in lax altogether;
    # funcgrad converts one only when it is a value of the dtype.
    u = dev(np.arange(4, dtype=np.uint8))
    for bad in (lambda: lax.pad(u, 300, [(1, 1, 0)]), lambda: lax.pad(u, -1, [(1, 0, 0)]),
                lambda: lax.select_n(u > 1, u, 300), lambda: lax.add(u, 256),
                lambda: lax.max(dev(np.arange(3, dtype=np.int8)), 1000)):
        with pytest.raises(funcgrad.errors.DTypeError, match="out of the range"):
            bad()
    assert host(lax.pad(u, 255, [(1, 0, 0)])).tolist() == [255, 0, 1, 2, 3]
