"""funcgrad.numpy: elementwise functions (NumPy's ufuncs and their friends).

Every function takes what the NumPy function takes for the covered parameters (arrays, Python
and NumPy scalars, lists), gives NumPy's values and dtypes (NEP 50 included), and always goes
through the primitives of :mod:`funcgrad.ops.elementwise`, so the same call runs eagerly on
plain arrays and traces under ``grad``/``jit``/``vmap``. The ufunc-named functions also accept
the ufunc keywords NumPy passes through ``__array_ufunc__``: ``dtype=``, ``signature=`` and
``casting=`` pick NumPy's loop, ``order=`` and ``subok=`` take any valid value; ``out=`` and a
``where=`` mask raise a clear TypeError (both need an output array to write into).
"""

from __future__ import annotations

import builtins
import cmath
import functools
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as _np

import funcgrad.numpy as fnp
import funcgrad.numpy._extended as _ext
from funcgrad.avals import get_aval
from funcgrad.backend import get_default_device, operator_index, xp_for, xp_for_device
from funcgrad.config import dtype_promotion, promotion_checks, rank_promotion
from funcgrad.core import Tracer, _trace_var, concrete_or_error, weak_arithmetic_primitives
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.ops import elementwise as _ew
from funcgrad.ops._util import probe_dtype
from funcgrad.ops.custom_derivatives import custom_jvp

ArrayLike = Any
_SEQ_TYPES = (list, tuple)
_PY_SCALARS = (bool, int, float, builtins.complex)

__all__: list[str] = ["asarray_operands"]

_rank_promotion_level = rank_promotion.get
_dtype_promotion_level = dtype_promotion.get
_promotion_checks = promotion_checks.get
#: strict promotion: the array kinds a weak Python scalar of each kind may join
_WEAK_JOINS = {bool: "b", int: "iufc", float: "fc", complex: "c"}


def promotion_checked(name: str, *xs: Any) -> None:
    """The rank and dtype promotion checks of JAX's ``jax_numpy_rank_promotion`` and
    ``jax_numpy_dtype_promotion`` flags, for a binary ufunc's operands (callers skip it when
    both are at their defaults)."""
    if _rank_promotion_level() != "allow":
        check_rank_promotion(name, *xs)
    if _dtype_promotion_level() != "standard":
        check_strict_dtypes(name, *xs)


def check_strict_dtypes(name: str, *xs: Any) -> None:
    """JAX's ``jax_numpy_dtype_promotion='strict'``: the operands' dtypes must be one, except
    that a weak value (a Python scalar, a weak-typed traced one) joins an array of its kind or
    a wider one (an int into a float array; a float not into an int one); else JAX's
    ``TypePromotionError`` (funcgrad.dtypes.TypePromotionError, a DTypeError)."""
    strong, weak = [], []
    for x in xs:
        if type(x) in _WEAK_JOINS:
            weak.append((type(x), type(x).__name__))
        elif isinstance(x, Tracer) and x.aval.weak_type:
            kind = {"b": bool, "i": int, "u": int, "f": float, "c": complex}[x.aval.dtype.kind]
            weak.append((kind, kind.__name__))
        else:
            strong.append(_np.dtype(x.aval.dtype if isinstance(x, Tracer)
                                    else getattr(x, "dtype", None) or _np.asarray(x).dtype))
    ok = len(set(strong)) <= 1
    if ok and strong:
        ok = all(strong[0].kind in _WEAK_JOINS[k] for k, _ in weak)
    elif ok:  # weak values alone: each joins the widest (JAX: 1 + 2.5 is fine, True + 2 not)
        widest = max((k for k, _ in weak), key=[bool, int, float, complex].index)
        ok = all({bool: "b", int: "i", float: "f", complex: "c"}[widest] in _WEAK_JOINS[k]
                 for k, _ in weak)
    if not ok:
        shown = tuple(str(d) for d in strong) + tuple(f"<class '{n}'>" for _, n in weak)
        raise DTypeError(
            f"{name}: Input dtypes {shown} have no available implicit dtype promotion path "
            "when jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the "
            "desired output type, or set jax_numpy_dtype_promotion=standard.")


def check_rank_promotion(name: str, *xs: Any) -> None:
    """JAX's ``jax_numpy_rank_promotion`` check: under ``"warn"``/``"raise"``, operands of
    different nonzero ranks (``(2, 3)`` with ``(3,)``; a 0-d operand is always fine) warn or
    raise ``ValueError`` with JAX's message. Callers read the level first: "allow" costs one
    context-variable read."""
    level = _rank_promotion_level()
    if level == "allow":
        return
    shapes = [tuple(_np.shape(x)) if not isinstance(x, Tracer) else x.aval.shape for x in xs]
    if len({len(s) for s in shapes if s}) < 2:
        return
    shown = " ".join(map(str, shapes))
    if level == "raise":
        raise ValueError(
            f"Operands could not be broadcast together for {name} on shapes {shown} and with "
            "the config option jax_numpy_rank_promotion='raise'. Expand the lower-rank "
            "operand explicitly (x[None, :], expand_dims) or set the option to 'allow'.")
    warnings.warn(
        f"Following NumPy automatic rank promotion for {name} on shapes {shown}. Set the "
        "jax_numpy_rank_promotion config option to 'allow' to disable this warning.",
        UserWarning, stacklevel=3)

# ---------------------------------------------------------------------------------------------
# Operand conversion


def _has_tracer(x: Any) -> bool:
    if isinstance(x, Tracer):
        return True
    if type(x) in (list, tuple):
        return builtins.any(_has_tracer(v) for v in x)
    return False


def _seq_to_array(x: Any, others: tuple[Any, ...] = ()) -> Any:
    """A list/tuple operand as an array, on the device of the other operands."""
    if _has_tracer(x):

        asarray = getattr(fnp, "asarray", None)
        if asarray is None:
            raise TypeError(
                "a list containing traced arrays needs funcgrad.numpy.asarray to stack it; "
                "build the array with funcgrad.numpy.stack first"
            )
        return asarray(x)
    device = None
    for o in others:
        if o is not None and type(o) not in (list, tuple):  # None: clip's absent bound
            device = get_aval(o).device
            if device is not None:
                break
    return xp_for_device(device or get_default_device()).asarray(x)


