"""Generic jaxpr-to-jaxpr transformations shared by every higher-order primitive.

A higher-order primitive (``jit``, ``cond``, ``while_loop``, ``scan``, ``custom_jvp``...) holds
closed jaxprs as params. Its rules do not re-implement differentiation or batching: they ask
this module for a transformed jaxpr and bind themselves again with it.

* :func:`jvp_jaxpr` -- forward mode: ``(primals, nonzero tangents) -> (primal outs, tangents)``.
* :func:`partial_eval_jaxpr` -- split into a part computable from known inputs now (which also
  emits residuals) and a part that needs the unknown inputs (linearize uses it).
* :func:`linearize_jaxpr` -- :func:`jvp_jaxpr` then :func:`partial_eval_jaxpr` on the tangents.
* :func:`transpose_jaxpr` -- reverse mode of a jaxpr linear in some inputs.
* :func:`batch_jaxpr` -- vmap, batch axes at the boundary in given positions in, 0 out.
* :func:`dce_closed_jaxpr` -- drop unused outputs (and the work only they needed).
* :func:`hoist_tracer_consts` -- turn consts that are tracers of outer transformations
  (closures over a ``grad``/``vmap`` variable) into explicit leading inputs.

Every transformation is memoised (:func:`weak_memo`) on the identity of the closed jaxpr --
held weakly, so entries go with the jaxpr -- and its static flags, and returns the same object
for the same request, so chains of them (jvp, then partial eval, then
DCE, then transpose) hit their caches on every later call. They require closed jaxprs whose
consts are concrete arrays (run :func:`hoist_tracer_consts` first), which is what makes the
results independent of the transformation they are requested under.

Example:
    >>> import numpy as np, funcgrad
    >>> from funcgrad.ops.elementwise import sin
    >>> closed = funcgrad.make_jaxpr(sin)(np.ones(3))
    >>> jvp_closed, out_nonzero = jvp_jaxpr(closed, (True,), False)
    >>> [a.str_short() for a in jvp_closed.in_avals], out_nonzero
    (['f64[3]', 'f64[3]'], (True,))
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from funcgrad._cache import weak_lru_cache
from funcgrad.avals import ShapedArray, float0
from funcgrad.core import Tracer, eval_trace, set_current_trace
from funcgrad.interpreters.batching import batch_flat
from funcgrad.interpreters.jvp import Zero, jvp_flat, tangent_aval, zeros_like_aval
from funcgrad.interpreters.staging import (
    PartialEvalTrace,
    StagingTrace,
    StagingTracer,
    trace_to_jaxpr,
)
from funcgrad.interpreters.transpose import UndefinedPrimal, backward_pass
from funcgrad.ir import (
    ClosedJaxpr,
    Jaxpr,
    Var,
    dce_jaxpr,
    effectful_primitives,
    eval_jaxpr,
)

__all__ = [
    "jvp_jaxpr",
    "partial_eval_jaxpr",
    "linearize_jaxpr",
    "transpose_jaxpr",
    "batch_jaxpr",
    "dce_closed_jaxpr",
    "hoist_tracer_consts",
    "eval_closed",
    "has_effects",
    "shape_helpers",
    "clear_caches",
    "weak_memo",
]

#: Operations the batching boundary needs but this layer may not import (interpreters sit
#: below ops). ``funcgrad.ops.jit`` registers them: ``"moveaxis"(x, src, dst)`` and
#: ``"broadcast_in_dim"(x, shape, broadcast_dimensions)``.
shape_helpers: dict[str, Callable[..., Any]] = {}


#: Memoise ``fn(closed, *flags)`` on the identity of ``closed`` (held weakly: entries go when
#: the jaxpr dies, or past 4096 entries, least recently used first) and the hashable
#: ``flags``. Results must not reference ``closed``.
weak_memo = weak_lru_cache(maxsize=4096)


def _helper(name: str) -> Callable[..., Any]:
    fn = shape_helpers.get(name)
    if fn is None:
        raise RuntimeError(
            f"jaxpr_rules: the shape helper {name!r} is not registered; import funcgrad.ops "
            "(funcgrad.ops.jit registers it)"
        )
    return fn


def eval_closed(closed: ClosedJaxpr, *args: Any) -> list[Any]:
    """Evaluate ``closed`` on the current trace (so an enclosing transformation sees it)."""
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def _check_concrete(closed: ClosedJaxpr, what: str) -> None:
    for c in closed.consts:
        if isinstance(c, Tracer):
            raise TypeError(
                f"{what}: the closed jaxpr has a tracer among its consts; convert such consts "
                "to inputs with jaxpr_rules.hoist_tracer_consts before transforming it"
            )


def _as_flags(flags: bool | Sequence[bool], n: int, what: str) -> tuple[bool, ...]:
    if isinstance(flags, bool):
        return (flags,) * n
    out = tuple(bool(f) for f in flags)
    if len(out) != n:
        raise ValueError(f"{what}: expected {n} flags, got {len(out)}")
    return out


def _staged_zeros(aval: ShapedArray) -> Any:
    # A concrete zeros array on the value's device; it becomes a const of the new jaxpr.
    return zeros_like_aval(aval.strip_weak())


# ---------------------------------------------------------------------------------------------
# consts


def hoist_tracer_consts(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list[Any]]:
    """Move consts that are tracers into leading invars; returns ``(new_closed, tracers)``.

    A function traced under an outer transformation may close over that transformation's
    tracers; they must enter a call primitive as explicit inputs so the outer trace sees (and
    differentiates / batches) them. Only concrete arrays stay consts.

    Example:
        >>> import numpy as np, funcgrad
        >>> closed = funcgrad.make_jaxpr(lambda x: x)(np.ones(2))
        >>> hoist_tracer_consts(closed)[1]
        []
    """
    tracer_idx = [i for i, c in enumerate(closed.consts) if isinstance(c, Tracer)]
    if not tracer_idx:
        return closed, []
    j = closed.jaxpr
    hoisted = set(tracer_idx)
    constvars = [v for i, v in enumerate(j.constvars) if i not in hoisted]
    consts = [c for i, c in enumerate(closed.consts) if i not in hoisted]
    new_invars = [j.constvars[i] for i in tracer_idx] + list(j.invars)
    new = Jaxpr(constvars, new_invars, j.outvars, j.eqns)
    return ClosedJaxpr(new, consts), [closed.consts[i] for i in tracer_idx]


def has_effects(jaxpr: Jaxpr) -> bool:
    """Whether ``jaxpr`` (or a jaxpr nested in its params) holds an effectful primitive."""
    for eqn in jaxpr.eqns:
        if eqn.prim in effectful_primitives:
            return True
        for p in eqn.params.values():
            if isinstance(p, ClosedJaxpr) and has_effects(p.jaxpr):
                return True
            if isinstance(p, Jaxpr) and has_effects(p):
                return True
    return False


# ---------------------------------------------------------------------------------------------
# DCE


def dce_closed_jaxpr(
    closed: ClosedJaxpr, used_outputs: Sequence[bool], prune_invars: bool = True
) -> tuple[ClosedJaxpr, tuple[bool, ...]]:
    """Keep only the outputs marked in ``used_outputs``; returns ``(jaxpr, used_inputs)``.

    With ``prune_invars`` the inputs nothing reads anymore are dropped from the new jaxpr
    (``used_inputs`` says which were kept). Consts nothing reads are dropped always.

    Example:
        >>> import numpy as np, funcgrad
        >>> closed = funcgrad.make_jaxpr(lambda x, y: (x, y))(np.ones(2), np.ones(3))
        >>> new, used = dce_closed_jaxpr(closed, (False, True))
        >>> used, len(new.in_avals)
        ((False, True), 1)
    """
    return _dce_closed(closed, tuple(bool(u) for u in used_outputs), bool(prune_invars))


@weak_memo
def _dce_closed(
    closed: ClosedJaxpr, used_outputs: tuple[bool, ...], prune_invars: bool
) -> tuple[ClosedJaxpr, tuple[bool, ...]]:
    new, used_in = dce_jaxpr(closed.jaxpr, list(used_outputs), prune_invars=prune_invars)
    keep = set(new.constvars)
    consts = [c for v, c in zip(closed.jaxpr.constvars, closed.consts) if v in keep]
    return ClosedJaxpr(new, consts), tuple(used_in)


# ---------------------------------------------------------------------------------------------
# JVP


def jvp_jaxpr(
    closed: ClosedJaxpr,
    nonzero_tangents: Sequence[bool],
    instantiate: bool | Sequence[bool],
) -> tuple[ClosedJaxpr, tuple[bool, ...]]:
    """Forward mode of ``closed``.

    The result takes ``(*primals, *tangents)`` -- one tangent per input marked in
    ``nonzero_tangents`` (the others are symbolic zeros) -- and returns
    ``(*primal_outs, *tangent_outs)`` with one tangent per output marked in the returned
    ``out_nonzero``. ``instantiate`` forces (per output, or for all) a tangent output even
    when it is symbolically zero; outputs without a float tangent (integers) never get one.

    Example:
        >>> import numpy as np, funcgrad
        >>> from funcgrad.ops.elementwise import mul
        >>> closed = funcgrad.make_jaxpr(mul)(np.ones(2), np.ones(2))
        >>> new, nz = jvp_jaxpr(closed, (True, False), False)
        >>> len(new.in_avals), len(new.out_avals), nz
        (3, 2, (True,))
    """
    nin, nout = len(closed.in_avals), len(closed.out_avals)
    nz = _as_flags(nonzero_tangents, nin, "jvp_jaxpr nonzero_tangents")
    inst = _as_flags(instantiate, nout, "jvp_jaxpr instantiate")
    return _jvp_jaxpr(closed, nz, inst)


@weak_memo
def _jvp_jaxpr(
    closed: ClosedJaxpr, nonzero: tuple[bool, ...], instantiate: tuple[bool, ...]
) -> tuple[ClosedJaxpr, tuple[bool, ...]]:
    _check_concrete(closed, "jvp_jaxpr")
    in_avals = closed.in_avals
    n = len(in_avals)
    t_in_avals = [tangent_aval(a) for a in in_avals]
    store: list[tuple[bool, ...]] = []

    def f(*args: Any) -> list[Any]:
        primals = args[:n]
        it = iter(args[n:])
        tangents = [next(it) if nz else Zero(ta) for ta, nz in zip(t_in_avals, nonzero)]
        p_out, t_out = jvp_flat(functools.partial(eval_closed, closed), primals, tangents)
        outs = list(p_out)
        out_nz = []
        for t, inst in zip(t_out, instantiate):
            if type(t) is Zero:
                if inst and t.aval.dtype != float0:
                    outs.append(_staged_zeros(t.aval))
                    out_nz.append(True)
                else:
                    out_nz.append(False)
            else:
                outs.append(t)
                out_nz.append(True)
        store.append(tuple(out_nz))
        return outs

    avals = list(in_avals) + [ta for ta, nz in zip(t_in_avals, nonzero) if nz]
    new = trace_to_jaxpr(f, avals, eval_trace)
    return new, store[0]


# ---------------------------------------------------------------------------------------------
# Partial evaluation


def partial_eval_jaxpr(
    closed: ClosedJaxpr,
    unknowns: Sequence[bool],
    instantiate: bool | Sequence[bool] = False,
) -> tuple[ClosedJaxpr, ClosedJaxpr, tuple[bool, ...], int]:
    """Split ``closed`` by which inputs are known now.

    Returns ``(known, unknown, out_unknowns, num_residuals)``:

    * ``known`` maps the known inputs to the known outputs followed by ``num_residuals``
      residuals (the known values the rest needs);
    * ``unknown`` maps ``(*residuals, *unknown_inputs)`` to the unknown outputs;
    * ``out_unknowns[i]`` says whether output ``i`` comes from ``unknown``.

    Operations reading only known values all go to ``known``; ``unknown`` holds exactly the
    operations that touch an unknown input (for a JVP jaxpr split on its tangents, the linear
    part). Nested higher-order primitives with mixed inputs are split recursively through
    their ``partial_eval_rules``. ``instantiate`` makes (per output, or all) known outputs
    unknown (passed through as residuals).

    Example:
        >>> import numpy as np, funcgrad
        >>> from funcgrad.ops.elementwise import mul, sin
        >>> closed = funcgrad.make_jaxpr(lambda x, t: mul(sin(x), t))(np.ones(2), np.ones(2))
        >>> known, unknown, out_unk, nres = partial_eval_jaxpr(closed, (False, True))
        >>> [e.prim.name for e in known.eqns], [e.prim.name for e in unknown.eqns], out_unk
        (['sin'], ['mul'], (True,))
    """
    nin, nout = len(closed.in_avals), len(closed.out_avals)
    unk = _as_flags(unknowns, nin, "partial_eval_jaxpr unknowns")
    inst = _as_flags(instantiate, nout, "partial_eval_jaxpr instantiate")
    return _partial_eval_jaxpr(closed, unk, inst)


@weak_memo
def _partial_eval_jaxpr(
    closed: ClosedJaxpr, unknowns: tuple[bool, ...], instantiate: tuple[bool, ...]
) -> tuple[ClosedJaxpr, ClosedJaxpr, tuple[bool, ...], int]:
    _check_concrete(closed, "partial_eval_jaxpr")
    known_trace = StagingTrace(eval_trace)
    unknown_trace = PartialEvalTrace(known_trace)
    args: list[Any] = []
    for a, u in zip(closed.in_avals, unknowns):
        args.append(unknown_trace.new_arg(a) if u else known_trace.new_arg(a))
    with set_current_trace(unknown_trace):
        outs = eval_closed(closed, *args)

    known_outs: list[Any] = []
    unknown_outs: list[Any] = []
    out_unknowns: list[bool] = []
    for o, inst in zip(outs, instantiate):
        if isinstance(o, StagingTracer) and o._trace is unknown_trace:
            unknown_outs.append(o)
            out_unknowns.append(True)
        elif inst:
            unknown_outs.append(o)  # becomes a residual (or a literal) of the unknown part
            out_unknowns.append(True)
        else:
            known_outs.append(o)
            out_unknowns.append(False)

    u_closed = unknown_trace.to_jaxpr(unknown_outs)
    uj = u_closed.jaxpr
    res_vars: list[Var] = []
    residuals: list[Any] = []
    constvars: list[Var] = []
    consts: list[Any] = []
    for v, c in zip(uj.constvars, u_closed.consts):
        if isinstance(c, Tracer):  # a value of the known part: a residual
            res_vars.append(v)
            residuals.append(c)
        else:
            constvars.append(v)
            consts.append(c)
    unknown = ClosedJaxpr(Jaxpr(constvars, res_vars + list(uj.invars), uj.outvars, uj.eqns),
                          consts)
    known = known_trace.to_jaxpr(known_outs + residuals)
    return known, unknown, tuple(out_unknowns), len(residuals)


def linearize_jaxpr(
    closed: ClosedJaxpr, nonzero_tangents: Sequence[bool]
) -> tuple[ClosedJaxpr, ClosedJaxpr, tuple[bool, ...], int]:
    """JVP then partial evaluation with the tangents unknown.

    Returns ``(primal, linear, out_nonzero, num_residuals)``: ``primal`` maps the primals to
    ``(*primal_outs, *residuals)`` (plus any tangent output that does not depend on the input
    tangents, instantiated as residual); ``linear`` maps ``(*residuals, *nonzero_tangents)``
    to the nonzero output tangents, and is linear in the tangents.

    Example:
        >>> import numpy as np, funcgrad
        >>> from funcgrad.ops.elementwise import sin
        >>> closed = funcgrad.make_jaxpr(sin)(np.ones(2))
        >>> primal, linear, nz, nres = linearize_jaxpr(closed, (True,))
        >>> [e.prim.name for e in linear.eqns], nz
        (['mul'], (True,))
    """
    nin = len(closed.in_avals)
    nz = _as_flags(nonzero_tangents, nin, "linearize_jaxpr nonzero_tangents")
    return _linearize_jaxpr(closed, nz)


@weak_memo
def _linearize_jaxpr(
    closed: ClosedJaxpr, nonzero: tuple[bool, ...]
) -> tuple[ClosedJaxpr, ClosedJaxpr, tuple[bool, ...], int]:
    jvp_closed, out_nz = _jvp_jaxpr(closed, nonzero, (False,) * len(closed.out_avals))
    n_p = len(closed.in_avals)
    unknowns = (False,) * n_p + (True,) * sum(nonzero)
    n_out = len(closed.out_avals)
    inst = (False,) * n_out + (True,) * sum(out_nz)
    known, linear, _, nres = _partial_eval_jaxpr(jvp_closed, unknowns, inst)
    return known, linear, out_nz, nres


# ---------------------------------------------------------------------------------------------
# Transpose


def transpose_jaxpr(
    closed: ClosedJaxpr,
    linear_inputs: Sequence[bool],
    nonzero_cts: Sequence[bool] | None = None,
) -> ClosedJaxpr:
    """Reverse mode of ``closed``, linear in the inputs marked in ``linear_inputs``.

    The result maps ``(*non_linear_inputs, *output_cotangents)`` to one cotangent per linear
    input (symbolic zeros instantiated as zero arrays). With ``nonzero_cts`` only the
    cotangents of the marked outputs are passed; the others are zero.

    Example:
        >>> import numpy as np, funcgrad
        >>> from funcgrad.ops.elementwise import mul
        >>> closed = funcgrad.make_jaxpr(mul)(np.ones(2), np.ones(2))
        >>> t = transpose_jaxpr(closed, (False, True))
        >>> [a.str_short() for a in t.in_avals], [a.str_short() for a in t.out_avals]
        (['f64[2]', 'f64[2]'], ['f64[2]'])
    """
    nin, nout = len(closed.in_avals), len(closed.out_avals)
    lin = _as_flags(linear_inputs, nin, "transpose_jaxpr linear_inputs")
    nz = _as_flags(True if nonzero_cts is None else nonzero_cts, nout,
                   "transpose_jaxpr nonzero_cts")
    return _transpose_jaxpr(closed, lin, nz)


@weak_memo
def _transpose_jaxpr(
    closed: ClosedJaxpr, linear: tuple[bool, ...], nonzero_cts: tuple[bool, ...]
) -> ClosedJaxpr:
    _check_concrete(closed, "transpose_jaxpr")
    in_avals, out_avals = closed.in_avals, closed.out_avals
    k = sum(1 for lin in linear if not lin)

    def f(*args: Any) -> list[Any]:
        known = iter(args[:k])
        ct_it = iter(args[k:])
        prim_args = [UndefinedPrimal(a) if lin else next(known) for a, lin in zip(in_avals, linear)]
        cts = [next(ct_it) if nz else Zero(a) for a, nz in zip(out_avals, nonzero_cts)]
        in_cts = backward_pass(closed.jaxpr, closed.consts, prim_args, cts)
        out = []
        for ct, a, lin in zip(in_cts, in_avals, linear):
            if not lin:
                continue
            if ct is None or type(ct) is Zero:
                ct = _staged_zeros(a)
            out.append(ct)
        return out

    avals = [a for a, lin in zip(in_avals, linear) if not lin]
    avals += [a for a, nz in zip(out_avals, nonzero_cts) if nz]
    return trace_to_jaxpr(f, avals, eval_trace)


# ---------------------------------------------------------------------------------------------
# Batching


def batch_jaxpr(
    closed: ClosedJaxpr,
    axis_size: int,
    in_dims: Sequence[int | None],
    instantiate: bool | Sequence[bool] = False,
) -> tuple[ClosedJaxpr, tuple[int | None, ...]]:
    """vmap of ``closed``: inputs batched at ``in_dims`` (None: not batched).

    Returns the batched jaxpr and the batch dim of each output: 0, or None for an output
    that does not depend on the batch (unless ``instantiate`` asks for it batched, in which
    case it is broadcast along a new leading axis).

    Example:
        >>> import numpy as np, funcgrad
        >>> from funcgrad.ops.elementwise import sin
        >>> closed = funcgrad.make_jaxpr(sin)(np.ones(3))
        >>> new, out_dims = batch_jaxpr(closed, 5, (1,))
        >>> [a.str_short() for a in new.in_avals], [a.str_short() for a in new.out_avals], out_dims
        (['f64[3,5]'], ['f64[5,3]'], (0,))
    """
    nin, nout = len(closed.in_avals), len(closed.out_avals)
    if len(in_dims) != nin:
        raise ValueError(f"batch_jaxpr: expected {nin} in_dims, got {len(in_dims)}")
    dims = tuple(None if d is None else int(d) for d in in_dims)
    inst = _as_flags(instantiate, nout, "batch_jaxpr instantiate")
    return _batch_jaxpr(closed, int(axis_size), dims, inst)


@weak_memo
def _batch_jaxpr(
    closed: ClosedJaxpr,
    axis_size: int,
    in_dims: tuple[int | None, ...],
    instantiate: tuple[bool, ...],
) -> tuple[ClosedJaxpr, tuple[int | None, ...]]:
    _check_concrete(closed, "batch_jaxpr")
    in_avals = []
    dims: list[int | None] = []
    for a, d in zip(closed.in_avals, in_dims):
        if d is None:
            in_avals.append(a)
            dims.append(None)
            continue
        d = d % (a.ndim + 1)
        in_avals.append(a.update(shape=a.shape[:d] + (axis_size,) + a.shape[d:]))
        dims.append(d)
    store: list[tuple[int | None, ...]] = []

    def f(*args: Any) -> list[Any]:
        outs, out_dims = batch_flat(functools.partial(eval_closed, closed), args, dims, axis_size)
        res = []
        final: list[int | None] = []
        for o, d, inst, a in zip(outs, out_dims, instantiate, closed.out_avals):
            if d is None:
                if inst:
                    o = _helper("broadcast_in_dim")(
                        o, (axis_size,) + a.shape, tuple(range(1, a.ndim + 1))
                    )
                    d = 0
            elif d != 0:
                o = _helper("moveaxis")(o, d, 0)
                d = 0
            res.append(o)
            final.append(d)
        store.append(tuple(final))
        return res

    new = trace_to_jaxpr(f, in_avals, eval_trace)
    return new, store[0]


def clear_caches() -> None:
    """Forget every memoised transformation (tests use it to measure tracing)."""
    for fn in (_dce_closed, _jvp_jaxpr, _partial_eval_jaxpr, _linearize_jaxpr,
               _transpose_jaxpr, _batch_jaxpr):
        fn.cache_clear()
