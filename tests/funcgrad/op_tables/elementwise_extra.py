"""Op table: the extra elementwise funcgrad.numpy functions (frexp/ldexp/modf, nextafter,
spacing, gcd/lcm, bitwise_count, signed-infinity and complex predicates, sort_complex,
unwrap, packbits/unpackbits) and the bool/int inputs of the complex-part functions.

Names start with ``extra_`` (run just these with ``-k extra_``). Derivative checks use
float64 arguments kept away from the jumps (powers of two for ``frexp``, integers for
``modf``, the wrap boundaries for ``unwrap``).
"""

from __future__ import annotations

import math

import numpy as np
from helpers import OpCase, binary_args, rand, unary_args

import funcgrad.numpy as fnp

F64, F32, I64 = np.float64, np.float32, np.int64
SHAPES = [(), (3,), (2, 3)]

CASES: list[OpCase] = []


def case(name: str, fn, ref, args, order: int = 0, **kw) -> None:
    CASES.append(OpCase("extra_" + name, fn, ref, args, order=order, **kw))


SPECIAL = np.array([1.5, -0.0, 0.0, np.inf, -np.inf, np.nan, -2.0, 5e-324, -3.0])
SPECIAL32 = SPECIAL.astype(F32)
INTS = [(rand((2, 3), I64, -9, 9, seed=1),), (rand((3,), np.int32, -9, 9, seed=2),),
        (np.array([3, 200, 0], np.uint8),), (np.array([True, False, True]),), (7,)]
CPLX = [(rand(s, np.complex128, seed=30 + k),) for k, s in enumerate(SHAPES)] + [
    (rand((3,), np.complex64, seed=40),), (1.5 - 0.5j,)]
# Away from the exponent jumps of frexp (powers of two) and the integers of modf.
SMOOTH = [(np.array([0.3, 0.7, 1.4, -1.3, -0.6, 3.3, 5.4, -6.2]),), (np.array(2.7),), (-0.35,),
          (np.array([[0.3, -2.6], [1.2, 0.4]]),)]

# -- floating-point decomposition --------------------------------------------------------------

_DECOMP_ARGS = unary_args() + [(SPECIAL,), (SPECIAL32,), (np.array([1, -4, 0], np.int8),),
                               (np.array([True, False]),), (np.array([3.5], np.float16),)]
case("frexp", fnp.frexp, np.frexp, _DECOMP_ARGS, order=2, grad_args=SMOOTH)
case("modf", fnp.modf, np.modf, _DECOMP_ARGS + [(np.array([-0.5, -3.0, 2.0]),)], order=2,
     grad_args=SMOOTH)
case("frexp_ldexp_roundtrip", lambda x: fnp.ldexp(*fnp.frexp(x)),
     lambda x: np.ldexp(*np.frexp(x)), unary_args(dtypes=(F64, F32)) + [(SPECIAL,)], order=2,
     grad_args=SMOOTH)

_N = rand((2, 3), I64, -3, 3, seed=4)
case("ldexp", fnp.ldexp, np.ldexp,
     [(rand((2, 3), F64, seed=1), _N), (rand((3,), F32, seed=2), 3), (rand((3,), F32, seed=3), _N),
      (rand((3,), I64, -5, 5, seed=4), 2), (1.5, _N), (rand((2, 1), F64, seed=5),
                                                       np.array([1, -2, 1020], np.int32)),
      (np.array([1.0, 2.0], np.float16), np.array([1, 2], np.int8)), (SPECIAL, 2)],
     order=2, diff_argnums=(0,),
     grad_args=[(rand((2, 3), F64, seed=6), _N), (rand((3,), F64, seed=7), 2),
                (rand((2, 1), F64, seed=8), np.array([1, -2, 3]))])

_NEXT = binary_args(dtypes=(F64, F32)) + [(SPECIAL, np.inf), (SPECIAL32, -np.inf),
                                          (np.array([1, 2], np.int8), 3)]
case("nextafter", fnp.nextafter, np.nextafter, _NEXT, order=2, diff_argnums=(0,),
     grad_args=[(rand((2, 3), F64, seed=9), 10.0), (rand((3,), F64, seed=10),
                                                     rand((2, 3), F64, -9, -5, seed=11))])
