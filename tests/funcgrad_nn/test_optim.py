"""funcgrad_nn.optim: the stateful wrappers against hand-written NumPy versions of PyTorch's
algorithms, and the functional core (optax conventions) incl. jit/vmap/strict device."""

from __future__ import annotations

import math

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad_nn import optim
from tests.helpers import DEVICE, assert_allclose, dev, host

RNG = np.random.default_rng(0)
STEPS = 5


def _problem(dtype=np.float64):
    params = [RNG.standard_normal((3, 2)).astype(dtype), RNG.standard_normal(4).astype(dtype)]
    grads = [[RNG.standard_normal(p.shape).astype(dtype) for p in params] for _ in range(STEPS)]
    return params, grads


# ---- reference implementations: PyTorch's single-tensor algorithms, written out in NumPy ----

def ref_sgd(p, gs, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
            maximize=False):
    p, buf = p.copy(), None
    for g in gs:
        g = -g if maximize else g
        if weight_decay:
            g = g + weight_decay * p
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
    return p


def ref_adam(p, gs, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False,
             maximize=False, decoupled=False):
    b1, b2 = betas
    p = p.copy()
    m, v, vmax = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
    for t, g in enumerate(gs, 1):
        g = -g if maximize else g
        if decoupled:
            p = p * (1 - lr * weight_decay)
        elif weight_decay:
            g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vmax = np.maximum(vmax, v)
        vv = vmax if amsgrad else v
        denom = np.sqrt(vv) / math.sqrt(1 - b2**t) + eps
        p = p - lr / (1 - b1**t) * m / denom
    return p


def ref_adamax(p, gs, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
    b1, b2 = betas
    p, m, u = p.copy(), np.zeros_like(p), np.zeros_like(p)
    for t, g in enumerate(gs, 1):
        if weight_decay:
            g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        u = np.maximum(b2 * u, np.abs(g) + eps)
        p = p - lr / (1 - b1**t) * m / u
    return p


def ref_rmsprop(p, gs, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0,
                centered=False, maximize=False):
    p = p.copy()
    sq, ga, buf = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
    for g in gs:
        g = -g if maximize else g
        if weight_decay:
            g = g + weight_decay * p
        sq = alpha * sq + (1 - alpha) * g * g
        if centered:
            ga = alpha * ga + (1 - alpha) * g
            avg = np.sqrt(sq - ga * ga) + eps
        else:
            avg = np.sqrt(sq) + eps
        if momentum > 0:
            buf = momentum * buf + g / avg
            p = p - lr * buf
        else:
            p = p - lr * g / avg
    return p


def ref_adagrad(p, gs, lr=1e-2, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0,
                eps=1e-10, maximize=False):
    p, s = p.copy(), np.full_like(p, initial_accumulator_value)
    for t, g in enumerate(gs, 1):
        g = -g if maximize else g
        if weight_decay:
            g = g + weight_decay * p
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g
        p = p - clr * g / (np.sqrt(s) + eps)
    return p


CASES = [
    (optim.SGD, ref_sgd, dict(lr=0.1)),
    (optim.SGD, ref_sgd, dict(lr=0.1, momentum=0.9)),
    (optim.SGD, ref_sgd, dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    (optim.SGD, ref_sgd, dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)),
    (optim.Adam, ref_adam, dict(lr=0.01)),
    (optim.Adam, ref_adam, dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    (optim.Adam, ref_adam, dict(lr=0.01, betas=(0.5, 0.9), maximize=True)),
    (optim.AdamW, lambda p, gs, **k: ref_adam(p, gs, decoupled=True, **k),
     dict(lr=0.01, weight_decay=1e-2)),
    (optim.AdamW, lambda p, gs, **k: ref_adam(p, gs, decoupled=True, **k),
     dict(lr=0.01, weight_decay=0.3, amsgrad=True)),
    (optim.Adamax, ref_adamax, dict(lr=0.01, weight_decay=0.1)),
    (optim.RMSprop, ref_rmsprop, dict(lr=0.01)),
    (optim.RMSprop, ref_rmsprop, dict(lr=0.01, centered=True, momentum=0.9, weight_decay=0.1)),
    (optim.RMSprop, ref_rmsprop, dict(lr=0.01, alpha=0.5, maximize=True)),
    (optim.Adagrad, ref_adagrad, dict(lr=0.1)),
    (optim.Adagrad, ref_adagrad,
     dict(lr=0.1, lr_decay=0.1, weight_decay=0.1, initial_accumulator_value=0.5)),
]


@pytest.mark.parametrize("cls,ref,kw", CASES, ids=lambda x: x.__name__ if hasattr(x, "__name__") and x.__name__ != "<lambda>" else None)
def test_matches_pytorch_formulas(cls, ref, kw):
    params, grads = _problem()
    live = dev([p.copy() for p in params])
    opt = cls(live, **kw)
    for g in grads:
        opt.step(dev(g))
    if DEVICE != "cpu":
        assert type(live[0]) is not np.ndarray
    for i, p in enumerate(params):
        assert_allclose(host(live[i]), ref(p, [g[i] for g in grads], **kw), rtol=1e-12, atol=1e-13)


def test_defaults_match_pytorch():
    p = [np.zeros(1)]
    assert optim.SGD(p).defaults["lr"] == 1e-3
    assert optim.Adam(p).defaults == dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                                          weight_decay=0.0, amsgrad=False, maximize=False,
                                          foreach=None, capturable=False,
                                          differentiable=False, fused=None,
                                          decoupled_weight_decay=False)
    assert optim.AdamW(p).defaults["weight_decay"] == 1e-2
    r = optim.RMSprop(p).defaults
    assert (r["lr"], r["alpha"], r["eps"]) == (1e-2, 0.99, 1e-8)
    a = optim.Adagrad(p).defaults
    assert (a["lr"], a["eps"], a["initial_accumulator_value"]) == (1e-2, 1e-10, 0.0)


def test_float32_params_stay_float32_in_place():
    w = dev(np.ones(3, np.float32))
    opt = optim.Adam([w], lr=0.1)
    opt.step([dev(np.ones(3))])  # a float64 gradient does not change the parameter's dtype
    assert w.dtype == np.float32
    assert_allclose(host(w), np.full(3, 0.9, np.float32), rtol=1e-6)


@pytest.mark.parametrize("cls,kw,msg", [
    (optim.SGD, dict(lr=-1.0), "Invalid learning rate: -1.0"),
    (optim.SGD, dict(momentum=-0.1), "Invalid momentum value: -0.1"),
    (optim.SGD, dict(weight_decay=-1), "Invalid weight_decay value: -1"),
    (optim.SGD, dict(nesterov=True), "Nesterov momentum requires a momentum and zero dampening"),
    (optim.SGD, dict(nesterov=True, momentum=0.9, dampening=0.1), "Nesterov momentum requires"),
    (optim.Adam, dict(eps=-1.0), "Invalid epsilon value: -1.0"),
    (optim.Adam, dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    (optim.AdamW, dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    (optim.RMSprop, dict(alpha=-0.5), "Invalid alpha value: -0.5"),
    (optim.Adagrad, dict(lr_decay=-1.0), "Invalid lr_decay value: -1.0"),
    (optim.Adagrad, dict(initial_accumulator_value=-1.0),
     "Invalid initial_accumulator_value value: -1.0"),
])
def test_hyperparameter_errors(cls, kw, msg):
    with pytest.raises(ValueError, match=msg.replace("(", r"\(")):
        cls([np.zeros(1)], **kw)


def test_param_errors():
    with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
        optim.SGD(np.zeros(2), lr=0.1)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="can only optimize Tensors"):
        optim.SGD([1.0], lr=0.1)
    w = np.zeros(1)
    opt = optim.SGD([w], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [w]})
    with pytest.raises(ValueError, match="2 gradient leaves for 1 parameters"):
        opt.step({"a": np.zeros(1), "b": np.zeros(1)})
    with pytest.raises(ValueError, match=r"gradient 0 has shape \(2,\), parameter 0 has shape \(1,\)"):
        opt.step([np.zeros(2)])
    with pytest.raises(TypeError, match="pass the gradients"):
        opt.step(None)


def test_param_groups_and_pytree_grads():
    a, b, c = np.ones(2), np.ones(3), np.ones(1)
    opt = optim.SGD([{"params": [a, b]}, {"params": [c], "lr": 1.0}], lr=0.1, momentum=0.0)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 1.0]
    # A pytree whose leaves align with the parameters (None subtrees are skipped by tree_leaves).
    opt.step({"x": [np.ones(2), np.ones(3)], "y": None, "z": (np.ones(1),)})
    assert_allclose([a, b, c], [np.full(2, 0.9), np.full(3, 0.9), np.zeros(1)])
    opt.step([None, np.ones(3), None])  # None entries in an aligned list skip parameters
    assert_allclose([a, b, c], [np.full(2, 0.9), np.full(3, 0.8), np.zeros(1)])
    opt.zero_grad()


