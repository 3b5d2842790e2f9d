"""find_peaks (every condition and the properties dict), peak_prominences, peak_widths and
argrelextrema against scipy.signal (a test dependency) and recorded values; host functions:
device in, device out, traced input refused."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dev, host, is_device_array

import funcgrad
import funcgrad.scipy.signal as fsg

sg = pytest.importorskip("scipy.signal")

# a random walk rounded to 0.1: plateaus and ties, as real sampled data has
_X = np.round(np.random.default_rng(3).standard_normal(80).cumsum(), 1)

_CONDITIONS = [
    {}, {"height": 0.0}, {"height": (None, 1.0)}, {"height": np.linspace(-1.0, 1.0, 80)},
    {"threshold": 0.2}, {"threshold": (0.1, 2.0)}, {"distance": 5}, {"distance": 2.5},
    {"prominence": 1.0}, {"prominence": (0.5, None), "wlen": 7},
    {"width": 2}, {"width": (1, 5), "rel_height": 0.8}, {"plateau_size": (2, None)},
    {"height": 0.0, "threshold": 0.1, "distance": 3, "prominence": 0.2, "width": 1,
     "plateau_size": 1},
]


@pytest.mark.filterwarnings("ignore:some peaks have a:RuntimeWarning")
@pytest.mark.parametrize("kw", _CONDITIONS, ids=lambda kw: ",".join(kw) or "none")
def test_find_peaks_matches_scipy(kw):
    peaks, props = fsg.find_peaks(dev(_X), **kw)
    want, want_props = sg.find_peaks(_X, **kw)
    assert is_device_array(peaks)
    np.testing.assert_array_equal(host(peaks), want)
    assert host(peaks).dtype == want.dtype
    assert sorted(props) == sorted(want_props)
    for key, value in want_props.items():
        np.testing.assert_allclose(host(props[key]), value, rtol=1e-12)
        assert host(props[key]).dtype == value.dtype


def test_find_peaks_recorded_values():
    x = np.array([0.0, 1.0, 1.0, 1.0, 0.0, 2.0, 0.5, 3.0, 3.0, 0.0, 1.0])
    peaks, props = fsg.find_peaks(dev(x), plateau_size=1, prominence=0.0, width=0.0)
    np.testing.assert_array_equal(host(peaks), [2, 5, 7])  # flat tops: the middle (left) one
    np.testing.assert_array_equal(host(props["plateau_sizes"]), [3, 1, 2])
    np.testing.assert_allclose(host(props["prominences"]), [1.0, 1.5, 3.0])
    np.testing.assert_allclose(host(props["widths"]), [3.0, 0.875, 2.1], rtol=1e-12)
    # distance keeps the highest peak first
    peaks, _ = fsg.find_peaks(dev(x), distance=3)
    np.testing.assert_array_equal(host(peaks), [2, 7])


@pytest.mark.filterwarnings("ignore:some peaks have a:RuntimeWarning")
def test_prominences_and_widths_match_scipy():
    peaks = sg.find_peaks(_X)[0]
    for wlen in (None, 5, 6.5):
        for got, want in zip(fsg.peak_prominences(dev(_X), dev(peaks), wlen=wlen),
                             sg.peak_prominences(_X, peaks, wlen=wlen), strict=True):
            np.testing.assert_array_equal(host(got), want)
    for rel in (0.0, 0.5, 1.0, 1.5):
        for got, want in zip(fsg.peak_widths(dev(_X), peaks, rel_height=rel),
                             sg.peak_widths(_X, peaks, rel_height=rel), strict=True):
            np.testing.assert_allclose(host(got), want, rtol=1e-12)
    data = sg.peak_prominences(_X, peaks, wlen=9)
    for got, want in zip(fsg.peak_widths(_X, peaks, prominence_data=data),
                         sg.peak_widths(_X, peaks, prominence_data=data), strict=True):
        np.testing.assert_allclose(host(got), want, rtol=1e-12)
    with pytest.warns(fsg.PeakPropertyWarning, match="prominence of 0"):
        fsg.peak_prominences(_X, np.array([0]))


def test_argrelextrema_matches_scipy():
    y = np.random.default_rng(4).normal(size=(6, 9))
    for order in (1, 2):
        for mode in ("clip", "wrap"):
            for axis in (0, 1):
                for f, g in ((fsg.argrelmax, sg.argrelmax), (fsg.argrelmin, sg.argrelmin)):
                    for got, want in zip(f(dev(y), axis=axis, order=order, mode=mode),
                                         g(y, axis=axis, order=order, mode=mode), strict=True):
                        np.testing.assert_array_equal(host(got), want)
    got = fsg.argrelextrema(np.array([1.0, 2.0, 2.0, 1.0]), np.greater_equal)
    np.testing.assert_array_equal(host(got[0]), [1, 2])


def test_peak_errors():
    with pytest.raises(TypeError, match="outside jit"):
        funcgrad.jit(lambda v: fsg.find_peaks(v)[0])(_X)
    with pytest.raises(ValueError, match="1-D"):
        fsg.find_peaks(np.ones((2, 3)))
    with pytest.raises(ValueError, match="distance"):
        fsg.find_peaks(_X, distance=0.5)
    with pytest.raises(ValueError, match="wlen"):
        fsg.find_peaks(_X, prominence=1, wlen=1)
    with pytest.raises(ValueError, match="must match x"):
        fsg.find_peaks(_X, height=np.ones(3))
    with pytest.raises(TypeError, match="intp"):
        fsg.peak_prominences(_X, np.array([1.5]))
    with pytest.raises(ValueError, match="not a valid index"):
        fsg.peak_prominences(_X, np.array([200]))
    with pytest.raises(ValueError, match="rel_height"):
        fsg.peak_widths(_X, sg.find_peaks(_X)[0], rel_height=-1)
    with pytest.raises(ValueError, match="order"):
        fsg.argrelmax(_X, order=0)
