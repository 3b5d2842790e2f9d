"""funcgrad_nn.utils.checkpoint: torch.utils.checkpoint's checkpoint / checkpoint_sequential."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad_nn as nn
from funcgrad_nn.utils.checkpoint import checkpoint, checkpoint_sequential, noop_context_fn
from tests.helpers import DEVICE, dev, host

# torch 2.13, float64: Sequential(Linear(3, 4), BatchNorm1d(4), Tanh, Linear(4, 4), Tanh,
# Linear(4, 2)) with parameter i = sin(0.7 * arange(numel) + i), x = cos(0.3 * arange(15)),
# loss = (checkpoint_sequential(m, 3, x, use_reentrant=False) ** 2).sum(): the same loss
# and gradients as without checkpointing.
LOSS = 7.386669700981619
GX = [[0.15452576622857414, 0.15998309804324856, 0.09019787904331981],
      [-0.05573953682795597, -0.15638432573308075, -0.1834791226734427],
      [-0.274977735122308, -0.1689114335303016, 0.01659655456495923],
      [0.14358470674222767, 0.16373366413078286, 0.10687612086955584],
      [0.03260679897946199, 0.0015789970893510669, -0.03019143180439182]]
G0W = [[0.010706912016334405, 0.004176480174102951, -0.002727024203474031],
       [0.03222712885902644, 0.11668348627935218, 0.19071685538307767],
       [0.0033414747579484684, -0.00036722421107714294, -0.004043120135013178],
       [-0.09544090773319086, -0.03643205910564784, 0.025831156857978564]]
G5B = [5.116145135132045, 10.567632916425184]
# the running mean after the step without checkpointing (one update); torch's
# checkpoint_sequential leaves [0.0884, 0.1812, 0.2072, -0.0644] with num_batches_tracked 2:
# its recomputation updates the statistics again (pytorch/pytorch#96136), which is not
# reproduced here.
RUNNING_MEAN = [0.04651416352417073, 0.09535361701241143, 0.10902907212042577,
                -0.03391388331972746]


def _model():
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Tanh(), nn.Linear(4, 4), nn.Tanh(),
                      nn.Linear(4, 2)).double().to(DEVICE)
    for i, p in enumerate(m.parameters()):
        p[...] = dev(np.sin(np.arange(p.size) * 0.7 + i).reshape(p.shape))
    return m


X = np.cos(np.arange(15) * 0.3).reshape(5, 3)


@pytest.mark.parametrize("transform", [lambda f: f, nn.jit])
def test_checkpoint_sequential_matches_torch(transform):
    m = _model()

    def loss(m, x):
        return (checkpoint_sequential(m, 3, x, use_reentrant=False) ** 2).sum()

    value, (gm, gx) = transform(nn.value_and_grad(loss, argnums=(0, 1)))(m, dev(X))
    assert float(value) == pytest.approx(LOSS, rel=1e-12)
    np.testing.assert_allclose(host(gx), GX, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(host(gm[0].weight), G0W, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(host(gm[5].bias), G5B, rtol=1e-12)
    np.testing.assert_allclose(host(m[1].running_mean), RUNNING_MEAN, rtol=1e-12)
    assert int(host(m[1].num_batches_tracked)) == 1


def test_checkpoint_sequential_recomputes_the_segments_but_the_last():
    # segments=3 over six modules: two checkpointed chunks of two, the last two run plainly
    m = _model().eval()
    closed = funcgrad.make_jaxpr(lambda x: checkpoint_sequential(m, 3, x))(dev(X))
    names = [e.prim.name for e in closed.jaxpr.eqns]
    assert names.count("remat") == 2, names
    # a list of modules and functions works as a Sequential
    fns = [m[0], lambda h: h * 2.0, m[2]]
    out = checkpoint_sequential(fns, 2, dev(X))
    np.testing.assert_allclose(host(out), host(m[2](m[0](dev(X)) * 2.0)), rtol=1e-12)


def test_checkpoint_sequential_errors_as_torch():
    m = _model()
    with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
        checkpoint_sequential(m, 2, dev(X), foo=1)
    with pytest.raises(ValueError, match="at most the number of functions"):
        checkpoint_sequential(m, 7, dev(X))
    with pytest.raises(ValueError, match="positive int"):
        checkpoint_sequential(m, 0, dev(X))


def test_checkpoint_of_an_eval_module_inside_a_plain_transformation():
    # an eval-mode BatchNorm passed through nn.checkpoint inside plain jit/make_jaxpr: its
    # unchanged buffers came back as the checkpoint's traced outputs and were written to the
    # module, raising UnexpectedTracerError
    m = _model().eval()
    before = host(m[1].running_mean).copy()
    out = funcgrad.jit(lambda x: checkpoint(m, x))(dev(X))
    np.testing.assert_allclose(host(out), host(m(dev(X))), rtol=1e-12)
    np.testing.assert_array_equal(host(m[1].running_mean), before)


def test_torch_utils_checkpoint_names():
    assert checkpoint is nn.checkpoint
    assert nn.utils.checkpoint.checkpoint_sequential is checkpoint_sequential


def test_a_bound_method_of_a_module_with_batchnorm() -> None:
    # checkpoint(self.block, x) with a method (HF / timm write it so): its module's BatchNorm
    # raised UnexpectedTracerError (the module was only captured, not passed through)
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.BatchNorm1d(3)
            self.lin = nn.Linear(3, 3)

        def block(self, x, scale):
            return nn.functional.relu(self.lin(self.norm(x))) * scale

        def forward(self, x, use_checkpoint):
            return self.block(x, 2.0) if not use_checkpoint else checkpoint(
                self.block, x, 2.0, use_reentrant=False)

    x = dev(np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(4, 3))
    plain, ckpt = Net(), Net()
    ckpt.load_state_dict(plain.state_dict())
    plain.to(DEVICE)
    ckpt.to(DEVICE)
    loss = lambda use: (lambda m, x: m(x, use).sum())  # noqa: E731
    v0, g0 = nn.value_and_grad(loss(False))(plain, x)
    v1, g1 = nn.jit(nn.value_and_grad(loss(True)))(ckpt, x)
    np.testing.assert_allclose(host(v1), host(v0), rtol=1e-6)
    np.testing.assert_allclose(host(g1.lin.weight), host(g0.lin.weight), rtol=1e-5)
    np.testing.assert_allclose(host(ckpt.norm.running_mean), host(plain.norm.running_mean))
    assert int(ckpt.norm.num_batches_tracked) == 1


def test_torch_keyword_options_are_not_passed_to_the_function() -> None:
    # torch's checkpoint takes context_fn / determinism_check / debug / early_stop itself;
    # they reached the block as keyword arguments (TypeError in Linear.forward)
    import contextlib

    entered = []

    @contextlib.contextmanager
    def forward_ctx():
        entered.append(True)
        yield

    m = nn.Linear(2, 2)
    m.to(DEVICE)
    x = dev(np.ones((1, 2), np.float32))
    want = host(m(x))
    for kw in (dict(determinism_check="none"), dict(debug=False), dict(early_stop=False),
               dict(context_fn=lambda: (forward_ctx(), contextlib.nullcontext()))):
        np.testing.assert_allclose(host(checkpoint(m, x, use_reentrant=False, **kw)), want)
    assert entered == [True]
    with pytest.raises(ValueError, match="determinism_check should be one of"):
        checkpoint(m, x, use_reentrant=False, determinism_check="strict")
    with pytest.raises(ValueError, match="use_reentrant=False"):
        checkpoint(m, x, use_reentrant=True, context_fn=lambda: (contextlib.nullcontext(),) * 2)
    # torch 2.13: use_reentrant unset is True, so these need it False too; the default
    # context_fn passed explicitly is fine
    for kw in (dict(context_fn=lambda: (contextlib.nullcontext(),) * 2), dict(debug=True)):
        with pytest.raises(ValueError, match=r"^Passing `context_fn` or `debug` is only "
                                             r"supported when use_reentrant=False\.$"):
            checkpoint(m, x, **kw)
    np.testing.assert_allclose(host(checkpoint(m, x, context_fn=noop_context_fn)), want)


# torch 2.13, float64: Sequential(Linear(3, 4), Tanh, Linear(4, 2)), parameter i =
# sin(0.7 * arange(numel) + i), x = cos(0.3 * arange(6)).reshape(2, 3), loss =
# (checkpoint(m, x, use_reentrant=False, context_fn=partial(
#     create_selective_checkpoint_contexts, policy saving aten.addmm)) ** 2).sum()
SAC_LOSS = 7.642439596859845
SAC_GX = [[0.24539781983811945, -0.14890151767639262, -0.47317014477730346],
          [0.5689984096710723, -0.6254031446668582, -1.5256678278742661]]
SAC_G0W = [[1.3382504895829759, 0.8554994725121474, 0.29632923545414974],
           [0.5713696352616231, 0.4322896007208423, 0.25459442361469614],
           [-0.17320180025364623, -0.11189690000021946, -0.04059658292685111],
           [-2.680949053922597, -1.7880789678194469, -0.7354851128693389]]
SAC_G2B = [3.9974384064881185, -6.703841816933186]


def _sac_block():
    m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double().to(DEVICE)
    for i, (_, p) in enumerate(m.named_parameters()):
        p[...] = dev(np.sin(0.7 * np.arange(p.size) + i).reshape(p.shape))
    return m, dev(np.cos(0.3 * np.arange(6.0)).reshape(2, 3))


def test_selective_checkpointing_saves_what_the_policy_says_and_matches_torch():
    import functools

    from funcgrad.ad_checkpoint import saved_residuals
    from funcgrad_nn.utils.checkpoint import (
        CheckpointPolicy,
        create_selective_checkpoint_contexts,
        noop_context_fn,
    )

    m, x = _sac_block()
    seen = []

    def policy(ctx, op, *avals, **params):
        assert ctx.is_recompute is False and all(hasattr(a, "shape") for a in avals)
        seen.append(op.name)
        return (CheckpointPolicy.MUST_SAVE if op is funcgrad.lax.dot_general_p
                else CheckpointPolicy.PREFER_RECOMPUTE)

    def saved(context_fn):
        f = lambda x: checkpoint(m, x, use_reentrant=False, context_fn=context_fn).sum()
        return [w.split(" from ")[0] for _, w in saved_residuals(f, x)]

    by_fn = functools.partial(create_selective_checkpoint_contexts, policy)
    assert "output of dot_general" not in saved(noop_context_fn)  # plain: all recomputed
    assert "output of dot_general" in saved(by_fn) and "dot_general" in seen
    by_name = functools.partial(create_selective_checkpoint_contexts, ["tanh"])
    assert saved(by_name).count("output of tanh") == 1

    def loss(m, x):
        return (checkpoint(m, x, use_reentrant=False, context_fn=by_fn) ** 2).sum()

    for transform in (lambda f: f, nn.jit):
        m, x = _sac_block()
        value, (gm, gx) = transform(nn.value_and_grad(loss, argnums=(0, 1)))(m, x)
        np.testing.assert_allclose(host(value), SAC_LOSS, rtol=1e-12)
        np.testing.assert_allclose(host(gx), SAC_GX, rtol=1e-10)
        np.testing.assert_allclose(host(gm[0].weight), SAC_G0W, rtol=1e-10)
        np.testing.assert_allclose(host(gm[2].bias), SAC_G2B, rtol=1e-10)


def test_selective_checkpointing_errors():
    import functools

    from funcgrad_nn.utils.checkpoint import create_selective_checkpoint_contexts

    m, x = _sac_block()
    with pytest.raises(ValueError, match="funcgrad primitives"):
        create_selective_checkpoint_contexts([3])
    with pytest.raises(TypeError, match="function or a list of ops"):
        create_selective_checkpoint_contexts(3)
    bad = functools.partial(create_selective_checkpoint_contexts, lambda ctx, op, *a, **k: 1)
    with pytest.raises(TypeError, match="must return a CheckpointPolicy"):
        funcgrad.grad(lambda x: checkpoint(m, x, use_reentrant=False, context_fn=bad).sum())(x)
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        checkpoint(m, x, use_reentrant=True, context_fn=bad)
