"""Contraction primitive: ``dot_general`` (the one primitive behind matmul, dot, einsum...).

``dot_general(lhs, rhs, dimension_numbers=((lhs_contract, rhs_contract), (lhs_batch,
rhs_batch)))`` contracts the paired ``*_contract`` axes, keeps the paired ``*_batch`` axes, and
lays the result out as JAX does: batch dims, then lhs free dims, then rhs free dims (each in
increasing axis order). Dtypes follow NumPy (``numpy.matmul``'s promotion, NEP 50 for weak
scalars). The implementation is one transpose/reshape to ``(batch, M, K) @ (batch, K, N)``
(or a plain ``matmul`` when the operands already have that form, the MLP hot path).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
import funcgrad.ops.shape as _shape
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import xp_for
from funcgrad.compile import rules as _rules
from funcgrad.compile.rules import Emission
from funcgrad.core import Tracer, bind1, eval_trace
from funcgrad.errors import ShapeError
from funcgrad.interpreters import batching
from funcgrad.interpreters import cost as _cost
from funcgrad.interpreters.jvp import (
    Zero,
    add_tangents,
    def_fast_vjp,
    jvp_rules,
    multilinear_primitives,
)
from funcgrad.interpreters.transpose import deftranspose, is_undefined
from funcgrad.ir import Eqn, Var
from funcgrad.ops._util import check_static, make_primitive, probe_dtype, result_device

__all__ = ["dot_general", "dot_general_p", "canonical_dimension_numbers"]

DimensionNumbers = tuple[tuple[tuple[int, ...], tuple[int, ...]],
                         tuple[tuple[int, ...], tuple[int, ...]]]


def canonical_dimension_numbers(dimension_numbers: Any, lhs_ndim: int,
                                rhs_ndim: int) -> DimensionNumbers:
    """Dimension numbers as nested tuples of non-negative ints (negative axes allowed in).

    Example:
        >>> canonical_dimension_numbers((([-1], [0]), ([], [])), 2, 2)
        (((1,), (0,)), ((), ()))
    """
    try:
        (lc, rc), (lb, rb) = dimension_numbers
    except (TypeError, ValueError):
        raise TypeError(
            "dot_general: dimension_numbers must be ((lhs_contract, rhs_contract), "
            f"(lhs_batch, rhs_batch)), got {dimension_numbers!r}"
        ) from None

    def axes(seq: Any, nd: int, what: str) -> tuple[int, ...]:
        out = []
        for a in seq:
            a = int(a)
            if not -nd <= a < nd:
                raise ShapeError(
                    f"dot_general: {what} axis {a} is out of bounds for an operand of rank {nd}"
                )
            out.append(a % nd)
        return tuple(out)

    return ((axes(lc, lhs_ndim, "lhs contracting"), axes(rc, rhs_ndim, "rhs contracting")),
            (axes(lb, lhs_ndim, "lhs batch"), axes(rb, rhs_ndim, "rhs batch")))


def _free(nd: int, contract: tuple[int, ...], batch: tuple[int, ...]) -> tuple[int, ...]:
    used = set(contract) | set(batch)
    return tuple(i for i in range(nd) if i not in used)


def _np_multiply(a: Any, b: Any) -> Any:
    # matmul promotes like multiply (bool stays bool, int8 stays int8, NEP 50 for scalars).
    return numpy.multiply(a, b)


def _dot_general_abstract(lhs: ShapedArray, rhs: ShapedArray, dimension_numbers):
    check_static("dot_general", dimension_numbers=dimension_numbers)
    (lc, rc), (lb, rb) = dimension_numbers
    for name, axes, a in (("lhs contracting", lc, lhs), ("rhs contracting", rc, rhs),
                          ("lhs batch", lb, lhs), ("rhs batch", rb, rhs)):
        if any(not 0 <= d < a.ndim for d in axes):
            raise ShapeError(
                f"dot_general: {name} dims {axes} out of range for {a.str_short()}"
            )
    for side, c, b, a in (("lhs", lc, lb, lhs), ("rhs", rc, rb, rhs)):
        if len(set(c) | set(b)) != len(c) + len(b):
            raise ShapeError(
                f"dot_general: {side} contracting dims {c} and batch dims {b} must be "
                f"distinct (operand {a.str_short()})"
            )
    if len(lc) != len(rc):
        raise ShapeError(
            f"dot_general: {len(lc)} lhs contracting dims {lc} but {len(rc)} rhs "
            f"contracting dims {rc}"
        )
    if len(lb) != len(rb):
        raise ShapeError(
            f"dot_general: {len(lb)} lhs batch dims {lb} but {len(rb)} rhs batch dims {rb}"
        )
    for what, ld, rd in (("contracting", lc, rc), ("batch", lb, rb)):
        for i, j in zip(ld, rd):
            if lhs.shape[i] != rhs.shape[j]:
                raise ShapeError(
                    f"dot_general: {what} dims do not match: lhs {lhs.str_short()} dim {i} "
                    f"has size {lhs.shape[i]} but rhs {rhs.str_short()} dim {j} has size "
                    f"{rhs.shape[j]}"
                )
    dt, weak = probe_dtype("dot_general", _np_multiply, lhs, rhs)
    shape = (
        tuple(lhs.shape[i] for i in lb)
        + tuple(lhs.shape[i] for i in _free(lhs.ndim, lc, lb))
        + tuple(rhs.shape[i] for i in _free(rhs.ndim, rc, rb))
    )
    return [ShapedArray(shape, dt, weak, result_device("dot_general", lhs, rhs))]


_MATMUL_DN = (((1,), (0,)), ((), ()))


def _prod(shape: Any) -> int:
    return math.prod(shape)  # numpy.prod of a short tuple costs microseconds


def _dot_general_impl(lhs: Any, rhs: Any, dimension_numbers) -> list:
    xp = xp_for(lhs, rhs, what="dot_general")
    if dimension_numbers == _MATMUL_DN and getattr(lhs, "ndim", 0) == 2 and getattr(
        rhs, "ndim", 0
    ) == 2:
        return [xp.matmul(lhs, rhs)]  # the hot path: x @ W
    (lc, rc), (lb, rb) = dimension_numbers
    if not hasattr(lhs, "ndim") or not hasattr(rhs, "ndim") or lhs.ndim == 0 or rhs.ndim == 0:
        # A scalar operand: nothing to contract, an outer product is a multiply (NEP 50 kept).
        return [xp.multiply(lhs, rhs)]
    ln, rn = lhs.ndim, rhs.ndim
    if not lb:
        if ln == 2 and rn == 2 and lc == (1,) and rc == (0,):
            return [xp.matmul(lhs, rhs)]
        if ln == 2 and rn == 2 and len(lc) == 1:
            a = lhs if lc == (1,) else lhs.T
            b = rhs if rc == (0,) else rhs.T
            return [xp.matmul(a, b)]
        if rn == 2 and lc == (ln - 1,) and rc == (0,):
            # (..., K) @ (K, N): one GEMM over all rows; matmul on the stacked operand would
            # run one small product per leading index.
            out = xp.matmul(lhs.reshape(_prod(lhs.shape[:-1]), lhs.shape[-1]), rhs)
            return [out.reshape(lhs.shape[:-1] + rhs.shape[1:])]
        if ln == 1 and rn == 1 and lc == (0,) and rc == (0,):
            return [xp.matmul(lhs, rhs)]
    lf, rf = _free(ln, lc, lb), _free(rn, rc, rb)
    ls, rs = lhs.shape, rhs.shape
    bshape = tuple(ls[i] for i in lb)
    m_shape, n_shape = tuple(ls[i] for i in lf), tuple(rs[i] for i in rf)
    if not lc:
        # Nothing to contract (per-example outer products under vmap): a broadcasting multiply.
        # A stacked matmul with K=1 is many times slower, and the promotion rules agree.
        a = xp.transpose(lhs, lb + lf).reshape(bshape + m_shape + (1,) * len(n_shape))
        b = xp.transpose(rhs, rb + rf).reshape(bshape + (1,) * len(m_shape) + n_shape)
        return [xp.multiply(a, b)]
    B, M, N, K = _prod(bshape), _prod(m_shape), _prod(n_shape), _prod([ls[i] for i in lc])
    a = xp.transpose(lhs, lb + lf + lc).reshape(B, M, K)
    b = xp.transpose(rhs, rb + rc + rf).reshape(B, K, N)
    out = xp.matmul(a, b)
    return [out.reshape(bshape + m_shape + n_shape)]


dot_general_p = make_primitive("dot_general", _dot_general_impl, _dot_general_abstract)


def dot_general(lhs: Any, rhs: Any, dimension_numbers: Any) -> Any:
    """General tensor contraction: contract, batch, then lay out as (batch, lhs free, rhs free).

    Example:
        >>> import numpy as np
        >>> a, b = np.ones((2, 3)), np.ones((3, 4))
        >>> dot_general(a, b, (((1,), (0,)), ((), ()))).shape
        (2, 4)
    """
    lnd, rnd = get_aval(lhs).ndim, get_aval(rhs).ndim
    try:
        dn = _canonical_cached(dimension_numbers, lnd, rnd)
    except TypeError:  # lists inside: unhashable, not cacheable
        dn = canonical_dimension_numbers(dimension_numbers, lnd, rnd)
    return bind1(dot_general_p, lhs, rhs, dimension_numbers=dn)


_canonical_cached = functools.lru_cache(maxsize=1024)(canonical_dimension_numbers)


# -- JVP: bilinear -------------------------------------------------------------------------------


def _dot_general_jvp(primals, tangents, dimension_numbers):
    lhs, rhs = primals
    tl, tr = tangents
    out = bind1(dot_general_p, lhs, rhs, dimension_numbers=dimension_numbers)
    t: Any = Zero.from_primal(out)
    if type(tl) is not Zero:
        c = bind1(dot_general_p, tl, rhs, dimension_numbers=dimension_numbers)
        t = add_tangents(t, _ew.fit_tangent(c, out))
    if type(tr) is not Zero:
        c = bind1(dot_general_p, lhs, tr, dimension_numbers=dimension_numbers)
        t = add_tangents(t, _ew.fit_tangent(c, out))
    return [out], [t]


jvp_rules[dot_general_p] = _dot_general_jvp

# -- transpose -----------------------------------------------------------------------------------


def _ranges_like(*xs: tuple[int, ...]) -> list[tuple[int, ...]]:
    out, start = [], 0
    for x in xs:
        out.append(tuple(range(start, start + len(x))))
        start += len(x)
    return out


def _transpose_lhs(ct: Any, y: Any, dimension_numbers, x_aval: ShapedArray,
                   swap_ans: bool = False) -> Any:
    """Cotangent of the lhs ``x`` of ``dot_general(x, y)`` given the output cotangent."""
    dims, perm = _transpose_lhs_dims(dimension_numbers, x_aval.ndim, get_aval(y).ndim, swap_ans)
    r = bind1(dot_general_p, ct, y, dimension_numbers=dims)
    if perm != tuple(range(len(perm))):
        r = _shape.transpose(r, perm)
    if get_aval(r).dtype != x_aval.dtype and x_aval.dtype.kind in "fc":
        r = _ew.convert_element_type(r, x_aval.dtype)
    return r


@functools.lru_cache(maxsize=1024)
def _transpose_lhs_dims(dimension_numbers, x_ndim: int, y_ndim: int, swap_ans: bool):
    """(dimension numbers of the cotangent product, permutation of its result)."""
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_kept = _free(x_ndim, x_contract, x_batch)
    y_kept = _free(y_ndim, y_contract, y_batch)
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(x_batch, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(x_batch, x_kept, y_kept)
    dims = ((ans_y, y_kept), (ans_batch, y_batch))
    # Result layout: x's batch dims, x's free dims (as in ct), then y's contracted dims in
    # increasing y-axis order; each pairs with an x axis.
    x_contract_sorted_by_y = [x for _, x in sorted(zip(y_contract, x_contract))]
    out_axes = list(x_batch) + list(x_kept) + x_contract_sorted_by_y
    perm = tuple(sorted(range(len(out_axes)), key=out_axes.__getitem__))
    return dims, perm


def _transpose_rhs(ct: Any, x: Any, dimension_numbers, y_aval: ShapedArray) -> Any:
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    swapped = ((y_contract, x_contract), (y_batch, x_batch))
    return _transpose_lhs(ct, x, swapped, y_aval, swap_ans=True)


def _dot_general_transpose(ct, lhs, rhs, dimension_numbers):
    if is_undefined(lhs) and is_undefined(rhs):
        raise ValueError("dot_general: transpose with respect to both operands (not linear)")
    if is_undefined(lhs):
        return [_transpose_lhs(ct, rhs, dimension_numbers, lhs.aval), None]
    return [None, _transpose_rhs(ct, lhs, dimension_numbers, rhs.aval)]


deftranspose(dot_general_p, _dot_general_transpose)
# Linear in each operand with the other fixed: the eager tape can use the transpose rule as
# each operand's VJP instead of linearizing the node (which would redo the product).
multilinear_primitives.add(dot_general_p)


def _is_matmul(x: Any, y: Any, dimension_numbers) -> bool:
    return dimension_numbers == _MATMUL_DN and getattr(x, "ndim", 0) == 2 \
        and getattr(y, "ndim", 0) == 2


def _dot_general_fast_lhs(xp: Any, ct: Any, ans: Any, x: Any, y: Any, dimension_numbers) -> Any:
    # The transpose rule's product for a 2-D matmul, ``ct @ y.T`` (what its dot_general
    # computes for these dimension numbers), without the binds; any other contraction runs
    # the transpose rule itself.
    if _is_matmul(x, y, dimension_numbers):
        return xp.matmul(ct, y.T)
    return _transpose_lhs(ct, y, dimension_numbers, get_aval(x))


def _dot_general_fast_rhs(xp: Any, ct: Any, ans: Any, x: Any, y: Any, dimension_numbers) -> Any:
    # The transpose rule computes ``(ct.T @ x).T`` for a 2-D matmul: the same product here.
    if _is_matmul(x, y, dimension_numbers):
        return xp.matmul(ct.T, x).T
    return _transpose_rhs(ct, x, dimension_numbers, get_aval(y))


# The eager tape's hot path for x @ W (a matmul's backward node binds two or three primitives
# through the transpose rule; these call the array module once).
def_fast_vjp(dot_general_p, _dot_general_fast_lhs, _dot_general_fast_rhs)

# -- batching ------------------------------------------------------------------------------------


def _shift(axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(a + 1 for a in axes)


def _dot_general_batch(axis_size, vals, dims, dimension_numbers):
    (lhs, rhs), (ld, rd) = vals, dims
    (lc, rc), (lb, rb) = dimension_numbers
    if ld is not None and rd is not None:
        lhs, rhs = _shape.moveaxis(lhs, ld, 0), _shape.moveaxis(rhs, rd, 0)
        dn = ((_shift(lc), _shift(rc)), ((0,) + _shift(lb), (0,) + _shift(rb)))
        return [bind1(dot_general_p, lhs, rhs, dimension_numbers=dn)], [0]
    if ld is not None:
        # The batch axis becomes lhs's first free dim.
        lhs = _shape.moveaxis(lhs, ld, 0)
        dn = ((_shift(lc), rc), (_shift(lb), rb))
        return [bind1(dot_general_p, lhs, rhs, dimension_numbers=dn)], [len(lb)]
    rhs = _shape.moveaxis(rhs, rd, 0)
    dn = ((lc, _shift(rc)), (lb, _shift(rb)))
    n_lhs_free = get_aval(lhs).ndim - len(lc) - len(lb)
    return [bind1(dot_general_p, lhs, rhs, dimension_numbers=dn)], [len(lb) + n_lhs_free]


batching.batch_rules[dot_general_p] = _dot_general_batch


def _dot_general_summed_batch(dimension_numbers):
    # sum_t dot(a_t, b_t) contracts the stacking axis as well: one larger product.
    (lc, rc), (lb, rb) = dimension_numbers
    return dict(dimension_numbers=(((0,) + _shift(lc), (0,) + _shift(rc)),
                                   (_shift(lb), _shift(rb))))


batching.summed_batch_rules[dot_general_p] = _dot_general_summed_batch


def _dot_general_structured(axis_size, vals, dims, structs, dimension_numbers):
    """``dot_general`` with the rows of a (scaled) identity contracted over all their axes:
    ``A @ e_i`` is column ``i`` of ``A``, so the batch is ``A`` itself (times the scale), with
    the contracted axis as batch axis; no multiplication by the identity (jacfwd, jacrev)."""
    (lc, rc), (lb, rb) = dimension_numbers
    k = 0 if structs[0] is not None else 1
    other = vals[1 - k]
    if lb or structs[1 - k] is not None or dims[1 - k] is not None \
            or isinstance(other, Tracer) or not hasattr(other, "ndim"):
        return None
    st = structs[k]
    nd = st.aval.ndim
    sc, oc = (lc, rc) if k == 0 else (rc, lc)
    if not sc and other.size == 1:
        # An outer product with one number (a size-1 batch of an inner vmap): still one-hot.
        ones = st.scale_or_ones()
        args = [ones, other] if k == 0 else [other, ones]
        (scale,) = eval_trace.process_primitive(dot_general_p, args,
                                                {"dimension_numbers": dimension_numbers})
        if not xp_for(other).isfinite(other).all():
            return None
        a = get_aval(scale)
        return [None], [dims[k]], [batching.OneHotStructure(a.strip_weak(), scale)]
    # Every axis of the structured operand is contracted, but for size-1 free ones (the
    # batch of an inner size-1 vmap), which only add size-1 axes to the result.
    s_free = [j for j in range(nd) if j not in sc]
    if not sc or any(st.aval.shape[j] != 1 for j in s_free):
        return None
    xp = xp_for(other)
    # A NaN or inf elsewhere in `other` would turn the dense product's zeros into NaN.
    if other.dtype.kind in "fc" and not xp.isfinite(xp.sum(other)):
        return None
    out_dtype, _ = probe_dtype("dot_general", _np_multiply, get_aval(other), st.aval)
    order = [oc[sc.index(j)] for j in range(nd) if j in sc]
    if len(order) == 1:
        r, bdim = other, order[0]
        if st.scale is not None:
            shape = [1] * other.ndim
            shape[bdim] = axis_size
            r = xp.multiply(r, st.scale.reshape(shape))
    else:
        free = [a for a in range(other.ndim) if a not in oc]
        r = xp.transpose(other, free + order).reshape(
            tuple(other.shape[a] for a in free) + (axis_size,))
        bdim = len(free)
        if st.scale is not None:
            r = xp.multiply(r, st.scale.reshape(-1))
    if s_free:
        # The structured operand's free axes come first (lhs) or last (rhs) per example.
        ones = (1,) * len(s_free)
        if k == 0:
            r, bdim = r.reshape(ones + r.shape), bdim + len(s_free)
        else:
            r = r.reshape(r.shape + ones)
    if r.dtype != out_dtype:
        r = r.astype(out_dtype)
    return [r], [bdim], [None]


batching.structured_batch_rules[dot_general_p] = _dot_general_structured


def _emit_dot_general(ctx: Any, eqn: Eqn, args: list[str]) -> Emission | None:
    if set(eqn.params) != {"dimension_numbers"}:
        return None
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lc, rc, lb = tuple(lc), tuple(rc), tuple(lb)
    ln, rn = eqn.invars[0].aval.ndim, eqn.invars[1].aval.ndim
    a, b = args
    if ln == 0 or rn == 0:
        return Emission(f"xp.multiply({a}, {b})", fresh=True)
    if lb:
        return None
    if not lc:
        # An outer product (what jacfwd/hessian make of a size-1 basis): a broadcasting
        # multiply, as the impl computes it.
        shape = tuple(eqn.invars[0].aval.shape) + (1,) * rn
        return Emission(f"xp.multiply(xp.reshape({a}, {shape!r}), {b})", fresh=True)
    if ln == 2 and rn == 2 and len(lc) == 1:
        a = a if lc == (1,) else f"{a}.T"
        b = b if rc == (0,) else f"{b}.T"
        return Emission(f"xp.matmul({a}, {b})", fresh=True, out="fresh")
    if rn == 2 and lc == (ln - 1,) and rc == (0,):
        if ln > 2:
            # One (M, K) @ (K, N) product instead of a stack of (1, K) @ (K, N) ones (what
            # NumPy's matmul does with them): a single BLAS gemm, several times faster. Rows
            # are summed by gemm rather than gemv, which may round differently in the last bit.
            shape = eqn.invars[0].aval.shape
            m, k = math.prod(shape[:-1]), shape[-1]
            out = tuple(eqn.outvars[0].aval.shape)
            return Emission(f"xp.matmul({a}.reshape({(m, k)!r}), {b}).reshape({out!r})",
                            fresh=True)
        return Emission(f"xp.matmul({a}, {b})", fresh=True, out="fresh")
    if ln == 2 and rn == 1 and rc == (0,):
        return Emission(f"xp.matmul({a if lc == (1,) else a + '.T'}, {b})", fresh=True)
    if ln == 1 and rn == 2 and lc == (0,):
        return Emission(f"xp.matmul({a}, {b if rc == (0,) else b + '.T'})", fresh=True)
    if ln == 1 and rn == 1 and lc == (0,) and rc == (0,):
        return Emission(f"xp.matmul({a}, {b})", fresh=True)
    return None


def _simplify_transposed_product(eqn: Eqn, ins: list, f: Any) -> Any:
    """``transpose(a . b, (1, 0))`` -> ``b^T . a^T`` for 2-D operands read only there: one
    contiguous product instead of a product and a transpose (what reverse mode of a matmul
    writes). Registered on ``transpose``, whose own rules run first."""
    (x,) = ins
    perm = tuple(eqn.params["permutation"])
    p = f.producer.get(x) if type(x) is Var else None
    if (p is not None and p.prim is dot_general_p and perm == (1, 0)
            and f.uses.get(x, 0) == 1 and set(p.params) == {"dimension_numbers"}):
        (lc, rc), (lb, rb) = p.params["dimension_numbers"]
        a, b = p.invars
        if not lb and not rb and a.aval.ndim == 2 and b.aval.ndim == 2 and len(lc) == 1:
            dims = ((tuple(rc), tuple(lc)), ((), ()))
            return Eqn(dot_general_p, [b, a], eqn.outvars, {"dimension_numbers": dims},
                       eqn.source_info)
    return None


_rules.emitters[dot_general_p] = _emit_dot_general
_rules.register_simplification(_shape.transpose_p, _simplify_transposed_product)
_rules.fold_any_size_primitives.add(dot_general_p)
_rules.roles["dot_general"] = dot_general_p


def _dot_general_cost(eqn: Eqn, jaxpr_cost: Any) -> _cost.Cost:
    """``2 * M * N * K``: a multiply and an add per output element and contracted index."""
    (lc, _), _ = eqn.params["dimension_numbers"]
    k = math.prod(eqn.invars[0].aval.shape[d] for d in lc)
    out = _cost.aval_size(eqn.outvars[0].aval)
    io = sum(_cost.aval_bytes(v.aval) for v in (*eqn.invars, *eqn.outvars))
    return _cost.Cost(2.0 * out * k, 0.0, float(io))


_cost.cost_rules[dot_general_p] = _dot_general_cost
