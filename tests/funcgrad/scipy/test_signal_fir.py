"""firwin, the Kaiser helpers and spectrogram against scipy.signal (a test dependency)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad.scipy.signal as fsg

sg = pytest.importorskip("scipy.signal")


@pytest.mark.parametrize("numtaps", [5, 6, 21, 22])
def test_firwin_matches_scipy(numtaps):
    for cutoff, pass_zero in ((0.3, True), (0.3, False), ([0.2, 0.5], False),
                              ([0.2, 0.5], True), ([0.1, 0.3, 0.6], True), (0.3, "highpass"),
                              ([0.2, 0.5], "bandstop")):
        for window in ("hamming", ("kaiser", 5.0), "boxcar"):
            try:
                want = sg.firwin(numtaps, cutoff, pass_zero=pass_zero, window=window)
            except ValueError:
                with pytest.raises(ValueError):
                    fsg.firwin(numtaps, cutoff, pass_zero=pass_zero, window=window)
                continue
            assert_allclose(fsg.firwin(numtaps, cutoff, pass_zero=pass_zero, window=window),
                            want, rtol=1e-10, atol=1e-13)


def test_firwin_width_fs_and_kaiser_helpers():
    assert_allclose(fsg.firwin(31, 100.0, width=50.0, fs=1000.0, scale=False),
                    sg.firwin(31, 100.0, width=50.0, fs=1000.0, scale=False), rtol=1e-10,
                    atol=1e-13)
    assert fsg.kaiserord(65.0, 0.1) == sg.kaiserord(65.0, 0.1)
    assert fsg.kaiser_atten(101, 0.1) == sg.kaiser_atten(101, 0.1)
    assert fsg.kaiser_beta(30.0) == sg.kaiser_beta(30.0)
    with pytest.raises(ValueError, match="even number"):
        fsg.firwin(6, 0.3, pass_zero=False)
    with pytest.raises(ValueError, match="increasing"):
        fsg.firwin(7, [0.5, 0.2])
    assert np.all(np.isfinite(fsg.firwin(7, 0.25)))


def test_spectrogram_matches_scipy():
    x = np.random.default_rng(0).normal(size=600)
    for kw in ({}, {"fs": 100.0, "nperseg": 64}, {"nperseg": 64, "noverlap": 32,
                                                   "window": "hann"},
               {"mode": "magnitude", "nperseg": 50}, {"mode": "complex", "nperseg": 50},
               {"mode": "phase", "nperseg": 50}, {"scaling": "spectrum", "nperseg": 70,
                                                  "detrend": False},
               {"nfft": 128, "nperseg": 100}, {"return_onesided": False, "nperseg": 40}):
        for got, want in zip(fsg.spectrogram(x, **kw), sg.spectrogram(x, **kw)):
            assert_allclose(got, want, rtol=1e-8, atol=1e-12)
    x2 = np.random.default_rng(1).normal(size=(300, 2))
    for got, want in zip(fsg.spectrogram(x2, nperseg=40, axis=0, mode="phase"),
                         sg.spectrogram(x2, nperseg=40, axis=0, mode="phase")):
        assert_allclose(got, want, rtol=1e-8, atol=1e-12)


def test_decimate_matches_scipy():
    x = np.random.default_rng(2).normal(size=(3, 150))
    for q in (2, 5):
        for kw in ({}, {"zero_phase": False}, {"n": 4},
                   {"ftype": "fir", "zero_phase": False}, {"ftype": "fir"}):
            assert_allclose(fsg.decimate(dev(x), q, axis=1, **kw), sg.decimate(x, q, axis=1, **kw),
                            rtol=1e-8, atol=1e-11)
    with pytest.raises(ValueError, match="ftype must be"):
        fsg.decimate(x, 2, ftype="fur")
