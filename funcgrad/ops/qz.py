"""The generalized Schur (QZ) decomposition primitive behind ``funcgrad.scipy.linalg.qz``
(and ``ordqz``, whose ``sort`` orders the Schur form the pencil's is built from):
``a = q aa z^H`` and ``b = q bb z^H`` with ``q``, ``z`` unitary, ``bb`` upper triangular with
a real nonnegative diagonal and ``aa`` upper triangular (``output="complex"``) or, for a real
pencil, real quasi-triangular with 2x2 blocks for the complex-conjugate eigenvalue pairs, the
matching 2x2 blocks of ``bb`` diagonal and positive (LAPACK's ``gges`` standard form).

NumPy has no QZ routine, so the host reduces the pencil to a Schur form: with ``b`` nonsingular,
the Schur form ``m = z t z^H`` of ``m = b^-1 a`` (:mod:`funcgrad.ops.schur`) and the QR
factorization ``b z = q u`` give ``q^H b z = u`` and ``q^H a z = u t``; with ``b`` singular,
the spectral transformation ``m = (a - sigma b)^-1 b`` (a shift leaving ``a - sigma b`` best
conditioned) and ``(a - sigma b) z = q u`` give ``q^H b z = u t``, ``q^H a z = u (I + sigma t)``:
``m``'s zero eigenvalues are the pencil's infinite ones (``bb``'s zero diagonal entries). The
eigenvalue order is that Schur form's, not LAPACK's QZ order. Like SciPy's (and as JAX has
none), the primitive has no derivative rule.

Example:
    >>> import numpy as np
    >>> aa, bb, q, z = qz(np.array([[1.0, 2.0], [3.0, 4.0]]), np.eye(2), "complex")
    >>> bool(np.allclose(q @ aa @ z.conj().T, [[1.0, 2.0], [3.0, 4.0]]))
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy

from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import device_of, device_put, to_numpy
from funcgrad.core import bind
from funcgrad.errors import DTypeError, MissingRuleError, ShapeError
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import Zero, jvp_rules
from funcgrad.ops._util import check_static, make_primitive
from funcgrad.ops.schur import _schur_one
from funcgrad.ops.shape import broadcast_to, moveaxis

__all__ = ["qz", "qz_p"]

# Shifts tried for a singular b, in units of |a| / |b| (irrational: a - sigma b is singular
# only by a coincidence); the best conditioned one is taken.
_SHIFTS = (0.5772156649015329, -1.3247179572447460, 2.2360679774997896, -0.3183098861837907)


# SciPy's named orderings (its ordqz's): each maps the arrays alpha, beta (eigenvalues
# alpha / beta) to which are selected; an infinite eigenvalue (beta = 0) lies outside the unit
# circle and in neither half plane, and (0, 0) is never selected.
def _lhp(alpha: numpy.ndarray, beta: numpy.ndarray) -> numpy.ndarray:
    ok = beta != 0
    return ok & ((alpha / numpy.where(ok, beta, 1)).real < 0.0)


def _rhp(alpha: numpy.ndarray, beta: numpy.ndarray) -> numpy.ndarray:
    ok = beta != 0
    return ok & ((alpha / numpy.where(ok, beta, 1)).real > 0.0)


def _iuc(alpha: numpy.ndarray, beta: numpy.ndarray) -> numpy.ndarray:
    ok = beta != 0
    return ok & (abs(alpha / numpy.where(ok, beta, 1)) < 1.0)


def _ouc(alpha: numpy.ndarray, beta: numpy.ndarray) -> numpy.ndarray:
    ok = beta != 0
    return numpy.where(ok, abs(alpha / numpy.where(ok, beta, 1)) > 1.0, alpha != 0)


_SORTS: dict[str, Callable[..., Any]] = {"lhp": _lhp, "rhp": _rhp, "iuc": _iuc, "ouc": _ouc}


def _check_sort(sort: Any) -> None:
    if not (sort is None or callable(sort) or (isinstance(sort, str) and sort in _SORTS)):
        raise ValueError("sort parameter must be None, a callable, or one of ('lhp','rhp',"
                         f"'iuc','ouc'), got {sort!r}")


def _qz_abstract(a: ShapedArray, b: ShapedArray, *, output: str,
                 sort: Any = None) -> list[ShapedArray]:
    check_static("qz", output=output, sort=sort)
    if output not in ("real", "complex"):
        raise ValueError(f"qz: output must be 'real' or 'complex', got {output!r}")
    _check_sort(sort)
    for name, x in (("a", a), ("b", b)):
        if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
            raise ShapeError(f"qz: {name} must be a (batch of) square matrices, got "
                             f"{x.str_short()}")
        if x.dtype not in (numpy.float32, numpy.float64, numpy.complex64, numpy.complex128):
            raise DTypeError(f"qz: needs float or complex operands, got {x.str_short()}")
    if a.shape != b.shape or a.dtype != b.dtype:
        raise ShapeError(f"qz: a and b must have one shape and dtype, got {a.str_short()} and "
                         f"{b.str_short()}")
    dt = a.dtype
    if output == "complex" and dt.kind == "f":
        dt = numpy.dtype(numpy.complex64 if dt == numpy.float32 else numpy.complex128)
    square = ShapedArray(a.shape, dt, False, a.device)
    if sort is None:
        return [square] * 4
    cdt = numpy.result_type(dt, numpy.complex64)
    return [square, square, ShapedArray(a.shape[:-1], cdt, False, a.device),
            ShapedArray(a.shape[:-1], dt, False, a.device), square, square]


def _svd2(blk: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray]:
    """Rotations ``u``, ``v`` (2x2, orthogonal) with ``u^T blk v`` diagonal, entries positive
    and descending."""
    u, s, vt = numpy.linalg.svd(blk)
    return u, vt.T


def _selection(sfunction: Callable[..., Any], alpha: complex, beta: float) -> bool:
    """The user's (SciPy's vectorised) ordering function on one eigenvalue ``alpha / beta``."""
    return bool(numpy.asarray(sfunction(numpy.array([alpha]), numpy.array([beta]))).ravel()[0])


def _select_of(sfunction: Callable[..., Any] | None, real: bool,
               homogeneous: Callable[[complex], tuple[complex, float]]
               ) -> Callable[..., bool] | None:
    """The ``select`` of :func:`funcgrad.ops.schur._schur_one` (called with an eigenvalue of the
    matrix the Schur form is taken of: its real and imaginary parts for the real form)
    choosing by the pencil's eigenvalue ``alpha / beta`` that ``homogeneous`` gives for it."""
    if sfunction is None:
        return None
    if real:
        return lambda re, im: _selection(sfunction, *homogeneous(complex(re, im)))
    return lambda lam: _selection(sfunction, *homogeneous(complex(lam)))


