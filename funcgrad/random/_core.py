"""Keys, the Threefry-2x32 hash, ``split``/``fold_in`` and raw random bits.

A raw key is a plain ``uint32`` array of shape ``(2,)``; a typed key (``key(seed)``) is a
:class:`~funcgrad.random._keys.PRNGKeyArray` over such data, unwrapped by ``check_key``. Everything is written with funcgrad
primitives on ``uint32`` arrays (additions wrap modulo 2**32 as array arithmetic does), so keys
may be concrete, traced under ``jit`` or batched under ``vmap``.

Bit layout: JAX's default ``threefry2x32`` implementation with ``jax_threefry_partitionable``
on (JAX's default since 0.5): element ``i`` (row-major) of a draw of ``shape`` hashes the
64-bit counter ``i`` split into ``(high word, low word)``; ``split`` keeps the two output words,
``random_bits`` XORs them for 32-bit draws and concatenates them (high, low) for 64-bit ones.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
import funcgrad.ops.shape as _sh
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device
from funcgrad.random._keys import PRNGKeyArray
from funcgrad.random._reuse import consumes

__all__ = [
    "PRNGKey", "key", "key_data", "wrap_key_data", "key_impl", "split", "fold_in", "bits",
    "threefry_2x32", "check_key", "shape_arg", "random_bits", "split2",
]

_U32 = numpy.dtype(numpy.uint32)
_U64 = numpy.dtype(numpy.uint64)
_MASK32 = 0xFFFFFFFF
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = numpy.uint32(0x1BD11BDA)  # Threefish's key-schedule constant
_UINT_FOR_BITS = {8: numpy.dtype(numpy.uint8), 16: numpy.dtype(numpy.uint16), 32: _U32, 64: _U64}

Array = Any


# ---------------------------------------------------------------------------------------------
# Argument checking


def check_key(name: str, key: Any) -> Any:
    """The raw data of one key (``uint32``, shape ``(2,)``): ``key`` itself when raw, the data
    of a typed key array of shape ``()``; errors name ``name``."""
    if isinstance(key, PRNGKeyArray):
        if key.shape != ():
            raise ValueError(
                f"{name} accepts a single key, but was given a key array of shape "
                f"{key.shape} != (). Use funcgrad.vmap for batching.")
        return key._data
    if isinstance(key, list | tuple):
        raise TypeError(
            f"{name}: key must be a uint32 array of shape (2,) (as made by "
            f"funcgrad.random.PRNGKey(seed)), got a {type(key).__name__}"
        )
    try:
        aval = get_aval(key)
    except TypeError:
        raise TypeError(
            f"{name}: key must be a uint32 array of shape (2,) (as made by "
            f"funcgrad.random.PRNGKey(seed)), got {type(key).__name__}"
        ) from None
    if aval.dtype != _U32:
        raise TypeError(
            f"{name}: key must have dtype uint32 (as made by funcgrad.random.PRNGKey(seed)), "
            f"got {aval.dtype}"
        )
    if aval.shape != (2,):
        hint = (" A batch of keys (e.g. from split(key, n)) is used through "
                "funcgrad.vmap, or one row at a time." if aval.ndim > 1 and
                aval.shape[-1] == 2 else "")
        raise ValueError(f"{name}: key must have shape (2,), got shape {aval.shape}.{hint}")
    return key


def shape_arg(name: str, shape: Any) -> tuple[int, ...]:
    """``shape`` (an int or a sequence of ints) as a tuple of non-negative ints."""
    if isinstance(shape, int | numpy.integer) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        out = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(
            f"{name}: shape must be a tuple of Python ints, got {shape!r}"
        ) from None
    if any(s < 0 for s in out):
        raise ValueError(f"{name}: shape must not have negative dimensions, got {out}")
    return out


def _device_of(x: Any) -> str:
    return get_aval(x).device or get_default_device()


def _word(key: Any, i: int) -> Any:
    return _sh.squeeze(_sh.static_slice(key, (i,), (i + 1,)), (0,))


# ---------------------------------------------------------------------------------------------
# The hash


def _rotl(x: Any, r: int) -> Any:
    return _ew.or_(_ew.shift_left(x, numpy.uint32(r)), _ew.shift_right(x, numpy.uint32(32 - r)))


def _threefry(k0: Any, k1: Any, x0: Any, x1: Any) -> tuple[Any, Any]:
    """Threefry-2x32 with 20 rounds (Salmon et al., Random123) on uint32 words."""
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


def threefry_2x32(keypair: Any, count: Any) -> Array:
    """The Threefry-2x32 (20 rounds) hash of the ``uint32`` array ``count`` under ``keypair``.

    As JAX's: ``count`` is flattened and cut in two halves (padded with a zero when its size
    is odd) which are hashed pairwise as the two counter words; the result has ``count``'s
    shape. With ``count = [c0, c1]`` this is Random123's ``threefry2x32_20(ctr, key)``.

    Example:
        >>> import numpy as np
        >>> threefry_2x32(np.zeros(2, np.uint32), np.zeros(2, np.uint32)).tolist()
        [1797259609, 2579123966]
    """
    keypair = check_key("threefry_2x32", keypair)
    ca = get_aval(count)
    if ca.dtype != _U32:
        raise TypeError(f"threefry_2x32: count must have dtype uint32, got {ca.dtype}")
    size = int(numpy.prod(ca.shape, dtype=numpy.int64))
    if size == 0:
        return count
    flat = _sh.reshape(count, (size,))
    odd = size % 2
    if odd:
        pad = _ew.mul(_sh.static_slice(flat, (0,), (1,)), numpy.uint32(0))
        flat = _sh.concatenate([flat, pad], 0)
    half = (size + odd) // 2
    y0, y1 = _threefry(_word(keypair, 0), _word(keypair, 1),
                       _sh.static_slice(flat, (0,), (half,)), _sh.static_slice(flat, (half,), (2 * half,)))
    out = _sh.concatenate([y0, y1], 0)
    if odd:
        out = _sh.static_slice(out, (0,), (size,))
    return _sh.reshape(out, ca.shape)


_COUNTS_CACHE: dict[tuple[tuple[int, ...], str], tuple[Any, Any]] = {}


def _counts(shape: tuple[int, ...], device: str) -> tuple[Any, Any]:
    """(high, low) 32-bit words of the row-major index of every element of ``shape``.

    Built on the host from the static shape and put on the key's device, so that a key on
    any device (or traced) meets counters on its own device.
    """
    cached = _COUNTS_CACHE.get((shape, device))
    if cached is not None:
        return cached
    size = int(numpy.prod(shape, dtype=numpy.int64))
    idx = numpy.arange(size, dtype=numpy.uint64).reshape(shape)
    hi = numpy.asarray((idx >> numpy.uint64(32)).astype(numpy.uint32))
    lo = numpy.asarray((idx & numpy.uint64(_MASK32)).astype(numpy.uint32))
    hi.flags.writeable = lo.flags.writeable = False  # shared between draws: never written
    out = (device_put(hi, device), device_put(lo, device))
    if size <= 4096:  # small counters are reused by every draw (e.g. scalars in loops)
        _COUNTS_CACHE[(shape, device)] = out
    return out


def _hash_shape(key: Any, shape: tuple[int, ...]) -> tuple[Any, Any]:
    hi, lo = _counts(shape, _device_of(key))
    return _threefry(_word(key, 0), _word(key, 1), hi, lo)


def random_bits(key: Any, bit_width: int, shape: tuple[int, ...]) -> Array:
    """Unsigned random bits of ``bit_width`` (8, 16, 32, 64) and ``shape`` (key checked)."""
    b1, b2 = _hash_shape(key, shape)
    dt = _UINT_FOR_BITS[bit_width]
    if bit_width == 64:
        hi = _ew.convert_element_type(b1, _U64)
        lo = _ew.convert_element_type(b2, _U64)
        return _ew.or_(_ew.shift_left(hi, numpy.uint64(32)), lo)
    out = _ew.xor(b1, b2)
    return out if bit_width == 32 else _ew.convert_element_type(out, dt)


def split2(key: Any, num: int = 2) -> list[Any]:
    """``split(key, num)`` as a list of ``num`` keys (key not checked)."""
    b1, b2 = _hash_shape(key, (num,))
    return [_sh.concatenate([_sh.static_slice(b1, (i,), (i + 1,)), _sh.static_slice(b2, (i,), (i + 1,))], 0)
            for i in range(num)]


# ---------------------------------------------------------------------------------------------
# Public key functions


def _seed_words(seed: Any, name: str = "PRNGKey") -> tuple[Any, Any]:
    if isinstance(seed, bool | numpy.bool_):
        raise TypeError(f"{name}: seed must be an integer, got a bool")
    if isinstance(seed, int | numpy.integer):
        s = int(seed)
        if not -(2 ** 63) <= s < 2 ** 64:
            raise OverflowError(f"{name}: seed {s} does not fit in 64 bits")
        if isinstance(seed, numpy.integer) and seed.dtype.itemsize <= 4:
            return numpy.uint32(0), numpy.uint32(s % 2 ** 32)  # as the array case below
        s %= 2 ** 64
        return numpy.uint32(s >> 32), numpy.uint32(s & _MASK32)
    try:
        aval = get_aval(seed)
    except TypeError:
        raise TypeError(
            f"{name}: seed must be an integer, got {type(seed).__name__}"
        ) from None
    if aval.shape != ():
        raise TypeError(f"{name}: seed must be a scalar, got an array of shape {aval.shape}"
                        " (make one key per seed with funcgrad.vmap)")
    if aval.dtype.kind not in "iu":
        raise TypeError(f"{name}: seed must be an integer, got dtype {aval.dtype}")
    if aval.dtype.itemsize <= 4:
        # As JAX: a 32-bit seed fills the low word only (its sign does not reach the high one).
        lo = _ew.convert_element_type(seed, _U32)
        return _ew.mul(lo, numpy.uint32(0)), lo
    u = _ew.convert_element_type(seed, _U64)
    hi = _ew.convert_element_type(_ew.shift_right(u, numpy.uint64(32)), _U32)
    return hi, _ew.convert_element_type(u, _U32)


_IMPLS = (None, "threefry2x32", "threefry")


def check_impl(name: str, impl: Any) -> None:
    """JAX's ``impl=``: only the default Threefry-2x32 implementation exists here."""
    if impl not in _IMPLS and getattr(impl, "name", None) not in _IMPLS[1:]:
        raise ValueError(f"{name}: impl={impl!r} is not available; funcgrad implements "
                         "'threefry2x32' (JAX's default) only")


