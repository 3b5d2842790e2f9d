"""Shape primitives and the helpers built on them.

Primitives: broadcast_in_dim, reshape, transpose, squeeze, expand_dims, concatenate, pad, rev,
slice, dynamic_slice, dynamic_update_slice, iota. Helpers (not primitives): broadcast_to,
sum_to_aval, moveaxis, swapaxes, static_slice, slice_in_dim, index_in_dim,
dynamic_slice_in_dim, dynamic_update_slice_in_dim, broadcasted_iota, full.

Each primitive is one block: wrapper, impl + shape rule, JVP, transpose, batch rule.
"""

from __future__ import annotations

import builtins
import types
from collections.abc import Sequence
from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
import funcgrad.ops.reductions as _red
from funcgrad.avals import ShapedArray, canonical_dtype, get_aval
from funcgrad.backend import get_default_device, xp_for, xp_for_device
from funcgrad.compile import rules as _rules
from funcgrad.compile.rules import Emission, array_operand, same_type
from funcgrad.core import bind1
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.interpreters import batching, eager_vjp
from funcgrad.interpreters.jvp import (
    Zero,
    declare_linear,
    defjvp_zero,
    deflinear,
    instantiate,
    jvp_rules,
)
from funcgrad.interpreters.jvp import zeros_like_aval as _zeros_like_aval
from funcgrad.interpreters.linearize import backward_pass_primitives
from funcgrad.interpreters.transpose import deftranspose, is_undefined
from funcgrad.ir import Eqn, Var
from funcgrad.ops._util import (
    as_array,
    check_static,
    make_primitive,
    normalize_axis,
    result_device,
)

_pyslice = builtins.slice

# =============================================================================================
# broadcast_in_dim: operand dims go to `broadcast_dimensions` of the result `shape`


def _bid_impl(x: Any, shape: tuple[int, ...], broadcast_dimensions: tuple[int, ...]) -> list:
    xp = xp_for(x)
    x = xp.asarray(x)
    expanded = [1] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        expanded[dst] = x.shape[src]
    return [xp.broadcast_to(x.reshape(expanded), shape)]


def _bid_abstract(a: ShapedArray, shape, broadcast_dimensions) -> list[ShapedArray]:
    check_static("broadcast_in_dim", shape=shape, broadcast_dimensions=broadcast_dimensions)
    if len(broadcast_dimensions) != a.ndim:
        raise ShapeError(
            f"broadcast_in_dim: operand {a.str_short()} has rank {a.ndim} but "
            f"broadcast_dimensions={broadcast_dimensions} has {len(broadcast_dimensions)} entries"
        )
    for src, dst in enumerate(broadcast_dimensions):
        if not 0 <= dst < len(shape) or a.shape[src] not in (1, shape[dst]):
            raise ShapeError(
                f"broadcast_in_dim: cannot broadcast {a.str_short()} to shape {tuple(shape)} "
                f"with broadcast_dimensions={broadcast_dimensions}"
            )
    if list(broadcast_dimensions) != sorted(broadcast_dimensions):
        raise ShapeError("broadcast_in_dim: broadcast_dimensions must be increasing")
    return [a.update(shape=tuple(shape))]


broadcast_in_dim_p = make_primitive("broadcast_in_dim", _bid_impl, _bid_abstract)


def broadcast_in_dim(x: Any, shape: tuple[int, ...], broadcast_dimensions: tuple[int, ...]):
    """Broadcast ``x`` to ``shape``, operand axis ``i`` landing on ``broadcast_dimensions[i]``."""
    shape = tuple(int(s) for s in shape)
    broadcast_dimensions = tuple(int(d) for d in broadcast_dimensions)
    if get_aval(x).shape == shape and broadcast_dimensions == tuple(range(len(shape))):
        return x
    return bind1(
        broadcast_in_dim_p, x, shape=shape, broadcast_dimensions=broadcast_dimensions
    )


def _bid_transpose(ct, x, shape, broadcast_dimensions):
    return [sum_to_aval(ct, x.aval, broadcast_dimensions)]


def _bid_batch(axis_size, vals, dims, shape, broadcast_dimensions):
    (x,), (d,) = vals, dims
    x = moveaxis(x, d, 0)
    new_shape = (axis_size,) + tuple(shape)
    new_dims = (0,) + tuple(b + 1 for b in broadcast_dimensions)
    return [broadcast_in_dim(x, new_shape, new_dims)], [0]


deflinear(broadcast_in_dim_p)
deftranspose(broadcast_in_dim_p, _bid_transpose)
batching.batch_rules[broadcast_in_dim_p] = _bid_batch


def _as_array(eqn: Eqn, i: int, src: str) -> str:
    # A rank >= 1 value is an array at run time; a 0-d one may be a Python scalar.
    return src if eqn.invars[i].aval.ndim >= 1 else f"xp.asarray({src})"


def _emit_bid(ctx: Any, eqn: Eqn, args: list[str]) -> Emission | None:
    if set(eqn.params) != {"shape", "broadcast_dimensions"}:
        return None
    shape = tuple(eqn.params["shape"])
    in_shape = eqn.invars[0].aval.shape
    expanded = [1] * len(shape)
    for src, dst in enumerate(eqn.params["broadcast_dimensions"]):
        expanded[dst] = in_shape[src]
    x = _as_array(eqn, 0, args[0])
    if tuple(expanded) != in_shape or eqn.invars[0].aval.ndim == 0:
        x = f"{x}.reshape({tuple(expanded)!r})"
    return Emission(f"xp.broadcast_to({x}, {shape!r})")


def _simplify_bid(eqn: Eqn, ins: list, f: Any) -> Any:
    (x,) = ins
    out = eqn.outvars[0]
    dims = eqn.params.get("broadcast_dimensions")
    if same_type(x, out) and tuple(dims) == tuple(range(out.aval.ndim)):
        return [x]
    return None


_rules.emitters[broadcast_in_dim_p] = _emit_bid
_rules.register_simplification(broadcast_in_dim_p, _simplify_bid)
_rules.zero_one_preserving_primitives.add(broadcast_in_dim_p)
_rules.roles["broadcast_in_dim"] = broadcast_in_dim_p


def broadcast_to(x: Any, shape: tuple[int, ...]) -> Any:
    """NumPy ``broadcast_to`` semantics (trailing axes aligned)."""
    a = get_aval(x)
    shape = tuple(int(s) for s in shape)
    if a.shape == shape:
        return x
    if len(shape) < a.ndim:
        raise ShapeError(f"broadcast_to: cannot broadcast {a.str_short()} to shape {shape}")
    lead = len(shape) - a.ndim
    return broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


