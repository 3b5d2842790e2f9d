"""Op table: funcgrad.scipy.special's betainc, zeta, exp1/expi/expn and the stats CDFs built on
them (t, beta, binom, f) vs SciPy (skipped when SciPy is not installed). Few shapes per
function: the loops make each case a little slower than an elementwise op."""

from __future__ import annotations

import numpy as np
from helpers import OpCase, case_adder, rand

import funcgrad.scipy.special as fsp
import funcgrad.scipy.stats as fst

try:
    import scipy.special as sp
    import scipy.stats as ss
except ImportError:  # pragma: no cover - SciPy is a test extra
    sp = ss = None

F64, F32, I64 = np.float64, np.float32, np.int64

CASES: list[OpCase] = []


def _ref(fn):
    """SciPy's value cast to funcgrad's dtype rule (float32 in, float32 out)."""
    def ref(*args):
        arrays = [np.asarray(a) for a in args if isinstance(a, np.ndarray | np.generic)]
        dt = F32 if arrays and all(a.dtype == F32 for a in arrays) else F64
        return np.asarray(fn(*[np.asarray(a, F64) if isinstance(a, np.ndarray) else a
                               for a in args]), dtype=dt)
    return ref


case = case_adder(CASES, "scipy_incomplete_and_zeta.")