def asarray_operands(*xs: ArrayLike) -> tuple[Any, ...]:
    """The operands with lists/tuples turned into arrays (on the device of the others).

    Arrays, tracers and scalars pass through untouched (Python scalars stay weakly typed).

    Example:
        >>> a, b = asarray_operands([1.0, 2.0], 3.0)
        >>> a, b
        (array([1., 2.]), 3.0)
    """
    for x in xs:
        if type(x) in _SEQ_TYPES:
            break
    else:
        return xs
    return tuple(_seq_to_array(x, xs) if type(x) in (list, tuple) else x for x in xs)


def _colocate(*xs: Any) -> tuple[Any, ...]:
    """NumPy scalars among device operands, moved to that device.

    Compositions of several primitives need this: a primitive given only host values (a NumPy
    scalar) returns a host array, which a later primitive could not mix with device arrays.
    """
    for x in xs:
        if isinstance(x, _np.generic):
            break
    else:
        return xs
    device = None
    for x in xs:
        if x is not None and not isinstance(x, _np.generic) and type(x) not in _PY_SCALARS:
            d = get_aval(x).device
            if d is not None and d != "cpu":
                device = d
                break
    if device is None:
        return xs
    xp = xp_for_device(device)
    return tuple(xp.asarray(x) if isinstance(x, _np.generic) else x for x in xs)


def _cast(x: Any, dt: _np.dtype) -> Any:
    return x if get_aval(x).dtype == dt else _ew.convert_element_type(x, dt)


def _cast_near(x: Any, dt: _np.dtype, *others: Any) -> Any:
    """``_cast``, with a Python scalar made an array on the device of ``others`` (a cast of a
    Python scalar alone would be a host array, which device operands cannot meet)."""
    if type(x) in _PY_SCALARS:
        if dt.kind in "fc" and _ew._wide_int(x):
            x = float(x)  # (2**64 beside float32: no 64-bit integer holds it)
        for o in others:
            d = None if o is None or type(o) in _PY_SCALARS else get_aval(o).device
            if d is not None and d != "cpu":
                # (converted as a cast does: a Python -1 for uint8 wraps, as before)
                return _cast(xp_for_device(d).asarray(x), dt)
    return _cast(x, dt)


def _scalar_or(pred: Callable[[Any], Any], py: Callable[[Any], bool], x: Any) -> Any:
    """``pred(x)``, or for a Python scalar its Python value ``py(x)``: a weak bool that goes
    with arrays on any device (the primitive on a scalar alone gives a host array)."""
    return builtins.bool(py(x)) if type(x) in _PY_SCALARS else pred(x)


def _py_isnan(v: Any) -> bool:
    return v != v


def _py_isfinite(v: Any) -> bool:
    return cmath.isfinite(v)


def _ufunc_dtype(ufunc: Any, *xs: Any) -> _np.dtype:
    """The dtype ``ufunc`` gives on operands like ``xs`` (NEP 50 weak scalars included)."""
    return probe_dtype(ufunc.__name__, ufunc, *(get_aval(x) for x in xs))[0]


# ---------------------------------------------------------------------------------------------
# ufunc keyword handling (the slow path: only when extra keywords are given)

_ORDERS = ("K", "A", "C", "F")
_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")
_UFUNC_KEYWORDS = ("where", "casting", "order", "subok", "signature", "dtype")


def _weak_or_dtype(x: Any) -> Any:
    """What ``ufunc.resolve_dtypes`` takes for an operand: its dtype, or the Python type of
    a weak scalar (NEP 50)."""
    a = get_aval(x)
    if a.weak_type and a.dtype.kind in "iufc":
        return {"i": int, "u": int, "f": float, "c": builtins.complex}[a.dtype.kind]
    return a.dtype


def _signature(name: str, sig: Any, n: int) -> tuple[Any, ...]:
    """``signature=`` ('ff->f', a tuple of dtypes/None, or one dtype) as a tuple of n dtypes."""
    if isinstance(sig, str):
        ins, arrow, outs = sig.replace(" ", "").partition("->")
        chars = list(ins + outs) if arrow else list(ins)
    elif isinstance(sig, tuple | list):
        chars = list(sig)
    else:
        chars = [sig] * n
    if len(chars) != n:
        raise TypeError(
            f"funcgrad.numpy.{name}: signature={sig!r} does not have {n} entries "
            "(inputs and outputs)"
        )
    try:
        return tuple(None if c is None else _np.dtype(c) for c in chars)
    except TypeError as e:
        raise TypeError(f"funcgrad.numpy.{name}: invalid signature={sig!r}: {e}") from None


def _ufunc_options(
    name: str, xs: tuple[Any, ...], out: Any, kwargs: dict[str, Any], bool_out: bool
) -> tuple[Any, ...]:
    """The operands, checked against and cast for NumPy's ufunc keywords.

    ``order`` and ``subok`` don't change values (funcgrad arrays are plain arrays with no
    layout to choose), so every valid value is accepted. ``dtype``, ``signature`` and
    ``casting`` pick the loop as NumPy does (``ufunc.resolve_dtypes``, on dtypes only); the
    operands are cast to that loop's input dtypes. ``where`` other than True and ``out``
    raise a TypeError: both need an output array to write into.
    """
    if out is not None and not (isinstance(out, tuple) and builtins.all(o is None for o in out)):
        raise TypeError(
            f"funcgrad.numpy.{name}: out= is not supported (funcgrad arrays are immutable); "
            "use the returned array instead"
        )
    for k in kwargs:
        if k not in _UFUNC_KEYWORDS:
            raise TypeError(f"funcgrad.numpy.{name}() got an unexpected keyword argument {k!r}")
    where = kwargs.get("where", True)
    if not (where is True or isinstance(where, _np.bool_) and bool(where)):
        raise TypeError(
            f"funcgrad.numpy.{name}: where= (other than True) is not supported: NumPy leaves "
            "the masked-out elements of a new result uninitialized, and out= to keep them in "
            "is not possible on immutable arrays; use "
            f"fnp.where(mask, fnp.{name}(...), fallback) instead"
        )
    order = kwargs.get("order", "K")
    if order not in _ORDERS:
        raise ValueError(
            f"funcgrad.numpy.{name}: order must be one of 'C', 'F', 'A', or 'K' "
            f"(got {order!r})"
        )
    if not isinstance(kwargs.get("subok", True), bool | _np.bool_):
        raise TypeError(f"funcgrad.numpy.{name}: 'subok' must be a boolean")
    casting = kwargs.get("casting", "same_kind")
    if casting not in _CASTINGS:
        raise ValueError(
            f"funcgrad.numpy.{name}: casting must be one of 'no', 'equiv', 'safe', "
            f"'same_kind', 'unsafe' (got {casting!r})"
        )
    dtype, sig = kwargs.get("dtype"), kwargs.get("signature")
    if dtype is not None and sig is not None:
        raise TypeError(f"funcgrad.numpy.{name}: cannot specify both 'signature' and 'dtype'")
    xs = asarray_operands(*xs)
    if dtype is None and sig is None and casting == "same_kind":
        return xs
    ufunc = getattr(_np, name, None)
    if not isinstance(ufunc, _np.ufunc) or ufunc.nin != len(xs):
        return _cast_to_dtype(name, xs, dtype, casting)
    n = ufunc.nin + ufunc.nout
    if dtype is not None:
        signature = (None,) * ufunc.nin + (_np.dtype(dtype),) * ufunc.nout
    elif sig is not None:
        signature = _signature(name, sig, n)
    else:
        signature = None
    try:
        loop = ufunc.resolve_dtypes(
            tuple(_weak_or_dtype(x) for x in xs) + (None,) * ufunc.nout, casting=casting,
            **({} if signature is None else {"signature": signature}),
        )
    except TypeError as e:  # (NumPy's UFuncTypeError and casting errors)
        raise DTypeError(f"funcgrad.numpy.{name}: {e}") from None
    return tuple(_cast(x, dt) for x, dt in zip(xs, loop[: ufunc.nin]))


