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

import numpy

from funcgrad._gc import paused_gc
from funcgrad._stack_room import call_with_stack_room
from funcgrad.avals import ShapedArray, float0, get_aval
from funcgrad.compile.rules import roles
from funcgrad.core import Primitive, Trace, _trace_var, bind, bind1, tracer_types
from funcgrad.interpreters.jvp import (
    DualTracer,
    Zero,
    get_jvp_rule,
    jvp_rules,
    tangent_aval,
    zeros_like_aval,
)
from funcgrad.interpreters.staging import (
    PartialEvalTrace,
    StagingTracer,
    merges_repeats,
    process_nested,
    reserves_stack_room,
)
from funcgrad.ir import ClosedJaxpr, eval_jaxpr, sub_jaxprs, uses_any

__all__ = [
    "LinearizeTrace",
    "LinearizeTracer",
    "linearize_flat",
    "LinearizeResult",
    "ForwardTangents",
    "backward_pass_primitives",
]


class LinearizeTracer(DualTracer):
    """A primal value (of the parent trace) with a staged tangent."""

    __slots__ = ()


#: Debugging tools (anomaly detection) set this to ``observe(prim, new_eqns)``, called after a
#: primitive's JVP rule staged ``new_eqns`` (its tangent equations), so a failure in the
#: backward pass can be traced to the forward operation. Read once per linearization.
linearize_observer: ContextVar[Callable[[Primitive, list], None] | None] = ContextVar(
    "funcgrad_linearize_observer", default=None)


#: Primitives whose derivative must be taken in a backward pass: a linearization that computes
#: its tangents forward (:class:`ForwardTangents`) stages from such an operation on, so that a
#: backward pass transposes it. Filled by each primitive's block, for three reasons:
#: a backward rule the user wrote (``custom_vjp``: a rule that clips its cotangent has no
#: forward form); collectives (over a named axis, forward and reverse mode are different maps);
#: and operations that keep some of their operands' values and drop the rest (``select_n``,
#: ``max``, ``gather``, ``slice``...): forward, a NaN or infinite tangent of a dropped value
#: vanishes, where reverse mode (JAX's ``grad``, the eager tape) multiplies it by a zero
#: cotangent and gives NaN -- ``where(x > 0, sqrt(x), 0.)`` at -1 would differentiate to 0
#: under ``jit`` and to NaN eagerly.
backward_pass_primitives: set[Primitive] = set()


class ForwardTangents:
    """The state of a linearization that computes its tangents *forward*, as values on the
    parent trace, from a seed for one real scalar input (``grad`` of a scalar function, see
    :func:`linearize_flat`): no tangent program is recorded, unless an operation needs one.

    From an operation on :data:`backward_pass_primitives` (or holding one in a sub-jaxpr), or
    one whose tangent leaves the seed's precision (forward, ``float64`` through ``float32``
    rounds the tangent where reverse mode carries an exact cotangent), tangents are staged:
    a fresh scalar input ``epsilon`` is the linear program's only input, and each tangent
    value ``t`` computed so far enters it as ``t * epsilon``. The function's derivative is
    then the staged program's transpose at one (a map from one number to one number is its
    own transpose), plus nothing: once staging starts, every new tangent is staged.
    """

    __slots__ = ("dtype", "epsilon", "scaled", "by_dtype")

    def __init__(self, dtype: Any) -> None:
        self.dtype = dtype
        self.epsilon: Any = None  # the staged input, once staging has started
        self.scaled: dict[int, tuple[Any, Any]] = {}  # id(value) -> (value, value * epsilon)
        self.by_dtype: dict[Any, Any] = {}  # epsilon converted to other (complex) dtypes

    def start_staging(self, tangent_trace: PartialEvalTrace) -> None:
        self.epsilon = tangent_trace.new_arg(ShapedArray((), self.dtype))
        self.by_dtype[self.dtype] = self.epsilon

    def staged(self, t: Any, tangent_trace: PartialEvalTrace) -> Any:
        """``t`` as a tangent of the staged program (bound with ``tangent_trace`` current)."""
        if type(t) is Zero or (type(t) is StagingTracer and t._trace is tangent_trace):
            return t
        hit = self.scaled.get(id(t))
        if hit is not None:
            return hit[1]
        dtype = get_aval(t).dtype
        eps = self.by_dtype.get(dtype)
        if eps is None:
            eps = self.by_dtype[dtype] = bind1(roles["convert_element_type"], self.epsilon,
                                               new_dtype=dtype)
        out = bind1(roles["mul"], t, eps)
        self.scaled[id(t)] = (t, out)
        return out

    def keeps_precision(self, tangents: Sequence[Any]) -> bool:
        dtype = self.dtype
        for t in tangents:
            if type(t) is not Zero:
                d = (t.aval if type(t) in tracer_types else get_aval(t)).dtype
                if d is not dtype and d != dtype and d != float0 and (
                        d.kind != "c" or numpy.finfo(d).dtype != dtype):
                    return False
        return True


