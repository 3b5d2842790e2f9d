"""``jax.numpy``'s own keyword arguments in funcgrad.numpy (``preferred_element_type``,
``precision``, ``size=``/``fill_value=`` of compress/extract, ``total_repeat_length``, the
``method`` of searchsorted/digitize): values recorded from JAX 0.10.2 (x64) as literals, and
jit/vmap/grad. CI never imports JAX."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp

A8 = np.array([[100, 100], [-100, 50]], np.int8)


@pytest.mark.parametrize("fn", [
    lambda a, b, **k: fnp.matmul(a, b, **k),
    lambda a, b, **k: fnp.dot(a, b, **k),
    lambda a, b, **k: fnp.einsum("ij,jk->ik", a, b, **k),
    lambda a, b, **k: fnp.tensordot(a, b, 1, **k),
    lambda a, b, **k: fnp.inner(a, b.T, **k),
    lambda a, b, **k: fnp.linalg.matmul(a, b, **k),
    lambda a, b, **k: fnp.linalg.tensordot(a, b, axes=1, **k),
])
def test_preferred_element_type_products(fn) -> None:
    # int8 products accumulate in int32 without wrapping; without it NumPy's int8 wraps.
    got = fn(dev(A8), dev(A8), preferred_element_type=np.int32)
    assert_allclose(got, np.array([[0, 15000], [-15000, -7500]], np.int32))
    assert host(fn(dev(A8), dev(A8))).dtype == np.int8
    # float32 operands with float64: exact products of the float32 values
    a = np.array([[1 + 2**-20, 1.0]], np.float32)
    b = np.array([[1 + 2**-20], [0.0]], np.float32)
    got = fn(dev(a), dev(b), preferred_element_type=np.float64, precision="highest")
    assert_allclose(got, np.array([[(1 + 2**-20) ** 2]]))


def test_preferred_element_type_vectors_and_convolutions() -> None:
    x = dev(np.array([100, -100, 7], np.int8))
    y = dev(np.array([100, 100, 3], np.int8))
    assert_allclose(fnp.vdot(x, y, preferred_element_type=np.int32), np.array(21, np.int32))
    assert_allclose(fnp.vecdot(x, y, preferred_element_type=np.int64), np.array(21))
    assert_allclose(fnp.linalg.vecdot(x, y, preferred_element_type=np.float32),
                    np.array(21.0, np.float32))
    # jnp.convolve(x, y, preferred_element_type=int32) / jnp.correlate(..., "full")
    assert_allclose(fnp.convolve(x, y, preferred_element_type=np.int32),
                    np.array([10000, 0, -9000, 400, 21], np.int32))
    assert_allclose(fnp.correlate(x, y, "full", preferred_element_type=np.int32),
                    np.array([300, 9700, 21, -9300, 700], np.int32))
    f = funcgrad.jit(lambda a, b: fnp.matmul(a, b, preferred_element_type=np.float64))
    a32 = np.ones((2, 3), np.float32)
    assert host(f(dev(a32), dev(a32.T))).dtype == np.float64
    g = funcgrad.grad(lambda a: fnp.sum(fnp.matmul(a, a.T, preferred_element_type=np.float64)))(
        dev(a32))
    assert host(g).dtype == np.float32
    assert_allclose(g, np.full((2, 3), 4.0, np.float32))


def test_preferred_element_type_refuses_dropping_imaginary_parts() -> None:
    c = dev(np.array([[1 + 1j]]))
    with pytest.raises(TypeError, match="imaginary"):
        fnp.matmul(c, c, preferred_element_type=np.float32)
    with pytest.raises(TypeError, match="imaginary"):
        fnp.convolve(dev(np.array([1j])), dev(np.array([1.0])), preferred_element_type=float)
