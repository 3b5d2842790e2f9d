"""Numerical checks of derivatives: ``check_grads``, ``check_jvp``, ``check_vjp`` and friends.

JVPs are compared with central differences in random directions; VJPs through the
inner-product identity ``<u, J v> == <J^T u, v>``; higher orders recursively, by checking the
derivatives of the JVP/VJP functions themselves. Arguments and outputs may be pytrees (dicts,
tuples...) of arrays and Python scalars; integer leaves are held fixed (``float0`` tangents).

Complex values follow funcgrad's (JAX's) convention: JVPs are real-linear maps checked against
central differences in random complex directions, and VJPs are their transposes for the real
pairing ``<a, b> = Re(sum(a * b))`` (no conjugation), so the identity is checked on real parts.

Tolerances default by dtype (the loosest dtype among inputs and outputs): 1e-5 for float64 /
complex128, 2e-2 for float32 / complex64, 1e-1 for float16; the finite-difference step
``eps`` likewise (1e-5 / 1e-3 / 1e-1).

Example:
    >>> import numpy as np, funcgrad.numpy as fnp
    >>> check_grads(lambda x: fnp.sin(x) * x, (np.linspace(0.1, 1.0, 4),), order=2)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy

from funcgrad.api import jvp, vjp
from funcgrad.api_jit import jit
from funcgrad.api_vmap import _flatten_args, _match_prefix, _slice_axis, vmap
from funcgrad.avals import float0, get_aval
from funcgrad.backend import device_of, device_put, to_numpy
from funcgrad.ops import shape as _shape
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = [
    "check_grads",
    "check_jit",
    "check_vmap",
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


def _is_float0(x: Any) -> bool:
    return getattr(x, "dtype", None) == float0


def _as_host(x: Any) -> numpy.ndarray:
    return numpy.asarray(to_numpy(x))


def _like(v: numpy.ndarray, x: Any) -> Any:
    """``v`` (host) with the dtype of ``x``, on ``x``'s device; Python scalars stay scalars."""
    if type(x) in (float, complex):
        return type(x)(numpy.asarray(v).reshape(()))
    a = get_aval(x)
    v = numpy.asarray(v, dtype=a.dtype)
    if isinstance(x, numpy.generic):
        return a.dtype.type(v)
    dev = device_of(x)
    return device_put(v, dev) if dev not in (None, "cpu") else v


def _rand_like(rng: numpy.random.Generator, x: Any) -> Any:
    a = get_aval(x)
    if a.dtype.kind not in "fc":
        return numpy.zeros(a.shape, dtype=float0)
    v = rng.standard_normal(a.shape)
    if a.dtype.kind == "c":
        v = v + 1j * rng.standard_normal(a.shape)
    return _like(v, x)


def _add_scaled(x: Any, v: Any, s: float) -> Any:
    """``x + s * v`` computed on the host, returned like ``x``."""
    return _like(_as_host(x) + s * _as_host(v), x)


def _inner(xs: Sequence[Any], ys: Sequence[Any]) -> float:
    """The real pairing ``Re(sum(x * y))`` over leaves (float0 leaves contribute nothing)."""
    total = 0.0
    for x, y in zip(xs, ys):
        if _is_float0(x) or _is_float0(y):
            continue
        prod = _as_host(x).astype(numpy.complex128) * _as_host(y).astype(numpy.complex128)
        total += float(numpy.sum(prod).real)
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


def _check_args(args: Any, fname: str) -> tuple:
    if not isinstance(args, tuple | list):
        raise TypeError(
            f"{fname}: args must be a tuple (or list) of arguments, got "
            f"{type(args).__name__}; for one argument write {fname}(f, (x,), ...)"
        )
    return tuple(args)


def numerical_jvp(
    f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], eps: float | None = None
) -> Any:
    """Central-difference ``(f(x + eps t) - f(x - eps t)) / (2 eps)``, leaf by leaf.

    Returns a pytree like ``f``'s output, in float64 / complex128 on the host (``float0``
    zeros for integer outputs).

    Example:
        >>> import funcgrad.numpy as fnp
        >>> round(float(numerical_jvp(fnp.sin, (0.0,), (1.0,))), 6)
        1.0
    """
    primals = _check_args(primals, "numerical_jvp")
    eps = eps if eps is not None else _eps_for(primals)
    p_leaves, tree = tree_util.tree_flatten(primals)
    t_leaves = tree_util.tree_leaves(tuple(tangents), is_leaf=lambda x: x is None)
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
        wide = numpy.complex128 if ah.dtype.kind == "c" or bh.dtype.kind == "c" else numpy.float64
        return (ah.astype(wide) - bh.astype(wide)) / (2 * eps)

    return tree_util.tree_map(diff, f_plus, f_minus)


