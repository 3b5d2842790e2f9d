"""Convolutions for ``lax``: ``conv_general_dilated`` and the ``conv*`` helpers around it.

No new primitive: a convolution is the ``patches`` window primitive (im2col) followed by ONE
``dot_general`` over the whole batch; a convolution with ``lhs_dilation`` (a transposed
convolution) is one ``dot_general`` followed by the ``fold`` primitive (col2im), so the zeros
that dilation inserts are never multiplied. Feature groups and batch groups are batch axes of
that ``dot_general``. Derivatives, batching, jit and Taylor series all come from the rules of
``patches``/``fold``/``dot_general``/``pad``/``rev``/``slice``/``transpose``.

Internally operands are brought to the canonical layouts ``(N, C, *spatial)`` (lhs),
``(O, I, *kernel)`` (rhs) and ``(N, O, *spatial)`` (output) by one ``transpose`` each, as the
dimension numbers say.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import funcgrad.ops.linalg as _la
import funcgrad.ops.reductions as _red
import funcgrad.ops.shape as _sh
from funcgrad.avals import get_aval
from funcgrad.backend import operator_index
from funcgrad.errors import ShapeError
from funcgrad.lax._common import aval_of, static_int, static_ints
from funcgrad.lax._reductions import _check_precision, _contract_dtypes, dot_general
from funcgrad.numpy._creation import with_out_sharding
from funcgrad.ops.windows import fold as _fold
from funcgrad.ops.windows import patches as _patches

Array = Any

__all__ = [
    "ConvDimensionNumbers", "conv_dimension_numbers", "conv_general_permutations",
    "conv_general_dilated", "conv_general_dilated_patches", "conv_general_dilated_local", "conv",
    "conv_with_general_padding",
    "conv_transpose",
    "padtype_to_pads", "conv_general_shape_tuple", "conv_shape_tuple",
    "conv_transpose_shape_tuple",
]


class ConvDimensionNumbers(NamedTuple):
    """Where the batch/feature/spatial axes of a convolution's operands and result are.

    ``lhs_spec`` is ``(batch axis, feature axis, *spatial axes)`` of the input, ``rhs_spec``
    ``(output-feature axis, input-feature axis, *spatial axes)`` of the kernel and
    ``out_spec`` ``(batch axis, feature axis, *spatial axes)`` of the result, as in JAX.

    Example:
        >>> from funcgrad import lax
        >>> lax.conv_dimension_numbers((1, 5, 5, 3), (2, 2, 3, 4), ("NHWC", "HWIO", "NHWC"))
        ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
    """

    lhs_spec: tuple[int, ...]
    rhs_spec: tuple[int, ...]
    out_spec: tuple[int, ...]


ConvGeneralDilatedDimensionNumbers = tuple[str, str, str] | ConvDimensionNumbers | None


def conv_general_permutations(dimension_numbers: Sequence[str]
                              ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """The axis permutations that string dimension numbers such as ``("NCHW", "OIHW",
    "NCHW")`` describe; spatial axes are matched by letter, in the kernel's order.

    Example:
        >>> from funcgrad import lax
        >>> lax.conv_general_permutations(("NWC", "WIO", "NCW"))
        ((0, 2, 1), (2, 1, 0), (0, 1, 2))
    """
    specs = tuple(dimension_numbers)
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for spec, (a, b), what in zip(specs, pairs, ("lhs", "rhs", "out")):
        if spec.count(a) != 1 or spec.count(b) != 1:
            raise TypeError(f"conv_general_permutations: the {what} spec {spec!r} must contain "
                            f"{a!r} and {b!r} exactly once")
        if len(set(spec)) != len(spec):
            raise TypeError(f"conv_general_permutations: the {what} spec {spec!r} repeats a "
                            "letter")
    lhs_spec, rhs_spec, out_spec = specs
    if not (set(lhs_spec) - {"N", "C"} == set(rhs_spec) - {"O", "I"}
            == set(out_spec) - {"N", "C"}):
        raise TypeError("conv_general_permutations: the spatial letters of "
                        f"{specs!r} differ between lhs, rhs and out")

    def perm(spec: str, pair: tuple[str, str]) -> tuple[int, ...]:
        spatial = [i for i, c in enumerate(spec) if c not in pair]
        if spec is not rhs_spec:
            spatial.sort(key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)

    return perm(lhs_spec, pairs[0]), perm(rhs_spec, pairs[1]), perm(out_spec, pairs[2])


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                           dimension_numbers: Any) -> ConvDimensionNumbers:
    """``dimension_numbers`` (``None``, a :class:`ConvDimensionNumbers` or a triple of strings
    such as ``("NHWC", "HWIO", "NHWC")``) as a :class:`ConvDimensionNumbers`.

    ``None`` means ``NCHW``/``OIHW``/``NCHW`` (batch and features first) in any rank.

    Example:
        >>> from funcgrad import lax
        >>> lax.conv_dimension_numbers((1, 3, 8), (4, 3, 2), None)
        ConvDimensionNumbers(lhs_spec=(0, 1, 2), rhs_spec=(0, 1, 2), out_spec=(0, 1, 2))
    """
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"conv_dimension_numbers: lhs and rhs must have the same rank, got "
                        f"shapes {tuple(lhs_shape)} and {tuple(rhs_shape)}")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, tuple | list) and len(dimension_numbers) == 3:
        if all(isinstance(s, str) for s in dimension_numbers):
            for s, what in zip(dimension_numbers, ("lhs", "rhs", "out")):
                if len(s) != len(lhs_shape):
                    raise TypeError(f"conv_dimension_numbers: the {what} spec {s!r} has "
                                    f"{len(s)} letters for operands of rank {len(lhs_shape)}")
            return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))
        if all(isinstance(s, tuple | list) for s in dimension_numbers):
            return ConvDimensionNumbers(*(tuple(static_ints("conv", s, "dimension_numbers"))
                                          for s in dimension_numbers))
    raise TypeError("conv_dimension_numbers: dimension_numbers must be None, a "
                    "ConvDimensionNumbers or a triple of strings like ('NCHW', 'OIHW', "
                    f"'NCHW'), got {dimension_numbers!r}")


_PADDING_NAMES = ("VALID", "SAME", "SAME_LOWER")


def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int],
                    window_strides: Sequence[int], padding: Any) -> list[tuple[int, int]]:
    """``(lo, hi)`` padding per axis for ``'VALID'``, ``'SAME'`` or ``'SAME_LOWER'`` (as JAX).

    ``SAME`` pads so that the output has ``ceil(in / stride)`` positions, the odd element of
    the total at the end (``SAME_LOWER``: at the start). A sequence of pairs passes through.

    Example:
        >>> from funcgrad import lax
        >>> lax.padtype_to_pads((5, 6), (3, 2), (2, 1), "SAME")
        [(1, 1), (0, 1)]
    """
    if not isinstance(padding, str):
        return [tuple(p) for p in padding]
    mode = padding.upper()
    if mode not in _PADDING_NAMES:
        raise ValueError(f"padding must be one of {_PADDING_NAMES} or a sequence of (lo, hi) "
                         f"pairs, got {padding!r}")
    if mode == "VALID":
        return [(0, 0)] * len(in_shape)
    pads = []
    for n, w, s in zip(in_shape, window_shape, window_strides):
        total = max((-(-n // s) - 1) * s + w - n, 0)
        small, big = total // 2, total - total // 2
        pads.append((small, big) if mode == "SAME" else (big, small))
    return pads


def _seq(name: str, v: Any, nd: int, arg: str, default: int = 1) -> tuple[int, ...]:
    if v is None:
        return (default,) * nd
    out = static_ints(name, v, arg)
    if len(out) != nd:
        raise ValueError(f"lax.{name}: {arg} needs one entry per spatial axis ({nd}), got "
                         f"{tuple(v)}")
    if any(s < 1 for s in out):
        raise ValueError(f"lax.{name}: {arg} must be positive, got {out}")
    return out


def _pairs(name: str, padding: Any, nd: int) -> tuple[tuple[int, int], ...]:
    try:
        pads = tuple((operator_index(lo), operator_index(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise ValueError(f"lax.{name}: padding must be 'SAME', 'VALID', 'SAME_LOWER' or a "
                         f"sequence of (lo, hi) int pairs, got {padding!r}") from None
    if len(pads) != nd:
        raise ValueError(f"lax.{name}: padding needs one (lo, hi) pair per spatial axis "
                         f"({nd}), got {padding!r}")
    return pads


def _dilate(n: int, d: int) -> int:
    return 0 if n == 0 else 1 + d * (n - 1)


def conv_general_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                             window_strides: Sequence[int], padding: Any,
                             dimension_numbers: Any) -> tuple[int, ...]:
    """The result shape of :func:`conv_general_dilated` without dilation (as JAX).

    Example:
        >>> from funcgrad import lax
        >>> lax.conv_general_shape_tuple((1, 8, 8, 3), (3, 3, 3, 4), (2, 2), "SAME",
        ...                              ("NHWC", "HWIO", "NHWC"))
        (1, 4, 4, 4)
    """
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lhs = tuple(lhs_shape[i] for i in dn.lhs_spec)
    rhs = tuple(rhs_shape[i] for i in dn.rhs_spec)
    pads = padtype_to_pads(lhs[2:], rhs[2:], window_strides, padding)
    out = conv_shape_tuple(lhs, rhs, window_strides, pads)
    shape = [0] * len(out)
    for canonical, axis in enumerate(dn.out_spec):
        shape[axis] = out[canonical]
    return tuple(shape)


def conv_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                     strides: Sequence[int], pads: Any, batch_group_count: int = 1
                     ) -> tuple[int, ...]:
    """The ``(N, O, *spatial)`` result shape of a convolution of ``(N, C, *S)`` by
    ``(O, I, *K)`` (as JAX).

    Example:
        >>> from funcgrad import lax
        >>> lax.conv_shape_tuple((2, 3, 9), (4, 3, 3), (2,), [(1, 1)])
        (2, 4, 5)
    """
    pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    spatial = tuple(max(0, (n + lo + hi - k) // s + 1) if n + lo + hi >= k else 0
                    for n, k, s, (lo, hi) in zip(lhs_shape[2:], rhs_shape[2:], strides, pads))
    return (lhs_shape[0] // batch_group_count, rhs_shape[0]) + spatial


def conv_transpose_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                               window_strides: Sequence[int], padding: Any,
                               dimension_numbers: Any) -> tuple[int, ...]:
    """The result shape of a convolution whose input is dilated by ``window_strides``, with
    explicit ``padding`` pairs or a name (``'SAME'``/``'VALID'``) sized as ``conv_transpose``
    does (as JAX).

    Example:
        >>> from funcgrad import lax
        >>> lax.conv_transpose_shape_tuple((1, 1, 3), (1, 1, 2), (2,), [(1, 1)], None)
        (1, 1, 6)
        >>> lax.conv_transpose_shape_tuple((1, 7, 3), (3, 3, 4), (2,), "SAME", ("NWC", "WIO", "NWC"))
        (1, 14, 4)
    """
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lhs = tuple(lhs_shape[i] for i in dn.lhs_spec)
    rhs = tuple(rhs_shape[i] for i in dn.rhs_spec)
    if isinstance(padding, str):
        # A name stands for conv_transpose's padding (TensorFlow's sizing), not the forward
        # convolution's padding of the dilated input.
        padding = [_conv_transpose_padding(k, s, padding.upper())
                   for k, s in zip(rhs[2:], window_strides)]
    dilated = lhs[:2] + tuple(_dilate(n, s) for n, s in zip(lhs[2:], window_strides))
    out = conv_shape_tuple(dilated, rhs, (1,) * len(window_strides), padding)
    shape = [0] * len(out)
    for canonical, axis in enumerate(dn.out_spec):
        shape[axis] = out[canonical]
    return tuple(shape)


def _inverse(perm: Sequence[int]) -> tuple[int, ...]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


def _permuted(x: Array, perm: tuple[int, ...]) -> Array:
    # The default (NCHW) dimension numbers are the identity: no transpose to bind or check.
    return x if perm == tuple(range(len(perm))) else _sh.transpose(x, perm)


def _check_spec(spec: tuple[int, ...], ndim: int, what: str) -> None:
    if sorted(spec) != list(range(ndim)):
        raise TypeError(f"lax.conv_general_dilated: dimension_numbers' {what} {spec} is not a "
                        f"permutation of the {ndim} axes")


_MATMUL = (((1,), (0,)), ((), ()))


def _contract_windows(w: Array, cols: Array, nd: int, groups: int, batch_groups: int
                      ) -> Array:
    """``w`` (O, I, *K) against windows (C, *K, N, *Y) -> (N/B, O, *Y): one dot_general, with
    the feature groups or the batch groups as its batch axis."""
    ws, cs = w.shape, cols.shape
    o, k_axes = ws[0], tuple(range(2, 2 + nd))
    if groups == 1 and batch_groups == 1:
        # A plain 2-D matrix product: its transposes (the kernel and input gradients) are 2-D
        # products of transposed VIEWS, so the windows are never copied into a new layout.
        k = math.prod(ws[1:])
        out = _la.dot_general(_sh.reshape(w, (o, k)),
                              _sh.reshape(cols, (k, math.prod(cs[1 + nd:]))), _MATMUL)
        return _sh.moveaxis(_sh.reshape(out, (o,) + cs[1 + nd:]), 0, 1)
    if groups > 1:
        wg = _sh.reshape(w, (groups, o // groups) + ws[1:])                # (G, Og, I, *K)
        cg = _sh.reshape(cols, (groups, cs[0] // groups) + cs[1:])        # (G, I, *K, N, *Y)
        out = _la.dot_general(wg, cg, (((2,) + tuple(a + 1 for a in k_axes),
                                        tuple(range(1, 2 + nd))), ((0,), (0,))))
    else:
        n = cs[1 + nd] // batch_groups
        wg = _sh.reshape(w, (batch_groups, o // batch_groups) + ws[1:])   # (B, Ob, C, *K)
        cg = _sh.reshape(cols, cs[:1 + nd] + (batch_groups, n) + cs[2 + nd:])
        out = _la.dot_general(wg, cg, (((2,) + tuple(a + 1 for a in k_axes),
                                        tuple(range(1 + nd))), ((0,), (1 + nd,))))
    out = _sh.reshape(out, (o,) + out.shape[2:])                          # (O, N, *Y)
    return _sh.moveaxis(out, 0, 1)


def _spread_windows(x: Array, w: Array, nd: int, groups: int, batch_groups: int) -> Array:
    """Each input element times the kernel: ``x`` (N, C, *I), ``w`` (O, I, *K) ->
    windows (O, *K, N/B, *I) for ``fold`` (one dot_general, groups as its batch axis)."""
    xs, ws = x.shape, w.shape
    o = ws[0]
    if groups == 1 and batch_groups == 1:
        # One 2-D matrix product (O*K, I) @ (I, N*S): its transposes (the gradients) are 2-D
        # products of transposed views, never a copy of the (large) windows' cotangent.
        nd_k = len(ws) - 2
        w2 = _sh.reshape(_sh.transpose(w, (0,) + tuple(range(2, 2 + nd_k)) + (1,)),
                         (o * math.prod(ws[2:]), ws[1]))
        x2 = _sh.reshape(_sh.moveaxis(x, 1, 0), (xs[1], xs[0] * math.prod(xs[2:])))
        out = _la.dot_general(w2, x2, _MATMUL)
        return _sh.reshape(out, (o,) + ws[2:] + (xs[0],) + xs[2:])
    if groups > 1:
        wg = _sh.reshape(w, (groups, o // groups) + ws[1:])               # (G, Og, Ig, *K)
        xg = _sh.reshape(x, (xs[0], groups, xs[1] // groups) + xs[2:])   # (N, G, Ig, *I)
        out = _la.dot_general(wg, xg, (((2,), (2,)), ((0,), (1,))))       # (G, Og, *K, N, *I)
    else:
        n = xs[0] // batch_groups
        wg = _sh.reshape(w, (batch_groups, o // batch_groups) + ws[1:])   # (B, Ob, C, *K)
        xg = _sh.reshape(x, (batch_groups, n) + xs[1:])                   # (B, N', C, *I)
        out = _la.dot_general(wg, xg, (((2,), (2,)), ((0,), (0,))))       # (B, Ob, *K, N', *I)
    return _sh.reshape(out, (o,) + out.shape[2:])


def _zeros(like: Array, shape: tuple[int, ...]) -> Array:
    """Zeros of ``shape`` with ``like``'s dtype and device (an empty sum of ``like``)."""
    nothing = _sh.static_slice(like, (0,) * like.ndim, (0,) * like.ndim)
    return _sh.broadcast_in_dim(_red.reduce_sum(nothing), shape, ())


