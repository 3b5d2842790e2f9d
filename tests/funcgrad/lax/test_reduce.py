"""``lax.reduce`` (generic and variadic) and ``lax.approx_max_k``/``approx_min_k``, against
values recorded from JAX 0.10.2 (x64)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
from funcgrad import lax
from funcgrad.test_util import check_grads

_X = np.arange(6.0).reshape(2, 3)


@pytest.mark.parametrize("init,comp,dims,want", [
    (0.0, lax.add, (1,), [3.0, 12.0]),
    (1.5, lax.add, (0,), [4.5, 6.5, 8.5]),            # a non-identity init joins once
    (-np.inf, lax.max, (0, 1), 5.0),
    (2.0, lax.mul, (1,), [0.0, 120.0]),
    # Not associative: XLA on CPU folds element by element from the init value.
    (0.0, lambda a, b: a + b * b, (1,), [5.0, 50.0]),
    (1.0, lambda a, b: a * 0.5 + b, (0, 1), 8.078125),
    (1.5, lax.add, (), _X.tolist()),                  # nothing reduced: operand unchanged
])
def test_reduce_matches_recorded_jax(init, comp, dims, want) -> None:
    assert host(lax.reduce(dev(_X), init, comp, dims)).tolist() == want
    jitted = funcgrad.jit(lambda x: lax.reduce(x, init, comp, dims))(dev(_X))
    assert host(jitted).tolist() == want


def test_variadic_argmax_and_empty() -> None:
    def argmax(a, b):
        take = lax.gt(b[0], a[0])
        return lax.select(take, b[0], a[0]), lax.select(take, b[1], a[1])

    x = dev(np.array([[1.0, 7.0, 7.0, 2.0], [3.0, -1.0, 4.0, 4.0]]))
    idx = lax.broadcasted_iota(np.int32, (2, 4), 1)
    vals, where = lax.reduce((x, idx), (-np.inf, np.int32(0)), argmax, (1,))
    assert host(vals).tolist() == [7.0, 4.0] and host(where).tolist() == [1, 2]
    empty = lax.reduce(dev(np.zeros((0, 3))), 2.0, lambda a, b: a * b, (0,))
    assert host(empty).tolist() == [2.0, 2.0, 2.0]
    bools = dev(np.array([[True, False], [True, True]]))
    assert host(lax.reduce(bools, True, lax.bitwise_and, (1,))).tolist() == [False, True]
    with pytest.raises(TypeError, match="structure"):
        lax.reduce((x, x), 0.0, lax.add, (0,))
    with pytest.raises(TypeError, match="dtype"):
        lax.reduce(x, np.float32(1.0), lax.add, (0,))  # not add's identity


def test_reduce_transformations() -> None:
    rng = np.random.default_rng(0)
    x = dev(rng.uniform(0.5, 1.5, (3, 4)))

    def prod(x):
        return lax.reduce(x, 1.0, lambda a, b: a * b, (1,))

    assert_allclose(prod(x), np.prod(host(x), 1))
    check_grads(prod, (x,), order=2, modes=("fwd", "rev"))
    xs = dev(rng.uniform(0.5, 1.5, (2, 3, 4)))
    assert_allclose(funcgrad.vmap(prod)(xs), np.prod(host(xs), 2))


def test_approx_top_k_is_exact() -> None:
    x = dev(np.array([[2.0, 1.0, 1.0, 2.0], [0.5, 3.0, -1.0, 3.0]]))
    v, i = lax.approx_max_k(x, 2)
    assert host(v).tolist() == [[2.0, 2.0], [3.0, 3.0]] and host(i).tolist() == [[0, 3], [1, 3]]
    v, i = lax.approx_min_k(x, 3)
    assert host(v).tolist() == [[1.0, 1.0, 2.0], [-1.0, 0.5, 3.0]]
    assert host(i).tolist() == [[1, 2, 0], [2, 0, 1]]
    v, i = lax.approx_max_k(x, 1, reduction_dimension=0)
    assert host(i).tolist() == [[0, 1, 0, 1]]
    with pytest.raises(ValueError, match="recall_target"):
        lax.approx_max_k(x, 1, recall_target=1.5)


def test_reduce_init_is_the_monoids_identity_in_its_own_dtype_or_exact():
    # JAX 0.10.2 (_get_monoid_reducer): lax.reduce(uint8, inf, lax.min) is the minimum, [0, 3]
    # (inf cast to uint8 was 0, so every row gave 0); an f64 zero or one sums / multiplies f32.
    x = dev(np.arange(6, dtype=np.uint8).reshape(2, 3))
    assert host(lax.reduce(x, np.inf, lax.min, (1,))).tolist() == [0, 3]
    assert host(funcgrad.jit(lambda a: lax.reduce(a, -np.inf, lax.max, (0,)))(x)).tolist() == [
        3, 4, 5]
    f = dev(np.full((2, 3), 2.0, np.float32))
    for init, op, want in ((np.float64(0), lax.add, 6.0), (np.float64(1), lax.mul, 8.0)):
        out = lax.reduce(f, init, op, (1,))
        assert out.dtype == np.float32 and host(out).tolist() == [want, want]
    # A Python scalar that is no exact uint8 would start from another value (JAX refuses it).
    for init in (300, -1, 2.5):
        with pytest.raises(funcgrad.errors.DTypeError, match="not exactly a uint8"):
            lax.reduce(x, init, lax.max, (1,))
    assert host(lax.reduce(x, 5, lax.max, (1,))).tolist() == [5, 5]
