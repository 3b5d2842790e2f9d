"""The methods of NumPy's binary ufuncs on funcgrad.numpy's functions, as JAX's ``jnp.ufunc``:
``fnp.add.outer(a, b)``, ``fnp.multiply.reduce(a, axis=0)``, ``fnp.add.accumulate(a)``,
``fnp.add.at(a, indices, b, inplace=False)``, with ``nin``/``nout``/``identity``. The same
methods of ``numpy.add`` on a traced array (``__array_ufunc__``) come here too.

Example:
    >>> import funcgrad.numpy as fnp
    >>> fnp.add.outer(fnp.arange(2), fnp.arange(3)).tolist()
    [[0, 1, 2], [1, 2, 3]]
    >>> fnp.multiply.reduce(fnp.arange(1, 5))
    array(24)
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy

import funcgrad.numpy as fnp  # the package, partly built: read at call time
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, operator_index
from funcgrad.core import Tracer
from funcgrad.errors import AxisError
from funcgrad.ops import elementwise as _ew
from funcgrad.ops import reductions
from funcgrad.ops.control_flow.scans import scan
from funcgrad.ops.custom_derivatives import custom_jvp

__all__ = ["ufunc_method", "install", "ufunc", "frompyfunc"]

#: ufunc -> the funcgrad.numpy reduction that is its ``reduce`` (any axes, ``initial``,
#: ``where``); fmax/fmin skip NaNs, as the nan-reductions do (all-NaN gives NaN in both)
_REDUCERS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
             "logical_and": "all", "logical_or": "any", "fmax": "nanmax", "fmin": "nanmin"}
#: ufunc -> the cumulative function (funcgrad.numpy's, else funcgrad.ops.reductions') that is
#: its ``accumulate``
_ACCUMULATORS = {"add": "cumsum", "multiply": "cumprod", "maximum": "cummax",
                 "minimum": "cummin"}
#: ufunc -> the ``x.at[i]`` update that is its unbuffered ``at`` (repeated indices accumulate)
_SCATTERS = {"add": "add", "multiply": "multiply", "maximum": "max", "minimum": "min"}


#: ufuncs whose NumPy loops all give bool: their reductions fold in bool, so only dtype=bool
#: has a loop, and a comparison of non-bool values cannot feed its bool result back in
_LOGICAL = frozenset(("logical_and", "logical_or", "logical_xor"))
_COMPARISONS = frozenset(("equal", "not_equal", "less", "less_equal", "greater",
                          "greater_equal"))


def _check_bool_fold(name: str, method: str, a: Any, dtype: Any) -> None:
    """NumPy's ``TypeError`` for a reduction of a bool-valued ufunc that has no loop: a
    dtype other than bool, or (comparisons) non-bool input, whose bool partial result
    would meet the next element's dtype."""
    if name not in _LOGICAL and name not in _COMPARISONS:
        return
    dt = numpy.dtype(fnp.asarray(a).dtype if dtype is None else dtype)
    if dt != numpy.bool_ and (dtype is not None or name in _COMPARISONS):
        raise TypeError(f"{name}.{method}: No loop matching the specified signature and "
                        f"casting was found for ufunc {name} (it gives bool; a {method} "
                        f"over {dt} would feed that bool back in)")


def _outer(fn: Any, a: Any, b: Any, **kwargs: Any) -> Any:
    # Every element of a against every element of b, a's axes first (Python data beside a
    # device array goes to its device).
    a, b = (fnp.asarray(v) for v in fnp._shape._arrs_together(a, b))
    return fn(fnp.reshape(a, tuple(a.shape) + (1,) * b.ndim), b, **kwargs)


