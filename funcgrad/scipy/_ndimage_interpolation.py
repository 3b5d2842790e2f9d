"""The interpolation of ``scipy.ndimage``: ``map_coordinates``, ``affine_transform``,
``shift``, ``zoom``, ``rotate`` (B-splines of orders 0-5, every boundary mode) and the
prefilters ``spline_filter1d`` / ``spline_filter``.

An order ``>= 2`` spline interpolates the *coefficients* of the image (the prefilter, a
linear map along each axis: SciPy's recursive filter, applied here as a matrix built on the
host for each length, order and mode), then sums ``order + 1`` coefficients per axis weighted
by the B-spline. Everything is written with matrix products, gathers and selects, so the
result is differentiable in the image and the coordinates (and in ``shift``'s shift,
``affine_transform``'s matrix and offset) and works under ``jit`` and ``vmap``. Output
shapes and zoom factors are static. Values are SciPy's, boundary quirks included
(:func:`map_coordinates` documents them).

Example:
    >>> import numpy as np, funcgrad.scipy.ndimage as fnd
    >>> fnd.map_coordinates(np.arange(4.0), [np.array([0.5, 2.25])], order=1)
    array([0.5 , 2.25])
"""

from __future__ import annotations

import functools
import itertools
import math
import numbers
import operator
from collections.abc import Sequence
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.api_vmap import vmap
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device
from funcgrad.core import Tracer

__all__ = ["map_coordinates", "spline_filter1d", "spline_filter", "affine_transform",
           "shift", "zoom", "rotate"]

_MODES = ("constant", "grid-constant", "nearest", "wrap", "grid-wrap", "mirror", "reflect",
          "grid-mirror")


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


# SciPy maps an outside coordinate into the array before interpolating (order 0 then rounds
# half up, floor(c + 0.5)): rounding first and mapping the index differs at half-integers
# outside (mirror at 7.5 in 5 samples is sample 1, not 0). (below-0 value, above-(n - 1) value).
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


# Where orders 0 and 1 read a sample outside the array (the coordinate already mapped).
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

# Where orders >= 2 read a coefficient outside the array (SciPy's edge offsets).
_SPLINE_FIXERS = {**_FIXERS, "constant": _mirror, "grid-constant": _mirror, "wrap": _mirror}

# The poles of the B-spline prefilters (SciPy's ni_splines.c).
_POLES = {
    2: (math.sqrt(8.0) - 3.0,),
    3: (math.sqrt(3.0) - 2.0,),
    4: (math.sqrt(664.0 - math.sqrt(438976.0)) + math.sqrt(304.0) - 19.0,
        math.sqrt(664.0 + math.sqrt(438976.0)) - math.sqrt(304.0) - 19.0),
    5: (math.sqrt(67.5 - math.sqrt(4436.25)) + math.sqrt(26.25) - 6.5,
        math.sqrt(67.5 + math.sqrt(4436.25)) - math.sqrt(26.25) - 6.5),
}


def _causal_mirror(c: numpy.ndarray, n: int, z: float) -> None:
    z_n1 = z ** (n - 1)
    acc = c[0] + z_n1 * c[n - 1]
    z_i = z
    for i in range(1, n - 1):
        acc = acc + z_i * (c[i] + z_n1 * c[n - 1 - i])
        z_i *= z
    c[0] = acc / (1.0 - z_n1 * z_n1)


def _anticausal_mirror(c: numpy.ndarray, n: int, z: float) -> None:
    c[n - 1] = (z * c[n - 2] + c[n - 1]) * z / (z * z - 1.0)


def _causal_reflect(c: numpy.ndarray, n: int, z: float) -> None:
    # The exact initialisation, as SciPy >= 1.18 (scipy/scipy#24615): SciPy before it
    # accumulated into c[0] in place, so its last term read the partial sum instead of the
    # first sample (off the exact spline by ~z**(2n): a few parts in 1e4 on 3 samples).
    z_n = z ** n
    c0 = c[0].copy()
    acc = c0 + z_n * c[n - 1]
    z_i = z
    for i in range(1, n):
        acc = acc + z_i * (c[i] + z_n * c[n - 1 - i])
        z_i *= z
    c[0] = acc * z / (1.0 - z_n * z_n) + c0


def _anticausal_reflect(c: numpy.ndarray, n: int, z: float) -> None:
    c[n - 1] = c[n - 1] * z / (z - 1.0)


