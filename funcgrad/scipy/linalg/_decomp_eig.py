"""General and banded eigenproblems of funcgrad.scipy.linalg (SciPy's ``eig``, ``eigvals``,
``eigvalsh``, ``eigvalsh_tridiagonal``, ``eig_banded``, ``eigvals_banded``, ``cdf2rdf``),
written with funcgrad.numpy's ``eig``/``eigh`` (so differentiable, ``jit``/``vmap``-able
wherever the result's shape does not depend on values)."""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.backend import to_numpy
from funcgrad.core import Tracer
from funcgrad.errors import LinAlgShapeError
from funcgrad.lax import stop_gradient
from funcgrad.scipy.linalg._decomp import eigh, eigh_tridiagonal
from funcgrad.scipy.linalg._util import (
    as_inexact,
    check_square,
    const_like,
    host_value,
    mH,
    over_batch,
    promote,
)

__all__ = ["eig", "eigvals", "eigvalsh", "eigvalsh_tridiagonal", "eig_banded",
           "eigvals_banded", "cdf2rdf", "band_to_full"]


def lapack_left_eigenvectors(vl: Any, w: Any, vr: Any, real_input: bool) -> Any:
    """Left eigenvectors ``vl`` (columns, any scaling) normalised as LAPACK's ``geev`` returns
    them next to its right eigenvectors ``vr``: unit 2-norm; for a real matrix's real
    eigenvalue the real vector whose sign makes ``vl^H vr`` positive (``trevc`` sets the
    eigenvalue's entry of both triangular eigenvectors to 1, and the Schur vectors are
    orthogonal); otherwise the largest-magnitude entry real and positive (``zgeev``; for a
    real matrix's complex pair ``dgeev``'s sign depends on its Schur form, which this does
    not reproduce)."""
    vl = vl / fnp.linalg.norm(vl, axis=-2, keepdims=True)
    k = fnp.argmax(fnp.abs(vl), axis=-2, keepdims=True)
    top = fnp.take_along_axis(vl, k, axis=-2)
    by_top = vl * (fnp.conj(top) / fnp.abs(top))
    if not real_input:
        return by_top
    overlap = fnp.real(fnp.sum(fnp.conj(by_top) * vr, axis=-2, keepdims=True))
    real_w = (fnp.imag(w) == 0)[..., None, :]
    return fnp.where(real_w & (overlap < 0), -by_top, by_top)


# Shifts tried for the pencil's spectral transformation, in units of |a| / |b|: irrational
# values, so that a - sigma b is singular (sigma an eigenvalue) only by a coincidence; the one
# leaving a - sigma b best conditioned is taken.
_SHIFTS = (0.5772156649015329, -1.3247179572447460, 2.2360679774997896, -0.3183098861837907,
           1.6180339887498949, -2.7182818284590452)


def _concrete(x: Any) -> numpy.ndarray | None:
    """The value of ``x`` on the host, or None while it is traced (jit, vmap)."""
    if isinstance(x, Tracer):
        x = x.to_concrete_value()
        if x is None:
            return None
    return to_numpy(x)


def _singular_b(b: Any) -> tuple[Any, Any]:
    """Whether each ``b`` is singular (numerically: where LAPACK's ``ggev`` finds infinite
    eigenvalues) and the dimension of its null space, with array operations (so under
    ``jit``/``vmap`` too). A choice, so no derivative."""
    b = stop_gradient(b)
    n = get_aval(b).shape[-1]
    sb = fnp.linalg.svd(b, compute_uv=False)
    small = sb <= n * numpy.finfo(get_aval(sb).dtype).eps * sb[..., :1]
    return small[..., -1], fnp.sum(small, axis=-1)


