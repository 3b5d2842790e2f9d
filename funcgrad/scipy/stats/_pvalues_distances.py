"""``scipy.stats``' one-dimensional distances between samples (``wasserstein_distance``,
``energy_distance``: through the two empirical CDFs), p-value combination
(``combine_pvalues``), multiple-testing adjustment (``false_discovery_control``) and the
geometric standard deviation ``gstd``.

Formulas on funcgrad operations (sorts, searches, cumulative sums): differentiable in the
sample values (and weights) and ``jit``/``vmap``-able.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.stats import wasserstein_distance
    >>> float(wasserstein_distance(np.array([0.0, 1.0, 3.0]), np.array([5.0, 6.0, 8.0])))
    5.0
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device
from funcgrad.core import Tracer
from funcgrad.scipy.stats import beta as _beta
from funcgrad.scipy.stats import chi2 as _chi2
from funcgrad.scipy.stats import norm as _norm
from funcgrad.scipy.stats import t as _t

__all__ = ["wasserstein_distance", "energy_distance", "combine_pvalues",
           "SignificanceResult", "false_discovery_control", "gstd"]


class SignificanceResult(NamedTuple):
    """``(statistic, pvalue)`` of :func:`combine_pvalues`."""

    statistic: Any
    pvalue: Any


def _floats(v: Any) -> Any:
    v = fnp.asarray(v)
    return v if fnp.issubdtype(get_aval(v).dtype, fnp.inexact) else v.astype(numpy.float64)


def _distribution(name: str, values: Any, weights: Any) -> tuple[Any, Any]:
    values = _floats(values)
    if get_aval(values).ndim != 1 or get_aval(values).size == 0:
        raise ValueError(f"{name}: distribution can't be empty (1-D values needed).")
    if weights is None:
        return values, None
    weights = _floats(weights)
    if get_aval(weights).shape != get_aval(values).shape:
        raise ValueError("Value and weight array-likes for the same empirical distribution "
                         "must be of the same size.")
    if not isinstance(weights, Tracer):
        if bool(fnp.any(weights < 0)):
            raise ValueError("All weights must be non-negative.")
        if not 0 < float(fnp.sum(weights)) < math.inf:
            raise ValueError("Weight array-like sum must be positive and finite. Set as None "
                             "for an equal distribution of weight.")
    return values, weights


def _cdf_distance(p: float, u: Any, v: Any, uw: Any, vw: Any) -> Any:
    """SciPy's ``_cdf_distance``: the L^p distance between the two empirical CDFs."""
    u_sorter, v_sorter = fnp.argsort(u), fnp.argsort(v)
    all_values = fnp.sort(fnp.concatenate([u, v]))
    deltas = all_values[1:] - all_values[:-1]
    u_sorted, v_sorted = u[u_sorter], v[v_sorter]
    u_idx = fnp.searchsorted(u_sorted, all_values[:-1], side="right")
    v_idx = fnp.searchsorted(v_sorted, all_values[:-1], side="right")

    def cdf(idx: Any, values: Any, weights: Any, sorter: Any) -> Any:
        if weights is None:
            return idx / get_aval(values).size
        cum = fnp.concatenate([fnp.zeros((1,), get_aval(weights).dtype),
                               fnp.cumsum(weights[sorter])])
        return cum[idx] / cum[-1]

    diff = cdf(u_idx, u, uw, u_sorter) - cdf(v_idx, v, vw, v_sorter)
    if p == 1:
        return fnp.sum(fnp.abs(diff) * deltas)
    if p == 2:
        return fnp.sqrt(fnp.sum(diff * diff * deltas))
    return fnp.sum(fnp.abs(diff) ** p * deltas) ** (1 / p)


def wasserstein_distance(u_values: Any, v_values: Any, u_weights: Any = None,
                         v_weights: Any = None) -> Any:
    """The first Wasserstein (earth mover's) distance between two 1-D empirical
    distributions (optionally weighted), as ``scipy.stats.wasserstein_distance``.
    Differentiable in the values and weights.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import wasserstein_distance
        >>> float(wasserstein_distance(np.array([0.0, 1.0]), np.array([0.0, 1.0]),
        ...                            np.array([3.0, 1.0]), np.array([1.0, 3.0])))
        0.5
    """
    u, uw = _distribution("wasserstein_distance", u_values, u_weights)
    v, vw = _distribution("wasserstein_distance", v_values, v_weights)
    return _cdf_distance(1, u, v, uw, vw)


def energy_distance(u_values: Any, v_values: Any, u_weights: Any = None,
                    v_weights: Any = None) -> Any:
    """The energy distance between two 1-D empirical distributions, ``sqrt(2)`` times the
    L2 distance of their CDFs, as ``scipy.stats.energy_distance``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import energy_distance
        >>> round(float(energy_distance(np.array([0.0]), np.array([2.0]))), 12)
        2.0
    """
    u, uw = _distribution("energy_distance", u_values, u_weights)
    v, vw = _distribution("energy_distance", v_values, v_weights)
    return math.sqrt(2) * _cdf_distance(2, u, v, uw, vw)


