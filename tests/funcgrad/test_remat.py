"""``funcgrad.checkpoint`` / ``remat``: same derivatives, fewer residuals, recomputation.

The memory claims are checked by counting bytes of the residuals (the consts of the linear
jaxpr linearize builds, or of the per-node linearizations the eager tape makes), which is
deterministic, never by timing or process memory.
"""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.backend import xp_for
from funcgrad.core import Primitive, bind1
from funcgrad.interpreters import batching, eager_vjp
from funcgrad.interpreters.jvp import defjvp
from funcgrad.interpreters.linearize import linearize_flat
from funcgrad.interpreters.transpose import vjp_flat
from funcgrad.ir import ClosedJaxpr, Jaxpr
from funcgrad.ops.elementwise import cos, mul
from funcgrad.ops.linalg import dot_general_p
from funcgrad.ops.remat import name_p, remat_p
from funcgrad.test_util import check_grads
from tests.helpers import assert_allclose, dev, host

cp = funcgrad.checkpoint_policies

POLICIES = {
    "default": None,
    "nothing": cp.nothing_saveable,
    "everything": cp.everything_saveable,
    "dots": cp.dots_saveable,
    "dots_no_batch": cp.dots_with_no_batch_dims_saveable,
    "names_h": cp.save_only_these_names("h"),
    "all_names_but_h": cp.save_any_names_but_these("h"),
    "both": cp.save_from_both_policies(cp.dots_saveable, cp.save_only_these_names("h")),
}


def _layer(w, x):
    h = fnp.tanh(w @ x)
    h = funcgrad.checkpoint_name(h, "h")
    return fnp.sin(w @ h) * h


def _args(seed: int = 0):
    rng = np.random.default_rng(seed)
    return dev(rng.normal(size=(3, 3)) / 2), dev(rng.normal(size=3))


def _eqns(closed: ClosedJaxpr | Jaxpr, prim: Primitive | None = None, deep: bool = True):
    """Equations of ``closed`` (and, with ``deep``, of nested jaxprs) of primitive ``prim``."""
    j = closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed
    out = []
    for e in j.eqns:
        if prim is None or e.prim is prim:
            out.append(e)
        if deep:
            for p in e.params.values():
                if isinstance(p, ClosedJaxpr | Jaxpr):
                    out.extend(_eqns(p, prim, deep))
    return out


# ---------------------------------------------------------------------------------------------
# Derivatives are unchanged


@pytest.mark.parametrize("name", list(POLICIES))
def test_check_grads_order_2(name):
    f = funcgrad.checkpoint(_layer, policy=POLICIES[name])
    check_grads(f, _args(), order=2)


@pytest.mark.parametrize("name", ["default", "everything", "dots", "names_h"])
def test_grad_matches_unchecked(name):
    w, x = _args(1)
    f = funcgrad.checkpoint(_layer, policy=POLICIES[name])

    def loss(g):
        return lambda w, x: fnp.sum(g(w, x) ** 2)

    want = funcgrad.grad(loss(_layer), argnums=(0, 1))(w, x)
    assert_allclose(funcgrad.grad(loss(f), argnums=(0, 1))(w, x), want)
    # grad of grad
    gg = funcgrad.grad(lambda x: fnp.sum(funcgrad.grad(loss(f), argnums=1)(w, x) ** 2))(x)
    gg0 = funcgrad.grad(lambda x: fnp.sum(funcgrad.grad(loss(_layer), argnums=1)(w, x) ** 2))(x)
    assert_allclose(gg, gg0, rtol=1e-10, atol=1e-12)
    # jvp
    assert_allclose(funcgrad.jvp(f, (w, x), (w, x)), funcgrad.jvp(_layer, (w, x), (w, x)))
    # value_and_grad of the Hessian-vector product
    assert_allclose(funcgrad.hvp(loss(f), (w, x), (w, x)), funcgrad.hvp(loss(_layer), (w, x),
                                                                       (w, x)), rtol=1e-10)


