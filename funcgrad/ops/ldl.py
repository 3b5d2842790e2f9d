"""The LDL^T (Bunch-Kaufman) factorization primitive behind ``funcgrad.scipy.linalg.ldl``:
``a = lu d lu^T`` (``lu d lu^H`` for Hermitian ``a``) with ``d`` block diagonal (1x1 and 2x2
blocks) and ``lu`` a row permutation of a unit triangular matrix, SciPy's three results.

NumPy and CuPy have no ``?sytrf``/``?hetrf``, so the host runs LAPACK's unblocked
Bunch-Kaufman elimination (``?sytf2``/``?hetf2``, which ``?sytrf`` uses for matrices up to
its block size, 64: the same pivots and, up to rounding, the same factors as SciPy's) and
SciPy's unpacking of the compact result. The JVP holds the pivots (a discrete choice, as
``lu``'s): with ``L = lu[perm]`` unit triangular, ``dd`` and ``dL`` come from
``L^-1 dA' L^-T`` split into its block diagonal and its strictly block triangular part times
``d^-1`` (inverted block by block), written with primitives so it nests and transposes.

Example:
    >>> import numpy as np
    >>> lu, d, perm = ldl(np.array([[2.0, -1.0, 3.0], [-1.0, 2.0, 0.0], [3.0, 0.0, 1.0]]),
    ...                   lower=False, hermitian=True)
    >>> d.tolist(), perm.tolist()
    ([[-5.0, 0.0, 0.0], [0.0, 1.5, 0.0], [0.0, 0.0, 2.0]], [2, 1, 0])
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import (
    device_of,
    device_put,
    get_default_device,
    to_numpy,
    xp_for_device,
)
from funcgrad.core import bind
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import Zero, jvp_rules
from funcgrad.ops._util import check_static, make_primitive
from funcgrad.ops.linalg import dot_general
from funcgrad.ops.linalg_decomp import triangular_solve
from funcgrad.ops.reductions import reduce_sum
from funcgrad.ops.shape import expand_dims, moveaxis, pad, slice_in_dim, swapaxes

__all__ = ["ldl", "ldl_p"]

# Bunch and Kaufman's threshold: (1 + sqrt(17)) / 8 bounds the growth of the factors.
_ALPHA = (1.0 + numpy.sqrt(17.0)) / 8.0


def _ldl_abstract(a: ShapedArray, *, lower: bool, hermitian: bool) -> list[ShapedArray]:
    check_static("ldl", lower=lower, hermitian=hermitian)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"ldl: needs a (batch of) square matrices, got {a.str_short()}")
    if a.dtype not in (numpy.float32, numpy.float64, numpy.complex64, numpy.complex128):
        raise DTypeError(f"ldl: needs a float or complex operand, got {a.str_short()}")
    out = ShapedArray(a.shape, a.dtype, False, a.device)
    return [out, out, ShapedArray(a.shape[:-1], numpy.dtype(numpy.int64), False, a.device)]


def _cabs1(v: Any) -> Any:
    """BLAS's ``|re| + |im|``, the magnitude ``i?amax`` and the complex pivot tests use."""
    return numpy.abs(numpy.real(v)) + numpy.abs(numpy.imag(v))


