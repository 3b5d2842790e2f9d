"""End to end: a Module trained with funcgrad_nn.optim, a scheduler and a DataLoader."""

from __future__ import annotations

import os

import numpy as np
from helpers import DEVICE, dev, host

import funcgrad_nn as nn


def _problem():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0)
    return dev(x), dev(y)


def _model():
    nn.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.BatchNorm1d(16), nn.Linear(16, 3))
    return model.to(DEVICE)


def _loss(m, xb, yb):
    return nn.F.cross_entropy(m(xb), yb)


def _train(model, opt, sched, loader, epochs):
    losses = []
    for _ in range(epochs):
        for xb, yb in loader:
            loss, grads = nn.value_and_grad(_loss)(model, xb, yb)
            opt.step(grads)
            losses.append(float(loss))
        sched.step()
    return losses


def test_adam_steplr_dataloader_training_reduces_the_loss_and_updates_buffers():
    x, y = _problem()
    model = _model()
    opt = nn.optim.Adam(model.parameters(), lr=1e-2)
    sched = nn.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)
    loader = nn.data.DataLoader(nn.data.TensorDataset(x, y), batch_size=16, shuffle=True,
                                generator=0)
    before = nn.F.cross_entropy(model(x), y)
    losses = _train(model, opt, sched, loader, 30)
    model.eval()
    after = nn.F.cross_entropy(model(x), y)
    assert float(after) < 0.5 * float(before)
    assert np.mean(losses[-4:]) < np.mean(losses[:4])
    assert sched.get_last_lr() == [1e-2 * 0.5 ** 3]
    assert np.any(host(model.state_dict()["2.running_mean"]) != 0)


def test_checkpoint_round_trip_resumes_identically(tmp_path):
    x, y = _problem()
    loader_args = dict(batch_size=16, shuffle=False)
    model = _model()
    opt = nn.optim.AdamW(model.parameters(), lr=1e-2)
    sched = nn.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=5)
    loader = nn.data.DataLoader(nn.data.TensorDataset(x, y), **loader_args)
    _train(model, opt, sched, loader, 2)
    path = os.fspath(tmp_path / "ckpt.npz")
    nn.save({"model": model.state_dict(), "opt": opt.state_dict(),
             "sched": sched.state_dict()}, path)
    cont = _train(model, opt, sched, loader, 2)

    ckpt = nn.load(path)
    model2 = _model()
    model2.load_state_dict(ckpt["model"])
    opt2 = nn.optim.AdamW(model2.parameters(), lr=1e-2)
    opt2.load_state_dict(ckpt["opt"])
    sched2 = nn.optim.lr_scheduler.CosineAnnealingLR(opt2, T_max=5)
    sched2.load_state_dict(ckpt["sched"])
    resumed = _train(model2, opt2, sched2, loader, 2)
    np.testing.assert_allclose(resumed, cont, rtol=1e-5)
