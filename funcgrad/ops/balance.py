"""The matrix balancing primitive behind ``funcgrad.scipy.linalg.matrix_balance``: LAPACK's
``gebal`` (SciPy's), the permutation isolating eigenvalues and the powers-of-2 scaling that
make rows and columns of similar norm before an eigenvalue computation.

NumPy and CuPy have no ``gebal``, so the host runs LAPACK's algorithm (3.11's, step for step:
the same permutations and scalings as SciPy's). The primitive gives only the transformation,
``scale`` (float64, 1 outside the scaled block, as SciPy) and ``perm`` (int64) per matrix;
the balanced matrix is computed from them with array operations by the caller, so it
differentiates (the transformation is piecewise constant in the matrix: its derivative is 0).

Example:
    >>> import numpy as np
    >>> scale, perm = balance(np.array([[1.0, 100.0], [0.01, 1.0]]), permute=True, scale=True)
    >>> scale.tolist(), perm.tolist()
    ([16.0, 0.25], [0, 1])
"""

from __future__ import annotations

from typing import Any

import numpy

from funcgrad.avals import ShapedArray
from funcgrad.backend import device_of, device_put, to_numpy
from funcgrad.core import bind
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import defjvp_zero
from funcgrad.ops._util import check_static, make_primitive
from funcgrad.ops.shape import moveaxis

__all__ = ["balance", "balance_p"]

_SCLFAC = 2.0
_FACTOR = 0.95


def _balance_abstract(a: ShapedArray, *, permute: bool, scale: bool) -> list[ShapedArray]:
    check_static("balance", permute=permute, scale=scale)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"balance: needs a (batch of) square matrices, got {a.str_short()}")
    if a.dtype not in (numpy.float32, numpy.float64, numpy.complex64, numpy.complex128):
        raise DTypeError(f"balance: needs a float or complex operand, got {a.str_short()}")
    return [ShapedArray(a.shape[:-1], numpy.dtype(numpy.float64), False, a.device),
            ShapedArray(a.shape[:-1], numpy.dtype(numpy.int64), False, a.device)]


def _amax(v: numpy.ndarray) -> float:
    """``abs`` of the entry BLAS's ``i?amax`` picks: the largest ``|re| + |im|``."""
    return float(numpy.abs(v[numpy.argmax(numpy.abs(v.real) + numpy.abs(v.imag))]))


def _gebal(a: numpy.ndarray, permute: bool, scale: bool
           ) -> tuple[numpy.ndarray, numpy.ndarray, int, int]:
    """LAPACK 3.11's ``?gebal`` on a copy of one matrix. Its ``SCALE`` array holds both the
    interchanges (outside ``lo..hi``) and the scalings (inside); here they are two arrays:
    ``out`` (the scalings, 1 outside ``lo..hi``: SciPy's ``scaling``) and ``piv`` (the
    0-based interchanges, read outside ``lo..hi`` only), with ``lo``, ``hi`` 0-based and
    inclusive."""
    a = a.copy()
    n = a.shape[0]
    out = numpy.ones(n, numpy.float64)
    piv = numpy.arange(n)
    k, l_ = 0, n - 1
    if n == 0:
        return out, piv, 0, -1
    if permute:
        # Rows isolating an eigenvalue (no off-diagonal nonzero within columns 0..l) go down.
        noconv = True
        while noconv:
            noconv = False
            for i in range(l_, -1, -1):
                # (i <= l_ throughout: l_ drops by at most one per step of i.)
                row = a[i, :l_ + 1]
                if numpy.count_nonzero(row) - (row[i] != 0) == 0:
                    piv[l_] = i
                    if i != l_:
                        a[:l_ + 1, [i, l_]] = a[:l_ + 1, [l_, i]]
                        a[[i, l_], k:] = a[[l_, i], k:]
                    noconv = True
                    if l_ == 0:
                        return out, piv, 0, 0
                    l_ -= 1
        # Columns isolating an eigenvalue (within rows k..l) go left.
        noconv = True
        while noconv:
            noconv = False
            for j in range(k, l_ + 1):
                col = a[k:l_ + 1, j]
                if numpy.count_nonzero(col) - (col[j - k] != 0) == 0:
                    piv[k] = j
                    if j != k:
                        a[:l_ + 1, [j, k]] = a[:l_ + 1, [k, j]]
                        a[[j, k], k:] = a[[k, j], k:]
                    noconv = True
                    k += 1
    if not scale:
        return out, piv, k, l_
    info = numpy.finfo(a.real.dtype)
    sfmin1 = float(info.tiny) / float(info.eps)   # dlamch('S') / dlamch('P')
    sfmax1 = 1.0 / sfmin1
    sfmin2 = sfmin1 * _SCLFAC
    sfmax2 = 1.0 / sfmin2
    noconv = True
    while noconv:
        noconv = False
        for i in range(k, l_ + 1):
            c = float(numpy.linalg.norm(a[k:l_ + 1, i]))
            r = float(numpy.linalg.norm(a[i, k:l_ + 1]))
            ca, ra = _amax(a[:l_ + 1, i]), _amax(a[i, k:])
            if c == 0.0 or r == 0.0:
                continue
            if numpy.isnan(c + ca + r + ra):
                raise ValueError("matrix_balance: the matrix holds NaN (LAPACK's gebal "
                                 "returns INFO = -3)")
            g, f, s = r / _SCLFAC, 1.0, c + r
            while c < g and max(f, c, ca) < sfmax2 and min(r, g, ra) > sfmin2:
                f *= _SCLFAC
                c *= _SCLFAC
                ca *= _SCLFAC
                r /= _SCLFAC
                g /= _SCLFAC
                ra /= _SCLFAC
            g = c / _SCLFAC
            while g >= r and max(r, ra) < sfmax2 and min(f, c, g, ca) > sfmin2:
                f /= _SCLFAC
                c /= _SCLFAC
                g /= _SCLFAC
                ca /= _SCLFAC
                r *= _SCLFAC
                ra *= _SCLFAC
            if c + r >= _FACTOR * s:
                continue
            if f < 1.0 and out[i] < 1.0 and f * out[i] <= sfmin1:
                continue
            if f > 1.0 and out[i] > 1.0 and out[i] >= sfmax1 / f:
                continue
            out[i] *= f
            noconv = True
            a[i, k:] *= 1.0 / f
            a[:l_ + 1, i] *= f
    return out, piv, k, l_


