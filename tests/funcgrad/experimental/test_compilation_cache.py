"""funcgrad.experimental.compilation_cache: JAX's persistent-cache settings are recorded (JAX
0.10.2's defaults and names), so ported scripts that set them run unchanged."""

from __future__ import annotations

import funcgrad
from funcgrad.experimental.compilation_cache import compilation_cache as cc


def test_cache_settings_are_recorded_with_jaxs_defaults() -> None:
    read = funcgrad.config.read
    assert (read("jax_compilation_cache_dir"), read("jax_enable_compilation_cache"),
            read("jax_persistent_cache_min_compile_time_secs"),
            read("jax_persistent_cache_min_entry_size_bytes")) == (None, True, 1.0, 0)
    with funcgrad.config.flag_scope("jax_persistent_cache_min_compile_time_secs", 0):
        assert read("jax_persistent_cache_min_compile_time_secs") == 0.0
    try:
        cc.set_cache_dir("/tmp/funcgrad_cache")
        assert read("jax_compilation_cache_dir") == "/tmp/funcgrad_cache"
        cc.reset_cache()
        assert float(funcgrad.jit(lambda x: x * 2)(1.5)) == 3.0  # compiling still works
    finally:
        funcgrad.config.update("jax_compilation_cache_dir", None)
    assert read("jax_compilation_cache_dir") is None
