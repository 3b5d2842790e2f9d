"""The filters of ``scipy.ndimage``: correlation and convolution (1-D and n-D), Gaussian,
uniform, minimum/maximum, median/rank/percentile, and the derivative filters built on them
(``sobel``, ``prewitt``, ``laplace``, ``gaussian_laplace``, ``gaussian_gradient_magnitude``).

Each pads the input by the boundary mode (SciPy's names, mapped onto ``numpy.pad``'s in
:data:`_PAD_MODES`) and combines shifted slices of it, so everything is differentiable in the
input (and, for ``correlate``/``convolve``, in the weights) and works under ``jit`` and
``vmap``. Sizes, sigmas, footprints and origins are static (they fix the shapes). As SciPy,
the result has the input's dtype: integer images are filtered in float64 and truncated
towards zero (C's cast, as SciPy), float32 stays float32.

Example:
    >>> import numpy as np, funcgrad.scipy.ndimage as fnd
    >>> fnd.uniform_filter1d(np.array([0.0, 3.0, 6.0, 9.0]), 3)
    array([1., 3., 6., 8.])
"""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Sequence
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device
from funcgrad.core import Tracer

__all__ = [
    "correlate1d", "convolve1d", "correlate", "convolve", "gaussian_filter1d",
    "gaussian_filter", "uniform_filter1d", "uniform_filter", "minimum_filter1d",
    "maximum_filter1d", "minimum_filter", "maximum_filter", "median_filter", "rank_filter",
    "percentile_filter", "sobel", "prewitt", "laplace", "gaussian_laplace",
    "gaussian_gradient_magnitude",
]

# SciPy's boundary modes as numpy.pad's ('reflect' repeats the edge sample, 'mirror' does not).
_PAD_MODES = {
    "reflect": "symmetric", "grid-mirror": "symmetric", "mirror": "reflect",
    "nearest": "edge", "wrap": "wrap", "grid-wrap": "wrap", "constant": "constant",
    "grid-constant": "constant",
}


def _check_output(name: str, output: Any) -> Any:
    """The dtype ``output`` asks for (None: the input's). An array cannot be written into."""
    if output is None:
        return None
    if isinstance(output, type | numpy.dtype | str):
        return numpy.dtype(output)
    if hasattr(output, "shape"):
        raise TypeError(f"{name}: output= as an array is not supported (arrays are immutable); "
                        "pass a dtype or use the return value")
    return numpy.dtype(output)


def _prepare(name: str, input: Any) -> tuple[Any, numpy.dtype]:  # noqa: A002
    """(the input in the dtype the filter computes in, the dtype of the result)."""
    x = fnp.asarray(input)
    dt = get_aval(x).dtype
    if dt.kind == "c":
        raise TypeError(f"{name}: complex input is not supported")
    work = x if dt.kind == "f" and dt.itemsize >= 4 else x.astype(numpy.float64)
    return work, dt


def _finish(out: Any, dt: numpy.dtype, output: numpy.dtype | None) -> Any:
    target = dt if output is None else output
    if target.kind in "iub" and target != get_aval(out).dtype:
        # C's float -> integer cast, as SciPy's filters: towards zero.
        out = fnp.trunc(out) if target.kind != "b" else out != 0
    return out.astype(target)


def _mode(name: str, mode: str) -> str:
    if mode not in _PAD_MODES:
        raise ValueError(f"{name}: mode must be one of {sorted(_PAD_MODES)}, got {mode!r}")
    return _PAD_MODES[mode]


def _per_axis(name: str, what: str, value: Any, n: int) -> list[Any]:
    """A scalar for every axis, or a sequence of ``n`` (SciPy's ``_normalize_sequence``)."""
    if isinstance(value, str) or not isinstance(value, Sequence | numpy.ndarray):
        return [value] * n
    value = list(value)
    if len(value) != n:
        raise ValueError(f"{name}: {what} must be a scalar or have one entry per filtered "
                         f"axis ({n}), got {len(value)}")
    return value


def _axes(name: str, axes: Any, ndim: int) -> list[int]:
    if axes is None:
        return list(range(ndim))
    if isinstance(axes, numbers.Integral):
        axes = (axes,)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"{name}: axis {a} is out of bounds for an input of dimension "
                             f"{ndim}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: axes must be unique, got {tuple(axes)}")
    return out


def _axis(name: str, axis: int, ndim: int) -> int:
    return _axes(name, (axis,), ndim)[0]


def _pad(x: Any, widths: list[tuple[int, int]], pad_mode: str, cval: Any) -> Any:
    if all(w == (0, 0) for w in widths):
        return x
    if pad_mode == "constant":
        return fnp.pad(x, widths, mode="constant", constant_values=cval)
    return fnp.pad(x, widths, mode=pad_mode)


