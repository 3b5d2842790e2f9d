"""``pure_callback``: a Python function of host arrays, called as one operation of a program.

JAX's ``jax.pure_callback(callback, result_shape_dtypes, *args, vmap_method=..., **kwargs)``.
The callback is *pure* (its result depends on its arguments only), so a compiled program may
drop it when its result is unused, or call it once for equal arguments; use
``funcgrad.debug.callback`` for side effects. It gets NumPy arrays (copied from the device
when the arguments live on one) and returns arrays of the declared shapes; the results are
cast to the declared dtypes (within a kind: a float64 result declared float32 is rounded, as
JAX does without x64; a float result declared int is an error) and put on the arguments'
device.

There is no derivative (a ``ValueError`` when one is needed, as JAX: wrap the call in a
``custom_jvp`` / ``custom_vjp``). Under ``vmap``, ``vmap_method`` says how the callback is
called on a batch:

- ``"sequential"`` (or ``"sequential_unrolled"``): once per example, results stacked;
- ``"expand_dims"``: once, mapped arguments with the batch axis first, the others with a new
  leading axis of size 1 (the callback broadcasts);
- ``"broadcast_all"``: once, every argument broadcast to the batch (axis first);
- ``"legacy_vectorized"``: once, mapped arguments with the batch axis first, the others as
  they are.

Without a ``vmap_method`` it cannot be batched (a ``MissingRuleError``, as JAX's error).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy

from funcgrad import backend, tree_util
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.core import Primitive, bind
from funcgrad.errors import MissingRuleError
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import Zero, jvp_rules, tangent_aval
from funcgrad.ops import shape as _shape
from funcgrad.ops._batching_util import bdim_at_front, moveaxis_to_front

__all__ = ["pure_callback", "pure_callback_p", "VMAP_METHODS"]

#: The ways a batch can be handed to the callback (see the module docstring).
VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized")

pure_callback_p = Primitive("pure_callback", multiple_results=True)


class _Callback:
    """The callback as a static parameter: ``flat(*host_arrays) -> list`` returning one value
    per leaf of the declared results, ``out_avals`` their declared types. Hashable by
    identity."""

    __slots__ = ("flat", "out_avals", "name")

    def __init__(self, flat: Callable[..., list[Any]], out_avals: list[ShapedArray],
                 name: str) -> None:
        self.flat, self.out_avals, self.name = flat, out_avals, name

    def __repr__(self) -> str:
        return self.name


def _host_results(cb: _Callback, args: Sequence[Any]) -> list[numpy.ndarray]:
    """Call ``cb`` on host copies of ``args``; its results checked against the declared
    shapes and cast to the declared dtypes."""
    outs = cb.flat(*[numpy.asarray(backend.to_numpy(a)) for a in args])
    res = []
    for i, (o, a) in enumerate(zip(outs, cb.out_avals)):
        o = numpy.asarray(backend.to_numpy(o))
        if o.shape != a.shape:
            raise ValueError(
                f"pure_callback: {cb.name} returned a result of shape {o.shape} for result "
                f"{i}, declared {a.str_short()} in result_shape_dtypes"
            )
        if not numpy.can_cast(o.dtype, a.dtype, casting="same_kind"):
            raise TypeError(
                f"pure_callback: {cb.name} returned {o.dtype} for result {i}, declared "
                f"{a.dtype} in result_shape_dtypes; a cast of that kind would change values"
            )
        res.append(o.astype(a.dtype, copy=False))
    return res


def _impl(*args: Any, callback: _Callback, vmap_method: str | None) -> list[Any]:
    del vmap_method
    xp = backend.xp_for(*args, what="pure_callback")
    return [xp.asarray(r) for r in _host_results(callback, args)]


pure_callback_p.def_impl(_impl)
pure_callback_p.def_abstract_eval(
    lambda *avals, callback, vmap_method: list(callback.out_avals))


def _jvp(primals: Sequence[Any], tangents: Sequence[Any], *, callback: _Callback,
         vmap_method: str | None):
    if any(type(t) is not Zero for t in tangents):
        raise ValueError(
            f"pure_callback: {callback.name} has no derivative (a Python function of host "
            "arrays); to differentiate through it, wrap the call in a funcgrad.custom_jvp or "
            "custom_vjp function that gives the derivative"
        )
    outs = bind(pure_callback_p, *primals, callback=callback, vmap_method=vmap_method)
    return outs, [Zero(tangent_aval(get_aval(o))) for o in outs]


jvp_rules[pure_callback_p] = _jvp


def _batch(axis_size: int, vals: Sequence[Any], dims: Sequence[int | None], *,
           callback: _Callback, vmap_method: str | None):
    if vmap_method not in VMAP_METHODS:
        raise MissingRuleError(
            f"pure_callback: {callback.name} is called under vmap, which needs to know how "
            f"the callback takes a batch: pass vmap_method= one of {', '.join(VMAP_METHODS)} "
            f"(got {vmap_method!r})"
        )
    mapped = [d is not None for d in dims]
    if vmap_method in ("sequential", "sequential_unrolled"):
        ops = [moveaxis_to_front(v, d) if d is not None else v for v, d in zip(vals, dims)]

        def flat(*xs: Any) -> list[Any]:
            per = [_host_results(callback, [x[i] if m else x for x, m in zip(xs, mapped)])
                   for i in range(axis_size)]
            return [numpy.stack(col) if per else numpy.zeros((0, *a.shape), a.dtype)
                    for col, a in zip(zip(*per) if per else [()] * len(callback.out_avals),
                                      callback.out_avals)]
    else:
        if vmap_method == "broadcast_all":
            ops = [bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims)]
        elif vmap_method == "expand_dims":
            ops = [moveaxis_to_front(v, d) if d is not None else _shape.expand_dims(v, (0,))
                   for v, d in zip(vals, dims)]
        else:  # legacy_vectorized
            ops = [moveaxis_to_front(v, d) if d is not None else v for v, d in zip(vals, dims)]
        flat = callback.flat
    out_avals = [ShapedArray((axis_size, *a.shape), a.dtype, False, a.device)
                 for a in callback.out_avals]
    batched = _Callback(flat, out_avals, f"vmap({callback.name})")
    outs = bind(pure_callback_p, *ops, callback=batched, vmap_method=vmap_method)
    return outs, [0] * len(outs)


batching.batch_rules[pure_callback_p] = _batch


def _is_operand(v: Any) -> bool:
    return (isinstance(v, numpy.ndarray | numpy.generic | bool | int | float | complex)
            or backend.is_array(v) or isinstance(v, tuple(backend.traced_types)))


def pure_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                  sharding: Any = None, vmap_method: str | None = None,
                  **kwargs: Any) -> Any:
    """Call the pure Python function ``callback(*args, **kwargs)`` on host arrays as one
    operation of the computation, also under ``jit`` (at run time, with concrete values) and
    ``vmap`` (as ``vmap_method`` says: ``"sequential"``, ``"expand_dims"``,
    ``"broadcast_all"``, ``"legacy_vectorized"``).

    ``result_shape_dtypes`` is a pytree of :class:`~funcgrad.ShapeDtypeStruct` (or arrays)
    declaring what ``callback`` returns; results are cast to those dtypes. Array and number
    arguments are operands; other values (strings, objects) reach ``callback`` as they are.
    ``sharding`` is accepted as JAX's (no shards here). Not differentiable: a ``ValueError``
    under ``grad``/``jvp`` (wrap it in ``custom_jvp``/``custom_vjp``).

    Example:
        >>> import numpy as np, funcgrad
        >>> f = funcgrad.jit(lambda x: funcgrad.pure_callback(
        ...     np.sort, funcgrad.ShapeDtypeStruct(x.shape, x.dtype), x) * 2.0)
        >>> f(np.array([3.0, 1.0, 2.0])).tolist()
        [2.0, 4.0, 6.0]
        >>> funcgrad.vmap(lambda r: funcgrad.pure_callback(
        ...     np.sum, funcgrad.ShapeDtypeStruct((), np.float64), r,
        ...     vmap_method="sequential"))(np.ones((2, 3))).tolist()
        [3.0, 3.0]
    """
    if not callable(callback):
        raise TypeError(f"pure_callback: expected a function, got {type(callback).__name__}")
    del sharding  # one device, no shards
    if vmap_method is not None and vmap_method not in VMAP_METHODS:
        raise ValueError(f"pure_callback: vmap_method must be one of {', '.join(VMAP_METHODS)} "
                         f"or None, got {vmap_method!r}")
    out_leaves, out_tree = tree_util.tree_flatten(result_shape_dtypes)
    out_avals = []
    for r in out_leaves:
        if not hasattr(r, "shape") or not hasattr(r, "dtype"):
            raise TypeError(
                "pure_callback: result_shape_dtypes must be a pytree of ShapeDtypeStruct (or "
                f"of arrays) describing the results, got a {type(r).__name__} leaf"
            )
        out_avals.append(ShapedArray(tuple(r.shape), numpy.dtype(r.dtype), False, None))
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    at = [i for i, v in enumerate(leaves) if _is_operand(v)]
    name = getattr(callback, "__name__", type(callback).__name__)

    def flat(*xs: Any) -> list[Any]:
        filled = list(leaves)
        for i, x in zip(at, xs):
            filled[i] = x
        a, k = tree_util.tree_unflatten(in_tree, filled)
        out = callback(*a, **k)
        got, got_tree = tree_util.tree_flatten(out)
        if got_tree != out_tree:
            raise TypeError(
                f"pure_callback: {name} returned a result structured as {got_tree}, but "
                f"result_shape_dtypes is structured as {out_tree}"
            )
        return got

    cb = _Callback(flat, out_avals, name)
    outs = bind(pure_callback_p, *[leaves[i] for i in at], callback=cb,
                vmap_method=vmap_method)
    return tree_util.tree_unflatten(out_tree, outs)
