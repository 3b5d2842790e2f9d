"""Op table: shape manipulation, joining/splitting, padding, the shape primitives, and the
differentiable creation functions (linspace, meshgrid, tril/triu, diagflat, array of tracers).
"""

from __future__ import annotations

import numpy as np
from helpers import OpCase, rand

import funcgrad.numpy as fnp
from funcgrad.ops import shape as S

F64, F32, I64 = np.float64, np.float32, np.int64
DTYPES = (F64, F32, I64)


def _args(*shapes: tuple[int, ...], dtypes=DTYPES, scalar: bool = False) -> list[tuple]:
    out: list[tuple] = []
    for k, d in enumerate(dtypes):
        for j, s in enumerate(shapes):
            out.append((rand(s, d, seed=10 * k + j),))
    if scalar:
        out.append((1.5,))
    return out


def _pairs(*shape_pairs, dtypes=(F64, F32)) -> list[tuple]:
    out: list[tuple] = []
    for k, d in enumerate(dtypes):
        for j, (sa, sb) in enumerate(shape_pairs):
            out.append((rand(sa, d, seed=k + j), rand(sb, d, seed=k + j + 40)))
    return out


def lax_pad_ref(x, val, config):
    """Reference for the pad primitive, element by element."""
    x = np.asarray(x)
    out_shape = [lo + hi + (n + (n - 1) * it if n else 0)
                 for n, (lo, hi, it) in zip(x.shape, config)]
    out = np.full(out_shape, val, dtype=x.dtype)
    for idx in np.ndindex(*x.shape):
        pos = tuple(lo + i * (it + 1) for i, (lo, _, it) in zip(idx, config))
        if all(0 <= p < s for p, s in zip(pos, out_shape)):
            out[pos] = x[idx]
    return out


def dyn_slice_ref(x, starts, sizes):
    starts = [min(max(int(s), 0), n - z) for s, n, z in zip(starts, x.shape, sizes)]
    return x[tuple(slice(s, s + z) for s, z in zip(starts, sizes))]


def dyn_update_ref(x, u, starts):
    out = np.array(x, copy=True)
    starts = [min(max(int(s), 0), n - z) for s, n, z in zip(starts, x.shape, u.shape)]
    out[tuple(slice(s, s + z) for s, z in zip(starts, u.shape))] = u
    return out


ALL = ((), (3,), (2, 3), (2, 3, 4))
ND1 = ((3,), (2, 3), (2, 3, 4))
ND2 = ((2, 3), (2, 3, 4), (4, 1))
ND3 = ((2, 3, 4), (3, 1, 2))