def _center(name: str, size: int, origin: int) -> int:
    """The index of the filter's center: ``size // 2 + origin``, inside the filter."""
    c = size // 2 + int(origin)
    if not 0 <= c < size:
        raise ValueError(f"{name}: invalid origin {origin} for a filter of size {size} (the "
                         f"center size // 2 + origin must be inside it)")
    return c


def _window_slices(xp: Any, shape: tuple[int, ...], offsets: tuple[int, ...]) -> Any:
    """The part of the padded ``xp`` that lines up with the output at kernel ``offsets``."""
    return xp[tuple(slice(o, o + n) for o, n in zip(offsets, shape))]


def _correlate_axis(x: Any, weights: Any, axis: int, pad_mode: str, cval: Any,
                    origin: int, name: str) -> Any:
    """``out[i] = sum_j w[j] x[i + j - c]`` along ``axis`` (``c`` the center), ``x`` extended
    by the mode: one gather of the windows and a contraction with the weights."""
    size = get_aval(weights).shape[0] if not isinstance(weights, numpy.ndarray) else \
        weights.shape[0]
    c = _center(name, size, origin)
    shape = get_aval(x).shape
    n = shape[axis]
    widths = [(0, 0)] * len(shape)
    widths[axis] = (c, size - 1 - c)
    xp = _pad(x, widths, pad_mode, cval)
    idx = numpy.arange(n)[:, None] + numpy.arange(size)[None, :]
    windows = fnp.take(xp, idx, axis=axis)  # the axis becomes (n, size)
    if isinstance(weights, numpy.ndarray):
        # Host weights go where the input is (a device input refuses host operands).
        w = device_put(weights.astype(get_aval(x).dtype),
                       get_aval(x).device or get_default_device())
    else:
        w = fnp.asarray(weights).astype(get_aval(x).dtype)
    return fnp.tensordot(windows, w, axes=([axis + 1], [0]))


def _weights_1d(name: str, weights: Any) -> Any:
    w = weights if isinstance(weights, Tracer) or hasattr(weights, "shape") else \
        numpy.asarray(weights, dtype=numpy.float64)
    shape = get_aval(w).shape if not isinstance(w, numpy.ndarray) else w.shape
    if len(shape) != 1 or shape[0] < 1:
        raise ValueError(f"{name}: weights must be a non-empty 1-D sequence, got shape {shape}")
    if isinstance(w, numpy.ndarray) and w.dtype.kind not in "fiub":
        raise TypeError(f"{name}: weights must be real, got {w.dtype}")
    return w


def correlate1d(input: Any, weights: Any, axis: int = -1, output: Any = None,  # noqa: A002
                mode: str = "reflect", cval: float = 0.0, origin: int = 0) -> Any:
    """One-dimensional correlation along ``axis``: ``out[i] = sum_j w[j] x[i + j - c]``,
    ``c = len(w) // 2 + origin``, with ``x`` extended by ``mode`` (``"reflect"`` (the edge
    sample repeated), ``"mirror"``, ``"nearest"``, ``"wrap"``, ``"constant"`` (``cval``), and
    the ``grid-`` aliases). Differentiable in ``input`` and ``weights``.

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> fnd.correlate1d(np.array([2.0, 8.0, 0.0, 4.0, 1.0]), [1.0, 3.0])
        array([ 8., 26.,  8., 12.,  7.])
    """
    out_dt = _check_output("correlate1d", output)
    x, dt = _prepare("correlate1d", input)
    w = _weights_1d("correlate1d", weights)
    ax = _axis("correlate1d", axis, get_aval(x).ndim)
    out = _correlate_axis(x, w, ax, _mode("correlate1d", mode), cval, origin, "correlate1d")
    return _finish(out, dt, out_dt)


def convolve1d(input: Any, weights: Any, axis: int = -1, output: Any = None,  # noqa: A002
               mode: str = "reflect", cval: float = 0.0, origin: int = 0) -> Any:
    """One-dimensional convolution along ``axis``: :func:`correlate1d` with the weights
    reversed (and the origin mirrored, as SciPy: one further for an even length).

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> fnd.convolve1d(np.array([2.0, 8.0, 0.0, 4.0, 1.0]), [1.0, 3.0])
        array([14., 24.,  4., 13.,  4.])
    """
    w = _weights_1d("convolve1d", weights)
    size = w.shape[0]
    origin = -int(origin) - (1 if size % 2 == 0 else 0)
    return correlate1d(input, w[::-1], axis, output, mode, cval, origin)


