"""Strict test backend: a CuPy-like "device" array type implemented over NumPy.

CuPy refuses implicit host/device conversion: ``numpy.asarray(cupy_array)`` raises,
and mixing a ``numpy.ndarray`` with a CuPy array in one CuPy operation raises.
Without a GPU such mixing bugs go unnoticed, because NumPy silently accepts
everything.  This module provides

* :class:`StrictArray`, a distinct array type that wraps a ``numpy.ndarray`` and
  refuses every implicit conversion to / mixing with raw NumPy arrays, exactly
  where CuPy would;
* :data:`strict_numpy`, an array-module namespace ("xp") with the NumPy API whose
  functions take and return :class:`StrictArray` and reject raw ``numpy.ndarray``
  arguments (except the explicit host-to-device transfers ``asarray``/``array``);
* :func:`to_strict`, :func:`to_numpy` and :func:`is_strict` helpers.

Python scalars and NumPy scalars (``np.float32(1.0)``, ...) are accepted as
operands everywhere, as CuPy does.  This module imports only NumPy and the
standard library.
"""

from __future__ import annotations

import operator
import types
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np

__all__ = ["StrictArray", "is_strict", "strict_numpy", "to_numpy", "to_strict"]

_HOST_HINT = "host array mixed with device arrays; use funcgrad.device_put"
_SCALAR_TYPES = (bool, int, float, complex, np.generic)
_PY_SCALARS = (bool, int, float, complex)  # NumPy scalars have array methods; these do not
# Functions whose first argument is a number in CuPy too (a length, a count).
_SCALAR_FIRST = frozenset({
    "fftfreq", "rfftfreq", "bartlett", "blackman", "hamming", "hanning", "kaiser", "tri",
    "tril_indices", "triu_indices", "diag_indices", "mask_indices", "binary_repr",
    "base_repr", "unravel_index", "ravel_multi_index", "isscalar", "ndim", "shape", "size",
})


class _Flags(NamedTuple):
    """``cupy.ndarray.flags``: layout only."""

    c_contiguous: bool
    f_contiguous: bool
    owndata: bool


def _host_error(where: str, what: str = "argument") -> TypeError:
    return TypeError(f"strict backend: numpy.ndarray {what} given to {where}: {_HOST_HINT}")


# --------------------------------------------------------------------------------------
# argument unwrapping / result wrapping
# --------------------------------------------------------------------------------------


def _unwrap(
    obj: Any,
    where: str,
    ids: dict[int, StrictArray],
    hosts: list[np.ndarray] | None,
) -> Any:
    """Replace StrictArrays by their ndarrays (recursively in lists/tuples).

    Raw ``numpy.ndarray`` objects raise ``TypeError`` unless ``hosts`` is a list, in
    which case they are allowed and collected there.
    """
    if isinstance(obj, StrictArray):
        ids[id(obj._a)] = obj
        return obj._a
    if isinstance(obj, np.ndarray):
        if hosts is None:
            raise _host_error(where)
        hosts.append(obj)
        return obj
    if isinstance(obj, list):
        return [_unwrap(o, where, ids, hosts) for o in obj]
    if isinstance(obj, tuple):
        items = [_unwrap(o, where, ids, hosts) for o in obj]
        if type(obj) is tuple:
            return tuple(items)
        if hasattr(obj, "_fields"):  # namedtuple
            return type(obj)(*items)
        return type(obj)(items)
    return obj


def _wrap(obj: Any, wrap_scalars: bool, ids: dict[int, StrictArray] | None = None) -> Any:
    """Wrap ndarray results (recursively in lists/tuples) as StrictArray.

    NumPy scalars become 0-d StrictArrays when ``wrap_scalars`` is true.  An
    ndarray that is the buffer of one of the StrictArray arguments (``out=``, or
    functions returning their input) maps back to that very StrictArray object.
    """
    if isinstance(obj, np.ndarray):
        if ids:
            s = ids.get(id(obj))
            if s is not None and s._a is obj:
                return s
        return StrictArray(obj)
    if isinstance(obj, np.generic):
        return StrictArray(np.asarray(obj)) if wrap_scalars else obj
    if isinstance(obj, list):
        return [_wrap(o, wrap_scalars, ids) for o in obj]
    if isinstance(obj, tuple):
        items = [_wrap(o, wrap_scalars, ids) for o in obj]
        if type(obj) is tuple:
            return tuple(items)
        if hasattr(obj, "_fields"):  # namedtuple, e.g. numpy.linalg results
            return type(obj)(*items)
        return type(obj)(items)
    return obj


def _operand(other: Any, where: str) -> Any:
    """Unwrap an operator operand; ``NotImplemented`` for unsupported types."""
    if isinstance(other, StrictArray):
        return other._a
    if isinstance(other, np.ndarray):
        raise _host_error(where, "operand")
    if isinstance(other, _SCALAR_TYPES):
        return other
    return NotImplemented


def _cupy_scalar_check(args: Any, where: str) -> None:
    """Refuse, as CuPy does, the Python ints CuPy cannot hold.

    CuPy holds a Python int operand as int64 (uint64 from 2**63) before casting it to the
    kernel's dtype (``_scalar.CScalar``), so one outside ``[-2**63, 2**64)`` raises
    ``OverflowError`` even beside a float array, where NumPy converts it to the float dtype
    (``float16_array + 2**64`` is inf there)."""
    for a in args:
        if type(a) is int and not -(2**63) <= a < 2**64:
            raise OverflowError(
                f"strict backend (as CuPy): Python int too large to convert to C long "
                f"({a} given to {where}); convert it to a float first")


_CUPY_ORDERS = {"less": np.less, "less_equal": np.less_equal, "greater": np.greater,
                "greater_equal": np.greater_equal}


def _cupy_order(name: str, a: Any, b: Any) -> Any:
    """``a < b`` (``name``: a NumPy comparison) as CuPy orders complex numbers: by the real
    parts, by the imaginary parts where those are equal, without NumPy's NaN rule (NumPy's
    ``-1 < 0 + nanj`` is False, CuPy's True); other operands as NumPy."""
    if not any(np.iscomplexobj(v) for v in (a, b)):
        return _CUPY_ORDERS[name](a, b)
    a, b = np.asarray(a), np.asarray(b)
    return np.where(a.real == b.real, _CUPY_ORDERS[name](a.imag, b.imag),
                    _CUPY_ORDERS[name](a.real, b.real))


