"""The process group and torch.distributed-style calls, members as threads."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad_nn as nn
from funcgrad.distributed import LocalCommunicator, ThreadGroup

dist = nn.distributed


def test_uninitialized_calls_say_what_to_do():
    assert not dist.is_initialized() and dist.is_main_process()
    with pytest.raises(RuntimeError, match="has not been initialized"):
        dist.get_rank()
    with pytest.raises(RuntimeError, match="mpiexec"):
        dist.all_reduce(np.ones(2))


def test_init_twice_and_destroy():
    dist.init(comm=LocalCommunicator())
    try:
        with pytest.raises(RuntimeError, match="already initialized"):
            dist.init(comm=LocalCommunicator())
        assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (0, 1, "mpi")
    finally:
        dist.destroy_process_group()
    assert not dist.is_initialized()
    with pytest.raises(ValueError, match="disagree"):
        dist.init_process_group("mpi", world_size=4, comm=LocalCommunicator())
    assert not dist.is_initialized()


@pytest.mark.parametrize("op,expected", [("sum", 6.0), ("avg", 2.0), ("max", 3.0),
                                         ("min", 1.0)])
def test_all_reduce_ops(op, expected):
    def member(comm):
        dist.init(comm=comm)
        x = np.full(3, float(comm.rank + 1))
        dist.all_reduce(x, dist.ReduceOp(op))
        return x

    for x in ThreadGroup(3).run(member):
        np.testing.assert_array_equal(x, np.full(3, expected))


def test_broadcast_all_gather_barrier_and_rank_zero_helpers(tmp_path, capsys):
    def member(comm):
        dist.init(comm=comm)
        x = np.full(2, float(comm.rank))
        dist.broadcast(x, src=2)
        out = [np.zeros(1) for _ in range(comm.size)]
        dist.all_gather(out, np.array([comm.rank * 10.0]))
        dist.barrier()
        dist.print0("from rank", dist.get_rank())
        dist.save_on_main({"x": np.arange(3.0)}, tmp_path / "c.ckpt")
        loaded = nn.load(tmp_path / "c.ckpt")  # every rank may read it right after
        return x, np.concatenate(out), loaded["x"]

    for x, gathered, loaded in ThreadGroup(3).run(member):
        np.testing.assert_array_equal(x, [2.0, 2.0])
        np.testing.assert_array_equal(gathered, [0.0, 10.0, 20.0])
        np.testing.assert_array_equal(loaded, [0.0, 1.0, 2.0])
    assert capsys.readouterr().out == "from rank 0\n"


def test_in_place_calls_reject_non_arrays():
    dist.init(comm=LocalCommunicator())
    try:
        with pytest.raises(TypeError, match="in place"):
            dist.all_reduce(3.0)
        with pytest.raises(ValueError, match="array_list has 2"):
            dist.all_gather([np.zeros(1), np.zeros(1)], np.ones(1))
    finally:
        dist.destroy_process_group()
