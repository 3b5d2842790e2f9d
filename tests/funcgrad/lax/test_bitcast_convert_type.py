"""``lax.bitcast_convert_type``: NumPy's ``view`` with JAX's shape rule for width changes, no
derivative (zero tangents, as JAX), vmap and jit."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dev, host

import funcgrad
from funcgrad import lax
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.test_util import check_jit, check_vmap


@pytest.mark.parametrize("old, new", [
    ("float32", "int32"), ("float64", "uint64"), ("int16", "float16"),
    ("float64", "uint8"), ("float32", "int16"), ("int64", "float32"),
])
def test_narrow_or_same_width_matches_numpy_view(old, new):
    x = np.linspace(-3.0, 7.0, 6).astype(old).reshape(2, 3)
    got = host(lax.bitcast_convert_type(dev(x), new))
    want = x.view(new).reshape(x.shape + (-1,)) if np.dtype(new).itemsize < x.itemsize else \
        x.view(new)
    assert got.dtype == np.dtype(new)
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_wider_consumes_the_trailing_axis_and_round_trips():
    x = np.arange(24, dtype=np.uint8).reshape(3, 8)
    y = host(lax.bitcast_convert_type(dev(x), np.float64))
    assert y.shape == (3,)
    np.testing.assert_array_equal(y, x.view(np.float64)[:, 0])
    back = host(lax.bitcast_convert_type(dev(y), np.uint8))
    np.testing.assert_array_equal(back, x)
    s = lax.bitcast_convert_type(dev(np.float32(1.0)), np.int32)
    assert host(s).shape == () and int(host(s)) == 0x3F800000  # JAX's literal value


def test_errors():
    with pytest.raises(ShapeError, match="trailing axis of 4 elements, got 3"):
        lax.bitcast_convert_type(dev(np.zeros((2, 3), np.uint8)), np.int32)
    with pytest.raises(DTypeError, match="bool and complex"):
        lax.bitcast_convert_type(dev(np.zeros(8, bool)), np.uint8)
    with pytest.raises(DTypeError, match="bool and complex"):
        lax.bitcast_convert_type(dev(np.zeros(2, np.complex64)), np.float64)


def test_no_derivative_vmap_jit():
    x = dev(np.linspace(0.5, 2.0, 4))
    g = funcgrad.grad(lambda v: lax.bitcast_convert_type(v, np.float64).sum())(x)
    np.testing.assert_array_equal(host(g), np.zeros(4))
    g = funcgrad.grad(lambda v: (v * lax.convert_element_type(
        lax.bitcast_convert_type(v, np.int64), np.float64)).sum())(x)
    np.testing.assert_array_equal(host(g), host(x).view(np.int64).astype(np.float64))
    xs = dev(np.arange(12, dtype=np.uint16).reshape(3, 4))
    check_vmap(lambda v: lax.bitcast_convert_type(v, np.uint8), (xs,))
    check_vmap(lambda v: lax.bitcast_convert_type(v, np.uint8), (xs,), in_axes=1)
    check_vmap(lambda v: lax.bitcast_convert_type(v, np.uint32), (xs.reshape(3, 2, 2),),
               in_axes=1)
    check_jit(lambda v: lax.bitcast_convert_type(v, np.int8), (x,))
