"""``jax.experimental.sparse``: the ``BCOO`` sparse array (coordinates and values), its
operations, and the functions JAX names after them.

A :class:`BCOO` holds ``nse`` stored elements: ``data`` (their values, shape ``(nse,)``) and
``indices`` (their coordinates, shape ``(nse, ndim)``). Coordinates may repeat (their values
add up) and may be padding: JAX pads a fixed-size ``nse`` with coordinates equal to the shape
(out of bounds) and value 0, and every operation here ignores those, as JAX's do. A BCOO is a
pytree of ``(data, indices)``, so it goes through ``jit``, ``grad`` (with respect to
``data``) and ``vmap`` (as an unbatched argument or output), and every operation is written
with funcgrad's differentiable operations.

Products with dense arrays give dense arrays (``A @ x``, ``x @ A``, ``bcoo_dot_general``);
elementwise products and sums of BCOOs stay sparse. Not provided: batch and dense dimensions
(``n_batch``/``n_dense`` are 0), sparse-sparse products and ``COO``/``CSR``.
:class:`BCSR` (compressed rows of a matrix) converts to and from BCOO and multiplies dense
arrays as JAX's.
:func:`sparsify` runs ``funcgrad.numpy`` code on BCOO arguments by the sparse rules of the
operations above.

Example:
    >>> import numpy as np
    >>> from funcgrad.experimental import sparse
    >>> A = sparse.BCOO.fromdense(np.array([[0.0, 1.0], [2.0, 0.0]]))
    >>> A
    BCOO(float64[2, 2], nse=2)
    >>> (A @ np.array([1.0, 10.0])).tolist()
    [10.0, 2.0]
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from funcgrad import api as _api
from funcgrad import backend, tree_util
from funcgrad import numpy as fnp
from funcgrad import random as _random
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import to_numpy
from funcgrad.core import (
    Primitive,
    Trace,
    Tracer,
    _trace_var,
    bind,
    bind1,
    current_trace,
    set_current_trace,
)
from funcgrad.errors import ConcretizationError
from funcgrad.ops import elementwise as _ew
from funcgrad.ops import linalg as _linalg
from funcgrad.ops import reductions as _red
from funcgrad.ops import shape as _shape

__all__ = [
    "BCOO", "bcoo_fromdense", "bcoo_todense", "bcoo_dot_general", "bcoo_multiply_dense",
    "bcoo_multiply_sparse", "bcoo_reduce_sum", "bcoo_transpose", "bcoo_sum_duplicates",
    "bcoo_sort_indices", "bcoo_extract", "bcoo_concatenate", "todense", "eye", "empty",
    "random_bcoo", "JAXSparse", "sparsify", "SparseTracer", "sparse_rules", "bcoo_reshape",
    "BCSR", "bcsr_fromdense", "bcsr_todense", "grad", "value_and_grad",
]


class BCOO:
    """A sparse array of ``shape`` storing ``data[i]`` at coordinates ``indices[i]``
    (``jax.experimental.sparse.BCOO``); build it as ``BCOO((data, indices), shape=shape)``
    or with :meth:`fromdense`.

    Example:
        >>> import numpy as np
        >>> A = BCOO((np.array([1.0, 2.0]), np.array([[0, 1], [1, 0]])), shape=(2, 2))
        >>> A.todense().tolist()
        [[0.0, 1.0], [2.0, 0.0]]
    """

    # x @ A with x a NumPy or CuPy array calls A.__rmatmul__: NumPy defers to a type whose
    # __array_ufunc__ is None, CuPy (whose arrays have priority 100) to a higher priority
    __array_ufunc__ = None
    __array_priority__ = 101

    def __init__(self, args: tuple[Any, Any], *, shape: Sequence[int],
                 indices_sorted: bool = False, unique_indices: bool = False) -> None:
        data, indices = _colocated(fnp.asarray(args[0]), fnp.asarray(args[1]))
        shape = tuple(int(s) for s in shape)
        d, i = get_aval(data), get_aval(indices)
        if i.ndim != 2 or i.shape[1] != len(shape):
            raise ValueError(
                f"BCOO: indices must have shape (nse, {len(shape)}) for an array of shape "
                f"{shape}, got {i.shape} (batch and dense dimensions are not supported)")
        if d.ndim != 1 or d.shape[0] != i.shape[0]:
            raise ValueError(f"BCOO: data must have shape (nse,) = ({i.shape[0]},), got "
                             f"{d.shape}")
        if i.dtype.kind not in "iu":
            raise TypeError(f"BCOO: indices must be integers, got {i.dtype}")
        self.data = data
        self.indices = indices
        self.shape = shape
        self.indices_sorted = bool(indices_sorted)
        self.unique_indices = bool(unique_indices)

    # -- attributes -------------------------------------------------------------------------

    dtype = property(lambda self: get_aval(self.data).dtype)
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    nse = property(lambda self: get_aval(self.data).shape[0])
    n_batch = property(lambda self: 0)
    n_dense = property(lambda self: 0)
    n_sparse = property(lambda self: len(self.shape))
    T = property(lambda self: self.transpose())

    def __repr__(self) -> str:
        dims = ", ".join(str(s) for s in self.shape)
        return f"BCOO({self.dtype}[{dims}], nse={self.nse})"

    def __len__(self) -> int:
        return self.shape[0]

    # -- conversions ------------------------------------------------------------------------

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = numpy.int32,
                  n_dense: int = 0, n_batch: int = 0) -> BCOO:
        """The non-zero elements of ``mat`` (``nse``: how many to store, required under
        ``jit``; extra places are padding, as JAX's)."""
        return bcoo_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                              n_batch=n_batch)

    @classmethod
    def from_scipy_sparse(cls, mat: Any, *, index_dtype: Any = numpy.int32) -> BCOO:
        """A BCOO of a ``scipy.sparse`` matrix (its stored entries, in COO order)."""
        coo = mat.tocoo()
        indices = numpy.stack([coo.row, coo.col], axis=1).astype(index_dtype)
        return cls((fnp.asarray(coo.data), fnp.asarray(indices)), shape=coo.shape)

    def todense(self) -> Any:
        """The dense array (repeated coordinates add up; padding is dropped)."""
        return bcoo_todense(self)

    def astype(self, dtype: Any) -> BCOO:
        return self._with_data(fnp.asarray(self.data).astype(dtype))

    def block_until_ready(self) -> BCOO:
        return self

    def update_layout(self, *, n_batch: int | None = None, n_dense: int | None = None,
                      on_inefficient: str | None = None) -> BCOO:
        if n_batch not in (None, 0) or n_dense not in (None, 0):
            raise ValueError("BCOO.update_layout: batch and dense dimensions are not "
                             "supported by funcgrad's BCOO")
        return self

    def _with_data(self, data: Any) -> BCOO:
        return BCOO((data, self.indices), shape=self.shape,
                    indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)

    # -- operations -------------------------------------------------------------------------

    def transpose(self, axes: Sequence[int] | None = None) -> BCOO:
        return bcoo_transpose(self, permutation=axes)

    def reshape(self, *args: Any, **kwargs: Any) -> BCOO:
        """The same elements in ``shape`` (row-major order, as ``numpy.reshape``)."""
        shape = args[0] if len(args) == 1 else args
        shape = kwargs.pop("new_sizes", kwargs.pop("shape", shape))
        return bcoo_reshape(self, new_sizes=(shape,) if isinstance(shape, int) else shape)

    def sum(self, axis: int | Sequence[int] | None = None) -> Any:
        """The sum over ``axis`` (a BCOO over the remaining axes; all axes: a dense
        scalar, as JAX's)."""
        if axis is None:
            return fnp.sum(fnp.where(_in_bounds(self), self.data, 0))
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        return bcoo_reduce_sum(self, axes=axes)

    def sum_duplicates(self, nse: int | None = None, remove_zeros: bool = True) -> BCOO:
        return bcoo_sum_duplicates(self, nse=nse)

    def sort_indices(self) -> BCOO:
        return bcoo_sort_indices(self)

    def __neg__(self) -> BCOO:
        return self._with_data(-self.data)

    def __pos__(self) -> BCOO:
        return self

    def __mul__(self, other: Any) -> BCOO:
        if isinstance(other, BCOO):
            return bcoo_multiply_sparse(self, other)
        if fnp.ndim(other) == 0:
            return self._with_data(self.data * other)
        return bcoo_multiply_dense(self, other)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> BCOO:
        if isinstance(other, BCOO) or fnp.ndim(other) != 0:
            raise TypeError("BCOO / array: only division by a scalar keeps an array sparse; "
                            "multiply by the reciprocal's BCOO or densify first")
        return self._with_data(self.data / other)

    def __add__(self, other: Any) -> Any:
        if isinstance(other, BCOO):
            if other.shape != self.shape:
                raise ValueError(f"BCOO + BCOO: shapes {self.shape} and {other.shape} differ")
            return bcoo_concatenate_entries(self, other)
        if tuple(fnp.shape(other)) != self.shape:
            raise TypeError(
                f"BCOO + dense array: the dense operand must have the sparse array's shape "
                f"{self.shape} (got {tuple(fnp.shape(other))}); adding a scalar or broadcasting "
                "would make every element non-zero: use A.todense() + x")
        return bcoo_todense(self) + other

    __radd__ = __add__

    def __sub__(self, other: Any) -> Any:
        return self + (-other)

    def __rsub__(self, other: Any) -> Any:
        return (-self) + other

    def __matmul__(self, other: Any) -> Any:
        if isinstance(other, BCOO):
            raise TypeError("BCOO @ BCOO: sparse-sparse products are not provided; "
                            "densify one operand (B.todense())")
        nd = fnp.ndim(other)
        if self.ndim == 0 or nd == 0:
            raise ValueError("matmul: operands must have at least one dimension")
        contract = ((self.ndim - 1,), (0 if nd == 1 else nd - 2,))
        if self.ndim > 2 or nd > 2:
            raise ValueError(f"BCOO @ array: a matrix or vector times a matrix or vector "
                             f"(got ranks {self.ndim} and {nd}); use bcoo_dot_general")
        return bcoo_dot_general(self, other, dimension_numbers=(contract, ((), ())))

    def __rmatmul__(self, other: Any) -> Any:
        nd = fnp.ndim(other)
        if self.ndim > 2 or nd > 2 or nd == 0:
            raise ValueError(f"array @ BCOO: a matrix or vector times a matrix or vector "
                             f"(got ranks {nd} and {self.ndim}); use bcoo_dot_general")
        return bcoo_dot_general(other, self, dimension_numbers=(((nd - 1,), (0,)), ((), ())))


