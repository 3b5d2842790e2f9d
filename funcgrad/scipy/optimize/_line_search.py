"""Strong-Wolfe line search (Nocedal & Wright, Algorithms 3.5 and 3.6), as
``jax.scipy.optimize.line_search``: written with ``funcgrad.lax.while_loop`` and selects, so
it runs under ``jit`` and ``vmap``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy

import funcgrad.numpy as fnp
from funcgrad.api import value_and_grad
from funcgrad.avals import get_aval
from funcgrad.lax import while_loop

__all__ = ["line_search", "LineSearchResults"]


def _cubicmin(a, fa, fpa, b, fb, c, fc):
    """Minimiser of the cubic through (a, fa) with slope fpa, (b, fb) and (c, fc)."""
    db = b - a
    dc = c - a
    denom = (db * dc) ** 2 * (db - dc)
    big_a = (dc ** 2 * (fb - fa - fpa * db) - db ** 2 * (fc - fa - fpa * dc)) / denom
    big_b = (-dc ** 3 * (fb - fa - fpa * db) + db ** 3 * (fc - fa - fpa * dc)) / denom
    radical = big_b * big_b - 3.0 * big_a * fpa
    # A negative radical (no real minimiser) gives NaN, which the caller's bounds check
    # rejects; mapped to NaN first so that NumPy does not warn.
    radical = fnp.where(radical < 0, numpy.nan, radical)
    return a + (-big_b + fnp.sqrt(radical)) / (3.0 * big_a)


def _quadmin(a, fa, fpa, b, fb):
    """Minimiser of the quadratic through (a, fa) with slope fpa and (b, fb)."""
    db = b - a
    big_b = (fb - fa - fpa * db) / (db ** 2)
    return a - fpa / (2.0 * big_b)


def _where(bit: Any, new: dict, old: NamedTuple) -> dict:
    return {k: fnp.where(bit, v, getattr(old, k)) for k, v in new.items()}


class _ZoomState(NamedTuple):
    done: Any
    failed: Any
    j: Any
    a_lo: Any
    phi_lo: Any
    dphi_lo: Any
    a_hi: Any
    phi_hi: Any
    dphi_hi: Any
    a_rec: Any
    phi_rec: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any
    nfev: Any
    ngev: Any


def _zoom(func_and_grad, wolfe_one, wolfe_two, a_lo, phi_lo, dphi_lo, a_hi, phi_hi, dphi_hi,
          g_0, pass_through, threshold):
    """Algorithm 3.6: cubic, then quadratic, then bisection interpolation."""
    false = fnp.asarray(False)
    zero = fnp.asarray(0, dtype=numpy.int64)
    state = _ZoomState(
        done=false, failed=false, j=zero, a_lo=a_lo, phi_lo=phi_lo, dphi_lo=dphi_lo,
        a_hi=a_hi, phi_hi=phi_hi, dphi_hi=dphi_hi, a_rec=(a_lo + a_hi) / 2.0,
        phi_rec=(phi_lo + phi_hi) / 2.0, a_star=fnp.ones_like(a_lo), phi_star=phi_lo,
        dphi_star=dphi_lo, g_star=g_0, nfev=zero, ngev=zero)

    def body(state: _ZoomState) -> _ZoomState:
        dalpha = state.a_hi - state.a_lo
        a = fnp.minimum(state.a_hi, state.a_lo)
        b = fnp.maximum(state.a_hi, state.a_lo)
        cchk = 0.2 * dalpha
        qchk = 0.1 * dalpha
        # JAX compares the signed width (dalpha <= threshold): a bracket entered reversed
        # (a_lo > a_hi, as zoom2 always is after the step doubled) failed at once, though it
        # held Wolfe steps (jax-ml/jax#40228; SciPy's line_search_wolfe2 finds them). The
        # width's size, against a scale-aware floor.
        floor = threshold * fnp.maximum(fnp.maximum(fnp.abs(state.a_lo), fnp.abs(state.a_hi)),
                                        1.0)
        state = state._replace(failed=state.failed | (fnp.abs(dalpha) <= floor))
        a_cubic = _cubicmin(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi, state.phi_hi,
                            state.a_rec, state.phi_rec)
        use_cubic = (state.j > 0) & (a_cubic > a + cchk) & (a_cubic < b - cchk)
        a_quad = _quadmin(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi, state.phi_hi)
        use_quad = (~use_cubic) & (a_quad > a + qchk) & (a_quad < b - qchk)
        use_bisection = (~use_cubic) & (~use_quad)
        a_j = fnp.where(use_cubic, a_cubic, state.a_rec)
        a_j = fnp.where(use_quad, a_quad, a_j)
        a_j = fnp.where(use_bisection, (state.a_lo + state.a_hi) / 2.0, a_j)
        phi_j, dphi_j, g_j = func_and_grad(a_j)
        state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)
        hi_to_j = wolfe_one(a_j, phi_j) | (phi_j >= state.phi_lo)
        star_to_j = wolfe_two(dphi_j) & (~hi_to_j)
        hi_to_lo = (dphi_j * (state.a_hi - state.a_lo) >= 0.0) & (~hi_to_j) & (~star_to_j)
        lo_to_j = (~hi_to_j) & (~star_to_j)
        state = state._replace(**_where(hi_to_j, dict(
            a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=state.a_hi, phi_rec=state.phi_hi),
            state))
        state = state._replace(done=star_to_j | state.done, **_where(star_to_j, dict(
            a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j), state))
        state = state._replace(**_where(hi_to_lo, dict(
            a_hi=state.a_lo, phi_hi=state.phi_lo, dphi_hi=state.dphi_lo, a_rec=state.a_hi,
            phi_rec=state.phi_hi), state))
        state = state._replace(**_where(lo_to_j & ~hi_to_lo, dict(
            a_rec=state.a_lo, phi_rec=state.phi_lo), state))
        state = state._replace(**_where(lo_to_j, dict(
            a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j), state))
        state = state._replace(j=state.j + 1)
        return state._replace(failed=state.failed | (state.j >= 30))

    return while_loop(lambda s: (~s.done) & (~pass_through) & (~s.failed), body, state)


class _LineSearchState(NamedTuple):
    done: Any
    failed: Any
    i: Any
    a_i1: Any
    phi_i1: Any
    dphi_i1: Any
    nfev: Any
    ngev: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any


class LineSearchResults(NamedTuple):
    """Results of :func:`line_search` (the fields of ``jax.scipy.optimize``'s).

    ``failed``: the strong Wolfe conditions were not met; ``nit``: iterations; ``nfev``,
    ``ngev``: function and gradient evaluations; ``k``: the iteration counter; ``a_k``: the
    step; ``f_k``, ``g_k``: value and gradient there; ``status``: 0 passed, 1 zoom failed,
    3 ``maxiter`` reached.
    """

    failed: Any
    nit: Any
    nfev: Any
    ngev: Any
    k: Any
    a_k: Any
    f_k: Any
    g_k: Any
    status: Any


def line_search(f: Callable[[Any], Any], xk: Any, pk: Any, old_fval: Any = None,
                old_old_fval: Any = None, gfk: Any = None, c1: float = 1e-4, c2: float = 0.9,
                maxiter: int = 20) -> LineSearchResults:
    """Inexact line search along the descent direction ``pk`` from ``xk`` satisfying the
    strong Wolfe conditions (``c1``, ``c2``), as ``jax.scipy.optimize.line_search``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.optimize import line_search
        >>> res = line_search(lambda x: (x ** 2).sum(), np.array([1.0, 1.0]),
        ...                   np.array([-1.0, -1.0]))
        >>> bool(res.failed), float(res.a_k)
        (False, 1.0)
    """
    xk = fnp.asarray(xk)
    if get_aval(xk).dtype.kind not in "fc":
        xk = xk.astype(numpy.float64)
    dt = numpy.result_type(get_aval(xk).dtype, get_aval(fnp.asarray(pk)).dtype)
    xk, pk = xk.astype(dt), fnp.asarray(pk).astype(dt)
    real = numpy.dtype(numpy.float32 if dt in (numpy.float32, numpy.complex64) else numpy.float64)
    vg = value_and_grad(f)

    def func_and_grad(t: Any) -> tuple[Any, Any, Any]:
        phi, g = vg(xk + fnp.asarray(t).astype(dt) * pk)
        return (fnp.asarray(phi).astype(real), fnp.real(fnp.dot(g, pk)).astype(real),
                fnp.asarray(g).astype(dt))

    evaluated = old_fval is None or gfk is None
    if evaluated:
        phi_0, dphi_0, gfk = func_and_grad(0.0)
    else:
        phi_0 = fnp.asarray(old_fval).astype(real)
        gfk = fnp.asarray(gfk).astype(dt)
        dphi_0 = fnp.real(fnp.dot(gfk, pk)).astype(real)
    if old_old_fval is not None:
        candidate = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start = fnp.where(candidate > 1, 1.0, candidate).astype(real)
    else:
        start = fnp.asarray(1.0, dtype=real)
    threshold = 1e-5 if real == numpy.float32 else 1e-10

    def wolfe_one(a_i, phi_i):  # the negation of the sufficient-decrease condition
        return phi_i > phi_0 + c1 * a_i * dphi_0

    def wolfe_two(dphi_i):
        return fnp.abs(dphi_i) <= -c2 * dphi_0

    count = fnp.asarray(1 if evaluated else 0, dtype=numpy.int64)
    zero = fnp.asarray(0.0, dtype=real)
    state = _LineSearchState(
        done=fnp.asarray(False), failed=fnp.asarray(False),
        i=fnp.asarray(1, dtype=numpy.int64), a_i1=zero, phi_i1=phi_0, dphi_i1=dphi_0,
        nfev=count, ngev=count, a_star=zero, phi_star=phi_0, dphi_star=dphi_0, g_star=gfk)

    def body(state: _LineSearchState) -> _LineSearchState:
        a_i = fnp.where(state.i == 1, start, state.a_i1 * 2.0)
        phi_i, dphi_i, g_i = func_and_grad(a_i)
        state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)
        star_to_zoom1 = wolfe_one(a_i, phi_i) | ((phi_i >= state.phi_i1) & (state.i > 1))
        star_to_i = wolfe_two(dphi_i) & (~star_to_zoom1)
        star_to_zoom2 = (dphi_i >= 0.0) & (~star_to_zoom1) & (~star_to_i)
        zoom1 = _zoom(func_and_grad, wolfe_one, wolfe_two, state.a_i1, state.phi_i1,
                      state.dphi_i1, a_i, phi_i, dphi_i, gfk, ~star_to_zoom1, threshold)
        state = state._replace(nfev=state.nfev + zoom1.nfev, ngev=state.ngev + zoom1.ngev)
        zoom2 = _zoom(func_and_grad, wolfe_one, wolfe_two, a_i, phi_i, dphi_i, state.a_i1,
                      state.phi_i1, state.dphi_i1, gfk, ~star_to_zoom2, threshold)
        state = state._replace(nfev=state.nfev + zoom2.nfev, ngev=state.ngev + zoom2.ngev)
        keys = ("a_star", "phi_star", "dphi_star", "g_star")
        state = state._replace(
            done=star_to_zoom1 | state.done, failed=(star_to_zoom1 & zoom1.failed) | state.failed,
            **_where(star_to_zoom1, {k: getattr(zoom1, k) for k in keys}, state))
        state = state._replace(done=star_to_i | state.done, **_where(star_to_i, dict(
            a_star=a_i, phi_star=phi_i, dphi_star=dphi_i, g_star=g_i), state))
        state = state._replace(
            done=star_to_zoom2 | state.done, failed=(star_to_zoom2 & zoom2.failed) | state.failed,
            **_where(star_to_zoom2, {k: getattr(zoom2, k) for k in keys}, state))
        return state._replace(i=state.i + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)

    state = while_loop(lambda s: (~s.done) & (s.i <= maxiter) & (~s.failed), body, state)
    status = fnp.where(state.failed, 1, fnp.where(state.i > maxiter, 3, 0)).astype(numpy.int64)
    alpha = state.a_star
    if real == numpy.float32:  # a step floor keeps single precision from stalling
        alpha = fnp.where(fnp.abs(alpha) < 1e-8, fnp.sign(alpha) * 1e-8, alpha)
    return LineSearchResults(failed=state.failed | (~state.done), nit=state.i - 1,
                             nfev=state.nfev, ngev=state.ngev, k=state.i, a_k=alpha,
                             f_k=state.phi_star, g_k=state.g_star, status=status)
