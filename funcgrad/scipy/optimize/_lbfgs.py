"""L-BFGS minimisation, as ``jax.scipy.optimize.minimize(method=
"l-bfgs-experimental-do-not-rely-on-this")``: Nocedal & Wright's Algorithm 7.5 (the two-loop
recursion over the last ``maxcor`` steps) with the strong-Wolfe line search, generalised to
complex variables (Sorber et al. 2012), in a ``funcgrad.lax.while_loop`` (``jit``/``vmap``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy

import funcgrad.numpy as fnp
from funcgrad.api import value_and_grad
from funcgrad.avals import get_aval
from funcgrad.lax import while_loop
from funcgrad.scipy.optimize._line_search import line_search

__all__ = ["minimize_lbfgs", "LBFGSResults"]


class LBFGSResults(NamedTuple):
    """JAX's ``LBFGSResults``: ``status`` 0 converged, 1 ``maxiter``, 2 ``maxfun``,
    3 ``maxgrad``, 4 insufficient progress (``f_k - f_{k+1} < ftol``), 5 line search
    failed; ``ls_status`` the last line search's status."""

    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    s_history: Any
    y_history: Any
    rho_history: Any
    gamma: Any
    status: Any
    ls_status: Any


def _two_loop(state: LBFGSResults) -> Any:
    # The history is kept newest-last, with unused (older) slots all zero: rho = 0 makes
    # them contribute nothing, so both loops run over every slot with static indices.
    rho, s, y = state.rho_history, state.s_history, state.y_history
    m = get_aval(rho).shape[0]
    real = get_aval(rho).dtype
    q = -fnp.conj(state.g_k)
    alpha: list[Any] = [None] * m
    for i in range(m - 1, -1, -1):
        alpha[i] = rho[i] * fnp.real(fnp.dot(fnp.conj(s[i]), q)).astype(real)
        q = q - alpha[i] * fnp.conj(y[i])
    q = state.gamma * q
    for i in range(m):
        beta = rho[i] * fnp.real(fnp.dot(y[i], q)).astype(real)
        q = q + (alpha[i] - beta) * s[i]
    return q


def _push(history: Any, new: Any) -> Any:
    return fnp.concatenate([history[1:], fnp.expand_dims(new, 0)], axis=0)


def minimize_lbfgs(fun: Callable[[Any], Any], x0: Any, maxiter: float | None = None,
                   norm: Any = numpy.inf, maxcor: int = 10, ftol: float = 2.220446049250313e-09,
                   gtol: float = 1e-05, maxfun: float | None = None,
                   maxgrad: float | None = None, maxls: int = 20) -> LBFGSResults:
    """L-BFGS from the 1-D ``x0``: stops when ``norm(grad, ord=norm) < gtol`` after a step,
    or (failed) when a step gains less than ``ftol``, after ``maxiter`` steps, ``maxfun``
    function or ``maxgrad`` gradient evaluations, or when the line search (``maxls`` steps)
    fails. Without any of the three limits ``maxiter`` is ``200 * x0.size`` (JAX's rule)."""
    x0 = fnp.asarray(x0)
    if get_aval(x0).dtype.kind not in "fc":
        x0 = x0.astype(numpy.float64)
    dt = get_aval(x0).dtype
    real = numpy.dtype(numpy.float32 if dt in (numpy.float32, numpy.complex64) else
                       numpy.float64)
    d = get_aval(x0).shape[0]
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = d * 200
    maxiter = numpy.inf if maxiter is None else maxiter
    maxfun = numpy.inf if maxfun is None else maxfun
    maxgrad = numpy.inf if maxgrad is None else maxgrad
    if not isinstance(maxcor, (int, numpy.integer)) or maxcor < 1:
        raise ValueError(f"minimize: maxcor must be a positive integer, got {maxcor!r}")
    f_0, g_0 = value_and_grad(fun)(x0)
    i64 = numpy.int64  # JAX x64: counters are int64 (its Python ints)
    state = LBFGSResults(
        converged=fnp.asarray(False), failed=fnp.asarray(False),
        k=fnp.asarray(0, dtype=i64), nfev=fnp.asarray(1, dtype=i64),
        ngev=fnp.asarray(1, dtype=i64), x_k=x0, f_k=fnp.asarray(f_0),
        g_k=fnp.asarray(g_0).astype(dt), s_history=fnp.zeros((maxcor, d), dtype=dt),
        y_history=fnp.zeros((maxcor, d), dtype=dt), rho_history=fnp.zeros((maxcor,), dtype=real),
        gamma=fnp.asarray(1.0, dtype=dt), status=fnp.asarray(0, dtype=i64),
        ls_status=fnp.asarray(0, dtype=i64))

    def cond(state: LBFGSResults) -> Any:
        return (~state.converged) & (~state.failed)

    def body(state: LBFGSResults) -> LBFGSResults:
        p_k = _two_loop(state)
        ls = line_search(fun, state.x_k, p_k, old_fval=state.f_k, gfk=state.g_k, maxiter=maxls)
        s_k = fnp.asarray(ls.a_k).astype(dt) * p_k
        x_kp1 = state.x_k + s_k
        f_kp1, g_kp1 = ls.f_k, ls.g_k
        y_k = g_kp1 - state.g_k
        rho_inv = fnp.real(fnp.dot(y_k, s_k))
        rho_k = (1.0 / rho_inv).astype(real)
        gamma = rho_inv / fnp.real(fnp.dot(fnp.conj(y_k), y_k))
        # The later tests win: a failed line search over the limits over lack of progress.
        status = fnp.where(state.f_k - f_kp1 < ftol, 4, 0)
        status = fnp.where(state.ngev >= maxgrad, 3, status)
        status = fnp.where(state.nfev >= maxfun, 2, status)
        status = fnp.where(state.k >= maxiter, 1, status)
        status = fnp.where(ls.failed, 5, status)
        converged = fnp.linalg.norm(g_kp1, ord=norm) < gtol
        return LBFGSResults(
            converged=converged, failed=(status > 0) & ~converged, k=state.k + 1,
            nfev=(state.nfev + ls.nfev).astype(i64), ngev=(state.ngev + ls.ngev).astype(i64),
            x_k=x_kp1.astype(dt), f_k=fnp.asarray(f_kp1).astype(get_aval(state.f_k).dtype),
            g_k=fnp.asarray(g_kp1).astype(dt), s_history=_push(state.s_history, s_k),
            y_history=_push(state.y_history, y_k),
            rho_history=_push(state.rho_history, rho_k), gamma=gamma.astype(dt),
            status=fnp.where(converged, 0, status).astype(i64),
            ls_status=fnp.asarray(ls.status).astype(i64))

    return while_loop(cond, body, state)
