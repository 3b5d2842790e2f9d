"""Summary statistics of ``scipy.stats`` (not in JAX): ``gmean``, ``hmean``, ``pmean``,
``moment``, ``variation``, ``iqr``, ``median_abs_deviation`` and ``describe``.

Each reduces along ``axis`` (``None``: all elements) with ``keepdims``; ``nan_policy``
``"propagate"``, ``"omit"`` (nans left out) or ``"raise"``. Differentiable where the
statistic is (the quantile-based ones almost everywhere), under ``jit`` and ``vmap``.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.stats import gmean, hmean
    >>> float(gmean(np.array([1.0, 4.0]))), float(hmean(np.array([1.0, 4.0])))
    (2.0, 1.6)
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy

import funcgrad.numpy as fnp
from funcgrad.core import Tracer
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy.stats._descriptive import (
    _check_nan_policy,
    _float_array,
    _norm_axis,
    kurtosis,
    skew,
)

__all__ = ["gmean", "hmean", "pmean", "moment", "variation", "iqr", "median_abs_deviation",
           "DescribeResult", "describe"]


def _prep(name: str, a: Any, axis: Any, nan_policy: str, dtype: Any = None) -> tuple:
    a = _float_array(a) if dtype is None else fnp.asarray(a).astype(dtype)
    _check_nan_policy(name, a, nan_policy)
    if axis is None:
        return fnp.reshape(a, (-1,)), 0, a.ndim
    if a.ndim == 0:
        a = fnp.reshape(a, (1,))
    return a, _norm_axis(name, axis, a.ndim), a.ndim


def _keep(v: Any, axis: Any, ndim: int, keepdims: bool) -> Any:
    if not keepdims:
        return v
    if axis is None:
        return fnp.reshape(v, (1,) * ndim)
    return fnp.expand_dims(v, _norm_axis("keepdims", axis, max(ndim, 1)))


def _average(v: Any, ax: int, weights: Any, omit: bool) -> Any:
    """The (weighted) mean along ``ax``; ``omit`` leaves out the nans of ``v``."""
    w = fnp.ones_like(v) if weights is None else fnp.broadcast_to(
        fnp.asarray(weights).astype(v.dtype), v.shape)
    if omit:
        keep = fnp.logical_not(fnp.isnan(v))
        w = fnp.where(keep, w, 0.0)
        v = fnp.where(keep, v, 0.0)
    return fnp.sum(v * w, axis=ax) / fnp.sum(w, axis=ax)


def _no_negative(name: str, a: Any) -> None:
    if not isinstance(a, Tracer) and bool(fnp.any(a < 0)):
        raise ValueError(f"{name}: only defined if all elements are greater than or equal "
                         "to zero")


def gmean(a: Any, axis: Any = 0, dtype: Any = None, weights: Any = None, *,
          nan_policy: str = "propagate", keepdims: bool = False) -> Any:
    """Weighted geometric mean ``exp(average(log a, weights))`` (0 if an element is 0, nan
    for a negative one, quietly).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import gmean
        >>> round(float(gmean(np.array([1.0, 2.0, 4.0]), weights=np.array([3.0, 1.0, 0.0]))), 12)
        1.189207115003
    """
    x, ax, nd = _prep("gmean", a, axis, nan_policy, dtype)
    out = fnp.exp(_average(_q.log(x), ax, weights, nan_policy == "omit"))
    return _keep(out, axis, nd, keepdims)


def hmean(a: Any, axis: Any = 0, dtype: Any = None, *, weights: Any = None,
          nan_policy: str = "propagate", keepdims: bool = False) -> Any:
    """Weighted harmonic mean ``sum(w) / sum(w / a)`` (0 if an element is 0; a negative
    element is SciPy's ``ValueError`` when concrete).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import hmean
        >>> float(hmean(np.array([1.0, 4.0, 4.0])))
        2.0
    """
    x, ax, nd = _prep("hmean", a, axis, nan_policy, dtype)
    _no_negative("hmean", x)
    zero = fnp.any(x == 0, axis=ax)
    inv = _average(_q.reciprocal(fnp.where(x == 0, 1.0, x)), ax, weights, nan_policy == "omit")
    out = fnp.where(zero, 0.0, 1.0 / inv)
    return _keep(out, axis, nd, keepdims)


def pmean(a: Any, p: float, *, axis: Any = 0, dtype: Any = None, weights: Any = None,
          nan_policy: str = "propagate", keepdims: bool = False) -> Any:
    """Weighted power mean ``average(a**p, weights)**(1/p)`` (``p = 0``: :func:`gmean`).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import pmean
        >>> round(float(pmean(np.array([1.0, 2.0, 3.0]), 2.0)), 12)   # root mean square
        2.160246899469
    """
    if isinstance(p, Tracer) or not numpy.isscalar(p):
        raise ValueError("pmean: the power p must be a real number")
    p = float(p)
    if p == 0.0:
        return gmean(a, axis, dtype, weights, nan_policy=nan_policy, keepdims=keepdims)
    x, ax, nd = _prep("pmean", a, axis, nan_policy, dtype)
    _no_negative("pmean", x)
    out = _average(x ** p, ax, weights, nan_policy == "omit") ** (1.0 / p)
    return _keep(out, axis, nd, keepdims)


def moment(a: Any, order: int = 1, axis: Any = 0, nan_policy: str = "propagate", *,
           center: Any = None, keepdims: bool = False) -> Any:
    """The ``order``-th moment about ``center`` (the mean by default: the central moment,
    exactly 0 for ``order = 1``, 1 for ``order = 0``).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import moment
        >>> float(moment(np.array([1.0, 2.0, 3.0, 4.0, 5.0]), order=2))
        2.0
    """
    x, ax, nd = _prep("moment", a, axis, nan_policy)
    omit = nan_policy == "omit"
    c = _average(x, ax, None, omit) if center is None else fnp.asarray(center).astype(x.dtype)
    # (funcgrad's subtract: a center made on the default device meets NumPy input)
    dev = fnp.subtract(x, fnp.expand_dims(c, ax) if center is None else c)
    out = _average(dev ** int(order), ax, None, omit)
    if center is None and int(order) == 1:
        out = out * 0.0  # exactly 0, as SciPy (nan stays nan)
    return _keep(out, axis, nd, keepdims)


def variation(a: Any, axis: Any = 0, nan_policy: str = "propagate", ddof: int = 0, *,
              keepdims: bool = False) -> Any:
    """Coefficient of variation ``std(a, ddof) / mean(a)``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import variation
        >>> round(float(variation(np.array([2.0, 4.0, 6.0]))), 12)
        0.408248290464
    """
    x, ax, nd = _prep("variation", a, axis, nan_policy)
    if nan_policy == "omit":
        out = fnp.nanstd(x, axis=ax, ddof=ddof) / fnp.nanmean(x, axis=ax)
    else:
        out = fnp.std(x, axis=ax, ddof=ddof) / fnp.mean(x, axis=ax)
    return _keep(out, axis, nd, keepdims)


_NORMAL_IQR = 1.3489795003921634  # 2 sqrt(2) erfinv(1/2): the IQR of a standard normal
_NORMAL_MAD = 0.6744897501960817  # sqrt(2) erfinv(1/2): its median absolute deviation


def _scale(name: str, scale: Any, normal: float) -> Any:
    if isinstance(scale, str):
        if scale.lower() != "normal":
            raise ValueError(f"{name}: {scale!r} is not a valid scale (a number or 'normal')")
        return normal
    return scale


def iqr(x: Any, axis: Any = None, rng: tuple[float, float] = (25, 75), scale: Any = 1.0,
        nan_policy: str = "propagate", interpolation: str = "linear",
        keepdims: bool = False) -> Any:
    """Interquartile range (``rng`` percentiles, default 25-75) divided by ``scale``
    (``"normal"``: a normal sample's standard-deviation estimate).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import iqr
        >>> float(iqr(np.arange(1.0, 10.0)))
        4.0
    """
    lo, hi = (float(v) for v in rng)
    if not 0 <= lo <= hi <= 100:
        raise ValueError(f"iqr: rng must be two increasing percentiles in [0, 100], got {rng}")
    v, ax, nd = _prep("iqr", x, axis, nan_policy)
    pct = fnp.nanpercentile if nan_policy == "omit" else fnp.percentile
    q = pct(v, fnp.asarray([lo, hi]), axis=ax, method=interpolation)
    out = (q[1] - q[0]) / _scale("iqr", scale, _NORMAL_IQR)
    return _keep(out, axis, nd, keepdims)


def median_abs_deviation(x: Any, axis: Any = 0, center: Any = None, scale: Any = 1.0,
                         nan_policy: str = "propagate", *, keepdims: bool = False) -> Any:
    """Median absolute deviation ``median(|x - center(x)|) / scale`` (``center`` a function,
    the median by default; ``scale="normal"`` makes it a standard-deviation estimate).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import median_abs_deviation
        >>> float(median_abs_deviation(np.array([1.0, 2.0, 3.0, 4.0, 100.0])))
        1.0
    """
    v, ax, nd = _prep("median_abs_deviation", x, axis, nan_policy)
    med = fnp.nanmedian if nan_policy == "omit" else fnp.median
    c = med(v, axis=ax, keepdims=True) if center is None else \
        fnp.expand_dims(center(v, axis=ax), ax)
    out = med(fnp.abs(v - c), axis=ax) / _scale("median_abs_deviation", scale, _NORMAL_MAD)
    return _keep(out, axis, nd, keepdims)


class DescribeResult(NamedTuple):
    """What :func:`describe` returns."""

    nobs: int
    minmax: tuple[Any, Any]
    mean: Any
    variance: Any
    skewness: Any
    kurtosis: Any


def describe(a: Any, axis: Any = 0, ddof: int = 1, bias: bool = True,
             nan_policy: str = "propagate") -> DescribeResult:
    """Number of observations, (min, max), mean, variance (``ddof``), skewness and excess
    kurtosis (``bias``), as ``scipy.stats.describe``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import describe
        >>> d = describe(np.array([1.0, 2.0, 3.0, 4.0]))
        >>> d.nobs, float(d.mean), float(d.variance)
        (4, 2.5, 1.6666666666666667)
    """
    if nan_policy == "omit":
        raise ValueError("describe: nan_policy='omit' is not available (nobs would differ "
                         "between slices); use 'propagate' or 'raise'")
    x, ax, _ = _prep("describe", a, axis, nan_policy)
    n = x.shape[ax]
    return DescribeResult(n, (fnp.min(x, axis=ax), fnp.max(x, axis=ax)), fnp.mean(x, axis=ax),
                          fnp.var(x, axis=ax, ddof=ddof),
                          skew(x, axis=ax, bias=bias), kurtosis(x, axis=ax, bias=bias))


def trim_mean(a: Any, proportiontocut: float, axis: Any = 0) -> Any:
    """The mean after cutting ``proportiontocut`` of the sorted entries off each end
    (``int(proportiontocut * n)`` of them), as ``scipy.stats.trim_mean``. Differentiable in
    the kept entries.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import trim_mean
        >>> float(trim_mean(np.array([1.0, 2.0, 3.0, 4.0, 100.0]), 0.2))
        3.0
    """
    a = fnp.asarray(a)
    if not fnp.issubdtype(a.dtype, fnp.inexact):
        a = a.astype(fnp.float64)
    if axis is None:
        a, axis = fnp.reshape(a, (-1,)), 0
    if a.ndim == 0:
        raise ValueError("trim_mean: a must have at least one dimension")
    n = a.shape[axis]
    cut = int(float(proportiontocut) * n)
    if cut >= n - cut:
        raise ValueError("Proportion too big.")
    kept = fnp.take(fnp.sort(a, axis=axis), numpy.arange(cut, n - cut), axis=axis)
    return fnp.mean(kept, axis=axis)
