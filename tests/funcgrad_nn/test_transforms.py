"""Module-aware grad / value_and_grad / jit / vmap."""

import numpy as np
import pytest

import funcgrad
import funcgrad.test_util
import funcgrad_nn as nn
from funcgrad import tree_util
from tests.helpers import DEVICE, assert_allclose, dev, host


def _model():
    nn.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 5), nn.BatchNorm1d(5), nn.Tanh(), nn.Linear(5, 2))
    return m.to(DEVICE)


def _loss(m, x, y):
    return nn.F.mse_loss(m(x), y)


x = np.random.default_rng(1).normal(size=(8, 3)).astype(np.float32)
y = np.random.default_rng(2).normal(size=(8, 2)).astype(np.float32)


@pytest.mark.filterwarnings("ignore::funcgrad_nn.BufferUpdateLostWarning")  # (on purpose)
def test_grads_align_with_parameters_and_match_flat_grad():
    m = _model()
    m[0].requires_grad_(False)
    loss, g = nn.value_and_grad(_loss)(m, dev(x), dev(y))
    assert type(g) is nn.Sequential and g[0].weight is None and g[1].running_mean is None
    params = list(m.parameters())
    leaves = tree_util.tree_leaves(g)
    assert [p.shape for p in params] == [gl.shape for gl in leaves]
    assert all(gl.dtype == np.float32 for gl in leaves)

    def flat(ps):
        mm = tree_util.tree_unflatten(tree_util.tree_structure(m), ps)
        return _loss(mm.train(), dev(x), dev(y))

    ref = funcgrad.grad(flat, allow_int=True)(tree_util.tree_leaves(_model()))
    # trainable leaves of the flat gradient, in order
    mask = [n for n, _ in m.named_parameters()]
    names = list(m.state_dict())
    sel = [ref[names.index(n)] for n in mask]
    assert_allclose(leaves, sel, rtol=1e-4, atol=1e-5)
    assert float(host(loss)) > 0


def test_buffers_written_back_and_has_aux():
    m = _model()
    (loss, aux), g = nn.value_and_grad(lambda m, x, y: (_loss(m, x, y), 7), has_aux=True)(
        m, dev(x), dev(y))
    assert aux == 7
    assert int(host(m[1].num_batches_tracked)) == 1
    assert_allclose(m[1].running_mean, 0.1 * host(m[0](dev(x))).mean(0), rtol=1e-4, atol=1e-6)
    gr, aux = nn.grad(lambda m: (m[3].bias.sum(), "a"), has_aux=True)(m)
    assert aux == "a" and np.allclose(host(gr[3].bias), 1)
    with pytest.raises(TypeError, match="Module"):
        nn.grad(_loss)({"a": 1}, x, y)


def test_grad_matches_numerical():
    nn.set_default_dtype(np.float64)
    try:
        m = nn.Sequential(nn.Linear(3, 4), nn.GELU(), nn.LayerNorm(4), nn.Linear(4, 1)).to(DEVICE)
    finally:
        nn.set_default_dtype(np.float32)
    xd = dev(x.astype(np.float64))
    g = nn.grad(lambda m: (m(xd) ** 2).sum())(m)
    leaves, treedef = tree_util.tree_flatten(m)
    funcgrad.test_util.check_grads(
        lambda *ls: (tree_util.tree_unflatten(treedef, ls)(xd) ** 2).sum(), leaves, order=1)
    num = funcgrad.grad(lambda ls: (tree_util.tree_unflatten(treedef, ls)(xd) ** 2).sum())(leaves)
    assert_allclose(tree_util.tree_leaves(g), num)


def test_jit_module_writes_back_and_retraces_on_mode():
    m = _model()
    f = nn.jit(lambda m, x: m(x))
    out1 = f(m, dev(x))
    assert host(out1).shape == (8, 2) and int(host(m[1].num_batches_tracked)) == 1
    m.train()
    for _ in range(2):
        out = f(m, dev(x))
    assert int(host(m[1].num_batches_tracked)) == 3
    m.eval()
    assert_allclose(f(m, dev(x)), m(dev(x)), rtol=1e-5, atol=1e-6)
    assert int(host(m[1].num_batches_tracked)) == 3
    assert out.dtype == np.float32

    step = nn.jit(nn.value_and_grad(_loss))
    m.train()
    loss, g = step(m, dev(x), dev(y))
    loss2, g2 = nn.value_and_grad(_loss)(_model(), dev(x), dev(y))
    assert_allclose(loss, loss2, rtol=1e-5)
    assert_allclose(tree_util.tree_leaves(g), tree_util.tree_leaves(g2), rtol=1e-4, atol=1e-5)
    # in-place parameter updates are seen by the next jitted call (no stale constants)
    for p in m.parameters():
        p[...] = p * 0
    assert_allclose(step(m, dev(x), dev(y))[0], nn.F.mse_loss(0 * dev(y), dev(y)), rtol=1e-6)