def _check_close(actual: Any, desired: Any, atol: float, rtol: float, what: str) -> None:
    a_leaves, a_tree = tree_util.tree_flatten(actual)
    d_leaves, d_tree = tree_util.tree_flatten(desired)
    if a_tree != d_tree:
        raise AssertionError(f"{what}: structure {a_tree} != {d_tree}")
    for i, (a, d) in enumerate(zip(a_leaves, d_leaves)):
        if _is_float0(a) or _is_float0(d):
            continue
        ah, dh = _as_host(a), _as_host(d)
        if ah.shape != dh.shape:
            raise AssertionError(f"{what} (output leaf {i}): shape {ah.shape} != {dh.shape}")
        wide = numpy.complex128 if "c" in (ah.dtype.kind, dh.dtype.kind) else numpy.float64
        numpy.testing.assert_allclose(
            ah.astype(wide), dh.astype(wide), atol=atol, rtol=rtol,
            err_msg=f"{what} (output leaf {i})",
        )


def _check_tangent_dtypes(y: Any, dy: Any, what: str) -> None:
    """A tangent has its primal's dtype (float0 for integer primals)."""
    for i, (p, t) in enumerate(zip(tree_util.tree_leaves(y), tree_util.tree_leaves(dy))):
        pa = get_aval(p)
        want = pa.dtype if pa.dtype.kind in "fc" else float0
        got = getattr(t, "dtype", None)
        if got is None:
            got = get_aval(t).dtype
        if numpy.dtype(got) != want:
            raise AssertionError(
                f"{what} (output leaf {i}): the tangent has dtype {got} but the primal output "
                f"is {pa.str_short()}, so it should be {want}"
            )


def check_jvp(
    f: Callable[..., Any],
    args: Sequence[Any],
    atol: float | None = None,
    rtol: float | None = None,
    eps: float | None = None,
    rng: numpy.random.Generator | None = None,
    what: str = "jvp",
) -> None:
    """Check ``jvp(f)`` against central differences in a random direction.

    Also checks that the primal output equals ``f(*args)`` and that each output tangent has
    its primal's dtype.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> check_jvp(fnp.exp, (np.array([0.5, 1.0]),))
    """
    rng = rng or numpy.random.default_rng(0)
    args = _check_args(args, "check_jvp")
    leaves, tree = tree_util.tree_flatten(args)
    tangents = tree_util.tree_unflatten(tree, [_rand_like(rng, x) for x in leaves])
    y, dy = jvp(f, args, tangents)
    tol = _tol_for((args, y))
    atol = atol if atol is not None else tol
    rtol = rtol if rtol is not None else tol
    _check_close(y, f(*args), atol, rtol, f"{what}: primal output vs f(x)")
    _check_tangent_dtypes(y, dy, f"{what}: tangent dtype")
    num = numerical_jvp(f, args, tangents, eps)
    _check_close(dy, num, atol, rtol, f"{what}: tangent vs central differences")


