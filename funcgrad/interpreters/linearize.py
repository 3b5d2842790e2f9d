"""Linearize: primal work on the parent trace now, tangent work staged into a linear jaxpr.

Each primitive's JVP rule runs with a :class:`PartialEvalTrace` current: operations on primal
values alone are forwarded to the parent (so they are computed eagerly, and Python ``if`` on
values works under ``grad``), operations on tangents are recorded. The recorded jaxpr is
linear in the tangent inputs; dead code is removed before it is transposed for reverse mode.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

from funcgrad._gc import paused_gc
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.core import Primitive, Trace, _trace_var, bind
from funcgrad.interpreters.jvp import DualTracer, Zero, get_jvp_rule, tangent_aval, zeros_like_aval
from funcgrad.interpreters.staging import PartialEvalTrace, merges_repeats, simplify_operation
from funcgrad.interpreters.trace_cse import lookup, operation_key, remember
from funcgrad.ir import ClosedJaxpr, eval_jaxpr

__all__ = ["LinearizeTrace", "LinearizeTracer", "linearize_flat", "LinearizeResult"]


class LinearizeTracer(DualTracer):
    """A primal value (of the parent trace) with a staged tangent."""

    __slots__ = ()


#: Debugging tools (anomaly detection) set this to ``observe(prim, new_eqns)``, called after a
#: primitive's JVP rule staged ``new_eqns`` (its tangent equations), so a failure in the
#: backward pass can be traced to the forward operation. Read once per linearization.
linearize_observer: ContextVar[Callable[[Primitive, list], None] | None] = ContextVar(
    "funcgrad_linearize_observer", default=None)


class LinearizeTrace(Trace):
    __slots__ = ("tangent_trace", "observe", "memo")
    user_name = "grad / vjp / linearize"
    differentiates = True

    def __init__(self, parent: Trace, tangent_trace: PartialEvalTrace) -> None:
        super().__init__(parent)
        self.tangent_trace = tangent_trace
        self.observe = linearize_observer.get()
        # Nested in another differentiation or in jit (grad of grad, grad under jit), the
        # same operations come again and again: each is linearized once (trace_cse).
        self.memo: dict | None = {} if merges_repeats(parent) else None

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict) -> list:
        memo = self.memo
        if memo is not None:
            key = operation_key(prim, args, params)
            outs = lookup(memo, key)
            if outs is not None:
                return outs
            outs = simplify_operation(prim, args, params)
            if outs is None:
                outs = self._process(prim, args, params)
            remember(memo, key, args, outs)
            return outs
        return self._process(prim, args, params)

    def _process(self, prim: Primitive, args: Sequence[Any], params: dict) -> list:
        primals: list[Any] = []
        tangents: list[Any] = []
        live = False
        for x in args:
            if type(x) is LinearizeTracer and x._trace is self:
                primals.append(x.primal)
                tangents.append(x.tangent)
                live = True
            else:
                primals.append(x)
                tangents.append(Zero.from_primal(x))
        if not live:
            token = _trace_var.set(self.parent)  # type: ignore[arg-type]
            try:
                return bind(prim, *primals, **params)
            finally:
                _trace_var.reset(token)
        observe = self.observe
        if observe is not None:
            n_eqns = len(self.tangent_trace.eqns)
        token = _trace_var.set(self.tangent_trace)
        try:
            p_outs, t_outs = get_jvp_rule(prim)(primals, tangents, **params)
        finally:
            _trace_var.reset(token)
        if observe is not None:
            observe(prim, self.tangent_trace.eqns[n_eqns:])
        return [
            p if type(t) is Zero else LinearizeTracer(self, p, t) for p, t in zip(p_outs, t_outs)
        ]


class LinearizeResult:
    """What :func:`linearize_flat` returns.

    ``jaxpr`` maps the tangents of the inputs marked in ``linear_inputs`` to the output
    tangents; an output whose tangent is symbolically zero is listed in ``zero_outputs`` (the
    jaxpr still returns a placeholder for it so positions line up).
    """

    __slots__ = ("primals_out", "jaxpr", "in_tangent_avals", "out_tangent_avals", "zero_outputs")

    def __init__(self, primals_out, jaxpr, in_tangent_avals, out_tangent_avals, zero_outputs):
        self.primals_out = primals_out
        self.jaxpr = jaxpr
        self.in_tangent_avals = in_tangent_avals
        self.out_tangent_avals = out_tangent_avals
        self.zero_outputs = zero_outputs


def linearize_flat(f: Callable[..., Sequence[Any]], primals: Sequence[Any]) -> LinearizeResult:
    """Linearize a flat function ``f(*arrays) -> list`` at ``primals``."""
    parent = _trace_var.get()
    tangent_trace = PartialEvalTrace(parent)
    trace = LinearizeTrace(parent, tangent_trace)
    in_tangent_avals = [tangent_aval(get_aval(p)) for p in primals]
    tangent_args = [tangent_trace.new_arg(a) for a in in_tangent_avals]
    ins = [
        LinearizeTracer(trace, p, t) if a.dtype.kind in "fc" else p
        for p, t, a in zip(primals, tangent_args, in_tangent_avals)
    ]
    token = _trace_var.set(trace)
    try:
        if trace.memo is None:
            outs = f(*ins)
        else:  # nested: a derivative program being traced (funcgrad._gc)
            with paused_gc():
                outs = f(*ins)
    finally:
        _trace_var.reset(token)
        trace.memo = None  # it holds tracers that hold the trace: let them go now
    primals_out, tangents_out, zero_outputs = [], [], []
    for o in outs:
        if type(o) is LinearizeTracer and o._trace is trace:
            primals_out.append(o.primal)
            tangents_out.append(o.tangent)
            zero_outputs.append(type(o.tangent) is Zero)
        else:
            primals_out.append(o)
            tangents_out.append(Zero.from_primal(o))
            zero_outputs.append(True)
    out_tangent_avals = [tangent_aval(get_aval(p)) for p in primals_out]
    placeholders = [
        _zero_placeholder(a) if z else t
        for t, a, z in zip(tangents_out, out_tangent_avals, zero_outputs)
    ]
    jaxpr = tangent_trace.to_jaxpr(placeholders)
    tangent_trace.memo = {}
    tangent_trace.release()
    return LinearizeResult(primals_out, jaxpr, in_tangent_avals, out_tangent_avals, zero_outputs)


def _zero_placeholder(aval: ShapedArray) -> Any:
    return zeros_like_aval(aval)


def eval_linear(result: LinearizeResult, tangents: Sequence[Any]) -> list[Any]:
    """Apply the linear map of ``result`` to input tangents (forward evaluation)."""
    closed: ClosedJaxpr = result.jaxpr
    outs = eval_jaxpr(closed.jaxpr, closed.consts, *tangents)
    return [Zero(a) if z else o for o, a, z in zip(outs, result.out_tangent_avals,
                                                      result.zero_outputs)]
