"""mannwhitneyu, wilcoxon, ranksums, kruskal, friedmanchisquare and binomtest against
scipy.stats (a test dependency) and recorded values: every method, alternative, zero method,
batches along an axis, nan policies; host tests: device in and out, traced input refused."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dev, host, is_device_array

import funcgrad
import funcgrad.scipy.stats as fst

ss = pytest.importorskip("scipy.stats")

_RNG = np.random.default_rng(11)
_X, _Y = _RNG.normal(size=7), _RNG.normal(size=9) + 0.5
_X2, _Y2 = _RNG.normal(size=(12, 3)), _RNG.normal(size=(10, 3))
_D = _RNG.normal(size=15)
_DZ = np.round(_D * 2) / 2  # ties and zeros
_ALTS = ("two-sided", "less", "greater")


def _same(got, want, rtol=1e-9):
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(host(g), w, rtol=rtol, atol=1e-300)


@pytest.mark.parametrize("alternative", _ALTS)
def test_mannwhitneyu_matches_scipy(alternative):
    for method in ("auto", "exact", "asymptotic"):
        for cont in (True, False):
            for x, y in ((_X, _Y), (np.round(_X), np.round(_Y))):
                res = fst.mannwhitneyu(dev(x), dev(y), cont, alternative, method=method)
                _same(res, ss.mannwhitneyu(x, y, cont, alternative, method=method))
    _same(fst.mannwhitneyu(dev(_X2), dev(_Y2), alternative=alternative),
          ss.mannwhitneyu(_X2, _Y2, alternative=alternative))
    big = _RNG.normal(size=30)
    _same(fst.mannwhitneyu(big, np.arange(40.0), alternative=alternative, method="exact"),
          ss.mannwhitneyu(big, np.arange(40.0), alternative=alternative, method="exact"))
    _same(fst.ranksums(dev(_X), dev(_Y), alternative), ss.ranksums(_X, _Y, alternative))


def test_mannwhitneyu_recorded_and_nan_policies():
    males, females = np.array([19, 22, 16, 29, 24]), np.array([20, 11, 17, 12])
    res = fst.mannwhitneyu(dev(males), dev(females), method="exact")
    assert is_device_array(res.pvalue)
    assert float(res.statistic) == 17.0
    np.testing.assert_allclose(float(res.pvalue), 1 / 9, rtol=1e-14)
    np.testing.assert_allclose(float(fst.mannwhitneyu(males, females, use_continuity=False,
                                                      method="asymptotic").pvalue),
                               0.0864107329737, rtol=1e-11)
    with_nan = np.r_[_X, np.nan]
    assert np.isnan(host(fst.mannwhitneyu(with_nan, _Y).pvalue))
    _same(fst.mannwhitneyu(with_nan, _Y, nan_policy="omit"), ss.mannwhitneyu(_X, _Y))
    with pytest.raises(ValueError, match="nan"):
        fst.mannwhitneyu(with_nan, _Y, nan_policy="raise")
    with pytest.raises(ValueError, match="method"):
        fst.mannwhitneyu(_X, _Y, method="permutation")
    with pytest.raises(TypeError, match="outside jit"):
        funcgrad.jit(lambda a: fst.mannwhitneyu(a, _Y).pvalue)(_X)


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
def test_wilcoxon_matches_scipy(zero_method):
    for alternative in _ALTS:
        for method in ("auto", "exact", "asymptotic"):
            for d in (_D, _DZ):  # auto: exact, asymptotic (ties and zeros)
                kw = dict(zero_method=zero_method, alternative=alternative, method=method,
                          correction=method == "asymptotic")
                got, want = fst.wilcoxon(dev(d), **kw), ss.wilcoxon(d, **kw)
                _same(got, want)
                if method == "asymptotic":
                    np.testing.assert_allclose(host(got.zstatistic), want.zstatistic,
                                               rtol=1e-9)
    # few tied differences: SciPy's exact permutation test (slow in SciPy: one alternative)
    alternative = {"wilcox": "two-sided", "pratt": "less", "zsplit": "greater"}[zero_method]
    _same(fst.wilcoxon(dev(_DZ[:10]), zero_method=zero_method, alternative=alternative),
          ss.wilcoxon(_DZ[:10], zero_method=zero_method, alternative=alternative))


def test_wilcoxon_pairs_batches_and_nans():
    _same(fst.wilcoxon(dev(_X), dev(_X[::-1] * 2)), ss.wilcoxon(_X, _X[::-1] * 2))
    _same(fst.wilcoxon(dev(_X2)), ss.wilcoxon(_X2))
    _same(fst.wilcoxon(dev(_X2.T), axis=1), ss.wilcoxon(_X2.T, axis=1))
    long = _RNG.normal(size=60)
    _same(fst.wilcoxon(dev(long)), ss.wilcoxon(long))
    _same(fst.wilcoxon(np.r_[_D, np.nan], nan_policy="omit"), ss.wilcoxon(_D))
    # recorded: SciPy's documented example
    d = np.array([6.0, 8.0, 14.0, 16.0, 23.0, 24.0, 28.0, 29.0, 41.0, -48.0, 49.0, 56.0, 60.0,
                  -67.0, 75.0])
    res = fst.wilcoxon(d, alternative="greater")
    assert float(res.statistic) == 96.0
    np.testing.assert_allclose(float(res.pvalue), 0.0206298828125, rtol=1e-12)
    with pytest.raises(ValueError, match="same length"):
        fst.wilcoxon(_X, _Y)


def test_kruskal_and_friedman_match_scipy():
    a, b, c = _RNG.normal(size=10), _RNG.normal(size=14) + 1, _RNG.normal(size=7) + 1
    _same(fst.kruskal(dev(a), dev(b), dev(c)), ss.kruskal(a, b, c))
    _same(fst.kruskal(np.round(a), np.round(b), np.round(c)),
          ss.kruskal(np.round(a), np.round(b), np.round(c)))
    _same(fst.kruskal(dev(_X2), dev(_Y2)), ss.kruskal(_X2, _Y2))
    _same(fst.kruskal(np.r_[a, np.nan], b, nan_policy="omit"), ss.kruskal(a, b))
    t = b[:10]
    _same(fst.friedmanchisquare(dev(a), dev(t), dev(np.round(t))),
          ss.friedmanchisquare(a, t, np.round(t)))
    _same(fst.friedmanchisquare(_X2[:10], _Y2, _X2[2:]),
          ss.friedmanchisquare(_X2[:10], _Y2, _X2[2:]))
    with pytest.raises(ValueError, match="at least 3"):
        fst.friedmanchisquare(a, a)
    with pytest.raises(ValueError, match="two groups"):
        fst.kruskal(a)


@pytest.mark.parametrize("k, n, p", [(3, 15, 0.1), (7, 20, 0.5), (0, 10, 0.3), (10, 10, 0.3),
                                     (12, 40, 0.25), (30, 40, 0.25), (682, 925, 0.75)])
def test_binomtest_matches_scipy(k, n, p):
    for alternative in _ALTS:
        got, want = fst.binomtest(k, n, p, alternative), ss.binomtest(k, n, p, alternative)
        np.testing.assert_allclose(host(got.pvalue), want.pvalue, rtol=1e-9)
        assert got.statistic == want.statistic and got.k == k and got.n == n
        # the exact interval inverts the beta distribution (slow): one level per alternative
        level = {"two-sided": 0.95, "less": 0.8, "greater": 0.9}[alternative]
        for method in ("exact", "wilson", "wilsoncc") if n < 100 else ("wilson", "wilsoncc"):
            ci, ci_want = got.proportion_ci(level, method), want.proportion_ci(level, method)
            np.testing.assert_allclose([float(ci.low), float(ci.high)],
                                       [ci_want.low, ci_want.high], rtol=1e-8, atol=1e-12)


def test_binomtest_errors():
    with pytest.raises(ValueError, match="range"):
        fst.binomtest(11, 10)
    with pytest.raises(ValueError, match="integer"):
        fst.binomtest(2.5, 10)
    with pytest.raises(ValueError, match="method"):
        fst.binomtest(2, 10).proportion_ci(method="agresti")
