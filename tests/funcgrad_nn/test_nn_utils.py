"""nn.utils: gradient clipping (values from torch 2.13, hard-coded), parameter/vector
conversion, parametrizations beyond the fixtures (gradients reach the raw arrays, errors)."""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
import funcgrad_nn as nn
from funcgrad_nn.utils.parametrizations import is_parametrized, spectral_norm, weight_norm
from tests.helpers import DEVICE, dev, host, is_device_array

G0 = [[1.0, -2.0], [3.0, 0.5]]
G1 = [4.0, -1.0, 2.0]
# torch.nn.utils.clip_grad_norm_(params, 2.5, norm_type) on these gradients (float64).
TORCH = {
    2.0: (5.937171043518958, 0.4210758896112856),
    1.0: (13.5, 0.1851851714677651),
    math.inf: (4.0, 0.624999843750039),
    3.0: (4.7786814988210065, 0.5231567488772896),
}


API = json.loads((pathlib.Path(__file__).parent / "fixtures" / "optim" / "api.json").read_text())


@pytest.mark.parametrize("norm_type", sorted(API["total_norms"]))
def test_total_norm_of_every_order_matches_torch(norm_type):
    # PyTorch takes the same norm of the per-array norms: order 0 counts the arrays with a
    # non-zero entry, -inf is the smallest array's smallest magnitude.
    grads = dev([np.array(g) for g in API["clip_grads"]])
    total = nn.utils.get_total_norm(grads, float(norm_type))
    assert float(total) == pytest.approx(API["total_norms"][norm_type], rel=1e-12, abs=0)
    before = [host(g).copy() for g in grads]
    returned = nn.utils.clip_grad_norm_(grads, 0.5, norm_type=float(norm_type))
    assert float(returned) == float(total)
    coef = min(1.0, 0.5 / (API["total_norms"][norm_type] + 1e-6))
    for g, b in zip(grads, before):
        np.testing.assert_allclose(host(g), b * coef, rtol=1e-12)
    again = [b.copy() for b in dev(before)]
    nn.utils.clip_grads_with_norm_(again, 0.5, total)
    for g, a in zip(grads, again):
        np.testing.assert_allclose(host(a), host(g), rtol=1e-12)


@pytest.mark.parametrize("norm_type", list(TORCH))
def test_clip_grad_norm_matches_torch(norm_type):
    grads = dev({"a": np.array(G0), "b": np.array(G1)})
    total = nn.utils.clip_grad_norm_(grads, 2.5, norm_type=norm_type)
    ref_total, ref_first = TORCH[norm_type]
    np.testing.assert_allclose(float(host(total)), ref_total, rtol=1e-12)
    np.testing.assert_allclose(host(grads["a"])[0, 0], ref_first, rtol=1e-12)
    np.testing.assert_allclose(host(grads["b"]), np.array(G1) * ref_first, rtol=1e-12)


def test_clip_grad_norm_below_max_is_unchanged_and_modules_work():
    model = nn.Linear(3, 2).to(DEVICE)
    grads = nn.grad(lambda m: m(dev(np.ones((4, 3), np.float32))).sum())(model)
    before = [host(g).copy() for g in nn.tree_leaves(grads)]
    total = nn.utils.clip_grad_norm_(grads, 1e6)
    assert total.dtype == np.float32
    for a, b in zip(nn.tree_leaves(grads), before):
        np.testing.assert_array_equal(host(a), b)


def test_clip_errors_and_pure_form_under_jit():
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_([np.array([np.inf])], 1.0, error_if_nonfinite=True)
    with pytest.raises(TypeError, match="clip_grads_by_norm"):
        funcgrad.jit(lambda g: nn.utils.clip_grad_norm_([g], 1.0))(np.ones(3))
    out, total = funcgrad.jit(lambda g: nn.utils.clip_grads_by_norm([g], 1.0))(
        np.array([3.0, 4.0]))
    np.testing.assert_allclose(out[0], [0.6, 0.8], rtol=1e-6)
    assert float(total) == 5.0
    g = [np.array([-3.0, 0.5, 2.0])]
    assert nn.utils.clip_grad_value_(g, 1.0) is None
    assert g[0].tolist() == [-1.0, 0.5, 1.0]


def test_parameters_vector_round_trip():
    model = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    vec = nn.utils.parameters_to_vector(model.parameters())
    assert vec.shape == (11,)
    nn.utils.vector_to_parameters(vec * 2, model.parameters())
    np.testing.assert_allclose(nn.utils.parameters_to_vector(model.parameters()), vec * 2)
    with pytest.raises(ValueError, match="11"):
        nn.utils.vector_to_parameters(np.zeros(5, np.float32), model.parameters())


def test_weight_norm_gradients_reach_g_and_v():
    lin = weight_norm(nn.Linear(3, 2))
    assert is_parametrized(lin, "weight") and not is_parametrized(nn.Linear(1, 1))
    w = lin.weight
    np.testing.assert_allclose(np.linalg.norm(w, axis=1, keepdims=True),
                               lin.parametrizations.weight.original0, rtol=1e-6)
    grads = nn.grad(lambda m: (m(np.ones((2, 3), np.float32)) ** 2).sum())(lin)
    names = [n for n, _ in lin.named_parameters()]
    assert names == ["bias", "parametrizations.weight.original0",
                     "parametrizations.weight.original1"]
    assert all(g is not None for g in nn.tree_leaves(grads))
    with pytest.raises(ValueError, match="already parametrized"):
        weight_norm(lin)
    with pytest.raises(ValueError, match="no parameter 'kernel'"):
        weight_norm(nn.Linear(2, 2), name="kernel")


@pytest.mark.parametrize("dim,g_shape", [(-1, ()), (None, ()), (-2, (1, 1, 2, 1)),
                                         (0, (3, 1, 1, 1))])
def test_weight_norm_dim_minus_one_is_the_whole_array_as_pytorch(dim, g_shape):
    # torch 2.13: parametrizations.weight_norm(Conv2d(2, 3, 2), dim) gives original0 of these
    # shapes (its norm_except_dim reads -1 as "no dim", other negative dims as axes).
    conv = weight_norm(nn.Conv2d(2, 3, 2), dim=dim)
    g = host(conv.parametrizations.weight.original0)
    v = host(conv.parametrizations.weight.original1)
    assert g.shape == g_shape
    if g_shape == ():
        np.testing.assert_allclose(g, np.linalg.norm(v), rtol=1e-6)
    np.testing.assert_allclose(host(conv.weight), v, rtol=1e-5, atol=1e-6)