#: ``jax.experimental.sparse.JAXSparse``: the base of sparse array types (here, BCOO's)
JAXSparse = BCOO


def _flatten(x: BCOO) -> tuple[tuple[Any, Any], tuple]:
    return (x.data, x.indices), (x.shape, x.indices_sorted, x.unique_indices)


def _unflatten(aux: tuple, children: Any) -> BCOO:
    shape, indices_sorted, unique_indices = aux
    out = object.__new__(BCOO)  # no checks: a transformation may pass placeholders through
    out.data, out.indices = children
    out.shape, out.indices_sorted, out.unique_indices = shape, indices_sorted, unique_indices
    return out


tree_util.register_pytree_node(BCOO, _flatten, _unflatten)


def _colocated(*arrays: Any) -> list[Any]:
    """``arrays`` on one device: concrete host arrays join a device array among them (as
    JAX's arrays all live on the device; funcgrad takes plain host arrays too)."""
    devices = {backend.device_of(a) for a in arrays if not isinstance(a, Tracer)}
    devices.discard(None)
    devices.discard("cpu")
    if not devices:
        return list(arrays)
    (dev,) = devices if len(devices) == 1 else (sorted(devices)[0],)
    return [a if isinstance(a, Tracer) or backend.device_of(a) == dev
            else backend.device_put(a, dev) for a in arrays]


def _in_bounds(x: BCOO) -> Any:
    """Per stored element, whether its coordinates are inside the shape (not padding)."""
    ok = None
    for k, s in enumerate(x.shape):  # Python ints: no host array meets a device one
        col = x.indices[:, k]
        ok = (col >= 0) & (col < s) if ok is None else ok & (col >= 0) & (col < s)
    return fnp.full_like(x.data, True, dtype=bool) if ok is None else ok


def _scatter_add(shape: Sequence[int], coords: Any, values: Any) -> Any:
    """Dense ``shape`` with ``values`` added at ``coords`` ((nse, len(shape)); the rest of
    each value's dims trail), out-of-bounds coordinates dropped."""
    vals = fnp.asarray(values)
    out = fnp.zeros_like(vals, shape=tuple(shape) + tuple(get_aval(vals).shape[1:]))
    index = tuple(coords[:, k] for k in range(len(shape)))
    return fnp.at(out)[index].add(vals, mode="drop")