def test_vmap_of_grad_and_vmap_of_checkpoint():
    w, _ = _args()
    xs = dev(np.random.default_rng(3).normal(size=(3, 5)))  # batch along axis 1
    f = funcgrad.checkpoint(_layer, policy=cp.dots_saveable)
    per = funcgrad.vmap(funcgrad.grad(lambda w, x: fnp.sum(f(w, x))), in_axes=(None, 1))(w, xs)
    loop = np.stack([host(funcgrad.grad(lambda w, x: fnp.sum(_layer(w, x)))(w, xs[:, i]))
                     for i in range(5)])
    assert_allclose(per, loop)
    out = funcgrad.vmap(f, in_axes=(None, 1), out_axes=1)(w, xs)
    assert_allclose(out, np.stack([host(_layer(w, xs[:, i])) for i in range(5)], axis=1))


def test_jit_of_grad_and_grad_of_jit():
    w, x = _args(2)
    f = funcgrad.checkpoint(_layer)

    def loss(g):
        return lambda w, x: fnp.sum(g(w, x))

    want = funcgrad.grad(loss(_layer), argnums=(0, 1))(w, x)
    jg = funcgrad.jit(funcgrad.grad(loss(f), argnums=(0, 1)))
    for _ in range(4):  # past the point where the remat bodies get compiled
        assert_allclose(jg(w, x), want)
    assert_allclose(funcgrad.grad(funcgrad.jit(loss(f)), argnums=(0, 1))(w, x), want)
    assert_allclose(funcgrad.jit(f)(w, x), _layer(w, x))


@pytest.mark.parametrize("name", ["default", "dots"])
def test_checkpoint_in_scan_and_fori_loop(name):
    w, x = _args(4)
    pol = POLICIES[name]

    def step(c, _):
        return fnp.tanh(w @ c), fnp.sum(c)

    def scanned(x, ck):
        body = funcgrad.checkpoint(step, policy=pol) if ck else step
        c, ys = funcgrad.scan(body, x, None, length=4)
        return fnp.sum(c) + fnp.sum(ys)

    assert_allclose(funcgrad.grad(scanned)(x, True), funcgrad.grad(scanned)(x, False))
    check_grads(lambda x: scanned(x, True), (x,), order=2)

    def looped(x):
        body = funcgrad.checkpoint(lambda c: fnp.sin(w @ c), policy=pol)
        return fnp.sum(funcgrad.fori_loop(0, 3, lambda i, c: body(c), x))

    check_grads(looped, (x,), order=1)


def test_nested_checkpoints_and_closures():
    x = dev(np.array([0.3, -0.7, 1.1]))
    inner = funcgrad.checkpoint(lambda y: fnp.sin(fnp.cos(y)))
    outer = funcgrad.checkpoint(lambda y: inner(inner(y)) * y, policy=cp.dots_saveable)
    check_grads(outer, (x,), order=2)

    def closes_over(a):  # a tracer of grad, closed over by the checkpointed function
        g = funcgrad.checkpoint(lambda y: fnp.sin(a * y) * a)
        return fnp.sum(g(x))

    want = funcgrad.grad(lambda a: fnp.sum(fnp.sin(a * x) * a))(1.5)
    assert_allclose(funcgrad.grad(closes_over)(1.5), want)
    check_grads(closes_over, (1.5,), order=2)


def test_pytrees_static_args_kwargs_and_ints():
    x = dev(np.array([0.5, -1.0, 2.0]))

    def h(d, n, *, scale):
        return {"a": d["u"] * n * scale, "b": (fnp.sin(d["v"]), d["k"] + 1)}

    hc = funcgrad.checkpoint(h, static_argnums=(1,))

    def loss(fn, u, v):
        out = fn({"u": u, "v": v, "k": np.arange(3)}, 3, scale=2.0)
        return fnp.sum(out["a"]) + fnp.sum(out["b"][0])

    got = funcgrad.grad(lambda u, v: loss(hc, u, v), argnums=(0, 1))(x, x)
    assert_allclose(got, funcgrad.grad(lambda u, v: loss(h, u, v), argnums=(0, 1))(x, x))
    # an int output and a Python-scalar input
    out = funcgrad.jit(lambda u: hc({"u": u, "v": u, "k": np.arange(3)}, 3, scale=2.0))(x)
    assert out["b"][1].dtype == np.arange(3).dtype
    assert float(funcgrad.grad(funcgrad.checkpoint(lambda s: s * s))(3.0)) == 6.0
    # a function returning its input and a literal
    y, t = funcgrad.jvp(funcgrad.checkpoint(lambda y: (y, 2.0)), (x,), (x,))
    assert_allclose(y[0], x)
    assert_allclose(t[0], x)