def _causal_wrap(c: numpy.ndarray, n: int, z: float) -> None:
    acc = c[0].copy()
    z_i = z
    for i in range(1, n):
        acc = acc + z_i * c[n - i]
        z_i *= z
    c[0] = acc / (1.0 - z_i)


def _anticausal_wrap(c: numpy.ndarray, n: int, z: float) -> None:
    acc = c[n - 1].copy()
    z_i = z
    for i in range(n - 1):
        acc = acc + z_i * c[i]
        z_i *= z
    c[n - 1] = acc * z / (z_i - 1.0)


_MIRROR_INIT = (_causal_mirror, _anticausal_mirror)
_REFLECT_INIT = (_causal_reflect, _anticausal_reflect)
# The boundary condition each mode's prefilter assumes (SciPy's apply_filter).
_FILTER_INIT = {
    "constant": _MIRROR_INIT, "grid-constant": _MIRROR_INIT, "mirror": _MIRROR_INIT,
    "wrap": _MIRROR_INIT, "grid-wrap": (_causal_wrap, _anticausal_wrap),
    "nearest": _REFLECT_INIT, "reflect": _REFLECT_INIT, "grid-mirror": _REFLECT_INIT,
}


@functools.lru_cache(maxsize=64)
def _filter_matrix(n: int, order: int, mode: str) -> numpy.ndarray:
    """The prefilter along one axis of length ``n`` as an ``n x n`` matrix: SciPy's gain and
    causal/anticausal recursions (with their boundary initialisations) run on the identity's
    columns at once. A single sample is left alone (as SciPy)."""
    c = numpy.eye(n)
    if n == 1:
        return c
    causal, anticausal = _FILTER_INIT[mode]
    poles = _POLES[order]
    c *= functools.reduce(operator.mul, [(1.0 - z) * (1.0 - 1.0 / z) for z in poles])
    for z in poles:
        causal(c, n, z)
        for i in range(1, n):
            c[i] += z * c[i - 1]
        anticausal(c, n, z)
        for i in range(n - 2, -1, -1):
            c[i] = z * (c[i + 1] - c[i])
    c.setflags(write=False)
    return c


def _check_order(name: str, order: Any) -> int:
    if isinstance(order, bool) or not isinstance(order, numbers.Integral) or \
            not 0 <= order <= 5:
        raise RuntimeError(f"{name}: spline order not supported: order must be an integer in "
                           f"0..5, got {order!r}")
    return int(order)


def _check_mode(name: str, mode: Any) -> str:
    if mode not in _MODES:
        raise ValueError(f"{name}: mode must be one of {sorted(_MODES)}, got {mode!r}")
    return mode


def _output_dtype(name: str, output: Any, default: numpy.dtype) -> numpy.dtype:
    """The dtype ``output`` asks for (None: ``default``). An array cannot be written into."""
    if output is None:
        return default
    if isinstance(output, type | numpy.dtype | str):
        return numpy.dtype(output)
    if hasattr(output, "shape"):
        raise TypeError(f"{name}: output= as an array is not supported (arrays are immutable); "
                        "pass a dtype or use the return value")
    return numpy.dtype(output)


def _work_dtype(dt: numpy.dtype) -> numpy.dtype:
    """The dtype the splines are computed in: float32/complex64 stay, the rest float64."""
    if dt in (numpy.float32, numpy.complex64):
        return dt
    return numpy.dtype(numpy.complex128 if dt.kind == "c" else numpy.float64)


def _filter_axis(x: Any, order: int, axis: int, mode: str) -> Any:
    n = get_aval(x).shape[axis]
    if n == 0:
        return x
    aval = get_aval(x)
    m = _filter_matrix(n, order, mode).astype(numpy.dtype(aval.dtype).type(0).real.dtype)
    m = device_put(m, aval.device or get_default_device())
    return fnp.moveaxis(fnp.tensordot(m, x, axes=([1], [axis])), 0, axis)


