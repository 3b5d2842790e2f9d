"""funcgrad.numpy: shape manipulation, joining, splitting, tiling, flipping, padding.

Everything here is built from the shape primitives (and, for the statistic and ramp modes of
``pad``, from funcgrad.numpy reductions), so it differentiates and batches. Counts and axes (split points, shifts, repeats, pad widths) are
static and must be concrete.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy

import funcgrad.numpy as fnp
import funcgrad.numpy._extended as _ext
import funcgrad.ops.elementwise as _ew
import funcgrad.ops.shape as _shape
from funcgrad.avals import canonical_dtype, get_aval
from funcgrad.backend import (
    device_of,
    device_put,
    get_default_device,
    operator_index,
    to_numpy,
    xp_for_device,
)
from funcgrad.config import dtype_promotion
from funcgrad.core import Tracer, concrete_or_error
from funcgrad.errors import ShapeError
from funcgrad.numpy._creation import array, asarray, with_out_sharding
from funcgrad.numpy._dtype_utils import check_python_ints_fit
from funcgrad.numpy._elementwise import check_strict_dtypes
from funcgrad.ops._util import broadcast_shapes_or_error, normalize_axis

__all__ = [
    "reshape",
    "ravel",
    "transpose",
    "permute_dims",
    "matrix_transpose",
    "moveaxis",
    "swapaxes",
    "squeeze",
    "expand_dims",
    "broadcast_to",
    "broadcast_arrays",
    "broadcast_shapes",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "concatenate",
    "concat",
    "stack",
    "hstack",
    "vstack",
    "dstack",
    "column_stack",
    "split",
    "array_split",
    "hsplit",
    "vsplit",
    "dsplit",
    "tile",
    "repeat",
    "flip",
    "fliplr",
    "flipud",
    "roll",
    "rot90",
    "pad",
    "shape",
    "ndim",
    "size",
    "copy",
]


def _arr(x: Any) -> Any:
    """An array (or tracer) from Python data NumPy would accept (scalars, nested lists); an
    array of another library (a torch tensor, a JAX array: ``__array__`` / ``__dlpack__``
    without being a NumPy or device array) is refused, as JAX's functions refuse it and as
    funcgrad's elementwise functions do (only ``asarray`` / ``array`` convert it)."""
    if isinstance(x, Tracer):
        return x
    if (not isinstance(x, numpy.ndarray | numpy.generic)
            and (hasattr(x, "__array__") or hasattr(x, "__dlpack__"))
            and device_of(x) is None):
        t = type(x)
        raise TypeError(f"funcgrad.numpy: expected an array, got {t.__module__}."
                        f"{t.__qualname__}; convert it first with funcgrad.numpy.asarray(x)")
    return asarray(x)


def _arrs_together(*vals: Any) -> list[Any]:
    """Arrays from the arguments, the ones made from Python data (scalars, lists) on the
    device of the given arrays: "Python scalars go anywhere" (asarray alone would put them
    on the default device, which device arrays cannot meet)."""
    outs = [_arr(v) for v in vals]
    device = None
    for v, o in zip(vals, outs):
        if isinstance(v, Tracer) or hasattr(v, "__array_namespace__") or hasattr(v, "shape"):
            d = get_aval(o).device
            if d is not None and d != "cpu":
                device = d
                break
    if device is None:
        return outs
    return [device_put(o, device) if isinstance(v, list | tuple | bool | int | float | complex)
            else o for v, o in zip(vals, outs)]


def _axes_tuple(fname: str, axis: Any, ndim: int, argname: str = "axis") -> tuple[int, ...]:
    """Normalised axes in the given order; errors name the function, argument and rank."""
    if isinstance(axis, int | numpy.integer) or getattr(axis, "ndim", None) == 0:
        axis = (axis,)
    # a traced axis: the standard error (axes fix the result's shape, so must be static)
    axis = _static_axes(axis, f"{fname}: {argname}")
    try:
        axes = tuple(operator_index(a) for a in axis)
    except TypeError:
        raise TypeError(
            f"{fname}: {argname} must be an int or a tuple of ints, got {axis!r}"
        ) from None
    name = fname if argname == "axis" else f"{fname} ({argname})"
    out = tuple(normalize_axis(name, a, ndim) for a in axes)
    if len(set(out)) != len(out):
        raise ShapeError(f"{fname}: repeated axis in {argname}={axes}")
    return out


def _static_axes(axis: Any, what: str) -> Any:
    """``axis`` (an axis or a sequence of them) with traced entries made concrete, or the
    standard ConcretizationError: axes fix the result's shape."""
    if isinstance(axis, Tracer):
        return concrete_or_error(axis, what)
    if isinstance(axis, tuple | list) and any(isinstance(a, Tracer) for a in axis):
        return tuple(concrete_or_error(a, what) for a in axis)
    return axis


def _axis(fname: str, axis: Any, ndim: int, argname: str = "axis") -> int:
    axis = _static_axes(axis, f"{fname}: {argname}")
    try:
        axis = operator_index(axis)
    except TypeError:
        raise TypeError(f"{fname}: {argname} must be an int, got {axis!r}") from None
    return normalize_axis(fname if argname == "axis" else f"{fname} ({argname})", axis, ndim)


def _static_int(v: Any, what: str) -> int:
    v = concrete_or_error(v, what)
    if not isinstance(v, int | numpy.integer):
        v = to_numpy(v)
    try:
        return operator_index(v)
    except TypeError:
        raise TypeError(f"{what} must be an integer, got {v!r}") from None


def _static_ints(v: Any, what: str) -> list[int]:
    v = concrete_or_error(v, what)
    if not isinstance(v, list | tuple):
        v = to_numpy(v)
        if numpy.ndim(v) == 0:
            return [_static_int(v[()] if isinstance(v, numpy.ndarray) else v, what)]
        v = v.tolist()
    return [_static_int(x, what) for x in v]


# ---------------------------------------------------------------------------------------------
# Reshaping


