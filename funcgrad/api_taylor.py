"""Taylor mode: ``jet``, ``derivatives``, ``taylor_coefficients``, ``laplacian``,
``divergence``.

``jet`` pushes a truncated Taylor series through a function in one pass; the k-th
derivative along a direction then costs O(k^2) arithmetic per primitive instead of the
exponential growth of nesting ``grad``/``jvp`` k times. ``laplacian`` and ``divergence`` are
Hessian-free second- and first-order operators built on it. All compose with ``jit``,
``vmap`` and ``grad``. See docs/taylor.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from funcgrad import numpy as fnp
from funcgrad import random
from funcgrad.api import _input_avals, _std_basis, jvp
from funcgrad.api_vmap import vmap
from funcgrad.avals import get_aval
from funcgrad.backend import device_put
from funcgrad.interpreters.collapsed_taylor import collapsed_taylor_flat
from funcgrad.interpreters.taylor import taylor_flat
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = ["jet", "derivatives", "taylor_coefficients", "laplacian", "divergence"]


def _check_series(primals: Sequence[Any], series: Sequence[Any]) -> int:
    if not isinstance(primals, (tuple, list)) or not isinstance(series, (tuple, list)):
        raise TypeError("jet: primals and series must be tuples (one entry per argument)")
    if len(primals) != len(series):
        raise TypeError(f"jet: {len(primals)} primals but {len(series)} series; give one "
                        "list of coefficients per primal")
    orders = {len(s) for s in series}
    if len(orders) != 1:
        raise ValueError(f"jet: every argument's series must have the same length (the "
                         f"order), got lengths {sorted(orders)}")
    return orders.pop()


def jet(fun: Callable[..., Any], primals: Sequence[Any], series: Sequence[Any],
        factorial_scaled: bool = True) -> tuple[Any, Any]:
    """Taylor-mode derivatives, as ``jax.experimental.jet.jet``.

    ``primals`` holds the arguments ``x0``; ``series[i]`` is the list ``[x1, ..., xK]`` of
    argument i's higher coefficients, each shaped like it. With ``factorial_scaled=True``
    (JAX's convention) they are the derivatives of a curve ``x(t)`` at 0; with False they
    are normalized Taylor coefficients (derivatives divided by k!). Returns ``(f(x0),
    [y1, ..., yK])`` in the same convention (for a pytree output, a pytree whose leaves are
    such lists).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> y0, (y1, y2, y3) = jet(fnp.sin, (0.5,), ((1.0, 0.0, 0.0),))
        >>> np.allclose([y1, y2, y3], [np.cos(0.5), -np.sin(0.5), -np.cos(0.5)])
        True
    """
    order = _check_series(primals, series)
    _input_avals(tuple(primals), "jet", "primals")
    flat_p, in_tree = tree_util.tree_flatten(tuple(primals))
    flat_s: list[Any] = []
    for p, s in zip(primals, series):
        p_leaves, p_tree = tree_util.tree_flatten(p)
        per_leaf: list[list[Any]] = [[] for _ in p_leaves]
        for k, term in enumerate(s, start=1):
            leaves, tree = tree_util.tree_flatten(term)
            if tree != p_tree:
                raise ValueError(f"jet: series term {k} has structure {tree}, its primal "
                                 f"{p_tree}")
            scale = 1.0 / math.factorial(k) if factorial_scaled else 1.0
            for acc, leaf, pl in zip(per_leaf, leaves, p_leaves):
                if numpy.shape(leaf) != numpy.shape(pl):
                    raise ValueError(f"jet: series term {k} has shape {numpy.shape(leaf)} "
                                     f"but its primal has shape {numpy.shape(pl)}; each "
                                     "coefficient is shaped like its primal")
                if scale != 1.0:
                    # A Python number stays one (weak, with no device of its own: it meets
                    # the primal wherever that lives); arrays are scaled where they are.
                    leaf = (leaf * scale if isinstance(leaf, int | float | complex)
                            else fnp.multiply(leaf, scale))
                acc.append(leaf)
        flat_s.extend(per_leaf)
    out_tree_box: list[Any] = []

    def flat_fun(*xs: Any) -> list[Any]:
        out = fun(*tree_util.tree_unflatten(in_tree, list(xs)))
        leaves, tree = tree_util.tree_flatten(out)
        out_tree_box.append(tree)
        return leaves

    if order == 0:
        out = fun(*primals)
        return out, tree_util.tree_map(lambda _: [], out)
    outs, out_series = taylor_flat(flat_fun, flat_p,
                                   [None if _all_zero(s) else s for s in flat_s], order)
    out_tree = out_tree_box[0]
    # Python arithmetic on Python-number primals gives Python numbers: JAX's jet returns
    # arrays (on the primals' device)
    outs = [fnp.asarray(o) if type(o) in (bool, int, float, complex) else o for o in outs]
    result = []
    for o, s in zip(outs, out_series):
        terms = []
        for k in range(1, order + 1):
            c = None if s is None else s[k - 1]
            if c is None:
                c = fnp.zeros_like(o, dtype=None if get_aval(o).dtype.kind in "fc" else float)
            terms.append(fnp.asarray(c * math.factorial(k) if factorial_scaled else c))
        result.append(terms)
    # a bare array output gets its list; a pytree output has a list at each leaf (as JAX)
    return tree_util.tree_unflatten(out_tree, outs), tree_util.tree_unflatten(out_tree, result)


def _all_zero(s: list[Any]) -> bool:
    return all(isinstance(c, numpy.ndarray) and not c.any() for c in s)


def taylor_coefficients(f: Callable[..., Any], order: int) -> Callable[..., Any]:
    """``x, v -> [c0, c1, ..., c_order]``: the normalized Taylor coefficients of
    ``t -> f(x + t v)`` at 0 (``v`` defaults to 1 for a scalar ``x``), stacked on a new
    leading axis.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> taylor_coefficients(fnp.exp, 3)(0.0).tolist()
        [1.0, 1.0, 0.5, 0.16666666666666666]
    """
    def coeffs(x: Any, v: Any = None) -> Any:
        x = fnp.asarray(x)
        if v is None:
            v = fnp.ones_like(x)
        y0, ys = jet(f, (x,), ([v] + [fnp.zeros_like(x)] * (order - 1),),
                     factorial_scaled=False)
        return fnp.stack([fnp.asarray(y0)] + [fnp.asarray(y) for y in ys])

    return coeffs


def derivatives(f: Callable[..., Any], order: int) -> Callable[..., Any]:
    """``x, v -> [f, f', ..., f^(order)]`` of ``t -> f(x + t v)`` at 0, stacked on a new
    leading axis: all derivatives of a scalar function at once, or the directional ones.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> derivatives(lambda x: x ** 4, 4)(1.0).tolist()
        [1.0, 4.0, 12.0, 24.0, 24.0]
    """
    coeffs = taylor_coefficients(f, order)

    def ds(x: Any, v: Any = None) -> Any:
        c = coeffs(x, v)
        return fnp.stack([c[k] * float(math.factorial(k)) for k in range(order + 1)])

    return ds


def _float_input(x: Any, fname: str) -> tuple[Any, Any]:
    """``x`` as an array and its aval; an integer or boolean ``x`` is an error, as for
    ``hessian`` (its basis directions would be float0, every derivative zero)."""
    x = fnp.asarray(x)
    a = get_aval(x)
    if a.dtype.kind not in "fc":
        raise TypeError(f"{fname} requires float or complex inputs, but x has dtype {a.dtype}; "
                        "cast it to float")
    return x, a


def laplacian(f: Callable[[Any], Any], method: str = "forward", *, key: Any = None,
              samples: int = 16) -> Callable[[Any], Any]:
    """``x -> sum_i d^2 f / dx_i^2`` (the trace of the Hessian) of a scalar function of an
    array, without forming the Hessian: second-order Taylor propagation along every basis
    direction at once, the second coefficients summed as they go (collapsed Taylor mode,
    :mod:`funcgrad.interpreters.collapsed_taylor`: a product with a fixed matrix costs one
    product for them, not one per direction; memory O(d * width), not O(d^2 * width)).
    ``method="hutchinson"`` averages ``v^T H v`` over ``samples`` Rademacher directions drawn
    from ``key`` (an unbiased estimate, cost independent of d). Differentiable, jit-able,
    batchable.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> float(laplacian(lambda x: fnp.sum(x ** 3))(np.array([1.0, 2.0])))
        18.0
    """
    if method not in ("forward", "hutchinson"):
        raise ValueError(f"laplacian: method must be 'forward' or 'hutchinson', got {method!r}")
    if method == "hutchinson" and key is None:
        raise ValueError("laplacian(method='hutchinson') needs key= (a funcgrad.random key)")

    def summed_second(x: Any, directions: Any, n: int) -> Any:
        # sum_i v_i^T H v_i / 2: the second coefficients along the directions, summed as they
        # go (collapsed Taylor mode: one array for them all, not one per direction)
        outs, _, seconds = collapsed_taylor_flat(lambda y: [f(y)], [x], [directions], n)
        if get_aval(outs[0]).shape != ():
            raise TypeError(f"laplacian: f must return a scalar, got shape "
                            f"{get_aval(outs[0]).shape}")
        if seconds[0] is None:  # f is affine in x
            return fnp.zeros_like(outs[0])
        return seconds[0]

    def lap(x: Any) -> Any:
        x, a = _float_input(x, "laplacian")
        if method == "forward":
            basis = _std_basis([a], [a.dtype])[0]  # on x's device
            return 2.0 * summed_second(x, basis, basis.shape[0])
        # Drawn where x is (a key is made on the default device, x may be a host array).
        # (tree_map: a typed key is a pytree over its uint32 data)
        k = tree_util.tree_map(lambda d: device_put(d, a.device), key) if a.device else key
        v = random.rademacher(k, (samples,) + a.shape, dtype=a.dtype)
        return (2.0 / samples) * summed_second(x, v, samples)

    return lap


def divergence(F: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``x -> sum_i dF_i / dx_i`` of a vector field ``F: R^d -> R^d`` (the trace of its
    Jacobian), from one batched forward pass over the basis directions.

    Example:
        >>> import numpy as np
        >>> float(divergence(lambda x: x * x)(np.array([1.0, 2.0, 3.0])))
        12.0
    """
    def div(x: Any) -> Any:
        x, a = _float_input(x, "divergence")
        basis = _std_basis([a], [a.dtype])[0]  # on x's device

        def directional(v: Any) -> Any:
            out, t = jvp(F, (x,), (v,))
            if get_aval(out).shape != a.shape:
                raise TypeError(f"divergence: F must map shape {a.shape} to itself, got "
                                f"{get_aval(out).shape}")
            return fnp.sum(t * v)

        return fnp.sum(vmap(directional)(basis))

    return div
