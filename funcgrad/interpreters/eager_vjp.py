"""The eager VJP: reverse mode on a tape, the fast path for top-level ``grad``/``vjp``.

``vjp = linearize + transpose`` (transpose.py) is the general path and the single source of
truth. When reverse mode runs at the top level (no enclosing transformation), staging every
tangent operation into a jaxpr only to transpose it right after costs more Python than the
arithmetic on small arrays. This trace runs each primitive at once and records a tape node;
the backward pass then derives each node's VJP from the same JVP and transpose rules:

- elementwise primitives: their JVP is diagonal, so it is its own transpose: the cotangent
  of input ``i`` is that input's JVP function applied to the output cotangent, summed back
  to the input's shape (broadcasting);
- primitives linear in their floating operands (``deflinear``, ``declare_linear``: gathers,
  scatters, slices) or in each operand separately (``multilinear_primitives``, e.g.
  ``dot_general``): their transpose rule, with the input being differentiated as the
  undefined linear argument;
- anything else: the node is linearized on its own (JVP rule staged into a tiny jaxpr) and
  that jaxpr is transposed.

The hottest primitives also register array-level rules in their own block
(``defjvp(..., fast_vjp=...)``, :data:`funcgrad.interpreters.jvp.fast_vjp_rules`): the same
formula as their JVP function, computed straight on the array module instead of through
``bind`` (about eight Python frames per node fewer, most of a node's cost on small arrays).

Tapes nest: ``grad`` inside the function of a top-level ``grad`` records on a tape whose
parent is the outer tape. Its values are the outer tape's tracers, so its primitives run on
the outer tape (which records them), and its backward pass runs with the outer tape current,
so the outer tape records the inner backward pass too (through the generic methods, which
bind primitives) and differentiates it with the same rules: reverse over reverse without
staging anything.

``tests/funcgrad/ops/test_op_table.py::test_tape_vjp_agrees`` checks every op against the
general path, and ``test_fast_vjp_rules_agree`` each registered fast rule.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from funcgrad._stack_room import call_with_stack_room
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import xp_for
from funcgrad.compile.rules import array_calls
from funcgrad.core import (
    Primitive,
    Trace,
    Tracer,
    _device_modules,
    _scalars_to_arrays,
    _trace_var,
    bind,
    current_trace,
    eval_trace,
    place_uncommitted,
)
from funcgrad.errors import replayed_source, user_source_info
from funcgrad.interpreters.jvp import (
    FastVjpRule,
    Zero,
    elementwise_primitives,
    fast_vjp_rules,
    jvp_fn_table,
    linear_jvp_primitives,
    multilinear_primitives,
    tangent_aval,
    zero_jvp_primitives,
)
from funcgrad.interpreters.linearize import linearize_flat
from funcgrad.interpreters.staging import reserves_stack_room
from funcgrad.interpreters.transpose import (
    UndefinedPrimal,
    transpose_linearized,
    transpose_rules,
)

__all__ = ["TapeTrace", "TapeTracer", "vjp_tape", "records", "sum_to", "traced_array_ops",
           "transpose_into_rules", "located_primitives"]

_uids = itertools.count()
_new_tracer = object.__new__
_nd = numpy.ndarray
_PY = frozenset({bool, int, float, complex})


class TapeTracer(Tracer):
    """A concrete value recorded on a tape (identified by ``uid``)."""

    __slots__ = ("val", "uid")

    def __init__(self, trace: TapeTrace, val: Any) -> None:
        self._trace = trace
        self.val = val
        self.uid = next(_uids)

    @property
    def aval(self) -> ShapedArray:
        return get_aval(self.val)

    def to_concrete_value(self) -> Any:
        v = self.val
        # A nested tape's values are the enclosing tape's tracers.
        return v.to_concrete_value() if isinstance(v, Tracer) else v


#: A tape node, a tuple (the forward pass makes one per operation; a tuple is the cheapest
#: record): ``(backward, vals, in_uids, out_uid, outs, params, prim)``. ``vals`` are the
#: operands' values, ``in_uids`` their tracers' uids (-1: a constant), ``out_uid`` the uid of
#: the one output of a single-output node or the list of uids (-1: not differentiable) of a
#: multiple-output one. ``backward(node, ct, env)`` is the node's VJP: given the output's
#: cotangent (the list of them for a multiple-output node) it adds each taped input's
#: contribution to ``env`` (uid -> cotangent).
_Node = tuple
_BACKWARD, _VALS, _IN_UIDS, _OUT_UID, _OUTS, _PARAMS, _PRIM = range(7)

#: Primitives whose derivative is singular where their value is finite (sqrt, log, div, ...),
#: filled by their blocks: the tape records the user's line of each such node (one stack walk
#: each, not one per operation), and its backward rule runs with that line as
#: ``errors.replayed_source``, so that the division-by-zero warning it raises names the line
#: that took the square root, as under ``jit`` (not the line that called ``grad``).
located_primitives: set[Primitive] = set()


def _located(backward: Callable[..., None], src: Any) -> Callable[..., None]:
    def located_backward(node: _Node, ct: Any, env: dict[int, Any]) -> None:
        token = replayed_source.set(src)
        try:
            backward(node, ct, env)
        finally:
            replayed_source.reset(token)

    return located_backward


class TapeTrace(Trace):
    """Runs primitives eagerly and records the ones touching its tracers.

    ``parent`` is the evaluation trace (top-level ``grad``) or another tape (``grad`` of
    ``grad``): a nested tape's values are the enclosing tape's tracers, its primitives run on
    the enclosing tape (which records them), and so does its backward pass, so the outer
    ``grad`` differentiates the inner one's backward pass with the same rules.
    """

    __slots__ = ("nodes", "top")
    user_name = "grad"
    differentiates = True

    def __init__(self, parent: Trace = eval_trace) -> None:
        super().__init__(parent)
        self.nodes: list[_Node] = []
        self.top = parent is eval_trace

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict) -> list:
        # The hot path, one per user operation at the top level: host arrays and Python
        # scalars only, a primitive whose backward method is known, one inexact output.
        # Anything else takes the general path below.
        backward = _backward_cache.get(prim)
        if backward is None or not self.top:
            return self._process(prim, args, params)
        # Operands unrolled for one and two (nearly every operation): each is this tape's
        # tracer (uid >= 0) or a host array / Python scalar (uid -1); anything else, or no
        # tracer of this tape at all, takes the general path.
        n = len(args)
        if n == 2:
            x, y = args
            tx, ty = type(x), type(y)
            if tx is TapeTracer and x._trace is self:
                xv, ux = x.val, x.uid
            elif tx is _nd or tx in _PY:
                xv, ux = x, -1
            else:
                return self._process(prim, args, params)
            if ty is TapeTracer and y._trace is self:
                yv, uy = y.val, y.uid
            elif (ty is _nd or ty in _PY) and ux >= 0:
                yv, uy = y, -1
            else:
                return self._process(prim, args, params)
            vals = (xv, yv)
            in_uids = (ux, uy)
            host = type(xv) is _nd or type(yv) is _nd
        elif n == 1:
            (x,) = args
            if type(x) is not TapeTracer or x._trace is not self:
                return self._process(prim, args, params)
            xv = x.val
            vals = (xv,)
            in_uids = (x.uid,)
            host = type(xv) is _nd
        else:
            host = False
            vals = []
            in_uids = []
            live = False
            for x in args:
                t = type(x)
                if t is TapeTracer and x._trace is self:
                    vals.append(x.val)
                    in_uids.append(x.uid)
                    live = True
                elif t is _nd or t in _PY:
                    vals.append(x)
                    in_uids.append(-1)
                else:
                    return self._process(prim, args, params)
            if not live:
                return self._process(prim, args, params)
        try:
            if params:
                hash(tuple(params.values()))  # static params, as the evaluation trace checks
            fn = _host_calls.get(prim) if host else None
            if fn is not None:  # what the impl calls for host operands, minus the impl
                outs = [fn(*vals, **params) if params else fn(*vals)]
            elif params:
                outs = prim.impl(*vals, **params)  # type: ignore[misc]
            else:
                outs = prim.impl(*vals)  # type: ignore[misc]
        except Exception:
            # The general path runs it again: it moves host operands beside device ones
            # (core.place_uncommitted) and records the node; a real failure is reported by the
            # evaluation trace in its words. (Returning the evaluation trace's result here
            # would drop the node: a silent zero gradient.)
            return self._process(prim, args, params)
        if len(outs) == 1:
            o = outs[0]
            if type(o) is _nd:
                if o.dtype.kind not in "fc":
                    return outs
                # TapeTracer(self, o), without the __init__ call
                t = _new_tracer(TapeTracer)
                t._trace = self
                t.val = o
                t.uid = uid = next(_uids)
                if prim in located_primitives:
                    backward = _located(backward, user_source_info())
                self.nodes.append((backward, vals, in_uids, uid, outs, params, prim))
                return [t]
        for o in outs:
            if type(o) is not _nd and isinstance(o, numpy.generic):
                # NumPy's scalars (0-d results) become arrays, as the evaluation trace does.
                outs = _scalars_to_arrays(outs, vals)
                break
        return self._record(prim, params, vals, in_uids, outs, backward)

    def _process(self, prim: Primitive, args: Sequence[Any], params: dict) -> list:
        if len(_device_modules) > 1:
            # Host operands beside device ones move there first, own tracers through the
            # device_put primitive (recorded: their cotangents go back to the host).
            placed = place_uncommitted(args)
            if placed is not args:
                return self.process_primitive(prim, placed, params)
        vals: list[Any] = []
        in_uids: list[int] = []
        live = False
        foreign = False
        for x in args:
            if type(x) is TapeTracer and x._trace is self:
                v = x.val
                vals.append(v)
                in_uids.append(x.uid)
                live = True
            else:
                v = x
                vals.append(x)
                in_uids.append(-1)
            if isinstance(v, Tracer):
                foreign = True
        if not live or prim in zero_jvp_primitives:
            # No derivative flows through (stop_gradient, floor, argmax): a plain constant.
            return self.parent.process_primitive(prim, vals, params)
        backward = _backward_cache.get(prim)
        if backward is None:
            backward = _backward_method(prim)
        if backward is _linearized_backward:
            # The node's linearization computes its outputs too: run the primitive once.
            outs, backward = _linearize_node(prim, vals, in_uids, params, self.parent)
        elif foreign:
            # The enclosing tape's values (or, top level, a leaked tracer: the evaluation
            # trace raises).
            outs = self.parent.process_primitive(prim, vals, params)
        else:
            outs = _eval(prim, vals, params)
        return self._record(prim, params, vals, in_uids, outs, backward)

    def _record(self, prim: Primitive, params: dict, vals: list[Any], in_uids: list[int],
                outs: list[Any], backward: Callable[..., list[Any]]) -> list:
        """Wrap the inexact outputs in tracers and record the node (if any is inexact)."""
        if prim in located_primitives:
            backward = _located(backward, user_source_info())
        if len(outs) == 1 and not prim.multiple_results:
            o = outs[0]
            dt = o.dtype if type(o) is _nd else getattr(o, "dtype", None)
            if dt is None:  # a Python scalar passed straight through (an identity)
                dt = get_aval(o).dtype
            if dt.kind not in "fc":
                return outs
            t = TapeTracer(self, o)
            self.nodes.append((backward, vals, in_uids, t.uid, outs, params, prim))
            return [t]
        wrapped: list[Any] = []
        out_uids: list[int] = []
        recorded = False
        for o in outs:
            dt = getattr(o, "dtype", None)
            if dt is None:  # a Python scalar passed straight through (an identity)
                dt = get_aval(o).dtype
            if dt.kind in "fc":
                t = TapeTracer(self, o)
                wrapped.append(t)
                out_uids.append(t.uid)
                recorded = True
            else:
                wrapped.append(o)
                out_uids.append(-1)
        if not recorded:
            return outs
        self.nodes.append((backward, vals, in_uids, out_uids, outs, params, prim))
        return wrapped


def _eval(prim: Primitive, vals: list[Any], params: dict) -> list[Any]:
    """``eval_trace.process_primitive`` for operands known to hold no tracer, minus a layer:
    the tape's forward pass runs one primitive per user operation."""
    try:
        if params:
            hash(tuple(params.values()))
            outs = prim.impl(*vals, **params)  # type: ignore[misc]
        else:
            outs = prim.impl(*vals)  # type: ignore[misc]
    except Exception:
        # The evaluation trace runs it again and reports the failure in its words.
        return eval_trace.process_primitive(prim, vals, params)
    for o in outs:
        if type(o) is not numpy.ndarray and isinstance(o, numpy.generic):
            return _scalars_to_arrays(outs, vals)
    return outs


