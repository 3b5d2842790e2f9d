"""lax.rng_bit_generator against jax.lax.rng_bit_generator (JAX 0.10.2 on CPU, XLA's
Philox-4x32-10): bits and new states recorded as literals, the counter's carry and wrap, every
bit width, jit and vmap, and the errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dev, host

import funcgrad
from funcgrad import lax

U32_MAX = 4294967295


def h(x):
    return np.asarray(host(x))


@pytest.mark.parametrize("words,shape,dtype,state,bits", [
    ([1, 2, 3, 4], (2, 3), np.uint32, [1, 2, 5, 4],
     [[512747620, 1298009047, 1267190206], [761827841, 1383286907, 1639995030]]),
    # the 128-bit counter carries into the key words for the bits; the state wraps alone
    ([5, 6, U32_MAX - 1, U32_MAX], (3,), np.uint64, [5, 6, 0, 0],
     [5671445910959202419, 16018037193053365030, 13033876917886272360]),
    ([1, 2, 3, 4], (5,), np.uint8, [1, 2, 5, 4], [100, 215, 190, 1, 123]),
    ([7, 8, 9, 10], (5,), np.uint16, [7, 8, 11, 10], [32648, 55002, 50884, 21046, 62970]),
])
def test_bits_equal_jax(words, shape, dtype, state, bits) -> None:
    new, got = lax.rng_bit_generator(dev(np.array(words, np.uint32)), shape, dtype)
    assert h(got).dtype == dtype and h(got).shape == shape
    assert h(got).tolist() == bits
    assert h(new).dtype == np.uint32 and h(new).tolist() == state


def test_uint64_state_and_algorithms() -> None:
    key = dev(np.array([2 ** 64 - 1, 2 ** 64 - 1], np.uint64))
    new, bits = lax.rng_bit_generator(key, (3,))
    assert h(new).dtype == np.uint64 and h(new).tolist() == [2 ** 64 - 1, 0]
    assert h(bits).tolist() == [1083123565, 1103641358, 2718681030]
    k = dev(np.array([1, 2, 3, 4], np.uint32))
    for alg in (lax.RandomAlgorithm.RNG_DEFAULT, lax.RandomAlgorithm.RNG_PHILOX):
        assert h(lax.rng_bit_generator(k, (3,), algorithm=alg)[1]).tolist() == [
            512747620, 1298009047, 1267190206]


def test_jit_vmap_and_chaining() -> None:
    keys = dev(np.arange(8, dtype=np.uint32).reshape(2, 4))
    one = [lax.rng_bit_generator(keys[i], (3,)) for i in range(2)]
    f = funcgrad.jit(lambda k: lax.rng_bit_generator(k, (3,)))
    assert h(f(keys[0])[1]).tolist() == h(one[0][1]).tolist()
    new, bits = funcgrad.vmap(lambda k: lax.rng_bit_generator(k, (3,)))(keys)
    for i in range(2):  # each key its own bits (JAX's batching rule uses the first key)
        assert h(bits[i]).tolist() == h(one[i][1]).tolist()
        assert h(new[i]).tolist() == h(one[i][0]).tolist()
    # the returned state continues the counter: two draws of 4 equal one of 8
    k0 = dev(np.zeros(4, np.uint32))
    s, a = lax.rng_bit_generator(k0, (4,))
    _, b = lax.rng_bit_generator(s, (4,))
    assert h(a).tolist() + h(b).tolist() == h(lax.rng_bit_generator(k0, (8,))[1]).tolist()


def test_errors() -> None:
    k = dev(np.zeros(4, np.uint32))
    with pytest.raises(TypeError, match="unsupported dtype int32"):
        lax.rng_bit_generator(k, (2,), np.int32)
    with pytest.raises(TypeError, match=r"uint32\[4\] or uint64\[2\]"):
        lax.rng_bit_generator(dev(np.zeros(2, np.uint32)), (2,))
    with pytest.raises(ValueError, match="negative"):
        lax.rng_bit_generator(k, (-1,))


def test_three_fry_algorithm_equals_jax():
    # jax.lax.rng_bit_generator(..., algorithm=RNG_THREE_FRY), JAX 0.10.2 (x64, CPU): the
    # shape is split on its first even dimension (else the largest), a 64-bit draw is one
    # counter, the state advances by the counters used (no carry)
    tf = lax.RandomAlgorithm.RNG_THREE_FRY
    cases = [
        ([0, 0, 0, 0], (2, 3), np.uint32, [0, 0, 3, 0],
         [1797259609, 1351547692, 1688610540, 2579123966, 3235790642, 4229293427]),
        ([0, 0, 0, 0], (2, 3), np.uint16, [0, 0, 3, 0], [345, 64300, 9964, 20222, 16178, 58739]),
        ([1, 2, 3, 4], (3, 3), np.uint32, [1, 2, 9, 4],
         [1576285164, 740599976, 2436392515, 2249660814, 2425682526, 1497962777, 1335360347,
          3981753173, 3812192618]),
        ([1, 2, 3, 4], (3, 3), np.uint8, [1, 2, 9, 4], [236, 168, 67, 142, 94, 25, 91, 85, 106]),
        ([1, 2, 3, 4], (), np.uint32, [1, 2, 4, 4], [1576285164]),
        ([5, 0, 0xFFFFFFFF, 0xFFFFFFFF], (5,), np.uint64, [5, 0, 4, 0],
         [5699853503226913561, 1356859863320810339, 8853074403113563486, 1965861679108977291,
          6467865857535376736]),
    ]
    for key, shape, dt, state, bits in cases:
        new, out = lax.rng_bit_generator(dev(np.array(key, np.uint32)), shape, dt,
                                         algorithm=tf)
        assert out.shape == shape and out.dtype == dt
        assert host(new).tolist() == state and np.asarray(host(out)).ravel().tolist() == bits
    got = funcgrad.jit(lambda k: lax.rng_bit_generator(k, (2, 3), np.uint32, algorithm=tf)[1])(
        dev(np.zeros(4, np.uint32)))
    assert np.asarray(host(got)).ravel().tolist() == cases[0][4]
