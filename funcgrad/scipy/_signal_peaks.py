"""Peak finding of ``scipy.signal``: ``find_peaks`` (with its ``height``, ``threshold``,
``distance``, ``prominence``, ``width``, ``wlen``, ``rel_height`` and ``plateau_size``
conditions and the properties dict), ``peak_prominences``, ``peak_widths``, and the relative
extrema ``argrelextrema``, ``argrelmax``, ``argrelmin``.

These are host computations, as SciPy's: how many peaks there are, and which, depends on the
values (the output's shape is data-dependent), so a traced argument (under ``jit``, ``vmap``
or ``grad``) raises ``TypeError``. Results are NumPy-typed values on the input's device
(indices ``intp``, properties ``float64``), SciPy's exactly: the same walks over the samples,
the same tie-breaking (``distance`` keeps peaks in the order of ``numpy.argsort`` of their
heights).

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.signal import find_peaks
    >>> peaks, props = find_peaks(np.array([0.0, 2.0, 1.0, 3.0, 0.0, 1.0, 1.0, 0.0]),
    ...                           height=1.0)
    >>> peaks, props["peak_heights"]
    (array([1, 3, 5]), array([2., 3., 1.]))
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy

from funcgrad.api_devices import device_get
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device, is_array
from funcgrad.core import Tracer

__all__ = ["find_peaks", "peak_prominences", "peak_widths", "argrelextrema", "argrelmax",
           "argrelmin", "PeakPropertyWarning"]


class PeakPropertyWarning(RuntimeWarning):
    """SciPy's warning for a peak whose prominence or width is 0."""


def _concrete(name: str, v: Any) -> Any:
    if isinstance(v, Tracer):
        raise TypeError(f"{name}: needs concrete values (which samples are peaks depends on "
                        "the data, so the output's shape does too), not a traced value; call "
                        "it outside jit/vmap/grad")
    return device_get(v)


def _device(v: Any) -> str:
    """A device array's device; the default device for host (NumPy) data."""
    if is_array(v) and not isinstance(v, numpy.ndarray):
        return get_aval(v).device or get_default_device()
    return get_default_device()


def _x(name: str, x: Any) -> numpy.ndarray:
    x = numpy.asarray(_concrete(name, x), dtype=numpy.float64)
    if x.ndim != 1:
        raise ValueError(f"{name}: `x` must be a 1-D array, got shape {x.shape}")
    return x


def _peaks(name: str, peaks: Any) -> numpy.ndarray:
    p = numpy.asarray(_concrete(name, peaks))
    if p.size == 0:
        p = numpy.array([], dtype=numpy.intp)
    try:
        p = p.astype(numpy.intp, casting="safe", copy=False)
    except TypeError as e:
        raise TypeError(f"{name}: cannot safely cast `peaks` ({p.dtype}) to dtype('intp')") from e
    if p.ndim != 1:
        raise ValueError(f"{name}: `peaks` must be a 1-D array, got shape {p.shape}")
    return p


def _wlen(name: str, wlen: Any) -> int:
    """-1 for no window; else the window rounded up to an integer (SciPy's rule)."""
    if wlen is None:
        return -1
    if 1 < wlen:
        return int(math.ceil(wlen)) if isinstance(wlen, float) else int(wlen)
    raise ValueError(f"{name}: `wlen` must be larger than 1, was {wlen}")


