"""``spmd``: run a function as one member of a process axis bound to a communicator."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

from funcgrad.core import extend_axis_env
from funcgrad.distributed._comm import world

__all__ = ["spmd", "bind_axis"]


@contextlib.contextmanager
def bind_axis(axis_name: Any, comm: Any = None) -> Iterator[Any]:
    """Bind ``axis_name`` to ``comm`` (default: every MPI process) inside the ``with`` block;
    yields the communicator.

    Example:
        >>> import numpy as np
        >>> from funcgrad import lax
        >>> from funcgrad.distributed import LocalCommunicator
        >>> with bind_axis("dp", LocalCommunicator()) as comm:
        ...     int(lax.psum(1, "dp")), comm.rank
        (1, 0)
    """
    if comm is None:
        comm = world()
    with extend_axis_env(axis_name, comm.size, comm):
        yield comm


def spmd(f: Callable[..., Any], axis_name: Any, comm: Any = None) -> Callable[..., Any]:
    """``f`` run by every process of ``comm`` (default: all MPI processes) on its own
    arguments, with ``axis_name`` naming the process axis for the collectives inside it.

    The same ``f`` runs under ``vmap(f, axis_name=...)`` on one process, where the batch
    plays the role of the processes.

    Example:
        >>> import numpy as np
        >>> from funcgrad import lax
        >>> from funcgrad.distributed import ThreadGroup
        >>> def mean_centre(x):
        ...     return x - lax.pmean(x, "dp")
        >>> ThreadGroup(2).run(lambda comm: spmd(mean_centre, "dp", comm)(
        ...     np.array([float(comm.rank)])).tolist())
        [[-0.5], [0.5]]
    """

    @functools.wraps(f)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        with bind_axis(axis_name, comm):
            return f(*args, **kwargs)

    return wrapped