def _accumulate(env: dict[int, Any], in_uids: list[int], in_cts: Sequence[Any]) -> None:
    """Add the contributions ``in_cts`` to the cotangents of the inputs ``in_uids``."""
    for uid, c in zip(in_uids, in_cts):
        if uid < 0 or c is None or type(c) is Zero:
            continue
        prev = env.get(uid)
        env[uid] = c if prev is None else prev + c


def _accumulating(vjp: Callable[[_Node, list[Any]], list[Any]]) -> Callable[..., None]:
    """The backward method of ``vjp(node, cts) -> in_cts``."""

    def backward(node: _Node, ct: Any, env: dict[int, Any]) -> None:
        cts = [ct] if type(node[_OUT_UID]) is int else ct
        _accumulate(env, node[_IN_UIDS], vjp(node, cts))

    backward.__qualname__ = f"_accumulating({vjp.__name__})"
    return backward


def _backward_method(prim: Primitive) -> Callable[..., None]:
    # Hot primitives register array-level rules in their own block (single output only).
    rules = None if prim.multiple_results else fast_vjp_rules.get(prim)
    if prim in elementwise_primitives and prim in jvp_fn_table \
            and not prim.multiple_results:
        method = _elementwise_backward
    elif prim.multiple_results:
        return _linearized_backward  # not cached: the hot path never sees it
    elif (prim in linear_jvp_primitives or prim in multilinear_primitives) \
            and prim in transpose_rules:
        method = _transpose_into_backward if prim in transpose_into_rules \
            else _transpose_backward
    elif rules is not None:
        # Its fast rule's fallback (traced values): linearized when the backward pass
        # reaches it.
        method = _late_linearized_backward
    else:
        # Not cached: a rule registered later (a primitive defined by the user) may still
        # give it a cheaper method, and the linearized path is slow anyway.
        return _linearized_backward
    if rules is not None:
        method = _fast_backward(rules, method)
    name = array_calls.get(prim)
    if name is not None and prim in elementwise_primitives:
        _host_calls[prim] = getattr(numpy, name)
    _backward_cache[prim] = method
    return method