def test_state_dict_roundtrip_pytorch_layout():
    params, grads = _problem()
    live = [p.copy() for p in params]
    opt = optim.Adam([{"params": [live[0]]}, {"params": [live[1]], "lr": 0.5}], lr=0.01,
                     amsgrad=True)
    for g in grads[:2]:
        opt.step(g)
    sd = opt.state_dict()
    assert sorted(sd["state"]) == [0, 1]
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}
    assert sd["state"][0]["step"] == 2
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1]]
    assert sd["param_groups"][1]["lr"] == 0.5
    # A fresh optimizer on copies, loaded, continues identically.
    other = [p.copy() for p in live]
    opt2 = optim.Adam([{"params": [other[0]]}, {"params": [other[1]]}], lr=0.3)
    sd["state"][0]["step"] = np.array(2.0, np.float32)  # PyTorch saves step as a float tensor
    opt2.load_state_dict(sd)
    assert opt2.param_groups[1]["lr"] == 0.5 and opt2.param_groups[0]["params"][0] is other[0]
    for g in grads[2:]:
        opt.step(g)
        opt2.step(g)
    assert_allclose(other, live)
    sd["state"][0]["exp_avg"][...] = 0  # state_dict holds copies
    assert np.any(opt.state[live[0]]["exp_avg"] != 0)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.Adam([np.zeros(1)]).load_state_dict(sd)