def _cupy_clip_bounds_check(a: np.ndarray, bounds: Any, where: str) -> None:
    """CuPy's clip casts Python-int bounds to an integer array's dtype first: one outside
    its range raises ``OverflowError`` (NumPy's clip takes ``uint8`` clipped at -1)."""
    if a.dtype.kind not in "iu":
        return
    info = np.iinfo(a.dtype)
    for b in bounds:
        if type(b) is int and not info.min <= b <= info.max:
            raise OverflowError(f"strict backend (as CuPy): Python integer {b} out of bounds "
                                f"for {a.dtype} ({where})")


# --------------------------------------------------------------------------------------
# operator / method factories
# --------------------------------------------------------------------------------------


#: CuPy's ``ndarray.__array_priority__``. Its operators call an unknown operand's reflected
#: method only where that operand's priority is higher or its ``__array_ufunc__`` is None;
#: otherwise CuPy computes the ufunc and raises TypeError ("operand type(s) all returned
#: NotImplemented from __array_ufunc__"), where NumPy arrays would defer at priority 100.
CUPY_ARRAY_PRIORITY = 100
_COMPARISONS = frozenset({"__lt__", "__le__", "__eq__", "__ne__", "__gt__", "__ge__"})


def _cupy_defers_to(other: Any) -> bool:
    return (getattr(type(other), "__array_ufunc__", 0) is None
            or getattr(other, "__array_priority__", 0) > CUPY_ARRAY_PRIORITY)


def _binary(op: Callable[[Any, Any], Any], name: str) -> Callable[[StrictArray, Any], Any]:
    where = f"StrictArray.{name}"
    reflected = None if name in _COMPARISONS else "__r" + name[2:]

    def method(self: StrictArray, other: Any) -> Any:
        o = _operand(other, where)
        if o is NotImplemented:
            if reflected and hasattr(type(other), reflected) and not _cupy_defers_to(other):
                raise TypeError(
                    f"strict backend (as CuPy): {where} does not defer to "
                    f"{type(other).__name__}.{reflected}: CuPy arrays defer only to types "
                    f"with __array_priority__ > {CUPY_ARRAY_PRIORITY} or __array_ufunc__ = None")
            return NotImplemented
        _cupy_scalar_check((o,), where)
        return _wrap(op(self._a, o), True)

    method.__name__ = name
    method.__qualname__ = where
    method.__doc__ = f"Like ``numpy.ndarray.{name}``; raw ``numpy.ndarray`` operands raise."
    return method


def _reflected(op: Callable[[Any, Any], Any], name: str) -> Callable[[StrictArray, Any], Any]:
    where = f"StrictArray.{name}"

    def method(self: StrictArray, other: Any) -> Any:
        o = _operand(other, where)
        if o is NotImplemented:
            return NotImplemented
        _cupy_scalar_check((o,), where)
        return _wrap(op(o, self._a), True)

    method.__name__ = name
    method.__qualname__ = where
    method.__doc__ = f"Like ``numpy.ndarray.{name}``; raw ``numpy.ndarray`` operands raise."
    return method


def _inplace(op: Callable[[Any, Any], Any], name: str) -> Callable[[StrictArray, Any], Any]:
    where = f"StrictArray.{name}"

    def method(self: StrictArray, other: Any) -> Any:
        o = _operand(other, where)
        if o is NotImplemented:
            return NotImplemented
        _cupy_scalar_check((o,), where)
        op(self._a, o)  # ndarray in-place operator mutates self._a
        return self

    method.__name__ = name
    method.__qualname__ = where
    method.__doc__ = f"Like ``numpy.ndarray.{name}`` (in place); raw ndarray operands raise."
    return method


def _unary(op: Callable[[Any], Any], name: str) -> Callable[[StrictArray], StrictArray]:
    def method(self: StrictArray) -> StrictArray:
        return _wrap(op(self._a), True)

    method.__name__ = name
    method.__qualname__ = f"StrictArray.{name}"
    method.__doc__ = f"Like ``numpy.ndarray.{name}``."
    return method


def _array_method(name: str) -> Callable[..., Any]:
    where = f"StrictArray.{name}"

    def method(self: StrictArray, *args: Any, **kwargs: Any) -> Any:
        ids: dict[int, StrictArray] = {id(self._a): self}
        args = _unwrap(args, where, ids, None)
        kwargs = {k: _unwrap(v, where, ids, None) for k, v in kwargs.items()}
        return _wrap(getattr(self._a, name)(*args, **kwargs), True, ids)

    method.__name__ = name
    method.__qualname__ = where
    method.__doc__ = (
        f"Like ``numpy.ndarray.{name}``; array results are StrictArray, "
        "raw ``numpy.ndarray`` arguments raise."
    )
    return method


# --------------------------------------------------------------------------------------
# sorting as CuPy sorts floats
# --------------------------------------------------------------------------------------


def _bits_key(a: np.ndarray) -> np.ndarray:
    """For a real float array, unsigned keys in the order of a radix sort of its bits (CUB's
    "twiddle": negative numbers reversed below positive ones): -NaN first, -0.0 before 0.0,
    NaNs after +inf, NaN payloads apart. CuPy sorts a float vector by a radix sort (thrust's
    ``less`` on floats), so equal floats of different bits do not keep their order there."""
    u = a.view(f"u{a.dtype.itemsize}")
    sign = np.array(1, u.dtype) << np.array(8 * a.dtype.itemsize - 1, u.dtype)
    return np.where(u & sign, ~u, u | sign)


def _argsort_as_cupy(a: np.ndarray, axis: Any = -1, kind: Any = None) -> np.ndarray:
    # CuPy's sorts are stable whatever `kind` says, and order real floats by their bits.
    if axis is None:
        a, axis = a.ravel(), -1
    key = _bits_key(a) if a.dtype.kind == "f" else a
    return np.argsort(key, axis=axis, kind="stable")


def _sort_as_cupy(a: np.ndarray, axis: Any = -1, kind: Any = None) -> np.ndarray:
    if axis is None:
        a, axis = a.ravel(), -1
    return np.take_along_axis(a, _argsort_as_cupy(a, axis), axis=axis)


# --------------------------------------------------------------------------------------
# StrictArray
# --------------------------------------------------------------------------------------


