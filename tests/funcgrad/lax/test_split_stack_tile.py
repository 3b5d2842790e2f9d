"""``lax.split``, ``stack``, ``unstack``, ``tile``, ``empty``, ``broadcast_to_rank``,
``broadcast_like``, ``broadcast_shapes`` and ``optimization_barrier`` as JAX 0.10.2's."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
from funcgrad import lax

_X = np.arange(12.0).reshape(3, 4)


def test_split_and_unstack() -> None:
    parts = lax.split(dev(_X), (1, 3), 1)
    assert [host(p).shape for p in parts] == [(3, 1), (3, 3)]
    assert_allclose(parts[1], _X[:, 1:])
    assert [host(p).shape for p in lax.split(dev(_X), (3, 0), 0)] == [(3, 4), (0, 4)]
    with pytest.raises(ValueError, match="sizes"):
        lax.split(dev(_X), (1, 2), 1)
    cols = lax.unstack(dev(_X), 1)
    assert len(cols) == 4 and host(cols[2]).tolist() == [2.0, 6.0, 10.0]
    g = funcgrad.grad(lambda x: lax.reduce_sum(lax.split(x, (1, 3), 1)[1] ** 2, (0, 1)))(dev(_X))
    assert_allclose(g, np.where(np.arange(4) >= 1, 2 * _X, 0.0))


def test_stack_and_tile() -> None:
    assert host(lax.stack([dev(_X), dev(_X)], 1)).shape == (3, 2, 4)
    assert_allclose(lax.stack([dev(_X), dev(-_X)], -1), np.stack([_X, -_X], -1))
    assert_allclose(lax.tile(dev(_X), (2, 3)), np.tile(_X, (2, 3)))
    with pytest.raises(TypeError, match="reps"):
        lax.tile(dev(_X), (2,))
    batched = funcgrad.vmap(lambda r: lax.tile(r, (2,)))(dev(_X))
    assert_allclose(batched, np.tile(_X, (1, 2)))


def test_broadcasting_helpers_and_barrier() -> None:
    assert host(lax.broadcast_to_rank(dev(np.ones(3)), 3)).shape == (1, 1, 3)
    assert host(lax.broadcast_to_rank(dev(np.ones(3)), 1)).shape == (3,)
    assert lax.broadcast_shapes((2, 1), (3,)) == (2, 3)
    with pytest.raises(ValueError, match="incompatible"):
        lax.broadcast_shapes((2, 1), (3, 2))
    assert host(lax.broadcast_like(dev(np.arange(3.0)), dev(np.ones((2, 3))))).tolist() == \
        [[0.0, 1.0, 2.0]] * 2
    e = lax.empty((2, 3), np.float32)
    assert host(e).shape == (2, 3) and host(e).dtype == np.float32
    x, s = lax.optimization_barrier((dev(_X), 1.0))
    assert_allclose(x, _X) and host(s).dtype == np.float64
    g = funcgrad.grad(lambda v: lax.optimization_barrier(v * v))(3.0)
    assert float(host(g)) == 6.0


def test_multiple_results_are_lists_as_jax():
    # JAX 0.10.2 returns lists from lax.split, top_k, approx_max_k and approx_min_k (their
    # pytree structure is a list: it matters to tree-structure checks, e.g. a scan carry)
    x = dev(np.array([3.0, 1.0, 2.0]))
    for out in (lax.split(x, (1, 2)), lax.top_k(x, 2), lax.approx_max_k(x, 1),
                lax.approx_min_k(x, 1), funcgrad.jit(lambda v: lax.top_k(v, 2))(x)):
        assert type(out) is list
