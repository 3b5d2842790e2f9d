"""Sliding-window primitives: ``patches`` (im2col) and ``fold`` (col2im), transposes of each other.

Convolutions, transposed convolutions and pooling are built on these two: a convolution is
``patches`` followed by ONE matrix product (``dot_general``), its input gradient a matrix product
followed by ``fold``; the weight gradient is a matrix product with the same patches. Both
primitives are linear, so their JVPs are themselves and each one's transpose is the other.

Layout (chosen so the convolution is one large GEMM over the whole batch, not one per example):
``x`` is ``(N, C, *S)`` (``nd`` spatial axes); ``patches(x)`` is ``(C, *K, N, *O)`` where
``K`` is the kernel and ``O`` the number of window positions per axis,
``O = (S + lo + hi - dilation * (K - 1) - 1) // stride + 1`` with zero padding ``lo``/``hi``
(``hi`` may be negative: the last ``-hi`` elements are then in no window).

The impls copy ``prod(K)`` strided slices (a reshape when windows tile the input exactly), and
``fold`` adds them into one buffer: reshaped sums over kernel offsets, never a scatter.
"""

from __future__ import annotations

import itertools
from typing import Any

from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import xp_for
from funcgrad.core import bind1
from funcgrad.errors import ShapeError
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import deflinear
from funcgrad.interpreters.transpose import deftranspose
from funcgrad.ops import shape as _shape
from funcgrad.ops._util import check_static, make_primitive

__all__ = ["fold", "fold_p", "patches", "patches_p", "window_counts"]


def window_counts(spatial: tuple[int, ...], kernel: tuple[int, ...], stride: tuple[int, ...],
                  dilation: tuple[int, ...], padding: tuple[tuple[int, int], ...]
                  ) -> tuple[int, ...]:
    """Number of window positions per spatial axis (may be <= 0 for a too-small input)."""
    return tuple((n + lo + hi - d * (k - 1) - 1) // s + 1
                 for n, k, s, d, (lo, hi) in zip(spatial, kernel, stride, dilation, padding))


def _check_params(name: str, nd: int, kernel, stride, dilation, padding) -> None:
    check_static(name, kernel=kernel, stride=stride, dilation=dilation, padding=padding)
    if not (len(kernel) == len(stride) == len(dilation) == len(padding) == nd):
        raise ShapeError(f"{name}: kernel {kernel}, stride {stride}, dilation {dilation} and "
                         f"padding {padding} need one entry per spatial axis ({nd})")
    if any(k < 1 for k in kernel) or any(s < 1 for s in stride) or any(d < 1 for d in dilation):
        raise ShapeError(f"{name}: kernel {kernel}, stride {stride} and dilation {dilation} "
                         "must be positive")
    if any(lo < 0 for lo, _ in padding):
        raise ShapeError(f"{name}: leading padding must be non-negative, got {padding}")


def _offset_slices(kernel, stride, dilation, counts):
    """(kernel offset tuple, per-axis slices of the padded input it reads) for every offset."""
    for offs in itertools.product(*(range(k) for k in kernel)):
        yield offs, tuple(slice(o * d, o * d + s * (c - 1) + 1, s)
                          for o, d, s, c in zip(offs, dilation, stride, counts))


def _tiles(kernel, stride, dilation, padding, spatial, counts) -> bool:
    """Windows tile the (unpadded) input exactly: patches is a reshape and a transpose."""
    return all(k == s and d == 1 and lo == 0 and c * k == n
               for k, s, d, (lo, _), n, c in zip(kernel, stride, dilation, padding, spatial,
                                                 counts))


# =============================================================================================
# patches: (N, C, *S) -> (C, *K, N, *O)


