"""optax.microbatching (optax 0.2.8): evaluate a function of a large batch as a sequential
loop over microbatches (``lax.fori_loop``), combining the results with an accumulator
(SUM, MEAN, RUNNING_MEAN, CONCAT, or a custom :class:`Accumulator`), to bound peak memory.
``optim.microbatch`` is the same function. (optax's sharding-aware reshapes have no
counterpart here: funcgrad arrays carry no named sharding.)

>>> import numpy as np
>>> from funcgrad_nn import optim
>>> fun = lambda x: (x + 1, (3 * x).sum())
>>> mb = optim.microbatch(fun, argnums=0, microbatch_size=2,
...                       accumulator=(optim.microbatching.AccumulationType.CONCAT,
...                                    optim.microbatching.AccumulationType.SUM))
>>> mb(np.array([1, 2, 3, 4]))
(array([2, 3, 4, 5]), array(30))
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import lax, tree_util

__all__ = ["Accumulator", "AccumulationType", "microbatch", "micro_grad", "micro_vmap",
           "reshape_batch_axis", "IndividualOutputs"]

#: micro_grad's auxiliary output, per example (optax's namedtuple, named ``Aux``).
IndividualOutputs = collections.namedtuple("Aux", ["values", "metrics", "aux"])


@dataclasses.dataclass(frozen=True)
class Accumulator:
    """How microbatch results combine (optax's): ``carry = init(shape_dtype)``, then
    ``carry = update(carry, value, index)`` for each microbatch, ``finalize(carry)``;
    ``aggregate(per_microbatch_values)`` combines values stacked on axis 0."""

    init: Callable[[Any], Any]
    update: Callable[[Any, Any, Any], Any]
    finalize: Callable[[Any], Any]
    aggregate: Callable[[Any], Any]


class AccumulationType(enum.Enum):
    """The built-in accumulations: ``MEAN`` and ``SUM`` of the microbatch outputs,
    ``RUNNING_MEAN`` (the mean over the microbatches actually run) and ``CONCAT`` (along
    axis 0, in the original batch order)."""

    MEAN = enum.auto()
    SUM = enum.auto()
    RUNNING_MEAN = enum.auto()
    CONCAT = enum.auto()


def _zeros_like_struct(s: Any) -> Any:
    return fnp.zeros(s.shape, s.dtype)


def _floating_only(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def wrapper(s: Any) -> Any:
        if not np.issubdtype(np.dtype(s.dtype), np.floating):
            raise ValueError("MEAN and RUNNING_MEAN Accumulators require floating-point values.")
        return fn(s)

    return wrapper


def _lift(acc: Accumulator) -> Accumulator:
    """An array accumulator applied leaf by leaf."""
    return Accumulator(
        lambda value: tree_util.tree_map(acc.init, value),
        lambda carry, value, i: tree_util.tree_map(lambda c, v: acc.update(c, v, i), carry,
                                                   value),
        lambda carry: tree_util.tree_map(acc.finalize, carry),
        lambda values: tree_util.tree_map(acc.aggregate, values))


def _sum() -> Accumulator:
    return _lift(Accumulator(_zeros_like_struct, lambda c, v, _: c + v, lambda x: x,
                             functools.partial(fnp.sum, axis=0)))


def _mean(n: int) -> Accumulator:
    if n <= 0:
        raise ValueError(f"num_microbatches={n} must be positive.")
    return _lift(Accumulator(_floating_only(_zeros_like_struct), lambda c, v, _: c + v,
                             lambda c: c / n, functools.partial(fnp.mean, axis=0)))


def _running_mean() -> Accumulator:
    def update(carry: Any, value: Any, index: Any) -> Any:
        p = index / (index + 1)
        return carry * p + value * (1 - p)

    return _lift(Accumulator(_floating_only(_zeros_like_struct), update, lambda x: x,
                             functools.partial(fnp.mean, axis=0)))


def _concat(n: int) -> Accumulator:
    if n <= 0:
        raise ValueError(f"num_microbatches={n} must be positive.")

    def init(s: Any) -> Any:
        return fnp.zeros((n, *s.shape), s.dtype)

    def finalize(carry: Any) -> Any:
        # microbatch i holds rows i, i + n, ... (the column-major split): undo it
        return fnp.reshape(carry, (-1, *carry.shape[2:]), order="F")

    return _lift(Accumulator(init, lambda c, v, i: lax.dynamic_update_index_in_dim(c, v, i, 0),
                             finalize, lambda x: x))


def _compose(accs: Any) -> Accumulator:
    is_acc = lambda x: isinstance(x, Accumulator)  # noqa: E731
    return Accumulator(
        lambda values: tree_util.tree_map(lambda a, v: a.init(v), accs, values, is_leaf=is_acc),
        lambda carry, value, i: tree_util.tree_map(lambda a, c, v: a.update(c, v, i), accs,
                                                   carry, value, is_leaf=is_acc),
        lambda carry: tree_util.tree_map(lambda a, c: a.finalize(c), accs, carry, is_leaf=is_acc),
        lambda values: tree_util.tree_map(lambda a, v: a.aggregate(v), accs, values,
                                          is_leaf=is_acc))


def _canonicalize(tree: Any, n: int) -> Accumulator:
    def one(acc: Any) -> Accumulator:
        if isinstance(acc, Accumulator):
            return acc
        if acc is AccumulationType.MEAN:
            return _mean(n)
        if acc is AccumulationType.SUM:
            return _sum()
        if acc is AccumulationType.RUNNING_MEAN:
            return _running_mean()
        if acc is AccumulationType.CONCAT:
            return _concat(n)
        raise ValueError(f"Unknown accumulator: {acc}")

    return _compose(tree_util.tree_map(
        one, tree, is_leaf=lambda x: isinstance(x, Accumulator | AccumulationType)))


def reshape_batch_axis(tree: Any, microbatch_size: int, axis: int = 0) -> Any:
    """Each leaf's batch ``axis`` split into ``(num_microbatches, microbatch_size)``
    column-major (optax's): microbatch ``i`` holds rows ``i, i + n, i + 2n, ...``.

    >>> import numpy as np
    >>> reshape_batch_axis(np.arange(6), 2)
    array([[0, 3],
           [1, 4],
           [2, 5]])
    """
    def leaf(x: Any) -> Any:
        return fnp.reshape(x, x.shape[:axis] + (-1, microbatch_size) + x.shape[axis + 1:],
                           order="F")

    return tree_util.tree_map(leaf, tree)


def microbatch(fun: Callable[..., Any], argnums: int | Sequence[int], microbatch_size: int | None,
               accumulator: Any = AccumulationType.SUM, *, argnames: str | Sequence[str] = (),
               in_axes: int | Sequence[int] = 0,
               num_real_microbatches: Any = None) -> Callable[..., Any]:
    """``fun`` evaluated one microbatch at a time (optax's ``microbatch``): the arguments
    ``argnums`` / ``argnames`` have a batch axis (``in_axes``) split into microbatches of
    ``microbatch_size`` rows, and the outputs are combined by ``accumulator`` (one, or a
    pytree prefix of the outputs of them). ``num_real_microbatches`` stops the loop early.
    ``microbatch_size=None`` returns ``fun`` itself.

    >>> import numpy as np
    >>> import funcgrad, funcgrad.numpy as fnp
    >>> loss = lambda w, x: fnp.mean((x @ w) ** 2)
    >>> g = microbatch(funcgrad.grad(loss), argnums=1, microbatch_size=2,
    ...                accumulator=AccumulationType.MEAN)
    >>> x = np.arange(8.0).reshape(4, 2)
    >>> np.allclose(g(np.ones(2), x), funcgrad.grad(loss)(np.ones(2), x))
    True
    """
    if microbatch_size is None:
        return fun
    argnums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    argnames = (argnames,) if isinstance(argnames, str) else tuple(argnames)
    axes = ((in_axes,) * (len(argnums) + len(argnames)) if isinstance(in_axes, int)
            else tuple(in_axes))
    if len(axes) != len(argnums) + len(argnames):
        raise ValueError(f"in_axes has {len(axes)} entries for {len(argnums)} argnums and "
                         f"{len(argnames)} argnames")

    def microbatched(*args: Any, **kwargs: Any) -> Any:
        batch_args = [args[i] for i in argnums] + [kwargs[n] for n in argnames]
        sizes = [x.shape[ax] for ax, sub in zip(axes, batch_args)
                 for x in tree_util.tree_leaves(sub)]
        if len(set(sizes)) > 1:
            raise ValueError(f"Batch Arguments must have equal-size batch axes, found {sizes}.")
        if not sizes:
            raise ValueError("microbatch: the batch arguments hold no arrays")
        batch_size = sizes[0]
        if batch_size % microbatch_size != 0:
            raise ValueError(f"batch_size={batch_size} must be divisible by "
                             f"microbatch_size={microbatch_size}.")
        new_args, new_kwargs = list(args), dict(kwargs)
        for i, ax in zip(argnums, axes):
            new_args[i] = reshape_batch_axis(args[i], microbatch_size, ax)
        for n, ax in zip(argnames, axes[len(argnums):]):
            new_kwargs[n] = reshape_batch_axis(kwargs[n], microbatch_size, ax)
        num = batch_size // microbatch_size
        acc = _canonicalize(accumulator, num)

        def f(index: Any) -> Any:
            a, k = list(new_args), dict(new_kwargs)
            for i, ax in zip(argnums, axes):
                a[i] = tree_util.tree_map(lambda x, ax=ax: fnp.take(x, index, axis=ax), a[i])
            for n, ax in zip(argnames, axes[len(argnums):]):
                k[n] = tree_util.tree_map(lambda x, ax=ax: fnp.take(x, index, axis=ax), k[n])
            return fun(*a, **k)

        bound = num if num_real_microbatches is None else num_real_microbatches
        init = acc.init(funcgrad.eval_shape(f, 0))
        out = lax.fori_loop(0, bound, lambda i, c: acc.update(c, f(i), i), init)
        return acc.finalize(out)

    return microbatched


def micro_vmap(fun: Callable[..., Any], in_axes: int | Sequence[int | None] = 0, out_axes: Any = 0,
               *, microbatch_size: int | None = None, vmap_fn: Callable[..., Any] | None = None,
               accumulator: Any = AccumulationType.CONCAT,
               num_real_microbatches: Any = None) -> Callable[..., Any]:
    """``vmap`` of ``fun`` evaluated a microbatch at a time (optax's ``micro_vmap``): with
    the default CONCAT accumulator the result is ``vmap(fun)``'s; MEAN or SUM reduce over
    the batch axis without materializing it (per microbatch, then across). Keyword
    arguments are batched along axis 0 too; ``out_axes`` must be 0.

    >>> import numpy as np
    >>> micro_vmap(lambda x: x ** 2, microbatch_size=2)(np.arange(6))
    array([ 0,  1,  4,  9, 16, 25])
    """
    if out_axes != 0:
        raise ValueError(f"micro_vmap: out_axes must be 0 (as optax's), got {out_axes!r}")
    vmap_fn = funcgrad.vmap if vmap_fn is None else vmap_fn
    axes = (in_axes,) if isinstance(in_axes, int) else tuple(in_axes)

    def vmap_reduce(*args: Any, kwargs: Any) -> Any:
        out = vmap_fn(fun, axes if len(axes) > 1 else axes[0], out_axes)(*args, **kwargs)
        n = tree_util.tree_leaves(out)[0].shape[0]
        return _canonicalize(accumulator, n).aggregate(out)

    inner = microbatch(vmap_reduce, argnums=tuple(i for i, a in enumerate(axes) if a is not None),
                       argnames="kwargs", microbatch_size=microbatch_size,
                       accumulator=accumulator,
                       in_axes=tuple(a for a in axes if a is not None) + (0,),
                       num_real_microbatches=num_real_microbatches)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return inner(*args, kwargs=kwargs)

    return wrapped


def micro_grad(fun: Callable[..., Any], has_aux: bool = False, argnums: int | Sequence[int] = 0,
               *, batch_argnums: int | Sequence[int] = 1, keep_batch_dim: bool = True,
               microbatch_size: int | None = None, accumulator: Any = AccumulationType.SUM,
               transform_fn: Callable[[Any], Any] = lambda x: x,
               metrics_fn: Callable[[Any], Any] = lambda x: None,
               num_real_microbatches: Any = None) -> Callable[..., Any]:
    """Per-example gradients, transformed and combined (optax's ``micro_grad``, e.g. for
    clipping each example's gradient): returns ``(accumulate(transform_fn(g_i)),
    Aux(values, metrics, aux))`` with the per-example losses, ``metrics_fn(g_i)`` and
    ``fun``'s aux. ``batch_argnums`` have the batch axis 0; with ``keep_batch_dim`` each
    example is passed with a batch axis of 1.

    >>> import numpy as np
    >>> import funcgrad.numpy as fnp
    >>> def mse(params, features, targets):
    ...     return 0.5 * fnp.mean((features @ params - targets) ** 2)
    >>> (g, g2), aux = micro_grad(mse, argnums=0, batch_argnums=(1, 2),
    ...                           accumulator=AccumulationType.MEAN,
    ...                           transform_fn=lambda x: (x, x ** 2),
    ...                           metrics_fn=fnp.linalg.norm)(
    ...     np.zeros(1), np.ones((4, 1)), np.array([0.0, 2.0, 4.0, 6.0]))
    >>> g, g2, aux.values, aux.metrics
    (array([-3.]), array([14.]), array([ 0.,  2.,  8., 18.]), array([0., 2., 4., 6.]))
    """
    batch_argnums = (batch_argnums,) if isinstance(batch_argnums, int) else tuple(batch_argnums)
    f = fun if has_aux else (lambda *a, **k: (fun(*a, **k), None))
    value_and_grad = funcgrad.value_and_grad(f, argnums, has_aux=True)

    def grad_fn(*args: Any, **kwargs: Any) -> Any:
        (value, aux), grad = value_and_grad(*args, **kwargs)
        return transform_fn(grad), IndividualOutputs(value, metrics_fn(grad), aux)

    in_axes: list[int | None] = [None] * (max(batch_argnums) + 1)
    for i in batch_argnums:
        in_axes[i] = 0
    micro = micro_vmap(grad_fn, in_axes=tuple(in_axes),
                       accumulator=(accumulator, AccumulationType.CONCAT),
                       microbatch_size=microbatch_size,
                       num_real_microbatches=num_real_microbatches)
    if not keep_batch_dim:
        return micro

    def with_batch_axis(*args: Any, **kwargs: Any) -> Any:
        args = list(args)
        for i in batch_argnums:
            args[i] = tree_util.tree_map(lambda x: fnp.expand_dims(x, axis=1), args[i])
        return micro(*args, **kwargs)

    return with_batch_axis
