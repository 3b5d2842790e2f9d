"""funcgrad.scipy.special.lambertw against SciPy 1.17 (values recorded as literals; near the
branch point -1/e against the series, where SciPy's iteration stops early)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.scipy.special as fsp

Z = [1.0, 0.5, 10.0, 1e300, -0.3, 1 + 2j]
WANT = {
    0: [0.5671432904097838, 0.35173371124919584, 1.7455280027406994, 684.2472086297608,
        -0.4894022271802149, complex(0.8237712167092305, 0.5329289867954417)],
    -1: [complex(-1.5339133197935746, -4.375185153061898),
         complex(-2.259158898533606, -4.220960969266197),
         complex(0.7113903608251336, -4.8577983561795905),
         complex(684.2471666555265, -6.274016338969102), -1.7813370234216275,
         complex(-0.4496365364717196, -3.4766227907402576)],
    2: [complex(-2.4015851048680026, 10.77629951611507),
        complex(-3.1049770718920247, 10.71348331130125),
        complex(-0.09416474721414776, 10.987003940068023),
        complex(684.2470407538895, 12.548034213732059),
        complex(-3.8708619766464136, 13.864915107123153),
        complex(-1.6869138779375397, 11.962631435322814)],
}


@pytest.mark.parametrize("k", sorted(WANT))
def test_branches_match_scipy(k):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = host(fsp.lambertw(dev(np.array(Z)), k))
    assert got.dtype == np.complex128
    assert_allclose(got, np.array(WANT[k], dtype=np.complex128), rtol=1e-14)


def test_special_values_and_branch_point():
    z = dev(np.array([0.0, np.inf, -np.inf, np.nan]))
    got = host(fsp.lambertw(z, np.array([[0], [-1]])))
    want = np.array([[0.0, np.inf, complex(np.inf, np.pi), np.nan],
                     [-np.inf, complex(np.inf, -2 * np.pi), complex(np.inf, -np.pi), np.nan]])
    assert_allclose(got, want)
    # At -1/e both real branches meet at -1 (SciPy: nan); 1e-10 above it they are
    # -1 +- sqrt(2 e 1e-10) to first order (SciPy's W_-1 stops at -1.0000000008).
    e1 = -np.exp(-1.0)
    assert complex(fsp.lambertw(e1)) == -1 and complex(fsp.lambertw(e1, -1)) == -1
    w = complex(fsp.lambertw(e1 + 1e-10, -1))
    assert abs(w.real + 1.0 + np.sqrt(2 * np.e * 1e-10)) < 1e-9 and w.imag == 0


def test_derivative_and_transforms():
    g = funcgrad.grad(lambda x: fsp.lambertw(x).real)
    assert abs(float(g(1.0)) - 0.36189625663488917) < 1e-14
    assert abs(float(g(0.0)) - 1.0) < 1e-15
    f = funcgrad.jit(lambda x: fsp.lambertw(x, -1))
    assert_allclose(f(dev(np.array([-0.2, -0.1]))),
                    np.array([-2.5426413577735265, -3.577152063957297], dtype=np.complex128),
                    rtol=1e-14)
    with pytest.raises(TypeError, match="integer"):
        fsp.lambertw(1.0, 0.5)
