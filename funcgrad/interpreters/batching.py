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
from contextvars import ContextVar
from typing import Any

from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import get_default_device, xp_for, xp_for_device
from funcgrad.core import (
    Primitive,
    Trace,
    Tracer,
    _trace_var,
    bind,
    eval_trace,
    extend_axis_env,
    user_source_info,
)
from funcgrad.errors import ConcretizationError, MissingRuleError, batched_error
from funcgrad.interpreters.jvp import elementwise_primitives
from funcgrad.ir import ClosedJaxpr, sub_jaxprs

__all__ = [
    "not_mapped",
    "BatchTrace",
    "BatchTracer",
    "batch_rules",
    "named_axis_batch_rules",
    "summed_batch_rules",
    "current_axis_name",
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


#: primitive -> rule(**params) -> params or None: the parameters with which the primitive,
#: applied to its operands each stacked along a new leading axis, gives the SUM over that axis
#: of its per-entry results in one operation (a contraction contracts the new axis too), or
#: None where it cannot. A loop's transpose uses it to turn a cotangent accumulated step by
#: step into one operation after the loop (see scans.py).
summed_batch_rules: dict[Primitive, Callable[..., dict[str, Any] | None]] = {}


#: collective primitive -> rule(axis_size, vals, dims, **params) -> (outs, out_dims), run by the
#: BatchTrace whose ``axis_name`` is among the primitive's ``axis_name`` param (the collective
#: reduces over *this* batch axis); for other traces the ordinary ``batch_rules`` entry runs.
named_axis_batch_rules: dict[Primitive, BatchRule] = {}

# The axis name of the BatchTrace whose rule is running: batch rules of higher-order
# primitives (jit, cond, scan, custom_vjp) batch inner programs over the same named axis.
_rule_axis_name: ContextVar[Any] = ContextVar("funcgrad_rule_axis_name", default=None)
# The device of the batched values of the BatchTrace whose named-axis rule is running: what
# a collective makes from nothing (axis_index's iota) goes there, the computation's device.
_rule_device: ContextVar[str | None] = ContextVar("funcgrad_rule_device", default=None)
_INHERIT: Any = object()
#: While set (funcgrad.random's key-reuse checker sets it while it checks), every batched call
#: reports ``check(vals, ins)``: the values it batched and the tracers that stood for them,
#: so that keys the function consumed count as consumed by the call (as JAX's checker).
batch_call_check: ContextVar[Callable[[list, list], None] | None] = ContextVar(
    "funcgrad_batch_call_check", default=None)


def current_device() -> str | None:
    """The device of the values the running named-axis batch rule's vmap batches (None:
    unknown, e.g. no batched operand)."""
    return _rule_device.get()


def current_axis_name() -> Any:
    """The axis name of the BatchTrace whose batch rule is running (None: unnamed)."""
    return _rule_axis_name.get()


def _names(axis_name: Any) -> tuple:
    return axis_name if isinstance(axis_name, tuple) else (axis_name,)


def _uses_axis(params: dict, name: Any) -> bool:
    """Whether a jaxpr among ``params`` (a loop body, a branch, a called program, at any
    depth) applies a collective over the named axis ``name``."""
    for sub in sub_jaxprs(params):
        for eqn in (sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub).eqns:
            if eqn.prim in named_axis_batch_rules and name in _names(eqn.params["axis_name"]):
                return True
            if eqn.prim.carries_jaxprs and _uses_axis(eqn.params, name):
                return True
    return False


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
    """A value of the parent trace with a batch axis at ``bdim``.

    ``struct`` (a :class:`OneHotStructure`, rarely set) says the value is a row block of a
    scaled identity; its dense ``val`` is then made only when a rule that does not know the
    structure needs it.
    """

    __slots__ = ("_val", "bdim", "_aval", "struct")

    def __init__(
        self,
        trace: BatchTrace,
        val: Any,
        bdim: int,
        struct: OneHotStructure | None = None,
    ) -> None:
        self._trace = trace
        self._val = val
        self.bdim = bdim
        self.struct = struct
        self._aval: ShapedArray | None = None if struct is None else struct.aval

    @property
    def val(self) -> Any:
        v = self._val
        if v is None:
            v = self._val = self.struct.materialize(self.bdim)  # type: ignore[union-attr]
        return v

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

    def _error_class(self, error: type[ConcretizationError]) -> type[ConcretizationError]:
        # Also a RuntimeError, as torch.func.vmap raises for data-dependent Python control flow
        return batched_error(error)

    def _concrete(self, what: str, error: type[ConcretizationError] = ConcretizationError
                  ) -> Any:
        raise batched_error(error)(
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

    __slots__ = ("axis_size", "axis_name", "device")
    user_name = "vmap"

    def __init__(self, parent: Trace, axis_size: int, axis_name: Any = None,
                 device: str | None = None) -> None:
        super().__init__(parent)
        self.axis_size = axis_size
        self.axis_name = axis_name
        self.device = device  # where the batched values live (None: unknown)

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict) -> list:
        vals: list[Any] = []
        dims: list[int | None] = []
        live = False
        structured = False
        for x in args:
            if type(x) is BatchTracer and x._trace is self:
                if x.struct is not None:
                    structured = True
                vals.append(x._val)
                dims.append(x.bdim)
                live = True
            else:
                vals.append(x)
                dims.append(not_mapped)
        named = named_axis_batch_rules.get(prim)
        if named is not None and self.axis_name is not None \
                and self.axis_name in _names(params["axis_name"]):
            # A collective over this trace's axis: it runs even on unbatched operands (psum
            # of a constant is axis_size times it).
            token = _trace_var.set(self.parent)  # type: ignore[arg-type]
            name_token = _rule_axis_name.set(self.axis_name)
            device_token = _rule_device.set(self.device)
            try:
                outs, out_dims = named(self.axis_size, vals, dims, **params)
            finally:
                _rule_device.reset(device_token)
                _rule_axis_name.reset(name_token)
                _trace_var.reset(token)
            return [o if d is None else BatchTracer(self, o, d) for o, d in zip(outs, out_dims)]
        token = _trace_var.set(self.parent)  # type: ignore[arg-type]
        name_token = _rule_axis_name.set(self.axis_name)
        device_token = _rule_device.set(self.device)  # inner programs' batches inherit it
        try:
            if not live and not (prim.carries_jaxprs and self.axis_name is not None
                                 and _uses_axis(params, self.axis_name)):
                return bind(prim, *vals, **params)
            if structured:
                res = _process_structured(self, prim, args, vals, dims, params)
                if res is not None:
                    return res
                vals = [x.val if type(x) is BatchTracer and x._trace is self else v
                        for x, v in zip(args, vals)]
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
            _rule_device.reset(device_token)
            _rule_axis_name.reset(name_token)
            _trace_var.reset(token)
        return [o if d is None else BatchTracer(self, o, d) for o, d in zip(outs, out_dims)]

    def unpack(self, x: Any) -> tuple[Any, int | None]:
        """(value, batch dim) of an output of this trace; dim None for anything else."""
        if type(x) is BatchTracer and x._trace is self:
            return x.val, x.bdim
        return x, not_mapped


# -- structured batches: the rows of an identity, for Jacobians -------------------------------


class OneHotStructure:
    """A batch of ``N = prod(aval.shape)`` examples where example ``i`` is zero except at flat
    position ``i``, which holds ``scale.flat[i]`` (1 when ``scale`` is None).

    ``jacfwd``/``jacrev``/``hessian`` push such a basis through the function; rules that know
    the structure skip the multiplications by the identity (``A @ e_i`` is a column of ``A``),
    the rest see the dense value. Results agree with the dense computation exactly: rules
    only use the structure where the dense result would be the same numbers.
    """

    __slots__ = ("aval", "scale")

    def __init__(self, aval: ShapedArray, scale: Any = None) -> None:
        self.aval = aval  # per-example
        self.scale = scale

    def materialize(self, bdim: int) -> Any:
        a = self.aval
        n = a.size
        xp = xp_for_device(a.device or get_default_device())
        m = xp.zeros((n, n), dtype=a.dtype)
        diag = m.reshape(-1)[:: n + 1]
        diag[...] = 1 if self.scale is None else self.scale.reshape(-1)
        m = m.reshape((n,) + a.shape)
        return m if bdim == 0 else xp.moveaxis(m, 0, bdim)

    def __repr__(self) -> str:
        return f"OneHotStructure({self.aval.str_short()}{'' if self.scale is None else ', scaled'})"

    def scale_or_ones(self) -> Any:
        if self.scale is not None:
            return self.scale
        a = self.aval
        return xp_for_device(a.device or get_default_device()).ones(a.shape, dtype=a.dtype)


#: primitive -> rule(axis_size, vals, dims, structs, **params) -> (outs, out_dims, out_structs)
#: or None to decline (the dense rule then runs). ``structs[i]`` is the OneHotStructure of
#: operand i or None; ``vals[i]`` is None for a structured operand whose dense value was not
#: made yet. An output with a structure may have a None value.
structured_batch_rules: dict[Primitive, Callable[..., Any]] = {}

# Below this batch size the dense identity is cheaper than the bookkeeping.
_MIN_STRUCTURED_SIZE = 16


def one_hot_basis(aval: ShapedArray, axis_size: int) -> OneHotStructure | None:
    """The structure of the rows of the identity, a batch of ``axis_size`` examples of
    ``aval``, when it is worth carrying (float, big enough), else None.

    ``jacfwd``/``jacrev``/``hessian`` say so explicitly when they map over such a basis
    (:func:`batch_flat`'s ``structs``); vmap never looks at values to find one.

    Example:
        >>> import numpy as np
        >>> from funcgrad.avals import ShapedArray
        >>> one_hot_basis(ShapedArray((20,), np.dtype("float64")), 20)
        OneHotStructure(f64[20])
        >>> one_hot_basis(ShapedArray((4,), np.dtype("float64")), 4) is None  # dense is cheaper
        True
    """
    if (axis_size < _MIN_STRUCTURED_SIZE or aval.dtype.kind not in "fc"
            or aval.size != axis_size):
        return None
    return OneHotStructure(aval.strip_weak())


def _process_structured(
    trace: BatchTrace, prim: Primitive, args: Sequence[Any], vals: list[Any],
    dims: list[int | None], params: dict,
) -> list[Any] | None:
    structs = [x.struct if type(x) is BatchTracer and x._trace is trace else None for x in args]
    rule = structured_batch_rules.get(prim)
    if rule is not None:
        res = rule(trace.axis_size, vals, dims, structs, **params)
    elif prim in elementwise_primitives and not prim.multiple_results:
        res = _elementwise_structured(prim, vals, dims, structs, params)
    else:
        return None
    if res is None:
        return None
    outs, out_dims, out_structs = res
    return [
        o if d is None else BatchTracer(trace, o, d, s)
        for o, d, s in zip(outs, out_dims, out_structs)
    ]


def _elementwise_structured(
    prim: Primitive, vals: list[Any], dims: list[int | None],
    structs: list[OneHotStructure | None], params: dict,
) -> tuple[list[Any], list[int | None], list[Any]] | None:
    """An elementwise op with one structured operand (the rest unbatched and concrete) keeps
    the structure when it maps 0 to 0 at every position given these operands (checked, so
    NaN and inf keep their dense meaning): example i is then zero but at position i, where
    it is the op applied to the scale."""
    k = -1
    for i, (v, d, st) in enumerate(zip(vals, dims, structs)):
        if st is not None and k < 0:
            k = i
        elif d is not None or isinstance(v, Tracer):
            return None
    st = structs[k]
    a = st.aval  # type: ignore[union-attr]
    args = list(vals)
    # All operands are concrete: compute on the evaluation trace, whatever is current.
    args[k] = st.scale_or_ones()  # type: ignore[union-attr]
    (s_out,) = eval_trace.process_primitive(prim, args, params)
    oa = get_aval(s_out)
    if oa.size != a.size:  # equal sizes: at most size-1 axes were added, flat order kept
        return None
    xp = xp_for(s_out)
    args[k] = xp.zeros(a.shape, dtype=a.dtype)
    (z,) = eval_trace.process_primitive(prim, args, params)
    if xp.count_nonzero(z):
        return None
    out = OneHotStructure(ShapedArray(oa.shape, oa.dtype, False, oa.device), s_out)
    return [None], [dims[k]], [out]


def batch_flat(
    f: Callable[..., Sequence[Any]],
    vals: Sequence[Any],
    dims: Sequence[int | None],
    axis_size: int,
    axis_name: Any = _INHERIT,
    structs: Sequence[OneHotStructure | None] | None = None,
) -> tuple[list[Any], list[int | None]]:
    """Run flat ``f`` on values batched along ``dims``; returns outputs and their batch dims.

    ``axis_name`` names the batch axis for collectives; left out, a batch rule's inner
    program (jit, cond, scan bodies) batches over the axis of the trace running the rule.

    ``dims[i]`` is the batch axis of ``vals[i]`` (negative counts from the end) or None; every
    batched value must have ``axis_size`` entries along it. Output dims are wherever the rules
    left the batch axis (None for outputs that do not depend on the batch). ``structs[i]``
    (batched along axis 0 only) says ``vals[i]`` is the one-hot basis it describes: rules that
    know the structure then skip the work the dense value would cost.

    Example:
        >>> import numpy as np
        >>> from funcgrad.ops.reductions import reduce_sum
        >>> outs, out_dims = batch_flat(lambda x: [reduce_sum(x, (0,))], [np.ones((2, 3))], [1], 3)
        >>> outs[0].tolist(), out_dims
        ([2.0, 2.0, 2.0], [0])
    """
    if axis_name is _INHERIT:
        axis_name = _rule_axis_name.get()
    device = next((a.device for a in (get_aval(v) for v, d in zip(vals, dims) if d is not None)
                   if a.device is not None), None) or _rule_device.get()
    trace = BatchTrace(_trace_var.get(), axis_size, axis_name, device)
    ins = []
    for i, (v, d) in enumerate(zip(vals, dims)):
        if d is None:
            ins.append(v)
            continue
        nd = len(get_aval(v).shape)
        if d < 0:
            d += nd
        if not 0 <= d < nd:
            raise ValueError(f"batch_flat: batch dim {d} is out of range for rank {nd}")
        st = structs[i] if structs is not None else None
        ins.append(BatchTracer(trace, v, d, st if d == 0 else None))
    token = _trace_var.set(trace)
    try:
        if axis_name is None:
            outs = f(*ins)
        else:
            with extend_axis_env(axis_name, axis_size):
                outs = f(*ins)
    finally:
        _trace_var.reset(token)
    check = batch_call_check.get()
    if check is not None:
        check(list(vals), ins)
    pairs = [trace.unpack(o) for o in outs]
    return [p for p, _ in pairs], [d for _, d in pairs]
