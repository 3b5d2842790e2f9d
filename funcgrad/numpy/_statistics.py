"""funcgrad.numpy: differences, integration, statistics, searching and binning (NumPy 2 API).

Everything here composes funcgrad primitives, so derivatives (to any order), ``vmap`` and
``jit`` come for free: ``diff``, ``gradient``, ``trapezoid``, ``interp``, ``convolve``, ``cov``
... differentiate with respect to every float input. Integer results (``searchsorted``,
``digitize``, ``lexsort``, ``argpartition``, counts) carry no derivative and are safe to use as
indices inside differentiated code.

``searchsorted`` is a stable sort of ``a`` and ``v`` together (so it traces under ``jit`` and
batches under ``vmap``). ``bincount`` needs a concrete ``x`` unless a static ``length=`` is given
(as in ``jax.numpy``); ``histogram`` with integer ``bins`` has a static shape and traces.

Example:
    >>> import numpy as np, funcgrad.numpy as fnp
    >>> fnp.diff(np.array([1., 4., 9., 16.]))
    array([3., 5., 7.])
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Sequence
from typing import Any

import numpy

import funcgrad.numpy as fnp
import funcgrad.ops.elementwise as _ew
import funcgrad.ops.shape as _shape
import funcgrad.ops.sorting as _sorting
from funcgrad.avals import ShapedArray, get_aval, result_dtype
from funcgrad.backend import device_of, get_default_device, operator_index, to_numpy, xp_for_device
from funcgrad.core import Tracer, concrete_or_error
from funcgrad.errors import AxisError
from funcgrad.numpy._creation import with_out_sharding
from funcgrad.numpy._linalg_ops import _pet_result
from funcgrad.numpy._reductions import (
    _QUANTILE_METHODS,
    _asarray,
    _axes,
    _axis1,
    _cast,
    _checked_quantiles,
    _keep,
    _nan_quantile_sorted,
    _quantile,
    _sorted_last,
    _take_traced_last,
    _unsupported,
    _weighted_inverted_cdf,
    _weights_for,
)
from funcgrad.ops.elementwise import stop_gradient

__all__ = [
    "diff", "ediff1d", "gradient", "trapezoid", "cumulative_sum", "cumulative_prod",
    "nancumsum", "nancumprod", "nanargmax", "nanargmin", "nanmedian", "nanquantile",
    "nanpercentile", "cov", "corrcoef", "interp", "convolve", "correlate", "searchsorted",
    "digitize", "bincount", "histogram", "histogram_bin_edges", "histogramdd", "histogram2d",
    "partition", "argpartition", "lexsort",
]

_F64 = numpy.dtype("float64")
_I64 = numpy.dtype("int64")
_BOOL = numpy.dtype("bool")


# ---------------------------------------------------------------------------------------------
# Helpers


def _arr(name: str, a: Any, like: Any = None) -> Any:
    """``a`` as an array or tracer. Python scalars and lists become arrays on ``like``'s
    device (the other operand's) when given, else on the default device."""
    if like is not None and (isinstance(a, list | tuple | int | float | complex | bool)
                             or isinstance(a, numpy.generic)):
        host = numpy.asarray(a)
        if host.dtype == object:
            raise TypeError(f"{name}: ragged nested sequences cannot become an array")
        return _const(like, host)
    a = _asarray(a)
    if not isinstance(a, Tracer) and not hasattr(a, "shape"):
        a = fnp.asarray(a)
    try:
        get_aval(a)
    except TypeError as e:
        raise TypeError(f"{name}: {e}") from None
    return a


def _ref(*vals: Any) -> Any:
    """The first array or tracer among ``vals`` (for :func:`_arr`'s ``like``: Python data
    among them goes to its device), else None."""
    return next((v for v in vals if isinstance(v, Tracer) or hasattr(v, "shape")), None)


def _av(x: Any) -> ShapedArray:
    return get_aval(x)


def _device_xp(like: Any) -> Any:
    a = get_aval(like)
    return xp_for_device(a.device or get_default_device())


def _iota(n: int, like: Any) -> Any:
    """int64 ``arange(n)`` on ``like``'s device (a constant: never traced)."""
    return _device_xp(like).arange(n, dtype=_I64)


def _const(like: Any, value: Any, dtype: Any = None) -> Any:
    return _device_xp(like).asarray(value, dtype=dtype)


def _sl(x: Any, start: int | None, stop: int | None, axis: int) -> Any:
    return _shape.slice_in_dim(x, start, stop, 1, axis)


def _along(v: Any, ndim: int, axis: int) -> Any:
    """A 1-d ``v`` reshaped to broadcast along ``axis`` of an ``ndim`` array."""
    shape = [1] * ndim
    shape[axis] = _av(v).shape[0]
    return _shape.reshape(v, tuple(shape))


def _concrete_value(x: Any) -> Any:
    """The host value of ``x`` when known (plain arrays, eager tracers), else None."""
    if isinstance(x, Tracer):
        v = x.to_concrete_value()
        return None if v is None else numpy.asarray(to_numpy(v))
    return numpy.asarray(to_numpy(x))


def _int_arg(name: str, what: str, v: Any) -> int:
    try:
        if isinstance(v, bool):
            raise TypeError
        return operator_index(concrete_or_error(v, f"{name}: {what}"))
    except TypeError:
        raise TypeError(f"{name}: {what} must be an integer, got {type(v).__name__}") from None


# ---------------------------------------------------------------------------------------------
# Differences and integration


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Any:
    """The ``n``-th discrete difference along ``axis`` (``numpy.diff``).

    ``prepend``/``append`` (scalars broadcast to one slab) are joined first; boolean input
    differences with ``!=`` as in NumPy. ``None`` means no prepend/append.

    Example:
        >>> import numpy as np
        >>> diff(np.array([1., 2., 4., 7.]), n=2)
        array([1., 1.])
    """
    n = _int_arg("diff", "n", n)
    if n < 0:
        raise ValueError(f"diff: order must be non-negative but got {n}")
    x = _arr("diff", a)
    if n == 0:  # NumPy's: the input itself, before any check (prepend/append unused)
        return x
    av = _av(x)
    if av.ndim == 0:
        raise ValueError("diff: diff requires input that is at least one dimensional")
    ax = _axis1("diff", axis, av.ndim)
    parts = []
    for extra in (prepend, append):
        if extra is None:
            parts.append(None)
            continue
        e = _arr("diff", extra, x)
        if _av(e).ndim == 0:
            shape = list(av.shape)
            shape[ax] = 1
            e = fnp.broadcast_to(e, tuple(shape))
        parts.append(e)
    if parts[0] is not None or parts[1] is not None:
        seq = [p for p in (parts[0], x, parts[1]) if p is not None]
        x = fnp.concatenate(seq, axis=ax)
    if n == 0:
        return x
    op = fnp.not_equal if _av(x).dtype == _BOOL else fnp.subtract
    for _ in range(n):
        length = _av(x).shape[ax]
        if length == 0:
            break
        x = op(_sl(x, 1, None, ax), _sl(x, 0, length - 1, ax))
    return x


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    """Differences of consecutive elements of the flattened ``ary`` (``numpy.ediff1d``).

    ``to_begin``/``to_end`` are flattened and joined; the result keeps ``ary``'s dtype.

    Example:
        >>> import numpy as np
        >>> ediff1d(np.array([1, 2, 4, 7]), to_begin=-99)
        array([-99,   1,   2,   3])
    """
    # Python values follow whichever argument is an array (a device to_end with a scalar ary)
    like = next((a for a in (ary, to_begin, to_end)
                 if isinstance(a, Tracer) or device_of(a) is not None), None)
    x = fnp.ravel(_arr("ediff1d", ary, like))
    dt = _av(x).dtype
    # NumPy subtracts (so bools raise its TypeError, where diff would compare them)
    out = fnp.subtract(x[1:], x[:-1])
    parts = []
    for name, extra in (("to_begin", to_begin), ("to_end", to_end)):
        if extra is None:
            parts.append(None)
            continue
        e = fnp.ravel(_arr("ediff1d", extra, x))
        if not numpy.can_cast(_av(e).dtype, dt, "same_kind"):
            raise TypeError(f"ediff1d: dtype of `{name}` must be compatible with input `ary` "
                            f"under the `same_kind` rule.")
        parts.append(_cast(e, dt))
    seq = [p for p in (parts[0], out, parts[1]) if p is not None]
    return fnp.concatenate(seq) if len(seq) > 1 else out


def _spacing(name: str, d: Any, n: int, like: Any = None) -> tuple[Any, bool]:
    """(spacing, uniform): a scalar step, or the 1-d differences of coordinates (Python
    data made on ``like``'s device)."""
    if isinstance(d, int | float) and not isinstance(d, bool):
        return d, True
    d = _arr(name, d, like if isinstance(d, list | tuple) else None)
    da = _av(d)
    if da.ndim == 0:
        return d, True
    if da.ndim != 1:
        raise ValueError(f"{name}: distances must be either scalars or 1d")
    if da.shape[0] != n:
        raise ValueError(f"{name}: when 1d, distances must match the length of the "
                         "corresponding dimension")
    if da.dtype.kind in "biu":
        d = _cast(d, _F64)
    dx = diff(d)
    host = _concrete_value(dx)
    # As NumPy: equally spaced coordinates use the (better conditioned) uniform formulas.
    if host is not None and host.size and bool((host == host[0]).all()):
        return fnp.take(dx, 0), True
    return dx, False


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """The gradient of sampled ``f`` by central differences (``numpy.gradient``).

    ``varargs`` give the spacing: one scalar for all axes, or one scalar or 1-d coordinate
    array per axis. ``edge_order`` 1 or 2 sets the one-sided accuracy at the boundaries. One
    axis gives an array, several a tuple; differentiable in ``f`` and in the spacing.

    Example:
        >>> import numpy as np
        >>> gradient(np.array([1., 2., 4., 7., 11.]))
        array([1. , 1.5, 2.5, 3.5, 4. ])
    """
    # Python data f goes where an array spacing is (as the other Python arguments do)
    fx = _arr("gradient", f, _ref(*varargs))
    fa = _av(fx)
    nd = fa.ndim
    if nd == 0:  # (NumPy's words: a 0-d array has no axis to differentiate along)
        raise ValueError("gradient: Shape of array too small to calculate a numerical "
                         "gradient, at least (edge_order + 1) elements are required.")
    axes = _axes("gradient", axis, nd, scalar_axis=False)
    if axis is not None and not isinstance(axis, list | tuple):
        axes = (axes[0],)
    elif axis is not None:
        axes = tuple(_axis1("gradient", a, nd) for a in axis)
    n_ax = len(axes)
    if len(varargs) == 0:
        spacings = [1.0] * n_ax
    elif len(varargs) == 1 and _av(_arr("gradient", varargs[0])).ndim == 0:
        spacings = [varargs[0]] * n_ax
    elif len(varargs) == n_ax:
        spacings = list(varargs)
    else:
        raise TypeError("gradient: invalid number of arguments")
    if edge_order not in (1, 2):
        raise ValueError("gradient: 'edge_order' greater than 2 not supported")
    if fa.dtype.kind == "b":
        raise TypeError("gradient: boolean input is not supported (NumPy subtracts its "
                        "values; cast it to a number first)")
    otype = fa.dtype if fa.dtype.kind in "fc" else _F64
    if fa.dtype != otype:
        fx = _cast(fx, otype)
    outs = []
    for ax, sp in zip(axes, spacings):
        n = fa.shape[ax]
        if n < edge_order + 1:
            raise ValueError(
                "gradient: Shape of array too small to calculate a numerical gradient, at "
                "least (edge_order + 1) elements are required."
            )
        dx, uniform = _spacing("gradient", sp, n, fx)
        fdev = _av(fx).device
        if isinstance(dx, int | float) and fdev is not None:
            # A Python step as a 0-d array of the result's dtype on f's device: 2.0 * dx
            # of two Python numbers would be a host array, which device values cannot meet.
            dx = xp_for_device(fdev).asarray(dx, dtype=otype)

        def s(i: int | None, j: int | None, ax: int = ax) -> Any:
            return _sl(fx, i, j, ax)

        if uniform:
            interior = fnp.divide(fnp.subtract(s(2, None), s(0, n - 2)), fnp.multiply(2.0, dx))
            if edge_order == 1:
                first = fnp.divide(fnp.subtract(s(1, 2), s(0, 1)), dx)
                last = fnp.divide(fnp.subtract(s(n - 1, n), s(n - 2, n - 1)), dx)
            else:
                first = fnp.add(fnp.add(fnp.multiply(fnp.divide(-1.5, dx), s(0, 1)),
                                        fnp.multiply(fnp.divide(2.0, dx), s(1, 2))),
                                fnp.multiply(fnp.divide(-0.5, dx), s(2, 3)))
                last = fnp.add(fnp.add(fnp.multiply(fnp.divide(0.5, dx), s(n - 3, n - 2)),
                                       fnp.multiply(fnp.divide(-2.0, dx), s(n - 2, n - 1))),
                               fnp.multiply(fnp.divide(1.5, dx), s(n - 1, n)))
        else:
            dx1, dx2 = _sl(dx, 0, n - 2, 0), _sl(dx, 1, n - 1, 0)
            tot = fnp.add(dx1, dx2)
            ca = fnp.divide(fnp.negative(dx2), fnp.multiply(dx1, tot))
            cb = fnp.divide(fnp.subtract(dx2, dx1), fnp.multiply(dx1, dx2))
            cc = fnp.divide(dx1, fnp.multiply(dx2, tot))
            ca, cb, cc = (_along(c, nd, ax) for c in (ca, cb, cc))
            interior = fnp.add(fnp.add(fnp.multiply(ca, s(0, n - 2)),
                                       fnp.multiply(cb, s(1, n - 1))),
                               fnp.multiply(cc, s(2, None)))
            if edge_order == 1:
                first = fnp.divide(fnp.subtract(s(1, 2), s(0, 1)), fnp.take(dx, 0))
                last = fnp.divide(fnp.subtract(s(n - 1, n), s(n - 2, n - 1)),
                                  fnp.take(dx, n - 2))
            else:
                d1, d2 = fnp.take(dx, 0), fnp.take(dx, 1)
                t = fnp.add(d1, d2)
                ca = fnp.negative(fnp.divide(fnp.add(fnp.multiply(2.0, d1), d2),
                                             fnp.multiply(d1, t)))
                cb = fnp.divide(t, fnp.multiply(d1, d2))
                cc = fnp.negative(fnp.divide(d1, fnp.multiply(d2, t)))
                first = fnp.add(fnp.add(fnp.multiply(ca, s(0, 1)), fnp.multiply(cb, s(1, 2))),
                                fnp.multiply(cc, s(2, 3)))
                d1, d2 = fnp.take(dx, n - 3), fnp.take(dx, n - 2)
                t = fnp.add(d1, d2)
                ca = fnp.divide(d2, fnp.multiply(d1, t))
                cb = fnp.negative(fnp.divide(t, fnp.multiply(d1, d2)))
                cc = fnp.divide(fnp.add(fnp.multiply(2.0, d2), d1), fnp.multiply(d2, t))
                last = fnp.add(fnp.add(fnp.multiply(ca, s(n - 3, n - 2)),
                                       fnp.multiply(cb, s(n - 2, n - 1))),
                               fnp.multiply(cc, s(n - 1, n)))
        g = fnp.concatenate([_cast(first, otype), _cast(interior, otype), _cast(last, otype)],
                            axis=ax)
        outs.append(g)
    return outs[0] if n_ax == 1 else tuple(outs)


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """Integral of ``y`` along ``axis`` by the trapezoidal rule (``numpy.trapezoid``).

    Samples sit at ``x`` (1-d along ``axis``, or ``y``'s shape) or ``dx`` apart.

    Example:
        >>> import numpy as np
        >>> float(trapezoid(np.array([1., 2., 3.]), x=np.array([0., 1., 3.])))
        6.5
    """
    yy = _arr("trapezoid", y, _ref(x, dx))
    ya = _av(yy)
    if ya.ndim == 0:
        raise ValueError("trapezoid: y must be at least one dimensional")
    ax = _axis1("trapezoid", axis, ya.ndim)
    if x is None:
        d = dx
    else:
        xx = _arr("trapezoid", x, yy)
        xa = _av(xx)
        if xa.ndim == 1:
            if xa.shape[0] != ya.shape[ax]:
                raise ValueError(f"trapezoid: x of length {xa.shape[0]} does not match y's "
                                 f"length {ya.shape[ax]} along axis {axis}")
            d = _along(diff(xx), ya.ndim, ax)
        else:
            d = diff(xx, axis=ax)
    n = ya.shape[ax]
    if n == 0:
        mid = _sl(yy, 0, 0, ax)
    else:
        mid = fnp.add(_sl(yy, 1, None, ax), _sl(yy, 0, n - 1, ax))
    return fnp.sum(fnp.divide(fnp.multiply(d, mid), 2.0), axis=ax)


# ---------------------------------------------------------------------------------------------
# Cumulative functions


def _cumulative(name: str, fn: Any, init: int, x: Any, axis: Any, dtype: Any, out: Any,
                include_initial: bool) -> Any:
    _unsupported(name, out=out)
    a = _arr(name, x)
    av = _av(a)
    if av.ndim == 0:
        a = _shape.reshape(a, (1,))
        av = _av(a)
    if axis is None:
        if av.ndim > 1:
            raise ValueError(f"{name}: For arrays which have more than one dimension ``axis`` "
                             "argument is required.")
        axis = 0
    if type(axis) is tuple:
        # NumPy's (ufunc.accumulate's): a 1-tuple is its axis, more is a ValueError
        if len(axis) != 1:
            raise ValueError(f"{name}: accumulate does not allow multiple axes, got "
                             f"axis={axis}")
        (axis,) = axis
    ax = _axis1(name, axis, av.ndim)
    r = fn(a, axis=ax, dtype=dtype)
    if include_initial:
        shape = list(av.shape)
        shape[ax] = 1
        ra = _av(r)
        first = _device_xp(r).full(tuple(shape), init, dtype=ra.dtype)
        r = fnp.concatenate([first, r], axis=ax)
    return r


def cumulative_sum(x: Any, /, *, axis: Any = None, dtype: Any = None, out: Any = None,
                   include_initial: bool = False) -> Any:
    """Running sum along ``axis`` (``numpy.cumulative_sum``; ``axis`` needed above 1-d).

    ``include_initial`` starts the result with a 0 (one more element along ``axis``).

    Example:
        >>> import numpy as np
        >>> cumulative_sum(np.array([1, 2, 3]), include_initial=True)
        array([0, 1, 3, 6])
    """
    return _cumulative("cumulative_sum", fnp.cumsum, 0, x, axis, dtype, out, include_initial)


def cumulative_prod(x: Any, /, *, axis: Any = None, dtype: Any = None, out: Any = None,
                    include_initial: bool = False) -> Any:
    """Running product along ``axis`` (``numpy.cumulative_prod``; ``axis`` needed above 1-d).

    Example:
        >>> import numpy as np
        >>> cumulative_prod(np.array([[1., 2.], [3., 4.]]), axis=1)
        array([[ 1.,  2.],
               [ 3., 12.]])
    """
    return _cumulative("cumulative_prod", fnp.cumprod, 1, x, axis, dtype, out,
                       include_initial)


def nancumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """Running sum treating NaN as zero (``numpy.nancumsum``).

    Example:
        >>> import numpy as np
        >>> nancumsum(np.array([1., np.nan, 2.]))
        array([1., 1., 3.])
    """
    x = _arr("nancumsum", a)
    if _av(x).dtype.kind in "fc":
        x = fnp.where(fnp.isnan(x), 0, x)
    return fnp.cumsum(x, axis=axis, dtype=dtype, out=out)


def nancumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """Running product treating NaN as one (``numpy.nancumprod``).

    Example:
        >>> import numpy as np
        >>> nancumprod(np.array([2., np.nan, 3.]))
        array([2., 2., 6.])
    """
    x = _arr("nancumprod", a)
    if _av(x).dtype.kind in "fc":
        x = fnp.where(fnp.isnan(x), 1, x)
    return fnp.cumprod(x, axis=axis, dtype=dtype, out=out)


# ---------------------------------------------------------------------------------------------
# NaN-ignoring argmax/argmin, median and quantiles


def _nanarg(name: str, fn: Any, fill: float, a: Any, axis: Any, out: Any, keepdims: bool):
    _unsupported(name, out=out)
    x = _arr(name, a)
    av = _av(x)
    if av.dtype.kind not in "fc":
        return fn(x, axis=axis, keepdims=keepdims)
    mask = fnp.isnan(x)
    r = fn(fnp.where(mask, fill, x), axis=axis, keepdims=keepdims)
    all_nan = fnp.all(mask, axis=axis, keepdims=keepdims)
    host = _concrete_value(all_nan)
    if host is not None:
        if av.size and host.any():
            raise ValueError(f"{name}: All-NaN slice encountered")
        return r
    # Traced: no value to check, so all-NaN slices give -1 (as jax.numpy does).
    return fnp.where(all_nan, -1, r)


def nanargmax(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Any:
    """Index of the maximum ignoring NaNs (``numpy.nanargmax``).

    All-NaN slices raise ``ValueError`` (on concrete input) or give -1 (traced, as JAX).

    Example:
        >>> import numpy as np
        >>> int(nanargmax(np.array([1., np.nan, 3., 2.])))
        2
    """
    return _nanarg("nanargmax", fnp.argmax, -numpy.inf, a, axis, out, keepdims)


def nanargmin(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Any:
    """Index of the minimum ignoring NaNs (``numpy.nanargmin``).

    Example:
        >>> import numpy as np
        >>> nanargmin(np.array([[1., np.nan], [np.nan, 0.]]), axis=1)
        array([0, 1])
    """
    return _nanarg("nanargmin", fnp.argmin, numpy.inf, a, axis, out, keepdims)


def _nan_sorted(name: str, a: Any, axis: Any,
                complex_ok: bool = False) -> tuple[Any, Any, ShapedArray, tuple]:
    """(sorted along a merged last axis with NaNs last, count of non-NaN per slice, aval, axes)

    (Complex values sort lexicographically with any-NaN values last, as in NumPy.)"""
    x = _arr(name, a)
    av = _av(x)
    if av.dtype.kind == "c" and not complex_ok:
        raise TypeError(f"{name}: a must be an array of real numbers (complex input)")
    s, av, axes = _sorted_last(name, x, axis)
    k = fnp.sum(fnp.logical_not(fnp.isnan(s)), axis=-1)
    return s, k, av, axes


def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Any:
    """Median ignoring NaNs (``numpy.nanmedian``); NaN for all-NaN slices.

    The gradient goes to the middle element(s) of each slice, as for :func:`median`.

    Example:
        >>> import numpy as np
        >>> float(nanmedian(np.array([3., np.nan, 1., 2., 10.])))
        2.5
    """
    _unsupported("nanmedian", out=out)
    x = _arr("nanmedian", a)
    if _av(x).dtype.kind not in "fc":
        return fnp.median(x, axis=axis, keepdims=keepdims)
    s, k, av, axes = _nan_sorted("nanmedian", x, axis, complex_ok=True)
    n = get_aval(s).shape[-1]
    if n == 0:
        return fnp.median(x, axis=axis, keepdims=keepdims)
    km1 = fnp.subtract(k, 1)
    lo = fnp.maximum(fnp.floor_divide(km1, 2), 0)
    hi = fnp.maximum(fnp.floor_divide(k, 2), 0)
    pair = _take_traced_last(s, fnp.stack([lo, hi], axis=-1))
    r = fnp.divide(fnp.sum(pair, axis=-1), 2)
    none = fnp.equal(k, 0)
    host = _concrete_value(none)
    if host is not None and host.any():  # (NumPy's warning; traced values have none yet)
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=2)
    r = _cast(fnp.where(none, numpy.nan, r), get_aval(s).dtype)
    if av.dtype == numpy.float16:
        r = _cast(r, numpy.float16)
    return _keep(r, av.shape, axes, keepdims)


def _nan_weights(w: Any, x: Any, axes: tuple[int, ...]) -> Any:
    """``w`` with NaN elements of ``x`` weighted 0 (NumPy drops them from each slice); an
    all-NaN slice keeps weight 1 everywhere so the weighted quantile has a non-empty CDF (its
    result becomes NaN afterwards)."""
    nan = fnp.isnan(x)
    all_nan = fnp.all(nan, axis=axes, keepdims=True)
    return fnp.where(nan, fnp.where(all_nan, 1, 0), w)


def _nanquantile(name: str, a: Any, q: Any, axis: Any, method: Any, keepdims: bool,
                 scale: float, weights: Any = None) -> Any:
    # Validation in NumPy's order: method, complex a, q in range, weights, then empty a.
    if not isinstance(method, str) or method not in _QUANTILE_METHODS:
        raise ValueError(
            f"{name}: {method!r} is not a valid method. Use one of: "
            + ", ".join(repr(m) for m in _QUANTILE_METHODS)
        )
    x = _arr(name, a)
    xa = _av(x)
    if xa.dtype.kind == "c":
        raise TypeError(f"{name}: a must be an array of real numbers (complex input)")
    q, qa, qh = _checked_quantiles(name, q, scale)
    if weights is not None and method != "inverted_cdf":
        raise ValueError(
            f"{name}: only method 'inverted_cdf' supports weights, got method={method!r}"
        )
    if xa.size == 0:
        # NumPy answers an empty ``a`` with nanmean (whatever q is).
        _axes(name, axis, xa.ndim, scalar_axis=False)
        return fnp.nanmean(x, axis=axis, keepdims=keepdims)
    if xa.dtype.kind not in "fc":
        # Integers and booleans hold no NaN: exactly quantile.
        return _quantile(name, x, q, axis, method, keepdims, scale, weights)
    if weights is not None:
        axes = _axes(name, axis, xa.ndim, scalar_axis=False)
        w = _weights_for(name, _asarray(weights), xa, axis, axes)
        s, r = _weighted_inverted_cdf(name, x, _nan_weights(w, x, axes), xa, axes, qh)
        k = fnp.sum(fnp.logical_not(fnp.isnan(s)), axis=-1)
    else:
        s, k, _, axes = _nan_sorted(name, x, axis)
        r = _nan_quantile_sorted(s, k, q, qa, qh, method, scale)
    empty = fnp.equal(k, 0)
    host = _concrete_value(empty)
    if host is not None and host.any():
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
    r = fnp.where(fnp.expand_dims(empty, -1), numpy.nan, r)
    # (..., K) -> q.shape + (...)
    r = _shape.moveaxis(r, -1, 0)
    rest = get_aval(r).shape[1:]
    r = _shape.reshape(r, qh.shape + rest)
    if keepdims:
        r = _shape.reshape(r, qh.shape + tuple(1 if i in axes else d
                                               for i, d in enumerate(xa.shape)))
    return r


def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None,
                overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
                *, weights: Any = None, interpolation: Any = None) -> Any:
    """The ``q``-th quantiles ignoring NaNs (``numpy.nanquantile``), with every NumPy
    ``method``.

    Each slice uses only its non-NaN values (so the count varies per slice, also under
    ``jit``/``vmap``); all-NaN slices give NaN (with NumPy's RuntimeWarning on concrete
    input). ``q`` may be traced, as for :func:`quantile`. ``weights`` need ``method='inverted_cdf'``, as in NumPy.
    The gradient goes to the selected or interpolated elements.

    Example:
        >>> import numpy as np
        >>> float(nanquantile(np.array([1., np.nan, 2., 3., 4.]), 0.5))
        2.5
        >>> nanquantile(np.array([[4., np.nan, 1.], [2., 3., 5.]]), 0.5, axis=1, method="lower")
        array([1., 3.])
    """
    _unsupported("nanquantile", out=out)
    return _nanquantile("nanquantile", a, q, axis, interpolation or method, keepdims, 1.0,
                        weights)


def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False, *, weights: Any = None,
                  interpolation: Any = None) -> Any:
    """The ``q``-th percentiles ignoring NaNs (``numpy.nanpercentile``); see
    :func:`nanquantile`.

    Example:
        >>> import numpy as np
        >>> nanpercentile(np.array([1., np.nan, 2., 3., 4.]), [0, 100])
        array([1., 4.])
        >>> float(nanpercentile(np.array([1., np.nan, 2., 3., 4.]), 50, method="hazen"))
        2.5
    """
    _unsupported("nanpercentile", out=out)
    return _nanquantile("nanpercentile", a, q, axis, interpolation or method, keepdims, 100.0,
                        weights)