def _origins(name: str, origin: Any, ndim: int) -> list[int]:
    return [int(o) for o in _per_axis(name, "origin", origin, ndim)]


def _correlate_nd(name: str, x: Any, w: Any, pad_mode: str, cval: Any,
                  origins: list[int]) -> Any:
    """``out[i] = sum_k w[k] x[i + k - c]`` over every kernel position (entries known to be 0
    skipped), with ``x`` extended by the mode."""
    shape = get_aval(x).shape
    kshape = w.shape if isinstance(w, numpy.ndarray) else get_aval(w).shape
    centers = [_center(name, k, o) for k, o in zip(kshape, origins)]
    xp = _pad(x, [(c, k - 1 - c) for k, c in zip(kshape, centers)], pad_mode, cval)
    dt = get_aval(x).dtype
    out = None
    for k in itertools.product(*(range(s) for s in kshape)):
        if isinstance(w, numpy.ndarray):
            if w[k] == 0:
                continue
            wk: Any = dt.type(w[k])
        else:
            wk = w[k].astype(dt)
        term = _window_slices(xp, shape, k) * wk
        out = term if out is None else out + term
    return fnp.zeros_like(x) if out is None else out


def _weights_nd(name: str, weights: Any, ndim: int) -> Any:
    w = weights if isinstance(weights, Tracer) or (hasattr(weights, "shape") and not
                                                   isinstance(weights, numpy.ndarray)) \
        else numpy.asarray(weights, dtype=numpy.float64)
    shape = w.shape if isinstance(w, numpy.ndarray) else get_aval(w).shape
    if len(shape) != ndim:
        raise RuntimeError(f"{name}: the weights must have one dimension per input dimension "
                           f"({ndim}), got shape {shape}")
    if any(s == 0 for s in shape):
        raise ValueError(f"{name}: the weights must not be empty, got shape {shape}")
    return w


def correlate(input: Any, weights: Any, output: Any = None, mode: str = "reflect",  # noqa: A002
              cval: float = 0.0, origin: Any = 0) -> Any:
    """Multi-dimensional correlation with ``weights`` (one dimension per input dimension):
    ``out[i] = sum_k w[k] x[i + k - c]``, ``c = w.shape // 2 + origin`` (``origin`` a scalar
    or one per axis); ``mode`` as :func:`correlate1d`. Differentiable in ``input`` and
    ``weights``.

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> a = np.arange(9.0).reshape(3, 3)
        >>> fnd.correlate(a, np.array([[0.0, 1.0], [1.0, 0.0]]))
        array([[ 0.,  1.,  3.],
               [ 3.,  4.,  6.],
               [ 9., 10., 12.]])
    """
    out_dt = _check_output("correlate", output)
    x, dt = _prepare("correlate", input)
    nd = get_aval(x).ndim
    w = _weights_nd("correlate", weights, nd)
    out = _correlate_nd("correlate", x, w, _mode("correlate", mode), cval,
                        _origins("correlate", origin, nd))
    return _finish(out, dt, out_dt)


def convolve(input: Any, weights: Any, output: Any = None, mode: str = "reflect",  # noqa: A002
             cval: float = 0.0, origin: Any = 0) -> Any:
    """Multi-dimensional convolution: :func:`correlate` with the weights reversed along every
    axis (and each origin mirrored, one further along an axis of even length, as SciPy).

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> a = np.arange(9.0).reshape(3, 3)
        >>> fnd.convolve(a, np.array([[0.0, 1.0], [1.0, 0.0]]), mode="constant")
        array([[ 4.,  6.,  5.],
               [10., 12.,  8.],
               [ 7.,  8.,  0.]])
    """
    x = fnp.asarray(input)
    nd = get_aval(x).ndim
    w = _weights_nd("convolve", weights, nd)
    kshape = w.shape if isinstance(w, numpy.ndarray) else get_aval(w).shape
    origins = [-o - (1 if k % 2 == 0 else 0)
               for o, k in zip(_origins("convolve", origin, nd), kshape)]
    w = w[tuple(slice(None, None, -1) for _ in kshape)]
    return correlate(x, w, output, mode, cval, origins)


