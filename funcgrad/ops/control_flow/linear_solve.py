"""``custom_linear_solve``: a matrix-free linear solve differentiated implicitly (as JAX's).

``x = solve(matvec, b)`` is computed by the user's ``solve`` (any algorithm: a conjugate-gradient
``while_loop``, a factorisation...), but its derivatives assume only that ``matvec(x) == b``:
``dx = solve(matvec, db - dmatvec(x))`` in forward mode and ``ct_b =
transpose_solve(vecmat, ct_x)`` in reverse mode (``vecmat``, the transpose of ``matvec``, is
derived by transposing it), so the solver itself is never differentiated. One primitive,
``custom_linear_solve``, holds the four functions as closed jaxprs (``matvec``, ``vecmat``,
``solve``, ``transpose_solve``); what they close over -- tracers of enclosing transformations
included -- are its leading operands, then the leaves of ``b``.

Example:
    >>> import numpy as np, funcgrad
    >>> from funcgrad.ops.control_flow import custom_linear_solve
    >>> def solve_with(a, b):
    ...     return custom_linear_solve(lambda x: a @ x, b,
    ...                                lambda mv, r: funcgrad.numpy.linalg.solve(a, r),
    ...                                symmetric=True)
    >>> a = np.array([[2.0, 1.0], [1.0, 3.0]])
    >>> solve_with(a, np.array([3.0, 4.0])).tolist()
    [1.0, 1.0]
    >>> funcgrad.grad(lambda b: solve_with(a, b).sum())(np.array([3.0, 4.0])).tolist()
    [0.4, 0.2]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from funcgrad.avals import ShapedArray, float0, get_aval
from funcgrad.core import Primitive, bind, eval_trace, set_current_trace
from funcgrad.interpreters import batching
from funcgrad.interpreters import jaxpr_rules as jr
from funcgrad.interpreters.jvp import Zero, instantiate, jvp_rules
from funcgrad.interpreters.taylor import taylor_flat, taylor_rules
from funcgrad.interpreters.transpose import deftranspose, is_undefined
from funcgrad.ir import ClosedJaxpr
from funcgrad.ops import elementwise as _ew
from funcgrad.ops import shape as _shape
from funcgrad.ops.control_flow._common import (
    as_output,
    check_solver_output,
    runner,
    trace_fun,
    type_str,
)
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = ["custom_linear_solve", "linear_solve_p"]

linear_solve_p = Primitive("custom_linear_solve", multiple_results=True, carries_jaxprs=True)


class _Solve(NamedTuple):
    """One entry per function of the solve (jaxprs, operand counts, operands...)."""

    matvec: Any
    vecmat: Any
    solve: Any
    transpose_solve: Any

    def transpose(self) -> _Solve:
        """The transposed system's: ``vecmat`` is its ``matvec``, ``transpose_solve`` its
        ``solve``."""
        return _Solve(self.vecmat, self.matvec, self.transpose_solve, self.solve)


def _split(args: Sequence[Any], counts: _Solve) -> tuple[_Solve, list[Any]]:
    parts, at = [], 0
    for n in counts:
        parts.append(list(args[at:at + n]))
        at += n
    return _Solve(*parts), list(args[at:])


def _flat(parts: _Solve) -> list[Any]:
    return [x for part in parts for x in part]


# ---------------------------------------------------------------------------------------------
# Public wrapper


def custom_linear_solve(matvec: Callable[[Any], Any], b: Any,
                        solve: Callable[[Callable[[Any], Any], Any], Any],
                        transpose_solve: Callable[[Callable[[Any], Any], Any], Any] | None = None,
                        symmetric: bool = False, has_aux: bool = False) -> Any:
    """``solve(matvec, b)``, differentiated as the solution of ``matvec(x) == b`` (JAX's).

    ``matvec`` is a linear function of a pytree like ``b`` (it may close over arrays being
    differentiated: a matrix, a preconditioner's parameters); ``solve(matvec, b)`` returns
    ``x`` with ``matvec(x) == b``. Its algorithm is never differentiated: forward mode solves
    again for ``db - dmatvec(x)``, reverse mode solves the transposed system with
    ``transpose_solve(vecmat, ct)``, ``vecmat`` being ``matvec``'s transpose (derived
    automatically; ``symmetric=True`` says it is ``matvec`` itself, and ``transpose_solve``
    then defaults to ``solve``). Reverse mode without ``transpose_solve`` raises a
    ``TypeError``, as JAX. With ``has_aux=True`` both solvers return ``(x, aux)``; ``aux``
    (solver statistics) is returned and not differentiated.

    Example:
        >>> import numpy as np, funcgrad
        >>> from funcgrad.ops.control_flow import custom_linear_solve
        >>> def f(d):   # solve diag(d) x = 1, divided elementwise
        ...     return custom_linear_solve(lambda x: d * x, np.ones(2),
        ...                                lambda mv, r: r / d, symmetric=True)
        >>> funcgrad.grad(lambda d: f(d).sum())(np.array([1.0, 2.0])).tolist()
        [-1.0, -0.25]
    """
    for name, fn in (("matvec", matvec), ("solve", solve)):
        if not callable(fn):
            raise TypeError(f"custom_linear_solve: {name} must be callable, got "
                            f"{type(fn).__name__}")
    if transpose_solve is not None and not callable(transpose_solve):
        raise TypeError(f"custom_linear_solve: transpose_solve must be callable or None, got "
                        f"{type(transpose_solve).__name__}")
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    leaves, tree = tree_util.tree_flatten(b)
    try:
        avals = [get_aval(x) for x in leaves]
    except TypeError:
        raise TypeError("custom_linear_solve: b must be an array or a pytree of arrays") from None
    args_tree = tree_util.tree_structure((b,))
    mv = trace_fun(matvec, args_tree, avals, "custom_linear_solve matvec")
    check_solver_output("custom_linear_solve", "matvec", mv, tree, avals, False, "b")
    s = trace_fun(lambda r: solve(matvec, r), args_tree, avals, "custom_linear_solve solve")
    aux_tree = check_solver_output("custom_linear_solve", "solve", s, tree, avals, has_aux, "b")
    if transpose_solve is None:
        vm = ts = None
    else:
        if symmetric:
            vm, vecmat = mv, matvec
        else:
            nc = len(mv.consts)
            vm_jaxpr = jr.transpose_jaxpr(mv.jaxpr, (False,) * nc + (True,) * len(avals))
            vm = type(mv)(vm_jaxpr, mv.consts, tree)

            def vecmat(y: Any) -> Any:
                ys = tree_util.tree_leaves(y)
                return tree_util.tree_unflatten(tree, jr.eval_closed(vm_jaxpr, *mv.consts, *ys))

        ts = trace_fun(lambda r: transpose_solve(vecmat, r), args_tree, avals,
                       "custom_linear_solve transpose_solve")
        check_solver_output("custom_linear_solve", "transpose_solve", ts, tree, avals,
                            has_aux, "b")
    parts = _Solve(mv, vm, s, ts)
    jaxprs = _Solve(*(None if t is None else t.jaxpr for t in parts))
    counts = _Solve(*(0 if t is None else len(t.consts) for t in parts))
    consts = [c for t in parts if t is not None for c in t.consts]
    outs = bind(linear_solve_p, *consts, *leaves, jaxprs=jaxprs, const_lengths=counts)
    x = tree_util.tree_unflatten(tree, outs[:len(leaves)])
    if not has_aux:
        return x
    return x, tree_util.tree_unflatten(aux_tree, outs[len(leaves):])


# ---------------------------------------------------------------------------------------------
# impl and shape rule


def _impl(*args: Any, jaxprs: _Solve, const_lengths: _Solve) -> list[Any]:
    params, b = _split(args, const_lengths)
    with set_current_trace(eval_trace):
        outs = runner(jaxprs.solve)(*params.solve, *b)
    return [as_output(o, a, args) for o, a in zip(outs, jaxprs.solve.out_avals)]


def _abstract(*avals: ShapedArray, jaxprs: _Solve, const_lengths: _Solve) -> list[ShapedArray]:
    _, b = _split(avals, const_lengths)
    want = jaxprs.matvec.in_avals[const_lengths.matvec:]
    if [a.shape for a in b] != [w.shape for w in want]:
        raise TypeError(f"custom_linear_solve: b is {[type_str(a) for a in b]} but the solve "
                        f"was traced for {[type_str(w) for w in want]}")
    return list(jaxprs.solve.out_avals)


linear_solve_p.def_impl(_impl)
linear_solve_p.def_abstract_eval(_abstract)


# ---------------------------------------------------------------------------------------------
# JVP: A x = b  =>  A dx = db - dA x


def _is_zero(t: Any) -> bool:
    return t is None or type(t) is Zero or getattr(t, "dtype", None) == float0


def _jvp(primals: Sequence[Any], tangents: Sequence[Any], *, jaxprs: _Solve,
         const_lengths: _Solve) -> tuple[list[Any], list[Any]]:
    params = dict(jaxprs=jaxprs, const_lengths=const_lengths)
    x = bind(linear_solve_p, *primals, **params)
    consts, b = _split(primals, const_lengths)
    consts_dot, b_dot = _split(tangents, const_lengths)
    nb = len(b)
    rhs = list(b_dot)
    nonzero = [not _is_zero(t) for t in consts_dot.matvec]
    if any(nonzero):
        # dA x: the tangent of matvec(x) with respect to what matvec closes over, x held.
        jv, out_nz = jr.jvp_jaxpr(jaxprs.matvec, tuple(nonzero) + (False,) * nb, True)
        outs = jr.eval_closed(jv, *consts.matvec, *x[:nb],
                              *[t for t, nz in zip(consts_dot.matvec, nonzero) if nz])
        rhs = [_ew.neg(d) if _is_zero(t) else _ew.sub(t, d)
               for t, d in zip(rhs, outs[nb:])]
    aux_zeros = [Zero(a.update(weak_type=False)) for a in jaxprs.solve.out_avals[nb:]]
    if all(_is_zero(t) for t in rhs):
        return x, [Zero(a.update(weak_type=False)) for a in jaxprs.solve.out_avals[:nb]] + \
            aux_zeros
    rhs = [instantiate(Zero(a.update(weak_type=False))) if _is_zero(t) else t
           for t, a in zip(rhs, jaxprs.matvec.out_avals)]
    dx = bind(linear_solve_p, *_flat(consts), *rhs, **params)
    return x, list(dx[:nb]) + aux_zeros


jvp_rules[linear_solve_p] = _jvp


# ---------------------------------------------------------------------------------------------
# Taylor: A(t) x(t) = b(t) coefficient by coefficient


def _taylor(primals: Sequence[Any], series: Sequence[Any], *, jaxprs: _Solve,
            const_lengths: _Solve) -> tuple[list[Any], list[Any]]:
    """The series of ``x(t) = A(t)^-1 b(t)``: coefficient ``k`` of ``A(t) x(t) = b(t)`` is
    ``A_0 x_k = b_k - sum_{j>=1} A_j x_{k-j}``, the sum being coefficient ``k`` of
    ``matvec(x~)`` with ``x~ = x_0 + ... + x_{k-1} t^{k-1}`` (a jet of ``matvec``, when what
    it closes over moves with ``t``), and each ``x_k`` one more solve with the primal
    operator: K solves, where pushing the series through the JVP rule (which solves again)
    would double the work per order."""
    params = dict(jaxprs=jaxprs, const_lengths=const_lengths)
    outs = bind(linear_solve_p, *primals, **params)
    consts, _ = _split(primals, const_lengths)
    c_series, b_series = _split(series, const_lengths)
    order = next(len(s) for s in series if s is not None)
    nb = len(b_series)
    x0 = outs[:nb]
    moving = [s is not None and any(c is not None for c in s) for s in c_series.matvec]
    xs: list[list[Any]] = [[None] * order for _ in range(nb)]
    for k in range(1, order + 1):
        rhs = [None if s is None else s[k - 1] for s in b_series]
        if any(moving):
            in_series = [None if not m else list(s[:k])
                         for m, s in zip(moving, c_series.matvec)]
            in_series += [xs[i][:k - 1] + [None] for i in range(nb)]
            _, prod = taylor_flat(lambda *a: jr.eval_closed(jaxprs.matvec, *a),
                                  [*consts.matvec, *x0], in_series, k)
            for i, p in enumerate(prod[:nb]):
                d = None if p is None else p[k - 1]
                if d is not None:
                    rhs[i] = _ew.neg(d) if rhs[i] is None else _ew.sub(rhs[i], d)
        if all(r is None for r in rhs):
            continue
        rhs = [instantiate(Zero(a.update(weak_type=False))) if r is None else r
               for r, a in zip(rhs, jaxprs.matvec.out_avals)]
        sol = bind(linear_solve_p, *_flat(consts), *rhs, **params)
        for i in range(nb):
            xs[i][k - 1] = sol[i]
    # the solver's statistics (has_aux) are not differentiated
    return outs, [None if all(c is None for c in x) else x for x in xs] + \
        [None] * (len(outs) - nb)


taylor_rules[linear_solve_p] = _taylor


# ---------------------------------------------------------------------------------------------
# Transpose: ct_b solves the transposed system for ct_x


def _transpose(cts: Sequence[Any], *args: Any, jaxprs: _Solve,
               const_lengths: _Solve) -> list[Any]:
    if jaxprs.transpose_solve is None:
        raise TypeError("custom_linear_solve: transpose_solve required for backwards mode "
                        "automatic differentiation (pass transpose_solve=, or symmetric=True "
                        "for a symmetric operator)")
    consts, b = _split(args, const_lengths)
    if any(is_undefined(c) for c in _flat(consts)):
        raise TypeError("custom_linear_solve: cannot transpose with respect to what matvec or "
                        "the solvers close over (the solve is linear in b only)")
    nb = len(b)
    ct_x = [instantiate(Zero(a.update(weak_type=False))) if _is_zero(c) else c
            for c, a in zip(cts[:nb], jaxprs.solve.out_avals)]
    out = bind(linear_solve_p, *_flat(consts.transpose()), *ct_x,
               jaxprs=jaxprs.transpose(), const_lengths=const_lengths.transpose())
    return [None] * len(_flat(consts)) + [o if is_undefined(x) else None
                                          for o, x in zip(out[:nb], b)]


deftranspose(linear_solve_p, _transpose)


# ---------------------------------------------------------------------------------------------
# Batching: which of b and x are batched is a fixed point over the four functions


def _batched(closed: ClosedJaxpr | None, axis_size: int, bat: Sequence[bool],
             inst: Sequence[bool]) -> tuple[ClosedJaxpr | None, list[bool]]:
    if closed is None:
        return None, []
    new, dims = jr.batch_jaxpr(closed, axis_size, tuple(0 if f else None for f in bat),
                               tuple(inst))
    return new, [d is not None for d in dims]


def _batch(axis_size: int, vals: Sequence[Any], dims: Sequence[int | None], *,
           jaxprs: _Solve, const_lengths: _Solve) -> tuple[list[Any], list[int | None]]:
    vals = [v if d is None or d == 0 else _shape.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    consts_bat, orig_b_bat = _split([d is not None for d in dims], const_lengths)
    mv, vm, s, ts = jaxprs
    n_op = len(mv.out_avals)
    n_aux = len(s.out_avals) - n_op
    b_bat = list(orig_b_bat)
    x_bat = [False] * len(s.out_avals)
    for _ in range(2 + len(b_bat) + len(x_bat)):
        s_new, s_x_bat = _batched(s, axis_size, consts_bat.solve + b_bat, x_bat)
        vm_new, vm_x_bat = _batched(vm, axis_size, consts_bat.vecmat + b_bat, b_bat)
        x_out = s_x_bat if vm is None else [
            p or q for p, q in zip(vm_x_bat + [True] * n_aux, s_x_bat)]
        x_noaux = x_out[:n_op]
        mv_new, mv_b_bat = _batched(mv, axis_size, consts_bat.matvec + x_noaux, b_bat)
        ts_new, ts_b_bat = _batched(ts, axis_size, consts_bat.transpose_solve + x_noaux, x_out)
        b_out = [p or q or r for p, q, r in zip(mv_b_bat, ts_b_bat[:n_op] or mv_b_bat,
                                                orig_b_bat)]
        if x_out == x_bat and b_out == b_bat:
            break
        x_bat, b_bat = x_out, b_out
    else:  # pragma: no cover - each round only adds batched slots
        raise RuntimeError("custom_linear_solve: batching found no fixed point")
    consts, b = _split(vals, const_lengths)
    b = [_shape.broadcast_in_dim(v, (axis_size,) + tuple(v.shape),
                                 tuple(range(1, len(v.shape) + 1))) if now and not was else v
         for v, was, now in zip(b, orig_b_bat, b_bat)]
    outs = bind(linear_solve_p, *_flat(consts), *b,
                jaxprs=_Solve(mv_new, vm_new, s_new, ts_new), const_lengths=const_lengths)
    return list(outs), [0 if f else None for f in s_x_bat]


batching.batch_rules[linear_solve_p] = _batch
