"""The truncated normal distribution, as ``scipy.stats.truncnorm`` (bounds ``a < b`` in
standard deviations, ``loc``, ``scale``): the standard normal restricted to ``[a, b]``.
The normalising mass is computed in logs (``log_ndtr`` in the tails), so far-tail
truncations such as ``a = 30`` stay finite.

Example:
    >>> from funcgrad.scipy.stats import truncnorm
    >>> round(float(truncnorm.pdf(0.5, 0.0, 1.0)), 12)
    1.031406901144
"""

from __future__ import annotations

import math
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy import special as _sp
from funcgrad.scipy.stats._util import HALF_LOG_2PI, nan_at, prob_ok, promote, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def _log_diff(x: Any, y: Any) -> Any:
    """``log(exp(x) - exp(y))`` for ``x >= y``."""
    d = fnp.where(x > y, y - x, -1.0)
    return fnp.where(x > y, x + _q.log(-fnp.expm1(d)), -numpy.inf)


def _log_gauss_mass(a: Any, b: Any) -> Any:
    """``log(ndtr(b) - ndtr(a))`` for ``a <= b``, accurate in both tails (SciPy's split:
    an interval in one tail by differences of ``log_ndtr``, one across 0 by ``log1p``)."""
    left = b <= 0
    right = a > 0
    a_tail = fnp.where(right, -b, a)
    b_tail = fnp.where(right, -a, b)
    tail = _log_diff(_sp.log_ndtr(b_tail), _sp.log_ndtr(a_tail))
    central = _q.log1p(-_sp.ndtr(fnp.where(left | right, -1.0, a))
                        - _sp.ndtr(-fnp.where(left | right, 1.0, b)))
    return fnp.where(left | right, tail, central)


def _args(name: str, x: Any, a: Any, b: Any, loc: Any, scale: Any) -> tuple[Any, ...]:
    x, a, b, loc, scale = promote(name, x, a, b, loc, scale)
    z = standardize(x, loc, scale)
    ok = (a < b) & (scale > 0)
    a_s = fnp.where(ok, a, 0.0)
    b_s = fnp.where(ok, b, 1.0)
    z_in = fnp.clip(fnp.where(fnp.isnan(z), a_s, z), a_s, b_s)
    return z, z_in, a_s, b_s, ok, scale


def _finish(out: Any, z: Any, ok: Any) -> Any:
    return fnp.where(ok, nan_at(out, z), numpy.nan)


def _log_cdf_sf(z: Any, a: Any, b: Any) -> tuple[Any, Any]:
    """``(log cdf, log sf)`` at ``a <= z <= b``; the one nearer 0 is ``log1p(-exp(other))``,
    so neither loses the digits of a small complement."""
    mass = _log_gauss_mass(a, b)
    lc = fnp.minimum(_log_gauss_mass(a, z) - mass, 0.0)
    ls = fnp.minimum(_log_gauss_mass(z, b) - mass, 0.0)
    half = -math.log(2.0)
    lc_acc = fnp.where(lc > half, _q.log1p(-fnp.exp(fnp.where(lc > half, ls, half))), lc)
    ls_acc = fnp.where(ls > half, _q.log1p(-fnp.exp(fnp.where(ls > half, lc, half))), ls)
    return lc_acc, ls_acc


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``norm.logpdf(z) - log(ndtr(b) - ndtr(a)) - log(scale)`` for ``a <= z <= b``,
    ``-inf`` outside; nan unless ``a < b`` and ``scale > 0``.

    Example:
        >>> from funcgrad.scipy.stats import truncnorm
        >>> round(float(truncnorm.logpdf(0.5, -1.0, 2.0)), 12)
        -0.84377223888
    """
    z, z_in, a, b, ok, scale = _args("truncnorm.logpdf", x, a, b, loc, scale)
    out = -0.5 * z_in * z_in - HALF_LOG_2PI - _log_gauss_mass(a, b) - _q.log(scale)
    return _finish(fnp.where((z < a) | (z > b), -numpy.inf, out), z, ok)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density.

    Example:
        >>> from funcgrad.scipy.stats import truncnorm
        >>> round(float(truncnorm.pdf(0.0, -1.0, 1.0)), 12)
        0.584368567257
    """
    return fnp.exp(logpdf(x, a, b, loc, scale))


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the CDF, ``log_mass(a, z) - log_mass(a, b)`` (``-inf`` below ``a``, 0 above
    ``b``).

    Example:
        >>> from funcgrad.scipy.stats import truncnorm
        >>> round(float(truncnorm.logcdf(0.0, -1.0, 1.0)), 12)
        -0.69314718056
    """
    z, z_in, a, b, ok, _ = _args("truncnorm.logcdf", x, a, b, loc, scale)
    log_cdf, log_sf = _log_cdf_sf(z_in, a, b)
    out = fnp.where(z < a, -numpy.inf, fnp.where(z >= b, 0.0, log_cdf))
    return _finish(out, z, ok)


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Cumulative distribution function.

    Example:
        >>> from funcgrad.scipy.stats import truncnorm
        >>> round(float(truncnorm.cdf(0.0, -1.0, 1.0)), 12)
        0.5
    """
    return fnp.exp(logcdf(x, a, b, loc, scale))


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the survival function, ``log_mass(z, b) - log_mass(a, b)``.

    Example:
        >>> from funcgrad.scipy.stats import truncnorm
        >>> round(float(truncnorm.logsf(0.0, -1.0, 1.0)), 12)
        -0.69314718056
    """
    z, z_in, a, b, ok, _ = _args("truncnorm.logsf", x, a, b, loc, scale)
    log_cdf, log_sf = _log_cdf_sf(z_in, a, b)
    out = fnp.where(z <= a, 0.0, fnp.where(z > b, -numpy.inf, log_sf))
    return _finish(out, z, ok)


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Survival function.

    Example:
        >>> from funcgrad.scipy.stats import truncnorm
        >>> round(float(truncnorm.sf(0.5, 0.0, 1.0)), 12)
        0.439093574812
    """
    return fnp.exp(logsf(x, a, b, loc, scale))


