"""funcgrad_nn.func (torch.func's names): values recorded from PyTorch 2.13, dict key order,
PyTorch's argument names and errors."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from helpers import DEVICE, assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp
import funcgrad_nn as nn
from funcgrad_nn import func

REF = dict(np.load(pathlib.Path(__file__).parent / "fixtures" / "func" / "torch_func.npz"))
X = np.random.default_rng(0).standard_normal((5, 3))
TARGET = np.array([0, 1, 1, 0, 1])


def assert_close(a, b):
    np.testing.assert_allclose(host(a), host(b), rtol=1e-10, atol=1e-12)


def _models():
    models = []
    for i in range(3):
        m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()
        m.load_state_dict({k: REF[f"model{i}.{k}"] for k in m.state_dict()})
        models.append(m)
    return models


def test_model_ensembling_recipe():
    models = _models()
    params, buffers = func.stack_module_state(models)
    assert list(params) == list(REF["stacked_names"]) and buffers == {}
    assert params["0.weight"].shape == (3, 4, 3)
    out = func.vmap(lambda p, b, x: func.functional_call(models[0], (p, b), (x,)),
                    in_dims=(0, 0, None))(params, buffers, X)
    assert_close(out, REF["ensemble"])


def test_per_sample_gradients_recipe_keeps_parameter_order():
    base = _models()[0]
    p0 = dict(base.named_parameters())

    def loss(p, sample, target):
        pred = func.functional_call(base, p, (sample[None],))
        return nn.F.cross_entropy(pred, target[None])

    per = func.vmap(func.grad(loss), in_dims=(None, 0, 0))(p0, X, TARGET)
    # PyTorch's order (that of named_parameters), not sorted keys: code zips these with
    # model.parameters()
    assert list(per) == list(REF["per_sample_names"]) == list(p0)
    for k, v in per.items():
        assert_close(v, REF[f"per_sample.{k}"])
    # under funcgrad.jit the result is rebuilt by jit, in funcgrad's sorted key order
    per_jit = funcgrad.jit(func.vmap(func.grad(loss), in_dims=(None, 0, 0)))(p0, X, TARGET)
    for k, v in per_jit.items():
        assert_close(v, REF[f"per_sample.{k}"])


def test_grad_and_value_order_and_aux():
    base = _models()[0]
    p0 = dict(base.named_parameters())

    def loss_aux(p, x):
        pred = func.functional_call(base, p, (x,))
        return (pred ** 2).mean(), {"pred": pred}

    g, (value, aux) = func.grad_and_value(loss_aux, has_aux=True)(p0, X)
    assert_close(value, REF["gv_value"])
    assert_close(aux["pred"], REF["gv_pred"])
    assert list(g) == list(p0)
    for k, v in g.items():
        assert_close(v, REF[f"gv_grad.{k}"])


def test_dict_order_of_outputs_vjp_jvp():
    x = dev(np.array([1.0, 2.0]))
    f = lambda d: {"z": d["b"] * d["a"], "a": d["a"] ** 2}
    d = {"b": x, "a": x * 3}
    out, vjp_fn = func.vjp(f, d)
    assert list(out) == ["z", "a"]
    (g,) = vjp_fn({"z": fnp.ones(2), "a": fnp.zeros(2)})
    assert list(g) == ["b", "a"]
    assert_close(g["b"], [3.0, 6.0])
    out, t = func.jvp(f, (d,), (d,))
    assert list(out) == list(t) == ["z", "a"]
    assert list(func.vmap(f)(d)) == ["z", "a"]
    assert list(func.grad(lambda d: f(d)["z"].sum())(d)) == ["b", "a"]


def test_torch_argument_names_and_errors():
    a = dev(np.arange(6.0).reshape(2, 3))
    out = func.vmap(lambda r, s: (r * s, r.sum()), in_dims=(1, None), out_dims=(1, 0),
                    chunk_size=2)(a, dev(np.float64(2.0)))
    assert_close(out[0], 2 * a)
    assert_close(out[1], a.sum(0))
    with pytest.raises(RuntimeError, match="randomness"):
        func.vmap(lambda r: r, randomness="sometimes")
    with pytest.raises(ValueError, match="chunk_size"):
        func.vmap(lambda r: r, chunk_size=0)
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        func.jvp(fnp.sin, a, a)
    with pytest.raises(RuntimeError, match="at least one model"):
        func.stack_module_state([])
    lin, bn = nn.Linear(2, 2), nn.Linear(2, 2)
    bn.eval()
    with pytest.raises(RuntimeError, match="training/eval mode"):
        func.stack_module_state([lin, bn])
    with pytest.raises(RuntimeError, match="different shapes"):
        func.stack_module_state([nn.Linear(2, 2), nn.Linear(3, 2)])


def test_jacobians_hessian_linearize():
    x = dev(np.array([0.3, -0.7]))
    assert_close(func.jacrev(fnp.sin, chunk_size=1)(x), np.diag(np.cos(host(x))))
    assert_close(func.jacfwd(fnp.sin)(x), np.diag(np.cos(host(x))))
    assert_close(func.hessian(lambda v: (v ** 3).sum())(x), np.diag(6 * host(x)))
    out, jvp_fn = func.linearize(fnp.sin, x)
    assert_close(jvp_fn(x), np.cos(host(x)) * host(x))
    f = lambda v: v + 1
    assert func.functionalize(f) is f


def test_stack_module_state_includes_frozen_parameters_and_buffers():
    bns = [nn.BatchNorm1d(2), nn.BatchNorm1d(2)]
    bns[0].requires_grad_(False)
    bns[1].requires_grad_(False)
    p, b = func.stack_module_state(bns)
    assert list(p) == ["weight", "bias"]
    assert list(b) == ["running_mean", "running_var", "num_batches_tracked"]
    assert b["running_var"].shape == (2, 2)


def test_vmap_keyword_arguments_are_not_mapped():
    # torch 2.13: vmap(lambda a, b=None: a * b)(x, b=y) maps x only: [[3, 4], [6, 8]]
    x, y = dev(np.array([1.0, 2.0])), dev(np.array([3.0, 4.0]))
    assert_close(func.vmap(lambda a, b=None: a * b)(x, b=y), [[3.0, 4.0], [6.0, 8.0]])


def test_jacobians_keep_pytorch_dict_order():
    # torch 2.13 values and key order (outputs' keys, then the argument's)
    x, y = dev(np.array([1.0, 2.0])), dev(np.array([3.0, 4.0]))
    d = {"b": y, "a": x}
    jf = func.jacfwd(lambda d: {"z": d["a"] * d["b"], "c": d["a"]})(d)
    assert list(jf) == ["z", "c"] and list(jf["z"]) == ["b", "a"]
    assert_close(jf["z"]["b"], [[1.0, 0.0], [0.0, 2.0]])
    assert_close(jf["c"]["a"], np.eye(2))
    jr, aux = func.jacrev(lambda d: (d["a"] * d["b"], {"q": d["a"], "p": d["b"]}),
                          has_aux=True)(d)
    assert list(jr) == ["b", "a"] and list(aux) == ["q", "p"]
    assert_close(jr["a"], [[3.0, 0.0], [0.0, 4.0]])
    h = func.hessian(lambda d: (d["a"] * d["b"] ** 2).sum())(d)
    assert list(h) == ["b", "a"] and list(h["b"]) == ["b", "a"]
    assert_close(h["b"]["b"], [[2.0, 0.0], [0.0, 4.0]])
    assert_close(h["a"]["b"], [[6.0, 0.0], [0.0, 8.0]])


def test_grad_errors_are_pytorch_kinds():
    x = dev(np.ones(2))
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor, "
                                           "got tensor with 1 dims"):
        func.grad(lambda a: a * 2.0)(x)
    with pytest.raises(RuntimeError, match="return a scalar Tensor"):
        func.grad_and_value(lambda a: a.sum(keepdims=True))(x)
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype"):
        func.grad(lambda a: (a * 2.0).sum())(dev(np.array([1, 2])))
    with pytest.raises(RuntimeError, match="should be a tuple"):
        func.grad(lambda a: a.sum(), has_aux=True)(x)
    assert float(func.grad(lambda a: a * 2.0)(3.0)) == 2.0


# PyTorch 2.13's errors for argnums (torch.func.grad/grad_and_value/jacrev/jacfwd/hessian).
_ARGNUM_ERRORS = [
    (2, "Got argnum=2, but only 2 positional inputs"),
    (-3, "Got argnum=-3, but only 2 positional inputs"),
    ((), "argnums must be non-empty"),
    (1.0, "argnums must be int or Tuple\\[int, ...\\], got: <class 'float'>"),
    ((0, 0), "argnums elements must be unique, got \\(0, 0\\)"),
    ((0, -2), "argnums elements must be unique"),
]


@pytest.mark.parametrize("transform", ["grad", "grad_and_value", "jacrev", "jacfwd", "hessian"])
@pytest.mark.parametrize("argnums, message", _ARGNUM_ERRORS)
def test_argnums_errors_are_pytorchs(transform, argnums, message):
    # (a malformed argnums raises when the transform is made, an out-of-range one when called)
    x = dev(np.ones(2))
    with pytest.raises(RuntimeError, match=message):
        getattr(func, transform)(lambda a, b: (a * b).sum(), argnums=argnums)(x, x)


def test_integer_argument_errors_follow_the_mode():
    # PyTorch: reverse mode raises RuntimeError, forward mode (jacfwd, and hessian, whose
    # outer Jacobian is forward mode) ValueError; an integer argument not differentiated is
    # fine.
    i, x = dev(np.arange(2)), dev(np.ones(2))
    f = lambda a, b: (a * b).sum()  # noqa: E731
    for name in ("grad", "grad_and_value", "jacrev"):
        with pytest.raises(RuntimeError, match="only Tensors of floating point dtype"):
            getattr(func, name)(f)(i, x)
    for name in ("jacfwd", "hessian"):
        with pytest.raises(ValueError, match="Expected primal to be floating point or complex"):
            getattr(func, name)(f)(i, x)
    for name in ("grad", "jacrev", "jacfwd", "hessian"):
        getattr(func, name)(f, argnums=1)(i, x)
    with pytest.raises(ValueError, match="chunk_size` should be greater than 0"):
        func.jacrev(f, chunk_size=0)


def test_replace_all_batch_norm_modules_():
    # torch.func's recipe for vmap over a model with batch norm: no running statistics, the
    # batch's own statistics in training and evaluation mode (PyTorch 2.13 gives the same
    # state-dict keys and, checked when written, per-sample gradients equal to 1e-14).
    bn = nn.BatchNorm1d(3).double()
    model = nn.Sequential(nn.Linear(3, 3).double(), bn).to(DEVICE)
    assert func.replace_all_batch_norm_modules_(model) is model
    assert bn.running_mean is None and bn.running_var is None
    assert bn.num_batches_tracked is None and not bn.track_running_stats
    assert list(model.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]
    x = np.random.default_rng(0).standard_normal((4, 3))
    bn.eval()
    expected = (x - x.mean(0)) / np.sqrt(x.var(0) + bn.eps)
    np.testing.assert_allclose(host(bn(dev(x))), expected, rtol=1e-12, atol=1e-12)
    assert func.replace_all_batch_norm_modules_(bn) is bn     # the root itself, and again

    model.train()
    params = dict(model.named_parameters())
    xs = dev(np.random.default_rng(1).standard_normal((5, 2, 3)))

    def loss(p, xb):
        return (func.functional_call(model, p, (xb,)) ** 2 * fnp.arange(1.0, 4.0)).sum()

    per_sample = func.vmap(func.grad(loss), in_dims=(None, 0))(params, xs)
    for i in range(5):
        one = func.grad(loss)(params, xs[i])
        for k in params:
            assert_close(per_sample[k][i], one[k])


def test_vjp_fn_takes_pytorchs_keywords():
    out, vjp_fn = func.vjp(fnp.sin, dev(np.array([0.0, 1.0])))
    first = vjp_fn(dev(np.ones(2)), retain_graph=True)
    again = vjp_fn(dev(np.ones(2)), retain_graph=False, create_graph=True)
    assert_close(first[0], np.cos([0.0, 1.0]))
    assert_close(again[0], first[0])


def test_vmap_randomness_same_in_chunks_is_one_mask_as_torch():
    # torch 2.13: vmap(dropout, randomness='same', chunk_size=2) on 7 rows gives one mask
    # for every row (the generator is restored before each chunk), and afterwards the
    # generator is where one unchunked call leaves it; each chunk drew its own mask here.
    # Nested in an outer chunked 'same', an inner 'different' vmap repeats its masks per
    # outer chunk (torch: 2 distinct rows of 3 x 2), an inner chunked 'same' under an outer
    # 'different' gives one mask per outer example (3 distinct rows).
    nn.manual_seed(0)
    drop = nn.Dropout(0.5).to(DEVICE)
    x = dev(np.ones((7, 40), np.float32))
    key = host(drop.rng_key).copy()
    whole = host(func.vmap(drop, randomness="same")(x))
    after_whole = host(drop.rng_key).copy()
    drop.rng_key = dev(key)
    chunked = host(func.vmap(drop, randomness="same", chunk_size=2)(x))
    assert len({r.tobytes() for r in chunked}) == 1
    np.testing.assert_array_equal(chunked, whole)
    np.testing.assert_array_equal(host(drop.rng_key), after_whole)

    def distinct(out):
        return len({r.tobytes() for r in host(out).reshape(-1, 40)})

    x3 = dev(np.ones((3, 2, 40), np.float32))
    assert distinct(func.vmap(func.vmap(drop, randomness="different"), randomness="same",
                              chunk_size=1)(x3)) == 2
    assert distinct(func.vmap(func.vmap(drop, randomness="same", chunk_size=1),
                              randomness="different")(x3)) == 3


def test_jacfwd_and_hessian_randomness_as_torch():
    # torch 2.13: jacfwd maps its tangent basis with vmap, so a training-mode Dropout inside
    # raises "vmap: called random operation while in randomness error mode" by default
    # (hessian too: jacfwd(jacrev)); jacfwd(randomness='same') and jacrev give the Jacobian
    # of one mask; funcgrad_nn computed it whatever randomness said
    nn.manual_seed(0)
    drop = nn.Dropout(0.5).to(DEVICE)
    x = dev(np.ones(6, np.float32))
    with pytest.raises(RuntimeError, match="randomness error mode"):
        func.jacfwd(drop)(x)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        func.hessian(lambda a: (drop(a) ** 2).sum())(x)
    same = host(func.jacfwd(drop, randomness="same")(x))
    np.testing.assert_array_equal(same, np.diag(np.diag(same)))
    assert set(np.diag(same)) <= {0.0, 2.0}
    rev = host(func.jacrev(drop)(x))
    assert set(np.diag(rev)) <= {0.0, 2.0}
    drop.eval()
    np.testing.assert_array_equal(host(func.jacfwd(drop)(x)), np.eye(6))


def test_vmap_randomness_governs_a_modules_dropout_as_torch():
    # torch 2.13: vmap(nn.Dropout(0.5))(x) in training mode raises "vmap: called random
    # operation while in randomness error mode..."; randomness='different' draws a mask per
    # example, 'same' one mask for all. funcgrad ignored randomness (one shared mask).
    nn.manual_seed(0)
    drop = nn.Dropout(0.5).to(DEVICE)
    x = dev(np.ones((6, 32), np.float32))
    with pytest.raises(RuntimeError, match="randomness error mode"):
        func.vmap(drop)(x)
    rows = host(func.vmap(drop, randomness="different")(x))
    assert all((rows[0] != rows[i]).any() for i in range(1, 6))
    assert set(np.unique(rows)) <= {0.0, 2.0}
    same = host(func.vmap(drop, randomness="same")(x))
    assert all((same[0] == same[i]).all() for i in range(1, 6))
    assert (same[0] == 0).any() and (same[0] == 2).any()
    # chunked and nested: still a mask per example
    rows = host(func.vmap(drop, randomness="different", chunk_size=2)(x))
    assert all((rows[0] != rows[i]).any() for i in range(1, 6))
    nested = host(func.vmap(func.vmap(drop, randomness="different"), randomness="different")(
        dev(np.ones((3, 3, 32), np.float32)))).reshape(9, 32)
    assert len({r.tobytes() for r in nested}) == 9
    # the module's own key still advances (it stays shared, so it can be stored)
    key = host(drop.rng_key).copy()
    func.vmap(drop, randomness="different")(x)
    assert (host(drop.rng_key) != key).any()
    # eval mode draws nothing: no error
    drop.eval()
    np.testing.assert_array_equal(host(func.vmap(drop)(x)), host(x))
    # a key mapped along the batch (explicit, per example) is used as given in error mode
    keys = dev(np.arange(12, dtype=np.uint32).reshape(6, 2))
    out = func.vmap(lambda r, k: nn.F.dropout(r, 0.5, key=k))(x, keys)
    assert out.shape == (6, 32)


def test_ensemble_of_training_mode_dropout_models_over_stacked_state():
    # PyTorch's ensembling recipe with Dropout in training mode: functional_call with the
    # stacked buffers (here including each Dropout's rng_key, which stands for PyTorch's
    # global generator) raised UnexpectedTracerError when Dropout advanced the traced key.
    # Each model now draws its own masks from its own key, and each key advances in the
    # stacked buffer (the next call draws new masks, as PyTorch's generator does).
    nn.manual_seed(0)
    models = [nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.5)).to(DEVICE) for _ in range(3)]
    for m in models:   # one set of weights: only the masks differ between the models
        m[0].load_state_dict(models[0][0].state_dict())
    params, buffers = func.stack_module_state(models)
    keys = host(buffers["1.rng_key"]).copy()
    x = dev(np.ones((4, 6), np.float32))

    def fmodel(p, b, x):
        return func.functional_call(models[0], (p, b), (x,))

    out = host(func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x))
    assert out.shape == (3, 4, 6)
    assert (out[0] != out[1]).any() and (out[0] != out[2]).any()
    assert (host(buffers["1.rng_key"]) != keys).all()
    again = host(func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x))
    assert (again != out).any()
    # each model's masks are those of its own key: model i alone with key i gives out[i]
    for i in range(len(models)):
        alone = host(func.functional_call(models[0], (
            {k: v[i] for k, v in params.items()}, {"1.rng_key": dev(keys[i].copy())}), (x,)))
        np.testing.assert_allclose(out[i], alone, rtol=1e-6)


def test_ensemble_of_training_mode_batchnorm_models_updates_stacked_statistics():
    # torch 2.13: vmap(functional_call) over stack_module_state of BatchNorm models in
    # training mode normalizes each model's batch and updates the stacked running
    # statistics in place (they are batched along the vmap). It raised here.
    models = []
    for i in range(2):
        m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)).double().to(DEVICE)
        m[0].weight = dev(np.array([[1.0, 2.0], [3.0, -1.0]]) * (i + 1) / 4)
        m[0].bias = dev(np.array([0.1, -0.2]) * (i + 1))
        models.append(m)
    params, buffers = func.stack_module_state(models)
    x = dev(np.array([[0, 1], [1, 0], [2, 3], [-1, 0.5]]))

    def fmodel(p, b, x):
        return func.functional_call(models[0], (p, b), (x,))

    for chunk_size in (None, 1):  # two steps, the second in chunks
        out = func.vmap(fmodel, in_dims=(0, 0, None), chunk_size=chunk_size)(
            params, buffers, x)
    np.testing.assert_allclose(host(out), [
        [[-0.24096381, -0.49641787], [-0.56224889, 0.94770685], [1.68674666, 0.94770685],
         [-0.88353397, -1.39899583]],
        [[-0.2409653, -0.49642176], [-0.56225237, 0.94771426], [1.68675711, 0.94771426],
         [-0.88353944, -1.39900677]]], atol=1e-7)
    np.testing.assert_allclose(host(buffers["1.running_mean"]),
                               [[0.1496250003, -0.0201875006], [0.2992500006, -0.0403750011]])
    np.testing.assert_allclose(host(buffers["1.running_var"]),
                               [[0.9633854167, 0.9314713542], [1.4235416667, 1.2958854167]])
    np.testing.assert_array_equal(host(buffers["1.num_batches_tracked"]), [2, 2])
    # under an enclosing jit the stacked arrays are traced: refused, as before
    with pytest.raises((RuntimeError, funcgrad.UnexpectedTracerError),
                       match="running_mean|running_var|num_batches_tracked|buffer"):
        funcgrad.jit(lambda p, b: func.vmap(fmodel, in_dims=(0, 0, None))(p, b, x))(
            params, buffers)


def test_vmap_size_mismatch_names_the_callers_arguments():
    # func.vmap passes the example index along as an extra mapped argument (randomness);
    # a size mismatch must still be reported in terms of the caller's arguments
    with pytest.raises(ValueError, match=r"args\[1\]") as e:
        func.vmap(lambda a, b: a + b)(dev(np.ones((3, 2))), dev(np.ones((4, 2))))
    assert "index" not in str(e.value)


def test_vmap_chunks_of_a_random_module_under_jit_match_eager():
    # func.vmap(model, randomness=..., chunk_size=2) under nn.jit raised UnexpectedTracerError:
    # the chunks ran as a staged scan, whose body cannot advance the Dropout's key. They now
    # run one after another, as eagerly (and as PyTorch's loop): same masks, same final key.
    nn.manual_seed(0)
    x = dev(np.ones((5, 16), np.float32))
    for randomness in ("same", "different"):
        jitted, eager = (nn.Sequential(nn.Linear(16, 16), nn.Dropout(0.5)).to(DEVICE)
                         for _ in range(2))
        eager.load_state_dict(jitted.state_dict())
        eager[1].rng_key = dev(host(jitted[1].rng_key).copy())
        got = nn.jit(lambda m, x, r=randomness: func.vmap(m, randomness=r, chunk_size=2)(x))(
            jitted, x)
        want = func.vmap(eager, randomness=randomness, chunk_size=2)(x)
        np.testing.assert_array_equal(host(got), host(want))
        np.testing.assert_array_equal(host(jitted[1].rng_key), host(eager[1].rng_key))
        rows = {r.tobytes() for r in (host(got) != 0)}
        assert len(rows) == (1 if randomness == "same" else 5)


def test_rearrange_as_torch_func():
    # torch 2.13's torch.func.rearrange (was missing), values and errors recorded
    x = dev(np.arange(24).reshape(2, 6, 2))
    cases = {
        ("b (h w) c -> b h w c", (("h", 2),)): ((2, 2, 3, 2), [0, 1, 2, 3, 4, 5, 6, 7]),
        ("... c -> c ...", ()): ((2, 2, 6), [0, 2, 4, 6, 8, 10, 12, 14]),
        ("b h c -> b () h c ()", ()): ((2, 1, 6, 2, 1), [0, 1, 2, 3, 4, 5, 6, 7]),
        ("b h c -> b 1 h c", ()): ((2, 1, 6, 2), [0, 1, 2, 3, 4, 5, 6, 7]),
        ("b (h w) c -> (w b) h c", (("w", 2),)): ((4, 3, 2), [0, 1, 4, 5, 8, 9, 12, 13]),
        ("b ... -> ... b", ()): ((6, 2, 2), [0, 12, 1, 13, 2, 14, 3, 15]),
    }
    for (pattern, kw), (shape, head) in cases.items():
        out = host(func.rearrange(x, pattern, **dict(kw)))
        assert out.shape == shape and out.ravel()[:8].tolist() == head, pattern
    stacked = host(func.rearrange([x[0], x[1]], "b h c -> h (b c)"))
    assert stacked.shape == (6, 4) and stacked.ravel()[:8].tolist() == [0, 1, 12, 13, 2, 3, 14, 15]
    mapped = host(func.vmap(lambda a: func.rearrange(a, "(h w) c -> w h c", h=3))(x))
    assert mapped.shape == (2, 2, 3, 2) and mapped.ravel()[:8].tolist() == [0, 1, 4, 5, 8, 9, 2, 3]
    w = dev(np.arange(6.0).reshape(3, 2))
    g = funcgrad.grad(lambda a: (func.rearrange(a, "a b -> b a") * w).sum())(dev(np.ones((2, 3))))
    np.testing.assert_array_equal(host(g), np.arange(6.0).reshape(3, 2).T)
    for pattern, kw, msg in [
            ("b h c -> b h c d", {}, "Identifiers only on one side"),
            ("b h -> b h", {}, r"Number of dimensions in pattern \(2\) must be equal"),
            ("b h c -> b h c b", {}, "duplicate dimension 'b'"),
            ("b h c -> b 2 h c", {}, "unnamed axes of size 1"),
            ("b h c", {}, "single '->'"),
            ("b h c -> b h c", {"z": 3}, "not found"),
            ("b (h w) c -> b h w c", {}, "cannot infer"),
            ("b (h w) c -> b h w c", {"h": 4}, "does not split")]:
        with pytest.raises(ValueError, match=msg):
            func.rearrange(x, pattern, **kw)


def test_debug_unwrap_gives_the_value_behind_a_tracer():
    seen = []

    def f(a):
        seen.append(host(func.debug_unwrap(a)))
        return (a ** 2).sum()

    func.grad(f)(dev(np.array([1.0, 2.0])))
    np.testing.assert_array_equal(seen[0], [1.0, 2.0])


def test_jacfwd_randomness_different_draws_per_basis_direction_as_torch():
    # torch 2.13: jacfwd(f, randomness='different') is vmap(jvp) over the basis with that
    # randomness: each column of the Jacobian has its own dropout mask (here one mask was
    # drawn for every column, as 'same'). Structure (argnums tuple, dicts, aux) as torch's.
    nn.manual_seed(0)
    drop = nn.Dropout(0.5).to(DEVICE)
    w = dev(np.ones((50, 3)))
    f = lambda x: drop(w @ x)  # noqa: E731  (column j is 2 * mask_j)
    x = dev(np.ones(3))
    for jac in (func.jacfwd(f, randomness="different"),
                lambda x: nn.jit(lambda d, x: func.jacfwd(
                    lambda x: d(w @ x), randomness="different")(x))(drop, x)):
        cols = host(jac(x)).T
        assert cols.shape == (3, 50) and set(cols.ravel().tolist()) == {0.0, 2.0}
        assert len({c.tobytes() for c in cols}) == 3
    cols = host(func.jacfwd(f, randomness="same")(x)).T
    assert len({c.tobytes() for c in cols}) == 1

    def g(a, b):
        return {"s": (a * b).sum(), "v": a * 2}, a.sum()

    res, aux = func.jacfwd(g, argnums=(0, 1), has_aux=True, randomness="different")(
        dev(np.array([1.0, 2.0, 3.0])), dev(np.array([1.0, 0.0, -1.0])))
    assert list(res) == ["s", "v"] and float(host(aux)) == 6.0
    assert [host(b).tolist() for b in res["s"]] == [[1.0, 0.0, -1.0], [1.0, 2.0, 3.0]]
    assert [host(b).shape for b in res["v"]] == [(3, 3), (3, 3)]
    d = func.jacfwd(lambda p: (p["w"] * x).sum() + p["b"] ** 2, randomness="different")(
        {"w": dev(np.array([1.0, 2.0, 3.0])), "b": dev(np.array(2.0))})
    assert {k: host(v).tolist() for k, v in d.items()} == {"w": [1.0, 1.0, 1.0], "b": 4.0}


def test_vmap_outputs_must_be_arrays_unless_out_dims_none():
    # torch 2.13: ValueError for a number, None or string returned along a mapped out_dim
    x = dev(np.ones(3))
    msg = (r"vmap\(<lambda>, ...\): `<lambda>` must only return Tensors, got type <class "
           r"'int'>. Did you mean to set out_dims= to None for output\?")
    with pytest.raises(ValueError, match=msg):
        func.vmap(lambda a: 3)(x)
    with pytest.raises(ValueError, match=msg):
        func.vmap(lambda a: (a, 3))(x)
    with pytest.raises(ValueError, match="got type <class 'NoneType'>"):
        func.vmap(lambda a: None)(x)
    with pytest.raises(ValueError, match="got type <class 'str'>"):
        func.vmap(lambda a: {"a": a, "b": "x"})(x)
    assert func.vmap(lambda a: 3, out_dims=None)(x) == 3
    out = func.vmap(lambda a: (a, 3), out_dims=(0, None))(x)
    assert out[1] == 3 and host(out[0]).tolist() == [1.0, 1.0, 1.0]


def test_vjp_jvp_mismatches_raise_torchs_runtime_errors_and_dtypes_cast():
    x = dev(np.ones(3))
    _, vjp_fn = func.vjp(lambda x: (x, x.sum()), x)
    with pytest.raises(RuntimeError, match="Expected pytree structure of cotangents"):
        vjp_fn((x,))
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[1\] has a shape of "
                       r"\(1,\) and output\[1\] has a shape of \(\)"):
        vjp_fn((x, dev(np.ones(1))))
    # torch casts a gradient to its output's dtype
    g, = vjp_fn((x, dev(np.array(1.0, np.float32))))
    assert host(g).dtype == np.float64 and host(g).tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(RuntimeError, match=r"Tensor is of size \[3\] while the given forward "
                       r"gradient is of size \[4\]"):
        func.jvp(fnp.sin, (x,), (dev(np.ones(4)),))
    with pytest.raises(RuntimeError, match="Expected primals and tangents to have the same "
                       "python structure"):
        func.jvp(fnp.sin, (x,), [x])
    _, t = func.jvp(fnp.sin, (x,), (dev(np.ones(3, np.float32)),))
    np.testing.assert_allclose(host(t), np.cos(1.0) * np.ones(3))


def test_functional_call_with_a_vector_for_a_linear_weight_names_the_weight():
    # torch.func.functional_call raises RuntimeError "mat2 must be a matrix, got 1-D tensor"
    with pytest.raises(RuntimeError, match=r"weight: expected a matrix \(out_features, "
                                           r"in_features\) = \(2, 3\), got shape \(3,\)"):
        func.functional_call(nn.Linear(3, 2), {"weight": dev(np.zeros(3, np.float32))},
                             (dev(np.zeros((4, 3), np.float32)),))


def test_gradients_of_complex_inputs_are_pytorchs_conjugates():
    # torch.func's values (torch 2.13): the conjugate of JAX's for complex inputs
    z, v = dev(np.array([1 + 2j, -0.5 + 0.25j])), dev(np.array([1 - 1j, 2 + 0.5j]))

    def loss(a):
        return ((a * fnp.conj(a)).real * 3 + a.imag).sum()

    want = np.array([6 + 13j, -3 + 2.5j])
    assert_allclose(host(func.grad(loss)(z)), want)
    g, value = func.grad_and_value(loss)(z)
    assert_allclose(host(g), want)
    assert_allclose(host(value), 18.1875)
    _, vjp_fn = func.vjp(lambda a: a * a, z)
    assert_allclose(host(vjp_fn(v)[0]), np.array([-2 - 6j, -1.75 - 1.5j]))
    (g,), aux = func.grad(lambda a: (loss(a), 1), argnums=(0,), has_aux=True)(z)
    assert_allclose(host(g), want)
    # (torch.func.jacrev refuses complex inputs; here its rows are grad's)
    assert_allclose(host(func.jacrev(lambda a: (a * fnp.conj(a)).real * 3 + a.imag)(z)),
                    np.diag(want))


def test_vmap_different_with_a_dropout_left_on_the_host_and_data_on_the_device():
    # PyTorch's Dropout holds no state, so a model's Dropout works with data on any device;
    # here its key stays where it was made: the per-example keys meet the data's index
    # (it raised a device mismatch in the strict pass)
    drop = nn.Dropout(0.5).to("cpu")
    x = dev(np.ones((2, 64), np.float32))
    out = func.vmap(drop, randomness="different")(x)
    assert funcgrad.backend.device_of(out) == funcgrad.backend.device_of(x)
    rows = host(out)
    assert set(np.unique(rows)) <= {0.0, 2.0} and not np.array_equal(rows[0], rows[1])


def test_jit_of_a_dropout_with_its_key_on_the_host_and_data_on_the_device():
    # torch: a plain Dropout under torch.compile works with data on any device; the module's
    # key (made on the host) moves to the data inside the trace (it raised a device mismatch
    # in random_uniform under nn.jit in the strict pass)
    drop = nn.Dropout(0.5).to("cpu")
    x = dev(np.ones((4, 64), np.float32))
    out = nn.jit(lambda m, a: m(a))(drop, x)
    assert funcgrad.backend.device_of(out) == funcgrad.backend.device_of(x)
    assert set(np.unique(host(out))) == {0.0, 2.0}


def test_jvp_and_linearize_give_an_integer_output_a_zero_tangent_of_its_dtype():
    # torch 2.13: func.jvp / func.linearize's jvp_fn give (a > 1).long() the tangent
    # tensor([0, 0]) (int64); funcgrad's tangent there is a float0 marker
    x = dev(np.array([1.0, 2.0]))

    def f(a):
        return (a > 1).astype(np.int64), a * 2

    _, (ti, tf) = func.jvp(f, (x,), (x,))
    assert ti.dtype == np.int64 and host(ti).tolist() == [0, 0]
    assert host(tf).tolist() == [2.0, 4.0]
    _, jvp_fn = func.linearize(f, x)
    ti, tf = jvp_fn(x)
    assert ti.dtype == np.int64 and host(ti).tolist() == [0, 0]
    assert host(tf).tolist() == [2.0, 4.0]
    with pytest.raises(RuntimeError, match="different size"):
        jvp_fn(dev(np.ones(3)))


def test_vmap_different_under_jit_with_a_module_on_the_device():
    # model.to(device) then jit(vmap(model, randomness='different')): the examples' index
    # was made on the default device (a traced input has no concrete device), so the key
    # mixing met arrays of two devices in the strict pass
    # (on the strict device in both passes: in the NumPy pass it is not the default one)
    m = nn.Sequential(nn.Linear(3, 8), nn.Dropout(0.5)).to("strict")
    x = funcgrad.device_put(np.ones((2, 3), np.float32), "strict")
    out = nn.jit(lambda m, a: func.vmap(m, randomness="different")(a))(m, x)
    assert funcgrad.backend.device_of(out) == funcgrad.backend.device_of(x)
    assert out.shape == (2, 8)
    # jacfwd's tangent basis likewise
    jac = nn.jit(lambda m, a: func.jacfwd(m, randomness="different")(a))(m, x[0])
    assert funcgrad.backend.device_of(jac) == "strict" and jac.shape == (8, 3)