def spline_filter1d(input: Any, order: int = 3, axis: int = -1,  # noqa: A002
                    output: Any = numpy.float64, mode: str = "mirror") -> Any:
    """The B-spline coefficients of ``input`` along ``axis`` (SciPy's prefilter of
    ``map_coordinates`` and friends), for the boundary ``mode``. Orders 0 and 1 copy the
    input. The result has dtype ``output`` (float64 by default, as SciPy); complex input gives
    complex coefficients. Linear, so differentiable; works under ``jit`` and ``vmap``.

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> fnd.spline_filter1d(np.array([0.0, 1.0, 0.0, 0.0]), order=3)
        array([-0.93333333,  1.86666667, -0.53333333,  0.26666667])
    """
    name = "spline_filter1d"
    order = _check_order(name, order)
    mode = _check_mode(name, mode)
    x = fnp.asarray(input)
    aval = get_aval(x)
    target = _output_dtype(name, output, numpy.dtype(numpy.float64))
    if aval.dtype.kind == "c" and target.kind != "c":
        target = numpy.result_type(target, numpy.complex64)
    if aval.ndim == 0:
        raise ValueError(f"{name}: input must have at least one dimension")
    ax = axis + aval.ndim if axis < 0 else axis
    if not 0 <= ax < aval.ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of dimension "
                         f"{aval.ndim}")
    work = x.astype(_work_dtype(numpy.result_type(aval.dtype, target)))
    if order > 1:
        work = _filter_axis(work, order, ax, mode)
    return work.astype(target)


def spline_filter(input: Any, order: int = 3, output: Any = numpy.float64,  # noqa: A002
                  mode: str = "mirror") -> Any:
    """:func:`spline_filter1d` along every axis: the n-D B-spline coefficients (SciPy's;
    orders 2-5).

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> fnd.spline_filter(np.eye(3), order=2).round(6)
        array([[ 2.263889, -1.125   ,  0.486111],
               [-1.125   ,  2.375   , -1.125   ],
               [ 0.486111, -1.125   ,  2.263889]])
    """
    name = "spline_filter"
    order = _check_order(name, order)
    if order < 2:
        raise RuntimeError(f"{name}: spline order not supported: order must be in 2..5 "
                           f"(SciPy's), got {order}")
    mode = _check_mode(name, mode)
    x = fnp.asarray(input)
    aval = get_aval(x)
    target = _output_dtype(name, output, numpy.dtype(numpy.float64))
    if aval.dtype.kind == "c" and target.kind != "c":
        target = numpy.result_type(target, numpy.complex64)
    work = x.astype(_work_dtype(numpy.result_type(aval.dtype, target)))
    for ax in range(aval.ndim):
        work = _filter_axis(work, order, ax, mode)
    return work.astype(target)


def _coefficients(name: str, x: Any, order: int, mode: str, cval: Any,
                  prefilter: bool) -> tuple[Any, int]:
    """(the array interpolated -- the spline coefficients when prefiltering, in the work
    dtype -- and the padding added in front of each axis). As SciPy, ``'nearest'`` and
    ``'grid-constant'`` pad 12 samples (edge / ``cval``) before filtering with their own
    boundary condition: their exact one is not a recursive-filter initialisation."""
    if not (prefilter and order > 1):
        return x, 0
    npad = 0
    if mode in ("nearest", "grid-constant"):
        npad = 12
        widths = [(npad, npad)] * get_aval(x).ndim
        x = fnp.pad(x, widths, mode="edge") if mode == "nearest" else \
            fnp.pad(x, widths, mode="constant", constant_values=cval)
    for ax in range(get_aval(x).ndim):
        x = _filter_axis(x, order, ax, mode)
    return x, npad


def _bspline(t: Any, order: int) -> Any:
    """The centred B-spline of degree ``order`` at ``t`` (the weight of a coefficient at
    distance ``t``), by its truncated-power form (exact to rounding for ``|t| <= 3``)."""
    h = (order + 1) / 2.0
    out = None
    for k in range(order + 2):
        u = fnp.maximum(t + h - k, 0.0)
        term = (-1) ** k * math.comb(order + 1, k) * u ** order
        out = term if out is None else out + term
    return out / math.factorial(order)


