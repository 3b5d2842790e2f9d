"""Op table: lax convolutions, ``reduce_window`` and ``reduce_precision`` against NumPy.

The references are direct loops written from XLA's definitions (dilate the input with zeros,
pad or crop, slide the dilated kernel; ``reduce_window`` pads and dilates with the init value),
sharing nothing with the implementation. ``tests/funcgrad/lax/`` imports them too.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from helpers import OpCase, rand

from funcgrad import lax

CASES: list[OpCase] = []


def _case(name: str, fn: Any, ref: Any, args: list[tuple], **kw: Any) -> None:
    CASES.append(OpCase(f"lax.{name}", fn, ref, args, **kw))


# -- references -------------------------------------------------------------------------------


def _dilate_pad(x: np.ndarray, dil: tuple, pads: tuple, value: Any, lead: int) -> np.ndarray:
    """Insert ``d - 1`` copies of ``value`` between elements of the trailing axes, then pad
    (negative: crop) them; the first ``lead`` axes are left alone."""
    shape = list(x.shape)
    for i, d in enumerate(dil):
        n = shape[lead + i]
        shape[lead + i] = 0 if n == 0 else (n - 1) * d + 1
    out = np.full(shape, value, dtype=x.dtype)
    out[(slice(None),) * lead + tuple(slice(None, None, d) for d in dil)] = x
    for i, (lo, hi) in enumerate(pads):
        ax = lead + i
        widths = [(0, 0)] * out.ndim
        widths[ax] = (max(lo, 0), max(hi, 0))
        out = np.pad(out, widths, constant_values=value)
        n = out.shape[ax]
        sl = [slice(None)] * out.ndim
        sl[ax] = slice(max(-lo, 0), n - max(-hi, 0))
        out = out[tuple(sl)]
    return out


def conv_reference(lhs: np.ndarray, rhs: np.ndarray, strides: tuple, pads: tuple,
                   lhs_dil: tuple | None = None, rhs_dil: tuple | None = None,
                   groups: int = 1, batch_groups: int = 1) -> np.ndarray:
    """XLA's convolution on NCHW / OIHW operands, by loops over output positions and kernel
    offsets."""
    nd = lhs.ndim - 2
    lhs_dil = lhs_dil or (1,) * nd
    rhs_dil = rhs_dil or (1,) * nd
    x = _dilate_pad(lhs, lhs_dil, pads, 0, 2)
    n, c = x.shape[:2]
    o, i = rhs.shape[:2]
    kernel = rhs.shape[2:]
    eff = [(k - 1) * r + 1 for k, r in zip(kernel, rhs_dil)]
    out_sp = [max(0, (m - e) // s + 1) if m >= e else 0
              for m, e, s in zip(x.shape[2:], eff, strides)]
    nb = n // batch_groups
    out = np.zeros((nb, o) + tuple(out_sp), dtype=np.result_type(lhs, rhs))
    og, ob = o // groups, o // batch_groups
    for y in itertools.product(*(range(v) for v in out_sp)):
        for k in itertools.product(*(range(v) for v in kernel)):
            pos = tuple(yy * s + kk * r for yy, s, kk, r in zip(y, strides, k, rhs_dil))
            patch = x[(slice(None), slice(None)) + pos]                       # (N, C)
            w = rhs[(slice(None), slice(None)) + k]                           # (O, I)
            idx = (slice(None), slice(None)) + y
            if batch_groups > 1:
                for b in range(batch_groups):
                    out[idx][:, b * ob:(b + 1) * ob] += (
                        patch[b * nb:(b + 1) * nb] @ w[b * ob:(b + 1) * ob].T)
            else:
                for g in range(groups):
                    out[idx][:, g * og:(g + 1) * og] += (
                        patch[:, g * i:(g + 1) * i] @ w[g * og:(g + 1) * og].T)
    return out


def reduce_window_reference(x: np.ndarray, init: Any, op: Any, window: tuple, strides: tuple,
                            pads: tuple, base: tuple | None = None,
                            wdil: tuple | None = None) -> np.ndarray:
    """XLA's reduce_window (as JAX runs it): fold ``op`` over each window starting from
    ``init``, skipping the positions that fall on padding or base-dilation holes."""
    nd = x.ndim
    base = base or (1,) * nd
    wdil = wdil or (1,) * nd
    xp = _dilate_pad(x, base, pads, init, 0)
    real = _dilate_pad(np.ones(x.shape, bool), base, pads, False, 0)
    eff = [(w - 1) * d + 1 for w, d in zip(window, wdil)]
    out_sp = [max(0, (m - e) // s + 1) if m >= e else 0
              for m, e, s in zip(xp.shape, eff, strides)]
    out = np.zeros(out_sp, dtype=x.dtype)
    for y in itertools.product(*(range(v) for v in out_sp)):
        acc = np.asarray(init, dtype=x.dtype)
        for k in itertools.product(*(range(v) for v in window)):
            at = tuple(yy * s + kk * d for yy, s, kk, d in zip(y, strides, k, wdil))
            if real[at]:
                acc = op(acc, xp[at])
        out[y] = acc
    return out


def reduce_precision_reference(x: np.ndarray, exponent_bits: int, mantissa_bits: int
                               ) -> np.ndarray:
    """Round through exact rationals to ``mantissa_bits`` (ties to even; below the source's
    smallest normal the source's fixed quantum, as rounding the bit pattern does). With fewer
    exponent bits than the source: results above the format overflow to infinity, below its
    smallest normal flush to zero. NaN stays NaN (with no mantissa bits too, as JAX)."""
    from fractions import Fraction

    info = np.finfo(x.dtype)
    reduce_exponent = exponent_bits < info.nexp
    bias = 2 ** (exponent_bits - 1) - 1
    max_exp, min_exp = bias, 1 - bias
    out = []
    for v in x.ravel().tolist():
        if np.isnan(v):
            out.append(v)
            continue
        if np.isinf(v) or v == 0:
            out.append(v)
            continue
        f = abs(Fraction(v))
        e = f.numerator.bit_length() - f.denominator.bit_length()
        if Fraction(2) ** e > f:
            e -= 1
        ulp = Fraction(2) ** (max(e, info.minexp) - min(mantissa_bits, info.nmant))
        q, r = divmod(f, ulp)
        if r * 2 > ulp or (r * 2 == ulp and q % 2 == 1):
            q += 1
        rounded = q * ulp
        re = e + (1 if rounded >= Fraction(2) ** (e + 1) else 0)
        if reduce_exponent and re > max_exp or not reduce_exponent and rounded > Fraction(
                float(info.max)):
            res = np.inf
        elif reduce_exponent and re < min_exp:
            res = 0.0
        else:
            res = float(rounded)
        out.append(res if v > 0 else -res)
    return np.array(out, dtype=x.dtype).reshape(x.shape)


# -- convolution cases ---------------------------------------------------------------------


def _a(shape: tuple, dtype: Any = np.float64, seed: int = 0) -> np.ndarray:
    return np.asarray(rand(shape, dtype, -1.0, 1.0, seed))


def _conv_case(name: str, lshape: tuple, rshape: tuple, strides: tuple, pads: tuple,
               lhs_dil: tuple | None = None, rhs_dil: tuple | None = None, groups: int = 1,
               batch_groups: int = 1, order: int = 2, dtype: Any = np.float64) -> None:
    def fn(lhs, rhs):
        return lax.conv_general_dilated(lhs, rhs, strides, pads, lhs_dil, rhs_dil,
                                        feature_group_count=groups,
                                        batch_group_count=batch_groups)

    def ref(lhs, rhs):
        return conv_reference(lhs, rhs, strides, pads, lhs_dil, rhs_dil, groups, batch_groups)

    _case(f"conv_general_dilated.{name}", fn, ref,
          [(_a(lshape, dtype), _a(rshape, dtype, 1))], order=order)


_conv_case("1d_valid", (2, 3, 6), (4, 3, 2), (1,), ((0, 0),))
_conv_case("1d_stride_pad", (2, 2, 7), (3, 2, 3), (2,), ((1, 2),))
_conv_case("2d_dilated_groups", (2, 4, 5, 4), (6, 2, 2, 2), (1, 2), ((1, 0), (0, 1)),
           rhs_dil=(2, 1), groups=2)
_conv_case("2d_lhs_dilation", (1, 2, 3, 3), (2, 2, 3, 2), (1, 1), ((2, 2), (1, 0)),
           lhs_dil=(2, 3))
_conv_case("2d_lhs_dilation_strided", (2, 2, 4, 3), (3, 2, 2, 2), (2, 1), ((1, 1), (0, 2)),
           lhs_dil=(2, 2), rhs_dil=(1, 2))
_conv_case("2d_negative_pads", (1, 2, 6, 5), (2, 2, 2, 2), (1, 1), ((-1, 1), (2, -2)))
_conv_case("2d_lhs_dilation_big_pad", (1, 1, 3, 3), (1, 1, 2, 2), (1, 1), ((3, 0), (0, 3)),
           lhs_dil=(2, 2))
_conv_case("1d_batch_groups", (4, 3, 5), (4, 3, 2), (1,), ((0, 1),), batch_groups=2)
_conv_case("1d_batch_groups_lhs_dil", (4, 2, 3), (6, 2, 2), (1,), ((1, 1),), lhs_dil=(2,),
           batch_groups=2)
_conv_case("1d_groups_lhs_dil", (2, 4, 3), (4, 2, 2), (1,), ((1, 1),), lhs_dil=(2,),
           groups=2)
_conv_case("3d", (1, 2, 3, 4, 3), (2, 2, 2, 2, 2), (1, 2, 1), ((0, 1), (1, 0), (0, 0)),
           order=1)
_conv_case("float32", (2, 3, 5), (2, 3, 3), (1,), ((1, 1),), dtype=np.float32, order=1)
_case("conv_general_dilated.nhwc",
      lambda lhs, rhs: lax.conv_general_dilated(lhs, rhs, (1, 2), "SAME",
                                                dimension_numbers=("NHWC", "HWIO", "NHWC")),
      lambda lhs, rhs: conv_reference(lhs.transpose(0, 3, 1, 2), rhs.transpose(3, 2, 0, 1),
                                      (1, 2), ((1, 1), (0, 1))).transpose(0, 2, 3, 1),
      [(_a((2, 4, 4, 3)), _a((3, 2, 3, 2), seed=1))])
_case("conv_transpose.same",
      lambda lhs, rhs: lax.conv_transpose(lhs, rhs, (2,), "SAME"),
      lambda lhs, rhs: conv_reference(lhs.transpose(0, 2, 1), rhs.transpose(2, 1, 0), (1,),
                                      ((2, 1),), (2,)).transpose(0, 2, 1),
      [(_a((2, 3, 2)), _a((3, 2, 4), seed=1))])
_case("conv_transpose.transpose_kernel",
      lambda lhs, rhs: lax.conv_transpose(lhs, rhs, (2, 1), "VALID",
                                          dimension_numbers=("NCHW", "OIHW", "NCHW"),
                                          transpose_kernel=True),
      lambda lhs, rhs: conv_reference(lhs, np.flip(rhs, (2, 3)).swapaxes(0, 1), (1, 1),
                                      ((1, 1), (1, 1)), (2, 1)),
      [(_a((1, 3, 2, 3)), _a((3, 2, 2, 2), seed=1))])

# -- reduce_window ---------------------------------------------------------------------------

_x = _a((4, 5))
_case("reduce_window.add_same",
      lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 3), (1, 2), "SAME"),
      lambda x: reduce_window_reference(x, 0.0, np.add, (2, 3), (1, 2), ((0, 1), (1, 1))),
      [(_x,)])
_case("reduce_window.add_init_dilations",
      lambda x: lax.reduce_window(x, 1.5, lax.add, (2, 2), (1, 1), ((1, -1), (0, 2)),
                                  base_dilation=(2, 1), window_dilation=(1, 2)),
      lambda x: reduce_window_reference(x, 1.5, np.add, (2, 2), (1, 1), ((1, -1), (0, 2)),
                                        (2, 1), (1, 2)),
      [(_x,)])
# Distinct values (a permutation), so max/min have no ties and finite differences are clean.
_perm = np.random.default_rng(3).permutation(20).reshape(4, 5) / 7.0
_case("reduce_window.max_pool",
      lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (2, 2), ((0, 0), (0, 1))),
      lambda x: reduce_window_reference(x, -np.inf, np.maximum, (2, 2), (2, 2),
                                        ((0, 0), (0, 1))),
      [(_perm,)])
_case("reduce_window.min_dilated",
      lambda x: lax.reduce_window(x, np.inf, lax.min, (2, 2), (1, 1), "VALID",
                                  window_dilation=(2, 1)),
      lambda x: reduce_window_reference(x, np.inf, np.minimum, (2, 2), (1, 1),
                                        ((0, 0), (0, 0)), None, (2, 1)),
      [(_perm,)])
_case("reduce_window.max_nonidentity_init",
      lambda x: lax.reduce_window(x, 0.5, lax.max, (3,), (2,), ((1, 1),)),
      lambda x: reduce_window_reference(x, 0.5, np.maximum, (3,), (2,), ((1, 1),)),
      [(np.array([0.1, 0.7, 0.3, 0.9, 0.2, 1.3, 0.05]),)])
_case("reduce_window.mul",
      lambda x: lax.reduce_window(x, 1.0, lax.mul, (2, 2), (1, 1), ((0, 1), (0, 0))),
      lambda x: reduce_window_reference(x, 1.0, np.multiply, (2, 2), (1, 1),
                                        ((0, 1), (0, 0))),
      [(_x,)])
_case("reduce_window.generic",
      lambda x: lax.reduce_window(x, 0.0, lambda a, b: a + b * b, (3,), (1,), "SAME"),
      lambda x: reduce_window_reference(x, 0.0, lambda a, b: a + b * b, (3,), (1,),
                                        ((1, 1),)),
      [(np.array([0.5, -1.0, 2.0, 0.25, 1.5]),)])
_case("reduce_window.int_max",
      lambda x: lax.reduce_window(x, np.iinfo(np.int32).min, lax.max, (2,), (1,), "SAME"),
      lambda x: reduce_window_reference(x, np.iinfo(np.int32).min, np.maximum, (2,), (1,),
                                        ((0, 1),)),
      [(np.array([3, -1, 7, 2], np.int32),)], order=0)

# -- reduce_precision ------------------------------------------------------------------------

_case("reduce_precision.bfloat16",
      lambda x: lax.reduce_precision(x, 8, 7),
      lambda x: reduce_precision_reference(x, 8, 7),
      [(_a((3, 4)),), (_a((5,), np.float32),)], diff_argnums=())
_case("reduce_precision.float16",
      lambda x: lax.reduce_precision(x, 5, 10),
      lambda x: reduce_precision_reference(x, 5, 10),
      [(np.array([1.0, 3.14159, -2.5e-5, 7e4, 65519.0, 1e-8]),)], diff_argnums=())