# ---------------------------------------------------------------------------------------------
# Covariance and correlation


def _weights(name: str, w: Any, nobs: int, integer: bool, like: Any) -> Any:
    w = _cast(_arr("cov", w, like), _F64)
    wa = _av(w)
    if wa.ndim > 1:
        raise RuntimeError(f"cov: cannot handle multidimensional {name}")
    if wa.ndim == 0 or wa.shape[0] != nobs:
        raise RuntimeError(f"cov: incompatible numbers of samples and {name}")
    host = _concrete_value(w)
    if host is not None:
        if integer and not numpy.all(host == numpy.around(host)):
            raise TypeError("cov: fweights must be integer")
        if numpy.any(host < 0):
            raise ValueError(f"cov: {name} cannot be negative")
    return w


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None,
        fweights: Any = None, aweights: Any = None, *, dtype: Any = None) -> Any:
    """Covariance matrix of the variables in ``m`` (``numpy.cov``).

    Rows are variables (columns with ``rowvar=False``); ``fweights``/``aweights`` weight the
    observations. Differentiable in ``m``, ``y`` and the weights.

    Example:
        >>> import numpy as np
        >>> cov(np.array([[0., 1., 2.], [2., 1., 0.]]))
        array([[ 1., -1.],
               [-1.,  1.]])
    """
    if ddof is not None and ddof != int(ddof):
        raise ValueError("cov: ddof must be integer")
    mm = _arr("cov", m)
    ma = _av(mm)
    if ma.ndim > 2:
        raise ValueError("cov: m has more than 2 dimensions")
    yy = None
    if y is not None:
        yy = _arr("cov", y, mm)
        if _av(yy).ndim > 2:
            raise ValueError("cov: y has more than 2 dimensions")
    if dtype is None:
        avs = [ma] + ([_av(yy)] if yy is not None else [])
        dt = numpy.result_type(*[numpy.empty((), a.dtype) for a in avs], _F64)
    else:
        dt = numpy.dtype(dtype)
    X = _cast(fnp.atleast_2d(mm), dt)
    if not rowvar and ma.ndim != 1:
        X = fnp.transpose(X)
    if _av(X).shape[0] == 0:
        return _device_xp(X).zeros((0, 0), dtype=dt)
    if yy is not None:
        Y = _cast(fnp.atleast_2d(yy), dt)
        if not rowvar and _av(Y).shape[0] != 1:
            Y = fnp.transpose(Y)
        X = fnp.concatenate([X, Y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    ddof = int(ddof)
    nobs = _av(X).shape[1]
    w = None
    if fweights is not None:
        w = _weights("fweights", fweights, nobs, True, X)
    aw = None
    if aweights is not None:
        aw = _weights("aweights", aweights, nobs, False, X)
        w = aw if w is None else fnp.multiply(w, aw)
    if w is None:
        avg = fnp.mean(X, axis=1)
        fact: Any = nobs - ddof
    else:
        avg, wsum = fnp.average(X, axis=1, weights=w, returned=True)
        wsum = fnp.take(wsum, 0)
        if ddof == 0:
            fact = wsum
        elif aw is None:
            fact = fnp.subtract(wsum, ddof)
        else:
            fact = fnp.subtract(wsum, fnp.divide(fnp.multiply(ddof, fnp.sum(fnp.multiply(w, aw))),
                                                 wsum))
    Xc = _cast(fnp.subtract(X, fnp.expand_dims(avg, 1)), _av(X).dtype)
    XT = fnp.transpose(Xc) if w is None else fnp.transpose(fnp.multiply(Xc, w))
    c = fnp.matmul(Xc, fnp.conj(XT))
    if isinstance(fact, int):
        scale: Any = 1.0 / fact if fact > 0 else numpy.inf
        c = fnp.multiply(c, scale)
    else:
        fact = fnp.where(fnp.less_equal(fact, 0), 0.0, fact)
        c = fnp.multiply(c, fnp.divide(1.0, fact))
    return fnp.squeeze(c)


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Any:
    """Pearson correlation coefficients (``numpy.corrcoef``), clipped to [-1, 1].

    Example:
        >>> import numpy as np
        >>> corrcoef(np.array([[0., 1., 2.], [2., 1.5, 0.]])).round(4)
        array([[ 1.    , -0.9608],
               [-0.9608,  1.    ]])
    """
    c = cov(x, y, rowvar, dtype=dtype)
    ca = _av(c)
    if ca.ndim == 0:
        return fnp.divide(c, c)
    d = fnp.diagonal(c)
    sd = fnp.sqrt(fnp.real(d))
    c = fnp.divide(c, fnp.expand_dims(sd, 1))
    c = fnp.divide(c, fnp.expand_dims(sd, 0))
    if ca.dtype.kind == "c":
        re = fnp.clip(fnp.real(c), -1, 1)
        im = fnp.clip(fnp.imag(c), -1, 1)
        return fnp.add(_cast(re, ca.dtype), fnp.multiply(im, 1j))
    return fnp.clip(c, -1, 1)


# ---------------------------------------------------------------------------------------------
# Interpolation, convolution


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Any:
    """Piecewise-linear interpolant of ``(xp, fp)`` at ``x`` (``numpy.interp``).

    ``xp`` must increase (unless ``period`` is given); outside it ``left``/``right`` (default
    ``fp[0]``/``fp[-1]``). The result is float64 (complex128 for complex ``fp``) as in NumPy,
    and differentiable in ``x``, ``xp`` and ``fp`` (to any order, piecewise), and in a traced
    ``period``.

    Example:
        >>> import numpy as np
        >>> interp(np.array([0.5, 1.5, 9.]), np.array([0., 1., 2.]), np.array([0., 10., 0.]))
        array([5., 5., 0.])
    """
    # Python-data fp goes where an array argument is (as the other Python arguments do)
    ff = _arr("interp", fp, _ref(fp, xp, x))
    cdt = numpy.dtype("complex128") if _av(ff).dtype.kind == "c" else _F64
    xq = _arr("interp", xp, ff)
    xx = _arr("interp", x, ff)
    for what, v in (("x", xx), ("xp", xq)):
        if _av(v).dtype.kind == "c":  # NumPy's 'safe' cast to float64 refuses it
            raise TypeError(f"interp: cannot cast {what} from {_av(v).dtype} to float64 "
                            "according to the rule 'safe' (complex sample points)")
    xq, xx = _cast(xq, _F64), _cast(xx, _F64)
    ff = _cast(ff, cdt)
    if _av(xq).ndim != 1 or _av(ff).ndim != 1:
        raise ValueError("interp: Data points must be 1-D sequences")
    if _av(xq).shape[0] != _av(ff).shape[0]:
        raise ValueError("interp: fp and xp are not of the same length")
    if _av(xq).shape[0] == 0:
        raise ValueError("interp: array of sample points is empty")
    if period is not None:
        known = _concrete_value(period)
        if known is not None and known == 0:
            raise ValueError("interp: period must be a non-zero value")
        # (a traced period, under jit or differentiated, as JAX: the value, not a constant)
        period = fnp.abs(period) if isinstance(period, Tracer) else builtins.abs(period)
        left = right = None
        xx = fnp.remainder(xx, period)
        xq = fnp.remainder(xq, period)
        order = fnp.argsort(xq)
        xq, ff = fnp.take(xq, order), fnp.take(ff, order)
        xq = fnp.concatenate([fnp.subtract(_sl(xq, -1, None, 0), period), xq,
                              fnp.add(_sl(xq, 0, 1, 0), period)])
        ff = fnp.concatenate([_sl(ff, -1, None, 0), ff, _sl(ff, 0, 1, 0)])
    n = _av(xq).shape[0]
    f0, fn_ = fnp.take(ff, 0), fnp.take(ff, n - 1)
    lval = f0 if left is None else _cast(_arr("interp", left, ff), cdt)
    rval = fn_ if right is None else _cast(_arr("interp", right, ff), cdt)
    x0, xn = fnp.take(xq, 0), fnp.take(xq, n - 1)
    if n == 1:
        r = fnp.where(fnp.less(xx, x0), lval, fnp.where(fnp.greater(xx, x0), rval, f0))
        return _cast(r, cdt)
    # As NumPy's loop: j with xp[j] <= x < xp[j + 1], slope * (x - xp[j]) + fp[j]; at a knot
    # that is fp[j] exactly, and the derivative in x the slope on the right (as JAX). At the
    # last knot, fp[-1] + slope * (x - xp[-1]): exact too, with the last segment's slope.
    j = fnp.clip(fnp.subtract(searchsorted(xq, xx, side="right"), 1), 0, n - 2)
    j1 = fnp.add(j, 1)
    xj, xj1 = fnp.take(xq, j), fnp.take(xq, j1)
    dx = fnp.subtract(xj1, xj)
    flat = fnp.equal(dx, 0)  # repeated xp: no slope (JAX's rule; NumPy reaches it only at xn)
    at_end = fnp.equal(xx, xn)
    base_x = fnp.where(at_end, xj1, xj)
    at_knot = fnp.equal(xx, base_x)

    def along(f: Any) -> Any:
        """NumPy's loop on real values ``f`` (a complex fp runs it on each part)."""
        fj, fj1 = fnp.take(f, j), fnp.take(f, j1)
        slope = fnp.where(flat, 0, fnp.divide(fnp.subtract(fj1, fj), fnp.where(flat, 1, dx)))
        base_f = fnp.where(at_end, fj1, fj)
        r = fnp.add(fnp.multiply(slope, fnp.subtract(xx, base_x)), base_f)
        # NumPy's guards for infinite values, where the formula gives NaN: a knot is its
        # value; elsewhere the segment is tried from its right end, and one between two equal
        # values is that value.
        other = fnp.add(fnp.multiply(slope, fnp.subtract(xx, xj1)), fj1)
        other = fnp.where(fnp.logical_and(fnp.isnan(other), fnp.equal(fj, fj1)), fj, other)
        return fnp.where(fnp.isnan(r), fnp.where(at_knot, base_f, other), r)

    if cdt.kind == "c":
        r = _ew.complex(along(fnp.real(ff)), along(fnp.imag(ff)))
    else:
        r = along(ff)
    r = fnp.where(fnp.less(xx, x0), lval, r)
    r = fnp.where(fnp.greater(xx, xn), rval, r)
    return _cast(r, cdt)


_SMALL_KERNEL = 32


def _correlate_core(a: Any, w: Any, mode: str) -> Any:
    """``out[k] = sum_j w[j] * a_pad[k0 + k + j]`` with ``len(a) >= len(w)`` (NumPy's modes)."""
    n, m = _av(a).shape[0], _av(w).shape[0]
    if mode == "full":
        k0, length = 0, n + m - 1
    elif mode == "same":
        k0, length = (m - 1) // 2, n
    else:
        k0, length = m - 1, n - m + 1
    ap = fnp.pad(a, (m - 1, m - 1)) if m > 1 else a
    if m <= _SMALL_KERNEL:
        acc = None
        for j in range(m):
            term = fnp.multiply(fnp.take(w, j), _sl(ap, k0 + j, k0 + j + length, 0))
            acc = term if acc is None else fnp.add(acc, term)
        return acc
    xp = _device_xp(ap)
    idx = xp.arange(k0, k0 + length, dtype=_I64)[:, None] + xp.arange(m, dtype=_I64)[None, :]
    return fnp.matmul(fnp.take(ap, idx), w)


def _conv_args(name: str, a: Any, v: Any, mode: str,
               pet: Any = None) -> tuple[Any, Any, numpy.dtype]:
    """The 1-d operands and the dtype to compute and return in (NumPy's result type, or
    JAX's ``preferred_element_type``: computed in a type holding both, returned in it)."""
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"{name}: mode must be one of 'full', 'same', 'valid', got {mode!r}")
    aa = _arr(name, a, v if isinstance(v, Tracer) or hasattr(v, "shape") else None)
    vv = _arr(name, v, aa)
    for x, what in ((aa, "a"), (vv, "v")):
        nd = _av(x).ndim
        if nd > 1:
            raise ValueError(f"{name}: {what} must be 1-d (object too deep for desired array)")
    if name == "convolve":
        aa, vv = fnp.atleast_1d(aa), fnp.atleast_1d(vv)
    elif _av(aa).ndim == 0 or _av(vv).ndim == 0:
        raise ValueError(f"{name}: object of too small depth for desired array")
    if _av(aa).shape[0] == 0:
        raise ValueError(f"{name}: a cannot be empty")
    if _av(vv).shape[0] == 0:
        raise ValueError(f"{name}: v cannot be empty")
    dt = numpy.result_type(numpy.empty((), _av(aa).dtype), numpy.empty((), _av(vv).dtype))
    if pet is not None:
        if dt.kind == "c" and numpy.dtype(pet).kind != "c":
            raise TypeError(f"{name}: preferred_element_type={numpy.dtype(pet)} would drop "
                            f"the imaginary part of a {dt} result")
        dt = numpy.promote_types(dt, numpy.dtype(pet))
    return aa, vv, dt


def _accumulation_dtype(dt: numpy.dtype) -> numpy.dtype:
    """The dtype products are summed in: float16 in float32 (NumPy's half-precision dot, and
    JAX's and PyTorch's), rounded once at the end; every other dtype in itself."""
    return numpy.dtype(numpy.float32) if dt == numpy.float16 else dt


def convolve(a: Any, v: Any, mode: str = "full", *, precision: Any = None,
             preferred_element_type: Any = None) -> Any:
    """Discrete linear convolution of two 1-d sequences (``numpy.convolve``).

    ``mode``: ``'full'`` (length n+m-1), ``'same'`` (max(n, m), centred) or ``'valid'``.
    Bilinear, so it differentiates in both arguments to any order. ``precision`` and
    ``preferred_element_type`` (JAX's) as in :func:`matmul`.

    Example:
        >>> import numpy as np
        >>> convolve(np.array([1., 2., 3.]), np.array([0., 1., 0.5]))
        array([0. , 1. , 2.5, 4. , 1.5])
    """
    aa, vv, dt = _conv_args("convolve", a, v, mode, preferred_element_type)
    if _av(vv).shape[0] > _av(aa).shape[0]:
        aa, vv = vv, aa
    work = _accumulation_dtype(dt)
    out = _cast(_correlate_core(_cast(aa, work), fnp.flip(_cast(vv, work)), mode), dt)
    return _pet_result(out, preferred_element_type)


def correlate(a: Any, v: Any, mode: str = "valid", *, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """Cross-correlation of two 1-d sequences, ``c[k] = sum_n a[n+k] * conj(v[n])``
    (``numpy.correlate``; ``mode``, ``precision`` and ``preferred_element_type`` as in
    :func:`convolve`, default ``'valid'``).

    Example:
        >>> import numpy as np
        >>> correlate(np.array([1., 2., 3.]), np.array([0., 1., 0.5]), "same")
        array([2. , 3.5, 3. ])
    """
    aa, vv, dt = _conv_args("correlate", a, v, mode, preferred_element_type)
    work = _accumulation_dtype(dt)
    aa, vv = _cast(aa, work), _cast(vv, work)
    if _av(vv).shape[0] > _av(aa).shape[0]:
        # As NumPy: correlate the other way round, then reverse (and conjugate) the result.
        r = _correlate_core(vv if dt.kind != "c" else fnp.conj(vv), aa, mode)
        r = fnp.flip(r)
        return _pet_result(_cast(r, dt), preferred_element_type)
    w = vv if dt.kind != "c" else fnp.conj(vv)
    return _pet_result(_cast(_correlate_core(aa, w, mode), dt), preferred_element_type)


# ---------------------------------------------------------------------------------------------
# Searching


def _searchsorted1d(a: Any, v: Any, side: str) -> Any:
    """Insertion indices of ``v`` (any shape) into the sorted 1-d ``a``, by one stable sort.

    ``a`` and ``v`` are sorted together by (value, tag) where the tag puts ``v`` before (left)
    or after (right) equal elements of ``a``; a running count of ``a`` elements then gives
    each ``v``'s index. NaNs sort last, as in NumPy.
    """
    a, v = stop_gradient(a), stop_gradient(v)
    n = _av(a).shape[0]
    vshape = _av(v).shape
    m = int(numpy.prod(vshape))
    if m == 0 or n == 0:
        return _device_xp(v).zeros(vshape, dtype=_I64)
    vals = fnp.concatenate([a, fnp.reshape(v, (m,))])
    xp = _device_xp(vals)
    is_a = xp.concatenate([xp.ones(n, dtype=_I64), xp.zeros(m, dtype=_I64)])
    tag = is_a if side == "left" else 1 - is_a
    iota = xp.arange(n + m, dtype=_I64)
    _, s_tag, perm = _sorting.sort([vals, tag, iota], 0, True, 2)
    s_is_a = s_tag if side == "left" else fnp.subtract(1, s_tag)
    counts = fnp.cumsum(s_is_a)
    at_pos = _sorting.scatter_add_along_axis(counts, perm, 0, n + m)
    return fnp.reshape(_sl(at_pos, n, None, 0), vshape)


_SEARCH_METHODS = ("scan", "scan_unrolled", "sort", "compare_all")


def _check_method(name: str, method: Any) -> None:
    """JAX's ``method=`` picks an implementation, not a result: checked, then one is used."""
    if method is not None and method not in _SEARCH_METHODS:
        raise ValueError(f"{name}: method must be one of {_SEARCH_METHODS}, got {method!r}")


def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None, *,
                 method: str = "scan") -> Any:
    """Indices where ``v`` would be inserted into the sorted 1-d ``a`` (``numpy.searchsorted``).

    ``side='left'`` gives the first suitable index, ``'right'`` the last; ``sorter`` (indices
    that sort ``a``) may be given instead of a sorted ``a``. Traced ``a`` and ``v`` work under
    ``jit`` and ``vmap``; the int64 result has ``v``'s shape and no derivative. JAX's
    ``method`` (``'scan'``, ``'scan_unrolled'``, ``'sort'``, ``'compare_all'``) is accepted:
    it chooses an implementation in JAX, the results are the same.

    Example:
        >>> import numpy as np
        >>> searchsorted(np.array([1., 2., 2., 3.]), np.array([2., 0., 5.]), side="right")
        array([3, 0, 4])
    """
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right' (got {side!r})")
    _check_method("searchsorted", method)
    aa = _arr("searchsorted", a, _ref(v, sorter))
    if _av(aa).ndim != 1:
        raise ValueError(f"searchsorted: a must be 1-d, got shape {_av(aa).shape}")
    if sorter is not None:
        sorter = _arr("searchsorted", sorter, aa)
        sa = _av(sorter)
        if sa.dtype.kind not in "iu" or sa.shape != _av(aa).shape:
            raise ValueError("searchsorted: sorter must be an integer array of a's length")
        aa = fnp.take(aa, sorter)
    vv = _arr("searchsorted", v, aa)
    return _searchsorted1d(aa, vv, side)


def _monotonicity(a: numpy.ndarray) -> int:
    """NumPy's ``_monotonicity`` of digitize's bins: 1 increasing (or constant), -1
    decreasing, 0 neither. The direction is that of the first change after the leading
    repeats; NaN comparisons are false, so a NaN never breaks it (``[0, 2, nan]`` is
    increasing) but a leading NaN makes the bins count as decreasing, as NumPy's C loop."""
    i = 1
    while i < a.size and a[i] == a[0]:
        i += 1
    if i >= a.size:
        return 1
    rest = a[i - 1:]
    if a[0] < a[i]:
        return 0 if numpy.any(rest[:-1] > rest[1:]) else 1
    return 0 if numpy.any(rest[:-1] < rest[1:]) else -1


def digitize(x: Any, bins: Any, right: bool = False, *, method: str | None = None) -> Any:
    """Indices of the bins each ``x`` falls in (``numpy.digitize``); ``bins`` monotonic.

    Concrete ``bins`` are checked to be monotonic; traced ones pick the direction from their
    ends. ``method``: JAX's, as in :func:`searchsorted`.

    Example:
        >>> import numpy as np
        >>> digitize(np.array([0.5, 1., 2.5]), np.array([0., 1., 2.]))
        array([1, 2, 3])
    """
    _check_method("digitize", method)
    b = _arr("digitize", bins, x if isinstance(x, Tracer) or hasattr(x, "shape") else None)
    xx = _arr("digitize", x, b)
    if _av(xx).dtype.kind == "c":
        raise TypeError("digitize: x may not be complex")
    ba = _av(b)
    if ba.ndim != 1:
        raise ValueError("digitize: object of too small depth for desired array" if ba.ndim == 0
                         else "digitize: object too deep for desired array")
    side = "left" if right else "right"
    nb = ba.shape[0]
    host = _concrete_value(b)
    inc = dec = True
    if host is not None and nb > 1:
        mono = _monotonicity(numpy.asarray(to_numpy(host), dtype=numpy.float64))
        if mono == 0:
            raise ValueError("digitize: bins must be monotonically increasing or decreasing")
        inc, dec = mono == 1, mono == -1
    elif nb <= 1:
        dec = False
    up = searchsorted(b, xx, side=side) if inc else None
    down = fnp.subtract(nb, searchsorted(fnp.flip(b), xx, side=side)) if dec else None
    if up is None:
        return down
    if down is None:
        return up
    return fnp.where(fnp.greater(fnp.take(b, 0), fnp.take(b, nb - 1)), down, up)


# ---------------------------------------------------------------------------------------------
# Counting and histograms


@with_out_sharding
def bincount(x: Any, weights: Any = None, minlength: int = 0, *, length: Any = None) -> Any:
    """Occurrences of each value in the non-negative int array ``x`` (``numpy.bincount``).

    The result length is ``max(x) + 1`` (at least ``minlength``), so ``x`` must be concrete;
    under ``jit``/``vmap`` pass a static ``length=`` (as in ``jax.numpy``), which keeps the
    first ``length`` bins (negative values count in bin 0, larger ones are dropped).
    With ``weights`` the result is float64 and differentiable in them.

    Example:
        >>> import numpy as np
        >>> bincount(np.array([0, 1, 1, 3]))
        array([1, 2, 0, 1])
        >>> bincount(np.array([0, 1, 1]), weights=np.array([.5, 1., 2.]), length=4)
        array([0.5, 3. , 0. , 0. ])
    """
    xx = _arr("bincount", x)
    xa = _av(xx)
    if xa.ndim != 1:
        raise ValueError("bincount: object of too small depth for desired array" if xa.ndim == 0
                         else "bincount: object too deep for desired array")
    if xa.dtype.kind not in "biu":
        raise TypeError(f"bincount: Cannot cast array data from dtype('{xa.dtype}') to "
                        "dtype('int64') according to the rule 'safe'")
    minlength = _int_arg("bincount", "minlength", minlength)
    if minlength < 0:
        raise ValueError("bincount: 'minlength' must not be negative")
    xx = _cast(xx, _I64)
    if length is None:
        host = concrete_or_error(
            xx, "fnp.bincount: x (the result's length is max(x) + 1; pass a static length= "
            "to use bincount under jit/vmap)")
        host = numpy.asarray(to_numpy(host))
        if host.size and host.min() < 0:
            raise ValueError("bincount: 'list' argument must have no negative elements")
        n = builtins.max(minlength, int(host.max()) + 1 if host.size else 0)
    else:
        n = _int_arg("bincount", "length", length)
        if n < 0:
            raise ValueError("bincount: length must be non-negative")
        xx = fnp.maximum(xx, 0)
    if weights is None:
        w = _device_xp(xx).ones(xa.shape, dtype=_I64)
    else:
        w = _arr("bincount", weights, xx)
        wa = _av(w)
        if wa.shape != xa.shape:
            raise ValueError("bincount: The weights and list don't have the same length.")
        if wa.dtype.kind == "c":
            raise TypeError("bincount: Cannot cast array data from complex weights to "
                            "dtype('float64') according to the rule 'safe'")
        w = _cast(w, _F64)
    if xa.shape[0] == 0:
        return _device_xp(xx).zeros(n, dtype=_av(w).dtype)
    return _sorting.scatter_add_along_axis(w, stop_gradient(xx), 0, n)


def _hist_edges(name: str, a: Any, bins: Any, range: Any, weights: Any) -> tuple[Any, int]:
    """(bin edges, number of bins) as NumPy computes them."""
    if isinstance(bins, str):
        # A binning rule ('auto', 'fd', 'sturges'...) reads the data: NumPy computes the
        # edges (its rules and errors exactly), which then count like explicit edges.
        why = f"{name}: bins={bins!r} (the number of bins depends on the data)"
        host = numpy.asarray(to_numpy(concrete_or_error(a, why)))
        w = None if weights is None else numpy.asarray(to_numpy(concrete_or_error(weights, why)))
        edges = numpy.histogram_bin_edges(host, bins, range, w)
        bins = _device_xp(a).asarray(edges)
    aa = _av(a)
    if isinstance(bins, int | numpy.integer) and not isinstance(bins, bool) or (
            hasattr(bins, "ndim") and not isinstance(bins, Tracer) and bins.ndim == 0):
        nb = operator_index(bins)
        if nb < 1:
            raise ValueError(f"{name}: `bins` must be positive, when an integer")
        if range is not None:
            lo, hi = range
            hl, hh = _concrete_value(lo), _concrete_value(hi)
            if hl is not None and hh is not None:  # NumPy's checks, where values are known
                if hl > hh:
                    raise ValueError(
                        f"{name}: max must be larger than min in range parameter.")
                if not (numpy.isfinite(hl) and numpy.isfinite(hh)):
                    raise ValueError(f"{name}: supplied range of [{hl}, {hh}] is not finite")
            if not (isinstance(lo, Tracer) or isinstance(hi, Tracer)):
                if lo == hi:
                    lo, hi = lo - 0.5, hi + 0.5
                dt = numpy.result_type(lo, hi, numpy.empty((), aa.dtype))
                if dt.kind not in "fc":
                    dt = _F64
                # On the data's device: Python bounds alone would make host edges.
                return fnp.linspace(lo, hi, nb + 1, dtype=dt, device=aa.device), nb
            # A traced range (under jit, or differentiated): the same edges from primitives.
            dt = result_dtype(get_aval(lo), get_aval(hi), ShapedArray((), aa.dtype))[0]
            if dt.kind not in "fc":
                dt = _F64
            lo, hi = _cast(fnp.asarray(lo), dt), _cast(fnp.asarray(hi), dt)
            same = fnp.equal(lo, hi)
            lo = fnp.where(same, fnp.subtract(lo, 0.5), lo)
            hi = fnp.where(same, fnp.add(hi, 0.5), hi)
            return fnp.linspace(lo, hi, nb + 1, dtype=dt), nb
        if aa.size == 0:
            return _device_xp(a).linspace(0.0, 1.0, nb + 1), nb
        lo, hi = fnp.min(a), fnp.max(a)
        hl, hh = _concrete_value(lo), _concrete_value(hi)
        if hl is not None and hh is not None and not (
                numpy.isfinite(hl) and numpy.isfinite(hh)):
            raise ValueError(f"{name}: autodetected range of [{hl}, {hh}] is not finite")
        dt = aa.dtype if aa.dtype.kind in "fc" else _F64
        lo, hi = _cast(lo, dt), _cast(hi, dt)
        same = fnp.equal(lo, hi)
        lo = fnp.where(same, fnp.subtract(lo, 0.5), lo)
        hi = fnp.where(same, fnp.add(hi, 0.5), hi)
        edges = fnp.linspace(lo, hi, nb + 1, dtype=dt)
        return edges, nb
    if isinstance(bins, float | complex | numpy.inexact):
        raise TypeError(f"{name}: `bins` must be an integer, a string, or an array "
                        f"(got the scalar {bins!r})")
    edges = _arr(name, bins, a)
    ea = _av(edges)
    if ea.ndim != 1:
        raise ValueError(f"{name}: `bins` must be 1d, when an array")
    host = _concrete_value(edges)
    if host is not None and numpy.any(host[:-1] > host[1:]):
        raise ValueError(f"{name}: `bins` must increase monotonically, when an array")
    if ea.shape[0] < 1:
        raise ValueError(f"{name}: `bins` must have at least one edge")
    return edges, ea.shape[0] - 1


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None, weights: Any = None) -> Any:
    """The bin edges :func:`histogram` uses (``numpy.histogram_bin_edges``).

    Example:
        >>> import numpy as np
        >>> histogram_bin_edges(np.array([0., 1., 4.]), bins=4)
        array([0., 1., 2., 3., 4.])
    """
    x = fnp.ravel(_arr("histogram_bin_edges", a))
    return _hist_edges("histogram_bin_edges", x, bins, range, weights)[0]