def _gaussian_kernel1d(sigma: float, order: int, radius: int) -> numpy.ndarray:
    """SciPy's: the normalised Gaussian on ``-radius..radius``, times the polynomial that
    gives its ``order``-th derivative."""
    if order < 0:
        raise ValueError("order must be non-negative")
    exponent_range = numpy.arange(order + 1)
    sigma2 = sigma * sigma
    x = numpy.arange(-radius, radius + 1)
    phi_x = numpy.exp(-0.5 / sigma2 * x ** 2)
    phi_x = phi_x / phi_x.sum()
    if order == 0:
        return phi_x
    q = numpy.zeros(order + 1)
    q[0] = 1
    d = numpy.diag(exponent_range[1:], 1)  # d @ q(x) = q'(x)
    p = numpy.diag(numpy.ones(order) / -sigma2, -1)  # p @ q(x) = q(x) * phi'(x) / phi(x)
    q_deriv = d + p
    for _ in range(order):
        q = q_deriv.dot(q)
    q = (x[:, None] ** exponent_range).dot(q)
    return q * phi_x


def _static_float(name: str, what: str, v: Any) -> float:
    if isinstance(v, Tracer):
        raise TypeError(f"{name}: {what} must be a concrete number (it fixes the filter's "
                        f"size), not a traced value")
    return float(v)


def _gaussian_weights(name: str, sigma: Any, order: int, truncate: float,
                      radius: Any) -> numpy.ndarray:
    sd = _static_float(name, "sigma", sigma)
    lw = int(truncate * sd + 0.5) if radius is None else radius
    if not isinstance(lw, numbers.Integral) or lw < 0:
        raise ValueError(f"{name}: radius must be a nonnegative integer, got {radius!r}")
    return _gaussian_kernel1d(sd, int(order), int(lw))[::-1]


def gaussian_filter1d(input: Any, sigma: float, axis: int = -1, order: int = 0,  # noqa: A002
                      output: Any = None, mode: str = "reflect", cval: float = 0.0,
                      truncate: float = 4.0, *, radius: int | None = None) -> Any:
    """One-dimensional Gaussian filter (``order > 0``: the derivatives of the Gaussian), on
    ``radius = int(truncate * sigma + 0.5)`` samples each side, as SciPy.

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> fnd.gaussian_filter1d(np.array([1.0, 2.0, 3.0, 4.0, 5.0]), 1.0).round(6)
        array([1.427041, 2.067822, 3.      , 3.932178, 4.572959])
    """
    w = _gaussian_weights("gaussian_filter1d", sigma, order, truncate, radius)
    return correlate1d(input, w, axis, output, mode, cval, 0)


def _separable(name: str, input: Any, output: Any, axes: Any,  # noqa: A002
               per_axis: dict[str, Any], apply: Any, keep: Any = None) -> Any:
    """Apply ``apply(x, axis, **params)`` along each axis in turn (params per axis)."""
    out_dt = _check_output(name, output)
    x, dt = _prepare(name, input)
    ax = _axes(name, axes, get_aval(x).ndim)
    params = {k: _per_axis(name, k, v, len(ax)) for k, v in per_axis.items()}
    target = dt if out_dt is None else out_dt
    for i, a in enumerate(ax):
        p = {k: v[i] for k, v in params.items()}
        if keep is not None and not keep(p):
            continue
        x = apply(x, a, **p)
        if target.kind in "iu":
            # SciPy writes each pass into the (integer) output and filters that further.
            x = fnp.trunc(x)
    return _finish(x, dt, out_dt)


def gaussian_filter(input: Any, sigma: Any, order: Any = 0, output: Any = None,  # noqa: A002
                    mode: Any = "reflect", cval: float = 0.0, truncate: float = 4.0, *,
                    radius: Any = None, axes: Any = None) -> Any:
    """Multi-dimensional Gaussian filter: :func:`gaussian_filter1d` along each axis (``sigma``,
    ``order``, ``mode``, ``radius`` a scalar or one per axis of ``axes``; axes with
    ``sigma <= 1e-15`` are left alone, as SciPy). Differentiable in ``input``.

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> img = np.zeros((3, 3)); img[1, 1] = 1.0
        >>> fnd.gaussian_filter(img, 1.0, mode="constant").round(4)
        array([[0.0586, 0.0965, 0.0586],
               [0.0965, 0.1592, 0.0965],
               [0.0586, 0.0965, 0.0586]])
    """
    def apply(x: Any, a: int, sigma: Any, order: Any, mode: str, radius: Any) -> Any:
        w = _gaussian_weights("gaussian_filter", sigma, order, truncate, radius)
        return _correlate_axis(x, w, a, _mode("gaussian_filter", mode), cval, 0,
                               "gaussian_filter")

    return _separable("gaussian_filter", input, output, axes,
                      {"sigma": sigma, "order": order, "mode": mode, "radius": radius}, apply,
                      keep=lambda p: _static_float("gaussian_filter", "sigma",
                                                   p["sigma"]) > 1e-15)


