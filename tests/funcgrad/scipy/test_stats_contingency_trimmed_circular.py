"""chi2_contingency, fisher_exact, the trimmed/limited statistics, sigmaclip,
percentileofscore, scoreatpercentile, circular statistics, boxcox and pointbiserialr against
scipy.stats (a test dependency)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.scipy.stats as fst

ss = pytest.importorskip("scipy.stats")

_RNG = np.random.default_rng(61)
_A = _RNG.standard_normal(40)
_X = _RNG.standard_normal((30, 3))


def _same(got, want, rtol=1e-10):
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(host(g), float), np.asarray(w, float), rtol=rtol)


@pytest.mark.parametrize("table", [[[10, 20, 30], [6, 9, 17]], [[10, 20], [20, 10]],
                                   [[5, 1], [1, 5]]])
def test_chi2_contingency_matches_scipy(table):
    t = np.array(table)
    for correction in (True, False):
        for lam in (None, "log-likelihood", "cressie-read", 0.5):
            got = fst.chi2_contingency(dev(t), correction, lam)
            want = ss.chi2_contingency(t, correction, lam)
            _same(got[:2], tuple(want)[:2])
            assert got.dof == want.dof
            assert_allclose(got.expected_freq, want.expected_freq, rtol=1e-12)
    with pytest.raises(ValueError, match="zero element"):
        fst.chi2_contingency(np.array([[0, 1], [0, 2]]))


def test_fisher_exact_matches_scipy():
    for t in ([[8, 2], [1, 5]], [[1, 9], [11, 3]], [[0, 5], [5, 0]], [[10, 10], [10, 10]],
              [[100, 95], [105, 97]], [[2, 7], [8, 2]], [[0, 0], [1, 2]]):
        for alternative in ("two-sided", "less", "greater"):
            _same(fst.fisher_exact(t, alternative), ss.fisher_exact(t, alternative))
    with pytest.raises(ValueError, match="shape"):
        fst.fisher_exact(np.ones((2, 3), int))


def test_limited_statistics_match_scipy():
    for limits in (None, (-1, 1), (None, 0.5), (-0.5, None)):
        for inclusive in ((True, True), (False, True)):
            for name in ("tmean", "tvar", "tstd", "tsem"):
                got = getattr(fst, name)(dev(_A), limits, inclusive)
                assert_allclose(got, getattr(ss, name)(_A, limits, inclusive), rtol=1e-12)
    assert_allclose(fst.tvar(dev(_X), (-1, 1)), ss.tvar(_X, (-1, 1)), rtol=1e-12)
    assert_allclose(fst.tmin(dev(_A), -0.5), ss.tmin(_A, -0.5), rtol=0)
    assert_allclose(fst.tmax(dev(_X), 0.5, inclusive=False), ss.tmax(_X, 0.5, inclusive=False),
                    rtol=0)
    np.testing.assert_allclose(host(fst.trimboth(dev(_X), 0.2)),
                               np.sort(ss.trimboth(_X, 0.2), axis=0))
    np.testing.assert_allclose(host(fst.trim1(dev(_A), 0.1, "left")),
                               np.sort(ss.trim1(_A, 0.1, "left")))
    data = np.r_[_A, 12.0, -9.0]
    got, want = fst.sigmaclip(dev(data), 2, 2), ss.sigmaclip(data, 2, 2)
    np.testing.assert_allclose(np.sort(host(got.clipped)), np.sort(want.clipped))
    _same(got[1:], tuple(want)[1:])
    # differentiable in the kept values
    g = funcgrad.grad(lambda v: fst.tmean(v, (-1.0, 1.0)))(dev(_A))
    kept = (_A >= -1) & (_A <= 1)
    np.testing.assert_allclose(host(g), kept / kept.sum())


def test_percentiles_match_scipy():
    ints = np.array([1, 2, 3, 3, 4, 5, 5, 5, 9])
    for kind in ("rank", "weak", "strict", "mean"):
        for score in (3, 5, 0, 10, 4.5):
            assert_allclose(fst.percentileofscore(dev(ints), score, kind),
                            ss.percentileofscore(ints, score, kind), rtol=1e-12)
        assert_allclose(fst.percentileofscore(dev(ints), [3, 5], kind),
                        ss.percentileofscore(ints, [3, 5], kind), rtol=1e-12)
    for method in ("fraction", "lower", "higher"):
        assert_allclose(fst.scoreatpercentile(dev(_A), [10, 50, 90],
                                              interpolation_method=method),
                        ss.scoreatpercentile(_A, [10, 50, 90], interpolation_method=method),
                        rtol=1e-12)
    assert_allclose(fst.scoreatpercentile(_A, 50, limit=(-1, 1)),
                    ss.scoreatpercentile(_A, 50, limit=(-1, 1)), rtol=1e-12)


@pytest.mark.parametrize("name", ["circmean", "circvar", "circstd"])
def test_circular_statistics_match_scipy(name):
    ang = _RNG.uniform(0, 2 * np.pi, 25)
    deg = _RNG.uniform(300, 420, (10, 3)) % 360
    f, g = getattr(fst, name), getattr(ss, name)
    assert_allclose(f(dev(ang)), g(ang), rtol=1e-12)
    assert_allclose(f(dev(deg), high=360, axis=0), g(deg, high=360, axis=0), rtol=1e-12)
    assert_allclose(f(dev(deg - 180), high=180, low=-180), g(deg - 180, high=180, low=-180),
                    rtol=1e-12)
    with_nan = np.r_[ang, np.nan]
    assert_allclose(f(dev(with_nan), nan_policy="omit"), g(with_nan, nan_policy="omit"),
                    rtol=1e-12)
    assert np.isnan(host(f(dev(with_nan))))


def test_boxcox_and_pointbiserialr_match_scipy():
    pos = _RNG.lognormal(size=30)
    for lmbda in (0, 0.5, -1, 2):
        assert_allclose(fst.boxcox(dev(pos), lmbda), ss.boxcox(pos, lmbda), rtol=1e-12)
        assert_allclose(fst.boxcox_llf(lmbda, dev(pos)), ss.boxcox_llf(lmbda, pos), rtol=1e-12)
    y, lmbda = fst.boxcox(dev(pos))
    y_want, lmbda_want = ss.boxcox(pos)
    np.testing.assert_allclose(lmbda, lmbda_want, rtol=1e-6)
    assert_allclose(y, y_want, rtol=1e-6)
    flags = np.array([0, 0, 1, 1, 1, 0, 1])
    _same(fst.pointbiserialr(dev(flags), dev(_A[:7])), ss.pointbiserialr(flags, _A[:7]))