def _sytf2(a: numpy.ndarray, lower: bool, herm: bool) -> tuple[numpy.ndarray, numpy.ndarray]:
    """LAPACK's ``?sytf2`` (``?hetf2`` with ``herm``) on a copy of one matrix, reading and
    writing one triangle: the compact factors and the 1-based ``ipiv`` (negative pairs mark
    2x2 blocks)."""
    a = a.copy()
    n = a.shape[0]
    ipiv = numpy.zeros(n, numpy.int64)
    # The diagonal magnitude tests: the real part for Hermitian matrices, else |re| + |im|.
    dabs = (lambda v: abs(v.real)) if herm else (lambda v: float(_cabs1(v)))
    cj = numpy.conj if herm else (lambda v: v)
    k = n - 1 if not lower else 0
    while (k >= 0) if not lower else (k < n):
        kstep = 1
        absakk = dabs(a[k, k])
        col = a[:k, k] if not lower else a[k + 1:, k]
        if col.size:
            imax = int(numpy.argmax(_cabs1(col))) + (0 if not lower else k + 1)
            colmax = float(_cabs1(a[imax, k]))
        else:
            imax, colmax = k, 0.0
        if max(absakk, colmax) == 0.0 or numpy.isnan(absakk):
            kp = k     # a zero (or NaN) column: LAPACK's INFO > 0, the factorization goes on
            if herm:
                a[k, k] = a[k, k].real
        else:
            if absakk >= _ALPHA * colmax:
                kp = k
            else:
                if not lower:
                    rowmax = float(numpy.max(_cabs1(a[imax, imax + 1:k + 1])))
                    if imax > 0:
                        rowmax = max(rowmax, float(numpy.max(_cabs1(a[:imax, imax]))))
                else:
                    rowmax = float(numpy.max(_cabs1(a[imax, k:imax])))
                    if imax < n - 1:
                        rowmax = max(rowmax, float(numpy.max(_cabs1(a[imax + 1:, imax]))))
                if absakk >= _ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif dabs(a[imax, imax]) >= _ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k - kstep + 1 if not lower else k + kstep - 1
            if kp != kk:
                _interchange(a, k, kk, kp, kstep, lower, herm)
            elif herm:
                a[k, k] = a[k, k].real
                if kstep == 2:
                    nb = k - 1 if not lower else k + 1
                    a[nb, nb] = a[nb, nb].real
            if kstep == 1:
                _update_1x1(a, k, lower, herm)
            else:
                _update_2x2(a, k, lower, herm, cj)
        if kstep == 1:
            ipiv[k] = kp + 1
        else:
            ipiv[k] = ipiv[k - 1 if not lower else k + 1] = -(kp + 1)
        k += -kstep if not lower else kstep
    return a, ipiv


def _interchange(a: numpy.ndarray, k: int, kk: int, kp: int, kstep: int, lower: bool,
                 herm: bool) -> None:
    """Rows and columns ``kk`` and ``kp`` of the active block swapped, in one triangle."""
    cj = numpy.conj if herm else (lambda v: v)
    if not lower:
        a[:kp, [kk, kp]] = a[:kp, [kp, kk]]
        seg_col, seg_row = a[kp + 1:kk, kk].copy(), a[kp, kp + 1:kk].copy()
        a[kp + 1:kk, kk], a[kp, kp + 1:kk] = cj(seg_row), cj(seg_col)
    else:
        a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
        seg_col, seg_row = a[kk + 1:kp, kk].copy(), a[kp, kk + 1:kp].copy()
        a[kk + 1:kp, kk], a[kp, kk + 1:kp] = cj(seg_row), cj(seg_col)
    if herm:
        a[kp, kk] = numpy.conj(a[kp, kk])
        a[kk, kk], a[kp, kp] = a[kp, kp].real, a[kk, kk].real
    else:
        a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
    if kstep == 2:
        if herm:
            a[k, k] = a[k, k].real
        nb = k - 1 if not lower else k + 1
        a[nb, k], a[kp, k] = a[kp, k], a[nb, k]


def _update_1x1(a: numpy.ndarray, k: int, lower: bool, herm: bool) -> None:
    """The rank-1 update of the rest of the active block (``?syr``/``?her``), then ``k``'s
    column scaled into the factor."""
    r1 = 1.0 / (a[k, k].real if herm else a[k, k])
    x = (a[:k, k] if not lower else a[k + 1:, k]).copy()
    if x.size == 0:
        return
    # ?syr: temp = alpha * x(j) (conj for ?her); a(i, j) += x(i) * temp, in one triangle.
    upd = x[:, None] * (-r1 * (numpy.conj(x) if herm else x))[None, :]
    blk = (slice(None, k), slice(None, k)) if not lower else (slice(k + 1, None),) * 2
    tri = numpy.triu if not lower else numpy.tril
    sub = a[blk]
    new = sub + upd
    if herm:
        idx = numpy.arange(x.size)
        new[idx, idx] = sub[idx, idx].real + upd[idx, idx].real
    a[blk] = numpy.where(tri(numpy.ones(sub.shape, bool)), new, sub)
    if not lower:
        a[:k, k] = x * r1
    else:
        a[k + 1:, k] = x * r1


