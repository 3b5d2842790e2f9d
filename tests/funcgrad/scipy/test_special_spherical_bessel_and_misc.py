"""funcgrad.scipy.special spherical_jn/yn/in/kn (values and derivative=True), the jn/yn/kn/
jve/yve aliases, erfi, voigt_profile, powm1 and perm: SciPy 1.17's values, silently."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.special as fsp

INF, NAN = np.inf, np.nan
N = np.array([0, 1, 2, 5, 0, 1, 2, 3, 7, 2])
Z = np.array([0.0, 0.0, 1e-8, 1.5, -1.5, -2.0, 30.0, 1e5, 0.3, INF])

# scipy.special.spherical_<k>n(N, Z) and (..., derivative=True)
SPHERICAL = {
    "j": ([1.0, 0.0, 6.666666666666662e-18, 0.0006696205962893252, 0.6649966577360363,
           -0.43539777497999166, 0.03231043467857091, -9.99362950867049e-06,
           1.076068491011496e-10, 0.0],
          [-0.0, 0.3333333333333333, 1.3333333333333353e-09, 0.0021538946446362276,
           0.3961729707122223, 0.019250938432849196, -0.009470571379768629,
           -3.567884261903404e-07, 2.50892700524635e-09, 0.0]),
    "y": ([-INF, -INF, -3.0000000000000005e+24, -94.23611008523245, 0.04715813444513527,
           -0.35061200427605527, 0.008418014693241499, 3.568883626996201e-07,
           -2066815019.200656, 0.0],
          [INF, NAN, 9e+32, 360.6068763992741, 0.6964354140327931, -0.5586854225496265,
           0.03192119550056281, -9.993633071557942e-06, 55067341382.887054, 0.0]),
    "i": ([1.0, 0.0, 6.666666666666669e-18, 0.0007961612654698086, 1.4195196367298777,
           -0.9743827435800614, 160890811755.1738, INF, 1.0817804309667218e-10, INF],
          [0.0, 0.3333333333333333, 1.3333333333333333e-09, 0.0027446967590354946,
           -0.6219266523422458, 0.8390474603434488, 156081898193.48785, NAN,
           2.526062831554059e-09, NAN]),
    "k": ([INF, INF, 4.7123889803846893e+24, 115.24697389769933, -4.693213819682584,
           -2.901675544670425, 5.405936054991407e-15, 0.0, 3224146971.89928, 0.0],
          [-INF, -INF, -1.4137166941154068e+33, -479.56830055876014, 1.5644046065608617,
           2.901675544670426, -5.603554865460882e-15, -0.0, -86051609220.20155, -0.0]),
}


@pytest.mark.parametrize("kind", list(SPHERICAL))
def test_spherical_bessel_matches_scipy(kind):
    fn = getattr(fsp, f"spherical_{kind}n")
    values, derivatives = SPHERICAL[kind]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_allclose(fn(dev(N), dev(Z)), np.array(values), rtol=1e-12)
        assert_allclose(fn(dev(N), dev(Z), derivative=True), np.array(derivatives), rtol=1e-12)


def test_aliases_erfi_voigt_powm1_perm():
    assert abs(float(fsp.jn(2, 1.5)) - 0.23208767214421472) < 1e-15
    assert abs(float(fsp.kn(2.5, 1.5)) - 0.5836559632566507) < 1e-15  # order truncated to 2
    assert abs(float(fsp.yve(0.5, 2.0)) - 0.23478571040624857) < 1e-15
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_allclose(fsp.erfi(dev(np.array([0.0, 1e-10, 1.0, -2.0, 26.6, 27.0, -INF]))),
                        np.array([0.0, 1.1283791670955126e-10, 1.6504257587975428,
                                  -18.564802414575553, 4.1328960530519896e+305, INF, -INF]),
                        rtol=1e-12)
        x = dev(np.array([0.0, 1.0, -3.0, 1e3, 0.0, 1.0, 1.0, 0.0]))
        sigma = dev(np.array([1.0, 1.0, 2.0, 0.5, 0.0, 0.0, -1.0, 0.0]))
        gamma = dev(np.array([0.5, 0.5, 1e-5, 0.3, 0.5, 0.0, 0.5, 0.0]))
        assert_allclose(fsp.voigt_profile(x, sigma, gamma), np.array(
            [0.27895547038929436, 0.20017963759083915, 0.06475889985368634,
             9.549302888056349e-08, 0.6366197723675814, 0.0, -0.281066897562011, INF]),
            rtol=1e-11)
        assert_allclose(fsp.powm1(dev(np.array([2.0, 0.0, -2.0, -2.0, 3.0, 1.0])),
                                  dev(np.array([1e-10, -1.0, 2.0, 0.5, -50.0, NAN]))),
                        np.array([6.931471805839679e-11, INF, 3.0, NAN, -1.0, 0.0]), rtol=1e-13)
    assert_allclose(fsp.perm(dev(np.array([10, 3, 5.5, -1, 170])), dev(np.array([3, 4, 2, 2, 100]))),
                    np.array([720.0, 0.0, 24.75, 0.0, 6.058665269334438e+206]), rtol=2e-13)
    # erfi' = 2/sqrt(pi) exp(x^2)
    assert abs(float(funcgrad.grad(fsp.erfi)(0.8)) - 2.1399495150026864) < 1e-14