def _patches_abstract(a: ShapedArray, kernel, stride, dilation, padding) -> list[ShapedArray]:
    nd = len(kernel)
    _check_params("patches", a.ndim - 2, kernel, stride, dilation, padding)
    counts = window_counts(a.shape[2:], kernel, stride, dilation, padding)
    if any(c < 1 for c in counts):
        raise ShapeError(f"patches: kernel {kernel} (dilation {dilation}) does not fit the "
                         f"padded input {a.str_short()} with padding {padding}")
    shape = (a.shape[1],) + tuple(kernel) + (a.shape[0],) + counts
    assert len(shape) == 2 + 2 * nd
    return [a.update(shape=shape)]


def _patches_impl(x: Any, kernel, stride, dilation, padding) -> list:
    xp = xp_for(x)
    nd = len(kernel)
    n, c, spatial = x.shape[0], x.shape[1], tuple(x.shape[2:])
    counts = window_counts(spatial, kernel, stride, dilation, padding)
    if _tiles(kernel, stride, dilation, padding, spatial, counts):
        split = (n, c) + tuple(v for ck in zip(counts, kernel) for v in ck)
        perm = (1,) + tuple(3 + 2 * i for i in range(nd)) + (0,) + tuple(2 + 2 * i
                                                                       for i in range(nd))
        return [xp.ascontiguousarray(xp.transpose(x.reshape(split), perm))]
    if any(lo or hi > 0 for lo, hi in padding):
        full = xp.zeros((n, c) + tuple(s + lo + max(hi, 0) for s, (lo, hi)
                                       in zip(spatial, padding)), dtype=x.dtype)
        full[(slice(None),) * 2 + tuple(slice(lo, lo + s) for s, (lo, _)
                                        in zip(spatial, padding))] = x
        x = full
    xt = xp.swapaxes(x, 0, 1)  # (C, N, *S): each offset's slice lands contiguously below
    out = xp.empty((c,) + tuple(kernel) + (n,) + counts, dtype=x.dtype)
    for offs, sl in _offset_slices(kernel, stride, dilation, counts):
        out[(slice(None),) + offs] = xt[(slice(None), slice(None)) + sl]
    return [out]


patches_p = make_primitive("patches", _patches_impl, _patches_abstract)


def patches(x: Any, kernel: tuple[int, ...], stride: tuple[int, ...],
            dilation: tuple[int, ...], padding: tuple[tuple[int, int], ...]) -> Any:
    """Sliding windows of ``x`` ``(N, C, *S)`` as ``(C, *K, N, *O)`` (zero padding).

    Example:
        >>> import numpy
        >>> p = patches(numpy.arange(4.0).reshape(1, 1, 4), (2,), (1,), (1,), ((0, 0),))
        >>> p[0, :, 0].tolist()
        [[0.0, 1.0, 2.0], [1.0, 2.0, 3.0]]
    """
    params = dict(kernel=tuple(kernel), stride=tuple(stride), dilation=tuple(dilation),
                  padding=tuple(tuple(p) for p in padding))
    _patches_abstract(get_aval(x), **params)  # eager calls skip the shape rule: check here
    return bind1(patches_p, x, **params)


def _patches_batch(axis_size, vals, dims, kernel, stride, dilation, padding):
    (x,), (d,) = vals, dims
    x = _shape.moveaxis(x, d, 0)
    a = get_aval(x)
    x = _shape.reshape(x, (axis_size * a.shape[1],) + a.shape[2:])
    out = patches(x, kernel, stride, dilation, padding)
    o = get_aval(out).shape
    nd = len(kernel)
    out = _shape.reshape(out, o[:1 + nd] + (axis_size, a.shape[1]) + o[2 + nd:])
    return [out], [1 + nd]


# =============================================================================================
# fold: (C, *K, N, *O) -> (N, C, *S), the sum of every window back at its place


