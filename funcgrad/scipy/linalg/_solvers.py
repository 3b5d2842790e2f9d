"""Matrix equation solvers of funcgrad.scipy.linalg: SciPy's continuous and discrete
Lyapunov equations, as linear systems in ``vec(X)`` (Kronecker form), and algebraic Riccati
equations (matrix sign function, structure-preserving doubling)."""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.errors import LinAlgShapeError
from funcgrad.scipy.linalg._sylvester import solve_sylvester
from funcgrad.scipy.linalg._util import (
    as_double,
    check_square,
    const_like,
    mH,
    over_batch,
    promote,
)

__all__ = ["solve_continuous_lyapunov", "solve_lyapunov", "solve_discrete_lyapunov",
           "solve_continuous_are", "solve_discrete_are"]

# Up to this size the equations are solved as one (n^2, n^2) linear system (exact,
# differentiable, jit/vmap-able); beyond it through Schur forms (Bartels-Stewart).
_KRON_MAX = 32


def _operands(name: str, a: Any, q: Any) -> tuple[Any, Any, int]:
    a, q = promote(a, q)
    n = check_square(name, a, "a")
    if get_aval(q).shape != get_aval(a).shape:
        raise LinAlgShapeError(f"{name}: a {get_aval(a).shape} and q {get_aval(q).shape} "
                               "must have the same shape")
    return a, q, n


def _kron(x: Any, y: Any) -> Any:
    """``kron`` of the trailing (n, n) matrices: ``(..., n n, n n)``."""
    n = get_aval(x).shape[-1]
    k = x[..., :, None, :, None] * y[..., None, :, None, :]
    return fnp.reshape(k, get_aval(x).shape[:-2] + (n * n, n * n))


def _solve_vec(lhs: Any, q: Any) -> Any:
    n = get_aval(q).shape[-1]
    flat = fnp.reshape(q, get_aval(q).shape[:-2] + (n * n, 1))
    return fnp.reshape(fnp.linalg.solve(lhs, flat), get_aval(q).shape)


@over_batch(("a", 2), ("q", 2))
def solve_continuous_lyapunov(a: Any, q: Any) -> Any:
    """``X`` with ``A X + X A^H = Q``, as ``scipy.linalg.solve_continuous_lyapunov`` (also
    ``solve_lyapunov``). Up to 32x32 solved as the linear system
    ``(A (x) I + I (x) conj(A)) vec(X) = vec(Q)``: differentiable, ``jit``/``vmap``-able;
    larger matrices go through :func:`solve_sylvester`'s Schur forms (differentiable too).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.solve_continuous_lyapunov(np.diag([-1.0, -2.0]), np.diag([2.0, 4.0])) + 0.0
        array([[-1.,  0.],
               [ 0., -1.]])
    """
    a, q, n = _operands("solve_continuous_lyapunov", a, q)
    if n > _KRON_MAX:
        return solve_sylvester(a, mH(a), q)
    eye = const_like(a, numpy.eye(n, dtype=get_aval(a).dtype))
    return _solve_vec(_kron(a, eye) + _kron(eye, fnp.conj(a)), q)


solve_lyapunov = solve_continuous_lyapunov


