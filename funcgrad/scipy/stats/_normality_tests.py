"""Normality and equal-variance tests of ``scipy.stats``: D'Agostino's ``skewtest``,
Anscombe-Glynn's ``kurtosistest``, D'Agostino-Pearson's ``normaltest``; Bartlett's
``bartlett``, Levene's (Brown-Forsythe's) ``levene`` and Fligner-Killeen's ``fligner``.

SciPy's formulas on funcgrad operations: ``skewtest``, ``kurtosistest``, ``normaltest``,
``bartlett`` and ``levene`` (``center`` ``"mean"``/``"median"``) are differentiable and work
under ``jit`` and ``vmap``, as does ``fligner``, which ranks the data (no gradient through the
ranks).

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.stats import bartlett
    >>> res = bartlett(np.array([8.9, 9.1, 9.0, 9.3, 8.7]), np.array([8.0, 10.1, 9.2, 7.5, 11.0]))
    >>> round(float(res.statistic), 10), round(float(res.pvalue), 10)
    (8.5164547625, 0.0035194946)
"""

from __future__ import annotations

import functools
import math
import statistics
import warnings
from typing import Any, NamedTuple

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device
from funcgrad.core import Tracer
from funcgrad.ops.elementwise import stop_gradient
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy.stats import chi2 as _chi2
from funcgrad.scipy.stats import f as _f
from funcgrad.scipy.stats import norm as _norm
from funcgrad.scipy.stats._descriptive import (
    _ALTERNATIVES,
    _check_nan_policy,
    _float_array,
    _norm_axis,
    kurtosis,
    rankdata,
    skew,
)
from funcgrad.scipy.stats._summary import trim_mean
from funcgrad.scipy.stats._tests import SignificanceResult

__all__ = ["AndersonResult", "anderson", "ShapiroResult", "shapiro", "SkewtestResult", "KurtosistestResult", "NormaltestResult", "skewtest",
           "kurtosistest", "normaltest", "BartlettResult", "LeveneResult", "FlignerResult",
           "bartlett", "levene", "fligner"]


class SkewtestResult(NamedTuple):
    """``(statistic, pvalue)`` of :func:`skewtest`."""

    statistic: Any
    pvalue: Any


class KurtosistestResult(NamedTuple):
    """``(statistic, pvalue)`` of :func:`kurtosistest`."""

    statistic: Any
    pvalue: Any


class NormaltestResult(NamedTuple):
    """``(statistic, pvalue)`` of :func:`normaltest`."""

    statistic: Any
    pvalue: Any


class BartlettResult(NamedTuple):
    """``(statistic, pvalue)`` of :func:`bartlett`."""

    statistic: Any
    pvalue: Any


class LeveneResult(NamedTuple):
    """``(statistic, pvalue)`` of :func:`levene`."""

    statistic: Any
    pvalue: Any


class FlignerResult(NamedTuple):
    """``(statistic, pvalue)`` of :func:`fligner`."""

    statistic: Any
    pvalue: Any


def _alternative(name: str, alternative: str) -> None:
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"{name}: alternative must be one of {_ALTERNATIVES}, got "
                         f"{alternative!r}")


def _normal_pvalue(z: Any, alternative: str) -> Any:
    if alternative == "less":
        return _norm.cdf(z)
    if alternative == "greater":
        return _norm.sf(z)
    return 2.0 * _norm.sf(fnp.abs(z))


def _sample(name: str, a: Any, axis: Any, nan_policy: str) -> tuple[Any, Any, Any]:
    """``(a, axis, n)``: floats, the axis (0 of the flattened data for ``None``) and the
    count along it (per slice, nans left out, with ``nan_policy="omit"``)."""
    a = _float_array(a)
    _check_nan_policy(name, a, nan_policy)
    if axis is None:
        a, axis = fnp.reshape(a, (-1,)), 0
    axis = _norm_axis(name, axis, a.ndim)
    if nan_policy == "omit":
        n = fnp.sum(~fnp.isnan(a), axis=axis).astype(a.dtype)
    else:
        n = a.shape[axis]
    return a, axis, n


def _least_count(n: Any) -> float | None:
    """The smallest sample size, if it is known (not traced)."""
    if isinstance(n, int):
        return n
    if isinstance(n, Tracer):
        return None
    return float(fnp.min(n)) if get_aval(n).size else None