def test_dropout_key_threaded_through_jit_and_grad():
    d = nn.Dropout(0.5).to(DEVICE)
    f = nn.jit(lambda m, x: m(x))
    ones = dev(np.ones(64, np.float32))
    a, b = host(f(d, ones)), host(f(d, ones))
    assert not np.array_equal(a, b)
    k = host(d.rng_key).copy()
    nn.grad(lambda m, x: m(x).sum())(nn.Sequential(nn.Linear(64, 64), d).to(DEVICE), ones)
    assert not np.array_equal(k, host(d.rng_key))
    e = nn.Dropout(0.5).to(DEVICE)
    e.load_state_dict({})  # non-persistent key is not part of the state dict
    assert list(e.state_dict()) == []


def test_vmap_module():
    m = _model().eval()
    per = nn.vmap(lambda m, xi: m(xi[None])[0])(m, dev(x))
    assert_allclose(per, m(dev(x)), rtol=1e-5, atol=1e-6)
    # per-example gradients: vmap over grad
    lin = nn.Linear(3, 2).to(DEVICE)
    pg = nn.vmap(nn.grad(lambda m, xi: m(xi).sum()))(lin, dev(x))
    assert host(pg.weight).shape == (8, 2, 3)
    assert_allclose(pg.weight[0], np.ones((2, 1), np.float32) * x[0], rtol=1e-6)


# ---------------------- module state under plain (not module-aware) transforms -------------

def test_plain_jit_over_a_closed_over_batchnorm_raises_at_the_assignment():
    # Regression: plain funcgrad.jit stored tracers into running_mean and broke the module.
    m = _model()
    before = host(m[1].running_mean).copy()
    with pytest.raises(funcgrad.UnexpectedTracerError,
                       match=r"Sequential\.1 \(BatchNorm1d\): 'running_mean'.*funcgrad_nn\.jit"):
        funcgrad.jit(lambda x: m(x).sum())(dev(x))
    assert isinstance(m[1].running_mean, type(dev(np.zeros(1))))
    assert_allclose(host(m[1].running_mean), before)
    m(dev(x))  # the module still works, and state_dict holds arrays
    assert all(not funcgrad.core.is_tracer(v) for v in m.state_dict().values())


def test_plain_grad_over_a_closed_over_batchnorm_updates_running_stats():
    # Under grad the running statistics are concrete: they are stored, as PyTorch does.
    m, ref = _model(), _model()
    g = funcgrad.grad(lambda x: _loss(m, x, dev(y)))(dev(x))
    _loss(ref, dev(x), dev(y))
    assert g.shape == x.shape
    assert_allclose(host(m[1].running_mean), host(ref[1].running_mean))
    assert_allclose(host(m[1].running_var), host(ref[1].running_var))


def test_plain_vmap_and_nested_module_aware_grad_under_plain_jit_raise():
    m = _model()
    with pytest.raises(funcgrad.UnexpectedTracerError, match="running_mean"):
        funcgrad.vmap(lambda xb: m(xb).sum())(dev(x.reshape(2, 4, 3)))

    @funcgrad.jit
    def step(x):  # the module is captured, not an argument of jit: write-back would leak
        return nn.grad(_loss)(m, x, dev(y))

    with pytest.raises(funcgrad.UnexpectedTracerError, match="running_mean"):
        step(dev(x))
    m.eval()
    g = step(dev(x))  # eval mode: no state is written, so plain jit is fine
    assert g[0].weight.shape == (5, 3)


def _tangent_like(m):
    """``m`` as its own tangent: float0 for the integer buffers (num_batches_tracked), which
    jvp requires, as JAX."""
    return tree_util.tree_map(
        lambda a: np.zeros(a.shape, funcgrad.float0) if a.dtype.kind not in "fc" else a, m)


