"""The process group: ``init()`` binds every MPI process to one named axis (``WORLD``).

torch.distributed's names (``init_process_group``, ``get_rank``, ``all_reduce``, ...) over
:mod:`funcgrad.distributed`. The binding lives in a context variable set by ``init()``, so
the collectives of :mod:`funcgrad.lax` over ``WORLD`` reach every process from then on.
"""

from __future__ import annotations

import contextvars
import enum
import functools
import operator
import os
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np

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
    "reduce",
    "gather",
    "scatter",
    "all_to_all",
    "reduce_scatter",
    "all_gather_into_tensor",
    "reduce_scatter_tensor",
    "all_gather_object",
    "broadcast_object_list",
    "gather_object",
    "scatter_object_list",
    "is_main_process",
]

#: the axis name every process is a member of after ``init()``
WORLD = "funcgrad_nn.world"

_token: contextvars.ContextVar[Any] = contextvars.ContextVar("funcgrad_nn_world", default=None)


class ReduceOp(enum.Enum):
    """Reductions of :func:`all_reduce` (torch.distributed.ReduceOp; the bitwise ones need
    integer or bool arrays)."""

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MAX = "max"
    MIN = "min"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"


# What the communicators do not reduce themselves: gathered, then combined here.
_GATHERED_OPS: dict[ReduceOp, Callable[[Any, Any], Any]] = {
    ReduceOp.PRODUCT: operator.mul,
    ReduceOp.BAND: operator.and_,
    ReduceOp.BOR: operator.or_,
    ReduceOp.BXOR: operator.xor,
}


class NoProcessGroupError(RuntimeError, ValueError):
    """A collective before ``init()`` (torch.distributed raises ValueError there)."""


class Work:
    """What ``async_op=True`` returns, as torch.distributed's ``Work``: the collectives
    here complete before returning, so :meth:`wait` has nothing left to wait for."""

    def wait(self, timeout: Any = None) -> bool:
        """Return True (the operation is complete)."""
        return True

    def is_completed(self) -> bool:
        """Return True."""
        return True


def _check_group(group: Any) -> None:
    if group is not None and group != WORLD:
        raise ValueError("funcgrad_nn.distributed has one process group, the default one: "
                         f"pass group=None, got {group!r}")


def _work(async_op: bool) -> Work | None:
    return Work() if async_op else None


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


_BACKENDS = ("mpi", "nccl", "gloo", "ucc", "xccl")


def _check_backend(backend: str | None) -> None:
    # PyTorch's names, also its per-device form "cpu:gloo,cuda:nccl"; MPI carries them all.
    parts = [] if backend is None else [p.rpartition(":")[2] for p in str(backend).split(",")]
    if any(p.lower() not in _BACKENDS for p in parts):
        raise ValueError(f"init: unknown backend {backend!r}; funcgrad_nn uses MPI ('mpi'), "
                         f"and accepts PyTorch's names {list(_BACKENDS)} for it")


def init(backend: str | None = "mpi", timeout: float | None = None, comm: Any = None) -> None:
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
    _check_backend(backend)
    if is_initialized():
        raise RuntimeError("init: the process group is already initialized "
                           "(call destroy_process_group() first)")
    if comm is None:
        from funcgrad.distributed import MPICommunicator

        comm = MPICommunicator(timeout=timeout)
    _token.set(bind_axis_for_context(WORLD, comm.size, comm))


