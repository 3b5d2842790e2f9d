"""funcgrad_nn.data: datasets, collation, deterministic shuffling."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

from funcgrad_nn.data import (
    ConcatDataset,
    DataLoader,
    Dataset,
    Subset,
    TensorDataset,
    default_collate,
    random_split,
)
from tests.helpers import DEVICE, assert_allclose, dev, host


def _ds(n=10):
    return TensorDataset(dev(np.arange(2.0 * n).reshape(n, 2)), dev(np.arange(n)))


def test_tensor_dataset_and_errors():
    ds = _ds()
    x, y = ds[3]
    assert_allclose(host(x), np.array([6.0, 7.0]))
    assert len(ds) == 10
    with pytest.raises(ValueError, match="Size mismatch between tensors"):
        TensorDataset(np.zeros(3), np.zeros(4))


def test_loader_sequential_batches_keep_device():
    batches = list(DataLoader(_ds(), batch_size=4))
    assert [b[0].shape for b in batches] == [(4, 2), (4, 2), (2, 2)]
    assert isinstance(batches[0], list)  # PyTorch's default_collate turns tuples into lists
    if DEVICE != "cpu":
        assert type(batches[0][0]) is not np.ndarray
    assert_allclose(host(batches[2][1]), np.array([8, 9]))
    assert len(DataLoader(_ds(), batch_size=4, drop_last=True)) == 2
    assert len(list(DataLoader(_ds(), batch_size=4, drop_last=True))) == 2


def test_shuffle_is_deterministic_and_a_permutation():
    a = [host(y) for _, y in DataLoader(_ds(), batch_size=3, shuffle=True, seed=7)]
    b = [host(y) for _, y in DataLoader(_ds(), batch_size=3, shuffle=True,
                                        generator=np.random.default_rng(7))]
    assert_allclose(a, b)
    assert sorted(np.concatenate(a).tolist()) == list(range(10))
    loader = DataLoader(_ds(), batch_size=10, shuffle=True, seed=1)
    e1, e2 = (host(next(iter(loader))[1]) for _ in range(2))
    assert not np.array_equal(e1, e2)  # each epoch draws a new permutation
    # The slow path (generic dataset) and the TensorDataset fast path agree.
    slow = DataLoader(list(zip(*_ds().tensors)), batch_size=3, shuffle=True, seed=7)
    assert_allclose([host(y) for _, y in slow], a)


def test_collate_pytrees():
    P = namedtuple("P", "x y")
    batch = default_collate([P(np.zeros(2), 1.0), P(np.ones(2), 2.0)])
    assert isinstance(batch, P) and batch.x.shape == (2, 2) and batch.y.dtype == np.float64
    d = default_collate([{"a": (1, "s")}, {"a": (2, "t")}])
    assert d["a"][0].dtype == np.int64 and d["a"][1] == ["s", "t"]
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [1]])
    with pytest.raises(TypeError, match="found object"):
        default_collate([object(), object()])
    loader = DataLoader(_ds(), batch_size=2, collate_fn=lambda s: len(s))
    assert list(loader) == [2] * 5


def test_subset_concat_random_split():
    base = list(range(10))
    s = Subset(base, [3, 1])
    assert (s[0], len(s)) == (3, 2)
    c = ConcatDataset([base, [100, 101]])
    assert (len(c), c[10], c[-1], c[9]) == (12, 100, 101, 9)
    with pytest.raises(ValueError, match="should not exceed dataset length"):
        c[-13]
    a, b = random_split(base, [6, 4], generator=0)
    a2, _ = random_split(base, [6, 4], generator=np.random.default_rng(0))
    assert list(a) == list(a2) and len(b) == 4
    assert sorted(list(a) + list(b)) == base
    parts = random_split(base, [0.34, 0.33, 0.33], generator=0)
    assert [len(p) for p in parts] == [4, 3, 3]
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(base, [3, 3])
    ds = _ds() + _ds()
    assert isinstance(ds, ConcatDataset) and len(ds) == 20


def test_loader_batch_size_none_and_errors():
    class Sq(Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return i * i

    assert list(DataLoader(Sq(), batch_size=None)) == [0, 1, 4]
    assert_allclose(list(DataLoader(Sq(), batch_size=2)), [np.array([0, 1]), np.array([4])])
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        DataLoader(Sq(), batch_size=0)
    with pytest.raises(ValueError, match="num_workers"):
        DataLoader(Sq(), num_workers=2)
    with pytest.raises(TypeError, match="generator must be"):
        DataLoader(Sq(), shuffle=True, generator="x")
