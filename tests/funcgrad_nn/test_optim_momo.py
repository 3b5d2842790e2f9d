"""optim.contrib.momo / momo_adam against optax.contrib 0.2.8's: the literals are optax's
float64 params and lower bound after 6 steps of the same program (f + 3, value_and_grad)."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad_nn import optim
from funcgrad_nn.optim import contrib
from tests.helpers import assert_allclose, dev, host

OPTAX = {
    "momo": ({"a": [0.7531852667305543, -0.4291187632103197, 0.679079920816598],
              "b": [[0.03430127220948824, -1.0252751154086055]]}, 0.0),
    "momo_wd_adapt": ({"a": [0.571971759398738, -0.32210548905805086, 0.5926367026849991],
                       "b": [[0.02806507644925612, -0.7745139566423209]]}, 1.9205916885868692),
    "momo_sched": ({"a": [0.7523034729140347, -0.4286450901056777, 0.6909237824012895],
                    "b": [[0.03236111859585263, -1.0244302360129323]]}, 0.0),
    "momo_adam": ({"a": [0.9401774300370744, -0.4402592885061682, 1.940108375996369],
                   "b": [[0.2400440795808923, -1.1401971089251164]]}, 0.0),
    "momo_adam_wd_adapt": ({"a": [0.41011765643755005, 0.023317933753518198, 1.332740944294816],
                            "b": [[-0.28802293483757224, -0.6488378229540717]]},
                           6.160550699686203),
}
CASES = {
    "momo": lambda: contrib.momo(),
    "momo_wd_adapt": lambda: contrib.momo(0.5, beta=0.8, lower_bound=1.0, weight_decay=0.1,
                                          adapt_lower_bound=True),
    "momo_sched": lambda: contrib.momo(lambda c: 0.05 / (1.0 + c)),
    "momo_adam": lambda: contrib.momo_adam(),
    "momo_adam_wd_adapt": lambda: contrib.momo_adam(0.1, b1=0.8, b2=0.99, lower_bound=1.0,
                                                    weight_decay=0.1, adapt_lower_bound=True),
}


def f(p):
    return (fnp.sum(fnp.cosh(p["a"]) + 0.3 * p["a"] ** 4)
            + fnp.sum(fnp.sin(p["b"]) * 2 + p["b"] ** 2) + 3.0)


@pytest.mark.parametrize("name, jitted", [*((n, False) for n in sorted(CASES)),
                                          ("momo_wd_adapt", True), ("momo_adam_wd_adapt", True)])
def test_matches_optax(name, jitted):
    tx = CASES[name]()
    p = dev({"a": np.array([1.0, -0.5, 2.0]), "b": np.array([[0.3, -1.2]])})
    s = tx.init(p)
    update = funcgrad.jit(tx.update) if jitted else tx.update
    for _ in range(6):
        v, g = funcgrad.value_and_grad(f)(p)
        u, s = update(g, s, p, value=v)
        p = optim.apply_updates(p, u)
    want, lb = OPTAX[name]
    for k, x in want.items():
        assert_allclose(host(p[k]), np.array(x), rtol=1e-12, atol=1e-14, err_msg=k)
    assert_allclose(float(host(s.lb)), lb, rtol=1e-12)


def test_needs_value_and_params():
    p = dev(np.ones(2))
    for tx in (contrib.momo(), contrib.momo_adam()):
        with pytest.raises(ValueError, match="latest loss value"):
            tx.update(p, tx.init(p), p)
        with pytest.raises(ValueError, match="requires the current value of parameters"):
            tx.update(p, tx.init(p), value=1.0)
    s = contrib.momo_adam().init(dev(np.ones(2, np.float32)))
    assert isinstance(s, contrib.MomoAdamState) and host(s.barf).dtype == np.float32
    # a zero gradient takes no step (and no 0/0)
    tx = contrib.momo()
    u, _ = tx.update(dev(np.zeros(2)), tx.init(p), p, value=1.0)
    assert_allclose(host(u), np.zeros(2), rtol=0, atol=0)
