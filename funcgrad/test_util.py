"""Numerical checks of derivatives: ``check_grads``, ``check_jvp``, ``check_vjp`` and friends.

JVPs are compared with central differences in random directions; VJPs through the
inner-product identity ``<u, J v> == <J^T u, v>``; higher orders recursively, by checking the
derivatives of the JVP/VJP functions themselves.

Example:
    >>> import numpy as np, funcgrad.numpy as fnp
    >>> check_grads(lambda x: fnp.sin(x) * x, (np.linspace(0.1, 1.0, 4),), order=2)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy

from funcgrad import tree_util
from funcgrad.api import jvp, vjp
from funcgrad.avals import float0, get_aval
from funcgrad.backend import device_of, device_put, to_numpy

__all__ = [
    "check_grads",
    "check_jvp",
    "check_vjp",
    "numerical_jvp",
    "gradcheck",
    "gradgradcheck",
    "default_tolerance",
]

_EPS = {numpy.dtype("float64"): 1e-5, numpy.dtype("float32"): 1e-3,
        numpy.dtype("complex128"): 1e-5, numpy.dtype("complex64"): 1e-3,
        numpy.dtype("float16"): 1e-1}
_TOL = {numpy.dtype("float64"): 1e-5, numpy.dtype("float32"): 2e-2,
        numpy.dtype("complex128"): 1e-5, numpy.dtype("complex64"): 2e-2,
        numpy.dtype("float16"): 1e-1}


def default_tolerance(dtype: Any) -> float:
    """The default atol/rtol of the checks for values of ``dtype``.

    Example:
        >>> default_tolerance(numpy.float64)
        1e-05
    """
    return _TOL.get(numpy.dtype(dtype), 1e-5)


def _is_diff(x: Any) -> bool:
    return get_aval(x).dtype.kind in "fc"


def _as_host(x: Any) -> numpy.ndarray:
    return numpy.asarray(to_numpy(x))


def _like(v: numpy.ndarray, x: Any) -> Any:
    """``v`` (host) with the dtype of ``x``, on ``x``'s device."""
    dt = get_aval(x).dtype
    v = numpy.asarray(v, dtype=dt)
    dev = device_of(x)
    return device_put(v, dev) if dev not in (None, "cpu") else v


def _rand_like(rng: numpy.random.Generator, x: Any) -> Any:
    a = get_aval(x)
    v = rng.standard_normal(a.shape)
    if a.dtype.kind == "c":
        v = v + 1j * rng.standard_normal(a.shape)
    if isinstance(x, float | complex):
        return type(x)(v) if a.dtype.kind in "fc" else x
    return _like(v, x)


def _zeros_tangent(x: Any) -> Any:
    a = get_aval(x)
    if a.dtype.kind in "fc":
        return _like(numpy.zeros(a.shape), x)
    return numpy.zeros(a.shape, dtype=float0)


def _add_scaled(x: Any, v: Any, s: float) -> Any:
    if isinstance(x, float | complex):
        return x + s * v
    a = get_aval(x)
    return _like(_as_host(x) + s * _as_host(v), x) if a.ndim or not isinstance(
        x, numpy.generic) else a.dtype.type(_as_host(x) + s * _as_host(v))


def _inner(xs: Sequence[Any], ys: Sequence[Any]) -> complex:
    total = 0.0
    for x, y in zip(xs, ys):
        if getattr(x, "dtype", None) == float0 or getattr(y, "dtype", None) == float0:
            continue
        total = total + numpy.sum(_as_host(x).astype(complex) * _as_host(y).astype(complex))
    return total


def _eps_for(args: Sequence[Any]) -> float:
    eps = 1e-5
    for leaf in tree_util.tree_leaves(args):
        if _is_diff(leaf):
            eps = max(eps, _EPS.get(get_aval(leaf).dtype, 1e-5))
    return eps


def _tol_for(tree: Any) -> float:
    tol = 1e-5
    for leaf in tree_util.tree_leaves(tree):
        dt = getattr(leaf, "dtype", None)
        if dt is not None and dt != float0:
            tol = max(tol, _TOL.get(numpy.dtype(dt), 1e-5))
    return tol