def _skew_z(a: Any, axis: int, n: Any, nan_policy: str) -> Any:
    b2 = skew(a, axis, nan_policy=nan_policy)
    y = b2 * fnp.sqrt(((n + 1) * (n + 3)) / (6.0 * (n - 2)))
    beta2 = (3.0 * (n ** 2 + 27 * n - 70) * (n + 1) * (n + 3)
             / ((n - 2.0) * (n + 5) * (n + 7) * (n + 9)))
    w2 = -1 + fnp.sqrt(2 * (beta2 - 1))
    delta = 1 / fnp.sqrt(0.5 * fnp.log(w2))
    alpha = fnp.sqrt(2.0 / (w2 - 1))
    y = fnp.where(y == 0, 1, y)
    return delta * fnp.log(y / alpha + fnp.sqrt((y / alpha) ** 2 + 1))


def skewtest(a: Any, axis: Any = 0, nan_policy: str = "propagate",
             alternative: str = "two-sided") -> SkewtestResult:
    """D'Agostino's test that the skewness along ``axis`` is that of a normal distribution,
    as ``scipy.stats.skewtest``: the sample skewness transformed to a standard normal ``z``.
    Needs at least 8 observations. Differentiable; ``jit``/``vmap`` work.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import skewtest
        >>> res = skewtest(np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 20.0]))
        >>> round(float(res.statistic), 10), round(float(res.pvalue), 10)
        (2.8022799888, 0.0050742814)
    """
    _alternative("skewtest", alternative)
    a, axis, n = _sample("skewtest", a, axis, nan_policy)
    least = _least_count(n)
    if least is not None and least < 8:
        raise ValueError(f"skewtest is not valid with less than 8 samples; {int(least)} "
                         "samples were given.")
    z = _skew_z(a, axis, n, nan_policy)
    return SkewtestResult(z, _normal_pvalue(z, alternative).astype(z.dtype))


def _kurtosis_z(a: Any, axis: int, n: Any, nan_policy: str) -> Any:
    b2 = kurtosis(a, axis, fisher=False, nan_policy=nan_policy)
    e = 3.0 * (n - 1) / (n + 1)
    varb2 = 24.0 * n * (n - 2) * (n - 3) / ((n + 1) * (n + 1.0) * (n + 3) * (n + 5))
    x = (b2 - e) / fnp.sqrt(varb2)
    sqrtbeta1 = (6.0 * (n * n - 5 * n + 2) / ((n + 7) * (n + 9))
                 * fnp.sqrt((6.0 * (n + 3) * (n + 5)) / (n * (n - 2) * (n - 3))))
    big_a = 6.0 + 8.0 / sqrtbeta1 * (2.0 / sqrtbeta1 + fnp.sqrt(1 + 4.0 / (sqrtbeta1 ** 2)))
    term1 = 1 - 2 / (9.0 * big_a)
    denom = 1 + x * fnp.sqrt(2 / (big_a - 4.0))
    safe = fnp.where(denom == 0.0, 1.0, denom)
    term2 = fnp.where(denom == 0.0, numpy.nan,
                      fnp.sign(denom) * fnp.cbrt((1 - 2.0 / big_a) / fnp.abs(safe)))
    return (term1 - term2) / fnp.sqrt(2 / (9.0 * big_a))


def kurtosistest(a: Any, axis: Any = 0, nan_policy: str = "propagate",
                 alternative: str = "two-sided") -> KurtosistestResult:
    """Anscombe and Glynn's test that the kurtosis along ``axis`` is that of a normal
    distribution, as ``scipy.stats.kurtosistest``. Needs at least 5 observations (warns
    below 20, as SciPy). Differentiable; ``jit``/``vmap`` work.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import kurtosistest
        >>> res = kurtosistest(np.linspace(-1.0, 1.0, 30) ** 3)
        >>> round(float(res.statistic), 10), round(float(res.pvalue), 10)
        (1.315196774, 0.1884437791)
    """
    _alternative("kurtosistest", alternative)
    a, axis, n = _sample("kurtosistest", a, axis, nan_policy)
    least = _least_count(n)
    if least is not None and least < 5:
        raise ValueError(f"kurtosistest requires at least 5 observations; {int(least)} "
                         "observations were given.")
    if least is not None and least < 20:
        warnings.warn(f"kurtosistest only valid for n>=20 ... continuing anyway, "
                      f"n={int(least)}", UserWarning, stacklevel=2)
    z = _kurtosis_z(a, axis, n, nan_policy)
    return KurtosistestResult(z, _normal_pvalue(z, alternative).astype(z.dtype))


