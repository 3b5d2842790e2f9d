"""funcgrad.numpy: dtype utilities (``result_type``, ``can_cast``, ``promote_types``...).

They answer questions about dtypes, so they forward to NumPy. Arrays among the arguments are
read through their abstract values, never their data: a traced array (under ``jit``, ``grad``,
``vmap``) or a device array works like the NumPy array of the same dtype, and a weakly typed
traced value (a Python scalar passed through a transformation) counts as the Python scalar it
was, as NEP 50 says (``result_type(float32_array, traced_2.0)`` is float32).
"""

from __future__ import annotations

from typing import Any

import numpy as _np

from funcgrad.avals import get_aval
from funcgrad.core import Tracer, concrete_or_error

__all__ = [
    "result_type", "promote_types", "can_cast", "issubdtype", "isdtype", "common_type",
    "min_scalar_type", "mintypecode",
]


class extended(_np.generic):  # noqa: N801  (jax.dtypes' name)
    """The scalar type above every dtype that is not NumPy's (JAX's ``jax.dtypes.extended``):
    the key dtype of :func:`funcgrad.random.key` arrays. An extended dtype object has a
    ``type`` attribute, a subclass of this, that :func:`issubdtype` compares."""


class prng_key(extended):  # noqa: N801  (jax.dtypes' name)
    """The scalar type of typed PRNG key dtypes (``key<fry>``, JAX's ``jax.dtypes.prng_key``)."""


def _extended_type(x: Any) -> type | None:
    """The ``type`` of an extended dtype object (a key dtype), else None."""
    if isinstance(x, _np.dtype | type | str):
        return None
    t = getattr(x, "type", None)
    return t if isinstance(t, type) and issubclass(t, extended) else None

def check_python_ints_fit(values: Any, dtype: Any, fname: str, kinds: str = "iu") -> None:
    """NumPy 2's OverflowError for Python ints (in nested lists too) that an integer ``dtype``
    of one of ``kinds`` cannot hold, where they are written into an array of that dtype (pad,
    insert); a cast of an int64 array would wrap them silently instead."""
    dt = _np.dtype(dtype)
    if dt.kind not in kinds:
        return
    info = _np.iinfo(dt)

    def walk(v: Any) -> None:
        if type(v) is int and not info.min <= v <= info.max:
            raise OverflowError(f"{fname}: Python integer {v} out of bounds for {dt}")
        if isinstance(v, list | tuple):
            for e in v:
                walk(e)

    walk(values)


# A Python scalar of each kind: what a weakly typed value stands for in NumPy's promotion.
_WEAK_STAND_IN = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}


def _as_bool(x: Any) -> bool:
    return True if x else False


def _is_array(x: Any) -> bool:
    """An array-like with a dtype whose data must not be touched (tracer, device array)."""
    if isinstance(x, Tracer):
        return True
    if isinstance(x, _np.ndarray | _np.generic | _np.dtype | type | str):
        return False
    return hasattr(x, "dtype") and hasattr(x, "shape")


def _promotion_operand(x: Any) -> Any:
    """What stands for ``x`` in a NumPy dtype question: its dtype, or a weak Python scalar."""
    if isinstance(x, Tracer) or _is_array(x):
        a = get_aval(x)
        if a.weak_type:
            return _WEAK_STAND_IN[a.dtype.kind]
        return a.dtype
    if isinstance(x, list | tuple) and any(isinstance(v, Tracer) or _is_array(v) for v in x):
        raise TypeError(
            "funcgrad.numpy.result_type: a list holding arrays is not supported; "
            "pass the arrays (or funcgrad.numpy.stack of them) instead"
        )
    return x


def result_type(*arrays_and_dtypes: Any) -> _np.dtype:
    """The dtype NumPy's type promotion gives, like :func:`numpy.result_type`.

    Traced and device arrays count by their dtype (weak traced scalars as Python scalars).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.result_type(np.ones(2, np.float32), 2.0)
        dtype('float32')
        >>> fnp.result_type(np.int8, np.uint8)
        dtype('int16')
    """
    return _np.result_type(*(_promotion_operand(x) for x in arrays_and_dtypes))


