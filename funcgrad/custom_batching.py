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

from funcgrad.avals import get_aval
from funcgrad.core import bind, current_trace, eval_trace, set_current_trace
from funcgrad.interpreters.batching import BatchTrace, BatchTracer
from funcgrad.ops._batching_util import moveaxis_to_front
from funcgrad.ops.control_flow import map as _loop_map
from funcgrad.ops.custom_derivatives import forward_def_attr
from funcgrad.ops.custom_vmap import custom_vmap_call_p
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = ["custom_vmap", "sequential_vmap"]


class custom_vmap:  # noqa: N801  (JAX's name)
    """A function with a custom ``vmap`` rule (``jax.custom_batching.custom_vmap``).

    Define the rule with :meth:`def_vmap`: ``rule(axis_size, in_batched, *args) -> (out,
    out_batched)``. Under ``vmap``, ``args`` are the whole batch (batched ones with the batch
    axis first), ``in_batched`` is a list with one entry per argument -- a bool, or a pytree
    of bools for a pytree argument -- saying which are batched, and ``out_batched`` (a bool, or
    a pytree prefix of ``out``) says which outputs carry the batch axis first. The rule
    applies wherever the innermost ``vmap`` batches a call -- also a call staged by ``jit`` (or
    a ``scan`` body) that ``vmap`` then batches, and under ``grad`` of the ``vmap``, which
    differentiates the rule; called unbatched or differentiated itself, the function runs as
    written. (A ``custom_vmap`` defined inside a transformed function, which may close over
    its traced values, uses the rule only when called directly under the ``vmap``.)

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

    __getattr__ = forward_def_attr

    def __init__(self, fun: Callable[..., Any]) -> None:
        if not callable(fun):
            raise TypeError(f"custom_vmap: expected a function, got {type(fun).__name__}")
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule: Callable[..., Any] | None = None
        # Defined under a transformation: the function may close over its traced values.
        self._maybe_closure = current_trace() is not eval_trace

    def def_vmap(self, vmap_rule: Callable[..., Any]) -> Callable[..., Any]:
        """Set the rule ``vmap_rule(axis_size, in_batched, *args) -> (out, out_batched)``;
        returns it (use it as a decorator)."""
        if not callable(vmap_rule):
            raise TypeError(f"def_vmap: expected a function, got {type(vmap_rule).__name__}")
        self.vmap_rule = vmap_rule
        if current_trace() is not eval_trace:
            self._maybe_closure = True
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
        if trace is eval_trace:
            return self.fun(*args)
        leaves, in_tree = tree_util.tree_flatten(args)
        if self._maybe_closure:
            # Its traced closures must not enter a primitive's rules: the rule applies only
            # to a call batched right here.
            if type(trace) is BatchTrace:
                batched = [type(x) is BatchTracer and x._trace is trace for x in leaves]
                if any(batched):
                    return _apply_rule(self.vmap_rule, name, trace, leaves, in_tree, batched)
            return self.fun(*args)
        fun, vmap_rule = self.fun, self.vmap_rule
        out_trees: list[Any] = []

        def flat_fun(*xs: Any) -> list[Any]:
            out = fun(*tree_util.tree_unflatten(in_tree, list(xs)))
            out_leaves, out_tree = tree_util.tree_flatten(out)
            out_trees.append(out_tree)
            return out_leaves

        def flat_rule(n: int, batched: list[bool], xs: list[Any]) -> tuple[list, list]:
            out, flags = _run_rule(vmap_rule, name, n, batched, xs, in_tree)
            out_leaves, out_tree = tree_util.tree_flatten(out)
            if not out_trees:  # batched right away: the function itself never ran
                out_trees.append(out_tree)
            elif out_tree != out_trees[0]:
                raise TypeError(f"the vmap rule of {name} returned an output of structure "
                                f"{out_tree}, the function's is {out_trees[0]}")
            return out_leaves, flags

        flat_fun.__name__ = name
        flat_rule.__name__ = getattr(vmap_rule, "__name__", "vmap_rule")
        outs = bind(custom_vmap_call_p, *leaves, fun=flat_fun, rule=flat_rule, num_consts=0)
        return tree_util.tree_unflatten(out_trees[0], outs)


def _apply_rule(rule: Callable[..., Any], name: str, trace: BatchTrace, leaves: list,
                in_tree: Any, batched: list[bool]) -> Any:
    vals = [moveaxis_to_front(x.val, x.bdim) if b else x for x, b in zip(leaves, batched)]
    # The rule computes the batch on the trace below this vmap, as a batch rule does.
    with set_current_trace(trace.parent):  # type: ignore[arg-type]
        out, flags = _run_rule(rule, name, trace.axis_size, batched, vals, in_tree)
    out_leaves, out_tree = tree_util.tree_flatten(out)
    results = [BatchTracer(trace, o, 0) if b else o for o, b in zip(out_leaves, flags)]
    return tree_util.tree_unflatten(out_tree, results)


def _run_rule(rule: Callable[..., Any], name: str, n: int, batched: list[bool], vals: list,
              in_tree: Any) -> tuple[Any, list[bool]]:
    """Call the user's rule on flat ``vals`` (batch axis first where ``batched``); returns its
    output and one out_batched flag per output leaf, checked."""
    in_batched = list(tree_util.tree_unflatten(in_tree, list(batched)))
    res = rule(n, in_batched, *tree_util.tree_unflatten(in_tree, list(vals)))
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
    return out, list(flags)


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
