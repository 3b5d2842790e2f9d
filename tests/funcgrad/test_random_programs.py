"""Hypothesis-generated random programs through every transformation.

A program is 3-8 operations drawn from a list of differentiable ``funcgrad.numpy`` functions
(elementwise, reductions over random axes, reshapes, transposes, products, indexing,
concatenation, ``where`` with a fixed mask, sorting, indexed updates...) applied to random
shapes. Each program must satisfy the identities that tie the transformations together:
numerical derivatives, ``<u, J v>`` both ways, ``jacfwd == jacrev``, a symmetric Hessian equal
to ``jacfwd(grad)``, ``vmap(grad)`` equal to a loop, ``grad`` of a vmapped sum, ``jit`` equal
to eager, ``linearize`` equal to ``jvp``, and ``linear_transpose(f_jvp)`` equal to the VJP.
Larger inputs (16+ elements) exercise the structured-basis path of the Jacobians.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers import DEVICE, assert_allclose, dev, host
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.interpreters import batching
from funcgrad.test_util import check_grads

EXACT = dict(rtol=1e-9, atol=1e-10)


def _mask(shape: tuple[int, ...]) -> Any:
    n = int(np.prod(shape, dtype=np.int64))
    return dev((np.arange(n) % 3 != 1).reshape(shape))


def _idx(*i: int) -> Any:
    return dev(np.array(i))


def _ax(h: Any, k: int) -> int:
    return k % h.ndim


def _squash(h: Any) -> Any:
    # Keeps values O(1) so finite differences stay accurate after amplifying operations.
    return fnp.tanh(h)


def _logsumexp(h: Any, axis: int) -> Any:
    m = fnp.max(h, axis=axis, keepdims=True)
    return _squash(fnp.squeeze(m, axis) + fnp.log(fnp.sum(fnp.exp(h - m), axis=axis)))


# name -> (applicable(shape), op(h, k)); k is a random int choosing axes and variants.
OPS: dict[str, tuple[Callable[[tuple], bool], Callable[[Any, int], Any]]] = {
    "sin": (lambda s: True, lambda h, k: fnp.sin(h)),
    "tanh": (lambda s: True, lambda h, k: fnp.tanh(h)),
    "exp": (lambda s: True, lambda h, k: fnp.exp(fnp.tanh(h))),
    "square": (lambda s: True, lambda h, k: _squash(h * h)),
    "div": (lambda s: True, lambda h, k: h / (1.5 + fnp.cos(h))),
    "pow": (lambda s: True, lambda h, k: _squash((h * h + 1.0) ** 1.5)),
    "sqrt": (lambda s: True, lambda h, k: fnp.sqrt(h * h + 0.5)),
    "abs_mul": (lambda s: True, lambda h, k: _squash(fnp.abs(h) * h)),
    "maximum": (lambda s: True, lambda h, k: fnp.maximum(h, 0.3 * fnp.sin(h))),
    "clip": (lambda s: True, lambda h, k: fnp.clip(h, -0.8, 0.9)),
    "where": (lambda s: True, lambda h, k: fnp.where(_mask(h.shape), h, _squash(h * h))),
    "add_flip": (lambda s: len(s) > 0,
                 lambda h, k: h + 0.5 * fnp.flip(h, _ax(h, k))),
    "sum": (lambda s: len(s) > 0, lambda h, k: _squash(fnp.sum(h, axis=_ax(h, k)))),
    "mean_kd": (lambda s: len(s) > 0,
                lambda h, k: h - fnp.mean(h, axis=_ax(h, k), keepdims=True)),
    "max_kd": (lambda s: len(s) > 0,
               lambda h, k: _squash(h * fnp.max(h, axis=_ax(h, k), keepdims=True))),
    "var": (lambda s: len(s) > 0, lambda h, k: _squash(fnp.var(h, axis=_ax(h, k)))),
    "logsumexp": (lambda s: len(s) > 0, lambda h, k: _logsumexp(h, _ax(h, k))),
    "prod": (lambda s: len(s) > 0 and s[-1] < 5, lambda h, k: _squash(fnp.prod(h, axis=-1))),
    "cumsum": (lambda s: len(s) > 0, lambda h, k: _squash(fnp.cumsum(h, axis=_ax(h, k)))),
    "reshape": (lambda s: len(s) > 0,
                lambda h, k: fnp.reshape(h, (-1,)) if k % 2 else fnp.reshape(h, h.shape[::-1])),
    "transpose": (lambda s: len(s) > 1, lambda h, k: fnp.transpose(h)),
    "matmul": (lambda s: len(s) == 2,
               lambda h, k: _squash(h @ h.T if k % 2 else h.T @ h)),
    "outer": (lambda s: len(s) == 1, lambda h, k: _squash(fnp.outer(h, fnp.sin(h)))),
    "einsum": (lambda s: len(s) == 2, lambda h, k: _squash(fnp.einsum("ij,ij->i", h, fnp.cos(h)))),
    "index": (lambda s: len(s) > 0 and s[0] > 1,
              lambda h, k: (h[1:], h[::-1], h[_idx(0, 1, 0)])[k % 3]),
    "take": (lambda s: len(s) > 0, lambda h, k: fnp.take(h, _idx(0, 0), axis=_ax(h, k))),
    "concat": (lambda s: len(s) > 0,
               lambda h, k: fnp.concatenate([h, fnp.sin(h)], axis=_ax(h, k))),
    "stack": (lambda s: len(s) < 3,
              lambda h, k: fnp.stack([h, 2.0 * h], axis=k % (h.ndim + 1))),
    "expand": (lambda s: len(s) < 3,
               lambda h, k: fnp.expand_dims(h, 0) * fnp.ones((2,) + (1,) * h.ndim, h.dtype)),
    "bcast_add": (lambda s: len(s) > 0, lambda h, k: _squash(h + fnp.sum(h, axis=0))),
    "sort": (lambda s: len(s) > 0, lambda h, k: fnp.sort(h, axis=_ax(h, k))),
    "at_set": (lambda s: len(s) > 0 and s[0] > 1, lambda h, k: fnp.at(h)[0].set(2.0 * h[1])),
    "at_add": (lambda s: len(s) > 0 and s[0] > 2,
               lambda h, k: fnp.at(h)[_idx(0, 1, 0)].add(fnp.sin(h[:3]))),
}

SHAPES = [(), (1,), (3,), (2, 3), (3, 1), (2, 2, 2)]
BIG_SHAPES = [(16,), (4, 4), (2, 9)]


def build(prog: list[tuple[str, int]], combine: int) -> Callable[[Any, Any], Any]:
    """The program as a function of (x, y); inapplicable steps are skipped."""

    def f(x: Any, y: Any) -> Any:
        h = (x * y, x + fnp.sin(y), x / (2.0 + fnp.tanh(y)))[combine]
        for name, k in prog:
            ok, op = OPS[name]
            if ok(h.shape) and 0 < h.size <= 200:
                h = op(h, k)
        return h

    return f


programs = st.lists(
    st.tuples(st.sampled_from(sorted(OPS)), st.integers(0, 5)), min_size=3, max_size=8
)


def _args(seed: int, shape: tuple[int, ...], y_drop: bool, dtype: Any = np.float64):
    rng = np.random.default_rng(seed)
    yshape = shape[1:] if y_drop and shape else shape
    x = rng.uniform(-1.5, 1.5, shape).astype(dtype)
    y = rng.uniform(-1.5, 1.5, yshape).astype(dtype)
    return rng, x, y


def _scalar(f: Callable[..., Any]) -> Callable[..., Any]:
    return lambda *a: fnp.sum(fnp.sin(f(*a)))


def _rand(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any = np.float64) -> Any:
    return dev(rng.standard_normal(shape).astype(dtype))


# ---------------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(programs, st.sampled_from(SHAPES), st.booleans(), st.integers(0, 2), st.integers(0, 99))
def test_first_order_identities(prog, shape, y_drop, combine, seed) -> None:
    f = build(prog, combine)
    rng, x, y = _args(seed, shape, y_drop)
    x, y = dev(x), dev(y)
    out = f(x, y)
    # numerical derivatives, forward and reverse, first order
    check_grads(f, (x, y), order=1, modes=("fwd", "rev"))
    # <u, J v> computed by jvp and by vjp
    tx, ty = _rand(rng, x.shape), _rand(rng, y.shape)
    u = _rand(rng, np.shape(out))
    y_out, jv = funcgrad.jvp(f, (x, y), (tx, ty))
    _, pullback = funcgrad.vjp(f, x, y)
    ux, uy = pullback(u)
    lhs = float(np.sum(host(u) * host(jv)))
    rhs = float(np.sum(host(ux) * host(tx)) + np.sum(host(uy) * host(ty)))
    assert abs(lhs - rhs) <= 1e-9 * (1 + abs(lhs))
    assert_allclose(y_out, out, **EXACT)
    # linearize == jvp; linear_transpose(f_jvp) == vjp
    y_lin, f_jvp = funcgrad.linearize(f, x, y)
    assert_allclose(f_jvp(tx, ty), jv, **EXACT)
    assert_allclose(funcgrad.linear_transpose(f_jvp, x, y)(u), (ux, uy), **EXACT)
    # jacfwd == jacrev, both arguments
    assert_allclose(funcgrad.jacfwd(f, argnums=(0, 1))(x, y),
                    funcgrad.jacrev(f, argnums=(0, 1))(x, y), **EXACT)


@settings(max_examples=40, deadline=None)
@given(programs, st.sampled_from(SHAPES), st.booleans(), st.integers(0, 2), st.integers(0, 99))
def test_second_order_and_vmap_identities(prog, shape, y_drop, combine, seed) -> None:
    fs = _scalar(build(prog, combine))
    rng, x, y = _args(seed, shape, y_drop)
    x, y = dev(x), dev(y)
    g = funcgrad.grad(fs)(x, y)
    # the eager tape and linearize + transpose agree
    with funcgrad.config.override(funcgrad.config.eager_tape, False):
        assert_allclose(funcgrad.grad(fs)(x, y), g, **EXACT)
    # Hessian: symmetric, == jacfwd(grad) == jacrev(grad); hvp == H v
    h = funcgrad.hessian(fs)(x, y)
    n = int(np.prod(np.shape(x), dtype=np.int64))
    hm = np.asarray(host(h)).reshape(n, n)
    np.testing.assert_allclose(hm, hm.T, rtol=1e-9, atol=1e-10)
    assert_allclose(funcgrad.jacfwd(funcgrad.grad(fs))(x, y), h, **EXACT)
    assert_allclose(funcgrad.jacrev(funcgrad.grad(fs))(x, y), h, **EXACT)
    v = _rand(rng, x.shape)
    _, (hv,) = funcgrad.hvp(lambda a: fs(a, y), (x,), (v,))
    assert_allclose(hv, (hm @ np.asarray(host(v)).reshape(n)).reshape(np.shape(x)),
                    rtol=1e-9, atol=1e-9)
    # vmap(grad) == loop of grad, batch axis first and last; grad of a vmapped sum
    xs = rng.uniform(-1.5, 1.5, (3,) + tuple(np.shape(x)))
    gv = funcgrad.vmap(funcgrad.grad(fs), in_axes=(0, None))(dev(xs), y)
    loop = np.stack([host(funcgrad.grad(fs)(dev(xs[i]), y)) for i in range(3)])
    assert_allclose(gv, loop, **EXACT)
    if xs.ndim > 1:
        gl = funcgrad.vmap(funcgrad.grad(fs), in_axes=(-1, None), out_axes=-1)(
            dev(np.moveaxis(xs, 0, -1)), y)
        assert_allclose(gl, np.moveaxis(loop, 0, -1), **EXACT)
    gs = funcgrad.grad(lambda a: fnp.sum(funcgrad.vmap(fs, in_axes=(0, None))(a, y)))(dev(xs))
    assert_allclose(gs, loop, **EXACT)


@settings(max_examples=30, deadline=None)
@given(programs, st.sampled_from(SHAPES), st.booleans(), st.integers(0, 2), st.integers(0, 99))
def test_jit_agrees_with_eager(prog, shape, y_drop, combine, seed) -> None:
    f = build(prog, combine)
    fs = _scalar(f)
    rng, x, y = _args(seed, shape, y_drop)
    x, y = dev(x), dev(y)
    g = funcgrad.grad(fs)(x, y)
    assert_allclose(funcgrad.jit(f)(x, y), f(x, y), **EXACT)
    assert_allclose(funcgrad.jit(funcgrad.grad(fs))(x, y), g, **EXACT)
    assert_allclose(funcgrad.grad(funcgrad.jit(fs))(x, y), g, **EXACT)
    xs = dev(rng.uniform(-1.5, 1.5, (2,) + tuple(np.shape(x))))
    assert_allclose(funcgrad.vmap(funcgrad.jit(funcgrad.grad(fs)), in_axes=(0, None))(xs, y),
                    funcgrad.vmap(funcgrad.grad(fs), in_axes=(0, None))(xs, y), **EXACT)


@pytest.mark.skipif(DEVICE != "cpu", reason="float32 program sweep runs on the NumPy pass")
@settings(max_examples=30, deadline=None)
@given(programs, st.sampled_from(SHAPES), st.booleans(), st.integers(0, 2), st.integers(0, 99))
def test_float32_programs_keep_float32(prog, shape, y_drop, combine, seed) -> None:
    f = build(prog, combine)
    fs = _scalar(f)
    rng, x, y = _args(seed, shape, y_drop, np.float32)
    assert f(x, y).dtype == np.float32
    for g in (funcgrad.grad(fs)(x, y), funcgrad.jit(funcgrad.grad(fs))(x, y),
              funcgrad.jacfwd(f)(x, y), funcgrad.jacrev(f)(x, y),
              funcgrad.vjp(f, x, y)[1](np.ones(np.shape(f(x, y)), np.float32))[0],
              funcgrad.jvp(f, (x, y), (x, y))[1]):
        assert type(g) is np.ndarray and g.dtype == np.float32
    assert_allclose(funcgrad.grad(fs)(x, y), funcgrad.grad(fs)(x.astype(np.float64), y),
                    rtol=2e-3, atol=2e-3, check_dtype=False)


def _dense(fn: Callable[[], Any]) -> Any:
    old = batching._MIN_STRUCTURED_SIZE
    batching._MIN_STRUCTURED_SIZE = 10**9
    try:
        return fn()
    finally:
        batching._MIN_STRUCTURED_SIZE = old


@settings(max_examples=20, deadline=None)
@given(programs, st.sampled_from(BIG_SHAPES), st.integers(0, 2), st.integers(0, 99))
def test_structured_basis_matches_dense(prog, shape, combine, seed) -> None:
    # 16+ inputs: jacfwd/jacrev/hessian push a one-hot structured basis; results must be
    # exactly those of the dense identity, also for the plain vmap of an identity matrix.
    f = build(prog, combine)
    rng, x, y = _args(seed, shape, False)
    a = rng.standard_normal((3,) + shape)
    x, y, a = dev(x), dev(y), dev(a)

    def lin(x: Any, y: Any) -> Any:
        return f(x, y) + fnp.sum(fnp.tensordot(a, 2.0 * x, axes=x.ndim))

    def makers(g: Callable[..., Any]) -> list[Callable[[], Any]]:
        return [lambda: funcgrad.jacfwd(g, argnums=(0, 1))(x, y),
                lambda: funcgrad.jacrev(g, argnums=(0, 1))(x, y),
                lambda: funcgrad.hessian(_scalar(g))(x, y),
                lambda: funcgrad.vmap(lambda e: g(e.reshape(x.shape), y))(
                    dev(np.eye(x.size)))]

    for make in makers(f) + makers(lin):
        assert_allclose(make(), _dense(make), rtol=1e-12, atol=1e-12)
