"""``jax.ad_checkpoint``'s names: :func:`checkpoint` (``remat``), :func:`checkpoint_name` and
:data:`checkpoint_policies` (docs/remat.md), for ``from funcgrad.ad_checkpoint import
checkpoint_name`` as JAX programs write it, and :func:`print_saved_residuals` /
:func:`saved_residuals` (what reverse mode keeps for the backward pass).

Example:
    >>> import funcgrad, funcgrad.numpy as fnp
    >>> from funcgrad.ad_checkpoint import checkpoint, checkpoint_name
    >>> f = checkpoint(lambda x: fnp.sin(checkpoint_name(x * 2, "y")))
    >>> round(float(funcgrad.grad(f)(0.0)), 6)
    2.0
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from funcgrad.avals import ShapedArray, get_aval
from funcgrad.core import current_trace
from funcgrad.interpreters.linearize import linearize_flat
from funcgrad.interpreters.staging import trace_to_jaxpr
from funcgrad.ir import ClosedJaxpr, Literal
from funcgrad.ops.remat import (
    Offloadable,
    Recompute,
    Saveable,
    checkpoint,
    checkpoint_name,
    checkpoint_policies,
    name_p,
    remat,
)
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "remat", "saved_residuals",
           "print_saved_residuals", "Saveable", "Recompute", "Offloadable"]


def saved_residuals(fun: Callable[..., Any], *args: Any,
                    **kwargs: Any) -> list[tuple[ShapedArray, str]]:
    """The values reverse-mode differentiation of ``fun`` at ``args`` keeps for the backward
    pass (JAX's ``saved_residuals``): one ``(aval, where)`` per residual, ``where`` saying
    whether it is an argument (``'from the argument x'``) or which operation made it and on
    which line and column (``'output of sin from file.py:3:8 (f)'``, as JAX's). What
    checkpoint policies change.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> [w for _, w in saved_residuals(lambda x: fnp.sum(x * x), np.ones(3))]
        ['from the argument x']
        >>> f = checkpoint(lambda x: fnp.sum(fnp.sin(fnp.sin(x))))
        >>> [w for _, w in saved_residuals(f, np.ones(3))]
        ['from the argument x']
    """
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    names = _argument_names(fun, args, kwargs)

    def flat(*xs: Any) -> list[Any]:
        a, kw = tree_util.tree_unflatten(in_tree, list(xs))
        return tree_util.tree_leaves(fun(*a, **kw))

    def residuals(*xs: Any) -> list[Any]:
        return list(linearize_flat(flat, list(xs)).jaxpr.consts)

    closed = trace_to_jaxpr(residuals, [get_aval(x) for x in leaves], current_trace())
    jaxpr = closed.jaxpr
    args: list[tuple[int, ShapedArray, str]] = []
    made: list[tuple[int, ShapedArray, str]] = []
    seen: set[Any] = set()
    for v in jaxpr.outvars:
        if isinstance(v, Literal) or v in seen:
            continue  # a literal constant is no saved buffer
        seen.add(v)
        if v in jaxpr.invars:
            i = jaxpr.invars.index(v)
            args.append((i, v.aval, f"from the argument {names[i]}"))
        else:
            order, where = _made_by(jaxpr, v)
            made.append((order, v.aval, where))
    # as JAX lists them: the arguments in order, then the operations' results in order
    return [(a, w) for _, a, w in sorted(args, key=lambda t: t[0])] + [
        (a, w) for _, a, w in sorted(made, key=lambda t: t[0])]


def _made_by(jaxpr: Any, v: Any) -> tuple[int, str]:
    """(position of the equation that made ``v``, its description): through calls
    (``checkpoint``, ``jit``) to the operation inside, a ``checkpoint_name`` by its name."""
    for k, e in enumerate(jaxpr.eqns):
        if v not in e.outvars:
            continue
        inner = e.params.get("jaxpr")
        if e.prim.multiple_results and isinstance(inner, ClosedJaxpr):
            iv = inner.jaxpr.outvars[e.outvars.index(v)]
            if not isinstance(iv, Literal) and iv not in inner.jaxpr.invars:
                return k, _made_by(inner.jaxpr, iv)[1]
        src = (f" from {e.source_info.with_column()}"  # JAX's file:line:col
               if e.source_info and e.source_info.filename else "")
        if e.prim is name_p:
            return k, f"named {e.params['name']!r}{src}"
        return k, f"output of {e.prim.name}{src}"
    return len(jaxpr.eqns), "from a constant"


def print_saved_residuals(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Print :func:`saved_residuals`: one line per residual, its type and where it comes
    from (JAX's ``print_saved_residuals``).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> print_saved_residuals(lambda x, w: fnp.sum(x * w), np.ones(3), np.ones(3))
        f64[3] from the argument x
        f64[3] from the argument w
    """
    for aval, where in saved_residuals(fun, *args, **kwargs):
        print(f"{aval.str_short()} {where}")


def _argument_names(fun: Callable[..., Any], args: tuple, kwargs: dict) -> list[str]:
    """A name per array leaf of ``(args, kwargs)``: the parameter's name (with the path
    inside a pytree argument), as JAX's residual descriptions say."""
    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        params = []
    out = []
    for path, _ in tree_util.tree_flatten_with_path((args, kwargs))[0]:
        top, key, rest = path[0], path[1], path[2:]
        if top.idx == 0:  # positional
            i = key.idx
            name = params[i] if i < len(params) else f"args[{i}]"
        else:
            name = str(key.key)
        out.append(name + tree_util.keystr(tuple(rest)))
    return out
