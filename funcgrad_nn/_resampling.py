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

import fractions
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad_nn.amp import autocast_inputs
from funcgrad_nn.module import BadInputError

__all__ = ["GRID_SAMPLE_INTERPOLATION_MODES", "GRID_SAMPLE_PADDING_MODES", "affine_grid",
           "channel_shuffle", "grid_sample", "native_channel_shuffle", "interpolate", "pad",
           "pixel_shuffle", "pixel_unshuffle", "upsample", "upsample_bilinear",
           "upsample_nearest"]

class UnsupportedInputError(BadInputError, NotImplementedError):
    """A mode that cannot take an input of this rank, or a mode that does not exist, where
    PyTorch raises ``NotImplementedError``; also a ``ValueError`` (and a ``RuntimeError``),
    as every bad input to a functional layer op here."""


_NP_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
             "circular": "wrap"}


#: pad mode -> PyTorch's kernel name (then "<k>d"), for autocast's lists
_AUTOCAST_PADS = {"reflect": "reflection_pad", "replicate": "replication_pad"}


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
        raise BadInputError(f"{fname}: pad must have an even length of at most 2 * input.ndim "
                         f"({2 * nd}), got {tuple(pad)}")
    if mode not in _NP_MODES:
        raise UnsupportedInputError(f"{fname}: mode must be one of {sorted(_NP_MODES)}, got "
                                    f"{mode!r}")
    if mode != "constant" and value is not None and value != 0:
        raise BadInputError(f"{fname}: value= is only used with mode='constant' (got mode "
                         f"{mode!r}, value {value})")
    k = len(pads) // 2
    if mode in _AUTOCAST_PADS:  # autocast: PyTorch's kernel of this many padded axes
        input = autocast_inputs(f"{_AUTOCAST_PADS[mode]}{k}d", input)[0]
    if mode != "constant" and not (k + 1 <= nd <= k + 2):
        raise UnsupportedInputError(f"{fname}: {mode} padding of {k} axes needs a {k + 1}-D or {k + 2}-D "
                         f"input, got shape {tuple(fnp.shape(input))}")
    # (lo, hi) per axis, first axis first.
    width = [(0, 0)] * (nd - k) + [(pads[2 * i], pads[2 * i + 1]) for i in reversed(range(k))]
    shape = tuple(fnp.shape(input))
    out = tuple(n + lo + hi for (lo, hi), n in zip(width, shape))
    if any(o < 0 for o in out) or (mode == "constant" and any(
            max(-lo, 0) + max(-hi, 0) > n for (lo, hi), n in zip(width, shape))):
        # (PyTorch's constant mode crops first, so the crops alone must fit in the axis.)
        raise BadInputError(f"{fname}: padding {tuple(pad)} of input {shape} crops more than an "
                         f"axis holds (output size {out})")
    for (lo, hi), n in zip(width, shape):
        if mode == "reflect" and (lo or hi) and (lo >= n or hi >= n):  # (not the batch axis)
            raise BadInputError(f"{fname}: padding size {tuple(pad)} should be less than the "
                             f"corresponding input dimension for reflect padding, got "
                             f"shape {shape}")
        if mode == "replicate" and n == 0 and (lo or hi):
            raise BadInputError(f"{fname}: cannot replicate-pad an empty axis of {shape}")

    def crop(x: Any) -> Any:
        if not any(lo < 0 or hi < 0 for lo, hi in width):
            return x
        return x[tuple(slice(max(-lo, 0), m - max(-hi, 0))
                       for (lo, hi), m in zip(width, fnp.shape(x)))]

    grow = [(max(lo, 0), max(hi, 0)) for lo, hi in width]
    if not any(lo or hi for lo, hi in grow):
        return crop(input)
    if mode == "constant":
        return crop(fnp.pad(input, grow, mode="constant",
                            constant_values=0 if value is None else value))
    if mode != "circular":
        # PyTorch reflects (and replicates) about the edges of the whole input: an axis
        # cropped at one end may reflect the cropped elements into the other, so the
        # padding comes first and the crop after.
        return crop(fnp.pad(input, grow, mode=_NP_MODES[mode]))
    # Circular padding wraps the cropped axis (PyTorch copies from the cropped result).
    x = crop(input)
    for (lo, hi), n in zip(grow, fnp.shape(x)):
        if lo > n or hi > n:
            raise BadInputError(f"{fname}: padding size {tuple(pad)} should be at most the "
                             f"corresponding (cropped) input dimension for circular padding, "
                             f"got shape {tuple(fnp.shape(x))}")
    return fnp.pad(x, grow, mode="wrap")


