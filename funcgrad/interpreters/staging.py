"""Staging: recording primitives into a jaxpr instead of running them.

``StagingTrace`` records every primitive it receives. ``PartialEvalTrace`` records only the
primitives that touch its own tracers and forwards the rest to its parent, which computes them
right away; linearize uses it so primal work runs eagerly while tangent work is staged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy

from funcgrad._gc import paused_gc
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.compile.keys import literal_key
from funcgrad.compile.passes import simplify_equation
from funcgrad.compile.rules import tracing_simplifiable_primitives, weak_arithmetic_primitives
from funcgrad.core import (
    Primitive,
    SourceInfo,
    Trace,
    Tracer,
    _device_modules,
    _trace_var,
    bind,
    non_array_operand_error,
    place_uncommitted,
    set_current_trace,
    tracer_types,
    user_source_info,
)
from funcgrad.errors import (
    FuncgradError,
    UnexpectedTracerError,
    name_user_line,
    operation_source,
    replayed_source,
    staging_source_info,
)
from funcgrad.interpreters.trace_cse import operation_key
from funcgrad.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var

__all__ = [
    "StagingTrace", "PartialEvalTrace", "StagingTracer", "trace_to_jaxpr", "partial_eval_rules",
    "staging_below",
    "simplify_operation", "merges_repeats", "reserves_stack_room", "process_nested", "merge_or_stage",
    "context_dependent_primitives",
]

_LITERAL_TYPES = (bool, int, float, complex)

#: primitive -> rule(trace, args, params) -> outputs, consulted by PartialEvalTrace when some
#: (not necessarily all) inputs are its own tracers. Higher-order primitives (jit, cond...) use
#: it to run the part of their body that reads only known inputs on the parent now and stage
#: only the rest: staging them whole would put primal work into linearize's linear jaxpr.
partial_eval_rules: dict[Primitive, Callable[..., list]] = {}

#: primitive -> rule(trace, args, params) -> (args, params), applied before an operation is
#: staged. Custom-derivative calls use it to replace their Python callable by its traced jaxpr
#: (lifting traced values it closes over into operands), so the staged equation is
#: self-contained.
staging_rewrites: dict[Primitive, Callable[..., tuple[Sequence[Any], dict]]] = {}


def _leaked_tracer_error(t: Tracer, trace: Trace) -> UnexpectedTracerError:
    return UnexpectedTracerError(
        f"a tracer ({t.aval.str_short()}) made by an earlier {t._trace.user_name} was used "
        f"in {trace.user_name}, outside the transformation that made it: it escaped (stored in a global or a "
        f"closure and used after that transformation returned).{t._creation_site()} Return "
        "values out of the transformed function instead of storing them."
    )


#: how many inputs an origin remembers (errors name three, then "...")
_ORIGIN_MAX = 4


def _derived_origin(args: Sequence[Any]) -> tuple[str, ...]:
    """The inputs of the traced function the outputs of an operation on ``args`` come from."""
    # Usually every traced operand has the same origin (one tuple, handed on from operation
    # to operation): then it is the answer, without merging.
    first: tuple[str, ...] | None = None
    for x in args:
        if type(x) is StagingTracer:
            o = x.origin
            if first is None:
                first = o
            elif o is not first and o != first:
                break
    else:
        return first or ()
    bases: list[str] = []
    for x in args:
        if type(x) is StagingTracer:
            for b in x.origin:
                if b not in bases:
                    bases.append(b)
    return tuple(bases[:_ORIGIN_MAX])


def _strong(avals: list[Any]) -> list[Any]:
    """Operation results are strong-typed, as in NumPy 2 (only Python scalars are weak):
    ``numpy.add(1.0, 2.0)`` is a float64 that upcasts a float32 array."""
    return [a.strip_weak() if getattr(a, "weak_type", False) else a for a in avals]


_abstract_cache: dict[Any, Any] = {}

#: primitives whose abstract evaluation reads context (the named axes bound around it: a
#: collective's result shape is the axis size of the moment), so it is never cached. Filled by
#: the primitive's block.
context_dependent_primitives: set[Primitive] = set()


def abstract_eval_cached(
    prim: Primitive, avals: list[ShapedArray], params: dict
) -> list[ShapedArray]:
    """``prim.abstract_eval`` memoised on (primitive, avals, params): tracing calls it per op.
    Results are strong (:func:`_strong`) except Python arithmetic on weak operands alone
    (:data:`~funcgrad.compile.rules.weak_arithmetic_primitives`): ``1 - s`` of a Python float
    ``s`` is a Python float eagerly, so weak under tracing too. (Weak types are part of the
    avals, so both kinds of results are cached under their own keys.)"""
    if prim.carries_jaxprs or prim in context_dependent_primitives:
        # Higher-order primitives carry jaxprs (and their constants) in params: caching them
        # would keep those alive; their rules are cheap to rerun anyway.
        return _strong(prim.abstract_eval(*avals, **params))  # type: ignore[misc]
    try:
        key = (prim, *avals, *params.items()) if params else (prim, *avals)
        hit = _abstract_cache.get(key)
    except TypeError:  # unhashable params: the rule itself reports them
        return _strong(prim.abstract_eval(*avals, **params))  # type: ignore[misc]
    if hit is None:
        if prim in weak_arithmetic_primitives and all(
                getattr(a, "weak_type", False) for a in avals):
            hit = prim.abstract_eval(*avals, **params)  # type: ignore[misc]
        else:
            hit = _strong(prim.abstract_eval(*avals, **params))  # type: ignore[misc]
        if len(_abstract_cache) > 100_000:
            _abstract_cache.clear()
        # One object per distinct aval (the first one handed out, kept in the same cache under
        # (ShapedArray, aval)): the next operation's key then matches its entry by identity,
        # without ShapedArray.__eq__.
        hit = [_abstract_cache.setdefault((ShapedArray, a), a) if type(a) is ShapedArray else a
               for a in hit]
        _abstract_cache[key] = hit
    return hit


def _is_unit(x: Any) -> bool:
    """A concrete scalar 0 or 1 (what AD's seeds and instantiated zeros leave behind)."""
    if type(x) in tracer_types or isinstance(x, bool | numpy.bool_):
        return False
    if type(x) in _LITERAL_TYPES or isinstance(x, numpy.generic) or (
            type(x) is numpy.ndarray and x.ndim == 0):
        try:
            return bool(x == 0 or x == 1)
        except Exception:
            return False
    return False


#: What :func:`simplify_operation` decided for each (primitive, operand pattern, params), where
#: the decision names operands: the rules see only avals and the 0/1 literals (a pattern), so
#: ``x * 1.0`` at every level of a nested ``grad`` is decided once. A value is a tuple of
#: operand positions (the results are those operands) or None (no rewrite). Rewrites into
#: other equations are not kept: they bind anew each time.
_simplified: dict[Any, tuple[int, ...] | None] = {}


def simplify_operation(prim: Primitive, args: Sequence[Any], params: dict) -> list | None:
    """``prim(*args)`` rewritten while tracing, or None: ``x * 1`` is ``x``, ``0 - x`` is
    ``-x`` ... (the rules of :data:`funcgrad.compile.rules.tracing_simplifiable_primitives`,
    tried when an operand is a scalar 0 or 1). A rewrite binds its replacement on the current
    trace; an operand is handed back only when it is a tracer (immutable), never a concrete
    array that two names would then share."""
    if prim not in tracing_simplifiable_primitives:
        return None
    units = [_is_unit(x) for x in args]
    if True not in units:
        return None
    try:
        key: Any = (prim, *[literal_key(x) if u else get_aval(x) for x, u in zip(args, units)],
                    *params.items())
        decided = _simplified.get(key, _simplified)
    except TypeError:  # unhashable params
        key, decided = None, _simplified
    if decided is not _simplified:
        if decided is None:
            return None
        outs = [args[i] for i in decided]
        return outs if all(type(o) in tracer_types for o in outs) else None
    atoms: list[Var | Literal] = [
        Literal(x) if u else Var(get_aval(x)) for x, u in zip(args, units)
    ]
    out_avals = abstract_eval_cached(prim, [a.aval for a in atoms], params)
    eqn = Eqn(prim, atoms, [Var(a) for a in out_avals], params)
    res = simplify_equation(eqn)
    if res is None or isinstance(res, list):
        positions = None if res is None else [
            next((i for i, b in enumerate(atoms) if b is a), None) for a in res]
        if key is not None and (positions is None or None not in positions):
            if len(_simplified) > 10_000:
                _simplified.clear()
            _simplified[key] = None if positions is None else tuple(positions)
        if res is None:
            return None
    env: dict[Any, Any] = {a: x for a, x in zip(atoms, args) if type(a) is Var}
    if isinstance(res, list):
        outs = [env.get(a) for a in res]
        return outs if all(isinstance(o, Tracer) for o in outs) else None
    # Replacement equations, in order; the last ones write the original outputs.
    for new in (res,) if isinstance(res, Eqn) else res:
        vals = bind(new.prim, *[a.val if type(a) is Literal else env[a] for a in new.invars],
                    **new.params)
        env.update(zip(new.outvars, vals))
    return [env[v] for v in eqn.outvars]


class StagingTracer(Tracer):
    """A value being recorded: its abstract value, its variable in the trace's jaxpr and,
    for errors, where it came from."""

    # _var: the jaxpr variable it stands for (in its own trace's jaxpr). origin: labels of the
    # traced function's inputs this value is (derived=False) or is computed from
    # (derived=True), such as "argument x"; for error messages. aval is a plain slot: tracing
    # reads it for every operand of every operation.
    __slots__ = ("aval", "_var", "origin", "derived", "source")

    def __init__(self, trace: StagingTrace, aval: ShapedArray, origin: str = "",
                 var: Var | None = None) -> None:
        self._trace = trace
        self.aval = aval  # type: ignore[misc]
        self._var = var if var is not None else Var(aval)
        self.origin: tuple[str, ...] = (origin,) if origin else ()
        self.derived = False
        self.source = None

    def _origin(self) -> str:
        if not self.origin:
            return ""
        shown = ", ".join(self.origin[:_ORIGIN_MAX - 1])
        if len(self.origin) >= _ORIGIN_MAX:
            shown += ", ..."
        return f"({'derived from' if self.derived else 'from'} {shown}) "

    def _creation_site(self) -> str:
        if self.source:
            return f" It was created at {self.source}."
        if self.origin and not self.derived:  # an input of the traced function: name which
            return f" It is the traced {self.origin[0]}."
        return ""


_new = object.__new__


class StagingTrace(Trace):
    """Records primitives into equations; see :func:`trace_to_jaxpr`.

    Each of its tracers carries its own variable, so the trace keeps no table of them (and
    no reference to them: tracers and trace form no cycle for the collector to find).
    """

    __slots__ = ("eqns", "const_vals", "const_vars", "_const_ids", "invars", "memo", "merged")
    user_name = "jit / make_jaxpr tracing"

    def __init__(self, parent: Trace | None) -> None:
        super().__init__(parent)
        # What :func:`merge_or_stage` has staged (trace_cse): derivative work, merged.
        self.memo: dict = {}
        # How many of ``eqns`` it staged under a key seen for the first time: when that is all
        # of them, no two compute the same value (``Jaxpr.distinct``).
        self.merged = 0
        self.eqns: list[Eqn] = []
        self.const_vals: list[Any] = []
        self.const_vars: list[Var] = []
        # id(constant) -> var, to share one constvar per constant; constants are kept alive
        # in const_vals so their ids are not reused.
        self._const_ids: dict[int, Var] = {}
        self.invars: list[Var] = []

    # -- building ------------------------------------------------------------------------

    def new_arg(self, aval: ShapedArray, origin: str = "") -> StagingTracer:
        """A new input of the jaxpr; ``origin`` labels it for errors ("argument x")."""
        t = StagingTracer(self, aval, origin)
        self.invars.append(t._var)
        return t

    def getvar(self, x: Any) -> Var | Literal:
        traced = type(x) in tracer_types
        if traced:
            if isinstance(x, StagingTracer) and x._trace is self:
                return x._var
        elif type(x) in _LITERAL_TYPES or isinstance(x, numpy.generic):
            return Literal(x)
        elif getattr(x, "ndim", None) == 0:
            # Scalar constants (a 0-d array: a gradient seed, a folded constant) read better
            # inline, as JAX prints them; the array object is kept, so its device is too.
            return Literal(x)
        v = self._const_ids.get(id(x))
        if v is None:
            if traced and not self._encloses(x):
                raise _leaked_tracer_error(x, self)
            v = Var(get_aval(x))
            self._const_ids[id(x)] = v
            self.const_vals.append(x)
            self.const_vars.append(v)
        return v

    def _encloses(self, t: Tracer) -> bool:
        # A foreign tracer is a legitimate constant only while its trace is still running,
        # i.e. it is one of ours' ancestors (a closure over an outer transformation's value).
        # Any other trace has finished: the tracer leaked out of it.
        trace = self.parent
        while trace is not None:
            if trace is t._trace:
                return True
            trace = trace.parent
        return False

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict) -> list:
        src = operation_source.get()
        if src is None:  # the user's own operation: recorded as written
            return self.stage(prim, args, params, staging_source_info())
        # Bound by a differentiation's rule (``attribute_to_user`` set the user's line): derivative
        # work, which repeats itself level after level under nested ``grad``; merged and
        # simplified as the interpreters' own recordings are, it is staged once.
        return merge_or_stage(self, prim, args, params, src)

    def stage(
        self, prim: Primitive, args: Sequence[Any], params: dict, src: SourceInfo | None
    ) -> list:
        rewrite = staging_rewrites.get(prim)
        if rewrite is not None:
            args, params = rewrite(self, args, params)
        if len(_device_modules) > 1:  # host operands beside device ones move there first
            args = place_uncommitted(args)
        try:
            # Own tracers (most operands) without a method call each.
            invars = [x._var if type(x) is StagingTracer and x._trace is self
                      else self.getvar(x) for x in args]
        except TypeError:
            bad_operand = non_array_operand_error(prim, args)
            if bad_operand is None:
                raise
            raise bad_operand from None
        try:
            out_avals = abstract_eval_cached(prim, [v.aval for v in invars], params)
        except FuncgradError as e:
            src = src or user_source_info()
            if src.filename and str(src) not in str(e):
                e.args = (f"{e.args[0] if e.args else ''} (at {src})",) + tuple(e.args[1:])
            raise
        # Only user-facing staging (src given) tracks origins, for ConcretizationError texts.
        origin = _derived_origin(args) if src is not None else ()
        outs: list[Any] = []
        outvars: list[Var] = []
        for a in out_avals:  # a new tracer and its variable per result
            v = Var(a)
            # Made without __init__ (which labels an input): a derived value of this trace.
            t = _new(StagingTracer)
            t._trace = self
            t.aval = a
            t._var = v
            t.source = src
            t.origin = origin
            t.derived = True
            outs.append(t)
            outvars.append(v)
        self.eqns.append(Eqn(prim, invars, outvars, params, src))
        return outs

    def to_jaxpr(self, outs: Sequence[Any]) -> ClosedJaxpr:
        """Close the recording: ``outs`` may be own tracers, outer values or scalars."""
        outvars = [self.getvar(x) for x in outs]
        jaxpr = Jaxpr(list(self.const_vars), list(self.invars), outvars, self.eqns,
                      distinct=self.merged == len(self.eqns))
        return ClosedJaxpr(jaxpr, list(self.const_vals))


