"""Run one program on many processes: ``spmd`` binds a named axis to an MPI communicator.

Inside ``spmd(f, axis_name="dp")`` the collectives of :mod:`funcgrad.lax` (``psum``,
``pmean``, ``pmax``, ``pmin``, ``all_gather``, ``all_to_all``, ``axis_index``) over ``"dp"``
exchange values between the processes that ``mpiexec`` started, so the same ``f`` that runs
under ``vmap(f, axis_name="dp")`` on one process runs across processes unchanged, under
``grad``, ``jit`` and ``vmap`` alike. The transport is MPI through ``mpi4py`` (the optional
``distributed`` extra: ``pip install "funcgrad[distributed]"`` brings mpi4py and Open MPI's
``mpiexec``); any object with the small :class:`Communicator` interface works too, which is how
the tests run several "processes" as threads.

Example (one process is a world of size 1):
    >>> import numpy as np
    >>> from funcgrad import lax
    >>> from funcgrad.distributed import spmd, LocalCommunicator
    >>> f = spmd(lambda x: lax.psum(x, "dp"), axis_name="dp", comm=LocalCommunicator())
    >>> f(np.array([1.0, 2.0])).tolist()
    [1.0, 2.0]
"""

from __future__ import annotations

from funcgrad.distributed._comm import (
    Communicator,
    DistributedTimeoutError,
    LocalCommunicator,
    MPICommunicator,
    ThreadGroup,
    default_timeout,
    world,
)
from funcgrad.distributed._spmd import bind_axis, spmd

__all__ = [
    "spmd",
    "bind_axis",
    "Communicator",
    "MPICommunicator",
    "LocalCommunicator",
    "ThreadGroup",
    "DistributedTimeoutError",
    "default_timeout",
    "world",
]
