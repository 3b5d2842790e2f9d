"""The ``jit`` call primitive: a closed jaxpr run by its compiled executable.

``jit_p`` binds ``(*args, jaxpr=ClosedJaxpr, name=str, donated_invars=tuple[bool])``. Its
rules are the generic jaxpr transformations of :mod:`funcgrad.interpreters.jaxpr_rules`, so
``jit`` nests with every transformation in either order: the JVP, transpose, batch and DCE
rules are those every call primitive shares (:mod:`funcgrad.ops._call`: bind ``jit_p`` again on
the transformed jaxpr, named after the transformation, without donation); the partial-eval
rule (linearize) runs the known part now and stages only the tangent part. The impl runs the compiled straight-line Python
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
from funcgrad.avals import ShapedArray
from funcgrad.core import Primitive, bind, set_current_trace
from funcgrad.interpreters import jaxpr_rules
from funcgrad.interpreters.staging import PartialEvalTrace, StagingTracer, partial_eval_rules
from funcgrad.ir import ClosedJaxpr, pp_call_primitives, pp_param_rules
from funcgrad.ops import shape as _shape
from funcgrad.ops._call import WHOLE, arrays_out, check_call_avals, def_call_rules, forwarding_plan

__all__ = ["jit_p", "call_jaxpr"]

jit_p = Primitive("jit", multiple_results=True, carries_jaxprs=True)

# The batching boundary of jaxpr_rules needs these operations (it sits below ops).
jaxpr_rules.shape_helpers["moveaxis"] = _shape.moveaxis
jaxpr_rules.shape_helpers["broadcast_in_dim"] = _shape.broadcast_in_dim

# jit eqns inside a jaxpr being compiled are inlined, so passes see across the boundary.
_compile.inline_primitives[jit_p] = "jaxpr"


def _pp_jit_params(params: dict[str, Any]) -> list[tuple[str, Any]]:
    # JAX's pjit printing: the name first, then the program; no donation is left unsaid.
    rest = sorted((k, v) for k, v in params.items() if k not in ("name", "jaxpr"))
    rest = [(k, v) for k, v in rest if not (k == "donated_invars" and not any(v))]
    return [("name", params["name"]), ("jaxpr", params["jaxpr"]), *rest]


pp_param_rules[jit_p] = _pp_jit_params
pp_call_primitives.add(jit_p)  # its program prints with the caller's names, as JAX's


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


def _jit_impl(*args: Any, jaxpr: ClosedJaxpr, name: str, donated_invars: tuple[bool, ...]):
    return arrays_out(_compile.compile_jaxpr(jaxpr, donated_invars, name)(*args),
                      jaxpr.out_avals)


def _jit_abstract(*avals: ShapedArray, jaxpr: ClosedJaxpr, name: str, donated_invars):
    return check_call_avals(f"jit ({name})", avals, jaxpr)


jit_p.def_impl(_jit_impl)
jit_p.def_abstract_eval(_jit_abstract)

# -- JVP, transpose, batching, DCE: the call primitives' rules -----------------------------------


def _retarget(params: dict, jaxpr: ClosedJaxpr, what: str, n_in: int,
              kept: tuple[bool, ...] | None) -> dict:
    if kept is not None:  # DCE: the same call on fewer operands
        donated = tuple(d for d, k in zip(params["donated_invars"], kept) if k)
        return dict(params, jaxpr=jaxpr, donated_invars=donated)
    return dict(jaxpr=jaxpr, name=f"{what}({params['name']})", donated_invars=_no_donation(n_in))


def_call_rules(jit_p, _retarget)

# -- partial evaluation (linearize): known part now, unknown part staged -------------------------


def _jit_partial_eval(trace: PartialEvalTrace, args: Sequence[Any], params: dict) -> list[Any]:
    jaxpr: ClosedJaxpr = params["jaxpr"]
    name: str = params["name"]
    unknowns = tuple(isinstance(x, StagingTracer) and x._trace is trace for x in args)
    known, unknown, out_unk, _ = jaxpr_rules.partial_eval_jaxpr(jaxpr, unknowns, False)
    known_args = [x for x, u in zip(args, unknowns) if not u]
    # Residuals that are known inputs (or literals) pass straight through, not via the call:
    # the parent trace then sees the very values it gave (a tape keeps tracking them).
    to_call, plan = forwarding_plan(known)
    if to_call is WHOLE:
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
