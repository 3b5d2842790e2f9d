"""optim.snapshot / monitor / measure_with_ema and the optim.transforms module against optax
0.2.8 (the literals below are optax's numbers for the same program, float64; CI has no optax)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad_nn import optim
from tests.helpers import assert_allclose, dev, host

# optax: chain(adam(0.1), monitor({...}), snapshot('s', ...), clip_by_global_norm(0.2)),
# three steps of g = p**3 - 0.3 p + i; per step: norm, clipped-ema, snap_max, snapshot 's'.
OPTAX_STEPS = [
    (0.22360677899210613, 1.0, 0.04999999993243243, [[0.199999920000032, 0.19999999931623935]]),
    (0.20639275105232335, 1.0000000000000002, 0.07399881570970232,
     [[-0.14552685562658316, 0.1847909981589903]]),
    (0.1982998963182218, 1.0000000000000002, 0.0836911993377994,
     [[-0.1651875946689515, 0.1391929756288642]]),
]
OPTAX_FINAL = {"a": [0.7225987513405114, -1.7222114101545618, 2.714287471243315],
               "b": [[0.43633921963696337, -1.25142711902404]]}


def _solver():
    return optim.chain(
        optim.adam(0.1),
        optim.monitor({
            "norm": optim.tree.norm,
            "clipped": optim.measure_with_ema(lambda u: optim.tree.norm(u) > 0.15, decay=0.8),
            "snap_max": optim.measure_with_ema(lambda u: fnp.max(u["a"]), decay=0.5,
                                               debias=False)}),
        optim.snapshot("s", lambda u: u["b"] * 2),
        optim.clip_by_global_norm(0.2))


@pytest.mark.parametrize("jitted", [False, True])
def test_monitor_and_snapshot_match_optax(jitted):
    solver = _solver()
    p = dev({"a": np.array([1.0, -2.0, 3.0]), "b": np.array([[0.5, -1.5]])})
    s = solver.init(p)
    update = funcgrad.jit(solver.update) if jitted else solver.update
    for i, (norm, clipped, snap_max, snap) in enumerate(OPTAX_STEPS):
        g = {k: x ** 3 - 0.3 * x + i for k, x in p.items()}
        u, s = update(g, s, p)
        p = optim.apply_updates(p, u)
        assert_allclose(host(optim.tree.get(s, "norm")), norm, rtol=1e-13)
        assert_allclose(host(optim.tree.get(s, "clipped")), clipped, rtol=1e-13)
        assert_allclose(host(optim.tree.get(s, "snap_max")), snap_max, rtol=1e-13)
        assert_allclose(host(optim.tree.get(s, "s")), np.array(snap), rtol=1e-13)
    for k, v in OPTAX_FINAL.items():
        assert_allclose(host(p[k]), np.array(v), rtol=1e-13)


def test_updates_pass_through_and_state_types():
    tx = optim.monitor({"sum": lambda u: u.sum()})
    u0 = dev(np.array([1.0, 2.0]))
    u, s = tx.update(u0, tx.init(u0), extra_kw=1)  # extra args are accepted and ignored
    assert u is u0
    assert isinstance(s, optim.MonitorState) and float(host(s.measurements["sum"])) == 3.0
    s0 = optim.snapshot("m", lambda x: x * 0).init(u0)
    assert isinstance(s0, optim.SnapshotState) and set(s0.measurement) == {"m"}


def test_bad_measures_say_what_is_wrong():
    with pytest.raises(TypeError, match="dict"):
        optim.monitor([("a", optim.tree.norm)])
    with pytest.raises(TypeError, match="'a'.*callable"):
        optim.monitor({"a": 3.0})
    with pytest.raises(TypeError, match="names must be strings"):
        optim.snapshot(1, optim.tree.norm)
    with pytest.raises(TypeError, match="callable"):
        optim.measure_with_ema(None, decay=0.9)


def test_transforms_module_has_optaxs_names():
    # optax.transforms.__all__ in optax 0.2.8
    names = ["adaptive_grad_clip", "add_decayed_weights", "add_noise", "AddNoiseState",
             "apply_if_finite", "ApplyIfFiniteState", "chain", "clip_by_block_rms",
             "clip_by_global_norm", "clip", "conditionally_mask", "ConditionallyMaskState",
             "conditionally_transform", "ConditionallyTransformState", "ema", "EmaState",
             "flatten", "freeze", "keep_params_nonnegative", "masked", "MaskedState",
             "measure_with_ema", "monitor", "MonitorState", "MultiSteps", "MultiStepsState",
             "named_chain", "NonNegativeParamsState", "partition", "PartitionState",
             "selective_transform", "ShouldSkipUpdateFunction", "skip_large_updates",
             "skip_not_finite", "snapshot", "SnapshotState", "trace", "TraceState",
             "zero_nans", "ZeroNansState"]
    assert sorted(optim.transforms.__all__) == sorted(names)
    for n in names:
        assert getattr(optim.transforms, n) is getattr(optim, n)
    for n in ("dpsgd", "differentially_private_aggregate", "DifferentiallyPrivateAggregateState",
              "ScalarOrSchedule", "TransformInitFn", "TransformUpdateFn",
              "TransformUpdateExtraArgsFn"):
        assert n in optim.__all__
    assert optim.dpsgd is optim.contrib.dpsgd


class _PlateauState(NamedTuple):
    best: object
    lr: object


class _Plateau:
    """A stateful schedule: halve the learning rate when the loss does not improve."""

    def init(self):
        return _PlateauState(fnp.asarray(np.inf), fnp.asarray(0.1))

    def update(self, state, *, value, **kw):
        better = value < state.best
        return _PlateauState(fnp.where(better, value, state.best),
                             fnp.where(better, state.lr, state.lr / 2))

    def __call__(self, state, **kw):
        return state.lr


# optax 0.2.8: inject_hyperparams(sgd)(learning_rate=Plateau(), momentum=lambda c: 0.5 + 0.01 c)
OPTAX_PLATEAU = [([0.8, -1.6], 0.1, 0.5), ([0.538, -1.076], 0.1, 0.51),
                 ([0.29416, -0.58832], 0.1, 0.52),
                 ([0.20012639999999998, -0.40025279999999996], 0.05, 0.53),
                 ([0.129335616, -0.258671232], 0.05, 0.54),
                 ([0.10340136959999999, -0.20680273919999997], 0.025, 0.55)]


@pytest.mark.parametrize("jitted", [False, True])
def test_inject_hyperparams_takes_stateful_schedules_as_optax(jitted):
    assert isinstance(_Plateau(), optim.schedules.StatefulSchedule)
    assert not isinstance(lambda c: c, optim.schedules.StatefulSchedule)
    tx = optim.inject_hyperparams(optim.sgd)(learning_rate=_Plateau(),
                                             momentum=lambda c: 0.5 + 0.01 * c)
    p = dev(np.array([1.0, -2.0]))
    s = tx.init(p)
    update = funcgrad.jit(tx.update) if jitted else tx.update
    for loss, (want, lr, mom) in zip([3.0, 2.0, 2.5, 1.0, 1.5, 1.6], OPTAX_PLATEAU):
        u, s = update(2 * p, s, p, value=dev(np.asarray(loss)))
        p = optim.apply_updates(p, u)
        assert_allclose(host(p), np.array(want), rtol=1e-14)
        assert float(host(s.hyperparams["learning_rate"])) == lr
        assert_allclose(float(host(s.hyperparams["momentum"])), mom, rtol=1e-14)
    w = optim.schedules.WrappedSchedule(lambda c: 2 * c)
    assert float(host(w(w.update(w.update(w.init()))))) == 4