@over_batch(("a", 2), ("q", 2))
def solve_discrete_lyapunov(a: Any, q: Any, method: Any = None) -> Any:
    """``X`` with ``A X A^H - X + Q = 0``, as ``scipy.linalg.solve_discrete_lyapunov``:
    ``method="direct"`` (SciPy's default below 10x10) solves ``(I - A (x) conj(A)) vec(X) =
    vec(Q)``; ``"bilinear"`` (SciPy's default from 10x10) maps it to a continuous equation
    (:func:`solve_continuous_lyapunov`).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.solve_discrete_lyapunov(np.diag([0.5, 0.0]), np.diag([3.0, 1.0]))
        array([[4., 0.],
               [0., 1.]])
    """
    # SciPy's dtype: double precision, whatever the input's (its continuous solver keeps it).
    a, q, n = _operands("solve_discrete_lyapunov", as_double(a), as_double(q))
    meth = ("bilinear" if n >= 10 else "direct") if method is None else str(method).lower()
    if meth not in ("direct", "bilinear"):
        raise ValueError(f"solve_discrete_lyapunov: unknown solver {method}")
    eye = const_like(a, numpy.eye(n, dtype=get_aval(a).dtype))
    if meth == "direct":
        big_eye = const_like(a, numpy.eye(n * n, dtype=get_aval(a).dtype))
        return _solve_vec(big_eye - _kron(a, fnp.conj(a)), q)
    a_h = mH(a)
    a_h_i_inv = fnp.linalg.inv(a_h + eye)
    b = fnp.matmul(a_h - eye, a_h_i_inv)
    c = 2 * fnp.matmul(fnp.matmul(fnp.linalg.inv(a + eye), q), a_h_i_inv)
    return solve_continuous_lyapunov(mH(b), -c)


# Riccati equations: fixed-length iterations written with array operations (no
# eigendecomposition), so they differentiate, jit and vmap. Both converge quadratically; the
# counts below leave a wide margin (a converged iteration stays put).
_SIGN_STEPS = 50
_DOUBLING_STEPS = 40


def _are_operands(name: str, a: Any, b: Any, q: Any, r: Any, e: Any, s: Any
                  ) -> tuple[Any, Any, Any, Any, Any, Any, int, int]:
    # SciPy's dtype: double precision, whatever the input's.
    ops = promote(*(as_double(x) for x in (a, b, q, r, e, s) if x is not None))
    a, b, q, r = ops[:4]
    rest = ops[4:]
    e = rest.pop(0) if e is not None else None
    s = rest.pop(0) if s is not None else None
    n = check_square(name, a, "a")
    m = check_square(name, r, "r")
    want = {"b": (b, (n, m)), "q": (q, (n, n)), "e": (e, (n, n)), "s": (s, (n, m))}
    for arg, (x, shape) in want.items():
        if x is not None and get_aval(x).shape != shape:
            raise LinAlgShapeError(f"{name}: {arg} must have shape {shape} for a {n}x{n} a and "
                                   f"a {m}x{m} r, got {get_aval(x).shape}")
    return a, b, q, r, e, s, n, m


def _are_reduced(a: Any, b: Any, q: Any, r: Any, e: Any, s: Any) -> tuple[Any, Any, Any]:
    """``(a', g, q')`` of the equivalent problem without ``e`` and ``s``: ``a' = e^-1 (a - b
    r^-1 s^H)``, ``g = b' r^-1 b'^H`` with ``b' = e^-1 b``, ``q' = q - s r^-1 s^H`` (its
    solution ``z`` gives ``x = e^-H z e^-1``)."""
    if e is not None:
        a, b = fnp.linalg.solve(e, a), fnp.linalg.solve(e, b)
    r_inv_bh = fnp.linalg.solve(r, mH(b))
    if s is not None:
        r_inv_sh = fnp.linalg.solve(r, mH(s))
        a = a - fnp.matmul(b, r_inv_sh)
        q = q - fnp.matmul(s, r_inv_sh)
    return a, fnp.matmul(b, r_inv_bh), q


def _are_result(z: Any, e: Any) -> Any:
    if e is not None:
        z = fnp.linalg.solve(mH(e), mH(fnp.linalg.solve(mH(e), mH(z))))
    return 0.5 * (z + mH(z))