def _interpolate(name: str, x: Any, coords: list[Any], order: int, mode: str, cval: Any,
                 npad: int, out_dt: numpy.dtype) -> Any:
    """Sample the (filtered, padded by ``npad``) array ``x`` at ``coords`` (one float array per
    axis, of one shape; in the unpadded frame) as SciPy's ``NI_GeometricTransform``."""
    shape = get_aval(x).shape
    work_dt = get_aval(x).dtype
    real_dt = numpy.dtype(work_dt).type(0).real.dtype
    outside = None
    per_dim = []
    for c, n in zip(coords, shape):
        c = c.astype(real_dt) + npad
        if mode == "constant":
            bad = (c < 0) | (c > n - 1)
            outside = bad if outside is None else outside | bad
            c = fnp.where(bad, 0.0, c)
        elif mode == "wrap":
            c = _wrap_coordinate(c, n)
        elif mode in _COORDINATE_MAPS:
            c = _map_coordinate(c, n, mode)
        nodes = []
        if order == 0:
            nodes = [(fnp.floor(c + 0.5).astype(numpy.int64), None)]
        else:
            start = fnp.floor(c) if order % 2 else fnp.floor(c + 0.5)
            start = start - order // 2
            weights = [1.0 - (c - start)] if order == 1 else \
                [_bspline(c - (start + j), order) for j in range(order)]
            # the last weight makes the sum 1, as SciPy's (its rounding, at exact ties)
            weights.append(1.0 - functools.reduce(operator.add, weights))
            nodes = [((start + j).astype(numpy.int64), w) for j, w in enumerate(weights)]
        fixed = []
        for idx, w in nodes:
            valid = ((idx >= 0) & (idx < n)) if mode == "grid-constant" else None
            fix = _FIXERS[mode] if order < 2 else _SPLINE_FIXERS[mode]
            fixed.append((fix(idx, n), valid, w))
        per_dim.append(fixed)

    # Gathers from the flattened array with fnp.take: a host (NumPy) input indexed by traced
    # coordinates (under jit or vmap) must go through funcgrad's gather, not NumPy indexing.
    flat = fnp.reshape(x, (-1,))
    strides = [int(numpy.prod(shape[d + 1:], dtype=numpy.int64)) for d in range(len(shape))]
    cv = fnp.asarray(cval).astype(work_dt)
    result = None
    for combo in itertools.product(*per_dim):
        idxs, valids, weights = zip(*combo)
        vals = fnp.take(flat, functools.reduce(
            operator.add, [i * st for i, st in zip(idxs, strides)]))
        checks = [v for v in valids if v is not None]
        if checks:
            vals = fnp.where(functools.reduce(operator.and_, checks), vals, cv)
        # value times each axis' weight in turn, as SciPy's loop multiplies
        term = functools.reduce(operator.mul, [w.astype(work_dt) for w in weights
                                               if w is not None], vals)
        result = term if result is None else result + term
    if outside is not None:
        result = fnp.where(outside, cv, result)
    if out_dt.kind in "iu":
        result = _round_half_away(result)
        if out_dt.kind == "u" or out_dt.itemsize < 8:
            info = numpy.iinfo(out_dt)
            result = fnp.clip(result, info.min, info.max)
    elif out_dt.kind == "b":
        result = fnp.trunc(result) != 0  # C's cast via an integer: truncated
    return result.astype(out_dt)


def _prepare(name: str, input: Any, order: Any, mode: Any, output: Any,  # noqa: A002
             ) -> tuple[Any, int, str, numpy.dtype]:
    order = _check_order(name, order)
    mode = _check_mode(name, mode)
    x = fnp.asarray(input)
    aval = get_aval(x)
    if aval.ndim == 0:
        raise RuntimeError(f"{name}: input and output rank must be > 0")
    if any(n == 0 for n in aval.shape):
        raise ValueError(f"{name}: input has a zero-size dimension: {aval.shape}")
    out_dt = _output_dtype(name, output, numpy.dtype(aval.dtype))
    return x, order, mode, out_dt


def _run(name: str, x: Any, coords: list[Any], order: int, mode: str, cval: Any,
         prefilter: bool, out_dt: numpy.dtype, coord_dt: numpy.dtype) -> Any:
    xdt = get_aval(x).dtype
    work = numpy.dtype(numpy.result_type(_work_dtype(numpy.dtype(xdt)), coord_dt)) \
        if xdt.kind != "c" else _work_dtype(numpy.dtype(xdt))
    if order < 2 and xdt.kind in "fc":
        work = numpy.dtype(numpy.result_type(xdt, coord_dt))
    if get_aval(fnp.asarray(cval)).dtype.kind == "c" and work.kind != "c":
        work = numpy.result_type(work, numpy.complex64)
        out_dt = numpy.result_type(out_dt, numpy.complex64)
    filt, npad = _coefficients(name, x.astype(work), order, mode, cval, prefilter)
    return _interpolate(name, filt, coords, order, mode, cval, npad, out_dt)


def _float_dtype(*arrays: Any) -> numpy.dtype:
    dts = [get_aval(a).dtype for a in arrays]
    if any(d.kind == "c" for d in dts):
        raise TypeError("complex coordinates are not supported")
    return numpy.dtype(numpy.result_type(*dts, numpy.float32))


