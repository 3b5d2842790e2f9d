"""Parameters the loss does not depend on (a submodule run under no_grad, one never called):
PyTorch leaves their .grad None and its optimizers skip them: no step, no weight decay, no
state. nn.grad gives them zero arrays (so tree_leaves(grads) stays aligned with
model.parameters()) and records them; the optimizers skip them as PyTorch does. Reference
values: torch 2.13, fixtures/make_unused_param_fixtures.py. Also AdamW's decoupled decay in
float16, rounded where torch rounds it (fixtures/make_adamw_half_fixtures.py)."""

import numpy as np
import pytest
from helpers import DEVICE, dev, host

import funcgrad_nn as nn
from funcgrad import tree_util
from funcgrad_nn import optim
from funcgrad_nn.transforms import no_grad_leaves

W = {"a.weight": [[0.5, -0.25, 0.125], [1.0, 0.75, -0.5]], "a.bias": [0.1, -0.2],
     "frozen_run.weight": [[0.2, 0.3, -0.1]], "frozen_run.bias": [0.4],
     "never.weight": [[1.5, -1.0, 0.5]], "never.bias": [-0.3],
     "b.weight": [[0.3, -0.7]], "b.bias": [0.05]}
X = np.array([[1.0, 2.0, -1.0], [0.5, -1.5, 2.0], [-1.0, 0.0, 1.0], [2.0, 1.0, 0.0]])

TORCH = {
    "adamw": {"a.weight": [[0.6842845875891405, 0.05305628135223913, -0.15589496431880023],
                           [0.5744096467647901, 0.35788781508714135, -0.14509994025380996]],
              "a.bias": [-0.04525684501304997, 0.10731069860802611],
              "b.weight": [[0.25670575774694626, -0.3264924702811215]],
              "b.bias": [-0.07275045413353542]},
    "sgd": {"a.weight": [[0.5646184917892465, -0.08969141684854809, -0.02314436784037643],
                         [0.9359136020168347, 0.6828325969853303, -0.4315410414723281]],
            "a.bias": [0.08427285666710072, -0.16664354446769925],
            "b.weight": [[0.23970317743710645, -0.08193313538453842]],
            "b.bias": [-0.06401770423826222]},
}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 2)
        self.frozen_run = nn.Linear(3, 1)
        self.never = nn.Linear(3, 1)
        self.b = nn.Linear(2, 1)

    def forward(self, x):
        with nn.no_grad():
            side = self.frozen_run(x)
        return self.b(nn.F.tanh(self.a(x))) + 0.0 * side


def _net():
    m = Net().double()
    m.load_state_dict({k: np.array(v) for k, v in W.items()})
    return m


def _loss(m):
    return (m(X) ** 2).mean()


@pytest.mark.parametrize("name,cls,kw,jit", [
    ("adamw", optim.AdamW, dict(lr=0.1, weight_decay=0.5), False),
    ("adamw", optim.AdamW, dict(lr=0.1, weight_decay=0.5), True),
    ("sgd", optim.SGD, dict(lr=0.1, momentum=0.9, weight_decay=0.1), False),
])
def test_optimizers_skip_parameters_without_gradient(name, cls, kw, jit):
    m = _net()
    opt = cls(m.parameters(), **kw)
    step = nn.value_and_grad(_loss)
    if jit:
        step = nn.jit(step)
    for _ in range(3):
        _, g = step(m)
        opt.step(g)
    got = m.state_dict()
    for k, v in TORCH[name].items():
        np.testing.assert_allclose(got[k], v, rtol=1e-12, atol=1e-15)
    for k in ("frozen_run.weight", "frozen_run.bias", "never.weight", "never.bias"):
        np.testing.assert_array_equal(got[k], W[k])
    assert len(opt.state) == 4  # as torch: no state for the skipped parameters


def test_gradients_stay_aligned_zeros_and_records_do_not_survive_tree_map():
    m = _net()
    g = nn.grad(_loss)(m)
    leaves = tree_util.tree_leaves(g)
    assert len(leaves) == len(list(m.parameters()))
    assert sorted(no_grad_leaves(g)) == [2, 3, 4, 5]
    np.testing.assert_array_equal(g.never.weight, np.zeros((1, 3)))
    # a gradient that is computed from (here: a sum of two) is a plain pytree: every zero in
    # it counts as a gradient, as the gradients of two losses added up may use any parameter
    total = tree_util.tree_map(lambda a, b: a + b, g, g)
    assert no_grad_leaves(total) == frozenset()
    # a parameter used through a multiplication by zero has a (zero) gradient, as in torch
    g0 = nn.grad(lambda m: _loss(m) + 0.0 * m.never(X).sum())(m)
    assert sorted(no_grad_leaves(g0)) == [2, 3]