if sp is not None:
    # ---- special
    _BI = [(rand((2, 3), F64, 0.1, 12.0), rand((2, 3), F64, 0.1, 12.0, seed=1),
            rand((2, 3), F64, 0.0, 1.0, seed=2)),
           (rand((3,), F32, 0.5, 5.0), np.float32(2.5), rand((3,), F32, 0.0, 1.0, seed=3)),
           (np.array([0.0, 1.0, 2.0, 2.0, 2.0, 3.0, -1.0, 400.0]),
            np.array([1.0, 0.0, 3.0, 3.0, 3.0, 2.0, 2.0, 300.0]),
            np.array([0.5, 0.5, 0.0, 1.0, 1.5, 0.999, 0.5, 0.55])),
           (2.0, 3.0, 0.4)]
    # Integer b (3.0): the fraction terminates, its derivatives in a and b must not.
    _BI_GRAD = [(rand((3,), F64, 0.6, 6.0, seed=4), np.array([3.0, 1.5, 7.25]),
                 np.array([0.2, 0.5, 0.85]))]
    case("betainc", fsp.betainc, sp.betainc, _BI, grad_args=_BI_GRAD)

    _ZQ = [(rand((2, 3), F64, 1.1, 20.0), rand((2, 3), F64, 0.05, 30.0, seed=1)),
           (np.float32(3.0), rand((3,), F32, 0.2, 5.0, seed=2)),
           (np.array([2.0, 2.0, 3.0, 1.0, 0.5, 2.0, 60.0]),
            np.array([-1.5, -2.0, -0.25, 2.0, 2.0, 0.0, 0.9]))]
    case("zeta", fsp.zeta, sp.zeta, _ZQ, diff_argnums=(1,), order=3,
         grad_args=[(np.array([2.0, 3.5, 7.0]), rand((3,), F64, 0.3, 4.0, seed=3))])
    case("zeta_riemann", fsp.zeta, sp.zeta,
         [(rand((2, 3), F64, -30.0, 30.0),),
          (np.array([-3.0, -2.0, 0.0, 0.5, 1.0, 1.5, -201.0, np.inf]),),
          (rand((3,), F32, 1.5, 8.0),)], grad_args=[])

    _EX = [(rand((2, 3), F64, 0.0, 60.0),), (rand((3,), F32, 0.01, 5.0),),
           (np.array([0.0, 1e-10, 0.7, 1.0, 40.0, 41.0, 300.0, np.inf, -1.0]),), (1.5,)]
    case("exp1", fsp.exp1, sp.exp1, _EX, grad_args=[(np.array([0.2, 1.1, 50.0]),)])
    case("expi", fsp.expi, sp.expi,
         _EX[:2] + [(np.concatenate([-rand((4,), F64, 0.0, 30.0), [-np.inf, -0.0, -50.0]]),)],
         grad_args=[(np.array([-7.0, -0.5, 0.2, 1.1, 42.0]),)])
    case("expn", fsp.expn, sp.expn,
         [(np.array([[0, 1, 2], [3, 7, 30]]), rand((2, 3), F64, 0.0, 8.0)),
          (2, rand((3,), F32, 0.01, 3.0)),
          (np.array([0, 1, 3, 2, -1, 4]), np.array([0.0, 0.0, 0.0, np.inf, 1.0, 1e-8])),
          (np.float32(3.0), rand((3,), F32, 0.5, 3.0))],
         diff_argnums=(1,), grad_args=[(np.array([0, 1, 5]), np.array([0.3, 1.2, 4.0]))])

    # ---- stats (log-CDFs, the rest and the derivatives in the shape parameters (betainc's,
    # checked above) are in tests/funcgrad/scipy/test_special_incomplete_and_zeta.py)
    _TX = np.array([-1e3, -3.0, -1e-6, 0.0, 1e-6, 0.5, 3.0, 1e3])
    _T_GRAD = [(np.array([-3.0, 0.0, 0.4]), np.array([1.0, 3.5, 2.5]), 0.1, 1.5)]
    case("t.cdf", fst.t.cdf, _ref(ss.t.cdf),
         [(rand((2, 3), F64, -4.0, 4.0), rand((3,), F64, 0.5, 10.0), 0.5, 2.0), (_TX, 2.5),
          (_TX, np.inf), (rand((3,), F32, -3.0, 3.0), np.float32(4.0))], grad_args=_T_GRAD,
         diff_argnums=(0, 2, 3))
    case("t.sf", fst.t.sf, _ref(ss.t.sf), [(_TX, 2.5)], grad_args=[])
    _B_GRAD = [(np.array([0.1, 0.45, 0.8]), np.array([0.7, 2.0, 4.0]), np.array([2.0, 1.5, 0.9]))]
    case("beta.cdf", fst.beta.cdf, _ref(ss.beta.cdf),
         [(rand((2, 3), F64, -0.2, 1.2), 2.0, 3.5),
          (rand((3,), F32, 0.05, 0.95), np.float32(2.0), np.float32(1.5))], grad_args=_B_GRAD,
         diff_argnums=(0,))
    case("beta.sf", fst.beta.sf, _ref(ss.beta.sf), [(rand((2, 3), F64, -0.2, 1.2), 2.0, 3.5)],
         grad_args=[])
    _K = np.array([-1.0, 0.0, 1.0, 2.5, 5.0, 9.0, 10.0, 12.0])
    for _fn in ("cdf", "sf"):
        case(f"binom.{_fn}", getattr(fst.binom, _fn), _ref(getattr(ss.binom, _fn)),
             [(_K, 10, 0.3), (np.array([0, 3, 7]), 10, np.array([0.0, 0.5, 1.0])),
              (np.array([2, 3]), 5, 0.4, 1)],
             grad_args=[(np.array([0.0, 3.0, 7.0]), 10.0, np.array([0.1, 0.5, 0.9]))],
             diff_argnums=(2,))
    _XF = rand((2, 3), F64, -0.5, 6.0)
    _F_GRAD = [(np.array([0.3, 2.5]), np.array([1.0, 5.0]), np.array([2.0, 4.5]))]
    case("f.logpdf", fst.f.logpdf, _ref(ss.f.logpdf),
         [(_XF, 3.0, 7.5), (_XF, rand((3,), F64, 0.5, 9.0), 2.0, 0.1, 1.5),
          (rand((3,), F32, 0.1, 4.0), np.float32(2.0), np.float32(5.0))], grad_args=_F_GRAD)
    case("f.cdf", fst.f.cdf, _ref(ss.f.cdf),
         [(_XF, 3.0, 7.5), (rand((3,), F32, 0.1, 4.0), np.float32(2.0), np.float32(5.0))],
         grad_args=_F_GRAD, diff_argnums=(0,))
    case("f.sf", fst.f.sf, _ref(ss.f.sf), [(_XF, rand((3,), F64, 0.5, 9.0), 2.0, 0.1, 1.5)],
         grad_args=[])
