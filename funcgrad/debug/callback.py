"""Host callbacks that run when the computation runs: ``callback``, ``print``, ``call_hook``.

Under ``jit`` a Python function called directly runs once, at trace time, with tracers. These
primitives instead run it each time the compiled function runs, with concrete arrays; they are
effectful (never removed, merged or folded by the compiler), in program order.

- ``debug_callback``: ``fn(*arrays)`` for its side effect; no outputs, no derivative.
- ``hook_call``: ``fn(*arrays)`` returns arrays of the same shapes and dtypes that replace the
  inputs (or ``None`` to keep them): gradient hooks use it. Differentiating *through* it
  treats it as the identity; under ``vmap`` ``fn`` is called once per example.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from funcgrad import tree_util
from funcgrad.avals import get_aval
from funcgrad.backend import xp_for
from funcgrad.core import Primitive, Tracer, bind
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import jvp_rules
from funcgrad.ir import effectful_primitives
from funcgrad.ops._batching_util import bdim_at_front

__all__ = ["callback", "print", "call_hook", "debug_callback_p", "hook_call_p"]


class _Fn:
    """A callable as a static param: hashable by identity, with a name for printing."""

    __slots__ = ("fn", "tree", "name")

    def __init__(self, fn: Callable[..., Any], tree: Any, name: str) -> None:
        self.fn, self.tree, self.name = fn, tree, name

    def __repr__(self) -> str:
        return self.name


# -- debug_callback ------------------------------------------------------------------------------

debug_callback_p = Primitive("debug_callback", multiple_results=True, carries_jaxprs=True)
effectful_primitives.add(debug_callback_p)


def _callback_impl(*args: Any, callback: _Fn) -> list[Any]:
    callback.fn(*tree_util.tree_unflatten(callback.tree, list(args)))
    return []


debug_callback_p.def_impl(_callback_impl)
debug_callback_p.def_abstract_eval(lambda *avals, callback: [])


def _callback_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, callback: _Fn):
    bind(debug_callback_p, *primals, callback=callback)
    return [], []


jvp_rules[debug_callback_p] = _callback_jvp


def _per_example(fn: Callable[..., Any], vals: Sequence[Any], dims: Sequence[Any], n: int,
                 ) -> list[list[Any]]:
    """Call ``fn`` once per example of a batch; the per-example results."""
    fronts = [bdim_at_front(v, d, n) for v, d in zip(vals, dims)]
    return [fn(*[f[i] for f in fronts]) for i in range(n)]


def _callback_batch(axis_size: int, vals: Sequence[Any], dims: Sequence[Any], *,
                    callback: _Fn):
    tree = callback.tree

    def each(*xs: Any) -> None:
        callback.fn(*tree_util.tree_unflatten(tree, list(xs)))

    def run_all(*arrays: Any) -> None:
        _per_example(each, arrays, [0] * len(arrays), axis_size)

    ops = [bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims)]
    flat_tree = tree_util.tree_structure(tuple(ops))
    bind(debug_callback_p, *ops, callback=_Fn(run_all, flat_tree, f"vmap({callback.name})"))
    return [], []


batching.batch_rules[debug_callback_p] = _callback_batch


def callback(fn: Callable[..., Any], *args: Any) -> None:
    """Call ``fn(*args)`` with concrete arrays whenever this point of the computation runs
    (eagerly, or every time a jitted function runs; once per example under ``vmap``).

    Example:
        >>> import funcgrad, numpy as np
        >>> seen = []
        >>> @funcgrad.jit
        ... def f(x):
        ...     funcgrad.debug.callback(lambda v: seen.append(v.tolist()), x * 2)
        ...     return x + 1
        >>> _ = f(np.array([1.0])); _ = f(np.array([2.0]))
        >>> seen
        [[2.0], [4.0]]
    """
    if not callable(fn):
        raise TypeError(f"debug.callback: expected a function, got {type(fn).__name__}")
    leaves, tree = tree_util.tree_flatten(args)
    name = getattr(fn, "__name__", type(fn).__name__)
    bind(debug_callback_p, *leaves, callback=_Fn(fn, tree, name))


def print(fmt: str, *args: Any, **kwargs: Any) -> None:  # noqa: A001  (JAX's name)
    """``print(fmt.format(*args, **kwargs))`` with concrete values when the computation runs.

    Example:
        >>> import funcgrad, numpy as np
        >>> funcgrad.jit(lambda x: funcgrad.debug.print("x = {}", x) or x)(np.array(3.0))
        x = 3.0
        array(3.)
    """
    import builtins

    def show(*a: Any, **k: Any) -> None:
        builtins.print(fmt.format(*a, **k))

    leaves, tree = tree_util.tree_flatten((args, kwargs))

    def run(*xs: Any) -> None:
        a, k = tree_util.tree_unflatten(tree, list(xs))
        show(*a, **k)

    bind(debug_callback_p, *leaves,
         callback=_Fn(run, tree_util.tree_structure(tuple(leaves)), "print"))


# -- hook_call -----------------------------------------------------------------------------------

hook_call_p = Primitive("hook_call", multiple_results=True, carries_jaxprs=True)
effectful_primitives.add(hook_call_p)


def _check_hook_result(res: Any, args: Sequence[Any], name: str) -> list[Any]:
    if res is None:
        return list(args)
    leaves = list(res) if isinstance(res, tuple | list) else [res]
    if len(leaves) != len(args):
        raise TypeError(f"hook {name} returned {len(leaves)} values; expected {len(args)} "
                        "(one per value it was given) or None")
    out = []
    for i, (r, a) in enumerate(zip(leaves, args)):
        if r is None:
            out.append(a)
            continue
        ra, aa = get_aval(r), get_aval(a)
        if ra.shape != aa.shape:
            raise ValueError(f"hook {name} returned a value of shape {ra.shape} at position {i}"
                             f"; expected shape {aa.shape} (the shape it was given) or None")
        if ra.dtype != aa.dtype:
            r = xp_for(r).asarray(r, dtype=aa.dtype)
        out.append(r)
    return out


def _hook_impl(*args: Any, hook: _Fn) -> list[Any]:
    return _check_hook_result(hook.fn(*args), args, hook.name)


hook_call_p.def_impl(_hook_impl)
hook_call_p.def_abstract_eval(lambda *avals, hook: list(avals))


def _hook_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, hook: _Fn):
    return bind(hook_call_p, *primals, hook=hook), list(tangents)


jvp_rules[hook_call_p] = _hook_jvp


def _hook_batch(axis_size: int, vals: Sequence[Any], dims: Sequence[Any], *, hook: _Fn):
    def run_all(*arrays: Any) -> list[Any]:
        rows = _per_example(lambda *xs: _check_hook_result(hook.fn(*xs), xs, hook.name),
                            arrays, [0] * len(arrays), axis_size)
        xp = xp_for(*arrays)
        return [xp.stack([r[j] for r in rows]) for j in range(len(arrays))]

    ops = [bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims)]
    outs = bind(hook_call_p, *ops, hook=_Fn(run_all, None, f"vmap({hook.name})"))
    return outs, [0] * len(outs)


batching.batch_rules[hook_call_p] = _hook_batch


def call_hook(fn: Callable[..., Any], *arrays: Any, name: str | None = None) -> list[Any]:
    """``fn(*arrays)`` -> replacement arrays (or None to keep them), run with concrete values.

    On plain arrays ``fn`` is called directly; on traced values (``jit``, ``vmap``, higher
    derivatives) it runs each time the computation runs, always with concrete arrays. Returns the (possibly replaced) arrays as a list.

    Example:
        >>> import numpy as np
        >>> call_hook(lambda g: g * 2, np.array([1.0]))
        [array([2.])]
    """
    label = name or getattr(fn, "__name__", type(fn).__name__)
    if not any(isinstance(a, Tracer) for a in arrays):
        return _check_hook_result(fn(*arrays), arrays, label)
    # Traced values (jit, vmap, a derivative of the backward pass): the primitive runs ``fn``
    # on concrete arrays when the computation runs, once per example under vmap.
    return bind(hook_call_p, *arrays, hook=_Fn(fn, None, label))
