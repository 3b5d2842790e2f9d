"""funcgrad.numpy: products and contractions (matmul, dot, vdot, inner, outer, tensordot,
einsum, kron), all built on the ``dot_general`` primitive.

As in NumPy, Python scalars given to these functions become ordinary (not weak) arrays, so
``fnp.dot(float32_array, 2.0)`` is float64 exactly like ``numpy.dot``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
import funcgrad.ops.reductions as _red
import funcgrad.ops.shape as _shape
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import (
    device_of,
    device_put,
    get_default_device,
    operator_index,
    xp_for_device,
)
from funcgrad.core import Tracer, bind1
from funcgrad.errors import AxisError, ShapeError
from funcgrad.numpy._creation import with_out_sharding
from funcgrad.numpy._dot_precision import algorithm_operands
from funcgrad.ops import gather as _ga
from funcgrad.ops import indexing as _ix
from funcgrad.ops.linalg import dot_general, dot_general_p

__all__ = ["matmul", "dot", "vdot", "inner", "outer", "tensordot", "einsum", "einsum_path",
           "kron"]

#: ``hook(name, operands) -> operands``, applied in turn to the operands of ``matmul`` (and
#: so of ``@`` on traced arrays), ``einsum`` and ``tensordot`` called without an explicit
#: dtype: funcgrad_nn.amp's autocast casts a user's matrix products there, as
#: ``torch.autocast`` casts ``torch.matmul``/``einsum``. funcgrad installs none.
operand_hooks: list[Callable[[str, tuple[Any, ...]], tuple[Any, ...]]] = []


def _hooked(name: str, *operands: Any) -> tuple[Any, ...]:
    for hook in operand_hooks:
        operands = hook(name, operands)
    return operands


def _arrs(*xs: Any) -> list[Any]:
    """Array operands: tracers and arrays as they are; Python/NumPy scalars and lists become
    (strongly typed) arrays on the device of the array operands, as ``numpy.asarray`` would.
    """
    out: list[Any] = list(xs)
    pending = []
    dev = None
    for k, x in enumerate(xs):
        if isinstance(x, Tracer):
            dev = dev or x.aval.device
            if x.aval.weak_type:  # a Python scalar argument under jit: strong, as eagerly
                out[k] = _ew.convert_element_type(x, x.aval.dtype)
        elif type(x) is numpy.ndarray:
            dev = dev or "cpu"
        else:
            d = device_of(x)
            if d is not None:
                dev = dev or d
            elif isinstance(x, bool | int | float | complex | numpy.generic | list | tuple):
                pending.append(k)
            else:
                t = type(x)
                raise TypeError(f"funcgrad.numpy: expected an array, got {t.__module__}."
                                f"{t.__qualname__}; convert it first with "
                                "funcgrad.numpy.asarray(x)")
    for k in pending:
        host = numpy.asarray(xs[k])
        if host.dtype == object:
            raise TypeError("funcgrad.numpy: ragged nested sequences cannot become an array")
        d = dev or get_default_device()
        out[k] = host if d == "cpu" else device_put(host, d)
    return out


_MM_DN = (((1,), (0,)), ((), ()))


def _aval(x: Any) -> ShapedArray:
    return get_aval(x)


def _ravel(x: Any) -> Any:
    a = get_aval(x)
    return x if a.ndim == 1 else _shape.reshape(x, (a.size,))


def _dn(lc: Sequence[int], rc: Sequence[int], lb: Sequence[int] = (),
        rb: Sequence[int] = ()) -> tuple:
    return ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))


def _check_contract(fn: str, a: ShapedArray, i: int, b: ShapedArray, j: int) -> None:
    if a.shape[i] != b.shape[j]:
        raise ShapeError(
            f"{fn}: shapes {a.shape} and {b.shape} not aligned: {a.shape[i]} (dim {i}) != "
            f"{b.shape[j]} (dim {j})"
        )


# ---------------------------------------------------------------------------------------------
# JAX's precision= and preferred_element_type= keywords


def _pet_operands(pet: Any, *ops: Any) -> list[Any]:
    """JAX's ``preferred_element_type``: the operands promoted to a dtype that also holds
    ``pet``, so the products are formed and summed in it (``int8`` operands with ``int32``
    accumulate without overflow; ``float32`` with ``float64`` are exact products)."""
    if pet is None:
        return list(ops)
    dt = numpy.result_type(*(_aval(o).dtype for o in ops))
    if dt.kind == "c" and numpy.dtype(pet).kind != "c":
        raise TypeError(f"preferred_element_type={numpy.dtype(pet)} would drop the imaginary "
                        f"part of a {dt} result (as JAX, it must not be narrower)")
    common = numpy.promote_types(dt, numpy.dtype(pet))
    return [o if _aval(o).dtype == common else _ew.convert_element_type(o, common)
            for o in ops]


def _precise(fname: str, precision: Any, pet: Any, call: Any, *ops: Any) -> Any:
    """``call(*ops, pet)`` under JAX's ``precision=``: checked (a clear error for anything
    JAX does not take); a dot algorithm (``lax.DotAlgorithmPreset`` or its name,
    ``lax.DotAlgorithm``) rounds the operands to its storage types and sums in its
    accumulation type, the result in the dtype the contraction gives without it, as
    ``lax.dot_general`` does. ``Precision`` values change nothing (full precision)."""
    ops = tuple(_arrs(*ops))
    out_dt = (numpy.dtype(pet) if pet is not None
              else numpy.result_type(*(_aval(o).dtype for o in ops)))
    rounded, after = algorithm_operands(f"numpy.{fname}", precision, ops, out_dt)
    if after is None:
        return call(*ops, pet)
    return _ew.convert_element_type(call(*rounded, None), after)


def _pet_result(out: Any, pet: Any) -> Any:
    """The result in ``preferred_element_type``."""
    if pet is None or _aval(out).dtype == numpy.dtype(pet):
        return out
    return _ew.convert_element_type(out, numpy.dtype(pet))



# ---------------------------------------------------------------------------------------------
# matmul / dot / vdot / inner / outer


def _cast_for_loop(fname: str, operands: Sequence[Any], dtype: Any, casting: str) -> list[Any]:
    """The operands cast to a ufunc's ``dtype=`` (its loop's), checked under ``casting`` as
    NumPy checks them."""
    dt = numpy.dtype(dtype)
    out = []
    for k, x in enumerate(operands):
        xa = _aval(x)
        if not numpy.can_cast(xa.dtype, dt, casting):
            raise TypeError(f"{fname}: cannot cast operand {k} from {xa.dtype} to {dt} with "
                            f"casting rule {casting!r}")
        out.append(x if xa.dtype == dt else _ew.convert_element_type(x, dt))
    return out


def _core_axes(fname: str, entry: Any, ndim: int, ncore: int, what: str) -> tuple[int, ...]:
    """The ``ncore`` core axes one entry of a gufunc's ``axes=`` names, non-negative."""
    axes = (entry,) if isinstance(entry, int | numpy.integer) else tuple(entry)
    if len(axes) != ncore:
        raise ValueError(f"{fname}: axes item for {what} should be a tuple with {ncore} "
                         f"elements, got {entry!r}")
    out = []
    for ax in axes:
        ax = operator_index(ax)
        if not -ndim <= ax < ndim:
            raise AxisError(f"{fname}: axis {ax} of {what} is out of bounds for array of "
                            f"dimension {ndim}")
        out.append(ax % ndim)
    return tuple(out)


