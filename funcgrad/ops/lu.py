"""LU decomposition with partial pivoting: the primitive behind ``funcgrad.scipy.linalg.lu``.

``lu(a)`` factors each ``(m, n)`` matrix of a stack as LAPACK's ``getrf`` does
(``a[perm] = L @ U`` with ``L`` unit lower triangular ``(m, k)`` and ``U`` upper triangular
``(k, n)``, ``k = min(m, n)``) and returns three arrays, as ``jax.lax.linalg.lu``:

* ``lu``: ``L`` (strictly below the diagonal) and ``U`` (on and above it) packed in one
  ``(..., m, n)`` array;
* ``pivots``: int32 ``(..., k)``, LAPACK's row interchanges (0-based): row ``j`` was swapped
  with row ``pivots[j]`` at step ``j``;
* ``permutation``: int32 ``(..., m)``, the same interchanges as a permutation of the rows.

The pivot of each column is the entry of largest magnitude (``|re| + |im|`` for complex
numbers, LAPACK's ``i?amax``), first one on ties. A zero pivot (a singular matrix) is left in
``U``, as LAPACK does (it reports it in ``info``; no error here).

Derivative (JAX's rule): with ``X = P dA``, ``Y = L^-1 X U^-1``,
``dL = L tril(Y, -1)`` and ``dU = triu(Y) U`` (``L`` padded to ``(m, m)`` and ``U`` to
``(n, n)`` with the identity for non-square matrices). ``U`` must be nonsingular.

Example:
    >>> import numpy as np
    >>> lu_, piv, perm = lu(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> lu_
    array([[3.        , 4.        ],
           [0.33333333, 0.66666667]])
    >>> piv, perm
    (array([1, 1], dtype=int32), array([1, 0], dtype=int32))
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
import funcgrad.ops.shape as _shape
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import get_default_device, xp_for, xp_for_device
from funcgrad.core import bind
from funcgrad.errors import ShapeError
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import Zero, jvp_rules
from funcgrad.ops._batching_util import moveaxis_to_front
from funcgrad.ops._util import make_primitive
from funcgrad.ops.linalg import dot_general
from funcgrad.ops.linalg_decomp import linalg_dtype, lu_factor_packed, triangular_solve

__all__ = ["lu", "lu_p"]


def _lu_abstract(a: ShapedArray) -> list[ShapedArray]:
    if a.ndim < 2:
        raise ShapeError(f"lu: expected a (stack of) matrices, got shape {a.shape}")
    dt = linalg_dtype("lu", a)
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    i32 = numpy.dtype(numpy.int32)
    return [ShapedArray(a.shape, dt, False, a.device),
            ShapedArray(batch + (min(m, n),), i32, False, a.device),
            ShapedArray(batch + (m,), i32, False, a.device)]


def _lu_impl(a: Any) -> list[Any]:
    return list(lu_factor_packed(xp_for(a), a))


lu_p = make_primitive("lu", _lu_impl, _lu_abstract, multiple_results=True)


def lu(a: Any) -> tuple[Any, Any, Any]:
    """``(lu, pivots, permutation)`` of each matrix of ``a`` (see the module docstring).

    Example:
        >>> import numpy as np
        >>> lu(np.array([[2.0, 1.0], [4.0, 1.0]]))[2]
        array([1, 0], dtype=int32)
    """
    out = bind(lu_p, a)
    return out[0], out[1], out[2]


def _mm(a: Any, b: Any) -> Any:
    nd = get_aval(a).ndim
    batch = tuple(range(nd - 2))
    return dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)))


def _mT(x: Any) -> Any:
    nd = get_aval(x).ndim
    return _shape.swapaxes(x, nd - 2, nd - 1)


def _const_like(x: Any, host: numpy.ndarray) -> Any:
    """``host`` in ``x``'s dtype on ``x``'s device (it broadcasts over the batch axes)."""
    aval = get_aval(x)
    return xp_for_device(aval.device or get_default_device()).asarray(host.astype(aval.dtype))


def _lu_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    lu_, piv, perm = lu(a)
    outs = [lu_, piv, perm]
    if type(da) is Zero:
        return outs, [Zero.from_primal(o) for o in outs]
    aval = get_aval(a)
    nd = aval.ndim
    m, n = aval.shape[-2:]
    k = min(m, n)
    dt = aval.dtype
    # P dA: row i is row perm[i] of dA, as a one-hot matrix product.
    cols = _const_like(_ew.convert_element_type(perm, numpy.int32), numpy.arange(m))
    onehot = _ew.convert_element_type(_ew.eq(_shape.expand_dims(perm, (nd - 1,)), cols), dt)
    x = _mm(onehot, da)
    # L padded to (m, m) and U to (n, n) with the identity.
    low = _ew.mul(_shape.slice_in_dim(lu_, 0, k, axis=nd - 1), _const_like(lu_, numpy.tri(m, k, -1)))
    if k < m:
        low = _shape.pad(low, _ew.convert_element_type(0, dt),
                         [(0, 0, 0)] * (nd - 1) + [(0, m - k, 0)])
    low = _ew.add(low, _const_like(lu_, numpy.eye(m)))
    up = _ew.mul(_shape.slice_in_dim(lu_, 0, k, axis=nd - 2),
                 _const_like(lu_, 1.0 - numpy.tri(k, n, -1)))
    if k < n:
        up = _shape.pad(up, _ew.convert_element_type(0, dt),
                        [(0, 0, 0)] * (nd - 2) + [(0, n - k, 0), (0, 0, 0)])
        extra = numpy.zeros((n, n))
        extra[k:, k:] = numpy.eye(n - k)
        up = _ew.add(up, _const_like(lu_, extra))
    la = triangular_solve(low, x, lower=True, unit_diagonal=True)  # L^-1 P dA
    lau = _mT(triangular_solve(up, _mT(la), lower=False, transpose_a=True))  # ... U^-1
    d_low = _mm(low, _ew.mul(lau, _const_like(lau, numpy.tri(m, n, -1))))
    d_up = _mm(_ew.mul(lau, _const_like(lau, 1.0 - numpy.tri(m, n, -1))), up)
    return outs, [_ew.add(d_low, d_up), Zero.from_primal(piv), Zero.from_primal(perm)]


def _lu_batch(axis_size, vals, dims):
    outs = bind(lu_p, moveaxis_to_front(vals[0], dims[0]))
    return outs, [0, 0, 0]


jvp_rules[lu_p] = _lu_jvp
batching.batch_rules[lu_p] = _lu_batch
