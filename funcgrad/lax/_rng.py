"""``jax.lax.rng_bit_generator``: XLA's stateful-style bit generator, as a pure function of a
state (``uint32[4]`` or ``uint64[2]``) that returns the advanced state and the bits.

XLA's default algorithm on CPU and GPU is Philox-4x32 with 10 rounds; this is that
generator, written with funcgrad operations (so it works under ``jit`` and ``vmap``), and it
gives XLA's bits: the state's first 64 bits are the Philox key, the 128-bit counter is the
second 64 bits (low) and the first (high), one counter per four 32-bit words, the words of a
counter laid out consecutively; 8- and 16-bit draws keep the low bits of a 32-bit word,
64-bit draws join two. ``RNG_THREE_FRY`` is XLA's Threefry-2x32 generator: the first 64
bits are the key, each counter (the second 64 bits plus its index, as low and high words)
gives one two-word block. The new state advances the second 64 bits by the number of
counters used (wrapping without carry, as XLA).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
import funcgrad.ops.shape as _sh
from funcgrad.avals import ShapeDtypeStruct, get_aval
from funcgrad.backend import device_put, get_default_device
from funcgrad.ops.pure_callback import io_callback

__all__ = ["RandomAlgorithm", "rng_bit_generator", "threefry2x32_20", "rng_uniform"]

_U32 = numpy.dtype(numpy.uint32)
_U64 = numpy.dtype(numpy.uint64)
_MASK32 = numpy.uint64(0xFFFFFFFF)
_SHIFT32 = numpy.uint64(32)
# Philox-4x32's multipliers and key increments (Salmon et al. 2011), as XLA's
_M0, _M1 = numpy.uint64(0xD2511F53), numpy.uint64(0xCD9E8D57)
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
_ROUNDS = 10
# Threefry-2x32's rotations and key-schedule constant (Salmon et al. 2011, Threefish)
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = numpy.uint32(0x1BD11BDA)


class RandomAlgorithm(enum.IntEnum):
    """``jax.lax.RandomAlgorithm``: which generator ``rng_bit_generator`` runs. The default
    is Philox on CPU and GPU (XLA's choice), so ``RNG_DEFAULT`` and ``RNG_PHILOX`` agree.

    Example:
        >>> from funcgrad import lax
        >>> lax.RandomAlgorithm.RNG_DEFAULT.name
        'RNG_DEFAULT'
    """

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2


_UINTS = {numpy.dtype(t) for t in (numpy.uint8, numpy.uint16, numpy.uint32, numpy.uint64)}


def _word(x: Any, i: int) -> Any:
    """Element ``i`` of a 1-d array, as a 0-d array."""
    return _sh.reshape(_sh.static_slice(x, (i,), (i + 1,)), ())


def _u64(lo: Any, hi: Any) -> Any:
    """The uint64 ``hi:lo`` of two uint32 words."""
    return _ew.or_(_ew.convert_element_type(lo, _U64),
                   _ew.shift_left(_ew.convert_element_type(hi, _U64), _SHIFT32))


def _lo(x: Any) -> Any:
    return _ew.convert_element_type(_ew.and_(x, _MASK32), _U32)


def _hi(x: Any) -> Any:
    # (a logical shift: x is unsigned)
    return _ew.convert_element_type(_ew.shift_right(x, _SHIFT32), _U32)


def _stack(xs: list[Any], axis: int) -> Any:
    shape = tuple(get_aval(xs[0]).shape)
    new = shape[:axis] + (1,) + shape[axis:]
    return _sh.concatenate([_sh.reshape(x, new) for x in xs], axis)


def _philox(x: list[Any], k0: Any, k1: Any) -> list[Any]:
    """Philox-4x32-10 of the counter words ``x`` under the key ``(k0, k1)`` (uint32 0-d)."""
    # the round keys k + r W, computed in uint64 (no uint32 overflow) and cut to 32 bits
    k0, k1 = _ew.convert_element_type(k0, _U64), _ew.convert_element_type(k1, _U64)
    for r in range(_ROUNDS):
        rk0 = _lo(_ew.add(k0, numpy.uint64(r * _W0)))
        rk1 = _lo(_ew.add(k1, numpy.uint64(r * _W1)))
        p0 = _ew.mul(_ew.convert_element_type(x[0], _U64), _M0)
        p1 = _ew.mul(_ew.convert_element_type(x[2], _U64), _M1)
        x = [_ew.xor(_ew.xor(_hi(p1), x[1]), rk0), _lo(p1),
             _ew.xor(_ew.xor(_hi(p0), x[3]), rk1), _lo(p0)]
    return x


def _rotl(x: Any, r: int) -> Any:
    return _ew.or_(_ew.shift_left(x, numpy.uint32(r)), _ew.shift_right(x, numpy.uint32(32 - r)))


def threefry2x32_20(k0: Any, k1: Any, x0: Any, x1: Any) -> tuple[Any, Any]:
    """Threefry-2x32 with 20 rounds (Salmon et al., Random123) of the counter words
    ``(x0, x1)`` under the key ``(k0, k1)``, on uint32 arrays (additions wrap): the hash of
    JAX's default PRNG (funcgrad.random) and of XLA's ``RNG_THREE_FRY`` bit generator.

    Example:
        >>> import numpy as np
        >>> z = np.uint32(0)
        >>> [int(w) for w in threefry2x32_20(z, z, z, z)]
        [1797259609, 2579123966]
    """
    ks = (k0, k1, _ew.xor(_ew.xor(k0, k1), _PARITY))
    x0 = _ew.add(x0, ks[0])
    x1 = _ew.add(x1, ks[1])
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = _ew.add(x0, x1)
            x1 = _ew.xor(_rotl(x1, r), x0)
        # The key injection after every 4 rounds also adds the injection counter.
        x0 = _ew.add(x0, ks[(i + 1) % 3])
        x1 = _ew.add(x1, _ew.add(ks[(i + 2) % 3], numpy.uint32(i + 1)))
    return x0, x1


def _threefry_bits(w: list[Any], s1: Any, shape: tuple[int, ...], dt: numpy.dtype,
                   device: str) -> tuple[Any, int]:
    """XLA's RNG_THREE_FRY bits of ``shape`` (key: the words ``w[0], w[1]``; counters from
    ``s1``) and the number of counters used. 64-bit draws hash one counter each (in
    row-major order); narrower ones hash half as many: the shape is split on its first
    even dimension (else its largest), the two words of each counter landing next to each
    other along it, as XLA's SplitShapeIntoHalves / CombineShapePair."""
    if dt == _U64:
        n = math.prod(shape)
        c = _ew.add(s1, device_put(numpy.arange(n, dtype=_U64).reshape(shape), device))
        y0, y1 = threefry2x32_20(w[0], w[1], _lo(c), _hi(c))
        return _u64(y0, y1), n
    if not shape:
        bits, used = _threefry_bits(w, s1, (1,), dt, device)
        return _sh.reshape(bits, ()), used
    even = [i for i, d in enumerate(shape) if d % 2 == 0]
    split = even[0] if even else max(range(len(shape)), key=lambda i: (shape[i], -i))
    half = list(shape)
    half[split] = -(-shape[split] // 2)
    n_half = math.prod(half)
    c = _ew.add(s1, device_put(numpy.arange(n_half, dtype=_U64).reshape(half), device))
    y0, y1 = threefry2x32_20(w[0], w[1], _lo(c), _hi(c))
    # the two words side by side on a new axis after the split one, then merged into it
    pair = _stack([y0, y1], split + 1)
    full = list(shape)
    full[split] = 2 * half[split]
    bits = _sh.reshape(pair, tuple(full))
    if full[split] != shape[split]:
        bits = _sh.static_slice(bits, (0,) * len(shape), shape)
    return (bits if dt == _U32 else _ew.convert_element_type(bits, dt)), n_half


def rng_bit_generator(key: Any, shape: Sequence[int], dtype: Any = numpy.uint32,
                      algorithm: RandomAlgorithm = RandomAlgorithm.RNG_DEFAULT, *,
                      out_sharding: Any = None) -> tuple[Any, Any]:
    """``(new_key, bits)``: ``bits`` of ``shape`` and unsigned ``dtype`` (8 to 64 bits) from
    the generator state ``key`` (``uint32[4]`` or ``uint64[2]``), and the state to pass to
    the next call, as ``jax.lax.rng_bit_generator`` on CPU (XLA's Philox-4x32-10, the same
    bits); ``RNG_THREE_FRY`` runs XLA's Threefry-2x32 generator (its bits too).
    ``out_sharding`` is accepted (one device).

    Example:
        >>> import numpy as np
        >>> from funcgrad import lax
        >>> state, bits = lax.rng_bit_generator(np.zeros(4, np.uint32), (4,))
        >>> state.tolist(), bits.tolist()
        ([0, 0, 1, 0], [1713891541, 3781805453, 3159862348, 2600524760])
    """
    del out_sharding
    try:
        shape = tuple(int(operator_index) for operator_index in shape)
    except TypeError:
        raise TypeError(f"rng_bit_generator: shape must be a sequence of ints, got "
                        f"{shape!r}") from None
    if any(d < 0 for d in shape):
        raise ValueError(f"rng_bit_generator: shape must not have negative dimensions, got "
                         f"{shape}")
    dt = numpy.dtype(dtype)
    if dt not in _UINTS:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dt}; the bits come as "
                        "uint8, uint16, uint32 or uint64")
    algorithm = RandomAlgorithm(algorithm)
    if not hasattr(key, "shape"):
        key = numpy.asarray(key)
    ka = get_aval(key)
    if ka.dtype == _U32 and ka.shape == (4,):
        w = [_word(key, i) for i in range(4)]
        s0, s1 = _u64(w[0], w[1]), _u64(w[2], w[3])
    elif ka.dtype == _U64 and ka.shape == (2,):
        s0, s1 = _word(key, 0), _word(key, 1)
        w = [_lo(s0), _hi(s0)]
    else:
        raise TypeError(f"rng_bit_generator: key must be uint32[4] or uint64[2], got "
                        f"{ka.str_short()}")
    n = math.prod(shape)
    n32 = 2 * n if dt == _U64 else n
    if algorithm == RandomAlgorithm.RNG_THREE_FRY:
        bits, nv = _threefry_bits(w, s1, shape, dt, ka.device or get_default_device())
        return _new_state(ka, w, s0, s1, nv), bits
    nv = -(-n32 // 4)  # Philox counters: four 32-bit words each
    iota = device_put(numpy.arange(nv, dtype=_U64), ka.device or get_default_device())
    lo = _ew.add(s1, iota)
    # the 128-bit counter (s0:s1) + i carries into s0 when s1 + i wraps
    hi = _ew.add(s0, _ew.convert_element_type(_ew.lt(lo, s1), _U64))
    x = _philox([_lo(lo), _hi(lo), _lo(hi), _hi(hi)], w[0], w[1])
    words = _sh.reshape(_stack(x, 1), (4 * nv,))
    if dt == _U64:
        pairs = _sh.reshape(words, (2 * nv, 2))
        bits = _u64(_sh.static_slice(pairs, (0, 0), (2 * nv, 1)),
                    _sh.static_slice(pairs, (0, 1), (2 * nv, 2)))
        bits = _sh.reshape(bits, (2 * nv,))
    else:
        bits = words if dt == _U32 else _ew.convert_element_type(words, dt)
    bits = _sh.reshape(_sh.static_slice(bits, (0,), (n,)), shape)
    return _new_state(ka, w, s0, s1, nv), bits


def _new_state(ka: Any, w: list[Any], s0: Any, s1: Any, nv: int) -> Any:
    """The state after ``nv`` counters: the second 64 bits advanced (wrapping without
    carry, as XLA), in the state's own layout."""
    s1_new = _ew.add(s1, numpy.uint64(nv))
    if ka.dtype == _U64:
        return _stack([s0, s1_new], 0)
    return _stack([w[0], w[1], _lo(s1_new), _hi(s1_new)], 0)


# rng_uniform's hidden state: XLA's RngUniform is stateful per process, so is this generator
# (seeded from the OS, never reseeded)
_HOST_RNG = numpy.random.default_rng()


def rng_uniform(a: Any, b: Any, shape: Sequence[int]) -> Any:
    """Stateful uniform draws in ``[a, b)`` of ``shape`` (``jax.lax.rng_uniform``, which JAX
    marks experimental and discourages): each call, eager or under ``jit``, gives new values
    from a hidden host generator (not reproducible; use :mod:`funcgrad.random` for keyed
    draws). ``a`` and ``b`` are scalars of one dtype (float or integer), as JAX requires. Not
    differentiable.

    Example:
        >>> import numpy as np
        >>> from funcgrad import lax
        >>> x = lax.rng_uniform(np.float32(0), np.float32(1), (3,))
        >>> x.shape, x.dtype, bool(((x >= 0) & (x < 1)).all())
        ((3,), dtype('float32'), True)
    """
    aa, ba = get_aval(a), get_aval(b)
    if aa.dtype != ba.dtype:
        raise ValueError(f"Arguments to rng_uniform must have identical dtypes, got "
                         f"{aa.dtype} and {ba.dtype}.")
    if aa.shape != () or ba.shape != ():
        raise ValueError(f"Arguments to rng_uniform must be scalars; got shapes {aa.shape} "
                         f"and {ba.shape}.")
    dt = aa.dtype
    if dt.kind not in "fiu":
        raise TypeError(f"rng_uniform: a and b must be floats or integers, got {dt}")
    out_shape = tuple(int(d) for d in shape)

    def draw(lo: Any, hi: Any) -> Any:
        lo, hi = numpy.asarray(lo), numpy.asarray(hi)
        if dt.kind == "f":
            u = _HOST_RNG.random(out_shape)
            return (lo + (hi - lo) * u).astype(dt)
        return _HOST_RNG.integers(lo, hi, out_shape, dtype=dt, endpoint=False)

    return io_callback(draw, ShapeDtypeStruct(out_shape, dt), a, b)
