"""funcgrad.scipy.interpolate.RegularGridInterpolator against scipy.interpolate: linear and
nearest, 1-3 dimensions with trailing value axes, a descending grid, points outside the grid
and nan, every fill_value kind, tuple and n-d queries; derivatives, jit, vmap, the pytree;
the errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
from funcgrad.scipy.interpolate import RegularGridInterpolator
from funcgrad.test_util import check_grads

si = pytest.importorskip("scipy.interpolate")

_RNG = np.random.default_rng(0)
GRID = (np.sort(_RNG.uniform(0, 5, 6)), np.array([3.0, 2.0, 1.0, 0.0]), np.linspace(-1, 1, 5))
VALUES = _RNG.normal(size=(6, 4, 5, 2))
XI = np.stack([_RNG.uniform(-0.5, 5.5, 20), _RNG.uniform(-0.5, 3.5, 20),
               _RNG.uniform(-1.2, 1.2, 20)], -1)
XI[0] = np.nan
XI[1, 0] = np.nan


def _scipy(grid, values, xi, **kw):
    return si.RegularGridInterpolator(grid, values, bounds_error=False, **kw)(xi)


@pytest.mark.parametrize("method", ["linear", "nearest"])
@pytest.mark.parametrize("fill_value", [np.nan, None, 0.5])
def test_as_scipy(method, fill_value):
    cases = [(GRID, VALUES, XI), (GRID, VALUES[..., 0], XI),
             (GRID[:1], VALUES[:, 0, 0, 0], XI[:, 0]), (GRID[:2], VALUES[:, :, 0, 0], XI[:, :2])]
    for grid, values, xi in cases:
        f = RegularGridInterpolator(tuple(dev(g) for g in grid), dev(values), method=method,
                                    fill_value=fill_value)
        want = _scipy(grid, values, xi, method=method, fill_value=fill_value)
        assert_allclose(f(dev(xi)), want, rtol=1e-12, atol=1e-14)


def test_query_forms_as_scipy():
    grid, values = GRID[:2], VALUES[:, :, 0, 0]
    f = RegularGridInterpolator(grid, dev(values))
    assert_allclose(f((dev(XI[:, 0]), dev(XI[:, 1]))), _scipy(grid, values, (XI[:, 0], XI[:, 1])),
                    rtol=1e-12)
    q = XI[2:6, :2].reshape(2, 2, 2)
    assert_allclose(f(dev(q)), _scipy(grid, values, q), rtol=1e-12)
    f1 = RegularGridInterpolator((np.arange(3),), dev(np.arange(3)))  # integers: float64
    assert_allclose(f1(dev(np.array([0.5, 1.5]))), np.array([0.5, 1.5]))


def test_derivatives_jit_vmap_and_pytree():
    grid = (np.sort(_RNG.uniform(0, 5, 6)), np.linspace(0, 3, 4))
    values = _RNG.normal(size=(6, 4))
    xi = np.stack([_RNG.uniform(0.5, 4.5, 5), _RNG.uniform(0.2, 2.8, 5)], -1)
    check_grads(lambda v, x: RegularGridInterpolator(grid, v)(x), (dev(values), dev(xi)),
                order=1)
    want = si.RegularGridInterpolator(grid, values)(xi)
    assert_allclose(funcgrad.jit(lambda v, x: RegularGridInterpolator(grid, v)(x))(
        dev(values), dev(xi)), want, rtol=1e-12)
    interp = RegularGridInterpolator(tuple(dev(g) for g in grid), dev(values))
    assert_allclose(funcgrad.jit(lambda f, x: f(x))(interp, dev(xi)), want, rtol=1e-12)
    assert_allclose(funcgrad.vmap(interp)(dev(xi[:, None, :]))[:, 0], want, rtol=1e-12)


def test_bounds_error_and_errors():
    grid, values = GRID[:2], VALUES[:, :, 0, 0]
    f = RegularGridInterpolator(grid, dev(values), bounds_error=True)
    with pytest.raises(ValueError, match="out of bounds in dimension 0"):
        f(dev(np.array([[10.0, 1.0]])))
    assert f(dev(np.array([[1.0, 1.0]]))).shape == (1,)
    with pytest.raises(ValueError, match="concrete"):
        funcgrad.jit(f)(dev(np.array([[1.0, 1.0]])))
    with pytest.raises(ValueError, match="strictly ascending or descending"):
        RegularGridInterpolator((np.array([0.0, 1.0, 1.0]),), np.arange(3.0))
    with pytest.raises(ValueError, match="not defined"):
        RegularGridInterpolator(grid, values, method="cubic")
    with pytest.raises(ValueError, match="dimension 3"):
        RegularGridInterpolator(grid, values)(dev(np.ones((3, 3))))
    with pytest.raises(ValueError, match="3 point arrays"):
        RegularGridInterpolator(grid + grid[:1], values)
    with pytest.raises(ValueError, match="points and"):
        RegularGridInterpolator((np.arange(4.0), np.arange(4.0)), values)