def _concrete(x: Any, what: str) -> Any:
    if isinstance(x, Tracer):
        raise ConcretizationError(
            f"{what}: the number of stored elements depends on the values, so nse= must be "
            "given when the array is traced (under jit, vmap or grad)")
    return x


def bcoo_fromdense(mat: Any, *, nse: int | None = None, index_dtype: Any = numpy.int32,
                   n_dense: int = 0, n_batch: int = 0) -> BCOO:
    """The BCOO of ``mat``'s non-zero elements, in row-major order; ``nse`` places (padded
    with out-of-bounds coordinates and zeros, as JAX's; required when ``mat`` is traced).

    Example:
        >>> import numpy as np
        >>> bcoo_fromdense(np.array([0.0, 3.0, 0.0]), nse=2).indices.tolist()
        [[1], [3]]
    """
    if n_dense or n_batch:
        raise ValueError("bcoo_fromdense: batch and dense dimensions are not supported by "
                         "funcgrad's BCOO (n_batch = n_dense = 0)")
    mat = fnp.asarray(mat)
    shape = tuple(get_aval(mat).shape)
    if nse is None:
        nse = int(numpy.count_nonzero(to_numpy(_concrete(mat, "BCOO.fromdense"))))
    coords = fnp.nonzero(mat, size=int(nse), fill_value=shape if shape else 0)
    if not shape:  # a 0-d array: one element at the empty coordinate
        indices = fnp.zeros_like(mat, shape=(int(nse), 0), dtype=index_dtype)
        first = fnp.zeros_like(mat, shape=(int(nse),), dtype=bool)
        first = fnp.at(first)[:1].set(mat != 0)
        return BCOO((fnp.where(first, mat, 0), indices), shape=shape)
    indices = fnp.stack([c.astype(index_dtype) for c in coords], axis=1)
    valid = coords[0] < shape[0]
    for c, s in zip(coords[1:], shape[1:]):
        valid = valid & (c < s)
    safe = tuple(fnp.where(valid, c, 0) for c in coords)
    data = fnp.where(valid, mat[safe], 0).astype(mat.dtype)
    return BCOO((data, indices), shape=shape, indices_sorted=True, unique_indices=True)


def bcoo_todense(mat: BCOO) -> Any:
    """The dense array of ``mat`` (repeated coordinates add up; padding is dropped).

    Example:
        >>> import numpy as np
        >>> A = BCOO((np.array([1.0, 2.0]), np.array([[0], [0]])), shape=(2,))
        >>> bcoo_todense(A).tolist()
        [3.0, 0.0]
    """
    return _scatter_add(mat.shape, mat.indices, mat.data)


def todense(arr: Any) -> Any:
    """A BCOO (or a sparse value inside :func:`sparsify`) densified; any other array as it
    is (``jax.experimental.sparse.todense``).

    Example:
        >>> import numpy as np
        >>> todense(np.ones(2)).tolist()
        [1.0, 1.0]
    """
    if type(arr) is SparseTracer:
        return bcoo_todense(arr.mat)
    if isinstance(arr, BCSR):
        return arr.todense()
    return bcoo_todense(arr) if isinstance(arr, BCOO) else arr


def bcoo_reshape(mat: BCOO, *, new_sizes: Sequence[int],
                 dimensions: Sequence[int] | None = None) -> BCOO:
    """``mat``'s elements in the shape ``new_sizes`` (row-major order; one size may be -1;
    ``dimensions``, as ``lax.reshape``'s, permutes the axes first).

    Example:
        >>> import numpy as np
        >>> A = bcoo_fromdense(np.array([[0.0, 1.0], [2.0, 0.0]]))
        >>> bcoo_reshape(A, new_sizes=(4,)).indices.tolist()
        [[1], [2]]
    """
    if dimensions is not None:
        mat = bcoo_transpose(mat, permutation=dimensions)
    sizes = [int(n) for n in new_sizes]
    if sizes.count(-1) > 1:
        raise ValueError(f"bcoo_reshape: at most one size may be -1, got {tuple(sizes)}")
    if -1 in sizes:
        rest = math.prod(n for n in sizes if n != -1)
        sizes[sizes.index(-1)] = mat.size // rest if rest else 0
    if math.prod(sizes) != mat.size:
        raise ValueError(f"bcoo_reshape: cannot reshape {mat.shape} ({mat.size} elements) "
                         f"to {tuple(sizes)}")
    ok = _in_bounds(mat)
    dt = get_aval(mat.indices).dtype
    flat = fnp.zeros_like(mat.indices[:, 0] if mat.ndim else mat.data, dtype=numpy.int64)
    for k, n in enumerate(mat.shape):  # the row-major position of each stored element
        flat = flat * n + mat.indices[:, k].astype(numpy.int64)
    cols = []
    for n in reversed(sizes):
        cols.append(flat % n if n else flat)
        flat = flat // n if n else flat
    cols = cols[::-1]
    # padding stays out of bounds: its coordinates become the new shape
    idx = fnp.stack([fnp.where(ok, c, n).astype(dt) for c, n in zip(cols, sizes)], axis=1) \
        if sizes else fnp.zeros_like(mat.indices, shape=(mat.nse, 0))
    return BCOO((mat.data, idx), shape=sizes, indices_sorted=mat.indices_sorted,
                unique_indices=mat.unique_indices)


