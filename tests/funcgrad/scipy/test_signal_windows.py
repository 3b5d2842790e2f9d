"""funcgrad.scipy.signal.get_window: the windows beyond the cosine family (parzen, bohman,
barthann, lanczos, general_gaussian, exponential, taylor, chebwin, general_cosine, dpss)
against scipy.signal.get_window 1.17 values recorded as literals (periodic and symmetric),
SciPy's aliases, their use in welch, and the errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad.scipy.signal as fss

NEW_WINDOWS = [
    ('parzen', 7, True, [0.00390625, 0.10546875, 0.47265625, 0.91796875, 0.91796875, 0.47265625, 0.10546875]),
    ('parzen', 6, False, [0.009259259259259254, 0.25, 0.8611111111111112, 0.8611111111111112, 0.25, 0.009259259259259254]),
    ('bohman', 7, True, [0.0, 0.07072474681109339, 0.43748401216760524, 0.9103685132461523, 0.9103685132461525, 0.4374840121676056, 0.07072474681109348]),
    ('bohman', 6, False, [0.0, 0.1791238937062839, 0.8343114522576858, 0.8343114522576855, 0.1791238937062838, 0.0]),
    ('barthann', 7, True, [0.0, 0.21164530386510985, 0.6017008120462566, 0.9280824555172049, 0.9280824555172051, 0.6017008120462566, 0.21164530386511002]),
    ('barthann', 6, False, [0.0, 0.35857354213752, 0.8794264578624801, 0.8794264578624801, 0.3585735421375199, 0.0]),
    ('lanczos', 7, True, [3.8981718325193755e-17, 0.3484105662790243, 0.7241014497826596, 0.9667663853085522, 0.9667663853085522, 0.7241014497826596, 0.3484105662790243]),
    ('lanczos', 6, False, [3.8981718325193755e-17, 0.5045511524271046, 0.935489283788639, 0.935489283788639, 0.5045511524271046, 3.8981718325193755e-17]),
    (('general_gaussian', 1.5, 2.0), 7, True, [0.06858458348811015, 0.3766034507108804, 0.8098246793420792, 0.9922179382602435, 0.9922179382602435, 0.8098246793420792, 0.3766034507108804]),
    (('general_gaussian', 1.5, 2.0), 6, False, [0.3766034507108804, 0.8098246793420792, 0.9922179382602435, 0.9922179382602435, 0.8098246793420792, 0.3766034507108804]),
    (('exponential', None, 3.0), 7, True, [0.3114032239145977, 0.4345982085070782, 0.6065306597126334, 0.8464817248906141, 0.8464817248906141, 0.6065306597126334, 0.4345982085070782]),
    (('exponential', None, 3.0), 6, False, [0.4345982085070782, 0.6065306597126334, 0.8464817248906141, 0.8464817248906141, 0.6065306597126334, 0.4345982085070782]),
    (('exponential', 2.0, 1.5), 7, True, [0.26359713811572677, 0.513417119032592, 1.0, 0.513417119032592, 0.26359713811572677, 0.1353352832366127, 0.06948345122280154]),
    ('taylor', 7, True, [0.2793462998238399, 0.5149598981910933, 0.7973015281194145, 0.9756107180961113, 0.9756107180961113, 0.7973015281194145, 0.5149598981910933]),
    ('taylor', 6, False, [0.306346927307408, 0.6620647789400378, 0.9570021269253987, 0.9570021269253987, 0.6620647789400378, 0.306346927307408]),
    (('taylor', 3, 25, False), 7, True, [0.5558960676038182, 0.8370257208906386, 1.1926439037693837, 1.4144343077361596, 1.4144343077361596, 1.1926439037693837, 0.8370257208906386]),
    (('taylor', 3, 25, False), 6, False, [0.5871222840154453, 1.0209795927923613, 1.3918981231921934, 1.3918981231921934, 1.0209795927923613, 0.5871222840154453]),
    (('chebwin', 60), 7, True, [0.06847555416399577, 0.303219161655201, 0.686846620773932, 1.0, 1.0, 0.686846620773932, 0.303219161655201]),
    (('chebwin', 60), 6, False, [0.13265103435564682, 0.5477085429608683, 1.0, 1.0, 0.5477085429608683, 0.13265103435564682]),
    (('general_cosine', [0.3, 0.4, 0.3]), 7, True, [0.19999999999999996, -0.016152200930387786, 0.11871771321180008, 0.8474344877185878, 0.8474344877185878, 0.11871771321180008, -0.016152200930387786]),
    (('general_cosine', [0.3, 0.4, 0.3]), 6, False, [0.19999999999999996, -0.06631189606246324, 0.7163118960624633, 0.7163118960624633, -0.06631189606246324, 0.19999999999999996]),
    (('dpss', 1.5), 7, True, [0.16884694611259804, 0.4474035423491868, 0.7642680160775074, 0.9770992366412211, 0.9770992366412213, 0.7642680160775076, 0.4474035423491868]),
    (('dpss', 1.5), 6, False, [0.2187100075014734, 0.6194938570345614, 0.96, 0.96, 0.6194938570345614, 0.2187100075014734]),
]


@pytest.mark.parametrize("window, n, fftbins, want", NEW_WINDOWS)
def test_window_as_scipy(window, n, fftbins, want):
    assert_allclose(fss.get_window(window, n, fftbins), np.array(want), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("alias, name", [
    ("parz", "parzen"), ("bmn", "bohman"), ("bth", "barthann"), ("sinc", "lanczos"),
    ("poisson", "exponential"), ("taylorwin", "taylor"), ("triangle", "triang"),
    (("ggs", 1.5, 2.0), ("general_gaussian", 1.5, 2.0)), (("cheb", 60), ("chebwin", 60)),
    (("general cosine", [0.5, 0.5]), "hann")])
def test_aliases(alias, name):
    assert_allclose(fss.get_window(alias, 9), fss.get_window(name, 9), rtol=1e-15, atol=0.0)


def test_welch_with_new_windows():
    # welch normalises by the window: a constant-power white signal's PSD level is the same
    # whatever the window; here against welch with the window passed as an array.
    x = dev(np.random.default_rng(0).normal(size=256))
    for window in ["parzen", ("chebwin", 80), ("dpss", 2.0), "taylor"]:
        f1, p1 = fss.welch(x, window=window, nperseg=64)
        f2, p2 = fss.welch(x, window=dev(fss.get_window(window, 64)), nperseg=64)
        assert_allclose(p1, p2, rtol=1e-12, atol=1e-15)


def test_window_errors():
    with pytest.raises(ValueError, match="needs a parameter"):
        fss.get_window("chebwin", 8)
    with pytest.raises(ValueError, match="needs a parameter"):
        fss.get_window("dpss", 8)
    with pytest.raises(ValueError, match="NW"):
        fss.get_window(("dpss", 4.0), 8)
    with pytest.raises(ValueError, match="center"):
        fss.get_window(("exponential", 2.0, 1.0), 8, fftbins=False)
    with pytest.raises(ValueError, match="unknown window"):
        fss.get_window("bogus", 8)
