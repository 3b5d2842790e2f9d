"""Circular statistics and the Box-Cox transform of ``scipy.stats``: ``circmean``,
``circvar``, ``circstd`` (samples on ``[low, high)``), ``boxcox``, ``boxcox_llf``.

Formulas on funcgrad operations: differentiable and ``jit``-able (``boxcox`` without
``lmbda`` finds the maximum-likelihood ``lmbda`` with SciPy's Brent search, on the host).

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.stats import circmean
    >>> round(float(circmean(np.array([0.1, 2 * np.pi - 0.1]))), 12) + 0.0
    0.0
"""

from __future__ import annotations

import math
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.api_devices import device_get
from funcgrad.avals import get_aval
from funcgrad.core import Tracer
from funcgrad.scipy.optimize import brent

__all__ = ["circmean", "circvar", "circstd", "boxcox", "boxcox_llf"]


def _angles(samples: Any, high: float, low: float, nan_policy: str, axis: Any
            ) -> tuple[Any, Any, Any]:
    """``(mean sin, mean cos, kept)`` of the samples mapped onto the circle."""
    x = fnp.asarray(samples)
    if not fnp.issubdtype(get_aval(x).dtype, fnp.inexact):
        x = x.astype(numpy.float64)
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"nan_policy must be 'propagate', 'omit' or 'raise', got {nan_policy!r}")
    if nan_policy == "raise" and not isinstance(x, Tracer) and bool(fnp.any(fnp.isnan(x))):
        raise ValueError("The input contains nan values")
    ang = (x - low) * 2.0 * math.pi / (high - low)
    keep = ~fnp.isnan(ang) if nan_policy == "omit" else fnp.ones(get_aval(ang).shape, bool)
    n = fnp.sum(keep, axis=axis).astype(get_aval(ang).dtype)
    s = fnp.sum(fnp.where(keep, fnp.sin(ang), 0), axis=axis) / n
    c = fnp.sum(fnp.where(keep, fnp.cos(ang), 0), axis=axis) / n
    return s, c, n


def circmean(samples: Any, high: float = 2 * math.pi, low: float = 0, axis: Any = None,
             nan_policy: str = "propagate") -> Any:
    """The circular mean of samples on ``[low, high)``, as ``scipy.stats.circmean``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import circmean
        >>> round(float(circmean(np.array([350.0, 10.0]), high=360)), 10) % 360
        0.0
    """
    s, c, _ = _angles(samples, high, low, nan_policy, axis)
    res = fnp.mod(fnp.arctan2(s, c), 2 * math.pi)
    return res * (high - low) / (2.0 * math.pi) + low


def circvar(samples: Any, high: float = 2 * math.pi, low: float = 0, axis: Any = None,
            nan_policy: str = "propagate") -> Any:
    """The circular variance ``1 - R`` (``R`` the mean resultant length), as
    ``scipy.stats.circvar``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import circvar
        >>> round(float(circvar(np.array([0.0, np.pi]))), 12)
        1.0
    """
    s, c, _ = _angles(samples, high, low, nan_policy, axis)
    return 1.0 - fnp.minimum(1.0, fnp.sqrt(s * s + c * c))


def circstd(samples: Any, high: float = 2 * math.pi, low: float = 0, axis: Any = None,
            nan_policy: str = "propagate", *, normalize: bool = False) -> Any:
    """The circular standard deviation ``sqrt(-2 log R)`` in the samples' units (radians
    with ``normalize``), as ``scipy.stats.circstd``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import circstd
        >>> round(float(circstd(np.array([0.1, 0.2, 6.2]))), 6)
        0.117362
    """
    s, c, _ = _angles(samples, high, low, nan_policy, axis)
    r = fnp.minimum(1.0, fnp.sqrt(s * s + c * c))
    res = fnp.sqrt(-2.0 * fnp.log(r))
    return res if normalize else res * (high - low) / (2.0 * math.pi)


def boxcox_llf(lmb: Any, data: Any, *, axis: int = 0, keepdims: bool = False) -> Any:
    """The Box-Cox log-likelihood of ``data`` at ``lmb``, as ``scipy.stats.boxcox_llf``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import boxcox_llf
        >>> round(float(boxcox_llf(1.0, np.array([1.0, 2.0, 3.0, 4.0]))), 6)
        -0.446287
    """
    x = fnp.asarray(data)
    if not fnp.issubdtype(get_aval(x).dtype, fnp.inexact):
        x = x.astype(numpy.float64)
    n = get_aval(x).shape[axis]
    logx = fnp.log(x)
    if isinstance(lmb, (int, float)) and lmb == 0:
        logvar = fnp.log(fnp.var(logx, axis=axis))
    else:
        # the variance of x**lmb / lmb through logs, as SciPy (overflow-safe)
        y = lmb * logx
        ym = fnp.max(y, axis=axis, keepdims=True)
        z = fnp.exp(y - ym)
        logvar = fnp.log(fnp.var(z, axis=axis)) + 2 * fnp.squeeze(ym, axis) - 2 * fnp.log(
            fnp.abs(fnp.asarray(lmb, dtype=get_aval(x).dtype)))
    llf = (lmb - 1) * fnp.sum(logx, axis=axis) - n / 2.0 * logvar
    return fnp.expand_dims(llf, axis) if keepdims else llf


def boxcox(x: Any, lmbda: Any = None, alpha: Any = None, optimizer: Any = None) -> Any:
    """The Box-Cox transform ``(x**lmbda - 1) / lmbda`` (``log x`` at 0) of positive data,
    as ``scipy.stats.boxcox``; without ``lmbda``, returns ``(y, lmbda)`` with the
    maximum-likelihood ``lmbda`` (SciPy's Brent search from the bracket ``(-2, 2)``).
    ``alpha`` confidence intervals are not provided.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import boxcox
        >>> boxcox(np.array([1.0, 2.0, 4.0]), 0.0).round(6)
        array([0.      , 0.693147, 1.386294])
    """
    if alpha is not None or optimizer is not None:
        raise ValueError("boxcox: alpha= and optimizer= are not provided by funcgrad")
    x = fnp.asarray(x)
    if not fnp.issubdtype(get_aval(x).dtype, fnp.inexact):
        x = x.astype(numpy.float64)
    if get_aval(x).ndim != 1:
        raise ValueError("Data must be 1-dimensional.")
    if get_aval(x).size == 0:
        return x
    if not isinstance(x, Tracer) and bool(fnp.any(x <= 0)):
        raise ValueError("Data must be positive.")
    if lmbda is not None:
        if isinstance(lmbda, (int, float)) and lmbda == 0:
            return fnp.log(x)
        return fnp.expm1(lmbda * fnp.log(x)) / lmbda
    if isinstance(x, Tracer):
        raise TypeError("boxcox: estimating lmbda needs concrete data; pass lmbda under jit")
    data = numpy.asarray(device_get(x))
    lam = float(brent(lambda lmb: -float(boxcox_llf(float(lmb), data)), brack=(-2.0, 2.0)))
    return boxcox(x, lam), lam
