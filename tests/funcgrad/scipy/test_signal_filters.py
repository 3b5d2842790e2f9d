"""funcgrad.scipy.signal lfilter / medfilt / medfilt2d: SciPy's values (recorded as
literals), initial states, axes, errors, derivatives and jit."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.scipy.signal as fsg

X = np.array([0.5, -1.0, 2.0, 0.25, 1.5, -0.75])


def test_lfilter_matches_scipy():
    assert_allclose(fsg.lfilter(dev(np.array([1.0, 2.0, 1.0])), dev(np.array([2.0, -0.4, 0.1])),
                                dev(X)),
                    np.array([0.25, 0.050000000000000044, 0.24750000000000005,
                              1.6720000000000002, 2.322025, 1.630805]), rtol=1e-13)
    y, zf = fsg.lfilter(dev(np.array([0.5, 0.25])), dev(np.array([1.0, -0.8])), dev(X),
                        zi=dev(np.array([0.3])))
    assert_allclose(y, np.array([0.55, 0.06500000000000006, 0.802, 1.2666, 1.82578,
                                 1.4606240000000001]), rtol=1e-13)
    assert_allclose(zf, np.array([0.9809992000000001]), rtol=1e-13)
    xx = dev(np.stack([X, X[::-1]]))
    assert_allclose(fsg.lfilter(dev(np.array([1.0])), dev(np.array([1.0, -0.5])), xx, axis=0),
                    np.array([[0.5, -1.0, 2.0, 0.25, 1.5, -0.75],
                              [-0.5, 1.0, 1.25, 2.125, -0.25, 0.125]]), rtol=1e-14)
    with pytest.raises(ValueError, match="a\\[0\\] must be nonzero"):
        fsg.lfilter(dev(np.array([1.0])), dev(np.array([0.0, 1.0])), dev(X))
    with pytest.raises(ValueError, match="unexpected shape for zi"):
        fsg.lfilter(dev(np.array([1.0, 1.0])), dev(np.array([1.0])), dev(X),
                    zi=dev(np.zeros(2)))


def test_lfilter_derivatives_and_jit():
    def total(p):
        return fsg.lfilter(p[:2], fnp.concatenate([fnp.ones(1), p[2:]]), dev(X)).sum()

    g = funcgrad.grad(total)(dev(np.array([1.0, 0.5, -0.3])))
    # y = (b0 + b1 z^-1) / (1 - 0.3 z^-1) x, summed: checked against central differences
    eps = 1e-6
    num = [(float(total(dev(np.array([1.0, 0.5, -0.3]) + eps * e)))
            - float(total(dev(np.array([1.0, 0.5, -0.3]) - eps * e)))) / (2 * eps)
           for e in np.eye(3)]
    assert_allclose(g, np.array(num), rtol=1e-7)
    f = funcgrad.jit(lambda v: fsg.lfilter(dev(np.array([1.0])), dev(np.array([1.0, -0.9])), v))
    assert_allclose(f(dev(X)), fsg.lfilter(dev(np.array([1.0])), dev(np.array([1.0, -0.9])),
                                           dev(X)), rtol=1e-14)


def test_medfilt_matches_scipy():
    v = dev(np.array([[4.0, 1.0, 7.0, 2.0], [3.0, 9.0, 5.0, 8.0], [6.0, 2.0, 0.0, 1.0]]))
    assert_allclose(fsg.medfilt(v, [3, 1]), np.array([[3.0, 1.0, 5.0, 2.0],
                                                      [4.0, 2.0, 5.0, 2.0],
                                                      [3.0, 2.0, 0.0, 1.0]]))
    assert_allclose(fsg.medfilt2d(v), fsg.medfilt(v, 3))
    with pytest.raises(ValueError, match="should be odd"):
        fsg.medfilt(v, 4)


B3 = np.array([0.018098933007514428, 0.05429679902254328, 0.05429679902254328,
               0.018098933007514428])  # scipy.signal.butter(3, 0.2)
A3 = np.array([1.0, -1.7600418803431688, 1.182893262037831, -0.27805991763454646])
X14 = np.array([0.5, -1.0, 2.0, 0.25, 1.5, -0.75, 0.3, 1.1, -0.2, 0.9, 1.4, -0.6, 0.05, 0.7])


def test_lfilter_zi_and_filtfilt_match_scipy():
    assert_allclose(fsg.lfilter_zi(dev(B3), dev(A3)),
                    np.array([0.9819010669924833, -0.8324376123732247, 0.2961588506420602]),
                    rtol=1e-12)
    assert_allclose(fsg.filtfilt(dev(B3), dev(A3), dev(X14)), np.array(
        [0.5063434657775867, 0.5538809818157355, 0.5832377722710481, 0.5806744387039436,
         0.546493532783276, 0.4973339609151822, 0.4543776206407803, 0.4290952173382145,
         0.4209029716359361, 0.42610969610094546, 0.44797729518354085, 0.49831616831011893,
         0.5859138142042042, 0.7009590821568985]), rtol=1e-11)
    assert_allclose(fsg.filtfilt(dev(B3), dev(A3), dev(X14), padtype="even", padlen=4),
                    np.array([0.3251054341015663, 0.3173938825425081, 0.36991777914209883,
                              0.4351465580648994, 0.480846372051419, 0.5024382802861628,
                              0.5111400480756192, 0.5143404628206648, 0.5072728695408996,
                              0.4789468100090716, 0.4240291491321315, 0.3507939491800557,
                              0.2775149652581276, 0.22058653107268972]), rtol=1e-11)
    with pytest.raises(ValueError, match="greater than padlen"):
        fsg.filtfilt(dev(B3), dev(A3), dev(np.ones(5)))
    g = funcgrad.grad(lambda v: fsg.filtfilt(dev(B3), dev(A3), v).sum())(dev(X14))
    assert np.all(np.isfinite(host(g)))


def test_butter_matches_scipy():
    b, a = fsg.butter(3, 0.2)
    assert_allclose(b, B3, rtol=1e-12)
    assert_allclose(a, A3, rtol=1e-12)
    b, a = fsg.butter(2, [0.1, 0.4], btype="band")
    assert_allclose(b, np.array([0.13110644, 0.0, -0.26221288, 0.0, 0.13110644]), rtol=1e-7,
                    atol=1e-12)
    assert_allclose(a, np.array([1.0, -2.18065784, 2.02000412, -1.02551085, 0.27221494]),
                    rtol=1e-7)
    z, p, k = fsg.butter(4, 100.0, "high", fs=1000.0, output="zpk")
    assert_allclose(z, np.ones(4))
    assert_allclose(k, 0.43284664499029174, rtol=1e-12)
    b, a = fsg.butter(2, 10.0, analog=True)  # s-domain: 100 / (s^2 + 10 sqrt(2) s + 100)
    assert_allclose(b, np.array([100.0]), rtol=1e-12)
    assert_allclose(a, np.array([1.0, 14.142135623730951, 100.0]), rtol=1e-12)
    with pytest.raises(ValueError, match="0 < Wn < 1"):
        fsg.butter(2, 1.5)
    with pytest.raises(ValueError, match="output must be"):
        fsg.butter(2, 0.5, output="tf")