def _size(name: str, size: Any) -> int:
    if isinstance(size, Tracer) or int(size) != size or int(size) < 1:
        raise ValueError(f"{name}: size must be a positive integer, got {size!r}")
    return int(size)


def uniform_filter1d(input: Any, size: int, axis: int = -1, output: Any = None,  # noqa: A002
                     mode: str = "reflect", cval: float = 0.0, origin: int = 0) -> Any:
    """One-dimensional moving average of ``size`` samples (centered at
    ``size // 2 + origin``).

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> fnd.uniform_filter1d(np.array([1.0, 2.0, 6.0, 2.0]), 2)
        array([1. , 1.5, 4. , 4. ])
    """
    out_dt = _check_output("uniform_filter1d", output)
    x, dt = _prepare("uniform_filter1d", input)
    ax = _axis("uniform_filter1d", axis, get_aval(x).ndim)
    out = _mean_axis(x, _size("uniform_filter1d", size), ax,
                     _mode("uniform_filter1d", mode), cval, origin, "uniform_filter1d")
    return _finish(out, dt, out_dt)


def _mean_axis(x: Any, n: int, axis: int, pad_mode: str, cval: Any, origin: int,
               name: str) -> Any:
    # The window's sum, then one division: exact means stay exact (integer images).
    return _correlate_axis(x, numpy.ones(n), axis, pad_mode, cval, origin, name) / n


def uniform_filter(input: Any, size: Any = 3, output: Any = None,  # noqa: A002
                   mode: Any = "reflect", cval: float = 0.0, origin: Any = 0, *,
                   axes: Any = None) -> Any:
    """Multi-dimensional moving average: :func:`uniform_filter1d` along each axis (``size``,
    ``mode``, ``origin`` a scalar or one per axis; size-1 axes are left alone).

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> fnd.uniform_filter(np.arange(9.0).reshape(3, 3), 3, mode="nearest")
        array([[1.33333333, 2.        , 2.66666667],
               [3.33333333, 4.        , 4.66666667],
               [5.33333333, 6.        , 6.66666667]])
    """
    def apply(x: Any, a: int, size: Any, mode: str, origin: int) -> Any:
        return _mean_axis(x, _size("uniform_filter", size), a, _mode("uniform_filter", mode),
                          cval, origin, "uniform_filter")

    return _separable("uniform_filter", input, output, axes,
                      {"size": size, "mode": mode, "origin": origin}, apply,
                      keep=lambda p: _size("uniform_filter", p["size"]) > 1)


def _extreme_axis(x: Any, axis: int, size: int, pad_mode: str, cval: Any, origin: int,
                  name: str, take_max: bool) -> Any:
    c = _center(name, size, origin)
    shape = get_aval(x).shape
    widths = [(0, 0)] * len(shape)
    widths[axis] = (c, size - 1 - c)
    xp = _pad(x, widths, pad_mode, cval)
    idx = numpy.arange(shape[axis])[:, None] + numpy.arange(size)[None, :]
    windows = fnp.take(xp, idx, axis=axis)
    return (fnp.max if take_max else fnp.min)(windows, axis=axis + 1)


def minimum_filter1d(input: Any, size: int, axis: int = -1, output: Any = None,  # noqa: A002
                     mode: str = "reflect", cval: float = 0.0, origin: int = 0) -> Any:
    """One-dimensional minimum over windows of ``size`` samples.

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> fnd.minimum_filter1d(np.array([2.0, 8.0, 0.0, 4.0, 1.0]), 3)
        array([2., 0., 0., 0., 1.])
    """
    return _extreme_1d("minimum_filter1d", input, size, axis, output, mode, cval, origin, False)


def maximum_filter1d(input: Any, size: int, axis: int = -1, output: Any = None,  # noqa: A002
                     mode: str = "reflect", cval: float = 0.0, origin: int = 0) -> Any:
    """One-dimensional maximum over windows of ``size`` samples.

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> fnd.maximum_filter1d(np.array([2.0, 8.0, 0.0, 4.0, 1.0]), 3)
        array([8., 8., 8., 4., 4.])
    """
    return _extreme_1d("maximum_filter1d", input, size, axis, output, mode, cval, origin, True)


def _extreme_1d(name: str, input: Any, size: Any, axis: int, output: Any,  # noqa: A002
                mode: str, cval: Any, origin: int, take_max: bool) -> Any:
    out_dt = _check_output(name, output)
    x, dt = _prepare(name, input)
    ax = _axis(name, axis, get_aval(x).ndim)
    out = _extreme_axis(x, ax, _size(name, size), _mode(name, mode), cval, origin, name,
                        take_max)
    return _finish(out, dt, out_dt)


