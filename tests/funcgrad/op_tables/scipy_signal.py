"""Op table: funcgrad.scipy.signal vs scipy.signal (values), with the shared drivers'
finite-difference derivative, vmap and jit checks."""

from __future__ import annotations

import numpy as np
import scipy.signal as ss
from helpers import OpCase, case_adder, rand

import funcgrad.scipy.signal as fss

F64, F32, C128, I64 = np.float64, np.float32, np.complex128, np.int64

CASES: list[OpCase] = []
case = case_adder(CASES, "scipy.signal.")


def _r(shape, dtype=F64, seed=0):
    return rand(shape, dtype, -1.0, 1.0, seed=seed)


_PAIRS = [(_r((6,), seed=1), _r((3,), seed=2)), (_r((3,), seed=3), _r((5,), seed=4)),
          (_r((4, 5), seed=5), _r((2, 3), seed=6)), (_r((4,), C128, seed=7), _r((2,), C128, seed=8)),
          (_r((5,), F32, seed=9), _r((2,), F32, seed=10)),
          (np.array([1, 2, 3]), np.array([2, -1]))]
_VALID = [p for p in _PAIRS if all(a >= b for a, b in zip(p[0].shape, p[1].shape))]
for _mode in ("full", "same", "valid"):
    _args = _PAIRS if _mode != "valid" else _VALID + [(_r((2,), seed=11), _r((4,), seed=12))]
    for _method in ("direct", "fft"):
        _tol = {"rtol": 1e-6, "atol": 1e-6} if _method == "fft" else {}
        case(f"convolve[{_mode},{_method}]",
             lambda a, b, m=_mode, me=_method: fss.convolve(a, b, m, me),
             lambda a, b, m=_mode, me=_method: ss.convolve(a, b, m, me), _args,
             grad_args=_args[:3], **_tol)
        case(f"correlate[{_mode},{_method}]",
             lambda a, b, m=_mode, me=_method: fss.correlate(a, b, m, me),
             lambda a, b, m=_mode, me=_method: ss.correlate(a, b, m, me), _args,
             grad_args=_args[:3], **_tol)
    case(f"fftconvolve[{_mode}]", lambda a, b, m=_mode: fss.fftconvolve(a, b, m),
         lambda a, b, m=_mode: ss.fftconvolve(a, b, m), _args[:5], rtol=1e-6, atol=1e-6)
    for _b in ("fill", "wrap", "symm"):
        _2d = [(_r((4, 5), seed=13), _r((2, 3), seed=14)),
               (_r((3, 3), C128, seed=15), _r((2, 2), C128, seed=16)),
               (np.arange(12).reshape(3, 4), np.array([[1, 0], [2, -1]]))]
        case(f"convolve2d[{_mode},{_b}]",
             lambda a, b, m=_mode, bd=_b: fss.convolve2d(a, b, m, bd, 0.5),
             lambda a, b, m=_mode, bd=_b: ss.convolve2d(a, b, m, bd, 0.5), _2d[:2],
             grad_args=_2d[:1])
        case(f"correlate2d[{_mode},{_b}]",
             lambda a, b, m=_mode, bd=_b: fss.correlate2d(a, b, m, bd, 0.5),
             lambda a, b, m=_mode, bd=_b: ss.correlate2d(a, b, m, bd, 0.5), _2d[:2],
             grad_args=_2d[:1])
        case(f"convolve2d_int[{_mode},{_b}]",
             lambda a, b, m=_mode, bd=_b: fss.convolve2d(a, b, m, bd, 2),
             lambda a, b, m=_mode, bd=_b: ss.convolve2d(a, b, m, bd, 2), _2d[2:], grad_args=[])
case("convolve_bool", fss.convolve, ss.convolve, [(np.array([True, False, True]),
                                                  np.array([True, True]))], grad_args=[])
case("fftconvolve_axes", lambda a, b: fss.fftconvolve(a, b, "same", axes=1),
     lambda a, b: ss.fftconvolve(a, b, "same", axes=1),
     [(_r((2, 6), seed=17), _r((1, 3), seed=18)), (_r((2, 6), seed=19), _r((2, 3), seed=20))],
     rtol=1e-10, atol=1e-10, vmap=False)
for _t in ("linear", "constant"):
    case(f"detrend[{_t}]", lambda x, t=_t: fss.detrend(x, type=t),
         lambda x, t=_t: ss.detrend(x, type=t), [(_r((3, 8), seed=21),), (np.arange(6) ** 2,)],
         rtol=1e-10, atol=1e-10)
case("detrend_bp", lambda x: fss.detrend(x, axis=0, bp=[2, 5]),
     lambda x: ss.detrend(x, axis=0, bp=[2, 5]), [(_r((8, 2), seed=22),)], rtol=1e-10, atol=1e-10)