#: elementwise primitive -> the NumPy function its impl computes on host operands (declared
#: by its factory: ``funcgrad.compile.rules.array_calls``); the tape's hot path calls it.
_host_calls: dict[Primitive, Callable[..., Any]] = {}


#: primitive -> its backward method, once it has one of the fast ones (the rule tables only
#: grow: a primitive's jvp functions, transpose rule and linearity are fixed when it is
#: defined).
_backward_cache: dict[Primitive, Callable[..., None]] = {}


def _elementwise_vjp(node: _Node, cts: list[Any]) -> list[Any]:
    (ct,), ans = cts, node[_OUTS][0]
    fns = jvp_fn_table[node[_PRIM]]
    vals, params = node[_VALS], node[_PARAMS]
    out = []
    for fn, uid, v in zip(fns, node[_IN_UIDS], vals):
        if uid < 0 or fn is None:
            out.append(None)
            continue
        c = fn(ct, ans, *vals, **params) if params else fn(ct, ans, *vals)
        # Usually the contribution has the operand's shape and dtype already.
        if type(c) is not type(v) or c.shape != v.shape or c.dtype != v.dtype:
            c = sum_to(c, tangent_aval(get_aval(v)))
        out.append(c)
    return out




def _module_for(ct: Any, vals: list[Any]) -> Any:
    """The array module for a node off the host fast path; None if a value is a tracer."""
    if isinstance(ct, Tracer) or any(isinstance(v, Tracer) for v in vals):
        return None
    return xp_for(ct, *vals)


