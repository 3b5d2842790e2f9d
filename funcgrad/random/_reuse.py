"""Opt-in check that no key is consumed twice (JAX's key-reuse checker, eagerly).

Inside ``with check_key_reuse():`` every key handed to a sampler or to ``split``/``bits`` is
marked consumed; handing the same key object to another (or the same) one raises
:class:`KeyReuseError` naming both lines of user code. ``fold_in`` does not consume its key
(deriving many keys by distinct data is what it is for). Keys are tracked by identity, as
JAX's checker does, so tracers inside ``jit``/``vmap``/``grad`` are tracked too; a key
consumed in two branches of one ``cond``/``switch`` is consumed once (one branch runs). A sampler
built on another one (``lognormal`` on ``normal``) consumes its key once. The state lives in
context variables; outside the ``with`` block the samplers pay one ``ContextVar.get``.
"""

from __future__ import annotations

import contextlib
import functools
import weakref
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any, TypeVar

from funcgrad.config import flag_scope, register_flag
from funcgrad.core import SourceInfo, branch_path, exclusive_branches, user_source_info
from funcgrad.errors import KeyReuseError

__all__ = ["KeyReuseError", "check_key_reuse", "debug_key_reuse", "consumes"]

F = TypeVar("F", bound=Callable[..., Any])

# id(key) -> (the key, held so that its id is not reused by another, sampler name, where it
# was consumed, the cond/switch branches it was consumed in)
_consumed: ContextVar[dict[int, tuple[Any, str, SourceInfo, tuple]] | None] = ContextVar(
    "funcgrad_random_consumed", default=None)
_inside_sampler: ContextVar[bool] = ContextVar("funcgrad_random_inside", default=False)
# JAX's flag jax_debug_key_reuse: the same check everywhere while it is on. Its record lives as
# long as the flag, so keys are held weakly where they can be (arrays; a dead key's entry
# goes with it) instead of kept alive.
_flag_seen: ContextVar[dict[int, tuple[Any, str, SourceInfo, tuple]] | None] = ContextVar(
    "funcgrad_random_consumed_flag", default=None)


def _write_flag(value: Any) -> None:
    if bool(value):
        if _flag_seen.get() is None:
            _flag_seen.set({})
    else:
        _flag_seen.set(None)


register_flag("jax_debug_key_reuse", lambda: _flag_seen.get() is not None, _write_flag)


def debug_key_reuse(enable: bool = True) -> contextlib.AbstractContextManager[None]:
    """JAX's ``jax.debug_key_reuse(True)``: inside the ``with`` block (or the decorated
    function) a key consumed twice raises :class:`KeyReuseError`, as with
    ``funcgrad.config.update("jax_debug_key_reuse", True)`` for the rest of the program.

    Example:
        >>> from funcgrad import random
        >>> with debug_key_reuse():
        ...     k = random.PRNGKey(0)
        ...     _ = random.normal(k)
        ...     random.uniform(k)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        funcgrad.errors.KeyReuseError: random.uniform: this key was already consumed by ...
    """
    return flag_scope("jax_debug_key_reuse", enable)


def _held(key: Any, seen: dict[int, Any]) -> Any:
    """What the record keeps of ``key``: a weak reference that drops the entry when the key
    dies, or the key itself when it cannot be referenced weakly (a tracer)."""
    i = id(key)
    try:
        return weakref.ref(key, lambda _, i=i: seen.pop(i, None))
    except TypeError:
        return key


def _same(held: Any, key: Any) -> bool:
    return (held() if isinstance(held, weakref.ref) else held) is key


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
        if seen is None:
            seen = _flag_seen.get()
        if seen is None or _inside_sampler.get():
            return fn(key, *args, **kwargs)
        here = user_source_info()
        path = branch_path()
        prev = seen.get(id(key))
        # a key consumed in two branches of one cond/switch is consumed once (one runs)
        if prev is not None and _same(prev[0], key) and not exclusive_branches(prev[3], path):
            raise KeyReuseError(
                f"random.{name}: this key was already consumed by random.{prev[1]}"
                f"{prev[2].at()}; consumed again{here.at()}. Each key must be used once: "
                "make new ones with funcgrad.random.split(key) (or fold_in(key, i))."
            )
        seen[id(key)] = (_held(key, seen), name, here, path)
        token = _inside_sampler.set(True)
        try:
            return fn(key, *args, **kwargs)
        finally:
            _inside_sampler.reset(token)

    return wrapper  # type: ignore[return-value]