@pytest.mark.parametrize("transform", [
    lambda m, x: funcgrad.jit(lambda m, x: m(x).sum())(m, x),
    lambda m, x: funcgrad.vjp(lambda m: m(x).sum(), m),
    lambda m, x: funcgrad.jvp(lambda m: m(x).sum(), (m,), (_tangent_like(m),)),
    lambda m, x: funcgrad.vmap(lambda m, x: m(x).sum(), in_axes=(None, 0))(m, x[None]),
    lambda m, x: funcgrad.grad(lambda m: m(x).sum(), allow_int=True)(m)])
def test_a_module_argument_of_a_plain_transformation_warns_that_buffer_updates_are_lost(
        transform):
    # the transformation runs the function on a copy of the module: the BatchNorm update
    # made there never reaches the caller's module, which the warning says (naming the
    # module-aware transforms that write it back)
    bn = nn.BatchNorm1d(3).to(DEVICE)
    with pytest.warns(nn.BufferUpdateLostWarning, match=r"BatchNorm1d: buffer .*funcgrad_nn\.jit"):
        transform(bn, dev(x))
    assert int(host(bn.num_batches_tracked)) == 0
    # the module-aware forms write the update back, without a warning
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", nn.BufferUpdateLostWarning)
        nn.jit(lambda m, x: m(x).sum())(bn, dev(x))
        nn.vjp(lambda m, x: m(x).sum(), bn, dev(x))
        nn.grad(lambda m, x: m(x).sum())(bn, dev(x))
        nn.vmap(lambda m, x: m(x).sum(), in_axes=(None, 0))(bn.eval(), dev(x[None]))
        bn.eval()(dev(x))
        funcgrad.jit(lambda m, x: m(x).sum())(bn, dev(x))  # eval: nothing to update
    assert int(host(bn.num_batches_tracked)) == 3


def test_modules_made_inside_a_transformation_may_hold_tracers():
    def f(x):
        bn = nn.BatchNorm1d(3).to(DEVICE)
        return bn(x).sum() + bn.running_mean.sum()

    assert np.isfinite(float(host(funcgrad.jit(f)(dev(x)))))


def test_grad_argnums_gives_input_and_parameter_gradients():
    m = _model().eval()
    xs = dev(x)
    gx = nn.grad(lambda m, x, y: _loss(m, x, y), argnums=1)(m, xs, dev(y))
    ref = funcgrad.grad(lambda x: _loss(m, x, dev(y)))(xs)
    assert_allclose(host(gx), host(ref), rtol=1e-5, atol=1e-6)
    (loss, (gm, gx2, gy)) = nn.value_and_grad(_loss, argnums=(0, 1, 2))(m, xs, dev(y))
    assert_allclose(host(gx2), host(ref), rtol=1e-5, atol=1e-6)
    assert_allclose(host(gm[0].weight), host(nn.grad(_loss)(m, xs, dev(y))[0].weight))
    assert gy.shape == y.shape
    gx3, gm3 = nn.grad(_loss, argnums=(1, 0))(m, xs, dev(y))
    assert type(gm3) is nn.Sequential and gx3.shape == x.shape
    with pytest.raises(ValueError, match="argnums"):
        nn.grad(_loss, argnums=(1, 1))(m, xs, dev(y))
    with pytest.raises(ValueError, match="refers to argument 5"):
        nn.grad(_loss, argnums=5)(m, xs, dev(y))


def test_trainable_mask_follows_key_paths():
    from funcgrad_nn.transforms import _trainable_mask

    m = _model()
    m[3].requires_grad_(False)
    paths = [tree_util.keystr(p, simple=True, separator=".")
             for p, _ in tree_util.tree_flatten_with_path(m)[0]]
    trainable = {n for n, _ in m.named_parameters()}
    assert _trainable_mask(m) == [p in trainable for p in paths]


@pytest.mark.parametrize("make", [
    lambda: nn.LayerNorm(3),  # weight ones and bias zeros: once simplified away by jit
    lambda: nn.Linear(3, 3),
    lambda: nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 3)),
], ids=["LayerNorm", "Linear", "MLP"])
@pytest.mark.parametrize("opt", [lambda p: nn.optim.SGD(p, lr=0.1),
                                 lambda p: nn.optim.Adam(p, lr=0.05)], ids=["SGD", "Adam"])
