"""Reduction primitives (sum, ...).

Each primitive is one block: wrapper, impl + shape rule, JVP, transpose (linear ones), batch.
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.ops.shape as _shape
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import xp_for
from funcgrad.core import bind1
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import deflinear
from funcgrad.interpreters.transpose import deftranspose
from funcgrad.ops._util import check_static, make_primitive, normalize_axes, probe_dtype


def _reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def _batch_reducer(prim):
    """Batch rule for reductions with an ``axes`` param: shift axes past the batch dim."""

    def rule(axis_size, vals, dims, axes, **params):
        (x,), (d,) = vals, dims
        new_axes = tuple(a + (a >= d) for a in axes)
        out_d = d - sum(1 for a in new_axes if a < d)
        return [bind1(prim, x, axes=new_axes, **params)], [out_d]

    batching.batch_rules[prim] = rule


# =============================================================================================
# reduce_sum


def _reduce_sum_impl(x: Any, axes: tuple[int, ...]) -> list:
    return [xp_for(x).sum(x, axis=axes)]


def _np_sum(x, axes):
    return numpy.sum(x, axis=axes)


def _reduce_sum_abstract(a: ShapedArray, axes) -> list[ShapedArray]:
    check_static("reduce_sum", axes=axes)
    axes = normalize_axes("reduce_sum", axes, a.ndim)
    dt, _ = probe_dtype("reduce_sum", numpy.sum, a.update(weak_type=False))
    return [ShapedArray(_reduced_shape(a.shape, axes), dt, a.weak_type, a.device)]


reduce_sum_p = make_primitive("reduce_sum", _reduce_sum_impl, _reduce_sum_abstract)


def reduce_sum(x: Any, axes: Any = None) -> Any:
    """Sum of ``x`` over ``axes`` (all axes when None)."""
    nd = get_aval(x).ndim
    axes = normalize_axes("reduce_sum", axes, nd)
    return bind1(reduce_sum_p, x, axes=axes)


def _reduce_sum_transpose(ct, x, axes):
    shape = x.aval.shape
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return [_shape.broadcast_in_dim(ct, shape, kept)]


deflinear(reduce_sum_p)
deftranspose(reduce_sum_p, _reduce_sum_transpose)
_batch_reducer(reduce_sum_p)

__all__ = [n for n in dir() if not n.startswith("_")]
