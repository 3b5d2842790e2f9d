"""The functional core (``funcgrad_nn.optim.sgd``, ``adam``, schedules, ...) against optax:
values recorded by tests/funcgrad_nn/fixtures/make_optax_fixtures.py (optax is not needed
here). Same transformations, same argument order, float64 trajectories equal to 1e-10."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad_nn import optim
from tests.funcgrad_nn.fixtures.make_optax_fixtures import SCHEDULED, run, schedule_values
from tests.helpers import assert_allclose, dev, host

FIX = json.loads((pathlib.Path(__file__).parent / "fixtures" / "optim" / "optax.json").read_text())


@pytest.mark.parametrize("place", ["device", "host"])
@pytest.mark.parametrize("cid", sorted(FIX["cases"]))
def test_trajectory_matches_optax(cid, place):
    # "host": NumPy parameters even when the default device is another (the strict pass):
    # counters, schedules and coefficients must stay with the parameters.
    case = FIX["cases"][cid]
    ours = run(optim, case["expr"], dev if place == "device" else np.asarray)
    if place == "host":
        assert all(type(v) is np.ndarray for v in ours.values())
    tol = 1e-6 if cid in SCHEDULED else 1e-10  # optax's float32 arithmetic there
    for k, ref in case["final"].items():
        assert_allclose(host(ours[k]), np.asarray(ref), rtol=tol, atol=tol * 1e-2, err_msg=cid)


@pytest.mark.parametrize("sid", sorted(FIX["schedules"]))
def test_schedule_matches_optax(sid):
    case = FIX["schedules"][sid]
    assert_allclose(np.asarray(schedule_values(optim, case["expr"])), np.asarray(case["values"]),
                    rtol=1e-12, atol=1e-15, err_msg=sid)


def test_schedules_trace_under_jit():
    # No Python branching on the count: a traced count gives the same values.
    for sid in ("piecewise", "exponential_staircase_begin_end", "warmup_cosine_exponent"):
        s = eval(FIX["schedules"][sid]["expr"], {"o": optim})
        jitted = funcgrad.jit(s)
        got = [float(host(jitted(np.float64(i)))) for i in range(len(FIX["schedules"][sid]["values"]))]
        assert_allclose(np.asarray(got), np.asarray(FIX["schedules"][sid]["values"]), rtol=1e-12)


# optax's own test values (optax/schedules/_schedule_test.py) for the schedules added later
OPTAX_SCHEDULE_VALUES = [
    ("o.piecewise_interpolate_schedule('linear', 200.0, {5: 1.5, 10: 0.25})",
     [200.0, 220.0, 240.0, 260.0, 280.0, 300.0, 255.0, 210.0, 165.0, 120.0, 75.0, 75.0, 75.0]),
    ("o.piecewise_interpolate_schedule('cosine', 400.0, {5: 1.2, 3: 0.6, 7: 1.0})",
     [400.0, 360.0, 280.0, 240.0, 264.0, 288.0, 288.0, 288.0, 288.0]),
    ("o.piecewise_interpolate_schedule('linear', 13.0, {})", [13.0] * 5),
    ("o.piecewise_interpolate_schedule('cosine', 17.0)", [17.0] * 3),
    ("o.linear_onecycle_schedule(10, 1000, 0.3, 0.7, 10.0, 100.0)",
     [100.0, 400.0, 700.0, 1000.0, 775.0, 550.0, 325.0, 100.0, 67.0, 34.0, 1.0, 1.0]),
    ("o.cosine_onecycle_schedule(5, 1000.0, 0.4, 10.0, 100.0)",
     [100.0, 550.0, 1000.0, 750.25, 250.75, 1.0, 1.0]),
]


@pytest.mark.parametrize("expr,expected", OPTAX_SCHEDULE_VALUES)
def test_interpolated_and_onecycle_schedules_as_optax(expr, expected):
    s = eval(expr, {"o": optim})  # noqa: S307 - the expressions above
    got = [float(host(s(i))) for i in range(len(expected))]
    assert_allclose(np.asarray(got), np.asarray(expected), atol=1e-9)
    jitted = funcgrad.jit(s)  # traceable: no Python branching on the count
    got = [float(host(jitted(dev(np.float64(i))))) for i in range(len(expected))]
    assert_allclose(np.asarray(got), np.asarray(expected), atol=1e-9)


def test_warmup_and_sgdr_schedules_as_optax():
    # optax's test values (float32 there: 0.20000004768371582, ...)
    s = optim.warmup_cosine_decay_schedule(0.2, 1.21, 50, 100, end_value=-3.0, exponent=2)
    assert_allclose(np.array([float(host(s(i))) for i in (0, 10, 50, 75, 100)]),
                    np.array([0.2, 0.402, 1.21, -1.9475, -3.0]), rtol=1e-6)
    s = optim.warmup_cosine_decay_schedule(0.2, 0, 50, 100, end_value=-3.0, exponent=2)
    assert_allclose(np.array([float(host(s(i))) for i in (0, 10, 50, 75, 100)]),
                    np.array([0.2, 0.16, 0.0, 0.0, 0.0]), atol=1e-12)
    with pytest.raises(ValueError, match="decay_steps must be positive"):
        optim.warmup_cosine_decay_schedule(0.0, 1.0, 10, 10)  # no cosine phase: optax's error
    for lrs in ((1.6, 0.8, 0.4), (1.6, 1.6, 1.6)):
        s = optim.sgdr_schedule([dict(decay_steps=n, peak_value=lr, init_value=0,
                                      end_value=0.0, warmup_steps=500)
                                 for n, lr in zip((2000, 3000, 5000), lrs)])
        assert [float(host(s(i))) for i in (500, 2500, 5500)] == pytest.approx(list(lrs))
    s = optim.warmup_constant_schedule(0.0, 1.0, 4)
    assert [float(host(s(i))) for i in (0, 2, 4, 9)] == [0.0, 0.5, 1.0, 1.0]
    s = optim.warmup_exponential_decay_schedule(0.0, 1.0, 2, 1, 0.5, end_value=0.3)
    assert [float(host(s(i))) for i in range(5)] == [0.0, 0.5, 1.0, 0.5, 0.3]
    with pytest.raises(ValueError, match="interpolate_type"):
        optim.piecewise_interpolate_schedule("linar", 13.0)
    with pytest.raises(ValueError, match="non-negative scale factors"):
        optim.piecewise_interpolate_schedule("linear", 13.0, {5: -3})
    for make in (optim.linear_onecycle_schedule, optim.cosine_onecycle_schedule):
        with pytest.raises(ValueError, match="non-positive"):
            make(0, 5.0)


def test_state_layout_and_dtypes_as_optax():
    p = {"w": dev(np.ones(3, np.float32))}
    s = optim.adam(0.1, mu_dtype=np.float16).init(p)
    assert s[0].mu["w"].dtype == np.float16 and s[0].nu["w"].dtype == np.float32
    tx = optim.adam(0.1, mu_dtype="float16")
    u, s = tx.update({"w": dev(np.full(3, 0.5, np.float32))}, tx.init(p), p)
    assert u["w"].dtype == np.float32 and s[0].mu["w"].dtype == np.float16
    s = optim.sgd(0.1, momentum=0.9, accumulator_dtype=np.float16).init(p)
    assert s[0].trace["w"].dtype == np.float16
    assert isinstance(optim.sgd(0.1, momentum=0.0).init(p)[0], optim.TraceState)
    s = optim.rmsprop(0.1, bias_correction=True).init(p)
    assert isinstance(s[0], optim.ScaleByRmsWithCountState) and int(host(s[0].count)) == 0
    s = optim.rmsprop(0.1, centered=True, bias_correction=True).init(p)
    assert isinstance(s[0], optim.ScaleByRStdDevWithCountState)
    s = optim.lion(0.1, mu_dtype=np.float16).init(p)[0]
    assert isinstance(s, optim.ScaleByLionState) and s.mu["w"].dtype == np.float16
    with pytest.raises(ValueError, match="expects non-negative scale factors"):
        optim.piecewise_constant_schedule(1.0, {2: -0.5})


def test_masked_and_partition_state_and_errors_as_optax():
    p = {"a": dev(np.ones((2, 2))), "b": dev(np.ones(2))}
    s = optim.masked(optim.adam(0.1), {"a": True, "b": False}).init(p)
    assert isinstance(s, optim.MaskedState) and s.inner_state[0].mu["b"] is None
    tx = optim.partition({"w": optim.adam(0.1), "z": optim.set_to_zero()},
                         lambda t: {k: "w" if k == "a" else "z" for k in t})
    s = tx.init(p)
    assert isinstance(s, optim.PartitionState) and sorted(s.inner_states) == ["w", "z"]

    @funcgrad.jit
    def step(p, s):
        u, s = tx.update({"a": p["a"] * 0 + 1.0, "b": p["b"] * 0 + 1.0}, s, p)
        return optim.apply_updates(p, u), s

    p2, _ = step(p, s)
    assert_allclose(host(p2["b"]), np.ones(2))  # frozen
    assert_allclose(host(p2["a"]), np.full((2, 2), 1 - 0.1 / (1 + 1e-8)))  # adam: g / (|g| + eps)
    with pytest.raises(ValueError, match="Some parameters have no corresponding transformation"):
        optim.partition({"w": optim.sgd(0.1)}, {"a": "w", "b": "other"}).init(p)


def test_inject_hyperparams_state_jit_and_errors_as_optax():
    p = {"w": dev(np.ones(2, np.float32))}
    tx = optim.inject_hyperparams(optim.adam)(learning_rate=0.1, b1=0.8)
    s = tx.init(p)
    assert isinstance(s, optim.InjectStatefulHyperparamsState)
    assert sorted(s.hyperparams) == ["b1", "b2", "eps", "eps_root", "learning_rate"]
    assert s.hyperparams["learning_rate"].dtype == np.float32  # the parameters' dtype

    @funcgrad.jit
    def step(p, s):
        u, s = tx.update({"w": p["w"] * 0 + 1}, s, p)
        return optim.apply_updates(p, u), s

    p1, s = step(p, s)
    s.hyperparams["learning_rate"] = dev(np.asarray(0.5, np.float32))  # a manual change
    p2, s = step(p1, s)
    assert step.trace_count == 1  # hyperparameters are operands: changing them never retraces
    # step 2's Adam direction is 1 / (1 + eps/sqrt(v_hat)) ~ 1: w = 1 - 0.1 - 0.5
    assert_allclose(host(p2["w"]), np.full(2, 0.4, np.float32), rtol=1e-6)
    with pytest.raises(ValueError, match="must specify a subset of `inner_factory`'s parameters"):
        optim.inject_hyperparams(optim.sgd, static_args="nope")


def test_multi_steps_skips_non_finite_gradients_under_jit():
    # optax's semantics: a skipped call changes nothing but skip_state; the k-th counted
    # call steps with the mean of the counted gradients.
    tx = optim.MultiSteps(optim.sgd(1.0), every_k_schedule=2,
                          should_skip_update_fn=optim.skip_not_finite)
    p = {"w": dev(np.zeros(1))}
    s = tx.init(p)
    update = funcgrad.jit(tx.update)
    got = []
    for g in (1.0, np.nan, 3.0):
        u, s = update({"w": dev(np.array([g]))}, s, p)
        got.append(float(host(u["w"])[0]))
        if np.isnan(g):
            assert int(host(s.skip_state["num_not_finite"])) == 1 and int(host(s.mini_step)) == 1
    assert got == [0.0, 0.0, -2.0] and bool(host(tx.has_updated(s)))
    assert int(host(s.gradient_step)) == 1 and float(host(s.acc_grads["w"])[0]) == 0.0
    bad = optim.MultiSteps(optim.sgd(1.0), 2, should_skip_update_fn=lambda u, st, p: (
        fnp.zeros(2, bool), ()))
    with pytest.raises(ValueError, match="should return a boolean scalar array"):
        bad.update({"w": dev(np.zeros(1))}, bad.init(p), p)


def test_apply_if_finite_zero_nans_and_target_updates_under_jit():
    # optax's semantics: non-finite updates are skipped (zeros, inner state kept) until more
    # than max_consecutive_errors in a row; zero_nans records where it zeroed.
    tx = optim.apply_if_finite(optim.sgd(1.0, momentum=0.5), max_consecutive_errors=1)
    p = {"w": dev(np.zeros(1))}
    s = tx.init(p)
    update = funcgrad.jit(tx.update)
    got = []
    for g in (1.0, np.nan, np.inf, 2.0):
        u, s = update({"w": dev(np.array([g]))}, s, p)
        got.append(float(host(u["w"])[0]))
    # 1: steps (buffer 1); nan: skipped; inf: 2nd in a row > 1, gives up and steps (inf);
    # 2.0: the buffer took the inf, so 0.5 * inf + 2 = inf
    assert got[:2] == [-1.0, 0.0] and np.isinf(got[2]) and np.isinf(got[3])
    assert int(host(s.total_notfinite)) == 2 and bool(host(s.last_finite))
    u, s = optim.zero_nans().update({"a": dev(np.array([np.nan, 1.0])), "b": dev(np.ones(1))},
                                    optim.zero_nans().init({"a": 0, "b": 0}))
    assert_allclose(host(u["a"]), np.array([0.0, 1.0]))
    assert bool(host(s.found_nan["a"])) and not bool(host(s.found_nan["b"]))
    new, old = {"w": dev(np.ones(2))}, {"w": dev(np.zeros(2))}
    soft = funcgrad.jit(lambda n, o: optim.incremental_update(n, o, 0.25))(new, old)
    assert_allclose(host(soft["w"]), np.full(2, 0.25))
    hard = funcgrad.jit(lambda n, o, t: optim.periodic_update(n, o, t, 3))
    assert_allclose(host(hard(new, old, 6)["w"]), np.ones(2))
    assert_allclose(host(hard(new, old, 7)["w"]), np.zeros(2))


# The optimizers added from optax 0.2.8's top level: float32 parameters stay float32 and
# follow the float64 trajectory to float32 rounding (ours computes the bias corrections and
# RAdam's rectification in float64, so it lies closer to it than optax's float32 run does).
FLOAT32_CASES = ["adabelief", "adopt", "yogi", "radam", "amsgrad", "adadelta", "rprop", "novograd",
                 "adan", "lamb", "lars_kw", "fromage", "signum", "adaptive_grad_clip",
                 "apply_every", "lookahead_adam", "adafactor_factored", "adafactor_kw", "sm3",
                 "conditionally_mask"]


@pytest.mark.parametrize("cid", FLOAT32_CASES)
def test_added_optimizers_keep_float32(cid):
    case = FIX["cases"][cid]
    ours = run(optim, case["expr"], dev, np.float32)
    for k, ref in case["final"].items():
        assert ours[k].dtype == np.float32, (cid, k)
        assert_allclose(host(ours[k]), np.asarray(ref, np.float32), rtol=2e-6, atol=2e-6,
                        err_msg=cid)


@pytest.mark.parametrize("expr", [
    "o.lamb(0.1, weight_decay=0.1)",
    "o.novograd(0.1)",
    "o.rprop(0.1)",
    "o.radam(0.1, b2=0.9, threshold=4.0)",
    "o.chain(o.adaptive_grad_clip(0.1), o.apply_every(2), o.adabelief(0.1))",
    "o.inject_hyperparams(o.lars)(0.5, weight_decay=0.1)",
    "o.adafactor(0.1, min_dim_size_to_factor=2, momentum=0.9)",
    "o.sm3(0.1)",
    # a traced step count: both branches, selected with where
    "o.conditionally_mask(o.sgd(0.1, momentum=0.9), lambda step: step % 3 != 1)",
    "o.conditionally_transform(o.adam(0.1), lambda step: step >= 2)",
])
def test_added_optimizers_under_jit_match_eager(expr):
    tx = eval(expr, {"o": optim})  # noqa: S307 - the expressions above
    p = {"a": dev(np.array([[0.5, -1.0], [1.5, 0.25]])), "b": dev(np.array([1.0, -2.0]))}
    gs = [{"a": dev(np.array([[0.3, -0.2], [0.1, 0.4]]) * (i + 1)),
           "b": dev(np.array([-0.5, 0.2]) * (-1) ** i)} for i in range(5)]

    def step(p, s, g):
        u, s = tx.update(g, s, p)
        return optim.apply_updates(p, u), s

    jstep = funcgrad.jit(step)
    pe, se = p, tx.init(p)
    pj, sj = p, tx.init(p)
    for g in gs:
        pe, se = step(pe, se, g)
        pj, sj = jstep(pj, sj, g)
    for k in p:
        assert_allclose(host(pj[k]), host(pe[k]), rtol=1e-12, atol=1e-14)
    assert jstep.trace_count == 1


def test_lookahead_params_state_and_errors_as_optax():
    p = optim.LookaheadParams.init_synced({"w": dev(np.ones(2))})
    assert p.fast is p.slow
    tx = optim.lookahead(optim.adam(0.1), sync_period=2, slow_step_size=0.5)
    s = tx.init(p)
    assert isinstance(s, optim.LookaheadState) and isinstance(s.fast_state[0],
                                                               optim.ScaleByAdamState)
    with pytest.raises(ValueError, match="Synchronization period must be >= 1"):
        optim.lookahead(optim.sgd(0.1), 0, 0.5)
    with pytest.raises(ValueError, match="LookaheadParams"):
        tx.update({"w": dev(np.ones(2))}, s, {"w": dev(np.ones(2))})
    for tx in (optim.lamb(0.1), optim.scale_by_trust_ratio(), optim.adaptive_grad_clip(0.1),
               optim.novograd(0.1), optim.keep_params_nonnegative()):
        with pytest.raises(ValueError, match="requires the current value of parameters"):
            tx.update({"w": dev(np.ones(2))}, tx.init({"w": dev(np.ones(2))}))
    with pytest.raises(ValueError, match="Use axis parameter"):
        optim.adaptive_grad_clip(0.1).update(dev(np.ones((1, 2, 1, 2, 1, 2))), optim.EmptyState(),
                                             dev(np.ones((1, 2, 1, 2, 1, 2))))


def test_added_transform_details_as_optax():
    # optax's values: the states, adadelta without a learning rate (no scaling), the trust
    # ratio's zero-norm guard, the weight-decay schedule's counting state
    s = optim.amsgrad(0.1, mu_dtype=np.float16).init({"w": dev(np.ones(2, np.float32))})
    assert isinstance(s[0], optim.ScaleByAmsgradState) and s[0].mu["w"].dtype == np.float16
    tx = optim.adadelta()
    u, _ = tx.update(dev(np.array([1.0])), tx.init(dev(np.zeros(1))), dev(np.zeros(1)))
    assert_allclose(host(u), np.array([0.0031622618488986636]), rtol=1e-12)  # optax
    u, _ = optim.scale_by_trust_ratio().update(dev(np.array([3.0, 4.0])), optim.EmptyState(),
                                               dev(np.zeros(2)))
    assert_allclose(host(u), np.array([3.0, 4.0]))
    tx = optim.add_decayed_weights(optim.linear_schedule(0.5, 0.0, 2))
    s = tx.init(dev(np.ones(1)))
    assert isinstance(s, optim.WeightDecayScheduleState)
    outs = []
    for _ in range(3):
        u, s = tx.update(dev(np.zeros(1)), s, dev(np.ones(1)))
        outs.append(float(host(u)[0]))
    assert outs == [0.5, 0.25, 0.0] and int(host(s.count)) == 3
    assert isinstance(optim.add_decayed_weights(0.1, mask={"w": True}).init({"w": 1.0}),
                      optim.MaskedState)
    assert optim.scale_by_learning_rate(None).update(1.0, optim.EmptyState())[0] == 1.0
    u, _ = optim.stateless_with_tree_map(lambda g, p: g * p).update(
        {"w": dev(np.array([2.0]))}, optim.EmptyState(), {"w": dev(np.array([3.0]))})
    assert_allclose(host(u["w"]), np.array([6.0]))


def test_add_noise_anneals_and_is_reproducible():
    # optax's law: N(0, eta / t**gamma) added at step t, a key split per step and per leaf
    # (funcgrad.random's bits are not JAX's, so the values are checked by their law)
    p = {"a": dev(np.zeros((200, 50))), "b": dev(np.zeros(3))}
    tx = optim.add_noise(0.5, 1.0, key=4)
    s = tx.init(p)
    stds = []
    for _ in range(4):
        u, s = tx.update(p, s)
        stds.append(float(np.std(host(u["a"]))))
    assert int(host(s.count)) == 4
    assert_allclose(np.array(stds), np.sqrt(0.5 / np.arange(1, 5)), rtol=0.03)
    again, _ = tx.update(p, tx.init(p))
    first, _ = tx.update(p, tx.init(p))
    assert_allclose(host(again["b"]), host(first["b"]))
    f32 = {"w": dev(np.zeros(2, np.float32))}
    assert optim.noisy_sgd(0.1, key=0).update(f32, optim.noisy_sgd(0.1, key=0).init(f32))[0][
        "w"].dtype == np.float32


def test_per_example_clips_scale_gradient_and_safe_increment_as_optax():
    # optax's values (per_example_layer_norm_clip with uniform=False shares by leaf size)
    g = {"w": dev(np.array([[3.0, 4.0], [1.0, 2.0]])), "b": dev(np.array([[1.0], [3.0]]))}
    sums, counts = optim.per_example_layer_norm_clip(g, 1.0, uniform=False)
    assert_allclose(host(sums["w"]), np.array([0.85504632, 1.38349401]), rtol=1e-8)
    assert_allclose(host(sums["b"]), np.array([1.15470054]), rtol=1e-8)
    assert int(host(counts["w"])) == 2 and int(host(counts["b"])) == 2
    s, n = optim.per_example_global_norm_clip([dev(np.array([[3.0, 4.0], [0.3, 0.4]]))], 1.0)
    assert_allclose(host(s[0]), np.array([0.9, 1.2])) and int(host(n)) == 1
    with pytest.raises(ValueError, match="batch dimension in the 0th axis"):
        optim.per_example_global_norm_clip([dev(np.array(1.0))], 1.0)
    f = funcgrad.jit(funcgrad.grad(lambda x: fnp.sum(optim.scale_gradient(x, 0.25) ** 2)))
    assert_allclose(host(f(dev(np.array([2.0, -1.0])))), np.array([1.0, -0.5]))
    assert float(host(funcgrad.grad(lambda x: optim.scale_gradient(x, 0.0) * x)(3.0))) == 3.0
    top = np.iinfo(np.int32).max
    assert int(host(optim.safe_increment(dev(np.array(top, np.int32))))) == top
    assert int(host(funcgrad.jit(optim.safe_increment)(dev(np.array(4, np.int32))))) == 5
    with pytest.raises(ValueError, match="Cannot safely increment count with dtype bool"):
        optim.safe_increment(np.array(True))


def test_extra_args_reach_polyak_under_jit_as_optax():
    # chain forwards update's keyword arguments to GradientTransformationExtraArgs only
    tx = optim.chain(optim.clip_by_global_norm(1.0), optim.polyak_sgd(max_learning_rate=5.0))
    assert isinstance(tx, optim.GradientTransformationExtraArgs)
    p = {"w": dev(np.array([3.0, 4.0]))}

    @funcgrad.jit
    def step(p, s):
        loss, g = funcgrad.value_and_grad(lambda q: 0.5 * fnp.sum(q["w"] ** 2))(p)
        u, s = tx.update(g, s, p, value=loss)
        return optim.apply_updates(p, u), s

    p1, _ = step(p, tx.init(p))
    # clipped g = w / 5 (norm 1); Polyak step = min(12.5 / 1, 5) = 5: w - w = 0
    assert_allclose(host(p1["w"]), np.zeros(2), atol=1e-12)
    with pytest.raises(TypeError, match="value"):
        optim.scale_by_polyak().update(p, optim.EmptyState(), p)
    with pytest.raises(ValueError, match="Invalid argument value for Polyak SGD"):
        optim.polyak_sgd(variant="sps++")


def test_extra_args_pass_through_the_wrappers_as_optax():
    # masked, partition, inject_hyperparams, apply_if_finite, conditionally_*, flatten and
    # MultiSteps forward update's keyword arguments to the inner transformation
    p = {"w": dev(np.array([1.0, 1.0])), "b": dev(np.array([2.0]))}
    g = {"w": dev(np.array([1.0, 1.0])), "b": dev(np.array([1.0]))}
    polyak = optim.scale_by_polyak()  # value 1.5 / |g|^2 = 0.5 (|g|^2 = 3)
    for tx in (optim.masked(polyak, {"w": True, "b": True}),
               optim.partition({"x": polyak}, {"w": "x", "b": "x"}),
               optim.inject_hyperparams(optim.scale_by_polyak)(),
               optim.apply_if_finite(polyak, 2),
               optim.conditionally_transform(polyak, lambda step: step >= 0),
               optim.flatten(polyak),
               optim.MultiSteps(polyak, 1).gradient_transformation()):
        u, _ = tx.update(g, tx.init(p), p, value=1.5)
        assert_allclose(host(u["w"]), np.array([0.5, 0.5]), err_msg=repr(tx))
        assert_allclose(host(u["b"]), np.array([0.5]))


def test_reduce_on_plateau_state_jit_and_errors_as_optax():
    p = {"w": dev(np.zeros(2, np.float32)), "b": dev(np.zeros(1))}
    tx = optim.contrib.reduce_on_plateau(factor=0.5, patience=1)
    s = tx.init(p)
    # optax: the scale in the parameters' lowest float dtype, the values in the highest
    assert s.scale.dtype == np.float32 and s.best_value.dtype == np.float64
    step = funcgrad.jit(lambda g, s, v: tx.update(g, s, p, value=v))
    g = {"w": dev(np.ones(2, np.float32)), "b": dev(np.ones(1))}
    scales = []
    for v in (3.0, 2.0, 2.5, 2.5, 1.0):
        u, s = step(g, s, v)
        scales.append(float(host(s.scale)))
    assert scales == [1.0, 1.0, 0.5, 0.25, 0.25] and u["w"].dtype == np.float32
    assert step.trace_count == 1
    for kw, msg in (({"factor": 1.0}, "Factor must be in the range"),
                    ({"rtol": -1.0}, "must be non-negative"),
                    ({"rtol": 0.0}, "At least one of rtol or atol must be positive"),
                    ({"rtol": 2.0}, "rtol must be less than or equal to 1.0")):
        with pytest.raises(ValueError, match=msg):
            optim.contrib.reduce_on_plateau(**kw)


def test_sgd_and_rmsprop_state_layout_as_optax():
    # without momentum optax chains identity() in trace's place: (EmptyState(), EmptyState())
    p = {"w": dev(np.ones(2))}
    assert optim.sgd(0.1).init(p) == (optim.EmptyState(), optim.EmptyState())
    s = optim.sgd(optim.linear_schedule(0.1, 0.0, 5)).init(p)
    assert s[0] == optim.EmptyState() and isinstance(s[1], optim.ScaleByScheduleState)
    s = optim.rmsprop(0.1).init(p)
    assert len(s) == 3 and isinstance(s[0], optim.ScaleByRmsState) and s[1:] == (
        optim.EmptyState(), optim.EmptyState())
    assert isinstance(optim.rmsprop(0.1, momentum=0.9).init(p)[1], optim.TraceState)
