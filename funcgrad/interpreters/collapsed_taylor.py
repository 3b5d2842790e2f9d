"""Collapsed second-order Taylor mode: second coefficients along many directions, carried as
their sum (the engine of ``laplacian``).

Pushing ``x(t) = x0 + t v_i`` along ``n`` directions ``v_i`` gives each output the series
``y0 + y1_i t + y2_i t^2``; a Laplacian (``v_i`` the basis) or its Hutchinson estimate needs
only ``sum_i y2_i``. By the chain rule at order two, ``y2_i = f'(x0)[x2_i] + Q(x1_i)`` with
``Q`` quadratic, so the sum is ``f'(x0)[sum_i x2_i] + sum_i Q(x1_i)``: the second
coefficients can travel summed, one array instead of ``n``, with only the first coefficients
kept per direction. Through a matrix product with a fixed weight, ``Q`` is zero and the summed
coefficient costs one product where the uncollapsed series pays ``n`` ("collapsed Taylor
mode", Dangel et al. 2024; the forward Laplacian of Li et al. 2023 is this for MLPs).

A :class:`CollapsedTracer` carries ``x0``, the first coefficients stacked along a leading
axis of size ``n`` (or None: zero) and the summed second coefficient (or None). Each
primitive's step uses only rules that exist for every primitive: its Taylor rule
(:mod:`funcgrad.interpreters.taylor`), batched over the directions with a zero second
coefficient, gives the outputs' first coefficients and ``Q``; its JVP rule applied to the
summed second coefficients gives ``f'(x0)[sum_i x2_i]``. Rules bind with the parent trace
current, so this composes with ``grad``, ``vmap`` and ``jit`` around it.

Coefficients are normalized (``x2`` is half the second derivative), as ``jet``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from funcgrad.avals import get_aval
from funcgrad.compile.rules import roles
from funcgrad.core import Primitive, Trace, _trace_var, bind, bind1
from funcgrad.interpreters.batching import batch_flat
from funcgrad.interpreters.jvp import Zero, add_any_p, get_jvp_rule
from funcgrad.interpreters.taylor import SeriesTracer, get_taylor_rule

__all__ = ["CollapsedTracer", "CollapsedTaylorTrace", "collapsed_taylor_flat"]


class CollapsedTracer(SeriesTracer):
    """A primal, its first coefficients along the trace's directions (stacked on axis 0, or
    None) and the sum over the directions of its second coefficients (or None)."""

    __slots__ = ("firsts", "second")

    def __init__(self, trace: CollapsedTaylorTrace, primal: Any, firsts: Any,
                 second: Any) -> None:
        self._trace = trace
        self.primal = primal
        self.firsts = firsts
        self.second = second


def _lead(x: Any, d: int | None, n: int) -> Any:
    """Batched ``x`` (batch axis ``d``, None: the same for every direction) with the batch
    axis first."""
    shape = get_aval(x).shape
    if d is None:
        return bind1(roles["broadcast_in_dim"], x, shape=(n, *shape),
                     broadcast_dimensions=tuple(range(1, len(shape) + 1)))
    if d == 0:
        return x
    perm = (d, *[i for i in range(len(shape)) if i != d])
    return bind1(roles["transpose"], x, permutation=perm)


def _summed(x: Any, d: int | None, n: int) -> Any:
    """The sum over the batch axis ``d`` of batched ``x`` (None: n copies of ``x``)."""
    if d is None:
        return bind1(roles["mul"], x, float(n))
    return bind1(roles["reduce_sum"], x, axes=(d,))


def _add(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    return bind1(add_any_p, a, b)


class CollapsedTaylorTrace(Trace):
    """Pushes first coefficients along ``n`` directions and summed second coefficients
    through each primitive (see the module docstring)."""

    __slots__ = ("n",)
    user_name = "laplacian"

    def __init__(self, parent: Trace, n: int) -> None:
        super().__init__(parent)
        self.n = n

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict) -> list:
        primals: list[Any] = []
        firsts: list[Any] = []
        seconds: list[Any] = []
        for x in args:
            if type(x) is CollapsedTracer and x._trace is self:
                primals.append(x.primal)
                firsts.append(x.firsts)
                seconds.append(x.second)
            else:
                primals.append(x)
                firsts.append(None)
                seconds.append(None)
        token = _trace_var.set(self.parent)  # type: ignore[arg-type]
        try:
            if all(f is None for f in firsts) and all(s is None for s in seconds):
                return bind(prim, *primals, **params)
            outs, out_firsts, out_seconds = self._step(prim, primals, firsts, params)
            if any(s is not None for s in seconds):
                tangents = [Zero.from_primal(p) if s is None else s
                            for p, s in zip(primals, seconds)]
                _, t_outs = get_jvp_rule(prim)(primals, tangents, **params)
                out_seconds = [_add(q, None if type(t) is Zero else t)
                               for q, t in zip(out_seconds, t_outs)]
        finally:
            _trace_var.reset(token)
        return [o if f is None and s is None else CollapsedTracer(self, o, f, s)
                for o, f, s in zip(outs, out_firsts, out_seconds)]

    def _step(self, prim: Primitive, primals: list[Any], firsts: list[Any], params: dict
              ) -> tuple[list[Any], list[Any], list[Any]]:
        """Outputs, their first coefficients per direction and ``sum_i Q(x1_i)``, from the
        Taylor rule batched over the directions (second input coefficients zero)."""
        rule = get_taylor_rule(prim)
        live = [i for i, f in enumerate(firsts) if f is not None]
        layout: list[tuple[bool, bool]] = []  # per output: has a first / a second coefficient

        def per_direction(*vals: Any) -> list[Any]:
            series: list[Any] = [None] * len(primals)
            for i, x1 in zip(live, vals[len(primals):]):
                series[i] = [x1, None]
            outs, out_series = rule(list(vals[:len(primals)]), series, **params)
            flat = list(outs)
            layout.clear()
            for s in out_series:
                has1 = s is not None and s[0] is not None
                has2 = s is not None and s[1] is not None
                layout.append((has1, has2))
                if has1:
                    flat.append(s[0])
                if has2:
                    flat.append(s[1])
            return flat

        vals = primals + [firsts[i] for i in live]
        dims = [None] * len(primals) + [0] * len(live)
        flat, flat_dims = batch_flat(per_direction, vals, dims, self.n, None)
        n_out = len(layout)
        outs = flat[:n_out]
        if any(d is not None for d in flat_dims[:n_out]):
            # An output value that varies with the direction cannot come from a rule (it is
            # the primal's); recompute it plainly rather than pick one copy.
            outs = bind(prim, *primals, **params)
        out_firsts: list[Any] = []
        out_seconds: list[Any] = []
        k = n_out
        for has1, has2 in layout:
            f = q = None
            if has1:
                f = _lead(flat[k], flat_dims[k], self.n)
                k += 1
            if has2:
                q = _summed(flat[k], flat_dims[k], self.n)
                k += 1
            out_firsts.append(f)
            out_seconds.append(q)
        return list(outs), out_firsts, out_seconds

    def unpack(self, x: Any) -> tuple[Any, Any, Any]:
        if type(x) is CollapsedTracer and x._trace is self:
            return x.primal, x.firsts, x.second
        return x, None, None


def collapsed_taylor_flat(
    f: Callable[..., Sequence[Any]], primals: Sequence[Any], firsts: Sequence[Any], n: int,
) -> tuple[list[Any], list[Any], list[Any]]:
    """Push ``n`` directions through flat ``f`` at ``primals``: ``firsts[i]`` stacks input
    i's first coefficients along a leading axis of size ``n`` (None: the input does not move);
    second coefficients start at zero. Returns the outputs, their first coefficients (stacked,
    or None) and the sums over the directions of their second coefficients (or None: zero).

    Example:
        >>> import numpy as np
        >>> from funcgrad.ops.elementwise import mul
        >>> from funcgrad.ops.reductions import reduce_sum
        >>> outs, firsts, seconds = collapsed_taylor_flat(
        ...     lambda x: [reduce_sum(mul(x, x))], [np.array([1.0, 2.0])], [np.eye(2)], 2)
        >>> float(outs[0]), float(2 * seconds[0])   # |x|^2 and its Laplacian
        (5.0, 4.0)
    """
    trace = CollapsedTaylorTrace(_trace_var.get(), n)
    ins = [p if v is None else CollapsedTracer(trace, p, v, None)
           for p, v in zip(primals, firsts)]
    token = _trace_var.set(trace)
    try:
        outs = f(*ins)
    finally:
        _trace_var.reset(token)
    triples = [trace.unpack(o) for o in outs]
    return [t[0] for t in triples], [t[1] for t in triples], [t[2] for t in triples]
