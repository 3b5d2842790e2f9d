"""PyTorch parity without PyTorch: every layer of the convolution family, the normalisations,
activations, utilities and the pre-existing layers and losses against fixtures made by
``fixtures/make_conv_fixtures.py`` (torch 2.x, CPU): outputs in train and eval mode, the loss,
parameter and input gradients and the buffers after a train step, in float64 (1e-10
relative) and float32 (1e-5). PyTorch's state dict goes in through ``load_state_dict``, so
parameter names and layouts are tested too."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import funcgrad_nn as nn
from funcgrad_nn.module import Module, Parameter
from tests.helpers import DEVICE, dev, host

HERE = pathlib.Path(__file__).parent / "fixtures" / "conv"
INDEX = json.loads((HERE / "cases.json").read_text())["cases"]
RTOL = {"float64": 1e-10, "float32": 1e-5}


def _namespace() -> dict:
    ns = dict(vars(nn))
    ns["utils"] = nn.utils
    return ns


class _Holder(Module):
    """The module and the differentiable inputs as one pytree, so one ``value_and_grad``
    gives the parameter and the input gradients."""

    def __init__(self, module: Module, inputs: dict[int, np.ndarray]) -> None:
        super().__init__()
        self.m = module
        for i, x in inputs.items():
            setattr(self, f"x{i}", Parameter(x))


def _close(actual, desired, dtype, what):
    actual = np.asarray(host(actual))
    desired = np.asarray(desired)
    assert actual.shape == desired.shape, f"{what}: shape {actual.shape} != {desired.shape}"
    if desired.dtype.kind in "iub":
        np.testing.assert_array_equal(actual, desired, err_msg=what)
        return
    assert actual.dtype == np.dtype(dtype), f"{what}: dtype {actual.dtype} != {dtype}"
    scale = max(1.0, float(np.max(np.abs(desired)))) if desired.size else 1.0
    np.testing.assert_allclose(actual, desired, rtol=RTOL[dtype], atol=RTOL[dtype] * scale,
                               err_msg=what)


def _outputs(out):
    return [o for o in (out if isinstance(out, tuple) else (out,)) if o is not None]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", INDEX, ids=[c["name"] for c in INDEX])
def test_matches_pytorch(case, dtype):
    data = np.load(HERE / f"{case['name']}.npz")
    rec = {k[len(dtype) + 1:]: data[k] for k in data.files if k.startswith(dtype + "/")}
    old = nn.get_default_dtype()
    nn.set_default_dtype(np.dtype(dtype).type)
    try:
        module = eval(case["ctor"], _namespace())  # noqa: S307 (the fixture's own text)
    finally:
        nn.set_default_dtype(old)
    state = {k[3:]: v for k, v in rec.items() if k.startswith("sd/")}
    module.load_state_dict(state)
    module.to(DEVICE)
    inputs = dev([rec[f"in/{i}"] for i in range(sum(k.startswith("in/") for k in rec))])
    diff = {i: inputs[i] for i in range(len(inputs)) if f"gin/{i}" in rec}
    fwd = {k: tuple(v) if isinstance(v, list) else v for k, v in case["fwd"].items()}
    holder = _Holder(module, diff)
    ct = dev(rec["ct"])

    def loss_fn(h):
        args = [getattr(h, f"x{i}") if i in diff else x for i, x in enumerate(inputs)]
        outs = _outputs(h.m(*args, **fwd))
        loss = outs[0] if case["loss_module"] else (outs[0] * ct).sum()
        return loss, outs

    module.train()
    (loss, outs), grads = nn.value_and_grad(loss_fn, has_aux=True)(holder)
    name = f"{case['name']} [{dtype}]"
    for j, o in enumerate(outs):
        _close(o, rec[f"train/{j}"], dtype, f"{name}: train output {j}")
    _close(loss, rec["loss"], dtype, f"{name}: loss")
    got = dict(zip([n for n, _ in holder.named_parameters()], nn.tree_leaves(grads)))
    for key, ref in rec.items():
        if key.startswith("grad/"):
            _close(got[f"m.{key[5:]}"], ref, dtype, f"{name}: gradient of {key[5:]}")
        elif key.startswith("gin/"):
            _close(got[f"x{key[4:]}"], ref, dtype, f"{name}: gradient of input {key[4:]}")
    n_param_grads = sum(k.startswith("grad/") for k in rec)
    assert n_param_grads == len(list(module.parameters())), f"{name}: parameter count"
    sd = module.state_dict()
    for key, ref in rec.items():
        if key.startswith("buf/"):
            _close(sd[key[4:]], ref, dtype if ref.dtype.kind == "f" else ref.dtype,
                   f"{name}: buffer {key[4:]} after the train step")
    module.eval()
    for j, o in enumerate(_outputs(module(*inputs, **fwd))):
        ref = rec.get(f"eval/{j}", rec[f"train/{j}"])
        _close(o, ref, dtype, f"{name}: eval output {j}")


def test_fixtures_are_small_and_cover_the_layers():
    total = sum(p.stat().st_size for p in HERE.iterdir())
    assert total < 900_000, total
    ctors = " ".join(c["ctor"] for c in INDEX)
    for layer in ("Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
                  "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "LPPool1d", "LPPool2d", "LPPool3d", "MaxUnpool1d", "MaxUnpool2d",
                  "Fold", "Unfold", "Upsample", "PixelShuffle", "PixelUnshuffle", "ZeroPad2d",
                  "ReflectionPad2d", "ReplicationPad2d", "ConstantPad1d", "BatchNorm3d",
                  "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "RMSNorm",
                  "LocalResponseNorm", "PReLU", "SELU", "CELU", "GLU", "Mish", "Hardswish",
                  "Hardsigmoid", "Hardtanh", "Softsign", "Softmin", "Softshrink",
                  "Hardshrink", "Tanhshrink", "Threshold", "LogSigmoid", "Softmax2d",
                  "EmbeddingBag", "weight_norm", "spectral_norm", "MultiheadAttention",
                  "BatchNorm1d", "BatchNorm2d", "LayerNorm", "GroupNorm", "Embedding("):
        assert layer in ctors, layer
