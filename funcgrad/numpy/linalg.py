"""funcgrad.numpy.linalg: NumPy's ``numpy.linalg``, differentiable.

Plain arrays in and out, results in NumPy's named tuples (``EigResult``, ``EighResult``,
``SVDResult``, ``QRResult``, ``SlogdetResult``); integer inputs become float64 as in NumPy.
Everything is built on the decomposition primitives of :mod:`funcgrad.ops.linalg_decomp` and
on funcgrad.numpy, so ``grad``, ``jvp``, ``vmap`` and ``jit`` go through, to any order.
Calling ``numpy.linalg.solve(A, tracer)`` inside a transformation lands here.

Where it differs from NumPy (see ``docs/linalg.md``):

* ``eig`` / ``eigvals`` always return complex arrays (NumPy gives real ones when every
  eigenvalue is real, a type that depends on the values).
* Derivatives: ``svd(full_matrices=True)`` only for square matrices, ``qr`` for
  ``mode="reduced"``/``"r"``; eigenvectors and singular vectors at exactly repeated
  eigen/singular values get the finite "zero inside the degenerate space" convention; the
  derivative of ``det`` at a singular matrix is the adjugate's transpose (finite).
* Singular or non-positive-definite matrices give JAX's values instead of NumPy's
  ``LinAlgError``: ``cholesky`` NaN in the lower triangle, ``inv``/``solve`` LU's inf/NaN.
* ``norm`` (and ``vector_norm``/``matrix_norm``): the gradient of a 2-norm (or Frobenius norm)
  at exactly zero is 0 (a subgradient), not nan.
* ``matrix_rank`` of a vector is a 0-d int array, not a Python int.
* ``lstsq``: under ``jit``/``vmap`` the rank is traced, so residuals are returned whenever
  ``m > n`` (NumPy returns an empty array for rank-deficient ``a``).

Example:
    >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
    >>> a = np.array([[3.0, 1.0], [1.0, 2.0]])
    >>> round(float(fnp.linalg.det(a)), 12)
    5.0
    >>> funcgrad.grad(lambda m: fnp.linalg.slogdet(m)[1])(a)   # inv(a).T
    array([[ 0.4, -0.2],
           [-0.2,  0.6]])
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy

import funcgrad.numpy._manipulation as _manipulation
import funcgrad.ops.elementwise as _ew
import funcgrad.ops.shape as _shape
from funcgrad.avals import get_aval
from funcgrad.backend import get_default_device, operator_index, xp_for_device
from funcgrad.core import Tracer
from funcgrad.errors import AxisError, DTypeError, LinAlgShapeError, ShapeError
from funcgrad.numpy import _elementwise as _fe
from funcgrad.numpy import _indexing as _fi
from funcgrad.numpy import _linalg_ops as _fl
from funcgrad.numpy import _reductions as _fr
from funcgrad.numpy import _shape as _fs
from funcgrad.ops import linalg_decomp as _ld

__all__ = [
    "LinAlgError", "EigResult", "EighResult", "SVDResult", "QRResult", "SlogdetResult",
    "cholesky", "qr", "eigh", "eigvalsh", "svd", "svdvals", "solve", "inv", "det",
    "slogdet", "pinv", "lstsq", "matrix_power", "multi_dot", "norm", "vector_norm",
    "matrix_norm", "cond", "matrix_rank", "tensorsolve", "tensorinv", "eig", "eigvals",
    "trace", "diagonal", "outer", "matmul", "tensordot", "matrix_transpose", "cross",
    "vecdot",
]

LinAlgError = numpy.linalg.LinAlgError

# NumPy's own result types, so results compare (and flatten as pytrees) like NumPy's.
EighResult = type(numpy.linalg.eigh(numpy.eye(1)))
SVDResult = type(numpy.linalg.svd(numpy.eye(1)))
QRResult = type(numpy.linalg.qr(numpy.eye(1)))
SlogdetResult = type(numpy.linalg.slogdet(numpy.eye(1)))
EigResult = type(numpy.linalg.eig(numpy.eye(1)))

_INEXACT = frozenset(numpy.dtype(d) for d in ("float32", "float64", "complex64", "complex128"))
_F64 = numpy.dtype(numpy.float64)


class _NoValue:
    """Marks an argument that was not given (NumPy's ``rtol`` of ``pinv``)."""

    def __repr__(self) -> str:
        return "<no value>"


_NOVALUE = _NoValue()


def _inexact(name: str, x: Any) -> Any:
    """``x`` in a dtype linalg computes in: integers and bools become float64, as in NumPy."""
    dt = get_aval(x).dtype
    if dt in _INEXACT:
        return x
    if dt.kind in "biu":
        return _ew.convert_element_type(x, _F64)
    raise DTypeError(f"{name}: array type {dt} is unsupported in linalg")


def _norm_operand(x: Any) -> Any:
    """``x`` as ``numpy.linalg.norm`` computes on it: integers and bools become float64, while
    every inexact dtype (float16 too: norms that need no LAPACK keep it) stays."""
    dt = get_aval(x).dtype
    return x if dt.kind in "fc" else _ew.convert_element_type(x, _F64)


def _prep(name: str, *xs: Any) -> list[Any]:
    """Array operands on one device, in one inexact dtype (NumPy's common type)."""
    # Fast path: host arrays or tracers already in one linalg dtype.
    dts = {x.dtype for x in xs if type(x) is numpy.ndarray or isinstance(x, Tracer)}
    if len(dts) == 1 and len(xs) == sum(
            1 for x in xs if type(x) is numpy.ndarray or isinstance(x, Tracer)):
        (dt,) = dts
        if dt in _INEXACT:
            return list(xs)
    arrs = [_inexact(name, x) for x in _fl._arrs(*xs)]
    if len(arrs) > 1:
        dt = numpy.result_type(*(get_aval(a).dtype for a in arrs))
        arrs = [_ew.convert_element_type(a, dt) for a in arrs]
    return arrs


def _ndim_at_least(name: str, x: Any, n: int) -> None:
    a = get_aval(x)
    if a.ndim < n:
        raise LinAlgShapeError(
            f"{name}: {a.ndim}-dimensional array given. Array must be at least "
            f"{n}-dimensional (got {a.str_short()})"
        )


def _square(name: str, x: Any) -> None:
    a = get_aval(x)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise LinAlgShapeError(
            f"{name}: last 2 dimensions of the array must be square, got {a.str_short()}"
        )


def _mT(x: Any) -> Any:
    nd = get_aval(x).ndim
    return _shape.swapaxes(x, nd - 2, nd - 1)


def _H(x: Any) -> Any:
    t = _mT(x)
    return _ew.conj(t) if get_aval(t).dtype.kind == "c" else t


def _real_dtype(dt: numpy.dtype) -> numpy.dtype:
    return numpy.empty(0, dt).real.dtype


# ---------------------------------------------------------------------------------------------
# Decompositions


def cholesky(a: Any, /, *, upper: bool = False, symmetrize_input: bool = False) -> Any:
    """Cholesky factor of Hermitian positive-definite ``a``: lower ``L`` with ``a = L L^H``,
    or upper ``U = L^H`` with ``upper=True`` (reading the upper triangle of ``a``).
    ``symmetrize_input=True`` (JAX's; its default there) factors ``(a + a^H) / 2`` instead of
    reading one triangle.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.linalg.cholesky(np.array([[4.0, 2.0], [2.0, 2.0]]))
        array([[2., 0.],
               [1., 1.]])
    """
    (a,) = _prep("cholesky", a)
    _square("cholesky", a)
    if symmetrize_input:
        a = _symmetrize(a)
    if upper:
        return _H(_ld.cholesky(_H(a)))
    return _ld.cholesky(a)


def qr(a: Any, mode: str = "reduced") -> Any:
    """QR decomposition: ``QRResult(Q, R)`` for modes "reduced" (default) and "complete",
    ``R`` alone for mode "r", and ``(h, tau)`` for mode "raw" as NumPy: LAPACK ``geqrf``'s
    Householder form, ``h`` transposed (``R`` in the upper triangle of ``h.T``, the reflectors
    below it) and the reflectors' scalings ``tau``. Stacks of matrices in every mode.
    Differentiable except mode "raw" (no derivative is defined for the reflector form) and
    mode "complete" of tall matrices; those raise :class:`funcgrad.errors.NonDifferentiableError`.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> Q, R = fnp.linalg.qr(np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
        >>> Q.shape, R.shape
        ((3, 2), (2, 2))
        >>> h, tau = fnp.linalg.qr(np.array([[3.0], [4.0]]), mode="raw")
        >>> h, tau
        (array([[-5. ,  0.5]]), array([1.6]))
    """
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"qr: unrecognized mode {mode!r}")
    (a,) = _prep("qr", a)
    _ndim_at_least("qr", a, 2)
    out = _ld.qr(a, mode=mode)
    if mode == "r":
        return out
    return out if mode == "raw" else QRResult(*out)


