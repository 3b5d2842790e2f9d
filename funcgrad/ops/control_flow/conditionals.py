"""``cond`` and ``switch``: one primitive, ``cond_p``, choosing a branch jaxpr by index.

``cond_p`` binds ``(index, *operands, branches=tuple[ClosedJaxpr])``; ``index`` is an int32
scalar already clamped to the branches. Every rule reuses the generic jaxpr transformations
of :mod:`funcgrad.interpreters.jaxpr_rules` branch by branch:

- JVP: each branch's JVP jaxpr, with the union of the branches' nonzero output tangents;
- partial evaluation (linearize): the known part of every branch runs now in a known ``cond``
  that also returns the residuals (merged by type across branches, zeros for the slots of the
  branches not taken), the unknown (tangent) part is staged as a ``cond`` on the same index;
- transpose: the cotangent ``cond`` of the transposed branches;
- batching: with an unbatched index, the batched branches; with a batched index, every
  branch runs on the whole batch and ``select_n`` picks per example (as JAX does).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from funcgrad import compile as _compile
from funcgrad._cache import weak_lru_cache
from funcgrad.avals import ShapedArray, float0, get_aval
from funcgrad.core import Primitive, Tracer, bind, eval_trace, set_current_trace, tracing_branch
from funcgrad.errors import MissingRuleError, ShapeError, user_source_info
from funcgrad.interpreters import batching
from funcgrad.interpreters import cost as _cost
from funcgrad.interpreters import jaxpr_rules as jr
from funcgrad.interpreters.batching import BatchTracer
from funcgrad.interpreters.jvp import Zero, jvp_flat, jvp_rules, tangent_aval
from funcgrad.interpreters.staging import (
    PartialEvalTrace,
    StagingTracer,
    partial_eval_rules,
    trace_to_jaxpr,
)
from funcgrad.interpreters.transpose import deftranspose, is_undefined
from funcgrad.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, dce_rules
from funcgrad.ops import elementwise as _ew
from funcgrad.ops import shape as _shape
from funcgrad.ops.control_flow._common import (
    as_output,
    compiled,
    merge_consts,
    runner,
    same_type,
    trace_fun,
    type_str,
    zeros_for,
)
from funcgrad.ops.control_flow._tape import TapeAval, ZeroTape
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = ["cond", "switch", "cond_p"]

cond_p = Primitive("cond", multiple_results=True, carries_jaxprs=True)

_I32 = numpy.dtype(numpy.int32)


# ---------------------------------------------------------------------------------------------
# Public wrappers


def _check_callable(what: str, name: str, f: Any) -> None:
    if not callable(f):
        raise TypeError(f"{what}: {name} must be callable, got {type(f).__name__}")


def _operand_avals(what: str, leaves: Sequence[Any]) -> list[ShapedArray]:
    avals = []
    for i, x in enumerate(leaves):
        try:
            avals.append(get_aval(x))
        except TypeError:
            raise TypeError(
                f"{what}: operands must be arrays, scalars or pytrees of them; operand leaf {i} "
                f"is a {type(x).__name__}"
            ) from None
    return avals


def _trace_branches(
    what: str, funs: Sequence[Callable[..., Any]], names: Sequence[str], operands: tuple
) -> tuple[list[Any], list[ClosedJaxpr], Any, list[Any]]:
    leaves, tree = tree_util.tree_flatten(operands)
    avals = _operand_avals(what, leaves)
    paths = [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(operands)[0]]
    traced = []
    point = object()  # this conditional, for trace-time bookkeeping per branch
    for i, (f, name) in enumerate(zip(funs, names)):
        origins = [f"operand{p} of {name}" for p in paths]
        with tracing_branch(point, i):
            traced.append(trace_fun(f, tree, avals, f"{what} {name}", origins))
    first = traced[0]
    for t, name in zip(traced[1:], names[1:]):
        if t.out_tree != first.out_tree:
            raise TypeError(
                # JAX's first sentence, which code written for JAX matches on
                f"{what} branch outputs must have the same pytree structure, but they differ. "
                f"{what} branches return different structures: {names[0]} gives "
                f"{first.out_tree} but {name} gives {t.out_tree}"
            )
        for p, a, b in zip(_paths(first.out_tree), first.out_avals, t.out_avals):
            if not same_type(a, b):
                where = f" (output{p})" if p else ""
                raise TypeError(
                    f"{what} branches must have equal output types but they differ. "
                    f"{what} branches return different types{where}: {names[0]} gives "
                    f"{type_str(a)}, {name} gives {type_str(b)}"
                )
    consts, jaxprs = merge_consts(traced)
    return consts, jaxprs, first.out_tree, leaves


def _paths(tree: Any) -> list[str]:
    n = tree.num_leaves
    return [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(
        tree_util.tree_unflatten(tree, list(range(n))))[0]]


def _scalar_aval(what: str, name: str, x: Any) -> ShapedArray:
    if isinstance(x, list | tuple | dict) or x is None:
        raise TypeError(f"{what}: {name} must be a scalar, got a {type(x).__name__}")
    try:
        a = get_aval(x)
    except TypeError:
        raise TypeError(f"{what}: {name} must be a scalar, got a {type(x).__name__}") from None
    if a.shape != ():
        raise TypeError(f"{what}: {name} must be a scalar, got an array of type {a.str_short()}")
    return a


_NO_OPERAND = object()


def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any],
         *operands: Any, operand: Any = _NO_OPERAND) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, staged as one op.

    ``pred`` is a scalar bool (a scalar integer or float is compared with 0, as JAX does:
    NaN is true). ``operand=x`` is JAX's
    older single-operand spelling of ``cond(pred, f, g, x)``. Both branches are traced
    and must return the same pytree structure, shapes and dtypes. Differentiable in the
    operands (and in values the branches close over), batchable: under ``vmap`` with a batched
    ``pred`` both branches run and the results are selected per example.

    Example:
        >>> import numpy as np
        >>> float(cond(np.float64(2.0) > 1.0, lambda x: x * 10.0, lambda x: x, 3.0))
        30.0
    """
    what = "cond"
    if operand is not _NO_OPERAND:
        if operands:
            raise TypeError("cond: pass the operands either positionally or as operand=, not "
                            "both (as in JAX)")
        operands = (operand,)
    _check_callable(what, "true_fun", true_fun)
    _check_callable(what, "false_fun", false_fun)
    a = _scalar_aval(what, "pred", pred)
    kind = a.dtype.kind
    if kind not in "biuf":  # JAX takes any real number, true where it is not 0
        raise TypeError(
            f"cond: pred must be a scalar boolean (or real number), got {a.str_short()}; "
            "compare explicitly, e.g. `x > 0`"
        )
    # Traced true_fun first so error texts read naturally; branch order is index order.
    consts, (jt, jf), out_tree, leaves = _trace_branches(
        what, (true_fun, false_fun), ("true_fun", "false_fun"), operands)
    if isinstance(pred, Tracer):
        index = _ew.convert_element_type(pred if kind == "b" else _ew.ne(pred, 0), _I32)
    else:
        index = numpy.int32(bool(pred))
    outs = bind(cond_p, index, *consts, *leaves, branches=(jf, jt))
    return tree_util.tree_unflatten(out_tree, outs)


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any,
           operand: Any = _NO_OPERAND) -> Any:
    """``branches[index](*operands)`` with ``index`` clamped to ``[0, len(branches) - 1]``.
    ``operand=x`` is JAX's older single-operand spelling of ``switch(index, branches, x)``.

    Example:
        >>> import numpy as np
        >>> fs = [lambda x: x + 1.0, lambda x: x * 2.0, lambda x: -x]
        >>> [float(switch(i, fs, 5.0)) for i in (0, 1, 2, 7)]
        [6.0, 10.0, -5.0, -5.0]
    """
    what = "switch"
    if operand is not _NO_OPERAND:
        if operands:
            raise TypeError("switch: pass the operands either positionally or as operand=, "
                            "not both")
        operands = (operand,)
    if not isinstance(branches, Sequence) or isinstance(branches, str):
        raise TypeError(f"switch: branches must be a sequence of functions, got "
                        f"{type(branches).__name__}")
    branches = list(branches)
    if not branches:
        raise ValueError("switch: needs at least one branch")
    for i, b in enumerate(branches):
        _check_callable(what, f"branches[{i}]", b)
    a = _scalar_aval(what, "index", index)
    if a.dtype.kind not in "iu":
        raise TypeError(f"switch: index must be a scalar integer, got {a.str_short()}")
    n = len(branches)
    names = [f"branch {i}" for i in range(n)]
    if n == 1:
        return branches[0](*operands)
    consts, jaxprs, out_tree, leaves = _trace_branches(what, branches, names, operands)
    if isinstance(index, Tracer):
        idx = _ew.convert_element_type(_ew.clamp(0, index, n - 1), _I32)
    else:
        idx = numpy.int32(min(max(int(index), 0), n - 1))
    outs = bind(cond_p, idx, *consts, *leaves, branches=tuple(jaxprs))
    return tree_util.tree_unflatten(out_tree, outs)


