"""The generic jaxpr transformations every higher-order primitive reuses."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.interpreters import jaxpr_rules as jr
from funcgrad.ir import eval_jaxpr, typecheck_jaxpr


def _run(closed, *args):
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def f2(x, y):
    return fnp.sin(x) * y, fnp.sum(fnp.exp(x))


def _closed():
    x, y = dev(np.array([0.1, 0.7, -1.2])), dev(np.array([2.0, -0.5, 1.5]))
    return funcgrad.make_jaxpr(f2)(x, y), x, y


def test_jvp_jaxpr_matches_jvp():
    closed, x, y = _closed()
    tx = dev(np.array([1.0, -2.0, 0.5]))
    new, out_nz = jr.jvp_jaxpr(closed, (True, False), False)
    typecheck_jaxpr(new.jaxpr)
    assert out_nz == (True, True)
    assert len(new.in_avals) == 3
    outs = _run(new, x, y, tx)
    want_p, want_t = funcgrad.jvp(f2, (x, y), (tx, dev(np.zeros(3))))
    assert_allclose(outs[:2], list(want_p))
    assert_allclose(outs[2:], list(want_t))


def test_jvp_jaxpr_zero_outputs_and_instantiate():
    closed = funcgrad.make_jaxpr(lambda x, y: (x * 2.0, y + 1.0))(np.ones(2), np.ones(2))
    new, nz = jr.jvp_jaxpr(closed, (True, False), False)
    assert nz == (True, False) and len(new.out_avals) == 3
    new, nz = jr.jvp_jaxpr(closed, (True, False), True)
    assert nz == (True, True)
    outs = _run(new, np.ones(2), np.ones(2), np.ones(2))
    assert_allclose(outs[3], np.zeros(2))
    # integer outputs never get a tangent, even when instantiating
    closed = funcgrad.make_jaxpr(lambda x, n: (x * n, n))(np.ones(2), np.arange(2))
    new, nz = jr.jvp_jaxpr(closed, (True, False), True)
    assert nz == (True, False)


def test_transformations_are_cached_by_identity():
    closed, _, _ = _closed()
    a = jr.jvp_jaxpr(closed, (True, True), False)
    assert jr.jvp_jaxpr(closed, [True, True], (False, False)) is a
    assert jr.transpose_jaxpr(closed, (False, True)) is jr.transpose_jaxpr(closed, (False, True))
    assert jr.batch_jaxpr(closed, 3, (0, None)) is jr.batch_jaxpr(closed, 3, (0, None))
    assert jr.partial_eval_jaxpr(closed, (False, True)) is jr.partial_eval_jaxpr(
        closed, (False, True))


def test_partial_eval_splits_known_and_unknown():
    closed, x, y = _closed()
    known, unknown, out_unk, nres = jr.partial_eval_jaxpr(closed, (False, True), False)
    typecheck_jaxpr(known.jaxpr)
    typecheck_jaxpr(unknown.jaxpr)
    assert out_unk == (True, False)
    # sin and exp/sum read only x: they are known; the product needs y
    assert sorted(e.prim.name for e in known.eqns) == ["exp", "reduce_sum", "sin"]
    assert [e.prim.name for e in unknown.eqns] == ["mul"]
    k_outs = _run(known, x)
    assert len(k_outs) == 1 + nres
    u_outs = _run(unknown, *k_outs[1:], y)
    want = f2(x, y)
    assert_allclose(u_outs[0], want[0])
    assert_allclose(k_outs[0], want[1])


def test_partial_eval_instantiate_makes_known_outputs_unknown():
    closed, x, y = _closed()
    known, unknown, out_unk, nres = jr.partial_eval_jaxpr(closed, (False, True), True)
    assert out_unk == (True, True)
    k_outs = _run(known, x)
    assert len(k_outs) == nres
    assert_allclose(_run(unknown, *k_outs, y), list(f2(x, y)))


def test_partial_eval_recurses_into_nested_jit():
    inner = funcgrad.jit(lambda a, b: (fnp.cos(a) * b, fnp.exp(a)))
    x, y = dev(np.array([0.3, 0.4])), dev(np.array([1.0, 2.0]))
    closed = funcgrad.make_jaxpr(lambda a, b: inner(a, b))(x, y)
    known, unknown, out_unk, _ = jr.partial_eval_jaxpr(closed, (False, True), False)
    assert out_unk == (True, False)
    inner_unknown = unknown.eqns[0].params["jaxpr"]
    assert [e.prim.name for e in inner_unknown.eqns] == ["mul"]
    k_outs = _run(known, x)
    assert_allclose(_run(unknown, *k_outs[1:], y)[0], host(np.cos(host(x)) * host(y)))


def test_linearize_jaxpr_gives_a_linear_part():
    closed, x, y = _closed()
    primal, linear, out_nz, nres = jr.linearize_jaxpr(closed, (True, True))
    assert out_nz == (True, True)
    p_outs = _run(primal, x, y)
    tx, ty = dev(np.array([1.0, 0.0, -1.0])), dev(np.array([0.5, 0.5, 0.5]))
    t_outs = _run(linear, *p_outs[2:], tx, ty)
    want_p, want_t = funcgrad.jvp(f2, (x, y), (tx, ty))
    assert_allclose(p_outs[:2], list(want_p))
    assert_allclose(t_outs, list(want_t))
    assert {e.prim.name for e in linear.eqns} <= {"mul", "add_any", "reduce_sum", "neg",
                                                  "broadcast_in_dim", "convert_element_type"}


def test_transpose_jaxpr_matches_vjp():
    w = dev(np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]]))
    x = dev(np.array([0.3, -0.2, 0.9]))
    closed = funcgrad.make_jaxpr(lambda w, x: (w @ x, fnp.sum(x * 3.0)))(w, x)
    t = jr.transpose_jaxpr(closed, (False, True))
    ct0, ct1 = dev(np.array([1.0, -2.0])), 0.5
    (got,) = _run(t, w, ct0, ct1)
    assert_allclose(got, host(w).T @ host(ct0) + 3.0 * ct1)
    # only the first output has a nonzero cotangent
    t = jr.transpose_jaxpr(closed, (False, True), (True, False))
    assert len(t.in_avals) == 2
    assert_allclose(_run(t, w, ct0)[0], host(w).T @ host(ct0))


def test_transpose_jaxpr_instantiates_unused_linear_inputs():
    closed = funcgrad.make_jaxpr(lambda a, b: a * 2.0)(np.ones(2), np.ones(3))
    t = jr.transpose_jaxpr(closed, (True, True))
    outs = _run(t, np.ones(2))
    assert_allclose(outs, [2.0 * np.ones(2), np.zeros(3)])


@pytest.mark.parametrize("in_dims", [(0, None), (1, 0), (None, 1), (0, 0)])
def test_batch_jaxpr_matches_loop(in_dims):
    closed, x, y = _closed()
    rng = np.random.default_rng(0)
    n = 4
    xs, ys = rng.standard_normal((n, 3)), rng.standard_normal((n, 3))
    args = []
    for v, d, v0 in zip((xs, ys), in_dims, (host(x), host(y))):
        args.append(v0 if d is None else np.moveaxis(v, 0, d))
    new, out_dims = jr.batch_jaxpr(closed, n, in_dims, False)
    typecheck_jaxpr(new.jaxpr)
    got = _run(new, *dev(args))
    per = []
    for i in range(n):
        xi = host(x) if in_dims[0] is None else xs[i]
        yi = host(y) if in_dims[1] is None else ys[i]
        per.append([host(o) for o in f2(xi, yi)])
    for k in range(2):
        want = np.stack([p[k] for p in per])
        if out_dims[k] is None:
            assert_allclose(got[k], want[0])
        else:
            assert out_dims[k] == 0
            assert_allclose(got[k], want)


def test_batch_jaxpr_instantiate_broadcasts_unbatched_outputs():
    closed = funcgrad.make_jaxpr(lambda x, y: (x + 1.0, y * 2.0))(np.ones(2), np.ones(3))
    new, out_dims = jr.batch_jaxpr(closed, 5, (0, None), False)
    assert out_dims == (0, None)
    new, out_dims = jr.batch_jaxpr(closed, 5, (0, None), True)
    assert out_dims == (0, 0)
    outs = _run(new, np.ones((5, 2)), np.ones(3))
    assert outs[1].shape == (5, 3)


def test_dce_closed_jaxpr():
    closed, x, y = _closed()
    new, used = jr.dce_closed_jaxpr(closed, (False, True))
    assert used == (True, False)
    assert len(new.in_avals) == 1 and len(new.out_avals) == 1
    assert_allclose(_run(new, x)[0], f2(x, y)[1])
    new, used = jr.dce_closed_jaxpr(closed, (False, True), prune_invars=False)
    assert len(new.in_avals) == 2


def test_hoist_tracer_consts():
    seen = {}

    def outer(c):
        closed = funcgrad.make_jaxpr(lambda x: x * c)(np.ones(2))
        new, tracers = jr.hoist_tracer_consts(closed)
        seen["n"] = len(tracers)
        seen["in"] = len(new.in_avals)
        assert all(not isinstance(v, funcgrad.core.Tracer) for v in new.consts)
        return fnp.sum(eval_jaxpr(new.jaxpr, new.consts, *tracers, np.ones(2))[0])

    assert_allclose(funcgrad.grad(outer)(3.0), 2.0)
    assert seen == {"n": 1, "in": 2}


def test_tracer_consts_are_refused():
    def outer(c):
        closed = funcgrad.make_jaxpr(lambda x: x * c)(np.ones(2))
        with pytest.raises(TypeError, match="hoist_tracer_consts"):
            jr.jvp_jaxpr(closed, (True,), False)
        return c

    funcgrad.grad(outer)(1.0)


def test_has_effects():
    closed, _, _ = _closed()
    assert not jr.has_effects(closed.jaxpr)
