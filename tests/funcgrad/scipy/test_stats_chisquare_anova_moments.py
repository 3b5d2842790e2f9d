"""zmap, trim_mean, chisquare, f_oneway and the moments of dirichlet, multinomial and
multivariate_normal, against scipy.stats (a test dependency)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.stats as fst

ss = pytest.importorskip("scipy.stats")

_RNG = np.random.default_rng(0)
_X, _Y = _RNG.normal(size=(2, 12))
_M = _RNG.normal(size=(5, 4))


def test_zmap_and_trim_mean():
    assert_allclose(fst.zmap(dev(_X), dev(_Y)), ss.zmap(_X, _Y), rtol=1e-12)
    assert_allclose(fst.zmap(dev(_M), dev(_M[::-1]), axis=1, ddof=1),
                    ss.zmap(_M, _M[::-1], axis=1, ddof=1), rtol=1e-12)
    assert_allclose(fst.zmap(dev(_M), dev(_M[::-1]), axis=None),
                    ss.zmap(_M, _M[::-1], axis=None), rtol=1e-12)
    yn = _Y.copy()
    yn[2] = np.nan
    assert_allclose(fst.zmap(dev(_X), dev(yn), nan_policy="omit"),
                    ss.zmap(_X, yn, nan_policy="omit"), rtol=1e-12)
    for p in (0.0, 0.1, 0.25, 0.4):
        assert_allclose(fst.trim_mean(dev(_M), p, axis=1), ss.trim_mean(_M, p, axis=1),
                        rtol=1e-12)
        assert_allclose(fst.trim_mean(dev(_M), p, axis=None), ss.trim_mean(_M, p, axis=None),
                        rtol=1e-12)
    with pytest.raises(ValueError, match="too big"):
        fst.trim_mean(_X, 0.5)


def test_chisquare_and_f_oneway():
    obs = np.array([16.0, 18.0, 16.0, 14.0, 12.0, 12.0])
    exp = np.array([16.0, 16.0, 16.0, 16.0, 16.0, 8.0])
    for got, want in ((fst.chisquare(dev(obs)), ss.chisquare(obs)),
                      (fst.chisquare(dev(obs), dev(exp), ddof=1),
                       ss.chisquare(obs, exp, ddof=1)),
                      (fst.chisquare(dev(_M ** 2), axis=1), ss.chisquare(_M ** 2, axis=1))):
        assert_allclose(got.statistic, want.statistic, rtol=1e-12)
        assert_allclose(got.pvalue, want.pvalue, rtol=1e-10)
    with pytest.raises(ValueError, match="sum of the observed"):
        fst.chisquare(obs, exp * 2)
    for got, want in ((fst.f_oneway(dev(_X), dev(_Y), dev(_X[:5] * 2)),
                       ss.f_oneway(_X, _Y, _X[:5] * 2)),
                      (fst.f_oneway(dev(_M), dev(_M ** 2), axis=1),
                       ss.f_oneway(_M, _M ** 2, axis=1))):
        assert_allclose(got.statistic, want.statistic, rtol=1e-12)
        assert_allclose(got.pvalue, want.pvalue, rtol=1e-10)
    g = funcgrad.grad(lambda o: fst.chisquare(o).statistic)(dev(obs))
    m = obs.mean()  # the expected counts move with the observed ones
    assert_allclose(g, 2 * (obs - m) / m - np.sum((obs - m) ** 2) / m ** 2 / obs.size,
                    rtol=1e-12)


def test_multivariate_moments():
    a = np.array([1.0, 2.0, 3.5])
    assert_allclose(fst.dirichlet.mean(dev(a)), ss.dirichlet.mean(a), rtol=1e-14)
    assert_allclose(fst.dirichlet.var(dev(a)), ss.dirichlet.var(a), rtol=1e-14)
    assert_allclose(fst.dirichlet.entropy(dev(a)), ss.dirichlet.entropy(a), rtol=1e-12)
    p = np.array([0.2, 0.3, 0.5])
    assert_allclose(fst.multinomial.mean(6, dev(p)), ss.multinomial.mean(6, p), rtol=1e-14)
    assert_allclose(fst.multinomial.cov(6, dev(p)), ss.multinomial.cov(6, p), rtol=1e-14)
    c = np.array([[2.0, 0.3], [0.3, 1.0]])
    assert_allclose(fst.multivariate_normal.entropy(np.zeros(2), dev(c)),
                    ss.multivariate_normal.entropy(np.zeros(2), c), rtol=1e-13)
    assert_allclose(fst.multivariate_normal.entropy(np.zeros(3), 2.0),
                    ss.multivariate_normal.entropy(np.zeros(3), 2.0), rtol=1e-13)
    assert_allclose(fst.multivariate_normal(np.zeros(2), dev(c)).entropy(),
                    ss.multivariate_normal(np.zeros(2), c).entropy(), rtol=1e-13)


def test_pearsonr_confidence_interval():
    x, y = _X, 0.5 * _X + _Y
    for alternative in ("two-sided", "less", "greater"):
        got = fst.pearsonr(dev(x), dev(y), alternative=alternative).confidence_interval(0.9)
        want = ss.pearsonr(x, y, alternative=alternative).confidence_interval(0.9)
        assert_allclose(np.array([float(got.low), float(got.high)]),
                        np.array([want.low, want.high]), rtol=1e-12)
    got = fst.pearsonr(dev(_M), dev(_M ** 2), axis=1).confidence_interval()
    want = ss.pearsonr(_M, _M ** 2, axis=1).confidence_interval()
    assert_allclose(got.low, want.low, rtol=1e-12)
    assert_allclose(got.high, want.high, rtol=1e-12)
    res = funcgrad.jit(lambda u, v: fst.pearsonr(u, v))(dev(x), dev(y))  # a pytree
    r, p = res
    assert_allclose(res.confidence_interval().low, ss.pearsonr(x, y).confidence_interval().low,
                    rtol=1e-12)
    assert float(fst.pearsonr(dev(x[:3]), dev(y[:3])).confidence_interval().low) == -1.0