class StrictArray:
    """A CuPy-like "device" array over NumPy that refuses implicit host conversion.

    Construct with ``StrictArray(ndarray)`` (internal) or, publicly, with
    :func:`to_strict` / ``strict_numpy.asarray``.  Operators, indexing and methods
    behave like ``numpy.ndarray`` but always return StrictArray (0-d for scalar
    results) and raise ``TypeError`` when a raw ``numpy.ndarray`` is involved.

    >>> x = to_strict([1.0, 2.0])
    >>> x * 2 + np.float32(1)
    StrictArray([3., 5.])
    >>> float(x.sum())
    3.0
    >>> np.asarray(x)
    Traceback (most recent call last):
    ...
    TypeError: Implicit conversion to a NumPy array is not allowed (strict test backend). Use .get() to make an explicit host copy.
    """

    __slots__ = ("_a", "__weakref__")  # weakly referenced, as NumPy and CuPy arrays are
    __array_priority__ = 1000.0
    __array_ufunc__ = None  # numpy ufuncs refuse StrictArray; ndarray ops defer to us
    __hash__ = None  # type: ignore[assignment]  # unhashable, like ndarray

    _a: np.ndarray

    def __init__(self, a: np.ndarray | np.generic) -> None:
        if isinstance(a, np.generic):
            a = np.asarray(a)
        if not isinstance(a, np.ndarray):
            raise TypeError(
                f"StrictArray wraps a numpy.ndarray, got {type(a).__name__}; use to_strict()"
            )
        if a.dtype.fields is not None:  # as CuPy: no structured dtypes (float0) on a device
            raise ValueError(f"strict backend (as CuPy): unsupported dtype {a.dtype}")
        if type(a) is not np.ndarray:
            a = a.view(np.ndarray)
        self._a = a

    # ---- NumPy protocol: refuse implicit conversion --------------------------------

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError(
            "Implicit conversion to a NumPy array is not allowed (strict test backend). "
            "Use .get() to make an explicit host copy."
        )

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        mod = getattr(func, "__module__", None) or "numpy"
        name = getattr(func, "__name__", repr(func))
        if mod == "numpy" and name in _METADATA:
            # Metadata-only functions (numpy.result_type, numpy.shape, ...) work on
            # CuPy arrays too (CuPy dispatches them), so they are allowed here.
            return getattr(strict_numpy, name)(*args, **kwargs)
        xp_name = "strict_" + mod if mod.startswith("numpy") else "strict_numpy"
        raise TypeError(
            f"strict backend: {mod}.{name} called on a StrictArray; NumPy functions do not "
            f"accept device arrays (use the xp module, e.g. {xp_name}.{name}, or .get())"
        )

    # ---- metadata ------------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        """Array shape."""
        return self._a.shape

    @property
    def dtype(self) -> np.dtype[Any]:
        """Array dtype."""
        return self._a.dtype

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return self._a.ndim

    @property
    def size(self) -> int:
        """Number of elements."""
        return self._a.size

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self._a.itemsize

    @property
    def nbytes(self) -> int:
        """Total bytes of the elements."""
        return self._a.nbytes

    @property
    def strides(self) -> tuple[int, ...]:
        """Byte strides."""
        return self._a.strides

    @property
    def flags(self) -> Any:
        """Memory-layout flags as CuPy has them: ``c_contiguous``, ``f_contiguous``,
        ``owndata`` (no ``writeable``: device arrays have no read-only flag)."""
        f = self._a.flags
        return _Flags(f.c_contiguous, f.f_contiguous, f.owndata)

    @property
    def T(self) -> StrictArray:
        """Transpose."""
        return StrictArray(self._a.T)

    @property
    def mT(self) -> StrictArray:
        """Transpose of the last two axes."""
        return StrictArray(self._a.mT)

    @property
    def real(self) -> StrictArray:
        """Real part."""
        return StrictArray(self._a.real)

    @real.setter
    def real(self, value: Any) -> None:
        self._a.real[...] = _setitem_value(value, "StrictArray.real")

    @property
    def imag(self) -> StrictArray:
        """Imaginary part."""
        return StrictArray(self._a.imag)

    @imag.setter
    def imag(self, value: Any) -> None:
        self._a.imag[...] = _setitem_value(value, "StrictArray.imag")

    # ---- host transfer -------------------------------------------------------------

    def get(
        self, stream: Any = None, order: str = "C", out: np.ndarray | None = None
    ) -> np.ndarray:
        """Copy to host: return a new ``numpy.ndarray`` (like ``cupy.ndarray.get``).

        ``stream`` is ignored.  With ``out`` (a ``numpy.ndarray``) the data is copied
        into it and ``out`` is returned.

        >>> to_strict([1, 2]).get()
        array([1, 2])
        """
        if out is not None:
            if not isinstance(out, np.ndarray):
                raise TypeError("out must be a numpy.ndarray")
            if out.shape != self._a.shape:
                raise ValueError("Shape mismatch")
            np.copyto(out, self._a, casting="no")
            return out
        return np.array(self._a, order=order, copy=True)

    def set(self, arr: np.ndarray, stream: Any = None) -> None:
        """Copy a host ``numpy.ndarray`` into this array (like ``cupy.ndarray.set``)."""
        if not isinstance(arr, np.ndarray):
            raise TypeError(f"Only numpy.ndarray can be set to StrictArray, got {type(arr)}")
        if arr.dtype != self._a.dtype:
            raise TypeError(f"{arr.dtype} array cannot be set to {self._a.dtype} array")
        if arr.shape != self._a.shape:
            raise ValueError("Shape mismatch")
        np.copyto(self._a, arr)

    # ---- Python protocol -----------------------------------------------------------

    def __repr__(self) -> str:
        r = repr(self._a)
        if r.startswith("array("):
            return "StrictArray" + r[len("array") :].replace("\n", "\n      ")
        return f"StrictArray({r})"

    def __str__(self) -> str:
        return str(self._a)

    def __format__(self, format_spec: str) -> str:
        return format(self._a, format_spec)

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self) -> Iterator[StrictArray]:
        if self._a.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (StrictArray(row) for row in self._a)

    def __contains__(self, value: Any) -> bool:
        eq = self.__eq__(value)
        if eq is NotImplemented:
            return False
        return bool(eq._a.any())

    # CuPy's index preparation (_prepare_slice_list) copies list and NumPy index arrays to
    # the device, so host index arrays are allowed in a key (values still are not).
    def __getitem__(self, key: Any) -> StrictArray:
        k = _unwrap(key, "StrictArray.__getitem__ (index)", {}, [])
        return StrictArray(self._a[k])

    def __setitem__(self, key: Any, value: Any) -> None:
        k = _unwrap(key, "StrictArray.__setitem__ (index)", {}, [])
        self._a[k] = _setitem_value(value, "StrictArray.__setitem__")

    def __copy__(self) -> StrictArray:
        return StrictArray(self._a.copy())

    def __deepcopy__(self, memo: dict[int, Any]) -> StrictArray:
        return StrictArray(self._a.copy())

    def __reduce__(self) -> tuple[Any, ...]:
        return (StrictArray, (self._a,))

    # ---- scalar conversion (size-1 arrays, like CuPy) ------------------------------

    def _scalar(self, what: str) -> Any:
        if self._a.size != 1:
            raise TypeError(f"only size-1 arrays can be converted to Python {what}")
        return self._a.reshape(())[()]

    def __bool__(self) -> bool:
        return bool(self._a)

    def __float__(self) -> float:
        return float(self._scalar("scalars"))

    def __int__(self) -> int:
        return int(self._scalar("scalars"))

    def __complex__(self) -> complex:
        return complex(self._scalar("scalars"))

    # No __index__, as CuPy's ndarray has none (it would synchronise the device): a 0-d
    # device array is no Python int for operator.index, range(), list indexing or an axis;
    # funcgrad reads one with funcgrad.backend.operator_index.

    def __round__(self, ndigits: int | None = None) -> StrictArray:
        return StrictArray(np.round(self._a, 0 if ndigits is None else ndigits))

    # ---- operators -----------------------------------------------------------------

    __add__ = _binary(operator.add, "__add__")
    __radd__ = _reflected(operator.add, "__radd__")
    __iadd__ = _inplace(operator.iadd, "__iadd__")
    __sub__ = _binary(operator.sub, "__sub__")
    __rsub__ = _reflected(operator.sub, "__rsub__")
    __isub__ = _inplace(operator.isub, "__isub__")
    __mul__ = _binary(operator.mul, "__mul__")
    __rmul__ = _reflected(operator.mul, "__rmul__")
    __imul__ = _inplace(operator.imul, "__imul__")
    __truediv__ = _binary(operator.truediv, "__truediv__")
    __rtruediv__ = _reflected(operator.truediv, "__rtruediv__")
    __itruediv__ = _inplace(operator.itruediv, "__itruediv__")
    __floordiv__ = _binary(operator.floordiv, "__floordiv__")
    __rfloordiv__ = _reflected(operator.floordiv, "__rfloordiv__")
    __ifloordiv__ = _inplace(operator.ifloordiv, "__ifloordiv__")
    __mod__ = _binary(operator.mod, "__mod__")
    __rmod__ = _reflected(operator.mod, "__rmod__")
    __imod__ = _inplace(operator.imod, "__imod__")
    __pow__ = _binary(operator.pow, "__pow__")
    __rpow__ = _reflected(operator.pow, "__rpow__")
    __ipow__ = _inplace(operator.ipow, "__ipow__")
    __matmul__ = _binary(operator.matmul, "__matmul__")
    __rmatmul__ = _reflected(operator.matmul, "__rmatmul__")
    __imatmul__ = _inplace(operator.imatmul, "__imatmul__")
    __and__ = _binary(operator.and_, "__and__")
    __rand__ = _reflected(operator.and_, "__rand__")
    __iand__ = _inplace(operator.iand, "__iand__")
    __or__ = _binary(operator.or_, "__or__")
    __ror__ = _reflected(operator.or_, "__ror__")
    __ior__ = _inplace(operator.ior, "__ior__")
    __xor__ = _binary(operator.xor, "__xor__")
    __rxor__ = _reflected(operator.xor, "__rxor__")
    __ixor__ = _inplace(operator.ixor, "__ixor__")
    __lshift__ = _binary(operator.lshift, "__lshift__")
    __rlshift__ = _reflected(operator.lshift, "__rlshift__")
    __ilshift__ = _inplace(operator.ilshift, "__ilshift__")
    __rshift__ = _binary(operator.rshift, "__rshift__")
    __rrshift__ = _reflected(operator.rshift, "__rrshift__")
    __irshift__ = _inplace(operator.irshift, "__irshift__")
    __divmod__ = _binary(divmod, "__divmod__")
    __rdivmod__ = _reflected(divmod, "__rdivmod__")

    __lt__ = _binary(lambda a, b: _cupy_order("less", a, b), "__lt__")
    __le__ = _binary(lambda a, b: _cupy_order("less_equal", a, b), "__le__")
    __eq__ = _binary(operator.eq, "__eq__")  # type: ignore[assignment]
    __ne__ = _binary(operator.ne, "__ne__")  # type: ignore[assignment]
    __gt__ = _binary(lambda a, b: _cupy_order("greater", a, b), "__gt__")
    __ge__ = _binary(lambda a, b: _cupy_order("greater_equal", a, b), "__ge__")

    __neg__ = _unary(operator.neg, "__neg__")
    __pos__ = _unary(operator.pos, "__pos__")
    __abs__ = _unary(operator.abs, "__abs__")
    __invert__ = _unary(operator.invert, "__invert__")

    # ---- methods -------------------------------------------------------------------


    def astype(self, dtype: Any, *args: Any, **kwargs: Any) -> StrictArray:
        """Like ``numpy.ndarray.astype``, but a float converts to an integer as on CUDA:
        saturated to the integer's range, NaN to 0 (NumPy on x86 wraps: -3.0 -> uint8 is
        253 there, 0 on CuPy)."""
        with np.errstate(invalid="ignore", over="ignore"):  # (CuPy never warns)
            out = _array_method("astype")(self, dtype, *args, **kwargs)
        dt = out.dtype
        if self._a.dtype.kind == "f" and dt.kind in "iu":
            info = np.iinfo(dt)
            a, o = self._a, out._a
            o[a >= info.max] = info.max
            o[a <= info.min] = info.min
            o[np.isnan(a)] = 0
        return out
    reshape = _array_method("reshape")
    transpose = _array_method("transpose")
    ravel = _array_method("ravel")
    copy = _array_method("copy")
    sum = _array_method("sum")
    prod = _array_method("prod")
    mean = _array_method("mean")
    std = _array_method("std")
    var = _array_method("var")
    max = _array_method("max")
    min = _array_method("min")
    argmax = _array_method("argmax")
    argmin = _array_method("argmin")
    any = _array_method("any")
    all = _array_method("all")
    cumsum = _array_method("cumsum")
    cumprod = _array_method("cumprod")

    def clip(self, a_min: Any = None, a_max: Any = None, out: Any = None, **kwargs: Any) -> Any:
        """Like ``numpy.ndarray.clip``, but, as CuPy's, Python-int bounds outside an integer
        dtype's range raise ``OverflowError``."""
        _cupy_clip_bounds_check(self._a, (a_min, a_max), "StrictArray.clip")
        return _array_method("clip")(self, a_min, a_max, out=out, **kwargs)
    conj = _array_method("conj")
    conjugate = _array_method("conjugate")
    squeeze = _array_method("squeeze")
    swapaxes = _array_method("swapaxes")
    dot = _array_method("dot")
    nonzero = _array_method("nonzero")

    def round(self, decimals: Any = 0, out: Any = None) -> StrictArray:
        """Like ``numpy.ndarray.round``, but a bool array rounds as CuPy's does: cast to
        float16 first, for any ``decimals`` (NumPy refuses ``decimals != 0`` there)."""
        return _cupy_round(self, decimals, out)
    repeat = _array_method("repeat")
    take = _array_method("take")
    put = _array_method("put")
    diagonal = _array_method("diagonal")
    trace = _array_method("trace")
    def sort(self, axis: int = -1, kind: Any = None) -> None:
        """Sort in place, as CuPy does: stable, real floats ordered by their bits."""
        self._a[...] = _sort_as_cupy(self._a, axis)

    def argsort(self, axis: Any = -1, kind: Any = None) -> StrictArray:
        """The sorting permutation, as CuPy's: stable, real floats ordered by their bits."""
        return StrictArray(_argsort_as_cupy(self._a, axis))

    partition = _array_method("partition")
    argpartition = _array_method("argpartition")
    searchsorted = _array_method("searchsorted")
    compress = _array_method("compress")

    def choose(self, choices: Any, out: Any = None, mode: str = "raise") -> StrictArray:
        """Like ``numpy.ndarray.choose``, but, as CuPy's, ``choices`` must be one array (CuPy
        reads ``choices.shape``: a list of arrays is an AttributeError there)."""
        if not isinstance(choices, StrictArray):
            raise TypeError(
                "strict backend (as CuPy): StrictArray.choose takes its choices as one array, "
                f"not a {type(choices).__name__}; stack them first (xp.stack, fnp.stack)")
        return _array_method("choose")(self, choices, out=out, mode=mode)

    def flatten(self, order: Any = "C") -> StrictArray:
        """A one-dimensional copy in ``order``, read as CuPy reads it (its
        ``_normalize_order``): the first letter of a string, any case; anything else,
        an int included (PyTorch's ``x.flatten(1)``), is CuPy's ``TypeError('order not
        understood')``, where NumPy says ``order must be str, not int``."""
        letter = None
        if type(order) not in (int, float, complex):
            letter = "C" if len(order) == 0 else str(order[0]).upper()
        if letter not in ("K", "A", "C", "F"):
            raise TypeError("order not understood")
        return StrictArray(self._a.flatten(letter))

    def view(self, dtype: Any = None) -> StrictArray:
        """A view of the same data, optionally reinterpreted as ``dtype``."""
        if isinstance(dtype, type) and issubclass(dtype, np.ndarray):
            raise TypeError("StrictArray.view: cannot view a device array as a numpy.ndarray")
        return StrictArray(self._a.view() if dtype is None else self._a.view(dtype))

    def fill(self, value: Any) -> None:
        """Fill the array with a scalar (Python/NumPy scalar or 0-d StrictArray)."""
        self._a.fill(_setitem_value(value, "StrictArray.fill"))

    def item(self, *args: Any) -> Any:
        """The element as a Python scalar (like ``numpy.ndarray.item``)."""
        return self._a.item(*_unwrap(args, "StrictArray.item", {}, None))

    def tolist(self) -> Any:
        """Nested Python lists of Python scalars (like ``numpy.ndarray.tolist``)."""
        return self._a.tolist()


