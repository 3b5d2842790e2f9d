"""The LDL^T (Bunch-Kaufman) factorization primitive behind ``funcgrad.scipy.linalg.ldl``:
``a = lu d lu^T`` (``lu d lu^H`` for Hermitian ``a``) with ``d`` block diagonal (1x1 and 2x2
blocks) and ``lu`` a row permutation of a unit triangular matrix, SciPy's three results.

NumPy and CuPy have no ``?sytrf``/``?hetrf``, so the host runs LAPACK's unblocked
Bunch-Kaufman elimination (``?sytf2``/``?hetf2``, which ``?sytrf`` uses for matrices up to
its block size, 64: the same pivots and, up to rounding, the same factors as SciPy's) and
SciPy's unpacking of the compact result. Like JAX's Schur decomposition, the primitive has
no derivative rule: the pivoting is a discrete choice.

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

from funcgrad.avals import ShapedArray
from funcgrad.backend import device_of, device_put, to_numpy
from funcgrad.core import bind
from funcgrad.errors import DTypeError, MissingRuleError, ShapeError
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import Zero, jvp_rules
from funcgrad.ops._util import check_static, make_primitive
from funcgrad.ops.shape import moveaxis

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


def _ldl_jvp(primals, tangents, *, lower, hermitian):
    if all(type(t) is Zero for t in tangents):
        outs = bind(ldl_p, *primals, lower=lower, hermitian=hermitian)
        return outs, [Zero.from_primal(o) for o in outs]
    raise MissingRuleError("ldl: the pivoted LDL^T factorization has no derivative rule; "
                           "differentiate through a solve (scipy.linalg.solve with "
                           "assume_a='sym'/'her') or another decomposition instead")


jvp_rules[ldl_p] = _ldl_jvp