def _update_2x2(a: numpy.ndarray, k: int, lower: bool, herm: bool, cj: Any) -> None:
    """The rank-2 update with a 2x2 pivot block, column by column as LAPACK writes it."""
    if not lower:
        if k <= 1:
            return
        if herm:
            d = float(numpy.hypot(a[k - 1, k].real, a[k - 1, k].imag))
            d22, d11 = a[k - 1, k - 1].real / d, a[k, k].real / d
            tt = 1.0 / (d11 * d22 - 1.0)
            d12 = a[k - 1, k] / d
            d = tt / d
        else:
            d12 = a[k - 1, k]
            d22, d11 = a[k - 1, k - 1] / d12, a[k, k] / d12
            t = 1.0 / (d11 * d22 - 1.0)
            d12 = t / d12
        for j in range(k - 2, -1, -1):
            if herm:
                wkm1 = d * (d11 * a[j, k - 1] - numpy.conj(d12) * a[j, k])
                wk = d * (d22 * a[j, k] - d12 * a[j, k - 1])
            else:
                wkm1 = d12 * (d11 * a[j, k - 1] - a[j, k])
                wk = d12 * (d22 * a[j, k] - a[j, k - 1])
            a[:j + 1, j] = a[:j + 1, j] - a[:j + 1, k] * cj(wk) - a[:j + 1, k - 1] * cj(wkm1)
            a[j, k], a[j, k - 1] = wk, wkm1
            if herm:
                a[j, j] = a[j, j].real
    else:
        n = a.shape[0]
        if k >= n - 2:
            return
        if herm:
            d = float(numpy.hypot(a[k + 1, k].real, a[k + 1, k].imag))
            d11, d22 = a[k + 1, k + 1].real / d, a[k, k].real / d
            tt = 1.0 / (d11 * d22 - 1.0)
            d21 = a[k + 1, k] / d
            d = tt / d
        else:
            d21 = a[k + 1, k]
            d11, d22 = a[k + 1, k + 1] / d21, a[k, k] / d21
            t = 1.0 / (d11 * d22 - 1.0)
            d21 = t / d21
        for j in range(k + 2, n):
            if herm:
                wk = d * (d11 * a[j, k] - d21 * a[j, k + 1])
                wkp1 = d * (d22 * a[j, k + 1] - numpy.conj(d21) * a[j, k])
            else:
                wk = d21 * (d11 * a[j, k] - a[j, k + 1])
                wkp1 = d21 * (d22 * a[j, k + 1] - a[j, k])
            a[j:, j] = a[j:, j] - a[j:, k] * cj(wk) - a[j:, k + 1] * cj(wkp1)
            a[j, k], a[j, k + 1] = wk, wkp1
            if herm:
                a[j, j] = a[j, j].real


def _unpack(ldu: numpy.ndarray, ipiv: numpy.ndarray, lower: bool, herm: bool
            ) -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    """SciPy's ``(lu, d, perm)`` from the compact factorization (its ``_ldl_sanitize_ipiv``,
    ``_ldl_get_d_and_l`` and ``_ldl_construct_tri_factor``)."""
    n = ipiv.size
    swap = numpy.arange(n)
    pivs = numpy.zeros(n, numpy.int64)
    x, y, rs, re, ri = (1, 0, 0, n, 1) if lower else (-1, -1, n - 1, -1, -1)
    skip = False
    for ind in range(rs, re, ri):
        if skip:
            skip = False
            continue
        cur = int(ipiv[ind])
        if cur > 0:
            if cur != ind + 1:
                swap[ind] = swap[cur - 1]
            pivs[ind] = 1
        else:
            if -cur != ind + 2:
                swap[ind + x] = swap[-cur - 1]
            pivs[ind + y] = 2
            skip = True
    d = numpy.diag(numpy.diag(ldu))
    lu = numpy.tril(ldu, -1) if lower else numpy.triu(ldu, 1)
    lu[numpy.arange(n), numpy.arange(n)] = 1
    x, y = (1, 0) if lower else (0, 1)
    blk_i = 0
    for blk in pivs[pivs != 0]:
        if blk == 2:
            off = ldu[blk_i + x, blk_i + y]
            d[blk_i + x, blk_i + y] = off
            d[blk_i + y, blk_i + x] = numpy.conj(off) if herm else off
            lu[blk_i + x, blk_i + y] = 0
        blk_i += int(blk)
    perm = numpy.arange(n)
    rs, re, ri = (n - 1, -1, -1) if lower else (0, n, 1)
    for ind in range(rs, re, ri):
        s_ind = swap[ind]
        if s_ind != ind:
            col_s, col_e = (ind, n) if lower else (0, ind + 1)
            if pivs[ind] == (0 if lower else 2):
                col_s += -1 if lower else 0
                col_e += 0 if lower else 1
            lu[[s_ind, ind], col_s:col_e] = lu[[ind, s_ind], col_s:col_e]
            perm[[s_ind, ind]] = perm[[ind, s_ind]]
    return lu, d, numpy.argsort(perm)


