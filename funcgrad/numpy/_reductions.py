"""funcgrad.numpy: reductions, statistics, cumulative ops and sorting, with NumPy semantics.

Axes are None (all), an int (negative counts from the end) or a tuple; ``keepdims`` and
``dtype`` behave as in NumPy, and so do result dtypes (``sum`` of bool is int64, ``mean`` of
ints float64, ``var`` of complex real). ``where=`` masks as in NumPy (``max``/``min`` need
``initial=`` with it, as in NumPy); ``out=`` is not supported (arrays are immutable: a clear
error says so). Sorting is always stable, which is one of the orders NumPy may return.

Example:
    >>> import numpy as np, funcgrad.numpy as fnp
    >>> fnp.mean(np.array([[1, 2], [3, 5]]), axis=0)
    array([2. , 3.5])
"""

from __future__ import annotations

import builtins
import warnings
from typing import Any

import numpy

import funcgrad.numpy as fnp
import funcgrad.ops.elementwise as _ew
import funcgrad.ops.reductions as _red
import funcgrad.ops.shape as _shape
import funcgrad.ops.sorting as _sorting
from funcgrad.avals import ShapedArray, canonical_dtype, get_aval
from funcgrad.backend import device_of, get_default_device, operator_index, to_numpy, xp_for_device
from funcgrad.core import Tracer, bind1, concrete_or_error
from funcgrad.errors import AxisError, ShapeError
from funcgrad.numpy._creation import with_out_sharding
from funcgrad.ops.indexing import IndexingError

__all__ = [
    "sum", "prod", "mean", "var", "std", "max", "amax", "min", "amin", "argmax", "argmin",
    "any", "all", "cumsum", "cumprod", "ptp", "median", "quantile", "percentile", "average",
    "count_nonzero", "nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin",
    "sort", "argsort",
]

_F64 = numpy.dtype("float64")
_F32 = numpy.dtype("float32")
_F16 = numpy.dtype("float16")
_BOOL = numpy.dtype("bool")
_SORT_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


# ---------------------------------------------------------------------------------------------
# Helpers


def _asarray(a: Any) -> Any:
    """Arrays, tracers and scalars pass through; lists and tuples become arrays."""
    if isinstance(a, list | tuple):
        return fnp.asarray(a)
    return a


def _aval(name: str, a: Any) -> ShapedArray:
    try:
        return get_aval(a)
    except TypeError as e:
        raise TypeError(f"{name}: {e}") from None


def _unsupported(name: str, **params: Any) -> None:
    for k, v in params.items():
        if v is not None and v is not False:
            raise TypeError(
                f"funcgrad.numpy.{name}: the argument {k}= is not supported"
                + (" (arrays are immutable: use the return value)" if k == "out" else "")
            )


def _needs_stacking(obj: Any) -> bool:
    """A nested list holding tracers or device arrays (NumPy cannot read it)."""
    if isinstance(obj, list | tuple):
        return builtins.any(_needs_stacking(o) for o in obj)
    return isinstance(obj, Tracer) or device_of(obj) not in (None, "cpu")


def _mask(name: str, where: Any, av: ShapedArray) -> Any:
    """``where=`` as a bool mask of ``av``'s shape, or None when every element counts."""
    if where is None or where is True:
        return None
    # A list mask goes where the array is (as a list operand of an elementwise function).
    w = (_const(av, numpy.asarray(where)) if isinstance(where, list | tuple)
         and not _needs_stacking(where) else _asarray(where))
    if isinstance(w, bool | int | numpy.bool_) and not isinstance(w, Tracer):
        # (only ``where=True`` itself means "no mask": NumPy's max(where=1) wants initial=)
        return fnp.broadcast_to(_const(av, numpy.asarray(bool(w))), av.shape)
    wa = _aval(name, w)
    if wa.dtype != _BOOL:
        raise TypeError(
            f"{name}: where= must be boolean: cannot cast array data from {wa.dtype} to bool "
            "according to the rule 'safe'"
        )
    if wa.shape == av.shape:
        return w
    try:
        return fnp.broadcast_to(w, av.shape)
    except ShapeError:
        raise ShapeError(
            f"{name}: where= of shape {wa.shape} cannot be broadcast to the array's shape "
            f"{av.shape}"
        ) from None


def _fill(x: Any, mask: Any, value: Any) -> Any:
    """``x`` with ``value`` (cast to ``x``'s dtype) where ``mask`` is False."""
    if mask is None:
        return x
    xa = get_aval(x)
    return _where(mask, x, _const(xa, numpy.asarray(value).astype(xa.dtype)))


def _count(mask: Any, n: int, axes: tuple[int, ...]) -> Any:
    """How many elements each reduction sees: ``n``, or the mask's count (int64)."""
    return n if mask is None else _rsum(mask, axes)


_ALL_AXES = [tuple(range(n)) for n in range(33)]


def _axes(name: str, axis: Any, ndim: int, scalar_axis: bool = True) -> tuple[int, ...]:
    """``axis`` (None, int or tuple of ints) as sorted non-negative axes; errors name ``name``.

    Like NumPy's ufunc reductions, a 0-d array takes a bare ``axis`` of 0 or -1 (reducing
    nothing) unless ``scalar_axis`` is False (``mean``, ``var``, ``median`` refuse it).
    """
    if axis is None:
        return _ALL_AXES[ndim] if ndim < 33 else tuple(range(ndim))
    if ndim == 0 and scalar_axis and type(axis) is int and axis in (0, -1):
        return ()
    if isinstance(axis, list | tuple):
        items = tuple(axis)
    else:
        items = (axis,)
    out = []
    for ax in items:
        if isinstance(ax, bool) or not isinstance(ax, int | numpy.integer):
            ax = _index(name, ax, "None, an int or a tuple of ints")
        if not -ndim <= ax < ndim:
            raise AxisError(
                f"{name}: axis {int(ax)} is out of bounds for an array of rank {ndim}"
            )
        out.append(int(ax) % ndim)
    if len(set(out)) != len(out):
        raise ShapeError(f"{name}: repeated axis in {items}")
    return tuple(sorted(out))


def _index(name: str, ax: Any, what: str) -> int:
    """``ax`` as an int if NumPy takes it as one (a 0-d integer array, say), else TypeError."""
    if isinstance(ax, Tracer):  # the axes fix the result's shape: they must be static
        ax = concrete_or_error(ax, f"{name}: axis")
    try:
        if not isinstance(ax, bool):
            return operator_index(ax)
    except TypeError:
        pass
    raise TypeError(f"{name}: axis must be {what}, got {type(ax).__name__}")


def _axis1(name: str, axis: Any, ndim: int) -> int:
    if isinstance(axis, bool) or not isinstance(axis, int | numpy.integer):
        axis = _index(name, axis, "an int or None")
    return _axes(name, axis, ndim, scalar_axis=False)[0]


def _rsum(x: Any, axes: tuple[int, ...]) -> Any:
    """``reduce_sum`` over already-normalized ``axes`` (skips re-validating them)."""
    return bind1(_red.reduce_sum_p, x, axes=axes)


def _rsum_as(x: Any, axes: tuple[int, ...]) -> Any:
    """:func:`_rsum` in ``x``'s own dtype: a sum NumPy accumulates in a ``dtype=`` such as
    int8 wraps around there (reduce_sum would widen small ints to int64)."""
    return _cast(_rsum(x, axes), get_aval(x).dtype)


