"""optax's linear-algebra helpers (optax 0.2.8's ``optax.power_iteration``,
``matrix_inverse_pth_root`` and ``nnls``): the dominant eigenpair of a matrix or of a
matrix-vector product over pytrees, ``A^(-1/p)`` by coupled Newton iterations (Shampoo's
preconditioner), and non-negative least squares by fast projected gradient. Loops are
``lax.while_loop`` / ``lax.scan``, so all three trace under ``jit``.

>>> import numpy as np
>>> from funcgrad_nn import optim
>>> eig, vec = optim.power_iteration(np.diag([1.0, 3.0]), v0=np.array([1.0, 1.0]))
>>> round(float(eig), 6), np.round(np.abs(vec), 3)
(3.0, array([0., 1.]))
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad import random as frandom
from funcgrad_nn.optim import tree as _tree

__all__ = ["power_iteration", "matrix_inverse_pth_root", "nnls"]


def _normalized(x: Any) -> Any:
    return _tree.scale(1.0 / _tree.norm(x), x)


def power_iteration(matrix: Any, *, v0: Any = None, num_iters: int = 100,
                    error_tolerance: float = 1e-6, precision: Any = None,
                    key: Any = None) -> tuple[Any, Any]:
    """The dominant eigenvalue (the spectral radius) of a diagonalizable matrix and its
    unit eigenvector, ``(eigenvalue, eigenvector)`` (optax's ``power_iteration``).
    ``matrix`` is a square array or a function computing a matrix-vector product on a pytree
    (then ``v0``, a pytree of its input's structure, is required). It stops after
    ``num_iters`` iterations or once ``|residual| / |eigenvalue| < error_tolerance``. Without
    ``v0`` it starts from a uniform [-1, 1] draw of ``key`` (default ``random.PRNGKey(0)``;
    funcgrad.random's bits, not JAX's).

    >>> import numpy as np
    >>> hvp = lambda v: {"a": 2.0 * v["a"], "b": 5.0 * v["b"]}
    >>> eig, vec = power_iteration(hvp, v0={"a": np.ones(2), "b": np.ones(1)})
    >>> round(float(eig), 5)
    5.0
    """
    if callable(matrix):
        mvp = matrix
        if v0 is None:
            raise ValueError("v0 must be provided when `matrix` is a callable.")
    else:
        matrix = fnp.asarray(matrix)
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
            raise ValueError(f"power_iteration: matrix must be square (n, n), got shape "
                             f"{matrix.shape}")

        def mvp(v: Any) -> Any:
            return fnp.matmul(matrix, v, precision=precision)

        if v0 is None:
            key = frandom.PRNGKey(0) if key is None else key
            v0 = frandom.uniform(key, shape=matrix.shape[-1:], dtype=matrix.dtype,
                                 minval=-1.0, maxval=1.0)
    v0 = _normalized(v0)

    def cond(carry: Any) -> Any:
        vec, z, eig, i = carry
        residual = _tree.norm(_tree.sub(z, _tree.scale(eig, vec)))
        # optax's |residual / eig| < tol, multiplied out: no 0/0 warning at the start (eig = 0)
        return ~(fnp.abs(residual) < error_tolerance * fnp.abs(eig)) & (i < num_iters)

    def body(carry: Any) -> Any:
        _, z, _, i = carry
        vec = _normalized(z)
        z = mvp(vec)
        return vec, z, _tree.vdot(vec, z), i + 1

    z0 = mvp(v0)
    zero = fnp.zeros_like(_tree.vdot(v0, z0))
    _, z, eig, _ = lax.while_loop(cond, body, (v0, z0, zero, fnp.zeros_like(zero, dtype=int)))
    return eig, _normalized(z)


def matrix_inverse_pth_root(matrix: Any, p: int, num_iters: int = 100,
                            ridge_epsilon: float = 1e-6, error_tolerance: float = 1e-6,
                            precision: Any = None) -> tuple[Any, Any]:
    """``(matrix + ridge) ^ (-1/p)`` of a symmetric PSD matrix and the final error
    ``max|M - I|``, by the coupled Newton iteration (Higham, Functions of Matrices, eq. 7.18;
    optax's ``matrix_inverse_pth_root``, as in Shampoo). ``p`` is 1, 2, 4 or 8; the ridge
    is ``ridge_epsilon`` times the largest eigenvalue (by :func:`power_iteration`).

    >>> import numpy as np
    >>> root, err = matrix_inverse_pth_root(np.diag([4.0, 16.0]), 2)
    >>> np.round(root, 4)
    array([[0.5 , 0.  ],
           [0.  , 0.25]])
    """
    if p not in (1, 2, 4, 8):
        raise ValueError(f"matrix_inverse_pth_root: p must be 1, 2, 4 or 8, got {p!r}")
    matrix = fnp.asarray(matrix)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"matrix_inverse_pth_root: matrix must be square (n, n), got shape "
                         f"{matrix.shape}")
    n = matrix.shape[0]
    # optax computes alpha (and the identity) in float32: the same iterates to the last bit
    alpha = float(np.float32(-1.0 / p))
    identity = fnp.eye(n, dtype=np.float32)
    max_ev, _ = power_iteration(matrix, num_iters=100, error_tolerance=1e-6,
                                precision=precision)
    ridge = ridge_epsilon * fnp.maximum(max_ev, 1e-16)

    def power(m: Any) -> Any:
        for _ in range(int(round(np.log2(p)))):
            m = fnp.matmul(m, m, precision=precision)
        return m

    if n == 1:
        return (matrix + ridge) ** alpha, fnp.zeros_like(max_ev)

    def cond(state: Any) -> Any:
        i, _, _, _, error, run = state
        return (i < num_iters) & ((error > error_tolerance) & run)

    def body(state: Any) -> Any:
        i, m, h, _, error, _ = state
        m_i = (1 - alpha) * identity + alpha * m
        new_m = fnp.matmul(power(m_i), m, precision=precision)
        new_h = fnp.matmul(h, m_i, precision=precision)
        new_error = fnp.max(fnp.abs(new_m - identity))
        return i + 1, new_m, new_h, h, new_error, new_error < error * 1.2

    damped = matrix + ridge * identity
    z = (1 + p) / (2 * fnp.linalg.norm(damped))
    m0 = damped * z
    h0 = identity * fnp.power(z, 1.0 / p)
    e0 = fnp.max(fnp.abs(m0 - identity))
    i0 = fnp.zeros_like(e0, dtype=int)
    _, m, h, old_h, _, converged = lax.while_loop(
        cond, body, (i0, m0, h0, h0, e0, fnp.ones_like(e0, dtype=bool)))
    error = fnp.max(fnp.abs(m - identity))
    # the last iterate unless it diverged (the error grew), then the one before
    result = fnp.where(converged, h, old_h)
    return fnp.asarray(result, dtype=matrix.dtype), error


def nnls(A: Any, b: Any, iters: int, unroll: int | bool = 1, L: Any = None) -> Any:
    """``argmin ||A x - b||_2`` subject to ``x >= 0`` by Polyak's fast projected gradient
    (optax's ``nnls``): ``A`` is ``(M, N)``, ``b`` ``(M,)`` or ``(M, K)``; ``L`` bounds the
    spectral radius of ``A^T A`` (default: the smaller of its Frobenius and 1-norms).

    >>> import numpy as np
    >>> x = nnls(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([5.0, 6.0]), 1000)
    >>> np.round(x, 2)
    array([0. , 1.7])
    """
    A, b = fnp.asarray(A), fnp.asarray(b)
    if A.ndim != 2 or b.ndim not in (1, 2) or b.shape[0] != A.shape[0]:
        raise ValueError(f"nnls: A must be (M, N) and b (M,) or (M, K) with the same M, got "
                         f"A {A.shape} and b {b.shape}")
    Q = fnp.swapaxes(A, -1, -2) @ A
    q = fnp.swapaxes(A, -1, -2) @ b
    if L is None:
        L = (fnp.minimum(fnp.linalg.matrix_norm(Q, ord="fro"), fnp.linalg.matrix_norm(Q, ord=1))
             if Q.size else fnp.zeros_like(Q, shape=()))
    L = fnp.where(L == 0, 1, L)

    def step(carry: Any, _: Any) -> Any:
        x, y, c = carry
        cn = (1 + fnp.sqrt(1 + 4 * c ** 2)) / 2
        s = (c - 1) / cn
        xn = fnp.clip(y - (Q @ y - q) / L, 0, None)
        return (xn, xn + s * (xn - x), cn), None

    x = fnp.zeros_like(b, shape=A.shape[-1:] + b.shape[1:])
    c0 = fnp.zeros_like(b, shape=())
    (x, _, _), _ = lax.scan(step, (x, x, c0), length=iters, unroll=unroll)
    return x

