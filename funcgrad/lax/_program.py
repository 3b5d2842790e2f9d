"""``jax.lax``'s program-structure helpers that single-device NumPy/CuPy execution reduces to
plain calls: ``with_sharding_constraint`` (the identity), ``platform_dependent`` (the branch
of the default device's platform) and ``composite`` (the decomposition itself)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from funcgrad.backend import get_default_device, platform_name

__all__ = ["with_sharding_constraint", "platform_dependent", "composite"]


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """``x`` unchanged (a pytree): on one device every array is already laid out whole, so
    ``jax.lax.with_sharding_constraint``'s layout hint has nothing to constrain.

    Example:
        >>> import numpy as np
        >>> from funcgrad import lax
        >>> lax.with_sharding_constraint(np.ones(2), None).tolist()
        [1.0, 1.0]
    """
    return x


def _platform() -> str:
    return platform_name(get_default_device())


def platform_dependent(*args: Any, default: Callable[..., Any] | None = None,
                       **per_platform: Callable[..., Any]) -> Any:
    """``per_platform[p](*args)`` for the platform ``p`` of the default device (``"cpu"``,
    or ``"cuda"`` under CuPy), else ``default(*args)``, as ``jax.lax.platform_dependent``.
    No branch for the platform and no ``default`` is a ``ValueError``.

    Example:
        >>> from funcgrad import lax
        >>> lax.platform_dependent(2.0, cpu=lambda x: x + 1, default=lambda x: x * 10)
        3.0
    """
    fn = per_platform.get(_platform(), default)
    if fn is None:
        raise ValueError(f"lax.platform_dependent: no branch for platform {_platform()!r} "
                         f"(given: {sorted(per_platform)}) and no default")
    return fn(*args)


def composite(decomposition: Callable[..., Any], name: str, version: int = 0
              ) -> Callable[..., Any]:
    """``decomposition`` as a named composite operation (``jax.lax.composite``): XLA may
    swap in a fused kernel for ``name``; here the decomposition is what runs, so the result
    also differentiates (JAX has no derivative rule for composites).

    Example:
        >>> from funcgrad import lax
        >>> scale = lax.composite(lambda x, *, k: x * k, name="my.scale")
        >>> scale(2.0, k=3.0)
        6.0
    """
    if not callable(decomposition):
        raise TypeError(f"lax.composite: decomposition must be callable, got "
                        f"{type(decomposition).__name__}")
    if not isinstance(name, str):
        raise TypeError(f"lax.composite: name must be a string, got {type(name).__name__}")

    @functools.wraps(decomposition)
    def call(*args: Any, **kwargs: Any) -> Any:
        return decomposition(*args, **kwargs)

    return call