def normaltest(a: Any, axis: Any = 0, nan_policy: str = "propagate") -> NormaltestResult:
    """D'Agostino and Pearson's omnibus test of normality along ``axis``, as
    ``scipy.stats.normaltest``: ``skewtest``'s ``z**2`` plus ``kurtosistest``'s against
    ``chi2(2)``. Needs at least 8 observations. Differentiable; ``jit``/``vmap`` work.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import normaltest
        >>> res = normaltest(np.linspace(-1.0, 1.0, 30) ** 3)
        >>> round(float(res.statistic), 10), round(float(res.pvalue), 10)
        (1.7297425543, 0.4211057551)
    """
    a, axis, n = _sample("normaltest", a, axis, nan_policy)
    least = _least_count(n)
    if least is not None and least < 8:
        raise ValueError(f"skewtest is not valid with less than 8 samples; {int(least)} "
                         "samples were given.")
    if least is not None and least < 20:
        warnings.warn(f"kurtosistest only valid for n>=20 ... continuing anyway, "
                      f"n={int(least)}", UserWarning, stacklevel=2)
    s, k = _skew_z(a, axis, n, nan_policy), _kurtosis_z(a, axis, n, nan_policy)
    stat = s * s + k * k
    return NormaltestResult(stat, _chi2.sf(stat, 2).astype(stat.dtype))


def _groups(name: str, samples: tuple, axis: Any) -> list[Any]:
    """The samples as floats with the test's axis last (flattened for ``axis=None``)."""
    if len(samples) < 2:
        raise ValueError(f"{name}: must enter at least two input sample vectors, got "
                         f"{len(samples)}")
    out = []
    for s in samples:
        s = _float_array(s)
        if axis is None:
            s = fnp.reshape(s, (-1,))
        else:
            s = fnp.moveaxis(s, _norm_axis(name, axis, max(s.ndim, 1)), -1)
        out.append(s)
    return out


def bartlett(*samples: Any, axis: Any = 0) -> BartlettResult:
    """Bartlett's test that the samples come from populations of equal variance, as
    ``scipy.stats.bartlett``: against ``chi2(k - 1)``. Differentiable; ``jit``/``vmap``
    work.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import bartlett
        >>> res = bartlett(np.array([1.0, 2.0, 3.0, 4.0]), np.array([2.0, 4.0, 6.0, 9.0]))
        >>> round(float(res.statistic), 10), round(float(res.pvalue), 10)
        (1.6290480954, 0.2018347609)
    """
    groups = _groups("bartlett", samples, axis)
    k = len(groups)
    sizes = [g.shape[-1] for g in groups]
    total = sum(sizes)
    variances = [fnp.var(g, axis=-1, ddof=1) for g in groups]
    pooled = sum((ni - 1) * v for ni, v in zip(sizes, variances)) / (total - k)
    numer = (total - k) * _q.log(pooled) - sum((ni - 1) * _q.log(v)
                                               for ni, v in zip(sizes, variances))
    denom = 1 + 1 / (3 * (k - 1)) * (sum(1 / (ni - 1) for ni in sizes) - 1 / (total - k))
    stat = numer / denom
    return BartlettResult(stat, _chi2.sf(stat, k - 1).astype(stat.dtype))


_CENTERS = ("mean", "median", "trimmed")


def _centered_abs(name: str, groups: list[Any], center: str, proportiontocut: float
                  ) -> list[Any]:
    if center not in _CENTERS:
        raise ValueError(f"{name}: center must be 'mean', 'median' or 'trimmed', got "
                         f"{center!r}")
    if center == "trimmed":
        return [fnp.abs(g - trim_mean(g, proportiontocut, axis=-1)[..., None]) for g in groups]
    centre = fnp.median if center == "median" else fnp.mean
    return [fnp.abs(g - centre(g, axis=-1, keepdims=True)) for g in groups]