def test_jit_closure_over_a_module_sees_in_place_optimizer_updates(make, opt) -> None:
    # funcgrad.jit of a closure over a module, the module trained in place: the jitted loss
    # must follow the parameters (it once stayed at its first value: stale constants).
    nn.manual_seed(0)
    model = make().to(DEVICE)
    optimizer = opt(model.parameters())
    xs = dev(x)
    loss = funcgrad.jit(lambda v: funcgrad.numpy.sum(model(v) ** 2))
    idiom = nn.jit(lambda m, v: funcgrad.numpy.sum(m(v) ** 2))  # the documented way
    seen = []
    for _ in range(6):  # past the compile threshold
        want = host(funcgrad.numpy.sum(model(xs) ** 2))
        assert_allclose(host(loss(xs)), want, rtol=1e-5, atol=1e-6)
        assert_allclose(host(idiom(model, xs)), want, rtol=1e-5, atol=1e-6)
        seen.append(float(want))
        optimizer.step(nn.grad(lambda m: funcgrad.numpy.sum(m(xs) ** 2))(model))
    assert len(set(seen)) == len(seen)  # it trained


def test_vjp_runs_the_forward_once_and_pulls_back_module_grads():
    m = _model()
    m[0].requires_grad_(False)
    out, vjp_fn, aux = nn.vjp(lambda mod, x: (mod(x), 7), m, dev(x), has_aux=True)
    assert aux == 7 and int(m[1].num_batches_tracked) == 1  # the forward's update, once
    ct = dev(np.random.default_rng(3).normal(size=(8, 2)).astype(np.float32))
    g = vjp_fn(ct)
    assert g[0].weight is None and g[1].running_mean is None  # frozen, buffer
    m2 = _model()
    m2[0].requires_grad_(False)
    expected = nn.grad(lambda mod: (mod(dev(x)) * ct).sum())(m2)
    for a, b in zip(nn.tree_leaves(g), nn.tree_leaves(expected)):
        assert_allclose(host(a), host(b), rtol=1e-5, atol=1e-6)
    assert_allclose(host(out), host(m2(dev(x))), rtol=1e-5, atol=1e-6)
    assert len(nn.tree_leaves(vjp_fn(ct))) == len(list(m.parameters()))  # callable again


@pytest.mark.filterwarnings("ignore::funcgrad_nn.BufferUpdateLostWarning")  # (on purpose)
def test_optimizer_takes_a_whole_module_gradient_and_skips_parameters_frozen_later():
    m = _model()
    opt = nn.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    before = [host(p).copy() for p in m.parameters()]
    # plain funcgrad.vjp of a module: an entry for every leaf, the buffers' too
    _, pull = funcgrad.vjp(lambda mod: _loss(mod, dev(x), dev(y)), m)
    (whole,) = pull(np.float32(1.0))
    assert len(tree_util.tree_leaves(whole)) > len(before)
    opt.step(whole)
    m[3].requires_grad_(False)  # PyTorch: `p.requires_grad = False`, then .grad stays None
    frozen = [host(m[3].weight).copy(), host(m[3].bias).copy()]
    opt.step(nn.grad(_loss)(m, dev(x), dev(y)))
    assert_allclose(host(m[3].weight), frozen[0], rtol=0, atol=0)  # no momentum step
    assert_allclose(host(m[3].bias), frozen[1], rtol=0, atol=0)
    assert not np.array_equal(host(m[0].weight), before[0])


