"""Taylor mode: truncated Taylor series pushed through each primitive in one pass (``jet``).

A :class:`TaylorTracer` carries a primal ``x0`` and the *normalized* Taylor coefficients
``[x1, ..., xK]`` of a curve ``x(t) = x0 + x1 t + x2 t^2 + ...`` (``xk`` is the k-th
derivative divided by k!). A Taylor rule maps the inputs' coefficients to the output's:
``rule(primals, series, **params) -> (outs, out_series)`` where ``series[i]`` is a list of K
coefficients (an entry may be None: zero) or None for an input that does not depend on ``t``.
Rules are written with primitives and run with the parent trace current, so ``jet``
composes with ``grad``, ``jvp``, ``vmap`` and ``jit``.

Where a rule comes from, in order: the primitive's own entry in ``taylor_rules`` (registered
in its block: O(K^2) recurrences), else the first of ``generic_taylor_rules`` that accepts it
(linear primitives: the primitive of each coefficient; elementwise primitives: the ODE
``y' = sum_i df/dx_i x_i'`` with the partials' series from their JVP rules, O(K^3); anything
else: the series of ``(x, x')`` pushed through the primitive's JVP rule at order K-1, which
gives ``y' = J(x) x'``). The generic rules need operations, so :mod:`funcgrad.ops` registers
them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from funcgrad.avals import ShapedArray, get_aval
from funcgrad.core import Primitive, Trace, Tracer, _trace_var, bind

__all__ = [
    "TaylorTrace",
    "SeriesTracer",
    "TaylorTracer",
    "taylor_rules",
    "generic_taylor_rules",
    "get_taylor_rule",
    "taylor_flat",
    "rule_kind",
]

Series = list[Any] | None
TaylorRule = Callable[..., tuple[list[Any], list[Series]]]
#: primitive -> rule(primals, series, **params) -> (outs, out_series)
taylor_rules: dict[Primitive, TaylorRule] = {}
#: factories consulted in order for a primitive without its own rule: each returns a rule (and
#: a short name for the coverage listing) or None to pass.
generic_taylor_rules: list[Callable[[Primitive], tuple[TaylorRule, str] | None]] = []
_kinds: dict[Primitive, str] = {}


def get_taylor_rule(prim: Primitive) -> TaylorRule:
    """The Taylor rule of ``prim``: its own, else a generic one (see the module docstring)."""
    rule = taylor_rules.get(prim)
    if rule is not None:
        return rule
    for factory in generic_taylor_rules:
        found = factory(prim)
        if found is not None:
            rule, kind = found
            taylor_rules[prim] = rule
            _kinds[prim] = kind
            return rule
    raise LookupError(f"no Taylor rule for '{prim.name}'")  # ops registers a catch-all


def rule_kind(prim: Primitive) -> str:
    """How ``prim`` propagates Taylor series: "own rule", or the generic rule's name.

    Example:
        >>> import funcgrad
        >>> from funcgrad.ops.elementwise import exp_p
        >>> rule_kind(exp_p)
        'own rule'
    """
    if prim in taylor_rules and prim not in _kinds:
        return "own rule"
    get_taylor_rule(prim)
    return _kinds.get(prim, "own rule")


class SeriesTracer(Tracer):
    """Base of the Taylor-mode tracers: a primal (``primal``, set by the subclass) with
    coefficients around it; its value and abstract value are the primal's."""

    __slots__ = ("primal",)

    @property
    def aval(self) -> ShapedArray:
        return get_aval(self.primal)

    def to_concrete_value(self) -> Any:
        p = self.primal
        return p.to_concrete_value() if isinstance(p, Tracer) else p


class TaylorTracer(SeriesTracer):
    """A primal and the normalized Taylor coefficients of the curve through it."""

    __slots__ = ("series",)

    def __init__(self, trace: TaylorTrace, primal: Any, series: list[Any]) -> None:
        self._trace = trace
        self.primal = primal
        self.series = series


class TaylorTrace(Trace):
    """Pushes truncated Taylor series of order ``order`` through each primitive."""

    __slots__ = ("order",)
    user_name = "jet"

    def __init__(self, parent: Trace, order: int) -> None:
        super().__init__(parent)
        self.order = order

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict) -> list:
        primals: list[Any] = []
        series: list[Series] = []
        live = False
        for x in args:
            if type(x) is TaylorTracer and x._trace is self:
                primals.append(x.primal)
                series.append(x.series)
                live = True
            else:
                primals.append(x)
                series.append(None)
        token = _trace_var.set(self.parent)  # type: ignore[arg-type]
        try:
            if not live:
                return bind(prim, *primals, **params)
            outs, out_series = get_taylor_rule(prim)(primals, series, **params)
        finally:
            _trace_var.reset(token)
        return [o if s is None or all(c is None for c in s) else TaylorTracer(self, o, list(s))
                for o, s in zip(outs, out_series)]

    def unpack(self, x: Any) -> tuple[Any, list[Any] | None]:
        if type(x) is TaylorTracer and x._trace is self:
            return x.primal, x.series
        return x, None


def taylor_flat(
    f: Callable[..., Sequence[Any]], primals: Sequence[Any], series: Sequence[Series],
    order: int,
) -> tuple[list[Any], list[Series]]:
    """Push normalized coefficients (``series[i]``: ``order`` entries, or None) through flat
    ``f``; returns the outputs and their coefficients (None: independent of the curve)."""
    trace = TaylorTrace(_trace_var.get(), order)
    ins = [p if s is None else TaylorTracer(trace, p, list(s)) for p, s in zip(primals, series)]
    token = _trace_var.set(trace)
    try:
        outs = f(*ins)
    finally:
        _trace_var.reset(token)
    pairs = [trace.unpack(o) for o in outs]
    return [p for p, _ in pairs], [s for _, s in pairs]
