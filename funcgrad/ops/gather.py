"""The ``gather`` primitive: ``x[idx]`` with NumPy semantics.

``indexer`` describes the index expression statically (see :mod:`funcgrad.ops.indexing`, which
also gives the result shape); integer index arrays are operands after ``x``. The transpose is a
``scatter_add`` into zeros (:mod:`funcgrad.ops.scatter`); the batch rule folds the batch axis
into the index expression (``indexing.batch_index_expr``).

``mode="fill"`` gives ``fill_value`` (a static scalar, default 0, so that the gather stays
linear) where an index is out of range; its tangents and cotangents fill with zeros. The public
wrappers pass JAX's default for the dtype (``indexing.default_fill_value``: NaN, ...).
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.ops.scatter as _scatter
import funcgrad.ops.shape as _shape
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import xp_for
from funcgrad.compile import rules as _rules
from funcgrad.compile.rules import Emission
from funcgrad.core import bind1
from funcgrad.interpreters import batching, eager_vjp
from funcgrad.interpreters.jvp import Zero, declare_linear, jvp_rules
from funcgrad.interpreters.linearize import backward_pass_primitives
from funcgrad.interpreters.transpose import deftranspose
from funcgrad.ir import Eqn
from funcgrad.ops._util import as_array, check_static, make_primitive, result_device
from funcgrad.ops.indexing import (
    FULL,
    Operand,
    Slice,
    batch_index_expr,
    canonical_indexer,
    check_index_avals,
    check_mode,
    default_mode,
    fix_indices,
    in_bounds_mask,
    index_arrays,
    index_layout,
    index_tuple,
    raises_out_of_bounds,
    zeros,
)

__all__ = ["gather", "gather_canonical", "gather_p", "FULL", "Operand", "Slice"]


def _gather_impl(x: Any, *idx: Any, indexer: tuple, mode: str, fill_value: Any = None) -> list:
    if not idx and type(x) is numpy.ndarray:  # the eager fast path: a NumPy view
        return [x[index_tuple(indexer, idx)]]
    xp = xp_for(x, *idx, what="gather")
    x = as_array(xp, x)
    idx = index_arrays(x, idx)
    if idx and mode == "fill":
        return [_gather_fill(xp, x, idx, indexer, fill_value)]
    if idx and (mode != "raise" or not raises_out_of_bounds(xp)):
        idx = tuple(fix_indices("gather", xp, x.shape, indexer, idx, mode))
    return [x[index_tuple(indexer, idx)]]


def _gather_fill(xp: Any, x: Any, idx: tuple, indexer: tuple, fill_value: Any) -> Any:
    ok, lay = in_bounds_mask("gather", xp, x.shape, indexer, idx)
    safe = fix_indices("gather", xp, x.shape, indexer, idx, "fill")
    out = x[index_tuple(indexer, safe)]
    if fill_value is None:
        fill_value = 0
    # The broadcast index dims sit together in the result: give the mask their place.
    r = len(lay.adv_shape)
    at = lay.labels.index(("a", 0)) if r else 0
    ok = ok.reshape((1,) * at + tuple(lay.adv_shape) + (1,) * (out.ndim - at - r))
    return xp.where(ok, out, xp.asarray(fill_value).astype(x.dtype))


def _gather_abstract(x: ShapedArray, *idx: ShapedArray, indexer: tuple, mode: str,
                     fill_value: Any = None):
    check_static("gather", indexer=indexer, mode=mode, fill_value=fill_value)
    check_mode("gather", mode)
    check_index_avals("gather", idx)
    lay = index_layout("gather", indexer, x.shape, tuple(a.shape for a in idx))
    return [ShapedArray(lay.out_shape, x.dtype, x.weak_type, result_device("gather", x, *idx))]


gather_p = make_primitive("gather", _gather_impl, _gather_abstract)
# It drops some of its operands' values (see linearize.backward_pass_primitives).
backward_pass_primitives.add(gather_p)


def _is_identity_indexer(indexer: tuple, x: Any) -> bool:
    """Whether ``x[indexer]`` is ``x`` itself (and a valid index: one ``...``, not too long)."""
    n_ell = n_full = 0
    for e in indexer:
        if e is Ellipsis:
            n_ell += 1
        elif type(e) is Slice and e.is_full():
            n_full += 1
        else:
            return False
    return n_ell <= 1 and (n_full == 0 or n_full <= get_aval(x).ndim)


def gather(x: Any, *index_arrays: Any, indexer: Any, mode: str | None = None,
           fill_value: Any = None) -> Any:
    """``x[idx]`` with NumPy semantics; ``indexer`` describes ``idx`` (see the module doc).

    ``mode="fill"`` returns ``fill_value`` (default 0; ``jax.lax``'s default is
    ``indexing.default_fill_value(dtype)``) where an index is out of range after negative ones
    wrap once.

    Example:
        >>> import numpy as np
        >>> gather(np.arange(6).reshape(2, 3), np.array([2, 0]), indexer=(FULL, Operand(0)))
        array([[2, 0],
               [5, 3]])
        >>> gather(np.arange(3.0), np.array([-1, 3]), indexer=(Operand(0),), mode="fill")
        array([2., 0.])
    """
    return gather_canonical(x, *index_arrays, indexer=canonical_indexer(indexer), mode=mode,
                            fill_value=fill_value)


def gather_canonical(x: Any, *index_arrays: Any, indexer: tuple, mode: str | None = None,
                     fill_value: Any = None) -> Any:
    """:func:`gather` for an ``indexer`` already in canonical form (no Python slices).

    Example:
        >>> import numpy as np
        >>> gather_canonical(np.arange(4), indexer=(Slice(None, None, -1),))
        array([3, 2, 1, 0])
    """
    if not index_arrays and _is_identity_indexer(indexer, x):
        return x
    if mode is None:
        mode = default_mode(index_arrays)
    else:
        check_mode("gather", mode)
    if mode != "fill" or not index_arrays:
        return bind1(gather_p, x, *index_arrays, indexer=indexer, mode=mode)
    if fill_value is not None:
        fill_value = _static_fill("gather", fill_value)
    return bind1(gather_p, x, *index_arrays, indexer=indexer, mode=mode, fill_value=fill_value)


def _static_fill(name: str, v: Any) -> Any:
    """``fill_value`` as a static Python scalar (it is a parameter of the primitive)."""
    if isinstance(v, bool | int | float | complex):
        return v
    if isinstance(v, numpy.generic | numpy.ndarray) and numpy.ndim(v) == 0:
        return v.item()
    raise TypeError(
        f"{name}: fill_value must be a concrete scalar (a Python or NumPy number), got "
        f"{type(v).__name__}"
    )


def gather_zero_fill(x: Any, *idx: Any, indexer: tuple, mode: str) -> Any:
    """``gather_p`` as the derivative rules use it: out-of-range positions give 0."""
    if mode == "fill":
        return bind1(gather_p, x, *idx, indexer=indexer, mode=mode, fill_value=0)
    return bind1(gather_p, x, *idx, indexer=indexer, mode=mode)


def _gather_jvp(primals, tangents, indexer, mode, fill_value=None):
    x, *idx = primals
    tx = tangents[0]
    params = {"fill_value": fill_value} if mode == "fill" else {}
    out = bind1(gather_p, x, *idx, indexer=indexer, mode=mode, **params)
    if type(tx) is Zero:
        return [out], [Zero.from_primal(out)]
    return [out], [gather_zero_fill(tx, *idx, indexer=indexer, mode=mode)]


def _gather_transpose_into(acc, ct, x, *idx, indexer, mode, fill_value=None):
    """``acc`` plus the transpose of the gather applied to ``ct``: ``ct`` scatter-added."""
    return bind1(_scatter.scatter_add_p, acc, ct, *idx, indexer=indexer, mode=mode)


def _gather_transpose(ct, x, *idx, indexer, mode, fill_value=None):
    aval = x.aval
    ca = get_aval(ct)
    base = zeros(aval.shape, ca.dtype, aval.device or ca.device)
    ct_x = _gather_transpose_into(base, ct, x, *idx, indexer=indexer, mode=mode)
    return [ct_x] + [None] * len(idx)


jvp_rules[gather_p] = _gather_jvp
declare_linear(gather_p)
deftranspose(gather_p, _gather_transpose)
eager_vjp.transpose_into_rules[gather_p] = _gather_transpose_into


def _gather_batch(axis_size, vals, dims, indexer, mode, fill_value=None):
    x, *idx = vals
    xd, *idd = dims
    b = batch_index_expr("gather", axis_size, x, xd, idx, idd, indexer, False)
    params = {"fill_value": fill_value} if mode == "fill" else {}
    out = bind1(gather_p, b.x, *b.idx, indexer=b.indexer, mode=mode, **params)
    p = b.perm
    rest = [i for i in range(len(p)) if i != p[0]]
    if list(p[1:]) == rest:
        return [out], [p[0]]
    return [_shape.transpose(out, p)], [0]


batching.batch_rules[gather_p] = _gather_batch


def index_source(indexer: tuple) -> str | None:
    """``indexer`` (static entries only) as subscript source (``1:, None``), or None."""
    parts = []
    for e in indexer:
        if e is None:
            parts.append("None")
        elif e is Ellipsis:
            parts.append("...")
        elif type(e) is int:
            parts.append(repr(e))
        elif type(e) is Slice:
            sl = e.slice
            if not all(v is None or type(v) is int for v in (sl.start, sl.stop, sl.step)):
                return None
            txt = ("" if sl.start is None else repr(sl.start)) + ":" + (
                "" if sl.stop is None else repr(sl.stop))
            if sl.step is not None:
                txt += f":{sl.step!r}"
            parts.append(txt)
        else:
            return None
    if not parts:
        return "()"
    return ", ".join(parts) + ("," if len(parts) == 1 and parts[0] == "None" else "")


def _emit_gather(ctx: Any, eqn: Eqn, args: list[str]) -> Emission | None:
    # Basic indexing by static entries (slices, ints, None): what the impl's NumPy fast path
    # does, for any array module (a view, or a scalar for all-int indices).
    if len(eqn.invars) != 1 or eqn.invars[0].aval.ndim == 0:
        return None
    key = index_source(tuple(eqn.params.get("indexer", ())))
    if key is None:
        return None
    return Emission(f"{args[0]}[{key}]")


_rules.emitters[gather_p] = _emit_gather

