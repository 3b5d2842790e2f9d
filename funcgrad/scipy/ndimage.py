"""funcgrad.scipy.ndimage: ``map_coordinates`` (orders 0 and 1), as ``scipy.ndimage``, and
the filters (``correlate``/``convolve`` in 1-D and n-D, ``gaussian_filter``,
``uniform_filter``, ``minimum``/``maximum``/``median``/``rank``/``percentile_filter``,
``sobel``, ``prewitt``, ``laplace``, ``gaussian_laplace``, ``gaussian_gradient_magnitude``:
:mod:`funcgrad.scipy._ndimage_filters`).

Written with gathers and selects: differentiable in ``input`` (linear) and, for ``order=1``,
in the coordinates (piecewise linear); ``jit`` and ``vmap`` work.

Example:
    >>> import numpy as np, funcgrad.scipy.ndimage as fnd
    >>> fnd.map_coordinates(np.arange(4.0), [np.array([0.5, 2.25])], order=1)
    array([0.5 , 2.25])
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Sequence
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.scipy._ndimage_filters import (
    convolve,
    convolve1d,
    correlate,
    correlate1d,
    gaussian_filter,
    gaussian_filter1d,
    gaussian_gradient_magnitude,
    gaussian_laplace,
    laplace,
    maximum_filter,
    maximum_filter1d,
    median_filter,
    minimum_filter,
    minimum_filter1d,
    percentile_filter,
    prewitt,
    rank_filter,
    sobel,
    uniform_filter,
    uniform_filter1d,
)

__all__ = [
    "map_coordinates", "correlate1d", "convolve1d", "correlate", "convolve",
    "gaussian_filter1d", "gaussian_filter", "uniform_filter1d", "uniform_filter",
    "minimum_filter1d", "maximum_filter1d", "minimum_filter", "maximum_filter",
    "median_filter", "rank_filter", "percentile_filter", "sobel", "prewitt", "laplace",
    "gaussian_laplace", "gaussian_gradient_magnitude",
]


def _round_half_away(x: Any) -> Any:
    return fnp.sign(x) * fnp.floor(fnp.abs(x) + 0.5)


def _mirror(index: Any, size: int) -> Any:
    """Reflection about the edge samples (period ``2 (size - 1)``): SciPy's ``'mirror'``."""
    if size == 1:
        return fnp.zeros_like(index)
    s = size - 1
    return fnp.abs((index + s) % (2 * s) - s)


def _reflect(index: Any, size: int) -> Any:
    """Reflection about the edges (period ``2 size``): SciPy's ``'reflect'``/``'grid-mirror'``."""
    return fnp.floor_divide(_mirror(2 * index + 1, 2 * size + 1) - 1, 2)


def _wrap_coordinate(c: Any, n: int) -> Any:
    """SciPy's ``'wrap'`` of a coordinate (period ``n - 1``, ``ni_interpolation.c``): left
    alone inside ``[0, n - 1]`` (so ``n - 1`` stays the last sample, not the first), shifted by
    whole periods outside -- below 0 by one more than ``trunc(-c / (n - 1))``, so ``-(n - 1)``
    lands on ``n - 1``."""
    if n <= 1:
        return fnp.zeros_like(c)
    sz = n - 1
    below = c + sz * (fnp.trunc(-c / sz) + 1)
    above = c - sz * fnp.trunc(c / sz)
    return fnp.where(c < 0, below, fnp.where(c > sz, above, c))


def _mirror_coordinate(c: Any, n: int) -> Any:
    sz2 = 2 * n - 2
    below = sz2 * fnp.trunc(-c / sz2) + c
    below = fnp.where(below <= 1 - n, below + sz2, -below)
    above = c - sz2 * fnp.trunc(c / sz2)
    above = fnp.where(above >= n, sz2 - above, above)
    return below, above


def _reflect_coordinate(c: Any, n: int) -> Any:
    sz2 = 2 * n
    below = fnp.where(c < -sz2, sz2 * fnp.trunc(-c / sz2) + c, c)
    # SciPy's guard: just below 0 reflects to just below -1 + 1e-15, never to -1 itself
    below = fnp.where(below < -n, below + sz2, fnp.where(below > -1e-15, 1e-15, -below) - 1)
    above = c - sz2 * fnp.trunc(c / sz2)
    above = fnp.where(above >= n, sz2 - above - 1, above)
    return below, above


def _grid_wrap_coordinate(c: Any, n: int) -> Any:
    return c + n * (fnp.trunc((-1 - c) / n) + 1), c - n * fnp.trunc(c / n)


# SciPy maps an outside coordinate into the array before order 0 rounds it (then rounds half
# up, floor(c + 0.5)): rounding first and mapping the index differs at half-integers outside
# (mirror at 7.5 in 5 samples is sample 1, not 0). (below-0 value, above-(n - 1) value).
_COORDINATE_MAPS = {
    "mirror": _mirror_coordinate,
    "reflect": _reflect_coordinate,
    "grid-mirror": _reflect_coordinate,
    "grid-wrap": _grid_wrap_coordinate,
}


def _map_coordinate(c: Any, n: int, mode: str) -> Any:
    """SciPy's ``map_coordinate`` (``ni_interpolation.c``) of a coordinate into the array."""
    if n <= 1:
        return fnp.zeros_like(c)
    below, above = _COORDINATE_MAPS[mode](c, n)
    return fnp.where(c < 0, below, fnp.where(c > n - 1, above, c))