def test_spectral_norm_normalises_and_updates_buffers_in_training_only():
    nn.manual_seed(0)  # the power iteration starts from random vectors of the global generator
    lin = spectral_norm(nn.Linear(5, 4), n_power_iterations=3)
    assert abs(np.linalg.svd(host(lin.weight), compute_uv=False)[0] - 1) < 1e-2
    u = lin.parametrizations.weight[0]._u.copy()
    lin.eval()
    _ = lin(np.ones((1, 5), np.float32))
    np.testing.assert_array_equal(lin.parametrizations.weight[0]._u, u)
    lin.train()
    step = nn.jit(nn.value_and_grad(lambda m, x: (m(x) ** 2).sum()))
    step(lin, np.ones((2, 5), np.float32))
    assert lin.parametrizations.weight[0]._u.shape == (4,)


@pytest.mark.filterwarnings("ignore:`torch.nn.utils.weight_norm` is deprecated")
@pytest.mark.parametrize("case", API["legacy_norms"],
                         ids=lambda c: f"{c['fn']}-{'-'.join(map(str, c['kwargs'].values()))}")
def test_hook_based_weight_and_spectral_norm_match_torch(case):
    # torch.nn.utils.weight_norm / spectral_norm (the older forms): PyTorch's state_dict
    # names load, outputs in train/eval mode, gradients, power-iteration buffers, remove_*.
    m = getattr(nn.utils, case["fn"])(nn.Linear(5, 3).double(), **case["kwargs"])
    assert list(m.state_dict()) == list(case["state"])
    m.load_state_dict({k: np.array(v) for k, v in case["state"].items()})
    m.to(DEVICE)
    x = dev(np.array(case["x"]))
    for mode, want in zip((True, True, False), case["outputs"]):
        m.train(mode)
        np.testing.assert_allclose(host(m(x)), want, rtol=1e-10, atol=1e-12)
    m.train()
    grads = nn.grad(lambda mod: (mod(x) ** 3).sum())(m)
    for name, want in case["grads"].items():
        np.testing.assert_allclose(host(getattr(grads, name)), want, rtol=1e-9, atol=1e-12)
    for k, want in case["state_after"].items():
        np.testing.assert_allclose(host(m.state_dict()[k]), want, rtol=1e-10, atol=1e-12)
    getattr(nn.utils, "remove_" + case["fn"])(m)
    assert type(m) is nn.Linear and list(m.state_dict()) == list(case["removed"])
    for k, want in case["removed"].items():
        np.testing.assert_allclose(host(m.state_dict()[k]), want, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match=f"{case['fn']} of 'weight' not found"):
        getattr(nn.utils, "remove_" + case["fn"])(m)


def test_hook_based_norms_refuse_a_second_application():
    with pytest.warns(FutureWarning, match="in favor of `torch.nn.utils.parametrizations"), \
            pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
        nn.utils.weight_norm(nn.utils.weight_norm(nn.Linear(2, 2)))
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        nn.utils.spectral_norm(nn.utils.spectral_norm(nn.Linear(2, 2)))
    with pytest.raises(ValueError, match="n_power_iterations to be positive"):
        nn.utils.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)
    with pytest.warns(FutureWarning, match="clip_grad_norm` is now deprecated"):
        nn.utils.clip_grad_norm(dev([np.ones(2)]), 1.0)


class _Symmetric(nn.Module):
    def forward(self, x):
        return fnp.triu(x) + fnp.swapaxes(fnp.triu(x, 1), -1, -2)


class _Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("k", np.array(2.0))

    def forward(self, x):
        return x * self.k


class _FirstRow(nn.Module):
    def forward(self, x):
        return x[:1]


class _Exp(nn.Module):
    def forward(self, x):
        return fnp.exp(x)

    def right_inverse(self, y):
        return fnp.log(y)