def _cast_to_dtype(name: str, xs: tuple[Any, ...], dtype: Any, casting: str) -> tuple[Any, ...]:
    """Operands cast to ``dtype`` under ``casting`` (functions that are not NumPy ufuncs)."""
    if dtype is None:
        return xs
    dtype = _np.dtype(dtype)
    out_xs = []
    for x in xs:
        a = get_aval(x)
        if not a.weak_type and not _np.can_cast(a.dtype, dtype, casting):
            raise DTypeError(
                f"funcgrad.numpy.{name}: cannot compute in dtype={dtype} from an operand of "
                f"dtype {a.dtype} under casting={casting!r}"
            )
        out_xs.append(_cast(x, dtype))
    return tuple(out_xs)


def _doc(name: str, summary: str, example: str, result: str) -> str:
    return (
        f"{summary}, like :func:`numpy.{name}`; traces under transformations.\n"
        "\n"
        "Example:\n"
        "    >>> import funcgrad.numpy as fnp\n"
        f"    >>> fnp.{example}\n"
        f"    {result}\n"
    )


# The current trace, read without a Python call (``funcgrad.core.current_trace``'s body).
_current_trace = _trace_var.get


#: a ufunc's result is strong-typed, as NumPy's is (``deg2rad(s)`` is ``s * (pi / 180)``: made of
#: Python's operators, it would stay weak on a Python scalar)
_strong_result = _ew.strong


#: the ufuncs of Python's operators, which keep Python scalars weak (as ``python_operator``)
_OPERATOR_UFUNCS = frozenset(
    ("add", "subtract", "multiply", "divide", "floor_divide", "remainder", "power", "negative",
     "absolute"))


def _make_unary(
    name: str, op: Callable[[Any], Any], summary: str, example: str, result: str,
    bool_out: bool = False,
) -> Callable[..., Any]:
    prim = getattr(op, "primitive", None)  # a wrapper that only binds it (ops._binds)
    # only Python-operator primitives can leave a weak result to make strong
    may_be_weak = prim in weak_arithmetic_primitives

    def fn(x: ArrayLike, /, out: Any = None, **kwargs: Any) -> Any:
        if out is not None or kwargs:
            (x,) = _ufunc_options(name, (x,), out, kwargs, bool_out)
        elif type(x) in (list, tuple):
            x = _seq_to_array(x)
        elif prim is not None:  # the hot path: bind it here, one call less
            r = _current_trace().process_primitive(prim, (x,), {})[0]
            return _strong_result(r) if may_be_weak else r
        return _strong_result(op(x))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _doc(name, summary, example, result)
    return fn


def _make_binary(
    name: str, op: Callable[[Any, Any], Any], summary: str, example: str, result: str,
    bool_out: bool = False,
) -> Callable[..., Any]:
    prim = getattr(op, "primitive", None)  # a wrapper that only binds it (ops._binds)
    # only Python-operator primitives can leave a weak result to make strong
    may_be_weak = prim in weak_arithmetic_primitives

    def fn(x1: ArrayLike, x2: ArrayLike, /, out: Any = None, **kwargs: Any) -> Any:
        if _promotion_checks():
            promotion_checked(name, x1, x2)
        if out is not None or kwargs:
            x1, x2 = _ufunc_options(name, (x1, x2), out, kwargs, bool_out)
        elif type(x1) in (list, tuple) or type(x2) in (list, tuple):
            x1, x2 = asarray_operands(x1, x2)
        elif prim is not None:  # the hot path: bind it here, one call less
            r = _current_trace().process_primitive(prim, (x1, x2), {})[0]
            return _strong_result(r) if may_be_weak else r
        return _strong_result(op(x1, x2))

    if name in _OPERATOR_UFUNCS:
        # What Python's operator runs (funcgrad.numpy._array_methods): weak stays weak.
        fn.python_operator = op  # type: ignore[attr-defined]
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _doc(name, summary, example, result)
    return fn


def _export(fn: Callable[..., Any], *aliases: str) -> Callable[..., Any]:
    g = globals()
    for n in (fn.__name__, *aliases):
        g[n] = fn
        __all__.append(n)
    return fn


# ---------------------------------------------------------------------------------------------
# Custom compositions behind some ufuncs


def _positive(x: Any) -> Any:
    if get_aval(x).dtype.kind == "b":
        raise DTypeError("funcgrad.numpy.positive: not supported for bool input (as in NumPy)")
    return x


def _fabs(x: Any) -> Any:
    return _ew.abs(_cast(x, _ufunc_dtype(_np.fabs, x)))


def _rint(x: Any) -> Any:
    return _ew.round(_cast(x, _ufunc_dtype(_np.rint, x)), 0)


_DEG = 180.0 / math.pi
_RAD = math.pi / 180.0