def _scale_and_perm(a: numpy.ndarray, permute: bool, scale: bool
                    ) -> tuple[numpy.ndarray, numpy.ndarray]:
    """SciPy's ``matrix_balance(..., separate=True)`` transformation of one matrix: gebal's
    interchanges (the last ones first, then the first ones) replayed on ``arange(n)``."""
    n = a.shape[0]
    scaling, idx, lo, hi = _gebal(a, permute, scale)
    perm = numpy.arange(n)
    for ind, x in enumerate(idx[hi + 1:][::-1], 1):
        if n - ind != x:
            perm[[x, n - ind]] = perm[[n - ind, x]]
    for ind, x in enumerate(idx[:lo]):
        if ind != x:
            perm[[x, ind]] = perm[[ind, x]]
    return scaling, perm


def _balance_on_host(host: numpy.ndarray, permute: bool, scale: bool
                     ) -> tuple[numpy.ndarray, numpy.ndarray]:
    """``(scale, perm)`` of each matrix of the NumPy array ``host``."""
    scales = numpy.ones(host.shape[:-1], numpy.float64)
    perms = numpy.empty(host.shape[:-1], numpy.int64)
    for idx in numpy.ndindex(host.shape[:-2]):
        scales[idx], perms[idx] = _scale_and_perm(host[idx], permute, scale)
    return scales, perms


def _balance_impl(a: Any, *, permute: bool, scale: bool) -> list[Any]:
    # An iteration whose steps depend on the values: the host runs it (NumPy and CuPy have no
    # gebal), and the results go back to the matrix's device, as schur's do.
    scales, perms = _balance_on_host(to_numpy(a), permute, scale)
    device = device_of(a)
    return [device_put(scales, device), device_put(perms, device)]


balance_p = make_primitive("balance", _balance_impl, _balance_abstract, multiple_results=True)


def balance(a: Any, *, permute: bool = True, scale: bool = True) -> tuple[Any, Any]:
    """``(scale, perm)`` of LAPACK's balancing of each square matrix of ``a`` (SciPy's
    ``matrix_balance(a, permute, scale, separate=True)[1]``): ``scale`` float64, ``perm``
    int64, both of shape ``a.shape[:-1]``. The balanced matrix is
    ``a[perm][:, perm] * (scale[:, None] ** -1 * scale[None, :])`` with ``scale`` taken
    in ``perm``'s order.

    Example:
        >>> import numpy as np
        >>> balance(np.array([[1.0, 0.0], [3.0, 2.0]]))[1].tolist()   # row 0 isolates 1.0
        [1, 0]
    """
    return tuple(bind(balance_p, a, permute=permute, scale=scale))


def _balance_batch(axis_size, vals, dims, *, permute, scale):
    (a,), (d,) = vals, dims
    if d != 0:  # the impl maps over leading axes
        a = moveaxis(a, d, 0)
    return list(balance(a, permute=permute, scale=scale)), [0, 0]


batching.batch_rules[balance_p] = _balance_batch
# Piecewise constant in the matrix: its derivative is 0 wherever it is defined.
defjvp_zero(balance_p)
