"""The composition matrix: jvp, linearize, vjp, grad, grad∘grad, jvp∘grad, grad∘jvp, vjp∘grad,
hessian, hvp, vhp, jacfwd, jacrev and vmap of them agree with each other and with numerical
derivatives, on base functions with pytree inputs and outputs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.test_util import check_grads, numerical_jvp

EXACT = dict(rtol=1e-9, atol=1e-11)
NUMERIC = dict(rtol=1e-5, atol=1e-6)


def _rng(name: str) -> np.random.Generator:
    return np.random.default_rng(sum(map(ord, name)))


# -- base functions: (f, args); f(*args) -> pytree -------------------------------------------


def mlp(params, x):
    h = fnp.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"]
    return {"out": out, "reg": 0.5 * fnp.sum(params["w1"] ** 2)}


def elementwise_chain(xy):
    x, y = xy
    return (fnp.exp(fnp.sin(x) * y), fnp.log1p(x * x) / (1.0 + y * y))


def quad_and_softmax(a, x):
    e = fnp.exp(x - fnp.max(x))
    return {"quad": x @ (a.T @ (a @ x)), "soft": e / fnp.sum(e)}


def index_concat(x):
    return fnp.concatenate([x[:2] * x[1:3], fnp.stack([fnp.sum(x), fnp.prod(x[::2])])])


@funcgrad.custom_vjp
def _softplus(x):
    return fnp.log1p(fnp.exp(x))


_softplus.defvjp(lambda x: (_softplus(x), x),
                 lambda x, g: (g / (1.0 + fnp.exp(-x)),))


@funcgrad.custom_jvp
def _cube(x):
    return x * x * x


_cube.defjvp(lambda p, t: (_cube(p[0]), 3.0 * p[0] ** 2 * t[0]))


def with_custom_rules(x, s):
    return {"a": _softplus(x) * s, "b": fnp.sum(_cube(x * s))}


def piecewise(x):
    # away from the kinks: where/maximum/abs are smooth at these points
    return fnp.where(x > 0, x ** 3, fnp.sin(x)) + fnp.maximum(x, 0.1 * x) * fnp.abs(x)


def broadcast_reduce(a, v):
    return fnp.mean(a * v[:, None] + fnp.cos(a), axis=0), fnp.std(a, axis=1)


R = np.random.default_rng(0)
CASES: dict[str, tuple[Callable[..., Any], tuple]] = {
    "mlp": (mlp, ({"w1": R.normal(size=(3, 4)), "b1": R.normal(size=4),
                   "w2": R.normal(size=(4, 2))}, R.normal(size=(5, 3)))),
    "elementwise_chain": (elementwise_chain, ((R.normal(size=3), R.normal(size=3)),)),
    "quad_and_softmax": (quad_and_softmax, (R.normal(size=(2, 3)), R.normal(size=3))),
    "index_concat": (index_concat, (R.uniform(0.5, 1.5, size=5),)),
    "with_custom_rules": (with_custom_rules, (R.normal(size=3), 0.7)),
    "piecewise": (piecewise, (np.array([-1.3, -0.4, 0.6, 1.2]),)),
    "broadcast_reduce": (broadcast_reduce, (R.normal(size=(3, 4)), R.normal(size=3))),
}
NAMES = list(CASES)


# -- pytree helpers ---------------------------------------------------------------------------


def _rand_like(tree: Any, rng: np.random.Generator) -> Any:
    def r(x: Any) -> Any:
        if isinstance(x, float):
            return float(rng.normal())
        return dev(rng.normal(size=np.shape(host(x))))

    return tree_util.tree_map(r, tree)


def _vdot(a: Any, b: Any) -> float:
    return float(sum(np.sum(np.asarray(host(x)) * np.asarray(host(y)))
                     for x, y in zip(tree_util.tree_leaves(a), tree_util.tree_leaves(b))))


def _loss_of(f: Callable[..., Any], args: tuple, name: str) -> Callable[..., Any]:
    """A scalar function of ``args`` built on ``f`` (fixed random weights per output leaf)."""
    out = f(*args)
    ws = _rand_like(out, _rng(name + "w"))

    def loss(*a: Any) -> Any:
        o = f(*a)
        terms = [fnp.sum(leaf * w) + 0.25 * fnp.sum(leaf * leaf)
                 for leaf, w in zip(tree_util.tree_leaves(o), tree_util.tree_leaves(ws))]
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        return total

    return loss


def _setup(name: str) -> tuple[Callable, tuple, tuple]:
    f, args = CASES[name]
    args = dev(args)
    return f, args, _rand_like(args, _rng(name))


# -- first order ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_jvp_linearize_and_numerical_agree(name: str) -> None:
    f, args, t = _setup(name)
    y, dy = funcgrad.jvp(f, args, t)
    assert_allclose(y, f(*args), **EXACT)
    y2, f_jvp = funcgrad.linearize(f, *args)
    assert_allclose(y2, y, **EXACT)
    assert_allclose(f_jvp(*t), dy, **EXACT)
    assert_allclose(dy, numerical_jvp(f, args, t), check_dtype=False, **NUMERIC)


@pytest.mark.parametrize("name", NAMES)
def test_vjp_is_the_transpose_of_jvp(name: str) -> None:
    f, args, t = _setup(name)
    y, pull = funcgrad.vjp(f, *args)
    u = _rand_like(y, _rng(name + "u"))
    lhs = _vdot(u, funcgrad.jvp(f, args, t)[1])
    rhs = _vdot(pull(u), t)
    assert abs(lhs - rhs) <= 1e-9 * max(1.0, abs(lhs))
    # linear_transpose of the linearized map is the same pullback
    _, f_jvp = funcgrad.linearize(f, *args)
    assert_allclose(funcgrad.linear_transpose(f_jvp, *args)(u), pull(u), **EXACT)


@pytest.mark.parametrize("name", NAMES)
def test_jacfwd_equals_jacrev(name: str) -> None:
    f, args, _ = _setup(name)
    argnums = tuple(range(len(args)))
    assert_allclose(funcgrad.jacfwd(f, argnums)(*args), funcgrad.jacrev(f, argnums)(*args),
                    **EXACT)


@pytest.mark.parametrize("name", NAMES)
def test_grad_equals_vjp_jacrev_and_jvp(name: str) -> None:
    f, args, t = _setup(name)
    loss = _loss_of(f, args, name)
    argnums = tuple(range(len(args)))
    g = funcgrad.grad(loss, argnums)(*args)
    v, g2 = funcgrad.value_and_grad(loss, argnums)(*args)
    assert_allclose(g2, g, **EXACT)
    assert_allclose(v, loss(*args), **EXACT)
    _, pull = funcgrad.vjp(loss, *args)
    assert_allclose(pull(1.0), g, **EXACT)
    assert_allclose(funcgrad.jacrev(loss, argnums)(*args), g, **EXACT)
    assert_allclose(funcgrad.jacfwd(loss, argnums)(*args), g, **EXACT)
    dl = funcgrad.jvp(loss, args, t)[1]
    assert abs(float(host(dl)) - _vdot(g, t)) <= 1e-9 * max(1.0, abs(float(host(dl))))


# -- second order -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_second_order_compositions_agree(name: str) -> None:
    f, args, v = _setup(name)
    loss = _loss_of(f, args, name)
    argnums = tuple(range(len(args)))
    grad_all = funcgrad.grad(loss, argnums)

    # forward over reverse (jvp∘grad)
    hv = funcgrad.jvp(grad_all, args, v)[1]
    # hvp (forward over reverse, with the value)
    value, hv_api = funcgrad.hvp(loss, args, v)
    assert_allclose(value, loss(*args), **EXACT)
    assert_allclose(hv_api, hv, **EXACT)
    # reverse over forward (grad∘jvp)
    gj = funcgrad.grad(lambda *a: funcgrad.jvp(loss, a, v)[1], argnums)(*args)
    assert_allclose(gj, hv, **EXACT)
    # reverse over reverse (grad∘grad)
    gg = funcgrad.grad(lambda *a: _tree_vdot(grad_all(*a), v), argnums)(*args)
    assert_allclose(gg, hv, **EXACT)
    # vjp∘grad (vhp; the Hessian is symmetric)
    assert_allclose(funcgrad.vhp(loss, args, v)[1], hv, **EXACT)
    # linearize∘grad
    _, lin = funcgrad.linearize(grad_all, *args)
    assert_allclose(lin(*v), hv, **EXACT)
    # the full Hessian, contracted with v
    h = funcgrad.hessian(loss, argnums)(*args)
    assert_allclose(_contract(h, args, v), hv, **EXACT)
    # numerically
    assert_allclose(hv, numerical_jvp(grad_all, args, v), check_dtype=False, **NUMERIC)


def _tree_vdot(a: Any, b: Any) -> Any:
    terms = [fnp.sum(x * y) for x, y in zip(tree_util.tree_leaves(a), tree_util.tree_leaves(b))]
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return total


def _contract(h: Any, args: tuple, v: tuple) -> tuple:
    """sum_j H[i][j] . v[j] for a hessian with tuple argnums (nested input structures)."""
    arg_leaves, arg_tree = tree_util.tree_flatten(args)
    v_leaves = tree_util.tree_leaves(v)
    # h has the structure args (outer, the gradient's) containing args (inner) at each leaf.
    outer = arg_tree.flatten_up_to(h)
    out = []
    for a_i, row in zip(arg_leaves, outer):
        row_leaves = arg_tree.flatten_up_to(row)
        acc = np.zeros(np.shape(host(a_i)))
        for blk, a_j, v_j in zip(row_leaves, arg_leaves, v_leaves):
            nd = np.ndim(host(a_j))
            acc = acc + np.tensordot(np.asarray(host(blk)), np.asarray(host(v_j)), axes=nd)
        out.append(acc)
    return tree_util.tree_unflatten(arg_tree, out)


# -- batching and the numerical checker -------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_vmap_of_grad_and_jvp_matches_loop(name: str) -> None:
    f, args, _ = _setup(name)
    loss = _loss_of(f, args, name)
    argnums = tuple(range(len(args)))
    rng = _rng(name + "batch")
    batch = [tree_util.tree_map(
        lambda a: a + (0.05 * rng.normal() if isinstance(a, float) else
                       dev(0.05 * rng.normal(size=np.shape(host(a))))), args) for _ in range(3)]
    stacked = tree_util.tree_map(lambda *xs: dev(np.stack([np.asarray(host(x)) for x in xs])),
                                 *batch)
    got = funcgrad.vmap(funcgrad.grad(loss, argnums))(*stacked)
    want = [funcgrad.grad(loss, argnums)(*b) for b in batch]
    want = tree_util.tree_map(lambda *xs: np.stack([np.asarray(host(x)) for x in xs]), *want)
    assert_allclose(got, want, check_dtype=False, **EXACT)
    t = _rand_like(args, _rng(name))
    got_j = funcgrad.vmap(lambda *a: funcgrad.jvp(f, a, t)[1])(*stacked)
    want_j = [funcgrad.jvp(f, b, t)[1] for b in batch]
    want_j = tree_util.tree_map(lambda *xs: np.stack([np.asarray(host(x)) for x in xs]), *want_j)
    assert_allclose(got_j, want_j, check_dtype=False, **EXACT)


@pytest.mark.parametrize("name", NAMES)
def test_check_grads_order_2(name: str) -> None:
    f, args, _ = _setup(name)
    check_grads(f, args, order=2)
