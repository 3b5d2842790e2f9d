"""User-facing transformations: pytree flattening, argnums, has_aux, then the *_flat cores."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from funcgrad import tree_util
from funcgrad.avals import ShapedArray, float0, get_aval
from funcgrad.backend import device_of, get_default_device, xp_for_device
from funcgrad.core import _trace_var
from funcgrad.interpreters.jvp import Zero, instantiate, jvp_flat, zeros_like_aval
from funcgrad.interpreters.linearize import eval_linear, linearize_flat
from funcgrad.interpreters.staging import trace_to_jaxpr
from funcgrad.interpreters.transpose import transpose_linearized
from funcgrad.ir import ClosedJaxpr

__all__ = [
    "make_jaxpr",
    "jvp",
    "linearize",
    "vjp",
    "grad",
    "value_and_grad",
]


# ---------------------------------------------------------------------------------------------
# Flattening helpers


def _flatten_fun(f: Callable[..., Any], in_tree: Any, out_store: list) -> Callable[..., list]:
    """A flat function over leaves; records the output treedef into ``out_store``."""

    def flat(*leaves: Any) -> list[Any]:
        args = tree_util.tree_unflatten(in_tree, list(leaves))
        out = f(*args)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_store.append(out_tree)
        return out_leaves

    return flat


def _as_value(x: Any, what: str) -> Any:
    """Validate a leaf passed to a transformation; lists of numbers become arrays."""
    if isinstance(x, list | tuple):
        raise TypeError(f"{what}: expected an array, got a {type(x).__name__}")
    get_aval(x)
    return x


def _tangent_dtype_ok(primal_aval: ShapedArray, tangent: Any) -> Any:
    ta = get_aval(tangent)
    if ta.shape != primal_aval.shape:
        raise ValueError(
            f"jvp: primal and tangent shapes must match, got primal {primal_aval.str_short()} "
            f"and tangent {ta.str_short()}"
        )
    return tangent


# ---------------------------------------------------------------------------------------------
# make_jaxpr


def make_jaxpr(
    fun: Callable[..., Any], static_argnums: int | Sequence[int] = ()
) -> Callable[..., ClosedJaxpr]:
    """A function that traces ``fun`` on example arguments and returns its closed jaxpr.

    Example:
        >>> import funcgrad, funcgrad.numpy as fnp, numpy as np
        >>> print(funcgrad.make_jaxpr(lambda x: fnp.sum(fnp.sin(x)))(np.ones(3)))
        { lambda ; a:f64[3]. let b:f64[3] = sin a; c:f64[] = reduce_sum[axes=(0,)] b in (c) }
    """
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def make(*args: Any, **kwargs: Any) -> ClosedJaxpr:
        dyn_idx = [i for i in range(len(args)) if i not in static]

        def g(*dyn: Any) -> Any:
            full = list(args)
            for i, v in zip(dyn_idx, dyn):
                full[i] = v
            return fun(*full, **kwargs)

        dyn_args = tuple(args[i] for i in dyn_idx)
        leaves_with_path, in_tree = tree_util.tree_flatten_with_path(dyn_args)
        leaves = [leaf for _, leaf in leaves_with_path]
        origins = [
            f"from argument {tree_util.keystr(p)}" for p, _ in leaves_with_path
        ]
        in_avals = [get_aval(x) for x in leaves]
        store: list = []
        closed = trace_to_jaxpr(
            _flatten_fun(g, in_tree, store), in_avals, _trace_var.get(), origins
        )
        return closed

    return make


# ---------------------------------------------------------------------------------------------
# jvp / linearize / vjp


def jvp(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]):
    """Forward mode: ``(fun(*primals), J(primals) @ tangents)``, pytrees in and out.

    Example:
        >>> import funcgrad, funcgrad.numpy as fnp
        >>> y, dy = funcgrad.jvp(fnp.sin, (0.0,), (1.0,))
        >>> float(y), float(dy)
        (0.0, 1.0)
    """
    if not isinstance(primals, tuple | list) or not isinstance(tangents, tuple | list):
        raise TypeError(
            "jvp: primals and tangents must be tuples (or lists) of arguments, got "
            f"{type(primals).__name__} and {type(tangents).__name__}"
        )
    if len(primals) != len(tangents):
        raise ValueError(
            f"jvp: got {len(primals)} primals but {len(tangents)} tangents; give one tangent "
            "per argument"
        )
    p_leaves, p_tree = tree_util.tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_util.tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise ValueError(
            f"jvp: primal and tangent structures differ: {p_tree} vs {t_tree}"
        )
    t_in = []
    for p, t in zip(p_leaves, t_leaves):
        pa = get_aval(p)
        if getattr(t, "dtype", None) == float0 or pa.dtype.kind not in "fc":
            t_in.append(Zero.from_primal(p))
        else:
            t_in.append(_tangent_dtype_ok(pa, t))
    store: list = []
    outs_p, outs_t = jvp_flat(_flatten_fun(fun, p_tree, store), p_leaves, t_in)
    out_tree = store[0]
    outs_t = [_materialize_tangent(t) for t in outs_t]
    return tree_util.tree_unflatten(out_tree, outs_p), tree_util.tree_unflatten(out_tree, outs_t)


def _materialize_tangent(t: Any) -> Any:
    if type(t) is Zero:
        return zeros_like_aval(t.aval) if t.aval.dtype != float0 else numpy.zeros(
            t.aval.shape, float0
        )
    return t


def linearize(fun: Callable[..., Any], *primals: Any):
    """``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` applies the linear map.

    Example:
        >>> import funcgrad, funcgrad.numpy as fnp
        >>> y, f_jvp = funcgrad.linearize(fnp.sin, 0.0)
        >>> float(f_jvp(2.0))
        2.0
    """
    p_leaves, p_tree = tree_util.tree_flatten(primals)
    store: list = []
    result = linearize_flat(_flatten_fun(fun, p_tree, store), p_leaves)
    out_tree = store[0]

    def f_jvp(*tangents: Any) -> Any:
        t_leaves, t_tree = tree_util.tree_flatten(tangents)
        if t_tree != p_tree:
            raise ValueError(f"linearize: tangent structure {t_tree} != primal {p_tree}")
        outs = eval_linear(result, [instantiate(t) for t in t_leaves])
        return tree_util.tree_unflatten(out_tree, [_materialize_tangent(o) for o in outs])

    return tree_util.tree_unflatten(out_tree, result.primals_out), f_jvp


def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False):
    """``(fun(*primals), f_vjp)`` (plus ``aux`` with has_aux); ``f_vjp(ct)`` pulls back.

    Example:
        >>> import funcgrad, funcgrad.numpy as fnp
        >>> y, f_vjp = funcgrad.vjp(fnp.sin, 0.0)
        >>> [float(c) for c in f_vjp(1.0)]
        [1.0]
    """
    p_leaves, p_tree = tree_util.tree_flatten(primals)
    store: list = []
    aux_store: list = []
    f = fun
    if has_aux:
        f = _split_aux(fun, aux_store)
    result = linearize_flat(_flatten_fun(f, p_tree, store), p_leaves)
    out_tree = store[0]
    primals_out = tree_util.tree_unflatten(out_tree, result.primals_out)

    def f_vjp(ct: Any) -> tuple[Any, ...]:
        ct_leaves, ct_tree = tree_util.tree_flatten(ct)
        if ct_tree != out_tree:
            raise ValueError(
                f"vjp: cotangent structure {ct_tree} does not match the output {out_tree}"
            )
        cts = []
        for c, a in zip(ct_leaves, result.out_tangent_avals):
            ca = get_aval(c)
            if ca.shape != a.shape:
                raise ValueError(
                    f"vjp: cotangent of shape {ca.shape} given for an output of shape {a.shape}"
                )
            cts.append(Zero(a) if a.dtype == float0 else c)
        in_cts = transpose_linearized(result, cts)
        return tree_util.tree_unflatten(p_tree, [_materialize_tangent(c) for c in in_cts])

    if has_aux:
        return primals_out, f_vjp, aux_store[0]
    return primals_out, f_vjp


def _split_aux(fun: Callable[..., Any], aux_store: list) -> Callable[..., Any]:
    def f(*args: Any) -> Any:
        out = fun(*args)
        if not isinstance(out, tuple) or len(out) != 2:
            raise TypeError(
                "has_aux=True requires the function to return a pair (output, aux), got "
                f"{type(out).__name__}"
            )
        aux_store.append(out[1])
        return out[0]

    return f


# ---------------------------------------------------------------------------------------------
# grad / value_and_grad


def _argnums_tuple(argnums: int | Sequence[int]) -> tuple[int, ...]:
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def value_and_grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """A function returning ``(fun(*args), gradient)`` of scalar-valued ``fun``.

    Example:
        >>> import funcgrad, funcgrad.numpy as fnp
        >>> v, g = funcgrad.value_and_grad(lambda x: x * x)(3.0)
        >>> float(v), float(g)
        (9.0, 6.0)
    """
    argnums_t = _argnums_tuple(argnums)

    @functools.wraps(fun)
    def vg(*args: Any, **kwargs: Any) -> Any:
        if any(i >= len(args) or i < -len(args) for i in argnums_t):
            raise TypeError(
                f"grad: argnums={argnums} but the function was called with {len(args)} "
                "positional arguments"
            )
        diff_args = tuple(args[i] for i in argnums_t)
        for i, a in zip(argnums_t, diff_args):
            _check_diff_arg(a, i, allow_int, holomorphic)

        def partial_f(*dargs: Any) -> Any:
            full = list(args)
            for i, v in zip(argnums_t, dargs):
                full[i] = v
            return fun(*full, **kwargs)

        res = vjp(partial_f, *diff_args, has_aux=has_aux)
        if has_aux:
            ans, f_vjp, aux = res
        else:
            ans, f_vjp = res
        a = _check_scalar_output(ans, holomorphic)
        ones = _ones_like_output(ans, a)
        g = f_vjp(ones)
        g = g[0] if isinstance(argnums, int) else tuple(g)
        if has_aux:
            return (ans, aux), g
        return ans, g

    return vg


def grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """The gradient of scalar-valued ``fun`` with respect to argument(s) ``argnums``.

    Example:
        >>> import funcgrad, funcgrad.numpy as fnp
        >>> float(funcgrad.grad(fnp.sin)(0.0))
        1.0
    """
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def g(*args: Any, **kwargs: Any) -> Any:
        if has_aux:
            (_, aux), gr = vg(*args, **kwargs)
            return gr, aux
        return vg(*args, **kwargs)[1]

    return g


def _check_diff_arg(x: Any, i: int, allow_int: bool, holomorphic: bool) -> None:
    for path, leaf in tree_util.tree_flatten_with_path(x)[0]:
        a = get_aval(leaf)
        where = f"argument {i}{tree_util.keystr(path)}"
        if holomorphic and a.dtype.kind != "c":
            raise TypeError(
                f"grad with holomorphic=True requires complex inputs, but {where} has dtype "
                f"{a.dtype}"
            )
        if a.dtype.kind not in "fc" and not allow_int:
            raise TypeError(
                f"grad requires real- or complex-valued inputs (float or complex dtype), but "
                f"{where} has dtype {a.dtype}. Cast it with .astype(float), or pass "
                "allow_int=True to get a float0 zero gradient for it."
            )


def _check_scalar_output(ans: Any, holomorphic: bool) -> ShapedArray:
    leaves = tree_util.tree_leaves(ans)
    if len(leaves) != 1:
        raise TypeError(
            f"grad requires a function returning one scalar, got a pytree with {len(leaves)} "
            "leaves; use vjp or jacrev for non-scalar outputs (or has_aux=True to return "
            "auxiliary data)"
        )
    a = get_aval(leaves[0])
    if a.shape != ():
        raise TypeError(
            f"grad requires a scalar output, got shape {a.shape}; use vjp or jacrev for "
            "non-scalar outputs (or sum the output)"
        )
    if a.dtype.kind == "c" and not holomorphic:
        raise TypeError(
            "grad requires a real-valued output, got a complex one; use holomorphic=True for "
            "complex-to-complex functions, or take the real part / abs"
        )
    if a.dtype.kind not in "fc":
        raise TypeError(f"grad requires a float output, got dtype {a.dtype}")
    return a


def _ones_like_output(ans: Any, a: ShapedArray) -> Any:
    leaf = tree_util.tree_leaves(ans)[0]
    out_tree = tree_util.tree_structure(ans)
    xp = xp_for_device(a.device or device_of(leaf) or get_default_device())
    one = xp.ones(a.shape, dtype=a.dtype)
    return tree_util.tree_unflatten(out_tree, [one])
