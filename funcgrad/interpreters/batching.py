"""vmap: values carrying one extra batch axis, pushed through batch rules per primitive.

A batch rule is ``rule(axis_size, vals, dims, **params) -> (outs, out_dims)`` where each dim
is the position of the batch axis in that value, or ``not_mapped`` (None) for a value that is
the same for the whole batch. Dims may be any axis, not only 0: a rule must either handle the
dim it gets or move it (``funcgrad.ops._batching_util.moveaxis_to_front`` / ``bdim_at_front``,
which also materialize unbatched values). A rule's ``out_dims`` may be any valid axis or None.
Rules run with the parent trace current, so nested transformations see what they bind.

Values of other traces (closures over outer ``vmap``/``grad`` tracers, or plain arrays) are
constants for a ``BatchTrace``: they reach rules with dim None.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from funcgrad.avals import ShapedArray, get_aval
from funcgrad.core import Primitive, Trace, Tracer, _trace_var, bind, user_source_info
from funcgrad.errors import ConcretizationError, MissingRuleError

__all__ = [
    "not_mapped",
    "BatchTrace",
    "BatchTracer",
    "batch_rules",
    "batch_flat",
    "get_batch_rule",
    "shift_axis",
    "shift_axes",
]

#: the batch dim of a value that is not batched
not_mapped = None

BatchRule = Callable[..., tuple[list[Any], list[int | None]]]
#: primitive -> rule(axis_size, vals, dims, **params) -> (outs, out_dims)
batch_rules: dict[Primitive, BatchRule] = {}


def get_batch_rule(prim: Primitive) -> BatchRule:
    """The batch rule of ``prim``; a MissingRuleError naming it when there is none."""
    rule = batch_rules.get(prim)
    if rule is None:
        raise MissingRuleError(
            f"batching rule for '{prim.name}' is not implemented, so vmap cannot push a "
            f"batched value through it{user_source_info().at()} (register one in "
            f"funcgrad.interpreters.batching.batch_rules)"
        )
    return rule


# -- helpers for rules that need no operations (those that do live in ops/_batching_util) ---


def shift_axis(axis: int, bdim: int | None) -> int:
    """Where per-example axis ``axis`` (non-negative) sits in a value batched at ``bdim``.

    Example:
        >>> shift_axis(1, 0), shift_axis(0, 1), shift_axis(2, None)
        (2, 0, 2)
    """
    if bdim is None:
        return axis
    return axis + (axis >= bdim)


def shift_axes(axes: Sequence[int], bdim: int | None) -> tuple[int, ...]:
    """:func:`shift_axis` for each of ``axes`` (non-negative per-example axes).

    Example:
        >>> shift_axes((0, 2), 1)
        (0, 3)
    """
    if bdim is None:
        return tuple(axes)
    return tuple(a + (a >= bdim) for a in axes)


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

    def to_concrete_value(self) -> Any:
        # One Python value cannot stand for a whole batch, even when the batch is concrete.
        return None

    def _origin(self) -> str:
        return "(batched by vmap: each example may have its own value) "

    def _concrete(self, what: str) -> Any:
        raise ConcretizationError(
            f"{what} needs one concrete value, but got a batched array "
            f"({self.aval.str_short()}, batch of {self._trace.axis_size}) inside vmap"
            f"{user_source_info().at()}: each example of the batch may have its own value, so "
            "no single Python value (or branch) can stand for all of them. Use "
            "funcgrad.numpy.where(cond, x, y) to select per example (funcgrad.cond / "
            "funcgrad.while_loop for control flow), or make the Python-level decision outside "
            "the vmapped function."
        )


class BatchTrace(Trace):
    """Pushes values with a batch axis through each primitive's batch rule.

    ``axis_size`` is the batch size, ``axis_name`` the optional name vmap was given.
    """

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
        except Exception as e:
            if live and hasattr(e, "add_note"):
                # Shapes in the message are batched ones; say so, and which rule it was.
                e.add_note(
                    f"(raised while vmap batched '{prim.name}': batch of {self.axis_size} at "
                    f"operand axes {list(dims)}; shapes above include the batch axis)"
                )
            raise
        finally:
            _trace_var.reset(token)
        return [o if d is None else BatchTracer(self, o, d) for o, d in zip(outs, out_dims)]

    def unpack(self, x: Any) -> tuple[Any, int | None]:
        """(value, batch dim) of an output of this trace; dim None for anything else."""
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
    """Run flat ``f`` on values batched along ``dims``; returns outputs and their batch dims.

    ``dims[i]`` is the batch axis of ``vals[i]`` (negative counts from the end) or None; every
    batched value must have ``axis_size`` entries along it. Output dims are wherever the rules
    left the batch axis (None for outputs that do not depend on the batch).

    Example:
        >>> import numpy as np
        >>> from funcgrad.ops.reductions import reduce_sum
        >>> outs, out_dims = batch_flat(lambda x: [reduce_sum(x, (0,))], [np.ones((2, 3))], [1], 3)
        >>> outs[0].tolist(), out_dims
        ([2.0, 2.0, 2.0], [0])
    """
    trace = BatchTrace(_trace_var.get(), axis_size, axis_name)
    ins = []
    for v, d in zip(vals, dims):
        if d is None:
            ins.append(v)
            continue
        nd = len(get_aval(v).shape)
        if d < 0:
            d += nd
        if not 0 <= d < nd:
            raise ValueError(f"batch_flat: batch dim {d} is out of range for rank {nd}")
        ins.append(BatchTracer(trace, v, d))
    token = _trace_var.set(trace)
    try:
        outs = f(*ins)
    finally:
        _trace_var.reset(token)
    pairs = [trace.unpack(o) for o in outs]
    return [p for p, _ in pairs], [d for _, d in pairs]