def levene(*samples: Any, center: str = "median", proportiontocut: float = 0.05,
           axis: Any = 0) -> LeveneResult:
    """Levene's test that the samples come from populations of equal variance, as
    ``scipy.stats.levene``: a one-way ANOVA of the absolute deviations from each sample's
    ``center`` (``"median"``: Brown-Forsythe, the default; ``"mean"``: Levene's original;
    ``"trimmed"``: ``trim_mean(sample, proportiontocut)``) against
    ``f(k - 1, N - k)``. Differentiable; ``jit``/``vmap`` work.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import levene
        >>> res = levene(np.array([1.0, 2.0, 3.0, 4.0]), np.array([2.0, 4.0, 6.0, 9.0]))
        >>> round(float(res.statistic), 10), round(float(res.pvalue), 10)
        (2.4193548387, 0.1708443981)
    """
    groups = _groups("levene", samples, axis)
    k = len(groups)
    devs = _centered_abs("levene", groups, center, proportiontocut)
    sizes = [g.shape[-1] for g in groups]
    total = sum(sizes)
    means = [fnp.mean(z, axis=-1) for z in devs]
    grand = sum(ni * m for ni, m in zip(sizes, means)) / total
    numer = (total - k) * sum(ni * (m - grand) ** 2 for ni, m in zip(sizes, means))
    within = sum(fnp.sum((z - m[..., None]) ** 2, axis=-1) for z, m in zip(devs, means))
    stat = _q.div(numer, (k - 1) * within)
    return LeveneResult(stat, _f.sf(stat, k - 1, total - k).astype(stat.dtype))


def fligner(*samples: Any, center: str = "median", proportiontocut: float = 0.05,
            axis: Any = 0) -> FlignerResult:
    """Fligner-Killeen's test that the samples come from populations of equal variance, as
    ``scipy.stats.fligner``: normal scores of the ranks of the absolute deviations from each
    sample's ``center`` (as in :func:`levene`), against ``chi2(k - 1)``. ``jit``/``vmap``
    work; no gradient through the ranks.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import fligner
        >>> res = fligner(np.array([1.0, 2.0, 3.0, 4.0]), np.array([2.0, 4.0, 6.0, 9.0]))
        >>> round(float(res.statistic), 10), round(float(res.pvalue), 10)
        (1.5029713906, 0.2202147304)
    """
    groups = _groups("fligner", samples, axis)
    k = len(groups)
    devs = _centered_abs("fligner", groups, center, proportiontocut)
    sizes = [g.shape[-1] for g in devs]
    total = sum(sizes)
    batch = tuple(numpy.broadcast_shapes(*[d.shape[:-1] for d in devs]))
    all_devs = fnp.concatenate([fnp.broadcast_to(d, batch + d.shape[-1:]) for d in devs],
                               axis=-1)
    ranks = rankdata(stop_gradient(all_devs), axis=-1)
    scores = _norm.ppf(ranks / (2 * (total + 1.0)) + 0.5)
    bounds = numpy.cumsum([0] + sizes)
    means = [fnp.mean(scores[..., lo:hi], axis=-1) for lo, hi in zip(bounds[:-1], bounds[1:])]
    overall = fnp.mean(scores, axis=-1)
    spread = fnp.var(scores, axis=-1, ddof=1)
    stat = sum(ni * (m - overall) ** 2 for ni, m in zip(sizes, means)) / spread
    return FlignerResult(stat, _chi2.sf(stat, k - 1).astype(stat.dtype))


class FitParams(NamedTuple):
    """The fitted ``loc`` and ``scale`` of :func:`anderson`'s distribution."""

    loc: Any
    scale: Any


class _FitResult(NamedTuple):
    params: FitParams
    success: bool
    message: str


class AndersonResult(NamedTuple):
    """``(statistic, critical_values, significance_level)`` of :func:`anderson` (and the
    ``fit_result``, as SciPy's)."""

    statistic: Any
    critical_values: Any
    significance_level: Any
    fit_result: Any = None