def staging_below(trace: Trace | None) -> bool:
    """Whether a program is being staged (``jit``, ``make_jaxpr``) under ``trace``, whatever
    transformations sit above it (linearize's internal tangent recordings do not count)."""
    while trace is not None:
        if type(trace) is StagingTrace:
            return True
        trace = trace.parent
    return False


def merges_repeats(parent: Trace | None) -> bool:
    """Whether a differentiating trace made under ``parent`` merges repeated operations
    (:mod:`funcgrad.interpreters.trace_cse`): when it is nested in another differentiation
    or in staging (``jit``, ``make_jaxpr``), where repeats multiply level after level; not at
    the top level or under ``vmap`` alone, where there is little to merge and every operation
    would pay for its key on every (eager) call."""
    t = parent
    while t is not None:
        if t.differentiates or isinstance(t, StagingTrace):
            return True
        t = t.parent
    return False


def reserves_stack_room(parent: Trace | None) -> bool:
    """Whether a differentiating trace made under ``parent`` is the third level of nested
    differentiation (``grad(grad(grad(...)))``, any of them forward): where nested tracing
    recurses deeply enough for the frame stack's chunk boundaries to cost
    (:mod:`funcgrad._stack_room`); it asks for room once, for all the levels inside it. Not
    lower: a reservation costs about as much as twenty eager operations, every call."""
    n = 0
    t = parent
    while t is not None:
        n += t.differentiates
        t = t.parent
    return n == 2


