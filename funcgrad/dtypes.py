"""``jax.dtypes``'s names: ``float0`` (the tangent dtype of integer and boolean values, which a
``custom_vjp`` backward rule returns for an integer argument), ``canonicalize_dtype``,
``issubdtype``, ``result_type``, ``finfo``, ``iinfo``, ``scalar_type_of``, ``itemsize_bits``,
and the scalar types ``extended`` and ``prng_key`` above the dtype of typed keys
(``funcgrad.random.key``).

funcgrad's dtypes are NumPy's, always 64-bit by default (JAX's ``jax_enable_x64``): every
dtype is canonical, and promotion is NumPy's (docs/porting.md).

Example:
    >>> import numpy as np
    >>> np.zeros((2,), dtype=float0).shape, canonicalize_dtype(np.float32)
    ((2,), dtype('float32'))
"""

from __future__ import annotations

from typing import Any

import numpy

from funcgrad.avals import float0
from funcgrad.errors import DTypeError
from funcgrad.numpy import finfo, iinfo, issubdtype, result_type
from funcgrad.numpy._dtype_utils import extended, prng_key

__all__ = ["float0", "canonicalize_dtype", "issubdtype", "result_type", "finfo", "iinfo",
           "scalar_type_of", "itemsize_bits", "TypePromotionError", "extended", "prng_key"]

#: JAX's error for a promotion its strict mode refuses; funcgrad's dtype errors are DTypeErrors
TypePromotionError = DTypeError


def canonicalize_dtype(dtype: Any, allow_extended_dtype: bool = False) -> numpy.dtype:
    """``dtype`` as a NumPy dtype: with 64-bit types always on, every dtype is its own
    canonical form (JAX without x64 maps ``float64`` to ``float32``; funcgrad never does).

    Example:
        >>> canonicalize_dtype("int64"), canonicalize_dtype(float)
        (dtype('int64'), dtype('float64'))
    """
    if allow_extended_dtype and isinstance(getattr(dtype, "type", None), type) and issubclass(
            dtype.type, extended):
        return dtype  # a key dtype is its own canonical form
    return numpy.dtype(dtype)


def scalar_type_of(x: Any) -> type:
    """The Python scalar type of ``x``'s dtype: ``bool``, ``int``, ``float`` or ``complex``.

    Example:
        >>> scalar_type_of(numpy.float32(1.0)), scalar_type_of(numpy.arange(3))
        (<class 'float'>, <class 'int'>)
    """
    dtype = numpy.dtype(getattr(x, "dtype", None) or numpy.asarray(x).dtype)
    kinds = {"b": bool, "i": int, "u": int, "f": float, "c": complex}
    if dtype.kind not in kinds:
        raise DTypeError(f"scalar_type_of: no Python scalar type for dtype {dtype}")
    return kinds[dtype.kind]


def itemsize_bits(dtype: Any) -> int:
    """The size of one element of ``dtype`` in bits (0 for ``float0``).

    Example:
        >>> itemsize_bits(numpy.float32), itemsize_bits(float0)
        (32, 0)
    """
    return numpy.dtype(dtype).itemsize * 8
