"""NumPy's scalar types and ``ndarray`` as funcgrad.numpy names them, usable on traced values.

``fnp.float32`` is usable wherever NumPy's ``numpy.float32`` is (a dtype argument,
``numpy.dtype(...)``, ``isinstance`` of a NumPy scalar, ``==`` against dtypes) and, called on a
traced or device array, casts it as ``astype`` does (``numpy.float32(x)`` cannot: it needs a
host value). On host values it is NumPy's own constructor. ``isinstance(x, fnp.ndarray)`` is
True for arrays of every backend and for traced arrays, as in JAX.
"""

from __future__ import annotations

from typing import Any

import numpy

from funcgrad.core import Tracer
from funcgrad.numpy._astype import astype
from funcgrad.numpy._creation import _needs_stacking, asarray

__all__ = [
    "ndarray", "bool_", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
    "uint64", "float16", "float32", "float64", "complex64", "complex128", "float_", "complex_",
]


class _ScalarMeta(type):
    """The metaclass of funcgrad.numpy's scalar types: each stands for one NumPy dtype."""

    dtype: numpy.dtype

    def __call__(cls, x: Any = 0, /) -> Any:
        if _needs_stacking(x):  # traced, on a device, or a list holding such values
            return astype(asarray(x), cls.dtype)
        return cls.dtype.type(x)

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, cls.dtype.type)

    def __subclasscheck__(cls, subclass: Any) -> bool:
        return subclass is cls or issubclass(subclass, cls.dtype.type)

    # Equal to (and hashed as) NumPy's type, so dtype == fnp.float32 and dict lookups keyed by
    # NumPy's types behave as with numpy.float32.
    def __eq__(cls, other: Any) -> bool:
        if cls is other or other is cls.dtype.type:
            return True
        return isinstance(other, numpy.dtype) and other == cls.dtype

    def __ne__(cls, other: Any) -> bool:
        return not cls.__eq__(other)

    def __hash__(cls) -> int:
        return hash(cls.dtype.type)

    def __repr__(cls) -> str:
        return f"<class 'funcgrad.numpy.{cls.__name__}'>"


def _scalar_type(np_type: type, name: str | None = None) -> _ScalarMeta:
    name = name or np_type.__name__
    dt = numpy.dtype(np_type)
    doc = (
        f"NumPy's ``{name}``; called on a traced or device array it casts like "
        f"``x.astype({name})``.\n\n"
        "Example:\n"
        "    >>> import funcgrad, funcgrad.numpy as fnp\n"
        f"    >>> funcgrad.jit(lambda x: fnp.{name}(x))(1.0).dtype\n"
        f"    dtype('{dt.name}')\n"
    )
    return _ScalarMeta(name, (), {
        "dtype": dt, "__doc__": doc, "__module__": "funcgrad.numpy", "__qualname__": name,
    })


bool_ = _scalar_type(numpy.bool_)
bool = bool_  # noqa: A001  (NumPy 2's name)
int8 = _scalar_type(numpy.int8)
int16 = _scalar_type(numpy.int16)
int32 = _scalar_type(numpy.int32)
int64 = _scalar_type(numpy.int64)
uint8 = _scalar_type(numpy.uint8)
uint16 = _scalar_type(numpy.uint16)
uint32 = _scalar_type(numpy.uint32)
uint64 = _scalar_type(numpy.uint64)
float16 = _scalar_type(numpy.float16)
float32 = _scalar_type(numpy.float32)
float64 = _scalar_type(numpy.float64)
complex64 = _scalar_type(numpy.complex64)
complex128 = _scalar_type(numpy.complex128)
# JAX keeps the aliases NumPy 2 dropped: jnp.float_ is float64, jnp.complex_ complex128.
float_ = float64
complex_ = complex128

# NumPy's C-named aliases of these types (double is float64...), where NumPy's alias is the
# dtype's own type (on this platform); the others stay NumPy's classes (funcgrad.numpy._dtypes).
_C_NAMES = ("byte", "short", "intc", "int_", "long", "intp", "ubyte", "ushort", "uintc",
            "uint", "ulong", "uintp", "half", "single", "double", "csingle", "cdouble")
for _name in _C_NAMES:
    _t = getattr(numpy, _name)
    if numpy.dtype(_t).type is _t and numpy.dtype(_t).kind in "biufc":
        globals()[_name] = _scalar_type(_t, _name)
        __all__.append(_name)
del _name, _t


def _is_array_type(t: Any) -> bool:
    if not isinstance(t, type):
        return False
    if issubclass(t, numpy.ndarray | Tracer):
        return True
    # CuPy's and the strict test backend's arrays, without importing either.
    return (t.__module__.split(".")[0], t.__name__) in (("cupy", "ndarray"),
                                                       ("funcgrad", "StrictArray"))


class _ArrayMeta(type):
    def __instancecheck__(cls, instance: Any) -> bool:
        return _is_array_type(type(instance))

    def __subclasscheck__(cls, subclass: Any) -> bool:
        return subclass is cls or _is_array_type(subclass)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return numpy.ndarray(*args, **kwargs)


class ndarray(metaclass=_ArrayMeta):
    """The array type as an ``isinstance`` target: NumPy, CuPy and traced arrays are instances.

    Calling it makes a ``numpy.ndarray`` (NumPy's low-level constructor).

    Example:
        >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
        >>> isinstance(np.ones(2), fnp.ndarray), isinstance(1.0, fnp.ndarray)
        (True, False)
        >>> def f(x):
        ...     assert isinstance(x, fnp.ndarray)  # a tracer here
        ...     return x
        >>> funcgrad.jit(f)(np.ones(2))
        array([1., 1.])
    """

    __module__ = "funcgrad.numpy"