def _footprint(name: str, size: Any, footprint: Any, ndim: int,
               axes: list[int]) -> numpy.ndarray:
    """The footprint over ``axes`` as a boolean array (from ``size`` when not given)."""
    if footprint is None:
        if size is None:
            raise RuntimeError(f"{name}: no footprint or filter size provided")
        sizes = [_size(name, s) for s in _per_axis(name, "size", size, len(axes))]
        return numpy.ones(sizes, dtype=bool)
    if isinstance(footprint, Tracer):
        raise TypeError(f"{name}: footprint must be concrete (it fixes the filter's shape)")
    fp = numpy.asarray(footprint.get() if hasattr(footprint, "get") else footprint).astype(bool)
    if fp.ndim != len(axes):
        raise RuntimeError(f"{name}: the footprint must have one dimension per filtered axis "
                           f"({len(axes)}), got shape {fp.shape}")
    if not fp.any():
        raise ValueError(f"{name}: the footprint has no True element")
    return fp


def _windows_stack(name: str, x: Any, fp: numpy.ndarray, axes: list[int],
                   pad_modes: list[str], cval: Any, origins: list[int]) -> Any:
    """The input values under the footprint at every position, stacked on a new last axis;
    ``pad_modes``: one per filtered axis (all equal unless the footprint is a box)."""
    shape = get_aval(x).shape
    ndim = len(shape)
    full = fp.reshape([fp.shape[axes.index(d)] if d in axes else 1 for d in range(ndim)])
    centers = [0] * ndim
    for i, d in enumerate(axes):
        k = fp.shape[i]
        centers[d] = _center(name, k, origins[i])
    widths = [(centers[d], full.shape[d] - 1 - centers[d]) for d in range(ndim)]
    if len(set(pad_modes)) == 1:
        xp = _pad(x, widths, pad_modes[0], cval)
    else:
        # Axis by axis, each with its mode: the padding of one axis selects (or fills) whole
        # lines of the others, so over a box it gives what SciPy's separable 1-D passes give.
        xp = x
        for d, m in zip(axes, pad_modes):
            xp = _pad(xp, [widths[d] if e == d else (0, 0) for e in range(ndim)], m, cval)
    return fnp.stack([_window_slices(xp, shape, k) for k in zip(*numpy.nonzero(full))], axis=-1)


def _footprint_filter(name: str, input: Any, size: Any, footprint: Any,  # noqa: A002
                      output: Any, mode: Any, cval: Any, origin: Any, axes: Any,
                      reduce: Any, separable: bool = False) -> Any:
    out_dt = _check_output(name, output)
    x, dt = _prepare(name, input)
    nd = get_aval(x).ndim
    ax = _axes(name, axes, nd)
    fp = _footprint(name, size, footprint, nd, ax)
    if separable and footprint is None:
        # SciPy filters a box axis by axis and skips the size-1 axes, origins and all.
        origin = [0 if k == 1 else o for k, o in
                  zip(fp.shape, _origins(name, origin, len(ax)))]
    modes = [_mode(name, m) for m in _per_axis(name, "mode", mode, len(ax))]
    if len(set(modes)) != 1 and not (separable and fp.all()):
        what = "for non-separable footprints" if separable else "by non-separable rank filters"
        raise RuntimeError(f"{name}: a sequence of modes is not supported {what} (as in "
                           "SciPy); give one mode, or a box footprint to minimum_filter / "
                           "maximum_filter")
    stack = _windows_stack(name, x, fp, ax, modes, cval, _origins(name, origin, len(ax)))
    return _finish(reduce(stack, int(fp.sum())), dt, out_dt)


def minimum_filter(input: Any, size: Any = None, footprint: Any = None,  # noqa: A002
                   output: Any = None, mode: Any = "reflect", cval: float = 0.0,
                   origin: Any = 0, *, axes: Any = None) -> Any:
    """Multi-dimensional minimum filter over ``size`` (a box) or a boolean ``footprint``.

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> fnd.minimum_filter(np.array([[5.0, 1.0], [3.0, 4.0]]), size=2, mode="nearest")
        array([[5., 1.],
               [3., 1.]])
    """
    return _footprint_filter("minimum_filter", input, size, footprint, output, mode, cval,
                             origin, axes, lambda s, n: fnp.min(s, axis=-1), separable=True)


