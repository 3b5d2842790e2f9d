"""``jax.experimental.multihost_utils`` for funcgrad's one process.

JAX's multi-host helpers move data between the processes of a multi-process run. funcgrad runs
as one process (``funcgrad.process_count()`` is 1; :mod:`funcgrad.distributed` is its own MPI
layer), so each helper has JAX's single-process answer: ``process_allgather`` gives host
arrays with a leading axis of one process (or the array itself when ``tiled``),
``broadcast_one_to_all`` host copies, the global/host-local conversions the arrays as they
are (the one process holds every shard), and the synchronisations return at once. Ported
training scripts that call them run unchanged.

Example:
    >>> import numpy as np
    >>> from funcgrad.experimental import multihost_utils
    >>> multihost_utils.process_allgather(np.ones((2, 3))).shape
    (1, 2, 3)
"""

from __future__ import annotations

from typing import Any

import numpy

from funcgrad import tree_util
from funcgrad.api_devices import device_get
from funcgrad.core import Tracer

__all__ = ["process_allgather", "broadcast_one_to_all", "sync_global_devices", "assert_equal",
           "host_local_array_to_global_array", "global_array_to_host_local_array",
           "reached_preemption_sync_point"]


def _host(name: str, x: Any) -> numpy.ndarray:
    if isinstance(x, Tracer):
        raise TypeError(f"multihost_utils.{name} moves concrete arrays between processes; "
                        "call it outside jit/vmap/grad")
    return numpy.asarray(device_get(x))


def process_allgather(in_tree: Any, tiled: bool = False) -> Any:
    """Every process's arrays, gathered on the host: with one process, each leaf with a
    leading axis of size 1 (``tiled=True``: concatenated along axis 0, the leaf itself).

    Example:
        >>> import numpy as np
        >>> process_allgather({"a": np.ones(2)}, tiled=True)["a"].shape
        (2,)
    """
    def gather(x: Any) -> numpy.ndarray:
        h = _host("process_allgather", x)
        if not tiled:
            return h[None]
        if h.ndim == 0:
            raise ValueError("multihost_utils.process_allgather(tiled=True) concatenates along "
                             "axis 0: its leaves need at least one dimension")
        return h
    return tree_util.tree_map(gather, in_tree)


def broadcast_one_to_all(in_tree: Any, is_source: bool | None = None) -> Any:
    """Process 0's arrays on every process: with one process, host copies of the leaves.

    Example:
        >>> broadcast_one_to_all(2.0).tolist()
        2.0
    """
    del is_source  # the one process is the source
    return tree_util.tree_map(lambda x: _host("broadcast_one_to_all", x), in_tree)


def sync_global_devices(name: str) -> None:
    """A barrier across processes (named ``name``): with one process, it returns at once."""
    if not isinstance(name, str):
        raise TypeError(f"sync_global_devices: name must be a string, got {type(name).__name__}")


def assert_equal(in_tree: Any, fail_message: str = "") -> None:
    """Check that every process holds equal arrays: one process always does (its leaves are
    still checked to be arrays on the host)."""
    del fail_message
    tree_util.tree_map(lambda x: _host("assert_equal", x), in_tree)


def host_local_array_to_global_array(local_inputs: Any, global_mesh: Any, pspecs: Any) -> Any:
    """The global arrays whose shards each process holds: one process holds them all, so
    the arrays as they are (``global_mesh``/``pspecs`` say the layout, checked by
    :mod:`funcgrad.sharding` where the arrays are used)."""
    del global_mesh, pspecs
    return local_inputs


def global_array_to_host_local_array(global_inputs: Any, global_mesh: Any, pspecs: Any) -> Any:
    """This process's part of global arrays: with one process, all of them, as they are."""
    del global_mesh, pspecs
    return global_inputs


def reached_preemption_sync_point(step_id: int) -> bool:
    """Whether a preemption notice asks every process to save at ``step_id``: funcgrad has no
    preemption service, so never (``False``, JAX's answer on one process)."""
    del step_id
    return False
