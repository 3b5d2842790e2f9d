"""funcgrad.scipy.special.hyp2f1 (jax.scipy.special has it): values recorded from SciPy 1.17
(the series, Pfaff's transformation for x < 0, the 1 - x connection formula near 1, the
direct series where c - a - b is an integer, Gauss' sum at x = 1, poles, polynomials, x > 1),
a random grid against SciPy when installed, derivatives in all four arguments (against
mpmath's), float32, jit and vmap."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, expected_fp_warnings, host

import funcgrad
import funcgrad.scipy.special as fsp

pytestmark = expected_fp_warnings

A = np.array([0.5, 1, 1, 1, 0.3, 1.5, 1, -2, 1, 1, 0, 1, 3, 0.3, 1.2, 2])
B = np.array([0.5, 1, 1, 1, 0.7, 2.5, 1, 1, 1, 1, 1, 1, 4, 0.7, 2.1, 1])
C = np.array([2, 2, 2, 2, 1.0, 4.0, 3, 3, -1, -1.5, 2, 2, 5.5, 1.3, 3.7, 1])
X = np.array([1.0, 1.5, -2.0, -10.0, 0.99, 0.95, 0.999, 5.0, 0.5, 0.5, 0.5, -1.0, -50.0, 0.999,
              -500.0, 0.5])
WANT = [1.2732395447351625, np.inf, 0.5493061443340546, 0.23978952727983635, 2.107710917717897,
        7.8242263412349855, 1.9881588189210588, 1.8333333333333335, np.inf, 16.520648300641145,
        1.0, 0.6931471805599451, 4.031626115347902e-05, 1.6774776372021662,
        0.0017998399140238379, 4.0]


def test_values_as_scipy():
    got = fsp.hyp2f1(*(dev(v.astype(float)) for v in (A, B, C, X)))
    assert_allclose(got, np.array(WANT), rtol=1e-12)
    assert np.isnan(host(fsp.hyp2f1(np.nan, 1.0, 2.0, 0.5)))


def test_against_scipy_on_a_random_grid():
    sp = pytest.importorskip("scipy.special")
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-3.0, 4.0, 300), rng.uniform(-3.0, 4.0, 300)
    c, x = rng.uniform(0.2, 6.0, 300), rng.uniform(-20.0, 0.999, 300)
    assert_allclose(fsp.hyp2f1(dev(a), dev(b), dev(c), dev(x)), sp.hyp2f1(a, b, c, x),
                    rtol=1e-10)


def test_derivatives():
    # mpmath.diff of mpmath.hyp2f1 at (0.5, 1.5, 2.7, -3.0) in a and b (SciPy's own values
    # jump under small changes of a there, so finite differences of SciPy are no reference)
    p = (0.5, 1.5, 2.7, -3.0)
    assert_allclose(funcgrad.grad(fsp.hyp2f1, argnums=0)(*p), -0.5578582946565516, rtol=1e-10)
    assert_allclose(funcgrad.grad(fsp.hyp2f1, argnums=1)(*p), -0.1508357702096898, rtol=1e-10)
    # d/dx 2F1(1, 2; 2; x) = d/dx (1 - x)^-1 = (1 - x)^-2; forward and reverse agree
    assert_allclose(funcgrad.grad(fsp.hyp2f1, argnums=3)(1.0, 2.0, 2.0, 0.5), 4.0, rtol=1e-12)
    q = (1.5, 2.5, 4.3, 0.95)  # the connection-formula branch
    rev = [funcgrad.grad(fsp.hyp2f1, argnums=i)(*q) for i in range(4)]
    fwd = [funcgrad.jvp(lambda v, i=i: fsp.hyp2f1(*q[:i], v, *q[i + 1:]), (q[i],), (1.0,))[1]
           for i in range(4)]
    assert_allclose(np.array([host(v) for v in rev]), np.array([host(v) for v in fwd]), rtol=1e-10)
    h = 1e-6
    for i in range(4):
        up, dn = list(q), list(q)
        up[i] += h
        dn[i] -= h
        fd = (float(host(fsp.hyp2f1(*up))) - float(host(fsp.hyp2f1(*dn)))) / (2 * h)
        assert_allclose(rev[i], fd, rtol=1e-6)


def test_dtypes_and_transformations():
    one = np.float32(1.0)
    assert host(fsp.hyp2f1(one, one, np.float32(2.0), dev(np.array([0.5], np.float32)))).dtype \
        == np.float32
    x = dev(np.array([-1.0, 0.5]))
    want = np.array([np.log(2.0), 2 * np.log(2.0)])  # -log(1 - x) / x
    assert_allclose(funcgrad.jit(lambda v: fsp.hyp2f1(1.0, 1.0, 2.0, v))(x), want, rtol=1e-13)
    ones = dev(np.ones(2))
    assert_allclose(funcgrad.vmap(fsp.hyp2f1)(ones, ones, 2 * ones, x), want, rtol=1e-13)
