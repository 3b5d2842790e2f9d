"""banded_solve_p: ``a x = b`` for a band matrix ``a`` in LAPACK's band storage, by Gaussian
elimination with partial pivoting on the band (LAPACK's ``?gbsv``: ``O(n (l + u) l)`` time and
``O(n (l + u))`` memory instead of a dense solve's ``O(n^3)`` and ``O(n^2)``), behind
``scipy.linalg.solve_banded`` and ``lax.linalg.tridiagonal_solve``.

NumPy and CuPy have no banded solver, so the host runs the elimination: one step per column
over a sliding ``(l + 1, l + u + 1)`` window, vectorized over the batch and the right-hand
sides (results go back to the operands' device, as ``ldl``'s do). A zero pivot (a singular
matrix) gives inf/NaN, as ``solve``'s. The solution is linear in ``b`` (the transpose solves
with ``a^T``, the ``transpose_a`` param) and ``dx = a^-1 (db - da x)``, so derivatives of
any order, ``jit`` and ``vmap`` work.

Example:
    >>> import numpy as np
    >>> ab = np.array([[0.0, 1.0, 1.0], [4.0, 4.0, 4.0], [1.0, 1.0, 0.0]])   # l = u = 1
    >>> banded_solve(ab, np.array([[5.0], [6.0], [5.0]]), lower=1, upper=1)
    array([[1.],
           [1.],
           [1.]])
"""

from __future__ import annotations

import math
from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import device_of, device_put, to_numpy
from funcgrad.core import bind1
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import Zero, jvp_rules
from funcgrad.interpreters.transpose import deftranspose, is_undefined
from funcgrad.ops._batching_util import all_bdims_at_front
from funcgrad.ops._util import check_static, make_primitive, result_device
from funcgrad.ops.shape import pad, slice_in_dim, swapaxes

__all__ = ["banded_solve", "banded_solve_p", "band_matvec"]

_DTYPES = frozenset(numpy.dtype(d) for d in ("float32", "float64", "complex64", "complex128"))


def _abstract(ab: ShapedArray, b: ShapedArray, *, lower: int, upper: int,
              transpose_a: bool, perturb: bool) -> list[ShapedArray]:
    check_static("banded_solve", lower=lower, upper=upper, transpose_a=transpose_a,
                 perturb=perturb)
    if ab.ndim < 2 or b.ndim < 2:
        raise ShapeError(f"banded_solve: needs ab (..., l + u + 1, n) and b (..., n, k), got "
                         f"{ab.str_short()} and {b.str_short()}")
    if lower < 0 or upper < 0 or ab.shape[-2] != lower + upper + 1:
        raise ShapeError(f"banded_solve: ab {ab.str_short()} must have l + u + 1 = "
                         f"{lower + upper + 1} rows (lower={lower}, upper={upper})")
    if b.shape[-2] != ab.shape[-1] or b.shape[:-2] != ab.shape[:-2]:
        raise ShapeError(f"banded_solve: b {b.str_short()} does not fit ab {ab.str_short()} "
                         "((..., n, k) with the same batch axes)")
    if ab.dtype != b.dtype or ab.dtype not in _DTYPES:
        raise DTypeError(f"banded_solve: ab and b must have one float or complex dtype, got "
                         f"{ab.str_short()} and {b.str_short()}")
    return [ShapedArray(b.shape, b.dtype, False, result_device("banded_solve", ab, b))]


def _transposed_band(ab: numpy.ndarray, lower: int, upper: int) -> numpy.ndarray:
    """The band storage of ``a^T`` (``upper`` lower and ``lower`` upper diagonals):
    ``a^T[i, j] = a[j, i]`` puts row ``s`` of it at row ``l + u - s`` of ``ab``, shifted by
    ``s - l`` columns."""
    w, n = ab.shape[-2:]
    out = numpy.zeros_like(ab)
    for s in range(w):
        shift = s - lower
        src = ab[..., lower + upper - s, :]
        if abs(shift) >= n:
            continue
        if shift >= 0:
            out[..., s, :n - shift] = src[..., shift:]
        else:
            out[..., s, -shift:] = src[..., :n + shift]
    return out


def _div(x: Any, y: Any) -> Any:
    """``x / y`` with IEEE results for ``y == 0`` (inf/NaN, as LU's zero pivot gives), where
    Python's division raises."""
    if y:
        return x / y
    with numpy.errstate(all="ignore"):
        return (numpy.complex128(x) if isinstance(x, complex) or isinstance(y, complex)
                else numpy.float64(x)) / y