# SciPy's tables: critical values of the asymptotic A^2 at these significance levels (%)
_ANDERSON = {
    "norm": (numpy.array([0.561, 0.631, 0.752, 0.873, 1.035]),
             numpy.array([15, 10, 5, 2.5, 1.0]), lambda n: 1.0 + 0.75 / n + 2.25 / n / n),
    "expon": (numpy.array([0.916, 1.062, 1.321, 1.591, 1.959]),
              numpy.array([15, 10, 5, 2.5, 1.0]), lambda n: 1.0 + 0.6 / n),
}


def anderson(x: Any, dist: str = "norm", *, method: Any = None) -> Any:
    """The Anderson-Darling test that ``x`` comes from a normal (``dist="norm"``, mean and
    standard deviation estimated) or exponential (``"expon"``, scale estimated)
    distribution, as ``scipy.stats.anderson``: ``AndersonResult(statistic,
    critical_values, significance_level, fit_result)`` with SciPy's small-sample corrected
    critical values; ``method="interpolate"`` gives ``(statistic, pvalue)`` interpolated in
    that table, as SciPy. Differentiable in ``x``; ``jit``-able. The fitted ``logistic``,
    ``gumbel`` and ``weibull_min`` variants are not provided.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import anderson
        >>> res = anderson(np.array([-1.2, -0.4, 0.1, 0.3, 0.9, 1.4, 2.8]))
        >>> round(float(res.statistic), 6), res.critical_values
        (0.165758, array([0.487, 0.547, 0.652, 0.757, 0.898]))
    """
    dist = dist.lower()
    if dist not in _ANDERSON:
        raise ValueError(f"anderson: dist must be 'norm' or 'expon' (funcgrad provides no "
                         f"fitted {dist!r} variant)")
    y = fnp.sort(_float_array(x).reshape(-1))
    n = y.shape[0]
    xbar = fnp.mean(y)
    if dist == "norm":
        sd = fnp.std(y, ddof=1)
        w = (y - xbar) / sd
        logcdf, logsf = _norm.logcdf(w), _norm.logsf(w)
        params = FitParams(xbar, sd)
    else:
        w = y / xbar
        logcdf, logsf = _q.log(-fnp.expm1(-w)), -w
        params = FitParams(0.0, xbar)
    table, sig, correction = _ANDERSON[dist]
    critical = numpy.around(table / correction(n), 3)
    dev = get_aval(y).device or get_default_device()
    i = numpy.arange(1, n + 1)
    weights = device_put(((2 * i - 1.0) / n).astype(get_aval(y).dtype), dev)
    a2 = -n - fnp.sum(weights * (logcdf + fnp.flip(logsf)))
    if method is None:
        fit = _FitResult(params, True, "`anderson` successfully fit the distribution to the "
                         "data.")
        return AndersonResult(a2, critical, sig, fit)
    if method != "interpolate":
        raise ValueError("`method` must be 'interpolate' (funcgrad provides no Monte Carlo "
                         "method)")
    # SciPy's numpy.interp over the increasing critical values (p clamps at the ends)
    pvalue = fnp.interp(a2, device_put(critical, dev), device_put(sig / 100, dev))
    return SignificanceResult(a2, pvalue)


class ShapiroResult(NamedTuple):
    """``(statistic, pvalue)`` of :func:`shapiro`."""

    statistic: Any
    pvalue: Any


# Royston's polynomials (Algorithm AS R94, Appl. Statist. 44 (1995) 547-551), lowest power
# first: the first two coefficients (in 1/sqrt(n)), and the normalising transformation of
# log(1 - W) for 4 <= n <= 11 (in n) and n >= 12 (in log n).
_SW_C1 = (0.0, 0.221157, -0.147981, -2.07119, 4.434685, -2.706056)
_SW_C2 = (0.0, 0.042981, -0.293762, -1.752461, 5.682633, -3.582633)
_SW_C3 = (0.544, -0.39978, 0.025054, -6.714e-4)
_SW_C4 = (1.3822, -0.77857, 0.062767, -0.0020322)
_SW_C5 = (-1.5861, -0.31082, -0.083751, 0.0038915)
_SW_C6 = (-0.4803, -0.082676, 0.0030302)
_SW_GAMMA = (-2.273, 0.459)
_STD_NORMAL = statistics.NormalDist()


def _sw_poly(c: tuple[float, ...], x: float) -> float:
    return sum(ck * x ** k for k, ck in enumerate(c))


