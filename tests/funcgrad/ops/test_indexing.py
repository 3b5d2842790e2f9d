"""Focused tests of the indexing primitives (gather, scatter family) and fnp indexing."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host, rand

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.errors import ConcretizationError, DTypeError, ShapeError, TracerMutationError
from funcgrad.interpreters.batching import batch_flat
from funcgrad.ir import eval_jaxpr
from funcgrad.ops import elementwise as ew
from funcgrad.ops import gather as ga
from funcgrad.ops import indexing as ix
from funcgrad.ops import reductions as red
from funcgrad.ops import scatter as sc
from funcgrad.ops.indexing import FULL, Operand, Slice
from funcgrad.test_util import check_grads

S = slice


def _sum(x):
    return red.reduce_sum(x)


def _sq_sum(x):
    return red.reduce_sum(ew.mul(x, x))


# ---------------------------------------------------------------------------------------------
# The layout rules agree with NumPy

_X = np.arange(2 * 3 * 4 * 5, dtype=np.float64).reshape(2, 3, 4, 5)
_A = np.array([0, 1, 1])
_B = np.array([[0], [1]])
_Z = np.array(1)
_INDICES = [
    0, -1, (1, 2), (S(None), 1), (S(None, None, -1), S(1, None, 2)), (None,), (Ellipsis,),
    (Ellipsis, None), (None, Ellipsis, 0), (0, Ellipsis, -1), (_A,), (S(None), _A),
    (_A, _A), (_A, S(None), _A), (0, S(None), _A), (S(None), _Z, S(None), _A),
    (S(None), _A, None, _A), (_A, Ellipsis, _A), (S(None), _A, Ellipsis, _A), (_B, _A),
    (S(None), _B, S(None), _A), (1, _B, _A), (_Z,), (_Z, S(None), 1), (None, _A, None),
    (S(None), 1, _A), (S(None), _A, 1), (1, _A, S(None), 2), (Ellipsis, _A, _A),
    (_A, _A, _A, _A), (1, 2, 3, 4), (S(5, 0, -2),), (S(-100, 100),),
]


def _split(idx):
    if not isinstance(idx, tuple):
        idx = (idx,)
    arrays, entries = [], []
    for e in idx:
        if isinstance(e, np.ndarray):
            entries.append(Operand(len(arrays)))
            arrays.append(e)
        else:
            entries.append(e)
    return tuple(entries), arrays


@pytest.mark.parametrize("idx", _INDICES, ids=[str(i) for i in range(len(_INDICES))])
def test_gather_matches_numpy(idx) -> None:
    want = _X[idx]
    got = fnp._getitem(dev(_X), idx if not isinstance(idx, tuple) else tuple(
        dev(e) if isinstance(e, np.ndarray) else e for e in idx))
    assert_allclose(got, want)
    entries, arrays = _split(idx)
    lay = ix.index_layout("gather", ix.canonical_indexer(entries), _X.shape,
                          tuple(a.shape for a in arrays))
    assert lay.out_shape == want.shape


def test_separated_advanced_indices_go_first() -> None:
    x = rand((2, 3, 4, 5))
    i = np.array([0, 1, 1, 0])
    # Adjacent advanced indices stay in place; separated ones (by a slice, None or ...) move
    # to the front, as NumPy does.
    assert fnp._getitem(x, (S(None), i, i)).shape == (2, 4, 5)
    assert fnp._getitem(x, (i, S(None), i)).shape == (4, 3, 5)
    assert fnp._getitem(x, (S(None), i, S(None), i)).shape == (4, 2, 4)
    assert fnp._getitem(x, (S(None), 1, S(None), i)).shape == (4, 2, 4)
    assert fnp._getitem(x, (S(None), i, None, i)).shape == (4, 2, 1, 5)
    assert fnp._getitem(x[:, :, :2, :2], (S(None), i, Ellipsis, i)).shape == (4, 2, 2)
    assert_allclose(fnp._getitem(x, (i, S(None), i)), x[i, :, i])
    # ... and the same under grad and vmap.
    g = funcgrad.grad(lambda x: _sum(fnp._getitem(x, (S(None), 1, S(None), i))))(x)
    want = np.zeros_like(x)
    np.add.at(want, (S(None), 1, S(None), i), 1.0)
    assert_allclose(g, want)


def test_negative_indices_and_steps() -> None:
    x = dev(rand((5, 4)))
    hx = host(x)
    assert_allclose(fnp._getitem(x, (-1, -2)), hx[-1, -2])
    assert_allclose(fnp._getitem(x, (S(-2, None), S(None, None, -1))), hx[-2:, ::-1])
    assert_allclose(fnp._getitem(x, (S(4, 0, -2), [-1, 0])), hx[4:0:-2, [-1, 0]])
    g = funcgrad.grad(lambda x: _sq_sum(fnp._getitem(x, (S(None, None, -2), -1))))(x)
    want = np.zeros((5, 4))
    want[::-2, -1] = 2 * hx[::-2, -1]
    assert_allclose(g, want)


def test_out_of_range_concrete_raises() -> None:
    x = dev(rand((3, 4)))
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 4"):
        fnp._getitem(x, (0, 4))
    with pytest.raises(IndexError, match="size 3"):
        fnp._getitem(x, dev(np.array([0, 3])))
    with pytest.raises(IndexError, match="size 3"):
        fnp.at(x)[dev(np.array([-4]))].add(1.0, mode="raise")
    # JAX's default for .at updates drops out-of-range writes
    assert_allclose(fnp.at(x)[dev(np.array([-4]))].add(1.0), x)
    with pytest.raises(IndexError, match="too many indices"):
        fnp._getitem(x, (0, 0, 0))
    with pytest.raises(IndexError):
        fnp.take(x, [12])


def test_traced_out_of_range_indices_are_clamped() -> None:
    x = rand((4,))
    i = np.array([1, 7, -1, -9])
    jaxpr = funcgrad.make_jaxpr(lambda x, i: fnp._getitem(x, i))(x, i)
    assert "mode=clamp" in str(jaxpr)
    (out,) = eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, x, i)
    assert_allclose(out, x[[1, 3, 3, 0]])
    got = funcgrad.vmap(lambda i: fnp._getitem(x, i))(np.array([[1, 7], [-1, -9]]))
    assert_allclose(got, x[np.array([[1, 3], [3, 0]])])


def test_tracer_setitem_raises_mutation_error() -> None:
    def f(x):
        x[0] = 1.0
        return _sum(x)

    with pytest.raises(TracerMutationError, match=r"\.at\[0\]\.set"):
        funcgrad.grad(f)(rand((3,)))


def test_tracer_iteration_and_len() -> None:
    def f(x):
        return sum(_sum(row) * k for k, row in enumerate(x))

    g = funcgrad.grad(f)(rand((3, 2)))
    assert_allclose(g, np.repeat(np.arange(3.0)[:, None], 2, axis=1))


# ---------------------------------------------------------------------------------------------
# Boolean masks


def test_bool_mask_of_concrete_array_inside_grad() -> None:
    x = dev(rand((3, 4)))
    mask = np.arange(12).reshape(3, 4) % 3 == 0

    g = funcgrad.grad(lambda x: _sq_sum(fnp._getitem(x, mask)))(x)
    assert_allclose(g, np.where(mask, 2 * host(x), 0.0))

    # A mask computed from the differentiated value is concrete under grad too.
    def f(x):
        return _sum(fnp._getitem(x, ew.gt(x, 0.0)))

    assert_allclose(funcgrad.grad(f)(x), (host(x) > 0).astype(np.float64))
    # ... and in updates.
    g = funcgrad.grad(lambda x: _sq_sum(fnp.at(x)[mask].set(0.0)))(x)
    assert_allclose(g, np.where(mask, 0.0, 2 * host(x)))


def test_traced_bool_mask_raises_with_hint() -> None:
    x = rand((3,))
    with pytest.raises(ConcretizationError, match="fnp.where"):
        funcgrad.make_jaxpr(lambda x: fnp._getitem(x, ew.gt(x, 0.0)))(x)
    with pytest.raises(ConcretizationError, match="fnp.where"):
        funcgrad.vmap(lambda m: fnp._getitem(x, m))(np.array([[True, False, True]] * 2))


def test_bool_mask_shape_mismatch() -> None:
    x = rand((3, 4))
    with pytest.raises(IndexError, match="boolean index did not match"):
        fnp._getitem(x, np.array([True, False]))
    # A 0-d boolean is NumPy's x[True] (a new axis of length 1) / x[False] (of length 0).
    assert fnp._getitem(x, True).shape == (1, 3, 4)
    assert fnp._getitem(x, False).shape == (0, 3, 4)


def test_range_index_is_a_list_as_numpy() -> None:
    # NumPy: x[range(2), [0, 1]] is x[[0, 1], [0, 1]] (PyTorch too: grad[range(n), target]
    # -= 1 in a custom Function's backward); it raised "only integers, slices ... got range"
    x = rand((3, 4))
    want = host(x)[range(2), [0, 1]]
    assert_allclose(fnp._getitem(x, (range(2), [0, 1])), want)
    assert_allclose(funcgrad.jit(lambda a: a[range(2), [0, 1]])(x), want)
    assert_allclose(funcgrad.jit(lambda a: a.at[range(0, 3, 2)].set(0.0))(x),
                    np.where(np.arange(3)[:, None] % 2 == 0, 0.0, host(x)))


def test_invalid_index_types() -> None:
    x = rand((3, 4))
    with pytest.raises(IndexError, match="integer"):
        fnp._getitem(x, np.array([0.5]))
    with pytest.raises(IndexError, match="valid indices"):
        fnp._getitem(x, "a")
    with pytest.raises(DTypeError, match="integer dtype"):
        ga.gather(x, np.array([True]), indexer=(Operand(0),))


# ---------------------------------------------------------------------------------------------
# x.at[...]


def test_at_add_duplicates_accumulate() -> None:
    x = dev(np.zeros(5))
    idx = dev(np.array([0, 3, 0, 0, 4]))
    out = fnp.at(x)[idx].add(dev(np.array([1.0, 2.0, 3.0, 4.0, 5.0])))
    assert_allclose(out, np.array([8.0, 0, 0, 2, 5]))
    assert_allclose(x, np.zeros(5))  # the input is never modified
    out = fnp.at(x)[[1, 1, 1]].subtract(1.5)
    assert_allclose(out, np.array([0.0, -4.5, 0, 0, 0]))
    out = fnp.at(dev(np.ones(3)))[[2, 2]].multiply(3.0)
    assert_allclose(out, np.array([1.0, 1.0, 9.0]))
    out = fnp.at(dev(np.zeros(3)))[[1, 1]].min(dev(np.array([-1.0, -2.0])))
    assert_allclose(out, np.array([0.0, -2.0, 0.0]))
    out = fnp.at(dev(np.zeros(3)))[[1, 1]].max(dev(np.array([1.0, 2.0])))
    assert_allclose(out, np.array([0.0, 2.0, 0.0]))


def test_at_set_duplicates_last_wins() -> None:
    x = dev(np.zeros(4))
    out = fnp.at(x)[dev(np.array([1, 2, 1]))].set(dev(np.array([5.0, 6.0, 7.0])))
    assert_allclose(out, np.array([0.0, 7.0, 6.0, 0.0]))
    # Gradient: only the surviving write gets the cotangent.
    u = dev(np.array([5.0, 6.0, 7.0]))
    g = funcgrad.grad(lambda u: _sq_sum(fnp.at(x)[[1, 2, 1]].set(u)))(u)
    assert_allclose(g, np.array([0.0, 12.0, 14.0]))
    check_grads(lambda x, u: fnp.at(x)[[1, 2, 1]].set(u), (dev(rand((4,))), u), order=2)


def test_at_under_grad_both_operands() -> None:
    x = dev(rand((4, 3)))
    u = dev(rand((2, 3), seed=5))
    idx = (np.array([3, 1]), S(None))
    hx, hu = host(x), host(u)
    for op in ("set", "add", "subtract", "multiply", "min", "max", "divide", "power"):
        xx = dev(rand((4, 3), np.float64, 0.5, 2.0)) if op in ("divide", "power") else x

        def f(x, u, op=op):
            return getattr(fnp.at(x)[idx], op)(u)

        check_grads(f, (xx, u), order=2)
    gx, gu = funcgrad.grad(lambda x, u: _sq_sum(fnp.at(x)[idx].add(u)), argnums=(0, 1))(x, u)
    y = hx.copy()
    y[[3, 1]] += hu
    assert_allclose(gx, 2 * y)
    assert_allclose(gu, 2 * y[[3, 1]])
    gx, gu = funcgrad.grad(lambda x, u: _sq_sum(fnp.at(x)[idx].set(u)), argnums=(0, 1))(x, u)
    want = 2 * hx
    want[[3, 1]] = 0.0
    assert_allclose(gx, want)
    assert_allclose(gu, 2 * hu)


def test_at_on_tracers_and_grad_of_grad() -> None:
    def f(x):
        y = fnp.at(x)[1:].add(ew.mul(fnp._getitem(x, S(None, -1)), fnp._getitem(x, S(None, -1))))
        return _sum(ew.mul(fnp.at(y)[0].set(3.0), y))

    x = dev(rand((4,)))
    check_grads(f, (x,), order=3)


def test_at_multiply_duplicate_update_grad() -> None:
    x = dev(rand((3,)))
    u = dev(rand((2,), seed=2))
    out = fnp.at(x)[[1, 1]].multiply(u)
    want = host(x).copy()
    want[1] *= host(u).prod()
    assert_allclose(out, want)
    gx = funcgrad.grad(lambda x: _sum(fnp.at(x)[[1, 1]].multiply(u)))(x)
    assert_allclose(gx, np.array([1.0, host(u).prod(), 1.0]))
    gu = funcgrad.grad(lambda u: _sum(fnp.at(x)[[1, 1]].multiply(u)))(u)
    assert_allclose(gu, host(x)[1] * host(u)[::-1])


def test_at_min_max_ties_share_gradient() -> None:
    x = dev(np.array([1.0, 2.0, 3.0]))
    u = dev(np.array([1.0, 5.0]))
    gx, gu = funcgrad.grad(lambda x, u: _sum(fnp.at(x)[[0, 1]].min(u)), argnums=(0, 1))(x, u)
    assert_allclose(gx, np.array([0.5, 1.0, 1.0]))
    assert_allclose(gu, np.array([0.5, 0.0]))
    gx, gu = funcgrad.grad(lambda x, u: _sum(fnp.at(x)[[0, 1]].max(u)), argnums=(0, 1))(x, u)
    assert_allclose(gx, np.array([0.5, 0.0, 1.0]))
    assert_allclose(gu, np.array([0.5, 1.0]))


def test_at_dtypes() -> None:
    x32 = dev(np.zeros(3, np.float32))
    assert fnp.at(x32)[0].add(dev(np.ones((), np.float64))).dtype == np.float32
    assert fnp.at(x32)[0].add(1.5).dtype == np.float32
    xi = dev(np.zeros(3, np.int64))
    assert fnp.at(xi)[0].set(2.7).dtype == np.int64
    assert_allclose(fnp.at(xi)[0].set(2.7), np.array([2, 0, 0]))
    with pytest.raises(DTypeError, match="same_kind"):
        fnp.at(xi)[0].add(1.5)
    with pytest.raises(DTypeError, match="divide"):
        fnp.at(xi)[0].divide(2)
    with pytest.raises(ShapeError, match="cannot be broadcast"):
        fnp.at(x32)[:2].set(dev(np.ones(3)))
    # Extra leading size-1 dims of the values are allowed, as in NumPy assignment.
    assert_allclose(fnp.at(x32)[:2].set(dev(np.ones((1, 2), np.float32))),
                    np.array([1, 1, 0], np.float32))
    with pytest.raises(TypeError, match="unexpected keyword"):
        fnp.at(x32)[0].set(1.0, bogus=True)


def test_at_plain_arrays_in_and_out() -> None:
    x = np.arange(4.0)
    for out in (fnp.at(x)[1].set(9.0), fnp.take(x, [0, 1]), fnp.diagonal(np.eye(2)),
                fnp.take_along_axis(x, np.array([1, 0]), 0), fnp.diag(x)):
        assert type(out) is np.ndarray


# ---------------------------------------------------------------------------------------------
# Batching: batched operand, batched indices, both, batched updates


def _loop(f, args, in_axes):
    n = next(np.shape(a)[d] for a, d in zip(args, in_axes) if d is not None)
    outs = []
    for b in range(n):
        ex = [a if d is None else np.take(a, b, axis=d) for a, d in zip(args, in_axes)]
        outs.append(host(f(*dev(ex))))
    return np.stack(outs)


_GATHER_BATCH = [
    ("adjacent", lambda x, i: fnp._getitem(x, (S(None), i, i)), (3, 4, 4), (2, 3), 4),
    ("separated", lambda x, i: fnp._getitem(x, (i, S(1, None), i)), (4, 3, 4), (2,), 4),
    ("int_separated", lambda x, i: fnp._getitem(x, (1, S(None), i)), (2, 3, 4), (3,), 4),
    ("newaxis", lambda x, i: fnp._getitem(x, (S(None), i, None, i)), (2, 3, 3), (2,), 3),
    ("ellipsis", lambda x, i: fnp._getitem(x, (i, Ellipsis, i)), (3, 2, 3), (2, 2), 3),
    ("scalar_index", lambda x, i: fnp._getitem(x, (S(None), i)), (2, 5), (), 5),
    ("take_along", lambda x, i: fnp.take_along_axis(x, i, axis=1), (3, 4), (3, 2), 4),
]


@pytest.mark.parametrize("case", _GATHER_BATCH, ids=[c[0] for c in _GATHER_BATCH])
@pytest.mark.parametrize("axes", [(0, None), (None, 0), (0, 0), (-1, 1), (1, -1)])
def test_gather_batching(case, axes) -> None:
    _, f, xs, ishape, n = case
    rng = np.random.default_rng(0)
    B = 3
    x = rng.standard_normal(xs)
    i = rng.integers(-n, n, size=ishape)
    xd, idd = axes
    if idd is not None and idd >= len(ishape) + 1:
        idd = 0
    xb = np.moveaxis(np.stack([x + k for k in range(B)]), 0, xd) if xd is not None else x
    ib = np.moveaxis(np.stack([np.roll(i, k) if i.ndim else -i for k in range(B)]), 0, idd) \
        if idd is not None else i
    got = funcgrad.vmap(f, in_axes=(xd, idd))(*dev((xb, ib)))
    assert_allclose(got, _loop(f, (xb, ib), (xd, idd)))


_SCATTER_BATCH = [
    ("set_adjacent", "set", (S(None), "i"), (3, 4), (2,), (3, 2), 4),
    ("add_separated", "add", ("i", S(None), "i"), (3, 2, 3), (4,), (4, 2), 3),
    ("max_int_sep", "max", (1, S(None), "i"), (2, 3, 4), (2,), (2, 3), 4),
    ("mul_basic", "multiply", (S(None, None, -1), 1), (3, 2), None, (3,), 0),
    ("add_scalar_upd", "add", ("i",), (5,), (3,), (), 5),
    ("set_newaxis", "set", (None, "i", S(1, None)), (3, 3), (2,), (1, 2, 2), 3),
]


@pytest.mark.parametrize("case", _SCATTER_BATCH, ids=[c[0] for c in _SCATTER_BATCH])
@pytest.mark.parametrize("axes", [(0, None, None), (None, 0, None), (None, None, 0),
                                  (1, 0, 0), (0, -1, None), (None, 0, 0)])
def test_scatter_batching(case, axes) -> None:
    _, op, idx, xs, ishape, ushape, n = case
    rng = np.random.default_rng(1)
    B = 3
    x = rng.standard_normal(xs)
    u = rng.standard_normal(ushape)
    i = rng.integers(-n, n, size=ishape) if ishape is not None else np.zeros((1,), np.int64)
    xd, ud, idd = axes
    if ishape is None:
        idd = None
        if xd is None and ud is None:
            pytest.skip("nothing batched")

    def f(x, u, i):
        key = tuple(i if e == "i" else e for e in idx)
        return getattr(fnp.at(x)[key], op)(u)

    def stack(a, d, k_fn):
        if d is None:
            return a
        return np.moveaxis(np.stack([k_fn(a, k) for k in range(B)]), 0, d)

    xb = stack(x, xd, lambda a, k: a + k)
    ub = stack(u, ud, lambda a, k: a * (k + 1))
    ib = stack(i, idd, lambda a, k: np.roll(a, k) if a.ndim else a)
    got = funcgrad.vmap(f, in_axes=(xd, ud, idd))(*dev((xb, ub, ib)))
    assert_allclose(got, _loop(f, (xb, ub, ib), (xd, ud, idd)))


def test_batch_flat_gather_and_grad_of_vmap() -> None:
    x = rand((3, 4))
    i = np.array([[0, 3], [1, 1], [2, 0]])
    outs, dims = batch_flat(lambda x, i: [ga.gather(x, i, indexer=(FULL, Operand(0)))],
                            [x, i], [None, 0], 3)
    got = np.moveaxis(host(outs[0]), dims[0], 0)
    assert_allclose(got, np.stack([x[:, r] for r in i]))

    def loss(x):
        return _sq_sum(funcgrad.vmap(lambda r: fnp._getitem(x, (S(None), r)))(i))

    g = funcgrad.grad(loss)(x)
    want = np.zeros_like(x)
    for r in i:
        np.add.at(want, (S(None), r), 2 * x[:, r])
    assert_allclose(g, want)


# ---------------------------------------------------------------------------------------------
# Primitives directly


def test_primitive_rules_and_errors() -> None:
    x = rand((3, 4))
    with pytest.raises(ShapeError, match="updates of shape"):
        sc.scatter_add(x, np.ones(5), indexer=(Slice(None, 2),))
    with pytest.raises(ValueError, match="index array #1"):
        ga.gather(x, np.array([0]), indexer=(Operand(1),))
    with pytest.raises(TypeError, match="not a Slice"):
        ga.gather(x, indexer=("a",))
    with pytest.raises(ValueError, match="mode"):
        ga.gather(x, np.array([0]), indexer=(Operand(0),), mode="bogus")
    # Transposes: gather <-> scatter_add.
    _, f_vjp = funcgrad.vjp(lambda x: ga.gather(x, np.array([0, 0]), indexer=(Operand(0),)), x)
    (ct,) = f_vjp(np.ones((2, 4)))
    assert_allclose(ct, np.array([[2.0] * 4, [0.0] * 4, [0.0] * 4]))
    # The identity indexer is skipped.
    assert ga.gather(x, indexer=(Ellipsis,)) is x
    # The jaxpr is readable.
    jaxpr = funcgrad.make_jaxpr(lambda x: fnp._getitem(x, (S(None, None, -1), None, 1)))(x)
    assert "gather[indexer=(::-1, None, 1)" in str(jaxpr)


def test_take_modes() -> None:
    x = dev(np.arange(5.0))
    assert_allclose(fnp.take(x, [7, -6], mode="wrap"), np.take(np.arange(5.0), [7, -6],
                                                                 mode="wrap"))
    assert_allclose(fnp.take(x, [7, -6], mode="clip"), np.take(np.arange(5.0), [7, -6],
                                                                 mode="clip"))
    assert_allclose(fnp.take(x, 9, mode="clip"), np.float64(4.0))
    with pytest.raises(ValueError, match="mode"):
        fnp.take(x, [0], mode="nope")
    g = funcgrad.grad(lambda x: _sum(fnp.take(x, [7, 2, 2], mode="wrap")))(x)
    assert_allclose(g, np.array([0.0, 0.0, 3.0, 0.0, 0.0]))


def test_concrete_helpers() -> None:
    assert_allclose(fnp.tril_indices(3, -1), np.tril_indices(3, -1))
    assert_allclose(fnp.triu_indices(3, 1, 4), np.triu_indices(3, 1, 4))
    assert_allclose(fnp.diag_indices(2, 3), np.diag_indices(2, 3))
    assert_allclose(fnp.tril_indices_from(np.ones((2, 3))), np.tril_indices_from(np.ones((2, 3))))
    assert_allclose(fnp.triu_indices_from(np.ones((2, 3))), np.triu_indices_from(np.ones((2, 3))))
    assert_allclose(fnp.diag_indices_from(np.ones((2, 2))), np.diag_indices_from(np.ones((2, 2))))
    with pytest.raises(ConcretizationError, match="nonzero"):
        funcgrad.make_jaxpr(lambda x: fnp.nonzero(x)[0])(np.ones(3))
    # Under grad the values are known, so nonzero works.
    def f(x):
        (i,) = fnp.nonzero(ew.gt(x, 0.0))
        return _sum(fnp.take(x, i))

    x = np.array([1.0, -2.0, 3.0])
    assert_allclose(funcgrad.grad(f)(x), np.array([1.0, 0.0, 1.0]))


def test_tracer_at_property_and_getitem() -> None:
    def f(x):
        # y = [2, x1 + 2 x2, x2]; L = 2 x2 + x1**2 + 2 x1 x2 + x0 x2
        y = x.at[0].set(2.0).at[[1, 1]].add(x[2])
        return _sum(ew.mul(y, x[::-1]))

    x0, x1, x2 = hx = rand((3,))
    val, g = funcgrad.value_and_grad(f)(dev(hx))
    assert_allclose(val, np.float64(2 * x2 + x1**2 + 2 * x1 * x2 + x0 * x2))
    assert_allclose(g, np.array([x2, 2 * x1 + 2 * x2, 2 + 2 * x1 + x0]))
    check_grads(funcgrad.grad(f), (dev(hx),), order=1)
