"""funcgrad.scipy.signal: gradients recorded from jax.scipy.signal 0.10.2 (float64) as
literals, and errors. Values vs SciPy, finite differences and vmap: the op table
tests/funcgrad/op_tables/scipy_signal.py."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.signal as fss

X = np.array([[0.5, -1.0, 0.25], [0.75, 0.1, -0.4], [0.2, 0.3, -0.6]])
K = np.array([[1.0, 2.0], [-1.0, 0.5]])

JAX_GRADS = {
    "full": ([[26.307500000000005, 15.01312500000001, 6.543437500000001],
              [20.080937499999997, 15.670000000000003, 3.0525],
              [7.290000000000001, 7.315, 1.8550000000000013]],
             [[9.558375, 2.699937499999997], [2.245000000000001, 10.018875]]),
    "same": ([[26.307500000000005, 15.01312500000001, 4.138437500000001],
              [20.080937499999997, 15.670000000000003, 8.3],
              [4.210000000000001, -0.10499999999999998, 3.4350000000000005]],
             [[8.8245, 1.015937499999998], [3.877125000000004, 8.506375]]),
    "valid": ([[17.370000000000005, 24.31000000000001, 5.740000000000001],
               [0.2849999999999966, 15.670000000000003, 8.3],
               [1.4700000000000002, -0.10499999999999998, 3.4350000000000005]],
              [[9.044500000000001, -11.080000000000002], [6.749000000000004, 4.673500000000001]]),
}


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_gradients_match_jax(mode: str) -> None:
    def f(x, k):
        return (fss.convolve2d(x, k, mode) ** 2).sum() + (fss.correlate(x, k, mode) ** 3).sum()

    gx, gk = funcgrad.grad(f, argnums=(0, 1))(dev(X), dev(K))
    want_x, want_k = JAX_GRADS[mode]
    assert_allclose(gx, np.array(want_x), rtol=1e-12, atol=1e-12)
    assert_allclose(gk, np.array(want_k), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call,err,match", [
    (lambda: fss.convolve(np.ones(3), np.ones(2), mode="middle"), ValueError, "mode"),
    (lambda: fss.convolve(np.ones(3), np.ones(2), method="slow"), ValueError, "method"),
    (lambda: fss.convolve(np.ones((3, 3)), np.ones(2)), ValueError, "dimensionality"),
    (lambda: fss.correlate(np.ones((3, 3)), np.ones((2, 4)), "valid"), ValueError,
     "at least as large"),
    (lambda: fss.convolve2d(np.ones(3), np.ones(2)), ValueError, "2-D"),
    (lambda: fss.convolve2d(np.ones((3, 3)), np.ones((2, 2)), boundary="reflect"), ValueError,
     "boundary"),
    (lambda: fss.fftconvolve(np.ones((2, 3)), np.ones((3, 3)), axes=1), ValueError,
     "incompatible"),
    (lambda: fss.detrend(np.ones(3), type="cubic"), ValueError, "trend type"),
])
def test_bad_arguments_raise(call, err, match) -> None:
    with pytest.raises(err, match=match):
        call()


def test_empty_inputs() -> None:
    with pytest.raises(ValueError, match="empty"):
        fss.convolve(np.ones(0), np.ones(2))
    assert np.shape(fss.fftconvolve(np.ones((0, 2)), np.ones((2, 2)))) == (0,)
