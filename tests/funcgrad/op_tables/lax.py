"""Op table: funcgrad.lax wrappers against NumPy references.

Each case goes through the shared drivers: forward values and dtypes, check_grads to order 2
(float64, smooth domains), vmap against a Python loop, the eager tape and jit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from helpers import OpCase, rand

from funcgrad import lax

CASES: list[OpCase] = []
F64, F32, I32, I64 = np.float64, np.float32, np.int32, np.int64


def _case(name: str, fn: Any, ref: Any, args: list[tuple], **kw: Any) -> None:
    CASES.append(OpCase(f"lax.{name}", fn, ref, args, **kw))


def _a(shape: tuple[int, ...], dtype: Any = F64, low: float = -2.0, high: float = 2.0,
       seed: int = 0) -> np.ndarray:
    return np.asarray(rand(shape, dtype, low, high, seed))


# -- unary math: (name, NumPy reference, domain, order) ------------------------------------
def _logistic(x):
    return 1 / (1 + np.exp(-x))


UNARY = [
    ("exp", np.exp, -2, 2), ("exp2", np.exp2, -2, 2), ("expm1", np.expm1, -2, 2),
    ("log", np.log, 0.2, 3), ("log1p", np.log1p, -0.5, 2), ("sqrt", np.sqrt, 0.2, 3),
    ("rsqrt", lambda x: 1 / np.sqrt(x), 0.2, 3), ("cbrt", np.cbrt, 0.2, 3),
    ("sin", np.sin, -2, 2), ("cos", np.cos, -2, 2), ("tan", np.tan, -1, 1),
    ("asin", np.arcsin, -0.8, 0.8), ("acos", np.arccos, -0.8, 0.8), ("atan", np.arctan, -2, 2),
    ("sinh", np.sinh, -2, 2), ("cosh", np.cosh, -2, 2), ("tanh", np.tanh, -2, 2),
    ("asinh", np.arcsinh, -2, 2), ("acosh", np.arccosh, 1.2, 3), ("atanh", np.arctanh, -0.8, 0.8),
    ("logistic", _logistic, -2, 2), ("square", np.square, -2, 2), ("neg", np.negative, -2, 2),
    ("abs", np.abs, 0.2, 2), ("reciprocal", np.reciprocal, 0.5, 2),
]
for _name, _ref, _lo, _hi in UNARY:
    _case(_name, getattr(lax, _name), _ref,
          [(_a((2, 3), F64, _lo, _hi),), (_a((3,), F32, _lo, _hi, 1),), ((_lo + _hi) / 2,)])

for _name, _ref in [("sign", np.sign), ("floor", np.floor), ("ceil", np.ceil),
                    ("is_finite", np.isfinite)]:
    _case(_name, getattr(lax, _name), _ref,
          [(_a((2, 3), F64, -3, 3),), (np.array([-1.5, 0.5, np.inf], F32),)], order=0)

_case("round_away", lax.round, lambda x: np.where(np.abs(x - np.trunc(x)) >= 0.5,
                                                  np.trunc(x) + np.sign(x), np.trunc(x)),
      [(np.array([-2.5, -1.5, -0.5, 0.5, 0.49999999999999994, 2.5, 1.2]),)], order=0)
_case("round_even", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), np.round,
      [(np.array([-2.5, -1.5, -0.5, 0.5, 2.5, 1.7], F32),)], order=0)
_case("integer_pow", lambda x: lax.integer_pow(x, 3), lambda x: x ** 3,
      [(_a((2, 3)),), (_a((3,), I32),)])
_case("erf", lax.erf, lambda x: np.vectorize(__import__("math").erf)(x), [(_a((2, 3)),)])
_case("erfc", lax.erfc, lambda x: np.vectorize(__import__("math").erfc)(x), [(_a((2, 3)),)])
_case("lgamma", lax.lgamma, lambda x: np.vectorize(__import__("math").lgamma)(x),
      [(_a((2, 3), F64, 0.5, 3),)])
_case("real", lax.real, np.real, [(np.array([1 + 2j, -3 - 1j]),)], order=1)
_case("imag", lax.imag, np.imag, [(np.array([1 + 2j, -3 - 1j]),)], order=1)
_case("conj", lax.conj, np.conj, [(np.array([1 + 2j, -3 - 1j]),)], order=1)
_case("conj_real", lax.conj, lambda x: x.astype(np.complex128),
      [(np.array([1.0, -3.0]),)], order=1)

# -- binary -----------------------------------------------------------------------------------
_PAIRS = [(_a((2, 3)), _a((2, 3), seed=1)), (_a((3,), F32), _a((3,), F32, seed=2)),
          (_a((2, 3), F32), 1.5), (_a((2, 1)), _a((2, 3), seed=3))]
_POS = [(_a((2, 3), F64, 0.5, 2), _a((2, 3), F64, 0.5, 2, seed=1)),
        (_a((3,), F32, 0.5, 2), 1.5)]
for _name, _ref, _args in [
    ("add", np.add, _PAIRS), ("sub", np.subtract, _PAIRS), ("mul", np.multiply, _PAIRS),
    ("div", np.true_divide, _POS), ("max", np.maximum, _PAIRS), ("min", np.minimum, _PAIRS),
    ("atan2", np.arctan2, _PAIRS[:3]), ("pow", np.power, _POS),
]:
    _case(_name, getattr(lax, _name), _ref, _args)

_INTS = [(np.array([7, -7, 7, -7, 6, 0]), np.array([2, 2, -2, -2, 3, 5])),
         (np.array([9, -9], I32), np.array([4, 4], I32))]
_case("div_int", lax.div, lambda x, y: (np.sign(x) * np.sign(y) * (np.abs(x) // np.abs(y))
                                        ).astype(x.dtype), _INTS)
_case("rem_int", lax.rem, np.fmod, _INTS)
_case("rem", lax.rem, np.fmod, [(np.array([7.5, -7.5, 2.25]), np.array([2.0, 2.0, -1.0])),
                                (_a((3,), F32), 0.75)],
      grad_args=[(np.array([7.3, -7.3, 2.5]), np.array([2.1, 2.1, -1.1]))])
_case("pow_int_exponent", lax.pow, lambda x, y: x ** y.astype(x.dtype),
      [(_a((3,), F32, 0.5, 2), np.array([2, -1, 3], I32))])
_case("nextafter", lax.nextafter, np.nextafter, [(_a((3,)), _a((3,), seed=1))], order=1)
_case("complex", lax.complex, lambda x, y: x + 1j * y,
      [(_a((3,)), _a((3,), seed=1)), (_a((2,), F32), _a((2,), F32, seed=1))], order=1)
for _name, _ref in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                    ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)]:
    _case(_name, getattr(lax, _name), _ref,
          [(np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 2.0])), (np.array([1, 5]), 3)],
          order=0)
_BITS = [(np.array([6, -3, 12], I32), np.array([3, 5, -1], I32)),
         (np.array([True, False, True]), np.array([True, True, False]))]
for _name, _ref in [("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                    ("bitwise_xor", np.bitwise_xor)]:
    _case(_name, getattr(lax, _name), _ref, _BITS)
_case("bitwise_not", lax.bitwise_not, np.invert, [(a,) for a, _ in _BITS])


def _popcount_ref(x):
    # Two's-complement bits (NumPy's bitwise_count counts |x|), in x's dtype (as JAX).
    return np.bitwise_count(x.view(np.dtype(f"u{x.dtype.itemsize}"))).astype(x.dtype)


_case("population_count", lax.population_count, _popcount_ref,
      [(np.array([0, 7, 255, -1], I32),), (np.array([0, 200, 255], np.uint8),)])
_SHIFTS = [(np.array([-16, 16, -1, 5, 3], I32), np.array([2, 2, 31, 0, 40], I32)),
           (np.array([200, 3], np.uint8), np.array([3, 1], np.uint8))]
_case("shift_left", lax.shift_left, np.left_shift, _SHIFTS)


def _arithmetic_ref(x, y):
    # XLA reads the bits as signed, also for unsigned types.
    s = np.dtype(f"i{x.dtype.itemsize}")
    return np.right_shift(x.view(s), y.view(s)).view(x.dtype)


_case("shift_right_arithmetic", lax.shift_right_arithmetic, _arithmetic_ref, _SHIFTS)


def _logical_ref(x, y):
    u = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    return np.right_shift(u, y.astype(u.dtype)).view(x.dtype)


_case("shift_right_logical", lax.shift_right_logical, _logical_ref, _SHIFTS)

# -- selection, casts -------------------------------------------------------------------------
_P = np.array([[True, False, True], [False, False, True]])
_case("select", lax.select, np.where,
      [(_P, _a((2, 3)), _a((2, 3), seed=1)), (np.array(True), _a((3,), F32), _a((3,), F32, seed=1))])
_case("select_n", lax.select_n, lambda w, *c: np.choose(w, c),
      [(np.array([0, 2, 1, 2], I32), _a((4,)), _a((4,), seed=1), _a((4,), seed=2))])
_case("clamp", lax.clamp, lambda lo, x, hi: np.clip(x, lo, hi),
      [(-0.5, _a((2, 3)), 0.7), (_a((3,), seed=1) - 1, _a((3,)), _a((3,), seed=2) + 1)],
      grad_args=[(-0.5, np.array([-1.0, 0.1, 1.5]), 0.7)])
_case("convert_element_type", lambda x: lax.convert_element_type(x, F32),
      lambda x: x.astype(F32), [(_a((2, 3)),)], grad_args=[])
_case("convert_element_type_int", lambda x: lax.convert_element_type(x, I32),
      lambda x: x.astype(I32), [(_a((2, 3), F64, -3, 3),)], order=0)
_case("stop_gradient", lambda x: x * lax.stop_gradient(x), lambda x: x * x, [(_a((3,)),)],
      grad_args=[])

# -- shapes -----------------------------------------------------------------------------------
_X = _a((2, 3, 4))
_case("broadcast", lambda x: lax.broadcast(x, (2,)), lambda x: np.broadcast_to(x, (2,) + x.shape),
      [(_a((3,)),), (_a((), I32),)])
_case("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (3, 2, 4), (0, 2)),
      lambda x: np.broadcast_to(x[:, None, :], (3, 2, 4)), [(_a((3, 1)),)])
_case("reshape", lambda x: lax.reshape(x, (4, 6)), lambda x: x.reshape(4, 6), [(_X,)])
_case("reshape_dims", lambda x: lax.reshape(x, (4, 6), (2, 0, 1)),
      lambda x: x.transpose(2, 0, 1).reshape(4, 6), [(_X,)])
_case("transpose", lambda x: lax.transpose(x, (1, 2, 0)), lambda x: x.transpose(1, 2, 0), [(_X,)])
_case("squeeze", lambda x: lax.squeeze(x, (0, 2)), lambda x: x.reshape(3), [(_a((1, 3, 1)),)])
_case("expand_dims", lambda x: lax.expand_dims(x, (0, 3)), lambda x: x.reshape(1, 2, 3, 1),
      [(_a((2, 3)),)])
_case("concatenate", lambda x, y: lax.concatenate([x, y, x], 1),
      lambda x, y: np.concatenate([x, y, x], 1), [(_a((2, 1)), _a((2, 3)))])


def _pad_ref(x, v, cfg):
    for ax, (lo, hi, it) in enumerate(cfg):
        n = x.shape[ax]
        size = n + (n - 1) * it if n else 0
        shape = list(x.shape)
        shape[ax] = size + max(lo, 0) + max(hi, 0)
        out = np.full(shape, v, x.dtype)
        idx = [slice(None)] * x.ndim
        idx[ax] = slice(max(lo, 0), max(lo, 0) + size, it + 1)
        out[tuple(idx)] = x
        crop = [slice(None)] * x.ndim
        crop[ax] = slice(-lo if lo < 0 else 0, shape[ax] + (hi if hi < 0 else 0))
        x = out[tuple(crop)]
    return x


for _label, _cfg in [("lohi", [(1, 2, 0), (0, 1, 0)]), ("interior", [(0, 0, 2), (1, 0, 1)]),
                     ("negative", [(-1, 1, 1), (2, -2, 0)])]:
    _case(f"pad_{_label}", lambda x, v, c=_cfg: lax.pad(x, v, c),
          lambda x, v, c=_cfg: _pad_ref(x, v, c), [(_a((3, 3)), np.array(0.5)), (_a((3, 3)), -1.0)])
_case("slice", lambda x: lax.slice(x, (0, 1, 0), (2, 3, 4), (1, 1, 2)),
      lambda x: x[0:2, 1:3, 0:4:2], [(_X,)])
_case("slice_in_dim", lambda x: lax.slice_in_dim(x, 1, -1, 2, axis=2),
      lambda x: x[:, :, 1:-1:2], [(_X,)])
_case("index_in_dim", lambda x: lax.index_in_dim(x, -1, 1, keepdims=False),
      lambda x: x[:, -1], [(_X,)])
_case("rev", lambda x: lax.rev(x, (0, 2)), lambda x: x[::-1, :, ::-1], [(_X,)])
_case("collapse", lambda x: lax.collapse(x, 0, 2), lambda x: x.reshape(6, 4), [(_X,)])


def _ds_ref(x, i, j):
    i = min(max(i + 2 if i < 0 else i, 0), 2 - 1)
    j = min(max(j + 4 if j < 0 else j, 0), 4 - 2)
    return x[:, i:i + 1, j:j + 2]


_case("dynamic_slice", lambda x, i, j: lax.dynamic_slice(x, (0, i, j), (2, 1, 2)),
      lambda x, i, j: _ds_ref(x[:, :2], int(i), int(j)),
      [(_a((2, 2, 4)), np.array(1), np.array(-1)), (_a((2, 2, 4)), np.array(-5), np.array(3))])
_case("dynamic_slice_in_dim", lambda x, i: lax.dynamic_slice_in_dim(x, i, 2, 1),
      lambda x, i: x[:, int(i) % 4: int(i) % 4 + 2], [(_a((2, 4)), np.array(-3, I32))])
_case("dynamic_index_in_dim", lambda x, i: lax.dynamic_index_in_dim(x, i, 0, False),
      lambda x, i: x[int(i)], [(_a((3, 2)), np.array(-1))])


def _dus_ref(x, u, i):
    i = min(max(int(i) + x.shape[0] if i < 0 else int(i), 0), x.shape[0] - u.shape[0])
    out = x.copy()
    out[i:i + u.shape[0]] = u
    return out


_case("dynamic_update_slice", lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 0)),
      _dus_ref, [(_a((4, 2)), _a((2, 2), seed=1), np.array(-1)),
                 (_a((4, 2)), _a((2, 2), seed=1), np.array(1))])
_case("dynamic_update_index_in_dim", lambda x, u, i: lax.dynamic_update_index_in_dim(x, u, i, 0),
      lambda x, u, i: _dus_ref(x, u[None], i), [(_a((3, 2)), _a((2,), seed=1), np.array(2))])

# -- reductions -------------------------------------------------------------------------------
for _name, _ref in [("reduce_sum", np.sum), ("reduce_prod", np.prod), ("reduce_max", np.max),
                    ("reduce_min", np.min)]:
    _f = getattr(lax, _name)
    _case(_name, lambda x, f=_f: f(x, (0, 2)),
          lambda x, r=_ref: np.asarray(r(x, axis=(0, 2))).astype(x.dtype),
          [(_X,), (_a((2, 3, 4), I32, -3, 3),), (_a((2, 3, 2), F32),)])
_RI = [(np.array([[6, 3, 5], [7, -1, 2]], I32),), (np.array([[True, False], [True, True]]),)]
_case("reduce_and", lambda x: lax.reduce_and(x, (1,)), lambda x: np.bitwise_and.reduce(x, 1), _RI)
_case("reduce_or", lambda x: lax.reduce_or(x, (1,)), lambda x: np.bitwise_or.reduce(x, 1), _RI)
_case("reduce_xor", lambda x: lax.reduce_xor(x, (1,)), lambda x: np.bitwise_xor.reduce(x, 1), _RI)
_case("argmax", lambda x: lax.argmax(x, 1, I32), lambda x: np.argmax(x, 1).astype(I32), [(_X,)])
_case("argmin", lambda x: lax.argmin(x, -1, I64), lambda x: np.argmin(x, -1), [(_X,)])
for _name, _ref in [("cumsum", np.cumsum), ("cumprod", np.cumprod),
                    ("cummax", np.maximum.accumulate), ("cummin", np.minimum.accumulate),
                    ("cumlogsumexp", np.logaddexp.accumulate)]:
    _f = getattr(lax, _name)
    _case(_name, lambda x, f=_f: f(x, 1), lambda x, r=_ref: r(x, 1).astype(x.dtype),
          [(_X,)] + ([(_a((2, 3), I32, -3, 3),)] if _name != "cumlogsumexp" else []))
    _case(f"{_name}_reverse", lambda x, f=_f: f(x, 0, reverse=True),
          lambda x, r=_ref: np.flip(r(np.flip(x, 0), 0), 0), [(_a((5, 2)),)])

# -- sorting ----------------------------------------------------------------------------------
_case("sort", lambda x: lax.sort(x, 0), lambda x: np.sort(x, 0), [(_X,), (_a((4, 3), I32),)])
_case("sort_multi", lambda k, v: lax.sort((k, v), 1, num_keys=1),
      lambda k, v: (np.take_along_axis(k, np.argsort(k, 1, kind="stable"), 1),
                    np.take_along_axis(v, np.argsort(k, 1, kind="stable"), 1)),
      [(np.array([[3, 1, 3, 0], [2, 2, 1, 5]], I32), _a((2, 4)))])
_case("sort_key_val", lambda k, v: lax.sort_key_val(k, v),
      lambda k, v: (np.sort(k), v[np.argsort(k, kind="stable")]), [(_a((5,)), _a((5,), seed=1))])


def _top_k_ref(x, k):
    idx = np.argsort(-x, axis=-1, kind="stable")[..., :k]
    return [np.take_along_axis(x, idx, -1), idx.astype(I32)]  # a list, as JAX's top_k


_case("top_k", lambda x: lax.top_k(x, 2), lambda x: _top_k_ref(x, 2),
      [(_a((3, 4)),), (np.array([1.0, 3.0, 3.0, 2.0]),)], grad_args=[(_a((3, 4)),)])

# -- contractions -----------------------------------------------------------------------------
_case("dot_mm", lax.dot, np.dot, [(_a((2, 3)), _a((3, 4), seed=1)),
                                  (_a((3,), F32), _a((3, 2), F32, seed=1))])
_case("dot_preferred", lambda x, y: lax.dot(x, y, preferred_element_type=F64),
      lambda x, y: np.dot(x.astype(F64), y.astype(F64)),
      [(_a((2, 3), F32), _a((3,), F32, seed=1)), (_a((2, 3), I32), _a((3,), I32, seed=1))],
      grad_args=[(_a((2, 3)), _a((3,), seed=1))])
_DN = (((2,), (1,)), ((0,), (0,)))
_case("dot_general", lambda x, y: lax.dot_general(x, y, _DN),
      lambda x, y: np.einsum("bij,bjk->bik", x, y), [(_X, _a((2, 4, 3), seed=1))])
_case("dot_general_nobatch", lambda x, y: lax.dot_general(x, y, (((0,), (1,)), ((), ()))),
      lambda x, y: np.einsum("ij,ki->jk", x, y), [(_a((3, 2)), _a((4, 3), seed=1))])
_case("batch_matmul", lax.batch_matmul, np.matmul, [(_X, _a((2, 4, 2), seed=1))])

# -- associative_scan -------------------------------------------------------------------------


def _affine(a, b):
    # (a1, b1) then (a2, b2): x -> a2 * (a1 * x + b1) + b2; associative, not commutative.
    return (a[0] * b[0], b[0] * a[1] + b[1])


def _affine_ref(a, b):
    outa, outb = np.empty_like(a), np.empty_like(b)
    ca, cb = np.ones_like(a[0]), np.zeros_like(b[0])
    for t in range(a.shape[0]):
        ca, cb = ca * a[t], cb * a[t] + b[t]
        outa[t], outb[t] = ca, cb
    return outa, outb


for _n in (1, 2, 5, 8):
    _case(f"associative_scan_add_{_n}", lambda x: lax.associative_scan(lax.add, x),
          lambda x: np.cumsum(x, 0), [(_a((_n, 2)),)])
_case("associative_scan_affine", lambda a, b: lax.associative_scan(_affine, (a, b)),
      lambda a, b: _affine_ref(a, b), [(_a((7,)), _a((7,), seed=1)), (_a((6, 2)), _a((6, 2), seed=2))])
_case("associative_scan_reverse_axis", lambda x: lax.associative_scan(lax.mul, x, True, 1),
      lambda x: np.flip(np.cumprod(np.flip(x, 1), 1), 1), [(_a((2, 6)),)])
_case("associative_scan_max_int", lambda x: lax.associative_scan(lax.max, x, axis=-1),
      lambda x: np.maximum.accumulate(x, -1), [(_a((2, 7), I32, -9, 9),)])
