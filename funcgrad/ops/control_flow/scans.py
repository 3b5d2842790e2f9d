"""``scan`` and ``map``: the primitive ``scan_p``, a loop with a carry over stacked inputs.

``scan_p`` binds ``(*consts, *init, *xs, jaxpr, num_consts, num_carry, length, reverse)`` where
``jaxpr`` maps ``(*consts, *carry, *x) -> (*carry, *y)``. With an int ``length`` the ``xs`` and
``ys`` are stacked along a leading axis of that size. With ``length=None`` the loop runs over
*tapes* (:mod:`funcgrad.ops.control_flow._tape`): ``xs`` are tapes of equal, run-time length and
each ``y`` is collected into a tape. That form is the linear part of a differentiated
``while_loop``; it shares every rule with the ordinary scan:

- JVP: the body's JVP jaxpr, the carry's nonzero tangents found by fixed point;
- partial evaluation (linearize): the known part of the body runs now in a known scan that also
  stacks the per-iteration residuals; residuals that depend only on the constants are computed
  once, outside the loop; the unknown (tangent) part is staged as a scan over the residuals;
- transpose: a scan in the opposite direction over the transposed body, whose carry holds the
  carry's cotangent and the accumulated cotangents of linear constants;
- batching: the batched body, the carry's batching found by fixed point.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from funcgrad import compile as _compile
from funcgrad._cache import weak_lru_cache
from funcgrad.avals import ShapedArray, float0, get_aval
from funcgrad.backend import operator_index, xp_for
from funcgrad.core import Primitive, Tracer, bind, eval_trace, set_current_trace
from funcgrad.errors import MissingRuleError, ShapeError, user_source_info
from funcgrad.interpreters import batching
from funcgrad.interpreters import cost as _cost
from funcgrad.interpreters import jaxpr_rules as jr
from funcgrad.interpreters.jvp import (
    Zero,
    add_tangents,
    jvp_rules,
    tangent_aval,
    zeros_like_aval,
)
from funcgrad.interpreters.staging import (
    PartialEvalTrace,
    StagingTracer,
    partial_eval_rules,
    trace_to_jaxpr,
)
from funcgrad.interpreters.transpose import deftranspose, is_undefined, linear_primitives
from funcgrad.ir import (
    ClosedJaxpr,
    Eqn,
    Jaxpr,
    Literal,
    Var,
    dce_closed_jaxpr,
    dce_jaxpr,
    dce_rules,
)
from funcgrad.ops import shape as _shape
from funcgrad.ops._batching_util import bdim_at_front
from funcgrad.ops.control_flow._common import (
    COMPILE_AFTER,
    as_output,
    check_carry_types,
    compiled,
    keep_weak,
    out_xp,
    reorder,
    runner,
    same_type,
    trace_fun,
    weak_scalar_slots,
)
from funcgrad.ops.control_flow._tape import Tape, TapeAval, ZeroTape
from funcgrad.ops.elementwise import convert_element_type
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = ["scan", "map", "scan_p", "stack_aval", "unstack_aval", "invariant_outputs"]

scan_p = Primitive("scan", multiple_results=True, carries_jaxprs=True)


def stack_aval(a: ShapedArray, length: int | None) -> ShapedArray:
    """The abstract value of ``length`` values of ``a`` stacked (a tape when not an array)."""
    if length is None or type(a) is TapeAval:
        return TapeAval(a)
    return ShapedArray((length,) + a.shape, a.dtype, a.weak_type, a.device)


def unstack_aval(a: ShapedArray) -> ShapedArray:
    """The abstract value of one entry of stacked ``a``."""
    if type(a) is TapeAval:
        return a.elem
    return a.update(shape=a.shape[1:])


# ---------------------------------------------------------------------------------------------
# Public wrappers


def _leading_sizes(xs: Any) -> tuple[list[Any], Any, list[ShapedArray], list[int], list[str]]:
    pairs, tree = tree_util.tree_flatten_with_path(xs)
    leaves = [x for _, x in pairs]
    paths = [tree_util.keystr(p) for p, _ in pairs]
    avals, sizes = [], []
    for p, x in zip(paths, leaves):
        try:
            a = get_aval(x)
        except TypeError:
            raise TypeError(
                f"scan: xs must be arrays or pytrees of arrays; xs{p} is a {type(x).__name__}"
            ) from None
        if a.ndim == 0:
            raise ValueError(
                f"scan: xs{p} is a scalar ({a.str_short()}); every leaf of xs needs a leading "
                "axis to scan over")
        avals.append(a)
        sizes.append(a.shape[0])
    return leaves, tree, avals, sizes, paths


def scan(
    f: Callable[[Any, Any], tuple[Any, Any]],
    init: Any,
    xs: Any = None,
    length: int | None = None,
    reverse: bool = False,
    unroll: int | bool = 1,
    _split_transpose: bool = False,
) -> tuple[Any, Any]:
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns ``(carry, ys)``.

    ``init`` and the carry ``f`` returns must have the same pytree structure, shapes and
    dtypes; the ``y`` of each step are stacked into ``ys``. ``xs`` may be a pytree (or None
    with ``length``); ``reverse=True`` runs from the last entry to the first (``ys`` keep
    the order of ``xs``). ``unroll`` is accepted for JAX compatibility (the loop runs in
    Python either way). ``_split_transpose`` is JAX's experimental switch for how its
    transposed loop is laid out in memory; results are the same either way, so it is accepted
    and has no effect. Differentiable (forward, reverse, any order) and batchable.

    Example:
        >>> import numpy as np
        >>> total, partial_sums = scan(lambda c, x: (c + x, c + x), 0.0, np.arange(4.0))
        >>> float(total), partial_sums.tolist()
        (6.0, [0.0, 1.0, 3.0, 6.0])
    """
    return _scan(f, init, xs, length, reverse, unroll, "scan", "f")


