"""Typed key arrays: what :func:`funcgrad.random.key` makes (JAX's ``key<fry>`` arrays).

A typed key array of shape ``S`` holds the ``uint32`` data of ``prod(S)`` raw keys, an array
of shape ``(*S, 2)``; its ``dtype`` is the key dtype ``key<fry>`` (a
:class:`funcgrad.dtypes.prng_key`), so one key has shape ``()``. It is a pytree leaf, as
JAX's, and a node whose one child is that data in the transformations' view
(``tree_util.register_array_leaf``): ``jit``, ``vmap``, ``grad``, ``scan``, ``cond`` and every
other transformation carry keys through as they carry any pytree, with no knowledge of keys
(a batch of ``n`` keys under ``vmap`` is data of shape ``(n, 2)``, batched on axis 0).

Example:
    >>> from funcgrad import random
    >>> k = random.key(0)
    >>> k.shape, str(k.dtype)
    ((), 'key<fry>')
    >>> random.split(k, 3).shape
    (3,)
"""

from __future__ import annotations

import math
from contextvars import ContextVar
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.api_devices import block_until_ready
from funcgrad.avals import ShapeDtypeStruct, extended_dtypes, get_aval
from funcgrad.backend import get_default_device, is_array, to_numpy
from funcgrad.config import register_flag
from funcgrad.core import Tracer
from funcgrad.jaxpr_codec import register_pytree_node_serialization
from funcgrad.numpy._dtype_utils import prng_key
from funcgrad.numpy._extended import register_extended_type
from funcgrad.typing import register_array_type

__all__ = ["KeyDType", "PRNGKeyArray", "KEY_DTYPE", "is_typed_key", "key_dtype", "IMPLS",
           "DEFAULT_IMPL", "impl_name", "default_impl"]

_IMPL_NAME = "threefry2x32"
DEFAULT_IMPL = _IMPL_NAME

#: JAX's PRNG implementations: name -> (dtype tag, words of one key's uint32 data).
#: 'threefry2x32' is the Threefry-2x32 hash; 'rbg' and 'unsafe_rbg' draw their bits with XLA's
#: RngBitGenerator (funcgrad.lax.rng_bit_generator) and derive keys with Threefry ('rbg') or
#: with the bit generator itself ('unsafe_rbg'): see _core.py.
IMPLS: dict[str, tuple[str, int]] = {
    "threefry2x32": ("fry", 2),
    "rbg": ("rbg", 4),
    "unsafe_rbg": ("urbg", 4),
}
_ALIASES = {"threefry": "threefry2x32"}

#: jax_default_prng_impl: the implementation of keys made without impl= and of raw keys
_default_impl: ContextVar[str] = ContextVar("funcgrad_default_prng_impl", default=_IMPL_NAME)


def impl_name(name: str, impl: Any) -> str:
    """The implementation ``impl`` names (None: the default one); errors name ``name``."""
    if impl is None:
        return _default_impl.get()
    if isinstance(impl, KeyDType):
        return impl.impl
    spec = impl if isinstance(impl, str) else getattr(impl, "name", getattr(impl, "impl", impl))
    if isinstance(spec, str):
        spec = _ALIASES.get(spec, spec)
        if spec in IMPLS:
            return spec
    raise ValueError(f"{name}: unknown PRNG implementation impl={impl!r}; funcgrad has "
                     + ", ".join(repr(n) for n in IMPLS) + " (JAX's)")


def default_impl() -> str:
    """The current ``jax_default_prng_impl``."""
    return _default_impl.get()


def _write_default_impl(value: Any) -> None:
    _default_impl.set(impl_name("jax_default_prng_impl", value))


register_flag("jax_default_prng_impl", _default_impl.get, _write_default_impl)


class KeyDType:
    """The dtype of typed key arrays: ``key<fry>`` (Threefry-2x32 keys), ``key<rbg>`` or
    ``key<urbg>``, as JAX's ``KeyTy``.

    ``type`` is :class:`funcgrad.dtypes.prng_key`, so
    ``funcgrad.numpy.issubdtype(k.dtype, funcgrad.dtypes.prng_key)`` holds.

    Example:
        >>> from funcgrad import random
        >>> random.key(0).dtype, random.key(0, impl="rbg").dtype
        (key<fry>, key<rbg>)
    """

    type = prng_key
    kind = "V"  # NumPy's kind for "other": a key is no number

    def __init__(self, impl: str = _IMPL_NAME) -> None:
        self.impl = impl
        self.name = f"key<{IMPLS[impl][0]}>"

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    @property
    def itemsize(self) -> int:
        """Bytes per key: its ``uint32`` words (8 for ``key<fry>``, 16 for ``key<rbg>``)."""
        return 4 * IMPLS[self.impl][1]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KeyDType) and other.impl == self.impl

    def __hash__(self) -> int:
        return hash(("funcgrad.KeyDType", self.impl))