def test_optimizer_matches_module_gradients_by_name_in_reordered_groups():
    # minGPT's configure_optimizers: weight-decay groups in sorted-name order, not the
    # module's. Named (name, array) pairs are matched by name, plain arrays by identity (as
    # PyTorch matches each parameter's .grad): both runs give the same numbers.
    def build():
        nn.manual_seed(0)
        return nn.Sequential(*[nn.Sequential(nn.Linear(3, 3), nn.LayerNorm(3))
                               for _ in range(11)], nn.Linear(3, 2)).to(DEVICE)

    def groups(model, named):
        params = dict(model.named_parameters())
        decay = sorted(n for n in params if params[n].ndim == 2)
        no_decay = sorted(n for n in params if n not in decay)
        pick = (lambda ns: [(n, params[n]) for n in ns]) if named else \
            (lambda ns: [params[n] for n in ns])
        return [{"params": pick(decay), "weight_decay": 0.1},
                {"params": pick(no_decay), "weight_decay": 0.0}], decay + no_decay

    loss = lambda m: (m(dev(x)) ** 2).sum()
    by_name, plain = build(), build()
    named_groups, _ = groups(by_name, True)
    plain_groups, order = groups(plain, False)
    opt_named = nn.optim.AdamW(named_groups, lr=0.1)
    opt_plain = nn.optim.AdamW(plain_groups, lr=0.1)
    for k in range(3):
        opt_named.step(nn.grad(loss)(by_name))
        if k == 2:  # a list in the optimizer's order is taken as given
            grads = dict(nn.grad(loss)(plain).named_parameters())
            opt_plain.step([grads[n] for n in order])
        else:
            opt_plain.step(nn.grad(loss)(plain))
    for a, b in zip(by_name.parameters(), plain.parameters()):
        assert_allclose(host(a), host(b), rtol=0, atol=0)
    # names of another module (a submodule's own names): its arrays are found by identity
    head = build()
    opt = nn.optim.SGD(list(head[11].named_parameters()), lr=0.1)
    w0, g = host(head[11].weight).copy(), nn.grad(loss)(head)
    opt.step(g)
    assert_allclose(host(head[11].weight), w0 - 0.1 * host(g[11].weight), rtol=1e-6, atol=1e-7)


def test_optimizer_matches_groups_of_submodules_in_any_order():
    # Gradual unfreezing: the optimizer starts on the head, the backbone's group is added
    # when it is unfrozen (after the head's, unlike the module order), part of it is frozen
    # again later. Each group's parameters are found by the module they came from.
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 4))
            self.head = nn.Linear(4, 2)

        def forward(self, x):
            return self.head(self.backbone(x))

    def run(order):
        nn.manual_seed(0)
        model = Net().to(DEVICE)
        model.backbone.requires_grad_(False)
        opt = nn.optim.SGD(model.head.parameters(), lr=0.1, momentum=0.9)
        step = nn.jit(nn.grad(lambda m: (m(dev(x)) ** 2).sum()))
        for it in range(5):
            if it == 2:
                model.backbone.requires_grad_(True)
                opt.add_param_group({"params": model.backbone.parameters(), "lr": 0.01})
            if it == 4:
                model.backbone[0].requires_grad_(False)
            grads = step(model)
            if order:  # the same update from a list in the optimizer's order
                named = dict(grads.named_parameters())
                names = ["head.weight", "head.bias"] + [
                    f"backbone.{n}" for n in ("0.weight", "0.bias", "2.weight", "2.bias")]
                grads = [named.get(n) for n in names[:2 if it < 2 else 6]]
            opt.step(grads)
        return [host(p) for _, p in model.named_parameters(include_frozen=True)]

    for a, b in zip(run(False), run(True)):
        assert_allclose(a, b, rtol=0, atol=0)


def test_checkpoint_passes_modules_through_and_writes_their_buffers_back():
    # torch.utils.checkpoint.checkpoint(block, x) around BatchNorm and Dropout: the same
    # loss, gradients, running statistics and Dropout key as without it, eagerly and under
    # nn.jit (funcgrad.checkpoint over a closure raised at the buffer update). Decided
    # difference: torch 2.13 updates the statistics twice per step here (num_batches_tracked
    # 4 after two steps, the recomputation in backward re-running BatchNorm's update, both
    # use_reentrant modes; pytorch/pytorch#96136); funcgrad's recomputation is pure.
    def build():
        nn.manual_seed(0)
        return nn.Sequential(nn.Linear(3, 5), nn.BatchNorm1d(5), nn.Tanh(), nn.Dropout(0.3),
                             nn.Linear(5, 2)).to(DEVICE)

    for transform in (lambda f: f, nn.jit):
        plain, ckpt = build(), build()
        for _ in range(2):
            lp, gp = transform(nn.value_and_grad(_loss))(plain, dev(x), dev(y))
            lc, gc = transform(nn.value_and_grad(
                lambda m, x, y: nn.F.mse_loss(nn.checkpoint(m, x, use_reentrant=False), y)))(
                    ckpt, dev(x), dev(y))
            assert_allclose(host(lc), host(lp), rtol=1e-6, atol=1e-7)
            for a, b in zip(nn.tree_leaves(gc), nn.tree_leaves(gp)):
                assert_allclose(host(a), host(b), rtol=1e-5, atol=1e-6)
        for (name, a), (_, b) in zip(ckpt.named_buffers(), plain.named_buffers()):
            assert_allclose(host(a), host(b), rtol=1e-6, atol=1e-7, err_msg=name)
        assert int(ckpt[1].num_batches_tracked) == 2


