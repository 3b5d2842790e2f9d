"""Shared helpers of funcgrad.scipy.stats: argument promotion and the standardised variable."""

from __future__ import annotations

import math
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.errors import DTypeError
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy import special as _special

HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
LOG_PI = math.log(math.pi)


def promote(name: str, *args: Any) -> list[Any]:
    """Arguments as float arrays of one dtype: float32 if all array arguments are float32
    (Python scalars are weak, NEP 50), float64 otherwise (integers included)."""
    try:
        out = _special._floats(name, *args)
    except DTypeError:
        raise DTypeError(f"funcgrad.scipy.stats.{name}: complex input is not supported") from None
    return [fnp.asarray(v) for v in out]


def standardize(x: Any, loc: Any, scale: Any) -> Any:
    # A nonpositive scale gives nan results (SciPy's): dividing by nan instead of by it
    # carries them through the formulas silently (0 would warn: inf - inf, 0 * inf).
    return (x - loc) / fnp.where(scale > 0, scale, numpy.nan)


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
