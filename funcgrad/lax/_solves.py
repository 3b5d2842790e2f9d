"""``lax.custom_root``: a root finder differentiated by the implicit function theorem, and
``lax.custom_linear_solve`` (the primitive, in :mod:`funcgrad.ops.control_flow.linear_solve`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import funcgrad.numpy as fnp
from funcgrad.api import jvp, linearize
from funcgrad.avals import get_aval
from funcgrad.custom_derivatives import custom_jvp
from funcgrad.interpreters.jaxpr_rules import eval_closed
from funcgrad.ops.control_flow._common import check_solver_output, trace_fun
from funcgrad.ops.control_flow.linear_solve import custom_linear_solve
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = ["custom_root", "custom_linear_solve"]


def custom_root(f: Callable[[Any], Any], initial_guess: Any,
                solve: Callable[[Callable[[Any], Any], Any], Any],
                tangent_solve: Callable[[Callable[[Any], Any], Any], Any],
                has_aux: bool = False) -> Any:
    """``solve(f, initial_guess)``, a root of ``f``, differentiated implicitly (JAX's).

    Derivatives with respect to the values ``f`` closes over come from the implicit function
    theorem at the root ``x*`` (``f(x*) == 0`` is assumed, not checked): ``dx* = -J^-1
    (df)(x*)``, ``J`` being ``f``'s Jacobian in ``x`` there; the solver is never
    differentiated (the initial guess gets no derivative). ``tangent_solve(g, y)`` solves
    the linear ``g(x) = y`` for ``g``, ``f`` linearized at the root: ``lambda g, y: y /
    g(1.0)`` for a scalar. Reverse mode transposes ``tangent_solve``, which must therefore be
    linear in ``y``. With ``has_aux=True``, ``solve`` returns ``(root, aux)`` and ``aux`` is
    returned undifferentiated.

    Example:
        >>> import funcgrad
        >>> from funcgrad import lax
        >>> def newton(f, x):
        ...     return lax.fori_loop(0, 20, lambda i, x: x - f(x) / funcgrad.grad(f)(x), x)
        >>> def sqrt(a):   # the root of x ** 2 - a
        ...     return lax.custom_root(lambda x: x ** 2 - a, 1.0, newton,
        ...                            lambda g, y: y / g(1.0))
        >>> round(float(sqrt(2.0)), 6), round(float(funcgrad.grad(sqrt)(2.0)), 6)
        (1.414214, 0.353553)
    """
    for name, fn in (("f", f), ("solve", solve), ("tangent_solve", tangent_solve)):
        if not callable(fn):
            raise TypeError(f"custom_root: {name} must be callable, got {type(fn).__name__}")
    leaves, tree = tree_util.tree_flatten(initial_guess)
    try:
        avals = [get_aval(x) for x in leaves]
    except TypeError:
        raise TypeError("custom_root: initial_guess must be an array or a pytree of "
                        "arrays") from None
    one = tree_util.tree_structure((initial_guess,))
    ft = trace_fun(f, one, avals, "custom_root f")
    check_solver_output("custom_root", "f", ft, tree, avals, False, "initial_guess")
    st = trace_fun(lambda x: solve(f, x), one, avals, "custom_root solve")
    aux_tree = check_solver_output("custom_root", "solve", st, tree, avals, has_aux,
                                   "initial_guess")
    n_aux = 0 if aux_tree is None else aux_tree.num_leaves

    def linearize_and_solve(x: Any, b: Any) -> Any:
        _, f_jvp = linearize(f, x)
        return tangent_solve(f_jvp, b)

    lt = trace_fun(linearize_and_solve, tree_util.tree_structure((initial_guess,) * 2),
                   avals + avals, "custom_root tangent_solve")
    check_solver_output("custom_root", "tangent_solve", lt, tree, avals, False,
                        "initial_guess")
    nf, ns, nl, nx = len(ft.consts), len(st.consts), len(lt.consts), len(leaves)

    @custom_jvp
    def root(*args: Any) -> tuple:
        # arrays, as JAX's (a solver returning a constant gave back a Python float)
        return tuple(fnp.asarray(o) for o in
                     eval_closed(st.jaxpr, *args[nf:nf + ns], *args[nf + ns + nl:]))

    @root.defjvp
    def root_jvp(primals: tuple, tangents: tuple) -> tuple:
        sol = root(*primals)
        x = sol[:nx]
        # F(p, x*(p)) = 0  =>  dx* = -(d_x F)^-1 (d_p F)[dp]
        _, rhs = jvp(lambda *p: tuple(eval_closed(ft.jaxpr, *p, *x)), primals[:nf],
                     tangents[:nf])
        dx = eval_closed(lt.jaxpr, *primals[nf + ns:nf + ns + nl], *x, *rhs)
        return sol, tuple(-t for t in dx) + tuple(fnp.zeros_like(a) for a in sol[nx:])

    out = root(*ft.consts, *st.consts, *lt.consts, *leaves)
    x = tree_util.tree_unflatten(tree, list(out[:nx]))
    if not has_aux:
        return x
    aux_tree = tree_util.tree_structure(
        tree_util.tree_unflatten(st.out_tree, list(range(nx + n_aux)))[1])
    return x, tree_util.tree_unflatten(aux_tree, list(out[nx:]))
