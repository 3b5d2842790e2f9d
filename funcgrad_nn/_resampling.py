"""Padding, interpolation and pixel shuffling (re-exported by ``functional``).

``interpolate`` is separable: each spatial axis is resampled by one matrix product with a
small ``(out, in)`` interpolation matrix built from static sizes with PyTorch's index rules
(linear, bicubic with ``A = -0.75`` and clamped borders; with ``antialias=True`` PyTorch's
``_upsample_*2d_aa`` weights: the filter stretched by the downscale factor, taps outside the
input dropped and each output's weights normalised to sum to one), or by one ``take`` of
PyTorch's nearest indices (exact, NaN-safe). Derivatives come from those operations' own rules.
uint8 images (bilinear, bicubic) are resampled as PyTorch does them: the same weights in 16-bit
fixed point, the last axis first, each pass rounded and clamped to uint8.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.avals import get_aval

__all__ = ["interpolate", "pad", "pixel_shuffle", "pixel_unshuffle", "upsample"]

_NP_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
             "circular": "wrap"}


def _const_like(value: numpy.ndarray, like: Any) -> Any:
    dev = get_aval(like).device
    return value if dev in (None, "cpu") else funcgrad.device_put(value, dev)


def pad(input: Any, pad: Sequence[int], mode: str = "constant", value: float | None = None
        ) -> Any:
    """Pad the last ``len(pad) // 2`` axes, PyTorch's order: ``(left, right)`` of the last
    axis first, then of the one before, ...; negative amounts crop. Modes ``'constant'``
    (``value``, default 0), ``'reflect'``, ``'replicate'``, ``'circular'``.

    >>> import numpy as np
    >>> pad(np.array([[1.0, 2.0, 3.0]]), (1, 2), value=9.0)
    array([[9., 1., 2., 3., 9., 9.]])
    >>> pad(np.array([[[1.0, 2.0, 3.0]]]), (2, 1), mode="reflect")
    array([[[3., 2., 1., 2., 3., 2.]]])
    """
    fname = "pad"
    pads = [int(p) for p in pad]
    nd = fnp.ndim(input)
    if len(pads) % 2 or len(pads) // 2 > nd:
        raise ValueError(f"{fname}: pad must have an even length of at most 2 * input.ndim "
                         f"({2 * nd}), got {tuple(pad)}")
    if mode not in _NP_MODES:
        raise ValueError(f"{fname}: mode must be one of {sorted(_NP_MODES)}, got {mode!r}")
    if mode != "constant" and value is not None and value != 0:
        raise ValueError(f"{fname}: value= is only used with mode='constant' (got mode "
                         f"{mode!r}, value {value})")
    k = len(pads) // 2
    if mode != "constant" and not (k + 1 <= nd <= k + 2):
        raise ValueError(f"{fname}: {mode} padding of {k} axes needs a {k + 1}-D or {k + 2}-D "
                         f"input, got shape {tuple(fnp.shape(input))}")
    # (lo, hi) per axis, first axis first.
    width = [(0, 0)] * (nd - k) + [(pads[2 * i], pads[2 * i + 1]) for i in reversed(range(k))]
    shape = tuple(fnp.shape(input))
    x = input
    crop = tuple(slice(max(-lo, 0), n - max(-hi, 0)) for (lo, hi), n in zip(width, shape))
    if any(lo < 0 or hi < 0 for lo, hi in width):
        x = x[crop]
        shape = tuple(fnp.shape(x))
        if any(n <= 0 for n in shape):
            raise ValueError(f"{fname}: negative padding {tuple(pad)} crops input "
                             f"{tuple(fnp.shape(input))} to nothing")
    width = [(max(lo, 0), max(hi, 0)) for lo, hi in width]
    for (lo, hi), n in zip(width, shape):
        if mode == "reflect" and (lo >= n or hi >= n):
            raise ValueError(f"{fname}: padding size {tuple(pad)} should be less than the "
                             f"corresponding input dimension for reflect padding, got "
                             f"shape {shape}")
        if mode == "circular" and (lo > n or hi > n):
            raise ValueError(f"{fname}: padding size {tuple(pad)} should be at most the "
                             f"corresponding input dimension for circular padding, got "
                             f"shape {shape}")
        if mode == "replicate" and n == 0 and (lo or hi):
            raise ValueError(f"{fname}: cannot replicate-pad an empty axis of {shape}")
    if not any(lo or hi for lo, hi in width):
        return x
    if mode == "constant":
        return fnp.pad(x, width, mode="constant", constant_values=0 if value is None else value)
    return fnp.pad(x, width, mode=_NP_MODES[mode])


# -- interpolate -----------------------------------------------------------------------------

_MODES_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3,
               "lanczos": 2}


def _output_sizes(in_sizes: tuple, size: Any, scale_factor: Any, fname: str
                  ) -> tuple[tuple[int, ...], tuple[float | None, ...]]:
    nd = len(in_sizes)
    if (size is None) == (scale_factor is None):
        raise ValueError(f"{fname}: exactly one of size and scale_factor must be given")
    if size is not None:
        sizes = (int(size),) * nd if isinstance(size, (int, numpy.integer)) else \
            tuple(int(s) for s in size)
        if len(sizes) != nd:
            raise ValueError(f"{fname}: size {size!r} must have {nd} entries for an input "
                             f"with {nd} spatial axes")
        return sizes, (None,) * nd
    scales = (float(scale_factor),) * nd if isinstance(scale_factor, (int, float)) else \
        tuple(float(s) for s in scale_factor)
    if len(scales) != nd:
        raise ValueError(f"{fname}: scale_factor {scale_factor!r} must have {nd} entries for "
                         f"an input with {nd} spatial axes")
    if any(s <= 0 for s in scales):
        raise ValueError(f"{fname}: scale_factor must be positive, got {scale_factor!r}")
    return tuple(int(math.floor(n * s)) for n, s in zip(in_sizes, scales)), scales


def _nearest_index(n_in: int, n_out: int, scale: float | None, exact: bool) -> numpy.ndarray:
    # PyTorch computes these in float32: scale = 1/scale_factor or in/out.
    s = numpy.float32(1.0 / scale) if scale is not None else numpy.float32(n_in) / \
        numpy.float32(n_out)
    dst = numpy.arange(n_out, dtype=numpy.float32)
    if exact:
        src = numpy.floor((dst + numpy.float32(0.5)) * s)
    else:
        src = numpy.floor(dst * s)
    return numpy.minimum(src.astype(numpy.int64), n_in - 1)


def _source_scale(n_in: int, n_out: int, scale: float | None, align_corners: bool) -> float:
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / scale if scale is not None else n_in / n_out


def _linear_matrix(n_in: int, n_out: int, scale: float | None, align_corners: bool
                   ) -> numpy.ndarray:
    s = _source_scale(n_in, n_out, scale, align_corners)
    dst = numpy.arange(n_out, dtype=numpy.float64)
    src = s * dst if align_corners else numpy.maximum(s * (dst + 0.5) - 0.5, 0.0)
    i0 = numpy.minimum(numpy.floor(src).astype(numpy.int64), n_in - 1)
    i1 = numpy.minimum(i0 + 1, n_in - 1)
    lam = src - i0
    m = numpy.zeros((n_out, n_in))
    numpy.add.at(m, (numpy.arange(n_out), i0), 1.0 - lam)  # host-side, static sizes
    numpy.add.at(m, (numpy.arange(n_out), i1), lam)
    return m


def _cubic_kernel(x: numpy.ndarray, a: float) -> numpy.ndarray:
    """Keys' cubic convolution kernel at ``x`` (0 outside ``|x| < 2``)."""
    x = numpy.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return numpy.where(x < 1, near, numpy.where(x < 2, far, 0))