case("spacing", fnp.spacing, np.spacing,
     unary_args(dtypes=(F64, F32, I64)) + [(SPECIAL,), (SPECIAL32,), (np.array([True]),)],
     grad_args=[(rand((3,), F64, seed=12),)])

# -- integer utilities -------------------------------------------------------------------------

_GCD = [(rand((2, 3), I64, -30, 30, seed=1), rand((3,), I64, -30, 30, seed=2)),
        (rand((3,), np.int32, -30, 30, seed=3), 12), (np.array([12, 0, 7], np.uint8), np.uint8(8)),
        (np.array([6, 10]), np.array([4], np.int16)), (12, np.array([8, 9, 0]))]
case("gcd", fnp.gcd, np.gcd, _GCD)
case("lcm", fnp.lcm, np.lcm, _GCD)
case("bitwise_count", fnp.bitwise_count, np.bitwise_count,
     INTS + [(np.array([-2**63, 2**63 - 1, -1]),), (np.array([65535, 1], np.uint16),)])

# -- predicates --------------------------------------------------------------------------------

_PRED = [(SPECIAL,), (SPECIAL32,), (rand((2, 3), I64, seed=5),), (np.array([True, False]),),
         (float("-inf"),), (2.0,)]
case("isposinf", fnp.isposinf, np.isposinf, _PRED, grad_args=[(rand((3,), F64, seed=1),)])
case("isneginf", fnp.isneginf, np.isneginf, _PRED, grad_args=[(rand((3,), F64, seed=1),)])
_CPRED = CPLX + [(np.array([1 + 0j, 2 - 0j, 1j, np.nan + 0j]),), (rand((2, 3), F64, seed=3),),
                 (np.array([np.nan, 1.0], F32),), (np.array([1, 2]),), (np.array([True]),),
                 (2.0,), (3 + 0j,)]
case("iscomplex", fnp.iscomplex, np.iscomplex, _CPRED, grad_args=[(rand((3,), F64, seed=1),)])
case("isreal", fnp.isreal, np.isreal, _CPRED, grad_args=[(rand((3,), F64, seed=1),)])

# -- complex parts of bool/int inputs (NumPy: real/imag of bool arrays stay bool; conj of
#    bool is int8; angle of int8 is float16) -------------------------------------------------

_PARTS = [(np.array([True, False]),), (np.array([1, -2], np.int8),), (np.array([3], np.uint16),),
          (rand((2, 3), I64, seed=1),), (np.True_,), (np.int8(-3),), (3,)]
for _n in ("real", "imag", "conj", "conjugate", "angle"):
    case(f"{_n}_ints", getattr(fnp, _n), getattr(np, _n), _PARTS)
    # A Python bool is a Python int to NumPy (False.real == 0). Under jit it becomes a traced
    # bool array, which keeps NumPy's bool-array answer, so jit is checked on arrays only.
    case(f"{_n}_pybool", getattr(fnp, _n), getattr(np, _n), [(False,), (True,)], jit=False)

# -- complex helpers ---------------------------------------------------------------------------

case("real_if_close", fnp.real_if_close, np.real_if_close,
     [(np.array([2.1 + 4e-14j, 5.2 + 3e-15j]),), (np.array([1 + 1e-3j, 2.0 + 0j]),),
      (np.array([1 + 1e-7j], np.complex64),), (rand((2, 3), F32, seed=1),),
      (rand((3,), I64, seed=2),), (2.5,)],
     order=2, grad_args=[(rand((2, 3), F64, seed=3),)], vmap=False, jit=False)
case("real_if_close_tol", lambda a: fnp.real_if_close(a, tol=1e-3),
     lambda a: np.real_if_close(a, tol=1e-3),
     [(np.array([1 + 1e-4j, 2.0]),), (np.array([1 + 1e-2j, 2.0]),)], order=2,
     grad_args=[(rand((3,), F64, seed=4),)], vmap=False, jit=False)

_SC = [(rand((2, 3), np.complex128, seed=1),),
       (np.array([1 + 2j, 1 - 1j, 1 + 2j, -1 + 0j, np.nan + 0j]),),
       (rand((3,), np.complex64, seed=2),), (rand((2, 3), F64, seed=3),), (rand((3,), F32, seed=4),),
       (np.array([3, -1, 2], np.int16),), (np.array([3, 1], np.uint8),), (rand((4,), I64, seed=5),),
       (np.array([True, False]),)]
