"""Op table: indexing (every index kind), ``x.at[...]`` updates, take, diagonals and friends.

``fn`` goes through ``fnp._getitem`` (what ``Tracer.__getitem__`` calls) so the forward test
on plain arrays exercises funcgrad's indexing, not NumPy's.
"""

from __future__ import annotations

import numpy as np
from helpers import OpCase, rand

import funcgrad.numpy as fnp

F64, F32, I64 = np.float64, np.float32, np.int64
S = slice


def _x(shape, dtypes=(F64, F32), seed=0):
    return [(rand(shape, d, seed=seed + k),) for k, d in enumerate(dtypes)]


def _xi(shape, idx, dtypes=(F64, F32)):
    return [(rand(shape, d, seed=k), np.asarray(idx)) for k, d in enumerate(dtypes)]


def _get(idx):
    """fn/ref pair for ``x[idx]`` with a static index."""
    return (lambda x: fnp._getitem(x, idx)), (lambda x: np.asarray(x)[idx])


def _np_at(op):
    """NumPy reference of ``x.at[idx].op(v)`` with ``ufunc.at`` semantics."""

    def ref(x, v, idx):
        out = np.array(x, copy=True)
        v = np.asarray(v, dtype=out.dtype) if op != "set" else v
        if op == "set":
            out[idx] = v
        elif op == "add":
            np.add.at(out, idx, v)
        elif op == "subtract":
            np.subtract.at(out, idx, v)
        elif op == "multiply":
            np.multiply.at(out, idx, v)
        elif op == "divide":
            np.divide.at(out, idx, v)
        elif op == "min":
            np.minimum.at(out, idx, v)
        elif op == "max":
            np.maximum.at(out, idx, v)
        elif op == "power":
            out[idx] = out[idx] ** v
        return out

    return ref


CASES: list[OpCase] = []

# ---------------------------------------------------------------------------------------------
# x[idx] with static indices: every index kind

_STATIC = [
    ("int", (3, 4), 1),
    ("neg_int", (3, 4), (-1, -2)),
    ("slice", (5, 4), S(1, 4)),
    ("slice_step", (5, 4), S(None, None, 2)),
    ("slice_neg_step", (5, 4), S(None, None, -1)),
    ("slice_neg_step2", (5, 4), (S(3, 0, -2), S(-1, None, -3))),
    ("slice_neg_bounds", (5, 4), (S(-3, -1), S(None, -2))),
    ("slice_empty", (5, 4), S(3, 1)),
    ("newaxis", (3, 4), (None, S(None), None)),
    ("ellipsis", (2, 3, 4), (Ellipsis, 1)),
    ("ellipsis_newaxis", (2, 3, 4), (None, Ellipsis, None, 0)),
    ("list", (4, 3), [0, 2, 2, -1]),
    ("list_2d", (4, 3), (S(None), [[0, 1], [2, 2]])),
    ("empty_list", (4, 3), ([],)),
    ("int_and_list_separated", (3, 4, 5), (1, S(None), [0, 2, 4])),
    ("lists_adjacent", (3, 4, 5), (S(None), [0, 1, 3], [1, 4, 0])),
    ("lists_separated", (3, 4, 5), ([0, 2], S(1, 3), [1, 4])),
    ("lists_separated_by_newaxis", (3, 4, 5), (S(None), [0, 1], None, [1, 2])),
    ("lists_separated_by_ellipsis", (3, 4), ([0, 1], Ellipsis, [1, 2])),
    ("bool_mask", (4, 3), np.array([True, False, True, True])),
    ("bool_mask_2d", (3, 4), np.arange(12).reshape(3, 4) % 3 == 0),
    ("bool_mask_and_slice", (3, 4), (S(None, None, -1), np.array([True, False, True, False]))),
]
for name, shape, idx in _STATIC:
    fn, ref = _get(idx)
    CASES.append(OpCase(f"getitem_{name}", fn, ref, _x(shape)))

CASES.append(OpCase(
    "getitem_scalar_newaxis", lambda x: fnp._getitem(x, (None, Ellipsis)),
    lambda x: np.asarray(x)[None, ...], [(rand((), F64),), (rand((), F32),)],
))
CASES.append(OpCase(
    "getitem_int_dtype", lambda x: fnp._getitem(x, (S(None, None, -1), [0, 2])),
    lambda x: x[::-1, [0, 2]], [(rand((3, 4), I64),), (rand((3, 4), np.int32),)],
))