def process_nested(memo: dict, prim: Primitive, args: Sequence[Any], params: dict,
                   process: Callable[[Primitive, Sequence[Any], dict], list]) -> list:
    """What a differentiating trace nested in another one or in staging does with ``prim``:
    the results of the same operation seen before (in ``memo``,
    :mod:`funcgrad.interpreters.trace_cse`), of a tracing rewrite (``x * 1`` is ``x``,
    :func:`simplify_operation`), else ``process(prim, args, params)`` (its rule), remembered.

    What the rule binds is attributed to the user's line of ``prim``
    (:data:`~funcgrad.errors.operation_source`, set by the outermost such trace; read by staging
    far below). A higher-order primitive's rule may run the user's own code (custom derivative
    rules, callbacks), whose operations have their own lines: under one, staging finds the line
    by walking the stack again.

    Every operation passes here once per nesting level, so it is one frame, with the memo's
    lookup and remembering (trace_cse's layout) in line: deep nesting pays for each Python frame
    a level adds (benchmarks/README.md, "Why order 6 is slower per instruction").
    """
    src = operation_source.get()
    if prim.carries_jaxprs:
        token = None if src is None else operation_source.set(None)
    else:
        token = operation_source.set(user_source_info()) if src is None else None
    try:
        key = operation_key(prim, args, params)
        if key is not None:
            hit = memo.get(key)
            if hit is not None:
                return hit[0]
        outs = None
        if prim in tracing_simplifiable_primitives:
            for x in args:  # a rewrite needs a concrete 0 or 1 among the operands
                if type(x) not in tracer_types:
                    outs = simplify_operation(prim, args, params)
                    break
        if outs is None:
            outs = process(prim, args, params)
        if key is not None:  # trace_cse.remember, in line
            for o in outs:
                if type(o) not in tracer_types:
                    break
            else:
                memo[key] = (outs, args if type(args) is tuple else tuple(args))
        return outs
    finally:
        if token is not None:
            operation_source.reset(token)


