"""funcgrad.numpy's structural functions on extended-dtype arrays (typed PRNG key arrays).

An extended array (of a class given to :func:`register_extended_type`) is a wrapper over a data array
with trailing dimensions of its own: a key array of shape ``S`` holds ``uint32`` data of shape
``(*S, 2)``. The functions that only move, select or repeat elements (``stack``,
``concatenate``, ``where``, ``take``, ``expand_dims``, ``broadcast_to``, ``reshape``,
``flip``, ``asarray``) work on such arrays as ``jax.numpy``'s do on key arrays: each rule
here applies the same function to the data, its axes counted among the leading
(element) axes, and wraps the result. The other functions of the element axes only
(``squeeze``, ``ravel``, ``transpose``, ``moveaxis``, ``tile``, ``repeat``, ``roll``,
``split``, ...) go through :func:`by_index`: the function of the elements' indices, then
those elements gathered. ``zeros_like``/``ones_like``/``full_like`` fill the data, as JAX's.
Arithmetic has no rule: it stays refused.

Example:
    >>> import funcgrad.numpy as fnp
    >>> from funcgrad import random
    >>> k = random.key(0)
    >>> fnp.stack([k, k]).shape, str(fnp.stack([k, k]).dtype)
    ((2,), 'key<fry>')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.errors import AxisError

__all__ = ["is_extended", "any_extended", "register_extended_type", "by_index", "full_like",
           "nested_extended", "stack_nested"]

#: the extended array classes: each has ``_data``, ``_trailing_ndim`` (the data's own trailing
#: dims), ``ndim``, ``ravel()``, ``reshape()`` and ``_rewrap(data)``
_TYPES: set[type] = set()


def register_extended_type(cls: type) -> None:
    """Let funcgrad.numpy's structural functions take instances of ``cls`` (key arrays)."""
    _TYPES.add(cls)


def is_extended(x: Any) -> bool:
    """Whether ``x`` is an extended-dtype array (a typed key array). A set lookup on the type:
    the functions that ask are hot on ordinary arrays."""
    return type(x) in _TYPES


def any_extended(xs: Any) -> bool:
    """Whether the sequence ``xs`` holds an extended array (checked on its first element and
    any other, as mixing is refused by the rules)."""
    return isinstance(xs, list | tuple) and any(is_extended(x) for x in xs)


def nested_extended(xs: Any) -> bool:
    """Whether ``xs`` is a (nested) list or tuple whose first leaf is an extended array:
    ``fnp.array([k1, k2])`` stacks keys, as ``jnp.array`` does."""
    while isinstance(xs, list | tuple) and xs:
        xs = xs[0]
    return is_extended(xs)


def stack_nested(xs: Any) -> Any:
    """The extended array a nested list of them stands for (stacked level by level)."""
    if isinstance(xs, list | tuple):
        return stack([stack_nested(x) for x in xs])
    return xs


def _trail(x: Any) -> int:
    return x._trailing_ndim


