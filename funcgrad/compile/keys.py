"""Hashable keys for literal values and whole jaxprs, by value (never by ``repr``).

:func:`literal_key` is what common-subexpression elimination compares literals by;
:func:`structure_key` is what the compiler caches loop bodies by: an eager ``fori_loop`` traces
its body again on every call, and each trace is a new jaxpr object that computes exactly what
the last one did. The key includes the user's line of each equation: two loops whose bodies
compute the same thing on different lines keep their own (warnings and errors from the
compiled body name the line).

Example:
    >>> import numpy as np, funcgrad
    >>> f = lambda x: x * 2.0 + 1.0
    >>> a = funcgrad.make_jaxpr(f)(np.ones(3))
    >>> b = funcgrad.make_jaxpr(f)(np.ones(3))
    >>> a is b, structure_key(a) == structure_key(b)
    (False, True)
    >>> structure_key(a) == structure_key(funcgrad.make_jaxpr(lambda x: x * 3.0)(np.ones(3)))
    False
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

import numpy

from funcgrad.ir import ClosedJaxpr, Jaxpr, Literal, Var

__all__ = ["literal_key", "structure_key"]

#: arrays with more elements than this are keyed by identity (or not at all), not by bytes
_BYTES_MAX_SIZE = 64


def _float_key(v: float) -> tuple:
    # -0.0 == 0.0 but they are different constants (1 / x tells them apart).
    return (v, math.copysign(1.0, v))


def literal_key(val: Any, by_identity: bool = True) -> Hashable | None:
    """A key equal for two literal values exactly when they are the same constant.

    Python scalars and small arrays are keyed by value (``-0.0`` and ``0.0`` differ); anything
    else by identity when ``by_identity`` (the caller must keep the value alive as long as
    the key), else None (no key). Cheap: no ``repr`` of arrays or dtypes.

    Example:
        >>> import numpy as np
        >>> literal_key(0.0) == literal_key(-0.0), literal_key(2) == literal_key(2)
        (False, True)
        >>> literal_key(np.float32(1.5)) == literal_key(np.float32(1.5))
        True
        >>> literal_key(np.zeros(1000), by_identity=False) is None
        True
    """
    t = type(val)
    if t is float:
        return (t, *_float_key(val))
    if t is int or t is bool or t is str or val is None:
        return (t, val)
    if t is complex:
        return (t, *_float_key(val.real), *_float_key(val.imag))
    if isinstance(val, numpy.generic):
        return (t, val.tobytes())
    if t is numpy.ndarray and val.size <= _BYTES_MAX_SIZE:
        return (t, val.dtype, val.shape, val.tobytes())
    if t is tuple:
        parts = tuple(literal_key(v, by_identity) for v in val)
        return None if any(p is None for p in parts) else (t, parts)
    if t is not numpy.ndarray:
        try:
            hash(val)
            return (t, val)
        except TypeError:
            pass
    return ("id", id(val)) if by_identity else None


def structure_key(closed: ClosedJaxpr) -> Hashable | None:
    """A key equal for two closed jaxprs that compute the same thing the same way, written
    on the same lines (same equations, parameters, literals, types and source lines, variables
    renamed), or None when the jaxpr holds values that cannot be keyed by value (consts, big
    array literals, array params)."""
    if closed.consts:
        return None
    return _jaxpr_key(closed.jaxpr)


def _jaxpr_key(j: Jaxpr) -> Hashable | None:
    num: dict[Var, int] = {}
    for v in (*j.constvars, *j.invars):
        num[v] = len(num)
    parts: list[Any] = [len(j.constvars), tuple((type(v.aval), v.aval) for v in num)]

    def atom(a: Any) -> Any:
        if type(a) is Var:
            return num[a]
        k = literal_key(a.val, by_identity=False)
        if k is None:
            raise _Unkeyable
        return ("lit", k, a.aval)

    try:
        for e in j.eqns:
            ins = tuple(atom(a) for a in e.invars)
            for v in e.outvars:
                num[v] = len(num)
            params = tuple((k, _param_key(p)) for k, p in sorted(e.params.items()))
            si = e.source_info
            parts.append((e.prim, ins, tuple((type(v.aval), v.aval) for v in e.outvars),
                          params, si and (si.filename, si.lineno, si.function)))
        parts.append(tuple(atom(a) for a in j.outvars))
    except _Unkeyable:
        return None
    return tuple(parts)


class _Unkeyable(Exception):
    pass


def _param_key(p: Any) -> Hashable:
    t = type(p)
    if t is ClosedJaxpr:
        k = structure_key(p)
        if k is None:
            raise _Unkeyable
        return ("closed", k)
    if t is Jaxpr:
        k = _jaxpr_key(p)
        if k is None:
            raise _Unkeyable
        return ("jaxpr", k)
    if t is tuple or t is list:
        return (t, tuple(_param_key(x) for x in p))
    if t is Literal:
        return ("lit", literal_key(p.val, by_identity=False), p.aval)
    k = literal_key(p, by_identity=False)
    if k is None:
        raise _Unkeyable
    return k