_KEY_DTYPES = {name: KeyDType(name) for name in IMPLS}
KEY_DTYPE = _KEY_DTYPES[_IMPL_NAME]


def _index_count(idx: tuple[Any, ...]) -> int:
    """How many key axes ``idx`` indexes (a boolean mask counts its rank)."""
    n = 0
    for i in idx:
        if i is None or i is Ellipsis:
            continue
        dt = getattr(i, "dtype", None)
        n += len(getattr(i, "shape", ())) if dt is not None and numpy.dtype(dt) == bool else 1
    return n


# Called as hook(parent_data, idx, child_data, parent_key_shape) after ``keys[idx]``: the
# key-reuse check (funcgrad/random/_reuse.py) registers one, to know which keys of an array
# an indexed key is, so ``keys[0]`` consumed twice is reuse though each ``keys[0]`` is new.
index_hooks: list[Any] = []


class PRNGKeyArray:
    """An array of typed PRNG keys: ``shape`` keys whose ``uint32`` data is ``(*shape, 2)``
    (``(*shape, 4)`` for the ``'rbg'`` and ``'unsafe_rbg'`` implementations).

    Made by :func:`funcgrad.random.key`, :func:`~funcgrad.random.split` and
    :func:`~funcgrad.random.fold_in` of typed keys, and
    :func:`~funcgrad.random.wrap_key_data`. It indexes, reshapes and iterates as an array of
    its shape, compares with ``==``, and refuses arithmetic and conversion to NumPy (use
    :func:`funcgrad.random.key_data`).

    Example:
        >>> from funcgrad import random
        >>> keys = random.split(random.key(0), 4)
        >>> keys[1:].shape, keys.reshape(2, 2).shape, len(list(keys))
        ((3,), (2, 2), 4)
    """

    __slots__ = ("_data", "_impl", "__weakref__")  # (weakly held by the key-reuse check)
    __array_priority__ = 101  # NumPy and CuPy (priority 100) defer ``array == keys`` to us
    # funcgrad.numpy's structural functions (stack, where, take, ...) take key arrays
    # (funcgrad/numpy/_extended.py, registered below): the data has one trailing axis
    _trailing_ndim = 1

    def _rewrap(self, data: Any) -> PRNGKeyArray:
        """Keys of this implementation over ``data``."""
        return PRNGKeyArray(data, self._impl)
    __hash__ = None  # type: ignore[assignment]  # mutable-array semantics, as arrays

    def __init__(self, data: Any, impl: str = _IMPL_NAME) -> None:
        # Not checked: pytree unflattening builds key arrays from any leaves (placeholders
        # included); the public constructors (key, wrap_key_data) check their input.
        self._data = data
        self._impl = impl

    # -- array properties ---------------------------------------------------------------------
    @property
    def dtype(self) -> KeyDType:
        return _KEY_DTYPES[self._impl]

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(get_aval(self._data).shape[:-1])

    @property
    def device(self) -> str:
        """The device its data lives on."""
        return get_aval(self._data).device or get_default_device()

    def devices(self) -> set[str]:
        return {self.device}

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def T(self) -> PRNGKeyArray:  # noqa: N802  (NumPy's name)
        return self.transpose()

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object (a single key)")
        return self.shape[0]

    def __iter__(self) -> Any:
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(self.shape[0]))

    def _data_index(self, idx: Any) -> tuple[Any, ...]:
        """``idx`` (over the key axes) as an index into the data."""
        idx = idx if isinstance(idx, tuple) else (idx,)
        n = _index_count(idx)
        if n > self.ndim:
            raise IndexError(f"too many indices for key array: it is {self.ndim}-dimensional, "
                             f"but {n} were indexed")
        # the key words are one trailing axis that no index reaches
        return (*idx, slice(None)) if any(i is Ellipsis for i in idx) else (*idx, Ellipsis)

    def __getitem__(self, idx: Any) -> PRNGKeyArray:
        # funcgrad's indexing (a traced index into concrete key data under jit/vmap too)
        out = self._rewrap(fnp.at(self._data)[self._data_index(idx)].get())
        for hook in index_hooks:  # the key-reuse check: which keys of self ``out`` holds
            hook(self._data, idx, out._data, self.shape)
        return out

    @property
    def at(self) -> _KeyAt:
        """Functional updates, as JAX's key arrays: ``keys.at[idx].set(new_keys)`` and
        ``.get()``; the index reaches the key axes only.

        Example:
            >>> from funcgrad import random
            >>> ks = random.split(random.key(0), 3)
            >>> bool((ks.at[0].set(ks[2]) == ks[2])[0])
            True
        """
        return _KeyAt(self)

    # -- shape methods (on the data, the words axis kept last) -------------------------------
    def reshape(self, *shape: Any, order: str = "C") -> PRNGKeyArray:
        if len(shape) == 1 and isinstance(shape[0], tuple | list):
            shape = tuple(shape[0])
        shape = tuple(int(s) for s in shape)
        if shape.count(-1) == 1:
            known = math.prod(s for s in shape if s != -1)
            shape = tuple(self.size // max(known, 1) if s == -1 else s for s in shape)
        if math.prod(shape) != self.size:
            raise ValueError(f"cannot reshape a key array of shape {self.shape} into {shape}")
        if order == "F":
            # Fortran order over the key axes only (the words stay together, last)
            return self.transpose().reshape(shape[::-1]).transpose()
        if order not in ("C", "A"):
            raise ValueError(f"reshape: order must be 'C', 'F' or 'A', got {order!r}")
        return self._rewrap(fnp.reshape(self._data, (*shape, IMPLS[self._impl][1])))

    def ravel(self) -> PRNGKeyArray:
        return self.reshape(self.size)

    flatten = ravel

    def squeeze(self, axis: Any = None) -> PRNGKeyArray:
        if axis is None:
            axis = tuple(i for i, s in enumerate(self.shape) if s == 1)
        axes = axis if isinstance(axis, tuple | list) else (axis,)
        axes = tuple(a % self.ndim if self.ndim else a for a in axes)
        return self._rewrap(fnp.squeeze(self._data, axes))

    def transpose(self, *axes: Any) -> PRNGKeyArray:
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], tuple | list)):
            axes = () if axes[0] is None else tuple(axes[0])
        perm = tuple(range(self.ndim))[::-1] if not axes else tuple(
            int(a) % self.ndim for a in axes)
        return self._rewrap(fnp.transpose(self._data, (*perm, self.ndim)))

    def swapaxes(self, axis1: int, axis2: int) -> PRNGKeyArray:
        perm = list(range(self.ndim))
        for a in (axis1, axis2):
            if not -self.ndim <= a < self.ndim:
                raise ValueError(f"swapaxes: axis {a} is out of bounds for a key array of "
                                 f"rank {self.ndim}")
        a1, a2 = axis1 % self.ndim, axis2 % self.ndim
        perm[a1], perm[a2] = perm[a2], perm[a1]
        return self.transpose(perm)

    def copy(self) -> PRNGKeyArray:
        return self._rewrap(fnp.copy(self._data))

    def block_until_ready(self) -> PRNGKeyArray:
        block_until_ready(self._data)
        return self

    # -- comparison -----------------------------------------------------------------------------
    def __eq__(self, other: object) -> Any:  # type: ignore[override]
        if not isinstance(other, PRNGKeyArray):
            raise TypeError(f"== of a key array needs another key array, got "
                            f"{type(other).__name__}; compare random.key_data(...) for raw data")
        if other._impl != self._impl:
            raise TypeError(f"== of key arrays of different implementations: {self.dtype} and "
                            f"{other.dtype}")
        return fnp.all(fnp.equal(self._data, other._data), axis=-1)

    def __ne__(self, other: object) -> Any:  # type: ignore[override]
        return fnp.logical_not(self.__eq__(other))

    # -- what a key is not -----------------------------------------------------------------------
    def __array__(self, dtype: Any = None, copy: Any = None) -> numpy.ndarray:
        raise TypeError(f"a funcgrad key array (dtype {self.dtype}) cannot be converted to a "
                        "NumPy array; use funcgrad.random.key_data(keys) for its uint32 data")

    def __bool__(self) -> bool:
        raise TypeError("the truth value of a key array is undefined; compare "
                        "funcgrad.random.key_data(keys) instead")

    def _no_arithmetic(self, *args: Any) -> Any:
        raise TypeError(f"arithmetic is not defined on key arrays (dtype {self.dtype}); derive "
                        "new keys with funcgrad.random.split or fold_in, or compute on "
                        "funcgrad.random.key_data(keys)")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _no_arithmetic
    __truediv__ = __rtruediv__ = __floordiv__ = __mod__ = __pow__ = _no_arithmetic
    __and__ = __or__ = __xor__ = __neg__ = __invert__ = _no_arithmetic
    __lt__ = __le__ = __gt__ = __ge__ = _no_arithmetic

    # -- printing --------------------------------------------------------------------------------
    def __repr__(self) -> str:
        if is_array(self._data):
            return (f"Array({self.shape}, dtype={self.dtype}) overlaying:\n"
                    f"{numpy.asarray(to_numpy(self._data))}")
        if isinstance(self._data, ShapeDtypeStruct):  # eval_shape's answer
            return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype})"
        if isinstance(self._data, Tracer):
            return f"Traced<{self.dtype}{list(self.shape)}> overlaying {self._data!r}"
        # what a tree_map over a key's data made of it (a shape, a None, a placeholder)
        return f"PRNGKeyArray(data={self._data!r})"

    __str__ = __repr__