def _setitem_value(value: Any, where: str) -> Any:
    return _unwrap(value, where + " (value)", {}, None)


# --------------------------------------------------------------------------------------
# the "xp" namespace
# --------------------------------------------------------------------------------------

# Functions whose results are never wrapped and which, like their CuPy counterparts,
# only inspect metadata (so raw host arrays are harmless and accepted).
_METADATA = frozenset(
    {
        "result_type", "shape", "ndim", "size", "iscomplexobj", "isrealobj", "can_cast",
        "broadcast_shapes", "promote_types", "isscalar", "min_scalar_type", "issubdtype",
        "isdtype", "common_type", "mintypecode", "typename", "iterable", "get_printoptions",
        "set_printoptions", "printoptions", "geterr", "seterr", "geterrcall", "seterrcall",
        "getbufsize", "setbufsize", "may_share_memory", "shares_memory",
    }
)  # fmt: skip

# Explicit host-to-device transfers: raw numpy.ndarray arguments allowed (copied).
_TRANSFER = frozenset({"asarray", "array", "asanyarray", "ascontiguousarray"})

# Creation functions: NumPy-scalar results are wrapped even without StrictArray inputs.
_CREATION = frozenset(
    {
        "zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "geomspace",
        "eye", "identity", "asfortranarray", "zeros_like", "ones_like", "empty_like",
        "full_like", "tri", "tril_indices", "triu_indices", "indices", "meshgrid",
        "fromfunction", "frombuffer", "fromiter", "fromstring", "copy", "diag", "diagflat",
        "vander", "asarray_chkfinite", "require",
    }
)  # fmt: skip

