"""funcgrad.scipy.special gammaincinv / gammainccinv / betaincinv and the quantile functions
built on them (gamma, chi2, beta, f, t ``ppf``/``isf``; t's CDF at huge ``df``). Expected
values are SciPy's (``scipy.special`` / ``scipy.stats``, recorded as literals) except where
noted as mpmath's (SciPy itself is off there)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.scipy.special as fsp
import funcgrad.scipy.stats as fst

A = [0.05, 0.5, 1.0, 2.5, 30.0, 1e3]
P = [1e-300, 1e-20, 0.05, 0.5, 0.9, 1 - 1e-12]


def test_gammaincinv_values_tails_and_boundaries():
    want = [0.0, 7.853981633974489e-41, 0.05129329438755053, 2.175730095547763,
            37.1985028596843, 1238.8645816054106]
    assert_allclose(fsp.gammaincinv(dev(np.array(A)), dev(np.array(P))), np.array(want),
                    rtol=1e-12)
    want_c = [681.6070273145583, 43.58086671345491, 2.9957322735539913, 2.175730095547763,
              23.22944415010172, 793.4391431352981]
    assert_allclose(fsp.gammainccinv(dev(np.array(A)), dev(np.array(P))), np.array(want_c),
                    rtol=1e-12)
    nan, inf = np.nan, np.inf
    a = np.array([1.0, 1.0, 0.0, -1.0, 1.0, 1.0, inf, 1.0])
    y = np.array([0.0, 1.0, 0.5, 0.5, -0.1, 1.1, 0.5, nan])
    assert_allclose(fsp.gammaincinv(dev(a), dev(y)), np.array([0, inf, nan, nan, nan, nan, nan, nan]))
    assert_allclose(fsp.gammainccinv(dev(a), dev(y)), np.array([inf, 0, nan, nan, nan, nan, nan, nan]))
    assert fsp.gammaincinv(dev(np.float32([2.0])), 0.5).dtype == np.float32


def test_betaincinv_values_tails_and_boundaries():
    a = np.array([0.2, 2.0, 0.5, 30.0, 5.0, 1e3])
    b = np.array([3.0, 3.0, 0.5, 40.0, 0.1, 2.0])
    y = np.array([1e-12, 0.3, 0.5, 0.9, 1e-100, 0.999])
    want = [2.4953435372426364e-61, 0.27238394207510536, 0.5, 0.504629244871047,
            2.1003164948529028e-20, 0.9999546216957684]
    assert_allclose(fsp.betaincinv(dev(a), dev(b), dev(y)), np.array(want), rtol=1e-12)
    nan = np.nan
    a = np.array([1.0, 1.0, 0.0, 1.0, 2.0, 2.0, np.inf])
    b = np.array([1.0, 1.0, 1.0, 0.0, 3.0, 3.0, 1.0])
    y = np.array([0.0, 1.0, 0.5, 0.5, -0.1, 1.1, 0.5])
    assert_allclose(fsp.betaincinv(dev(a), dev(b), dev(y)), np.array([0, 1, nan, nan, nan, nan, nan]))


def test_inverse_derivatives_by_the_round_trip():
    # gammainc(a, gammaincinv(a, y)) == y: its derivative is 0 in a and 1 in y, to 2nd order.
    def rt_g(a, y):
        return fsp.gammainc(a, fsp.gammaincinv(a, y))

    def rt_gc(a, y):
        return fsp.gammaincc(a, fsp.gammainccinv(a, y))

    def rt_b(a, b, y):
        return fsp.betainc(a, b, fsp.betaincinv(a, b, y))

    for rt, args in ((rt_g, (2.5, 0.3)), (rt_gc, (0.7, 0.2)), (rt_b, (2.0, 3.5, 0.7))):
        n = len(args)
        g = funcgrad.grad(rt, argnums=tuple(range(n)))(*args)
        assert_allclose(np.array([float(host(v)) for v in g]), np.array([0.0] * (n - 1) + [1.0]),
                        atol=1e-11)
    # Second order in a (the rule's own derivative, through gammainc's in a).
    assert_allclose(funcgrad.grad(funcgrad.grad(rt_g))(2.5, 0.3), 0.0, atol=1e-9)


def test_inverse_derivatives_match_scipy_differences():
    # dx/da itself (SciPy, central differences of step 1e-6).
    assert_allclose(funcgrad.grad(fsp.gammaincinv)(2.5, 0.3), 0.81778001193, rtol=1e-8)
    assert_allclose(funcgrad.grad(fsp.betaincinv, argnums=(0, 1))(2.0, 3.5, 0.7),
                    (np.float64(0.12761421297), np.float64(-0.08571519564)), rtol=1e-8)


def test_inverse_under_jit_and_vmap():
    a, y = dev(np.array([0.5, 2.0, 30.0])), dev(np.array([0.1, 0.5, 0.99]))
    f = funcgrad.vmap(funcgrad.grad(fsp.gammaincinv, argnums=(0, 1)))
    assert_allclose(funcgrad.jit(f)(a, y), f(a, y), rtol=1e-12)
    g = funcgrad.jit(funcgrad.vmap(fsp.betaincinv, in_axes=(None, 0, 0)))(
        2.0, a, y)
    assert_allclose(g, fsp.betaincinv(2.0, a, y), rtol=1e-13)


Q = np.array([1e-12, 0.025, 0.3, 0.975])


@pytest.mark.parametrize("fn,args,want", [
    (fst.t.ppf, (3.0,), [-10331.108244292487, -3.1824463052837086, -0.5843897274398188,
                         3.1824463052837078]),
    (fst.t.ppf, (30.0,), [-11.397217523311413, -2.042272456301238, -0.5300190039065046,
                          2.0422724563012378]),
    (fst.chi2.ppf, (4.0,), [2.828428458080386e-06, 0.4844185570879299, 2.1946984214069833,
                            11.143286781877796]),
    (fst.chi2.isf, (4.0,), [62.1997463915383, 11.143286781877796, 4.878432966560408,
                            0.48441855708793014]),
    (fst.f.ppf, (3.0, 7.0), [7.55053223013907e-09, 0.06837889693755993, 0.49029710674478816,
                             5.889819167203253]),
    (fst.beta.ppf, (0.7, 2.0), [3.372330359636666e-18, 0.0024140549060720543,
                                0.0884796335970868, 0.799443004607904]),
    (fst.gamma.ppf, (2.0, 1.0, 3.0), [1.0000042426426872, 1.726627835631895,
                                      4.292047632110475, 17.714930172816693]),
])
def test_quantiles_match_scipy(fn, args, want):
    assert_allclose(fn(dev(Q), *args), np.array(want), rtol=1e-12)


def test_quantile_boundaries_and_isf_symmetry():
    q = dev(np.array([-0.1, 0.0, 0.5, 1.0, 1.1, np.nan]))
    nan, inf = np.nan, np.inf
    assert_allclose(fst.t.ppf(q, 3.0), np.array([nan, -inf, 0.0, inf, nan, nan]))
    assert_allclose(fst.gamma.ppf(q, 2.0, 1.0), np.array([nan, 1.0, 2.678346990016661, inf, nan, nan]),
                    rtol=1e-13)
    assert_allclose(fst.beta.isf(q, 2.0, 3.0), np.array([nan, 1.0, 0.3857275681323895, 0.0, nan, nan]),
                    rtol=1e-13)
    assert_allclose(fst.f.ppf(q, 3.0, 5.0)[1::2], np.array([0.0, np.inf, nan]))
    assert_allclose(fst.t.ppf(0.3, dev(np.array([0.0, -1.0]))), np.array([nan, nan]))
    assert np.isnan(float(fst.gamma.ppf(0.3, 2.0, 0.0, -1.0)))
    # isf(q) = ppf(1 - q), with the digits of a tiny q kept (1 - q would round them away).
    assert_allclose(fst.chi2.isf(1e-300, 3.0), 1388.3367738546858, rtol=1e-13)


def test_t_quantile_median_tails_and_huge_df():
    # Cauchy: ppf(q) = tan(pi (q - 1/2)); near the median and far in the tail (mpmath).
    assert_allclose(fst.t.ppf(0.499999999, 1.0), math.tan(math.pi * (0.499999999 - 0.5)),
                    rtol=1e-14)
    assert_allclose(fst.t.ppf(1e-300, 1.0), -3.1830988618379066e+299, rtol=1e-12)
    assert_allclose(fst.t.isf(1e-300, 1.0), 3.1830988618379066e+299, rtol=1e-12)
    # The derivative at the median is 1 / pdf(0), finite (the tail inversion's is not).
    assert_allclose(funcgrad.grad(fst.t.ppf)(0.5, 3.0), 1.0 / float(fst.t.pdf(0.0, 3.0)),
                    rtol=1e-13)
    g = funcgrad.grad(fst.t.ppf, argnums=(0, 1))(0.975, 3.0)
    assert_allclose(g[0], 1.0 / float(fst.t.pdf(3.1824463052837078, 3.0)), rtol=1e-11)
    assert np.isfinite(float(g[1])) and float(g[1]) < 0
    # Huge df (mpmath): betainc at shape df/2 = 5e9 would keep only ~7 digits.
    assert_allclose(fst.t.ppf(0.025, 1e6), -1.959966356814107, rtol=1e-14)
    x = dev(np.array([-8.0, -3.0, 0.5]))
    assert_allclose(fst.t.cdf(x, 1e10), np.array([6.2209612310670569e-16, 0.0013498980349539808,
                                                  0.69146246126851208]), rtol=1e-12)
    assert_allclose(fst.t.cdf(x, 1e6), np.array([6.2275317166012598e-16, 0.0013499312707108985,
                                                 0.69146240626381431]), rtol=1e-12)
    assert_allclose(fst.t.sf(3.0, 1e10), 0.0013498980349539808, rtol=1e-12)
    assert np.isfinite(float(funcgrad.grad(fst.t.cdf)(0.0, 1e8)))


def test_cephes_distribution_functions_match_scipy():
    assert_allclose(fsp.pdtr(dev(np.array([2.5, -1.0])), 3.0),
                    np.array([0.42319008112684364, np.nan]), rtol=1e-13)
    assert_allclose(fsp.pdtrc(2.5, 3.0), 0.5768099188731566, rtol=1e-13)
    assert_allclose(fsp.chdtr(3.0, dev(np.array([2.0, -1.0]))),
                    np.array([0.42759329552912023, np.nan]), rtol=1e-13)
    assert_allclose(fsp.chdtrc(3.0, 2.0), 0.5724067044708798, rtol=1e-13)
    assert_allclose(fsp.chdtri(3.0, 0.05), 7.814727903251178, rtol=1e-13)
    assert_allclose(fsp.gdtr(2.0, 3.0, dev(np.array([1.5, -1.0]))),
                    np.array([0.5768099188731566, np.nan]), rtol=1e-13)
    assert_allclose(fsp.gdtrc(2.0, 3.0, 1.5), 0.42319008112684364, rtol=1e-13)
    # d chdtri / dp = -2 / (d gammaincc(v/2, x/2) / dx * 2) = -1 / chi2.pdf(x)
    g = funcgrad.grad(fsp.chdtri, argnums=1)(3.0, 0.05)
    assert_allclose(g, -1.0 / float(fst.chi2.pdf(7.814727903251178, 3.0)), rtol=1e-10)
