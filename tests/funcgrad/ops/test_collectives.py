"""Collectives over named axes: vmap semantics against NumPy, the same program on a process
axis (members as threads), derivatives, jit, nesting, and errors."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
from funcgrad import lax
from funcgrad.distributed import ThreadGroup, spmd
from funcgrad.test_util import check_grads
from tests.helpers import dev, host

RNG = np.random.default_rng(0)
X = RNG.normal(size=(4, 3, 4))  # 4 members, each with a (3, 4) value


def _vmapped(f, x=X):
    return host(funcgrad.vmap(f, axis_name="i")(dev(x)))


def _on_threads(f, x=X):
    """Run ``f`` as one member per thread over a process axis named "i"."""
    outs = ThreadGroup(x.shape[0]).run(lambda comm: host(spmd(f, "i", comm)(dev(x[comm.rank]))))
    return np.stack([np.asarray(o) for o in outs])


def _members_agree(f, expected):
    np.testing.assert_allclose(_vmapped(f), expected, rtol=1e-12)
    np.testing.assert_allclose(_on_threads(f), expected, rtol=1e-12)


def test_psum_pmean_pmax_pmin_match_numpy():
    n = X.shape[0]
    _members_agree(lambda x: lax.psum(x, "i"), np.broadcast_to(X.sum(0), X.shape))
    _members_agree(lambda x: lax.pmean(x, "i"), np.broadcast_to(X.mean(0), X.shape))
    _members_agree(lambda x: lax.pmax(x, "i"), np.broadcast_to(X.max(0), X.shape))
    _members_agree(lambda x: lax.pmin(x, "i"), np.broadcast_to(X.min(0), X.shape))
    _members_agree(lambda x: x * lax.axis_index("i"), X * np.arange(n)[:, None, None])
    _members_agree(lambda x: x + lax.psum(1, "i"), X + n)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_all_gather_stacks_in_member_order(axis):
    expected = np.stack([np.moveaxis(X, 0, axis)] * X.shape[0])
    _members_agree(lambda x: lax.all_gather(x, "i", axis=axis), expected)


@pytest.mark.parametrize("axis", [0, 1])
def test_all_gather_tiled_concatenates(axis):
    expected = np.stack([np.concatenate(list(X), axis)] * X.shape[0])
    _members_agree(lambda x: lax.all_gather(x, "i", axis=axis, tiled=True), expected)


def _all_to_all_reference(x, split, concat, tiled):
    """Member j receives chunk j of every member's value, in member order."""
    n = x.shape[0]
    outs = []
    for j in range(n):
        chunks = [np.split(x[i], n, axis=split)[j] for i in range(n)]
        if tiled:
            outs.append(np.concatenate(chunks, concat))
        else:
            outs.append(np.stack([np.squeeze(c, split) for c in chunks], concat))
    return np.stack(outs)


@pytest.mark.parametrize("split,concat", [(0, 0), (0, 1), (1, 0), (1, 1), (0, 2)])
def test_all_to_all_untiled(split, concat):
    x = RNG.normal(size=(4, 4, 3, 2)) if split == 0 else RNG.normal(size=(4, 3, 4, 2))
    expected = _all_to_all_reference(x, split, concat, False)
    f = lambda v: lax.all_to_all(v, "i", split, concat)
    np.testing.assert_allclose(_vmapped(f, x), expected)
    np.testing.assert_allclose(_on_threads(f, x), expected)