_INDEX_TRICKS = frozenset({"r_", "c_", "mgrid", "ogrid"})


def _wrap_callable(fn: Callable[..., Any], qualname: str, kind: str) -> Callable[..., Any]:
    """Wrap a NumPy callable: unwrap StrictArray args, refuse host arrays, wrap results.

    ``kind`` is ``"array"`` (default), ``"creation"``, ``"transfer"`` or ``"metadata"``.
    """
    allow_host = kind in ("transfer", "metadata")
    always_wrap_scalars = kind in ("creation", "transfer")
    # CuPy's functions (not its ufuncs) take their array argument as an ``ndarray``:
    # ``cupy.reshape(0.5, ...)`` raises where NumPy converts the Python scalar, so here too.
    array_first = kind == "array" and qualname.rpartition(".")[2] not in _SCALAR_FIRST

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if array_first and args and type(args[0]) in _PY_SCALARS:
            raise TypeError(
                f"strict backend (as CuPy): {qualname} takes an array, not the Python "
                f"{type(args[0]).__name__} {args[0]!r}; convert it with xp.asarray")
        ids: dict[int, StrictArray] = {}
        hosts: list[np.ndarray] | None = [] if allow_host else None
        args = _unwrap(args, qualname, ids, hosts)
        kwargs = {k: _unwrap(v, qualname, ids, hosts) for k, v in kwargs.items()}
        result = fn(*args, **kwargs)
        if kind == "metadata":
            return result
        if (
            hosts
            and isinstance(result, np.ndarray)
            and any(np.may_share_memory(result, h) for h in hosts)
        ):
            result = result.copy()  # host -> device transfer never aliases host memory
        return _wrap(result, always_wrap_scalars or bool(ids), ids)

    wrapper.__name__ = getattr(fn, "__name__", qualname.rpartition(".")[2])
    wrapper.__qualname__ = qualname
    wrapper.__doc__ = getattr(fn, "__doc__", None)
    wrapper.__wrapped__ = fn  # type: ignore[attr-defined]
    return wrapper