def sum_to_aval(ct: Any, aval: ShapedArray, broadcast_dimensions: Any = None) -> Any:
    """Sum cotangent ``ct`` over broadcast axes so it matches ``aval`` (shape and dtype).

    ``broadcast_dimensions`` says where ``aval``'s axes sit in ``ct`` (default: trailing,
    as NumPy broadcasting aligns them).
    """
    ca = get_aval(ct)
    if ca.shape != aval.shape:
        nd = len(ca.shape)
        if broadcast_dimensions is None:
            broadcast_dimensions = tuple(range(nd - aval.ndim, nd))
        kept = set(broadcast_dimensions)
        axes = [i for i in range(nd) if i not in kept]
        axes += [
            dst for src, dst in enumerate(broadcast_dimensions)
            if aval.shape[src] == 1 and ca.shape[dst] != 1
        ]
        if axes:
            ct = _red.reduce_sum(ct, tuple(sorted(axes)))
        if get_aval(ct).shape != aval.shape:
            ct = reshape(ct, aval.shape)
    if ca.dtype != aval.dtype:
        if aval.dtype.kind in "fc":
            ct = _ew.convert_element_type(ct, aval.dtype)
    return ct


# A nested eager tape sums traced cotangents back to their operands' shapes with it.
eager_vjp.traced_array_ops["sum_to_aval"] = sum_to_aval


# =============================================================================================
# reshape


def _reshape_impl(x: Any, new_sizes: tuple[int, ...]) -> list:
    xp = xp_for(x)
    return [xp.reshape(as_array(xp, x), new_sizes)]


def _reshape_abstract(a: ShapedArray, new_sizes) -> list[ShapedArray]:
    check_static("reshape", new_sizes=new_sizes)
    if int(numpy.prod(new_sizes, dtype=numpy.int64)) != a.size or any(s < 0 for s in new_sizes):
        raise ShapeError(
            f"reshape: cannot reshape {a.str_short()} (size {a.size}) into shape "
            f"{tuple(new_sizes)}"
        )
    return [a.update(shape=tuple(new_sizes))]


reshape_p = make_primitive("reshape", _reshape_impl, _reshape_abstract)


def reshape(x: Any, new_sizes: Any) -> Any:
    """Reshape ``x`` to ``new_sizes`` (one ``-1`` allowed, as in NumPy)."""
    a = get_aval(x)
    if isinstance(new_sizes, int | numpy.integer):
        new_sizes = (new_sizes,)
    new_sizes = tuple(int(s) for s in new_sizes)
    if -1 in new_sizes:
        known = int(numpy.prod([s for s in new_sizes if s != -1], dtype=numpy.int64))
        if new_sizes.count(-1) > 1:
            raise ShapeError(f"reshape: can only specify one unknown dimension (-1), got shape "
                             f"{new_sizes} for {a.str_short()}")
        if known == 0 or a.size % known:
            raise ShapeError(f"reshape: cannot reshape {a.str_short()} (size {a.size}) into "
                             f"shape {new_sizes}: the known sizes multiply to {known}, which "
                             f"does not divide {a.size}")
        new_sizes = tuple(a.size // known if s == -1 else s for s in new_sizes)
    if new_sizes == a.shape:
        return x
    return bind1(reshape_p, x, new_sizes=new_sizes)


deflinear(reshape_p)
deftranspose(reshape_p, lambda ct, x, new_sizes: [reshape(ct, x.aval.shape)])


def _reshape_batch(axis_size, vals, dims, new_sizes):
    (x,), (d,) = vals, dims
    return [reshape(moveaxis(x, d, 0), (axis_size,) + tuple(new_sizes))], [0]


batching.batch_rules[reshape_p] = _reshape_batch


def _emit_reshape(ctx: Any, eqn: Eqn, args: list[str]) -> Emission | None:
    if set(eqn.params) != {"new_sizes"}:
        return None
    return Emission(f"xp.reshape({array_operand(eqn, 0, args[0])}, "
                    f"{tuple(eqn.params['new_sizes'])!r})")


def _simplify_reshape(eqn: Eqn, ins: list, f: Any) -> Any:
    """An identity reshape goes; a reshape of a reshape reads the first operand."""
    (x,) = ins
    out = eqn.outvars[0]
    if same_type(x, out):
        return [x]
    p = f.producer.get(x) if type(x) is Var else None
    if p is not None and p.prim is reshape_p and set(eqn.params) == {"new_sizes"}:
        src = p.invars[0]
        if same_type(src, out):
            return [src]
        return eqn.replace(invars=[src])
    return None


_rules.emitters[reshape_p] = _emit_reshape
_rules.register_simplification(reshape_p, _simplify_reshape)
_rules.zero_one_preserving_primitives.add(reshape_p)
_rules.fold_any_size_primitives.add(reshape_p)
_rules.roles["reshape"] = reshape_p

# =============================================================================================
# transpose (axis permutation)


def _transpose_impl(x: Any, permutation: tuple[int, ...]) -> list:
    return [xp_for(x).transpose(x, permutation)]


def _transpose_abstract(a: ShapedArray, permutation) -> list[ShapedArray]:
    check_static("transpose", permutation=permutation)
    if sorted(permutation) != list(range(a.ndim)):
        raise ShapeError(
            f"transpose: permutation {tuple(permutation)} is not a permutation of the axes "
            f"of {a.str_short()}"
        )
    return [a.update(shape=tuple(a.shape[p] for p in permutation))]


transpose_p = make_primitive("transpose", _transpose_impl, _transpose_abstract)


def transpose(x: Any, permutation: Any = None) -> Any:
    """Permute the axes of ``x`` (reverse them when ``permutation`` is None)."""
    nd = get_aval(x).ndim
    if permutation is None:
        permutation = tuple(reversed(range(nd)))
    permutation = tuple(normalize_axis("transpose", int(p), nd) for p in permutation)
    if permutation == tuple(range(nd)):
        return x
    return bind1(transpose_p, x, permutation=permutation)


def _transpose_transpose(ct, x, permutation):
    inv = tuple(int(i) for i in numpy.argsort(permutation))
    return [transpose(ct, inv)]


def _transpose_batch(axis_size, vals, dims, permutation):
    (x,), (d,) = vals, dims
    perm = (d,) + tuple(p + (p >= d) for p in permutation)
    return [transpose(x, perm)], [0]


deflinear(transpose_p)
deftranspose(transpose_p, _transpose_transpose)
batching.batch_rules[transpose_p] = _transpose_batch


def _emit_transpose(ctx: Any, eqn: Eqn, args: list[str]) -> Emission | None:
    if set(eqn.params) != {"permutation"}:
        return None
    return Emission(f"xp.transpose({args[0]}, {tuple(eqn.params['permutation'])!r})")


def _simplify_transpose(eqn: Eqn, ins: list, f: Any) -> Any:
    """The identity permutation goes; a transpose of a transpose is one (composed)."""
    (x,) = ins
    out = eqn.outvars[0]
    perm = tuple(eqn.params["permutation"])
    if perm == tuple(range(len(perm))) and same_type(x, out):
        return [x]
    p = f.producer.get(x) if type(x) is Var else None
    if p is not None and p.prim is transpose_p and set(eqn.params) == {"permutation"}:
        inner = tuple(p.params["permutation"])
        composed = tuple(inner[i] for i in perm)
        src = p.invars[0]
        if composed == tuple(range(len(composed))) and same_type(src, out):
            return [src]
        return eqn.replace(invars=[src], params={"permutation": composed})
    return None


_rules.emitters[transpose_p] = _emit_transpose
_rules.register_simplification(transpose_p, _simplify_transpose)
_rules.zero_one_preserving_primitives.add(transpose_p)
_rules.fold_any_size_primitives.add(transpose_p)
_rules.roles["transpose"] = transpose_p


def moveaxis(x: Any, source: int, destination: int) -> Any:
    """Move axis ``source`` of ``x`` to position ``destination``."""
    nd = get_aval(x).ndim
    source = normalize_axis("moveaxis", source, nd)
    destination = normalize_axis("moveaxis", destination, nd)
    if source == destination:
        return x
    perm = [i for i in range(nd) if i != source]
    perm.insert(destination, source)
    return transpose(x, tuple(perm))



def swapaxes(x: Any, axis1: int, axis2: int) -> Any:
    """Exchange axes ``axis1`` and ``axis2`` of ``x`` (negative axes count from the end).

    Example:
        >>> swapaxes(numpy.zeros((2, 3, 4)), 0, -1).shape
        (4, 3, 2)
    """
    nd = get_aval(x).ndim
    a = normalize_axis("swapaxes", axis1, nd)
    b = normalize_axis("swapaxes", axis2, nd)
    if a == b:
        return x
    perm = list(range(nd))
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, tuple(perm))


