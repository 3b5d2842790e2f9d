"""The von Mises distribution on the circle, as ``scipy.stats.vonmises`` (concentration
``kappa``, ``loc``, ``scale``): density ``exp(kappa cos(x)) / (2 pi i0(kappa))``, periodic in
``x`` (as SciPy's ``pdf``, not restricted to ``[-pi, pi]``).

Example:
    >>> from funcgrad.scipy.stats import vonmises
    >>> round(float(vonmises.pdf(0.0, 1.0)), 12)
    0.341710488623
"""

from __future__ import annotations

import math
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.ops.elementwise import stop_gradient
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy import special as _sp
from funcgrad.scipy.stats._util import prob_ok, promote, scale_ok, standardize

__all__ = ["logpdf", "pdf", "cdf", "sf", "entropy", "ppf", "isf"]


def logpdf(x: Any, kappa: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``kappa (cos(z) - 1) - log(2 pi i0e(kappa)) - log(scale)`` (``i0e``: no overflow for
    large ``kappa``); nan unless ``kappa >= 0`` and ``scale > 0`` (``kappa = 0`` is uniform, as
    SciPy; ``jax.scipy.stats.vonmises`` gives nan there).

    Example:
        >>> from funcgrad.scipy.stats import vonmises
        >>> round(float(vonmises.logpdf(0.5, 2.0)), 12)
        -0.906705484112
    """
    x, kappa, loc, scale = promote("vonmises.logpdf", x, kappa, loc, scale)
    z = standardize(x, loc, scale)
    k = fnp.where(kappa >= 0, kappa, 1.0)
    out = k * (fnp.cos(z) - 1.0) - math.log(2.0 * math.pi) - _q.log(_sp.i0e(k)) - _q.log(scale)
    return fnp.where((kappa >= 0) & (scale > 0), out, numpy.nan)


def pdf(x: Any, kappa: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density.

    Example:
        >>> from funcgrad.scipy.stats import vonmises
        >>> round(float(vonmises.pdf(3.0, 1.0)), 12)
        0.046710611109
    """
    return fnp.exp(logpdf(x, kappa, loc, scale))


# SciPy's von_mises_cdf (scipy/stats/_stats.pyx, after Hill, ACM TOMS 518): below kappa = 50 a
# Bessel-ratio series of p(kappa) terms (12 digits), above it a normal approximation.
_CK = 50.0
_P_MAX = int(1 + 28.0 + 0.5 * _CK - 100.0 / (_CK + 5.0))


def _cdf_standard(z: Any, kappa: Any) -> Any:
    """The CDF of the standard von Mises at ``z`` (any real: each whole turn adds 1)."""
    turns = fnp.round(z / (2.0 * math.pi))
    x = z - turns * (2.0 * math.pi)
    small = kappa < _CK
    ks = fnp.where(small, kappa, 1.0)
    # the series from term p(kappa) down (SciPy's per-element length), as masked steps;
    # R = kappa / (2 n + kappa R) is SciPy's 1 / (2 n / kappa + R) without dividing by 0
    p = fnp.floor(29.0 + 0.5 * ks - 100.0 / (ks + 5.0))
    r = fnp.zeros_like(x)
    v = fnp.zeros_like(x)
    for n in range(_P_MAX - 1, 0, -1):
        on = n < p
        r_n = ks / (2.0 * n + ks * r)
        v_n = r_n * (fnp.sin(n * x) / n + v)
        r = fnp.where(on, r_n, r)
        v = fnp.where(on, v_n, v)
    series = fnp.clip(0.5 + x / (2.0 * math.pi) + v / math.pi, 0.0, 1.0)
    kb = fnp.where(small, _CK, kappa)
    normal = _sp.ndtr(math.sqrt(2.0 / math.pi) / _sp.i0e(kb) * fnp.sin(0.5 * x))
    return fnp.where(small, series, normal) + turns


def cdf(x: Any, kappa: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Cumulative distribution function, SciPy's: not periodic -- each whole turn
    (``2 pi scale``) beyond ``[-pi, pi]`` adds 1 (below subtracts 1). Hill's series below
    ``kappa = 50``, a normal approximation above (SciPy's algorithm, 12 digits); nan unless
    ``kappa >= 0`` and ``scale > 0``.

    Example:
        >>> from funcgrad.scipy.stats import vonmises
        >>> round(float(vonmises.cdf(1.0, 2.0)), 12)
        0.889577736955
    """
    x, kappa, loc, scale = promote("vonmises.cdf", x, kappa, loc, scale)
    z = standardize(x, loc, scale)
    out = _cdf_standard(z, fnp.where(kappa >= 0, kappa, 1.0))
    return scale_ok(fnp.where(kappa >= 0, out, numpy.nan), scale)


def sf(x: Any, kappa: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Survival function ``1 - cdf`` (SciPy's; negative beyond ``pi``, as its CDF exceeds 1).

    Example:
        >>> from funcgrad.scipy.stats import vonmises
        >>> round(float(vonmises.sf(1.0, 2.0)), 12)
        0.110422263045
    """
    return 1.0 - cdf(x, kappa, loc, scale)


def entropy(kappa: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Differential entropy ``log(2 pi i0(kappa)) - kappa i1(kappa) / i0(kappa) + log(scale)``
    (with ``i0e``/``i1e``: finite for large ``kappa``).

    Example:
        >>> from funcgrad.scipy.stats import vonmises
        >>> round(float(vonmises.entropy(1.0)), 12)
        1.62740145902
    """
    kappa, loc, scale = promote("vonmises.entropy", kappa, loc, scale)
    k = fnp.where(kappa >= 0, kappa, 1.0)
    i0e = _sp.i0e(k)
    out = -k * _sp.i1e(k) / i0e + _q.log(2.0 * math.pi * i0e) + k + _q.log(scale)
    return scale_ok(fnp.where(kappa >= 0, out, numpy.nan), scale)


def _quantile(q: Any, kappa: Any, upper: bool) -> Any:
    """The standard quantile, inside ``[-pi, pi]`` (``q`` at 0 and 1 give SciPy's -inf and
    inf): bisection (stop-gradient) on the smaller tail, then one Newton step, which carries
    the derivative."""
    qs, ks = stop_gradient(q), stop_gradient(kappa)
    flip = qs > 0.5
    tail = fnp.where(flip, 1.0 - qs, qs)
    from_top = flip != upper  # the tail measured down from pi
    lo = fnp.full_like(qs, -math.pi)
    hi = fnp.full_like(qs, math.pi)
    for _ in range(24):  # to ~4e-7 of the circle; Newton finishes (quadratically)
        mid = 0.5 * (lo + hi)
        c = _cdf_standard(mid, ks)
        below = fnp.where(from_top, 1.0 - c > tail, c < tail)
        lo, hi = fnp.where(below, mid, lo), fnp.where(below, hi, mid)
    target = 1.0 - q if upper else q

    def newton(x0: Any, k: Any, t: Any) -> Any:
        dens = fnp.exp(k * (fnp.cos(x0) - 1.0)) / (2.0 * math.pi * _sp.i0e(k))
        return x0 - (_cdf_standard(x0, k) - t) / fnp.where(dens > 0, dens, 1.0)

    x0 = 0.5 * (lo + hi)
    for _ in range(2):
        x0 = fnp.clip(newton(x0, ks, stop_gradient(target)), lo, hi)
    x = newton(stop_gradient(x0), kappa, target)  # the last step carries the derivative
    ends = (numpy.inf, -numpy.inf) if upper else (-numpy.inf, numpy.inf)  # SciPy's
    return prob_ok(fnp.where(q == 0, ends[0], fnp.where(q == 1, ends[1], x)), q)


def ppf(q: Any, kappa: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Quantile function (inside ``[-pi, pi]``; -inf and inf at 0 and 1, as SciPy), by
    bisection and a Newton step (differentiable).

    Example:
        >>> from funcgrad.scipy.stats import vonmises
        >>> round(float(vonmises.ppf(0.9, 2.0)), 9)
        1.052981641
    """
    q, kappa, loc, scale = promote("vonmises.ppf", q, kappa, loc, scale)
    k = fnp.where(kappa >= 0, kappa, 1.0)
    out = loc + scale * _quantile(q, k, upper=False)
    return scale_ok(fnp.where(kappa >= 0, out, numpy.nan), scale)


def isf(q: Any, kappa: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function ``ppf(1 - q)``, from the upper tail.

    Example:
        >>> from funcgrad.scipy.stats import vonmises
        >>> round(float(vonmises.isf(0.1, 2.0)), 9)
        1.052981641
    """
    q, kappa, loc, scale = promote("vonmises.isf", q, kappa, loc, scale)
    k = fnp.where(kappa >= 0, kappa, 1.0)
    out = loc + scale * _quantile(q, k, upper=True)
    return scale_ok(fnp.where(kappa >= 0, out, numpy.nan), scale)
