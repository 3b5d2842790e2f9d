"""Optimisation passes over closed jaxprs, run before code generation.

:func:`optimize_jaxpr` runs, in order:

1. **inlining** of call primitives (``jit`` registers itself in :data:`inline_primitives`), so
   the later passes see across nested ``jit`` boundaries (which AD and vmap create a lot of);
2. one forward sweep doing, per equation,
   * **constant folding**: an equation whose inputs are all literals or consts and whose
     result is small is evaluated now (results of literal-only equations are folded only when
     they are scalars, since an array made now would live on whatever device is current);
     products, transposes and reshapes of consts also when big, if no bigger than their
     biggest const; an exact scalar operation on scalars and broadcasts of scalars becomes a
     broadcast of the folded scalar;
   * **algebraic simplification** of what AD leaves behind: ``x * 1``, ``1 * x``, ``x / 1``,
     ``x + 0``, ``0 + x``, ``x - 0`` (also ``add_any``), ``0 - x`` -> ``neg x``,
     ``neg (neg x)``, ``convert_element_type`` to the dtype ``x`` has, identity
     ``broadcast_in_dim``/``reshape``/``transpose``, ``reduce_sum`` over no axes,
     ``stop_gradient``, ``select_n`` with equal cases, ``transpose`` of a ``transpose``
     (permutations composed), ``reshape`` of a ``reshape``, and the transpose of a 2-D
     product used nowhere else, ``(a . b)^T`` -> ``b^T . a^T`` (what reverse mode of a matmul
     produces: one contiguous product instead of two steps). A rewrite to ``x`` happens
     only when ``x`` already has exactly the result's shape and dtype and is not weakly typed,
     so no broadcast or promotion is lost. ``x * 0`` becomes ``0`` only for integer and bool
     ``x``: for floats ``inf * 0`` and ``nan * 0`` are NaN, and folding would hide them.
     ``x + 0.0`` -> ``x`` can turn a ``-0.0`` result into ``-0.0`` where NumPy gives ``0.0``
     (they compare equal). Exact float rewrites of what reverse mode writes: negations move
     out and cancel (``x * -y`` -> ``-(x * y)``, ``-(c * y)`` -> ``(-c) * y``, ``x + -y`` ->
     ``x - y``, ``x - -y`` -> ``x + y``), ``(z + z) * c`` -> ``z * (2c)`` for ``|c| >= 1``, and
     ``scatter_add(0, u, idx) + y`` -> ``scatter_add(y, u, idx)``;
   * **common-subexpression elimination**: same primitive, same params, same inputs (in
     either order for ``add``, ``mul``, ``add_any`` and the commutative logic ops);
3. **dead-code elimination** (:func:`funcgrad.ir.dce_jaxpr`).

(A CSE-only sweep runs before the full one, so rules that depend on use counts see them
after duplicates are merged.)

Consts of the input that are all zeros or all ones count as zeros/ones (AD instantiates
symbolic zeros as zero arrays and ``grad`` seeds with ones).

Example:
    >>> import numpy as np, funcgrad
    >>> from funcgrad.ops.elementwise import mul, sin
    >>> closed = funcgrad.make_jaxpr(lambda x: mul(sin(x), 1.0))(np.ones(3))
    >>> print(optimize_jaxpr(closed))
    { lambda ; a:f64[3]. let b:f64[3] = sin a in (b) }
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy

from funcgrad.avals import ShapedArray
from funcgrad.backend import is_array, to_numpy
from funcgrad.compile.keys import literal_key
from funcgrad.core import Primitive
from funcgrad.interpreters.jvp import add_any_p
from funcgrad.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, dce_jaxpr, effectful_primitives
from funcgrad.ops import elementwise as _ew
from funcgrad.ops import linalg as _linalg
from funcgrad.ops import reductions as _red
from funcgrad.ops import scatter as _scatter
from funcgrad.ops import shape as _shape

__all__ = [
    "optimize_jaxpr",
    "inline_primitives",
    "simplification_rules",
    "FOLD_MAX_SIZE",
]

#: call primitive -> name of its ClosedJaxpr param; such equations are inlined first.
inline_primitives: dict[Primitive, str] = {}

#: results with more elements than this are never folded at compile time
FOLD_MAX_SIZE = 1024
# Consts bigger than this are not scanned for all-zeros / all-ones.
_SCAN_MAX_SIZE = 1 << 20

Atom = Var | Literal
_dot_general_p = getattr(_linalg, "dot_general_p", None)
_scatter_add_p = getattr(_scatter, "scatter_add_p", None)
_FOLD_BIG = frozenset(p for p in (_dot_general_p, _shape.transpose_p, _shape.reshape_p)
                      if p is not None)


# ---------------------------------------------------------------------------------------------
# Inlining


def _inline(closed: ClosedJaxpr) -> tuple[Jaxpr, list[Any]]:
    """A copy of ``closed`` with every inlinable call expanded, with fresh variables."""
    const_vars: list[Var] = []
    const_vals: list[Any] = []
    const_ids: dict[int, Var] = {}
    eqns: list[Eqn] = []

    def const_var(aval: ShapedArray, val: Any) -> Var:
        v = const_ids.get(id(val))
        if v is None:
            v = Var(aval)
            const_ids[id(val)] = v
            const_vars.append(v)
            const_vals.append(val)
        return v

    def body(c: ClosedJaxpr, in_atoms: list[Atom]) -> list[Atom]:
        j = c.jaxpr
        env: dict[Var, Atom] = {}
        for v, val in zip(j.constvars, c.consts):
            env[v] = const_var(v.aval, val)
        env.update(zip(j.invars, in_atoms))

        def read(a: Atom) -> Atom:
            return a if type(a) is Literal else env[a]

        for e in j.eqns:
            ins = [read(a) for a in e.invars]
            key = inline_primitives.get(e.prim)
            if key is not None:
                outs = body(e.params[key], ins)
                env.update(zip(e.outvars, outs))
                continue
            outvars = [Var(v.aval) for v in e.outvars]
            env.update(zip(e.outvars, outvars))
            eqns.append(e.replace(invars=ins, outvars=outvars))
        return [read(a) for a in j.outvars]

    invars = [Var(v.aval) for v in closed.jaxpr.invars]
    outvars = body(closed, list(invars))
    return Jaxpr(const_vars, invars, outvars, eqns), const_vals


# ---------------------------------------------------------------------------------------------
# Facts about atoms

_KIND_PRESERVING = frozenset(
    (_shape.broadcast_in_dim_p, _shape.reshape_p, _shape.transpose_p,
     _ew.convert_element_type_p)
)


def is_frozen(val: Any) -> bool:
    """Whether a const's value may be used at compile time (folded, tested for zeros, ones or
    an identity): a scalar, or a read-only host array (as funcgrad makes ``jacfwd``'s basis).
    A writeable array may be changed in place between calls (a Module's parameters, by an
    optimizer): the compiled program reads it on every call, as the function itself does.
    Device arrays have no read-only flag, so they always count as writeable.

    Example:
        >>> import numpy as np
        >>> a = np.ones(2)
        >>> is_frozen(1.0), is_frozen(a)
        (True, False)
        >>> a.flags.writeable = False
        >>> is_frozen(a)
        True
    """
    if not is_array(val):
        return True
    return type(val) is numpy.ndarray and not val.flags.writeable


class _Facts:
    """What the sweep knows: const values, producers of variables, zero/one-ness. Only frozen
    consts (:func:`is_frozen`) are known: the others are read when the program runs."""

    def __init__(self, const_vals: dict[Var, Any]) -> None:
        self.const_vals = {v: c for v, c in const_vals.items() if is_frozen(c)}
        self.producer: dict[Var, Eqn] = {}
        self.uses: dict[Var, int] = {}  # reads of each variable in the input jaxpr
        self._kind: dict[Var, str | None] = {}

    def value(self, a: Atom) -> Any:
        return a.val if type(a) is Literal else self.const_vals[a]

    def is_known(self, a: Atom) -> bool:
        return type(a) is Literal or a in self.const_vals

    def _const_kind(self, a: Atom) -> str | None:
        """"zero" / "one" when the literal or const is all zeros / all ones, else None."""
        if type(a) is Literal:
            v = a.val
            if isinstance(v, bool | numpy.bool_):
                return None
            try:
                return "zero" if v == 0 else "one" if v == 1 else None
            except Exception:
                return None
        if a in self._kind:
            return self._kind[a]
        if a not in self.const_vals:
            # Broadcasting, reshaping or casting a zero/one keeps it a zero/one.
            p = self.producer.get(a)
            kind = None
            if p is not None and p.prim in _KIND_PRESERVING and a.aval.dtype.kind in "iufc":
                kind = self._const_kind(p.invars[0])
            self._kind[a] = kind
            return kind
        kind = None
        val = self.const_vals[a]
        aval = a.aval
        if aval.dtype.kind in "iufc" and aval.size <= _SCAN_MAX_SIZE:
            try:
                host = numpy.asarray(to_numpy(val))
                if not host.size:
                    kind = None
                elif not host.any():
                    kind = "zero"
                elif bool((host == 1).all()):
                    kind = "one"
            except Exception:
                kind = None
        self._kind[a] = kind
        return kind

    def is_zero(self, a: Atom) -> bool:
        return self._const_kind(a) == "zero"

    def is_one(self, a: Atom) -> bool:
        return self._const_kind(a) == "one"


def _same(x: Atom, out: Var) -> bool:
    """``x`` can stand for ``out``: same shape and dtype, neither weakly typed."""
    a, b = x.aval, out.aval
    return a.shape == b.shape and a.dtype == b.dtype and not a.weak_type and not b.weak_type


# ---------------------------------------------------------------------------------------------
# Simplification rules: rule(eqn, ins, facts) -> None (keep), list of atoms (the outputs are
# these), or an Eqn (emit this one instead; it may be simplified again).

SimplifyRule = Callable[[Eqn, list[Atom], _Facts], "list[Atom] | Eqn | None"]
simplification_rules: dict[Primitive, SimplifyRule] = {}


def _rule(*prims: Primitive | None) -> Callable[[SimplifyRule], SimplifyRule]:
    def deco(fn: SimplifyRule) -> SimplifyRule:
        for p in prims:
            if p is not None:
                simplification_rules[p] = fn
        return fn

    return deco


@_rule(_ew.add_p, add_any_p)
def _simplify_add(eqn: Eqn, ins: list[Atom], f: _Facts):
    x, y = ins
    out = eqn.outvars[0]
    if f.is_zero(y) and _same(x, out):
        return [x]
    if f.is_zero(x) and _same(y, out):
        return [y]
    # x + -y -> x - y, -x + y -> y - x (exact)
    for k in (1, 0):
        z = _negated(ins[k], f)
        if z is not None:
            return Eqn(_ew.sub_p, [ins[1 - k], z], eqn.outvars, {}, eqn.source_info)
    # scatter_add(0, u, idx) + y -> scatter_add(y, u, idx): what the transpose of slicing
    # leaves behind (a zero array padded around u, then added), in one pass and no zeros.
    for s_, other in ((x, y), (y, x)):
        p = f.producer.get(s_) if type(s_) is Var else None
        if (p is not None and p.prim is _scatter_add_p and len(p.invars) == 2
                and f.uses.get(s_) == 1 and f.is_zero(p.invars[0])
                and _same(other, out) and _same(s_, out)):
            return Eqn(_scatter_add_p, [other, p.invars[1]], eqn.outvars, p.params,
                       eqn.source_info)
    return None


@_rule(_ew.sub_p)
def _simplify_sub(eqn: Eqn, ins: list[Atom], f: _Facts):
    x, y = ins
    out = eqn.outvars[0]
    if f.is_zero(y) and _same(x, out):
        return [x]
    if f.is_zero(x) and _same(y, out):
        return Eqn(_ew.neg_p, [y], eqn.outvars, {}, eqn.source_info)
    z = _negated(y, f)
    if z is not None:  # x - -z -> x + z (exact)
        return Eqn(_ew.add_p, [x, z], eqn.outvars, {}, eqn.source_info)
    return None


@_rule(_ew.mul_p)
def _simplify_mul(eqn: Eqn, ins: list[Atom], f: _Facts):
    x, y = ins
    out = eqn.outvars[0]
    if f.is_one(y) and _same(x, out):
        return [x]
    if f.is_one(x) and _same(y, out):
        return [y]
    # x * 0 is 0 only where x cannot be inf or nan.
    if out.aval.dtype.kind in "biu":
        if f.is_zero(y) and _same(y, out) and x.aval.dtype.kind in "biu":
            return [y]
        if f.is_zero(x) and _same(x, out) and y.aval.dtype.kind in "biu":
            return [x]
    # (z + z) * c -> z * (2c) for a float literal |c| >= 1: 2z is exact and the product is
    # rounded once either way (and overflows alike); reverse mode of z * z writes z + z.
    for s_, c in ((x, y), (y, x)):
        if type(c) is Literal and type(c.val) is float and out.aval.dtype.kind == "f":
            p = f.producer.get(s_) if type(s_) is Var else None
            two_c = 2.0 * c.val
            if (p is not None and p.prim in (_ew.add_p, add_any_p) and p.invars[0] is p.invars[1]
                    and type(p.invars[0]) is Var and f.uses.get(s_) == 1
                    and abs(c.val) >= 1.0 and math.isfinite(two_c)
                    and p.invars[0].aval == s_.aval):
                z = p.invars[0]
                new_ins = [z, Literal(two_c, c.aval)] if s_ is x else [Literal(two_c, c.aval), z]
                return Eqn(_ew.mul_p, new_ins, eqn.outvars, {}, eqn.source_info)
    return _push_neg(eqn, ins, f)


@_rule(_ew.neg_p)
def _simplify_neg(eqn: Eqn, ins: list[Atom], f: _Facts):
    (x,) = ins
    p = f.producer.get(x) if type(x) is Var else None
    if p is not None and p.prim is _ew.neg_p and _same(p.invars[0], eqn.outvars[0]):
        return [p.invars[0]]
    # -(c * y) -> (-c) * y for a float literal c: negation is exact.
    if (p is not None and p.prim is _ew.mul_p and f.uses.get(x) == 1
            and eqn.outvars[0].aval.dtype.kind in "fc"):
        a, b = p.invars
        for c, y in ((a, b), (b, a)):
            if type(c) is Literal and type(c.val) in (float, complex):
                return Eqn(_ew.mul_p, [Literal(-c.val, c.aval), y] if c is a
                           else [y, Literal(-c.val, c.aval)], eqn.outvars, {}, eqn.source_info)
    return None


def _negated(a: Atom, f: _Facts) -> Atom | None:
    """``y`` when ``a`` is ``neg y`` read only here, of exactly ``a``'s type (float)."""
    p = f.producer.get(a) if type(a) is Var else None
    if p is None or p.prim is not _ew.neg_p or f.uses.get(a) != 1:
        return None
    y = p.invars[0]
    if (y.aval.shape != a.aval.shape or y.aval.dtype != a.aval.dtype
            or y.aval.weak_type != a.aval.weak_type or a.aval.dtype.kind not in "fc"):
        return None
    return y


def _push_neg(eqn: Eqn, ins: list[Atom], f: _Facts):
    """``x * -y`` -> ``-(x * y)`` (also ``/``), where the negation can meet another one (or a
    literal) and vanish: exact, as negation is; AD writes such chains a lot."""
    for k in (0, 1):
        y = _negated(ins[k], f)
        if y is not None:
            new_ins = list(ins)
            new_ins[k] = y
            out = eqn.outvars[0]
            t = Var(out.aval)
            f.uses[t] = 1
            return (Eqn(eqn.prim, new_ins, [t], eqn.params, eqn.source_info),
                    Eqn(_ew.neg_p, [t], [out], {}, eqn.source_info))
    return None


@_rule(_ew.div_p)
def _simplify_div(eqn: Eqn, ins: list[Atom], f: _Facts):
    x, y = ins
    if f.is_one(y) and _same(x, eqn.outvars[0]):
        return [x]
    return _push_neg(eqn, ins, f)


@_rule(_ew.convert_element_type_p)
def _simplify_convert(eqn: Eqn, ins: list[Atom], f: _Facts):
    (x,) = ins
    if _same(x, eqn.outvars[0]):
        return [x]
    return None


@_rule(getattr(_ew, "stop_gradient_p", None))
def _simplify_identity(eqn: Eqn, ins: list[Atom], f: _Facts):
    (x,) = ins
    if _same(x, eqn.outvars[0]):
        return [x]
    return None


@_rule(_shape.broadcast_in_dim_p)
def _simplify_bid(eqn: Eqn, ins: list[Atom], f: _Facts):
    (x,) = ins
    out = eqn.outvars[0]
    dims = eqn.params.get("broadcast_dimensions")
    if _same(x, out) and tuple(dims) == tuple(range(out.aval.ndim)):
        return [x]
    return None


@_rule(_shape.reshape_p)
def _simplify_reshape(eqn: Eqn, ins: list[Atom], f: _Facts):
    (x,) = ins
    out = eqn.outvars[0]
    if _same(x, out):
        return [x]
    p = f.producer.get(x) if type(x) is Var else None
    if p is not None and p.prim is _shape.reshape_p and set(eqn.params) == {"new_sizes"}:
        src = p.invars[0]
        if _same(src, out):
            return [src]
        return eqn.replace(invars=[src])
    return None


@_rule(_shape.transpose_p)
def _simplify_transpose(eqn: Eqn, ins: list[Atom], f: _Facts):
    (x,) = ins
    out = eqn.outvars[0]
    perm = tuple(eqn.params["permutation"])
    if perm == tuple(range(len(perm))) and _same(x, out):
        return [x]
    p = f.producer.get(x) if type(x) is Var else None
    if p is not None and p.prim is _shape.transpose_p and set(eqn.params) == {"permutation"}:
        inner = tuple(p.params["permutation"])
        composed = tuple(inner[i] for i in perm)
        src = p.invars[0]
        if composed == tuple(range(len(composed))) and _same(src, out):
            return [src]
        return eqn.replace(invars=[src], params={"permutation": composed})
    if (p is not None and p.prim is _dot_general_p and perm == (1, 0)
            and f.uses.get(x, 0) == 1 and set(p.params) == {"dimension_numbers"}):
        # (a . b)^T = b^T . a^T: one contiguous product instead of a product and a transpose.
        (lc, rc), (lb, rb) = p.params["dimension_numbers"]
        a, b = p.invars
        if not lb and not rb and a.aval.ndim == 2 and b.aval.ndim == 2 and len(lc) == 1:
            dims = ((tuple(rc), tuple(lc)), ((), ()))
            return Eqn(_dot_general_p, [b, a], eqn.outvars, {"dimension_numbers": dims},
                       eqn.source_info)
    return None


@_rule(_red.reduce_sum_p)
def _simplify_reduce_sum(eqn: Eqn, ins: list[Atom], f: _Facts):
    (x,) = ins
    if not tuple(eqn.params.get("axes", (0,))) and _same(x, eqn.outvars[0]):
        return [x]
    return None


@_rule(getattr(_ew, "select_n_p", None))
def _simplify_select(eqn: Eqn, ins: list[Atom], f: _Facts):
    cases = ins[1:]
    out = eqn.outvars[0]
    first = cases[0]
    if type(first) is Var and all(c is first for c in cases) and _same(first, out):
        return [first]
    return None


# IEEE addition and multiplication commute exactly, and so do NumPy's broadcasting and
# promotion; max/min are left out (which zero or NaN they return depends on the order).
_COMMUTATIVE = frozenset(
    p for p in (_ew.add_p, _ew.mul_p, add_any_p, getattr(_ew, "and_p", None),
                getattr(_ew, "or_p", None), getattr(_ew, "xor_p", None),
                getattr(_ew, "eq_p", None), getattr(_ew, "ne_p", None))
    if p is not None
)

# ---------------------------------------------------------------------------------------------
# Constant folding


def _fold(eqn: Eqn, ins: list[Atom], f: _Facts) -> list[Any] | None:
    """Values of ``eqn``'s outputs computed now, or None when it should not be folded."""
    prim = eqn.prim
    if prim.impl is None or prim in effectful_primitives or prim in inline_primitives:
        return None
    has_array = False
    biggest = 0
    for a in ins:
        if type(a) is not Literal:
            has_array = has_array or is_array(f.const_vals[a])
            biggest = max(biggest, a.aval.size)
    # Products and transposes of consts (what jacfwd/hessian build from basis matrices:
    # `0.5 * B` as an outer product, `I @ B`) are folded whatever their size when the result
    # is no bigger than the biggest const it is made from: it costs the cache at most what
    # that const already does, and saves a matrix product per call.
    limit = max(FOLD_MAX_SIZE, biggest) if prim in _FOLD_BIG else FOLD_MAX_SIZE
    if any(v.aval.size > limit for v in eqn.outvars):
        return None
    if prim not in _FOLD_BIG and biggest > FOLD_MAX_SIZE:
        return None
    vals = [f.value(a) for a in ins]
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            outs = prim.impl(*vals, **eqn.params)
    except Exception:
        return None  # let it fail (with the eager error) when the code runs
    if caught:
        return None  # keep the warning (log(0), overflow...) where the user will see it
    if not has_array:
        # Arrays made from literals alone would live on the device current now; a 0-d one
        # becomes a NumPy scalar (strongly typed like it, and accepted on every device).
        outs = list(outs)
        for i, o in enumerate(outs):
            if is_array(o) and getattr(o, "ndim", None) == 0:
                o = outs[i] = numpy.asarray(to_numpy(o))[()]
            if not isinstance(o, bool | int | float | complex | numpy.generic):
                return None
    return list(outs)


# Correctly rounded IEEE operations: on scalars they give exactly what they give elementwise.
_EXACT_ARITH = frozenset(p for p in (
    _ew.add_p, _ew.sub_p, _ew.mul_p, _ew.div_p, _ew.neg_p, add_any_p,
    getattr(_ew, "max_p", None), getattr(_ew, "min_p", None)) if p is not None)


def _fold_broadcast_scalars(eqn: Eqn, ins: list[Atom], f: _Facts) -> Eqn | None:
    """``op(c, broadcast(d))`` for scalar consts/literals ``c``, ``d`` -> ``broadcast(op(c, d))``
    (``100.0 * ones`` from a ``grad`` seed), so the broadcast can melt into its readers."""
    if eqn.prim not in _EXACT_ARITH or len(eqn.outvars) != 1:
        return None
    out = eqn.outvars[0]
    if out.aval.ndim == 0:
        return None
    scalars: list[Atom] = []
    any_bid = False
    for a in ins:
        if a.aval.ndim == 0 and f.is_known(a):
            scalars.append(a)
            continue
        p = f.producer.get(a) if type(a) is Var else None
        if (p is None or p.prim is not _shape.broadcast_in_dim_p
                or p.invars[0].aval.ndim != 0 or not f.is_known(p.invars[0])):
            return None
        # The broadcast result is an array of its dtype: a strong scalar of that dtype.
        val = numpy.asarray(to_numpy(f.value(p.invars[0])), dtype=a.aval.dtype)[()]
        scalars.append(Literal(val, a.aval.update(shape=())))
        any_bid = True
    if not any_bid:
        return None
    tmp = Var(out.aval.update(shape=()))
    vals = _fold(eqn.replace(invars=scalars, outvars=[tmp]), scalars, f)
    if vals is None or numpy.asarray(vals[0]).dtype != out.aval.dtype:
        return None
    return Eqn(_shape.broadcast_in_dim_p, [Literal(vals[0], tmp.aval)], eqn.outvars,
               {"shape": tuple(out.aval.shape), "broadcast_dimensions": ()}, eqn.source_info)


# ---------------------------------------------------------------------------------------------
# CSE keys


def _atom_key(a: Atom) -> Any:
    # By value (identity for big arrays, which the jaxpr keeps alive during the sweep):
    # repr() of literals and their types was a tenth of some first calls.
    if type(a) is Literal:
        return ("lit", literal_key(a.val), a.aval)
    return a


def _order(k: Any) -> tuple:
    # Any total order works (equal keys sort alike); two different literals with one hash
    # may sort either way, which only misses a merge.
    return (0, k.id) if type(k) is Var else (1, hash(k))


def _cse_key(eqn: Eqn, ins: list[Atom]) -> Any:
    if eqn.prim in effectful_primitives or not eqn.outvars:
        return None
    keys = [_atom_key(a) for a in ins]
    if eqn.prim in _COMMUTATIVE and len(keys) == 2:
        keys.sort(key=_order)  # x*y and y*x are one value
    try:
        key = (eqn.prim, tuple(keys), tuple(sorted(eqn.params.items())))
        hash(key)
    except TypeError:
        return None
    return key


# ---------------------------------------------------------------------------------------------
# The sweep


def _sweep(
    jaxpr: Jaxpr, const_vals: dict[Var, Any], simplify: bool = True
) -> tuple[Jaxpr, dict[Var, Any]]:
    facts = _Facts(dict(const_vals))
    for e in jaxpr.eqns:
        for a in e.invars:
            if type(a) is Var:
                facts.uses[a] = facts.uses.get(a, 0) + 1
    for a in jaxpr.outvars:
        if type(a) is Var:
            facts.uses[a] = facts.uses.get(a, 0) + 1
    env: dict[Var, Atom] = {}
    new_consts: dict[Var, Any] = {}
    cse: dict[Any, list[Var]] = {}
    eqns: list[Eqn] = []

    def read(a: Atom) -> Atom:
        # env maps to atoms that are already final, so one lookup resolves.
        return a if type(a) is Literal else env.get(a, a)

    def forward(olds: list[Var], news: list[Atom]) -> None:
        # The readers of each old variable now read its replacement.
        for o, n in zip(olds, news):
            if type(n) is Literal and n.aval.weak_type and not o.aval.weak_type:
                n = Literal(n.val, o.aval)  # the result was strong-typed: keep it so
            env[o] = n
            if type(n) is Var:
                facts.uses[n] = facts.uses.get(n, 0) + facts.uses.get(o, 0)

    pending = list(reversed(jaxpr.eqns))
    while pending:
        eqn = pending.pop()
        ins = [read(a) for a in eqn.invars]

        if simplify and all(facts.is_known(a) for a in ins):
            vals = _fold(eqn, ins, facts)
            if vals is not None:
                for v, val in zip(eqn.outvars, vals):
                    if is_array(val) or not isinstance(
                        val, bool | int | float | complex | numpy.generic
                    ):
                        nv = Var(v.aval)
                        facts.const_vals[nv] = val
                        new_consts[nv] = val
                        env[v] = nv
                    else:
                        env[v] = Literal(val, v.aval)
                continue

        if simplify and eqn.prim in _EXACT_ARITH:
            folded = _fold_broadcast_scalars(eqn, ins, facts)
            if folded is not None:
                pending.append(folded)
                continue

        rule = simplification_rules.get(eqn.prim) if simplify else None
        if rule is not None:
            res = rule(eqn, ins, facts)
            if isinstance(res, Eqn):
                # Simplify the replacement again (a composed transpose may be the identity).
                pending.append(res)
                continue
            if isinstance(res, tuple):  # several equations, in order
                pending.extend(reversed(res))
                continue
            if res is not None:
                forward(eqn.outvars, res)
                continue

        key = _cse_key(eqn, ins)
        if key is not None:
            prev = cse.get(key)
            if prev is not None:
                forward(eqn.outvars, prev)
                continue
            cse[key] = eqn.outvars
        new_eqn = eqn.replace(invars=ins)
        for v in eqn.outvars:
            facts.producer[v] = new_eqn
        eqns.append(new_eqn)

    outvars = [read(a) for a in jaxpr.outvars]
    all_consts = dict(const_vals)
    all_consts.update(new_consts)
    constvars = list(jaxpr.constvars) + list(new_consts)
    return Jaxpr(constvars, jaxpr.invars, outvars, eqns), all_consts


def optimize_jaxpr(closed: ClosedJaxpr) -> ClosedJaxpr:
    """The optimised equivalent of ``closed`` (see the module docstring for the passes).

    Example:
        >>> import numpy as np, funcgrad
        >>> from funcgrad.ops.elementwise import add, sin
        >>> closed = funcgrad.make_jaxpr(lambda x: add(sin(x), sin(x)))(np.ones(2))
        >>> print(optimize_jaxpr(closed))
        { lambda ; a:f64[2]. let b:f64[2] = sin a; c:f64[2] = add b b in (c) }
    """
    jaxpr, consts = _inline(closed)
    const_map = dict(zip(jaxpr.constvars, consts))
    # CSE alone first, so the rules that depend on how often a value is used see true counts.
    jaxpr, const_map = _sweep(jaxpr, const_map, simplify=False)
    jaxpr, const_map = _sweep(jaxpr, const_map)
    jaxpr, _ = dce_jaxpr(jaxpr)
    return ClosedJaxpr(jaxpr, [const_map[v] for v in jaxpr.constvars])
