"""``jax.experimental.compilation_cache``: its one module,
:mod:`funcgrad.experimental.compilation_cache.compilation_cache`."""

from funcgrad.experimental.compilation_cache import compilation_cache

__all__ = ["compilation_cache"]