# x[idx] with index arrays passed as arguments (so vmap batches them too)
CASES += [
    OpCase("getitem_array", lambda x, i: fnp._getitem(x, i), lambda x, i: x[i],
           _xi((4, 3), [[3, 0], [-1, 2]])),
    OpCase("getitem_array_0d", lambda x, i: fnp._getitem(x, (S(None), i)),
           lambda x, i: x[:, i], _xi((4, 3), np.array(-2))),
    OpCase("getitem_array_separated", lambda x, i: fnp._getitem(x, (i, S(None), i)),
           lambda x, i: x[i, :, i], _xi((3, 4, 3), [2, 0, 1, 1])),
    OpCase("getitem_array_adjacent", lambda x, i: fnp._getitem(x, (S(1, None), i, i)),
           lambda x, i: x[1:, i, i], _xi((3, 4, 4), [[0, 3], [2, 2]])),
    OpCase("getitem_array_int_separated", lambda x, i: fnp._getitem(x, (1, S(None), i)),
           lambda x, i: x[1, :, i], _xi((2, 3, 4), [3, 0, -1])),
    OpCase("getitem_array_ellipsis", lambda x, i: fnp._getitem(x, (Ellipsis, i, None)),
           lambda x, i: x[..., i, None], _xi((2, 3, 4), [[0], [3]])),
    OpCase("getitem_array_uint", lambda x, i: fnp._getitem(x, i), lambda x, i: x[i],
           _xi((4, 3), np.array([1, 3], np.uint8))),
]

# ---------------------------------------------------------------------------------------------
# x.at[idx].op(v)


def _at_case(op, shape, idx, vshape, dtypes=(F64, F32), low=-2.0, high=2.0, order=2,
             name=None, grad_args=None, vmap=True):
    args = [(rand(shape, d, low, high, seed=k), rand(vshape, d, low, high, seed=k + 9))
            for k, d in enumerate(dtypes)]

    def fn(x, v):
        return getattr(fnp.at(x)[idx], op)(v)

    def ref(x, v):
        return _np_at(op)(x, v, idx)

    return OpCase(name or f"at_{op}", fn, ref, args, order=order, grad_args=grad_args,
                  vmap=vmap)


_DUP = np.array([0, 2, 0, 3, 2])
_UNIQ = np.array([3, 0, 2])
CASES += [
    _at_case("set", (4, 3), (S(None), 1), (4,)),
    _at_case("set", (4, 3), _UNIQ, (3, 3), name="at_set_array"),
    _at_case("set", (4, 3), _DUP, (5, 3), name="at_set_duplicates"),
    _at_case("set", (4, 3), (S(None, None, -1), S(1, None)), (2,), name="at_set_broadcast"),
    _at_case("set", (3, 4, 5), (np.array([0, 2]), S(None), np.array([1, 4])), (2, 4),
             name="at_set_separated"),
    _at_case("add", (4, 3), _DUP, (5, 3)),
    _at_case("add", (4, 3), (_DUP, 1), (), name="at_add_scalar_values"),
    _at_case("add", (4, 3), (S(1, 3), [0, -1]), (2, 2), name="at_add_basic_and_list"),
    _at_case("add", (3, 4, 5), (1, S(None), np.array([0, 4, 4])), (3, 4),
             name="at_add_separated"),
    _at_case("add", (4, 3), np.array([True, False, True, True]), (3, 3), name="at_add_mask"),
    _at_case("subtract", (4, 3), _DUP, (5, 3)),
    _at_case("multiply", (4, 3), _UNIQ, (3, 3)),
    _at_case("multiply", (4, 3), (S(None), 1), (4,), name="at_multiply_basic"),
    _at_case("divide", (4, 3), _UNIQ, (3, 3), low=0.5, high=2.0),
    _at_case("power", (4, 3), _UNIQ, (3, 3), low=0.5, high=2.0),
    _at_case("min", (4, 3), _DUP, (5, 3)),
    _at_case("max", (4, 3), _DUP, (5, 3)),
    _at_case("max", (4, 3), (S(None), 2), (4,), name="at_max_basic"),
    OpCase("at_get", lambda x: fnp.at(x)[1:, ::-1].get(), lambda x: x[1:, ::-1], _x((3, 4))),
    OpCase("at_add_int", lambda x: fnp.at(x)[_DUP].add(np.int64(3)),
           lambda x: _np_at("add")(x, np.int64(3), _DUP), [(rand((6,), I64),)]),
    OpCase("at_add_weak_scalar", lambda x: fnp.at(x)[_DUP].add(1.5),
           lambda x: _np_at("add")(x, 1.5, _DUP), _x((6,))),
    OpCase("at_set_array_index_arg", lambda x, v, i: fnp.at(x)[i].set(v),
           lambda x, v, i: _np_at("set")(x, v, i),
           [(rand((5, 2), F64), rand((3, 2), F64, seed=3), np.array([4, 1, -2]))]),
    OpCase("at_add_array_index_arg", lambda x, v, i: fnp.at(x)[S(None), i].add(v),
           lambda x, v, i: _np_at("add")(x, v, (S(None), i)),
           [(rand((2, 5), F64), rand((2, 4), F64, seed=3), np.array([4, 1, 4, 0])),
            (rand((2, 5), F32), rand((2, 4), F32, seed=3), np.array([4, 1, 4, 0]))]),
]

# ---------------------------------------------------------------------------------------------
# take, take_along_axis, diagonal, diag, trace, compress, extract, select, nonzero