def _symmetrize(a: Any) -> Any:
    """``(a + a^H) / 2``: JAX's ``symmetrize_input``."""
    return _ew.mul(_ew.add(a, _H(a)), get_aval(a).dtype.type(0.5))


def _uplo(name: str, UPLO: str | None) -> bool:  # noqa: N803  (NumPy's parameter name)
    u = "L" if UPLO is None else str(UPLO).upper()
    if u not in ("L", "U"):
        raise ValueError(f"{name}: UPLO argument must be 'L' or 'U', got {UPLO!r}")
    return u == "L"


def eigh(a: Any, UPLO: str | None = "L", symmetrize_input: bool = False) -> Any:  # noqa: N803
    """Eigenvalues (ascending) and eigenvectors of Hermitian/symmetric ``a``:
    ``EighResult(eigenvalues, eigenvectors)``. Only the ``UPLO`` triangle is read (as NumPy),
    unless ``symmetrize_input=True`` (JAX's; its default there): then ``(a + a^H) / 2``.

    Derivatives of the eigenvectors are undefined at repeated eigenvalues; there the part of
    the derivative inside the repeated eigenspace is left out (finite, basis-dependent).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.linalg.eigh(np.array([[2.0, 1.0], [1.0, 2.0]])).eigenvalues
        array([1., 3.])
    """
    lower = _uplo("eigh", UPLO)
    (a,) = _prep("eigh", a)
    _square("eigh", a)
    if symmetrize_input:
        a = _symmetrize(a)
    w, v = _ld.eigh(a, lower=lower)
    return EighResult(w, v)


def eigvalsh(a: Any, UPLO: str | None = "L", *,  # noqa: N803
             symmetrize_input: bool = False) -> Any:
    """Eigenvalues (ascending) of Hermitian/symmetric ``a``, reading the ``UPLO`` triangle
    (or of ``(a + a^H) / 2`` with ``symmetrize_input=True``, as :func:`eigh`).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.linalg.eigvalsh(np.array([[2.0, 1.0], [1.0, 2.0]]))
        array([1., 3.])
    """
    lower = _uplo("eigvalsh", UPLO)
    (a,) = _prep("eigvalsh", a)
    _square("eigvalsh", a)
    if symmetrize_input:
        a = _symmetrize(a)
    return _ld.eigvalsh(a, lower=lower)


def eig(a: Any) -> Any:
    """Eigenvalues and right eigenvectors of general square ``a``:
    ``EigResult(eigenvalues, eigenvectors)`` with ``a @ v[:, i] = w[i] * v[:, i]``.

    Results are always complex (complex64 for float32 input, complex128 otherwise): NumPy
    returns real arrays when every eigenvalue happens to be real, a value-dependent type that
    cannot be known under ``jit``/``vmap``. Values, order and normalisation (unit 2-norm
    columns) are NumPy's. Differentiable; eigenvector derivatives keep LAPACK's normalisation
    and, at repeated eigenvalues, leave out the part inside the degenerate eigenspace.

    Example:
        >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
        >>> fnp.linalg.eig(np.array([[2.0, 1.0], [0.0, 3.0]])).eigenvalues
        array([2.+0.j, 3.+0.j])
        >>> funcgrad.grad(lambda m: fnp.sum(fnp.linalg.eig(m).eigenvalues.real))(np.eye(2))
        array([[1., 0.],
               [0., 1.]])
    """
    (a,) = _prep("eig", a)
    _square("eig", a)
    w, v = _ld.eig(a)
    return EigResult(w, v)