def _fit(c: Any, v: Any) -> Any:
    """Contribution ``c`` as the cotangent of operand ``v`` (shape, dtype, array type)."""
    if type(c) is not _nd and isinstance(c, numpy.generic):
        c = numpy.asarray(c)  # as the evaluation trace hands results back
    if type(c) is not type(v) or c.shape != v.shape or c.dtype != v.dtype:
        c = sum_to(c, tangent_aval(get_aval(v)))
    return c


def _fast_backward(
    rules: tuple[FastVjpRule, ...], generic: Callable[..., None]
) -> Callable[..., None]:
    """The backward method running a primitive's fast VJP rules (one per operand).

    ``generic`` is the tape's own method for the primitive, used when a node's values are not
    all concrete arrays of one array module. Unary and binary primitives get unrolled methods
    (the hot path); the checks after each rule skip the fitting when the contribution already
    has its operand's shape and dtype, as it usually does.
    """
    if len(rules) == 1:
        (fn,) = rules

        def backward(node: Any, ct: Any, env: dict[int, Any]) -> None:
            (x,) = vals = node[_VALS]
            if type(ct) is _nd and type(x) is _nd:
                xp = numpy
            else:
                xp = _module_for(ct, vals)
                if xp is None:
                    return generic(node, ct, env)
            params = node[_PARAMS]
            ans = node[_OUTS][0]
            c = fn(xp, ct, ans, x, **params) if params else fn(xp, ct, ans, x)
            if type(x) is not _nd or type(c) is not _nd or c.shape != x.shape \
                    or (c.dtype is not x.dtype and c.dtype != x.dtype):
                c = _fit(c, x)
            (ux,) = node[_IN_UIDS]
            prev = env.get(ux)
            env[ux] = c if prev is None else prev + c

        return backward
    if len(rules) == 2:
        fx, fy = rules

        def backward2(node: Any, ct: Any, env: dict[int, Any]) -> None:
            x, y = vals = node[_VALS]
            tx, ty = type(x), type(y)
            if type(ct) is _nd and (tx is _nd or tx in _PY) and (ty is _nd or ty in _PY):
                xp = numpy
            else:
                xp = _module_for(ct, vals)
                if xp is None:
                    return generic(node, ct, env)
            ans = node[_OUTS][0]
            params = node[_PARAMS]
            ux, uy = node[_IN_UIDS]
            if ux >= 0:
                cx = fx(xp, ct, ans, x, y, **params) if params else fx(xp, ct, ans, x, y)
                if tx is not _nd or type(cx) is not _nd or cx.shape != x.shape \
                        or (cx.dtype is not x.dtype and cx.dtype != x.dtype):
                    cx = _fit(cx, x)
                prev = env.get(ux)
                env[ux] = cx if prev is None else prev + cx
            if uy >= 0:
                cy = fy(xp, ct, ans, x, y, **params) if params else fy(xp, ct, ans, x, y)
                if ty is not _nd or type(cy) is not _nd or cy.shape != y.shape \
                        or (cy.dtype is not y.dtype and cy.dtype != y.dtype):
                    cy = _fit(cy, y)
                prev = env.get(uy)
                env[uy] = cy if prev is None else prev + cy

        return backward2

    def backward_n(node: Any, ct: Any, env: dict[int, Any]) -> None:
        vals = node[_VALS]
        xp = _module_for(ct, vals)
        if xp is None:
            return generic(node, ct, env)
        ans, params = node[_OUTS][0], node[_PARAMS]
        out: list[Any] = []
        for fn, uid, v in zip(rules, node[_IN_UIDS], vals):
            out.append(None if uid < 0 else _fit(fn(xp, ct, ans, *vals, **params), v))
        _accumulate(env, node[_IN_UIDS], out)

    return backward_n