def _matmul_options(a: Any, b: Any, out: Any, dtype: Any, casting: str, axes: Any,
                    precision: Any, preferred_element_type: Any) -> Any:
    """``matmul`` with NumPy's gufunc keywords: ``dtype``/``casting`` (the loop's dtype),
    ``axes`` (where each operand's and the result's matrix axes are)."""
    if out is not None:
        raise TypeError("matmul: out= is not supported (funcgrad arrays are immutable)")
    a, b = _arrs(a, b)
    if dtype is not None:
        a, b = _cast_for_loop("matmul", (a, b), dtype, casting)
    if axes is None:
        return matmul(a, b, precision=precision, preferred_element_type=preferred_element_type)
    axes = list(axes)
    an, bn = _aval(a).ndim, _aval(b).ndim
    out_core = min(an, 2) + min(bn, 2) - 2
    if len(axes) != 3:
        raise ValueError(f"matmul: axes should be a list with an entry for each of the 2 "
                         f"operands and the result, got {len(axes)} entries")
    ca = _core_axes("matmul", axes[0], an, min(an, 2), "operand 0")
    cb = _core_axes("matmul", axes[1], bn, min(bn, 2), "operand 1")
    a = _shape.transpose(a, _core_last(an, ca))
    b = _shape.transpose(b, _core_last(bn, cb))
    r = matmul(a, b, precision=precision, preferred_element_type=preferred_element_type)
    rn = _aval(r).ndim
    co = _core_axes("matmul", axes[2], rn, out_core, "the output")
    perm = _core_last(rn, co)
    return _shape.transpose(r, tuple(int(i) for i in numpy.argsort(perm)))