def eigvals(a: Any) -> Any:
    """Eigenvalues of general square ``a`` (always complex, see :func:`eig`), in NumPy's
    order; differentiable (``dw = diag(inv(V) @ da @ V)``).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.linalg.eigvals(np.array([[0.0, -1.0], [1.0, 0.0]]))
        array([0.+1.j, 0.-1.j])
    """
    (a,) = _prep("eigvals", a)
    _square("eigvals", a)
    return _ld.eigvals(a)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        hermitian: bool = False, subset_by_index: tuple[int, int] | None = None) -> Any:
    """Singular value decomposition: ``SVDResult(U, S, Vh)`` with ``a = U @ diag(S) @ Vh``
    (``S`` descending), or ``S`` alone when ``compute_uv=False``.

    Differentiable with ``full_matrices=False`` (NumPy's default ``True`` is differentiable
    only for square matrices). ``hermitian=True`` goes through :func:`eigh`, as NumPy does.
    ``subset_by_index=(start, end)`` (jax.numpy's) keeps the singular triplets ``start`` to
    ``end - 1`` (``(0, 2)``: the two largest) and needs ``full_matrices=False`` unless it is
    the whole range; with ``hermitian=True`` it picks eigenvalues, ascending, as JAX does.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.linalg.svd(np.array([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False)
        array([4., 3.])
        >>> fnp.linalg.svd(np.diag([1.0, 5.0, 3.0]), full_matrices=False,
        ...                subset_by_index=(0, 2)).S
        array([5., 3.])
    """
    (a,) = _prep("svd", a)
    _ndim_at_least("svd", a, 2)
    m, n = get_aval(a).shape[-2:]
    sub = _svd_subset("svd", subset_by_index, builtins.min(m, n), bool(full_matrices) and not (
        hermitian))
    if hermitian:
        return _svd_hermitian(a, compute_uv, sub)
    out = _ld.svd(a, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))
    if sub is not None:
        lo, hi = sub
        out = ((out[0][..., :, lo:hi], out[1][..., lo:hi], out[2][..., lo:hi, :])
               if compute_uv else out[..., lo:hi])
    return SVDResult(*out) if compute_uv else out


def _svd_subset(fname: str, subset: Any, rank: int, full_matrices: bool
                ) -> tuple[int, int] | None:
    """``subset_by_index`` checked as JAX does (jax._src.tpu.linalg.svd, and the shape rule's
    full_matrices check); None for the whole range."""
    if subset is None:
        return None
    if len(subset) != 2:
        raise ValueError(f"{fname}: subset_by_index must be a tuple of size 2, got {subset!r}")
    lo, hi = operator_index(subset[0]), operator_index(subset[1])
    if full_matrices and (lo, hi) != (0, rank):
        raise ValueError(f"{fname}: full_matrices and subset_by_index cannot both be set "
                         "(pass full_matrices=False)")
    if lo >= hi:
        raise ValueError(f"{fname}: got empty index range in subset_by_index {(lo, hi)}")
    if lo < 0:
        raise ValueError(f"{fname}: indices in subset_by_index must be non-negative, got "
                         f"{(lo, hi)}")
    if hi > rank:
        raise ValueError(f"{fname}: index in subset_by_index[1] = {hi} exceeds matrix size "
                         f"{rank}")
    return None if (lo, hi) == (0, rank) else (lo, hi)


def _svd_hermitian(a: Any, compute_uv: bool, sub: tuple[int, int] | None = None) -> Any:
    if not compute_uv:
        s = _ld.eigvalsh(a)
        if sub is not None:
            s = s[..., sub[0]:sub[1]]
        return _fs.flip(_fr.sort(_fe.abs(s), axis=-1), axis=-1)
    s, u = _ld.eigh(a)
    if sub is not None:
        s, u = s[..., sub[0]:sub[1]], u[..., :, sub[0]:sub[1]]
    sgn = _fe.copysign(1.0, s)
    s = _fe.abs(s)
    sidx = _fs.flip(_fr.argsort(s, axis=-1), axis=-1)
    sgn = _fi.take_along_axis(sgn, sidx, axis=-1)
    s = _fi.take_along_axis(s, sidx, axis=-1)
    u = _fi.take_along_axis(u, _fs.expand_dims(sidx, -2), axis=-1)
    vt = _H(_ew.mul(u, _fs.expand_dims(sgn, -2)))
    return SVDResult(u, s, vt)


def svdvals(x: Any, /) -> Any:
    """Singular values of each matrix, descending (``svd(x, compute_uv=False)``).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.linalg.svdvals(np.diag([1.0, -5.0]))
        array([5., 1.])
    """
    return svd(x, compute_uv=False)


# ---------------------------------------------------------------------------------------------
# Solving and inverting


def solve(a: Any, b: Any) -> Any:
    """Solve ``a @ x = b``. ``b`` is a vector when 1-D, else a stack of matrices ``(..., n, k)``
    whose batch dims broadcast with ``a``'s (NumPy 2 rules).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.linalg.solve(np.array([[2.0, 0.0], [0.0, 4.0]]), np.array([2.0, 2.0]))
        array([1. , 0.5])
    """
    a, b = _prep("solve", a, b)
    _square("solve", a)
    aa, ba = get_aval(a), get_aval(b)
    n = aa.shape[-1]
    if ba.ndim == 0:
        raise ShapeError("solve: b must be at least 1-dimensional, got a scalar")
    if ba.ndim == 1:
        if ba.shape[0] != n:
            raise ShapeError(f"solve: a {aa.str_short()} and b {ba.str_short()} do not match")
        b2 = (_shape.reshape(b, (n, 1)) if aa.ndim == 2 else
              _shape.broadcast_in_dim(b, aa.shape[:-2] + (n, 1), (aa.ndim - 2,)))
        return _shape.reshape(_ld.solve(a, b2), aa.shape[:-1])
    try:
        batch = tuple(numpy.broadcast_shapes(aa.shape[:-2], ba.shape[:-2]))
    except ValueError:
        raise ShapeError(
            f"solve: the stacked dims of a {aa.str_short()} and b {ba.str_short()} cannot be "
            "broadcast together"
        ) from None
    a = _shape.broadcast_to(a, batch + aa.shape[-2:])
    b = _shape.broadcast_to(b, batch + ba.shape[-2:])
    return _ld.solve(a, b)


