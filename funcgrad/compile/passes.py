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
   * **algebraic simplification** of what AD leaves behind, by the rules each primitive's
     block registers (:data:`funcgrad.compile.rules.simplification_rules`): ``x * 1``, ``1 * x``, ``x / 1``,
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
    { lambda ; a:f64[3]. let b:f64[3] = sin a in (b,) }
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy

from funcgrad.avals import ShapedArray
from funcgrad.backend import is_array, to_numpy
from funcgrad.compile.keys import literal_key
from funcgrad.compile.rules import (
    commutative_primitives,
    exact_scalar_primitives,
    fold_any_size_primitives,
    inline_primitives,
    roles,
    simplification_rules,
    zero_one_preserving_primitives,
)
from funcgrad.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, dce_jaxpr, effectful_primitives

__all__ = [
    "optimize_jaxpr",
    "simplify_equation",
    "inline_primitives",
    "simplification_rules",
    "FOLD_MAX_SIZE",
]

#: results with more elements than this are never folded at compile time
FOLD_MAX_SIZE = 1024
# Consts bigger than this are not scanned for all-zeros / all-ones.
_SCAN_MAX_SIZE = 1 << 20

Atom = Var | Literal


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
                for k, (o, a) in enumerate(zip(e.outvars, outs)):
                    if a.aval.weak_type and not o.aval.weak_type:
                        # The call's result is strong (as the called function's is, run
                        # on its own): a weak value inside becomes a strong one here.
                        strong = Var(o.aval)
                        eqns.append(Eqn(roles["convert_element_type"], [a], [strong],
                                        {"new_dtype": o.aval.dtype}))
                        outs[k] = strong
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
            if (p is not None and p.prim in zero_one_preserving_primitives
                    and a.aval.dtype.kind in "iufc"):
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


# ---------------------------------------------------------------------------------------------
# Simplification rules live with their primitives (compile.rules.simplification_rules): each
# rule(eqn, ins, facts) -> None (keep), list of atoms (the outputs are these), an Eqn or a
# tuple of Eqns (emit these instead; they may be simplified again). ``facts`` is a _Facts.


def simplify_equation(eqn: Eqn) -> Any:
    """``eqn``'s simplification by its primitive's rule, knowing only its literals (no consts,
    no producers): None (keep it), a list of atoms (its outputs are these), an ``Eqn`` or a
    tuple of them. For interpreters simplifying operations as they trace them.

    Example:
        >>> import numpy as np
        >>> from funcgrad.avals import ShapedArray
        >>> from funcgrad.ops.elementwise import mul_p
        >>> x = Var(ShapedArray((), np.dtype("float64")))
        >>> simplify_equation(Eqn(mul_p, [x, Literal(1.0)], [Var(x.aval)], {})) == [x]
        True
    """
    rule = simplification_rules.get(eqn.prim)
    return None if rule is None else rule(eqn, eqn.invars, _Facts({}))


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
    limit = max(FOLD_MAX_SIZE, biggest) if prim in fold_any_size_primitives else FOLD_MAX_SIZE
    if any(v.aval.size > limit for v in eqn.outvars):
        return None
    if prim not in fold_any_size_primitives and biggest > FOLD_MAX_SIZE:
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