#: The ufuncs whose ``at`` CuPy has (``cupy.ufunc.at``, a scatter kernel); the others have
#: none there, so none here.
_CUPY_UFUNCS_WITH_AT = frozenset({"add", "subtract", "maximum", "minimum", "bitwise_and",
                                  "bitwise_or", "bitwise_xor"})


class _StrictUfunc:
    """A NumPy ufunc lifted to StrictArray, keeping ``reduce``/``accumulate``/``at``/..."""

    def __init__(self, ufunc: np.ufunc, prefix: str) -> None:
        name = ufunc.__name__
        qual = f"{prefix}.{name}"
        self._ufunc = ufunc
        self.__name__ = name
        self.__qualname__ = qual
        self.__doc__ = ufunc.__doc__
        call = (ufunc if name not in _CUPY_ORDERS else
                lambda *a, **k: _cupy_order(name, *a) if not k else ufunc(*a, **k))
        self._call = _wrap_callable(call, qual, "ufunc")  # ufuncs take scalars, as CuPy's
        self.reduce = _wrap_callable(ufunc.reduce, qual + ".reduce", "array")
        self.accumulate = _wrap_callable(ufunc.accumulate, qual + ".accumulate", "array")
        self.reduceat = _wrap_callable(ufunc.reduceat, qual + ".reduceat", "array")
        self.outer = _wrap_callable(ufunc.outer, qual + ".outer", "ufunc")
        if name in _CUPY_UFUNCS_WITH_AT:
            self.at = _wrap_callable(ufunc.at, qual + ".at", "array")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        _cupy_scalar_check(args, self.__qualname__)
        for a in args:
            if type(a) in (list, tuple):  # CuPy's ufuncs: "Unsupported type <class 'list'>"
                raise TypeError(
                    f"strict backend (as CuPy): {self.__qualname__} takes arrays and scalars, "
                    f"not a {type(a).__name__}; convert it with xp.asarray")
        return self._call(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        # nin, nout, nargs, identity, types, ntypes, signature, ...
        inner = self.__dict__.get("_ufunc")
        if inner is None or name == "at":
            raise AttributeError(f"strict backend (as CuPy): {self.__name__!r} has no {name!r}")
        return getattr(inner, name)

    def __repr__(self) -> str:
        return f"<strict ufunc '{self.__name__}'>"


class _StrictIndexTrick:
    """``r_``/``c_``/``mgrid``/``ogrid`` lifted to StrictArray."""

    def __init__(self, inner: Any, qualname: str) -> None:
        self._inner = inner
        self._qualname = qualname

    def __getitem__(self, key: Any) -> Any:
        ids: dict[int, StrictArray] = {}
        k = _unwrap(key, self._qualname, ids, None)
        return _wrap(self._inner[k], True, ids)

    def __repr__(self) -> str:
        return f"<strict {self._qualname}>"


class _StrictRandomProxy:
    """Base for random generators whose draws are StrictArray."""

    _inner: Any
    _prefix: str

    def __getattr__(self, name: str) -> Any:
        inner = self.__dict__.get("_inner")
        if inner is None:
            raise AttributeError(name)
        value = getattr(inner, name)
        if callable(value) and not isinstance(value, type):
            return _wrap_callable(value, f"{self._prefix}.{name}", "creation")
        return value

    def __repr__(self) -> str:
        return f"Strict{self._inner!r}"


class _StrictRandomState(_StrictRandomProxy):
    """``numpy.random.RandomState`` whose draws are StrictArray."""

    _prefix = "numpy.random.RandomState"

    def __init__(self, seed: Any = None) -> None:
        self._inner = np.random.RandomState(_unwrap(seed, self._prefix, {}, []))


class _StrictGenerator(_StrictRandomProxy):
    """``numpy.random.Generator`` whose draws are StrictArray."""

    _prefix = "numpy.random.Generator"

    def __init__(self, bit_generator: Any) -> None:
        if isinstance(bit_generator, np.random.Generator):
            self._inner = bit_generator
        else:
            self._inner = np.random.Generator(bit_generator)


def _default_rng(seed: Any = None) -> _StrictGenerator:
    """Like ``numpy.random.default_rng``; the generator's draws are StrictArray."""
    if isinstance(seed, _StrictGenerator):
        return seed
    return _StrictGenerator(np.random.default_rng(_unwrap(seed, "default_rng", {}, [])))


class _StrictNamespace(types.ModuleType):
    """A module-like "xp" namespace mirroring a NumPy module over StrictArray.

    Attributes are looked up lazily in the NumPy module and cached: ufuncs and
    functions are wrapped, everything else (dtypes, classes, constants) passes
    through unchanged.
    """

    def __init__(
        self,
        name: str,
        np_module: types.ModuleType,
        prefix: str,
        *,
        all_creation: bool = False,
        overrides: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(name, f"Strict test backend mirror of ``{prefix}``.")
        self._np_module = np_module
        self._prefix = prefix
        self._all_creation = all_creation
        for key, value in (overrides or {}).items():
            setattr(self, key, value)

    def _kind(self, name: str) -> str:
        if name in _METADATA:
            return "metadata"
        if self._prefix == "numpy" and name in _TRANSFER:
            return "transfer"
        if self._all_creation or name in _CREATION:
            return "creation"
        return "array"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        try:
            value = getattr(self.__dict__["_np_module"], name)
        except AttributeError:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}") from None
        qual = f"{self._prefix}.{name}"
        wrapped: Any
        if isinstance(value, np.ufunc):
            wrapped = _StrictUfunc(value, self._prefix)
        elif isinstance(value, (type, types.ModuleType)):
            wrapped = value
        elif name in _INDEX_TRICKS:
            wrapped = _StrictIndexTrick(value, qual)
        elif callable(value):
            wrapped = _wrap_callable(value, qual, self._kind(name))
        else:
            wrapped = value
        setattr(self, name, wrapped)  # cache: later lookups skip __getattr__
        return wrapped

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(dir(self.__dict__["_np_module"])))

    def __repr__(self) -> str:
        return f"<strict namespace {self.__name__!r} over {self._prefix!r}>"