def _geometry(name: str, spatial: tuple[int, ...], kernel: tuple[int, ...],
              window_strides: Any, padding: Any, lhs_dilation: Any, rhs_dilation: Any
              ) -> tuple[tuple, tuple, tuple, tuple, tuple]:
    """Strides, lhs/rhs dilations, ``(lo, hi)`` padding and output spatial sizes of a
    convolution of ``spatial`` by ``kernel`` (JAX's rules and errors); cached for hashable
    arguments (a layer calls with the same ones every step), errors are never cached."""
    args = (name, spatial, kernel, window_strides, padding, lhs_dilation, rhs_dilation)
    try:
        return _geometry_cached(*args)
    except TypeError as e:
        if "unhashable" not in str(e):
            raise
    return _geometry_uncached(*args)


def _geometry_uncached(name: str, spatial: tuple[int, ...], kernel: tuple[int, ...],
                       window_strides: Any, padding: Any, lhs_dilation: Any,
                       rhs_dilation: Any) -> tuple[tuple, tuple, tuple, tuple, tuple]:
    nd = len(spatial)
    strides = _seq(name, window_strides, nd, "window_strides")
    ldil = _seq(name, lhs_dilation, nd, "lhs_dilation")
    rdil = _seq(name, rhs_dilation, nd, "rhs_dilation")
    eff_kernel = tuple(_dilate(k, r) for k, r in zip(kernel, rdil))
    if isinstance(padding, str):
        if any(d > 1 for d in ldil):
            raise ValueError(f"lax.{name}: string padding ({padding!r}) is not defined with "
                             f"lhs_dilation {ldil} (as in JAX): pass explicit (lo, hi) pairs "
                             "or use lax.conv_transpose")
        pads = tuple(padtype_to_pads(spatial, eff_kernel, strides, padding))
    else:
        pads = _pairs(name, padding, nd)
    dilated = tuple(_dilate(s, d) for s, d in zip(spatial, ldil))
    if any(m + lo + hi < 0 for m, (lo, hi) in zip(dilated, pads)):
        raise ValueError(f"lax.{name}: negative padding {pads} is larger than the (dilated) "
                         f"input {dilated}")
    out_spatial = tuple(max(0, (m + lo + hi - k) // s + 1) if m + lo + hi >= k else 0
                        for m, k, s, (lo, hi) in zip(dilated, eff_kernel, strides, pads))
    return strides, ldil, rdil, pads, out_spatial


_geometry_cached = functools.lru_cache(maxsize=512)(_geometry_uncached)


def _lhs_windows(x: Array, kernel: tuple, strides: tuple, pads: tuple, ldil: tuple,
                 rdil: tuple) -> Array:
    """The windows ``(C, *K, N, *Y)`` of ``x`` ``(N, C, *S)`` dilated by ``ldil`` and padded
    (negative: cropped) by ``pads``: the ``patches`` primitive."""
    if any(d > 1 for d in ldil) or any(lo < 0 for lo, _ in pads):
        # Dilate and crop explicitly (pad with interior/negative padding), then plain
        # windows with only the non-negative high padding left.
        config = [(0, 0, 0)] * 2 + [(min(lo, 0), 0, d - 1) for (lo, _), d in zip(pads, ldil)]
        x = _sh.pad(x, get_aval(x).dtype.type(0), config)
        pads = tuple((max(lo, 0), hi) for lo, hi in pads)
    return _patches(x, kernel, strides, rdil, pads)


def conv_general_dilated_patches(lhs: Array, filter_shape: Sequence[int],
                                 window_strides: Sequence[int], padding: Any,
                                 lhs_dilation: Sequence[int] | None = None,
                                 rhs_dilation: Sequence[int] | None = None,
                                 dimension_numbers: Any = None, precision: Any = None,
                                 preferred_element_type: Any = None) -> Array:
    """The patches a convolution with a ``filter_shape`` kernel would see (JAX's
    ``lax.conv_general_dilated_patches``): the output has ``C * prod(filter_shape)`` features,
    channel-major (feature ``c * prod(filter_shape) + k`` is input channel ``c`` at the
    row-major kernel offset ``k``), laid out by ``dimension_numbers``' ``out_spec``. Padding,
    strides and dilations mean what they mean in :func:`conv_general_dilated`. It is the
    ``patches`` primitive itself (no identity kernel is multiplied), so it differentiates,
    batches and jits; PyTorch's ``F.unfold`` is this with NCHW numbers.

    Example:
        >>> import numpy as np
        >>> from funcgrad import lax
        >>> x = np.arange(5.0).reshape(1, 1, 5)
        >>> lax.conv_general_dilated_patches(x, (2,), (2,), "VALID")[0].tolist()
        [[0.0, 2.0], [1.0, 3.0]]
    """
    name = "conv_general_dilated_patches"
    _check_precision(name, precision)
    la = aval_of(name, lhs, "lhs")
    if la.ndim < 2:
        raise TypeError(f"lax.{name}: lhs must have rank at least 2, got shape {la.shape}")
    nd = la.ndim - 2
    kernel = static_ints(name, filter_shape, "filter_shape")
    if len(kernel) != nd or any(k < 0 for k in kernel):
        raise TypeError(f"lax.{name}: filter_shape needs one size per spatial axis ({nd}), "
                        f"got {tuple(filter_shape)}")
    if preferred_element_type is not None:
        lhs, _ = _contract_dtypes(name, lhs, lhs, preferred_element_type)
    dn = conv_dimension_numbers(la.shape, (1, 1) + kernel, dimension_numbers)
    for spec, what in zip(dn, ("lhs_spec", "rhs_spec", "out_spec")):
        _check_spec(tuple(spec), la.ndim, what)
    x = _permuted(lhs, tuple(dn.lhs_spec))                                # (N, C, *S)
    n, c, spatial = x.shape[0], x.shape[1], tuple(x.shape[2:])
    strides, ldil, rdil, pads, out_spatial = _geometry(
        name, spatial, kernel, window_strides, padding, lhs_dilation, rhs_dilation)
    features = c * math.prod(kernel)
    inv = _inverse(dn.out_spec)
    if 0 in out_spatial or n == 0 or features == 0:
        return _permuted(_zeros(x, (n, features) + out_spatial), inv)
    cols = _lhs_windows(x, kernel, strides, pads, ldil, rdil)             # (C, *K, N, *Y)
    out = _sh.moveaxis(_sh.reshape(cols, (features, n) + out_spatial), 0, 1)
    return _permuted(out, inv)


def conv_general_dilated_local(lhs: Array, rhs: Array, window_strides: Sequence[int],
                               padding: Any, filter_shape: Sequence[int],
                               lhs_dilation: Sequence[int] | None = None,
                               rhs_dilation: Sequence[int] | None = None,
                               dimension_numbers: Any = None, precision: Any = None) -> Array:
    """A locally connected ("unshared") convolution, as JAX's
    ``lax.conv_general_dilated_local``: every output position has its own kernel. ``rhs`` is
    laid out like a ``conv_general_dilated`` kernel by ``dimension_numbers``' ``rhs_spec``,
    with its input-feature axis holding ``C * prod(filter_shape)`` (channel-major, as
    :func:`conv_general_dilated_patches` gives them) and its spatial axes the *output*
    spatial sizes. It is those patches contracted with ``rhs`` position by position.

    Example:
        >>> import numpy as np
        >>> from funcgrad import lax
        >>> x = np.arange(5.0).reshape(1, 1, 5)          # N, C, W
        >>> w = np.array([[[1.0, 0.0], [1.0, 1.0]]])   # O=1, I=C*2, W_out=2
        >>> lax.conv_general_dilated_local(x, w, (2,), "VALID", (2,)).tolist()
        [[[1.0, 3.0]]]
    """
    name = "conv_general_dilated_local"
    _check_precision(name, precision)
    if isinstance(precision, tuple | list):
        lhs_precision = precision[0]
    else:
        lhs_precision = precision
    patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                           lhs_dilation, rhs_dilation, dimension_numbers,
                                           precision=lhs_precision)
    la = aval_of(name, lhs, "lhs")
    ra = aval_of(name, rhs, "rhs")
    kernel = tuple(static_ints(name, filter_shape, "filter_shape"))
    dn = conv_dimension_numbers(la.shape, (1, 1) + kernel, dimension_numbers)
    out_spec, rhs_spec = tuple(dn.out_spec), tuple(dn.rhs_spec)
    if ra.ndim != la.ndim:
        raise TypeError(f"lax.{name}: rhs must have the rank of lhs ({la.ndim}), got shape "
                        f"{ra.shape}")
    pa = get_aval(patches)
    want = [pa.shape[out_spec[1]]] + [pa.shape[d] for d in out_spec[2:]]
    got = [ra.shape[rhs_spec[1]]] + [ra.shape[d] for d in rhs_spec[2:]]
    if want != got:
        raise TypeError(
            f"lax.{name}: rhs needs C * prod(filter_shape) = {want[0]} input features and "
            f"the output spatial sizes {tuple(want[1:])} on its I and spatial axes, got "
            f"{got[0]} and {tuple(got[1:])} (rhs shape {ra.shape})")
    # Spatial positions are batch dimensions of one dot_general (sorted as the patches hold
    # them), the patch features its contraction.
    lhs_b, rhs_b = list(out_spec[2:]), list(rhs_spec[2:])
    rhs_b = [rhs_b[i] for i in sorted(range(len(rhs_b)), key=lambda k: lhs_b[k])]
    lhs_b = sorted(lhs_b)
    dn_dot = (([out_spec[1]], [rhs_spec[1]]), (lhs_b, rhs_b))
    out = dot_general(patches, rhs, dn_dot, precision=precision)  # (*spatial, N, O)
    return _move_last_two(out, out_spec[0], out_spec[1])