# -- interpolate -----------------------------------------------------------------------------

_MODES_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3,
               "lanczos": 2}


def _output_sizes(in_sizes: tuple, size: Any, scale_factor: Any, fname: str
                  ) -> tuple[tuple[int, ...], tuple[float | None, ...]]:
    nd = len(in_sizes)
    if (size is None) == (scale_factor is None):
        raise ValueError(f"{fname}: exactly one of size and scale_factor must be given")
    if size is not None:
        sizes = (int(size),) * nd if numpy.ndim(size) == 0 else \
            tuple(int(s) for s in size)
        if len(sizes) != nd:
            raise ValueError(f"{fname}: size {size!r} must have {nd} entries for an input "
                             f"with {nd} spatial axes")
        return sizes, (None,) * nd
    scales = (float(scale_factor),) * nd if numpy.ndim(scale_factor) == 0 else \
        tuple(float(s) for s in scale_factor)
    if len(scales) != nd:
        raise ValueError(f"{fname}: scale_factor {scale_factor!r} must have {nd} entries for "
                         f"an input with {nd} spatial axes")
    if any(s <= 0 for s in scales):
        raise BadInputError(f"{fname}: scale_factor must be positive, got {scale_factor!r}")
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
        raise UnsupportedInputError(f"{fname}: expected a 3-D, 4-D or 5-D input (N, C, *spatial), got "
                         f"shape {tuple(fnp.shape(input))}")
    if antialias and not (mode in _AA_FILTERS and r == 4):
        raise ValueError(f"{fname}: Anti-alias option is restricted to bilinear, bicubic, and "
                         f"lanczos modes and requires a 4-D tensor as input (got mode {mode!r}, "
                         f"shape {tuple(fnp.shape(input))})")
    nd = r - 2
    if mode in _MODES_DIMS and _MODES_DIMS[mode] != nd:
        raise UnsupportedInputError(f"{fname}: mode {mode!r} expects a {_MODES_DIMS[mode] + 2}-D input, "
                         f"got shape {tuple(fnp.shape(input))}")
    if mode not in _MODES_DIMS and mode not in ("nearest", "nearest-exact", "area"):
        raise UnsupportedInputError(f"{fname}: mode must be one of 'nearest', 'nearest-exact', 'linear', "
                         f"'bilinear', 'bicubic', 'trilinear', 'lanczos', 'area', got {mode!r}")
    if align_corners is not None and mode not in _MODES_DIMS:
        raise ValueError(f"{fname}: align_corners option can only be set with the "
                         "interpolating modes: linear | bilinear | bicubic | trilinear")
    if mode == "lanczos" and align_corners:
        raise ValueError(f"{fname}: Lanczos mode does not support align_corners=True")
    if mode == "lanczos" and not antialias:
        raise ValueError(f"{fname}: Lanczos mode requires antialias=True")
    if recompute_scale_factor and size is not None:
        raise ValueError("interpolate: recompute_scale_factor is not meaningful with an "
                         "explicit size.")  # PyTorch's ValueError
    in_sizes = tuple(fnp.shape(input)[2:])
    out_sizes, scales = _output_sizes(in_sizes, size, scale_factor, fname)
    if any(o <= 0 for o in out_sizes):
        raise BadInputError(f"{fname}: output size {out_sizes} must be positive (input "
                         f"{in_sizes}, size={size!r}, scale_factor={scale_factor!r})")
    if recompute_scale_factor:
        scales = (None,) * nd
    if mode == "area":
        from funcgrad_nn._convolution import _adaptive_avg
        return _adaptive_avg(input, nd, out_sizes, fname)
    x = autocast_inputs(fname, input)[0]  # CUDA's upsample kernels run in float32
    if numpy.dtype(x.dtype) == numpy.uint8 and mode in ("bilinear", "bicubic"):
        # PyTorch resamples uint8 images in 16-bit fixed point, the last axis first, and
        # gives uint8 (each pass rounded and clamped).
        for i in reversed(range(nd)):
            if in_sizes[i] == out_sizes[i]:
                continue  # PyTorch's separable kernel leaves an unresized axis alone
            m, precision = _uint8_matrix(mode, in_sizes[i], out_sizes[i], scales[i],
                                         bool(align_corners), antialias)
            x = _uint8_resample(x, m, precision, 2 + i)
        return x
    dt = x.dtype if numpy.dtype(x.dtype).kind == "f" else numpy.float32
    for i in range(nd):
        n_in, n_out, axis = in_sizes[i], out_sizes[i], 2 + i
        if mode in ("nearest", "nearest-exact"):
            # PyTorch's 2-D nearest kernel copies an axis whose size is kept and halves the
            # index of one whose size is doubled, whatever the scale factor; its 1-D and 3-D
            # kernels (and nearest-exact) always use the scale.
            if mode == "nearest" and nd == 2 and n_out in (n_in, 2 * n_in):
                if n_out == n_in:
                    continue
                idx = numpy.arange(n_out) // 2
            else:
                idx = _nearest_index(n_in, n_out, scales[i], mode == "nearest-exact")
            x = fnp.take(x, _const_like(idx, x), axis=axis)
            continue
        if n_in == n_out and (mode != "bicubic" or antialias):
            continue  # PyTorch's linear (and antialiased) kernels keep an unresized axis as is
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
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", UserWarning, stacklevel=2)  # (PyTorch's)
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
        raise BadInputError(f"pixel_shuffle: expected input (*, C * {r}**2, H, W) with at least 3 "
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
        raise BadInputError(f"pixel_unshuffle: expected input (*, C, H, W) with at least 3 dims "
                            f"and H, W divisible by downscale_factor = {r}, got shape {shape}")
    lead, (c, h, w) = shape[:-3], shape[-3:]
    x = fnp.reshape(input, lead + (c, h // r, r, w // r, r))
    k = len(lead)
    x = fnp.transpose(x, tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3))
    return fnp.reshape(x, lead + (c * r * r, h // r, w // r))


# -- affine_grid / grid_sample ---------------------------------------------------------------


def _linspace_from_neg_one(n: int, align_corners: bool, dt: numpy.dtype) -> numpy.ndarray:
    """PyTorch's normalised pixel positions of one axis, bit for bit: ``torch.linspace(-1, 1,
    n)``, then ``* (n - 1) / n`` (two roundings) to pixel centres without ``align_corners``;
    0 for a single pixel. (An identity ``theta`` puts every sample exactly on a pixel, where
    ``grid_sample``'s derivative jumps: a point one ulp off takes the other side's slope.)"""
    if n <= 1:
        return numpy.zeros(max(n, 0), dtype=dt)
    f = dt.type
    step = f(2) / f(n - 1)
    i = numpy.arange(n)
    half = n // 2
    # torch.linspace: start + step * i for the first half, end - step * (n - 1 - i) for the
    # rest, each a fused multiply-add (one rounding).
    if dt.itemsize <= 4:  # exact in float64, rounded once to the dtype
        s = numpy.float64(step)
        r = numpy.where(i < half, -1.0 + s * i, 1.0 - s * (n - 1 - i)).astype(dt)
    else:
        q = fractions.Fraction(float(step))
        r = numpy.array([float(-1 + q * k) if k < half else float(1 - q * (n - 1 - k))
                         for k in range(n)], dtype=dt)
    return r if align_corners else ((r * f(n - 1)).astype(dt) / f(n)).astype(dt)


def affine_grid(theta: Any, size: Sequence[int], align_corners: bool | None = None) -> Any:
    """Sampling grid of a batch of affine maps (PyTorch's ``F.affine_grid``): ``theta``
    ``(N, 2, 3)`` with ``size = (N, C, H, W)`` gives ``(N, H, W, 2)`` ``(x, y)`` points in
    ``[-1, 1]`` coordinates; ``theta`` ``(N, 3, 4)`` with ``(N, C, D, H, W)`` gives
    ``(N, D, H, W, 3)``. ``align_corners`` as in :func:`grid_sample` (default False).

    >>> import numpy as np
    >>> affine_grid(np.array([[[1.0, 0, 0], [0, 1, 0]]]), (1, 1, 1, 2))
    array([[[[-0.5,  0. ],
             [ 0.5,  0. ]]]])
    """
    fname = "affine_grid"
    (theta,) = autocast_inputs(fname, theta)
    size = tuple(int(v) for v in size)
    dt = numpy.dtype(get_aval(theta).dtype)
    if dt.kind not in "fc":
        raise TypeError(f"{fname}: expected theta to have a floating point type, got {dt}")
    if len(size) not in (4, 5):
        raise ValueError(f"{fname}: only supports 4-D and 5-D sizes, for 2-D and 3-D affine "
                         f"transforms, respectively; got size {size}")
    nd = len(size) - 2
    want = (size[0], nd, nd + 1)
    if tuple(fnp.shape(theta)) != want:
        raise BadInputError(f"{fname}: expected a batch of {nd}-D affine matrices of shape "
                            f"N x {nd} x {nd + 1} = {want} for size {size}, got theta of shape "
                            f"{tuple(fnp.shape(theta))}")
    if min(size) <= 0:
        raise ValueError(f"{fname}: expected a positive output size, got {size}")
    spatial = size[2:]
    # Homogeneous base points (x, y[, z], 1), x along the last axis: (prod(spatial), nd + 1).
    axes = [_linspace_from_neg_one(n, bool(align_corners), dt) for n in spatial]
    mesh = numpy.meshgrid(*axes, indexing="ij")
    base = numpy.stack([m.ravel() for m in reversed(mesh)] + [numpy.ones(mesh[0].size, dt)],
                       axis=-1).astype(dt)
    grid = fnp.matmul(_const_like(base, theta), fnp.swapaxes(theta, 1, 2))
    return fnp.reshape(grid, (size[0],) + spatial + (nd,))


_GRID_MODES = ("bilinear", "nearest", "bicubic")
_GRID_PADDING = ("zeros", "border", "reflection")
# PyTorch's public tables of the same names (mode -> its kernels' enum value).
GRID_SAMPLE_INTERPOLATION_MODES = {m: i for i, m in enumerate(_GRID_MODES)}
GRID_SAMPLE_PADDING_MODES = {m: i for i, m in enumerate(_GRID_PADDING)}


def _unnormalize(coord: Any, n: int, align_corners: bool) -> Any:
    """``[-1, 1]`` grid coordinates to pixel positions: the corner pixels' centres with
    ``align_corners``, else the image's outer edges (PyTorch's ``grid_sampler_unnormalize``)."""
    if align_corners:
        return (coord + 1) * ((n - 1) / 2)
    return ((coord + 1) * n - 1) / 2


def _clip_coordinate(x: Any, n: int) -> Any:
    # A position on or past a border has gradient 0, as PyTorch's clip_coordinates_set_grad.
    return fnp.where(x <= 0, 0, fnp.where(x >= n - 1, n - 1, x)).astype(x.dtype)


def _reflect_coordinate(x: Any, twice_low: int, twice_high: int) -> Any:
    """PyTorch's ``reflect_coordinates``: ``x`` folded into ``[low, high]`` (mirror images
    alternate every span); the derivative is +-1 by the parity of the fold."""
    if twice_low == twice_high:
        return fnp.zeros_like(x)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    d = x - low
    d = fnp.where(d < 0, -d, d)
    extra = fnp.fmod(d, span)
    flips = fnp.floor(funcgrad.stop_gradient(d) / span)
    return fnp.where(fnp.fmod(flips, 2) == 0, extra + low, span - extra + low).astype(x.dtype)


def _pad_coordinate(x: Any, n: int, padding_mode: str, align_corners: bool) -> Any:
    """PyTorch's ``compute_coordinates``: a pixel position moved inside the image by the
    padding mode (``'zeros'`` leaves it, so out-of-image taps read 0)."""
    if padding_mode == "border":
        return _clip_coordinate(x, n)
    if padding_mode == "reflection":
        # Clipped after, so that the borders have gradient 0 as with 'border'.
        twice = (0, 2 * (n - 1)) if align_corners else (-1, 2 * n - 1)
        return _clip_coordinate(_reflect_coordinate(x, *twice), n)
    return x


def _grid_taps(flat: Any, idx: list[Any], sizes: tuple[int, ...]) -> Any:
    """``input`` (flattened to ``(N, C, prod(sizes))``) at the integral float positions
    ``idx`` (one ``(N, *out)`` array per spatial axis): ``(N, C, *out)``, 0 outside."""
    inside = None
    lin = None
    for i, n in zip(idx, sizes):
        ok = (i >= 0) & (i <= n - 1)
        inside = ok if inside is None else inside & ok
        ic = fnp.clip(fnp.where(ok, i, 0), 0, n - 1).astype(numpy.int64)
        lin = ic if lin is None else lin * n + ic
    n_, c = fnp.shape(flat)[:2]
    out_shape = tuple(fnp.shape(lin)[1:])
    pos = fnp.broadcast_to(fnp.reshape(lin, (n_, 1, math.prod(out_shape))),
                           (n_, c, math.prod(out_shape)))
    vals = fnp.reshape(fnp.take_along_axis(flat, pos, axis=2), (n_, c) + out_shape)
    return fnp.where(fnp.expand_dims(inside, 1), vals, fnp.zeros_like(vals, shape=()))


def _cubic_coefficients(t: Any) -> list[Any]:
    """Keys' cubic weights (A = -0.75) of the four taps at offsets -1, 0, 1, 2 from the
    pixel left of a position ``t`` (0 <= t < 1) past it (PyTorch's
    ``get_cubic_upsample_coefficients``)."""
    a = -0.75

    def near(x: Any) -> Any:  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: Any) -> Any:  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def grid_sample(input: Any, grid: Any, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Any:
    """Sample ``input`` ``(N, C, H, W)`` at the points of ``grid`` ``(N, Ho, Wo, 2)`` (``(x,
    y)`` in ``[-1, 1]``: -1 the left/top, 1 the right/bottom) giving ``(N, C, Ho, Wo)``, or
    ``(N, C, D, H, W)`` at ``(N, Do, Ho, Wo, 3)`` points ``(x, y, z)`` (PyTorch's
    ``F.grid_sample``). ``mode`` ``'bilinear'`` (trilinear for 5-D), ``'nearest'`` (ties
    to even) or ``'bicubic'`` (4-D; Keys' ``A = -0.75``); ``padding_mode`` ``'zeros'``,
    ``'border'`` or ``'reflection'`` for points outside; ``align_corners`` (default False):
    whether -1 and 1 are the centres of the corner pixels or the image's outer edges.
    Differentiable with respect to both the input and the grid, with PyTorch's derivatives
    (0 on and past a border with ``'border'``; the grid derivative of ``'nearest'`` is 0).

    >>> import numpy as np
    >>> img = np.arange(4.0).reshape(1, 1, 2, 2)
    >>> grid_sample(img, np.array([[[[0.0, 0.0], [-1.0, -1.0]]]]), align_corners=True)
    array([[[[1.5, 0. ]]]])
    """
    input, grid = autocast_inputs("grid_sample", input, grid)
    fname = "grid_sample"
    if mode not in _GRID_MODES:
        raise ValueError(f"{fname}: expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"got {mode!r}")
    if padding_mode not in _GRID_PADDING:
        raise ValueError(f"{fname}: expected padding_mode to be 'zeros', 'border' or "
                         f"'reflection', got {padding_mode!r}")
    shape, gshape = tuple(fnp.shape(input)), tuple(fnp.shape(grid))
    r = len(shape)
    if r not in (4, 5) or len(gshape) != r:
        raise ValueError(f"{fname}: expected 4-D or 5-D input and grid with the same number "
                         f"of dimensions, got input of shape {shape} and grid of shape "
                         f"{gshape}")
    nd = r - 2
    if gshape[0] != shape[0]:
        raise ValueError(f"{fname}: expected grid and input to have the same batch size, got "
                         f"input of shape {shape} and grid of shape {gshape}")
    if gshape[-1] != nd:
        raise BadInputError(f"{fname}: expected grid to have size {nd} in its last dimension "
                            f"(the {'(x, y)' if nd == 2 else '(x, y, z)'} of each point), got "
                            f"grid of shape {gshape}")
    if any(n <= 0 for n in shape[2:]):
        raise ValueError(f"{fname}: expected input to have non-empty spatial dimensions, got "
                         f"shape {shape}")
    if mode == "bicubic" and nd != 2:
        raise BadInputError(f"{fname}: bicubic interpolation only supports 4-D input, got shape "
                            f"{shape}")
    dt, gdt = numpy.dtype(get_aval(input).dtype), numpy.dtype(get_aval(grid).dtype)
    if dt.kind != "f" or dt != gdt:
        raise TypeError(f"{fname}: expected input and grid to have the same floating dtype, "
                        f"got {dt} and {gdt}")
    ac = bool(align_corners)
    sizes = shape[2:]
    flat = fnp.reshape(input, shape[:2] + (math.prod(sizes),))
    # Pixel positions per spatial axis (D, H, W order); the grid lists them as (x, y, z).
    src = [_unnormalize(grid[..., nd - 1 - a], n, ac) for a, n in enumerate(sizes)]
    if mode == "bicubic":
        base = [fnp.floor(s) for s in src]
        coef = [_cubic_coefficients(s - b) for s, b in zip(src, base)]
        base = [funcgrad.stop_gradient(b) for b in base]
        out = None
        for i in range(4):
            for j in range(4):
                # Each tap's position is moved inside by the padding mode (PyTorch's
                # get_value_bounded), then truncated to a pixel.
                iy = fnp.trunc(_pad_coordinate(base[0] + (i - 1), sizes[0], padding_mode, ac))
                ix = fnp.trunc(_pad_coordinate(base[1] + (j - 1), sizes[1], padding_mode, ac))
                term = _grid_taps(flat, [iy, ix], sizes) * fnp.expand_dims(
                    coef[0][i] * coef[1][j], 1)
                out = term if out is None else out + term
        return out
    src = [_pad_coordinate(s, n, padding_mode, ac) for s, n in zip(src, sizes)]
    if mode == "nearest":
        return _grid_taps(flat, [fnp.round(funcgrad.stop_gradient(s)) for s in src], sizes)
    base = [funcgrad.stop_gradient(fnp.floor(s)) for s in src]
    frac = [s - b for s, b in zip(src, base)]
    out = None
    for corner in range(2 ** nd):
        bits = [(corner >> (nd - 1 - a)) & 1 for a in range(nd)]
        weight = None
        for t, bit in zip(frac, bits):
            w = t if bit else 1 - t
            weight = w if weight is None else weight * w
        term = _grid_taps(flat, [b + bit for b, bit in zip(base, bits)], sizes) * \
            fnp.expand_dims(weight, 1)
        out = term if out is None else out + term
    return out


def upsample_nearest(input: Any, size: Any = None, scale_factor: Any = None) -> Any:
    """The deprecated ``interpolate(..., mode='nearest')``.

    >>> import numpy as np
    >>> upsample_nearest(np.array([[[1.0, 2.0]]]), scale_factor=2)
    array([[[1., 1., 2., 2.]]])
    """
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", UserWarning, stacklevel=2)  # (PyTorch's)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Any, size: Any = None, scale_factor: Any = None) -> Any:
    """The deprecated ``interpolate(..., mode='bilinear', align_corners=True)`` (4-D input).

    >>> import numpy as np
    >>> upsample_bilinear(np.array([[[[0.0, 3.0]]]]), size=(1, 4))
    array([[[[0., 1., 2., 3.]]]])
    """
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", UserWarning, stacklevel=2)  # (PyTorch's)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def channel_shuffle(input: Any, groups: int) -> Any:
    """Interleave the channels of ``(N, C, *)`` across ``groups`` (ShuffleNet's shuffle):
    channel ``g * (C // groups) + i`` moves to ``i * groups + g``.

    >>> import numpy as np
    >>> channel_shuffle(np.arange(6.0).reshape(1, 6, 1), 2).ravel()
    array([0., 3., 1., 4., 2., 5.])
    """
    shape = tuple(fnp.shape(input))
    g = int(groups)
    if len(shape) < 3:
        raise ValueError(f"channel_shuffle: expected an input with more than 2 dims (N, C, *), "
                         f"got shape {shape}")
    if g <= 0 or shape[1] % g:
        raise BadInputError(f"channel_shuffle: the number of channels ({shape[1]}) must be "
                            f"divisible by a positive number of groups, got groups={groups}")
    x = fnp.reshape(input, (shape[0], g, shape[1] // g) + shape[2:])
    return fnp.reshape(fnp.swapaxes(x, 1, 2), shape)


native_channel_shuffle = channel_shuffle  # PyTorch's name for its kernel; the same result
