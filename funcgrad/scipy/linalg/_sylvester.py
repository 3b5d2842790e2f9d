"""``solve_sylvester`` of funcgrad.scipy.linalg: ``A X + X B = C`` by Bartels-Stewart (Schur
forms) or through the eigendecompositions, as ``jax.scipy.linalg.solve_sylvester``."""

from __future__ import annotations

import functools
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.ops import schur as _schur
from funcgrad.ops.custom_derivatives import custom_jvp
from funcgrad.scipy.linalg._util import as_inexact, const_like, mH, promote

__all__ = ["solve_sylvester"]


def _bartels_stewart(a: Any, b: Any, c: Any) -> Any:
    # a = u r u^H (r upper triangular), b^H = v s v^H, so with y = u^H x v:
    # r y + y s^H = u^H c v, and s^H is lower triangular: the columns of y come out last first.
    r, u = _schur.schur(a, "complex")
    s, v = _schur.schur(mH(b), "complex")
    low = mH(s)
    f = fnp.matmul(fnp.matmul(mH(u), c.astype(get_aval(r).dtype)), v)
    m, n = get_aval(c).shape[-2:]
    eye = const_like(r, numpy.eye(m, dtype=get_aval(r).dtype))   # on r's device
    cols: list[Any] = [None] * n
    for j in range(n - 1, -1, -1):
        rhs = f[..., :, j]
        for k in range(j + 1, n):
            rhs = rhs - cols[k] * low[..., k, j][..., None]
        cols[j] = fnp.linalg.solve(r + low[..., j, j][..., None, None] * eye,
                                   rhs[..., None])[..., 0]
    y = fnp.stack(cols, axis=-1)
    return fnp.matmul(fnp.matmul(u, y), mH(v))


def _through_eig(a: Any, b: Any, c: Any) -> Any:
    wa, ua = fnp.linalg.eig(a)
    wb, ub = fnp.linalg.eig(b)
    f = fnp.linalg.solve(ua, fnp.matmul(c.astype(get_aval(wa).dtype), ub))
    y = f / (wa[..., :, None] + wb[..., None, :])
    return fnp.matmul(fnp.matmul(ua, y), fnp.linalg.inv(ub))


_UNSET: Any = object()


def _operand(jax_name: str, jax_value: Any, scipy_name: str, scipy_value: Any) -> Any:
    """One operand given under JAX's name (``A``/``B``/``C``, or by position) or SciPy's
    (``a``/``b``/``q``), not both and not neither."""
    if jax_value is _UNSET and scipy_value is _UNSET:
        raise TypeError(f"solve_sylvester: missing the argument {jax_name!r} "
                        f"(SciPy's {scipy_name!r})")
    if jax_value is not _UNSET and scipy_value is not _UNSET:
        raise TypeError(f"solve_sylvester: got both {jax_name!r} and SciPy's name for it, "
                        f"{scipy_name!r}")
    return jax_value if scipy_value is _UNSET else scipy_value


def solve_sylvester(A: Any = _UNSET, B: Any = _UNSET, C: Any = _UNSET, *,  # noqa: N803
                    method: str = "schur", tol: float = 1e-8, a: Any = _UNSET,
                    b: Any = _UNSET, q: Any = _UNSET) -> Any:
    """``X`` with ``A X + X B = C`` for (batches of) ``A (m, m)``, ``B (n, n)``, ``C (m, n)``,
    as ``jax.scipy.linalg.solve_sylvester`` (SciPy's ``solve_sylvester(a, b, q)`` is the
    same equation, and its keyword names ``a=``, ``b=``, ``q=`` are accepted too).
    ``method="schur"`` (Bartels-Stewart on the complex Schur forms: robust,
    defective matrices included) or ``"eigen"`` (through the eigendecompositions: needs
    diagonalisable ``A`` and ``B``). Differentiable in ``A``, ``B`` and ``C`` with either
    method (``dX`` solves the same equation with ``dC - dA X - X dB``; JAX's ``"schur"`` has
    no derivative; with ``"schur"`` a derivative of a reverse-mode derivative, such as
    ``hessian``, raises ``MissingRuleError``: use ``"eigen"`` or ``jacrev(jacfwd(f))``). Where some
    eigenvalue sum ``|w_A + w_B|`` is below ``tol`` (no unique solution) the result is NaN,
    as JAX. Real when ``C`` is real.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> a, b = np.array([[1.0, 2.0], [0.0, 3.0]]), np.array([[4.0, 1.0], [0.0, 5.0]])
        >>> fsl.solve_sylvester(a, b, np.eye(2)).round(6).tolist()
        [[0.2, -0.075], [0.0, 0.125]]
        >>> fsl.solve_sylvester(a=a, b=b, q=np.eye(2)).round(6).tolist()   # SciPy's names
        [[0.2, -0.075], [0.0, 0.125]]
    """
    A, B, C = (_operand("A", A, "a", a), _operand("B", B, "b", b),  # noqa: N806
               _operand("C", C, "q", q))
    a, b, c = promote(as_inexact(A), as_inexact(B), as_inexact(C))
    sa, sb, sc = (get_aval(x).shape for x in (a, b, c))
    if len(sc) < 2 or sa[-2:] != (sc[-2], sc[-2]) or sb[-2:] != (sc[-1], sc[-1]):
        raise ValueError(f"solve_sylvester: incompatible shapes A {sa}, B {sb}, C {sc} (A must "
                         "be (..., m, m), B (..., n, n), C (..., m, n))")
    if method not in _SOLVERS:
        raise ValueError(f"solve_sylvester: unrecognized method {method!r}; the two valid "
                         "methods are 'schur' and 'eigen'")
    return _solve(a, b, c, method, tol)


_SOLVERS = {"schur": _bartels_stewart, "eigen": _through_eig}


# The solution's derivative by implicit differentiation: A X + X B = C gives
# A dX + dX B = dC - dA X - X dB, the same equation for dX (so the Schur forms, which have no
# derivative rule, are only ever taken of A and B themselves).
@functools.partial(custom_jvp, nondiff_argnums=(3, 4))
def _solve(a: Any, b: Any, c: Any, method: str, tol: float) -> Any:
    sa, sb = get_aval(a).shape, get_aval(b).shape
    sums = fnp.linalg.eigvals(a)[..., :, None] + fnp.linalg.eigvals(b)[..., None, :]
    singular = fnp.any(fnp.abs(sums) < tol, axis=(-2, -1))[..., None, None]
    # A singular equation gives NaN (JAX's); the solver runs on identities there instead, so
    # that it never meets a singular system (an error eagerly).
    x = _SOLVERS[method](fnp.where(singular, fnp.eye(sa[-1], dtype=get_aval(a).dtype), a),
                         fnp.where(singular, fnp.eye(sb[-1], dtype=get_aval(b).dtype), b), c)
    if get_aval(c).dtype.kind != "c":
        x = fnp.real(x)
    return fnp.where(singular, fnp.nan, x)


@_solve.defjvp
def _solve_jvp(method: str, tol: float, primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (a, b, c), (ta, tb, tc) = primals, tangents
    x = _solve(a, b, c, method, tol)
    return x, _solve(a, b, tc - fnp.matmul(ta, x) - fnp.matmul(x, tb), method, tol)
