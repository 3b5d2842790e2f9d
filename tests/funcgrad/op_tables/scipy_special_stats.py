"""Op table: the newer funcgrad.scipy.special functions and funcgrad.scipy.stats vs SciPy
(skipped when SciPy is not installed).

SciPy's stats always return float64; funcgrad keeps float32 for float32 input (like
jax.scipy.stats), so the references here are cast to the dtype funcgrad promises.
"""

from __future__ import annotations

import numpy as np
from helpers import OpCase, case_adder, rand, unary_args

import funcgrad.scipy.special as fsp
import funcgrad.scipy.stats as fst

try:
    import scipy.special as sp
    import scipy.stats as ss
except ImportError:  # pragma: no cover - SciPy is a test extra
    sp = ss = None

F64, F32, I64 = np.float64, np.float32, np.int64

CASES: list[OpCase] = []


def _dtype(args):
    arrays = [np.asarray(a) for a in args if isinstance(a, np.ndarray | np.generic)]
    if arrays and all(a.dtype == F32 for a in arrays):
        return F32
    return F64


def _ref(fn):
    """SciPy's value cast to funcgrad's dtype rule (float32 in, float32 out)."""
    def ref(*args):
        return np.asarray(fn(*[np.asarray(a, F64) if isinstance(a, np.ndarray) else a
                               for a in args]), dtype=_dtype(args))
    return ref


def _grad(low, high, shapes=((3,), (2, 3)), seed=80):
    return [(rand(s, F64, low, high, seed=seed + i),) for i, s in enumerate(shapes)]


case = case_adder(CASES, "scipy_special_stats.")


