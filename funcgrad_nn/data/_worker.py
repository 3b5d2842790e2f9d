"""What runs inside a DataLoader worker process: seeding, ``get_worker_info``, the fetch loop,
and carrying an exception (with its traceback) back to the main process."""

from __future__ import annotations

import contextvars
import os
import pickle
import queue
import random
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from funcgrad_nn.data._transport import pack

__all__ = ["WorkerInfo", "get_worker_info"]

_POLL_S = 1.0  # how often an idle worker checks that its parent is still alive


@dataclass(frozen=True)
class WorkerInfo:
    """Inside a worker: its ``id`` (0..``num_workers``-1), ``num_workers``, ``seed`` (the
    seed its RNGs got) and its copy of the ``dataset``."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


# Set once in each worker process (its main thread's context); None in the main process.
_worker_info: contextvars.ContextVar[WorkerInfo | None] = contextvars.ContextVar(
    "funcgrad_nn_data_worker_info", default=None)


def get_worker_info() -> WorkerInfo | None:
    """The :class:`WorkerInfo` of the calling DataLoader worker, or None in the main process
    (use it in ``IterableDataset.__iter__`` or ``worker_init_fn`` to split the work).

    >>> get_worker_info() is None
    True
    """
    return _worker_info.get()


class ExceptionWrapper:
    """An exception raised in a worker, picklable, re-raised in the main process with the
    worker's traceback in its message."""

    def __init__(self, where: str) -> None:
        exc_type, exc, _ = sys.exc_info()
        self.exc_type = exc_type
        self.text = "".join(traceback.format_exception(exc_type, exc, exc.__traceback__
                                                       if exc is not None else None))
        self.where = where

    def reraise(self) -> None:
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.text}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        try:
            exc = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exc

    def __reduce__(self) -> Any:
        try:  # the exception class itself when it pickles, else RuntimeError
            pickle.dumps(self.exc_type)
            exc_type = self.exc_type
        except Exception:
            exc_type = RuntimeError
        return _rebuild, (exc_type, self.text, self.where)


def _rebuild(exc_type: type, text: str, where: str) -> ExceptionWrapper:
    w = ExceptionWrapper.__new__(ExceptionWrapper)
    w.exc_type, w.text, w.where = exc_type, text, where
    return w


class KeyErrorMessage(str):
    """A KeyError's message shown as is (KeyError would repr() a plain str)."""

    def __repr__(self) -> str:
        return str(self)


@dataclass(frozen=True)
class IterableExhausted:
    """A worker's iterable dataset has no more data this epoch."""

    worker_id: int


def seed_worker(base_seed: int, worker_id: int) -> None:
    """Seed the RNGs a dataset may use in a worker as PyTorch's workers do: ``random`` with
    ``base_seed + worker_id``, NumPy's legacy global state with the four words PyTorch
    derives from (``worker_id``, ``base_seed``) (its ``_generate_state``, NumPy's
    ``SeedSequence`` hash), so augmentations drawn from either match PyTorch's workers for the
    same base seed; funcgrad_nn's global generator with ``base_seed + worker_id``."""
    from funcgrad_nn.init import manual_seed

    seed = base_seed + worker_id
    random.seed(seed)
    np.random.seed(np.random.SeedSequence(
        [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0]).generate_state(4))
    manual_seed(seed)


def fetch(dataset: Any, indices: Any, auto_collation: bool, collate_fn: Callable[..., Any],
          fast_take: Callable[[Any, Any], Any] | None) -> Any:
    """One batch of a map-style dataset (or one sample when batching is off)."""
    if not auto_collation:
        return collate_fn(dataset[indices])
    if fast_take is not None:
        return fast_take(dataset, indices)
    getitems = getattr(dataset, "__getitems__", None)
    if callable(getitems):  # a dataset that fetches a whole batch at once (PyTorch's hook)
        return collate_fn(getitems(indices))
    return collate_fn([dataset[i] for i in indices])


def worker_loop(dataset: Any, index_queue: Any, result_queue: Any, collate_fn: Callable,
                auto_collation: bool, batch_size: int | None, drop_last: bool,
                fast_take: Callable | None, seed: int, init_fn: Callable | None,
                worker_id: int, num_workers: int, iterable: bool, parent_pid: int) -> None:
    """The body of a worker process: fetch what the index queue asks for, in order."""
    seed_worker(seed - worker_id, worker_id)
    _worker_info.set(WorkerInfo(worker_id, num_workers, seed, dataset))
    where = f"in DataLoader worker process {worker_id}"
    init_error = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
    except Exception:
        init_error = ExceptionWrapper(f"in worker_init_fn of DataLoader worker process "
                                      f"{worker_id}")
    it = None
    exhausted = False
    while True:
        try:
            msg = index_queue.get(timeout=_POLL_S)
        except queue.Empty:
            if os.getppid() != parent_pid:  # the main process died: do not linger
                return
            continue
        except (EOFError, OSError, KeyboardInterrupt):
            return
        if msg is None:  # shutdown
            return
        if msg[0] == "reset":  # a new epoch of a persistent worker
            it, exhausted = None, False
            continue
        _, epoch, task, indices = msg
        if init_error is not None:
            result_queue.put(pack((epoch, task, init_error)))
            continue
        try:
            if not iterable:
                data: Any = fetch(dataset, indices, auto_collation, collate_fn, fast_take)
            elif exhausted:
                data = IterableExhausted(worker_id)
            else:
                if it is None:
                    it = iter(dataset)
                if auto_collation:
                    samples = []
                    for sample in it:
                        samples.append(sample)
                        if len(samples) == batch_size:
                            break
                    if len(samples) < batch_size:  # type: ignore[operator]
                        exhausted = True
                    if not samples or (exhausted and drop_last):
                        data = IterableExhausted(worker_id)
                    else:
                        data = collate_fn(samples)
                else:
                    try:
                        data = collate_fn(next(it))
                    except StopIteration:
                        exhausted = True
                        data = IterableExhausted(worker_id)
        except Exception:
            data = ExceptionWrapper(where)
        try:  # pickled here, not in the queue's feeder thread, so a failure is reported
            message = pack((epoch, task, data))
        except Exception:
            try:
                raise RuntimeError(f"DataLoader worker {worker_id} could not send batch {task} "
                                   "to the main process (it does not pickle)")
            except RuntimeError:
                message = pack((epoch, task, ExceptionWrapper(where)))
        result_queue.put(message)
