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

from funcgrad import tree_util
from funcgrad.api import closure_convert
from funcgrad.avals import get_aval
from funcgrad.core import Tracer, current_trace
from funcgrad.interpreters.jvp import tangent_aval, zeros_like_aval
from funcgrad.interpreters.staging import trace_to_jaxpr
from funcgrad.ir import ClosedJaxpr, eval_jaxpr
from funcgrad.ops.custom_derivatives import (
    CustomVJPPrimal,
    SymbolicZero,
    custom_jvp,
    custom_vjp,
)

__all__ = ["custom_jvp", "custom_vjp", "custom_gradient", "SymbolicZero", "CustomVJPPrimal",
           "closure_convert", "zero_from_primal", "custom_vjp_primal_tree_values"]


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
