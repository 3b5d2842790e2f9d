"""Type names for annotations, as ``jax.Array`` and ``jax.typing``.

funcgrad has no array class of its own: values are NumPy (or CuPy) arrays, and tracers inside
transformations. :class:`Array` is the type that covers them all, for annotations and
``isinstance`` checks (``def f(x: funcgrad.Array) -> funcgrad.Array``); :data:`ArrayLike` is
what ``funcgrad.numpy`` functions accept (arrays, NumPy scalars, Python numbers and bools) and
:data:`DTypeLike` what a ``dtype=`` argument accepts.

Example:
    >>> import numpy as np, funcgrad
    >>> isinstance(np.ones(2), funcgrad.Array), isinstance(1.0, funcgrad.Array)
    (True, False)
    >>> funcgrad.grad(lambda x: float(isinstance(x, funcgrad.Array)) * x)(2.0)
    array(1.)
"""

from __future__ import annotations

from typing import Any

import numpy

from funcgrad.backend import is_array
from funcgrad.core import Tracer

__all__ = ["Array", "ArrayLike", "DTypeLike", "Shape"]


#: array types of the layers above (typed PRNG key arrays), added by register_array_type
_EXTRA_ARRAY_TYPES: list[type] = []


def register_array_type(cls: type) -> None:
    """Count instances of ``cls`` as :class:`Array` too (as ``jax.Array`` covers key arrays)."""
    _EXTRA_ARRAY_TYPES.append(cls)


class _ArrayMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return (isinstance(obj, Tracer) or is_array(obj)
                or isinstance(obj, tuple(_EXTRA_ARRAY_TYPES)))

    def __subclasscheck__(cls, sub: type) -> bool:
        return (isinstance(sub, type) and issubclass(
            sub, (Tracer, numpy.ndarray, *_EXTRA_ARRAY_TYPES))) or (sub is cls)


class Array(metaclass=_ArrayMeta):
    """Any funcgrad array value: a NumPy, CuPy or strict-backend array, or a tracer (what
    ``jax.Array`` is for JAX). Not instantiable: create arrays with ``funcgrad.numpy``.

    Example:
        >>> import numpy as np
        >>> isinstance(np.zeros(3), Array), isinstance(np.float64(1.0), Array)
        (True, False)
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("funcgrad.Array is a type for annotations and isinstance checks; "
                        "create arrays with funcgrad.numpy.asarray (or zeros, ones, ...)")


#: what funcgrad.numpy functions accept as an array argument
ArrayLike = Array | numpy.ndarray | numpy.bool_ | numpy.number | bool | int | float | complex
#: what a ``dtype=`` argument accepts
DTypeLike = str | type | numpy.dtype | None
#: an array shape
Shape = tuple[int, ...]
