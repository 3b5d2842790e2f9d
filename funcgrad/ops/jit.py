"""The ``jit`` call primitive: a closed jaxpr run by its compiled executable.

``jit_p`` binds ``(*args, jaxpr=ClosedJaxpr, name=str, donated_invars=tuple[bool])``. Its
rules are the generic jaxpr transformations of :mod:`funcgrad.interpreters.jaxpr_rules`, so
``jit`` nests with every transformation in either order: the JVP rule binds ``jit_p`` again on
the JVP jaxpr, the partial-eval rule (linearize) runs the known part now and stages only the
tangent part, the transpose rule binds the transposed jaxpr, the batch rule the batched one,
and the DCE rule prunes the inner jaxpr. The impl runs the compiled straight-line Python
(:mod:`funcgrad.compile`) cached on the jaxpr.

The user-facing ``funcgrad.jit`` (tracing, caching on argument types, static arguments) is in
:mod:`funcgrad.api_jit`.

Example:
    >>> import numpy as np, funcgrad
    >>> from funcgrad.ops.elementwise import sin
    >>> closed = funcgrad.make_jaxpr(sin)(np.zeros(2))
    >>> call_jaxpr(closed, np.zeros(2), name="sin")[0].tolist()
    [0.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from funcgrad import compile as _compile
from funcgrad.avals import ShapedArray, float0
from funcgrad.backend import xp_for
from funcgrad.core import Primitive, bind, set_current_trace
from funcgrad.errors import ShapeError
from funcgrad.interpreters import batching, jaxpr_rules
from funcgrad.interpreters.jvp import Zero, jvp_rules, tangent_aval
from funcgrad.interpreters.staging import PartialEvalTrace, StagingTracer, partial_eval_rules
from funcgrad.interpreters.transpose import deftranspose, is_undefined
from funcgrad.ir import ClosedJaxpr, Eqn, Literal, dce_rules
from funcgrad.ops import shape as _shape

__all__ = ["jit_p", "call_jaxpr"]

jit_p = Primitive("jit", multiple_results=True)

# The batching boundary of jaxpr_rules needs these operations (it sits below ops).
jaxpr_rules.shape_helpers["moveaxis"] = _shape.moveaxis
jaxpr_rules.shape_helpers["broadcast_in_dim"] = _shape.broadcast_in_dim

# jit eqns inside a jaxpr being compiled are inlined, so passes see across the boundary.
_compile.inline_primitives[jit_p] = "jaxpr"


def call_jaxpr(
    closed: ClosedJaxpr,
    *args: Any,
    name: str = "jit",
    donated_invars: Sequence[bool] | None = None,
) -> list[Any]:
    """Bind ``jit_p`` on ``closed`` (whose consts may include tracers: they become inputs).

    Example:
        >>> import numpy as np, funcgrad
        >>> closed = funcgrad.make_jaxpr(lambda x: x * 2.0)(np.ones(2))  # doctest: +SKIP
        >>> call_jaxpr(closed, np.ones(2))  # doctest: +SKIP
        [array([2., 2.])]
    """
    closed, tracer_consts = jaxpr_rules.hoist_tracer_consts(closed)
    n = len(tracer_consts) + len(args)
    if donated_invars is None:
        donated = (False,) * n
    else:
        donated = (False,) * len(tracer_consts) + tuple(bool(d) for d in donated_invars)
    return bind(jit_p, *tracer_consts, *args, jaxpr=closed, name=name, donated_invars=donated)


def _no_donation(n: int) -> tuple[bool, ...]:
    return (False,) * n


# -- impl and shape rule ------------------------------------------------------------------------


_PY_SCALARS = (bool, int, float, complex)


def _jit_impl(*args: Any, jaxpr: ClosedJaxpr, name: str, donated_invars: tuple[bool, ...]):
    outs = _compile.compile_jaxpr(jaxpr, donated_invars, name)(*args)
    # Primitive results are arrays (EvalTrace makes NumPy scalars arrays too); a traced
    # function may hand back a Python scalar (an input, a literal) as it is, which eager
    # consumers such as the reverse-mode tape would not recognise as a value.
    for i, o in enumerate(outs):
        if type(o) in _PY_SCALARS:
            outs[i] = xp_for(o).asarray(o, dtype=jaxpr.out_avals[i].dtype)
    return outs


def _jit_abstract(*avals: ShapedArray, jaxpr: ClosedJaxpr, name: str, donated_invars):
    want = jaxpr.in_avals
    if len(avals) != len(want):
        raise TypeError(f"jit ({name}): the jaxpr takes {len(want)} arguments, got {len(avals)}")
    for i, (a, w) in enumerate(zip(avals, want)):
        if a.shape != w.shape or a.dtype != w.dtype:
            raise ShapeError(
                f"jit ({name}): argument {i} is {a.str_short()} but the jaxpr was traced for "
                f"{w.str_short()}"
            )
    return list(jaxpr.out_avals)


jit_p.def_impl(_jit_impl)
jit_p.def_abstract_eval(_jit_abstract)

# -- JVP ----------------------------------------------------------------------------------------


def _is_zero(t: Any) -> bool:
    return type(t) is Zero or getattr(t, "dtype", None) == float0


def _jit_jvp(primals, tangents, *, jaxpr: ClosedJaxpr, name: str, donated_invars):
    nonzero = tuple(not _is_zero(t) for t in tangents)
    jvp_closed, out_nz = jaxpr_rules.jvp_jaxpr(jaxpr, nonzero, False)
    nz_tangents = [t for t, nz in zip(tangents, nonzero) if nz]
    n_in = len(primals) + len(nz_tangents)
    outs = bind(jit_p, *primals, *nz_tangents, jaxpr=jvp_closed, name=f"jvp({name})",
                donated_invars=_no_donation(n_in))
    n = len(jaxpr.out_avals)
    t_it = iter(outs[n:])
    t_out = [
        next(t_it) if nz else Zero(tangent_aval(a)) for a, nz in zip(jaxpr.out_avals, out_nz)
    ]
    return outs[:n], t_out


jvp_rules[jit_p] = _jit_jvp

# -- partial evaluation (linearize): known part now, unknown part staged -------------------------


_WHOLE: Any = object()  # "call the known jaxpr as it is"


@jaxpr_rules.weak_memo
def _forwarding(known: ClosedJaxpr) -> tuple[ClosedJaxpr | None, tuple[Any, ...]]:
    """Outputs of ``known`` that are just one of its inputs or a literal need no call: the
    plan says, per output, ``("in", i)``, ``("lit", value)`` or ``("out", None)``; the jaxpr
    returned computes only the ``"out"`` ones (None when there are none; ``known`` itself is
    never returned, as the memo must not hold its own key: the caller uses it then)."""
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
        return _WHOLE, tuple(plan)
    if not any(used) and not jaxpr_rules.has_effects(j):
        return None, tuple(plan)
    pruned, _ = jaxpr_rules.dce_closed_jaxpr(known, used, prune_invars=False)
    return pruned, tuple(plan)


def _jit_partial_eval(trace: PartialEvalTrace, args: Sequence[Any], params: dict) -> list[Any]:
    jaxpr: ClosedJaxpr = params["jaxpr"]
    name: str = params["name"]
    unknowns = tuple(isinstance(x, StagingTracer) and x._trace is trace for x in args)
    known, unknown, out_unk, _ = jaxpr_rules.partial_eval_jaxpr(jaxpr, unknowns, False)
    known_args = [x for x, u in zip(args, unknowns) if not u]
    # Residuals that are known inputs (or literals) pass straight through, not via the call:
    # the parent trace then sees the very values it gave (a tape keeps tracking them).
    to_call, plan = _forwarding(known)
    if to_call is _WHOLE:
        to_call = known
    called: list[Any] = []
    if to_call is not None:
        with set_current_trace(trace.parent):  # type: ignore[arg-type]
            called = bind(jit_p, *known_args, jaxpr=to_call, name=name,
                          donated_invars=_no_donation(len(known_args)))
    c_it = iter(called)
    known_outs = []
    for kind, v in plan:
        known_outs.append(known_args[v] if kind == "in" else v if kind == "lit" else next(c_it))
    n_known = sum(1 for u in out_unk if not u)
    residuals = known_outs[n_known:]
    unknown_args = [*residuals, *(x for x, u in zip(args, unknowns) if u)]
    unknown_outs = trace.stage(
        jit_p, unknown_args,
        dict(jaxpr=unknown, name=name, donated_invars=_no_donation(len(unknown_args))), None,
    )
    k_it, u_it = iter(known_outs[:n_known]), iter(unknown_outs)
    return [next(u_it) if u else next(k_it) for u in out_unk]


partial_eval_rules[jit_p] = _jit_partial_eval

# -- transpose ----------------------------------------------------------------------------------


def _jit_transpose(cts, *args, jaxpr: ClosedJaxpr, name: str, donated_invars):
    linear = tuple(is_undefined(a) for a in args)
    nonzero_cts = tuple(type(c) is not Zero and c is not None for c in cts)
    t_closed = jaxpr_rules.transpose_jaxpr(jaxpr, linear, nonzero_cts)
    ins = [a for a, lin in zip(args, linear) if not lin]
    ins += [c for c, nz in zip(cts, nonzero_cts) if nz]
    outs = bind(jit_p, *ins, jaxpr=t_closed, name=f"transpose({name})",
                donated_invars=_no_donation(len(ins)))
    it = iter(outs)
    return [next(it) if lin else None for lin in linear]


deftranspose(jit_p, _jit_transpose)

# -- batching -----------------------------------------------------------------------------------


def _jit_batch(axis_size, vals, dims, *, jaxpr: ClosedJaxpr, name: str, donated_invars):
    # Batch axes go to the front at the boundary: one batched jaxpr per (in_dims) then.
    vals = [v if d is None or d == 0 else _shape.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    dims0 = tuple(None if d is None else 0 for d in dims)
    b_closed, out_dims = jaxpr_rules.batch_jaxpr(jaxpr, axis_size, dims0, False)
    outs = bind(jit_p, *vals, jaxpr=b_closed, name=f"vmap({name})",
                donated_invars=_no_donation(len(vals)))
    return outs, list(out_dims)


batching.batch_rules[jit_p] = _jit_batch

# -- dead code elimination ----------------------------------------------------------------------


def _jit_dce(used_outputs: list[bool], eqn: Eqn) -> tuple[list[bool], Eqn | None]:
    closed: ClosedJaxpr = eqn.params["jaxpr"]
    if not any(used_outputs) and not jaxpr_rules.has_effects(closed.jaxpr):
        return [False] * len(eqn.invars), None
    new_closed, used_in = jaxpr_rules.dce_closed_jaxpr(closed, used_outputs, prune_invars=True)
    donated = eqn.params["donated_invars"]
    params = dict(
        eqn.params,
        jaxpr=new_closed,
        donated_invars=tuple(d for d, u in zip(donated, used_in) if u),
    )
    new_eqn = eqn.replace(
        invars=[a for a, u in zip(eqn.invars, used_in) if u],
        outvars=[v for v, u in zip(eqn.outvars, used_outputs) if u],
        params=params,
    )
    # dce_jaxpr pairs the flags with the new eqn's (already pruned) inputs.
    return [True] * len(new_eqn.invars), new_eqn


dce_rules[jit_p] = _jit_dce