# ---------------------------------------------------------------------------------------------
# impl and shape rule


def _cond_impl(index: Any, *ops: Any, branches: tuple[ClosedJaxpr, ...]) -> list[Any]:
    i = min(max(int(index), 0), len(branches) - 1)
    b = branches[i]
    with set_current_trace(eval_trace):
        outs = runner(b)(*ops)
    return [as_output(o, a, (*ops, *b.consts)) for o, a in zip(outs, b.out_avals)]


def _join_avals(what: str, avals_per: Sequence[Sequence[ShapedArray]]) -> list[ShapedArray]:
    out = []
    for avs in zip(*avals_per):
        first = avs[0]
        for a in avs[1:]:
            if not same_type(first, a):
                raise TypeError(f"{what}: branch outputs differ: {first} vs {a}")
        weak = all(a.weak_type for a in avs)
        out.append(first if first.weak_type == weak else first.update(weak_type=weak))
    return out


def _cond_abstract(index: ShapedArray, *ops: ShapedArray,
                   branches: tuple[ClosedJaxpr, ...]) -> list[ShapedArray]:
    if index.shape != () or index.dtype.kind not in "iu":
        raise TypeError(f"cond: the branch index must be an integer scalar, got {index}")
    for k, b in enumerate(branches):
        want = b.in_avals
        if len(want) != len(ops):
            raise TypeError(
                f"cond: branch {k} takes {len(want)} operands, got {len(ops)}")
        for i, (a, w) in enumerate(zip(ops, want)):
            if not same_type(a, w):
                raise ShapeError(
                    f"cond: operand {i} is {a.str_short()} but branch {k} was traced for "
                    f"{w.str_short()}")
    return _join_avals("cond", [b.out_avals for b in branches])


