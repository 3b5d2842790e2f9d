"""Op table: the elementwise funcgrad.numpy functions (ufuncs and friends).

Smooth functions are checked to order 3; piecewise-constant ones (rounding, sign, comparisons,
logical and bitwise ops) with ``order=0`` (zero tangents, never a crash). ``grad_args`` keep
derivative checks in float64, inside the domain and away from kinks, ties and branch cuts.
Complex derivative cases are only for holomorphic functions (the inner-product check of
``check_vjp`` uses the bilinear pairing, which holds for those).
"""

from __future__ import annotations

import numpy as np
from helpers import OpCase, binary_args, rand, unary_args

import funcgrad.numpy as fnp

F64, F32, I64 = np.float64, np.float32, np.int64
SHAPES = [(), (3,), (2, 3)]
BSHAPES = [((2, 3), (2, 3)), ((), (3,)), ((3,), (2, 3)), ((2, 1), (1, 3))]

CASES: list[OpCase] = []


def _grad1(low: float = -2.0, high: float = 2.0, away: tuple[float, ...] = (),
           margin: float = 0.2) -> list[tuple]:
    """float64 unary grad args in [low, high), kept ``margin`` away from the points ``away``."""
    out = []
    for k, s in enumerate(SHAPES):
        x = rand(s, F64, low, high, seed=100 + k)
        out.append((_push(x, away, margin),))
    out.append((float(_push(np.asarray(rand((), F64, low, high, seed=7)), away, margin)),))
    return out


def _push(x: np.ndarray, away: tuple[float, ...], margin: float) -> np.ndarray:
    x = np.array(x, dtype=F64)
    for p in away:
        d = x - p
        close = np.abs(d) < margin
        x = np.where(close, p + np.where(d >= 0, margin, -margin) + d, x)
    return x


def _grad2(low: float = -2.0, high: float = 2.0, low2: float | None = None,
           high2: float | None = None) -> list[tuple]:
    """float64 broadcast pairs (and a weak-scalar pair) for binary derivative checks."""
    low2 = low if low2 is None else low2
    high2 = high if high2 is None else high2
    out = [(rand(sa, F64, low, high, seed=200 + k), rand(sb, F64, low2, high2, seed=300 + k))
           for k, (sa, sb) in enumerate(BSHAPES)]
    out.append((rand((3,), F64, low, high, seed=9), 0.5 * (low2 + high2)))
    return out


def _no_ties(pairs: list[tuple], margin: float = 0.1) -> list[tuple]:
    """Pairs whose second operand is moved at least ``margin`` away from the first."""
    out = []
    for x, y in pairs:
        xb, yb = np.broadcast_arrays(np.asarray(x, F64), np.asarray(y, F64))
        d = yb - xb
        y2 = np.where(np.abs(d) < margin, xb + np.where(d >= 0, margin, -margin), yb)
        if np.ndim(y) == 0 and not isinstance(y, np.ndarray):
            # A Python-scalar y cannot change per element: move x instead.
            out.append((np.where(np.abs(d) < margin, y - margin, xb), y))
        elif np.shape(y) == y2.shape:
            out.append((x, y2))
        else:
            out.append((xb.copy(), y2))
    return out


def unary(name: str, fn, ref, low=-2.0, high=2.0, order=3, dtypes=(F64, F32, I64),
          grad_args=None, extra=(), **kw) -> None:
    args = unary_args(low, high, dtypes=dtypes) + list(extra)
    if grad_args is None and order > 0:
        grad_args = _grad1(low, high)
    CASES.append(OpCase(name, fn, ref, args, order=order, grad_args=grad_args, **kw))


def binary(name: str, fn, ref, low=-2.0, high=2.0, order=3, grad_args=None, ints=True,
           extra=(), **kw) -> None:
    args = binary_args(low, high, ints=ints) + list(extra)
    if grad_args is None and order > 0:
        grad_args = _grad2(low, high)
    CASES.append(OpCase(name, fn, ref, args, order=order, grad_args=grad_args, **kw))


SPECIAL = np.array([1.5, -0.0, 0.0, np.inf, -np.inf, np.nan, -2.0])
SPECIAL32 = SPECIAL.astype(F32)
CPLX = [(rand(s, np.complex128, seed=30 + k),) for k, s in enumerate(SHAPES)] + [
    (rand((3,), np.complex64, seed=40),), (1.5 - 0.5j,)]