def _dense_dot(sp: BCOO, dense: Any, sp_contract: Sequence[int], d_contract: Sequence[int],
               sparse_first: bool) -> Any:
    dense = fnp.asarray(dense)
    d_shape = tuple(get_aval(dense).shape)
    for a, b in zip(sp_contract, d_contract):
        if sp.shape[a] != d_shape[b]:
            raise ValueError(f"bcoo_dot_general: contracting dimensions of sizes "
                             f"{sp.shape[a]} and {d_shape[b]} differ")
    sp_free = [k for k in range(sp.ndim) if k not in sp_contract]
    d_free = [k for k in range(len(d_shape)) if k not in d_contract]
    # Each stored element multiplies the dense slice at its contracted coordinates and adds
    # into the result at its free coordinates.
    moved = fnp.transpose(dense, tuple(d_contract) + tuple(d_free))
    valid = _in_bounds(sp)
    idx = tuple(fnp.where(valid, sp.indices[:, k], 0) for k in sp_contract)
    # fnp.at: ``moved`` may be a NumPy array while the indices are traced (a BCOO closed over
    # by a traced function, as custom_linear_solve does for cg's matvec)
    picked = (fnp.at(moved)[idx].get() if idx else
              fnp.broadcast_to(moved, (sp.nse,) + get_aval(moved).shape))
    data = fnp.where(valid, sp.data, 0).astype(sp.data.dtype)
    # fnp.multiply, not `*`: concrete operands on different devices (a NumPy dense operand
    # beside device data) meet through funcgrad's placement, which a raw operator bypasses
    contrib = fnp.multiply(picked, data.reshape((sp.nse,) + (1,) * len(d_free)))
    free_shape = [sp.shape[k] for k in sp_free]
    out = _scatter_add(free_shape, sp.indices[:, sp_free] if sp_free else
                       fnp.zeros_like(sp.indices, shape=(sp.nse, 0)), contrib)
    if sparse_first:
        return out
    # dense operand first: its free dimensions lead
    n_sp, n_d = len(sp_free), len(d_free)
    return fnp.transpose(out, tuple(range(n_sp, n_sp + n_d)) + tuple(range(n_sp)))


def bcoo_dot_general(lhs: Any, rhs: Any, *, dimension_numbers: Any,
                     preferred_element_type: Any = None) -> Any:
    """``lax.dot_general`` with one BCOO operand and one dense (no batch dimensions): a dense
    result, differentiable in the BCOO's data and the dense operand.

    Example:
        >>> import numpy as np
        >>> A = bcoo_fromdense(np.array([[1.0, 0.0], [0.0, 2.0]]))
        >>> bcoo_dot_general(A, np.ones((2, 3)), dimension_numbers=(((1,), (0,)), ((), ()))
        ...                  ).tolist()
        [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
    """
    (lc, rc), (lb, rb) = dimension_numbers
    if tuple(lb) or tuple(rb):
        raise ValueError("bcoo_dot_general: batch dimensions are not supported")
    if isinstance(lhs, BCOO) and isinstance(rhs, BCOO):
        raise TypeError("bcoo_dot_general: sparse-sparse products are not provided; "
                        "densify one operand")
    if isinstance(lhs, BCOO):
        out = _dense_dot(lhs, rhs, tuple(lc), tuple(rc), True)
    elif isinstance(rhs, BCOO):
        out = _dense_dot(rhs, lhs, tuple(rc), tuple(lc), False)
    else:
        raise TypeError("bcoo_dot_general: one operand must be a BCOO")
    return out if preferred_element_type is None else out.astype(preferred_element_type)


def bcoo_multiply_dense(sp_mat: BCOO, v: Any) -> BCOO:
    """``sp_mat * v`` elementwise (``v`` dense, broadcast to the sparse shape): a BCOO with
    the same coordinates.

    Example:
        >>> import numpy as np
        >>> A = bcoo_fromdense(np.array([[1.0, 0.0], [0.0, 2.0]]))
        >>> bcoo_multiply_dense(A, np.array([10.0, 100.0])).data.tolist()
        [10.0, 200.0]
    """
    full = fnp.broadcast_to(fnp.asarray(v), sp_mat.shape)
    valid = _in_bounds(sp_mat)
    idx = tuple(fnp.where(valid, sp_mat.indices[:, k], 0) for k in range(sp_mat.ndim))
    return sp_mat._with_data(sp_mat.data * fnp.at(full)[idx].get())  # full may be NumPy


def bcoo_multiply_sparse(lhs: BCOO, rhs: BCOO) -> BCOO:
    """Elementwise product of two BCOOs of one shape: stored where both store (a BCOO with
    ``lhs``'s coordinates, each value multiplied by ``rhs``'s value there).

    Example:
        >>> import numpy as np
        >>> A = bcoo_fromdense(np.array([1.0, 0.0, 3.0]))
        >>> B = bcoo_fromdense(np.array([2.0, 5.0, 0.0]))
        >>> bcoo_multiply_sparse(A, B).todense().tolist()
        [2.0, 0.0, 0.0]
    """
    if lhs.shape != rhs.shape:
        raise ValueError(f"bcoo_multiply_sparse: shapes {lhs.shape} and {rhs.shape} differ")
    return bcoo_multiply_dense(lhs, bcoo_todense(rhs))


def bcoo_reduce_sum(mat: BCOO, *, axes: Sequence[int]) -> BCOO:
    """The sum over ``axes``: a BCOO over the other axes (coordinates may repeat).

    Example:
        >>> import numpy as np
        >>> A = bcoo_fromdense(np.array([[1.0, 2.0], [0.0, 3.0]]))
        >>> bcoo_reduce_sum(A, axes=(0,)).todense().tolist()
        [1.0, 5.0]
    """
    axes = tuple(a % mat.ndim for a in axes)
    keep = [k for k in range(mat.ndim) if k not in axes]
    valid = _in_bounds(mat)
    # a padding element stays out of bounds on the kept axes (JAX keeps its coordinates)
    indices = mat.indices[:, keep] if keep else fnp.zeros_like(mat.indices, shape=(mat.nse, 0))
    data = fnp.where(valid, mat.data, 0).astype(mat.data.dtype)
    return BCOO((data, indices), shape=[mat.shape[k] for k in keep])


def bcoo_transpose(mat: BCOO, *, permutation: Sequence[int] | None = None) -> BCOO:
    """The axes of ``mat`` permuted (reversed by default).

    Example:
        >>> import numpy as np
        >>> bcoo_transpose(bcoo_fromdense(np.array([[0.0, 1.0], [0.0, 0.0]]))).indices.tolist()
        [[1, 0]]
    """
    perm = tuple(reversed(range(mat.ndim))) if permutation is None else tuple(
        int(p) % mat.ndim for p in permutation)
    if sorted(perm) != list(range(mat.ndim)):
        raise ValueError(f"bcoo_transpose: {perm} is not a permutation of {mat.ndim} axes")
    return BCOO((mat.data, mat.indices[:, perm] if perm else mat.indices),
                shape=[mat.shape[p] for p in perm], unique_indices=mat.unique_indices)