def test_register_parametrization_chains_as_torch():
    from funcgrad_nn.utils import parametrize

    lin = nn.Linear(3, 3).double()
    w = host(lin.weight).copy()
    parametrize.register_parametrization(lin, "weight", _Symmetric())
    parametrize.register_parametrization(lin, "weight", _Scale())
    # torch 2.13's names for the same two registrations:
    assert list(lin.state_dict()) == ["bias", "parametrizations.weight.original",
                                      "parametrizations.weight.1.k"]
    want = 2 * (np.triu(w) + np.triu(w, 1).T)
    np.testing.assert_allclose(host(lin.weight), want, rtol=1e-12)
    assert parametrize.type_before_parametrizations(lin) is nn.Linear
    grads = nn.grad(lambda m: m.weight.sum())(lin)
    np.testing.assert_allclose(host(grads.parametrizations.weight.original),
                               2 * (np.triu(np.ones((3, 3))) + np.triu(np.ones((3, 3)), 1)))
    parametrize.remove_parametrizations(lin, "weight")
    assert type(lin) is nn.Linear and list(lin.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(host(lin.weight), want, rtol=1e-12)
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        parametrize.remove_parametrizations(lin, "weight")


def test_parametrization_right_inverse_unsafe_and_leave_unparametrized():
    from funcgrad_nn.utils import parametrize

    lin = nn.Linear(3, 2).double()
    lin.weight = nn.Parameter(np.abs(host(lin.weight)) + 0.1)
    w = host(lin.weight).copy()
    parametrize.register_parametrization(lin, "weight", _Exp())
    np.testing.assert_allclose(host(lin.parametrizations.weight.original), np.log(w))
    np.testing.assert_allclose(host(lin.weight), w, rtol=1e-12)
    parametrize.remove_parametrizations(lin, "weight", leave_parametrized=False)
    np.testing.assert_allclose(host(lin.weight), np.log(w), rtol=1e-12)
    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(nn.Linear(3, 3), "weight", _FirstRow())
    with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
        parametrize.register_parametrization(nn.Linear(3, 2), "kernel", _Exp())
    wn = weight_norm(nn.Linear(3, 2))
    w = host(wn.weight).copy()
    parametrize.remove_parametrizations(wn, "weight")
    assert type(wn) is nn.Linear
    np.testing.assert_allclose(host(wn.weight), w, rtol=1e-6)


@pytest.mark.parametrize("kind", ["conv", "conv_transpose", "conv_no_bias", "linear",
                                  "linear_no_bias"])
def test_fuse_bn_eval_folds_the_batch_norm(kind):
    # torch 2.13 gives the same state-dict names and, for a bias-less layer, a fused bias
    # that takes no gradient (its requires_grad is False).
    rng = np.random.default_rng(0)
    bias = not kind.endswith("no_bias")
    if kind.startswith("conv"):
        cls = nn.ConvTranspose2d if kind == "conv_transpose" else nn.Conv2d
        layer, bn = cls(2, 3, 3, bias=bias).double(), nn.BatchNorm2d(3).double()
        x = rng.standard_normal((2, 2, 5, 5))
    else:
        layer, bn = nn.Linear(4, 3, bias=bias).double(), nn.BatchNorm1d(3).double()
        x = rng.standard_normal((5, 4))
    bn.load_state_dict({"weight": rng.uniform(0.5, 2, 3), "bias": rng.standard_normal(3),
                        "running_mean": rng.standard_normal(3),
                        "running_var": rng.uniform(0.5, 2, 3),
                        "num_batches_tracked": np.array(3)})
    layer.to(DEVICE).eval()
    bn.to(DEVICE).eval()
    x = dev(x)
    if kind.startswith("conv"):
        fused = nn.utils.fuse_conv_bn_eval(layer, bn, transpose=kind == "conv_transpose")
    else:
        fused = nn.utils.fuse_linear_bn_eval(layer, bn)
    np.testing.assert_allclose(host(fused(x)), host(bn(layer(x))), rtol=1e-12, atol=1e-12)
    assert list(fused.state_dict()) == ["weight", "bias"]
    assert [n for n, _ in fused.named_parameters()] == (["weight", "bias"] if bias else ["weight"])
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        (nn.utils.fuse_conv_bn_eval if kind.startswith("conv") else nn.utils.fuse_linear_bn_eval)(
            layer.train(), bn)


def test_functional_call_as_torch_func():
    from funcgrad_nn.utils.stateless import functional_call

    x = dev(np.ones((1, 2), np.float32))
    lin = nn.Linear(2, 1).to(DEVICE)
    w0 = host(lin.weight).copy()
    p = dev({"weight": np.zeros((1, 2), np.float32), "bias": np.ones(1, np.float32)})
    np.testing.assert_allclose(host(functional_call(lin, p, (x,))), [[1.0]])
    np.testing.assert_allclose(host(functional_call(lin, p, (), {"input": x})), [[1.0]])
    np.testing.assert_allclose(host(lin.weight), w0)  # restored
    g = funcgrad.grad(lambda q: functional_call(lin, q, x).sum())(p)
    np.testing.assert_allclose(host(g["weight"]), [[1.0, 1.0]])
    # torch 2.13: a tied array takes the value given for either name unless tie_weights=False
    seq = nn.Sequential(nn.Linear(2, 2, bias=False), nn.Linear(2, 2, bias=False)).to(DEVICE)
    seq[1].weight = seq[0].weight
    eye = dev({"0.weight": np.eye(2, dtype=np.float32)})
    np.testing.assert_allclose(host(functional_call(seq, eye, (x,))), [[1.0, 1.0]])
    with pytest.raises(RuntimeError, match="Unexpected key\\(s\\): 'nope'.\n\tMissing key\\(s\\): "
                                           "'bias'."):
        functional_call(lin, {"weight": p["weight"], "nope": p["bias"]}, (x,), strict=True)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        functional_call(lin, ({"weight": p["weight"]}, {"weight": p["weight"]}), (x,))
    # torch 2.13 sorts both lists: "Unexpected key(s): 'a', 'z'.\n\tMissing key(s): '1.bias',
    # '1.num_batches_tracked', '1.running_mean', '1.running_var', '1.weight'."
    bn = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)).to(DEVICE)
    given = {"z": p["bias"], "0.weight": eye["0.weight"], "a": p["bias"], "0.bias": p["bias"]}
    with pytest.raises(RuntimeError, match=(
            r"Unexpected key\(s\): 'a', 'z'.\n\tMissing key\(s\): '1.bias', "
            r"'1.num_batches_tracked', '1.running_mean', '1.running_var', '1.weight'.$")):
        functional_call(bn, given, (x,), strict=True)
    with pytest.raises(ValueError, match="which are tied"):
        functional_call(seq, {"0.weight": p["weight"], "1.weight": eye["0.weight"]}, (x,))


def test_functional_call_writes_buffer_updates_into_the_given_arrays_as_torch():
    from funcgrad_nn.utils.stateless import functional_call

    # torch 2.13, BatchNorm1d(2).double() in training mode, twice on x with the buffers given:
    # running_mean [0.38, 0.665], running_var [1.19, 1.665], num_batches_tracked 2; the
    # module's own buffers stay at their initial values
    bn = nn.BatchNorm1d(2).double().to(DEVICE)
    x = dev(np.array([[1.0, 2.0], [3.0, 5.0]]))
    rm, rv, nbt = dev(np.zeros(2)), dev(np.ones(2)), dev(np.array(0))
    for _ in range(2):
        out = functional_call(bn, {"running_mean": rm, "running_var": rv,
                                   "num_batches_tracked": nbt}, (x,))
    np.testing.assert_allclose(host(rm), [0.38, 0.665], rtol=1e-12)
    np.testing.assert_allclose(host(rv), [1.19, 1.665], rtol=1e-12)
    assert int(host(nbt)) == 2
    np.testing.assert_allclose(host(out), [[-0.9999950000374997, -0.999997777785185],
                                           [0.9999950000374997, 0.9999977777851853]])
    assert host(bn.running_mean).tolist() == [0.0, 0.0] and int(host(bn.num_batches_tracked)) == 0
    # not given: the module's own buffers are updated, as a plain call
    functional_call(bn, {"weight": dev(np.ones(2))}, (x,))
    np.testing.assert_allclose(host(bn.running_mean), [0.2, 0.35], rtol=1e-12)
    # a traced buffer cannot take the update: an error (PyTorch's transforms refuse it too)
    with pytest.raises((RuntimeError, funcgrad.UnexpectedTracerError), match="running_mean"):
        funcgrad.jit(lambda b: functional_call(bn, {"running_mean": b}, (x,)))(rm)
    ro = dev(np.zeros(2))
    if isinstance(ro, np.ndarray):
        ro.flags.writeable = False
        with pytest.raises(RuntimeError, match="read-only"):
            functional_call(bn, {"running_mean": ro}, (x,))
    bn.eval()  # no update, nothing to write: fine under jit
    funcgrad.jit(lambda b: functional_call(bn, {"running_mean": b}, (x,)))(rm)


