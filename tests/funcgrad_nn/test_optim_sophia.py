"""optim.contrib.sophia against optax.contrib 0.2.8's: the objective is separable, so
Hutchinson's estimate r * (H r) is the exact Hessian diagonal whatever the random signs (whose
bits differ from JAX's) and the trajectories are comparable; the literals are optax's float64
params after 7 steps."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad_nn import optim
from funcgrad_nn.optim import contrib
from tests.helpers import assert_allclose, dev, host

OPTAX = {
    "default": {"a": [0.6499702504812458, -0.14998775021874802, 1.6499352510062415],
                "b": [[-0.050005249886251116, -0.8499632505862449]]},
    "interval3": {"a": [0.2975543710645555, 0.20069825174903783, 1.2940596166917426],
                  "b": [[-0.3999993008744752, -0.4968554201899929]]},
    "scale_clip": {"a": [4.5, -4.0, 5.5], "b": [[3.8, -4.7]]},
}
CASES = {
    "default": lambda: contrib.sophia(0.05),
    "interval3": lambda: contrib.sophia(0.05, b1=0.9, b2=0.95, gamma=0.05, clip_threshold=2.0,
                                        update_interval=3, weight_decay=0.01),
    "scale_clip": lambda: contrib.scale_by_sophia(clip_threshold=0.5, update_interval=2,
                                                  gamma=0.2),
}


def f(p):
    return (fnp.sum(fnp.cosh(p["a"]) + 0.3 * p["a"] ** 4)
            + fnp.sum(fnp.sin(p["b"]) * 2 + p["b"] ** 2))


@pytest.mark.parametrize("name, jitted", [*((n, False) for n in sorted(CASES)),
                                          ("interval3", True)])
def test_matches_optax(name, jitted):
    tx = CASES[name]()
    p = dev({"a": np.array([1.0, -0.5, 2.0]), "b": np.array([[0.3, -1.2]])})
    s = tx.init(p)

    def step(g, s, p):
        return tx.update(g, s, p, obj_fn=f)

    step = funcgrad.jit(step) if jitted else step
    for _ in range(7):
        u, s = step(funcgrad.grad(f)(p), s, p)
        p = optim.apply_updates(p, u)
    for k, v in OPTAX[name].items():
        assert_allclose(host(p[k]), np.array(v), rtol=1e-12, atol=1e-14, err_msg=k)


def test_hutchinson_is_exact_on_separable_objectives_and_checks_arguments():
    tx = contrib.hutchinson_estimator_diag_hessian()
    p = dev(np.array([1.0, -2.0, 0.5]))
    s = tx.init(p)
    d, s2 = tx.update(None, s, p, obj_fn=lambda x: fnp.sum(x ** 3))
    assert_allclose(host(d), 6 * np.array([1.0, -2.0, 0.5]), rtol=1e-15)
    assert isinstance(s2, contrib.HutchinsonState)
    with pytest.raises(ValueError, match="obj_fn must be provided"):
        tx.update(None, s, p)
    with pytest.raises(ValueError, match="params must be provided"):
        tx.update(None, s, obj_fn=fnp.sum)
    with pytest.raises(ValueError, match="params must be provided to sophia"):
        sx = contrib.sophia(0.1)
        sx.update(p, sx.init(p))
    st = contrib.sophia(0.1).init(p)[0]
    assert isinstance(st, contrib.SophiaState) and int(host(st.count)) == 0