def _shift(a: Any, b: Any) -> tuple[Any, Any]:
    """For each pencil ``(a, b)``: a shift ``sigma`` leaving ``a - sigma b`` best conditioned,
    and whether the pencil is singular (``det(a - w b) = 0`` for every ``w``: ``a - sigma b``
    singular for every shift). Choices, so no derivative."""
    a, b = stop_gradient(a), stop_gradient(b)
    n = get_aval(b).shape[-1]
    na = fnp.linalg.norm(a, axis=(-2, -1))
    nb = fnp.linalg.norm(b, axis=(-2, -1))
    scale = fnp.where(nb > 0, na / fnp.where(nb > 0, nb, 1), 1.0)
    scale = fnp.where(scale > 0, scale, 1.0)
    sigmas = scale[..., None] * const_like(scale, numpy.array(_SHIFTS, get_aval(scale).dtype))
    sc = fnp.linalg.svd(a[..., None, :, :] - sigmas[..., None, None].astype(get_aval(a).dtype)
                        * b[..., None, :, :], compute_uv=False)
    quality = sc[..., -1] / fnp.where(sc[..., 0] > 0, sc[..., 0], 1)
    best = fnp.argmax(quality, axis=-1)[..., None]   # the first of equals, as a loop keeps
    sigma = fnp.take_along_axis(sigmas, best, axis=-1)[..., 0]
    eps = numpy.finfo(get_aval(quality).dtype).eps
    degenerate = fnp.take_along_axis(quality, best, axis=-1)[..., 0] <= n * eps
    # a singular pencil's eigenvalues are not defined (NaN); any shift serves its computation
    return fnp.where(degenerate, 1.0, sigma), degenerate


def _spectral(a: Any, b: Any, sigma: Any, null: Any, degenerate: Any
              ) -> tuple[Any, Any, Any, Any]:
    """``a x = w b x`` through ``(a - sigma b)^-1 b x = mu x``, ``w = sigma + 1 / mu``:
    ``(w, vr, c, infinite)`` with ``c = a - sigma b``. The zero ``mu`` are the infinite
    eigenvalues (``b x = 0``): the ``null`` smallest, and any at rounding level of ``|m|``
    (LAPACK's QZ likewise sets ``beta`` to exactly zero below its tolerance); a singular
    pencil (``degenerate``) gets SciPy's value where ``ggev``'s ``alpha = beta = 0``, NaN
    (``nan+0j`` for a real pencil)."""
    c = a - sigma[..., None, None].astype(get_aval(a).dtype) * b
    m = fnp.linalg.solve(c, b)
    mu, vr = fnp.linalg.eig(m)
    n = get_aval(b).shape[-1]
    eps = numpy.finfo(get_aval(fnp.abs(mu)).dtype).eps
    size = stop_gradient(fnp.abs(mu))
    rank_order = fnp.argsort(fnp.argsort(size, axis=-1, stable=True), axis=-1)
    tiny = size <= n * eps * stop_gradient(fnp.linalg.norm(m, axis=(-2, -1)))[..., None]
    degenerate = degenerate[..., None]
    infinite = ((rank_order < null[..., None]) | tiny) & ~degenerate
    mu_finite = fnp.where(infinite | degenerate, 1, mu)
    w = fnp.where(infinite, numpy.inf, sigma[..., None].astype(get_aval(mu).dtype) + 1 / mu_finite)
    nan = complex(numpy.nan, numpy.nan if get_aval(a).dtype.kind == "c" else 0.0)
    return fnp.where(degenerate, nan, w), vr, c, infinite