def _fold(fn: Any, a: Any, axis: Any, keep_all: bool, reorderable: bool | None = None,
          dtype: Any = None) -> Any:
    """``fn`` folded left along ``axis`` (NumPy's order: ``((a0 op a1) op a2) ...``), for a
    ufunc with no reduction of its own; ``keep_all``: every partial result (accumulate).
    ``reorderable``: whether several axes may be folded at once (default: NumPy's answer
    for the ufunc of ``fn``'s name); ``dtype``: the fold's dtype (default ``fn``'s)."""
    a = fnp.asarray(a)
    if reorderable is None:
        reorderable = _reorderable(fn.__name__)
    if isinstance(axis, tuple) and len(axis) == 1:
        axis = axis[0]
    if axis is None and a.ndim <= 1:
        a, axis = fnp.ravel(a), 0
    if not isinstance(axis, int | numpy.integer) and not keep_all and reorderable:
        # Several axes (None: all) of a reorderable ufunc (hypot, gcd, bitwise_and, ...): one
        # fold over them flattened, in front.
        axes = tuple(range(a.ndim)) if axis is None else tuple(
            int(ax) % a.ndim for ax in axis)
        rest = [d for d in range(a.ndim) if d not in axes]
        a = fnp.reshape(fnp.transpose(a, axes + tuple(rest)),
                        (-1,) + tuple(a.shape[d] for d in rest))
        axis = 0
    if not isinstance(axis, int | numpy.integer):  # NumPy's words
        raise ValueError(f"reduction operation '{fn.__name__}' is not reorderable, so at most "
                         "one axis may be specified")
    moved = fnp.moveaxis(a, int(axis), 0)
    if moved.shape[0] == 0:
        raise ValueError(f"zero-size array to reduction operation {fn.__name__} which has no "
                         "identity")
    first = fnp.reshape(moved[:1], moved.shape[1:])  # an array where a is (moved[0] of a
    # host vector would be a NumPy scalar, which the loop would put on the default device)
    if dtype is None:
        dtype = fn(first, first).dtype  # the fold's result dtype
    carry0 = fnp.asarray(first, dtype=dtype)

    def step(carry: Any, x: Any) -> tuple[Any, Any]:
        out = fnp.asarray(fn(carry, x), dtype=carry0.dtype)
        return out, out

    last, parts = scan(step, carry0, moved[1:])
    if not keep_all:
        return last
    return fnp.moveaxis(fnp.concatenate([carry0[None], parts], 0), 0, int(axis))