def _move_last_two(x: Array, a: int, b: int) -> Array:
    """``numpy.moveaxis(x, (-2, -1), (a, b))``."""
    nd = get_aval(x).ndim
    rest = [d for d in range(nd) if d not in (nd - 2, nd - 1)]
    perm: list[int] = [0] * nd
    perm[a], perm[b] = nd - 2, nd - 1
    it = iter(rest)
    for i in range(nd):
        if i not in (a, b):
            perm[i] = next(it)
    return _sh.transpose(x, tuple(perm))


@with_out_sharding
def conv_general_dilated(lhs: Array, rhs: Array, window_strides: Sequence[int], padding: Any,
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: Any = None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision: Any = None,
                         preferred_element_type: Any = None) -> Array:
    """General n-D convolution (cross-correlation) with dilation, padding and groups (JAX's
    ``lax.conv_general_dilated``).

    ``padding`` is ``'VALID'``, ``'SAME'``, ``'SAME_LOWER'`` or one ``(lo, hi)`` pair per
    spatial axis (negative values crop). ``lhs_dilation`` inserts ``d - 1`` zeros between input
    elements (a transposed convolution); ``rhs_dilation`` spreads the kernel (atrous
    convolution). ``dimension_numbers`` is ``None`` (``NCHW``/``OIHW``/``NCHW``), a
    :class:`ConvDimensionNumbers` or strings like ``("NHWC", "HWIO", "NHWC")``.
    ``feature_group_count`` splits the input features into groups (depthwise convolutions);
    ``batch_group_count`` splits the batch (how JAX writes the kernel gradient of grouped
    convolutions). Differentiable in both operands, batchable and jittable.

    Example:
        >>> import numpy as np
        >>> from funcgrad import lax
        >>> x = np.arange(5.0).reshape(1, 1, 5)
        >>> lax.conv_general_dilated(x, np.ones((1, 1, 2)), (1,), "VALID").tolist()
        [[[1.0, 3.0, 5.0, 7.0]]]
        >>> lax.conv_general_dilated(x, np.ones((1, 1, 2)), (1,), [(0, 0)],
        ...                          lhs_dilation=(2,)).tolist()
        [[[0.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0]]]
    """
    return conv_general_dilated_reversed(
        lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
        feature_group_count, batch_group_count, precision, preferred_element_type,
        rhs_reversed=False)