def _fold_abstract(a: ShapedArray, spatial, kernel, stride, dilation, padding
                   ) -> list[ShapedArray]:
    nd = len(kernel)
    check_static("fold", spatial=spatial)
    _check_params("fold", nd, kernel, stride, dilation, padding)
    counts = window_counts(spatial, kernel, stride, dilation, padding)
    if a.ndim != 2 + 2 * nd or tuple(a.shape[1:1 + nd]) != tuple(kernel) \
            or tuple(a.shape[2 + nd:]) != counts:
        raise ShapeError(f"fold: windows {a.str_short()} do not match (C, *{kernel}, N, "
                         f"*{counts}) for spatial size {spatial}")
    return [a.update(shape=(a.shape[1 + nd], a.shape[0]) + tuple(spatial))]


def _fold_impl(p: Any, spatial, kernel, stride, dilation, padding) -> list:
    xp = xp_for(p)
    nd = len(kernel)
    c, n = p.shape[0], p.shape[1 + nd]
    counts = window_counts(spatial, kernel, stride, dilation, padding)
    if _tiles(kernel, stride, dilation, padding, spatial, counts):
        perm = (1 + nd, 0) + tuple(v for i in range(nd) for v in (2 + nd + i, 1 + i))
        return [xp.ascontiguousarray(xp.transpose(p, perm)).reshape((n, c) + tuple(spatial))]
    buf = xp.zeros((c, n) + tuple(s + lo + max(hi, 0) for s, (lo, hi)
                                  in zip(spatial, padding)), dtype=p.dtype)
    for offs, sl in _offset_slices(kernel, stride, dilation, counts):
        buf[(slice(None), slice(None)) + sl] += p[(slice(None),) + offs]
    inner = buf[(slice(None),) * 2 + tuple(slice(lo, lo + s) for s, (lo, _)
                                           in zip(spatial, padding))]
    return [xp.ascontiguousarray(xp.swapaxes(inner, 0, 1))]


def fold(p: Any, spatial: tuple[int, ...], kernel: tuple[int, ...], stride: tuple[int, ...],
         dilation: tuple[int, ...], padding: tuple[tuple[int, int], ...]) -> Any:
    """Sum windows ``(C, *K, N, *O)`` back into ``(N, C, *spatial)`` (the transpose of
    :func:`patches`).

    Example:
        >>> import numpy
        >>> fold(numpy.ones((1, 2, 1, 3)), (4,), (2,), (1,), (1,), ((0, 0),)).tolist()
        [[[1.0, 2.0, 2.0, 1.0]]]
    """
    params = dict(spatial=tuple(spatial), kernel=tuple(kernel), stride=tuple(stride),
                  dilation=tuple(dilation), padding=tuple(tuple(q) for q in padding))
    _fold_abstract(get_aval(p), **params)  # eager calls skip the shape rule: check here
    return bind1(fold_p, p, **params)


def _fold_batch(axis_size, vals, dims, spatial, kernel, stride, dilation, padding):
    (p,), (d,) = vals, dims
    nd = len(kernel)
    p = _shape.moveaxis(p, d, 1 + nd)  # the batch axis just before N: (C, *K, B, N, *O)
    a = get_aval(p)
    n = a.shape[2 + nd]
    p = _shape.reshape(p, a.shape[:1 + nd] + (axis_size * n,) + a.shape[3 + nd:])
    out = fold(p, spatial, kernel, stride, dilation, padding)
    o = get_aval(out).shape
    return [_shape.reshape(out, (axis_size, n) + o[1:])], [0]


def _patches_transpose(ct, x, kernel, stride, dilation, padding):
    spatial = x.aval.shape[2:]
    return [fold(ct, spatial, kernel, stride, dilation, padding)]


def _fold_transpose(ct, p, spatial, kernel, stride, dilation, padding):
    return [patches(ct, kernel, stride, dilation, padding)]


fold_p = make_primitive("fold", _fold_impl, _fold_abstract)
deflinear(patches_p)
deflinear(fold_p)
deftranspose(patches_p, _patches_transpose)
deftranspose(fold_p, _fold_transpose)
batching.batch_rules[patches_p] = _patches_batch
batching.batch_rules[fold_p] = _fold_batch
