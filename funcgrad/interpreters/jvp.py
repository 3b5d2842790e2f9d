"""Forward mode: dual numbers (primal, tangent) traced per primitive with JVP rules.

Tangents may be symbolic zeros (:class:`Zero`), instantiated only when an array is needed.
Integer and boolean values get ``float0`` tangents. JVP rules are written with differentiable
primitives and run with the parent trace current, so their results differentiate again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy

from funcgrad._gc import paused_gc
from funcgrad._stack_room import call_with_stack_room
from funcgrad.avals import ShapedArray, float0, get_aval
from funcgrad.backend import get_default_device, xp_for_device
from funcgrad.compile import rules as _compile_rules
from funcgrad.core import Primitive, Trace, Tracer, _trace_var, bind, bind1, tracer_types
from funcgrad.errors import MissingRuleError
from funcgrad.interpreters.staging import merges_repeats, process_nested, reserves_stack_room

__all__ = [
    "Zero",
    "JVPTrace",
    "JVPTracer",
    "DualTracer",
    "jvp_rules",
    "defjvp",
    "def_fast_vjp",
    "fast_vjp_rules",
    "defjvp_zero",
    "deflinear",
    "declare_linear",
    "jvp_flat",
    "tangent_aval",
    "instantiate",
    "zeros_like_aval",
    "add_tangents",
    "add_any_p",
]


class Zero:
    """A symbolic zero tangent or cotangent of abstract value ``aval``."""

    __slots__ = ("_aval", "_primal")

    def __init__(self, aval: ShapedArray) -> None:
        self._aval = aval

    @property
    def aval(self) -> ShapedArray:
        a = self._aval
        if a is None:
            a = self._aval = tangent_aval(get_aval(self._primal))
            self._primal = None
        return a

    @staticmethod
    def from_primal(x: Any) -> Zero:
        # Interpreters make one per constant operand of every primitive and most are never
        # asked their aval: compute it lazily.
        z = _new_zero(Zero)
        z._aval = None
        z._primal = x
        return z

    def __repr__(self) -> str:
        return f"Zero({self.aval.str_short()})"


_new_zero = object.__new__


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    """The abstract value of tangents of ``aval``: same shape; float0 for ints and bools."""
    if aval.dtype.kind in "fc":
        return aval if not aval.weak_type else aval.update(weak_type=False)
    return ShapedArray(aval.shape, float0, False, aval.device)


def zeros_like_aval(aval: ShapedArray) -> Any:
    """A concrete zero array of ``aval`` on its device."""
    if type(aval) is not ShapedArray:  # other abstract values (control flow's tapes) own theirs
        zeros = getattr(aval, "zeros", None)
        if zeros is not None:
            return zeros()
    if aval.dtype == float0:
        # As in JAX, float0 holds no data and lives on the host (CuPy has no structured dtypes).
        return numpy.zeros(aval.shape, dtype=float0)
    xp = xp_for_device(aval.device or get_default_device())
    return xp.zeros(aval.shape, dtype=aval.dtype)


def instantiate(t: Any) -> Any:
    """Turn a symbolic :class:`Zero` into an array (for an operand of a rule's primitive);
    anything else passes through. The zero of a scalar of no device (a Python number's) is a
    NumPy scalar, which any device accepts as the number was (a default-device zero met the
    other operands' host arrays: ``complex(ct, 0.0)`` of a host ``ct`` under a GPU default
    device)."""
    if type(t) is not Zero:
        return t
    a = t.aval
    if a.device is None and a.shape == () and type(a) is ShapedArray and a.dtype != float0:
        return a.dtype.type(0)
    return zeros_like_aval(a)


# -- add_any: the one addition interpreters need, defined here so they never import ops ------

add_any_p = Primitive("add_any")


def _add_any_impl(x: Any, y: Any) -> list[Any]:
    if getattr(x, "dtype", None) == float0:
        return [x]
    return [x + y]


def _add_any_abstract(x: ShapedArray, y: ShapedArray) -> list[ShapedArray]:
    if x.shape == y.shape:
        return [x]
    # Only batching makes operands differ (one batched, one not); NumPy broadcasting adds them.
    return [x.update(shape=numpy.broadcast_shapes(x.shape, y.shape))]


add_any_p.def_impl(_add_any_impl)
add_any_p.def_abstract_eval(_add_any_abstract)


def _emit_add_any(ctx: Any, eqn: Any, args: list[str]) -> _compile_rules.Emission:
    if eqn.invars[0].aval.dtype == float0:
        return _compile_rules.Emission(args[0])
    return _compile_rules.Emission(f"xp.add({args[0]}, {args[1]})", fresh=True,
                                   out="elementwise")


# What the compiler needs to know of it (its simplifications, shared with `add`, are
# registered by funcgrad.ops.elementwise).
_compile_rules.emitters[add_any_p] = _emit_add_any
_compile_rules.array_calls[add_any_p] = "add"
_compile_rules.scalar_operators[add_any_p] = "+"
_compile_rules.commutative_primitives.add(add_any_p)
_compile_rules.exact_scalar_primitives.add(add_any_p)
_compile_rules.broadcasting_primitives.add(add_any_p)


def add_tangents(x: Any, y: Any) -> Any:
    """Sum two tangents (or cotangents) of the same aval; symbolic zeros are free."""
    if type(x) is Zero:
        return y
    if type(y) is Zero:
        return x
    return bind1(add_any_p, x, y)


# -- rules -----------------------------------------------------------------------------------

JvpRule = Callable[..., tuple[list[Any], list[Any]]]
#: primitive -> rule(primals, tangents, **params) -> (primal_outs, tangent_outs)
jvp_rules: dict[Primitive, JvpRule] = {}


def defjvp(
    prim: Primitive,
    *jvp_fns: Callable[..., Any] | None,
    fast_vjp: Sequence[Callable[..., Any]] | None = None,
) -> None:
    """JVP from one function per input: ``fn(g, ans, *primals, **params)`` -> contribution.

    ``None`` marks an input that is not differentiable. Contributions are summed.
    ``fast_vjp``: array-level rules for the eager reverse-mode tape (see :func:`def_fast_vjp`).
    """
    if fast_vjp is not None:
        def_fast_vjp(prim, *fast_vjp)

    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any):
        ans = bind1(prim, *primals, **params)
        out = None
        for fn, t in zip(jvp_fns, tangents):
            if fn is None or type(t) is Zero:
                continue
            c = fn(t, ans, *primals, **params)
            out = c if out is None else add_tangents(out, c)
        if out is None:
            out = Zero.from_primal(ans)
        return [ans], [out]

    jvp_rules[prim] = rule
    jvp_fn_table[prim] = jvp_fns


#: primitive -> its per-input JVP functions, for primitives defined with :func:`defjvp`.
#: The eager reverse-mode tape uses them for elementwise primitives, whose JVP is diagonal
#: and therefore its own transpose.
jvp_fn_table: dict[Primitive, tuple[Callable[..., Any] | None, ...]] = {}

#: primitive -> one array-level VJP rule per operand, for the eager tape's hottest elementwise
#: primitives (filled by the primitive's own block through :func:`def_fast_vjp`).
FastVjpRule = Callable[..., Any]
fast_vjp_rules: dict[Primitive, tuple[FastVjpRule, ...]] = {}


def def_fast_vjp(prim: Primitive, *rules: FastVjpRule) -> None:
    """Register array-level VJP rules of an elementwise primitive for the eager tape.

    One rule per operand, ``rule(xp, ct, ans, *operands, **params)``: operand ``i``'s
    cotangent contribution computed directly with the array module ``xp`` (no ``bind``), before
    it is summed back to the operand's shape and dtype. Each rule must compute what the
    primitive's JVP function for that operand computes (an elementwise JVP is its own transpose
    under the real pairing, so the same formula serves; complex values need no conjugation);
    the eager tape uses it only on concrete operands of one array module, and
    ``tests/funcgrad/ops/test_op_table.py`` checks every registered rule against
    linearize + transpose. Worth it only for primitives on the hot path of eager ``grad``:
    it saves the Python frames of binding the JVP function's primitives.
    """
    fast_vjp_rules[prim] = rules


#: primitives that act elementwise (with NumPy broadcasting); registered by their factories.
elementwise_primitives: set[Primitive] = set()

#: primitives linear in each floating operand separately (the others held fixed), like
#: ``dot_general``: their transpose rule, with one operand undefined, is that operand's VJP.
multilinear_primitives: set[Primitive] = set()


def defjvp_zero(prim: Primitive) -> None:
    """The primitive's outputs do not depend differentiably on its inputs (argmax, floor...)."""

    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any):
        outs = bind(prim, *primals, **params)
        return outs, [Zero.from_primal(o) for o in outs]

    jvp_rules[prim] = rule
    zero_jvp_primitives.add(prim)