def maximum_filter(input: Any, size: Any = None, footprint: Any = None,  # noqa: A002
                   output: Any = None, mode: Any = "reflect", cval: float = 0.0,
                   origin: Any = 0, *, axes: Any = None) -> Any:
    """Multi-dimensional maximum filter over ``size`` (a box) or a boolean ``footprint``
    (gradients go to the maximal element, split evenly between ties, as ``max``).

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> fnd.maximum_filter(np.array([[5.0, 1.0], [3.0, 4.0]]), size=2, mode="nearest")
        array([[5., 5.],
               [5., 5.]])
    """
    return _footprint_filter("maximum_filter", input, size, footprint, output, mode, cval,
                             origin, axes, lambda s, n: fnp.max(s, axis=-1), separable=True)


def _rank_of(name: str, rank: int, count: int) -> int:
    r = int(rank)
    if r < 0:
        r += count
    if not 0 <= r < count:
        raise ValueError(f"{name}: rank {rank} is out of range for a footprint of {count} "
                         "elements")
    return r


def rank_filter(input: Any, rank: int, size: Any = None, footprint: Any = None,  # noqa: A002
                output: Any = None, mode: Any = "reflect", cval: float = 0.0,
                origin: Any = 0, *, axes: Any = None) -> Any:
    """The ``rank``-th smallest value under the footprint (negative ``rank`` from the top).

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> fnd.rank_filter(np.array([2.0, 8.0, 0.0, 4.0, 1.0]), 1, size=3)
        array([2., 2., 4., 1., 1.])
    """
    def reduce(s: Any, n: int) -> Any:
        return fnp.sort(s, axis=-1)[..., _rank_of("rank_filter", rank, n)]

    return _footprint_filter("rank_filter", input, size, footprint, output, mode, cval,
                             origin, axes, reduce)


