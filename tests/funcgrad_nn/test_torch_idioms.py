"""PyTorch tensor idioms in a ported ``forward`` (``x.permute``, ``x.view``, ``x.size()``,
``dim=``, ...): the error NumPy (or funcgrad's traced values) raise gets a note with the
funcgrad spelling, eagerly and under ``nn.jit``; other errors are left alone."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad_nn as nn
from funcgrad_nn._torch_idioms import TENSOR_METHODS
from tests.helpers import DEVICE, dev, host


class Apply(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.fn(self.lin(x))


CASES = {
    "permute": (lambda x: x.permute(0, 2, 1), "x.transpose(0, 2, 1)"),
    "unsqueeze": (lambda x: x.unsqueeze(1), "fnp.expand_dims(x, d)"),
    "masked_fill": (lambda x: x.masked_fill(x > 0, 0.0), "fnp.where(mask, value, x)"),
    "to": (lambda x: x.to("cuda"), "funcgrad.device_put(x, device)"),
    "size": (lambda x: x.size(-1), "x.shape[d]"),
    "view": (lambda x: x.view(2, -1), "x.reshape(*shape)"),
    "view_flat": (lambda x: x.view(-1), "x.reshape(*shape)"),
    "transpose": (lambda x: x.transpose(1, 2), "fnp.swapaxes(x, d0, d1)"),
    "dim_keyword": (lambda x: x.sum(dim=1), "axis= and keepdims="),
    "keepdim_keyword": (lambda x: x.mean(1, keepdim=True), "axis= and keepdims="),
    "flatten": (lambda x: x.flatten(1), "x.reshape(*x.shape[:start_dim], -1)"),
    "repeat": (lambda x: x.repeat(1, 2, 1), "fnp.tile(x, sizes)"),
    "squeeze": (lambda x: x.squeeze(1), "x.squeeze(d) if x.shape[d] == 1 else x"),
    "numpy_function": (lambda x: x.roll(1, 2), "fnp.roll(x, ...)"),
    "in_place": (lambda x: x.clamp_(0, 1), "fnp.clip(x, lo, hi), assigned"),
    "topk": (lambda x: x.topk(2), "funcgrad.lax.top_k(x, k)"),
}


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_note_names_the_funcgrad_spelling(case, jit):
    fn, fix = CASES[case]
    m = Apply(fn).to(DEVICE)
    x = dev(np.ones((2, 3, 4), np.float32))
    with pytest.raises(Exception) as info:  # NumPy's own error type, unchanged
        nn.jit(lambda m, x: m(x))(m, x) if jit else m(x)
    notes = getattr(info.value, "__notes__", [])
    if not hasattr(info.value, "add_note"):  # Python 3.10: no notes
        return
    assert len(notes) == 1 and fix in notes[0], notes  # once, though two modules saw it


def test_other_errors_get_no_note():
    m = Apply(lambda x: x.no_such_method()).to(DEVICE)
    with pytest.raises(AttributeError) as info:
        m(dev(np.ones((2, 4), np.float32)))
    assert not getattr(info.value, "__notes__", [])


def test_every_method_note_is_a_spelling():
    assert all(isinstance(v, str) and v for v in TENSOR_METHODS.values())


@pytest.mark.parametrize("grouped", [False, True])
def test_optimizer_over_a_requires_grad_filter_names_the_freezing_api(grouped):
    model = nn.Linear(2, 2)
    params = filter(lambda p: p.requires_grad, model.parameters())
    with pytest.raises(AttributeError) as info:
        nn.optim.SGD([{"params": params}] if grouped else params, lr=0.1)
    if hasattr(info.value, "add_note"):
        assert "requires_grad_(False)" in info.value.__notes__[0]


def test_freezing_after_building_the_optimizer_does_not_train_frozen_weights():
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1)).to(DEVICE)
    opt = nn.optim.AdamW(model.parameters(), lr=0.1, weight_decay=0.5)
    before = np.array(host(model[0].weight))
    model[0].requires_grad_(False)
    grads = nn.grad(lambda m: m(dev(np.ones((3, 2), np.float32))).sum())(model)
    assert grads[0].weight is None
    opt.step(grads)  # no update, and no weight decay, for the frozen layer (PyTorch's)
    np.testing.assert_array_equal(host(model[0].weight), before)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_step_function_idioms_are_noted_too(jit):
    model = nn.Linear(3, 4).to(DEVICE)
    x, y = dev(np.ones((2, 3), np.float32)), dev(np.array([0, 1]))

    def loss_fn(m, x, y):
        logits = m(x)
        return nn.F.cross_entropy(logits, y), (logits.argmax(dim=1) == y).mean()

    step = nn.value_and_grad(loss_fn, has_aux=True)
    with pytest.raises(TypeError, match="dim") as info:
        (nn.jit(step) if jit else step)(model, x, y)
    if hasattr(info.value, "add_note"):
        assert "axis=" in info.value.__notes__[0]
