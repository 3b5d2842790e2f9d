"""Focused tests of the shape primitives and funcgrad.numpy shape functions: edge cases,
clamping, error messages, staging, batching with unusual axes, rule coverage.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers import assert_allclose, check_device, dev, host, rand

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.errors import ConcretizationError, DTypeError, ShapeError
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import jvp_rules
from funcgrad.interpreters.transpose import linear_primitives, transpose_rules
from funcgrad.ir import eval_jaxpr, typecheck_jaxpr
from funcgrad.ops import shape as S
from funcgrad.test_util import check_grads
from tests.funcgrad.op_tables.shape import CASES, dyn_slice_ref, dyn_update_ref, lax_pad_ref

MY_PRIMS = [
    S.squeeze_p, S.expand_dims_p, S.concatenate_p, S.pad_p, S.rev_p, S.slice_p,
    S.dynamic_slice_p, S.dynamic_update_slice_p, S.iota_p,
]
LINEAR = [p for p in MY_PRIMS if p is not S.iota_p]


def staged(f, *args):
    """Run ``f`` through make_jaxpr + eval_jaxpr (the staged path), typechecking the jaxpr."""
    closed = funcgrad.make_jaxpr(f)(*args)
    typecheck_jaxpr(closed.jaxpr)
    leaves = funcgrad.tree_util.tree_leaves(args)
    out = eval_jaxpr(closed.jaxpr, closed.consts, *leaves)
    return closed, out


# ---------------------------------------------------------------------------------------------
# Rule coverage


@pytest.mark.parametrize("prim", MY_PRIMS, ids=lambda p: p.name)
def test_every_rule_present(prim) -> None:
    assert prim.impl is not None and prim.abstract_eval is not None
    assert prim in jvp_rules
    assert prim in batching.batch_rules
    if prim in LINEAR:
        assert prim in linear_primitives and prim in transpose_rules


# ---------------------------------------------------------------------------------------------
# Staged path agrees with eager (shape/dtype rules match the implementations)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_staged_matches_eager(case) -> None:
    for args in case.args:
        if not any(isinstance(a, np.ndarray) for a in args):
            continue
        args = dev(args)
        eager = case.fn(*args)
        closed, out = staged(lambda *xs, case=case: case.fn(*xs), *args)
        eager_leaves = funcgrad.tree_util.tree_leaves(eager)
        assert len(out) == len(eager_leaves)
        for o, e, v in zip(out, eager_leaves, closed.jaxpr.outvars):
            assert_allclose(o, e, err_msg=case.name)
            assert v.aval.shape == np.shape(host(e)), case.name
            assert v.aval.dtype == np.asarray(host(e)).dtype, case.name


# ---------------------------------------------------------------------------------------------
# pad


PAD_CONFIGS = [
    [(0, 0, 0)],
    [(2, 1, 0)],
    [(-1, 2, 0)],
    [(1, -2, 2)],
    [(-3, -1, 1)],
    [(0, 0, 3)],
    [(-4, 1, 1)],
]


@pytest.mark.parametrize("cfg", PAD_CONFIGS, ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.bool_])
def test_pad_matches_reference_1d(cfg, dtype) -> None:
    x = rand((4,), dtype)
    v = np.asarray(rand((), dtype, seed=5))[()]
    out = S.pad(dev(x), v, cfg)
    check_device(out)
    assert_allclose(out, lax_pad_ref(x, v, cfg))


def test_pad_matches_reference_nd() -> None:
    x = rand((3, 2, 4))
    for cfg in itertools.product([(1, -1, 1), (-1, 0, 0), (0, 2, 2)], repeat=3):
        cfg = list(cfg)
        assert_allclose(S.pad(dev(x), 7.0, cfg), lax_pad_ref(x, 7.0, cfg))
        _, (staged_out,) = staged(lambda a, cfg=cfg: S.pad(a, 7.0, cfg), dev(x))
        assert_allclose(staged_out, lax_pad_ref(x, 7.0, cfg))


def test_pad_empty_operand_and_crop_to_empty() -> None:
    assert_allclose(S.pad(dev(np.zeros((0,))), 1.0, [(1, 2, 3)]), np.ones(3))
    assert_allclose(S.pad(dev(np.ones((3,))), 1.0, [(-2, -1, 0)]), np.ones(0))


def test_pad_grads_operand_and_value() -> None:
    x, v = rand((3, 2)), np.float64(0.7)
    cfg = [(1, -1, 1), (-1, 2, 2)]

    def f(x, v):
        return S.pad(x, v, cfg) ** 2

    check_grads(f, dev((x, v)), order=2, modes=("fwd", "rev"))
    # d/dv of sum(pad(x, v)) counts the padding positions that survive the crop.
    g = funcgrad.grad(lambda v: fnp.sum(S.pad(dev(x), v, cfg)))(v)
    n_pad = lax_pad_ref(x, np.nan, cfg)
    assert_allclose(g, np.float64(np.isnan(n_pad).sum()))


def test_pad_vmap_batched_value_is_nan_safe() -> None:
    x = rand((2, 3))
    vs = np.array([1.0, np.inf, -2.0])
    cfg = [(1, 0, 1)]
    out = funcgrad.vmap(lambda x, v: S.pad(x, v, cfg), in_axes=(1, 0))(dev(x), dev(vs))
    want = np.stack([lax_pad_ref(x[:, i], vs[i], cfg) for i in range(3)])
    assert_allclose(out, want)


def test_pad_errors() -> None:
    with pytest.raises(ShapeError, match="pad: padding_config has 1 entries.*f64\\[2,3\\]"):
        S.pad(np.ones((2, 3)), 0.0, [(1, 1, 0)])
    with pytest.raises(ShapeError, match="interior padding must be >= 0"):
        S.pad(np.ones(3), 0.0, [(0, 0, -1)])
    with pytest.raises(ShapeError, match="negative size"):
        S.pad(np.ones(3), 0.0, [(-2, -2, 0)])
    with pytest.raises(ShapeError, match="padding value must be a scalar"):
        S.pad(np.ones(3), np.ones(2), [(1, 1, 0)])


# ---------------------------------------------------------------------------------------------
# slice / rev / concatenate / squeeze / expand_dims primitives


def test_static_slice_grads_and_zero_size() -> None:
    x = rand((5, 4))
    check_grads(lambda x: S.static_slice(x, (1, 0), (5, 3), (3, 2)), dev((x,)), order=2)
    check_grads(lambda x: S.static_slice(x, (2, 0), (2, 4)), dev((x,)), order=1)
    with pytest.raises(ShapeError, match="slice: .*out of range for f64\\[5,4\\]"):
        S.static_slice(x, (0, 0), (6, 4))


def test_concatenate_errors_name_shapes() -> None:
    with pytest.raises(ShapeError, match=r"concatenate: .*f64\[2,3\], f64\[3,3\]"):
        S.concatenate([np.ones((2, 3)), np.ones((3, 3))], 1)
    with pytest.raises(DTypeError, match="one dtype"):
        S.concatenate([np.ones(2), np.ones(2, np.float32)], 0)
    with pytest.raises(ShapeError, match="zero-dimensional"):
        S.concatenate([np.float64(1.0), np.float64(2.0)], 0)


def test_concatenate_transpose_partial_linear() -> None:
    x, y = rand((2, 3)), rand((2, 1), seed=3)
    check_grads(lambda x: S.concatenate([x, dev(y), x], 1), dev((x,)), order=2)
    g = funcgrad.grad(lambda y: fnp.sum(S.concatenate([dev(x), y], 1) * 2.0))(dev(y))
    assert_allclose(g, 2.0 * np.ones((2, 1)))


def test_squeeze_expand_dims_vmap_nonzero_axes() -> None:
    x = rand((1, 3, 4, 1))
    f = lambda a: S.expand_dims(S.squeeze(a, (0, 2)), (1, 2))
    out = funcgrad.vmap(f, in_axes=2)(dev(x))
    want = np.stack([np.asarray(f(x[:, :, i])) for i in range(4)])
    assert_allclose(out, want)
    out = funcgrad.vmap(lambda a: S.rev(a, (0, 2)), in_axes=1)(dev(x))
    assert_allclose(out, np.stack([x[:, i][::-1, :, ::-1] for i in range(3)]))


def test_squeeze_error_names_size() -> None:
    with pytest.raises(ShapeError, match="cannot remove axis 1 of f64\\[1,3\\]: its size is 3"):
        S.squeeze(np.ones((1, 3)), (1,))


# ---------------------------------------------------------------------------------------------
# dynamic_slice / dynamic_update_slice


@pytest.mark.parametrize("start", [-5, -1, 0, 1, 2, 3, 4, 10])
def test_dynamic_slice_clamps(start) -> None:
    x = rand((5, 3))
    i = dev(np.array(start))
    want = dyn_slice_ref(x, (start, 0), (2, 2))
    assert_allclose(S.dynamic_slice(dev(x), (i, 0), (2, 2)), want)
    _, (out,) = staged(lambda x, i: S.dynamic_slice(x, (i, 0), (2, 2)), dev(x), i)
    assert_allclose(out, want)


@pytest.mark.parametrize("start", [-3, 0, 2, 3, 9])
def test_dynamic_update_slice_clamps(start) -> None:
    x, u = rand((5, 3)), rand((2, 3), seed=9)
    i = dev(np.array(start))
    want = dyn_update_ref(x, u, (start, 0))
    out = S.dynamic_update_slice(dev(x), dev(u), (i, 0))
    check_device(out)
    assert_allclose(out, want)
    _, (out,) = staged(lambda x, u, i: S.dynamic_update_slice(x, u, (i, 0)), dev(x), dev(u), i)
    assert_allclose(out, want)
    # the operand is not mutated
    assert_allclose(dev(x), x)


def test_dynamic_slice_grads() -> None:
    x = rand((5, 3))
    i = dev(np.array(3))
    check_grads(lambda x: S.dynamic_slice(x, (i, 1), (3, 2)), dev((x,)), order=2)
    g = funcgrad.grad(lambda x: fnp.sum(S.dynamic_slice(x, (i, 1), (3, 2))))(dev(x))
    want = np.zeros((5, 3))
    want[2:5, 1:3] = 1.0
    assert_allclose(g, want)


def test_dynamic_update_slice_grads() -> None:
    x, u = rand((4, 3)), rand((2, 2), seed=2)
    i = dev(np.array(1))
    f = lambda x, u: S.dynamic_update_slice(x, u, (i, i)) ** 2
    check_grads(f, dev((x, u)), order=2)
    gx, gu = funcgrad.grad(lambda x, u: fnp.sum(S.dynamic_update_slice(x, u, (i, i))),
                           argnums=(0, 1))(dev(x), dev(u))
    want = np.ones((4, 3))
    want[1:3, 1:3] = 0.0
    assert_allclose(gx, want)
    assert_allclose(gu, np.ones((2, 2)))


def test_dynamic_ops_vmap_batched_indices() -> None:
    x = rand((4, 5))
    idx = np.array([0, 3, 7, -2])
    out = funcgrad.vmap(lambda x, i: S.dynamic_slice_in_dim(x, i, 2), in_axes=(0, 0))(
        dev(x), dev(idx))
    want = np.stack([dyn_slice_ref(x[k], (idx[k],), (2,)) for k in range(4)])
    assert_allclose(out, want)
    # operand not batched, indices batched
    out = funcgrad.vmap(lambda i: S.dynamic_slice_in_dim(dev(x), i, 2, axis=1))(dev(idx))
    want = np.stack([dyn_slice_ref(x, (0, idx[k]), (4, 2)) for k in range(4)])
    assert_allclose(out, want)
    u = rand((4, 2), seed=1)
    out = funcgrad.vmap(
        lambda u, i: S.dynamic_update_slice_in_dim(dev(x), fnp.expand_dims(u, 1), i, axis=1),
        in_axes=(1, None))(
        dev(u), dev(np.array(4)))
    want = np.stack([dyn_update_ref(x, u[:, k:k + 1], (0, 4)) for k in range(2)])
    assert_allclose(out, want)
    # everything batched: operand, update and indices
    us = rand((4, 4), seed=2)
    out = funcgrad.vmap(
        lambda x, u, i: S.dynamic_update_slice_in_dim(x, fnp.expand_dims(u, 1), i, axis=1),
        in_axes=(1, 0, 0))(dev(np.stack([x] * 4, axis=1)), dev(us), dev(idx))
    want = np.stack([dyn_update_ref(x, us[k][:, None], (0, idx[k])) for k in range(4)])
    assert_allclose(out, want)


def test_dynamic_slice_vmap_of_grad() -> None:
    x = rand((6,))
    idx = np.array([0, 2, 5])
    g = funcgrad.vmap(funcgrad.grad(lambda x, i: fnp.sum(S.dynamic_slice_in_dim(x, i, 3) ** 2)),
                      in_axes=(None, 0))(dev(x), dev(idx))
    want = []
    for i in idx:
        s = min(max(i, 0), 3)
        w = np.zeros(6)
        w[s:s + 3] = 2 * x[s:s + 3]
        want.append(w)
    assert_allclose(g, np.stack(want))


def test_grad_of_vmapped_dynamic_ops_with_batched_indices() -> None:
    x = rand((6,))
    idx = dev(np.array([0, 2, 5, -1]))

    def f(x):
        blocks = funcgrad.vmap(lambda i: S.dynamic_slice_in_dim(x, i, 3))(idx)
        return fnp.sum(blocks * blocks)

    want = np.zeros(6)
    for i in (0, 2, 3, 0):
        want[i:i + 3] += 2 * x[i:i + 3]
    assert_allclose(funcgrad.grad(f)(dev(x)), want)
    check_grads(f, dev((x,)), order=2)

    xs, us = rand((4, 5)), rand((4, 2), seed=3)

    def g(xs, us):
        return funcgrad.vmap(lambda x, u, i: S.dynamic_update_slice_in_dim(x, u, i))(xs, us, idx)

    check_grads(g, dev((xs, us)), order=2)
    out = funcgrad.jit(g)(*dev((xs, us)))
    want = np.stack([dyn_update_ref(xs[k], us[k], (int(host(idx)[k]),)) for k in range(4)])
    assert_allclose(out, want)


def test_dynamic_slice_errors() -> None:
    with pytest.raises(ShapeError, match="one start index per axis of f64\\[2,3\\], got 1"):
        S.dynamic_slice(np.ones((2, 3)), (0,), (1, 1))
    with pytest.raises(DTypeError, match="integer scalars, got f64"):
        S.dynamic_slice(np.ones(3), (1.0,), (1,))
    with pytest.raises(ShapeError, match="slice_sizes \\(4,\\) do not fit"):
        S.dynamic_slice(np.ones(3), (0,), (4,))
    with pytest.raises(ShapeError, match="update f64\\[4\\] does not fit"):
        S.dynamic_update_slice(np.ones(3), np.ones(4), (0,))


# ---------------------------------------------------------------------------------------------
# iota


def test_iota() -> None:
    out = S.iota(np.float32, (2, 3), 1)
    check_device(out)
    assert_allclose(out, np.broadcast_to(np.arange(3, dtype=np.float32), (2, 3)))
    assert_allclose(S.iota(np.int32, 4), np.arange(4, dtype=np.int32))
    closed, (o,) = staged(lambda: S.iota(np.int64, (3, 2), 0))
    assert_allclose(o, np.broadcast_to(np.arange(3)[:, None], (3, 2)))
    with pytest.raises(ShapeError, match="dimension 2 is out of bounds"):
        S.iota(np.int64, (3, 2), 2)
    with pytest.raises(DTypeError, match="numeric"):
        S.iota(np.bool_, (3,))


def test_iota_strict_device() -> None:
    from funcgrad._strict_array import StrictArray

    with funcgrad.default_device("strict"):
        assert isinstance(S.iota(np.float64, (3,)), StrictArray)


# ---------------------------------------------------------------------------------------------
# funcgrad.numpy shape functions: errors and edge cases


def test_reshape_errors_name_shapes() -> None:
    with pytest.raises(ShapeError, match=r"reshape: cannot reshape f64\[2,3\].*\(4,\)"):
        fnp.reshape(np.ones((2, 3)), (4,))
    with pytest.raises(ShapeError, match=r"f64\[2,3\].*\(4, -1\)"):
        fnp.reshape(np.ones((2, 3)), (4, -1))
    a = np.arange(6.0).reshape(2, 3)
    assert_allclose(fnp.reshape(a, (3, 2), order="F"), np.reshape(a, (3, 2), order="F"))
    assert_allclose(fnp.ravel(a, order="F"), np.ravel(a, order="F"))


def test_reshape_noop_returns_input() -> None:
    x = dev(np.ones((2, 3)))
    assert fnp.reshape(x, (2, 3)) is x


@pytest.mark.parametrize("fn", [
    lambda x: fnp.squeeze(x, 3),
    lambda x: fnp.expand_dims(x, 4),
    lambda x: fnp.moveaxis(x, 0, 3),
    lambda x: fnp.swapaxes(x, 0, -4),
    lambda x: fnp.flip(x, 3),
    lambda x: fnp.concatenate([x, x], axis=3),
    lambda x: fnp.stack([x, x], axis=4),
    lambda x: fnp.repeat(x, 2, axis=3),
    lambda x: fnp.roll(x, 1, axis=-4),
    lambda x: fnp.split(x, 1, axis=3),
])
def test_bad_axis_names_rank(fn) -> None:
    with pytest.raises(ShapeError, match="rank"):
        fn(np.ones((1, 2, 3)))


def test_squeeze_non_unit_axis() -> None:
    with pytest.raises(ShapeError, match="squeeze: cannot select axis 1.*its size is 2"):
        fnp.squeeze(np.ones((1, 2)), axis=1)


def test_transpose_bad_axes() -> None:
    with pytest.raises(ShapeError, match="transpose: axes \\(1, 0\\) don't match an array of "
                       "rank 3"):
        fnp.transpose(np.ones((1, 2, 3)), (1, 0))
    with pytest.raises(ShapeError, match="repeated axis"):
        fnp.transpose(np.ones((1, 2)), (1, 1))


def test_split_results() -> None:
    x = np.arange(12.0).reshape(3, 4)
    parts = fnp.split(dev(x), 2, axis=1)
    assert isinstance(parts, list) and len(parts) == 2
    for p, w in zip(parts, np.split(x, 2, axis=1)):
        check_device(p)
        assert_allclose(p, w)
    parts = fnp.split(dev(x), np.array([1, 2]))
    assert [host(p).shape for p in parts] == [(1, 4), (1, 4), (1, 4)]
    parts = fnp.array_split(dev(np.arange(7.0)), 3)
    assert [host(p).tolist() for p in parts] == [[0.0, 1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    parts = fnp.split(dev(np.arange(5.0)), [3, 1])  # decreasing: empty middle, as NumPy
    assert [host(p).shape for p in parts] == [(3,), (0,), (4,)]
    with pytest.raises(ValueError, match="does not result in an equal division"):
        fnp.split(np.arange(5.0), 2)
    with pytest.raises(ValueError, match="larger than 0"):
        fnp.array_split(np.arange(5.0), 0)


def test_split_grad() -> None:
    x = rand((6,))

    def f(x):
        a, b, c = fnp.split(x, 3)
        return fnp.sum(a * 1.0 + b * 2.0 + c * 3.0)

    assert_allclose(funcgrad.grad(f)(dev(x)), np.repeat([1.0, 2.0, 3.0], 2))


def test_concatenate_python_and_dtype_args() -> None:
    out = fnp.concatenate([[1, 2], [3.0]])
    assert_allclose(out, np.array([1.0, 2.0, 3.0]))
    out = fnp.concatenate([dev(np.ones(2, np.float32)), dev(np.ones(1))], dtype=np.float32)
    assert host(out).dtype == np.float32
    with pytest.raises(TypeError, match="cannot cast array data from float64 to int64"):
        fnp.concatenate([np.ones(2)], dtype=np.int64)
    with pytest.raises(ValueError, match="need at least one array"):
        fnp.concatenate([])
    with pytest.raises(ShapeError, match="same shape"):
        fnp.stack([np.ones(2), np.ones(3)])


def test_repeat_traced_counts_error() -> None:
    def f(x, r):
        return fnp.repeat(x, r)

    with pytest.raises(ConcretizationError, match="repeat"):
        funcgrad.make_jaxpr(f)(np.ones(3), np.array([1, 2, 3]))
    with pytest.raises(ValueError, match="negative"):
        fnp.repeat(np.ones(2), -1)


def test_pad_fnp_modes_vs_numpy() -> None:
    x = rand((3, 4))
    for mode in ("constant", "edge", "reflect", "symmetric", "wrap"):
        for w in [0, 1, (2, 3), ((0, 5), (7, 1)), [[1], [2]]]:
            out = fnp.pad(dev(x), w, mode=mode)
            check_device(out)
            assert_allclose(out, np.pad(x, w, mode=mode), err_msg=f"{mode} {w}")
    assert_allclose(fnp.pad(dev(x), 1, mode="mean"), np.pad(x, 1, mode="mean"))
    assert_allclose(fnp.pad(dev(x), 1, mode="reflect", reflect_type="odd"),
                    np.pad(x, 1, mode="reflect", reflect_type="odd"))
    with pytest.raises(ValueError, match="unsupported keyword arguments"):
        fnp.pad(x, 1, mode="edge", constant_values=3)
    with pytest.raises(ValueError, match="negative values"):
        fnp.pad(x, -1)
    with pytest.raises(ValueError, match="empty axis"):
        fnp.pad(np.ones((0, 2)), 1, mode="edge")


def test_pad_fnp_reflect_grads() -> None:
    x = rand((3, 2))
    check_grads(lambda x: fnp.pad(x, ((4, 1), (1, 2)), mode="reflect"), dev((x,)), order=2)
    check_grads(lambda x: fnp.pad(x, 2, mode="edge"), dev((x,)), order=1)


def test_roll_tile_repeat_grads() -> None:
    x = rand((2, 3))
    check_grads(lambda x: fnp.roll(x, (1, -1), (0, 1)) * x, dev((x,)), order=2)
    check_grads(lambda x: fnp.tile(x, (2, 2)), dev((x,)), order=1)
    check_grads(lambda x: fnp.repeat(x, [1, 0, 3], axis=1), dev((x,)), order=1)


def test_shape_metadata() -> None:
    x = dev(np.ones((2, 3)))
    assert fnp.shape(x) == (2, 3) and fnp.ndim(x) == 2 and fnp.size(x) == 6
    assert fnp.size(x, -1) == 3
    assert fnp.shape([[1, 2, 3]]) == (1, 3) and fnp.ndim(2.0) == 0

    def f(x):
        assert fnp.shape(x) == (2, 3) and fnp.size(x) == 6
        return x

    funcgrad.make_jaxpr(f)(np.ones((2, 3)))


def test_copy_is_a_copy() -> None:
    x = dev(np.ones(3))
    y = fnp.copy(x)
    assert y is not x
    y[0] = 5.0
    assert_allclose(x, np.ones(3))


def test_tracer_methods_route_here() -> None:
    x = rand((2, 3, 1))

    def f(x):
        return (x.reshape(3, 2).T.ravel() + x.flatten() + x.squeeze().swapaxes(0, 1).reshape(-1)
                + x.transpose(2, 1, 0).reshape((6,)) + x.repeat(1, axis=0).reshape(6))

    assert_allclose(funcgrad.jit(f)(dev(x)) if hasattr(funcgrad, "jit") else f(dev(x)), f(x))
    check_grads(f, dev((x,)), order=1)
    w = dev(np.arange(6.0))
    g = funcgrad.grad(lambda x: fnp.sum(x.reshape(6, order="F") * w))(dev(x))
    assert_allclose(g, np.arange(6.0).reshape(x.shape, order="F"))


def test_vmap_shape_functions_nonzero_axes() -> None:
    x = rand((3, 4, 2))
    fns = [
        lambda a: fnp.concatenate([a, 2.0 * a], axis=-1),
        lambda a: fnp.stack([a, 2.0 * a], axis=1),
        lambda a: fnp.pad(a, ((1, 0), (2, 1)), mode="wrap"),
        lambda a: fnp.rot90(a),
        lambda a: fnp.tile(a, 2),
        lambda a: fnp.roll(a, 1),
        lambda a: fnp.split(a, 2, axis=1)[1],
    ]
    for f in fns:
        out = funcgrad.vmap(f, in_axes=1)(dev(x))
        want = np.stack([host(f(x[:, i])) for i in range(4)])
        assert_allclose(out, want)


def test_get_aval_of_results() -> None:
    out = fnp.stack([dev(np.ones(2, np.float32))] * 3)
    assert get_aval(out).dtype == np.float32
