"""minimize's SciPy host methods (Nelder-Mead step for step, L-BFGS-B with bounds, CG,
Newton-CG) against scipy.optimize (a test dependency) and recorded values: solutions,
SciPy's OptimizeResult fields, jac/hess/hessp forms, callbacks, tolerances, errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dev, host, is_device_array

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.scipy.optimize import Bounds, OptimizeResult, minimize

so = pytest.importorskip("scipy.optimize")

_W = np.arange(1.0, 5.0)


def rosen(x):
    return fnp.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def quad(x):
    w = fnp.arange(1.0, x.shape[0] + 1.0)  # on the default device (strict pass too)
    return fnp.sum(w * (x - w) ** 2)


def quad_np(x):
    return np.sum(_W[: x.size] * (x - _W[: x.size]) ** 2)


@pytest.mark.parametrize("x0", [[-1.2, 1.0], [0.5, 0.5, 0.5, 0.5]])
def test_nelder_mead_is_scipys_step_for_step(x0):
    x0 = np.array(x0)
    for opts in ({}, {"adaptive": True}, {"xatol": 1e-8, "fatol": 1e-8}):
        got = minimize(rosen, dev(x0), method="Nelder-Mead", options=opts)
        want = so.minimize(so.rosen, x0, method="Nelder-Mead", options=opts)
        np.testing.assert_allclose(host(got.x), want.x, rtol=1e-12)
        assert (got.nit, got.nfev, got.status, got.message) == (want.nit, want.nfev, want.status,
                                                                want.message)
        np.testing.assert_allclose(got.fun, want.fun, rtol=1e-10)
    bounds = [(0.0, 0.5), (None, None), (2.0, 3.0)]
    with pytest.warns(UserWarning, match="not within the specified bounds"):
        got = minimize(quad, np.zeros(3), method="Nelder-Mead", bounds=bounds)
    with pytest.warns(UserWarning):
        want = so.minimize(quad_np, np.zeros(3), method="Nelder-Mead", bounds=bounds)
    np.testing.assert_allclose(host(got.x), want.x, rtol=1e-12)
    assert got.nfev == want.nfev


def test_lbfgsb_bounds_match_scipy():
    res = minimize(quad, dev(np.zeros(3)), method="L-BFGS-B",
                   bounds=[(0.0, 0.5), (None, None), (2.0, 2.5)])
    assert isinstance(res, OptimizeResult) and res.success and res.status == 0
    assert is_device_array(res.x) and is_device_array(res.jac)
    np.testing.assert_allclose(host(res.x), [0.5, 2.0, 2.5], atol=1e-6)
    assert res.message == "CONVERGENCE: NORM OF PROJECTED GRADIENT <= PGTOL"
    x0 = np.array([-1.2, 1.0])
    got = minimize(rosen, x0, method="L-BFGS-B", bounds=Bounds([-2.0, -2.0], [0.5, 0.2]))
    want = so.minimize(so.rosen, x0, jac=so.rosen_der, method="L-BFGS-B",
                       bounds=so.Bounds([-2.0, -2.0], [0.5, 0.2]))
    np.testing.assert_allclose(host(got.x), want.x, atol=1e-5)
    np.testing.assert_allclose(got.fun, want.fun, rtol=1e-8)
    got = minimize(rosen, np.zeros(5), method="L-BFGS-B")  # unbounded, the default ftol
    np.testing.assert_allclose(host(got.x), np.ones(5), atol=1e-4)
    assert minimize(quad, np.zeros(2), bounds=[(0, 1), (0, 1)]).message.startswith("CONV")


@pytest.mark.parametrize("method", ["CG", "Newton-CG", "L-BFGS-B"])
def test_gradient_methods_find_scipys_minimum(method):
    for x0 in (np.array([-1.2, 1.0]), np.full(3, 0.5)):
        got = minimize(rosen, dev(x0), method=method)
        want = so.minimize(so.rosen, x0, jac=so.rosen_der, method=method)
        assert got.success and want.success
        # both stop at gtol-level accuracy (SciPy's own x is 3e-4 from the minimum)
        np.testing.assert_allclose(host(got.x), np.ones(x0.size), atol=1e-3)
        np.testing.assert_allclose(want.x, np.ones(x0.size), atol=1e-3)
        assert got.nfev == got.njev if method != "Newton-CG" else got.nhev > 0
    got = minimize(quad, np.zeros(4), method="Newton-CG")
    assert got.success
    np.testing.assert_allclose(host(got.x), _W, rtol=1e-8)


def test_jac_hess_forms_and_tol():
    value_and_grad = lambda x: (rosen(x), funcgrad.grad(rosen)(x))  # noqa: E731
    x0 = np.array([-1.2, 1.0])
    for method in ("L-BFGS-B", "CG", "BFGS"):
        res = minimize(value_and_grad, dev(x0), method=method, jac=True)
        np.testing.assert_allclose(host(res.x), [1.0, 1.0], atol=1e-4)
    res = minimize(rosen, x0, method="CG", jac=funcgrad.grad(rosen))
    np.testing.assert_allclose(host(res.x), [1.0, 1.0], atol=1e-4)
    hess = funcgrad.hessian(rosen)
    near = np.array([0.8, 0.6])
    a = minimize(rosen, near, method="Newton-CG", hess=hess)
    b = minimize(rosen, near, method="Newton-CG", hessp=lambda x, p: hess(x) @ p)
    c = minimize(rosen, near, method="Newton-CG")
    np.testing.assert_allclose(host(a.x), host(c.x), rtol=1e-10)
    np.testing.assert_allclose(host(b.x), host(c.x), rtol=1e-10)
    loose = minimize(rosen, x0, method="Nelder-Mead", tol=1e-1)
    assert loose.nfev == so.minimize(so.rosen, x0, method="Nelder-Mead", tol=1e-1).nfev


def test_callbacks():
    seen = []
    res = minimize(rosen, np.array([-1.2, 1.0]), method="CG", callback=seen.append)
    assert len(seen) == res.nit

    def stop(intermediate_result):
        if intermediate_result.fun < 1.0:
            raise StopIteration

    for method in ("L-BFGS-B", "CG", "Newton-CG", "Nelder-Mead"):
        res = minimize(rosen, np.array([-1.2, 1.0]), method=method, callback=stop)
        assert res.status == 99 and not res.success and res.fun < 1.0
        assert res.message == "`callback` raised `StopIteration`."


def test_host_method_errors():
    with pytest.raises(TypeError, match="outside jit"):
        funcgrad.jit(lambda x: minimize(rosen, x, method="L-BFGS-B").x)(np.zeros(2))
    with pytest.raises(ValueError, match="cannot handle bounds"):
        minimize(rosen, np.zeros(2), method="CG", bounds=[(0, 1)] * 2)
    with pytest.raises(ValueError, match="lower bounds is greater"):
        minimize(rosen, np.zeros(2), method="L-BFGS-B", bounds=[(1, 0)] * 2)
    with pytest.raises(ValueError, match="length of x0"):
        minimize(rosen, np.zeros(2), method="L-BFGS-B", bounds=[(1, 2)])
    with pytest.raises(TypeError, match="unknown"):
        minimize(rosen, np.zeros(2), method="CG", options={"maxfev": 3})
    with pytest.raises(ValueError, match="scalar"):
        minimize(lambda x: x ** 2, np.zeros(2), method="Nelder-Mead")
    with pytest.raises(ValueError, match="callback"):
        minimize(rosen, np.zeros(2), method="BFGS", callback=print)


@pytest.mark.filterwarnings("ignore:Initial guess is not within the specified bounds")
def test_powell_is_scipys_step_for_step():
    for x0 in (np.array([-1.2, 1.0]), np.full(3, 0.5)):
        got = minimize(rosen, dev(x0), method="Powell")
        want = so.minimize(so.rosen, x0, method="Powell")
        np.testing.assert_allclose(host(got.x), want.x, rtol=1e-10)
        assert (got.nit, got.nfev, got.status) == (want.nit, want.nfev, want.status)
    for bounds in ([(0, 0.5), (None, None), (2, 3)], [(0, None), (None, 1.5), (-1, 4)]):
        got = minimize(quad, np.full(3, 0.2), method="Powell", bounds=bounds)
        want = so.minimize(quad_np, np.full(3, 0.2), method="Powell", bounds=bounds)
        np.testing.assert_allclose(host(got.x), want.x, rtol=1e-10)
        assert (got.nit, got.nfev) == (want.nit, want.nfev)


def _hs071(x):
    return x[0] * x[3] * (x[0] + x[1] + x[2]) + x[2]


_SLSQP_CASES = {
    # SciPy's tutorial: three inequalities and bounds
    "tutorial": (lambda x: (x[0] - 1) ** 2 + (x[1] - 2.5) ** 2, np.array([2.0, 0.0]),
                 lambda m: [{"type": "ineq", "fun": lambda x: x[0] - 2 * x[1] + 2},
                            {"type": "ineq", "fun": lambda x: -x[0] - 2 * x[1] + 6},
                            {"type": "ineq", "fun": lambda x: -x[0] + 2 * x[1] + 2}],
                 [(0, None), (0, None)]),
    # Hock-Schittkowski 71: an inequality, an equality and bounds
    "hs071": (_hs071, np.array([1.0, 5.0, 5.0, 1.0]),
              lambda m: [{"type": "ineq", "fun": lambda x: x[0] * x[1] * x[2] * x[3] - 25.0},
                         {"type": "eq", "fun": lambda x: m.sum(x ** 2) - 40.0}],
              [(1, 5)] * 4),
    # a vector-valued inequality with its Jacobian given
    "vector": (lambda x: -x[0] * x[1] * x[2], np.ones(3),
               lambda m: {"type": "ineq",
                          "fun": lambda x: m.stack([10 - x[0] - 2 * x[1] - 2 * x[2], x[0]]),
                          "jac": lambda x: m.array([[-1.0, -2.0, -2.0], [1.0, 0.0, 0.0]])},
               None),
}


@pytest.mark.parametrize("case", sorted(_SLSQP_CASES))
def test_slsqp_matches_scipy(case):
    f, x0, cons, bounds = _SLSQP_CASES[case]
    want = so.minimize(f, x0, method="SLSQP", constraints=cons(np), bounds=bounds)
    got = minimize(f, dev(x0), method="SLSQP", constraints=cons(fnp), bounds=bounds)
    assert got.success and got.status == 0 and got.message == want.message
    np.testing.assert_allclose(host(got.x), want.x, atol=2e-4)  # ftol = 1e-6 on f
    np.testing.assert_allclose(got.fun, want.fun, rtol=1e-6)
    np.testing.assert_allclose(got.multipliers, want.multipliers, atol=1e-3)
    assert is_device_array(got.x) == is_device_array(dev(x0))


def test_slsqp_defaults_errors_and_failures():
    cons = {"type": "eq", "fun": lambda x: x[0] + x[1] - 1.0}
    res = minimize(lambda x: fnp.sum(x ** 2), dev(np.array([2.0, 0.0])), constraints=cons)
    np.testing.assert_allclose(host(res.x), [0.5, 0.5], atol=1e-8)  # SLSQP by default
    np.testing.assert_allclose(res.multipliers, [1.0], atol=1e-8)
    # the linearised constraints contradict each other: stopped, not successful
    bad = [{"type": "ineq", "fun": lambda x: -x[0] - 1}, {"type": "ineq", "fun": lambda x: x[0]}]
    res = minimize(lambda x: fnp.sum(x ** 2), dev(np.array([2.0, 0.0])), method="SLSQP",
                   constraints=bad)
    assert not res.success and res.status in (4, 8)
    with pytest.raises(ValueError, match="cannot handle constraints"):
        minimize(lambda x: fnp.sum(x ** 2), np.zeros(2), method="BFGS", constraints=cons)
    with pytest.raises(ValueError, match="'eq' or 'ineq'"):
        minimize(lambda x: fnp.sum(x ** 2), np.zeros(2), constraints={"type": "le", "fun": len})
    res = minimize(lambda x: fnp.sum(x ** 2), np.array([2.0, 0.0]), constraints=cons,
                   options={"maxiter": 1})
    assert res.status == 9 and not res.success


@pytest.mark.parametrize("case", ["rosen", "rosen_bounded", "quad_bounded", "exp"])
def test_tnc_finds_scipys_minimum(case):
    f, x0, bounds = {
        "rosen": (rosen, np.array([-1.2, 1.0]), None),
        "rosen_bounded": (rosen, np.zeros(2), [(-2.0, 0.5), (-2.0, 0.2)]),
        "quad_bounded": (quad, np.zeros(4), [(0.0, 2.5)] * 4),
        "exp": (lambda x: fnp.sum(fnp.exp(x) - 2.0 * x), np.full(3, 3.0), None),
    }[case]
    f_np = {"rosen": so.rosen, "rosen_bounded": so.rosen, "quad_bounded": quad_np,
            "exp": lambda x: np.sum(np.exp(x) - 2.0 * x)}[case]
    want = so.minimize(f_np, x0, method="TNC", bounds=bounds)
    got = minimize(f, dev(x0), method="TNC", bounds=bounds)
    assert got.success and want.success
    # SciPy's own stopping tests leave it ~1e-5 from the minimum on Rosenbrock's valley
    np.testing.assert_allclose(host(got.x), want.x, atol=1e-4)
    np.testing.assert_allclose(got.fun, want.fun, atol=1e-8)
    assert got.message in ("Local minimum reached (|pg| ~= 0)", "Converged (|f_n-f_(n-1)| ~= 0)",
                           "Converged (|x_n-x_(n-1)| ~= 0)")
    assert is_device_array(got.x) == is_device_array(dev(x0))


def test_tnc_options_and_limits():
    res = minimize(rosen, np.array([-1.2, 1.0]), method="TNC", options={"maxfun": 5})
    assert res.status == 3 and not res.success
    res = minimize(rosen, np.array([0.3, 0.3]), method="TNC", bounds=[(0.3, 0.3)] * 2)
    assert res.status == 5 and res.message == "All lower bounds are equal to the upper bounds"
    res = minimize(quad, np.zeros(4), method="TNC", hessp=lambda x, p: 2.0 * fnp.arange(
        1.0, 5.0) * p)
    np.testing.assert_allclose(host(res.x), np.arange(1.0, 5.0), atol=1e-6)
    with pytest.raises(TypeError, match="unknown"):
        minimize(quad, np.zeros(4), method="TNC", options={"gamma": 1})


@pytest.mark.parametrize("method", ["trust-ncg", "dogleg", "trust-exact"])
@pytest.mark.parametrize("x0", [[-1.2, 1.0], [1.3, 0.7, 0.8, 1.9, 1.2], [0.0, 0.0, 0.0]])
def test_trust_region_methods_step_for_step(method, x0):
    x0 = np.array(x0)
    want = so.minimize(so.rosen, x0, method=method, jac=so.rosen_der, hess=so.rosen_hess)
    got = minimize(rosen, dev(x0), method=method)
    assert (got.status, got.nit, got.nfev, got.message) == (want.status, want.nit, want.nfev,
                                                             want.message)
    np.testing.assert_allclose(host(got.x), want.x, rtol=1e-12, atol=1e-14)
    assert is_device_array(got.x) == is_device_array(dev(x0))


def test_trust_region_hessians_and_failures():
    want = so.minimize(so.rosen, np.array([-1.2, 1.0]), method="trust-ncg", jac=so.rosen_der,
                       hessp=so.rosen_hess_prod)
    got = minimize(rosen, np.array([-1.2, 1.0]), method="trust-ncg",
                   hessp=lambda x, p: fnp.asarray(so.rosen_hess_prod(host(x), host(p))))
    assert got.nit == want.nit
    # dogleg needs a positive definite Hessian (SciPy's status 3)
    res = minimize(lambda x: x[0] ** 2 - x[1] ** 2, np.array([1.0, 1.0]), method="dogleg")
    assert res.status == 3 and res.message.startswith("A linalg error")
    with pytest.raises(ValueError, match="eta"):
        minimize(rosen, np.zeros(2), method="trust-ncg", options={"eta": 0.5})


def test_slsqp_takes_linear_and_nonlinear_constraints():
    from funcgrad.scipy.optimize import LinearConstraint, NonlinearConstraint
    x0 = np.array([2.0, 0.0, 1.0])
    want = so.minimize(lambda x: np.sum(x ** 2), x0, method="SLSQP", constraints=[
        so.LinearConstraint(np.array([[1.0, 1.0, 0.0]]), 1.0, 1.0),
        so.NonlinearConstraint(lambda x: x[2] ** 2, 0.25, np.inf),
        so.LinearConstraint([[0.0, 1.0, 0.0]], -np.inf, 0.3)])
    got = minimize(lambda x: fnp.sum(x ** 2), dev(x0), constraints=[
        LinearConstraint(np.array([[1.0, 1.0, 0.0]]), 1.0, 1.0),
        NonlinearConstraint(lambda x: x[2] ** 2, 0.25, np.inf),
        LinearConstraint([[0.0, 1.0, 0.0]], -np.inf, 0.3)])
    np.testing.assert_allclose(host(got.x), want.x, atol=1e-6)
    np.testing.assert_allclose(got.multipliers, want.multipliers, atol=1e-6)  # [1.4, 1, 0.8]
    # one vector constraint with an equality row and a row bounded above
    got = minimize(lambda x: (x[0] - 1) ** 2 + (x[1] + 2) ** 2, np.zeros(2),
                   constraints=NonlinearConstraint(lambda x: fnp.stack([x[0] + x[1], x[0] * x[1]]),
                                                   [0.5, -np.inf], [0.5, 0.1]))
    np.testing.assert_allclose(host(got.x), [1.75, -1.25], atol=1e-6)  # SciPy's


@pytest.mark.parametrize("case", ["indefinite", "hard_case", "three"])
def test_trust_exact_indefinite_hessians_step_for_step(case):
    # Moré-Sorensen's branches: an indefinite Hessian (a singular leading minor), the hard
    # case (zero gradient along the negative curvature), as SciPy's IterativeSubproblem
    f, x0 = {
        "indefinite": (lambda x: x[0] ** 2 - x[1] ** 2 + x[1] ** 4 + 0.1 * x[0] * x[1],
                       [0.3, 0.01]),
        "hard_case": (lambda x: x[0] ** 2 - x[1] ** 2 + x[1] ** 4, [0.5, 0.0]),
        "three": (lambda x: (x[0] ** 2 - 1) ** 2 + (x[1] ** 2 - 1) ** 2 + 0.5 * x[0] * x[1]
                  - x[2] ** 2 + x[2] ** 4, [0.1, -0.2, 0.05]),
    }[case]
    x0 = np.array(x0)
    want = so.minimize(f, x0, method="trust-exact",
                       jac=lambda x: host(funcgrad.grad(f)(x)),
                       hess=lambda x: host(funcgrad.hessian(f)(x)))
    got = minimize(f, dev(x0), method="trust-exact")
    assert (got.status, got.nit) == (want.status, want.nit)
    np.testing.assert_allclose(host(got.x), want.x, rtol=1e-12, atol=1e-14)