def _fold_broadcast_scalars(eqn: Eqn, ins: list[Atom], f: _Facts) -> Eqn | None:
    """``op(c, broadcast(d))`` for scalar consts/literals ``c``, ``d`` -> ``broadcast(op(c, d))``
    (``100.0 * ones`` from a ``grad`` seed), so the broadcast can melt into its readers."""
    bid = roles.get("broadcast_in_dim")
    if bid is None or eqn.prim not in exact_scalar_primitives or len(eqn.outvars) != 1:
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
        if (p is None or p.prim is not bid
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
    return Eqn(bid, [Literal(vals[0], tmp.aval)], eqn.outvars,
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
    prim = eqn.prim
    if prim in effectful_primitives or not eqn.outvars:
        return None
    # Called once per equation per sweep: variables (most operands) are their own keys.
    if len(ins) == 2:  # the usual case, in short
        a, b = ins
        if type(a) is not Var:
            a = _atom_key(a)
        if type(b) is not Var:
            b = _atom_key(b)
        if prim in commutative_primitives and (
                b.id < a.id if type(a) is Var and type(b) is Var else _order(b) < _order(a)):
            keys: tuple = (b, a)  # x*y and y*x are one value
        else:
            keys = (a, b)
    else:
        keys = tuple([a if type(a) is Var else _atom_key(a) for a in ins])
    params = eqn.params
    if not params:
        return (prim, keys, ())  # variables and literal keys always hash
    try:
        key = (prim, keys, tuple(sorted(params.items())))
        hash(key)
    except TypeError:
        return None
    return key


def _with_invars(eqn: Eqn, ins: list[Atom]) -> Eqn:
    """``eqn`` reading ``ins``: the equation itself where they are its operands (jaxprs are
    never mutated), else a copy."""
    invars = eqn.invars
    if len(ins) == len(invars):
        for a, b in zip(ins, invars):
            if a is not b:
                break
        else:
            return eqn
    return eqn.replace(invars=ins)


def _cse_sweep(jaxpr: Jaxpr) -> tuple[Jaxpr, dict[Var, int]]:
    """Common-subexpression elimination alone, and how often each variable of the result is
    read (by its equations and outputs): what the full sweep's rules count uses by."""
    env: dict[Var, Var] = {}
    cse: dict[Any, list[Var]] = {}
    eqns: list[Eqn] = []
    uses: dict[Var, int] = {}
    for eqn in jaxpr.eqns:
        ins = [a if type(a) is Literal else env.get(a, a) for a in eqn.invars]
        key = _cse_key(eqn, ins)
        if key is not None:
            prev = cse.get(key)
            if prev is not None:
                env.update(zip(eqn.outvars, prev))  # its readers read the first copy
                continue
            cse[key] = eqn.outvars
        eqn = _with_invars(eqn, ins)
        for a in ins:
            if type(a) is Var:
                uses[a] = uses.get(a, 0) + 1
        eqns.append(eqn)
    outvars = [a if type(a) is Literal else env.get(a, a) for a in jaxpr.outvars]
    for a in outvars:
        if type(a) is Var:
            uses[a] = uses.get(a, 0) + 1
    return Jaxpr(jaxpr.constvars, jaxpr.invars, outvars, eqns), uses


def _use_counts(jaxpr: Jaxpr) -> dict[Var, int]:
    """How often each variable is read (by equations and outputs): :func:`_cse_sweep`'s
    counts for a jaxpr it would leave as it is."""
    uses: dict[Var, int] = {}
    for eqn in jaxpr.eqns:
        for a in eqn.invars:
            if type(a) is Var:
                uses[a] = uses.get(a, 0) + 1
    for a in jaxpr.outvars:
        if type(a) is Var:
            uses[a] = uses.get(a, 0) + 1
    return uses


# ---------------------------------------------------------------------------------------------
# The sweep


def _sweep(
    jaxpr: Jaxpr, const_vals: dict[Var, Any], uses: dict[Var, int]
) -> tuple[Jaxpr, dict[Var, Any]]:
    """Folding, simplification and CSE in one forward pass; ``uses`` counts the reads of
    each variable of ``jaxpr`` (:func:`_cse_sweep`'s), and is updated as values merge."""
    facts = _Facts(dict(const_vals))
    facts.uses = uses
    producer = facts.producer
    env: dict[Var, Atom] = {}
    new_consts: dict[Var, Any] = {}
    cse: dict[Any, list[Var]] = {}
    eqns: list[Eqn] = []

    def forward(olds: list[Var], news: list[Atom]) -> None:
        # The readers of each old variable now read its replacement.
        for o, n in zip(olds, news):
            if type(n) is Literal and n.aval.weak_type and not o.aval.weak_type:
                n = Literal(n.val, o.aval)  # the result was strong-typed: keep it so
            env[o] = n
            if type(n) is Var:
                uses[n] = uses.get(n, 0) + uses.get(o, 0)

    known = facts.const_vals
    rules = simplification_rules
    exact = exact_scalar_primitives
    pending = list(reversed(jaxpr.eqns))
    while pending:
        eqn = pending.pop()
        # env maps to atoms that are already final, so one lookup resolves.
        ins = [a if type(a) is Literal else env.get(a, a) for a in eqn.invars]

        for a in ins:
            if type(a) is not Literal and a not in known:
                break
        else:  # all operands known: fold
            vals = _fold(eqn, ins, facts)
            if vals is not None:
                for v, val in zip(eqn.outvars, vals):
                    if v.aval.weak_type and not v.aval.shape and hasattr(val, "item"):
                        val = val.item()  # a weak value runs as a Python scalar (emit.py)
                    if is_array(val) or not isinstance(
                        val, bool | int | float | complex | numpy.generic
                    ):
                        nv = Var(v.aval)
                        if type(val) is numpy.ndarray:
                            # Made from frozen consts only: fixed at compile time too, so the
                            # later rewrites may look at it (a scaled identity basis).
                            val.flags.writeable = False
                        known[nv] = val
                        new_consts[nv] = val
                        env[v] = nv
                    else:
                        env[v] = Literal(val, v.aval)
                continue

        prim = eqn.prim
        if prim in exact and eqn.outvars[0].aval.shape:
            folded = _fold_broadcast_scalars(eqn, ins, facts)
            if folded is not None:
                pending.append(folded)
                continue

        rule = rules.get(prim)
        if rule is not None:
            res = rule(eqn, ins, facts)
            if res is not None:
                if isinstance(res, Eqn):
                    # Simplify the replacement again (a composed transpose may be the
                    # identity).
                    pending.append(res)
                elif isinstance(res, tuple):  # several equations, in order
                    pending.extend(reversed(res))
                else:
                    forward(eqn.outvars, res)
                continue

        key = _cse_key(eqn, ins)
        if key is not None:
            prev = cse.get(key)
            if prev is not None:
                forward(eqn.outvars, prev)
                continue
            cse[key] = eqn.outvars
        eqn = _with_invars(eqn, ins)
        for v in eqn.outvars:
            producer[v] = eqn
        eqns.append(eqn)

    outvars = [a if type(a) is Literal else env.get(a, a) for a in jaxpr.outvars]
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
        { lambda ; a:f64[2]. let b:f64[2] = sin a; c:f64[2] = add b b in (c,) }
    """
    if any(e.prim in inline_primitives for e in closed.jaxpr.eqns):
        jaxpr, consts = _inline(closed)
    else:  # nothing to inline: the sweeps below copy what they change anyway
        jaxpr, consts = closed.jaxpr, list(closed.consts)
    const_map = dict(zip(jaxpr.constvars, consts))
    # CSE alone first, so the rules that depend on how often a value is used see true counts;
    # a jaxpr known to hold no duplicates (staged with trace-time CSE) only needs counting.
    jaxpr, uses = (jaxpr, _use_counts(jaxpr)) if jaxpr.distinct else _cse_sweep(jaxpr)
    jaxpr, const_map = _sweep(jaxpr, const_map, uses)
    jaxpr, _ = dce_jaxpr(jaxpr)
    return ClosedJaxpr(jaxpr, [const_map[v] for v in jaxpr.constvars])
