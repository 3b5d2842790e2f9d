"""IIR design (iirfilter, butter/cheby1/cheby2 in every output, SciPy's sos pairing),
second-order-section filtering (sosfilt, sosfilt_zi, sosfiltfilt), freqz/sosfreqz and
oaconvolve, against scipy.signal (a test dependency)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.signal as fsg

sg = pytest.importorskip("scipy.signal")


@pytest.mark.parametrize("ftype, kw", [("butter", {}), ("cheby1", {"rp": 0.5}),
                                       ("cheby2", {"rs": 35.0})])
@pytest.mark.parametrize("btype, wn", [("low", 0.23), ("high", 0.61),
                                       ("bandpass", [0.2, 0.45]), ("bandstop", [0.15, 0.7])])
def test_designs_match_scipy(ftype, kw, btype, wn):
    for n in (3, 4):
        got_ba = fsg.iirfilter(n, wn, btype=btype, ftype=ftype, **kw)
        want_ba = sg.iirfilter(n, wn, btype=btype, ftype=ftype, **kw)
        for g, w in zip(got_ba, want_ba):
            assert_allclose(g, w, rtol=1e-10, atol=1e-13)
        # SciPy's pairing: the same sections in the same order
        assert_allclose(fsg.iirfilter(n, wn, btype=btype, ftype=ftype, output="sos", **kw),
                        sg.iirfilter(n, wn, btype=btype, ftype=ftype, output="sos", **kw),
                        rtol=1e-10, atol=1e-13)


def test_named_designs_and_conversions():
    assert_allclose(fsg.cheby1(4, 1.0, 100.0, btype="high", fs=1000.0, output="sos"),
                    sg.cheby1(4, 1.0, 100.0, btype="high", fs=1000.0, output="sos"),
                    rtol=1e-10)
    z, p, k = fsg.cheby2(5, 30.0, 0.4, output="zpk")
    zw, pw, kw = sg.cheby2(5, 30.0, 0.4, output="zpk")
    assert_allclose(np.sort_complex(z), np.sort_complex(zw), rtol=1e-10)
    assert_allclose(np.sort_complex(p), np.sort_complex(pw), rtol=1e-10)
    assert_allclose(k, kw, rtol=1e-10)
    b, a = sg.butter(5, 0.3)
    assert_allclose(fsg.tf2sos(b, a), sg.tf2sos(b, a), rtol=1e-8, atol=1e-12)
    assert_allclose(fsg.butter(3, 2.0, analog=True, output="sos"),
                    sg.butter(3, 2.0, analog=True, output="sos"), rtol=1e-12)
    with pytest.raises(ValueError, match="rp"):
        fsg.iirfilter(3, 0.3, btype="low", ftype="cheby1")
    with pytest.raises(ValueError, match="ftype"):
        fsg.iirfilter(3, 0.3, btype="low", ftype="ellip")


def test_sos_filtering_matches_scipy_and_differentiates():
    sos = sg.cheby2(6, 40.0, [0.2, 0.3], btype="bandpass", output="sos")
    x = np.random.default_rng(0).normal(size=(3, 80))
    assert_allclose(fsg.sosfilt(dev(sos), dev(x), axis=1), sg.sosfilt(sos, x, axis=1),
                    rtol=1e-9, atol=1e-12)
    zi = np.random.default_rng(1).normal(size=(sos.shape[0], 2, 3))
    y, zf = fsg.sosfilt(dev(sos), dev(x.T), axis=0, zi=dev(zi))
    yw, zfw = sg.sosfilt(sos, x.T, axis=0, zi=zi)
    assert_allclose(y, yw, rtol=1e-9, atol=1e-12)
    assert_allclose(zf, zfw, rtol=1e-9, atol=1e-12)
    assert_allclose(fsg.sosfilt_zi(dev(sos)), sg.sosfilt_zi(sos), rtol=1e-10)
    for padtype in ("odd", "even", None):
        assert_allclose(fsg.sosfiltfilt(dev(sos), dev(x), padtype=padtype),
                        sg.sosfiltfilt(sos, x, padtype=padtype), rtol=1e-8, atol=1e-11)
    s1 = np.array([[0.2, 0.3, 0.1, 1.0, -0.4, 0.1]])
    g = funcgrad.grad(lambda s: fsg.sosfilt(s, dev(x[0])).sum())(dev(s1))
    eps = 1e-6
    bump = np.zeros_like(s1)
    bump[0, 4] = eps
    fd = (sg.sosfilt(s1 + bump, x[0]).sum() - sg.sosfilt(s1 - bump, x[0]).sum()) / (2 * eps)
    assert_allclose(g[0, 4], fd, rtol=1e-6)
    jitted = funcgrad.jit(lambda v: fsg.sosfilt(dev(sos), v))(dev(x[0]))
    assert_allclose(jitted, sg.sosfilt(sos, x[0]), rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="zi must have shape"):
        fsg.sosfilt(sos, x, zi=np.zeros((1, 2)))


def test_frequency_responses_and_oaconvolve():
    b, a = sg.cheby1(5, 1.0, 0.3)
    for kw in ({"worN": 7, "whole": True}, {"worN": 8, "fs": 100.0},
               {"worN": np.array([1.0, 5.0, 20.0]), "fs": 100.0},
               {"worN": 5, "include_nyquist": True}):
        w, h = fsg.freqz(dev(b), dev(a), **kw)
        ww, hw = sg.freqz(b, a, **kw)
        assert_allclose(w, ww, rtol=1e-12)
        assert_allclose(h, hw, rtol=1e-9, atol=1e-12)
    sos = sg.butter(4, 0.2, output="sos")
    assert_allclose(fsg.sosfreqz(dev(sos), worN=16)[1], sg.sosfreqz(sos, worN=16)[1],
                    rtol=1e-9, atol=1e-12)
    u, v = np.random.default_rng(2).normal(size=(2, 40))
    for mode in ("full", "same", "valid"):
        assert_allclose(fsg.oaconvolve(dev(u), dev(v[:7]), mode=mode),
                        sg.oaconvolve(u, v[:7], mode=mode), rtol=1e-10, atol=1e-12)