@functools.lru_cache(maxsize=64)
def _sw_coefficients(n: int) -> numpy.ndarray:
    """The n Shapiro-Wilk coefficients (antisymmetric, unit norm) as AS R94 approximates
    them: Blom's normal scores with the outer one or two corrected by Royston's polynomials.
    They depend on ``n`` alone: computed once on the host."""
    half = n // 2
    if n == 3:
        low = numpy.array([math.sqrt(0.5)])
    else:
        i = numpy.arange(1, half + 1, dtype=numpy.float64)
        # (Python's quantile, Wichura's AS 241 to double precision: plain host numbers, also
        # while a transformation traces the test)
        m = numpy.array([_STD_NORMAL.inv_cdf(p) for p in (i - 0.375) / (n + 0.25)])  # < 0
        summ2 = 2.0 * float(numpy.sum(m * m))
        ssumm2 = math.sqrt(summ2)
        rsn = 1.0 / math.sqrt(n)
        a1 = _sw_poly(_SW_C1, rsn) - m[0] / ssumm2
        low = -m
        if n > 5:
            a2 = -m[1] / ssumm2 + _sw_poly(_SW_C2, rsn)
            fac = math.sqrt((summ2 - 2.0 * m[0] ** 2 - 2.0 * m[1] ** 2)
                            / (1.0 - 2.0 * a1 ** 2 - 2.0 * a2 ** 2))
            low = low / fac
            low[1] = a2
        else:
            fac = math.sqrt((summ2 - 2.0 * m[0] ** 2) / (1.0 - 2.0 * a1 ** 2))
            low = low / fac
        low[0] = a1
    full = numpy.zeros(n)
    full[n - half:] = low[::-1]
    full[:half] = -low
    return full - full.mean()


def _sw_pvalue(w1: Any, n: int) -> Any:
    """The upper-tail p-value of ``W = 1 - w1`` (AS R94): exact for n = 3, Royston's normal
    approximation of ``log(1 - W)`` (transformed once more for n <= 11) otherwise."""
    if n == 3:
        return fnp.maximum(6.0 / math.pi * (fnp.arcsin(fnp.sqrt(1.0 - w1)) - math.pi / 3.0),
                           0.0)
    y = _q.log(w1)
    if n <= 11:
        gamma = _sw_poly(_SW_GAMMA, n)
        # At or beyond gamma W is as small as n points allow: AS R94's "obviously
        # non-normal" p-value.
        obvious = y >= gamma
        y = -_q.log(fnp.where(obvious, 1.0, gamma - y))
        m, s = _sw_poly(_SW_C3, n), math.exp(_sw_poly(_SW_C4, n))
        return fnp.where(obvious, 1e-99, _norm.sf((y - m) / s))
    ln = math.log(n)
    m, s = _sw_poly(_SW_C5, ln), math.exp(_sw_poly(_SW_C6, ln))
    return _norm.sf((y - m) / s)


