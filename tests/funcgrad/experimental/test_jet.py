"""funcgrad.experimental.jet.jet against jax.experimental.jet.jet (JAX 0.10.2, x64): JAX's
convention (series terms are derivatives, not divided by k!), factorial_scaled=False, several
arguments, pytree outputs, under jit and vmap. fixtures/make_jet_reference.py prints the
literals."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_close, dev

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.experimental.jet import jet

CASES = {
    "sin_cube": (lambda x: fnp.sin(x ** 3), (0.5,), ((1.0, 0.0, 0.0, 0.0),), {}),
    "exp_log": (lambda x: fnp.exp(x) * fnp.log(x), (1.5,), ((0.7, -0.3, 0.2),), {}),
    "two_args": (lambda x, y: fnp.tanh(x * y) + x / y, (np.array([0.3, 1.2]), 2.0),
                 ((np.array([1.0, 0.5]), np.array([0.0, 0.1])), (0.5, 0.25)), {}),
    "not_factorial_scaled": (lambda x: fnp.sin(x) ** 2, (0.8,), ((1.0, 0.5, 0.1),),
                             {"factorial_scaled": False}),
    "pytree_out": (lambda x: {"a": fnp.cos(x), "b": (x ** 2, fnp.sqrt(x))},
                   (np.array([1.0, 2.0]),), ((np.ones(2), np.zeros(2)),), {}),
    "matvec": (lambda w: fnp.tanh(w @ fnp.array([1.0, -1.0])),
               (np.array([[0.5, 0.1], [0.2, -0.3]]),), ((np.eye(2), np.ones((2, 2))),), {}),
}

# jax.tree_util.tree_leaves(jax.experimental.jet.jet(...)) for each case
JAX = {
    "sin_cube": [0.12467473338522769, 0.7441482504219967, 2.9064634641587928,
                 4.693048162163317, -15.616916518172042],
    "exp_log": [1.8171685434118021, 3.363472879879358, 1.4009487820389828,
                -0.13452329853653613],
    "two_args": [[0.6870495669980351, 1.5836748576936803],
                 [1.9923921895625294, 0.1518140389461087],
                 [-3.0180540384391303, -0.20571436129659634]],
    "not_factorial_scaled": [0.5145997611506444, 0.9995736030415051, 0.47058727921946375,
                             -0.5956245640248083],
    "pytree_out": [[0.5403023058681398, -0.4161468365471424], [1.0, 4.0],
                   [1.0, 1.4142135623730951], [-0.8414709848078965, -0.9092974268256817],
                   [-0.5403023058681391, 0.4161468365471419], [2.0, 4.0],
                   [1.9999999999999976, 1.9999999999999976], [0.5, 0.3535533905932738],
                   [-0.2499999999999997, -0.08838834764831834]],
    "matvec": [[0.379948962255225, 0.4621171572600098],
               [0.8556387860811776, -0.7864477329659274],
               [-0.6501981376737269, -0.7268619813835864]],
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_jax(name):
    f, primals, series, kw = CASES[name]
    out = jet(f, dev(primals), dev(series), **kw)
    leaves = tree_util.tree_leaves(out)
    assert len(leaves) == len(JAX[name])
    for got, want in zip(leaves, JAX[name]):
        assert_close(got, np.asarray(want), rtol=1e-13, atol=1e-14)


def test_output_structure_is_jaxs():
    # (primal_out, series_out): series_out has the output's structure with a list of terms
    # at each leaf
    f, primals, series, kw = CASES["pytree_out"]
    y0, ys = jet(f, dev(primals), dev(series))
    assert set(y0) == {"a", "b"} and isinstance(y0["b"], tuple)
    assert isinstance(ys["a"], list) and len(ys["a"]) == 2
    assert isinstance(ys["b"][1], list) and len(ys["b"][1]) == 2


def test_under_jit_and_vmap():
    def third(x):  # d^3/dt^3 sin(x + t) = -cos(x)
        return jet(fnp.sin, (x,), ((1.0, 0.0, 0.0),))[1][2]

    xs = dev(np.array([0.1, 0.7, 2.0]))
    assert_close(funcgrad.jit(funcgrad.vmap(third))(xs), -np.cos(np.array([0.1, 0.7, 2.0])))


def test_inconsistent_orders_are_refused():
    with pytest.raises(ValueError, match="same length"):
        jet(lambda x, y: x * y, (1.0, 2.0), ((1.0,), (1.0, 0.0)))
