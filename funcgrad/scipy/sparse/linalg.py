"""Iterative linear solvers, as ``scipy.sparse.linalg.cg``/``bicgstab``/``gmres`` and their
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
from funcgrad.backend import is_array
from funcgrad.core import Tracer
from funcgrad.lax import fori_loop, while_loop
from funcgrad.lax._solves import custom_linear_solve
from funcgrad.numpy import at as _at
from funcgrad.scipy._device import keep_host_inputs_on_host as _keep_host_inputs_on_host
from funcgrad.scipy.linalg import solve, solve_triangular
from funcgrad.tree_util import tree_leaves, tree_map, tree_structure

__all__ = ["cg", "bicgstab", "gmres"]


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
        if isinstance(f, Tracer) or is_array(f):
            return functools.partial(fnp.matmul, f)
        # any other square operator with ``@`` (a sparse BCOO matrix), as JAX accepts it
        return functools.partial(operator.matmul, f)
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


def _prepared(name: str, A: Any, b: Any, x0: Any, M: Any) -> tuple[Any, Any, Any, Any]:  # noqa: N803
    """The solvers' common arguments checked and made callable: ``(A, b, x0, M)`` with ``b``
    and ``x0`` pytrees of arrays of one structure and shapes (``x0`` zeros by default), ``A``
    and ``M`` (the identity by default) functions."""
    b = tree_map(fnp.asarray, b)
    if x0 is None:
        x0 = tree_map(fnp.zeros_like, b)
    x0 = tree_map(fnp.asarray, x0)
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
    return A, b, x0, M


def _isolve(name: str, solve: Any, A: Any, b: Any, x0: Any, *, tol: float,  # noqa: N803
            atol: float, maxiter: Any, M: Any, check_symmetric: bool) -> tuple[Any, None]:  # noqa: N803
    A, b, x0, M = _prepared(name, A, b, x0, M)
    if maxiter is None:
        maxiter = 10 * sum(leaf.size for leaf in tree_leaves(b))  # SciPy's default
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


# ---------------------------------------------------------------------------------------------
# GMRES (JAX's restarted GMRES: Arnoldi with classical Gram-Schmidt twice, then either the
# least-squares problem solved once per restart or Givens rotations as it goes)


def _norm_tree(x: Any) -> Any:
    return fnp.sqrt(_vdot_real_tree(x, x))


def _safe_normalize(x: Any, thresh: Any = None) -> tuple[Any, Any]:
    """``x / norm(x)`` and the norm; a norm at or below ``thresh`` (default the dtype's eps)
    counts as 0 and gives the zero vector (an invariant subspace was found)."""
    norm = _norm_tree(x)
    dtype = _result_dtype(x)
    if thresh is None:
        thresh = numpy.finfo(norm.dtype).eps
    use_norm = norm > fnp.real(fnp.asarray(thresh).astype(dtype))
    norm_cast = norm.astype(dtype)
    safe = fnp.where(use_norm, norm_cast, fnp.ones((), dtype))
    normalized = tree_map(lambda y: fnp.where(use_norm, y / safe, fnp.zeros((), y.dtype)), x)
    return normalized, fnp.where(use_norm, norm, fnp.zeros((), norm.dtype))


def _project_on_columns(basis: Any, v: Any) -> Any:
    """``basis^H @ v`` summed over the leaves (the Krylov vectors are each leaf's last axis)."""
    return sum(tree_leaves(tree_map(
        lambda q, y: fnp.matmul(fnp.reshape(y, (-1,)),
                                fnp.conj(fnp.reshape(q, (-1, q.shape[-1])))), basis, v)))


def _dot_last(basis: Any, h: Any) -> Any:
    return tree_map(lambda q: fnp.matmul(q, h), basis)


def _gram_schmidt(basis: Any, x: Any) -> tuple[Any, Any]:
    """Orthogonalize ``x`` against ``basis``'s columns: one classical Gram-Schmidt pass
    (JAX's loop asks for up to two, but its condition never admits the second)."""
    h = _project_on_columns(basis, x)
    return _sub(x, _dot_last(basis, h)), h


def _arnoldi_step(k: Any, A: Any, M: Any, V: Any, H: Any) -> tuple[Any, Any, Any]:  # noqa: N803
    """The ``k``-th Arnoldi step: ``M(A(V[:, k]))`` orthonormalized into ``V[:, k + 1]``,
    its overlaps into ``H[k, :]``."""
    dtype = _result_dtype(V)
    eps = numpy.finfo(dtype).eps
    v = tree_map(lambda x: x[..., k], V)
    v = M(A(v))
    _, v_norm_0 = _safe_normalize(v)
    v, h = _gram_schmidt(V, v)
    unit_v, v_norm_1 = _safe_normalize(v, thresh=eps * v_norm_0)
    V = tree_map(lambda x, y: _at(x)[..., k + 1].set(y), V, unit_v)
    h = _at(h)[k + 1].set(v_norm_1.astype(dtype))
    return V, _at(H)[k, :].set(h), v_norm_1 == 0


def _rotate(H: Any, i: Any, cs: Any, sn: Any) -> Any:  # noqa: N803
    x1, y1 = H[i], H[i + 1]
    H = _at(H)[i].set(fnp.conj(cs) * x1 - fnp.conj(sn) * y1)
    return _at(H)[i + 1].set(sn * x1 + cs * y1)


def _givens(a: Any, b: Any) -> tuple[Any, Any]:
    b_zero = fnp.abs(b) == 0
    a_lt_b = fnp.abs(a) < fnp.abs(b)
    num = fnp.where(a_lt_b, a, b)
    den = fnp.where(a_lt_b, b, a)
    t = -num / fnp.where(den == 0, fnp.ones((), den.dtype), den)
    r = (1.0 / fnp.sqrt(1.0 + fnp.abs(t) ** 2)).astype(t.dtype)
    one = fnp.ones((), t.dtype)
    cs = fnp.where(b_zero, one, fnp.where(a_lt_b, r * t, r))
    sn = fnp.where(b_zero, 0 * one, fnp.where(a_lt_b, r, r * t))
    return cs, sn


def _krylov_start(unit_residual: Any, restart: int) -> Any:
    return tree_map(lambda x: fnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)),
                    unit_residual)


