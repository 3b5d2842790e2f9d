"""odeint, the example libraries' optimizers and stax, and nn.initializers with data on a
device and the default device left at "cpu" (how GPU users work: device_put their data, keep
the default): everything runs and results stay on the data's device. The strict pass makes
"strict" the default device, which hides a constant made on the default device; here the
default stays "cpu" in both passes."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import random
from funcgrad.backend import device_of, to_numpy
from funcgrad.example_libraries import optimizers, stax
from funcgrad.experimental.ode import odeint
from funcgrad.nn import initializers


def on_device(x):
    return funcgrad.tree_util.tree_map(lambda v: funcgrad.device_put(np.asarray(v), "strict"),
                                       x)


def assert_on_device(tree):
    for leaf in funcgrad.tree_util.tree_leaves(tree):
        assert device_of(leaf) == "strict", leaf


def test_odeint_and_its_gradient():
    ts, y0, k = on_device((np.array([0.0, 0.5, 1.0]), np.array([1.0, 2.0]), np.array(0.7)))
    with funcgrad.default_device("cpu"):
        ys = odeint(lambda y, t, k: -k * y, y0, ts, k)
        g = funcgrad.grad(lambda k, ts: fnp.sum(odeint(lambda y, t, k: -k * y, y0, ts, k)),
                          (0, 1))(k, ts)
    assert_on_device((ys, g))
    np.testing.assert_allclose(to_numpy(ys[-1]), np.exp(-0.7) * np.array([1.0, 2.0]),
                               rtol=1e-7)


SCHEDULE = optimizers.piecewise_constant([1, 3], [0.1, 0.05, 0.01])


@pytest.mark.parametrize("name", ["sgd", "momentum", "nesterov", "adagrad", "rmsprop",
                                  "rmsprop_momentum", "adam", "adamax", "sm3"])
def test_optimizers(name):
    maker = getattr(optimizers, name)
    opt_init, opt_update, get_params = (maker(SCHEDULE, 0.9) if name in ("momentum", "nesterov")
                                        else maker(SCHEDULE))
    params = on_device({"w": np.ones((2, 2)), "b": np.zeros(2)})

    def grads(p):
        return funcgrad.grad(lambda p: fnp.sum(p["w"] ** 2) + fnp.sum((p["b"] - 1) ** 2))(p)

    with funcgrad.default_device("cpu"):
        state = opt_init(params)
        step = funcgrad.jit(lambda i, s: opt_update(i, grads(get_params(s)), s))
        for i in range(3):
            state = step(i, state)
        state = opt_update(3, grads(get_params(state)), state)  # eagerly, a Python step
    assert_on_device(get_params(state))


def test_stax_network_and_initializers():
    key = funcgrad.device_put(random.PRNGKey(0), "strict")
    x = on_device(np.random.default_rng(0).normal(size=(2, 6, 6, 1)))
    init_fun, apply_fun = stax.serial(
        stax.Conv(2, (3, 3), padding="SAME"), stax.BatchNorm(), stax.Relu,
        stax.AvgPool((2, 2), padding="SAME"), stax.MaxPool((2, 2)), stax.Flatten,
        stax.Dense(3), stax.Dropout(0.5), stax.LogSoftmax)
    with funcgrad.default_device("cpu"):
        _, params = init_fun(key, (2, 6, 6, 1))
        out = apply_fun(params, x, rng=key)
        grads = funcgrad.grad(lambda p: fnp.sum(apply_fun(p, x, rng=key)))(params)
        inits = [init(key, (3, 2)) for init in (
            initializers.zeros, initializers.ones, initializers.constant(2.0),
            initializers.uniform(), initializers.normal(), initializers.truncated_normal(),
            initializers.glorot_normal(), initializers.lecun_uniform(),
            initializers.variance_scaling(1.0, "fan_in", "truncated_normal"))]
        inits.append(initializers.delta_orthogonal()(key, (3, 3, 2, 2)))
    assert_on_device((params, out, grads, inits))
