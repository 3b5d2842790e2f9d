"""The scatter family: ``x.at[idx].set/add/mul/min/max`` as ``scatter``, ``scatter_add``,
``scatter_mul``, ``scatter_min``, ``scatter_max``; one block per primitive.

``indexer`` describes the index expression statically (:mod:`funcgrad.ops.indexing`); the
updates are the operand after ``x``, integer index arrays follow. Every member shares the shape
rule (updates broadcast to the indexed shape, same dtype as ``x``) and the batch rule (the
batch axis folded into the index expression); each has its own impl, JVP and transpose.

``mode="fill"`` (JAX's fill-or-drop) drops the updates whose index is out of range after
negative indices wrap once.

Repeated indices: ``scatter_add``/``scatter_mul``/``scatter_min``/``scatter_max`` accumulate
like ``numpy.add.at`` and friends on every backend (:mod:`funcgrad.ops._ufunc_at`: CuPy's
atomic additions, or rounds over occurrence ranks); ``scatter`` (set) lets the last write win
on every backend, as NumPy does (:func:`funcgrad.ops._ufunc_at.set_at`), which the transpose
rule relies on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
import funcgrad.ops.gather as _gather
import funcgrad.ops.shape as _shape
import funcgrad.ops.sorting as _sorting
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import xp_for
from funcgrad.compile import rules as _rules
from funcgrad.compile.rules import Emission, same_type
from funcgrad.core import bind1
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.interpreters import batching
from funcgrad.interpreters import cost as _cost
from funcgrad.interpreters.jvp import Zero, add_any_p, declare_linear, instantiate, jvp_rules
from funcgrad.interpreters.linearize import backward_pass_primitives
from funcgrad.interpreters.transpose import deftranspose, is_undefined
from funcgrad.ir import Eqn, Var
from funcgrad.ops._ufunc_at import set_at, ufunc_at
from funcgrad.ops._util import as_array, check_static, make_primitive, result_device
from funcgrad.ops.indexing import (
    Operand,  # noqa: F401 (the doctests name it)
    Slice,
    batch_index_expr,
    canonical_indexer,
    check_index_avals,
    check_mode,
    default_mode,
    fix_indices,
    full,
    in_bounds_mask,
    index_arrays,
    index_layout,
    index_tuple,
    iota,
    may_repeat,
    raises_out_of_bounds,
    zeros,
)

__all__ = [
    "scatter",
    "scatter_p",
    "scatter_add",
    "scatter_add_p",
    "scatter_mul",
    "scatter_mul_p",
    "scatter_min",
    "scatter_min_p",
    "scatter_max",
    "scatter_max_p",
]


# =============================================================================================
# Shared by the family: shape rule, impl helpers, wrapper, rule helpers, batch rule


def _scatter_abstract_for(name: str):
    def abstract(x: ShapedArray, u: ShapedArray, *idx: ShapedArray, indexer: tuple, mode: str):
        check_static(name, indexer=indexer, mode=mode)
        check_mode(name, mode)
        check_index_avals(name, idx)
        lay = index_layout(name, indexer, x.shape, tuple(a.shape for a in idx))
        g = lay.out_shape
        try:
            ok = tuple(numpy.broadcast_shapes(u.shape, g)) == g
        except ValueError:
            ok = False
        if not ok:
            raise ShapeError(
                f"{name}: updates of shape {u.shape} cannot be broadcast to the indexed shape "
                f"{g} (x is {x.str_short()})"
            )
        if u.dtype != x.dtype:
            raise DTypeError(
                f"{name}: updates dtype {u.dtype} differs from the array dtype {x.dtype}; "
                "convert the updates first"
            )
        return [ShapedArray(x.shape, x.dtype, x.weak_type, result_device(name, x, u, *idx))]

    return abstract


def _scatter_prepare(name: str, x: Any, u: Any, idx: tuple, indexer: tuple, mode: str):
    """The array module, a copy of ``x`` to write into, the index key and the updates
    (without the dropped ones in ``mode="fill"``)."""
    xp = xp_for(x, u, *idx, what=name)
    x = as_array(xp, x)
    if idx and mode == "fill":
        idx, u = _drop_out_of_bounds(name, xp, x.shape, indexer, idx, u)
    elif idx and (mode != "raise" or not raises_out_of_bounds(xp)):
        idx = tuple(fix_indices(name, xp, x.shape, indexer, idx, mode))
    out = x.copy()
    return xp, out, index_tuple(indexer, idx), u


def _drop_out_of_bounds(name: str, xp: Any, x_shape: tuple, indexer: tuple, idx: tuple,
                        u: Any) -> tuple[tuple, Any]:
    """Index arrays and updates without the positions whose index is out of range: the
    broadcast index dims become one dim listing the kept positions (same place in the
    layout, since the indexer is unchanged)."""
    ok, lay = in_bounds_mask(name, xp, x_shape, indexer, idx)
    safe = fix_indices(name, xp, x_shape, indexer, idx, "fill")
    if bool(ok.all()):
        return tuple(safe), u
    adv = tuple(lay.adv_shape)
    r = len(adv)
    g = lay.out_shape
    at = lay.labels.index(("a", 0)) if r else 0
    keep = xp.nonzero(ok.reshape(-1))[0]
    kept = tuple(xp.broadcast_to(a, adv).reshape(-1)[keep] for a in safe)
    if r == 0:  # scalar indices, out of range: nothing is written
        lay1 = index_layout(name, indexer, tuple(x_shape), tuple((0,) for _ in kept))
        return kept, xp.zeros(lay1.out_shape, dtype=xp.asarray(u).dtype)
    u = xp.broadcast_to(xp.asarray(u), g)
    u = xp.take(u.reshape(g[:at] + (int(numpy.prod(adv, dtype=numpy.int64)),) + g[at + r:]),
                keep, axis=at)
    return kept, u


def _full_rank_updates(u: Any, x: Any, idx: tuple, indexer: tuple) -> Any:
    """``u`` with leading 1-axes up to the indexed rank.

    NumPy's ``ufunc.at`` reads garbage when lower-rank updates broadcast against a
    multi-dimensional index array (numpy 2.4: ``np.add.at(z, [[0, 1], [2, 3]], [1., 2.])``).
    """
    nd = getattr(u, "ndim", 0)
    if nd == 0 or not idx:
        return u
    g = index_layout("scatter", indexer, tuple(x.shape), tuple(a.shape for a in idx)).out_shape
    return u if nd == len(g) else u.reshape((1,) * (len(g) - nd) + tuple(u.shape))


def _scatter_wrapper(prim, x, updates, index_arrays, indexer, mode):
    indexer = canonical_indexer(indexer)
    xa, ua = get_aval(x), get_aval(updates)
    if ua.dtype != xa.dtype:
        updates = _ew.convert_element_type(updates, xa.dtype)
    if mode is None:
        mode = default_mode(index_arrays)
    else:
        check_mode(prim.name, mode)
    return bind1(prim, x, updates, *index_arrays, indexer=indexer, mode=mode)


def _mask(a: Any, b: Any, dtype: Any) -> Any:
    """``a == b`` as 0/1 of ``dtype`` (a constant for differentiation)."""
    return _ew.convert_element_type(_ew.eq(a, b), dtype)


def _zeros_like(x: Any, dtype: Any = None) -> Any:
    a = get_aval(x)
    return zeros(a.shape, dtype or a.dtype, a.device)


def _gather_shape(name: str, x_shape, idx, indexer) -> tuple[int, ...]:
    return index_layout(name, indexer, tuple(x_shape),
                        tuple(get_aval(a).shape for a in idx)).out_shape


def _winner_mask(x_aval: ShapedArray, idx: Sequence[Any], indexer: tuple, mode: str,
                 dtype: Any) -> Any:
    """1 where an update position of ``scatter`` is the one whose write survives, else 0."""
    g = _gather_shape("scatter", x_aval.shape, idx, indexer)
    ids = iota(g, x_aval.device)
    base = full(x_aval.shape, -1, numpy.int64, x_aval.device)
    written = bind1(scatter_p, base, ids, *idx, indexer=indexer, mode=mode)
    back = _gather.gather_zero_fill(written, *idx, indexer=indexer, mode=mode)
    return _mask(back, ids, dtype)


def _combining_cost(eqn: Eqn, jaxpr_cost: Any) -> Any:
    """One flop per update element (each combines with the array once), plus the bytes read
    and written: the cost rule of scatter_add/mul/min/max (interpreters.cost)."""
    x, _, *idx = eqn.invars
    lay = index_layout(eqn.prim.name, eqn.params["indexer"], x.aval.shape,
                       tuple(a.aval.shape for a in idx))
    io = sum(_cost.aval_bytes(v.aval) for v in (*eqn.invars, *eqn.outvars))
    return _cost.Cost(float(numpy.prod(lay.out_shape, dtype=numpy.int64)), 0.0, float(io))


def _scatter_batch_for(prim):
    def rule(axis_size, vals, dims, indexer, mode):
        x, u, *idx = vals
        xd, ud, *idd = dims
        b = batch_index_expr(prim.name, axis_size, x, xd, idx, idd, indexer, True)
        g = b.out_shape
        ua = get_aval(u)
        # Updates in the layout (batch, *g), padded with size-1 dims, then into the new layout.
        if ud is None:
            if ua.ndim == 0:
                u_new = u
            else:
                u_new = _shape.reshape(u, (1,) * (len(g) + 1 - ua.ndim) + ua.shape)
        else:
            u = _shape.moveaxis(u, ud, 0)
            s = ua.shape[:ud] + ua.shape[ud + 1:]
            u_new = _shape.reshape(u, (axis_size,) + (1,) * (len(g) - len(s)) + tuple(s))
        if get_aval(u_new).ndim:
            inv = tuple(int(i) for i in numpy.argsort(b.perm))
            u_new = _shape.transpose(u_new, inv)
        out = bind1(prim, b.x, u_new, *b.idx, indexer=b.indexer, mode=mode)
        return [out], [0]

    batching.batch_rules[prim] = rule


# =============================================================================================
# scatter_add: x.at[idx].add(u)


def _scatter_add_impl(x, u, *idx, indexer, mode):
    idx = index_arrays(x, idx)
    u = _full_rank_updates(u, x, idx, indexer)
    xp, out, key, u = _scatter_prepare("scatter_add", x, u, idx, indexer, mode)
    if not idx:
        out[key] += u  # basic index: no position is written twice
        return [out]
    return [ufunc_at(xp, "add", out, key, u)]


scatter_add_p = make_primitive(
    "scatter_add", _scatter_add_impl, _scatter_abstract_for("scatter_add")
)


def scatter_add(x: Any, updates: Any, *index_arrays: Any, indexer: Any,
                mode: str | None = None) -> Any:
    """``x.at[idx].add(updates)``: a copy of ``x`` with ``updates`` added at ``idx``.

    Repeated indices accumulate (``numpy.add.at``). ``updates`` is cast to ``x``'s dtype.

    Example:
        >>> import numpy as np
        >>> scatter_add(np.zeros(3), 1.0, np.array([0, 0, 2]), indexer=(Operand(0),))
        array([2., 0., 1.])
    """
    return _scatter_wrapper(scatter_add_p, x, updates, index_arrays, indexer, mode)


def _scatter_add_jvp(primals, tangents, indexer, mode):
    x, u, *idx = primals
    tx, tu = tangents[0], tangents[1]
    out = bind1(scatter_add_p, x, u, *idx, indexer=indexer, mode=mode)
    if type(tu) is Zero:
        return [out], [tx if type(tx) is not Zero else Zero.from_primal(out)]
    tx = instantiate(tx) if type(tx) is not Zero else _zeros_like(out, get_aval(tu).dtype)
    return [out], [bind1(scatter_add_p, tx, tu, *idx, indexer=indexer, mode=mode)]


def _scatter_add_transpose(ct, x, u, *idx, indexer, mode):
    ct_x = ct if is_undefined(x) else None
    ct_u = None
    if is_undefined(u):
        g = _gather.gather_zero_fill(ct, *idx, indexer=indexer, mode=mode)
        ct_u = _shape.sum_to_aval(g, u.aval)
    return [ct_x, ct_u] + [None] * len(idx)


jvp_rules[scatter_add_p] = _scatter_add_jvp
declare_linear(scatter_add_p)
deftranspose(scatter_add_p, _scatter_add_transpose)


def _scatter_add_static(x: Any, u: Any, key: tuple, out: Any = None) -> Any:
    """``x`` with ``u`` added at the basic index ``key`` (no position twice), in ``out``
    (which may be ``x`` itself) or a copy."""
    if out is None:
        out = x.copy()
    elif out is not x:
        out[...] = x
    out[key] += u
    return out


def _emit_scatter_add(ctx: Any, eqn: Eqn, args: list[str]) -> Emission | None:
    if len(eqn.invars) != 2 or eqn.invars[0].aval.ndim == 0:
        return None
    if eqn.invars[0].aval.dtype != eqn.outvars[0].aval.dtype:
        return None
    indexer = tuple(eqn.params.get("indexer", ()))
    if _gather.index_source(indexer) is None:
        return None
    key = ctx.bind(tuple(e.slice if type(e) is Slice else e for e in indexer), "ix")
    fn = ctx.bind(_scatter_add_static, "scatter_add")
    return Emission(f"{fn}({args[0]}, {args[1]}, {key})", fresh=True, out="first")


def _simplify_add_of_scatter(eqn: Eqn, ins: list, f: Any) -> Any:
    """``scatter_add(0, u, idx) + y`` -> ``scatter_add(y, u, idx)``: what the transpose of
    slicing leaves behind (a zero array padded around u, then added), in one pass and no
    zeros. Registered on ``add`` and ``add_any``."""
    x, y = ins
    producer = f.producer
    px = producer.get(x) if type(x) is Var else None
    py = producer.get(y) if type(y) is Var else None
    if (px is None or px.prim is not scatter_add_p) and (py is None or py.prim is not scatter_add_p):
        return None  # the usual case, told apart cheaply: every add of a sweep asks
    out = eqn.outvars[0]
    for s_, other in ((x, y), (y, x)):
        p = f.producer.get(s_) if type(s_) is Var else None
        if (p is not None and p.prim is scatter_add_p and len(p.invars) == 2
                and f.uses.get(s_) == 1 and f.is_zero(p.invars[0])
                and same_type(other, out) and same_type(s_, out)):
            return Eqn(scatter_add_p, [other, p.invars[1]], eqn.outvars, p.params,
                       eqn.source_info)
    return None


_rules.emitters[scatter_add_p] = _emit_scatter_add
for _p in (_ew.add_p, add_any_p):
    _rules.register_simplification(_p, _simplify_add_of_scatter)
_scatter_batch_for(scatter_add_p)
_cost.cost_rules[scatter_add_p] = _combining_cost


# =============================================================================================
# scatter: x.at[idx].set(u)


def _scatter_impl(x, u, *idx, indexer, mode):
    idx = index_arrays(x, idx)
    xp, out, key, u = _scatter_prepare("scatter", x, u, idx, indexer, mode)
    if not idx:  # slices and integers name each element once
        out[key] = u
        return [out]
    return [set_at(xp, out, key, u)]


scatter_p = make_primitive(
    "scatter", _scatter_impl, _scatter_abstract_for("scatter")
)
# It drops some of its operands' values (see linearize.backward_pass_primitives).
backward_pass_primitives.add(scatter_p)


def scatter(x: Any, updates: Any, *index_arrays: Any, indexer: Any,
            mode: str | None = None) -> Any:
    """``x.at[idx].set(updates)``: a copy of ``x`` with ``updates`` written at ``idx``.

    Example:
        >>> import numpy as np
        >>> scatter(np.zeros(3), 5.0, indexer=(Slice(1, None),))
        array([0., 5., 5.])
    """
    return _scatter_wrapper(scatter_p, x, updates, index_arrays, indexer, mode)


def _scatter_jvp(primals, tangents, indexer, mode):
    x, u, *idx = primals
    tx, tu = tangents[0], tangents[1]
    out = bind1(scatter_p, x, u, *idx, indexer=indexer, mode=mode)
    if type(tx) is Zero and type(tu) is Zero:
        return [out], [Zero.from_primal(out)]
    oa = get_aval(out)
    tdt = get_aval(tu).dtype if type(tx) is Zero else get_aval(tx).dtype
    tx = zeros(oa.shape, tdt, oa.device) if type(tx) is Zero else tx
    # Positions overwritten by constant updates have zero tangent.
    tu = zeros((), tdt, oa.device) if type(tu) is Zero else tu
    return [out], [bind1(scatter_p, tx, tu, *idx, indexer=indexer, mode=mode)]


def _scatter_transpose(ct, x, u, *idx, indexer, mode):
    ca = get_aval(ct)
    ct_x = ct_u = None
    if is_undefined(x):
        zero = zeros((), ca.dtype, ca.device)
        ct_x = bind1(scatter_p, ct, zero, *idx, indexer=indexer, mode=mode)
    if is_undefined(u):
        g = _gather.gather_zero_fill(ct, *idx, indexer=indexer, mode=mode)
        if may_repeat(ca.shape, idx, indexer):
            # Only the surviving write among repeated positions receives the cotangent.
            g = _ew.mul(g, _winner_mask(ca, idx, indexer, mode, ca.dtype))
        ct_u = _shape.sum_to_aval(g, u.aval)
    return [ct_x, ct_u] + [None] * len(idx)


jvp_rules[scatter_p] = _scatter_jvp
declare_linear(scatter_p)
deftranspose(scatter_p, _scatter_transpose)
_scatter_batch_for(scatter_p)


# =============================================================================================
# scatter_mul: x.at[idx].multiply(u)


def _scatter_mul_impl(x, u, *idx, indexer, mode):
    idx = index_arrays(x, idx)
    u = _full_rank_updates(u, x, idx, indexer)
    xp, out, key, u = _scatter_prepare("scatter_mul", x, u, idx, indexer, mode)
    if not idx:
        out[key] *= u
        return [out]
    return [ufunc_at(xp, "multiply", out, key, u)]


scatter_mul_p = make_primitive(
    "scatter_mul", _scatter_mul_impl, _scatter_abstract_for("scatter_mul")
)


def scatter_mul(x: Any, updates: Any, *index_arrays: Any, indexer: Any,
                mode: str | None = None) -> Any:
    """``x.at[idx].multiply(updates)`` (repeated indices multiply repeatedly).

    Example:
        >>> import numpy as np
        >>> scatter_mul(np.ones(3), 2.0, np.array([1, 1]), indexer=(Operand(0),))
        array([1., 4., 1.])
    """
    return _scatter_wrapper(scatter_mul_p, x, updates, index_arrays, indexer, mode)


def _scatter_mul_jvp(primals, tangents, indexer, mode):
    x, u, *idx = primals
    tx, tu = tangents[0], tangents[1]
    out = bind1(scatter_mul_p, x, u, *idx, indexer=indexer, mode=mode)
    t = None
    if type(tx) is not Zero:
        t = bind1(scatter_mul_p, tx, u, *idx, indexer=indexer, mode=mode)
    if type(tu) is not Zero:
        xa = get_aval(x)
        g = _gather_shape("scatter_mul", xa.shape, idx, indexer)
        gx = _gather.gather_zero_fill(x, *idx, indexer=indexer, mode=mode)
        contrib = _shape.broadcast_to(_ew.mul(tu, gx), g)
        if may_repeat(xa.shape, idx, indexer):
            # d out[p] / d u_j = x[p] * (the product of the other updates at p).
            u_g = _shape.broadcast_to(u, g)
            contrib = _ew.mul(contrib, _products_of_other_updates(xa, u_g, idx, indexer, mode))
        base = _zeros_like(out, get_aval(contrib).dtype)
        c = bind1(scatter_add_p, base, contrib, *idx, indexer=indexer, mode=mode)
        t = c if t is None else _ew.add(t, c)
    if t is None:
        return [out], [Zero.from_primal(out)]
    return [out], [t]


def _shifted(v: Any, s: int, fill: Any) -> Any:
    """``out[i] = v[i - s]`` along the only axis, ``fill`` where ``i - s`` is outside."""
    idx = _sorting.axis_iota(get_aval(v), 0, offset=-s)
    return _sorting.gather_along_axis(v, idx, 0, fill)


def _segment_exclusive_products(v: Any, starts: Any) -> Any:
    """For sorted segments (``starts`` marks each segment's first element) the product of the
    elements before each one in its segment: a log-depth segmented scan of products and
    selects only, so exact with zeros and differentiable again."""
    n = get_aval(v).shape[0]
    one = _ew.convert_element_type(1, get_aval(v).dtype)
    incl, flag = v, starts
    s = 1
    while s < n:
        prev, prev_flag = _shifted(incl, s, 1), _shifted(flag, s, True)
        incl = _ew.select_n(flag, _ew.mul(incl, prev), incl)
        flag = _ew.or_(flag, prev_flag)
        s *= 2
    return _ew.select_n(starts, _shifted(incl, 1, 1), _shape.broadcast_to(one, (n,)))


def _products_of_other_updates(x_aval: ShapedArray, u_g: Any, idx: Sequence[Any],
                               indexer: tuple, mode: str) -> Any:
    """For each update (of the indexed shape), the product of the other updates that name
    the same element: the updates sorted by target, exclusive products from the left and
    from the right within each run of equal targets, multiplied and put back in order."""
    g = get_aval(u_g).shape
    m = int(numpy.prod(g, dtype=numpy.int64))
    if m == 0:
        return u_g
    ids = iota(x_aval.shape, x_aval.device)
    if mode == "fill":  # dropped updates: target -1, multiplied by a dropped tangent anyway
        target = bind1(_gather.gather_p, ids, *idx, indexer=indexer, mode=mode, fill_value=-1)
    else:
        target = bind1(_gather.gather_p, ids, *idx, indexer=indexer, mode=mode)
    target = _shape.reshape(_shape.broadcast_to(target, g), (m,))
    order = _sorting.argsort(target, 0, True)
    t_sorted = _sorting.gather_along_axis(target, order, 0)
    u_sorted = _sorting.gather_along_axis(_shape.reshape(u_g, (m,)), order, 0)
    first = _ew.ne(t_sorted, _shifted(t_sorted, 1, -2))
    last = _ew.ne(t_sorted, _shifted(t_sorted, -1, -2))
    left = _segment_exclusive_products(u_sorted, first)
    right = _shape.rev(_segment_exclusive_products(_shape.rev(u_sorted, (0,)),
                                                   _shape.rev(last, (0,))), (0,))
    others = _ew.mul(left, right)
    back = _sorting.argsort(order, 0, True)
    return _shape.reshape(_sorting.gather_along_axis(others, back, 0), g)


def _scatter_mul_transpose(ct, x, u, *idx, indexer, mode):
    if is_undefined(u):
        raise ValueError("scatter_mul: transpose with respect to the updates (not linear)")
    return [bind1(scatter_mul_p, ct, u, *idx, indexer=indexer, mode=mode), None] + [
        None
    ] * len(idx)


jvp_rules[scatter_mul_p] = _scatter_mul_jvp
deftranspose(scatter_mul_p, _scatter_mul_transpose)
_scatter_batch_for(scatter_mul_p)
_cost.cost_rules[scatter_mul_p] = _combining_cost


# =============================================================================================
# scatter_min / scatter_max: one impl and JVP recipe, one block each


def _scatter_extremal_impl(name: str, ufunc_name: str):
    def impl(x, u, *idx, indexer, mode):
        idx = index_arrays(x, idx)
        u = _full_rank_updates(u, x, idx, indexer)
        xp, out, key, u = _scatter_prepare(name, x, u, idx, indexer, mode)
        if not idx:
            out[key] = getattr(xp, ufunc_name)(out[key], u)
            return [out]
        return [ufunc_at(xp, ufunc_name, out, key, u)]

    return impl


def _extremal_jvp_for(prim):
    def rule(primals, tangents, indexer, mode):
        x, u, *idx = primals
        tx, tu = tangents[0], tangents[1]
        out = bind1(prim, x, u, *idx, indexer=indexer, mode=mode)
        if type(tx) is Zero and type(tu) is Zero:
            return [out], [Zero.from_primal(out)]
        oa = get_aval(out)
        tdt = get_aval(tx).dtype if type(tx) is not Zero else get_aval(tu).dtype
        # The tangent comes from whichever operand wins; ties share it equally.
        mx = _mask(x, out, tdt)
        g_out = _gather.gather_zero_fill(out, *idx, indexer=indexer, mode=mode)
        g = _gather_shape(prim.name, oa.shape, idx, indexer)
        mu = _shape.broadcast_to(_mask(u, g_out, tdt), g)
        zero = zeros(oa.shape, tdt, oa.device)
        count = _ew.add(mx, bind1(scatter_add_p, zero, mu, *idx, indexer=indexer, mode=mode))
        num = None
        if type(tx) is not Zero:
            num = _ew.mul(tx, mx)
        if type(tu) is not Zero:
            c = bind1(scatter_add_p, zero, _ew.mul(tu, mu), *idx, indexer=indexer, mode=mode)
            num = c if num is None else _ew.add(num, c)
        return [out], [_ew.div(num, count)]

    jvp_rules[prim] = rule


# -- scatter_min

scatter_min_p = make_primitive(
    "scatter_min", _scatter_extremal_impl("scatter_min", "minimum"),
    _scatter_abstract_for("scatter_min"),
)
# It drops some of its operands' values (see linearize.backward_pass_primitives).
backward_pass_primitives.add(scatter_min_p)


def scatter_min(x: Any, updates: Any, *index_arrays: Any, indexer: Any,
                mode: str | None = None) -> Any:
    """``x.at[idx].min(updates)``: elementwise minimum at ``idx`` (``numpy.minimum.at``).

    Example:
        >>> import numpy as np
        >>> scatter_min(np.ones(3), np.array([0.5, 2.0]), np.array([0, 1]),
        ...             indexer=(Operand(0),))
        array([0.5, 1. , 1. ])
    """
    return _scatter_wrapper(scatter_min_p, x, updates, index_arrays, indexer, mode)


_extremal_jvp_for(scatter_min_p)
_scatter_batch_for(scatter_min_p)
_cost.cost_rules[scatter_min_p] = _combining_cost


# -- scatter_max

scatter_max_p = make_primitive(
    "scatter_max", _scatter_extremal_impl("scatter_max", "maximum"),
    _scatter_abstract_for("scatter_max"),
)
# It drops some of its operands' values (see linearize.backward_pass_primitives).
backward_pass_primitives.add(scatter_max_p)


def scatter_max(x: Any, updates: Any, *index_arrays: Any, indexer: Any,
                mode: str | None = None) -> Any:
    """``x.at[idx].max(updates)``: elementwise maximum at ``idx`` (``numpy.maximum.at``).

    Example:
        >>> import numpy as np
        >>> scatter_max(np.ones(3), np.array([0.5, 2.0]), np.array([0, 1]),
        ...             indexer=(Operand(0),))
        array([1., 2., 1.])
    """
    return _scatter_wrapper(scatter_max_p, x, updates, index_arrays, indexer, mode)


_extremal_jvp_for(scatter_max_p)
_scatter_batch_for(scatter_max_p)
_cost.cost_rules[scatter_max_p] = _combining_cost