def numerical_jvp(
    f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], eps: float | None = None
) -> Any:
    """Central-difference ``(f(x + eps t) - f(x - eps t)) / (2 eps)``, leaf by leaf.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> round(float(numerical_jvp(fnp.sin, (0.0,), (1.0,))), 6)
        1.0
    """
    eps = eps if eps is not None else _eps_for(primals)
    p_leaves, tree = tree_util.tree_flatten(tuple(primals))
    t_leaves = tree_util.tree_leaves(tuple(tangents))
    if len(t_leaves) != len(p_leaves):
        raise ValueError("numerical_jvp: primals and tangents must have the same structure")
    plus = [_add_scaled(p, t, eps) if _is_diff(p) else p for p, t in zip(p_leaves, t_leaves)]
    minus = [_add_scaled(p, t, -eps) if _is_diff(p) else p for p, t in zip(p_leaves, t_leaves)]
    f_plus = f(*tree_util.tree_unflatten(tree, plus))
    f_minus = f(*tree_util.tree_unflatten(tree, minus))

    def diff(a: Any, b: Any) -> Any:
        ah, bh = _as_host(a), _as_host(b)
        if ah.dtype.kind not in "fc":
            return numpy.zeros(ah.shape, dtype=float0)
        return (ah.astype(complex if ah.dtype.kind == "c" else numpy.float64) - bh) / (2 * eps)

    return tree_util.tree_map(diff, f_plus, f_minus)


def _check_close(actual: Any, desired: Any, atol: float, rtol: float, what: str) -> None:
    a_leaves, a_tree = tree_util.tree_flatten(actual)
    d_leaves, d_tree = tree_util.tree_flatten(desired)
    if a_tree != d_tree:
        raise AssertionError(f"{what}: structure {a_tree} != {d_tree}")
    for i, (a, d) in enumerate(zip(a_leaves, d_leaves)):
        if getattr(a, "dtype", None) == float0 or getattr(d, "dtype", None) == float0:
            continue
        ah, dh = _as_host(a), _as_host(d)
        if ah.shape != dh.shape:
            raise AssertionError(f"{what} (output leaf {i}): shape {ah.shape} != {dh.shape}")
        numpy.testing.assert_allclose(
            ah.astype(complex if "c" in (ah.dtype.kind, dh.dtype.kind) else numpy.float64),
            dh, atol=atol, rtol=rtol, err_msg=f"{what} (output leaf {i})",
        )


def check_jvp(
    f: Callable[..., Any],
    args: Sequence[Any],
    atol: float | None = None,
    rtol: float | None = None,
    eps: float | None = None,
    rng: numpy.random.Generator | None = None,
) -> None:
    """Check ``jvp(f)`` against central differences in a random direction.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> check_jvp(fnp.exp, (np.array([0.5, 1.0]),))
    """
    rng = rng or numpy.random.default_rng(0)
    args = tuple(args)
    leaves, tree = tree_util.tree_flatten(args)
    t_leaves = [_rand_like(rng, x) if _is_diff(x) else _zeros_tangent(x) for x in leaves]
    tangents = tree_util.tree_unflatten(tree, t_leaves)
    y, dy = jvp(f, args, tangents)
    tol = _tol_for((args, y))
    atol = atol if atol is not None else tol
    rtol = rtol if rtol is not None else tol
    _check_close(y, f(*args), atol, rtol, "jvp primal output vs f(x)")
    num = numerical_jvp(f, args, tangents, eps)
    _check_close(dy, num, atol, rtol, "jvp tangent vs central differences")


