"""What the call primitives share: primitives whose params carry a closed jaxpr they run
(``jit_p`` in :mod:`funcgrad.ops.jit`, ``remat_p`` in :mod:`funcgrad.ops.remat`).

Both are transformed the same way, by the generic jaxpr transformations of
:mod:`funcgrad.interpreters.jaxpr_rules`: the JVP rule binds the primitive again on the JVP
jaxpr, the transpose rule on the transposed jaxpr, the batch rule on the batched jaxpr, and the
DCE rule prunes the inner jaxpr. :func:`def_call_rules` registers those four rules for a call
primitive; the primitive says, through ``retarget``, how its params follow a new jaxpr (jit
renames the call and drops donation, remat keeps its policy). Their shape rule
(:func:`check_call_avals`), their results (:func:`arrays_out`) and the plan of which outputs of a
known part need no call at all (:func:`forwarding_plan`, memoised per jaxpr) are shared too.
Each keeps its own impl and partial-evaluation rule, which is where they differ.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from funcgrad.avals import ShapedArray, float0
from funcgrad.backend import xp_for
from funcgrad.core import Primitive, bind
from funcgrad.errors import ShapeError
from funcgrad.interpreters import batching, jaxpr_rules
from funcgrad.interpreters.jvp import Zero, jvp_rules, tangent_aval
from funcgrad.interpreters.transpose import deftranspose, is_undefined
from funcgrad.ir import ClosedJaxpr, Eqn, Literal, dce_rules

__all__ = [
    "check_call_avals",
    "arrays_out",
    "is_zero_tangent",
    "forwarding_plan",
    "WHOLE",
    "def_call_rules",
]

#: ``retarget(params, jaxpr, what, n_in, kept)``: the params of the call primitive bound on
#: ``jaxpr`` (made from the one in ``params`` by transformation ``what``: "jvp",
#: "transpose", "vmap" or "dce") with ``n_in`` operands; ``kept`` (DCE only) flags which of
#: the old operands remain.
Retarget = Callable[[dict, ClosedJaxpr, str, int, "tuple[bool, ...] | None"], dict]


def check_call_avals(label: str, avals: Sequence[ShapedArray],
                     jaxpr: ClosedJaxpr) -> list[ShapedArray]:
    """The shape rule of a call: operands must match the jaxpr's inputs; its outputs' avals.

    Example:
        >>> import numpy as np, funcgrad
        >>> closed = funcgrad.make_jaxpr(lambda x: x * 2.0)(np.ones(2))
        >>> check_call_avals("jit", closed.in_avals, closed)[0].str_short()
        'f64[2]'
    """
    want = jaxpr.in_avals
    if len(avals) != len(want):
        raise TypeError(f"{label}: the jaxpr takes {len(want)} arguments, got {len(avals)}")
    for i, (a, w) in enumerate(zip(avals, want)):
        if a.shape != w.shape or a.dtype != w.dtype:
            raise ShapeError(
                f"{label}: argument {i} is {a.str_short()} but the jaxpr was traced for "
                f"{w.str_short()}"
            )
    return list(jaxpr.out_avals)


_PY_SCALARS = (bool, int, float, complex)


def arrays_out(outs: list[Any], out_avals: Sequence[ShapedArray]) -> list[Any]:
    """``outs`` with Python scalars made arrays of their aval's dtype.

    A traced function may hand back a Python scalar (an input, a literal) as it is; primitive
    results are arrays, and eager consumers such as the eager VJP tape only track arrays.
    """
    for i, o in enumerate(outs):
        if type(o) in _PY_SCALARS:
            outs[i] = xp_for(o).asarray(o, dtype=out_avals[i].dtype)
    return outs


def is_zero_tangent(t: Any) -> bool:
    """A symbolic zero, or the float0 tangent of an integer operand."""
    return type(t) is Zero or getattr(t, "dtype", None) == float0


#: :func:`forwarding_plan`'s "call the jaxpr as it is"
WHOLE: Any = object()


@jaxpr_rules.weak_memo
def forwarding_plan(known: ClosedJaxpr) -> tuple[Any, tuple[tuple[str, Any], ...]]:
    """Which outputs of ``known`` need no call: ``(to_call, plan)``.

    The plan says, per output, ``("in", i)`` (it is input ``i``), ``("lit", value)`` (a
    literal) or ``("out", None)`` (computed). ``to_call`` computes only the computed ones: it is
    :data:`WHOLE` when that is ``known`` itself (the memo must not hold its own key), None when
    nothing needs computing (and ``known`` has no effects), else a pruned jaxpr.
    """
    j = known.jaxpr
    pos = {v: i for i, v in enumerate(j.invars)}
    plan: list[tuple[str, Any]] = []
    for a in j.outvars:
        if type(a) is Literal:
            plan.append(("lit", a.val))
        elif a in pos:
            plan.append(("in", pos[a]))
        else:
            plan.append(("out", None))
    used = tuple(k == "out" for k, _ in plan)
    if all(used):
        return WHOLE, tuple(plan)
    if not any(used) and not jaxpr_rules.has_effects(j):
        return None, tuple(plan)
    pruned, _ = jaxpr_rules.dce_closed_jaxpr(known, used, prune_invars=False)
    return pruned, tuple(plan)


def def_call_rules(prim: Primitive, retarget: Retarget) -> None:
    """Register the JVP, transpose, batch and DCE rules of the call primitive ``prim``."""

    def jvp(primals, tangents, **params):
        jaxpr: ClosedJaxpr = params["jaxpr"]
        nonzero = tuple(not is_zero_tangent(t) for t in tangents)
        jvp_closed, out_nz = jaxpr_rules.jvp_jaxpr(jaxpr, nonzero, False)
        nz_tangents = [t for t, nz in zip(tangents, nonzero) if nz]
        n_in = len(primals) + len(nz_tangents)
        outs = bind(prim, *primals, *nz_tangents,
                    **retarget(params, jvp_closed, "jvp", n_in, None))
        n = len(jaxpr.out_avals)
        t_it = iter(outs[n:])
        t_out = [
            next(t_it) if nz else Zero(tangent_aval(a)) for a, nz in zip(jaxpr.out_avals, out_nz)
        ]
        return outs[:n], t_out

    def transpose(cts, *args, **params):
        linear = tuple(is_undefined(a) for a in args)
        nonzero_cts = tuple(type(c) is not Zero and c is not None for c in cts)
        t_closed = jaxpr_rules.transpose_jaxpr(params["jaxpr"], linear, nonzero_cts)
        ins = [a for a, lin in zip(args, linear) if not lin]
        ins += [c for c, nz in zip(cts, nonzero_cts) if nz]
        outs = bind(prim, *ins, **retarget(params, t_closed, "transpose", len(ins), None))
        it = iter(outs)
        return [next(it) if lin else None for lin in linear]

    def batch(axis_size, vals, dims, **params):
        moveaxis = jaxpr_rules.shape_helpers["moveaxis"]
        # Batch axes go to the front at the boundary: one batched jaxpr per pattern of batched
        # inputs, whatever axes the caller used.
        vals = [v if d is None or d == 0 else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
        dims0 = tuple(None if d is None else 0 for d in dims)
        b_closed, out_dims = jaxpr_rules.batch_jaxpr(params["jaxpr"], axis_size, dims0, False)
        outs = bind(prim, *vals, **retarget(params, b_closed, "vmap", len(vals), None))
        return outs, list(out_dims)

    def dce(used_outputs: list[bool], eqn: Eqn) -> tuple[list[bool], Eqn | None]:
        closed: ClosedJaxpr = eqn.params["jaxpr"]
        if not any(used_outputs) and not jaxpr_rules.has_effects(closed.jaxpr):
            return [False] * len(eqn.invars), None
        new_closed, used_in = jaxpr_rules.dce_closed_jaxpr(closed, used_outputs,
                                                           prune_invars=True)
        invars = [a for a, u in zip(eqn.invars, used_in) if u]
        new_eqn = eqn.replace(
            invars=invars,
            outvars=[v for v, u in zip(eqn.outvars, used_outputs) if u],
            params=retarget(eqn.params, new_closed, "dce", len(invars), tuple(used_in)),
        )
        # dce_jaxpr pairs the flags with the new eqn's (already pruned) inputs.
        return [True] * len(new_eqn.invars), new_eqn

    jvp_rules[prim] = jvp
    deftranspose(prim, transpose)
    batching.batch_rules[prim] = batch
    dce_rules[prim] = dce
