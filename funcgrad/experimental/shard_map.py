"""``jax.experimental.shard_map``: the former home of ``shard_map``, deprecated in JAX (which
still has it, as ``shard_map(f, mesh, in_specs, out_specs, check_rep=True)``) in favour of
``jax.shard_map``. Here it is :func:`funcgrad.shard_map` with ``check_vma=check_rep``, as in
JAX 0.10.

Example:
    >>> import warnings, numpy as np, funcgrad
    >>> from funcgrad import lax
    >>> from funcgrad.sharding import Mesh, PartitionSpec as P
    >>> mesh = Mesh(np.array(funcgrad.local_devices() * 2), ("i",))
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     f = shard_map(lambda b: lax.psum(b.sum(), "i"), mesh, P("i"), P())
    >>> float(f(np.arange(4.0)))
    6.0
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from funcgrad.api_shard_map import shard_map as _shard_map
from funcgrad.sharding import Mesh

__all__ = ["shard_map"]


def shard_map(f: Callable[..., Any], mesh: Mesh, in_specs: Any, out_specs: Any,
              check_rep: bool = True) -> Callable[..., Any]:
    """``funcgrad.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
    check_vma=check_rep)``, with JAX's ``DeprecationWarning`` (use ``funcgrad.shard_map``).

    Example:
        >>> import warnings, numpy as np, funcgrad
        >>> from funcgrad.sharding import Mesh, PartitionSpec as P
        >>> mesh = Mesh(np.array(funcgrad.local_devices() * 2), ("i",))
        >>> with warnings.catch_warnings(record=True) as w:
        ...     warnings.simplefilter("always")
        ...     f = shard_map(lambda b: b * 2, mesh, P("i"), P("i"), check_rep=False)
        >>> f(np.arange(4.0)).tolist(), w[0].category.__name__
        ([0.0, 2.0, 4.0, 6.0], 'DeprecationWarning')
    """
    warnings.warn("jax.experimental.shard_map is deprecated in v0.8.0. Used jax.shard_map "
                  "instead (here: funcgrad.shard_map).", DeprecationWarning, stacklevel=2)
    return _shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                      check_vma=check_rep)
