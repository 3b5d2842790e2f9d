"""least_squares (losses, bounds, lm), curve_fit with bounds, root/fsolve, newton, the
Rosenbrock helpers, approx_fprime/check_grad and fminbound/brent against scipy.optimize (a
test dependency)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.scipy.optimize as fo

so = pytest.importorskip("scipy.optimize")

_RNG = np.random.default_rng(41)
_T = np.linspace(0.0, 4.0, 40)
_Y = 2.5 * np.exp(-1.3 * _T) + 0.5 + 0.05 * _RNG.standard_normal(40)


def _model(t, a, b, c):
    return a * fnp.exp(-b * t) + c


def _model_np(t, a, b, c):
    return a * np.exp(-b * t) + c


_T_DEV, _Y_DEV = dev(_T), dev(_Y)


def _res(p):
    return _model(_T_DEV, p[0], p[1], p[2]) - _Y_DEV


def _res_np(p):
    return _model_np(_T, *p) - _Y


@pytest.mark.parametrize("loss", ["linear", "soft_l1", "huber", "cauchy", "arctan"])
def test_least_squares_losses_match_scipy(loss):
    for f_scale in (1.0, 0.1):
        got = fo.least_squares(_res, dev(np.ones(3)), loss=loss, f_scale=f_scale)
        want = so.least_squares(_res_np, np.ones(3), loss=loss, f_scale=f_scale)
        assert got.success and want.success
        assert_allclose(host(got.x), want.x, rtol=1e-5)
        np.testing.assert_allclose(got.cost, want.cost, rtol=1e-7)


def test_least_squares_bounds_and_lm():
    bounds = ([0.0, 0.0, 0.6], [3.0, 3.0, 1.0])
    got = fo.least_squares(_res, np.ones(3), bounds=bounds)
    want = so.least_squares(_res_np, np.ones(3), bounds=bounds)
    assert_allclose(host(got.x), want.x, rtol=1e-5)
    np.testing.assert_array_equal(got.active_mask, want.active_mask)
    np.testing.assert_allclose(got.cost, want.cost, rtol=1e-8)
    got = fo.least_squares(_res, np.ones(3), method="lm")
    assert_allclose(host(got.x), so.least_squares(_res_np, np.ones(3), method="lm").x,
                    rtol=1e-6)
    jac = funcgrad.jacfwd(_res)
    assert_allclose(host(fo.least_squares(_res, np.ones(3), jac=jac).x), host(got.x), rtol=1e-6)
    with pytest.raises(ValueError, match="doesn't support bounds"):
        fo.least_squares(_res, np.ones(3), method="lm", bounds=bounds)
    with pytest.raises(ValueError, match="infeasible"):
        fo.least_squares(_res, np.full(3, 5.0), bounds=bounds)


def test_curve_fit_bounds_match_scipy():
    for bounds in (([0, 0, 0], [2, 3, 1]), (0, [3, 3, 3])):
        popt, pcov = fo.curve_fit(_model, dev(_T), _Y, bounds=bounds)
        want, wcov = so.curve_fit(_model_np, _T, _Y, bounds=bounds)
        assert_allclose(popt, want, rtol=1e-4)
        np.testing.assert_allclose(pcov, wcov, rtol=1e-2)
    popt, _ = fo.curve_fit(_model, _T, _Y, p0=[1, 1, 1], method="trf")
    assert_allclose(popt, so.curve_fit(_model_np, _T, _Y, p0=[1, 1, 1])[0], rtol=1e-6)
    with pytest.raises(ValueError, match="unconstrained"):
        fo.curve_fit(_model, _T, _Y, bounds=(0, 3), method="lm")


def test_root_fsolve_newton():
    def f(x):
        return fnp.stack([x[0] + 0.5 * (x[0] - x[1]) ** 3 - 1.0, 0.5 * (x[1] - x[0]) ** 3 + x[1]])

    want = so.root(lambda x: [x[0] + 0.5 * (x[0] - x[1]) ** 3 - 1.0,
                              0.5 * (x[1] - x[0]) ** 3 + x[1]], [0.0, 0.0]).x
    for method in ("hybr", "lm"):
        sol = fo.root(f, dev(np.zeros(2)), method=method)
        assert sol.success and sol.message == "The solution converged."
        assert_allclose(host(sol.x), want, rtol=1e-8)
    assert not fo.root(lambda x: x ** 2 + 1.0, np.array([1.0])).success
    x = fo.fsolve(lambda v: fnp.cos(v) - v, 1.0)
    assert host(x).shape == (1,)
    assert_allclose(host(x), so.fsolve(lambda v: np.cos(v) - v, 1.0), rtol=1e-10)
    g = lambda v: v ** 3 - 2 * v - 5  # noqa: E731
    assert_allclose(fo.newton(g, 2.0), so.newton(lambda v: v ** 3 - 2 * v - 5, 2.0), rtol=1e-12)
    a = np.array([2.0, 3.0, 4.0])
    assert_allclose(fo.newton(lambda v, a: v ** 2 - a, np.ones(3), args=(a,)), np.sqrt(a),
                    rtol=1e-12)
    # the root is differentiable in the arguments: d sqrt(a) / da
    assert_allclose(funcgrad.grad(lambda a: fo.newton(lambda v, a: v ** 2 - a, 1.0,
                                                      args=(a,)))(4.0), 0.25, rtol=1e-10)
    with pytest.raises(RuntimeError, match="converge"):
        fo.newton(lambda v: v ** 2 + 1.0, 0.5, maxiter=5)


def test_rosen_and_helpers_match_scipy():
    x = np.array([0.3, 0.7, 1.1, 0.2])
    for f, g in ((fo.rosen, so.rosen), (fo.rosen_der, so.rosen_der),
                 (fo.rosen_hess, so.rosen_hess)):
        assert_allclose(f(dev(x)), g(x), rtol=1e-14)
    assert_allclose(fo.rosen_hess_prod(dev(x), dev(np.ones(4))), so.rosen_hess_prod(x, np.ones(4)),
                    rtol=1e-14)
    assert_allclose(fo.approx_fprime(x[:2], so.rosen), so.approx_fprime(x[:2], so.rosen),
                    rtol=1e-12)
    np.testing.assert_allclose(fo.check_grad(so.rosen, so.rosen_der, x[:2]),
                               so.check_grad(so.rosen, so.rosen_der, x[:2]), rtol=1e-10)
    got = fo.fminbound(lambda v: (v - 1.3) ** 2, 0.0, 4.0, full_output=True)
    assert got[1:] == so.fminbound(lambda v: (v - 1.3) ** 2, 0.0, 4.0, full_output=True)[1:]
    got = fo.brent(lambda v: (v - 1.3) ** 2, full_output=True)
    assert got[2:] == so.brent(lambda v: (v - 1.3) ** 2, full_output=True)[2:]


def test_root_scalar_other_scipy_methods_find_the_same_root():
    f = lambda x: x ** 3 - 2 * x - 5  # noqa: E731
    want = so.root_scalar(lambda x: x ** 3 - 2 * x - 5, bracket=(2.0, 3.0)).root
    for method in ("brenth", "ridder", "toms748"):
        res = fo.root_scalar(f, bracket=(2.0, 3.0), method=method)
        assert res.converged
        assert_allclose(res.root, want, rtol=1e-12)
    for method in ("secant", "halley"):
        res = fo.root_scalar(f, x0=2.0, x1=2.5, method=method, fprime2=lambda x: 6 * x)
        assert_allclose(res.root, want, rtol=1e-12)
    with pytest.raises(ValueError, match="method must be one of"):
        fo.root_scalar(f, bracket=(2.0, 3.0), method="illinois")