def init_process_group(backend: str | None = None, init_method: Any = None,
                       timeout: Any = None, world_size: int = -1, rank: int = -1,
                       store: Any = None, group_name: str = "", pg_options: Any = None,
                       device_id: Any = None, **kwargs: Any) -> None:
    """torch.distributed's spelling of :func:`init`, with its arguments; MPI decides ranks and
    sizes, so ``world_size``/``rank``, when given, must agree with it, and connects the
    processes itself (``init_method``, ``store``, ``group_name``, ``pg_options`` and
    ``device_id`` are accepted for PyTorch scripts and not needed). ``timeout`` may be
    seconds or a ``datetime.timedelta``.

    Example:
        >>> from funcgrad.distributed import LocalCommunicator
        >>> init_process_group("mpi", comm=LocalCommunicator()); is_initialized()
        True
        >>> destroy_process_group()
    """
    if hasattr(timeout, "total_seconds"):
        timeout = timeout.total_seconds()
    comm = kwargs.pop("comm", None)
    if kwargs:
        raise TypeError(f"init_process_group: unexpected arguments {sorted(kwargs)}")
    init(backend, timeout=timeout, comm=comm)
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
        raise NoProcessGroupError(
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


def _reduced(array: Any, op: ReduceOp | str) -> Any:
    op = ReduceOp(op.value if isinstance(op, ReduceOp) else op)
    comm = _comm()
    if op in _GATHERED_OPS:
        return functools.reduce(_GATHERED_OPS[op], comm.allgather(array))
    if op is ReduceOp.AVG and array.dtype.kind in "biu":
        raise AverageOfIntegersError(
            f"all_reduce(ReduceOp.AVG) of a {array.dtype} array: the mean does not fit its "
            "dtype (torch.distributed refuses too); reduce with SUM and divide a float copy")
    out = comm.allreduce(array, "sum" if op is ReduceOp.AVG else op.value)
    return out / comm.size if op is ReduceOp.AVG else out


class AverageOfIntegersError(RuntimeError, TypeError):
    """``ReduceOp.AVG`` of an integer array (PyTorch: RuntimeError, the float mean cannot be
    cast back)."""


def all_reduce(array: Any, op: ReduceOp | str = ReduceOp.SUM, group: Any = None,
               async_op: bool = False) -> Work | None:
    """Reduce ``array`` over all processes, in place (every rank gets the result).

    Example:
        >>> import numpy as np
        >>> from funcgrad.distributed import LocalCommunicator
        >>> init(comm=LocalCommunicator())
        >>> x = np.ones(2); all_reduce(x, ReduceOp.AVG); x
        array([1., 1.])
        >>> destroy_process_group()
    """
    _check_group(group)
    _writable(array, "all_reduce")
    array[...] = _reduced(array, op)
    return _work(async_op)


def reduce(array: Any, dst: int = 0, op: ReduceOp | str = ReduceOp.SUM, group: Any = None,
           async_op: bool = False) -> Work | None:
    """Reduce ``array`` over all processes into rank ``dst``'s ``array`` (the others keep
    theirs).

    Example:
        >>> import numpy as np
        >>> from funcgrad.distributed import LocalCommunicator
        >>> init(comm=LocalCommunicator())
        >>> x = np.arange(2.0); reduce(x, dst=0, op=ReduceOp.PRODUCT); x
        array([0., 1.])
        >>> destroy_process_group()
    """
    _check_group(group)
    _writable(array, "reduce")
    out = _reduced(array, op)
    if get_rank() == _rank_arg(dst, "dst"):
        array[...] = out
    return _work(async_op)


def _rank_arg(rank: Any, name: str) -> int:
    size = get_world_size()
    if not isinstance(rank, (int, np.integer)) or not 0 <= rank < size:
        raise ValueError(f"{name}={rank!r} is not a rank of this world of {size} processes")
    return int(rank)


def broadcast(array: Any, src: int = 0, group: Any = None,
              async_op: bool = False) -> Work | None:
    """Overwrite ``array`` on every process with rank ``src``'s, in place.

    Example:
        >>> import numpy as np
        >>> from funcgrad.distributed import LocalCommunicator
        >>> init(comm=LocalCommunicator())
        >>> x = np.arange(3.0); broadcast(x, 0); x
        array([0., 1., 2.])
        >>> destroy_process_group()
    """
    _check_group(group)
    _writable(array, "broadcast")
    array[...] = _comm().bcast(array, _rank_arg(src, "src"))
    return _work(async_op)


def _one_per_rank(arrays: Any, what: str) -> list[Any]:
    size = get_world_size()
    if not isinstance(arrays, (list, tuple)) or len(arrays) != size:
        got = len(arrays) if isinstance(arrays, (list, tuple)) else type(arrays).__name__
        raise ValueError(f"{what} needs a list of {size} arrays (one per rank), got {got}")
    return list(arrays)


def all_gather(array_list: list[Any], array: Any, group: Any = None,
               async_op: bool = False) -> Work | None:
    """Fill ``array_list`` (one array per rank) with every rank's ``array``, in place.

    Example:
        >>> import numpy as np
        >>> from funcgrad.distributed import LocalCommunicator
        >>> init(comm=LocalCommunicator())
        >>> out = [np.zeros(2)]; all_gather(out, np.ones(2)); out
        [array([1., 1.])]
        >>> destroy_process_group()
    """
    _check_group(group)
    comm = _comm()
    if len(array_list) != comm.size:
        raise ValueError(f"all_gather: array_list has {len(array_list)} entries for a world "
                         f"of {comm.size} processes")
    for dst, got in zip(array_list, comm.allgather(array)):
        _writable(dst, "all_gather")[...] = got
    return _work(async_op)


def all_gather_into_tensor(output: Any, array: Any, group: Any = None,
                           async_op: bool = False) -> Work | None:
    """Every rank's ``array`` concatenated along the first axis into ``output`` (of
    ``world_size`` times ``array``'s first dimension), on every rank.

    Example:
        >>> import numpy as np
        >>> from funcgrad.distributed import LocalCommunicator
        >>> init(comm=LocalCommunicator())
        >>> out = np.zeros(2); all_gather_into_tensor(out, np.ones(2)); out
        array([1., 1.])
        >>> destroy_process_group()
    """
    _check_group(group)
    _writable(output, "all_gather_into_tensor")
    parts = _comm().allgather(array)
    xp = _xp(array)
    output[...] = xp.concatenate([xp.reshape(p, (-1,) + tuple(p.shape[1:])) for p in parts])
    return _work(async_op)


def _xp(array: Any) -> Any:
    from funcgrad.backend import xp_for

    return xp_for(array, what="funcgrad_nn.distributed")


def gather(array: Any, gather_list: list[Any] | None = None, dst: int = 0, group: Any = None,
           async_op: bool = False) -> Work | None:
    """Every rank's ``array`` into rank ``dst``'s ``gather_list`` (one array per rank;
    None on the other ranks).

    Example:
        >>> import numpy as np
        >>> from funcgrad.distributed import LocalCommunicator
        >>> init(comm=LocalCommunicator())
        >>> out = [np.zeros(2)]; gather(np.ones(2), out, dst=0); out
        [array([1., 1.])]
        >>> destroy_process_group()
    """
    _check_group(group)
    dst = _rank_arg(dst, "dst")
    if get_rank() == dst:
        gather_list = _one_per_rank(gather_list, "gather: gather_list on the destination rank")
    elif gather_list is not None:
        raise ValueError("gather: gather_list must be None on the ranks other than dst")
    parts = _comm().allgather(array)
    for out, got in zip(gather_list or [], parts):
        _writable(out, "gather")[...] = got
    return _work(async_op)


def scatter(array: Any, scatter_list: list[Any] | None = None, src: int = 0, group: Any = None,
            async_op: bool = False) -> Work | None:
    """Rank ``src``'s ``scatter_list[r]`` into rank ``r``'s ``array`` (``scatter_list`` is
    None on the other ranks).

    Example:
        >>> import numpy as np
        >>> from funcgrad.distributed import LocalCommunicator
        >>> init(comm=LocalCommunicator())
        >>> x = np.zeros(2); scatter(x, [np.arange(2.0)], src=0); x
        array([0., 1.])
        >>> destroy_process_group()
    """
    _check_group(group)
    _writable(array, "scatter")
    src, comm = _rank_arg(src, "src"), _comm()
    xp = _xp(array)
    if comm.rank == src:
        parts = _one_per_rank(scatter_list, "scatter: scatter_list on the source rank")
        stacked = xp.stack([xp.asarray(p, dtype=array.dtype) for p in parts])
        if stacked.shape[1:] != array.shape:
            raise ValueError(f"scatter: the arrays of scatter_list have shape "
                             f"{stacked.shape[1:]}, the output {array.shape}")
    elif scatter_list is not None:
        raise ValueError("scatter: scatter_list must be None on the ranks other than src")
    else:
        stacked = xp.zeros((comm.size,) + tuple(array.shape), dtype=array.dtype)
    array[...] = comm.bcast(stacked, src)[comm.rank]
    return _work(async_op)


def all_to_all(output_list: list[Any], input_list: list[Any], group: Any = None,
               async_op: bool = False) -> Work | None:
    """Rank ``r`` sends ``input_list[j]`` to rank ``j``, which receives it in
    ``output_list[r]`` (all of one shape).

    Example:
        >>> import numpy as np
        >>> from funcgrad.distributed import LocalCommunicator
        >>> init(comm=LocalCommunicator())
        >>> out = [np.zeros(2)]; all_to_all(out, [np.ones(2)]); out
        [array([1., 1.])]
        >>> destroy_process_group()
    """
    _check_group(group)
    outs = _one_per_rank(output_list, "all_to_all: output_list")
    for out, got in zip(outs, _comm().alltoall(_one_per_rank(input_list,
                                                             "all_to_all: input_list"))):
        _writable(out, "all_to_all")[...] = got
    return _work(async_op)


def reduce_scatter(output: Any, input_list: list[Any], op: ReduceOp | str = ReduceOp.SUM,
                   group: Any = None, async_op: bool = False) -> Work | None:
    """``output`` on rank ``r`` = ``input_list[r]`` reduced over all ranks.

    Example:
        >>> import numpy as np
        >>> from funcgrad.distributed import LocalCommunicator
        >>> init(comm=LocalCommunicator())
        >>> out = np.zeros(2); reduce_scatter(out, [np.ones(2)]); out
        array([1., 1.])
        >>> destroy_process_group()
    """
    _check_group(group)
    _writable(output, "reduce_scatter")
    parts = _one_per_rank(input_list, "reduce_scatter: input_list")
    xp = _xp(output)
    output[...] = _reduced(xp.stack([xp.asarray(p) for p in parts]), op)[get_rank()]
    return _work(async_op)


def reduce_scatter_tensor(output: Any, array: Any, op: ReduceOp | str = ReduceOp.SUM,
                          group: Any = None, async_op: bool = False) -> Work | None:
    """``array`` reduced over all ranks, split along its first axis into ``world_size``
    chunks; rank ``r`` gets chunk ``r`` in ``output``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.distributed import LocalCommunicator
        >>> init(comm=LocalCommunicator())
        >>> out = np.zeros(2); reduce_scatter_tensor(out, np.arange(2.0)); out
        array([0., 1.])
        >>> destroy_process_group()
    """
    _check_group(group)
    _writable(output, "reduce_scatter_tensor")
    size, rank = get_world_size(), get_rank()
    if array.shape[0] % size:
        raise ValueError(f"reduce_scatter_tensor: the first dimension {array.shape[0]} does "
                         f"not split into {size} equal chunks")
    chunk = array.shape[0] // size
    output[...] = _reduced(array, op)[rank * chunk:(rank + 1) * chunk]
    return _work(async_op)


def _exchange_objects(obj: Any) -> list[Any]:
    # Pickled, padded to the longest, all-gathered as bytes (communicators move arrays of
    # one shape), unpickled: every rank's object on every rank.
    comm = _comm()
    data = np.frombuffer(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), dtype=np.uint8)
    lengths = [int(n[0]) for n in comm.allgather(np.array([data.size], dtype=np.int64))]
    padded = np.zeros(max(lengths), dtype=np.uint8)
    padded[:data.size] = data
    return [pickle.loads(np.asarray(b).tobytes()[:n])
            for b, n in zip(comm.allgather(padded), lengths)]


