"""``DataLoader`` with ``torch.utils.data.DataLoader``'s options and semantics, including real
worker processes.

With ``num_workers > 0`` each worker is a process with its own copy of the dataset; batches are
fetched ``prefetch_factor`` per worker ahead and delivered in sampler order (``in_order=True``),
so a seeded loader gives the same batches with any number of workers. Each worker's RNGs
(``random``, ``nn.init``'s generator) are seeded with ``base_seed + worker_id`` and NumPy's
global state as PyTorch seeds it, the base seed drawn from the loader's generator at the
start of each pass. A worker's exception is re-raised in the main process with the worker's
traceback; breaking out of the loop (or an error) shuts the workers down.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import queue
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from funcgrad.backend import cuda_available, device_of, device_put
from funcgrad_nn.data._transport import discard, remove_orphans, unpack
from funcgrad_nn.data._worker import ExceptionWrapper, IterableExhausted, fetch, worker_loop
from funcgrad_nn.data.collate import default_collate, default_convert
from funcgrad_nn.data.datasets import IterableDataset, TensorDataset
from funcgrad_nn.data.samplers import (
    BatchSampler,
    RandomSampler,
    SequentialSampler,
    as_generator,
    random_seed,
)

__all__ = ["DataLoader"]

_POLL_S = 0.1  # how often the main process checks on its workers while waiting


def _take(dataset: TensorDataset, indices: Any) -> list[Any]:
    # A TensorDataset batch by fancy indexing, instead of per-sample stacking.
    idx = np.asarray(indices, dtype=np.intp)
    out = []
    for t in dataset.tensors:
        d = device_of(t)
        out.append(t[device_put(idx, d) if d not in (None, "cpu") else idx])
    return out


class LoaderOptionError(ValueError, AssertionError):
    """A DataLoader option PyTorch rejects with an assertion when iterating."""


def _warn_worker_count(num_workers: int, stacklevel: int = 4) -> None:
    # PyTorch's check when it starts workers: more processes than usable CPUs only slows the
    # loader down (or freezes a machine short of memory).
    try:
        suggested, cpuset = len(os.sched_getaffinity(0)), True
    except (AttributeError, OSError):
        suggested, cpuset = os.cpu_count(), False
    if suggested is not None and num_workers <= suggested:
        return
    import warnings

    known = ("Our system could not determine the number of CPUs" if suggested is None else
             f"Our suggested max number of worker in current system is {suggested}"
             f"{'' if cpuset else ' (`cpuset` is not taken into account)'}, which is smaller "
             "than what this DataLoader is going to create")
    warnings.warn(f"This DataLoader will create {num_workers} worker processes in total. "
                  f"{known}. Please be aware that excessive worker creation might get "
                  "DataLoader running slow or even freeze, lower the worker number to avoid "
                  "potential slowness/freeze if necessary.", UserWarning, stacklevel=stacklevel)


def _start_context(context: Any, num_workers: int) -> Any:
    # PyTorch's checks: a start-method name or a context, and only with worker processes.
    if context is None:
        return None
    if num_workers == 0:
        raise ValueError("multiprocessing_context can only be used with multi-process loading "
                         f"(num_workers > 0), but got num_workers={num_workers}")
    if isinstance(context, str):
        methods = multiprocessing.get_all_start_methods()
        if context not in methods:
            raise ValueError("multiprocessing_context option should specify a valid start "
                             f"method in {methods!r}, but got multiprocessing_context="
                             f"{context!r}")
        return multiprocessing.get_context(context)
    if not isinstance(context, multiprocessing.context.BaseContext):
        raise TypeError("multiprocessing_context option should be a valid context object or a "
                        "string specifying the start method, but got multiprocessing_context="
                        f"{context}")
    return context


class DataLoader:
    """Iterate over ``dataset`` in batches (PyTorch's arguments and checks).

    ``generator`` (a ``numpy.random.Generator`` or an int seed) or ``seed`` makes shuffling and
    the workers' seeds deterministic; without them each pass draws them from ``nn.manual_seed``'s
    global generator when it starts, as PyTorch's does (so ``nn.manual_seed`` or
    ``nn.set_rng_state`` after building the loader decide the next shuffle). ``multiprocessing_context`` is a start-method name (``"fork"``, ``"spawn"``,
    ``"forkserver"``) or a context; with spawn/forkserver the dataset and functions must pickle.

    >>> import numpy as np
    >>> ds = TensorDataset(np.arange(10.0), np.arange(10))
    >>> loader = DataLoader(ds, batch_size=4, shuffle=True, seed=0)
    >>> [x.shape for x, y in loader]
    [(4,), (4,), (2,)]
    >>> len(DataLoader(ds, batch_size=4, drop_last=True))
    2
    """

    def __init__(
        self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
        sampler: Iterable[Any] | None = None, batch_sampler: Iterable[Sequence[Any]] | None = None,
        num_workers: int = 0, collate_fn: Callable[[Any], Any] | None = None,
        pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: Any = None, generator: Any = None, *,
        prefetch_factor: int | None = None, persistent_workers: bool = False,
        pin_memory_device: str = "", in_order: bool = True, seed: int | None = None,
    ) -> None:
        if not isinstance(num_workers, int) or isinstance(num_workers, bool):
            # PyTorch takes a float here and fails later in range(); name the type now
            raise TypeError(f"num_workers should be an int (the number of worker processes), "
                            f"got {type(num_workers).__name__} {num_workers!r}")
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if timeout > 0 and num_workers == 0:
            raise LoaderOptionError(f"timeout={timeout} needs worker processes (num_workers > "
                                    "0): a single-process loader has no workers to wait for")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and (not isinstance(prefetch_factor, int)
                                            or prefetch_factor < 1):
            raise LoaderOptionError("prefetch_factor should be a positive int, got "
                                    f"{prefetch_factor!r}")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if batch_size is not None and (not isinstance(batch_size, int)
                                       or isinstance(batch_size, bool) or batch_size <= 0):
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (None, False):
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if collate_fn is not None and not callable(collate_fn):
            raise TypeError("collate_fn must be callable")
        if worker_init_fn is not None and not callable(worker_init_fn):
            raise TypeError("worker_init_fn must be callable")
        if generator is not None or seed is not None:
            generator = as_generator(generator, seed)
        if sampler is None and not self._iterable:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)  # type: ignore[arg-type]
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.num_workers, self.prefetch_factor = num_workers, prefetch_factor
        self.pin_memory, self.pin_memory_device = pin_memory, pin_memory_device
        self.timeout, self.worker_init_fn = timeout, worker_init_fn
        self.multiprocessing_context = multiprocessing_context  # checked by the setter
        self.generator, self.persistent_workers, self.in_order = generator, persistent_workers, \
            in_order
        self.shuffle = shuffle
        self._auto_collation = batch_size is not None or batch_sampler is not None
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._user_collate = collate_fn not in (default_collate, default_convert)
        self._persistent_iter: _MultiProcessIter | None = None
        # len(dataset) of an IterableDataset once len(loader) asked for it (PyTorch's check
        # that the workers do not yield more than that, e.g. each a full copy of the stream).
        self._reported_len: int | None = None
        # The base seed persistent workers were started with, and one to start them with
        # instead of drawing (a resumed Trainer's: the interrupted run drew it epochs ago).
        self._workers_base_seed: int | None = None
        self._resume_base_seed: int | None = None
        self._initialized = True
        if num_workers > 0:  # PyTorch checks here and again whenever workers start
            _warn_worker_count(num_workers, stacklevel=3)

    _initialized = False
    # What the samplers were built from: changing one afterwards would be silently ignored.
    _FROZEN = frozenset({"batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                         "persistent_workers"})

    @property
    def multiprocessing_context(self) -> Any:
        """The start-method context of the workers (None: multiprocessing's default); may
        be set after construction, to a name or a context, checked as in the constructor."""
        return self._mp_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context: Any) -> None:
        self._mp_context = _start_context(context, self.num_workers)

    def __setattr__(self, name: str, value: Any) -> None:
        if self._initialized and name in self._FROZEN:
            raise ValueError(f"{name} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(name, value)

    # -- what to fetch --------------------------------------------------------------------

    def _index_sampler(self) -> Iterable[Any]:
        return self.batch_sampler if self._auto_collation else self.sampler  # type: ignore

    def _fast_take(self) -> Callable[[Any, Any], Any] | None:
        if type(self.dataset) is TensorDataset and not self._user_collate:
            return _take
        return None

    def _base_seed(self) -> int:
        gen = self.generator if self.generator is not None else as_generator(None)
        return random_seed(gen)

    def __iter__(self) -> Iterator[Any]:
        # The base seed is drawn when an iterator is made, as PyTorch does, so shuffles agree
        # for any num_workers: on every pass, except that persistent workers keep the seed
        # they started with and a later pass draws nothing (only the sampler's shuffle).
        if self.num_workers == 0:
            self._warn_pin_memory()
            return self._single_process(self._base_seed())
        if self.persistent_workers:
            if self._persistent_iter is None or self._persistent_iter.closed:
                self._warn_pin_memory()
                seed = self._resume_base_seed
                self._resume_base_seed = None
                self._workers_base_seed = seed if seed is not None else self._base_seed()
                self._persistent_iter = _MultiProcessIter(self, self._workers_base_seed)
            else:
                self._persistent_iter.reset(self._reported_len)
            return self._persistent_iter
        self._warn_pin_memory()
        return _MultiProcessIter(self, self._base_seed())

    def _warn_pin_memory(self) -> None:
        """PyTorch's warnings when an iterator is made with ``pin_memory=True``: a
        ``pin_memory_device`` is deprecated, and without a GPU nothing can be pinned. (With
        one, batches are host arrays that ``device_put`` copies to it; nothing is pinned
        either.)"""
        if not self.pin_memory:
            return
        if self.pin_memory_device:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be "
                          "used as the device,ignore pin_memory_device="
                          f"'{self.pin_memory_device}'.", UserWarning, stacklevel=3)
        if not cuda_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", UserWarning, stacklevel=3)

    def _single_process(self, base_seed: int) -> Iterator[Any]:
        if self._iterable:
            reported, yielded = self._reported_len, 0
            for out in self._iterable_batches():
                yielded += 1
                if reported is not None and yielded > reported:
                    _warn_iterable_overrun(self.dataset, reported, yielded, 0)
                yield out
            return
        fast = self._fast_take()
        for indices in self._index_sampler():
            yield fetch(self.dataset, indices, self._auto_collation, self.collate_fn, fast)

    def _iterable_batches(self) -> Iterator[Any]:
        it = iter(self.dataset)
        if not self._auto_collation:
            for sample in it:
                yield self.collate_fn(sample)
            return
        while True:
            batch = list(itertools.islice(it, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):  # type: ignore
                return
            yield self.collate_fn(batch)
            if len(batch) < self.batch_size:  # type: ignore[operator]
                return

    def __len__(self) -> int:
        n = self._length()
        if self._iterable:
            self._reported_len = len(self.dataset)
        return n

    def _length(self) -> int:
        if self._iterable:
            n = len(self.dataset)  # TypeError when the iterable dataset has no length
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self._index_sampler())  # type: ignore[arg-type]

    def __del__(self) -> None:
        it = getattr(self, "_persistent_iter", None)
        if it is not None:
            it.close()


class _MultiProcessIter:
    """Batches from worker processes, in order; ``close`` (also on garbage collection, early
    ``break``, exhaustion or error) shuts the workers down."""

    def __init__(self, loader: DataLoader, base_seed: int) -> None:
        # No reference to the loader itself: a persistent iterator must not keep its loader
        # alive (deleting the loader shuts the workers down).
        self._index_sampler = loader._index_sampler()
        self._iterable, self._in_order = loader._iterable, loader.in_order
        self._timeout, self._persistent = loader.timeout, loader.persistent_workers
        self._prefetch, self._length = loader.prefetch_factor, _safe_len(loader)
        self.closed = False
        n = loader.num_workers
        _warn_worker_count(n)
        ctx = loader.multiprocessing_context or multiprocessing.get_context()
        self._result_queue = ctx.Queue()
        self._index_queues: list[Any] = []
        self._workers: list[Any] = []
        try:
            for wid in range(n):
                iq = ctx.Queue()
                w = ctx.Process(
                    target=worker_loop, daemon=True,
                    args=(loader.dataset, iq, self._result_queue, loader.collate_fn,
                          loader._auto_collation, loader.batch_size, loader.drop_last,
                          loader._fast_take(), base_seed + wid, loader.worker_init_fn, wid, n,
                          loader._iterable, os.getpid()))
                w.start()
                self._index_queues.append(iq)
                self._workers.append(w)
        except BaseException:
            self.close()
            raise
        self._epoch = -1
        self._dataset, self._num_workers = loader.dataset, n
        self.reset(loader._reported_len)

    def reset(self, reported_len: int | None = None) -> None:
        """Start a new pass (persistent workers keep their processes); ``reported_len`` is
        the iterable dataset's length if ``len(loader)`` was asked for."""
        self._epoch += 1
        self._reported, self._yielded = (reported_len if self._iterable else None), 0
        if self._epoch > 0 and self._iterable:
            for iq in self._index_queues:
                iq.put(("reset",))
        self._indices = None if self._iterable else iter(self._index_sampler)
        self._active = [True] * len(self._workers)
        self._next_worker = itertools.cycle(range(len(self._workers)))
        self._send_idx = self._rcvd_idx = 0
        self._outstanding: dict[int, int] = {}  # task -> worker
        self._results: dict[int, Any] = {}
        for _ in range(self._prefetch * len(self._workers)):
            self._put_task()

    def _put_task(self) -> bool:
        if not any(self._active):
            return False
        if self._indices is not None:
            try:
                indices = next(self._indices)
            except StopIteration:
                return False
        else:
            indices = None
        for _ in range(len(self._workers)):
            wid = next(self._next_worker)
            if self._active[wid]:
                break
        self._index_queues[wid].put(("task", self._epoch, self._send_idx, indices))
        self._outstanding[self._send_idx] = wid
        self._send_idx += 1
        return True

    def __iter__(self) -> _MultiProcessIter:
        return self

    def __next__(self) -> Any:
        try:
            while True:
                if self._in_order:
                    ready = self._rcvd_idx in self._results
                    task = self._rcvd_idx
                else:
                    ready = bool(self._results)
                    task = next(iter(self._results)) if ready else -1
                if ready:
                    data = self._results.pop(task)
                    del self._outstanding[task]
                    if task == self._rcvd_idx:
                        self._rcvd_idx += 1
                        while (self._rcvd_idx < self._send_idx
                               and self._rcvd_idx not in self._outstanding):
                            self._rcvd_idx += 1
                    self._put_task()
                    if isinstance(data, IterableExhausted):
                        continue
                    if isinstance(data, ExceptionWrapper):
                        data.reraise()
                    self._yielded += 1
                    if self._reported is not None and self._yielded > self._reported:
                        _warn_iterable_overrun(self._dataset, self._reported, self._yielded,
                                               self._num_workers)
                    return data
                if not self._outstanding:
                    if not self._persistent:
                        self.close()
                    raise StopIteration
                epoch, task, data = self._get()
                if epoch != self._epoch or task not in self._outstanding:
                    continue  # left over from an abandoned pass of persistent workers
                if isinstance(data, IterableExhausted):
                    self._active[data.worker_id] = False
                self._results[task] = data
        except StopIteration:
            raise
        except BaseException:
            self.close()
            raise

    def _get(self) -> Any:
        timeout = self._timeout
        deadline = time.monotonic() + timeout if timeout > 0 else None
        while True:
            wait = _POLL_S if deadline is None else max(0.0, min(_POLL_S,
                                                              deadline - time.monotonic()))
            try:
                return unpack(self._result_queue.get(timeout=wait))
            except queue.Empty:
                pass
            dead = [w for w in self._workers if w.exitcode is not None]
            if dead:
                desc = ", ".join(f"pid {w.pid} exit code {w.exitcode}" for w in dead)
                raise RuntimeError(f"DataLoader worker ({desc}) exited unexpectedly")
            if deadline is not None and time.monotonic() >= deadline:
                raise RuntimeError(f"DataLoader timed out after {timeout} seconds")

    def close(self) -> None:
        """Stop the workers (idempotent)."""
        if self.closed:
            return
        self.closed = True
        for iq in self._index_queues:
            try:
                iq.put(None)
            except Exception:
                pass
        for w in self._workers:
            w.join(timeout=2.0)
            if w.is_alive():
                w.terminate()
                w.join(timeout=1.0)
        # Batches sent but never read hold shared memory until removed; a worker killed
        # while writing one leaves a file behind.
        try:
            while True:
                discard(self._result_queue.get_nowait()[1])
        except Exception:
            pass
        for w in self._workers:
            remove_orphans(w.pid)
        for q in (*self._index_queues, self._result_queue):
            try:
                q.cancel_join_thread()
                q.close()
            except Exception:
                pass

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __len__(self) -> int:
        if self._length is None:
            raise TypeError("this DataLoader's dataset has no len()")
        return self._length


def _safe_len(loader: DataLoader) -> int | None:
    try:
        return loader._length()  # not len(loader): that arms the overrun warning
    except TypeError:
        return None


def _warn_iterable_overrun(dataset: Any, reported: int, yielded: int, num_workers: int) -> None:
    # PyTorch's wording, and its comparison: batches yielded against len(dataset).
    import warnings

    msg = (f"Length of IterableDataset {dataset} was reported to be {reported}(when accessing "
           f"len(dataloader)), but {yielded} samples have been fetched. ")
    if num_workers > 0:
        msg += ("For multiprocessing data-loading, this could be caused by not properly "
                "configuring the IterableDataset replica at each worker (split the stream "
                "with funcgrad_nn.data.get_worker_info()).")
    warnings.warn(msg, UserWarning, stacklevel=3)