@pytest.mark.parametrize("cls,expected", [
    # PyTorch 2.13 after loading OLD into Adam/AdamW(lr=0.3, amsgrad=True, maximize=True)
    # over float64 [1, -1], then one step with the gradient [0.5, 0.25]
    ("Adam", [0.9000000014809985, -0.9242776864568738]),
    ("AdamW", [0.8567820381758882, -0.8927465431769663]),
])
def test_loading_an_older_state_dict_fills_options_as_pytorch(cls, expected):
    # A state dict from an older PyTorch: no amsgrad/maximize/foreach/... options, and an
    # int step. PyTorch's __setstate__ gives the missing options fixed values (amsgrad and
    # maximize False, not this optimizer's True), and AdamW's groups are always decoupled.
    old = {"state": {0: {"step": 1, "exp_avg": np.array([0.1, -0.2], np.float32),
                         "exp_avg_sq": np.array([0.001, 0.004], np.float32)}},
           "param_groups": [{"lr": 0.1, "betas": (0.9, 0.999), "eps": 1e-8,
                             "weight_decay": 0.5, "params": [0]}]}
    w = dev(np.array([1.0, -1.0]))
    opt = getattr(optim, cls)([w], lr=0.3, amsgrad=True, maximize=True)
    opt.load_state_dict(old)
    group = {k: v for k, v in opt.param_groups[0].items() if k != "params"}
    assert group == {"lr": 0.1, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.5,
                     "amsgrad": False, "maximize": False, "foreach": None, "capturable": False,
                     "differentiable": False, "decoupled_weight_decay": cls == "AdamW",
                     "fused": None}
    opt.step([dev(np.array([0.5, 0.25]))])
    assert_allclose(host(w), np.array(expected), rtol=1e-14)
    assert float(opt.state_dict()["state"][0]["step"]) == 2.0
    # the other classes' tables: an old SGD dict without nesterov, RMSprop without centered
    sgd = optim.SGD([np.zeros(1)], lr=0.1, nesterov=True, momentum=0.9)
    sgd.load_state_dict({"state": {}, "param_groups": [
        {"lr": 0.1, "momentum": 0.9, "dampening": 0, "weight_decay": 0, "params": [0]}]})
    assert sgd.param_groups[0]["nesterov"] is False and sgd.param_groups[0]["fused"] is False
    rms = optim.RMSprop([np.zeros(1)], momentum=0.5, centered=True)
    rms.load_state_dict({"state": {}, "param_groups": [
        {"lr": 0.1, "alpha": 0.99, "eps": 1e-8, "weight_decay": 0, "params": [0]}]})
    assert (rms.param_groups[0]["momentum"], rms.param_groups[0]["centered"]) == (0, False)



def test_state_is_writable_as_pytorchs_defaultdict():
    # Custom optimizers and wrappers (SAM, Lookahead) keep their own entries in state[p],
    # and users preset or reset an algorithm's buffers; PyTorch 2.13's values for SGD(lr=0.1,
    # momentum=0.9) over float64 zeros(3), the buffer preset to 0.5 then reset to 0 before
    # two steps with the gradient [1, 2, 3]
    w = dev(np.zeros(3))
    opt = optim.SGD([w], lr=0.1, momentum=0.9)
    assert dict(opt.state[w]) == {} and w not in opt.state
    opt.state[w]["momentum_buffer"] = dev(np.full(3, 0.5))
    opt.state[w]["tag"] = "x"
    opt.state[w]["count"] = 1
    opt.state[w]["count"] += 1
    g = dev(np.array([1.0, 2.0, 3.0]))
    opt.step([g])
    assert_allclose(host(w), np.array([-0.145, -0.245, -0.345]), rtol=1e-15)
    opt.state[w]["momentum_buffer"] = dev(np.zeros(3))
    opt.step([g])
    assert_allclose(host(w), np.array([-0.245, -0.445, -0.645]), rtol=1e-15)
    sd = opt.state_dict()
    assert sorted(sd["state"][0]) == ["count", "momentum_buffer", "tag"]
    assert sd["state"][0]["count"] == 2
    opt.state = {}  # PyTorch: optimizer.state = defaultdict(dict) resets every buffer
    assert len(opt.state) == 0
    opt.load_state_dict(sd)
    assert opt.state[w]["tag"] == "x" and sorted(opt.state[w]) == sorted(sd["state"][0])
    for st in opt.state.values():
        st["momentum_buffer"] = dev(np.zeros(3))
    opt.step([g])
    assert_allclose(host(opt.state[w]["momentum_buffer"]), np.array([1.0, 2.0, 3.0]))
    del opt.state[w]["tag"]
    assert "tag" not in opt.state_dict()["state"][0]
    assert opt.state.get(w)["count"] == 2
    opt.state.clear()
    assert opt.state.get(w) is None and opt.state_dict()["state"] == {}
    # loaded entries of no algorithm's: in the (floating) parameter's dtype, as PyTorch's
    # load_state_dict casts every tensor but "step"
    v = dev(np.zeros(3, np.float32))
    other = optim.SGD([v], lr=0.1)
    other.load_state_dict({"state": {0: {"old_p": np.ones(3), "n": np.array(3)}},
                           "param_groups": [{**sd["param_groups"][0], "momentum": 0}]})
    assert {k: host(x).dtype for k, x in other.state[v].items()} == {
        "old_p": np.float32, "n": np.float32}



def test_a_dict_of_gradients_is_matched_by_key():
    # funcgrad.grad over a dict of parameters returns its keys sorted; the optimizer was
    # built from the dict's values (insertion order) or its (name, array) items: each
    # gradient must reach the parameter of its key, not the one at its sorted position
    params = {"w": dev(np.zeros(3)), "b": dev(np.zeros(3))}
    coef = dev(np.array([1.0, 2.0, 3.0]))

    def loss(p):
        return fnp.sum(p["w"] * coef) + fnp.sum(p["b"] * 10.0)

    grads = funcgrad.grad(loss)(params)
    for opt in (optim.SGD(params.values(), lr=1.0), optim.SGD(params.items(), lr=1.0)):
        opt.step(grads)
    assert_allclose(host(params["w"]), np.array([-2.0, -4.0, -6.0]))
    assert_allclose(host(params["b"]), np.full(3, -20.0))
    opt = optim.SGD([{"params": params.values()}], lr=1.0)
    opt.add_param_group({"params": {"c": dev(np.zeros(1))}.values()})
    with pytest.raises(ValueError, match="gradient leaves"):
        opt.step(grads)  # no gradient for "c": not silently aligned by position
    with pytest.raises(TypeError, match=r"params is builtins.str: .*params.values\(\)"):
        optim.SGD(params, lr=1.0)  # the dict itself: PyTorch's error, naming the way out


def test_adagrad_state_exists_before_step():
    opt = optim.Adagrad([np.zeros(2)], initial_accumulator_value=0.5)
    assert_allclose(opt.state_dict()["state"][0]["sum"], np.full(2, 0.5))


# ---------------------------------- functional core ----------------------------------------