def inv(a: Any) -> Any:
    """Inverse of each square matrix in ``a``.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.linalg.inv(np.array([[2.0, 0.0], [0.0, 4.0]]))
        array([[0.5 , 0.  ],
               [0.  , 0.25]])
    """
    (a,) = _prep("inv", a)
    _square("inv", a)
    return _ld.inv(a)


def det(a: Any) -> Any:
    """Determinant of each square matrix in ``a``.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> float(fnp.linalg.det(np.array([[1.0, 2.0], [3.0, 4.0]])))
        -2.0000000000000004
    """
    (a,) = _prep("det", a)
    _square("det", a)
    return _ld.det(a)


def slogdet(a: Any, *, method: str | None = None) -> Any:
    """``SlogdetResult(sign, logabsdet)`` of each square matrix (no overflow for large ones).
    JAX's ``method`` (``'lu'``/``'qr'``) is accepted: the values are LAPACK's LU-based ones.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> r = fnp.linalg.slogdet(np.diag([1e200, -1e200]))
        >>> float(r.sign), round(float(r.logabsdet), 3)
        (-1.0, 921.034)
    """
    if method not in (None, "lu", "qr"):
        raise ValueError(f"slogdet: unknown method {method!r}; expected 'lu' or 'qr'")
    (a,) = _prep("slogdet", a)
    _square("slogdet", a)
    sign, logabs = _ld.slogdet(a)
    return SlogdetResult(sign, logabs)


def _as_cutoff_array(v: Any, like: Any) -> Any:
    return _fl._arrs(v, like)[0]


def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = _NOVALUE) -> Any:
    """Moore-Penrose pseudo-inverse via the SVD: singular values at or below
    ``rcond * max(s)`` (default ``rcond=1e-15``; ``rtol=None`` means ``max(m, n) * eps``)
    are treated as zero.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.linalg.pinv(np.array([[2.0, 0.0], [0.0, 0.0]]))
        array([[0.5, 0. ],
               [0. , 0. ]])
    """
    (a,) = _prep("pinv", a)
    _ndim_at_least("pinv", a, 2)
    aa = get_aval(a)
    if rcond is None:
        if rtol is _NOVALUE:
            rcond = 1e-15
        elif rtol is None:
            rcond = builtins.max(aa.shape[-2:]) * numpy.finfo(aa.dtype).eps
        else:
            rcond = rtol
    elif rtol is not _NOVALUE:
        raise ValueError("pinv: `rtol` and `rcond` can't be both set.")
    u, s, vt = svd(_ew.conj(a) if aa.dtype.kind == "c" else a, full_matrices=False,
                   hermitian=hermitian)
    rc = _as_cutoff_array(rcond, s)
    # initial=0: an empty matrix has no singular values and an empty pseudo-inverse.
    cutoff = _ew.mul(_fs.expand_dims(rc, -1), _fr.max(s, axis=-1, keepdims=True, initial=0.0))
    large = _fe.greater(s, cutoff)
    s_inv = _fe.where(large, _ew.div(1.0, _fe.where(large, s, 1.0)), 0.0)
    return _fl.matmul(_mT(vt), _ew.mul(_fs.expand_dims(s_inv, -1), _mT(u)))


def lstsq(a: Any, b: Any, rcond: Any = None, *,
          numpy_resid: bool = False) -> tuple[Any, Any, Any, Any]:
    """Least-squares solution of ``a @ x = b``: ``(x, residuals, rank, s)`` as NumPy gives.

    Singular values at or below ``rcond * max(s)`` (default ``eps * max(m, n)``; a negative
    ``rcond``, NumPy 1's default ``-1``, means machine ``eps``, as LAPACK's ``gelsd``) count
    as zero. ``residuals`` are the squared residual norms when ``rank == n < m``, else empty.
    Under ``jit``/``vmap`` (rank not concrete) residuals are returned whenever ``m > n``.
    JAX's ``numpy_resid`` is accepted: the residuals always follow NumPy's rule above.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> a = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
        >>> x, res, rank, s = fnp.linalg.lstsq(a, np.array([1.0, 2.0, 3.0]))
        >>> np.round(x, 6), int(rank)
        (array([1., 1.]), 2)
    """
    a, b = _prep("lstsq", a, b)
    aa, ba = get_aval(a), get_aval(b)
    if aa.ndim != 2 or ba.ndim not in (1, 2):
        raise LinAlgShapeError(
            f"lstsq: a must be 2-D and b 1-D or 2-D, got {aa.str_short()} and {ba.str_short()}"
        )
    m, n = aa.shape
    if ba.shape[0] != m:
        raise LinAlgError(f"lstsq: incompatible dimensions {aa.str_short()} and {ba.str_short()}")
    is_1d = ba.ndim == 1
    b2 = _shape.reshape(b, (m, 1)) if is_1d else b
    if rcond is None:
        rcond = numpy.finfo(aa.dtype).eps * builtins.max(m, n)
    u, s, vh = _ld.svd(a, full_matrices=False)
    rc = _as_cutoff_array(rcond, s)
    # gelsd reads a negative rcond as machine precision (NumPy and JAX pass it through)
    rc = _fe.where(_fe.less(rc, 0), numpy.finfo(aa.dtype).eps, rc)
    cutoff = _ew.mul(rc, _fr.max(s, axis=-1, initial=0.0))
    large = _fe.greater(s, cutoff)
    rank = _fr.count_nonzero(large)
    s_inv = _fe.where(large, _ew.div(1.0, _fe.where(large, s, 1.0)), 0.0)
    x = _fl.matmul(_H(vh), _ew.mul(_fs.expand_dims(s_inv, -1), _fl.matmul(_H(u), b2)))
    real_dt = _real_dtype(aa.dtype)
    rank_value = rank.to_concrete_value() if isinstance(rank, Tracer) else rank
    full_rank = m > n and (rank_value is None or int(rank_value) == n)
    if full_rank:
        r = _ew.sub(b2, _fl.matmul(a, x))
        resid = _fr.sum(_ew.real(_ew.mul(_ew.conj(r), r)) if aa.dtype.kind == "c"
                        else _ew.mul(r, r), axis=0)
    else:
        resid = xp_for_device(aa.device or get_default_device()).zeros((0,), dtype=real_dt)
    if is_1d:
        x = _shape.reshape(x, (n,))
    # NumPy's rank is an int32 (LAPACK's integer), a scalar when known.
    rank = (numpy.int32(int(rank_value)) if rank_value is not None
            else _ew.convert_element_type(rank, numpy.int32))
    return x, resid, rank, s


