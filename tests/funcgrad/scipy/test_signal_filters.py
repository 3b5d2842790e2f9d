"""funcgrad.scipy.signal lfilter / medfilt / medfilt2d: SciPy's values (recorded as
literals), initial states, axes, errors, derivatives and jit."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

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