def _order(fname: str, order: Any) -> str:
    if order is None:
        return "C"
    if order not in ("C", "F", "A", "K"):
        raise ValueError(f"{fname}: order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    return order


def _is_fortran(a: Any) -> bool:
    """NumPy's ``order='A'`` test: Fortran-contiguous and not C-contiguous.

    Only concrete arrays have a memory layout; traced values (and lists) count as C-ordered.
    """
    flags = None if isinstance(a, Tracer) else getattr(a, "flags", None)
    return flags is not None and bool(flags.f_contiguous) and not bool(flags.c_contiguous)


def _keep_order_perm(a: Any) -> tuple[int, ...] | None:
    """The axis order of NumPy's ``order='K'``: axes by decreasing absolute stride, with
    broadcast (zero-stride) and length-1 axes left in place; None for C order."""
    strides = None if isinstance(a, Tracer) else getattr(a, "strides", None)
    shp = getattr(a, "shape", ())
    if strides is None or len(strides) != len(shp):
        return None
    movable = [i for i, (n, st) in enumerate(zip(shp, strides)) if n > 1 and st != 0]
    perm = list(range(len(shp)))
    for pos, ax in zip(movable, sorted(movable, key=lambda i: -abs(strides[i]))):
        perm[pos] = ax
    return None if perm == sorted(perm) else tuple(perm)


@with_out_sharding
def reshape(a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None,
            copy: bool | None = None) -> Any:
    """Give ``a`` a new shape (one ``-1`` is inferred), reading and writing the elements in
    C order, Fortran order (``order='F'``) or ``a``'s own layout (``order='A'``).

    Example:
        >>> reshape(numpy.arange(6), (2, -1)).tolist()
        [[0, 1, 2], [3, 4, 5]]
        >>> reshape(numpy.arange(6), (2, -1), order="F").tolist()
        [[0, 2, 4], [1, 3, 5]]
    """
    if _ext.is_extended(a):
        return _ext.reshape(a, shape if newshape is None else newshape)
    if shape is None:
        shape = newshape
    if shape is None:
        raise TypeError("reshape: missing the shape argument")
    order = _order("reshape", order)
    if order == "K":
        raise ValueError("reshape: order 'K' is not permitted for reshaping")
    fortran = order == "F" or order == "A" and _is_fortran(a)
    a = _arr(a)
    if isinstance(shape, int | numpy.integer):
        shape = (shape,)
    shape = tuple(_static_int(s, "reshape: a shape entry") for s in shape)
    # (NumPy takes any negative entry as the unknown dimension, not only -1)
    shape = tuple(-1 if s < 0 else s for s in shape)
    if fortran:
        # Fortran order is C order on the reversed axes: reverse, reshape, reverse back.
        return _shape.transpose(_shape.reshape(_shape.transpose(a), shape[::-1]))
    return _shape.reshape(a, shape)


@with_out_sharding
def ravel(a: Any, order: str = "C") -> Any:
    """The elements of ``a`` as a 1-D array, in C order, Fortran order (``order='F'``), or
    ``a``'s memory order (``'A'``, ``'K'``; traced values have no layout and count as C).

    Example:
        >>> ravel(numpy.ones((2, 3))).shape
        (6,)
        >>> ravel(numpy.array([[1, 2], [3, 4]]), order="F").tolist()
        [1, 3, 2, 4]
    """
    if _ext.is_extended(a):  # a key array: the same function of its element axes
        return _ext.by_index(ravel, a, order)
    order = _order("ravel", order)
    perm = None
    if order == "F" or order == "A" and _is_fortran(a):
        perm = "F"
    elif order == "K":
        perm = _keep_order_perm(a)
    a = _arr(a)
    if perm == "F":
        a = _shape.transpose(a)
    elif perm is not None:
        a = _shape.transpose(a, perm)
    return _shape.reshape(a, (get_aval(a).size,))


def transpose(a: Any, axes: Any = None) -> Any:
    """Permute the axes of ``a`` (reverse them by default).

    Example:
        >>> transpose(numpy.ones((2, 3, 4)), (1, 0, 2)).shape
        (3, 2, 4)
    """
    if _ext.is_extended(a):  # a key array: the same function of its element axes
        return _ext.by_index(transpose, a, axes)
    a = _arr(a)
    nd = get_aval(a).ndim
    if axes is None:
        return _shape.transpose(a)
    perm = _axes_tuple("transpose", axes, nd, "axes")
    if len(perm) != nd:
        raise ShapeError(
            f"transpose: axes {tuple(axes)} don't match an array of rank {nd} "
            f"({get_aval(a).str_short()})"
        )
    return _shape.transpose(a, perm)


def permute_dims(a: Any, axes: Any = None) -> Any:
    """Array-API name of :func:`transpose`.

    Example:
        >>> permute_dims(numpy.ones((2, 3)), (1, 0)).shape
        (3, 2)
    """
    return transpose(a, axes)


def matrix_transpose(x: Any) -> Any:
    """Swap the last two axes of ``x`` (at least 2-D).

    Example:
        >>> matrix_transpose(numpy.ones((4, 2, 3))).shape
        (4, 3, 2)
    """
    x = _arr(x)
    if get_aval(x).ndim < 2:
        raise ShapeError(
            f"matrix_transpose: input must be at least 2-D, got {get_aval(x).str_short()}"
        )
    return _shape.swapaxes(x, -1, -2)


def moveaxis(a: Any, source: Any, destination: Any) -> Any:
    """Move axes ``source`` to positions ``destination`` (ints or sequences).

    Example:
        >>> moveaxis(numpy.zeros((3, 4, 5)), [0, 1], [-1, -2]).shape
        (5, 4, 3)
    """
    if _ext.is_extended(a):  # a key array: the same function of its element axes
        return _ext.by_index(moveaxis, a, source, destination)
    a = _arr(a)
    nd = get_aval(a).ndim
    src = _axes_tuple("moveaxis", source, nd, "source")
    dst = _axes_tuple("moveaxis", destination, nd, "destination")
    if len(src) != len(dst):
        raise ValueError(
            "moveaxis: `source` and `destination` arguments must have the same number of "
            f"elements, got {len(src)} and {len(dst)}"
        )
    order = [n for n in range(nd) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _shape.transpose(a, tuple(order))


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    """Exchange two axes of ``a``.

    Example:
        >>> swapaxes(numpy.zeros((2, 3)), 0, 1).shape
        (3, 2)
    """
    if _ext.is_extended(a):  # a key array: the same function of its element axes
        return _ext.by_index(swapaxes, a, axis1, axis2)
    a = _arr(a)
    nd = get_aval(a).ndim
    return _shape.swapaxes(a, _axis("swapaxes", axis1, nd, "axis1"),
                           _axis("swapaxes", axis2, nd, "axis2"))


def squeeze(a: Any, axis: Any = None) -> Any:
    """Remove size-1 axes (all of them, or those in ``axis``, which must have size 1).

    Example:
        >>> squeeze(numpy.zeros((1, 3, 1)), axis=0).shape
        (3, 1)
    """
    if _ext.is_extended(a):  # a key array: the same function of its element axes
        return _ext.by_index(squeeze, a, axis)
    a = _arr(a)
    av = get_aval(a)
    if axis is None:
        dims = tuple(i for i, s in enumerate(av.shape) if s == 1)
    elif av.ndim == 0 and type(axis) is int and axis in (0, -1):
        return a  # (NumPy lets a bare axis 0 or -1 "squeeze" a 0-d array)
    else:
        dims = _axes_tuple("squeeze", axis, av.ndim)
        for d in dims:
            if av.shape[d] != 1:
                raise ShapeError(
                    f"squeeze: cannot select axis {d} to squeeze out of {av.str_short()}: "
                    f"its size is {av.shape[d]}, not 1"
                )
    return _shape.squeeze(a, dims)


def expand_dims(a: Any, axis: Any) -> Any:
    """Insert size-1 axes at positions ``axis`` (int or tuple) of the result.

    Example:
        >>> expand_dims(numpy.zeros((2, 3)), (0, -1)).shape
        (1, 2, 3, 1)
    """
    if _ext.is_extended(a):
        return _ext.expand_dims(a, axis)
    a = _arr(a)
    if isinstance(axis, int | numpy.integer) or getattr(axis, "ndim", None) == 0:
        n_new = 1
    elif isinstance(axis, tuple | list):
        n_new = len(axis)
    else:
        raise TypeError(f"expand_dims: axis must be an int or a tuple of ints, got {axis!r}")
    dims = _axes_tuple("expand_dims", axis, get_aval(a).ndim + n_new)
    return _shape.expand_dims(a, dims)


def broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    """The shape NumPy broadcasting gives ``shapes``.

    Example:
        >>> broadcast_shapes((2, 1), (3,))
        (2, 3)
    """
    norm = [(s,) if isinstance(s, int | numpy.integer) else tuple(s) for s in shapes]
    return broadcast_shapes_or_error("broadcast_shapes", *norm)


@with_out_sharding
def broadcast_to(array: Any, shape: Any) -> Any:
    """Broadcast ``array`` to ``shape`` (NumPy rules: trailing axes aligned).

    Example:
        >>> broadcast_to(numpy.ones(3), (2, 3)).shape
        (2, 3)
    """
    if _ext.is_extended(array):
        return _ext.broadcast_to(array, shape)
    x = _arr(array)
    a = get_aval(x)
    shape = (shape,) if isinstance(shape, int | numpy.integer) else tuple(
        _static_int(s, "broadcast_to: a shape entry") for s in shape)
    lead = len(shape) - a.ndim
    if lead < 0 or any(
        s not in (1, t) for s, t in zip(a.shape, shape[lead:])
    ) or any(s < 0 for s in shape):
        raise ShapeError(
            f"broadcast_to: cannot broadcast an array of shape {a.shape} to shape {shape}"
        )
    return _shape.broadcast_to(x, shape)


def broadcast_arrays(*args: Any) -> tuple:
    """Broadcast all arguments against each other (returns a tuple, as NumPy 2).

    Example:
        >>> [x.shape for x in broadcast_arrays(numpy.ones((2, 1)), numpy.ones(3))]
        [(2, 3), (2, 3)]
    """
    xs = [_arr(x) for x in args]
    if not xs:
        return ()
    shp = broadcast_shapes_or_error("broadcast_arrays", *(get_aval(x).shape for x in xs))
    return tuple(_shape.broadcast_to(x, shp) for x in xs)


def _atleast(arys: tuple, nd: int) -> Any:
    out = []
    for x in arys:
        x = _arr(x)
        s = get_aval(x).shape
        if len(s) < nd:
            if nd == 3 and len(s) == 1:
                s = (1,) + s + (1,)
            elif nd == 3 and len(s) == 2:
                s = s + (1,)
            else:
                s = (1,) * (nd - len(s)) + s
            x = _shape.reshape(x, s)
        out.append(x)
    return out[0] if len(out) == 1 else tuple(out)  # NumPy 2: () for no arguments


def atleast_1d(*arys: Any) -> Any:
    """Arrays with at least one axis (a tuple when given several).

    Example:
        >>> atleast_1d(1.0).shape
        (1,)
    """
    if len(arys) == 1 and _ext.is_extended(arys[0]):
        return _ext.by_index(atleast_1d, arys[0])
    return _atleast(arys, 1)


def atleast_2d(*arys: Any) -> Any:
    """Arrays with at least two axes (a 1-D array becomes a row).

    Example:
        >>> atleast_2d(numpy.ones(3)).shape
        (1, 3)
    """
    if len(arys) == 1 and _ext.is_extended(arys[0]):
        return _ext.by_index(atleast_2d, arys[0])
    return _atleast(arys, 2)


def atleast_3d(*arys: Any) -> Any:
    """Arrays with at least three axes ((N,) becomes (1, N, 1), (M, N) becomes (M, N, 1)).

    Example:
        >>> atleast_3d(numpy.ones(3)).shape
        (1, 3, 1)
    """
    if len(arys) == 1 and _ext.is_extended(arys[0]):
        return _ext.by_index(atleast_3d, arys[0])
    return _atleast(arys, 3)


# ---------------------------------------------------------------------------------------------
# Joining


def _as_sequence(arrays: Any, fname: str) -> list[Any]:
    if isinstance(arrays, Tracer) or device_of(arrays) is not None:
        x = _arr(arrays)
        n = get_aval(x).shape[0] if get_aval(x).ndim else 0
        if get_aval(x).ndim == 0:
            raise ShapeError(f"{fname}: a 0-d array is not a sequence of arrays")
        return [_shape.index_in_dim(x, i, 0, keepdims=False) for i in range(n)]
    if isinstance(arrays, dict | set) or not hasattr(arrays, "__iter__"):
        raise TypeError(f"{fname}: expected a sequence of arrays, got {type(arrays).__name__}")
    xs = _arrs_together(*arrays)  # Python data among device arrays goes to their device
    if not xs:
        raise ValueError(f"{fname}: need at least one array")
    return xs


_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


_PY_SCALARS = (bool, int, float, complex)


_WEAK_STAND_INS = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}


def _weak_value(a: Any) -> Any:
    if type(a) in _PY_SCALARS:
        return a
    if isinstance(a, Tracer):
        # A Python scalar argument under jit (weak-typed): it promotes as it does eagerly.
        av = get_aval(a)
        if av.weak_type and av.ndim == 0:
            return _WEAK_STAND_INS.get(av.dtype.kind)
    return None


def _python_scalars(arrays: Any) -> list[Any]:
    """The elements of a list/tuple that are Python scalars (None elsewhere): NumPy 2's
    ``concatenate`` promotes them as weak values (NEP 50), ``(uint8 array, 3)`` -> uint8."""
    if isinstance(arrays, list | tuple):
        return [_weak_value(a) for a in arrays]
    return []


_dtype_promotion_level = dtype_promotion.get


def _promote(xs: list[Any], dtype: Any, casting: str, fname: str,
             weak: Sequence[Any] = ()) -> list[Any]:
    """``xs`` cast to their common dtype. ``weak[i]`` is the Python scalar ``xs[i]`` came
    from (None for an array): it takes part in promotion by value and kind only, and is cast
    whatever ``casting`` says (NumPy's: ``concatenate((u8, 300), axis=None)`` wraps to 44)."""
    avals = [get_aval(x) for x in xs]
    weak = list(weak) + [None] * (len(xs) - len(weak))
    if casting not in _CASTINGS:
        raise ValueError(f"{fname}: casting must be one of {_CASTINGS}, got {casting!r}")
    if dtype is None and _dtype_promotion_level() != "standard":
        # JAX's jax_numpy_dtype_promotion='strict': the joined arrays' dtypes must agree
        check_strict_dtypes(fname, *[x if w is None else w for x, w in zip(xs, weak)])
    if dtype is None:
        # Strong promotion otherwise: NumPy makes every other element an array first, so a
        # weak tracer (a Python scalar argument under jit) promotes like the array it would
        # be eagerly.
        dt = numpy.result_type(*[a.dtype for a, w in zip(avals, weak) if w is None],
                               *[w for w in weak if w is not None])
    else:
        dt = canonical_dtype(dtype, fname)
    # (NumPy checks ``casting`` against the promoted dtype too: 'no' refuses int8 + float32)
    for a, w in zip(avals, weak):
        if w is None and not numpy.can_cast(a.dtype, dt, casting=casting):
            raise TypeError(
                f"{fname}: cannot cast array data from {a.dtype} to {dt} according to the "
                f"rule {casting!r}"
            )
    return [x if a.dtype == dt and not a.weak_type else _ew.convert_element_type(x, dt)
            for x, a in zip(xs, avals)]


def concatenate(arrays: Any, axis: int | None = 0, out: Any = None, *, dtype: Any = None,
                casting: str = "same_kind") -> Any:
    """Join arrays along an existing ``axis`` (None: flatten them first); dtypes promote.

    Example:
        >>> concatenate([numpy.zeros((1, 2)), numpy.ones((3, 2))]).shape
        (4, 2)
    """
    if _ext.any_extended(arrays):
        return _ext.concatenate(arrays, axis)
    if out is not None:
        raise TypeError("concatenate: out= is not supported (funcgrad arrays are immutable)")
    weak = _python_scalars(arrays)
    xs = _as_sequence(arrays, "concatenate")
    if axis is None:
        xs = [ravel(x) for x in xs]
        axis = 0
    xs = _promote(xs, dtype, casting, "concatenate", weak)
    nd = get_aval(xs[0]).ndim
    if nd == 0:
        raise ShapeError("concatenate: zero-dimensional arrays cannot be concatenated")
    return _shape.concatenate(xs, _axis("concatenate", axis, nd))


def concat(arrays: Any, /, axis: int | None = 0, out: Any = None, *, dtype: Any = None,
           casting: str = "same_kind") -> Any:
    """NumPy 2's (and the array API's) name of :func:`concatenate`, with its arguments.

    Example:
        >>> concat([numpy.zeros(2), numpy.ones(1)]).tolist()
        [0.0, 0.0, 1.0]
    """
    return concatenate(arrays, axis, out, dtype=dtype, casting=casting)


def stack(arrays: Any, axis: int = 0, out: Any = None, *, dtype: Any = None,
          casting: str = "same_kind") -> Any:
    """Join same-shaped arrays along a new ``axis``.

    Example:
        >>> stack([numpy.zeros(3), numpy.ones(3)], axis=1).shape
        (3, 2)
    """
    if _ext.any_extended(arrays):
        return _ext.stack(arrays, axis)
    if out is not None:
        raise TypeError("stack: out= is not supported (funcgrad arrays are immutable)")
    xs = _as_sequence(arrays, "stack")
    shapes = {get_aval(x).shape for x in xs}
    if len(shapes) != 1:
        raise ShapeError(f"stack: all input arrays must have the same shape, got {sorted(shapes)}")
    xs = _promote(xs, dtype, casting, "stack")
    ax = _axis("stack", axis, get_aval(xs[0]).ndim + 1)
    return _shape.concatenate([_shape.expand_dims(x, (ax,)) for x in xs], ax)


def _seq(tup: Any, fname: str) -> list[Any]:
    if isinstance(tup, Tracer) or device_of(tup) is not None:
        return _as_sequence(tup, fname)
    return _arrs_together(*tup)


def hstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> Any:
    """Join along the second axis (the first for 1-D arrays).

    Example:
        >>> hstack([numpy.zeros(2), numpy.ones(3)]).shape
        (5,)
    """
    arrs = [atleast_1d(x) for x in _seq(tup, "hstack")]
    if arrs and get_aval(arrs[0]).ndim == 1:
        return concatenate(arrs, 0, dtype=dtype, casting=casting)
    return concatenate(arrs, 1, dtype=dtype, casting=casting)


def vstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> Any:
    """Join along the first axis after making inputs at least 2-D.

    Example:
        >>> vstack([numpy.zeros(3), numpy.ones(3)]).shape
        (2, 3)
    """
    return concatenate([atleast_2d(x) for x in _seq(tup, "vstack")], 0, dtype=dtype,
                       casting=casting)


def dstack(tup: Any, dtype: Any = None) -> Any:
    """Join along the third axis after making inputs at least 3-D (in ``dtype``, JAX's
    keyword, when given).

    Example:
        >>> dstack([numpy.zeros(3), numpy.ones(3)]).shape
        (1, 3, 2)
    """
    return concatenate([atleast_3d(x) for x in _seq(tup, "dstack")], 2, dtype=dtype)


def column_stack(tup: Any) -> Any:
    """Stack 1-D arrays as columns of a 2-D array (2-D inputs are joined as they are).

    Example:
        >>> column_stack([numpy.zeros(3), numpy.ones(3)]).shape
        (3, 2)
    """
    arrs = []
    for x in _seq(tup, "column_stack"):
        x = _arr(x)
        if get_aval(x).ndim < 2:
            x = _shape.transpose(array(x, copy=None, ndmin=2))
        arrs.append(x)
    return concatenate(arrs, 1)


# ---------------------------------------------------------------------------------------------
# Splitting


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Split into ``n`` nearly equal parts, or at the given indices (returns a list).

    Example:
        >>> [p.shape for p in array_split(numpy.arange(5), 2)]
        [(3,), (2,)]
    """
    if _ext.is_extended(ary):  # a key array: the same function of its element axes
        return _ext.by_index(array_split, ary, indices_or_sections, axis)
    return _split(ary, indices_or_sections, axis, False, "array_split")


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Split into ``n`` equal parts (an error if impossible), or at the given indices.

    Example:
        >>> [p.tolist() for p in split(numpy.arange(4), [1, 3])]
        [[0], [1, 2], [3]]
    """
    if _ext.is_extended(ary):  # a key array: the same function of its element axes
        return _ext.by_index(split, ary, indices_or_sections, axis)
    return _split(ary, indices_or_sections, axis, True, "split")


def _split(ary: Any, ios: Any, axis: Any, equal: bool, fname: str) -> list[Any]:
    x = _arr(ary)
    a = get_aval(x)
    if a.ndim == 0:
        raise ShapeError(f"{fname}: cannot split a 0-d array")
    ax = _axis(fname, axis, a.ndim)
    n = a.shape[ax]
    ios = concrete_or_error(ios, f"{fname}: indices_or_sections")
    if isinstance(ios, list | tuple) or (
        not isinstance(ios, int | numpy.integer) and numpy.ndim(to_numpy(ios)) > 0
    ):
        points = [0] + _static_ints(ios, f"{fname}: a split index") + [n]
    else:
        sections = _static_int(ios, f"{fname}: the number of sections")
        if sections <= 0:
            raise ValueError(f"{fname}: number sections must be larger than 0.")
        each, extras = divmod(n, sections)
        if equal and extras:
            raise ValueError(
                f"{fname}: array split does not result in an equal division ({n} elements "
                f"along axis {ax} into {sections} sections)"
            )
        sizes = [0] + extras * [each + 1] + (sections - extras) * [each]
        points = list(numpy.cumsum(sizes).tolist())
    out = []
    for st, end in zip(points[:-1], points[1:]):
        s, e, _ = slice(st, end).indices(n)
        out.append(_shape.slice_in_dim(x, s, max(s, e), 1, ax))
    return out


def hsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """:func:`split` along the second axis (the first for 1-D arrays).

    Example:
        >>> len(hsplit(numpy.zeros((2, 4)), 2))
        2
    """
    x = _arr(ary)
    if get_aval(x).ndim == 0:
        raise ShapeError("hsplit: hsplit only works on arrays of 1 or more dimensions")
    return split(x, indices_or_sections, 1 if get_aval(x).ndim > 1 else 0)


def vsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """:func:`split` along the first axis (arrays of 2 or more dimensions).

    Example:
        >>> len(vsplit(numpy.zeros((4, 2)), 2))
        2
    """
    x = _arr(ary)
    if get_aval(x).ndim < 2:
        raise ShapeError("vsplit: vsplit only works on arrays of 2 or more dimensions")
    return split(x, indices_or_sections, 0)


def dsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """:func:`split` along the third axis (arrays of 3 or more dimensions).

    Example:
        >>> len(dsplit(numpy.zeros((1, 1, 4)), 2))
        2
    """
    x = _arr(ary)
    if get_aval(x).ndim < 3:
        raise ShapeError("dsplit: dsplit only works on arrays of 3 or more dimensions")
    return split(x, indices_or_sections, 2)


# ---------------------------------------------------------------------------------------------
# Tiling and repeating


def tile(A: Any, reps: Any) -> Any:
    """Repeat the whole of ``A`` ``reps`` times along each axis.

    Example:
        >>> tile(numpy.array([1, 2]), 2).tolist()
        [1, 2, 1, 2]
    """
    if _ext.is_extended(A):  # a key array: the same function of its element axes
        return _ext.by_index(tile, A, reps)
    x = _arr(A)
    reps = tuple(_static_ints(reps, "tile: reps"))
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: negative dimensions are not allowed in reps={reps}")
    a = get_aval(x)
    nd = max(len(reps), a.ndim)
    reps = (1,) * (nd - len(reps)) + reps
    shp = (1,) * (nd - a.ndim) + a.shape
    x = _shape.reshape(x, shp)
    if all(r == 1 for r in reps):
        return x
    # One broadcast to interleaved (rep, size) axes and one reshape: no per-copy operations.
    expanded = tuple(v for r, s in zip(reps, shp) for v in (r, s))
    x = _shape.broadcast_in_dim(x, expanded, tuple(range(1, 2 * nd, 2)))
    return _shape.reshape(x, tuple(r * s for r, s in zip(reps, shp)))


def _repeat_int(x: Any, r: int, ax: int) -> Any:
    a = get_aval(x)
    if r == 1:
        return x
    shp = a.shape[: ax + 1] + (r,) + a.shape[ax + 1:]
    dims = tuple(i for i in range(a.ndim + 1) if i != ax + 1)
    y = _shape.broadcast_in_dim(x, shp, dims)
    return _shape.reshape(y, a.shape[:ax] + (a.shape[ax] * r,) + a.shape[ax + 1:])


@with_out_sharding
def repeat(a: Any, repeats: Any, axis: int | None = None, *,
           total_repeat_length: int | None = None) -> Any:
    """Repeat each element ``repeats`` times (an int, or concrete per-element counts).

    JAX's ``total_repeat_length`` (a static int) fixes the output length, so ``repeats`` may
    be traced (under ``jit``/``vmap``): extra repeats are cut off, and a short total is
    padded with the last element, as ``jnp.repeat``.

    Example:
        >>> repeat(numpy.array([1, 2]), 2).tolist(), repeat(numpy.array([1, 2]), [1, 2]).tolist()
        ([1, 1, 2, 2], [1, 2, 2])
        >>> repeat(numpy.array([1, 2, 3]), numpy.array([2, 0, 1]), total_repeat_length=5).tolist()
        [1, 1, 3, 3, 3]
    """
    if _ext.is_extended(a):
        return _ext.by_index(repeat, a, repeats, axis, total_repeat_length=total_repeat_length)
    x = _arr(a)
    # (NumPy repeats a 0-d array along axis 0 or -1 as if it were 1-d)
    if axis is None or get_aval(x).ndim == 0 and type(axis) is int and axis in (0, -1):
        x = ravel(x)
        axis = 0
    ax = _axis("repeat", axis, get_aval(x).ndim)
    if total_repeat_length is not None:
        return _repeat_to_length(x, repeats, ax, total_repeat_length)
    counts = _static_ints(repeats, "repeat: repeats")
    if any(c < 0 for c in counts):
        raise ValueError("repeat: repeats may not contain negative values")
    n = get_aval(x).shape[ax]
    if len(counts) == 1:
        return _repeat_int(x, counts[0], ax)
    if len(counts) != n:
        raise ValueError(
            f"repeat: operands could not be broadcast together: {len(counts)} repeats for "
            f"{n} elements along axis {ax}"
        )
    # Runs of equal counts become one slice repeated by an int: few operations in the usual
    # cases (block-structured counts).
    pieces = []
    i = 0
    while i < n:
        j = i
        while j + 1 < n and counts[j + 1] == counts[i]:
            j += 1
        if counts[i]:
            pieces.append(_repeat_int(_shape.slice_in_dim(x, i, j + 1, 1, ax), counts[i], ax))
        i = j + 1
    if not pieces:
        return _shape.slice_in_dim(x, 0, 0, 1, ax)
    return _shape.concatenate(pieces, ax)


def _repeat_to_length(x: Any, repeats: Any, ax: int, total: Any) -> Any:
    """``repeat`` with a static output length (JAX's formula): a 1 is added at each element's
    first output position (its exclusive cumulative count; past the end dropped), and the
    running sum of those marks, less one, is the element each output position takes."""
    total = _static_int(total, "repeat: total_repeat_length")
    if total < 0:
        raise ValueError(f"repeat: total_repeat_length must be non-negative, got {total}")
    xa = get_aval(x)
    n = xa.shape[ax]
    dev = xa.device or get_default_device()
    xp = xp_for_device(dev)
    r = fnp.ravel(repeats if isinstance(repeats, Tracer)
                  else device_put(numpy.asarray(to_numpy(repeats)), dev))
    ra = get_aval(r)
    if ra.dtype.kind not in "iub":
        raise TypeError(f"repeat: repeats must be integers, got dtype {ra.dtype}")
    if ra.shape[0] not in (1, n):
        raise ValueError(f"repeat: operands could not be broadcast together: {ra.shape[0]} "
                         f"repeats for {n} elements along axis {ax}")
    if total == 0 or n == 0:
        return _shape.slice_in_dim(x, 0, 0, 1, ax) if total == 0 else x
    r = fnp.broadcast_to(fnp.astype(r, numpy.int64), (n,))
    starts = fnp.concatenate([xp.zeros(1, numpy.int64), fnp.cumsum(r)[:-1]])
    marks = fnp.at(xp.zeros(total, numpy.int64))[starts].add(1, mode="drop")
    return fnp.take(x, fnp.subtract(fnp.cumsum(marks), 1), axis=ax)


# ---------------------------------------------------------------------------------------------
# Flipping and rolling


def flip(m: Any, axis: Any = None) -> Any:
    """Reverse the order of elements along ``axis`` (all axes when None).

    Example:
        >>> flip(numpy.arange(3)).tolist()
        [2, 1, 0]
    """
    if _ext.is_extended(m):
        return _ext.flip(m, axis)
    x = _arr(m)
    nd = get_aval(x).ndim
    dims = tuple(range(nd)) if axis is None else _axes_tuple("flip", axis, nd)
    return _shape.rev(x, dims)


def fliplr(m: Any) -> Any:
    """Reverse the columns (axis 1) of an array of at least 2 dimensions.

    Example:
        >>> fliplr(numpy.array([[1, 2]])).tolist()
        [[2, 1]]
    """
    x = _arr(m)
    if get_aval(x).ndim < 2:
        raise ShapeError(f"fliplr: input must be >= 2-d, got {get_aval(x).str_short()}")
    return _shape.rev(x, (1,))


def flipud(m: Any) -> Any:
    """Reverse the rows (axis 0) of an array of at least 1 dimension.

    Example:
        >>> flipud(numpy.array([1, 2])).tolist()
        [2, 1]
    """
    x = _arr(m)
    if get_aval(x).ndim < 1:
        raise ShapeError(f"flipud: input must be >= 1-d, got {get_aval(x).str_short()}")
    return _shape.rev(x, (0,))


def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    """Shift elements cyclically by ``shift`` along ``axis`` (ints or tuples; None flattens).

    Example:
        >>> roll(numpy.arange(4), 1).tolist()
        [3, 0, 1, 2]
    """
    if _ext.is_extended(a):  # a key array: the same function of its element axes
        return _ext.by_index(roll, a, shift, axis)
    x = _arr(a)
    if axis is None:
        return _shape.reshape(roll(ravel(x), shift, 0), get_aval(x).shape)
    av = get_aval(x)
    axes = [_axis("roll", ax, av.ndim) for ax in (
        [axis] if isinstance(axis, int | numpy.integer) or getattr(axis, "ndim", None) == 0
        else list(axis))]
    if _has_tracer(shift):
        return _roll_traced(x, shift, axes)
    shifts = _static_ints(shift, "roll: shift")
    try:
        pairs = numpy.broadcast(numpy.asarray(shifts), numpy.asarray(axes))
    except ValueError:
        raise ValueError(
            f"roll: 'shift' and 'axis' should be scalars or 1D sequences of the same length, "
            f"got {shifts} and {axes}"
        ) from None
    total = dict.fromkeys(range(av.ndim), 0)
    for sh, ax in pairs:
        total[int(ax)] += int(sh)
    for ax, sh in total.items():
        n = av.shape[ax]
        if n == 0 or sh % n == 0:
            continue
        s = sh % n
        x = _shape.concatenate(
            [_shape.slice_in_dim(x, n - s, n, 1, ax), _shape.slice_in_dim(x, 0, n - s, 1, ax)],
            ax,
        )
    return x


def _has_tracer(v: Any) -> bool:
    if isinstance(v, list | tuple):
        return any(_has_tracer(e) for e in v)
    return isinstance(v, Tracer) and v.to_concrete_value() is None


def _roll_traced(x: Any, shift: Any, axes: list[int]) -> Any:
    """``roll`` by a shift known only at run time (under jit, or batched by vmap), as JAX:
    each axis doubled and the window of its length read at ``n - shift % n``."""
    shifts = fnp.asarray(shift)
    sa = get_aval(shifts)
    if sa.dtype.kind not in "iub":
        raise TypeError(f"roll: shift must be an integer or integers, got dtype {sa.dtype}")
    if sa.ndim > 1 or (sa.ndim == 1 and len(axes) not in (1, sa.shape[0])):
        raise ValueError(f"roll: 'shift' and 'axis' should be scalars or 1D sequences of the "
                         f"same length, got shift of shape {sa.shape} and axes {axes}")
    k = max(len(axes), sa.shape[0] if sa.ndim else 1)
    shifts = _shape.broadcast_in_dim(shifts, (k,), (0,) if sa.ndim else ())
    axes = axes * k if len(axes) == 1 else axes
    for j, ax in enumerate(axes):
        n = get_aval(x).shape[ax]
        if n == 0:
            continue
        s = fnp.remainder(_shape.index_in_dim(shifts, j, 0, keepdims=False), n)
        doubled = _shape.concatenate([x, x], ax)
        x = _shape.dynamic_slice_in_dim(doubled, fnp.subtract(n, s), n, ax)
    return x


def rot90(m: Any, k: int = 1, axes: Sequence[int] = (0, 1)) -> Any:
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (first towards second).

    Example:
        >>> rot90(numpy.array([[1, 2], [3, 4]])).tolist()
        [[2, 4], [1, 3]]
    """
    if _ext.is_extended(m):  # a key array: the same function of its element axes
        return _ext.by_index(rot90, m, k, axes)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("rot90: len(axes) must be 2.")
    x = _arr(m)
    nd = get_aval(x).ndim
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == nd:
        raise ValueError("rot90: Axes must be different.")
    if not (-nd <= axes[0] < nd and -nd <= axes[1] < nd):
        raise ValueError(f"rot90: Axes={axes} out of range for array of ndim={nd}.")
    k = _static_int(k, "rot90: k") % 4
    a0, a1 = axes[0] % nd, axes[1] % nd
    if k == 0:
        return x
    if k == 2:
        return _shape.rev(x, (a0, a1))
    perm = list(range(nd))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return _shape.transpose(_shape.rev(x, (a1,)), tuple(perm))
    return _shape.rev(_shape.transpose(x, tuple(perm)), (a1,))


# ---------------------------------------------------------------------------------------------
# Padding


def _as_pairs(v: Any, nd: int, fname: str, argname: str, as_index: bool) -> list[tuple]:
    """NumPy's pad-argument normalisation: scalar, (a,), (a, b), ((a, b),) or one per axis."""
    if not as_index and (isinstance(v, Tracer) or _holds_tracers(v)):
        # Traced values: broadcast to (nd, 2) and pick the entries with static slices.
        t = _arr(v)
        if get_aval(t).ndim == 0:
            return [(t, t)] * nd
        try:
            t = broadcast_to(t, (nd, 2))
        except ShapeError:
            raise ValueError(
                f"{fname}: {argname} of shape {get_aval(t).shape} cannot be broadcast to "
                f"({nd}, 2)"
            ) from None
        return [tuple(_shape.index_in_dim(_shape.index_in_dim(t, i, 0, False), j, 0, False)
                      for j in (0, 1)) for i in range(nd)]
    v = concrete_or_error(v, f"{fname}: {argname}")
    h = numpy.asarray(_on_host(v))
    if as_index:
        if h.dtype.kind not in "iub" and not (h.dtype.kind == "f" and numpy.all(h == numpy.round(h))):
            raise TypeError(f"{fname}: `{argname}` must be of integral type, got {h.dtype}")
        h = numpy.round(h).astype(numpy.int64)
        if (h < 0).any():
            raise ValueError(f"{fname}: {argname} can't contain negative values")
    try:
        h = numpy.broadcast_to(h, (nd, 2))
    except ValueError:
        raise ValueError(
            f"{fname}: {argname} of shape {h.shape} cannot be broadcast to ({nd}, 2)"
        ) from None
    return [(h[i, 0][()], h[i, 1][()]) for i in range(nd)]


def _on_host(v: Any) -> Any:
    """``v`` with its device arrays, nested in lists and tuples too (``((i, 0), (0, i))`` of
    0-d device integers), copied to the host, for NumPy to read as one array."""
    if isinstance(v, list | tuple):
        return [_on_host(x) for x in v]
    return to_numpy(v) if device_of(v) not in (None, "cpu") else v


def _holds_tracers(v: Any) -> bool:
    if isinstance(v, list | tuple):
        return any(_holds_tracers(x) for x in v)
    return isinstance(v, Tracer)


_PAD_STATS = ("maximum", "minimum", "mean", "median")
_PAD_KWARGS = {"constant": {"constant_values"}, "empty": set(), "edge": set(),
               "linear_ramp": {"end_values"}, **{m: {"stat_length"} for m in _PAD_STATS},
               "reflect": {"reflect_type"}, "symmetric": {"reflect_type"}, "wrap": set()}


def _gather_runs(x: Any, idx: numpy.ndarray, ax: int) -> Any:
    """``take(x, idx, axis=ax)`` for a static index list, as slices of monotone runs."""
    n = get_aval(x).shape[ax]
    if len(idx) == n and (idx == numpy.arange(n)).all():
        return x
    pieces = []
    i, total = 0, len(idx)
    while i < total:
        step = int(idx[i + 1] - idx[i]) if i + 1 < total else 1
        if step not in (-1, 0, 1):
            step = 1
        j = i
        while j + 1 < total and idx[j + 1] - idx[j] == step:
            j += 1
        lo, hi = int(idx[i]), int(idx[j])
        if step == 0:
            one = _shape.slice_in_dim(x, lo, lo + 1, 1, ax)
            shp = list(get_aval(one).shape)
            shp[ax] = j - i + 1
            pieces.append(_shape.broadcast_to(one, tuple(shp)))
        elif step == 1:
            pieces.append(_shape.slice_in_dim(x, lo, hi + 1, 1, ax))
        else:
            pieces.append(_shape.rev(_shape.slice_in_dim(x, hi, lo + 1, 1, ax), (ax,)))
        i = j + 1
    return _shape.concatenate(pieces, ax)


def _pad_stat(x: Any, ax: int, widths: tuple[int, int], lengths: tuple[Any, Any],
              mode: str) -> Any:
    """NumPy's 'maximum'/'minimum'/'mean'/'median' padding of one axis (``_get_stats``)."""
    n = get_aval(x).shape[ax]
    dt = get_aval(x).dtype
    lb, le = (n if v is None or n < v else int(v) for v in lengths)
    if (lb == 0 or le == 0) and mode in ("maximum", "minimum"):
        raise ValueError("pad: stat_length of 0 yields no value for padding")
    func = getattr(fnp, {"maximum": "max", "minimum": "min"}.get(mode, mode))

    def stat(lo: int, hi: int) -> Any:
        s = func(_shape.slice_in_dim(x, lo, hi, 1, ax), axis=ax, keepdims=True)
        if dt.kind in "iu":
            s = fnp.round(s)  # (NumPy rounds a mean/median before storing it as an int)
        return _ew.convert_element_type(s, dt) if get_aval(s).dtype != dt else s

    left = stat(0, lb)
    right = left if lb == le == n else stat(n - le, n)
    pieces = []
    for w, s in ((widths[0], left), (None, x), (widths[1], right)):
        if w is None:
            pieces.append(x)
        elif w:
            shp = list(get_aval(s).shape)
            shp[ax] = w
            pieces.append(_shape.broadcast_to(s, tuple(shp)))
    return _shape.concatenate(pieces, ax)


def _pad_ramp(x: Any, ax: int, widths: tuple[int, int], ends: tuple[Any, Any]) -> Any:
    """NumPy's 'linear_ramp' padding of one axis: from each end value towards the edge."""
    n = get_aval(x).shape[ax]
    dt = get_aval(x).dtype
    pieces = [x]
    for side, (w, end) in enumerate(zip(widths, ends)):
        if not w:
            continue
        edge = _shape.squeeze(_shape.slice_in_dim(x, 0, 1, 1, ax) if side == 0 else
                              _shape.slice_in_dim(x, n - 1, n, 1, ax), (ax,))
        ramp = fnp.linspace(end, edge, num=w, endpoint=False, dtype=dt, axis=ax)
        if side == 0:
            pieces.insert(0, ramp)
        else:
            pieces.append(_shape.rev(ramp, (ax,)))
    return _shape.concatenate(pieces, ax) if len(pieces) > 1 else x


def _pad_reflect_odd(x: Any, ax: int, widths: tuple[int, int], include_edge: bool) -> Any:
    """NumPy's ``reflect_type='odd'`` ('reflect'/'symmetric'): point reflection through the
    edge, repeated (``_set_reflect_both``) while the pad is wider than what is filled."""
    b, e = widths
    period = get_aval(x).shape[ax]
    dt = get_aval(x).dtype

    def mirror(edge: Any, chunk: Any) -> Any:
        r = _ew.sub(_ew.mul(edge, 2), chunk)
        # (stored into the array, as NumPy does: bools become int and back)
        return r if get_aval(r).dtype == dt else _ew.convert_element_type(r, dt)

    while b > 0 or e > 0:
        n = get_aval(x).shape[ax]
        if include_edge:
            length, off = n // period * period, 1
        else:
            length, off = (n - 1) // (period - 1) * (period - 1), 0
        if b > 0:
            c = min(length, b)
            chunk = _shape.rev(_shape.slice_in_dim(x, 1 - off, c + 1 - off, 1, ax), (ax,))
            edge = _shape.slice_in_dim(x, 0, 1, 1, ax)
            x = _shape.concatenate([mirror(edge, chunk), x], ax)
            b -= c
        if e > 0:
            n2 = get_aval(x).shape[ax]
            c = min(length, e)
            chunk = _shape.rev(
                _shape.slice_in_dim(x, n2 + off - 1 - c, n2 + off - 1, 1, ax), (ax,))
            edge = _shape.slice_in_dim(x, n2 - 1, n2, 1, ax)
            x = _shape.concatenate([x, mirror(edge, chunk)], ax)
            e -= c
    return x


def _pad_width_of_dict(pad_width: dict, nd: int) -> list[tuple[Any, Any]]:
    """NumPy 2.3's ``{axis: width or (before, after)}``: the axes not named are not padded."""
    pairs: list[tuple[Any, Any]] = [(0, 0)] * nd
    for axis, width in pad_width.items():
        ax = _axis("pad", axis, nd)
        if isinstance(width, int | numpy.integer):
            pairs[ax] = (width, width)
        elif isinstance(width, tuple) and len(width) == 2:
            pairs[ax] = width
        else:
            raise TypeError(f"pad: pad_width[{axis!r}] must be an int or a (before, after) "
                            f"tuple, got {width!r}")
    return pairs


def _pad_callable(array: Any, pad_width: Any, func: Any, kwargs: dict) -> Any:
    """JAX's callable mode: zero padding, then ``func(row, (before, after), axis, kwargs)``
    over every 1-d row along each axis in turn (``apply_along_axis``: one ``vmap`` trace per
    axis), each call returning its row with the padding filled in."""
    x = _arr(array)
    nd = get_aval(x).ndim
    if isinstance(pad_width, dict):
        pad_width = _pad_width_of_dict(pad_width, nd)
    widths = [(int(b), int(e)) for b, e in _as_pairs(pad_width, nd, "pad", "pad_width",
                                                      as_index=True)]
    x = _shape.pad(x, numpy.zeros((), get_aval(x).dtype)[()], [(b, e, 0) for b, e in widths])

    def row(v: Any, width: tuple[int, int], ax: int) -> Any:
        try:
            out = func(v, width, ax, kwargs)
        except TypeError as err:
            if "does not support item assignment" not in str(err) and "immutable" not in str(
                    err):
                raise
            raise TypeError(
                "pad: the callable mode follows JAX's protocol: the function returns the "
                "padded row (e.g. row.at[:before].set(value)); NumPy's, writing into the "
                f"row in place, cannot write into an immutable array ({err})") from None
        if out is None:
            raise TypeError(
                "pad: the callable mode's function returned None; as in JAX it must return "
                "the padded row (e.g. row.at[:before].set(value)), NumPy's in-place writes "
                "cannot reach an immutable array")
        return out

    for ax, width in enumerate(widths):
        if get_aval(x).size:
            x = fnp.apply_along_axis(row, ax, x, width, ax)
    return x


def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """Pad an array (``numpy.pad``, ``jax.numpy.pad``).

    'constant' (``constant_values``, traced values allowed), 'empty' (zeros), 'edge',
    'linear_ramp' (``end_values``), 'maximum'/'minimum'/'mean'/'median' (``stat_length``),
    'reflect'/'symmetric' (``reflect_type`` 'even' or 'odd') and 'wrap'. Axes are padded one
    after another, as NumPy does, so corners agree with NumPy. ``pad_width`` may be NumPy
    2.3's dict ``{axis: width or (before, after)}`` (other axes unpadded). A callable
    ``mode`` follows JAX's protocol: ``mode(row, (before, after), axis, kwargs)`` returns
    each zero-padded row along each axis with its padding filled in (NumPy's writes into the
    row in place, which an immutable array cannot take).

    Example:
        >>> pad(numpy.array([1, 2]), (1, 2), constant_values=9).tolist()
        [9, 1, 2, 9, 9]
        >>> pad(numpy.array([1, 2, 3]), 2, mode="reflect").tolist()
        [3, 2, 1, 2, 3, 2, 1]
        >>> pad(numpy.array([1., 2., 4.]), (2, 1), mode="linear_ramp").tolist()
        [0.0, 0.5, 1.0, 2.0, 4.0, 0.0]
    """
    if callable(mode):
        return _pad_callable(array, pad_width, mode, kwargs)
    if mode not in _PAD_KWARGS:
        raise ValueError(
            f"pad: mode {mode!r} is not supported; the modes are "
            f"{', '.join(repr(m) for m in _PAD_KWARGS)}"
        )
    bad = set(kwargs) - _PAD_KWARGS[mode]
    if bad:
        raise ValueError(f"pad: unsupported keyword arguments for mode '{mode}': {sorted(bad)}")
    x = _arr(array)
    av = get_aval(x)
    nd = av.ndim
    if isinstance(pad_width, dict):
        pad_width = _pad_width_of_dict(pad_width, nd)
    widths = _as_pairs(pad_width, nd, "pad", "pad_width", as_index=True)
    widths = [(int(b), int(e)) for b, e in widths]
    if mode in ("constant", "empty"):
        cv = kwargs.get("constant_values", 0)
        values = [(0, 0)] * nd if mode == "empty" else _as_pairs(
            cv, nd, "pad", "constant_values", as_index=False)
        flat = [v for pair in values for v in pair]
        # (NumPy 2 raises for signed dtypes only, for NumPy ints too: its unsigned fill wraps,
        # e.g. -1 -> 255)
        check_python_ints_fit([int(v) if isinstance(v, numpy.integer) else v for v in flat],
                              av.dtype, "pad", kinds="i")
        first = flat[0] if flat else 0
        same = all(v is first for v in flat) or all(
            not isinstance(v, Tracer) and not isinstance(first, Tracer) and v == first
            for v in flat)
        if same:
            return _shape.pad(x, first, [(b, e, 0) for b, e in widths])
        # Axis by axis, as NumPy: later axes overwrite the corners.
        for ax, ((b, e), (vb, ve)) in enumerate(zip(widths, values)):
            for cfg, v in (((b, 0, 0), vb), ((0, e, 0), ve)):
                if cfg == (0, 0, 0):
                    continue
                full_cfg = [(0, 0, 0)] * nd
                full_cfg[ax] = cfg
                x = _shape.pad(x, v, full_cfg)
        return x
    for ax, (b, e) in enumerate(widths):
        if av.shape[ax] == 0 and (b or e):
            raise ValueError(
                f"pad: can't extend empty axis {ax} using modes other than 'constant' or "
                "'empty'"
            )
    if av.size == 0:  # (an empty axis is left as it is: the result is empty too)
        return _shape.pad(x, numpy.zeros((), av.dtype)[()], [(b, e, 0) for b, e in widths])
    if mode in _PAD_STATS:
        sl = kwargs.get("stat_length")
        lengths = [(None, None)] * nd if sl is None else _as_pairs(
            sl, nd, "pad", "stat_length", as_index=True)
        if mode in ("maximum", "minimum") and any(v == 0 for p in lengths for v in p):
            # (NumPy checks every axis, padded or not)
            raise ValueError("pad: stat_length of 0 yields no value for padding")
    elif mode == "linear_ramp":
        ends = _as_pairs(kwargs.get("end_values", 0), nd, "pad", "end_values", as_index=False)
    odd = mode in ("reflect", "symmetric") and kwargs.get("reflect_type", "even") == "odd"
    for ax, (b, e) in enumerate(widths):
        if b == 0 and e == 0:
            continue
        n = get_aval(x).shape[ax]
        if mode in _PAD_STATS:
            x = _pad_stat(x, ax, (b, e), lengths[ax], mode)
        elif mode == "linear_ramp":
            x = _pad_ramp(x, ax, (b, e), ends[ax])
        elif odd and n > 1:
            x = _pad_reflect_odd(x, ax, (b, e), mode == "symmetric")
        else:
            # The index pattern of each mode, computed by NumPy on static host integers.
            # (NumPy reflects a length-1 axis as 'edge', odd or even.)
            idx = numpy.pad(numpy.arange(n), (b, e), mode=mode)
            x = _gather_runs(x, idx, ax)
    return x


# ---------------------------------------------------------------------------------------------
# Metadata and copies


def shape(a: Any) -> tuple[int, ...]:
    """The shape of ``a`` (arrays, tracers, scalars, nested lists).

    Example:
        >>> shape([[1, 2, 3]])
        (1, 3)
    """
    if isinstance(a, Tracer) or device_of(a) is not None:
        return tuple(a.shape)
    return numpy.shape(a)


def ndim(a: Any) -> int:
    """The number of axes of ``a``.

    Example:
        >>> ndim(numpy.ones((2, 3)))
        2
    """
    return len(shape(a))


def size(a: Any, axis: int | Sequence[int] | None = None) -> int:
    """The number of elements of ``a`` (along ``axis`` when given; a tuple of axes gives the
    product of their lengths, as NumPy 2).

    Example:
        >>> size(numpy.ones((2, 3))), size(numpy.ones((2, 3)), 1), size(numpy.ones((2, 3)), (0, 1))
        (6, 3, 6)
    """
    s = shape(a)
    if axis is None:
        return int(numpy.prod(s, dtype=numpy.int64))
    if isinstance(axis, tuple | list):
        return int(numpy.prod([s[i] for i in _axes_tuple("size", axis, len(s))], dtype=numpy.int64))
    return s[_axis("size", axis, len(s))]


def copy(a: Any, order: str = "K", subok: bool = False) -> Any:
    """A copy of ``a`` (tracers are immutable values, so they are returned as they are).

    Example:
        >>> x = numpy.ones(2); copy(x) is x
        False
    """
    if _ext.is_extended(a):
        return a._rewrap(copy(a._data))
    if isinstance(a, Tracer):
        return a
    dev = device_of(a)
    if dev is not None:
        return xp_for_device(dev).array(a, copy=True)
    return asarray(a)