def _alpha_beta(aa: numpy.ndarray, bb: numpy.ndarray, real: bool
                ) -> tuple[numpy.ndarray, numpy.ndarray]:
    """The eigenvalues ``alpha / beta`` as gges reports them: the diagonals of ``aa`` and
    ``bb``; for a real 2x2 block (``bb``'s block diagonal and positive) the conjugate pair
    with the positive imaginary part first, both with the same ``beta`` (here the geometric
    mean of ``bb``'s two diagonal entries)."""
    alpha = numpy.diagonal(aa).astype(numpy.result_type(aa.dtype, numpy.complex64))
    beta = numpy.diagonal(bb).copy()
    n = aa.shape[0]
    k = 0
    while k < n:
        if real and k + 1 < n and aa[k + 1, k] != 0:
            blk_b = bb[k:k + 2, k:k + 2]
            lam = numpy.linalg.eigvals(numpy.linalg.solve(blk_b, aa[k:k + 2, k:k + 2]))
            lam = lam[numpy.argsort(-lam.imag)]
            beta[k] = beta[k + 1] = numpy.sqrt(blk_b[0, 0] * blk_b[1, 1])
            alpha[k:k + 2] = lam * beta[k]
            k += 2
            continue
        k += 1
    return alpha, beta


def _qz_one(a: numpy.ndarray, b: numpy.ndarray, real: bool,
            sfunction: Callable[..., Any] | None = None) -> tuple[numpy.ndarray, ...]:
    n = a.shape[0]
    dt = a.dtype if real else numpy.result_type(a.dtype, numpy.complex64)
    a, b = a.astype(dt), b.astype(dt)
    eye = numpy.eye(n, dtype=dt)
    if n == 0:
        return a, b, eye, eye.copy()
    if not (numpy.isfinite(a).all() and numpy.isfinite(b).all()):
        nan = numpy.full((n, n), numpy.nan, dt)
        return nan, nan.copy(), nan.copy(), nan.copy()
    eps = numpy.finfo(dt).eps
    sb = numpy.linalg.svd(b, compute_uv=False)
    infinite = numpy.zeros(n, bool)
    if sb[-1] > n * eps * sb[0]:
        # the eigenvalues of b^-1 a are the pencil's: alpha = w, beta = 1
        select = _select_of(sfunction, real, lambda w: (w, 1.0))
        t, z, _ = _schur_one(numpy.linalg.solve(b, a), real, select)
        q, _ = numpy.linalg.qr(b @ z, mode="complete")
    else:
        scale = numpy.linalg.norm(a) / max(numpy.linalg.norm(b), numpy.finfo(dt).tiny) or 1.0
        best, quality = 0.0, -1.0
        for shift in _SHIFTS:
            sc = numpy.linalg.svd(a - scale * shift * b, compute_uv=False)
            if sc[-1] / max(sc[0], numpy.finfo(dt).tiny) > quality:
                best, quality = scale * shift, sc[-1] / max(sc[0], numpy.finfo(dt).tiny)
        c = a - best * b
        m = numpy.linalg.solve(c, b)
        # m's zero eigenvalues are the infinite ones: the n - rank(b) smallest, and any at
        # rounding level (gges's beta is then exactly zero)
        null = int((sb <= n * eps * sb[0]).sum())
        select = None
        if sfunction is not None:
            # an eigenvalue mu of m is the pencil's w = sigma + 1 / mu: alpha = sigma mu + 1,
            # beta = mu, made real (beta = |mu|), or (1, 0) for an infinite one
            sizes = numpy.sort(numpy.abs(numpy.linalg.eigvals(m)))
            inf_below = max(sizes[null - 1] if null else -1.0,
                            n * eps * numpy.linalg.norm(m))

            def homogeneous(mu: complex) -> tuple[complex, float]:
                if abs(mu) <= inf_below:
                    return 1.0, 0.0
                return (best * mu + 1) * mu.conjugate() / abs(mu), abs(mu)

            select = _select_of(sfunction, real, homogeneous)
        t, z, _ = _schur_one(m, real, select)
        q, _ = numpy.linalg.qr(c @ z, mode="complete")
        mu = numpy.abs(numpy.diagonal(t))
        infinite[numpy.argsort(mu, kind="stable")[:null]] = True
        infinite |= mu <= n * eps * numpy.linalg.norm(m)
    aa = q.conj().T @ a @ z
    bb = q.conj().T @ b @ z
    # t's block structure: 2x2 blocks where its subdiagonal is nonzero (real form only)
    sub = numpy.diagonal(t, -1) != 0 if real else numpy.zeros(max(n - 1, 0), bool)
    keep = numpy.triu(numpy.ones((n, n), bool))
    keep[numpy.arange(1, n), numpy.arange(n - 1)] = sub
    aa[~keep] = 0
    bb[~keep] = 0   # (u t, quasi-triangular, for a singular b: its 2x2 blocks go below)
    bnorm = max(numpy.abs(b).max(), numpy.finfo(dt).tiny)
    k = 0
    while k < n:
        if k + 1 < n and sub[k]:
            # LAPACK's standard 2x2 block: bb's diagonal with positive entries
            u, v = _svd2(bb[k:k + 2, k:k + 2])
            aa[k:k + 2, :] = u.T @ aa[k:k + 2, :]
            bb[k:k + 2, :] = u.T @ bb[k:k + 2, :]
            aa[:, k:k + 2] = aa[:, k:k + 2] @ v
            bb[:, k:k + 2] = bb[:, k:k + 2] @ v
            q[:, k:k + 2] = q[:, k:k + 2] @ u
            z[:, k:k + 2] = z[:, k:k + 2] @ v
            bb[k + 1, k] = bb[k, k + 1] = 0
            k += 2
            continue
        d = bb[k, k]
        if infinite[k] or abs(d) <= n * eps * bnorm:   # infinite: gges's exact zero
            bb[k, k] = 0
        elif d.real < 0 or d.imag != 0:   # the diagonal of bb real and nonnegative
            phase = d / abs(d)
            aa[k, :] *= numpy.conj(phase)
            bb[k, :] *= numpy.conj(phase)
            q[:, k] *= phase
            bb[k, k] = abs(d)
        k += 1
    return aa, bb, q, z