def promote_types(type1: Any, type2: Any) -> _np.dtype:
    """The smallest dtype both dtypes cast to safely, like :func:`numpy.promote_types`.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.promote_types("float32", "int16")
        dtype('float32')
    """
    return _np.promote_types(type1, type2)


def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    """Whether ``from_`` (a dtype or an array, traced ones included) casts to ``to`` under
    ``casting``, like :func:`numpy.can_cast` (Python scalars raise, as in NumPy 2).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.can_cast(np.ones(2, np.float32), np.float64)
        True
        >>> fnp.can_cast("float64", "float32")
        False
    """
    if isinstance(from_, Tracer) or _is_array(from_):
        from_ = get_aval(from_).dtype
    return _as_bool(_np.can_cast(from_, to, casting))


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """Whether dtype ``arg1`` is lower in the type hierarchy than ``arg2``, like
    :func:`numpy.issubdtype`.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.issubdtype(np.float32, np.floating), fnp.issubdtype("int8", np.unsignedinteger)
        (True, False)
        >>> from funcgrad import dtypes, random
        >>> fnp.issubdtype(random.key(0).dtype, dtypes.prng_key)
        True
    """
    t1 = _extended_type(arg1)
    if t1 is not None or _extended_type(arg2) is not None:
        # an extended (key) dtype object is below its type's classes and equal to itself
        if t1 is None:
            return False
        t2 = _extended_type(arg2)
        return arg1 == arg2 if t2 is not None else isinstance(arg2, type) and issubclass(t1, arg2)
    return _as_bool(_np.issubdtype(arg1, arg2))


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether ``dtype`` is of ``kind`` (a dtype, a kind name like ``'real floating'``, or a
    tuple of them), like :func:`numpy.isdtype`.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.isdtype(np.float32, "real floating"), fnp.isdtype(np.int8, ("bool", "numeric"))
        (True, True)
    """
    return _as_bool(_np.isdtype(dtype, kind))


def common_type(*arrays: Any) -> type:
    """The inexact scalar type common to the arrays (integers count as float64), like
    :func:`numpy.common_type`. Traced arrays count by their dtype.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.common_type(np.ones(2, np.float32), np.arange(2))
        <class 'numpy.float64'>
    """
    stand_ins = [_np.empty((0,), get_aval(a).dtype if isinstance(a, Tracer) or _is_array(a)
                           else _np.asarray(a).dtype) for a in arrays]
    return _np.common_type(*stand_ins)


def min_scalar_type(a: Any) -> _np.dtype:
    """The smallest dtype holding the scalar ``a`` (arrays of rank >= 1: their own dtype),
    like :func:`numpy.min_scalar_type`. A 0-d traced array needs a concrete value.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.min_scalar_type(10), fnp.min_scalar_type(-260), fnp.min_scalar_type(1e50)
        (dtype('uint8'), dtype('int16'), dtype('float64'))
    """
    if isinstance(a, Tracer) or _is_array(a):
        aval = get_aval(a)
        if aval.ndim > 0:
            return aval.dtype
        a = concrete_or_error(a, "funcgrad.numpy.min_scalar_type of a 0-d array")
        a = aval.dtype.type(a.item())  # a host scalar of the same dtype, without a transfer
    return _np.min_scalar_type(a)


def mintypecode(typechars: Any, typeset: str = "GDFgdf", default: str = "d") -> str:
    """The character of the smallest-size dtype in ``typeset`` that every type in
    ``typechars`` (type characters or arrays) casts to safely, like :func:`numpy.mintypecode`.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.mintypecode(["d", "f", "S"]), fnp.mintypecode("fF")
        ('d', 'F')
    """
    if isinstance(typechars, Tracer) or _is_array(typechars):
        typechars = [typechars]
    chars = [t if isinstance(t, str) else
             (get_aval(t).dtype.char if isinstance(t, Tracer) or _is_array(t)
              else _np.asarray(t).dtype.char) for t in typechars]
    return _np.mintypecode(chars, typeset, default)