@over_batch(("a", 2), ("b", 2), ("q", 2), ("r", 2), ("e", 2), ("s", 2))
def solve_continuous_are(a: Any, b: Any, q: Any, r: Any, e: Any = None, s: Any = None,
                         balanced: bool = True) -> Any:
    """The stabilising solution ``X`` of the continuous algebraic Riccati equation
    ``A^H X E + E^H X A - (E^H X B + S) R^-1 (B^H X E + S^H) + Q = 0``, as
    ``scipy.linalg.solve_continuous_are`` (``e``, ``s`` optional).

    Computed with the matrix sign function of the Hamiltonian matrix (Newton's iteration
    with determinant scaling, Byers' method; ``e`` is folded into ``a`` and ``b``), not
    SciPy's ordered Schur/QZ decomposition: array operations only, so it is differentiable
    and works under ``jit``/``vmap``. Needs a stabilisable, detectable problem (the Hamiltonian
    has no imaginary eigenvalues), nonsingular ``r`` and ``e``; ``balanced`` has no effect.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.solve_continuous_are(np.array([[0.0]]), np.array([[1.0]]), np.array([[1.0]]),
        ...                          np.array([[1.0]])).round(12)
        array([[1.]])
    """
    a, b, q, r, e, s, n, _ = _are_operands("solve_continuous_are", a, b, q, r, e, s)
    a, g, q = _are_reduced(a, b, q, r, e, s)
    z = fnp.concatenate([fnp.concatenate([a, -g], axis=-1),
                         fnp.concatenate([-q, -mH(a)], axis=-1)], axis=-2)
    for _ in range(_SIGN_STEPS):
        # scaling by |det z|^(-1/2n) speeds up the first steps; 1 once converged
        c = fnp.exp(-fnp.linalg.slogdet(z)[1] / (2 * n))[..., None, None].astype(get_aval(z).dtype)
        z = 0.5 * (c * z + fnp.linalg.inv(z) / c)
    eye = const_like(a, numpy.eye(n, dtype=get_aval(a).dtype))
    w11, w12, w21, w22 = z[..., :n, :n], z[..., :n, n:], z[..., n:, :n], z[..., n:, n:]
    # [w12; w22 + I] X = -[w11 + I; w21], solved by least squares (normal equations)
    lhs = fnp.concatenate([w12, w22 + eye], axis=-2)
    rhs = -fnp.concatenate([w11 + eye, w21], axis=-2)
    x = fnp.linalg.solve(fnp.matmul(mH(lhs), lhs), fnp.matmul(mH(lhs), rhs))
    return _are_result(x, e)


@over_batch(("a", 2), ("b", 2), ("q", 2), ("r", 2), ("e", 2), ("s", 2))
def solve_discrete_are(a: Any, b: Any, q: Any, r: Any, e: Any = None, s: Any = None,
                       balanced: bool = True) -> Any:
    """The stabilising solution ``X`` of the discrete algebraic Riccati equation
    ``A^H X A - E^H X E - (A^H X B + S) (R + B^H X B)^-1 (B^H X A + S^H) + Q = 0``, as
    ``scipy.linalg.solve_discrete_are`` (``e``, ``s`` optional).

    Computed with the structure-preserving doubling algorithm (Chu, Fan, Lin and Wang 2004)
    on ``X = A^H X (I + G X)^-1 A + Q``, ``G = B R^-1 B^H`` (``e`` and ``s`` folded in), not
    SciPy's ordered QZ decomposition: array operations only, so it is differentiable and works
    under ``jit``/``vmap``. Needs a stabilisable, detectable problem and nonsingular ``r`` and
    ``e``; ``balanced`` has no effect.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.solve_discrete_are(np.array([[1.0]]), np.array([[1.0]]), np.array([[1.0]]),
        ...                        np.array([[1.0]])).round(6)
        array([[1.618034]])
    """
    a, b, q, r, e, s, n, _ = _are_operands("solve_discrete_are", a, b, q, r, e, s)
    ak, gk, hk = _are_reduced(a, b, q, r, e, s)
    eye = const_like(a, numpy.eye(n, dtype=get_aval(a).dtype))
    for _ in range(_DOUBLING_STEPS):
        w_inv = fnp.linalg.inv(eye + fnp.matmul(gk, hk))
        a_w = fnp.matmul(ak, w_inv)
        ak, gk, hk = (fnp.matmul(a_w, ak),
                      gk + fnp.matmul(fnp.matmul(a_w, gk), mH(ak)),
                      hk + fnp.matmul(fnp.matmul(mH(ak), hk), fnp.matmul(w_inv, ak)))
    return _are_result(hk, e)
