"""PyTorch tutorial programs ported to funcgrad_nn, replayed against PyTorch's own runs.

Each test is the funcgrad_nn port of one program of ``fixtures/make_program_fixtures.py``
(the Quickstart, "Learning PyTorch with Examples", transfer learning, DCGAN, seq2seq with
attention, a Transformer language model), written as a user would port it: the same
modules, losses, optimizers and schedulers, ``loss.backward()`` replaced by
``nn.value_and_grad`` and ``optimizer.step()`` by ``optimizer.step(grads)``. The port starts
from PyTorch's initial state dict and must reproduce PyTorch's losses, the other recorded
values and the final state dict (float32; a few steps, so agreement is to float32 rounding).
"""

import pathlib

import numpy as np
import safetensors.numpy

import funcgrad
import funcgrad.numpy as fnp
import funcgrad_nn as nn
from tests.funcgrad_nn.programs.fixtures.program_data import data
from tests.helpers import DEVICE, dev, host

HERE = pathlib.Path(__file__).parent / "fixtures"


def reference(name):
    arrays = safetensors.numpy.load_file(str(HERE / f"{name}.safetensors"))
    init = {k[5:]: v for k, v in arrays.items() if k.startswith("init.")}
    final = {k[6:]: v for k, v in arrays.items() if k.startswith("final.")}
    return init, final, arrays


def check_state(model, final, atol=2e-5):
    state = model.state_dict()
    assert sorted(state) == sorted(final)
    for k, v in final.items():
        np.testing.assert_allclose(np.asarray(host(state[k]), np.float32), v, rtol=1e-4, atol=atol,
                                   err_msg=k)


def close(values, expected, rtol=1e-4, atol=1e-5):
    np.testing.assert_allclose(np.asarray(host(values), np.float32), expected, rtol=rtol,
                               atol=atol)


def test_quickstart():
    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(
                nn.Linear(28 * 28, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 10))

        def forward(self, x):
            return self.linear_relu_stack(self.flatten(x))

    init, final, ref = reference("quickstart")
    x, y = dev(data("quickstart"))
    loader = nn.data.DataLoader(nn.data.TensorDataset(x, y), batch_size=16)
    model = NeuralNetwork()
    assert str(model.load_state_dict(init)) == "<All keys matched successfully>"
    model.to(DEVICE)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = nn.optim.SGD(model.parameters(), lr=1e-1)
    train_step = nn.jit(nn.value_and_grad(lambda m, xb, yb: loss_fn(m(xb), yb)))
    losses, test = [], []
    for _ in range(2):
        model.train()
        for xb, yb in loader:
            loss, grads = train_step(model, xb, yb)
            optimizer.step(grads)
            optimizer.zero_grad()
            losses.append(loss.item())
        model.eval()
        with nn.autograd.no_grad():
            pred = model(x)
            test += [loss_fn(pred, y).item(), (pred.argmax(1) == y).astype(np.float32).mean().item()]
    close(losses, ref["losses"])
    close(test, ref["test"])
    check_state(model, final)


def test_transfer_learning_freeze_after_building_the_optimizer():
    init, final, ref = reference("transfer")
    model = nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
        nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(4, 4))
    model.load_state_dict(init)
    model.to(DEVICE)
    optimizer = nn.optim.SGD(
        [{"params": model[:8].parameters(), "lr": 1e-3}, {"params": model[9].parameters()}],
        lr=1e-2, momentum=0.9, weight_decay=1e-4)
    scheduler = nn.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=[0.05, 0.5], total_steps=8)
    criterion = nn.CrossEntropyLoss()
    step = nn.jit(nn.value_and_grad(lambda m, xb, yb: criterion(m(xb), yb)))
    x, y = dev(data("transfer"))
    losses, norms, lrs, val = [], [], [], []
    for epoch in range(2):
        if epoch == 1:
            # PyTorch: `p.requires_grad = False` for the stem's parameters, which are in the
            # optimizer: they get no gradient and the optimizer skips them (no momentum, no
            # weight decay), while their BatchNorm statistics keep updating.
            model[:2].requires_grad_(False)
        model.train()
        accumulated = None
        for i in range(0, 16, 4):
            loss, grads = step(model, x[i:i + 4], y[i:i + 4])
            grads = funcgrad.tree_util.tree_map(lambda g: g / 2, grads)
            accumulated = grads if accumulated is None else funcgrad.tree_util.tree_map(
                lambda a, b: a + b, accumulated, grads)
            losses.append(loss.item())
            if i % 8 == 4:
                norms.append(float(nn.utils.clip_grad_norm_(accumulated, 1.0)))
                optimizer.step(accumulated)
                optimizer.zero_grad()
                accumulated = None
                scheduler.step()
                lrs.append(scheduler.get_last_lr())
        model.eval()
        with nn.autograd.no_grad():
            val.append(criterion(model(x), y).item())
    close(losses, ref["losses"])
    close(norms, ref["norms"])
    close(lrs, ref["lrs"])
    close(val, ref["val"])
    check_state(model, final)


def test_dcgan_two_optimizers_and_a_detached_fake():
    nz, ngf, ndf, nc = 8, 4, 4, 3
    init, final, ref = reference("dcgan")
    netG = nn.Sequential(
        nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2),
        nn.ReLU(True), nn.ConvTranspose2d(ngf * 2, nc, 4, 2, 1, bias=False), nn.Tanh())
    netD = nn.Sequential(
        nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2),
        nn.LeakyReLU(0.2, inplace=True), nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False), nn.Sigmoid())
    netG.load_state_dict({k[2:]: v for k, v in init.items() if k.startswith("G.")})
    netD.load_state_dict({k[2:]: v for k, v in init.items() if k.startswith("D.")})
    netG.to(DEVICE)
    netD.to(DEVICE)
    criterion = nn.BCELoss()
    optimizerD = nn.optim.Adam(netD.parameters(), lr=2e-3, betas=(0.5, 0.999))
    optimizerG = nn.optim.Adam(netG.parameters(), lr=2e-3, betas=(0.5, 0.999))

    def d_loss(D, real, fake):
        ones, zeros = fnp.ones(real.shape[0], np.float32), fnp.zeros(real.shape[0], np.float32)
        return (criterion(D(real).reshape(-1), ones)
                + criterion(D(funcgrad.stop_gradient(fake)).reshape(-1), zeros))

    def g_loss(D, fake):
        return criterion(D(fake).reshape(-1), fnp.ones(fake.shape[0], np.float32))

    losses = []
    reals, noises = dev(data("dcgan"))
    for real, noise in zip(reals, noises):
        # The generator runs once, as in PyTorch (its BatchNorm statistics update once): its
        # pullback gives G's gradients later, from errG's gradient with respect to the fake.
        fake, pullback = nn.vjp(lambda G, z: G(z), netG, noise)
        errD, gradsD = nn.value_and_grad(d_loss)(netD, real, fake)
        optimizerD.step(gradsD)
        errG, d_fake = nn.value_and_grad(g_loss, argnums=1)(netD, fake)
        gradsG = pullback(d_fake)  # fake.backward(d_fake)
        optimizerG.step(gradsG)
        losses.append([float(errD), float(errG)])
    close(losses, ref["losses"])
    check_state(netD, {k[2:]: v for k, v in final.items() if k.startswith("D.")})
    check_state(netG, {k[2:]: v for k, v in final.items() if k.startswith("G.")})