def test_eager_call_is_plain_call():
    x = dev(np.array([0.1, 0.2]))
    assert_allclose(funcgrad.checkpoint(fnp.sin)(x), fnp.sin(x))
    assert funcgrad.remat is funcgrad.checkpoint


def test_errors():
    with pytest.raises(TypeError, match="policy must be a callable"):
        funcgrad.checkpoint(fnp.sin, policy=3)
    with pytest.raises(TypeError, match="static_argnums"):
        funcgrad.grad(lambda y: funcgrad.checkpoint(lambda y, s: fnp.sum(y))(y, "s"))(1.0)
    with pytest.raises(ValueError, match="out of range"):
        funcgrad.grad(funcgrad.checkpoint(lambda y: y, static_argnums=3))(1.0)
    with pytest.raises(TypeError, match="name must be a string"):
        funcgrad.checkpoint_name(1.0, 3)

    def bad_policy(prim, *avals, **params):
        raise TypeError("boom")

    with pytest.raises(TypeError, match="policy bad_policy failed"):
        funcgrad.grad(funcgrad.checkpoint(fnp.sin, policy=bad_policy))(1.0)


def test_policy_as_function_of_prim_and_params_dict():
    seen = []

    def policy(prim, params):
        seen.append(type(params))
        return prim is dot_general_p

    w, x = _args()
    f = funcgrad.checkpoint(_layer, policy=policy)
    want = funcgrad.grad(lambda w: fnp.sum(_layer(w, x)))(w)
    assert_allclose(funcgrad.grad(lambda w: fnp.sum(f(w, x)))(w), want)
    assert seen and all(t is dict for t in seen)


def test_policies_direct():
    dn = (((1,), (0,)), ((), ()))
    batched = (((2,), (1,)), ((0,), (0,)))
    assert cp.dots_saveable(dot_general_p, dimension_numbers=batched)
    assert cp.checkpoint_dots is cp.dots_saveable
    assert cp.dots_with_no_batch_dims_saveable(dot_general_p, dimension_numbers=dn)
    assert not cp.dots_with_no_batch_dims_saveable(dot_general_p, dimension_numbers=batched)
    assert not cp.nothing_saveable(dot_general_p, dimension_numbers=dn)
    assert cp.everything_saveable(name_p, name="h")
    assert cp.save_only_these_names("a", "b") == cp.save_only_these_names("b", "a")
    assert hash(cp.save_only_these_names("a")) == hash(cp.save_only_these_names("a"))
    assert not cp.save_only_these_names("a")(dot_general_p, dimension_numbers=dn)


# ---------------------------------------------------------------------------------------------
# The memory drop: bytes of the residuals

L, D, B = 20, 256, 4


def _chain(ws, h):
    for w in ws:
        h = fnp.tanh(w @ h)
    return h


def _chain_inputs():
    rng = np.random.default_rng(0)
    ws = [dev(rng.normal(size=(D, D)) / np.sqrt(D)) for _ in range(L)]
    return ws, dev(rng.normal(size=(D, B)))


def _nbytes(values, exclude=()) -> int:
    """Bytes of the distinct arrays in ``values`` that are not (by identity) in ``exclude``."""
    ex = {id(e) for e in exclude}
    seen = {id(v): v.nbytes for v in values if hasattr(v, "nbytes") and id(v) not in ex}
    return sum(seen.values())


def _variants():
    return {
        "none": _chain,
        "nothing": funcgrad.checkpoint(_chain),
        "dots": funcgrad.checkpoint(_chain, policy=cp.dots_saveable),
        "everything": funcgrad.checkpoint(_chain, policy=cp.everything_saveable),
    }


