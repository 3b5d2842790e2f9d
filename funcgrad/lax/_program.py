"""``jax.lax``'s program-structure helpers that single-device NumPy/CuPy execution reduces to
plain calls: ``with_sharding_constraint`` (the identity), ``platform_dependent`` (the branch
of the default device's platform), ``composite`` (the decomposition itself) and the ordering
tokens ``create_token``/``after_all`` (funcgrad runs a program's operations in order, so a
token carries nothing)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import funcgrad.ops.elementwise as _ew
from funcgrad import tree_util
from funcgrad.backend import get_default_device, platform_name
from funcgrad.core import Tracer
from funcgrad.lax._common import aval_of

__all__ = ["with_sharding_constraint", "platform_dependent", "composite", "Token",
           "create_token", "after_all", "stage"]


class Token:
    """An ordering token, as ``jax.lax``'s (``create_token``, ``after_all``). A pytree with no
    leaves, so it passes through ``jit``, ``vmap`` and ``scan`` and comes back a token: the
    order it would impose is already the order funcgrad runs operations in.

    Example:
        >>> import funcgrad
        >>> from funcgrad import lax
        >>> isinstance(funcgrad.jit(lambda t: t)(lax.create_token()), lax.Token)
        True
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return "Token()"


tree_util.register_pytree_node(Token, lambda t: ((), None), lambda aux, children: Token())


def create_token(_: Any = None) -> Token:
    """A new ordering token, as ``jax.lax.create_token`` (its argument is ignored, as
    JAX's).

    Example:
        >>> from funcgrad import lax
        >>> lax.create_token()
        Token()
    """
    return Token()


def after_all(*operands: Token) -> Token:
    """A token ordered after all of ``operands`` (tokens), as ``jax.lax.after_all``;
    anything else is a ``TypeError``, as in JAX.

    Example:
        >>> from funcgrad import lax
        >>> t = lax.create_token()
        >>> lax.after_all(t, t)
        Token()
    """
    for x in operands:
        if not isinstance(x, Token):
            raise TypeError(f"Arguments to after_all must be tokens, got {type(x).__name__}")
    return Token()


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


def stage(x: Any, /) -> Any:
    """``x`` lifted into the active trace (``jax.lax.stage``, JAX 0.10): logically the
    identity; a Python scalar or NumPy array becomes a value of the program being traced
    (an array outside any trace). Lists and other non-arrays are a ``TypeError``, as JAX's.

    Example:
        >>> import numpy as np, funcgrad
        >>> from funcgrad import lax
        >>> lax.stage(2.0)
        array(2.)
        >>> funcgrad.make_jaxpr(lambda: lax.stage(np.ones(2)))()
        { lambda a:f64[2]; . let b:f64[2] = copy a in (b,) }
    """
    if isinstance(x, Tracer):
        return x
    aval_of("stage", x, "x")  # names what is not an array
    return _ew.copy(x)
