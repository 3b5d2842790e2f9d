"""optax's L-BFGS and line searches against optax 0.2.8: trajectories, step sizes and
line-search counts recorded by tests/funcgrad_nn/fixtures/make_linesearch_fixtures.py
(float64, jax_enable_x64), eagerly and under jit, and optax's argument checks."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad_nn import optim
from tests.helpers import assert_allclose, dev, host

A = np.array([[3.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.0]])
B = np.array([1.0, -2.0, 0.5])
W0 = np.array([2.0, -1.0, 3.0])

# name: (parameters after each of 4 steps, the line search's step size, its trial count)
OPTAX = {
    'lbfgs': ([[1.5188015220358912, -1.2582172530428706, 2.1622817448354015], [0.9664334656146774, -1.465869515834788, 1.6269145322062153], [0.5956959346783997, -1.324486853876523, 1.1490095329330217], [0.44313749333210184, -1.2073046622885886, 0.7006428941841876]],
        [1.0, 1.0, 1.0, 1.0], [1, 1, 1, 1]),
    'lbfgs_mem2_noscale': ([[0.18099840294183145, -1.976099504013785, -0.1666992183272118], [0.13396381726483295, -0.7629375060484052, -0.7507728843355647], [0.28448289803322135, -1.0211506724690353, -0.32584280624835477], [0.43663411617130454, -1.117699723942334, -0.082513869454683]],
        [0.2681369353419687, 0.3224256141921707, 1.0, 1.0], [3, 2, 1, 1]),
    'lbfgs_backtracking': ([[1.5188015220358912, -1.2582172530428706, 2.1622817448354015], [0.9664334656146774, -1.465869515834788, 1.6269145322062153], [0.5956959346783997, -1.324486853876523, 1.1490095329330217], [0.44313749333210184, -1.2073046622885886, 0.7006428941841876]],
        [1.0, 1.0, 1.0, 1.0], [1, 1, 1, 1]),
    'sgd_zoom_keep': ([[0.18099840294183145, -1.976099504013785, -0.1666992183272118], [0.5690107824333146, -0.5454573720713327, 0.013076964431173621], [0.2800391930291451, -1.155364327621178, -0.051346599881701274], [0.3726584242875452, -1.083053024699892, -0.01638131282711327]],
        [0.2681369353419687, 0.2681369353419687, 0.2681369353419687, 0.2681369353419687], [3, 1, 1, 1]),
    'sgd_backtracking': ([[0.3040367091367857, -1.910075576467035, 0.04749812415011112], [0.49764692394443033, -1.0452032960413375, 0.1241152411968753], [0.3919691697634516, -1.1898476751210323, 0.09751294078248518], [0.4058262286473282, -1.1390173880317827, 0.09789065095957591]],
        [0.25, 0.1875, 0.28125, 0.2109375], [3, 2, 1, 2]),
}

CASES = {
    "lbfgs": lambda: optim.lbfgs(),
    "lbfgs_mem2_noscale": lambda: optim.lbfgs(memory_size=2, scale_init_precond=False),
    "lbfgs_backtracking": lambda: optim.lbfgs(
        linesearch=optim.scale_by_backtracking_linesearch(15, store_grad=True)),
    "sgd_zoom_keep": lambda: optim.chain(optim.sgd(1.0), optim.scale_by_zoom_linesearch(10)),
    "sgd_backtracking": lambda: optim.chain(
        optim.sgd(1.0), optim.scale_by_backtracking_linesearch(20, decrease_factor=0.5)),
}


def f(w):
    a, b = dev(A.astype(w.dtype)), dev(B.astype(w.dtype))
    return 0.5 * w @ a @ w - b @ w + 0.1 * fnp.sum(w ** 4) + fnp.sum(fnp.sin(w))


def _step(tx, name):
    def step(w, s):
        if name == "sgd_backtracking":  # nothing kept in the state: the plain gradient
            v, g = funcgrad.value_and_grad(f)(w)
        else:
            v, g = optim.value_and_grad_from_state(f)(w, state=s)
        u, s = tx.update(g, s, w, value=v, grad=g, value_fn=f)
        return optim.apply_updates(w, u), s
    return step


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_optax(name):
    traj, lrs, counts = OPTAX[name]
    tx = CASES[name]()
    w = dev(W0.copy())
    s = tx.init(w)
    step = _step(tx, name)
    for t in range(4):
        w, s = step(w, s)
        assert_allclose(host(w), np.array(traj[t]), rtol=1e-10, atol=1e-12, err_msg=f"{name} step {t + 1}")
        assert abs(float(host(s[-1].learning_rate)) - lrs[t]) <= 1e-10 * abs(lrs[t])
        assert int(host(s[-1].info.num_linesearch_steps)) == counts[t]


def test_lbfgs_under_jit_matches_optax():
    traj, _, _ = OPTAX["lbfgs_mem2_noscale"]
    tx = CASES["lbfgs_mem2_noscale"]()
    w = dev(W0.copy())
    s = tx.init(w)
    step = funcgrad.jit(_step(tx, "lbfgs_mem2_noscale"))
    for t in range(4):
        w, s = step(w, s)
        assert_allclose(host(w), np.array(traj[t]), rtol=1e-10, atol=1e-12)


def test_float32_params_keep_their_dtype():
    tx = optim.lbfgs()
    w = dev(W0.astype(np.float32))
    s = tx.init(w)
    w, s = _step(tx, "lbfgs")(w, s)
    assert w.dtype == np.float32 and s[-1].learning_rate.dtype == np.float32
    assert_allclose(host(w), np.array(OPTAX["lbfgs"][0][0], np.float32), rtol=1e-5)


def test_extra_keyword_arguments_reach_value_fn():
    def loss(w, data):
        return fnp.sum((w - data) ** 2)

    tx = optim.lbfgs()
    w = dev(np.zeros(2))
    data = dev(np.array([1.0, -2.0]))
    s = tx.init(w)
    for _ in range(2):
        v, g = optim.value_and_grad_from_state(loss)(w, data=data, state=s)
        u, s = tx.update(g, s, w, value=v, grad=g, value_fn=loss, data=data)
        w = optim.apply_updates(w, u)
    assert_allclose(host(w), np.array([1.0, -2.0]), atol=1e-12)
    with pytest.raises(TypeError, match="not consumed by `value_fn`: \\['other'\\]"):
        tx.update(g, s, w, value=v, grad=g, value_fn=loss, data=data, other=1)


def test_argument_checks():
    with pytest.raises(ValueError, match="memory_size must be >= 1"):
        optim.scale_by_lbfgs(memory_size=0)
    with pytest.raises(ValueError, match="Unknown initial guess strategy"):
        optim.scale_by_zoom_linesearch(5, initial_guess_strategy="two")
    vg = optim.value_and_grad_from_state(f)
    w = dev(W0.copy())
    with pytest.raises(ValueError, match="Value or gradient not found in the state"):
        vg(w, state=optim.sgd(0.1).init(w))


def test_lbfgs_without_linesearch_is_a_fixed_step():
    tx = optim.lbfgs(0.5, linesearch=None)
    w = dev(np.array([3.0, 4.0]))
    u, _ = tx.update(w, tx.init(w), w)
    assert_allclose(host(u), np.array([-0.3, -0.4]))  # first step: the direction scaled to norm 1
