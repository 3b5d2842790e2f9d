"""Reductions, cumulative ops, sorting, contractions and ``associative_scan`` for ``lax``.

All compose existing primitives. Integer sums and products keep the operand's dtype (wrapping
on overflow) as ``jax.lax`` does, where NumPy would widen to int64. ``associative_scan`` is the
log-depth odd/even parallel prefix over strided slices, so it differentiates and batches like
any composition of primitives.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy

import funcgrad.numpy as fnp
import funcgrad.ops.elementwise as _ew
import funcgrad.ops.elementwise_extra as _ewx
import funcgrad.ops.linalg as _la
import funcgrad.ops.reductions as _red
import funcgrad.ops.shape as _sh
import funcgrad.ops.sorting as _sort
from funcgrad.avals import ShapedArray
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.lax import _elementwise as _lew
from funcgrad.lax._common import (
    ANY,
    BOOL_OR_INT,
    FLOATING,
    NUMERIC,
    aval_of,
    axes_in,
    axis_in,
    check_kind,
    is_own_identity,
    is_value,
    monoid_identity,
    operands_and_inits,
    static_int,
    static_ints,
)
from funcgrad.numpy._creation import with_out_sharding
from funcgrad.numpy._dot_precision import (
    _EMULATED_FORMATS,
    _F32,
    DotAlgorithm,
    DotAlgorithmPreset,
    Precision,
    algorithm_of,
    algorithm_types,
    check_precision,
    to_format,
)
from funcgrad.ops.control_flow import scan as _scan
from funcgrad.ops.custom_derivatives import custom_jvp
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

Array = Any

__all__ = [
    "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or",
    "reduce_xor", "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin",
    "cumlogsumexp", "sort", "sort_key_val", "top_k", "Precision", "DotAlgorithm", "DotAlgorithmPreset", "dot",
    "dot_general", "scaled_dot", "batch_matmul", "associative_scan",
]


def _keep_int_dtype(out: Array, a: ShapedArray) -> Array:
    # lax accumulates integers in the operand's own type; NumPy's rules widen to int64.
    if a.dtype.kind in "iu":
        return _ew.convert_element_type(out, a.dtype)
    return out


def _reduce_args(name: str, operand: Array, axes: Any, kinds: str) -> tuple[ShapedArray, tuple]:
    a = aval_of(name, operand)
    check_kind(name, a, kinds)
    return a, tuple(sorted(axes_in(name, axes, a.ndim)))


@with_out_sharding
def reduce_sum(operand: Array, axes: Sequence[int]) -> Array:
    """Sum over ``axes``; integer sums keep the operand's dtype.

    Example:
        >>> from funcgrad import lax
        >>> lax.reduce_sum(numpy.ones((2, 3), numpy.int32), (1,))
        array([3, 3], dtype=int32)
    """
    a, axes = _reduce_args("reduce_sum", operand, axes, NUMERIC)
    return _keep_int_dtype(_red.reduce_sum(operand, axes), a)


def reduce_prod(operand: Array, axes: Sequence[int]) -> Array:
    """Product over ``axes``; integer products keep the operand's dtype.

    Example:
        >>> from funcgrad import lax
        >>> lax.reduce_prod(numpy.array([[1.0, 2.0], [3.0, 4.0]]), (0,)).tolist()
        [3.0, 8.0]
    """
    a, axes = _reduce_args("reduce_prod", operand, axes, NUMERIC)
    return _keep_int_dtype(_red.reduce_prod(operand, axes), a)


def reduce_max(operand: Array, axes: Sequence[int]) -> Array:
    """Maximum over ``axes`` (over no elements: ``-inf``, or the dtype's smallest value).

    Example:
        >>> from funcgrad import lax
        >>> lax.reduce_max(numpy.array([[1.0, 5.0], [3.0, 2.0]]), (1,)).tolist()
        [5.0, 3.0]
    """
    a, axes = _reduce_args("reduce_max", operand, axes, ANY)
    if any(a.shape[i] == 0 for i in axes):  # JAX: the identity, as an empty fold gives
        return _sh.full(tuple(n for i, n in enumerate(a.shape) if i not in axes),
                        monoid_identity("max", a.dtype), a.dtype)
    return _red.reduce_max(operand, axes)


def reduce_min(operand: Array, axes: Sequence[int]) -> Array:
    """Minimum over ``axes`` (over no elements: ``inf``, or the dtype's largest value).

    Example:
        >>> from funcgrad import lax
        >>> lax.reduce_min(numpy.array([[1.0, 5.0], [3.0, 2.0]]), (1,)).tolist()
        [1.0, 2.0]
    """
    a, axes = _reduce_args("reduce_min", operand, axes, ANY)
    if any(a.shape[i] == 0 for i in axes):  # JAX: the identity, as an empty fold gives
        return _sh.full(tuple(n for i, n in enumerate(a.shape) if i not in axes),
                        monoid_identity("min", a.dtype), a.dtype)
    return _red.reduce_min(operand, axes)


def _fold(op: Callable[[Any, Any], Any], x: Array, a: ShapedArray, axes: tuple,
          identity: Any) -> Array:
    """Reduce ``axes`` with the associative ``op`` by pairwise halving (log depth)."""
    if not axes:
        return x
    keep = tuple(i for i in range(a.ndim) if i not in axes)
    rest = tuple(a.shape[i] for i in keep)
    n = math.prod(a.shape[i] for i in axes)
    if n == 0:
        return _sh.full(rest, identity, a.dtype)
    x = _sh.reshape(_sh.transpose(x, axes + keep), (n,) + rest)
    while n > 1:
        h = n // 2
        r = op(_sh.slice_in_dim(x, 0, h), _sh.slice_in_dim(x, h, 2 * h))
        if n % 2:
            r = _sh.concatenate([r, _sh.slice_in_dim(x, 2 * h, n)], 0)
        x, n = r, h + n % 2
    return _sh.squeeze(x, (0,))


def _all_ones(dt: numpy.dtype) -> Any:
    return numpy.True_ if dt.kind == "b" else numpy.array(-1).astype(dt)[()]


def reduce_and(operand: Array, axes: Sequence[int]) -> Array:
    """Logical (bool) or bitwise (integer) AND over ``axes``.

    Example:
        >>> from funcgrad import lax
        >>> lax.reduce_and(numpy.array([[6, 3], [7, 7]]), (1,)).tolist()
        [2, 7]
    """
    a, axes = _reduce_args("reduce_and", operand, axes, BOOL_OR_INT)
    if a.dtype.kind == "b":
        return _red.reduce_and(operand, axes)
    return _fold(_ew.and_, operand, a, axes, _all_ones(a.dtype))


def reduce_or(operand: Array, axes: Sequence[int]) -> Array:
    """Logical (bool) or bitwise (integer) OR over ``axes``.

    Example:
        >>> from funcgrad import lax
        >>> lax.reduce_or(numpy.array([[4, 1], [0, 0]]), (1,)).tolist()
        [5, 0]
    """
    a, axes = _reduce_args("reduce_or", operand, axes, BOOL_OR_INT)
    if a.dtype.kind == "b":
        return _red.reduce_or(operand, axes)
    return _fold(_ew.or_, operand, a, axes, a.dtype.type(0))


def reduce_xor(operand: Array, axes: Sequence[int]) -> Array:
    """Logical (bool) or bitwise (integer) XOR over ``axes``.

    Example:
        >>> from funcgrad import lax
        >>> lax.reduce_xor(numpy.array([True, True, True]), (0,)).tolist()
        True
    """
    a, axes = _reduce_args("reduce_xor", operand, axes, BOOL_OR_INT)
    return _fold(_ew.xor, operand, a, axes, a.dtype.type(0))


def _arg(name: str, fn: Callable[..., Any], operand: Array, axis: int, index_dtype: Any) -> Array:
    a = aval_of(name, operand)
    if a.ndim == 0:
        raise TypeError(f"lax.{name}: operand must have rank >= 1")
    axis = axis_in(name, axis, a.ndim)
    dt = numpy.dtype(index_dtype)
    if dt.kind not in "iu":
        raise DTypeError(f"lax.{name}: index_dtype must be an integer dtype, got {dt}")
    if a.shape[axis] == 0:
        raise ShapeError(f"lax.{name}: axis {axis} of shape {a.shape} is empty")
    return fn(operand, axis, dt)


def argmax(operand: Array, axis: int, index_dtype: Any) -> Array:
    """Index (of ``index_dtype``) of the first maximum along ``axis``.

    Example:
        >>> from funcgrad import lax
        >>> lax.argmax(numpy.array([[1.0, 5.0, 5.0]]), 1, numpy.int32)
        array([1], dtype=int32)
    """
    return _arg("argmax", _red.argmax, operand, axis, index_dtype)


def argmin(operand: Array, axis: int, index_dtype: Any) -> Array:
    """Index (of ``index_dtype``) of the first minimum along ``axis``.

    Example:
        >>> from funcgrad import lax
        >>> lax.argmin(numpy.array([[1.0, 0.0, 0.0]]), 1, numpy.int32)
        array([1], dtype=int32)
    """
    return _arg("argmin", _red.argmin, operand, axis, index_dtype)


def _cum(name: str, fn: Callable[..., Any], operand: Array, axis: int, reverse: bool,
         kinds: str) -> Array:
    a = aval_of(name, operand)
    check_kind(name, a, kinds)
    if a.ndim == 0:
        raise TypeError(f"lax.{name}: operand must have rank >= 1")
    return _keep_int_dtype(fn(operand, axis_in(name, axis, a.ndim), bool(reverse)), a)


def cumsum(operand: Array, axis: int = 0, reverse: bool = False) -> Array:
    """Running sum along ``axis`` (from the end when ``reverse``).

    Example:
        >>> from funcgrad import lax
        >>> lax.cumsum(numpy.array([1, 2, 3], numpy.int32), reverse=True)
        array([6, 5, 3], dtype=int32)
    """
    return _cum("cumsum", _red.cumsum, operand, axis, reverse, NUMERIC)


def cumprod(operand: Array, axis: int = 0, reverse: bool = False) -> Array:
    """Running product along ``axis`` (from the end when ``reverse``).

    Example:
        >>> from funcgrad import lax
        >>> lax.cumprod(numpy.array([1.0, 2.0, 3.0])).tolist()
        [1.0, 2.0, 6.0]
    """
    return _cum("cumprod", _red.cumprod, operand, axis, reverse, NUMERIC)


def _balanced_eq(x: Array, z: Array, y: Array) -> Array:
    """JAX's weight of ``x`` in the derivative of ``z = max(x, y)`` (or min): 1 if ``x``
    alone is ``z``, 1/2 on a tie, else 0."""
    a = aval_of("cummax", z)

    def const(v: float) -> Array:
        return _sh.broadcast_to(_ew.convert_element_type(v, a.dtype), a.shape)

    half = _ew.select_n(_ew.eq(y, z), const(1.0), const(0.5))
    return _ew.select_n(_ew.eq(x, z), const(0.0), half)


def _extremum_scan(name: str, prim_fn: Callable[..., Any], pick: Callable[..., Any]) -> Any:
    """The running max/min of floats: values from the fast primitive, derivative as JAX
    defines it: the JVP of ``associative_scan(lax.max)``, so ties share the tangent in the
    proportions that the scan's combination tree gives (1/2 at each tied comparison)."""

    def scan(x: Array, axis: int, reverse: bool) -> Array:
        return prim_fn(x, axis, reverse)

    f = custom_jvp(scan, nondiff_argnums=(1, 2))

    @f.defjvp
    def _jvp(axis: int, reverse: bool, primals: tuple, tangents: tuple) -> tuple:
        def combine(p: tuple, q: tuple) -> tuple:
            (a, ta), (b, tb) = p, q
            m = pick(a, b)
            return m, _ew.add(_ew.mul(ta, _balanced_eq(a, m, b)),
                              _ew.mul(tb, _balanced_eq(b, m, a)))

        (x,), (t,) = primals, tangents
        return associative_scan(combine, (x, t), reverse, axis)

    f.__name__ = name
    return f


_cummax_float = _extremum_scan("cummax", _red.cummax, _ew.max)
_cummin_float = _extremum_scan("cummin", _red.cummin, _ew.min)


def _cum_extremum(name: str, fn: Callable[..., Any], float_fn: Callable[..., Any],
                  operand: Array, axis: int, reverse: bool) -> Array:
    a = aval_of(name, operand)
    if a.dtype.kind == "f":
        check_kind(name, a, "f")
        if a.ndim == 0:
            raise TypeError(f"lax.{name}: operand must have rank >= 1")
        return float_fn(operand, axis_in(name, axis, a.ndim), bool(reverse))
    return _cum(name, fn, operand, axis, reverse, "biu")


def cummax(operand: Array, axis: int = 0, reverse: bool = False) -> Array:
    """Running maximum along ``axis`` (from the end when ``reverse``).

    The derivative is JAX's: that of ``associative_scan(lax.max, ...)``, where a tie splits
    the tangent in half at each comparison of the scan.

    Example:
        >>> from funcgrad import lax
        >>> lax.cummax(numpy.array([1.0, 3.0, 2.0])).tolist()
        [1.0, 3.0, 3.0]
    """
    return _cum_extremum("cummax", _red.cummax, _cummax_float, operand, axis, reverse)


def cummin(operand: Array, axis: int = 0, reverse: bool = False) -> Array:
    """Running minimum along ``axis`` (from the end when ``reverse``); derivative as
    :func:`cummax`.

    Example:
        >>> from funcgrad import lax
        >>> lax.cummin(numpy.array([3.0, 1.0, 2.0])).tolist()
        [3.0, 1.0, 1.0]
    """
    return _cum_extremum("cummin", _red.cummin, _cummin_float, operand, axis, reverse)


def cumlogsumexp(operand: Array, axis: int = 0, reverse: bool = False) -> Array:
    """Running ``log(sum(exp(x)))`` along ``axis``, computed stably.

    Example:
        >>> from funcgrad import lax
        >>> [round(v, 6) for v in lax.cumlogsumexp(numpy.array([0.0, 0.0])).tolist()]
        [0.0, 0.693147]
    """
    def scan(x: Array, ax: int, rev: bool) -> Array:
        return associative_scan(_ew.logaddexp, x, rev, ax)

    return _cum("cumlogsumexp", scan, operand, axis, reverse, FLOATING)


# ---------------------------------------------------------------------------------------------
# Sorting


def sort(operand: Array | Sequence[Array], dimension: int = -1, is_stable: bool = True,
         num_keys: int = 1) -> Array | tuple[Array, ...]:
    """Sort one array, or several equal-shaped arrays by the first ``num_keys`` of them.

    Several operands come back as a tuple, all permuted by the lexicographic key order
    (stable: equal keys keep their order). NaNs sort last.

    Example:
        >>> from funcgrad import lax
        >>> lax.sort(numpy.array([3.0, 1.0, 2.0])).tolist()
        [1.0, 2.0, 3.0]
        >>> [v.tolist() for v in lax.sort((numpy.array([2, 1]), numpy.array([5.0, 6.0])))]
        [[1, 2], [6.0, 5.0]]
    """
    single = not isinstance(operand, list | tuple)
    ops = [operand] if single else list(operand)
    if not ops:
        raise TypeError("lax.sort: needs at least one operand")
    avals = [aval_of("sort", o, f"operand[{i}]") for i, o in enumerate(ops)]
    if avals[0].ndim == 0 or any(a.shape != avals[0].shape for a in avals):
        raise TypeError("lax.sort: operands must have one shape of rank >= 1, got "
                        + ", ".join(str(a.shape) for a in avals))
    dim = axis_in("sort", dimension, avals[0].ndim, "dimension")
    k = static_int("sort", num_keys, "num_keys")
    if not 1 <= k <= len(ops):
        raise ValueError(f"lax.sort: num_keys={k} must be between 1 and {len(ops)}")
    outs = _sort.sort(ops, dim, bool(is_stable), k)
    return outs[0] if single else tuple(outs)


def sort_key_val(keys: Array, values: Array, dimension: int = -1,
                 is_stable: bool = True) -> tuple[Array, Array]:
    """``keys`` sorted along ``dimension`` and ``values`` permuted alike.

    Example:
        >>> from funcgrad import lax
        >>> k, v = lax.sort_key_val(numpy.array([2, 1]), numpy.array([5.0, 6.0]))
        >>> v.tolist()
        [6.0, 5.0]
    """
    k, v = sort((keys, values), dimension, is_stable, 1)
    return k, v


def _total_order_key(x: Array) -> Array:
    """``x`` itself, or for floats an integer key in IEEE's total order, as XLA's TopK
    compares: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN (the bits read as a signed
    integer, the magnitude bits of negative values flipped)."""
    dt = aval_of("top_k", x).dtype
    if dt.kind != "f":
        return x
    bits = _ewx.bitcast_convert_type(x, numpy.dtype(f"i{dt.itemsize}"))
    magnitude = numpy.dtype(f"i{dt.itemsize}").type(numpy.iinfo(f"i{dt.itemsize}").max)
    return _ew.select_n(_ew.lt(bits, 0), bits, _ew.xor(bits, magnitude))


def top_k(operand: Array, k: int, *, axis: int = -1) -> list[Array]:
    """The ``k`` largest entries along ``axis`` (the last by default), descending, and their
    int32 indices.

    Floats are compared in IEEE's total order, as ``jax.lax.top_k``: NaN (positive sign) above
    ``inf``, ``+0`` above ``-0``, ``-NaN`` below ``-inf``; ties list the lower index first.

    Example:
        >>> from funcgrad import lax
        >>> v, i = lax.top_k(numpy.array([1.0, 3.0, 3.0, 2.0]), 2)
        >>> v.tolist(), i.tolist()
        ([3.0, 3.0], [1, 2])
        >>> lax.top_k(numpy.array([[1, 5], [4, 2]]), 1, axis=0)[1].tolist()
        [[1, 0]]
    """
    a = aval_of("top_k", operand)
    if a.ndim == 0:
        raise TypeError("lax.top_k: operand must have rank >= 1")
    check_kind("top_k", a, "biuf")
    k = static_int("top_k", k, "k")
    ax = axis_in("top_k", axis, a.ndim)
    n = a.shape[ax]
    if not 0 <= k <= n:
        raise ValueError(f"lax.top_k: k={k} must be between 0 and the size {n} of axis {ax}")
    last = a.ndim - 1
    if ax != last:
        operand = _sh.moveaxis(operand, ax, last)
    shape = aval_of("top_k", operand).shape
    idx = _sh.iota(numpy.dtype(numpy.int32), shape, last)
    # A stable ascending sort of the reversed array, reversed back: descending order with
    # ties keeping the lower index first.
    rev = [_sh.rev(v, (last,)) for v in (_total_order_key(operand), operand, idx)]
    _, vals, ids = _sort.sort(rev, last, True, 1)
    vals, ids = _sh.rev(vals, (last,)), _sh.rev(ids, (last,))
    vals, ids = _sh.slice_in_dim(vals, 0, k, 1, last), _sh.slice_in_dim(ids, 0, k, 1, last)
    if ax != last:
        vals, ids = _sh.moveaxis(vals, last, ax), _sh.moveaxis(ids, last, ax)
    return [vals, ids]  # a list, as JAX's (the same pytree)


def approx_max_k(operand: Array, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> list[Array]:
    """The ``k`` largest entries along ``reduction_dimension`` and their int32 indices: JAX's
    approximate top-k, computed exactly (a recall of 1 meets any ``recall_target``), so it is
    :func:`top_k` on that axis. With ``aggregate_to_topk=False`` JAX may return more than
    ``k`` candidates; here it returns exactly the top ``k``.

    Example:
        >>> from funcgrad import lax
        >>> v, i = lax.approx_max_k(numpy.array([1.0, 4.0, 3.0]), 2)
        >>> v.tolist(), i.tolist()
        ([4.0, 3.0], [1, 2])
    """
    _approx_args("approx_max_k", recall_target)
    return top_k(operand, k, axis=reduction_dimension)


def approx_min_k(operand: Array, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> list[Array]:
    """The ``k`` smallest entries along ``reduction_dimension`` (ascending) and their int32
    indices, exactly (see :func:`approx_max_k`); ties list the lower index first.

    Example:
        >>> from funcgrad import lax
        >>> v, i = lax.approx_min_k(numpy.array([1.0, 4.0, 0.5]), 2)
        >>> v.tolist(), i.tolist()
        ([0.5, 1.0], [2, 0])
    """
    _approx_args("approx_min_k", recall_target)
    a = aval_of("approx_min_k", operand)
    if a.ndim == 0:
        raise TypeError("lax.approx_min_k: operand must have rank >= 1")
    check_kind("approx_min_k", a, "biuf")
    k = static_int("approx_min_k", k, "k")
    ax = axis_in("approx_min_k", reduction_dimension, a.ndim)
    if not 0 <= k <= a.shape[ax]:
        raise ValueError(f"lax.approx_min_k: k={k} must be between 0 and the size "
                         f"{a.shape[ax]} of axis {ax}")
    idx = _sh.iota(numpy.dtype(numpy.int32), a.shape, ax)
    # Stable: ties (-0 and +0 too, as JAX's approx_min_k) keep index order.
    vals, ids = _sort.sort([operand, idx], ax, True, 1)
    return [_sh.slice_in_dim(vals, 0, k, 1, ax), _sh.slice_in_dim(ids, 0, k, 1, ax)]


def _approx_args(name: str, recall_target: Any) -> None:
    if not 0.0 < float(recall_target) <= 1.0:
        raise ValueError(f"lax.{name}: recall_target must be in (0, 1], got {recall_target!r}")


# Computations lax.reduce hands to a dedicated reduction: the reduction, the monoid whose
# identity an init value may equal, the dtype kinds it serves.
_SUM, _PROD = (reduce_sum, "add", NUMERIC), (reduce_prod, "mul", NUMERIC)
_MAX, _MIN = (reduce_max, "max", "biuf"), (reduce_min, "min", "biuf")
_ALL, _ANY = (reduce_and, "min", "b"), (reduce_or, "max", "b")
_REDUCERS: dict[Any, tuple[Callable[..., Array], str, str]] = {
    _lew.add: _SUM, _ew.add: _SUM, operator.add: _SUM,
    _lew.mul: _PROD, _ew.mul: _PROD, operator.mul: _PROD,
    _lew.max: _MAX, _ew.max: _MAX, _lew.min: _MIN, _ew.min: _MIN,
    _lew.bitwise_and: _ALL, operator.and_: _ALL, _lew.bitwise_or: _ANY, operator.or_: _ANY,
}


def _reducer_for(computation: Callable[..., Any]) -> tuple[Callable[..., Array], str, str] | None:
    try:
        return _REDUCERS.get(computation)
    except TypeError:  # an unhashable callable
        return None


@with_out_sharding
def reduce(operands: Any, init_values: Any, computation: Callable[[Any, Any], Any],
           dimensions: Sequence[int]) -> Any:
    """Reduce ``dimensions`` of ``operands`` (an array or a pytree of same-shape arrays) with
    the associative, commutative ``computation``, starting from ``init_values`` (scalars of
    the operands' structure and dtypes), as ``jax.lax.reduce``.

    ``lax.add``/``mul``/``max``/``min`` (and ``bitwise_and``/``or`` on bool) go to
    :func:`reduce_sum` and friends, combining a non-identity init value once. Any other
    ``computation`` must be elementwise (built from ``lax``/``funcgrad.numpy`` operations): it
    is folded over the reduced elements one at a time in row-major order, from the init
    value, as XLA on CPU does (a :func:`scan`, so it differentiates, batches and jits); a
    variadic reduction (e.g. a value-and-index argmax) takes and returns tuples. Reducing no
    elements gives the init values; no ``dimensions`` leaves the operands unchanged.

    Example:
        >>> from funcgrad import lax
        >>> x = numpy.arange(6.0).reshape(2, 3)
        >>> lax.reduce(x, 0.0, lax.add, (1,)).tolist()
        [3.0, 12.0]
        >>> def argmax(a, b):
        ...     take = lax.gt(b[0], a[0])
        ...     return lax.select(take, b[0], a[0]), lax.select(take, b[1], a[1])
        >>> idx = lax.broadcasted_iota(numpy.int32, (2, 3), 1)
        >>> lax.reduce((x, idx), (-numpy.inf, numpy.int32(0)), argmax, (1,))[1].tolist()
        [2, 2]
    """
    name = "reduce"
    flat, tree, flat_init, avals = operands_and_inits(name, operands, init_values,
                                                      ("operands", "init_values"))
    shape = avals[0].shape
    dims = tuple(sorted(axes_in(name, dimensions, len(shape))))
    reducer = _reducer_for(computation) if len(flat) == 1 else None
    if reducer is not None and avals[0].dtype.kind in reducer[2] and is_own_identity(
            reducer[1], flat_init[0]):
        # As JAX: an init that is the monoid's identity in its own dtype (inf for a min, 0 for
        # add) is the operand dtype's identity: reduce(uint8, inf, min) is the minimum (inf
        # cast to uint8 was 0), and an f64 zero sums an f32 operand.
        flat_init = [monoid_identity(reducer[1], avals[0].dtype)]
    inits = []
    for i, (v, a) in enumerate(zip(flat_init, avals)):
        va = aval_of(name, v, f"init_values[{i}]")
        if va.shape != ():
            raise TypeError(f"lax.{name}: init value {i} must be a scalar, got {va.str_short()}")
        if va.dtype != a.dtype and not va.weak_type:
            raise DTypeError(f"lax.{name}: init value {i} has dtype {va.dtype} but its operand "
                             f"has dtype {a.dtype}; they must match")
        if va.dtype != a.dtype and isinstance(v, bool | int | float | complex):
            # a Python scalar converts only exactly (JAX refuses it): 300 -> uint8 wrapping
            # to 44, or 2.5 -> 2, would start the reduction from another value
            with numpy.errstate(invalid="ignore", over="ignore"):
                exact = numpy.asarray(v).astype(a.dtype)
            nan_kept = a.dtype.kind in "fc" and bool(numpy.isnan(exact)) and bool(numpy.isnan(v))
            if not (bool(exact == v) or nan_kept):
                raise DTypeError(f"lax.{name}: init value {i} ({v!r}) is not exactly a "
                                 f"{a.dtype} value; pass it in the operand's dtype")
        inits.append(_ew.convert_element_type(v, a.dtype) if va.dtype != a.dtype else v)
    if not dims:  # nothing reduced: XLA leaves the operands alone (init is not combined)
        return operands
    rest = tuple(n for i, n in enumerate(shape) if i not in dims)
    if reducer is not None and avals[0].dtype.kind in reducer[2]:
        fn, monoid, _ = reducer
        out = fn(flat[0], dims)
        if not is_value(inits[0], monoid_identity(monoid, avals[0].dtype)):
            out = computation(inits[0], out)
        return tree_util.tree_unflatten(tree, [out])
    n = math.prod(shape[i] for i in dims)
    keep = tuple(i for i in range(len(shape)) if i not in dims)
    accs = [_sh.broadcast_in_dim(v, rest, ()) for v in inits]
    xs = [_sh.reshape(_sh.transpose(x, dims + keep), (n,) + rest) for x in flat]

    def step(acc: Any, x: Any) -> tuple[Any, None]:
        out = computation(acc, x)
        leaves, out_tree = tree_util.tree_flatten(out)
        if out_tree != tree:
            raise TypeError(f"lax.{name}: computation must return the structure of the "
                            f"operands ({tree}), got {out_tree}")
        for r, a in zip(leaves, tree_util.tree_leaves(acc)):
            ra, aa = aval_of(name, r, "computation result"), aval_of(name, a)
            if ra.shape != aa.shape or ra.dtype != aa.dtype:
                raise TypeError(f"lax.{name}: computation must be an elementwise binary "
                                f"function keeping shape and dtype; on {aa.str_short()} it "
                                f"returned {ra.str_short()}")
        return out, None

    # One element at a time in row-major order from the init value, as XLA on CPU folds (so
    # a computation that is not associative, e.g. ``a + b * b``, gives JAX's answer).
    out, _ = _scan(step, tree_util.tree_unflatten(tree, accs),
                   tree_util.tree_unflatten(tree, xs), length=n)
    return out


# ---------------------------------------------------------------------------------------------
# Contractions


# Type aliases of jax.lax, for annotations (PrecisionLike comes with Precision).
DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]],
                            tuple[Sequence[int], Sequence[int]]]


def dtype(x: Any) -> numpy.dtype:
    """The dtype ``x`` has as a ``lax`` operand: an array's or NumPy scalar's own, a dtype
    or dtype name as given, and for Python scalars funcgrad's 64-bit defaults (``int64``,
    ``float64``, ``complex128``; ``bool``), as ``jax.lax.dtype`` with x64 enabled.

    Example:
        >>> from funcgrad import lax
        >>> lax.dtype(1.0), lax.dtype(numpy.ones(2, numpy.float32)), lax.dtype("float16")
        (dtype('float64'), dtype('float32'), dtype('float16'))
    """
    if isinstance(x, str | type | numpy.dtype):
        return numpy.dtype(x)
    if isinstance(x, bool | int | float | complex):
        return numpy.dtype(type(x) if type(x) is not int else numpy.int64)
    return aval_of("dtype", x, "x").dtype



def _higher_precision(a: numpy.dtype, b: numpy.dtype) -> numpy.dtype | None:
    """XLA's HigherPrecisionType, as JAX's ``dot_general`` picks the result of two operand
    dtypes: complex over real, then more exponent bits, then more mantissa bits, then the
    wider type, then signed over unsigned; None when neither is higher (distinct dtypes that
    tie, which JAX refuses)."""
    def rank(dt: numpy.dtype) -> tuple:
        real = numpy.dtype(dt.char.lower()) if dt.kind == "c" else dt
        fl = real.kind == "f"
        return (dt.kind == "c", numpy.finfo(real).maxexp if fl else -1,
                numpy.finfo(real).nmant if fl else -1,
                1 if real.kind == "b" else 8 * real.itemsize, real.kind != "u")
    if rank(a) == rank(b):
        return a if a == b else None
    return a if rank(a) > rank(b) else b


def _contract_dtypes(name: str, lhs: Array, rhs: Array, preferred: Any) -> tuple[Array, Array]:
    """Check lax's dtype rules for the convolutions; with ``preferred_element_type``, compute
    in that type."""
    la, ra = aval_of(name, lhs, "lhs"), aval_of(name, rhs, "rhs")
    check_kind(name, la, "biufc", "lhs")
    check_kind(name, ra, "biufc", "rhs")
    if preferred is None:
        if la.dtype == ra.dtype:
            return lhs, rhs
        raise DTypeError(f"lax.{name} requires lhs and rhs of one dtype, got {la.dtype} and "
                         f"{ra.dtype} (or pass preferred_element_type)")
    pt = numpy.dtype(preferred)
    for what, a in (("lhs", la), ("rhs", ra)):
        src = "i" if a.dtype.kind in "biu" else a.dtype.kind
        ok = {"i": "iuf", "f": "f", "c": "c"}[src]
        if pt.kind not in ok or (src == pt.kind and pt.itemsize < a.dtype.itemsize):
            raise DTypeError(
                f"lax.{name}: {what} dtype {a.dtype} is incompatible with "
                f"preferred_element_type {pt} (allowed: integer to integer or float, float to a "
                "float at least as wide, complex to a complex at least as wide)")
    return _ew.convert_element_type(lhs, pt), _ew.convert_element_type(rhs, pt)


def _bit_width(dt: numpy.dtype) -> int:
    if dt.kind == "b":
        return 1
    return numpy.finfo(dt).bits if dt.kind in "fc" else numpy.iinfo(dt).bits


def _dot_dtypes(name: str, lhs: Array, rhs: Array,
                preferred: Any) -> tuple[Array, Array, numpy.dtype | None]:
    """JAX's dot_general dtype rule: the higher-precision operand dtype, or
    ``preferred_element_type`` (any for a float result, at least as many bits otherwise).
    Returns the operands to contract and the dtype to convert the contraction to afterwards
    (None: the contraction already has the result's dtype). A preferred type that narrows
    the result (float to int or to fewer bits, complex to real) converts the full-precision
    sum, as XLA does (``9.54`` to ``int32`` is ``9``); a widening one converts the operands,
    so the products are summed in it (``int8`` products in ``int32`` do not wrap)."""
    la, ra = aval_of(name, lhs, "lhs"), aval_of(name, rhs, "rhs")
    check_kind(name, la, "biufc", "lhs")
    check_kind(name, ra, "biufc", "rhs")
    res = _higher_precision(la.dtype, ra.dtype)
    if res is None:
        raise DTypeError(f"lax.{name} argument type error: {la.dtype}, {ra.dtype} (neither "
                         "is the higher-precision type; pass preferred_element_type)")
    if res != la.dtype:
        lhs = _ew.convert_element_type(lhs, res)
    if res != ra.dtype:
        rhs = _ew.convert_element_type(rhs, res)
    if preferred is None or numpy.dtype(preferred) == res:
        return lhs, rhs, None
    pt = numpy.dtype(preferred)
    if pt.kind not in "biufc":
        raise DTypeError(f"lax.{name}: preferred_element_type must be a numeric dtype, "
                         f"got {pt}")
    if res.kind != "f" and _bit_width(pt) < _bit_width(res):
        raise DTypeError(f"lax.{name}: `preferred_element_type` must not be narrower than the "
                         f"original type, got preferred_element_type of {pt} for result type "
                         f"of {res}.")
    if res.kind in "biu" or numpy.can_cast(res, pt, "safe"):
        return _ew.convert_element_type(lhs, pt), _ew.convert_element_type(rhs, pt), None
    return lhs, rhs, pt


@with_out_sharding
def dot_general(lhs: Array, rhs: Array, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None) -> Array:
    """General contraction: ``((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``.

    The result lays out batch axes, then lhs free axes, then rhs free axes, as in JAX.
    Operands of two dtypes contract in the higher-precision one, as JAX's (XLA's) rule picks
    it: complex over real, float over integer, the wider, signed over unsigned (``float32``
    with ``float64`` gives ``float64``, ``int8`` with ``uint8`` gives ``int8``).

    Example:
        >>> from funcgrad import lax
        >>> x, y = numpy.ones((5, 2, 3)), numpy.ones((5, 3, 4))
        >>> lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))).shape
        (5, 2, 4)
    """
    _check_precision("dot_general", precision)
    la, ra = aval_of("dot_general", lhs, "lhs"), aval_of("dot_general", rhs, "rhs")
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        lc, rc, lb, rb = (static_ints("dot_general", d, "dimension_numbers")
                          for d in (lc, rc, lb, rb))
    except (TypeError, ValueError):
        raise TypeError(
            "lax.dot_general: dimension_numbers must be ((lhs_contracting_dims, "
            "rhs_contracting_dims), (lhs_batch_dims, rhs_batch_dims)), got "
            f"{dimension_numbers!r}") from None
    for what, ld, rd in (("contracting", lc, rc), ("batch", lb, rb)):
        if len(ld) != len(rd):
            raise TypeError(f"lax.dot_general: lhs and rhs {what} dimensions must have equal "
                            f"lengths, got {ld} and {rd}")
    for side, a, c, b in (("lhs", la, lc, lb), ("rhs", ra, rc, rb)):
        dims = [axis_in("dot_general", d, a.ndim, f"{side} dimension") for d in c + b]
        if len(set(dims)) != len(dims):
            raise TypeError(f"lax.dot_general: {side} contracting {c} and batch {b} dimensions "
                            "must be distinct")
    for what, ld, rd in (("contracting", lc, rc), ("batch", lb, rb)):
        for i, j in zip(ld, rd):
            if la.shape[i] != ra.shape[j]:
                raise TypeError(
                    f"lax.dot_general: {what} dimension sizes differ: lhs {la.shape} axis {i} "
                    f"vs rhs {ra.shape} axis {j}")
    alg = algorithm_of(precision)
    if alg is not None and alg is not DotAlgorithmPreset.DEFAULT:
        return _dot_with_algorithm(lhs, rhs, ((lc, rc), (lb, rb)), alg, preferred_element_type)
    lhs, rhs, after = _dot_dtypes("dot_general", lhs, rhs, preferred_element_type)
    out = _la.dot_general(lhs, rhs, ((lc, rc), (lb, rb)))
    return out if after is None else _ew.convert_element_type(out, after)


def _dot_with_algorithm(lhs: Array, rhs: Array, dn: Any,
                        alg: DotAlgorithm | DotAlgorithmPreset, preferred: Any) -> Array:
    """dot_general through a dot algorithm, as JAX lowers it: operands converted to the
    algorithm's types, products summed in its accumulation type, the sum converted to the
    dtype ``dot_general`` gives without an algorithm."""
    la, ra = aval_of("dot_general", lhs, "lhs"), aval_of("dot_general", rhs, "rhs")
    zl, zr, after = _dot_dtypes("dot_general", numpy.zeros((), la.dtype),
                                numpy.zeros((), ra.dtype), preferred)
    out_dt = after if after is not None else aval_of("dot_general", zl).dtype
    lt, rt, acc = algorithm_types(alg, la.dtype, ra.dtype, out_dt)
    acc = out_dt if acc is None else acc
    if acc in _EMULATED_FORMATS:
        raise ValueError(f"lax.dot_general: accumulating in {acc} (dot algorithm {alg}) "
                         "needs a dtype NumPy has not; use an algorithm accumulating in float32")
    if out_dt.kind == "c" or la.dtype.kind == "c" or ra.dtype.kind == "c":
        raise DTypeError(f"lax.dot_general: dot algorithm {alg} takes real operands, got "
                         f"{la.dtype} and {ra.dtype}")
    lhs = _ew.convert_element_type(to_format(lhs, lt), acc)
    rhs = _ew.convert_element_type(to_format(rhs, rt), acc)
    return _ew.convert_element_type(_la.dot_general(lhs, rhs, dn), out_dt)


@with_out_sharding
def dot(lhs: Array, rhs: Array, precision: Any = None, preferred_element_type: Any = None,
        *, dimension_numbers: Any = None) -> Array:
    """Vector/matrix product of 1-D or 2-D operands (``lhs``'s last axis with ``rhs``'s first),
    or, given ``dimension_numbers``, :func:`dot_general` (as JAX's ``lax.dot``).

    Example:
        >>> from funcgrad import lax
        >>> lax.dot(numpy.ones((2, 3)), numpy.ones(3)).tolist()
        [3.0, 3.0]
        >>> lax.dot(numpy.ones((2, 3, 4)), numpy.ones((4, 5)),
        ...         dimension_numbers=(((2,), (0,)), ((), ()))).shape
        (2, 3, 5)
    """
    if dimension_numbers is not None:
        return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type)
    la, ra = aval_of("dot", lhs, "lhs"), aval_of("dot", rhs, "rhs")
    if not (1 <= la.ndim <= 2 and 1 <= ra.ndim <= 2) or la.shape[-1] != ra.shape[0]:
        raise ShapeError(f"lax.dot: incompatible shapes {la.shape} and {ra.shape} (1-D or 2-D "
                         "operands, lhs's last axis matching rhs's first; pass "
                         "dimension_numbers for anything else)")
    return dot_general(lhs, rhs, (((la.ndim - 1,), (0,)), ((), ())), precision,
                       preferred_element_type)


