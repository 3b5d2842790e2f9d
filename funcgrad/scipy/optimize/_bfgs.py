"""BFGS minimisation, as ``jax.scipy.optimize.minimize(method="BFGS")``: a
``funcgrad.lax.while_loop`` over quasi-Newton steps with the strong-Wolfe line search, so it
runs under ``jit`` and ``vmap``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy

import funcgrad.numpy as fnp
from funcgrad.api import value_and_grad
from funcgrad.avals import get_aval
from funcgrad.lax import while_loop
from funcgrad.scipy.optimize._line_search import line_search

__all__ = ["minimize_bfgs", "BFGSResults"]


class BFGSResults(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    nhev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    H_k: Any  # noqa: N815  (JAX's field name)
    old_old_fval: Any
    status: Any
    line_search_status: Any


def _norm(g: Any, ord: Any) -> Any:  # noqa: A002
    return fnp.linalg.norm(g, ord=ord)


def minimize_bfgs(fun: Callable[[Any], Any], x0: Any, maxiter: int | None = None,
                  norm: Any = numpy.inf, gtol: float = 1e-5,
                  line_search_maxiter: int = 10) -> BFGSResults:
    """BFGS from ``x0`` (1-D) until ``norm(grad, ord=norm) < gtol`` or ``maxiter`` steps
    (default ``200 * x0.size``)."""
    x0 = fnp.asarray(x0)
    if get_aval(x0).dtype.kind not in "fc":
        x0 = x0.astype(numpy.float64)
    dt = get_aval(x0).dtype
    if maxiter is None:
        maxiter = get_aval(x0).size * 200
    d = get_aval(x0).shape[0]
    f_0, g_0 = value_and_grad(fun)(x0)
    f_0 = fnp.asarray(f_0)
    i64 = numpy.int64  # JAX x64: counters are int64 (its Python ints)
    zero = fnp.asarray(0, dtype=i64)
    one = fnp.asarray(1, dtype=i64)
    state = BFGSResults(
        converged=_norm(g_0, norm) < gtol, failed=fnp.asarray(False), k=zero, nfev=one,
        ngev=one, nhev=zero, x_k=x0, f_k=f_0, g_k=fnp.asarray(g_0).astype(dt),
        H_k=fnp.eye(d, dtype=dt), old_old_fval=f_0 + fnp.linalg.norm(g_0) / 2, status=zero,
        line_search_status=zero)

    def cond(state: BFGSResults) -> Any:
        return (~state.converged) & (~state.failed) & (state.k < maxiter)

    def body(state: BFGSResults) -> BFGSResults:
        p_k = -fnp.dot(state.H_k, state.g_k)
        ls = line_search(fun, state.x_k, p_k, old_fval=state.f_k,
                         old_old_fval=state.old_old_fval, gfk=state.g_k,
                         maxiter=line_search_maxiter)
        state = state._replace(nfev=state.nfev + ls.nfev, ngev=state.ngev + ls.ngev,
                               failed=ls.failed, line_search_status=ls.status)
        s_k = ls.a_k.astype(dt) * p_k
        x_kp1 = state.x_k + s_k
        g_kp1 = ls.g_k
        y_k = g_kp1 - state.g_k
        rho_k = 1.0 / fnp.dot(y_k, s_k)
        sy_k = s_k[:, None] * y_k[None, :]
        w = fnp.eye(d, dtype=dt) - rho_k * sy_k
        h_kp1 = (fnp.einsum("ij,jk,lk", w, state.H_k, w)
                 + rho_k * s_k[:, None] * s_k[None, :])
        h_kp1 = fnp.where(fnp.isfinite(rho_k), h_kp1, state.H_k).astype(dt)
        converged = _norm(g_kp1, norm) < gtol
        return state._replace(converged=converged, k=state.k + 1, x_k=x_kp1,
                              f_k=ls.f_k.astype(get_aval(state.f_k).dtype), g_k=g_kp1,
                              H_k=h_kp1, old_old_fval=state.f_k)

    state = while_loop(cond, body, state)
    status = fnp.where(state.converged, 0, fnp.where(
        state.k == maxiter, 1, fnp.where(state.failed, 2 + state.line_search_status, -1)))
    return state._replace(status=status.astype(i64))