_COMBINE = ("fisher", "pearson", "tippett", "stouffer", "mudholkar_george")


def combine_pvalues(pvalues: Any, method: str = "fisher", weights: Any = None, *,
                    axis: int = 0) -> SignificanceResult:
    """Combine independent p-values of tests of one hypothesis, as
    ``scipy.stats.combine_pvalues``: ``method`` ``"fisher"``, ``"pearson"``, ``"tippett"``,
    ``"stouffer"`` (``weights``) or ``"mudholkar_george"``. Differentiable.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import combine_pvalues
        >>> res = combine_pvalues(np.array([0.01, 0.2, 0.3]))
        >>> round(float(res.statistic), 6), round(float(res.pvalue), 6)
        (14.837162, 0.021562)
    """
    if method not in _COMBINE:
        raise ValueError(f"Invalid method {method!r}. Valid methods are {_COMBINE}")
    p = fnp.moveaxis(_floats(pvalues), axis, -1)
    n = get_aval(p).shape[-1]
    if method == "fisher":
        stat = -2 * fnp.sum(fnp.log(p), axis=-1)
        pval = _chi2.sf(stat, 2 * n)
    elif method == "pearson":
        stat = 2 * fnp.sum(fnp.log1p(-p), axis=-1)
        pval = _chi2.cdf(-stat, 2 * n)
    elif method == "tippett":
        stat = fnp.min(p, axis=-1)
        pval = _beta.cdf(stat, 1, n)
    elif method == "stouffer":
        w = fnp.ones(get_aval(p).shape[-1:], get_aval(p).dtype) if weights is None else \
            _floats(weights)
        z = _norm.isf(p)
        stat = fnp.sum(w * z, axis=-1) / fnp.sqrt(fnp.sum(w * w))
        pval = _norm.sf(stat)
    else:
        normalizing = math.sqrt(3 / n) / math.pi
        fisher = -2 * fnp.sum(fnp.log(p), axis=-1)
        pearson = 2 * fnp.sum(fnp.log1p(-p), axis=-1)
        stat = (fisher + pearson) / 2
        nu = 5 * n + 4
        pval = _t.sf(stat * normalizing * math.sqrt(nu / (nu - 2)), nu)
    return SignificanceResult(stat, pval)


def false_discovery_control(ps: Any, *, axis: Any = 0, method: str = "bh") -> Any:
    """The p-values adjusted for the false discovery rate, as
    ``scipy.stats.false_discovery_control``: Benjamini-Hochberg (``"bh"``) or
    Benjamini-Yekutieli (``"by"``).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import false_discovery_control
        >>> false_discovery_control(np.array([0.01, 0.04, 0.03, 0.5]))
        array([0.04      , 0.05333333, 0.05333333, 0.5       ])
    """
    if method.lower() not in ("bh", "by"):
        raise ValueError(f"Unrecognized `method` {method!r}. Method must be one of ('bh', "
                         "'by').")
    ps = _floats(ps)
    if not isinstance(ps, Tracer) and bool(fnp.any((ps < 0) | (ps > 1))):
        raise ValueError("`ps` must include only numbers between 0 and 1.")
    if axis is None:
        ps, axis = fnp.reshape(ps, (-1,)), 0
    ps = fnp.moveaxis(ps, axis, -1)
    m = get_aval(ps).shape[-1]
    order = fnp.argsort(ps, axis=-1)
    srt = fnp.take_along_axis(ps, order, axis=-1)
    i = numpy.arange(1, m + 1)
    factor = m / i
    if method.lower() == "by":
        factor = factor * numpy.sum(1 / i)
    adj = srt * device_put(factor.astype(get_aval(ps).dtype),
                           get_aval(ps).device or get_default_device())
    adj = fnp.flip(fnp.minimum.accumulate(fnp.flip(adj, -1), axis=-1), -1)
    inverse = fnp.argsort(order, axis=-1)
    out = fnp.clip(fnp.take_along_axis(adj, inverse, axis=-1), 0, 1)
    return fnp.moveaxis(out, -1, axis)


def gstd(a: Any, axis: Any = 0, ddof: int = 1) -> Any:
    """The geometric standard deviation ``exp(std(log a, ddof))``, as ``scipy.stats.gstd``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import gstd
        >>> round(float(gstd(np.array([1.0, 2.0, 4.0, 8.0]))), 6)
        2.446967
    """
    a = _floats(a)
    if axis is None:
        a, axis = fnp.reshape(a, (-1,)), 0
    return fnp.exp(fnp.std(fnp.log(a), axis=axis, ddof=ddof))