# ---------------------------------------------------------------------------------------------
# Helpers shared by the rules below


def _aval_of(x: Any) -> ShapedArray:
    return x.aval if is_undefined(x) else get_aval(x)


def _dims(name: str, dims: Any, ndim: int) -> tuple[int, ...]:
    """Sorted distinct non-negative axes; ShapeError naming ``name`` and the rank if bad."""
    if isinstance(dims, int | numpy.integer):
        dims = (dims,)
    out = tuple(sorted(normalize_axis(name, d, ndim) for d in dims))
    if len(set(out)) != len(out):
        raise ShapeError(f"{name}: repeated axis in {tuple(dims)}")
    return out


def _zero_scalar(dtype: numpy.dtype) -> Any:
    return dtype.type(0)


def _zeros(shape: tuple[int, ...], dtype: numpy.dtype, device: str | None) -> Any:
    return _zeros_like_aval(ShapedArray(shape, dtype, False, device))


def _to_front(x: Any, d: int | None, axis_size: int) -> Any:
    """``x`` with its batch axis first; an unbatched ``x`` is broadcast along a new one."""
    if d is None:
        a = get_aval(x)
        return broadcast_in_dim(x, (axis_size,) + a.shape, tuple(range(1, a.ndim + 1)))
    return moveaxis(x, d, 0)


def _as_scalar_of(v: Any, dtype: numpy.dtype, name: str) -> Any:
    """``v`` as a scalar of exactly ``dtype``: Python scalars are cast statically."""
    if isinstance(v, bool | int | float | complex | numpy.generic):
        if isinstance(v, numpy.generic) and v.dtype == dtype:
            return v
        return numpy.asarray(v).astype(dtype)[()]
    a = get_aval(v)
    if a.shape != ():
        raise ShapeError(f"{name}: the padding value must be a scalar, got {a.str_short()}")
    if a.dtype != dtype:
        return _ew.convert_element_type(v, dtype)
    return v


def _block_index_arrays(
    axis_size: int,
    shape: Sequence[int],
    idx: Sequence[Any],
    didx: Sequence[int | None],
    sizes: Sequence[int],
    with_batch: bool,
) -> list[Any]:
    """Integer index arrays picking, for each example, the ``sizes`` block at its (clamped,
    per-example) start indices; with ``with_batch`` the first array indexes the batch axis.

    Batched start indices are scalars per example, so they arrive as ``(axis_size,)`` arrays.
    """
    out_shape = (axis_size,) + tuple(sizes)
    i64 = numpy.dtype(numpy.int64)
    arrays = [iota(i64, out_shape, 0)] if with_batch else []
    for k, (i, d, n, z) in enumerate(zip(idx, didx, shape, sizes)):
        start = _ew.clamp(0, _ew.convert_element_type(i, i64), n - z)
        start = broadcast_in_dim(start, out_shape, (0,) if d is not None else ())
        arrays.append(_ew.add(start, iota(i64, out_shape, k + 1)))
    return arrays


def _indexing() -> Any:
    """The indexing modules' operations: built on this module, they import after it (the ops
    domain loop), so they are looked up when a rule runs."""
    from funcgrad.ops import gather, indexing, scatter

    return types.SimpleNamespace(Operand=indexing.Operand,
                                 gather_canonical=gather.gather_canonical,
                                 scatter=scatter.scatter)


def _operands(n: int) -> tuple:
    return tuple(_indexing().Operand(k) for k in range(n))


# =============================================================================================
# squeeze: drop size-1 axes `dimensions`


def _squeeze_shape(a: ShapedArray, dimensions: tuple[int, ...]) -> tuple[int, ...]:
    check_static("squeeze", dimensions=dimensions)
    dims = _dims("squeeze", dimensions, a.ndim)
    for d in dims:
        if a.shape[d] != 1:
            raise ShapeError(
                f"squeeze: cannot remove axis {d} of {a.str_short()}: its size is "
                f"{a.shape[d]}, not 1"
            )
    return tuple(s for i, s in enumerate(a.shape) if i not in dims)


