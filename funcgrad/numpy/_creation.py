"""funcgrad.numpy: array creation.

Arrays made from Python data go to the default device (:func:`funcgrad.default_device`);
``*_like`` functions follow their argument's device. Functions whose values depend on traced
inputs (``asarray`` of lists holding tracers, ``full`` with a traced fill value, ``linspace``,
``logspace`` and ``geomspace`` with traced bounds, ``meshgrid``, ``tril``/``triu``, ``diagflat``) are built from primitives and
differentiate; the others need concrete arguments.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy

import funcgrad.numpy as fnp
import funcgrad.numpy._extended as _ext
import funcgrad.ops.elementwise as _ew
import funcgrad.ops.shape as _shape
from funcgrad import sharding as _sharding
from funcgrad.avals import canonical_dtype, get_aval, result_dtype
from funcgrad.backend import canonical_device as _canonical_name
from funcgrad.backend import (
    device_of,
    device_put,
    get_default_device,
    operator_index,
    to_numpy,
    xp_for_device,
)
from funcgrad.core import Tracer, concrete_or_error
from funcgrad.errors import ConcretizationError, ShapeError
from funcgrad.ops._util import broadcast_shapes_or_error

__all__ = [
    "array",
    "asarray",
    "asanyarray",
    "ascontiguousarray",
    "zeros",
    "ones",
    "empty",
    "full",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "eye",
    "identity",
    "arange",
    "linspace",
    "logspace",
    "geomspace",
    "meshgrid",
    "tri",
    "tril",
    "triu",
    "diagflat",
]

_PY_SCALARS = (bool, int, float, complex, numpy.generic)
_PY_NUMBERS = (bool, int, float, complex)
_ORDERS = (None, "K", "A", "C", "F")


def _dtype_or_none(dtype: Any, fname: str) -> numpy.dtype | None:
    return None if dtype is None else canonical_dtype(dtype, fname)


def _check_order(order: Any, fname: str) -> None:
    # Memory layout never changes values, so every NumPy order is accepted for creation.
    if order not in _ORDERS:
        raise ValueError(f"{fname}: order must be one of 'C', 'F', 'A' or 'K', got {order!r}")


def _needs_stacking(obj: Any) -> bool:
    """Whether a nested list holds values NumPy cannot read: tracers or device arrays."""
    if isinstance(obj, list | tuple):
        return any(_needs_stacking(o) for o in obj)
    if isinstance(obj, Tracer):
        return True
    dev = device_of(obj)
    return dev is not None and dev != "cpu"


def _nested_device(obj: Any) -> str:
    """Where to join a nested list: an accelerator device among its values, else the host
    if it holds host arrays, else the default device."""
    found = None
    stack = [obj]
    while stack:
        x = stack.pop()
        if isinstance(x, list | tuple):
            stack.extend(x)
            continue
        d = _leaf_device(x) if isinstance(x, Tracer) or device_of(x) else None
        if d is not None and d != "cpu":
            return d
        found = found or d
    return found or get_default_device()


def _host_to_default(h: numpy.ndarray) -> Any:
    dev = get_default_device()
    return h if dev == "cpu" else xp_for_device(dev).asarray(h)


def _leaf_device(x: Any) -> str | None:
    return x.aval.device if isinstance(x, Tracer) else device_of(x)


def _from_nested(obj: Any, fname: str, device: str) -> Any:
    """Stack a nested list holding tracers/device arrays with primitives (differentiable).

    Concrete leaves (numbers, host arrays) are put on ``device``, the device of the list's
    tracers and device arrays, so that they can be joined.
    """
    if not isinstance(obj, list | tuple):
        if isinstance(obj, Tracer):
            return obj
        if device_of(obj) is None:
            obj = numpy.asarray(obj)
            canonical_dtype(obj.dtype, fname)
        return device_put(obj, device) if device_of(obj) != device else obj
    if not obj:
        return device_put(numpy.asarray(obj, dtype=numpy.float64), device)
    parts = [_from_nested(o, fname, device) for o in obj]
    avals = [get_aval(p) for p in parts]
    if any(a.shape != avals[0].shape for a in avals):
        raise ShapeError(
            f"{fname}: the nested sequence is ragged: its elements have shapes "
            f"{[a.shape for a in avals]} (all must be equal)"
        )
    # In a list NumPy treats Python scalars as strong (np.array([f32, 2.0]) is float64).
    dt = numpy.result_type(*[a.dtype for a in avals])
    parts = [
        p if a.dtype == dt and not a.weak_type else _ew.convert_element_type(p, dt)
        for p, a in zip(parts, avals)
    ]
    return _shape.concatenate([_shape.expand_dims(p, (0,)) for p in parts], 0)


def _cast(x: Any, dt: numpy.dtype | None) -> Any:
    a = get_aval(x)
    if isinstance(x, Tracer):
        # A weak tracer stands for a Python scalar argument; NumPy's asarray makes a Python
        # scalar a strong array, so the traced asarray must too (else jit and eager differ).
        if (dt is None or a.dtype == dt) and not a.weak_type:
            return x
        return _ew.convert_element_type(x, a.dtype if dt is None else dt)
    if dt is None or a.dtype == dt:
        return x
    if a.dtype.kind == "f" and dt.kind in "iu":
        return _ew.convert_element_type(x, dt)  # NumPy's wrapping on every device (CUDA's
        # conversions saturate)
    return x.astype(dt)


def asarray(a: Any, dtype: Any = None, order: Any = None, *, device: Any = None,
            out_sharding: Any = None,
            copy: bool | None = None, like: Any = None) -> Any:
    """Convert ``a`` to an array (on ``device``, else the default device); arrays and tracers
    pass through.

    With ``dtype``, tracers are converted with ``convert_element_type``. Nested lists may hold
    tracers: they are stacked, differentiably.

    Example:
        >>> asarray([1, 2]).dtype, asarray(1.0, dtype="float32").dtype
        (dtype('int64'), dtype('float32'))
        >>> type(asarray([1.0], device="strict")).__name__
        'StrictArray'
    """
    device = _out_sharding("asarray", device, out_sharding)
    device = _like("asarray", like, device)
    if _ext.is_extended(a) and dtype is None:
        return a  # a key array is already an array (jnp.asarray(key) is key)
    if dtype is None and type(a) in (list, tuple) and _ext.nested_extended(a):
        return asarray(_ext.stack_nested(a), device=device)  # a list of keys, as jnp's
    if device is not None:
        return _put(asarray(a, dtype, order, copy=copy), device)
    if type(a) is numpy.ndarray and dtype is None and not copy and a.dtype.kind in "biufc":
        return a
    dt = _dtype_or_none(dtype, "asarray")
    if order is not None:
        _check_order(order, "asarray")
    if isinstance(a, Tracer):
        return _cast(a, dt)
    if device_of(a) is not None:
        # Arrays stay on their device (host arrays compute on the host, as in the backend).
        if isinstance(a, numpy.ndarray) and type(a) is not numpy.ndarray:
            # As numpy.asarray: no subclass passes through (a matrix is a 2-D ndarray, a
            # masked array its data, as jnp.asarray's), so later operations are plain NumPy's
            a = numpy.asarray(a)
        if dt is not None and isinstance(a, numpy.ndarray) and a.dtype.kind == "O":
            # An object array of numbers (a pandas column, say) converts to a numeric dtype
            # when asked, as in NumPy and JAX; without a dtype it is refused below.
            return a.astype(dt)
        canonical_dtype(a.dtype, "asarray")
        if copy is False and dt is not None and a.dtype != dt:
            raise ValueError("asarray: copy=False, but changing the dtype needs a copy")
        out = _cast(a, dt)
        if copy and out is a:
            out = a.copy()
        return out
    if _needs_stacking(a):
        return _cast(_from_nested(a, "asarray", _nested_device(a)), dt)
    h = numpy.asarray(a, dtype=dt)
    canonical_dtype(h.dtype, "asarray")
    return _host_to_default(h)


def array(
    object: Any,  # noqa: A002  (NumPy's parameter name)
    dtype: Any = None,
    *,
    copy: bool | None = True,
    order: Any = "K",
    subok: bool = False,
    ndmin: int = 0,
    device: Any = None, out_sharding: Any = None, like: Any = None,
) -> Any:
    """Make an array from ``object`` (a copy of arrays unless ``copy`` is False/None), on
    ``device`` (JAX's keyword) when given.

    Nested lists holding tracers are stacked (differentiably).

    Example:
        >>> array([[1.0, 2.0]], ndmin=3).shape
        (1, 1, 2)
    """
    device = _out_sharding("array", device, out_sharding)
    device = _like("array", like, device)
    _check_order(order, "array")
    if dtype is None and type(object) in (list, tuple) and _ext.nested_extended(object):
        object = _ext.stack_nested(object)  # a list of keys: stacked, as jnp.array's
    if _ext.is_extended(object) and dtype is None:  # keys: a copy of the keys, as jnp.array's
        keys = object._rewrap(array(object._data, copy=copy)) if copy else object
        nd = keys.ndim
        return keys.reshape((1,) * (ndmin - nd) + keys.shape) if ndmin > nd else keys
    if isinstance(object, Tracer) or device_of(object) is not None or _needs_stacking(object):
        out = asarray(object, dtype, copy=copy)
    else:
        dt = _dtype_or_none(dtype, "array")
        h = numpy.array(object, dtype=dt)
        canonical_dtype(h.dtype, "array")
        out = _host_to_default(h)
    ndmin = operator_index(ndmin)
    nd = get_aval(out).ndim
    if ndmin > nd:
        out = _shape.reshape(out, (1,) * (ndmin - nd) + get_aval(out).shape)
    return _put(out, device)


def asanyarray(a: Any, dtype: Any = None, order: Any = None, *, device: Any = None,
               copy: bool | None = None) -> Any:
    """Same as :func:`asarray` (funcgrad has no array subclasses: a NumPy subclass such as
    ``numpy.matrix`` becomes a plain array), ``copy=`` included.

    Example:
        >>> asanyarray((1.0, 2.0)).shape
        (2,)
    """
    return asarray(a, dtype, order, device=device, copy=copy)


def ascontiguousarray(a: Any, dtype: Any = None, *, like: Any = None) -> Any:
    """Same as :func:`asarray` with at least one dimension, as NumPy does.

    Example:
        >>> ascontiguousarray(3.0).shape
        (1,)
    """
    return array(a, dtype, copy=None, ndmin=1, like=like)


# ---------------------------------------------------------------------------------------------
# Filled arrays


def _shape_tuple(shape: Any, fname: str) -> tuple[int, ...]:
    if type(shape) is int and shape >= 0:
        return (shape,)
    if type(shape) is tuple and all(type(s) is int and s >= 0 for s in shape):
        return shape
    if isinstance(shape, Tracer):
        shape = concrete_or_error(shape, f"{fname}: the shape")
    if isinstance(shape, int | numpy.integer) or (
        hasattr(shape, "ndim") and getattr(shape, "ndim", 1) == 0
    ):
        shape = (shape,)
    try:
        out = tuple(operator_index(concrete_or_error(s, f"{fname}: the shape")) for s in shape)
    except ConcretizationError:
        raise  # a traced entry: that error says why and how to fix it
    except TypeError:
        raise TypeError(
            f"{fname}: shape must be an int or a sequence of ints, got {shape!r}"
        ) from None
    if any(s < 0 for s in out):
        raise ValueError(f"{fname}: negative dimensions are not allowed, got {out}")
    return out


def canonical_device(device: Any) -> str:
    """The device name of a ``device=`` argument: a name, or (as in JAX) a
    :class:`~funcgrad.sharding.Sharding` or a ``PartitionSpec`` over the current mesh."""
    if isinstance(device, _sharding.PartitionSpec):
        mesh = _sharding.get_mesh()
        if mesh is None:
            raise ValueError("device: a PartitionSpec needs a mesh: pass NamedSharding(mesh, "
                             "spec) or use funcgrad.set_mesh(mesh)")
        device = _sharding.NamedSharding(mesh, device)
    if isinstance(device, _sharding.Sharding):
        device = device._device()
    return _canonical_name(device)


def _out_sharding(fname: str, device: Any, out_sharding: Any) -> Any:
    """JAX's ``out_sharding=`` (the result's sharding: on one device, where it goes)."""
    if out_sharding is None:
        return device
    if device is not None:
        raise ValueError(f"{fname}: pass device= or out_sharding=, not both")
    return out_sharding


def place_result(fname: str, out: Any, out_sharding: Any) -> Any:
    """JAX's ``out_sharding=`` of a computation (``reshape``, ``matmul``, ``einsum``, ...):
    a ``NamedSharding``, or a ``PartitionSpec`` over the current mesh, as JAX accepts there;
    on one device the result goes to that sharding's device (traced results stay)."""
    if out_sharding is None:
        return out
    if not isinstance(out_sharding, _sharding.NamedSharding | _sharding.PartitionSpec):
        raise TypeError(f"`out_sharding` argument of {fname} only supports instances of "
                        f"`NamedSharding` or `PartitionSpec`. Got {out_sharding!r} of type: "
                        f"{type(out_sharding)}")
    if isinstance(out_sharding, _sharding.PartitionSpec) and _sharding.get_mesh() is None:
        raise ValueError(f"{fname}: out_sharding={out_sharding!r}: a PartitionSpec needs a "
                         "mesh: pass NamedSharding(mesh, spec) or use funcgrad.set_mesh(mesh)")
    return _put(out, out_sharding)