def _identity_like(a: Any) -> Any:
    aa = get_aval(a)
    xp = xp_for_device(aa.device or get_default_device())
    eye = xp.eye(aa.shape[-1], dtype=aa.dtype)
    return _shape.broadcast_to(eye, aa.shape)


def matrix_power(a: Any, n: int) -> Any:
    """``a`` raised to the integer power ``n`` by repeated squaring (``n < 0`` inverts first).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.linalg.matrix_power(np.array([[1, 1], [0, 1]]), 3)
        array([[1, 3],
               [0, 1]])
    """
    (a,) = _fl._arrs(a)
    _square("matrix_power", a)
    try:
        n = operator_index(n)
    except TypeError:
        raise TypeError("matrix_power: exponent must be an integer") from None
    if n == 0:
        return _identity_like(a)
    if n < 0:
        a = inv(a)
        n = -n
    z = result = None
    while n > 0:
        z = a if z is None else _fl.matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else _fl.matmul(result, z)
    return result


def _chain_order(dims: list[int]) -> list[list[int]]:
    """Split points of the cheapest matrix-chain product (classic dynamic programme)."""
    k = len(dims) - 1
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j] = -1
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if cost[i][j] < 0 or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s
    return split


def multi_dot(arrays: Sequence[Any], *, out: Any = None, precision: Any = None) -> Any:
    """Product of two or more matrices in the cheapest order; the first argument may be a
    row vector and the last a column vector (1-D), as in NumPy. JAX's ``precision`` as in
    ``funcgrad.numpy.matmul``.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.linalg.multi_dot([np.ones(2), np.eye(2), np.ones((2, 3))])
        array([2., 2., 2.])
    """
    if out is not None:
        raise TypeError("multi_dot: out= is not supported (funcgrad arrays are immutable)")
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("multi_dot: expecting at least two arrays.")
    if precision is not None:
        return _fl._precise("linalg.multi_dot", precision, None,
                            lambda *xs: multi_dot(list(xs[:-1])), *arrays)
    arrays = _fl._arrs(*arrays)
    if len(arrays) == 2:
        return _fl.dot(arrays[0], arrays[1])
    nd_first, nd_last = get_aval(arrays[0]).ndim, get_aval(arrays[-1]).ndim
    if nd_first == 1:
        arrays[0] = _shape.reshape(arrays[0], (1,) + get_aval(arrays[0]).shape)
    if nd_last == 1:
        arrays[-1] = _shape.reshape(arrays[-1], get_aval(arrays[-1]).shape + (1,))
    for i, x in enumerate(arrays):
        if get_aval(x).ndim != 2:
            raise ShapeError(
                f"multi_dot: array {i} is {get_aval(x).ndim}-dimensional; matrices (2-D) are "
                "expected (1-D only first and last)"
            )
    dims = [get_aval(arrays[0]).shape[0]] + [get_aval(x).shape[1] for x in arrays]
    split = _chain_order(dims)

    def prod(i: int, j: int) -> Any:
        if i == j:
            return arrays[i]
        s = split[i][j]
        return _fl.dot(prod(i, s), prod(s + 1, j))

    result = prod(0, len(arrays) - 1)
    if nd_first == 1 and nd_last == 1:
        return _shape.reshape(result, ())
    if nd_first == 1 or nd_last == 1:
        return _fs.ravel(result)
    return result


def tensorsolve(a: Any, b: Any, axes: Any = None) -> Any:
    """Solve the tensor equation ``tensordot(a, x, axes=x.ndim) = b`` for ``x``.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> a = np.eye(6).reshape(6, 2, 3)
        >>> fnp.linalg.tensorsolve(a, np.arange(6.0)).shape
        (2, 3)
    """
    a, b = _fl._arrs(a, b)
    an = get_aval(a).ndim
    if axes is not None:
        allaxes = list(range(an))
        for k in axes:
            allaxes.remove(k)
            allaxes.insert(an, k)
        a = _fs.transpose(a, allaxes)
    ashape = get_aval(a).shape
    bn = get_aval(b).ndim
    oldshape = ashape[bn:]
    prod = int(numpy.prod(oldshape, dtype=numpy.int64))
    if int(numpy.prod(ashape, dtype=numpy.int64)) != prod * prod:
        raise LinAlgError(
            "tensorsolve: input arrays must satisfy the requirement "
            "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])"
        )
    x = solve(_fs.reshape(a, (prod, prod)), _fs.ravel(b))
    return _fs.reshape(x, oldshape)


def tensorinv(a: Any, ind: int = 2) -> Any:
    """The inverse of ``a`` with respect to ``tensordot(..., ind)``.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.linalg.tensorinv(np.eye(4).reshape(4, 2, 2), ind=1).shape
        (2, 2, 4)
    """
    (a,) = _fl._arrs(a)
    if ind <= 0:
        raise ValueError("tensorinv: invalid ind argument (must be positive)")
    oldshape = get_aval(a).shape
    invshape = oldshape[ind:] + oldshape[:ind]
    prod = int(numpy.prod(oldshape[ind:], dtype=numpy.int64))
    ia = inv(_fs.reshape(a, (prod, -1)))
    return _fs.reshape(ia, invshape)