def _local_maxima(x: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    """Every local maximum (a flat top counts, its middle sample -- the left one of an even
    plateau -- is the peak) with its plateau's edges; never the end samples."""
    n = x.shape[0]
    # candidates: where the signal rises; a plateau is walked to its far end once
    mids, lefts, rights = [], [], []
    i, i_max = 1, n - 1
    while i < i_max:
        if x[i - 1] < x[i]:
            ahead = i + 1
            while ahead < i_max and x[ahead] == x[i]:
                ahead += 1
            if x[ahead] < x[i]:
                lefts.append(i)
                rights.append(ahead - 1)
                mids.append((i + ahead - 1) // 2)
                i = ahead
        i += 1
    as_idx = lambda v: numpy.array(v, dtype=numpy.intp)  # noqa: E731
    return as_idx(mids), as_idx(lefts), as_idx(rights)


def _condition(interval: Any, x: numpy.ndarray, peaks: numpy.ndarray) -> tuple[Any, Any]:
    """``(min, max)`` of a condition: a number (the minimum), a pair (either may be None), or
    arrays as long as ``x`` (read at the peaks)."""
    try:
        lo, hi = interval
    except (TypeError, ValueError):
        lo, hi = interval, None
    out = []
    for which, v in (("lower", lo), ("upper", hi)):
        if is_array(v) or isinstance(v, numpy.ndarray):
            v = numpy.asarray(_concrete("find_peaks", v))
            if v.size != x.size:
                raise ValueError(f"find_peaks: array size of {which} interval border must "
                                 f"match x ({v.size} != {x.size})")
            v = v[peaks]
        out.append(v)
    return out[0], out[1]


def _within(values: numpy.ndarray, lo: Any, hi: Any) -> numpy.ndarray:
    keep = numpy.ones(values.size, dtype=bool)
    if lo is not None:
        keep &= lo <= values
    if hi is not None:
        keep &= values <= hi
    return keep


def _by_distance(peaks: numpy.ndarray, priority: numpy.ndarray, distance: float
                 ) -> numpy.ndarray:
    """Keep the highest peaks first, dropping every lower one closer than ``distance``."""
    n = peaks.shape[0]
    dist = math.ceil(distance)
    keep = numpy.ones(n, dtype=bool)
    order = numpy.argsort(priority)  # SciPy's (unstable) order: the same ties win
    for i in range(n - 1, -1, -1):
        j = order[i]
        if not keep[j]:
            continue
        k = j - 1
        while 0 <= k and peaks[j] - peaks[k] < dist:
            keep[k] = False
            k -= 1
        k = j + 1
        while k < n and peaks[k] - peaks[j] < dist:
            keep[k] = False
            k += 1
    return keep


def _prominences(name: str, x: numpy.ndarray, peaks: numpy.ndarray, wlen: int
                 ) -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    n = peaks.shape[0]
    prom = numpy.empty(n, dtype=numpy.float64)
    left_bases = numpy.empty(n, dtype=numpy.intp)
    right_bases = numpy.empty(n, dtype=numpy.intp)
    zero = False
    for p, peak in enumerate(peaks):
        i_min, i_max = 0, x.shape[0] - 1
        if not i_min <= peak <= i_max:
            raise ValueError(f"{name}: peak {peak} is not a valid index for `x`")
        if 2 <= wlen:
            i_min = max(peak - wlen // 2, i_min)
            i_max = min(peak + wlen // 2, i_max)
        # the lowest point on each side before the signal climbs above the peak
        i = left_bases[p] = peak
        left_min = x[peak]
        while i_min <= i and x[i] <= x[peak]:
            if x[i] < left_min:
                left_min = x[i]
                left_bases[p] = i
            i -= 1
        i = right_bases[p] = peak
        right_min = x[peak]
        while i <= i_max and x[i] <= x[peak]:
            if x[i] < right_min:
                right_min = x[i]
                right_bases[p] = i
            i += 1
        prom[p] = x[peak] - max(left_min, right_min)
        zero = zero or prom[p] == 0
    if zero:
        warnings.warn("some peaks have a prominence of 0", PeakPropertyWarning, stacklevel=3)
    return prom, left_bases, right_bases


def _widths(name: str, x: numpy.ndarray, peaks: numpy.ndarray, rel_height: float,
            prom: numpy.ndarray, left_bases: numpy.ndarray, right_bases: numpy.ndarray
            ) -> tuple[numpy.ndarray, ...]:
    if rel_height < 0:
        raise ValueError(f"{name}: `rel_height` must be greater or equal to 0.0, was "
                         f"{rel_height}")
    if not peaks.shape[0] == prom.shape[0] == left_bases.shape[0] == right_bases.shape[0]:
        raise ValueError(f"{name}: arrays in `prominence_data` must have the same shape as "
                         "`peaks`")
    n = peaks.shape[0]
    widths, heights, left_ips, right_ips = (numpy.empty(n, dtype=numpy.float64)
                                            for _ in range(4))
    zero = False
    for p in range(n):
        i_min, i_max, peak = int(left_bases[p]), int(right_bases[p]), int(peaks[p])
        if not 0 <= i_min <= peak <= i_max < x.shape[0]:
            raise ValueError(f"{name}: prominence data is invalid for peak {peak}")
        height = heights[p] = x[peak] - prom[p] * rel_height
        # walk out to the first sample at or below the height, interpolate the crossing
        i = peak
        while i_min < i and height < x[i]:
            i -= 1
        left = float(i)
        if x[i] < height:
            left += (height - x[i]) / (x[i + 1] - x[i])
        i = peak
        while i < i_max and height < x[i]:
            i += 1
        right = float(i)
        if x[i] < height:
            right -= (height - x[i]) / (x[i - 1] - x[i])
        widths[p] = right - left
        zero = zero or widths[p] == 0
        left_ips[p], right_ips[p] = left, right
    if zero:
        warnings.warn("some peaks have a width of 0", PeakPropertyWarning, stacklevel=3)
    return widths, heights, left_ips, right_ips


def find_peaks(x: Any, height: Any = None, threshold: Any = None, distance: Any = None,
               prominence: Any = None, width: Any = None, wlen: Any = None,
               rel_height: float = 0.5, plateau_size: Any = None
               ) -> tuple[Any, dict[str, Any]]:
    """The local maxima of the 1-D ``x`` meeting the given conditions, as
    ``scipy.signal.find_peaks``: returns ``(peaks, properties)``.

    A peak is a sample higher than both neighbours (a flat top counts once, at its middle).
    Each condition is a number (the minimum), a ``(min, max)`` pair (either ``None``), or
    arrays as long as ``x``: ``height`` (adds ``peak_heights``), ``threshold`` (the vertical
    distance to the neighbours; ``left_thresholds``, ``right_thresholds``), ``distance``
    (minimum samples between peaks, higher ones kept first), ``prominence`` (``prominences``,
    ``left_bases``, ``right_bases``; ``wlen`` limits the window searched), ``width`` at
    ``rel_height`` of the prominence (``widths``, ``width_heights``, ``left_ips``,
    ``right_ips``), ``plateau_size`` (``plateau_sizes``, ``left_edges``, ``right_edges``).
    Conditions apply in that order (plateau size first), each filtering the peaks the next
    sees. Not traceable (the number of peaks depends on the data).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import find_peaks
        >>> x = np.sin(np.linspace(0.0, 6.0 * np.pi, 200)) * np.linspace(1.0, 2.0, 200)
        >>> peaks, props = find_peaks(x, prominence=1.0, width=10)
        >>> peaks, props["prominences"].round(3)
        (array([ 17,  83, 150]), array([1.085, 2.668, 3.332]))
    """
    dev = _device(x)
    x = _x("find_peaks", x)
    if distance is not None and distance < 1:
        raise ValueError(f"find_peaks: `distance` must be greater or equal to 1, was {distance}")
    peaks, left_edges, right_edges = _local_maxima(x)
    props: dict[str, numpy.ndarray] = {}

    def keep_only(keep: numpy.ndarray) -> None:
        nonlocal peaks, props
        peaks = peaks[keep]
        props = {k: v[keep] for k, v in props.items()}

    if plateau_size is not None:
        sizes = right_edges - left_edges + 1
        props.update(plateau_sizes=sizes, left_edges=left_edges, right_edges=right_edges)
        keep_only(_within(sizes, *_condition(plateau_size, x, peaks)))
    if height is not None:
        heights = x[peaks]
        props["peak_heights"] = heights
        keep_only(_within(heights, *_condition(height, x, peaks)))
    if threshold is not None:
        tmin, tmax = _condition(threshold, x, peaks)
        both = numpy.vstack([x[peaks] - x[peaks - 1], x[peaks] - x[peaks + 1]])
        keep = numpy.ones(peaks.size, dtype=bool)
        if tmin is not None:
            keep &= tmin <= both.min(axis=0)  # the smaller step must reach tmin
        if tmax is not None:
            keep &= both.max(axis=0) <= tmax  # and the larger stay under tmax
        props.update(left_thresholds=both[0], right_thresholds=both[1])
        keep_only(keep)
    if distance is not None:
        keep_only(_by_distance(peaks, x[peaks], distance))
    if prominence is not None or width is not None:
        props.update(zip(("prominences", "left_bases", "right_bases"),
                         _prominences("find_peaks", x, peaks, _wlen("find_peaks", wlen)),
                         strict=True))
    if prominence is not None:
        keep_only(_within(props["prominences"], *_condition(prominence, x, peaks)))
    if width is not None:
        props.update(zip(("widths", "width_heights", "left_ips", "right_ips"),
                         _widths("find_peaks", x, peaks, rel_height, props["prominences"],
                                 props["left_bases"], props["right_bases"]), strict=True))
        keep_only(_within(props["widths"], *_condition(width, x, peaks)))
    return device_put(peaks, dev), {k: device_put(v, dev) for k, v in props.items()}


def peak_prominences(x: Any, peaks: Any, wlen: Any = None) -> tuple[Any, Any, Any]:
    """How far each peak rises above its higher base, as ``scipy.signal.peak_prominences``:
    ``(prominences, left_bases, right_bases)``. The bases are the lowest points on each side
    before the signal climbs above the peak (within ``wlen`` samples centred on it, if given).
    Warns ``PeakPropertyWarning`` for a prominence of 0 (``peaks`` not local maxima). Not
    traceable.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import peak_prominences
        >>> peak_prominences(np.array([0.0, 3.0, 1.0, 2.0, 0.5]), np.array([1, 3]))
        (array([2.5, 1. ]), array([0, 2]), array([4, 4]))
    """
    dev = _device(x)
    x = _x("peak_prominences", x)
    out = _prominences("peak_prominences", x, _peaks("peak_prominences", peaks),
                       _wlen("peak_prominences", wlen))
    return tuple(device_put(v, dev) for v in out)  # type: ignore[return-value]


def peak_widths(x: Any, peaks: Any, rel_height: float = 0.5, prominence_data: Any = None,
                wlen: Any = None) -> tuple[Any, Any, Any, Any]:
    """Each peak's width at ``rel_height`` of its prominence below the top, as
    ``scipy.signal.peak_widths``: ``(widths, width_heights, left_ips, right_ips)``, the
    crossings linearly interpolated between samples. ``prominence_data`` is
    :func:`peak_prominences`'s result (computed with ``wlen`` if not given). Not traceable.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import peak_widths
        >>> [v.round(4) for v in peak_widths(np.array([0.0, 1.0, 4.0, 1.0, 0.0]), np.array([2]))]
        [array([1.3333]), array([2.]), array([1.3333]), array([2.6667])]
    """
    dev = _device(x)
    x = _x("peak_widths", x)
    peaks = _peaks("peak_widths", peaks)
    if prominence_data is None:
        prominence_data = _prominences("peak_widths", x, peaks, _wlen("peak_widths", wlen))
    else:
        prom, lb, rb = prominence_data
        prominence_data = (numpy.asarray(_concrete("peak_widths", prom), dtype=numpy.float64),
                           _peaks("peak_widths", lb), _peaks("peak_widths", rb))
    out = _widths("peak_widths", x, peaks, rel_height, *prominence_data)
    return tuple(device_put(v, dev) for v in out)  # type: ignore[return-value]


def argrelextrema(data: Any, comparator: Callable[[Any, Any], Any], axis: int = 0,
                  order: int = 1, mode: str = "clip") -> tuple[Any, ...]:
    """The indices of the relative extrema of ``data`` along ``axis``, as
    ``scipy.signal.argrelextrema``: where ``comparator(data[i], data[i +- k])`` holds for
    every ``k`` in ``1..order``; ``mode`` ``"clip"`` (the ends compare with themselves, so
    never count under a strict comparator) or ``"wrap"``. Returns ``numpy.nonzero``'s tuple.
    Not traceable.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import argrelextrema
        >>> argrelextrema(np.array([2.0, 1.0, 2.0, 3.0, 2.0, 0.0, 1.0]), np.greater)
        (array([3]),)
    """
    dev = _device(data)
    data = numpy.asarray(_concrete("argrelextrema", data))
    if int(order) != order or order < 1:
        raise ValueError(f"argrelextrema: order must be an int >= 1, got {order!r}")
    if mode not in ("clip", "wrap"):
        raise ValueError(f"argrelextrema: mode must be 'clip' or 'wrap', got {mode!r}")
    locs = numpy.arange(data.shape[axis])
    main = data.take(locs, axis=axis, mode=mode)
    hit = numpy.ones(data.shape, dtype=bool)
    for shift in range(1, int(order) + 1):
        hit &= comparator(main, data.take(locs + shift, axis=axis, mode=mode))
        hit &= comparator(main, data.take(locs - shift, axis=axis, mode=mode))
        if not hit.any():
            break
    return tuple(device_put(v, dev) for v in numpy.nonzero(hit))


def argrelmax(data: Any, axis: int = 0, order: int = 1, mode: str = "clip") -> tuple[Any, ...]:
    """The relative maxima of ``data`` (strictly greater than the ``order`` neighbours on each
    side), as ``scipy.signal.argrelmax``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import argrelmax
        >>> argrelmax(np.array([0.0, 2.0, 1.0, 3.0, 1.0]))
        (array([1, 3]),)
    """
    return argrelextrema(data, numpy.greater, axis, order, mode)


def argrelmin(data: Any, axis: int = 0, order: int = 1, mode: str = "clip") -> tuple[Any, ...]:
    """The relative minima of ``data`` (strictly less than the ``order`` neighbours on each
    side), as ``scipy.signal.argrelmin``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.signal import argrelmin
        >>> argrelmin(np.array([3.0, 2.0, 1.0, 3.0, 1.0]))
        (array([2]),)
    """
    return argrelextrema(data, numpy.less, axis, order, mode)
