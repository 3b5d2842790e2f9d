"""toeplitz_solve_p: ``t x = b`` for the Toeplitz matrix with first column ``c`` and first row
``[c[0], r[1:]]``, by Levinson recursion (SciPy's ``solve_toeplitz``: ``O(n^2)`` time and
``O(n)`` memory, where a dense solve takes ``O(n^3)`` and ``O(n^2)``).

The host runs the recursion (one step per order, vectorized over the right-hand sides; the
results go back to the operands' device). Where it breaks down (a singular leading principal
minor, where SciPy raises) the matrix is solved densely instead, so every nonsingular matrix
gets its solution. The solution is linear in ``b`` (the transpose solves with ``t^T``, the
Toeplitz matrix of ``[c[0], r[1:]]`` and ``c``) and ``dx = t^-1 (db - dt x)``, with ``dt x``
an FFT product, so derivatives of any order, ``jit`` and ``vmap`` work.

Example:
    >>> import numpy as np
    >>> toeplitz_solve(np.array([2.0, 1.0]), np.array([2.0, 0.0]), np.array([[2.0], [3.0]]))
    array([[1.],
           [1.]])
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
import funcgrad.ops.shape as _shape
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import device_of, device_put, to_numpy
from funcgrad.core import bind1
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import Zero, jvp_rules
from funcgrad.interpreters.transpose import deftranspose, is_undefined
from funcgrad.ops._batching_util import all_bdims_at_front
from funcgrad.ops._util import make_primitive, result_device
from funcgrad.ops.fft import fft

__all__ = ["toeplitz_solve", "toeplitz_solve_p", "toeplitz_matvec"]

_DTYPES = frozenset(numpy.dtype(d) for d in ("float32", "float64", "complex64", "complex128"))


def _abstract(c: ShapedArray, r: ShapedArray, b: ShapedArray) -> list[ShapedArray]:
    if c.ndim < 1 or b.ndim < 2 or r.shape != c.shape or b.shape[:-1] != c.shape:
        raise ShapeError(f"toeplitz_solve: needs c, r (..., n) and b (..., n, k), got "
                         f"{c.str_short()}, {r.str_short()} and {b.str_short()}")
    if len({c.dtype, r.dtype, b.dtype}) != 1 or c.dtype not in _DTYPES:
        raise DTypeError(f"toeplitz_solve: c, r and b must have one float or complex dtype, "
                         f"got {c.str_short()}, {r.str_short()} and {b.str_short()}")
    return [ShapedArray(b.shape, b.dtype, False, result_device("toeplitz_solve", c, r, b))]


def _levinson(c: numpy.ndarray, r: numpy.ndarray, b: numpy.ndarray) -> numpy.ndarray | None:
    """Levinson's recursion for one matrix, or None where it breaks down."""
    n = c.shape[0]
    if c[0] == 0:
        return None
    f = numpy.array([1.0 / c[0]])
    g = f.copy()
    x = b[:1] / c[0]
    for m in range(1, n):
        col = c[m:0:-1]                  # row m of t, left of the diagonal: t[m, i] = c[m - i]
        ef = col @ f
        eb = r[1:m + 1] @ g              # row 0 of t right of the diagonal: t[0, i + 1] = r[i + 1]
        den = 1.0 - ef * eb
        if den == 0:
            return None
        f, g = ((numpy.append(f, 0.0) - ef * numpy.insert(g, 0, 0.0)) / den,
                (numpy.insert(g, 0, 0.0) - eb * numpy.append(f, 0.0)) / den)
        x = numpy.concatenate([x, numpy.zeros_like(x[:1])]) + numpy.outer(g, b[m] - col @ x)
    return x


def _dense(c: numpy.ndarray, r: numpy.ndarray) -> numpy.ndarray:
    n = c.shape[0]
    vals = numpy.concatenate([c[::-1], r[1:]])
    return vals[(n - 1) - numpy.arange(n)[:, None] + numpy.arange(n)[None, :]]


def _on_host(c: numpy.ndarray, r: numpy.ndarray, b: numpy.ndarray) -> numpy.ndarray:
    """The solutions for NumPy operands with any (equal) batch axes."""
    out = numpy.empty(b.shape, b.dtype)
    with numpy.errstate(all="ignore"):
        for idx in numpy.ndindex(b.shape[:-2]):
            if b.shape[-2] == 0:
                continue
            x = _levinson(c[idx], r[idx], b[idx])
            if x is None or not numpy.isfinite(x).all():
                # a singular leading minor (or overflow): the dense LU solve, inf/NaN only
                # for a singular matrix, as solve's
                t = _dense(c[idx], r[idx])
                try:
                    x = numpy.linalg.solve(t, b[idx])
                except numpy.linalg.LinAlgError:
                    x = numpy.full(b[idx].shape, numpy.nan, b.dtype)
            out[idx] = x
    return out