def test_functional_call_resolves_names_as_torch():
    from funcgrad_nn.utils.stateless import functional_call

    x = dev(np.ones((1, 2), np.float32))
    one = dev(np.zeros(1, np.float32))
    lin = nn.Linear(2, 1).to(DEVICE)
    seq = nn.Sequential(nn.Linear(2, 1)).to(DEVICE)
    # torch 2.13's errors for a path through a parameter, a missing submodule, a module leaf
    for mod, key, err, msg in [
            (lin, "bias.x", TypeError, "submodule `bias`: .* is not an instance of"),
            (lin, "weight.x", TypeError, "submodule `weight`"),
            (lin, "0.weight", AttributeError, "Linear has no attribute `0`"),
            (seq, "1.weight", AttributeError, "Sequential has no attribute `1`"),
            (seq, "0.weight.t", TypeError, "submodule `0.weight`"),
            (seq, "0", TypeError, "attribute `0`: Linear.* is not an instance of")]:
        with pytest.raises(err, match=msg):
            functional_call(mod, {key: one}, (x,))
    with pytest.raises(TypeError, match="is not an instance of an array"):
        functional_call(lin, {"weight": [[1.0, 2.0]]}, (x,))

    class Scaled(nn.Module):
        def forward(self, x):
            return x * getattr(self, "foo", 1.0)

    m = Scaled()
    # an unknown leaf name is a plain attribute for the call (torch: 3.0, then no `foo`)
    assert host(functional_call(m, {"foo": dev(np.array(3.0))}, (x,))).tolist() == [[3.0, 3.0]]
    assert not hasattr(m, "foo")
    m.foo = 2.0
    assert host(functional_call(m, {"foo": dev(np.array(3.0))}, (x,))).tolist() == [[3.0, 3.0]]
    assert m.foo == 2.0
    # a parameter registered as None (bias=False) takes a given value, as torch
    nobias = nn.Linear(2, 1, bias=False).to(DEVICE)
    nobias.weight = nn.Parameter(dev(np.zeros((1, 2), np.float32)))
    assert host(functional_call(nobias, {"bias": one + 5}, (x,))).tolist() == [[5.0]]
    assert nobias.bias is None


def test_functional_call_assigns_a_parametrized_attribute_through_right_inverse_as_torch():
    # torch 2.13: functional_call(m, {"weight": W}) on a parametrized weight assigns W (the
    # parametrizations' right_inverse gives the originals) for the call; the originals are
    # back afterwards. A computed attribute without a setter (pruning) is refused here
    # (torch silently uses the pruned weight instead of the given one).
    from funcgrad_nn.utils.stateless import functional_call

    class Sym(nn.Module):
        def forward(self, X):
            return fnp.triu(X) + fnp.triu(X, 1).T

        def right_inverse(self, A):
            return fnp.triu(A)

    lin = nn.Linear(2, 2).double().to(DEVICE)
    nn.utils.parametrize.register_parametrization(lin, "weight", Sym())
    before = host(lin.parametrizations.weight.original).copy()
    W, x = dev(np.array([[1.0, 2.0], [2.0, 5.0]])), dev(np.array([[1.0, 1.0]]))
    out = functional_call(lin, {"weight": W, "bias": dev(np.zeros(2))}, (x,))
    np.testing.assert_allclose(host(out), [[3.0, 7.0]])
    np.testing.assert_array_equal(host(lin.parametrizations.weight.original), before)
    wn = nn.utils.parametrizations.weight_norm(nn.Linear(2, 1).double().to(DEVICE))
    out = functional_call(wn, {"weight": dev(np.array([[1.0, 3.0]])), "bias": dev(np.zeros(1))},
                          (x,))
    np.testing.assert_allclose(host(out), [[4.0]])
    pruned = nn.Linear(2, 1).to(DEVICE)
    nn.utils.prune.l1_unstructured(pruned, "weight", 0.5)
    with pytest.raises(AttributeError, match="computed from other arrays.*weight_orig"):
        functional_call(pruned, {"weight": dev(np.ones((1, 2), np.float32))},
                        (dev(np.ones((1, 2), np.float32)),))


# torch.nn.utils.parametrizations.orthogonal on a float64 Linear(2, 2) with this weight:
# the initial weight is the QR orthogonalisation (diag(R) > 0); assigning Q stores it.
ORTH_W = [[1.0, 2.0], [3.0, 4.0]]
ORTH_TORCH = [[0.316227766016838, 0.9486832980505138], [0.9486832980505138, -0.316227766016838]]
# ... with use_trivialization=False, orthogonal_map="matrix_exp": exp(tril(W) - tril(W).T)
ORTH_EXP_TORCH = [[-0.9899924966004459, -0.14112000805986738],
                  [0.14112000805986738, -0.9899924966004459]]
# ... and with orthogonal_map="householder": the original holds geqrf's reflectors
ORTH_HOUSEHOLDER_ORIGINAL = [[-1.0, -4.427188724235731], [0.7207592200561264, 1.0]]


def _linear64(w):
    lin = nn.Linear(len(w[0]), len(w), bias=False).double()
    lin.weight = nn.Parameter(dev(np.array(w)))
    return lin


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_starts_at_the_qr_orthogonalisation_as_torch(orthogonal_map):
    from funcgrad_nn.utils.parametrizations import orthogonal

    lin = orthogonal(_linear64(ORTH_W), orthogonal_map=orthogonal_map)
    np.testing.assert_allclose(host(lin.weight), ORTH_TORCH, rtol=1e-12, atol=1e-14)
    assert sorted(lin.state_dict()) == ["parametrizations.weight.0.base",
                                        "parametrizations.weight.original"]
    # the original is -I (the maps give I there), as torch's right_inverse returns
    np.testing.assert_array_equal(host(lin.parametrizations.weight.original), -np.eye(2))
    q = np.linalg.qr(np.random.default_rng(0).standard_normal((2, 2)))[0]
    lin.weight = dev(q)  # torch's setter: right_inverse through the parametrization
    np.testing.assert_allclose(host(lin.weight), q, rtol=1e-12, atol=1e-14)


def test_orthogonal_without_trivialization_is_the_map_of_the_weight_as_torch():
    from funcgrad_nn.utils.parametrizations import orthogonal

    lin = orthogonal(_linear64(ORTH_W), use_trivialization=False)
    np.testing.assert_allclose(host(lin.weight), ORTH_EXP_TORCH, rtol=1e-12)
    assert list(lin.state_dict()) == ["parametrizations.weight.original"]
    with pytest.raises(NotImplementedError, match="use_trivialization=False"):
        lin.weight = dev(np.eye(2))
    # householder without trivialization: the reflectors of the QR, so the same start
    lin = orthogonal(_linear64(ORTH_W), "weight", "householder", use_trivialization=False)
    np.testing.assert_allclose(host(lin.weight), ORTH_TORCH, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(host(lin.parametrizations.weight.original),
                               ORTH_HOUSEHOLDER_ORIGINAL, rtol=1e-12)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 3)])