#: primitives whose outputs carry no derivative (defjvp_zero): the eager tape records none.
zero_jvp_primitives: set[Primitive] = set()


#: primitives linear in their floating operands (integer operands, such as indices, held
#: fixed): those made with :func:`deflinear`, and those whose own JVP rule is linear
#: (:func:`declare_linear`). Each must also have a transpose rule; the eager tape uses it as
#: the primitive's VJP.
linear_jvp_primitives: set[Primitive] = set()


def declare_linear(prim: Primitive) -> None:
    """Say that ``prim``'s (hand-written) JVP rule is linear in its floating operands, so its
    transpose rule, with the differentiated operand undefined, is its VJP (gathers, scatters,
    slices: the eager tape then skips linearizing each application)."""
    linear_jvp_primitives.add(prim)


def deflinear(prim: Primitive) -> None:
    """The primitive is linear in all its inputs: the tangent is the primitive of tangents."""
    linear_jvp_primitives.add(prim)

    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any):
        outs = bind(prim, *primals, **params)
        if all(type(t) is Zero for t in tangents):
            return outs, [Zero.from_primal(o) for o in outs]
        touts = bind(prim, *[instantiate(t) for t in tangents], **params)
        return outs, touts

    jvp_rules[prim] = rule


def _add_any_jvp(primals, tangents):
    return [bind1(add_any_p, *primals)], [add_tangents(*tangents)]