@with_out_sharding
def ragged_dot(lhs: Array, rhs: Array, group_sizes: Array, precision: Any = None,
               preferred_element_type: Any = None, group_offset: Array | None = None) -> Array:
    """Grouped matrix product (mixture-of-experts layers), as ``jax.lax.ragged_dot``: the
    rows of ``lhs`` ``(m, k)`` are split into consecutive groups of ``group_sizes`` ``(g,)``
    rows, group ``i`` multiplied by ``rhs[i]`` (``rhs`` is ``(g, k, n)``); rows past
    ``sum(group_sizes)`` give zeros (a last group that runs past ``m`` is cut). Dtypes as
    :func:`dot_general`. Differentiable in ``lhs`` and ``rhs``.

    Example:
        >>> from funcgrad import lax
        >>> lhs, rhs = numpy.ones((3, 2)), numpy.stack([numpy.eye(2), 2 * numpy.eye(2)])
        >>> lax.ragged_dot(lhs, rhs, numpy.array([1, 2], numpy.int32)).tolist()
        [[1.0, 1.0], [2.0, 2.0], [2.0, 2.0]]
    """
    _check_precision("ragged_dot", precision)
    la, ra = aval_of("ragged_dot", lhs, "lhs"), aval_of("ragged_dot", rhs, "rhs")
    ga = aval_of("ragged_dot", group_sizes, "group_sizes")
    if la.ndim != 2 or ra.ndim != 3 or la.shape[1] != ra.shape[1]:
        raise TypeError(f"lax.ragged_dot: lhs must be (m, k) and rhs (g, k, n), got {la.shape} "
                        f"and {ra.shape}")
    if ga.shape != (ra.shape[0],) or ga.dtype.kind not in "iu":
        raise TypeError(f"lax.ragged_dot: group_sizes must be {ra.shape[0]} integers (one per "
                        f"group of rhs), got {ga.str_short()}")
    if group_offset is not None:
        raise ValueError("lax.ragged_dot: group_offset is not supported (JAX's implementation "
                         "refuses it too)")
    lhs, rhs, after = _dot_dtypes("ragged_dot", lhs, rhs, preferred_element_type)
    m, g = la.shape[0], ra.shape[0]
    ends = fnp.cumsum(fnp.asarray(group_sizes))
    dev = la.device  # the index arrays go where the data is (host data stays on the host)
    group = fnp.sum(fnp.arange(m, device=dev)[:, None] >= ends[None, :], axis=1)  # g past end
    member = fnp.arange(g, device=dev)[None, :] == group[:, None]                 # one-hot
    per_group = fnp.einsum("mk,gkn->gmn", lhs, rhs)
    out = fnp.sum(fnp.where(member.T[:, :, None], per_group, fnp.zeros((), per_group.dtype)),
                  axis=0)
    out = _keep_int_dtype(out, aval_of("ragged_dot", per_group))
    return out if after is None else _ew.convert_element_type(out, after)


