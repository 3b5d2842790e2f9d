"""Matrix functions of funcgrad.scipy.linalg: expm and its Fréchet derivative.

``expm`` is scaling and squaring with the degree-13 Padé approximant (Higham 2005, the
algorithm behind ``scipy.linalg.expm`` and ``jax.scipy.linalg.expm``), written with array
operations: the number of squarings ``s`` is computed from the 1-norm, and the squarings run
as a fixed sequence of selects (at most 16 under tracing, so ``jit``/``vmap`` work and
``grad`` differentiates through every step to any order; JAX's limit too: beyond it the result
is NaN).
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.api import jvp
from funcgrad.avals import get_aval
from funcgrad.backend import to_numpy
from funcgrad.core import Tracer
from funcgrad.lax import stop_gradient
from funcgrad.ops import schur as _schur
from funcgrad.scipy.linalg._sylvester import solve_sylvester
from funcgrad.scipy.linalg._util import (
    as_double,
    as_inexact,
    check_square,
    const_like,
    promote,
)

__all__ = ["expm", "expm_frechet", "expm_cond", "sqrtm", "funm", "logm", "fractional_matrix_power", "cosm",
           "sinm", "tanm", "coshm", "sinhm", "tanhm", "signm"]

_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
           1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
           33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152
_MAX_SQUARINGS = 16


def _pade13(a: Any) -> Any:
    b = _PADE13
    n = get_aval(a).shape[-1]
    ident = const_like(a, numpy.eye(n, dtype=get_aval(a).dtype))
    a2 = fnp.matmul(a, a)
    a4 = fnp.matmul(a2, a2)
    a6 = fnp.matmul(a4, a2)
    u = fnp.matmul(a, fnp.matmul(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
                   + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident)
    v = (fnp.matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2)
         + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * ident)
    return fnp.linalg.solve(v - u, v + u)


def expm(A: Any, *, upper_triangular: bool = False, max_squarings: int = _MAX_SQUARINGS) -> Any:  # noqa: N803
    """Matrix exponential of each square matrix of ``A`` (``(..., n, n)``).

    Differentiable to any order (``expm_frechet`` is its JVP); works under ``jit``/``vmap``.
    ``max_squarings`` (JAX's parameter) bounds the squarings: a matrix whose 1-norm exceeds
    ``5.37 * 2**max_squarings`` gives NaN. ``upper_triangular`` is accepted for JAX
    compatibility and does not change the result. A scalar (or one-element 1-D array) is a
    1x1 matrix, as SciPy's.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.expm(np.array([[0.0, 1.0], [0.0, 0.0]]))
        array([[1., 1.],
               [0., 1.]])
    """
    a = as_inexact(A)
    if get_aval(a).ndim < 2 and get_aval(a).size == 1:
        a = fnp.reshape(a, (1, 1))
    n = check_square("expm", a)
    if n == 0:
        return a
    dt = get_aval(a).dtype
    real = numpy.float32 if dt in (numpy.float32, numpy.complex64) else numpy.float64
    # (..., 1, 1) throughout (keepdims): a 0-d reduction of a host array would be a NumPy
    # scalar, which funcgrad moves to the default device.
    norm = fnp.max(fnp.sum(fnp.abs(a), axis=-2, keepdims=True), axis=-1, keepdims=True)
    s = fnp.maximum(0.0, fnp.ceil(fnp.log2(fnp.where(norm > 0, norm, 1.0) / _THETA13)))
    s = fnp.where(fnp.isfinite(s), s, 0.0).astype(real)
    if isinstance(s, Tracer):
        steps = int(max_squarings)
    else:
        steps = int(numpy.max(to_numpy(s), initial=0))
    too_many = s > max_squarings
    r = _pade13(a * fnp.exp2(-s).astype(dt))
    for i in range(min(steps, int(max_squarings))):
        r = fnp.where(i < s, fnp.matmul(r, r), r)
    return fnp.where(too_many, numpy.nan, r)


def expm_frechet(A: Any, E: Any, method: Any = None, compute_expm: bool = True,  # noqa: N803
                 check_finite: bool = True) -> Any:
    """Fréchet derivative of ``expm`` at ``A`` in direction ``E``: ``(expm(A), L(A, E))``, or
    ``L(A, E)`` alone when ``compute_expm=False``.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> a = np.array([[1.0, 0.0], [0.0, 2.0]])
        >>> e = np.array([[1.0, 0.0], [0.0, 0.0]])
        >>> expm_a, frechet = fsl.expm_frechet(a, e)
        >>> frechet.round(6)          # d/dt exp(1 + t) = e at the (0, 0) entry
        array([[2.718282, 0.      ],
               [0.      , 0.      ]])
    """
    a, e = promote(A, E)
    check_square("expm_frechet", a, "A")
    if get_aval(e).shape != get_aval(a).shape:
        raise ValueError(f"expm_frechet: A {get_aval(a).shape} and E {get_aval(e).shape} must "
                         "have the same shape")
    out, tan = jvp(expm, (a,), (e,))
    return (out, tan) if compute_expm else tan


def sqrtm(A: Any, disp: bool = True, blocksize: int = 64) -> Any:  # noqa: N803
    """Principal square root of a square matrix: ``X`` with ``X @ X = A``, as
    ``jax.scipy.linalg.sqrtm``: always complex (complex128 for float64 and integers,
    complex64 for float32).

    Computed from the eigendecomposition, ``V diag(sqrt(w)) V^-1`` (the principal branch of
    ``sqrt``), so it is differentiable (where the eigenvalues are distinct) and works under
    ``jit``/``vmap``; its accuracy is that of ``V``'s conditioning. A concrete matrix whose
    ``V`` is ill-conditioned (defective ones included) gets SciPy's Schur-form value instead,
    with the derivative solving ``X dX + dX X = dA``. SciPy returns a real array when a real root
    exists; take ``.real`` for those. With ``disp=False`` returns ``(X, errest)``,
    ``errest = ||X X - A||_F^2 / ||A||_F`` (SciPy's estimate); ``blocksize`` has no effect.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.sqrtm(np.array([[4.0, 0.0], [0.0, 9.0]]))
        array([[2.+0.j, 0.+0.j],
               [0.+0.j, 3.+0.j]])
    """
    a = as_inexact(A)
    check_square("sqrtm", a)
    # dX solves X dX + dX X = dA (Bartels-Stewart, defective X included)
    x = _through_eig(a, fnp.sqrt, _sqrt_upper,
                     lambda root, da: solve_sylvester(root, root, da, tol=0.0))
    if disp:
        return x
    resid = fnp.matmul(x, x) - a.astype(get_aval(x).dtype)
    fro = fnp.linalg.norm(resid, axis=(-2, -1))
    return x, fro ** 2 / fnp.linalg.norm(a, axis=(-2, -1))


def _through_eig(a: Any, f: Any, schur_fallback: Any = None, frechet: Any = None) -> Any:
    """``V diag(f(w)) V^-1`` for ``a = V diag(w) V^-1``. With ``schur_fallback`` (a function of
    an upper triangular NumPy matrix), a concrete ``a`` whose eigenvectors are
    ill-conditioned (defective or nearly so, where ``V^-1`` is meaningless) gets its value from
    the complex Schur form instead, ``Z f(T) Z^H``; its derivative is then ``frechet(F, dA)``
    (``F`` the value, a constant) when given, else the eigenvector formula's."""
    w, v = fnp.linalg.eig(a)
    fw = fnp.asarray(f(w)).astype(get_aval(v).dtype)
    vt = fnp.swapaxes(v, -1, -2)
    x = fnp.swapaxes(fnp.linalg.solve(vt, fnp.swapaxes(v * fw[..., None, :], -1, -2)),
                     -1, -2)
    if schur_fallback is None:
        return x
    host_v = _concrete(v)
    host_a = _concrete(a)
    if host_v is None or host_a is None or host_v.size == 0:
        return x   # traced (jit/vmap): the eigenvector route only (documented)
    with numpy.errstate(all="ignore"):
        conds = numpy.linalg.cond(host_v.reshape((-1,) + host_v.shape[-2:]))
    if not numpy.any(~numpy.isfinite(conds) | (conds > _EIGVEC_COND_LIMIT)):
        return x
    dt = get_aval(x).dtype
    exact = numpy.empty(host_v.shape, dt)
    flat_a = host_a.reshape((-1,) + host_a.shape[-2:]).astype(dt)
    for i, m in enumerate(flat_a):
        t, z = (to_numpy(y) for y in _schur.schur(m, "complex"))
        exact.reshape((-1,) + exact.shape[-2:])[i] = z @ schur_fallback(t) @ z.conj().T
    exact_arr = const_like(x, exact)
    if frechet is not None:
        # the value exact_arr, the derivative frechet's (linear in a - a = 0)
        return exact_arr + frechet(exact_arr, (a - stop_gradient(a)).astype(dt))
    return fnp.where(fnp.isfinite(x), x + stop_gradient(exact_arr - x), stop_gradient(exact_arr))


# Above this condition number of the eigenvector matrix, sqrtm/logm take their value from the
# Schur form (V^-1 loses about log10(cond) digits).
_EIGVEC_COND_LIMIT = 1e6


def _concrete(x: Any) -> Any:
    """``x``'s value as a NumPy array when it is known (not traced), else None."""
    if isinstance(x, Tracer):
        x = x.to_concrete_value()
        if x is None:
            return None
    return to_numpy(x)


def _sqrt_upper(t: numpy.ndarray) -> numpy.ndarray:
    """The principal square root of an upper triangular matrix (Bjorck and Hammarling's
    recurrence, SciPy's): column ``j`` solves ``(R[:j, :j] + R[j, j] I) R[:j, j] = T[:j, j]``."""
    n = t.shape[-1]
    r = numpy.zeros_like(t)
    with numpy.errstate(all="ignore"):
        for j in range(n):
            r[j, j] = numpy.sqrt(t[j, j])
            for i in range(j - 1, -1, -1):
                s = t[i, j] - r[i, i + 1:j] @ r[i + 1:j, j]
                r[i, j] = s / (r[i, i] + r[j, j])
    return r


def _log_upper(t: numpy.ndarray) -> numpy.ndarray:
    """The principal logarithm of an upper triangular matrix by inverse scaling and squaring:
    ``k`` square roots until ``||T^(1/2^k) - I||_1 <= 0.1``, then ``log(I + X)`` by 16-point
    Gauss-Legendre quadrature of ``X (I + s X)^-1`` over ``[0, 1]`` (accurate to rounding for
    such ``X``), times ``2^k``."""
    n = t.shape[-1]
    eye = numpy.eye(n, dtype=t.dtype)
    k = 0
    with numpy.errstate(all="ignore"):
        while k < 64 and numpy.abs(t - eye).sum(axis=0).max() > 0.1:
            t = _sqrt_upper(t)
            k += 1
        x = t - eye
        nodes, weights = numpy.polynomial.legendre.leggauss(16)
        out = numpy.zeros_like(t)
        for s_, w_ in zip((nodes + 1) / 2, weights / 2, strict=True):
            out += w_ * numpy.linalg.solve(eye + s_ * x, x)
    return out * 2.0 ** k


def _norm1(x: Any) -> Any:
    return fnp.max(fnp.sum(fnp.abs(x), axis=-2), axis=-1)


def funm(A: Any, func: Any, disp: bool = True) -> Any:  # noqa: N803
    """The matrix function ``func(A)`` for a function ``func`` of a scalar applied
    elementwise to an array (``funcgrad.numpy.exp``, ``lambda w: w ** 3``...), as
    ``jax.scipy.linalg.funm``: always complex (complex128 for float64 and integers). Computed
    through the eigendecomposition, ``V diag(func(w)) V^-1``, so it is differentiable (where
    the eigenvalues are distinct; JAX's, through the Schur form, is not) and works under
    ``jit``/``vmap``; defective matrices are not supported (nor are they by JAX's
    Schur-Parlett recurrence). With ``disp=False`` returns ``(F, errest)``, ``errest`` being
    ``||F A - A F||_1 / ||F||_1`` (zero in exact arithmetic: ``F`` commutes with ``A``).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp, funcgrad.scipy.linalg as fsl
        >>> fsl.funm(np.diag([1.0, 2.0]), lambda w: w ** 2).real
        array([[1., 0.],
               [0., 4.]])
    """
    if not callable(func):
        raise TypeError(f"funm: func must be callable, got {type(func).__name__}")
    a = as_inexact(A)
    check_square("funm", a)
    f = _through_eig(a, func)
    if disp:
        return f
    ac = a.astype(get_aval(f).dtype)
    return f, _norm1(fnp.matmul(f, ac) - fnp.matmul(ac, f)) / _norm1(f)


def logm(A: Any, disp: bool = True) -> Any:  # noqa: N803
    """Principal matrix logarithm (SciPy's ``logm``): ``X`` with ``expm(X) = A``, from the
    eigendecomposition, ``V diag(log(w)) V^-1``, with the principal branch of ``log``. Always
    complex, like :func:`sqrtm` (SciPy returns a real array when the logarithm is real: take
    ``.real``); differentiable where the eigenvalues are distinct, ``jit``/``vmap``-able;
    a concrete matrix with ill-conditioned eigenvectors (defective ones included) gets its
    value from the Schur form (inverse scaling and squaring), as SciPy's. With ``disp=False``
    returns ``(X, errest)``,
    ``errest = ||expm(X) - A||_1 / ||A||_1``, as SciPy.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.logm(np.diag([1.0, np.e])).real.round(12)
        array([[0., 0.],
               [0., 1.]])
    """
    a = as_double(A)   # SciPy's dtype: double precision, whatever the input's
    check_square("logm", a)
    x = _through_eig(a, fnp.log, _log_upper)
    if disp:
        return x
    return x, _norm1(expm(x) - a.astype(get_aval(x).dtype)) / _norm1(a)


def fractional_matrix_power(A: Any, t: Any) -> Any:  # noqa: N803
    """``A`` to the power ``t``, as ``scipy.linalg.fractional_matrix_power``: an integer
    ``t`` is :func:`funcgrad.numpy.linalg.matrix_power` (real for real ``A``); any other
    power is ``V diag(w ** t) V^-1`` from the eigendecomposition (principal branch), always
    complex like :func:`sqrtm` (SciPy returns a real array when the power is real: take
    ``.real``); differentiable where the eigenvalues are distinct, defective matrices are not
    supported.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.fractional_matrix_power(np.diag([4.0, 9.0]), 0.5).real
        array([[2., 0.],
               [0., 3.]])
        >>> fsl.fractional_matrix_power(np.diag([2.0, 3.0]), 2)
        array([[4., 0.],
               [0., 9.]])
    """
    a = as_inexact(A)
    check_square("fractional_matrix_power", a)
    if not isinstance(t, Tracer) and numpy.ndim(t) == 0 and float(t) == int(float(t)):
        return fnp.linalg.matrix_power(a, int(float(t)))
    # SciPy computes non-integer powers in double precision, whatever the input's.
    # Defective (ill-conditioned V) concrete matrices: exp(t log T) on the Schur form.
    return _through_eig(a.astype(get_aval(as_double(a)).dtype), lambda w: w ** t,
                        lambda tri: to_numpy(expm(t * _log_upper(tri))))


def _real_if_real(a: Any, x: Any) -> Any:
    return fnp.real(x) if get_aval(a).dtype.kind == "f" else x


def cosm(A: Any) -> Any:  # noqa: N803
    """Matrix cosine through :func:`expm`, as ``scipy.linalg.cosm`` (real for real ``A``);
    differentiable to any order.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.cosm(np.zeros((2, 2)))
        array([[1., 0.],
               [0., 1.]])
    """
    a = as_inexact(A)
    check_square("cosm", a)
    if get_aval(a).dtype.kind == "f":
        return fnp.real(expm(1j * a))
    return 0.5 * (expm(1j * a) + expm(-1j * a))


def sinm(A: Any) -> Any:  # noqa: N803
    """Matrix sine through :func:`expm`, as ``scipy.linalg.sinm`` (real for real ``A``).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.sinm(np.diag([0.0, np.pi / 2])).round(12)
        array([[0., 0.],
               [0., 1.]])
    """
    a = as_inexact(A)
    check_square("sinm", a)
    if get_aval(a).dtype.kind == "f":
        return fnp.imag(expm(1j * a))
    return -0.5j * (expm(1j * a) - expm(-1j * a))


def tanm(A: Any) -> Any:  # noqa: N803
    """Matrix tangent ``cosm(A)^-1 sinm(A)``, as ``scipy.linalg.tanm``.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.tanm(np.diag([0.0, np.pi / 4])).round(12)
        array([[0., 0.],
               [0., 1.]])
    """
    a = as_inexact(A)
    check_square("tanm", a)
    return _real_if_real(a, fnp.linalg.solve(cosm(a), sinm(a)))


def coshm(A: Any) -> Any:  # noqa: N803
    """Hyperbolic matrix cosine ``(expm(A) + expm(-A)) / 2``, as ``scipy.linalg.coshm``.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.coshm(np.zeros((2, 2)))
        array([[1., 0.],
               [0., 1.]])
    """
    a = as_inexact(A)
    check_square("coshm", a)
    return 0.5 * (expm(a) + expm(-a))


def sinhm(A: Any) -> Any:  # noqa: N803
    """Hyperbolic matrix sine ``(expm(A) - expm(-A)) / 2``, as ``scipy.linalg.sinhm``.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.sinhm(np.zeros((2, 2)))
        array([[0., 0.],
               [0., 0.]])
    """
    a = as_inexact(A)
    check_square("sinhm", a)
    return 0.5 * (expm(a) - expm(-a))


def tanhm(A: Any) -> Any:  # noqa: N803
    """Hyperbolic matrix tangent ``coshm(A)^-1 sinhm(A)``, as ``scipy.linalg.tanhm``.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.tanhm(np.zeros((2, 2)))
        array([[0., 0.],
               [0., 0.]])
    """
    a = as_inexact(A)
    check_square("tanhm", a)
    return fnp.linalg.solve(coshm(a), sinhm(a))


def signm(A: Any, disp: bool = True) -> Any:  # noqa: N803
    """Matrix sign function, as ``scipy.linalg.signm``: ``V diag(sign(Re w)) V^-1`` from the
    eigendecomposition, with real parts within ``1e3 eps max|w|`` of zero taken as zero (as
    SciPy's first step); real for real ``A``. With ``disp=False`` returns ``(S, errest)``,
    ``errest = ||P P - P||_1`` for ``P = (S S + S) / 2`` (SciPy's estimate). Defective
    matrices are not supported (SciPy refines those with a Newton iteration).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.signm(np.diag([2.0, -3.0]))
        array([[ 1.,  0.],
               [ 0., -1.]])
    """
    a = as_inexact(A)
    check_square("signm", a)
    eps = numpy.finfo(get_aval(a).dtype).eps

    def rounded_sign(w: Any) -> Any:
        rw = fnp.real(w)
        c = 1e3 * eps * fnp.max(fnp.abs(w), axis=-1, keepdims=True, initial=0.0)
        return fnp.sign(fnp.where(fnp.abs(rw) > c, rw, 0.0))

    s = _real_if_real(a, _through_eig(a, rounded_sign))
    if disp:
        return s
    p = 0.5 * (fnp.matmul(s, s) + s)
    return s, _norm1(fnp.matmul(p, p) - p)


def expm_cond(A: Any, check_finite: bool = True) -> Any:  # noqa: N803
    """Relative condition number of :func:`expm` in the Frobenius norm, as
    ``scipy.linalg.expm_cond``: ``||K||_2 ||A||_F / ||expm(A)||_F`` with ``K`` the
    ``(n^2, n^2)`` Kronecker form of its Fréchet derivative, whose columns are
    :func:`expm_frechet` in the directions of the unit matrices (JVPs of ``expm``). Stacks of
    matrices give one number each.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> round(float(fsl.expm_cond(np.array([[-0.1, 2.0], [0.3, 1.5]]))), 10)
        2.5658162762
    """
    a = as_double(A)   # SciPy's dtype: double precision, whatever the input's
    n = check_square("expm_cond", a)
    dt = get_aval(a).dtype
    units = const_like(a, numpy.eye(n * n, dtype=dt).reshape(n * n, n, n))
    batch = get_aval(a).shape[:-2]
    x = expm(a)
    # one JVP per unit direction: the columns of K (complex-linear, so complex A works too)
    cols = [fnp.reshape(jvp(expm, (a,), (fnp.broadcast_to(units[i], get_aval(a).shape),))[1],
                        batch + (n * n,)) for i in range(n * n)]
    k = fnp.stack(cols, axis=-1)
    k_norm = fnp.linalg.norm(k, 2, axis=(-2, -1))
    fro = lambda m: fnp.linalg.norm(m, axis=(-2, -1))  # noqa: E731
    return k_norm * fro(a) / fro(x)