def with_out_sharding(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with JAX's keyword-only ``out_sharding=`` (see :func:`place_result`) added to
    its signature."""

    @functools.wraps(fn)
    def wrapper(*args: Any, out_sharding: Any = None, **kwargs: Any) -> Any:
        out = fn(*args, **kwargs)
        return out if out_sharding is None else place_result(fn.__name__, out, out_sharding)

    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    at = next((i for i, p in enumerate(params) if p.kind is p.VAR_KEYWORD), len(params))
    params.insert(at, inspect.Parameter("out_sharding", inspect.Parameter.KEYWORD_ONLY,
                                        default=None, annotation="Any"))
    wrapper.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    return wrapper


def _default_xp() -> Any:
    return xp_for_device(get_default_device())


def _xp_of(device: Any) -> Any:
    """The array module of ``device`` (NumPy 2's and JAX's ``device=``; "cpu", "cuda", ...),
    the default device's when None."""
    return _default_xp() if device is None else xp_for_device(canonical_device(device))


def _like(fname: str, like: Any, device: Any) -> Any:
    """NumPy's ``like=`` (NEP 35: "an array of ``like``'s kind"): here, on ``like``'s device;
    ``device`` when ``like`` is None. Both given must agree."""
    if like is None:
        return device
    d = get_aval(like).device if isinstance(like, Tracer) else device_of(like)
    if d is None:
        raise TypeError(f"{fname}: like= must be an array, got {type(like).__name__}")
    if device is not None and canonical_device(device) != d:
        raise ValueError(f"{fname}: like= (an array on {d!r}) and device={device!r} disagree")
    return d


def _put(out: Any, device: Any) -> Any:
    """``out`` moved to ``device`` (NumPy 2's and JAX's ``device=``); traced values, which
    have no buffer yet, stay as they are (as ``funcgrad.device_put`` leaves them)."""
    if device is None or isinstance(out, Tracer):
        return out
    return device_put(out, canonical_device(device))


def zeros(shape: Any, dtype: Any = float, order: Any = "C", *, device: Any = None,
          out_sharding: Any = None, like: Any = None) -> Any:
    """An array of zeros on ``device`` (the default device when None).

    Example:
        >>> zeros((2, 3), dtype="int32").dtype, type(zeros(2, device="strict")).__name__
        (dtype('int32'), 'StrictArray')
    """
    device = _out_sharding("zeros", device, out_sharding)
    device = _like("zeros", like, device)
    _check_order(order, "zeros")
    dt = canonical_dtype(float if dtype is None else dtype, "zeros")
    return _xp_of(device).zeros(_shape_tuple(shape, "zeros"), dtype=dt)


def ones(shape: Any, dtype: Any = None, order: Any = "C", *, device: Any = None,
         out_sharding: Any = None, like: Any = None) -> Any:
    """An array of ones on ``device`` (the default device when None).

    Example:
        >>> ones(2).tolist()
        [1.0, 1.0]
    """
    device = _out_sharding("ones", device, out_sharding)
    device = _like("ones", like, device)
    _check_order(order, "ones")
    dt = canonical_dtype(float if dtype is None else dtype, "ones")
    return _xp_of(device).ones(_shape_tuple(shape, "ones"), dtype=dt)


def empty(shape: Any, dtype: Any = float, order: Any = "C", *, device: Any = None,
          out_sharding: Any = None, like: Any = None) -> Any:
    """Like :func:`zeros` (funcgrad never hands out uninitialised memory).

    Example:
        >>> empty(2).tolist()
        [0.0, 0.0]
    """
    device = _out_sharding("empty", device, out_sharding)
    device = _like("empty", like, device)
    return zeros(shape, dtype, order, device=device)


def full(shape: Any, fill_value: Any, dtype: Any = None, order: Any = "C", *,
         device: Any = None, out_sharding: Any = None, like: Any = None) -> Any:
    """An array of ``shape`` filled with ``fill_value`` (broadcast; traced values allowed).

    Example:
        >>> full((2,), 7).tolist(), full(2, 1.5, dtype="float32").dtype
        ([7, 7], dtype('float32'))
    """
    device = _out_sharding("full", device, out_sharding)
    device = _like("full", like, device)
    _check_order(order, "full")
    shape = _shape_tuple(shape, "full")
    dt = _dtype_or_none(dtype, "full")
    if isinstance(fill_value, Tracer):
        return fnp.broadcast_to(_cast(fill_value, dt), shape)
    if device is not None and device_of(fill_value) is not None:
        fill_value = device_put(fill_value, canonical_device(device))
    # An array fill value keeps its device; numbers and lists go to ``device`` or the default.
    dev = device_of(fill_value)
    if dt is None:
        dt = canonical_dtype(
            fill_value.dtype if dev is not None else numpy.asarray(fill_value).dtype, "full")
    xp = xp_for_device(dev) if dev is not None else _xp_of(device)
    if xp is not numpy and numpy.ndim(fill_value) != 0:
        # CuPy's full fills with a scalar only; an array (or list) fill value broadcasts.
        return xp.broadcast_to(xp.asarray(fill_value, dtype=dt), shape).copy()
    return xp.full(shape, fill_value, dtype=dt)


def _like_spec(a: Any, dtype: Any, shape: Any, fname: str,
               device: Any = None) -> tuple[str, numpy.dtype, tuple]:
    """(device, dtype, shape) for a ``*_like`` function of ``a`` (``device`` overrides
    ``a``'s)."""
    if not isinstance(a, Tracer) and device_of(a) is None and not isinstance(
        a, _PY_SCALARS
    ):
        a = asarray(a)
    aval = get_aval(a)
    dt = aval.dtype if dtype is None else canonical_dtype(dtype, fname)
    shp = aval.shape if shape is None else _shape_tuple(shape, fname)
    if device is not None:
        return canonical_device(device), dt, shp
    dev = aval.device if isinstance(a, Tracer) else device_of(a)
    return dev or get_default_device(), dt, shp


def zeros_like(a: Any, dtype: Any = None, order: Any = "K", subok: bool = True,
               shape: Any = None, *, device: Any = None,
               out_sharding: Any = None) -> Any:
    """Zeros with the shape and dtype of ``a`` (a tracer too), on ``a``'s device.

    Example:
        >>> zeros_like(numpy.ones((2,), numpy.float32)).dtype
        dtype('float32')
    """
    if _ext.is_extended(a) and dtype is None:
        return _ext.full_like(a, 0, shape)  # keys whose words are all 0, as JAX's
    device = _out_sharding("zeros_like", device, out_sharding)
    dev, dt, shp = _like_spec(a, dtype, shape, "zeros_like", device)
    return xp_for_device(dev).zeros(shp, dtype=dt)


def ones_like(a: Any, dtype: Any = None, order: Any = "K", subok: bool = True,
              shape: Any = None, *, device: Any = None,
              out_sharding: Any = None) -> Any:
    """Ones with the shape and dtype of ``a`` (a tracer too), on ``a``'s device.

    Example:
        >>> ones_like([1, 2]).tolist()
        [1, 1]
    """
    if _ext.is_extended(a) and dtype is None:
        return _ext.full_like(a, 1, shape)  # keys whose words are all 1, as JAX's
    device = _out_sharding("ones_like", device, out_sharding)
    dev, dt, shp = _like_spec(a, dtype, shape, "ones_like", device)
    return xp_for_device(dev).ones(shp, dtype=dt)


def empty_like(a: Any, dtype: Any = None, order: Any = "K", subok: bool = True,
               shape: Any = None, *, device: Any = None) -> Any:
    """Like :func:`zeros_like` (funcgrad never hands out uninitialised memory).

    Example:
        >>> empty_like(numpy.ones(2)).tolist()
        [0.0, 0.0]
    """
    return zeros_like(a, dtype, order, subok, shape, device=device)


def full_like(a: Any, fill_value: Any, dtype: Any = None, order: Any = "K",
              subok: bool = True, shape: Any = None, *, device: Any = None,
              out_sharding: Any = None) -> Any:
    """``fill_value`` in the shape and dtype of ``a`` (traced fill values differentiate).

    Example:
        >>> full_like(numpy.zeros(2, numpy.int64), 2.7).tolist()
        [2, 2]
    """
    if _ext.is_extended(a) and dtype is None:
        return _ext.full_like(a, fill_value, shape)
    device = _out_sharding("full_like", device, out_sharding)
    dev, dt, shp = _like_spec(a, dtype, shape, "full_like", device)
    if isinstance(fill_value, Tracer):
        return fnp.broadcast_to(_cast(fill_value, dt), shp)
    if device_of(fill_value) not in (None, dev):
        fill_value = device_put(fill_value, dev)
    return xp_for_device(dev).full(shp, fill_value, dtype=dt)


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = float,
        order: Any = "C", *, device: Any = None, like: Any = None) -> Any:
    """A 2-D array with ones on diagonal ``k``, on ``device`` (the default device when None).

    Example:
        >>> eye(2, 3, k=1, dtype=int).tolist()
        [[0, 1, 0], [0, 0, 1]]
    """
    _check_order(order, "eye")
    device = _like("eye", like, device)
    dt = canonical_dtype(float if dtype is None else dtype, "eye")
    N = operator_index(concrete_or_error(N, "eye: N"))
    M = N if M is None else operator_index(concrete_or_error(M, "eye: M"))
    k = operator_index(concrete_or_error(k, "eye: k"))
    return _xp_of(device).eye(N, M, k=k, dtype=dt)


