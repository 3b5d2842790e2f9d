"""``jax.experimental``'s commonly imported pieces: :mod:`funcgrad.experimental.ode`
(``odeint``), :mod:`funcgrad.experimental.jet` (``jet``),
:mod:`funcgrad.experimental.checkify` (run-time checks as values),
:mod:`funcgrad.experimental.sparse` (the ``BCOO`` sparse array), ``mesh_utils``, ``pjit``,
``shard_map`` (its deprecated former home), ``layout`` (``Layout``, ``Format``),
``compilation_cache`` (JAX's persistent-cache settings, recorded), ``multihost_utils``
(its single-process answers) and :func:`io_callback`.
See docs/experimental.md.
"""

from funcgrad.experimental import (
    checkify,
    compilation_cache,
    jet,
    layout,
    mesh_utils,
    multihost_utils,
    ode,
    pjit,
    shard_map,
    sparse,
)
from funcgrad.ops.pure_callback import io_callback

__all__ = ["jet", "ode", "checkify", "sparse", "mesh_utils", "pjit", "shard_map",
           "io_callback", "layout", "compilation_cache", "multihost_utils"]
