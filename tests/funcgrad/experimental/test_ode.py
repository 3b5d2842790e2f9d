"""funcgrad.experimental.ode.odeint against jax.experimental.ode.odeint (JAX 0.10.2 with
x64): values and adjoint gradients on exponential decay, Lotka-Volterra and a damped pendulum
with a pytree state, under jit, vmap and grad. fixtures/make_ode_reference.py prints the literals."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_close as _assert_close
from helpers import dev

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.example_libraries import optimizers, stax
from funcgrad.experimental.ode import odeint

from .fixtures.make_ode_reference import neural_ode

# ODE solutions agree with JAX's to the last bits, not bit for bit: the same steps are taken,
# but sums are reassociated; the adjoint's integration accumulates that
RTOL, GRAD_RTOL = 1e-11, 1e-8


def assert_close(actual, desired, rtol):
    _assert_close(actual, np.asarray(desired), rtol=rtol)


def decay(y, t, k):
    return -k * y


def lv(y, t, a, b, c, d):
    x, z = y[0], y[1]
    return fnp.stack([a * x - b * x * z, -c * z + d * x * z])


def make_pendulum(damp):
    def pend(state, t, p):
        th, om = state["theta"], state["omega"]
        return {"theta": om, "omega": -p["g"] / p["l"] * fnp.sin(th) - damp * om}
    return pend


def test_decay_values_and_gradients():
    ts = dev(np.linspace(0.0, 2.0, 5))
    y0 = dev(np.array([1.0, 2.0]))
    assert_close(odeint(decay, y0, ts, 0.7), [
        [1.0, 2.0], [0.7046880889278857, 1.4093761778557714],
        [0.496585306663409, 0.993170613326818], [0.34993775017722356, 0.6998755003544471],
        [0.24659696330987577, 0.49319392661975153]], rtol=RTOL)
    g = funcgrad.grad(lambda y0, t, k: fnp.sum(odeint(decay, y0, t, k) ** 2),
                      (0, 1, 2))(y0, ts, 0.7)
    assert_close(g[0], [3.8528975160173617, 7.7057950320347235], rtol=GRAD_RTOL)
    assert_close(g[1], [6.485141325485038, -3.47609711873785, -1.7261787675579436,
                        -0.8571950029936785, -0.4256704361955655], rtol=GRAD_RTOL)
    assert_close(g[2], -8.001943887277475, rtol=GRAD_RTOL)


def test_lotka_volterra_values_and_gradients():
    ts = dev(np.linspace(0.0, 3.0, 4))
    y0 = dev(np.array([1.0, 1.0]))
    assert_close(odeint(lv, y0, ts, 1.5, 1.0, 3.0, 1.0), [
        [1.0, 1.0], [2.7728509386292246, 0.2587108801878329],
        [6.7771891781301825, 2.0127539069094205], [0.9703304237727192, 1.9098537375797022]],
        rtol=RTOL)
    g = funcgrad.grad(lambda y0, a, b: fnp.sum(odeint(lv, y0, ts, a, b, 3.0, 1.0)[-1]),
                      (0, 1, 2))(y0, 1.5, 1.0)
    assert_close(g[0], [-1.8845905471479079, 1.6658851646699073], rtol=GRAD_RTOL)
    assert_close(g[1], -5.174715351271165, rtol=GRAD_RTOL)
    assert_close(g[2], -0.24396860402281415, rtol=GRAD_RTOL)


def test_pendulum_pytree_state_params_and_closure():
    ts = dev(np.array([0.0, 0.5, 1.5, 3.0]))
    y0 = {"theta": dev(np.array(1.0)), "omega": dev(np.array(0.0))}
    p = {"g": 9.81, "l": 1.3}
    out = odeint(make_pendulum(0.1), y0, ts, p, rtol=1e-6, atol=1e-6)
    assert_close(out["theta"], [1.0, 0.29613603857691806, -0.7009616757632707,
                                0.06626101782935408], rtol=RTOL)
    assert_close(out["omega"], [0.0, -2.455332598170687, 1.5990040549228002,
                                -2.272760298968885], rtol=RTOL)

    def loss(y0, p, damp):  # damp reaches func only through its closure
        o = odeint(make_pendulum(damp), y0, ts, p, rtol=1e-6, atol=1e-6)
        return fnp.sum(o["theta"] ** 2) + fnp.sum(fnp.cos(o["omega"]))

    g = funcgrad.grad(loss, (0, 1, 2))(y0, p, 0.1)
    assert_close(g[0]["theta"], 0.46714079386778384, rtol=GRAD_RTOL)
    assert_close(g[0]["omega"], 1.5984635097330433, rtol=GRAD_RTOL)
    assert_close(g[1]["g"], -0.9417646978251581, rtol=GRAD_RTOL)
    assert_close(g[1]["l"], 7.106701296665232, rtol=GRAD_RTOL)
    assert_close(g[2], 2.930679197236871, rtol=GRAD_RTOL)


def test_neural_ode_training_matches_jax():
    # stax dynamics, adjoint gradients through the parameters' pytree, adam, jitted steps
    got = neural_ode(funcgrad, fnp, stax, optimizers, odeint, funcgrad.random.PRNGKey(0))
    assert_close(np.array(got), [
        0.5181324492101883, 0.28483190411381065, 0.14764546358138478, 0.07041080493797729,
        0.03179280910389933, 0.0194653839780098, 0.025567086036308386], rtol=1e-10)


def test_jit_of_vmap():
    f = funcgrad.jit(funcgrad.vmap(lambda y0: odeint(decay, y0, fnp.array([0.0, 1.0]), 0.3)))
    assert_close(f(dev(np.array([[1.0], [2.0], [3.0]]))), [
        [[1.0], [0.7408182225897344]], [[2.0], [1.4816364401309858]],
        [[3.0], [2.2224546566176464]]], rtol=RTOL)


def test_vmap_of_grad_matches_per_example():
    ts = dev(np.array([0.0, 0.5, 1.0]))

    def loss(k):
        return fnp.sum(odeint(decay, fnp.array([1.0]), ts, k))

    ks = dev(np.array([0.2, 0.9]))
    batched = funcgrad.vmap(funcgrad.grad(loss))(ks)
    # d/dk sum_t exp(-k t) = -sum_t t exp(-k t)
    exact = [-sum(t * np.exp(-k * t) for t in (0.0, 0.5, 1.0)) for k in (0.2, 0.9)]
    assert_close(batched, exact, rtol=1e-7)


def test_hmax_and_mxstep():
    ts = dev(np.array([0.0, 1.0, 4.0]))
    y0 = dev(np.array([1.0]))

    def f(y, t):
        return fnp.cos(t) * y

    assert_close(odeint(f, y0, ts, hmax=0.1, rtol=1e-5, atol=1e-5),
                 [[1.0], [2.3197768264081677], [0.46916418621367106]], rtol=RTOL)
    # too few steps: the answer is JAX's (extrapolated from where the solver stopped)
    assert_close(odeint(f, y0, ts, mxstep=3),
                 [[1.0], [2.3300316901987017], [-42.77116724015991]], rtol=1e-9)


def test_integer_args_are_held_fixed_under_grad():
    # (JAX's adjoint fails on integer args: a float0 cotangent in its augmented state)
    ts = dev(np.array([0.0, 1.0]))

    def f(y, t, n, k):
        return -k * y * fnp.sum(n)

    def loss(k):
        return odeint(f, fnp.ones(1), ts, dev(np.array([2, 3])), k)[-1, 0]

    _assert_close(funcgrad.grad(loss)(0.5), np.asarray(-5.0 * np.exp(-2.5)), rtol=1e-7)
    _assert_close(funcgrad.grad(lambda k: odeint(lambda y, t, n, k: -k * n * y, fnp.ones(1),
                                                 ts, 2, k)[-1, 0])(0.5),
                  np.asarray(-2.0 * np.exp(-1.0)), rtol=1e-7)


def test_bad_inputs():
    with pytest.raises(TypeError, match="y0 must hold floating-point"):
        odeint(decay, np.array([1, 2]), np.array([0.0, 1.0]), 0.5)
    with pytest.raises(TypeError, match="must return the structure and shapes of y0"):
        odeint(lambda y, t: fnp.ones(2), np.array([1.0]), np.array([0.0, 1.0]))
    with pytest.raises(TypeError, match="t must be an array of floats"):
        odeint(decay, 1.0, np.array([0, 1]), 0.5)
    with pytest.raises(TypeError, match="odeint \\*args must be arrays or scalars"):
        odeint(decay, 1.0, np.array([0.0, 1.0]), "k")


def test_float32_state_keeps_its_dtype():
    ts = dev(np.array([0.0, 0.5, 1.0], np.float32))
    ys = odeint(decay, dev(np.array([1.0, 2.0], np.float32)), ts, 0.7)
    assert ys.dtype == np.float32
    _assert_close(ys, np.exp(-0.7 * np.array([0.0, 0.5, 1.0]))[:, None] * [1.0, 2.0],
                  rtol=1e-5)


def test_scalar_state_and_no_args():
    ys = odeint(lambda y, t: -y, 1.0, dev(np.array([0.0, 1.0])))
    assert ys.shape == (2,)
    _assert_close(ys, np.array([1.0, np.exp(-1.0)]), rtol=1e-7)


def test_repeated_calls_reuse_the_compiled_solver(monkeypatch):
    """The same system solved again (forward and adjoint) traces nothing new: no
    RetraceWarning however many times a training loop calls it."""
    import warnings

    from funcgrad import api_jit

    monkeypatch.setattr(api_jit, "RETRACE_WARN_AFTER", 3)  # the bound, made small to test
    def growth(y, t, k):  # this test's own system: no traces from other tests
        return k * y

    ts = dev(np.array([0.0, 1.0]))
    g = funcgrad.grad(lambda k: fnp.sum(odeint(growth, fnp.ones(1), ts, k)))
    from funcgrad.experimental import ode

    g(0.0)
    solvers = {id(v) for v in ode._SOLVERS.values()}  # incl. the forward and adjoint ones
    with warnings.catch_warnings():
        warnings.simplefilter("error", api_jit.RetraceWarning)
        for i in range(1, 6):
            g(0.1 * i)
    assert {id(v) for v in ode._SOLVERS.values()} <= solvers  # no new solver was made


def test_many_different_systems_do_not_warn(monkeypatch):
    """A fresh function per call (a lambda in a loop) compiles a solver per system, as JAX's
    jit with a static function does, without a RetraceWarning from the library's jit."""
    import warnings

    from funcgrad import api_jit

    monkeypatch.setattr(api_jit, "RETRACE_WARN_AFTER", 3)  # the bound, made small to test
    ts = dev(np.array([0.0, 1.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", api_jit.RetraceWarning)
        for i in range(5):
            odeint(lambda y, t, i=i: -0.1 * i * y, fnp.ones(1), ts)
