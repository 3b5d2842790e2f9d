"""Argument checks shared by the ``funcgrad.lax`` wrappers.

``jax.lax`` is stricter than NumPy: binary operations take operands of one dtype (Python
scalars, which are weakly typed, adopt the other operand's dtype when their kind fits), and
shapes must agree up to size-1 axes (rank-0 operands broadcast). These helpers raise the
``TypeError`` JAX raises, naming the ``lax`` function and the offending argument.
"""

from __future__ import annotations

from typing import Any

import numpy

from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import operator_index
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

# The dtype kinds a weak (Python-scalar) value may take on: a Python int fits any numeric
# dtype, a float only inexact ones, a complex only complex ones, a bool only bool.
_WEAK_FITS = {"b": "b", "i": "iufc", "u": "iufc", "f": "fc", "c": "c"}

FLOATING = "f"
INEXACT = "fc"
NUMERIC = "iufc"
INTEGRAL = "iu"
BOOL_OR_INT = "biu"
ANY = "biufc"

_KIND_WORDS = {
    "f": "floating", "fc": "floating or complex", "iufc": "numeric", "iu": "integer",
    "biu": "bool or integer", "biufc": "numeric or bool", "c": "complex",
}


def aval_of(name: str, x: Any, arg: str = "operand") -> ShapedArray:
    """``x``'s abstract value, or a TypeError naming ``lax.<name>`` and the argument."""
    try:
        return get_aval(x)
    except TypeError as e:
        raise TypeError(f"lax.{name}: argument {arg} is not an array: {e}") from None


def check_kind(name: str, a: ShapedArray, kinds: str, arg: str = "operand") -> None:
    if a.dtype.kind not in kinds:
        raise DTypeError(
            f"lax.{name} does not accept dtype {a.dtype} for {arg}; accepted: "
            f"{_KIND_WORDS.get(kinds, kinds)} dtypes"
        )


def same_dtypes(name: str, args: dict[str, Any], kinds: str = ANY) -> list[ShapedArray]:
    """Check that the arrays in ``args`` (name -> value) share one dtype of ``kinds``.

    Weak values (Python scalars) must fit the strong dtype's kind; every non-scalar operand
    must have the same rank, and sizes must agree up to 1s. Returns the avals in order.
    """
    avals = [aval_of(name, v, k) for k, v in args.items()]
    strong = [(k, a) for k, a in zip(args, avals) if not a.weak_type]
    if strong:
        k0, a0 = strong[0]
        for k, a in strong[1:]:
            if a.dtype != a0.dtype:
                raise DTypeError(
                    f"lax.{name} requires arguments to have the same dtypes, got "
                    f"{a0.dtype} ({k0}) and {a.dtype} ({k}); convert one with "
                    "lax.convert_element_type"
                )
        check_kind(name, a0, kinds, k0)
        for k, a in zip(args, avals):
            if a.weak_type and a0.dtype.kind not in _WEAK_FITS[a.dtype.kind]:
                raise DTypeError(
                    f"lax.{name}: the Python scalar {k} (a {a.dtype.kind!r}-kind value) does "
                    f"not fit the dtype {a0.dtype} of {k0}"
                )
            v = args[k]
            if a.weak_type and a0.dtype.kind in "iu" and type(v) is int and not (
                    numpy.iinfo(a0.dtype).min <= v <= numpy.iinfo(a0.dtype).max):
                # converting would wrap it (lax.pad(uint8, 300) padded with 44); JAX refuses
                # a Python scalar beside a uint8 array at all
                raise DTypeError(
                    f"lax.{name}: the Python scalar {k} = {v} is out of the range of the dtype "
                    f"{a0.dtype} of {k0}; pass a value of that dtype")
    else:
        for k, a in zip(args, avals):
            check_kind(name, a, kinds, k)
    shaped = [(k, a) for k, a in zip(args, avals) if a.ndim]
    if len({a.ndim for _, a in shaped}) > 1:
        raise TypeError(
            f"lax.{name}: arrays must have the same rank (only rank-0 values broadcast), got "
            + ", ".join(f"{k}{a.shape}" for k, a in shaped)
        )
    return avals


