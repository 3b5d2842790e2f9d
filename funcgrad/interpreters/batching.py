"""vmap: values carrying one extra batch axis, pushed through batch rules per primitive.

A batch rule is ``rule(axis_size, vals, dims, **params) -> (outs, out_dims)`` where each dim
is the position of the batch axis in that value, or ``not_mapped`` (None) for a value that is
the same for the whole batch. Rules run with the parent trace current.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from funcgrad.avals import ShapedArray, get_aval
from funcgrad.core import Primitive, Trace, Tracer, _trace_var, bind
from funcgrad.errors import MissingRuleError

__all__ = [
    "not_mapped",
    "BatchTrace",
    "BatchTracer",
    "batch_rules",
    "batch_flat",
    "get_batch_rule",
]

#: the batch dim of a value that is not batched
not_mapped = None

BatchRule = Callable[..., tuple[list[Any], list[int | None]]]
#: primitive -> rule(axis_size, vals, dims, **params) -> (outs, out_dims)
batch_rules: dict[Primitive, BatchRule] = {}


def get_batch_rule(prim: Primitive) -> BatchRule:
    rule = batch_rules.get(prim)
    if rule is None:
        raise MissingRuleError(f"batching rule for '{prim.name}' is not implemented")
    return rule


class BatchTracer(Tracer):
    """A value of the parent trace with a batch axis at ``bdim``."""

    __slots__ = ("val", "bdim", "_aval")

    def __init__(self, trace: BatchTrace, val: Any, bdim: int) -> None:
        self._trace = trace
        self.val = val
        self.bdim = bdim
        self._aval: ShapedArray | None = None

    @property
    def aval(self) -> ShapedArray:
        a = self._aval
        if a is None:
            v = get_aval(self.val)
            shape = v.shape[: self.bdim] + v.shape[self.bdim + 1 :]
            a = self._aval = v.update(shape=shape)
        return a

    def _origin(self) -> str:
        return "(batched by vmap: each example may have its own value) "


class BatchTrace(Trace):
    __slots__ = ("axis_size", "axis_name")

    def __init__(self, parent: Trace, axis_size: int, axis_name: Any = None) -> None:
        super().__init__(parent)
        self.axis_size = axis_size
        self.axis_name = axis_name

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict) -> list:
        vals: list[Any] = []
        dims: list[int | None] = []
        live = False
        for x in args:
            if type(x) is BatchTracer and x._trace is self:
                vals.append(x.val)
                dims.append(x.bdim)
                live = True
            else:
                vals.append(x)
                dims.append(not_mapped)
        token = _trace_var.set(self.parent)  # type: ignore[arg-type]
        try:
            if not live:
                return bind(prim, *vals, **params)
            outs, out_dims = get_batch_rule(prim)(self.axis_size, vals, dims, **params)
        finally:
            _trace_var.reset(token)
        return [o if d is None else BatchTracer(self, o, d) for o, d in zip(outs, out_dims)]

    def unpack(self, x: Any) -> tuple[Any, int | None]:
        if type(x) is BatchTracer and x._trace is self:
            return x.val, x.bdim
        return x, not_mapped


def batch_flat(
    f: Callable[..., Sequence[Any]],
    vals: Sequence[Any],
    dims: Sequence[int | None],
    axis_size: int,
    axis_name: Any = None,
) -> tuple[list[Any], list[int | None]]:
    """Run flat ``f`` on values batched along ``dims``; returns outputs and their batch dims."""
    trace = BatchTrace(_trace_var.get(), axis_size, axis_name)
    ins = [v if d is None else BatchTracer(trace, v, d) for v, d in zip(vals, dims)]
    token = _trace_var.set(trace)
    try:
        outs = f(*ins)
    finally:
        _trace_var.reset(token)
    pairs = [trace.unpack(o) for o in outs]
    return [p for p, _ in pairs], [d for _, d in pairs]
