"""funcgrad.scipy.stats.gaussian_kde against scipy.stats.gaussian_kde: 1-3 dimensions,
weights, every bw_method kind, evaluate/pdf/logpdf (far out too), the integrals,
set_bandwidth; resample's shape and moments; the pytree under jit; gradients; errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import DEVICE, assert_allclose, dev

import funcgrad
import funcgrad.random as fr
from funcgrad.scipy.stats import gaussian_kde
from funcgrad.test_util import check_grads

st = pytest.importorskip("scipy.stats")

_RNG = np.random.default_rng(0)
DATA = [(_RNG.normal(size=30), None), (_RNG.normal(size=(2, 40)), None),
        (_RNG.normal(size=(3, 25)), _RNG.uniform(size=25)),
        (_RNG.normal(size=20), _RNG.uniform(size=20))]
BW = [None, "scott", "silverman", 0.3, lambda k: 0.5 * k.scotts_factor()]


@pytest.mark.parametrize("i", range(len(DATA)))
@pytest.mark.parametrize("j", range(len(BW)))
def test_as_scipy(i, j):
    data, w = DATA[i]
    got = gaussian_kde(dev(data), BW[j], None if w is None else dev(w))
    want = st.gaussian_kde(data, BW[j], w)
    d = want.d
    pts = _RNG.normal(size=(d, 7)) * 2
    for name in ("evaluate", "pdf", "logpdf"):
        assert_allclose(getattr(got, name)(dev(pts)), getattr(want, name)(pts), rtol=1e-10)
    assert_allclose(got.logpdf(dev(pts * 30)), want.logpdf(pts * 30), rtol=1e-8)
    for name in ("covariance", "inv_cov", "neff", "factor"):
        assert_allclose(getattr(got, name), np.asarray(getattr(want, name)), rtol=1e-10,
                        check_dtype=False)
    assert (got.d, got.n) == (want.d, want.n)
    mean, cov = np.zeros(d), np.eye(d)
    assert_allclose(got.integrate_gaussian(dev(mean), dev(cov)),
                    np.asarray(want.integrate_gaussian(mean, cov)), rtol=1e-10)
    if d == 1:
        assert_allclose(got.integrate_box_1d(-0.5, 1.0),
                        np.asarray(want.integrate_box_1d(-0.5, 1.0)), rtol=1e-10)
    other = _RNG.normal(size=(d, 10))
    assert_allclose(got.integrate_kde(gaussian_kde(dev(other))),
                    np.asarray(want.integrate_kde(st.gaussian_kde(other))), rtol=1e-10)


def test_set_bandwidth_dtypes_and_jit():
    data = DATA[0][0]
    got, want = gaussian_kde(dev(data)), st.gaussian_kde(data)
    got.set_bandwidth("silverman")
    want.set_bandwidth("silverman")
    assert_allclose(got(dev(data)), want(data), rtol=1e-10)
    assert gaussian_kde(dev(data.astype(np.float32)))(dev(np.float32([0.0]))).dtype == np.float32
    kde = gaussian_kde(dev(DATA[1][0]))
    pts = np.zeros((2, 3))
    assert_allclose(funcgrad.jit(lambda k, p: k.logpdf(p))(kde, dev(pts)),
                    st.gaussian_kde(DATA[1][0]).logpdf(pts), rtol=1e-10)


def test_resample():
    kde = gaussian_kde(dev(DATA[1][0]))
    s = kde.resample(funcgrad.device_put(fr.key(0), DEVICE), (4000,))
    assert s.shape == (2, 4000)
    # Mean of the data; covariance of the data plus the kernel's.
    assert_allclose(s.mean(axis=1), DATA[1][0].mean(axis=1), atol=0.1)
    assert kde.resample(funcgrad.device_put(fr.key(1), DEVICE)).shape == (2,)


def test_gradients():
    data = DATA[0][0]
    check_grads(lambda d, x: gaussian_kde(d).logpdf(x), (dev(data), dev(np.array([0.3, 1.0]))),
                order=1)
    check_grads(lambda w: gaussian_kde(dev(data), weights=w).pdf(dev(np.array([0.2]))),
                (dev(_RNG.uniform(0.5, 1.5, size=30)),), order=1)


def test_errors():
    with pytest.raises(ValueError, match="multiple elements"):
        gaussian_kde(dev(np.array([1.0])))
    with pytest.raises(ValueError, match="bw_method"):
        gaussian_kde(dev(DATA[0][0]), bw_method="nope")
    with pytest.raises(ValueError, match="length n"):
        gaussian_kde(dev(DATA[0][0]), weights=dev(np.ones(3)))
    with pytest.raises(ValueError, match="dimension"):
        gaussian_kde(dev(DATA[1][0]))(dev(np.zeros((3, 2))))
    with pytest.raises(ValueError, match="1D"):
        gaussian_kde(dev(DATA[1][0])).integrate_box_1d(0.0, 1.0)


def test_numpy_points_and_weights_beside_a_device_dataset():
    # NumPy points/weights follow the dataset to its device (they met it as host arrays in
    # the formulas' operators); values: scipy.stats.gaussian_kde's
    y = np.linspace(0.0, 1.0, 8) ** 2
    data = funcgrad.device_put(y, "strict")
    assert_allclose(gaussian_kde(data)(np.array([0.3, 0.6])),
                    np.array([0.91392488, 0.61835663]), rtol=1e-7)
    assert_allclose(gaussian_kde(data, weights=np.arange(1.0, 9.0))(np.array([0.3, 0.6])),
                    np.array([0.79683597, 0.80500553]), rtol=1e-7)
