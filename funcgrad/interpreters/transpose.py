"""Reverse mode: transposing linear jaxprs, and ``vjp = linearize + transpose``.

Transpose rules exist only for linear primitives. A rule gets the output cotangent (a list for
multiple-result primitives) and the primitive's inputs, where the linear ones are
:class:`UndefinedPrimal`; it returns one cotangent per input (None or Zero where there is none).
Rules are written with differentiable primitives, so a VJP can itself be differentiated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

from funcgrad.avals import ShapedArray
from funcgrad.core import Primitive, bind
from funcgrad.errors import MissingRuleError, replayed_source
from funcgrad.interpreters.jvp import Zero, add_any_p, add_tangents
from funcgrad.interpreters.linearize import LinearizeResult, linearize_flat
from funcgrad.ir import Jaxpr, Literal, Var, dce_jaxpr

__all__ = [
    "UndefinedPrimal",
    "transpose_rules",
    "backward_pass",
    "vjp_flat",
    "is_undefined",
    "linear_primitives",
]


class UndefinedPrimal:
    """A linear input of a transpose rule: only its abstract value is known."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined(x: Any) -> bool:
    return type(x) is UndefinedPrimal


TransposeRule = Callable[..., Sequence[Any]]
#: primitive -> rule(ct, *args, **params) -> cotangent per arg
transpose_rules: dict[Primitive, TransposeRule] = {}
#: the primitives declared linear; the rule-coverage test checks each has a transpose rule.
linear_primitives: set[Primitive] = set()


def deftranspose(prim: Primitive, rule: TransposeRule) -> None:
    linear_primitives.add(prim)
    transpose_rules[prim] = rule


def _add_any_transpose(ct, x, y):
    return [ct if is_undefined(x) else None, ct if is_undefined(y) else None]


deftranspose(add_any_p, _add_any_transpose)


#: Debugging tools (anomaly detection) set this to a callback ``observe(eqn)`` that is called
#: before each equation's transpose rule runs. Read once per backward pass, so the default
#: path pays one check per equation only.
transpose_observer: ContextVar[Callable[[Any], None] | None] = ContextVar(
    "funcgrad_transpose_observer", default=None)


def _replaying(eqn: Any) -> Any:
    """Attribute what the backward pass binds for ``eqn`` to the user's line ``eqn`` came from
    (:data:`funcgrad.errors.replayed_source`, as :func:`funcgrad.ir.eval_jaxpr` does): the
    token to reset it with, or None where nothing changes (no line, or the same one)."""
    src = eqn.source_info
    if src is None or eqn.prim.carries_jaxprs or src is replayed_source.get():
        return None
    return replayed_source.set(src)