def _squeeze_impl(x: Any, dimensions: tuple[int, ...]) -> list:
    shape = tuple(s for i, s in enumerate(x.shape) if i not in dimensions)
    return [xp_for(x).reshape(x, shape)]


def _squeeze_abstract(a: ShapedArray, dimensions) -> list[ShapedArray]:
    return [a.update(shape=_squeeze_shape(a, dimensions))]


squeeze_p = make_primitive("squeeze", _squeeze_impl, _squeeze_abstract)


def squeeze(x: Any, dimensions: Any) -> Any:
    """Remove the size-1 axes ``dimensions`` (an int or a sequence) of ``x``.

    Example:
        >>> squeeze(numpy.zeros((1, 3, 1)), (0, 2)).shape
        (3,)
    """
    a = get_aval(x)
    dims = _dims("squeeze", dimensions, a.ndim)
    _squeeze_shape(a, dims)
    if not dims:
        return x
    return bind1(squeeze_p, x, dimensions=dims)


def _squeeze_batch(axis_size, vals, dims, dimensions):
    (x,), (d,) = vals, dims
    phys = tuple(k + (k >= d) for k in dimensions)
    return [squeeze(x, phys)], [d - sum(1 for k in dimensions if k < d)]


deflinear(squeeze_p)
deftranspose(squeeze_p, lambda ct, x, dimensions: [expand_dims(ct, dimensions)])
batching.batch_rules[squeeze_p] = _squeeze_batch
_rules.emitters[squeeze_p] = lambda ctx, eqn, args: (
    Emission(f"xp.squeeze({args[0]}, axis={tuple(eqn.params['dimensions'])!r})")
    if set(eqn.params) == {"dimensions"} else None)

# =============================================================================================
# expand_dims: insert size-1 axes at `dimensions` (positions in the result)


def _expand_dims_shape(a: ShapedArray, dimensions: tuple[int, ...]) -> tuple[int, ...]:
    check_static("expand_dims", dimensions=dimensions)
    out_nd = a.ndim + len(dimensions)
    dims = _dims("expand_dims", dimensions, out_nd)
    it = iter(a.shape)
    return tuple(1 if i in dims else next(it) for i in range(out_nd))


def _expand_dims_impl(x: Any, dimensions: tuple[int, ...]) -> list:
    # A reshape: cheaper than xp.expand_dims, which re-validates the axes.
    shape = list(getattr(x, "shape", ()))
    for d in dimensions:
        shape.insert(d, 1)
    xp = xp_for(x)
    return [xp.reshape(as_array(xp, x), shape)]


def _expand_dims_abstract(a: ShapedArray, dimensions) -> list[ShapedArray]:
    return [a.update(shape=_expand_dims_shape(a, dimensions))]


expand_dims_p = make_primitive("expand_dims", _expand_dims_impl, _expand_dims_abstract)


def expand_dims(x: Any, dimensions: Any) -> Any:
    """Insert size-1 axes so that they sit at ``dimensions`` of the result.

    Example:
        >>> expand_dims(numpy.zeros(3), (0, -1)).shape
        (1, 3, 1)
    """
    if isinstance(dimensions, int | numpy.integer):
        dimensions = (dimensions,)
    a = get_aval(x)
    dims = _dims("expand_dims", dimensions, a.ndim + len(dimensions))
    if not dims:
        return x
    return bind1(expand_dims_p, x, dimensions=dims)


def _expand_dims_batch(axis_size, vals, dims, dimensions):
    (x,), (d,) = vals, dims
    x = moveaxis(x, d, 0)
    return [expand_dims(x, tuple(k + 1 for k in dimensions))], [0]


deflinear(expand_dims_p)
deftranspose(expand_dims_p, lambda ct, x, dimensions: [squeeze(ct, dimensions)])
batching.batch_rules[expand_dims_p] = _expand_dims_batch
_rules.emitters[expand_dims_p] = lambda ctx, eqn, args: (
    Emission(f"xp.expand_dims({array_operand(eqn, 0, args[0])}, "
             f"{tuple(eqn.params['dimensions'])!r})")
    if set(eqn.params) == {"dimensions"} else None)

# =============================================================================================
# concatenate: n operands of one dtype joined along `dimension`


def _concat_shape(avals: Sequence[ShapedArray], dimension: int) -> tuple[int, ...]:
    check_static("concatenate", dimension=dimension)
    if not avals:
        raise ShapeError("concatenate: needs at least one operand")
    first = avals[0]

    def shapes() -> str:
        return ", ".join(a.str_short() for a in avals)

    if first.ndim == 0:
        raise ShapeError(f"concatenate: zero-dimensional operands cannot be joined ({shapes()})")
    if not 0 <= dimension < first.ndim:
        raise ShapeError(
            f"concatenate: dimension {dimension} is out of bounds for operands of rank "
            f"{first.ndim} ({shapes()})"
        )
    size = 0
    pre, post = first.shape[:dimension], first.shape[dimension + 1 :]
    for a in avals:
        s = a.shape
        if len(s) != first.ndim or s[:dimension] != pre or s[dimension + 1 :] != post:
            raise ShapeError(
                f"concatenate: operand shapes must agree except along dimension {dimension}, "
                f"got ({shapes()})"
            )
        if a.dtype != first.dtype:
            raise DTypeError(
                f"concatenate: operands must have one dtype (promote them first), got "
                f"({shapes()})"
            )
        size += s[dimension]
    return pre + (size,) + post


def _concat_impl(*xs: Any, dimension: int) -> list:
    return [xp_for(*xs, what="concatenate").concatenate(xs, axis=dimension)]


def _concat_abstract(*avals: ShapedArray, dimension) -> list[ShapedArray]:
    shape = _concat_shape(avals, dimension)
    weak = all(a.weak_type for a in avals)
    return [ShapedArray(shape, avals[0].dtype, weak, result_device("concatenate", *avals))]


concatenate_p = make_primitive("concatenate", _concat_impl, _concat_abstract)


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    """Join ``operands`` (same rank and dtype) along axis ``dimension``.

    Example:
        >>> concatenate([numpy.zeros((2, 1)), numpy.ones((2, 3))], 1).shape
        (2, 4)
    """
    operands = tuple(operands)
    avals = [get_aval(o) for o in operands]
    if avals:
        dimension = normalize_axis("concatenate", dimension, max(avals[0].ndim, 1))
    _concat_shape(avals, dimension)
    if len(operands) == 1:
        return operands[0]
    return bind1(concatenate_p, *operands, dimension=dimension)