cond_p.def_impl(_cond_impl)
cond_p.def_abstract_eval(_cond_abstract)


# ---------------------------------------------------------------------------------------------
# JVP


def _is_zero(t: Any) -> bool:
    return type(t) is Zero or getattr(t, "dtype", None) == float0


@weak_lru_cache(maxsize=256)
def _jvp_branches(
    branches: tuple[ClosedJaxpr, ...], nonzero: tuple[bool, ...]
) -> tuple[tuple[ClosedJaxpr, ...], tuple[bool, ...]]:
    out_nz = [False] * len(branches[0].out_avals)
    for b in branches:
        _, nz = jr.jvp_jaxpr(b, nonzero, False)
        out_nz = [x or y for x, y in zip(out_nz, nz)]
    new = tuple(jr.jvp_jaxpr(b, nonzero, tuple(out_nz))[0] for b in branches)
    return new, tuple(out_nz)


def _chosen(index: Any, branches: tuple[ClosedJaxpr, ...]) -> ClosedJaxpr | None:
    """The branch a concrete index picks (None when the index is traced)."""
    if isinstance(index, Tracer):
        return None
    return branches[min(max(int(index), 0), len(branches) - 1)]


def _select_branches(index: Any, branches: tuple[ClosedJaxpr, ...], *ops: Any) -> list[Any]:
    results = [jr.eval_closed(b, *_cut_untaken(index, i, ops)) for i, b in enumerate(branches)]
    out = []
    for k, (a, outs) in enumerate(zip(branches[0].out_avals, zip(*results))):
        # A tape slot of a differentiated cond is recorded by one branch only (see
        # _merge_residuals) and read only by that branch's tangent part.
        out.append(outs[_tape_owner(branches, k)] if type(a) is TapeAval
                   else _ew.select_n(index, *outs))
    return out