def histogram(a: Any, bins: Any = 10, range: Any = None, density: Any = None,
              weights: Any = None) -> tuple[Any, Any]:
    """Histogram of ``a`` (``numpy.histogram``): ``(counts, bin_edges)``.

    ``bins`` is a number of equal bins over ``range`` (default: ``a``'s min and max) or the
    edges. All bins are half-open except the last, which includes its right edge; values
    outside are dropped. With an int ``bins`` the shapes are static, so it works under ``jit``;
    derivatives flow to ``weights`` (and to the edges through ``a``'s min and max, or through
    a traced ``range``).

    Example:
        >>> import numpy as np
        >>> histogram(np.array([1., 2., 2., 4.]), bins=3)
        (array([1, 2, 1]), array([1., 2., 3., 4.]))
    """
    x = fnp.ravel(_arr("histogram", a, _ref(weights, bins)))
    w = None
    if weights is not None:
        w = _arr("histogram", weights, x)
        if _av(w).shape != _av(_arr("histogram", a)).shape:
            raise ValueError("histogram: weights should have the same shape as a.")
        w = fnp.ravel(w)
    edges, nb = _hist_edges("histogram", x, bins, range, weights)
    # Complex input counts as NumPy's does: edges between the lexicographic min and max, each
    # value in the bin it falls in under NumPy's lexicographic complex order (its
    # comparisons, which funcgrad's complex comparisons follow).
    xs, es = stop_gradient(x), stop_gradient(edges)
    first, last = fnp.take(es, 0), fnp.take(es, nb)
    idx = fnp.subtract(searchsorted(es, xs, side="right"), 1)
    idx = fnp.where(fnp.equal(xs, last), nb - 1, idx)
    keep = fnp.logical_and(fnp.greater_equal(xs, first), fnp.less_equal(xs, last))
    idx = fnp.where(keep, idx, nb)  # out of range: dropped by the scatter
    if w is None:
        ones = _device_xp(x).ones(_av(x).shape, dtype=_I64)
        counts = _sorting.scatter_add_along_axis(ones, idx, 0, nb)
    else:
        wdt = _av(w).dtype
        cdt = wdt if wdt.kind == "c" else _F64
        counts = _sorting.scatter_add_along_axis(_cast(w, cdt), idx, 0, nb)
        counts = _cast(counts, wdt)
    if density:
        db = diff(edges)
        # NumPy takes the widths as float64: complex edges keep their real part.
        db = _cast(fnp.real(db) if _av(db).dtype.kind == "c" else db, _F64)
        counts = fnp.divide(fnp.divide(counts, db), fnp.sum(counts))
    return counts, edges