def _reduce(fn: Any, a: Any, axis: Any = 0, dtype: Any = None, out: Any = None,
            keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
    name = fn.__name__
    if out is not None:
        raise TypeError(f"{name}.reduce: out= is not supported (funcgrad arrays are immutable)")
    reducer = _REDUCERS.get(name)
    if reducer is not None:
        kw: dict[str, Any] = {"axis": axis, "keepdims": keepdims}
        if dtype is not None:
            if reducer in ("sum", "prod"):
                kw["dtype"] = dtype
            elif reducer in ("all", "any") and numpy.dtype(dtype) != numpy.bool_:
                raise TypeError(f"{name}.reduce: no loop for dtype={numpy.dtype(dtype)} "
                                "(the logical ufuncs reduce to bool)")
            else:  # max/min take no dtype=: NumPy's loop runs on a cast to it
                a = fnp.asarray(a, dtype=dtype)
        if initial is not None:
            if reducer in ("all", "any"):  # NumPy folds the initial value in first
                res = getattr(fnp, reducer)(a, axis=axis, keepdims=keepdims, where=where)
                combine = fnp.logical_and if reducer == "all" else fnp.logical_or
                return combine(res, bool(initial))
            kw["initial"] = initial
        if where is not None:
            kw["where"] = where
        return getattr(fnp, reducer)(a, **kw)
    _check_bool_fold(name, "reduce", a, dtype)
    a = fnp.asarray(a)
    if dtype is not None:
        a = fnp.asarray(a, dtype=dtype)  # NumPy's loop runs in dtype (no int8 wrap-around
        # below it; a cast of the array's own would saturate floats on CUDA)
    if a.ndim == 0:  # NumPy reduces a 0-d array over axis None (or 0) to itself
        _reduce_axes(name, axis, 1)
        a, axes, final = fnp.reshape(a, (1,)), (0,), ()
    else:
        axes = _reduce_axes(name, axis, a.ndim)
        final = tuple(1 if d in axes else n for d, n in enumerate(a.shape)
                      if keepdims or d not in axes)
    identity = getattr(numpy, name).identity
    if not axes and initial is None and where is None:
        # no axes (axis=()): every element is its own reduction, in the fold's dtype
        return fnp.reshape(fnp.asarray(a, dtype=_fold_dtype(fn, a, dtype)), final)
    if initial is None and where is None:
        if a.size == 0 and identity is not None:
            fd = _fold_dtype(fn, a, dtype)
            # (bitwise_and's identity -1 is all ones: 255 in uint8, as NumPy's cast wraps)
            res = fnp.full(final, numpy.asarray(identity).astype(fd), fd,
                           device=get_aval(a).device)
        else:
            res = _fold(fn, a, axes[0] if len(axes) == 1 else axes, keep_all=False,
                        dtype=dtype)
        return fnp.reshape(res, final)
    if initial is None:
        if identity is None:  # NumPy's words
            raise ValueError(f"reduction operation '{name}' does not have an identity, so to "
                             "use a where mask one has to specify 'initial'")
        initial = identity
    if len(axes) > 1 and not _reorderable(name):
        raise ValueError(f"reduction operation '{name}' is not reorderable, so at most one "
                         "axis may be specified")
    dtype = _fold_dtype(fn, a, dtype)
    # The reduced axes in front, as one: a fold from initial, masked rows leaving it alone.
    rest = tuple(d for d in range(a.ndim) if d not in axes)
    rest_shape = tuple(a.shape[d] for d in rest)
    # (the reduced length spelled out: -1 is ambiguous when the other axes have size 0)
    n_red = math.prod(a.shape[d] for d in axes)
    moved = fnp.reshape(fnp.transpose(a, axes + rest), (n_red,) + rest_shape)
    if where is not None:
        # a constant mask (a list, a host array) goes where a is
        where = fnp.asarray(where, device=get_aval(a).device)
        if where.dtype != numpy.bool_:
            raise TypeError(f"{name}.reduce: where must be a boolean mask, got {where.dtype}")
        where = fnp.reshape(fnp.transpose(fnp.broadcast_to(where, a.shape), axes + rest),
                            (n_red,) + rest_shape)
    if not isinstance(initial, Tracer):  # a constant: it goes where a is
        initial = device_put(numpy.asarray(initial).astype(dtype), get_aval(a).device)
    start = fnp.broadcast_to(fnp.asarray(initial).astype(dtype), rest_shape)

    def step(acc: Any, x: Any) -> tuple[Any, None]:
        row, keep = x
        new = fnp.asarray(fn(acc, row)).astype(dtype)
        return (new if keep is None else fnp.where(keep, new, acc)), None

    res = scan(step, start, (moved, where))[0] if moved.shape[0] else start
    return fnp.reshape(res, final)


def _reduce_axes(name: str, axis: Any, ndim: int) -> tuple[int, ...]:
    """The sorted, non-negative axes ``axis`` (an int, a tuple, None: all) names."""
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple | list) else (axis,)
    out = []
    for ax in axes:
        ax = operator_index(ax)
        if not -ndim <= ax < ndim:
            raise AxisError(f"{name}.reduce: axis {ax} is out of bounds for array of "
                            f"dimension {ndim}")
        out.append(ax % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{name}.reduce: duplicate value in 'axis'")
    return tuple(sorted(out))


def _fold_dtype(fn: Any, a: Any, dtype: Any) -> Any:
    """The dtype a fold of ``fn`` over ``a`` computes in: ``dtype``, else ``fn``'s on two
    elements of ``a``'s dtype."""
    if dtype is not None:
        return numpy.dtype(dtype)
    one = fnp.ones((), a.dtype)
    return fnp.asarray(fn(one, one)).dtype


def _shifted(x: Any, axis: int, k: int) -> Any:
    """``x`` moved ``k`` places forward along ``axis``, zeros coming in: ``out[i] = x[i - k]``."""
    n = x.shape[axis]
    body = x[(slice(None),) * axis + (slice(0, max(n - k, 0)),)]
    widths = [(0, 0)] * x.ndim
    widths[axis] = (min(k, n), 0)
    return fnp.pad(body, widths)


def _linear_recurrence(a: Any, c: Any, axis: int) -> Any:
    """``t[i] = a[i] t[i-1] + c[i]`` along ``axis`` (``t[-1] = 0``), in log2(n) doubling
    steps: linear in ``c``, so it transposes."""
    k, n = 1, c.shape[axis]
    while k < n:
        c = _ew.add(c, _ew.mul(a, _shifted(c, axis, k)))
        a = _ew.mul(a, _shifted(a, axis, k))
        k *= 2
    return c


def _folded_extremum(name: str, prim: Any) -> Any:
    """The running max/min of floats as jax.numpy's ``maximum.accumulate`` defines it: values
    from the fast primitive; the derivative of the left fold ``y[i] = maximum(y[i-1], x[i])``,
    where a tie gives half to each side at every step (lax.max's rule), so ties down a run
    share the tangent in halves, and a NaN gets none (``lax.cummax`` differs: its tree)."""

    def run(x: Any, axis: int) -> Any:
        return prim(x, axis=axis)

    f = custom_jvp(run, nondiff_argnums=(1,))

    @f.defjvp
    def _jvp(axis: int, primals: tuple, tangents: tuple) -> tuple:
        (x,), (t,) = primals, tangents
        y = f(x, axis)  # (itself, so that derivatives of this rule keep it)
        with_prev = _ew.eq(_shifted(y, axis, 1), y)
        with_new = _ew.eq(x, y)
        one, half, zero = (fnp.asarray(v, dtype=y.dtype) for v in (1.0, 0.5, 0.0))
        keep = fnp.where(with_prev, fnp.where(with_new, half, one), zero)
        take = fnp.where(with_new, fnp.where(with_prev, half, one), zero)
        first = _shifted(fnp.ones_like(y), axis, 1)  # 0 at the first element, 1 after
        # the first element is x[0] itself: all of its tangent, nothing carried in
        keep = _ew.mul(keep, first)
        take = fnp.where(_ew.eq(first, 0), one, take)
        return y, _linear_recurrence(keep, _ew.mul(take, t), axis)

    f.__name__ = name
    return f


#: cummax/cummin of floats with jax.numpy's maximum/minimum.accumulate derivative
_FOLDED_EXTREMA = {"cummax": _folded_extremum("cummax", reductions.cummax),
                   "cummin": _folded_extremum("cummin", reductions.cummin)}


def _accumulate(fn: Any, a: Any, axis: int = 0, dtype: Any = None, out: Any = None) -> Any:
    if out is not None:
        raise TypeError(f"{fn.__name__}.accumulate: out= is not supported (funcgrad arrays "
                        "are immutable)")
    _check_bool_fold(fn.__name__, "accumulate", a, dtype)
    a = fnp.asarray(a)
    if a.ndim == 0:  # NumPy's words (cumsum would flatten it to one element)
        raise TypeError(f"{fn.__name__}.accumulate: cannot accumulate on a scalar")
    if dtype is not None:  # NumPy's loop runs in dtype: the inputs are cast, not the result
        a = fnp.asarray(a, dtype=dtype)
    if a.size == 0:  # nothing to fold: an empty array of the fold's dtype, as NumPy
        reductions._cum_wrapper_args(f"{fn.__name__}.accumulate", a, axis)  # (axis checks)
        return fnp.zeros_like(a, dtype=_fold_dtype(fn, a, dtype))
    cumulative = _ACCUMULATORS.get(fn.__name__)
    if cumulative in _FOLDED_EXTREMA and a.dtype.kind == "f":
        # (the axis checked as the primitive checks it: rank >= 1, an int in range)
        res = _FOLDED_EXTREMA[cumulative](
            a, reductions._cum_wrapper_args(f"{fn.__name__}.accumulate", a, axis))
    elif cumulative is not None:
        res = getattr(fnp, cumulative, None) or getattr(reductions, cumulative)
        res = res(a, axis=axis)
    else:
        res = _fold(fn, a, axis, keep_all=True, dtype=dtype)
    return res if dtype is None else fnp.asarray(res, dtype=dtype)


def _at(fn: Any, a: Any, indices: Any, b: Any = None, *, inplace: bool = True) -> Any:
    """``a`` with ``fn`` applied at ``indices`` (unbuffered: a repeated index applies again),
    returned as a new array: as JAX, ``inplace=False`` is required (arrays are immutable)."""
    name = fn.__name__
    if inplace:
        raise ValueError(f"{name}.at: funcgrad arrays are immutable, so in-place updates are "
                         "not supported: pass inplace=False and use the returned array "
                         f"(fnp.{name}.at(a, indices, b, inplace=False); numpy.{name}.at "
                         "has no such option)")
    if b is None:
        raise TypeError(f"{name}.at: a binary ufunc needs the operand b")
    if name == "subtract":
        return fnp.at(a)[indices].add(fnp.negative(b))
    scatter = _SCATTERS.get(name)
    if scatter is not None:
        return getattr(fnp.at(a)[indices], scatter)(b)
    # Any other ufunc: one update after another, in index order (NumPy's unbuffered order).
    a = fnp.asarray(a)
    return _at_scan(fn, a, indices, (b,), a.dtype)


def _at_scan(fn: Any, a: Any, indices: Any, args: tuple, dtype: Any) -> Any:
    """``a`` (as ``dtype``) with ``fn(a[idx], *args)`` written at each index in turn, as
    NumPy's unbuffered ``ufunc.at``: ``indices`` an index or a tuple of integer (arrays) and
    slices; the integer arrays broadcast together, ``args``' leading axes follow them."""
    a = fnp.asarray(a, dtype=dtype)
    # constant operands (a Python 2.0) go where a is
    args = tuple(fnp.asarray(v if isinstance(v, Tracer) else device_put(v, get_aval(a).device))
                 .astype(dtype) for v in args)
    idx = indices if isinstance(indices, tuple) else (indices,)
    if not idx:
        return a
    arrays = [fnp.asarray(i) for i in idx if not isinstance(i, slice)]
    for i in arrays:
        if i.dtype.kind not in "iu":
            raise TypeError(f"{getattr(fn, '__name__', fn)}.at: indices must be integers or "
                            f"slices, got {i.dtype}")
    shape = numpy.broadcast_shapes(*(tuple(i.shape) for i in arrays)) if arrays else ()
    if not shape:  # scalar indices and slices: one update
        return fnp.at(a)[idx].set(fn(a[idx], *args))
    count = int(numpy.prod(shape))
    # constant indices (host arrays) go where a is: the loop carries them as its inputs
    flat = [fnp.ravel(fnp.broadcast_to(i if isinstance(i, Tracer)
                                       else device_put(i, get_aval(a).device), shape))
            for i in arrays]
    vals = [fnp.reshape(fnp.broadcast_to(v, shape + tuple(v.shape[len(shape):])),
                        (count,) + tuple(v.shape[len(shape):])) for v in args]

    def step(x: Any, iv: tuple[list, list]) -> tuple[Any, None]:
        ks, vs = iter(iv[0]), iv[1]
        where = tuple(i if isinstance(i, slice) else next(ks) for i in idx)
        return fnp.at(x)[where].set(fn(x[where], *vs)), None

    return scan(step, a, (flat, vals))[0]


def _reduceat(fn: Any, a: Any, indices: Any, axis: int = 0, dtype: Any = None,
              out: Any = None) -> Any:
    """``fn`` reduced over ``a[indices[i]:indices[i + 1]]`` along ``axis`` for each ``i``
    (to the end for the last; just ``a[indices[i]]`` where ``indices[i] >= indices[i + 1]``),
    NumPy's ``ufunc.reduceat``. Folded over the axis once, each position added to the
    segments it belongs to, so traced ``indices`` work too (JAX's method)."""
    name = getattr(fn, "__name__", "ufunc")
    if out is not None:
        raise TypeError(f"{name}.reduceat: out= is not supported (funcgrad arrays are "
                        "immutable)")
    _check_bool_fold(name, "reduceat", a, dtype)
    a = fnp.asarray(a)
    if a.ndim == 0:
        raise ValueError(f"{name}.reduceat: a must have 1 or more dimension, got shape ()")
    if axis is None or isinstance(axis, tuple | list):
        raise ValueError(f"{name}.reduceat requires a single integer axis")
    axis = int(axis)
    if not -a.ndim <= axis < a.ndim:
        raise ValueError(f"{name}.reduceat: axis {axis} is out of bounds for an array of "
                         f"dimension {a.ndim}")
    axis %= a.ndim
    idx = fnp.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{name}.reduceat: indices must be integers, got {idx.dtype}")
    if idx.ndim != 1:
        raise ValueError(f"{name}.reduceat: indices must be one-dimensional, got shape "
                         f"{tuple(idx.shape)}")
    n = a.shape[axis]
    if not isinstance(idx, Tracer):
        host = numpy.asarray(idx.get() if hasattr(idx, "get") else idx)
        bad = host[(host < 0) | (host >= n)]
        if bad.size:  # NumPy's words
            raise IndexError(f"index {int(bad[0])} out-of-bounds in {name}.reduceat [0, {n})")
    if dtype is None:
        dtype = _reduceat_dtype(fn, a)
    device = get_aval(a).device
    if not isinstance(idx, Tracer):
        idx = device_put(idx, device)  # concrete indices are metadata: they go where a is
    moved = fnp.moveaxis(a, axis, 0).astype(dtype)
    rest = (1,) * (moved.ndim - 1)
    start = fnp.reshape(idx, (-1,) + rest)
    end = fnp.reshape(fnp.pad(idx[1:], (0, 1), constant_values=n), (-1,) + rest)
    first = fnp.take(moved, idx, axis=0)

    def step(acc: Any, kx: tuple[Any, Any]) -> tuple[Any, None]:
        k, row = kx
        inside = (k > start) & (k < end)
        return fnp.where(inside, fnp.asarray(fn(acc, row), dtype=dtype), acc), None

    # Rows of shape (1, ...): a 0-d row of a host vector would be a NumPy scalar, which an
    # operation on it alone would put on the default device.
    res = scan(step, first, (fnp.arange(n, device=device), moved[:, None]))[0]
    return fnp.moveaxis(res, 0, axis)


def _reduceat_dtype(fn: Any, a: Any) -> Any:
    """NumPy's result dtype of ``fn.reduceat`` on ``a`` (``add`` of small integers or bools
    gives the default integer, as ``reduce``), else ``fn``'s own dtype on ``a``'s."""
    np_ufunc = getattr(numpy, getattr(fn, "__name__", ""), None)
    if isinstance(np_ufunc, numpy.ufunc) and getattr(fnp, fn.__name__, None) is fn:
        try:
            return np_ufunc.reduceat(numpy.zeros(1, a.dtype), [0]).dtype
        except TypeError:
            pass  # no NumPy loop for this dtype
    one = fnp.zeros((), a.dtype)
    return fn(one, one).dtype


@functools.cache
def _reorderable(name: str) -> bool:
    """Whether NumPy reduces the ufunc ``name`` over several axes at once (associative and
    commutative), asked of NumPy itself on a 1x1 array."""
    ufunc = getattr(numpy, name)
    for dtype in (numpy.float64, numpy.int64, numpy.bool_):
        try:
            ufunc.reduce(numpy.ones((1, 1), dtype), axis=None)
        except TypeError:
            continue  # no loop for this dtype: try another
        except ValueError:
            return False
        return True
    return False



def ufunc_method(fn: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """``fn.<method>(*inputs, **kwargs)`` for the binary funcgrad.numpy function ``fn``
    (``method``: ``"outer"``, ``"reduce"``, ``"accumulate"``, ``"at"`` or ``"reduceat"``).

    Example:
        >>> import funcgrad.numpy as fnp
        >>> ufunc_method(fnp.maximum, "accumulate", fnp.asarray([1, 3, 2])).tolist()
        [1, 3, 3]
    """
    impl = {"outer": _outer, "reduce": _reduce, "accumulate": _accumulate, "at": _at,
            "reduceat": _reduceat}.get(method)
    if impl is None:
        raise TypeError(f"numpy.{fn.__name__}.{method} is not supported by funcgrad.numpy")
    return impl(fn, *inputs, **kwargs)


def install(namespace: dict) -> None:
    """Give each binary ufunc of ``namespace`` (funcgrad.numpy's) JAX's ufunc methods and
    attributes (``outer``, ``reduce``, ``accumulate``, ``at``, ``reduceat``), where NumPy has
    that name as a two-operand ufunc; every ufunc's counterpart gets NumPy's ``nin``, ``nout``,
    ``nargs`` and ``identity`` (None where there is none).

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.add.nin, fnp.add.identity
        (2, 0)
    """
    for name, fn in list(namespace.items()):
        np_ufunc = getattr(numpy, name, None)
        if not (isinstance(np_ufunc, numpy.ufunc) and callable(fn)
                and getattr(fn, "__name__", None) == name):
            continue
        # NumPy's arity attributes on every ufunc's counterpart (fnp.sin.nin == 1,
        # fnp.divmod.nout == 2): code inspecting them works as with NumPy's ufuncs
        fn.nin, fn.nout, fn.nargs = np_ufunc.nin, np_ufunc.nout, np_ufunc.nargs
        fn.identity = np_ufunc.identity
        if np_ufunc.nin == 1 and np_ufunc.nout == 1:
            fn.at = _unary_at(fn)  # numpy.negative.at(a, indices) (jnp.negative.at)
        if not (np_ufunc.nin == 2 and np_ufunc.nout == 1):
            continue
        for method in ("outer", "reduce", "accumulate", "at", "reduceat"):
            setattr(fn, method, _bound(fn, method))
        fn._is_binary_ufunc = True  # isinstance(fnp.add, fnp.ufunc), as jnp.add's


def _unary_at(fn: Any) -> Any:
    def at(a: Any, indices: Any, /, *, inplace: bool = True) -> Any:
        name = fn.__name__
        if inplace:
            raise ValueError(f"{name}.at: funcgrad arrays are immutable, so in-place updates "
                             "are not supported: pass inplace=False and use the returned "
                             f"array (fnp.{name}.at(a, indices, inplace=False))")
        # NumPy writes the results back into a, cast to its dtype whatever they are
        # (numpy.sin.at on an int array truncates; isnan.at on floats writes 0.0 / 1.0)
        return _at_scan(fn, a, indices, (), get_aval(fnp.asarray(a)).dtype)

    at.__name__ = at.__qualname__ = f"{fn.__name__}.at"
    at.__doc__ = (f"``numpy.{fn.__name__}.at(a, indices)`` as a new array (``inplace=False``, "
                  "as JAX's): a repeated index applies again.")
    return at


def _bound(fn: Any, method: str) -> Any:
    def call(*inputs: Any, **kwargs: Any) -> Any:
        return ufunc_method(fn, method, *inputs, **kwargs)

    call.__name__ = call.__qualname__ = f"{fn.__name__}.{method}"
    call.__doc__ = f"``numpy.{fn.__name__}.{method}``, as ``jax.numpy.{fn.__name__}.{method}``."
    return call


# ---------------------------------------------------------------------------------------------
# User ufuncs: jnp.ufunc / jnp.frompyfunc


class _UfuncType(type):
    """``isinstance(fnp.add, fnp.ufunc)`` is True, as for ``jnp.add``: the binary functions
    that :func:`install` gave the ufunc methods count as ufuncs."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return type.__instancecheck__(cls, obj) or getattr(obj, "_is_binary_ufunc", False)


class ufunc(metaclass=_UfuncType):  # noqa: N801  (NumPy's and JAX's name)
    """A ufunc made from a function of scalars, as ``jax.numpy.ufunc``: calling it maps the
    function over its broadcast arguments (:func:`funcgrad.numpy.vectorize`); a two-operand,
    one-result ufunc also has ``outer``, ``reduce``, ``accumulate``, ``reduceat`` and ``at``
    (folds in NumPy's order, so differentiable, jit-able and batchable). Usually made by
    :func:`frompyfunc`.

    Example:
        >>> import operator, numpy as np
        >>> add = ufunc(operator.add, 2, 1, identity=0)
        >>> add.accumulate(np.arange(4)).tolist()
        [0, 1, 3, 6]
    """

    def __init__(self, func: Any, /, nin: int, nout: int, *, name: str | None = None,
                 nargs: int | None = None, identity: Any = None) -> None:
        if not callable(func):
            raise TypeError(f"ufunc: func must be callable, got {type(func).__name__}")
        self._func = func
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self.__doc__ = func.__doc__
        self.nin = operator_index(nin)
        self.nout = operator_index(nout)
        self.nargs = operator_index(nargs or nin)
        self.identity = identity
        if self.nin < 1 or self.nout < 1:
            raise ValueError(f"ufunc {self.__name__!r}: nin and nout must be positive, got "
                             f"{nin} and {nout}")

    def __repr__(self) -> str:
        return f"<funcgrad.numpy.ufunc '{self.__name__}'>"

    def __hash__(self) -> int:
        return hash((self._func, self.__name__, self.identity, self.nin, self.nout, self.nargs))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ufunc) and (
            (self._func, self.__name__, self.identity, self.nin, self.nout, self.nargs)
            == (other._func, other.__name__, other.identity, other.nin, other.nout,
                other.nargs))

    def __call__(self, *args: Any, out: Any = None, where: Any = None) -> Any:
        if out is not None or where is not None:
            raise TypeError(f"{self.__name__}: out= and where= are not supported (funcgrad "
                            "arrays are immutable; use funcgrad.numpy.where on the result)")
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__} takes {self.nin} argument(s), got {len(args)}")
        res = fnp.vectorize(self._func)(*args)
        if self.nout > 1 and not (isinstance(res, tuple) and len(res) == self.nout):
            raise ValueError(f"{self.__name__}: the function was declared with nout="
                             f"{self.nout} but returned {type(res).__name__}")
        return res

    def _binary(self, method: str) -> None:
        if self.nin != 2:
            raise ValueError(f"{self.__name__}.{method} is only supported for binary ufuncs")
        if self.nout != 1:
            raise ValueError(f"{self.__name__}.{method} is only supported for functions "
                             "returning a single value")

    def _dtype(self, *arrays: Any) -> Any:
        ones = [fnp.ones((), fnp.asarray(v).dtype) for v in arrays]
        return fnp.asarray(self(*ones)).dtype

    def outer(self, A: Any, B: Any, /) -> Any:  # noqa: N803
        """Every element of ``A`` against every element of ``B`` (``A``'s axes first)."""
        self._binary("outer")
        return _outer(self, A, B)

    def reduce(self, a: Any, axis: Any = 0, dtype: Any = None, out: Any = None,
               keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
        """Fold along ``axis`` (``None``: all, flattened) from ``initial`` (default the
        ``identity``, else the first element); ``where`` masks elements out (needs an
        ``identity`` or ``initial``), as ``jax.numpy.ufunc.reduce``."""
        self._binary("reduce")
        if out is not None:
            raise TypeError(f"{self.__name__}.reduce: out= is not supported (funcgrad arrays "
                            "are immutable)")
        a = fnp.asarray(a)
        if initial is None:
            initial = self.identity
        if where is not None:
            if initial is None:
                raise ValueError(f"reduction operation {self.__name__!r} does not have an "
                                 "identity, so to use a where mask one has to specify "
                                 "'initial'")
            where = fnp.asarray(where)
            if where.dtype != numpy.bool_:
                raise ValueError(f"{self.__name__}.reduce: where must have dtype bool, got "
                                 f"{where.dtype}")
            where = fnp.broadcast_to(where, a.shape)
        if dtype is None:
            dtype = self._dtype(a, a)
        if isinstance(axis, tuple | list):
            if len(axis) != 1:
                raise ValueError(f"{self.__name__}.reduce: a user ufunc reduces over one axis "
                                 "(or all, axis=None), not several")
            axis = axis[0]
        if axis is None:
            final = (1,) * a.ndim if keepdims else ()
            a = fnp.ravel(a)
            where = None if where is None else fnp.ravel(where)
            axis = 0
        else:
            axis = int(axis)
            if not -a.ndim <= axis < a.ndim:
                raise ValueError(f"{self.__name__}.reduce: axis {axis} is out of bounds for "
                                 f"an array of dimension {a.ndim}")
            axis %= a.ndim
            final = tuple(a.shape[:axis]) + ((1,) if keepdims else ()) + tuple(
                a.shape[axis + 1:])
        moved = fnp.moveaxis(a, axis, 0).astype(dtype)
        if where is not None:
            where = fnp.moveaxis(where, axis, 0)
        if moved.shape[0] == 0:
            if initial is None:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} "
                                 "which has no identity")
            return fnp.full(final, initial, dtype, device=get_aval(a).device)
        if initial is None and where is None:
            res = _fold(self, moved, 0, keep_all=False, reorderable=False, dtype=dtype)
        else:
            if not isinstance(initial, Tracer):  # a constant: it goes where a is
                initial = device_put(fnp.asarray(initial, dtype=dtype), get_aval(a).device)
            start = fnp.broadcast_to(fnp.asarray(initial, dtype=dtype), moved.shape[1:])

            def step(acc: Any, x: Any) -> tuple[Any, None]:
                row, keep = x
                new = fnp.asarray(self(acc, row), dtype=dtype)
                return (new if keep is None else fnp.where(keep, new, acc)), None

            res = scan(step, start, (moved, where))[0]
        return fnp.reshape(res, final)

    def accumulate(self, a: Any, axis: int = 0, dtype: Any = None, out: Any = None) -> Any:
        """Every partial fold along ``axis``."""
        self._binary("accumulate")
        if out is not None:
            raise TypeError(f"{self.__name__}.accumulate: out= is not supported (funcgrad "
                            "arrays are immutable)")
        if axis is None or isinstance(axis, tuple | list):
            raise ValueError(f"{self.__name__}.accumulate does not allow multiple axes")
        a = fnp.asarray(a)
        if a.ndim == 0:  # NumPy's words
            raise TypeError(f"{self.__name__}.accumulate: cannot accumulate on a scalar")
        if dtype is None:
            dtype = self._dtype(a, a)
        if a.size == 0:
            return fnp.zeros(a.shape, dtype, device=get_aval(a).device)
        return _fold(self, a.astype(dtype), int(axis), keep_all=True, reorderable=False,
                     dtype=dtype)

    def reduceat(self, a: Any, indices: Any, axis: int = 0, dtype: Any = None,
                 out: Any = None) -> Any:
        """The fold over each segment ``a[indices[i]:indices[i + 1]]`` (see
        ``numpy.ufunc.reduceat``)."""
        self._binary("reduceat")
        return _reduceat(self, a, indices, axis=axis, dtype=dtype, out=out)

    def at(self, a: Any, indices: Any, b: Any = None, /, *, inplace: bool = True) -> Any:
        """``a`` with the function applied at ``indices`` (a repeated index applies again),
        returned as a new array: ``inplace=False`` is required, as in JAX."""
        if inplace:
            raise ValueError(f"{self.__name__}.at: funcgrad arrays are immutable, so in-place "
                             "updates are not supported: pass inplace=False and use the "
                             "returned array")
        if self.nout != 1:
            raise ValueError(f"{self.__name__}.at is only supported for functions returning "
                             "a single value")
        args = () if b is None else (b,)
        if len(args) + 1 != self.nin:
            raise TypeError(f"{self.__name__}.at: a ufunc of {self.nin} input(s) takes "
                            f"{self.nin - 1} operand(s) besides a and indices")
        return _at_scan(self, a, indices, args, self._dtype(a, *args))


def frompyfunc(func: Any, /, nin: int, nout: int, *, identity: Any = None) -> ufunc:
    """A :class:`ufunc` from a function of ``nin`` scalars returning ``nout`` values, as
    ``jax.numpy.frompyfunc`` (NumPy's makes object arrays; here the function is traced on
    array elements, so it must use funcgrad operations, and the result is differentiable).

    Example:
        >>> import operator, numpy as np, funcgrad.numpy as fnp
        >>> add = fnp.frompyfunc(operator.add, nin=2, nout=1, identity=0)
        >>> add.outer(np.arange(2), np.arange(3)).tolist()
        [[0, 1, 2], [1, 2, 3]]
        >>> add.reduceat(np.arange(6), np.array([0, 2])).tolist()
        [1, 14]
    """
    return ufunc(func, nin, nout, identity=identity)