def median_filter(input: Any, size: Any = None, footprint: Any = None,  # noqa: A002
                  output: Any = None, mode: Any = "reflect", cval: float = 0.0,
                  origin: Any = 0, *, axes: Any = None) -> Any:
    """Median under the footprint; for an even number of elements the upper of the two
    middle ones (``rank = n // 2``, SciPy's, not their mean).

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> fnd.median_filter(np.array([2.0, 80.0, 0.0, 4.0, 1.0]), size=3)
        array([2., 2., 4., 1., 1.])
    """
    return _footprint_filter("median_filter", input, size, footprint, output, mode, cval,
                             origin, axes, lambda s, n: fnp.sort(s, axis=-1)[..., n // 2])


def percentile_filter(input: Any, percentile: float, size: Any = None,  # noqa: A002
                      footprint: Any = None, output: Any = None, mode: Any = "reflect",
                      cval: float = 0.0, origin: Any = 0, *, axes: Any = None) -> Any:
    """The element at ``percentile`` (0-100; negative counts from 100) under the footprint:
    rank ``int(n * percentile / 100)`` (``n - 1`` at 100), as SciPy.

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> fnd.percentile_filter(np.array([2.0, 8.0, 0.0, 4.0, 1.0]), 100, size=3)
        array([8., 8., 8., 4., 4.])
    """
    pct = float(percentile)
    if pct < 0.0:
        pct += 100.0
    if not 0.0 <= pct <= 100.0:
        raise RuntimeError(f"percentile_filter: invalid percentile {percentile!r}")

    def reduce(s: Any, n: int) -> Any:
        r = n - 1 if pct == 100.0 else int(float(n) * pct / 100.0)
        return fnp.sort(s, axis=-1)[..., r]

    return _footprint_filter("percentile_filter", input, size, footprint, output, mode, cval,
                             origin, axes, reduce)


def _derivative_filter(name: str, input: Any, axis: int, output: Any, mode: Any,  # noqa: A002
                       cval: Any, smooth: numpy.ndarray) -> Any:
    out_dt = _check_output(name, output)
    x, dt = _prepare(name, input)
    nd = get_aval(x).ndim
    ax = _axis(name, axis, nd)
    modes = [_mode(name, m) for m in _per_axis(name, "mode", mode, nd)]
    x = _correlate_axis(x, numpy.array([-1.0, 0.0, 1.0]), ax, modes[ax], cval, 0, name)
    for d in range(nd):
        if d != ax:
            x = _correlate_axis(x, smooth, d, modes[d], cval, 0, name)
    return _finish(x, dt, out_dt)


def sobel(input: Any, axis: int = -1, output: Any = None, mode: Any = "reflect",  # noqa: A002
          cval: float = 0.0) -> Any:
    """Sobel derivative along ``axis``: ``[-1, 0, 1]`` there, smoothed by ``[1, 2, 1]`` along
    the other axes.

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> fnd.sobel(np.array([[0.0, 1.0, 3.0], [0.0, 1.0, 3.0]]))
        array([[ 4., 12.,  8.],
               [ 4., 12.,  8.]])
    """
    return _derivative_filter("sobel", input, axis, output, mode, cval,
                              numpy.array([1.0, 2.0, 1.0]))


def prewitt(input: Any, axis: int = -1, output: Any = None, mode: Any = "reflect",  # noqa: A002
            cval: float = 0.0) -> Any:
    """Prewitt derivative along ``axis``: ``[-1, 0, 1]`` there, ``[1, 1, 1]`` along the
    others.

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> fnd.prewitt(np.array([[0.0, 1.0, 3.0], [0.0, 1.0, 3.0]]))
        array([[3., 9., 6.],
               [3., 9., 6.]])
    """
    return _derivative_filter("prewitt", input, axis, output, mode, cval,
                              numpy.array([1.0, 1.0, 1.0]))


def laplace(input: Any, output: Any = None, mode: Any = "reflect",  # noqa: A002
            cval: float = 0.0) -> Any:
    """Discrete Laplacian: the sum over the axes of ``[1, -2, 1]`` along each.

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> fnd.laplace(np.array([0.0, 1.0, 4.0, 9.0, 16.0]))
        array([ 1.,  2.,  2.,  2., -7.])
    """
    out_dt = _check_output("laplace", output)
    x, dt = _prepare("laplace", input)
    nd = get_aval(x).ndim
    modes = [_mode("laplace", m) for m in _per_axis("laplace", "mode", mode, nd)]
    k = numpy.array([1.0, -2.0, 1.0])
    out = None
    for d in range(nd):
        term = _correlate_axis(x, k, d, modes[d], cval, 0, "laplace")
        out = term if out is None else out + term
    return _finish(x if out is None else out, dt, out_dt)


def _gaussian_orders(x: Any, sigma: list[Any], orders: list[int], modes: list[str],
                     cval: Any, truncate: float, name: str) -> Any:
    for d, (s, o, m) in enumerate(zip(sigma, orders, modes)):
        if _static_float(name, "sigma", s) > 1e-15:
            w = _gaussian_weights(name, s, o, truncate, None)
            x = _correlate_axis(x, w, d, m, cval, 0, name)
    return x


def gaussian_laplace(input: Any, sigma: Any, output: Any = None,  # noqa: A002
                     mode: Any = "reflect", cval: float = 0.0, truncate: float = 4.0) -> Any:
    """Laplacian of Gaussian: the sum over the axes of the second Gaussian derivative along
    each (Gaussian smoothing along the others).

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> fnd.gaussian_laplace(np.array([0.0, 0.0, 1.0, 0.0, 0.0]), 1.0).round(6)
        array([ 0.197428,  0.002007, -0.398943,  0.002007,  0.197428])
    """
    out_dt = _check_output("gaussian_laplace", output)
    x, dt = _prepare("gaussian_laplace", input)
    nd = get_aval(x).ndim
    sig = _per_axis("gaussian_laplace", "sigma", sigma, nd)
    modes = [_mode("gaussian_laplace", m) for m in _per_axis("gaussian_laplace", "mode",
                                                             mode, nd)]
    out = None
    for d in range(nd):
        orders = [2 if i == d else 0 for i in range(nd)]
        term = _gaussian_orders(x, sig, orders, modes, cval, truncate, "gaussian_laplace")
        out = term if out is None else out + term
    return _finish(x if out is None else out, dt, out_dt)


def gaussian_gradient_magnitude(input: Any, sigma: Any, output: Any = None,  # noqa: A002
                                mode: Any = "reflect", cval: float = 0.0,
                                truncate: float = 4.0) -> Any:
    """``sqrt(sum_d (dG/dx_d * input)^2)``: the magnitude of the Gaussian-smoothed gradient.

    Example:
        >>> import numpy as np, funcgrad.scipy.ndimage as fnd
        >>> fnd.gaussian_gradient_magnitude(np.array([0.0, 1.0, 2.0, 3.0, 4.0]), 1.0).round(6)
        array([0.363785, 0.848847, 0.970125, 0.848847, 0.363785])
    """
    out_dt = _check_output("gaussian_gradient_magnitude", output)
    x, dt = _prepare("gaussian_gradient_magnitude", input)
    nd = get_aval(x).ndim
    name = "gaussian_gradient_magnitude"
    sig = _per_axis(name, "sigma", sigma, nd)
    modes = [_mode(name, m) for m in _per_axis(name, "mode", mode, nd)]
    total = None
    for d in range(nd):
        orders = [1 if i == d else 0 for i in range(nd)]
        term = _gaussian_orders(x, sig, orders, modes, cval, truncate, name)
        total = term * term if total is None else total + term * term
    return _finish(x if total is None else fnp.sqrt(total), dt, out_dt)

