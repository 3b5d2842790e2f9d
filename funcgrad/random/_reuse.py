"""Opt-in check that no key is consumed twice (JAX's key-reuse checker, eagerly).

Inside ``with check_key_reuse():`` every key handed to a sampler or to ``split``/``bits`` is
marked consumed; handing the same key object to another (or the same) one raises
:class:`KeyReuseError` naming both lines of user code. ``fold_in`` does not consume its key
(deriving many keys by distinct data is what it is for). Keys are tracked by identity, as
JAX's checker does, so tracers inside ``jit``/``vmap``/``grad`` are tracked too. A sampler
built on another one (``lognormal`` on ``normal``) consumes its key once. The state lives in
context variables; outside the ``with`` block the samplers pay one ``ContextVar.get``.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any, TypeVar

from funcgrad.core import SourceInfo, user_source_info
from funcgrad.errors import KeyReuseError

__all__ = ["KeyReuseError", "check_key_reuse", "consumes"]

F = TypeVar("F", bound=Callable[..., Any])

# id(key) -> (key kept alive so its id is not reused, sampler name, where it was consumed)
_consumed: ContextVar[dict[int, tuple[Any, str, SourceInfo]] | None] = ContextVar(
    "funcgrad_random_consumed", default=None)
_inside_sampler: ContextVar[bool] = ContextVar("funcgrad_random_inside", default=False)


@contextlib.contextmanager
def check_key_reuse() -> Iterator[None]:
    """Raise :class:`KeyReuseError` when a key is consumed twice within the block.

    Example:
        >>> from funcgrad import random
        >>> key = random.PRNGKey(0)
        >>> with random.check_key_reuse():
        ...     x = random.normal(key, (2,))
        ...     y = random.uniform(key, (2,))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        funcgrad.errors.KeyReuseError: random.uniform: this key was already consumed by random.normal at ...
    """
    token = _consumed.set({})
    try:
        yield
    finally:
        _consumed.reset(token)


def consumes(fn: F) -> F:
    """Mark ``fn(key, ...)`` as consuming its key (checked inside :func:`check_key_reuse`)."""
    name = fn.__name__

    @functools.wraps(fn)
    def wrapper(key: Any, *args: Any, **kwargs: Any) -> Any:
        seen = _consumed.get()
        if seen is None or _inside_sampler.get():
            return fn(key, *args, **kwargs)
        here = user_source_info()
        prev = seen.get(id(key))
        if prev is not None and prev[0] is key:
            raise KeyReuseError(
                f"random.{name}: this key was already consumed by random.{prev[1]}"
                f"{prev[2].at()}; consumed again{here.at()}. Each key must be used once: "
                "make new ones with funcgrad.random.split(key) (or fold_in(key, i))."
            )
        seen[id(key)] = (key, name, here)
        token = _inside_sampler.set(True)
        try:
            return fn(key, *args, **kwargs)
        finally:
            _inside_sampler.reset(token)

    return wrapper  # type: ignore[return-value]