def bcoo_sort_indices(mat: BCOO) -> BCOO:
    """The stored elements in row-major order of their coordinates.

    Example:
        >>> import numpy as np
        >>> A = BCOO((np.array([1.0, 2.0]), np.array([[1], [0]])), shape=(2,))
        >>> bcoo_sort_indices(A).data.tolist()
        [2.0, 1.0]
    """
    if mat.ndim == 0 or mat.nse == 0:
        return mat
    order = fnp.lexsort(tuple(mat.indices[:, k] for k in reversed(range(mat.ndim))))
    return BCOO((mat.data[order], mat.indices[order]), shape=mat.shape, indices_sorted=True,
                unique_indices=mat.unique_indices)


def bcoo_sum_duplicates(mat: BCOO, nse: int | None = None) -> BCOO:
    """One stored element per coordinate (repeated ones summed, padding dropped), sorted;
    ``nse`` is required when ``mat`` is traced.

    Example:
        >>> import numpy as np
        >>> A = BCOO((np.array([1.0, 2.0, 5.0]), np.array([[1], [0], [1]])), shape=(2,))
        >>> B = bcoo_sum_duplicates(A)
        >>> B.data.tolist(), B.indices.tolist()
        ([2.0, 6.0], [[0], [1]])
    """
    dense_shape = mat.shape
    size = math.prod(dense_shape)  # the key of padding (1 for a 0-d array)
    valid = _in_bounds(mat)
    if mat.ndim:
        flat = fnp.ravel_multi_index(tuple(mat.indices[:, k] for k in range(mat.ndim)),
                                     dense_shape, mode="clip")
    else:
        flat = fnp.zeros_like(mat.indices, shape=(mat.nse,))
    keys = fnp.where(valid, flat, size)
    if nse is None:
        k = numpy.asarray(to_numpy(_concrete(keys, "bcoo_sum_duplicates")))
        nse = int(numpy.unique(k[k < size]).size)
    uniq = fnp.unique(keys, size=int(nse), fill_value=size)
    pos = fnp.searchsorted(uniq, keys)
    data = fnp.zeros_like(mat.data, shape=(int(nse),))
    data = fnp.at(data)[pos].add(fnp.where(valid, mat.data, 0), mode="drop")
    if mat.ndim:
        coords = fnp.unravel_index(fnp.minimum(uniq, size - 1), dense_shape)
        indices = fnp.stack([fnp.where(uniq < size, c, s) for c, s in zip(coords, dense_shape)],
                            axis=1).astype(mat.indices.dtype)
    else:
        indices = fnp.zeros_like(mat.indices, shape=(int(nse), 0))
    return BCOO((data, indices), shape=dense_shape, indices_sorted=True, unique_indices=True)


def bcoo_extract(sparr: BCOO, arr: Any) -> BCOO:
    """The values of dense ``arr`` at ``sparr``'s coordinates, as a BCOO with them.

    Example:
        >>> import numpy as np
        >>> A = bcoo_fromdense(np.array([0.0, 1.0, 1.0]))
        >>> bcoo_extract(A, np.array([7.0, 8.0, 9.0])).data.tolist()
        [8.0, 9.0]
    """
    ones = sparr._with_data(fnp.ones_like(sparr.data))
    return bcoo_multiply_dense(ones, arr)


def bcoo_concatenate_entries(a: BCOO, b: BCOO) -> BCOO:
    """``a + b`` of one shape: the stored elements of both."""
    ad, bd, ai, bi = _colocated(a.data, b.data.astype(a.data.dtype), a.indices,
                                b.indices.astype(a.indices.dtype))
    return BCOO((fnp.concatenate([ad, bd]), fnp.concatenate([ai, bi])), shape=a.shape)


def bcoo_concatenate(operands: Sequence[BCOO], *, dimension: int) -> BCOO:
    """BCOOs joined along ``dimension`` (``lax.concatenate`` for sparse arrays).

    Example:
        >>> import numpy as np
        >>> A = bcoo_fromdense(np.array([1.0, 0.0]))
        >>> bcoo_concatenate([A, A], dimension=0).todense().tolist()
        [1.0, 0.0, 1.0, 0.0]
    """
    ops = list(operands)
    if not ops:
        raise ValueError("bcoo_concatenate: at least one operand")
    dim = dimension % ops[0].ndim
    offset, datas, idxs = 0, [], []
    for op in ops:
        valid = _in_bounds(op)
        cols = [op.indices[:, k] + offset if k == dim else op.indices[:, k]
                for k in range(op.ndim)]
        # padding stays out of bounds of the joined shape
        big = int(numpy.iinfo(numpy.dtype(op.indices.dtype)).max)
        idxs.append(fnp.where(valid[:, None], fnp.stack(cols, axis=1), big).astype(
            op.indices.dtype))
        datas.append(op.data)
        offset += op.shape[dim]
    shape = list(ops[0].shape)
    shape[dim] = offset
    both = _colocated(*datas, *idxs)
    return BCOO((fnp.concatenate(both[:len(ops)]), fnp.concatenate(both[len(ops):])),
                shape=shape)


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None,
        index_dtype: Any = numpy.int32) -> BCOO:
    """The sparse identity (ones on diagonal ``k``), as ``jax.experimental.sparse.eye``.

    Example:
        >>> eye(3).indices.tolist()
        [[0, 0], [1, 1], [2, 2]]
    """
    M = N if M is None else M
    rows = numpy.arange(max(0, -k), min(N, M - k))
    indices = numpy.stack([rows, rows + k], axis=1).astype(index_dtype).reshape(-1, 2)
    data = fnp.ones(len(rows), dtype=dtype if dtype is not None else fnp.float64)
    return BCOO((data, backend.device_put(indices)), shape=(N, M), indices_sorted=True,
                unique_indices=True)


def empty(shape: Sequence[int], dtype: Any = None, index_dtype: Any = numpy.int32) -> BCOO:
    """An all-zero BCOO storing nothing.

    Example:
        >>> empty((2, 3)).todense().tolist()
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    """
    shape = tuple(int(s) for s in shape)
    return BCOO((fnp.zeros((0,), dtype=dtype if dtype is not None else fnp.float64),
                 fnp.zeros((0, len(shape)), dtype=index_dtype)), shape=shape,
                indices_sorted=True, unique_indices=True)