def _qz_on_host(a: numpy.ndarray, b: numpy.ndarray, output: str,
                sort: Any = None) -> list[numpy.ndarray]:
    real = output == "real" and a.dtype.kind == "f"
    dt = numpy.result_type(a.dtype, numpy.complex64) if output == "complex" else a.dtype
    sfunction = _SORTS.get(sort, sort) if isinstance(sort, str) else sort
    batch = a.shape[:-2]
    flat_a = a.reshape((-1,) + a.shape[-2:]) if a.size else numpy.zeros((0,) + a.shape[-2:])
    flat_b = b.reshape(flat_a.shape)
    parts = [_qz_one(x, y, real, sfunction) for x, y in zip(flat_a, flat_b)]
    out = [numpy.stack([p[j] for p in parts]).astype(dt).reshape(batch + a.shape[-2:])
           if parts else numpy.zeros(a.shape, dt) for j in range(4)]
    if sort is None:
        return out
    pairs = [_alpha_beta(aa, bb, real) for aa, bb in zip(out[0].reshape(flat_a.shape),
                                                          out[1].reshape(flat_a.shape))]
    cdt = numpy.result_type(dt, numpy.complex64)
    alpha, beta = ([numpy.stack([p[j] for p in pairs]).astype(d).reshape(a.shape[:-1])
                    if pairs else numpy.zeros(a.shape[:-1], d)] for j, d in ((0, cdt), (1, dt)))
    return out[:2] + alpha + beta + out[2:]


