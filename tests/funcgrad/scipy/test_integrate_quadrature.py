"""quad (finite, infinite, break points, complex, reversed), dblquad, fixed_quad and romb
against scipy.integrate (a test dependency)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.scipy.integrate as fsi

si = pytest.importorskip("scipy.integrate")

_CASES = [(np.exp, 0.0, 1.0), (np.sin, 0.0, np.pi), (lambda x: 1 / (1 + x * x), -np.inf, np.inf),
          (lambda x: np.exp(-x), 0.0, np.inf), (lambda x: np.exp(x), -np.inf, 0.0),
          (lambda x: np.cos(50 * x), 0.0, 1.0), (lambda x: x ** 2, 2.0, -1.0),
          (lambda x: np.log(x), 0.0, 1.0)]


@pytest.mark.parametrize("case", range(len(_CASES)))
def test_quad_matches_scipy(case):
    f, a, b = _CASES[case]
    value, err = fsi.quad(f, a, b)
    want = si.quad(f, a, b)[0]
    assert abs(value - want) <= 1e-9 * max(1.0, abs(want))
    assert err < 1e-7


def test_quad_options():
    assert fsi.quad(lambda x, c: c * x, 0.0, 1.0, args=(3.0,))[0] == pytest.approx(1.5, 1e-14)
    value, err = fsi.quad(lambda x: abs(x - 0.3), 0.0, 1.0, points=[0.3])
    assert value == pytest.approx(0.29, rel=1e-14) and err < 1e-12
    z = fsi.quad(lambda x: fnp.exp(1j * x), 0.0, 1.0, complex_func=True)[0]
    assert z == pytest.approx(si.quad(lambda x: np.exp(1j * x), 0.0, 1.0,
                                      complex_func=True)[0], rel=1e-13)
    value, err, info = fsi.quad(np.exp, 0.0, 1.0, full_output=1)
    assert info["neval"] == 21 and info["last"] == 1
    with pytest.warns(fsi.IntegrationWarning, match="subdivisions"):
        fsi.quad(lambda x: 1 / x, 0.0, 1.0)
    with pytest.raises(TypeError, match="outside jit"):
        funcgrad.jit(lambda c: fsi.quad(lambda x: c * x, 0.0, 1.0)[0])(2.0)
    value = fsi.dblquad(lambda y, x: x * y ** 2, 0.0, 2.0, lambda x: 0.0, lambda x: x)[0]
    assert value == pytest.approx(si.dblquad(lambda y, x: x * y ** 2, 0.0, 2.0, lambda x: 0.0,
                                             lambda x: x)[0], rel=1e-13)


def test_fixed_quad_and_romb_match_scipy():
    for n in (3, 5, 8):
        assert_allclose(fsi.fixed_quad(fnp.cos, 0.0, 2.0, n=n)[0],
                        si.fixed_quad(np.cos, 0.0, 2.0, n=n)[0], rtol=1e-14)
    # differentiable in the limits: d/db int_0^b sin = sin(b), to the rule's accuracy
    assert_allclose(funcgrad.grad(lambda b: fsi.fixed_quad(fnp.sin, 0.0, b)[0])(1.0),
                    np.sin(1.0), rtol=1e-8)
    y = np.exp(np.linspace(0.0, 2.0, 17))
    assert_allclose(fsi.romb(dev(y), dx=2 / 16), si.romb(y, dx=2 / 16), rtol=1e-14)
    stacked = np.vstack([y, 2 * y]).T
    assert_allclose(fsi.romb(dev(stacked), dx=2 / 16, axis=0),
                    si.romb(stacked, dx=2 / 16, axis=0), rtol=1e-14)
    with pytest.raises(ValueError, match="power of 2"):
        fsi.romb(np.ones(6))