def conv_general_dilated_reversed(lhs: Array, rhs: Array, window_strides: Sequence[int],
                                  padding: Any, lhs_dilation: Sequence[int] | None = None,
                                  rhs_dilation: Sequence[int] | None = None,
                                  dimension_numbers: Any = None, feature_group_count: int = 1,
                                  batch_group_count: int = 1, precision: Any = None,
                                  preferred_element_type: Any = None, *,
                                  rhs_reversed: bool = True) -> Array:
    """:func:`conv_general_dilated` of ``rev(rhs)`` (the kernel's spatial axes reversed) when
    ``rhs_reversed``: a transposed convolution's weight is the reversed kernel of the
    convolution it transposes, and the ``lhs_dilation`` path wants it unreversed, so
    ``conv_transpose(transpose_kernel=True)`` and funcgrad_nn's ``conv_transpose*d`` hand it
    over as it is instead of reversing it twice.

    Example:
        >>> import numpy as np
        >>> from funcgrad.lax._convolution import conv_general_dilated_reversed
        >>> conv_general_dilated_reversed(np.arange(3.0).reshape(1, 1, 3),
        ...                               np.array([[[1.0, 10.0]]]), (1,), "VALID").tolist()
        [[[1.0, 12.0]]]
    """
    name = "conv_general_dilated"
    _check_precision(name, precision)
    la, ra = aval_of(name, lhs, "lhs"), aval_of(name, rhs, "rhs")
    if la.ndim != ra.ndim or la.ndim < 2:
        raise TypeError(f"lax.{name}: lhs and rhs must have the same rank (at least 2), got "
                        f"shapes {la.shape} and {ra.shape}")
    lhs, rhs = _contract_dtypes(name, lhs, rhs, preferred_element_type)
    nd = la.ndim - 2
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    for spec, what in zip(dn, ("lhs_spec", "rhs_spec", "out_spec")):
        _check_spec(tuple(spec), la.ndim, what)
    x = _permuted(lhs, tuple(dn.lhs_spec))                                # (N, C, *S)
    w = _permuted(rhs, tuple(dn.rhs_spec))                                # (O, I, *K)
    n, c, spatial = x.shape[0], x.shape[1], tuple(x.shape[2:])
    o, i, kernel = w.shape[0], w.shape[1], tuple(w.shape[2:])
    strides, ldil, rdil, pads, out_spatial = _geometry(
        name, spatial, kernel, window_strides, padding, lhs_dilation, rhs_dilation)
    groups = static_int(name, feature_group_count, "feature_group_count")
    bgroups = static_int(name, batch_group_count, "batch_group_count")
    if groups < 1 or bgroups < 1 or (groups > 1 and bgroups > 1):
        raise ValueError(f"lax.{name}: feature_group_count ({groups}) and batch_group_count "
                         f"({bgroups}) must be positive and at most one of them > 1")
    if c != i * groups or o % groups:
        raise ValueError(f"lax.{name}: lhs has {c} features but rhs {ra.shape} expects "
                        f"{i} * feature_group_count={groups} = {i * groups}; the rhs output "
                        f"features ({o}) must be divisible by feature_group_count")
    if n % bgroups or o % bgroups:
        raise ValueError(f"lax.{name}: batch_group_count={bgroups} must divide the lhs batch "
                        f"size ({n}) and the rhs output features ({o})")
    eff_kernel = tuple(_dilate(k, r) for k, r in zip(kernel, rdil))
    dilated = tuple(_dilate(s, d) for s, d in zip(spatial, ldil))
    out_shape = (n // bgroups, o) + out_spatial
    inv = _inverse(dn.out_spec)
    if 0 in out_shape or 0 in kernel or c == 0:
        return _sh.transpose(_zeros(x, out_shape), inv)
    if any(d > 1 for d in ldil) and all(lo <= e - 1 for (lo, _), e in zip(pads, eff_kernel)):
        # Transposed convolution: every input element times the (flipped) kernel, summed into
        # place by fold (stride = lhs dilation); then the window strides subsample.
        spread = w if rhs_reversed else _sh.rev(w, tuple(range(2, 2 + nd)))
        cols = _spread_windows(x, spread, nd, groups, bgroups)
        full = tuple(m + lo + hi - e + 1 for m, e, (lo, hi) in zip(dilated, eff_kernel, pads))
        fpads = tuple((e - 1 - lo, e - 1 - hi) for e, (lo, hi) in zip(eff_kernel, pads))
        out = _fold(cols, full, kernel, ldil, rdil, fpads)                # (N/B, O, *full)
        if any(s > 1 for s in strides):
            out = _sh.static_slice(out, (0,) * out.ndim, out.shape, (1, 1) + strides)
    else:
        if rhs_reversed:
            w = _sh.rev(w, tuple(range(2, 2 + nd)))
        cols = _lhs_windows(x, kernel, strides, pads, ldil, rdil)        # (C, *K, N, *Y)
        out = _contract_windows(w, cols, nd, groups, bgroups)            # (N/B, O, *Y)
    if tuple(out.shape) != out_shape:
        raise ShapeError(f"lax.{name}: internal shape mismatch {out.shape} != {out_shape}")
    return _permuted(out, inv)


def conv(lhs: Array, rhs: Array, window_strides: Sequence[int], padding: Any,
         precision: Any = None, preferred_element_type: Any = None) -> Array:
    """Convolution of ``lhs`` ``(N, C, *S)`` by ``rhs`` ``(O, C, *K)`` (no dilation, no
    groups): :func:`conv_general_dilated` with default dimension numbers.

    Example:
        >>> import numpy as np
        >>> from funcgrad import lax
        >>> lax.conv(np.ones((1, 2, 4, 4)), np.ones((3, 2, 3, 3)), (1, 1), "SAME").shape
        (1, 3, 4, 4)
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs: Array, rhs: Array, window_strides: Sequence[int],
                              padding: Any, lhs_dilation: Sequence[int] | None,
                              rhs_dilation: Sequence[int] | None, precision: Any = None,
                              preferred_element_type: Any = None) -> Array:
    """:func:`conv_general_dilated` with default dimension numbers and no groups.

    Example:
        >>> import numpy as np
        >>> from funcgrad import lax
        >>> lax.conv_with_general_padding(np.ones((1, 1, 3)), np.ones((1, 1, 2)), (1,),
        ...                               [(1, 1)], (2,), None).tolist()
        [[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]]
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k: int, s: int, padding: Any) -> tuple[int, int]:
    """The padding of the transposed convolution for a forward one padded by ``padding``
    (a name, or a (low, high) pair) with kernel size ``k`` and stride ``s`` (JAX's)."""
    if not isinstance(padding, str):
        lo, hi = padding
        return k - lo - 1, k - hi - 1
    if padding == "SAME":
        total = k + s - 2
        lo = k - 1 if s > k - 1 else -(-total // 2)
    else:  # VALID
        total = k + s - 2 + max(k - s, 0)
        lo = k - 1
    return lo, total - lo


_TRANSPOSE_DEFAULT_DN = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                         4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs: Array, rhs: Array, strides: Sequence[int], padding: Any,
                   rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                   transpose_kernel: bool = False, precision: Any = None,
                   preferred_element_type: Any = None,
                   use_consistent_padding: bool = False) -> Array:
    """Transposed convolution (JAX's ``lax.conv_transpose``): the input dilated by
    ``strides``, then convolved with stride 1.

    ``padding`` is ``'SAME'``/``'VALID'`` (sizes as in TensorFlow's ``conv2d_transpose``) or
    explicit pairs, which are the transposed convolution's own padding unless
    ``use_consistent_padding=True``: then pairs, like names, are the padding of the forward
    convolution this one transposes (PyTorch's convention: ``k - 1 - p`` each side). Default dimension numbers are channels-last (``NHWC``/``HWIO``/``NHWC``
    for 2-D). ``transpose_kernel=True`` flips the kernel's spatial axes and swaps its input
    and output features, giving exactly the gradient of a forward convolution.

    Example:
        >>> import numpy as np
        >>> from funcgrad import lax
        >>> x = np.ones((1, 3, 1))                       # NWC
        >>> lax.conv_transpose(x, np.ones((2, 1, 1)), (2,), "VALID")[0, :, 0].tolist()
        [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    """
    la, ra = aval_of("conv_transpose", lhs, "lhs"), aval_of("conv_transpose", rhs, "rhs")
    if la.ndim != ra.ndim or la.ndim < 2:
        raise TypeError(f"lax.conv_transpose: lhs and rhs must have the same rank (at least "
                        f"2), got shapes {la.shape} and {ra.shape}")
    nd = la.ndim - 2
    if dimension_numbers is None:
        if la.ndim not in _TRANSPOSE_DEFAULT_DN:
            raise ValueError("lax.conv_transpose: no default dimension_numbers for rank "
                             f"{la.ndim}; pass dimension_numbers")
        dimension_numbers = _TRANSPOSE_DEFAULT_DN[la.ndim]
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    kernel = tuple(ra.shape[a] for a in dn.rhs_spec[2:])
    strides = _seq("conv_transpose", strides, nd, "strides")
    named = isinstance(padding, str) and padding.upper() in ("SAME", "VALID")
    if named or use_consistent_padding and not isinstance(padding, str):
        rdil = _seq("conv_transpose", rhs_dilation, nd, "rhs_dilation")
        forward = [padding.upper()] * nd if named else _pairs("conv_transpose", padding, nd)
        pads: Any = [_conv_transpose_padding(_dilate(k, r), s, p)
                     for k, r, s, p in zip(kernel, rdil, strides, forward)]
    else:
        pads = padding
    if transpose_kernel:
        # The kernel's features swapped and its spatial axes reversed: the swap is a change
        # of dimension numbers, the reversal is left to the convolution (which would
        # otherwise reverse it back).
        o_axis, i_axis = dn.rhs_spec[:2]
        dn = dn._replace(rhs_spec=(i_axis, o_axis) + tuple(dn.rhs_spec[2:]))
    return conv_general_dilated_reversed(lhs, rhs, (1,) * nd, pads, strides, rhs_dilation, dn,
                                         precision=precision,
                                         preferred_element_type=preferred_element_type,
                                         rhs_reversed=transpose_kernel)