def _qz_impl(a: Any, b: Any, *, output: str, sort: Any = None) -> list[Any]:
    # NumPy and CuPy have no QZ routine: the host computes it, the results go back to the
    # matrices' device (as schur's)
    device = device_of(a)
    return [device_put(x, device)
            for x in _qz_on_host(to_numpy(a), to_numpy(b), output, sort)]


qz_p = make_primitive("qz", _qz_impl, _qz_abstract, multiple_results=True)


def qz(a: Any, b: Any, output: str = "real", sort: Any = None) -> tuple[Any, ...]:
    """``(aa, bb, q, z)``: the generalized Schur form of the pencil ``(a, b)`` (see the
    module docstring), for a (batch of) square float or complex matrices. With ``sort``
    (SciPy's ``ordqz``: ``"lhp"``, ``"rhp"``, ``"iuc"``, ``"ouc"`` or a vectorised callable
    of ``(alpha, beta)``) the selected eigenvalues come first (a conjugate pair when either
    is selected), and ``(aa, bb, alpha, beta, q, z)`` is returned.

    Example:
        >>> import numpy as np
        >>> aa, bb, q, z = qz(np.array([[0.0, 1.0], [-1.0, 0.0]]), np.eye(2))
        >>> bb.round(12).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
    """
    _check_sort(sort)   # (eager calls go straight to the host computation)
    return tuple(bind(qz_p, a, b, output=output, sort=sort))


def _qz_batch(axis_size, vals, dims, *, output, sort=None):
    # the impl maps over leading axes: both operands batched along axis 0 (an unbatched one
    # broadcast along it)
    a, b = (moveaxis(x, d, 0) if d is not None else
            broadcast_to(x, (axis_size,) + tuple(get_aval(x).shape))
            for x, d in zip(vals, dims))
    outs = list(qz(a, b, output, sort))
    return outs, [0] * len(outs)


batching.batch_rules[qz_p] = _qz_batch


def _qz_jvp(primals, tangents, *, output, sort=None):
    if all(type(t) is Zero for t in tangents):
        outs = bind(qz_p, *primals, output=output, sort=sort)
        return outs, [Zero.from_primal(o) for o in outs]
    raise MissingRuleError("qz: the generalized Schur decomposition has no derivative rule "
                           "(nor has SciPy's); differentiate through eig(a, b) instead")


jvp_rules[qz_p] = _qz_jvp