# ---------------------------------------------------------------------------------------------
# Norms, condition number, rank


def _abs2(x: Any) -> Any:
    if get_aval(x).dtype.kind == "c":
        return _ew.add(_ew.square(_ew.real(x)), _ew.square(_ew.imag(x)))
    return _ew.mul(x, x)


def _sqrt_zero_safe(s: Any) -> Any:
    """``sqrt(s)`` for ``s >= 0`` whose derivative at ``s == 0`` is taken as 0, not inf.

    A Euclidean norm at the origin then has the subgradient 0 instead of nan.
    """
    zero = _ew.eq(s, 0)
    return _ew.select_n(zero, _ew.sqrt(_ew.select_n(zero, s, 1.0)), 0.0)


def _norm_axis(name: str, axis: Any, ndim: int) -> int:
    try:
        axis = operator_index(axis)
    except TypeError:
        raise TypeError(
            f"{name}: 'axis' must be None, an integer or a tuple of integers"
        ) from None
    if not -ndim <= axis < ndim:
        raise AxisError(f"{name}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _multi_svd_norm(x: Any, row_axis: int, col_axis: int, op: str) -> Any:
    y = _fs.moveaxis(x, (row_axis, col_axis), (-2, -1))
    s = svd(y, compute_uv=False)
    if op == "max":
        # As NumPy: the 2-norm of an empty matrix is 0 (its smallest singular value, -2,
        # has no such default).
        return _fr.max(s, axis=-1, initial=0)
    if op == "min":
        return _fr.min(s, axis=-1)
    return _fr.sum(s, axis=-1)


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A002
    """Matrix or vector norm, as ``numpy.linalg.norm``.

    Vectors (1-D ``x`` or an int ``axis``): ``ord`` None/2, 1, inf, -inf, 0 and any other
    number. Matrices (2-D ``x`` or a pair ``axis``): None/'fro', 'nuc', 1, -1, 2, -2, inf,
    -inf (2, -2 and 'nuc' through the SVD). With ``ord=None`` and ``axis=None`` any ``x`` is
    flattened. The gradient of the 2-norm/Frobenius norm at 0 is 0 (a subgradient).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> float(fnp.linalg.norm(np.array([3.0, 4.0])))
        5.0
        >>> float(fnp.linalg.norm(np.array([[1.0, -2.0], [3.0, 4.0]]), ord=1))
        6.0
    """
    (x,) = _fl._arrs(x)
    x = _norm_operand(x)
    nd = get_aval(x).ndim
    if axis is None and (ord is None or (ord in ("f", "fro") and nd == 2)
                         or (_is_num(ord) and ord == 2 and nd == 1)):
        ret = _sqrt_zero_safe(_fr.sum(_abs2(_fs.ravel(x))))
        if keepdims:
            ret = _shape.reshape(ret, (1,) * nd)
        return ret
    if axis is None:
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        axis = (_norm_axis("norm", axis, nd),)
    if len(axis) == 1:
        return _vector_norm(x, ord, axis, keepdims)
    if len(axis) == 2:
        return _matrix_norm(x, ord, axis, keepdims)
    raise ValueError("norm: improper number of dimensions to norm.")


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float | numpy.integer | numpy.floating) and not isinstance(v, bool)


def _vector_norm(x: Any, ord: Any, axis: tuple, keepdims: bool) -> Any:  # noqa: A002
    nd = get_aval(x).ndim
    ax = _norm_axis("norm", axis[0], nd)
    if isinstance(ord, str):
        raise ValueError(f"norm: invalid norm order '{ord}' for vectors")
    if ord is None or ord == 2:
        return _sqrt_zero_safe(_fr.sum(_abs2(x), axis=ax, keepdims=keepdims))
    if not _is_num(ord):
        raise TypeError(f"norm: ord must be a number, a string or None, got {ord!r}")
    # Python numbers: a NumPy scalar exponent would be a host value among device arrays.
    ord = int(ord) if isinstance(ord, numpy.integer) else float(ord) if isinstance(
        ord, numpy.floating) else ord  # noqa: A001
    if ord == numpy.inf:
        return _fr.max(_fe.abs(x), axis=ax, keepdims=keepdims, initial=0)
    if ord == -numpy.inf:
        return _fr.min(_fe.abs(x), axis=ax, keepdims=keepdims)
    if ord == 0:
        rdt = _real_dtype(get_aval(x).dtype)
        nz = _ew.convert_element_type(_fe.not_equal(x, 0), rdt)
        return _fr.sum(nz, axis=ax, keepdims=keepdims)
    if ord == 1:
        return _fr.sum(_fe.abs(x), axis=ax, keepdims=keepdims)
    absx = _fe.abs(x)
    # Zero entries are computed apart (0 ** ord is 0, or inf for ord < 0) so that their
    # derivative is 0, as PyTorch's (sign(0) = 0), not 0 * inf = nan for ord < 1.
    zero = _ew.eq(absx, 0)
    powered = _fe.power(_ew.select_n(zero, absx, 1.0), ord)
    ret = _fr.sum(_ew.select_n(zero, powered, 0.0 if ord > 0 else numpy.inf), axis=ax,
                  keepdims=keepdims)
    rdt = get_aval(ret).dtype
    # A Python float exponent holding NumPy's reciprocal in ret's dtype (a NumPy scalar
    # would be a host value next to device arrays).
    inv_ord = float(numpy.reciprocal(numpy.asarray(ord, dtype=rdt)))
    # Likewise a zero (ord > 0) or infinite (ord < 0) sum: the norm's derivative there is 0
    # (a subgradient), not 0 * inf.
    edge = _ew.eq(ret, 0.0 if ord > 0 else numpy.inf)
    return _ew.select_n(edge, _fe.power(_ew.select_n(edge, ret, 1.0), inv_ord), 0.0)