def _scaled(x: Any, ufunc: Any, factor: float) -> Any:
    """``x * factor`` as NumPy's loop for ``ufunc``: float16 input is scaled in float32 and
    rounded once (a float16 product rounds the factor too, one ulp off NumPy's)."""
    dt = _ufunc_dtype(ufunc, x)
    if dt == _np.float16:
        return _cast(_ew.mul(_cast(x, _np.dtype(_np.float32)), factor), dt)
    return _ew.mul(_cast(x, dt), factor)


def _deg2rad(x: Any) -> Any:
    return _scaled(x, _np.deg2rad, _RAD)


def _rad2deg(x: Any) -> Any:
    return _scaled(x, _np.rad2deg, _DEG)


def _isinf(x: Any) -> Any:
    if get_aval(x).dtype.kind not in "fc":
        _ufunc_dtype(_np.isinf, x)  # the same dtype errors as NumPy
        return _ew.ne(x, x)  # all False, with x's shape
    return _ew.eq(_ew.abs(x), _np.inf)


def _isnan(x: Any) -> Any:
    _ufunc_dtype(_np.isnan, x)
    return _ew.ne(x, x)


def _logical(op: Callable[[Any, Any], Any], x: Any, y: Any) -> Any:
    x, y = _colocate(x, y)
    return op(_truth(x), _truth(y))


def _truth(x: Any) -> Any:
    if type(x) in _PY_SCALARS:
        return builtins.bool(x)  # a weak bool, with arrays on any device
    return x if get_aval(x).dtype.kind == "b" else _ew.ne(x, 0)


def _conjugate(x: Any) -> Any:
    if get_aval(x).dtype.kind == "b":
        return _ew.bind1(_ew.conj_p, x)  # NumPy's conjugate of bool is int8
    return _ew.conj(x)


def _power(x: Any, y: Any) -> Any:
    # A Python int exponent is static: integer_pow differentiates at x <= 0 without log(x).
    if type(y) is int:
        dt = get_aval(x).dtype
        # NumPy checks the weak exponent's range before its sign (eagerly the impl does)
        if dt.kind in "iu" and not _np.iinfo(dt).min <= y <= _np.iinfo(dt).max:
            raise OverflowError(f"power: Python integer {y} out of bounds for {dt}")
        return _ew.integer_pow(x, y)
    return _ew.pow(x, y)


def _float_power(x: Any, y: Any) -> Any:
    x, y = _colocate(x, y)
    dt = _ufunc_dtype(_np.float_power, x, y)
    return _power(_cast_near(x, dt, y), y if type(y) is int else _cast_near(y, dt, x))


def _fmax(x: Any, y: Any) -> Any:
    return _fmax_fmin(_np.fmax, x, y, _ew.max, _ew.gt)


def _fmin(x: Any, y: Any) -> Any:
    return _fmax_fmin(_np.fmin, x, y, _ew.min, _ew.lt)


def _fmax_fmin(ufunc: Any, x: Any, y: Any, extremum: Any, wins: Any) -> Any:
    """NumPy's fmax/fmin: ``x`` where it wins or ``y`` is nan, else ``y`` -- so a tie (and
    ``+-0``) gives ``y``, as NumPy, and all of a tie's gradient goes to ``y``, as in
    jax.numpy (``where(less(x1, x2) | isnan(x2), x1, x2)``), not half to each as for
    maximum/minimum."""
    x, y = _colocate(x, y)
    dt = _ufunc_dtype(ufunc, x, y)
    if dt.kind not in "fc":
        return extremum(x, y)
    if dt.kind == "f":
        x, y = _cast_near(x, dt, y), _cast_near(y, dt, x)
        x_wins = _ew.or_(wins(x, y), _scalar_or(_ew.is_nan, _py_isnan, y))
        return _ew.select_n(x_wins, y, x)
    r = extremum(x, y)
    r = _ew.select_n(_scalar_or(_ew.is_nan, _py_isnan, x), r, y)
    return _ew.select_n(_scalar_or(_ew.is_nan, _py_isnan, y), r, x)


def _heaviside(x1: Any, x2: Any) -> Any:
    x1, x2 = _colocate(x1, x2)
    dt = _ufunc_dtype(_np.heaviside, x1, x2)
    x1, x2 = _cast_near(x1, dt, x2), _cast_near(x2, dt, x1)
    r = _ew.select_n(_ew.gt(x1, 0), x2, 1)
    r = _ew.select_n(_ew.lt(x1, 0), r, 0)
    return _ew.select_n(_ew.is_nan(x1), r, x1)


def _divmod(x: Any, y: Any) -> tuple[Any, Any]:
    return _ew.floor_divide(x, y), _ew.rem(x, y)


# ---------------------------------------------------------------------------------------------
# The ufunc-named functions: (name, op, summary, example call, example result, aliases)