def PRNGKey(seed: Any, *, impl: Any = None) -> Array:  # noqa: N802  (JAX's name)
    """A key from an integer seed: ``uint32`` array ``[seed >> 32, seed & 0xFFFFFFFF]``.

    ``impl``: JAX's; only ``'threefry2x32'`` (the default) is available.

    Python ints may be anything in ``[-2**63, 2**64)`` (negative ones as their 64-bit two's
    complement); integer arrays (traced ones too) must be scalars. This is JAX's raw key with
    64-bit seeds (``jax_enable_x64``).

    Example:
        >>> PRNGKey(42).tolist()
        [0, 42]
    """
    return _raw_key(seed, impl, "PRNGKey")


def _raw_key(seed: Any, impl: Any, name: str) -> Array:
    check_impl(name, impl)
    hi, lo = _seed_words(seed, name)
    if isinstance(hi, numpy.generic):
        # On the default device, as JAX's keys: draws from it then live there too (a host key
        # gave host draws that a GPU program could not mix with its arrays).
        return device_put(numpy.array([hi, lo], dtype=numpy.uint32))
    return _sh.concatenate([_sh.reshape(hi, (1,)), _sh.reshape(lo, (1,))], 0)


def key(seed: Any, *, impl: Any = None) -> PRNGKeyArray:
    """A typed key from an integer seed: a key array of shape ``()`` and dtype ``key<fry>``
    (JAX's ``jax.random.key``) over the data :func:`PRNGKey` gives for the same seed.

    Samplers take typed and raw keys alike and draw the same numbers from both; ``split`` and
    ``fold_in`` of a typed key give typed keys. :func:`key_data` is its ``uint32`` data.

    Example:
        >>> k = key(7)
        >>> k.shape, str(k.dtype), key_data(k).tolist()
        ((), 'key<fry>', [0, 7])
    """
    return PRNGKeyArray(_raw_key(seed, impl, "key"))


