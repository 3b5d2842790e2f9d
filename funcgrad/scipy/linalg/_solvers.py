"""Matrix equation solvers of funcgrad.scipy.linalg: SciPy's continuous and discrete
Lyapunov equations, as linear systems in ``vec(X)`` (Kronecker form)."""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.errors import LinAlgShapeError
from funcgrad.scipy.linalg._sylvester import solve_sylvester
from funcgrad.scipy.linalg._util import check_square, const_like, mH, promote

__all__ = ["solve_continuous_lyapunov", "solve_lyapunov", "solve_discrete_lyapunov"]

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


def solve_continuous_lyapunov(a: Any, q: Any) -> Any:
    """``X`` with ``A X + X A^H = Q``, as ``scipy.linalg.solve_continuous_lyapunov`` (also
    ``solve_lyapunov``). Up to 32x32 solved as the linear system
    ``(A (x) I + I (x) conj(A)) vec(X) = vec(Q)``: differentiable, ``jit``/``vmap``-able;
    larger matrices go through :func:`solve_sylvester`'s Schur forms (not differentiable).

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
    a, q, n = _operands("solve_discrete_lyapunov", a, q)
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
