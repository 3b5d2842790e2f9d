"""Installs array behaviour on :class:`funcgrad.core.Tracer`: operators, methods, protocols.

Tracers live in ``core``, which knows nothing of operations; this module (above the ops
layer) gives them NumPy's operators and methods, and routes ``numpy.sin(tracer)`` /
``numpy.sum(tracer)`` to the funcgrad.numpy function of the same name.
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.backend import device_of, get_default_device
from funcgrad.config import dtype_promotion, override, promotion_checks
from funcgrad.core import Tracer, _trace_var
from funcgrad.numpy import _ufunc_methods
from funcgrad.numpy._elementwise import check_strict_dtypes, promotion_checked
from funcgrad.ops import elementwise as _ew
from funcgrad.ops import elementwise_extra as _ew_extra

# Operand types for which a binary operator needs no conversion; checked with one set lookup
# (tracers, of any trace, by one isinstance).
_PLAIN_OPERANDS = frozenset({float, int, bool, complex, numpy.ndarray})
_SEQUENCES = (list, tuple)
_SCALARS_AND_ARRAYS = (Tracer, bool, int, float, complex, numpy.ndarray, numpy.generic)
# The current trace, read without a Python call (``funcgrad.core.current_trace``'s body).
_current_trace = _trace_var.get
_promotion_checks = promotion_checks.get
_dtype_promotion_level = dtype_promotion.get

# funcgrad.numpy functions that are exactly their ``funcgrad.ops.elementwise`` primitive
# wrapper when called without keywords and with no list/tuple operand (``_make_binary``
# converts sequences and handles ufunc keywords, nothing else). Operators call the primitive
# wrapper directly: one Python call and its checks less per operation on the eager hot path.
# tests/funcgrad/test_eager_fast_paths.py checks that each is what funcgrad.numpy wraps.
_DIRECT_BINARY = {
    "add": _ew.add, "subtract": _ew.sub, "multiply": _ew.mul, "true_divide": _ew.div,
    "floor_divide": _ew.floor_divide, "remainder": _ew.rem,
    "bitwise_and": _ew.and_, "bitwise_or": _ew.or_, "bitwise_xor": _ew.xor,
    "left_shift": _ew.shift_left, "right_shift": _ew.shift_right,
    "less": _ew.lt, "less_equal": _ew.le, "greater": _ew.gt, "greater_equal": _ew.ge,
    "equal": _ew.eq, "not_equal": _ew.ne,
}
_DIRECT_UNARY = {"negative": _ew.neg, "absolute": _ew.abs, "invert": _ew.not_}


def _binary(name: str, reflected: bool = False):
    direct = _DIRECT_BINARY.get(name)
    ranked = _binary_checking_ranks(name, reflected)

    def slow(self: Any, other: Any) -> Any:
        if _promotion_checks():
            return ranked(self, other)
        fn = getattr(fnp, name)
        # The operator, not the ufunc: ``s ** 0.5`` of a weak ``s`` stays weak, as Python's
        # does, where ``funcgrad.numpy.power(s, 0.5)`` is strong, as NumPy's is.
        fn = getattr(fn, "python_operator", fn)
        if isinstance(other, _SEQUENCES):
            # Python data goes where the traced array is (as an elementwise list operand)
            dev = self.aval.device
            other = fnp.asarray(other, device=dev if dev not in (None, "cpu") else None)
        elif not _is_operand(other):
            return NotImplemented
        return fn(other, self) if reflected else fn(self, other)

    prim = getattr(direct, "primitive", None)  # a wrapper that only binds it (ops._binds)
    if direct is None:
        op = slow
    elif prim is not None and reflected:
        def op(self: Any, other: Any) -> Any:
            if (type(other) in _PLAIN_OPERANDS or isinstance(other, Tracer)) \
                    and not _promotion_checks():
                return _current_trace().process_primitive(prim, (other, self), {})[0]
            return slow(self, other)
    elif prim is not None:
        def op(self: Any, other: Any) -> Any:
            if (type(other) in _PLAIN_OPERANDS or isinstance(other, Tracer)) \
                    and not _promotion_checks():
                return _current_trace().process_primitive(prim, (self, other), {})[0]
            return slow(self, other)
    elif reflected:
        def op(self: Any, other: Any) -> Any:
            if (type(other) in _PLAIN_OPERANDS or isinstance(other, Tracer)) \
                    and not _promotion_checks():
                return direct(other, self)
            return slow(self, other)
    else:
        def op(self: Any, other: Any) -> Any:
            if (type(other) in _PLAIN_OPERANDS or isinstance(other, Tracer)) \
                    and not _promotion_checks():
                return direct(self, other)
            return slow(self, other)

    op.__name__ = name
    return op


def _binary_checking_ranks(name: str, reflected: bool):
    """The operator under jax_numpy_rank_promotion 'warn'/'raise' or
    jax_numpy_dtype_promotion 'strict': the checks, then the funcgrad.numpy function (which
    does not check again)."""

    def op(self: Any, other: Any) -> Any:
        if isinstance(other, _SEQUENCES):
            dev = self.aval.device
            other = fnp.asarray(other, device=dev if dev not in (None, "cpu") else None)
        elif not _is_operand(other):
            return NotImplemented
        x, y = (other, self) if reflected else (self, other)
        if name == "matmul":  # its batch dimensions broadcast by definition: dtypes only
            if _dtype_promotion_level() != "standard":
                check_strict_dtypes(name, x, y)
        else:
            promotion_checked(name, x, y)
        fn = getattr(fnp, name)
        fn = getattr(fn, "python_operator", fn)
        with override(promotion_checks, False):
            return fn(x, y)

    return op


def _is_operand(x: Any) -> bool:
    if isinstance(x, _SCALARS_AND_ARRAYS):
        return True

    return device_of(x) is not None


_BINARY = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "matmul": "matmul",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "left_shift", "rshift": "right_shift",
}
_COMPARE = {
    "lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
    "eq": "equal", "ne": "not_equal",
}


def _install() -> None:
    for dunder, fname in _BINARY.items():
        setattr(Tracer, f"__{dunder}__", _binary(fname))
        setattr(Tracer, f"__r{dunder}__", _binary(fname, reflected=True))
    for dunder, fname in _COMPARE.items():
        setattr(Tracer, f"__{dunder}__", _binary(fname))
    binary_pow = Tracer.__pow__  # type: ignore[attr-defined]

    def pow_(self: Any, other: Any) -> Any:
        # ndarray.__pow__ sends the exponent 2 to square, which makes bool int8, not int64.
        if type(other) is int and other == 2 and self.aval.dtype == numpy.bool_:
            return fnp.square(self)
        return binary_pow(self, other)

    Tracer.__pow__ = pow_  # type: ignore[attr-defined]
    Tracer.__divmod__ = lambda self, o: (self // o, self % o)  # type: ignore[attr-defined]
    Tracer.__rdivmod__ = lambda self, o: (o // self, o % self)  # type: ignore[attr-defined]
    # Unary operators on a tracer: the funcgrad.numpy wrapper would only forward it.
    neg, abs_, invert = _DIRECT_UNARY["negative"], _DIRECT_UNARY["absolute"], _DIRECT_UNARY["invert"]
    neg_p = neg.primitive  # type: ignore[attr-defined]
    Tracer.__neg__ = (  # type: ignore[attr-defined]
        lambda self: _current_trace().process_primitive(neg_p, (self,), {})[0])
    # +x is x, except that NumPy refuses it for bool arrays (fnp.positive says so).
    Tracer.__pos__ = lambda self: (  # type: ignore[attr-defined]
        fnp.positive(self) if self.aval.dtype.kind == "b" else self)
    Tracer.__abs__ = lambda self: abs_(self)  # type: ignore[attr-defined]
    Tracer.__invert__ = lambda self: invert(self)  # type: ignore[attr-defined]
    Tracer.__getitem__ = lambda self, idx: fnp._getitem(self, idx)  # type: ignore[attr-defined]
    Tracer.__array_ufunc__ = _array_ufunc  # type: ignore[attr-defined]
    Tracer.__array_function__ = _array_function  # type: ignore[attr-defined]

    def _method(name: str):
        def m(self: Any, *args: Any, **kwargs: Any) -> Any:
            return getattr(fnp, name)(self, *args, **kwargs)

        m.__name__ = name
        return m

    for name in (
        "sum", "prod", "mean", "var", "std", "max", "min", "argmax", "argmin", "any", "all",
        "cumsum", "cumprod", "ravel", "squeeze", "swapaxes", "clip", "conj", "conjugate",
        "dot", "round", "trace", "diagonal", "nonzero", "ptp", "repeat", "sort", "argsort",
        "take",
    ):
        setattr(Tracer, name, _method(name))

    def reshape(self: Any, *shape: Any, order: str = "C", out_sharding: Any = None) -> Any:
        if len(shape) == 1 and isinstance(shape[0], tuple | list):
            shape = tuple(shape[0])
        return fnp.reshape(self, shape, order=order, out_sharding=out_sharding)

    def transpose(self: Any, *axes: Any) -> Any:
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], tuple | list)):
            axes = axes[0]
        return fnp.transpose(self, axes or None)

    def astype(self: Any, dtype: Any, copy: bool = True) -> Any:
        return fnp.asarray(self, dtype=dtype)

    def flatten(self: Any, order: str = "C") -> Any:
        return fnp.ravel(self, order=order)

    def item(self: Any, *args: Any) -> Any:
        v = self._concrete("item()")
        return v.item(*args) if hasattr(v, "item") else v

    def tolist(self: Any) -> Any:
        v = self._concrete("tolist()")
        return v.tolist() if hasattr(v, "tolist") else v

    def searchsorted(self: Any, v: Any, side: str = "left", sorter: Any = None) -> Any:
        return fnp.searchsorted(self, v, side=side, sorter=sorter)

    def compress(self: Any, condition: Any, axis: int | None = None, out: Any = None) -> Any:
        return fnp.compress(condition, self, axis=axis, out=out)

    def choose(self: Any, choices: Any, out: Any = None, mode: str = "raise") -> Any:
        return fnp.choose(self, choices, out=out, mode=mode)

    def argpartition(self: Any, kth: Any, axis: Any = -1, kind: str = "introselect",
                     order: Any = None) -> Any:
        return fnp.argpartition(self, kth, axis=axis, kind=kind, order=order)

    def view(self: Any, dtype: Any = None, type: Any = None) -> Any:
        # ndarray.view(dtype) (as jax.Array's): the same bits as ``dtype``; a different item
        # size rescales the last axis, which must then be contiguous in NumPy's sense.
        if type is not None:
            raise TypeError("view: type= is not supported (funcgrad arrays are not subclassed)")
        if dtype is None:
            return self
        old, new = self.aval.dtype, numpy.dtype(dtype)
        if old == new:
            return self
        x = self
        if old.kind == "b":
            x = fnp.asarray(x, dtype=numpy.uint8)
        target = numpy.dtype(numpy.uint8) if new.kind == "b" else new
        if old.itemsize != new.itemsize:
            if x.ndim == 0:
                raise ValueError("Changing the dtype of a 0d array is only supported if the "
                                 "itemsize is unchanged")
            n = x.shape[-1]
            if old.itemsize < new.itemsize:
                ratio = new.itemsize // old.itemsize
                if (n * old.itemsize) % new.itemsize:
                    raise ValueError(
                        "When changing to a larger dtype, its size must be a divisor of the "
                        "total size in bytes of the last axis of the array.")
                x = fnp.reshape(x, x.shape[:-1] + (n // ratio, ratio))
        out = _ew_extra.bitcast_convert_type(x, target)
        if old.itemsize > new.itemsize:
            out = fnp.reshape(out, out.shape[:-2] + (out.shape[-2] * out.shape[-1],))
        if new.kind == "b":
            out = fnp.not_equal(out, 0)
        return out

    def round_(self: Any, ndigits: int | None = None) -> Any:
        # Python's round(): a NumPy scalar's (round(np.float64(x)) is an int), as jax.Array's.
        if ndigits is None:
            return fnp.asarray(fnp.round(self), dtype=int)
        return fnp.round(self, ndigits)

    Tracer.__round__ = round_  # type: ignore[attr-defined]
    Tracer.searchsorted = searchsorted  # type: ignore[attr-defined]
    Tracer.compress = compress  # type: ignore[attr-defined]
    Tracer.choose = choose  # type: ignore[attr-defined]
    Tracer.argpartition = argpartition  # type: ignore[attr-defined]
    Tracer.view = view  # type: ignore[attr-defined]
    Tracer.reshape = reshape  # type: ignore[attr-defined]
    Tracer.transpose = transpose  # type: ignore[attr-defined]
    Tracer.astype = astype  # type: ignore[attr-defined]
    Tracer.flatten = flatten  # type: ignore[attr-defined]
    Tracer.copy = lambda self: fnp.copy(self)  # type: ignore[attr-defined]
    Tracer.item = item  # type: ignore[attr-defined]
    Tracer.tolist = tolist  # type: ignore[attr-defined]
    Tracer.T = property(lambda self: fnp.transpose(self))  # type: ignore[attr-defined]
    Tracer.mT = property(lambda self: fnp.swapaxes(self, -1, -2))  # type: ignore[attr-defined]
    Tracer.real = property(lambda self: fnp.real(self))  # type: ignore[attr-defined]
    Tracer.imag = property(lambda self: fnp.imag(self))  # type: ignore[attr-defined]
    Tracer.at = property(lambda self: fnp._IndexUpdateHelper(self))  # type: ignore[attr-defined]
    # jax.Array's: whether the value is a weakly typed Python scalar, and the array API
    # namespace (funcgrad.numpy, as NumPy arrays answer numpy)
    Tracer.weak_type = property(lambda self: self.aval.weak_type)  # type: ignore[attr-defined]
    Tracer.__array_namespace__ = (  # type: ignore[attr-defined]
        lambda self, api_version=None: fnp)
    # the array API's device attribute, which array-API code reads to make arrays beside
    # this one (xp.zeros(n, device=x.device)): the device of the traced value, as NumPy
    # arrays answer "cpu" (jax.Array tracers have none)
    Tracer.device = property(  # type: ignore[attr-defined]
        lambda self: self.aval.device or get_default_device())


def _array_ufunc(self: Any, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
    if kwargs.get("out") is not None:
        raise TypeError(
            f"numpy.{ufunc.__name__}(..., out=...) cannot write into a traced array; "
            "drop out= (funcgrad arrays are immutable)"
        )
    kwargs.pop("out", None)
    fn = getattr(fnp, ufunc.__name__, None)
    if method == "__call__" and fn is not None:
        # NumPy turns a scalar operand (`np.float32(2) < x`) into a 0-d host array before it
        # calls us; as a scalar again it stays device-neutral (and strongly typed).
        inputs = tuple(a[()] if type(a) is numpy.ndarray and a.ndim == 0 else a for a in inputs)
        return fn(*inputs, **kwargs)
    if fn is not None and ufunc.nin == 2 and method in ("outer", "reduce", "accumulate", "at", "reduceat"):
        return _ufunc_methods.ufunc_method(fn, method, *inputs, **kwargs)
    raise TypeError(
        f"numpy.{ufunc.__name__}.{method} is not supported on traced arrays; "
        "use the funcgrad.numpy equivalent"
    )


def _array_function(self: Any, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
    mod = getattr(func, "__module__", "") or ""
    name = func.__name__
    target = fnp
    if mod.startswith("numpy.linalg"):
        target = getattr(fnp, "linalg", None)
    elif mod.startswith("numpy.fft"):
        target = getattr(fnp, "fft", None)
    elif mod.startswith("numpy.lib.stride_tricks"):
        target = fnp.lib.stride_tricks
    fn = getattr(target, name, None) if target is not None else None
    if fn is None:
        raise TypeError(
            f"numpy.{name} has no funcgrad.numpy equivalent yet, so it cannot trace; "
            "rewrite it with funcgrad.numpy functions"
        )
    return fn(*args, **kwargs)


_install()