def _shapiro_last(x: Any) -> tuple[Any, Any]:
    """W and its p-value along the last axis of float64 ``x`` (no nan)."""
    n = get_aval(x).shape[-1]
    # Centred on an observation first (SciPy's guard against cancellation, gh-15777), then
    # scaled by the range as AS R94 does.
    xs = fnp.sort(x, axis=-1) - x[..., n // 2:n // 2 + 1]
    rng = xs[..., -1:] - xs[..., :1]
    flat = rng == 0
    xs = xs / fnp.where(flat, 1.0, rng)
    xc = xs - fnp.mean(xs, axis=-1, keepdims=True)
    a = device_put(_sw_coefficients(n), get_aval(x).device or get_default_device())
    ssa = float(numpy.sum(_sw_coefficients(n) ** 2))
    ssx = fnp.sum(xc * xc, axis=-1)
    sax = fnp.sum(a * xc, axis=-1)
    # 1 - W = 1 - sax^2 / (ssa ssx), formed as AS R94 does so that W near 1 keeps its digits
    # in log(1 - W).
    ssassx = fnp.sqrt(ssa * ssx)
    w1 = (ssassx - sax) * (ssassx + sax) / (ssa * fnp.where(ssx == 0, 1.0, ssx))
    flat = flat[..., 0]
    w1 = fnp.where(flat, 0.0, w1)
    w = 1.0 - w1
    p = _sw_pvalue(fnp.where(flat, 0.5, w1), n)
    # Data of range zero: W = 1 and p = 1, as SciPy returns them (with its warning).
    return w, fnp.where(flat, 1.0, p)


def shapiro(x: Any, *, axis: Any = None, nan_policy: str = "propagate",
            keepdims: bool = False) -> ShapiroResult:
    """The Shapiro-Wilk test that the data along ``axis`` (all of it for ``None``) come
    from a normal distribution, as ``scipy.stats.shapiro``: the statistic ``W`` with the
    coefficients and p-value of Royston's Algorithm AS R94 (exact p-value for 3
    observations). Computed in float64; fewer than 3 observations give nan (SciPy's
    ``SmallSampleWarning``, a ``RuntimeWarning`` here), data of range zero ``W = 1``,
    ``p = 1`` with a warning. Differentiable in the data (through the sort); ``jit`` and
    ``vmap`` work (``nan_policy="omit"`` needs concrete data: the counts set the
    coefficients).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import shapiro
        >>> res = shapiro(np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 20.0]))
        >>> round(float(res.statistic), 10), round(float(res.pvalue), 10)
        (0.7794086668, 0.0118569276)
    """
    _check_nan_policy("shapiro", x, nan_policy)
    x = fnp.asarray(_float_array(x), dtype=numpy.float64)
    if axis is None:
        axis, nd = 0, 0
        x = fnp.reshape(x, (-1,))
    else:
        nd = x.ndim
        axis = _norm_axis("shapiro", axis, nd)
        x = fnp.moveaxis(x, axis, -1)
    n = x.shape[-1]
    if nan_policy == "omit" and not isinstance(x, Tracer):
        w, p = _shapiro_omit(x)
    elif nan_policy == "omit":
        raise ValueError("shapiro: nan_policy='omit' needs concrete data (the number of "
                         "observations left sets the coefficients); use it outside "
                         "jit/vmap/grad")
    elif n < 3:
        warnings.warn("shapiro: fewer than 3 observations: the results are nan",
                      RuntimeWarning, stacklevel=2)
        w = p = fnp.full(x.shape[:-1], numpy.nan, dtype=numpy.float64)
    else:
        if n > 5000:
            warnings.warn("shapiro: the p-value may not be accurate for more than 5000 "
                          "observations", UserWarning, stacklevel=2)
        bad = fnp.any(fnp.isnan(x), axis=-1)
        w, p = _shapiro_last(fnp.where(bad[..., None], 0.0, x))
        w, p = fnp.where(bad, numpy.nan, w), fnp.where(bad, numpy.nan, p)
        _warn_flat(x)
    if keepdims and nd:
        w, p = fnp.expand_dims(w, axis), fnp.expand_dims(p, axis)
    elif keepdims:
        w, p = fnp.reshape(w, (1,)), fnp.reshape(p, (1,))
    return ShapiroResult(w, p)


def _warn_flat(x: Any) -> None:
    if isinstance(x, Tracer) or not get_aval(x).size:
        return
    if bool(fnp.any(fnp.max(x, axis=-1) == fnp.min(x, axis=-1))):
        warnings.warn("shapiro: the data have range zero; the results may not be accurate",
                      UserWarning, stacklevel=3)


def _shapiro_omit(x: Any) -> tuple[Any, Any]:
    """Each slice with its nans left out (its own count, so its own coefficients)."""
    lead = x.shape[:-1]
    rows = fnp.reshape(x, (-1, x.shape[-1]))
    ws, ps = [], []
    for k in range(rows.shape[0]):
        row = rows[k]
        row = row[~fnp.isnan(row)]
        if row.shape[0] < 3:
            warnings.warn("shapiro: fewer than 3 observations: the results are nan",
                          RuntimeWarning, stacklevel=3)
            ws.append(fnp.asarray(numpy.nan))
            ps.append(fnp.asarray(numpy.nan))
            continue
        _warn_flat(row)
        w, p = _shapiro_last(row)
        ws.append(w)
        ps.append(p)
    return (fnp.reshape(fnp.stack(ws), lead), fnp.reshape(fnp.stack(ps), lead))