def random_bcoo(key: Any, shape: Sequence[int], *, dtype: Any = None,
                nse: float | int = 0.2, generator: Any = None,
                index_dtype: Any = numpy.int32, **kwds: Any) -> BCOO:
    """A BCOO of ``shape`` with ``nse`` stored elements at distinct random coordinates (a
    fraction of the size when a float below 1) and values from ``generator(key, shape,
    dtype)`` (default ``random.uniform``), as ``jax.experimental.sparse.random_bcoo``.

    Example:
        >>> import funcgrad
        >>> random_bcoo(funcgrad.random.key(0), (4, 5), nse=3).nse
        3
    """
    shape = tuple(int(s) for s in shape)
    size = math.prod(shape)
    n = int(nse * size) if isinstance(nse, float) and nse < 1 else int(nse)
    if not 0 <= n <= size:
        raise ValueError(f"random_bcoo: nse={nse} for an array of size {size}")
    k_idx, k_val = _random.split(key)
    flat = _random.choice(k_idx, size, (n,), replace=False)
    coords = fnp.unravel_index(flat, shape) if shape else ()
    indices = fnp.stack([c.astype(index_dtype) for c in coords], axis=1) if shape else \
        fnp.zeros((n, 0), dtype=index_dtype)
    gen = generator if generator is not None else _random.uniform
    data = gen(k_val, (n,), dtype if dtype is not None else fnp.float64, **kwds)
    return bcoo_sort_indices(BCOO((data, indices), shape=shape, unique_indices=True))


# ---------------------------------------------------------------------------------------------
# sparsify: funcgrad.numpy code run on BCOO arguments


class SparseTracer(Tracer):
    """A BCOO inside :func:`sparsify`: it looks like the dense array it stands for (shape,
    dtype), so ``funcgrad.numpy`` code runs on it, and each operation it meets takes its
    sparse rule (:data:`sparse_rules`)."""

    __slots__ = ("mat",)

    def __init__(self, trace: SparsifyTrace, mat: BCOO) -> None:
        self._trace = trace
        self.mat = mat

    @property
    def aval(self) -> Any:
        return ShapedArray(self.mat.shape, self.mat.dtype)


#: primitive -> rule(*operands, **params) -> list of results; an operand is a BCOO (a sparse
#: argument) or a dense array, a result a BCOO or a dense array
sparse_rules: dict[Primitive, Callable[..., list[Any]]] = {}


class SparsifyTrace(Trace):
    """Runs each operation on sparse operands by its rule in :data:`sparse_rules`, with the
    parent trace current (so ``jit``/``grad``/``vmap`` around it see the rule's operations)."""

    __slots__ = ()
    user_name = "sparsify"

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict) -> list:
        sparse = False
        ops: list[Any] = []
        for x in args:
            if type(x) is SparseTracer and x._trace is self:
                ops.append(x.mat)
                sparse = True
            else:
                ops.append(x)
        token = _trace_var.set(self.parent)  # type: ignore[arg-type]
        try:
            if not sparse:
                return bind(prim, *ops, **params)
            rule = sparse_rules.get(prim)
            if rule is None:
                raise TypeError(
                    f"sparsify: '{prim.name}' has no sparse rule (sparse operands support "
                    f"{', '.join(sorted(p.name for p in sparse_rules))}); densify the "
                    "operand first with sparse.todense(x)")
            outs = rule(*ops, **params)
        finally:
            _trace_var.reset(token)
        return [SparseTracer(self, o) if isinstance(o, BCOO) else o for o in outs]


def sparsify(f: Callable[..., Any], use_tracer: bool = False) -> Callable[..., Any]:
    """``f`` taking BCOO arguments wherever it takes arrays (``jax.experimental.sparse
    .sparsify``): ``funcgrad.numpy`` code (``@``, ``dot``, ``*``, ``+``, ``.T``, ``sum``,
    ``astype``...) runs on them by sparse rules, a product with a dense array giving a dense
    array; an operation without a sparse rule is an error naming it.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> A = BCOO.fromdense(np.array([[0.0, 2.0], [1.0, 0.0]]))
        >>> sparsify(lambda m, v: fnp.dot(m, v) + 1.0)(A, np.array([1.0, 1.0])).tolist()
        [3.0, 2.0]
    """
    @functools.wraps(f)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        trace = SparsifyTrace(current_trace())
        is_bcoo = lambda x: isinstance(x, BCOO)  # noqa: E731
        leaves, tree = tree_util.tree_flatten((args, kwargs), is_leaf=is_bcoo)
        leaves = [SparseTracer(trace, x) if isinstance(x, BCOO) else x for x in leaves]
        a, kw = tree.unflatten(leaves)
        with set_current_trace(trace):
            out = f(*a, **kw)
        return tree_util.tree_map(
            lambda o: o.mat if type(o) is SparseTracer and o._trace is trace else o, out)

    return wrapped


def _dot_general_rule(lhs: Any, rhs: Any, *, dimension_numbers: Any) -> list[Any]:
    return [bcoo_dot_general(lhs, rhs, dimension_numbers=dimension_numbers)]


def _mul_rule(a: Any, b: Any) -> list[Any]:
    if isinstance(a, BCOO) and isinstance(b, BCOO):
        return [bcoo_multiply_sparse(a, b)]
    sp, other = (a, b) if isinstance(a, BCOO) else (b, a)
    if fnp.ndim(other) == 0:
        return [sp._with_data(sp.data * other)]
    return [bcoo_multiply_dense(sp, other)]


def _div_rule(a: Any, b: Any) -> list[Any]:
    if not isinstance(a, BCOO) or isinstance(b, BCOO) or fnp.ndim(b) != 0:
        raise TypeError("sparsify: division keeps an array sparse only as sparse / scalar")
    return [a._with_data(a.data / b)]


def _add_rule(a: Any, b: Any) -> list[Any]:
    return [a + b if isinstance(a, BCOO) else b + a]


def _sub_rule(a: Any, b: Any) -> list[Any]:
    return [a - b if isinstance(a, BCOO) else (-b) + a]


def _reduce_sum_rule(x: BCOO, *, axes: Sequence[int]) -> list[Any]:
    if len(axes) == x.ndim:
        return [x.sum()]
    return [bcoo_reduce_sum(x, axes=axes)]


def _convert_rule(x: BCOO, **params: Any) -> list[Any]:
    return [x._with_data(bind1(_ew.convert_element_type_p, x.data, **params))]


