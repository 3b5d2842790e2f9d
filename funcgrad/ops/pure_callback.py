"""``pure_callback``: a Python function of host arrays, called as one operation of a program.

JAX's ``jax.pure_callback(callback, result_shape_dtypes, *args, vmap_method=..., **kwargs)``.
The callback is *pure* (its result depends on its arguments only), so a compiled program may
drop it when its result is unused, or call it once for equal arguments; use
``funcgrad.debug.callback`` for side effects. It gets NumPy arrays (copied from the device
when the arguments live on one) and returns arrays of the declared shapes and dtypes
exactly (a result of another dtype is an error, as JAX's "Incorrect output dtype": a Python
float is float64, so a float32 declaration wants ``numpy.float32(...)``); the results are put
on the arguments' device.

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

``io_callback`` (``jax.experimental.io_callback``) is its impure sibling, one more block here:
the callback may have side effects, so it is never dropped (an effectful primitive), runs in
program order, and under ``vmap`` is called once per example (``ordered=True`` cannot be
batched, as in JAX). No derivative either.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy

from funcgrad import backend
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.core import Primitive, bind
from funcgrad.errors import JaxRuntimeError, MissingRuleError
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import Zero, jvp_rules, tangent_aval
from funcgrad.ir import Effect, effect_rules, effectful_primitives
from funcgrad.ops import shape as _shape
from funcgrad.ops._batching_util import bdim_at_front, moveaxis_to_front
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = ["pure_callback", "pure_callback_p", "io_callback", "io_callback_p", "VMAP_METHODS"]

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


class _ResultTypeError(JaxRuntimeError, TypeError):
    """A callback's result of another dtype than declared: JAX's ``JaxRuntimeError``, and a
    ``TypeError`` (what it is, and what funcgrad raised before for a change of kind)."""


def _host_results(cb: _Callback, args: Sequence[Any], api: str = "pure_callback"
                  ) -> list[numpy.ndarray]:
    """Call ``cb`` on host copies of ``args``; its results checked against the declared
    shapes and dtypes (errors name ``api``)."""
    outs = cb.flat(*[numpy.asarray(backend.to_numpy(a)) for a in args])
    res = []
    for i, (o, a) in enumerate(zip(outs, cb.out_avals)):
        o = numpy.asarray(backend.to_numpy(o))
        if o.shape != a.shape:
            raise ValueError(
                f"{api}: {cb.name} returned a result of shape {o.shape} for result "
                f"{i}, declared {a.str_short()} in result_shape_dtypes"
            )
        if o.dtype != a.dtype:
            # As JAX: no cast, even within a kind (a Python float is float64, which a float32
            # declaration does not take); the declaration is the program's type.
            raise _ResultTypeError(
                f"{api}: incorrect output dtype for return value #{i} of {cb.name}: expected "
                f"{a.dtype} (declared in result_shape_dtypes), actual {o.dtype}; return "
                f"numpy.asarray(result, dtype={a.dtype.name}) from the callback"
            )
        res.append(o)
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


def _sequential(callback: _Callback, vals: Sequence[Any], dims: Sequence[int | None],
                axis_size: int, api: str) -> tuple[list[Any], Callable[..., list[Any]]]:
    """A batch as operands (batch axes first) and a host function calling ``callback`` once
    per example, in order, and stacking the results."""
    mapped = [d is not None for d in dims]
    ops = [moveaxis_to_front(v, d) if d is not None else v for v, d in zip(vals, dims)]

    def flat(*xs: Any) -> list[Any]:
        per = [_host_results(callback, [x[i] if m else x for x, m in zip(xs, mapped)], api)
               for i in range(axis_size)]
        return [numpy.stack(col) if per else numpy.zeros((0, *a.shape), a.dtype)
                for col, a in zip(zip(*per) if per else [()] * len(callback.out_avals),
                                  callback.out_avals)]

    return ops, flat


def _batched_avals(callback: _Callback, axis_size: int) -> list[ShapedArray]:
    return [ShapedArray((axis_size, *a.shape), a.dtype, False, a.device)
            for a in callback.out_avals]


def _batch(axis_size: int, vals: Sequence[Any], dims: Sequence[int | None], *,
           callback: _Callback, vmap_method: str | None):
    if vmap_method not in VMAP_METHODS:
        raise MissingRuleError(
            f"pure_callback: {callback.name} is called under vmap, which needs to know how "
            f"the callback takes a batch: pass vmap_method= one of {', '.join(VMAP_METHODS)} "
            f"(got {vmap_method!r})"
        )
    if vmap_method in ("sequential", "sequential_unrolled"):
        ops, flat = _sequential(callback, vals, dims, axis_size, "pure_callback")
    else:
        if vmap_method == "broadcast_all":
            ops = [bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims)]
        elif vmap_method == "expand_dims":
            ops = [moveaxis_to_front(v, d) if d is not None else _shape.expand_dims(v, (0,))
                   for v, d in zip(vals, dims)]
        else:  # legacy_vectorized
            ops = [moveaxis_to_front(v, d) if d is not None else v for v, d in zip(vals, dims)]
        flat = callback.flat
    batched = _Callback(flat, _batched_avals(callback, axis_size), f"vmap({callback.name})")
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
    declaring what ``callback`` returns, shapes and dtypes exactly (no cast, as JAX). Array
    and number arguments are operands; other values (strings, objects) reach ``callback`` as they are.
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
    cb, operands, out_tree = _flat_callback(callback, result_shape_dtypes, args, kwargs,
                                            "pure_callback")
    outs = bind(pure_callback_p, *operands, callback=cb, vmap_method=vmap_method)
    return tree_util.tree_unflatten(out_tree, outs)


def _flat_callback(callback: Callable[..., Any], result_shape_dtypes: Any, args: tuple,
                   kwargs: dict, api: str) -> tuple[_Callback, list[Any], Any]:
    """``callback(*args, **kwargs)`` as a :class:`_Callback` of its array and number
    arguments (the operands; other values are passed as they are), with the declared
    results' structure."""
    out_leaves, out_tree = tree_util.tree_flatten(result_shape_dtypes)
    out_avals = []
    for r in out_leaves:
        if not hasattr(r, "shape") or not hasattr(r, "dtype"):
            raise TypeError(
                f"{api}: result_shape_dtypes must be a pytree of ShapeDtypeStruct (or "
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
        # As JAX, the results are matched leaf by leaf: a list for a declared tuple is fine
        # (NumPy code returns either); a different number of leaves is not.
        if got_tree != out_tree and len(got) != len(out_avals):
            raise TypeError(
                f"{api}: {name} returned a result structured as {got_tree}, but "
                f"result_shape_dtypes is structured as {out_tree}"
            )
        return got

    return _Callback(flat, out_avals, name), [leaves[i] for i in at], out_tree


# =============================================================================================
# io_callback: an impure callback (side effects), never dropped, in program order

io_callback_p = Primitive("io_callback", multiple_results=True)
effectful_primitives.add(io_callback_p)
#: JAX's effects of an io_callback equation: ordered=True calls keep their order
IOEffect, OrderedIOEffect = Effect("IOEffect"), Effect("OrderedIOEffect")
effect_rules[io_callback_p] = lambda params: frozenset(
    (OrderedIOEffect if params["ordered"] else IOEffect,))


def _io_impl(*args: Any, callback: _Callback, ordered: bool) -> list[Any]:
    del ordered  # programs run their operations in order: ordered always holds
    xp = backend.xp_for(*args, what="io_callback")
    return [xp.asarray(r) for r in _host_results(callback, args, "io_callback")]


io_callback_p.def_impl(_io_impl)
io_callback_p.def_abstract_eval(lambda *avals, callback, ordered: list(callback.out_avals))


def _io_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, callback: _Callback,
            ordered: bool):
    if any(type(t) is not Zero for t in tangents):
        raise ValueError(
            f"IO callbacks do not support JVP: io_callback {callback.name} has no derivative "
            "(a Python function of host arrays); to differentiate through it, wrap the call "
            "in a funcgrad.custom_jvp or custom_vjp function that gives the derivative"
        )
    outs = bind(io_callback_p, *primals, callback=callback, ordered=ordered)
    return outs, [Zero(tangent_aval(get_aval(o))) for o in outs]


