"""Array-level backward rules for the eager tape's hottest elementwise primitives.

The tape (tape.py) derives an elementwise node's cotangents from the primitive's JVP
functions, which bind primitives through the evaluation trace: about eight Python frames per
node, most of a node's cost on small arrays. For the primitives here the same formulas are
written once more directly against the array module, operation for operation as the JVP
functions in ``funcgrad/ops/elementwise.py`` compute them (the same ufuncs on the same
operands in the same order, so results are bit-for-bit those of the generic path). Complex
values need nothing special: as in the generic path, an elementwise JVP is its own transpose
under the real pairing (no conjugation).

The layering keeps this module from importing ``funcgrad.ops``: rules are keyed by primitive
name and apply only to the primitive of that name defined in ``funcgrad.ops.elementwise``
(:func:`direct_vjp_for` checks where its implementation lives), never to a user's primitive
that happens to share the name. A rule runs only on concrete operands and cotangents (the tape
runs at the top level; anything else, e.g. a tracer, falls back to the generic method).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy

from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import xp_for
from funcgrad.core import Primitive, Tracer
from funcgrad.interpreters.jvp import tangent_aval

__all__ = ["direct_vjps", "direct_vjp_for", "sum_to"]

_nd = numpy.ndarray
_PY = frozenset({bool, int, float, complex})

#: A rule: ``rule(xp, ct, ans, *vals, **params)``: one operand's contribution, before summing
#: back to the operand's shape and dtype.
Rule = Callable[..., Any]


def _integer_pow(xp: Any, ct: Any, ans: Any, x: Any, y: int) -> Any:
    if y == 0:
        return xp.multiply(ct, 0)
    if y == 1:
        return ct
    if y == 2:
        return xp.multiply(ct, xp.multiply(2, x))
    return xp.multiply(ct, xp.multiply(y, xp.power(x, y - 1)))


#: primitive name -> one rule per operand (operand for operand the JVP functions of
#: funcgrad.ops.elementwise; neg's is its transpose rule)
_rules_by_name: dict[str, tuple[Rule, ...]] = {
    "add": (lambda xp, ct, ans, x, y: ct, lambda xp, ct, ans, x, y: ct),
    "sub": (lambda xp, ct, ans, x, y: ct, lambda xp, ct, ans, x, y: xp.negative(ct)),
    "mul": (lambda xp, ct, ans, x, y: xp.multiply(ct, y),
            lambda xp, ct, ans, x, y: xp.multiply(x, ct)),
    "div": (lambda xp, ct, ans, x, y: xp.true_divide(ct, y),
            lambda xp, ct, ans, x, y: xp.negative(xp.multiply(ct, xp.true_divide(ans, y)))),
    "neg": (lambda xp, ct, ans, x: xp.negative(ct),),
    "sin": (lambda xp, ct, ans, x: xp.multiply(ct, xp.cos(x)),),
    "cos": (lambda xp, ct, ans, x: xp.negative(xp.multiply(ct, xp.sin(x))),),
    "exp": (lambda xp, ct, ans, x: xp.multiply(ct, ans),),
    "log": (lambda xp, ct, ans, x: xp.true_divide(ct, x),),
    "tanh": (lambda xp, ct, ans, x: xp.multiply(ct, xp.subtract(1, xp.square(ans))),),
    "square": (lambda xp, ct, ans, x: xp.multiply(ct, xp.multiply(2, x)),),
    "sqrt": (lambda xp, ct, ans, x: xp.multiply(ct, xp.true_divide(0.5, ans)),),
    "logistic": (lambda xp, ct, ans, x: xp.multiply(ct, xp.multiply(ans, xp.subtract(1, ans))),),
    "integer_pow": (_integer_pow,),
}

#: primitive -> its direct backward (filled by :func:`direct_vjp_for`)
direct_vjps: dict[Primitive, Callable[..., list[Any]]] = {}

_OWNER = "funcgrad.ops.elementwise"


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


def direct_vjp_for(
    prim: Primitive, generic: Callable[..., list[Any]]
) -> Callable[..., list[Any]] | None:
    """The tape backward method for ``prim`` using its array-level rule, or None.

    ``generic`` is the tape's own method for ``prim``, used when a node's values are not all
    concrete arrays of one array module.
    """
    hit = direct_vjps.get(prim)
    if hit is not None:
        return hit
    rules = _rules_by_name.get(prim.name)
    if rules is None or getattr(prim.impl, "__module__", None) != _OWNER \
            or prim.multiple_results:
        return None
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
            # Usually the contribution is an array of the operand's shape and dtype already.
            if type(x) is not _nd or type(c) is not _nd or c.shape != x.shape or (c.dtype is not x.dtype
                                                             and c.dtype != x.dtype):
                c = _fit(c, x)
            return [c]
    else:
        fx, fy = rules

        def backward(node: Any, cts: list[Any]) -> list[Any]:
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
            ux, uy = node.in_uids
            if ux < 0:
                cx = None
            else:
                cx = fx(xp, ct, ans, x, y)
                if tx is not _nd or type(cx) is not _nd or cx.shape != x.shape or (cx.dtype is not x.dtype
                                                                 and cx.dtype != x.dtype):
                    cx = _fit(cx, x)
            if uy < 0:
                return [cx, None]
            cy = fy(xp, ct, ans, x, y)
            if ty is not _nd or type(cy) is not _nd or cy.shape != y.shape or (cy.dtype is not y.dtype
                                                             and cy.dtype != y.dtype):
                cy = _fit(cy, y)
            return [cx, cy]

    direct_vjps[prim] = backward
    return backward


def sum_to(ct: Any, aval: ShapedArray) -> Any:
    """Cotangent ``ct`` of a broadcast result, summed back to ``aval``'s shape and dtype."""
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