_np_clip = _wrap_callable(np.clip, "numpy.clip", "array")
_np_linspace = _wrap_callable(np.linspace, "numpy.linspace", "creation")


def _linspace(start: Any, stop: Any, num: Any = 50, endpoint: bool = True,
              retstep: bool = False, dtype: Any = None, axis: int = 0, **kwargs: Any) -> Any:
    """``cupy.linspace``: an integer ``dtype`` takes the floored float samples through
    ``astype`` (saturating, as :meth:`StrictArray.astype`)."""
    dt = None if dtype is None else np.dtype(dtype)
    integer = dt is not None and dt.kind in "iu"
    out = _np_linspace(start, stop, num, endpoint, retstep, None if integer else dtype, axis,
                       **kwargs)
    if not integer:
        return out
    y = out[0] if retstep else out
    y = StrictArray(np.floor(y._a)).astype(dt)
    return (y, out[1]) if retstep else y
_np_round = _wrap_callable(np.round, "numpy.round", "array")
# (NumPy's docstrings, with their examples on NumPy arrays, are not this module's doctests)
_np_clip.__doc__ = "numpy.clip over StrictArray."
_np_linspace.__doc__ = "numpy.linspace over StrictArray."
_np_round.__doc__ = "numpy.round over StrictArray."


def _cupy_round(a: Any, decimals: Any = 0, out: Any = None) -> Any:
    """``cupy.round``: its ufunc has no bool loop, so a bool array is cast to float16 and
    rounded there for every ``decimals``, where NumPy refuses ``decimals != 0`` (a
    UFuncTypeError: 10**decimals does not fit a bool)."""
    if isinstance(a, StrictArray) and a.dtype == np.bool_:
        a = StrictArray(a._a.astype(np.float16))
    return _np_round(a, decimals, out=out)


def _clip(a: Any, a_min: Any = None, a_max: Any = None, out: Any = None, **kwargs: Any) -> Any:
    """``numpy.clip`` over StrictArray, refusing Python-int bounds outside an integer array's
    range as ``cupy.clip`` does (see :func:`_cupy_clip_bounds_check`)."""
    if isinstance(a, StrictArray):
        _cupy_clip_bounds_check(a._a, (a_min, a_max), "numpy.clip")
    return _np_clip(a, a_min, a_max, out=out, **kwargs)


def _get_array_module(*args: Any) -> types.ModuleType:
    """Like ``cupy.get_array_module``: strict_numpy if any argument is a StrictArray."""
    return strict_numpy if any(isinstance(a, StrictArray) for a in args) else np


# --------------------------------------------------------------------------------------
# public helpers
# --------------------------------------------------------------------------------------


def to_strict(x: Any, dtype: Any = None) -> StrictArray:
    """Transfer host data (any array-like) to a new StrictArray (a copy).

    A StrictArray is returned unchanged when no ``dtype`` conversion is needed.

    >>> to_strict(np.arange(3))
    StrictArray([0, 1, 2])
    >>> to_strict(2.5)
    StrictArray(2.5)
    """
    if isinstance(x, StrictArray):
        return x if dtype is None or x.dtype == np.dtype(dtype) else x.astype(dtype)
    return StrictArray(np.array(_unwrap(x, "to_strict", {}, []), dtype=dtype, copy=True))


def to_numpy(x: Any) -> np.ndarray:
    """Transfer to host: StrictArray -> ``numpy.ndarray`` copy; NumPy arrays pass through.

    >>> to_numpy(to_strict([1.0, 2.0]))
    array([1., 2.])
    >>> a = np.zeros(2)
    >>> to_numpy(a) is a
    True
    """
    if isinstance(x, StrictArray):
        return x.get()
    if isinstance(x, np.ndarray):
        return x
    return np.asarray(_unwrap(x, "to_numpy", {}, []))


def is_strict(x: Any) -> bool:
    """True when ``x`` is a StrictArray.

    >>> is_strict(to_strict([1])), is_strict(np.ones(1))
    (True, False)
    """
    return isinstance(x, StrictArray)


_random = _StrictNamespace(
    "strict_numpy.random",
    np.random,
    "numpy.random",
    all_creation=True,
    overrides={
        "default_rng": _default_rng,
        "RandomState": _StrictRandomState,
        "Generator": _StrictGenerator,
    },
)

# --------------------------------------------------------------------------------------
# numpy.linalg as CuPy's: cuSOLVER never raises LinAlgError (CuPy does not check, which would
# synchronise), so code that catches NumPy's error misses the GPU's values; modelled here.
# --------------------------------------------------------------------------------------