jvp_rules[io_callback_p] = _io_jvp


def _io_batch(axis_size: int, vals: Sequence[Any], dims: Sequence[int | None], *,
              callback: _Callback, ordered: bool):
    if ordered:
        raise ValueError(
            f"Cannot `vmap` ordered IO callback ({callback.name}): the order of the calls "
            "of a batch is not defined; pass ordered=False to call it once per example")
    ops, flat = _sequential(callback, vals, dims, axis_size, "io_callback")
    batched = _Callback(flat, _batched_avals(callback, axis_size), f"vmap({callback.name})")
    outs = bind(io_callback_p, *ops, callback=batched, ordered=False)
    return outs, [0] * len(outs)


batching.batch_rules[io_callback_p] = _io_batch


def io_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                sharding: Any = None, ordered: bool = False, **kwargs: Any) -> Any:
    """Call the impure Python function ``callback(*args, **kwargs)`` on host arrays as one
    operation of the computation (``jax.experimental.io_callback``): for side effects (I/O,
    logging, host state) that also return values. Unlike :func:`pure_callback` it is never
    dropped or merged, even when its results are unused, and calls run in program order
    (``ordered=True`` holds always; it only forbids ``vmap``, as in JAX). Under ``vmap``
    (unordered) it is called once per example. Not differentiable (a ``ValueError`` under
    ``grad``/``jvp``, as JAX). ``result_shape_dtypes`` declares the results as for
    :func:`pure_callback` (``None`` for none); ``sharding`` is accepted (one device).

    Example:
        >>> import numpy as np, funcgrad
        >>> log = []
        >>> def record(x):
        ...     log.append(float(x))
        ...     return np.float64(len(log))
        >>> f = funcgrad.jit(lambda x: io_callback(
        ...     record, funcgrad.ShapeDtypeStruct((), np.float64), x * 2.0))
        >>> float(f(1.5)), float(f(2.0)), log
        (1.0, 2.0, [3.0, 4.0])
    """
    if not callable(callback):
        raise TypeError(f"io_callback: expected a function, got {type(callback).__name__}")
    del sharding  # one device, no shards
    cb, operands, out_tree = _flat_callback(callback, result_shape_dtypes, args, kwargs,
                                            "io_callback")
    outs = bind(io_callback_p, *operands, callback=cb, ordered=bool(ordered))
    return tree_util.tree_unflatten(out_tree, outs)
