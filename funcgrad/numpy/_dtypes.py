"""funcgrad.numpy: NumPy's scalar-type hierarchy and ``finfo``/``iinfo`` for arrays too.

The abstract types (``generic``, ``number``, ``inexact``, ``floating``, ``integer``, ...) and
the C-named aliases are NumPy's own classes, so ``issubdtype(x.dtype, fnp.floating)`` and
``isinstance(numpy_scalar, fnp.number)`` mean what they mean in NumPy. ``finfo``/``iinfo``
also take an array, a traced array or a Python type, reading only the dtype (JAX does too).

Example:
    >>> import numpy as np, funcgrad.numpy as fnp
    >>> fnp.issubdtype(np.float32, fnp.floating), fnp.issubdtype(np.int8, fnp.inexact)
    (True, False)
    >>> float(fnp.finfo(np.ones(2, np.float32)).eps) == float(np.finfo(np.float32).eps)
    True
"""

from __future__ import annotations

from typing import Any

import numpy as _np

from funcgrad.avals import NARROW_DTYPES, get_aval
from funcgrad.core import Tracer
from funcgrad.errors import DTypeError

__all__ = [
    # the abstract hierarchy
    "generic", "number", "inexact", "floating", "complexfloating", "integer",
    "signedinteger", "unsignedinteger", "character", "flexible",
    # C-named aliases
    "byte", "short", "intc", "int_", "long", "longlong", "intp", "ubyte", "ushort", "uintc",
    "uint", "ulong", "ulonglong", "uintp", "half", "single", "double", "longdouble", "csingle",
    "cdouble", "clongdouble", "str_", "bytes_", "void", "object_",
    "finfo", "iinfo",
]

generic = _np.generic
number = _np.number
inexact = _np.inexact
floating = _np.floating
complexfloating = _np.complexfloating
integer = _np.integer
signedinteger = _np.signedinteger
unsignedinteger = _np.unsignedinteger
character = _np.character
flexible = _np.flexible

byte, short, intc, int_, long, longlong, intp = (
    _np.byte, _np.short, _np.intc, _np.int_, _np.long, _np.longlong, _np.intp)
ubyte, ushort, uintc, uint, ulong, ulonglong, uintp = (
    _np.ubyte, _np.ushort, _np.uintc, _np.uint, _np.ulong, _np.ulonglong, _np.uintp)
half, single, double, longdouble = _np.half, _np.single, _np.double, _np.longdouble
csingle, cdouble, clongdouble = _np.csingle, _np.cdouble, _np.clongdouble
str_, bytes_, void, object_ = _np.str_, _np.bytes_, _np.void, _np.object_


def _dtype_of(x: Any, what: str) -> _np.dtype:
    if isinstance(x, Tracer):
        return get_aval(x).dtype
    if isinstance(x, _np.dtype | type | str):
        return _np.dtype(x)
    if hasattr(x, "dtype"):
        return _np.dtype(x.dtype)
    if isinstance(x, bool | int | float | complex):  # a Python scalar: its type's (NumPy's)
        return _np.dtype(type(x))
    raise TypeError(f"{what}: expected a dtype, a type or an array, got {type(x).__name__}")


def finfo(x: Any) -> _np.finfo:
    """Machine limits of a floating (or complex: its real part's) dtype; ``x`` may be a dtype,
    a type, a (traced) array.

    Example:
        >>> import numpy as np
        >>> finfo(np.float16).bits, finfo(np.zeros(1, np.complex64)).dtype
        (16, dtype('float32'))
    """
    dt = _dtype_of(x, "finfo")
    if dt.kind not in "fc":
        raise ValueError(f"finfo: {dt} is not an inexact dtype (use iinfo for integers)")
    return _np.finfo(dt)


def iinfo(x: Any) -> _np.iinfo:
    """Machine limits of an integer dtype; ``x`` may be a dtype, a type, a (traced) array.

    Example:
        >>> import numpy as np
        >>> iinfo(np.uint8).max, iinfo(np.arange(3, dtype=np.int16)).min
        (255, -32768)
    """
    dt = _dtype_of(x, "iinfo")
    if dt.kind not in "iu":
        raise ValueError(f"iinfo: {dt} is not an integer dtype (use finfo for floats)")
    return _np.iinfo(dt)


# jax.numpy's names for ml_dtypes' narrow types (avals.NARROW_DTYPES, which canonical_dtype
# also explains when one is given as a string).
UNSUPPORTED_DTYPES = NARROW_DTYPES


class UnsupportedDTypeError(DTypeError, AttributeError):
    """A ``jax.numpy`` dtype name that funcgrad cannot compute in (``fnp.bfloat16``, the
    float8/float4/int4 types). An ``AttributeError`` as well, so ``hasattr(fnp, "bfloat16")``
    and ``getattr(fnp, "bfloat16", None)`` still say the name is absent.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> hasattr(fnp, "bfloat16")
        False
    """


def unsupported_dtype(name: str) -> UnsupportedDTypeError:
    """The error ``funcgrad.numpy.<name>`` raises for one of :data:`UNSUPPORTED_DTYPES`."""
    hint = (" To round values as bfloat16 would, use "
            "funcgrad.lax.reduce_precision(x, exponent_bits=8, mantissa_bits=7) on float32."
            if name == "bfloat16" else "")
    return UnsupportedDTypeError(
        f"funcgrad.numpy.{name}: funcgrad computes with NumPy/CuPy kernels, which have no "
        f"{name} arithmetic (jax.numpy's {name} comes from ml_dtypes); use float32 or "
        f"float16.{hint}")
