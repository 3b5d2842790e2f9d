"""Samplers with ``torch.utils.data`` semantics: which dataset indices a loader visits, in
which order.

Randomness comes from a ``numpy.random.Generator`` (``generator=``: a Generator or an int
seed); without one a sampler draws a fresh seed from funcgrad_nn's global generator on every
pass, so ``nn.manual_seed`` makes shuffling reproducible as ``torch.manual_seed`` does.

An int seed ``s`` reproduces PyTorch's order exactly: it becomes a Mersenne Twister stream
seeded as ``torch.Generator().manual_seed(s)`` is, and a Generator over ``MT19937`` is drawn
from with PyTorch's algorithms (``torch.randperm``'s shuffle, ``torch.randint``'s modulo,
the DataLoader's 64-bit base seed), so ``random_split``, ``RandomSampler``,
``SubsetRandomSampler``, ``WeightedRandomSampler`` (``torch.multinomial``'s two paths: the
inverse-CDF search with replacement, the exponential race without replacement or for one
sample) and a shuffling ``DataLoader`` given
``generator=s`` visit the indices PyTorch's do for ``generator=torch.Generator().manual_seed(s)``,
epoch after epoch. Other Generators (``np.random.default_rng``) use NumPy's own algorithms.
:class:`DistributedSampler` reproduces PyTorch's indices for every seed and epoch.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any, Generic, TypeVar

import numpy as np

from funcgrad.backend import is_array, to_numpy

__all__ = [
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
    "BatchSampler",
    "DistributedSampler",
    "torch_randperm",
    "torch_generator",
    "Generator",
]

_TORCH_DEFAULT_SEED = 67280421310721  # torch.Generator().initial_seed()


class Generator:
    """``torch.Generator`` for the data utilities: a Mersenne Twister stream seeded as
    PyTorch's CPU generator is, so ``DataLoader(..., shuffle=True, generator=g)``,
    ``random_split(..., generator=g)`` and the random samplers visit the indices PyTorch's
    do with ``torch.Generator().manual_seed(s)``. One Generator shared by several consumers
    is one stream, as in PyTorch (a loader keeps drawing from it epoch after epoch), and
    ``manual_seed`` reseeds it in place, also for a loader already built with it.
    ``get_state``/``set_state`` save and restore it (the state is NumPy's MT19937 state
    dict, not PyTorch's byte tensor). ``generator=s`` (an int seed) is the short form.

    >>> import funcgrad_nn as nn
    >>> g = nn.Generator().manual_seed(42)
    >>> [list(s) for s in nn.data.random_split(range(6), [3, 3], generator=g)]
    [[0, 3, 2], [4, 1, 5]]
    >>> g.initial_seed()
    42
    """

    def __init__(self, device: Any = "cpu") -> None:
        if str(device) not in ("cpu", "cpu:0"):
            raise RuntimeError(f"Generator: the data utilities draw on the host; device="
                               f"{device!r} is not supported here (use the default 'cpu')")
        self.device = "cpu"
        self._initial = _TORCH_DEFAULT_SEED
        self._gen = torch_generator(_TORCH_DEFAULT_SEED)

    def manual_seed(self, seed: int) -> Generator:
        """Reseed in place (PyTorch's: a negative seed wraps to 64 bits); returns self."""
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = int(seed)
        if not -2**63 <= seed < 2**64:
            raise ValueError("Overflow when unpacking long long")
        self._initial = seed % 2**64
        self._gen.bit_generator.state = torch_generator(seed).bit_generator.state
        return self

    def seed(self) -> int:
        """Reseed from the operating system's entropy; returns the new seed."""
        seed = int.from_bytes(os.urandom(8), "little") >> 1  # (PyTorch's are 63-bit)
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        """The seed of the last ``manual_seed``/``seed`` (PyTorch's default otherwise)."""
        return self._initial

    def get_state(self) -> dict[str, Any]:
        """The stream's state, for :meth:`set_state`."""
        return {"initial_seed": self._initial, "mt19937": self._gen.bit_generator.state}

    def set_state(self, new_state: dict[str, Any]) -> Generator:
        """Restore a state :meth:`get_state` returned; returns self."""
        if not (isinstance(new_state, dict) and "mt19937" in new_state):
            raise TypeError("Generator.set_state: expected the dict Generator.get_state "
                            f"returned, got {type(new_state).__name__}")
        self._gen.bit_generator.state = new_state["mt19937"]
        self._initial = int(new_state.get("initial_seed", self._initial))
        return self

    def __repr__(self) -> str:
        return f"Generator(device='cpu', initial_seed={self._initial})"


def as_generator(generator: Any, seed: int | None = None) -> np.random.Generator:
    """A ``numpy.random.Generator`` from a Generator, an int seed (PyTorch's stream for that
    seed, :func:`torch_generator`), or None (``seed``'s stream, or a fresh one seeded from
    funcgrad_nn's global generator)."""
    if generator is None:
        if seed is not None:
            return as_generator(seed)
        from funcgrad_nn.init import default_generator
        return np.random.default_rng(int(default_generator().integers(2**63)))
    if isinstance(generator, np.random.Generator):
        return generator
    if isinstance(generator, Generator):
        return generator._gen  # its stream itself: reseeding the Generator reseeds this
    if isinstance(generator, (int, np.integer)) and not isinstance(generator, bool):
        return torch_generator(int(generator))
    raise TypeError(
        "generator must be a funcgrad_nn.Generator, a numpy.random.Generator or an int seed "
        "(generator=s draws what torch.Generator().manual_seed(s) would), got "
        f"{type(generator).__name__}"
    )


def torch_generator(seed: int) -> np.random.Generator:
    """A Generator over the Mersenne Twister stream ``torch.Generator().manual_seed(seed)``
    draws from (PyTorch seeds its mt19937 with the seed's low 32 bits, as NumPy's legacy
    seeding does); the samplers draw from it with PyTorch's algorithms.

    >>> randperm(torch_generator(0), 10)
    [4, 1, 7, 5, 3, 9, 0, 8, 6, 2]
    """
    bits = np.random.RandomState(int(seed) % 2**64 & 0xFFFFFFFF)._bit_generator
    return np.random.Generator(bits)


def _torch_stream(gen: np.random.Generator) -> Any:
    # The raw 32-bit stream when ``gen`` is an MT19937 Generator (drawn as PyTorch draws).
    bits = gen.bit_generator
    return bits if isinstance(bits, np.random.MT19937) else None


def randperm(gen: np.random.Generator, n: int) -> list[int]:
    """A random permutation of ``range(n)``: ``torch.randperm``'s Fisher-Yates shuffle on an
    MT19937 stream (below PyTorch's 2**32/20 threshold), else ``gen.permutation``."""
    bits = _torch_stream(gen)
    if bits is None or n >= 2**32 // 20:
        return gen.permutation(n).tolist()
    perm = list(range(n))
    for i, r in enumerate(bits.random_raw(max(n - 1, 0)).tolist()):
        z = i + (r & 0xFFFFFFFF) % (n - i)
        perm[i], perm[z] = perm[z], perm[i]
    return perm


def randint(gen: np.random.Generator, n: int, size: int) -> list[int]:
    """``size`` draws from ``range(n)``: ``torch.randint(n, (size,))`` on an MT19937 stream
    (one 32-bit draw modulo ``n`` each), else ``gen.integers``."""
    bits = _torch_stream(gen)
    if bits is None or n >= 2**32:
        return gen.integers(0, n, size=size).tolist()
    return ((bits.random_raw(size) & 0xFFFFFFFF) % n).tolist()


def _uniform53(bits: np.random.MT19937, n: int) -> np.ndarray:
    # PyTorch's uniform doubles on the CPU: 53 bits of a 64-bit draw (high word first).
    hi, lo = (bits.random_raw(2 * n) & 0xFFFFFFFF).reshape(-1, 2).T
    return (((hi << 32) | lo) & (2**53 - 1)).astype(np.float64) * 2.0**-53


def random_seed(gen: np.random.Generator) -> int:
    """A seed in ``[0, 2**63)``: ``torch.empty((), dtype=torch.int64).random_()`` on an MT19937
    stream (two 32-bit draws, the first the high word), else ``gen.integers``."""
    bits = _torch_stream(gen)
    if bits is None:
        return int(gen.integers(2**63))
    hi, lo = (int(r) & 0xFFFFFFFF for r in bits.random_raw(2))
    return ((hi << 32) | lo) % 2**63


def _check_generator(generator: Any) -> Any:
    if generator is None or isinstance(generator, np.random.Generator):
        return generator
    return as_generator(generator)


class WeightsError(ValueError, RuntimeError):
    """Weights no distribution can be drawn from (PyTorch's ``torch.multinomial`` raises
    RuntimeError there)."""


T_co = TypeVar("T_co", covariant=True)


class Sampler(Generic[T_co]):
    """Base class: ``__iter__`` yields dataset indices (``__len__`` when known); generic in
    the index type, as PyTorch's (``Sampler[int]``, ``Sampler[list[int]]``)."""

    def __init__(self, data_source: Sized | None = None) -> None:
        pass

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``.

    >>> list(SequentialSampler("abc"))
    [0, 1, 2]
    """

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """Random order: a permutation (``num_samples`` larger than the dataset chains several
    permutations), or ``num_samples`` draws with ``replacement``.

    >>> sorted(RandomSampler(range(5), generator=0))
    [0, 1, 2, 3, 4]
    >>> len(list(RandomSampler(range(3), replacement=True, num_samples=7, generator=0)))
    7
    """

    def __init__(self, data_source: Sized, replacement: bool = False,
                 num_samples: int | None = None, generator: Any = None) -> None:
        if not isinstance(replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={replacement}")
        self.data_source, self.replacement = data_source, replacement
        self._num_samples = num_samples
        self.generator = _check_generator(generator)
        if not isinstance(self.num_samples, int) or isinstance(self.num_samples, bool) \
                or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        """Samples per pass (default: the dataset's length)."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        gen = self.generator if self.generator is not None else as_generator(None)
        if self.replacement:  # in chunks of 32, as PyTorch draws them
            for _ in range(self.num_samples // 32):
                yield from randint(gen, n, 32)
            yield from randint(gen, n, self.num_samples % 32)
            return
        for _ in range(self.num_samples // n):
            yield from randperm(gen, n)
        # Drawn even when num_samples % n == 0, as PyTorch does: a completed pass advances
        # the generator by one more permutation, so the next pass matches PyTorch's.
        yield from randperm(gen, n)[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in random order.

    >>> sorted(SubsetRandomSampler([4, 8, 9], generator=0))
    [4, 8, 9]
    """

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices = indices
        self.generator = _check_generator(generator)

    def __iter__(self) -> Iterator[int]:
        gen = self.generator if self.generator is not None else as_generator(None)
        for i in randperm(gen, len(self.indices)):
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``
    (``torch.multinomial``): with replacement by default, else each index at most once.

    >>> s = WeightedRandomSampler([0.0, 1.0, 0.0], 4, generator=0)
    >>> list(s)
    [1, 1, 1, 1]
    """

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Any = None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        # Sampling is host work (as the indices it yields): weights on a device come over once.
        w = np.asarray(to_numpy(weights) if is_array(weights) else weights, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise WeightsError("weights must be finite and non-negative")
        if w.sum() <= 0:
            raise WeightsError("weights must not all be zero")
        if not replacement and num_samples > len(w):
            raise WeightsError(f"cannot sample n_sample > prob_dist.size(-1) samples without "
                               f"replacement ({num_samples} indices from {len(w)} weights)")
        self.weights, self.num_samples, self.replacement = w, num_samples, replacement
        self.generator = _check_generator(generator)

    def __iter__(self) -> Iterator[int]:
        gen = self.generator if self.generator is not None else as_generator(None)
        bits = _torch_stream(gen)
        if bits is not None and self.replacement and self.num_samples > 1:
            # torch.multinomial's sampling with replacement: one 53-bit uniform double per
            # draw, searched in the normalised cumulative weights.
            cum = np.cumsum(self.weights)
            cum /= cum[-1]
            cum[-1] = 1.0
            yield from np.searchsorted(cum, _uniform53(bits, self.num_samples),
                                       side="left").tolist()
            return
        if bits is not None:
            # torch.multinomial's other path (without replacement, or one sample): the
            # exponential race, argmax / top-k of weights / Exp(1), one Exp(1) per weight
            # as exponential_ draws it on the CPU, -log1p(-u).
            race = self.weights / -np.log1p(-_uniform53(bits, len(self.weights)))
            if self.num_samples == 1:
                yield int(np.argmax(race))
                return
            # (zero weights tie at 0 after every other: in index order here; PyTorch's
            # top-k orders such ties its own way)
            yield from np.argsort(-race, kind="stable")[:self.num_samples].tolist()
            return
        p = self.weights / self.weights.sum()
        nz = int(np.count_nonzero(p))
        if self.replacement or self.num_samples <= nz:
            yield from gen.choice(len(p), size=self.num_samples, replace=self.replacement,
                                  p=p).tolist()
            return
        # more indices than non-zero weights, without replacement: PyTorch's race gives every
        # non-zero one first, then zero-weight ones (its top-k's tie order; here at random)
        yield from gen.choice(len(p), size=nz, replace=False, p=p).tolist()
        yield from gen.permutation(np.flatnonzero(p == 0))[:self.num_samples - nz].tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Group the indices of ``sampler`` into lists of ``batch_size``.

    >>> list(BatchSampler(SequentialSampler(range(5)), 2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    >>> list(BatchSampler(range(5), 2, drop_last=True))
    [[0, 1], [2, 3]]
    """

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


def torch_randperm(n: int, seed: int) -> list[int]:
    """``torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()`` without
    torch: its Fisher-Yates shuffle over the Mersenne Twister stream of that seed.

    >>> torch_randperm(10, 0)
    [4, 1, 7, 5, 3, 9, 0, 8, 6, 2]
    """
    if n >= 2**32 // 20:
        raise ValueError("torch_randperm: n >= 2**32/20 uses a different torch algorithm")
    return randperm(torch_generator(seed), n)


class DistributedSampler(Sampler):
    """The share of the dataset for process ``rank`` of ``num_replicas`` (PyTorch's indices:
    the same seed and epoch give the same shards as ``torch.utils.data.DistributedSampler``).
    Call :meth:`set_epoch` at the start of every epoch for a new shuffle. ``num_replicas``/
    ``rank`` default to the ``funcgrad_nn.distributed`` group's world size and rank when it is
    initialised, else to the ``WORLD_SIZE``/``RANK`` environment variables.

    >>> ds = range(10)
    >>> [list(DistributedSampler(ds, num_replicas=3, rank=r, shuffle=False)) for r in range(3)]
    [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    """

    def __init__(self, dataset: Sized, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None:
            num_replicas = _from_group("get_world_size", "WORLD_SIZE", "num_replicas")
        if rank is None:
            rank = _from_group("get_rank", "RANK", "rank")
        if num_replicas < 1:
            raise ValueError(f"num_replicas must be positive, got {num_replicas}")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.shuffle, self.seed, self.drop_last = 0, shuffle, seed, drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        indices = torch_randperm(n, self.seed + self.epoch) if self.shuffle else list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use ``seed + epoch`` for the next shuffle (the same on every replica)."""
        self.epoch = epoch


class NoProcessGroupError(RuntimeError, ValueError):
    """No ``num_replicas``/``rank`` given and no process group to ask (PyTorch: ValueError)."""


def _from_group(getter: str, var: str, name: str) -> int:
    # As PyTorch asks torch.distributed: the funcgrad_nn.distributed group when initialised,
    # else the launcher's environment variable.
    from funcgrad_nn import distributed

    if distributed.is_initialized():
        return int(getattr(distributed, getter)())
    value = os.environ.get(var)
    if value is None:
        raise NoProcessGroupError(f"DistributedSampler: pass {name}= (or call "
                           f"funcgrad_nn.distributed.init(), or set {var} as launchers do)")
    return int(value)
