"""Programs on the newer parts of funcgrad_nn, replayed against PyTorch's own runs
(``fixtures/make_program_fixtures.py``: ``vae_dist``, ``reinforce``, ``moe_ckpt``): a VAE
and a REINFORCE loop written with ``funcgrad_nn.distributions``, and a mixture-of-experts
block with ``F.grouped_mm``, a ``setup_context``-style ``autograd.Function``,
``nn.utils.checkpoint`` and the nanoGPT / timm weight-decay filter over
``nn.modules.batchnorm._BatchNorm``. The ports start from PyTorch's initial state dicts (see
``test_programs.py``)."""

import math

import numpy as np
from funcgrad_nn.modules.batchnorm import _BatchNorm

import funcgrad.numpy as fnp
import funcgrad_nn as nn
import funcgrad_nn.distributions as D
from funcgrad_nn import functional as F
from funcgrad_nn.autograd import Function
from funcgrad_nn.utils.checkpoint import checkpoint
from tests.funcgrad_nn.programs.fixtures.program_data import data
from tests.funcgrad_nn.programs.test_programs import check_state, close, reference
from tests.helpers import DEVICE, dev, host


def test_vae_with_distributions():
    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Linear(6, 8)
            self.mu = nn.Linear(8, 2)
            self.log_scale = nn.Linear(8, 2)
            self.dec = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 6))

        def forward(self, x, eps):
            h = F.relu(self.enc(x))
            q = D.Normal(self.mu(h), F.softplus(self.log_scale(h)) + 1e-3)
            z = q.loc + q.scale * eps
            px = D.Independent(D.Bernoulli(logits=self.dec(z)), 1)
            prior = D.Normal(fnp.zeros(2, dtype=np.float32), fnp.ones(2, dtype=np.float32))
            kl = D.kl_divergence(q, prior).sum(-1)
            return -(px.log_prob(x) - kl).mean(), (kl.mean(), q.entropy().sum(-1).mean())

    init, final, ref = reference("vae_dist")
    model = VAE()
    model.load_state_dict(init)
    model.to(DEVICE)
    x, eps = dev(data("vae_dist"))
    optimizer = nn.optim.Adam(model.parameters(), lr=1e-2)
    step = nn.value_and_grad(lambda m, x, e: m(x, e), has_aux=True)
    losses, kls, entropies = [], [], []
    for i in range(5):
        (loss, (kl, ent)), grads = step(model, x, eps[i])
        optimizer.step(grads)
        losses.append(float(loss))
        kls.append(float(kl))
        entropies.append(float(ent))
    close(losses, ref["losses"])
    close(kls, ref["kls"])
    close(entropies, ref["entropies"])
    check_state(model, final)


def test_reinforce_policy_gradient():
    init, final, ref = reference("reinforce")
    policy = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
    policy.load_state_dict(init)
    policy.to(DEVICE)
    states, actions, rewards = data("reinforce")
    optimizer = nn.optim.Adam(policy.parameters(), lr=1e-2)

    def loss_fn(policy, s, a, returns):
        dist = D.Categorical(logits=policy(s))
        loss = -(dist.log_prob(a) * returns).sum() - 0.01 * dist.entropy().mean()
        return loss, dist.probs[0]

    step = nn.value_and_grad(loss_fn, has_aux=True)
    losses, first_probs = [], []
    for ep in range(5):
        R, returns = 0.0, []
        for r in rewards[ep][::-1]:
            R = float(r) + 0.9 * R
            returns.insert(0, R)
        returns = fnp.asarray(dev(np.array(returns, np.float32)))
        returns = (returns - returns.mean()) / (returns.std(ddof=1) + 1e-8)
        (loss, probs), grads = step(policy, dev(states[ep]), dev(actions[ep]), returns)
        optimizer.step(grads)
        losses.append(float(loss))
        first_probs.append(host(probs))
    close(losses, ref["losses"])
    close(first_probs, ref["first_probs"])
    check_state(policy, final)


class ScaleGrad(Function):
    @staticmethod
    def forward(x, scale):
        return x.clone()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.scale = inputs[1]

    @staticmethod
    def backward(ctx, g):
        return g * ctx.scale, None


def test_mixture_of_experts_grouped_mm_checkpoint_and_decay_groups():
    class MoE(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.BatchNorm1d(8)
            self.proj = nn.Linear(8, 8)
            self.experts = nn.Parameter(fnp.zeros((3, 8, 8), dtype=np.float32))

        def block(self, x, offs):
            h = fnp.tanh(self.proj(self.norm(x)))
            return F.grouped_mm(h, self.experts, offs=offs)

        def forward(self, x, offs):
            h = checkpoint(self.block, x, offs, use_reentrant=False)
            return x + ScaleGrad.apply(h, 0.5)

    init, final, ref = reference("moe_ckpt")
    model = MoE()
    model.load_state_dict(init)
    model.to(DEVICE)
    xs, offs, ys = dev(data("moe_ckpt"))
    decay, no_decay = [], []
    for _, m in model.named_modules():
        for pn, p in m.named_parameters(recurse=False):
            (no_decay if pn.endswith("bias") or isinstance(m, _BatchNorm) else decay).append(p)
    assert len(decay) == int(ref["n_decay"])
    optimizer = nn.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                {"params": no_decay, "weight_decay": 0.0}], lr=1e-2)
    step = nn.value_and_grad(lambda m, x, y: F.mse_loss(m(x, offs), y))
    losses = []
    for i in range(4):
        loss, grads = step(model, xs[i], ys[i])
        optimizer.step(grads)
        losses.append(float(loss))
    close(losses, ref["losses"])
    # PyTorch's recomputation updates the BatchNorm's statistics a second time
    # (pytorch/pytorch#96136); funcgrad_nn's checkpoint is pure: once per step, as unchecked
    stats = ("norm.running_mean", "norm.running_var", "norm.num_batches_tracked")
    check_state(model, final, skip=stats)
    assert int(final["norm.num_batches_tracked"]) == 8 and int(model.norm.num_batches_tracked) == 4


class Standardized(nn.data.Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y
        self.mean, self.std = x.mean(0), x.std(0, ddof=1)  # torch's std is unbiased

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return (self.x[i] - self.mean) / self.std, self.y[i:i + 1]


class Shards(nn.data.IterableDataset):
    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        info = nn.data.get_worker_info()
        if info is None:
            lo, hi = self.start, self.end
        else:
            per = int(math.ceil((self.end - self.start) / float(info.num_workers)))
            lo = self.start + info.id * per
            hi = min(lo + per, self.end)
        return iter(range(lo, hi))


def test_dataloader_workers_and_trainer():
    init, final, ref = reference("loader_workers")
    x, y = data("loader_workers")
    model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
    model.load_state_dict(init)
    model.to(DEVICE)
    loader = nn.data.DataLoader(Standardized(x, y), batch_size=8, num_workers=2,
                                drop_last=True, persistent_workers=True)
    optimizer = nn.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scheduler = nn.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    trainer = nn.train.Trainer(model, nn.MSELoss(), optimizer, scheduler=scheduler,
                               clip_grad_norm=1.0, progress=False, plot=False, device=DEVICE)
    history = trainer.fit(loader, epochs=4)
    close(history["loss"], ref["epoch_losses"])
    check_state(model, final)
    batches = [host(b).tolist() for b in nn.data.DataLoader(Shards(3, 17), batch_size=3,
                                                              num_workers=2)]
    assert [len(b) for b in batches] == ref["sizes"].astype(int).tolist()
    assert [v for b in batches for v in b] == ref["order"].astype(int).tolist()