_UNARY: list[tuple[Any, ...]] = [
    ("negative", _ew.neg, "Elementwise ``-x``", "negative([1.0, -2.0])",
     "array([-1.,  2.])", ()),
    ("positive", _positive, "Elementwise ``+x`` (a no-op on numbers)", "positive(2.0)",
     "array(2.)", ()),
    ("absolute", _ew.abs, "Elementwise absolute value (modulus for complex)",
     "absolute([-1.5, 2.0])", "array([1.5, 2. ])", ("abs",)),
    ("fabs", _fabs, "Elementwise absolute value of real numbers, as floats", "fabs([-1, 2])",
     "array([1., 2.])", ()),
    ("sign", _ew.sign, "Elementwise sign (-1, 0 or 1; ``z/|z|`` for complex)",
     "sign([-2.0, 0.0, 3.0])", "array([-1.,  0.,  1.])", ()),
    ("floor", _ew.floor, "Elementwise floor", "floor([-1.5, 1.5])", "array([-2.,  1.])", ()),
    ("ceil", _ew.ceil, "Elementwise ceiling", "ceil([-1.5, 1.5])", "array([-1.,  2.])", ()),
    ("trunc", _ew.trunc, "Elementwise rounding towards zero", "trunc([-1.5, 1.5])",
     "array([-1.,  1.])", ()),
    ("rint", _rint, "Elementwise rounding to the nearest integer (half to even)",
     "rint([0.5, 1.5, 2.5])", "array([0., 2., 2.])", ()),
    ("exp", _ew.exp, "Elementwise ``e**x``", "exp(0.0)", "array(1.)", ()),
    ("exp2", _ew.exp2, "Elementwise ``2**x``", "exp2([1.0, 3.0])", "array([2., 8.])", ()),
    ("expm1", _ew.expm1, "Elementwise ``exp(x) - 1``, accurate near 0", "expm1(0.0)",
     "array(0.)", ()),
    ("log", _ew.log, "Elementwise natural logarithm", "log(1.0)", "array(0.)", ()),
    ("log2", _ew.log2, "Elementwise base-2 logarithm", "log2([1.0, 8.0])",
     "array([0., 3.])", ()),
    ("log10", _ew.log10, "Elementwise base-10 logarithm", "log10([1.0, 100.0])",
     "array([0., 2.])", ()),
    ("log1p", _ew.log1p, "Elementwise ``log(1 + x)``, accurate near 0", "log1p(0.0)",
     "array(0.)", ()),
    ("sqrt", _ew.sqrt, "Elementwise non-negative square root", "sqrt([4.0, 9.0])",
     "array([2., 3.])", ()),
    ("cbrt", _ew.cbrt, "Elementwise real cube root", "cbrt([-8.0, 27.0])",
     "array([-2.,  3.])", ()),
    ("square", _ew.square, "Elementwise ``x * x``", "square([2, 3])", "array([4, 9])", ()),
    ("reciprocal", _ew.reciprocal, "Elementwise ``1 / x``", "reciprocal([2.0, 4.0])",
     "array([0.5 , 0.25])", ()),
    ("sin", _ew.sin, "Elementwise sine", "sin(0.0)", "array(0.)", ()),
    ("cos", _ew.cos, "Elementwise cosine", "cos(0.0)", "array(1.)", ()),
    ("tan", _ew.tan, "Elementwise tangent", "tan(0.0)", "array(0.)", ()),
    ("arcsin", _ew.asin, "Elementwise inverse sine", "arcsin(1.0)",
     "array(1.57079633)", ("asin",)),
    ("arccos", _ew.acos, "Elementwise inverse cosine", "arccos(1.0)", "array(0.)",
     ("acos",)),
    ("arctan", _ew.atan, "Elementwise inverse tangent", "arctan(1.0)",
     "array(0.78539816)", ("atan",)),
    ("sinh", _ew.sinh, "Elementwise hyperbolic sine", "sinh(0.0)", "array(0.)", ()),
    ("cosh", _ew.cosh, "Elementwise hyperbolic cosine", "cosh(0.0)", "array(1.)", ()),
    ("tanh", _ew.tanh, "Elementwise hyperbolic tangent", "tanh(0.0)", "array(0.)", ()),
    ("arcsinh", _ew.asinh, "Elementwise inverse hyperbolic sine", "arcsinh(0.0)",
     "array(0.)", ("asinh",)),
    ("arccosh", _ew.acosh, "Elementwise inverse hyperbolic cosine", "arccosh(1.0)",
     "array(0.)", ("acosh",)),
    ("arctanh", _ew.atanh, "Elementwise inverse hyperbolic tangent", "arctanh(0.0)",
     "array(0.)", ("atanh",)),
    ("deg2rad", _deg2rad, "Degrees to radians", "deg2rad(180.0)",
     "array(3.14159265)", ()),
    ("radians", _deg2rad, "Degrees to radians", "radians(180.0)",
     "array(3.14159265)", ()),
    ("rad2deg", _rad2deg, "Radians to degrees", "rad2deg(3.141592653589793)",
     "array(180.)", ()),
    ("degrees", _rad2deg, "Radians to degrees", "degrees(3.141592653589793)",
     "array(180.)", ()),
    ("conjugate", _conjugate, "Elementwise complex conjugate", "conjugate(1 + 2j)",
     "array(1.-2.j)", ("conj",)),
]

_UNARY_BOOL: list[tuple[Any, ...]] = [
    ("isfinite", _ew.is_finite, "Elementwise test for finiteness (not inf, not nan)",
     "isfinite([1.0, float('inf')])", "array([ True, False])", ()),
    ("isinf", _isinf, "Elementwise test for positive or negative infinity",
     "isinf([1.0, float('-inf')])", "array([False,  True])", ()),
    ("isnan", _isnan, "Elementwise test for nan", "isnan([1.0, float('nan')])",
     "array([False,  True])", ()),
    ("signbit", _ew.signbit, "Elementwise test of the sign bit (True for -0.0)",
     "signbit([-0.0, 1.0])", "array([ True, False])", ()),
    ("logical_not", _ew.logical_not, "Elementwise logical NOT (nonzero is True)",
     "logical_not([0, 2])", "array([ True, False])", ()),
]

_UNARY_INT: list[tuple[Any, ...]] = [
    ("invert", _ew.not_, "Elementwise bitwise NOT (logical NOT of booleans)",
     "invert([0, 5])", "array([-1, -6])", ("bitwise_not", "bitwise_invert")),
]