def _check_key_data(name: str, data: Any) -> None:
    a = get_aval(data)
    if a.dtype != _U32 or a.ndim == 0 or a.shape[-1] != 2:
        raise TypeError(
            f"{name}: expected uint32 key data of shape (..., 2), got {a.str_short()}"
        )


def key_data(keys: Any) -> Array:
    """The ``uint32`` data of keys: shape ``(*keys.shape, 2)`` for a typed key array; raw
    keys (``uint32`` arrays of shape ``(..., 2)``) are their own data.

    Example:
        >>> key_data(key(1)).tolist(), key_data(PRNGKey(1)).tolist()
        ([0, 1], [0, 1])
    """
    if isinstance(keys, PRNGKeyArray):
        return keys._data
    _check_key_data("key_data", keys)
    return keys


def wrap_key_data(key_bits_array: Any, *, impl: Any = None) -> PRNGKeyArray:
    """Typed keys from their ``uint32`` data of shape ``(..., 2)``: a key array of shape
    ``key_bits_array.shape[:-1]`` (the inverse of :func:`key_data`).

    Example:
        >>> import numpy as np
        >>> k = wrap_key_data(np.array([0, 5], np.uint32))
        >>> k.shape, key_data(k).tolist()
        ((), [0, 5])
    """
    check_impl("wrap_key_data", impl)
    if isinstance(key_bits_array, PRNGKeyArray):
        raise TypeError("wrap_key_data: expected uint32 key data, got a typed key array "
                        "(it is already wrapped; key_data(keys) gives its data)")
    _check_key_data("wrap_key_data", key_bits_array)
    return PRNGKeyArray(key_bits_array)