def test_plain_checkpoint_over_a_closed_over_dropout_points_to_nn_checkpoint():
    block = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5)).to(DEVICE)
    with pytest.raises(funcgrad.UnexpectedTracerError, match="funcgrad_nn.checkpoint"):
        nn.grad(lambda m: funcgrad.checkpoint(lambda v: block(v))(dev(x)).sum())(block)


def test_module_compile_runs_calls_through_nn_jit_as_torch_compile():
    # torch 2.13: after model.compile() calls give the eager results (here: one compiled
    # program, the BatchNorm update and Dropout key written back); disable=True undoes it
    import copy
    import pickle
    import warnings

    m = _model()
    ref_model = copy.deepcopy(m)
    m.compile(fullgraph=True, mode="max-autotune")
    assert_allclose(m(dev(x)), ref_model(dev(x)), rtol=1e-6, atol=1e-6)
    assert int(host(m[1].num_batches_tracked)) == 1
    assert_allclose(m[1].running_mean, ref_model[1].running_mean, rtol=1e-6, atol=1e-7)
    m.eval()
    ref_model.eval()
    assert_allclose(m(dev(x)), ref_model(dev(x)), rtol=1e-6, atol=1e-6)
    assert len(m.__dict__["_compiled"]) == 1  # one signature; eval() retraces inside jit
    clone = pickle.loads(pickle.dumps(m))  # the programs are not pickled
    assert_allclose(clone(dev(x)), ref_model(dev(x)), rtol=1e-6, atol=1e-6)
    m.compile(disable=True)
    assert "_compiled" not in m.__dict__

    class Branchy(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 2)

        def forward(self, x, negate=False, scale=1.0):
            y = self.lin(x) * scale
            if y.sum() > 1e9:  # needs a concrete value: cannot be traced
                return y
            return -y if negate else y

    b = Branchy().to(DEVICE)
    expected = -3.0 * host(b.lin(dev(x)))
    b.compile()
    with pytest.warns(UserWarning, match="needs concrete values.*runs eagerly"):
        assert_allclose(b(dev(x), True, scale=3.0), expected, rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once; eager from now on
        assert_allclose(b(dev(x), negate=True, scale=3.0), expected, rtol=1e-6)
    with pytest.raises(TypeError, match="unexpected keyword"):
        b.compile(nope=1)


def test_a_compiled_module_with_forward_hooks_runs_eagerly():
    # a hook storing activations (PyTorch's feature-extraction idiom) must see arrays on
    # every call, not tracers once while tracing
    m = _model().eval()
    acts = []
    h = m[0].register_forward_hook(lambda mod, args, out: acts.append(out))
    m.compile()
    for _ in range(2):
        m(dev(x))
    assert len(acts) == 2 and not any(funcgrad.core.is_tracer(a) for a in acts)
    h.remove()
    m(dev(x))
    assert len(acts) == 2 and len(m.__dict__["_compiled"]) == 1  # compiled again
    g = nn.register_module_forward_pre_hook(lambda mod, args: acts.append(type(mod).__name__))
    try:
        m(dev(x))
    finally:
        g.remove()
    assert acts[2] == "Sequential"


def test_vmap_of_a_training_batchnorm_names_the_buffer():
    # PyTorch's vmap refuses a training-mode BatchNorm whose running stats would be updated
    # per example ("use eval mode ... or replace_all_batch_norm_modules_"); funcgrad_nn's
    # error named only an internal output path (out[1][0]['1.running_mean']) and out_axes.
    model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3)).to(DEVICE)
    x = dev(np.ones((4, 2, 3), np.float32))
    with pytest.raises(ValueError, match=r"BatchNorm1d \(1\) would update its buffer "
                                         r"'running_mean'.*\.eval\(\)"):
        nn.vmap(lambda m, x: m(x))(model, x)
    assert nn.vmap(lambda m, x: m(x))(model.eval(), x).shape == (4, 2, 3)