#: array operations a nested tape's backward pass needs on traced values, bound as primitives
#: (filled by the ops that own them: the interpreters never import ``ops``):
#: ``"sum_to_aval"(ct, aval)``, a cotangent summed back to ``aval``'s shape and dtype.
traced_array_ops: dict[str, Callable[..., Any]] = {}


def sum_to(ct: Any, aval: ShapedArray) -> Any:
    """Cotangent ``ct`` of a broadcast result, summed back to ``aval``'s shape and dtype."""
    if isinstance(ct, Tracer):  # a nested tape: the enclosing one records the sum
        return traced_array_ops["sum_to_aval"](ct, aval)
    shape = getattr(ct, "shape", ())
    if shape != aval.shape:
        xp = xp_for(ct)
        lead = len(shape) - len(aval.shape)
        axes = tuple(range(lead)) + tuple(
            lead + i for i, s in enumerate(aval.shape) if s == 1 and shape[lead + i] != 1
        )
        ct = xp.sum(ct, axis=axes).reshape(aval.shape) if axes else ct.reshape(aval.shape)
    dt = ct.dtype
    if dt != aval.dtype:
        if dt.kind == "c" and aval.dtype.kind != "c":
            ct = ct.real
        ct = ct.astype(aval.dtype)
    return ct


