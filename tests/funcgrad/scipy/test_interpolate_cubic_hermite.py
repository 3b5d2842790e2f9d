"""CubicHermiteSpline, PchipInterpolator, Akima1DInterpolator (akima, makima) and
pchip_interpolate against scipy.interpolate (a test dependency): values, derivatives,
integrals, axes, short inputs; differentiable and jit-able."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.interpolate as fin

si = pytest.importorskip("scipy.interpolate")

_RNG = np.random.default_rng(71)
_X = np.sort(_RNG.uniform(0.0, 10.0, 12))
_Y = np.sin(_X) + 0.1 * _RNG.standard_normal(12)
_FLAT = np.array([0, 0, 1, 1, 1, 2, 2, 0, 0, 5, 5, 5.0])  # plateaus and extrema
_Q = np.linspace(-1.0, 11.0, 57)


def _check(got, want):
    assert_allclose(got(dev(_Q)), want(_Q), rtol=1e-10, atol=1e-12)
    assert_allclose(got(dev(_Q), 1), want(_Q, 1), rtol=1e-10, atol=1e-12)
    assert_allclose(got.derivative(2)(dev(_Q)), want.derivative(2)(_Q), rtol=1e-10, atol=1e-10)
    assert_allclose(got.integrate(1.0, 8.0), want.integrate(1.0, 8.0), rtol=1e-10)


@pytest.mark.parametrize("kw", [{}, {"method": "makima"}, {"extrapolate": True}])
def test_akima_matches_scipy(kw):
    for y in (_Y, _FLAT):
        _check(fin.Akima1DInterpolator(dev(_X), dev(y), **kw),
               si.Akima1DInterpolator(_X, y, **kw))


def test_pchip_and_hermite_match_scipy():
    for y in (_Y, _FLAT):
        _check(fin.PchipInterpolator(dev(_X), dev(y)), si.PchipInterpolator(_X, y))
    d = _RNG.standard_normal(12)
    _check(fin.CubicHermiteSpline(dev(_X), dev(_Y), dev(d)), si.CubicHermiteSpline(_X, _Y, d))
    stacked = np.stack([_Y, np.cos(_X), _X ** 2], axis=1)
    for cls in ("PchipInterpolator", "Akima1DInterpolator"):
        got = getattr(fin, cls)(dev(_X), dev(stacked.T), axis=1)
        assert_allclose(got(dev(_Q)), getattr(si, cls)(_X, stacked.T, axis=1)(_Q), rtol=1e-10,
                        atol=1e-12)
        for n in (2, 3):
            assert_allclose(getattr(fin, cls)(dev(_X[:n]), dev(_Y[:n]))(dev(_Q)),
                            getattr(si, cls)(_X[:n], _Y[:n])(_Q), rtol=1e-10, atol=1e-12)
    assert_allclose(fin.pchip_interpolate(dev(_X), dev(_Y), dev(_Q)),
                    si.pchip_interpolate(_X, _Y, _Q), rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="strictly increasing"):
        fin.PchipInterpolator(_X[::-1], _Y)


def test_differentiable_and_jit():
    g = funcgrad.grad(lambda y: fin.PchipInterpolator(_X, y)(4.3))(dev(_Y))
    eps = 1e-6
    e = np.zeros(12)
    e[5] = eps
    fd = (si.PchipInterpolator(_X, _Y + e)(4.3) - si.PchipInterpolator(_X, _Y - e)(4.3)) / (2 * eps)
    assert_allclose(g[5], fd, rtol=1e-5)
    f = funcgrad.jit(lambda y: fin.Akima1DInterpolator(_X, y, method="makima")(_Q[5:10]))
    assert_allclose(f(dev(_Y)), si.Akima1DInterpolator(_X, _Y, method="makima")(_Q[5:10]),
                    rtol=1e-10)


def test_akima_unknown_method_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="'akima' or 'makima'"):
        fin.Akima1DInterpolator(np.arange(5.0), np.arange(5.0) ** 2, method="cubic")
