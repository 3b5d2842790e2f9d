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


# Literal values recorded from torch.distributed (gloo, two processes, torch 2.13) for the
# same calls: rank r holds [r + 2, 5 + 3r, 6].
@pytest.mark.parametrize("op,expected", [
    ("sum", [5, 13, 12]), ("product", [6, 40, 36]), ("min", [2, 5, 6]), ("max", [3, 8, 6]),
    ("band", [2, 0, 6]), ("bor", [3, 13, 6]), ("bxor", [1, 13, 0])])
def test_all_reduce_integer_ops_as_torch(op, expected):
    def member(comm):
        dist.init(comm=comm)
        x = np.array([comm.rank + 2, 5 + 3 * comm.rank, 6])
        dist.all_reduce(x, op=dist.ReduceOp(op), group=None)
        return x.tolist()

    assert ThreadGroup(2).run(member) == [expected, expected]


def test_average_of_integers_is_refused():
    dist.init(comm=LocalCommunicator())
    try:
        with pytest.raises(RuntimeError, match="AVG"):
            dist.all_reduce(np.arange(3), dist.ReduceOp.AVG)
        with pytest.raises(ValueError, match="one process group"):
            dist.all_reduce(np.ones(2), group="other")
        work = dist.all_reduce(np.ones(2), async_op=True)
        assert work.wait() and work.is_completed()
    finally:
        dist.destroy_process_group()


def test_rooted_and_object_collectives_as_torch():
    def member(comm):
        dist.init(comm=comm)
        rank, r = comm.rank, {}
        t = np.array([rank + 2.0, 3.0])
        dist.reduce(t, dst=1, op=dist.ReduceOp.PRODUCT)
        r["reduce"] = t.tolist() if rank == 1 else None  # only dst's value is specified
        gl = [np.zeros(1) for _ in range(2)] if rank == 0 else None
        dist.gather(np.array([rank * 10.0]), gl, dst=0)
        r["gather"] = None if gl is None else [g.tolist() for g in gl]
        t = np.zeros(2)
        dist.scatter(t, [np.array([1.0, 2]), np.array([3.0, 4])] if rank == 1 else None, src=1)
        r["scatter"] = t.tolist()
        out = [np.zeros(2) for _ in range(2)]
        dist.all_to_all(out, [np.array([rank, j * 1.0]) for j in range(2)])
        r["all_to_all"] = [o.tolist() for o in out]
        t = np.zeros(2)
        dist.reduce_scatter(t, [np.array([rank + 1.0, j * 1.0]) for j in range(2)])
        r["reduce_scatter"] = t.tolist()
        t = np.zeros(4)
        dist.all_gather_into_tensor(t, np.array([rank, rank + 0.5]))
        r["all_gather_into_tensor"] = t.tolist()
        t = np.zeros(1)
        dist.reduce_scatter_tensor(t, np.array([rank + 1.0, 10.0]))
        r["reduce_scatter_tensor"] = t.tolist()
        ol = [None, None]
        dist.all_gather_object(ol, {"r": rank})
        r["all_gather_object"] = ol
        ol = ["a", rank] if rank == 1 else [None, None]
        dist.broadcast_object_list(ol, src=1)
        r["broadcast_object_list"] = ol
        ol = [None, None] if rank == 0 else None
        dist.gather_object(("x", rank), ol, dst=0)
        r["gather_object"] = ol
        out = [None]
        dist.scatter_object_list(out, ["s0", "s1"] if rank == 0 else None, src=0)
        r["scatter_object_list"] = out
        with pytest.raises(ValueError, match="must be None"):
            dist.gather(np.zeros(1), [np.zeros(1)] * 2, dst=1 - rank)
        return r

    r0, r1 = ThreadGroup(2).run(member)
    assert r0 == {
        "reduce": None, "gather": [[0.0], [10.0]], "scatter": [1.0, 2.0],
        "all_to_all": [[0.0, 0.0], [1.0, 0.0]], "reduce_scatter": [3.0, 0.0],
        "all_gather_into_tensor": [0.0, 0.5, 1.0, 1.5], "reduce_scatter_tensor": [3.0],
        "all_gather_object": [{"r": 0}, {"r": 1}], "broadcast_object_list": ["a", 1],
        "gather_object": [("x", 0), ("x", 1)], "scatter_object_list": ["s0"]}
    assert r1 == {
        "reduce": [6.0, 9.0], "gather": None, "scatter": [3.0, 4.0],
        "all_to_all": [[0.0, 1.0], [1.0, 1.0]], "reduce_scatter": [3.0, 2.0],
        "all_gather_into_tensor": [0.0, 0.5, 1.0, 1.5], "reduce_scatter_tensor": [20.0],
        "all_gather_object": [{"r": 0}, {"r": 1}], "broadcast_object_list": ["a", 1],
        "gather_object": None, "scatter_object_list": ["s1"]}


def test_init_process_group_takes_pytorchs_arguments():
    import datetime

    dist.init_process_group(init_method="env://", timeout=datetime.timedelta(seconds=30),
                            world_size=1, rank=0, group_name="", device_id=None,
                            comm=LocalCommunicator())
    dist.destroy_process_group()
    for backend in ("gloo", "nccl", "cpu:gloo,cuda:nccl", None):
        dist.init_process_group(backend, comm=LocalCommunicator())
        dist.destroy_process_group()
    with pytest.raises(ValueError, match="unknown backend"):
        dist.init_process_group("tcp", comm=LocalCommunicator())
    with pytest.raises(TypeError, match="unexpected arguments"):
        dist.init_process_group(bogus=1, comm=LocalCommunicator())
    assert not dist.is_initialized()