def _lu_solve_no_raise(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """LAPACK's getrf + getrs on one square ``a`` (``b`` ``(n,)`` or ``(n, k)``), as cuSOLVER
    computes them: partial pivoting, a zero pivot left unscaled in ``U`` and divided by
    (inf/NaN), never an error."""
    dt = np.result_type(a.dtype, b.dtype, 1.0)
    lu, x, n = np.array(a, dtype=dt), np.array(b, dtype=dt), a.shape[-1]
    with np.errstate(all="ignore"):
        for j in range(n):
            p = j + int(np.argmax(np.abs(lu[j:, j].real) + np.abs(lu[j:, j].imag)))
            lu[[j, p]], x[[j, p]] = lu[[p, j]], x[[p, j]]
            if lu[j, j] != 0:
                lu[j + 1:, j] /= lu[j, j]
            lu[j + 1:, j + 1:] -= np.multiply.outer(lu[j + 1:, j], lu[j, j + 1:])
        for i in range(n):
            x[i] -= lu[i, :i] @ x[:i]
        for i in range(n - 1, -1, -1):
            x[i] = (x[i] - lu[i, i + 1:] @ x[i + 1:]) / lu[i, i]
    return x


def _each(fn: Callable[..., np.ndarray], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a, b = np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:])
    out = [fn(a[i], b[i]) for i in np.ndindex(batch)]
    return np.stack(out).reshape(batch + out[0].shape) if out else np.linalg.solve(a, b)


def _linalg_solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """CuPy's solve: getrf + getrs of ``a`` (batched: cuBLAS's), no error for a singular one."""
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        if b.ndim == 1:
            return _each(_lu_solve_no_raise, a, b[:, None])[..., 0]
        return _each(_lu_solve_no_raise, a, b)


def _linalg_inv(a: np.ndarray) -> np.ndarray:
    """CuPy's inv: a C-ordered matrix is inverted through the LU of ``a^T`` (gesv on the
    transposed view), so a singular one gives other inf/NaN than LAPACK's; no error."""
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        eye = np.eye(a.shape[-1], dtype=a.dtype)
        if a.ndim == 2 and not (a.flags.f_contiguous and not a.flags.c_contiguous):
            return _lu_solve_no_raise(a.T, eye).T
        return _each(_lu_solve_no_raise, a, eye)


def _linalg_svd(a: np.ndarray, full_matrices: bool = True, compute_uv: bool = True) -> Any:
    """CuPy's svd (which has no ``hermitian``): NaN or inf input gives partly NaN values
    (cuSOLVER's gesvd: ``s`` of ``[[nan, 1], [1, 2]]`` was ``[nan, 2]``), not NumPy's
    LinAlgError."""
    try:
        return np.linalg.svd(a, full_matrices, compute_uv)
    except np.linalg.LinAlgError:
        bad = ~np.isfinite(a).all(axis=(-2, -1))
        res = np.linalg.svd(np.where(bad[..., None, None], 0, a), full_matrices, compute_uv)
        (res.S if compute_uv else res)[bad, :1] = np.nan
        return res


def _potrf_no_raise(a: np.ndarray) -> np.ndarray:
    """LAPACK's potrf (lower) on one matrix, left as cuSOLVER leaves it when ``a`` is not
    positive definite: stopped at the first pivot that is not > 0 (or NaN), that pivot on
    the diagonal, the columns after it holding ``a``'s entries."""
    low = np.tril(np.array(a, dtype=np.result_type(a.dtype, 1.0)))
    with np.errstate(all="ignore"):
        for j in range(a.shape[-1]):
            ajj = (low[j, j] - np.vdot(low[j, :j], low[j, :j])).real
            if not ajj > 0:
                low[j, j] = ajj
                break
            low[j, j] = np.sqrt(ajj)
            low[j + 1:, j] = (low[j + 1:, j] - low[j + 1:, :j] @ low[j, :j].conj()) / low[j, j]
    return low


def _linalg_cholesky(a: np.ndarray) -> np.ndarray:
    """CuPy's cholesky (which takes no ``upper``): no error for a matrix that is not
    positive definite, LAPACK's partial factor instead (the other matrices of a stack
    factored)."""
    try:
        return np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        def one(m: np.ndarray, _: np.ndarray) -> np.ndarray:
            try:
                return np.linalg.cholesky(m)
            except np.linalg.LinAlgError:
                return _potrf_no_raise(m)

        return _each(one, a, a)


def _refuse_nonfinite(name: str) -> Callable[[np.ndarray], Any]:
    def eig(a: np.ndarray) -> Any:
        if not np.isfinite(a).all():
            raise RuntimeError(f"strict backend (as CuPy's cuSOLVER geev): {name} of NaN or inf "
                               "input fails: CUSOLVER_STATUS_INTERNAL_ERROR")
        return getattr(np.linalg, name)(a)

    return eig


_linalg = _StrictNamespace("strict_numpy.linalg", np.linalg, "numpy.linalg", overrides={
    name: _wrap_callable(fn, f"numpy.linalg.{name}", "array") for name, fn in (
        ("solve", _linalg_solve), ("inv", _linalg_inv), ("svd", _linalg_svd),
        ("cholesky", _linalg_cholesky),
        ("eig", _refuse_nonfinite("eig")), ("eigvals", _refuse_nonfinite("eigvals")))})

_STRICT_NUMPY_DOC = """The "xp" array module of the strict backend (use like ``numpy`` / ``cupy``).

Functions and ufuncs take and return StrictArray; raw ``numpy.ndarray`` arguments
raise ``TypeError`` except in the explicit transfers ``asarray``/``array``/
``asanyarray``/``ascontiguousarray``.  Dtypes, constants and classes pass through.

>>> x = strict_numpy.linspace(0.0, 1.0, 3)
>>> strict_numpy.sin(x * strict_numpy.pi)[1]
StrictArray(1.)
>>> strict_numpy.float32 is np.float32
True
>>> strict_numpy.sin(np.zeros(2))
Traceback (most recent call last):
...
TypeError: strict backend: numpy.ndarray argument given to numpy.sin: host array mixed with device arrays; use funcgrad.device_put
"""

strict_numpy: Any = _StrictNamespace(
    "strict_numpy",
    np,
    "numpy",
    overrides={
        "__doc__": _STRICT_NUMPY_DOC,
        "ndarray": StrictArray,
        "linalg": _linalg,
        "fft": _StrictNamespace("strict_numpy.fft", np.fft, "numpy.fft"),
        "random": _random,
        "asnumpy": to_numpy,
        "get_array_module": _get_array_module,
        "clip": _clip,
        "linspace": _linspace,
        "round": _cupy_round,
        "around": _cupy_round,
        "sort": _wrap_callable(_sort_as_cupy, "numpy.sort", "array"),
        "argsort": _wrap_callable(_argsort_as_cupy, "numpy.argsort", "array"),
    },
)

__test__ = {"strict_numpy": _STRICT_NUMPY_DOC}
