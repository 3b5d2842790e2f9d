"""``torch.utils.checkpoint``'s names: :func:`checkpoint` and :func:`checkpoint_sequential`.

``from torch.utils.checkpoint import checkpoint, checkpoint_sequential`` becomes
``from funcgrad_nn.utils.checkpoint import checkpoint, checkpoint_sequential``. The
recomputation is :func:`funcgrad.checkpoint`'s; modules pass through it as arguments, so their
buffer updates (BatchNorm's running statistics, Dropout's key) are written back once per
step, as without checkpointing (PyTorch's recomputation updates a BatchNorm a second time).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from funcgrad_nn.containers import Sequential
from funcgrad_nn.transforms import checkpoint

__all__ = ["checkpoint", "checkpoint_sequential"]


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
