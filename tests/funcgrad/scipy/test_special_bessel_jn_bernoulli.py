"""funcgrad.scipy.special.bessel_jn against scipy.special.jv (values, float32, near 0, the
derivative against jvp, jit, vmap) and bernoulli against the exact rationals and
scipy.special.bernoulli."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.scipy.special as fsp
from funcgrad.test_util import check_grads

ss = pytest.importorskip("scipy.special")

Z = np.array([0.0, 1e-5, -2e-4, 9e-4, 1.1e-3, 0.5, 1.0, 2.5, -3.0, 7.0, 15.0, 25.0, -0.7,
              1e-200])


def test_bessel_jn_as_scipy():
    want = np.stack([ss.jv(k, Z) for k in range(6)])
    assert_allclose(fsp.bessel_jn(dev(Z), v=5), want, rtol=1e-11, atol=1e-13)
    got32 = fsp.bessel_jn(dev(Z.astype(np.float32)), v=2)
    assert got32.dtype == np.float32
    assert_allclose(got32, want[:3].astype(np.float32), rtol=1e-5, atol=1e-6)
    z2 = Z[5:9].reshape(2, 2)
    assert fsp.bessel_jn(dev(z2), v=3).shape == (4, 2, 2)
    assert_allclose(fsp.bessel_jn(dev(np.array(2.5)), v=0), np.array([ss.jv(0, 2.5)]),
                    rtol=1e-12)


def test_bessel_jn_derivative_jit_vmap():
    g = funcgrad.vmap(funcgrad.grad(lambda x: fsp.bessel_jn(x, v=2)[2]))(dev(Z))
    assert_allclose(g, ss.jvp(2, Z), rtol=1e-9, atol=1e-12)
    check_grads(lambda x: fsp.bessel_jn(x, v=3), (dev(np.array([0.3, 1.7, -4.0])),), order=2)
    assert_allclose(funcgrad.jit(lambda x: fsp.bessel_jn(x, v=1))(dev(Z)),
                    np.stack([ss.jv(0, Z), ss.jv(1, Z)]), rtol=1e-11, atol=1e-13)
    with pytest.raises(ValueError, match="v <= n_iter"):
        fsp.bessel_jn(dev(Z), v=60)


def test_bernoulli_exact_and_as_scipy():
    b = host(fsp.bernoulli(12))
    exact = [1, Fraction(-1, 2), Fraction(1, 6), 0, Fraction(-1, 30), 0, Fraction(1, 42), 0,
             Fraction(-1, 30), 0, Fraction(5, 66), 0, Fraction(-691, 2730)]
    np.testing.assert_array_equal(b, np.array([float(v) for v in exact]))
    for n in (0, 1, 2, 30, 300, 400):
        got, want = host(fsp.bernoulli(n)), ss.bernoulli(n)
        assert got.shape == want.shape
        # SciPy's own B_4 is 1.7e-12 off; funcgrad's are the exact values rounded once.
        np.testing.assert_allclose(got, want, rtol=1e-11)
    with pytest.raises(ValueError, match="non-negative"):
        fsp.bernoulli(-1)
    with pytest.raises(TypeError, match="concrete"):
        funcgrad.jit(fsp.bernoulli)(3)