def all_gather_object(object_list: list[Any], obj: Any, group: Any = None) -> None:
    """Fill ``object_list`` (``world_size`` entries) with every rank's picklable ``obj``.

    Example:
        >>> from funcgrad.distributed import LocalCommunicator
        >>> init(comm=LocalCommunicator())
        >>> out = [None]; all_gather_object(out, {"loss": 0.5}); out
        [{'loss': 0.5}]
        >>> destroy_process_group()
    """
    _check_group(group)
    _one_per_rank(object_list, "all_gather_object: object_list")
    object_list[:] = _exchange_objects(obj)


def gather_object(obj: Any, object_gather_list: list[Any] | None = None, dst: int = 0,
                  group: Any = None) -> None:
    """Every rank's picklable ``obj`` into rank ``dst``'s ``object_gather_list``.

    Example:
        >>> from funcgrad.distributed import LocalCommunicator
        >>> init(comm=LocalCommunicator())
        >>> out = [None]; gather_object("hi", out); out
        ['hi']
        >>> destroy_process_group()
    """
    _check_group(group)
    dst = _rank_arg(dst, "dst")
    if get_rank() == dst:
        _one_per_rank(object_gather_list, "gather_object: object_gather_list on rank dst")
    objects = _exchange_objects(obj)
    if object_gather_list is not None and get_rank() == dst:
        object_gather_list[:] = objects