def test_residual_bytes_drop_with_linearize():
    ws, h = _chain_inputs()
    inputs = [*ws, h]
    total, extra = {}, {}
    for name, fn in _variants().items():
        r = linearize_flat(lambda *a, fn=fn: [fn(list(a[:-1]), a[-1])], inputs)
        total[name] = _nbytes(r.jaxpr.consts)
        extra[name] = _nbytes(r.jaxpr.consts, exclude=inputs)
    in_bytes = _nbytes(inputs)
    act = D * B * 8  # one activation
    # nothing_saveable keeps exactly the inputs: no intermediate survives the forward pass.
    assert extra["nothing"] == 0
    assert total["nothing"] == in_bytes
    # dots_saveable keeps one activation per layer (the matmul result), no more.
    assert extra["dots"] == L * act
    # Without checkpointing: about two per layer (tanh's output and its derivative).
    assert extra["none"] >= 2 * (L - 1) * act
    assert in_bytes == total["nothing"] < total["dots"] < total["none"]
    # everything_saveable is the same as not checkpointing.
    assert total["everything"] == total["none"]


def test_residual_bytes_drop_with_vjp_flat():
    ws, h = _chain_inputs()
    inputs = [*ws, h]
    extra = {}
    results = {}
    for name, fn in _variants().items():
        outs, f_vjp, lin = vjp_flat(lambda *a, fn=fn: [fnp.sum(fn(list(a[:-1]), a[-1]))],
                                    inputs)
        extra[name] = _nbytes(lin.jaxpr.consts, exclude=inputs)
        results[name] = f_vjp([dev(np.ones(()))])
    assert extra["nothing"] == 0 < extra["dots"] < extra["none"]
    for name in ("nothing", "dots", "everything"):
        assert_allclose(results[name], results["none"], rtol=1e-10, atol=1e-12)