def map_coordinates(input: Any, coordinates: Sequence[Any], order: int = 3,  # noqa: A002
                    output: Any = None, mode: str = "constant", cval: Any = 0.0,
                    prefilter: bool = True) -> Any:
    """Sample ``input`` at ``coordinates`` (one array per dimension of ``input``, all of one
    shape, or one array whose first axis runs over them) by a B-spline of degree ``order``
    (0: nearest, 1: linear, 2-5: spline of the prefiltered image; 3 by default, SciPy's).

    ``mode`` handles coordinates outside the array as SciPy: ``"constant"`` (``cval`` when a
    coordinate is outside ``[0, n - 1]``), ``"grid-constant"`` (samples outside are ``cval``
    and interpolation reaches them), ``"nearest"``, ``"wrap"`` (period ``n - 1``, SciPy's),
    ``"grid-wrap"`` (period ``n``), ``"mirror"``, ``"reflect"``/``"grid-mirror"``.
    ``prefilter=False`` interpolates ``input`` as spline coefficients (already filtered by
    :func:`spline_filter`). ``output`` is a dtype (default: the input's); integer results are
    rounded half away from zero (unsigned and narrow ones clipped to their range, as SciPy).

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> img = np.arange(12.0).reshape(3, 4)
        >>> fnd.map_coordinates(img, [np.array([0.5, 2.0]), np.array([1.5, 3.0])], order=1)
        array([ 3.5, 11. ])
        >>> fnd.map_coordinates(np.array([0.0, 1.0, 4.0, 9.0]), [np.array([1.5])])  # cubic
        array([2.])
    """
    name = "map_coordinates"
    x, order, mode, out_dt = _prepare(name, input, order, mode, output)
    shape = get_aval(x).shape
    if hasattr(coordinates, "shape") or isinstance(coordinates, Tracer):
        carr = fnp.asarray(coordinates)
        if get_aval(carr).ndim == 0:
            raise ValueError(f"{name}: coordinates must have one array per dimension of input "
                             f"({len(shape)}), got a scalar")
        coords = [carr[i] for i in range(get_aval(carr).shape[0])]
    else:
        coords = [fnp.asarray(c) for c in coordinates]
    if len(coords) != len(shape):
        raise ValueError(f"{name}: coordinates must have one array per dimension of input "
                         f"({len(shape)}), got {len(coords)}")
    cdt = _float_dtype(*coords)
    cshape = numpy.broadcast_shapes(*[get_aval(c).shape for c in coords])
    coords = [fnp.broadcast_to(c.astype(cdt), cshape) for c in coords]
    x, coords = _on_one_device(x, coords)
    return _run(name, x, coords, order, mode, cval, prefilter, out_dt, cdt)


def _on_one_device(x: Any, coords: list[Any]) -> tuple[Any, list[Any]]:
    """The image and its coordinates on one device: host data (NumPy arrays, lists) goes to
    the device of the device arrays among them, as funcgrad's operations move a host operand
    (the interpolation combines them with array operators, which CuPy refuses to mix)."""
    devices = {get_aval(v).device for v in (x, *coords)} - {"cpu", None}
    if len(devices) != 1:
        return x, coords   # all on the host, or two devices (the operations name them)
    (device,) = devices

    def move(v: Any) -> Any:
        return v if isinstance(v, Tracer) or get_aval(v).device == device else \
            device_put(v, device)

    return move(x), [move(c) for c in coords]


def _static_shape(name: str, output_shape: Any, default: tuple[int, ...]) -> tuple[int, ...]:
    if output_shape is None:
        return default
    if isinstance(output_shape, numbers.Integral):
        output_shape = (output_shape,)
    return tuple(int(n) for n in output_shape)


def _on_device_of(x: Any, v: Any) -> Any:
    """``v`` (host data, or an array) on ``x``'s device: host constants must not meet device
    arrays silently."""
    if isinstance(v, Tracer):
        return v
    return device_put(v, get_aval(x).device or get_default_device())


def _grid(x: Any, shape: tuple[int, ...], dt: numpy.dtype) -> list[Any]:
    """The output's index coordinates, one array per axis (sparse: broadcast on use), on
    ``x``'s device."""
    grids = []
    for d, n in enumerate(shape):
        g = numpy.arange(n, dtype=dt).reshape([n if e == d else 1 for e in range(len(shape))])
        grids.append(_on_device_of(x, g))
    return grids


