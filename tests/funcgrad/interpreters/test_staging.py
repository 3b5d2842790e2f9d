"""The staging interpreters (funcgrad.interpreters.staging): recording jaxprs with user
source lines, constants and closures, partial evaluation, and errors that name the line."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.avals import ShapedArray
from funcgrad.core import eval_trace
from funcgrad.interpreters.staging import PartialEvalTrace, StagingTracer, trace_to_jaxpr

F64 = ShapedArray((2,), np.dtype("float64"))


def test_equations_record_the_users_line() -> None:
    closed = trace_to_jaxpr(lambda a: [fnp.sin(a) * 2.0], [F64], eval_trace)
    assert [e.prim.name for e in closed.eqns] == ["sin", "mul"]
    src = closed.eqns[0].source_info
    assert src.filename == __file__ and src.function == "<lambda>"


def test_closed_over_arrays_become_consts_by_reference() -> None:
    c = np.array([1.0, 2.0])
    closed = trace_to_jaxpr(lambda a: [a + c], [F64], eval_trace)
    assert len(closed.consts) == 1 and closed.consts[0] is c


def test_partial_eval_stages_only_its_own_tracers() -> None:
    trace = PartialEvalTrace(eval_trace)
    t = trace.new_arg(F64)
    known = fnp.sin(np.ones(2))  # computed now: no tracer of this trace involved
    assert not isinstance(known, StagingTracer)
    from funcgrad.core import set_current_trace

    with set_current_trace(trace):
        now = fnp.cos(np.zeros(2))
        later = t * 2.0
    assert type(now) is not StagingTracer and type(later) is StagingTracer
    assert [e.prim.name for e in trace.to_jaxpr([later]).eqns] == ["mul"]


def test_errors_raised_while_tracing_name_the_users_line() -> None:
    with pytest.raises(funcgrad.ShapeError, match=rf"at {__file__}:\d+ \(<lambda>\)"):
        trace_to_jaxpr(lambda a: [fnp.matmul(a, np.ones((3, 3)))], [F64], eval_trace)
    with pytest.raises(funcgrad.ConcretizationError, match=__file__):
        trace_to_jaxpr(lambda a: [a if a[0] > 0 else -a], [F64], eval_trace)


def test_leaked_staged_tracers_raise() -> None:
    leaked = []
    trace_to_jaxpr(lambda a: leaked.append(a) or [a], [F64], eval_trace)
    with pytest.raises(funcgrad.UnexpectedTracerError):
        fnp.sin(leaked[0])


def _lines(closed) -> set[tuple[str, int]]:
    return {(e.source_info.function, e.source_info.lineno) for e in closed.eqns}


def test_nested_derivatives_record_the_line_of_each_users_operation() -> None:
    # grad of grad under staging binds every operation through each level's rule, far
    # below the user's line: each staged equation still names the line it comes from.
    def f(x):
        y = fnp.sin(x)
        return fnp.tanh(y) * x

    first = f.__code__.co_firstlineno
    closed = funcgrad.make_jaxpr(funcgrad.grad(funcgrad.grad(f)))(0.3)
    assert _lines(closed) == {("f", first + 1), ("f", first + 2)}
    fwd = funcgrad.make_jaxpr(lambda x: funcgrad.jvp(funcgrad.grad(f), (x,), (1.0,))[1])(0.3)
    assert _lines(fwd) == {("f", first + 1), ("f", first + 2)}


def test_a_custom_rule_records_its_own_lines_under_nested_derivatives() -> None:
    # The rule is the user's code, run by the custom_jvp primitive's rule: its operations are
    # staged with its own lines, not the line that called the function.
    @funcgrad.custom_jvp
    def g(x):
        return fnp.sin(x)

    @g.defjvp
    def g_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        c = fnp.cos(x)
        return fnp.sin(x), 3.0 * (c * t)  # (c * t is c where t is grad's seed: merged away)

    def f(x):
        return g(x) * x

    closed = funcgrad.make_jaxpr(funcgrad.grad(funcgrad.grad(f)))(0.3)
    rule = g_jvp.__code__.co_firstlineno  # its decorator's line
    assert _lines(closed) == {("g_jvp", rule + 3), ("g_jvp", rule + 4),
                              ("f", f.__code__.co_firstlineno + 1)}


def _all_lines(closed) -> list[tuple[str, str, int]]:
    # (primitive, function, line) of every equation, inner jaxprs included
    out = []

    def walk(jaxpr):
        for e in jaxpr.eqns:
            si = e.source_info
            out.append((e.prim.name, si.function, si.lineno))
            for p in e.params.values():
                if hasattr(p, "jaxpr"):
                    walk(p.jaxpr)

    walk(closed.jaxpr)
    return out


def test_replayed_and_backward_equations_keep_the_users_lines() -> None:
    # A checkpointed body is traced once and evaluated again from its jaxpr (recomputed in
    # the backward pass); the backward pass replays the tangent equations: what both stage
    # names the line in the body it comes from, not the line that called grad (JAX keeps an
    # equation's source when it evaluates or transposes it too).
    def body(x):
        y = fnp.sin(x)
        return fnp.exp(y) * x

    def loss(x):
        return fnp.sum(funcgrad.checkpoint(body)(x))

    first = body.__code__.co_firstlineno
    for f in (loss, lambda x: fnp.sum(funcgrad.jit(body)(x)), lambda x: fnp.sum(body(x))):
        lines = _all_lines(funcgrad.make_jaxpr(funcgrad.grad(f))(np.ones(2)))
        ops = [(name, fn, n) for name, fn, n in lines if name in ("sin", "cos", "exp", "mul")]
        assert ops and set(ops) <= {("sin", "body", first + 1), ("cos", "body", first + 1),
                                    ("exp", "body", first + 2), ("mul", "body", first + 1),
                                    ("mul", "body", first + 2)}, lines