@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_is_orthogonal_and_its_gradient_matches_under_jit(shape, orthogonal_map):
    from funcgrad_nn.utils.parametrizations import orthogonal

    class Holder(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(dev(np.random.default_rng(1).standard_normal(shape)))

    m = orthogonal(Holder(), orthogonal_map=orthogonal_map)
    q = host(m.weight)
    gram = q.swapaxes(-1, -2) @ q if shape[-2] >= shape[-1] else q @ q.swapaxes(-1, -2)
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(gram.shape[-1]), gram.shape),
                               atol=1e-12)
    c = dev(np.random.default_rng(2).standard_normal(shape))

    def loss(mod):
        return (mod.weight * c).sum()

    eager = nn.grad(loss)(m).parametrizations.weight.original
    jitted = nn.jit(nn.grad(loss))(m).parametrizations.weight.original
    np.testing.assert_allclose(host(jitted), host(eager), rtol=1e-10, atol=1e-12)


def test_orthogonal_errors_as_torch():
    from funcgrad_nn.utils.parametrizations import orthogonal

    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices"):
        orthogonal(nn.Linear(2, 2), "bias")
    with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
        orthogonal(nn.Linear(2, 2), orthogonal_map="qr")
    with pytest.raises(ValueError, match="no parameter or buffer"):
        orthogonal(nn.Linear(2, 2), "kernel")


def test_householder_product_is_lapacks_orgqr():
    from funcgrad.test_util import check_grads
    from funcgrad_nn.utils._orthogonal import householder_product

    rng = np.random.default_rng(3)
    # the product of reflectors from numpy's QR (LAPACK geqrf) is its Q
    x = rng.standard_normal((5, 3))
    raw, tau = np.linalg.qr(x, mode="raw")
    q = host(householder_product(dev(raw.T.copy()), dev(tau)))
    np.testing.assert_allclose(q, np.linalg.qr(x)[0], rtol=1e-12, atol=1e-12)
    check_grads(lambda a, t: householder_product(a, t),
                (dev(rng.standard_normal((4, 3))), dev(rng.uniform(1, 2, 3))), order=1)


def test_assigning_a_parametrized_weight_uses_right_inverse_as_torch():
    lin = weight_norm(_linear64([[3.0, 4.0], [0.0, 2.0]]))
    lin.weight = dev(np.array([[6.0, 8.0], [1.0, 0.0]]))
    np.testing.assert_allclose(host(lin.parametrizations.weight.original0), [[10.0], [1.0]])
    np.testing.assert_allclose(host(lin.weight), [[6.0, 8.0], [1.0, 0.0]], rtol=1e-12)
    from funcgrad_nn.utils import parametrize

    lin = parametrize.register_parametrization(_linear64([[1.0, 2.0], [3.0, 4.0]]), "weight",
                                               _Symmetric())
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        lin.weight = dev(np.eye(2))


def test_cached_computes_each_parametrized_value_once_as_torch():
    from funcgrad_nn.utils import parametrize

    _ = nn.manual_seed(0)
    sn = spectral_norm(nn.Linear(4, 3).double())
    twin = spectral_norm(nn.Linear(4, 3).double())
    twin.load_state_dict(sn.state_dict())
    with parametrize.cached():
        first = sn.weight
        with parametrize.cached():  # nested: the same cache
            assert sn.weight is first
        assert sn.weight is first  # one power iteration for the block, as torch
        sn.weight = first * 2.0  # assigning drops the cached value
        assert sn.weight is not first
    once = twin.weight
    np.testing.assert_allclose(host(first), host(once), rtol=1e-12)
    assert sn.weight is not sn.weight  # outside the block: recomputed on every access


def test_clipping_takes_iterators_of_arrays_as_torch():
    # torch's clip functions take any iterable of tensors, e.g. a generator
    grads = [dev(np.array([3.0, 4.0])), dev(np.array([0.0]))]
    assert float(nn.utils.get_total_norm(g for g in grads)) == 5.0
    assert float(nn.utils.clip_grad_norm_(iter(grads), 1.0)) == 5.0
    np.testing.assert_allclose(host(grads[0]), [0.6, 0.8], rtol=1e-6)
    nn.utils.clip_grad_value_((g for g in grads), 0.7)
    np.testing.assert_allclose(host(grads[0]), [0.6, 0.7], rtol=1e-6)
    clipped, total = nn.utils.clip_grads_by_norm(iter(grads), 0.5)
    assert len(clipped) == 2 and float(total) == pytest.approx(np.hypot(0.6, 0.7))


def test_transfer_parametrizations_and_params_shares_the_originals_as_torch():
    from funcgrad_nn.utils import parametrize

    src = weight_norm(_linear64([[3.0, 4.0], [0.0, 2.0]]))
    dst = parametrize.transfer_parametrizations_and_params(src, _linear64([[1.0, 0.0],
                                                                           [0.0, 1.0]]))
    # torch 2.13 gives the same keys and shares the original parameters
    assert list(dst.state_dict()) == ["parametrizations.weight.original0",
                                      "parametrizations.weight.original1"]
    assert dst.parametrizations.weight.original1 is src.parametrizations.weight.original1
    assert dst.parametrizations.weight[0] is src.parametrizations.weight[0]
    np.testing.assert_allclose(host(dst.weight), [[3.0, 4.0], [0.0, 2.0]], rtol=1e-12)
    plain = nn.Linear(2, 2).double()
    assert parametrize.transfer_parametrizations_and_params(plain, dst) is dst


def test_invert_permutation_and_skip_init_as_torch():
    from funcgrad_nn.utils.rnn import invert_permutation

    inv = invert_permutation(np.array([2, 0, 3, 1]))
    assert inv.dtype == np.int64 and inv.tolist() == [1, 3, 0, 2]
    assert invert_permutation(None) is None
    assert nn.utils.skip_init(nn.Linear, 3, 2, device="cpu").weight.shape == (2, 3)
    with pytest.raises(RuntimeError, match="Expected a Module"):
        nn.utils.skip_init(int)
    with pytest.raises(RuntimeError, match="support a 'device' arg"):
        nn.utils.skip_init(nn.Sequential)


def test_norm_parametrizations_check_their_arguments_first_as_torch():
    lin = nn.Linear(2, 2)
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
        spectral_norm(lin, n_power_iterations=0)
    with pytest.raises(IndexError, match="out of range"):
        spectral_norm(lin, dim=5)
    with pytest.raises(IndexError, match="out of range"):
        weight_norm(lin, dim=5)
    assert list(lin.state_dict()) == ["weight", "bias"]  # untouched by the failed calls


