"""Common-subexpression elimination while tracing: the same pure operation on the same
operands, seen again by one trace, gives back the results it gave the first time.

Nested differentiation is where this matters. ``grad(grad(f))`` linearizes a program that
already contains a forward pass, its JVP coefficients (``cos x`` for ``sin x``) and a
transposed backward pass; each level computes many of the same values again, and every
duplicate is differentiated again by the next level, so the traced program of ``k`` nested
``grad`` grows like ``2.5^k`` where the distinct values grow like ``1.7^k`` (``sin(x) exp(x)``
at k = 8: 2757 equations traced, 400 with this, 300 with staging's 0/1 rewrites too). Merging
duplicates at every level as they appear keeps each level's work to the distinct values of the
level below. Nested ``jvp`` is the same story (``tanh(sin(x) x)``, order 8: 13873 -> 546).

The interpreters' internal traces use it (linearize's tangent recording and, when nested
inside another transformation, linearize and jvp themselves), and so does the staging of
``jit`` / ``make_jaxpr`` for the derivative work a nested differentiation binds into it; the
user's own operations are recorded as written, operation for operation. Never merged:
primitives with effects (:data:`funcgrad.ir.effectful_primitives`), higher-order primitives
(their jaxprs may hold effects), results that are not tracers (concrete arrays a caller could
write into: never handed out twice), and operations whose params are not hashable.

A memo maps each key to ``(outs, args)``: the results, and the operands, kept alive so that
their ids (in the key) stay theirs. The lookups and the remembering are in line where traces
process operations (:func:`funcgrad.interpreters.staging.process_nested` and
:func:`~funcgrad.interpreters.staging.merge_or_stage`): every operation passes there.

Example:
    >>> import funcgrad, funcgrad.numpy as fnp
    >>> from funcgrad.interpreters.staging import PartialEvalTrace
    >>> from funcgrad.core import eval_trace, set_current_trace
    >>> from funcgrad.avals import ShapedArray
    >>> import numpy as np
    >>> trace = PartialEvalTrace(eval_trace)
    >>> t = trace.new_arg(ShapedArray((), np.dtype("float64")))
    >>> with set_current_trace(trace):
    ...     a, b = fnp.sin(t) * 2.0, 2.0 * fnp.sin(t)
    >>> a is b, len(trace.eqns)
    (True, 2)
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any

import numpy

from funcgrad.compile.keys import literal_key
from funcgrad.compile.rules import commutative_primitives
from funcgrad.core import Primitive, tracer_types
from funcgrad.ir import effectful_primitives

__all__ = ["operation_key"]

_SCALAR_TYPES = (float, int, bool, complex)


def _operand_key(x: Any) -> Hashable:
    # Tracers and arrays by identity (the memo keeps them alive, so ids are not reused);
    # scalars by value and type (2, 2.0 and float32(2) promote differently; -0.0 is not 0.0).
    t = type(x)
    if t in tracer_types:
        return id(x)
    if t in _SCALAR_TYPES or isinstance(x, numpy.generic) or (
            t is numpy.ndarray and x.ndim == 0):
        return literal_key(x)
    return ("id", id(x))


def _order(k: Hashable) -> tuple:
    return (0, k) if type(k) is int else (1, hash(k))


def _param_value(v: Any) -> Any:
    if type(v) is float:  # -0.0 == 0.0, but they are different params
        return (v, math.copysign(1.0, v))
    return v


def operation_key(prim: Primitive, args: Sequence[Any], params: dict) -> Hashable | None:
    """The key under which ``prim(*args, **params)`` is remembered, or None when it must not
    be merged with anything (effects, jaxprs in params, unhashable params)."""
    if prim.carries_jaxprs or prim in effectful_primitives:
        return None
    # Tracers (most operands) by id without a call each; the key tuples are built in line for
    # the usual one and two operands (tracing asks for a key for every operation).
    n = len(args)
    if n == 2:
        a, b = args
        ka = id(a) if type(a) in tracer_types else _operand_key(a)
        kb = id(b) if type(b) in tracer_types else _operand_key(b)
        if prim in commutative_primitives and (
                kb < ka if type(ka) is int and type(kb) is int  # two tracers, in short
                else _order(kb) < _order(ka)):
            keys: tuple = (kb, ka)
        else:
            keys = (ka, kb)
    elif n == 1:
        a = args[0]
        keys = (id(a) if type(a) in tracer_types else _operand_key(a),)
    else:
        keys = tuple([id(a) if type(a) in tracer_types else _operand_key(a) for a in args])
    if not params:
        return (prim, keys, ())  # operand keys are always hashable
    try:
        key = (prim, keys, tuple([(k, _param_value(v)) for k, v in params.items()]))
        hash(key)
    except TypeError:
        return None
    return key