if sp is not None:
    # ---- special: unary
    for _name, _lo, _hi in (("i0", -12.0, 12.0), ("i0e", -12.0, 12.0), ("i1", -12.0, 12.0),
                            ("i1e", -12.0, 12.0)):
        case(_name, getattr(fsp, _name), getattr(sp, _name), unary_args(_lo, _hi),
             grad_args=_grad(-6.0, 6.0), order=3)
    case("i0_wide", fsp.i0e, sp.i0e, [(np.array([0.0, 1e-8, 7.99, 8.0, 8.01, 50.0, 1e3,
                                                  -1e5]),)], grad_args=[])
    # Derivatives exactly at 0, where i1/x would be 0/0.
    case("i1_at_zero", fsp.i1, sp.i1, [(np.array([0.0, -0.0, 1e-3]),)], order=3)
    case("i0_at_zero", fsp.i0, sp.i0, [(np.array([0.0, 2e-3]),)], order=3)
    case("gamma", fsp.gamma, sp.gamma,
         unary_args(0.1, 6.0) + [(np.array([-0.5, -1.5, -2.7, 0.0, -0.0, -1.0, 171.0]),)],
         grad_args=_grad(0.3, 5.0) + [(np.array([-0.5, -1.3, -2.7]),)], order=3)
    case("gammasgn", fsp.gammasgn, sp.gammasgn,
         unary_args(-5.0, 5.0) + [(np.array([0.0, -0.0, -1.0, -2.5, np.inf, -np.inf]),)],
         order=0)
    case("loggamma", fsp.loggamma, sp.loggamma,
         unary_args(0.1, 8.0) + [(np.array([-0.5, 0.0, 3.0]),)], grad_args=_grad(0.2, 6.0),
         order=3)
    case("log_ndtr", fsp.log_ndtr, sp.log_ndtr,
         unary_args(-30.0, 10.0)
         + [(np.array([-1e5, -40.0, -10.0, -9.99, 0.0, 5.0, 40.0, np.inf, -np.inf]),)],
         grad_args=_grad(-15.0, 6.0), order=3)
    case("multigammaln", lambda a: fsp.multigammaln(a, 3), _ref(lambda a: sp.multigammaln(a, 3)),
         [(rand((3,), F64, 1.1, 6.0),), (rand((2, 3), F32, 1.1, 6.0),), (2.5,)],
         grad_args=_grad(1.5, 5.0), order=3)

    # ---- special: binary
    _AB = [(rand((2, 3), F64, 0.1, 12.0), rand((2, 3), F64, 0.1, 12.0, seed=1)),
           (rand((3,), F32, 0.5, 5.0), rand((2, 1), F32, 0.5, 5.0, seed=2)),
           (np.array([1.0, 10.0, 50.0, 0.5, -0.5]), np.array([1e4, 1e3, 60.0, 0.3, 2.5])),
           (rand((3,), I64, 1.0, 9.0), 2.5)]
    _AB_GRAD = [(rand((2, 3), F64, 0.5, 10.0, seed=3), rand((2, 3), F64, 0.5, 10.0, seed=4)),
                (np.array([0.7, 2.0]), np.array([12.0, 30.0]))]
    case("betaln", fsp.betaln, sp.betaln, _AB, grad_args=_AB_GRAD)
    case("beta", fsp.beta, sp.beta, _AB[:2] + _AB[3:], grad_args=_AB_GRAD)

    _IG = [(rand((2, 3), F64, 0.1, 20.0), rand((2, 3), F64, 0.0, 30.0, seed=1)),
           (rand((3,), F32, 0.5, 5.0), rand((3,), F32, 0.0, 8.0, seed=2)),
           (np.array([0.0, 0.0, 1.0, 2.0, 3.0, 40.0]), np.array([0.0, 1.0, 0.0, np.inf, 1e-3,
                                                                  80.0])),
           (2.0, 3.0)]
    _IG_GRAD = [(rand((2, 3), F64, 0.5, 10.0, seed=5), rand((2, 3), F64, 0.5, 15.0, seed=6))]
    for _name in ("gammainc", "gammaincc"):
        case(_name, getattr(fsp, _name), getattr(sp, _name), _IG, grad_args=_IG_GRAD,
             diff_argnums=(0, 1), order=2)

    _REL = [(rand((2, 3), F64, 0.0, 2.0), rand((2, 3), F64, 0.1, 2.0, seed=1)),
            (np.array([0.0, 0.0, 1.0, 1.0, -1.0, 2.0]), np.array([0.0, 1.0, 0.0, -1.0, 1.0,
                                                                   0.5])),
            (rand((3,), F32, 0.1, 2.0), rand((2, 1), F32, 0.1, 2.0, seed=2))]
    _REL_GRAD = [(rand((2, 3), F64, 0.1, 2.0, seed=3), rand((2, 3), F64, 0.1, 2.0, seed=4))]
    case("rel_entr", fsp.rel_entr, sp.rel_entr, _REL, grad_args=_REL_GRAD, order=3)
    case("kl_div", fsp.kl_div, sp.kl_div, _REL, grad_args=_REL_GRAD, order=3)

    # ---- stats: location-scale families
    _X = rand((2, 3), F64, -3.0, 3.0)
    _LS = [(_X, 0.5, 2.0), (rand((3,), F32, -3.0, 3.0), np.float32(0.5), np.float32(1.5)),
           (rand((2, 3), F64, -3.0, 3.0, seed=1), rand((3,), F64, -1.0, 1.0, seed=2),
            rand((2, 1), F64, 0.5, 2.0, seed=3)),
           (np.array([0.0, 1.0]), 0.0, np.array([-1.0, 0.0]))]
    _LS_GRAD = [(rand((2, 3), F64, -2.0, 2.0, seed=4), rand((3,), F64, -0.5, 0.5, seed=5),
                 rand((2, 1), F64, 0.7, 2.0, seed=6))]
    _Q = [(rand((2, 3), F64, 0.02, 0.98), 0.5, 2.0),
          (rand((3,), F32, 0.05, 0.95), np.float32(0.5), np.float32(1.5))]
    _Q_GRAD = [(rand((2, 3), F64, 0.1, 0.9, seed=7), rand((3,), F64, -0.5, 0.5, seed=8),
                rand((2, 1), F64, 0.7, 2.0, seed=9))]
    _FAMILIES = {
        "norm": ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"),
        "logistic": ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"),
        "cauchy": ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"),
        "laplace": ("logpdf", "pdf", "cdf", "sf"),
        "expon": ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"),
        "uniform": ("logpdf", "pdf", "cdf"),
    }
    for _dist, _fns in _FAMILIES.items():
        for _fn in _fns:
            _ga = _LS_GRAD
            if _dist in ("expon", "uniform", "laplace"):  # keep away from kinks
                _ga = [(np.array([[0.3, 1.4, 2.2]]), np.array([-0.6, 0.3, 0.6]),
                        np.array([[2.0], [3.5]]))]
                if _dist == "uniform":
                    _ga = [(np.array([0.3, 1.4]), np.array([-0.6, 0.3]), np.array([2.0, 3.5]))]
            case(f"{_dist}.{_fn}", getattr(getattr(fst, _dist), _fn),
                 _ref(getattr(getattr(ss, _dist), _fn)), _LS, grad_args=_ga)
        for _fn in ("ppf", "isf"):
            if hasattr(getattr(fst, _dist), _fn):
                case(f"{_dist}.{_fn}", getattr(getattr(fst, _dist), _fn),
                     _ref(getattr(getattr(ss, _dist), _fn)), _Q, grad_args=_Q_GRAD)
    case("norm.logcdf_tail", fst.norm.logcdf, _ref(ss.norm.logcdf),
         [(np.array([-50.0, -20.0, 10.0]),)])

    # ---- stats: shape parameters
    _XP = rand((2, 3), F64, 0.1, 5.0)
    case("t.logpdf", fst.t.logpdf, _ref(ss.t.logpdf),
         [(_X, 3.5), (_X, rand((3,), F64, 0.5, 10.0), 0.5, 2.0),
          (rand((3,), F32, -3.0, 3.0), np.float32(4.0))],
         grad_args=[(rand((2, 3), F64, -2.0, 2.0), rand((3,), F64, 1.0, 8.0, seed=1), 0.3,
                     rand((2, 1), F64, 0.5, 2.0, seed=2))])
    case("t.pdf", fst.t.pdf, _ref(ss.t.pdf), [(_X, 3.5, 0.5, 2.0)])
    case("gamma.logpdf", fst.gamma.logpdf, _ref(ss.gamma.logpdf),
         [(_XP, 2.5), (rand((2, 3), F64, -1.0, 5.0), rand((3,), F64, 0.5, 5.0), 0.2, 1.5),
          (rand((3,), F32, 0.1, 5.0), np.float32(1.5)), (np.array([0.0, 0.0]), np.array(
              [1.0, 0.5]))],
         grad_args=[(_XP, rand((3,), F64, 0.5, 5.0, seed=4), 0.05,
                     rand((2, 1), F64, 0.5, 2.0, seed=5))])
    case("gamma.pdf", fst.gamma.pdf, _ref(ss.gamma.pdf), [(_XP, 2.5, 0.1, 1.5)])
    for _fn in ("cdf", "sf", "logcdf", "logsf"):
        case(f"gamma.{_fn}", getattr(fst.gamma, _fn), _ref(getattr(ss.gamma, _fn)),
             [(_XP, 2.5), (rand((2, 3), F64, -1.0, 5.0), rand((3,), F64, 0.5, 5.0), 0.2, 1.5),
              (rand((3,), F32, 0.1, 5.0), np.float32(1.5))],
             grad_args=[(_XP, 2.5, 0.05, 1.3)], diff_argnums=(0, 2, 3),
             atol=1e-14)
    for _fn in ("logpdf", "pdf", "cdf", "sf", "logcdf", "logsf"):
        case(f"chi2.{_fn}", getattr(fst.chi2, _fn), _ref(getattr(ss.chi2, _fn)),
             [(_XP, 3.0), (rand((3,), F32, 0.1, 5.0), np.float32(2.5))],
             grad_args=[(_XP, 3.0, 0.05, 1.3)], diff_argnums=(0, 2, 3),
             atol=1e-14)
    _X01 = rand((2, 3), F64, 0.05, 0.95)
    case("beta.logpdf", fst.beta.logpdf, _ref(ss.beta.logpdf),
         [(_X01, 2.0, 3.5), (rand((2, 3), F64, -0.5, 1.5), rand((3,), F64, 0.5, 4.0),
                             rand((2, 1), F64, 0.5, 4.0, seed=1)),
          (rand((3,), F32, 0.05, 0.95), np.float32(2.0), np.float32(1.5))],
         grad_args=[(_X01, rand((3,), F64, 0.5, 4.0, seed=2), rand((2, 1), F64, 0.5, 4.0,
                                                                    seed=3))])
    case("beta.pdf", fst.beta.pdf, _ref(ss.beta.pdf), [(_X01, 2.0, 3.5)])

    # ---- stats: discrete
    _K = np.array([[0.0, 1.0, 2.0], [5.0, 2.5, -1.0]])
    _KI = np.array([0, 1, 3, 7])
    case("poisson.logpmf", fst.poisson.logpmf, _ref(ss.poisson.logpmf),
         [(_K, 2.5), (_KI, rand((4,), F64, 0.5, 6.0)), (_KI, 2.0, 1), (np.array([0, 1]), 0.0)],
         grad_args=[(_KI.astype(F64), rand((4,), F64, 0.5, 6.0, seed=1))], diff_argnums=(1,))
    case("poisson.pmf", fst.poisson.pmf, _ref(ss.poisson.pmf), [(_K, 2.5)], diff_argnums=(1,))
    case("poisson.cdf", fst.poisson.cdf, _ref(ss.poisson.cdf),
         [(_K, 2.5), (_KI, rand((4,), F64, 0.5, 6.0)), (_KI, 2.0, 1)],
         grad_args=[(_K + 0.25, rand((2, 3), F64, 0.5, 6.0, seed=2))])
    case("bernoulli.logpmf", fst.bernoulli.logpmf, _ref(ss.bernoulli.logpmf),
         [(np.array([0, 1, 2, -1]), 0.3), (np.array([0.0, 1.0, 0.5]), np.array([0.2, 0.7,
                                                                                0.5]))],
         grad_args=[(np.array([0.0, 1.0, 1.0]), np.array([0.2, 0.7, 0.5]))], diff_argnums=(1,))
    case("bernoulli.pmf", fst.bernoulli.pmf, _ref(ss.bernoulli.pmf),
         [(np.array([0, 1, 2]), 0.3)])
    case("bernoulli.cdf", fst.bernoulli.cdf, _ref(ss.bernoulli.cdf),
         [(np.array([-1.0, 0.0, 0.5, 1.0, 2.0]), 0.3)], diff_argnums=(1,))
    case("bernoulli.ppf", fst.bernoulli.ppf, _ref(ss.bernoulli.ppf),
         [(np.array([0.0, 0.2, 0.31, 0.9, 1.0]), 0.7)], order=0)
    case("binom.logpmf", fst.binom.logpmf, _ref(ss.binom.logpmf),
         [(np.array([0, 3, 4, 2]), 3, 0.4), (np.array([0.0, 2.5, 10.0]), 10.0,
                                             np.array([0.1, 0.5, 0.9])),
          (np.array([0, 3]), 3, np.array([0.0, 1.0])), (np.array([20, 500]), 1000, 0.3)],
         grad_args=[(np.array([0.0, 3.0, 7.0]), 10.0, np.array([0.1, 0.5, 0.9]))],
         diff_argnums=(2,))
    case("binom.pmf", fst.binom.pmf, _ref(ss.binom.pmf), [(np.array([0, 3, 4, 2]), 3, 0.4)])

    # ---- stats: multivariate
    _ALPHA = np.array([1.5, 2.0, 3.0])
    _XD = np.array([[0.2, 0.1], [0.3, 0.6], [0.5, 0.3]])
    case("dirichlet.logpdf", fst.dirichlet.logpdf, _ref(ss.dirichlet.logpdf),
         [(_XD, _ALPHA), (np.array([0.2, 0.3, 0.5]), _ALPHA), (np.array([0.2, 0.3]), _ALPHA),
          (np.array([[0.25, 0.5], [0.25, 0.25], [0.5, 0.25]], F32), _ALPHA.astype(F32))],
         diff_argnums=(1,))
    case("dirichlet.pdf", fst.dirichlet.pdf, _ref(ss.dirichlet.pdf), [(_XD, _ALPHA)],
         diff_argnums=(1,))
    _COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 1.5]])
    _MEAN = np.array([0.1, -0.2, 0.3])
    # cholesky differentiates as a function of a symmetric matrix: derivatives are checked
    # along symmetric covariance directions (a 1-D cov is a diagonal).
    def _sym_cov(f):
        return lambda x, m, c: f(x, m, (c + c.T) / 2 if c.ndim == 2 else c)

    case("multivariate_normal.logpdf", _sym_cov(fst.multivariate_normal.logpdf),
         _ref(ss.multivariate_normal.logpdf),
         [(rand((4, 3), F64), _MEAN, _COV), (rand((3,), F64, seed=1), _MEAN, _COV),
          (rand((2, 3), F64, seed=2), _MEAN, np.array([1.0, 2.0, 0.5])),
          (rand((2, 3), F32, seed=3), _MEAN.astype(F32), _COV.astype(F32))], vmap=True)
    case("multivariate_normal.pdf", _sym_cov(fst.multivariate_normal.pdf),
         _ref(ss.multivariate_normal.pdf), [(rand((4, 3), F64), _MEAN, _COV)])