def _transpose_vjp(node: _Node, cts: list[Any], first: int = 0) -> list[Any]:
    """The cotangents of the taped operands (from operand ``first`` on)."""
    (ct,) = cts
    rule = transpose_rules[node[_PRIM]]
    vals = node[_VALS]
    out: list[Any] = [None] * len(vals)
    for i, uid in enumerate(node[_IN_UIDS]):
        if uid < 0 or i < first:
            continue
        args = list(vals)
        args[i] = UndefinedPrimal(get_aval(vals[i]))
        res = rule(ct, *args, **node[_PARAMS])
        out[i] = res[i]
    return out


_elementwise_backward = _accumulating(_elementwise_vjp)
_transpose_backward = _accumulating(_transpose_vjp)


#: primitive linear in its first operand -> ``fn(acc, ct, x, *rest, **params)``: ``acc`` plus
#: the transpose of the primitive in ``x`` (an UndefinedPrimal) applied to ``ct``, as one
#: operation. Filled by the ops that own a transpose rule of that form (a gather's is a
#: scatter-add into zeros; its rule is this one with zeros for ``acc``, so the formula has
#: one copy). The tape adds such a node's cotangent into the one its input has accumulated
#: so far: ``scatter_add(acc, ct)`` is one pass and one allocation where
#: ``acc + scatter_add(zeros, ct)`` is three passes and two allocations (the slices of a
#: reverse-over-reverse HVP, each recorded, then differentiated, by the outer tape).
transpose_into_rules: dict[Primitive, Callable[..., Any]] = {}


def _dtype_of(v: Any) -> Any:
    return v.dtype if type(v) is _nd else get_aval(v).dtype


def _transpose_into_backward(node: _Node, ct: Any, env: dict[int, Any]) -> None:
    """``_transpose_backward``, adding the first operand's contribution into the cotangent
    accumulated so far (``transpose_into_rules``) when that one has the contribution's
    dtype (else the sum would promote) and the operand's shape."""
    in_uids = node[_IN_UIDS]
    u0 = in_uids[0]
    acc = env.get(u0) if u0 >= 0 else None
    vals = node[_VALS]
    if acc is None or type(acc) is Zero or _dtype_of(acc) != _dtype_of(ct) \
            or getattr(acc, "shape", None) != getattr(vals[0], "shape", ()):
        return _transpose_backward(node, ct, env)
    prim = node[_PRIM]
    env[u0] = transpose_into_rules[prim](acc, ct, UndefinedPrimal(get_aval(vals[0])),
                                         *vals[1:], **node[_PARAMS])
    if any(u >= 0 for u in in_uids[1:]):
        rest = _transpose_vjp(node, [ct], first=1)
        _accumulate(env, in_uids, rest)


def _linearized_backward(node: _Node, ct: Any, env: dict[int, Any]) -> None:
    raise AssertionError("replaced by _linearize_node")  # never stored on a node


def _late_linearized_backward(node: _Node, ct: Any, env: dict[int, Any]) -> None:
    """The node linearized now, in the backward pass (whose trace is the tape's parent)."""
    _, backward = _linearize_node(node[_PRIM], node[_VALS], node[_IN_UIDS], node[_PARAMS],
                                  current_trace())
    backward(node, ct, env)


