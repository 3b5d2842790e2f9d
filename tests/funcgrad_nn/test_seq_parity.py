"""Recurrent layers, Transformers and the sequence/margin losses against PyTorch fixtures.

``fixtures/make_seq_fixtures.py`` (run where torch is installed) wrote each case's inputs,
PyTorch state_dict, cotangents and PyTorch's outputs and gradients; here every case is
rebuilt in funcgrad_nn, the state_dict goes in through ``load_state_dict`` (PyTorch names and
layouts), and outputs, the loss and all parameter and input gradients must agree: 1e-10
relative in float64, 1e-5 in float32, in every mode recorded (train and eval).
"""

import functools
import json
import math
import pathlib

import numpy as np
import pytest
from helpers import dev

import funcgrad
import funcgrad_nn as nn
from funcgrad_nn import functional as F
from funcgrad_nn.utils.rnn import PackedSequence, pack_padded_sequence

HERE = pathlib.Path(__file__).parent / "fixtures" / "seq"
RTOL = {"f64": 1e-10, "f32": 1e-5}
DT = {"f64": np.float64, "f32": np.float32}


@functools.cache
def _fixtures():
    meta = json.loads((HERE / "cases.json").read_text())
    with np.load(HERE / "arrays.npz") as z:
        members = {k: z[k] for k in z.files}
    meta["index"] = json.loads(members.pop("index.json").tobytes().decode())
    return meta, members


def _arr(name):
    meta, members = _fixtures()
    member, off, shape, dtype = meta["index"][name]
    flat = members[member]
    return flat[off:off + math.prod(shape)].reshape(shape).astype(dtype)


def _has(name):
    return name in _fixtures()[0]["index"]


def _cases(kind):
    return [c for c in _fixtures()[0]["cases"] if c["kind"] == kind]


def _resolve(v, arrays, ndt):
    if isinstance(v, dict):
        if "a" in v:
            return arrays[v["a"]]
        if "m" in v:
            return _build(v["m"], arrays, ndt)
        if "tuple" in v:
            return tuple(_resolve(e, arrays, ndt) for e in v["tuple"])
        if "packed" in v:
            p = v["packed"]
            return pack_padded_sequence(_resolve(p["x"], arrays, ndt), p["lengths"],
                                        batch_first=p["batch_first"],
                                        enforce_sorted=p["enforce_sorted"])
        return {k: _resolve(e, arrays, ndt) for k, e in v.items()}
    if isinstance(v, list):
        return [_resolve(e, arrays, ndt) for e in v]
    return v


def _build(spec, arrays, ndt):
    args = [_resolve(a, arrays, ndt) for a in spec["args"]]
    kwargs = {k: _resolve(v, arrays, ndt) for k, v in spec["kwargs"].items()}
    if spec["cls"] not in ("TransformerEncoder", "TransformerDecoder"):
        kwargs["dtype"] = ndt
    return getattr(nn, spec["cls"])(*args, **kwargs)


def _flat(out):
    if isinstance(out, PackedSequence):
        return [out.data]
    if isinstance(out, (tuple, list)):
        return [leaf for o in out for leaf in _flat(o)]
    return [] if out is None else [out]


def _close(got, want, key, what, scale=None):
    """``got`` matches ``want`` to the dtype's relative tolerance, absolute ``rtol * scale``
    (``scale`` defaults to ``want``'s largest magnitude; a loss that is a sum of terms
    cancelling to near 0 passes the terms' size)."""
    got = np.asarray(funcgrad.to_numpy(got))
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if want.dtype.kind == "f":
        assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    rtol = RTOL[key]
    finite = np.isfinite(want)
    np.testing.assert_array_equal(np.isfinite(got), finite, err_msg=what)
    if scale is None:
        scale = np.abs(want[finite]).max() if finite.any() else 1.0
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=rtol * scale,
                               err_msg=what)


def _inputs(case, key):
    return {k: _arr(f"{case['name']}/{key}/in/{k}") for k in case["arrays"]}


def _loss_scale(base, cots):
    return sum(np.abs(_arr(f"{base}/out/{i}") * c).sum() for i, c in enumerate(cots))


def _cots(base):
    out, i = [], 0
    while _has(f"{base}/cot/{i}"):
        out.append(_arr(f"{base}/cot/{i}"))
        i += 1
    return out


class _Holder(nn.Module):
    """The module under test plus the differentiated inputs as parameters, so one
    module-aware value_and_grad gives both kinds of gradients."""

    def __init__(self, mod, inputs, names):
        super().__init__()
        self.m = mod
        for k in names:
            setattr(self, "in_" + k, nn.Parameter(inputs[k]))


def _module_loss(case, inputs, cots, ndt):
    def loss(h):
        arrays = dict(inputs)
        arrays.update({k: getattr(h, "in_" + k) for k in case["grad"]})
        call = [_resolve(a, arrays, ndt) for a in case["call"]]
        ckw = {k: _resolve(v, arrays, ndt) for k, v in case["call_kwargs"].items()}
        outs = _flat(h.m(*call, **ckw))
        total = sum(funcgrad.numpy.sum(o * c) for o, c in zip(outs, cots))
        return total, outs
    return loss


MODULE_CASES = _cases("module")
FUNCTION_CASES = _cases("function")
JIT_CASES = {"lstm_proj_2l_bidir", "gru_bidir_packed", "rnn_tanh", "enc_layer_post",
             "transformer_bf", "grucell"}