def broadcast_object_list(object_list: list[Any], src: int = 0, group: Any = None,
                          device: Any = None) -> None:
    """Replace ``object_list``'s entries, on every rank, with rank ``src``'s (picklable
    objects; the list has the same length everywhere).

    Example:
        >>> from funcgrad.distributed import LocalCommunicator
        >>> init(comm=LocalCommunicator())
        >>> objs = ["run-42", 7]; broadcast_object_list(objs, src=0); objs
        ['run-42', 7]
        >>> destroy_process_group()
    """
    _check_group(group)
    src = _rank_arg(src, "src")
    sent = _exchange_objects(list(object_list) if get_rank() == src else None)[src]
    if len(sent) != len(object_list):
        raise ValueError(f"broadcast_object_list: rank {src} sent {len(sent)} objects into a "
                         f"list of {len(object_list)}")
    object_list[:] = sent


def scatter_object_list(scatter_object_output_list: list[Any],
                        scatter_object_input_list: list[Any] | None = None, src: int = 0,
                        group: Any = None) -> None:
    """Rank ``src``'s ``scatter_object_input_list[r]`` into rank ``r``'s
    ``scatter_object_output_list[0]``.

    Example:
        >>> from funcgrad.distributed import LocalCommunicator
        >>> init(comm=LocalCommunicator())
        >>> out = [None]; scatter_object_list(out, ["shard-0"]); out
        ['shard-0']
        >>> destroy_process_group()
    """
    _check_group(group)
    src = _rank_arg(src, "src")
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError("scatter_object_list: scatter_object_output_list must be a non-empty "
                         "list (its first entry receives the object)")
    mine = None
    if get_rank() == src:
        mine = _one_per_rank(scatter_object_input_list,
                             "scatter_object_list: scatter_object_input_list on rank src")
    sent = _exchange_objects(mine)[src]
    scatter_object_output_list[0] = sent[get_rank()]


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None,
            timeout: Any = None) -> Work | None:
    """Wait until every process reaches this call.

    Example:
        >>> from funcgrad.distributed import LocalCommunicator
        >>> init(comm=LocalCommunicator()); barrier(); destroy_process_group()
    """
    _check_group(group)
    _comm().barrier()
    return _work(async_op)
