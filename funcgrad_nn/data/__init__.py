"""funcgrad_nn.data: PyTorch-style data loading (``torch.utils.data`` names and semantics).

Datasets (map-style ``Dataset``, ``TensorDataset``, ``StackDataset``, ``ConcatDataset``,
``Subset``, ``random_split``; iterable-style ``IterableDataset``, ``ChainDataset``), samplers
(``SequentialSampler``, ``RandomSampler``, ``SubsetRandomSampler``, ``WeightedRandomSampler``,
``BatchSampler``, ``DistributedSampler``), ``default_collate`` and ``DataLoader`` with real
worker processes (``get_worker_info`` inside them). Shuffling draws from a
``numpy.random.Generator`` (``generator=`` or ``seed=``), so a seeded loader yields the same
batches every run, with any number of workers.

>>> import numpy as np
>>> from funcgrad_nn.data import DataLoader, TensorDataset
>>> loader = DataLoader(TensorDataset(np.arange(6.0), np.arange(6)), batch_size=4)
>>> [y.tolist() for _, y in loader]
[[0, 1, 2, 3], [4, 5]]
"""

from funcgrad_nn.data._worker import WorkerInfo, get_worker_info
from funcgrad_nn.data.collate import default_collate, default_convert
from funcgrad_nn.data.datasets import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from funcgrad_nn.data.loader import DataLoader
from funcgrad_nn.data.samplers import (
    BatchSampler,
    DistributedSampler,
    Generator,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "Dataset", "IterableDataset", "TensorDataset", "StackDataset", "Subset", "ConcatDataset",
    "ChainDataset", "random_split", "Sampler", "SequentialSampler", "RandomSampler",
    "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler", "DistributedSampler",
    "default_collate", "default_convert", "DataLoader", "get_worker_info", "WorkerInfo",
    "Generator",
]
