"""Trimmed and limited statistics of ``scipy.stats``: ``tmean``, ``tvar``, ``tstd``,
``tsem``, ``tmin``, ``tmax`` (values outside ``limits`` left out), ``trimboth``, ``trim1``,
``sigmaclip``, ``percentileofscore``, ``scoreatpercentile``.

The limited statistics are masked reductions (differentiable in the kept values,
``jit``/``vmap``-able); ``trimboth``/``trim1`` sort and slice (static shapes);
``sigmaclip`` iterates on the host (its output's length depends on the data).

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.stats import tmean
    >>> float(tmean(np.arange(20.0), (3, 17)))
    10.0
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy

import funcgrad.numpy as fnp
from funcgrad.api_devices import device_get
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device, is_array
from funcgrad.core import Tracer

__all__ = ["tmean", "tvar", "tstd", "tsem", "tmin", "tmax", "trimboth", "trim1",
           "SigmaclipResult", "sigmaclip", "percentileofscore", "scoreatpercentile"]


def _floats(a: Any) -> Any:
    a = fnp.asarray(a)
    return a if fnp.issubdtype(get_aval(a).dtype, fnp.inexact) else a.astype(numpy.float64)


def _flat(a: Any, axis: Any) -> tuple[Any, int]:
    if axis is None:
        return fnp.reshape(a, (-1,)), 0
    return a, int(axis)


def _keep(a: Any, limits: Any, inclusive: tuple[bool, bool]) -> Any:
    """The mask of the values inside ``limits`` (None: all; an end None: unbounded)."""
    keep = ~fnp.isnan(a) | fnp.isnan(a)  # all True, nan entries included (they propagate)
    if limits is None:
        return keep
    lo, hi = limits
    if lo is not None:
        keep = keep & ((a >= lo) if inclusive[0] else (a > lo))
    if hi is not None:
        keep = keep & ((a <= hi) if inclusive[1] else (a < hi))
    return keep


def _count_mean(a: Any, keep: Any, axis: int) -> tuple[Any, Any]:
    n = fnp.sum(keep, axis=axis).astype(get_aval(a).dtype)
    s = fnp.sum(fnp.where(keep, a, 0), axis=axis)
    return n, s / n


def tmean(a: Any, limits: Any = None, inclusive: tuple[bool, bool] = (True, True),
          axis: Any = None) -> Any:
    """The mean of the values of ``a`` inside ``limits``, as ``scipy.stats.tmean``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import tmean
        >>> float(tmean(np.arange(10.0), (2, 5), inclusive=(True, False)))
        3.0
    """
    a, ax = _flat(_floats(a), axis)
    return _count_mean(a, _keep(a, limits, inclusive), ax)[1]


def tvar(a: Any, limits: Any = None, inclusive: tuple[bool, bool] = (True, True),
         axis: Any = 0, ddof: int = 1) -> Any:
    """The variance (``ddof`` 1) of the values inside ``limits``, as ``scipy.stats.tvar``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import tvar
        >>> float(tvar(np.arange(20.0), (3, 17)))
        20.0
    """
    a, ax = _flat(_floats(a), axis)
    keep = _keep(a, limits, inclusive)
    n, m = _count_mean(a, keep, ax)
    d = fnp.where(keep, a - fnp.expand_dims(m, ax), 0)
    return fnp.sum(d * d, axis=ax) / (n - ddof)


def tstd(a: Any, limits: Any = None, inclusive: tuple[bool, bool] = (True, True),
         axis: Any = 0, ddof: int = 1) -> Any:
    """The square root of :func:`tvar`, as ``scipy.stats.tstd``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import tstd
        >>> round(float(tstd(np.arange(20.0), (3, 17))), 6)
        4.472136
    """
    return fnp.sqrt(tvar(a, limits, inclusive, axis, ddof))


def tsem(a: Any, limits: Any = None, inclusive: tuple[bool, bool] = (True, True),
         axis: Any = 0, ddof: int = 1) -> Any:
    """The standard error of the mean of the values inside ``limits``, as
    ``scipy.stats.tsem``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import tsem
        >>> round(float(tsem(np.arange(20.0), (3, 17))), 6)
        1.154701
    """
    a, ax = _flat(_floats(a), axis)
    n = fnp.sum(_keep(a, limits, inclusive), axis=ax).astype(get_aval(a).dtype)
    return fnp.sqrt(tvar(a, limits, inclusive, ax, ddof) / n)


def tmin(a: Any, lowerlimit: Any = None, axis: Any = 0, inclusive: bool = True) -> Any:
    """The minimum of the values at or above ``lowerlimit``, as ``scipy.stats.tmin``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import tmin
        >>> float(tmin(np.arange(20.0), 13))
        13.0
    """
    a, ax = _flat(fnp.asarray(a), axis)
    keep = _keep(a, (lowerlimit, None), (inclusive, True))
    return fnp.min(fnp.where(keep, _floats(a), numpy.inf), axis=ax).astype(
        get_aval(_floats(a)).dtype)


def tmax(a: Any, upperlimit: Any = None, axis: Any = 0, inclusive: bool = True) -> Any:
    """The maximum of the values at or below ``upperlimit``, as ``scipy.stats.tmax``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import tmax
        >>> float(tmax(np.arange(20.0), 13))
        13.0
    """
    a, ax = _flat(fnp.asarray(a), axis)
    keep = _keep(a, (None, upperlimit), (True, inclusive))
    return fnp.max(fnp.where(keep, _floats(a), -numpy.inf), axis=ax).astype(
        get_aval(_floats(a)).dtype)


def trimboth(a: Any, proportiontocut: float, axis: Any = 0) -> Any:
    """``a`` with ``int(proportiontocut * n)`` of the smallest and of the largest values cut
    off along ``axis``, as ``scipy.stats.trimboth`` (funcgrad's result is sorted; SciPy's is
    in partition order).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import trimboth
        >>> trimboth(np.array([9.0, 1.0, 5.0, 3.0, 7.0]), 0.2)
        array([3., 5., 7.])
    """
    a, ax = _flat(fnp.asarray(a), axis)
    n = get_aval(a).shape[ax]
    cut = int(proportiontocut * n)
    if cut >= n - cut:
        raise ValueError("Proportion too big.")
    idx = [slice(None)] * get_aval(a).ndim
    idx[ax] = slice(cut, n - cut)
    return fnp.sort(a, axis=ax)[tuple(idx)]


def trim1(a: Any, proportiontocut: float, tail: str = "right", axis: Any = 0) -> Any:
    """``a`` with ``int(proportiontocut * n)`` values cut off one ``tail`` along ``axis``,
    as ``scipy.stats.trim1`` (sorted).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import trim1
        >>> trim1(np.array([9.0, 1.0, 5.0, 3.0, 7.0]), 0.2, tail="left")
        array([3., 5., 7., 9.])
    """
    a, ax = _flat(fnp.asarray(a), axis)
    n = get_aval(a).shape[ax]
    cut = int(proportiontocut * n)
    if proportiontocut >= 1:
        return fnp.sort(a, axis=ax)[tuple(slice(0, 0) if i == ax else slice(None)
                                          for i in range(get_aval(a).ndim))]
    idx = [slice(None)] * get_aval(a).ndim
    if tail.lower() == "right":
        idx[ax] = slice(0, n - cut)
    elif tail.lower() == "left":
        idx[ax] = slice(cut, n)
    else:
        raise ValueError(f"tail must be 'left' or 'right', got {tail!r}")
    return fnp.sort(a, axis=ax)[tuple(idx)]


class SigmaclipResult(NamedTuple):
    """``(clipped, lower, upper)`` of :func:`sigmaclip`."""

    clipped: Any
    lower: Any
    upper: Any


def sigmaclip(a: Any, low: float = 4.0, high: float = 4.0) -> SigmaclipResult:
    """Iteratively drop the values more than ``low``/``high`` standard deviations below /
    above the mean until none is, as ``scipy.stats.sigmaclip``. A host computation.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import sigmaclip
        >>> res = sigmaclip(np.r_[np.linspace(9.5, 10.5, 31), 20.0])
        >>> res.clipped.size, round(float(res.upper), 6)
        (31, 11.19257)
    """
    if isinstance(a, Tracer):
        raise TypeError("sigmaclip: needs concrete data (the result's length depends on it)")
    dev = (get_aval(a).device or get_default_device()) if is_array(a) and not \
        isinstance(a, numpy.ndarray) else get_default_device()
    c = numpy.asarray(device_get(a)).ravel()
    delta = 1
    while delta:
        c_std, c_mean = c.std(), c.mean()
        size = c.size
        critlower, critupper = c_mean - c_std * low, c_mean + c_std * high
        c = c[(c >= critlower) & (c <= critupper)]
        delta = size - c.size
    return SigmaclipResult(device_put(c, dev), device_put(numpy.float64(critlower), dev),
                           device_put(numpy.float64(critupper), dev))


def percentileofscore(a: Any, score: Any, kind: str = "rank",
                      nan_policy: str = "propagate") -> Any:
    """The percentile rank of ``score`` among ``a``, as ``scipy.stats.percentileofscore``:
    ``kind`` ``"rank"`` (ties averaged), ``"weak"`` (``<=``), ``"strict"`` (``<``),
    ``"mean"``. ``score`` may be an array.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import percentileofscore
        >>> float(percentileofscore(np.array([1, 2, 3, 3, 4]), 3))
        70.0
    """
    a = fnp.reshape(fnp.asarray(a), (-1,))
    s = fnp.asarray(score)
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"nan_policy must be 'propagate', 'omit' or 'raise', got {nan_policy!r}")
    nan_a = fnp.isnan(_floats(a))
    if nan_policy == "raise" and not isinstance(a, Tracer) and bool(fnp.any(nan_a)):
        raise ValueError("The input contains nan values")
    valid = ~nan_a if nan_policy == "omit" else fnp.ones(get_aval(a).shape, bool)
    n = fnp.sum(valid).astype(numpy.float64)
    se = s[..., None]
    left = fnp.sum((a < se) & valid, axis=-1).astype(numpy.float64)
    right = fnp.sum((a <= se) & valid, axis=-1).astype(numpy.float64)
    if kind == "rank":
        out = (left + right + (right > left)) * (50.0 / n)
    elif kind == "strict":
        out = left / n * 100.0
    elif kind == "weak":
        out = right / n * 100.0
    elif kind == "mean":
        out = (left + right) / n * 50.0
    else:
        raise ValueError('kind can only be "rank", "strict", "weak" or "mean"')
    bad = fnp.isnan(_floats(s)) | ((nan_policy == "propagate") & fnp.any(nan_a))
    return fnp.where(bad | (n == 0), numpy.nan, out)


def scoreatpercentile(a: Any, per: Any, limit: Any = (), interpolation_method: str =
                      "fraction", axis: Any = None) -> Any:
    """The score at percentile ``per`` of ``a`` (``limit``: only values inside), as
    ``scipy.stats.scoreatpercentile``; ``interpolation_method`` ``"fraction"`` (linear),
    ``"lower"``, ``"higher"``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import scoreatpercentile
        >>> float(scoreatpercentile(np.arange(100.0), 50))
        49.5
    """
    a = _floats(a)
    if limit:
        if axis is not None and get_aval(a).ndim > 1:
            raise ValueError("scoreatpercentile: limit with an axis needs 1-D data")
        host = numpy.asarray(device_get(a)).ravel()
        host = host[(limit[0] <= host) & (host <= limit[1])]
        a, axis = fnp.asarray(host), None
    method = {"fraction": "linear", "lower": "lower", "higher": "higher"}.get(
        interpolation_method)
    if method is None:
        raise ValueError("interpolation_method can only be 'fraction', 'lower' or 'higher'")
    return fnp.percentile(a, per, axis=axis, method=method)
