"""funcgrad.example_libraries.optimizers against jax.example_libraries.optimizers (JAX
0.10.2, x64): every optimizer with a schedule, five jitted steps (traced step index) on a
pytree of parameters; schedules; clip_grads, l2_norm; state packing. Reference values in
fixtures/jax_example_libraries.json (fixtures/make_jax_example_libraries.py)."""

from __future__ import annotations

import json
import pathlib
import pickle

import numpy as np
import pytest
from helpers import assert_close, dev, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.example_libraries import optimizers

from .fixtures.make_jax_example_libraries import (
    STEPS,
    loss,
    opt_params,
    optimizers_of,
    schedules_of,
)

FIXTURE = json.loads((pathlib.Path(__file__).parent / "fixtures"
                      / "jax_example_libraries.json").read_text())


def params():
    return dev({k: np.asarray(v) for k, v in opt_params(np).items()})


@pytest.mark.parametrize("name", sorted(FIXTURE["optimizers"]))
def test_optimizer_matches_jax(name):
    opt_init, opt_update, get_params = optimizers_of(optimizers)[name]

    @funcgrad.jit
    def step(i, state):
        return opt_update(i, funcgrad.grad(lambda p: loss(fnp, p))(get_params(state)), state)

    state = opt_init(params())
    for i in range(STEPS):
        state = step(i, state)
    got = get_params(state)
    want = FIXTURE["optimizers"][name]
    assert set(got) == set(want)
    for k in want:
        assert_close(got[k], np.asarray(want[k]), rtol=1e-12, atol=1e-14)


def test_eager_steps_match_jitted_ones():
    opt_init, opt_update, get_params = optimizers.adam(1e-2)
    state = opt_init(params())
    for i in range(STEPS):
        state = opt_update(i, funcgrad.grad(lambda p: loss(fnp, p))(get_params(state)), state)
    opt_init, opt_update, get_params = optimizers.adam(1e-2)
    jstate = opt_init(params())
    step = funcgrad.jit(lambda i, s: opt_update(
        i, funcgrad.grad(lambda p: loss(fnp, p))(get_params(s)), s))
    for i in range(STEPS):
        jstate = step(i, jstate)
    assert_close(get_params(state), get_params(jstate))


@pytest.mark.parametrize("name", sorted(FIXTURE["schedules"]))
def test_schedule_matches_jax(name):
    schedule = schedules_of(optimizers)[name]
    want = FIXTURE["schedules"][name]
    assert_close(np.array([host(schedule(i)) for i in range(6)], float), np.asarray(want))
    traced = funcgrad.jit(funcgrad.vmap(schedule))(fnp.arange(6))
    assert_close(traced, np.asarray(want))


def test_clip_grads_and_l2_norm_match_jax():
    g = funcgrad.grad(lambda p: loss(fnp, p))(params())
    assert_close(optimizers.l2_norm(g), np.asarray(FIXTURE["l2_norm"]))
    clipped = optimizers.clip_grads(g, 1.0)
    for k, v in FIXTURE["clip_grads"].items():
        assert_close(clipped[k], np.asarray(v))
    # under the bound nothing changes
    assert_close(optimizers.clip_grads(g, 100.0), g)


def test_state_is_a_pytree_and_round_trips_through_pack_unpack_and_pickle():
    opt_init, opt_update, get_params = optimizers.momentum(0.1, 0.9)
    state = opt_init(params())
    leaves = funcgrad.tree_util.tree_leaves(state)
    assert len(leaves) == 2 * 3  # (x, velocity) for each of the three parameters
    marked = optimizers.unpack_optimizer_state(state)
    assert isinstance(marked["w"], optimizers.JoinPoint)
    restored = optimizers.pack_optimizer_state(pickle.loads(pickle.dumps(marked)))
    assert_close(get_params(restored), get_params(state))
    g = funcgrad.grad(lambda p: loss(fnp, p))(params())
    assert_close(get_params(opt_update(0, g, restored)), get_params(opt_update(0, g, state)))
    with pytest.raises(TypeError, match="JoinPoint"):
        optimizers.pack_optimizer_state({"w": 1.0})


def test_sm3_scalar_parameter_and_jit():
    # JAX keeps the parameter's shape as int leaves of sm3's state, which jit cannot trace;
    # here the shape is static, so a jitted step works (and gives JAX's eager numbers, above)
    opt_init, opt_update, get_params = optimizers.sm3(0.1)
    state = opt_init(dev(np.array(2.0)))
    state = funcgrad.jit(opt_update)(0, dev(np.array(4.0)), state)
    assert get_params(state).shape == ()
    assert_close(get_params(state), np.asarray(2.0 - 0.1 * 0.1))


def test_mismatched_gradient_tree_is_refused():
    opt_init, opt_update, _ = optimizers.sgd(0.1)
    state = opt_init({"a": fnp.ones(2)})
    with pytest.raises(TypeError, match="did not match the parameter tree"):
        opt_update(0, {"b": fnp.ones(2)}, state)
    with pytest.raises(TypeError, match="step size must be a scalar or a schedule"):
        optimizers.sgd(np.ones(2))
    with pytest.raises(ValueError, match="one shorter"):
        optimizers.piecewise_constant([1, 2], [0.1, 0.2])
