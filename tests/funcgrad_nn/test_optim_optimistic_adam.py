"""optax 0.2.8's optimistic_adam (deprecated there), optimistic_adam_v2 and the deprecated
inject_stateful_hyperparams: float64 updates
of 4 steps, the reference values from optax with jax_enable_x64 on the same gradients
(rng = np.random.default_rng(1); gs = [rng.standard_normal(3) for _ in range(4)],
params [1, -2, 0.5])."""

import warnings

import numpy as np
import pytest
from helpers import dev, host

from funcgrad_nn import optim

RNG = np.random.default_rng(1)
GS = [RNG.standard_normal(3) for _ in range(4)]

OPTAX = {
    "default": [[-0.1473684167883041, -0.1473684192589952, -0.1473684165928289],
                [0.3603376798496091, -0.08923636231853219, -0.098059106546531],
                [0.030131593757111885, -0.0746478490497169, -0.08852378260018257],
                [-0.03246667437442202, -0.028314980425014485, -0.1191951297488068]],
    "optimism": [[-0.09999999710634921, -0.09999999878288962, -0.09999999697370537],
                 [0.5190490923490879, -0.1005405189447644, -0.09869660602523234],
                 [0.087599911240795, -0.08895429484289058, -0.09885777409818525],
                 [-0.032921888457483256, -0.03173446781114603, -0.10094430459333703]],
    "v2": [[-0.05157894587590644, -0.051578946740648314, -0.05157894580749012],
           [0.08804023069951972, -0.03559263108202099, -0.0380188855447582],
           [0.01627253564800471, -0.029400837797829427, -0.0335475723327762],
           [-0.00380522700467489, -0.015022253610822007, -0.04070006858729172]],
}


def _make(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        if case == "default":
            return optim.optimistic_adam(0.1)
        if case == "optimism":
            return optim.optimistic_adam(0.1, optimism=0.3, nesterov=False)
    return optim.optimistic_adam_v2(0.05, alpha=0.7, beta=0.4)


@pytest.mark.parametrize("case", sorted(OPTAX))
def test_optimistic_adam_matches_optax(case):
    tx = _make(case)
    p = np.array([1.0, -2.0, 0.5])
    s = tx.init(p)
    for g, want in zip(GS, OPTAX[case]):
        u, s = tx.update(g, s, p)
        np.testing.assert_allclose(u, want, rtol=1e-12, atol=1e-15)


def test_optimistic_adam_is_deprecated_and_refuses_schedules():
    with pytest.warns(DeprecationWarning, match="optimistic_adam_v2"):
        optim.optimistic_adam(0.1)
    with pytest.raises(ValueError, match="schedules"), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        optim.optimistic_adam(optim.constant_schedule(0.1))


def test_inject_stateful_hyperparams_is_inject_hyperparams_with_a_warning():
    # optax 0.2.8: adam(b1=0.8) under an exponential_decay(0.1, 1, 0.5) schedule, 3 steps;
    # optax evaluates the schedule in float32 (hence rtol 1e-7)
    with pytest.warns(DeprecationWarning, match="inject_hyperparams"):
        factory = optim.inject_stateful_hyperparams(optim.adam)
    tx = factory(learning_rate=optim.exponential_decay(0.1, 1, 0.5), b1=0.8)
    p = np.array([1.0, 2.0])
    s = tx.init(p)
    want = [[-0.09999999949011612, 0.10000000049011612],
            [-0.049183605258096806, 0.04918360556911457],
            [-0.024845856088892598, 0.024845856203873695]]
    for i, w in enumerate(want):
        u, s = tx.update(np.array([0.5, -1.0]) * (i + 1), s, p)
        np.testing.assert_allclose(u, w, rtol=1e-7)
    assert float(s.hyperparams["learning_rate"]) == 0.025


def test_scale_by_distance_over_gradients_matches_optax():
    # optax 0.2.8 (x64), reps_rel=1e-3, global_scale=-1.0: the third step's updates, params
    # moved by each step's updates; float32 initial parameters (optax's param_dtype default)
    rng = np.random.default_rng(5)
    p = {"w": rng.standard_normal((2, 3)), "b": rng.standard_normal(3), "s": np.array(0.7)}
    gs = [{k: rng.standard_normal(np.shape(v)) for k, v in p.items()} for _ in range(3)]
    tx = optim.scale_by_distance_over_gradients(reps_rel=1e-3, global_scale=-1.0)
    p = dev(p)
    s = tx.init(p)
    for g in gs:
        u, s = tx.update(dev(g), s, p)
        p = optim.apply_updates(p, u)
    u, s = host((u, s))
    assert u["s"].shape == (1,)  # optax's (1,)-shaped step size broadcasts a 0-d parameter
    np.testing.assert_allclose(u["b"], [0.0002776806702571803, 0.0007648872715596928,
                                        0.0009498345720229093], rtol=1e-12)
    np.testing.assert_allclose(u["s"], [-0.0005930122529045211], rtol=1e-12)
    np.testing.assert_allclose(u["w"], [[0.00014767970020860953, 0.0010997125504915947,
                                         -1.7646312383031443e-05],
                                        [3.231178778478674e-05, 0.00025956195003369576,
                                         0.000893749941649885]], rtol=1e-12)
    assert s.init_params["w"].dtype == np.float32


def test_distance_over_gradients_keeps_host_parameters_on_the_host():
    # a 0-d host parameter: NumPy's operators give NumPy scalars, which would go to the
    # default device (the strict device in the strict pass) and meet host arrays there
    p = {"s": np.array(0.7), "b": np.ones(2)}
    tx = optim.scale_by_distance_over_gradients(reps_rel=1e-3, global_scale=-1.0)
    s = tx.init(p)
    u, s = tx.update({"s": np.array(0.1), "b": np.ones(2)}, s, p)
    assert all(isinstance(v, np.ndarray) for v in (*u.values(), *s.max_dist.values()))
