"""Iterative linear solvers, as ``scipy.sparse.linalg.cg``/``bicgstab`` and their
``jax.scipy.sparse.linalg`` counterparts.

``A`` is a square matrix or a function computing ``A @ x`` (on arrays or pytrees, like ``b``);
``M`` a preconditioner of the same kind (approximating ``inv(A)``). The iteration is JAX's,
step for step, in a ``funcgrad.lax.while_loop``; the solve is wrapped in
``funcgrad.lax.custom_linear_solve``, so derivatives are implicit (another solve, not the
loop differentiated) and ``jit``/``vmap`` work. The second result (``info``) is ``None``, as in
JAX (SciPy returns a convergence code).

Example:
    >>> import numpy as np, funcgrad
    >>> from funcgrad.scipy.sparse.linalg import cg
    >>> A = np.array([[4.0, 1.0], [1.0, 3.0]])
    >>> funcgrad.grad(lambda b: cg(A, b)[0].sum())(np.array([1.0, 2.0])).round(6)
    array([0.181818, 0.272727])
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.lax import while_loop
from funcgrad.lax._solves import custom_linear_solve
from funcgrad.tree_util import tree_leaves, tree_map, tree_structure

__all__ = ["cg", "bicgstab"]


def _vdot_real(x: Any, y: Any) -> Any:
    out = fnp.vdot(fnp.real(x), fnp.real(y))
    if fnp.iscomplexobj(x) or fnp.iscomplexobj(y):
        out = out + fnp.vdot(fnp.imag(x), fnp.imag(y))
    return out


def _vdot_real_tree(x: Any, y: Any) -> Any:
    return sum(tree_leaves(tree_map(_vdot_real, x, y)))


def _vdot_tree(x: Any, y: Any) -> Any:
    return sum(tree_leaves(tree_map(fnp.vdot, x, y)))


def _mul(scalar: Any, tree: Any) -> Any:
    return tree_map(lambda v: scalar * v, tree)


def _add(x: Any, y: Any) -> Any:
    return tree_map(operator.add, x, y)


def _sub(x: Any, y: Any) -> Any:
    return tree_map(operator.sub, x, y)


def _identity(x: Any) -> Any:
    return x


def _as_matvec(f: Any, what: str) -> Callable[[Any], Any]:
    if callable(f):
        return f
    if hasattr(f, "shape") and hasattr(f, "ndim"):
        if f.ndim != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(f"{what}: the linear operator must be a square matrix, got shape "
                             f"{tuple(f.shape)}")
        return functools.partial(fnp.matmul, f)
    raise TypeError(f"{what}: the linear operator must be a function or a matrix, got "
                    f"{type(f).__name__}")


def _result_dtype(tree: Any) -> Any:
    return numpy.result_type(*[leaf.dtype for leaf in tree_leaves(tree)])


def _cg_solve(A: Any, b: Any, x0: Any, *, maxiter: int, tol: float, atol: float,  # noqa: N803
              M: Any) -> Any:  # noqa: N803
    bs = _vdot_real_tree(b, b)
    atol2 = fnp.maximum(tol * tol * bs, atol * atol)
    r0 = _sub(b, A(x0))
    p0 = z0 = M(r0)
    dtype = _result_dtype(p0)
    gamma0 = _vdot_real_tree(r0, z0).astype(dtype)

    def cond(state: tuple) -> Any:
        _, r, gamma, _, k = state
        rs = fnp.real(gamma) if M is _identity else _vdot_real_tree(r, r)
        return (rs > atol2) & (k < maxiter)

    def body(state: tuple) -> tuple:
        x, r, gamma, p, k = state
        ap = A(p)
        alpha = gamma / _vdot_real_tree(p, ap).astype(dtype)
        x = _add(x, _mul(alpha, p))
        r = _sub(r, _mul(alpha, ap))
        z = M(r)
        gamma_new = _vdot_real_tree(r, z).astype(dtype)
        p = _add(z, _mul(gamma_new / gamma, p))
        return x, r, gamma_new, p, k + 1

    return while_loop(cond, body, (x0, r0, gamma0, p0, fnp.asarray(0)))[0]


def _bicgstab_solve(A: Any, b: Any, x0: Any, *, maxiter: int, tol: float,  # noqa: N803
                    atol: float, M: Any) -> Any:  # noqa: N803
    bs = _vdot_real_tree(b, b)
    atol2 = fnp.maximum(tol * tol * bs, atol * atol)
    r0 = _sub(b, A(x0))
    one = fnp.ones((), _result_dtype(b))

    def cond(state: tuple) -> Any:
        r, k = state[1], state[-1]
        return (_vdot_real_tree(r, r) > atol2) & (k < maxiter) & (k >= 0)

    def body(state: tuple) -> tuple:
        x, r, rhat, alpha, omega, rho, p, q, k = state
        rho_ = _vdot_tree(rhat, r)
        beta = rho_ / rho * alpha / omega
        p_ = _add(r, _mul(beta, _sub(p, _mul(omega, q))))
        phat = M(p_)
        q_ = A(phat)
        alpha_ = rho_ / _vdot_tree(rhat, q_)
        s = _sub(r, _mul(alpha_, q_))
        exit_early = _vdot_real_tree(s, s) < atol2
        shat = M(s)
        t = A(shat)
        omega_ = _vdot_tree(t, s) / _vdot_tree(t, t)
        x_ = tree_map(functools.partial(fnp.where, exit_early),
                      _add(x, _mul(alpha_, phat)),
                      _add(x, _add(_mul(alpha_, phat), _mul(omega_, shat))))
        r_ = tree_map(functools.partial(fnp.where, exit_early), s, _sub(s, _mul(omega_, t)))
        # A breakdown (rho, omega or alpha 0) stops the loop, as JAX.
        k_ = fnp.where((omega_ == 0) | (alpha_ == 0), -11, k + 1)
        k_ = fnp.where(rho_ == 0, -10, k_)
        return x_, r_, rhat, alpha_, omega_, rho_, p_, q_, k_

    init = (x0, r0, r0, one, one, one, r0, r0, fnp.asarray(0))
    return while_loop(cond, body, init)[0]


def _isolve(name: str, solve: Any, A: Any, b: Any, x0: Any, *, tol: float,  # noqa: N803
            atol: float, maxiter: Any, M: Any, check_symmetric: bool) -> tuple[Any, None]:  # noqa: N803
    b = tree_map(fnp.asarray, b)
    if x0 is None:
        x0 = tree_map(fnp.zeros_like, b)
    x0 = tree_map(fnp.asarray, x0)
    if maxiter is None:
        maxiter = 10 * sum(leaf.size for leaf in tree_leaves(b))  # SciPy's default
    A = _as_matvec(A, name)
    M = _identity if M is None else _as_matvec(M, name)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(f"{name}: x0 and b must have matching tree structure: "
                         f"{tree_structure(x0)} vs {tree_structure(b)}")
    shapes_b = [tuple(leaf.shape) for leaf in tree_leaves(b)]
    shapes_x = [tuple(leaf.shape) for leaf in tree_leaves(x0)]
    if shapes_x != shapes_b:
        raise ValueError(f"{name}: arrays in x0 and b must have matching shapes: {shapes_x} "
                         f"vs {shapes_b}")
    run = functools.partial(solve, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
    symmetric = check_symmetric and not any(fnp.iscomplexobj(leaf) for leaf in tree_leaves(b))
    x = custom_linear_solve(A, b, solve=run, transpose_solve=run, symmetric=symmetric)
    return x, None


def cg(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,  # noqa: N803
       maxiter: Any = None, M: Any = None) -> tuple[Any, None]:  # noqa: N803
    """Solve ``A x = b`` by conjugate gradients (``A`` symmetric / Hermitian positive
    definite), until ``norm(residual) <= max(tol * norm(b), atol)`` or ``maxiter``
    iterations (default ``10 * size``). Returns ``(x, None)``; ``x`` is differentiable (the
    derivative is one more solve with ``A``, which cg assumes symmetric).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.sparse.linalg import cg
        >>> x, info = cg(lambda v: 2.0 * v, np.array([2.0, 4.0]))
        >>> x, info
        (array([1., 2.]), None)
    """
    return _isolve("cg", _cg_solve, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M,
                   check_symmetric=True)


def bicgstab(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,  # noqa: N803
             maxiter: Any = None, M: Any = None) -> tuple[Any, None]:  # noqa: N803
    """Solve ``A x = b`` by the biconjugate gradient stabilized method (``A`` need not be
    symmetric), stopping as :func:`cg` does or at a breakdown. Returns ``(x, None)``;
    differentiable (the derivative solves with ``A``'s transpose).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.sparse.linalg import bicgstab
        >>> bicgstab(np.array([[2.0, 1.0], [0.0, 3.0]]), np.array([3.0, 3.0]))[0].round(6)
        array([1., 1.])
    """
    return _isolve("bicgstab", _bicgstab_solve, A, b, x0, tol=tol, atol=atol,
                   maxiter=maxiter, M=M, check_symmetric=False)
