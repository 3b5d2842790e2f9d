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
