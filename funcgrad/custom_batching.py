"""Custom batching rules under JAX's module name (``jax.custom_batching``): :class:`custom_vmap`
(a function with its own ``vmap`` rule) and :func:`sequential_vmap` (one whose batched form
loops over the examples).

Example:
    >>> import numpy as np, funcgrad
    >>> from funcgrad.custom_batching import custom_vmap
    >>> @custom_vmap
    ... def f(x, y):
    ...     return x * y
    >>> @f.def_vmap
    ... def f_vmap(axis_size, in_batched, xs, ys):
    ...     return xs * ys, True
    >>> funcgrad.vmap(f)(np.arange(3.0), np.ones(3)).tolist()
    [0.0, 1.0, 2.0]
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from funcgrad import tree_util
from funcgrad.avals import get_aval
from funcgrad.core import current_trace, set_current_trace
from funcgrad.interpreters.batching import BatchTrace, BatchTracer
from funcgrad.ops._batching_util import moveaxis_to_front
from funcgrad.ops.control_flow import map as _loop_map

__all__ = ["custom_vmap", "sequential_vmap"]


class custom_vmap:  # noqa: N801  (JAX's name)
    """A function with a custom ``vmap`` rule (``jax.custom_batching.custom_vmap``).

    Define the rule with :meth:`def_vmap`: ``rule(axis_size, in_batched, *args) -> (out,
    out_batched)``. Under ``vmap``, ``args`` are the whole batch (batched ones with the batch
    axis first), ``in_batched`` is a list with one entry per argument -- a bool, or a pytree
    of bools for a pytree argument -- saying which are batched, and ``out_batched`` (a bool, or
    a pytree prefix of ``out``) says which outputs carry the batch axis first. The rule
    applies where the function is called on values batched by the innermost ``vmap`` (also
    under ``jit`` of that ``vmap``, and with ``grad`` applied to the ``vmap``, which
    differentiates the rule); elsewhere -- called unbatched, differentiated, or staged by a
    ``jit`` that ``vmap`` then batches -- the function runs as written.

    Example:
        >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
        >>> @custom_vmap
        ... def norm(x):
        ...     return fnp.sqrt(fnp.sum(x * x))
        >>> @norm.def_vmap
        ... def norm_rule(axis_size, in_batched, xs):
        ...     return fnp.sqrt(fnp.sum(xs * xs, axis=1)), True
        >>> funcgrad.vmap(norm)(np.array([[3.0, 4.0], [0.0, 1.0]])).tolist()
        [5.0, 1.0]
    """

    def __init__(self, fun: Callable[..., Any]) -> None:
        if not callable(fun):
            raise TypeError(f"custom_vmap: expected a function, got {type(fun).__name__}")
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule: Callable[..., Any] | None = None

    def def_vmap(self, vmap_rule: Callable[..., Any]) -> Callable[..., Any]:
        """Set the rule ``vmap_rule(axis_size, in_batched, *args) -> (out, out_batched)``;
        returns it (use it as a decorator)."""
        if not callable(vmap_rule):
            raise TypeError(f"def_vmap: expected a function, got {type(vmap_rule).__name__}")
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = getattr(self.fun, "__name__", "custom_vmap function")
        if self.vmap_rule is None:
            raise AttributeError(
                f"No batching rule defined for custom_vmap function {name} using def_vmap."
            )
        if kwargs:  # the rule takes positional arguments, as JAX's
            try:
                bound = inspect.signature(self.fun).bind(*args, **kwargs)
            except (TypeError, ValueError) as e:
                raise TypeError(f"{name}: {e}") from None
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
            if kwargs:
                raise TypeError(f"{name}: keyword-only arguments ({', '.join(kwargs)}) are not "
                                "supported by custom_vmap functions; make them positional")
        trace = current_trace()
        if type(trace) is BatchTrace:
            leaves, in_tree = tree_util.tree_flatten(args)
            batched = [type(x) is BatchTracer and x._trace is trace for x in leaves]
            if any(batched):
                return _apply_rule(self.vmap_rule, name, trace, leaves, in_tree, batched)
        return self.fun(*args)


def _apply_rule(rule: Callable[..., Any], name: str, trace: BatchTrace, leaves: list,
                in_tree: Any, batched: list[bool]) -> Any:
    n = trace.axis_size
    vals = [moveaxis_to_front(x.val, x.bdim) if b else x for x, b in zip(leaves, batched)]
    in_batched = list(tree_util.tree_unflatten(in_tree, batched))
    # The rule computes the batch on the trace below this vmap, as a batch rule does.
    with set_current_trace(trace.parent):  # type: ignore[arg-type]
        res = rule(n, in_batched, *tree_util.tree_unflatten(in_tree, vals))
    if not isinstance(res, tuple | list) or len(res) != 2:
        raise TypeError(f"the vmap rule of {name} must return a pair (out, out_batched), got "
                        f"{type(res).__name__}")
    out, out_batched = res
    out_leaves, out_tree = tree_util.tree_flatten(out)
    try:
        flags = tree_util.broadcast_prefix(out_batched, out)
    except ValueError as e:
        raise ValueError(f"the vmap rule of {name} returned out_batched {out_batched!r}, not a "
                         f"prefix of the output's structure {out_tree}: {e}") from None
    results = []
    for i, (o, b) in enumerate(zip(out_leaves, flags)):
        if not isinstance(b, bool):
            raise TypeError(f"the vmap rule of {name}: out_batched entries must be bools, got "
                            f"{b!r}")
        if b:
            shape = get_aval(o).shape
            if not shape or shape[0] != n:
                raise ValueError(
                    f"the vmap rule of {name} says output {i} is batched, but its shape "
                    f"{shape} has no leading batch axis of size {n}"
                )
            results.append(BatchTracer(trace, o, 0))
        else:
            results.append(o)
    return tree_util.tree_unflatten(out_tree, results)


def sequential_vmap(f: Callable[..., Any]) -> custom_vmap:
    """``f`` whose ``vmap`` runs it once per example in a loop (``funcgrad.map``) instead of
    batching its operations (``jax.custom_batching.sequential_vmap``): for functions that
    cannot be batched, or whose batched form would need too much memory.

    Example:
        >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
        >>> f = sequential_vmap(lambda x, y: fnp.sum(x) * y)
        >>> funcgrad.vmap(f, in_axes=(0, None))(np.ones((3, 2)), 2.0).tolist()
        [4.0, 4.0, 4.0]
    """
    g = custom_vmap(f)

    @g.def_vmap
    def rule(axis_size: int, in_batched: list, *args: Any) -> tuple[Any, bool]:
        leaves, tree = tree_util.tree_flatten(list(args))
        flags = tree_util.tree_leaves(in_batched)
        mapped = [x for x, b in zip(leaves, flags) if b]

        def one(xs: list) -> Any:
            it = iter(xs)
            return f(*tree_util.tree_unflatten(tree, [next(it) if b else x
                                                      for x, b in zip(leaves, flags)]))

        return _loop_map(one, mapped), True

    return g