def _keep(out: Any, shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> Any:
    if not keepdims:
        return out
    return _shape.reshape(out, tuple(1 if i in axes else s for i, s in enumerate(shape)))


def _size(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    n = 1
    for i in axes:
        n *= shape[i]
    return n


def _cast(x: Any, dtype: numpy.dtype) -> Any:
    if get_aval(x).dtype == dtype:
        return x
    return _ew.convert_element_type(x, dtype)


def _dtype_arg(name: str, dtype: Any) -> numpy.dtype | None:
    return None if dtype is None else canonical_dtype(dtype, f"{name}(dtype=...)")


def _ravel(x: Any) -> Any:
    return _shape.reshape(x, (get_aval(x).size,))


def _to_last(x: Any, axes: tuple[int, ...]) -> Any:
    """``x`` with ``axes`` moved to the end and merged into one last axis."""
    a = get_aval(x)
    kept = tuple(i for i in range(a.ndim) if i not in axes)
    x = _shape.transpose(x, kept + axes)
    return _shape.reshape(x, tuple(a.shape[i] for i in kept) + (_size(a.shape, axes),))


def _const(like: ShapedArray, value: Any) -> Any:
    """A host value as a constant on ``like``'s device."""
    xp = xp_for_device(like.device or get_default_device())
    return xp.asarray(value)


def _take_last(x: Any, positions: Any) -> Any:
    """``x[..., positions]`` for static non-negative ``positions`` (a 1-d int sequence)."""
    a = get_aval(x)
    idx = numpy.asarray(positions, dtype=numpy.int64).reshape((1,) * (a.ndim - 1) + (-1,))
    return _sorting.gather_along_axis(x, _const(a, idx), a.ndim - 1)


def _drop_last(x: Any) -> Any:
    return _shape.reshape(x, get_aval(x).shape[:-1])


def _is_inexact(a: ShapedArray) -> bool:
    return a.dtype.kind in "fc"


def _isnan(x: Any) -> Any:
    return fnp.isnan(x)


def _where(c: Any, x: Any, y: Any) -> Any:
    return fnp.where(c, x, y)


def _warn_if_any(flag: Any, message: str, stacklevel: int = 4) -> None:
    """NumPy's ``RuntimeWarning`` (``message``) where ``flag`` holds a True and its value is
    known now; a traced flag (under ``jit``) has no value yet, and warns nothing (as JAX)."""
    v = flag.to_concrete_value() if isinstance(flag, Tracer) else flag
    if v is not None and numpy.asarray(to_numpy(v)).any():
        warnings.warn(message, RuntimeWarning, stacklevel=stacklevel)


def _div_or_nan(num: Any, den: Any, empty: Any) -> Any:
    """``num / den`` with NaN where ``empty`` (the slices NumPy warns about once, by name),
    dividing by 1 there so that no division warning joins NumPy's own."""
    q = _ew.div(num, _where(empty, 1, den))
    nan = complex(numpy.nan, numpy.nan) if get_aval(q).dtype.kind == "c" else numpy.nan
    return _where(empty, nan, q)


# ---------------------------------------------------------------------------------------------
# sum, prod


def _sum_like(name, prim, a, axis, dtype, out, keepdims, initial, where,
              promote_integers=True):
    if out is not None:
        _unsupported(name, out=out)
    x = _asarray(a)
    av = _aval(name, x)
    axes = _axes(name, axis, av.ndim)
    if dtype is None and not promote_integers and av.dtype.kind in "iu":
        dtype = av.dtype  # JAX's promote_integers=False: integers keep their width
    dt = None if dtype is None else _dtype_arg(name, dtype)
    if dt is not None:
        x = _cast(x, dt)
    if where is not None:
        x = _fill(x, _mask(name, where, av), 0 if prim is _red.reduce_sum_p else 1)
    if get_aval(x).dtype == _F16:
        # float16 accumulates in float32 and rounds once, as NumPy's half loops do (and
        # jax.numpy): CuPy's prod multiplies in float16, where 4**8 is already inf (and
        # inf * 0 NaN where NumPy's product is 0)
        r = _cast(bind1(prim, _cast(x, _F32), axes=axes), _F16)
    else:
        r = bind1(prim, x, axes=axes)
    if dt is not None:
        r = _cast(r, dt)
    if initial is not None:
        r = (_ew.add if prim is _red.reduce_sum_p else _ew.mul)(r, _initial(r, initial))
    return _keep(r, av.shape, axes, keepdims) if keepdims else r


def _initial(r: Any, initial: Any) -> Any:
    """``initial`` converted to ``r``'s dtype as NumPy converts it (``OverflowError`` if out of
    range), as a weak Python scalar so it joins ``r`` on its device without promoting it."""
    if isinstance(initial, Tracer):
        return _cast(initial, get_aval(r).dtype)
    return get_aval(r).dtype.type(initial).item()


def sum(
    a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
    initial: Any = None, where: Any = None, promote_integers: bool = True,
) -> Any:
    """Sum over ``axis`` (``numpy.sum``): ints and bools sum in int64, floats in their dtype;
    with JAX's ``promote_integers=False`` integers keep their dtype (wrapping as they do).

    Example:
        >>> import numpy as np
        >>> sum(np.array([[True, False], [True, True]]), axis=1)
        array([1, 2])
    """
    return _sum_like("sum", _red.reduce_sum_p, a, axis, dtype, out, keepdims, initial, where,
                     promote_integers)


def prod(
    a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
    initial: Any = None, where: Any = None, promote_integers: bool = True,
) -> Any:
    """Product over ``axis`` (``numpy.prod``); gradients are exact where elements are zero.
    JAX's ``promote_integers=False`` keeps an integer dtype (as :func:`sum`).

    Example:
        >>> import numpy as np
        >>> prod(np.array([[1., 2.], [3., 4.]]), axis=0)
        array([3., 8.])
    """
    return _sum_like("prod", _red.reduce_prod_p, a, axis, dtype, out, keepdims, initial, where,
                     promote_integers)


# ---------------------------------------------------------------------------------------------
# mean, var, std


def _mean_dtypes(a: ShapedArray, dtype: numpy.dtype | None) -> tuple[numpy.dtype, numpy.dtype]:
    """(compute dtype, result dtype) of a mean as NumPy picks them."""
    if dtype is not None:
        return dtype, dtype
    if a.dtype.kind in "biu":
        return _F64, _F64
    if a.dtype == _F16:
        return _F32, _F16
    return a.dtype, a.dtype


def mean(
    a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
    *, where: Any = None,
) -> Any:
    """Arithmetic mean over ``axis`` (``numpy.mean``); ints give float64.

    Example:
        >>> import numpy as np
        >>> float(mean(np.array([1, 2, 4])))
        2.3333333333333335
    """
    _unsupported("mean", out=out)
    x = _asarray(a)
    av = _aval("mean", x)
    axes = _axes("mean", axis, av.ndim, scalar_axis=False)
    cdt, rdt = _mean_dtypes(av, _dtype_arg("mean", dtype))
    mask = _mask("mean", where, av)
    # (a masked count is an int64 array: the quotient goes back to the sum's dtype, as NumPy)
    r = _ew.div(_rsum_as(_fill(_cast(x, cdt), mask, 0), axes),
                _count(mask, _size(av.shape, axes), axes))
    return _keep(_cast(_cast(r, cdt), rdt), av.shape, axes, keepdims)


def _abs2(d: Any) -> Any:
    """``|d|**2`` (real) for real or complex ``d``."""
    a = get_aval(d)
    if a.dtype.kind != "c":
        return _ew.mul(d, d)
    real_dt = numpy.finfo(a.dtype).dtype
    re = _ew.convert_element_type(d, real_dt)
    im = _ew.convert_element_type(_ew.mul(d, -1j), real_dt)
    return _ew.add(_ew.mul(re, re), _ew.mul(im, im))


def _ddof(name: str, ddof: Any, correction: Any) -> Any:
    if correction is not None:
        if ddof not in (0, None):
            raise ValueError(f"{name}: ddof and correction can't be provided simultaneously")
        return correction
    return 0 if ddof is None else ddof


def _var(name, a, axis, dtype, out, ddof, keepdims, where, mean_arg):
    _unsupported(name, out=out)
    x = _asarray(a)
    av = _aval(name, x)
    axes = _axes(name, axis, av.ndim, scalar_axis=False)
    given = _dtype_arg(name, dtype)
    mask = _mask(name, where, av)
    # NumPy's algorithm: the mean is summed in (and stored as) ``dtype``; the deviations are
    # taken from the original values; their squares (real for complex) are summed in
    # ``dtype``, which is also the result's dtype when given.
    dt = _F64 if given is None and av.dtype.kind in "biu" else given
    n = _count(mask, _size(av.shape, axes), axes)
    if mean_arg is not None:
        d = _ew.sub(x, _asarray(mean_arg))  # (NumPy: a keepdims-shaped mean broadcasts)
        if get_aval(d).shape != av.shape:
            raise ShapeError(
                f"{name}: mean= of shape {_aval(name, mean_arg).shape} does not broadcast "
                f"to the input's shape {av.shape} (give it keepdims=True's shape)"
            )
    else:
        xs = x if dt is None else _cast(x, dt)
        m = _cast(_ew.div(_rsum_as(_fill(xs, mask, 0), axes), n), av.dtype if dt is None else dt)
        d = _ew.sub(x, _expand(m, av.shape, axes))
    sq = _abs2(d)
    if dt is not None:
        sq = _cast(sq, dt)
    rdt = get_aval(sq).dtype
    dof = builtins.max(n - ddof, 0) if mask is None else fnp.maximum(_ew.sub(n, ddof), 0)
    r = _ew.div(_rsum_as(_fill(sq, mask, 0), axes), dof)
    return _keep(_cast(r, rdt), av.shape, axes, keepdims)


def _expand(m: Any, shape: tuple[int, ...], axes: tuple[int, ...]) -> Any:
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return _shape.broadcast_in_dim(m, shape, kept)


def var(
    a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
    keepdims: bool = False, *, where: Any = None, mean: Any = None, correction: Any = None,
) -> Any:
    """Variance over ``axis`` with ``ddof`` (``numpy.var``); complex input gives a real result.

    Example:
        >>> import numpy as np
        >>> float(var(np.array([1., 2., 4.]), ddof=1))
        2.333333333333333
    """
    return _var("var", a, axis, dtype, out, _ddof("var", ddof, correction), keepdims, where,
                mean)


def std(
    a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
    keepdims: bool = False, *, where: Any = None, mean: Any = None, correction: Any = None,
) -> Any:
    """Standard deviation over ``axis`` with ``ddof`` (``numpy.std``).

    Its derivative is infinite or NaN where the variance is zero (as in JAX).

    Example:
        >>> import numpy as np
        >>> float(std(np.array([1., 3.])))
        1.0
    """
    v = _var("std", a, axis, dtype, out, _ddof("std", ddof, correction), keepdims, where, mean)
    return _sqrt_of_var("std", v)


def _sqrt_of_var(name: str, v: Any) -> Any:
    """``sqrt(v)`` in ``v``'s dtype, as NumPy's std takes it: an integer or bool ``dtype=``
    truncates a 0-d result, but an array result fails NumPy's in-place ``sqrt(out=)`` cast."""
    va = get_aval(v)
    if va.dtype.kind in "biu":
        if va.ndim:
            raise TypeError(
                f"{name}: cannot cast the square root of the variance to dtype={va.dtype} "
                f"(NumPy's 'same_kind' rule refuses float to {va.dtype} for an array result); "
                f"pass a floating dtype"
            )
        return _cast(fnp.sqrt(v), va.dtype)
    return fnp.sqrt(v)


# ---------------------------------------------------------------------------------------------
# max, min


def _extremum_identity(prim: Any, dtype: numpy.dtype) -> Any:
    """The identity of max (``prim`` is reduce_max) or min in ``dtype``; None for complex
    dtypes (ordered lexicographically, they have no infinite identity)."""
    is_max = prim is _red.reduce_max_p
    if dtype.kind == "f":
        return dtype.type(-numpy.inf if is_max else numpy.inf).item()
    if dtype.kind in "iu":
        info = numpy.iinfo(dtype)
        return dtype.type(info.min if is_max else info.max).item()
    if dtype.kind == "b":
        return not is_max
    return None


def _extremum(name, prim, a, axis, out, keepdims, initial, where, np_name):
    _unsupported(name, out=out)
    x = _asarray(a)
    av = _aval(name, x)
    axes = _axes(name, axis, av.ndim)
    mask = _mask(name, where, av)
    if mask is not None:
        if initial is None:
            raise ValueError(
                f"{name}: reduction operation '{np_name}' does not have an identity, so to "
                "use a where mask one has to specify 'initial'"
            )
        # Masked-out elements become the reduction's identity (``initial`` joins afterwards),
        # so a tie with ``initial`` shares the derivative as jax.numpy does.
        ident = _extremum_identity(prim, av.dtype)
        x = _where(mask, x, _initial(x, initial) if ident is None else ident)
    if _size(av.shape, axes) == 0:
        if initial is None:
            raise ValueError(
                f"{name}: zero-size array to reduction operation {np_name} which has no "
                f"identity (reducing axes {axes} of an array of shape {av.shape}); pass "
                "initial= to give empty reductions a value"
            )
        shape = tuple(s for i, s in enumerate(av.shape) if i not in axes)
        xp = xp_for_device(av.device or get_default_device())
        r = xp.full(shape, av.dtype.type(initial), dtype=av.dtype)
        return _keep(r, av.shape, axes, keepdims)
    r = bind1(prim, x, axes=axes)
    if initial is not None:
        r = getattr(fnp, np_name)(r, _initial(r, initial))
    return _keep(r, av.shape, axes, keepdims)


def max(
    a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None,
    where: Any = None,
) -> Any:
    """Maximum over ``axis`` (``numpy.max``); NaN-propagating. Tied maxima share the gradient.

    Example:
        >>> import numpy as np
        >>> max(np.array([[1., 5.], [7., 2.]]), axis=0)
        array([7., 5.])
    """
    return _extremum("max", _red.reduce_max_p, a, axis, out, keepdims, initial, where, "maximum")


def min(
    a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None,
    where: Any = None,
) -> Any:
    """Minimum over ``axis`` (``numpy.min``); NaN-propagating. Tied minima share the gradient.

    Example:
        >>> import numpy as np
        >>> min(np.array([[1., 5.], [7., 2.]]), axis=1)
        array([1., 2.])
    """
    return _extremum("min", _red.reduce_min_p, a, axis, out, keepdims, initial, where, "minimum")


def amax(
    a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None,
    where: Any = None,
) -> Any:
    """Maximum over ``axis``: ``numpy.amax``, the same as :func:`max`.

    Example:
        >>> import numpy as np
        >>> float(amax(np.array([1., 5., 2.])))
        5.0
    """
    return _extremum("amax", _red.reduce_max_p, a, axis, out, keepdims, initial, where,
                     "maximum")


def amin(
    a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None,
    where: Any = None,
) -> Any:
    """Minimum over ``axis``: ``numpy.amin``, the same as :func:`min`.

    Example:
        >>> import numpy as np
        >>> float(amin(np.array([1., 5., 2.])))
        1.0
    """
    return _extremum("amin", _red.reduce_min_p, a, axis, out, keepdims, initial, where,
                     "minimum")


def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """Range ``max - min`` over ``axis`` (``numpy.ptp``).

    Example:
        >>> import numpy as np
        >>> ptp(np.array([[1., 5.], [7., 2.]]), axis=1)
        array([4., 5.])
    """
    _unsupported("ptp", out=out)
    x = _asarray(a)
    hi = _extremum("ptp", _red.reduce_max_p, x, axis, None, keepdims, None, None, "maximum")
    if _aval("ptp", x).dtype == _BOOL:
        raise TypeError("ptp: boolean arrays are not supported (NumPy cannot subtract bools)")
    lo = _extremum("ptp", _red.reduce_min_p, x, axis, None, keepdims, None, None, "minimum")
    return _ew.sub(hi, lo)


# ---------------------------------------------------------------------------------------------
# argmax, argmin


def _arg(name, prim_fn, a, axis, out, keepdims):
    _unsupported(name, out=out)
    x = _asarray(a)
    av = _aval(name, x)
    if axis is None or av.ndim == 0 and type(axis) is int and axis in (0, -1):
        flat = _ravel(x) if av.ndim != 1 else x
        if av.size == 0:
            raise ValueError(f"{name}: attempt to get {name} of an empty sequence")
        r = prim_fn(flat, 0)
        if keepdims:
            r = _shape.reshape(r, (1,) * av.ndim)
        return r
    ax = _axis1(name, axis, av.ndim)
    if av.shape[ax] == 0:
        raise ValueError(f"{name}: attempt to get {name} of an empty sequence")
    r = prim_fn(x, ax)
    return _keep(r, av.shape, (ax,), keepdims)


def argmax(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Any:
    """Index of the first maximum (``numpy.argmax``; flat index when ``axis`` is None).

    Example:
        >>> import numpy as np
        >>> int(argmax(np.array([[1., 5.], [7., 2.]])))
        2
    """
    return _arg("argmax", _red.argmax, a, axis, out, keepdims)


def argmin(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Any:
    """Index of the first minimum (``numpy.argmin``; flat index when ``axis`` is None).

    Example:
        >>> import numpy as np
        >>> argmin(np.array([[1., 5.], [7., 0.]]), axis=1)
        array([0, 1])
    """
    return _arg("argmin", _red.argmin, a, axis, out, keepdims)


# ---------------------------------------------------------------------------------------------
# any, all, count_nonzero


def _logical(name, prim, a, axis, out, keepdims, where):
    _unsupported(name, out=out)
    x = _asarray(a)
    av = _aval(name, x)
    axes = _axes(name, axis, av.ndim)
    x = _fill(x, _mask(name, where, av), 0 if prim is _red.reduce_or_p else 1)
    return _keep(bind1(prim, x, axes=axes), av.shape, axes, keepdims)


def any(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, *,
        where: Any = None) -> Any:
    """Whether any element over ``axis`` is nonzero (``numpy.any``).

    Example:
        >>> import numpy as np
        >>> any(np.array([[0, 0], [0, 3]]), axis=1)
        array([False,  True])
    """
    return _logical("any", _red.reduce_or_p, a, axis, out, keepdims, where)


def all(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, *,
        where: Any = None) -> Any:
    """Whether every element over ``axis`` is nonzero (``numpy.all``).

    Example:
        >>> import numpy as np
        >>> all(np.array([[1, 0], [2, 3]]), axis=1)
        array([False,  True])
    """
    return _logical("all", _red.reduce_and_p, a, axis, out, keepdims, where)


def count_nonzero(a: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    """Number of nonzero elements over ``axis`` (``numpy.count_nonzero``), as int64.

    Example:
        >>> import numpy as np
        >>> count_nonzero(np.array([[0., 1.], [2., 3.]]), axis=0)
        array([1, 2])
    """
    x = _asarray(a)
    av = _aval("count_nonzero", x)
    axes = _axes("count_nonzero", axis, av.ndim)
    if av.dtype.kind == "c":
        nz = fnp.not_equal(x, 0)
    else:
        nz = _cast(x, _BOOL)
    r = _rsum(nz, axes)
    return _keep(r, av.shape, axes, keepdims)


# ---------------------------------------------------------------------------------------------
# cumsum, cumprod


def _cumulative(name, prim_fn, a, axis, dtype, out):
    _unsupported(name, out=out)
    x = _asarray(a)
    av = _aval(name, x)
    dt = _dtype_arg(name, dtype)
    if dt is not None:
        x = _cast(x, dt)
    if axis is None or av.ndim == 0 and type(axis) is int and axis in (0, -1):
        x = _ravel(x)
        ax = 0
    else:
        ax = _axis1(name, axis, av.ndim)
    r = prim_fn(x, ax)
    return r if dt is None else _cast(r, dt)


def cumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """Running sum along ``axis`` (``numpy.cumsum``; flattened when ``axis`` is None).

    Example:
        >>> import numpy as np
        >>> cumsum(np.array([[1, 2], [3, 4]]))
        array([ 1,  3,  6, 10])
    """
    return _cumulative("cumsum", _red.cumsum, a, axis, dtype, out)


def cumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """Running product along ``axis`` (``numpy.cumprod``; flattened when ``axis`` is None).

    Its derivatives are exact where elements are zero, to any order.

    Example:
        >>> import numpy as np
        >>> cumprod(np.array([[1., 2.], [3., 4.]]), axis=1)
        array([[ 1.,  2.],
               [ 3., 12.]])
    """
    return _cumulative("cumprod", _red.cumprod, a, axis, dtype, out)


# ---------------------------------------------------------------------------------------------
# sort, argsort


def _sort_args(name: str, a: Any, axis: Any, kind: Any, order: Any, stable: Any):
    _unsupported(name, order=order)
    if kind not in _SORT_KINDS:
        raise ValueError(f"{name}: kind={kind!r} is not one of {_SORT_KINDS[1:]}")
    if stable not in (None, True, False):
        raise ValueError(f"{name}: stable must be True, False or None, got {stable!r}")
    x = _asarray(a)
    av = _aval(name, x)
    # (NumPy's argsort, unlike its sort, treats a 0-d array as 1-d)
    if axis is None or name == "argsort" and av.ndim == 0 and type(axis) is int and (
            axis in (0, -1)):
        return _ravel(x), 0
    if av.ndim == 0:
        raise AxisError(f"{name}: axis {axis} is out of bounds for an array of rank 0")
    return x, _axis1(name, axis, av.ndim)


def sort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *,
         stable: Any = None, descending: bool = False) -> Any:
    """Sorted copy along ``axis`` (``numpy.sort``; flattened when ``axis`` is None).

    NaNs go last, as in NumPy (first with ``descending=True``, JAX's extension, which is the
    ascending result reversed). The gradient follows each element to its sorted position.

    Example:
        >>> import numpy as np
        >>> sort(np.array([3., np.nan, 1.]))
        array([ 1.,  3., nan])
        >>> sort(np.array([3., np.nan, 1.]), descending=True)
        array([nan,  3.,  1.])
    """
    x, ax = _sort_args("sort", a, axis, kind, order, stable)
    out = _sorting.sort(x, ax)
    return _shape.rev(out, (ax,)) if _descending("sort", descending) else out


def argsort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *,
            stable: Any = None, descending: bool = False, dtype: Any = None) -> Any:
    """Indices that sort ``a`` along ``axis`` (``numpy.argsort``); always stable. ``dtype``
    (JAX's) is the indices' integer dtype (default int64).

    ``descending=True`` (JAX's extension) sorts from the largest, NaNs first; equal elements
    still keep their original order, as ``jax.numpy.argsort(..., stable=True)`` does.

    Example:
        >>> import numpy as np
        >>> argsort(np.array([2., 1., 2., 0.]))
        array([3, 1, 0, 2])
        >>> argsort(np.array([2., 1., 2., 0.]), descending=True)
        array([0, 2, 1, 3])
    """
    x, ax = _sort_args("argsort", a, axis, kind, order, stable)
    dt = None if dtype is None else _dtype_arg("argsort", dtype)
    if dt is not None and dt.kind not in "iu":
        raise TypeError(f"argsort: dtype must be an integer dtype, got {dt}")
    if not _descending("argsort", descending):
        ids = _sorting.argsort(x, ax)
    else:
        # A stable sort of the reversed array, read backwards: descending with ties in order.
        n = _aval("argsort", x).shape[ax]
        ids = _sorting.argsort(_shape.rev(x, (ax,)), ax)
        # (n - 1 as a Python scalar: weak, it goes to ids' device)
        ids = _shape.rev(_ew.sub(n - 1, ids), (ax,))
    return ids if dt is None else _cast(ids, dt)


def _descending(name: str, descending: Any) -> bool:
    if descending not in (True, False):
        raise TypeError(f"{name}: descending must be True or False, got {descending!r}")
    return bool(descending)


# ---------------------------------------------------------------------------------------------
# median, quantile, percentile


def _sorted_last(name: str, a: Any, axis: Any) -> tuple[Any, ShapedArray, tuple[int, ...]]:
    """(values sorted along one merged last axis, aval of ``a``, reduced axes)."""
    x = _asarray(a)
    av = _aval(name, x)
    axes = _axes(name, axis, av.ndim, scalar_axis=False)
    if av.dtype == _BOOL and name in ("quantile", "percentile"):
        raise TypeError(f"{name}: boolean input is not supported (as in NumPy)")
    if av.dtype.kind in "biu":
        x = _cast(x, _F64)
    elif av.dtype.kind == "c" and name in ("quantile", "percentile"):
        raise TypeError(f"{name}: complex input is not supported (as in NumPy)")
    xs = _to_last(x, axes) if av.ndim else _shape.reshape(x, (1,))
    return _sorting.sort(xs, -1), av, axes


def _nan_propagate(result: Any, s: Any, n: int) -> Any:
    """NaN where the sorted slice ends in a NaN (NumPy's median/quantile NaN rule)."""
    if not _is_inexact(get_aval(s)) or n == 0:
        return result
    last = _drop_last(_take_last(s, [n - 1]))
    bad = _isnan(last)
    ra, ba = get_aval(result), get_aval(bad)
    if ra.ndim > ba.ndim:
        bad = _shape.broadcast_in_dim(bad, ra.shape, tuple(range(ra.ndim - ba.ndim, ra.ndim)))
    return _where(bad, numpy.nan, result)


def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Any:
    """Median over ``axis`` (``numpy.median``): the mean of the two middle values when even.

    NaN when the slice holds a NaN, as in NumPy.

    Example:
        >>> import numpy as np
        >>> median(np.array([[3., 1., 2., 10.]]), axis=1)
        array([2.5])
    """
    _unsupported("median", out=out)
    s, av, axes = _sorted_last("median", a, axis)
    n = get_aval(s).shape[-1]
    if n == 0:
        return mean(a, axis=axis, keepdims=keepdims)
    if n % 2:
        r = _drop_last(_take_last(s, [n // 2]))
    else:
        pair = _take_last(s, [n // 2 - 1, n // 2])
        r = _ew.div(_rsum(pair, (get_aval(pair).ndim - 1,)), 2)
    r = _nan_propagate(r, s, n)
    if av.dtype == _F16:
        r = _cast(r, _F16)
    return _keep(r, av.shape, axes, keepdims)


# NumPy's quantile methods (Hyndman & Fan 1996 and NumPy's older ones). The continuous ones
# map to (alpha, beta) of the virtual index n*q + alpha + q*(1 - alpha - beta) - 1.
_QUANTILE_METHODS = (
    "inverted_cdf", "averaged_inverted_cdf", "closest_observation",
    "interpolated_inverted_cdf", "hazen", "weibull", "linear", "median_unbiased",
    "normal_unbiased", "lower", "higher", "midpoint", "nearest",
)
_ALPHA_BETA = {
    "interpolated_inverted_cdf": (0, 1), "hazen": (0.5, 0.5), "weibull": (0, 0),
    "median_unbiased": (1 / 3.0, 1 / 3.0), "normal_unbiased": (3 / 8.0, 3 / 8.0),
}
# Methods whose interpolation weight moves with q (so a traced q gets a derivative).
_SMOOTH_IN_Q = ("linear", *_ALPHA_BETA)
# Methods that pick one order statistic (an integer virtual index, no interpolation).
_DISCRETE = ("inverted_cdf", "closest_observation", "lower", "higher", "nearest")


def _to_boundaries(index: Any, take_previous: Any, xp: Any = numpy) -> numpy.ndarray:
    previous = xp.floor(index)
    cond = take_previous(index - previous, index)
    res = xp.where(cond, previous, previous + 1).astype(numpy.intp)
    return xp.maximum(res, 0)


def _virtual_index(method: str, n: int, q: numpy.ndarray, xp: Any = numpy) -> numpy.ndarray:
    """NumPy's virtual index of each quantile, computed as NumPy does (in q's dtype).

    ``xp`` may be ``funcgrad.numpy``, for a traced ``q`` or per-slice count ``n`` (an array
    broadcasting against ``q``, in q's dtype when that is floating, as a Python int would be).
    """
    if method == "linear":
        v = (n - 1) * q
    elif method in _ALPHA_BETA:
        alpha, beta = _ALPHA_BETA[method]
        v = n * q + (alpha + q * (1 - alpha - beta)) - 1
    elif method == "lower":
        v = xp.floor((n - 1) * q).astype(numpy.intp)
    elif method == "higher":
        v = xp.ceil((n - 1) * q).astype(numpy.intp)
    elif method == "nearest":
        v = xp.around((n - 1) * q).astype(numpy.intp)
    elif method == "midpoint":
        v = 0.5 * (xp.floor((n - 1) * q) + xp.ceil((n - 1) * q))
    elif method == "averaged_inverted_cdf":
        v = n * q - 1
    elif method == "inverted_cdf":
        v = _to_boundaries(n * q - 1, lambda g, _: g == 0, xp)
    else:  # closest_observation: the nearest even order statistic (1-based) at g == 0
        v = _to_boundaries(n * q - 1 - 0.5,
                           lambda g, i: (g == 0) & (xp.floor(i) % 2 == 1), xp)
    return xp.asarray(v)


def _neighbours_and_gamma(method: str, n: int, v: numpy.ndarray, xp: Any = numpy):
    """(previous index, next index, gamma) as NumPy's ``_get_indexes`` / ``_get_gamma``.

    Out-of-range virtual indices clamp to the first/last element; as in NumPy, gamma is then
    measured from the clamped index (it only ever multiplies a zero difference there).
    ``xp`` and ``n`` as for :func:`_virtual_index`.
    """
    prev = xp.floor(v)
    nxt = prev + 1
    above = v >= n - 1
    prev, nxt = xp.where(above, -1, prev), xp.where(above, -1, nxt)
    below = v < 0
    prev, nxt = xp.where(below, 0, prev), xp.where(below, 0, nxt)
    prev, nxt = prev.astype(numpy.intp), nxt.astype(numpy.intp)
    gamma = xp.asarray(v - prev)
    if method == "averaged_inverted_cdf":
        gamma = xp.where(gamma == 0, 0.5, 1.0)
    elif method == "midpoint":
        gamma = xp.where(v % 1 == 0, 0.0, 0.5)
    return prev, nxt, xp.asarray(gamma, dtype=v.dtype)


def _traced_virtual_index(method: str, n: int, q: Any, qa: ShapedArray, scale: float,
                          qdt: numpy.dtype) -> Any:
    """The virtual index of a traced ``q`` (continuous methods), so gamma has a derivative."""
    if scale != 1:
        q = _ew.div(q, scale)
    if not qa.weak_type:
        q = _cast(q, qdt)
    if method == "linear":
        return _ew.mul(q, n - 1)
    alpha, beta = _ALPHA_BETA[method]
    return _ew.sub(_ew.add(_ew.mul(q, n), _ew.add(alpha, _ew.mul(q, 1 - alpha - beta))), 1)


def _weights_for(name: str, w: Any, av: ShapedArray, axis: Any, axes: tuple[int, ...]) -> Any:
    """``weights`` broadcast to ``a``'s shape, checked as NumPy's ``_weights_are_valid``."""
    wa = _aval(name, w)
    if wa.shape != av.shape:
        if axis is None:
            raise TypeError(
                f"{name}: axis must be specified when shapes of a and weights differ"
            )
        given = [int(ax) % av.ndim for ax in (axis if isinstance(axis, list | tuple)
                                              else (axis,))]
        if wa.shape != tuple(av.shape[ax] for ax in given):
            raise ValueError(
                f"{name}: shape of weights {wa.shape} must be consistent with the shape of a "
                f"{av.shape} along axis {axis}"
            )
        w = _shape.transpose(w, tuple(int(i) for i in numpy.argsort(given)))
        w = _shape.broadcast_in_dim(w, av.shape, axes)
    val = w.to_concrete_value() if isinstance(w, Tracer) else w
    if val is not None and bool((val < 0).any()):
        raise ValueError(f"{name}: weights must be non-negative")
    return w


def _weighted_inverted_cdf(name: str, x: Any, w: Any, av: ShapedArray, axes: tuple[int, ...],
                           qh: numpy.ndarray) -> tuple[Any, Any]:
    """(sorted values, the weighted inverted-CDF quantiles as ``(..., K)``), as NumPy."""
    if av.ndim:
        xs, ws = _to_last(x, axes), _to_last(w, axes)
    else:
        xs, ws = _shape.reshape(x, (1,)), _shape.reshape(w, (1,))
    s, ws = _sorting.sort([xs, ws], -1, True, 1)
    n = get_aval(s).shape[-1]
    if n == 0:
        raise IndexingError(f"{name}: cannot take a quantile of an empty slice")
    cdf = _red.cumsum(_cast(ws, _F64), get_aval(ws).ndim - 1)
    total = _take_last(cdf, [n - 1])
    val = total.to_concrete_value() if isinstance(total, Tracer) else total
    if val is not None and not bool(fnp.isfinite(val).all()) or (
            val is not None and bool((val == 0).any())):
        raise ValueError(f"{name}: weights included NaN, inf or were all zero")
    cdf = _ew.div(cdf, total)
    if qh.dtype.kind == "f":
        cdf = _cast(cdf, qh.dtype)
    # Leading zero weights: the first quantile must skip them (NumPy sets zeros of the CDF
    # to -1 so that searchsorted passes over them).
    cdf = _where(fnp.equal(cdf, 0), -1, cdf)
    qc = _const(get_aval(s), qh.ravel())
    # searchsorted(cdf, q, side='left') == the number of CDF entries below q
    below = fnp.less(fnp.expand_dims(cdf, -1), qc)
    idx = _rsum(below, (get_aval(below).ndim - 2,))
    idx = fnp.minimum(idx, n - 1)
    return s, _sorting.gather_along_axis(s, idx, get_aval(s).ndim - 1)


def _take_traced_last(s: Any, idx: Any) -> Any:
    """``s[..., idx[..., j]]`` for traced int ``idx`` of shape ``s.shape[:-1] + (J,)``."""
    return _sorting.gather_along_axis(s, idx, get_aval(s).ndim - 1)


def _nan_quantile_sorted(s: Any, k: Any, q: Any, qa: ShapedArray, qh: numpy.ndarray,
                         method: str, scale: float) -> Any:
    """Quantiles ``(..., K)`` of the first ``k`` (traced, per slice) entries of each sorted
    slice of ``s``, with NumPy's arithmetic: the virtual index is computed in q's dtype, with
    the count standing in for NumPy's Python-int slice length."""
    sa = get_aval(s)
    if isinstance(q, Tracer):
        # (the derivative in q flows through the virtual index)
        qv = fnp.divide(q, scale) if scale != 1 else q
        qv = _shape.reshape(_cast(qv, qh.dtype), (qh.size,))
    else:
        qv = _const(sa, qh.ravel())
    nv = fnp.expand_dims(k, -1)
    if qh.dtype.kind == "f":
        nv = _cast(nv, qh.dtype)
    last = fnp.expand_dims(fnp.maximum(fnp.subtract(k, 1), 0), -1)
    v = _virtual_index(method, nv, qv, fnp)
    if method in _DISCRETE or method == "linear" and qh.dtype.kind in "iub":
        # One order statistic, in the data's dtype (NumPy's `take` path).
        return _take_traced_last(s, fnp.clip(v, 0, last))
    prev, nxt, gamma = _neighbours_and_gamma(method, nv, v, fnp)
    # -1 means the last valid element (NaNs sort after it); all-NaN slices pick anything.
    prev = fnp.where(fnp.less(prev, 0), last, prev)
    nxt = fnp.where(fnp.less(nxt, 0), last, nxt)
    a_lo, a_hi = _take_traced_last(s, prev), _take_traced_last(s, nxt)
    diff = fnp.subtract(a_hi, a_lo)
    if qa.weak_type and qh.ndim == 0:
        # NumPy makes gamma a Python float here: the result keeps the data's dtype, and
        # 1 - gamma is taken in double before rounding to it.
        # (integer and boolean data interpolate in float64, as NumPy)
        dt = sa.dtype if sa.dtype.kind in "fc" else _F64
        g, one_minus = _cast(gamma, dt), _cast(fnp.subtract(1, gamma), dt)
    else:
        g, one_minus = gamma, fnp.subtract(1, gamma)
    low_form = fnp.add(a_lo, fnp.multiply(diff, g))
    high_form = fnp.subtract(a_hi, fnp.multiply(diff, one_minus))
    return fnp.where(fnp.greater_equal(gamma, 0.5), high_form, low_form)


def _traced_q(q: Any) -> bool:
    """Whether ``q`` is known only at run time (a traced value without a concrete one)."""
    return isinstance(q, Tracer) and q.to_concrete_value() is None


def _checked_quantiles(name: str, q: Any, scale: float) -> tuple[Any, Any, numpy.ndarray]:
    """``q`` as an array, its aval and its concrete values divided by ``scale`` (100 for
    percentiles), checked as NumPy checks them. A ``q`` known only at run time (under
    ``jit``, batched by ``vmap``) cannot be checked: its stand-in has its shape and dtype
    (that of ``q / scale``), and the quantiles are computed from the traced value."""
    q = _asarray(q)
    qa = _aval(name, q)
    if _traced_q(q):
        if qa.ndim > 1:
            raise ValueError(f"{name}: q must be a scalar or 1d")
        dt = qa.dtype if scale == 1 and qa.dtype.kind == "f" else numpy.true_divide(
            numpy.zeros((), qa.dtype), scale).dtype
        return q, qa, numpy.zeros(qa.shape, dt)
    qh = numpy.asarray(to_numpy(concrete_or_error(q, f"{name}: the quantile q")))
    if scale != 1:
        qh = numpy.asarray(numpy.true_divide(qh, scale))
    if qh.size and not (numpy.all(qh >= 0) and numpy.all(qh <= 1)):
        what = "Percentiles must be in the range [0, 100]" if scale == 100 else (
            "Quantiles must be in the range [0, 1]")
        raise ValueError(f"{name}: {what}")
    if qh.ndim > 2:
        raise ValueError(f"{name}: q must be a scalar or 1d")
    return q, qa, qh


def _quantile(name: str, a: Any, q: Any, axis: Any, method: str, keepdims: bool,
              scale: float, weights: Any = None) -> Any:
    if not isinstance(method, str) or method not in _QUANTILE_METHODS:
        raise ValueError(
            f"{name}: {method!r} is not a valid method. Use one of: "
            + ", ".join(repr(m) for m in _QUANTILE_METHODS)
        )
    x = _asarray(a)
    av = _aval(name, x)
    if av.dtype.kind == "c":
        raise TypeError(f"{name}: complex input is not supported (as in NumPy)")
    q, qa, qh = _checked_quantiles(name, q, scale)
    axes = _axes(name, axis, av.ndim, scalar_axis=False)
    if weights is not None:
        if method != "inverted_cdf":
            raise ValueError(
                f"{name}: only method 'inverted_cdf' supports weights, got method={method!r}"
            )
        w = _weights_for(name, _const(av, numpy.asarray(weights))
                         if isinstance(weights, list | tuple) and not _needs_stacking(weights)
                         else _asarray(weights), av, axis, axes)
        concrete_or_error(q, f"{name}: the quantile q (with weights)")
        s, r = _weighted_inverted_cdf(name, x, w, av, axes, qh)
        n = get_aval(s).shape[-1]
    elif _traced_q(q):
        # q known at run time only: NumPy's arithmetic on the traced q (JAX traces q too)
        xs = _to_last(x, axes) if av.ndim else _shape.reshape(x, (1,))
        s = _sorting.sort(xs, -1)
        sa = get_aval(s)
        n = sa.shape[-1]
        if n == 0:
            raise IndexingError(f"{name}: cannot take a quantile of an empty slice")
        if sa.dtype == _BOOL and method not in _DISCRETE:
            raise TypeError(f"{name}: boolean input is not supported with method={method!r} "
                            "(NumPy cannot subtract booleans)")
        count = _const(sa, numpy.full(sa.shape[:-1], n, numpy.intp))
        r = _nan_quantile_sorted(s, count, q, qa, qh, method, scale)
    else:
        xs = _to_last(x, axes) if av.ndim else _shape.reshape(x, (1,))
        s = _sorting.sort(xs, -1)
        sa = get_aval(s)
        n = sa.shape[-1]
        if n == 0:
            # (an IndexError as in NumPy, and a ValueError as it is one)
            raise IndexingError(f"{name}: cannot take a quantile of an empty slice")
        v = _virtual_index(method, n, qh)
        if method in _DISCRETE or method == "linear" and v.dtype.kind in "iu":
            # One order statistic per quantile, in the data's own dtype (ints stay ints).
            r = _take_last(s, v.ravel())
        else:
            if sa.dtype == _BOOL:
                raise TypeError(
                    f"{name}: boolean input is not supported with method={method!r} "
                    "(NumPy cannot subtract booleans)"
                )
            prev, nxt, gamma = _neighbours_and_gamma(method, n, v)
            a_lo = _take_last(s, (prev % n).ravel())
            a_hi = _take_last(s, (nxt % n).ravel())
            weak_q = qa.weak_type and qh.ndim == 0
            if isinstance(q, Tracer) and method in _SMOOTH_IN_Q:
                # Same arithmetic as NumPy's, on the traced q: a derivative in q for free.
                vt = _traced_virtual_index(method, n, q, qa, scale, v.dtype)
                g = _ew.sub(vt, int(prev) if prev.ndim == 0 else _const(sa, prev))
                if not weak_q:
                    g = _shape.reshape(_cast(g, gamma.dtype), (gamma.size,))
            elif weak_q:
                g = float(gamma)
            else:
                g = _const(sa, gamma.ravel())
            diff = _ew.sub(a_hi, a_lo)
            low_form = _ew.add(a_lo, _ew.mul(diff, g))
            # (a Python gamma stays a Python float: an eager 1 - gamma would be a strong
            # float64)
            one_minus = 1.0 - g if isinstance(g, float) else _ew.sub(1, g)
            high_form = _ew.sub(a_hi, _ew.mul(diff, one_minus))
            if gamma.ndim == 0:
                r = high_form if gamma >= 0.5 else low_form
            else:
                r = _where(_const(sa, (gamma >= 0.5).ravel()), high_form, low_form)
    # (..., K) -> q.shape + (...)
    r = _shape.moveaxis(r, -1, 0)
    rest = get_aval(r).shape[1:]
    r = _shape.reshape(r, qh.shape + rest)
    r = _nan_propagate(r, s, n)
    if keepdims:
        r = _shape.reshape(r, qh.shape + tuple(1 if i in axes else d
                                               for i, d in enumerate(av.shape)))
    return r


def quantile(
    a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
    method: str = "linear", keepdims: bool = False, *, weights: Any = None,
    interpolation: Any = None,
) -> Any:
    """The ``q``-th quantiles over ``axis`` (``numpy.quantile``), with every NumPy ``method``.

    ``q`` (in [0, 1]) may be traced (under ``jit``, batched by ``vmap``, differentiated, as
    in JAX; its range is then unchecked); the result has ``q``'s shape in front. ``weights``
    (``method='inverted_cdf'`` only, as in NumPy) have ``a``'s shape or the shape of the
    reduced axes. Discrete methods ('lower', 'nearest', 'inverted_cdf', ...) keep integer
    input integer, as NumPy does.

    Example:
        >>> import numpy as np
        >>> float(quantile(np.array([1., 2., 3., 4.]), 0.5))
        2.5
        >>> quantile(np.array([1, 2, 3, 4]), [0.3, 0.5], method="lower")
        array([1, 2])
    """
    _unsupported("quantile", out=out)
    return _quantile("quantile", a, q, axis, interpolation or method, keepdims, 1.0, weights)


@with_out_sharding
def percentile(
    a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
    method: str = "linear", keepdims: bool = False, *, weights: Any = None,
    interpolation: Any = None,
) -> Any:
    """The ``q``-th percentiles over ``axis`` (``numpy.percentile``); see :func:`quantile`.

    Example:
        >>> import numpy as np
        >>> percentile(np.array([1., 2., 3., 4.]), [0, 100])
        array([1., 4.])
        >>> float(percentile(np.array([1., 2., 3., 4.]), 50, method="hazen"))
        2.5
    """
    _unsupported("percentile", out=out)
    return _quantile("percentile", a, q, axis, interpolation or method, keepdims, 100.0,
                     weights)


# ---------------------------------------------------------------------------------------------
# average


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *,
            keepdims: bool = False) -> Any:
    """(Weighted) average over ``axis`` (``numpy.average``); ``returned`` adds the weight sum.

    Example:
        >>> import numpy as np
        >>> float(average(np.array([1., 2., 4.]), weights=np.array([1., 1., 2.])))
        2.75
    """
    if (isinstance(a, list | tuple) and not _needs_stacking(a) and weights is not None
            and not isinstance(weights, list | tuple)):
        x = _const(_aval("average", weights), numpy.asarray(a))  # on the weights' device
    else:
        x = _asarray(a)
    av = _aval("average", x)
    axes = _axes("average", axis, av.ndim, scalar_axis=False)
    if weights is None:
        avg = mean(x, axis=axes, keepdims=keepdims)
        aa = get_aval(avg)
        scl = aa.dtype.type(av.size / aa.size)  # (ZeroDivisionError when empty, as NumPy)
        if returned:
            xp = xp_for_device(aa.device or get_default_device())
            return avg, xp.full(aa.shape, scl, dtype=aa.dtype)
        return avg
    # Python-data weights go where the array is (and an array `a` from Python data goes
    # where the weights are).
    w = (_const(av, numpy.asarray(weights)) if isinstance(weights, list | tuple)
         and not _needs_stacking(weights) else _asarray(weights))
    wa = _aval("average", w)
    if av.dtype.kind in "biu":
        rdt = numpy.result_type(av.dtype, wa.dtype, _F64)
    else:
        rdt = numpy.result_type(av.dtype, wa.dtype)
    if wa.shape != av.shape:
        if axis is None:
            raise TypeError(
                "average: axis must be specified when shapes of a and weights differ"
            )
        if wa.shape != tuple(av.shape[i] for i in axes):
            raise ValueError(
                f"average: shape of weights {wa.shape} must be consistent with the shape "
                f"of a {av.shape} along axis {axis}"
            )
        w = _shape.broadcast_in_dim(w, av.shape, axes)
    w = _cast(w, rdt)
    scl = _rsum(w, axes)
    _check_nonzero_weights(scl)
    avg = _ew.div(_rsum(_ew.mul(_cast(x, rdt), w), axes), scl)
    avg = _keep(avg, av.shape, axes, keepdims)
    if returned:
        scl = _keep(scl, av.shape, axes, keepdims)
        return avg, scl
    return avg


def _check_nonzero_weights(scl: Any) -> None:
    val = scl.to_concrete_value() if isinstance(scl, Tracer) else scl
    if val is None:
        return  # traced without a value (jit, vmap): cannot check
    if bool((val == 0).any()) if hasattr(val, "any") else val == 0:
        raise ZeroDivisionError("average: weights sum to zero, can't be normalized")


# ---------------------------------------------------------------------------------------------
# NaN-ignoring reductions


def nansum(
    a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
    initial: Any = None, where: Any = None,
) -> Any:
    """Sum treating NaN as zero (``numpy.nansum``).

    Example:
        >>> import numpy as np
        >>> float(nansum(np.array([1., np.nan, 2.])))
        3.0
    """
    x = _asarray(a)
    if _is_inexact(_aval("nansum", x)):
        x = _where(_isnan(x), 0, x)
    return _sum_like("nansum", _red.reduce_sum_p, x, axis, dtype, out, keepdims, initial, where)


def nanprod(
    a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
    initial: Any = None, where: Any = None,
) -> Any:
    """Product treating NaN as one (``numpy.nanprod``).

    Example:
        >>> import numpy as np
        >>> float(nanprod(np.array([3., np.nan, 2.])))
        6.0
    """
    x = _asarray(a)
    if _is_inexact(_aval("nanprod", x)):
        x = _where(_isnan(x), 1, x)
    return _sum_like("nanprod", _red.reduce_prod_p, x, axis, dtype, out, keepdims, initial, where)


def nanmean(
    a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
    *, where: Any = None,
) -> Any:
    """Mean ignoring NaNs (``numpy.nanmean``); NaN for all-NaN slices.

    Example:
        >>> import numpy as np
        >>> float(nanmean(np.array([1., np.nan, 2.])))
        1.5
    """
    _unsupported("nanmean", out=out)
    x = _asarray(a)
    av = _aval("nanmean", x)
    if not _is_inexact(av):
        return mean(x, axis, dtype, keepdims=keepdims, where=where)
    axes = _axes("nanmean", axis, av.ndim)
    _inexact_dtype_arg("nanmean", dtype)
    x = _mask_as_nan("nanmean", x, where, av)
    nanmask = _isnan(x)
    tot = nansum(x, axis=axes, dtype=dtype)
    cnt = _rsum(nanmask, axes)
    cnt = _cast(_ew.sub(_size(av.shape, axes), cnt), get_aval(tot).dtype)
    empty = _ew.eq(cnt, 0)
    _warn_if_any(empty, "Mean of empty slice", stacklevel=3)
    return _keep(_div_or_nan(tot, cnt, empty), av.shape, axes, keepdims)


def _mask_as_nan(name: str, x: Any, where: Any, av: ShapedArray) -> Any:
    """Masked-out elements as NaN: the NaN-ignoring reductions then skip them, as NumPy's
    ``where=`` does."""
    mask = _mask(name, where, av)
    return x if mask is None else _where(mask, x, numpy.nan)


def _inexact_dtype_arg(name: str, dtype: Any) -> numpy.dtype | None:
    """``dtype=`` of a NaN-ignoring statistic of an inexact array: NumPy demands an inexact
    one."""
    dt = _dtype_arg(name, dtype)
    if dt is not None and dt.kind not in "fc":
        raise TypeError(f"{name}: if a is inexact, then dtype must be inexact, got {dt}")
    return dt


def _nan_var(name, a, axis, dtype, out, ddof, keepdims, where, mean_arg):
    _unsupported(name, out=out)
    x = _asarray(a)
    av = _aval(name, x)
    if not _is_inexact(av):
        return _var(name, x, axis, dtype, None, ddof, keepdims, where, mean_arg)
    axes = _axes(name, axis, av.ndim)
    dt = _inexact_dtype_arg(name, dtype)
    x = _mask_as_nan(name, x, where, av)
    nanmask = _isnan(x)
    x0 = _where(nanmask, 0, x)
    cnt = _rsum(nanmask, axes)
    cnt = _ew.sub(_size(av.shape, axes), cnt)
    # NumPy's algorithm: the deviations are stored in the input's dtype (an in-place
    # subtract); only the mean's and the squares' sums are taken in ``dtype``, which is also
    # the result's dtype when given (complex too, for real input).
    if mean_arg is not None:
        dev = _cast(_ew.sub(x0, _asarray(mean_arg)), av.dtype)
        if get_aval(dev).shape != av.shape:
            raise ShapeError(
                f"{name}: mean= of shape {_aval(name, mean_arg).shape} does not broadcast "
                f"to the input's shape {av.shape} (give it keepdims=True's shape)"
            )
    else:
        tot = _rsum(x0 if dt is None else _cast(x0, dt), axes)
        m = _cast(_div_or_nan(tot, cnt, _ew.eq(cnt, 0)), get_aval(tot).dtype)
        dev = _cast(_ew.sub(x0, _expand(m, av.shape, axes)), av.dtype)
    sq = _abs2(_where(nanmask, 0, dev))
    if dt is not None:
        sq = _cast(sq, dt)
    rdt = get_aval(sq).dtype
    dof = _ew.sub(cnt, ddof)
    # NumPy: NaN wherever fewer than ddof + 1 values remain (never inf or a negative count),
    # with its one warning.
    few = fnp.less_equal(dof, 0)
    _warn_if_any(few, "Degrees of freedom <= 0 for slice.", stacklevel=4)
    r = _cast(_div_or_nan(_rsum(sq, axes), dof, few), rdt)
    return _keep(r, av.shape, axes, keepdims)


def nanvar(
    a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
    keepdims: bool = False, *, where: Any = None, mean: Any = None, correction: Any = None,
) -> Any:
    """Variance ignoring NaNs (``numpy.nanvar``).

    Example:
        >>> import numpy as np
        >>> float(nanvar(np.array([1., np.nan, 3.])))
        1.0
    """
    return _nan_var("nanvar", a, axis, dtype, out, _ddof("nanvar", ddof, correction),
                    keepdims, where, mean)


def nanstd(
    a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
    keepdims: bool = False, *, where: Any = None, mean: Any = None, correction: Any = None,
) -> Any:
    """Standard deviation ignoring NaNs (``numpy.nanstd``).

    Example:
        >>> import numpy as np
        >>> float(nanstd(np.array([1., np.nan, 3.])))
        1.0
    """
    v = _nan_var("nanstd", a, axis, dtype, out, _ddof("nanstd", ddof, correction), keepdims,
                 where, mean)
    return _sqrt_of_var("nanstd", v)


def _nan_extremum(name, reduce, a, axis, out, keepdims, initial, where, np_name, fill):
    x = _asarray(a)
    av = _aval(name, x)
    if not _is_inexact(av):
        return _extremum(name, reduce, x, axis, out, keepdims, initial, where, np_name)
    nanmask = _isnan(x)
    r = _extremum(name, reduce, _where(nanmask, fill, x), axis, out, keepdims, initial, where,
                  np_name)
    if initial is not None:
        return r  # NumPy: an all-NaN slice gives ``initial``, not NaN
    axes = _axes(name, axis, av.ndim)
    all_nan = _keep(bind1(_red.reduce_and_p, nanmask, axes=axes), av.shape, axes, keepdims)
    _warn_if_any(all_nan, "All-NaN slice encountered")
    return _where(all_nan, numpy.nan, r)


def nanmax(
    a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None,
    where: Any = None,
) -> Any:
    """Maximum ignoring NaNs (``numpy.nanmax``); NaN for all-NaN slices.

    Example:
        >>> import numpy as np
        >>> float(nanmax(np.array([1., np.nan, 2.])))
        2.0
    """
    return _nan_extremum("nanmax", _red.reduce_max_p, a, axis, out, keepdims, initial, where,
                         "maximum", -numpy.inf)


def nanmin(
    a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None,
    where: Any = None,
) -> Any:
    """Minimum ignoring NaNs (``numpy.nanmin``); NaN for all-NaN slices.

    Example:
        >>> import numpy as np
        >>> float(nanmin(np.array([1., np.nan, 2.])))
        1.0
    """
    return _nan_extremum("nanmin", _red.reduce_min_p, a, axis, out, keepdims, initial, where,
                         "minimum", numpy.inf)