def backward_pass(
    jaxpr: Jaxpr, consts: Sequence[Any], args: Sequence[Any], cts_out: Sequence[Any]
) -> list[Any]:
    """Cotangents of ``args`` (the UndefinedPrimal ones) given output cotangents.

    Non-linear equations (those reading only known values) are evaluated first.
    """
    known: dict[Var, Any] = {}
    linear: set[Var] = set()
    for v, c in zip(jaxpr.constvars, consts):
        known[v] = c
    for v, a in zip(jaxpr.invars, args):
        if is_undefined(a):
            linear.add(v)
        else:
            known[v] = a

    def read_known(a: Any) -> Any:
        return a.val if type(a) is Literal else known[a]

    lin_eqns = []
    for eqn in jaxpr.eqns:
        for a in eqn.invars:
            if type(a) is Var and a in linear:
                lin_eqns.append(eqn)
                linear.update(eqn.outvars)
                break
        else:
            token = _replaying(eqn)
            try:
                outs = bind(eqn.prim, *[read_known(a) for a in eqn.invars], **eqn.params)
            finally:
                if token is not None:
                    replayed_source.reset(token)
            for v, o in zip(eqn.outvars, outs):
                known[v] = o

    ct_env: dict[Var, Any] = {}

    def write_ct(v: Any, ct: Any) -> None:
        if type(v) is not Var or v not in linear or ct is None or type(ct) is Zero:
            return
        prev = ct_env.get(v)
        ct_env[v] = ct if prev is None else add_tangents(prev, ct)

    for v, ct in zip(jaxpr.outvars, cts_out):
        write_ct(v, ct)

    observe = transpose_observer.get()
    for eqn in reversed(lin_eqns):
        if eqn.prim.multiple_results:
            cts = [ct_env.pop(v, None) for v in eqn.outvars]
            if all(c is None for c in cts):
                continue
            ct_arg: Any = [Zero(v.aval) if c is None else c for v, c in zip(eqn.outvars, cts)]
        else:
            ct_arg = ct_env.pop(eqn.outvars[0], None)
            if ct_arg is None:
                continue
        if observe is not None:
            observe(eqn)
        invals = [
            a.val if type(a) is Literal
            else UndefinedPrimal(a.aval) if a in linear else known[a]
            for a in eqn.invars
        ]
        rule = transpose_rules.get(eqn.prim)
        if rule is None:
            raise MissingRuleError(
                f"reverse-mode differentiation rule for '{eqn.prim.name}' is not implemented "
                "(no transpose rule registered for this primitive)"
            )
        token = _replaying(eqn)
        try:
            in_cts = rule(ct_arg, *invals, **eqn.params)
            for a, ct in zip(eqn.invars, in_cts):  # (sums of cotangents: this line's too)
                write_ct(a, ct)
        finally:
            if token is not None:
                replayed_source.reset(token)

    return [
        ct_env.get(v, Zero(v.aval)) if is_undefined(a) else None
        for v, a in zip(jaxpr.invars, args)
    ]


def transpose_linearized(result: LinearizeResult, cts_out: Sequence[Any]) -> list[Any]:
    """Cotangents of the linearized function's inputs for output cotangents ``cts_out``."""
    closed = result.jaxpr
    used_out = [not z and type(c) is not Zero for c, z in zip(cts_out, result.zero_outputs)]
    jaxpr, used_in = dce_jaxpr(closed.jaxpr, used_out)
    keep = set(jaxpr.constvars)
    consts = [c for v, c in zip(closed.jaxpr.constvars, closed.consts) if v in keep]
    cts = [c for c, u in zip(cts_out, used_out) if u]
    args = [UndefinedPrimal(v.aval) for v in jaxpr.invars]
    in_cts = backward_pass(jaxpr, consts, args, cts)
    return [
        ct if u else Zero(a)
        for ct, u, a in zip(in_cts, used_in, result.in_tangent_avals)
    ]


def forward_gradient(result: LinearizeResult, cts_out: Sequence[Any]) -> Any:
    """The cotangent of the one real scalar input of a linearization made with a seed
    (``linearize_flat(..., seed=...)``) for output cotangents ``cts_out`` that are a one for
    the first output and zero for the others (``grad``, its aux outputs): the first output's
    tangent computed forward, or the staged program transposed (its input ``epsilon``).
    The result has the output's shape (the caller reshapes it to the input's); None for a
    zero derivative."""
    t = result.forward_tangents[0]
    if t is not None:
        return t
    if result.zero_outputs[0] or not result.in_tangent_avals:
        return None  # the output does not depend on the input
    ct = transpose_linearized(result, cts_out)[0]
    return None if type(ct) is Zero else ct


def vjp_flat(
    f: Callable[..., Sequence[Any]], primals: Sequence[Any]
) -> tuple[list[Any], Callable[[Sequence[Any]], list[Any]], LinearizeResult]:
    """``(primals_out, f_vjp, linearized)``: reverse mode as linearize then transpose."""
    result = linearize_flat(f, primals)

    def f_vjp(cts_out: Sequence[Any]) -> list[Any]:
        return transpose_linearized(result, cts_out)

    return result.primals_out, f_vjp, result

