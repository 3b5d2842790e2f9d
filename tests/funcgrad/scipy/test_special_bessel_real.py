"""funcgrad.scipy.special jv/yv/iv/kv/ive/kve (real order): SciPy 1.17's values across the
regimes (negative and half-integer orders, x below 2, the continued fractions, Hankel's series
far out), silently; derivatives in x (closed form) and in the order against mpmath."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.special as fsp

INF, NAN = np.inf, np.nan
V = np.array([-7.3, -2.0, -1.5, -0.5, 0.0, 0.2, 1.0, 2.7, 10.0, 30.5, 0.5, 3.0])
X = np.array([-3.0, 0.0, 1e-8, 0.1, 1.0, 2.0, 7.0, 30.0, 300.0, 1001.0, 5e4, INF])

# scipy.special.<name>(V, X)
CASES = {
    "jv": [NAN, 0.0, -797884560802.8655, 2.5105273689585097, 0.7651976865579666,
           0.3675385547965719, -0.0046828234823457346, 0.14583053226899095,
           0.027563483890691246, -0.016317259621855387, -0.003567677987307681, NAN],
    "yv": [NAN, -INF, -2.6596152026762185e-13, 0.2518929403260012, 0.088256964215677,
           0.42039317181553215, -0.30266723702418485, -0.0061204747642585045,
           0.03692556297004352, -0.01923606441195673, 6.379048700113797e-05, NAN],
    "iv": [NAN, 0.0, -797884560802.8652, 2.535758701187413, 1.2660658777520084,
           2.225818017921159, 156.03909286995528, 690850929899.2618, 3.787725925866868e+128,
           INF, INF, NAN],
    "kv": [NAN, INF, 1253314137315.5002, 3.58616683879726, 0.42102443824070834,
           0.11484187551824136, 0.000454182486884897, 2.4030878842059368e-14,
           4.3977411245245124e-132, 0.0, 0.0, 0.0],
    "ive": [NAN, 0.0, -797884552824.0198, 2.294449355944637, 0.4657596075936404,
            0.301231711888516, 0.14228923470959867, 0.06464722529669924, 0.019499971453983567,
            0.007922506644385107, 0.0017841241161527712, NAN],
    "kve": [NAN, INF, 1253314149848.6416, 3.963327297606011, 1.1444630798068949,
            0.8485730607106959, 0.49807157509547656, 0.25680537591736147, 0.08542288439714375,
            0.06301905178600947, 0.005604991216397929, NAN],
}


@pytest.mark.parametrize("name", list(CASES))
def test_values_match_scipy_silently(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = getattr(fsp, name)(dev(V), dev(X))
    assert_allclose(out, np.array(CASES[name]), rtol=1e-12)


def test_integer_orders_agree_with_the_order_0_1_functions():
    x = dev(np.array([0.3, 2.5, 9.0, 40.0]))
    assert_allclose(fsp.jv(1.0, x), fsp.j1(x), rtol=1e-13)
    assert_allclose(fsp.yv(0.0, x), fsp.y0(x), rtol=1e-13)
    assert_allclose(fsp.kv(1.0, x), fsp.k1(x), rtol=1e-13)
    assert_allclose(fsp.ive(0.0, x), fsp.i0e(x), rtol=1e-13)


def test_derivatives_in_x_and_the_order():
    # x: SciPy's jvp/kvp; v: mpmath.diff of besselj / besselk (30 digits)
    gv, gx = funcgrad.grad(fsp.jv, argnums=(0, 1))(2.5, 3.0)
    assert abs(float(gx) - 0.13379318824566194) < 1e-14
    assert abs(float(gv) + 0.19203804272791766) < 1e-11
    g = funcgrad.vmap(funcgrad.grad(fsp.kv, argnums=1))(  # (jit: compile time, not needed)
        dev(np.array([0.5, 1.5])), dev(np.array([0.3, 30.0])))
    assert_allclose(g, np.array([-4.520429483571422, -2.2518681735304052e-14]), rtol=1e-13)
    gv = funcgrad.grad(fsp.kv)(-1.7, 7.0)
    assert abs(float(gv) + 0.00011646882765868903) < 1e-14
    assert fsp.iv(np.float32(1.5), np.float32(2.0)).dtype == np.float32