def _holds_backward_rule(params: dict) -> bool:
    return any(uses_any(sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub,
                        backward_pass_primitives) for sub in sub_jaxprs(params))


class LinearizeTrace(Trace):
    __slots__ = ("tangent_trace", "observe", "memo", "forward")
    user_name = "grad / vjp / linearize"
    differentiates = True

    def __init__(self, parent: Trace, tangent_trace: PartialEvalTrace,
                 forward: ForwardTangents | None = None) -> None:
        super().__init__(parent)
        self.tangent_trace = tangent_trace
        self.forward = forward
        self.observe = linearize_observer.get()
        # Nested in another differentiation or in jit (grad of grad, grad under jit), the
        # same operations come again and again: each is linearized once (trace_cse).
        self.memo: dict | None = {} if merges_repeats(parent) else None

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict) -> list:
        memo = self.memo
        if memo is None:
            return self._process(prim, args, params)
        # Nested: merged, simplified, attributed to the user's line (process_nested).
        return process_nested(memo, prim, args, params, self._process)

    def _process(self, prim: Primitive, args: Sequence[Any], params: dict) -> list:
        # One loop, not comprehensions: each is a call of its own in Python 3.11, and every
        # operation passes here once per nesting level.
        primals: list[Any] = []
        tangents: list[Any] = []
        live = constant = False
        for x in args:
            if type(x) is LinearizeTracer and x._trace is self:
                primals.append(x.primal)
                tangents.append(x.tangent)
                live = True
            else:
                primals.append(x)
                tangents.append(None)
                constant = True
        if not live:  # no operand of ours: a constant to this trace, computed on the parent
            token = _trace_var.set(self.parent)  # type: ignore[arg-type]
            try:
                return bind(prim, *args, **params)
            finally:
                _trace_var.reset(token)
        if constant:
            tangents = [Zero.from_primal(x) if t is None else t for x, t in zip(args, tangents)]
        observe = self.observe
        if observe is not None:
            n_eqns = len(self.tangent_trace.eqns)
        forward = self.forward
        tangent_trace = self.tangent_trace
        rule = jvp_rules.get(prim) or get_jvp_rule(prim)  # (get_jvp_rule: the missing rule's error)
        if forward is not None and forward.epsilon is None:
            if prim in backward_pass_primitives or (
                    prim.carries_jaxprs and _holds_backward_rule(params)):
                forward.start_staging(tangent_trace)
                p_outs = None
            else:
                # Tangents are values: the rule runs on the parent, as forward mode's do.
                token = _trace_var.set(self.parent)  # type: ignore[arg-type]
                try:
                    p_outs, t_outs = rule(primals, tangents, **params)
                finally:
                    _trace_var.reset(token)
                if not forward.keeps_precision(t_outs):
                    # Again, staged: its primal operations are pure, bound twice at most.
                    forward.start_staging(tangent_trace)
                    p_outs = None
        else:
            p_outs = None
        if p_outs is None:
            token = _trace_var.set(tangent_trace)
            try:
                if forward is not None:
                    tangents = [forward.staged(t, tangent_trace) for t in tangents]
                p_outs, t_outs = rule(primals, tangents, **params)
            finally:
                _trace_var.reset(token)
            if observe is not None:
                observe(prim, self.tangent_trace.eqns[n_eqns:])
        outs = []
        for p, t in zip(p_outs, t_outs):
            outs.append(p if type(t) is Zero else LinearizeTracer(self, p, t))
        return outs