_BINARY: list[tuple[Any, ...]] = [
    ("add", _ew.add, "Elementwise ``x1 + x2``", "add([1.0, 2.0], 1.0)", "array([2., 3.])", ()),
    ("subtract", _ew.sub, "Elementwise ``x1 - x2``", "subtract(3.0, [1.0, 2.0])",
     "array([2., 1.])", ()),
    ("multiply", _ew.mul, "Elementwise ``x1 * x2``", "multiply([1.0, 2.0], 3.0)",
     "array([3., 6.])", ()),
    ("divide", _ew.div, "Elementwise true division ``x1 / x2``", "divide([1, 3], 2)",
     "array([0.5, 1.5])", ("true_divide",)),
    ("floor_divide", _ew.floor_divide, "Elementwise ``x1 // x2`` (rounding down)",
     "floor_divide([-7, 7], 2)", "array([-4,  3])", ()),
    ("remainder", _ew.rem, "Elementwise remainder with the sign of the divisor",
     "remainder([-3, 3], 2)", "array([1, 1])", ("mod",)),
    ("fmod", _ew.fmod, "Elementwise remainder with the sign of the dividend (C ``fmod``)",
     "fmod([-3, 3], 2)", "array([-1,  1])", ()),
    ("power", _power, "Elementwise ``x1 ** x2``", "power([2.0, 3.0], 2)",
     "array([4., 9.])", ("pow",)),
    ("float_power", _float_power, "Elementwise ``x1 ** x2`` in at least float64",
     "float_power(2, 3)", "array(8.)", ()),
    ("arctan2", _ew.atan2, "Elementwise angle of the point ``(x2, x1)``", "arctan2(1.0, 1.0)",
     "array(0.78539816)", ("atan2",)),
    ("hypot", _ew.hypot, "Elementwise ``sqrt(x1**2 + x2**2)`` without overflow",
     "hypot(3.0, 4.0)", "array(5.)", ()),
    ("logaddexp", _ew.logaddexp, "Elementwise ``log(exp(x1) + exp(x2))``, stable",
     "logaddexp(0.0, 0.0)", "array(0.69314718)", ()),
    ("logaddexp2", _ew.logaddexp2, "Elementwise ``log2(2**x1 + 2**x2)``, stable",
     "logaddexp2(1.0, 1.0)", "array(2.)", ()),
    ("maximum", _ew.max, "Elementwise maximum, propagating nan", "maximum([1.0, 4.0], 2.0)",
     "array([2., 4.])", ()),
    ("minimum", _ew.min, "Elementwise minimum, propagating nan", "minimum([1.0, 4.0], 2.0)",
     "array([1., 2.])", ()),
    ("fmax", _fmax, "Elementwise maximum, ignoring nan", "fmax([1.0, float('nan')], 2.0)",
     "array([2., 2.])", ()),
    ("fmin", _fmin, "Elementwise minimum, ignoring nan", "fmin([1.0, float('nan')], 2.0)",
     "array([1., 2.])", ()),
    ("copysign", _ew.copysign, "Elementwise magnitude of ``x1`` with the sign of ``x2``",
     "copysign([1.0, 2.0], -1.0)", "array([-1., -2.])", ()),
    ("heaviside", _heaviside, "Elementwise Heaviside step, ``x2`` at 0",
     "heaviside([-1.0, 0.0, 2.0], 0.5)", "array([0. , 0.5, 1. ])", ()),
    ("bitwise_and", _ew.and_, "Elementwise bitwise AND (logical for booleans)",
     "bitwise_and([12, 10], 6)", "array([4, 2])", ()),
    ("bitwise_or", _ew.or_, "Elementwise bitwise OR (logical for booleans)",
     "bitwise_or([12, 10], 6)", "array([14, 14])", ()),
    ("bitwise_xor", _ew.xor, "Elementwise bitwise XOR (logical for booleans)",
     "bitwise_xor([12, 10], 6)", "array([10, 12])", ()),
    ("left_shift", _ew.shift_left, "Elementwise ``x1 << x2``", "left_shift([1, 3], 2)",
     "array([ 4, 12])", ("bitwise_left_shift",)),
    ("right_shift", _ew.shift_right, "Elementwise ``x1 >> x2``", "right_shift([8, 12], 2)",
     "array([2, 3])", ("bitwise_right_shift",)),
]

_BINARY_BOOL: list[tuple[Any, ...]] = [
    ("equal", _ew.eq, "Elementwise ``x1 == x2``", "equal([1, 2], 2)",
     "array([False,  True])", ()),
    ("not_equal", _ew.ne, "Elementwise ``x1 != x2``", "not_equal([1, 2], 2)",
     "array([ True, False])", ()),
    ("less", _ew.lt, "Elementwise ``x1 < x2``", "less([1, 2], 2)", "array([ True, False])", ()),
    ("less_equal", _ew.le, "Elementwise ``x1 <= x2``", "less_equal([1, 3], 2)",
     "array([ True, False])", ()),
    ("greater", _ew.gt, "Elementwise ``x1 > x2``", "greater([1, 3], 2)",
     "array([False,  True])", ()),
    ("greater_equal", _ew.ge, "Elementwise ``x1 >= x2``", "greater_equal([1, 2], 2)",
     "array([False,  True])", ()),
    ("logical_and", lambda x, y: _logical(_ew.and_, x, y),
     "Elementwise logical AND (nonzero is True)", "logical_and([0, 1, 2], 3)",
     "array([False,  True,  True])", ()),
    ("logical_or", lambda x, y: _logical(_ew.or_, x, y),
     "Elementwise logical OR (nonzero is True)", "logical_or([0, 1], 0)",
     "array([False,  True])", ()),
    ("logical_xor", lambda x, y: _logical(_ew.xor, x, y),
     "Elementwise logical XOR (nonzero is True)", "logical_xor([0, 1], 1)",
     "array([ True, False])", ()),
]

for _name, _op, _summary, _ex, _res, _aliases in _UNARY + _UNARY_INT:
    _export(_make_unary(_name, _op, _summary, _ex, _res), *_aliases)
for _name, _op, _summary, _ex, _res, _aliases in _UNARY_BOOL:
    _export(_make_unary(_name, _op, _summary, _ex, _res, bool_out=True), *_aliases)
for _name, _op, _summary, _ex, _res, _aliases in _BINARY:
    _export(_make_binary(_name, _op, _summary, _ex, _res), *_aliases)
for _name, _op, _summary, _ex, _res, _aliases in _BINARY_BOOL:
    _export(_make_binary(_name, _op, _summary, _ex, _res, bool_out=True), *_aliases)


def divmod(x1: ArrayLike, x2: ArrayLike, /, out: Any = None, **kwargs: Any) -> tuple[Any, Any]:  # noqa: A001
    """``(floor_divide(x1, x2), remainder(x1, x2))``, like :func:`numpy.divmod`.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.divmod([7, -7], 2)
        (array([ 3, -4]), array([1, 1]))
    """
    if _promotion_checks():
        promotion_checked("divmod", x1, x2)
    if out is not None or kwargs:
        x1, x2 = _ufunc_options("divmod", (x1, x2), out, kwargs, False)
    else:
        x1, x2 = asarray_operands(x1, x2)
    return _divmod(x1, x2)


__all__.append("divmod")

# ---------------------------------------------------------------------------------------------
# Non-ufunc functions


def fix(x: ArrayLike, out: Any = None) -> Any:
    """Round towards zero, like :func:`numpy.fix` (integers keep their dtype).

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.fix([-2.5, 2.5])
        array([-2.,  2.])
    """
    _no_out("fix", out)
    (x,) = asarray_operands(x)
    return _ew.trunc(x)


