"""chirp, sawtooth, square, gausspulse, unit_impulse, correlation_lags, iirnotch, iirpeak and
coherence against scipy.signal (a test dependency); the waveforms differentiate and jit."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.scipy.signal as fsg

sg = pytest.importorskip("scipy.signal")

_T = np.linspace(0.0, 2.0, 101)
_TT = np.linspace(-10.0, 10.0, 301)


@pytest.mark.parametrize("method", ["linear", "quadratic", "logarithmic", "hyperbolic"])
def test_chirp_matches_scipy(method):
    for vertex_zero in (True, False):
        assert_allclose(fsg.chirp(dev(_T), 2.0, 1.5, 7.0, method, phi=30,
                                  vertex_zero=vertex_zero),
                        sg.chirp(_T, 2.0, 1.5, 7.0, method, phi=30, vertex_zero=vertex_zero),
                        rtol=1e-9, atol=1e-12)
    assert_allclose(fsg.chirp(dev(_T), 2.0, 1.5, 7.0, method, complex=True),
                    sg.chirp(_T, 2.0, 1.5, 7.0, method, complex=True), rtol=1e-9, atol=1e-12)


def test_periodic_waves_pulses_and_helpers():
    for w in (0.0, 0.3, 0.5, 1.0, 1.2):
        np.testing.assert_allclose(host(fsg.sawtooth(dev(_TT), w)), sg.sawtooth(_TT, w),
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(host(fsg.square(dev(_TT), w)), sg.square(_TT, w))
    tg = np.linspace(-1e-3, 1e-3, 51)
    for got, want in zip(fsg.gausspulse(dev(tg), 5000, retquad=True, retenv=True),
                         sg.gausspulse(tg, 5000, retquad=True, retenv=True), strict=True):
        assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    assert fsg.gausspulse("cutoff", 5000) == pytest.approx(sg.gausspulse("cutoff", 5000), 1e-14)
    for args in (((3, 4), "mid"), (5, 2), ((2, 3), (1, 2)), (4,)):
        np.testing.assert_array_equal(host(fsg.unit_impulse(*args)), sg.unit_impulse(*args))
    for mode in ("full", "same", "valid"):
        for a, b in ((7, 3), (6, 3), (3, 7), (4, 4)):
            np.testing.assert_array_equal(fsg.correlation_lags(a, b, mode),
                                          sg.correlation_lags(a, b, mode))
    assert_allclose(funcgrad.grad(lambda t: fsg.sawtooth(t, 0.4))(1.0), 1 / (0.4 * np.pi),
                    rtol=1e-12)
    assert_allclose(funcgrad.jit(lambda t: fsg.chirp(t, 1.0, 1.0, 3.0))(dev(_T)),
                    sg.chirp(_T, 1.0, 1.0, 3.0), rtol=1e-9, atol=1e-12)


def test_notch_peak_and_coherence_match_scipy():
    for w0, q, fs in ((60.0, 30.0, 1000.0), (0.3, 5.0, 2.0), (200.0, 1.0, 1000.0)):
        for f, g in ((fsg.iirnotch, sg.iirnotch), (fsg.iirpeak, sg.iirpeak)):
            for got, want in zip(f(w0, q, fs), g(w0, q, fs), strict=True):
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="w0"):
        fsg.iirnotch(600.0, 30.0, fs=1000.0)
    rng = np.random.default_rng(51)
    x = rng.standard_normal(512)
    y = np.convolve(x, [1.0, 0.5, 0.2], "same") + 0.3 * rng.standard_normal(512)
    for got, want in zip(fsg.coherence(dev(x), dev(y), fs=10.0, nperseg=64),
                         sg.coherence(x, y, fs=10.0, nperseg=64), strict=True):
        assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_tf2zpk_and_lfiltic_match_scipy():
    for b, a in (([2.0, 2.0], [1.0, -0.5]), sg.butter(4, 0.3), sg.cheby1(3, 1, 0.4),
                 ([1.0, 2.0, 3.0], [0.0, 0.0, 4.0, 5.0, 6.0])):
        got, want = fsg.tf2zpk(b, a), sg.tf2zpk(b, a)
        for g, w in zip(got[:2], want[:2], strict=True):
            np.testing.assert_allclose(np.sort_complex(g), np.sort_complex(w), rtol=1e-10)
        assert got[2] == pytest.approx(want[2], rel=1e-12)
    b3, a3 = sg.butter(3, 0.2)
    for b, a, y, x in (([1.0], [1.0, -0.5], [2.0], None), (b3, a3, [1.0, 2.0, 3.0], [0.5, 0.2]),
                       ([1, 2, 3], [2, 1], [1.0], [1.0, 2.0])):
        np.testing.assert_allclose(fsg.lfiltic(b, a, y, x), sg.lfiltic(b, a, y, x), rtol=1e-12)
    # lfiltic's state continues a filter run: the second half filtered with it
    x = np.random.default_rng(52).normal(size=40)
    full = sg.lfilter(b3, a3, x)
    zi = fsg.lfiltic(b3, a3, full[19::-1], x[19::-1])
    tail, _ = fsg.lfilter(dev(b3), dev(a3), dev(x[20:]), zi=dev(zi))
    assert_allclose(tail, full[20:], rtol=1e-10, atol=1e-12)