def _bf16(x: Array) -> Array:
    """``x`` rounded to bfloat16, held in float32 (NumPy has no bfloat16)."""
    return _ewx.reduce_precision(_ew.convert_element_type(x, _F32), 8, 7)


def scaled_dot(lhs: Array, rhs: Array, *, lhs_scale: Array | None = None,
               rhs_scale: Array | None = None, dimension_numbers: Any = None,
               preferred_element_type: Any = None) -> Array:
    """``jax.lax.scaled_dot``: ``(lhs * lhs_scale) @ (rhs * rhs_scale)`` with block scales.

    A scale has the operand's shape except along the contracting dimensions, which it
    divides (each scale entry covers a block of at least 2 elements there). As JAX's
    definition, operands and scales are rounded to bfloat16 and multiplied in bfloat16, then
    contracted by :func:`dot_general` into ``preferred_element_type``. JAX's default result
    type is bfloat16, which NumPy lacks: without ``preferred_element_type`` the result is
    float32 holding bfloat16-rounded values. ``dimension_numbers`` defaults to a matrix
    product over the last two axes with the leading ones as batch (rank 2 or more).

    Example:
        >>> import numpy as np
        >>> from funcgrad import lax
        >>> x, y = np.ones((2, 4), np.float32), np.ones((4, 3), np.float32)
        >>> lax.scaled_dot(x, y, lhs_scale=np.full((2, 2), 0.5, np.float32),
        ...                preferred_element_type=np.float32).tolist()
        [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]
    """
    name = "scaled_dot"
    la, ra = aval_of(name, lhs, "lhs"), aval_of(name, rhs, "rhs")
    if dimension_numbers is None:
        if la.ndim < 2:
            raise TypeError("lax.scaled_dot does not support 0-rank and 1-rank operands.")
        n = la.ndim
        dimension_numbers = (((n - 1,), (n - 2,)), (tuple(range(n - 2)), tuple(range(n - 2))))
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        lc, rc, lb, rb = (static_ints(name, d, "dimension_numbers") for d in (lc, rc, lb, rb))
    except (TypeError, ValueError):
        raise TypeError(
            "lax.scaled_dot: dimension_numbers must be ((lhs_contracting_dims, "
            "rhs_contracting_dims), (lhs_batch_dims, rhs_batch_dims)), got "
            f"{dimension_numbers!r}") from None
    ranks = {la.ndim, ra.ndim} | {aval_of(name, v, w).ndim for v, w in
                                  ((lhs_scale, "lhs_scale"), (rhs_scale, "rhs_scale"))
                                  if v is not None}
    if len(ranks) != 1:
        raise TypeError(f"lax.scaled_dot: all input tensors must have the same rank, got lhs "
                        f"{la.shape}, rhs {ra.shape} and their scales")

    def scaled(side: str, x: Array, a: ShapedArray, scale: Array | None,
               contract: tuple[int, ...]) -> Array:
        x = _bf16(x)
        if scale is None:
            return x
        sa = aval_of(name, scale, f"{side.lower()}_scale")
        for i, size in enumerate(a.shape):
            if i in contract:
                if size % sa.shape[i]:
                    raise TypeError(f"lax.scaled_dot: {side} contracting dim {i} of size {size} "
                                    f"must be divisible by its scale's dim size {sa.shape[i]}.")
                if size // sa.shape[i] < 2:
                    raise TypeError(f"lax.scaled_dot: the ratio of {side} contracting dim {i} to "
                                    f"its scale's dim size ({size // sa.shape[i]}) must be at "
                                    "least 2.")
            elif sa.shape[i] != size:
                raise TypeError(f"lax.scaled_dot: {side} dim {i} of size {size} does not match "
                                f"scale dim size {sa.shape[i]}.")
        scale = _bf16(scale)
        for i in contract:
            scale = fnp.repeat(scale, a.shape[i] // sa.shape[i], axis=i)
        return _bf16(_ew.mul(x, scale))   # a bfloat16 product, rounded once

    lhs = scaled("LHS", lhs, la, lhs_scale, lc)
    rhs = scaled("RHS", rhs, ra, rhs_scale, rc)
    out = dot_general(lhs, rhs, ((lc, rc), (lb, rb)),
                      preferred_element_type=preferred_element_type)
    return _bf16(out) if preferred_element_type is None else out


class RaggedDotDimensionNumbers(NamedTuple):
    """``jax.lax.RaggedDotDimensionNumbers``: the dimensions of :func:`ragged_dot_general`.

    ``dot_dimension_numbers`` are :func:`dot_general`'s ``((lhs_contract, rhs_contract),
    (lhs_batch, rhs_batch))``; ``lhs_ragged_dimensions`` names the one lhs dimension split
    into groups; ``rhs_group_dimensions`` the rhs dimension indexing the groups (given only
    when the ragged dimension is a free one).

    Example:
        >>> from funcgrad import lax
        >>> lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0]).lhs_ragged_dimensions
        [0]
    """

    dot_dimension_numbers: Any
    lhs_ragged_dimensions: Sequence[int]
    rhs_group_dimensions: Sequence[int]


def _group_mask(name: str, group_sizes: Array, size: int) -> Array:
    """``(*batch, g, size)`` booleans: row ``r`` lies in group ``i`` (consecutive groups;
    rows past the last group are in none)."""
    gs = fnp.asarray(group_sizes)
    ends = fnp.cumsum(gs, axis=-1)
    starts = ends - gs
    r = fnp.arange(size)
    return (starts[..., None] <= r) & (r < ends[..., None])


@with_out_sharding
def ragged_dot_general(lhs: Array, rhs: Array, group_sizes: Array,
                       ragged_dot_dimension_numbers: RaggedDotDimensionNumbers,
                       precision: Any = None, preferred_element_type: Any = None,
                       group_offset: Array | None = None) -> Array:
    """``jax.lax.ragged_dot_general``: :func:`dot_general` with one lhs dimension split into
    consecutive groups of ``group_sizes`` (``(g,)``, or ``(*batch, g)`` per leading batch
    index). As JAX's, by the kind of the ragged dimension:

    * free (non-contracting): group ``i``'s rows meet ``rhs``'s slice ``i`` along
      ``rhs_group_dimensions``; the result is ``dot_general``'s without that dimension (rows
      past ``sum(group_sizes)`` are zeros). :func:`ragged_dot` is this with ``(m, k)`` and
      ``(g, k, n)`` operands.
    * contracting: each group contracts only its own rows; the result gains a leading axis
      of the ``g`` groups.
    * batch: the same as ``dot_general``.

    Example:
        >>> from funcgrad import lax
        >>> dn = lax.RaggedDotDimensionNumbers((([1], [0]), ([], [])), [1], [])
        >>> lax.ragged_dot_general(numpy.ones((1, 3)), numpy.ones((3, 2)),
        ...                        numpy.array([1, 2], numpy.int32), dn).tolist()
        [[[1.0, 1.0]], [[2.0, 2.0]]]
    """
    name = "ragged_dot_general"
    _check_precision(name, precision)
    if group_offset is not None:
        raise ValueError(f"lax.{name}: group_offset is not supported (JAX's implementation "
                         "refuses it too)")
    try:
        (lc, rc), (lb, rb) = ragged_dot_dimension_numbers.dot_dimension_numbers
        ragged = [int(d) for d in ragged_dot_dimension_numbers.lhs_ragged_dimensions]
        group = [int(d) for d in ragged_dot_dimension_numbers.rhs_group_dimensions]
    except (AttributeError, TypeError, ValueError):
        raise TypeError(f"lax.{name}: ragged_dot_dimension_numbers must be a "
                        "RaggedDotDimensionNumbers, got "
                        f"{ragged_dot_dimension_numbers!r}") from None
    lc, rc, lb, rb = (tuple(int(d) for d in x) for x in (lc, rc, lb, rb))
    la, ra = aval_of(name, lhs, "lhs"), aval_of(name, rhs, "rhs")
    ga = aval_of(name, group_sizes, "group_sizes")
    if len(ragged) != 1 or not 0 <= ragged[0] < la.ndim:
        raise ValueError(f"lax.{name}: lhs_ragged_dimensions must name one dimension of lhs "
                         f"{la.shape}, got {ragged}")
    rd = ragged[0]
    if ga.dtype.kind not in "iu" or ga.ndim < 1:
        raise TypeError(f"lax.{name}: group_sizes must be integers of shape (g,) or "
                        f"(*batch, g), got {ga.str_short()}")
    n_batch = ga.ndim - 1
    if n_batch > len(lb) or ga.shape[:-1] != tuple(la.shape[d] for d in lb[:n_batch]):
        raise TypeError(f"lax.{name}: group_sizes {ga.str_short()} has leading dimensions "
                        f"that are not lhs's leading batch dimensions {lb}")
    g = ga.shape[-1]
    dn = ((lc, rc), (lb, rb))
    if rd in lb:
        if group:
            raise ValueError(f"lax.{name}: rhs_group_dimensions must be empty when the ragged "
                             "dimension is a batch dimension")
        return dot_general(lhs, rhs, dn, precision, preferred_element_type)
    if rd in lc:
        if group:
            raise ValueError(f"lax.{name}: rhs_group_dimensions must be empty when the ragged "
                             "dimension is a contracting dimension")
        # each group its own batch entry: lhs masked to the group's rows, rhs repeated
        mask = fnp.moveaxis(_group_mask(name, group_sizes, la.shape[rd]), -2, 0)
        placed = [*lb[:n_batch], rd]  # lhs positions of mask's axes after g
        order = sorted(range(len(placed)), key=lambda i: placed[i])
        mask = _sh.transpose(mask, (0, *(1 + i for i in order)))
        used = set(placed)
        mask = _sh.reshape(mask, (g, *(la.shape[d] if d in used else 1
                                       for d in range(la.ndim))))
        lhs_g = fnp.where(mask, _sh.expand_dims(lhs, (0,)), fnp.zeros((), la.dtype))
        rhs_g = _sh.broadcast_in_dim(rhs, (g, *ra.shape), tuple(range(1, ra.ndim + 1)))
        sh = lambda ds: tuple(d + 1 for d in ds)  # noqa: E731
        return dot_general(lhs_g, rhs_g, ((sh(lc), sh(rc)), ((0, *sh(lb)), (0, *sh(rb)))),
                           precision, preferred_element_type)
    # a free ragged dimension: every group's product, each row kept for its own group
    if len(group) != 1 or not 0 <= group[0] < ra.ndim or group[0] in rc + rb:
        raise ValueError(f"lax.{name}: a free ragged dimension needs one rhs_group_dimensions "
                         f"entry naming a free dimension of rhs {ra.shape}, got {group}")
    gd = group[0]
    if ra.shape[gd] != g:
        raise TypeError(f"lax.{name}: group_sizes has {g} groups, rhs dimension {gd} has "
                        f"{ra.shape[gd]}")
    full = dot_general(lhs, rhs, dn, precision, preferred_element_type)
    lfree = [d for d in range(la.ndim) if d not in lc + lb]
    rfree = [d for d in range(ra.ndim) if d not in rc + rb]
    pos_r = len(lb) + lfree.index(rd)
    pos_g = len(lb) + len(lfree) + rfree.index(gd)
    moved = fnp.moveaxis(full, (pos_g, pos_r), (-2, -1))  # (..., g, rows)
    mask = _group_mask(name, group_sizes, la.shape[rd])
    mask = _sh.reshape(mask, (*ga.shape[:-1], *(1,) * (moved.ndim - 2 - n_batch),
                              g, la.shape[rd]))
    out = fnp.sum(fnp.where(mask, moved, fnp.zeros((), moved.dtype)), axis=-2)
    return _keep_int_dtype(fnp.moveaxis(out, -1, pos_r), aval_of(name, full))


def batch_matmul(lhs: Array, rhs: Array, precision: Any = None) -> Array:
    """Matrix products over the leading batch axes of two equal-rank (>= 2) operands.

    Example:
        >>> from funcgrad import lax
        >>> lax.batch_matmul(numpy.ones((4, 2, 3)), numpy.ones((4, 3, 5))).shape
        (4, 2, 5)
    """
    la, ra = aval_of("batch_matmul", lhs, "lhs"), aval_of("batch_matmul", rhs, "rhs")
    nd = la.ndim
    if nd < 2 or ra.ndim != nd or la.shape[:-2] != ra.shape[:-2]:
        raise TypeError(f"lax.batch_matmul: operands need one rank >= 2 and equal batch axes, "
                        f"got {la.shape} and {ra.shape}")
    batch = tuple(range(nd - 2))
    return dot_general(lhs, rhs, (((nd - 1,), (nd - 2,)), (batch, batch)), precision)


# ---------------------------------------------------------------------------------------------
# associative_scan


def _interleave(a: Array, b: Array, axis: int) -> Array:
    """``a[0], b[0], a[1], b[1], ...`` along ``axis`` (``a`` may be one element longer)."""
    na, nb = _sh_size(a, axis), _sh_size(b, axis)
    if na > nb:  # a placeholder so both halves stack; sliced off below
        b = _sh.concatenate([b, _sh.slice_in_dim(a, 0, 1, 1, axis)], axis)
    pair = _sh.concatenate([_sh.expand_dims(a, (axis + 1,)), _sh.expand_dims(b, (axis + 1,))],
                           axis + 1)
    shape = aval_of("associative_scan", a).shape
    out = _sh.reshape(pair, shape[:axis] + (2 * na,) + shape[axis + 1:])
    return _sh.slice_in_dim(out, 0, na + nb, 1, axis) if na > nb else out


def _sh_size(x: Array, axis: int) -> int:
    return aval_of("associative_scan", x).shape[axis]


def associative_scan(fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False,
                     axis: int = 0) -> Any:
    """Inclusive scan of the associative ``fn`` over a pytree of arrays along ``axis``.

    ``fn(a, b)`` combines two pytrees of slices elementwise (it must accept any number of
    slices at once). The log-depth odd/even algorithm calls it O(log n) times.

    Example:
        >>> from funcgrad import lax
        >>> lax.associative_scan(lax.add, numpy.arange(1.0, 6.0)).tolist()
        [1.0, 3.0, 6.0, 10.0, 15.0]
    """
    leaves, tree = tree_util.tree_flatten(elems)
    if not leaves:
        raise TypeError("lax.associative_scan: elems must contain at least one array")
    avals = [aval_of("associative_scan", e, "elems") for e in leaves]
    nd = avals[0].ndim
    if nd == 0 or any(a.ndim < 1 for a in avals):
        raise TypeError("lax.associative_scan: elems must be arrays of rank >= 1")
    axes = [axis_in("associative_scan", axis, a.ndim) for a in avals]
    n = avals[0].shape[axes[0]]
    if any(a.shape[ax] != n for a, ax in zip(avals, axes)):
        raise ValueError("lax.associative_scan: every array in elems needs the same size along "
                         f"axis {axis}, got " + ", ".join(str(a.shape) for a in avals))
    if reverse:
        leaves = [_sh.rev(e, (ax,)) for e, ax in zip(leaves, axes)]

    def combine(a: list, b: list) -> list:
        out = fn(tree_util.tree_unflatten(tree, a), tree_util.tree_unflatten(tree, b))
        flat, out_tree = tree_util.tree_flatten(out)
        if out_tree != tree:
            raise TypeError(f"lax.associative_scan: fn must return the structure of elems "
                            f"({tree}), got {out_tree}")
        return flat

    def sl(xs: list, start: int, stop: int | None, step: int = 1) -> list:
        return [_sh.slice_in_dim(x, start, stop, step, ax) for x, ax in zip(xs, axes)]

    def scan(xs: list) -> list:
        m = _sh_size(xs[0], axes[0])
        if m < 2:
            return xs
        # Combine neighbouring pairs, scan the half-length result: that gives the odd
        # positions; the even ones (after the first) add one more element each.
        odd = scan(combine(sl(xs, 0, m - 1, 2), sl(xs, 1, None, 2)))
        prev = sl(odd, 0, -1) if m % 2 == 0 else odd
        even = combine(prev, sl(xs, 2, None, 2))
        even = [_sh.concatenate([_sh.slice_in_dim(x, 0, 1, 1, ax), e], ax)
                for x, e, ax in zip(xs, even, axes)]
        return [_interleave(e, o, ax) for e, o, ax in zip(even, odd, axes)]

    out = scan(list(leaves))
    if reverse:
        out = [_sh.rev(e, (ax,)) for e, ax in zip(out, axes)]
    return tree_util.tree_unflatten(tree, out)


def _check_precision(name: str, precision: Any) -> None:
    check_precision(f"lax.{name}", precision)
