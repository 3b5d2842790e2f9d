"""funcgrad.scipy.special.sph_harm_y (jax.scipy.special has it): values recorded from SciPy
1.17 (negative m, |m| > n, the poles, degree 60), a random grid against SciPy when
installed, broadcasting, the derivative in theta against SciPy's diff_n=1, complex64 for
float32, jit with a traced n (n_max given) and vmap; errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.scipy.special as fsp

N = np.array([0, 1, 1, 2, 3, 5, 4, 1, 60])
M = np.array([0, -1, 1, 2, -2, 3, 0, 2, 30])
TH = np.array([0.3, 1.0, 2.0, 0.7, 1.5, 2.9, 0.0, 0.3, 1.0])
PH = np.array([0.1, 0.5, 1.0, 2.0, 3.0, 5.0, 1.0, 0.1, 0.5])
WANT = np.array([0.28209479177387814 + 0j, 0.2551337003467925 - 0.1393801757425123j,
                 -0.16973971967952156 - 0.2643539506096446j,
                 -0.10478570021689712 - 0.12132311379702622j,
                 0.06906568201331381 + 0.020098541078084627j,
                 0.026938614039266166 - 0.023059275847233413j, 0.8462843753216345 + 0j, 0j,
                 -0.13447963775240507 + 0.11511368247262684j])


def test_values_as_scipy():
    assert_allclose(fsp.sph_harm_y(dev(N), dev(M), dev(TH), dev(PH)), WANT, rtol=1e-12,
                    atol=1e-15)
    out = fsp.sph_harm_y(dev(np.array([[1], [2]])), 0, dev(np.array([0.3, 0.5])), 0.1)
    assert host(out).shape == (2, 2)


def test_against_scipy_on_a_random_grid():
    sp = pytest.importorskip("scipy.special")
    rng = np.random.default_rng(0)
    n, m = rng.integers(0, 12, 300), rng.integers(-12, 13, 300)
    th, ph = rng.uniform(0, np.pi, 300), rng.uniform(0, 2 * np.pi, 300)
    assert_allclose(fsp.sph_harm_y(dev(n), dev(m), dev(th), dev(ph)),
                    sp.sph_harm_y(n, m, th, ph), rtol=1e-11, atol=1e-14)


def test_derivatives_dtypes_transformations():
    # SciPy's sph_harm_y(2, 1, 0.3, 0.1, diff_n=1)[1][0]: d/dtheta
    g = funcgrad.grad(lambda t: fsp.sph_harm_y(2, 1, t, 0.1).real)(0.3)
    assert_allclose(g, -0.6344263093706569, rtol=1e-12)
    assert host(fsp.sph_harm_y(1, 0, np.float32(0.3), np.float32(0.1))).dtype == np.complex64
    run = funcgrad.jit(lambda n, m, t, p: fsp.sph_harm_y(n, m, t, p, n_max=60))
    assert_allclose(run(dev(N), dev(M), dev(TH), dev(PH)), WANT, rtol=1e-12, atol=1e-15)
    got = funcgrad.vmap(lambda t: fsp.sph_harm_y(3, -2, t, 3.0))(dev(TH[4:5]))
    assert_allclose(got, WANT[4:5], rtol=1e-12)
    with pytest.raises(TypeError, match="n_max"):
        funcgrad.jit(lambda n: fsp.sph_harm_y(n, 0, 0.3, 0.1))(dev(np.array([1])))
    with pytest.raises(TypeError, match="diff_n"):
        fsp.sph_harm_y(1, 0, 0.3, 0.1, diff_n=1)
    with pytest.raises(TypeError, match="integer"):
        fsp.sph_harm_y(1.5, 0, 0.3, 0.1)