case("sort_complex", fnp.sort_complex, np.sort_complex, _SC, order=2,
     grad_args=[(np.array([1 + 2j, 0.5 - 1j, 3 + 0.2j]),),
                (np.array([[0.3 + 1j, -1.0 - 2j], [2.0 + 0.1j, 1.0 - 1j]]),)])

# -- unwrap ------------------------------------------------------------------------------------

# Steps kept away from the wrap boundaries (odd multiples of pi) and from discont.
_STEPS = np.array([0.5, 4.0, -4.5, 2.0, -1.0, 5.5, -2.5, 7.5])
_P = np.cumsum(_STEPS) % (2 * math.pi)
_P2 = np.stack([_P, np.cumsum(_STEPS[::-1])])
case("unwrap", fnp.unwrap, np.unwrap,
     [(_P,), (_P.astype(F32),), (_P2,), (rand((2, 3), F64, -9, 9, seed=1),),
      (np.array([0, 5, 10, 2, 9]),), (np.array([0.0, math.pi, 0.0, -math.pi]),)],
     order=2, grad_args=[(_P,), (_P2,)])
case("unwrap_axis0", lambda p: fnp.unwrap(p, axis=0), lambda p: np.unwrap(p, axis=0),
     [(_P2.T.copy(),), (rand((3, 2), F32, -9, 9, seed=2),)], order=2, grad_args=[(_P2.T.copy(),)])
case("unwrap_period_int", lambda p: fnp.unwrap(p, period=6),
     lambda p: np.unwrap(p, period=6),
     [(np.array([0, 5, 10, 2, 9]),), (np.array([[1, 4, 7], [0, 3, 6]], np.int32),),
      (np.array([0.0, 2.5, 5.2, 1.0]),)], order=2, grad_args=[(np.array([0.0, 2.2, 5.0, 0.7]),)])
case("unwrap_discont", lambda p: fnp.unwrap(p, discont=5.0),
     lambda p: np.unwrap(p, discont=5.0), [(_P,), (_P2,)], order=2, grad_args=[(_P,)])
case("unwrap_period_deg", lambda p: fnp.unwrap(p, period=360.0),
     lambda p: np.unwrap(p, period=360.0),
     [(np.array([10.0, 350.0, 20.0, 200.0, 30.0]),), (np.array([170, -170, 160], np.int16),)],
     order=2, grad_args=[(np.array([10.0, 350.0, 20.0, 150.0, 30.0]),)])

# -- packbits / unpackbits ---------------------------------------------------------------------

_BITS = [(rand((2, 11), bool, seed=1),), (rand((3, 8), I64, -1, 1, seed=2),),
         (np.array([1, 0, 2, 0, 1], np.uint8),), (np.array(3),), (np.zeros((2, 0), np.int8),)]
case("packbits", fnp.packbits, np.packbits, _BITS)
case("packbits_axis", lambda a: fnp.packbits(a, axis=-1), lambda a: np.packbits(a, axis=-1),
     _BITS[:3] + [(np.zeros((2, 0), np.int8),)])
case("packbits_axis0_little", lambda a: fnp.packbits(a, axis=0, bitorder="little"),
     lambda a: np.packbits(a, axis=0, bitorder="little"), _BITS[:3])

_BYTES = [(np.array([176, 1, 255, 0], np.uint8),), (rand((2, 3), np.uint8, 0, 255, seed=1),),
          (np.array(5, np.uint8),)]
case("unpackbits", fnp.unpackbits, np.unpackbits, _BYTES)
case("unpackbits_axis_little", lambda a: fnp.unpackbits(a, axis=1, bitorder="little"),
     lambda a: np.unpackbits(a, axis=1, bitorder="little"), _BYTES[1:2])
for _c in (5, 0, 20, -3):
    case(f"unpackbits_count{_c}", lambda a, _c=_c: fnp.unpackbits(a, axis=-1, count=_c),
         lambda a, _c=_c: np.unpackbits(a, axis=-1, count=_c), _BYTES[:2])
case("packbits_roundtrip", lambda a: fnp.unpackbits(fnp.packbits(a, axis=1), axis=1, count=11),
     lambda a: np.unpackbits(np.packbits(a, axis=1), axis=1, count=11), _BITS[:1])
