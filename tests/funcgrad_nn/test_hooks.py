"""Module hooks: full backward (pre) hooks against PyTorch's values, parameter gradient hooks,
forward hooks with kwargs, state-dict hooks, global hooks; once per backward, eagerly and
under jit."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from helpers import dev, host

import funcgrad
import funcgrad.numpy as fnp
import funcgrad_nn as nn

REF = dict(np.load(pathlib.Path(__file__).parent / "autograd" / "torch_fixtures.npz"))
Y = np.array([[0.5, 1.5, -0.2], [0.1, 0.2, 0.3]])


def assert_close(actual, desired, **kw):
    np.testing.assert_allclose(host(actual), host(desired), **kw)


def _linear():
    lin = nn.Linear(3, 2).double()
    lin.load_state_dict({"weight": REF["hook_w"], "bias": REF["hook_b"]})
    return lin


def test_full_backward_hooks_match_pytorch():
    lin = _linear()
    seen = {}
    lin.register_full_backward_pre_hook(lambda m, go: seen.setdefault("pre", go) and None)
    lin.register_full_backward_hook(lambda m, gi, go: seen.setdefault("full", (gi, go)) and None)
    gx, gm = funcgrad.grad(lambda x, m: (m(x) ** 2).sum(), argnums=(0, 1))(Y, lin)
    assert_close(seen["pre"][0], REF["hook_pre_go"])
    assert_close(seen["full"][0][0], REF["hook_gi"])
    assert_close(seen["full"][1][0], REF["hook_go"])
    assert_close(gx, REF["hook_x_grad"])
    assert_close(gm.weight, REF["hook_w_grad"])


def test_hooks_fire_once_per_backward_eager_and_jit():
    lin = _linear()
    calls = []
    lin.register_full_backward_hook(lambda m, gi, go: calls.append(np.asarray(go[0]).copy()))
    loss = lambda m, x: (m(x) ** 2).sum()
    nn.grad(loss)(lin, Y)
    assert len(calls) == 1
    step = nn.jit(nn.grad(loss))
    step(lin, Y)
    step(lin, Y)     # compiled: the hook runs at run time, every call, with concrete arrays
    assert len(calls) == 3
    for c in calls:
        assert isinstance(c, np.ndarray)
        assert_close(c, REF["hook_go"])


def test_grad_input_none_when_input_not_differentiated():
    lin = _linear()
    seen = []
    lin.register_full_backward_hook(lambda m, gi, go: seen.append(gi))
    # PyTorch 2.13 warns so (its words)
    with pytest.warns(UserWarning, match="Full backward hook is firing when gradients are "
                      "computed with respect to module outputs since no inputs require"):
        nn.grad(lambda m: m(Y).sum())(lin)
    assert seen == [(None,)]


def test_full_backward_hook_replaces_grad_input():
    lin = _linear()
    lin.register_full_backward_hook(lambda m, gi, go: (gi[0] * 0.0,))
    gx = funcgrad.grad(lambda x: lin(x).sum())(Y)
    assert_close(gx, np.zeros_like(Y))


def test_pre_hook_replaces_grad_output_under_jit():
    lin = _linear()
    lin.register_full_backward_pre_hook(lambda m, go: (go[0] * 2.0,))
    loss = lambda m: m(Y).sum()
    g = nn.jit(nn.grad(loss))(lin)
    assert_close(g.bias, [4.0, 4.0])


def test_parameter_hooks_total_gradient_once():
    lin = _linear()
    seen = []
    lin.register_parameter_hook("weight", lambda g: seen.append(np.asarray(g).copy()))
    # the weight is used twice: the hook sees the summed gradient, once
    loss = lambda m: (m(Y) ** 2).sum() + (m.weight ** 2).sum()
    g = nn.grad(loss)(lin)
    assert len(seen) == 1
    assert_close(seen[0], g.weight)
    nn.jit(nn.grad(loss))(lin)
    assert len(seen) == 2
    assert_close(seen[1], g.weight)


def test_parameter_register_hook_and_replacement():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            p = nn.Parameter(np.ones(2))
            p.register_hook(lambda g: g * 3.0)
            self.w = p

        def forward(self, x):
            return (self.w * x).sum()

    g = nn.grad(lambda m: m(np.array([1.0, 2.0])))(M())
    assert_close(g.w, [3.0, 6.0])


def test_forward_hooks_with_kwargs():
    class Scale(nn.Module):
        def forward(self, x, *, factor=1.0):
            return x * factor

    m = Scale()
    seen = []
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"factor": 3.0}),
                                with_kwargs=True)
    m.register_forward_hook(lambda mod, args, kwargs, out: seen.append(kwargs) or out + 1,
                            with_kwargs=True)
    assert float(m(np.float64(2.0), factor=5.0)) == 7.0
    assert seen == [{"factor": 3.0}]
    bad = Scale()
    bad.register_forward_pre_hook(lambda mod, a, k: 3, with_kwargs=True)
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        bad(np.float64(1.0))


def test_state_dict_hooks():
    net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    prefixes = []
    net[1].register_state_dict_pre_hook(lambda m, prefix, keep: prefixes.append(prefix))
    sd = net.state_dict()
    assert prefixes == ["1."]
    loaded = []
    other = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    other.register_load_state_dict_post_hook(lambda m, keys: loaded.append(keys))
    other.load_state_dict(sd)
    assert loaded and loaded[0].missing_keys == []
    strict = nn.Linear(1, 1)
    strict.register_load_state_dict_post_hook(lambda m, keys: keys.missing_keys.append("x"))
    with pytest.raises(RuntimeError, match="post hook"):
        strict.load_state_dict(nn.Linear(1, 1).state_dict())


def test_global_hooks():
    net = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))
    fwd, bwd = [], []
    with nn.register_module_forward_hook(lambda m, a, o: fwd.append(type(m).__name__)), \
            nn.register_module_full_backward_hook(lambda m, gi, go: bwd.append(
                type(m).__name__)):
        nn.grad(lambda m: m(np.ones((1, 2), np.float32)).sum())(net)
    assert fwd == ["Linear", "ReLU", "Linear", "Sequential"]
    assert sorted(bwd) == sorted(fwd) and bwd[0] == "Sequential"
    net(np.ones((1, 2), np.float32))
    assert len(fwd) == 4   # removed


def test_hook_bad_structure_names_hook():
    lin = _linear()

    def my_hook(m, gi, go):
        return (gi[0], gi[0])

    lin.register_full_backward_hook(my_hook)
    with pytest.raises(RuntimeError, match="my_hook of Linear returned an invalid number of "
                                           "grad_input, got 2, but expected 1"):
        funcgrad.grad(lambda x: lin(x).sum())(Y)
    lin2 = _linear()
    lin2.register_full_backward_pre_hook(lambda m, go: go[0])
    with pytest.raises(TypeError, match="pre-hook .* of Linear must return None or a tuple"):
        nn.grad(lambda m: m(Y).sum())(lin2)
    lin3 = _linear()
    lin3.register_full_backward_pre_hook(lambda m, go: (go[0][:1],))
    with pytest.raises(ValueError, match="shape"):
        nn.grad(lambda m: m(Y).sum())(lin3)
    with pytest.raises(KeyError, match="no parameter 'nope'"):
        lin.register_parameter_hook("nope", lambda g: g)


def test_hook_added_later_retraces_jit():
    lin = _linear()
    step = nn.jit(nn.grad(lambda m: m(Y).sum()))
    g0 = step(lin)
    lin.register_parameter_hook("bias", lambda g: g * 0)
    g1 = step(lin)
    assert_close(g0.bias, [2.0, 2.0])
    assert_close(g1.bias, [0.0, 0.0])


def test_forward_hook_always_call_and_prepend():
    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m, seen = Boom(), []
    m.register_forward_hook(lambda mod, a, out: seen.append(("always", out)), always_call=True)
    m.register_forward_hook(lambda mod, a, out: seen.append(("normal", out)))
    with pytest.raises(ValueError, match="boom"):
        m(np.ones(1))
    assert seen == [("always", None)]
    order = []
    lin = nn.Identity()
    lin.register_forward_hook(lambda mod, a, out: order.append("second"))
    lin.register_forward_hook(lambda mod, a, out: order.append("first"), prepend=True)
    lin(np.ones(1))
    assert order == ["first", "second"]


def test_always_call_hooks_run_when_a_hook_raises_as_torch():
    # torch 2.13 (_call_impl): a forward pre-hook or a forward hook raising also runs the
    # always_call forward hooks not run yet, with the arguments and output so far; one of
    # them raising then only warns. Only an error in forward itself ran them here.
    seen = []
    m = nn.Identity()
    m.register_forward_pre_hook(lambda mod, a: (a[0] * 2,))
    m.register_forward_pre_hook(lambda mod, a: 1 / 0)
    m.register_forward_hook(lambda mod, a, k, out: seen.append(("kw", host(a[0]), k, out)),
                            always_call=True, with_kwargs=True)
    with pytest.raises(ZeroDivisionError):
        m(np.ones(1))
    assert len(seen) == 1 and seen[0][0] == "kw" and seen[0][1].tolist() == [2.0]
    assert seen[0][2] == {} and seen[0][3] is None
    seen.clear()
    m = nn.Identity()
    m.register_forward_hook(lambda mod, a, out: seen.append(("first", host(out))),
                            always_call=True)
    m.register_forward_hook(lambda mod, a, out: 1 / 0)
    m.register_forward_hook(lambda mod, a, out: seen.append(("late", host(out))),
                            always_call=True)

    def bad(mod, a, out):
        raise KeyError("silenced")

    m.register_forward_hook(bad, always_call=True)
    with pytest.raises(ZeroDivisionError), pytest.warns(UserWarning, match="silenced"):
        m(np.ones(1))
    assert [s[0] for s in seen] == ["first", "late"]      # "first" ran once
    assert seen[1][1].tolist() == [1.0]                   # the output so far


def test_post_accumulate_grad_hooks():
    lin = _linear()
    seen = []
    lin.register_post_accumulate_grad_hook("weight", lambda p: seen.append(np.asarray(p.grad)))
    loss = lambda m: (m(Y) ** 2).sum()
    g = nn.grad(loss)(lin)
    nn.jit(nn.grad(loss))(lin)
    assert len(seen) == 2
    for s in seen:
        assert_close(s, REF["hook_w_grad"])
    assert_close(g.weight, REF["hook_w_grad"])     # unchanged by the hook


def test_load_state_dict_pre_hook_renames_keys():
    src = nn.Linear(2, 1)
    old = {"w": src.weight, "b": src.bias}            # an older layout

    def rename(mod, sd, prefix, metadata, strict, missing, unexpected, errors):
        sd[prefix + "weight"] = sd.pop(prefix + "w")
        sd[prefix + "bias"] = sd.pop(prefix + "b")

    dst = nn.Linear(2, 1)
    dst.register_load_state_dict_pre_hook(rename)
    dst.load_state_dict(old)
    assert_close(dst.weight, src.weight)
    assert set(old) == {"w", "b"}                     # the caller's dict is not edited


def test_state_dict_post_hook_prefix_in_container():
    net = nn.Sequential(nn.Linear(1, 1), nn.Linear(1, 1))
    net[1].register_state_dict_post_hook(lambda m, sd, prefix, md: sd.pop(prefix + "bias")
                                         and None)
    assert list(net.state_dict()) == ["0.weight", "0.bias", "1.weight"]
    # torch 2.13: "state_dict post-hook must return None"
    net[0].register_state_dict_post_hook(lambda m, sd, prefix, md: {})
    with pytest.raises(RuntimeError, match="post-hook must return None"):
        net.state_dict()


def test_load_state_dict_post_hooks_run_like_pytorch():
    # Recorded from torch 2.13 on Sequential(Linear, Sequential(Linear)) with every module
    # hooked, loading a dict without "1.0.bias" and with an extra key, strict=False: each
    # module's post hook runs right after its subtree with the keys found so far.
    net = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Linear(2, 1)))
    log = []
    for name, mod in net.named_modules():
        mod.register_load_state_dict_pre_hook(
            lambda m, sd, prefix, *a, name=name: log.append(("pre", name)))
        mod.register_load_state_dict_post_hook(
            lambda m, keys, name=name: log.append(
                ("post", name, sorted(keys.missing_keys), sorted(keys.unexpected_keys))))
    sd = net.state_dict()
    del sd["1.0.bias"]
    sd["extra"] = sd["0.weight"]
    result = net.load_state_dict(sd, strict=False)
    assert log == [
        ("pre", ""), ("pre", "0"), ("post", "0", [], ["extra"]), ("pre", "1"), ("pre", "1.0"),
        ("post", "1.0", ["1.0.bias"], ["extra"]), ("post", "1", ["1.0.bias"], ["extra"]),
        ("post", "", ["1.0.bias"], ["extra"])]
    assert result.missing_keys == ["1.0.bias"] and result.unexpected_keys == ["extra"]
    lin = nn.Linear(1, 1)
    lin.register_load_state_dict_post_hook(lambda m, keys: keys)
    with pytest.raises(AssertionError, match="not expected to return new values"):
        lin.load_state_dict(lin.state_dict())


class _Doubler(nn.Module):
    def forward(self, *args, **kwargs):
        out = 0.0
        for a in list(args) + list(kwargs.values()):
            if hasattr(a, "dtype") and np.dtype(a.dtype).kind == "f":
                out = out + a * 2.0
        return out


def _grad_inputs(args, **kwargs):
    m, seen = _Doubler(), []
    m.register_full_backward_hook(
        lambda mod, gi, go: seen.append([None if g is None else host(g).tolist() for g in gi]))
    funcgrad.grad(lambda a: m(a, *args, **kwargs).sum())(np.array([1.0, 2.0]))
    return seen


@pytest.mark.parametrize("jit", [False, True])
def test_grad_input_one_entry_per_positional_argument(jit):
    # PyTorch 2.13 (module.register_full_backward_hook, `a` requires grad, the rest not):
    # one entry per positional argument; zeros for an array not requiring grad (int zeros for
    # an integer one), None for a non-array; keyword arguments are not part of grad_input.
    b = np.array([3.0, 4.0])
    assert _grad_inputs((b,)) == [[[2.0, 2.0], [0.0, 0.0]]]
    assert _grad_inputs((3.0, b)) == [[[2.0, 2.0], None, [0.0, 0.0]]]
    assert _grad_inputs((np.array([1, 2]),)) == [[[2.0, 2.0], [0, 0]]]
    assert _grad_inputs(([b],)) == [[[2.0, 2.0], None]]
    assert _grad_inputs((), z=b) == [[[2.0, 2.0]]]
    m = _Doubler()
    m.register_full_backward_hook(lambda mod, gi, go: (None, gi[1] * 3.0, None))
    f = lambda a, b: m(a, b, 2.0).sum()
    g = (funcgrad.jit(funcgrad.grad(f, argnums=(0, 1))) if jit
         else funcgrad.grad(f, argnums=(0, 1)))(b, b)
    assert_close(g[0], [0.0, 0.0])          # None returned for a gradient: zero, as PyTorch
    assert_close(g[1], [6.0, 6.0])
    m2 = _Doubler()
    m2.register_full_backward_hook(lambda mod, gi, go: (gi[0],))
    with pytest.raises(RuntimeError, match="invalid number of grad_input, got 1, but expected 2"):
        funcgrad.grad(lambda a: m2(a, b).sum())(b)


def test_global_forward_hook_with_kwargs_and_always_call():
    class Scaled(nn.Module):
        def forward(self, x, scale=1.0):
            if scale < 0:
                raise ValueError("negative scale")
            return x * scale

    seen = []
    h1 = nn.register_module_forward_hook(
        lambda m, args, kwargs, out: seen.append(("kw", dict(kwargs))), with_kwargs=True)
    h2 = nn.register_module_forward_hook(lambda m, args, out: seen.append(("always", out)),
                                         always_call=True)
    try:
        Scaled()(np.float64(2.0), scale=3.0)
        with pytest.raises(ValueError, match="negative"):
            Scaled()(np.float64(2.0), scale=-1.0)
    finally:
        h1.remove()
        h2.remove()
    assert seen == [("kw", {"scale": 3.0}), ("always", 6.0), ("always", None)]


def test_parameter_hook_handles_remove_the_hook():
    # torch: Tensor.register_hook / register_post_accumulate_grad_hook return a handle
    x = np.ones((1, 2), np.float32)
    p = nn.Parameter(np.ones((1, 2), np.float32))
    h = p.register_hook(lambda g: g * 10.0)
    seen = []
    h2 = p.register_post_accumulate_grad_hook(lambda holder: seen.append(1))
    h.remove()                       # removed before assignment: never runs
    lin = nn.Linear(2, 1, bias=False)
    lin.weight = p
    assert host(nn.grad(lambda m: m(x).sum())(lin).weight).tolist() == [[1.0, 1.0]]
    assert seen == [1]
    h3 = p.register_hook(lambda g: g * 10.0)
    lin.weight = p                   # hooks registered before an assignment attach to it
    assert host(nn.grad(lambda m: m(x).sum())(lin).weight).tolist() == [[10.0, 10.0]]
    h3.remove()
    h2.remove()                      # removed after assignment: detached from the module
    assert host(nn.grad(lambda m: m(x).sum())(lin).weight).tolist() == [[1.0, 1.0]]
    assert seen == [1, 1]


@pytest.mark.parametrize("jit", [False, True])
def test_full_backward_hook_of_a_checkpointed_module_fires_as_torch(jit):
    # torch 2.13: checkpoint(Sequential(Linear(3, 3), Tanh()), x, use_reentrant=False) with x
    # not requiring grad, loss.backward(): the Linear's pre hook sees grad_output [(2, 3)] and
    # its full hook grad_input [None], once per backward. Inside nn.checkpoint the data input
    # looked differentiated (a tracer of the checkpoint's body), so the full hook never ran.
    nn.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 3), nn.Tanh())
    log = []
    m[0].register_full_backward_hook(lambda mod, gi, go: log.append(
        ("full", [None if g is None else tuple(g.shape) for g in gi],
         [tuple(g.shape) for g in go])))
    m[0].register_full_backward_pre_hook(
        lambda mod, go: log.append(("pre", [tuple(g.shape) for g in go])))
    step = nn.grad(lambda m, x: nn.checkpoint(m, x, use_reentrant=False).sum())
    if jit:
        step = nn.jit(step)
    x = np.ones((2, 3), np.float32)
    for _ in range(2):
        log.clear()
        step(m, x)
        assert log == [("pre", [(2, 3)]), ("full", [None], [(2, 3)])]
    # the input differentiated too: grad_input is its gradient
    log.clear()
    nn.grad(lambda m, x: nn.checkpoint(m, x).sum(), argnums=(0, 1))(m, x)
    assert log == [("pre", [(2, 3)]), ("full", [(2, 3)], [(2, 3)])]


@pytest.mark.parametrize("inner", ["nn.jit", "jit", "vmap", "checkpoint"])
def test_parameter_hook_fires_once_when_the_module_goes_through_an_inner_transform(inner):
    # torch: a parameter's tensor hook runs once per backward and its replacement is applied
    # once. A module passed on to a jit/vmap/checkpoint inside nn.grad was hooked again when
    # rebuilt there: the hook ran twice and g * 2 became g * 4.
    nn.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 3), nn.Tanh())
    calls = []
    m[0].register_parameter_hook("weight", lambda g: calls.append(1) or g * 2)
    x = np.ones((2, 3), np.float32)
    calls.clear()
    plain = nn.grad(lambda m, x: m(x).sum())(m, x)[0].weight
    assert len(calls) == 1
    run = {"nn.jit": lambda m, x: nn.jit(lambda m, x: m(x).sum())(m, x),
           "jit": lambda m, x: funcgrad.jit(lambda m, x: m(x).sum())(m, x),
           "vmap": lambda m, x: funcgrad.vmap(lambda m, r: m(r).sum(),
                                              in_axes=(None, 0))(m, x[:, None]).sum(),
           "checkpoint": lambda m, x: nn.checkpoint(m, x).sum()}[inner]
    calls.clear()
    g = nn.grad(run)(m, x)[0].weight
    assert len(calls) == 1
    np.testing.assert_allclose(host(g), host(plain), rtol=1e-6)


def test_grad_output_of_a_tuple_output_has_one_entry_per_element_as_torch():
    # torch 2.13, LSTM(3, 4, batch_first=True) on a (2, 5, 3) input, loss = out.sum():
    # full_backward_pre_hook sees grad_output of length 2 ((2, 5, 4), None: the (h, c) pair is
    # not a tensor); the full hook gets the same; a pre hook returning (go[0] * 2, None)
    # doubles the gradient. funcgrad flattened the output: 3 entries (out, h, c).
    nn.manual_seed(0)
    m = nn.LSTM(3, 4, batch_first=True)
    log = []
    m.register_full_backward_pre_hook(
        lambda mod, go: log.append(("pre", [None if g is None else g.shape for g in go])))
    m.register_full_backward_hook(
        lambda mod, gi, go: log.append(("full", [None if g is None else g.shape for g in go])))
    x = np.linspace(-1, 1, 30).reshape(2, 5, 3).astype(np.float32)
    g1 = funcgrad.grad(lambda x: m(x)[0].sum())(x)
    assert log == [("pre", [(2, 5, 4), None]), ("full", [(2, 5, 4), None])]
    with pytest.raises(RuntimeError, match="invalid number of grad_output"):
        h = m.register_full_backward_pre_hook(lambda mod, go: (go[0],))
        try:
            funcgrad.grad(lambda x: m(x)[0].sum())(x)
        finally:
            h.remove()
    m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 2, None))
    g2 = funcgrad.grad(lambda x: m(x)[0].sum())(x)
    np.testing.assert_allclose(host(g2), 2 * host(g1), rtol=1e-6)


class _ComplexScale(nn.Module):
    def __init__(self):
        super().__init__()
        self.z = nn.Parameter(dev(np.array([1 + 2j, 0.5 - 1j])))

    def forward(self, x):
        return x * self.z


def test_hooks_see_and_return_pytorchs_gradients_of_complex_values():
    # torch 2.13, the same program (a hook multiplying by 1+1j, a pre-hook by 1j): each hook
    # sees PyTorch's gradients (the conjugates of funcgrad's) and its results count as such
    m, seen = _ComplexScale(), {}
    m.register_parameter_hook("z", lambda g: (seen.setdefault("param", host(g)), g * (1 + 1j))[1])
    m.register_full_backward_pre_hook(
        lambda mod, go: (seen.setdefault("pre", host(go[0])), (go[0] * 1j,))[1])
    m.register_full_backward_hook(
        lambda mod, gi, go: seen.update(gi=host(gi[0]), go=host(go[0])))

    def loss(m, x):
        o = m(x)
        return (o * fnp.conj(o)).real.sum() + o.imag.sum()

    gm, gx = nn.grad(loss, argnums=(0, 1))(m, dev(np.array([2 - 1j, 1 + 1j])))
    assert_close(host(gm.z), np.array([-31 - 13j, 6j]))
    assert_close(host(gx), np.array([9 + 22j, -3 + 1.5j]))
    assert_close(seen["param"], np.array([-22 + 9j, 3 + 3j]))
    assert_close(seen["pre"], np.array([8 + 7j, 3]))
    assert_close(seen["go"], np.array([-7 + 8j, 3j]))
    assert_close(seen["gi"], np.array([9 + 22j, -3 + 1.5j]))