def _from_left(log_q: Any, a: Any, b: Any) -> tuple[Any, Any]:
    """``(x, log target)``: ``x = ndtri_exp(log(ndtr(a) + q (ndtr(b) - ndtr(a))))``, the
    quantile measured from the left end, all in logs (``a = 30`` stays finite)."""
    lt = fnp.logaddexp(_sp.log_ndtr(a), log_q + _log_gauss_mass(a, b))
    return _sp.ndtri_exp(fnp.minimum(lt, 0.0)), lt


def _quantile(name: str, q: Any, a: Any, b: Any, loc: Any, scale: Any, upper: bool) -> Any:
    q, a, b, loc, scale = promote(name, q, a, b, loc, scale)
    ok = (a < b) & (scale > 0)
    a_s, b_s = fnp.where(ok, a, 0.0), fnp.where(ok, b, 1.0)
    q_s = fnp.where((q > 0) & (q < 1), q, 0.5)
    log_p, log_pc = _q.log(q_s), _q.log1p(-q_s)
    if upper:
        log_p, log_pc = log_pc, log_p
    # From the left end where the target probability is below 1/2 (its digits are in the
    # small number), else mirrored: -quantile of 1 - q in (-b, -a).
    left, lt = _from_left(log_p, a_s, b_s)
    right, _ = _from_left(log_pc, -b_s, -a_s)
    y = fnp.clip(fnp.where(lt <= -math.log(2.0), left, -right), a_s, b_s)
    first, last = (b_s, a_s) if upper else (a_s, b_s)
    y = fnp.where(q == 0, first, fnp.where(q == 1, last, y))
    return prob_ok(fnp.where(ok, loc + scale * y, numpy.nan), q)


def ppf(q: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Quantile function, computed in logs from the nearer end of the interval (through
    :func:`funcgrad.scipy.special.ndtri_exp`): far-tail truncations such as ``a = 30`` keep
    their digits. ``a`` at ``q = 0``, ``b`` at 1; differentiable in every argument.

    Example:
        >>> from funcgrad.scipy.stats import truncnorm
        >>> round(float(truncnorm.ppf(0.5, -1.0, 1.0)), 12) + 0.0
        0.0
        >>> round(float(truncnorm.ppf(0.5, 30.0, 31.0)), 10)
        30.0230704678
    """
    return _quantile("truncnorm.ppf", q, a, b, loc, scale, upper=False)


def isf(q: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function: ``x`` with ``sf(x) = q``.

    Example:
        >>> from funcgrad.scipy.stats import truncnorm
        >>> round(float(truncnorm.isf(0.25, 0.0, 2.0)), 10)
        1.071098377
    """
    return _quantile("truncnorm.isf", q, a, b, loc, scale, upper=True)