def _cubic_matrix(n_in: int, n_out: int, scale: float | None, align_corners: bool
                  ) -> numpy.ndarray:
    a = -0.75  # PyTorch's (and OpenCV's) bicubic coefficient
    s = _source_scale(n_in, n_out, scale, align_corners)
    dst = numpy.arange(n_out, dtype=numpy.float64)
    src = s * dst if align_corners else s * (dst + 0.5) - 0.5
    base = numpy.floor(src)
    t = src - base
    m = numpy.zeros((n_out, n_in))
    rows = numpy.arange(n_out)
    for off in (-1, 0, 1, 2):
        idx = numpy.clip(base.astype(numpy.int64) + off, 0, n_in - 1)
        numpy.add.at(m, (rows, idx), _cubic_kernel(t - off, a))
    return m


def _lanczos3_kernel(x: numpy.ndarray) -> numpy.ndarray:
    """``sinc(x) * sinc(x / 3)`` on ``|x| < 3`` (PIL's and PyTorch's Lanczos-3)."""
    x = numpy.abs(x)
    return numpy.where(x < 3, numpy.sinc(x) * numpy.sinc(x / 3), 0)


# mode -> (half-width of the filter at scale 1, the filter): PyTorch's aa_filter functions;
# its antialiased bicubic uses Keys' A = -0.5 (PIL's), not the -0.75 of plain bicubic.
_AA_FILTERS = {
    "bilinear": (1.0, lambda x: numpy.maximum(1 - numpy.abs(x), 0)),
    "bicubic": (2.0, lambda x: _cubic_kernel(x, -0.5)),
    "lanczos": (3.0, _lanczos3_kernel),
}