def _ldl_on_host(host: numpy.ndarray, lower: bool, hermitian: bool) -> list[numpy.ndarray]:
    """``[lu, d, perm]`` of each matrix of the NumPy array ``host``."""
    herm = hermitian and host.dtype.kind == "c"
    lus, ds = numpy.zeros_like(host), numpy.zeros_like(host)
    perms = numpy.zeros(host.shape[:-1], numpy.int64)
    for idx in numpy.ndindex(host.shape[:-2]):
        if host.shape[-1]:
            lus[idx], ds[idx], perms[idx] = _unpack(*_sytf2(host[idx], lower, herm), lower,
                                                    herm)
    return [lus, ds, perms]


def _ldl_impl(a: Any, *, lower: bool, hermitian: bool) -> list[Any]:
    # A pivoted elimination whose choices depend on the values: the host runs it (NumPy and
    # CuPy have no ?sytrf), and the results go back to the matrix's device, as schur's do.
    device = device_of(a)
    return [device_put(x, device) for x in _ldl_on_host(to_numpy(a), lower, hermitian)]


ldl_p = make_primitive("ldl", _ldl_impl, _ldl_abstract, multiple_results=True)


def ldl(a: Any, *, lower: bool = True, hermitian: bool = True) -> tuple[Any, Any, Any]:
    """``(lu, d, perm)`` of the Bunch-Kaufman factorization of each square matrix of ``a``,
    reading its lower (``lower=True``) or upper triangle: SciPy's ``ldl``. ``hermitian``
    (complex ``a`` only) chooses ``a = lu d lu^H`` over ``lu d lu^T``.

    Example:
        >>> import numpy as np
        >>> lu, d, perm = ldl(np.array([[0.0, 1.0], [1.0, 0.0]]))   # one 2x2 block
        >>> d.tolist()
        [[0.0, 1.0], [1.0, 0.0]]
    """
    return tuple(bind(ldl_p, a, lower=lower, hermitian=hermitian))


def _ldl_batch(axis_size, vals, dims, *, lower, hermitian):
    (a,), (d,) = vals, dims
    if d != 0:  # the impl maps over leading axes
        a = moveaxis(a, d, 0)
    return list(ldl(a, lower=lower, hermitian=hermitian)), [0, 0, 0]


batching.batch_rules[ldl_p] = _ldl_batch


def _const_like(x: Any, host: numpy.ndarray) -> Any:
    """``host`` in ``x``'s dtype on ``x``'s device (it broadcasts over the batch axes)."""
    aval = get_aval(x)
    return xp_for_device(aval.device or get_default_device()).asarray(host.astype(aval.dtype))


def _mT(x: Any) -> Any:
    nd = get_aval(x).ndim
    return swapaxes(x, nd - 2, nd - 1)


def _mm(a: Any, b: Any) -> Any:
    nd = get_aval(a).ndim
    batch = tuple(range(nd - 2))
    return dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)))


def _band(v: Any, k: int) -> Any:
    """The ``(..., n, n)`` matrix with ``v`` ``(..., n - |k|)`` on its ``k``-th diagonal."""
    nd, m = get_aval(v).ndim, get_aval(v).shape[-1]
    n = m + abs(k)
    zero = _ew.convert_element_type(0, get_aval(v).dtype)
    if k:
        v = pad(v, zero, [(0, 0, 0)] * (nd - 1) + [(0, abs(k), 0)])
    # below the diagonal (k < 0) entry [c - k, c] is v[c]; above it, [r, r + k] is v[r]
    v = expand_dims(v, (nd - 1,) if k <= 0 else (nd,))
    return _ew.mul(v, _const_like(v, numpy.eye(n, k=k)))


