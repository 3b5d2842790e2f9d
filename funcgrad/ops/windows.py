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

``patches`` copies the windows out of the (padded) input, on the host with ONE strided copy
(a reshape when windows tile the input exactly); ``fold`` adds the ``prod(K)`` kernel offsets'
slices into one buffer (reshaped sums over kernel offsets, never a scatter), or, on planes of
at most ``FOLD_GEMM_MAX_PLANE`` elements, multiplies by a 0/1 window-selection matrix. Where
fewer than ``TAKE_MAX_ROW`` windows lie along the last axis (small planes, whose strided rows
are too short for NumPy's loops), both are ONE ``take`` on the host through a cached flat index
(``fold`` then sums each element's ``prod(K)`` gathered contributions).

Max pooling has its own three primitives, all in the input's ``(N, C, *S)`` layout (no window
copies): ``window_argmax`` (which element of each window is its FIRST maximum, an integer
output without derivative), ``window_gather`` (that element's value; linear in ``x``) and its
transpose ``window_scatter`` (each value back at its element, overlaps summed). The value of
a max pool is ``window_gather(x, window_argmax(x))``, so its derivative routes every window's
cotangent to one element, as PyTorch's, with no mask-and-sum over window copies. On the host
the three run over contiguous memory: the argmax scans a copy of the windows laid out with
the planes innermost, the gather and the (disjoint-window) scatter index the input's elements
by their flat positions.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any

import numpy

from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import xp_for
from funcgrad.core import bind1
from funcgrad.errors import ShapeError
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import (
    Zero,
    defjvp_zero,
    deflinear,
    jvp_rules,
    multilinear_primitives,
)
from funcgrad.interpreters.linearize import backward_pass_primitives
from funcgrad.interpreters.transpose import deftranspose
from funcgrad.ops import shape as _shape
from funcgrad.ops._util import check_static, make_primitive

__all__ = ["fold", "fold_p", "patches", "patches_p", "window_argmax", "window_argmax_p",
           "window_counts", "window_gather", "window_gather_p", "window_scatter",
           "window_scatter_p"]


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



@functools.lru_cache(maxsize=64)
def _reads(spatial, kernel, stride, dilation, padding) -> numpy.ndarray:
    """``(prod(K), prod(O))``: the flat index, in one input plane of shape ``spatial``, of
    the element window ``o`` reads at kernel offset ``k``, or -1 where it reads padding.
    Host memory, read-only (cached)."""
    counts = window_counts(spatial, kernel, stride, dilation, padding)
    where = numpy.full(tuple(s + lo + max(hi, 0) for s, (lo, hi) in zip(spatial, padding)), -1)
    where[tuple(slice(lo, lo + s) for s, (lo, _) in zip(spatial, padding))] = \
        numpy.arange(math.prod(spatial)).reshape(spatial)
    reads = numpy.stack([where[sl].reshape(-1)
                         for _, sl in _offset_slices(kernel, stride, dilation, counts)])
    reads.setflags(write=False)
    return reads


#: On the host, ``patches`` and ``fold`` move elements by ONE ``take`` through a cached flat
#: index when fewer than this many windows lie along the last axis: their strided copies and
#: adds would run over rows that short, bound by NumPy's per-row cost (~10 ns), where a take
#: costs under 1 ns per element. (Index arrays above ``TAKE_MAX_INDEX`` entries are not cached.)
TAKE_MAX_ROW = 16
TAKE_MAX_INDEX = 1 << 20
# (Every cached index is in range by construction; ``mode="wrap"`` is take's fastest mode.)


def _take_path(counts, size: int) -> bool:
    return counts[-1] < TAKE_MAX_ROW and size <= TAKE_MAX_INDEX


@functools.lru_cache(maxsize=8)
def _patches_index(n: int, spatial, kernel, stride, dilation, padding) -> numpy.ndarray:
    """``(prod(K) * n * prod(O),)`` flat index into a channel's row ``(n * prod(S) + 1,)``
    (its planes, then a zero): the element each window reads at each kernel offset, the zero
    where it reads padding. Read-only (cached)."""
    reads = _reads(spatial, kernel, stride, dilation, padding)[:, None, :]
    size = math.prod(spatial)
    index = numpy.where(reads >= 0, reads + (numpy.arange(n) * size)[:, None], n * size)
    index = index.reshape(-1).astype(numpy.intp)
    index.setflags(write=False)
    return index


@functools.lru_cache(maxsize=8)
def _fold_index(n: int, spatial, kernel, stride, dilation, padding) -> numpy.ndarray:
    """``(prod(K), n * prod(S))`` flat index into a channel's windows ``(prod(K) * n *
    prod(O) + 1,)`` (then a zero): which window element lands on each input element at each
    kernel offset (at most one does), the zero where none. Read-only (cached)."""
    reads = _reads(spatial, kernel, stride, dilation, padding)
    kt, ot = reads.shape
    size = math.prod(spatial)
    index = numpy.full((kt, n, size), kt * n * ot, dtype=numpy.intp)
    for k in range(kt):
        o = numpy.nonzero(reads[k] >= 0)[0]
        index[k][:, reads[k, o]] = (k * n + numpy.arange(n)[:, None]) * ot + o
    index = index.reshape(kt, n * size)
    index.setflags(write=False)
    return index


def _rows_with_zero(x: numpy.ndarray) -> numpy.ndarray:
    """``x`` ``(A, *rest)``, any layout, copied into rows ``(A, prod(rest) + 1)`` that end
    in a zero (what an index names for padding)."""
    rows = numpy.empty((x.shape[0], math.prod(x.shape[1:]) + 1), dtype=x.dtype)
    rows[:, -1] = 0
    rows[:, :-1].reshape(x.shape)[...] = x
    return rows


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
    padded = tuple(s + lo + max(hi, 0) for s, (lo, hi) in zip(spatial, padding))
    inner = (slice(None),) * 2 + tuple(slice(lo, lo + s) for s, (lo, _) in zip(spatial, padding))
    if xp is numpy and _take_path(counts, math.prod(kernel) * n * math.prod(counts)):
        index = _patches_index(n, spatial, kernel, stride, dilation, padding)
        return [_rows_with_zero(xp.swapaxes(x, 0, 1)).take(index, axis=1, mode="wrap").reshape(
            (c,) + tuple(kernel) + (n,) + counts)]
    if xp is numpy:
        # (C, N, *S) padded, then every window read by ONE strided copy (one call instead
        # of one per kernel offset)
        if padded == spatial:
            xt = xp.swapaxes(x, 0, 1)
        else:
            xt = xp.zeros((c, n) + padded, dtype=x.dtype)
            xt[inner] = xp.swapaxes(x, 0, 1)
        st = xt.strides
        view = xp.lib.stride_tricks.as_strided(
            xt, (c,) + tuple(kernel) + (n,) + counts,
            (st[0],) + tuple(a * d for a, d in zip(st[2:], dilation)) + (st[1],)
            + tuple(a * v for a, v in zip(st[2:], stride)), writeable=False)
        return [xp.ascontiguousarray(view)]
    if padded != spatial:
        full = xp.zeros((n, c) + padded, dtype=x.dtype)
        full[inner] = x
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


#: Up to this many elements per input plane, ``fold`` is ONE matrix product with a 0/1
#: window-selection matrix: on tiny planes (the 4x4 maps of a small CNN) the strided adds
#: run over rows of a few elements, and NumPy's per-row cost makes them several times slower
#: than the product's ``2 * plane`` flops per window element.
FOLD_GEMM_MAX_PLANE = 32


@functools.lru_cache(maxsize=64)
def _selection(spatial, kernel, stride, dilation, padding, dtype) -> numpy.ndarray:
    """``(prod(K) * prod(O), prod(spatial))`` 0/1 matrix: row ``(k, o)`` has a one at the
    input element that window ``o`` reads at kernel offset ``k`` (none where it reads
    padding). Host memory, read-only (cached)."""
    reads = _reads(spatial, kernel, stride, dilation, padding)
    (kt, ot), size = reads.shape, math.prod(spatial)
    sel = numpy.zeros((kt, ot, size), dtype=numpy.dtype(dtype))
    for k in range(kt):
        rows = numpy.nonzero(reads[k] >= 0)[0]
        sel[k, rows, reads[k, rows]] = 1
    sel = sel.reshape(kt * ot, size)
    sel.setflags(write=False)
    return sel


def _fold_impl(p: Any, spatial, kernel, stride, dilation, padding) -> list:
    xp = xp_for(p)
    nd = len(kernel)
    c, n = p.shape[0], p.shape[1 + nd]
    counts = window_counts(spatial, kernel, stride, dilation, padding)
    if _tiles(kernel, stride, dilation, padding, spatial, counts):
        perm = (1 + nd, 0) + tuple(v for i in range(nd) for v in (2 + nd + i, 1 + i))
        return [xp.ascontiguousarray(xp.transpose(p, perm)).reshape((n, c) + tuple(spatial))]
    take = xp is numpy and p.dtype.kind in "fciu" \
        and _take_path(counts, math.prod(kernel) * n * math.prod(spatial))
    # (a take reads C-contiguous windows faster than the product's transposing copy; other
    # layouts, e.g. a (N, *O, C, *K)-ordered product, copy faster into the product's)
    if xp is numpy and p.dtype.kind == "f" and math.prod(spatial) <= FOLD_GEMM_MAX_PLANE \
            and not (take and p.flags.c_contiguous):
        kt, ot = math.prod(kernel), math.prod(counts)
        q = xp.ascontiguousarray(xp.transpose(p.reshape(c, kt, n, ot), (2, 0, 1, 3)))
        q = q.reshape(n * c, kt * ot)
        if xp.isfinite(q).all():  # (an inf times the selection's zeros would make NaNs)
            sel = _selection(tuple(spatial), kernel, stride, dilation, padding, p.dtype.str)
            return [xp.matmul(q, sel).reshape((n, c) + tuple(spatial))]
    if take:
        # each input element gathers what each kernel offset puts on it, summed over offsets
        index = _fold_index(n, tuple(spatial), kernel, stride, dilation, padding)
        got = _rows_with_zero(p).take(index.reshape(-1), axis=1, mode="wrap").reshape(
            (c,) + index.shape)
        out = got.sum(axis=1, dtype=p.dtype).reshape((c, n) + tuple(spatial))
        return [xp.swapaxes(out, 0, 1)]
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


# =============================================================================================
# window_argmax / window_gather / window_scatter: max pooling in the (N, C, *S) layout
#
# No padding parameter: a max pool pads with the dtype's lowest value itself. Windows are the
# ``prod(K)`` strided slices of the input, one per kernel offset, each ``(N, C, *O)``; every
# impl runs one pass per offset over output-sized arrays.

_NO_PAD = ((0, 0),)


def _window_slices(spatial, kernel, stride, dilation) -> list[tuple]:
    counts = window_counts(spatial, kernel, stride, dilation, _NO_PAD * len(kernel))
    lead = (slice(None), slice(None))
    return [lead + sl for _, sl in _offset_slices(kernel, stride, dilation, counts)]


def _index_dtype(kt: int) -> Any:
    return numpy.dtype(numpy.uint8 if kt < 256 else numpy.int32)


#: signed integer of each float width: the bit pattern of a float selected by a mask
_SAME_WIDTH_INT = {2: "int16", 4: "int32", 8: "int64"}


def _bit_select(xp: Any, mask: Any, v: Any) -> Any | None:
    """The bits of ``where(mask, v, 0)`` as a same-width integer array (None where that
    does not apply: not a float on the host). Exact for every value (NaN, inf, -0.0) and
    branch-free: ``numpy.where`` with a random mask runs about ten times slower."""
    dt = v.dtype
    if xp is not numpy or dt.kind != "f" or dt.itemsize not in _SAME_WIDTH_INT:
        return None
    it = numpy.dtype(_SAME_WIDTH_INT[dt.itemsize])
    bits = xp.negative(mask, dtype=it)  # True -> all ones, False -> 0
    return xp.bitwise_and(bits, v.view(it), out=bits)


def _check_window_params(name: str, a: ShapedArray, kernel, stride, dilation) -> tuple:
    nd = a.ndim - 2
    if nd < 1:
        raise ShapeError(f"{name}: expected (N, C, *spatial), got {a.str_short()}")
    _check_params(name, nd, kernel, stride, dilation, _NO_PAD * len(kernel))
    counts = window_counts(a.shape[2:], kernel, stride, dilation, _NO_PAD * nd)
    if any(c < 1 for c in counts):
        raise ShapeError(f"{name}: kernel {kernel} (dilation {dilation}) does not fit the "
                         f"input {a.str_short()}")
    return counts


# -- host paths: flat element indices, every pass over contiguous memory ----------------------
#
# NumPy's strided loops pay a fixed cost per innermost row; over the small planes of a CNN
# (rows of 2-8 elements) the window views above are bound by it. On the host the windows are
# read instead by ONE strided copy whose inner loop runs across the planes, and gathered or
# stored through flat element indices, with the input in whichever of (N, C) and (C, N) order
# its memory has (a convolution's output is (C, N)-ordered in memory).


def _planes_first(x: numpy.ndarray) -> tuple[numpy.ndarray, bool]:
    """``x`` ``(N, C, *S)`` as a C-contiguous array, with its two leading axes swapped (and
    True) where that is its memory order; a copy only if it is neither."""
    if x.flags.c_contiguous:
        return x, False
    swapped = x.swapaxes(0, 1)
    if swapped.flags.c_contiguous:
        return swapped, True
    return numpy.ascontiguousarray(x), False


@functools.lru_cache(maxsize=64)
def _window_offsets(spatial, kernel, stride, dilation) -> tuple[numpy.ndarray, numpy.ndarray]:
    """(flat index of each window's first element, ``prod(O)``; flat offset of each kernel
    element from it, ``prod(K)``) within one C-contiguous plane of shape ``spatial``.
    Read-only (cached)."""
    plane = numpy.arange(math.prod(spatial)).reshape(spatial)
    counts = window_counts(spatial, kernel, stride, dilation, _NO_PAD * len(kernel))
    starts = plane[tuple(slice(0, s * (c - 1) + 1, s) for s, c in zip(stride, counts))]
    offs = plane[tuple(slice(0, d * (k - 1) + 1, d) for k, d in zip(kernel, dilation))]
    starts, offs = starts.reshape(-1), offs.reshape(-1)
    starts.setflags(write=False)
    offs.setflags(write=False)
    return starts, offs


@functools.lru_cache(maxsize=16)
def _window_bases(planes: int, spatial, kernel, stride, dilation) -> numpy.ndarray:
    """``(planes, prod(O))`` flat index of every window's first element in a C-contiguous
    ``(planes, *spatial)`` array. Read-only (cached: only up to ``TAKE_MAX_INDEX``)."""
    starts, _ = _window_offsets(spatial, kernel, stride, dilation)
    base = numpy.arange(planes)[:, None] * math.prod(spatial) + starts
    base.setflags(write=False)
    return base


def _flat_index(idx: numpy.ndarray, spatial, kernel, stride, dilation) -> numpy.ndarray:
    """Flat index, in a C-contiguous ``(A, B, *spatial)`` array, of the element ``idx``
    ``(A, B, *O)`` names in each window."""
    _, offs = _window_offsets(spatial, kernel, stride, dilation)
    planes = idx.shape[0] * idx.shape[1]
    flat = offs.take(idx.reshape(planes, math.prod(idx.shape[2:])), mode="wrap")
    if flat.size <= TAKE_MAX_INDEX:
        flat += _window_bases(planes, spatial, kernel, stride, dilation)
    else:  # (not cached: as large as the output)
        starts, _ = _window_offsets(spatial, kernel, stride, dilation)
        flat += starts
        flat += numpy.arange(0, planes * math.prod(spatial), math.prod(spatial))[:, None]
    return flat.reshape(idx.shape)


def _argmax_host(x: numpy.ndarray, kernel, stride, dilation) -> numpy.ndarray:
    lead, swapped = _planes_first(x)
    spatial = tuple(x.shape[2:])
    planes = lead.shape[0] * lead.shape[1]
    counts = window_counts(spatial, kernel, stride, dilation, _NO_PAD * len(kernel))
    kt, ot = math.prod(kernel), math.prod(counts)
    # (*K, *O, planes): one copy, its inner loop across the planes
    st = lead.strides[2:]
    view = numpy.ndarray(  # (as_strided costs several times more on small arrays)
        tuple(kernel) + counts + (planes,), lead.dtype, lead, 0,
        tuple(a * d for a, d in zip(st, dilation)) + tuple(a * s for a, s in zip(st, stride))
        + (lead.strides[1],))
    w = numpy.ascontiguousarray(view).reshape(kt, ot * planes)
    idt = _index_dtype(kt)
    top = w[0].copy()
    rank = numpy.zeros(top.shape, dtype=idt)
    later = numpy.empty(top.shape, dtype=bool)
    step = numpy.empty(top.shape, dtype=idt)
    for k in range(1, kt):
        # strictly greater: the first maximum keeps its place (a NaN compares false)
        numpy.greater(w[k], top, out=later)
        numpy.maximum(top, w[k], out=top)  # NaN propagates
        numpy.multiply(later, k, out=step, dtype=idt)
        numpy.maximum(rank, step, out=rank)  # k grows: a later hit overrides
    if x.dtype.kind == "f":
        nan = numpy.isnan(top)
        if nan.any():  # a window with a NaN: its first NaN
            cols = numpy.nonzero(nan)[0]
            rank[cols] = numpy.isnan(w[:, cols]).argmax(axis=0)
    out = numpy.ascontiguousarray(rank.reshape(ot, planes).T).reshape(
        lead.shape[:2] + counts)
    return out.swapaxes(0, 1) if swapped else out


# -- window_argmax: (N, C, *S) -> (N, C, *O), index of the first maximum in each window ------


def _argmax_abstract(a: ShapedArray, kernel, stride, dilation) -> list[ShapedArray]:
    counts = _check_window_params("window_argmax", a, kernel, stride, dilation)
    if a.dtype.kind not in "biuf":
        raise ShapeError(f"window_argmax: needs a real dtype, got {a.str_short()}")
    return [a.update(shape=a.shape[:2] + counts, dtype=_index_dtype(math.prod(kernel)),
                     weak_type=False)]


def _window_stack(xp: Any, x: Any, kernel, stride, dilation) -> Any:
    """The windows of ``x`` ``(N, C, *S)`` as one contiguous ``(prod(K), N, C, *O)`` array
    (one strided copy per kernel offset): every later pass then runs over contiguous memory,
    several times faster than over the strided window views."""
    spatial = tuple(x.shape[2:])
    slices = _window_slices(spatial, kernel, stride, dilation)
    counts = window_counts(spatial, kernel, stride, dilation, _NO_PAD * len(kernel))
    w = xp.empty((len(slices),) + tuple(x.shape[:2]) + counts, dtype=x.dtype)
    for k, sl in enumerate(slices):
        w[k] = x[sl]
    return w


def _argmax_impl(x: Any, kernel, stride, dilation) -> list:
    xp = xp_for(x)
    if xp is numpy:
        return [_argmax_host(x, kernel, stride, dilation)]
    w = _window_stack(xp, x, kernel, stride, dilation)
    kt = w.shape[0]
    top = w.max(axis=0)  # NaN propagates: a NaN is its window's maximum
    idt = _index_dtype(kt)
    # rank of the first maximum: max over offsets k of (is-maximum) * (kt - k)
    rank = xp.zeros(top.shape, dtype=idt)
    hit = xp.empty(top.shape, dtype=bool)
    nan = xp.empty(top.shape, dtype=bool) if x.dtype.kind == "f" else None
    for k in range(kt):
        xp.equal(w[k], top, out=hit)
        if nan is not None:
            xp.logical_or(hit, xp.isnan(w[k], out=nan), out=hit)
        xp.maximum(rank, xp.multiply(hit, kt - k, dtype=idt), out=rank)
    return [xp.subtract(kt, rank, dtype=idt)]


window_argmax_p = make_primitive("window_argmax", _argmax_impl, _argmax_abstract)


def window_argmax(x: Any, kernel: tuple[int, ...], stride: tuple[int, ...],
                  dilation: tuple[int, ...]) -> Any:
    """Row-major index, within each window of ``x`` ``(N, C, *S)``, of its FIRST maximum
    (a NaN counts as the maximum), as ``(N, C, *O)`` integers (no padding: pad first).

    Example:
        >>> import numpy
        >>> window_argmax(numpy.array([[[1.0, 3.0, 3.0, 2.0]]]), (2,), (2,), (1,)).tolist()
        [[[1, 0]]]
    """
    params = dict(kernel=tuple(kernel), stride=tuple(stride), dilation=tuple(dilation))
    _argmax_abstract(get_aval(x), **params)
    return bind1(window_argmax_p, x, **params)


def _argmax_batch(axis_size, vals, dims, kernel, stride, dilation):
    (x,), (d,) = vals, dims
    x = _shape.moveaxis(x, d, 0)
    a = get_aval(x)
    out = window_argmax(_shape.reshape(x, (axis_size * a.shape[1],) + a.shape[2:]), kernel,
                        stride, dilation)
    o = get_aval(out).shape
    return [_shape.reshape(out, (axis_size, a.shape[1]) + o[1:])], [0]


defjvp_zero(window_argmax_p)
batching.batch_rules[window_argmax_p] = _argmax_batch


# -- window_gather: x (N, C, *S), idx (N, C, *O) -> (N, C, *O), linear in x -------------------


def _check_index(name: str, idx: ShapedArray, shape: tuple) -> None:
    if idx.dtype.kind not in "iu" or tuple(idx.shape) != tuple(shape):
        raise ShapeError(f"{name}: indices must be integers of shape {tuple(shape)}, got "
                         f"{idx.str_short()}")


def _gather_abstract(a: ShapedArray, idx: ShapedArray, kernel, stride, dilation
                     ) -> list[ShapedArray]:
    counts = _check_window_params("window_gather", a, kernel, stride, dilation)
    _check_index("window_gather", idx, a.shape[:2] + counts)
    return [a.update(shape=a.shape[:2] + counts)]


def _gather_impl(x: Any, idx: Any, kernel, stride, dilation) -> list:
    xp = xp_for(x, idx)
    if xp is numpy:
        lead, swapped = _planes_first(x)
        flat = _flat_index(idx.swapaxes(0, 1) if swapped else idx, tuple(x.shape[2:]),
                           kernel, stride, dilation)
        out = lead.reshape(-1).take(flat, mode="wrap")
        return [out.swapaxes(0, 1) if swapped else out]
    w = _window_stack(xp, x, kernel, stride, dilation)
    acc = None
    for k in range(w.shape[0]):
        hit = xp.equal(idx, k)
        bits = _bit_select(xp, hit, w[k])
        if bits is None:
            acc = xp.where(hit, w[k], w[k] if acc is None else acc)
        else:  # one-hot masks: OR-ing the selected bit patterns picks exactly one value
            acc = bits if acc is None else xp.bitwise_or(acc, bits, out=acc)
    if acc.dtype != x.dtype:
        acc = acc.view(x.dtype)
    return [acc]


window_gather_p = make_primitive("window_gather", _gather_impl, _gather_abstract)
# It drops some of its operands' values (see linearize.backward_pass_primitives).
backward_pass_primitives.add(window_gather_p)


def window_gather(x: Any, idx: Any, kernel: tuple[int, ...], stride: tuple[int, ...],
                  dilation: tuple[int, ...]) -> Any:
    """The element of each window of ``x`` ``(N, C, *S)`` that ``idx`` ``(N, C, *O)`` names
    (row-major within the window, as :func:`window_argmax` gives); linear in ``x``.

    Example:
        >>> import numpy
        >>> x = numpy.array([[[1.0, 3.0, 3.0, 2.0]]])
        >>> window_gather(x, window_argmax(x, (2,), (2,), (1,)), (2,), (2,), (1,)).tolist()
        [[[3.0, 3.0]]]
    """
    params = dict(kernel=tuple(kernel), stride=tuple(stride), dilation=tuple(dilation))
    _gather_abstract(get_aval(x), get_aval(idx), **params)
    return bind1(window_gather_p, x, idx, **params)


# -- window_scatter: ct (N, C, *O), idx -> (N, C, *spatial), the transpose of window_gather ---


def _scatter_abstract(a: ShapedArray, idx: ShapedArray, spatial, kernel, stride, dilation
                      ) -> list[ShapedArray]:
    check_static("window_scatter", spatial=spatial)
    out = a.update(shape=a.shape[:2] + tuple(spatial))
    counts = _check_window_params("window_scatter", out, kernel, stride, dilation)
    if tuple(a.shape[2:]) != counts:
        raise ShapeError(f"window_scatter: values {a.str_short()} do not match the "
                         f"{counts} windows of spatial size {spatial}")
    _check_index("window_scatter", idx, a.shape)
    return [out]


def _scatter_impl(ct: Any, idx: Any, spatial, kernel, stride, dilation) -> list:
    xp = xp_for(ct, idx)
    spatial = tuple(spatial)
    overlap = any(s < d * (k - 1) + 1 for k, s, d in zip(kernel, stride, dilation))
    if xp is numpy and not overlap:
        # each element is in at most one window: one indexed store into zeros, in the
        # cotangent's memory order
        lead, swapped = _planes_first(ct)
        flat = _flat_index(idx.swapaxes(0, 1) if swapped else idx, spatial, kernel, stride,
                           dilation)
        out = xp.zeros(lead.shape[:2] + spatial, dtype=ct.dtype)
        out.reshape(-1)[flat.reshape(-1)] = lead.reshape(-1)
        return [out.swapaxes(0, 1) if swapped else out]
    parts = []
    for k in range(math.prod(kernel)):
        hit = xp.equal(idx, k)
        bits = _bit_select(xp, hit, ct)
        parts.append(xp.where(hit, ct, 0) if bits is None else bits.view(ct.dtype))
    counts = tuple(ct.shape[2:])
    covered = not overlap and all(c * k == n for c, k, n in zip(counts, kernel, spatial))
    # windows that tile the input write every element exactly once: no zeros needed
    out = (xp.empty if covered and all(d == 1 for d in dilation) else xp.zeros)(
        tuple(ct.shape[:2]) + spatial, dtype=ct.dtype)
    for part, sl in zip(parts, _window_slices(spatial, kernel, stride, dilation)):
        if overlap:
            xp.add(out[sl], part, out=out[sl])
        else:  # disjoint windows: each element is written at most once
            out[sl] = part
    return [out]


window_scatter_p = make_primitive("window_scatter", _scatter_impl, _scatter_abstract)


def window_scatter(ct: Any, idx: Any, spatial: tuple[int, ...], kernel: tuple[int, ...],
                   stride: tuple[int, ...], dilation: tuple[int, ...]) -> Any:
    """Each value of ``ct`` ``(N, C, *O)`` put at the element ``idx`` names in its window of
    an ``(N, C, *spatial)`` array of zeros, overlaps summed (transpose of
    :func:`window_gather`).

    Example:
        >>> import numpy
        >>> idx = numpy.array([[[1, 0]]], dtype=numpy.uint8)
        >>> window_scatter(numpy.array([[[5.0, 7.0]]]), idx, (4,), (2,), (2,), (1,)).tolist()
        [[[0.0, 5.0, 7.0, 0.0]]]
    """
    params = dict(spatial=tuple(spatial), kernel=tuple(kernel), stride=tuple(stride),
                  dilation=tuple(dilation))
    _scatter_abstract(get_aval(ct), get_aval(idx), **params)
    return bind1(window_scatter_p, ct, idx, **params)


def _gather_jvp(primals, tangents, **params):
    x, idx = primals
    ans = bind1(window_gather_p, x, idx, **params)
    t = tangents[0]
    if type(t) is Zero:
        return [ans], [Zero.from_primal(ans)]
    return [ans], [bind1(window_gather_p, t, idx, **params)]


def _scatter_jvp(primals, tangents, **params):
    ct, idx = primals
    ans = bind1(window_scatter_p, ct, idx, **params)
    t = tangents[0]
    if type(t) is Zero:
        return [ans], [Zero.from_primal(ans)]
    return [ans], [bind1(window_scatter_p, t, idx, **params)]


def _gather_transpose(ct, x, idx, kernel, stride, dilation):
    return [window_scatter(ct, idx, x.aval.shape[2:], kernel, stride, dilation), None]


def _scatter_transpose(ct, p, idx, spatial, kernel, stride, dilation):
    return [window_gather(ct, idx, kernel, stride, dilation), None]


def _both_batched(axis_size, vals, dims):
    """Both operands with the batch axis first (an unbatched one broadcast), N and batch
    merged: (B * N, C, ...)."""
    out = []
    for v, d in zip(vals, dims):
        if d is None:
            a = get_aval(v)
            v = _shape.broadcast_to(v, (axis_size,) + a.shape)
        else:
            v = _shape.moveaxis(v, d, 0)
        a = get_aval(v)
        out.append(_shape.reshape(v, (axis_size * a.shape[1],) + a.shape[2:]))
    return out


def _unmerge(out, axis_size):
    o = get_aval(out).shape
    return [_shape.reshape(out, (axis_size, o[0] // axis_size) + o[1:])], [0]


def _gather_batch(axis_size, vals, dims, kernel, stride, dilation):
    x, idx = _both_batched(axis_size, vals, dims)
    return _unmerge(window_gather(x, idx, kernel, stride, dilation), axis_size)


def _scatter_batch(axis_size, vals, dims, spatial, kernel, stride, dilation):
    ct, idx = _both_batched(axis_size, vals, dims)
    return _unmerge(window_scatter(ct, idx, spatial, kernel, stride, dilation), axis_size)


for _p, _jvp, _tr, _bt in ((window_gather_p, _gather_jvp, _gather_transpose, _gather_batch),
                           (window_scatter_p, _scatter_jvp, _scatter_transpose,
                            _scatter_batch)):
    jvp_rules[_p] = _jvp
    multilinear_primitives.add(_p)  # linear in the values, the indices held fixed
    deftranspose(_p, _tr)
    batching.batch_rules[_p] = _bt
