"""Logarithms, reciprocal and division with IEEE results but without NumPy's warnings.

SciPy's special functions and distributions never emit NumPy floating-point warnings
(``scipy.special.xlogy(1, 0)`` is ``-inf``, silently), and neither does JAX; funcgrad's
elementwise primitives warn as NumPy does. These helpers apply the primitive to a safe argument
and select the IEEE value at the singular points (``log(0) = -inf``, ``log(-1) = nan``,
``1 / 0 = inf``), so every value is the plain operation's. Their derivatives are rules
(``custom_jvp``) written with the same helpers, so they too are the plain operation's at the
singular points (``d log(x) / dx`` at 0 is ``inf``, not the 0 a bare ``where`` would give) and
nest to any order. Wherever operations run as they are called -- concrete arguments, and the
eager transformations (``grad``'s tape, ``jvp``, ``vmap``) outside ``jit`` -- a fast path
runs the plain primitive under ``numpy.errstate(all="ignore")`` instead: the same values and
derivatives (only a backward pass run later may still warn at a singular point), at the cost of
one operation. Staged code (``jit``, ``make_jaxpr``) gets the compositions.

Example:
    >>> import warnings, numpy as np
    >>> from funcgrad.scipy import _quiet
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error")
    ...     _quiet.log(np.array([0.0, -1.0, 1.0]))
    array([-inf,  nan,   0.])
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
from funcgrad.core import current_trace
from funcgrad.interpreters.staging import StagingTrace
from funcgrad.ops.custom_derivatives import custom_jvp

__all__ = ["log", "log1p", "reciprocal", "div"]


def _concrete(*xs: Any) -> bool:
    """Whether operations run now (no staging trace anywhere in the current trace stack), so
    that an errstate around them silences them."""
    t = current_trace()
    while t is not None:
        if isinstance(t, StagingTrace):
            return False
        t = t.parent
    return True


def reciprocal(x: Any) -> Any:
    """``1 / x``: ``+-inf`` at ``+-0`` (the sign of the zero), without the warning."""
    if _concrete(x):
        with numpy.errstate(all="ignore"):
            return _ew.div(1.0, x)
    return _reciprocal(x)


def log(x: Any) -> Any:
    """``log(x)``: ``-inf`` at 0, nan below 0 (and at nan), without the warnings."""
    if _concrete(x):
        with numpy.errstate(all="ignore"):
            return _ew.log(x)
    return _log(x)


def log1p(x: Any) -> Any:
    """``log1p(x)``: ``-inf`` at -1, nan below -1 (and at nan), without the warnings."""
    if _concrete(x):
        with numpy.errstate(all="ignore"):
            return _ew.log1p(x)
    return _log1p(x)


def div(a: Any, b: Any) -> Any:
    """``a / b`` without the divide-by-zero and invalid-value warnings: ``+-inf`` for a nonzero
    ``a`` over a zero ``b`` (signs as IEEE), nan for ``0 / 0`` and ``inf / inf``."""
    if _concrete(a, b):
        with numpy.errstate(all="ignore"):
            return _ew.div(a, b)
    return _div(a, b)


@custom_jvp
def _reciprocal(x: Any) -> Any:
    zero = _ew.eq(x, 0)
    r = _ew.div(1.0, _ew.select_n(zero, x, 1.0))
    return _ew.select_n(zero, r, _ew.copysign(numpy.inf, x))


@_reciprocal.defjvp
def _reciprocal_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    r = _reciprocal(x)
    return r, _ew.neg(_ew.mul(t, _ew.mul(r, r)))


@custom_jvp
def _log(x: Any) -> Any:
    pos = _ew.gt(x, 0)
    out = _ew.log(_ew.select_n(pos, 1.0, x))
    return _ew.select_n(_ew.eq(x, 0), _ew.select_n(pos, numpy.nan, out), -numpy.inf)


@_log.defjvp
def _log_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return _log(x), _ew.mul(t, reciprocal(x))


@custom_jvp
def _log1p(x: Any) -> Any:
    ok = _ew.gt(x, -1.0)
    out = _ew.log1p(_ew.select_n(ok, 0.0, x))
    return _ew.select_n(_ew.eq(x, -1.0), _ew.select_n(ok, numpy.nan, out), -numpy.inf)


@_log1p.defjvp
def _log1p_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return _log1p(x), _ew.mul(t, reciprocal(_ew.add(x, 1.0)))


def _div(a: Any, b: Any) -> Any:
    zero = _ew.eq(b, 0)
    both_inf = _ew.and_(_ew.eq(_ew.abs(a), numpy.inf), _ew.eq(_ew.abs(b), numpy.inf))
    bad = _ew.or_(zero, both_inf)
    q = _ew.div(_ew.select_n(bad, a, 1.0), _ew.select_n(bad, b, 1.0))
    # At b = 0: a times reciprocal(b) (an infinity), which is nan exactly where a is 0 or nan
    # -- but 0 * inf warns, so those are selected separately.
    a_zero = _ew.or_(_ew.eq(a, 0), _ew.ne(a, a))
    at_zero = _ew.mul(_ew.select_n(a_zero, a, 1.0), reciprocal(b))
    at_zero = _ew.select_n(a_zero, at_zero, numpy.nan)
    return _ew.select_n(zero, _ew.select_n(both_inf, q, numpy.nan), at_zero)
