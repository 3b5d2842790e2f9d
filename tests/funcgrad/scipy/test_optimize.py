"""funcgrad.scipy.optimize.minimize (BFGS) against jax.scipy.optimize.minimize 0.10.2 (float64):
the results recorded as literals (iterates, counts and status agree exactly, failures
included), under jit and vmap; and funcgrad.scipy.integrate against SciPy."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.integrate as si
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.scipy.integrate as fsi
from funcgrad.scipy.optimize import OptimizeResults, line_search, minimize


def rosen(x):
    return fnp.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


# x, success, status, fun, jac, hess_inv, nfev, njev, nit from JAX.
JAX_ROSEN = {
    (0.5, 0.5): ([0.9999999553069896, 0.9999998880776232], True, 0, 5.278620837405745e-14,
                 [8.925156776722631e-06, -4.5072716002085144e-06],
                 [[0.4995314598539484, 0.9993118284616034],
                  [0.9993118284616032, 2.003977206396356]], 23, 23, 14),
    (-1.2, 1.0): ([-0.2778069614751315, 0.043338775200157394], False, 3, 1.7472911993555371,
                  [-6.3157792231097165, -6.767586528777561],
                  [[0.06769900933392967, -0.050390452734366785],
                   [-0.050390452734366764, 0.04021404667449725]], 17, 17, 8),
}


def _check(res, want, rtol=1e-9) -> None:
    assert isinstance(res, OptimizeResults)
    x, success, status, fun, jac, hess_inv, nfev, njev, nit = want
    assert_allclose(res.x, np.array(x), rtol=rtol, atol=1e-12)
    assert bool(host(res.success)) is success
    assert int(host(res.status)) == status
    assert (int(host(res.nfev)), int(host(res.njev)), int(host(res.nit))) == (nfev, njev, nit)
    np.testing.assert_allclose(float(host(res.fun)), fun, rtol=1e-6, atol=1e-12)
    assert_allclose(res.jac, np.array(jac), rtol=1e-5, atol=1e-9)
    assert_allclose(res.hess_inv, np.array(hess_inv), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("x0", list(JAX_ROSEN))
def test_bfgs_matches_jax(x0) -> None:
    _check(minimize(rosen, dev(np.array(x0)), method="BFGS"), JAX_ROSEN[x0])


def test_bfgs_under_jit_and_vmap() -> None:
    x0s = np.array(list(JAX_ROSEN))
    res = funcgrad.jit(funcgrad.vmap(lambda x0: minimize(rosen, x0, method="bfgs")))(dev(x0s))
    for i, x0 in enumerate(JAX_ROSEN):
        _check(OptimizeResults(*[leaf[i] for leaf in res]), JAX_ROSEN[x0])


def test_bfgs_args_and_options_match_jax() -> None:
    def f(x, c):
        return fnp.sum((x - c) ** 4) + fnp.sum(x ** 2)

    res = minimize(f, dev(np.zeros(3)), args=(dev(np.array([1.0, 2.0, 3.0])),), method="BFGS",
                   options=dict(maxiter=7, norm=2))
    assert int(host(res.status)) == 1 and int(host(res.nit)) == 7 and int(host(res.nfev)) == 11
    assert_allclose(res.x, np.array([0.3971233152796386, 1.1584137329817488, 1.9762523478278187]),
                    rtol=1e-9, atol=1e-12)


def test_bfgs_minimises_a_quadratic_in_float32() -> None:
    res = minimize(lambda x: fnp.sum((x - 1.5) ** 2), dev(np.zeros(3, np.float32)), method="BFGS")
    assert host(res.x).dtype == np.float32 and bool(host(res.success))
    assert_allclose(res.x, np.full(3, 1.5, np.float32))


def test_line_search_takes_the_unit_step_on_a_quadratic() -> None:
    res = line_search(lambda x: fnp.sum(x ** 2), dev(np.ones(2)), dev(-np.ones(2)))
    assert not bool(host(res.failed)) and float(host(res.a_k)) == 1.0


@pytest.mark.parametrize("call,err", [
    (lambda: minimize(rosen, np.zeros(2), method="Nelder-Mead"), ValueError),
    (lambda: minimize(rosen, np.zeros((2, 2)), method="BFGS"), ValueError),
    (lambda: minimize(rosen, np.zeros(2), args=[1], method="BFGS"), TypeError),
    (lambda: minimize(rosen, np.zeros(2), method="BFGS", options={"eps": 1}), TypeError),
    (lambda: minimize(lambda x: x ** 2, np.zeros(2), method="BFGS"), ValueError),
])
def test_bad_arguments(call, err) -> None:
    with pytest.raises(err):
        call()


@pytest.mark.parametrize("kw", [{}, {"dx": 0.3}, {"x": np.array([0.0, 0.5, 0.7, 1.5, 2.0])},
                                {"axis": 0}, {"x": np.array([0.0, 1.0, 3.0]), "axis": 0}])
def test_trapezoid_and_cumulative_match_scipy(kw) -> None:
    y = np.linspace(-1.0, 2.0, 15).reshape(3, 5) ** 2
    dkw = {k: dev(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    assert_allclose(fsi.trapezoid(dev(y), **dkw), si.trapezoid(y, **kw))
    assert_allclose(fsi.cumulative_trapezoid(dev(y), **dkw), si.cumulative_trapezoid(y, **kw))
    assert_allclose(fsi.cumulative_trapezoid(dev(y), initial=0, **dkw),
                    si.cumulative_trapezoid(y, initial=0, **kw))


def test_cumulative_trapezoid_gradient_and_errors() -> None:
    g = funcgrad.grad(lambda y: fsi.cumulative_trapezoid(y).sum())(dev(np.ones(4)))
    assert_allclose(g, np.array([1.5, 2.5, 1.5, 0.5]))
    with pytest.raises(ValueError, match="initial"):
        fsi.cumulative_trapezoid(np.ones(3), initial=1.0)
    with pytest.raises(ValueError, match="points"):
        fsi.cumulative_trapezoid(np.ones(3), x=np.ones(4))
