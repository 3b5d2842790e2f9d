"""``cossin``: the cosine-sine decomposition of a unitary matrix, as ``scipy.linalg.cossin``,
written with funcgrad.numpy's SVD and QR (NumPy and CuPy have no ``?orcsd``/``?uncsd``).

For ``X`` partitioned ``[[X11, X12], [X21, X22]]`` (``X11`` is ``p x q``), ``X = U CS V^H``
with ``U = diag(U1, U2)``, ``V^H = diag(V1^H, V2^H)`` and ``CS`` LAPACK's layout of
``C = diag(cos theta)``, ``S = diag(sin theta)`` and identity blocks. The SVD
``X11 = U1 C V1^H`` gives ``U1``, ``V1`` and the cosines; the QR factorization of
``X21 V1`` (its columns are ``U2``'s scaled by the sines) gives ``U2`` and the sines, both
accurate however small either is; ``V2 = [X12; X22]^H diag(U1, U2) M`` (``M`` the columns of
``CS`` that ``V2`` meets) weighs each column by its sine and cosine, so it too stays accurate,
and it is made exactly unitary by its polar factor.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.scipy.linalg._special_matrices import block_diag
from funcgrad.scipy.linalg._util import (
    as_inexact,
    const_like,
    host_value,
    mH,
    over_batch,
    promote,
)

__all__ = ["cossin"]


def cossin(X: Any, p: Any = None, q: Any = None, separate: bool = False,  # noqa: N803
           swap_sign: bool = False, compute_u: bool = True, compute_vh: bool = True) -> Any:
    """The cosine-sine decomposition ``X = U CS V^H`` of a unitary (orthogonal) ``m x m``
    matrix partitioned with a ``p x q`` top-left block, as ``scipy.linalg.cossin``:
    ``(U, CS, VDH)``, or ``((U1, U2), theta, (V1H, V2H))`` with ``separate=True``.
    ``X`` is the matrix (with ``p`` and ``q``) or the four blocks ``(X11, X12, X21, X22)``.
    ``theta`` (``r = min(p, q, m - p, m - q)`` angles in ``[0, pi/2]``) is ascending;
    ``swap_sign`` puts the ``-S`` and ``-I`` blocks bottom left; ``compute_u``/``compute_vh``
    ``False`` give empty arrays in their place. ``CS`` and ``theta`` are SciPy's; ``U`` and
    ``VDH`` are one valid choice (singular vectors are defined up to signs and rotations
    within repeated angles, so they may differ from LAPACK's). Leading batch axes are mapped
    over; the values must be concrete (not under ``jit``/``vmap``): how the angles are
    computed depends on them.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> c, s = np.cos(0.3), np.sin(0.3)
        >>> x = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        >>> u, cs, vdh = fsl.cossin(x, p=1, q=1)
        >>> bool(np.allclose(u @ cs @ vdh, x))
        True
        >>> fsl.cossin(x, p=1, q=1, separate=True)[1].round(6)
        array([0.3])
    """
    if p or q:
        p = 1 if p is None else int(p)
        q = 1 if q is None else int(q)
        x = as_inexact(X)
        shape = get_aval(x).shape
        if len(shape) < 2 or shape[-1] != shape[-2]:
            raise ValueError("Cosine Sine decomposition only supports square matrices, got "
                             f"{shape[-2:]}")
        m = shape[-2]
        if not 0 < p < m:
            raise ValueError(f"invalid p={p}, 0<p<{m} must hold")
        if not 0 < q < m:
            raise ValueError(f"invalid q={q}, 0<q<{m} must hold")
        blocks = (x[..., :p, :q], x[..., :p, q:], x[..., p:, :q], x[..., p:, q:])
    elif not isinstance(X, Iterable):
        raise ValueError("When p and q are None, X must be an Iterable containing the "
                         "subblocks of X")
    else:
        parts = list(X)
        if len(parts) != 4:
            raise ValueError("When p and q are None, exactly four arrays should be in X, got "
                             f"{len(parts)}")
        blocks = tuple(fnp.atleast_2d(as_inexact(b)) for b in promote(*parts))
    return _cossin(*blocks, separate, swap_sign, compute_u, compute_vh)


def _isometry(a: Any) -> Any:
    """The unitary (polar) factor of the square ``a``: the nearest unitary matrix."""
    u, _, vh = fnp.linalg.svd(a)
    return fnp.matmul(u, vh)


@over_batch(("x11", 2), ("x12", 2), ("x21", 2), ("x22", 2))
def _cossin(x11: Any, x12: Any, x21: Any, x22: Any, separate: bool, swap_sign: bool,
            compute_u: bool, compute_vh: bool) -> Any:
    x11, x12, x21, x22 = promote(x11, x12, x21, x22)
    for name, block in zip(("x11", "x12", "x21", "x22"), (x11, x12, x21, x22)):
        if get_aval(block).shape[1] == 0:
            raise ValueError(f"{name} can't be empty")
    p, q = get_aval(x11).shape
    mmp, mmq = get_aval(x22).shape
    if get_aval(x12).shape != (p, mmq):
        raise ValueError(f"Invalid x12 dimensions: desired {(p, mmq)}, got "
                         f"{get_aval(x12).shape}")
    if get_aval(x21).shape != (mmp, q):
        raise ValueError(f"Invalid x21 dimensions: desired {(mmp, q)}, got "
                         f"{get_aval(x21).shape}")
    if p + mmp != q + mmq:
        raise ValueError("The subblocks have compatible sizes but don't form a square array "
                         f"(instead they form a {p + mmp}x{q + mmq} array). This might be due "
                         "to missing p, q arguments.")
    m = p + mmp
    dt = get_aval(x11).dtype
    real = numpy.finfo(dt).dtype
    r = min(p, q, m - p, m - q)
    n11, n12 = min(p, q) - r, min(p, m - q) - r
    n21, n22 = min(m - p, q) - r, min(m - p, m - q) - r
    # X11 = U1 C V1^H: the n11 structural ones, then the r cosines (descending: theta
    # ascending), then zeros
    u1, cos, v1h = fnp.linalg.svd(x11)
    v1 = mH(v1h)
    # Cosines near 1 (the sines small) crowd together (c = 1 - s^2 / 2), so X11 cannot tell
    # their vectors apart, nor from the exact ones; X21, where they are the sines, can: the
    # SVD of X21 on them rotates U1's and V1's columns there together (X11 acts on them as a
    # multiple of the identity to within eps), ordered by ascending sine.
    top = int(numpy.sum(host_value(cos[:n11 + r], "cossin", "which angles are below pi/4 "
                                   "decides how it is computed") >= numpy.sqrt(0.5)))
    if top > 1:
        _, _, yh = fnp.linalg.svd(fnp.matmul(x21, v1[:, :top]))
        y = mH(yh)[:, ::-1]
        u1 = fnp.concatenate([fnp.matmul(u1[:, :top], y), u1[:, top:]], axis=1)
        v1 = fnp.concatenate([fnp.matmul(v1[:, :top], y), v1[:, top:]], axis=1)
        v1h = mH(v1)
    # X21 V1 = U2 [S; I] (-[S; I] with swap_sign) on V1's columns past the ones: U2's
    # columns (past the n22 first, the complement) with the sines as the R factor's diagonal,
    # made nonnegative. The QR takes the columns by decreasing norm (the ones of the identity
    # block, then the sines descending), so that a column with a small sine, whose direction
    # X21 gives only to eps / sine, is orthogonalized against the accurate ones; what error
    # is left lies among the small sines, where it costs the product only eps.
    k = q - n11   # = r + n21
    order = numpy.concatenate([numpy.arange(r, k), numpy.arange(r - 1, -1, -1)]).astype(int)
    q2, r2 = fnp.linalg.qr(fnp.matmul(x21, v1[:, n11:])[:, order], mode="complete")
    d = fnp.diagonal(r2)
    phase = fnp.where(d == 0, 1, d / fnp.where(d == 0, 1, fnp.abs(d)))
    back = numpy.argsort(order)
    cols = (q2[:, :k] * (-phase if swap_sign else phase).astype(dt))[:, back]
    u2 = fnp.concatenate([q2[:, k:], cols], axis=1)
    sin = fnp.abs(d[back][:r])
    # the cosines of the rotated columns from the sines (accurate there), the others as the
    # SVD gave them (accurate where the sines are not)
    cos = fnp.where(fnp.arange(r) + n11 < top, fnp.sqrt(fnp.clip(1 - sin * sin, 0, None)),
                    fnp.clip(cos[n11:n11 + r], 0, None))
    theta = fnp.arctan2(sin, cos).astype(real)
    cs = _cs_matrix(theta, p, q, m, r, (n11, n12, n21, n22), swap_sign)
    # V2 from [X12; X22] = diag(U1, U2) CS[:, q:] V2^H: V2 = [X12; X22]^H diag(U1, U2) CS[:, q:]
    right = fnp.concatenate([fnp.matmul(mH(x12), u1), fnp.matmul(mH(x22), u2)], axis=1)
    v2 = _isometry(fnp.matmul(right, cs[:, q:].astype(dt)))
    v2h = mH(v2)
    empty = fnp.zeros((0, 0), dtype=dt)
    if separate:
        return ((u1, u2) if compute_u else (empty, empty)), theta, \
            ((v1h, v2h) if compute_vh else (empty, empty))
    return (block_diag(u1, u2) if compute_u else empty), cs, \
        (block_diag(v1h, v2h) if compute_vh else empty)


def _cs_matrix(theta: Any, p: int, q: int, m: int, r: int, sizes: tuple[int, int, int, int],
               swap_sign: bool) -> Any:
    """LAPACK's (and SciPy's) middle factor: rows ``[I n11 | C | -I n12]`` over
    ``[I n22 | S | I n21]``, columns ``[I n11 | C | I n21]`` then ``[I n22 | S | I n12]``."""
    n11, n12, n21, n22 = sizes
    sign = -1.0 if swap_sign else 1.0
    cs = numpy.zeros((m, m))
    pattern = numpy.zeros((m, m), dtype=int)   # 1: cos, 2: sin (with its sign), 0: constant
    cs[:n11, :n11] = numpy.eye(n11)
    ys = n11 + n21 + n22 + 2 * r
    cs[n11 + r:n11 + r + n12, ys:ys + n12] = sign * numpy.eye(n12) * -1.0
    cs[p + n22 + r:p + n22 + r + n21, n11 + r:n11 + r + n21] = sign * numpy.eye(n21)
    cs[p:p + n22, q:q + n22] = numpy.eye(n22)
    idx = numpy.arange(r)
    pattern[n11 + idx, n11 + idx] = 1
    pattern[p + n22 + idx, n11 + r + n21 + n22 + idx] = 1
    pattern[n11 + idx, n11 + n21 + n22 + r + idx] = -2 if not swap_sign else 2
    pattern[p + n22 + idx, n11 + idx] = 2 if not swap_sign else -2
    # the angles go in by index (one gather), so that theta's tracers reach the matrix
    c, s = fnp.cos(theta), fnp.sin(theta)
    values = fnp.concatenate([fnp.zeros((1,), dtype=get_aval(theta).dtype), c, s, -s])
    slot = numpy.zeros((m, m), dtype=int)
    rows, cols = numpy.nonzero(pattern)
    for i, j in zip(rows, cols):
        kind = pattern[i, j]
        diag = (i - n11) if i < p else (i - p - n22)
        slot[i, j] = 1 + diag + (0 if kind == 1 else (r if kind == 2 else 2 * r))
    dt = get_aval(theta).dtype
    return const_like(theta, cs.astype(dt)) + values[const_like(theta, slot)]