def identity(n: int, dtype: Any = None, *, like: Any = None) -> Any:
    """The ``n`` by ``n`` identity matrix.

    Example:
        >>> identity(2).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
    """
    return eye(n, dtype=float if dtype is None else dtype, like=like)


# ---------------------------------------------------------------------------------------------
# Ranges


def _host_scalar(v: Any, what: str) -> Any:
    v = concrete_or_error(v, what)
    if isinstance(v, _PY_SCALARS):
        return v
    h = to_numpy(v)
    if numpy.ndim(h) != 0:
        raise ValueError(f"{what} must be a scalar, got an array of shape {numpy.shape(h)}")
    return h[()]


def arange(start: Any = None, stop: Any = None, step: Any = None, dtype: Any = None, *,
           device: Any = None, out_sharding: Any = None, like: Any = None) -> Any:
    """Evenly spaced values in ``[start, stop)``; dtype as NumPy (int64 for ints), on
    ``device`` (the default device when None).

    The bounds must be concrete (they fix the length): a traced bound raises
    ConcretizationError; build traced ranges from ``linspace`` or ``start + step * arange(n)``.

    Example:
        >>> arange(5).dtype, arange(0.0, 1.0, 0.25).tolist()
        (dtype('int64'), [0.0, 0.25, 0.5, 0.75])
    """
    device = _out_sharding("arange", device, out_sharding)
    device = _like("arange", like, device)
    if start is None:  # NumPy 2's arange(stop=n): counting from 0
        if stop is None:
            raise TypeError("arange() requires stop to be specified.")
        start = 0
    what = "arange: its bounds fix the length of the result, so each"
    args = [_host_scalar(v, what) for v in (start, stop, step) if v is not None]
    if stop is None and step is not None:
        args = [0, args[0], args[1]]
    dt = _dtype_or_none(dtype, "arange")
    dev = get_default_device() if device is None else canonical_device(device)
    if dev == "cpu":
        out = numpy.arange(*args, dtype=dt)
        canonical_dtype(out.dtype, "arange")
        return out
    # NumPy decides the dtype; the device computes the values.
    dt = numpy.arange(*args, dtype=dt).dtype
    canonical_dtype(dt, "arange")
    return xp_for_device(dev).arange(*args, dtype=dt)