def _impl(c: Any, r: Any, b: Any) -> list[Any]:
    # a recursion on the values: the host runs it, the result goes back to b's device
    x = _on_host(to_numpy(c), to_numpy(r), to_numpy(b))
    return [device_put(x, device_of(b))]


toeplitz_solve_p = make_primitive("toeplitz_solve", _impl, _abstract)


def toeplitz_solve(c: Any, r: Any, b: Any) -> Any:
    """Solve ``t x = b`` for the Toeplitz matrix with first column ``c`` and first row
    ``[c[0], r[1:]]`` (``c``, ``r`` ``(..., n)``, ``b`` ``(..., n, k)``, one dtype).

    Example:
        >>> import numpy as np
        >>> toeplitz_solve(np.array([4.0, 1.0]), np.array([4.0, 1.0]), np.array([[5.0], [5.0]]))
        array([[1.],
               [1.]])
    """
    return bind1(toeplitz_solve_p, c, r, b)


def toeplitz_matvec(c: Any, r: Any, x: Any) -> Any:
    """``t @ x`` for the Toeplitz matrix of ``c`` and ``r`` (as :func:`toeplitz_solve`) and ``x``
    ``(..., n, k)``: the circulant embedding of length ``2 n - 1``, one FFT product.

    Example:
        >>> import numpy as np
        >>> toeplitz_matvec(np.array([1.0, 2.0]), np.array([1.0, 3.0]), np.ones((2, 1)))
        array([[4.],
               [3.]])
    """
    ca = get_aval(c)
    nd, n = ca.ndim, ca.shape[-1]
    size = 2 * n - 1
    cdt = numpy.result_type(ca.dtype, numpy.complex64)
    # circulant first column [c, r[n-1], ..., r[1]]
    tail = _shape.rev(_shape.slice_in_dim(r, 1, n, axis=nd - 1), (nd - 1,))
    col = _ew.convert_element_type(_shape.concatenate([c, tail], nd - 1), cdt)
    xs = _ew.convert_element_type(x, cdt)
    conf = [(0, 0, 0)] * (nd + 1)
    conf[nd - 1] = (0, n - 1, 0)
    xs = _shape.pad(xs, _ew.convert_element_type(0, cdt), conf)
    spec = _ew.mul(_shape.expand_dims(fft(col, "fft", (nd - 1,), (size,)), (nd,)),
                   fft(xs, "fft", (nd - 1,), (size,)))
    y = _shape.slice_in_dim(fft(spec, "ifft", (nd - 1,), (size,)), 0, n, axis=nd - 1)
    return y if ca.dtype.kind == "c" else _ew.convert_element_type(_ew.real(y), ca.dtype)


def _transposed(c: Any, r: Any) -> tuple[Any, Any]:
    """``(c', r')`` of ``t^T``: its first column is ``t``'s first row, ``[c[0], r[1:]]``."""
    nd = get_aval(c).ndim
    first = _shape.slice_in_dim(c, 0, 1, axis=nd - 1)
    rest = _shape.slice_in_dim(r, 1, get_aval(r).shape[-1], axis=nd - 1)
    return _shape.concatenate([first, rest], nd - 1), c


def _jvp(primals, tangents):
    c, r, b = primals
    dc, dr, db = tangents
    x = toeplitz_solve(c, r, b)
    rhs = None if type(db) is Zero else db
    if type(dc) is not Zero or type(dr) is not Zero:
        dc_ = _ew.mul(c, 0) if type(dc) is Zero else dc
        dr_ = _ew.mul(r, 0) if type(dr) is Zero else dr
        term = _ew.neg(toeplitz_matvec(dc_, dr_, x))
        rhs = term if rhs is None else _ew.add(rhs, term)
    if rhs is None:
        return [x], [Zero.from_primal(x)]
    return [x], [toeplitz_solve(c, r, rhs)]


def _transpose(ct, c, r, b):
    if is_undefined(c) or is_undefined(r):
        raise ValueError("toeplitz_solve: transpose with respect to the matrix (not linear)")
    if type(ct) is Zero:
        return [None, None, Zero(b.aval)]
    # the real pairing has no conjugation: the plain transpose, as solve's
    return [None, None, toeplitz_solve(*_transposed(c, r), ct)]


def _batch(axis_size, vals, dims):
    c, r, b = all_bdims_at_front(axis_size, vals, dims)
    return [bind1(toeplitz_solve_p, c, r, b)], [0]


jvp_rules[toeplitz_solve_p] = _jvp
deftranspose(toeplitz_solve_p, _transpose)
batching.batch_rules[toeplitz_solve_p] = _batch