def test_adamw_float16_decay_rounds_as_torch():
    # torch's AdamW multiplies p by 1 - lr * wd in place (rounded in float16) before its
    # step; adding -lr * wd * p to the update instead drifted by up to 3 ulps in 5 steps.
    # Reference: fixtures/make_adamw_half_fixtures.py (torch 2.13), as float16 bit patterns.
    rng = np.random.default_rng(3)
    w = rng.uniform(0.5, 4.0, 16).astype(np.float16)
    gs = [rng.standard_normal(16).astype(np.float16) for _ in range(5)]
    torch_bits = np.array([14882, 15686, 17024, 16653, 15028, 16352, 16471, 15462, 16916, 15131,
                           16210, 16555, 16395, 16647, 16936, 17322])
    opt = optim.AdamW([w], lr=1e-2, weight_decay=0.1)
    for g in gs:
        opt.step([g])
    ulps = np.abs(w.view(np.uint16).astype(np.int64) - torch_bits)
    # one element keeps a 1-ulp difference: torch's fused addcdiv rounds once where the
    # update here is rounded before it is added
    assert ulps.max() <= 1 and (ulps == 0).sum() >= 15


@pytest.mark.parametrize("opts", [dict(clip_grad_norm=1.0), dict(grad_accumulation=2),
                                  dict(clip_grad_value=0.1, grad_accumulation=2)])
def test_trainer_keeps_unused_parameters_skipped_through_clipping_and_accumulation(opts):
    from funcgrad_nn.train import fit

    m = _net().to(DEVICE)
    opt = optim.AdamW(m.parameters(), lr=0.1, weight_decay=0.5)
    batches = [dev((X, np.zeros((4, 1)))), dev((X[::-1].copy(), np.ones((4, 1))))]
    fit(m, nn.MSELoss(), opt, batches, epochs=1, progress=False, **opts)
    got = m.state_dict()
    for k in ("frozen_run.weight", "frozen_run.bias", "never.weight", "never.bias"):
        np.testing.assert_array_equal(host(got[k]), W[k])
    assert not np.array_equal(host(got["a.weight"]), W["a.weight"])
    assert len(opt.state) == 4


def test_vjp_gradients_record_unused_parameters_too():
    # a GAN's generator step: out = G(z) now, out.backward(ct) later; torch leaves .grad None
    # at parameters the output does not depend on
    m = _net()
    out, vjp_fn = nn.vjp(lambda m, x: m(x), m, X)
    g = vjp_fn(np.ones_like(out))
    assert sorted(no_grad_leaves(g)) == [2, 3, 4, 5]
    opt = optim.AdamW(m.parameters(), lr=0.1, weight_decay=0.5)
    opt.step(g)
    np.testing.assert_array_equal(m.never.weight, W["never.weight"])
    assert len(opt.state) == 4


def test_parameters_unfrozen_after_building_the_optimizer_are_named_once():
    # torch: SGD(model.parameters()) with the backbone frozen holds the backbone anyway
    # (requires_grad=False parameters are yielded), so unfreezing it later trains it; here
    # parameters() yields the trainable ones only, so the optimizer says it skips them
    import warnings

    import pytest

    m = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    m[0].requires_grad_(False)
    opt = optim.SGD(m.parameters(), lr=0.1)
    x = np.ones((2, 3), np.float32)
    loss = lambda m: (m(x) ** 2).sum()  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step(nn.grad(loss)(m))  # still frozen: nothing to say
    m[0].requires_grad_(True)
    with pytest.warns(UserWarning, match=r"SGD\.step: parameters unfrozen since .* not "
                                         r"updated: 0\.weight, 0\.bias \(2 in all\)"):
        opt.step(nn.grad(loss)(m))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step(nn.grad(loss)(m))  # once
    m[0].requires_grad_(False)
    again = optim.SGD(m.parameters(), lr=0.1)
    m[0].requires_grad_(True)
    again.add_param_group({"params": m[0].parameters()})  # the fix the warning names
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again.step(nn.grad(loss)(m))
    assert again._frozen_at_build == []  # held now: no longer watched
    fresh = optim.SGD(m[1].parameters(), lr=0.1)
    fresh.add_param_group({"params": m[0].parameters()})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fresh.step(nn.grad(loss)(m))  # added: held, no warning