def _run(tx, params, grads):
    state = tx.init(params)
    for g in grads:
        updates, state = tx.update(g, state, params)
        params = optim.apply_updates(params, updates)
    return params


def test_functional_adam_matches_reference():
    params, grads = _problem()
    out = _run(optim.adam(0.01), dev(params), dev(grads))
    for i, p in enumerate(params):
        assert_allclose(host(out[i]), ref_adam(p, [g[i] for g in grads], lr=0.01), rtol=1e-10)


def test_functional_sgd_momentum_and_nesterov():
    params, grads = _problem()
    for nesterov in (False, True):
        out = _run(optim.sgd(0.1, momentum=0.9, nesterov=nesterov), dev(params), dev(grads))
        # optax's trace (no dampening) == PyTorch's SGD with dampening 0 from a zero buffer.
        for i, p in enumerate(params):
            ref = ref_sgd(p, [g[i] for g in grads], lr=0.1, momentum=0.9, nesterov=nesterov)
            assert_allclose(host(out[i]), ref, rtol=1e-12)


def test_functional_adamw_rmsprop_adagrad_values():
    p, g = np.array([1.0, -2.0]), np.array([0.5, 3.0])
    p, g = dev(p), dev(g)
    u, _ = optim.adamw(0.1, weight_decay=0.1).update(g, optim.adamw(0.1).init(p), p)
    p, g, u = host(p), host(g), host(u)
    # adamw: -lr * (adam_update + wd * p); first adam update is sign(g) up to eps.
    assert_allclose(u, -0.1 * (g / (np.abs(g) + 1e-8) + 0.1 * p))
    tx = optim.rmsprop(0.1, decay=0.9, eps=1e-8)
    u, _ = tx.update(g, tx.init(p))
    assert_allclose(u, -0.1 * g / np.sqrt(0.1 * g * g + 1e-8))
    tx = optim.adagrad(0.1)
    u, _ = tx.update(g, tx.init(p))
    assert_allclose(u, -0.1 * g / np.sqrt(0.1 + g * g + 1e-7))
    tx = optim.rmsprop(0.1, centered=True, momentum=0.9)
    assert tree_util.tree_structure(tx.init(p)) == tree_util.tree_structure(tx.init(p))


def test_clip_by_global_norm_and_chain():
    g = dev([np.array([3.0]), np.array([4.0])])
    tx = optim.chain(optim.clip_by_global_norm(1.0), optim.scale(-1.0))
    u, _ = tx.update(g, tx.init(g))
    assert_allclose(host(u), [np.array([-0.6]), np.array([-0.8])])
    u, _ = optim.clip_by_global_norm(10.0).update(g, optim.EmptyState())
    assert_allclose(host(u), host(g))
    z = dev([np.zeros(2)])
    assert_allclose(host(optim.clip_by_global_norm(1.0).update(z, optim.EmptyState())[0]), host(z))


def test_schedule_drives_learning_rate_and_jit():
    sched = optim.exponential_decay(1.0, 1, 0.5)
    tx = optim.sgd(sched)
    params = {"w": dev(np.ones(2, np.float32))}
    state = tx.init(params)

    @funcgrad.jit
    def step(params, state):
        g = funcgrad.grad(lambda p: fnp.sum(p["w"] ** 2) / 2)(params)
        updates, state = tx.update(g, state, params)
        return optim.apply_updates(params, updates), state

    for _ in range(3):
        params, state = step(params, state)
    # w_{k+1} = w_k (1 - 0.5**k): 1 * 0 ... first step lr=1 zeroes w; check the count instead.
    assert int(host(state[-1].count)) == 3
    assert params["w"].dtype == np.float32
    assert_allclose(host(params["w"]), np.zeros(2, np.float32))


def test_jit_adam_matches_eager_and_vmap():
    params, grads = dev(_problem())
    tx = optim.adam(0.01)
    state = tx.init(params)
    eager = tx.update(grads[0], state, params)
    jitted = funcgrad.jit(tx.update)(grads[0], state, params)
    assert_allclose(host(jitted), host(eager), rtol=1e-12)
    batched = fnp.stack([grads[0][1], grads[1][1]])
    vm = funcgrad.vmap(lambda g: tx.update(g, tx.init(params[1]), params[1])[0])(batched)
    for k in range(2):
        assert_allclose(host(vm[k]), host(tx.update(batched[k], tx.init(params[1]), params[1])[0]))


def test_grad_through_update():
    # Differentiating through an optimizer step (meta-learning) works with the pure core.
    tx = optim.sgd(0.1, momentum=0.5)

    def f(w):
        u, _ = tx.update(2 * w, tx.init(w))
        return fnp.sum(optim.apply_updates(w, u) ** 2)

    w = np.array([1.0, 2.0])
    assert_allclose(funcgrad.grad(f)(w), 2 * 0.8 * 0.8 * w)


def test_schedules_values():
    s = optim.cosine_decay_schedule(1.0, 10, alpha=0.1)
    assert_allclose(host(s(10)), np.asarray(0.1))
    s = optim.piecewise_constant_schedule(1.0, {3: 0.5})  # optax's: from the boundary on
    assert float(host(s(2))) == 1.0 and float(host(s(3))) == 0.5
    assert float(host(optim.polynomial_schedule(1.0, 0.0, 1, 4)(8))) == 0.0


# ------------------------- following the module, hooks, closures, bad input -----------------

def _tiny_problem():
    import funcgrad_nn as nn

    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32)
    model = nn.Linear(3, 1)
    loss = nn.value_and_grad(lambda m, x, y: ((m(x) - y) ** 2).mean())
    return model, x, y, loss


