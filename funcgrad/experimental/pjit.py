"""``jax.experimental.pjit``: ``pjit`` is ``jit`` with shardings (as in JAX, which
deprecated it in favour of ``jax.jit``).

Example:
    >>> import numpy as np
    >>> pjit(lambda x: x * 2)(np.ones(2)).tolist()
    [2.0, 2.0]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from funcgrad.api_jit import jit

__all__ = ["pjit"]


def pjit(fun: Callable[..., Any], in_shardings: Any = None, out_shardings: Any = None,
         static_argnums: Any = (), static_argnames: Any = (), donate_argnums: Any = (),
         donate_argnames: Any = (), keep_unused: bool = False, device: Any = None,
         backend: str | None = None, inline: bool = False,
         compiler_options: dict | None = None) -> Any:
    """``jit(fun, ...)`` (``jax.experimental.pjit.pjit``), every argument passed on: the
    shardings are accepted (funcgrad computes on one device); ``device``/``backend`` and
    ``compiler_options`` are :func:`~funcgrad.jit`'s.

    Example:
        >>> import numpy as np
        >>> pjit(lambda x: x + 1, in_shardings=None)(np.zeros(1)).tolist()
        [1.0]
    """
    return jit(fun, static_argnums=static_argnums or (), static_argnames=static_argnames or (),
               donate_argnums=donate_argnums or (), donate_argnames=donate_argnames or (),
               keep_unused=keep_unused, inline=inline, in_shardings=in_shardings,
               out_shardings=out_shardings, device=device, backend=backend,
               compiler_options=compiler_options)
