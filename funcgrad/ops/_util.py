"""Helpers shared by the primitive definitions: factories, dtype probing, shape checks.

Dtype rules follow NumPy exactly by *probing*: the result dtype of an elementwise op is what
NumPy returns on one-element arrays of the input dtypes (Python scalars stand in for weak
values, so NEP 50 applies), cached per dtype combination.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from funcgrad.avals import ShapedArray, float0, weak_join
from funcgrad.backend import operator_index, scalar_array
from funcgrad.core import Primitive
from funcgrad.errors import AxisError, DeviceMismatchError, DTypeError, ShapeError

__all__ = [
    "as_array",
    "make_primitive",
    "probe_dtype",
    "broadcast_shapes_or_error",
    "result_device",
    "normalize_axis",
    "normalize_axes",
    "check_static",
]


def make_primitive(
    name: str,
    impl: Callable[..., list[Any]],
    abstract_eval: Callable[..., list[ShapedArray]],
    multiple_results: bool = False,
) -> Primitive:
    """A primitive with its implementation and shape/dtype rule."""
    p = Primitive(name, multiple_results)
    p.def_impl(impl)
    p.def_abstract_eval(abstract_eval)
    return p


def _stand_in(dtype: numpy.dtype, weak: bool) -> Any:
    if weak:
        return {"i": 1, "u": 1, "f": 1.0, "c": 1.0 + 0j, "b": True}[dtype.kind]
    return numpy.ones((1,), dtype=dtype)


@functools.lru_cache(maxsize=8192)
def _probe(fn: Callable[..., Any], key: tuple, params: tuple) -> tuple[numpy.dtype, bool]:
    args = [_stand_in(d, w) for d, w in key]
    if key and all(w for _, w in key):
        # Weak operands alone: the one whose dtype the weak join keeps (a weak float32 with
        # Python numbers: float32) is probed as a NumPy scalar of its dtype, the others as
        # Python numbers (sin of a weak float32 is float32; of a Python float, float64).
        join = weak_join(tuple(d for d, _ in key))
        i = next((i for i, (d, _) in enumerate(key) if d == join), None)
        if i is not None:
            args[i] = join.type(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with numpy.errstate(all="ignore"):
            out = fn(*args, **dict(params))
    weak = all(w for _, w in key) and len(key) > 0
    return numpy.asarray(out).dtype, weak


def probe_dtype(
    name: str, fn: Callable[..., Any], *avals: ShapedArray, **params: Any
) -> tuple[numpy.dtype, bool]:
    """(dtype, weak_type) NumPy gives for ``fn`` on values of ``avals`` (NEP 50 included)."""
    key = tuple((a.dtype, a.weak_type) for a in avals)
    for a in avals:
        if a.dtype == float0:
            raise DTypeError(f"{name}: float0 (the tangent type of integers) is not a number")
    try:
        return _probe(fn, key, tuple(sorted(params.items())))
    except TypeError as e:
        dts = ", ".join(str(a.dtype) for a in avals)
        raise DTypeError(f"{name} does not support dtype(s) ({dts}): {e}") from None


def broadcast_shapes_or_error(name: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """NumPy broadcasting of ``shapes``; a ShapeError naming ``name`` and the shapes if not."""
    if len(shapes) == 1:
        return shapes[0]
    first = shapes[0]
    if all(s == first for s in shapes):
        return first
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(ndim):
        size = 1
        for s in shapes:
            j = len(s) - ndim + i
            if j < 0:
                continue
            d = s[j]
            if d == 1:
                continue
            if size != 1 and d != size:
                pretty = ", ".join(str(tuple(s)) for s in shapes)
                raise ShapeError(
                    f"{name}: shapes {pretty} cannot be broadcast together "
                    f"(axis {i - ndim} has sizes {size} and {d})"
                )
            size = d
        out.append(size)
    return tuple(out)


def result_device(name: str, *avals: ShapedArray) -> str | None:
    """The device of an operation on ``avals``: their one device; host arrays are uncommitted
    (``core.place_uncommitted``): beside arrays of another device, the operation runs there."""
    devs = {a.device for a in avals if a.device is not None}
    if len(devs) > 1:
        devs.discard("cpu")
    if len(devs) > 1:
        common_device_error = sorted(devs)

        raise DeviceMismatchError(
            f"{name}: arrays on different devices met: {common_device_error[0]!r} and "
            f"{common_device_error[1]!r}; move them to one device with funcgrad.device_put"
        )
    return devs.pop() if devs else None


def normalize_axis(name: str, axis: int, ndim: int) -> int:
    """``axis`` as a non-negative int; an error naming the primitive if out of range."""
    if not isinstance(axis, int | numpy.integer):
        try:  # a concrete 0-d integer array, as NumPy takes one (CuPy's have no __index__)
            axis = operator_index(axis)
        except TypeError:
            raise TypeError(f"{name}: axis must be an int, got {type(axis).__name__}") from None
    if not -ndim <= axis < ndim:
        raise AxisError(f"{name}: axis {axis} is out of bounds for an array of rank {ndim}")
    return int(axis) % ndim


def normalize_axes(name: str, axes: Any, ndim: int) -> tuple[int, ...]:
    """A sorted tuple of distinct non-negative axes (None means all axes)."""
    if axes is None:
        return tuple(range(ndim))
    if isinstance(axes, int | numpy.integer):
        axes = (axes,)
    out = tuple(sorted(normalize_axis(name, int(a), ndim) for a in axes))
    if len(set(out)) != len(out):
        raise ShapeError(f"{name}: repeated axis in {tuple(axes)}")
    return out


def check_static(name: str, **params: Any) -> None:
    """Static parameters must be hashable Python data, never arrays or tracers."""
    for k, v in params.items():
        try:
            hash(v)
        except TypeError:
            raise TypeError(
                f"{name}: parameter {k}={type(v).__name__} must be static, hashable Python "
                "data (an int, a tuple of ints, a dtype...), not an array or a list; pass "
                "array-valued operands as positional arguments instead"
            ) from None


def same_avals_or_error(name: str, avals: Sequence[ShapedArray]) -> None:
    first = avals[0]
    for a in avals[1:]:
        if a.shape != first.shape or a.dtype != first.dtype:
            raise ShapeError(
                f"{name}: operands must have equal shapes and dtypes, got "
                + ", ".join(x.str_short() for x in avals)
            )


def as_array(xp: Any, x: Any) -> Any:
    """``x`` as an array of ``xp`` when it is a Python or NumPy scalar (CuPy's functions,
    unlike NumPy's, refuse scalars where they take an array); arrays pass through.

    Example:
        >>> as_array(numpy, 2.0), as_array(numpy, numpy.ones(1))
        (array(2.), array([1.]))
    """
    return scalar_array(xp, x) if isinstance(x, bool | int | float | complex | numpy.generic) else x