def affine_transform(input: Any, matrix: Any, offset: Any = 0.0,  # noqa: A002
                     output_shape: Any = None, output: Any = None, order: int = 3,
                     mode: str = "constant", cval: Any = 0.0, prefilter: bool = True) -> Any:
    """``output[o] = input[matrix @ o + offset]`` (the pull-back: ``matrix`` maps output
    indices to input coordinates), interpolated as :func:`map_coordinates`. ``matrix`` is
    ``(ndim, ndim)``, a diagonal as ``(ndim,)``, or homogeneous ``(ndim, ndim + 1)`` /
    ``(ndim + 1, ndim + 1)`` (its last column is the offset). Differentiable in ``input``,
    ``matrix`` and ``offset``; ``output_shape`` (default: the input's) is static.

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> fnd.affine_transform(np.arange(5.0), np.array([[0.5]]), order=1)
        array([0. , 0.5, 1. , 1.5, 2. ])
    """
    name = "affine_transform"
    x, order, mode, out_dt = _prepare(name, input, order, mode, output)
    ndim = get_aval(x).ndim
    oshape = _static_shape(name, output_shape, get_aval(x).shape)
    m = fnp.asarray(matrix)
    mshape = get_aval(m).shape
    if len(mshape) not in (1, 2) or mshape[0] < 1:
        raise RuntimeError(f"{name}: no proper affine matrix provided: shape {mshape}")
    off = fnp.asarray(offset)
    if len(mshape) == 2 and mshape[1] == ndim + 1 and mshape[0] in (ndim, ndim + 1):
        if mshape[0] == ndim + 1 and not isinstance(m, Tracer):
            bottom = numpy.asarray(fnp.asarray(m[ndim]).tolist())
            expected = [0] * ndim + [1]
            if not numpy.all(bottom == expected):
                raise ValueError(f"{name}: expected a homogeneous transformation matrix with "
                                 f"shape {mshape} for image shape {get_aval(x).shape}, but "
                                 f"its bottom row was not {expected}")
        off = m[:ndim, ndim]
        m = m[:ndim, :ndim]
        mshape = get_aval(m).shape
    if mshape[0] != ndim:
        raise RuntimeError(f"{name}: affine matrix has wrong number of rows: {mshape[0]}, "
                           f"input has {ndim} dimensions")
    if len(mshape) == 2 and mshape[1] != len(oshape):
        raise RuntimeError(f"{name}: affine matrix has wrong number of columns: {mshape[1]}, "
                           f"output has {len(oshape)} dimensions")
    if len(mshape) == 1 and len(oshape) != ndim:
        raise RuntimeError(f"{name}: a diagonal matrix needs an output of rank {ndim}")
    if get_aval(off).ndim == 0:
        off = fnp.broadcast_to(off, (ndim,))
    if get_aval(off).shape != (ndim,):
        raise RuntimeError(f"{name}: offset must be a scalar or have {ndim} elements, got shape "
                           f"{get_aval(off).shape}")
    cdt = _float_dtype(m, off)
    if get_aval(x).dtype == numpy.float32 and cdt == numpy.float32:
        cdt = numpy.dtype(numpy.float32)
    else:
        cdt = numpy.dtype(numpy.float64)
    m, off = _on_device_of(x, m.astype(cdt)), _on_device_of(x, off.astype(cdt))
    grid = _grid(x, oshape, cdt)
    coords = []
    for i in range(ndim):
        if len(mshape) == 1:
            # SciPy's zoom_shift: (o + offset / m) * m
            c = (grid[i] + off[i] / m[i]) * m[i]
        else:
            # summed as SciPy's C loop (offset first), for its rounding at exact ties
            c = functools.reduce(operator.add, [grid[j] * m[i, j] for j in range(len(oshape))],
                                 off[i])
        coords.append(fnp.broadcast_to(c, oshape))
    return _run(name, x, coords, order, mode, cval, prefilter, out_dt, cdt)


def _per_axis(name: str, what: str, value: Any, ndim: int) -> list[Any]:
    if hasattr(value, "shape") and get_aval(fnp.asarray(value)).ndim > 0:
        v = fnp.asarray(value)
        if get_aval(v).shape != (ndim,):
            raise RuntimeError(f"{name}: {what} must have one value per axis ({ndim}), got "
                               f"shape {get_aval(v).shape}")
        return [v[i] for i in range(ndim)]
    if isinstance(value, str) or not isinstance(value, Sequence):
        return [value] * ndim
    if len(value) != ndim:
        raise RuntimeError(f"{name}: {what} must have one value per axis ({ndim}), got "
                           f"{len(value)}")
    return list(value)


