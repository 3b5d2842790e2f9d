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