def test_spectral_norm_of_a_weight_on_the_device_keeps_its_vectors_there():
    lin = nn.Linear(3, 2).double().to(DEVICE)
    lin.weight = nn.Parameter(dev(np.arange(6.0).reshape(2, 3)))
    sn = spectral_norm(lin)
    x = dev(np.ones((1, 3)))
    out = sn(x)  # a power iteration on the device
    assert out.shape == (1, 2)
    s = np.linalg.svd(host(sn.weight), compute_uv=False)[0]
    assert s == pytest.approx(1.0, rel=1e-6)


@pytest.mark.filterwarnings("ignore:`torch.nn.utils.weight_norm` is deprecated")
@pytest.mark.parametrize("fn", ["weight_norm", "spectral_norm"])
def test_hook_based_norms_reject_an_out_of_range_dim_as_torch(fn):
    lin = nn.Linear(2, 2)
    with pytest.raises(IndexError, match="out of range"):
        getattr(nn.utils, fn)(lin, dim=5)
    assert list(lin.state_dict()) == ["weight", "bias"]


def test_complex_gradients_clip_by_norm_and_refuse_value_clipping_as_torch():
    # torch 2.13: clip_grad_norm_ -> 5.196152422706632 and [0.5774+0.7698j, 0.1925-0.1925j];
    # clip_grad_value_ raises (clamp is not supported for complex types)
    grads = [dev(np.array([3 + 4j, 1 - 1j]))]
    assert float(nn.utils.clip_grad_norm_(grads, 1.0)) == pytest.approx(5.196152422706632)
    np.testing.assert_allclose(host(grads[0]), [0.57735016 + 0.76980021j,
                                                0.19245005 - 0.19245005j], rtol=1e-6)
    before = host(grads[0]).copy()
    with pytest.raises(TypeError, match="complex gradients cannot be clipped by value"):
        nn.utils.clip_grad_value_(grads, 0.1)
    np.testing.assert_array_equal(host(grads[0]), before)


@pytest.mark.parametrize("seqs,kwargs,match", [
    ([], {}, "empty list of sequences"),
    ([np.ones((2, 3)), np.ones((2, 4))], {}, "same trailing shape"),
    ([np.ones(2)], {"padding_side": "middle"}, "padding_side must be 'left' or 'right'"),
])
def test_pad_sequence_errors_are_torchs_runtime_error_too(seqs, kwargs, match):
    # torch 2.13 raises RuntimeError for each of these; ours is a ValueError as well
    for kind in (RuntimeError, ValueError):
        with pytest.raises(kind, match=match):
            nn.utils.rnn.pad_sequence([dev(s) for s in seqs], **kwargs)


def test_pack_padded_sequence_takes_whole_float_lengths_as_torch():
    # torch 2.13 casts float lengths to int64: batch_sizes [2, 2, 1, 1]
    x = dev(np.arange(30.0).reshape(5, 2, 3))
    for lengths in ([4.0, 2.0], np.array([4.0, 2.0], np.float32)):
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths)
        assert packed.batch_sizes.tolist() == [2, 2, 1, 1]
    with pytest.raises(ValueError, match=r"integers.*\[4.5, 2.0\]"):
        nn.utils.rnn.pack_padded_sequence(x, [4.5, 2.0])