INTS = [(rand((2, 3), I64, -5, 5, seed=1),), (rand((3,), np.int32, -5, 5, seed=2),),
        (np.array([True, False, True]),), (3,)]

# -- unary arithmetic ----------------------------------------------------------------------

unary("negative", fnp.negative, np.negative)
unary("positive", fnp.positive, np.positive)
unary("absolute", fnp.absolute, np.absolute, grad_args=_grad1(away=(0.0,)), extra=CPLX)
unary("abs", fnp.abs, np.abs, grad_args=_grad1(away=(0.0,)))
unary("fabs", fnp.fabs, np.fabs, grad_args=_grad1(away=(0.0,)))
unary("square", fnp.square, np.square, extra=[(rand((3,), np.complex128, seed=3),)])
unary("reciprocal", fnp.reciprocal, np.reciprocal, low=0.5, high=3.0,
      grad_args=_grad1(away=(0.0,), margin=0.5))
unary("sign", fnp.sign, np.sign, order=0, grad_args=_grad1(away=(0.0,)), extra=CPLX[:1])
unary("floor", fnp.floor, np.floor, order=0)
unary("ceil", fnp.ceil, np.ceil, order=0)
unary("trunc", fnp.trunc, np.trunc, order=0)
unary("fix", fnp.fix, np.fix, order=0)
unary("rint", fnp.rint, np.rint, order=0, extra=[(np.array([0.5, 1.5, 2.5, -0.5]),)])
unary("round", fnp.round, np.round, order=0, extra=[(np.array([0.5, 1.5, 2.5, -2.5]),)])
unary("round_decimals", lambda x: fnp.round(x, 2), lambda x: np.round(x, 2), order=0)
unary("round_neg_decimals", lambda x: fnp.round(x, -1), lambda x: np.round(x, -1), order=0,
      low=-50, high=50, dtypes=(F64, I64))
unary("around", lambda x: fnp.around(x, 1), lambda x: np.around(x, 1), order=0)

# -- exponentials and logarithms ---------------------------------------------------------------

unary("exp", fnp.exp, np.exp, extra=CPLX)
unary("exp2", fnp.exp2, np.exp2)
unary("expm1", fnp.expm1, np.expm1)
unary("log", fnp.log, np.log, low=0.5, high=3.0, extra=CPLX)
unary("log2", fnp.log2, np.log2, low=0.5, high=3.0)
unary("log10", fnp.log10, np.log10, low=0.5, high=3.0)
unary("log1p", fnp.log1p, np.log1p, low=-0.5, high=2.0)
unary("sqrt", fnp.sqrt, np.sqrt, low=0.5, high=3.0, extra=CPLX)
unary("cbrt", fnp.cbrt, np.cbrt, grad_args=_grad1(away=(0.0,), margin=0.3))

# -- trigonometric and hyperbolic --------------------------------------------------------------

unary("sin", fnp.sin, np.sin, low=-3.0, high=3.0, extra=CPLX)
unary("cos", fnp.cos, np.cos, low=-3.0, high=3.0, extra=CPLX)
unary("tan", fnp.tan, np.tan, low=-1.2, high=1.2)
unary("arcsin", fnp.arcsin, np.arcsin, low=-0.9, high=0.9)
unary("arccos", fnp.arccos, np.arccos, low=-0.9, high=0.9)
unary("arctan", fnp.arctan, np.arctan)
unary("sinh", fnp.sinh, np.sinh)
unary("cosh", fnp.cosh, np.cosh)
unary("tanh", fnp.tanh, np.tanh, extra=CPLX)
unary("arcsinh", fnp.arcsinh, np.arcsinh)
unary("arccosh", fnp.arccosh, np.arccosh, low=1.2, high=3.0)
unary("arctanh", fnp.arctanh, np.arctanh, low=-0.9, high=0.9)
unary("deg2rad", fnp.deg2rad, np.deg2rad, low=-180, high=180)
unary("radians", fnp.radians, np.radians, low=-180, high=180)
unary("rad2deg", fnp.rad2deg, np.rad2deg)
unary("degrees", fnp.degrees, np.degrees)
unary("sinc", fnp.sinc, np.sinc, grad_args=_grad1(away=(0.0,), margin=0.3),
      extra=[(np.array([0.0, 0.5, -1.0]),)])