def test_optimizer_follows_module_after_double_before_first_step():
    # Regression: Adam kept updating the float32 arrays orphaned by model.double().
    model, x, y, loss = _tiny_problem()
    opt = optim.Adam(model.parameters(), lr=0.05)
    model.double()
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    first, _ = loss(model, x64, y64)
    for _ in range(100):
        _, g = loss(model, x64, y64)
        opt.step(g)
    last, _ = loss(model, x64, y64)
    assert model.weight.dtype == np.float64
    assert opt.param_groups[0]["params"][0] is model.weight
    assert float(last) < 0.05 * float(first)


def test_optimizer_follows_module_copies_with_state():
    # model.float() on a float32 model replaces every array (same shape and dtype): the
    # state carries over and the run continues exactly as if nothing happened.
    model, x, y, loss = _tiny_problem()
    twin, _, _, _ = _tiny_problem()
    twin.load_state_dict(model.state_dict())
    opt, opt2 = optim.Adam(model.parameters(), lr=0.05), optim.Adam(twin.parameters(), lr=0.05)
    for k in range(6):
        if k == 3:
            model.float()
        opt.step(loss(model, x, y)[1])
        opt2.step(loss(twin, x, y)[1])
    assert_allclose(model.weight, twin.weight, rtol=0, atol=0)


def test_optimizer_state_dtype_mismatch_raises():
    model, x, y, loss = _tiny_problem()
    opt = optim.Adam(model.parameters(), lr=0.05)
    opt.step(loss(model, x, y)[1])
    model.double()
    with pytest.raises(ValueError, match=r"Linear.weight was replaced by an array of shape "
                                         r"\(1, 3\) and dtype float64.*float32"):
        opt.step(loss(model, x.astype(np.float64), y.astype(np.float64))[1])


def test_optimizer_from_a_list_raises_on_orphaned_arrays():
    model, x, y, loss = _tiny_problem()
    opt = optim.SGD(list(model.parameters()), lr=0.05)
    model.double()
    with pytest.raises(ValueError, match="read-only: its module replaced it"):
        opt.step(loss(model, x.astype(np.float64), y.astype(np.float64))[1])


def test_step_closure_and_hooks():
    w = np.zeros(2)
    opt = optim.SGD([w], lr=0.5)
    seen = []
    pre = opt.register_step_pre_hook(lambda o, a, k: seen.append(("pre", len(a))))
    post = opt.register_step_post_hook(lambda o, a, k: seen.append(("post", len(a))))
    loss = opt.step(lambda: (float(np.sum((w - 1) ** 2)), [2 * (w - 1)]))
    assert loss == 2.0 and seen == [("pre", 1), ("post", 1)]
    assert_allclose(w, np.ones(2))
    # A closure returning only the loss, with explicit gradients.
    assert opt.step([np.ones(2)], closure=lambda: 7.0) == 7.0
    assert_allclose(w, np.full(2, 0.5))
    pre.remove(), post.remove()
    opt.step([np.ones(2)])
    assert len(seen) == 4
    with pytest.raises(TypeError, match="closure returning \\(loss, grads\\)"):
        opt.step(lambda: 1.0)


def test_add_param_group_mid_run_and_zero_grad():
    a, b = np.ones(2), np.ones(3)
    opt = optim.Adam([a], lr=0.1)
    opt.step([np.ones(2)])
    opt.add_param_group({"params": [b], "lr": 0.2})
    opt.step([np.ones(2), np.ones(3)])
    assert_allclose(b, np.full(3, 0.8), rtol=1e-7)  # eps in Adam's denominator
    assert sorted(opt.state_dict()["state"]) == [0, 1]
    assert int(opt.state[a]["step"]) == 2 and int(opt.state[b]["step"]) == 1
    opt.zero_grad()


@pytest.mark.parametrize("make,err,msg", [
    (lambda: optim.Adam([], lr=0.1), ValueError, "empty parameter list"),
    (lambda: optim.NAdam([[1.0, 2.0]]), TypeError, "can only optimize Tensors.*list"),
    (lambda: optim.RAdam([np.zeros(1)], lr=-0.1), ValueError, "Invalid learning rate: -0.1"),
    (lambda: optim.Rprop([np.zeros(1)], etas=(1.5, 1.2)), ValueError, "Invalid eta values"),
    (lambda: optim.Adadelta([np.zeros(1)], rho=1.5), ValueError, "Invalid rho value: 1.5"),
    (lambda: optim.NAdam([np.zeros(1)], momentum_decay=-1), ValueError,
     "Invalid momentum_decay value"),
    (lambda: optim.Adafactor([np.zeros(1)], d=0.5), ValueError, "Clipping threshold d"),
    (lambda: optim.Adafactor([np.zeros(1)], beta2_decay=0.5), ValueError, "beta2_decay"),
    (lambda: optim.LBFGS([np.zeros(1)], line_search_fn="armijo"), ValueError, "strong_wolfe"),
    (lambda: optim.LBFGS([{"params": [np.zeros(1)]}, {"params": [np.zeros(1)]}]), ValueError,
     "doesn't support per-parameter options"),
    (lambda: optim.SGD([np.zeros(1)], lr="0.1"), TypeError, "lr must be a number"),
])
def test_bad_input(make, err, msg):
    with pytest.raises(err, match=msg):
        make()


def test_lbfgs_needs_a_closure_returning_grads():
    w = np.zeros(2)
    opt = optim.LBFGS([w])
    with pytest.raises(TypeError, match="LBFGS.step needs a closure"):
        opt.step()
    with pytest.raises(TypeError, match="must return \\(loss, grads\\)"):
        opt.step(lambda: 1.0)


def test_lbfgs_state_dict_round_trip():
    a = np.array([1.0, 2.0, 3.0])

    def run(opt, w, steps):
        for _ in range(steps):
            opt.step(lambda: (float(np.sum(a * (w - 1) ** 4)), [4 * a * (w - 1) ** 3]))

    w1, w2 = np.zeros(3), np.zeros(3)
    o1 = optim.LBFGS([w1], max_iter=3, history_size=2)
    run(o1, w1, 2)
    w2[...] = w1
    o2 = optim.LBFGS([w2], max_iter=3, history_size=2)
    o2.load_state_dict(o1.state_dict())
    run(o1, w1, 2)
    run(o2, w2, 2)
    assert_allclose(w1, w2, rtol=0, atol=0)