@pytest.mark.filterwarnings("ignore:`torch.nn.utils.weight_norm` is deprecated")
@pytest.mark.parametrize("kind", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("method", ["weight_norm", "legacy_weight_norm", "spectral_norm",
                                    "prune"])
def test_recurrent_layers_use_parametrized_and_pruned_weights(kind, method):
    # torch 2.13 users write weight_norm(nn.LSTM(...), "weight_hh_l0") or prune an RNN
    # weight: the layer must read the computed weight (it read _parameters and got None)
    apply = {
        "weight_norm": lambda m, n: nn.utils.parametrizations.weight_norm(m, n),
        "legacy_weight_norm": lambda m, n: nn.utils.weight_norm(m, n),
        "spectral_norm": lambda m, n: nn.utils.parametrizations.spectral_norm(m, n),
        "prune": lambda m, n: nn.utils.prune.l1_unstructured(m, n, 0.5),
    }[method]
    _ = nn.manual_seed(0)
    rnn = getattr(nn, kind)(3, 4, num_layers=2, bidirectional=True).double().to(DEVICE)
    plain = getattr(nn, kind)(3, 4, num_layers=2, bidirectional=True).double().to(DEVICE)
    for name in ("weight_hh_l1_reverse", "weight_ih_l0"):
        apply(rnn, name)
    rnn.eval()
    plain.load_state_dict({n: getattr(rnn, n) for n in plain.state_dict()})
    x = dev(np.random.default_rng(0).normal(size=(5, 2, 3)))
    np.testing.assert_allclose(host(rnn(x)[0]), host(plain(x)[0]), rtol=1e-12, atol=1e-12)
    g = nn.grad(lambda m: (m(x)[0] ** 2).sum())(rnn)
    assert all(leaf is not None for leaf in nn.tree_leaves(g))


def test_packed_sequence_has_torchs_namedtuple_fields():
    # torch 2.13: PackedSequence._fields == ('data', 'batch_sizes', 'sorted_indices',
    # 'unsorted_indices'); _asdict() gives them by name
    p = nn.utils.rnn.pack_sequence([dev(np.ones(2)), dev(np.ones(1))])
    assert nn.utils.rnn.PackedSequence._fields == ("data", "batch_sizes", "sorted_indices",
                                                   "unsorted_indices")
    d = p._asdict()
    assert list(d) == list(p._fields) and host(d["batch_sizes"]).tolist() == [2, 1]
    assert d["sorted_indices"] is None


def test_packed_sequence_has_torchs_casts_and_replace():
    # torch 2.13's PackedSequence: byte/char/short/int/long cast data (uint8, int8, int16,
    # int32, int64), is_pinned() is False on CPU, and the namedtuple's _replace keeps the rest
    p = nn.utils.rnn.pack_sequence([dev(np.ones((1, 2))), dev(np.ones((3, 2)))],
                                   enforce_sorted=False)
    casts = {"byte": np.uint8, "char": np.int8, "short": np.int16, "int": np.int32,
             "long": np.int64}
    for name, dtype in casts.items():
        q = getattr(p, name)()
        assert q.data.dtype == dtype and q.batch_sizes.tolist() == [2, 1, 1]
    assert p.is_pinned() is False
    q = p._replace(data=p.data * 2)
    np.testing.assert_array_equal(host(q.data), 2 * host(p.data))
    assert q.sorted_indices.tolist() == [1, 0] and q.unsorted_indices.tolist() == [1, 0]
    with pytest.raises(ValueError, match="unexpected field names"):
        p._replace(lengths=[1, 3])


# torch 2.13 (float64): spectral_norm(weight_norm(ConvTranspose1d(2, 3, 2))) with this state,
# one training-mode call on X; spectral_norm chains after weight_norm (dim 1 for a transposed
# convolution) with its vectors under parametrizations.weight.1
SN_OF_WN_STATE = {
    "bias": [0.1, -0.2, 0.3],
    "parametrizations.weight.original0": [[[1.5]], [[0.5]]],
    "parametrizations.weight.original1": np.sin(np.arange(12.0)).reshape(2, 3, 2).tolist(),
    "parametrizations.weight.1._u": [0.7035348681471989, 0.4301834023266256,
                                     0.5656685687430336],
    "parametrizations.weight.1._v": [0.5150148741400243, 0.6409327424031535,
                                     -0.28376249065399756, -0.49340019054308026]}
SN_OF_WN_X = [[[1.0, -1.0, 2.0], [0.5, 0.0, -0.5]]]
SN_OF_WN_Y = [[[0.07075144142896451, 0.68916275481302, -0.39114238101743537,
                1.0720100639523924],
               [0.4659005484852358, -0.6319244003872335, 0.7338371461565993,
                -0.06859388973765457],
               [-0.2249762548432403, 0.07032519088431699, 0.013915632570874858,
                -0.7813785381296725]]]
SN_OF_WN_U = [0.46092132978365635, 0.3987597353071445, -0.7928065345645444]


def test_spectral_norm_chains_after_another_parametrization_as_torch():
    conv = nn.ConvTranspose1d(2, 3, 2).double().to(DEVICE)
    m = spectral_norm(weight_norm(conv))
    assert type(m).__name__ == "ParametrizedConvTranspose1d"
    assert [(k, tuple(v.shape)) for k, v in m.state_dict().items()] == [
        (k, np.shape(v)) for k, v in SN_OF_WN_STATE.items()]
    m.load_state_dict(dev({k: np.array(v) for k, v in SN_OF_WN_STATE.items()}))
    y = m(dev(np.array(SN_OF_WN_X)))
    np.testing.assert_allclose(host(y), SN_OF_WN_Y, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(host(m.parametrizations.weight[1]._u), SN_OF_WN_U,
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("clip", [lambda it: nn.utils.clip_grad_norm_(it, 0.01),
                                  lambda it: nn.utils.clip_grad_value_(it, 0.01),
                                  lambda it: nn.utils.clip_grads_with_norm_(it, 0.01, 1.0)])
def test_in_place_clips_refuse_model_parameters(clip):
    # PyTorch's clip_grad_norm_(model.parameters(), ...) clips each .grad; funcgrad keeps no
    # .grad, and clipping the iterator's arrays would scale the weights themselves.
    model = nn.Linear(4, 4)
    before = np.array(model.weight)
    with pytest.raises(TypeError, match=r"model.parameters\(\).*pass the gradients"):
        clip(model.parameters())
    np.testing.assert_array_equal(model.weight, before)


@pytest.mark.parametrize("clip", [lambda it: nn.utils.clip_grad_norm_(it, 0.01),
                                  lambda it: nn.utils.clip_grad_norm_(it, 0.01, foreach=True),
                                  lambda it: nn.utils.clip_grad_value_(it, 0.01),
                                  lambda it: nn.utils.clip_grad_value_(it, 0.01, foreach=False),
                                  lambda it: nn.utils.clip_grads_with_norm_(it, 0.01, 1.0)])
@pytest.mark.parametrize("as_list", [list, tuple, lambda ps: {"w": ps[0]}])
def test_in_place_clips_refuse_a_list_of_parameters(clip, as_list):
    # torch's clip_grad_norm_(list(model.parameters()), ...) clips the .grad of those
    # parameters; here the list holds the weights themselves, which must stay untouched.
    model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 1))
    before = [np.array(p) for p in model.parameters()]
    with pytest.raises(TypeError, match=r"parameter array of a module.*pass the gradients"):
        clip(as_list(list(model.parameters())))
    for p, b in zip(model.parameters(), before):
        np.testing.assert_array_equal(host(p), b)


def test_clips_take_pytorchs_keyword_names():
    # torch 2.13's names: clip_grad_norm_(parameters=, max_norm=, norm_type=),
    # clip_grad_value_(parameters=, clip_value=), get_total_norm(tensors=)
    g = [dev(np.array([3.0, 4.0]))]
    assert float(nn.utils.get_total_norm(tensors=g, norm_type=2.0)) == 5.0
    assert float(nn.utils.clip_grad_norm_(parameters=g, max_norm=1.0, norm_type=2.0)) == 5.0
    nn.utils.clip_grad_value_(parameters=g, clip_value=0.5)
    nn.utils.clip_grads_with_norm_(parameters=g, max_norm=1.0, total_norm=1.0)
    np.testing.assert_allclose(host(g[0]), [0.5, 0.5], rtol=1e-5)


def test_in_place_clips_know_the_parameters_of_copied_and_cast_modules():
    import copy
    import pickle

    model = nn.Linear(3, 2)
    for other in (copy.deepcopy(model), pickle.loads(pickle.dumps(model)),
                  nn.Linear(3, 2).double()):
        with pytest.raises(TypeError, match="parameter array of a module"):
            nn.utils.clip_grad_norm_([other.weight], 1.0)
    fresh = nn.Linear(3, 2)
    fresh.load_state_dict({"weight": np.ones((3, 2), np.float32).T.copy(),
                           "bias": np.ones(2, np.float32)}, assign=True)
    with pytest.raises(TypeError, match="parameter array of a module"):
        nn.utils.clip_grad_value_([fresh.bias], 1.0)


def test_in_place_clips_still_clip_gradients_of_a_model():
    model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 1)).to(DEVICE)
    x = dev(np.ones((3, 4), np.float32))
    grads = nn.grad(lambda m: m(x).sum())(model)
    leaves = nn.tree_leaves(grads)
    total = float(nn.utils.get_total_norm(leaves))
    assert float(nn.utils.clip_grad_norm_(leaves, 0.5)) == pytest.approx(total, rel=1e-6)
    assert float(nn.utils.get_total_norm(nn.tree_leaves(grads))) == pytest.approx(0.5, rel=1e-4)


