"""solve_ivp (RK45, RK23: SciPy's steps, t_eval, dense output, options, backward, complex)
and odeint (SciPy's signature; differentiable) against scipy.integrate (a test dependency)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.scipy.integrate as fsi

si = pytest.importorskip("scipy.integrate")

_ARGS = (1.5, 1.0, 3.0, 1.0)


def _lv(t, y, a, b, c, d):
    return fnp.stack([a * y[0] - b * y[0] * y[1], -c * y[1] + d * y[0] * y[1]])


def _lv_np(t, y, a, b, c, d):
    return [a * y[0] - b * y[0] * y[1], -c * y[1] + d * y[0] * y[1]]


@pytest.mark.parametrize("method", ["RK45", "RK23"])
def test_solve_ivp_is_scipys_stepping(method):
    for kw in ({}, {"max_step": 0.5}, {"first_step": 0.01},
               {"t_eval": np.linspace(0.0, 6.0, 13)}, {"dense_output": True}):
        got = fsi.solve_ivp(_lv, (0.0, 6.0), dev(np.array([10.0, 5.0])), method=method,
                            args=_ARGS, **kw)
        want = si.solve_ivp(_lv_np, (0.0, 6.0), [10.0, 5.0], method=method, args=_ARGS, **kw)
        assert got.t.shape == want.t.shape and got.nfev == want.nfev
        assert (got.status, got.message, got.success) == (want.status, want.message,
                                                          want.success)
        np.testing.assert_allclose(got.t, want.t, rtol=1e-12)
        assert_allclose(got.y, want.y, rtol=1e-10)
        if kw.get("dense_output"):
            times = np.linspace(0.0, 6.0, 7)
            assert_allclose(got.sol(times), want.sol(times), rtol=1e-10)
            assert_allclose(got.sol(3.3), want.sol(3.3), rtol=1e-10)


def test_solve_ivp_backward_complex_and_errors():
    got = fsi.solve_ivp(lambda t, y: -y, (5.0, 0.0), np.array([1.0]), t_eval=[4.0, 2.0, 1.0])
    want = si.solve_ivp(lambda t, y: -y, (5.0, 0.0), [1.0], t_eval=[4.0, 2.0, 1.0])
    assert_allclose(got.y, want.y, rtol=1e-12)
    assert got.nfev == want.nfev
    got = fsi.solve_ivp(lambda t, y: -y, (0.0, 1.0), np.array([1.0 + 1.0j]))
    assert_allclose(got.y, si.solve_ivp(lambda t, y: -y, (0.0, 1.0), [1.0 + 1.0j]).y,
                    rtol=1e-12)
    with pytest.raises(ValueError, match="not provided"):
        fsi.solve_ivp(lambda t, y: -y, (0.0, 1.0), np.array([1.0]), method="BDF")
    with pytest.raises(ValueError, match="events"):
        fsi.solve_ivp(lambda t, y: -y, (0.0, 1.0), np.array([1.0]), events=lambda t, y: y)
    with pytest.raises(ValueError, match="within"):
        fsi.solve_ivp(lambda t, y: -y, (0.0, 1.0), np.array([1.0]), t_eval=[2.0])


def test_odeint_scipy_signature_and_gradient():
    t = np.linspace(0.0, 2.0, 5)
    got = fsi.odeint(lambda y, t, k: -k * y, dev(np.array([1.0, 2.0])), dev(t), args=(0.7,))
    want = si.odeint(lambda y, t, k: -k * y, [1.0, 2.0], t, args=(0.7,))
    assert_allclose(got, want, rtol=1e-7)
    got = fsi.odeint(lambda t, y: -y, dev(np.array([1.0])), dev(t), tfirst=True)
    assert_allclose(host(got)[:, 0], np.exp(-t), rtol=1e-7)
    g = funcgrad.grad(lambda k: fsi.odeint(lambda y, t, k: -k * y, dev(np.array([1.0])),
                                           dev(np.array([0.0, 1.0])), args=(k,))[-1, 0])(0.7)
    assert_allclose(g, -np.exp(-0.7), rtol=1e-6)
