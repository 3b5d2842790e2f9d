"""funcgrad.scipy.special.j0/j1/y0/y1/k0/k1/k0e/k1e against SciPy 1.17 (and mpmath far out,
where SciPy's argument reduction loses digits), recorded as literals; derivatives to third
order against mpmath's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.scipy.special as fsp

X_JY = [1e-10, 0.5, 1.0, 2.404825557695773, 5.0, 7.99, 8.01, 30.0, 250.0]
X_K = [1e-10, 0.3, 1.0, 1.99, 2.01, 10.0, 100.0, 700.0]
WANT = {
    "j0": [1.0, 9.3846980724081297e-01, 7.6519768655796649e-01, -9.5868825549168066e-17,
           -1.7759677131433829e-01, 1.7399001312793252e-01, 1.6929736911054297e-01,
           -8.6367983581040308e-02, -2.6053373425204116e-02],
    "j1": [5.0000000000000008e-11, 2.4226845767487387e-01, 4.4005058574493355e-01,
           5.1914749728946663e-01, -3.2757913759146529e-01, 2.3320071425350186e-01,
           2.3604710363083406e-01, -1.1875106261662305e-01, -4.3269038410330966e-02],
    "y0": [-14.732516272697243, -0.4445187335067066, 0.08825696421567697, 0.5099243834484792,
           -0.30851762524903303, 0.22192874178576447, 0.2250899092935792, -0.11729573168666398,
           -0.04321684544036634],
    "y1": [-6.3661977236758137e+09, -1.4714723926702433e+00, -7.8121282130028880e-01,
           1.0274668243825957e-01, 1.4786314339122691e-01, -1.6048695141166469e-01,
           -1.5562145403809827e-01, 8.4425570661747135e-02, 2.5966992185484233e-02],
    "k0": [2.3141782445598864e+001, 1.3724600605442983e+000, 4.2102443824070823e-001,
           1.1530176755177687e-001, 1.1250436099872804e-001, 1.7780062316167650e-005,
           4.6566282291759025e-045, 4.6697764316853765e-306],
    "k1": [1.0000000000000000e+010, 3.0559920334573252e+000, 6.0190723019723458e-001,
           1.4171756162240129e-001, 1.3804087731920769e-001, 1.8648773453825585e-005,
           4.6798537356369101e-045, 4.6731107967079664e-306],
    "k0e": [23.14178244791304, 1.8526273007720155, 1.1444630798068947, 0.8434939733789935,
            0.8396557490908679, 0.39163193443659866, 0.1251756216591266, 0.04736236945461357],
    "k1e": [1.0000000001000000e+10, 4.1251577622444700e+00, 1.6361534862632581e+00,
            1.0367396067608632e+00, 1.0302428743356034e+00, 4.1076657059578869e-01,
            1.2579995047957854e-01, 4.7396187653494549e-02],
}


@pytest.mark.parametrize("name", sorted(WANT))
def test_values_match_scipy(name):
    x = X_JY if name[0] in "jy" else X_K
    got = host(getattr(fsp, name)(dev(np.array(x))))
    # atol: j0 at its first zero. rtol: SciPy's own phase x - pi/4 is rounded (about
    # 250 eps at x = 250; these values match mpmath's to 2e-16 there).
    assert_allclose(got, np.array(WANT[name]), rtol=2e-14, atol=1e-16)


def test_edges_and_far_out_quietly():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        edge = dev(np.array([0.0, -1.0, np.inf, np.nan]))
        for name, want in [("j0", [1.0, 0.7651976865579665, np.nan, np.nan]),
                           ("j1", [0.0, -0.44005058574493355, np.nan, np.nan]),
                           ("y0", [-np.inf, np.nan, np.nan, np.nan]),
                           ("y1", [-np.inf, np.nan, np.nan, np.nan]),
                           ("k0", [np.inf, np.nan, 0.0, np.nan]),
                           ("k1e", [np.inf, np.nan, 0.0, np.nan])]:
            assert_allclose(host(getattr(fsp, name)(edge)), np.array(want), rtol=1e-15)
        # Far out the phase comes from exact sin/cos (mpmath's values; SciPy's lose digits).
        assert_allclose(host(fsp.j0(dev(np.array([1e10])))), np.array([2.175591750246892e-06]),
                        rtol=1e-13)
        far = dev(np.array([1e300]))
        assert_allclose(host(fsp.y1(far)), np.array([7.860673062724093e-151]), rtol=1e-13)
        assert_allclose(host(fsp.j1(far)), np.array([-1.3681360450342481e-151]), rtol=1e-13)


# (function, x, first three derivatives from mpmath)
DERIVS = [
    ("j1", 0.0, [0.5, 0.0, -0.375]),
    ("j0", 1e-3, [-0.0004999999375000026, -0.499999812500013, 0.000374999947916669]),
    ("j1", 3.0, [-0.37307160774391224, -0.17702853833063945, 0.3240608403905941]),
    ("y1", 0.7, [1.3854063162449384, -3.127432359274184, 15.170017714666232]),
    ("k1", 1.5, [-0.39873076295208826, 0.6664917759612777, -1.3618639142655187]),
    ("k0e", 12.0, [-0.01463687488063166, 0.0017955630195458348, -0.00036735318432388456]),
]


@pytest.mark.parametrize("name,x,want", DERIVS)
def test_derivatives_to_third_order(name, x, want):
    f = getattr(fsp, name)
    got = []
    for _ in range(3):
        f = funcgrad.grad(f)
        got.append(float(f(x)))
    assert_allclose(np.array(got), np.array(want), rtol=1e-12, atol=1e-15)


def test_under_jit_and_vmap_float32_stays():
    g = funcgrad.jit(funcgrad.vmap(funcgrad.grad(fsp.y0)))(dev(np.array([1.0, 9.0])))
    assert_allclose(g, np.array([0.7812128213002887, -0.10431457519671589]), rtol=1e-13)
    assert fsp.k0(dev(np.array([1.0], dtype=np.float32))).dtype == np.float32