def test_vector_to_parameters_gives_the_vectors_dtype_as_torch():
    # torch 2.13: vector_to_parameters(float64 vec, float32 params) -> float64 parameters
    # holding the slices (param.data = vec[k:k+n].view_as(param))
    model = nn.Sequential(nn.Linear(2, 2, bias=False), nn.Linear(2, 1))
    model[1].weight = model[0].weight[:1]  # (a separate array)
    tied = nn.Linear(2, 2, bias=False)
    tied.weight = model[0].weight
    net = nn.Sequential(model, tied)
    old = list(net.parameters())
    vec = dev(np.arange(7.0))
    nn.utils.vector_to_parameters(vec, net.parameters())
    assert [p.dtype for p in net.parameters()] == [np.float64] * 3
    np.testing.assert_array_equal(host(net[0][0].weight), [[0.0, 1.0], [2.0, 3.0]])
    np.testing.assert_array_equal(host(net[0][1].weight), [[4.0, 5.0]])
    np.testing.assert_array_equal(host(net[0][1].bias), [6.0])
    assert net[1].weight is net[0][0].weight  # the tie is kept (one Parameter in torch)
    if isinstance(old[0], np.ndarray):
        assert not old[0].flags.writeable  # orphaned, as after Module.to()
    # same dtype: written in place, so an optimizer holding the arrays follows
    same = nn.Linear(2, 1).to(DEVICE)
    w = same.weight
    nn.utils.vector_to_parameters(dev(np.arange(3.0, dtype=np.float32)), same.parameters())
    assert same.weight is w and host(w).tolist() == [[0.0, 1.0]]
    # a plain list cannot change dtype: refused, not silently kept
    with pytest.raises(TypeError, match="pass model.parameters"):
        nn.utils.vector_to_parameters(vec[:3], list(nn.Linear(2, 1).parameters()))
    with pytest.raises(TypeError, match="expected an array"):
        nn.utils.vector_to_parameters([1.0, 2.0, 3.0], nn.Linear(2, 1).parameters())


@pytest.mark.parametrize("groups", [1, 2, 3])
def test_fuse_conv_bn_eval_handles_grouped_transposed_convolutions(groups):
    # the weight of a grouped ConvTranspose is (in, out/groups, *k); torch 2.13's own
    # fuse_conv_bn_eval fails on it with a shape error, the fused layer here is bn(conv(x))
    rng = np.random.default_rng(0)
    conv = nn.ConvTranspose2d(6, 3 * groups, 3, groups=groups).double().to(DEVICE).eval()
    bn = nn.BatchNorm2d(3 * groups).double().to(DEVICE)
    for name in ("running_mean", "weight", "bias"):
        getattr(bn, name)[...] = dev(rng.normal(size=3 * groups))
    bn.running_var[...] = dev(rng.uniform(0.5, 2.0, size=3 * groups))
    bn.eval()
    x = dev(rng.normal(size=(2, 6, 4, 4)))
    fused = nn.utils.fuse_conv_bn_eval(conv, bn, transpose=True)
    np.testing.assert_allclose(host(fused(x)), host(bn(conv(x))), rtol=1e-12, atol=1e-12)


def test_is_parametrized_takes_torchs_tensor_name_keyword():
    # torch 2.13: parametrize.is_parametrized(module, tensor_name=None)
    lin = weight_norm(nn.Linear(2, 2))
    assert nn.utils.parametrize.is_parametrized(lin, tensor_name="weight")
    assert not nn.utils.parametrize.is_parametrized(lin, tensor_name="bias")


def test_clip_grad_norm_accepts_the_gradient_modules_parameters():
    # The port of torch's clip_grad_norm_(model.parameters(), 0.5) after loss.backward() is
    # clip_grad_norm_(grads.parameters(), 0.5) on the gradient module nn.grad returns (its
    # arrays are gradients, not weights); it was refused as model.parameters() is. Reference:
    # torch 2.13, float64, the weights below, loss = (m(x) ** 2).sum().
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1)).double().to(DEVICE)
    model.load_state_dict(dev({
        "0.weight": np.array([[1.0, -2.0], [0.5, 3.0]]), "0.bias": np.array([0.1, -0.3]),
        "1.weight": np.array([[2.0, -1.0]]), "1.bias": np.array([0.25])}))
    x = dev(np.array([[1.0, 2.0], [-1.0, 0.5]]))
    grads = nn.grad(lambda m: (m(x) ** 2).sum())(model)
    weights = [np.array(host(p)) for p in model.parameters()]
    total = nn.utils.clip_grad_norm_(grads.parameters(), 0.5)
    assert float(total) == pytest.approx(224.73545559168005, rel=1e-12)
    expected = {
        "0.weight": [[-0.06674514216621089, -0.22804590240122055],
                     [0.03337257108310544, 0.11402295120061028]],
        "0.bias": [-0.1423896366212499, 0.07119481831062495],
        "1.weight": [[0.18755384948705256, -0.3373966936501961]],
        "1.bias": [-0.07119481831062495]}
    for name, g in grads.named_parameters():
        np.testing.assert_allclose(host(g), expected[name], rtol=1e-12, err_msg=name)
    for p, w in zip(model.parameters(), weights):  # the weights are untouched
        np.testing.assert_array_equal(host(p), w)
    # the value clip takes it too
    nn.utils.clip_grad_value_(grads.parameters(), 0.1)
    np.testing.assert_allclose(host(grads[1].weight), [[0.1, -0.1]])


def test_convert_conv_weight_memory_format_keeps_the_module_as_pytorch():
    # torch.nn.utils.convert_conv2d_weight_memory_format(m, torch.channels_last) returns m with
    # the same weight values and shapes (only their memory layout changes there).
    m = nn.Sequential(nn.Conv2d(2, 3, 3), nn.ReLU())
    w = np.asarray(m[0].weight).copy()
    assert nn.utils.convert_conv2d_weight_memory_format(m, "channels_last") is m
    assert np.array_equal(np.asarray(m[0].weight), w) and m[0].weight.shape == (3, 2, 3, 3)
    c3 = nn.Conv3d(1, 2, 1)
    assert nn.utils.convert_conv3d_weight_memory_format(c3, "channels_last_3d") is c3
    with pytest.raises(TypeError, match="expected a Module"):
        nn.utils.convert_conv2d_weight_memory_format(np.ones(3), "channels_last")


def test_total_norm_of_no_gradients_is_a_zero_on_the_default_device():
    # torch 2.13: get_total_norm([]) is tensor(0.) (float32); here on the default device
    # (the strict pass: no host array handed back to mix with device gradients)
    for total in (nn.utils.get_total_norm([]), nn.utils.clip_grad_norm_([], 1.0)):
        assert is_device_array(total) and total.shape == () and total.dtype == np.float32
        assert float(funcgrad.device_get(total)) == 0.0
