"""``lax.mulhi``, ``lax.ragged_dot`` and the single-device program helpers
(``with_sharding_constraint``, ``platform_dependent``, ``composite``) against values recorded
from JAX 0.10.2 (x64)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
from funcgrad import lax
from funcgrad.test_util import check_grads


@pytest.mark.parametrize("x,y,want", [
    (np.int64([2 ** 62, -3, -2 ** 63, 2 ** 63 - 1]), np.int64([8, 2 ** 63 - 1, -2 ** 63, 2 ** 63 - 1]),
     [2, -2, 4611686018427387904, 4611686018427387903]),
    (np.uint64([2 ** 63, 2 ** 64 - 1, 12345678901234567]),
     np.uint64([6, 2 ** 64 - 1, 98765432109876543]), [3, 18446744073709551614, 66099811787816]),
    (np.int8([100, -100, -128]), np.int8([100, 3, -128]), [39, -2, 64]),
    (np.uint32([2 ** 31, 4000000000]), np.uint32([4, 4000000000]), [2, 3725290298]),
])
def test_mulhi_as_jax(x, y, want) -> None:
    got = host(lax.mulhi(dev(x), dev(y)))
    assert got.dtype == x.dtype and got.tolist() == want
    assert host(funcgrad.jit(lax.mulhi)(dev(x), dev(y))).tolist() == want


def test_mulhi_refuses_floats_and_mixed_dtypes() -> None:
    with pytest.raises(TypeError, match="mulhi"):
        lax.mulhi(dev(np.float32([1.0])), dev(np.float32([2.0])))
    with pytest.raises(TypeError, match="mulhi"):
        lax.mulhi(dev(np.int32([1])), dev(np.int64([2])))


_L = np.array([[1.0, 2, 3], [0.5, -1, 2], [2, 0, 1], [-1, 1, 1], [3, 2, 1]])
_R = np.arange(24.0).reshape(2, 3, 4) / 10
_G = np.array([2, 2], np.int32)


def test_ragged_dot_as_jax() -> None:
    # JAX 0.10.2; the last row is past sum(group_sizes): zeros
    assert_allclose(lax.ragged_dot(dev(_L), dev(_R), dev(_G)), np.array(
        [[3.2, 3.8, 4.4, 5.0], [1.2, 1.35, 1.5, 1.65], [4.4, 4.7, 5.0, 5.3],
         [2.4, 2.5, 2.6, 2.7], [0.0, 0.0, 0.0, 0.0]]))
    gl, gr = funcgrad.grad(lambda lhs, r: (lax.ragged_dot(lhs, r, dev(_G)) ** 2).sum(),
                           argnums=(0, 1))(dev(_L), dev(_R))
    assert_allclose(gl, np.array([[5.52, 18.64, 31.76], [1.86, 6.42, 10.98],
                                  [52.68, 68.2, 83.72], [27.64, 35.8, 43.96], [0.0, 0.0, 0.0]]))
    assert_allclose(gr[1], np.array([[12.8, 13.8, 14.8, 15.8], [4.8, 5.0, 5.2, 5.4],
                                     [13.6, 14.4, 15.2, 16.0]]))
    check_grads(lambda lhs, r: lax.ragged_dot(lhs, r, dev(_G)), (dev(_L), dev(_R)), order=2)


def test_ragged_dot_dtypes_batching_and_errors() -> None:
    out = lax.ragged_dot(dev(_L.astype(np.float32)), dev(_R.astype(np.float32)), dev(_G),
                         preferred_element_type=np.float64)
    assert host(out).dtype == np.float64
    ints = lax.ragged_dot(dev(np.ones((3, 2), np.int8)), dev(np.full((2, 2, 2), 100, np.int8)),
                          dev(np.array([1, 2], np.int32)))
    assert host(ints).dtype == np.int8   # accumulates in int8, wrapping, as JAX
    many = funcgrad.vmap(lambda g: lax.ragged_dot(dev(_L), dev(_R), g))(
        dev(np.array([[2, 2], [0, 5]], np.int32)))
    assert_allclose(many[1], host(lax.ragged_dot(dev(_L), dev(_R), dev(np.array([0, 5],
                                                                                np.int32)))))
    with pytest.raises(TypeError, match="group_sizes"):
        lax.ragged_dot(dev(_L), dev(_R), dev(np.array([5], np.int32)))
    with pytest.raises(TypeError, match="lhs must be"):
        lax.ragged_dot(dev(_L), dev(_R[0]), dev(_G))


def test_program_helpers() -> None:
    tree = {"a": dev(np.ones(2))}
    assert lax.with_sharding_constraint(tree, object()) is tree
    # The default device's platform picks the branch: "cuda" on the GPU, else "cpu".
    on_gpu = funcgrad.backend.get_default_device() == "gpu"
    assert lax.platform_dependent(2.0, cpu=lambda x: x + 1, default=lambda x: x * 10) == (
        20.0 if on_gpu else 3.0)
    assert lax.platform_dependent(2.0, cuda=lambda x: x + 1, default=lambda x: x * 10) == (
        3.0 if on_gpu else 20.0)
    assert lax.platform_dependent(2.0, tpu=lambda x: x + 1, default=lambda x: x * 10) == 20.0
    with pytest.raises(ValueError, match="no branch"):
        lax.platform_dependent(2.0, tpu=lambda x: x)
    scale = lax.composite(lambda x, *, k: x * k, name="my.scale")
    assert scale(2.0, k=3.0) == 6.0
    assert float(funcgrad.grad(lambda x: scale(x, k=3.0))(1.0)) == 3.0


def _f32(n, shape):
    return dev((np.arange(n, dtype=np.float32).reshape(shape) % 7) - 3)


def test_ragged_dot_general_modes_as_jax() -> None:
    # JAX 0.10.2 values: free (non-contracting) ragged dimension, contracting (a leading group
    # axis), per-batch group sizes, batch (= dot_general); grads of the free mode
    RD = lax.RaggedDotDimensionNumbers
    gs = dev(np.array([2, 3, 1], np.int32))
    got = lax.ragged_dot_general(_f32(12, (2, 6)), _f32(12, (6, 2)), gs,
                                 RD((([1], [0]), ([], [])), [1], []))
    assert_allclose(got, np.array([[[11.0, 6.0], [-6.0, -6.0]], [[-3.0, -3.0], [-5.0, -1.0]],
                                   [[0.0, 2.0], [0.0, 1.0]]], np.float32))
    got = lax.ragged_dot_general(_f32(24, (2, 6, 2)), _f32(48, (2, 3, 2, 4)),
                                 dev(np.array([[2, 3, 1], [1, 1, 1]], np.int32)),
                                 RD((([2], [2]), ([0], [0])), [1], [1]))
    assert got.shape == (2, 6, 4)
    assert_allclose(host(got)[:, 3:], np.array(
        [[[-12.0, -12.0, 9.0, 9.0], [2.0, -1.0, 3.0, 0.0], [3.0, -3.0, -2.0, -1.0]],
         np.zeros((3, 4))], np.float32))
    a, b = _f32(24, (6, 2, 2)), _f32(24, (6, 2, 2))
    dn = (([2], [1]), ([0], [0]))
    assert_allclose(lax.ragged_dot_general(a, b, dev(np.array([2, 3, 0], np.int32)),
                                           RD(dn, [0], [])), host(lax.dot_general(a, b, dn)))
    free = RD((([0], [1]), ([], [])), [1], [0])
    same = lax.ragged_dot_general(_f32(12, (6, 2)).T, _f32(12, (3, 2, 2)), gs, free)
    assert_allclose(same, host(lax.ragged_dot(_f32(12, (6, 2)), _f32(12, (3, 2, 2)), gs)))
    ga, gb = funcgrad.grad(lambda x, y: (lax.ragged_dot_general(x, y, gs, free) ** 2).sum(),
                           argnums=(0, 1))(_f32(12, (2, 6)), _f32(12, (3, 2, 2)))
    assert_allclose(ga, np.array([[-60.0, -70, 2, 6, 10, 18], [-12, -18, -66, -36, -6, -2]],
                                 np.float32))
    assert_allclose(gb, np.array([[[-72.0, -52], [-18, 12]], [[16, -4], [34, -22]],
                                  [[-16, -4], [-8, -2]]], np.float32))
    with pytest.raises(ValueError, match="one rhs_group_dimensions"):
        lax.ragged_dot_general(_f32(12, (6, 2)), _f32(12, (3, 2, 2)), gs,
                               RD((([1], [1]), ([], [])), [0], []))


def test_tokens_pass_through_transforms() -> None:
    # jax.lax.create_token/after_all: tokens in, a token out, through jit and scan; anything
    # else is a TypeError (JAX 0.10.2: "Arguments to after_all must be tokens")
    t = lax.create_token()
    assert isinstance(lax.after_all(t, t), lax.Token) and isinstance(lax.after_all(), lax.Token)
    tok, y = funcgrad.jit(lambda x: (lax.after_all(lax.create_token(x)), x * 2))(dev(1.0))
    assert isinstance(tok, lax.Token) and float(host(y)) == 2.0
    carry, _ = lax.scan(lambda c, x: (lax.after_all(c), x), t, dev(np.ones(2)))
    assert isinstance(carry, lax.Token)
    with pytest.raises(TypeError, match="Arguments to after_all must be tokens"):
        lax.after_all(t, 1.0)


def test_rng_uniform_is_stateful_as_jax():
    # jax.lax.rng_uniform (JAX 0.10.2): new draws per call, eager and jitted, in [a, b) of a's
    # dtype; a and b scalars of one dtype (ValueError otherwise, JAX's messages)
    a, b = dev(np.float32(1.0)), dev(np.float32(2.0))
    f = funcgrad.jit(lambda a, b: lax.rng_uniform(a, b, (64,)))
    x, y = host(f(a, b)), host(f(a, b))
    assert x.dtype == np.float32 and ((x >= 1) & (x < 2)).all() and not np.array_equal(x, y)
    ints = host(lax.rng_uniform(dev(np.int32(0)), dev(np.int32(3)), (64,)))
    assert ints.dtype == np.int32 and set(ints.tolist()) <= {0, 1, 2}
    with pytest.raises(ValueError, match="must have identical dtypes"):
        lax.rng_uniform(dev(np.int32(0)), b, (2,))
    with pytest.raises(ValueError, match="must be scalars"):
        lax.rng_uniform(dev(np.zeros(2)), dev(np.ones(2)), (2,))


def test_stage_lifts_values_into_the_trace() -> None:
    # jax.lax.stage (JAX 0.10): the identity, a staged value under jit; lists refused
    assert float(host(funcgrad.jit(lambda: lax.stage(3.0) * 2)())) == 6.0
    eqns = funcgrad.make_jaxpr(lambda: lax.stage(dev(np.ones(2))))().jaxpr.eqns
    assert [e.primitive.name for e in eqns] == ["copy"]
    assert float(host(funcgrad.grad(lambda x: lax.stage(x) * 2)(1.0))) == 2.0
    with pytest.raises(TypeError, match="lax.stage: argument x is not an array"):
        lax.stage([1, 2])
