"""funcgrad.scipy.special.sici / fresnel (jax.scipy.special has them): values recorded from
SciPy 1.17 (both branches of every approximation, 0, the tails, +-inf, nan), the odd
symmetry, closed-form derivatives (also at 0), float32, jit and vmap."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.scipy.special as fsp
from funcgrad.test_util import check_grads

X = np.array([-3.0, 0.0, 0.5, 2.0, 4.0, 6.5, 12.0, 1e10, np.inf])
SI = [-1.848652527999468, 0.0, 0.49310741804306674, 1.605412976802695, 1.758203138949053,
      1.4217942744358816, 1.5049712415263732, 1.5707963267075846, 1.5707963267948966]
CI = [0.11962978600800067, -np.inf, -0.17778407880661287, 0.422980828774865,
      -0.1409816978869305, 0.01110151951493011, -0.04978000688411366, -4.8750602517482264e-11,
      0.0]
S = [-0.496312998967375, 0.0, 0.06473243285999929, 0.34341567836369824, 0.42051575424692844,
     0.5453764552432335, 0.47347456491993545, 0.499999999968169, 0.5]
C = [-0.6057207892976857, 0.0, 0.4923442258714464, 0.48825340607534073, 0.4984260330381776,
     0.48160345989096404, 0.4999413693520114, 0.5, 0.5]


def test_values_as_scipy():
    si, ci = fsp.sici(dev(X))
    assert_allclose(si, np.array(SI), rtol=1e-14)
    assert_allclose(ci, np.array(CI), rtol=1e-13)
    s, c = fsp.fresnel(dev(X))
    assert_allclose(s, np.array(S), rtol=1e-14)
    assert_allclose(c, np.array(C), rtol=1e-14)
    nan = dev(np.array([np.nan, -np.inf]))
    assert np.isnan(host(fsp.sici(nan)[1])).all()  # Ci(-inf): nan, as SciPy
    assert host(fsp.sici(nan)[0])[1] == -np.pi / 2
    assert host(fsp.fresnel(nan)[0]).tolist()[1] == -0.5


def test_against_scipy_on_a_grid():
    sp = pytest.importorskip("scipy.special")
    x = np.concatenate([np.linspace(-40.0, 40.0, 801), [1.6, 1.601, 3.9999, 4.0001, 7.99, 8.0]])
    for name in ("sici", "fresnel"):
        for got, want in zip(getattr(fsp, name)(dev(x)), getattr(sp, name)(x)):
            assert_allclose(got, want, rtol=1e-13, atol=1e-15, err_msg=name)


def test_derivatives():
    x = dev(np.array([0.3, 1.0, 5.0, -2.0, 10.0]))
    check_grads(lambda v: fsp.sici(v), (x,), order=2, modes=("fwd", "rev"), atol=1e-6,
                rtol=1e-6)
    check_grads(lambda v: fsp.fresnel(v), (x,), order=2, modes=("fwd", "rev"), atol=1e-6,
                rtol=1e-6)
    g = funcgrad.vmap(funcgrad.grad(lambda v: fsp.fresnel(v)[0]))(x)
    assert_allclose(g, np.sin(np.pi * host(x) ** 2 / 2), rtol=1e-12, atol=1e-14)
    assert float(funcgrad.grad(lambda v: fsp.sici(v)[0])(0.0)) == 1.0  # sin(x)/x at 0
    assert float(funcgrad.grad(lambda v: fsp.sici(v)[1])(0.0)) == np.inf


def test_dtypes_and_transformations():
    x32 = dev(np.array([0.5, 2.0, 6.5], np.float32))
    for name in ("sici", "fresnel"):
        out = getattr(fsp, name)(x32)
        assert all(host(o).dtype == np.float32 for o in out)
        jitted = funcgrad.jit(getattr(fsp, name))(dev(X))
        for a, b in zip(jitted, getattr(fsp, name)(dev(X))):
            assert_allclose(a, b)
    assert host(fsp.sici(2)[0]).dtype == np.float64


def test_ci_keeps_its_digits_beyond_1e9():
    # Cephes' Ci(x) = sin(x)/x past 1e9 dropped -cos(x)/x^2 (Ci(1e10) lost 10 digits); and
    # 1/x^2 overflowed (with a warning) past 1e154. Values: mpmath (SciPy 1.17 agrees).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        si, ci = fsp.sici(np.array([2e9, 1e10, 1e12, 1e300]))
    assert_allclose(ci, np.array([4.573552292234931e-10, -4.8750602517482264e-11,
                                  -6.11238702377681e-13, -8.178819121159085e-301]), rtol=1e-14)
    assert_allclose(si, np.array([1.5707963265928415, 1.5707963267075846, 1.5707963267941052,
                                  np.pi / 2]), rtol=1e-15)
