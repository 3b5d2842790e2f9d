"""optim.contrib.sam against optax.contrib 0.2.8's: the literals are optax's float64 params
after 7 update calls of the same program (g = sin(3p) + p**3), transparent and opaque modes."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad_nn import optim
from funcgrad_nn.optim import contrib
from tests.helpers import assert_allclose, dev, host

OPTAX = {
    "default": ({"a": [0.6797622193097579, -0.21801433699467873, 0.9409325787126267],
                 "b": [[0.1126652623937073, -0.8663861961617106]]}, 1),
    "adam_sync3_noreset": ({"a": [0.9300861965054137, -0.4280893483998657, 2.0969543449777195],
                            "b": [[0.21866632660864496, -1.1324052785997856]]}, 1),
    "adam_sync3": ({"a": [0.9087315551075353, -0.4075897327270102, 1.94780504317123],
                    "b": [[0.2046390691430974, -1.1089625242508958]]}, 1),
    "opaque": ({"a": [0.6495509485092619, -0.15625214314771585, 1.6577506195103966],
                "b": [[-0.022686806238746145, -0.8521857039148122]]}, 0),
}


def _adv(momentum=None):
    return optim.chain(contrib.normalize(), optim.sgd(0.05, momentum=momentum))


CASES = {
    "default": lambda: contrib.sam(optim.sgd(0.1), _adv()),
    "adam_sync3_noreset": lambda: contrib.sam(optim.adam(0.05), _adv(0.9), sync_period=3,
                                              reset_state=False),
    "adam_sync3": lambda: contrib.sam(optim.adam(0.05), _adv(0.9), sync_period=3),
    "opaque": lambda: contrib.sam(optim.adam(0.05), _adv(0.9), sync_period=3, opaque_mode=True),
}


def _g(p):
    return {k: fnp.sin(3 * v) + v ** 3 for k, v in p.items()}


# every case eagerly; one transparent and the opaque case under jit too
@pytest.mark.parametrize("name, jitted", [*((n, False) for n in sorted(CASES)),
                                          ("adam_sync3", True), ("opaque", True)])
def test_matches_optax(name, jitted):
    tx = CASES[name]()
    p = dev({"a": np.array([1.0, -0.5, 2.0]), "b": np.array([[0.3, -1.2]])})
    s = tx.init(p)
    if name == "opaque":
        def step(g, s, p):
            return tx.update(g, s, p, grad_fn=lambda q, i: _g(q))
    else:
        step = tx.update
    step = funcgrad.jit(step) if jitted else step
    for _ in range(7):
        u, s = step(_g(p), s, p)
        p = optim.apply_updates(p, u)
    want, steps = OPTAX[name]
    for k, v in want.items():
        assert_allclose(host(p[k]), np.array(v), rtol=1e-13, atol=1e-15, err_msg=k)
    assert int(host(s.steps_since_sync)) == steps
    assert isinstance(s, contrib.SAMState) and (s.cache is None) == (name == "opaque")


def test_errors_say_what_is_wrong():
    with pytest.raises(ValueError, match="Synchronization period must be >= 1"):
        contrib.sam(optim.sgd(0.1), _adv(), sync_period=0)
    p = dev(np.ones(2))
    tx = contrib.sam(optim.sgd(0.1), _adv(), opaque_mode=True)
    with pytest.raises(ValueError, match="grad_fn must be provided"):
        tx.update(p, tx.init(p), p)
    tx = contrib.sam(optim.sgd(0.1), _adv())
    with pytest.raises(ValueError, match="needs the current params"):
        tx.update(p, tx.init(p))