# -- complex parts -----------------------------------------------------------------------------

unary("conjugate", fnp.conjugate, np.conjugate, extra=CPLX)
unary("conj", fnp.conj, np.conj, extra=CPLX)
unary("real", fnp.real, np.real, extra=CPLX)
unary("imag", fnp.imag, np.imag, extra=CPLX)
unary("angle", fnp.angle, np.angle, grad_args=_grad1(away=(0.0,)), extra=CPLX)
unary("angle_deg", lambda z: fnp.angle(z, deg=True), lambda z: np.angle(z, deg=True),
      grad_args=_grad1(away=(0.0,)), extra=CPLX)

# Holomorphic functions: complex derivatives (order 2).
for _n, _f, _r, _lo, _hi in [
    ("exp", fnp.exp, np.exp, -1.0, 1.0), ("log", fnp.log, np.log, 0.5, 2.0),
    ("sin", fnp.sin, np.sin, -1.0, 1.0), ("cos", fnp.cos, np.cos, -1.0, 1.0),
    ("tanh", fnp.tanh, np.tanh, -0.5, 0.5), ("sqrt", fnp.sqrt, np.sqrt, 0.5, 2.0),
    ("square", fnp.square, np.square, -1.0, 1.0),
    ("reciprocal", fnp.reciprocal, np.reciprocal, 0.5, 2.0),
    ("arcsin", fnp.arcsin, np.arcsin, -0.4, 0.4), ("arctan", fnp.arctan, np.arctan, -0.4, 0.4),
    ("power_int", lambda z: fnp.power(z, 3), lambda z: np.power(z, 3), -1.0, 1.0),
]:
    _cargs = [(rand(s, np.complex128, _lo, _hi, seed=60 + k),) for k, s in enumerate(SHAPES)]
    CASES.append(OpCase(f"complex_{_n}", _f, _r, _cargs, order=2))

CASES.append(OpCase(
    "complex_multiply_divide", lambda a, b: fnp.divide(fnp.multiply(a, b), b + 3.0),
    lambda a, b: np.divide(np.multiply(a, b), b + 3.0),
    [(rand(sa, np.complex128, seed=70 + k), rand(sb, np.complex128, seed=80 + k))
     for k, (sa, sb) in enumerate(BSHAPES)], order=2))
CASES.append(OpCase(
    "complex_power", fnp.power, np.power,
    [(rand((3,), np.complex128, 0.5, 2.0, seed=90), rand((3,), np.complex128, -1, 1, seed=91))],
    order=2))

# -- predicates --------------------------------------------------------------------------------

_PRED_ARGS = [(SPECIAL,), (SPECIAL32,), (rand((2, 3), I64, seed=5),),
              (np.array([True, False]),), (np.array([1 + 1j, np.inf + 0j, np.nan * 1j]),), (2.0,)]
for _n in ("isfinite", "isinf", "isnan"):
    CASES.append(OpCase(_n, getattr(fnp, _n), getattr(np, _n), _PRED_ARGS, order=0,
                        grad_args=_grad1()))
CASES.append(OpCase("signbit", fnp.signbit, np.signbit, _PRED_ARGS[:4] + [(-0.0,)], order=0,
                    grad_args=_grad1()))
CASES.append(OpCase("logical_not", fnp.logical_not, np.logical_not,
                    _PRED_ARGS + INTS, order=0, grad_args=_grad1()))
CASES.append(OpCase("invert", fnp.invert, np.invert, INTS, order=0))
CASES.append(OpCase("bitwise_not", fnp.bitwise_not, np.bitwise_not, INTS, order=0))
CASES.append(OpCase(
    "nan_to_num", fnp.nan_to_num, np.nan_to_num,
    [(SPECIAL,), (SPECIAL32,), (rand((2, 3), I64, seed=5),),
     (np.array([np.nan + 1j * np.inf, 1 - 1j * np.inf]),), (float("nan"),)],
    order=3, grad_args=_grad1()))
CASES.append(OpCase(
    "nan_to_num_values", lambda x: fnp.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0),
    lambda x: np.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0),
    [(SPECIAL,), (SPECIAL32,)], order=3, grad_args=_grad1()))

# -- binary arithmetic -------------------------------------------------------------------------