def histogramdd(sample: Any, bins: Any = 10, range: Any = None, density: Any = None,
                weights: Any = None) -> tuple[Any, list[Any]]:
    """Multidimensional histogram (``numpy.histogramdd``): ``(counts, [edges per axis])``.

    ``sample`` is an ``(N, D)`` array or a sequence of ``D`` 1-d arrays; ``bins`` an int, one
    int per axis, or one edge array per axis; ``range`` one ``(min, max)`` (or None) per axis.
    Bins are half-open except the last along each axis; points outside are dropped. Counts
    are float64 as in NumPy (and differentiable in ``weights``); with int ``bins`` the shapes
    are static, so it works under ``jit``.

    Example:
        >>> import numpy as np
        >>> h, (ex, ey) = histogramdd(np.array([[0., 0.], [1., 1.], [1., 0.]]), bins=2)
        >>> h
        array([[1., 0.],
               [1., 1.]])
    """
    if isinstance(sample, list | tuple):
        ref = _ref(*sample, weights)
        cols = [fnp.ravel(_arr("histogramdd", c, ref)) for c in sample]
    else:
        sm = _arr("histogramdd", sample)
        if _av(sm).ndim == 1:
            sm = fnp.reshape(sm, (-1, 1))
        if _av(sm).ndim != 2:
            raise ValueError(f"histogramdd: sample must be (N, D), got shape {_av(sm).shape}")
        cols = [sm[:, d] for d in builtins.range(_av(sm).shape[1])]
    nd = len(cols)
    if nd == 0:
        raise ValueError("histogramdd: the sample has no dimensions")
    n = _av(cols[0]).shape[0]
    if any(_av(c).shape[0] != n for c in cols):
        raise ValueError("histogramdd: the sample arrays must all have the same length")
    if isinstance(bins, int | numpy.integer) and not isinstance(bins, bool):
        bins = [bins] * nd
    elif len(bins) != nd:
        raise ValueError("histogramdd: the dimension of bins must be equal to the dimension "
                         "of the sample x.")
    if range is None:
        range = [None] * nd
    elif len(range) != nd:
        raise ValueError(f"histogramdd: range must have one (min, max) per dimension ({nd})")
    w = None
    if weights is not None:
        w = fnp.ravel(_arr("histogramdd", weights, cols[0]))
        if _av(w).shape[0] != n:
            raise ValueError("histogramdd: weights must have one entry per sample point")
        if _av(w).dtype.kind == "c":
            raise TypeError("histogramdd: complex weights are not supported (NumPy's counts "
                            "are float64)")
    edges, nbins = [], []
    flat = None
    keep = None
    for d in builtins.range(nd):
        e, nb = _hist_edges("histogramdd", cols[d], bins[d], range[d], None)
        edges.append(e)
        nbins.append(nb)
        xs, es = stop_gradient(cols[d]), stop_gradient(e)
        last = fnp.take(es, nb)
        idx = fnp.subtract(searchsorted(es, xs, side="right"), 1)
        idx = fnp.where(fnp.equal(xs, last), nb - 1, idx)
        inside = fnp.logical_and(fnp.greater_equal(xs, fnp.take(es, 0)),
                                 fnp.less_equal(xs, last))
        keep = inside if keep is None else fnp.logical_and(keep, inside)
        flat = idx if flat is None else fnp.add(fnp.multiply(flat, nb), idx)
    total = int(numpy.prod(nbins))
    flat = fnp.where(keep, flat, total)  # outside: dropped by the scatter
    vals = (_device_xp(flat).ones((n,), dtype=_F64) if w is None else _cast(w, _F64))
    hist = fnp.reshape(_sorting.scatter_add_along_axis(vals, flat, 0, total), tuple(nbins))
    if density:
        volume = None
        for d in builtins.range(nd):
            widths = diff(edges[d])
            # Complex edges (complex samples) give complex densities, as NumPy's.
            widths = _cast(widths, numpy.result_type(_av(widths).dtype, _F64))
            shape = [1] * nd
            shape[d] = nbins[d]
            widths = fnp.reshape(widths, tuple(shape))
            volume = widths if volume is None else fnp.multiply(volume, widths)
        hist = fnp.divide(fnp.divide(hist, volume), fnp.sum(hist))
    return hist, edges


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None, density: Any = None,
                weights: Any = None) -> tuple[Any, Any, Any]:
    """Two-dimensional histogram (``numpy.histogram2d``): ``(counts, xedges, yedges)``.

    ``bins``: an int or a pair of ints, one edge array for both axes, or a pair of edge
    arrays; otherwise as :func:`histogramdd`.

    Example:
        >>> import numpy as np
        >>> h, xe, ye = histogram2d(np.array([0., 1., 1.]), np.array([0., 1., 0.]), bins=2)
        >>> h
        array([[1., 0.],
               [1., 1.]])
    """
    try:
        nbins = len(bins)
    except TypeError:
        nbins = 1
    if nbins != 1 and nbins != 2:
        bins = [bins, bins]  # one edge array, used for both axes
    h, edges = histogramdd([x, y], bins, range, density, weights)
    return h, edges[0], edges[1]