def check_vjp(
    f: Callable[..., Any],
    args: Sequence[Any],
    atol: float | None = None,
    rtol: float | None = None,
    eps: float | None = None,
    rng: numpy.random.Generator | None = None,
) -> None:
    """Check ``vjp(f)`` by the identity ``<u, J v> = <J^T u, v>`` (J v numerically).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> check_vjp(fnp.sin, (np.array([0.5, 1.0]),))
    """
    rng = rng or numpy.random.default_rng(1)
    args = tuple(args)
    y, f_vjp = vjp(f, *args)
    tol = _tol_for((args, y))
    atol = atol if atol is not None else tol
    rtol = rtol if rtol is not None else tol
    _check_close(y, f(*args), atol, rtol, "vjp primal output vs f(x)")
    leaves, tree = tree_util.tree_flatten(args)
    v_leaves = [_rand_like(rng, x) if _is_diff(x) else _zeros_tangent(x) for x in leaves]
    v = tree_util.tree_unflatten(tree, v_leaves)
    y_leaves, y_tree = tree_util.tree_flatten(y)
    u_leaves = [_rand_like(rng, o) if _is_diff(o) else _zeros_tangent(o) for o in y_leaves]
    u = tree_util.tree_unflatten(y_tree, u_leaves)
    ct = f_vjp(u)
    jv = tree_util.tree_leaves(numerical_jvp(f, args, v, eps))
    lhs = _inner(u_leaves, jv)
    rhs = _inner(tree_util.tree_leaves(ct), v_leaves)
    scale = max(1.0, abs(lhs), abs(rhs))
    if not abs(lhs - rhs) <= atol + rtol * scale:
        raise AssertionError(
            f"vjp inner-product identity fails: <u, J v> = {lhs} but <J^T u, v> = {rhs}"
        )


def check_grads(
    f: Callable[..., Any],
    args: Sequence[Any],
    order: int,
    modes: Sequence[str] = ("fwd", "rev"),
    atol: float | None = None,
    rtol: float | None = None,
    eps: float | None = None,
) -> None:
    """Check forward and/or reverse derivatives of ``f`` at ``args`` up to ``order``.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> check_grads(fnp.tanh, (np.array([0.3, -0.2]),), order=3)
    """
    bad = set(modes) - {"fwd", "rev"}
    if bad:
        raise ValueError(f"check_grads: unknown mode(s) {sorted(bad)}; use 'fwd' and/or 'rev'")
    args = tuple(args)
    rng = numpy.random.default_rng(order)

    def recurse(fun: Callable[..., Any], k: int) -> None:
        if "fwd" in modes:
            check_jvp(fun, args, atol, rtol, eps, rng)
            if k > 1:
                leaves, tree = tree_util.tree_flatten(args)
                t = tree_util.tree_unflatten(
                    tree, [_rand_like(rng, x) if _is_diff(x) else _zeros_tangent(x)
                           for x in leaves])

                def f_jvp(*xs: Any, fun: Callable[..., Any] = fun, t: Any = t) -> Any:
                    return jvp(fun, xs, t)[1]

                recurse(f_jvp, k - 1)
        if "rev" in modes:
            check_vjp(fun, args, atol, rtol, eps, rng)
            if k > 1:
                y = fun(*args)
                y_leaves, y_tree = tree_util.tree_flatten(y)
                u = tree_util.tree_unflatten(
                    y_tree, [_rand_like(rng, o) if _is_diff(o) else _zeros_tangent(o)
                             for o in y_leaves])

                def f_vjp(*xs: Any, fun: Callable[..., Any] = fun, u: Any = u) -> Any:
                    return vjp(fun, *xs)[1](u)

                recurse(f_vjp, k - 1)

    if order < 1:
        return
    recurse(f, order)


def gradcheck(
    f: Callable[..., Any], inputs: Sequence[Any], eps: float = 1e-6, atol: float = 1e-5,
    rtol: float = 1e-3,
) -> bool:
    """PyTorch-style: first derivatives (fwd and rev) agree with finite differences.

    Returns True or raises AssertionError naming the mismatch.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> gradcheck(fnp.sin, (np.array([0.1, 0.2]),))
        True
    """
    check_grads(f, tuple(inputs), order=1, atol=atol, rtol=rtol, eps=eps)
    return True


def gradgradcheck(
    f: Callable[..., Any], inputs: Sequence[Any], eps: float = 1e-6, atol: float = 1e-5,
    rtol: float = 1e-3,
) -> bool:
    """PyTorch-style: first and second derivatives agree with finite differences.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> gradgradcheck(fnp.sin, (np.array([0.1, 0.2]),))
        True
    """
    check_grads(f, tuple(inputs), order=2, atol=atol, rtol=rtol, eps=eps)
    return True
