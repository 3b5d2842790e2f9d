"""Op table: matmul, dot, vdot, inner, outer, tensordot, einsum, kron, dot_general."""

from __future__ import annotations

import numpy as np
from helpers import OpCase, rand

import funcgrad.numpy as fnp
from funcgrad.ops.linalg import dot_general

F64, F32, I64, I32 = np.float64, np.float32, np.int64, np.int32


def _pairs(shape_pairs, dtype_pairs=((F64, F64), (F32, F32))):
    out = []
    for k, (da, db) in enumerate(dtype_pairs):
        for j, (sa, sb) in enumerate(shape_pairs):
            out.append((rand(sa, da, seed=k + 3 * j), rand(sb, db, seed=k + 3 * j + 40)))
    return out


_MIXED = ((F32, F64), (I64, F64), (F32, I32), (I64, I64))

_MATMUL_SHAPES = [
    ((2, 3), (3, 4)),
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((5, 2, 3), (3, 4)),
    ((3,), (5, 3, 4)),
    ((2, 3), (5, 3, 4)),
    ((5, 2, 3), (5, 3, 4)),
    ((1, 2, 3), (5, 3, 4)),
    ((6, 1, 2, 3), (5, 3, 4)),
    ((5, 2, 3), (1, 3, 2)),
]

_DOT_SHAPES = [
    ((2, 3), (3, 4)),
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 4, 3), (5, 3, 2)),
    ((2, 4, 3), (3,)),
    ((), (2, 3)),
    ((2, 3), ()),
]

CASES: list[OpCase] = [
    OpCase("matmul", fnp.matmul, np.matmul, _pairs(_MATMUL_SHAPES)),
    OpCase("matmul_mixed_dtypes", fnp.matmul, np.matmul,
           _pairs([((2, 3), (3, 4)), ((4, 2, 3), (3,))], _MIXED)),
    OpCase("matmul_bool", fnp.matmul, np.matmul,
           [(rand((2, 3), np.bool_), rand((3, 2), np.bool_, seed=1))]),
    OpCase("dot", fnp.dot, np.dot, _pairs(_DOT_SHAPES)),
    OpCase("dot_mixed_dtypes", fnp.dot, np.dot, _pairs([((2, 3), (3, 4)), ((3,), (3,))], _MIXED)),
    OpCase("dot_python_scalar", lambda x: fnp.dot(x, 2.0), lambda x: np.dot(x, 2.0),
           [(rand((3,), F32),), (rand((2, 3), F64),)]),
    # Complex vdot is checked forward only: check_grads' VJP identity does not hold for the
    # (non-holomorphic) conj, whatever the rule; see test_linalg_ops for its derivative.
    OpCase("vdot", fnp.vdot, np.vdot,
           _pairs([((2, 3), (6,)), ((4,), (4,)), ((2, 2), (2, 2))])
           + [(rand((3,), np.complex128), rand((3,), np.complex128, seed=2))],
           grad_args=_pairs([((2, 3), (6,)), ((4,), (4,)), ((2, 2), (2, 2))])),
    OpCase("inner", fnp.inner, np.inner,
           _pairs([((3,), (3,)), ((2, 3), (4, 3)), ((2, 2, 3), (3,)), ((), (2, 3))])),
    OpCase("outer", fnp.outer, np.outer,
           _pairs([((3,), (4,)), ((2, 2), (3,)), ((), (2,))]) + _pairs([((3,), (2,))], _MIXED)),
    OpCase("tensordot_int_axes", lambda a, b: fnp.tensordot(a, b, 2),
           lambda a, b: np.tensordot(a, b, 2), _pairs([((2, 3, 4), (3, 4, 5)), ((3, 4), (3, 4))])),
    OpCase("tensordot_zero_axes", lambda a, b: fnp.tensordot(a, b, 0),
           lambda a, b: np.tensordot(a, b, 0), _pairs([((2, 3), (4,))])),
    OpCase("tensordot_pair_axes", lambda a, b: fnp.tensordot(a, b, ([1, 0], [0, 2])),
           lambda a, b: np.tensordot(a, b, ([1, 0], [0, 2])), _pairs([((2, 3, 4), (3, 5, 2))])),
    OpCase("tensordot_single_axes", lambda a, b: fnp.tensordot(a, b, (0, -1)),
           lambda a, b: np.tensordot(a, b, (0, -1)), _pairs([((2, 3), (4, 2))], _MIXED)),
    OpCase("kron", fnp.kron, np.kron,
           _pairs([((2, 2), (2, 3)), ((3,), (2,)), ((2,), (2, 3)), ((2, 1, 2), (3, 2))])
           + _pairs([((2,), (3,))], _MIXED)),
    OpCase("dot_general_batch", lambda a, b: dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
           lambda a, b: np.einsum("bij,bjk->bik", a, b), _pairs([((2, 3, 4), (2, 4, 5))])),
    OpCase("dot_general_transposed_batch",
           lambda a, b: dot_general(a, b, (((0,), (2,)), ((2,), (0,)))),
           lambda a, b: np.einsum("kib,bjk->bij", a, b), _pairs([((4, 3, 2), (2, 5, 4))])),
    OpCase("dot_general_outer", lambda a, b: dot_general(a, b, (((), ()), ((), ()))),
           lambda a, b: np.multiply.outer(a, b), _pairs([((2, 3), (4,))])),
    OpCase("dot_general_multi_contract",
           lambda a, b: dot_general(a, b, (((2, 0), (0, 1)), ((), ()))),
           lambda a, b: np.einsum("kil,lkj->ij", a, b), _pairs([((2, 3, 4), (4, 2, 5))])),
]

_EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ii", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("i,i", [(3,), (3,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("ij,ij->ij", [(1, 3), (2, 3)]),
    ("iij->j", [(3, 3, 2)]),
    ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 5)]),
    ("i...->...", [(2, 3)]),
    ("Ba,aB", [(2, 3), (3, 2)]),
    ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]),
    ("a,b,c->abc", [(2,), (3,), (4,)]),
    ("ij,j,jk->ik", [(2, 3), (3,), (3, 2)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
]
for _spec, _shapes in _EINSUM:
    _args = []
    for _k, _d in enumerate((F64, F32)):
        _args.append(tuple(rand(s, _d, seed=7 * _k + j) for j, s in enumerate(_shapes)))

    CASES.append(OpCase(
        f"einsum[{_spec}]",
        (lambda spec: lambda *ops: fnp.einsum(spec, *ops))(_spec),
        (lambda spec: lambda *ops: np.einsum(spec, *ops))(_spec),
        _args,
    ))

CASES += [
    OpCase("einsum_mixed_dtypes", lambda a, b: fnp.einsum("ij,j->i", a, b),
           lambda a, b: np.einsum("ij,j->i", a, b),
           _pairs([((2, 3), (3,))], ((I32, F32), (I32, I64), (F32, F64)))),
    OpCase("einsum_int_sum", lambda a: fnp.einsum("ij->i", a), lambda a: np.einsum("ij->i", a),
           [(rand((2, 3), I32),)]),
    OpCase("einsum_sublists", lambda a, b: fnp.einsum(a, [0, 1], b, [1, 2], [0, 2]),
           lambda a, b: np.einsum(a, [0, 1], b, [1, 2], [0, 2]), _pairs([((2, 3), (3, 4))])),
]
