"""funcgrad_nn.optim: a big group's step is one compiled program with the parameters and state
donated. It gives the eager loop's numbers, writes parameters and state buffers in place
(the arrays a user holds see the step; no fresh state buffers), never writes the caller's
gradients, follows schedulers without recompiling, skips None gradients, and round-trips
state_dict; the optimizer's functional form stays jit-able inside a whole train step."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import funcgrad
from funcgrad import tree_util
from funcgrad_nn import optim
from funcgrad_nn.optim import optimizer as optimizer_module
from tests.helpers import SAME_ARITHMETIC, assert_allclose, dev, host

# Over Optimizer._FUSED_MIN_SIZE elements: the group takes the compiled path by default.
BIG = (280, 250)

CASES = [
    ("Adam", {}),
    ("Adam", {"weight_decay": 0.1, "maximize": True}),
    ("AdamW", {"amsgrad": True}),
    ("SGD", {"momentum": 0.9}),
    ("SGD", {"momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
    ("SGD", {"maximize": True}),
    ("RMSprop", {"centered": True, "momentum": 0.5}),
    ("Adagrad", {"lr_decay": 0.01}),
    ("Adamax", {}),
    ("NAdam", {}),
    ("RAdam", {}),
    ("Adadelta", {}),
    ("ASGD", {}),
    ("Rprop", {}),
    ("Lion", {"weight_decay": 0.1}),
    ("Adafactor", {}),
]


def _problem(seed=0, dtype=np.float64, steps=4, shape=BIG):
    rng = np.random.default_rng(seed)
    p0 = [rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape[-1]).astype(dtype)]
    gs = [[rng.standard_normal(p.shape).astype(dtype) for p in p0] for _ in range(steps)]
    return p0, gs


def _run(name, kw, p0, gs, lr=1e-2, **extra):
    ps = dev([p.copy() for p in p0])
    opt = getattr(optim, name)(ps, lr=lr, **kw, **extra)
    for g in gs:
        opt.step(dev(g))
    return ps, opt


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}-{'-'.join(k) or 'plain'}" for n, k in CASES])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_compiled_group_step_gives_the_eager_loops_numbers(name, kw, dtype):
    p0, gs = _problem(dtype=dtype)
    # SGD without momentum stays eager by default (no state); foreach=True compiles it.
    plain_sgd = name == "SGD" and not kw.get("momentum")
    fused, opt = _run(name, kw, p0, gs, **({"foreach": True} if plain_sgd else {}))
    assert opt.__dict__.get("_fused_cache"), "the big group should take the compiled path"
    if plain_sgd:
        _, default = _run(name, kw, p0, gs[:1])
        assert not default.__dict__.get("_fused_cache")
    eager, ref = _run(name, kw, p0, gs, foreach=False)
    # The same arithmetic (bit-identical on the CPU; on a GPU the fused kernel contracts
    # multiply-adds into FMAs, docs/backends.md) but for the step-size coefficients
    # NAdam/Adafactor compute in float64 when traced and in Python floats eagerly (one
    # float32 ulp).
    tol = SAME_ARITHMETIC if dtype == np.float64 else {"rtol": 1e-6, "atol": 1e-8}
    for a, b in zip(fused, eager):
        assert_allclose(host(a), host(b), **tol)
    sa, sb = opt.state_dict(), ref.state_dict()
    for k in sb["state"]:
        for key, v in sb["state"][k].items():
            assert_allclose(host(sa["state"][k][key]), host(v), **tol)


@pytest.mark.parametrize("name,kw", [("Adam", {}), ("AdamW", {"amsgrad": True}),
                                     ("SGD", {"momentum": 0.9}), ("RMSprop", {"momentum": 0.5}),
                                     ("Adagrad", {})])
def test_parameters_and_state_are_updated_in_place(name, kw, monkeypatch):
    copied = []
    real_assign = optimizer_module._assign
    monkeypatch.setattr(optimizer_module, "_assign",
                        lambda p, q: (copied.append(p.shape), real_assign(p, q)))
    p0, gs = _problem()
    ps = dev([p.copy() for p in p0])
    held = ps[0]  # what a user holding the parameter array sees
    opt = getattr(optim, name)(ps, lr=1e-2, **kw)
    opt.step(dev(gs[0]))
    opt.step(dev(gs[1]))
    before = {k: v for k, v in opt.state[held].items() if getattr(v, "shape", ()) == BIG}
    assert before
    copied.clear()
    opt.step(dev(gs[2]))
    after = opt.state[held]
    for k, v in before.items():
        assert after[k] is v, f"state {k!r} got a fresh buffer instead of being updated in place"
    assert BIG not in copied  # the big parameter was written by the compiled program itself
    assert ps[0] is held
    want, _ = _run(name, kw, p0, gs[:3], foreach=False)
    assert_allclose(host(held), host(want[0]), **SAME_ARITHMETIC)
    assert_allclose(host(ps[1]), host(want[1]), **SAME_ARITHMETIC)  # small: copied back


def test_the_callers_gradients_are_never_written():
    p0, gs = _problem()
    keep = [[g.copy() for g in step] for step in gs]
    grads = dev(gs)
    ps = dev([p.copy() for p in p0])
    opt = optim.SGD(ps, lr=1e-2, momentum=0.9)  # the first momentum buffer is the gradient
    for g in grads:
        opt.step(g)
    for g, k in zip(grads, keep):
        for a, b in zip(g, k):
            np.testing.assert_array_equal(host(a), b)
    assert all(opt.state[p]["momentum_buffer"] is not g for p, g in zip(ps, grads[-1]))


def test_none_gradients_skip_their_parameters():
    p0, gs = _problem()
    ps = dev([p.copy() for p in p0] + [p0[0].copy()])
    opt = optim.Adam(ps, lr=1e-2)
    opt.step(dev([gs[0][0], gs[0][1], None]))
    np.testing.assert_array_equal(host(ps[2]), p0[0])
    assert ps[2] not in opt.state and len(opt.state) == 2
    opt.step(dev([gs[1][0], None, gs[1][0]]))
    ref = dev([p.copy() for p in p0] + [p0[0].copy()])
    r = optim.Adam(ref, lr=1e-2, foreach=False)
    r.step(dev([gs[0][0], gs[0][1], None]))
    r.step(dev([gs[1][0], None, gs[1][0]]))
    for a, b in zip(ps, ref):
        assert_allclose(host(a), host(b), **SAME_ARITHMETIC)
    assert int(host(opt.state[ps[1]]["step"])) == 1 and int(host(opt.state[ps[2]]["step"])) == 1


def test_schedulers_change_lr_without_recompiling():
    p0, gs = _problem(steps=6)
    runs = []
    for foreach in (None, False):
        ps = dev([p.copy() for p in p0])
        opt = optim.Adam(ps, lr=0.1, foreach=foreach)
        sched = optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        for g in gs:
            opt.step(dev(g))
            sched.step()
        runs.append(ps)
    (group_step,) = _fused_steps(optim.Adam, p0, gs)
    assert len(group_step._programs) == 1
    (jitted, _), = group_step._programs.values()
    assert jitted.trace_count == 1
    for a, b in zip(*runs):
        assert_allclose(host(a), host(b), **SAME_ARITHMETIC)


def _fused_steps(cls, p0, gs):
    ps = dev([p.copy() for p in p0])
    opt = cls(ps, lr=0.1)
    sched = optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)
    for g in gs:
        opt.step(dev(g))
        sched.step()
    return list(opt.__dict__["_fused_cache"].values())


def test_state_dict_round_trip_and_copies():
    p0, gs = _problem(steps=6)
    ps = dev([p.copy() for p in p0])
    opt = optim.AdamW(ps, lr=1e-2, amsgrad=True)
    for g in gs[:3]:
        opt.step(dev(g))
    sd = opt.state_dict()
    frozen = host(sd["state"][0]["exp_avg"]).copy()
    qs = dev([host(p).copy() for p in ps])
    other = optim.AdamW(qs, lr=0.5)
    other.load_state_dict(sd)
    for g in gs[3:]:
        opt.step(dev(g))
        other.step(dev(g))
    np.testing.assert_array_equal(host(sd["state"][0]["exp_avg"]), frozen)  # a copy
    for a, b in zip(ps, qs):
        np.testing.assert_array_equal(host(a), host(b))


def test_a_read_only_parameter_is_a_clear_error():
    p0, gs = _problem()
    ps = [p.copy() for p in p0]
    ps[0].flags.writeable = False
    opt = optim.Adam(ps, lr=1e-2)
    with pytest.raises(ValueError, match="read-only"):
        opt.step(gs[0])


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**16), rows=st.integers(1, 300),
       case=st.sampled_from(CASES[:8]), dtype=st.sampled_from([np.float32, np.float64]),
       lr=st.floats(1e-4, 0.5))
def test_compiled_and_eager_steps_agree(seed, rows, case, dtype, lr):
    name, kw = case
    p0, gs = _problem(seed, dtype, steps=3, shape=(rows, 257))
    a, _ = _run(name, kw, p0, gs, lr, foreach=True)
    b, _ = _run(name, kw, p0, gs, lr, foreach=False)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(host(x), host(y))


def test_the_functional_form_runs_inside_a_jitted_train_step():
    rng = np.random.default_rng(3)
    w0 = rng.standard_normal((300, 250))
    x, y = rng.standard_normal((16, 300)), rng.standard_normal((16, 250))

    def loss(ps, x, y):
        return funcgrad.numpy.mean((x @ ps[0] + ps[1] - y) ** 2)

    params = dev([w0.copy(), np.zeros(250)])
    opt = optim.Adam(params, lr=1e-2, weight_decay=0.01)
    tx = opt.transform()

    def train_step(ps, s, x, y):
        g = funcgrad.grad(loss)(ps, x, y)
        u, s = tx.update(g, s, ps)
        return optim.apply_updates(ps, u), s

    step = funcgrad.jit(train_step, donate_argnums=(0, 1))
    ps, s = dev([w0.copy(), np.zeros(250)]), tx.init(dev([w0.copy(), np.zeros(250)]))
    for _ in range(3):
        ps, s = step(ps, s, dev(x), dev(y))
        opt.step(funcgrad.grad(loss)(params, dev(x), dev(y)))
    for a, b in zip(ps, params):
        assert_allclose(host(a), host(b), rtol=1e-12, atol=1e-15)
    assert tree_util.tree_structure(s) == tree_util.tree_structure(tx.init(ps))