class _KeyAt:
    """``keys.at``: ``keys.at[idx]`` names the keys to get or replace."""

    __slots__ = ("_keys",)

    def __init__(self, keys: PRNGKeyArray) -> None:
        self._keys = keys

    def __getitem__(self, idx: Any) -> _KeyAtIndex:
        return _KeyAtIndex(self._keys, self._keys._data_index(idx))


class _KeyAtIndex:
    __slots__ = ("_keys", "_idx")

    def __init__(self, keys: PRNGKeyArray, idx: tuple[Any, ...]) -> None:
        self._keys, self._idx = keys, idx

    def get(self, **kwargs: Any) -> PRNGKeyArray:
        return self._keys._rewrap(fnp.at(self._keys._data)[self._idx].get(**kwargs))

    def set(self, values: Any, **kwargs: Any) -> PRNGKeyArray:
        if not isinstance(values, PRNGKeyArray):
            raise TypeError(f"keys.at[...].set needs key values (a key array), got "
                            f"{type(values).__name__}; wrap raw data with "
                            "funcgrad.random.wrap_key_data")
        if values._impl != self._keys._impl:
            raise TypeError(f"keys.at[...].set: the new keys are {values.dtype}, the array's "
                            f"{self._keys.dtype}")
        return self._keys._rewrap(fnp.at(self._keys._data)[self._idx].set(values._data,
                                                                           **kwargs))

    def _no_arithmetic(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("arithmetic updates (add, multiply, min, max, ...) are not defined on "
                        "key arrays; use .set with new keys")

    add = multiply = mul = divide = power = min = max = apply = _no_arithmetic


def key_dtype(impl_spec: Any = None) -> KeyDType:
    """The dtype of typed keys of implementation ``impl_spec`` (default: the
    ``jax_default_prng_impl``, ``'threefry2x32'``), as JAX's ``key_dtype``.

    Example:
        >>> key_dtype(), key_dtype("unsafe_rbg")
        (key<fry>, key<urbg>)
    """
    return _KEY_DTYPES[impl_name("key_dtype", impl_spec)]


def is_typed_key(x: Any) -> bool:
    """Whether ``x`` is a typed key array (as opposed to raw ``uint32`` key data)."""
    return isinstance(x, PRNGKeyArray)


def _unflatten_keys(impl: str, children: Any) -> Any:
    """Keys over their data; over a stand-in of the data (eval_shape's and out_info's results)
    a stand-in of the keys, ``ShapeDtypeStruct(shape, key<fry>)``, as JAX's."""
    data = children[0]
    if type(data) is ShapeDtypeStruct:
        return ShapeDtypeStruct(data.shape[:-1], _KEY_DTYPES[impl])
    return PRNGKeyArray(data, impl)


def _key_stand_in(s: ShapeDtypeStruct) -> PRNGKeyArray:
    """What ``ShapeDtypeStruct(shape, key<fry>)`` stands for when traced: keys over a stand-in
    of their uint32 data."""
    impl = s.dtype.impl
    return PRNGKeyArray(ShapeDtypeStruct((*s.shape, IMPLS[impl][1]), numpy.uint32,
                                         device=s.device), impl)


extended_dtypes[KeyDType] = _key_stand_in
register_array_type(PRNGKeyArray)  # isinstance(keys, funcgrad.Array), as jax.Array's
register_extended_type(PRNGKeyArray)  # fnp.stack / where / take / ... on keys, as jnp's
# a leaf of tree_util (as JAX's); to the transformations a node over its data, the
# implementation static data of the tree (as JAX's, where it is part of the dtype)
tree_util.register_array_leaf(PRNGKeyArray, lambda k: ((k._data,), k._impl), _unflatten_keys)
# exported programs may take and return keys (funcgrad.export); files from before the other
# implementations wrote no auxdata: Threefry keys
register_pytree_node_serialization(
    PRNGKeyArray, serialized_name="funcgrad.random.PRNGKeyArray",
    serialize_auxdata=lambda impl: impl.encode(),
    deserialize_auxdata=lambda data: data.decode() or _IMPL_NAME)