def shift(input: Any, shift: Any, output: Any = None, order: int = 3,  # noqa: A002
          mode: str = "constant", cval: Any = 0.0, prefilter: bool = True) -> Any:
    """Shift ``input`` by ``shift`` (one value, or one per axis): ``output[o] =
    input[o - shift]``, interpolated as :func:`map_coordinates`. Differentiable in ``input``
    and ``shift``.

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> fnd.shift(np.array([1.0, 2.0, 3.0, 4.0]), 1.5, order=1, mode="nearest")
        array([1. , 1. , 1.5, 2.5])
    """
    name = "shift"
    x, order, mode, out_dt = _prepare(name, input, order, mode, output)
    oshape = get_aval(x).shape
    shifts = [_on_device_of(x, fnp.asarray(s))
              for s in _per_axis(name, "shift", shift, len(oshape))]
    cdt = _float_dtype(*shifts)
    if not (get_aval(x).dtype == numpy.float32 and cdt == numpy.float32):
        cdt = numpy.dtype(numpy.float64)
    grid = _grid(x, oshape, cdt)
    coords = [fnp.broadcast_to(g - s.astype(cdt), oshape) for g, s in zip(grid, shifts)]
    return _run(name, x, coords, order, mode, cval, prefilter, out_dt, cdt)


def zoom(input: Any, zoom: Any, output: Any = None, order: int = 3,  # noqa: A002
         mode: str = "constant", cval: Any = 0.0, prefilter: bool = True, *,
         grid_mode: bool = False) -> Any:
    """Resize ``input`` by ``zoom`` (one factor, or one per axis; static): the output has
    ``round(n * zoom)`` samples per axis and maps its first and last samples onto the input's
    (``grid_mode=True``: the outer *edges* of the pixels line up instead, as an image resize
    does -- use it with ``"grid-constant"``/``"grid-wrap"`` modes, SciPy warns otherwise).
    Interpolated as :func:`map_coordinates`; differentiable in ``input``.

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> fnd.zoom(np.array([0.0, 1.0, 2.0]), 5 / 3, order=1)
        array([0. , 0.5, 1. , 1.5, 2. ])
    """
    name = "zoom"
    x, order, mode, out_dt = _prepare(name, input, order, mode, output)
    ishape = get_aval(x).shape
    factors = _per_axis(name, "zoom", zoom, len(ishape))
    if any(isinstance(z, Tracer) for z in factors):
        raise TypeError(f"{name}: zoom must be concrete (it fixes the output shape), not a "
                        "traced value")
    factors = [float(numpy.asarray(z.tolist() if hasattr(z, "tolist") else z))
               for z in factors]
    oshape = tuple(int(round(n * z)) for n, z in zip(ishape, factors))
    if grid_mode and mode in ("constant", "wrap"):
        import warnings
        suggest = "grid-constant" if mode == "constant" else "grid-wrap"
        warnings.warn(f"It is recommended to use mode = {suggest} instead of {mode} when "
                      "grid_mode is True.", stacklevel=2)
    if all(z == 1 for z in factors) and prefilter:
        # SciPy's early exit (gh-20999): the input itself, in the output dtype
        return x.astype(out_dt)
    cdt = numpy.dtype(numpy.float32 if get_aval(x).dtype == numpy.float32 else numpy.float64)
    coords = []
    for d, (n_in, n_out) in enumerate(zip(ishape, oshape)):
        num, den = (n_in, n_out) if grid_mode else (n_in - 1, n_out - 1)
        ratio = num / den if den != 0 else 1.0
        g = numpy.arange(n_out, dtype=numpy.float64)
        g = (g + 0.5) * ratio - 0.5 if grid_mode else g * ratio
        g = g.reshape([n_out if e == d else 1 for e in range(len(ishape))]).astype(cdt)
        coords.append(fnp.broadcast_to(_on_device_of(x, g), oshape))
    return _run(name, x, coords, order, mode, cval, prefilter, out_dt, cdt)


# Cephes' sindg/cosdg (SciPy's rotate uses them): the angle reduced to an octant in degrees,
# then a polynomial. math.sin(math.radians(a)) differs in the last bit for most angles, which
# moves order-0 samples at exact ties.
_SIN_COEF = (1.58962301572218447952E-10, -2.50507477628503540135E-8, 2.75573136213856773549E-6,
             -1.98412698295895384658E-4, 8.33333333332211858862E-3, -1.66666666666666307295E-1)
_COS_COEF = (1.13678171382044553091E-11, -2.08758833757683644217E-9, 2.75573155429816611547E-7,
             -2.48015872936186303776E-5, 1.38888888888806666760E-3, -4.16666666666666348141E-2,
             4.99999999999999999798E-1)
_PI180 = 1.74532925199432957692E-2