def _gmres_finish(A: Any, M: Any, b: Any, x0: Any, V: Any, y: Any) -> tuple:  # noqa: N803
    x = _add(x0, tree_map(lambda q: fnp.matmul(q[..., :-1], y), V))
    unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x))))
    return x, unit_residual, residual_norm


def _gmres_incremental(A: Any, b: Any, x0: Any, unit_residual: Any, residual_norm: Any,  # noqa: N803
                       ptol: Any, restart: int, M: Any) -> tuple:  # noqa: N803
    V = _krylov_start(unit_residual, restart)
    dtype = _result_dtype(b)
    R = fnp.eye(restart, restart + 1, dtype=dtype)  # eye: never singular if it stops early
    givens = fnp.zeros((restart, 2), dtype)
    beta = _at(fnp.zeros(restart + 1, dtype))[0].set(residual_norm.astype(dtype))

    def cond(carry: tuple) -> Any:
        k, err = carry[0], carry[1]
        return (k < restart) & (err > ptol)

    def step(carry: tuple) -> tuple:
        k, _, V, R, beta, givens = carry
        V, H, _ = _arnoldi_step(k, A, M, V, R)
        row = fori_loop(0, k, lambda i, r: _rotate(r, i, givens[i, 0], givens[i, 1]),
                        H[k, :])  # the rotations found so far
        cs, sn = _givens(row[k], row[k + 1])
        givens = _at(givens)[k, :].set(fnp.stack([cs, sn]))
        row = _rotate(row, k, cs, sn)
        R = _at(R)[k, :].set(row)
        beta = _rotate(beta, k, cs, sn)
        return k + 1, fnp.abs(beta[k + 1]), V, R, beta, givens

    carry = (fnp.asarray(0), residual_norm, V, R, beta, givens)
    _, _, V, R, beta, _ = while_loop(cond, step, carry)
    y = solve_triangular(R[:, :-1].T, beta[:-1])
    return _gmres_finish(A, M, b, x0, V, y)