def _cut_untaken(index: Any, i: int, ops: Sequence[Any]) -> list[Any]:
    """The operands of branch ``i`` when every branch runs and a select picks (an index
    batched under ``vmap``): as JAX's batching rule (jax#1052), each differentiated float
    operand goes through ``stop_gradient`` where another branch is taken, so that a branch
    not taken there (``log(0)``, ``1 / 0``) gives its operands a zero tangent instead of
    ``0 * inf``. Unbatched operands too: their tangent is per example here."""
    taken = None
    out = []
    for x in ops:
        if not _differentiable(x):
            out.append(x)
            continue
        if taken is None:
            taken = _ew.eq(index, i)
        out.append(_ew.select_n(taken, _ew.stop_gradient(x), x))
    return out


def _cond_jvp(primals, tangents, *, branches):
    index, *ops = primals
    b = _chosen(index, branches)
    if b is not None:
        # The choice is made already (eager grad/jvp): differentiate just that branch, as a
        # Python `if` would.
        return jvp_flat(functools.partial(jr.eval_closed, b), ops, list(tangents[1:]))
    if type(index) is BatchTracer:
        # vmap would evaluate every branch and select per example anyway; doing it here keeps
        # what reverse mode records per branch (while_loop tapes) out of a batched select.
        return jvp_flat(functools.partial(_select_branches, index, branches), ops,
                        list(tangents[1:]))
    nonzero = tuple(not _is_zero(t) for t in tangents[1:])
    new, out_nz = _jvp_branches(branches, nonzero)
    nz_t = [t for t, nz in zip(tangents[1:], nonzero) if nz]
    outs = bind(cond_p, index, *ops, *nz_t, branches=new)
    n = len(branches[0].out_avals)
    it = iter(outs[n:])
    t_out = [next(it) if nz else Zero(tangent_aval(a))
             for a, nz in zip(branches[0].out_avals, out_nz)]
    return outs[:n], t_out


jvp_rules[cond_p] = _cond_jvp


# ---------------------------------------------------------------------------------------------
# Partial evaluation (linearize): known part now, unknown (tangent) part staged


def _merge_residuals(
    res_avals: Sequence[Sequence[ShapedArray]],
) -> tuple[list[ShapedArray], list[list[int]]]:
    """Slots shared by type across branches: (slot avals, per branch: slot of each residual)."""
    slots: list[ShapedArray] = []
    per_branch: list[list[int]] = []
    for avals in res_avals:
        taken: set[int] = set()
        mine = []
        for a in avals:
            # A tape slot belongs to one branch: a batched index then needs no tape select.
            s = None if type(a) is TapeAval else next(
                (i for i, b in enumerate(slots) if i not in taken and b == a), None)
            if s is None:
                s = len(slots)
                slots.append(a)
            taken.add(s)
            mine.append(s)
        per_branch.append(mine)
    return slots, per_branch


@weak_lru_cache(maxsize=256)
def _pe_branches(branches: tuple[ClosedJaxpr, ...], unknowns: tuple[bool, ...]):
    out_uk = [False] * len(branches[0].out_avals)
    for b in branches:
        _, _, uk, _ = jr.partial_eval_jaxpr(b, unknowns, False)
        out_uk = [x or y for x, y in zip(out_uk, uk)]
    out_uk_t = tuple(out_uk)
    splits = [jr.partial_eval_jaxpr(b, unknowns, out_uk_t) for b in branches]
    n_known = sum(1 for u in out_uk if not u)
    res_avals = [k.out_avals[n_known:] for k, _, _, _ in splits]
    slots, slot_of = _merge_residuals(res_avals)

    known_branches = []
    unknown_branches = []
    for (known, unknown, _, nres), mine in zip(splits, slot_of):
        def kf(*args: Any, known: ClosedJaxpr = known, mine: list[int] = mine) -> list[Any]:
            outs = jr.eval_closed(known, *args)
            fill = [zeros_for(a) for a in slots]
            for j, s in enumerate(mine):
                fill[s] = outs[n_known + j]
            return outs[:n_known] + fill

        known_branches.append(trace_to_jaxpr(kf, known.in_avals, eval_trace))
        uj = unknown.jaxpr
        own = dict(zip(mine, uj.invars[:nres]))
        slot_vars = [own[s] if s in own else Var(a) for s, a in enumerate(slots)]
        unknown_branches.append(ClosedJaxpr(
            Jaxpr(uj.constvars, slot_vars + list(uj.invars[nres:]), uj.outvars, uj.eqns),
            unknown.consts))
    return tuple(known_branches), tuple(unknown_branches), out_uk_t, len(slots)