def _degrees_trig(x: float, cos: bool) -> float:
    if not math.isfinite(x) or abs(x) > 1.0e14:
        return math.cos(math.radians(x)) if cos else math.sin(math.radians(x))
    sign = 1.0
    if x < 0:
        x = -x
        sign = 1.0 if cos else -1.0
    y = math.floor(x / 45.0)
    j = int(y - 16.0 * math.floor(y / 16.0))
    if j & 1:  # odd octant: measured from the next multiple of 90
        j += 1
        y += 1.0
    j &= 7
    if j > 3:
        sign, j = -sign, j - 4
    if cos and j > 1:
        sign = -sign
    z = (x - y * 45.0) * _PI180
    zz = z * z
    if (j in (1, 2)) != cos:
        r = 1.0 - zz * functools.reduce(lambda a, v: a * zz + v, _COS_COEF)
    else:
        r = z + z * (zz * functools.reduce(lambda a, v: a * zz + v, _SIN_COEF))
    return -r if sign < 0 else r


def _cosdg_sindg(angle: float) -> tuple[float, float]:
    """cos and sin of ``angle`` degrees, bit for bit SciPy's ``cosdg``/``sindg``."""
    return _degrees_trig(angle, True), _degrees_trig(angle, False)


def rotate(input: Any, angle: float, axes: Sequence[int] = (1, 0),  # noqa: A002
           reshape: bool = True, output: Any = None, order: int = 3, mode: str = "constant",
           cval: Any = 0.0, prefilter: bool = True) -> Any:
    """Rotate ``input`` by ``angle`` degrees (static) in the plane of ``axes`` about its
    centre; ``reshape=True`` enlarges the output to hold the whole rotated input. Other axes
    are carried along (each plane rotated alike). Interpolated as :func:`map_coordinates`;
    differentiable in ``input``.

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> fnd.rotate(np.arange(6.0).reshape(2, 3), 90, order=1)
        array([[2., 5.],
               [1., 4.],
               [0., 3.]])
    """
    name = "rotate"
    x, order, mode, out_dt = _prepare(name, input, order, mode, output)
    ishape = get_aval(x).shape
    ndim = len(ishape)
    if ndim < 2:
        raise ValueError(f"{name}: input array should be at least 2D, got shape {ishape}")
    axes = list(axes)
    if len(axes) != 2:
        raise ValueError(f"{name}: axes should contain exactly two values, got {axes}")
    if not all(float(ax).is_integer() for ax in axes):
        raise ValueError(f"{name}: axes should contain only integer values, got {axes}")
    axes = [int(ax) + ndim if ax < 0 else int(ax) for ax in axes]
    if any(ax < 0 or ax >= ndim for ax in axes) or axes[0] == axes[1]:
        raise ValueError(f"{name}: invalid rotation plane specified: {axes}")
    axes.sort()
    if isinstance(angle, Tracer):
        raise TypeError(f"{name}: angle must be concrete (it fixes the output shape), not a "
                        "traced value; use affine_transform for a traced rotation")
    c, s = _cosdg_sindg(float(angle))
    rot = numpy.array([[c, s], [-s, c]])
    in_plane = numpy.array([ishape[axes[0]], ishape[axes[1]]])
    if reshape:
        iy, ix = in_plane
        bounds = rot @ numpy.array([[0, 0, iy, iy], [0, ix, 0, ix]])
        out_plane = (numpy.ptp(bounds, axis=1) + 0.5).astype(int)
    else:
        out_plane = in_plane
    out_center = rot @ ((out_plane - 1) / 2)
    offset = (in_plane - 1) / 2 - out_center
    oshape = list(ishape)
    oshape[axes[0]], oshape[axes[1]] = int(out_plane[0]), int(out_plane[1])
    if any(n == 0 for n in oshape):
        return fnp.zeros(tuple(oshape), out_dt)
    plane_shape = (int(out_plane[0]), int(out_plane[1]))

    def one_plane(p: Any) -> Any:
        return affine_transform(p, rot, offset, plane_shape, output=out_dt, order=order,
                                mode=mode, cval=cval, prefilter=prefilter)

    if ndim == 2:
        return one_plane(x)
    # SciPy rotates plane by plane (the prefilter runs along the plane's axes only): the
    # planes mapped over
    moved = fnp.moveaxis(x, axes, (-2, -1))
    batch = get_aval(moved).shape[:-2]
    planes = fnp.reshape(moved, (-1, *get_aval(moved).shape[-2:]))
    out = fnp.reshape(vmap(one_plane)(planes), (*batch, *plane_shape))
    return fnp.moveaxis(out, (-2, -1), axes)
