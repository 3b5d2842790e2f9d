"""funcgrad.numpy.lib.stride_tricks.sliding_window_view against NumPy's (values, shapes,
errors) and under grad / jit / vmap."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dev, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.errors import AxisError

swv = fnp.lib.stride_tricks.sliding_window_view
X = np.arange(6)
A = np.arange(24.0).reshape(2, 3, 4)


@pytest.mark.parametrize("x,window,kw", [
    (X, 3, {}), (A, (2, 2), dict(axis=(1, 2))), (A, 2, dict(axis=0)),
    (X, (2, 2), dict(axis=(0, 0))), (X, 6, {}), (X, 0, {}), (A, (1, 2, 3), {}),
    (A, 3, dict(axis=-1)), (np.zeros(0), 0, {}), (A > 5, 2, dict(axis=1)),
])
def test_matches_numpy(x, window, kw) -> None:
    want = np.lib.stride_tricks.sliding_window_view(x, window, **kw)
    got = host(swv(dev(x), window, **kw))
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_errors_name_the_problem() -> None:
    with pytest.raises(ValueError, match="cannot be larger than input array shape"):
        swv(dev(X), 7)
    with pytest.raises(ValueError, match="must provide window_shape for all dimensions"):
        swv(dev(A), 2)
    with pytest.raises(ValueError, match="cannot contain negative values"):
        swv(dev(X), -1)
    with pytest.raises(AxisError, match="axis 5 is out of bounds"):
        swv(dev(A), 2, axis=5)
    with pytest.raises(ValueError, match="writeable=True is not supported"):
        swv(dev(X), 2, writeable=True)


def test_grad_jit_vmap() -> None:
    v = dev(np.arange(5.0))
    # overlapping windows add their cotangents: d/dv sum(windows**2) = 2 v * (windows per v)
    g = funcgrad.grad(lambda v: fnp.sum(swv(v, 3) ** 2))(v)
    np.testing.assert_array_equal(host(g), [0.0, 4.0, 12.0, 12.0, 8.0])
    np.testing.assert_array_equal(host(funcgrad.jit(lambda v: swv(v, 2))(v)),
                                  np.lib.stride_tricks.sliding_window_view(np.arange(5.0), 2))
    rows = dev(A.reshape(6, 4))
    got = funcgrad.vmap(lambda r: fnp.sum(swv(r, 2), axis=-1))(rows)
    np.testing.assert_array_equal(host(got), A.reshape(6, 4)[:, :-1] + A.reshape(6, 4)[:, 1:])
    # NumPy's own function on a traced array lands here (__array_function__)
    got = funcgrad.grad(lambda v: fnp.sum(np.lib.stride_tricks.sliding_window_view(v, 2)))(v)
    np.testing.assert_array_equal(host(got), [1.0, 2.0, 2.0, 2.0, 1.0])