@pytest.mark.parametrize("split,concat", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_all_to_all_tiled(split, concat):
    x = RNG.normal(size=(4, 8, 4))
    expected = _all_to_all_reference(x, split, concat, True)
    f = lambda v: lax.all_to_all(v, "i", split, concat, tiled=True)
    np.testing.assert_allclose(_vmapped(f, x), expected)
    np.testing.assert_allclose(_on_threads(f, x), expected)


def _normalised(x):
    # a small program mixing every collective
    centred = x - lax.pmean(x, "i")
    scale = lax.pmax(abs(centred), "i") + 1.0
    gathered = lax.all_gather(x, "i")
    mixed = lax.all_to_all(x, "i", 1, 1, tiled=True)
    return (centred / scale).sum() + (gathered ** 2).sum() * 0.1 + (mixed * x).sum() \
        + lax.pmin(x, "i").sum()


def test_derivatives_on_a_vmap_axis_pass_check_grads():
    f = funcgrad.vmap(_normalised, axis_name="i")
    check_grads(lambda x: f(x).sum(), (dev(X),), order=2, modes=("fwd", "rev"))


def test_derivatives_on_a_process_axis_equal_vmap():
    g = host(funcgrad.grad(lambda x: funcgrad.vmap(_normalised, axis_name="i")(x).sum())(dev(X)))
    # Member m seeds cotangent 1 on its own output; the transposed collectives carry the
    # other members' contributions to it, so it gets d(sum over members)/dx_m, as vmap does.
    per_member = _on_threads(funcgrad.grad(_normalised))
    np.testing.assert_allclose(per_member, g, rtol=1e-10, atol=1e-12)
    jitted = _on_threads(funcgrad.jit(funcgrad.grad(_normalised)))
    np.testing.assert_allclose(jitted, g, rtol=1e-10, atol=1e-12)


def test_psum_transposes_to_psum():
    # As jax.pmap: every member seeds its copy of the psum'd output, so d psum(x) / dx is the
    # axis size on a process axis and under vmap alike.
    n = X.shape[0]
    g = host(funcgrad.vmap(funcgrad.grad(lambda x: lax.psum(x, "i").sum()), axis_name="i")(dev(X)))
    np.testing.assert_allclose(g, np.full(X.shape, float(n)))
    np.testing.assert_allclose(_on_threads(funcgrad.grad(lambda x: lax.psum(x, "i").sum())), g)


def test_jvp_of_pmax_shares_ties():
    x = np.array([[1.0], [3.0], [3.0]])
    t = np.array([[1.0], [2.0], [4.0]])
    _, tout = funcgrad.jvp(funcgrad.vmap(lambda v: lax.pmax(v, "i"), axis_name="i"), (x,), (t,))
    np.testing.assert_allclose(tout, np.full((3, 1), 3.0))


def test_jit_inside_and_outside_vmap():
    f = lambda x: x / lax.psum(x, "i")
    expected = X / X.sum(0)
    np.testing.assert_allclose(funcgrad.jit(funcgrad.vmap(f, axis_name="i"))(X), expected)
    np.testing.assert_allclose(funcgrad.vmap(funcgrad.jit(f), axis_name="i")(X), expected)
    jaxpr = funcgrad.make_jaxpr(funcgrad.vmap(funcgrad.jit(f), axis_name="i"))(X)
    assert "psum" not in str(jaxpr)  # batched away into a sum over the batch axis


def test_jit_retraces_when_the_axis_size_changes():
    g = funcgrad.jit(lambda x: lax.all_gather(x, "i"))
    f = funcgrad.vmap(g, axis_name="i")
    assert f(np.ones((2, 3))).shape == (2, 2, 3)
    assert f(np.ones((5, 3))).shape == (5, 5, 3)


def test_nested_axes_and_tuples_of_names():
    x = RNG.normal(size=(2, 3, 4))
    f = funcgrad.vmap(funcgrad.vmap(lambda v: lax.psum(v, ("i", "j")), axis_name="j"),
                      axis_name="i")
    np.testing.assert_allclose(f(x), np.broadcast_to(x.sum((0, 1)), x.shape))
    outer_only = funcgrad.vmap(funcgrad.vmap(lambda v: lax.psum(v, "i"), axis_name="j"),
                               axis_name="i")
    np.testing.assert_allclose(outer_only(x), np.broadcast_to(x.sum(0), x.shape))
    idx = host(funcgrad.vmap(funcgrad.vmap(lambda v: v * 0 + lax.axis_index("i"),
                                           axis_name="j"), axis_name="i")(dev(x)))
    np.testing.assert_array_equal(idx[:, :, 0], np.repeat(np.arange(2)[:, None], 3, 1))


def test_collectives_batch_over_another_axis():
    # An unnamed inner vmap passes psum/all_gather/all_to_all over "i" to the outer trace.
    x = RNG.normal(size=(3, 5, 3))
    f = funcgrad.vmap(funcgrad.vmap(lambda v: lax.psum(v, "i")), axis_name="i")
    np.testing.assert_allclose(f(x), np.broadcast_to(x.sum(0), x.shape))
    g = funcgrad.vmap(funcgrad.vmap(lambda v: lax.all_gather(v, "i")), axis_name="i")
    assert g(x).shape == (3, 5, 3, 3)
    np.testing.assert_allclose(g(x)[1, 2], x[:, 2])
    h = funcgrad.vmap(funcgrad.vmap(lambda v: lax.all_to_all(v, "i", 0, 0)), axis_name="i")
    ref = np.stack([_all_to_all_reference(x[:, k], 0, 0, False) for k in range(5)], 1)
    np.testing.assert_allclose(h(x), ref)
    # A process axis around a vmap: every batch element talks to the same element elsewhere.
    per = _on_threads(funcgrad.vmap(lambda v: lax.psum(v, "i")), x)
    np.testing.assert_allclose(per, np.broadcast_to(x.sum(0), x.shape))


def test_integer_and_scalar_inputs():
    out = funcgrad.vmap(lambda x: lax.psum(x, "i"), axis_name="i")(np.arange(3))
    assert out.dtype == np.arange(3).dtype and out.tolist() == [3, 3, 3]
    out = funcgrad.vmap(lambda x: lax.pmean(x, "i"), axis_name="i")(np.arange(4, dtype=np.float32))
    assert out.dtype == np.float32


def test_unbound_axis_name_is_a_clear_error():
    with pytest.raises(NameError, match="unbound axis name: 'k'"):
        lax.psum(np.ones(2), "k")
    with pytest.raises(NameError, match="unbound axis name: 'k'"):
        funcgrad.vmap(lambda x: lax.psum(x, "k"), axis_name="i")(np.ones((2, 3)))
    with pytest.raises(NameError, match="unbound axis name"):
        funcgrad.jit(lambda x: lax.all_gather(x, "k"))(np.ones(2))


def test_all_to_all_checks_the_split_size():
    with pytest.raises(Exception, match="split_axis"):
        funcgrad.vmap(lambda x: lax.all_to_all(x, "i", 0, 0), axis_name="i")(np.ones((2, 3)))
    with pytest.raises(Exception, match="does not divide"):
        funcgrad.vmap(lambda x: lax.all_to_all(x, "i", 0, 0, tiled=True),
                      axis_name="i")(np.ones((2, 3)))


def test_thread_group_member_failure_does_not_hang():
    def f(comm):
        if comm.rank == 1:
            raise ValueError("member 1 failed")
        return comm.allreduce(np.ones(1), "sum")

    with pytest.raises(ValueError, match="member 1 failed"):
        ThreadGroup(2, timeout=5).run(f)


def test_jit_keeps_collectives_as_primitives_on_a_process_axis():
    from funcgrad.distributed import LocalCommunicator, bind_axis

    with bind_axis("i", LocalCommunicator()):
        jaxpr = str(funcgrad.make_jaxpr(lambda x: lax.psum(x * 2.0, "i") + lax.axis_index("i"))(
            dev(np.ones(3))))
        assert "psum" in jaxpr and "axis_index" in jaxpr
        # a psum of a constant is not folded away at compile time
        src = funcgrad.jit(lambda x: x + lax.psum(2.0, "i")).source(dev(np.ones(3)))
        assert "psum" in src
        np.testing.assert_array_equal(host(funcgrad.jit(lambda x: x + lax.psum(2.0, "i"))(
            dev(np.ones(3)))), np.full(3, 3.0))


def test_collective_shapes_follow_the_axis_size_of_each_trace() -> None:
    # A result shape is the axis size bound at the time: never reused from an earlier trace
    # under another size (abstract evaluation of collectives is not cached).
    for n in (2, 4, 2):
        closed = funcgrad.make_jaxpr(lambda x: lax.all_gather(x, "i"),
                                     axis_env=[("i", n)])(np.ones(3))
        assert closed.out_avals[0].shape == (n, 3)


# -- ppermute, pshuffle, pswapaxes, psum_scatter: jax.lax's, values recorded from JAX 0.10.2 --

RING = [(0, 1), (1, 2), (2, 3), (3, 0)]


def test_ppermute_sends_along_the_pairs_and_zero_fills():
    expected = np.stack([X[3], X[0], X[1], X[2]])
    _members_agree(lambda x: lax.ppermute(x, "i", RING), expected)
    partial = np.stack([np.zeros_like(X[0]), X[2], np.zeros_like(X[0]), np.zeros_like(X[0])])
    _members_agree(lambda x: lax.ppermute(x, "i", [(2, 1)]), partial)
    _members_agree(lambda x: lax.pshuffle(x, "i", [3, 0, 1, 2]), expected)


def test_ppermute_pshuffle_psum_scatter_values_equal_jax():
    x = np.arange(3.0)
    ring = [(0, 1), (1, 2), (2, 0)]
    out = funcgrad.vmap(lambda a: lax.ppermute(a, "i", ring), axis_name="i")(dev(x))
    np.testing.assert_array_equal(host(out), [2.0, 0.0, 1.0])
    out = funcgrad.vmap(lambda a: lax.pshuffle(a, "i", [2, 0, 1]), axis_name="i")(dev(x))
    np.testing.assert_array_equal(host(out), [2.0, 0.0, 1.0])
    m = dev(np.arange(9.0).reshape(3, 3))
    out = funcgrad.vmap(lambda a: lax.psum_scatter(a, "i"), axis_name="i")(m)
    np.testing.assert_array_equal(host(out), [9.0, 12.0, 15.0])
    t = dev(np.arange(12.0).reshape(2, 6))
    out = funcgrad.vmap(lambda a: lax.psum_scatter(a, "i", tiled=True), axis_name="i")(t)
    np.testing.assert_array_equal(host(out), [[6.0, 8.0, 10.0], [12.0, 14.0, 16.0]])
    out = funcgrad.vmap(lambda a: lax.pswapaxes(a, "i", 1), axis_name="i")(
        dev(np.arange(12.0).reshape(2, 3, 2)))
    np.testing.assert_array_equal(host(out), [[[0.0, 6.0], [2.0, 8.0], [4.0, 10.0]],
                                              [[1.0, 7.0], [3.0, 9.0], [5.0, 11.0]]])
    # grad of sum_j w_j * ppermute(x**2)_j: member s's x goes to s+1, weighted w_{s+1}
    g = funcgrad.grad(lambda z: (funcgrad.vmap(lambda a: lax.ppermute(a ** 2, "i", ring),
                                               axis_name="i")(z) * dev(np.arange(1.0, 4.0))
                                 ).sum())(dev(x))
    np.testing.assert_allclose(host(g), [0.0, 6.0, 4.0])
    g = funcgrad.grad(lambda z: (funcgrad.vmap(lambda a: lax.psum_scatter(a ** 2, "i"),
                                               axis_name="i")(z) * dev(np.arange(3.0))
                                 ).sum())(m)
    np.testing.assert_allclose(host(g), [[0.0, 2.0, 8.0], [0.0, 8.0, 20.0], [0.0, 14.0, 32.0]])


@pytest.mark.parametrize("dim,tiled", [(0, False), (1, False), (1, True), (-1, True)])
def test_psum_scatter_is_psum_then_this_members_slice(dim, tiled):
    x = RNG.normal(size=(4, 3, 4, 8))
    total = x.sum(0)
    d = dim % 3
    if tiled:
        expected = np.stack([np.split(total, 4, axis=d)[m] for m in range(4)])
    else:
        x = np.moveaxis(RNG.normal(size=(4, 4, 3, 2)), 1, 1 + d)
        total = x.sum(0)
        expected = np.stack([np.take(total, m, axis=d) for m in range(4)])
    f = lambda v: lax.psum_scatter(v, "i", scatter_dimension=dim, tiled=tiled)
    np.testing.assert_allclose(_vmapped(f, x), expected, rtol=1e-12)
    np.testing.assert_allclose(_on_threads(f, x), expected, rtol=1e-12)


def test_ppermute_and_psum_scatter_derivatives():
    def f(x):
        y = lax.ppermute(x, "i", RING) * x
        return lax.psum_scatter(y, "i", scatter_dimension=1, tiled=True).sum()

    check_grads(lambda x: funcgrad.vmap(f, axis_name="i")(x).sum(), (dev(X),), order=2,
                modes=("fwd", "rev"))
    g = host(funcgrad.grad(lambda x: funcgrad.vmap(f, axis_name="i")(x).sum())(dev(X)))
    np.testing.assert_allclose(_on_threads(funcgrad.grad(f)), g, rtol=1e-10, atol=1e-12)
    jitted = host(funcgrad.jit(funcgrad.vmap(f, axis_name="i"))(dev(X)))
    np.testing.assert_allclose(jitted, host(funcgrad.vmap(f, axis_name="i")(dev(X))))


def test_ppermute_over_another_axis_and_nested():
    x = RNG.normal(size=(3, 4))
    inner = funcgrad.vmap(lambda a: lax.ppermute(a, "i", [(0, 1), (1, 2), (2, 0)]), axis_name="j")
    out = host(funcgrad.vmap(inner, axis_name="i")(dev(x)))
    np.testing.assert_allclose(out, x[[2, 0, 1]])
    out = host(funcgrad.vmap(lambda a: lax.ppermute(a, "i", [(0, 1), (1, 2), (2, 0)]),
                             in_axes=1, out_axes=1, axis_name="i")(dev(x.T.copy())))
    np.testing.assert_allclose(out, x[[2, 0, 1]].T)


def test_ppermute_family_errors():
    f = lambda perm: funcgrad.vmap(lambda a: lax.ppermute(a, "i", perm), axis_name="i")
    with pytest.raises(ValueError, match="unique"):
        f([(0, 1), (0, 2)])(dev(np.ones(3)))
    with pytest.raises(ValueError, match="out of range"):
        f([(0, 5)])(dev(np.ones(3)))
    with pytest.raises(ValueError, match="does not represent a permutation"):
        lax.pshuffle(1.0, "i", [0, 0, 1])
    with pytest.raises(funcgrad.errors.ShapeError, match="scatter_dimension"):
        funcgrad.vmap(lambda a: lax.psum_scatter(a, "i"), axis_name="i")(dev(np.ones((2, 4))))
    with pytest.raises(ValueError, match="axis_index_groups"):
        lax.psum_scatter(dev(np.ones(2)), "i", axis_index_groups=[[0], [1]])


def test_axis_index_groups_is_accepted_and_refused_clearly():
    # JAX's signatures take axis_index_groups; its vmap refuses groups, so does funcgrad's
    f = funcgrad.vmap(lambda a: lax.psum(a, "i", axis_index_groups=None), axis_name="i")
    np.testing.assert_array_equal(host(f(dev(np.arange(3.0)))), [3.0, 3.0, 3.0])
    for fn in (lambda a: lax.psum(a, "i", axis_index_groups=[[0, 1]]),
               lambda a: lax.pmean(a, "i", axis_index_groups=[[0, 1]]),
               lambda a: lax.all_gather(a, "i", axis_index_groups=[[0, 1]])):
        with pytest.raises(ValueError, match="axis_index_groups is not supported"):
            funcgrad.vmap(fn, axis_name="i")(dev(np.arange(2.0)))


def test_per_member_grad_transposes_the_collective_as_jax():
    # grad of one real number may compute tangents forward; over a named axis that is a
    # different map (it sums every member's tangent), so collectives take the backward rule.
    # Values from JAX 0.10.2: vmap(grad(f), axis_name="i")(arange(3.)).
    x = dev(np.arange(3.0))

    def per_member(f, v=x):
        return host(funcgrad.vmap(funcgrad.grad(f), axis_name="i")(v))

    np.testing.assert_allclose(per_member(lambda a: lax.psum(a ** 2, "i")), [0.0, 6.0, 12.0])
    np.testing.assert_allclose(per_member(lambda a: lax.pmean(a ** 2, "i")), [0.0, 2.0, 4.0])
    np.testing.assert_allclose(per_member(lambda a: (lax.all_gather(a, "i") ** 2).sum()),
                               [0.0, 6.0, 12.0])
    ring = [(0, 1), (1, 2), (2, 0)]
    np.testing.assert_allclose(
        per_member(lambda a: (lax.ppermute(a, "i", ring) * (a + 1)).sum()), [4.0, 3.0, 2.0])
    m = dev(np.arange(9.0).reshape(3, 3))
    np.testing.assert_allclose(per_member(lambda a: lax.psum_scatter(a ** 2, "i") * a[0], m),
                               [[45.0, 6.0, 24.0], [66.0, 24.0, 60.0], [93.0, 42.0, 96.0]])
    # all_to_all: member m's x[j] reaches member j at slot m, weighted m
    np.testing.assert_allclose(
        per_member(lambda a: (lax.all_to_all(a ** 2, "i", 0, 0) * dev(np.arange(3.0))).sum(), m),
        [[0.0, 0.0, 0.0], [6.0, 8.0, 10.0], [24.0, 28.0, 32.0]])
    jitted = funcgrad.vmap(funcgrad.jit(funcgrad.grad(lambda a: lax.psum(a ** 2, "i"))),
                           axis_name="i")(x)
    np.testing.assert_allclose(host(jitted), [0.0, 6.0, 12.0])


def test_psum_keeps_the_dtype_and_counts_booleans_in_int32():
    # JAX: psum of int8 is int8, of bool int32 (a count), of float32 float32
    for x, want in ((np.array([1, 2], np.int8), np.int8), (np.array([True, False]), np.int32),
                    (np.array([1.0, 2.0], np.float32), np.float32)):
        for f in (funcgrad.vmap(lambda a: lax.psum(a, "i"), axis_name="i"),
                  funcgrad.jit(funcgrad.vmap(lambda a: lax.psum(a, "i"), axis_name="i"))):
            out = host(f(dev(x)))
            assert out.dtype == want
            np.testing.assert_array_equal(out, [x.sum()] * 2)
    outs = ThreadGroup(2).run(
        lambda comm: host(spmd(lambda a: lax.psum(a, "i"), "i", comm)(dev(np.array(True)))))
    assert all(o.dtype == np.int32 and int(o) == 2 for o in outs)


def test_grad_of_a_loop_with_a_collective_in_its_body():
    # Partial evaluation splits loop-invariant residuals from the body; a collective (kept
    # by DCE as effectful) on a varying value must stay in the loop. JAX 0.10.2's values.
    x = dev(np.arange(3.0) + 1)

    def scanned(a):
        return lax.scan(lambda c, _: (c + lax.psum(c * a, "i"), None), a, None, length=2)[0]

    def looped(a):
        return lax.fori_loop(0, 2, lambda i, c: c + lax.psum(c * a, "i"), a)

    for f in (scanned, looped):
        g = funcgrad.vmap(funcgrad.grad(f), axis_name="i")(x)
        np.testing.assert_allclose(host(g), [91.0, 139.0, 187.0])


def test_tuple_of_names_is_row_major_over_the_names():
    # JAX: axis_index(("i", "j")) of member (i, j) is i * size(j) + j; all_gather over the
    # tuple gathers every member in that order (JAX's vmap refuses; pmap's order)
    x = dev(np.arange(6.0).reshape(2, 3))

    def nested(f):
        return host(funcgrad.vmap(funcgrad.vmap(f, axis_name="j"), axis_name="i")(x))

    np.testing.assert_array_equal(nested(lambda a: lax.axis_index(("i", "j"))),
                                  [[0, 1, 2], [3, 4, 5]])
    np.testing.assert_array_equal(nested(lambda a: lax.all_gather(a, ("i", "j")))[1, 2],
                                  np.arange(6.0))
    np.testing.assert_array_equal(nested(lambda a: lax.all_gather(a, ("j", "i")))[0, 0],
                                  [0.0, 3.0, 1.0, 4.0, 2.0, 5.0])
    tiled = nested(lambda a: lax.all_gather(a * dev(np.ones((1, 2))), ("i", "j"), tiled=True))
    assert tiled.shape == (2, 3, 6, 2)
    np.testing.assert_array_equal(tiled[0, 1, :, 0], np.arange(6.0))
    g = funcgrad.grad(lambda z: funcgrad.vmap(funcgrad.vmap(
        lambda a: (lax.all_gather(a, ("i", "j")) ** 2).sum() * lax.axis_index(("i", "j")),
        axis_name="j"), axis_name="i")(z).sum())(x)
    np.testing.assert_allclose(host(g), 30 * np.arange(6.0).reshape(2, 3))
    with pytest.raises(ValueError, match="all_to_all takes one axis name"):
        funcgrad.vmap(lambda a: lax.all_to_all(a, ("i", "j"), 0, 0), axis_name="i")(
            dev(np.ones((2, 2))))


def test_collectives_in_loops_and_calls_without_batched_operands():
    # A loop (or jit) whose operands are all unbatched still runs per member when its body
    # names the vmap axis (JAX 0.10.2's values: [0, 2, 4], [5, 6, 6], [0, 1, 2], [6, 6, 6]).
    x = dev(np.ones((3, 2)))

    def vm(f):
        return host(funcgrad.vmap(f, axis_name="i")(x)).tolist()

    assert vm(lambda v: lax.scan(lambda c, _: (c + lax.axis_index("i"), None), 0, None,
                                 length=2)[0]) == [0, 2, 4]
    assert vm(lambda v: lax.fori_loop(0, 2, lambda k, c: c + lax.axis_index("i"), 0)) == [0, 2, 4]
    assert vm(lambda v: lax.while_loop(lambda c: c < 5, lambda c: c + lax.axis_index("i") + 1,
                                       0)) == [5, 6, 6]
    assert vm(lambda v: funcgrad.jit(lambda: lax.axis_index("i"))()) == [0, 1, 2]
    assert vm(lambda v: lax.switch(1, [lambda: np.int32(7), lambda: lax.axis_index("i")])) \
        == [0, 1, 2]
    assert vm(lambda v: lax.fori_loop(0, 2, lambda k, c: c + lax.psum(1, "i"), 0)) == [6, 6, 6]
    both = funcgrad.jit(funcgrad.vmap(funcgrad.vmap(
        lambda v: lax.fori_loop(0, 2, lambda k, c: c + 10 * lax.axis_index("i")
                                + lax.axis_index("j"), 0), axis_name="j"), axis_name="i"))
    assert host(both(x)).tolist() == [[0, 2], [20, 22], [40, 42]]


def test_axis_index_lands_on_the_computations_device():
    # As JAX's (part of the computation): on the device of the values vmap batches, not the
    # default one, so host data under a device default (and the reverse) mixes cleanly.
    from funcgrad import backend

    for default, data_dev in (("cpu", "strict"), ("strict", "cpu")):
        with backend.default_device(default):
            x = funcgrad.device_put(np.ones((3, 2)), data_dev)
            zero = funcgrad.device_put(np.int32(0), data_dev)  # a loop with no batched operand

            def f(v, zero=zero):
                return v * lax.axis_index("i") + lax.scan(
                    lambda c, _: (c + lax.axis_index("i"), None), zero, None, length=2)[0]

            for g in (funcgrad.vmap(f, axis_name="i"),
                      funcgrad.jit(funcgrad.vmap(f, axis_name="i"))):
                out = g(x)
                assert (backend.device_of(out) or "cpu") == data_dev
                assert host(out)[:, 0].tolist() == [0.0, 3.0, 6.0]