def _solve_one(rows: list, rhs: list, n: int, lower: int, upper: int, tiny: Any) -> list:
    """``?gbsv`` on one matrix, in Python numbers (one column per step touches O((l + u) l)
    entries: NumPy calls on arrays this small would cost far more than the arithmetic).
    ``rows[r][t] = a[r, r - l + t]`` (the identity past row ``n``), ``rhs`` padded likewise.
    With ``tiny`` (not None) an exactly zero pivot becomes ``tiny`` with its sign."""
    kv = lower + upper
    zero = [0.0]
    # the active window: rows j..j+l, columns j..j+kv of the partly eliminated matrix
    # act[a][t] = a[a, t] = rows[a][t + l - a]
    act = [rows[a][lower - a:] + [0.0] * (lower - a) for a in range(lower + 1)]
    bact = [list(r) for r in rhs[:lower + 1]]
    up, y = [], []
    for j in range(n):
        if lower:
            mags = [abs(r[0]) for r in act]
            p = mags.index(max(mags))       # the first largest, as LAPACK's i?amax
            if p:
                act[0], act[p] = act[p], act[0]
                bact[0], bact[p] = bact[p], bact[0]
        row0, b0 = act[0], bact[0]
        piv = row0[0]
        if tiny is not None and piv == 0:
            piv = row0[0] = math.copysign(tiny, piv.real if isinstance(piv, complex) else piv)
        nxt, bnxt = [], []
        for a in range(1, lower + 1):
            ra, rb = act[a], bact[a]
            m = _div(ra[0], piv)
            if m:
                nxt.append([x - m * v for x, v in zip(ra[1:], row0[1:])] + zero)
                bnxt.append([x - m * v for x, v in zip(rb, b0)])
            else:
                nxt.append(ra[1:] + zero)
                bnxt.append(rb)
        up.append(row0)
        y.append(b0)
        nxt.append(rows[j + 1 + lower])
        bnxt.append(rhs[j + 1 + lower])
        act, bact = nxt, bnxt
    k = len(rhs[0]) if rhs else 0
    x = [None] * n + [[0.0] * k] * kv
    for j in range(n - 1, -1, -1):
        u_row, acc = up[j], list(y[j])
        for t in range(1, kv + 1):
            c = u_row[t]
            if c:
                xt = x[j + t]
                acc = [v - c * w for v, w in zip(acc, xt)]
        x[j] = [_div(v, u_row[0]) for v in acc]
    return x[:n]


def _solve_host(ab: numpy.ndarray, b: numpy.ndarray, lower: int, upper: int,
                perturb: bool = False) -> numpy.ndarray:
    """``?gbsv`` on stacks: ``ab`` (B, l + u + 1, n), ``b`` (B, n, k) -> x (B, n, k)."""
    nb, _, n = ab.shape
    k = b.shape[-1]
    kv = lower + upper
    dt = numpy.result_type(ab.dtype, b.dtype)
    # rows[:, r, t] = a[r, r - l + t] (row r from column r - l), the identity past row n
    r = numpy.arange(n + lower + 1)[:, None]
    t = numpy.arange(kv + 1)[None, :]
    cols = r - lower + t
    ok = (cols >= 0) & (cols < n) & (r < n)
    rows = numpy.where(ok, ab[:, kv - t, numpy.clip(cols, 0, n - 1)], 0).astype(dt)
    rows[:, n:, lower] = 1
    rhs = numpy.concatenate([b.astype(dt), numpy.zeros((nb, lower + 1, k), dt)], axis=1)
    out = numpy.empty((nb, n, k), dt)
    # JAX's perturb_singular: a zero pivot made eps * max|a| (the smallest normal number for
    # a zero matrix), so a singular system has a large finite solution (inverse iteration)
    info = numpy.finfo(dt)
    with numpy.errstate(all="ignore"):   # a zero pivot: inf/NaN, as solve's
        for i in range(nb):
            scale = float(numpy.abs(rows[i, :n]).max(initial=0.0)) * float(info.eps)
            tiny = (scale or float(info.tiny)) if perturb else None
            out[i] = _solve_one(rows[i].tolist(), rhs[i].tolist(), n, lower, upper, tiny)
    return out


def _on_host(hab: numpy.ndarray, hb: numpy.ndarray, lower: int, upper: int,
             transpose_a: bool, perturb: bool) -> numpy.ndarray:
    """The solution for NumPy operands with any (equal) batch axes."""
    batch, (n, k) = hb.shape[:-2], hb.shape[-2:]
    hab = hab.reshape((-1,) + hab.shape[-2:])
    hb = hb.reshape((-1, n, k))
    if transpose_a:
        hab, lower, upper = _transposed_band(hab, lower, upper), upper, lower
    if n == 0 or k == 0 or hb.shape[0] == 0:
        return numpy.zeros(batch + (n, k), hb.dtype)
    return _solve_host(hab, hb, lower, upper, perturb).reshape(batch + (n, k))


def _impl(ab: Any, b: Any, *, lower: int, upper: int, transpose_a: bool,
          perturb: bool) -> list[Any]:
    # an elimination whose pivots depend on the values: the host runs it (NumPy and CuPy
    # have no banded solver), the result goes back to the operands' device
    x = _on_host(to_numpy(ab), to_numpy(b), lower, upper, transpose_a, perturb)
    return [device_put(x, device_of(b))]


