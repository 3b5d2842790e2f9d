"""Op table: erfcx, factorial, comb, poch, boxcox, boxcox1p vs scipy.special, with the shared
drivers' derivative (finite differences, where smooth), vmap and jit checks."""

from __future__ import annotations

import numpy as np
import scipy.special as ss
from helpers import OpCase, case_adder

import funcgrad.scipy.special as fs

CASES: list[OpCase] = []
case = case_adder(CASES, "scipy.special.")

_ERFCX = np.array([-26.0, -5.0, -1.0, -1e-3, 0.0, 0.5, 3.0, 10.0, 24.9, 25.0, 26.0, 1e3, 1e300,
                   np.inf, -np.inf, np.nan])
case("erfcx", fs.erfcx, ss.erfcx, [(_ERFCX,)], rtol=1e-13,
     atol=0.0, grad_args=[(np.array([-2.0, 0.3, 5.0, 24.0, 26.0, 40.0]),)])
case("erfcx_f32", fs.erfcx, ss.erfcx, [(_ERFCX[_ERFCX != 1e300].astype(np.float32),)],
     grad_args=[])
case("factorial", fs.factorial, ss.factorial,
     [(np.array([-2.0, -1.0, 0.0, 1.0, 3.0, 4.5, 10.0, 20.0]),), (np.arange(6),)], rtol=1e-13,
     grad_args=[(np.array([0.5, 2.5, 4.0]),)])
case("comb", fs.comb, ss.comb,
     [(np.array([10.0, 5.5, -1.0, 3.0, 0.0, 50.0, 100.0, 7.0]),
       np.array([3.0, 2.0, 1.0, 5.0, 0.0, 25.0, 3.0, 7.5])), (10, np.array([0, 3, 11]))],
     rtol=1e-12, grad_args=[(np.array([5.5, 7.2]), np.array([2.3, 1.5]))])
case("comb_repetition", lambda n, k: fs.comb(n, k, repetition=True),
     lambda n, k: ss.comb(n, k, repetition=True), [(np.array([10.0, 5.5, 3.0, 0.0, 4.0]),
                                                   np.array([3.0, 2.0, 5.0, 0.0, 0.0]))],
     rtol=1e-12,
     grad_args=[])
case("poch", fs.poch, ss.poch,
     [(np.array([2.0, -2.5, 0.5, -3.0, -3.0, -3.0, 1e3, 0.0, -1.0, 3.5, 10.0]),
       np.array([3.0, 2.0, 0.0, 2.0, 4.0, 3.5, 2.5, 3.0, 1.0, -1.5, -2.0]))], rtol=1e-12,
     grad_args=[(np.array([2.5, 0.7, 3.1]), np.array([1.3, 2.0, -0.4]))])
# Overflow is inf (not nan from rounding inf), float32 stays float32, poles above give inf.
case("poch_overflow_f32", fs.poch, ss.poch,
     [(np.array([1.0, 1.0, 2000.0, 0.5]), np.array([-1.0, 700.0, 3.0, 700.0])),
      (np.float32([2.0, -3.0, 1.0]), np.float32([3.0, 2.0, 40.0]))], rtol=1e-6, grad_args=[])
case("comb_overflow", fs.comb, ss.comb, [(np.array([2000.0, 1030.0]), np.array([1000.0, 3.0]))],
     rtol=1e-12, grad_args=[])
_BX = np.array([1.0, 2.0, 0.0, -1.0, 1e-10, 10.0])
_BL = np.array([0.5, 0.0, 2.0, 1.0, 0.0, -1.5])
case("boxcox", fs.boxcox, ss.boxcox, [(_BX, _BL), (_BX.astype(np.float32), np.float32(0.5))],
     rtol=1e-13, grad_args=[(np.array([0.5, 2.0, 3.0]), np.array([0.3, -1.2, 0.0]))])
case("boxcox1p", fs.boxcox1p, ss.boxcox1p, [(_BX - 0.5, _BL)], rtol=1e-13,
     grad_args=[(np.array([0.5, 2.0, -0.3]), np.array([0.3, -1.2, 0.0]))])
_SPENCE = np.array([1e-300, 1e-10, 0.1, 0.49, 0.5, 0.9, 1.0, 1.2, 1.5, 1.51, 2.0, 2.01, 10.0,
                    1e5, 1e300, 0.0, -1.0, np.nan, np.inf])
case("spence", fs.spence, ss.spence, [(_SPENCE,)],
     rtol=1e-13, atol=0.0, grad_args=[(np.array([0.3, 0.8, 1.7, 2.5, 5.0]),)])
case("spence_f32", fs.spence, ss.spence, [(_SPENCE[:-5].astype(np.float32),)], grad_args=[])
_DAWSN = np.array([0.0, -0.0, 1e-300, 1e-8, 0.3, 1.0, 3.2, 3.25, 3.3, 6.2, 6.25, 6.3, 10.0, -10.0,
                   100.0, 1e10, 1e300, np.inf, -np.inf, np.nan, -2.5])
case("dawsn", fs.dawsn, ss.dawsn, [(_DAWSN,)], rtol=1e-14, atol=0.0,
     grad_args=[(np.array([-4.0, -0.3, 0.5, 3.3, 7.0]),)])
case("dawsn_f32", fs.dawsn, ss.dawsn, [(_DAWSN[_DAWSN != 1e300].astype(np.float32),)],
     grad_args=[])
_OT_H = np.array([0.0, 0.1, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0, -1.0, 0.3, np.inf, np.nan, 40.0])
_OT_A = np.array([0.1, 0.5, 1.0, 2.0, 5.0, 0.9, 0.3, 10.0, -0.5, 100.0, 0.0, np.inf, -3.0,
                  -np.inf])[:, None]
case("owens_t", fs.owens_t, ss.owens_t, [(_OT_H, _OT_A)], rtol=1e-8, atol=1e-15,
     grad_args=[(np.array([0.2, -0.7, 1.5, 3.0]), np.array([0.4, 1.8, -2.5, 0.9]))])
case("owens_t_f32", fs.owens_t, ss.owens_t,
     [(np.float32([0.0, 0.5, 2.0, -1.0]), np.float32([0.3, 2.0, 1.0, 5.0]))], grad_args=[])