def _gmres_batched(A: Any, b: Any, x0: Any, unit_residual: Any, residual_norm: Any,  # noqa: N803
                   ptol: Any, restart: int, M: Any) -> tuple:  # noqa: N803
    del ptol  # the whole subspace is built, then one least-squares solve
    V = _krylov_start(unit_residual, restart)
    dtype = _result_dtype(b)
    H = fnp.eye(restart, restart + 1, dtype=dtype)

    def cond(carry: tuple) -> Any:
        _, _, breakdown, k = carry
        return (k < restart) & ~breakdown

    def step(carry: tuple) -> tuple:
        V, H, _, k = carry
        V, H, breakdown = _arnoldi_step(k, A, M, V, H)
        return V, H, breakdown, k + 1

    V, H, _, _ = while_loop(cond, step, (V, H, fnp.asarray(False), fnp.asarray(0)))
    beta = _at(fnp.zeros(restart + 1, dtype))[0].set(residual_norm.astype(dtype))
    a = H.T
    ah = fnp.conj(a).T
    y = solve(ah @ a, ah @ beta, assume_a="pos")
    return _gmres_finish(A, M, b, x0, V, y)


_GMRES_METHODS = {"incremental": _gmres_incremental, "batched": _gmres_batched}


def gmres(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,  # noqa: N803
          restart: int = 20, maxiter: Any = None, M: Any = None,  # noqa: N803
          solve_method: str = "batched") -> tuple[Any, Any]:
    """Solve ``A x = b`` by restarted GMRES (``A`` any invertible operator), as
    ``jax.scipy.sparse.linalg.gmres``: Krylov spaces of dimension ``restart`` (at most the
    size of ``b``) rebuilt from the last solution up to ``maxiter`` times (default
    ``10 * size``), until ``norm(residual) <= max(tol * norm(b), atol)``.
    ``solve_method="batched"`` (default) solves the least-squares problem once per restart;
    ``"incremental"`` keeps a QR factorization by Givens rotations and may stop within a
    restart. ``M`` is a (left) preconditioner approximating ``inv(A)``. Returns
    ``(x, info)``: ``info`` is 0, or -1 where ``x`` came out NaN (as JAX). ``x`` is
    differentiable (the derivative is a solve with ``A``'s transpose).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.sparse.linalg import gmres
        >>> x, info = gmres(np.array([[3.0, 1.0], [-1.0, 2.0]]), np.array([5.0, 3.0]))
        >>> x.round(6), int(info)
        (array([1., 2.]), 0)
    """
    if solve_method not in _GMRES_METHODS:
        raise ValueError(f"gmres: invalid solve_method {solve_method!r}, must be either "
                         f"'incremental' or 'batched'")
    gmres_func = _GMRES_METHODS[solve_method]
    A, b, x0, M = _prepared("gmres", A, b, x0, M)
    size = sum(leaf.size for leaf in tree_leaves(b))
    if maxiter is None:
        maxiter = 10 * size  # SciPy's default
    if not isinstance(restart, int | numpy.integer) or restart < 1:
        raise ValueError(f"gmres: restart must be a positive integer, got {restart!r}")
    restart = min(int(restart), size)
    b_norm = _norm_tree(b)
    atol_ = fnp.maximum(tol * b_norm, atol)
    mb_norm = _norm_tree(M(b))
    ptol = mb_norm * fnp.minimum(1.0, atol_ / b_norm)

    def _solve(A: Any, b: Any) -> Any:  # noqa: N803
        residual = M(_sub(b, A(x0)))
        unit_residual, residual_norm = _safe_normalize(residual)

        def cond(value: tuple) -> Any:
            _, k, _, rnorm = value
            return (k < maxiter) & (rnorm > atol_)

        def body(value: tuple) -> tuple:
            x, k, unit, rnorm = value
            x, unit, rnorm = gmres_func(A, b, x, unit, rnorm, ptol, restart, M)
            return x, k + 1, unit, rnorm

        return while_loop(cond, body, (x0, fnp.asarray(0), unit_residual, residual_norm))[0]

    x = custom_linear_solve(A, b, solve=_solve, transpose_solve=_solve)
    info = fnp.where(fnp.isnan(_norm_tree(x)), -1, 0)
    return x, info

# NumPy inputs compute on the host whatever the default device (funcgrad.scipy._device)
_keep_host_inputs_on_host(globals(), __all__)
