"""Datasets with ``torch.utils.data`` semantics: map-style (``Dataset``, ``TensorDataset``,
``StackDataset``, ``ConcatDataset``, ``Subset``, ``random_split``) and iterable-style
(``IterableDataset``, ``ChainDataset``)."""

from __future__ import annotations

import bisect
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from funcgrad_nn.data.samplers import as_generator, randperm

__all__ = [
    "Dataset",
    "IterableDataset",
    "TensorDataset",
    "StackDataset",
    "Subset",
    "ConcatDataset",
    "ChainDataset",
    "random_split",
]


class SizeMismatchError(ValueError, AssertionError):
    """Datasets that cannot be combined (PyTorch asserts, so AssertionError there)."""


class DatasetKindError(TypeError, AssertionError):
    """A map-style dataset where an iterable one is needed, or the reverse (PyTorch asserts,
    so AssertionError there)."""


T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """Map-style dataset: subclasses define ``__getitem__`` and ``__len__``. Generic in its
    sample type, as PyTorch's (``class Pairs(Dataset[tuple[np.ndarray, int]])``).

    >>> class Squares(Dataset[int]):
    ...     def __len__(self):
    ...         return 3
    ...     def __getitem__(self, i):
    ...         return i * i
    >>> list(Squares() + Squares())
    [0, 1, 4, 0, 1, 4]
    """

    def __getitem__(self, index: int) -> T_co:
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__")

    def __add__(self, other: Dataset[T_co]) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """Iterable-style dataset: subclasses define ``__iter__``. Under a multi-worker
    ``DataLoader`` every worker iterates its own copy; split the work with
    :func:`funcgrad_nn.data.get_worker_info` (otherwise each worker yields everything).

    >>> class Count(IterableDataset):
    ...     def __iter__(self):
    ...         return iter(range(3))
    >>> list(Count() + Count())
    [0, 1, 2, 0, 1, 2]
    """

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")

    def __getitem__(self, index: Any) -> Any:
        raise TypeError(f"{type(self).__name__} is an IterableDataset: iterate over it, it "
                        "has no __getitem__")

    def __add__(self, other: Any) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


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
            raise SizeMismatchError(
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

    def __getitems__(self, indices: list[int]) -> list[Any]:
        """The samples at ``indices`` in one call (the dataset's own ``__getitems__`` when it
        has one), as the DataLoader fetches a batch."""
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return getitems([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

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
            raise SizeMismatchError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise DatasetKindError("ConcatDataset does not support IterableDataset (use "
                                       "ChainDataset)")
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


class ChainDataset(IterableDataset):
    """Iterable datasets one after another (``len`` sums their lengths).

    >>> class Letters(IterableDataset):
    ...     def __iter__(self):
    ...         return iter("ab")
    >>> list(ChainDataset([Letters(), Letters()]))
    ['a', 'b', 'a', 'b']
    """

    def __init__(self, datasets: Iterable[Any]) -> None:
        self.datasets = list(datasets)

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise DatasetKindError("ChainDataset only supports IterableDataset, got "
                                       f"{type(d).__name__}")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise DatasetKindError("ChainDataset only supports IterableDataset, got "
                                       f"{type(d).__name__}")
            total += len(d)  # type: ignore[arg-type]
        return total


class StackDataset(Dataset):
    """Samples of several equally long datasets side by side: ``StackDataset(a, b)[i] ==
    (a[i], b[i])``, ``StackDataset(x=a, y=b)[i] == {"x": a[i], "y": b[i]}``.

    >>> StackDataset([1, 2], ["a", "b"])[1], StackDataset(x=[1, 2], y=[3, 4])[0]
    ((2, 'b'), {'x': 1, 'y': 3})
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                             "``kwargs``) like input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = list(args) if args else list(kwargs.values())
        self._length = len(parts[0])
        if any(len(d) != self._length for d in parts):
            raise ValueError("Size mismatch between datasets: lengths "
                             f"{[len(d) for d in parts]}")
        self.datasets: Any = tuple(args) if args else dict(kwargs)

    def __getitem__(self, index: int) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list[int]) -> list[Any]:
        """The samples at ``indices``, each part fetched with its dataset's
        ``__getitems__`` when it has one (as PyTorch).

        >>> StackDataset(x=[1, 2, 3], y="abc").__getitems__([2, 0])
        [{'x': 3, 'y': 'c'}, {'x': 1, 'y': 'a'}]
        """
        named = isinstance(self.datasets, dict)
        parts = self.datasets.items() if named else enumerate(self.datasets)
        columns = {}
        for key, d in parts:
            getitems = getattr(d, "__getitems__", None)
            if callable(getitems):
                items = getitems(indices)
                if len(items) != len(indices):
                    raise ValueError("Nested dataset's output size mismatch. Expected "
                                     f"{len(indices)}, got {len(items)}")
            else:
                items = [d[i] for i in indices]
            columns[key] = items
        if named:
            return [{k: col[j] for k, col in columns.items()} for j in range(len(indices))]
        return [tuple(col[j] for col in columns.values()) for j in range(len(indices))]

    def __len__(self) -> int:
        return self._length


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
        for i, count in enumerate(counts):
            if count == 0:  # as PyTorch (only for fractions: a 0 length asked for is meant)
                warnings.warn(f"Length of split at index {i} is 0. This might result in an "
                              "empty dataset.", UserWarning, stacklevel=2)
        lengths = counts
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = randperm(as_generator(generator), n)
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[offset:offset + int(length)]))
        offset += int(length)
    return out