sparse_rules.update({
    _linalg.dot_general_p: _dot_general_rule,
    _ew.mul_p: _mul_rule,
    _ew.div_p: _div_rule,
    _ew.add_p: _add_rule,
    _ew.sub_p: _sub_rule,
    _ew.neg_p: lambda x: [-x],
    _shape.transpose_p: lambda x, *, permutation: [bcoo_transpose(x, permutation=permutation)],
    _red.reduce_sum_p: _reduce_sum_rule,
    _ew.convert_element_type_p: _convert_rule,
})


# ---------------------------------------------------------------------------------------------
# BCSR: compressed sparse rows


class BCSR:
    """A sparse matrix in compressed-row form (``jax.experimental.sparse.BCSR``): row ``r``
    stores ``data[indptr[r]:indptr[r + 1]]`` in the columns ``indices[...]`` of the same
    places; places from ``indptr[-1]`` on are padding (column = the number of columns, value
    0, as JAX's). Build it as ``BCSR((data, indices, indptr), shape=shape)``, with
    :meth:`fromdense` or :meth:`from_bcoo`. A pytree of ``(data, indices, indptr)``: it goes
    through ``jit``, ``grad`` (in ``data``) and ``vmap`` as BCOO does; products with dense
    arrays are computed through :meth:`to_bcoo`.

    Example:
        >>> import numpy as np
        >>> A = BCSR.fromdense(np.array([[0.0, 1.0], [2.0, 3.0]]))
        >>> A.indptr.tolist(), A.indices.tolist(), (A @ np.ones(2)).tolist()
        ([0, 1, 3], [1, 0, 1], [1.0, 5.0])
    """

    __array_ufunc__ = None  # NumPy and CuPy arrays defer to A.__rmatmul__, as for BCOO
    __array_priority__ = 101

    def __init__(self, args: tuple[Any, Any, Any], *, shape: Sequence[int],
                 indices_sorted: bool = False, unique_indices: bool = False) -> None:
        data, indices, indptr = _colocated(*(fnp.asarray(a) for a in args))
        shape = tuple(int(n) for n in shape)
        if len(shape) != 2:
            raise ValueError(f"BCSR: a matrix (2-D shape) is expected, got shape {shape} "
                             "(batch and dense dimensions are not supported)")
        d, i, p = get_aval(data), get_aval(indices), get_aval(indptr)
        if d.ndim != 1 or i.shape != d.shape:
            raise ValueError(f"BCSR: data and indices must both have shape (nse,), got "
                             f"{d.shape} and {i.shape}")
        if p.shape != (shape[0] + 1,):
            raise ValueError(f"BCSR: indptr must have shape (rows + 1,) = ({shape[0] + 1},), "
                             f"got {p.shape}")
        if i.dtype.kind not in "iu" or p.dtype.kind not in "iu":
            raise TypeError(f"BCSR: indices and indptr must be integers, got {i.dtype} and "
                            f"{p.dtype}")
        self.data, self.indices, self.indptr = data, indices, indptr
        self.shape = shape
        self.indices_sorted = bool(indices_sorted)
        self.unique_indices = bool(unique_indices)

    dtype = property(lambda self: get_aval(self.data).dtype)
    ndim = property(lambda self: 2)
    size = property(lambda self: math.prod(self.shape))
    nse = property(lambda self: get_aval(self.data).shape[0])
    n_batch = property(lambda self: 0)
    n_dense = property(lambda self: 0)
    n_sparse = property(lambda self: 2)
    T = property(lambda self: self.transpose())

    def __repr__(self) -> str:
        return f"BCSR({self.dtype}[{self.shape[0]}, {self.shape[1]}], nse={self.nse})"

    def __len__(self) -> int:
        return self.shape[0]

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = numpy.int32,
                  n_dense: int = 0, n_batch: int = 0) -> BCSR:
        """The non-zero elements of the matrix ``mat``, row by row (``nse`` places, padded
        as JAX's; required under ``jit``)."""
        return bcsr_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                              n_batch=n_batch)

    @classmethod
    def from_bcoo(cls, arr: BCOO) -> BCSR:
        """The BCSR of a 2-D BCOO (its elements sorted row-major; padding kept last)."""
        if not isinstance(arr, BCOO) or arr.ndim != 2:
            raise TypeError("BCSR.from_bcoo: a 2-D BCOO is expected, got "
                            f"{type(arr).__name__}{getattr(arr, 'shape', '')}")
        arr = bcoo_sort_indices(arr)
        rows = arr.indices[:, 0]
        # indptr[r]: the stored elements in rows before r (padding, at row = rows, comes last)
        bounds = fnp.arange(arr.shape[0] + 1, dtype=get_aval(rows).dtype)
        if backend.device_of(rows) not in (None, "cpu"):
            bounds = backend.device_put(bounds, backend.device_of(rows))
        indptr = fnp.searchsorted(rows, bounds, side="left").astype(get_aval(rows).dtype)
        return cls((arr.data, arr.indices[:, 1], indptr), shape=arr.shape,
                   indices_sorted=True, unique_indices=arr.unique_indices)

    @classmethod
    def from_scipy_sparse(cls, mat: Any, *, index_dtype: Any = numpy.int32) -> BCSR:
        """A BCSR of a ``scipy.sparse`` matrix (its CSR arrays)."""
        csr = mat.tocsr()
        return cls((fnp.asarray(csr.data), fnp.asarray(csr.indices.astype(index_dtype)),
                    fnp.asarray(csr.indptr.astype(index_dtype))), shape=csr.shape)

    def _rows(self) -> Any:
        """The row of every stored place (``rows`` for padding past ``indptr[-1]``)."""
        pos = fnp.arange(self.nse, dtype=get_aval(self.indptr).dtype)
        if backend.device_of(self.indptr) not in (None, "cpu"):
            pos = backend.device_put(pos, backend.device_of(self.indptr))
        return (fnp.searchsorted(self.indptr, pos, side="right") - 1).astype(
            get_aval(self.indices).dtype)

    def to_bcoo(self) -> BCOO:
        """The same matrix as a BCOO (coordinates ``(row, column)``)."""
        rows = self._rows()
        cols = fnp.where(rows < self.shape[0], self.indices, self.shape[1])
        return BCOO((self.data, fnp.stack([rows, cols.astype(get_aval(rows).dtype)], axis=1)),
                    shape=self.shape, indices_sorted=self.indices_sorted,
                    unique_indices=self.unique_indices)

    def todense(self) -> Any:
        """The dense matrix (repeated places add up; padding is dropped)."""
        return bcoo_todense(self.to_bcoo())

    def block_until_ready(self) -> BCSR:
        return self

    def transpose(self, axes: Sequence[int] | None = None) -> BCSR:
        """The transposed matrix, as a BCSR (its elements re-sorted by column)."""
        return BCSR.from_bcoo(self.to_bcoo().transpose(axes))

    def sum(self, axis: int | Sequence[int] | None = None) -> Any:
        """The sum over ``axis``, as :meth:`BCOO.sum` (a BCOO, or a dense scalar)."""
        return self.to_bcoo().sum(axis)

    def sum_duplicates(self, nse: int | None = None, remove_zeros: bool = True) -> BCSR:
        return BCSR.from_bcoo(self.to_bcoo().sum_duplicates(nse=nse))

    def __matmul__(self, other: Any) -> Any:
        if isinstance(other, BCOO | BCSR):
            raise TypeError("BCSR @ sparse: sparse-sparse products are not provided; "
                            "densify one operand (B.todense())")
        return self.to_bcoo() @ other

    def __rmatmul__(self, other: Any) -> Any:
        return other @ self.to_bcoo()


