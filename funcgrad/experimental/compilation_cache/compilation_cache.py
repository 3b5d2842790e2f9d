"""JAX's persistent compilation cache settings, accepted so that ported scripts run.

JAX can keep XLA executables in a directory between processes
(``jax.config.update("jax_compilation_cache_dir", path)`` or ``set_cache_dir(path)``).
funcgrad compiles a jaxpr to Python source in memory, in milliseconds, and keeps it only for
the process (jit's caches): there is nothing to persist. The flags
``jax_compilation_cache_dir``, ``jax_enable_compilation_cache``,
``jax_persistent_cache_min_compile_time_secs`` and
``jax_persistent_cache_min_entry_size_bytes`` are recorded (``funcgrad.config.read`` gives
them back, with JAX's defaults) and change nothing else; no file is written.

Example:
    >>> import funcgrad
    >>> from funcgrad.experimental.compilation_cache import compilation_cache as cc
    >>> cc.set_cache_dir("/tmp/jax_cache")
    >>> funcgrad.config.read("jax_compilation_cache_dir")
    '/tmp/jax_cache'
    >>> funcgrad.config.update("jax_compilation_cache_dir", None)
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from typing import Any

from funcgrad.config import register_flag, update

__all__ = ["set_cache_dir", "reset_cache"]


def _setting(name: str, default: Any, convert: Any) -> None:
    var: ContextVar[Any] = ContextVar(f"funcgrad_{name}", default=default)
    register_flag(name, var.get, lambda v: var.set(None if v is None else convert(v)))


_setting("jax_compilation_cache_dir", None, os.fspath)
_setting("jax_enable_compilation_cache", True, bool)
_setting("jax_persistent_cache_min_compile_time_secs", 1.0, float)
_setting("jax_persistent_cache_min_entry_size_bytes", 0, int)


def set_cache_dir(path: str | os.PathLike[str]) -> None:
    """``compilation_cache.set_cache_dir(path)``: sets ``jax_compilation_cache_dir`` (no
    file is written: funcgrad's compiled programs live in the process)."""
    update("jax_compilation_cache_dir", path)


def reset_cache() -> None:
    """``compilation_cache.reset_cache()``: JAX forgets its open cache so that a new
    directory takes effect; funcgrad keeps none open, so there is nothing to forget."""
