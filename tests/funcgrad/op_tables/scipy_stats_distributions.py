"""Op table: funcgrad.scipy.stats's distributions pareto, gumbel_r, gumbel_l, gennorm,
truncnorm, vonmises, wrapcauchy, geom, nbinom, betabinom, multinomial and poisson.entropy
(the others are in scipy_special_stats) vs scipy.stats, with the shared drivers' derivative,
vmap and jit checks. float32 in gives float32 out (SciPy's float64 is cast, as in
scipy_special_stats)."""

from __future__ import annotations

import numpy as np
from helpers import OpCase, case_adder, rand

import funcgrad.scipy.stats as fst

try:
    import scipy.stats as ss
except ImportError:  # pragma: no cover - SciPy is a test extra
    ss = None

F64, F32 = np.float64, np.float32

CASES: list[OpCase] = []
_add = case_adder(CASES, "scipy_stats_distributions.")


def _all_f32(args) -> bool:
    arrays = [a for a in args if isinstance(a, np.ndarray | np.generic)]
    return bool(arrays) and all(np.asarray(a).dtype == F32 for a in arrays)


def case(name, fn, ref, args, **kw):
    """A case; its all-float32 argument tuples go to a ``<name>_f32`` case with float32's
    default tolerances (a tight float64 ``rtol`` would not hold)."""
    f64 = [a for a in args if not _all_f32(a)]
    if f64:  # a case without argument tuples breaks the drivers (test_taylor_op_table)
        _add(name, fn, ref, f64, **kw)
    f32 = [a for a in args if _all_f32(a)]
    if f32:
        keep = {k: v for k, v in kw.items() if k in ("vmap", "jit")}
        _add(f"{name}_f32", fn, ref, f32, grad_args=[], **keep)


def _ref(fn):
    """SciPy's value in funcgrad's dtype (float32 if every array argument is float32)."""
    def ref(*args):
        arrays = [np.asarray(a) for a in args if isinstance(a, np.ndarray | np.generic)]
        dt = F32 if arrays and all(a.dtype == F32 for a in arrays) else F64
        return np.asarray(fn(*[np.asarray(a, F64) if isinstance(a, np.ndarray) else a
                               for a in args]), dtype=dt)
    return ref