# ---------------------------------------------------------------------------------------------
# Partitioning and lexicographic sorting


def _check_kth(name: str, kth: Any, n: int) -> None:
    host = numpy.asarray(to_numpy(concrete_or_error(kth, f"{name}: kth")))
    if host.dtype.kind not in "iu":
        raise TypeError(f"{name}: Partition index must be integer")
    if host.ndim > 1:
        raise ValueError(f"{name}: kth must be scalar or 1-D")
    for k in host.ravel():
        if n and not -n <= k < n:  # (an empty axis has nothing to misplace: any kth, as NumPy)
            raise ValueError(f"{name}: kth(={int(k)}) out of bounds ({n})")


def partition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect",
              order: Any = None) -> Any:
    """A copy of ``a`` partitioned around the ``kth`` element(s) (``numpy.partition``).

    The result is fully sorted along ``axis``, which is one valid partition for every
    ``kth``; the gradient follows each element as for :func:`sort`.

    Example:
        >>> import numpy as np
        >>> partition(np.array([3., 4., 2., 1.]), 2)
        array([1., 2., 3., 4.])
    """
    _unsupported("partition", order=order)
    x = _arr("partition", a)
    if axis is None:
        x, axis = fnp.ravel(x), 0
    xa = _av(x)
    if xa.ndim == 0:
        raise AxisError(f"partition: axis {axis} is out of bounds for a 0-d array")
    ax = _axis1("partition", axis, xa.ndim)
    _check_kth("partition", kth, xa.shape[ax])
    return fnp.sort(x, axis=ax)