binary("add", fnp.add, np.add)
binary("subtract", fnp.subtract, np.subtract)
binary("multiply", fnp.multiply, np.multiply)
binary("divide", fnp.divide, np.divide, low=0.5, high=2.0, grad_args=_grad2(-2, 2, 0.5, 2))
binary("true_divide", fnp.true_divide, np.true_divide, low=0.5, high=2.0)
binary("floor_divide", fnp.floor_divide, np.floor_divide, low=0.5, high=3.0, order=0,
       grad_args=_grad2(-3, 3, 0.5, 2))

# Remainders: x/y kept away from integers so the checks never straddle a jump.
_Y = rand((2, 3), F64, 1.0, 1.5, seed=11)
_Q = np.array([[-2.5, -1.4, 0.3], [0.6, 1.5, 2.35]])
_REM_GRAD = [(_Q * _Y, _Y), (_Q[0] * 1.25, 1.25), (_Q * _Y[0], _Y[0])]
_REM_ARGS = binary_args(0.5, 3.0) + [(np.array([-3, 3, 7, -7]), np.array([2, -2, 3, 3]))]
for _n, _ref in [("remainder", np.remainder), ("mod", np.mod), ("fmod", np.fmod)]:
    CASES.append(OpCase(_n, getattr(fnp, _n), _ref, _REM_ARGS, order=3, grad_args=_REM_GRAD))
CASES.append(OpCase("divmod", fnp.divmod, np.divmod, _REM_ARGS, order=3, grad_args=_REM_GRAD))

binary("power", fnp.power, np.power, low=0.5, high=2.0, grad_args=_grad2(0.5, 2.0, -2.0, 2.0))
CASES.append(OpCase(
    "power_int_exponent", lambda x: fnp.power(x, 3), lambda x: np.power(x, 3),
    unary_args(dtypes=(F64, F32, I64)), order=3, grad_args=_grad1()))
CASES.append(OpCase(
    "power_operator", lambda x: x ** 2 + 2.0 ** x, lambda x: x ** 2 + 2.0 ** x,
    unary_args(dtypes=(F64, F32)), order=3, grad_args=_grad1()))
CASES.append(OpCase(
    "power_int_int", fnp.power, np.power,
    [(np.array([1, 2, 3]), np.array([0, 1, 2])), (np.array([2, 3]), 2), (2, 3)], order=0))
binary("float_power", fnp.float_power, np.float_power, low=0.5, high=2.0)

binary("arctan2", fnp.arctan2, np.arctan2, grad_args=_grad2(0.5, 2.0, -2.0, 2.0))
binary("hypot", fnp.hypot, np.hypot, grad_args=_grad2(0.5, 2.0))
binary("logaddexp", fnp.logaddexp, np.logaddexp)
binary("logaddexp2", fnp.logaddexp2, np.logaddexp2)
binary("copysign", fnp.copysign, np.copysign,
       grad_args=[(_push(x, (0.0,), 0.2), _push(np.asarray(y), (0.0,), 0.2))
                  for x, y in _grad2()])

_TIES = [(np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0, 4.0])),
         (np.array([np.nan, 1.0, 2.0]), np.array([1.0, np.nan, 2.0]))]
for _n in ("maximum", "minimum", "fmax", "fmin"):
    binary(_n, getattr(fnp, _n), getattr(np, _n), extra=_TIES, grad_args=_no_ties(_grad2()))
binary("heaviside", fnp.heaviside, np.heaviside, order=0, grad_args=_grad2(),
       extra=[(np.array([-1.0, 0.0, 2.0, np.nan]), 0.5), (np.array([-1, 0, 3]), 1)])

# -- comparisons, logical and bitwise ops ------------------------------------------------------

_CMP_EXTRA = [(np.array([1, 2, 3]), np.array([3, 2, 1])), (np.array([1.0, np.nan]), 1.0),
              (np.array([True, False]), np.array([True, True]))]
for _n in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
           "logical_and", "logical_or", "logical_xor"):
    binary(_n, getattr(fnp, _n), getattr(np, _n), order=0, extra=_CMP_EXTRA,
           grad_args=_grad2())

_BITS = [(rand((2, 3), I64, -8, 8, seed=1), rand((2, 3), I64, -8, 8, seed=2)),
         (rand((3,), np.int32, -8, 8, seed=3), 5), (np.array([True, False]), np.array([True, True])),
         (np.array([12, 10], np.uint8), np.array([6], np.uint8))]
