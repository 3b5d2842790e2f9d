"""The process group: ``init()`` binds every MPI process to one named axis (``WORLD``).

torch.distributed's names (``init_process_group``, ``get_rank``, ``all_reduce``, ...) over
:mod:`funcgrad.distributed`. The binding lives in a context variable set by ``init()``, so
the collectives of :mod:`funcgrad.lax` over ``WORLD`` reach every process from then on.
"""

from __future__ import annotations

import contextvars
import enum
import os
from typing import Any

from funcgrad.core import bind_axis_for_context, lookup_axis, unbind_axis

__all__ = [
    "WORLD",
    "ReduceOp",
    "init",
    "init_process_group",
    "destroy_process_group",
    "is_initialized",
    "is_available",
    "get_rank",
    "get_world_size",
    "get_local_rank",
    "get_backend",
    "all_reduce",
    "broadcast",
    "all_gather",
    "barrier",
    "is_main_process",
]

#: the axis name every process is a member of after ``init()``
WORLD = "funcgrad_nn.world"

_token: contextvars.ContextVar[Any] = contextvars.ContextVar("funcgrad_nn_world", default=None)


class ReduceOp(enum.Enum):
    """Reductions of :func:`all_reduce` (torch.distributed.ReduceOp)."""

    SUM = "sum"
    AVG = "avg"
    MAX = "max"
    MIN = "min"


def is_available() -> bool:
    """Whether mpi4py (and so an MPI library) can be imported.

    Example:
        >>> isinstance(is_available(), bool)
        True
    """
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


def init(backend: str = "mpi", timeout: float | None = None, comm: Any = None) -> None:
    """Join the process group of every process ``mpiexec`` started (torch's
    ``init_process_group``). ``timeout`` (seconds) bounds every collective: a peer that died
    makes the others raise ``DistributedTimeoutError`` instead of hanging. ``comm`` may be
    any communicator of :mod:`funcgrad.distributed` (e.g. a ``ThreadGroup`` member).

    Example:
        >>> from funcgrad.distributed import LocalCommunicator
        >>> init(comm=LocalCommunicator()); get_rank(), get_world_size()
        (0, 1)
        >>> destroy_process_group()
    """
    if backend not in ("mpi", "nccl", "gloo"):
        raise ValueError(f"init: unknown backend {backend!r}; funcgrad_nn uses MPI ('mpi')")
    if is_initialized():
        raise RuntimeError("init: the process group is already initialized "
                           "(call destroy_process_group() first)")
    if comm is None:
        from funcgrad.distributed import MPICommunicator

        comm = MPICommunicator(timeout=timeout)
    _token.set(bind_axis_for_context(WORLD, comm.size, comm))


def init_process_group(backend: str = "mpi", init_method: Any = None, timeout: Any = None,
                       world_size: int = -1, rank: int = -1, **kwargs: Any) -> None:
    """torch.distributed's spelling of :func:`init`; MPI decides ranks and sizes, so
    ``world_size``/``rank``, when given, must agree with it. ``timeout`` may be seconds or a
    ``datetime.timedelta``.

    Example:
        >>> from funcgrad.distributed import LocalCommunicator
        >>> init_process_group("mpi", comm=LocalCommunicator()); is_initialized()
        True
        >>> destroy_process_group()
    """
    if hasattr(timeout, "total_seconds"):
        timeout = timeout.total_seconds()
    init(backend, timeout=timeout, comm=kwargs.pop("comm", None))
    if kwargs:
        raise TypeError(f"init_process_group: unexpected arguments {sorted(kwargs)}")
    if world_size not in (-1, get_world_size()) or rank not in (-1, get_rank()):
        got = (world_size, rank)
        destroy_process_group()
        raise ValueError(f"init_process_group: world_size/rank {got} disagree with MPI's")


def destroy_process_group() -> None:
    """Leave the process group (``init()`` may be called again).

    Example:
        >>> destroy_process_group(); is_initialized()
        False
    """
    token = _token.get()
    if token is not None:
        unbind_axis(token)
        _token.set(None)


def is_initialized() -> bool:
    """Whether :func:`init` was called (and not destroyed).

    Example:
        >>> is_initialized()
        False
    """
    return lookup_axis(WORLD) is not None


def _comm() -> Any:
    frame = lookup_axis(WORLD)
    if frame is None or frame.comm is None:
        raise RuntimeError(
            "the default process group has not been initialized: call "
            "funcgrad_nn.distributed.init() at the start of the script and run it with "
            "`mpiexec -n N python script.py`"
        )
    return frame.comm


