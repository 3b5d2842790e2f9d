"""Custom derivative rules under JAX's module name (``jax.custom_derivatives``): the same
objects as ``funcgrad.custom_jvp``, ``funcgrad.custom_vjp``, ``funcgrad.custom_gradient`` and
``funcgrad.closure_convert``, plus :class:`SymbolicZero`, the zero tangent a
``defjvp(..., symbolic_zeros=True)`` rule gets.

Example:
    >>> import funcgrad
    >>> from funcgrad.custom_derivatives import SymbolicZero, custom_jvp
    >>> @custom_jvp
    ... def mul(a, b):
    ...     return a * b
    >>> def mul_jvp(primals, tangents):
    ...     (a, b), (ta, tb) = primals, tangents
    ...     out = 0.0
    ...     if type(ta) is not SymbolicZero:   # skip the work for a zero tangent
    ...         out = out + ta * b
    ...     if type(tb) is not SymbolicZero:
    ...         out = out + a * tb
    ...     return a * b, out
    >>> _ = mul.defjvp(mul_jvp, symbolic_zeros=True)
    >>> float(funcgrad.grad(mul)(2.0, 3.0))
    3.0
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from funcgrad.api import closure_convert
from funcgrad.avals import get_aval
from funcgrad.core import Tracer, bind, current_trace
from funcgrad.interpreters.jvp import tangent_aval, zeros_like_aval
from funcgrad.interpreters.staging import trace_to_jaxpr
from funcgrad.ir import ClosedJaxpr, eval_jaxpr
from funcgrad.ops.custom_derivatives import (
    CustomVJPPrimal,
    SymbolicZero,
    custom_jvp,
    custom_jvp_call_p,
    custom_vjp,
    custom_vjp_call_p,
    linear_call_p,
)
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = ["custom_jvp", "custom_vjp", "custom_gradient", "SymbolicZero", "CustomVJPPrimal",
           "closure_convert", "zero_from_primal", "custom_vjp_primal_tree_values", "linear_call",
           # the primitives a jaxpr records for them (JAX's names), for jaxpr walkers
           "custom_jvp_call_p", "custom_vjp_call_p"]


class _GradientRule:
    """The residuals of a :func:`custom_gradient` call: the gradient function, traced to a
    jaxpr over the output cotangent on the forward pass, with the traced values it closes over
    (the forward pass's intermediates) as its pytree children -- so they travel as
    ``custom_vjp`` residuals -- and the jaxpr as static data."""

    __slots__ = ("closed", "hoist", "values", "ct_tree", "cts_tree")

    def __init__(self, closed: ClosedJaxpr, hoist: tuple[int, ...], values: list[Any],
                 ct_tree: Any, cts_tree: Any) -> None:
        self.closed, self.hoist, self.values = closed, hoist, values
        self.ct_tree, self.cts_tree = ct_tree, cts_tree

    def __call__(self, ct: Any, name: str) -> tuple:
        leaves, tree = tree_util.tree_flatten(ct)
        if tree != self.ct_tree:
            raise TypeError(
                f"custom_gradient function {name}: the output cotangent has structure {tree}, "
                f"the output has structure {self.ct_tree}"
            )
        consts = list(self.closed.consts)
        for i, v in zip(self.hoist, self.values):
            consts[i] = v
        outs = eval_jaxpr(self.closed.jaxpr, consts, *leaves)
        got = tree_util.tree_unflatten(self.cts_tree, outs)
        # As JAX: a gradient function of one argument may return its cotangent bare.
        return (got,) if tree_util.treedef_is_leaf(self.cts_tree) else got


tree_util.register_pytree_node(
    _GradientRule,
    lambda r: (r.values, (r.closed, r.hoist, r.ct_tree, r.cts_tree)),
    lambda aux, values: _GradientRule(aux[0], aux[1], list(values), aux[2], aux[3]),
)


def _value_and_rule(fun: Callable[..., Any], name: str, out: Any) -> tuple[Any, Any]:
    if not isinstance(out, tuple | list) or len(out) != 2 or not callable(out[1]):
        raise TypeError(
            f"custom_gradient function {name} must return a pair (output, gradient_function), "
            f"got {type(out).__name__}"
        )
    return out[0], out[1]


def custom_gradient(fun: Callable[..., Any]) -> custom_vjp:
    """Define a function and its reverse-mode rule in one (``jax.custom_gradient``, in the
    style of TensorFlow's ``tf.custom_gradient``).

    ``fun(*args)`` returns ``(out, vjp_fn)``: ``vjp_fn(ct)`` takes the cotangent of ``out``
    (same structure) and returns a tuple with one cotangent per argument (a bare value for a
    one-argument function; ``None`` for a zero one). ``vjp_fn`` may close over values computed
    on the forward pass -- that is how the forward and backward passes share work -- but,
    being traced once into a jaxpr, may not branch in Python on their values or on ``ct``.
    Returns a :class:`custom_vjp` function that computes ``out``.

    Example:
        >>> import funcgrad, funcgrad.numpy as fnp
        >>> @funcgrad.custom_gradient
        ... def f(x):
        ...     return x ** 2, lambda g: (g * x,)
        >>> float(f(3.0)), float(funcgrad.grad(f)(3.0))
        (9.0, 3.0)
        >>> @funcgrad.custom_gradient
        ... def log1pexp(x):  # the classic: a stable gradient shared with the forward pass
        ...     e = fnp.exp(x)
        ...     return fnp.log1p(e), lambda g: g * (1.0 - 1.0 / (1.0 + e))
        >>> float(funcgrad.grad(log1pexp)(100.0))
        1.0
    """
    if not callable(fun):
        raise TypeError(f"custom_gradient: expected a function, got {type(fun).__name__}")
    name = getattr(fun, "__name__", "custom_gradient function")

    @functools.wraps(fun)
    def primal(*args: Any, **kwargs: Any) -> Any:
        return _value_and_rule(fun, name, fun(*args, **kwargs))[0]

    def fwd(*args: Any, **kwargs: Any) -> tuple[Any, _GradientRule]:
        out, rule = _value_and_rule(fun, name, fun(*args, **kwargs))
        leaves, ct_tree = tree_util.tree_flatten(out)
        ct_avals = [tangent_aval(get_aval(x)) for x in leaves]
        box: list[Any] = []

        def flat_rule(*cts: Any) -> list[Any]:
            got = rule(tree_util.tree_unflatten(ct_tree, list(cts)))
            got_leaves, got_tree = tree_util.tree_flatten(got)
            box.append(got_tree)
            return got_leaves

        flat_rule.__name__ = getattr(rule, "__name__", "gradient_function")
        closed = trace_to_jaxpr(flat_rule, ct_avals, current_trace())
        # Every traced value the rule closes over (the forward pass's intermediates, an outer
        # transformation's values) becomes a residual; concrete constants stay in the jaxpr.
        hoist = tuple(i for i, c in enumerate(closed.consts) if isinstance(c, Tracer))
        values = [closed.consts[i] for i in hoist]
        return out, _GradientRule(closed, hoist, values, ct_tree, box[0])

    def bwd(rule: _GradientRule, ct: Any) -> tuple:
        return rule(ct, name)

    wrapped = custom_vjp(primal)
    wrapped.defvjp(fwd, bwd)
    return wrapped


def zero_from_primal(val: Any, symbolic_zeros: bool = False) -> Any:
    """The zero tangent of each leaf of ``val``: arrays of zeros of the tangent dtype
    (``float0`` for integer leaves), or :class:`SymbolicZero` with ``symbolic_zeros=True``
    (``jax.custom_derivatives.zero_from_primal``) -- what a symbolic-zeros rule returns for
    an output it does not perturb.

    Example:
        >>> import numpy as np
        >>> zero_from_primal(np.ones(2, np.float32))
        array([0., 0.], dtype=float32)
        >>> zero_from_primal({"a": 1.0}, symbolic_zeros=True)
        {'a': SymbolicZero}
    """
    def zero(x: Any) -> Any:
        t = tangent_aval(get_aval(x))
        return SymbolicZero(t) if symbolic_zeros else zeros_like_aval(t)

    return tree_util.tree_map(zero, val)


def custom_vjp_primal_tree_values(tree: Any) -> Any:
    """``tree`` with each :class:`CustomVJPPrimal` leaf (what a ``symbolic_zeros`` fwd rule
    gets) replaced by its value (``jax.custom_derivatives.custom_vjp_primal_tree_values``).

    Example:
        >>> custom_vjp_primal_tree_values({"w": CustomVJPPrimal(2.0, True)})
        {'w': 2.0}
    """
    def value(leaf: Any) -> Any:
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
        return leaf.value

    return tree_util.tree_map(value, tree)


def linear_call(fun: Callable[[Any, Any], Any], fun_transpose: Callable[[Any, Any], Any],
                residual_args: Any, linear_args: Any) -> Any:
    """``fun(residual_args, linear_args)`` for a ``fun`` linear in ``linear_args``, with
    ``fun_transpose(residual_args, ct)`` as its transpose (``jax.custom_derivatives
    .linear_call``).

    Reverse mode (``grad``, ``vjp``, ``linear_transpose``) calls ``fun_transpose`` instead of
    transposing ``fun``'s operations, and transposing that again gives ``fun`` back; forward
    mode (``jvp``) applies ``fun`` to the tangents. ``residual_args`` are the arguments in
    which ``fun`` need not be linear: they may not be differentiated (``ValueError``, as JAX
    refuses). Unlike JAX's, it also batches under ``vmap`` (``fun`` and ``fun_transpose``
    batched).

    Example:
        >>> import funcgrad, numpy as np
        >>> A = np.array([[1.0, 2.0], [3.0, 4.0]])
        >>> f = lambda x: linear_call(lambda a, v: a @ v, lambda a, c: a.T @ c, A, x)
        >>> f(np.array([1.0, 1.0])).tolist()
        [3.0, 7.0]
        >>> funcgrad.grad(lambda x: f(x)[0])(np.zeros(2)).tolist()
        [1.0, 2.0]
    """
    if not callable(fun) or not callable(fun_transpose):
        raise TypeError(f"linear_call: fun and fun_transpose must be callable, got "
                        f"{type(fun).__name__} and {type(fun_transpose).__name__}")
    res_leaves, res_tree = tree_util.tree_flatten(residual_args)
    lin_leaves, lin_tree = tree_util.tree_flatten(linear_args)
    nr = len(res_leaves)
    res_avals = [get_aval(x) for x in res_leaves]
    lin_avals = [get_aval(x) for x in lin_leaves]
    trees: dict[str, Any] = {}

    def flat(f: Callable[[Any, Any], Any], second_tree: Any, out_key: str) -> Any:
        def flat_f(*ops: Any) -> list[Any]:
            out = f(tree_util.tree_unflatten(res_tree, list(ops[:nr])),
                    tree_util.tree_unflatten(second_tree(), list(ops[nr:])))
            leaves, tree = tree_util.tree_flatten(out)
            trees.setdefault(out_key, tree)
            return leaves

        flat_f.__name__ = getattr(f, "__name__", "linear_call function")
        return flat_f

    flat_fun = flat(fun, lambda: lin_tree, "out")
    fun_jaxpr = trace_to_jaxpr(flat_fun, res_avals + lin_avals, current_trace())
    out_avals = list(fun_jaxpr.out_avals)
    flat_transpose = flat(fun_transpose, lambda: trees["out"], "ct")
    t_jaxpr = trace_to_jaxpr(flat_transpose, res_avals + [tangent_aval(a) for a in out_avals],
                             current_trace())
    # the transpose must map cotangents of the outputs to cotangents of linear_args
    ct_avals, want = t_jaxpr.out_avals, [tangent_aval(a) for a in lin_avals]
    if trees["ct"] != lin_tree or [(a.shape, a.dtype) for a in ct_avals] != [
            (a.shape, a.dtype) for a in want]:
        raise TypeError(
            f"linear_call: fun_transpose must return cotangents shaped as linear_args "
            f"({lin_tree}: {[a.str_short() for a in want]}), got {trees['ct']}: "
            f"{[a.str_short() for a in ct_avals]}")
    # Traced values the two functions close over (an enclosing jit's, vmap's) become residual
    # operands, so the equation is self-contained wherever it is staged or batched.
    fun_hoist = [i for i, c in enumerate(fun_jaxpr.consts) if isinstance(c, Tracer)]
    t_hoist = [i for i, c in enumerate(t_jaxpr.consts) if isinstance(c, Tracer)]
    hoisted = [fun_jaxpr.consts[i] for i in fun_hoist] + [t_jaxpr.consts[i] for i in t_hoist]
    n_res = nr + len(hoisted)
    fun_ops = _closed_call(fun_jaxpr, fun_hoist, nr, 0, n_res, flat_fun.__name__)
    t_ops = _closed_call(t_jaxpr, t_hoist, nr, len(fun_hoist), n_res, flat_transpose.__name__)
    outs = bind(linear_call_p, *res_leaves, *hoisted, *lin_leaves, fun=fun_ops,
                transpose=t_ops, num_res=n_res, out_avals=tuple(out_avals),
                lin_avals=tuple(lin_avals))
    return tree_util.tree_unflatten(trees["out"], outs)


def _closed_call(closed: ClosedJaxpr, hoist: list[int], nr: int, at: int, n_res: int,
                 name: str) -> Callable[..., list[Any]]:
    """``closed`` as a flat function of ``(*residuals, *hoisted values, *second)``: its
    hoisted constants, positions ``hoist``, read from the hoisted operands from ``at`` on."""
    def call(*ops: Any) -> list[Any]:
        consts = list(closed.consts)
        for i, v in zip(hoist, ops[nr + at:nr + at + len(hoist)]):
            consts[i] = v
        return eval_jaxpr(closed.jaxpr, consts, *ops[:nr], *ops[n_res:])

    call.__name__ = name
    return call