def test_onecycle_stepped_past_the_end_is_a_clear_error():
    opt = optim.SGD([np.zeros(1)], lr=0.1, momentum=0.9)
    sched = optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=3)
    for _ in range(3):
        sched.step()
    with pytest.raises(ValueError, match="Tried to step 4 times.*finished its cycle"):
        sched.step()


def test_lion_matches_its_formula():
    params, grads = _problem()
    live = dev([p.copy() for p in params])
    opt = optim.Lion(live, lr=0.01, betas=(0.8, 0.95), weight_decay=0.1)
    for g in grads:
        opt.step(dev(g))
    for i, p in enumerate(params):
        p, m = p.copy(), np.zeros_like(p)
        for g in [gs[i] for gs in grads]:
            p = p * (1 - 0.01 * 0.1) - 0.01 * np.sign(0.8 * m + 0.2 * g)
            m = 0.95 * m + 0.05 * g
        assert_allclose(host(live[i]), p, rtol=1e-12)


def _rosenbrock(p):
    x, y = p["x"], p["y"]
    return fnp.sum((1 - x) ** 2 + 100 * (y - x**2) ** 2)


ROSENBROCK = [  # (optimizer, hyperparameters, steps, final loss below); start loss 24.2
    ("SGD", dict(lr=1e-3, momentum=0.9), 2000, 1e-2),
    ("Adam", dict(lr=0.02), 2000, 1e-2),
    ("AdamW", dict(lr=0.02, weight_decay=0.0), 2000, 1e-2),
    ("Adamax", dict(lr=0.1), 2000, 1e-2),
    ("RMSprop", dict(lr=3e-3, centered=True, momentum=0.5), 2000, 1e-2),
    ("Adagrad", dict(lr=1.0), 2000, 1e-2),
    ("NAdam", dict(lr=0.02), 2000, 1e-2),
    ("RAdam", dict(lr=2e-3, betas=(0.9, 0.99)), 2000, 1e-2),
    ("Adadelta", dict(lr=3.0, rho=0.99), 2000, 1.0),  # Adadelta is slow on this valley
    ("ASGD", dict(lr=2e-3, t0=500), 2000, 1e-2),
    ("Rprop", dict(lr=1e-3), 2000, 1e-2),
    ("SparseAdam", dict(lr=0.02), 2000, 1e-2),
    ("Adafactor", dict(lr=1.0, d=10.0), 2000, 5e-2),
    ("Lion", dict(lr=1e-3), 3000, 1e-2),
]


@pytest.mark.parametrize("name,kw,steps,tol", ROSENBROCK, ids=[r[0] for r in ROSENBROCK])
def test_converges_on_rosenbrock_in_a_jitted_step(name, kw, steps, tol):
    tx = getattr(optim, name)([np.zeros(1)], **kw).transform()

    @funcgrad.jit
    def step(p, s):
        g = funcgrad.grad(_rosenbrock)(p)
        u, s = tx.update(g, s, p)
        return optim.apply_updates(p, u), s

    p = dev({"x": np.array([-1.2]), "y": np.array([1.0])})
    s = tx.init(p)
    for _ in range(steps):
        p, s = step(p, s)
    assert float(host(_rosenbrock(p))) < tol


def _programs(opt):
    return sum(len(f._programs) for f in opt.__dict__.get("_fused_cache", {}).values())


@pytest.mark.parametrize("name,kw", [
    ("SGD", dict(momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("Adam", dict(amsgrad=True)),
    ("RMSprop", dict(momentum=0.5, centered=True)),
    ("NAdam", dict(weight_decay=0.1, decoupled_weight_decay=True)),
])
def test_fused_step_follows_schedulers_without_retracing(name, kw):
    # lr and the hyperparameters a scheduler changes every step (OneCycleLR's momentum, or
    # Adam's beta1) are operands of the group's compiled update: a whole cycle runs a couple
    # of programs (the first step's constants, then the changing ones as operands), with
    # the eager loop's numbers.
    params, grads = _problem()
    runs = []
    for foreach in (False, True):
        live = [p.copy() for p in params]
        opt = getattr(optim, name)(live, lr=0.1, foreach=foreach, **kw)
        sched = optim.lr_scheduler.OneCycleLR(opt, max_lr=0.5, total_steps=len(grads) * 4)
        for _ in range(4):
            for g in grads:
                opt.step(g)
                sched.step()
        runs.append(live)
        if foreach:
            assert not opt.__dict__.get("_fused_off")
            assert _programs(opt) <= 3  # SGD's first step has no momentum buffer yet
    # host parameters: the compiled step computes on the host, bit for bit the eager loop,
    # whatever the default device (its scalar arithmetic on lr and betas ran there)
    assert_allclose(runs[0], runs[1], rtol=0, atol=0)
    live = [p.copy() for p in params]
    opt = optim.Adam(live, lr=0.1, foreach=True)
    sched = optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    for g in grads:
        opt.step(g)
        sched.step()
    assert len(opt.__dict__["_fused_cache"]) == 1 and not opt.__dict__.get("_fused_off")


def test_fused_adafactor_is_the_eager_loop_bit_for_bit():
    # The compiled step traces Adafactor's decay 1 - beta2_t = t**beta2_decay (1 at the first
    # step): its lerps take torch.lerp's two branches there too (a one-branch lerp made a few
    # float32 entries differ from the eager loop).
    rng = np.random.default_rng(1)
    params = [rng.normal(size=(64, 48)).astype(np.float32), rng.normal(size=100).astype(np.float32)]
    grads = [[rng.normal(size=p.shape).astype(np.float32) for p in params] for _ in range(30)]
    params, grads = dev(params), dev(grads)
    runs = []
    for foreach in (False, True):
        live = [p.copy() for p in params]
        opt = optim.Adafactor(live, lr=0.01, weight_decay=0.1, beta2_decay=-0.5, foreach=foreach)
        for g in grads:
            opt.step(g)
        runs.append(host(live))
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad", "Adadelta", "Adamax",
                                  "NAdam", "RAdam", "RMSprop", "Rprop", "ASGD", "SparseAdam",
                                  "Adafactor", "Lion", "Muon"])