def _cond_partial_eval(trace: PartialEvalTrace, args: Sequence[Any], params: dict) -> list[Any]:
    branches = params["branches"]
    unknowns = tuple(isinstance(x, StagingTracer) and x._trace is trace for x in args)
    if unknowns[0]:
        # The choice itself is unknown: nothing can run now.
        return trace.stage(cond_p, args, params, None)
    index, *ops = args
    known_b, unknown_b, out_uk, nslots = _pe_branches(branches, unknowns[1:])
    known_ops = [x for x, u in zip(ops, unknowns[1:]) if not u]
    with set_current_trace(trace.parent):  # type: ignore[arg-type]
        known_outs = bind(cond_p, index, *known_ops, branches=known_b)
    n_known = len(known_outs) - nslots
    residuals = known_outs[n_known:]
    unknown_outs: list[Any] = []
    if any(out_uk):
        uk_ops = [x for x, u in zip(ops, unknowns[1:]) if u]
        unknown_outs = trace.stage(cond_p, [index, *residuals, *uk_ops],
                                   dict(branches=unknown_b), None)
    k_it, u_it = iter(known_outs[:n_known]), iter(unknown_outs)
    return [next(u_it) if u else next(k_it) for u in out_uk]


partial_eval_rules[cond_p] = _cond_partial_eval


# ---------------------------------------------------------------------------------------------
# Transpose: branch by branch


def _cond_transpose(cts, index, *ops, branches):
    if is_undefined(index):
        raise TypeError("cond: cannot transpose with respect to the branch index (not linear)")
    linear = tuple(is_undefined(x) for x in ops)
    nonzero = tuple(c is not None and type(c) is not Zero for c in cts)
    new = tuple(jr.transpose_jaxpr(b, linear, nonzero) for b in branches)
    ins = [x for x, lin in zip(ops, linear) if not lin]
    ins += [c for c, nz in zip(cts, nonzero) if nz]
    outs = bind(cond_p, index, *ins, branches=new)
    it = iter(outs)
    return [None] + [next(it) if lin else None for lin in linear]


deftranspose(cond_p, _cond_transpose)


# ---------------------------------------------------------------------------------------------
# Batching


@weak_lru_cache(maxsize=256)
def _batch_branches(branches: tuple[ClosedJaxpr, ...], axis_size: int,
                    in_dims: tuple[int | None, ...], instantiate: tuple[bool, ...] | bool):
    out_avals = branches[0].out_avals
    n_out = len(out_avals)
    inst = (instantiate,) * n_out if isinstance(instantiate, bool) else instantiate
    is_tape = [type(a) is TapeAval for a in out_avals]
    out_b = list(inst)
    for b in branches:
        _, dims = jr.batch_jaxpr(b, axis_size, in_dims, inst)
        out_b = [x or d is not None for x, d in zip(out_b, dims)]
    # Tapes are never broadcast: a branch that fills a tape slot with zeros gets zeros of
    # the batched type instead.
    want = tuple(b and not t for b, t in zip(out_b, is_tape))
    new = []
    for b in branches:
        nb, dims = jr.batch_jaxpr(b, axis_size, in_dims, want)
        fix = [k for k in range(n_out) if is_tape[k] and out_b[k] and dims[k] is None]
        new.append(_batched_zero_tapes(nb, fix, axis_size) if fix else nb)
    return tuple(new), tuple(out_b)


