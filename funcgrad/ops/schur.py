"""The Schur decomposition primitive behind ``lax.linalg.schur`` and
``funcgrad.scipy.linalg.schur``: ``a = z t z^H`` with ``z`` unitary and ``t`` upper triangular
(``output="complex"``) or, for real ``a``, real quasi-triangular with 2x2 blocks for the
complex-conjugate eigenvalue pairs (``output="real"``).

NumPy has no Schur routine, so the host builds it from LAPACK's eigen-decomposition (``eig``,
whose eigenvalue order is the one LAPACK's Schur form has for small and medium matrices, since
both read it off the same Hessenberg QR iteration): the QR factorization of the eigenvectors,
``v = q r``, gives ``q^H a q = r diag(w) r^-1``, upper triangular (for a real matrix, a
conjugate pair's ``Re v, Im v`` give its real 2x2 block). That is O(n^3), a few LAPACK calls.
Where the eigenvectors are too ill-conditioned for it (a defective or nearly defective
eigenvalue leaves entries below the diagonal larger than LAPACK's own backward error), that
eigenvalue is deflated instead by the smallest right singular vector(s) of ``b - w I`` (of
``b^2 - 2 Re(w) b + |w|^2 I`` for a conjugate pair, a real 2-D invariant subspace) of the
trailing block ``b``, rotated to the front; singular vectors stay accurate where eigenvectors
would not. 2x2 blocks are then rotated to LAPACK's standard form (equal diagonal entries).
Sorting (SciPy's ``sort``) reorders the eigenvalues first, as LAPACK's ``trsen`` leaves them:
the selected ones first, each group in its original order. Like JAX's, the primitive has no
derivative rule.

Example:
    >>> import numpy as np
    >>> t, z = schur(np.array([[0.0, 2.0], [-2.0, 0.0]]), "real")
    >>> t.round(12).tolist()
    [[0.0, 2.0], [-2.0, 0.0]]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy

from funcgrad.avals import ShapedArray
from funcgrad.backend import device_of, device_put, to_numpy
from funcgrad.core import bind, user_source_info
from funcgrad.errors import DTypeError, MissingRuleError, ShapeError
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import Zero, jvp_rules
from funcgrad.ops._util import check_static, make_primitive
from funcgrad.ops.shape import moveaxis

__all__ = ["schur", "schur_p"]


# SciPy's named criteria, as its ``sfunction``s: each takes an eigenvalue (real and imaginary
# parts for the real Schur form, as LAPACK's ``dgees`` calls SELECT).
_SORTS: dict[str, Callable[..., bool]] = {
    "lhp": lambda re, im=None: re.real < 0.0,
    "rhp": lambda re, im=None: re.real >= 0.0,
    "iuc": lambda re, im=None: abs(re if im is None else complex(re, im)) <= 1.0,
    "ouc": lambda re, im=None: abs(re if im is None else complex(re, im)) > 1.0,
}


def _schur_abstract(a: ShapedArray, *, output: str, sort: Any = None) -> list[ShapedArray]:
    check_static("schur", output=output, sort=sort)
    if output not in ("real", "complex"):
        raise ValueError(f"schur: output must be 'real' or 'complex', got {output!r}")
    if not (sort is None or callable(sort) or (isinstance(sort, str) and sort in _SORTS)):
        raise ValueError(f"schur: sort must be None, a callable or one of 'lhp', 'rhp', "
                         f"'iuc', 'ouc', got {sort!r}")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"schur: needs a (batch of) square matrices, got {a.str_short()}")
    if a.dtype not in (numpy.float32, numpy.float64, numpy.complex64, numpy.complex128):
        raise DTypeError(f"schur: needs a float or complex operand, got {a.str_short()}")
    dt = a.dtype
    if output == "complex" and dt.kind == "f":
        dt = numpy.dtype(numpy.complex64 if dt == numpy.float32 else numpy.complex128)
    out = ShapedArray(a.shape, dt, False, a.device)
    if sort is None:
        return [out, out]
    return [out, out, ShapedArray(a.shape[:-2], numpy.dtype(numpy.int64), False, a.device)]


def _null_space(m: numpy.ndarray, k: int) -> numpy.ndarray:
    """An orthonormal basis (columns) of the ``k`` right singular directions of ``m`` with the
    smallest singular values."""
    _, _, vh = numpy.linalg.svd(m)
    return vh[-k:].conj().T


def _rotate_front(t: numpy.ndarray, z: numpy.ndarray, y: numpy.ndarray, k: int,
                  basis: numpy.ndarray) -> None:
    """Rotate ``span(basis)`` (columns, in the coordinates ``k:``) to the front of the
    trailing block, in place: ``t <- q^H t q``, ``z <- z q``, ``y <- q^H y`` on rows/columns
    ``k:``."""
    m = t.shape[0] - k
    q, _ = numpy.linalg.qr(numpy.concatenate([basis, numpy.eye(m, dtype=t.dtype)], axis=1))
    _apply(t, z, y, k, q[:, :m])
    t[k + basis.shape[1]:, k:k + basis.shape[1]] = 0


def _apply(t: numpy.ndarray, z: numpy.ndarray, y: numpy.ndarray, k: int,
           q: numpy.ndarray) -> None:
    """The unitary change of coordinates ``q`` on the trailing ``k:`` block, in place."""
    qh = q.conj().T
    t[k:, :] = qh @ t[k:, :]
    t[:, k:] = t[:, k:] @ q
    z[:, k:] = z[:, k:] @ q
    y[k:, :] = qh @ y[k:, :]


def _standardize(t: numpy.ndarray, z: numpy.ndarray, y: numpy.ndarray, k: int) -> None:
    """Rotate the 2x2 block at ``k`` to equal diagonal entries (LAPACK's standard form)."""
    a, b, c, d = t[k, k], t[k, k + 1], t[k + 1, k], t[k + 1, k + 1]
    theta = 0.5 * numpy.arctan2(d - a, b + c)   # (c^2 - s^2)(a - d) + 2cs(b + c) = 0
    cs, sn = numpy.cos(theta), numpy.sin(theta)
    g = numpy.array([[cs, -sn], [sn, cs]], dtype=t.dtype)
    t[k:k + 2, :] = g.T @ t[k:k + 2, :]
    t[:, k:k + 2] = t[:, k:k + 2] @ g
    z[:, k:k + 2] = z[:, k:k + 2] @ g
    y[k:k + 2, :] = g.T @ y[k:k + 2, :]
    t[k + 1, k + 1] = t[k, k] = 0.5 * (t[k, k] + t[k + 1, k + 1])


def _units(w: numpy.ndarray, real: bool) -> list[int]:
    """The sizes of the diagonal blocks the eigenvalues ``w`` (LAPACK's order) make: 2 for a
    complex-conjugate pair in the real form (LAPACK reports a 2x2 block exactly when the
    imaginary part is nonzero), 1 otherwise."""
    sizes, i = [], 0
    while i < len(w):
        size = 2 if real and w[i].imag != 0 and i + 1 < len(w) else 1
        sizes.append(size)
        i += size
    return sizes


def _sorted(w: numpy.ndarray, real: bool,
            select: Callable[..., Any]) -> tuple[numpy.ndarray, int]:
    """The order of the eigenvalues ``w`` (LAPACK's order) with the selected ones first, each
    group kept in order (LAPACK's ``trsen``), and how many were selected. In the real form a
    conjugate pair moves as one and is selected when either of its eigenvalues is (counting
    2)."""
    units, i = [], 0
    for size in _units(w, real):
        units.append(numpy.arange(i, i + size))
        i += size
    if real:
        chosen = [any(bool(select(float(w[j].real), float(w[j].imag))) for j in u)
                  for u in units]
    else:
        chosen = [bool(select(complex(w[u[0]]))) for u in units]
    first = [u for u, c in zip(units, chosen) if c]
    rest = [u for u, c in zip(units, chosen) if not c]
    return numpy.concatenate(first + rest), sum(len(u) for u in first)


def _eigenbasis(v: numpy.ndarray, w: numpy.ndarray, real: bool) -> numpy.ndarray:
    """The eigenvectors ``v`` as a basis in the working dtype: in the real form a conjugate
    pair ``v, conj(v)`` becomes ``Re v, Im v``, a real basis of the same 2-D subspace."""
    if not real:
        return v
    y = v.real.copy()
    i = 0
    for size in _units(w, real):
        if size == 2:
            y[:, i + 1] = v[:, i].imag
        i += size
    return y


def _schur_one(a: numpy.ndarray, real: bool, select: Callable[..., Any] | None = None
               ) -> tuple[numpy.ndarray, numpy.ndarray, int]:
    n = a.shape[0]
    t = numpy.array(a, dtype=a.dtype if real else numpy.result_type(a.dtype, numpy.complex64))
    z = numpy.eye(n, dtype=t.dtype)
    if n == 0 or not numpy.isfinite(a).all():
        if n and not numpy.isfinite(a).all():
            t[...] = numpy.nan
            z[...] = numpy.nan
        return t, z, 0
    # in the working dtype: LAPACK orders complex ones differently
    w, v = numpy.linalg.eig(t)
    scale = max(numpy.abs(a).max(), numpy.finfo(t.dtype).tiny)
    tol = 100 * numpy.finfo(t.dtype).eps * scale
    # what an entry below the (quasi-)diagonal may be and still count as zero: LAPACK's own
    # backward error, a small multiple of n eps |a|
    clean = 4 * n * numpy.finfo(t.dtype).eps * scale
    sdim = 0
    if select is not None:
        order, sdim = _sorted(w, real, select)
        w, v = w[order], v[:, order]
    # y: the eigenvectors (a basis of each real invariant subspace of a pair) in the current
    # coordinates. If t x = lam x and t is block upper triangular, the trailing part of x is an
    # eigenvector of the trailing block, so the remaining columns of y keep describing the
    # trailing block as it is deflated.
    y = _eigenbasis(v, w, real).astype(t.dtype)
    sizes = _units(w, real)
    k, u = 0, 0
    while k < n - 1:
        # Fast path, O(n^3) in all: the QR factorization of the remaining eigenvectors (in
        # their order) rotates the trailing block to (quasi-)triangular form, t = r lam r^-1.
        # Its r diagonal made real and positive keeps a block that is already triangular as
        # it is (LAPACK leaves a triangular matrix alone: z = I); sorting may still reorder it.
        if select is not None or numpy.tril(t[k:, k:], -1).any():
            q, r = numpy.linalg.qr(y[k:, k:])
            d = numpy.diagonal(r)
            _apply(t, z, y, k, q * numpy.where(d == 0, 1, d / numpy.where(d == 0, 1, abs(d))))
        while k < n - 1:
            size = sizes[u]
            if numpy.abs(t[k + size:, k:k + size]).max(initial=0) > clean:
                break
            t[k + size:, k:k + size] = 0
            if size == 2:
                _standardize(t, z, y, k)
            k, u = k + size, u + 1
        if k >= n - 1:
            break
        # The eigenvectors were too ill-conditioned (a defective or nearly defective
        # eigenvalue): deflate this one by the smallest right singular vector(s) of b - w I (of
        # b^2 - 2 Re(w) b + |w|^2 I for a conjugate pair, a real 2-D invariant subspace), which
        # stay accurate where eigenvectors do not, then try the fast path again.
        b = t[k:, k:]
        # the trailing block's own eigenvalue nearest the one wanted here: an ill-conditioned
        # eigenvalue moves under the rounding the rotations so far made, and the singular
        # vector of b - w I is only as good as w is an eigenvalue of b
        here = numpy.linalg.eigvals(b)
        if real:
            kind = here[(here.imag != 0) == (sizes[u] == 2)]
            here = kind if kind.size else here
        lam = here[numpy.argmin(abs(here - w[k]))]
        ident = numpy.eye(n - k, dtype=t.dtype)
        if sizes[u] == 2:
            pair = b @ b - 2 * lam.real * b + abs(lam) ** 2 * ident
            _rotate_front(t, z, y, k, _null_space(pair, 2))
            _standardize(t, z, y, k)
            k, u = k + 2, u + 1
        else:
            shift = lam.real if real else lam
            # A leading column already split off with this eigenvalue stays as it is (a null
            # space of dimension > 1 would give an arbitrary rotation).
            if not (numpy.all(b[1:, 0] == 0) and abs(b[0, 0] - shift) <= tol):
                _rotate_front(t, z, y, k, _null_space(b - shift * ident, 1))
            k, u = k + 1, u + 1
    return t, z, sdim


def _schur_on_host(host: numpy.ndarray, output: str, sort: Any = None) -> list[numpy.ndarray]:
    """``[t, z]`` of each matrix of the NumPy array ``host`` (and ``sdim``, the number of
    selected eigenvalues, with ``sort``)."""
    real = output == "real" and host.dtype.kind == "f"
    dt = numpy.result_type(host.dtype, numpy.complex64) if output == "complex" else host.dtype
    select = _SORTS.get(sort, sort) if isinstance(sort, str) else sort
    flat = host.reshape((int(numpy.prod(host.shape[:-2])),) + host.shape[-2:])
    triples = [_schur_one(m, real, select) for m in flat]
    out = [numpy.stack([p[j] for p in triples]).astype(dt).reshape(host.shape) if triples
           else numpy.zeros(host.shape, dt) for j in (0, 1)]
    if sort is not None:
        out.append(numpy.array([p[2] for p in triples], numpy.int64).reshape(host.shape[:-2]))
    return out


def _schur_impl(a: Any, *, output: str, sort: Any = None) -> list[Any]:
    # NumPy has no Schur routine and CuPy none either: the host computes it, and the results
    # go back to the matrix's device (as eig's fallback does).
    device = device_of(a)
    return [device_put(x, device) for x in _schur_on_host(to_numpy(a), output, sort)]


schur_p = make_primitive("schur", _schur_impl, _schur_abstract, multiple_results=True)


def schur(a: Any, output: str = "real", sort: Any = None) -> tuple[Any, ...]:
    """``(t, z)`` with ``a = z t z^H`` for a (batch of) square float or complex matrices:
    ``t`` upper triangular (``output="complex"``, or any complex ``a``) or real
    quasi-triangular (``output="real"`` of real ``a``). With ``sort`` (``"lhp"``, ``"rhp"``,
    ``"iuc"``, ``"ouc"`` or a callable: SciPy's), the selected eigenvalues come first and
    ``(t, z, sdim)`` is returned, ``sdim`` (int64, one per matrix) counting them.

    Example:
        >>> import numpy as np
        >>> t, z = schur(np.array([[1.0, 2.0], [0.0, 3.0]]), "complex")
        >>> t.diagonal().tolist()
        [(1+0j), (3+0j)]
    """
    return tuple(bind(schur_p, a, output=output, sort=sort))


def _schur_batch(axis_size, vals, dims, *, output, sort=None):
    (a,), (d,) = vals, dims
    if d != 0:  # the impl maps over leading axes
        a = moveaxis(a, d, 0)
    outs = list(schur(a, output, sort))
    return outs, [0] * len(outs)


batching.batch_rules[schur_p] = _schur_batch


def _schur_jvp(primals, tangents, *, output, sort=None):
    if all(type(t) is Zero for t in tangents):
        outs = bind(schur_p, *primals, output=output, sort=sort)
        return outs, [Zero.from_primal(o) for o in outs]
    raise MissingRuleError(
        f"schur: the Schur decomposition has no derivative rule (nor has JAX's){user_source_info().at()}; "
        "differentiate through eigenvalues (numpy.linalg.eigvals) or another decomposition "
        "instead. (scipy.linalg.solve_sylvester with method='schur' differentiates once in "
        "either mode, and a reverse-mode derivative of forward-mode ones, jacrev(jacfwd(f)); "
        "a derivative of a reverse-mode derivative (hessian, jacfwd(jacrev(f)), grad of grad) "
        "differentiates the Schur solver's transpose: use method='eigen' there.)")


jvp_rules[schur_p] = _schur_jvp
