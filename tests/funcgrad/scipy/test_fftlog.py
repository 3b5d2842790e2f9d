"""``funcgrad.scipy.fft.fht``/``ifht``/``fhtoffset`` (FFTLog) against SciPy 1.17's values
(recorded literals), the singular-transform warnings, dtypes and derivatives."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.scipy.fft as fsf

A = np.arange(1.0, 9.0)


@pytest.mark.parametrize("fn, args, want", [
    # scipy.fft.fht / ifht(np.arange(1., 9.), *args)
    (fsf.fht, (0.3, 1.5, 0.2, 0.5), [3.83809335, 4.74809839, 4.37224496, 6.38178053,
                                     7.96022589, 3.27256559, 2.20419767, 2.98877695]),
    (fsf.ifht, (0.3, 1.5, 0.2, 0.5), [0.36070586, 4.82355655, 3.53914404, 10.01447583,
                                      6.4566516, 6.33197715, -0.32511202, 9.67856098]),
    (fsf.fht, (0.5, 0.0, 0.0, 1.0), [-2.65203429e+01, -2.10331318e+01, 6.23893398e+00,
                                     7.94379050e+00, -6.30845145e-01, 1.70606975e+00,
                                     -8.50769243e-03, -2.20882321e-01]),
])
def test_values_as_scipy(fn, args, want) -> None:
    assert_allclose(fn(dev(A), *args), np.array(want), rtol=1e-8, atol=1e-8)


def test_singular_transforms_warn_and_give_scipys_values() -> None:
    # u_0 = 2^q Gamma(xp) / Gamma(xm) is inf (fht) or 0 (ifht): SciPy warns and zeroes it.
    with pytest.warns(UserWarning, match="singular transform"):
        got = fsf.fht(dev(A), 0.5, 0.0, bias=-1.0)
    assert_allclose(got, np.array([1.65383105, 1.73710294, -3.66795062, -10.35473009,
                                   -5.93011428, -3.83288521, 13.98904392, 45.47021602]),
                    rtol=1e-8)
    with pytest.warns(UserWarning, match="singular inverse transform"):
        got = fsf.ifht(dev(A), 0.5, 0.0, bias=1.0)
    assert_allclose(got, np.array([1.82087712, 1.46169054, -3.21387233, -11.10337862,
                                   -4.69580151, -5.86792292, 17.34425388, 39.93840998]),
                    rtol=1e-8)


def test_offset_inverse_batches_dtypes_derivatives() -> None:
    assert fsf.fhtoffset(0.1, 2.0, initial=0.5) == pytest.approx(0.5454581477676637, abs=1e-13)
    assert fsf.fhtoffset(1.3, -0.5, 0.3, 0.4) == pytest.approx(0.8508007786268879, abs=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = fsf.ifht(fsf.fht(dev(A), 0.3, 1.5, 0.2, 0.5), 0.3, 1.5, 0.2, 0.5)
    assert_allclose(back, A, rtol=1e-10)
    # the last axis, leading ones batched (SciPy's [[2.153.., ...], [5.153.., ...]])
    got = fsf.fht(dev(np.arange(6.0).reshape(2, 3)), 0.3, -0.5)
    assert_allclose(got, np.array([[2.15347741, 0.46927642, 0.37724617],
                                   [5.15347741, 3.46927642, 3.37724617]]), rtol=1e-8)
    assert host(fsf.fht(dev(A.astype(np.float32)), 0.3, 1.5)).dtype == np.float32
    assert host(fsf.fht(dev(np.arange(8)), 0.3, 1.5)).dtype == np.float64
    # linear: the gradient of one output is the transform's row, found by vmap and jit too
    row = host(funcgrad.grad(lambda v: fsf.fht(v, 0.3, 1.5, bias=0.5)[2])(dev(A)))
    jac = host(funcgrad.jit(funcgrad.jacrev(lambda v: fsf.fht(v, 0.3, 1.5, bias=0.5)))(dev(A)))
    assert_allclose(row, jac[2], rtol=1e-12)
    assert_allclose(jac @ A, fsf.fht(dev(A), 0.3, 1.5, bias=0.5), rtol=1e-10)
    with pytest.raises(TypeError, match="must be real"):
        fsf.fht(dev(A + 1j), 0.3, 1.5)
    with pytest.raises(TypeError, match="concrete number"):
        funcgrad.jit(lambda d: fsf.fht(dev(A), d, 1.5))(0.3)


def test_device_input_with_the_default_device_left_at_cpu():
    # fht's constants (bias, the coefficients) went to the default device and met the input
    # by an operator, which CuPy refuses (strict arrays too)
    from funcgrad.backend import device_of, to_numpy
    a = np.random.default_rng(0).normal(size=8)
    want = fsf.fht(a, 0.1, 0.5, bias=0.3)
    x = funcgrad.device_put(a, "strict")
    with funcgrad.default_device("cpu"):
        got = fsf.fht(x, 0.1, 0.5, bias=0.3)
        back = fsf.ifht(got, 0.1, 0.5, bias=0.3)
    assert device_of(got) == "strict" and device_of(back) == "strict"
    assert_allclose(to_numpy(got), host(want), rtol=1e-12, atol=1e-12)
    assert_allclose(to_numpy(back), a, rtol=1e-9, atol=1e-9)