def test_host_parameters_stay_on_the_host_under_a_device_default(name):
    # NumPy parameters while the default device is another (the strict pass; CuPy's GPU):
    # the update must not create arrays on the default device (Adafactor's RMS and Muon's
    # bfloat16 rounding of 0-d values did: NumPy scalars went to the default device).
    w = np.random.default_rng(0).normal(size=(6, 5)).astype(np.float32)
    kw = {} if name in ("SparseAdam", "Muon") else {"foreach": False}
    opt = getattr(optim, name)([w], lr=0.01, **kw)
    for _ in range(3):
        opt.step([np.ones((6, 5), np.float32)])
    assert type(w) is np.ndarray and np.isfinite(w).all()
    assert all(type(v) is np.ndarray for v in opt.state[w].values() if v is not None)


def _hyper_schedule(opt, i):
    for g in opt.param_groups:
        if i == 3:  # turns on a transformation of the chain (and SGD's momentum buffer)
            g["weight_decay"] = 0.1
            if "momentum" in g:
                g["momentum"] = 0.9
        if i == 6:
            g["maximize"], g["weight_decay"] = True, 0.0


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("name,expected", [
    # torch 2.13: the same loop over torch.optim's, float64 parameters and gradients
    ("SGD", [0.362585988135, 2.79165394773, 0.57113747154]),
    ("Adam", [0.314852406656, 2.66001096715, 2.314178807679]),
    ("AdamW", [0.304064059728, 2.606832946097, 2.244662050991]),
])
def test_changing_hyperparameters_mid_run_keeps_the_state(name, expected, foreach):
    # Turning weight decay or momentum on (or maximize) adds a transformation to the group's
    # chain; the state (step counts, moments) carries over by name, as PyTorch's does.
    w = np.array([1.0, 2.0, 3.0])
    opt = getattr(optim, name)([w], lr=0.1, weight_decay=0.0, foreach=foreach)
    for i in range(9):
        _hyper_schedule(opt, i)
        opt.step([np.array([0.5, -1.0, 2.0]) * (1 + 0.1 * i)])
    assert_allclose(w, np.array(expected), rtol=1e-10)
    assert float(opt.state_dict()["state"][0].get("step", 9)) == 9


def test_step_inside_jit_is_a_clear_error_and_optimizers_copy():
    import copy

    w = np.zeros(2)
    opt = optim.Adam([w], lr=0.1, foreach=True)
    opt.step([np.ones(2)])
    with pytest.raises(TypeError, match="cannot be recorded inside a transformation"):
        funcgrad.jit(lambda g: opt.step([g]))(np.ones(2))
    twin_w = w.copy()
    twin = copy.deepcopy(opt)
    twin.param_groups[0]["params"][0] = twin_w
    opt.step([np.ones(2)])
    twin.step([np.ones(2)])
    assert_allclose(twin_w, w)


@pytest.mark.parametrize("cls", [optim.SGD, optim.LBFGS])
def test_state_dict_hooks_run_as_pytorchs(cls):
    # The call order torch 2.13 gives for the same registrations (prepend, replacing returns,
    # handle removal), LBFGS included.
    opt = cls([np.zeros(1)], lr=0.1)
    calls = []
    opt.register_state_dict_pre_hook(lambda o: calls.append("pre1"))
    opt.register_state_dict_pre_hook(lambda o: calls.append("pre0"), prepend=True)
    opt.register_state_dict_post_hook(lambda o, sd: calls.append("post"))
    h = opt.register_state_dict_post_hook(lambda o, sd: {**sd, "x": 1})
    calls.append(sorted(opt.state_dict()))
    h.remove()
    calls.append(sorted(opt.state_dict()))
    opt.register_load_state_dict_pre_hook(lambda o, sd: calls.append("lpre"))
    opt.register_load_state_dict_pre_hook(
        lambda o, sd: {"state": sd["state"],
                       "param_groups": [dict(sd["param_groups"][0], lr=0.05)]})
    opt.register_load_state_dict_post_hook(
        lambda o: calls.append(("lpost", o.param_groups[0]["lr"])))
    opt.load_state_dict(opt.state_dict())
    assert calls == ["pre0", "pre1", "post", ["param_groups", "state", "x"], "pre0", "pre1",
                     "post", ["param_groups", "state"], "pre0", "pre1", "post", "lpre",
                     ("lpost", 0.05)]


def test_repr_is_pytorchs():
    # str(torch.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)), torch 2.13
    opt = optim.SGD([{"params": [np.zeros(1)]}, {"params": [np.zeros(1)], "lr": 0.5}], lr=0.1)
    group = ("    dampening: 0\n    differentiable: False\n    foreach: None\n    fused: None\n"
             "    lr: {}\n    maximize: False\n    momentum: 0\n    nesterov: False\n"
             "    weight_decay: 0\n")
    assert repr(opt) == ("SGD (\nParameter Group 0\n" + group.format(0.1)
                         + "\nParameter Group 1\n" + group.format(0.5) + ")")


