"""Op table: funcgrad.scipy.special vs scipy.special (skipped when SciPy is not installed).

Forward values over float64, float32, int64 and Python scalars; derivatives to order 3 for the
elementwise functions (2 for the reductions) on smooth float64 domains.
"""

from __future__ import annotations

import numpy as np
from helpers import OpCase, case_adder, rand, unary_args

import funcgrad.scipy.special as fsp

try:
    import scipy.special as sp
except ImportError:  # pragma: no cover - SciPy is a test extra
    sp = None

F64, F32, I64 = np.float64, np.float32, np.int64

CASES: list[OpCase] = []


def _grad(low, high, shapes=((3,), (2, 3)), seed=50):
    return [(rand(s, F64, low, high, seed=seed + i),) for i, s in enumerate(shapes)]


def unary(name, low, high, grad_low=None, grad_high=None, order=3, dtypes=(F64, F32, I64),
          **kw):
    CASES.append(OpCase(
        f"special.{name}", getattr(fsp, name), getattr(sp, name),
        unary_args(low, high, dtypes=dtypes),
        grad_args=_grad(low if grad_low is None else grad_low,
                        high if grad_high is None else grad_high),
        order=order, **kw))


case = case_adder(CASES, "special.")


if sp is not None:
    unary("erf", -3.0, 3.0)
    case("erf_wide", fsp.erf, sp.erf, [(rand((50,), F64, -7.0, 7.0),)], order=1)
    unary("erfc", -3.0, 6.0)
    case("erfc_tail", fsp.erfc, sp.erfc, [(rand((50,), F64, 0.4, 26.0),)], order=1,
         rtol=1e-13, atol=0.0)
    unary("erfinv", -0.99, 0.99, -0.9, 0.9, dtypes=(F64, F32))
    unary("erfcinv", 0.01, 1.99, 0.1, 1.9, dtypes=(F64, F32))
    case("erfcinv_tiny", fsp.erfcinv, sp.erfcinv, [(np.logspace(-300, -1, 40),)], order=1,
         rtol=1e-13, grad_args=[])
    unary("gammaln", 0.05, 12.0, rtol=1e-11)
    case("gammaln_negative", fsp.gammaln, sp.gammaln,
         [(np.array([-0.5, -1.3, -2.7, -7.25, -30.6]),)], rtol=1e-12, atol=1e-13)
    case("gammaln_large", fsp.gammaln, sp.gammaln, [(np.logspace(1, 300, 30),)], grad_args=[])
    unary("digamma", 0.05, 12.0, rtol=1e-12, atol=1e-13)
    unary("psi", 0.05, 12.0, rtol=1e-12, atol=1e-13)
    case("digamma_negative", fsp.digamma, sp.digamma,
         [(np.array([-0.5, -1.3, -2.7, -7.25, -30.6]),)], rtol=1e-12, atol=1e-13)
    for _n in (1, 2, 3):
        case(f"polygamma[{_n}]", lambda x, n=_n: fsp.polygamma(n, x),
             lambda x, n=_n: sp.polygamma(n, x),
             unary_args(0.1, 12.0, dtypes=(F64, F32, I64))
             + [(np.array([-0.5, -1.3, -2.7]),)],
             grad_args=_grad(0.2, 5.0), order=2, rtol=1e-12, atol=1e-13)
    unary("expit", -10.0, 10.0)
    unary("logit", 0.01, 0.99, 0.05, 0.95, dtypes=(F64, F32))
    unary("log_expit", -40.0, 40.0, -10.0, 10.0)
    unary("ndtr", -6.0, 6.0, -3.0, 3.0, rtol=1e-13)
    unary("ndtri", 0.01, 0.99, 0.05, 0.95, dtypes=(F64, F32))
    case("entr", fsp.entr, sp.entr,
         [(np.array([0.0, 0.5, 1.0, 2.0, -1.0]),), (rand((2, 3), F32, 0.1, 2.0),),
          (np.arange(4, dtype=I64),), (0.3,)],
         grad_args=_grad(0.1, 2.0))

    _XY = [(rand((2, 3), F64, 0.0, 2.0), rand((2, 3), F64, 0.1, 2.0, seed=1)),
           (np.array([0.0, 0.0, 1.0]), np.array([0.0, 2.0, 3.0])),
           (rand((2, 1), F32, 0.1, 2.0), rand((3,), F32, seed=2) ** 2)]
    _XY_GRAD = [(rand((2, 3), F64, 0.1, 2.0, seed=3), rand((2, 3), F64, 0.1, 2.0, seed=4))]
    case("xlogy", fsp.xlogy, sp.xlogy, _XY, grad_args=_XY_GRAD, order=3)
    # NEP 50: a Python float keeps float32 (SciPy's ufunc gives float64 here).
    case("xlogy_weak_scalar", fsp.xlogy, sp.xlogy, [(rand((3,), F32, 0.1, 2.0), 2.0)],
         check_dtype=False, rtol=1e-6, atol=1e-6)
    case("xlog1py", fsp.xlog1py, sp.xlog1py,
         _XY + [(np.array([0.0, 1.0]), np.array([-1.0, -0.5]))], grad_args=_XY_GRAD, order=3)

    _A = [(rand((3,), F64, -3.0, 3.0),), (rand((2, 3), F64, -3.0, 3.0, seed=1),),
          (rand((2, 3), F32, -3.0, 3.0, seed=2),), (rand((2, 3), I64, -3.0, 3.0, seed=3),)]
    for _axis in (None, 0, -1):
        case(f"softmax[axis={_axis}]", lambda x, a=_axis: fsp.softmax(x, axis=a),
             lambda x, a=_axis: sp.softmax(x, axis=a), _A)
        case(f"log_softmax[axis={_axis}]", lambda x, a=_axis: fsp.log_softmax(x, axis=a),
             lambda x, a=_axis: sp.log_softmax(x, axis=a), _A)
        case(f"logsumexp[axis={_axis}]", lambda x, a=_axis: fsp.logsumexp(x, axis=a),
             lambda x, a=_axis: sp.logsumexp(x, axis=a), _A)
    case("logsumexp_keepdims", lambda x: fsp.logsumexp(x, axis=(0, 1), keepdims=True),
         lambda x: sp.logsumexp(x, axis=(0, 1), keepdims=True), _A[1:])
    case("logsumexp_large", lambda x: fsp.logsumexp(x, axis=-1),
         lambda x: sp.logsumexp(x, axis=-1),
         [(np.array([[1000.0, 999.0, -1000.0], [-800.0, -801.0, -802.0]]),),
          (np.array([0.0, -50.0, -60.0]),)])
    case("logsumexp_b", lambda x, b: fsp.logsumexp(x, axis=-1, b=b),
         lambda x, b: sp.logsumexp(x, axis=-1, b=b),
         [(rand((2, 3), F64, -3.0, 3.0), rand((2, 3), F64, 0.1, 2.0, seed=5)),
          (rand((2, 3), F64, -3.0, 3.0, seed=6), np.array([1.0, 0.0, 2.0]))])
    case("logsumexp_sign", lambda x, b: fsp.logsumexp(x, axis=-1, b=b, return_sign=True),
         lambda x, b: sp.logsumexp(x, axis=-1, b=b, return_sign=True),
         [(rand((2, 3), F64, -3.0, 3.0, seed=7), np.array([1.0, -2.0, 0.5])),
          (np.array([1.0, 2.0]), np.array([1.0, -1.0]))])