class LinearizeResult:
    """What :func:`linearize_flat` returns.

    ``jaxpr`` maps the tangents of the inputs marked in ``linear_inputs`` to the output
    tangents; an output whose tangent is symbolically zero is listed in ``zero_outputs`` (the
    jaxpr still returns a placeholder for it so positions line up).
    """

    __slots__ = ("primals_out", "jaxpr", "in_tangent_avals", "out_tangent_avals", "zero_outputs",
                 "forward_tangents")

    def __init__(self, primals_out, jaxpr, in_tangent_avals, out_tangent_avals, zero_outputs,
                 forward_tangents=None):
        self.primals_out = primals_out
        self.jaxpr = jaxpr
        self.in_tangent_avals = in_tangent_avals
        self.out_tangent_avals = out_tangent_avals
        self.zero_outputs = zero_outputs
        #: with a seed (:class:`ForwardTangents`): per output, its tangent computed forward,
        #: or None where it is staged (in ``jaxpr``, whose one input is ``epsilon``; None when
        #: nothing was staged) or zero
        self.forward_tangents = forward_tangents


def linearize_flat(f: Callable[..., Sequence[Any]], primals: Sequence[Any],
                   seed: Any = None) -> LinearizeResult:
    """Linearize a flat function ``f(*arrays) -> list`` at ``primals``.

    ``seed``: for one real scalar input, its tangent (a one: ``grad``); tangents are then
    computed forward as values (:class:`ForwardTangents`), staged only where an operation
    needs a backward pass, and ``forward_tangents`` of the result holds those computed forward.
    """
    parent = _trace_var.get()
    tangent_trace = PartialEvalTrace(parent)
    forward = None if seed is None else ForwardTangents(get_aval(primals[0]).dtype)
    trace = LinearizeTrace(parent, tangent_trace, forward)
    if forward is None:
        in_tangent_avals = [tangent_aval(get_aval(p)) for p in primals]
        tangent_args = [tangent_trace.new_arg(a) for a in in_tangent_avals]
        ins = [
            LinearizeTracer(trace, p, t) if a.dtype.kind in "fc" else p
            for p, t, a in zip(primals, tangent_args, in_tangent_avals)
        ]
    else:
        ins = [LinearizeTracer(trace, primals[0], seed)]
    token = _trace_var.set(trace)
    try:
        if trace.memo is None:
            outs = f(*ins)
        else:  # nested: a derivative program being traced (funcgrad._gc)
            with paused_gc():
                if reserves_stack_room(parent):
                    outs = call_with_stack_room(f, *ins)
                else:
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
    forward_tangents = None
    if forward is not None:
        # Tangents computed forward leave the (staged) linear program as zeros.
        forward_tangents = [
            None if z or (type(t) is StagingTracer and t._trace is tangent_trace) else t
            for t, z in zip(tangents_out, zero_outputs)
        ]
        zero_outputs = [z or t is not None for z, t in zip(zero_outputs, forward_tangents)]
        in_tangent_avals = [] if forward.epsilon is None else [forward.epsilon.aval]
    if forward is not None and forward.epsilon is None:
        jaxpr = None  # nothing was staged: every tangent is in forward_tangents
    else:
        placeholders = [
            _zero_placeholder(a) if z else t
            for t, a, z in zip(tangents_out, out_tangent_avals, zero_outputs)
        ]
        jaxpr = tangent_trace.to_jaxpr(placeholders)
    tangent_trace.memo = {}
    if forward is not None:
        forward.scaled = {}
    return LinearizeResult(primals_out, jaxpr, in_tangent_avals, out_tangent_avals, zero_outputs,
                           forward_tangents)


def _zero_placeholder(aval: ShapedArray) -> Any:
    return zeros_like_aval(aval)


def eval_linear(result: LinearizeResult, tangents: Sequence[Any]) -> list[Any]:
    """Apply the linear map of ``result`` to input tangents (forward evaluation)."""
    closed: ClosedJaxpr = result.jaxpr
    outs = eval_jaxpr(closed.jaxpr, closed.consts, *tangents)
    return [Zero(a) if z else o for o, a, z in zip(outs, result.out_tangent_avals,
                                                      result.zero_outputs)]
