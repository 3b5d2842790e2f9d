"""Staging: recording primitives into a jaxpr instead of running them.

``StagingTrace`` records every primitive it receives. ``PartialEvalTrace`` records only the
primitives that touch its own tracers and forwards the rest to its parent, which computes them
right away; linearize uses it so primal work runs eagerly while tangent work is staged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy

from funcgrad.avals import ShapedArray, get_aval
from funcgrad.core import (
    Primitive,
    Trace,
    Tracer,
    bind,
    set_current_trace,
    user_source_info,
)
from funcgrad.errors import FuncgradError
from funcgrad.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var

__all__ = ["StagingTrace", "PartialEvalTrace", "StagingTracer", "trace_to_jaxpr"]

_LITERAL_TYPES = (bool, int, float, complex)


class StagingTracer(Tracer):
    """A value being recorded: just its abstract value and, for errors, where it came from."""

    __slots__ = ("_aval", "origin", "source")

    def __init__(self, trace: StagingTrace, aval: ShapedArray, origin: str = "") -> None:
        self._trace = trace
        self._aval = aval
        self.origin = origin
        self.source = None

    @property
    def aval(self) -> ShapedArray:
        return self._aval

    def _origin(self) -> str:
        return f"({self.origin}) " if self.origin else ""

    def _creation_site(self) -> str:
        return f" It was created at {self.source}." if self.source else ""


class StagingTrace(Trace):
    """Records primitives into equations; see :func:`trace_to_jaxpr`."""

    __slots__ = (
        "eqns", "tracer_to_var", "const_vals", "const_vars", "_const_ids", "invars",
        "main_tracers",
    )

    def __init__(self, parent: Trace | None) -> None:
        super().__init__(parent)
        self.eqns: list[Eqn] = []
        self.tracer_to_var: dict[int, Var] = {}
        self.const_vals: list[Any] = []
        self.const_vars: list[Var] = []
        # id(constant) -> var, to share one constvar per constant; constants are kept alive
        # in const_vals so their ids are not reused.
        self._const_ids: dict[int, Var] = {}
        self.invars: list[Var] = []
        self.main_tracers: list[StagingTracer] = []  # keeps tracers alive so ids stay unique

    # -- building ------------------------------------------------------------------------

    def new_arg(self, aval: ShapedArray, origin: str = "") -> StagingTracer:
        t = StagingTracer(self, aval, origin)
        v = Var(aval)
        self.tracer_to_var[id(t)] = v
        self.main_tracers.append(t)
        self.invars.append(v)
        return t

    def _new_tracer(self, aval: ShapedArray) -> tuple[StagingTracer, Var]:
        t = StagingTracer(self, aval)
        v = Var(aval)
        self.tracer_to_var[id(t)] = v
        self.main_tracers.append(t)
        return t, v

    def getvar(self, x: Any) -> Var | Literal:
        if isinstance(x, StagingTracer) and x._trace is self:
            return self.tracer_to_var[id(x)]
        if type(x) in _LITERAL_TYPES or (isinstance(x, numpy.generic)):
            return Literal(x)
        v = self._const_ids.get(id(x))
        if v is None:
            v = Var(get_aval(x))
            self._const_ids[id(x)] = v
            self.const_vals.append(x)
            self.const_vars.append(v)
        return v

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict) -> list:
        invars = [self.getvar(x) for x in args]
        src = user_source_info()
        try:
            out_avals = prim.abstract_eval(*[v.aval for v in invars], **params)  # type: ignore[misc]
        except FuncgradError as e:
            if src.filename and str(src) not in str(e):
                e.args = (f"{e.args[0] if e.args else ''} (at {src})",) + tuple(e.args[1:])
            raise
        outs, outvars = [], []
        for a in out_avals:
            t, v = self._new_tracer(a)
            t.source = src
            outs.append(t)
            outvars.append(v)
        self.eqns.append(Eqn(prim, invars, outvars, params, src))
        return outs

    def to_jaxpr(self, outs: Sequence[Any]) -> ClosedJaxpr:
        """Close the recording: ``outs`` may be own tracers, outer values or scalars."""
        outvars = [self.getvar(x) for x in outs]
        jaxpr = Jaxpr(list(self.const_vars), list(self.invars), outvars, self.eqns)
        return ClosedJaxpr(jaxpr, list(self.const_vals))


class PartialEvalTrace(StagingTrace):
    """Stages only operations that involve its own tracers; the rest run on the parent now."""

    __slots__ = ()

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict) -> list:
        for x in args:
            if isinstance(x, StagingTracer) and x._trace is self:
                return StagingTrace.process_primitive(self, prim, args, params)
        with set_current_trace(self.parent):  # type: ignore[arg-type]
            return bind(prim, *args, **params)


def trace_to_jaxpr(
    f: Callable[..., Sequence[Any]],
    in_avals: Sequence[ShapedArray],
    parent: Trace,
    origins: Sequence[str] | None = None,
) -> ClosedJaxpr:
    """Trace flat ``f(*tracers) -> list`` to a closed jaxpr whose consts may be outer values.

    Constants that are tracers of ``parent`` (closures over an outer transformation) become
    constvars; the caller passes them back in when it binds the jaxpr.
    """
    trace = StagingTrace(parent)
    args = [
        trace.new_arg(a, origins[i] if origins else "") for i, a in enumerate(in_avals)
    ]
    with set_current_trace(trace):
        outs = f(*args)
    return trace.to_jaxpr(list(outs))
