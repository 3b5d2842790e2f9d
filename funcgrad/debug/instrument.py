"""An instrumenting trace: sees every primitive, eagerly and inside ``jit``, at no cost otherwise.

Debugging tools (NaN checks, the profiler) make an :class:`InstrumentTrace` the current trace
for the duration of a ``with`` block. It hands each primitive to the trace that was current
before (so results are unchanged) and lets its *observer* look at the operation:
``observer.around(prim, args, params, eqn, run)`` runs the operation (``run()``) and may time
it or check its outputs. The default path never sees any of this: no flag is tested per
operation when no tool is active.

Call primitives that the compiler inlines (``jit``: the generic
:data:`funcgrad.compile.inline_primitives` table names the param holding the body) are run
equation by equation, unoptimised, with this trace current, so the observer sees each equation
of a jitted function with the source line it was traced from: the per-equation mode of the
executor. Reverse mode under an instrumenting trace goes through linearize + transpose (the
eager tape only runs at the very top level), so the backward pass is observed too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from funcgrad.compile import inline_primitives
from funcgrad.core import Primitive, Trace, Tracer, _trace_var, current_trace
from funcgrad.ir import ClosedJaxpr, Eqn, Literal

__all__ = ["InstrumentTrace", "Observer", "instrumented"]


class Observer(Protocol):
    def around(self, prim: Primitive, args: Sequence[Any], params: dict, eqn: Eqn | None,
               run: Callable[[], list]) -> list: ...


class InstrumentTrace(Trace):
    """Forwards every primitive to its parent trace, through ``observer.around``."""

    __slots__ = ("observer", "eqn")
    user_name = "an instrumented evaluation"

    def __init__(self, parent: Trace, observer: Observer) -> None:
        super().__init__(parent)
        self.observer = observer
        self.eqn: Eqn | None = None  # the jaxpr equation being run, when inside a jit

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict) -> list:
        key = inline_primitives.get(prim)
        eqn = self.eqn
        if key is not None and not any(isinstance(a, Tracer) for a in args):
            closed = params[key]

            def run() -> list:
                return self.run_jaxpr(closed, args)
        else:
            parent = self.parent

            def run() -> list:
                token = _trace_var.set(parent)  # type: ignore[arg-type]
                try:
                    return parent.process_primitive(prim, args, params)  # type: ignore[union-attr]
                finally:
                    _trace_var.reset(token)

        return self.observer.around(prim, args, params, eqn, run)

    def run_jaxpr(self, closed: ClosedJaxpr, args: Sequence[Any]) -> list:
        """Evaluate ``closed`` one equation at a time with this trace current."""
        jaxpr = closed.jaxpr
        env: dict[Any, Any] = dict(zip(jaxpr.constvars, closed.consts))
        env.update(zip(jaxpr.invars, args))
        outer = self.eqn
        token = _trace_var.set(self)
        try:
            for eqn in jaxpr.eqns:
                invals = [a.val if type(a) is Literal else env[a] for a in eqn.invars]
                self.eqn = eqn
                outs = self.process_primitive(eqn.prim, invals, eqn.params)
                env.update(zip(eqn.outvars, outs))
        finally:
            self.eqn = outer
            _trace_var.reset(token)
        return [a.val if type(a) is Literal else env[a] for a in jaxpr.outvars]


class instrumented:  # noqa: N801  (used as a context manager, like contextlib's helpers)
    """Make an :class:`InstrumentTrace` with ``observer`` current inside the block."""

    def __init__(self, observer: Observer) -> None:
        self.observer = observer
        self._tokens: list[Any] = []

    def __enter__(self) -> InstrumentTrace:
        trace = InstrumentTrace(current_trace(), self.observer)
        self._tokens.append(_trace_var.set(trace))
        return trace

    def __exit__(self, *exc: Any) -> None:
        _trace_var.reset(self._tokens.pop())