def _tap_matrix(mode: str, n_in: int, n_out: int, scale: float | None, align_corners: bool,
                dt: numpy.dtype, stretch: bool = True) -> numpy.ndarray:
    """PyTorch's ``_compute_indices_min_size_weights_aa`` as an ``(out, in)`` matrix, in the
    input's float type as PyTorch computes it (which taps are kept depends on the rounding).
    Output ``i`` is centred at ``s * (i + 0.5)`` in the input, with ``s`` the source scale
    (``(in - 1) / (out - 1)`` with ``align_corners``, as PyTorch); taps outside the input are
    dropped and each output's weights renormalised. ``stretch`` (antialiasing): when
    downscaling (``s > 1``) the filter is stretched by ``s`` so every input pixel contributes;
    without it (PyTorch's uint8 bilinear), ``align_corners`` centres output ``i`` at ``s * i``."""
    half, kernel = _AA_FILTERS[mode]
    out_dt, dt = dt, numpy.promote_types(dt, numpy.float32)  # half-precision positions drift
    f = dt.type
    s = f(_source_scale(n_in, n_out, scale, align_corners))
    wide = stretch and s >= 1
    support = f(half * s) if wide else f(half)
    inv = f(1.0 / s) if wide else f(1.0)
    delta = 0.5 if align_corners and not stretch else 0.0
    center = (numpy.float64(s) * (numpy.arange(n_out) + 0.5 - delta)).astype(dt)
    # PyTorch truncates (center -+ support + 0.5) to int and keeps at most
    # 2 * ceil(support) + 1 taps.
    lo = numpy.maximum(numpy.trunc((center - support).astype(numpy.float64) + 0.5 + delta), 0)
    hi = numpy.minimum(numpy.trunc((center + support).astype(numpy.float64) + 0.5 + delta),
                       n_in)
    hi = numpy.minimum(hi, lo + 2 * math.ceil(support) + 1)
    j = numpy.arange(n_in)
    taps = (j >= lo[:, None]) & (j < hi[:, None])
    arg = ((j.astype(dt) - center[:, None]).astype(numpy.float64) + 0.5 - delta) * inv
    w = numpy.where(taps, kernel(arg.astype(dt)), 0).astype(dt)
    total = w.sum(axis=1, keepdims=True)
    return numpy.where(total != 0, w / numpy.where(total != 0, total, 1), w).astype(out_dt)


def _uint8_matrix(mode: str, n_in: int, n_out: int, scale: float | None, align_corners: bool,
                  antialias: bool) -> tuple[numpy.ndarray, int]:
    """PyTorch's uint8 resampling weights of one axis: ``(weights, precision)``, the float
    weights (:func:`_tap_matrix`; plain bicubic keeps its clamped borders) rounded half away
    from zero to 16-bit fixed point with as many fraction bits as the largest still fits."""
    if mode == "bicubic" and not antialias:
        m = _cubic_matrix(n_in, n_out, scale, align_corners)
    else:
        m = _tap_matrix(mode, n_in, n_out, scale, align_corners, numpy.dtype(numpy.float64),
                        stretch=antialias)
    top = float(m.max())
    precision = 0
    while precision < 22 and int(0.5 + top * (1 << (precision + 1))) < (1 << 15):
        precision += 1
    scaled = m * float(1 << precision)
    return numpy.where(m >= 0, numpy.trunc(scaled + 0.5), numpy.trunc(scaled - 0.5)), precision


