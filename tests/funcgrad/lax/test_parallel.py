"""lax.ragged_all_to_all under vmap, jit, shard_map and grad.

JAX 0.10.2 runs it on GPU/TPU only (XLA:CPU has no ragged-all-to-all and its vmap rule is
missing), so the expected values are the documented example of jax.lax.ragged_all_to_all and
a case worked by hand from its documented semantics (each slice is written on its receiver at
the sender's output offset, with the receiver's recv_sizes rows).
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
from funcgrad import lax
from funcgrad.errors import ShapeError
from funcgrad.sharding import Mesh, PartitionSpec
from funcgrad.test_util import check_grads


def _ra2a(*args):
    return lax.ragged_all_to_all(*args, axis_name="i")


def _i32(*rows):
    return dev(np.array(rows, np.int32))


def test_documented_example() -> None:
    args = (dev(np.array([[1.0, 2, 2], [3, 4, 0]])), dev(np.zeros((2, 4))), _i32([0, 1], [0, 1]),
            _i32([1, 2], [1, 1]), _i32([0, 0], [1, 2]), _i32([1, 1], [2, 1]))
    want = np.array([[1.0, 3.0, 0.0, 0.0], [2.0, 2.0, 4.0, 0.0]])
    assert_allclose(funcgrad.vmap(_ra2a, axis_name="i")(*args), want)
    assert_allclose(funcgrad.jit(funcgrad.vmap(_ra2a, axis_name="i"))(*args), want)


# two members, two slices for each destination, rows of two; gaps keep output's -1
CASE = (np.arange(20.0).reshape(2, 5, 2), -np.ones((2, 6, 2)),
        np.array([[0, 1, 3, 3], [0, 2, 3, 4]], np.int32),
        np.array([[1, 2, 0, 2], [2, 1, 1, 1]], np.int32),
        np.array([[0, 1, 0, 0], [4, 3, 2, 4]], np.int32),
        np.array([[1, 2, 2, 1], [0, 2, 1, 1]], np.int32))
WANT = np.array([[[0, 1], [2, 3], [4, 5], [14, 15], [10, 11], [12, 13]],
                 [[6, 7], [8, 9], [16, 17], [-1, -1], [18, 19], [-1, -1]]], np.float64)


def test_rows_slices_and_gaps_vmap_and_shard_map() -> None:
    args = [dev(a) for a in CASE]
    assert_allclose(funcgrad.vmap(_ra2a, axis_name="i")(*args), WANT)
    mesh = Mesh(np.array(funcgrad.local_devices() * 2), ("i",))
    body = lambda *a: _ra2a(*(x[0] for x in a))[None]  # noqa: E731
    sm = funcgrad.shard_map(body, mesh=mesh, in_specs=PartitionSpec("i"),
                            out_specs=PartitionSpec("i"))
    assert_allclose(sm(*args), WANT)


def test_gradients() -> None:
    operand, output, *rest = (dev(a) for a in CASE)
    f = lambda op, out: funcgrad.vmap(_ra2a, axis_name="i")(op, out, *rest)  # noqa: E731
    check_grads(f, (operand, output), order=1, modes=("rev",))
    # a row is sent once here, so the operand's cotangent is 1 where a row is sent
    g = funcgrad.grad(lambda op: funcgrad.numpy.sum(f(op, output)))(operand)
    assert_allclose(g[:, :, 0], np.array([[1.0, 1, 1, 1, 1], [1, 1, 1, 1, 1]]))


def test_errors() -> None:
    operand, output, *rest = (dev(a) for a in CASE)
    with pytest.raises(NameError, match="unbound axis name"):
        _ra2a(operand[0], output[0], *(r[0] for r in rest))
    with pytest.raises(ShapeError, match="must be a multiple of the size of axis 'i'"):
        funcgrad.vmap(_ra2a, axis_name="i")(operand, output, *(r[:, :3] for r in rest))
    with pytest.raises(ShapeError, match="equal trailing shapes"):
        funcgrad.vmap(_ra2a, axis_name="i")(operand, output[:, :, :1], *rest)
    with pytest.raises(ValueError, match="axis_index_groups is not supported"):
        lax.ragged_all_to_all(operand, output, *rest, axis_name="i", axis_index_groups=[[0, 1]])