def key_impl(keys: Any) -> str:
    """The name of the implementation of ``keys`` (typed or raw): ``'threefry2x32'``, the only
    one funcgrad has (JAX's ``key_impl``).

    Example:
        >>> key_impl(key(0)), key_impl(PRNGKey(0))
        ('threefry2x32', 'threefry2x32')
    """
    if not isinstance(keys, PRNGKeyArray):
        _check_key_data("key_impl", keys)
    return "threefry2x32"


@consumes
def split(key: Any, num: int | Sequence[int] = 2) -> Array:
    """``num`` new independent keys from ``key``: raw keys of shape ``(num, 2)`` (``(*num,
    2)`` for a tuple) from a raw key, a key array of shape ``(num,)`` from a typed one.

    Example:
        >>> split(PRNGKey(0)).tolist()
        [[1797259609, 2579123966], [928981903, 3453687069]]
        >>> split(key(0), 3).shape
        (3,)
    """
    typed = isinstance(key, PRNGKeyArray)
    key = check_key("split", key)
    shape = shape_arg("split", num)
    b1, b2 = _hash_shape(key, shape)
    out = _sh.concatenate([_sh.reshape(b1, (*shape, 1)), _sh.reshape(b2, (*shape, 1))],
                          len(shape))
    return PRNGKeyArray(out) if typed else out


def fold_in(key: Any, data: Any) -> Array:
    """A new key from ``key`` and an integer ``data``, e.g. a step number (typed when ``key``
    is).

    A Python int must lie in ``[0, 2**32)``; a NumPy integer or integer array scalar (traced
    too) is cast to ``uint32`` (wrapping, keeping its low 32 bits), and a bool counts as 0 or
    1, as in JAX. Equal to hashing the counter ``(0, data)``.

    Example:
        >>> fold_in(PRNGKey(0), 1).tolist()
        [928981903, 3453687069]
    """
    typed = isinstance(key, PRNGKeyArray)
    key = check_key("fold_in", key)
    if isinstance(data, int | numpy.integer | numpy.bool_):
        d = int(data)
        if isinstance(data, int) and not isinstance(data, bool) and not 0 <= d < 2 ** 32:
            raise OverflowError(f"fold_in: data {d} is out of bounds for uint32")
        lo = numpy.array(d % 2 ** 32, dtype=numpy.uint32)  # NumPy integers wrap, as arrays
        if _device_of(key) != "cpu":
            lo = device_put(lo, _device_of(key))
    else:
        try:
            a = get_aval(data)
        except TypeError:
            raise TypeError(
                f"fold_in: data must be an integer, got {type(data).__name__}"
            ) from None
        if a.shape != () or a.dtype.kind not in "iub":
            raise TypeError(f"fold_in: data must be an integer scalar, got {a.str_short()}")
        lo = _ew.convert_element_type(data, _U32)
    y0, y1 = _threefry(_word(key, 0), _word(key, 1), _ew.mul(lo, numpy.uint32(0)), lo)
    out = _sh.concatenate([_sh.reshape(y0, (1,)), _sh.reshape(y1, (1,))], 0)
    return PRNGKeyArray(out) if typed else out


@consumes
def bits(key: Any, shape: int | Sequence[int] = (), dtype: Any = None) -> Array:
    """Uniform random bits: an unsigned-integer array of ``shape`` (default dtype ``uint64``).

    Example:
        >>> import numpy as np
        >>> bits(PRNGKey(0), (2,), np.uint32).dtype
        dtype('uint32')
    """
    key = check_key("bits", key)
    shape = shape_arg("bits", shape)
    dt = _U64 if dtype is None else numpy.dtype(dtype)
    if dt.kind != "u":
        raise TypeError(f"bits: dtype must be an unsigned integer type, got {dt}")
    return random_bits(key, dt.itemsize * 8, shape)
