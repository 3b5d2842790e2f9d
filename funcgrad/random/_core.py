"""Keys, the Threefry-2x32 hash, ``split``/``fold_in`` and raw random bits.

A raw key is a plain ``uint32`` array of shape ``(2,)``; a typed key (``key(seed)``) is a
:class:`~funcgrad.random._keys.PRNGKeyArray` over such data, unwrapped by ``check_key``. Everything is written with funcgrad
primitives on ``uint32`` arrays (additions wrap modulo 2**32 as array arithmetic does), so keys
may be concrete, traced under ``jit`` or batched under ``vmap``.

Bit layout: JAX's default ``threefry2x32`` implementation with ``jax_threefry_partitionable``
on (JAX's default since 0.5): element ``i`` (row-major) of a draw of ``shape`` hashes the
64-bit counter ``i`` split into ``(high word, low word)``; ``split`` keeps the two output words,
``random_bits`` XORs them for 32-bit draws and concatenates them (high, low) for 64-bit ones.
With the flag off, JAX's original layout (``_threefry_random_bits_original``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any, NamedTuple

import numpy

import funcgrad.ops.elementwise as _ew
import funcgrad.ops.shape as _sh
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device, operator_index
from funcgrad.config import register_flag
from funcgrad.core import Tracer, concrete_or_error
from funcgrad.errors import ConcretizationError
from funcgrad.lax._rng import rng_bit_generator
from funcgrad.lax._rng import threefry2x32_20 as _threefry
from funcgrad.numpy._creation import with_out_sharding
from funcgrad.random._keys import (
    DEFAULT_IMPL,
    IMPLS,
    KeyDType,
    PRNGKeyArray,
    default_impl,
    impl_name,
)
from funcgrad.random._reuse import consumes

__all__ = [
    "PRNGKey", "key", "key_data", "wrap_key_data", "key_impl", "split", "fold_in", "bits",
    "threefry_2x32", "check_key", "shape_arg", "random_bits", "split2",
]

_U32 = numpy.dtype(numpy.uint32)
_U64 = numpy.dtype(numpy.uint64)
_MASK32 = 0xFFFFFFFF
_UINT_FOR_BITS = {8: numpy.dtype(numpy.uint8), 16: numpy.dtype(numpy.uint16), 32: _U32, 64: _U64}

Array = Any

#: JAX's flag jax_threefry_partitionable (on by default since JAX 0.5): off, split and bits
#: use JAX's original layout (the counters 0, 1, ..., n - 1 hashed as one array), what JAX
#: drew before 0.5. Read when a key function runs (or is traced: a jitted function keeps the
#: layout it was traced with until its cache is cleared).
_partitionable: ContextVar[bool] = ContextVar("funcgrad_threefry_partitionable", default=True)
register_flag("jax_threefry_partitionable", _partitionable.get,
              lambda v: _partitionable.set(bool(v)))


# ---------------------------------------------------------------------------------------------
# Argument checking


def check_key(name: str, key: Any) -> Any:
    """One key as the samplers take it; errors name ``name``.

    A Threefry key (JAX's default) is its raw data (``uint32``, shape ``(2,)``): ``key``
    itself when raw, the data of a typed key array of shape ``()``. A key of another
    implementation ('rbg', 'unsafe_rbg') stays a typed key array of shape ``()``, which
    :func:`random_bits` and :func:`split2` dispatch on. Raw keys are keys of the
    ``jax_default_prng_impl``, as in JAX.
    """
    if isinstance(key, PRNGKeyArray):
        if key.shape != ():
            raise ValueError(
                f"{name} accepts a single key, but was given a key array of shape "
                f"{key.shape} != (). Use funcgrad.vmap for batching.")
        return key._data if key._impl == DEFAULT_IMPL else key
    impl = default_impl()
    data = _check_raw_key(name, key, IMPLS[impl][1])
    return data if impl == DEFAULT_IMPL else PRNGKeyArray(data, impl)


def _check_raw_key(name: str, key: Any, words: int = 2) -> Any:
    """``key`` checked to be raw key data: ``uint32`` of shape ``(words,)``."""
    made_by = "funcgrad.random.PRNGKey(seed)"
    if isinstance(key, list | tuple):
        raise TypeError(
            f"{name}: key must be a uint32 array of shape ({words},) (as made by {made_by}), "
            f"got a {type(key).__name__}"
        )
    try:
        aval = get_aval(key)
    except TypeError:
        raise TypeError(
            f"{name}: key must be a uint32 array of shape ({words},) (as made by {made_by}), "
            f"got {type(key).__name__}"
        ) from None
    if aval.dtype != _U32:
        raise TypeError(
            f"{name}: key must have dtype uint32 (as made by {made_by}), got {aval.dtype}"
        )
    if aval.shape != (words,):
        hint = (" A batch of keys (e.g. from split(key, n)) is used through "
                "funcgrad.vmap, or one row at a time." if aval.ndim > 1 and
                aval.shape[-1] == words else "")
        if aval.shape[-1:] in ((2,), (4,)) and aval.shape[-1] != words:
            hint += (f" Raw keys of {aval.shape[-1]} words belong to another PRNG "
                     f"implementation than the default {default_impl()!r}: wrap them with "
                     "funcgrad.random.wrap_key_data(data, impl=...).")
        raise ValueError(f"{name}: key must have shape ({words},), got shape {aval.shape}.{hint}")
    return key


def shape_arg(name: str, shape: Any) -> tuple[int, ...]:
    """``shape`` (an int or a sequence of ints) as a tuple of non-negative ints."""
    if isinstance(shape, Tracer):
        shape = concrete_or_error(shape, f"{name}: the shape")
    if isinstance(shape, int | numpy.integer) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        out = tuple(operator_index(concrete_or_error(s, f"{name}: the shape")) for s in shape)
    except ConcretizationError:
        raise  # a traced entry: that error names it and says how to fix it
    except TypeError:
        raise TypeError(
            f"{name}: shape must be a tuple of Python ints, got {shape!r}"
        ) from None
    if any(s < 0 for s in out):
        raise ValueError(f"{name}: shape must not have negative dimensions, got {out}")
    return out


def _device_of(x: Any) -> str:
    if isinstance(x, PRNGKeyArray):
        return x.device
    return get_aval(x).device or get_default_device()


def _word(key: Any, i: int) -> Any:
    return _sh.squeeze(_sh.static_slice(key, (i,), (i + 1,)), (0,))


# ---------------------------------------------------------------------------------------------
# The hash


# (threefry2x32_20 itself lives with lax.rng_bit_generator, whose RNG_THREE_FRY runs it too)


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
    keypair = _check_raw_key("threefry_2x32", keypair)
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
    if isinstance(key, PRNGKeyArray):
        return _IMPL_OPS[key._impl].random_bits(key._data, bit_width, shape)
    return _threefry_random_bits(key, bit_width, shape)


def _iota_u32(n: int, like: Any) -> Any:
    """``0, 1, ..., n - 1`` as uint32 counters on ``like``'s device."""
    return device_put(numpy.arange(n, dtype=_U32), _device_of(like))


def _threefry_random_bits_original(key: Any, bit_width: int,
                                   shape: tuple[int, ...]) -> Array:
    """JAX's bits without jax_threefry_partitionable: ``ceil(bit_width * size / 32)``
    counters hashed as one array; 64-bit draws join its two halves (high, low), 8/16-bit
    ones split each word from its low bits up."""
    size = math.prod(shape)
    count = -(-bit_width * size // 32)
    bits = threefry_2x32(key, _iota_u32(count, key))
    dt = _UINT_FOR_BITS[bit_width]
    if bit_width == 64:
        half = count // 2
        hi = _ew.convert_element_type(_sh.static_slice(bits, (0,), (half,)), _U64)
        lo = _ew.convert_element_type(_sh.static_slice(bits, (half,), (count,)), _U64)
        bits = _ew.or_(_ew.shift_left(hi, numpy.uint64(32)), lo)
    elif bit_width < 32:
        per = 32 // bit_width
        words = _sh.broadcast_to(_sh.reshape(bits, (count, 1)), (count, per))
        shifts = device_put(numpy.broadcast_to(
            numpy.arange(per, dtype=_U32) * numpy.uint32(bit_width), (count, per)),
            _device_of(key))
        parts = _ew.and_(_ew.shift_right(words, shifts), numpy.uint32((1 << bit_width) - 1))
        bits = _sh.static_slice(_sh.reshape(_ew.convert_element_type(parts, dt),
                                            (count * per,)), (0,), (size,))
    return _sh.reshape(bits, shape)


def _threefry_random_bits(key: Any, bit_width: int, shape: tuple[int, ...]) -> Array:
    if not _partitionable.get():
        return _threefry_random_bits_original(key, bit_width, shape)
    b1, b2 = _hash_shape(key, shape)
    dt = _UINT_FOR_BITS[bit_width]
    if bit_width == 64:
        hi = _ew.convert_element_type(b1, _U64)
        lo = _ew.convert_element_type(b2, _U64)
        return _ew.or_(_ew.shift_left(hi, numpy.uint64(32)), lo)
    out = _ew.xor(b1, b2)
    return out if bit_width == 32 else _ew.convert_element_type(out, dt)


def split2(key: Any, num: int = 2) -> list[Any]:
    """``split(key, num)`` as a list of ``num`` keys (key as :func:`check_key` gives it)."""
    if isinstance(key, PRNGKeyArray):
        keys = _IMPL_OPS[key._impl].split(key._data, (num,))
        return [key._rewrap(_sh.reshape(_sh.static_slice(keys, (i, 0), (i + 1, 4)), (4,)))
                for i in range(num)]
    if not _partitionable.get():
        keys = _threefry_split(key, (num,))
        return [_sh.reshape(_sh.static_slice(keys, (i, 0), (i + 1, 2)), (2,))
                for i in range(num)]
    b1, b2 = _hash_shape(key, (num,))
    return [_sh.concatenate([_sh.static_slice(b1, (i,), (i + 1,)), _sh.static_slice(b2, (i,), (i + 1,))], 0)
            for i in range(num)]


# ---------------------------------------------------------------------------------------------
# Public key functions


def _seed_words(seed: Any, name: str = "PRNGKey") -> tuple[Any, Any]:
    if isinstance(seed, numpy.bool_):
        # a Python bool is an int (JAX's PRNGKey(True) is [0, 1]); NumPy's bool is not
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


def PRNGKey(seed: Any, *, impl: Any = None) -> Array:  # noqa: N802  (JAX's name)
    """A raw key from an integer seed: ``uint32`` array ``[seed >> 32, seed & 0xFFFFFFFF]``.

    ``impl``: JAX's PRNG implementation (default: the ``jax_default_prng_impl`` flag,
    ``'threefry2x32'``); ``'rbg'`` and ``'unsafe_rbg'`` keys are four words, that pair twice.
    A raw key is used as a key of the default implementation, as in JAX: raw ``'rbg'`` keys
    need that flag set (or :func:`wrap_key_data`).

    Python ints may be anything in ``[-2**63, 2**64)`` (negative ones as their 64-bit two's
    complement); integer arrays (traced ones too) must be scalars. This is JAX's raw key with
    64-bit seeds (``jax_enable_x64``).

    Example:
        >>> PRNGKey(42).tolist(), PRNGKey(42, impl="rbg").tolist()
        ([0, 42], [0, 42, 0, 42])
    """
    return _IMPL_OPS[impl_name("PRNGKey", impl)].seed(seed, "PRNGKey")


def _threefry_seed(seed: Any, name: str) -> Array:
    hi, lo = _seed_words(seed, name)
    if isinstance(hi, numpy.generic):
        # On the default device, as JAX's keys: draws from it then live there too (a host key
        # gave host draws that a GPU program could not mix with its arrays).
        return device_put(numpy.array([hi, lo], dtype=numpy.uint32))
    return _sh.concatenate([_sh.reshape(hi, (1,)), _sh.reshape(lo, (1,))], 0)


def _impl_or_dtype(name: str, impl: Any, dtype: Any) -> str:
    """JAX's ``impl=`` or ``dtype=`` (a key dtype such as ``key_dtype("rbg")``), not both."""
    if dtype is not None:
        if impl is not None:
            raise ValueError(f"{name}: pass impl= or dtype=, not both")
        if not isinstance(dtype, KeyDType):
            raise TypeError(f"{name}: dtype must be a key dtype (funcgrad.random.key_dtype("
                            f"...)), got {dtype!r}")
        return dtype.impl
    return impl_name(name, impl)


def key(seed: Any, *, impl: Any = None, dtype: Any = None) -> PRNGKeyArray:
    """A typed key from an integer seed: a key array of shape ``()`` (JAX's
    ``jax.random.key``) over the data :func:`PRNGKey` gives for the same seed and ``impl``;
    its dtype is ``key<fry>`` for the default ``'threefry2x32'``, ``key<rbg>`` for ``'rbg'``
    and ``key<urbg>`` for ``'unsafe_rbg'``; ``dtype=`` (one of those key dtypes) names the
    implementation instead, as in JAX.

    Samplers take typed and raw keys alike and draw the same numbers from both; ``split`` and
    ``fold_in`` of a typed key give typed keys. :func:`key_data` is its ``uint32`` data.

    Example:
        >>> k = key(7)
        >>> k.shape, str(k.dtype), key_data(k).tolist()
        ((), 'key<fry>', [0, 7])
        >>> str(key(7, impl="rbg").dtype)
        'key<rbg>'
    """
    name = _impl_or_dtype("key", impl, dtype)
    return PRNGKeyArray(_IMPL_OPS[name].seed(seed, "key"), name)


def _check_key_data(name: str, data: Any, impl: str) -> None:
    a = get_aval(data)
    words = IMPLS[impl][1]
    if a.dtype != _U32 or a.ndim == 0 or a.shape[-1] != words:
        raise TypeError(
            f"{name}: expected uint32 key data of shape (..., {words}) for PRNG implementation "
            f"{impl!r}, got {a.str_short()}"
        )


def key_data(keys: Any) -> Array:
    """The ``uint32`` data of keys: shape ``(*keys.shape, 2)`` for a typed key array
    (``(*keys.shape, 4)`` for 'rbg' and 'unsafe_rbg' keys); raw keys (``uint32`` arrays of
    shape ``(..., 2)``) are their own data.

    Example:
        >>> key_data(key(1)).tolist(), key_data(PRNGKey(1)).tolist()
        ([0, 1], [0, 1])
    """
    if isinstance(keys, PRNGKeyArray):
        return keys._data
    _check_key_data("key_data", keys, default_impl())
    return keys


def wrap_key_data(key_bits_array: Any, *, impl: Any = None, dtype: Any = None) -> PRNGKeyArray:
    """Typed keys from their ``uint32`` data of shape ``(..., 2)`` (``(..., 4)`` for
    ``impl='rbg'`` or ``'unsafe_rbg'``; or ``dtype=``, a key dtype): a key array of shape
    ``key_bits_array.shape[:-1]`` (the inverse of :func:`key_data`).

    Example:
        >>> import numpy as np
        >>> k = wrap_key_data(np.array([0, 5], np.uint32))
        >>> k.shape, key_data(k).tolist()
        ((), [0, 5])
    """
    name = _impl_or_dtype("wrap_key_data", impl, dtype)
    if isinstance(key_bits_array, PRNGKeyArray):
        raise TypeError("wrap_key_data: expected uint32 key data, got a typed key array "
                        "(it is already wrapped; key_data(keys) gives its data)")
    if not hasattr(key_bits_array, "shape"):
        key_bits_array = numpy.asarray(key_bits_array)
    _check_key_data("wrap_key_data", key_bits_array, name)
    return PRNGKeyArray(key_bits_array, name)


def key_impl(keys: Any) -> str:
    """The name of the PRNG implementation of ``keys``: a typed key's own, the
    ``jax_default_prng_impl`` for raw keys (JAX's ``key_impl``).

    Example:
        >>> key_impl(key(0)), key_impl(PRNGKey(0)), key_impl(key(0, impl="unsafe_rbg"))
        ('threefry2x32', 'threefry2x32', 'unsafe_rbg')
    """
    if isinstance(keys, PRNGKeyArray):
        return keys._impl
    _check_key_data("key_impl", keys, default_impl())
    return default_impl()


def _as_typed(name: str, key: Any) -> tuple[PRNGKeyArray, bool]:
    """``key`` (one key) as a typed key of its implementation, and whether it was typed."""
    if isinstance(key, PRNGKeyArray):
        check_key(name, key)
        return key, True
    impl = default_impl()
    return PRNGKeyArray(_check_raw_key(name, key, IMPLS[impl][1]), impl), False


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
    typed, was_typed = _as_typed("split", key)
    shape = shape_arg("split", num)
    out = _IMPL_OPS[typed._impl].split(typed._data, shape)
    return typed._rewrap(out) if was_typed else out


def _fold_in_data(key: Any, data: Any) -> Any:
    """``data`` of ``fold_in`` as a ``uint32`` scalar on ``key``'s device.

    As JAX (``jnp.asarray(data, dtype='uint32')``): a Python number is truncated to an int
    that must fit ``uint32``; NumPy and array scalars, integer or float, are cast (integers
    wrap, floats truncate); complex numbers and non-scalar arrays are refused."""
    if isinstance(data, complex | numpy.complexfloating):
        raise TypeError(f"fold_in: data must be a real scalar, got {data!r}")
    if isinstance(data, float) and not isinstance(data, numpy.floating):
        data = int(data)  # Python floats go through int() in JAX: 2.9 -> 2, -1.0 overflows
    if isinstance(data, numpy.floating):  # cast on the host (truncating), as an array's cast
        with numpy.errstate(invalid="ignore"):
            data = numpy.asarray(data).astype(numpy.uint32)[()]
    if isinstance(data, int | numpy.integer | numpy.bool_):
        d = int(data)
        if isinstance(data, int) and not isinstance(data, bool) and not 0 <= d < 2 ** 32:
            raise OverflowError(f"fold_in: data {d} is out of bounds for uint32")
        lo = numpy.array(d % 2 ** 32, dtype=numpy.uint32)  # NumPy integers wrap, as arrays
        if _device_of(key) != "cpu":
            lo = device_put(lo, _device_of(key))
        return lo
    try:
        a = get_aval(data)
    except TypeError:
        raise TypeError(
            f"fold_in: data must be an integer, got {type(data).__name__}"
        ) from None
    if a.shape != ():
        raise TypeError(f"fold_in accepts a scalar, but was given an array of shape {a.shape} "
                        "!= (). Use funcgrad.vmap for batching.")
    if a.dtype.kind not in "iubf":
        raise TypeError(f"fold_in: data must be a real scalar, got {a.str_short()}")
    return _ew.convert_element_type(data, _U32)


def fold_in(key: Any, data: Any) -> Array:
    """A new key from ``key`` and an integer ``data``, e.g. a step number (typed when ``key``
    is).

    A Python int must lie in ``[0, 2**32)``; a NumPy integer or integer array scalar (traced
    too) is cast to ``uint32`` (wrapping, keeping its low 32 bits), and a bool counts as 0 or
    1, as in JAX. A float is truncated as JAX does (``fold_in(k, 2.9)`` is ``fold_in(k,
    2)``). Equal to hashing the counter ``(0, data)``.

    Example:
        >>> fold_in(PRNGKey(0), 1).tolist()
        [928981903, 3453687069]
    """
    typed, was_typed = _as_typed("fold_in", key)
    out = _IMPL_OPS[typed._impl].fold_in(typed._data, _fold_in_data(typed._data, data))
    return typed._rewrap(out) if was_typed else out


# ---------------------------------------------------------------------------------------------
# The implementations (JAX's jax._src.prng): seed, split, fold_in and random_bits on key data


class _ImplOps(NamedTuple):
    seed: Callable[[Any, str], Any]  # (seed, caller's name) -> data of one key
    split: Callable[[Any, tuple[int, ...]], Any]  # (data, shape) -> data (*shape, words)
    fold_in: Callable[[Any, Any], Any]  # (data, uint32 scalar) -> data
    random_bits: Callable[[Any, int, tuple[int, ...]], Any]  # (data, bit width, shape)


def _threefry_split(key: Any, shape: tuple[int, ...]) -> Any:
    if not _partitionable.get():  # JAX's original layout: 2n counters hashed as one array
        n = math.prod(shape)
        return _sh.reshape(threefry_2x32(key, _iota_u32(2 * n, key)), (*shape, 2))
    b1, b2 = _hash_shape(key, shape)
    return _sh.concatenate([_sh.reshape(b1, (*shape, 1)), _sh.reshape(b2, (*shape, 1))],
                           len(shape))


def _threefry_fold_in(key: Any, lo: Any) -> Any:
    y0, y1 = _threefry(_word(key, 0), _word(key, 1), _ew.mul(lo, numpy.uint32(0)), lo)
    return _sh.concatenate([_sh.reshape(y0, (1,)), _sh.reshape(y1, (1,))], 0)


def _halves(key: Any) -> tuple[Any, Any]:
    return _sh.static_slice(key, (0,), (2,)), _sh.static_slice(key, (2,), (4,))


def _rbg_seed(seed: Any, name: str) -> Any:
    # JAX's: the Threefry key of the seed, twice
    half = _threefry_seed(seed, name)
    return _sh.concatenate([half, half], 0)


def _rbg_split(key: Any, shape: tuple[int, ...]) -> Any:
    # each half split as a Threefry key, the halves side by side in the new keys
    return _sh.concatenate([_threefry_split(h, shape) for h in _halves(key)], len(shape))


def _rbg_fold_in(key: Any, lo: Any) -> Any:
    return _sh.concatenate([_threefry_fold_in(h, lo) for h in _halves(key)], 0)


def _rbg_random_bits(key: Any, bit_width: int, shape: tuple[int, ...]) -> Any:
    return rng_bit_generator(key, shape, _UINT_FOR_BITS[bit_width])[1]


def _unsafe_rbg_split(key: Any, shape: tuple[int, ...]) -> Any:
    # JAX's: ten draws of the bit generator per key as a "hash", every tenth row kept
    num = math.prod(shape)
    rows = rng_bit_generator(key, (10 * num, 4), _U32)[1]
    return _sh.reshape(_sh.static_slice(rows, (0, 0), (10 * num, 4), (10, 1)), (*shape, 4))


def _unsafe_rbg_fold_in(key: Any, lo: Any) -> Any:
    seed = _sh.concatenate([_sh.reshape(_ew.mul(lo, numpy.uint32(0)), (1,)),
                            _sh.reshape(lo, (1,))], 0)
    rows = rng_bit_generator(_sh.concatenate([seed, seed], 0), (10, 4), _U32)[1]
    return _ew.xor(key, _sh.reshape(_sh.static_slice(rows, (9, 0), (10, 4)), (4,)))


_IMPL_OPS: dict[str, _ImplOps] = {
    "threefry2x32": _ImplOps(_threefry_seed, _threefry_split, _threefry_fold_in,
                             _threefry_random_bits),
    "rbg": _ImplOps(_rbg_seed, _rbg_split, _rbg_fold_in, _rbg_random_bits),
    "unsafe_rbg": _ImplOps(_rbg_seed, _unsafe_rbg_split, _unsafe_rbg_fold_in,
                           _rbg_random_bits),
}


@with_out_sharding
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
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dt}")
    return random_bits(key, dt.itemsize * 8, shape)