def _scan(f, init, xs, length, reverse, unroll, what: str, fname: str):
    if not callable(f):
        raise TypeError(f"{what}: {fname} must be callable, got {type(f).__name__}")
    if isinstance(unroll, bool):
        pass
    elif not isinstance(unroll, int) or unroll < 0:
        raise ValueError(f"{what}: unroll must be a non-negative int or a bool, got {unroll!r}")
    elif unroll == 0:
        unroll = 1  # JAX: 0 unrolls nothing, as 1 does
    x_leaves, x_tree, x_avals, sizes, x_paths = _leading_sizes(xs)
    if length is not None:
        if isinstance(length, Tracer):
            raise TypeError(f"{what}: length must be a static Python int, got a traced value")
        try:
            length = operator_index(length)  # 3.5 must not become 3
        except TypeError:
            raise TypeError(f"{what}: length must be an int, got {length!r}") from None
        if length < 0:
            raise ValueError(f"{what}: length must be non-negative, got {length}")
    given = length is not None
    for p, s in zip(x_paths, sizes):
        if length is None:
            length = s
        elif s != length:
            first = f"length={length}" if given else f"xs{x_paths[0]} has {sizes[0]}"
            raise ValueError(
                f"{what}: xs have inconsistent leading axis sizes: {first} but xs{p} has {s}")
    if length is None:
        raise ValueError(f"{what}: got no xs to scan over and no `length`; pass length=")
    init_pairs, init_tree = tree_util.tree_flatten_with_path(init)
    init_leaves = [x for _, x in init_pairs]
    for p, x in init_pairs:
        try:
            get_aval(x)
        except TypeError:
            raise TypeError(
                f"{what}: the carry must be arrays or pytrees of arrays; init"
                f"{tree_util.keystr(p)} is a {type(x).__name__}") from None
    xs_one = [unstack_aval(a) for a in x_avals]

    def body(carry: Any, x: Any) -> tuple[Any, Any]:
        out = f(carry, x)
        if not isinstance(out, tuple | list) or len(out) != 2:
            raise TypeError(
                f"{what}: {fname} must return a pair (new_carry, y), got "
                f"{type(out).__name__}" + (f" of length {len(out)}"
                                           if isinstance(out, tuple | list) else ""))
        return (out[0], out[1])

    args_tree = tree_util.treedef_tuple([init_tree, x_tree])
    origins = [f"the carry{tree_util.keystr(p)} of {fname}" for p, _ in init_pairs]
    origins += [f"x{p} of {fname}" for p in x_paths]
    for attempt in range(2):
        init_avals = [get_aval(x) for x in init_leaves]
        traced = trace_fun(body, args_tree, init_avals + xs_one, f"{what} {fname}", origins,
                           carry=len(init_leaves))
        carry_tree, y_tree = tree_util.treedef_children(traced.out_tree)
        n_carry = len(init_leaves)
        out_avals = traced.out_avals
        if attempt == 0 and carry_tree == init_tree and _promote_weak(
                init_leaves, init_avals, out_avals[:n_carry]):
            continue
        check_carry_types(what, init_tree, init_avals, carry_tree, out_avals[:n_carry],
                          out_name=f"{fname}'s output carry")
        break
    outs = bind(scan_p, *traced.consts, *init_leaves, *x_leaves, jaxpr=traced.jaxpr,
                num_consts=len(traced.consts), num_carry=n_carry, length=length,
                reverse=bool(reverse))
    return (tree_util.tree_unflatten(carry_tree, outs[:n_carry]),
            tree_util.tree_unflatten(y_tree, outs[n_carry:]))


def _promote_weak(leaves: list[Any], in_avals: Sequence[ShapedArray],
                  out_avals: Sequence[ShapedArray]) -> bool:
    """Cast weakly typed initial carries (Python scalars) to the dtype the body gives them.

    ``while_loop(..., 0.0)`` with a float32 body should carry float32, as in JAX.
    """

    changed = False
    for i, (a, b) in enumerate(zip(in_avals, out_avals)):
        if a.weak_type and a.shape == b.shape and a.dtype != b.dtype and type(b) is not TapeAval:
            leaves[i] = convert_element_type(leaves[i], b.dtype)
            changed = True
    return changed


