"""PyTorch-style data loading: ``Dataset``, ``TensorDataset``, ``DataLoader``, ``random_split``.

Batches are collated like ``torch.utils.data.default_collate`` (arrays stacked on a new leading
axis with the array's own module, so CuPy data stays on the GPU; dicts, tuples and lists and
other pytrees collated leaf by leaf). Shuffling draws from a ``numpy.random.Generator`` (pass
``generator=`` or ``seed=``), so a seeded loader yields the same batches every run.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from funcgrad import tree_util
from funcgrad.backend import device_of, device_put, is_array, xp_for

__all__ = [
    "Dataset",
    "TensorDataset",
    "Subset",
    "ConcatDataset",
    "random_split",
    "default_collate",
    "DataLoader",
]


class Dataset:
    """Map-style dataset: subclasses define ``__getitem__`` and ``__len__``."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class TensorDataset(Dataset):
    """Samples are tuples ``(a[i], b[i], ...)`` of arrays sharing their first dimension.

    >>> import numpy as np
    >>> ds = TensorDataset(np.arange(6).reshape(3, 2), np.arange(3))
    >>> len(ds), ds[1]
    (3, (array([2, 3]), np.int64(1)))
    """

    def __init__(self, *tensors: Any) -> None:
        if not tensors:
            raise ValueError("TensorDataset needs at least one array")
        n = tensors[0].shape[0]
        if any(t.shape[0] != n for t in tensors):
            raise ValueError(
                "Size mismatch between tensors: first dimensions "
                f"{[t.shape[0] for t in tensors]}"
            )
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[Any, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``.

    >>> Subset([10, 20, 30], [2, 0])[0]
    30
    """

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """Datasets one after another.

    >>> ds = ConcatDataset([[1, 2], [3]])
    >>> len(ds), ds[2], ds[-1]
    (3, 3, 3)
    """

    def __init__(self, datasets: Iterable[Any]) -> None:
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise ValueError("datasets should not be an empty iterable")
        self.cumulative_sizes: list[int] = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> Any:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        if idx >= len(self):
            raise IndexError(f"index {idx} out of range for ConcatDataset of length {len(self)}")
        d = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if d == 0 else idx - self.cumulative_sizes[d - 1]
        return self.datasets[d][sample_idx]


def _as_generator(generator: Any, seed: int | None = None) -> np.random.Generator:
    if generator is None:
        return np.random.default_rng(seed)
    if isinstance(generator, np.random.Generator):
        return generator
    if isinstance(generator, int | np.integer):
        return np.random.default_rng(int(generator))
    raise TypeError(
        f"generator must be a numpy.random.Generator or an int seed, got {type(generator).__name__}"
    )


def random_split(
    dataset: Any, lengths: Sequence[int | float], generator: Any = None
) -> list[Subset]:
    """Split ``dataset`` into random non-overlapping :class:`Subset` s of the given lengths
    (or fractions summing to 1, PyTorch's rounding).

    >>> a, b = random_split(list(range(10)), [0.7, 0.3], generator=0)
    >>> len(a), len(b), sorted(list(a) + list(b)) == list(range(10))
    (7, 3, True)
    """
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            counts.append(int(math.floor(n * frac)))
        remainder = n - sum(counts)
        for i in range(remainder):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = _as_generator(generator).permutation(n).tolist()
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[offset:offset + int(length)]))
        offset += int(length)
    return out


def default_collate(batch: Sequence[Any]) -> Any:
    """Stack a list of samples into a batch, PyTorch's ``default_collate`` rules.

    Arrays are stacked; Python floats/ints/bools become float64/int64/bool arrays; strings
    stay a list; dicts, namedtuples, tuples/lists (tuples give lists, as in PyTorch) and other
    registered pytrees are collated field by field.

    >>> import numpy as np
    >>> default_collate([{"x": np.zeros(2), "y": 1}, {"x": np.ones(2), "y": 0}])["y"]
    array([1, 0])
    """
    elem = batch[0]
    if is_array(elem):
        xp = xp_for(*batch, what="default_collate")
        return xp.stack(batch)
    if isinstance(elem, np.generic):
        return np.stack(batch)
    if isinstance(elem, bool):
        return np.asarray(batch, dtype=np.bool_)
    if isinstance(elem, int):
        return np.asarray(batch, dtype=np.int64)
    if isinstance(elem, float):
        return np.asarray(batch, dtype=np.float64)
    if isinstance(elem, str | bytes):
        return list(batch)
    if isinstance(elem, Mapping):
        out = {k: default_collate([d[k] for d in batch]) for k in elem}
        try:
            return out if type(elem) is dict else type(elem)(out)
        except TypeError:
            return out
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, Sequence):
        size = len(elem)
        if any(len(s) != size for s in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(s)) for s in zip(*batch)]
    leaves, treedef = tree_util.tree_flatten(elem)
    if treedef.num_leaves == 1 and leaves and leaves[0] is elem:
        raise TypeError(
            "default_collate: batch must contain arrays, numbers, strings, dicts, lists or "
            f"pytrees; found {type(elem).__name__}"
        )
    columns = [tree_util.tree_leaves(s) for s in batch]
    return tree_util.tree_unflatten(treedef, [default_collate(list(c)) for c in zip(*columns)])


class DataLoader:
    """Iterate over a dataset in (optionally shuffled) batches.

    ``generator`` (a ``numpy.random.Generator`` or an int seed) or ``seed`` makes shuffling
    deterministic; each pass over the loader draws a fresh permutation from it. Only
    ``num_workers=0`` is supported (loading happens in the calling process).

    >>> import numpy as np
    >>> ds = TensorDataset(np.arange(10.0), np.arange(10))
    >>> loader = DataLoader(ds, batch_size=4, shuffle=True, seed=0)
    >>> [x.shape for x, y in loader]
    [(4,), (4,), (2,)]
    >>> len(DataLoader(ds, batch_size=4, drop_last=True))
    2
    """

    def __init__(
        self, dataset: Any, batch_size: int | None = 1, shuffle: bool = False,
        sampler: Iterable[int] | None = None, batch_sampler: Iterable[Sequence[int]] | None = None,
        num_workers: int = 0, collate_fn: Callable[[list[Any]], Any] | None = None,
        pin_memory: bool = False, drop_last: bool = False, generator: Any = None, *,
        seed: int | None = None,
    ) -> None:
        if num_workers != 0:
            raise ValueError("DataLoader: num_workers > 0 is not supported (use num_workers=0)")
        if batch_size is not None and (not isinstance(batch_size, int) or batch_size <= 0):
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None and (
                batch_size != 1 or shuffle or sampler is not None or drop_last):
            raise ValueError(
                "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                "and drop_last")
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.drop_last = drop_last
        self.collate_fn = collate_fn
        self.generator = _as_generator(generator, seed) if shuffle else generator

    def _indices(self) -> Any:
        if self.sampler is not None:
            return list(self.sampler)
        n = len(self.dataset)
        if self.shuffle:
            return self.generator.permutation(n)
        return np.arange(n)

    def _batches(self) -> Iterator[Any]:
        if self.batch_sampler is not None:
            yield from self.batch_sampler
            return
        idx = self._indices()
        n, bs = len(idx), self.batch_size
        stop = n - n % bs if self.drop_last else n
        for start in range(0, stop, bs):
            yield idx[start:start + bs]

    def __iter__(self) -> Iterator[Any]:
        ds = self.dataset
        if self.batch_size is None and self.batch_sampler is None:
            for i in self._indices():
                sample = ds[int(i)]
                yield sample if self.collate_fn is None else self.collate_fn(sample)
            return
        # Fast path: whole-batch fancy indexing of a TensorDataset instead of per-sample stacking.
        fast = type(ds) is TensorDataset and self.collate_fn is None
        for b in self._batches():
            if fast:
                yield [_take(t, b) for t in ds.tensors]
            else:
                samples = [ds[int(i)] for i in b]
                yield (self.collate_fn or default_collate)(samples)

    def __len__(self) -> int:
        if self.batch_sampler is not None:
            return len(self.batch_sampler)  # type: ignore[arg-type]
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)  # type: ignore[arg-type]
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


def _take(t: Any, idx: Any) -> Any:
    idx = np.asarray(idx, dtype=np.intp)
    d = device_of(t)
    if d not in (None, "cpu"):
        idx = device_put(idx, d)  # device arrays need a device index array
    return t[idx]