def _concat_transpose(ct, *xs, dimension):
    out = []
    off = 0
    for x in xs:
        n = _aval_of(x).shape[dimension]
        out.append(slice_in_dim(ct, off, off + n, axis=dimension) if is_undefined(x) else None)
        off += n
    return out


def _concat_batch(axis_size, vals, dims, dimension):
    xs = [_to_front(v, d, axis_size) for v, d in zip(vals, dims)]
    return [concatenate(xs, dimension + 1)], [0]


deflinear(concatenate_p)
deftranspose(concatenate_p, _concat_transpose)
batching.batch_rules[concatenate_p] = _concat_batch

# =============================================================================================
# pad: (lo, hi, interior) per axis; lo/hi may be negative (cropping). Linear in the operand
# and in the padding value.


def _dilated(n: int, interior: int) -> int:
    return 0 if n == 0 else n + (n - 1) * interior


def _pad_shape(a: ShapedArray, p: ShapedArray, padding_config: Any) -> tuple[int, ...]:
    check_static("pad", padding_config=padding_config)
    if len(padding_config) != a.ndim:
        raise ShapeError(
            f"pad: padding_config has {len(padding_config)} entries but the operand "
            f"{a.str_short()} has rank {a.ndim}"
        )
    if p.shape != ():
        raise ShapeError(f"pad: the padding value must be a scalar, got {p.str_short()}")
    if p.dtype != a.dtype:
        raise DTypeError(
            f"pad: the padding value {p.str_short()} must have the operand's dtype "
            f"({a.str_short()})"
        )
    out = []
    for n, cfg in zip(a.shape, padding_config):
        if len(cfg) != 3:
            raise ShapeError(f"pad: each padding_config entry is (lo, hi, interior), got {cfg}")
        lo, hi, interior = cfg
        if interior < 0:
            raise ShapeError(f"pad: interior padding must be >= 0, got {padding_config}")
        size = lo + hi + _dilated(n, interior)
        if size < 0:
            raise ShapeError(
                f"pad: padding_config {tuple(padding_config)} crops {a.str_short()} to a "
                "negative size"
            )
        out.append(size)
    return tuple(out)


def _pad_impl(x: Any, padding_value: Any, padding_config) -> list:
    xp = xp_for(x, padding_value, what="pad")
    full, inner, crop = [], [], []
    for n, (lo, hi, interior) in zip(x.shape, padding_config):
        lp = lo if lo > 0 else 0
        d = _dilated(n, interior)
        size = lp + d + (hi if hi > 0 else 0)
        full.append(size)
        inner.append(_pyslice(lp, lp + d, interior + 1))
        crop.append(_pyslice(-lo if lo < 0 else 0, size + (hi if hi < 0 else 0)))
    out = xp.empty(tuple(full), dtype=x.dtype)
    out[...] = padding_value
    out[tuple(inner)] = x
    return [out[tuple(crop)]]


def _pad_abstract(a: ShapedArray, p: ShapedArray, padding_config) -> list[ShapedArray]:
    shape = _pad_shape(a, p, padding_config)
    return [ShapedArray(shape, a.dtype, a.weak_type, result_device("pad", a, p))]


pad_p = make_primitive("pad", _pad_impl, _pad_abstract)


def pad(x: Any, padding_value: Any, padding_config: Sequence[tuple[int, int, int]]) -> Any:
    """Pad ``x`` with the scalar ``padding_value``: ``(lo, hi, interior)`` per axis.

    ``lo``/``hi`` add that many elements before/after (negative values crop), ``interior``
    inserts that many between neighbours. A Python ``padding_value`` is cast to ``x``'s dtype.

    Example:
        >>> pad(numpy.array([1.0, 2.0]), 0.0, [(1, -1, 1)]).tolist()
        [0.0, 1.0, 0.0]
    """
    a = get_aval(x)
    config = tuple((int(lo), int(hi), int(it)) for lo, hi, it in padding_config)
    padding_value = _as_scalar_of(padding_value, a.dtype, "pad")
    _pad_shape(a, get_aval(padding_value), config)
    if all(c == (0, 0, 0) for c in config):
        return x
    return bind1(pad_p, x, padding_value, padding_config=config)


def _pad_transpose(ct, x, padding_value, padding_config):
    ca = get_aval(ct)
    unpadded = pad(ct, _zero_scalar(ca.dtype), tuple((-lo, -hi, 0) for lo, hi, _ in padding_config))
    t_op = static_slice(
        unpadded,
        (0,) * ca.ndim,
        get_aval(unpadded).shape,
        tuple(it + 1 for _, _, it in padding_config),
    )
    ct_p = None
    if is_undefined(padding_value):
        ct_p = _ew.sub(_red.reduce_sum(ct, None), _red.reduce_sum(t_op, None))
    return [t_op if is_undefined(x) else None, ct_p]


def _pad_batch(axis_size, vals, dims, padding_config):
    (x, p), (dx, dp) = vals, dims
    if dp is None:
        cfg = list(padding_config)
        cfg.insert(dx, (0, 0, 0))
        return [pad(x, p, tuple(cfg))], [dx]
    # One padding value per example: pad with zeros, then select the values at the padded
    # positions (a mask that is itself a padded constant).
    x = _to_front(x, dx, axis_size)
    p = moveaxis(p, dp, 0)
    xa = get_aval(x)
    body = pad(x, _zero_scalar(xa.dtype), ((0, 0, 0),) + tuple(padding_config))
    mask = pad(_zeros(xa.shape[1:], numpy.dtype(bool), xa.device), numpy.True_, padding_config)
    p = reshape(p, (axis_size,) + (1,) * (xa.ndim - 1))
    return [_ew.select_n(mask, body, p)], [0]


deflinear(pad_p)
deftranspose(pad_p, _pad_transpose)
batching.batch_rules[pad_p] = _pad_batch

# =============================================================================================
# rev: reverse the order of elements along `dimensions`


def _rev_impl(x: Any, dimensions: tuple[int, ...]) -> list:
    return [xp_for(x).flip(x, axis=dimensions)]


def _rev_abstract(a: ShapedArray, dimensions) -> list[ShapedArray]:
    check_static("rev", dimensions=dimensions)
    _dims("rev", dimensions, a.ndim)
    return [a]