def eig(a: Any, b: Any = None, left: bool = False, right: bool = True,
        overwrite_a: bool = False, overwrite_b: bool = False, check_finite: bool = True,
        homogeneous_eigvals: bool = False) -> Any:
    """Eigenvalues ``w`` and right eigenvectors ``vr`` (``a vr = vr diag(w)``; with ``b``, the
    generalized problem ``a vr = b vr diag(w)``), and left eigenvectors ``vl``
    (``vl^H a = diag(w) vl^H [b]``) with ``left=True``, as ``scipy.linalg.eig``: ``w``,
    ``(w, vr)``, ``(w, vl)`` or ``(w, vl, vr)``.

    Results are complex (complex64 for float32, complex128 otherwise), the eigenvectors too
    (SciPy returns real ones when every eigenvalue happens to be real, a value-dependent type;
    take ``.real`` there). Columns have unit 2-norm with their largest entry real (LAPACK's
    normalisation). The generalized problem is solved as ``eig(solve(b, a))``; where ``b`` is
    singular (decided matrix by matrix, under ``jit``/``vmap`` too), through the spectral
    transformation ``(a - sigma b)^-1 b``, whose zero eigenvalues are the pencil's infinite
    ones (``inf``, their eigenvectors ``b``'s null vectors, as SciPy's); a singular pencil
    (``det(a - w b) = 0`` for every ``w``) gives NaN (SciPy: NaN for its degenerate
    eigenvalues, LAPACK's values for the rest). The eigenvalue order
    may differ from SciPy's (LAPACK's ``ggev``); ``homogeneous_eigvals`` gives ``(w, 1)`` for
    a finite eigenvalue and ``(1, 0)`` for an infinite one (``ggev``'s ``alpha, beta`` have
    the same ratios, scaled otherwise). Differentiable as :func:`funcgrad.numpy.linalg.eig`.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> w, v = fsl.eig(np.array([[0.0, 1.0], [-1.0, 0.0]]))
        >>> w
        array([0.+1.j, 0.-1.j])
        >>> fsl.eig(np.diag([1.0, 2.0]), np.diag([2.0, 2.0]), right=False)
        array([0.5+0.j, 1. +0.j])
        >>> import funcgrad.numpy as fnp
        >>> fnp.sort_complex(fsl.eigvals(np.array([[1.0, 2.0], [3.0, 4.0]]), np.diag([1.0, 0.0])))
        array([-0.5+0.j,  inf+0.j])
    """
    infinite = degenerate = None
    if b is None:
        a = as_inexact(a)
        check_square("eig", a)
        w, vr = fnp.linalg.eig(a)
        c = None
    else:
        a, b = promote(a, b)
        n = check_square("eig", a)
        if check_square("eig", b, "b") != n or get_aval(a).shape != get_aval(b).shape:
            raise LinAlgShapeError(f"eig: a {get_aval(a).shape} and b {get_aval(b).shape} "
                                   "must have the same shape")
        c = b
        if n == 0:
            w, vr = fnp.linalg.eig(fnp.linalg.solve(b, a))
        else:
            # Each pencil goes one of two ways: eig(solve(b, a)) where b is nonsingular, the
            # spectral transformation where it is singular. With concrete values only the ways
            # some matrix takes are computed; traced, both, selected matrix by matrix (the
            # direct way on an identity where b is singular, so that no inf or NaN reaches a
            # derivative).
            singular_b, null = _singular_b(b)
            which = _concrete(singular_b)
            degenerate = None
            eye = fnp.eye(n, dtype=get_aval(b).dtype)
            direct = spectral = None
            if which is None or not which.all():
                b_ok = fnp.where(singular_b[..., None, None], eye, b)
                direct = fnp.linalg.eig(fnp.linalg.solve(b_ok, a)) + (b_ok,)
            if which is None or which.any():
                sigma, degenerate = _shift(a, b)   # (only then: SVDs of six shifted pencils)
                spectral = _spectral(a, b, sigma, null, degenerate)
            if spectral is None:
                (w, vr, c), degenerate = direct, None
            elif direct is None:
                w, vr, c, infinite = spectral
            else:
                pick = singular_b[..., None]
                w = fnp.where(pick, spectral[0], direct[0])
                vr = fnp.where(pick[..., None], spectral[1], direct[1])
                c = fnp.where(pick[..., None], spectral[2], direct[2])
                infinite = spectral[3] & pick
                degenerate = degenerate & singular_b
    out: list[Any] = [w]
    if homogeneous_eigvals:
        alpha = w if infinite is None else fnp.where(
            infinite, 1, fnp.where(degenerate[..., None], 0, w))
        beta = fnp.ones_like(w) if infinite is None else fnp.where(
            infinite | degenerate[..., None], 0, 1).astype(get_aval(w).dtype)
        out = [fnp.stack([alpha, beta], axis=-2)]
    if left:
        vl_h = fnp.linalg.inv(vr)
        if c is not None:
            # rows u^H of vr^-1: u^H c^-1 m' = mu u^H for m' = c^-1 (a or b); y^H = u^H c^-1
            # then satisfies y^H a = w y^H b
            vl_h = fnp.matmul(vl_h, fnp.linalg.inv(c.astype(get_aval(vr).dtype)))
        # (the generalized problem's left vectors: ggev's sign rule is not reproduced)
        out.append(lapack_left_eigenvectors(mH(vl_h), w, vr,
                                            b is None and get_aval(a).dtype.kind != "c"))
    if right:
        out.append(vr)
    return out[0] if len(out) == 1 else tuple(out)


def eigvals(a: Any, b: Any = None, overwrite_a: bool = False, check_finite: bool = True,
            homogeneous_eigvals: bool = False) -> Any:
    """Eigenvalues of a general (``b``: generalized) problem, as ``scipy.linalg.eigvals``
    (always complex; see :func:`eig`).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.eigvals(np.array([[2.0, 0.0], [0.0, 3.0]]))
        array([2.+0.j, 3.+0.j])
    """
    return eig(a, b, left=False, right=False, homogeneous_eigvals=homogeneous_eigvals)