def _array_or_scalar(x: Any) -> Any:
    if isinstance(x, Tracer | numpy.generic) or isinstance(x, _PY_SCALARS):
        return x
    return asarray(x)


def _device_of_values(*xs: Any) -> Any:
    for x in xs:
        d = device_of(x)
        if d is not None:
            return xp_for_device(d)
    return _default_xp()


def _concrete_value(x: Any) -> Any:
    return x.to_concrete_value() if isinstance(x, Tracer) else x


def _bounds_on_one_device(start: Any, stop: Any, dt: numpy.dtype) -> tuple[Any, Any]:
    """Both bounds cast to ``dt``; a bound that is a Python or NumPy scalar is made on the
    other's device (cast alone it would be a host array, which a device bound cannot meet)."""
    dev = get_aval(start).device or get_aval(stop).device
    out = []
    for b in (start, stop):
        if dev not in (None, "cpu") and isinstance(b, _PY_SCALARS):
            out.append(_ew.convert_element_type(xp_for_device(dev).asarray(b), dt))
        else:
            out.append(_ew.convert_element_type(b, dt))
    return out[0], out[1]


def linspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: Any = None,
    axis: int = 0,
    *,
    device: Any = None,
) -> Any:
    """``num`` evenly spaced samples from ``start`` to ``stop`` (NumPy's algorithm), on
    ``device`` when given (else where the bounds are, or the default device).

    Traced ``start``/``stop`` work and differentiate (the samples are built from ``iota``).

    Example:
        >>> linspace(0.0, 1.0, 5).tolist()
        [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    num = operator_index(concrete_or_error(num, "linspace: num"))
    if num < 0:
        raise ValueError(f"linspace: Number of samples, {num}, must be non-negative.")
    dt_out = _dtype_or_none(dtype, "linspace")
    if device is not None:
        out = linspace(start, stop, num, endpoint, retstep, dtype, axis)
        return (_put(out[0], device), out[1]) if retstep else _put(out, device)
    start, stop = _array_or_scalar(start), _array_or_scalar(stop)
    if not (isinstance(start, Tracer) or isinstance(stop, Tracer)):
        xp = _device_of_values(start, stop)
        # CuPy converts floored samples to an integer dtype itself, saturating (-3.0 -> uint8
        # is 0 there, NumPy's 253): float samples here, converted as NumPy converts them
        to_int = xp is not numpy and dt_out is not None and dt_out.kind in "iu"
        out = xp.linspace(start, stop, num, endpoint=endpoint, retstep=retstep,
                          dtype=None if to_int else dt_out, axis=axis)
        if to_int:
            y = _ew.convert_element_type(xp.floor(out[0] if retstep else out), dt_out)
            out = (y, out[1]) if retstep else y
        if retstep and xp is not numpy:
            # CuPy hands the step back as a Python float; NumPy's has the computation's dtype.
            step_dt = result_dtype(get_aval(start), get_aval(stop), get_aval(0.0))[0]
            out = (out[0], xp.asarray(out[1], dtype=step_dt))
        return out
    a_start, a_stop = get_aval(start), get_aval(stop)
    dt = result_dtype(a_start, a_stop, get_aval(0.0))[0]
    bshape = broadcast_shapes_or_error("linspace", a_start.shape, a_stop.shape)
    start_c, stop_c = _bounds_on_one_device(start, stop, dt)
    delta = _ew.sub(stop_c, start_c)
    div = (num - 1) if endpoint else num
    # The counts 0..num-1 as a constant on the bounds' device (an iota would be on the
    # default device, which device-resident bounds could not meet).
    bdev = a_start.device or a_stop.device or get_default_device()
    y = xp_for_device(bdev).arange(num, dtype=dt).reshape((num,) + (1,) * len(bshape))
    if div > 0:
        step: Any = _ew.div(delta, numpy.asarray(div, dtype=dt)[()])
        known = _concrete_value(step)
        # NumPy's special case for denormal steps (gh-5437), taken when the value is known.
        if known is not None and bool(numpy.any(to_numpy(known) == 0)):
            y = _ew.mul(_ew.div(y, numpy.asarray(div, dtype=dt)[()]), delta)
        else:
            y = _ew.mul(y, step)
    else:
        step = numpy.nan
        y = _ew.mul(y, delta)
    y = _ew.add(y, start_c)
    y = _shape.broadcast_to(y, (num,) + bshape)
    if endpoint and num > 1:
        last = _shape.expand_dims(_shape.broadcast_to(stop_c, bshape), (0,))
        y = _shape.concatenate([_shape.slice_in_dim(y, 0, num - 1, axis=0), last], 0)
    if axis != 0:
        y = _shape.moveaxis(y, 0, axis)
    if dt_out is not None and dt_out.kind in "iu":
        y = fnp.floor(y)
    y = _cast(y, dt_out)
    return (y, step) if retstep else y


def logspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    base: Any = 10.0,
    dtype: Any = None,
    axis: int = 0,
) -> Any:
    """``base ** linspace(start, stop, num)``; traced bounds differentiate.

    Example:
        >>> logspace(0.0, 2.0, 3).tolist()
        [1.0, 10.0, 100.0]
    """
    start, stop, base = (_array_or_scalar(v) for v in (start, stop, base))
    if not any(isinstance(v, Tracer) for v in (start, stop, base)):
        xp = _device_of_values(start, stop, base)
        return xp.logspace(start, stop, num, endpoint=endpoint, base=base,
                           dtype=_dtype_or_none(dtype, "logspace"), axis=axis)
    if isinstance(base, Tracer):
        # Constant bounds go to a traced base's device: arrays, and Python numbers when both
        # are (their exponents are float64 either way); a Python number beside an array
        # stays weak, linspace puts it there.
        both_py = all(type(v) in _PY_NUMBERS for v in (start, stop))
        start, stop = (v if isinstance(v, Tracer) or (type(v) in _PY_NUMBERS and not both_py)
                       else _put(asarray(v), get_aval(base).device) for v in (start, stop))
    if get_aval(base).ndim:
        ndmax = len(broadcast_shapes_or_error(
            "logspace", *(get_aval(v).shape for v in (start, stop, base))))
        start, stop, base = (array(v, copy=None, ndmin=ndmax) for v in (start, stop, base))
        base = fnp.expand_dims(base, axis)
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    if not isinstance(base, Tracer) and device_of(base) is None:
        # A scalar base as an array of the dtype NEP 50 gives it against y, on y's device.
        base = xp_for_device(get_aval(y).device or get_default_device()).asarray(
            base, dtype=result_dtype(get_aval(base), get_aval(y))[0])
    out = fnp.power(base, y)
    return _cast(out, _dtype_or_none(dtype, "logspace"))


def geomspace(
    start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
    axis: int = 0,
) -> Any:
    """Geometric progression from ``start`` to ``stop``; traced bounds differentiate.

    Example:
        >>> geomspace(1.0, 100.0, 3).tolist()
        [1.0, 10.0, 100.0]
    """
    num = operator_index(concrete_or_error(num, "geomspace: num"))
    if num < 0:
        raise ValueError(f"geomspace: Number of samples, {num}, must be non-negative.")
    dt_out = _dtype_or_none(dtype, "geomspace")
    start, stop = _array_or_scalar(start), _array_or_scalar(stop)
    if not (isinstance(start, Tracer) or isinstance(stop, Tracer)):
        xp = _device_of_values(start, stop)
        if not hasattr(xp, "geomspace"):  # CuPy has none: NumPy's, computed on the host, moved
            out = numpy.geomspace(to_numpy(start), to_numpy(stop), num, endpoint=endpoint,
                                  dtype=dt_out, axis=axis)
            return xp.asarray(out)
        return xp.geomspace(start, stop, num, endpoint=endpoint, dtype=dt_out, axis=axis)
    # NumPy's algorithm from primitives (a value-dependent zero check cannot run on traced
    # bounds, as in JAX): rotate start onto the positive real axis, space the logarithms,
    # put the exact bounds at the ends, rotate back.
    # NumPy promotes with a float64 zero (its `zeros((), dtype=None)`): float32 bounds give
    # float64 samples, eagerly, so traced ones must too.
    dt = result_dtype(get_aval(start), get_aval(stop), get_aval(numpy.zeros((), float)))[0]
    start_c, stop_c = _bounds_on_one_device(start, stop, dt)
    out_sign = fnp.sign(start_c)
    start_c = _ew.div(start_c, out_sign)
    stop_c = _ew.div(stop_c, out_sign)
    y = logspace(fnp.log10(start_c), fnp.log10(stop_c), num, endpoint=endpoint, base=10.0,
                 dtype=dt)
    if num > 0:
        bshape = y.shape[1:]
        ends = [_shape.expand_dims(_shape.broadcast_to(start_c, bshape), (0,))]
        middle_stop = num
        if num > 1 and endpoint:
            middle_stop = num - 1
        pieces = ends + [_shape.slice_in_dim(y, 1, middle_stop, axis=0)]
        if middle_stop < num:
            pieces.append(_shape.expand_dims(_shape.broadcast_to(stop_c, bshape), (0,)))
        y = _shape.concatenate(pieces, 0)
    y = _ew.mul(out_sign, y)
    if axis != 0:
        y = _shape.moveaxis(y, 0, axis)
    return _cast(y, dt_out)


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> tuple:
    """Coordinate arrays from 1-D coordinate vectors (``indexing`` 'xy' or 'ij').

    Example:
        >>> [g.shape for g in meshgrid(numpy.arange(3), numpy.arange(2))]
        [(2, 3), (2, 3)]
    """
    if indexing not in ("xy", "ij"):
        raise ValueError("meshgrid: Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    s0 = (1,) * ndim
    xs = fnp._shape._arrs_together(*xi)  # Python data beside device arrays goes to their device
    out = [
        _shape.reshape(x, s0[:i] + (-1,) + s0[i + 1:]) for i, x in enumerate(xs)
    ]
    if indexing == "xy" and ndim > 1:
        out[0] = _shape.reshape(out[0], (1, -1) + s0[2:])
        out[1] = _shape.reshape(out[1], (-1, 1) + s0[2:])
    if not sparse:
        out = list(fnp.broadcast_arrays(*out))
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# Triangles


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = float, *,
        like: Any = None) -> Any:
    """Ones at and below diagonal ``k``, zeros above.

    Example:
        >>> tri(2, dtype=int).tolist()
        [[1, 0], [1, 1]]
    """
    dt = canonical_dtype(float if dtype is None else dtype, "tri")
    N = operator_index(concrete_or_error(N, "tri: N"))
    M = N if M is None else operator_index(concrete_or_error(M, "tri: M"))
    k = operator_index(concrete_or_error(k, "tri: k"))
    return _put(_default_xp().tri(N, M, k=k, dtype=dt), _like("tri", like, None))


def _triangle(m: Any, k: Any, lower: bool, fname: str) -> Any:
    m = asarray(m)
    a = get_aval(m)
    if a.ndim < 1:
        raise ShapeError(f"{fname}: input must be at least 1-d, got {a.str_short()}")
    k = operator_index(concrete_or_error(k, f"{fname}: k"))
    if not isinstance(m, Tracer):
        xp = xp_for_device(device_of(m))
        return xp.tril(m, k=k) if lower else xp.triu(m, k=k)
    xp = xp_for_device(a.device or get_default_device())
    mask = xp.tri(*a.shape[-2:], k=k if lower else k - 1, dtype=bool)
    if not lower:
        mask = ~mask
    # A select, not a product with a 0/1 mask: inf/nan outside the triangle must give 0.
    return fnp.where(mask, m, a.dtype.type(0))


def tril(m: Any, k: int = 0) -> Any:
    """Lower triangle of the last two axes of ``m`` (zero above diagonal ``k``);
    differentiable.

    Example:
        >>> tril(numpy.ones((2, 2))).tolist()
        [[1.0, 0.0], [1.0, 1.0]]
    """
    return _triangle(m, k, True, "tril")


def triu(m: Any, k: int = 0) -> Any:
    """Upper triangle of the last two axes of ``m`` (zero below diagonal ``k``);
    differentiable.

    Example:
        >>> triu(numpy.ones((2, 2))).tolist()
        [[1.0, 1.0], [0.0, 1.0]]
    """
    return _triangle(m, k, False, "triu")


def diagflat(v: Any, k: int = 0) -> Any:
    """A 2-D array with the flattened ``v`` on diagonal ``k``; differentiable.

    Example:
        >>> diagflat([1, 2]).tolist()
        [[1, 0], [0, 2]]
    """
    v = _shape.reshape(asarray(v), (-1,))
    n = get_aval(v).shape[0]
    k = operator_index(concrete_or_error(k, "diagflat: k"))
    zero = get_aval(v).dtype.type(0)
    # Interior padding by n puts v[i] at flat position i * (n + 1): the diagonal of n x n.
    d = _shape.reshape(_shape.pad(v, zero, [(0, 0, n)]), (n, n))
    if k > 0:
        d = _shape.pad(d, zero, [(0, k, 0), (k, 0, 0)])
    elif k < 0:
        d = _shape.pad(d, zero, [(-k, 0, 0), (0, -k, 0)])
    return d
