"""Shared machinery of the control-flow primitives.

- tracing user functions (branches, loop bodies) to closed jaxprs whose constants, including
  tracers of enclosing transformations, become explicit operands;
- type checks that name pytree leaf paths and both abstract values;
- small jaxpr surgery (reordering, unused inputs) the rules need to line operands up;
- a fast evaluator for the implementations: a jaxpr is turned once into a list of steps that
  call each primitive's implementation directly, so a loop runs its body without retracing and
  without the per-equation dispatch of ``eval_jaxpr``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

from funcgrad._cache import LRUCache, weak_lru_cache
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import device_of, get_default_device, is_array, xp_for_device
from funcgrad.compile import compile_jaxpr
from funcgrad.compile.keys import structure_key
from funcgrad.core import Tracer, current_trace, eval_trace
from funcgrad.interpreters.jvp import zeros_like_aval
from funcgrad.interpreters.staging import trace_to_jaxpr
from funcgrad.ir import ClosedJaxpr, Jaxpr, Literal, Var, eval_jaxpr
from funcgrad.ops import shape as _shape
from funcgrad.ops.control_flow._tape import Tape, TapeAval, empty_tape
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = [
    "Traced",
    "trace_fun",
    "merge_consts",
    "same_type",
    "type_str",
    "check_carry_types",
    "check_solver_output",
    "runner",
    "compiled",
    "COMPILE_AFTER",
    "as_output",
    "out_xp",
    "weak_scalar_slots",
    "keep_weak",
    "reorder",
    "add_unused_invars",
    "zeros_for",
    "closed_call",
]


class Traced:
    """A user function traced to a jaxpr: ``jaxpr`` takes ``consts`` first, then the leaves."""

    __slots__ = ("jaxpr", "consts", "out_tree")

    def __init__(self, jaxpr: ClosedJaxpr, consts: list[Any], out_tree: Any) -> None:
        self.jaxpr = jaxpr
        self.consts = consts
        self.out_tree = out_tree

    @property
    def out_avals(self) -> list[ShapedArray]:
        return self.jaxpr.out_avals


def _leaf_aval(x: Any, what: str, path: Any) -> ShapedArray:
    try:
        return get_aval(x)
    except TypeError:
        raise TypeError(
            f"{what} must return arrays (or pytrees of arrays), but output "
            f"{tree_util.keystr(path) or 'value'} is a {type(x).__name__}"
        ) from None


#: While set (funcgrad.random's key-reuse checker sets it while it checks), a loop body is
#: traced through it, as ``check(what, n_carry, trace, ins, outs)``: ``trace()`` traces the
#: body, after which ``ins``/``outs`` hold its input tracers and output leaves (the first
#: ``n_carry`` of each the carry), for the checker to find keys every iteration would consume.
loop_body_check: ContextVar[Callable[..., Any] | None] = ContextVar(
    "funcgrad_loop_body_check", default=None)


def trace_fun(
    fun: Callable[..., Any],
    args_tree: Any,
    in_avals: Sequence[ShapedArray],
    what: str,
    origins: Sequence[str] | None = None,
    carry: int | None = None,
) -> Traced:
    """Trace ``fun(*tree_unflatten(args_tree, leaves))`` on abstract leaves of ``in_avals``.

    The enclosing trace is the parent, so values ``fun`` closes over (outer tracers, arrays)
    become jaxpr constants; they are turned into leading inputs and returned in ``consts``
    for the caller to pass as operands. ``carry``: ``fun`` is a loop body run again and again,
    its first ``carry`` inputs and outputs the loop's carry.
    """
    store: list[Any] = []
    ins: list[Any] = []
    outs: list[Any] = []

    def flat(*leaves: Any) -> list[Any]:
        ins[:] = leaves
        args = tree_util.tree_unflatten(args_tree, list(leaves))
        out = fun(*args)
        pairs, out_tree = tree_util.tree_flatten_with_path(out)
        store.append(out_tree)
        for p, leaf in pairs:
            _leaf_aval(leaf, what, p)
        outs[:] = [leaf for _, leaf in pairs]
        return list(outs)

    check = None if carry is None else loop_body_check.get()
    if check is None:
        closed = trace_to_jaxpr(flat, list(in_avals), current_trace(), origins)
    else:
        closed = check(what, carry, lambda: trace_to_jaxpr(flat, list(in_avals),
                                                           current_trace(), origins), ins, outs)
    j = closed.jaxpr
    body = ClosedJaxpr(Jaxpr([], list(j.constvars) + list(j.invars), j.outvars, j.eqns), [])
    # A body traced anew on each eager call (a fresh closure over new weights) is the same
    # jaxpr each time: hand out the first one, so that the rules' caches keyed on it (JVP,
    # partial evaluation and transposition of the body, its compiled code) hit.
    key = structure_key(body)
    if key is not None:
        key = (key, what, tuple(origins or ()))  # the names errors give its inputs
        seen = _traced_bodies.get(key)
        if seen is None:
            _traced_bodies[key] = body
        else:
            body = seen
    return Traced(body, list(closed.consts), store[0])


#: traced bodies by structure (:func:`funcgrad.compile.keys.structure_key`), most recent kept
_traced_bodies = LRUCache(maxsize=256)


def merge_consts(traced: Sequence[Traced]) -> tuple[list[Any], list[ClosedJaxpr]]:
    """One constant list for several traced functions (branches): each jaxpr takes them all."""
    consts: list[Any] = []
    index: dict[int, int] = {}
    for t in traced:
        for c in t.consts:
            if id(c) not in index:
                index[id(c)] = len(consts)
                consts.append(c)
    out = []
    for t in traced:
        j = t.jaxpr.jaxpr
        nc = len(t.consts)
        mine = {index[id(c)]: v for c, v in zip(t.consts, j.invars[:nc])}
        invars = [mine[i] if i in mine else Var(get_aval(c)) for i, c in enumerate(consts)]
        out.append(ClosedJaxpr(Jaxpr([], invars + j.invars[nc:], j.outvars, j.eqns),
                               t.jaxpr.consts))
    return consts, out


def type_str(a: ShapedArray) -> str:
    return a.str_short()


def same_type(a: ShapedArray, b: ShapedArray) -> bool:
    """Equal shape, dtype and kind (tape or array); weak typing may differ."""
    return a.shape == b.shape and a.dtype == b.dtype and (type(a) is TapeAval) == (
        type(b) is TapeAval) and (type(a) is not TapeAval or same_type(a.elem, b.elem))


def check_carry_types(
    what: str,
    in_tree: Any,
    in_avals: Sequence[ShapedArray],
    out_tree: Any,
    out_avals: Sequence[ShapedArray],
    in_name: str = "the initial carry",
    out_name: str = "the body's output carry",
) -> None:
    """The loop carry keeps its structure, shapes and dtypes; errors name the leaf path."""
    if in_tree != out_tree:
        raise TypeError(
            # JAX's first sentence, which code written for JAX matches on, then the details
            f"{what} body function carry input and carry output must have the same pytree "
            f"structure, but they differ. {what}: the carry changes structure: {in_name} is "
            f"{in_tree} but {out_name} is "
            f"{out_tree}; the carry must keep its pytree structure"
        )
    paths = [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(
        tree_util.tree_unflatten(in_tree, list(range(len(in_avals)))))[0]]
    for p, a, b in zip(paths, in_avals, out_avals):
        if not same_type(a, b):
            raise TypeError(
                f"{what} body function carry input and carry output must have equal types, "
                f"but they differ. {what}: the carry{p} changes type: {in_name} has "
                f"{type_str(a)} but "
                f"{out_name} has {type_str(b)}; the carry must keep its shape and dtype "
                "(cast with .astype(...) or change the initial value)"
            )


def check_solver_output(api: str, what: str, traced: Traced, tree: Any,
                        avals: list[ShapedArray], has_aux: bool, like: str) -> Any:
    """The aux tree (None without ``has_aux``) of the user function ``what`` that
    ``custom_linear_solve`` / ``custom_root`` (``api``) traced, after checking that its
    solution part has the structure ``tree`` and the shapes ``avals`` of ``like`` (``b``, the
    initial guess).

    Example:
        >>> import numpy as np
        >>> from funcgrad import tree_util
        >>> from funcgrad.avals import get_aval
        >>> tree, avals = tree_util.tree_structure(0.0), [get_aval(np.ones(2))]
        >>> t = trace_fun(lambda x: x * 2, tree_util.tree_structure((0.0,)), avals, "solve")
        >>> check_solver_output("custom_root", "solve", t, tree, avals, False, "initial_guess")
    """
    out_tree, aux_tree = traced.out_tree, None
    if has_aux:
        parts = tree_util.tree_unflatten(out_tree, list(range(out_tree.num_leaves)))
        if not isinstance(parts, tuple) or len(parts) != 2:
            raise TypeError(f"{api}: with has_aux=True, {what} must return a pair "
                            f"(solution, aux), got the structure {out_tree}")
        out_tree = tree_util.tree_structure(parts[0])
        aux_tree = tree_util.tree_structure(parts[1])
    if out_tree != tree:
        raise TypeError(f"{api}: {what} must return the structure of {like}, {tree}, "
                        f"got {out_tree}")
    for k, (got, want) in enumerate(zip(traced.out_avals, avals)):
        if got.shape != want.shape:
            raise ValueError(f"{api}: {what} output shapes must match {like}, got "
                             f"{type_str(got)} for {like}'s {type_str(want)} (leaf {k})")
    return aux_tree


def leaf_paths(tree: Any) -> list[str]:
    n = tree.num_leaves
    return [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(
        tree_util.tree_unflatten(tree, list(range(n))))[0]]


# ---------------------------------------------------------------------------------------------
# Fast evaluation of jaxprs on concrete values (for the implementations)

@weak_lru_cache(maxsize=512)
def runner(closed: ClosedJaxpr) -> Callable[..., list]:
    """A function evaluating ``closed`` on concrete values, straight over the implementations.

    Built once per jaxpr (cached while the jaxpr lives, 512 at most) so loop bodies are not
    re-dispatched through the trace machinery each iteration.
    """
    return _build_runner(closed)


def _build_runner(closed: ClosedJaxpr) -> Callable[..., list]:
    jaxpr = closed.jaxpr
    slots: dict[Var, int] = {}
    template: list[Any] = []

    def slot_of(a: Any) -> int:
        if type(a) is Literal:
            template.append(a.val)
            return len(template) - 1
        s = slots.get(a)
        if s is None:
            s = slots[a] = len(template)
            template.append(None)
        return s

    for v, c in zip(jaxpr.constvars, closed.consts):
        template_idx = slot_of(v)
        template[template_idx] = c
    in_slots = [slot_of(v) for v in jaxpr.invars]
    steps = []
    for eqn in jaxpr.eqns:
        ins = [slot_of(a) for a in eqn.invars]
        outs = [slot_of(v) for v in eqn.outvars]
        steps.append((eqn.prim, ins, eqn.params, outs))
    out_slots = [slot_of(a) for a in jaxpr.outvars]
    process = eval_trace.process_primitive
    n_in = len(in_slots)

    def run(*args: Any) -> list:
        if len(args) != n_in:
            raise TypeError(f"jaxpr takes {n_in} arguments, got {len(args)}")
        env = list(template)
        for s, x in zip(in_slots, args):
            env[s] = x
        for prim, ins, params, outs in steps:
            res = process(prim, [env[i] for i in ins], params)
            for s, r in zip(outs, res):
                env[s] = r
        return [env[s] for s in out_slots]

    return run


#: iterations a loop runs over the interpreted body before compiling it (compiling costs a few
#: milliseconds, then each iteration runs several times faster); a scan, whose trip count is
#: known, compiles a body it would run more often than this before the first iteration
COMPILE_AFTER = 48


def _compilable(closed: ClosedJaxpr) -> bool:
    # Tapes are opaque Python objects; the code generator reasons about array buffers.
    j = closed.jaxpr
    if any(type(v.aval) is TapeAval for v in (*j.invars, *j.constvars)):
        return False
    if any(type(a.aval) is TapeAval for a in j.outvars):
        return False
    return not any(type(v.aval) is TapeAval for e in j.eqns for v in e.outvars)


def compiled(closed: ClosedJaxpr) -> Callable[..., list] | None:
    """The compiled executable of ``closed`` (cached), or None when it cannot be compiled."""
    if not _compilable(closed):
        return None

    # By structure: an eager loop traces its body again on every call.
    return compile_jaxpr(closed, None, "loop_body", by_structure=True)


_PY_SCALARS = (bool, int, float, complex)


def weak_scalar_slots(avals: Sequence[ShapedArray]) -> list[int]:
    """Positions of weakly typed scalar carries (those that started as Python scalars)."""
    return [k for k, a in enumerate(avals)
            if a.weak_type and a.shape == () and type(a) is not TapeAval]


def keep_weak(carry: list[Any], slots: Sequence[int]) -> Any:
    """Turn weakly typed scalar carries back into Python scalars, in place.

    A loop counter that started as ``0`` is weakly typed in the jaxpr (``f32_array + i``
    stays float32, NEP 50), but one iteration of ``i + 1`` at run time gives a 0-d array,
    which NumPy treats as strong: the next ``f32_array + i`` would silently be float64.
    Returns one of the arrays replaced (None if none was): the loop's result goes back to its
    device (:func:`as_output`).
    """
    seen = None
    for k in slots:
        v = carry[k]
        if type(v) not in _PY_SCALARS:
            seen = v
            carry[k] = v.item()
    return seen


def as_output(x: Any, aval: ShapedArray, like: Sequence[Any] = ()) -> Any:
    """A Python scalar carried through a loop comes out as a 0-d array, on the device of the
    arrays among ``like`` (the construct's operands; the default device when there are none).
    """
    if type(x) in _PY_SCALARS:
        return out_xp(like).asarray(x, dtype=aval.dtype)
    return x


def out_xp(like: Sequence[Any]) -> Any:
    """The array module of the arrays among ``like``, or the default device's."""
    arrays = [a for a in like if is_array(a)]
    dev = [d for d in map(device_of, arrays) if d != "cpu"][:1] or ["cpu" if arrays else None]
    return xp_for_device(dev[0] or get_default_device())


# ---------------------------------------------------------------------------------------------
# Jaxpr surgery


def reorder(
    closed: ClosedJaxpr,
    in_order: Sequence[int] | None = None,
    out_order: Sequence[int] | None = None,
) -> ClosedJaxpr:
    """``closed`` with invars/outvars permuted: new position i holds old ``order[i]``."""
    j = closed.jaxpr
    invars = j.invars if in_order is None else [j.invars[i] for i in in_order]
    outvars = j.outvars if out_order is None else [j.outvars[i] for i in out_order]
    return ClosedJaxpr(Jaxpr(j.constvars, invars, outvars, j.eqns), closed.consts)


def add_unused_invars(
    closed: ClosedJaxpr, avals: Sequence[ShapedArray], at: int
) -> ClosedJaxpr:
    """``closed`` with extra inputs of ``avals`` (ignored) inserted at position ``at``."""
    j = closed.jaxpr
    new = [Var(a) for a in avals]
    invars = list(j.invars[:at]) + new + list(j.invars[at:])
    return ClosedJaxpr(Jaxpr(j.constvars, invars, j.outvars, j.eqns), closed.consts)


def zeros_for(aval: ShapedArray) -> Any:
    """A zero value of ``aval`` (an empty tape for tape avals)."""
    if type(aval) is TapeAval:
        return empty_tape(aval)
    zero = zeros_like_aval(ShapedArray((), aval.dtype, False, aval.device))
    if not aval.shape:
        return zero
    # Broadcast when run: a big zeros constant would stay alive with the (cached) jaxpr.
    return _shape.broadcast_in_dim(zero, aval.shape, ())


def closed_call(closed: ClosedJaxpr, *args: Any) -> list[Any]:
    """Evaluate ``closed`` on the current trace (so it is transformed by it)."""
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def has_tracer(xs: Sequence[Any]) -> bool:
    return any(isinstance(x, Tracer) for x in xs)


def is_tape(x: Any) -> bool:
    return type(x) is Tape