def _batched_zero_tapes(closed: ClosedJaxpr, outs: list[int], axis_size: int) -> ClosedJaxpr:
    j = closed.jaxpr
    consts = dict(zip(j.constvars, closed.consts))
    constvars, vals = list(j.constvars), list(closed.consts)
    outvars = list(j.outvars)
    for k in outs:
        v = outvars[k]
        if not (v in consts and type(consts[v]) is ZeroTape):
            raise MissingRuleError(
                f"vmap of a lax.cond{user_source_info().at()}: one branch records a "
                "while_loop's residual tape per example and another one tape for the whole "
                "batch, which cannot be merged yet; differentiate inside the vmap "
                "(vmap(grad(f)) rather than vmap of an already linearized function), or give "
                "the loops a static trip count (lax.fori_loop with Python-int bounds, or "
                "lax.scan), which records no tape")
        elem = v.aval.elem
        new_v = Var(TapeAval(elem.update(shape=(axis_size,) + elem.shape)))
        constvars.append(new_v)
        vals.append(ZeroTape(new_v.aval))
        outvars[k] = new_v
    return ClosedJaxpr(Jaxpr(constvars, j.invars, outvars, j.eqns), vals)


def _to_front(x: Any, d: int | None) -> Any:
    return x if d is None or d == 0 else _shape.moveaxis(x, d, 0)


def _cond_batch(axis_size, vals, dims, *, branches):
    index, *ops = vals
    idim, *odims = dims
    b = _chosen(index, branches) if idim is None else None
    if b is not None:
        return batching.batch_flat(functools.partial(jr.eval_closed, b), ops, odims, axis_size)
    ops = [_to_front(x, d) for x, d in zip(ops, odims)]
    in_dims = tuple(None if d is None else 0 for d in odims)
    if idim is None:
        new, out_b = _batch_branches(branches, axis_size, in_dims, False)
        outs = bind(cond_p, index, *ops, branches=new)
        return outs, [0 if b else None for b in out_b]
    # A batched index: every branch runs on the whole batch, then a per-example select.
    index = _to_front(index, idim)
    # An unbatched float operand that a transformation outside the vmap differentiates is
    # broadcast, as JAX does, so that _masked_operands can cut its tangent in the examples
    # that take another branch (one that carries no derivative is left as is).
    spread = [d is None and _differentiable(x) for x, d in zip(ops, in_dims)]
    ops = [_shape.broadcast_in_dim(x, (axis_size, *get_aval(x).shape),
                                   tuple(range(1, get_aval(x).ndim + 1))) if b else x
           for x, b in zip(ops, spread)]
    in_dims = tuple(0 if b else d for d, b in zip(in_dims, spread))
    is_tape = tuple(type(a) is TapeAval for a in branches[0].out_avals)
    new, out_b = _batch_branches(branches, axis_size, in_dims, tuple(not t for t in is_tape))
    results = [jr.eval_closed(b, *_masked_operands(index, i, ops, in_dims))
               for i, b in enumerate(new)]
    outs, out_dims = [], []
    for k, a in enumerate(branches[0].out_avals):
        if is_tape[k]:
            # The tape residuals of a differentiated cond: one branch records each slot (the
            # others give zeros), and only that branch's tangent part reads it.
            owner = _tape_owner(branches, k)
            outs.append(results[owner][k])
            out_dims.append(0 if out_b[k] else None)
            continue
        shape = (axis_size,) + a.shape
        which = _shape.broadcast_in_dim(index, shape, (0,)) if a.shape else index
        outs.append(_ew.select_n(which, *[r[k] for r in results]))
        out_dims.append(0)
    return outs, out_dims


def _differentiable(x: Any) -> bool:
    """Whether an operand carries a derivative: a float array traced by a differentiating
    transformation (grad, jvp, ...), with a tangent that is not a symbolic zero. Others are
    not broadcast: a parameter every example shares (an unbatched weight matrix) would grow
    by the batch size for nothing."""
    if not (isinstance(x, Tracer) and x._trace.differentiates):
        return False
    a = get_aval(x)
    return (type(a) is ShapedArray and a.dtype.kind in "fc"
            and type(getattr(x, "tangent", None)) is not Zero)


def _masked_operands(index: Any, i: int, ops: Sequence[Any],
                     in_dims: Sequence[int | None]) -> list[Any]:
    """The operands branch ``i`` of a cond with a batched index runs on: as JAX's batching
    rule (jax#1052), a batched float operand goes through ``stop_gradient`` in the examples
    that take another branch, so that a branch not taken there (``sqrt`` of a negative)
    gives them a zero cotangent instead of ``0 * nan``."""
    taken = None
    out = []
    for x, d in zip(ops, in_dims):
        a = get_aval(x)
        if d is None or type(a) is not ShapedArray or a.dtype.kind not in "fc":
            out.append(x)
            continue
        if taken is None:
            taken = _ew.eq(index, i)
        mask = _shape.broadcast_in_dim(taken, a.shape, (0,)) if a.ndim > 1 else taken
        out.append(_ew.select_n(mask, _ew.stop_gradient(x), x))
    return out