jvp_rules[add_any_p] = _add_any_jvp
declare_linear(add_any_p)


def get_jvp_rule(prim: Primitive) -> JvpRule:
    rule = jvp_rules.get(prim)
    if rule is None:
        raise MissingRuleError(
            f"differentiation rule for '{prim.name}' is not implemented (no JVP rule registered)"
        )
    return rule


# -- the trace -------------------------------------------------------------------------------


class DualTracer(Tracer):
    """A primal value (of the parent trace) paired with its tangent: the base of the tracers
    of forward mode (:class:`JVPTracer`, the tangent a value) and of linearize
    (``LinearizeTracer``, the tangent staged)."""

    __slots__ = ("primal", "tangent", "aval")

    def __init__(self, trace: Trace, primal: Any, tangent: Any) -> None:
        self._trace = trace
        self.primal = primal
        self.tangent = tangent
        # The primal's, read once here as a plain attribute: rules ask the avals of their
        # operands (more often than dual numbers are made), and nested, the primal is itself a
        # dual number whose own aval is an attribute read.
        self.aval: ShapedArray = (primal.aval if type(primal) in tracer_types
                                  else get_aval(primal))

    def to_concrete_value(self) -> Any:
        p = self.primal
        return p.to_concrete_value() if isinstance(p, Tracer) else p


class JVPTracer(DualTracer):
    """A dual number: a primal value (of the parent trace) and its tangent."""

    __slots__ = ()


class JVPTrace(Trace):
    """Pushes tangents forward through each primitive (forward-mode AD)."""

    __slots__ = ("memo",)
    user_name = "jvp"
    differentiates = True

    def __init__(self, parent: Trace | None) -> None:
        super().__init__(parent)
        # Nested in another differentiation or in jit (jvp of jvp, jacfwd of grad), the same
        # operations come again and again: each is pushed forward once (trace_cse).
        self.memo: dict | None = {} if merges_repeats(parent) else None

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict) -> list:
        memo = self.memo
        if memo is None:
            return self._process(prim, args, params)
        # Nested: merged, simplified, attributed to the user's line (process_nested).
        return process_nested(memo, prim, args, params, self._process)

    def _process(self, prim: Primitive, args: Sequence[Any], params: dict) -> list:
        primals: list[Any] = []
        tangents: list[Any] = []
        live = False
        for x in args:
            if type(x) is JVPTracer and x._trace is self:
                primals.append(x.primal)
                tangents.append(x.tangent)
                live = True
            else:
                primals.append(x)
                tangents.append(Zero.from_primal(x))
        token = _trace_var.set(self.parent)  # type: ignore[arg-type]
        try:
            if not live:
                return bind(prim, *primals, **params)
            p_outs, t_outs = get_jvp_rule(prim)(primals, tangents, **params)
        finally:
            _trace_var.reset(token)
        return [
            p if type(t) is Zero else JVPTracer(self, p, t) for p, t in zip(p_outs, t_outs)
        ]

    def unpack(self, x: Any) -> tuple[Any, Any]:
        """(primal, tangent) of an output value of this trace."""
        if type(x) is JVPTracer and x._trace is self:
            return x.primal, x.tangent
        return x, Zero.from_primal(x)


def jvp_flat(
    f: Callable[..., Sequence[Any]], primals: Sequence[Any], tangents: Sequence[Any]
) -> tuple[list[Any], list[Any]]:
    """Forward mode on a flat function ``f(*arrays) -> list``; tangents may be Zero."""
    trace = JVPTrace(_trace_var.get())
    ins = [p if type(t) is Zero else JVPTracer(trace, p, t) for p, t in zip(primals, tangents)]
    token = _trace_var.set(trace)
    try:
        if trace.memo is None:
            outs = f(*ins)
        else:  # nested: a derivative program being traced (funcgrad._gc)
            with paused_gc():
                if reserves_stack_room(trace.parent):
                    outs = call_with_stack_room(f, *ins)
                else:
                    outs = f(*ins)
    finally:
        _trace_var.reset(token)
        trace.memo = None  # it holds tracers that hold the trace: let them go now
    pairs = [trace.unpack(o) for o in outs]
    return [p for p, _ in pairs], [t for _, t in pairs]

