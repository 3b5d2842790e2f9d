"""savgol_coeffs and savgol_filter (every mode, derivatives, axes) against scipy.signal (a
test dependency); linear in the signal, so differentiable and jit-safe."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.signal as fsg

sg = pytest.importorskip("scipy.signal")

_X = np.random.default_rng(0).normal(size=40)


@pytest.mark.parametrize("window, order", [(5, 2), (7, 3), (4, 2), (3, 0), (9, 8)])
def test_savgol_matches_scipy(window, order):
    for deriv in (0, 1, 3):
        for mode in ("interp", "mirror", "constant", "nearest", "wrap"):
            assert_allclose(fsg.savgol_filter(dev(_X), window, order, deriv=deriv, delta=0.5,
                                              mode=mode, cval=0.3),
                            sg.savgol_filter(_X, window, order, deriv=deriv, delta=0.5,
                                             mode=mode, cval=0.3), rtol=1e-8, atol=1e-10)
        for use in ("conv", "dot"):
            assert_allclose(fsg.savgol_coeffs(window, order, deriv, pos=0, use=use),
                            sg.savgol_coeffs(window, order, deriv, pos=0, use=use),
                            rtol=1e-9, atol=1e-12)


def test_savgol_axes_dtype_and_transforms():
    x2 = np.random.default_rng(1).normal(size=(3, 25))
    assert_allclose(fsg.savgol_filter(dev(x2), 7, 2, axis=1), sg.savgol_filter(x2, 7, 2, axis=1),
                    rtol=1e-9, atol=1e-12)
    assert_allclose(fsg.savgol_filter(dev(x2.T), 5, 2, axis=0),
                    sg.savgol_filter(x2.T, 5, 2, axis=0), rtol=1e-9, atol=1e-12)
    assert fsg.savgol_filter(dev(_X.astype(np.float32)), 5, 2).dtype == np.float32
    # the first output is a fixed combination of the first window: its weights
    g = funcgrad.grad(lambda v: fsg.savgol_filter(v, 5, 2)[0])(dev(_X))
    assert_allclose(g[:5], sg.savgol_filter(np.eye(40), 5, 2, axis=0)[0, :5], atol=1e-12)
    assert_allclose(funcgrad.jit(lambda v: fsg.savgol_filter(v, 7, 3, deriv=1))(dev(_X)),
                    sg.savgol_filter(_X, 7, 3, deriv=1), rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="polyorder must be less"):
        fsg.savgol_filter(_X, 3, 3)
    with pytest.raises(ValueError, match="window_length must be less than or equal"):
        fsg.savgol_filter(_X[:4], 5, 2)
