"""Compile-time evaluation: the trace behind :func:`funcgrad.ensure_compile_time_eval`.

Staging (``jit``, ``make_jaxpr``, the bodies of ``scan``/``cond``/``while_loop``) records every
operation, even one on constants only, so its value is unknown while tracing. Inside the
block, :class:`CompileTimeEvalTrace` is current: an operation none of whose operands is a
tracer runs right away on concrete arrays (its result is a constant of the program being
traced, usable in Python control flow); any other operation goes to the trace that was current
before, unchanged -- as JAX's ``eager_constant_folding``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from funcgrad.core import Primitive, Trace, Tracer, _trace_var, current_trace, eval_trace

__all__ = ["CompileTimeEvalTrace", "compile_time_eval"]


class CompileTimeEvalTrace(Trace):
    """Runs operations on constants eagerly; forwards the rest to its parent."""

    __slots__ = ()
    user_name = "ensure_compile_time_eval"

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict) -> list:
        target: Trace = eval_trace
        for a in args:
            if isinstance(a, Tracer):
                target = self.parent  # type: ignore[assignment]
                break
        token = _trace_var.set(target)
        try:
            return target.process_primitive(prim, args, params)
        finally:
            _trace_var.reset(token)


@contextlib.contextmanager
def compile_time_eval() -> Iterator[None]:
    """Make a :class:`CompileTimeEvalTrace` current inside the block (nothing to do when no
    transformation is running: every operation is eager already)."""
    parent = current_trace()
    if parent is eval_trace:
        yield
        return
    token = _trace_var.set(CompileTimeEvalTrace(parent))
    try:
        yield
    finally:
        _trace_var.reset(token)
