"""``scipy.stats.binned_statistic``, ``binned_statistic_2d`` and ``binned_statistic_dd``:
a statistic (``mean``, ``std``, ``median``, ``count``, ``sum``, ``min``, ``max`` or a
callable) of ``values`` over bins of the sample coordinates, with SciPy's edges (equal-width
over the data or ``range``, widened by 0.5 for a constant coordinate), right-edge rule and
linearised bin numbers (bins 0 and ``n + 1`` hold the outliers). A host computation.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.stats import binned_statistic
    >>> res = binned_statistic(np.array([0.1, 0.2, 0.6, 0.9]), np.array([1.0, 3.0, 5.0, 7.0]),
    ...                        bins=2)
    >>> res.statistic, res.bin_edges, res.binnumber
    (array([2., 6.]), array([0.1, 0.5, 0.9]), array([1, 1, 2, 2]))
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy

from funcgrad.api_devices import device_get
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device, is_array
from funcgrad.core import Tracer

__all__ = ["BinnedStatisticResult", "binned_statistic", "BinnedStatistic2dResult",
           "binned_statistic_2d", "BinnedStatisticddResult", "binned_statistic_dd"]


class BinnedStatisticResult(NamedTuple):
    """``(statistic, bin_edges, binnumber)`` of :func:`binned_statistic`."""

    statistic: Any
    bin_edges: Any
    binnumber: Any


class BinnedStatistic2dResult(NamedTuple):
    """``(statistic, x_edge, y_edge, binnumber)`` of :func:`binned_statistic_2d`."""

    statistic: Any
    x_edge: Any
    y_edge: Any
    binnumber: Any


class BinnedStatisticddResult(NamedTuple):
    """``(statistic, bin_edges, binnumber)`` of :func:`binned_statistic_dd`."""

    statistic: Any
    bin_edges: Any
    binnumber: Any


_EMPTY = {"count": 0.0, "sum": 0.0}
_REDUCE: dict[str, Callable[[numpy.ndarray], Any]] = {
    "mean": numpy.mean, "std": numpy.std, "median": numpy.median, "count": numpy.size,
    "sum": numpy.sum, "min": numpy.min, "max": numpy.max}


def _host(v: Any) -> numpy.ndarray:
    if isinstance(v, Tracer):
        raise TypeError("binned_statistic: needs concrete data (a host computation); call it "
                        "outside jit/vmap/grad")
    return numpy.asarray(device_get(v))


def _device(*vs: Any) -> str:
    for v in vs:
        if is_array(v) and not isinstance(v, numpy.ndarray):
            return get_aval(v).device or get_default_device()
    return get_default_device()


def binned_statistic_dd(sample: Any, values: Any, statistic: Any = "mean", bins: Any = 10,
                        range: Any = None, expand_binnumbers: bool = False,  # noqa: A002
                        binned_statistic_result: Any = None) -> BinnedStatisticddResult:
    """A statistic of ``values`` over the bins of ``D``-dimensional ``sample`` points (an
    ``(N, D)`` array or a sequence of ``D`` coordinate arrays), as
    ``scipy.stats.binned_statistic_dd``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import binned_statistic_dd
        >>> pts = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        >>> binned_statistic_dd(pts, np.ones(3), "count", bins=2).statistic
        array([[1., 1.],
               [0., 1.]])
    """
    if binned_statistic_result is not None:
        raise ValueError("binned_statistic: binned_statistic_result reuse is not provided")
    known = statistic in _REDUCE if isinstance(statistic, str) else callable(statistic)
    if not known:
        raise ValueError(f"invalid statistic {statistic!r}")
    dev = _device(sample, values)
    raw = sample
    if isinstance(raw, (list, tuple)):
        s = numpy.atleast_2d(numpy.stack([_host(c) for c in raw])).T
    else:
        s = _host(raw)
        s = s[:, None] if s.ndim == 1 else s
    n, dims = s.shape
    vals = _host(values).astype(float)
    multiple = vals.ndim > 1
    vals = vals.reshape(-1, n) if multiple else vals.reshape(1, n)
    if vals.shape[-1] != n:
        raise AttributeError("The number of `values` elements must match the length of each "
                             "`sample` dimension.")
    try:
        m = len(bins)
        if m != dims:
            raise AttributeError("The dimension of bins must be equal to the dimension of "
                                 "the sample x.")
        per_dim = list(bins)
    except TypeError:
        per_dim = [bins] * dims
    edges = []
    for i in builtins.range(dims):
        b = per_dim[i]
        if numpy.ndim(b) == 0:
            lo, hi = (s[:, i].min(), s[:, i].max()) if range is None else range[i]
            if lo == hi:
                lo, hi = lo - 0.5, hi + 0.5
            edges.append(numpy.linspace(lo, hi, int(b) + 1))
        else:
            edges.append(numpy.asarray(b, dtype=float))
    nbin = numpy.array([len(e) + 1 for e in edges])
    bins_idx = []
    for i in builtins.range(dims):
        idx = numpy.digitize(s[:, i], edges[i])
        dmin = numpy.diff(edges[i]).min()
        if dmin == 0:
            raise ValueError("The smallest edge difference is numerically 0.")
        decimal = int(-numpy.log10(dmin)) + 6
        on_edge = numpy.where((s[:, i] >= edges[i][-1])
                              & (numpy.around(s[:, i], decimal)
                                 == numpy.around(edges[i][-1], decimal)))[0]
        idx[on_edge] -= 1
        bins_idx.append(idx)
    binnumber = numpy.ravel_multi_index(bins_idx, nbin)
    result = numpy.empty((vals.shape[0], int(nbin.prod())), float)
    name = statistic if isinstance(statistic, str) else None
    if name:
        fill = _EMPTY.get(name, numpy.nan)
    else:  # SciPy's empty-bin value for a callable: its value on no data, else nan
        try:
            with numpy.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                fill = statistic([])
        except Exception:  # noqa: BLE001 (any failure on empty input means nan, as SciPy)
            fill = numpy.nan
    result.fill(fill)
    reduce = _REDUCE[name] if name else statistic
    present = numpy.unique(binnumber)
    for v in builtins.range(vals.shape[0]):
        for b in present:
            result[v, b] = reduce(vals[v, binnumber == b])
    result = result.reshape((vals.shape[0],) + tuple(nbin))
    core = (slice(None),) + (slice(1, -1),) * dims
    result = result[core]
    if not multiple:
        result = result[0]
    if expand_binnumbers and dims > 1:
        binnumber = numpy.asarray(numpy.unravel_index(binnumber, nbin))
    return BinnedStatisticddResult(device_put(result, dev), [device_put(e, dev) for e in edges],
                                   device_put(binnumber.astype(numpy.intp), dev))


def binned_statistic(x: Any, values: Any, statistic: Any = "mean", bins: Any = 10,
                     range: Any = None) -> BinnedStatisticResult:  # noqa: A002
    """A statistic of ``values`` over the bins of ``x``, as
    ``scipy.stats.binned_statistic``: ``(statistic, bin_edges, binnumber)``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import binned_statistic
        >>> binned_statistic(np.arange(6.0), np.arange(6.0), "sum", bins=3).statistic
        array([1., 5., 9.])
    """
    try:
        nb = len(bins)
    except TypeError:
        nb = 1
    if nb != 1:
        bins = [numpy.asarray(bins, float)]
    if range is not None and len(range) == 2:
        range = [range]  # noqa: A001
    res = binned_statistic_dd([x], values, statistic, bins, range)
    return BinnedStatisticResult(res.statistic, res.bin_edges[0], res.binnumber)


def binned_statistic_2d(x: Any, y: Any, values: Any, statistic: Any = "mean", bins: Any = 10,
                        range: Any = None, expand_binnumbers: bool = False  # noqa: A002
                        ) -> BinnedStatistic2dResult:
    """A statistic of ``values`` over the 2-D bins of ``(x, y)``, as
    ``scipy.stats.binned_statistic_2d``: ``(statistic, x_edge, y_edge, binnumber)``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import binned_statistic_2d
        >>> binned_statistic_2d(np.array([0.0, 1.0]), np.array([0.0, 1.0]), None, "count",
        ...                     bins=2).statistic
        array([[1., 0.],
               [0., 1.]])
    """
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n != 1 and n != 2:
        xedges = yedges = numpy.asarray(bins, float)
        bins = [xedges, yedges]
    if values is None:
        values = numpy.ones(len(_host(x)))
    res = binned_statistic_dd([x, y], values, statistic, bins, range,
                              expand_binnumbers=expand_binnumbers)
    return BinnedStatistic2dResult(res.statistic, res.bin_edges[0], res.bin_edges[1],
                                   res.binnumber)