def eigvalsh(a: Any, b: Any = None, *, lower: bool = True, overwrite_a: bool = False,
             overwrite_b: bool = False, type: int = 1, check_finite: bool = True,  # noqa: A002
             subset_by_index: Any = None, subset_by_value: Any = None,
             driver: Any = None) -> Any:
    """Eigenvalues (ascending) of a Hermitian (generalized) problem, as
    ``scipy.linalg.eigvalsh``: :func:`eigh` with ``eigvals_only=True``.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.eigvalsh(np.array([[2.0, 1.0], [1.0, 2.0]]))
        array([1., 3.])
    """
    return eigh(a, b, lower=lower, eigvals_only=True, type=type,
                subset_by_index=subset_by_index, subset_by_value=subset_by_value)


@over_batch(("d", 1), ("e", 1))
def eigvalsh_tridiagonal(d: Any, e: Any, select: str = "a", select_range: Any = None,
                         check_finite: bool = True, tol: float = 0.0,
                         lapack_driver: str = "auto") -> Any:
    """Eigenvalues of the symmetric tridiagonal matrix with diagonal ``d`` and off-diagonal
    ``e``, as ``scipy.linalg.eigvalsh_tridiagonal`` (``select`` ``'a'``, ``'i'``, ``'v'``).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.eigvalsh_tridiagonal(np.array([2.0, 2.0]), np.array([1.0]))
        array([1., 3.])
    """
    return eigh_tridiagonal(d, e, eigvals_only=True, select=select,
                            select_range=select_range, tol=tol)


def band_to_full(ab: Any, lower_bw: int, upper_bw: int) -> Any:
    """The square matrix stored in LAPACK's band format ``ab`` (``(l + u + 1, n)``:
    ``a[i, j] = ab[u + i - j, j]``), zero outside the band."""
    n = get_aval(ab).shape[-1]
    full = None
    for d in range(-lower_bw, upper_bw + 1):
        if abs(d) >= n:
            continue
        row = ab[upper_bw - d]
        diag = fnp.diag(row[d:] if d >= 0 else row[:n + d], k=d)
        full = diag if full is None else full + diag
    return full if full is not None else fnp.zeros((n, n), get_aval(ab).dtype)


def _hermitian_band(name: str, a_band: Any, lower: bool) -> Any:
    ab = as_inexact(a_band)
    shape = get_aval(ab).shape
    if len(shape) != 2:
        raise LinAlgShapeError(f"{name}: a_band must be 2-D (LAPACK's band storage), got "
                               f"shape {shape}")
    k = shape[0] - 1
    full = band_to_full(ab, k, 0) if lower else band_to_full(ab, 0, k)
    tri = fnp.tril(full, -1) if lower else fnp.triu(full, 1)
    d = fnp.diagonal(full)
    if get_aval(full).dtype.kind == "c":
        d = fnp.real(d).astype(get_aval(full).dtype)
    return tri + mH(tri) + fnp.diag(d)


def _select(name: str, select: str, select_range: Any) -> dict[str, Any]:
    kind = {"a": "a", "all": "a", 0: "a", "i": "i", "index": "i", 2: "i",
            "v": "v", "value": "v", 1: "v"}.get(select)
    if kind is None:
        raise ValueError(f"{name}: select must be 'a', 'v' or 'i', got {select!r}")
    if kind == "a":
        return {}
    if select_range is None or len(select_range) != 2:
        raise ValueError(f"{name}: select={select!r} needs select_range=(lo, hi)")
    return ({"subset_by_index": select_range} if kind == "i"
            else {"subset_by_value": select_range})


@over_batch(("a_band", 2))
def eig_banded(a_band: Any, lower: bool = False, eigvals_only: bool = False,
               overwrite_a_band: bool = False, select: str = "a", select_range: Any = None,
               max_ev: int = 0, check_finite: bool = True) -> Any:
    """Eigenvalues (and eigenvectors) of a Hermitian band matrix in LAPACK's band storage
    (upper form ``a_band[u + i - j, j] = a[i, j]``, lower form ``a_band[i - j, j]``), as
    ``scipy.linalg.eig_banded``; ``select`` ``'i'`` (index range) or ``'v'`` (values in
    ``(lo, hi]``, concrete values only). Through :func:`eigh` of the dense matrix: each
    eigenvector is defined up to a sign (phase), and SciPy's band reduction (``?sbtrd``) may
    pick the other one.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.eig_banded(np.array([[0.0, 1.0], [2.0, 2.0]]), eigvals_only=True)
        array([1., 3.])
    """
    full = _hermitian_band("eig_banded", a_band, lower)
    return eigh(full, eigvals_only=eigvals_only, **_select("eig_banded", select, select_range))