def test_residual_bytes_drop_on_the_tape(monkeypatch):
    """The eager tape linearizes a remat node on its own: the same residual saving."""
    recorded = []
    orig = eager_vjp.linearize_flat

    def recording(f, primals):
        r = orig(f, primals)
        recorded.append(r)
        return r

    monkeypatch.setattr(eager_vjp, "linearize_flat", recording)
    ws, h = _chain_inputs()
    inputs = [*ws, h]
    extra, grads = {}, {}
    for name, fn in _variants().items():
        recorded.clear()
        _, f_vjp, _ = eager_vjp.vjp_tape(lambda *a, fn=fn: [fnp.sum(fn(list(a[:-1]), a[-1]))],
                                         inputs)
        grads[name] = f_vjp([dev(np.ones(()))])
        extra[name] = sum(_nbytes(r.jaxpr.consts, exclude=inputs) for r in recorded)
        if name != "none":
            assert len(recorded) == 1  # one node: the remat call
    assert extra["nothing"] == 0
    assert extra["dots"] == L * D * B * 8
    assert extra["everything"] > extra["dots"]
    for name in ("nothing", "dots", "everything"):
        assert_allclose(grads[name], grads["none"], rtol=1e-10, atol=1e-12)
    # and the public grad (which may route through the tape) agrees
    g = funcgrad.grad(lambda ws, h: fnp.sum(_variants()["nothing"](ws, h)))(ws, h)
    assert_allclose(g, grads["none"][:L], rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# Recomputation happens (and only where the policy says)

_count = {"n": 0}


def _counted_sin_impl(x):
    _count["n"] += 1
    return [xp_for(x).sin(x)]


counted_sin_p = Primitive("test_remat_counted_sin")
counted_sin_p.def_impl(_counted_sin_impl)
counted_sin_p.def_abstract_eval(lambda a: [a])
defjvp(counted_sin_p, lambda g, ans, x: mul(g, cos(x)))
batching.batch_rules[counted_sin_p] = lambda n, vals, dims: (
    [bind1(counted_sin_p, vals[0])], [dims[0]])


def _csin(x):
    return bind1(counted_sin_p, x)


def _evals(fn, x) -> tuple[int, int]:
    """Evaluations of counted_sin in the forward pass and in the backward pass."""
    _count["n"] = 0
    _, f_vjp, _ = vjp_flat(lambda x: [fnp.sum(fn(x))], [x])
    fwd = _count["n"]
    f_vjp([dev(np.ones(()))])
    return fwd, _count["n"] - fwd


def test_recomputation_is_counted():
    x = dev(np.array([0.2, 0.4, 0.6]))

    def f(x):
        return _csin(_csin(x))  # the outer sin's derivative needs the inner one's value

    assert _evals(f, x) == (2, 0)
    assert _evals(funcgrad.checkpoint(f), x) == (2, 1)
    assert _evals(funcgrad.checkpoint(f, policy=cp.everything_saveable), x) == (2, 0)
    named = funcgrad.checkpoint(lambda x: _csin(funcgrad.checkpoint_name(_csin(x), "s")),
                                policy=cp.save_only_these_names("s"))
    assert _evals(named, x) == (2, 0)


def test_linear_jaxpr_holds_the_nonlinear_recomputation():
    ws, h = _chain_inputs()
    ws = ws[:3]
    for name, n_tanh in (("nothing", 3), ("dots", 3), ("everything", 0)):
        fn = _variants()[name]
        r = linearize_flat(lambda *a, fn=fn: [fn(list(a[:-1]), a[-1])], [*ws, h])
        (eqn,) = _eqns(r.jaxpr, remat_p, deep=False)
        body = eqn.params["jaxpr"]
        assert len(_eqns(body, funcgrad.ops.elementwise.tanh_p)) == n_tanh, name
        # the only residuals: inputs, plus the saved matmul results for dots_saveable
        n_saved = {"nothing": 0, "dots": 3, "everything": None}[name]
        if n_saved is not None:
            assert len(eqn.invars) == len(ws) + 1 + n_saved + len(ws) + 1


def test_policies_visible_in_make_jaxpr_of_the_gradient():
    ws, h = _chain_inputs()
    ws, h = ws[:3], h[:, :2]

    def grad_jaxpr(policy):
        f = funcgrad.checkpoint(_chain, policy=policy)
        return funcgrad.make_jaxpr(funcgrad.grad(lambda ws, h: fnp.sum(f(ws, h))))(ws, h)

    shapes = {}
    for name in ("nothing", "dots", "everything"):
        closed = grad_jaxpr(POLICIES[name])
        fwd, bwd = _eqns(closed, remat_p, deep=False)
        text = str(closed)
        assert "remat[" in text and f"policy={POLICIES[name].__name__}" in text
        # forward: what is saved comes out of the forward call
        shapes[name] = (len(fwd.outvars), len(_eqns(bwd.params["jaxpr"],
                                                    funcgrad.ops.elementwise.tanh_p)))
    assert shapes["nothing"] == (1, 3)  # the output only; every tanh recomputed backward
    assert shapes["dots"] == (4, 3)  # output + 3 matmul results; tanh recomputed from them
    assert shapes["everything"][1] == 0  # nothing recomputed
    assert shapes["everything"][0] > shapes["dots"][0]
    # a policy that saves nothing recomputes the matmuls too (dot_general outside the
    # linear part); dots_saveable does not.
    nothing_bwd = _eqns(grad_jaxpr(cp.nothing_saveable), remat_p, deep=False)[1]
    dots_bwd = _eqns(grad_jaxpr(cp.dots_saveable), remat_p, deep=False)[1]
    n_dots = len(_eqns(nothing_bwd.params["jaxpr"], dot_general_p))
    assert n_dots > len(_eqns(dots_bwd.params["jaxpr"], dot_general_p))


def test_make_jaxpr_shows_remat_indented():
    text = str(funcgrad.make_jaxpr(funcgrad.checkpoint(lambda x: fnp.sin(fnp.sin(x))))(1.0))
    lines = text.splitlines()
    assert "remat[\n      jaxpr={" in text
    assert any(ln.startswith("      ") and "sin" in ln for ln in lines)
    assert "policy=nothing_saveable" in text


def test_saved_residuals_as_jax():
    # jax.ad_checkpoint.print_saved_residuals on the same functions lists the same values
    # (arguments first, then the operations' results; JAX's lines also give a column)
    from funcgrad.ad_checkpoint import checkpoint_name, saved_residuals

    def f(x, w):
        h = checkpoint_name(fnp.sin(x @ w), "h")
        return fnp.sum(fnp.cos(h) * x)

    x, w = np.ones((2, 2)), np.ones((2, 2))
    got = [(a.str_short(), d.split(" from <")[0].split(" from /")[0])
           for a, d in saved_residuals(f, x, w)]
    assert got[:2] == [("f64[2,2]", "from the argument x"), ("f64[2,2]", "from the argument w")]
    assert sorted(got[2:]) == [("f64[2,2]", "output of cos"), ("f64[2,2]", "output of cos"),
                               ("f64[2,2]", "output of sin")]
    assert [d for _, d in saved_residuals(funcgrad.checkpoint(f), x, w)] == [
        "from the argument x", "from the argument w"]
    named = saved_residuals(funcgrad.checkpoint(
        f, policy=funcgrad.checkpoint_policies.save_only_these_names("h")), x, w)
    assert named[2][1].startswith("named 'h' from ")
    dots = saved_residuals(funcgrad.checkpoint(
        f, policy=funcgrad.checkpoint_policies.dots_saveable), x, w)
    assert dots[2][1].startswith("output of dot_general from ")
    assert [d for _, d in saved_residuals(lambda d: fnp.sum(fnp.exp(d["a"])),
                                          {"a": np.ones(2)})][0].startswith("output of exp")
    assert [d for _, d in saved_residuals(lambda p: fnp.sum(p["a"] * p["b"]),
                                          {"a": np.ones(2), "b": np.ones(2)})] == [
        "from the argument p['a']", "from the argument p['b']"]


def test_saved_residuals_name_line_and_column_as_jax() -> None:
    # JAX 0.10.2 prints "output of cos from file.py:LINE:COL (f)", the column (0-based) of the
    # expression: the call on `y = sin(x)`'s line, the product on the return line (this
    # file indents them by 8)
    from funcgrad.ad_checkpoint import saved_residuals

    def f(x):
        y = fnp.sin(x)
        return fnp.cos(y) * x

    line = f.__code__.co_firstlineno
    got = sorted(d.split(" from ")[1] for _, d in saved_residuals(f, np.ones(3))[1:])
    assert got == [f"{__file__}:{line + 1}:12 (f)", f"{__file__}:{line + 2}:15 (f)",
                   f"{__file__}:{line + 2}:15 (f)"]


def test_policy_may_answer_saveable_recompute_offloadable() -> None:
    # JAX's policy answers (jax.ad_checkpoint.Saveable / Recompute / Offloadable): Recompute
    # is a truthy object, so it must be read by identity. JAX 0.10 saves sin's output and
    # the argument, and the gradient is [-3.22144962, 2.42061311] for x = [1, 2]
    from funcgrad.ad_checkpoint import Offloadable, Recompute, Saveable, saved_residuals

    def f(x):
        return fnp.sum(fnp.cos(fnp.sin(x) * 2) * 3)

    x = np.array([1.0, 2.0])
    for answer in (Saveable, Offloadable("device", "pinned_host")):
        def policy(prim, *avals, answer=answer, **params):
            return answer if prim.name == "sin" else Recompute

        g = funcgrad.checkpoint(f, policy=policy)
        assert [w.split(" from")[0] for _, w in saved_residuals(g, x)] == [
            "from the argument x", "output of sin"]
        np.testing.assert_allclose(np.asarray(funcgrad.grad(g)(x)),
                                   [-3.22144962, 2.42061311], rtol=1e-8)
    everything_recomputed = funcgrad.checkpoint(f, policy=lambda p, *a, **k: Recompute)
    assert [w for _, w in saved_residuals(everything_recomputed, x)] == ["from the argument x"]
    both = funcgrad.checkpoint_policies.save_from_both_policies(
        lambda p, *a, **k: Recompute, lambda p, *a, **k: Saveable if p.name == "sin" else False)
    assert len(saved_residuals(funcgrad.checkpoint(f, policy=both), x)) == 2
    assert repr(Saveable) == "Saveable" and repr(Recompute) == "Recompute"
