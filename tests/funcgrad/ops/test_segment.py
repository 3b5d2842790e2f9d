"""jax.ops's segment reductions (funcgrad.ops.segment_*): values, dtypes, out-of-range ids,
modes, derivatives, vmap and jit, against JAX 0.10.2's results recorded as literals."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
from funcgrad import ops
from funcgrad.errors import ConcretizationError, DTypeError, ShapeError
from funcgrad.test_util import check_grads
from tests.helpers import dev, host

DATA = dev(np.array([1.0, 2.0, 3.0, 4.0]))
IDS = dev(np.array([0, -1, 5, 1]))  # -1 and 5 are out of range for 3 segments


@pytest.mark.parametrize("name, expected, clipped", [
    # JAX 0.10.2: jax.ops.segment_*(data, ids, 3) and (..., mode="clip")
    ("segment_sum", [1.0, 4.0, 0.0], [3.0, 4.0, 3.0]),
    ("segment_prod", [1.0, 4.0, 1.0], [2.0, 4.0, 3.0]),
    ("segment_max", [1.0, 4.0, -np.inf], [2.0, 4.0, 3.0]),
    ("segment_min", [1.0, 4.0, np.inf], [1.0, 4.0, 3.0]),
])
def test_out_of_range_ids_are_dropped_or_clipped(name, expected, clipped):
    f = getattr(ops, name)
    np.testing.assert_array_equal(host(f(DATA, IDS, 3)), expected)
    np.testing.assert_array_equal(host(f(DATA, IDS, num_segments=3, mode="clip")), clipped)
    np.testing.assert_array_equal(host(funcgrad.jit(lambda d, i: f(d, i, 3))(DATA, IDS)),
                                  expected)


def test_identities_and_dtypes_of_empty_segments():
    # JAX 0.10.2 (x64): int64 max gives iinfo.min, int32 min iinfo.max, bool max False
    two = dev(np.array([0, 0]))
    out = host(ops.segment_max(dev(np.array([1, 2])), two, 2))
    assert out.dtype == np.int64 and out.tolist() == [2, np.iinfo(np.int64).min]
    out = host(ops.segment_min(dev(np.array([1, 2], np.int32)), two, 2))
    assert out.dtype == np.int32 and out.tolist() == [1, np.iinfo(np.int32).max]
    out = host(ops.segment_max(dev(np.array([True, False])), dev(np.array([0, 1])), 3))
    assert out.tolist() == [True, False, False]
    assert host(ops.segment_sum(dev(np.ones(3, np.float32)), dev(np.array([0, 1, 1])), 2)).dtype \
        == np.float32
    assert host(ops.segment_sum(dev(np.ones(3, np.int8)), dev(np.array([0, 1, 1])), 2)).dtype \
        == np.int8


def test_rows_and_default_num_segments():
    out = host(ops.segment_sum(dev(np.ones((3, 2))), dev(np.array([0, 2, 2]))))
    np.testing.assert_array_equal(out, [[1.0, 1.0], [0.0, 0.0], [2.0, 2.0]])


def test_derivatives():
    ids = dev(np.array([0, 0, 1, 1]))
    # JAX 0.10.2: tied maxima share the gradient
    g = funcgrad.grad(lambda d: ops.segment_max(d, ids, 2).sum())(dev(np.array([3.0, 3.0, 2.0, 5.0])))
    np.testing.assert_array_equal(host(g), [0.5, 0.5, 0.0, 1.0])
    # JAX refuses segment_prod's gradient with repeated ids; the exact one, zeros included
    g = funcgrad.grad(lambda d: ops.segment_prod(d, ids, 2).sum())(dev(np.array([3.0, 0.0, 2.0, 5.0])))
    np.testing.assert_array_equal(host(g), [0.0, 3.0, 5.0, 2.0])
    x = dev(np.array([0.3, -1.2, 2.0, 0.7, 1.1]))
    sid = dev(np.array([2, 0, 2, 1, 0]))
    for name in ("segment_sum", "segment_prod", "segment_min"):
        f = getattr(ops, name)
        check_grads(lambda d, f=f: f(d, sid, 3), (x,), order=2, modes=("fwd", "rev"))


def test_vmap_batches_data_and_ids():
    # JAX 0.10.2
    out = funcgrad.vmap(lambda d, i: ops.segment_sum(d, i, 3))(
        dev(np.ones((2, 3))), dev(np.array([[0, 1, 1], [2, 2, 0]])))
    np.testing.assert_array_equal(host(out), [[1.0, 2.0, 0.0], [1.0, 0.0, 2.0]])


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ConcretizationError, match="num_segments"):
        funcgrad.jit(lambda d, i: ops.segment_sum(d, i))(DATA, dev(np.array([0, 1, 1, 2])))
    with pytest.raises(DTypeError, match="integers"):
        ops.segment_sum(DATA, dev(np.array([0.0, 1.0, 1.0, 2.0])), 3)
    with pytest.raises(ShapeError, match="one id per row"):
        ops.segment_sum(DATA, dev(np.array([0, 1])), 3)
    with pytest.raises(TypeError, match="list"):
        ops.segment_sum([1.0, 2.0], dev(np.array([0, 1])), 2)