def argpartition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect",
                 order: Any = None) -> Any:
    """Indices that partition ``a`` around ``kth`` (``numpy.argpartition``): a stable argsort.

    Example:
        >>> import numpy as np
        >>> argpartition(np.array([3., 4., 2., 1.]), 1)
        array([3, 2, 0, 1])
    """
    _unsupported("argpartition", order=order)
    x = _arr("argpartition", a)
    if axis is None:
        x, axis = fnp.ravel(x), 0
    xa = _av(x)
    if xa.ndim == 0:
        x, axis = fnp.ravel(x), 0
        xa = _av(x)
    ax = _axis1("argpartition", axis, xa.ndim)
    _check_kth("argpartition", kth, xa.shape[ax])
    return fnp.argsort(x, axis=ax, kind="stable")


def lexsort(keys: Any, axis: int = -1) -> Any:
    """Indices that sort by several keys, the LAST key primary (``numpy.lexsort``); stable.

    ``keys`` is a sequence of equal-shaped arrays or a 2-d array whose rows are the keys.

    Example:
        >>> import numpy as np
        >>> lexsort((np.array([1, 0, 2]), np.array([1, 1, 0])))
        array([2, 1, 0])
    """
    if isinstance(keys, Sequence) and not isinstance(keys, str):
        ref = _ref(*keys)
        ks = [_arr("lexsort", k, ref) for k in keys]
    else:
        kk = _arr("lexsort", keys)
        if _av(kk).ndim == 0:
            raise TypeError("lexsort: need sequence of keys with len > 0 in lexsort")
        ks = [fnp.take(kk, i, axis=0) for i in range(_av(kk).shape[0])]
    if not ks:
        raise TypeError("lexsort: need sequence of keys with len > 0 in lexsort")
    shapes = {_av(k).shape for k in ks}
    if len(shapes) != 1:
        raise ValueError(f"lexsort: all keys need to be the same shape, got {sorted(shapes)}")
    shape = shapes.pop()
    if len(shape) == 0:
        return _device_xp(ks[0]).asarray(0, dtype=_I64)
    ax = _axis1("lexsort", axis, len(shape))
    ks = [stop_gradient(k) for k in ks]
    for k in ks:
        if _av(k).dtype.kind not in "biufc":
            raise TypeError(f"lexsort: cannot sort keys of dtype {_av(k).dtype}")
    iota = _sorting.axis_iota(_av(ks[0]), ax, full=True)
    outs = _sorting.sort(list(reversed(ks)) + [iota], ax, True, len(ks))
    return outs[-1]