_ORDER = np.array([[2, 0, 1, 1], [0, 0, 2, 1], [1, 2, 0, 0]])
CASES += [
    OpCase("take_flat", lambda x: fnp.take(x, [5, 0, -1]), lambda x: np.take(x, [5, 0, -1]),
           _x((2, 3))),
    OpCase("take_axis", lambda x, i: fnp.take(x, i, axis=1), lambda x, i: np.take(x, i, axis=1),
           _xi((2, 3, 4), [[2, 0], [-1, 1]])),
    OpCase("take_scalar_index", lambda x: fnp.take(x, 2, axis=-1),
           lambda x: np.take(x, 2, axis=-1), _x((2, 3))),
    OpCase("take_wrap", lambda x: fnp.take(x, [7, -5], axis=0, mode="wrap"),
           lambda x: np.take(x, [7, -5], axis=0, mode="wrap"), _x((3, 2))),
    OpCase("take_clip", lambda x: fnp.take(x, [7, -5, 1], axis=0, mode="clip"),
           lambda x: np.take(x, [7, -5, 1], axis=0, mode="clip"), _x((3, 2))),
    OpCase("take_along_axis", lambda x, i: fnp.take_along_axis(x, i, axis=0),
           lambda x, i: np.take_along_axis(x, i, axis=0), _xi((3, 4), _ORDER)),
    OpCase("take_along_axis_last", lambda x, i: fnp.take_along_axis(x, i, axis=-1),
           lambda x, i: np.take_along_axis(x, i, axis=-1), _xi((3, 4), _ORDER[:, :2])),
    OpCase("take_along_axis_broadcast", lambda x, i: fnp.take_along_axis(x, i, axis=1),
           lambda x, i: np.take_along_axis(x, i, axis=1), _xi((3, 4), [[3, 0]])),
    OpCase("take_along_axis_none", lambda x, i: fnp.take_along_axis(x, i, axis=None),
           lambda x, i: np.take_along_axis(x, i, axis=None), _xi((3, 4), [11, 0, 5])),
    OpCase("diagonal", lambda x: fnp.diagonal(x), lambda x: np.diagonal(x), _x((3, 4))),
    OpCase("diagonal_offset", lambda x: fnp.diagonal(x, 1), lambda x: np.diagonal(x, 1),
           _x((4, 3))),
    OpCase("diagonal_neg_offset_axes", lambda x: fnp.diagonal(x, -1, 2, 0),
           lambda x: np.diagonal(x, -1, 2, 0), _x((3, 2, 4))),
    OpCase("diag_1d", lambda x: fnp.diag(x), lambda x: np.diag(x), _x((3,))),
    OpCase("diag_1d_k", lambda x: fnp.diag(x, -2), lambda x: np.diag(x, -2), _x((3,))),
    OpCase("diag_2d", lambda x: fnp.diag(x, 1), lambda x: np.diag(x, 1), _x((3, 3))),
    OpCase("trace", lambda x: fnp.trace(x), lambda x: np.trace(x), _x((3, 4))),
    OpCase("trace_offset_axes", lambda x: fnp.trace(x, 1, 1, 2), lambda x: np.trace(x, 1, 1, 2),
           _x((2, 3, 4))),
    OpCase("trace_int", lambda x: fnp.trace(x), lambda x: np.trace(x),
           [(rand((3, 3), np.int32),)]),
    OpCase("compress", lambda x: fnp.compress([True, False, True], x, axis=1),
           lambda x: np.compress([True, False, True], x, axis=1), _x((2, 3))),
    OpCase("compress_flat", lambda x: fnp.compress([False, True], x),
           lambda x: np.compress([False, True], x), _x((2, 3))),
    OpCase("extract", lambda x: fnp.extract(np.arange(6).reshape(2, 3) % 2, x),
           lambda x: np.extract(np.arange(6).reshape(2, 3) % 2, x), _x((2, 3))),
    OpCase("select", lambda c1, c2, a, b: fnp.select([c1, c2], [a, b], default=0.5),
           lambda c1, c2, a, b: np.select([c1, c2], [a, b], default=0.5),
           [(np.array([True, False, False]), np.array([True, True, False]),
             rand((3,), F64), rand((2, 3), F64, seed=1)),
            (np.array([True, False, False]), np.array([True, True, False]),
             rand((3,), F32), rand((2, 3), F32, seed=1))]),
    OpCase("nonzero", lambda x: fnp.nonzero(x), lambda x: np.nonzero(x),
           [(np.array([[0.0, 1.5], [2.0, 0.0]]),)], order=0, vmap=False, jit=False),
    OpCase("argwhere", lambda x: fnp.argwhere(x), lambda x: np.argwhere(x),
           [(np.array([[0.0, 1.5], [2.0, 0.0]]),)], order=0, vmap=False, jit=False),
    OpCase("flatnonzero", lambda x: fnp.flatnonzero(x), lambda x: np.flatnonzero(x),
           [(np.array([[0.0, 1.5], [2.0, 0.0]]),)], order=0, vmap=False, jit=False),
]
