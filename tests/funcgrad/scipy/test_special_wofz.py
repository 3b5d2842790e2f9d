"""funcgrad.scipy.special.wofz (jax.scipy.special has it): values recorded from SciPy 1.17 in
both half-planes and on the real axis, a random grid against SciPy when installed, the
holomorphic derivative, complex64 for single precision, jit and vmap."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, expected_fp_warnings, host

import funcgrad
import funcgrad.scipy.special as fsp

pytestmark = expected_fp_warnings

Z = np.array([0j, 1 + 1j, -3 - 0.5j, 30 + 0.1j, 2.5, -1.2 + 3j, 0.5 - 2j])
WANT = np.array([1 + 0j, 0.30474420525691254 + 0.2082189382028316j,
                 -0.037440117100424296 - 0.19302847942731746j,
                 6.27918019982522e-05 + 0.018816575212449248j,
                 0.0019304541362277093 + 0.25172302461185764j,
                 0.15843472170165315 - 0.058243477506477875j,
                 -35.6353035120019 + 77.38014237534546j])


def test_values_as_scipy():
    assert_allclose(fsp.wofz(dev(Z)), WANT, rtol=1e-12)
    got = host(fsp.wofz(dev(np.array([2.5]))))  # real input: complex128
    assert got.dtype == np.complex128
    assert_allclose(got, WANT[4:5], rtol=1e-12)


def test_against_scipy_on_a_random_grid():
    sp = pytest.importorskip("scipy.special")
    rng = np.random.default_rng(0)
    z = rng.normal(size=500) * 5 + 1j * rng.normal(size=500) * 5
    want = sp.wofz(z)
    ok = np.isfinite(want)
    assert_allclose(host(fsp.wofz(dev(z)))[ok], want[ok], rtol=1e-12)


def test_derivative_and_transformations():
    z = 1.0 + 1.0j
    t = funcgrad.jvp(fsp.wofz, (z,), (1.0 + 0j,))[1]
    assert_allclose(t, -2 * z * WANT[1] + 2j / np.sqrt(np.pi), rtol=1e-12)
    g = funcgrad.grad(lambda x: fsp.wofz(x).real)(1.0)  # d/dx Re w(x) = -2 x Re w(x)
    assert_allclose(g, -2.0 * np.exp(-1.0), rtol=1e-12)
    assert_allclose(funcgrad.jit(fsp.wofz)(dev(Z)), WANT, rtol=1e-12)
    assert_allclose(funcgrad.vmap(fsp.wofz)(dev(Z)), WANT, rtol=1e-12)
    assert host(fsp.wofz(dev(np.array([1.0], np.float32)))).dtype == np.complex64
    assert host(fsp.wofz(dev(np.array([1j], np.complex64)))).dtype == np.complex64
