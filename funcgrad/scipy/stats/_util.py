"""Shared helpers of funcgrad.scipy.stats: argument promotion and the standardised variable."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.errors import DTypeError
from funcgrad.lax import while_loop
from funcgrad.ops.elementwise import stop_gradient
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy import special as _special
from funcgrad.scipy._device import colocated

HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
LOG_PI = math.log(math.pi)


def promote(name: str, *args: Any) -> list[Any]:
    """Arguments as float arrays of one dtype: float32 if all array arguments are float32
    (Python scalars are weak, NEP 50), float64 otherwise (integers included)."""
    try:
        out = _special._floats(name, *args)
    except DTypeError:
        raise DTypeError(f"funcgrad.scipy.stats.{name}: complex input is not supported") from None
    # (on one device: the formulas' operators cannot mix host and device arrays)
    return colocated(*out)


def standardize(x: Any, loc: Any, scale: Any) -> Any:
    # A nonpositive scale gives nan results (SciPy's): dividing by nan instead of by it
    # carries them through the formulas silently (0 would warn: inf - inf, 0 * inf).
    # (funcgrad's operations, not NumPy's operators: on 0-d host arrays those give a NumPy
    # scalar, which a later operation alone would put on the default device)
    return fnp.divide(fnp.subtract(x, loc), fnp.where(fnp.greater(scale, 0), scale, numpy.nan))


def half_line_args(name: str, x: Any, loc: Any, scale: Any, *shapes: Any) -> tuple[Any, ...]:
    """``(y, y_in, inside, scale, *shapes)`` for a family supported on ``y >= 0``: the
    standardized ``y``, whether it is in the support, and ``y`` with a harmless stand-in (1.0)
    outside it and at infinities, so the formulas evaluate everywhere before ``where`` picks."""
    x, loc, scale, *shapes = promote(name, x, loc, scale, *shapes)
    y = standardize(x, loc, scale)
    inside = y >= 0
    y_in = fnp.where(inside & fnp.isfinite(y), y, 1.0)
    return (y, y_in, inside, scale, *shapes)


def scale_ok(out: Any, scale: Any) -> Any:
    """nan where ``scale <= 0`` (as SciPy)."""
    return fnp.where(scale > 0, out, numpy.nan)


def nan_at(out: Any, v: Any) -> Any:
    """nan where ``v`` is nan: a nan point is not a point outside the support (as SciPy)."""
    return fnp.where(fnp.isnan(v), numpy.nan, out)


def is_integer(k: Any) -> Any:
    return fnp.equal(k, fnp.floor(k))


def log_prob(p: Any, q: Any) -> Any:
    """``log(p)`` where ``q = 1 - p`` is known accurately: ``log1p(-q)`` when ``p > 1/2`` (so
    a log-CDF near 1 keeps the digits of the small tail mass)."""
    big = p > 0.5
    return fnp.where(big, _q.log1p(-fnp.where(big, q, 0.0)), _q.log(fnp.where(big, 0.5, p)))


def log1mexp(a: Any) -> Any:
    """``log(1 - exp(-a))`` for ``a >= 0``, accurate at both ends: ``log(-expm1(-a))`` up to
    ``log 2``, ``log1p(-exp(-a))`` beyond (where ``1 - exp(-a)`` rounds to 1 and the plain form
    gives 0 instead of ``-exp(-a)``); ``-inf`` at 0."""
    big = a > math.log(2.0)
    a_big = fnp.where(big, a, 1.0)
    a_small = fnp.where(big, 1.0, a)
    return fnp.where(big, fnp.log1p(-fnp.exp(-a_big)), _q.log(-fnp.expm1(-a_small)))


def prob_ok(out: Any, q: Any) -> Any:
    """nan where the probability ``q`` of a quantile function is outside ``[0, 1]`` (as SciPy)."""
    return fnp.where((q >= 0) & (q <= 1), out, numpy.nan)


def discrete_quantile(holds: Callable[[Any], Any], q: Any, guess: Any, lo: Any, hi: Any,
                      upper: bool) -> Any:
    """The quantile of a discrete distribution on the integers ``lo..hi``: the smallest ``k``
    there for which ``holds(k)`` (``cdf(k) >= q``, or ``sf(k) <= q`` for ``upper``; it holds
    from some ``k`` on). Searched from ``guess`` (a normal approximation) by galloping away
    from it with doubling steps until the answer is bracketed, then bisecting: a few steps
    near the guess, logarithmically many far from it. ``q`` at ``0``/``1`` gives the ends
    (``lo - 1`` and ``hi``, SciPy's convention; swapped for ``upper``), outside ``[0, 1]``
    nan. Piecewise constant: no derivative."""
    q, guess, lo, hi = (stop_gradient(v) for v in fnp.broadcast_arrays(q, guess, lo, hi))
    inner = (q > 0) & (q < 1)
    top = fnp.where(fnp.isfinite(hi), hi, fnp.maximum(lo, 2.0 ** 52))
    k0 = fnp.clip(fnp.where(inner & fnp.isfinite(guess), fnp.floor(guess), lo), lo, top)

    def cond(s: tuple) -> Any:
        return (s[0] < 400) & fnp.logical_not(fnp.all(s[5]))

    def body(s: tuple) -> tuple:
        i, k, a, b, step, done = s  # holds(b), not holds(a): the answer is in (a, b]
        h = holds(k)
        a_n = fnp.where(h, a, fnp.maximum(a, k))
        b_n = fnp.where(h, fnp.minimum(b, k), b)
        mid = fnp.floor(0.5 * (a_n + fnp.minimum(b_n, top + 1.0)))
        gallop = fnp.where(h, k - step, k + step)
        k_n = fnp.where((gallop > a_n) & (gallop < b_n), gallop, mid)
        fin = b_n - a_n <= 1.0
        keep = done | fin
        return (i + 1, fnp.where(keep, k, fnp.clip(k_n, lo, top)), fnp.where(done, a, a_n),
                fnp.where(done, b, b_n), step * 2.0, keep)

    init = (_special._counter(k0), k0, lo - 1.0, hi + 0.0 * lo,
            fnp.ones_like(k0), fnp.logical_not(inner))
    k = while_loop(cond, body, init)[3]
    first, last = (hi, lo - 1.0) if upper else (lo - 1.0, hi)
    k = fnp.where(q == 0, first, fnp.where(q == 1, last, k))
    return fnp.where((q >= 0) & (q <= 1), k, numpy.nan)


def exp_overflow_quiet(v: Any) -> Any:
    """``exp(v)``: ``inf`` beyond the largest float without NumPy's overflow warning."""
    big = v > math.log(numpy.finfo(numpy.float64).max)
    return fnp.where(big, numpy.inf, fnp.exp(fnp.where(big, 0.0, v)))
