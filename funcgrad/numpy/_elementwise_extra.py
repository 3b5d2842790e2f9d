"""funcgrad.numpy: more elementwise functions (floating-point decomposition, integer bit
utilities, complex/real predicates, ``unwrap``, ``packbits``).

Like :mod:`funcgrad.numpy._elementwise`: NumPy's values and dtypes (NEP 50 included), plain
arrays out, and every function traces under ``grad``/``jit``/``vmap``. Derivatives follow JAX:
``ldexp`` is differentiable in ``x``, the fractional part of ``modf`` and the mantissa of
``frexp`` have their natural slopes, ``unwrap`` has slope 1; integer and bit functions
(``gcd``, ``lcm``, ``bitwise_count``, ``packbits``...) have zero tangents.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as _np

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.core import Tracer, concrete_or_error
from funcgrad.errors import ShapeError
from funcgrad.numpy import _elementwise as _el
from funcgrad.numpy._dtype_utils import result_type
from funcgrad.ops import elementwise as _ew
from funcgrad.ops import elementwise_extra as _ex
from funcgrad.ops._util import normalize_axis

ArrayLike = Any

__all__: list[str] = []


def _export(fn: Any) -> Any:
    globals()[fn.__name__] = fn
    __all__.append(fn.__name__)
    return fn


# ---------------------------------------------------------------------------------------------
# ufuncs


def _mixed(name: str, op: Any, summary: str, example: str, result: str) -> None:
    _export(_el._make_binary(name, op, summary, example, result))


def _unary(name: str, op: Any, summary: str, example: str, result: str) -> None:
    _export(_el._make_unary(name, op, summary, example, result))


def _colocated(op: Any) -> Any:
    return lambda x, y: op(*_el._colocate(x, y))


_mixed("gcd", _colocated(_ex.gcd), "Elementwise greatest common divisor of integers",
       "gcd([12, 20], 8)", "array([4, 4])")
_mixed("lcm", _colocated(_ex.lcm), "Elementwise least common multiple of integers",
       "lcm([4, 6], 10)", "array([20, 30])")
_mixed("ldexp", _colocated(_ex.ldexp),
       "Elementwise ``x1 * 2**x2`` for integer ``x2`` (exact; differentiable in ``x1``)",
       "ldexp([0.5, 3.0], 2)", "array([ 2., 12.])")
_mixed("nextafter", _colocated(_ex.nextafter),
       "Elementwise next floating-point value after ``x1`` towards ``x2``",
       "nextafter(1.0, 2.0) - 1.0", "array(2.22044605e-16)")
_unary("spacing", _ex.spacing, "Elementwise distance to the next larger-magnitude float",
       "spacing(1.0)", "array(2.22044605e-16)")
_unary("bitwise_count", _ex.bitwise_count,
       "Elementwise number of 1-bits in the absolute value of integers, as uint8",
       "bitwise_count([7, -1, 1024])", "array([3, 1, 1], dtype=uint8)")


def _two_out(name: str, x: Any, out: Any, kwargs: dict[str, Any]) -> Any:
    if out is not None or kwargs:
        (x,) = _el._ufunc_options(name, (x,), out, kwargs, False)
    else:
        (x,) = _el.asarray_operands(x)
    return x


@_export
def frexp(x: ArrayLike, /, out: Any = None, **kwargs: Any) -> tuple[Any, Any]:
    """``(mantissa, exponent)`` with ``x = mantissa * 2**exponent`` and
    ``0.5 <= |mantissa| < 1`` (exponent int32), like :func:`numpy.frexp`.

    The mantissa is differentiable (slope ``2**-exponent``); the exponent is an integer.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.frexp([3.0, 0.1])
        (array([0.75, 0.8 ]), array([ 2, -3], dtype=int32))
    """
    x = _two_out("frexp", x, out, kwargs)
    m, e = _ex.frexp(x)
    return m, e


@_export
def modf(x: ArrayLike, /, out: Any = None, **kwargs: Any) -> tuple[Any, Any]:
    """``(fractional part, integral part)``, both with the sign of ``x``, like
    :func:`numpy.modf`. The fractional part has slope 1, the integral part 0.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.modf([2.5, -1.25])
        (array([ 0.5 , -0.25]), array([ 2., -1.]))
    """
    x = _two_out("modf", x, out, kwargs)
    frac, whole = _ex.modf(x)
    return frac, whole


# ---------------------------------------------------------------------------------------------
# Predicates


def _signed_inf(name: str, x: Any, negative: bool, out: Any) -> Any:
    _el._no_out(name, out)
    (x,) = _el.asarray_operands(x)
    a = get_aval(x)
    if a.dtype.kind == "c":
        raise TypeError(
            f"funcgrad.numpy.{name}: not supported for {a.dtype} values because it would be "
            "ambiguous (as in NumPy); test the real and imaginary parts"
        )
    if a.dtype.kind not in "fc":
        return _ew.ne(x, x)  # all False, with x's shape
    sign = _ew.signbit(x)
    return _ew.and_(_ew.eq(_ew.abs(x), _np.inf), sign if negative else _ew.not_(sign))


@_export
def isposinf(x: ArrayLike, out: Any = None) -> Any:
    """Elementwise test for positive infinity, like :func:`numpy.isposinf` (complex raises).

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.isposinf([float("inf"), float("-inf"), 1.0])
        array([ True, False, False])
    """
    return _signed_inf("isposinf", x, False, out)


@_export
def isneginf(x: ArrayLike, out: Any = None) -> Any:
    """Elementwise test for negative infinity, like :func:`numpy.isneginf` (complex raises).

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.isneginf([float("inf"), float("-inf"), 1.0])
        array([False,  True, False])
    """
    return _signed_inf("isneginf", x, True, out)


@_export
def iscomplex(x: ArrayLike) -> Any:
    """Elementwise test for a nonzero imaginary part, like :func:`numpy.iscomplex`
    (all False for real dtypes).

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.iscomplex([1 + 1j, 1 + 0j])
        array([ True, False])
    """
    (x,) = _el.asarray_operands(x)
    return _ew.ne(_ew.imag(x), 0)


@_export
def isreal(x: ArrayLike) -> Any:
    """Elementwise test for a zero imaginary part, like :func:`numpy.isreal`
    (all True for real dtypes).

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.isreal([1 + 1j, 1 + 0j])
        array([False,  True])
    """
    (x,) = _el.asarray_operands(x)
    return _ew.eq(_ew.imag(x), 0)


def _dtype_of(x: Any) -> _np.dtype:
    if isinstance(x, Tracer):
        return x.aval.dtype
    dt = getattr(x, "dtype", None)
    if isinstance(dt, _np.dtype):
        return dt
    if isinstance(x, list | tuple):
        return get_aval(_el._seq_to_array(x)).dtype
    return _np.asarray(x).dtype


@_export
def iscomplexobj(x: Any) -> bool:
    """Whether ``x`` has a complex dtype (whatever its values), like
    :func:`numpy.iscomplexobj`. Works on traced arrays (their dtype is static).

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.iscomplexobj(1 + 0j), fnp.iscomplexobj([1.0, 2.0])
        (True, False)
    """
    return _dtype_of(x).kind == "c"


@_export
def isrealobj(x: Any) -> bool:
    """Whether ``x`` has a non-complex dtype, like :func:`numpy.isrealobj`.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.isrealobj(1 + 0j), fnp.isrealobj([1.0, 2.0])
        (False, True)
    """
    return _dtype_of(x).kind != "c"


@_export
def isscalar(element: Any) -> bool:
    """Whether ``element`` is a scalar (a Python number, NumPy scalar, str...), like
    :func:`numpy.isscalar`. Arrays are not, 0-d ones and traced ones included (a traced
    value is always an array, so jit and eager agree).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.isscalar(3.0), fnp.isscalar(np.array(3.0)), fnp.isscalar([3.0])
        (True, False, False)
    """
    if isinstance(element, Tracer):
        return False
    return builtins.bool(_np.isscalar(element))


# ---------------------------------------------------------------------------------------------
# Complex helpers


@_export
def real_if_close(a: ArrayLike, tol: float = 100) -> Any:
    """The real part when every imaginary part is within ``tol`` machine epsilons of 0
    (``tol`` itself when ``tol <= 1``), else ``a``, like :func:`numpy.real_if_close`.

    The result dtype depends on the values, so a complex input needs concrete values
    (it fails under ``jit``/``vmap``; use :func:`funcgrad.numpy.real` there).

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.real_if_close([2.1 + 4e-14j, 5.2 + 3e-15j], tol=1000)
        array([2.1, 5.2])
    """
    a = fnp.asarray(a)
    dt = get_aval(a).dtype
    if dt.kind != "c":
        return a
    if isinstance(tol, Tracer):
        tol = concrete_or_error(tol, "funcgrad.numpy.real_if_close(tol)")
    if tol > 1:
        tol = _np.finfo(dt).eps * tol
    close = fnp.all(_ew.lt(_ew.abs(_ew.imag(a)), tol))
    close = concrete_or_error(close, "funcgrad.numpy.real_if_close (its result dtype)")
    if builtins.bool(close):
        return _ew.real(a)
    return a


@_export
def sort_complex(a: ArrayLike) -> Any:
    """Sorted by real part, then imaginary part, along the last axis, as complex, like
    :func:`numpy.sort_complex` (int8/int16/uint8/uint16 become complex64, others complex128).

    Differentiable: the gradient follows each element to its sorted position.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.sort_complex([1 + 2j, 2 - 1j, 1 - 1j])
        array([1.-1.j, 1.+2.j, 2.-1.j])
    """
    a = fnp.asarray(a)
    if get_aval(a).ndim == 0:
        raise ShapeError("funcgrad.numpy.sort_complex: needs an array of rank >= 1, got 0-d")
    b = fnp.sort(a)
    dt = get_aval(b).dtype
    if dt.kind == "c":
        return b
    if dt.char in "bhBH":
        target = _np.dtype(_np.complex64)
    elif dt.char == "g":
        target = _np.dtype(_np.clongdouble)
    else:
        target = _np.dtype(_np.complex128)
    return _ew.convert_element_type(b, target)


# ---------------------------------------------------------------------------------------------
# unwrap


def _static_scalar(name: str, what: str, v: Any) -> Any:
    v = concrete_or_error(v, f"funcgrad.numpy.{name}({what})")
    if isinstance(v, _np.generic):
        return v.item()
    if isinstance(v, bool | int | float):
        return v
    if hasattr(v, "shape") and v.shape == ():
        return v.item()
    raise TypeError(
        f"funcgrad.numpy.{name}: {what} must be a scalar, got {type(v).__name__}"
    )


@_export
def unwrap(
    p: ArrayLike, discont: Any = None, axis: int = -1, *, period: float = 2 * math.pi
) -> Any:
    """Unwrap by taking the complement of large jumps with respect to ``period``, like
    :func:`numpy.unwrap` (jumps of at least ``max(discont, period/2)`` are corrected).

    Differentiable: the corrections are piecewise constant, so the slope is 1; a float
    ``period`` may be traced (under ``jit``, or differentiated, as in JAX).

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.unwrap([0.0, 3.0, 6.5, -0.5])
        array([ 0.        ,  3.        ,  0.21681469, -0.5       ])
    """

    (p,) = _el.asarray_operands(p)
    pa = get_aval(p)
    if pa.ndim == 0:
        raise ShapeError("funcgrad.numpy.unwrap: needs an array of rank >= 1, got 0-d")
    axis = normalize_axis("funcgrad.numpy.unwrap", axis, pa.ndim)
    if isinstance(period, Tracer) and get_aval(period).ndim == 0 and \
            get_aval(period).dtype.kind == "f":
        pass  # a traced float period (jit, or differentiated): the float formulas below
    else:
        period = _static_scalar("unwrap", "period", period)
    if isinstance(period, builtins.complex) or isinstance(period, bool):
        raise TypeError("funcgrad.numpy.unwrap: period must be a real number")
    pm = fnp.moveaxis(p, axis, -1)
    head, tail = pm[..., :1], pm[..., 1:]
    # (NumPy's diff of bools is "changed", not a subtraction)
    dd = (_ew.ne if pa.dtype == _np.bool_ else _ew.sub)(tail, pm[..., :-1])
    if discont is None:
        discont = period / 2
    dtype = result_type(dd, period)
    if dtype.kind in "iu":
        interval_high, rem = divmod(period, 2)
        boundary_ambiguous = rem == 0
    else:
        interval_high = period / 2
        boundary_ambiguous = True
    interval_low = -interval_high
    ddmod = _ew.add(_ew.rem(_ew.sub(dd, interval_low), period), interval_low)
    if boundary_ambiguous:
        at_low = _ew.and_(_ew.eq(ddmod, interval_low), _ew.gt(dd, 0))
        ddmod = _ew.select_n(at_low, ddmod, interval_high)
    ph_correct = _ew.sub(ddmod, dd)
    (discont,) = _el._colocate(*_el.asarray_operands(discont))
    small = _ew.lt(_ew.abs(dd), discont)
    ph_correct = _ew.select_n(small, ph_correct, 0)
    fixed = _ew.add(tail, fnp.cumsum(ph_correct, axis=-1))
    up = fnp.concatenate([_el._cast(head, dtype), _el._cast(fixed, dtype)], axis=-1)
    return fnp.moveaxis(up, -1, axis)


# ---------------------------------------------------------------------------------------------
# packbits / unpackbits (composed of shifts and reshapes: zero tangents, vmap and jit for free)


def _bitorder(name: str, bitorder: str) -> bool:
    if bitorder not in ("big", "little"):
        raise ValueError(f"funcgrad.numpy.{name}: bitorder must be 'big' or 'little', "
                         f"got {bitorder!r}")
    return bitorder == "big"


def _static_axis(name: str, axis: Any, ndim: int) -> int | None:
    if axis is None:
        return None
    if isinstance(axis, bool) or not isinstance(axis, int | _np.integer):
        raise TypeError(f"funcgrad.numpy.{name}: axis must be an int or None, "
                        f"got {type(axis).__name__}")
    return normalize_axis(f"funcgrad.numpy.{name}", int(axis), ndim)


@_export
def packbits(a: ArrayLike, /, axis: int | None = None, bitorder: str = "big") -> Any:
    """Pack the truth values of ``a`` into the bits of uint8 along ``axis`` (flattened when
    None), padding with zeros to a multiple of 8, like :func:`numpy.packbits`.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.packbits([1, 0, 1, 1, 0, 0, 0, 0, 1])
        array([176, 128], dtype=uint8)
    """
    big = _bitorder("packbits", bitorder)
    (a,) = _el.asarray_operands(a)
    aval = get_aval(a)
    if aval.dtype.kind not in "biu":
        raise TypeError(f"funcgrad.numpy.packbits: expected an integer or boolean array, got "
                        f"dtype {aval.dtype}")
    axis = _static_axis("packbits", axis, builtins.max(aval.ndim, 1))
    if axis is None:
        a, axis = fnp.ravel(a), 0
    bits = fnp.moveaxis(_ew.convert_element_type(_ew.ne(a, 0), _np.uint8), axis, -1)
    n = get_aval(bits).shape[-1]
    m = -(-n // 8)
    if 8 * m != n:
        width = [(0, 0)] * (get_aval(bits).ndim - 1) + [(0, 8 * m - n)]
        bits = fnp.pad(bits, width)
    bits = fnp.reshape(bits, get_aval(bits).shape[:-1] + (m, 8))
    out = None
    for k in range(8):
        part = _ew.shift_left(bits[..., k], 7 - k if big else k)
        out = part if out is None else _ew.or_(out, part)
    return fnp.moveaxis(out, -1, axis)


@_export
def unpackbits(
    a: ArrayLike, /, axis: int | None = None, count: int | None = None, bitorder: str = "big"
) -> Any:
    """Unpack the bits of a uint8 array along ``axis`` (flattened when None), like
    :func:`numpy.unpackbits`; ``count`` keeps that many bits (negative: drops from the end;
    larger than available: pads with zeros).

    Example:
        >>> import funcgrad.numpy as fnp, numpy as np
        >>> fnp.unpackbits(np.array([176], np.uint8))
        array([1, 0, 1, 1, 0, 0, 0, 0], dtype=uint8)
    """

    big = _bitorder("unpackbits", bitorder)
    (a,) = _el.asarray_operands(a)
    aval = get_aval(a)
    if aval.dtype != _np.uint8:
        raise TypeError(f"funcgrad.numpy.unpackbits: expected an array of dtype uint8, got "
                        f"{aval.dtype}")
    axis = _static_axis("unpackbits", axis, builtins.max(aval.ndim, 1))
    if axis is None:
        a, axis = fnp.ravel(a), 0
    elif aval.ndim == 0:
        raise ShapeError("funcgrad.numpy.unpackbits: axis given for a 0-d array")
    x = fnp.moveaxis(a, axis, -1)
    parts = [_ew.and_(_ew.shift_right(x, 7 - k if big else k), 1) for k in range(8)]
    bits = fnp.stack(parts, axis=-1)
    shape = get_aval(x).shape
    bits = fnp.reshape(bits, shape[:-1] + (8 * shape[-1],))
    if count is not None:
        if isinstance(count, bool) or not isinstance(count, int | _np.integer):
            raise TypeError(f"funcgrad.numpy.unpackbits: count must be an int or None, got "
                            f"{type(count).__name__}")
        total = 8 * shape[-1]
        count = int(count)
        keep = count if count >= 0 else total + count
        if keep < 0:
            raise ValueError("funcgrad.numpy.unpackbits: -count larger than number of elements")
        if keep <= total:
            bits = bits[..., :keep]
        else:
            width = [(0, 0)] * (get_aval(bits).ndim - 1) + [(0, keep - total)]
            bits = fnp.pad(bits, width)
    return fnp.moveaxis(bits, -1, axis)