_SHIFTS = [(rand((2, 3), I64, 0, 8, seed=1), rand((2, 3), I64, 0, 4, seed=2)),
           (np.array([1, 8, -16], np.int32), 2), (np.array([12, 10], np.uint8), np.uint8(1))]
for _n, _a in [("bitwise_and", _BITS), ("bitwise_or", _BITS), ("bitwise_xor", _BITS),
               ("left_shift", _SHIFTS), ("right_shift", _SHIFTS)]:
    CASES.append(OpCase(_n, getattr(fnp, _n), getattr(np, _n), _a, order=0))

# -- clip, where, isclose ----------------------------------------------------------------------

_X = [rand(s, F64, -2, 2, seed=120 + k) for k, s in enumerate(SHAPES)]


def _clip_grad_x(x: np.ndarray) -> np.ndarray:
    return _push(x, (-0.5, 0.5), 0.1)


CASES.append(OpCase(
    "clip", lambda x: fnp.clip(x, -0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5),
    unary_args(), order=3, grad_args=[(_clip_grad_x(x),) for x in _X]))
CASES.append(OpCase(
    "clip_arrays", fnp.clip, np.clip,
    [(rand((2, 3), F64, seed=1), rand((3,), F64, -1.0, -0.2, seed=2),
      rand((2, 1), F64, 0.2, 1.0, seed=3)),
     (rand((3,), F32, seed=4), -0.5, 0.5), (rand((3,), I64, -3, 3, seed=5), -1, 1),
     (rand((3,), I64, -3, 3, seed=5), -0.5, 1.5),
     (np.array([-2.0, 0.0, 2.0]), 1.0, -1.0)],
    order=3,
    grad_args=[(np.array([[-1.5, -0.05, 0.1], [0.45, 1.2, -0.9]]), np.array([-0.6, -0.4, -0.3]),
                np.array([[0.3], [0.7]]))]))
CASES.append(OpCase(
    "clip_one_sided", lambda x: fnp.clip(x, None, 0.5) + fnp.clip(x, -0.5, None),
    lambda x: np.clip(x, None, 0.5) + np.clip(x, -0.5, None),
    unary_args(), order=3, grad_args=[(_clip_grad_x(x),) for x in _X]))
CASES.append(OpCase(
    "clip_min_max_kw", lambda x: fnp.clip(x, min=-0.5, max=0.5),
    lambda x: np.clip(x, min=-0.5, max=0.5), unary_args(dtypes=(F64, F32)), order=3,
    grad_args=[(_clip_grad_x(x),) for x in _X]))

_C = rand((2, 3), bool, seed=3)
CASES.append(OpCase(
    "where", fnp.where, np.where,
    [(_C, rand((2, 3), F64, seed=1), rand((2, 3), F64, seed=2)),
     (_C, rand((3,), F32, seed=1), 2.0),
     (rand((3,), I64, -1, 1, seed=4), 1.0, rand((2, 3), F64, seed=2)),
     (rand((2, 1), bool, seed=5), rand((1, 3), F64, seed=6), rand((3,), I64, seed=7)),
     (True, 1.0, rand((3,), F32, seed=8))],
    order=3))
CASES.append(OpCase(
    "isclose", fnp.isclose, np.isclose,
    [(np.array([1.0, 1.0 + 1e-9, 1.1, np.inf, np.nan]), 1.0),
     (np.array([1.0, np.inf, np.nan]), np.array([1.0, np.inf, np.nan])),
     (np.array([1, 2, 3]), 2), (rand((2, 3), F32, seed=1), rand((3,), F32, seed=1))],
    order=0))
CASES.append(OpCase(
    "isclose_equal_nan", lambda a, b: fnp.isclose(a, b, equal_nan=True, atol=0.1),
    lambda a, b: np.isclose(a, b, equal_nan=True, atol=0.1),
    [(np.array([1.0, np.nan, 2.0]), np.array([1.05, np.nan, np.nan]))], order=0))
CASES.append(OpCase(
    "allclose", fnp.allclose, np.allclose,
    [(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-10])), (np.array([1.0, 2.0]), 1.0)],
    order=0, vmap=False, jit=False))
