"""funcgrad.scipy.special.binom and the binomial / negative binomial / F distribution
functions (bdtr, bdtrc, bdtri, nbdtr, nbdtrc, nbdtri, fdtr, fdtrc, fdtri).

Expected values are SciPy 1.17's, recorded as literals (CI may lack SciPy).
"""

from __future__ import annotations

import numpy as np
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.scipy.special as fsp

INF, NAN = np.inf, np.nan


def _call(f, *args):
    return host(f(*[dev(np.asarray(a, dtype=np.float64)) for a in args]))


def test_binom_matches_scipy():
    n = [5, -1, -1.5, 2.5, 10, 1e10, 1e20, 3, 0.5, 0, 20, 7.3, 40, 60]
    k = [2, 2, 2, 1.5, 11, 3, 2.5, 5.5, 1e9, 0, 10, 2.2, 19, -2.5]
    want = np.array([
        1.0000000000000000e+01, NAN, 1.8750000000000000e+00, 2.5000000000000000e+00,
        0.0, 1.6666666661666664e+29, 3.0090111122547529e+49, 8.8189752016288332e-03,
        -8.9206205829940112e-15, 1.0, 1.8475600000000000e+05, 2.6879323174455120e+01,
        1.3128240839999997e+11, 1.4123951389001109e-05])
    assert_allclose(_call(fsp.binom, n, k), want, rtol=1e-12)


def test_binom_derivatives_are_the_smooth_formulas():
    # d/dn = binom (psi(n + 1) - psi(n - k + 1)), d/dk = binom (psi(n - k + 1) - psi(k + 1)),
    # also where the value is the exact integer product.
    gn, gk = funcgrad.grad(fsp.binom, argnums=(0, 1))(5.0, 2.0)
    assert abs(float(gn) - 4.5) < 1e-13 and abs(float(gk) - 10.0 / 3.0) < 1e-13
    got = funcgrad.jit(funcgrad.vmap(funcgrad.grad(fsp.binom)))(
        dev(np.array([2.5, 7.3])), dev(np.array([1.5, 3.0])))
    assert_allclose(got, np.array([1.7009307638669382, 19.678333333333363]), rtol=1e-12)


def test_binomial_distribution_functions():
    k = [-1, 0, 2, 2.7, 5, 6, 2]
    p = [0.3, 1e-10, 0.3, 0.3, 0.3, 0.3, 1.2]
    assert_allclose(_call(fsp.bdtr, k, 5.0, p),
                    np.array([NAN, 0.9999999995, 0.83692, 0.83692, 1.0, NAN, NAN]), rtol=1e-13)
    assert_allclose(_call(fsp.bdtrc, k, 5.0, p),
                    np.array([1.0, 4.9999999990000000e-10, 0.16308, 0.16308, 0.0, NAN, NAN]),
                    rtol=1e-13)
    assert_allclose(_call(fsp.bdtri, [0, 2, 5, -1, 3], 5.0, [0.3, 0.5, 0.5, 0.5, 1e-12]),
                    # The last one is mpmath's root (SciPy's 0.9999996837756318 loses 1 - x).
                    np.array([0.2139969144033772, 0.5, NAN, NAN, 0.999999683772134]),
                    rtol=1e-12)
    # bdtri inverts bdtr in p, and its derivative is 1 / (d bdtr / dp).
    g = funcgrad.grad(fsp.bdtri, argnums=2)(2.0, 5.0, 0.83692)
    assert abs(float(g) + 1.0 / 1.323) < 1e-10


def test_negative_binomial_distribution_functions():
    k = [-1, 0, 2, 2.5]
    assert_allclose(_call(fsp.nbdtr, k, 3.0, 0.4),
                    np.array([NAN, 0.064, 0.31744, 0.31744]), rtol=1e-13)
    assert_allclose(_call(fsp.nbdtrc, k, 3.0, 0.4),
                    np.array([NAN, 0.936, 0.68256, 0.68256]), rtol=1e-13)
    assert_allclose(_call(fsp.nbdtri, [0, 2], 3.0, [0.4, 1e-9]),
                    np.array([7.368062997280773e-01, 4.642666601310034e-04]), rtol=1e-12)


def test_f_distribution_functions():
    assert_allclose(_call(fsp.fdtr, [1, 2, -1, 7.5, 2], [3, 4, 3, 0.5, 100],
                          [0.5, 2.0, 1, 1e6, INF]),
                    np.array([0.46952222906704294, 0.75, NAN, 0.9759513042830276, 1.0]),
                    rtol=1e-13)
    assert_allclose(_call(fsp.fdtrc, [1, 2, 0.5, 2], [3, 100, 7.5, 4], [0.5, 30.0, 1e-8, INF]),
                    np.array([5.304777709329570e-01, 6.223015277861133e-11,
                              9.923951342762662e-01, 0.0]), rtol=1e-12)
    assert_allclose(_call(fsp.fdtri, [1, 2, 100, 3], [3, 4, 0.5, 7], [0.5, 1e-10, 0.9999, 1.0]),
                    np.array([5.8506027405182148e-01, 1.0000000000750000e-10,
                              3.6761487618678595e+15, INF]), rtol=1e-10)
    # The quantile's derivative in p is 1 / pdf (pdf of F(2, 4) at 2 is 1/8).
    assert abs(float(funcgrad.grad(fsp.fdtri, argnums=2)(2.0, 4.0, 0.75)) - 8.0) < 1e-10
