"""funcgrad.scipy.special.ellipk / ellipkm1 / ellipe against SciPy 1.17 (values recorded as
literals) and their derivatives against mpmath's."""

from __future__ import annotations

import warnings

import numpy as np
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.scipy.special as fsp

INF, NAN = np.inf, np.nan
M = [-INF, -1e300, -1e10, -1.0, -1e-5, 0.0, 1e-3, 0.5, 0.9, 1 - 1e-16, 1.0, 1.5, NAN]


def _call(f, x):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return host(f(dev(np.array(x))))


def test_ellipk_ellipe_match_scipy_everywhere():
    assert_allclose(_call(fsp.ellipk, M), np.array([
        0.0, 3.4677405831022676e-148, 1.2899219825792638e-004, 1.3110287771460598e+000,
        1.5707923998261688e+000, 1.5707963267948966e+000, 1.5711892469233444e+000,
        1.8540746773013719e+000, 2.5780921133481733e+000, 1.9754694645958441e+001, INF, NAN,
        NAN]), rtol=1e-15)
    assert_allclose(_call(fsp.ellipe, M), np.array([
        INF, 9.9999999999999998e+149, 1.0000000006699612e+005, 1.9100988945138562e+000,
        1.5708002537783503e+000, 1.5707963267948966e+000, 1.5704035540514234e+000,
        1.3506438810476755e+000, 1.1047747327040733e+000, 1.0000000000000011e+000, 1.0, NAN,
        NAN]), rtol=1e-15)
    assert_allclose(_call(fsp.ellipkm1, [-1.0, 0.0, 1e-300, 1e-20, 0.5, 2.0, INF]), np.array([
        NAN, INF, 346.77405831022674, 24.412145291060348, 1.8540746773013719,
        1.3110287771460598, 0.0]), rtol=1e-15)


def test_derivatives_against_mpmath():
    dk = funcgrad.grad(fsp.ellipk)
    assert_allclose(np.array([float(dk(0.3)), float(funcgrad.grad(dk)(0.3))]),
                    np.array([0.5848582159226464, 0.926328931788758]), rtol=1e-13)
    de = funcgrad.grad(fsp.ellipe)
    d2 = funcgrad.grad(de)
    got = np.array([float(de(-3.0)), float(d2(-3.0)), float(funcgrad.grad(d2)(-3.0))])
    assert_allclose(got, np.array([-0.2239757052311829, -0.024197900595041823,
                                   -0.008182927301839405]), rtol=1e-13)
    # At m = 0 the closed forms are 0/0: pi/8 and -pi/8 from the series.
    assert abs(float(dk(0.0)) - np.pi / 8) < 1e-15 and abs(float(de(0.0)) + np.pi / 8) < 1e-15
    # ellipkm1(p) = K(1 - p): its derivative is -K'(m).
    assert abs(float(funcgrad.grad(fsp.ellipkm1)(0.5)) + 0.847213084793979) < 1e-14
    got = funcgrad.jit(funcgrad.vmap(de))(dev(np.array([0.1, 0.5])))
    assert_allclose(got, host(funcgrad.vmap(de)(dev(np.array([0.1, 0.5])))), rtol=1e-14)