def merge_or_stage(trace: StagingTrace, prim: Primitive, args: Sequence[Any], params: dict,
                   src: SourceInfo | None) -> list:
    """Stage ``prim(*args)`` on ``trace`` unless it merges with an operation staged already
    (:mod:`funcgrad.interpreters.trace_cse`) or a tracing rewrite replaces it (``x * 1`` is
    ``x``, :func:`simplify_operation`); ``src``: the user's line. The memo's lookup and
    remembering are in line, as in :func:`process_nested`."""
    memo = trace.memo
    key = operation_key(prim, args, params)
    if key is not None:
        hit = memo.get(key)
        if hit is not None:
            return hit[0]
    outs = None
    if prim in tracing_simplifiable_primitives:
        for x in args:  # a rewrite needs a concrete 0 or 1 among the operands
            if type(x) not in tracer_types:
                outs = simplify_operation(prim, args, params)
                break
    if outs is None:
        outs = trace.stage(prim, args, params, src)
        # (A staging rewrite may make two keys' equations alike: those are not counted.)
        if key is not None and prim not in staging_rewrites:
            trace.merged += 1
    if key is not None:  # trace_cse.remember, in line
        for o in outs:
            if type(o) not in tracer_types:
                break
        else:
            memo[key] = (outs, args if type(args) is tuple else tuple(args))
    return outs


