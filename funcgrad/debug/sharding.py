"""``jax.debug``'s sharding tools on one device: :func:`inspect_array_sharding` hands each
array's sharding to a callback, :func:`visualize_array_sharding` / :func:`visualize_sharding`
draw its layout (one block: the whole array on its device, as JAX draws a single-device or
replicated array).

Example:
    >>> import funcgrad, numpy as np
    >>> funcgrad.debug.inspect_array_sharding(np.ones(3), callback=print)
    SingleDeviceSharding(device='cpu', memory_kind=device)
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

from funcgrad import sharding as _sharding
from funcgrad import tree_util
from funcgrad.avals import get_aval
from funcgrad.backend import get_default_device, platform_name

__all__ = ["inspect_array_sharding", "visualize_array_sharding", "visualize_sharding"]

# JAX's labels of its platforms (a CUDA device is a "GPU")
_LABELS = {"cpu": "CPU", "cuda": "GPU"}


def _sharding_of(x: Any) -> Any:
    own = getattr(x, "sharding", None)
    if isinstance(own, _sharding.Sharding):
        return own
    return _sharding.SingleDeviceSharding(get_aval(x).device or get_default_device())


def inspect_array_sharding(value: Any, *, callback: Callable[[Any], None]) -> None:
    """Call ``callback`` with the sharding of each array in the pytree ``value``
    (``jax.debug.inspect_array_sharding``). On one device that is a
    :class:`funcgrad.sharding.SingleDeviceSharding` of the array's device, eagerly and under
    ``jit`` (where the callback runs while tracing, as JAX's runs at compile time).

    Example:
        >>> import funcgrad, numpy as np
        >>> seen = []
        >>> _ = funcgrad.jit(lambda x: funcgrad.debug.inspect_array_sharding(
        ...     x, callback=seen.append) or x)(np.ones(2))
        >>> seen[0].is_fully_replicated
        True
    """
    if not callable(callback):
        raise TypeError(f"inspect_array_sharding: callback must be callable, got "
                        f"{type(callback).__name__}")
    for leaf in tree_util.tree_leaves(value):
        callback(_sharding_of(leaf))


def visualize_sharding(shape: Sequence[int], sharding: Any, *, use_color: bool = True,
                       scale: float = 1.0, min_width: int = 9, max_width: int = 80,
                       color_map: Any = None) -> None:
    """Print how ``sharding`` lays out an array of ``shape`` (1-d or 2-d) over its devices
    (``jax.debug.visualize_sharding``). One device holds the whole array: one block,
    labelled with the device (``CPU 0``). Drawn in plain text (JAX draws with ``rich``);
    ``use_color`` and ``color_map`` are accepted, ``scale``, ``min_width`` and ``max_width``
    size the block.

    Example:
        >>> from funcgrad import sharding
        >>> visualize_sharding((4,), sharding.SingleDeviceSharding("cpu"), max_width=11)
        ┌─────────┐
        │  CPU 0  │
        └─────────┘
    """
    shape = tuple(shape)
    if len(shape) not in (1, 2):
        raise ValueError(f"visualize_sharding only works for shapes with 1 or 2 dimensions, "
                         f"got shape {shape}")
    if not isinstance(sharding, _sharding.Sharding):
        raise TypeError(f"visualize_sharding: expected a funcgrad.sharding.Sharding, got "
                        f"{type(sharding).__name__}")
    devices = sorted(str(d) for d in sharding.device_set)
    label = ", ".join(f"{_LABELS.get(platform_name(d), platform_name(d).upper())} "
                      f"{d.split(':')[1] if ':' in d else 0}" for d in devices)
    width = builtins.max(min_width, builtins.min(max_width, round(scale * max_width))) - 2
    width = builtins.max(width, len(label) + 2)
    # a 2-d array is drawn as a block of some height, a 1-d one as a single line
    height = builtins.max(1, round(scale * 3)) if len(shape) == 2 else 1
    rows = ["┌" + "─" * width + "┐"]
    middle = height // 2
    for r in range(height):
        text = label if r == middle else ""
        rows.append("│" + text.center(width) + "│")
    rows.append("└" + "─" * width + "┘")
    builtins.print("\n".join(rows))


def visualize_array_sharding(arr: Any, **kwargs: Any) -> None:
    """Print the layout of ``arr`` over its devices
    (``jax.debug.visualize_array_sharding``): :func:`visualize_sharding` of its shape and
    sharding.

    Example:
        >>> import numpy as np
        >>> visualize_array_sharding(np.ones(8), max_width=11)
        ┌─────────┐
        │  CPU 0  │
        └─────────┘
    """
    visualize_sharding(get_aval(arr).shape, _sharding_of(arr), **kwargs)
