"""The sf / logcdf / logsf / isf (and gennorm's ppf) of uniform, laplace, gumbel_r/l, pareto,
bernoulli and gennorm: SciPy's values (recorded as literals), tails, derivatives."""

from __future__ import annotations

import warnings

import numpy as np
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.stats as fst


def test_values_match_scipy():
    assert_allclose(fst.gennorm.ppf(dev(np.array([1e-10, 0.3, 0.975])), 0.5),
                    np.array([-656.0845087537988, -1.8945357108862009, 22.504250568845062]),
                    rtol=1e-12)
    assert_allclose(fst.gennorm.isf(dev(np.array([1e-10, 0.3])), 8.0),
                    np.array([1.4326880199938936, 0.3767140552329713]), rtol=1e-12)
    assert_allclose(fst.laplace.logsf(dev(np.array([-2.0, 3.0])), 1.0, 2.0),
                    np.array([-0.11829388119924375, -1.6931471805599452]), rtol=1e-13)
    assert_allclose(fst.uniform.logsf(dev(np.array([0.25, 2.0])), 0.0, 2.0),
                    np.array([-0.13353139262452263, -np.inf]), rtol=1e-13)
    assert_allclose(fst.gumbel_r.isf(dev(np.array([1e-10, 0.3]))),
                    np.array([23.025850929890456, 1.0309304331587232]), rtol=1e-13)
    assert_allclose(fst.pareto.isf(dev(np.array([1e-10, 0.3])), 0.5),
                    np.array([1e20, 11.111111111111112]), rtol=1e-13)
    assert_allclose(fst.bernoulli.isf(dev(np.array([0.0, 0.2, 0.3, 1.0])), 0.25),
                    np.array([1.0, 1.0, 0.0, -1.0]))
    assert_allclose(fst.bernoulli.sf(dev(np.array([-1.0, 0.0, 1.0])), 0.25),
                    np.array([1.0, 0.25, 0.0]))


def test_tails_keep_their_digits_quietly():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(fst.laplace.logcdf(-100.0)) == -100.69314718055995
        assert_allclose(fst.laplace.isf(1e-300), 690.0823807176538, rtol=1e-14)  # -log(2e-300)
        assert float(fst.pareto.isf(1e-300, 0.5)) == np.inf  # beyond the largest float
        assert_allclose(fst.gennorm.isf(1e-300, 2.0), 26.196253016549356, rtol=1e-12)
        q = dev(np.array([-0.1, 0.0, 0.5, 1.0, np.nan]))
        assert_allclose(fst.gennorm.ppf(q, 1.5), np.array([np.nan, -np.inf, 0.0, np.inf,
                                                           np.nan]))


def test_derivatives():
    g = funcgrad.grad(fst.gennorm.ppf, argnums=(0, 1))(0.8, 1.5)
    assert_allclose(np.array([float(v) for v in g]),
                    np.array([3.101108110026285, -0.22843916602788283]), rtol=1e-7)
    assert_allclose(funcgrad.grad(fst.laplace.logcdf)(1.0), 0.2253996735605641, rtol=1e-13)
    assert_allclose(funcgrad.jit(fst.gennorm.isf)(dev(np.array([0.1, 0.9])), 2.0),
                    np.array([0.9061938024368232, -0.9061938024368232]), rtol=1e-12)


def test_cauchy_logpdf_far_out_is_finite():
    # y**2 overflowed: -inf where SciPy's value is finite (JAX also gives -inf).
    x = dev(np.array([-1e300, 1e151, 3.0, np.inf]))
    assert_allclose(fst.cauchy.logpdf(x), np.array(
        [-1382.6957856822767, -696.5254279700512, -3.447314978843446, -np.inf]), rtol=1e-14)
    assert_allclose(funcgrad.grad(fst.cauchy.logpdf)(1e200), -2e-200, rtol=1e-14)


def test_truncnorm_quantiles_in_logs():
    q = dev(np.array([1e-10, 0.3, 0.975]))
    # SciPy's values, and mpmath's where SciPy's own isf loses the tail (marked).
    assert_allclose(fst.truncnorm.ppf(q, -1.0, 2.0), np.array(
        [-0.9999999996616967, -0.2424038178892269, 1.714537835071059]), rtol=1e-12)
    assert_allclose(fst.truncnorm.ppf(0.5, 30.0, 31.0), 30.023070467827313, rtol=1e-13)
    assert_allclose(fst.truncnorm.isf(1e-10, 30.0, 31.0), 30.75712701676796, rtol=1e-13)  # mpmath
    assert_allclose(fst.truncnorm.isf(1e-300, -np.inf, np.inf), 37.047096299361286,
                    rtol=1e-13)  # = norm.isf(1e-300); SciPy's truncnorm gives 8.2
    qe = dev(np.array([-0.1, 0.0, 1.0, np.nan]))
    assert_allclose(fst.truncnorm.ppf(qe, -1.0, 2.0), np.array([np.nan, -1.0, 2.0, np.nan]))
    g = funcgrad.grad(fst.truncnorm.ppf, argnums=(0, 1, 2))(0.3, -1.0, 2.0)
    assert_allclose(np.array([float(v) for v in g]),
                    np.array([2.1130915068834355, 0.4372303357702556, 0.04181111785961367]),
                    rtol=1e-7)  # SciPy, central differences


def test_ndtri_exp_inverts_log_ndtr_far_out():
    import funcgrad.scipy.special as fsp

    y = dev(np.array([-1e4, -1000.0, -30.0, -0.1, -1e-20, 0.0]))
    assert_allclose(fsp.ndtri_exp(y), np.array(
        [-141.37983987312978, -44.61574773196941, -7.35766681500875, 1.309617799458493,
         9.262340089798409, np.inf]), rtol=1e-12)
    assert_allclose(funcgrad.grad(fsp.ndtri_exp)(-1000.0), 0.022402367686230809, rtol=1e-12, atol=0)  # Phi/phi