def round(a: ArrayLike, decimals: int = 0, out: Any = None) -> Any:  # noqa: A001
    """Round half to even to ``decimals`` decimals, like :func:`numpy.round`.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.round([0.5, 1.5, 2.5])
        array([0., 2., 2.])
        >>> fnp.round(1.234, 1)
        array(1.2)
    """
    _no_out("round", out)
    (a,) = asarray_operands(a)
    if isinstance(decimals, Tracer):  # the rounding scale is a static parameter
        decimals = concrete_or_error(decimals, "funcgrad.numpy.round: decimals")
    try:
        decimals = operator_index(decimals)  # (a 0-d integer device array too, as NumPy's)
    except TypeError:
        raise TypeError(
            f"funcgrad.numpy.round: decimals must be an integer, got {type(decimals).__name__}"
        ) from None
    if decimals and get_aval(a).dtype == _np.bool_:
        # NumPy scales by 10**decimals in the input's dtype, which bool cannot hold (CuPy's
        # round casts bool to float16 first and returns that: not NumPy's answer)
        raise TypeError(
            f"funcgrad.numpy.round: cannot round a bool array to {decimals} decimals (NumPy: "
            "Cannot cast ufunc 'multiply' output from dtype('float64') to dtype('bool')); "
            "convert it to a number type first")
    return _ew.round(a, decimals)


around = round


def real(val: ArrayLike) -> Any:
    """The real part, like :func:`numpy.real` (the input itself when it is not complex).

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.real([1 + 2j, 3 - 1j])
        array([1., 3.])
    """
    if type(val) is bool:
        val = int(val)  # as NumPy: False.real is the int 0 (bool arrays stay bool)
    (val,) = asarray_operands(val)
    return _ew.real(val)


def imag(val: ArrayLike) -> Any:
    """The imaginary part, like :func:`numpy.imag` (zeros when the input is not complex).

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.imag([1 + 2j, 3 - 1j])
        array([ 2., -1.])
    """
    if type(val) is bool:
        val = int(val)  # as NumPy: False.imag is the int 0 (bool arrays stay bool)
    (val,) = asarray_operands(val)
    return _ew.imag(val)


def angle(z: ArrayLike, deg: bool = False) -> Any:
    """The complex argument in radians (degrees with ``deg=True``), like :func:`numpy.angle`.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.angle([1j, -1.0])
        array([1.57079633, 3.14159265])
    """
    (z,) = asarray_operands(z)
    if get_aval(z).dtype.kind == "c":
        a = _ew.atan2(_ew.imag(z), _ew.real(z))
    else:
        a = _ew.atan2(0, z)
    return _ew.mul(a, _DEG) if deg else a


def sinc(x: ArrayLike) -> Any:
    """The normalized sinc ``sin(pi x) / (pi x)`` (1 at 0), like :func:`numpy.sinc`.

    Derivatives of every order are right at 0 too (as JAX's): there the value is the
    Maclaurin series of ``sin(y) / y``, whose JVP is its next term.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.sinc([0.0, 0.5])
        array([1.        , 0.63661977])
    """
    (x,) = asarray_operands(x)
    y = _ew.mul(x, math.pi)
    at_zero = _ew.eq(y, 0)
    # 1 where y is 0, so the quotient (and its gradient) there is finite; that branch is
    # not selected there.
    safe = _ew.select_n(at_zero, y, _ew.add(_ew.mul(y, 0), 1))
    return _ew.select_n(at_zero, _ew.div(_ew.sin(safe), safe), _sinc_maclaurin(0, y))