def _linearize_node(prim: Primitive, vals: list[Any], in_uids: list[int], params: dict,
                    parent: Trace):
    """Linearize one primitive application at ``vals`` w.r.t. its taped inputs, with the
    tape's ``parent`` current (it records the primal work of a nested tape).

    Returns the primitive's outputs and the node's backward function.
    """
    idx = [i for i, u in enumerate(in_uids) if u >= 0]

    def f(*diff: Any) -> list[Any]:
        full = list(vals)
        for i, v in zip(idx, diff):
            full[i] = v

        return bind(prim, *full, **params)

    token = _trace_var.set(parent)
    try:
        result = linearize_flat(f, [vals[i] for i in idx])
    finally:
        _trace_var.reset(token)

    def vjp(node: _Node, cts: list[Any]) -> list[Any]:
        full_cts = [
            Zero(a) if c is None else c for c, a in zip(cts, result.out_tangent_avals)
        ]
        in_cts = transpose_linearized(result, full_cts)
        out: list[Any] = [None] * len(vals)
        for i, c in zip(idx, in_cts):
            out[i] = None if type(c) is Zero else c
        return out

    return list(result.primals_out), _accumulating(vjp)


def records(trace: Trace) -> bool:
    """Whether reverse mode may run on a tape with ``trace`` current: at the top level, or
    inside another tape's function (``grad`` of ``grad``). Other transformations (``jvp``,
    ``vmap``, staging) linearize instead."""
    return trace is eval_trace or type(trace) is TapeTrace


def vjp_tape(
    f: Callable[..., Sequence[Any]], primals: Sequence[Any]
) -> tuple[list[Any], Callable[[Sequence[Any]], list[Any]], list[ShapedArray]]:
    """Top-level reverse mode: ``(primals_out, f_vjp, out_tangent_avals)``.

    Must be called where :func:`records` holds: no enclosing transformation but other tapes.
    ``f_vjp`` runs once (``grad`` calls it right away), releasing the tape as it goes.
    """
    parent = current_trace()
    trace = TapeTrace(parent)
    ins = []
    for p in primals:
        a = get_aval(p)
        ins.append(TapeTracer(trace, p) if a.dtype.kind in "fc" else p)
        if isinstance(p, Tracer):
            # A tracer at the top level has leaked: the general path reports it.
            trace.top = False
    token = _trace_var.set(trace)
    try:
        outs = call_with_stack_room(f, *ins) if reserves_stack_room(parent) else f(*ins)
    finally:
        _trace_var.reset(token)
    primals_out = [o.val if type(o) is TapeTracer and o._trace is trace else o for o in outs]
    out_avals = [tangent_aval(get_aval(p)) for p in primals_out]
    in_avals = [tangent_aval(get_aval(p)) for p in primals]
    ran = False

    def f_vjp(cts_out: Sequence[Any]) -> list[Any]:
        # The pullback runs once: each node (with its residuals) is dropped as soon as its
        # backward method has run, so later cotangents reuse that memory. At n = 10^4 a
        # reverse-over-reverse HVP otherwise keeps its whole tape alive to the end, and glibc
        # grows (and later trims) the heap for every call: page faults cost more than the
        # arithmetic.
        nonlocal ran
        if ran:
            raise RuntimeError("the eager tape's pullback runs only once")
        ran = True
        nodes, trace.nodes = trace.nodes, []
        env: dict[int, Any] = {}
        for o, ct in zip(outs, cts_out):
            if type(o) is TapeTracer and o._trace is trace and ct is not None \
                    and type(ct) is not Zero:
                prev = env.get(o.uid)
                env[o.uid] = ct if prev is None else prev + ct
        # A nested tape's backward pass runs on the enclosing tape, which records it.
        token = _trace_var.set(parent)
        try:
            pop = env.pop
            pop_node = nodes.pop
            while nodes:
                node = pop_node()
                out_uid = node[3]
                if type(out_uid) is int:  # one output
                    ct = pop(out_uid, None)
                    if ct is not None:
                        node[0](node, ct, env)
                    continue
                cts = [pop(u, None) if u >= 0 else None for u in out_uid]
                if any(c is not None for c in cts):
                    node[0](node, cts, env)
        finally:
            _trace_var.reset(token)
        res = []
        for x, a in zip(ins, in_avals):
            c = env.get(x.uid) if type(x) is TapeTracer else None
            res.append(Zero(a) if c is None else c)
        return res

    return primals_out, f_vjp, out_avals
