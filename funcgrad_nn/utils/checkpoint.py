"""``torch.utils.checkpoint``'s names: :func:`checkpoint`, :func:`checkpoint_sequential` and
selective activation checkpointing (:func:`create_selective_checkpoint_contexts`,
:class:`CheckpointPolicy`).

``from torch.utils.checkpoint import checkpoint, checkpoint_sequential`` becomes
``from funcgrad_nn.utils.checkpoint import checkpoint, checkpoint_sequential``. The
recomputation is :func:`funcgrad.checkpoint`'s; modules pass through it as arguments, so their
buffer updates (BatchNorm's running statistics, Dropout's key) are written back once per
step, as without checkpointing (PyTorch's recomputation updates a BatchNorm a second time).
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from funcgrad.core import Primitive
from funcgrad_nn.containers import Sequential
from funcgrad_nn.transforms import checkpoint, selective_policy

__all__ = ["CheckpointPolicy", "SelectiveCheckpointContext", "checkpoint",
           "checkpoint_sequential", "create_selective_checkpoint_contexts", "noop_context_fn"]


class CheckpointPolicy(enum.Enum):
    """What selective checkpointing does with one operation's output (PyTorch's enum, same
    values): ``MUST_SAVE``/``PREFER_SAVE`` keep it for the backward pass,
    ``MUST_RECOMPUTE``/``PREFER_RECOMPUTE`` recompute it there; the ``CPU_OFFLOAD`` pair keep
    it too (host memory is where arrays live already on the NumPy backend).

    >>> CheckpointPolicy.MUST_SAVE.value, CheckpointPolicy.PREFER_RECOMPUTE.value
    (0, 3)
    """

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


_SAVED = frozenset({CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE,
                    CheckpointPolicy.MUST_CPU_OFFLOAD, CheckpointPolicy.PREFER_CPU_OFFLOAD})


class SelectiveCheckpointContext:
    """The ``ctx`` a selective-checkpointing policy function receives (PyTorch's): the policy
    is asked once, when the block is traced, so ``is_recompute`` is always ``False``.

    >>> SelectiveCheckpointContext(is_recompute=False).is_recompute
    False
    """

    def __init__(self, *, is_recompute: bool) -> None:
        self.is_recompute = is_recompute


def noop_context_fn() -> tuple[contextlib.AbstractContextManager[None],
                               contextlib.AbstractContextManager[None]]:
    """``checkpoint``'s default ``context_fn``: two contexts that do nothing.

    >>> fwd, recompute = noop_context_fn()
    >>> with fwd, recompute:
    ...     pass
    """
    return contextlib.nullcontext(), contextlib.nullcontext()


class _SelectivePolicy:
    """A PyTorch policy function (or op list) as a funcgrad remat policy ``(prim, *avals,
    **params) -> bool``; equal for the same function/ops, so compiled checkpoints are reused."""

    __slots__ = ("_key", "_policy_fn")

    def __init__(self, policy_fn: Callable[..., Any], key: Any) -> None:
        self._policy_fn, self._key = policy_fn, key

    def __call__(self, prim: Primitive, *avals: Any, **params: Any) -> bool:
        decision = self._policy_fn(SelectiveCheckpointContext(is_recompute=False), prim,
                                   *avals, **params)
        if isinstance(decision, bool):  # PyTorch's older boolean policies
            return decision
        if not isinstance(decision, CheckpointPolicy):
            raise TypeError("create_selective_checkpoint_contexts: the policy function must "
                            f"return a CheckpointPolicy (or a bool), got {decision!r} for "
                            f"{prim.name}")
        return decision in _SAVED

    def __eq__(self, other: object) -> bool:
        return type(other) is _SelectivePolicy and other._key == self._key

    def __hash__(self) -> int:
        return hash((_SelectivePolicy, self._key))


@contextlib.contextmanager
def _selective_forward(policy: _SelectivePolicy) -> Iterator[None]:
    token = selective_policy.set(policy)
    try:
        yield
    finally:
        selective_policy.reset(token)


def create_selective_checkpoint_contexts(
        policy_fn_or_list: Callable[..., Any] | Sequence[Primitive | str],
        allow_cache_entry_mutation: bool = False) -> tuple[Any, Any]:
    """PyTorch's selective activation checkpointing: pass
    ``context_fn=functools.partial(create_selective_checkpoint_contexts, policy)`` to
    :func:`checkpoint` and the operations ``policy`` marks saved are kept for the backward
    pass, the rest recomputed.

    ``policy`` is a function ``policy_fn(ctx, op, *args, **kwargs) -> CheckpointPolicy`` or a
    list of operations to save (everything else ``PREFER_RECOMPUTE``), as PyTorch's. The
    operations are funcgrad primitives instead of ``torch.ops.aten`` overloads:
    ``funcgrad.lax.dot_general_p`` for ``aten.mm``/``aten.bmm``/``aten.addmm`` (every matrix
    product and ``Linear``), or their names (``"dot_general"``, ``"conv_general_dilated"``,
    ``"exp"``, ...); ``args`` are the operands' shapes and dtypes (``ShapedArray``) and
    ``kwargs`` the primitive's parameters, since the policy is asked once, when the block is
    traced. ``allow_cache_entry_mutation`` is accepted (arrays are never mutated).

    >>> import functools, numpy as np, funcgrad_nn as nn, funcgrad.lax as lax
    >>> block = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
    >>> ctx = functools.partial(create_selective_checkpoint_contexts, [lax.dot_general_p])
    >>> loss = lambda m, x: checkpoint(m, x, use_reentrant=False, context_fn=ctx).sum()
    >>> nn.grad(loss)(block, np.ones((2, 4), np.float32))[0].weight.shape
    (8, 4)
    """
    del allow_cache_entry_mutation
    if isinstance(policy_fn_or_list, (list, tuple)):
        ops = []
        for op in policy_fn_or_list:
            if not isinstance(op, (Primitive, str)):
                raise ValueError("create_selective_checkpoint_contexts: expected the operations "
                                 "to save as funcgrad primitives (funcgrad.lax.dot_general_p) "
                                 f"or their names ('dot_general'), got {op!r} of type "
                                 f"{type(op).__name__}")
            ops.append(op.name if isinstance(op, Primitive) else op)
        names = frozenset(ops)

        def policy_fn(ctx: SelectiveCheckpointContext, op: Primitive, *args: Any,
                      **kwargs: Any) -> CheckpointPolicy:
            return (CheckpointPolicy.MUST_SAVE if op.name in names
                    else CheckpointPolicy.PREFER_RECOMPUTE)

        policy = _SelectivePolicy(policy_fn, names)
    elif callable(policy_fn_or_list):
        policy = _SelectivePolicy(policy_fn_or_list, policy_fn_or_list)
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    return _selective_forward(policy), contextlib.nullcontext()


def _run_segment(*fns_and_input: Any) -> Any:
    """The functions (modules) in order on the input: one segment of the sequence."""
    *fns, x = fns_and_input
    for f in fns:
        x = f(x)
    return x


def checkpoint_sequential(functions: Sequential | Sequence[Callable[..., Any]], segments: int,
                          input: Any, use_reentrant: bool | None = None,  # noqa: A002
                          **kwargs: Any) -> Any:
    """PyTorch's ``checkpoint_sequential``: run ``functions`` (a ``Sequential`` or a list of
    modules/functions, each taking the previous one's output) on ``input`` in ``segments``
    chunks of ``len(functions) // segments``; every chunk but the last is checkpointed (its
    activations recomputed in the backward pass), the last runs normally, as PyTorch's.

    ``preserve_rng_state`` is accepted (Dropout keys are inputs, so the recomputation draws
    the same masks); ``use_reentrant`` has no effect; another keyword raises ``ValueError``
    as PyTorch's.

    >>> import numpy as np, funcgrad_nn as nn
    >>> model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(),
    ...                       nn.Linear(8, 1))
    >>> x = np.ones((2, 4), np.float32)
    >>> loss = lambda m, x: checkpoint_sequential(m, 2, x, use_reentrant=False).sum()
    >>> bool(np.allclose(loss(model, x), model(x).sum()))
    True
    >>> nn.grad(loss)(model, x)[0].weight.shape
    (8, 4)
    """
    del use_reentrant
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    else:
        functions = list(functions)
    if not isinstance(segments, int) or isinstance(segments, bool) or segments < 1:
        raise ValueError(f"checkpoint_sequential: segments must be a positive int, got "
                         f"{segments!r}")
    size = len(functions) // segments
    if size == 0:
        raise ValueError(f"checkpoint_sequential: {segments} segments for {len(functions)} "
                         "functions; segments can be at most the number of functions")
    end = 0
    for start in range(0, size * (segments - 1), size):
        end = start + size
        input = checkpoint(_run_segment, *functions[start:end], input,
                           preserve_rng_state=preserve)
    return _run_segment(*functions[end:], input)