banded_solve_p = make_primitive("banded_solve", _impl, _abstract)


def banded_solve(ab: Any, b: Any, *, lower: int, upper: int, transpose_a: bool = False,
                 perturb: bool = False) -> Any:
    """Solve ``a x = b`` (``a^T x = b`` with ``transpose_a``) for the band matrix stored as
    ``ab[..., u + i - j, j] = a[..., i, j]`` (``l`` = ``lower`` diagonals below the main one,
    ``u`` = ``upper`` above) and ``b`` of shape ``(..., n, k)``, by banded LU with partial
    pivoting. ``perturb`` makes an exactly zero pivot ``eps * max|a|`` (JAX's
    ``perturb_singular``): a large finite solution of a singular system.

    Example:
        >>> import numpy as np
        >>> banded_solve(np.array([[2.0, 4.0]]), np.array([[2.0], [2.0]]), lower=0, upper=0)
        array([[1. ],
               [0.5]])
    """
    return bind1(banded_solve_p, ab, b, lower=int(lower), upper=int(upper),
                 transpose_a=bool(transpose_a), perturb=bool(perturb))


def _shifted(v: Any, s: int) -> Any:
    """``out[..., i, :] = v[..., i - s, :]`` along the second-to-last axis, zeros shifted in."""
    nd, n = get_aval(v).ndim, get_aval(v).shape[-2]
    if s == 0:
        return v
    if abs(s) >= n:
        return _ew.mul(v, 0)
    zero = _ew.convert_element_type(0, get_aval(v).dtype)
    conf = [(0, 0, 0)] * nd
    if s > 0:
        conf[nd - 2] = (s, 0, 0)
        return pad(slice_in_dim(v, 0, n - s, axis=nd - 2), zero, conf)
    conf[nd - 2] = (0, -s, 0)
    return pad(slice_in_dim(v, -s, n, axis=nd - 2), zero, conf)


def band_matvec(ab: Any, x: Any, *, lower: int, upper: int, transpose_a: bool = False) -> Any:
    """``a @ x`` (``a^T @ x`` with ``transpose_a``) for the band matrix ``ab`` (band storage as
    :func:`banded_solve`) and ``x`` ``(..., n, k)``, one shifted product per diagonal.

    Example:
        >>> import numpy as np
        >>> ab = np.array([[0.0, 1.0], [2.0, 2.0]])          # a = [[2, 1], [0, 2]]
        >>> band_matvec(ab, np.array([[1.0], [1.0]]), lower=0, upper=1)
        array([[3.],
               [2.]])
    """
    nd = get_aval(ab).ndim
    out = None
    for d in range(lower + upper + 1):
        # ab[..., d, j] = a[j + d - u, j], as a column (..., n, 1)
        col = swapaxes(slice_in_dim(ab, d, d + 1, axis=nd - 2), nd - 2, nd - 1)
        # a x adds ab[d, j] x[j] to row j + d - u; a^T x adds ab[d, j] x[j + d - u] to row j
        term = (_ew.mul(col, _shifted(x, upper - d)) if transpose_a
                else _shifted(_ew.mul(col, x), d - upper))
        out = term if out is None else _ew.add(out, term)
    return out


def _jvp(primals, tangents, *, lower, upper, transpose_a, perturb):
    ab, b = primals
    dab, db = tangents
    x = banded_solve(ab, b, lower=lower, upper=upper, transpose_a=transpose_a, perturb=perturb)
    rhs = None if type(db) is Zero else db
    if type(dab) is not Zero:
        term = _ew.neg(band_matvec(dab, x, lower=lower, upper=upper, transpose_a=transpose_a))
        rhs = term if rhs is None else _ew.add(rhs, term)
    if rhs is None:
        return [x], [Zero.from_primal(x)]
    return [x], [banded_solve(ab, rhs, lower=lower, upper=upper, transpose_a=transpose_a,
                              perturb=perturb)]


def _transpose(ct, ab, b, *, lower, upper, transpose_a, perturb):
    if is_undefined(ab):
        raise ValueError("banded_solve: transpose with respect to the matrix (not linear)")
    if type(ct) is Zero:
        return [None, Zero(b.aval)]
    # the real pairing has no conjugation: the plain transpose, as solve's
    return [None, banded_solve(ab, ct, lower=lower, upper=upper, transpose_a=not transpose_a,
                               perturb=perturb)]


def _batch(axis_size, vals, dims, **params):
    ab, b = all_bdims_at_front(axis_size, vals, dims)
    return [bind1(banded_solve_p, ab, b, **params)], [0]


jvp_rules[banded_solve_p] = _jvp
deftranspose(banded_solve_p, _transpose)
batching.batch_rules[banded_solve_p] = _batch
