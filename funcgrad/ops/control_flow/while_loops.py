"""``while_loop`` and ``fori_loop``: the primitive ``while_p``.

``while_p`` binds ``(*cond_consts, *body_consts, *init, cond_jaxpr, body_jaxpr, cond_nconsts,
body_nconsts, record_pred)``. ``cond_jaxpr`` maps ``(*cond_consts, *carry)`` to a bool scalar and
``body_jaxpr`` maps ``(*body_consts, *carry)`` to ``(*carry, *ys)``. The loop returns the final
carry and, for each ``y``, a *tape* collecting its value at every iteration (a list whose length
is known only at run time; :mod:`funcgrad.ops.control_flow._tape`), then, with
``record_pred``, a tape of the predicate of every iteration it ran (all True, except under
``vmap`` with a batched predicate, where it says which examples were still running). User
loops have neither; tapes appear when a loop is differentiated in reverse mode.

Reverse mode through a loop whose trip count is known only at run time (JAX refuses it): the
partial-evaluation rule runs the known (primal) part of the loop now, recording per iteration the
residuals the tangent part needs -- plus whether the iteration was *active* (the predicate) --
into tapes; the unknown (tangent) part becomes a ``scan`` over those tapes (``length=None``),
which is linear and transposes, like any scan, into a scan over the tapes in reverse order. The
*active* flag makes the tangent step the identity for an iteration in which a batch element had
already stopped (``vmap`` of a loop with a batched predicate keeps running until every element is
done, freezing finished ones).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from funcgrad import compile as _compile
from funcgrad._cache import weak_lru_cache
from funcgrad.avals import ShapedArray, float0, get_aval, result_dtype
from funcgrad.backend import get_default_device, xp_for_device
from funcgrad.core import Primitive, Tracer, bind, eval_trace, set_current_trace
from funcgrad.errors import ShapeError
from funcgrad.interpreters import batching
from funcgrad.interpreters import jaxpr_rules as jr
from funcgrad.interpreters.jvp import Zero, jvp_rules, tangent_aval, zeros_like_aval
from funcgrad.interpreters.staging import (
    PartialEvalTrace,
    StagingTracer,
    partial_eval_rules,
    trace_to_jaxpr,
)
from funcgrad.ir import ClosedJaxpr, Eqn, Jaxpr, dce_closed_jaxpr, dce_jaxpr, dce_rules
from funcgrad.ops import elementwise as _ew
from funcgrad.ops import reductions as _red
from funcgrad.ops import shape as _shape
from funcgrad.ops.control_flow._common import (
    COMPILE_AFTER,
    add_unused_invars,
    as_output,
    check_carry_types,
    compiled,
    keep_weak,
    reorder,
    runner,
    same_type,
    trace_fun,
    weak_scalar_slots,
)
from funcgrad.ops.control_flow._tape import Tape, TapeAval
from funcgrad.ops.control_flow.scans import (
    _fixed_point,
    _promote_weak,
    _scan,
    scan_p,
    split_invariant,
)
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = ["while_loop", "fori_loop", "while_p"]

_SCALARS = (bool, int, float, complex, numpy.generic)

while_p = Primitive("while", multiple_results=True, carries_jaxprs=True)


# ---------------------------------------------------------------------------------------------
# Public wrappers


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any],
               init_val: Any) -> Any:
    """``val = body_fun(val)`` while ``cond_fun(val)``; returns the final ``val``.

    ``cond_fun`` returns a boolean scalar; ``body_fun`` returns a value of the same pytree
    structure, shapes and dtypes as ``init_val``. Differentiable in forward mode and -- unlike
    JAX -- in reverse mode too: the trip count is decided at run time, and ``grad`` records
    what the backward pass needs per iteration. Under ``vmap`` with a batched predicate the
    loop runs until every example is done, finished examples frozen.

    Example:
        >>> while_loop(lambda i: i < 10, lambda i: i * 2, 1)
        array(16)
    """
    return _while_loop(cond_fun, body_fun, init_val, "while_loop")


def _while_loop(cond_fun, body_fun, init_val, what: str):
    for name, fn in (("cond_fun", cond_fun), ("body_fun", body_fun)):
        if not callable(fn):
            raise TypeError(f"{what}: {name} must be callable, got {type(fn).__name__}")
    pairs, tree = tree_util.tree_flatten_with_path(init_val)
    leaves = [x for _, x in pairs]
    for p, x in pairs:
        try:
            get_aval(x)
        except TypeError:
            raise TypeError(
                f"{what}: the loop value must be arrays or pytrees of arrays; init_val"
                f"{tree_util.keystr(p)} is a {type(x).__name__}") from None
    args_tree = tree_util.treedef_tuple([tree])
    origins = [f"the loop value{tree_util.keystr(p)}" for p, _ in pairs]
    for attempt in range(2):
        avals = [get_aval(x) for x in leaves]
        body = trace_fun(body_fun, args_tree, avals, f"{what} body_fun", origins,
                         carry=len(avals))
        if attempt == 0 and body.out_tree == tree and _promote_weak(
                leaves, avals, body.out_avals):
            continue
        check_carry_types(what, tree, avals, body.out_tree, body.out_avals,
                          in_name="init_val", out_name="body_fun's output")
        break
    cond = trace_fun(cond_fun, args_tree, avals, f"{what} cond_fun", origins)
    outs = cond.out_avals
    if not cond.out_tree.is_leaf():  # (pred,) is a mistake JAX refuses too
        raise TypeError(f"{what}: cond_fun must return a boolean scalar, but got pytree "
                        f"{cond.out_tree}")
    if len(outs) != 1 or outs[0].shape != () or outs[0].dtype.kind != "b":
        got = ", ".join(a.str_short() for a in outs) or "nothing"
        raise TypeError(f"{what}: cond_fun must return a boolean scalar, got {got}")
    res = bind(while_p, *cond.consts, *body.consts, *leaves, cond_jaxpr=cond.jaxpr,
               body_jaxpr=body.jaxpr, cond_nconsts=len(cond.consts),
               body_nconsts=len(body.consts), record_pred=False)
    return tree_util.tree_unflatten(tree, res)


def _int_bound(x: Any) -> int | None:
    """The Python int of a static loop bound (JAX's ``int(bound)``: a concrete float bound
    is truncated), or None when it is traced."""
    if isinstance(x, Tracer):
        return None
    if isinstance(x, bool):
        raise TypeError(f"fori_loop: bounds must be integers, got {x!r}")
    if isinstance(x, int | float | numpy.integer | numpy.floating):
        return int(x)
    a = get_aval(x)
    if a.shape != () or a.dtype.kind not in "iuf":
        raise TypeError(f"fori_loop: bounds must be integer scalars, got {a.str_short()}")
    return int(x)


def _check_bound_types(lower: Any, upper: Any) -> None:
    """JAX's rule for the bounds' types, static or traced: equal dtypes, or two signed
    integers of which exactly one is weakly typed (a Python int next to an ``int32``);
    anything else (``fori_loop(0.0, 3, ...)``, ``int16`` with ``int32``) is a TypeError."""
    la, ua = get_aval(lower), get_aval(upper)
    if la.dtype == ua.dtype:
        return
    if la.dtype.kind == "i" and ua.dtype.kind == "i" and la.weak_type != ua.weak_type:
        return
    raise TypeError("lower and upper arguments to fori_loop must have equal types, got "
                    f"{la.dtype.name} and {ua.dtype.name}")


def _as_counter(x: Any, dt: numpy.dtype, device: str | None) -> Any:
    if isinstance(x, Tracer):
        return _ew.convert_element_type(x, dt)
    # A static bound becomes an array where the traced one lives (a host NumPy bound under
    # jit stays on the host), else on the default device, where the loop computes.
    return xp_for_device(device or get_default_device()).asarray(x, dtype=dt)


def fori_loop(lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any,
              *, unroll: int | bool | None = None) -> Any:
    """``for i in range(lower, upper): val = body_fun(i, val)``; returns ``val``.

    With static bounds (Python or NumPy numbers, concrete arrays) this is a :func:`scan` of
    known length and ``i`` a weakly typed int64 counter (JAX's ``int(lower)``: a float bound
    is truncated); with traced bounds (under ``jit``, or batched by ``vmap``) a
    :func:`while_loop` whose counter has the bounds' dtype (integer, or float as JAX allows).
    Both are differentiable in forward and reverse mode. ``unroll`` is the scan's (as JAX:
    static bounds only; it changes no result).

    Example:
        >>> float(fori_loop(0, 5, lambda i, s: s + i, 0.0))
        10.0
    """
    if not callable(body_fun):
        raise TypeError(f"fori_loop: body_fun must be callable, got {type(body_fun).__name__}")
    for name, b in (("lower", lower), ("upper", upper)):
        if isinstance(b, Tracer):
            a = b.aval
            if a.shape != () or a.dtype.kind not in "iuf":
                raise TypeError(f"fori_loop: {name} must be an integer scalar, got "
                                f"{a.str_short()}")
    lo, hi = _int_bound(lower), _int_bound(upper)
    _check_bound_types(lower, upper)
    if unroll is not None and (lo is None or hi is None):
        raise ValueError("fori_loop: unroll can only be given with static (concrete) bounds, "
                         "as in JAX")
    in_tree = tree_util.tree_structure(init_val)

    def checked(i: Any, x: Any) -> Any:
        # Checked here so that errors name the user's carry, not the (i, carry) pair.
        out = body_fun(i, x)
        out_tree = tree_util.tree_structure(out)
        if out_tree != in_tree:
            raise TypeError(
                "fori_loop body function carry input and carry output must have the same "
                "pytree structure, but they differ. "
                f"fori_loop: the carry changes structure: init_val is {in_tree} but "
                f"body_fun's output is {out_tree}; the carry must keep its pytree structure")
        in_avals = [get_aval(v) for v in tree_util.tree_leaves(x)]
        out_avals = [get_aval(v) for v in tree_util.tree_leaves(out)]
        if any(not same_type(a, b) and not (a.weak_type and a.shape == b.shape)
               for a, b in zip(in_avals, out_avals)):
            check_carry_types("fori_loop", in_tree, in_avals, out_tree, out_avals,
                              in_name="init_val", out_name="body_fun's output")
        return out

    if lo is not None and hi is not None:
        # JAX counts from the Python int int(lower): a weak int64 counter, whatever the
        # bounds' dtype (so `carry + i` keeps the carry's dtype as JAX's does).
        i0 = lo

        def step(carry: Any, _: Any) -> tuple[Any, None]:
            i, x = carry
            return (i + 1, checked(i, x)), None

        (_, out), _ = _scan(step, (i0, init_val), None, max(hi - lo, 0), False,
                            1 if unroll is None else unroll, "fori_loop", "body_fun")
        return out
    la, ua = get_aval(lower), get_aval(upper)
    dt, weak = result_dtype(la, ua)
    device = (la if isinstance(lower, Tracer) else ua).device
    lower_c = lower if weak else _as_counter(lower, dt, device)
    upper_c = upper if weak else _as_counter(upper, dt, device)

    def body(carry: Any) -> Any:
        i, x = carry
        return (i + 1, checked(i, x))

    _, out = _while_loop(lambda c: _ew.lt(c[0], upper_c), body, (lower_c, init_val),
                         "fori_loop")
    return out


# ---------------------------------------------------------------------------------------------
# impl and shape rule


def _split(args: Sequence[Any], cn: int, bn: int) -> tuple[Sequence[Any], Sequence[Any], list]:
    return args[:cn], args[cn:cn + bn], list(args[cn + bn:])


_BOOL = ShapedArray((), numpy.dtype(bool))


def _while_impl(*args: Any, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
                cond_nconsts: int, body_nconsts: int, record_pred: bool) -> list[Any]:
    def upgrade() -> tuple[Any, Any]:
        return compiled(cond_jaxpr), compiled(body_jaxpr)

    return _while_run(runner(cond_jaxpr), runner(body_jaxpr), upgrade, args, cond_jaxpr,
                      body_jaxpr, cond_nconsts, body_nconsts, record_pred)


def _while_run(cond_run: Callable[..., list], body_run: Callable[..., list],
               upgrade: Callable[[], tuple[Any, Any]] | None, args: Sequence[Any],
               cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr, cond_nconsts: int,
               body_nconsts: int, record_pred: bool) -> list[Any]:
    """The loop over ``cond_run``/``body_run``; ``upgrade()`` gives faster ones (or None)."""
    cc, bc, carry = _split(args, cond_nconsts, body_nconsts)
    n = len(carry)
    n_ys = len(body_jaxpr.out_avals) - n
    ys: list[list[Any]] = [[] for _ in range(n_ys)]
    it = 0
    weak = weak_scalar_slots(body_jaxpr.in_avals[body_nconsts:])
    seen = None  # an array a weak carry was, before it became a Python scalar again
    with set_current_trace(eval_trace):
        while cond_run(*cc, *carry)[0]:
            it += 1
            if it == COMPILE_AFTER and upgrade is not None:
                fast_cond, fast_body = upgrade()
                cond_run = fast_cond or cond_run
                body_run = fast_body or body_run
            out = body_run(*bc, *carry)
            carry = out[:n]
            if weak:
                seen = keep_weak(carry, weak) or seen
            for j in range(n_ys):
                ys[j].append(out[n + j])
    carry_avals = body_jaxpr.in_avals[body_nconsts:]
    like = (*args, *body_jaxpr.consts, *cond_jaxpr.consts, seen)
    outs = [as_output(c, a, like) for c, a in zip(carry, carry_avals)]
    outs += [Tape(lst, TapeAval(a)) for lst, a in zip(ys, body_jaxpr.out_avals[n:])]
    if record_pred:
        outs.append(Tape([True] * it, TapeAval(_BOOL)))
    return outs


def _while_abstract(*avals: ShapedArray, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
                    cond_nconsts: int, body_nconsts: int,
                    record_pred: bool) -> list[ShapedArray]:
    cc, bc, carry = _split(avals, cond_nconsts, body_nconsts)
    for what, closed, consts in (("cond", cond_jaxpr, cc), ("body", body_jaxpr, bc)):
        want = closed.in_avals
        got = list(consts) + carry
        if len(want) != len(got):
            raise TypeError(f"while: the {what} takes {len(want)} inputs, got {len(got)}")
        for i, (a, w) in enumerate(zip(got, want)):
            if not same_type(a, w):
                raise ShapeError(f"while: {what} input {i} is {a.str_short()} but it was "
                                 f"traced for {w.str_short()}")
    c_out = cond_jaxpr.out_avals
    if len(c_out) != 1 or c_out[0].shape != () or c_out[0].dtype.kind != "b":
        raise TypeError(f"while: the cond must give a boolean scalar, got {c_out}")
    outs = body_jaxpr.out_avals
    res = []
    for a, o in zip(carry, outs):
        if not same_type(a, o):
            raise TypeError(f"while: the body turns carry {a.str_short()} into {o.str_short()}")
        weak = a.weak_type and o.weak_type
        res.append(a if a.weak_type == weak else a.update(weak_type=weak))
    res += [TapeAval(y) for y in outs[len(carry):]]
    return res + [TapeAval(_BOOL)] if record_pred else res


while_p.def_impl(_while_impl)
while_p.def_abstract_eval(_while_abstract)


# ---------------------------------------------------------------------------------------------
# JVP


def _is_zero(t: Any) -> bool:
    return t is None or type(t) is Zero or getattr(t, "dtype", None) == float0


@weak_lru_cache(maxsize=256)
def _jvp_loop(cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr, bn: int,
              bc_nz: tuple[bool, ...], carry_nz: tuple[bool, ...]):
    n = len(carry_nz)
    n_ys = len(body_jaxpr.out_avals) - n

    def step(cnz: tuple[bool, ...]) -> Sequence[bool]:
        _, out_nz = jr.jvp_jaxpr(body_jaxpr, bc_nz + cnz, cnz + (False,) * n_ys)
        return out_nz[:n]

    carry_nz = _fixed_point(step, carry_nz)
    jj, out_nz = jr.jvp_jaxpr(body_jaxpr, bc_nz + carry_nz, carry_nz + (False,) * n_ys)
    ys_nz = tuple(out_nz[n:])
    nbt, nct, nyt = sum(bc_nz), sum(carry_nz), sum(ys_nz)
    # jvp jaxpr: (bc, carry, bc_t, carry_t) -> (carry, ys, carry_t, ys_t)
    in_order = (list(range(bn)) + list(range(bn + n, bn + n + nbt)) + list(range(bn, bn + n))
                + list(range(bn + n + nbt, bn + n + nbt + nct)))
    out_order = (list(range(n)) + list(range(n + n_ys, n + n_ys + nct))
                 + list(range(n, n + n_ys)) + list(range(n + n_ys + nct, n + n_ys + nct + nyt)))
    body = reorder(jj, in_order, out_order)
    t_avals = [tangent_aval(a) for a, z in zip(body_jaxpr.in_avals[bn:], carry_nz) if z]
    cond = add_unused_invars(cond_jaxpr, t_avals, len(cond_jaxpr.in_avals))
    return cond, body, carry_nz, ys_nz


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts,
               record_pred):
    cn, bn = cond_nconsts, body_nconsts
    cc, bc, init = _split(primals, cn, bn)
    bc_t, init_t = tangents[cn:cn + bn], tangents[cn + bn:]
    bc_nz = tuple(not _is_zero(t) for t in bc_t)
    carry_nz = tuple(not _is_zero(t) for t in init_t)
    if not any(bc_nz) and not any(carry_nz):
        outs = bind(while_p, *primals, cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr,
                    cond_nconsts=cn, body_nconsts=bn, record_pred=record_pred)
        return outs, [Zero(tangent_aval(get_aval(o))) for o in outs]
    cond, body, carry_nz, ys_nz = _jvp_loop(cond_jaxpr, body_jaxpr, bn, bc_nz, carry_nz)
    bt = [t for t, z in zip(bc_t, bc_nz) if z]
    it = [zeros_like_aval(tangent_aval(get_aval(p))) if _is_zero(t) else t
          for t, p, z in zip(init_t, init, carry_nz) if z]
    outs = bind(while_p, *cc, *bc, *bt, *init, *it, cond_jaxpr=cond, body_jaxpr=body,
                cond_nconsts=cn, body_nconsts=bn + len(bt), record_pred=record_pred)
    n = len(init)
    nct = len(it)
    n_ys = len(body_jaxpr.out_avals) - n
    carry, carry_t = outs[:n], iter(outs[n:n + nct])
    ys, ys_t = outs[n + nct:n + nct + n_ys], iter(outs[n + nct + n_ys:])
    t_out = [next(carry_t) if z else Zero(tangent_aval(get_aval(c)))
             for c, z in zip(carry, carry_nz)]
    t_out += [next(ys_t) if z else Zero(tangent_aval(get_aval(y))) for y, z in zip(ys, ys_nz)]
    pred = list(outs[len(outs) - 1:]) if record_pred else []
    t_out += [Zero(tangent_aval(get_aval(p))) for p in pred]
    return list(carry) + list(ys) + pred, t_out


jvp_rules[while_p] = _while_jvp


# ---------------------------------------------------------------------------------------------
# Partial evaluation: the known loop records tapes, the unknown part is a scan over them


def _used_inputs(closed: ClosedJaxpr) -> list[bool]:
    return list(dce_jaxpr(closed.jaxpr)[1])


@weak_lru_cache(maxsize=256)
def _pe_loop(cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr, cn: int, bn: int,
             bc_uk: tuple[bool, ...], carry_uk: tuple[bool, ...]):
    n = len(carry_uk)
    n_ys = len(body_jaxpr.out_avals) - n

    def step(cuk: tuple[bool, ...]) -> Sequence[bool]:
        _, _, out_uk, _ = jr.partial_eval_jaxpr(body_jaxpr, bc_uk + cuk, cuk + (False,) * n_ys)
        return out_uk[:n]

    carry_uk = _fixed_point(step, carry_uk)
    cond_used = _used_inputs(cond_jaxpr)[cn:]
    if any(u and k for u, k in zip(cond_used, carry_uk)):
        return None  # the trip count depends on unknown values: nothing can run now
    known, unknown, out_uk, nres = jr.partial_eval_jaxpr(
        body_jaxpr, bc_uk + carry_uk, carry_uk + (False,) * n_ys)
    n_kbc = sum(1 for u in bc_uk if not u)
    n_known_outs = sum(1 for u in out_uk if not u)
    # Known loop body: (known consts, known carry) -> (known carry, known ys, varying residuals)
    body_k, invariant, inv_mask = split_invariant(known, n_kbc, n_known_outs, nres)

    # The cond reads only known carries: give it just those.
    cj = cond_jaxpr.jaxpr
    k_carry_vars = [v for v, u in zip(cj.invars[cn:], carry_uk) if not u]
    cond_k = ClosedJaxpr(Jaxpr(cj.constvars, list(cj.invars[:cn]) + k_carry_vars,
                               cj.outvars, cj.eqns), cond_jaxpr.consts)

    # Unknown scan body: (invariant res, uk consts, uk carry, varying res, active) ->
    #                    (uk carry (kept where not active), uk ys)
    n_ukbc, n_ukc = sum(bc_uk), sum(carry_uk)
    inv_idx = [r for r in range(nres) if inv_mask[r]]
    var_idx = [r for r in range(nres) if not inv_mask[r]]
    u_avals = unknown.in_avals
    scan_in = ([u_avals[r] for r in inv_idx] + list(u_avals[nres:nres + n_ukbc])
               + list(u_avals[nres + n_ukbc:]) + [u_avals[r] for r in var_idx] + [_BOOL])
    n_inv = len(inv_idx)

    def scan_body(*a: Any) -> list[Any]:
        inv = a[:n_inv]
        ubc = a[n_inv:n_inv + n_ukbc]
        uc = a[n_inv + n_ukbc:n_inv + n_ukbc + n_ukc]
        var = a[n_inv + n_ukbc + n_ukc:-1]
        active = a[-1]
        res: list[Any] = [None] * nres
        for r, v in zip(inv_idx, inv):
            res[r] = v
        for r, v in zip(var_idx, var):
            res[r] = v
        outs = jr.eval_closed(unknown, *res, *ubc, *uc)
        new_c = [_ew.select_n(active, old, new) for old, new in zip(uc, outs[:n_ukc])]
        return new_c + list(outs[n_ukc:])

    body_u = trace_to_jaxpr(scan_body, scan_in, eval_trace)
    n_var = len(var_idx)
    return carry_uk, out_uk, body_k, cond_k, invariant, body_u, n_inv, n_var


def _while_partial_eval(trace: PartialEvalTrace, args: Sequence[Any], params: dict) -> list:
    cond_jaxpr, body_jaxpr = params["cond_jaxpr"], params["body_jaxpr"]
    cn, bn = params["cond_nconsts"], params["body_nconsts"]
    record_pred = params["record_pred"]
    uk = tuple(isinstance(x, StagingTracer) and x._trace is trace for x in args)
    if any(uk[:cn]):
        return trace.stage(while_p, args, params, None)
    plan = _pe_loop(cond_jaxpr, body_jaxpr, cn, bn, uk[cn:cn + bn], uk[cn + bn:])
    if plan is None:
        return trace.stage(while_p, args, params, None)
    carry_uk, out_uk, body_k, cond_k, invariant, body_u, n_inv, n_var = plan
    cc, bc, init = _split(args, cn, bn)
    bc_uk = uk[cn:cn + bn]
    k_bc = [c for c, u in zip(bc, bc_uk) if not u]
    k_init = [c for c, u in zip(init, carry_uk) if not u]
    n_known_outs = sum(1 for u in out_uk if not u)
    with set_current_trace(trace.parent):  # type: ignore[arg-type]
        inv_res = jr.eval_closed(invariant, *k_bc) if n_inv else []
        known_outs = bind(while_p, *cc, *k_bc, *k_init, cond_jaxpr=cond_k, body_jaxpr=body_k,
                          cond_nconsts=cn, body_nconsts=len(k_bc), record_pred=True)
    # known_outs: known carry, then tapes: known ys, varying residuals, the predicates
    known_vals = list(known_outs[:n_known_outs])
    var_tapes = known_outs[n_known_outs:n_known_outs + n_var]
    active = known_outs[-1]
    unknown_outs: list[Any] = []
    if any(out_uk):
        uk_bc = [c for c, u in zip(bc, bc_uk) if u]
        uk_init = [c for c, u in zip(init, carry_uk) if u]
        unknown_outs = trace.stage(
            scan_p, [*inv_res, *uk_bc, *uk_init, *var_tapes, active],
            dict(jaxpr=body_u, num_consts=n_inv + len(uk_bc), num_carry=len(uk_init),
                 length=None, reverse=False), None)
    k_it, u_it = iter(known_vals), iter(unknown_outs)
    outs = [next(u_it) if u else next(k_it) for u in out_uk]
    return outs + [active] if record_pred else outs


partial_eval_rules[while_p] = _while_partial_eval


# ---------------------------------------------------------------------------------------------
# Batching


def _while_batch(axis_size, vals, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts,
                 body_nconsts, record_pred):
    cn, bn = cond_nconsts, body_nconsts
    vals = [v if d is None or d == 0 else _shape.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    d0 = tuple(None if d is None else 0 for d in dims)
    cc_d, bc_d, init_d = d0[:cn], d0[cn:cn + bn], d0[cn + bn:]
    n = len(init_d)
    n_ys = len(body_jaxpr.out_avals) - n

    def carry_dims(cb: Sequence[bool]) -> tuple[int | None, ...]:
        return tuple(0 if b else None for b in cb)

    def pred_batched(cb: Sequence[bool]) -> bool:
        _, pd = jr.batch_jaxpr(cond_jaxpr, axis_size, cc_d + carry_dims(cb), False)
        return pd[0] is not None

    def step(cb: tuple[bool, ...]) -> Sequence[bool]:
        if pred_batched(cb):
            return (True,) * n
        _, od = jr.batch_jaxpr(body_jaxpr, axis_size, bc_d + carry_dims(cb),
                               cb + (False,) * n_ys)
        return [d is not None for d in od[:n]]

    carry_b = _fixed_point(step, tuple(d is not None for d in init_d))
    init = list(vals[cn + bn:])
    # Python/NumPy scalars are device-neutral: they start the loop on the mapped operands'
    # device (a CuPy batch with a Python-int counter), not on the default one, so the batched
    # loop's selects never mix devices.
    loop_dev = next((get_aval(v).device for v, d in zip(vals, dims) if d is not None), None)
    if loop_dev is not None:
        init = [xp_for_device(loop_dev).asarray(v) if isinstance(v, _SCALARS) else v
                for v in init]
    for i, b in enumerate(carry_b):
        if b and init_d[i] is None:
            a = get_aval(init[i])
            init[i] = _shape.broadcast_in_dim(init[i], (axis_size,) + a.shape,
                                              tuple(range(1, a.ndim + 1)))
    cc, bc = vals[:cn], vals[cn:cn + bn]
    if not pred_batched(carry_b):
        body, od = jr.batch_jaxpr(body_jaxpr, axis_size, bc_d + carry_dims(carry_b),
                                  carry_b + (False,) * n_ys)
        cond, _ = jr.batch_jaxpr(cond_jaxpr, axis_size, cc_d + carry_dims(carry_b), False)
        outs = bind(while_p, *cc, *bc, *init, cond_jaxpr=cond, body_jaxpr=body,
                    cond_nconsts=cn, body_nconsts=bn, record_pred=record_pred)
        out_dims = list(carry_dims(carry_b)) + [None if d is None else 0 for d in od[n:]]
        return outs, out_dims + [None] if record_pred else out_dims
    # Each example's predicates become a tape the loop body records.
    cond, body, ys_dims = _masked_loop(cond_jaxpr, body_jaxpr, axis_size, cc_d, bc_d,
                                       record_pred)
    outs = bind(while_p, *cc, *cc, *bc, *init, cond_jaxpr=cond, body_jaxpr=body,
                cond_nconsts=cn, body_nconsts=cn + bn, record_pred=False)
    return outs, [0] * n + list(ys_dims)


@weak_lru_cache(maxsize=256)
def _masked_loop(cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr, axis_size: int,
                 cc_d: tuple[int | None, ...], bc_d: tuple[int | None, ...], record_pred: bool):
    """A loop over the whole batch that runs until every example's predicate is False.

    Each step computes every example's predicate and keeps the old carry where it is False;
    with ``record_pred`` the body also returns the predicates (one more tape).
    """
    cn, bn = len(cc_d), len(bc_d)
    n = len(body_jaxpr.in_avals) - bn
    n_ys = len(body_jaxpr.out_avals) - n
    all0 = (0,) * n
    bcond, _ = jr.batch_jaxpr(cond_jaxpr, axis_size, cc_d + all0, True)
    bbody, od = jr.batch_jaxpr(body_jaxpr, axis_size, bc_d + all0, (True,) * n + (False,) * n_ys)
    cc_avals = list(bcond.in_avals[:cn])
    carry_avals = list(bcond.in_avals[cn:])
    bc_avals = list(bbody.in_avals[:bn])

    def cond(*a: Any) -> list[Any]:
        pred = jr.eval_closed(bcond, *a)[0]
        return [_red.reduce_or(pred, (0,))]

    def body(*a: Any) -> list[Any]:
        c_c, b_c, carry = a[:cn], a[cn:cn + bn], a[cn + bn:]
        pred = jr.eval_closed(bcond, *c_c, *carry)[0]
        outs = jr.eval_closed(bbody, *b_c, *carry)
        new = []
        for old, nw in zip(carry, outs[:n]):
            shape = get_aval(old).shape
            which = _shape.broadcast_in_dim(pred, shape, (0,)) if len(shape) > 1 else pred
            new.append(_ew.select_n(which, old, nw))
        return new + list(outs[n:]) + ([pred] if record_pred else [])

    new_cond = trace_to_jaxpr(cond, cc_avals + carry_avals, eval_trace)
    new_body = trace_to_jaxpr(body, cc_avals + bc_avals + carry_avals, eval_trace)
    ys_dims = tuple(None if d is None else 0 for d in od[n:]) + ((0,) if record_pred else ())
    return new_cond, new_body, ys_dims


batching.batch_rules[while_p] = _while_batch


# ---------------------------------------------------------------------------------------------
# Dead code elimination: tapes no one reads are not recorded


def _while_dce(used_outputs: list[bool], eqn: Eqn) -> tuple[list[bool], Eqn | None]:
    p = eqn.params
    body: ClosedJaxpr = p["body_jaxpr"]
    n = len(body.in_avals) - p["body_nconsts"]
    n_ys = len(body.out_avals) - n
    used_ys = used_outputs[n:n + n_ys]
    record = p["record_pred"] and used_outputs[-1]
    if all(used_ys) and record == p["record_pred"]:
        return [True] * len(eqn.invars), eqn
    j = body.jaxpr
    outvars = list(j.outvars[:n]) + [v for v, u in zip(j.outvars[n:], used_ys) if u]
    new_body = dce_closed_jaxpr(ClosedJaxpr(Jaxpr(j.constvars, j.invars, outvars, j.eqns),
                                            body.consts))
    new_eqn = eqn.replace(
        outvars=list(eqn.outvars[:n]) + [v for v, u in zip(eqn.outvars[n:n + n_ys], used_ys)
                                         if u] + (eqn.outvars[-1:] if record else []),
        params=dict(p, body_jaxpr=new_body, record_pred=record),
    )
    return [True] * len(new_eqn.invars), new_eqn


dce_rules[while_p] = _while_dce


# ---------------------------------------------------------------------------------------------
# jit: the compiled function runs the loop over compiled cond and body from the start


def _while_emitted(cond_fn: Callable[..., list], body_fn: Callable[..., list], params: dict,
                   xp: Any, *args: Any) -> list[Any]:
    return _while_run(functools.partial(cond_fn, xp), functools.partial(body_fn, xp), None,
                      args, **params)


def _emit_while(ctx: Any, eqn: Eqn, args: list[str]) -> Any:
    p = eqn.params
    c, b = compiled(p["cond_jaxpr"]), compiled(p["body_jaxpr"])
    if c is None or b is None:
        return None  # the generic fallback calls the impl
    helper = ctx.bind(functools.partial(_while_emitted, c.fn, b.fn, dict(p)), "while")
    return _compile.Emission(f"{helper}({', '.join(['xp', *args])})")


_compile.emitters[while_p] = _emit_while