@pytest.mark.parametrize("key", ["f64", "f32"])
@pytest.mark.parametrize("case", MODULE_CASES, ids=[c["name"] for c in MODULE_CASES])
def test_module_matches_torch(case, key):
    ndt = DT[key]
    name = case["name"]
    base = f"{name}/{key}"
    inputs = _inputs(case, key)
    mod = _build(case, inputs, ndt)
    prefix = f"{base}/state/"
    state = {n[len(prefix):]: _arr(n) for n in _fixtures()[0]["index"] if n.startswith(prefix)}
    assert sorted(state) == sorted(mod.state_dict()), "PyTorch state_dict names differ"
    mod.load_state_dict(state)
    holder = _Holder(mod, inputs, case["grad"])
    cots = _cots(base)
    fn = nn.value_and_grad(_module_loss(case, inputs, cots, ndt), has_aux=True)
    for mode in case["modes"]:
        holder.train(mode == "train")
        (loss, outs), grads = fn(holder)
        assert len(outs) == len(cots)
        for i, o in enumerate(outs):
            _close(o, _arr(f"{base}/out/{i}"), key, f"{name} {mode} output {i}")
        _close(loss, _arr(f"{base}/loss"), key, f"{name} {mode} loss",
               _loss_scale(base, cots))
        g = dict(grads.named_parameters())
        for n, _ in mod.named_parameters():
            _close(g["m." + n], _arr(f"{base}/pgrad/{n}"), key, f"{name} {mode} d/d{n}")
        for k in case["grad"]:
            _close(g["in_" + k], _arr(f"{base}/igrad/{k}"), key, f"{name} {mode} d/d{k}")


@pytest.mark.parametrize("case", [c for c in MODULE_CASES if c["name"] in JIT_CASES],
                         ids=lambda c: c["name"])
def test_module_matches_torch_under_jit(case):
    key, ndt = "f64", np.float64
    base = f"{case['name']}/{key}"
    inputs = _inputs(case, key)
    mod = _build(case, inputs, ndt)
    prefix = f"{base}/state/"
    mod.load_state_dict({n[len(prefix):]: _arr(n) for n in _fixtures()[0]["index"]
                         if n.startswith(prefix)})
    holder = _Holder(mod, inputs, case["grad"])
    cots = _cots(base)
    step = nn.jit(nn.value_and_grad(_module_loss(case, inputs, cots, ndt), has_aux=True))
    for _ in range(2):  # the second call runs the cached compiled program
        (loss, outs), grads = step(holder)
        _close(loss, _arr(f"{base}/loss"), key, "loss", _loss_scale(base, cots))
        for i, o in enumerate(outs):
            _close(o, _arr(f"{base}/out/{i}"), key, f"output {i}")
        g = dict(grads.named_parameters())
        for n, _ in mod.named_parameters():
            _close(g["m." + n], _arr(f"{base}/pgrad/{n}"), key, f"d/d{n}")


def _function_inputs(case, key):
    inputs = dev(_inputs(case, key))  # the strict pass: functions see device inputs
    ndt = DT[key]

    def call_with(arrays, form="fn"):
        arrays = dict(arrays)
        for k, how in case["pre"].items():
            assert how == "log_softmax"
            arrays[k] = F.log_softmax(arrays[k], dim=-1)
        call = [_resolve(a, arrays, ndt) for a in case["call"]]
        if form == "fn":
            ckw = {k: _resolve(v, arrays, ndt) for k, v in case["call_kwargs"].items()}
            return getattr(F, case["fn"])(*call, **ckw)
        mkw = {k: _resolve(v, arrays, ndt) for k, v in case["module_kwargs"].items()}
        return getattr(nn, case["module"])(**mkw)(*call)
    return inputs, call_with


@pytest.mark.parametrize("key", ["f64", "f32"])
@pytest.mark.parametrize("case", FUNCTION_CASES, ids=[c["name"] for c in FUNCTION_CASES])
def test_loss_matches_torch(case, key):
    name = case["name"]
    base = f"{name}/{key}"
    inputs, call_with = _function_inputs(case, key)
    cots = _cots(base)
    wants = [_arr(f"{base}/out/{i}") for i in range(len(cots))]
    forms = ["fn", "module"] if case["module"] else ["fn"]
    for form in forms:
        outs = _flat(call_with(inputs, form))
        assert len(outs) == len(wants), f"{name} {form}: {len(outs)} outputs"
        for i, (o, want) in enumerate(zip(outs, wants)):
            _close(o, want, key, f"{name} {form} value {i}")
    if case["nograd"]:
        return

    dcots = [dev(c) for c in cots]

    def loss(diff):
        outs = _flat(call_with({**inputs, **diff}))
        return sum(funcgrad.numpy.sum(o * c) for o, c in zip(outs, dcots))

    value, grads = funcgrad.value_and_grad(loss)({k: inputs[k] for k in case["grad"]})
    _close(value, _arr(f"{base}/loss"), key, f"{name} loss", _loss_scale(base, cots))
    for k in case["grad"]:
        _close(grads[k], _arr(f"{base}/igrad/{k}"), key, f"{name} d/d{k}")


def test_fixtures_are_small_and_complete():
    size = sum(p.stat().st_size for p in HERE.iterdir())
    assert size < 0.8e6
    names = {c.get("cls") or c.get("fn") for c in _fixtures()[0]["cases"]}
    names |= {c["module"] for c in FUNCTION_CASES if c["module"]}
    for want in ("RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell", "Transformer",
                 "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
                 "TransformerDecoderLayer", "ctc_loss", "CTCLoss", "MarginRankingLoss",
                 "HingeEmbeddingLoss", "CosineEmbeddingLoss", "TripletMarginLoss",
                 "MultiMarginLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss",
                 "SoftMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss"):
        assert want in names, want