def _block_inverse(d: Any) -> Any:
    """The inverse of each block diagonal ``d`` (1x1 and 2x2 blocks, a 2x2 block marked by
    its nonzero off-diagonal), block by block: a zero 1x1 pivot (a singular matrix) makes only
    its own column infinite."""
    nd, n = get_aval(d).ndim, get_aval(d).shape[-1]
    diag = _band_of(d, 0)
    if n == 1:
        return _band(_ew.div(1, diag), 0)
    sub, sup = _band_of(d, -1), _band_of(d, 1)
    pair = _ew.ne(sub, 0)
    det = _ew.sub(_ew.mul(slice_in_dim(diag, 0, n - 1, axis=nd - 2),
                          slice_in_dim(diag, 1, n, axis=nd - 2)), _ew.mul(sup, sub))
    det = _ew.select_n(pair, 1, det)   # 1 outside the 2x2 blocks: no division by 0

    def shift(v: Any, fill: Any, first: bool) -> Any:
        # (..., n - 1) -> (..., n): v[i] at i (the first row of a block) or at i + 1
        return pad(v, _ew.convert_element_type(fill, get_aval(v).dtype),
                   [(0, 0, 0)] * (nd - 2) + [(0, 1, 0) if first else (1, 0, 0)])

    first, second = shift(pair, False, True), shift(pair, False, False)
    as_first = _ew.div(shift(slice_in_dim(diag, 1, n, axis=nd - 2), 1, True), shift(det, 1, True))
    as_second = _ew.div(shift(slice_in_dim(diag, 0, n - 1, axis=nd - 2), 1, False),
                        shift(det, 1, False))
    in_pair = _ew.or_(first, second)
    # a 2x2 block's diagonal may be 0: kept out of 1/x (whose derivative would be inf * 0)
    single = _ew.div(1, _ew.select_n(in_pair, diag, 1))
    inv_diag = _ew.select_n(first, _ew.select_n(second, single, as_second), as_first)
    inv_sub = _ew.select_n(pair, 0, _ew.neg(_ew.div(sub, det)))
    inv_sup = _ew.select_n(pair, 0, _ew.neg(_ew.div(sup, det)))
    return _ew.add(_ew.add(_band(inv_diag, 0), _band(inv_sub, -1)), _band(inv_sup, 1))


def _band_of(x: Any, k: int) -> Any:
    """The ``k``-th diagonal of each matrix, ``(..., n - |k|)``."""
    nd, n = get_aval(x).ndim, get_aval(x).shape[-1]
    rows = slice_in_dim(x, max(-k, 0), n - max(k, 0), axis=nd - 2)
    sq = slice_in_dim(rows, max(k, 0), n - max(-k, 0), axis=nd - 1)
    return reduce_sum(_ew.mul(sq, _const_like(sq, numpy.eye(n - abs(k)))), (nd - 1,))


def _ldl_jvp(primals, tangents, *, lower, hermitian):
    (a,), (da,) = primals, tangents
    outs = list(ldl(a, lower=lower, hermitian=hermitian))
    lu_, d, perm = outs
    aval = get_aval(a)
    nd, n, dt = aval.ndim, aval.shape[-1], aval.dtype
    if type(da) is Zero or n == 0:
        return outs, [Zero.from_primal(o) for o in outs]
    herm = hermitian and dt.kind == "c"

    def tr(x: Any) -> Any:
        return _ew.conj(_mT(x)) if herm else _mT(x)

    # With the pivots fixed, P a P^T = L d L^T (^H) for the unit triangular L = lu[perm] whose
    # diagonal blocks are the identity. X = L^-1 dA' L^-T = M d + dd + d M^T with
    # M = L^-1 dL strictly block triangular: dd is X's block diagonal, M d its strictly block
    # triangular rest. As cholesky and eigh, the tangent is symmetrised (Hermitian part).
    s = _ew.mul(_ew.add(da, tr(da)), 0.5)
    cols = _const_like(_ew.convert_element_type(perm, numpy.int32), numpy.arange(n))
    q = _ew.convert_element_type(_ew.eq(expand_dims(perm, (nd - 1,)), cols), dt)
    low = _mm(q, lu_)
    y = triangular_solve(low, _mm(_mm(q, s), _mT(q)), lower=lower, unit_diagonal=True)
    x = tr(triangular_solve(low, tr(y), lower=lower, unit_diagonal=True))
    x = _ew.mul(_ew.add(x, tr(x)), 0.5)
    # d's block diagonal: the diagonal and the (nonzero) off-diagonals of its 2x2 blocks
    blocks = _ew.select_n(_ew.ne(d, 0), _const_like(d, numpy.eye(n)), 1)
    below = numpy.tri(n, n, -1)
    strict = _ew.mul(_const_like(x, below if lower else below.T), _ew.sub(1, blocks))
    dd = _ew.mul(x, blocks)
    m = _mm(_ew.mul(x, strict), _block_inverse(d))
    dlu = _mm(_mT(q), _mm(low, m))
    return outs, [dlu, dd, Zero.from_primal(perm)]


jvp_rules[ldl_p] = _ldl_jvp