class _ComplexParam(nn.Module):
    def __init__(self):
        super().__init__()
        self.z = nn.Parameter(dev(np.array([1 + 2j])))

    def forward(self):
        return (self.z * self.z.conj()).real.sum()


def test_complex_parameters_train_downhill_as_in_pytorch():
    # PyTorch's gradient of |z|^2 is 2z (JAX's is conj(2z)); its optimizers step against it.
    # torch 2.13: three SGD(lr=0.1) steps from 1+2j end at 0.512+1.024j
    m = _ComplexParam()
    assert_allclose(host(nn.grad(lambda m: m())(m).z), np.array([2 + 4j]))
    opt = nn.optim.SGD(m.parameters(), lr=0.1)
    for _ in range(3):
        opt.step(nn.grad(lambda m: m())(m))
    assert_allclose(host(m.z), np.array([0.512 + 1.024j]))
    # out.backward(v) for a complex output: torch gives conj(d out / dz) * v
    _, vjp_fn = nn.vjp(lambda m: m.z * m.z, _ComplexParam())
    assert_allclose(host(vjp_fn(dev(np.array([1 - 1j]))).z), np.array([-2 - 6j]))


def test_a_one_element_loss_is_differentiated_as_loss_backward_does():
    # PyTorch's backward() takes any one-element loss: ((pred - y) ** 2).mean(0) of an (N, 1)
    # output has shape (1,). Here: out = [4, 7], loss [32.5], d/db = 11, d/dw = 18
    m = nn.Linear(1, 1)
    m.weight[...] = 3.0
    m.bias[...] = 1.0
    m.to(DEVICE)
    x = dev(np.array([[1.0], [2.0]], np.float32))
    for vg in (nn.value_and_grad, lambda f: nn.jit(nn.value_and_grad(f))):
        loss, g = vg(lambda m, x: (m(x) ** 2).mean(0))(m, x)
        assert loss.shape == (1,)
        assert_allclose(host(loss), np.array([32.5], np.float32))
        assert_allclose(host(g.bias), np.array([11.0], np.float32))
        assert_allclose(host(g.weight), np.array([[18.0]], np.float32))
    with pytest.raises(TypeError, match="requires a scalar output"):
        nn.grad(lambda m, x: m(x))(m, x)


def test_torch_compile_of_a_function_and_of_a_module():
    # torch.compile(fn): the results of the eager function; Python values are specialised on
    # (a new one compiles again), modules among the arguments have their buffer updates
    # written back; torch.compile(model) compiles the module in place and returns it
    m, xs, ys = _model(), dev(x), dev(y)
    ref = _model()
    expected = [nn.value_and_grad(_loss)(ref, xs, ys)[0] for _ in range(2)]

    @nn.compile
    def step(model, a, b):
        return nn.value_and_grad(_loss)(model, a, b)

    got = [step(m, xs, ys)[0] for _ in range(2)]
    assert_allclose(got, expected, rtol=1e-6)
    assert int(m[1].num_batches_tracked) == 2
    assert_allclose(m[1].running_mean, ref[1].running_mean, rtol=1e-6)
    assert step.__name__ == "step"

    @nn.compile(mode="max-autotune", fullgraph=True, dynamic=False)
    def repeat(a, n):
        for _ in range(n):
            a = a * 2
        return a

    assert_allclose([repeat(xs, 3), repeat(xs, 1)], [xs * 8, xs * 2])
    assert nn.compile(m) is m and "_compiled" in m.__dict__
    assert nn.compile(_loss, disable=True) is _loss
    with pytest.raises(TypeError, match="a Module or a callable"):
        nn.compile(3)


def test_torch_compile_falls_back_to_eager_at_a_graph_break_unless_fullgraph():
    def sign_flip(a):
        return a if float(a.sum()) > 0 else -a  # needs a concrete value

    f = nn.compile(sign_flip)
    with pytest.warns(UserWarning, match="runs eagerly from now on"):
        assert_allclose(f(dev(-np.ones(2))), np.ones(2))
    assert_allclose(f(dev(np.ones(2))), np.ones(2))
    with pytest.raises(funcgrad.errors.ConcretizationError):
        nn.compile(sign_flip, fullgraph=True)(dev(np.ones(2)))
