"""A configuration sweep against PyTorch without PyTorch: layers built from the same
constructor text as ``torch.nn`` (padding modes with 'same', transposed convolutions' output
padding, pooling options, norms' running statistics, recurrent layers, attention masks,
transformer layers, embeddings, ``CrossMapLRN2d``) and ``F`` calls (losses in every reduction
with class weights, ``ignore_index``, ``label_smoothing``, ``pos_weight``; interpolation
modes; padding modes; ``scaled_dot_product_attention``; ``conv_tbc``; ``grouped_mm``;
``F.grad``'s convolution gradients) against fixtures made by ``fixtures/make_sweep_fixtures.py`` (torch, float64):
outputs, parameter and input gradients, buffers after a train step and eval outputs."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import funcgrad
import funcgrad_nn as nn
from funcgrad_nn.module import Module, Parameter
from tests.helpers import DEVICE, dev, host

HERE = pathlib.Path(__file__).parent / "fixtures" / "sweep"
INDEX = json.loads((HERE / "cases.json").read_text())
DATA = np.load(HERE / "sweep.npz")
RTOL = 1e-10


def _unpack(name: str, layout: list) -> dict[str, np.ndarray]:
    """A case's arrays from its flat float64 vector (see ``make_sweep_fixtures.pack``)."""
    flat, out, at = DATA[name], {}, 0
    for key, shape, dtype in layout:
        n = int(np.prod(shape, dtype=np.int64))
        out[key] = flat[at:at + n].reshape(shape).astype(dtype)
        at += n
    assert at == flat.size, name
    return out


def _namespace() -> dict:
    """funcgrad_nn's names as the constructor text sees them (``KW`` passes the trailing
    inputs as keyword arguments, the same wrapper the generator gives torch.nn)."""
    ns = dict(vars(nn))
    ns["utils"], ns["F"] = nn.utils, nn.F

    class KW(Module):
        def __init__(self, m, *names, **static):
            super().__init__()
            self.m, self.names, self.static = m, names, static

        def forward(self, *args):
            k = len(args) - len(self.names)
            return self.m(*args[:k], **dict(zip(self.names, args[k:])), **self.static)

    ns["KW"] = KW
    return ns


class _Holder(Module):
    def __init__(self, module: Module, inputs: dict[int, np.ndarray]) -> None:
        super().__init__()
        self.m = module
        for i, x in inputs.items():
            setattr(self, f"x{i}", Parameter(x))


def _outputs(out):
    if isinstance(out, tuple):
        return [a for o in out for a in _outputs(o)]
    return [] if out is None else [out]


def _close(actual, desired, what, rtol=RTOL):
    actual = np.asarray(host(actual))
    assert actual.shape == desired.shape, f"{what}: shape {actual.shape} != {desired.shape}"
    if desired.dtype.kind in "iub":
        np.testing.assert_array_equal(actual, desired, err_msg=what)
        return
    assert actual.dtype == desired.dtype, f"{what}: dtype {actual.dtype} != {desired.dtype}"
    finite = np.abs(desired[np.isfinite(desired)])  # a mean over no target is NaN in both
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    np.testing.assert_allclose(actual, desired, rtol=rtol, atol=rtol * scale, err_msg=what)


@pytest.mark.parametrize("case", INDEX["modules"], ids=[c["name"] for c in INDEX["modules"]])
def test_module_matches_pytorch(case):
    check_module(case, _unpack(case["name"], case["layout"]))


@pytest.mark.filterwarnings("ignore:Implicit dimension choice:UserWarning")  # (on purpose)
@pytest.mark.parametrize("name", sorted(INDEX["functional"]))
def test_function_matches_pytorch(name):
    case = INDEX["functional"][name]
    check_function(name, case, _unpack(name, case["layout"]))