def _axis(name: str, axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise AxisError(f"{name}: axis {axis} is out of bounds for a key array of rank "
                        f"{ndim}")
    return axis % ndim


def _all(name: str, xs: Sequence[Any]) -> list[Any]:
    xs = list(xs)
    if not xs or not all(is_extended(x) and type(x) is type(xs[0]) for x in xs):
        raise TypeError(f"{name}: key arrays can only be combined with key arrays, got "
                        f"{sorted({type(x).__name__ for x in xs})}")
    return xs


def stack(arrays: Sequence[Any], axis: int = 0) -> Any:
    ks = _all("stack", arrays)
    ax = _axis("stack", axis, ks[0].ndim + 1)
    return ks[0]._rewrap(fnp.stack([k._data for k in ks], axis=ax))


def concatenate(arrays: Sequence[Any], axis: int | None = 0) -> Any:
    ks = _all("concatenate", arrays)
    if axis is None:
        ks = [k.ravel() for k in ks]
        axis = 0
    if ks[0].ndim == 0:
        raise ValueError("concatenate: zero-dimensional key arrays cannot be concatenated")
    ax = _axis("concatenate", axis, ks[0].ndim)
    return ks[0]._rewrap(fnp.concatenate([k._data for k in ks], axis=ax))


def where(condition: Any, x: Any, y: Any) -> Any:
    x, y = _all("where", [x, y])
    # the data's trailing axes first, so that the condition broadcasts against the leading
    # (element) axes by NumPy's rules, then back
    t = _trail(x)
    shape = numpy.broadcast_shapes(get_aval(condition).shape, x.shape, y.shape)
    xd, yd = (fnp.moveaxis(broadcast_to(d, shape)._data, tuple(range(-t, 0)), tuple(range(t)))
              for d in (x, y))
    out = fnp.where(condition, xd, yd)
    return x._rewrap(fnp.moveaxis(out, tuple(range(t)), tuple(range(-t, 0))))


def take(a: Any, indices: Any, axis: int | None = None, mode: Any = None,
         fill_value: Any = None) -> Any:
    if mode in ("fill", "drop") or fill_value is not None:
        raise TypeError("take: mode='fill' and fill_value= are not supported for key arrays "
                        "(no key stands for a fill value)")
    if axis is None:
        a, axis = a.ravel(), 0
    ax = _axis("take", axis, a.ndim)
    return a._rewrap(fnp.take(a._data, indices, axis=ax, mode=mode))


def expand_dims(a: Any, axis: Any) -> Any:
    axes = tuple(axis) if isinstance(axis, tuple | list) else (axis,)
    nd = a.ndim + len(axes)
    return a._rewrap(fnp.expand_dims(a._data, tuple(_axis("expand_dims", x, nd) for x in axes)))


def broadcast_to(a: Any, shape: Any) -> Any:
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    words = tuple(a._data.shape[a.ndim:])
    return a._rewrap(fnp.broadcast_to(a._data, (*shape, *words)))


def reshape(a: Any, shape: Any) -> Any:
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return a.reshape(shape)


def flip(a: Any, axis: Any = None) -> Any:
    if axis is None:
        axes: tuple[int, ...] = tuple(range(a.ndim))
    else:
        axes = tuple(axis) if isinstance(axis, tuple | list) else (axis,)
        axes = tuple(_axis("flip", x, a.ndim) for x in axes)
    return a._rewrap(fnp.flip(a._data, axes)) if axes else a


def by_index(fn: Any, a: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(a, *args, **kwargs)`` for a function ``fn`` that only moves, selects or repeats
    elements: ``fn`` of the elements' flat indices (static: the shape is), then the keys at
    the resulting indices; a tuple or list of results (``split``) gives one of key arrays."""
    idx = fn(numpy.arange(a.size).reshape(a.shape), *args, **kwargs)
    flat = a.ravel()

    def gather(i: Any) -> Any:
        return take(flat, i, axis=0)

    if isinstance(idx, tuple | list):
        return type(idx)(gather(i) for i in idx)
    return gather(idx)


def full_like(a: Any, fill_value: Any, shape: Any = None) -> Any:
    """Keys of ``a``'s kind and ``shape`` (default ``a.shape``) whose data is ``fill_value``:
    an integer fills every word (JAX's ``zeros_like`` / ``ones_like`` of keys), a key array
    broadcasts its data."""
    shape = a.shape if shape is None else (shape,) if isinstance(shape, int) else tuple(shape)
    words = tuple(get_aval(a._data).shape[a.ndim:])
    if is_extended(fill_value):
        if fill_value.dtype != a.dtype:
            raise TypeError(f"full_like: the fill value is a {fill_value.dtype} key array, "
                            f"the array's dtype is {a.dtype}")
        return a._rewrap(fnp.broadcast_to(fill_value._data, (*shape, *words)))
    return a._rewrap(fnp.full_like(a._data, fill_value, shape=(*shape, *words)))
