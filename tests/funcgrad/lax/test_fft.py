"""``lax.fft`` against values recorded from JAX 0.10.2 (x64): the four transform types over
the trailing axes, dtype conversions, JAX's errors, derivatives, batching and ``jit``."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.test_util import check_grads

_X = np.array([[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0, 0.0]])
_HALF = np.array([1 + 2j, 3 - 1j, 0.5 + 0j])


def test_types_and_values_as_jax() -> None:
    assert_allclose(lax.fft(dev(_X), "rfft", (2, 4)),
                    np.array([[11.5, -3.5 + 3j, 1.5], [8.5, -0.5 + 1j, -5.5]]))
    assert_allclose(lax.fft(dev(_HALF), lax.FftType.IRFFT, (4,)),
                    np.array([1.875, 0.625, -1.125, -0.375]))
    z = _X + 1j * _X[::-1]
    assert_allclose(lax.fft(dev(z), "FFT", (4,)), np.fft.fft(z))
    assert_allclose(lax.fft(dev(z), lax.FftType.IFFT, (2, 4)), np.fft.ifft2(z))
    assert_allclose(lax.fft(dev(_HALF), "irfft", (5,)), np.fft.irfft(_HALF, 5))
    assert lax.FftType.RFFT == 2 and lax.FftType.IRFFT.name == "IRFFT"


def test_dtypes_as_jax() -> None:
    assert host(lax.fft(dev(_X.astype(np.float32)), "rfft", (4,))).dtype == np.complex64
    assert host(lax.fft(dev(_X.astype(np.float32)), "fft", (4,))).dtype == np.complex64
    assert host(lax.fft(dev(_X), "fft", (4,))).dtype == np.complex128
    assert host(lax.fft(dev(np.arange(4)), "rfft", (4,))).dtype == np.complex128
    # No lengths: only the dtype conversion (JAX's).
    same = lax.fft(dev(_X), "fft", ())
    assert host(same).dtype == np.complex128 and host(same).shape == (2, 4)


def test_errors_as_jax() -> None:
    with pytest.raises(ValueError, match="only real valued inputs"):
        lax.fft(dev(_HALF), "rfft", (3,))
    with pytest.raises(ValueError, match="minor dimensions"):
        lax.fft(dev(_X), "fft", (5,))
    with pytest.raises(ValueError, match="minor dimensions"):
        lax.fft(dev(_HALF.reshape(1, 3)), "irfft", (3,))
    with pytest.raises(ValueError, match="unknown FFT type"):
        lax.fft(dev(_X), "Fft", (4,))
    with pytest.raises(TypeError, match="unknown FFT type"):
        lax.fft(dev(_X), 7.5, (4,))
    with pytest.raises(ValueError, match="at least as many"):
        lax.fft(dev(_X), "fft", (1, 2, 4))


def test_gradients_as_jax() -> None:
    g = funcgrad.grad(lambda x: (fnp.abs(lax.fft(x, "rfft", (2, 4))) ** 2).sum())(dev(_X))
    assert_allclose(g, np.array([[24.0, 40.0, 40.0, 56.0], [14.0, -12.0, 26.0, -4.0]]))
    g = funcgrad.grad(lambda z: (lax.fft(z, "irfft", (4,)) ** 3).sum())(dev(_HALF))
    assert_allclose(g, np.array([3.984375, 3.375 + 0.375j, 3.1875]))
    check_grads(lambda x: lax.fft(x, "rfft", (2, 4)), (dev(_X),), order=2)
    check_grads(lambda z: lax.fft(z, "fft", (4,)), (dev(_X + 0.5j),), order=1)
    check_grads(lambda z: lax.fft(z, "irfft", (4,)), (dev(_HALF),), order=1)


def test_batching_and_jit() -> None:
    xs = dev(np.stack([_X, 2 * _X, -_X]))
    loop = np.stack([host(lax.fft(xs[i], "rfft", (4,))) for i in range(3)])
    assert_allclose(funcgrad.vmap(lambda x: lax.fft(x, "rfft", (4,)))(xs), loop)
    assert_allclose(funcgrad.vmap(lambda x: lax.fft(x, "rfft", (4,)), in_axes=1,
                                  out_axes=1)(fnp.swapaxes(xs, 0, 1)), np.swapaxes(loop, 0, 1))
    assert_allclose(funcgrad.jit(lambda x: lax.fft(x, "rfft", (2, 4)), )(dev(_X)),
                    np.fft.rfft2(_X))