@pytest.mark.parametrize("name", ["Adam", "NAdam", "ASGD", "Rprop", "Adafactor"])
def test_state_scalars_stay_0d_arrays(name):
    # PyTorch's step (NAdam's mu_product, ASGD's eta and mu) is a 0-d tensor; NumPy's 0-d
    # arithmetic gives scalars, which the state must not become.
    w = dev(np.zeros((2, 2)))
    opt = getattr(optim, name)([w])
    for _ in range(2):
        opt.step([dev(np.ones((2, 2)))])
    for k, v in opt.state_dict()["state"][0].items():
        assert not isinstance(v, np.generic) and v.shape in ((), w.shape, (2, 1), (1, 2)), k
    assert float(host(opt.state[w]["step"])) == 2.0


def test_global_step_hooks_run_around_every_optimizers_own_as_torch():
    # torch 2.13 order: global pre, own pre, step, own post, global post
    from funcgrad_nn.optim.optimizer import (
        register_optimizer_step_post_hook,
        register_optimizer_step_pre_hook,
    )

    log = []
    opt = optim.SGD([np.zeros(1)], lr=1.0)
    opt.register_step_pre_hook(lambda o, a, k: log.append("pre"))
    opt.register_step_post_hook(lambda o, a, k: log.append("post"))
    gpre = register_optimizer_step_pre_hook(lambda o, a, k: log.append(("gpre", type(o).__name__)))
    gpost = register_optimizer_step_post_hook(lambda o, a, k: log.append("gpost"))
    try:
        opt.step([np.ones(1)])
        optim.Adam([np.zeros(1)]).step([np.ones(1)])
    finally:
        gpre.remove()
        gpost.remove()
    opt.step([np.ones(1)])
    assert log == [("gpre", "SGD"), "pre", "post", "gpost", ("gpre", "Adam"), "gpost",
                   "pre", "post"]


# ------------- plain parameter arrays matched to Module-shaped gradients by identity ----------

def _two_linears():
    import funcgrad_nn as nn

    nn.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 4, bias=False), nn.Tanh(),
                         nn.Linear(4, 4, bias=False)).to(DEVICE)


_X = RNG.standard_normal((3, 4)).astype(np.float32)


def _two_linears_grads(w0, w2):
    """d/dW of sum(tanh(x W0^T) W2^T), by hand: (dW0, dW2)."""
    h = np.tanh(_X.astype(np.float64) @ w0.T)
    dh = np.ones((len(_X), 4)) @ w2
    return ((1 - h * h) * dh).T @ _X, np.ones((len(_X), 4)).T @ h


def test_plain_arrays_in_another_order_are_matched_by_identity():
    # PyTorch matches each parameter's .grad by identity; the two weights have the same
    # shape, so matching by position would silently swap their gradients.
    import funcgrad_nn as nn

    m = _two_linears()
    w0, w2 = host(m[0].weight).astype(np.float64), host(m[2].weight).astype(np.float64)
    g0, g2 = _two_linears_grads(w0, w2)
    opt = optim.SGD([m[2].weight, m[0].weight], lr=1.0)
    opt.step(nn.grad(lambda mm: mm(dev(_X)).sum())(m))
    assert_allclose(host(m[0].weight), (w0 - g0).astype(np.float32), rtol=1e-5, atol=1e-5)
    assert_allclose(host(m[2].weight), (w2 - g2).astype(np.float32), rtol=1e-5, atol=1e-5)


def test_chained_parameters_and_reordered_groups_are_matched_by_identity():
    import itertools

    import funcgrad_nn as nn

    loss = nn.grad(lambda mm: mm(dev(_X)).sum())
    # itertools.chain of submodules' parameters(), the later module first
    m = _two_linears()
    w0, w2 = host(m[0].weight).astype(np.float64), host(m[2].weight).astype(np.float64)
    g0, g2 = _two_linears_grads(w0, w2)
    opt = optim.SGD(itertools.chain(m[2].parameters(), m[0].parameters()), lr=0.5)
    opt.step(loss(m))
    want0, want2 = w0 - 0.5 * g0, w2 - 0.5 * g2
    assert_allclose(host(m[0].weight), want0.astype(np.float32), rtol=1e-5, atol=1e-5)
    assert_allclose(host(m[2].weight), want2.astype(np.float32), rtol=1e-5, atol=1e-5)
    # groups in another order than the module's, each with its own lr; the two Linears have
    # one layout, so their groups cannot be told apart by layout: identity decides
    for later in (lambda mm: [mm[2].weight], lambda mm: mm[2].parameters()):
        m = _two_linears()
        w0, w2 = host(m[0].weight).astype(np.float64), host(m[2].weight).astype(np.float64)
        g0, g2 = _two_linears_grads(w0, w2)
        opt = optim.SGD([{"params": later(m), "lr": 0.5}, {"params": m[0].parameters()}],
                        lr=0.1)
        opt.step(loss(m))
        want0, want2 = w0 - 0.1 * g0, w2 - 0.5 * g2
        assert_allclose(host(m[0].weight), want0.astype(np.float32), rtol=1e-5, atol=1e-5)
        assert_allclose(host(m[2].weight), want2.astype(np.float32), rtol=1e-5, atol=1e-5)


def test_identity_match_ambiguous_between_two_models_raises():
    # Two live models of one class and layout hold the same arrays in different places: the
    # gradient module does not say which one it mirrors.
    import funcgrad_nn as nn

    a, b = nn.Linear(4, 4, bias=False).to(DEVICE), nn.Linear(4, 4, bias=False).to(DEVICE)
    m1, m2 = nn.Sequential(a, nn.Tanh(), b), nn.Sequential(b, nn.Tanh(), a)
    opt = optim.SGD([b.weight, a.weight], lr=1.0)
    before = host(a.weight).copy()
    with pytest.raises(ValueError, match="2 live Sequential modules shaped like the gradient"):
        opt.step(nn.grad(lambda mm: mm(dev(_X)).sum())(m1))
    assert_allclose(host(a.weight), before, rtol=0, atol=0)
    assert m2[0] is b
