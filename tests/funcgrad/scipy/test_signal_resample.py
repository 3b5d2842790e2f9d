"""upfirdn (every extension mode), resample_poly (every padtype, windows) and resample
(Fourier; real, complex, windows, the frequency domain) against scipy.signal (a test
dependency); linear in the signal, so jit, vmap and grad work."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.scipy.signal as fsg

sg = pytest.importorskip("scipy.signal")

_RNG = np.random.default_rng(5)
_X = _RNG.normal(size=37)
_X2 = _RNG.normal(size=(3, 23))
_H = _RNG.normal(size=7)
_MODES = ("constant", "symmetric", "reflect", "edge", "wrap", "antisymmetric", "antireflect",
          "smooth", "line")


@pytest.mark.parametrize("mode", _MODES)
def test_upfirdn_matches_scipy(mode):
    for up, down in ((1, 1), (1, 3), (3, 1), (2, 5), (3, 2)):
        assert_allclose(fsg.upfirdn(dev(_H), dev(_X), up, down, mode=mode, cval=0.7),
                        sg.upfirdn(_H, _X, up, down, mode=mode, cval=0.7), rtol=1e-10,
                        atol=1e-12)
    # a filter longer than the signal: the extension repeats
    assert_allclose(fsg.upfirdn(np.ones(30), dev(_X[:4]), 2, 3, mode=mode),
                    sg.upfirdn(np.ones(30), _X[:4], 2, 3, mode=mode), rtol=1e-10, atol=1e-12)


def test_upfirdn_axes_dtypes_and_transforms():
    assert_allclose(fsg.upfirdn(_H, dev(_X2), 2, 3, axis=0), sg.upfirdn(_H, _X2, 2, 3, axis=0),
                    rtol=1e-10, atol=1e-12)
    z = _X + 1j * _X[::-1]
    assert_allclose(fsg.upfirdn(_H, dev(z), 2, 3), sg.upfirdn(_H, z, 2, 3), rtol=1e-10,
                    atol=1e-12)
    assert fsg.upfirdn(_H.astype(np.float32), dev(_X.astype(np.float32)), 2).dtype == np.float32
    assert fsg.upfirdn(np.ones(2, int), np.arange(3)).dtype == np.float64  # as SciPy
    assert_allclose(funcgrad.vmap(lambda v: fsg.upfirdn(_H, v, 2, 3, mode="line"))(dev(_X2)),
                    sg.upfirdn(_H, _X2, 2, 3, mode="line"), rtol=1e-10, atol=1e-12)
    # linear: the gradient of sum(y * w) is the adjoint applied to w
    w = _RNG.normal(size=sg.upfirdn(_H, _X, 2, 3).shape)
    g = funcgrad.grad(lambda v: fnp.sum(fsg.upfirdn(_H, v, 2, 3) * dev(w)))(dev(_X))
    assert_allclose(g, sg.upfirdn(_H, np.eye(37), 2, 3, axis=0).T @ w, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="mode"):
        fsg.upfirdn(_H, _X, mode="periodic")
    with pytest.raises(ValueError, match="up must be a positive integer"):
        fsg.upfirdn(_H, _X, up=0)


@pytest.mark.parametrize("up, down", [(3, 2), (2, 3), (1, 4), (5, 1), (4, 6)])
def test_resample_poly_matches_scipy(up, down):
    for padtype in ("constant", "mean", "median", "minimum", "maximum", "line", "edge",
                    "reflect", "smooth"):
        assert_allclose(fsg.resample_poly(dev(_X), up, down, padtype=padtype),
                        sg.resample_poly(_X, up, down, padtype=padtype), rtol=1e-9, atol=1e-12)
    assert_allclose(fsg.resample_poly(dev(_X2), up, down, axis=1),
                    sg.resample_poly(_X2, up, down, axis=1), rtol=1e-9, atol=1e-12)
    assert_allclose(fsg.resample_poly(dev(_X), up, down, window=np.hamming(11), cval=2.0),
                    sg.resample_poly(_X, up, down, window=np.hamming(11), cval=2.0),
                    rtol=1e-9, atol=1e-12)


def test_resample_poly_dtypes_and_jit():
    assert fsg.resample_poly(dev(_X.astype(np.float32)), 3, 2).dtype == np.float32
    assert fsg.resample_poly(np.arange(10), 3, 2).dtype == np.float64
    assert_allclose(fsg.resample_poly(dev(_X), 4, 2), sg.resample_poly(_X, 4, 2), rtol=1e-9,
                    atol=1e-12)  # reduced to 2 / 1
    f = funcgrad.jit(lambda v: fsg.resample_poly(v, 3, 2, window=("kaiser", 8.0),
                                                 padtype="mean"))
    assert_allclose(f(dev(_X)), sg.resample_poly(_X, 3, 2, window=("kaiser", 8.0),
                                                 padtype="mean"), rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="padtype"):
        fsg.resample_poly(_X, 3, 2, padtype="zeros")


@pytest.mark.parametrize("n", [36, 37])
def test_resample_matches_scipy(n):
    x = _X[:n]
    z = x + 1j * x[::-1]
    for num in (10, 11, n, 50, 51):
        assert_allclose(fsg.resample(dev(x), num), sg.resample(x, num), rtol=1e-9, atol=1e-12)
        assert_allclose(fsg.resample(dev(z), num), sg.resample(z, num), rtol=1e-9, atol=1e-12)
        assert_allclose(fsg.resample(dev(x), num, window="hann"),
                        sg.resample(x, num, window="hann"), rtol=1e-9, atol=1e-12)
        assert_allclose(fsg.resample(dev(z), num, window=("kaiser", 3.0)),
                        sg.resample(z, num, window=("kaiser", 3.0)), rtol=1e-9, atol=1e-12)
        spec = np.fft.fft(x)
        assert_allclose(fsg.resample(dev(spec), num, domain="freq"),
                        sg.resample(spec, num, domain="freq"), rtol=1e-9, atol=1e-12)


def test_resample_t_window_forms_and_jit():
    t = np.arange(23.0) * 0.5
    for got, want in zip(fsg.resample(dev(_X2), 10, t=dev(t), axis=1),
                         sg.resample(_X2, 10, t=t, axis=1), strict=True):
        assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    window = lambda f: np.exp(-f ** 2)  # noqa: E731
    assert_allclose(fsg.resample(dev(_X), 20, window=window),
                    sg.resample(_X, 20, window=window), rtol=1e-9, atol=1e-12)
    assert_allclose(funcgrad.jit(lambda v: fsg.resample(v, 20))(dev(_X)), sg.resample(_X, 20),
                    rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="window.shape"):
        fsg.resample(_X, 20, window=np.ones(3))
