"""funcgrad.scipy.signal.periodogram and hilbert: values recorded from SciPy 1.17, under jit,
vmap and grad; every option against scipy.signal when it is installed; errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.signal as fss

X = np.array([0.5, -1.0, 2.0, 0.25, 1.5, -0.75, 0.0, 1.0, -2.0])


def test_periodogram_values():
    f, p = fss.periodogram(dev(X), fs=2.0)
    assert_allclose(f, np.array([0.0, 0.2222222222222222, 0.4444444444444444,
                                 0.6666666666666666, 0.8888888888888888]))
    assert_allclose(p, np.array([0.0, 1.252269327448818, 0.6474778611333639, 0.4375,
                                 4.100252811417817]), atol=1e-15)
    # nfft shorter than the signal truncates it, then one hann-windowed segment
    f, p = funcgrad.jit(lambda x: fss.periodogram(x, nfft=6, window="hann",
                                                  scaling="spectrum"))(dev(X))
    assert_allclose(f, np.array([0.0, 1 / 6, 1 / 3, 0.5]))
    assert_allclose(p, np.array([0.15668402777777762, 0.3133680555555555, 0.1901041666666664,
                                 0.8789062499999998]))


def test_hilbert_values_and_derivative():
    want = np.array([0.4999999999999999 - 0.42803890189942734j,
                     -0.9999999999999996 - 1.0203710921661115j,
                     1.9999999999999996 - 1.0810327978771455j,
                     0.2500000000000001 + 0.7011064184101868j,
                     1.4999999999999996 - 0.06872326022173879j,
                     -0.75 + 1.8851947869075156j, -1.5721056221874172j,
                     1 + 1.9551197561722888j, -1.9999999999999996 - 0.3711492871381508j])
    assert_allclose(fss.hilbert(dev(X)), want)
    assert_allclose(funcgrad.jit(fss.hilbert)(dev(X)), want)
    want6 = np.array([0.5 + 0.14433756729740646j, -1 - 0.8660254037844385j,
                      2 - 0.721687836487032j, 0.25 + 0.2886751345948128j,
                      1.5 + 0.5773502691896257j, -0.75 + 0.5773502691896257j])
    assert_allclose(fss.hilbert(dev(X), N=6), want6)
    assert_allclose(funcgrad.vmap(fss.hilbert)(dev(np.stack([X, 2 * X]))),
                    np.stack([want, 2 * want]))
    # linear: the derivative of the imaginary part's k-th entry is the k-th row of H
    h = np.imag(want)
    g = funcgrad.grad(lambda x: fss.hilbert(x).imag @ dev(X))(dev(X))
    assert_allclose(float(g @ dev(X)), float(h @ X))
    assert fss.hilbert(dev(np.ones(4, np.float32))).dtype == np.complex64


def test_against_scipy():
    ss = pytest.importorskip("scipy.signal")
    rng = np.random.default_rng(0)
    for shape, axis in [((64,), -1), ((3, 50), -1), ((51, 2), 0)]:
        x = rng.normal(size=shape)
        for kw in [{}, {"fs": 10.0, "nfft": 100}, {"nfft": 40, "detrend": "linear"},
                   {"return_onesided": False, "window": None}]:
            for got, want in zip(fss.periodogram(dev(x), axis=axis, **kw),
                                 ss.periodogram(x, axis=axis, **kw)):
                assert_allclose(got, want)
        for n in (None, 7, 100):
            assert_allclose(fss.hilbert(dev(x), N=n, axis=axis), ss.hilbert(x, N=n, axis=axis))


@pytest.mark.parametrize("call,match", [
    (lambda: fss.hilbert(np.ones(3) + 1j), "must be real"),
    (lambda: fss.hilbert(np.ones(3), N=0), "N must be positive"),
    (lambda: fss.periodogram(np.ones(8), window=np.ones(3)), "size of the window"),
])
def test_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()
