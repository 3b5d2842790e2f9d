"""Whole programs as PyTorch users write them with torch.distributions, on funcgrad_nn
modules, optimizers and ``nn.jit``: a REINFORCE policy, a Gaussian VAE, a SAC-style squashed
Gaussian actor, a mixture density network."""

from __future__ import annotations

import numpy as np

import funcgrad
import funcgrad.numpy as fnp
import funcgrad_nn as nn
import funcgrad_nn.distributions as D
from funcgrad_nn.distributions.transforms import AffineTransform, TanhTransform
from tests.helpers import DEVICE, dev, host


def test_reinforce_learns_the_rewarded_action():
    nn.manual_seed(0)
    policy = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 3)).to(DEVICE)
    opt = nn.optim.Adam(policy.parameters(), lr=1e-2)
    obs = dev(np.random.default_rng(0).normal(size=(32, 4)).astype(np.float32))

    def loss(m, obs, key):
        dist = D.Categorical(logits=m(obs))
        a = dist.sample(key=key)
        reward = (a == 2).astype(np.float32)
        return -fnp.mean(dist.log_prob(a) * reward) - 0.01 * fnp.mean(dist.entropy())

    step = nn.jit(nn.value_and_grad(loss))
    key = funcgrad.random.PRNGKey(0)
    for _ in range(100):
        key, sub = funcgrad.random.split(key)
        _, g = step(policy, obs, sub)
        opt.step(nn.tree_leaves(g))
    p2 = float(host(fnp.mean(D.Categorical(logits=policy(obs)).probs[:, 2])))
    assert p2 > 0.9


def test_vae_elbo_decreases():
    nn.manual_seed(1)

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Linear(6, 4)
            self.dec = nn.Linear(2, 6)

        def forward(self, x, key):
            h = self.enc(x)
            q = D.Independent(D.Normal(h[:, :2], fnp.exp(h[:, 2:])), 1)
            z = q.rsample(key=key)
            px = D.Independent(D.Bernoulli(logits=self.dec(z)), 1)
            prior = D.Independent(D.Normal(fnp.zeros_like(h[:, :2]), 1.0), 1)
            return -fnp.mean(px.log_prob(x) - D.kl_divergence(q, prior))

    vae = VAE().to(DEVICE)
    opt = nn.optim.Adam(vae.parameters(), lr=1e-2)
    x = dev((np.random.default_rng(1).random((64, 6)) < 0.3).astype(np.float32))
    step = nn.jit(nn.value_and_grad(lambda m, x, k: m(x, k)))
    key = funcgrad.random.PRNGKey(0)
    losses = []
    for _ in range(150):
        key, sub = funcgrad.random.split(key)
        loss, g = step(vae, x, sub)
        losses.append(float(host(loss)))
        opt.step(nn.tree_leaves(g))
    assert np.mean(losses[-10:]) < np.mean(losses[:10]) - 0.5


def test_squashed_gaussian_actor_log_prob_is_finite_and_differentiable():
    """SAC's actor: a tanh-squashed, rescaled Gaussian whose log-probability of its own
    reparameterised action enters the loss (cache_size=1 keeps it finite at the edges)."""
    mu, log_std = dev(np.array([0.3, 8.0])), dev(np.array([-0.5, -3.0]))

    def actor_loss(mu, log_std, key):
        pi = D.TransformedDistribution(D.Independent(D.Normal(mu, fnp.exp(log_std)), 1),
                                       [TanhTransform(cache_size=1), AffineTransform(0.0, 2.0)])
        a = pi.rsample((16,), key=key)
        return fnp.mean(0.2 * pi.log_prob(a) - fnp.sum(a, axis=-1))

    loss, (gm, gs) = funcgrad.jit(funcgrad.value_and_grad(actor_loss, argnums=(0, 1)))(
        mu, log_std, funcgrad.random.PRNGKey(0))
    assert np.isfinite(float(host(loss)))
    assert np.all(np.isfinite(host(gm))) and np.all(np.isfinite(host(gs)))


def test_mixture_density_network_fits_two_modes():
    rng = np.random.default_rng(0)
    y = dev(np.concatenate([rng.normal(-2.0, 0.3, 200), rng.normal(1.5, 0.5, 200)]))

    def nll(p):
        gmm = D.MixtureSameFamily(D.Categorical(logits=p["logits"]),
                                  D.Normal(p["loc"], fnp.exp(p["log_scale"])))
        return -fnp.mean(gmm.log_prob(y))

    p = {"logits": dev(np.zeros(2)), "loc": dev(np.array([-0.5, 0.5])),
         "log_scale": dev(np.zeros(2))}
    step = funcgrad.jit(funcgrad.grad(nll))
    for _ in range(400):
        g = step(p)
        p = {k: p[k] - 0.1 * g[k] for k in p}
    np.testing.assert_allclose(sorted(host(p["loc"])), [-2.0, 1.5], atol=0.1)
    np.testing.assert_allclose(sorted(np.exp(host(p["log_scale"]))), [0.3, 0.5], atol=0.08)