def _uint8_resample(x: Any, m: numpy.ndarray, precision: int, axis: int) -> Any:
    """One axis of PyTorch's uint8 resampling: the fixed-point weighted sum, rounded (add half
    a unit, shift right) and clamped to 0..255 before the next axis. The products and sums are
    integers far below 2**53, so float64 computes them exactly."""
    y = fnp.tensordot(x.astype(numpy.float64), _const_like(m.T.copy(), x),
                      axes=((axis,), (0,)))
    y = fnp.floor((y + float(1 << (precision - 1))) * (1.0 / (1 << precision)))
    return fnp.moveaxis(fnp.clip(y, 0, 255).astype(numpy.uint8), -1, axis)


def interpolate(input: Any, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Any:
    """Resize ``(N, C, *S)`` inputs (1 to 3 spatial axes) as PyTorch's ``F.interpolate``:
    modes ``'nearest'``, ``'nearest-exact'``, ``'linear'`` (3-D), ``'bilinear'``,
    ``'bicubic'`` (4-D), ``'trilinear'`` (5-D), ``'lanczos'`` (4-D, Lanczos-3, needs
    ``antialias=True``) and ``'area'``; ``size`` or ``scale_factor`` (then the output size is
    ``floor(in * scale)`` and, unless ``recompute_scale_factor``, the source indices use
    ``1 / scale`` as PyTorch); ``align_corners`` for the linear modes. ``antialias=True``
    (4-D ``'bilinear'``, ``'bicubic'``, ``'lanczos'``) low-pass filters when downscaling,
    PyTorch's (and PIL's) resampling: the filter widens by the downscale factor, taps outside
    the image are dropped and the weights renormalised; antialiased bicubic uses ``A = -0.5``.
    uint8 inputs give uint8 in ``'bilinear'`` and ``'bicubic'``, bit for bit PyTorch's
    (fixed-point weights, each axis rounded and clamped in turn).

    >>> import numpy as np
    >>> interpolate(np.array([[[1.0, 2.0]]]), scale_factor=2)
    array([[[1., 1., 2., 2.]]])
    >>> interpolate(np.array([[[1.0, 2.0]]]), size=4, mode="linear")
    array([[[1.  , 1.25, 1.75, 2.  ]]])
    >>> interpolate(np.arange(8.0).reshape(1, 1, 1, 8), size=(1, 2), mode="bilinear",
    ...             antialias=True)
    array([[[[1.89285714, 5.10714286]]]])
    """
    fname = "interpolate"
    r = fnp.ndim(input)
    if not 3 <= r <= 5:
        raise ValueError(f"{fname}: expected a 3-D, 4-D or 5-D input (N, C, *spatial), got "
                         f"shape {tuple(fnp.shape(input))}")
    if antialias and not (mode in _AA_FILTERS and r == 4):
        raise ValueError(f"{fname}: Anti-alias option is restricted to bilinear, bicubic, and "
                         f"lanczos modes and requires a 4-D tensor as input (got mode {mode!r}, "
                         f"shape {tuple(fnp.shape(input))})")
    nd = r - 2
    if mode in _MODES_DIMS and _MODES_DIMS[mode] != nd:
        raise ValueError(f"{fname}: mode {mode!r} expects a {_MODES_DIMS[mode] + 2}-D input, "
                         f"got shape {tuple(fnp.shape(input))}")
    if mode not in _MODES_DIMS and mode not in ("nearest", "nearest-exact", "area"):
        raise ValueError(f"{fname}: mode must be one of 'nearest', 'nearest-exact', 'linear', "
                         f"'bilinear', 'bicubic', 'trilinear', 'lanczos', 'area', got {mode!r}")
    if align_corners is not None and mode not in _MODES_DIMS:
        raise ValueError(f"{fname}: align_corners option can only be set with the "
                         "interpolating modes: linear | bilinear | bicubic | trilinear")
    if mode == "lanczos" and align_corners:
        raise ValueError(f"{fname}: Lanczos mode does not support align_corners=True")
    if mode == "lanczos" and not antialias:
        raise ValueError(f"{fname}: Lanczos mode requires antialias=True")
    in_sizes = tuple(fnp.shape(input)[2:])
    out_sizes, scales = _output_sizes(in_sizes, size, scale_factor, fname)
    if any(o <= 0 for o in out_sizes):
        raise ValueError(f"{fname}: output size {out_sizes} must be positive (input "
                         f"{in_sizes}, size={size!r}, scale_factor={scale_factor!r})")
    if recompute_scale_factor:
        scales = (None,) * nd
    if mode == "area":
        from funcgrad_nn._convolution import _adaptive_avg
        return _adaptive_avg(input, nd, out_sizes, fname)
    x = input
    if numpy.dtype(x.dtype) == numpy.uint8 and mode in ("bilinear", "bicubic"):
        # PyTorch resamples uint8 images in 16-bit fixed point, the last axis first, and
        # gives uint8 (each pass rounded and clamped).
        for i in reversed(range(nd)):
            m, precision = _uint8_matrix(mode, in_sizes[i], out_sizes[i], scales[i],
                                         bool(align_corners), antialias)
            x = _uint8_resample(x, m, precision, 2 + i)
        return x
    dt = x.dtype if numpy.dtype(x.dtype).kind == "f" else numpy.float32
    for i in range(nd):
        n_in, n_out, axis = in_sizes[i], out_sizes[i], 2 + i
        if mode in ("nearest", "nearest-exact"):
            if n_in == n_out and mode == "nearest":
                continue
            idx = _nearest_index(n_in, n_out, scales[i], mode == "nearest-exact")
            x = fnp.take(x, _const_like(idx, x), axis=axis)
            continue
        if antialias:
            m = _tap_matrix(mode, n_in, n_out, scales[i], bool(align_corners), dt)
        else:
            build = _cubic_matrix if mode == "bicubic" else _linear_matrix
            m = build(n_in, n_out, scales[i], bool(align_corners)).astype(dt)
        x = fnp.moveaxis(fnp.tensordot(x, _const_like(m.T.copy(), x), axes=((axis,), (0,))),
                         -1, axis)
    return x


def upsample(input: Any, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Any:
    """The deprecated alias of :func:`interpolate`.

    >>> import numpy as np
    >>> upsample(np.ones((1, 1, 2)), scale_factor=2).shape
    (1, 1, 4)
    """
    return interpolate(input, size, scale_factor, mode, align_corners)


def pixel_shuffle(input: Any, upscale_factor: int) -> Any:
    """``(*, C * r**2, H, W) -> (*, C, H * r, W * r)`` (sub-pixel convolution's rearrangement).

    >>> import numpy as np
    >>> pixel_shuffle(np.arange(4.0).reshape(1, 4, 1, 1), 2)[0, 0]
    array([[0., 1.],
           [2., 3.]])
    """
    r = int(upscale_factor)
    shape = tuple(fnp.shape(input))
    if len(shape) < 3 or r < 1 or shape[-3] % (r * r):
        raise ValueError(f"pixel_shuffle: expected input (*, C * {r}**2, H, W) with at least 3 "
                         f"dims and channels divisible by upscale_factor**2 = {r * r}, got "
                         f"shape {shape}")
    lead, (c, h, w) = shape[:-3], shape[-3:]
    x = fnp.reshape(input, lead + (c // (r * r), r, r, h, w))
    k = len(lead)
    x = fnp.transpose(x, tuple(range(k)) + (k, k + 3, k + 1, k + 4, k + 2))
    return fnp.reshape(x, lead + (c // (r * r), h * r, w * r))


def pixel_unshuffle(input: Any, downscale_factor: int) -> Any:
    """``(*, C, H * r, W * r) -> (*, C * r**2, H, W)``, the inverse of :func:`pixel_shuffle`.

    >>> import numpy as np
    >>> pixel_unshuffle(np.arange(4.0).reshape(1, 1, 2, 2), 2).ravel()
    array([0., 1., 2., 3.])
    """
    r = int(downscale_factor)
    shape = tuple(fnp.shape(input))
    if len(shape) < 3 or r < 1 or shape[-2] % r or shape[-1] % r:
        raise ValueError(f"pixel_unshuffle: expected input (*, C, H, W) with at least 3 dims "
                         f"and H, W divisible by downscale_factor = {r}, got shape {shape}")
    lead, (c, h, w) = shape[:-3], shape[-3:]
    x = fnp.reshape(input, lead + (c, h // r, r, w // r, r))
    k = len(lead)
    x = fnp.transpose(x, tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3))
    return fnp.reshape(x, lead + (c * r * r, h // r, w // r))
