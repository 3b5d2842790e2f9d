"""CubicSpline (every bc_type), PPoly and interp1d (every kind, fill rules) against
scipy.interpolate (a test dependency), with derivatives and transforms."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.interpolate as fsi

si = pytest.importorskip("scipy.interpolate")

_X = np.linspace(0.0, 4.0, 9)
_Y = np.sin(_X)
_YP = np.cos(np.linspace(0.0, 2 * np.pi, 9))  # periodic
_Q = np.array([-0.5, 0.1, 1.3, 2.25, 3.99, 4.5])


@pytest.mark.parametrize("bc", ["not-a-knot", "natural", "clamped", "periodic",
                                ((1, 0.5), (2, -0.3))])
def test_cubic_spline_matches_scipy(bc):
    y = _YP if bc == "periodic" else _Y
    got, want = fsi.CubicSpline(dev(_X), dev(y), bc_type=bc), si.CubicSpline(_X, y, bc_type=bc)
    for nu in (0, 1, 2):
        assert_allclose(got(dev(_Q), nu), want(_Q, nu), rtol=1e-10, atol=1e-12)
    assert_allclose(got.c, want.c, rtol=1e-10, atol=1e-12)
    assert_allclose(got.integrate(-1.0, 9.5), want.integrate(-1.0, 9.5), rtol=1e-10)


def test_cubic_spline_end_values_per_curve_and_their_shape_checked():
    # SciPy 1.x: one derivative value per curve (y's trailing shape), lists accepted; a
    # scalar for 2-D y, or any other shape, is a ValueError (no broadcasting).
    x = np.arange(4.0)
    y = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    bc = ((1, [0.5, 1.0]), (2, [-1.0, 2.0]))
    got = fsi.CubicSpline(dev(x), dev(y), bc_type=bc)
    assert_allclose(got(dev(np.array([0.5]))), np.array([[0.5673076923076923, 0.5961538461538461]]))
    assert_allclose(got(dev(np.array([0.5])), 1), np.array([[1.3846153846153846, -1.8076923076923077]]))
    for bad in [((1, 0.5), (2, -1.0)), ((1, [[0.5, 1.0]]), (2, [-1.0, 1.0])),
                ((1, [1.0, 2.0, 3.0]), (2, [1.0, 2.0]))]:
        with pytest.raises(ValueError, match="derivative value has shape"):
            fsi.CubicSpline(dev(x), dev(y), bc_type=bad)
    with pytest.raises(ValueError, match="derivative value has shape"):
        fsi.CubicSpline(dev(x), dev(y[:, 0]), bc_type=((1, [0.5]), (2, [-1.0])))
    with pytest.raises(ValueError, match="pair"):
        fsi.CubicSpline(dev(x), dev(y), bc_type=((1,), (1, [1.0, 2.0])))


def test_cubic_spline_small_sizes_axis_and_methods():
    for n in (2, 3, 4):
        assert_allclose(fsi.CubicSpline(_X[:n], _Y[:n])(dev(_Q)), si.CubicSpline(
            _X[:n], _Y[:n])(_Q), rtol=1e-10, atol=1e-12)
    y3 = _YP[:3].copy()
    y3[-1] = y3[0]
    assert_allclose(fsi.CubicSpline(_X[:3], y3, bc_type="periodic")(dev(_Q)),
                    si.CubicSpline(_X[:3], y3, bc_type="periodic")(_Q), rtol=1e-10)
    two = np.stack([_Y, _Y ** 2])
    assert_allclose(fsi.CubicSpline(_X, dev(two), axis=1)(dev(np.array([0.3, 1.1]))),
                    si.CubicSpline(_X, two, axis=1)(np.array([0.3, 1.1])), rtol=1e-10)
    cs, scs = fsi.CubicSpline(_X, _Y), si.CubicSpline(_X, _Y)
    assert_allclose(cs.derivative(2)(dev(_Q)), scs.derivative(2)(_Q), rtol=1e-10, atol=1e-12)
    assert_allclose(cs.antiderivative()(dev(_Q)), scs.antiderivative()(_Q), rtol=1e-10,
                    atol=1e-12)
    assert_allclose(fsi.CubicSpline(_X, _Y, extrapolate=False)(dev(_Q)),
                    si.CubicSpline(_X, _Y, extrapolate=False)(_Q), rtol=1e-10)
    with pytest.raises(ValueError, match="strictly increasing"):
        fsi.CubicSpline(_X[::-1], _Y)
    with pytest.raises(ValueError, match="identical"):
        fsi.CubicSpline(_X, _Y, bc_type="periodic")


def test_cubic_spline_differentiates_and_traces():
    g = funcgrad.grad(lambda y: fsi.CubicSpline(_X, y)(1.3))(dev(_Y))
    e = 1e-6
    fd = [(si.CubicSpline(_X, _Y + e * row)(1.3) - si.CubicSpline(_X, _Y - e * row)(1.3))
          / (2 * e) for row in np.eye(9)]
    assert_allclose(g, np.array(fd), atol=1e-7)
    f = funcgrad.jit(lambda x, y: fsi.CubicSpline(x, y)(1.3))
    assert_allclose(f(dev(_X), dev(_Y)), si.CubicSpline(_X, _Y)(1.3), rtol=1e-12)
    v = funcgrad.vmap(lambda y: fsi.CubicSpline(_X, y)(1.3))(dev(np.stack([_Y, 2 * _Y])))
    assert_allclose(v, np.array([1.0, 2.0]) * si.CubicSpline(_X, _Y)(1.3), rtol=1e-12)


@pytest.mark.parametrize("kind", ["linear", "nearest", "nearest-up", "zero", "slinear",
                                  "cubic", "previous", "next", 0, 1, 3])
def test_interp1d_matches_scipy(kind):
    for kw in ({"fill_value": "extrapolate"},
               {"bounds_error": False, "fill_value": (-1.0, 2.0)},
               {"bounds_error": False}):
        assert_allclose(fsi.interp1d(dev(_X), dev(_Y), kind=kind, **kw)(dev(_Q)),
                        si.interp1d(_X, _Y, kind=kind, **kw)(_Q), rtol=1e-10, atol=1e-12)
    jitted = funcgrad.jit(lambda y, q: fsi.interp1d(_X, y, kind=kind, bounds_error=False)(q))
    assert_allclose(jitted(dev(_Y), dev(_Q)), si.interp1d(_X, _Y, kind=kind,
                                                          bounds_error=False)(_Q),
                    rtol=1e-10, atol=1e-12)


def test_interp1d_axis_unsorted_and_errors():
    two = np.stack([_Y, _Y ** 2], 1)
    assert_allclose(fsi.interp1d(_X, dev(two), axis=0, kind="cubic")(dev(np.array([[0.3, 1.1]]))),
                    si.interp1d(_X, two, axis=0, kind="cubic")(np.array([[0.3, 1.1]])),
                    rtol=1e-10)
    perm = np.array([3, 0, 8, 1, 2, 7, 4, 6, 5])
    assert_allclose(fsi.interp1d(dev(_X[perm]), dev(_Y[perm]))(dev(_Q[1:5])),
                    si.interp1d(_X, _Y)(_Q[1:5]), rtol=1e-12)
    with pytest.raises(ValueError, match="above the interpolation range"):
        fsi.interp1d(_X, _Y)(np.array([5.0]))
    with pytest.raises(ValueError, match="quadratic"):
        fsi.interp1d(_X, _Y, kind="quadratic")
    with pytest.raises(ValueError, match="extrapolate and raise"):
        fsi.interp1d(_X, _Y, bounds_error=True, fill_value="extrapolate")


def test_interpn_and_slinear_grid():
    g1, g2 = np.linspace(0.0, 1.0, 5), np.linspace(0.0, 2.0, 6)
    values = np.add.outer(g1 ** 2, np.sin(g2))
    pts = np.array([[0.1, 0.3], [0.5, 1.9], [0.99, 0.01]])
    assert_allclose(fsi.RegularGridInterpolator((g1, g2), dev(values), method="slinear")(
        dev(pts)), si.RegularGridInterpolator((g1, g2), values, method="slinear")(pts),
        rtol=1e-12)
    for method in ("linear", "nearest"):
        assert_allclose(fsi.interpn((g1, g2), dev(values), dev(pts), method=method),
                        si.interpn((g1, g2), values, pts, method=method), rtol=1e-12)
    with pytest.raises(ValueError, match="out of bounds"):
        fsi.interpn((g1, g2), values, np.array([[2.0, 0.0]]))
    assert_allclose(fsi.interpn((g1, g2), values, np.array([[2.0, 0.0]]), bounds_error=False),
                    np.array([np.nan]))


@pytest.mark.parametrize("bc", ["not-a-knot", ((2, 0.3), (1, 0.2)), "periodic"])
def test_cubic_spline_of_many_knots_solves_a_band(bc):
    # the knot slopes are a tridiagonal system: one banded LU, O(n) (densely, 3000 knots
    # took seconds; 20000 would need 3.2 GB); periodic: a cyclic one, by Sherman-Morrison
    x = np.linspace(0.0, 16 * np.pi, 2000)
    y = np.sin(x)
    y[-1] = y[0]
    q = np.array([-1.0, 0.01, 7.3, 49.99, 52.0])
    got = fsi.CubicSpline(dev(x), dev(y), bc_type=bc)(dev(q))
    assert_allclose(got, si.CubicSpline(x, y, bc_type=bc)(q), rtol=1e-9, atol=1e-12)
