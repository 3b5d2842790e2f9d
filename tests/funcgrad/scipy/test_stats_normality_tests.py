"""skewtest, kurtosistest, normaltest, bartlett, levene and fligner against scipy.stats (a
test dependency): formulas on funcgrad operations, so jit, vmap and grad work."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.scipy.stats as fst

ss = pytest.importorskip("scipy.stats")

_RNG = np.random.default_rng(12)
_X = _RNG.normal(size=30) ** 3
_X2 = _RNG.normal(size=(25, 3))
_A, _B, _C = _RNG.normal(size=10), 2 * _RNG.normal(size=14), _RNG.normal(size=7) + 1


def _same(got, want):
    for g, w in zip(got, want, strict=True):
        assert_allclose(g, w, rtol=1e-9, atol=1e-300)


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_skew_and_kurtosis_tests_match_scipy(alternative):
    _same(fst.skewtest(dev(_X), alternative=alternative), ss.skewtest(_X, alternative=alternative))
    _same(fst.kurtosistest(dev(_X), alternative=alternative),
          ss.kurtosistest(_X, alternative=alternative))
    _same(fst.skewtest(dev(_X2.T), axis=1, alternative=alternative),
          ss.skewtest(_X2.T, axis=1, alternative=alternative))


@pytest.mark.filterwarnings("ignore:kurtosistest only valid")
def test_normaltest_matches_scipy():
    _same(fst.normaltest(dev(_X)), ss.normaltest(_X))
    _same(fst.normaltest(dev(_X2)), ss.normaltest(_X2))
    _same(fst.normaltest(dev(_X2), axis=None), ss.normaltest(_X2, axis=None))
    with_nan = _X2.copy()
    with_nan[3, 1] = np.nan
    _same(fst.normaltest(dev(with_nan)), ss.normaltest(with_nan))
    _same(fst.normaltest(dev(with_nan), nan_policy="omit"),
          ss.normaltest(with_nan, nan_policy="omit"))
    _same(fst.kurtosistest(_X[:5]), ss.kurtosistest(_X[:5]))
    with pytest.warns(UserWarning, match="n>=20"):
        fst.kurtosistest(_X[:10])
    with pytest.raises(ValueError, match="less than 8"):
        fst.skewtest(_X[:7])
    assert_allclose(funcgrad.jit(lambda v: fst.normaltest(v).statistic)(dev(_X2)),
                    ss.normaltest(_X2).statistic, rtol=1e-9)


@pytest.mark.parametrize("center", ["mean", "median", "trimmed"])
def test_levene_and_fligner_match_scipy(center):
    for cut in (0.05, 0.2):
        _same(fst.levene(dev(_A), dev(_B), dev(_C), center=center, proportiontocut=cut),
              ss.levene(_A, _B, _C, center=center, proportiontocut=cut))
        _same(fst.fligner(dev(_A), dev(_B), dev(_C), center=center, proportiontocut=cut),
              ss.fligner(_A, _B, _C, center=center, proportiontocut=cut))
    _same(fst.levene(dev(_X2[:10]), dev(_X2[10:]), center=center),
          ss.levene(_X2[:10], _X2[10:], center=center))
    _same(fst.fligner(np.round(_A), np.round(_B), center=center),
          ss.fligner(np.round(_A), np.round(_B), center=center))


def test_bartlett_matches_scipy_and_differentiates():
    _same(fst.bartlett(dev(_A), dev(_B), dev(_C)), ss.bartlett(_A, _B, _C))
    _same(fst.bartlett(dev(_X2[:10]), dev(_X2[10:])), ss.bartlett(_X2[:10], _X2[10:]))
    # recorded (SciPy 1.17)
    res = fst.bartlett(np.array([8.9, 9.1, 9.0, 9.3, 8.7]), np.array([8.0, 10.1, 9.2, 7.5, 11.0]))
    assert_allclose([float(res.statistic), float(res.pvalue)],
                    [8.516454762499961, 0.003519494589348329], rtol=1e-12)
    # the statistic grows as one sample spreads out
    a, b = dev(_A), dev(_B)
    g = funcgrad.grad(lambda s: fst.bartlett(a * s, b).statistic)(1.0)
    eps = 1e-6
    fd = (float(fst.bartlett(_A * (1 + eps), _B).statistic)
          - float(fst.bartlett(_A * (1 - eps), _B).statistic)) / (2 * eps)
    assert_allclose(g, fd, rtol=1e-6)
    lev = funcgrad.vmap(lambda a, b: fst.levene(a, b).statistic)(dev(_X2[:10].T), dev(_X2[10:].T))
    assert_allclose(lev, ss.levene(_X2[:10], _X2[10:]).statistic, rtol=1e-9)
    with pytest.raises(ValueError, match="two input"):
        fst.bartlett(_A)
    with pytest.raises(ValueError, match="center"):
        fst.levene(_A, _B, center="mode")
    assert fnp.isfinite(fst.fligner(_A, _B).pvalue)


def test_anderson_matches_scipy():
    rng = np.random.default_rng(13)
    for x, dist in ((rng.standard_normal(30), "norm"), (rng.exponential(size=25) * 3, "expon"),
                    (rng.standard_normal(200) ** 2, "norm"),
                    (rng.exponential(size=40), "norm")):
        got = fst.anderson(dev(x), dist)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # SciPy 1.17's method= notice
            want = ss.anderson(x, dist)
        assert_allclose(got.statistic, want.statistic, rtol=1e-10)
        np.testing.assert_array_equal(got.critical_values, want.critical_values)
        np.testing.assert_array_equal(got.significance_level, want.significance_level)
        assert_allclose(got.fit_result.params.scale, want.fit_result.params.scale, rtol=1e-12)
        got_p = fst.anderson(dev(x), dist, method="interpolate").pvalue
        assert_allclose(got_p, ss.anderson(x, dist, method="interpolate").pvalue, rtol=1e-10)
    with pytest.raises(ValueError, match="dist must be"):
        fst.anderson(np.ones(5), "gumbel")


@pytest.mark.parametrize("n", [3, 4, 5, 6, 11, 12, 30, 100])
def test_shapiro_matches_scipy(n):
    # SciPy's AS R94 keeps Royston's polynomial coefficients in single precision; funcgrad's
    # are the published decimals, so W agrees to ~1e-9 and the p-value to ~1e-7 relative.
    rng = np.random.default_rng(n)
    for x in (rng.standard_normal(n), rng.exponential(size=n) * 5 + 3):
        got, want = fst.shapiro(dev(x)), ss.shapiro(x)
        assert_allclose(got.statistic, want.statistic, rtol=1e-8)
        assert_allclose(got.pvalue, want.pvalue, rtol=5e-7)


def test_shapiro_axes_nans_and_edges():
    x = np.array([[0.1, 0.9, 0.4, 0.35, 2.0, 1.1], [3.0, 1.0, 2.0, 2.5, 0.5, 1.75]])
    got = fst.shapiro(dev(x), axis=1)
    assert_allclose(got.statistic, np.array([0.91112177, 0.97738599]), rtol=1e-7)  # SciPy's
    assert_allclose(got.pvalue, np.array([0.44381738, 0.93785086]), rtol=1e-7)
    assert_allclose(fst.shapiro(dev(x)).statistic, 0.9365773034709433, rtol=1e-8)
    with pytest.warns(RuntimeWarning, match="fewer than 3"):  # 2 per column: nan, as SciPy
        assert fst.shapiro(dev(x), axis=0, keepdims=True).statistic.shape == (1, 6)
    xn = x.copy()
    xn[1, 3] = np.nan
    prop = fst.shapiro(dev(xn), axis=1)
    assert np.isnan(funcgrad.to_numpy(prop.pvalue)[1])
    omit = fst.shapiro(dev(xn), axis=1, nan_policy="omit")
    want = ss.shapiro(xn, axis=1, nan_policy="omit")
    assert_allclose(omit.statistic, want.statistic, rtol=1e-8)
    with pytest.raises(ValueError, match="nan"):
        fst.shapiro(dev(xn), nan_policy="raise")
    # three points: the exact p-value; range zero: W = p = 1 (SciPy's, with its warning)
    assert_allclose(fst.shapiro(dev(np.array([1.0, 2.0, 4.0]))).pvalue, 0.6368868450289689,
                    rtol=1e-12)
    with pytest.warns(UserWarning, match="range zero"):
        flat = fst.shapiro(dev(np.ones(5)))
    assert float(flat.statistic) == 1.0 and float(flat.pvalue) == 1.0
    with pytest.warns(RuntimeWarning, match="fewer than 3"):
        assert np.isnan(float(fst.shapiro(dev(np.array([1.0, 2.0]))).statistic))


def test_shapiro_under_jit_vmap_and_grad():
    x = _RNG.normal(size=(3, 15))
    want = ss.shapiro(x, axis=1)
    assert_allclose(funcgrad.jit(lambda v: fst.shapiro(v, axis=1).pvalue)(dev(x)), want.pvalue,
                    rtol=5e-7)
    assert_allclose(funcgrad.vmap(lambda v: fst.shapiro(v).statistic)(dev(x)), want.statistic,
                    rtol=1e-8)
    g = funcgrad.grad(lambda v: fst.shapiro(v).statistic)(dev(x[0]))
    e = np.zeros(15)
    e[4] = 1e-6
    fd = (ss.shapiro(x[0] + e).statistic - ss.shapiro(x[0] - e).statistic) / 2e-6
    assert_allclose(funcgrad.to_numpy(g)[4], fd, rtol=1e-5)