def _matrix_norm(x: Any, ord: Any, axis: tuple, keepdims: bool) -> Any:  # noqa: A002
    nd = get_aval(x).ndim
    row_axis = _norm_axis("norm", axis[0], nd)
    col_axis = _norm_axis("norm", axis[1], nd)
    if row_axis == col_axis:
        raise ValueError("norm: duplicate axes given.")
    if ord in (None, "fro", "f"):
        ret = _sqrt_zero_safe(_fr.sum(_abs2(x), axis=(row_axis, col_axis)))
    elif ord == "nuc":
        ret = _multi_svd_norm(x, row_axis, col_axis, "sum")
    elif isinstance(ord, str) or not _is_num(ord):
        raise ValueError("norm: invalid norm order for matrices.")
    elif ord == 2:
        ret = _multi_svd_norm(x, row_axis, col_axis, "max")
    elif ord == -2:
        ret = _multi_svd_norm(x, row_axis, col_axis, "min")
    elif ord in (1, -1):
        c = col_axis - 1 if col_axis > row_axis else col_axis
        colsums = _fr.sum(_fe.abs(x), axis=row_axis)
        ret = (_fr.max(colsums, axis=c, initial=0) if ord == 1 else _fr.min(colsums, axis=c))
    elif ord in (numpy.inf, -numpy.inf):
        r = row_axis - 1 if row_axis > col_axis else row_axis
        rowsums = _fr.sum(_fe.abs(x), axis=col_axis)
        ret = (_fr.max(rowsums, axis=r, initial=0) if ord > 0 else _fr.min(rowsums, axis=r))
    else:
        raise ValueError("norm: invalid norm order for matrices.")
    if keepdims:
        shape = list(get_aval(x).shape)
        shape[row_axis] = 1
        shape[col_axis] = 1
        ret = _shape.reshape(ret, tuple(shape))
    return ret


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False,
                ord: Any = 2) -> Any:  # noqa: A002
    """Vector norm over ``axis`` (None: all elements; a tuple: those axes as one vector).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.linalg.vector_norm(np.ones((2, 3)), axis=1, ord=1)
        array([3., 3.])
    """
    (x,) = _fl._arrs(x)
    x = _norm_operand(x)
    shape = get_aval(x).shape
    nd = len(shape)
    if axis is None:
        y, ax = _fs.ravel(x), 0
        axes = tuple(range(nd))
    elif isinstance(axis, tuple):
        axes = tuple(_norm_axis("vector_norm", a, nd) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError("vector_norm: repeated axis")
        rest = tuple(i for i in range(nd) if i not in axes)
        y = _fs.transpose(x, axes + rest)
        size = int(numpy.prod([shape[i] for i in axes], dtype=numpy.int64))
        y = _fs.reshape(y, (size,) + tuple(shape[i] for i in rest))
        ax = 0
    else:
        ax = _norm_axis("vector_norm", axis, nd)
        axes = (ax,)
        y = x
    res = norm(y, ord=ord, axis=ax)
    if keepdims:
        res = _shape.reshape(res, tuple(1 if i in axes else s for i, s in enumerate(shape)))
    return res


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:  # noqa: A002
    """Matrix norm over the last two axes (``norm(x, ord, axis=(-2, -1))``).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> float(fnp.linalg.matrix_norm(np.eye(3), ord="nuc"))
        3.0
    """
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def cond(x: Any, p: Any = None) -> Any:
    """Condition number in the norm ``p`` (None/2/-2 through the SVD; others through
    ``norm(x, p) * norm(inv(x), p)``).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> float(fnp.linalg.cond(np.diag([1.0, 4.0])))
        4.0
    """
    (x,) = _prep("cond", x)
    _ndim_at_least("cond", x, 2)
    if 0 in get_aval(x).shape[-2:]:
        raise LinAlgError(f"cond is not defined on empty arrays, got {get_aval(x).str_short()}")
    if p is None or (_is_num(p) and p in (2, -2)):
        s = svd(x, compute_uv=False)
        first = _shape.index_in_dim(s, 0, axis=-1, keepdims=False)
        last = _shape.index_in_dim(s, -1, axis=-1, keepdims=False)
        r = _ew.div(last, first) if p == -2 else _ew.div(first, last)
    else:
        _square("cond", x)
        r = _ew.mul(norm(x, p, axis=(-2, -1)), norm(inv(x), p, axis=(-2, -1)))
    # NumPy: nan (0/0) becomes inf unless x itself holds nan.
    x_nan = _fr.any(_fe.isnan(x), axis=(-2, -1))
    return _fe.where(_fe.logical_and(_fe.isnan(r), _fe.logical_not(x_nan)), numpy.inf, r)


def matrix_rank(A: Any = _NOVALUE, tol: Any = None, hermitian: bool = False, *,  # noqa: N803
                rtol: Any = None, M: Any = _NOVALUE) -> Any:  # noqa: N803
    """Rank by the SVD: singular values above ``tol`` (default ``max(s) * rtol`` with
    ``rtol = max(m, n) * eps``). Integer result; not differentiable.

    NumPy's signature: the second positional argument is the absolute ``tol``. JAX's
    ``matrix_rank(M, rtol=None, *, hermitian=False, tol=None)`` takes the relative ``rtol``
    there; by keyword (``M=``, ``rtol=``, ``tol=``) both spellings work.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> int(fnp.linalg.matrix_rank(np.array([[1.0, 2.0], [2.0, 4.0]])))
        1
        >>> int(fnp.linalg.matrix_rank(M=np.diag([1.0, 1e-3]), rtol=1e-2))
        1
    """
    if (A is _NOVALUE) == (M is _NOVALUE):
        raise TypeError("matrix_rank: give the matrix once, as A (NumPy's name) or M (JAX's)")
    if A is _NOVALUE:
        A = M
    if rtol is not None and tol is not None:
        raise ValueError("matrix_rank: `tol` and `rtol` can't be both set.")
    (A,) = _fl._arrs(A)
    a = get_aval(A)
    if a.ndim < 2:
        return _fr.any(_fe.not_equal(A, 0)).astype(numpy.intp)
    (A,) = _prep("matrix_rank", A)
    s = svd(A, compute_uv=False, hermitian=hermitian)
    s = _ew.stop_gradient(s)
    if tol is None:
        if rtol is None:
            rt: Any = builtins.max(a.shape[-2:]) * float(numpy.finfo(get_aval(s).dtype).eps)
        else:
            rt = _fs.expand_dims(_as_cutoff_array(rtol, s), -1)
        tol_arr = _ew.mul(_fr.max(s, axis=-1, keepdims=True, initial=0), rt)
    else:
        tol_arr = _fs.expand_dims(_as_cutoff_array(tol, s), -1)
    return _fr.count_nonzero(_fe.greater(s, tol_arr), axis=-1)


# ---------------------------------------------------------------------------------------------
# NumPy 2's array-API functions in numpy.linalg


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """Sum of each matrix's diagonal (over the last two axes).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.linalg.trace(np.ones((2, 3, 3)))
        array([3., 3.])
    """
    return _fi.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """The diagonal of each matrix (over the last two axes).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.linalg.diagonal(np.arange(4.0).reshape(2, 2))
        array([0., 3.])
    """
    return _fi.diagonal(x, offset=offset, axis1=-2, axis2=-1)


def outer(x1: Any, x2: Any, /) -> Any:
    """Outer product of two vectors (1-D only, as ``numpy.linalg.outer``).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.linalg.outer(np.array([1.0, 2.0]), np.array([1.0, 0.0, -1.0]))
        array([[ 1.,  0., -1.],
               [ 2.,  0., -2.]])
    """
    x1, x2 = _fl._arrs(x1, x2)
    n1, n2 = get_aval(x1).ndim, get_aval(x2).ndim
    if n1 != 1 or n2 != 1:
        raise ValueError(
            "outer: input arrays must be one-dimensional, but they are "
            f"x1.ndim={n1} and x2.ndim={n2}"
        )
    return _fl.outer(x1, x2)


def matmul(x1: Any, x2: Any, /, *, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """Matrix product (``funcgrad.numpy.matmul``, with JAX's ``precision`` and
    ``preferred_element_type``).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.linalg.matmul(np.eye(2), np.array([1.0, 2.0]))
        array([1., 2.])
    """
    return _fl.matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)


def tensordot(x1: Any, x2: Any, /, *, axes: Any = 2, precision: Any = None,
              preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """Tensor contraction (``funcgrad.numpy.tensordot``, with JAX's ``precision``,
    ``preferred_element_type`` and ``out_sharding``).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.linalg.tensordot(np.ones((2, 3)), np.ones((3, 4)), axes=1).shape
        (2, 4)
    """
    return _fl.tensordot(x1, x2, axes=axes, precision=precision,
                         preferred_element_type=preferred_element_type,
                         out_sharding=out_sharding)


def matrix_transpose(x: Any, /) -> Any:
    """Swap the last two axes.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.linalg.matrix_transpose(np.ones((2, 3, 4))).shape
        (2, 4, 3)
    """
    return _fs.matrix_transpose(x)


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """Cross product of 3-vectors along ``axis`` (other axes broadcast).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.linalg.cross(np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]))
        array([0., 0., 1.])
    """
    x1, x2 = _fl._arrs(x1, x2)
    a1, a2 = get_aval(x1), get_aval(x2)
    ax1 = _norm_axis("cross", axis, a1.ndim)
    ax2 = _norm_axis("cross", axis, a2.ndim)
    if a1.shape[ax1] != 3 or a2.shape[ax2] != 3:
        raise ValueError(
            "cross: both input arrays must be (arrays of) 3-dimensional vectors, but they are "
            f"{a1.shape[ax1]} and {a2.shape[ax2]} dimensional instead."
        )
    # numpy.linalg.cross is numpy.cross restricted to 3-vectors.

    return _manipulation.cross(x1, x2, axis=axis)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """Dot product of vectors along ``axis``, conjugating ``x1`` (other axes broadcast);
    ``precision`` and ``preferred_element_type`` (JAX's) as in ``funcgrad.numpy.matmul``.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.linalg.vecdot(np.ones((2, 3)), np.array([1.0, 2.0, 3.0]))
        array([6., 6.])
    """
    if precision is not None:
        return _fl._precise("linalg.vecdot", precision, preferred_element_type,
                            lambda a, b, pet: vecdot(a, b, axis=axis, preferred_element_type=pet),
                            x1, x2)
    x1, x2 = _fl._pet_operands(preferred_element_type, *_fl._arrs(x1, x2))
    dt = numpy.result_type(get_aval(x1).dtype, get_aval(x2).dtype)
    a1, a2 = get_aval(x1), get_aval(x2)
    ax1 = _norm_axis("vecdot", axis, a1.ndim)
    ax2 = _norm_axis("vecdot", axis, a2.ndim)
    if a1.shape[ax1] != a2.shape[ax2]:
        raise ShapeError(
            f"vecdot: the vector axes have different lengths: {a1.shape[ax1]} ({a1.str_short()})"
            f" and {a2.shape[ax2]} ({a2.str_short()})"
        )
    u = _fs.moveaxis(x1, ax1, -1)
    v = _fs.moveaxis(x2, ax2, -1)
    if a1.dtype.kind == "c":
        u = _ew.conj(u)
    if dt == numpy.float16 and preferred_element_type is None:
        # NumPy's half-precision dot products (vecdot, dot, matmul) accumulate in float32
        # and round once; products and sums rounded to float16 drift by ulps.
        f32 = numpy.dtype(numpy.float32)
        s = _fr.sum(_fe.multiply(_ew.convert_element_type(u, f32),
                                 _ew.convert_element_type(v, f32)), axis=-1)
        return _ew.convert_element_type(s, dt)
    return _fl._pet_result(_fr.sum(_fe.multiply(u, v), axis=-1, dtype=dt),
                           preferred_element_type)