def _tape_owner(branches: tuple[ClosedJaxpr, ...], k: int) -> int:
    owners = []
    for i, b in enumerate(branches):
        v = b.jaxpr.outvars[k]
        consts = dict(zip(b.jaxpr.constvars, b.consts))
        if not (v in consts and type(consts[v]) is ZeroTape):
            owners.append(i)
    if len(owners) > 1:
        raise MissingRuleError(
            f"vmap of a lax.cond with a batched predicate{user_source_info().at()}: several "
            "branches return a while_loop tape in the same output (only reverse-mode "
            "residuals, one branch each, are supported); differentiate inside the vmap "
            "(vmap(grad(f))), or give the loops a static trip count (lax.fori_loop with "
            "Python-int bounds, or lax.scan), which records no tape")
    return owners[0] if owners else 0


batching.batch_rules[cond_p] = _cond_batch


def _cond_cost(eqn: Eqn, jaxpr_cost: Any) -> Any:
    """The branch a constant index picks, else the costliest branch (one of them runs;
    which is known only at run time)."""
    branches = eqn.params["branches"]
    index = eqn.invars[0]
    if type(index) is Literal:
        return jaxpr_cost(branches[min(max(int(index.val), 0), len(branches) - 1)])
    return max((jaxpr_cost(b) for b in branches),
               key=lambda c: (c.flops, c.transcendentals, c.bytes_accessed))


_cost.cost_rules[cond_p] = _cond_cost


# ---------------------------------------------------------------------------------------------
# Dead code elimination: drop outputs no one reads, and operands no branch reads


def _cond_dce(used_outputs: list[bool], eqn: Eqn) -> tuple[list[bool], Eqn | None]:
    branches: tuple[ClosedJaxpr, ...] = eqn.params["branches"]
    if not any(used_outputs) and not any(jr.has_effects(b.jaxpr) for b in branches):
        return [False] * len(eqn.invars), None
    pruned = [jr.dce_closed_jaxpr(b, used_outputs, prune_invars=False) for b in branches]
    used_in = [any(u) for u in zip(*(p[1] for p in pruned))]
    new_branches = []
    for b, _ in pruned:
        j = b.jaxpr
        invars = [v for v, u in zip(j.invars, used_in) if u]
        new_branches.append(ClosedJaxpr(Jaxpr(j.constvars, invars, j.outvars, j.eqns),
                                        b.consts))
    new_eqn = eqn.replace(
        invars=[eqn.invars[0]] + [a for a, u in zip(eqn.invars[1:], used_in) if u],
        outvars=[v for v, u in zip(eqn.outvars, used_outputs) if u],
        params=dict(eqn.params, branches=tuple(new_branches)),
    )
    return [True] * len(new_eqn.invars), new_eqn


dce_rules[cond_p] = _cond_dce


# ---------------------------------------------------------------------------------------------
# jit: the compiled function calls the compiled branch


def _cond_emitted(fns: tuple[Callable[..., list], ...], out_avals: list[ShapedArray], xp: Any,
                  index: Any, *ops: Any) -> list[Any]:
    i = min(max(int(index), 0), len(fns) - 1)
    # A branch returning a Python scalar: a 0-d array of the jitted function's module.
    return [xp.asarray(o, dtype=a.dtype) if type(o) in (bool, int, float, complex) else o
            for o, a in zip(fns[i](xp, *ops), out_avals)]


def _emit_cond(ctx: Any, eqn: Eqn, args: list[str]) -> Any:
    exes = [compiled(b) for b in eqn.params["branches"]]
    if any(e is None for e in exes):
        return None  # the generic fallback calls the impl
    fns = tuple(e.fn for e in exes)  # type: ignore[union-attr]
    helper = ctx.bind(functools.partial(_cond_emitted, fns, [v.aval for v in eqn.outvars]),
                      "cond")
    return _compile.Emission(f"{helper}({', '.join(['xp', *args])})")


_compile.emitters[cond_p] = _emit_cond