def _core_last(ndim: int, core: tuple[int, ...]) -> tuple[int, ...]:
    """The permutation putting the ``core`` axes last, in their order."""
    return tuple(d for d in range(ndim) if d not in core) + core


@with_out_sharding
def matmul(a: Any, b: Any, out: Any = None, *, dtype: Any = None, casting: str = "same_kind",
           order: str = "K", subok: bool = True, axes: Any = None, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """Matrix product with NumPy's rules: stacks of matrices broadcast, 1-D operands are
    promoted to a row/column and the added axis removed.

    ``precision`` (JAX's) takes every form ``lax.dot_general`` does: ``lax.Precision`` values
    and names change nothing (funcgrad computes in the dtype's full precision); a dot
    algorithm (``lax.DotAlgorithmPreset``, its name, or ``lax.DotAlgorithm``) is honoured,
    the operands rounded to its types; anything else is a ``ValueError``.
    ``preferred_element_type`` (JAX's) is the result dtype, the products accumulating in it. NumPy's gufunc keywords: ``dtype`` (the loop's dtype, operands cast to it under
    ``casting``), ``axes`` (the matrix axes of each operand and of the result); ``order``
    and ``subok`` are accepted.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.matmul(np.ones((2, 3)), np.ones(3))
        array([3., 3.])
    """
    if operand_hooks and dtype is None and preferred_element_type is None:
        a, b = _hooked("matmul", a, b)
    if precision is not None:
        return _precise("matmul", precision, preferred_element_type, lambda x, y, pet: matmul(
            x, y, out, dtype=dtype, casting=casting, axes=axes, preferred_element_type=pet),
            a, b)
    if out is not None or dtype is not None or axes is not None:
        return _matmul_options(a, b, out, dtype, casting, axes, None,
                               preferred_element_type)
    if preferred_element_type is not None:
        a, b = _pet_operands(preferred_element_type, *_arrs(a, b))
        return _pet_result(matmul(a, b), preferred_element_type)
    a, b = _arrs(a, b)
    an, bn = a.ndim, b.ndim
    if an == 2 and bn == 2:  # the hot path (dense layers)
        if a.shape[1] != b.shape[0]:
            _check_contract("matmul", _aval(a), 1, _aval(b), 0)
        return bind1(dot_general_p, a, b, dimension_numbers=_MM_DN)
    aa, ba = _aval(a), _aval(b)
    if an == 0 or bn == 0:
        raise ShapeError(
            f"matmul: Input operand {0 if an == 0 else 1} does not have enough dimensions "
            "(a scalar operand; use * or fnp.multiply)"
        )
    ka = an - 1
    kb = 0 if bn == 1 else bn - 2
    _check_contract("matmul", aa, ka, ba, kb)
    # Batch dims that are all 1 on one side broadcast for free: drop them.
    if an > 2 and bn > 2:
        if all(s == 1 for s in ba.shape[:-2]) and bn <= an:
            b = _shape.reshape(b, ba.shape[-2:])
            ba, bn = _aval(b), 2
        elif all(s == 1 for s in aa.shape[:-2]) and an <= bn:
            a = _shape.reshape(a, aa.shape[-2:])
            aa, an = _aval(a), 2
    if bn <= 2:
        return dot_general(a, b, _dn((an - 1,), (0,)))
    if an <= 2:
        out = dot_general(a, b, _dn((an - 1,), (bn - 2,)))
        return out if an == 1 else _shape.moveaxis(out, 0, -2)
    try:
        batch = tuple(numpy.broadcast_shapes(aa.shape[:-2], ba.shape[:-2]))
    except ValueError:
        raise ShapeError(
            f"matmul: the stacked dims of shapes {aa.shape} and {ba.shape} cannot be broadcast"
        ) from None
    if aa.shape[:-2] != batch:
        a = _shape.broadcast_to(a, batch + aa.shape[-2:])
    if ba.shape[:-2] != batch:
        b = _shape.broadcast_to(b, batch + ba.shape[-2:])
    nb = len(batch)
    return dot_general(a, b, _dn((nb + 1,), (nb,), range(nb), range(nb)))


@with_out_sharding
def dot(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """NumPy ``dot``: products with scalars, inner product of vectors, matrix product, and for
    N-D arrays a sum over the last axis of ``a`` and the second-to-last of ``b``.

    ``precision``, ``preferred_element_type``: JAX's, as in :func:`matmul`.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> float(fnp.dot(np.array([1.0, 2.0]), np.array([3.0, 4.0])))
        11.0
    """
    if precision is not None:
        return _precise("dot", precision, preferred_element_type,
                        lambda x, y, pet: dot(x, y, preferred_element_type=pet), a, b)
    if preferred_element_type is not None:
        a, b = _pet_operands(preferred_element_type, *_arrs(a, b))
        return _pet_result(_dot(a, b), preferred_element_type)
    return _dot(a, b)


def _dot(a: Any, b: Any) -> Any:
    a, b = _arrs(a, b)
    aa, ba = _aval(a), _aval(b)
    if aa.ndim == 0 or ba.ndim == 0:
        return _ew.mul(a, b)
    kb = 0 if ba.ndim == 1 else ba.ndim - 2
    _check_contract("dot", aa, aa.ndim - 1, ba, kb)
    return dot_general(a, b, _dn((aa.ndim - 1,), (kb,)))


def vdot(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Dot product of the flattened arrays, conjugating ``a`` first.

    ``precision``, ``preferred_element_type``: JAX's, as in :func:`matmul`.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> complex(fnp.vdot(np.array([1j, 2.0]), np.array([1j, 1.0])))
        (3+0j)
    """
    if precision is not None:
        return _precise("vdot", precision, preferred_element_type,
                        lambda x, y, pet: vdot(x, y, preferred_element_type=pet), a, b)
    if preferred_element_type is not None:
        a, b = _pet_operands(preferred_element_type, *_arrs(a, b))
        return _pet_result(_vdot(a, b), preferred_element_type)
    return _vdot(a, b)


def _vdot(a: Any, b: Any) -> Any:
    a, b = (_ravel(v) for v in _arrs(a, b))
    aa, ba = _aval(a), _aval(b)
    if aa.size != ba.size:
        raise ShapeError(
            f"vdot: vectors have different lengths: {aa.size} and {ba.size}"
        )
    return dot_general(_ew.conj(a), b, _dn((0,), (0,)))


def inner(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Inner product over the last axes of ``a`` and ``b`` (products with scalars).

    ``precision``, ``preferred_element_type``: JAX's, as in :func:`matmul`.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.inner(np.ones((2, 3)), np.ones((4, 3))).shape
        (2, 4)
    """
    if precision is not None:
        return _precise("inner", precision, preferred_element_type,
                        lambda x, y, pet: inner(x, y, preferred_element_type=pet), a, b)
    if preferred_element_type is not None:
        a, b = _pet_operands(preferred_element_type, *_arrs(a, b))
        return _pet_result(_inner(a, b), preferred_element_type)
    return _inner(a, b)


def _inner(a: Any, b: Any) -> Any:
    a, b = _arrs(a, b)
    aa, ba = _aval(a), _aval(b)
    if aa.ndim == 0 or ba.ndim == 0:
        return _ew.mul(a, b)
    _check_contract("inner", aa, aa.ndim - 1, ba, ba.ndim - 1)
    return dot_general(a, b, _dn((aa.ndim - 1,), (ba.ndim - 1,)))


def outer(a: Any, b: Any, out: Any = None) -> Any:
    """Outer product of the flattened ``a`` and ``b``: ``result[i, j] = a[i] * b[j]``.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.outer(np.array([1, 2]), np.array([3, 4]))
        array([[3, 4],
               [6, 8]])
    """
    if out is not None:
        raise TypeError("fnp.outer: out= is not supported (funcgrad arrays are immutable)")
    a, b = (_ravel(v) for v in _arrs(a, b))
    return dot_general(a, b, _dn((), ()))


@with_out_sharding
def tensordot(a: Any, b: Any, axes: Any = 2, *, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """Sum of products over ``axes``: the last ``axes`` of ``a`` with the first of ``b``, or
    the explicit pair of axis sequences ``(axes_a, axes_b)``.

    ``precision``, ``preferred_element_type``: JAX's, as in :func:`matmul`.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.tensordot(np.ones((2, 3, 4)), np.ones((3, 4, 5)), axes=2).shape
        (2, 5)
        >>> fnp.tensordot(np.ones((2, 3)), np.ones((3, 2)), axes=([0], [1])).shape
        (3, 3)
    """
    if operand_hooks and preferred_element_type is None:
        a, b = _hooked("tensordot", a, b)
    if precision is not None:
        return _precise("tensordot", precision, preferred_element_type,
                        lambda x, y, pet: tensordot(x, y, axes, preferred_element_type=pet), a, b)
    if preferred_element_type is not None:
        a, b = _pet_operands(preferred_element_type, *_arrs(a, b))
        return _pet_result(_tensordot(a, b, axes), preferred_element_type)
    return _tensordot(a, b, axes)


def _tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    a, b = _arrs(a, b)
    aa, ba = _aval(a), _aval(b)
    try:
        n = operator_index(axes)
    except TypeError:
        n = None
    if n is not None:
        if n < 0 or n > aa.ndim or n > ba.ndim:
            raise ShapeError(
                f"tensordot: axes={n} is invalid for operands of rank {aa.ndim} and {ba.ndim}"
            )
        axes_a = list(range(aa.ndim - n, aa.ndim))
        axes_b = list(range(n))
    else:
        try:
            axes_a, axes_b = axes
        except (TypeError, ValueError):
            raise TypeError(
                "tensordot: axes must be an int or a pair of axis sequences"
            ) from None
        axes_a = [axes_a] if isinstance(axes_a, int | numpy.integer) else list(axes_a)
        axes_b = [axes_b] if isinstance(axes_b, int | numpy.integer) else list(axes_b)
        if len(axes_a) != len(axes_b):
            raise ShapeError(
                f"tensordot: shape-mismatch for sum: {len(axes_a)} axes of a but "
                f"{len(axes_b)} of b"
            )
    axes_a = [_norm(x, aa.ndim, "tensordot") for x in axes_a]
    axes_b = [_norm(x, ba.ndim, "tensordot") for x in axes_b]
    for i, j in zip(axes_a, axes_b):
        if aa.shape[i] != ba.shape[j]:
            raise ShapeError(
                f"tensordot: shape-mismatch for sum: a {aa.shape} axis {i} has size "
                f"{aa.shape[i]} but b {ba.shape} axis {j} has size {ba.shape[j]}"
            )
    return dot_general(a, b, _dn(axes_a, axes_b))


def _norm(axis: Any, ndim: int, fn: str) -> int:
    axis = operator_index(axis)
    if not -ndim <= axis < ndim:
        raise AxisError(f"{fn}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def kron(a: Any, b: Any) -> Any:
    """Kronecker product: blocks of ``b`` scaled by the elements of ``a``.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.kron(np.eye(2), np.array([[1, 2]]))
        array([[1., 2., 0., 0.],
               [0., 0., 1., 2.]])
    """
    a, b = _arrs(a, b)
    aa, ba = _aval(a), _aval(b)
    nd = max(aa.ndim, ba.ndim)
    sa = (1,) * (nd - aa.ndim) + aa.shape
    sb = (1,) * (nd - ba.ndim) + ba.shape
    a2 = _shape.reshape(a, tuple(s for d in sa for s in (d, 1)))
    b2 = _shape.reshape(b, tuple(s for d in sb for s in (1, d)))
    prod = _ew.mul(a2, b2)
    return _shape.reshape(prod, tuple(x * y for x, y in zip(sa, sb)))


# ---------------------------------------------------------------------------------------------
# einsum


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _sublist_to_str(sub: Any) -> str:
    out = []
    for s in sub:
        if s is Ellipsis:
            out.append("...")
        else:
            i = operator_index(s)
            if not 0 <= i < len(_LETTERS):
                raise ValueError(f"einsum: subscript {i} is out of range [0, 52)")
            out.append(_LETTERS[i])
    return "".join(out)


def _parse_einsum_args(args: Sequence[Any]) -> tuple[str, list[Any]]:
    if not args:
        raise ValueError("einsum: no subscripts given")
    if isinstance(args[0], str):
        return args[0], list(args[1:])
    ops = list(args[0::2])
    subs = list(args[1::2])
    out = None
    if len(ops) > len(subs):
        # An odd count: the last item is the output sublist, not an operand.
        out = ops.pop()
    spec = ",".join(_sublist_to_str(s) for s in subs)
    if out is not None:
        spec += "->" + _sublist_to_str(out)
    return spec, ops


def _split_labels(spec: str, ndim: int, which: str) -> list[Any]:
    """Labels of one operand: letters as str, ellipsis dims as ints counted from the right."""
    if spec.count("...") > 1:
        raise ValueError(f"einsum: {which} has more than one ellipsis")
    if "..." in spec:
        left, right = spec.split("...")
    else:
        left, right = spec, None
    for ch in spec.replace("...", ""):
        if ch not in _LETTERS:
            raise ValueError(f"einsum: invalid subscript {ch!r} in {which}")
    named = len(left) + (len(right) if right is not None else 0)
    if right is None:
        if named != ndim:
            raise ShapeError(
                f"einsum: {which} has {named} subscripts but the operand has {ndim} dimensions"
            )
        return list(left)
    n_ell = ndim - named
    if n_ell < 0:
        raise ShapeError(
            f"einsum: {which} has {named} subscripts but the operand has only {ndim} "
            "dimensions"
        )
    return list(left) + list(range(n_ell - 1, -1, -1)) + list(right)


def _take_diagonal(x: Any, labels: list[Any]) -> tuple[Any, list[Any]]:
    """Collapse repeated labels of one operand to their diagonal."""
    while True:
        seen: dict[Any, int] = {}
        dup = None
        for i, lab in enumerate(labels):
            if lab in seen:
                dup = (seen[lab], i)
                break
            seen[lab] = i
        if dup is None:
            return x, labels
        p, q = dup
        xa = _aval(x)
        if xa.shape[p] != xa.shape[q]:
            raise ShapeError(
                f"einsum: repeated subscript {labels[p]!r} has sizes {xa.shape[p]} and "
                f"{xa.shape[q]} in one operand"
            )
        rest = [i for i in range(xa.ndim) if i not in (p, q)]
        x = _shape.transpose(x, (p, q, *rest))
        n = xa.shape[p]
        xp = xp_for_device(xa.device or get_default_device())
        ar = xp.arange(n, dtype=numpy.intp)
        x = _ga.gather(x, ar, ar, indexer=(_ix.Operand(0), _ix.Operand(1)))
        labels = [labels[p]] + [labels[i] for i in rest]


def _sum_labels(x: Any, labels: list[Any], drop: set[Any]) -> tuple[Any, list[Any]]:
    axes = tuple(i for i, lab in enumerate(labels) if lab in drop)
    if not axes:
        return x, labels
    dt = _aval(x).dtype
    x = _red.reduce_sum(x, axes)
    if _aval(x).dtype != dt:
        x = _ew.convert_element_type(x, dt)  # sum promotes small ints; einsum does not
    return x, [lab for i, lab in enumerate(labels) if i not in axes]


def einsum_path(*operands: Any, optimize: Any = "greedy", einsum_call: bool = False) -> Any:
    """NumPy's contraction order for :func:`einsum` and its report, as ``numpy.einsum_path``.

    The path depends on the operands' shapes only, so traced operands work too (their shapes
    are static). ``einsum(..., optimize=path)`` accepts the path.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> a, b, c = np.ones((2, 30)), np.ones((30, 40)), np.ones((40, 5))
        >>> fnp.einsum_path("ij,jk,kl->il", a, b, c)[0]
        ['einsum_path', (1, 2), (0, 1)]
    """
    spec, ops = _parse_einsum_args(operands)
    # Zero-strided stand-ins with each operand's shape and dtype: NumPy reads nothing else.
    stubs = []
    for o in ops:
        a = get_aval(o) if isinstance(o, Tracer) or hasattr(o, "shape") else get_aval(
            numpy.asarray(o))
        stubs.append(numpy.broadcast_to(numpy.zeros((), a.dtype), a.shape))
    return numpy.einsum_path(spec, *stubs, optimize=optimize, einsum_call=einsum_call)


@with_out_sharding
def einsum(*operands: Any, out: Any = None, optimize: Any = False, dtype: Any = None,
           order: str = "K", casting: str = "safe", precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """Einstein summation, as ``numpy.einsum``: explicit (``'ij,jk->ik'``) and implicit
    outputs, ``...`` broadcasting, repeated subscripts in one operand (diagonals), any number
    of operands (contracted pairwise, left to right), and the interleaved sublist form.
    ``optimize`` is accepted and ignored; ``precision`` and ``preferred_element_type``
    (JAX's) as in :func:`matmul`.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.einsum("ij,jk->ik", np.ones((2, 3)), np.ones((3, 4))).shape
        (2, 4)
        >>> float(fnp.einsum("ii", np.eye(3)))
        3.0
    """
    if out is not None:
        raise TypeError("fnp.einsum: out= is not supported (funcgrad arrays are immutable)")
    del optimize, order
    spec, ops = _parse_einsum_args(operands)
    if operand_hooks and dtype is None and preferred_element_type is None:
        ops = _hooked("einsum", *ops)
    ops = _arrs(*ops)
    if dtype is not None:
        dt = numpy.dtype(dtype)
        for i, o in enumerate(ops):
            if not numpy.can_cast(_aval(o).dtype, dt, casting=casting):
                raise TypeError(
                    f"einsum: operand {i} of dtype {_aval(o).dtype} cannot be cast to "
                    f"dtype={dt} according to the rule {casting!r} (pass casting='unsafe')"
                )
        ops = [_ew.convert_element_type(o, dt) for o in ops]
    if precision is not None:  # after the loop's dtype: the algorithm rounds from there
        return _precise("einsum", precision, preferred_element_type, lambda *xs: einsum(
            spec, *xs[:-1], preferred_element_type=xs[-1]), *ops)
    if preferred_element_type is not None:
        ops = _pet_operands(preferred_element_type, *ops)
    spec = spec.replace(" ", "")
    if "->" in spec:
        in_spec, out_spec = spec.split("->")
        explicit = True
    else:
        in_spec, out_spec, explicit = spec, "", False
    in_specs = in_spec.split(",")
    if len(in_specs) != len(ops):
        raise ValueError(
            f"einsum: {len(in_specs)} operand subscripts in {spec!r} but {len(ops)} operands"
        )
    labels = [
        _split_labels(s, _aval(o).ndim, f"operand {i} ({s!r})")
        for i, (s, o) in enumerate(zip(in_specs, ops))
    ]
    n_ell = max((sum(1 for lab in ls if isinstance(lab, int)) for ls in labels), default=0)
    ell_labels = list(range(n_ell - 1, -1, -1))
    if explicit:
        if out_spec.count("...") > 1:
            raise ValueError("einsum: output has more than one ellipsis")
        for ch in out_spec.replace("...", ""):
            if ch not in _LETTERS:
                raise ValueError(f"einsum: invalid output subscript {ch!r}")
        if "..." in out_spec:
            left, right = out_spec.split("...")
            out_labels: list[Any] = list(left) + ell_labels + list(right)
        else:
            # The broadcast (ellipsis) axes are summed over, as jnp.einsum does (NumPy
            # refuses this spec; JAX programs write "...n,...->n" for a batch-summed product).
            out_labels = list(out_spec)
    else:
        counts: dict[Any, int] = {}
        for ls in labels:
            for lab in ls:
                if isinstance(lab, str):
                    counts[lab] = counts.get(lab, 0) + 1
        out_labels = ell_labels + sorted(lab for lab, c in counts.items() if c == 1)
    all_in = {lab for ls in labels for lab in ls}
    for lab in out_labels:
        if out_labels.count(lab) > 1:
            raise ValueError(
                f"einsum: output subscript {lab!r} appears more than once"
            )
        if lab not in all_in:
            raise ValueError(
                f"einsum: output subscript {lab!r} does not appear in the operands' subscripts"
            )
    result_dt = numpy.result_type(*(_aval(o).dtype for o in ops))

    diag = [_take_diagonal(o, ls) for o, ls in zip(ops, labels)]
    # Sizes per label, with NumPy's broadcasting of size-1 dims.
    sizes: dict[Any, int] = {}
    for i, (o, ls) in enumerate(diag):
        for lab, s in zip(ls, _aval(o).shape):
            cur = sizes.get(lab)
            if cur is None or cur == 1:
                sizes[lab] = s
            elif s != 1 and s != cur:
                raise ShapeError(
                    f"einsum: size of label {lab!r} is {cur} in one operand and {s} in "
                    f"operand {i} ({in_specs[i]!r})"
                )

    work = []
    for o, ls in diag:
        shape = _aval(o).shape
        full = tuple(sizes[lab] for lab in ls)
        if shape != full:
            o = _shape.broadcast_to(o, full)
        work.append((o, ls))

    out_set = set(out_labels)

    def needed_after(k: int) -> set[Any]:
        s = set(out_set)
        for _, ls in work[k + 1:]:
            s.update(ls)
        return s

    cur, cur_ls = work[0]
    cur, cur_ls = _sum_labels(cur, cur_ls, set(cur_ls) - needed_after(0))
    for k in range(1, len(work)):
        nxt, nxt_ls = work[k]
        later = needed_after(k)
        nxt, nxt_ls = _sum_labels(nxt, nxt_ls, set(nxt_ls) - later - set(cur_ls))
        cur, cur_ls = _sum_labels(cur, cur_ls, set(cur_ls) - later - set(nxt_ls))
        shared = [lab for lab in cur_ls if lab in nxt_ls]
        batch = [lab for lab in shared if lab in later]
        contract = [lab for lab in shared if lab not in later]
        dn = _dn([cur_ls.index(lab) for lab in contract], [nxt_ls.index(lab) for lab in contract],
                 [cur_ls.index(lab) for lab in batch], [nxt_ls.index(lab) for lab in batch])
        cur = dot_general(cur, nxt, dn)
        cur_ls = (batch + [lab for lab in cur_ls if lab not in shared]
                  + [lab for lab in nxt_ls if lab not in shared])
    cur, cur_ls = _sum_labels(cur, cur_ls, set(cur_ls) - out_set)
    perm = tuple(cur_ls.index(lab) for lab in out_labels)
    cur = _shape.transpose(cur, perm)
    if _aval(cur).dtype != result_dt:
        cur = _ew.convert_element_type(cur, result_dt)
    return _pet_result(cur, preferred_element_type)
