"""funcgrad_nn.data: datasets, collation, deterministic shuffling."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import time
from collections import namedtuple

import numpy as np
import pytest

import funcgrad_nn as nn
from funcgrad.backend import cuda_available
from funcgrad_nn.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    DistributedSampler,
    IterableDataset,
    RandomSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    get_worker_info,
    random_split,
)
from funcgrad_nn.data.samplers import torch_randperm
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
    b = [host(y) for _, y in DataLoader(_ds(), batch_size=3, shuffle=True, generator=7)]
    assert_allclose(a, b)
    c, d = ([host(y) for _, y in DataLoader(_ds(), batch_size=3, shuffle=True,
                                            generator=np.random.default_rng(7))]
            for _ in range(2))
    assert_allclose(c, d)
    assert sorted(np.concatenate(a).tolist()) == list(range(10))
    loader = DataLoader(_ds(), batch_size=10, shuffle=True, seed=1)
    e1, e2 = (host(next(iter(loader))[1]) for _ in range(2))
    assert not np.array_equal(e1, e2)  # each epoch draws a new permutation
    # The slow path (generic dataset) and the TensorDataset fast path agree.
    slow = DataLoader(list(zip(*_ds().tensors)), batch_size=3, shuffle=True, seed=7)
    assert_allclose([host(y) for _, y in slow], a)


def test_shuffle_without_a_generator_draws_each_pass_from_the_global_generator():
    # PyTorch's RandomSampler draws its seed from the global generator when a pass starts:
    # seeding (or restoring the RNG state) after building the loader decides the order.
    loader = DataLoader(_ds(), batch_size=10, shuffle=True)
    nn.manual_seed(3)
    first = host(next(iter(loader))[1])
    state = nn.get_rng_state()
    second = host(next(iter(loader))[1])
    nn.manual_seed(3)
    assert_allclose(host(next(iter(loader))[1]), first)
    nn.set_rng_state(state)
    assert_allclose(host(next(iter(loader))[1]), second)
    assert loader.generator is None


def test_collate_pytrees():
    P = namedtuple("P", "x y")
    batch = default_collate([P(np.zeros(2), 1.0), P(np.ones(2), 2.0)])
    assert isinstance(batch, P) and batch.x.shape == (2, 2) and batch.y.dtype == np.float64
    d = default_collate([{"a": (1, "s")}, {"a": (2, "t")}])
    assert d["a"][0].dtype == np.int64 and d["a"][1] == ("s", "t")  # a tuple, as PyTorch
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
    a2, _ = random_split(base, [6, 4], generator=0)
    a3, _ = random_split(base, [6, 4], generator=np.random.default_rng(0))
    a4, _ = random_split(base, [6, 4], generator=np.random.default_rng(0))
    assert list(a) == list(a2) and list(a3) == list(a4) and len(b) == 4
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
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader(Sq(), num_workers=-1)
    with pytest.raises(TypeError, match="generator must be"):
        DataLoader(Sq(), shuffle=True, generator="x")


# -- samplers ---------------------------------------------------------------------------------

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


def test_distributed_sampler_matches_pytorch():
    # fixtures/make_torch_samplers.py: torch.utils.data.DistributedSampler's indices
    ref = json.load(open(os.path.join(FIXTURES, "torch_distributed_sampler.json")))
    for case in ref["distributed"]:
        for rank, expected in enumerate(case["indices"]):
            s = DistributedSampler(range(case["n"]), num_replicas=case["num_replicas"],
                                   rank=rank, shuffle=case["shuffle"], seed=case["seed"],
                                   drop_last=case["drop_last"])
            s.set_epoch(case["epoch"])
            assert list(s) == expected and len(s) == len(expected), case
    for p in ref["randperm"]:
        assert torch_randperm(p["n"], p["seed"]) == p["perm"]


class WorkerSeeds(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return get_worker_info().seed


class WorkerDraws(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return [random.random(), float(np.random.randint(2**31)), float(np.random.rand())]


def _passes(iterable, n=3):
    return [[host(b).tolist() if hasattr(b, "tolist") else b for b in iterable]
            for _ in range(n)]


def test_int_seeds_shuffle_as_pytorch_generators():
    # fixtures/make_torch_shuffles.py: what torch visits with torch.Generator().manual_seed(s)
    ref = json.load(open(os.path.join(FIXTURES, "torch_shuffles.json")))
    for case in ref["cases"]:
        kind, seed = case["kind"], case["seed"]
        if kind == "random_split":
            got = [list(s.indices) for s in random_split(range(case["n"]), case["lengths"],
                                                          generator=seed)]
        elif kind == "RandomSampler":
            got = _passes(RandomSampler(range(case["n"]), generator=seed, **case["kwargs"]))
        elif kind == "WeightedRandomSampler":
            got = _passes(WeightedRandomSampler(case["weights"], case["num_samples"],
                                                generator=seed))
        elif kind == "SubsetRandomSampler":
            got = _passes(SubsetRandomSampler(case["indices"], generator=seed))
        elif kind == "DataLoader":
            got = _passes(DataLoader(range(case["n"]), shuffle=True, generator=seed,
                                     **case["kwargs"]))
            assert got == _passes(DataLoader(range(case["n"]), shuffle=True, seed=seed,
                                             **case["kwargs"]))
        elif kind == "worker_draws":
            loader = DataLoader(WorkerDraws(), batch_size=2, num_workers=2, generator=seed)
            got = [[[host(c).tolist() for c in b] for b in loader] for _ in range(2)]
        else:
            got = _passes(DataLoader(WorkerSeeds(), batch_size=2, num_workers=2, generator=seed,
                                     persistent_workers=case["persistent_workers"]), 2)
        assert got == case["expected"], case


def test_distributed_sampler_bad_input(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    with pytest.raises(RuntimeError, match="pass num_replicas="):
        DistributedSampler(range(4))
    from funcgrad.distributed import LocalCommunicator
    nn.distributed.init(comm=LocalCommunicator())
    try:
        assert list(DistributedSampler(range(3), shuffle=False)) == [0, 1, 2]  # world of 1
    finally:
        nn.distributed.destroy_process_group()
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    assert list(DistributedSampler(range(4), shuffle=False)) == [1, 3]
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"):
        DistributedSampler(range(4), num_replicas=2, rank=2)


def test_random_samplers():
    assert sorted(RandomSampler(range(6), generator=1)) == list(range(6))
    twice = list(RandomSampler(range(4), num_samples=10, generator=0))
    assert len(twice) == 10 and sorted(twice[:8]) == [0, 0, 1, 1, 2, 2, 3, 3]
    rep = list(RandomSampler(range(3), replacement=True, num_samples=50, generator=0))
    assert len(rep) == 50 and set(rep) == {0, 1, 2}
    assert list(RandomSampler(range(5), generator=3)) == list(RandomSampler(range(5), generator=3))
    nn.manual_seed(0)
    a = list(RandomSampler(range(20)))
    nn.manual_seed(0)
    assert list(RandomSampler(range(20))) == a  # nn.manual_seed drives unseeded shuffles
    assert sorted(SubsetRandomSampler([5, 7, 9], generator=0)) == [5, 7, 9]
    w = WeightedRandomSampler([0.0, 10.0, 0.0, 1.0], 200, generator=0)
    counts = np.bincount(list(w), minlength=4)
    assert counts[0] == counts[2] == 0 and counts[1] > 5 * counts[3] > 0
    assert sorted(WeightedRandomSampler([1, 1, 1], 3, replacement=False, generator=0)) == [0, 1, 2]
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(TypeError, match="replacement should be a boolean"):
        RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match=r"cannot sample n_sample > prob_dist.size\(-1\)"):
        WeightedRandomSampler([1, 0, 1], 4, replacement=False)
    # torch 2.13 (generator=torch.Generator().manual_seed(0)): the non-zero weights first
    # ([1, 4]), then zero-weight indices (torch orders those ties by its top-k: 0 first here)
    zw = [0, 0.9, 0, 0, 0.5, 0]
    assert list(WeightedRandomSampler(zw, 3, replacement=False, generator=0)) == [1, 4, 0]
    got = list(WeightedRandomSampler(zw, 6, replacement=False, generator=0))
    assert got[:3] == [1, 4, 0] and sorted(got) == list(range(6))
    got = list(WeightedRandomSampler(zw, 5, replacement=False,
                                     generator=np.random.default_rng(0)))
    assert set(got[:2]) == {1, 4} and len(set(got)) == 5
    with pytest.raises(ValueError, match="non-negative"):
        WeightedRandomSampler([1, -1], 1)
    with pytest.raises(ValueError, match="1d sequence"):
        WeightedRandomSampler([[1, 1]], 1)


def test_batch_sampler_and_custom_samplers_in_the_loader():
    assert list(BatchSampler(range(7), 3, drop_last=False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(BatchSampler(range(7), 3, drop_last=True)) == 2
    with pytest.raises(ValueError, match="batch_size should be a positive integer value, but got batch_size=0"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean"):
        BatchSampler(range(3), 1, drop_last=None)
    ds = list(range(10, 20))
    loader = DataLoader(ds, batch_sampler=BatchSampler([9, 0, 3], 2, drop_last=False))
    assert [b.tolist() for b in loader] == [[19, 10], [13]]
    loader = DataLoader(ds, sampler=[1, 2, 3], batch_size=2)
    assert [b.tolist() for b in loader] == [[11, 12], [13]] and len(loader) == 2


# -- datasets and collation ------------------------------------------------------------------

@dataclasses.dataclass
class Pair:
    image: np.ndarray
    label: int


def test_default_collate_nested_structures():
    P = namedtuple("P", "x y")
    batch = default_collate([{"a": [Pair(np.zeros(2), 1), (1.5, "s")], "b": P(1, True)},
                             {"a": [Pair(np.ones(2), 2), (2.5, "t")], "b": P(2, False)}])
    pair = batch["a"][0]
    assert isinstance(pair, Pair) and pair.image.shape == (2, 2) and pair.label.tolist() == [1, 2]
    assert batch["a"][1][0].dtype == np.float64 and batch["a"][1][1] == ("s", "t")
    assert isinstance(batch["b"], P) and batch["b"].y.dtype == np.bool_
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([np.zeros(2), np.zeros(3)])
    with pytest.raises(ValueError, match="empty"):
        default_collate([])


class Squares(Dataset):
    def __init__(self, n=20, fail_at=None, sleep=0.0, exit_at=None):
        self.n, self.fail_at, self.sleep, self.exit_at = n, fail_at, sleep, exit_at

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.fail_at:
            raise ValueError(f"bad sample {i}")
        if i == self.exit_at:
            os._exit(3)
        if self.sleep:
            time.sleep(self.sleep)
        info = get_worker_info()
        return {"i": i, "sq": np.float64(i * i), "pid": os.getpid(),
                "worker": -1 if info is None else info.id,
                "rand": np.random.randint(1 << 30), "init": _INIT_MARK.get("id", -1)}


_INIT_MARK: dict = {}


def _mark_init(worker_id):
    _INIT_MARK["id"] = worker_id * 100


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))

    def __len__(self):
        return self.n


def test_stack_chain_and_iterable_datasets():
    s = StackDataset(np.arange(3), ["a", "b", "c"])
    assert s[2] == (2, "c") and len(s) == 3
    assert StackDataset(x=[1, 2], y=[3, 4])[1] == {"x": 2, "y": 4}
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset([1], [1, 2])
    with pytest.raises(ValueError, match="both types are given"):
        StackDataset([1], y=[1])
    c = ChainDataset([Stream(3), Stream(2)])
    assert list(c) == [0, 1, 2, 0, 1] and len(c) == 5
    with pytest.raises(TypeError, match="ConcatDataset does not support IterableDataset"):
        ConcatDataset([Stream(2)])
    assert [b.tolist() for b in DataLoader(Stream(5), batch_size=2)] == [[0, 1], [2, 3], [4]]
    assert [b.tolist() for b in DataLoader(Stream(5), batch_size=2, drop_last=True)] == [
        [0, 1], [2, 3]]
    assert list(DataLoader(Stream(3), batch_size=None)) == [0, 1, 2]
    assert len(DataLoader(Stream(5), batch_size=2)) == 3
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(Stream(3), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option"):
        DataLoader(Stream(3), sampler=[0])


def test_loader_bad_input():
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        DataLoader(list(range(4)), sampler=[0, 1], shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        DataLoader(list(range(4)), batch_sampler=[[0]], batch_size=2)
    with pytest.raises(ValueError, match="mutually exclusive with drop_last"):
        DataLoader(list(range(4)), batch_size=None, drop_last=True)
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified"):
        DataLoader(list(range(4)), prefetch_factor=2)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        DataLoader(list(range(4)), persistent_workers=True)
    with pytest.raises(ValueError, match="timeout option should be non-negative"):
        DataLoader(list(range(4)), timeout=-1)


# -- worker processes -------------------------------------------------------------------------

def _ids(loader):
    return [b["i"].tolist() for b in loader]


@pytest.mark.filterwarnings("ignore:This DataLoader will create")  # small CI machines
def test_workers_give_the_same_batches_as_the_main_process():
    ds = Squares(23)
    ref = _ids(DataLoader(ds, batch_size=4, shuffle=True, seed=5))
    for workers in (1, 3):
        loader = DataLoader(ds, batch_size=4, shuffle=True, seed=5, num_workers=workers)
        batches = list(loader)
        assert [b["i"].tolist() for b in batches] == ref
        pids = {p for b in batches for p in b["pid"].tolist()}
        assert os.getpid() not in pids and len(pids) == workers  # real processes
        assert {w for b in batches for w in b["worker"].tolist()} == set(range(workers))
    fast = TensorDataset(np.arange(30.0).reshape(15, 2), np.arange(15))
    ref = [y.tolist() for _, y in DataLoader(fast, batch_size=4, shuffle=True, seed=1)]
    got = [y.tolist() for _, y in DataLoader(fast, batch_size=4, shuffle=True, seed=1,
                                              num_workers=2)]
    assert got == ref
    unordered = DataLoader(ds, batch_size=4, num_workers=2, in_order=False)
    assert sorted(i for b in _ids(unordered) for i in b) == list(range(23))


def test_worker_seeding_is_deterministic_and_worker_init_fn_runs():
    def run():
        loader = DataLoader(Squares(12), batch_size=3, num_workers=2, seed=11,
                            worker_init_fn=_mark_init)
        return list(loader)

    a, b = run(), run()
    assert [x["rand"].tolist() for x in a] == [x["rand"].tolist() for x in b]
    by_worker = {w: r for x in a for w, r in zip(x["worker"].tolist(), x["rand"].tolist())}
    assert by_worker[0] != by_worker[1]  # base_seed + worker_id: different streams
    assert {i for x in a for i in x["init"].tolist()} == {0, 100}
    loader = DataLoader(Squares(12), batch_size=3, num_workers=2, seed=11)
    e1, e2 = ([x["rand"].tolist() for x in loader] for _ in range(2))
    assert e1 != e2  # a new base seed every pass


@pytest.mark.filterwarnings("ignore:This DataLoader will create")  # small CI machines
def test_iterable_dataset_split_across_workers():
    batches = [b.tolist() for b in DataLoader(Stream(10), batch_size=2, num_workers=2)]
    # worker 0 yields 0, 2, 4..., worker 1 yields 1, 3, 5...; batches alternate between them
    assert batches == [[0, 2], [1, 3], [4, 6], [5, 7], [8], [9]]
    dropped = [b.tolist() for b in DataLoader(Stream(10), batch_size=2, num_workers=2,
                                              drop_last=True)]
    assert dropped == [[0, 2], [1, 3], [4, 6], [5, 7]]
    assert sorted(DataLoader(Stream(7), batch_size=None, num_workers=3)) == list(range(7))


def test_worker_exception_is_reraised_with_the_worker_traceback():
    loader = DataLoader(Squares(20, fail_at=6), batch_size=4, num_workers=2)
    seen = []
    with pytest.raises(ValueError) as info:
        for b in loader:
            seen.append(b["i"].tolist())
    assert seen == [[0, 1, 2, 3]]  # in order up to the failing batch
    msg = str(info.value)
    assert "Caught ValueError in DataLoader worker process 1" in msg
    assert "Traceback (most recent call last)" in msg and "bad sample 6" in msg
    assert "__getitem__" in msg


def test_dead_worker_and_timeout_are_errors():
    with pytest.raises(RuntimeError, match="exited unexpectedly"):
        list(DataLoader(Squares(8, exit_at=2), batch_size=2, num_workers=1))
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.3 seconds"):
        list(DataLoader(Squares(4, sleep=3.0), batch_size=2, num_workers=1, timeout=0.3))


def test_early_break_shuts_the_workers_down():
    loader = DataLoader(Squares(40), batch_size=2, num_workers=2)
    it = iter(loader)
    next(it)
    workers = list(it._workers)
    assert all(w.is_alive() for w in workers)
    for _ in loader:  # a loop that breaks early: its iterator is dropped, workers stop
        break
    del it
    deadline = time.monotonic() + 10
    while any(w.is_alive() for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(w.is_alive() for w in workers)


def test_persistent_workers_keep_their_processes_across_epochs():
    loader = DataLoader(Squares(10), batch_size=3, shuffle=True, seed=2, num_workers=2,
                        persistent_workers=True)
    for _ in loader:  # an abandoned first pass must not leak into the next one
        break
    # torch.utils.data with generator=torch.Generator().manual_seed(2): prefetching (2 workers
    # x 2 batches, then one more) drew the whole first pass from the sampler; the workers'
    # base seed is drawn once, when they start, so later passes only shuffle (unlike
    # num_workers=0, which draws a base seed every pass).
    e2 = list(loader)
    assert [b["i"].tolist() for b in e2] == [[0, 4, 7], [6, 5, 1], [3, 2, 9], [8]]
    e3 = list(loader)
    assert [b["i"].tolist() for b in e3] == [[3, 9, 6], [8, 0, 7], [1, 4, 2], [5]]
    pids = {p for b in e2 + e3 for p in b["pid"].tolist()}
    assert len(pids) == 2
    it = loader._persistent_iter
    del loader
    assert it.closed


def test_spawn_context_and_worker_count_in_len():
    loader = DataLoader(Squares(6), batch_size=2, num_workers=1, multiprocessing_context="spawn")
    assert _ids(loader) == [[0, 1], [2, 3], [4, 5]] and len(loader) == 3


class _TypedPairs(Dataset[tuple[np.ndarray, int]]):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return np.full(2, float(i)), i


class _TypedCount(IterableDataset[int]):
    def __iter__(self):
        return iter(range(3))


class _Reversed(nn.data.Sampler[int]):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n - 1, -1, -1))

    def __len__(self):
        return self.n


def test_datasets_and_samplers_are_generic_as_pytorchs():
    # class MyDataset(Dataset[tuple[Tensor, int]]) is how typed PyTorch code subclasses them
    loader = DataLoader(_TypedPairs(), batch_size=2, sampler=_Reversed(4), num_workers=2)
    assert [host(y).tolist() for _, y in loader] == [[3, 2], [1, 0]]
    assert [host(b).tolist() for b in DataLoader(_TypedCount(), batch_size=2)] == [[0, 1], [2]]
    assert isinstance(_TypedCount(), Dataset)


def test_persistent_workers_draw_their_base_seed_once():
    # torch.utils.data, generator=torch.Generator().manual_seed(5), 2 persistent workers: the
    # second and later passes shuffle on from where the previous one left the generator.
    loader = DataLoader(list(range(7)), batch_size=2, num_workers=2, persistent_workers=True,
                        shuffle=True, seed=5)
    passes = [[host(b).tolist() for b in loader] for _ in range(3)]
    assert passes == [[[2, 4], [3, 5], [0, 6], [1]], [[3, 1], [5, 0], [6, 4], [2]],
                      [[1, 4], [5, 2], [0, 3], [6]]]


def test_loader_options_are_frozen_after_construction():
    # Changing them would be silently ignored (the samplers are built): PyTorch refuses.
    loader = DataLoader(list(range(7)), batch_size=3)
    for name, value in [("batch_size", 5), ("drop_last", True), ("sampler", [0]),
                        ("batch_sampler", [[0]]), ("dataset", [1]), ("persistent_workers", True)]:
        with pytest.raises(ValueError, match=f"{name} attribute should not be set after "
                                             "DataLoader is initialized"):
            setattr(loader, name, value)
    loader.num_workers = 0  # as PyTorch: the others may change
    assert len(loader) == 3


def test_too_many_workers_warn_as_pytorch(monkeypatch):
    # PyTorch checks when the loader is made and again whenever its workers start.
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    message = ("This DataLoader will create 2 worker processes in total. Our suggested max "
               "number of worker in current system is 1")
    with pytest.warns(UserWarning, match=message) as made:
        loader = DataLoader(list(range(4)), batch_size=2, num_workers=2)
    assert made[0].filename == __file__
    with pytest.warns(UserWarning, match=message) as started:
        assert [host(b).tolist() for b in loader] == [[0, 1], [2, 3]]
    assert started[0].filename == __file__


def test_collate_keeps_mutable_mapping_and_sequence_types():
    import collections

    out = default_collate([collections.defaultdict(list, a=1), collections.defaultdict(list, a=2)])
    assert type(out) is collections.defaultdict and out.default_factory is list
    assert host(out["a"]).tolist() == [1, 2]

    class Row(list):
        pass

    rows = default_collate([Row([1, 2.0]), Row([3, 4.0])])
    assert type(rows) is Row and [host(c).tolist() for c in rows] == [[1, 3], [2.0, 4.0]]


class _Five(IterableDataset):
    """Five samples per iteration, in every worker (not split between them)."""

    def __iter__(self):
        return iter(range(5))

    def __len__(self):
        return 5


@pytest.mark.parametrize("num_workers", [0, 2])
def test_iterable_overrun_of_the_reported_length_warns(num_workers):
    # As PyTorch: once len(loader) has read len(dataset), yielding more batches than that
    # warns (here each of 2 workers yields the whole stream: 6 batches of 2 against 5).
    loader = DataLoader(_Five(), batch_size=2, num_workers=num_workers)
    assert len(loader) == 3
    with pytest.warns(UserWarning) if num_workers else _no_warning() as record:
        batches = list(loader)
    assert len(batches) == 3 * max(num_workers, 1)
    if num_workers:
        # the loader's own warning: Python 3.12 also warns (DeprecationWarning) when a worker
        # is forked from a multi-threaded process (CuPy's, a thread pool's)
        messages = [str(w.message) for w in record if issubclass(w.category, UserWarning)]
        assert len(messages) == 1 and messages[0].startswith(
            f"Length of IterableDataset {loader.dataset} was reported to be 5(when accessing "
            "len(dataloader)), but 6 samples have been fetched. For multiprocessing")
    # without len(loader) nothing is checked
    quiet = DataLoader(_Five(), batch_size=None, num_workers=num_workers)
    with _no_warning():
        assert len(list(quiet)) == 5 * max(num_workers, 1)


class _no_warning:
    def __enter__(self):
        import warnings

        self._ctx = warnings.catch_warnings(record=True)
        self._record = self._ctx.__enter__()
        warnings.simplefilter("always")
        return self._record

    def __exit__(self, *exc):
        self._ctx.__exit__(*exc)
        assert not [w for w in self._record if "IterableDataset" in str(w.message)]


def test_random_split_fractions_rounding_and_empty_split_warning():
    # torch.utils.data.random_split: floor(n * f) each, the remainder handed out one by one
    # from the first split; a fraction that rounds to an empty split warns (an explicit 0
    # length does not).
    for n, fractions, lengths in [(10, [0.7, 0.3], [7, 3]), (11, [0.5, 0.5], [6, 5]),
                                  (7, [0.1, 0.2, 0.7], [1, 2, 4]),
                                  (10, [0.33, 0.33, 0.34], [4, 3, 3])]:
        assert [len(s) for s in random_split(range(n), fractions, generator=0)] == lengths
    with pytest.warns(UserWarning, match="Length of split at index 3 is 0. This might result "
                                         "in an empty dataset."):
        parts = random_split(range(3), [0.25] * 4, generator=0)
    assert [len(s) for s in parts] == [1, 1, 1, 0]
    with _no_warning() as record:
        random_split(range(3), [3, 0], generator=0)
    assert not record


def test_weighted_sampler_takes_weights_on_the_device():
    # torch.utils.data.WeightedRandomSampler([0.1, 0.9, 0.4, 0.7], 10,
    #     generator=torch.Generator().manual_seed(0)) with the weights as a (CUDA) tensor
    weights = dev(np.array([0.1, 0.9, 0.4, 0.7]))
    assert list(WeightedRandomSampler(weights, 10, generator=0)) == [3, 3, 1, 3, 2, 3, 1, 1, 2, 1]


def test_multiprocessing_context_can_be_set_after_construction():
    # As PyTorch's property: a start-method name becomes its context, checked as in __init__.
    import multiprocessing

    loader = DataLoader(Squares(4), batch_size=2, num_workers=1)
    loader.multiprocessing_context = "spawn"
    assert loader.multiprocessing_context is multiprocessing.get_context("spawn")
    assert _ids(loader) == [[0, 1], [2, 3]]
    with pytest.raises(ValueError, match="should specify a valid start method"):
        loader.multiprocessing_context = "bogus"
    with pytest.raises(ValueError, match="can only be used with multi-process loading"):
        DataLoader(Squares(4)).multiprocessing_context = "spawn"


def test_collate_with_a_custom_rule_table():
    # torch.utils.data._utils.collate.collate(batch, collate_fn_map={...}) gives the same
    # structure: the rule applies to the leaf column, the containers are walked as usual.
    from funcgrad_nn.data.collate import Array, collate, default_collate_fn_map

    class Box:
        def __init__(self, v):
            self.v = v

    def sum_boxes(batch, *, collate_fn_map):
        return sum(b.v for b in batch)

    rules = {**default_collate_fn_map, Box: sum_boxes}
    out = collate([{"b": Box(1), "x": dev(np.zeros(2))}, {"b": Box(2), "x": dev(np.ones(2))}],
                  collate_fn_map=rules)
    assert out["b"] == 3 and host(out["x"]).tolist() == [[0.0, 0.0], [1.0, 1.0]]
    with pytest.raises(TypeError, match="found Box"):
        default_collate([Box(1), Box(2)])
    with pytest.raises(TypeError, match="found int"):
        collate([1, 2])  # no table: no leaf rules
    assert isinstance(dev(np.zeros(1)), Array) and not isinstance(np.float32(1), Array)
    # an exact-type key wins over the generic array rule
    assert collate([np.zeros(2)], collate_fn_map={np.ndarray: lambda b, *, collate_fn_map: 7,
                                                  **default_collate_fn_map}) == 7


def test_string_columns_of_namedtuples_stay_tuples_as_pytorchs():
    # torch.utils.data.default_collate: P(name=('a', 'b'), v=tensor([1, 2]))
    P = namedtuple("P", "name v")
    out = default_collate([P("a", 1), P("b", 2)])
    assert type(out) is P and out.name == ("a", "b") and host(out.v).tolist() == [1, 2]


@pytest.mark.parametrize("num_samples, replacement, seed, expected", [
    (1, True, 0, [[1], [1], [4]]),
    (1, False, 3, [[0], [4], [4]]),
    (3, False, 0, [[1, 4, 3], [1, 3, 4], [4, 1, 5]]),
    (5, False, 7, [[1, 3, 0, 4, 5], [4, 5, 1, 0, 3], [4, 1, 0, 3, 5]]),
])
def test_weighted_sampler_without_replacement_or_one_sample_draws_as_pytorch(
        num_samples, replacement, seed, expected):
    # torch.utils.data.WeightedRandomSampler(weights, num_samples, replacement,
    #     generator=torch.Generator().manual_seed(seed)), three passes: torch.multinomial's
    # exponential race (argmax / top-k of weights / Exp(1)).
    weights = [0.1, 0.9, 0.0, 0.4, 0.7, 0.2]
    sampler = WeightedRandomSampler(weights, num_samples, replacement=replacement,
                                    generator=seed)
    assert [list(sampler) for _ in range(3)] == expected


def _shm_files():
    return sorted(n for n in os.listdir("/dev/shm") if n.startswith("funcgrad-dl-"))


class _Images(Dataset):
    """Batches far above the shared-memory threshold: 16 x 3 x 64 x 64 float32 = 768 KiB."""

    def __len__(self):
        return 64

    def __getitem__(self, i):
        return np.full((3, 64, 64), i, np.float32), np.asfortranarray(np.full((4, 5), i)), i


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="shared memory in /dev/shm (Linux)")
def test_worker_batches_travel_through_shared_memory_and_leave_nothing_behind():
    from funcgrad_nn.data import _transport

    before = _shm_files()
    loader = DataLoader(_Images(), batch_size=16, num_workers=2)
    batches = list(loader)
    assert [host(b[2]).tolist() for b in batches] == [list(range(i, i + 16))
                                                      for i in range(0, 64, 16)]
    x = batches[1][0]
    assert x.shape == (16, 3, 64, 64) and x.dtype == np.float32 and x.flags.writeable
    assert float(x[3, 2, 10, 10]) == 19.0
    x[0] = 0  # an ordinary, writeable batch
    assert _shm_files() == before
    for _ in DataLoader(_Images(), batch_size=16, num_workers=2):
        break  # abandoned with batches in flight: closing removes their shared memory
    import gc
    gc.collect()
    assert _shm_files() == before
    # the pieces: large buffers out of band (order-preserving), small ones in the pickle
    big, small = np.arange(40000.0).reshape(200, 200).T, np.arange(3)
    payload, files = _transport.pack({"big": big, "small": small})
    assert len(files) == 1 and files[0][1] == big.nbytes
    out = _transport.unpack((payload, files))
    assert np.array_equal(out["big"], big) and out["big"].flags.f_contiguous
    assert np.array_equal(out["small"], small) and _shm_files() == before
    _, files = _transport.pack(big)
    _transport.discard(files)
    assert _shm_files() == before


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="shared memory in /dev/shm (Linux)")
def test_a_full_shared_memory_sends_the_batch_through_the_pipe(monkeypatch):
    from funcgrad_nn.data import _transport

    def full(fd, size):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_transport, "_reserve", full)
    before = _shm_files()
    big = np.arange(40000.0)
    payload, files = _transport.pack(big)
    assert files == [] and _shm_files() == before
    assert np.array_equal(_transport.unpack((payload, files)), big)


def test_generator_is_torchs_stream_shared_and_reseeded_in_place():
    # torch 2.13, torch.Generator().manual_seed(7) driving DataLoader(range(10), batch_size=4,
    # shuffle=True): these three epochs; after manual_seed(3) on the same generator, the
    # loader follows the new stream
    g = nn.Generator().manual_seed(7)
    loader = nn.data.DataLoader(range(10), batch_size=4, shuffle=True, generator=g)
    assert [[b.tolist() for b in loader] for _ in range(3)] == [
        [[1, 3, 5, 7], [9, 4, 6, 2], [8, 0]],
        [[5, 1, 6, 0], [9, 7, 8, 4], [3, 2]],
        [[4, 3, 2, 8], [1, 0, 6, 5], [9, 7]]]
    g.manual_seed(7)
    assert [b.tolist() for b in loader] == [[1, 3, 5, 7], [9, 4, 6, 2], [8, 0]]
    state = g.get_state()
    first = list(nn.data.RandomSampler(range(5), generator=g))
    assert list(nn.data.RandomSampler(range(5), generator=g.set_state(state))) == first
    # torch.Generator() unseeded: initial seed 67280421310721, randperm [0, 3, 7, 5, ...]
    assert nn.Generator().initial_seed() == 67280421310721
    assert list(nn.data.RandomSampler(range(10), generator=nn.Generator())) == [
        0, 3, 7, 5, 2, 9, 8, 1, 4, 6]
    assert nn.Generator().manual_seed(-5).initial_seed() == 2**64 - 5
    with pytest.raises(RuntimeError, match="manual_seed expected a long"):
        nn.Generator().manual_seed(1.5)


@pytest.mark.parametrize("num_workers", [0, 1])
def test_pin_memory_warns_as_pytorch_when_nothing_can_be_pinned(num_workers):
    # torch 2.13 warns when an iterator is made: without an accelerator (its message, word for
    # word), and for the deprecated pin_memory_device; a loader without pin_memory is quiet
    loader = DataLoader(TensorDataset(np.arange(4.0)), batch_size=2, num_workers=num_workers,
                        pin_memory=True, pin_memory_device="cuda")
    with pytest.warns(UserWarning) as record:
        assert len(list(loader)) == 2
    messages = [str(w.message) for w in record if issubclass(w.category, UserWarning)]
    expected = ["pin_memory_device is deprecated, the current accelerator will be used as the "
                "device,ignore pin_memory_device='cuda'."]
    if not cuda_available():
        expected.append("'pin_memory' argument is set as true but no accelerator is found, "
                        "then device pinned memory won't be used.")
    assert messages == expected
    assert record[0].filename == __file__  # the line that made the iterator
    with _no_warning():
        list(DataLoader(TensorDataset(np.arange(4.0)), batch_size=2, num_workers=num_workers))
