"""scipy.special (and scipy.stats over it) with NumPy inputs while the default device is a device (the strict one here,
a GPU in use): the functions' loops made their step counters from Python data, on the default
device, beside host values -- the loop then ran on the device and the code after it mixed
host and device arrays (the strict device's TypeError, CuPy's on a GPU). Values: SciPy's,
e.g. scipy.special.gammainc([0.2, 0.5, 0.8], [1.5, 2.0, 3.5])."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.scipy.signal as fsg
import funcgrad.scipy.special as fsp
import funcgrad.scipy.stats as fst

_V = np.array([0.2, 0.5, 0.8])
_W = np.array([1.5, 2.0, 3.5])

CASES = {
    "gammainc": (lambda: fsp.gammainc(_V, _W),
                 [0.974613149005478, 0.9544997361036415, 0.9807073805615591]),
    "gammaincc": (lambda: fsp.gammaincc(_V, _W),
                  [0.02538685099452194, 0.04550026389635857, 0.019292619438440805]),
    "betainc": (lambda: fsp.betainc(_V, 2.0, 0.3),
                [0.8960435175801507, 0.7394254526319747, 0.5954175099004358]),
    "exp1": (lambda: fsp.exp1(_V), [1.2226505441838929, 0.5597735947761608, 0.310596578545543]),
    "expn": (lambda: fsp.expn(2, _V),
             [0.5742006442412032, 0.3266438623245532, 0.200851701280787]),
    "hyp1f1": (lambda: fsp.hyp1f1(_V, 2.0, _W),
               [1.2111071016925932, 1.9052621465543673, 6.675703794745598]),
    "lambertw": (lambda: fsp.lambertw(_W).real,
                 [0.7258613577662263, 0.8526055020137254, 1.1302893269741359]),
    "jv": (lambda: fsp.jv(_V, _W), [0.6043715108849577, 0.5130161365618283, 0.025301178295539312]),
    "kv": (lambda: fsp.kv(_V, _W),
           [0.21607318789620686, 0.11993777196806146, 0.021252593212385117]),
    "ellipkinc": (lambda: fsp.ellipkinc(_V, _V),
                  [0.20026548778155795, 0.5104671356280046, 0.8757438133205728]),
    "elliprf": (lambda: fsp.elliprf(_V, _W, _W),
                [1.0498420906206667, 0.8550332201079093, 0.652590668374015]),
    "beta.sf": (lambda: fst.beta.sf(_V, 2.0, 3.0), [0.8192, 0.3125, 0.0272]),
    "gamma.cdf": (lambda: fst.gamma.cdf(_W, 2.0),
                  [0.4421745996289252, 0.5939941502901616, 0.8641117745995668]),
    # the tests' counts and a Python popmean were made on the default device too
    "ttest_1samp": (lambda: (lambda r: [r.statistic, r.pvalue])(fst.ttest_1samp(_W, 2.0)),
                    [0.5547001962252294, 0.6348516283298891]),
    "linregress": (lambda: (lambda r: [r.slope, r.intercept, r.rvalue])(fst.linregress(_V, _W)),
                   [3.333333333333333, 0.666666666666667, 0.9607689228305228]),
    "moment": (lambda: fst.moment(np.array([1.0, 2.0, 4.0]), 2), 1.5555555555555554),
    # (standardize's operators gave NumPy scalars for 0-d input, which then went alone to the
    # default device; scipy.stats.chisquare([0.1, ..., 0.9]) below)
    "chisquare": (lambda: (lambda r: [r.statistic, r.pvalue])(fst.chisquare(
        np.linspace(0.1, 0.9, 6))), [0.8960000000000001, 0.9705105499856207]),
    # the initial conditions are made on the default device; the operators met NumPy input
    "filtfilt": (lambda: fsg.filtfilt(np.array([0.2, 0.3]), np.array([1.0, -0.5]),
                                      np.arange(8.0))[:3],
                 [0.01147135436534874, 1.0054427087306976, 2.0021354174613952]),
    "sosfiltfilt": (lambda: fsg.sosfiltfilt(fsg.butter(2, 0.3, output="sos"),
                                            np.arange(20.0))[:3],
                    [0.0001710859418089239, 0.9995562712585995, 1.9996215850786505]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_numpy_inputs_under_a_device_default(name: str) -> None:
    fn, want = CASES[name]
    with funcgrad.default_device("strict"):
        got = fn()
    got = [funcgrad.to_numpy(g) for g in got] if isinstance(got, list) else funcgrad.to_numpy(got)
    np.testing.assert_allclose(np.asarray(got, dtype=float), want, rtol=1e-12, atol=1e-15)