def check_module(case: dict, rec: dict) -> None:
    """funcgrad_nn's module built from ``case["ctor"]`` against PyTorch's record ``rec``
    (also called by ``make_sweep_fixtures.py --live`` with fresh records)."""
    old = nn.get_default_dtype()
    nn.set_default_dtype(np.float64)
    try:
        module = eval(case["ctor"], _namespace())  # noqa: S307 (the fixture's own text)
    finally:
        nn.set_default_dtype(old)
    module.load_state_dict({k[3:]: v for k, v in rec.items() if k.startswith("sd/")})
    module.to(DEVICE)
    inputs = dev([rec[f"in/{i}"] for i in range(sum(k.startswith("in/") for k in rec))])
    diff = {i: inputs[i] for i in range(len(inputs)) if f"gin/{i}" in rec}
    fwd = {k: tuple(v) if isinstance(v, list) else v for k, v in case["fwd"].items()}
    holder, ct = _Holder(module, diff), dev(rec["ct"])

    def loss_fn(h):
        args = [getattr(h, f"x{i}") if i in diff else x for i, x in enumerate(inputs)]
        outs = _outputs(h.m(*args, **fwd))
        return (outs[0] if case["loss_module"] else (outs[0] * ct).sum()), outs

    module.train()
    (loss, outs), grads = nn.value_and_grad(loss_fn, has_aux=True)(holder)
    name = case["name"]
    assert len(outs) == sum(k.startswith("train/") for k in rec), f"{name}: output count"
    for j, o in enumerate(outs):
        _close(o, rec[f"train/{j}"], f"{name}: train output {j}")
    _close(loss, rec["loss"], f"{name}: loss")
    got = dict(zip([n for n, _ in holder.named_parameters()], nn.tree_leaves(grads)))
    for key, ref in rec.items():
        if key.startswith("grad/"):
            _close(got[f"m.{key[5:]}"], ref, f"{name}: gradient of {key[5:]}")
        elif key.startswith("gin/"):
            _close(got[f"x{key[4:]}"], ref, f"{name}: gradient of input {key[4:]}")
    if case["grad"]:
        assert sum(k.startswith("grad/") for k in rec) == len(list(module.parameters()))
    sd = module.state_dict()
    for key, ref in rec.items():
        if key.startswith("buf/"):
            _close(sd[key[4:]], ref, f"{name}: buffer {key[4:]} after the train step")
    module.eval()
    for j, o in enumerate(_outputs(module(*inputs, **fwd))):
        _close(o, rec.get(f"eval/{j}", rec[f"train/{j}"]), f"{name}: eval output {j}")


def check_function(name: str, case: dict, rec: dict) -> None:
    """funcgrad_nn's call ``case["call"]`` against PyTorch's record ``rec``."""
    args = [dev(rec[f"a{i}"]) for i in range(case["nargs"])]
    diff = case["diff"]

    def call(*d):
        full = list(args)
        for i, v in zip(diff, d):
            full[i] = v
        return eval(case["call"], {"F": nn.F},  # noqa: S307 (the fixture's own text)
                    {f"a{i}": a for i, a in enumerate(full)})

    rtol = RTOL if case["dtype"] == "float64" else 2e-5
    if not diff:
        _close(call(), rec["y"], f"{name} output", rtol)
        return
    out, pullback = funcgrad.vjp(call, *[args[i] for i in diff])
    _close(out, rec["y"], f"{name} output", rtol)
    for i, g in zip(diff, pullback(dev(rec["ct"]))):
        _close(g, rec[f"g{i}"], f"{name} gradient of argument {i}", rtol)


def test_fixtures_are_small_and_cover_the_options():
    assert sum(p.stat().st_size for p in HERE.iterdir()) < 700_000
    text = " ".join(c["ctor"] for c in INDEX["modules"]) + " ".join(
        c["call"] for c in INDEX["functional"].values())
    for option in ("padding_mode='circular'", "padding='same'", "output_padding=2",
                   "divisor_override", "count_include_pad=True", "ceil_mode=True",
                   "momentum=None", "proj_size", "bidirectional=True", "'key_padding_mask'",
                   "is_causal=True", "average_attn_weights=False", "norm_first=True",
                   "label_smoothing", "ignore_index", "pos_weight", "antialias=True",
                   "recompute_scale_factor=True", "enable_gqa=True", "CrossMapLRN2d",
                   "F.conv_tbc", "F.grad.conv3d_weight", "reduction='none'", "F.grouped_mm"):
        assert option in text, option