def map(f: Callable[[Any], Any], xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001
    """``f`` applied to each entry along the leading axis of ``xs``, results stacked.

    Like ``jax.lax.map``: a :func:`scan` without a carry (one ``f`` call traced, run
    per entry). With ``batch_size=b``, ``f`` is vmapped over blocks of ``b`` entries and the
    scan runs over the blocks (a remainder block is vmapped on its own): less loop overhead
    for more memory.

    Example:
        >>> import numpy as np
        >>> map(lambda x: x * x, np.arange(3.0)).tolist()
        [0.0, 1.0, 4.0]
        >>> map(lambda x: x * x, np.arange(5.0), batch_size=2).tolist()
        [0.0, 1.0, 4.0, 9.0, 16.0]
    """
    if not callable(f):
        raise TypeError(f"map: f must be callable, got {type(f).__name__}")
    if batch_size:  # JAX: None and 0 both map one element at a time
        return _batched_map(f, xs, batch_size)
    _, ys = _scan(lambda c, x: ((), f(x)), (), xs, None, False, 1, "map", "f")
    return ys


def _batched_map(f: Callable[[Any], Any], xs: Any, batch_size: Any) -> Any:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int | numpy.integer) \
            or batch_size < 1:
        raise TypeError(f"map: batch_size must be a positive int, got {batch_size!r}")
    leaves, tree = tree_util.tree_flatten(xs)
    if not leaves:
        raise ValueError("map: xs has no arrays to map over")
    n = get_aval(leaves[0]).shape[0] if get_aval(leaves[0]).ndim else None
    for x in leaves:
        shape = get_aval(x).shape
        if not shape or shape[0] != n:
            raise ValueError(
                "map: every leaf of xs needs the same leading axis length, got shapes "
                f"{[get_aval(y).shape for y in leaves]}")
    b = int(min(batch_size, n)) if n else 1
    full = n // b * b
    out_tree: list[Any] = []

    def vf(block: list[Any]) -> Any:
        def flat(*leaves: Any) -> list[Any]:
            outs, t = tree_util.tree_flatten(f(tree_util.tree_unflatten(tree, list(leaves))))
            out_tree.append(t)
            return outs

        size = get_aval(block[0]).shape[0]
        outs, dims = batching.batch_flat(flat, block, [0] * len(block), size)
        outs = [bdim_at_front(o, d, size) for o, d in zip(outs, dims)]
        return tree_util.tree_unflatten(out_tree[-1], outs)

    parts = []
    if full:
        blocks = [_shape.reshape(_shape.slice_in_dim(x, 0, full, axis=0),
                                 (full // b, b) + get_aval(x).shape[1:]) for x in leaves]
        ys = map(vf, blocks)
        parts.append(tree_util.tree_map(
            lambda y: _shape.reshape(y, (full,) + get_aval(y).shape[2:]), ys))
    if full < n or not parts:
        rest = [_shape.slice_in_dim(x, full, n, axis=0) for x in leaves]
        parts.append(vf(rest))
    if len(parts) == 1:
        return parts[0]
    return tree_util.tree_map(lambda a, c: _shape.concatenate([a, c], 0), *parts)


# ---------------------------------------------------------------------------------------------
# impl and shape rule


def _tape_length(xs: Sequence[Any]) -> int:
    if not xs:
        raise ValueError("scan: a scan over tapes (length=None) needs at least one tape input")
    n = None
    for x in xs:
        if type(x) is ZeroTape:
            continue  # zeros of any length
        if n is None:
            n = len(x)
        elif len(x) != n:
            raise ValueError(f"scan: tapes of different lengths ({n} and {len(x)})")
    return 0 if n is None else n


def _stack(items: list[Any], a: ShapedArray, length: int | None, like: Sequence[Any]) -> Any:
    if length is None or type(a) is TapeAval:
        return Tape(items, TapeAval(a))
    if not items:
        return zeros_like_aval(ShapedArray((0,) + a.shape, a.dtype, False, a.device))
    # Python scalars alone (a weak carry as y) go where the loop's operands are.
    py = (int, float, complex, bool)
    xp = xp_for(*items) if any(type(v) not in py for v in items) else out_xp(like)
    items = [xp.asarray(v, dtype=a.dtype) if type(v) in (int, float, complex, bool) else v
             for v in items]
    out = xp.stack(items)
    return out if out.dtype == a.dtype else out.astype(a.dtype)


def _scan_impl(*args: Any, jaxpr: ClosedJaxpr, num_consts: int, num_carry: int,
               length: int | None, reverse: bool) -> list[Any]:
    return _scan_run(runner(jaxpr), functools.partial(compiled, jaxpr), args, jaxpr,
                     num_consts, num_carry, length, reverse)


def _scan_run(run: Callable[..., list], upgrade: Callable[[], Any] | None, args: Sequence[Any],
              jaxpr: ClosedJaxpr, num_consts: int, num_carry: int, length: int | None,
              reverse: bool) -> list[Any]:
    """The loop, over ``run`` (the body); ``upgrade()`` gives a faster body for loops of more
    than ``COMPILE_AFTER`` steps."""
    consts = args[:num_consts]
    carry = list(args[num_consts:num_consts + num_carry])
    xs = args[num_consts + num_carry:]
    n = length if length is not None else _tape_length(xs)
    y_avals = jaxpr.out_avals[num_carry:]
    n_ys = len(y_avals)
    # Stacked ys are written into their buffer as each step makes them (while they are still
    # in cache; no list of n arrays and no stacking pass after the loop). Tapes collect lists.
    stacked = length is not None and not any(type(a) is TapeAval for a in y_avals)
    ys: list[Any] = [None] * n_ys if stacked else [[None] * n for _ in range(n_ys)]
    weak = weak_scalar_slots(jaxpr.in_avals[num_consts:num_consts + num_carry])
    seen = None  # an array a weak carry was, before it became a Python scalar again
    if n > COMPILE_AFTER and upgrade is not None:
        run = upgrade() or run  # the trip count is known: a long loop is compiled up front
    with set_current_trace(eval_trace):
        for k, i in enumerate(range(n - 1, -1, -1) if reverse else range(n)):
            out = run(*consts, *carry, *[x[i] for x in xs])
            carry = out[:num_carry]
            if weak:
                seen = keep_weak(carry, weak) or seen
            if not stacked:
                for j in range(n_ys):
                    ys[j][i] = out[num_carry + j]
                continue
            if k == 0:
                ys = [_stack_buffer(v, a, n, args) for v, a in zip(out[num_carry:], y_avals)]
            for j in range(n_ys):
                ys[j][i] = out[num_carry + j]
    carry_avals = jaxpr.in_avals[num_consts:num_consts + num_carry]
    like = (*args, *jaxpr.consts, seen)
    outs = [as_output(c, a, like) for c, a in zip(carry, carry_avals)]
    if stacked and n:
        return outs + ys
    outs += [_stack(lst, a, length, like) for lst, a in zip(ys, y_avals)]
    return outs


def _stack_buffer(first: Any, a: ShapedArray, n: int, like: Sequence[Any]) -> Any:
    """An uninitialised ``(n, *a.shape)`` array of ``a``'s dtype where ``first`` (one step's y)
    lives; a y that is a Python scalar goes where the loop's operands are."""
    py = (int, float, complex, bool)
    xp = out_xp(like) if type(first) in py else xp_for(first)
    return xp.empty((n,) + a.shape, dtype=a.dtype)


def _scan_abstract(*avals: ShapedArray, jaxpr: ClosedJaxpr, num_consts: int, num_carry: int,
                   length: int | None, reverse: bool) -> list[ShapedArray]:
    want = jaxpr.in_avals
    if len(avals) != len(want):
        raise TypeError(f"scan: the body takes {len(want)} inputs, got {len(avals)}")
    split = num_consts + num_carry
    for i, (a, w) in enumerate(zip(avals[:split], want[:split])):
        if not same_type(a, w):
            raise ShapeError(f"scan: input {i} is {a.str_short()} but the body was traced for "
                             f"{w.str_short()}")
    for i, (a, w) in enumerate(zip(avals[split:], want[split:])):
        ok = type(a) is TapeAval if length is None else (
            type(a) is TapeAval or (a.ndim >= 1 and a.shape[0] == length))
        if not ok or not same_type(unstack_aval(a), w):
            raise ShapeError(
                f"scan: xs {i} is {a.str_short()} but the body takes entries of "
                f"{w.str_short()} (length {length})")
    outs = jaxpr.out_avals
    carry_out = []
    for a, o in zip(avals[num_consts:split], outs[:num_carry]):
        if not same_type(a, o):
            raise TypeError(f"scan: the body turns carry {a.str_short()} into {o.str_short()}")
        weak = a.weak_type and o.weak_type
        carry_out.append(a if a.weak_type == weak else a.update(weak_type=weak))
    return carry_out + [stack_aval(y, length) for y in outs[num_carry:]]


scan_p.def_impl(_scan_impl)
scan_p.def_abstract_eval(_scan_abstract)


# ---------------------------------------------------------------------------------------------
# JVP


def _is_zero(t: Any) -> bool:
    return t is None or type(t) is Zero or getattr(t, "dtype", None) == float0


def _fixed_point(step: Callable[[tuple[bool, ...]], Sequence[bool]],
                 start: tuple[bool, ...]) -> tuple[bool, ...]:
    cur = start
    while True:
        out = step(cur)
        new = tuple(a or bool(b) for a, b in zip(cur, out))
        if new == cur:
            return cur
        cur = new


@weak_lru_cache(maxsize=256)
def _jvp_body(jaxpr: ClosedJaxpr, nc: int, ncar: int, c_nz: tuple[bool, ...],
              carry_nz: tuple[bool, ...], x_nz: tuple[bool, ...]):
    n_ys = len(jaxpr.out_avals) - ncar

    def step(cnz: tuple[bool, ...]) -> Sequence[bool]:
        _, out_nz = jr.jvp_jaxpr(jaxpr, c_nz + cnz + x_nz, cnz + (False,) * n_ys)
        return out_nz[:ncar]

    carry_nz = _fixed_point(step, carry_nz)
    jj, out_nz = jr.jvp_jaxpr(jaxpr, c_nz + carry_nz + x_nz, carry_nz + (False,) * n_ys)
    nx = len(x_nz)
    nct, ncart, nxt = sum(c_nz), sum(carry_nz), sum(x_nz)
    ys_nz = tuple(out_nz[ncar:])
    nyt = sum(ys_nz)
    # jvp jaxpr: (consts, carry, xs, consts_t, carry_t, xs_t) -> (carry, ys, carry_t, ys_t)
    p0 = 0
    t0 = nc + ncar + nx
    in_order = (list(range(p0, nc)) + list(range(t0, t0 + nct))
                + list(range(nc, nc + ncar)) + list(range(t0 + nct, t0 + nct + ncart))
                + list(range(nc + ncar, nc + ncar + nx))
                + list(range(t0 + nct + ncart, t0 + nct + ncart + nxt)))
    out_order = (list(range(ncar)) + list(range(ncar + n_ys, ncar + n_ys + ncart))
                 + list(range(ncar, ncar + n_ys))
                 + list(range(ncar + n_ys + ncart, ncar + n_ys + ncart + nyt)))
    return reorder(jj, in_order, out_order), carry_nz, ys_nz


def _instantiate_like(t: Any, primal_aval: ShapedArray) -> Any:
    if type(t) is Zero or t is None:
        return zeros_like_aval(tangent_aval(primal_aval))
    return t


def _scan_jvp(primals, tangents, *, jaxpr, num_consts, num_carry, length, reverse):
    nc, ncar = num_consts, num_carry
    nz = tuple(not _is_zero(t) for t in tangents)
    c_nz, carry_nz, x_nz = nz[:nc], nz[nc:nc + ncar], nz[nc + ncar:]
    new, carry_nz, ys_nz = _jvp_body(jaxpr, nc, ncar, c_nz, carry_nz, x_nz)
    consts, init, xs = primals[:nc], primals[nc:nc + ncar], primals[nc + ncar:]
    ct = [t for t, z in zip(tangents[:nc], c_nz) if z]
    it = [_instantiate_like(t, get_aval(p))
          for t, p, z in zip(tangents[nc:nc + ncar], init, carry_nz) if z]
    xt = [t for t, z in zip(tangents[nc + ncar:], x_nz) if z]
    outs = bind(scan_p, *consts, *ct, *init, *it, *xs, *xt, jaxpr=new,
                num_consts=nc + len(ct), num_carry=ncar + len(it), length=length,
                reverse=reverse)
    ncart = len(it)
    carry, carry_t = outs[:ncar], iter(outs[ncar:ncar + ncart])
    n_ys = len(jaxpr.out_avals) - ncar
    ys = outs[ncar + ncart:ncar + ncart + n_ys]
    ys_t = iter(outs[ncar + ncart + n_ys:])
    t_out = [next(carry_t) if z else Zero(tangent_aval(get_aval(c)))
             for c, z in zip(carry, carry_nz)]
    t_out += [next(ys_t) if z else Zero(tangent_aval(get_aval(y))) for y, z in zip(ys, ys_nz)]
    return list(carry) + list(ys), t_out


jvp_rules[scan_p] = _scan_jvp


# ---------------------------------------------------------------------------------------------
# Partial evaluation (linearize)


def invariant_outputs(jaxpr: Jaxpr, n_fixed: int) -> list[bool]:
    """Per output: whether it depends only on the first ``n_fixed`` inputs (and constants)."""
    varying: set[Var] = set(jaxpr.invars[n_fixed:])
    for eqn in jaxpr.eqns:
        if any(type(a) is Var and a in varying for a in eqn.invars):
            varying.update(eqn.outvars)
    return [type(a) is Literal or a not in varying for a in jaxpr.outvars]


def split_invariant(known: ClosedJaxpr, n_fixed: int, n_known_outs: int, nres: int):
    """Separate residuals that depend only on the first ``n_fixed`` (constant) inputs.

    Returns ``(loop_known, invariant, inv_mask)``: ``loop_known`` is ``known`` without the
    invariant residual outputs; ``invariant`` maps the ``n_fixed`` inputs to them (run once,
    before the loop); ``inv_mask[r]`` marks residual ``r`` as invariant.
    """
    j = known.jaxpr
    inv = invariant_outputs(j, n_fixed)[n_known_outs:]
    inv_mask = tuple(inv)
    keep = [True] * n_known_outs + [not i for i in inv]
    loop_known, _ = jr.dce_closed_jaxpr(known, keep, prune_invars=False)
    inv_outs = [a for a, i in zip(j.outvars[n_known_outs:], inv) if i]
    # Only equations on the fixed inputs: DCE keeps effectful ones (a collective such as
    # psum) even when unused, and one on a varying input would read a variable this jaxpr
    # does not have.
    varying: set[Var] = set(j.invars[n_fixed:])
    fixed_eqns = []
    for eqn in j.eqns:
        if any(type(a) is Var and a in varying for a in eqn.invars):
            varying.update(eqn.outvars)
        else:
            fixed_eqns.append(eqn)
    # (dce_closed_jaxpr drops the consts of the constvars DCE drops: they stay paired)
    invariant = dce_closed_jaxpr(ClosedJaxpr(
        Jaxpr(j.constvars, j.invars[:n_fixed], inv_outs, fixed_eqns), known.consts))
    return loop_known, invariant, inv_mask


@weak_lru_cache(maxsize=256)
def _pe_body(jaxpr: ClosedJaxpr, nc: int, ncar: int, c_uk: tuple[bool, ...],
             carry_uk: tuple[bool, ...], x_uk: tuple[bool, ...]):
    n_ys = len(jaxpr.out_avals) - ncar

    def step(cuk: tuple[bool, ...]) -> Sequence[bool]:
        _, _, out_uk, _ = jr.partial_eval_jaxpr(jaxpr, c_uk + cuk + x_uk, cuk + (False,) * n_ys)
        return out_uk[:ncar]

    carry_uk = _fixed_point(step, carry_uk)
    known, unknown, out_uk, nres = jr.partial_eval_jaxpr(
        jaxpr, c_uk + carry_uk + x_uk, carry_uk + (False,) * n_ys)
    n_kc = sum(1 for u in c_uk if not u)
    n_known_outs = sum(1 for u in out_uk if not u)
    loop_known, invariant, inv_mask = split_invariant(known, n_kc, n_known_outs, nres)
    # unknown: (res, uk consts, uk carry, uk xs) -> regroup as
    # (invariant res, uk consts, uk carry, varying res, uk xs)
    n_ukc, n_ukcar = sum(c_uk), sum(carry_uk)
    inv_idx = [r for r in range(nres) if inv_mask[r]]
    var_idx = [r for r in range(nres) if not inv_mask[r]]
    rest = nres
    in_order = (inv_idx + list(range(rest, rest + n_ukc + n_ukcar)) + var_idx
                + list(range(rest + n_ukc + n_ukcar, len(unknown.in_avals))))
    unknown2 = reorder(unknown, in_order)
    loop_known, sources = _forward_residuals(loop_known, n_kc, ncar - n_ukcar, n_known_outs)
    return carry_uk, out_uk, loop_known, invariant, unknown2, len(inv_idx), sources


def _forward_residuals(loop_known: ClosedJaxpr, n_kc: int, n_kcar: int, n_known_outs: int):
    """Residuals that are a known ``x`` or a known ``y`` are not stacked a second time.

    Returns the known body without them and, per varying residual, where to find it:
    ``("xs", i)`` (the i-th known xs operand), ``("ys", i)`` (the i-th known ys output) or
    ``("res", i)`` (the i-th extra output).
    """
    j = loop_known.jaxpr
    xs_pos = {v: i for i, v in enumerate(j.invars[n_kc + n_kcar:])}
    ys_pos: dict[Any, int] = {}
    for i, a in enumerate(j.outvars[n_kcar:n_known_outs]):
        if type(a) is Var:
            ys_pos.setdefault(a, i)
    sources: list[tuple[str, int]] = []
    kept = []
    for a in j.outvars[n_known_outs:]:
        if type(a) is Var and a in xs_pos:
            sources.append(("xs", xs_pos[a]))
        elif type(a) is Var and a in ys_pos:
            sources.append(("ys", ys_pos[a]))
        else:
            sources.append(("res", len(kept)))
            kept.append(a)
    if len(kept) == len(sources):
        return loop_known, tuple(sources)
    return dce_closed_jaxpr(ClosedJaxpr(
        Jaxpr(j.constvars, j.invars, list(j.outvars[:n_known_outs]) + kept, j.eqns),
        loop_known.consts)), tuple(sources)


def _own(x: Any, trace: PartialEvalTrace) -> bool:
    return isinstance(x, StagingTracer) and x._trace is trace


def _scan_partial_eval(trace: PartialEvalTrace, args: Sequence[Any], params: dict) -> list[Any]:
    jaxpr = params["jaxpr"]
    nc, ncar, length = params["num_consts"], params["num_carry"], params["length"]
    reverse = params["reverse"]
    uk = tuple(_own(x, trace) for x in args)
    c_uk, carry_uk, x_uk = uk[:nc], uk[nc:nc + ncar], uk[nc + ncar:]
    if all(uk) or (length is None and all(x_uk)):
        return trace.stage(scan_p, args, params, None)
    carry_uk, out_uk, loop_known, invariant, unknown, n_inv, sources = _pe_body(
        jaxpr, nc, ncar, c_uk, carry_uk, x_uk)
    n_extra = sum(1 for kind, _ in sources if kind == "res")
    consts, init, xs = args[:nc], args[nc:nc + ncar], args[nc + ncar:]
    k_consts = [c for c, u in zip(consts, c_uk) if not u]
    k_init = [c for c, u in zip(init, carry_uk) if not u]
    k_xs = [x for x, u in zip(xs, x_uk) if not u]
    n_kcar = len(k_init)
    n_known_outs = sum(1 for u in out_uk if not u)
    with set_current_trace(trace.parent):  # type: ignore[arg-type]
        inv_res = jr.eval_closed(invariant, *k_consts) if n_inv else []
        if n_known_outs or n_extra:
            known_outs = bind(scan_p, *k_consts, *k_init, *k_xs, jaxpr=loop_known,
                              num_consts=len(k_consts), num_carry=n_kcar, length=length,
                              reverse=reverse)
        else:
            known_outs = []
    found = {"xs": k_xs, "ys": known_outs[n_kcar:n_known_outs], "res": known_outs[n_known_outs:]}
    var_res = [found[kind][i] for kind, i in sources]
    unknown_outs: list[Any] = []
    if any(out_uk):
        uk_consts = [c for c, u in zip(consts, c_uk) if u]
        uk_init = [c for c, u in zip(init, carry_uk) if u]
        uk_xs = [x for x, u in zip(xs, x_uk) if u]
        body = unknown
        if length is None and not var_res and not uk_xs:
            # A loop over tapes takes its length from one: give it a known one to count.
            body = _add_unused_x(unknown, get_aval(k_xs[0]).elem)
            uk_xs = [k_xs[0]]
        unknown_outs = trace.stage(
            scan_p, [*inv_res, *uk_consts, *uk_init, *var_res, *uk_xs],
            dict(jaxpr=body, num_consts=n_inv + len(uk_consts), num_carry=len(uk_init),
                 length=length, reverse=reverse), None)
    k_it, u_it = iter(known_outs[:n_known_outs]), iter(unknown_outs)
    return [next(u_it) if u else next(k_it) for u in out_uk]


def _add_unused_x(closed: ClosedJaxpr, aval: ShapedArray) -> ClosedJaxpr:
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, list(j.invars) + [Var(aval)], j.outvars, j.eqns),
                       closed.consts)


partial_eval_rules[scan_p] = _scan_partial_eval


# ---------------------------------------------------------------------------------------------
# Transpose: a scan the other way round


@weak_lru_cache(maxsize=256)
def _transpose_body(jaxpr: ClosedJaxpr, nc: int, ncar: int, c_lin: tuple[bool, ...],
                    x_lin: tuple[bool, ...], ys_nz: tuple[bool, ...], stacked: bool):
    """The transposed body and, per linear constant, how its cotangent is summed.

    Returns ``(body, hoisted)``. ``body`` maps ``(res consts, acc, ct carry, res xs, ct ys)``
    to ``(acc, ct carry, ct xs, extra ys)``, where ``acc`` holds the cotangents of the linear
    constants accumulated in the carry. ``hoisted[k]`` is None for those; for a constant whose
    per-step cotangent is one operation with a summed-batch rule on per-step operands (the
    weight gradient ``sum_t h_t^T g_t`` of a recurrent layer), it is ``(prim, params,
    sources, after)``: the operands leave the loop stacked (``sources``: ``("rx", i)`` a residual
    xs, ``("cty", i)`` a ys cotangent, ``("ctx", i)`` an xs cotangent, ``("extra", i)`` an
    extra ys output), one operation after the loop sums over the steps, and ``after`` (a
    closed jaxpr or None) applies the linear steps that followed the product in the body.
    """
    linear = c_lin + (True,) * ncar + x_lin
    body_t = jr.transpose_jaxpr(jaxpr, linear, (True,) * ncar + ys_nz)
    in_avals = jaxpr.in_avals
    rc_avals = [a for a, lin in zip(in_avals[:nc], c_lin) if not lin]
    lc_avals = [a.strip_weak() for a, lin in zip(in_avals[:nc], c_lin) if lin]
    carry_avals = list(in_avals[nc:nc + ncar])
    rx_avals = [a for a, lin in zip(in_avals[nc + ncar:], x_lin) if not lin]
    y_avals = [a for a, nz in zip(jaxpr.out_avals[ncar:], ys_nz) if nz]
    n_rc, n_lc, n_rx = len(rc_avals), len(lc_avals), len(rx_avals)
    hoisted: tuple = (None,) * n_lc
    if stacked and n_lc:
        body_t, hoisted = _hoist_summed(body_t, n_rc, n_rx, ncar, lc_avals)
    n_acc = sum(1 for h in hoisted if h is None)

    def f(*a: Any) -> list[Any]:
        rc = a[:n_rc]
        acc = a[n_rc:n_rc + n_acc]
        ctc = a[n_rc + n_acc:n_rc + n_acc + ncar]
        rx = a[n_rc + n_acc + ncar:n_rc + n_acc + ncar + n_rx]
        cty = a[n_rc + n_acc + ncar + n_rx:]
        outs = jr.eval_closed(body_t, *rc, *rx, *ctc, *cty)
        ct_lc = outs[:n_acc]
        return [add_tangents(x, y) for x, y in zip(acc, ct_lc)] + list(outs[n_acc:])

    acc_avals = [a for a, h in zip(lc_avals, hoisted) if h is None]
    body = trace_to_jaxpr(f, rc_avals + acc_avals + carry_avals + rx_avals + y_avals,
                          eval_trace)
    return body, hoisted


def _hoist_summed(body_t: ClosedJaxpr, n_rc: int, n_rx: int, ncar: int,
                  lc_avals: Sequence[ShapedArray]):
    """Take out of ``body_t`` (``(rc, rx, ctc, cty) -> (ct lc, ct carry, ct xs)``) the linear
    constants' cotangents that one operation after the loop can sum (see _transpose_body)."""
    j = body_t.jaxpr
    n_lc = len(lc_avals)
    producer = {v: e for e in j.eqns for v in e.outvars}
    per_step = set(j.invars[n_rc:])  # rx, ctc, cty: everything but the residual constants
    for e in j.eqns:
        if any(type(a) is Var and a in per_step for a in e.invars):
            per_step.update(e.outvars)
    rx_pos = {v: i for i, v in enumerate(j.invars[n_rc:n_rc + n_rx])}
    cty_pos = {v: i for i, v in enumerate(j.invars[n_rc + n_rx + ncar:])}
    ctx_pos: dict[Any, int] = {}
    for i, v in enumerate(j.outvars[n_lc + ncar:]):
        if type(v) is Var:
            ctx_pos.setdefault(v, i)
    hoisted: list[Any] = []
    extra: list[Var] = []
    for out, want in zip(j.outvars[:n_lc], lc_avals):
        e = producer.get(out) if type(out) is Var else None
        # Linear one-operand steps after the product (the transpose of W.T) commute with the
        # sum over steps: they run once, after it.
        post: list[Eqn] = []
        while (e is not None and e.prim not in batching.summed_batch_rules
               and e.prim in linear_primitives and len(e.outvars) == 1
               and [type(v) for v in e.invars].count(Var) == 1
               and all(type(v) in (Var, Literal) for v in e.invars)):
            post.append(e)
            e = producer.get(next(v for v in e.invars if type(v) is Var))
        rule = batching.summed_batch_rules.get(e.prim) if e is not None else None
        params = rule(**e.params) if rule is not None else None
        a = out.aval if type(out) is Var else None
        if (params is None or len(e.outvars) != 1 or a is None or a.shape != want.shape
                or a.dtype != want.dtype
                or not all(type(v) is Var and v in per_step for v in e.invars)):
            hoisted.append(None)
            continue
        after = None
        if post:
            after = ClosedJaxpr(Jaxpr([], [e.outvars[0]], [out], post[::-1]), [])
        sources = []
        for v in e.invars:
            if v in rx_pos:
                sources.append(("rx", rx_pos[v]))
            elif v in cty_pos:
                sources.append(("cty", cty_pos[v]))
            elif v in ctx_pos:
                sources.append(("ctx", ctx_pos[v]))
            else:
                if v not in extra:
                    extra.append(v)
                sources.append(("extra", extra.index(v)))
        hoisted.append((e.prim, params, tuple(sources), after))
    if all(h is None for h in hoisted):
        return body_t, tuple(hoisted)
    outvars = [v for v, h in zip(j.outvars[:n_lc], hoisted) if h is None]
    outvars += list(j.outvars[n_lc:]) + extra
    return dce_closed_jaxpr(ClosedJaxpr(Jaxpr(j.constvars, j.invars, outvars, j.eqns),
                                        body_t.consts)), tuple(hoisted)


@weak_lru_cache(maxsize=256)
def _split_known_carry(jaxpr: ClosedJaxpr, nc: int, ncar: int, lin: tuple[bool, ...]):
    """A linear loop whose carry also holds non-linear values (``fori_loop``'s counter):
    ``(known, fwd, body)``. ``known[i]``: carry i is computed from non-linear values only;
    ``fwd`` computes those carries alone, stacking the value each step sees; ``body`` is the
    loop that reads them as stacked inputs instead. None when no carry is such. (A carry
    with a constant start that accumulates linear values, ``scan(f, 0.0, xs)``, stays in the
    linear loop.)"""
    j = jaxpr.jaxpr
    known = [not lin[nc + i] for i in range(ncar)]
    n_out = len(j.outvars)
    while True:
        # a carry is known when its update reads no linear input and only known carries
        reads_ok = [not li for li in lin[:nc]] + known + [not li for li in lin[nc + ncar:]]
        new = [k and all(ok or not u for u, ok in zip(
            dce_jaxpr(j, [o == i for o in range(n_out)])[1], reads_ok)) for i, k in
            enumerate(known)]
        if new == known:
            break
        known = new
    if not any(known):
        return None
    fj, _ = dce_jaxpr(j, known + [False] * (n_out - ncar))
    carry_vars = j.invars[nc:nc + ncar]
    k_in = [v for v, k in zip(carry_vars, known) if k]
    fwd_in = ([v for v, li in zip(j.invars[:nc], lin[:nc]) if not li] + k_in
              + [v for v, li in zip(j.invars[nc + ncar:], lin[nc + ncar:]) if not li])
    fwd_out = [v for v, k in zip(j.outvars[:ncar], known) if k] + k_in
    fwd = ClosedJaxpr(Jaxpr(j.constvars, fwd_in, fwd_out, fj.eqns), jaxpr.consts)
    body_in = (list(j.invars[:nc]) + [v for v, k in zip(carry_vars, known) if not k]
               + list(j.invars[nc + ncar:]) + k_in)
    body_out = [v for v, k in zip(j.outvars[:ncar], known) if not k] + list(j.outvars[ncar:])
    return (tuple(known), fwd,
            ClosedJaxpr(Jaxpr(j.constvars, body_in, body_out, j.eqns), jaxpr.consts))


def _transpose_known_carry(cts, args, split, nc, ncar, length, reverse):
    known, fwd, body = split
    consts, init, xs = args[:nc], args[nc:nc + ncar], args[nc + ncar:]
    k_init = [c for c, k in zip(init, known) if k]
    outs = bind(scan_p, *[c for c in consts if not is_undefined(c)], *k_init,
                *[x for x in xs if not is_undefined(x)], jaxpr=fwd,
                num_consts=sum(not is_undefined(c) for c in consts), num_carry=len(k_init),
                length=length, reverse=reverse)
    stacked = outs[len(k_init):]
    l_init = [c for c, k in zip(init, known) if not k]
    l_cts = [c for c, k in zip(cts[:ncar], known) if not k] + list(cts[ncar:])
    res = _transpose_linear_scan(l_cts, *consts, *l_init, *xs, *stacked, jaxpr=body,
                                 num_consts=nc, num_carry=len(l_init), length=length,
                                 reverse=reverse)
    it = iter(res[nc:nc + len(l_init)])
    carry_cts = [None if k else next(it) for k in known]
    return list(res[:nc]) + carry_cts + list(res[nc + len(l_init):nc + len(l_init) + len(xs)])


def _scan_transpose(cts, *args, jaxpr, num_consts, num_carry, length, reverse):
    nc, ncar = num_consts, num_carry
    if length is not None and not all(is_undefined(c) for c in args[nc:nc + ncar]):
        split = _split_known_carry(jaxpr, nc, ncar, tuple(is_undefined(a) for a in args))
        if split is not None:
            return _transpose_known_carry(cts, args, split, nc, ncar, length, reverse)
    return _transpose_linear_scan(cts, *args, jaxpr=jaxpr, num_consts=nc, num_carry=ncar,
                                  length=length, reverse=reverse)


def _transpose_linear_scan(cts, *args, jaxpr, num_consts, num_carry, length, reverse):
    nc, ncar = num_consts, num_carry
    consts, init, xs = args[:nc], args[nc:nc + ncar], args[nc + ncar:]
    c_lin = tuple(is_undefined(c) for c in consts)
    x_lin = tuple(is_undefined(x) for x in xs)
    ct_carry, ct_ys = cts[:ncar], cts[ncar:]
    ys_nz = tuple(not _is_zero(c) for c in ct_ys)
    in_avals = jaxpr.in_avals
    body, hoisted = _transpose_body(jaxpr, nc, ncar, c_lin, x_lin, ys_nz, length is not None)
    res_consts = [c for c, lin in zip(consts, c_lin) if not lin]
    res_xs = [x for x, lin in zip(xs, x_lin) if not lin]
    nz_ct_ys = [c for c, nz in zip(ct_ys, ys_nz) if nz]
    if length is None and not res_xs and not nz_ct_ys:
        raise MissingRuleError(
            f"transposing a loop over while_loop tapes{user_source_info().at()}: the "
            "transposed loop reads no tape, so its trip count is unknown; give the loop a "
            "static trip count (lax.fori_loop with Python-int bounds, or lax.scan), or "
            "differentiate with funcgrad.jvp / jacfwd (forward mode records no tape)")
    lc_avals = [a.strip_weak() for a, lin in zip(in_avals[:nc], c_lin) if lin]
    acc0 = [zeros_like_aval(a) for a, h in zip(lc_avals, hoisted) if h is None]
    carry0 = [_instantiate_like(c, a) for c, a in zip(ct_carry, in_avals[nc:nc + ncar])]
    outs = bind(scan_p, *res_consts, *acc0, *carry0, *res_xs, *nz_ct_ys, jaxpr=body,
                num_consts=len(res_consts), num_carry=len(acc0) + ncar, length=length,
                reverse=not reverse)
    n_acc, n_ctx = len(acc0), sum(x_lin)
    acc = iter(outs[:n_acc])
    ct_init = outs[n_acc:n_acc + ncar]
    ct_xs = outs[n_acc + ncar:n_acc + ncar + n_ctx]
    found = {"rx": res_xs, "cty": nz_ct_ys, "ctx": ct_xs, "extra": outs[n_acc + ncar + n_ctx:]}
    ct_lc = []
    for h in hoisted:
        if h is None:
            ct_lc.append(next(acc))
            continue
        prim, params, sources, after = h
        r = bind(prim, *[found[kind][i] for kind, i in sources], **params)[0]
        ct_lc.append(r if after is None else jr.eval_closed(after, r)[0])
    ct_c, ct_x = iter(ct_lc), iter(ct_xs)
    res: list[Any] = [next(ct_c) if lin else None for lin in c_lin]
    res += [ct if is_undefined(x) else None for ct, x in zip(ct_init, init)]
    res += [next(ct_x) if lin else None for lin in x_lin]
    return res


deftranspose(scan_p, _scan_transpose)


# ---------------------------------------------------------------------------------------------
# Batching


def _scan_batch(axis_size, vals, dims, *, jaxpr, num_consts, num_carry, length, reverse):
    nc, ncar = num_consts, num_carry
    n_ys = len(jaxpr.out_avals) - ncar
    vals = list(vals)
    in_dims: list[int | None] = []
    for i, (v, d) in enumerate(zip(vals, dims)):
        if d is None:
            in_dims.append(None)
            continue
        is_x = i >= nc + ncar
        tape = type(get_aval(v)) is TapeAval
        # A tape's batch axis is its elements' (always 0 here); stacked xs keep theirs at 1
        # so that each entry is batched at 0.
        want = 1 if is_x and not tape else 0
        if d != want:
            if tape:
                raise MissingRuleError(
                    f"vmap of a loop over while_loop tapes{user_source_info().at()}: a tape "
                    f"batched along axis {d} (tapes are batched along axis 0 only); vmap "
                    "with in_axes=0 / out_axes=0 around the differentiated function, or give "
                    "the loop a static trip count (lax.fori_loop with Python-int bounds, or "
                    "lax.scan), which records no tape")
            vals[i] = _shape.moveaxis(v, d, want)
        in_dims.append(0)
    c_d = tuple(in_dims[:nc])
    x_d = tuple(in_dims[nc + ncar:])
    start = tuple(d is not None for d in in_dims[nc:nc + ncar])

    def step(cb: tuple[bool, ...]) -> Sequence[bool]:
        _, out_dims = jr.batch_jaxpr(jaxpr, axis_size, c_d + tuple(0 if b else None for b in cb)
                                     + x_d, cb + (False,) * n_ys)
        return [d is not None for d in out_dims[:ncar]]

    carry_b = _fixed_point(step, start)
    new, out_dims = jr.batch_jaxpr(
        jaxpr, axis_size, c_d + tuple(0 if b else None for b in carry_b) + x_d,
        carry_b + (False,) * n_ys)
    for i in range(ncar):
        j = nc + i
        if carry_b[i] and in_dims[j] is None:
            a = get_aval(vals[j])
            vals[j] = _shape.broadcast_in_dim(vals[j], (axis_size,) + a.shape,
                                              tuple(range(1, a.ndim + 1)))
    outs = bind(scan_p, *vals, jaxpr=new, num_consts=nc, num_carry=ncar, length=length,
                reverse=reverse)
    res_dims: list[int | None] = [0 if b else None for b in carry_b]
    for y, d in zip(jaxpr.out_avals[ncar:], out_dims[ncar:]):
        if d is None:
            res_dims.append(None)
        elif length is None or type(y) is TapeAval:
            res_dims.append(0)
        else:
            res_dims.append(1)
    return outs, res_dims


batching.batch_rules[scan_p] = _scan_batch


def _scan_cost(eqn: Eqn, jaxpr_cost: Any) -> Any:
    """The body once per iteration (once when the length is only known at run time)."""
    length = eqn.params["length"]
    return jaxpr_cost(eqn.params["jaxpr"]).scaled(length if length is not None else 1)


_cost.cost_rules[scan_p] = _scan_cost


# ---------------------------------------------------------------------------------------------
# Dead code elimination


def _scan_dce(used_outputs: list[bool], eqn: Eqn) -> tuple[list[bool], Eqn | None]:
    p = eqn.params
    closed: ClosedJaxpr = p["jaxpr"]
    nc, ncar, length = p["num_consts"], p["num_carry"], p["length"]
    if not any(used_outputs) and not jr.has_effects(closed.jaxpr):
        return [False] * len(eqn.invars), None
    used_ys = tuple(used_outputs[ncar:])

    def step(uc: tuple[bool, ...]) -> Sequence[bool]:
        _, used_in = jr.dce_closed_jaxpr(closed, uc + used_ys, prune_invars=False)
        return used_in[nc:nc + ncar]

    used_carry = _fixed_point(step, tuple(used_outputs[:ncar]))
    new, used_in = jr.dce_closed_jaxpr(closed, used_carry + used_ys, prune_invars=False)
    used_in = list(used_in)
    used_in[nc:nc + ncar] = used_carry
    if length is None and not any(used_in[nc + ncar:]):
        used_in[nc + ncar] = True  # keep one tape: it gives the length
    if all(used_in) and all(used_carry) and all(used_ys):
        return [True] * len(eqn.invars), eqn
    j = new.jaxpr
    body = ClosedJaxpr(Jaxpr(j.constvars, [v for v, u in zip(j.invars, used_in) if u],
                             j.outvars, j.eqns), new.consts)
    outvars = [v for v, u in zip(eqn.outvars, used_carry + used_ys) if u]
    new_eqn = eqn.replace(
        invars=[a for a, u in zip(eqn.invars, used_in) if u],
        outvars=outvars,
        params=dict(p, jaxpr=body, num_consts=sum(used_in[:nc]), num_carry=sum(used_carry)),
    )
    return [True] * len(new_eqn.invars), new_eqn


dce_rules[scan_p] = _scan_dce


# ---------------------------------------------------------------------------------------------
# jit: the compiled function calls the loop over the compiled body from the first iteration


def _scan_emitted(fn: Callable[..., list], params: dict, xp: Any, *args: Any) -> list[Any]:
    return _scan_run(functools.partial(fn, xp), None, args, **params)


def _emit_scan(ctx: Any, eqn: Eqn, args: list[str]) -> Any:
    exe = compiled(eqn.params["jaxpr"])
    if exe is None:
        return None  # the generic fallback calls the impl
    helper = ctx.bind(functools.partial(_scan_emitted, exe.fn, dict(eqn.params)), "scan")
    return _compile.Emission(f"{helper}({', '.join(['xp', *args])})")


_compile.emitters[scan_p] = _emit_scan