rev_p = make_primitive("rev", _rev_impl, _rev_abstract)


def rev(x: Any, dimensions: Any) -> Any:
    """Reverse ``x`` along the axes ``dimensions`` (an int or a sequence).

    Example:
        >>> rev(numpy.arange(3), (0,)).tolist()
        [2, 1, 0]
    """
    dims = _dims("rev", dimensions, get_aval(x).ndim)
    if not dims:
        return x
    return bind1(rev_p, x, dimensions=dims)


def _rev_batch(axis_size, vals, dims, dimensions):
    (x,), (d,) = vals, dims
    return [rev(x, tuple(k + (k >= d) for k in dimensions))], [d]


deflinear(rev_p)
deftranspose(rev_p, lambda ct, x, dimensions: [rev(ct, dimensions)])
batching.batch_rules[rev_p] = _rev_batch

# =============================================================================================
# slice: static start/limit/stride per axis


def _slice_shape(a: ShapedArray, start_indices, limit_indices, strides) -> tuple[int, ...]:
    check_static(
        "slice", start_indices=start_indices, limit_indices=limit_indices, strides=strides
    )
    if not len(start_indices) == len(limit_indices) == len(strides) == a.ndim:
        raise ShapeError(
            f"slice: start_indices {tuple(start_indices)}, limit_indices "
            f"{tuple(limit_indices)} and strides {tuple(strides)} must each have one entry per "
            f"axis of {a.str_short()}"
        )
    out = []
    for n, s, lim, st in zip(a.shape, start_indices, limit_indices, strides):
        if not 0 <= s <= lim <= n or st < 1:
            raise ShapeError(
                f"slice: start_indices {tuple(start_indices)}, limit_indices "
                f"{tuple(limit_indices)}, strides {tuple(strides)} are out of range for "
                f"{a.str_short()} (need 0 <= start <= limit <= size and stride >= 1)"
            )
        out.append((lim - s + st - 1) // st)
    return tuple(out)


def _slice_impl(x: Any, start_indices, limit_indices, strides) -> list:
    return [x[tuple(_pyslice(*t) for t in zip(start_indices, limit_indices, strides))]]


def _slice_abstract(a: ShapedArray, start_indices, limit_indices, strides) -> list[ShapedArray]:
    return [a.update(shape=_slice_shape(a, start_indices, limit_indices, strides))]


slice_p = make_primitive("slice", _slice_impl, _slice_abstract)
# It drops some of its operands' values (see linearize.backward_pass_primitives).
backward_pass_primitives.add(slice_p)


def static_slice(
    x: Any,
    start_indices: Sequence[int],
    limit_indices: Sequence[int],
    strides: Sequence[int] | None = None,
) -> Any:
    """``x[start:limit:stride, ...]`` with static, in-range, non-negative bounds per axis.

    (``slice`` in JAX's lax; named so it does not shadow Python's ``slice``.)

    Example:
        >>> static_slice(numpy.arange(10), (1,), (8,), (3,)).tolist()
        [1, 4, 7]
    """
    a = get_aval(x)
    start = tuple(int(s) for s in start_indices)
    limit = tuple(int(s) for s in limit_indices)
    strides = (1,) * a.ndim if strides is None else tuple(int(s) for s in strides)
    _slice_shape(a, start, limit, strides)
    if limit == a.shape and not any(start) and all(s == 1 for s in strides):
        return x
    return bind1(slice_p, x, start_indices=start, limit_indices=limit, strides=strides)


def _slice_transpose(ct, x, start_indices, limit_indices, strides):
    ca = get_aval(ct)
    cfg = []
    for n, s, o, st in zip(x.aval.shape, start_indices, ca.shape, strides):
        real_limit = s + (o - 1) * st + 1 if o > 0 else s
        cfg.append((s, n - real_limit, st - 1))
    return [pad(ct, _zero_scalar(ca.dtype), tuple(cfg))]


def _slice_batch(axis_size, vals, dims, start_indices, limit_indices, strides):
    (x,), (d,) = vals, dims
    s, lim, st = list(start_indices), list(limit_indices), list(strides)
    s.insert(d, 0)
    lim.insert(d, axis_size)
    st.insert(d, 1)
    return [static_slice(x, s, lim, st)], [d]


deflinear(slice_p)
deftranspose(slice_p, _slice_transpose)
batching.batch_rules[slice_p] = _slice_batch


def slice_in_dim(
    x: Any, start: int | None, limit: int | None, stride: int = 1, axis: int = 0
) -> Any:
    """``x[..., start:limit:stride, ...]`` along one ``axis`` (negative bounds count from the
    end; None means the whole extent).

    Example:
        >>> slice_in_dim(numpy.zeros((2, 5)), 1, -1, axis=1).shape
        (2, 3)
    """
    a = get_aval(x)
    axis = normalize_axis("slice_in_dim", axis, a.ndim)
    n = a.shape[axis]
    start = 0 if start is None else int(start)
    limit = n if limit is None else int(limit)
    start = start + n if start < 0 else start
    limit = limit + n if limit < 0 else limit
    starts = [0] * a.ndim
    limits = list(a.shape)
    strides = [1] * a.ndim
    starts[axis], limits[axis], strides[axis] = start, limit, int(stride)
    return static_slice(x, starts, limits, strides)


def index_in_dim(x: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    """The static ``index``-th slab of ``x`` along ``axis`` (kept as size 1 when keepdims).

    Example:
        >>> index_in_dim(numpy.zeros((2, 5)), -1, axis=1, keepdims=False).shape
        (2,)
    """
    a = get_aval(x)
    axis = normalize_axis("index_in_dim", axis, a.ndim)
    n = a.shape[axis]
    index = int(index)
    if not -n <= index < n:
        raise ShapeError(
            f"index_in_dim: index {index} is out of bounds for axis {axis} of {a.str_short()}"
        )
    index %= n
    out = slice_in_dim(x, index, index + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


# =============================================================================================
# dynamic_slice: operand and scalar integer start indices (clamped so the slice fits, as in
# XLA/JAX); static slice_sizes. Linear in the operand.


def _check_indices(name: str, a: ShapedArray, idx: Sequence[ShapedArray]) -> None:
    if len(idx) != a.ndim:
        raise ShapeError(
            f"{name}: needs one start index per axis of {a.str_short()}, got {len(idx)}"
        )
    for i in idx:
        if i.shape != () or i.dtype.kind not in "iu":
            raise DTypeError(
                f"{name}: start indices must be integer scalars, got {i.str_short()}"
            )


def _ds_shape(a: ShapedArray, idx: Sequence[ShapedArray], slice_sizes) -> tuple[int, ...]:
    check_static("dynamic_slice", slice_sizes=slice_sizes)
    _check_indices("dynamic_slice", a, idx)
    if len(slice_sizes) != a.ndim or any(
        not 0 <= s <= n for s, n in zip(slice_sizes, a.shape)
    ):
        raise ShapeError(
            f"dynamic_slice: slice_sizes {tuple(slice_sizes)} do not fit in {a.str_short()}"
        )
    return tuple(slice_sizes)


def _clamped_starts(shape: Sequence[int], idx: Sequence[Any], sizes: Sequence[int]) -> list:
    return [min(max(int(i), 0), n - z) for i, n, z in zip(idx, shape, sizes)]


def _ds_impl(x: Any, *idx: Any, slice_sizes: tuple[int, ...]) -> list:
    starts = _clamped_starts(x.shape, idx, slice_sizes)
    return [x[tuple(_pyslice(s, s + z) for s, z in zip(starts, slice_sizes))]]


def _ds_abstract(a: ShapedArray, *idx: ShapedArray, slice_sizes) -> list[ShapedArray]:
    return [a.update(shape=_ds_shape(a, idx, slice_sizes))]


dynamic_slice_p = make_primitive("dynamic_slice", _ds_impl, _ds_abstract)
# It drops some of its operands' values (see linearize.backward_pass_primitives).
backward_pass_primitives.add(dynamic_slice_p)


def dynamic_slice(x: Any, start_indices: Sequence[Any], slice_sizes: Sequence[int]) -> Any:
    """The ``slice_sizes`` block of ``x`` starting at (possibly traced) ``start_indices``.

    Start indices are clamped so the block fits: ``0 <= start <= size - slice_size``.

    Example:
        >>> dynamic_slice(numpy.arange(5), (4,), (2,)).tolist()
        [3, 4]
    """
    a = get_aval(x)
    start_indices = tuple(start_indices)
    slice_sizes = tuple(int(s) for s in slice_sizes)
    _ds_shape(a, [get_aval(i) for i in start_indices], slice_sizes)
    if slice_sizes == a.shape:
        return x
    return bind1(dynamic_slice_p, x, *start_indices, slice_sizes=slice_sizes)


def _ds_jvp(primals, tangents, slice_sizes):
    ans = bind1(dynamic_slice_p, *primals, slice_sizes=slice_sizes)
    t = tangents[0]
    if type(t) is Zero:
        return [ans], [Zero.from_primal(ans)]
    return [ans], [bind1(dynamic_slice_p, t, *primals[1:], slice_sizes=slice_sizes)]


def _ds_transpose(ct, x, *idx, slice_sizes):
    ca = get_aval(ct)
    zeros = _zeros(x.aval.shape, ca.dtype, x.aval.device or ca.device)
    return [dynamic_update_slice(zeros, ct, idx)] + [None] * len(idx)


def _ds_batch(axis_size, vals, dims, slice_sizes):
    x, *idx = vals
    dx, *didx = dims
    if all(d is None for d in didx):
        idx.insert(dx, 0)
        sizes = list(slice_sizes)
        sizes.insert(dx, axis_size)
        return [dynamic_slice(x, idx, sizes)], [dx]
    # Per-example starts: one gather of the blocks (ops.gather is looked up late: it builds
    # on this module).
    xa = get_aval(x)
    shape = xa.shape if dx is None else xa.shape[:dx] + xa.shape[dx + 1 :]
    if dx is not None:
        x = moveaxis(x, dx, 0)
    arrays = _block_index_arrays(axis_size, shape, idx, didx, slice_sizes, dx is not None)
    out = _indexing().gather_canonical(x, *arrays, indexer=_operands(len(arrays)), mode="clip")
    return [out], [0]


jvp_rules[dynamic_slice_p] = _ds_jvp
declare_linear(dynamic_slice_p)
deftranspose(dynamic_slice_p, _ds_transpose)
batching.batch_rules[dynamic_slice_p] = _ds_batch


def dynamic_slice_in_dim(x: Any, start_index: Any, slice_size: int, axis: int = 0) -> Any:
    """:func:`dynamic_slice` along one ``axis`` (the other axes are kept whole).

    Example:
        >>> dynamic_slice_in_dim(numpy.zeros((3, 4)), 1, 2, axis=1).shape
        (3, 2)
    """
    a = get_aval(x)
    axis = normalize_axis("dynamic_slice_in_dim", axis, a.ndim)
    starts: list[Any] = [0] * a.ndim
    sizes = list(a.shape)
    starts[axis], sizes[axis] = start_index, int(slice_size)
    return dynamic_slice(x, starts, sizes)


# =============================================================================================
# dynamic_update_slice: operand with the block `update` written at (clamped) start indices.
# Linear in the operand and the update.


def _dus_shape(a: ShapedArray, u: ShapedArray, idx: Sequence[ShapedArray]) -> None:
    _check_indices("dynamic_update_slice", a, idx)
    if u.ndim != a.ndim or any(s > n for s, n in zip(u.shape, a.shape)):
        raise ShapeError(
            f"dynamic_update_slice: update {u.str_short()} does not fit in operand "
            f"{a.str_short()}"
        )
    if u.dtype != a.dtype:
        raise DTypeError(
            f"dynamic_update_slice: update {u.str_short()} must have the operand's dtype "
            f"({a.str_short()})"
        )


def _dus_impl(x: Any, update: Any, *idx: Any) -> list:
    xp = xp_for(x, update, what="dynamic_update_slice")
    out = xp.array(x, copy=True)
    starts = _clamped_starts(out.shape, idx, update.shape)
    out[tuple(_pyslice(s, s + z) for s, z in zip(starts, update.shape))] = update
    return [out]


def _dus_abstract(a: ShapedArray, u: ShapedArray, *idx: ShapedArray) -> list[ShapedArray]:
    _dus_shape(a, u, idx)
    weak = a.weak_type and u.weak_type
    return [ShapedArray(a.shape, a.dtype, weak, result_device("dynamic_update_slice", a, u))]


dynamic_update_slice_p = make_primitive("dynamic_update_slice", _dus_impl, _dus_abstract)
# It drops some of its operands' values (see linearize.backward_pass_primitives).
backward_pass_primitives.add(dynamic_update_slice_p)


def dynamic_update_slice(x: Any, update: Any, start_indices: Sequence[Any]) -> Any:
    """``x`` with ``update`` written at (possibly traced, clamped) ``start_indices``.

    Example:
        >>> dynamic_update_slice(numpy.zeros(4), numpy.ones(2), (3,)).tolist()
        [0.0, 0.0, 1.0, 1.0]
    """
    a, u = get_aval(x), get_aval(update)
    start_indices = tuple(start_indices)
    _dus_shape(a, u, [get_aval(i) for i in start_indices])
    if u.shape == a.shape:
        return update
    return bind1(dynamic_update_slice_p, x, update, *start_indices)


def _dus_jvp(primals, tangents):
    ans = bind1(dynamic_update_slice_p, *primals)
    tx, tu = tangents[0], tangents[1]
    if type(tx) is Zero and type(tu) is Zero:
        return [ans], [Zero.from_primal(ans)]
    t = bind1(dynamic_update_slice_p, instantiate(tx), instantiate(tu), *primals[2:])
    return [ans], [t]


def _dus_transpose(ct, x, update, *idx):
    ua = _aval_of(update)
    ca = get_aval(ct)
    ct_x = ct_u = None
    if is_undefined(x):
        zeros = _zeros(ua.shape, ca.dtype, ua.device or ca.device)
        ct_x = dynamic_update_slice(ct, zeros, idx)
    if is_undefined(update):
        ct_u = dynamic_slice(ct, idx, ua.shape)
    return [ct_x, ct_u] + [None] * len(idx)


def _dus_batch(axis_size, vals, dims):
    x, u, *idx = vals
    dx, du, *didx = dims
    if all(d is None for d in didx):
        x = _to_front(x, dx, axis_size)
        u = _to_front(u, du, axis_size)
        return [dynamic_update_slice(x, u, [0] + idx)], [0]

    x = _to_front(x, dx, axis_size)
    u = _to_front(u, du, axis_size)
    shape, sizes = get_aval(x).shape[1:], get_aval(u).shape[1:]
    arrays = _block_index_arrays(axis_size, shape, idx, didx, sizes, True)
    out = _indexing().scatter(x, u, *arrays, indexer=_operands(len(arrays)), mode="clip")
    return [out], [0]


jvp_rules[dynamic_update_slice_p] = _dus_jvp
declare_linear(dynamic_update_slice_p)
deftranspose(dynamic_update_slice_p, _dus_transpose)
batching.batch_rules[dynamic_update_slice_p] = _dus_batch


def dynamic_update_slice_in_dim(x: Any, update: Any, start_index: Any, axis: int = 0) -> Any:
    """:func:`dynamic_update_slice` at ``start_index`` along one ``axis`` (0 elsewhere).

    Example:
        >>> dynamic_update_slice_in_dim(numpy.zeros((2, 3)), numpy.ones((2, 1)), 1, 1)[0].tolist()
        [0.0, 1.0, 0.0]
    """
    a = get_aval(x)
    axis = normalize_axis("dynamic_update_slice_in_dim", axis, a.ndim)
    starts: list[Any] = [0] * a.ndim
    starts[axis] = start_index
    return dynamic_update_slice(x, update, starts)


# =============================================================================================
# iota: 0, 1, 2, ... along `dimension` of `shape`, on the default device (no operands)


def _iota_aval(dtype: Any, shape: tuple[int, ...], dimension: int) -> ShapedArray:
    check_static("iota", dtype=dtype, shape=shape, dimension=dimension)
    dt = canonical_dtype(dtype, "iota")
    if dt.kind not in "iufc":
        raise DTypeError(f"iota: dtype must be numeric (integer, float or complex), got {dt}")
    if any(s < 0 for s in shape):
        raise ShapeError(f"iota: negative dimension in shape {tuple(shape)}")
    if not 0 <= dimension < len(shape):
        raise ShapeError(
            f"iota: dimension {dimension} is out of bounds for shape {tuple(shape)} "
            f"(rank {len(shape)})"
        )
    return ShapedArray(shape, dt, False, None)


def _iota_impl(*, dtype: numpy.dtype, shape: tuple[int, ...], dimension: int) -> list:
    xp = xp_for_device(get_default_device())
    n = shape[dimension]
    r = xp.arange(n, dtype=dtype)
    if len(shape) == 1:
        return [r]
    expanded = [1] * len(shape)
    expanded[dimension] = n
    return [xp.broadcast_to(r.reshape(expanded), shape)]


def _iota_abstract(*, dtype, shape, dimension) -> list[ShapedArray]:
    return [_iota_aval(dtype, shape, dimension)]


iota_p = make_primitive("iota", _iota_impl, _iota_abstract)


def iota(dtype: Any, shape: int | Sequence[int], dimension: int = 0) -> Any:
    """An array of ``shape`` counting 0, 1, 2, ... along ``dimension``, on the default device.

    Example:
        >>> iota(numpy.float32, (2, 3), 1).tolist()
        [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]
    """
    shape = (int(shape),) if isinstance(shape, int | numpy.integer) else tuple(
        int(s) for s in shape
    )
    dtype = numpy.dtype(dtype)
    dimension = int(dimension)
    if shape and dimension < 0:
        dimension += len(shape)
    _iota_aval(dtype, shape, dimension)
    return bind1(iota_p, dtype=dtype, shape=shape, dimension=dimension)


broadcasted_iota = iota


def _iota_batch(axis_size, vals, dims, **params):
    return [bind1(iota_p, **params)], [None]


defjvp_zero(iota_p)
batching.batch_rules[iota_p] = _iota_batch


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None) -> Any:
    """An array of ``shape`` filled with the scalar ``fill_value`` (traced values allowed).

    Example:
        >>> full((2,), 3.0, numpy.float32).tolist()
        [3.0, 3.0]
    """
    shape = tuple(int(s) for s in shape)
    if dtype is not None:
        fill_value = _as_scalar_of(fill_value, numpy.dtype(dtype), "full")
    elif isinstance(fill_value, bool | int | float | complex):
        fill_value = numpy.asarray(fill_value)[()]
    if get_aval(fill_value).shape != ():
        raise ShapeError(f"full: fill_value must be a scalar, got {get_aval(fill_value)}")
    return broadcast_in_dim(fill_value, shape, ())


__all__ = [n for n in dir() if not n.startswith("_")]