@over_batch(("a_band", 2))
def eigvals_banded(a_band: Any, lower: bool = False, overwrite_a_band: bool = False,
                   select: str = "a", select_range: Any = None,
                   check_finite: bool = True) -> Any:
    """Eigenvalues of a Hermitian band matrix, as ``scipy.linalg.eigvals_banded`` (see
    :func:`eig_banded`).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.eigvals_banded(np.array([[2.0, 2.0], [1.0, 0.0]]), lower=True)
        array([1., 3.])
    """
    return eig_banded(a_band, lower, True, select=select, select_range=select_range)


def cdf2rdf(w: Any, v: Any) -> tuple[Any, Any]:
    """Real block-diagonal form ``(wr, vr)`` of a complex eigendecomposition ``(w, v)`` of a
    real matrix, as ``scipy.linalg.cdf2rdf``: each conjugate pair ``(w_j, w_k)`` becomes the
    block ``[[re, im_j], [im_k, re]]`` and the columns ``-im(v_j), re(v_j)``, so
    ``v diag(w) v^-1 == vr wr vr^-1``. Which eigenvalues are complex is read from the values
    (not under ``jit``/``vmap``); differentiable.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> w, v = fsl.eig(np.array([[0.0, 1.0], [-1.0, 0.0]]))
        >>> fsl.cdf2rdf(w, v)[0]
        array([[ 0.,  1.],
               [-1.,  0.]])
    """
    w, v = fnp.asarray(w), fnp.asarray(v)
    wa, va = get_aval(w), get_aval(v)
    if wa.ndim < 1:
        raise ValueError("cdf2rdf: expected w to be at least 1D")
    if va.ndim < 2:
        raise ValueError("cdf2rdf: expected v to be at least 2D")
    if va.ndim != wa.ndim + 1:
        raise ValueError("cdf2rdf: expected eigenvectors array to have exactly one dimension "
                         "more than eigenvalues array")
    n = wa.shape[-1]
    if va.shape[-2] != va.shape[-1]:
        raise ValueError("cdf2rdf: expected v to be a square matrix or stacked square "
                         "matrices: v.shape[-2] = v.shape[-1]")
    if va.shape[-1] != n:
        raise ValueError("cdf2rdf: expected the same number of eigenvalues as eigenvectors")
    mask = numpy.iscomplex(host_value(w, "cdf2rdf", "which eigenvalues are complex decides "
                                      "the blocks of its result"))
    if not (mask.sum(axis=-1) % 2 == 0).all():
        raise ValueError("cdf2rdf: expected complex-conjugate pairs of eigenvalues")
    idx = numpy.nonzero(mask)
    stack, elem = idx[:-1], idx[-1]
    j, k = elem[0::2], elem[1::2]
    stack_ind = tuple(s[0::2] for s in stack)
    batch = wa.shape[:-1]
    # wr = diag(re w) + im w_j at (j, k) and im w_k at (k, j): a linear map of w, built as
    # selection masks so that it differentiates
    sel_jk = numpy.zeros(batch + (n, n))
    sel_kj = numpy.zeros(batch + (n, n))
    sel_jk[stack_ind + (j, k)] = 1.0
    sel_kj[stack_ind + (k, j)] = 1.0
    eye = numpy.eye(n)
    wr = (fnp.real(w)[..., None, :] * const_like(w, eye)
          + fnp.imag(w)[..., :, None] * const_like(w, sel_jk)
          + fnp.imag(w)[..., :, None] * const_like(w, sel_kj))
    u = numpy.zeros(batch + (n, n), dtype=numpy.complex128)
    u[..., range(n), range(n)] = 1.0
    u[stack_ind + (j, j)] = 0.5j
    u[stack_ind + (j, k)] = 0.5
    u[stack_ind + (k, j)] = -0.5j
    u[stack_ind + (k, k)] = 0.5
    vc = v.astype(numpy.result_type(va.dtype, numpy.complex64))
    vr = fnp.real(fnp.matmul(vc, const_like(v, u.astype(get_aval(vc).dtype))))
    return wr.astype(get_aval(vr).dtype), vr