class PartialEvalTrace(StagingTrace):
    """Stages only operations that involve its own tracers; the rest run on the parent now.

    What it records is internal (linearize's tangent program), so an operation it has staged
    already is not staged twice (:mod:`funcgrad.interpreters.trace_cse`).
    """

    __slots__ = ("finds_lines",)

    def __init__(self, parent: Trace | None) -> None:
        super().__init__(parent)
        # Under staging a tangent equation bound with no line at hand (a custom JVP rule's, run
        # with operation_source cleared) finds the user's line on the stack; eagerly (linearize
        # of concrete values) nothing is walked.
        self.finds_lines = staging_below(parent)

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict) -> list:
        for x in args:
            if type(x) is StagingTracer and x._trace is self:
                rule = partial_eval_rules.get(prim)
                if rule is not None:
                    return rule(self, args, params)
                # A tangent equation keeps the user's line of the operation it is the
                # derivative of (set by nested staging or differentiation, or replaying a
                # jaxpr; under staging else found on the stack): the backward pass replays it, so
                # what it computes -- a NaN from log's derivative at 0 -- is attributed to it.
                src = operation_source.get()
                if src is None:
                    src = replayed_source.get()
                    if src is None and self.finds_lines:
                        src = staging_source_info()
                return merge_or_stage(self, prim, args, params, src)
        token = _trace_var.set(self.parent)  # type: ignore[arg-type]
        try:
            return bind(prim, *args, **params)
        finally:
            _trace_var.reset(token)


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
    with paused_gc(), set_current_trace(trace):
        try:
            outs = f(*args)
        except (ValueError, TypeError, IndexError) as e:
            # Shapes and dtypes are checked while tracing, deep in funcgrad: say which of the
            # user's lines the failing operation was written on.
            name_user_line(e)
            raise
        closed = trace.to_jaxpr(list(outs))
        # The memo holds tracers that hold the trace: let them go now, while the collector
        # is still paused, so that what it frees is not counted as young objects left to walk.
        trace.memo = {}
    return closed