CASES: list[OpCase] = [
    # -- reshaping ------------------------------------------------------------------------------
    OpCase("reshape_flat", lambda x: fnp.reshape(x, -1), lambda x: np.reshape(x, -1),
           _args(*ALL, scalar=True)),
    OpCase("reshape_infer", lambda x: fnp.reshape(x, (3, -1)), lambda x: np.reshape(x, (3, -1)),
           _args((3,), (2, 3), (6, 2))),
    OpCase("reshape_method", lambda x: x.reshape(2, -1) if hasattr(x, "aval") else
           fnp.reshape(x, (2, -1)), lambda x: np.reshape(x, (2, -1)), _args((2, 3), (4,))),
    OpCase("ravel", fnp.ravel, np.ravel, _args(*ALL)),
    OpCase("transpose", fnp.transpose, np.transpose, _args(*ALL)),
    OpCase("transpose_axes", lambda x: fnp.transpose(x, (1, -1, 0)),
           lambda x: np.transpose(x, (1, -1, 0)), _args((2, 3, 4), (1, 2, 3))),
    OpCase("moveaxis", lambda x: fnp.moveaxis(x, 0, -1), lambda x: np.moveaxis(x, 0, -1),
           _args(*ND1)),
    OpCase("moveaxis_seq", lambda x: fnp.moveaxis(x, (0, -1), (-1, 1)),
           lambda x: np.moveaxis(x, (0, -1), (-1, 1)), _args((2, 3, 4), (2, 1, 3))),
    OpCase("swapaxes", lambda x: fnp.swapaxes(x, 0, -1), lambda x: np.swapaxes(x, 0, -1),
           _args(*ND1)),
    OpCase("squeeze_all", fnp.squeeze, np.squeeze, _args((1, 3, 1), (1,), (), (2, 3))),
    OpCase("squeeze_axis", lambda x: fnp.squeeze(x, -1), lambda x: np.squeeze(x, -1),
           _args((2, 1), (1, 3, 1))),
    OpCase("squeeze_tuple", lambda x: fnp.squeeze(x, (0, 2)), lambda x: np.squeeze(x, (0, 2)),
           _args((1, 3, 1), (1, 1, 1))),
    OpCase("expand_dims", lambda x: fnp.expand_dims(x, -1), lambda x: np.expand_dims(x, -1),
           _args(*ALL, scalar=True)),
    OpCase("expand_dims_tuple", lambda x: fnp.expand_dims(x, (0, 2)),
           lambda x: np.expand_dims(x, (0, 2)), _args(*ND1)),
    OpCase("broadcast_to", lambda x: fnp.broadcast_to(x, (2, 3)),
           lambda x: np.broadcast_to(x, (2, 3)), _args((), (3,), (1, 3), (2, 1), scalar=True)),
    OpCase("broadcast_arrays", fnp.broadcast_arrays, np.broadcast_arrays,
           _pairs(((2, 1), (3,)), ((), (2, 3)), ((3,), (3,)))),
    OpCase("atleast_1d", fnp.atleast_1d, np.atleast_1d, _args(*ALL, scalar=True)),
    OpCase("atleast_2d", fnp.atleast_2d, np.atleast_2d, _args(*ALL)),
    OpCase("atleast_3d", fnp.atleast_3d, np.atleast_3d, _args(*ALL)),
    OpCase("atleast_2d_multi", fnp.atleast_2d, np.atleast_2d, _pairs(((), (3,)), ((2, 3), ()))),
    # -- joining --------------------------------------------------------------------------------
    OpCase("concatenate0", lambda x, y: fnp.concatenate([x, y]),
           lambda x, y: np.concatenate([x, y]), _pairs(((3,), (2,)), ((2, 3), (1, 3)))),
    OpCase("concatenate_neg", lambda x, y: fnp.concatenate((x, y, x), axis=-1),
           lambda x, y: np.concatenate((x, y, x), axis=-1),
           _pairs(((2, 3), (2, 1)), ((2, 3, 1), (2, 3, 2)))),
    OpCase("concatenate_none", lambda x, y: fnp.concatenate([x, y], axis=None),
           lambda x, y: np.concatenate([x, y], axis=None),
           _pairs(((2, 3), (4,)), ((), (2, 2)))),
    OpCase("concatenate_promote", lambda x, y: fnp.concatenate([x, y]),
           lambda x, y: np.concatenate([x, y]),
           [(rand((3,), F32), rand((2,), F64)), (rand((2, 2), I64), rand((1, 2), F32)),
            (rand((2,), I64), rand((3,), I64))]),
    OpCase("stack", lambda x, y: fnp.stack([x, y, x]), lambda x, y: np.stack([x, y, x]),
           _pairs(((), ()), ((3,), (3,)), ((2, 3), (2, 3)))),
    OpCase("stack_neg", lambda x, y: fnp.stack([x, y], axis=-1),
           lambda x, y: np.stack([x, y], axis=-1), _pairs(((3,), (3,)), ((2, 3), (2, 3)))),
    OpCase("hstack", lambda x, y: fnp.hstack([x, y]), lambda x, y: np.hstack([x, y]),
           _pairs(((), (3,)), ((2, 3), (2, 1)))),
    OpCase("vstack", lambda x, y: fnp.vstack([x, y]), lambda x, y: np.vstack([x, y]),
           _pairs(((3,), (3,)), ((2, 3), (1, 3)), ((), ()))),
    OpCase("dstack", lambda x, y: fnp.dstack([x, y]), lambda x, y: np.dstack([x, y]),
           _pairs(((3,), (3,)), ((2, 3), (2, 3)))),
    OpCase("column_stack", lambda x, y: fnp.column_stack([x, y]),
           lambda x, y: np.column_stack([x, y]), _pairs(((3,), (3,)), ((3,), (3, 2)))),
    # -- splitting ------------------------------------------------------------------------------
    OpCase("split_sections", lambda x: fnp.split(x, 2, axis=-1),
           lambda x: np.split(x, 2, axis=-1), _args((4,), (3, 2), (2, 3, 4))),
    OpCase("split_indices", lambda x: fnp.split(x, [1, -1, 10]),
           lambda x: np.split(x, [1, -1, 10]), _args((4,), (3, 2))),
    OpCase("array_split", lambda x: fnp.array_split(x, 3, axis=0),
           lambda x: np.array_split(x, 3, axis=0), _args((4,), (5, 2), (2,))),
    OpCase("hsplit", lambda x: fnp.hsplit(x, 2), lambda x: np.hsplit(x, 2),
           _args((4,), (3, 2))),
    # -- tiling / repeating ---------------------------------------------------------------------
    OpCase("tile", lambda x: fnp.tile(x, (2, 1, 3)), lambda x: np.tile(x, (2, 1, 3)),
           _args(*ALL)),
    OpCase("tile_int", lambda x: fnp.tile(x, 2), lambda x: np.tile(x, 2), _args(*ALL)),
    OpCase("repeat_flat", lambda x: fnp.repeat(x, 2), lambda x: np.repeat(x, 2), _args(*ALL)),
    OpCase("repeat_axis", lambda x: fnp.repeat(x, 3, axis=-1),
           lambda x: np.repeat(x, 3, axis=-1), _args(*ND1)),
    OpCase("repeat_counts", lambda x: fnp.repeat(x, [2, 0, 1], axis=0),
           lambda x: np.repeat(x, [2, 0, 1], axis=0), _args((3,), (3, 2))),
    OpCase("repeat_method", lambda x: x.repeat(2, axis=0) if hasattr(x, "aval")
           else fnp.repeat(x, 2, axis=0), lambda x: np.repeat(x, 2, axis=0), _args((3,), (2, 2))),
    # -- flipping / rolling ---------------------------------------------------------------------
    OpCase("flip", fnp.flip, np.flip, _args(*ALL)),
    OpCase("flip_axis", lambda x: fnp.flip(x, -1), lambda x: np.flip(x, -1), _args(*ND1)),
    OpCase("flip_tuple", lambda x: fnp.flip(x, (0, 2)), lambda x: np.flip(x, (0, 2)),
           _args(*ND3)),
    OpCase("fliplr", fnp.fliplr, np.fliplr, _args(*ND2)),
    OpCase("flipud", fnp.flipud, np.flipud, _args(*ND1)),
    OpCase("roll_flat", lambda x: fnp.roll(x, 2), lambda x: np.roll(x, 2), _args(*ALL)),
    OpCase("roll_axis", lambda x: fnp.roll(x, -1, axis=-1), lambda x: np.roll(x, -1, axis=-1),
           _args(*ND1)),
    OpCase("roll_tuple", lambda x: fnp.roll(x, (1, 5), axis=(0, 1)),
           lambda x: np.roll(x, (1, 5), axis=(0, 1)), _args(*ND2)),
    OpCase("rot90", fnp.rot90, np.rot90, _args(*ND2)),
    OpCase("rot90_k3_axes", lambda x: fnp.rot90(x, 3, axes=(2, 0)),
           lambda x: np.rot90(x, 3, axes=(2, 0)), _args(*ND3)),
    OpCase("rot90_k2", lambda x: fnp.rot90(x, -2), lambda x: np.rot90(x, -2), _args(*ND2)),
    # -- padding --------------------------------------------------------------------------------
    OpCase("pad_constant", lambda x: fnp.pad(x, 1), lambda x: np.pad(x, 1), _args(*ALL)),
    OpCase("pad_widths", lambda x: fnp.pad(x, ((0, 2), (1, 0)), constant_values=3),
           lambda x: np.pad(x, ((0, 2), (1, 0)), constant_values=3), _args((2, 3), (1, 1))),
    OpCase("pad_values_per_axis",
           lambda x: fnp.pad(x, 1, constant_values=((1, 2), (3, 4))),
           lambda x: np.pad(x, 1, constant_values=((1, 2), (3, 4))), _args((2, 3))),
    OpCase("pad_traced_value", lambda x, c: fnp.pad(x, (1, 2), constant_values=c),
           lambda x, c: np.pad(x, (1, 2), constant_values=c),
           _pairs(((3,), ()), ((2, 3), ()))),
    OpCase("pad_traced_values_per_axis", lambda x, c: fnp.pad(x, 1, constant_values=c),
           lambda x, c: np.pad(x, 1, constant_values=c),
           _pairs(((2, 3), (2, 2)), ((2, 3), (2, 1)), ((3,), (2,)))),
    OpCase("pad_edge", lambda x: fnp.pad(x, (2, 1), mode="edge"),
           lambda x: np.pad(x, (2, 1), mode="edge"), _args(*ND1)),
    OpCase("pad_reflect", lambda x: fnp.pad(x, (4, 2), mode="reflect"),
           lambda x: np.pad(x, (4, 2), mode="reflect"), _args((3,), (2, 3))),
    OpCase("pad_symmetric", lambda x: fnp.pad(x, 3, mode="symmetric"),
           lambda x: np.pad(x, 3, mode="symmetric"), _args((3,), (2, 3))),
    OpCase("pad_wrap", lambda x: fnp.pad(x, (4, 1), mode="wrap"),
           lambda x: np.pad(x, (4, 1), mode="wrap"), _args((3,), (2, 3))),
    OpCase("copy", fnp.copy, np.copy, _args(*ALL)),
    # -- the primitives directly ----------------------------------------------------------------
    OpCase("lax_pad_negative_interior",
           lambda x, v: S.pad(x, v, [(1, -1, 1), (-2, 2, 2)]),
           lambda x, v: lax_pad_ref(x, v, [(1, -1, 1), (-2, 2, 2)]),
           _pairs(((2, 3), ()), ((3, 4), ()), ((1, 3), ()))),
    OpCase("lax_pad_crop", lambda x: S.pad(x, 0.0, [(-1, -2, 0)]),
           lambda x: lax_pad_ref(x, 0.0, [(-1, -2, 0)]), _args((4,), (5,), dtypes=(F64, F32))),
    OpCase("lax_slice", lambda x: S.static_slice(x, (0, 1), (2, 4), (2, 2)),
           lambda x: x[0:2:2, 1:4:2], _args((2, 4), (3, 5))),
    OpCase("lax_rev", lambda x: S.rev(x, (0, 1)), lambda x: x[::-1, ::-1], _args((2, 3))),
    OpCase("lax_concatenate", lambda x, y: S.concatenate([x, y, x], 1),
           lambda x, y: np.concatenate([x, y, x], 1), _pairs(((2, 3), (2, 1)))),
    OpCase("lax_dynamic_slice", lambda x, i: S.dynamic_slice(x, (i, 1), (2, 2)),
           lambda x, i: dyn_slice_ref(x, (i, 1), (2, 2)),
           [(rand((4, 3)), np.array(1)), (rand((4, 3), F32), np.array(7)),
            (rand((3, 3)), np.array(-3)), (rand((4, 3), I64), np.array(2, np.int32))]),
    OpCase("lax_dynamic_update_slice",
           lambda x, u, i: S.dynamic_update_slice(x, u, (i, 0)),
           lambda x, u, i: dyn_update_ref(x, u, (i, 0)),
           [(rand((4, 3)), rand((2, 3), seed=3), np.array(1)),
            (rand((4, 3), F32), rand((1, 3), F32, seed=4), np.array(9)),
            (rand((3, 2)), rand((2, 2), seed=5), np.array(-1))]),
    OpCase("lax_dynamic_slice_static_index", lambda x: S.dynamic_slice(x, (1,), (2,)),
           lambda x: x[1:3], _args((4,), (3,))),
    OpCase("lax_squeeze_expand", lambda x: S.expand_dims(S.squeeze(x, (1,)), (0, 3)),
           lambda x: np.expand_dims(np.squeeze(x, 1), (0, 3)), _args((2, 1, 3))),
    # -- differentiable creation ----------------------------------------------------------------
    OpCase("array_of_tracers", lambda x, y: fnp.array([x, y, x]),
           lambda x, y: np.array([x, y, x]), _pairs(((), ()), ((3,), (3,)))),
    OpCase("asarray_nested", lambda x, y: fnp.asarray([[x, 1.0], [y, x]]),
           lambda x, y: np.asarray([[x, 1.0], [y, x]]),
           [(rand((), F64), rand((), F64, seed=2)), (rand((), F32), rand((), F32, seed=2))]),
    OpCase("linspace", lambda a, b: fnp.linspace(a, b, 5), lambda a, b: np.linspace(a, b, 5),
           _pairs(((), ()), ((3,), ()), ((2, 1), (3,)))),
    OpCase("linspace_noendpoint_axis",
           lambda a, b: fnp.linspace(a, b, 4, endpoint=False, axis=-1),
           lambda a, b: np.linspace(a, b, 4, endpoint=False, axis=-1),
           _pairs(((), ()), ((3,), (3,)))),
    OpCase("linspace_retstep", lambda a, b: fnp.linspace(a, b, 6, retstep=True),
           lambda a, b: np.linspace(a, b, 6, retstep=True), _pairs(((), ()), ((2,), ()))),
    OpCase("linspace_num1", lambda a, b: fnp.linspace(a, b, 1),
           lambda a, b: np.linspace(a, b, 1), _pairs(((), ()))),
    OpCase("logspace", lambda a, b: fnp.logspace(a, b, 4), lambda a, b: np.logspace(a, b, 4),
           _pairs(((), ()), ((2,), ())), rtol=1e-10),
    OpCase("meshgrid_xy", lambda x, y: fnp.meshgrid(x, y), lambda x, y: np.meshgrid(x, y),
           _pairs(((3,), (2,)), ((), (4,)))),
    OpCase("meshgrid_ij", lambda x, y: fnp.meshgrid(x, y, x, indexing="ij"),
           lambda x, y: np.meshgrid(x, y, x, indexing="ij"), _pairs(((3,), (2,)))),
    OpCase("meshgrid_sparse", lambda x, y: fnp.meshgrid(x, y, sparse=True),
           lambda x, y: np.meshgrid(x, y, sparse=True), _pairs(((3,), (2,)))),
    OpCase("tril", fnp.tril, np.tril, _args((3, 3), (2, 4), (3,), (2, 3, 2))),
    OpCase("tril_k", lambda x: fnp.tril(x, -1), lambda x: np.tril(x, -1), _args((3, 3), (4, 2))),
    OpCase("triu", fnp.triu, np.triu, _args((3, 3), (2, 4), (2, 3, 2))),
    OpCase("triu_k", lambda x: fnp.triu(x, 1), lambda x: np.triu(x, 1), _args((3, 3), (4, 2))),
    OpCase("diagflat", fnp.diagflat, np.diagflat, _args((), (3,), (2, 2))),
    OpCase("diagflat_k", lambda x: fnp.diagflat(x, -2), lambda x: np.diagflat(x, -2),
           _args((3,))),
    OpCase("full_traced", lambda c: fnp.full((2, 3), c), lambda c: np.full((2, 3), c),
           _args((), (3,))),
    OpCase("full_like_traced", lambda x, c: fnp.full_like(x, c),
           lambda x, c: np.full_like(x, c), _pairs(((2, 3), ()))),
    OpCase("zeros_like", fnp.zeros_like, np.zeros_like, _args(*ALL)),
    OpCase("ones_like", fnp.ones_like, np.ones_like, _args(*ALL)),
]