_FIXERS = {
    "constant": lambda i, n: fnp.clip(i, 0, n - 1),  # out-of-range samples are cval anyway
    "grid-constant": lambda i, n: fnp.clip(i, 0, n - 1),
    "nearest": lambda i, n: fnp.clip(i, 0, n - 1),
    "wrap": lambda i, n: fnp.clip(i, 0, n - 1),  # the coordinate is wrapped first
    "grid-wrap": lambda i, n: i % n,
    "mirror": _mirror,
    "reflect": _reflect,
    "grid-mirror": _reflect,
}


def map_coordinates(input: Any, coordinates: Sequence[Any], order: int = 1,  # noqa: A002
                    output: Any = None, mode: str = "constant", cval: Any = 0.0,
                    prefilter: bool = True) -> Any:
    """Sample ``input`` at ``coordinates`` (one array per dimension of ``input``, all of one
    shape) by nearest-neighbour (``order=0``) or linear (``order=1``) interpolation.

    ``mode`` handles coordinates outside the array as SciPy: ``"constant"`` (``cval`` when a
    coordinate is outside ``[0, n - 1]``), ``"grid-constant"`` (samples outside are ``cval``
    and interpolation reaches them), ``"nearest"``, ``"wrap"`` (period ``n - 1``, SciPy's),
    ``"grid-wrap"`` (period ``n``), ``"mirror"``, ``"reflect"``/``"grid-mirror"``. Integer
    inputs give integer results (rounded). ``prefilter`` has no effect for orders 0 and 1.

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> img = np.arange(12.0).reshape(3, 4)
        >>> fnd.map_coordinates(img, [np.array([0.5, 2.0]), np.array([1.5, 3.0])])
        array([ 3.5, 11. ])
    """
    if output is not None:
        raise TypeError("map_coordinates: output= is not supported (arrays are immutable); "
                        "use the return value")
    if order not in (0, 1):
        raise ValueError(f"map_coordinates: order must be 0 or 1, got {order!r} (spline "
                         "orders 2-5 are not implemented)")
    if mode not in _FIXERS:
        raise ValueError(f"map_coordinates: mode must be one of {sorted(_FIXERS)}, got {mode!r}")
    x = fnp.asarray(input)
    shape = get_aval(x).shape
    coords = [fnp.asarray(c) for c in coordinates] if not hasattr(coordinates, "shape") or \
        get_aval(fnp.asarray(coordinates)).ndim > 0 else []
    if len(coords) != len(shape):
        raise ValueError(f"map_coordinates: coordinates must have one array per dimension of "
                         f"input ({len(shape)}), got {len(coords)}")
    if any(n == 0 for n in shape):
        raise ValueError(f"map_coordinates: input has a zero-size dimension: {shape}")
    xdt = get_aval(x).dtype
    cdt = numpy.result_type(*[get_aval(c).dtype for c in coords], numpy.float32)
    if xdt.kind in "fc":
        cdt = numpy.result_type(cdt, xdt.type(0).real.dtype)
    coords = [c.astype(cdt) for c in coords]
    cshape = numpy.broadcast_shapes(*[get_aval(c).shape for c in coords])
    coords = [fnp.broadcast_to(c, cshape) for c in coords]

    outside = None
    per_dim = []
    for c, n in zip(coords, shape):
        if mode == "constant":
            bad = (c < 0) | (c > n - 1)
            outside = bad if outside is None else outside | bad
        if mode == "wrap":
            c = _wrap_coordinate(c, n)
        if order == 0:
            if mode in _COORDINATE_MAPS:
                c = _map_coordinate(c, n, mode)
            nodes = [(fnp.floor(c + 0.5).astype(numpy.int64), None)]
        else:
            lower = fnp.floor(c)
            upper_w = c - lower
            lo = lower.astype(numpy.int64)
            nodes = [(lo, 1 - upper_w), (lo + 1, upper_w)]
        fixed = []
        for idx, w in nodes:
            valid = ((idx >= 0) & (idx < n)) if mode == "grid-constant" else None
            fixed.append((_FIXERS[mode](idx, n), valid, w))
        per_dim.append(fixed)

    work_dt = numpy.result_type(xdt, cdt) if xdt.kind in "fc" else cdt
    # Gathers from the flattened input with fnp.take: a host (NumPy) input indexed by traced
    # coordinates (under jit or vmap) must go through funcgrad's gather, not NumPy indexing.
    flat = fnp.reshape(x.astype(work_dt), (-1,))
    strides = [int(numpy.prod(shape[d + 1:], dtype=numpy.int64)) for d in range(len(shape))]
    result = None
    for combo in itertools.product(*per_dim):
        idxs, valids, weights = zip(*combo)
        vals = fnp.take(flat, functools.reduce(
            operator.add, [i * st for i, st in zip(idxs, strides)]))
        checks = [v for v in valids if v is not None]
        if checks:
            vals = fnp.where(functools.reduce(operator.and_, checks), vals,
                             fnp.asarray(cval).astype(work_dt))
        ws = [w for w in weights if w is not None]
        term = vals * functools.reduce(operator.mul, ws).astype(work_dt) if ws else vals
        result = term if result is None else result + term
    if outside is not None:
        result = fnp.where(outside, fnp.asarray(cval).astype(work_dt), result)
    if xdt.kind in "iub":
        result = _round_half_away(result) if xdt.kind != "b" else result
    return result.astype(xdt)