def get_rank() -> int:
    """This process's rank in the group (0 ... world size - 1).

    Example:
        >>> from funcgrad.distributed import LocalCommunicator
        >>> init(comm=LocalCommunicator()); get_rank()
        0
        >>> destroy_process_group()
    """
    return int(_comm().rank)


def get_world_size() -> int:
    """The number of processes in the group.

    Example:
        >>> from funcgrad.distributed import LocalCommunicator
        >>> init(comm=LocalCommunicator()); get_world_size()
        1
        >>> destroy_process_group()
    """
    return int(_comm().size)


def get_local_rank() -> int:
    """This process's rank among the processes on its machine (Open MPI's
    ``OMPI_COMM_WORLD_LOCAL_RANK``, ``LOCAL_RANK`` or MPI's shared-memory split).

    Example:
        >>> from funcgrad.distributed import LocalCommunicator
        >>> init(comm=LocalCommunicator()); get_local_rank()
        0
        >>> destroy_process_group()
    """
    for var in ("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "LOCAL_RANK"):
        if var in os.environ:
            return int(os.environ[var])
    comm = _comm()
    mpi_comm = getattr(comm, "comm", None)
    if mpi_comm is None:
        return int(comm.rank)
    from mpi4py import MPI

    return int(mpi_comm.Split_type(MPI.COMM_TYPE_SHARED).Get_rank())


def get_backend() -> str:
    """``"mpi"``.

    Example:
        >>> get_backend()
        'mpi'
    """
    return "mpi"


def is_main_process() -> bool:
    """True on rank 0 (and when no process group is initialized): where to log and save.

    Example:
        >>> is_main_process()
        True
    """
    return not is_initialized() or get_rank() == 0


def _writable(array: Any, what: str) -> Any:
    if not hasattr(array, "__setitem__") or not hasattr(array, "shape"):
        raise TypeError(
            f"{what} works in place on an array (as torch.distributed does on a tensor), got "
            f"{type(array).__name__}; inside traced code use funcgrad.lax.psum/all_gather over "
            "funcgrad_nn.distributed.WORLD"
        )
    return array


def all_reduce(array: Any, op: ReduceOp | str = ReduceOp.SUM) -> None:
    """Reduce ``array`` over all processes, in place (every rank gets the result).

    Example:
        >>> import numpy as np
        >>> from funcgrad.distributed import LocalCommunicator
        >>> init(comm=LocalCommunicator())
        >>> x = np.ones(2); all_reduce(x, ReduceOp.AVG); x
        array([1., 1.])
        >>> destroy_process_group()
    """
    _writable(array, "all_reduce")
    op = ReduceOp(op.value if isinstance(op, ReduceOp) else op)
    comm = _comm()
    out = comm.allreduce(array, "sum" if op is ReduceOp.AVG else op.value)
    if op is ReduceOp.AVG:
        out = out / comm.size
    array[...] = out


def broadcast(array: Any, src: int = 0) -> None:
    """Overwrite ``array`` on every process with rank ``src``'s, in place.

    Example:
        >>> import numpy as np
        >>> from funcgrad.distributed import LocalCommunicator
        >>> init(comm=LocalCommunicator())
        >>> x = np.arange(3.0); broadcast(x, 0); x
        array([0., 1., 2.])
        >>> destroy_process_group()
    """
    _writable(array, "broadcast")
    array[...] = _comm().bcast(array, src)


def all_gather(array_list: list[Any], array: Any) -> None:
    """Fill ``array_list`` (one array per rank) with every rank's ``array``, in place.

    Example:
        >>> import numpy as np
        >>> from funcgrad.distributed import LocalCommunicator
        >>> init(comm=LocalCommunicator())
        >>> out = [np.zeros(2)]; all_gather(out, np.ones(2)); out
        [array([1., 1.])]
        >>> destroy_process_group()
    """
    comm = _comm()
    if len(array_list) != comm.size:
        raise ValueError(f"all_gather: array_list has {len(array_list)} entries for a world "
                         f"of {comm.size} processes")
    for dst, got in zip(array_list, comm.allgather(array)):
        _writable(dst, "all_gather")[...] = got


def barrier() -> None:
    """Wait until every process reaches this call.

    Example:
        >>> from funcgrad.distributed import LocalCommunicator
        >>> init(comm=LocalCommunicator()); barrier(); destroy_process_group()
    """
    _comm().barrier()