def check_vjp(
    f: Callable[..., Any],
    args: Sequence[Any],
    atol: float | None = None,
    rtol: float | None = None,
    eps: float | None = None,
    rng: numpy.random.Generator | None = None,
    what: str = "vjp",
) -> None:
    """Check ``vjp(f)`` by the identity ``<u, J v> = <J^T u, v>`` (``J v`` numerically).

    Also checks the primal output and that each cotangent has its argument's structure,
    shape and dtype.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> check_vjp(fnp.sin, (np.array([0.5, 1.0]),))
    """
    rng = rng or numpy.random.default_rng(1)
    args = _check_args(args, "check_vjp")
    y, f_vjp = vjp(f, *args)
    tol = _tol_for((args, y))
    atol = atol if atol is not None else tol
    rtol = rtol if rtol is not None else tol
    _check_close(y, f(*args), atol, rtol, f"{what}: primal output vs f(x)")
    leaves, tree = tree_util.tree_flatten(args)
    v_leaves = [_rand_like(rng, x) for x in leaves]
    v = tree_util.tree_unflatten(tree, v_leaves)
    y_leaves, y_tree = tree_util.tree_flatten(y)
    u_leaves = [_rand_like(rng, o) for o in y_leaves]
    u = tree_util.tree_unflatten(y_tree, u_leaves)
    ct = f_vjp(u)
    ct_leaves, ct_tree = tree_util.tree_flatten(ct)
    if ct_tree != tree:
        raise AssertionError(f"{what}: cotangent structure {ct_tree} != argument structure {tree}")
    _check_tangent_dtypes(leaves, ct_leaves, f"{what}: cotangent dtype")
    for i, (c, x) in enumerate(zip(ct_leaves, leaves)):
        if numpy.shape(to_numpy(c)) != get_aval(x).shape:
            raise AssertionError(
                f"{what}: cotangent {i} has shape {numpy.shape(to_numpy(c))}, argument has "
                f"shape {get_aval(x).shape}"
            )
    jv = tree_util.tree_leaves(numerical_jvp(f, args, v, eps))
    lhs = _inner(u_leaves, jv)
    rhs = _inner(ct_leaves, v_leaves)
    scale = max(1.0, abs(lhs), abs(rhs))
    if not abs(lhs - rhs) <= atol + rtol * scale:
        raise AssertionError(
            f"{what}: the inner-product identity fails: <u, J v> = {lhs} (J v by central "
            f"differences) but <J^T u, v> = {rhs} (from vjp); difference {abs(lhs - rhs):.3g}"
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

    ``args`` is a tuple of arguments (pytrees). Order k checks every nesting of k modes
    (for ``order=2``: fwd, rev, fwd-over-fwd, rev-over-fwd, fwd-over-rev, rev-over-rev) by
    checking the JVP/VJP functions themselves. Raises AssertionError naming the failing
    composition.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> check_grads(fnp.tanh, (np.array([0.3, -0.2]),), order=3)
    """
    bad = set(modes) - {"fwd", "rev"}
    if bad:
        raise ValueError(f"check_grads: unknown mode(s) {sorted(bad)}; use 'fwd' and/or 'rev'")
    if not isinstance(order, int) or order < 0:
        raise ValueError(f"check_grads: order must be a non-negative int, got {order!r}")
    args = _check_args(args, "check_grads")
    rng = numpy.random.default_rng(order)
    leaves, tree = tree_util.tree_flatten(args)

    def recurse(fun: Callable[..., Any], k: int, path: str) -> None:
        if "fwd" in modes:
            what = f"fwd{path} (order {order - k + 1})"
            check_jvp(fun, args, atol, rtol, eps, rng, what=what)
            if k > 1:
                t = tree_util.tree_unflatten(tree, [_rand_like(rng, x) for x in leaves])

                def f_jvp(*xs: Any, fun: Callable[..., Any] = fun, t: Any = t) -> Any:
                    return jvp(fun, xs, t)[1]

                recurse(f_jvp, k - 1, f"-over-fwd{path}")
        if "rev" in modes:
            what = f"rev{path} (order {order - k + 1})"
            check_vjp(fun, args, atol, rtol, eps, rng, what=what)
            if k > 1:
                y_leaves, y_tree = tree_util.tree_flatten(fun(*args))
                u = tree_util.tree_unflatten(y_tree, [_rand_like(rng, o) for o in y_leaves])

                def f_vjp(*xs: Any, fun: Callable[..., Any] = fun, u: Any = u) -> Any:
                    return vjp(fun, *xs)[1](u)

                recurse(f_vjp, k - 1, f"-over-rev{path}")

    if order < 1:
        return
    recurse(f, order, "")


def gradcheck(
    f: Callable[..., Any], inputs: Sequence[Any], eps: float = 1e-6, atol: float = 1e-5,
    rtol: float = 1e-3,
) -> bool:
    """PyTorch-style: first derivatives (fwd and rev) agree with finite differences.

    Returns True or raises AssertionError naming the mismatch. The defaults (small ``eps``,
    loose ``rtol``) suit float64 inputs, as PyTorch's do; for float32 pass larger values.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> gradcheck(fnp.sin, (np.array([0.1, 0.2]),))
        True
    """
    check_grads(f, _check_args(inputs, "gradcheck"), order=1, atol=atol, rtol=rtol, eps=eps)
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
    check_grads(f, _check_args(inputs, "gradgradcheck"), order=2, atol=atol, rtol=rtol,
                eps=eps)
    return True


# ---------------------------------------------------------------------------------------------
# Transformations that must not change values: vmap against a loop, jit against eager.


def _check_same(got: Any, want: Any, atol: float | None, rtol: float | None, what: str) -> None:
    g_leaves, g_tree = tree_util.tree_flatten(got)
    w_leaves, w_tree = tree_util.tree_flatten(want)
    if g_tree != w_tree:
        raise AssertionError(f"{what}: output structures differ: {g_tree} vs {w_tree}")
    for k, (g, w) in enumerate(zip(g_leaves, w_leaves)):
        ga, wa = get_aval(g), get_aval(w)
        if ga.shape != wa.shape or ga.dtype != wa.dtype:
            raise AssertionError(
                f"{what}: output leaf {k} is {ga.str_short()}, expected {wa.str_short()}")
        if ga.dtype == float0:
            continue
        tol = _TOL.get(numpy.dtype(ga.dtype), 0.0) if ga.dtype.kind in "fc" else 0.0
        _check_close(_as_host(g), _as_host(w), tol if atol is None else atol,
                     tol if rtol is None else rtol, f"{what}, output leaf {k}")


def check_vmap(
    f: Callable[..., Any],
    args: Sequence[Any],
    in_axes: Any = 0,
    out_axes: Any = 0,
    atol: float | None = None,
    rtol: float | None = None,
) -> None:
    """Check that ``vmap(f, in_axes, out_axes)(*args)`` equals a Python loop over examples.

    ``args`` are the batched arguments (pytrees); ``in_axes``/``out_axes`` are as for
    :func:`funcgrad.vmap` (ints, None, or pytree prefixes). Each example is ``f`` applied to
    the slices of the mapped leaves, the unmapped ones passed whole; the stacked loop results
    must match the batched ones in shape, dtype and value. Raises AssertionError otherwise.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> check_vmap(lambda x, w: fnp.dot(w, x), (np.ones((4, 3)), np.eye(3)), (0, None))
    """

    args = _check_args(args, "check_vmap")
    got = vmap(f, in_axes=in_axes, out_axes=out_axes)(*args)
    vals, dims, (arg_tree, _, _), n = _flatten_args(args, {}, in_axes, None, {})
    loop = []
    for k in range(n):
        ex = [v if d is None else _shape.squeeze(_slice_axis(v, d, k, k + 1), (d,))
              for v, d in zip(vals, dims)]
        loop.append(f(*arg_tree.unflatten(ex)))
    out_leaves, out_tree = tree_util.tree_flatten(loop[0])
    if _is_axis_spec(out_axes):
        o_axes = [out_axes] * len(out_leaves)
    else:
        matched: list = []
        _match_prefix(out_axes, loop[0], "out_axes", "the output", (), matched)
        o_axes = [m[1] for m in matched]
    per_leaf = zip(*[tree_util.tree_leaves(o) for o in loop]) if out_leaves else []
    want = []
    for leaves, oa in zip(per_leaf, o_axes):
        if oa is None:
            want.append(leaves[0])
            continue
        stacked = _shape.concatenate([_shape.expand_dims(x, (0,)) for x in leaves], 0)
        want.append(_shape.moveaxis(stacked, 0, oa % get_aval(stacked).ndim))
    _check_same(got, tree_util.tree_unflatten(out_tree, want), atol, rtol,
                f"check_vmap(in_axes={in_axes!r}, out_axes={out_axes!r})")


def _is_axis_spec(ax: Any) -> bool:
    return ax is None or isinstance(ax, int | numpy.integer)


def check_jit(
    f: Callable[..., Any],
    args: Sequence[Any],
    static_argnums: int | Sequence[int] = (),
    atol: float | None = None,
    rtol: float | None = None,
) -> None:
    """Check that ``jit(f)`` gives eager ``f``'s values, shapes and dtypes, and traces once.

    The jitted function is called twice (the second call runs the cached compiled code) and
    each result must match the eager one; a second trace raises AssertionError.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> check_jit(lambda x: fnp.sum(fnp.sin(x) ** 2), (np.linspace(0, 1, 5),))
    """

    args = _check_args(args, "check_jit")
    want = f(*args)
    jitted = jit(f, static_argnums=static_argnums)
    for call in ("first", "cached"):
        _check_same(jitted(*args), want, atol, rtol, f"check_jit ({call} call)")
    if jitted.trace_count != 1:
        raise AssertionError(
            f"check_jit: calling again with the same arguments traced again "
            f"(trace_count={jitted.trace_count})"
        )