@functools.partial(custom_jvp, nondiff_argnums=(0,))
def _sinc_maclaurin(k: int, y: Any) -> Any:
    """The k-th derivative of ``sin(y) / y`` at ``y = 0``, shaped like ``y``: its JVP is the
    (k+1)-th times the tangent, so nested derivatives of sinc at 0 are exact."""
    zero = fnp.zeros_like(y)
    return zero if k % 2 else _ew.add(zero, (-1) ** (k // 2) / (k + 1))


@_sinc_maclaurin.defjvp
def _sinc_maclaurin_jvp(k: int, primals: Any, tangents: Any) -> Any:
    (y,), (t,) = primals, tangents
    return _sinc_maclaurin(k, y), _ew.mul(_sinc_maclaurin(k + 1, y), t)


def clip(
    a: ArrayLike,
    a_min: Any = _np._NoValue,
    a_max: Any = _np._NoValue,
    out: Any = None,
    *,
    min: Any = _np._NoValue,  # noqa: A002
    max: Any = _np._NoValue,  # noqa: A002
    **kwargs: Any,
) -> Any:
    """Clip values to ``[a_min, a_max]`` (either may be None), like :func:`numpy.clip`.

    The bounds may also be given as ``min=``/``max=``. Where ``a_min > a_max`` the result is
    ``a_max``, as in NumPy. It is ``minimum(maximum(a, a_min), a_max)``, as ``jax.numpy.clip``:
    at a value equal to a bound the gradient is split half/half between the value and the
    bound, as ``maximum``/``minimum`` split it (``lax.clamp`` gives 0 there instead).

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.clip([-1.0, 0.5, 3.0], 0.0, 1.0)
        array([0. , 0.5, 1. ])
    """
    _no_out("clip", out)
    if a_min is _np._NoValue and a_max is _np._NoValue:
        a_min = None if min is _np._NoValue else min
        a_max = None if max is _np._NoValue else max
    elif min is not _np._NoValue or max is not _np._NoValue:
        raise TypeError("funcgrad.numpy.clip: pass the bounds as a_min/a_max or as min=/max=, "
                        "not both")
    # A bound left out is no bound (ndarray.clip(lo) allows that; numpy.clip raises).
    a_min = None if a_min is _np._NoValue else a_min
    a_max = None if a_max is _np._NoValue else a_max
    a, lo, hi = _colocate(*asarray_operands(a, a_min, a_max))
    if kwargs:
        given = [v for v in (a, lo, hi) if v is not None]
        it = iter(_ufunc_options("clip", tuple(given), None, dict(kwargs), False))
        a, lo, hi = (None if v is None else next(it) for v in (a, lo, hi))
    if lo is None and hi is None:
        return a
    dtype = get_aval(a).dtype
    if dtype.kind in "iu":
        # No gradient: clamp's one three-way promotion, which also takes a Python int outside
        # the dtype's range as NumPy does (uint8 clipped at -1 or 300); a bound left out is
        # the dtype's own.
        info = _np.iinfo(dtype)
        return _ew.clamp(info.min if lo is None else lo, a, info.max if hi is None else hi)
    # minimum(maximum(a, lo), hi), as jnp.clip: its ties split the gradient (lax.clamp's: 0).
    if lo is not None:
        a = _ew.max(a, lo)
    return a if hi is None else _ew.min(a, hi)


def where(condition: ArrayLike, x: Any = _np._NoValue, y: Any = _np._NoValue, /, *,
          size: int | None = None, fill_value: Any = None) -> Any:
    """``x`` where ``condition`` is true (nonzero), else ``y``, like :func:`numpy.where`.

    Broadcasts all three; the result dtype is NumPy's. Differentiable in ``x`` and ``y``.
    The one-argument form ``where(condition)`` is ``nonzero(condition)``: its output shape
    depends on the values, so it needs a concrete condition or (as in ``jax.numpy``) a static
    ``size=`` with an optional ``fill_value=``; then it works under ``jit``/``vmap``.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.where([True, False], 1.0, [2.0, 3.0])
        array([1., 3.])
        >>> fnp.where([False, True], size=2, fill_value=-1)
        (array([ 1, -1]),)
    """
    if _ext.is_extended(x) or _ext.is_extended(y):
        return _ext.where(condition, x, y)
    if x is _np._NoValue and y is _np._NoValue:
        if type(condition) in (list, tuple):
            condition = _seq_to_array(condition)
        return fnp.nonzero(condition, size=size, fill_value=fill_value)
    if x is _np._NoValue or y is _np._NoValue:
        raise ValueError("funcgrad.numpy.where: either both or neither of x and y should be given")
    if size is not None or fill_value is not None:
        raise ValueError("funcgrad.numpy.where: size= and fill_value= belong to the "
                         "one-argument form where(condition) (nonzero)")
    if _rank_promotion_level() != "allow":  # JAX's flags, as for the binary ufuncs
        check_rank_promotion("where", condition, x, y)
    if _dtype_promotion_level() != "standard":
        check_strict_dtypes("where", x, y)
    condition, x, y = _colocate(*asarray_operands(condition, x, y))
    try:
        return _ew.select_n(_truth(condition), y, x)
    except ShapeError:
        # select_n names its operands (condition, y, x): say it in where's terms
        shapes = [tuple(get_aval(v).shape) for v in (condition, x, y)]
        try:
            _np.broadcast_shapes(*shapes)
        except ValueError:
            raise ShapeError(f"where: condition, x and y of shapes {shapes[0]}, {shapes[1]} "
                             f"and {shapes[2]} cannot be broadcast together") from None
        raise


def isclose(
    a: ArrayLike, b: ArrayLike, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False
) -> Any:
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (infinities equal only to themselves),
    like :func:`numpy.isclose`.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.isclose([1.0, 1.1], 1.0)
        array([ True, False])
    """
    a, b, rtol, atol = _colocate(*asarray_operands(a, b, rtol, atol))
    bd = get_aval(b)
    if bd.dtype.kind not in "fc":
        # As NumPy: an exact (non-float) b is compared in floating point.
        # (a weak Python int stays weak: NumPy turns it into a Python float)
        b = _ew.add(b, 0.0) if bd.weak_type else _cast(b, _np.result_type(bd.dtype, 1.0))
    close = _ew.le(_ew.abs(_ew.sub(a, b)), _ew.add(atol, _ew.mul(rtol, _ew.abs(b))))
    result = _ew.or_(_ew.and_(close, _scalar_or(_ew.is_finite, _py_isfinite, b)),
                     _ew.eq(a, b))
    if equal_nan:
        result = _ew.or_(result, _ew.and_(_scalar_or(_ew.is_nan, _py_isnan, a),
                                          _scalar_or(_ew.is_nan, _py_isnan, b)))
    return result


def allclose(
    a: ArrayLike, b: ArrayLike, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False
) -> bool:
    """Whether every element is :func:`isclose`: a Python bool, like :func:`numpy.allclose`,
    where the values are known; under ``jit``/``vmap`` a traced 0-d bool array, as
    ``jnp.allclose`` (usable in ``fnp.where``, ``lax.cond``).

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.allclose([1.0, 2.0], [1.0, 2.0 + 1e-9])
        True
    """
    r = isclose(a, b, rtol, atol, equal_nan)
    if isinstance(r, Tracer) and r.to_concrete_value() is None:
        return fnp.all(r)
    r = concrete_or_error(r, "funcgrad.numpy.allclose")
    return builtins.bool(xp_for(r).all(r))


def nan_to_num(
    x: ArrayLike,
    copy: bool = True,
    nan: Any = 0.0,
    posinf: Any = None,
    neginf: Any = None,
) -> Any:
    """Replace nan by ``nan`` and infinities by ``posinf``/``neginf`` (default: the dtype's
    largest/smallest finite values), like :func:`numpy.nan_to_num`. Complex inputs are
    treated part by part; integers pass through. Gradients flow where ``x`` is finite.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.nan_to_num([float("nan"), 1.0, float("-inf")], neginf=-9.0)
        array([ 0.,  1., -9.])
    """
    (x,) = asarray_operands(x)
    a = get_aval(x)
    kind = a.dtype.kind
    if kind not in "fc":
        return x
    if kind == "c":
        return _ew.complex(
            _nan_to_num_real(_ew.real(x), nan, posinf, neginf),
            _nan_to_num_real(_ew.imag(x), nan, posinf, neginf),
        )
    return _nan_to_num_real(x, nan, posinf, neginf)


def _nan_to_num_real(x: Any, nan: Any, posinf: Any, neginf: Any) -> Any:
    dt = get_aval(x).dtype
    fi = _np.finfo(dt)
    hi = float(fi.max) if posinf is None else posinf
    lo = float(fi.min) if neginf is None else neginf
    nan, hi, lo = (v if isinstance(v, int | float) else _cast(v, dt) for v in (nan, hi, lo))
    x = _ew.select_n(_ew.is_nan(x), x, nan)
    x = _ew.select_n(_ew.eq(x, _np.inf), x, hi)
    return _ew.select_n(_ew.eq(x, -_np.inf), x, lo)


def _no_out(name: str, out: Any) -> None:
    if out is not None:
        raise TypeError(
            f"funcgrad.numpy.{name}: out= is not supported (funcgrad arrays are immutable); "
            "use the returned array instead"
        )


__all__ += [
    "fix", "round", "around", "real", "imag", "angle", "sinc", "clip", "where", "isclose",
    "allclose", "nan_to_num",
]