def _bcsr_flatten(x: BCSR) -> tuple[tuple[Any, Any, Any], tuple]:
    return (x.data, x.indices, x.indptr), (x.shape, x.indices_sorted, x.unique_indices)


def _bcsr_unflatten(aux: tuple, children: Any) -> BCSR:
    out = object.__new__(BCSR)  # no checks: a transformation may pass placeholders through
    out.data, out.indices, out.indptr = children
    out.shape, out.indices_sorted, out.unique_indices = aux
    return out


tree_util.register_pytree_node(BCSR, _bcsr_flatten, _bcsr_unflatten)


def bcsr_fromdense(mat: Any, *, nse: int | None = None, index_dtype: Any = numpy.int32,
                   n_dense: int = 0, n_batch: int = 0) -> BCSR:
    """The BCSR of the matrix ``mat``'s non-zero elements (``nse`` places; required when
    ``mat`` is traced).

    Example:
        >>> import numpy as np
        >>> bcsr_fromdense(np.array([[0.0, 1.0], [0.0, 0.0]]), nse=2).indptr.tolist()
        [0, 1, 1]
    """
    if fnp.ndim(mat) != 2:
        raise ValueError(f"bcsr_fromdense: a matrix (2-D) is expected, got shape "
                         f"{fnp.shape(mat)}")
    return BCSR.from_bcoo(bcoo_fromdense(mat, nse=nse, index_dtype=index_dtype,
                                         n_dense=n_dense, n_batch=n_batch))


def bcsr_todense(mat: BCSR) -> Any:
    """The dense matrix of ``mat``.

    Example:
        >>> import numpy as np
        >>> bcsr_todense(BCSR.fromdense(np.eye(2))).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
    """
    return mat.todense()


# ---------------------------------------------------------------------------------------------
# Sparse-aware differentiation


def _is_sparse(x: Any) -> bool:
    return isinstance(x, BCOO | BCSR)


def _with_data(mat: BCOO | BCSR, data: Any) -> BCOO | BCSR:
    """``mat``'s sparsity pattern holding ``data``."""
    out = object.__new__(type(mat))  # the pattern is ``mat``'s, already checked
    out.__dict__.update(mat.__dict__)
    out.data = data
    return out


def value_and_grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
                   has_aux: bool = False, **kwargs: Any) -> Callable[..., Any]:
    """``jax.experimental.sparse.value_and_grad``: :func:`funcgrad.value_and_grad` where a
    differentiated argument may be (or hold) a BCOO/BCSR: it is differentiated in its
    stored values, and its gradient is a sparse array of the same pattern (JAX's answer),
    dense arguments' gradients as usual.

    Example:
        >>> import numpy as np
        >>> A = BCOO.fromdense(np.array([[0.0, 1.0], [2.0, 0.0]]))
        >>> v, g = value_and_grad(lambda a: (a @ np.array([1.0, 3.0])).sum())(A)
        >>> float(v), type(g).__name__, g.data.tolist()
        (5.0, 'BCOO', [3.0, 1.0])
    """
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    def wrapped(*args: Any, **kw: Any) -> Any:
        args = list(args)
        patterns: dict[int, tuple[Any, list[Any]]] = {}
        for i in nums:  # each differentiated argument: its sparse leaves by their data
            leaves, tree = tree_util.tree_flatten(args[i], is_leaf=_is_sparse)
            if any(_is_sparse(x) for x in leaves):
                patterns[i] = (tree, leaves)
                args[i] = tree_util.tree_unflatten(
                    tree, [x.data if _is_sparse(x) else x for x in leaves])

        def on_data(*a: Any) -> Any:
            a = list(a)
            for i, (tree, leaves) in patterns.items():
                vals = tree.flatten_up_to(a[i])
                a[i] = tree_util.tree_unflatten(tree, [
                    _with_data(x, v) if _is_sparse(x) else v for x, v in zip(leaves, vals)])
            return fun(*a, **kw)

        value, grads = _api.value_and_grad(on_data, argnums, has_aux=has_aux, **kwargs)(*args)

        def resparsify(i: int, g: Any) -> Any:
            if i not in patterns:
                return g
            tree, leaves = patterns[i]
            return tree_util.tree_unflatten(tree, [
                _with_data(x, v) if _is_sparse(x) else v
                for x, v in zip(leaves, tree.flatten_up_to(g))])

        if isinstance(argnums, int):
            grads = resparsify(argnums, grads)
        else:
            grads = tuple(resparsify(i, g) for i, g in zip(nums, grads))
        return value, grads

    return wrapped


def grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
         **kwargs: Any) -> Callable[..., Any]:
    """``jax.experimental.sparse.grad``: :func:`value_and_grad`'s gradients (with the aux
    value when ``has_aux``).

    Example:
        >>> import numpy as np
        >>> A = BCSR.fromdense(np.array([[0.0, 1.0], [2.0, 0.0]]))
        >>> g = grad(lambda a: (a @ np.array([1.0, 3.0])).sum())(A)
        >>> type(g).__name__, g.data.tolist()
        ('BCSR', [3.0, 1.0])
    """
    vg = value_and_grad(fun, argnums, has_aux=has_aux, **kwargs)

    def wrapped(*args: Any, **kw: Any) -> Any:
        value, g = vg(*args, **kw)
        return (g, value[1]) if has_aux else g

    return wrapped