def operands_and_inits(name: str, operands: Any, inits: Any, what: tuple[str, str]) -> tuple:
    """The leaves of the ``operands`` pytree, its treedef, the leaves of ``inits`` (one
    structure) and the operands' abstract values (one shape), or a TypeError as JAX's
    ``lax.reduce`` / ``reduce_window`` raise.

    Example:
        >>> import numpy as np
        >>> ops, tree, inits, avals = operands_and_inits(
        ...     "reduce", (np.ones(2), np.zeros(2)), (0.0, 1.0), ("operands", "init_values"))
        >>> len(ops), inits, [a.shape for a in avals]
        (2, [0.0, 1.0], [(2,), (2,)])
    """
    flat, tree = tree_util.tree_flatten(operands)
    flat_inits, init_tree = tree_util.tree_flatten(inits)
    if tree != init_tree or not flat:
        raise TypeError(f"lax.{name}: {what[0]} and {what[1]} must be pytrees of one structure "
                        f"with at least one array, got {tree} and {init_tree}")
    avals = [aval_of(name, x) for x in flat]
    shape = avals[0].shape
    if any(a.shape != shape for a in avals):
        raise TypeError(f"lax.{name}: all operands must have one shape, got "
                        f"{[a.shape for a in avals]}")
    return flat, tree, flat_inits, avals


def static_int(name: str, v: Any, arg: str) -> int:
    try:
        return operator_index(v)
    except TypeError:
        raise TypeError(f"lax.{name}: {arg} must be a static Python int, got {v!r}") from None


def static_ints(name: str, seq: Any, arg: str) -> tuple[int, ...]:
    if isinstance(seq, int | numpy.integer):
        raise TypeError(f"lax.{name}: {arg} must be a sequence of ints, got {seq!r}")
    try:
        return tuple(operator_index(v) for v in seq)
    except TypeError:
        raise TypeError(
            f"lax.{name}: {arg} must be a sequence of static Python ints, got {seq!r}"
        ) from None


def static_shape(name: str, shape: Any, arg: str = "shape") -> tuple[int, ...]:
    """A shape: a sequence of static ints, or one Python int ``n`` for ``(n,)`` (JAX's
    canonical shapes take both; a NumPy integer is not a shape there)."""
    if isinstance(shape, int) and not isinstance(shape, bool):
        return (shape,)
    return static_ints(name, shape, arg)


def axis_in(name: str, axis: Any, ndim: int, arg: str = "axis") -> int:
    axis = static_int(name, axis, arg)
    if not -ndim <= axis < ndim:
        raise ShapeError(f"lax.{name}: {arg}={axis} is out of bounds for rank {ndim}")
    return axis % ndim


def axes_in(name: str, axes: Any, ndim: int, arg: str = "axes") -> tuple[int, ...]:
    out = tuple(axis_in(name, a, ndim, arg) for a in static_ints(name, axes, arg))
    if len(set(out)) != len(out):
        raise ShapeError(f"lax.{name}: {arg}={tuple(axes)} has repeated axes")
    return out


def monoid_identity(monoid: str, dtype: numpy.dtype) -> Any:
    """The identity of ``monoid`` (``'add'``, ``'mul'``, ``'max'``, ``'min'``) in ``dtype``, as
    JAX's: what an empty reduction or a skipped window position contributes (``-inf`` for a
    float max, the smallest integer for an integer max, ``False`` for a bool max)."""
    dtype = numpy.dtype(dtype)
    if monoid == "add":
        return dtype.type(0)
    if monoid == "mul":
        return dtype.type(1)
    if dtype.kind == "b":
        return dtype.type(monoid == "min")
    if dtype.kind in "iu":
        info = numpy.iinfo(dtype)
        return dtype.type(info.min if monoid == "max" else info.max)
    return dtype.type(-numpy.inf if monoid == "max" else numpy.inf)


def is_own_identity(monoid: str, init: Any) -> bool:
    """Whether ``init`` is a concrete scalar equal to ``monoid``'s identity in its *own* dtype
    (``-inf`` for a float max, ``0`` for add, ``True`` for a bool min): JAX's test
    (``_get_monoid_reducer``) for handing a reduction to its monoid, whose result is then the
    operand dtype's, whatever the init's dtype (an integer max from ``-inf``).

    Example:
        >>> is_own_identity("max", -numpy.inf), is_own_identity("add", numpy.float32(1))
        (True, False)
    """
    if not isinstance(init, bool | int | float | numpy.generic | numpy.ndarray):
        return False  # traced or on a device: not known to be the identity
    v = numpy.asarray(init)
    return v.shape == () and v.dtype.kind in "biuf" and bool(
        v == monoid_identity(monoid, v.dtype))


def is_value(init: Any, value: Any) -> bool:
    """``init`` is concretely the scalar ``value`` (then the combine step can be skipped)."""
    if not isinstance(init, bool | int | float | complex | numpy.generic | numpy.ndarray):
        return False  # traced or on a device: the combine step stays (it is exact anyway)
    v = numpy.asarray(init)
    return bool(v == value) and (not isinstance(value, float) or
                                 numpy.signbit(v) == numpy.signbit(value))
