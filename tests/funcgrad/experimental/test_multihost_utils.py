"""funcgrad.experimental.multihost_utils: JAX 0.10.2's single-process answers (recorded as
literals: shapes, host arrays), which are funcgrad's (one process)."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
from funcgrad.experimental import multihost_utils as mh
from funcgrad.sharding import PartitionSpec
from tests.helpers import dev, host


def test_single_process_answers_as_jax() -> None:
    x = dev(np.arange(4.0).reshape(2, 2))
    g = mh.process_allgather({"a": x, "b": 1.0})
    assert type(g["a"]) is np.ndarray and g["a"].shape == (1, 2, 2) and g["b"].shape == (1,)
    assert mh.process_allgather(x, tiled=True).tolist() == host(x).tolist()
    b = mh.broadcast_one_to_all({"a": x, "b": 1.0})
    assert type(b["a"]) is np.ndarray and b["b"].shape == () and b["b"].dtype == np.float64
    assert mh.sync_global_devices("step") is None and mh.assert_equal(x) is None
    mesh = funcgrad.make_mesh((1,), ("d",))
    glob = mh.host_local_array_to_global_array(x, mesh, PartitionSpec("d"))
    assert host(mh.global_array_to_host_local_array(glob, mesh, PartitionSpec("d"))).shape \
        == (2, 2)
    assert mh.reached_preemption_sync_point(1) is False
    with pytest.raises(TypeError, match="outside jit"):
        funcgrad.jit(mh.process_allgather)(x)
    with pytest.raises(ValueError, match="at least one dimension"):
        mh.process_allgather(1.0, tiled=True)
