"""The eager VJP: reverse mode on a tape, the fast path for top-level ``grad``/``vjp``.

``vjp = linearize + transpose`` (transpose.py) is the general path and the single source of
truth. When reverse mode runs at the top level (no enclosing transformation), staging every
tangent operation into a jaxpr only to transpose it right after costs more Python than the
arithmetic on small arrays. This trace runs each primitive at once and records a tape node;
the backward pass then derives each node's VJP from the same JVP and transpose rules:

- elementwise primitives: their JVP is diagonal, so it is its own transpose: the cotangent
  of input ``i`` is that input's JVP function applied to the output cotangent, summed back
  to the input's shape (broadcasting);
- primitives linear in all operands (``deflinear``) or in each operand separately
  (``multilinear_primitives``, e.g. ``dot_general``): their transpose rule, with the input
  being differentiated as the undefined linear argument;
- anything else: the node is linearized on its own (JVP rule staged into a tiny jaxpr) and
  that jaxpr is transposed.

The hottest elementwise primitives also register array-level rules in their own block
(``defjvp(..., fast_vjp=...)``, :data:`funcgrad.interpreters.jvp.fast_vjp_rules`): the same
formula as their JVP function, computed straight on the array module instead of through
``bind`` (about eight Python frames per node fewer, most of a node's cost on small arrays).

``tests/funcgrad/ops/test_op_table.py::test_tape_vjp_agrees`` checks every op against the
general path, and ``test_fast_vjp_rules_agree`` each registered fast rule.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import xp_for
from funcgrad.core import (
    Primitive,
    Trace,
    Tracer,
    _scalars_to_arrays,
    _trace_var,
    bind,
    current_trace,
    eval_trace,
)
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
from funcgrad.interpreters.transpose import (
    UndefinedPrimal,
    transpose_linearized,
    transpose_rules,
)

__all__ = ["TapeTrace", "TapeTracer", "vjp_tape", "records", "sum_to", "traced_array_ops"]

_uids = itertools.count()
_new_tracer = object.__new__


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


class _Node:
    __slots__ = ("prim", "params", "vals", "in_uids", "out_uids", "outs", "backward")

    def __init__(self, prim, params, vals, in_uids, out_uids, outs, backward):
        self.prim = prim
        self.params = params
        self.vals = vals
        self.in_uids = in_uids
        self.out_uids = out_uids
        self.outs = outs
        self.backward = backward


class TapeTrace(Trace):
    """Runs primitives eagerly and records the ones touching its tracers.

    ``parent`` is the evaluation trace (top-level ``grad``) or another tape (``grad`` of
    ``grad``): a nested tape's values are the enclosing tape's tracers, its primitives run on
    the enclosing tape (which records them), and so does its backward pass, so the outer
    ``grad`` differentiates the inner one's backward pass with the same rules.
    """

    __slots__ = ("nodes",)
    user_name = "grad"
    differentiates = True

    def __init__(self, parent: Trace = eval_trace) -> None:
        super().__init__(parent)
        self.nodes: list[_Node] = []

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict) -> list:
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
        if len(outs) == 1:  # the hot case, one output
            o = outs[0]
            dt = o.dtype if type(o) is numpy.ndarray else getattr(o, "dtype", None)
            if dt is None:  # a Python scalar passed straight through (an identity)
                dt = get_aval(o).dtype
            if dt.kind not in "fc":
                return outs
            # TapeTracer(self, o), without the __init__ call
            t = _new_tracer(TapeTracer)
            t._trace = self
            t.val = o
            t.uid = uid = next(_uids)
            self.nodes.append(_Node(prim, params, vals, in_uids, [uid], outs, backward))
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
        self.nodes.append(_Node(prim, params, vals, in_uids, out_uids, outs, backward))
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


def _backward_method(prim: Primitive) -> Callable[..., list[Any]]:
    if prim in elementwise_primitives and prim in jvp_fn_table \
            and not prim.multiple_results:
        method = _elementwise_backward
    elif prim.multiple_results:
        method = _linearized_backward
    elif (prim in linear_jvp_primitives or prim in multilinear_primitives) \
            and prim in transpose_rules:
        method = _transpose_backward
    else:
        # Not cached: a rule registered later (a primitive defined by the user) may still
        # give it a cheaper method, and the linearized path is slow anyway.
        return _linearized_backward
    # The hottest elementwise primitives register array-level rules in their own block.
    rules = fast_vjp_rules.get(prim)
    if rules is not None:
        method = _fast_backward(rules, method)
    _backward_cache[prim] = method
    return method


#: primitive -> its backward method, once it has one of the fast ones (the rule tables only
#: grow: a primitive's jvp functions, transpose rule and linearity are fixed when it is
#: defined).
_backward_cache: dict[Primitive, Callable[..., list[Any]]] = {}


def _elementwise_backward(node: _Node, cts: list[Any]) -> list[Any]:
    (ct,), ans = cts, node.outs[0]
    fns = jvp_fn_table[node.prim]
    vals, params = node.vals, node.params
    out = []
    for fn, uid, v in zip(fns, node.in_uids, vals):
        if uid < 0 or fn is None:
            out.append(None)
            continue
        c = fn(ct, ans, *vals, **params) if params else fn(ct, ans, *vals)
        # Usually the contribution has the operand's shape and dtype already.
        if type(c) is not type(v) or c.shape != v.shape or c.dtype != v.dtype:
            c = sum_to(c, tangent_aval(get_aval(v)))
        out.append(c)
    return out


_nd = numpy.ndarray
_PY = frozenset({bool, int, float, complex})


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
    rules: tuple[FastVjpRule, ...], generic: Callable[..., list[Any]]
) -> Callable[..., list[Any]]:
    """The backward method running a primitive's fast VJP rules (one per operand).

    ``generic`` is the tape's own method for the primitive, used when a node's values are not
    all concrete arrays of one array module. Unary and binary primitives get unrolled methods
    (the hot path); the checks after each rule skip the fitting when the contribution already
    has its operand's shape and dtype, as it usually does.
    """
    if len(rules) == 1:
        (fn,) = rules

        def backward(node: Any, cts: list[Any]) -> list[Any]:
            ct = cts[0]
            (x,) = vals = node.vals
            if type(ct) is _nd and type(x) is _nd:
                xp = numpy
            else:
                xp = _module_for(ct, vals)
                if xp is None:
                    return generic(node, cts)
            params = node.params
            c = fn(xp, ct, node.outs[0], x, **params) if params else fn(xp, ct, node.outs[0], x)
            if type(x) is not _nd or type(c) is not _nd or c.shape != x.shape \
                    or (c.dtype is not x.dtype and c.dtype != x.dtype):
                c = _fit(c, x)
            return [c]

        return backward
    if len(rules) == 2:
        fx, fy = rules

        def backward2(node: Any, cts: list[Any]) -> list[Any]:
            ct = cts[0]
            x, y = vals = node.vals
            tx, ty = type(x), type(y)
            if type(ct) is _nd and (tx is _nd or tx in _PY) and (ty is _nd or ty in _PY):
                xp = numpy
            else:
                xp = _module_for(ct, vals)
                if xp is None:
                    return generic(node, cts)
            ans = node.outs[0]
            params = node.params
            ux, uy = node.in_uids
            if ux < 0:
                cx = None
            else:
                cx = fx(xp, ct, ans, x, y, **params) if params else fx(xp, ct, ans, x, y)
                if tx is not _nd or type(cx) is not _nd or cx.shape != x.shape \
                        or (cx.dtype is not x.dtype and cx.dtype != x.dtype):
                    cx = _fit(cx, x)
            if uy < 0:
                return [cx, None]
            cy = fy(xp, ct, ans, x, y, **params) if params else fy(xp, ct, ans, x, y)
            if ty is not _nd or type(cy) is not _nd or cy.shape != y.shape \
                    or (cy.dtype is not y.dtype and cy.dtype != y.dtype):
                cy = _fit(cy, y)
            return [cx, cy]

        return backward2

    def backward_n(node: Any, cts: list[Any]) -> list[Any]:
        ct = cts[0]
        vals = node.vals
        xp = _module_for(ct, vals)
        if xp is None:
            return generic(node, cts)
        ans, params = node.outs[0], node.params
        out: list[Any] = []
        for fn, uid, v in zip(rules, node.in_uids, vals):
            out.append(None if uid < 0 else _fit(fn(xp, ct, ans, *vals, **params), v))
        return out

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


def _transpose_backward(node: _Node, cts: list[Any]) -> list[Any]:
    (ct,) = cts
    rule = transpose_rules[node.prim]
    out: list[Any] = [None] * len(node.vals)
    for i, uid in enumerate(node.in_uids):
        if uid < 0:
            continue
        args = list(node.vals)
        args[i] = UndefinedPrimal(get_aval(node.vals[i]))
        res = rule(ct, *args, **node.params)
        out[i] = res[i]
    return out


def _linearized_backward(node: _Node, cts: list[Any]) -> list[Any]:
    raise AssertionError("replaced by _linearize_node")  # never stored on a node


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

    def backward(node: _Node, cts: list[Any]) -> list[Any]:
        full_cts = [
            Zero(a) if c is None else c for c, a in zip(cts, result.out_tangent_avals)
        ]
        in_cts = transpose_linearized(result, full_cts)
        out: list[Any] = [None] * len(vals)
        for i, c in zip(idx, in_cts):
            out[i] = None if type(c) is Zero else c
        return out

    return list(result.primals_out), backward


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
    """
    parent = current_trace()
    trace = TapeTrace(parent)
    ins = []
    for p in primals:
        a = get_aval(p)
        ins.append(TapeTracer(trace, p) if a.dtype.kind in "fc" else p)
    token = _trace_var.set(trace)
    try:
        outs = f(*ins)
    finally:
        _trace_var.reset(token)
    primals_out = [o.val if type(o) is TapeTracer and o._trace is trace else o for o in outs]
    out_avals = [tangent_aval(get_aval(p)) for p in primals_out]
    in_avals = [tangent_aval(get_aval(p)) for p in primals]

    def f_vjp(cts_out: Sequence[Any]) -> list[Any]:
        env: dict[int, Any] = {}
        for o, ct in zip(outs, cts_out):
            if type(o) is TapeTracer and o._trace is trace and ct is not None \
                    and type(ct) is not Zero:
                prev = env.get(o.uid)
                env[o.uid] = ct if prev is None else prev + ct
        # A nested tape's backward pass runs on the enclosing tape, which records it.
        token = _trace_var.set(parent)
        try:
            pop, get = env.pop, env.get
            for node in reversed(trace.nodes):
                out_uids = node.out_uids
                if len(out_uids) == 1:
                    ct = pop(out_uids[0], None)
                    if ct is None:
                        continue
                    cts = [ct]
                else:
                    cts = [pop(u, None) if u >= 0 else None for u in out_uids]
                    if all(c is None for c in cts):
                        continue
                    if not node.prim.multiple_results and cts[0] is None:
                        continue
                for uid, c in zip(node.in_uids, node.backward(node, cts)):
                    if uid < 0 or c is None or type(c) is Zero:
                        continue
                    prev = get(uid)
                    env[uid] = c if prev is None else prev + c
        finally:
            _trace_var.reset(token)
        res = []
        for x, a in zip(ins, in_avals):
            c = env.get(x.uid) if type(x) is TapeTracer else None
            res.append(Zero(a) if c is None else c)
        return res

    return primals_out, f_vjp, out_avals