if ss is not None:
    _EDGE = np.array([-np.inf, -40.0, -3.0, -1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 5.0, 40.0, np.inf,
                      np.nan])
    _X3 = np.array([0.5, 1.5, 5.0])  # against a (3,) parameter
    _Q = np.array([-0.1, 0.0, 1e-10, 0.3, 0.5, 0.9, 1.0, 1.1, np.nan])
    _LOC = rand((3,), F64, -0.5, 0.5, seed=3)
    _SCALE = rand((2, 1), F64, 0.5, 2.0, seed=4)

    # ---- continuous with loc / scale
    for _fn in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
        case(f"pareto.{_fn}", getattr(fst.pareto, _fn), _ref(getattr(ss.pareto, _fn)),
             [(_EDGE, 2.5), (_EDGE, 0.7, 0.5, 2.0), (_X3, np.array([-1.0, 0.0, 1.0]),
                                                    0.0, np.array([[1.0], [-1.0]])),
              (rand((3,), F32, 1.1, 5.0), np.float32(1.5))],
             grad_args=[(rand((2, 3), F64, 2.5, 6.0), rand((3,), F64, 0.5, 3.0, seed=1),
                         _LOC, _SCALE)], atol=1e-14)
        for _g in ("gumbel_r", "gumbel_l"):
            case(f"{_g}.{_fn}", getattr(getattr(fst, _g), _fn),
                 _ref(getattr(getattr(ss, _g), _fn)),
                 [(_EDGE,), (_EDGE, 0.5, 2.0), (_EDGE, 0.0, -1.0),
                  (rand((3,), F32, -3.0, 3.0), np.float32(0.2), np.float32(1.5))],
                 grad_args=[(rand((2, 3), F64, -2.0, 2.0), _LOC, _SCALE)], atol=1e-14)
    for _d in ("pareto", "gumbel_r", "gumbel_l"):
        _shape = (2.5,) if _d == "pareto" else ()
        case(f"{_d}.ppf", getattr(fst, _d).ppf, _ref(getattr(ss, _d).ppf),
             [(_Q, *_shape), (_Q, *_shape, 0.5, 2.0)],
             grad_args=[(rand((2, 3), F64, 0.05, 0.95), *_shape, _LOC, _SCALE)])
    for _fn in ("logpdf", "pdf", "cdf", "sf"):
        case(f"gennorm.{_fn}", getattr(fst.gennorm, _fn), _ref(getattr(ss.gennorm, _fn)),
             [(_EDGE, 1.5), (_EDGE, np.array([[0.5], [8.0]]), 0.3, 2.0),
              (_X3, np.array([-1.0, 0.0, 2.0]), 0.0, np.array([[1.0], [-1.0]])),
              (rand((3,), F32, -3.0, 3.0), np.float32(2.5))],
             grad_args=[(rand((2, 3), F64, 0.2, 2.0), rand((3,), F64, 1.2, 4.0, seed=1),
                         _LOC * 0.1, _SCALE)], atol=1e-14)
    for _fn in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
        case(f"truncnorm.{_fn}", getattr(fst.truncnorm, _fn),
             _ref(getattr(ss.truncnorm, _fn)),
             [(_EDGE, -1.0, 2.0), (_EDGE, 0.5, 3.0, 1.0, 2.0),
              (np.array([30.2, 30.5, 31.0, -30.5, -30.2]), np.array([30.0, 30.0, 30.0, -31.0,
                                                                       -31.0]),
               np.array([31.0, 31.0, 31.0, -30.0, -30.0])),
              (_X3, np.array([-np.inf, 1.0, 2.0]), np.array([0.0, np.inf, 1.0])),
              (rand((3,), F32, -0.9, 0.9), np.float32(-1.0), np.float32(1.0))],
             grad_args=[(rand((2, 3), F64, -0.9, 0.9), rand((3,), F64, -2.0, -1.0, seed=1),
                         rand((3,), F64, 1.0, 2.0, seed=2), _LOC * 0.1, _SCALE)],
             rtol=1e-9, atol=1e-14)
    for _fn in ("logpdf", "pdf"):
        case(f"vonmises.{_fn}", getattr(fst.vonmises, _fn), _ref(getattr(ss.vonmises, _fn)),
             [(_EDGE, 1.5), (_EDGE, np.array([[0.0], [800.0]]), 0.3, 2.0),
              (_X3, np.array([-1.0, 0.5, 2.0])), (rand((3,), F32, -3.0, 3.0), np.float32(2.5))],
             grad_args=[(rand((2, 3), F64, -3.0, 3.0), rand((3,), F64, 0.5, 40.0, seed=1),
                         _LOC, _SCALE)], rtol=1e-11)
        case(f"wrapcauchy.{_fn}", getattr(fst.wrapcauchy, _fn),
             _ref(getattr(ss.wrapcauchy, _fn)),
             [(_EDGE, 0.5), (_EDGE, np.array([[0.0], [0.99]]), 0.3, 2.0),
              (_X3, np.array([-1.0, 1.0, 0.2])), (rand((3,), F32, 0.1, 6.0), np.float32(0.3))],
             grad_args=[(rand((2, 3), F64, 0.5, 5.0), rand((3,), F64, 0.1, 0.9, seed=1),
                         _LOC * 0.1, _SCALE)], rtol=1e-11)

    # ---- discrete
    _K = np.array([-1.0, 0.0, 1.0, 2.0, 2.5, 3.0, 10.0, np.inf, np.nan])
    for _fn in ("logpmf", "pmf", "cdf", "sf", "logcdf", "logsf"):
        case(f"geom.{_fn}", getattr(fst.geom, _fn), _ref(getattr(ss.geom, _fn)),
             [(_K, 0.3), (_K, 0.3, 1), (_K, 1.0), (_K[:-2], np.array([[0.0], [1.2]])),
              (np.float32([1.0, 2.0, 5.0]), np.float32(0.2))],
             grad_args=[(np.array([1.0, 2.0, 7.0]), rand((3,), F64, 0.1, 0.9))],
             diff_argnums=(1,), atol=1e-14)
    for _fn in ("logpmf", "pmf", "cdf", "sf"):
        case(f"nbinom.{_fn}", getattr(fst.nbinom, _fn), _ref(getattr(ss.nbinom, _fn)),
             [(_K, 3.0, 0.4), (_K, 2.5, 0.7, 1), (_K, np.array([[0.0], [-1.0]]), 0.5),
              (_K, 3.0, np.array([[1.0], [0.0]])),
              (np.float32([0.0, 2.0, 5.0]), np.float32(2.0), np.float32(0.3))],
             grad_args=[(np.array([0.0, 2.0, 7.0]), rand((3,), F64, 0.5, 4.0),
                         rand((3,), F64, 0.1, 0.9, seed=1))], diff_argnums=(1, 2),
             rtol=1e-10, atol=1e-14)
    for _fn in ("logpmf", "pmf"):
        case(f"betabinom.{_fn}", getattr(fst.betabinom, _fn), _ref(getattr(ss.betabinom, _fn)),
             [(_K, 10.0, 2.0, 5.0), (_K, 3.0, 0.5, 0.5, 1), (_K, 2.5, 1.0, 1.0),
              (_K, 3.0, np.array([[-1.0], [1.0]]), 1.0),
              (np.float32([0.0, 2.0, 5.0]), np.float32(6.0), np.float32(0.3), np.float32(2.0))],
             grad_args=[(np.array([0.0, 2.0, 7.0]), 8.0, rand((3,), F64, 0.5, 4.0),
                         rand((3,), F64, 0.5, 4.0, seed=1))], diff_argnums=(2, 3),
             rtol=1e-10)
    _P = np.array([0.2, 0.3, 0.5])
    for _fn in ("logpmf", "pmf"):
        case(f"multinomial.{_fn}", getattr(fst.multinomial, _fn),
             _ref(getattr(ss.multinomial, _fn)),
             [(np.array([[2.0, 1.0, 0.0], [0.0, 0.0, 3.0], [1.0, 1.0, 2.0], [-1.0, 4.0, 0.0],
                         [1.5, 1.5, 0.0]]), 3.0, _P),
              (np.array([1.0, 1.0]), 2.0, np.array([[0.5, 0.5], [0.1, 0.9], [1.5, -0.5]])),
              (np.array([0.0, 0.0]), 0.0, np.array([0.4, 0.6])),
              (np.float32([1.0, 2.0]), np.float32(3.0), np.float32([0.25, 0.75]))],
             grad_args=[(np.array([[2.0, 1.0, 0.0], [1.0, 1.0, 1.0]]), 3.0, _P)],
             diff_argnums=(2,), vmap=False)
    case("poisson.entropy", fst.poisson.entropy, _ref(ss.poisson.entropy),
         [(np.array([0.0, 1e-5, 0.5, 1.0, 5.0, 30.0, 99.5, 100.0, 150.0, 1000.0, -1.0,
                     np.nan]),), (np.array([[2.0], [3.0]]), np.array([0.0, 1.0, 2.0])),
          (np.float32([0.5, 3.0, 200.0]),)],
         grad_args=[(np.array([0.3, 4.0, 60.0, 250.0]),)], diff_argnums=(0,), rtol=1e-9)

    # float32 stays float32 where a constant branch (k below / above the support) is chosen.
    _K32 = np.float32([-1.0, 0.0, 1.0, 3.0, 4.0])
    case("binom.cdf_f32", fst.binom.cdf, _ref(ss.binom.cdf), [(_K32, np.float32(3.0),
                                                              np.float32(0.3))])
    case("binom.sf_f32", fst.binom.sf, _ref(ss.binom.sf), [(_K32, np.float32(3.0),
                                                            np.float32(0.3))])
    case("bernoulli.ppf_f32", fst.bernoulli.ppf, _ref(ss.bernoulli.ppf),
         [(np.float32([0.0, 0.2, 0.9, 1.0]), np.float32(0.3))], order=0)
